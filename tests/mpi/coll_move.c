/* Data-movement collectives: Bcast, Gather(v), Scatter(v), Allgather(v), Alltoall(v/w) and their
 * _c forms, with every root, odd counts, counts that cross the algorithm switch points, MPI_IN_PLACE
 * wherever the standard allows it, and a derived datatype with holes (two ints out of every four,
 * built with MPI_Type_vector + MPI_Type_create_resized) on either side. Every result is compared
 * with a serial reference over the whole buffer, so holes and gaps must keep their sentinel.
 *
 * Usage: coll_move [quick]   (quick: skip the largest counts). Works with any number of ranks. */
#include "mtest.h"
#include "nbc_wrap.h"

static int rank, size, quick;

#define SENT (-77777)

/* A buffer layout: `ipe` ints per element of type t, elements `stride` ints apart, the ints of
 * an element at off[0], off[1]. Data is addressed by "logical int" j. */
typedef struct {
    MPI_Datatype t;
    int ipe, stride, off[2];
    const char *name;
} lay_t;

static lay_t PL = { MPI_INT, 1, 1, { 0, 0 }, "MPI_INT" };
static lay_t VE = { MPI_DATATYPE_NULL, 2, 4, { 0, 2 }, "vector(2,1,2)+resized(16)" };

static size_t lay_mem(const lay_t *L, long nints)
{
    return (size_t)(nints / L->ipe) * (size_t)L->stride + 1;
}

static int *lay_alloc(const lay_t *L, long nints)
{
    size_t m = lay_mem(L, nints);
    int *b = mtest_malloc(m * sizeof(int));
    for (size_t i = 0; i < m; i++)
        b[i] = SENT;
    return b;
}

static int *lay_at(const lay_t *L, int *buf, long j)
{
    return &buf[(j / L->ipe) * L->stride + L->off[j % L->ipe]];
}

static int val(int src, int dst, long j)
{
    return src * 1000003 + dst * 10007 + (int)(j % 100000) * 7 + 1;
}

static void compare(const int *got, const int *exp, size_t mem, const char *what, const lay_t *L, long k, int root)
{
    for (size_t i = 0; i < mem; i++)
        if (got[i] != exp[i])
            FAILF("%s (layout %s, count %ld ints, root %d): memory int %zu is %d, expected %d", what, L->name, k, root,
                  i, got[i], exp[i]);
}

/* count in elements of layout L for k logical ints */
static int elems(const lay_t *L, long k)
{
    return (int)(k / L->ipe);
}

/* ---- Bcast ---- */
static void test_bcast(const lay_t *L, long k, int root)
{
    int *b = lay_alloc(L, k), *e = lay_alloc(L, k);
    for (long j = 0; j < k; j++) {
        *lay_at(L, e, j) = val(root, 0, j);
        if (rank == root)
            *lay_at(L, b, j) = val(root, 0, j);
    }
    MPI_CHECK(MPI_Bcast(b, elems(L, k), L->t, root, MPI_COMM_WORLD));
    compare(b, e, lay_mem(L, k), "Bcast", L, k, root);
    free(b);
    free(e);
}

/* ---- Gather / Scatter ---- */
static void test_gather(const lay_t *Ls, const lay_t *Lr, long k, int root, int in_place, int large)
{
    int *s = lay_alloc(Ls, k), *r = NULL, *e = NULL;
    for (long j = 0; j < k; j++)
        *lay_at(Ls, s, j) = val(rank, root, j);
    if (rank == root) {
        r = lay_alloc(Lr, k * size);
        e = lay_alloc(Lr, k * size);
        for (int i = 0; i < size; i++)
            for (long j = 0; j < k; j++)
                *lay_at(Lr, e, i * k + j) = val(i, root, j);
        if (in_place)
            for (long j = 0; j < k; j++)
                *lay_at(Lr, r, root * k + j) = val(root, root, j);
    }
    const void *sb = (in_place && rank == root) ? MPI_IN_PLACE : s;
    if (large)
        MPI_CHECK(MPI_Gather_c(sb, elems(Ls, k), Ls->t, r, elems(Lr, k), Lr->t, root, MPI_COMM_WORLD));
    else
        MPI_CHECK(MPI_Gather(sb, elems(Ls, k), Ls->t, r, elems(Lr, k), Lr->t, root, MPI_COMM_WORLD));
    if (rank == root)
        compare(r, e, lay_mem(Lr, k * size), in_place ? "Gather in place" : "Gather", Lr, k, root);
    free(s);
    free(r);
    free(e);
}

