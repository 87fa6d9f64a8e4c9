/* Reductions on data in the layout of a struct coll_red (see coll_internal.h): Reduce,
 * Allreduce, Reduce_scatter, Scan and Exscan.
 *
 * Order: a user op need not be commutative, and then every combination must be
 * x_lo op x_hi with x_lo covering lower ranks than x_hi (the user function computes
 * inout = in op inout, so `in` is the lower part). The algorithms used for non-commutative ops
 * (binomial tree rooted at rank 0, recursive doubling, scan) only ever combine two contiguous
 * rank ranges. Rabenseifner's algorithm and recursive halving reorder, so they are only chosen
 * for commutative ops.
 *
 * Non-powers of two: the first 2 * rem ranks (rem = size - p', p' the largest power of two not
 * above size) fold in pairs first: rank 2k sends its vector to rank 2k + 1, which combines the
 * two (x_2k op x_2k+1) and takes part as "new rank" k; ranks from 2 * rem on are new rank
 * r - rem. New ranks keep the order of the ranks, so contiguous new-rank ranges are contiguous
 * rank ranges. */
#include <stdlib.h>
#include <string.h>

#include "coll/coll_internal.h"
#include "runtime/config.h"

enum { PH_FOLD = 0, PH_MAIN = 1, PH_GATHER = 2, PH_UNFOLD = 3, PH_FORWARD = 4 };

/* ---- helpers ------------------------------------------------------------------------------ */

static int pow2_below(int n)
{
    int p = 1;
    while (p * 2 <= n)
        p *= 2;
    return p;
}

/* Rank of new rank k after the fold (see the file comment). */
static int real_rank(int k, int rem)
{
    return k < rem ? 2 * k + 1 : k + rem;
}

static int new_rank(int r, int rem)
{
    if (r < 2 * rem)
        return (r & 1) ? r / 2 : -1;
    return r - rem;
}

/* First element of block b when n elements are cut into p blocks as evenly as possible. */
static size_t block_disp(size_t n, int p, int b)
{
    size_t q = n / (size_t)p, m = n % (size_t)p;
    return (size_t)b * q + ((size_t)b < m ? (size_t)b : m);
}

static void copy_elems(const struct coll_red *R, void *dst, const void *src, size_t a, size_t b)
{
    if (b > a && dst != src)
        aptus_coll_copy((char *)dst + a * R->ext, (const char *)src + a * R->ext, coll_red_span(R, a, b));
}

static int send_elems(struct aptus_comm *c, const struct coll_red *R, const void *buf, size_t a, size_t b, int dst,
                      int tag)
{
    if (b <= a)
        return 0;
    return aptus_coll_send(c, (const char *)buf + a * R->ext, coll_red_span(R, a, b), dst, tag);
}

static int recv_elems(struct aptus_comm *c, const struct coll_red *R, void *buf, size_t a, size_t b, int src, int tag)
{
    if (b <= a)
        return 0;
    return aptus_coll_recv(c, (char *)buf + a * R->ext, coll_red_span(R, a, b), src, tag);
}

/* Sends elements [sa, sb) of sbuf to peer and receives elements [ra, rb) from it into rbuf. */
static int exchange_elems(struct aptus_comm *c, const struct coll_red *R, const void *sbuf, size_t sa, size_t sb,
                          void *rbuf, size_t ra, size_t rb, int peer, int tag)
{
    struct aptus_request *q[2] = { NULL, NULL };
    int rc = 0;
    if (rb > ra)
        rc = aptus_coll_irecv(c, (char *)rbuf + ra * R->ext, coll_red_span(R, ra, rb), peer, tag, &q[0]);
    if (rc == 0 && sb > sa)
        rc = aptus_coll_isend(c, (const char *)sbuf + sa * R->ext, coll_red_span(R, sa, sb), peer, tag, &q[1]);
    int rc2 = aptus_coll_waitall(q, 2);
    return rc ? rc : rc2;
}

static size_t red_bytes(const struct coll_red *R, size_t n)
{
    return coll_red_span(R, 0, n);
}

/* ---- Reduce ---------------------------------------------------------------------------------- */

/* Binomial tree. Commutative ops: rooted at the root (ranks relative to it). Otherwise rooted
 * at rank 0, where every combination is (lower ranks) op (higher ranks), and the result goes
 * on to the root. */
