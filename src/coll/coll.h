/* Collectives for the rest of the library. The MPI collectives themselves are in src/api/coll.c
 * over the algorithms of src/coll/ (coll_internal.h, which also offers the collective-context
 * messaging helpers to other collective code such as neighborhood collectives). */
#ifndef APTUS_COLL_COLL_H
#define APTUS_COLL_COLL_H

#include <stddef.h>
#include <stdint.h>

#include "core/objects.h"
#include "core/op.h"

/* MPI_Barrier semantics (intercommunicators included). Returns 0 or an MPI error class. */
int aptus_barrier(struct aptus_comm *c);
/* Broadcast of `bytes` bytes from root (intracommunicator; on an intercommunicator `root` is
 * MPI_ROOT / MPI_PROC_NULL / a remote rank as in MPI_Bcast). */
int aptus_bcast(void *buf, size_t bytes, int root, struct aptus_comm *c);
/* In place, a predefined op on 32-bit unsigned words, MPI_Allreduce semantics (on an
 * intercommunicator the result is the remote group's reduction). */
int aptus_allreduce_u32(struct aptus_comm *c, uint32_t *words, size_t count, int op_id);
/* Gathers `bytes` from every rank into rbuf (rank order), MPI_Allgather semantics: on an
 * intercommunicator rbuf receives the remote group's blocks. */
int aptus_allgather_internal(struct aptus_comm *c, const void *sbuf, void *rbuf, size_t bytes);
/* Prints how often each collective algorithm ran on this rank (APTUS_STATS=1). */
void aptus_coll_stats_print(int rank);
/* Counter i of the algorithms' runs on this rank (the ones APTUS_COLL_<KIND>_ALG may force): its
 * name, "coll.KIND.ALG", into name[0..len) and its count; -1 past the last. */
int aptus_coll_alg_counter(int i, char *name, size_t len, uint64_t *runs);
/* The same, and the schedules' counts, as the member "collectives" of the statistics document
 * (APTUS_STATS_FILE, docs/STATS.md). */
struct aptus_json;
void aptus_coll_stats_json(struct aptus_json *j);

#endif
