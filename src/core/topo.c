/* Virtual topologies: the structures, Cartesian arithmetic and MPI_Dims_create. */
#include "core/topo.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

static int *copy_ints(const int *src, int n, int *ok)
{
    if (n <= 0 || !src)
        return NULL;
    int *p = malloc((size_t)n * sizeof(int));
    if (!p) {
        *ok = 0;
        return NULL;
    }
    memcpy(p, src, (size_t)n * sizeof(int));
    return p;
}

void aptus_topo_free(struct aptus_topo *t)
{
    if (!t)
        return;
    free(t->dims);
    free(t->periods);
    free(t->index);
    free(t->edges);
    free(t->srcw);
    free(t->dstw);
    if (t->out != t->in)
        free(t->out);
    free(t->in);
    free(t);
}

struct aptus_topo *aptus_topo_dup(const struct aptus_topo *t, int *ok)
{
    *ok = 1;
    if (!t)
        return NULL;
    struct aptus_topo *n = calloc(1, sizeof *n);
    if (!n) {
        *ok = 0;
        return NULL;
    }
    *n = *t;
    n->dims = copy_ints(t->dims, t->ndims, ok);
    n->periods = copy_ints(t->periods, t->ndims, ok);
    n->index = copy_ints(t->index, t->nnodes, ok);
    n->edges = copy_ints(t->edges, t->nedges, ok);
    n->srcw = copy_ints(t->srcw, t->nin, ok);
    n->dstw = copy_ints(t->dstw, t->nout, ok);
    n->in = copy_ints(t->in, t->nin, ok);
    n->out = t->out == t->in ? n->in : copy_ints(t->out, t->nout, ok);
    if (!*ok) {
        aptus_topo_free(n);
        return NULL;
    }
    return n;
}

void aptus_cart_coords(const struct aptus_topo *t, int rank, int *coords)
{
    for (int d = t->ndims - 1; d >= 0; d--) {
        coords[d] = rank % t->dims[d];
        rank /= t->dims[d];
    }
}

int aptus_cart_rank(const struct aptus_topo *t, const int *coords)
{
    int rank = 0;
    for (int d = 0; d < t->ndims; d++) {
        int c = coords[d], n = t->dims[d];
        if (c < 0 || c >= n) {
            if (!t->periods[d])
                return -1;
            c %= n;
            if (c < 0)
                c += n;
        }
        rank = rank * n + c;
    }
    return rank;
}

void aptus_cart_shift(const struct aptus_topo *t, int rank, int dir, int disp, int *src, int *dst)
{
    int coords[t->ndims > 0 ? t->ndims : 1];
    aptus_cart_coords(t, rank, coords);
    int me = coords[dir];
    long long n = t->dims[dir];
    long long to = me + (long long)disp, from = me - (long long)disp;
    if (t->periods[dir]) {
        coords[dir] = (int)(((to % n) + n) % n);
        *dst = aptus_cart_rank(t, coords);
        coords[dir] = (int)(((from % n) + n) % n);
        *src = aptus_cart_rank(t, coords);
    } else {
        coords[dir] = (int)to;
        *dst = to >= 0 && to < n ? aptus_cart_rank(t, coords) : MPI_PROC_NULL;
        coords[dir] = (int)from;
        *src = from >= 0 && from < n ? aptus_cart_rank(t, coords) : MPI_PROC_NULL;
    }
}

struct aptus_topo *aptus_topo_cart(int ndims, const int *dims, const int *periods, int rank)
{
    int ok = 1;
    struct aptus_topo *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->kind = MPI_CART;
    t->ndims = ndims;
    t->dims = copy_ints(dims, ndims, &ok);
    t->periods = ndims > 0 ? malloc((size_t)ndims * sizeof(int)) : NULL;
    t->nin = t->nout = 2 * ndims;
    t->in = ndims > 0 ? malloc((size_t)(2 * ndims) * sizeof(int)) : NULL;
    t->out = t->in;
    if (!ok || (ndims > 0 && (!t->periods || !t->in))) {
        aptus_topo_free(t);
        return NULL;
    }
    for (int d = 0; d < ndims; d++)
        t->periods[d] = periods[d] != 0;
    for (int d = 0; d < ndims; d++)
        aptus_cart_shift(t, rank, d, 1, &t->in[2 * d], &t->in[2 * d + 1]);
    return t;
}