static int reduce_binomial(const void *src, void *rbuf, size_t n, const struct coll_red *R, int root,
                           struct aptus_comm *c, int tag)
{
    int size = c->size, r = c->rank, rc = 0;
    int top = R->commute ? root : 0;
    int vr = (r - top + size) % size;
    char *acc = NULL, *tmp = NULL;
    const char *mine = src; /* my partial result so far */
    size_t bytes = red_bytes(R, n);
    if (R->commute && vr == 0) {
        /* The root accumulates straight into rbuf: its own data is copied there while the
         * first child's message is on its way, and no copy is left for the end. */
        tmp = aptus_coll_red_alloc(R, n);
        if (!tmp)
            return MPI_ERR_NO_MEM;
        for (int mask = 1; mask < size && rc == 0; mask <<= 1) {
            struct aptus_request *q;
            rc = aptus_coll_irecv(c, tmp, bytes, (mask + top) % size, tag + PH_MAIN, &q);
            if (rc)
                break;
            if (mask == 1)
                copy_elems(R, rbuf, src, 0, n);
            rc = aptus_coll_waitall(&q, 1);
            if (rc == 0)
                aptus_coll_red_apply(R, tmp, rbuf, 0, n);
        }
        aptus_coll_buf_free(tmp);
        return rc;
    }
    for (int mask = 1; mask < size; mask <<= 1) {
        if (vr & mask) {
            rc = aptus_coll_send(c, mine, bytes, ((vr & ~mask) + top) % size, tag + PH_MAIN);
            break;
        }
        int peer = vr | mask;
        if (peer >= size)
            continue;
        if (!tmp) {
            tmp = aptus_coll_red_alloc(R, n);
            acc = aptus_coll_red_alloc(R, n);
            if (!tmp || !acc) {
                rc = MPI_ERR_NO_MEM;
                break;
            }
        }
        rc = aptus_coll_recv(c, tmp, bytes, (peer + top) % size, tag + PH_MAIN);
        if (rc)
            break;
        aptus_coll_red_apply(R, mine, tmp, 0, n); /* tmp = mine (lower) op theirs */
        char *t = acc;
        acc = tmp;
        tmp = t;
        mine = acc;
    }
    if (rc == 0 && vr == 0) {
        if (top == root)
            copy_elems(R, rbuf, mine, 0, n);
        else
            rc = aptus_coll_send(c, mine, bytes, root, tag + PH_FORWARD);
    } else if (rc == 0 && r == root && top != root) {
        rc = aptus_coll_recv(c, rbuf, bytes, top, tag + PH_FORWARD);
    }
    aptus_coll_buf_free(acc);
    aptus_coll_buf_free(tmp);
    return rc;
}

/* Recursive-halving reduce-scatter over the p' new ranks: new rank k ends with the reduced
 * elements of block k (n elements in p' blocks) in W. Commutative ops only. */
static int reduce_scatter_halving(void *W, void *T, size_t n, const struct coll_red *R, int nr, int p, int rem,
                                  struct aptus_comm *c, int tag)
{
    int b0 = 0, rc = 0;
    for (int m = p / 2; m >= 1 && rc == 0; m /= 2) {
        int np = nr ^ m, peer = real_rank(np, rem);
        int keep0 = (nr & m) ? b0 + m : b0, send0 = (nr & m) ? b0 : b0 + m;
        size_t ka = block_disp(n, p, keep0), kb = block_disp(n, p, keep0 + m);
        size_t sa = block_disp(n, p, send0), sb = block_disp(n, p, send0 + m);
        rc = exchange_elems(c, R, W, sa, sb, T, ka, kb, peer, tag + PH_MAIN);
        if (rc == 0)
            aptus_coll_red_apply(R, T, W, ka, kb);
        b0 = keep0;
    }
    return rc;
}

/* Rabenseifner's reduce: fold, recursive-halving reduce-scatter, then a binomial gather of the
 * blocks towards the root's new rank (the rank after it when the root folded away). */
