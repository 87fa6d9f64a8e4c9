/* Blocking collectives over the message layer, on each communicator's collective context. */
#ifndef APTUS_COLL_COLL_H
#define APTUS_COLL_COLL_H

#include <stddef.h>
#include <stdint.h>

#include "core/objects.h"
#include "core/op.h"

int aptus_barrier(struct aptus_comm *c);
int aptus_bcast(void *buf, size_t bytes, int root, struct aptus_comm *c);
/* sbuf may be MPI_IN_PLACE (then the data is in rbuf). count elements of dt. */
int aptus_reduce(const void *sbuf, void *rbuf, size_t count, const struct aptus_dtype *dt, MPI_Datatype dth,
                 const struct aptus_op *op, int root, struct aptus_comm *c);
int aptus_allreduce(const void *sbuf, void *rbuf, size_t count, const struct aptus_dtype *dt, MPI_Datatype dth,
                    const struct aptus_op *op, struct aptus_comm *c);
/* For the library itself: a predefined op, in place, on 32-bit unsigned words. */
int aptus_allreduce_u32(struct aptus_comm *c, uint32_t *words, size_t count, int op_id);
/* Gathers `bytes` from every rank into rbuf (rank order). */
int aptus_allgather_internal(struct aptus_comm *c, const void *sbuf, void *rbuf, size_t bytes);

#endif
