/* Intercommunicator collectives (MPI standard, sections 6.2.2 and 6.3). Point-to-point ranks on
 * an intercommunicator address the remote group; the local phases run on the intracommunicator
 * over the local group (c->local_comm), with local rank 0 as each group's leader.
 *
 * Rooted operations: the root passes MPI_ROOT, the other members of its group MPI_PROC_NULL,
 * and the members of the other group the root's rank in that (their remote) group. */
#include <stdlib.h>
#include <string.h>

#include "coll/coll_internal.h"

int aptus_coll_inter_barrier(struct aptus_comm *c)
{
    int tag = aptus_coll_tag(c), rc;
    struct aptus_comm *l = c->local_comm;
    if (!l)
        return MPI_ERR_COMM;
    /* everyone local has arrived; the leaders tell each other; the leader lets its group go */
    rc = aptus_barrier(l);
    if (rc == 0 && l->rank == 0) {
        char dummy = 0;
        rc = aptus_coll_sendrecv(c, &dummy, 0, 0, &dummy, 0, 0, tag);
    }
    return rc ? rc : aptus_barrier(l);
}

int aptus_coll_inter_bcast(void *buf, size_t bytes, int root, struct aptus_comm *c)
{
    int tag = aptus_coll_tag(c), rc = 0;
    if (root == MPI_PROC_NULL)
        return 0;
    if (root == MPI_ROOT)
        return aptus_coll_send(c, buf, bytes, 0, tag);
    if (!c->local_comm)
        return MPI_ERR_COMM;
    if (c->local_comm->rank == 0)
        rc = aptus_coll_recv(c, buf, bytes, root, tag);
    return rc ? rc : aptus_coll_bcast(buf, bytes, 0, c->local_comm, "MPI_Bcast");
}

/* Gatherv (scatter == 0) and Scatterv: the root has one message with every rank of the remote
 * group, block i being bytes[i] bytes at ptr[i]; the other group's ranks have one message of
 * nbytes bytes at buf with the root. */
static int inter_rooted(struct aptus_comm *c, int scatter, char *const *ptr, const size_t *bytes, void *buf,
                        size_t nbytes, int root)
{
    int tag = aptus_coll_tag(c), rc = 0, n = c->npeers;
    if (root == MPI_PROC_NULL)
        return 0;
    if (root != MPI_ROOT)
        return scatter ? aptus_coll_recv(c, buf, nbytes, root, tag) : aptus_coll_send(c, buf, nbytes, root, tag);
    struct aptus_request **q = calloc((size_t)n, sizeof *q);
    if (!q)
        return MPI_ERR_NO_MEM;
    for (int i = 0; i < n && rc == 0; i++)
        rc = scatter ? aptus_coll_isend(c, ptr[i], bytes[i], i, tag, &q[i])
                     : aptus_coll_irecv(c, ptr[i], bytes[i], i, tag, &q[i]);
    int rc2 = aptus_coll_waitall(q, n);
    free(q);
    return rc ? rc : rc2;
}

int aptus_coll_inter_gatherv(const void *sbuf, size_t sbytes, char *const *rptr, const size_t *bytes, int root,
                             struct aptus_comm *c)
{
    return inter_rooted(c, 0, rptr, bytes, (void *)sbuf, sbytes, root);
}

int aptus_coll_inter_scatterv(const char *const *sptr, const size_t *bytes, void *rbuf, size_t rbytes, int root,
                              struct aptus_comm *c)
{
    return inter_rooted(c, 1, (char *const *)sptr, bytes, rbuf, rbytes, root);
}

/* Each group reduces to its leader (local rank 0), which sends the result to remote rank `dst`
 * and, when rbuf_leader is not NULL, receives the other group's result there at the same time
 * (dst is then 0: the leaders swap). */
static int inter_reduce_leader(const void *sbuf, void *rbuf_leader, size_t n, const struct coll_red *R, int dst,
                               struct aptus_comm *c, int tag)
{
    struct aptus_comm *l = c->local_comm;
    size_t bytes = coll_red_span(R, 0, n);
    int rc = 0;
    if (!l)
        return MPI_ERR_COMM;
    char *tmp = l->rank == 0 ? aptus_coll_red_alloc(R, n) : NULL;
    if (l->rank == 0 && !tmp)
        return MPI_ERR_NO_MEM;
    rc = aptus_coll_reduce(sbuf, tmp, n, R, 0, l);
    if (rc == 0 && l->rank == 0)
        rc = rbuf_leader ? aptus_coll_sendrecv(c, tmp, bytes, dst, rbuf_leader, bytes, dst, tag)
                         : aptus_coll_send(c, tmp, bytes, dst, tag);
    aptus_coll_buf_free(tmp);
    return rc;
}

int aptus_coll_inter_reduce(const void *sbuf, void *rbuf, size_t n, const struct coll_red *R, int root,
                            struct aptus_comm *c)
{
    int tag = aptus_coll_tag(c);
    if (root == MPI_PROC_NULL)
        return 0;
    if (root == MPI_ROOT)
        return aptus_coll_recv(c, rbuf, coll_red_span(R, 0, n), 0, tag);
    return inter_reduce_leader(sbuf, NULL, n, R, root, c, tag);
}

int aptus_coll_inter_allreduce(const void *sbuf, void *rbuf, size_t n, const struct coll_red *R, struct aptus_comm *c)
{
    int tag = aptus_coll_tag(c);
    int rc = inter_reduce_leader(sbuf ? sbuf : rbuf, rbuf, n, R, 0, c, tag);
    return rc ? rc : aptus_coll_bcast(rbuf, coll_red_span(R, 0, n), 0, c->local_comm, "MPI_Allreduce");
}

int aptus_coll_inter_reduce_scatter(const void *sbuf, void *rbuf, const size_t *counts, const struct coll_red *R,
                                    struct aptus_comm *c)
{
    int tag = aptus_coll_tag(c), rc = 0;
    struct aptus_comm *l = c->local_comm;
    if (!l)
        return MPI_ERR_COMM;
    size_t total = 0;
    for (int i = 0; i < l->size; i++)
        total += counts[i];
    char *res = l->rank == 0 ? aptus_coll_red_alloc(R, total) : NULL;
    if (l->rank == 0 && !res)
        return MPI_ERR_NO_MEM;
    rc = inter_reduce_leader(sbuf, res, total, R, 0, c, tag);
    if (rc == 0)
        rc = aptus_coll_scatter_elems(res, counts, rbuf, R, l);
    aptus_coll_buf_free(res);
    return rc;
}

/* Every rank sends its block to every remote rank: an alltoallv with the same block for all. */
int aptus_coll_inter_allgatherv(const void *sbuf, size_t sbytes, char *const *rptr, const size_t *bytes,
                                struct aptus_comm *c)
{
    int n = c->npeers;
    const char **sptr = malloc(sizeof(char *) * (size_t)n);
    size_t *slen = malloc(sizeof(size_t) * (size_t)n);
    int rc = MPI_ERR_NO_MEM;
    if (sptr && slen) {
        for (int i = 0; i < n; i++) {
            sptr[i] = sbuf;
            slen[i] = sbytes;
        }
        rc = aptus_coll_alltoallv(sptr, slen, rptr, bytes, c);
    }
    free(sptr);
    free(slen);
    return rc;
}