static int reduce_rabenseifner(const void *src, void *rbuf, size_t n, const struct coll_red *R, int root,
                               struct aptus_comm *c, int tag)
{
    int size = c->size, r = c->rank, rc = 0;
    int p = pow2_below(size), rem = size - p, nr = new_rank(r, rem);
    size_t bytes = red_bytes(R, n);
    int root_nr = new_rank(root, rem);
    int forward = root_nr < 0; /* the root folded away: its partner sends it the result */
    if (forward)
        root_nr = new_rank(root + 1, rem);

    if (nr < 0) { /* folded: hand my vector over, and receive the result if I am the root */
        rc = aptus_coll_send(c, src, bytes, r + 1, tag + PH_FOLD);
        if (rc == 0 && r == root)
            rc = aptus_coll_recv(c, rbuf, bytes, r + 1, tag + PH_FORWARD);
        return rc;
    }
    char *W = (r == root) ? rbuf : aptus_coll_red_alloc(R, n);
    char *T = aptus_coll_red_alloc(R, n);
    if (!W || !T) {
        rc = MPI_ERR_NO_MEM;
        goto out;
    }
    if (r < 2 * rem) { /* odd rank of a folding pair: W = x_{r-1} op x_r */
        copy_elems(R, W, src, 0, n);
        rc = aptus_coll_recv(c, T, bytes, r - 1, tag + PH_FOLD);
        if (rc)
            goto out;
        aptus_coll_red_apply(R, T, W, 0, n);
    } else {
        copy_elems(R, W, src, 0, n);
    }
    rc = reduce_scatter_halving(W, T, n, R, nr, p, rem, c, tag);
    /* gather: in step m, the rank whose bit m differs from the destination's sends its
     * blocks [b0, b0 + m) to its partner and is done */
    int b0 = nr;
    for (int m = 1; m < p && rc == 0; m *= 2) {
        int np = nr ^ m, peer = real_rank(np, rem);
        if ((nr & m) != (root_nr & m)) {
            rc = send_elems(c, R, W, block_disp(n, p, b0), block_disp(n, p, b0 + m), peer, tag + PH_GATHER);
            break;
        }
        int pb0 = np & ~(m - 1);
        rc = recv_elems(c, R, W, block_disp(n, p, pb0), block_disp(n, p, pb0 + m), peer, tag + PH_GATHER);
        b0 = b0 < pb0 ? b0 : pb0;
    }
    if (rc == 0 && nr == root_nr && forward)
        rc = aptus_coll_send(c, W, bytes, root, tag + PH_FORWARD);
out:
    if (W != rbuf)
        aptus_coll_buf_free(W);
    aptus_coll_buf_free(T);
    return rc;
}

int aptus_coll_reduce(const void *sbuf, void *rbuf, size_t n, const struct coll_red *R, int root, struct aptus_comm *c)
{
    int tag = aptus_coll_tag(c), rc = 0;
    const void *src = sbuf ? sbuf : rbuf;
    if (c->size == 1) {
        copy_elems(R, rbuf, src, 0, n);
        return 0;
    }
    if (n == 0)
        return 0;
    int alg = aptus_coll_forced(COLL_REDUCE, c, "MPI_Reduce", &rc);
    if (alg < 0)
        return rc;
    int p = pow2_below(c->size);
    int rab_ok = R->commute && !R->whole && n >= (size_t)p;
    /* on 2 ranks the binomial tree (the root reducing into rbuf) measured as fast or faster */
    if (alg == ALG_AUTO)
        alg = (rab_ok && c->size > 2 && red_bytes(R, n) >= aptus_config.coll_reduce_long) ? ALG_RABENSEIFNER
                                                                                          : ALG_BINOMIAL;
    alg = alg == ALG_RABENSEIFNER && rab_ok ? ALG_RABENSEIFNER : ALG_BINOMIAL;
    aptus_coll_ran(COLL_REDUCE, alg);
    if (alg == ALG_RABENSEIFNER)
        return reduce_rabenseifner(src, rbuf, n, R, root, c, tag);
    return reduce_binomial(src, rbuf, n, R, root, c, tag);
}

/* ---- Allreduce --------------------------------------------------------------------------------- */

/* Fold for allreduce-like algorithms: on return W (rbuf) of a taking-part rank holds its
 * pair's combination. Folded ranks return with *nr = -1 after sending. */