static void test_scatter(const lay_t *Ls, const lay_t *Lr, long k, int root, int in_place, int large)
{
    int *s = NULL, *r = lay_alloc(Lr, k), *e = lay_alloc(Lr, k);
    if (rank == root) {
        s = lay_alloc(Ls, k * size);
        for (int i = 0; i < size; i++)
            for (long j = 0; j < k; j++)
                *lay_at(Ls, s, i * k + j) = val(root, i, j);
    }
    for (long j = 0; j < k; j++)
        *lay_at(Lr, e, j) = val(root, rank, j);
    int ip = in_place && rank == root;
    if (ip) /* the root's block stays in the send buffer, the receive buffer is untouched */
        for (long j = 0; j < k; j++)
            *lay_at(Lr, e, j) = SENT;
    void *rb = ip ? MPI_IN_PLACE : r;
    if (large)
        MPI_CHECK(MPI_Scatter_c(s, elems(Ls, k), Ls->t, rb, elems(Lr, k), Lr->t, root, MPI_COMM_WORLD));
    else
        MPI_CHECK(MPI_Scatter(s, elems(Ls, k), Ls->t, rb, elems(Lr, k), Lr->t, root, MPI_COMM_WORLD));
    compare(r, e, lay_mem(Lr, k), ip ? "Scatter in place" : "Scatter", Lr, k, root);
    if (rank == root) { /* the send buffer is unchanged */
        for (int i = 0; i < size; i++)
            for (long j = 0; j < k; j++)
                CHECK(*lay_at(Ls, s, i * k + j) == val(root, i, j), "Scatter modified its send buffer");
    }
    free(s);
    free(r);
    free(e);
}

/* Block sizes (logical ints, multiples of 2) and element displacements for the v-variants:
 * rank i gets cnt[i] = 2 * ((base + 3 i) % 5), blocks laid out in reverse rank order with a
 * one-element gap between them. */
static void v_layout(const lay_t *L, long base, int *cnt, int *dsp, long *total_elems)
{
    long pos = 0;
    for (int i = size - 1; i >= 0; i--) {
        cnt[i] = (int)(2 * ((base + 3 * i) % 5) + (base > 4 ? 2 * base : 0));
        dsp[i] = (int)pos;
        pos += cnt[i] / L->ipe + 1;
    }
    *total_elems = pos;
}

static void test_gatherv(const lay_t *Ls, const lay_t *Lr, long base, int root, int in_place, int large)
{
    int cnt[64], dsp[64], rc_e[64];
    long tot;
    v_layout(Lr, base, cnt, dsp, &tot);
    long k = cnt[rank];
    int *s = lay_alloc(Ls, k), *r = NULL, *e = NULL;
    for (long j = 0; j < k; j++)
        *lay_at(Ls, s, j) = val(rank, root, j);
    if (rank == root) {
        r = lay_alloc(Lr, tot * Lr->ipe);
        e = lay_alloc(Lr, tot * Lr->ipe);
        for (int i = 0; i < size; i++) {
            rc_e[i] = cnt[i] / Lr->ipe;
            for (long j = 0; j < cnt[i]; j++)
                *lay_at(Lr, e, (long)dsp[i] * Lr->ipe + j) = val(i, root, j);
        }
        if (in_place)
            for (long j = 0; j < k; j++)
                *lay_at(Lr, r, (long)dsp[root] * Lr->ipe + j) = val(root, root, j);
    }
    const void *sb = (in_place && rank == root) ? MPI_IN_PLACE : s;
    if (large) {
        MPI_Count cc[64];
        MPI_Aint dd[64];
        for (int i = 0; i < size; i++) {
            cc[i] = rc_e[i];
            dd[i] = dsp[i];
        }
        MPI_CHECK(MPI_Gatherv_c(sb, elems(Ls, k), Ls->t, r, cc, dd, Lr->t, root, MPI_COMM_WORLD));
    } else {
        MPI_CHECK(MPI_Gatherv(sb, elems(Ls, k), Ls->t, r, rc_e, dsp, Lr->t, root, MPI_COMM_WORLD));
    }
    if (rank == root)
        compare(r, e, lay_mem(Lr, tot * Lr->ipe), in_place ? "Gatherv in place" : "Gatherv", Lr, base, root);
    free(s);
    free(r);
    free(e);
}

