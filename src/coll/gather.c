/* Gather and scatter, in packed bytes: binomial trees (small blocks) and direct messages to or
 * from the root (large blocks, and the v-variants). */
#include <stdlib.h>
#include <string.h>

#include "coll/coll_internal.h"
#include "runtime/config.h"

/* Ranks in the binomial subtree of relative rank vr: up to its lowest set bit. */
static int subtree(int vr, int n)
{
    int m = 1;
    while (m < n && !(vr & m))
        m <<= 1;
    if (vr == 0)
        return n;
    return vr + m <= n ? m : n - vr;
}

/* Copies the relative-order blocks of tmp (block j is rank (j + root) % n) to rank order in out,
 * or the reverse (to_rel). */
static void rotate(char *rank_order, char *rel_order, size_t blk, int root, int n, int to_rel)
{
    size_t head = (size_t)(n - root) * blk, tail = (size_t)root * blk;
    if (to_rel) {
        aptus_coll_copy(rel_order, rank_order + tail, head);
        aptus_coll_copy(rel_order + head, rank_order, tail);
    } else {
        aptus_coll_copy(rank_order + tail, rel_order, head);
        aptus_coll_copy(rank_order, rel_order + head, tail);
    }
}

/* ---- Gather ------------------------------------------------------------------------------------ */

static int gather_binomial(const void *sbuf, void *rbuf, size_t blk, int root, struct aptus_comm *c, int tag)
{
    int n = c->size, vr = (c->rank - root + n) % n, rc = 0;
    int sub = subtree(vr, n);
    char *buf = NULL; /* my subtree's blocks in relative order */
    if (vr == 0 && root == 0) {
        buf = rbuf;
        if (sbuf)
            aptus_coll_copy(buf, sbuf, blk);
    } else if (sub > 1) {
        buf = aptus_coll_buf((size_t)sub * blk);
        if (!buf)
            return MPI_ERR_NO_MEM;
        aptus_coll_copy(buf, sbuf ? sbuf : (char *)rbuf + (size_t)root * blk, blk);
    }
    for (int m = 1; m < sub && rc == 0; m <<= 1) {
        int cnt = sub - m < m ? sub - m : m; /* child vr + m's subtree */
        rc = aptus_coll_recv(c, buf + (size_t)m * blk, (size_t)cnt * blk, (vr + m + root) % n, tag);
    }
    if (rc == 0 && vr != 0) {
        int parent = ((vr & (vr - 1)) + root) % n; /* clear the lowest set bit */
        rc = aptus_coll_send(c, sub > 1 ? buf : sbuf, (size_t)sub * blk, parent, tag);
    } else if (rc == 0 && root != 0) {
        rotate(rbuf, buf, blk, root, n, 0);
    }
    if (buf != rbuf)
        aptus_coll_buf_free(buf);
    return rc;
}

static int gather_linear(const void *sbuf, void *rbuf, size_t blk, int root, struct aptus_comm *c, int tag)
{
    int n = c->size, rc = 0;
    if (c->rank != root)
        return aptus_coll_send(c, sbuf, blk, root, tag);
    struct aptus_request **q = calloc((size_t)n, sizeof *q);
    if (!q)
        return MPI_ERR_NO_MEM;
    for (int i = 0; i < n && rc == 0; i++)
        if (i != root)
            rc = aptus_coll_irecv(c, (char *)rbuf + (size_t)i * blk, blk, i, tag, &q[i]);
    if (sbuf)
        aptus_coll_copy((char *)rbuf + (size_t)root * blk, sbuf, blk);
    int rc2 = aptus_coll_waitall(q, n);
    free(q);
    return rc ? rc : rc2;
}

int aptus_coll_gather(const void *sbuf, void *rbuf, size_t blk, int root, struct aptus_comm *c)
{
    int tag = aptus_coll_tag(c), rc = 0;
    if (blk == 0)
        return 0;
    if (c->size == 1) {
        if (sbuf)
            aptus_coll_copy(rbuf, sbuf, blk);
        return 0;
    }
    int alg = aptus_coll_forced(COLL_GATHER, c, "MPI_Gather", &rc);
    if (alg < 0)
        return rc;
    if (alg == ALG_AUTO)
        alg = blk >= aptus_config.coll_gather_long ? ALG_LINEAR : ALG_BINOMIAL;
    aptus_coll_ran(COLL_GATHER, alg == ALG_LINEAR ? ALG_LINEAR : ALG_BINOMIAL);
    return alg == ALG_LINEAR ? gather_linear(sbuf, rbuf, blk, root, c, tag)
                             : gather_binomial(sbuf, rbuf, blk, root, c, tag);
}

int aptus_coll_gatherv(const void *sbuf, size_t sbytes, char *const *rptr, const size_t *bytes, int root,
                       struct aptus_comm *c)
{
    int n = c->size, rc = 0;
    int tag = aptus_coll_tag(c);
    if (c->rank != root)
        return aptus_coll_send(c, sbuf, sbytes, root, tag);
    struct aptus_request **q = calloc((size_t)n, sizeof *q);
    if (!q)
        return MPI_ERR_NO_MEM;
    for (int i = 0; i < n && rc == 0; i++)
        if (i != root)
            rc = aptus_coll_irecv(c, rptr[i], bytes[i], i, tag, &q[i]);
    if (sbuf && bytes[root])
        aptus_coll_copy(rptr[root], sbuf, bytes[root] < sbytes ? bytes[root] : sbytes);
    int rc2 = aptus_coll_waitall(q, n);
    free(q);
    if (rc == 0 && rc2 == 0 && sbuf && sbytes > bytes[root])
        rc = MPI_ERR_TRUNCATE;
    return rc ? rc : rc2;
}

