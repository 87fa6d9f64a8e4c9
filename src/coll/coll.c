/* Collective algorithms: dissemination barrier, binomial-tree broadcast and reduce,
 * recursive-doubling allreduce (reduce + broadcast for non-powers of two), ring allgather. */
#include "coll/coll.h"

#include <stdlib.h>
#include <string.h>

#include "pt2pt/pt2pt.h"

enum { TAG_BARRIER = 1, TAG_BCAST, TAG_REDUCE, TAG_ALLREDUCE, TAG_ALLGATHER };

static int coll_send(struct aptus_comm *c, const void *buf, size_t bytes, int dst, int tag)
{
    return aptus_send_now(buf, bytes, dst, tag, c, (uint16_t)(c->ctx + 1), APTUS_MODE_STANDARD);
}

static struct aptus_request *coll_irecv(struct aptus_comm *c, void *buf, size_t bytes, int src, int tag)
{
    struct aptus_request *r = aptus_req_new(APTUS_REQ_RECV);
    if (!r)
        return NULL;
    r->buf = buf;
    r->bytes = bytes;
    r->peer = src;
    r->tag = tag;
    r->comm = c;
    r->ctx = (uint16_t)(c->ctx + 1);
    aptus_recv_start(r);
    return r;
}

static int coll_recv(struct aptus_comm *c, void *buf, size_t bytes, int src, int tag)
{
    struct aptus_request *r = coll_irecv(c, buf, bytes, src, tag);
    if (!r)
        return MPI_ERR_NO_MEM;
    aptus_wait(r);
    int rc = r->st_error;
    aptus_req_free(r);
    return rc;
}

/* Exchange with two peers without deadlocking on rendezvous sends: post the receive, start
 * the send, wait for both. */
static int coll_sendrecv(struct aptus_comm *c, const void *sbuf, size_t sbytes, int dst, void *rbuf, size_t rbytes,
                         int src, int tag)
{
    struct aptus_request *rr = coll_irecv(c, rbuf, rbytes, src, tag);
    struct aptus_request *sr = aptus_req_new(APTUS_REQ_SEND);
    if (!rr || !sr)
        return MPI_ERR_NO_MEM;
    sr->buf = (void *)sbuf;
    sr->bytes = sbytes;
    sr->peer = dst;
    sr->tag = tag;
    sr->comm = c;
    sr->ctx = (uint16_t)(c->ctx + 1);
    int rc = aptus_send_start(sr);
    if (rc == 0)
        aptus_wait(sr);
    aptus_wait(rr);
    if (rc == 0)
        rc = rr->st_error;
    aptus_req_free(sr);
    aptus_req_free(rr);
    return rc;
}

int aptus_barrier(struct aptus_comm *c)
{
    int n = c->size, r = c->rank;
    char dummy = 0;
    for (int k = 1; k < n; k <<= 1) {
        int rc = coll_sendrecv(c, &dummy, 0, (r + k) % n, &dummy, 0, (r - k + n) % n, TAG_BARRIER);
        if (rc)
            return rc;
    }
    return 0;
}

int aptus_bcast(void *buf, size_t bytes, int root, struct aptus_comm *c)
{
    int n = c->size, vr = (c->rank - root + n) % n;
    int mask = 1, rc = 0;
    while (mask < n) {
        if (vr & mask) {
            rc = coll_recv(c, buf, bytes, (vr - mask + root) % n, TAG_BCAST);
            break;
        }
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0 && rc == 0; mask >>= 1)
        if (vr + mask < n)
            rc = coll_send(c, buf, bytes, (vr + mask + root) % n, TAG_BCAST);
    return rc;
}

static int reduce_to_zero(const void *src, void *result, size_t count, const struct aptus_dtype *dt, MPI_Datatype dth,
                          const struct aptus_op *op, struct aptus_comm *c)
{
    /* Binomial tree rooted at rank 0; vr == rank so lower ranks' data is always on the left. */
    int n = c->size, r = c->rank, rc = 0;
    size_t bytes = count * (size_t)dt->extent;
    char *acc = malloc(bytes ? bytes : 1), *tmp = malloc(bytes ? bytes : 1);
    if (!acc || !tmp) {
        free(acc);
        free(tmp);
        return MPI_ERR_NO_MEM;
    }
    memcpy(acc, src, bytes);
    for (int mask = 1; mask < n; mask <<= 1) {
        if ((r & mask) == 0) {
            int peer = r | mask;
            if (peer < n) {
                rc = coll_recv(c, tmp, bytes, peer, TAG_REDUCE);
                if (rc)
                    break;
                aptus_op_reduce(op, acc, tmp, count, dt, dth); /* tmp = acc(lower) op tmp(higher) */
                char *t = acc;
                acc = tmp;
                tmp = t;
            }
        } else {
            rc = coll_send(c, acc, bytes, r & ~mask, TAG_REDUCE);
            break;
        }
    }
    if (r == 0 && rc == 0)
        memcpy(result, acc, bytes);
    free(acc);
    free(tmp);
    return rc;
}