static void test_scatterv(const lay_t *Ls, const lay_t *Lr, long base, int root, int in_place, int large)
{
    int cnt[64], dsp[64], sc_e[64];
    long tot;
    v_layout(Ls, base, cnt, dsp, &tot);
    long k = cnt[rank];
    int *s = NULL, *r = lay_alloc(Lr, k), *e = lay_alloc(Lr, k);
    if (rank == root) {
        s = lay_alloc(Ls, tot * Ls->ipe);
        for (int i = 0; i < size; i++) {
            sc_e[i] = cnt[i] / Ls->ipe;
            for (long j = 0; j < cnt[i]; j++)
                *lay_at(Ls, s, (long)dsp[i] * Ls->ipe + j) = val(root, i, j);
        }
    }
    int ip = in_place && rank == root;
    for (long j = 0; j < k; j++)
        *lay_at(Lr, e, j) = ip ? SENT : val(root, rank, j);
    void *rb = ip ? MPI_IN_PLACE : r;
    if (large) {
        MPI_Count cc[64];
        MPI_Aint dd[64];
        for (int i = 0; i < size; i++) {
            cc[i] = sc_e[i];
            dd[i] = dsp[i];
        }
        MPI_CHECK(MPI_Scatterv_c(s, cc, dd, Ls->t, rb, elems(Lr, k), Lr->t, root, MPI_COMM_WORLD));
    } else {
        MPI_CHECK(MPI_Scatterv(s, sc_e, dsp, Ls->t, rb, elems(Lr, k), Lr->t, root, MPI_COMM_WORLD));
    }
    compare(r, e, lay_mem(Lr, k), ip ? "Scatterv in place" : "Scatterv", Lr, base, root);
    free(s);
    free(r);
    free(e);
}

/* ---- Allgather(v) ---- */
static void test_allgather(const lay_t *Ls, const lay_t *Lr, long k, int in_place, int large)
{
    int *s = lay_alloc(Ls, k), *r = lay_alloc(Lr, k * size), *e = lay_alloc(Lr, k * size);
    for (long j = 0; j < k; j++)
        *lay_at(Ls, s, j) = val(rank, 0, j);
    for (int i = 0; i < size; i++)
        for (long j = 0; j < k; j++)
            *lay_at(Lr, e, i * k + j) = val(i, 0, j);
    if (in_place)
        for (long j = 0; j < k; j++)
            *lay_at(Lr, r, rank * k + j) = val(rank, 0, j);
    const void *sb = in_place ? MPI_IN_PLACE : s;
    if (large)
        MPI_CHECK(MPI_Allgather_c(sb, elems(Ls, k), Ls->t, r, elems(Lr, k), Lr->t, MPI_COMM_WORLD));
    else
        MPI_CHECK(MPI_Allgather(sb, elems(Ls, k), Ls->t, r, elems(Lr, k), Lr->t, MPI_COMM_WORLD));
    compare(r, e, lay_mem(Lr, k * size), in_place ? "Allgather in place" : "Allgather", Lr, k, -1);
    free(s);
    free(r);
    free(e);
}

static void test_allgatherv(const lay_t *Ls, const lay_t *Lr, long base, int in_place, int large)
{
    int cnt[64], dsp[64], rc_e[64];
    long tot;
    v_layout(Lr, base, cnt, dsp, &tot);
    long k = cnt[rank];
    int *s = lay_alloc(Ls, k), *r = lay_alloc(Lr, tot * Lr->ipe), *e = lay_alloc(Lr, tot * Lr->ipe);
    for (long j = 0; j < k; j++)
        *lay_at(Ls, s, j) = val(rank, 0, j);
    for (int i = 0; i < size; i++) {
        rc_e[i] = cnt[i] / Lr->ipe;
        for (long j = 0; j < cnt[i]; j++)
            *lay_at(Lr, e, (long)dsp[i] * Lr->ipe + j) = val(i, 0, j);
    }
    if (in_place)
        for (long j = 0; j < k; j++)
            *lay_at(Lr, r, (long)dsp[rank] * Lr->ipe + j) = val(rank, 0, j);
    const void *sb = in_place ? MPI_IN_PLACE : s;
    if (large) {
        MPI_Count cc[64];
        MPI_Aint dd[64];
        for (int i = 0; i < size; i++) {
            cc[i] = rc_e[i];
            dd[i] = dsp[i];
        }
        MPI_CHECK(MPI_Allgatherv_c(sb, elems(Ls, k), Ls->t, r, cc, dd, Lr->t, MPI_COMM_WORLD));
    } else {
        MPI_CHECK(MPI_Allgatherv(sb, elems(Ls, k), Ls->t, r, rc_e, dsp, Lr->t, MPI_COMM_WORLD));
    }
    compare(r, e, lay_mem(Lr, tot * Lr->ipe), in_place ? "Allgatherv in place" : "Allgatherv", Lr, base, -1);
    free(s);
    free(r);
    free(e);
}