/* ---- Scatter ----------------------------------------------------------------------------------- */

static int scatter_binomial(const void *sbuf, void *rbuf, size_t blk, int root, struct aptus_comm *c, int tag)
{
    int n = c->size, vr = (c->rank - root + n) % n, rc = 0;
    int sub = subtree(vr, n);
    const char *buf = NULL; /* my subtree's blocks in relative order */
    char *tmp = NULL;
    if (vr == 0) {
        if (root == 0) {
            buf = sbuf;
        } else {
            tmp = aptus_coll_buf((size_t)n * blk);
            if (!tmp)
                return MPI_ERR_NO_MEM;
            rotate((char *)sbuf, tmp, blk, root, n, 1);
            buf = tmp;
        }
    } else {
        int parent = ((vr & (vr - 1)) + root) % n;
        if (sub == 1)
            return aptus_coll_recv(c, rbuf, blk, parent, tag);
        tmp = aptus_coll_buf((size_t)sub * blk);
        if (!tmp)
            return MPI_ERR_NO_MEM;
        rc = aptus_coll_recv(c, tmp, (size_t)sub * blk, parent, tag);
        buf = tmp;
    }
    /* children in the order the gather would receive from them, largest subtree first */
    int top = 1;
    while (top < sub)
        top <<= 1;
    for (int m = top >> 1; m >= 1 && rc == 0; m >>= 1) {
        if (m >= sub)
            continue;
        int cnt = sub - m < m ? sub - m : m;
        rc = aptus_coll_send(c, buf + (size_t)m * blk, (size_t)cnt * blk, (vr + m + root) % n, tag);
    }
    if (rc == 0 && rbuf)
        aptus_coll_copy(rbuf, buf, blk);
    aptus_coll_buf_free(tmp);
    return rc;
}

static int scatter_linear(const void *sbuf, void *rbuf, size_t blk, int root, struct aptus_comm *c, int tag)
{
    int n = c->size, rc = 0;
    if (c->rank != root)
        return aptus_coll_recv(c, rbuf, blk, root, tag);
    struct aptus_request **q = calloc((size_t)n, sizeof *q);
    if (!q)
        return MPI_ERR_NO_MEM;
    for (int i = 0; i < n && rc == 0; i++)
        if (i != root)
            rc = aptus_coll_isend(c, (const char *)sbuf + (size_t)i * blk, blk, i, tag, &q[i]);
    if (rbuf)
        aptus_coll_copy(rbuf, (const char *)sbuf + (size_t)root * blk, blk);
    int rc2 = aptus_coll_waitall(q, n);
    free(q);
    return rc ? rc : rc2;
}

int aptus_coll_scatter(const void *sbuf, void *rbuf, size_t blk, int root, struct aptus_comm *c)
{
    int tag = aptus_coll_tag(c), rc = 0;
    if (blk == 0)
        return 0;
    if (c->size == 1) {
        if (rbuf)
            aptus_coll_copy(rbuf, sbuf, blk);
        return 0;
    }
    int alg = aptus_coll_forced(COLL_SCATTER, c, "MPI_Scatter", &rc);
    if (alg < 0)
        return rc;
    if (alg == ALG_AUTO)
        alg = blk >= aptus_config.coll_scatter_long ? ALG_LINEAR : ALG_BINOMIAL;
    aptus_coll_ran(COLL_SCATTER, alg == ALG_LINEAR ? ALG_LINEAR : ALG_BINOMIAL);
    return alg == ALG_LINEAR ? scatter_linear(sbuf, rbuf, blk, root, c, tag)
                             : scatter_binomial(sbuf, rbuf, blk, root, c, tag);
}

int aptus_coll_scatterv(const char *const *sptr, const size_t *bytes, void *rbuf, size_t rbytes, int root,
                        struct aptus_comm *c)
{
    int n = c->size, rc = 0;
    int tag = aptus_coll_tag(c);
    if (c->rank != root)
        return aptus_coll_recv(c, rbuf, rbytes, root, tag);
    struct aptus_request **q = calloc((size_t)n, sizeof *q);
    if (!q)
        return MPI_ERR_NO_MEM;
    for (int i = 0; i < n && rc == 0; i++)
        if (i != root)
            rc = aptus_coll_isend(c, sptr[i], bytes[i], i, tag, &q[i]);
    if (rbuf && bytes[root])
        aptus_coll_copy(rbuf, sptr[root], bytes[root] < rbytes ? bytes[root] : rbytes);
    int rc2 = aptus_coll_waitall(q, n);
    free(q);
    if (rc == 0 && rc2 == 0 && rbuf && bytes[root] > rbytes)
        rc = MPI_ERR_TRUNCATE;
    return rc ? rc : rc2;
}