static int fold_in(void *W, void *T, size_t n, const struct coll_red *R, struct aptus_comm *c, int rem, int tag)
{
    int r = c->rank;
    size_t bytes = red_bytes(R, n);
    if (r >= 2 * rem)
        return 0;
    if (!(r & 1))
        return aptus_coll_send(c, W, bytes, r + 1, tag + PH_FOLD);
    int rc = aptus_coll_recv(c, T, bytes, r - 1, tag + PH_FOLD);
    if (rc == 0)
        aptus_coll_red_apply(R, T, W, 0, n); /* W = x_{r-1} op x_r */
    return rc;
}

static int fold_out(void *W, size_t n, const struct coll_red *R, struct aptus_comm *c, int rem, int tag)
{
    int r = c->rank;
    size_t bytes = red_bytes(R, n);
    if (r >= 2 * rem)
        return 0;
    if (r & 1)
        return aptus_coll_send(c, W, bytes, r - 1, tag + PH_UNFOLD);
    return aptus_coll_recv(c, W, bytes, r + 1, tag + PH_UNFOLD);
}

static int allreduce_recursive_doubling(void *W, size_t n, const struct coll_red *R, struct aptus_comm *c, int tag)
{
    int size = c->size, r = c->rank, rc = 0;
    int p = pow2_below(size), rem = size - p, nr = new_rank(r, rem);
    size_t bytes = red_bytes(R, n);
    char *T = aptus_coll_red_alloc(R, n);
    if (!T)
        return MPI_ERR_NO_MEM;
    rc = fold_in(W, T, n, R, c, rem, tag);
    for (int m = 1; m < p && rc == 0 && nr >= 0; m *= 2) {
        int np = nr ^ m, peer = real_rank(np, rem);
        rc = aptus_coll_sendrecv(c, W, bytes, peer, T, bytes, peer, tag + PH_MAIN);
        if (rc)
            break;
        if (np < nr || R->commute) {
            aptus_coll_red_apply(R, T, W, 0, n); /* W = theirs (lower) op mine */
        } else {
            aptus_coll_red_apply(R, W, T, 0, n); /* T = mine (lower) op theirs */
            copy_elems(R, W, T, 0, n);
        }
    }
    if (rc == 0)
        rc = fold_out(W, n, R, c, rem, tag);
    aptus_coll_buf_free(T);
    return rc;
}

static int allreduce_rabenseifner(void *W, size_t n, const struct coll_red *R, struct aptus_comm *c, int tag)
{
    int size = c->size, r = c->rank, rc = 0;
    int p = pow2_below(size), rem = size - p, nr = new_rank(r, rem);
    char *T = aptus_coll_red_alloc(R, n);
    if (!T)
        return MPI_ERR_NO_MEM;
    rc = fold_in(W, T, n, R, c, rem, tag);
    if (rc == 0 && nr >= 0) {
        rc = reduce_scatter_halving(W, T, n, R, nr, p, rem, c, tag);
        /* recursive-doubling allgather of the blocks */
        int b0 = nr;
        for (int m = 1; m < p && rc == 0; m *= 2) {
            int np = nr ^ m, peer = real_rank(np, rem), pb0 = np & ~(m - 1);
            rc = exchange_elems(c, R, W, block_disp(n, p, b0), block_disp(n, p, b0 + m), W, block_disp(n, p, pb0),
                                block_disp(n, p, pb0 + m), peer, tag + PH_GATHER);
            b0 = b0 < pb0 ? b0 : pb0;
        }
    }
    if (rc == 0)
        rc = fold_out(W, n, R, c, rem, tag);
    aptus_coll_buf_free(T);
    return rc;
}

