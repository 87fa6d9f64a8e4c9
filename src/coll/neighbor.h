/* Neighborhood collectives (MPI standard, section 8.6) over a communicator's virtual topology. */
#ifndef APTUS_COLL_NEIGHBOR_H
#define APTUS_COLL_NEIGHBOR_H

#include <stddef.h>

#include "core/objects.h"

/* count elements of dt at buf (any layout the datatype engine handles). */
struct aptus_nbr_buf {
    const void *buf;
    size_t count;
    const struct aptus_dtype *dt;
};

/* Sends sends[j] to out-neighbour j and receives recvs[j] from in-neighbour j of c->topo
 * (blocks of MPI_PROC_NULL neighbours are skipped), on the management context. Blocking.
 * Returns 0 or an MPI error class (MPI_ERR_TRUNCATE when a block is larger than its receive). */
int aptus_neighbor_exchange(struct aptus_comm *c, const struct aptus_nbr_buf *sends, const struct aptus_nbr_buf *recvs);

/* The same, nonblocking: *req is a GENERIC request that the progress engine completes once
 * every block has moved (st_error: the first error). The block lists may be freed on return. */
struct aptus_request;
int aptus_neighbor_iexchange(struct aptus_comm *c, const struct aptus_nbr_buf *sends, const struct aptus_nbr_buf *recvs,
                             struct aptus_request **req);

#endif