struct aptus_topo *aptus_topo_graph(int nnodes, const int *index, const int *edges, int rank)
{
    int ok = 1;
    struct aptus_topo *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->kind = MPI_GRAPH;
    t->nnodes = nnodes;
    t->nedges = nnodes > 0 ? index[nnodes - 1] : 0;
    t->index = copy_ints(index, nnodes, &ok);
    t->edges = copy_ints(edges, t->nedges, &ok);
    int first = rank > 0 ? index[rank - 1] : 0;
    t->nin = t->nout = index[rank] - first;
    t->in = copy_ints(edges + first, t->nin, &ok);
    t->out = t->in;
    if (!ok) {
        aptus_topo_free(t);
        return NULL;
    }
    return t;
}

struct aptus_topo *aptus_topo_dist_graph(int nin, const int *src, const int *sw, int nout, const int *dst,
                                         const int *dw, int weighted)
{
    int ok = 1;
    struct aptus_topo *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->kind = MPI_DIST_GRAPH;
    t->weighted = weighted;
    t->nin = nin;
    t->nout = nout;
    t->in = copy_ints(src, nin, &ok);
    t->out = copy_ints(dst, nout, &ok);
    if (weighted) {
        t->srcw = copy_ints(sw, nin, &ok);
        t->dstw = copy_ints(dw, nout, &ok);
    }
    if (!ok) {
        aptus_topo_free(t);
        return NULL;
    }
    return t;
}

/* ---------------- MPI_Dims_create ---------------- */

/* Search for k factors of n in non-increasing order, each <= limit, minimising the spread
 * (largest - smallest). Among equal spreads the factors are compared from the smallest up and
 * the larger wins (13x9x8x6 over 13x12x6x6 for 5616 in 4 dimensions): the same choice as
 * MPICH's table, so programs see the same grids under both. Factors come from the divisors of n. */
struct dims_search {
    int k;
    int *cur, *best;
    const int *div; /* divisors of n, decreasing */
    int ndiv;
    int best_spread;
    long budget; /* steps left before settling for the best found */
};

static void dims_rec(struct dims_search *s, int i, int n, int limit)
{
    if (s->budget-- <= 0)
        return;
    if (i == s->k - 1) {
        if (n > limit)
            return;
        s->cur[i] = n;
        int spread = s->cur[0] - n;
        int better = spread < s->best_spread;
        if (spread == s->best_spread) {
            int m = s->k - 1;
            while (m > 0 && s->cur[m] == s->best[m])
                m--;
            better = s->cur[m] > s->best[m];
        }
        if (better) {
            s->best_spread = spread;
            memcpy(s->best, s->cur, (size_t)s->k * sizeof(int));
        }
        return;
    }
    for (int j = 0; j < s->ndiv; j++) {
        int f = s->div[j];
        if (f > limit || f > n || n % f)
            continue;
        /* The remaining k - i factors are each <= f and multiply to n. */
        long long p = 1;
        for (int m = i; m < s->k && p < n; m++)
            p *= f;
        if (p < n)
            break; /* smaller f cannot reach n either */
        if (i > 0 && s->cur[0] - f > s->best_spread)
            break; /* spreads only grow from here */
        s->cur[i] = f;
        dims_rec(s, i + 1, n / f, f);
    }
}

int aptus_dims_create(int nnodes, int ndims, int *dims)
{
    long long fixed = 1;
    int nfree = 0;
    for (int d = 0; d < ndims; d++) {
        if (dims[d] < 0)
            return MPI_ERR_DIMS;
        if (dims[d] > 0)
            fixed *= dims[d];
        else
            nfree++;
        if (fixed > INT_MAX)
            return MPI_ERR_DIMS;
    }
    if (nnodes % fixed)
        return MPI_ERR_DIMS;
    int n = (int)(nnodes / fixed);
    if (nfree == 0)
        return n == 1 ? 0 : MPI_ERR_DIMS;
    /* divisors of n, decreasing (at most 1600 below 2^31) */
    int small[1600], large[1600], ns = 0, nl = 0;
    for (long long f = 1; f * f <= n; f++)
        if (n % f == 0 && ns < 1600) {
            small[ns++] = (int)f;
            if (f * f != n && nl < 1600)
                large[nl++] = (int)(n / f);
        }
    int div[3200], nd = 0;
    for (int j = 0; j < nl; j++)
        div[nd++] = large[j];
    for (int j = ns - 1; j >= 0; j--)
        div[nd++] = small[j];
    int cur[nfree], best[nfree];
    struct dims_search s = { nfree, cur, best, div, nd, INT_MAX, 1000000 };
    dims_rec(&s, 0, n, n);
    if (s.best_spread == INT_MAX) /* cannot happen: n, 1, 1, ... always qualifies */
        return MPI_ERR_DIMS;
    for (int d = 0, j = 0; d < ndims; d++)
        if (dims[d] == 0)
            dims[d] = best[j++];
    return 0;
}