/* ---- Alltoall(v/w) ---- */
static void test_alltoall(const lay_t *Ls, const lay_t *Lr, long k, int in_place, int large)
{
    int *s = lay_alloc(Ls, k * size), *r = lay_alloc(Lr, k * size), *e = lay_alloc(Lr, k * size);
    for (int i = 0; i < size; i++)
        for (long j = 0; j < k; j++) {
            *lay_at(Ls, s, i * k + j) = val(rank, i, j);
            *lay_at(Lr, e, i * k + j) = val(i, rank, j);
            if (in_place)
                *lay_at(Lr, r, i * k + j) = val(rank, i, j);
        }
    const void *sb = in_place ? MPI_IN_PLACE : s;
    if (large)
        MPI_CHECK(MPI_Alltoall_c(sb, elems(Ls, k), Ls->t, r, elems(Lr, k), Lr->t, MPI_COMM_WORLD));
    else
        MPI_CHECK(MPI_Alltoall(sb, elems(Ls, k), Ls->t, r, elems(Lr, k), Lr->t, MPI_COMM_WORLD));
    compare(r, e, lay_mem(Lr, k * size), in_place ? "Alltoall in place" : "Alltoall", Lr, k, -1);
    free(s);
    free(r);
    free(e);
}

/* Alltoallv: the block from i to j has 2 * ((i + 2 j + base) % 4) logical ints (some empty);
 * blocks placed in reverse order with gaps. `w`: Alltoallw with the layout alternating per peer
 * (Ls for even peers, Lr for odd ones on both sides) and byte displacements. In place, what a
 * rank sends to i must be what it receives from i: the sizes are then symmetric. */
static int a2av_sym;
static long a2av_cnt(int from, int to, long base)
{
    return 2 * ((from + (a2av_sym ? 1 : 2) * to + base) % 4) + (base > 4 ? 2 * base : 0);
}