int aptus_coll_allreduce(const void *sbuf, void *rbuf, size_t n, const struct coll_red *R, struct aptus_comm *c)
{
    int tag = aptus_coll_tag(c), rc = 0;
    if (sbuf)
        copy_elems(R, rbuf, sbuf, 0, n);
    if (c->size == 1 || n == 0)
        return 0;
    int alg = aptus_coll_forced(COLL_ALLREDUCE, c, "MPI_Allreduce", &rc);
    if (alg < 0)
        return rc;
    int p = pow2_below(c->size);
    int rab_ok = R->commute && !R->whole && n >= (size_t)p;
    int large = red_bytes(R, n) >= aptus_config.coll_allreduce_long;
    if (alg == ALG_AUTO)
        alg = !large   ? ALG_RECURSIVE_DOUBLING
              : rab_ok ? ALG_RABENSEIFNER
                       : (R->commute ? ALG_RECURSIVE_DOUBLING : ALG_REDUCE_BCAST);
    else if (alg == ALG_RABENSEIFNER && !rab_ok)
        alg = R->commute ? ALG_RECURSIVE_DOUBLING : ALG_REDUCE_BCAST;
    aptus_coll_ran(COLL_ALLREDUCE, alg);
    switch (alg) {
    case ALG_RABENSEIFNER: return allreduce_rabenseifner(rbuf, n, R, c, tag);
    case ALG_REDUCE_BCAST:
        rc = aptus_coll_reduce(NULL, rbuf, n, R, 0, c);
        return rc ? rc : aptus_coll_bcast(rbuf, red_bytes(R, n), 0, c, "MPI_Allreduce");
    default: return allreduce_recursive_doubling(rbuf, n, R, c, tag);
    }
}

/* ---- Reduce_scatter ----------------------------------------------------------------------------- */

/* Recursive halving with the fold; new rank k owns the ranks' blocks first(k) .. first(k+1)-1
 * (two blocks for a folded pair). Commutative ops only. W holds the whole input vector. */
static int reduce_scatter_rhalving(void *W, void *rbuf, const size_t *counts, const size_t *disp,
                                   const struct coll_red *R, struct aptus_comm *c, int tag)
{
    int size = c->size, r = c->rank, rc = 0;
    int p = pow2_below(size), rem = size - p, nr = new_rank(r, rem);
    size_t total = disp[size];
    char *T = aptus_coll_red_alloc(R, total);
    if (!T)
        return MPI_ERR_NO_MEM;
#define FIRST(k) ((k) < rem ? 2 * (k) : (k) + rem)
#define EDISP(k) disp[FIRST(k)]
    rc = fold_in(W, T, total, R, c, rem, tag);
    if (rc == 0 && nr >= 0) {
        int b0 = 0;
        for (int m = p / 2; m >= 1 && rc == 0; m /= 2) {
            int np = nr ^ m, peer = real_rank(np, rem);
            int keep0 = (nr & m) ? b0 + m : b0, send0 = (nr & m) ? b0 : b0 + m;
            size_t ka = EDISP(keep0), kb = EDISP(keep0 + m), sa = EDISP(send0), sb = EDISP(send0 + m);
            rc = exchange_elems(c, R, W, sa, sb, T, ka, kb, peer, tag + PH_MAIN);
            if (rc == 0)
                aptus_coll_red_apply(R, T, W, ka, kb);
            b0 = keep0;
        }
        if (rc == 0 && r < 2 * rem) /* my pair's even rank gets its block from me */
            rc = send_elems(c, R, W, disp[r - 1], disp[r], r - 1, tag + PH_UNFOLD);
        if (rc == 0 && counts[r])
            aptus_coll_copy(rbuf, (char *)W + disp[r] * R->ext, coll_red_span(R, disp[r], disp[r + 1]));
    } else if (rc == 0 && counts[r]) {
        rc = aptus_coll_recv(c, rbuf, coll_red_span(R, disp[r], disp[r + 1]), r + 1, tag + PH_UNFOLD);
    }
#undef FIRST
#undef EDISP
    aptus_coll_buf_free(T);
    return rc;
}

