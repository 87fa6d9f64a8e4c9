/* Allgather (recursive doubling, Bruck, ring) and Allgatherv (ring), in packed bytes. */
#include <stdlib.h>
#include <string.h>

#include "coll/coll_internal.h"
#include "runtime/config.h"

/* Partner rank ^ 2^k exchanges the aligned ranges of blocks each already has. Powers of two. */
static int allgather_recursive_doubling(char *rbuf, size_t blk, struct aptus_comm *c, int tag)
{
    int n = c->size, r = c->rank, rc = 0;
    for (int m = 1; m < n && rc == 0; m <<= 1) {
        int peer = r ^ m;
        size_t mine = (size_t)(r & ~(m - 1)), theirs = (size_t)(peer & ~(m - 1));
        rc = aptus_coll_sendrecv(c, rbuf + mine * blk, (size_t)m * blk, peer, rbuf + theirs * blk, (size_t)m * blk,
                                 peer, tag);
    }
    return rc;
}

/* Bruck: after step k a rank holds the blocks of ranks r .. r + 2^k - 1 (in that order, from
 * index 0 of a work buffer); one rotation at the end puts them in rank order. */
static int allgather_bruck(char *rbuf, size_t blk, struct aptus_comm *c, int tag)
{
    int n = c->size, r = c->rank, rc = 0;
    char *tmp = r == 0 ? rbuf : aptus_coll_buf((size_t)n * blk);
    if (!tmp)
        return MPI_ERR_NO_MEM;
    if (tmp != rbuf)
        aptus_coll_copy(tmp, rbuf + (size_t)r * blk, blk);
    for (int d = 1; d < n && rc == 0; d <<= 1) {
        int cnt = n - d < d ? n - d : d;
        rc = aptus_coll_sendrecv(c, tmp, (size_t)cnt * blk, (r - d + n) % n, tmp + (size_t)d * blk, (size_t)cnt * blk,
                                 (r + d) % n, tag);
    }
    if (rc == 0 && tmp != rbuf) { /* tmp[j] is rank (r + j) % n's block */
        size_t head = (size_t)(n - r) * blk;
        aptus_coll_copy(rbuf + (size_t)r * blk, tmp, head);
        aptus_coll_copy(rbuf, tmp + head, (size_t)r * blk);
    }
    if (tmp != rbuf)
        aptus_coll_buf_free(tmp);
    return rc;
}

/* Ring over blocks of any sizes at any offsets: in step s a rank forwards the block it received
 * in step s - 1 (its own first) to the right. */
static int allgather_ring(char *rbuf, char *const *rptr, const size_t *bytes, size_t blk, struct aptus_comm *c, int tag)
{
    int n = c->size, r = c->rank, rc = 0;
    int right = (r + 1) % n, left = (r - 1 + n) % n;
    for (int s = 0; s < n - 1 && rc == 0; s++) {
        int sb = (r - s + n) % n, rb = (r - s - 1 + n) % n;
        char *sp = rptr ? rptr[sb] : rbuf + (size_t)sb * blk, *rp = rptr ? rptr[rb] : rbuf + (size_t)rb * blk;
        size_t sl = bytes ? bytes[sb] : blk, rl = bytes ? bytes[rb] : blk;
        rc = aptus_coll_sendrecv(c, sp, sl, right, rp, rl, left, tag);
    }
    return rc;
}

int aptus_coll_allgather(const void *sbuf, void *rbuf, size_t blk, struct aptus_comm *c)
{
    int tag = aptus_coll_tag(c), rc = 0;
    int n = c->size, r = c->rank;
    if (sbuf)
        aptus_coll_copy((char *)rbuf + (size_t)r * blk, sbuf, blk);
    if (n == 1 || blk == 0)
        return 0;
    int alg = aptus_coll_forced(COLL_ALLGATHER, c, "MPI_Allgather", &rc);
    if (alg < 0)
        return rc;
    int pow2 = (n & (n - 1)) == 0;
    if (alg == ALG_AUTO)
        alg = (size_t)n * blk >= aptus_config.coll_allgather_long ? ALG_RING
              : pow2                                              ? ALG_RECURSIVE_DOUBLING
                                                                  : ALG_BRUCK;
    else if (alg == ALG_RECURSIVE_DOUBLING && !pow2)
        alg = ALG_BRUCK;
    aptus_coll_ran(COLL_ALLGATHER, alg);
    switch (alg) {
    case ALG_RING: return allgather_ring(rbuf, NULL, NULL, blk, c, tag);
    case ALG_RECURSIVE_DOUBLING: return allgather_recursive_doubling(rbuf, blk, c, tag);
    default: return allgather_bruck(rbuf, blk, c, tag);
    }
}

int aptus_coll_allgatherv(const void *sbuf, char *const *rptr, const size_t *bytes, struct aptus_comm *c)
{
    int tag = aptus_coll_tag(c);
    int n = c->size, r = c->rank;
    if (sbuf && bytes[r])
        aptus_coll_copy(rptr[r], sbuf, bytes[r]);
    if (n == 1)
        return 0;
    return allgather_ring(NULL, rptr, bytes, 0, c, tag);
}