static void test_alltoallv(const lay_t *Ls, const lay_t *Lr, long base, int in_place, int w, int large)
{
    int sc[64], sd[64], rcn[64], rd[64];
    MPI_Datatype st[64], rt[64];
    const lay_t *sl[64], *rl[64];
    long spos = 0, rpos = 0; /* multiples of 4 ints (one VE element), so that any layout fits */
    a2av_sym = in_place;
    for (int i = size - 1; i >= 0; i--) {
        sl[i] = w ? ((i & 1) ? Lr : Ls) : Ls;
        rl[i] = w ? ((i & 1) ? Ls : Lr) : Lr;
        if (in_place)
            sl[i] = rl[i];
        long ks = a2av_cnt(rank, i, base), kr = a2av_cnt(i, rank, base);
        sc[i] = (int)(ks / sl[i]->ipe);
        rcn[i] = (int)(kr / rl[i]->ipe);
        st[i] = sl[i]->t;
        rt[i] = rl[i]->t;
        sd[i] = (int)spos;
        rd[i] = (int)rpos;
        spos += ks * 2 + 4;
        rpos += kr * 2 + 4;
    }
    /* buffers as raw ints; block i starts at int sd[i] (rd[i]) */
    int *s = mtest_malloc(((size_t)spos + 1) * sizeof(int)), *r = mtest_malloc(((size_t)rpos + 1) * sizeof(int));
    int *e = mtest_malloc(((size_t)rpos + 1) * sizeof(int));
    for (long m = 0; m <= spos; m++)
        s[m] = SENT;
    for (long m = 0; m <= rpos; m++)
        r[m] = e[m] = SENT;
    for (int i = 0; i < size; i++) {
        for (long j = 0; j < a2av_cnt(rank, i, base); j++)
            *lay_at(sl[i], s + sd[i], j) = val(rank, i, j);
        for (long j = 0; j < a2av_cnt(i, rank, base); j++) {
            *lay_at(rl[i], e + rd[i], j) = val(i, rank, j);
            if (in_place)
                *lay_at(rl[i], r + rd[i], j) = val(rank, i, j);
        }
    }
    /* displacements: elements of the (single) type for v, bytes for w */
    int sdisp[64], rdisp[64];
    for (int i = 0; i < size; i++) {
        sdisp[i] = w ? sd[i] * (int)sizeof(int) : sd[i] / sl[i]->stride;
        rdisp[i] = w ? rd[i] * (int)sizeof(int) : rd[i] / rl[i]->stride;
    }
    const void *sb = in_place ? MPI_IN_PLACE : s;
    const char *what =
        w ? (in_place ? "Alltoallw in place" : "Alltoallw") : (in_place ? "Alltoallv in place" : "Alltoallv");
    if (large) {
        MPI_Count scc[64], rcc[64];
        MPI_Aint sdd[64], rdd[64];
        for (int i = 0; i < size; i++) {
            scc[i] = sc[i];
            rcc[i] = rcn[i];
            sdd[i] = sdisp[i];
            rdd[i] = rdisp[i];
        }
        if (w)
            MPI_CHECK(MPI_Alltoallw_c(sb, scc, sdd, st, r, rcc, rdd, rt, MPI_COMM_WORLD));
        else
            MPI_CHECK(MPI_Alltoallv_c(sb, scc, sdd, Ls->t, r, rcc, rdd, Lr->t, MPI_COMM_WORLD));
    } else {
        if (w)
            MPI_CHECK(MPI_Alltoallw(sb, sc, sdisp, st, r, rcn, rdisp, rt, MPI_COMM_WORLD));
        else
            MPI_CHECK(MPI_Alltoallv(sb, sc, sdisp, in_place ? Lr->t : Ls->t, r, rcn, rdisp, Lr->t, MPI_COMM_WORLD));
    }
    compare(r, e, (size_t)rpos + 1, what, Lr, base, -1);
    free(s);
    free(r);
    free(e);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    quick = argc > 1 && strcmp(argv[1], "quick") == 0;
    CHECK(size <= 64, "at most 64 ranks");
    MPI_Datatype vec;
    MPI_CHECK(MPI_Type_vector(2, 1, 2, MPI_INT, &vec));
    MPI_CHECK(MPI_Type_create_resized(vec, 0, 4 * (MPI_Aint)sizeof(int), &VE.t));
    MPI_CHECK(MPI_Type_commit(&VE.t));
    MPI_CHECK(MPI_Type_free(&vec));

    const lay_t *L[2] = { &PL, &VE };
    /* logical ints per rank: small odd, small even, over the small-message switch points, and
     * (unless quick) over the large-message ones */
    const long plain[] = { 0, 1, 7, 301, 5000, 40000 };
    const long even[] = { 2, 64, 4000 };
    int nplain = quick ? 5 : 6;

    for (int root = 0; root < size; root++) {
        for (int i = 0; i < nplain; i++)
            test_bcast(&PL, plain[i], root);
        for (int a = 0; a < 2; a++)
            for (int i = 0; i < 3; i++)
                test_bcast(L[a], even[i], root);
    }
    for (int root = 0; root < size; root++) {
        for (int i = 0; i < nplain; i++) {
            int ip = (i + root) % 2;
            test_gather(&PL, &PL, plain[i], root, ip, i == 2);
            test_scatter(&PL, &PL, plain[i], root, !ip, i == 3);
        }
        for (int a = 0; a < 2; a++)
            for (int b = 0; b < 2; b++)
                for (int i = 0; i < 3; i++) {
                    test_gather(L[a], L[b], even[i], root, (i + a) % 2, 0);
                    test_scatter(L[a], L[b], even[i], root, (i + b) % 2, 0);
                    test_gatherv(L[a], L[b], i * 3 + a, root, (i + b) % 2, i == 1);
                    test_scatterv(L[a], L[b], i * 3 + b, root, (i + a) % 2, i == 2);
                }
    }
    for (int i = 0; i < nplain; i++) {
        test_allgather(&PL, &PL, plain[i], i % 2, i == 4);
        test_alltoall(&PL, &PL, plain[i] / 4, i % 2, i == 3);
    }
    for (int a = 0; a < 2; a++)
        for (int b = 0; b < 2; b++)
            for (int i = 0; i < 3; i++) {
                test_allgather(L[a], L[b], even[i], (i + a + b) % 2, 0);
                test_allgatherv(L[a], L[b], i * 3 + b, i % 2, i == 2);
                test_alltoall(L[a], L[b], even[i], (i + a) % 2, i == 1);
                for (int ip = 0; ip < 2; ip++) {
                    if (ip && a != b)
                        continue;
                    test_alltoallv(L[a], L[b], i * 3 + a, ip, 0, (i + ip) % 2);
                    test_alltoallv(L[a], L[b], i * 3 + b, ip, 1, i % 2);
                }
            }
    /* large v-variant blocks */
    test_allgatherv(&PL, &PL, quick ? 300 : 3000, 0, 0);
    test_alltoallv(&PL, &PL, quick ? 300 : 3000, 0, 0, 0);
    test_gatherv(&PL, &PL, quick ? 300 : 3000, size - 1, 0, 0);

    MPI_CHECK(MPI_Type_free(&VE.t));
    return mtest_finalize();
}
