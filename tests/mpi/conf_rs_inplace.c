/* MPI_Reduce_scatter and MPI_Reduce_scatter_block write only the caller's block of the receive
 * buffer. In place, the receive buffer holds the whole input vector and the result goes to its
 * start: the input beyond the caller's block, and anything past the vector, stay as they were
 * (the reduction works in its own space, not in the user's buffer). Checked with canary values:
 *  - intracommunicator, in place and not, block and vector forms, counts 0..3 per rank;
 *  - a contiguous type (MPI_INT, MPI_SUM and MPI_MAX) and a non-contiguous one (a vector with a
 *    hole: the hole must stay untouched too) with user-defined commutative sum and max;
 *  - intercommunicator (two halves of MPI_COMM_WORLD), block and vector forms.
 * Run with the algorithm forced (APTUS_COLL_REDUCE_SCATTER_ALG) as well. */
#include "mtest.h"
#include "nbc_wrap.h"

#define CANARY (-7777)
#define HOLE   (-5)
#define EXTRA  5 /* canary elements past the end */

static int rank, size;

/* A layout: one element is `ext` ints of which `npos` (at pos[]) carry data. */
struct lay {
    MPI_Datatype t;
    int ext, npos, pos[2];
    const char *name;
};

/* User sum and max of the vector layout: ints 0 and 2 of every 3. */
static void vec_sum(void *in, void *inout, int *len, MPI_Datatype *t)
{
    (void)t;
    const int *a = in;
    int *b = inout;
    for (int i = 0; i < *len; i++) {
        b[3 * i] += a[3 * i];
        b[3 * i + 2] += a[3 * i + 2];
    }
}

static void vec_max(void *in, void *inout, int *len, MPI_Datatype *t)
{
    (void)t;
    const int *a = in;
    int *b = inout;
    for (int i = 0; i < *len; i++) {
        if (a[3 * i] > b[3 * i])
            b[3 * i] = a[3 * i];
        if (a[3 * i + 2] > b[3 * i + 2])
            b[3 * i + 2] = a[3 * i + 2];
    }
}

static MPI_Op user_sum, user_max;

/* The op to use: the predefined one on MPI_INT, the user one on the vector. */
static MPI_Op op_for(const struct lay *L, MPI_Op op)
{
    if (L->t == MPI_INT)
        return op;
    return op == MPI_SUM ? user_sum : user_max;
}

/* Input value at element e, data int q, from world rank w. */
static int val(int w, int e, int q)
{
    return w * 1000 + e * 10 + q;
}

/* The result for a group of world ranks ws[0..n) (SUM or MAX). */
static int want(const int *ws, int n, MPI_Op op, int e, int q)
{
    int s = 0, m = val(ws[0], e, q);
    for (int i = 0; i < n; i++) {
        s += val(ws[i], e, q);
        if (val(ws[i], e, q) > m)
            m = val(ws[i], e, q);
    }
    return op == MPI_SUM ? s : m;
}

/* buf: nelem elements of layout L filled with my input; holes HOLE; EXTRA canaries after. */
static int *make_input(const struct lay *L, int nelem, int me)
{
    int *b = mtest_malloc(sizeof(int) * (size_t)(nelem * L->ext + EXTRA));
    for (int i = 0; i < nelem * L->ext + EXTRA; i++)
        b[i] = i < nelem * L->ext ? HOLE : CANARY;
    for (int e = 0; e < nelem; e++)
        for (int q = 0; q < L->npos; q++)
            b[e * L->ext + L->pos[q]] = val(me, e, q);
    return b;
}

static int *make_output(const struct lay *L, int nelem)
{
    int *b = mtest_malloc(sizeof(int) * (size_t)(nelem * L->ext + EXTRA));
    for (int i = 0; i < nelem * L->ext + EXTRA; i++)
        b[i] = i < nelem * L->ext ? HOLE : CANARY;
    return b;
}

/* My block (elements first..first+cnt of the vector) must be at the start of r; the holes in it
 * untouched; then, in place, the rest of my input as it was; then the canaries. */
static void verify(const int *r, const struct lay *L, int first, int cnt, int in_place, int total, const int *grp,
                   int ngrp, MPI_Op op, const char *what)
{
    int len = (in_place ? total : cnt) * L->ext;
    for (int i = 0; i < len + EXTRA; i++) {
        int w;
        if (i >= len) {
            w = CANARY;
        } else {
            int e = i / L->ext, off = i % L->ext, q = -1;
            for (int k = 0; k < L->npos; k++)
                if (L->pos[k] == off)
                    q = k;
            if (q < 0)
                w = HOLE;
            else if (e < cnt)
                w = want(grp, ngrp, op, first + e, q);
            else
                w = val(rank, e, q); /* in place, past my block: my input */
        }
        CHECK(r[i] == w, "%s: int %d of the receive buffer is %d, want %d (block of %d at %d, %s)", what, i, r[i], w,
              cnt, first,
              i >= len            ? "past the buffer"
              : i >= cnt * L->ext ? "past my block"
                                  : "my block");
    }
}