int aptus_coll_reduce_scatter(const void *sbuf, void *rbuf, const size_t *counts, const struct coll_red *R,
                              struct aptus_comm *c)
{
    int size = c->size, r = c->rank, rc = 0;
    int tag = aptus_coll_tag(c);
    size_t *disp = malloc(sizeof(size_t) * ((size_t)size + 1));
    if (!disp)
        return MPI_ERR_NO_MEM;
    disp[0] = 0;
    for (int i = 0; i < size; i++)
        disp[i + 1] = disp[i] + counts[i];
    size_t total = disp[size];
    const char *src = sbuf ? sbuf : rbuf;
    char *W = NULL;
    if (size == 1) {
        if (sbuf)
            copy_elems(R, rbuf, sbuf, 0, counts[0]);
        goto out;
    }
    if (total == 0)
        goto out;
    int alg = aptus_coll_forced(COLL_REDUCE_SCATTER, c, "MPI_Reduce_scatter", &rc);
    if (alg < 0)
        goto out;
    int halving_ok = R->commute && !R->whole;
    if (alg == ALG_AUTO || (alg == ALG_RECURSIVE_HALVING && !halving_ok))
        alg = halving_ok ? ALG_RECURSIVE_HALVING : ALG_REDUCE_SCATTERV;
    aptus_coll_ran(COLL_REDUCE_SCATTER, alg);
    if (alg == ALG_RECURSIVE_HALVING) {
        /* The work vector is always our own: in place, rbuf holds the whole input vector, and
         * only my block at its start may change (the rest is the user's). */
        W = aptus_coll_red_alloc(R, total);
        if (!W) {
            rc = MPI_ERR_NO_MEM;
            goto out;
        }
        copy_elems(R, W, src, 0, total);
        rc = reduce_scatter_rhalving(W, rbuf, counts, disp, R, c, tag);
        goto out;
    }
    /* reduce to rank 0, then scatter the blocks */
    W = r == 0 ? aptus_coll_red_alloc(R, total) : NULL;
    if (r == 0 && !W) {
        rc = MPI_ERR_NO_MEM;
        goto out;
    }
    rc = aptus_coll_reduce(src, W, total, R, 0, c);
    if (rc == 0)
        rc = aptus_coll_scatter_elems(W, counts, rbuf, R, c);
out:
    aptus_coll_buf_free(W);
    free(disp);
    return rc;
}

int aptus_coll_scatter_elems(const char *W, const size_t *counts, void *rbuf, const struct coll_red *R,
                             struct aptus_comm *c)
{
    int n = c->size;
    size_t *bytes = malloc(sizeof(size_t) * (size_t)n);
    const char **ptr = malloc(sizeof(char *) * (size_t)n);
    int rc = MPI_ERR_NO_MEM;
    if (bytes && ptr) {
        size_t d = 0;
        for (int i = 0; i < n; i++) {
            bytes[i] = coll_red_span(R, d, d + counts[i]);
            ptr[i] = W ? W + d * R->ext : NULL;
            d += counts[i];
        }
        rc = aptus_coll_scatterv(ptr, bytes, rbuf, bytes[c->rank], 0, c);
    }
    free(bytes);
    free(ptr);
    return rc;
}

/* ---- Scan / Exscan ---------------------------------------------------------------------------- */

/* Recursive doubling with partner rank ^ 2^k: P is the combination of the aligned block of
 * 2^k ranks around me; whatever comes from below is folded into my result too. */
int aptus_coll_scan(const void *sbuf, void *rbuf, size_t n, const struct coll_red *R, struct aptus_comm *c,
                    int exclusive)
{
    int size = c->size, r = c->rank, rc = 0;
    int tag = aptus_coll_tag(c);
    const void *src = sbuf ? sbuf : rbuf;
    size_t bytes = red_bytes(R, n);
    if (!exclusive && sbuf)
        copy_elems(R, rbuf, sbuf, 0, n);
    if (size == 1 || n == 0)
        return 0;
    char *P = aptus_coll_red_alloc(R, n), *T = aptus_coll_red_alloc(R, n);
    if (!P || !T) {
        aptus_coll_buf_free(P);
        aptus_coll_buf_free(T);
        return MPI_ERR_NO_MEM;
    }
    copy_elems(R, P, src, 0, n);
    int have = !exclusive;
    for (int m = 1; m < size && rc == 0; m *= 2) {
        int peer = r ^ m;
        if (peer >= size)
            continue;
        rc = aptus_coll_sendrecv(c, P, bytes, peer, T, bytes, peer, tag + PH_MAIN);
        if (rc)
            break;
        if (peer < r) {
            if (have) {
                aptus_coll_red_apply(R, T, rbuf, 0, n);
            } else {
                copy_elems(R, rbuf, T, 0, n);
                have = 1;
            }
            aptus_coll_red_apply(R, T, P, 0, n); /* P = lower op P */
        } else {
            aptus_coll_red_apply(R, P, T, 0, n); /* T = P op higher */
            char *t = P;
            P = T;
            T = t;
        }
    }
    aptus_coll_buf_free(P);
    aptus_coll_buf_free(T);
    return rc;
}