int aptus_reduce(const void *sbuf, void *rbuf, size_t count, const struct aptus_dtype *dt, MPI_Datatype dth,
                 const struct aptus_op *op, int root, struct aptus_comm *c)
{
    const void *src = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    size_t bytes = count * (size_t)dt->extent;
    if (c->size == 1) {
        if (sbuf != MPI_IN_PLACE && bytes)
            memmove(rbuf, sbuf, bytes);
        return 0;
    }
    if (root == 0)
        return reduce_to_zero(src, rbuf, count, dt, dth, op, c);
    void *tmp = c->rank == 0 ? malloc(bytes ? bytes : 1) : NULL;
    if (c->rank == 0 && !tmp)
        return MPI_ERR_NO_MEM;
    int rc = reduce_to_zero(src, tmp, count, dt, dth, op, c);
    if (rc == 0 && c->rank == 0)
        rc = coll_send(c, tmp, bytes, root, TAG_REDUCE);
    else if (rc == 0 && c->rank == root)
        rc = coll_recv(c, rbuf, bytes, 0, TAG_REDUCE);
    free(tmp);
    return rc;
}

int aptus_allreduce(const void *sbuf, void *rbuf, size_t count, const struct aptus_dtype *dt, MPI_Datatype dth,
                    const struct aptus_op *op, struct aptus_comm *c)
{
    int n = c->size, r = c->rank, rc = 0;
    size_t bytes = count * (size_t)dt->extent;
    if (sbuf != MPI_IN_PLACE && bytes)
        memmove(rbuf, sbuf, bytes);
    if (n == 1)
        return 0;
    if (n & (n - 1)) {
        rc = aptus_reduce(MPI_IN_PLACE, rbuf, count, dt, dth, op, 0, c);
        return rc ? rc : aptus_bcast(rbuf, bytes, 0, c);
    }
    char *tmp = malloc(bytes ? bytes : 1);
    if (!tmp)
        return MPI_ERR_NO_MEM;
    for (int mask = 1; mask < n && rc == 0; mask <<= 1) {
        int peer = r ^ mask;
        rc = coll_sendrecv(c, rbuf, bytes, peer, tmp, bytes, peer, TAG_ALLREDUCE);
        if (rc)
            break;
        if (peer < r) {
            aptus_op_reduce(op, tmp, rbuf, count, dt, dth); /* rbuf = peer(lower) op mine */
        } else {
            aptus_op_reduce(op, rbuf, tmp, count, dt, dth); /* tmp = mine(lower) op peer */
            memcpy(rbuf, tmp, bytes);
        }
    }
    free(tmp);
    return rc;
}

int aptus_allreduce_u32(struct aptus_comm *c, uint32_t *words, size_t count, int op_id)
{
    struct aptus_op op = { APTUS_MAGIC_OP, 1, 1, op_id, NULL, NULL };
    return aptus_allreduce(MPI_IN_PLACE, words, count, aptus_dtype_get(MPI_UINT32_T), MPI_UINT32_T, &op, c);
}

int aptus_allgather_internal(struct aptus_comm *c, const void *sbuf, void *rbuf, size_t bytes)
{
    int n = c->size, r = c->rank, rc = 0;
    char *out = rbuf;
    memcpy(out + (size_t)r * bytes, sbuf, bytes);
    int right = (r + 1) % n, left = (r - 1 + n) % n;
    for (int step = 0; step < n - 1 && rc == 0; step++) {
        int sblock = (r - step + n) % n, rblock = (r - step - 1 + n) % n;
        rc = coll_sendrecv(c, out + (size_t)sblock * bytes, bytes, right, out + (size_t)rblock * bytes, bytes, left,
                           TAG_ALLGATHER);
    }
    return rc;
}