static void intra(const struct lay *L, MPI_Op op, int block_form, int k, int in_place)
{
    int *counts = mtest_malloc(sizeof(int) * (size_t)size), total = 0, first = 0;
    for (int i = 0; i < size; i++) {
        counts[i] = block_form ? k : (i + k) % 4;
        if (i < rank)
            first += counts[i];
        total += counts[i];
    }
    int *grp = mtest_malloc(sizeof(int) * (size_t)size);
    for (int i = 0; i < size; i++)
        grp[i] = i;
    char what[160];
    snprintf(what, sizeof what, "%s %s, %s, %s, k=%d", block_form ? "Reduce_scatter_block" : "Reduce_scatter",
             in_place ? "in place" : "", L->name, op == MPI_SUM ? "MPI_SUM" : "MPI_MAX", k);
    int *s = make_input(L, total, rank), *r;
    if (in_place) {
        r = s;
        if (block_form)
            MPI_CHECK(MPI_Reduce_scatter_block(MPI_IN_PLACE, r, k, L->t, op_for(L, op), MPI_COMM_WORLD));
        else
            MPI_CHECK(MPI_Reduce_scatter(MPI_IN_PLACE, r, counts, L->t, op_for(L, op), MPI_COMM_WORLD));
    } else {
        r = make_output(L, counts[rank]);
        if (block_form)
            MPI_CHECK(MPI_Reduce_scatter_block(s, r, k, L->t, op_for(L, op), MPI_COMM_WORLD));
        else
            MPI_CHECK(MPI_Reduce_scatter(s, r, counts, L->t, op_for(L, op), MPI_COMM_WORLD));
    }
    verify(r, L, first, counts[rank], in_place, total, grp, size, op, what);
    if (r != s)
        free(r);
    free(s);
    free(counts);
    free(grp);
}

/* Two halves: world ranks [0, h) and [h, size). Every vector has a*b elements (a, b the sizes),
 * so that the sums of the counts agree: each rank of a group of g gets (a*b)/g. */
static void inter(const struct lay *L, MPI_Op op, int block_form)
{
    int h = size / 2, low = rank < h;
    MPI_Comm local, ic;
    MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, low, rank, &local));
    MPI_CHECK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, low ? h : 0, 77, &ic));
    int lsize, rsize, lrank;
    MPI_CHECK(MPI_Comm_size(ic, &lsize));
    MPI_CHECK(MPI_Comm_remote_size(ic, &rsize));
    MPI_CHECK(MPI_Comm_rank(ic, &lrank));
    if (block_form && lsize != rsize) {
        /* the block form needs the same count everywhere: equal groups only */
        MPI_CHECK(MPI_Comm_free(&ic));
        MPI_CHECK(MPI_Comm_free(&local));
        return;
    }
    int total = lsize * rsize;
    int *counts = mtest_malloc(sizeof(int) * (size_t)lsize);
    for (int i = 0; i < lsize; i++)
        counts[i] = rsize; /* lsize blocks of rsize: total = lsize*rsize */
    int first = lrank * rsize;
    int *grp = mtest_malloc(sizeof(int) * (size_t)rsize);
    for (int i = 0; i < rsize; i++)
        grp[i] = low ? h + i : i;
    char what[160];
    snprintf(what, sizeof what, "intercommunicator %s, %s, %s", block_form ? "Reduce_scatter_block" : "Reduce_scatter",
             L->name, op == MPI_SUM ? "MPI_SUM" : "MPI_MAX");
    int *s = make_input(L, total, rank), *r = make_output(L, counts[lrank]);
    if (block_form)
        MPI_CHECK(MPI_Reduce_scatter_block(s, r, rsize, L->t, op_for(L, op), ic));
    else
        MPI_CHECK(MPI_Reduce_scatter(s, r, counts, L->t, op_for(L, op), ic));
    verify(r, L, first, counts[lrank], 0, total, grp, rsize, op, what);
    free(s);
    free(r);
    free(counts);
    free(grp);
    MPI_CHECK(MPI_Comm_free(&ic));
    MPI_CHECK(MPI_Comm_free(&local));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    struct lay lays[2] = { { MPI_INT, 1, 1, { 0, 0 }, "MPI_INT" },
                           { MPI_DATATYPE_NULL, 3, 2, { 0, 2 }, "vector(2,1,2) (a hole)" } };
    MPI_CHECK(MPI_Type_vector(2, 1, 2, MPI_INT, &lays[1].t));
    MPI_CHECK(MPI_Type_commit(&lays[1].t));
    MPI_Op ops[2] = { MPI_SUM, MPI_MAX };
    MPI_CHECK(MPI_Op_create(vec_sum, 1, &user_sum));
    MPI_CHECK(MPI_Op_create(vec_max, 1, &user_max));

    for (int l = 0; l < 2; l++)
        for (int o = 0; o < 2; o++)
            for (int form = 0; form < 2; form++)
                for (int k = 0; k < 4; k++)
                    for (int ip = 0; ip < 2; ip++)
                        intra(&lays[l], ops[o], form, k, ip);
    if (size >= 2)
        for (int l = 0; l < 2; l++)
            for (int o = 0; o < 2; o++)
                for (int form = 0; form < 2; form++)
                    inter(&lays[l], ops[o], form);

    MPI_CHECK(MPI_Type_free(&lays[1].t));
    MPI_CHECK(MPI_Op_free(&user_sum));
    MPI_CHECK(MPI_Op_free(&user_max));
    return mtest_finalize();
}
