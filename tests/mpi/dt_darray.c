/* MPI_Type_create_darray against a serial reference distribution: for every rank of the
 * process grid, the elements the darray type selects (in type-map order) must be exactly the
 * ones the distribution gives that rank; the pieces of all ranks, packed where they live and
 * gathered on rank 0, must rebuild the global array. Block, cyclic(k), none, default and
 * explicit distribution arguments, C and Fortran order, 1 to 3 dimensions. */
#include "mtest.h"

#define MAXD 3

struct dcase {
    const char *name;
    int ndims;
    int gsizes[MAXD], distribs[MAXD], dargs[MAXD], psizes[MAXD];
    int order;
};

/* Does process coordinate c (of p) own index i of a dimension of g elements? */
static int owns(int i, int g, int distrib, int darg, int p, int c)
{
    if (distrib == MPI_DISTRIBUTE_NONE)
        return 1;
    if (distrib == MPI_DISTRIBUTE_BLOCK) {
        int b = darg == MPI_DISTRIBUTE_DFLT_DARG ? (g + p - 1) / p : darg;
        return i / b == c;
    }
    int b = darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg;
    return (i / b) % p == c;
}

/* Linear indices (in memory order of the given array order) of the elements of `rank`, in
 * type-map order. Returns how many. */
static int reference(const struct dcase *t, int rank, int *out)
{
    int coord[MAXD], r = rank;
    for (int d = t->ndims - 1; d >= 0; d--) { /* process grid is row-major */
        coord[d] = r % t->psizes[d];
        r /= t->psizes[d];
    }
    int n = 0, idx[MAXD] = { 0 }, total = 1;
    for (int d = 0; d < t->ndims; d++)
        total *= t->gsizes[d];
    for (int k = 0; k < total; k++) {
        /* idx runs through all elements with the fastest dimension fastest */
        int rem = k;
        if (t->order == MPI_ORDER_C)
            for (int d = t->ndims - 1; d >= 0; d--) {
                idx[d] = rem % t->gsizes[d];
                rem /= t->gsizes[d];
            }
        else
            for (int d = 0; d < t->ndims; d++) {
                idx[d] = rem % t->gsizes[d];
                rem /= t->gsizes[d];
            }
        int mine = 1;
        for (int d = 0; d < t->ndims; d++)
            mine &= owns(idx[d], t->gsizes[d], t->distribs[d], t->dargs[d], t->psizes[d], coord[d]);
        if (mine)
            out[n++] = k; /* k is the linear memory index */
    }
    return n;
}

static void run_case(const struct dcase *t, int rank, int size)
{
    int total = 1;
    for (int d = 0; d < t->ndims; d++)
        total *= t->gsizes[d];
    int *global = mtest_malloc((size_t)total * sizeof(int));
    int *ref = mtest_malloc((size_t)total * sizeof(int));
    int *packed = mtest_malloc((size_t)total * sizeof(int) + 1);
    int *seen = calloc((size_t)total, sizeof(int));
    for (int i = 0; i < total; i++)
        global[i] = 1000 + i;

    /* every rank of the grid, computed locally */
    for (int r = 0; r < size; r++) {
        MPI_Datatype dt;
        MPI_CHECK(MPI_Type_create_darray(size, r, t->ndims, t->gsizes, t->distribs, t->dargs, t->psizes, t->order,
                                         MPI_INT, &dt));
        MPI_CHECK(MPI_Type_commit(&dt));
        int n = reference(t, r, ref), tsize;
        MPI_Aint lb, ext;
        MPI_CHECK(MPI_Type_size(dt, &tsize));
        MPI_CHECK(MPI_Type_get_extent(dt, &lb, &ext));
        CHECK(tsize == n * (int)sizeof(int), "%s rank %d: size %d, expected %d elements", t->name, r, tsize, n);
        CHECK(lb == 0 && ext == total * (MPI_Aint)sizeof(int), "%s rank %d: lb %ld extent %ld", t->name, r, (long)lb,
              (long)ext);
        int pos = 0;
        MPI_CHECK(MPI_Pack(global, 1, dt, packed, total * (int)sizeof(int) + 1, &pos, MPI_COMM_SELF));
        CHECK(pos == tsize, "%s rank %d: packed %d bytes", t->name, r, pos);
        for (int i = 0; i < n; i++) {
            CHECK(packed[i] == global[ref[i]], "%s rank %d: element %d is %d, expected %d", t->name, r, i, packed[i],
                  global[ref[i]]);
            seen[ref[i]]++;
        }
        MPI_CHECK(MPI_Type_free(&dt));
    }
    for (int i = 0; i < total; i++)
        CHECK(seen[i] == 1, "%s: element %d owned by %d ranks", t->name, i, seen[i]);

    /* distributed: each rank packs its part; rank 0 unpacks all parts into a fresh array */
    MPI_Datatype mine;
    MPI_CHECK(MPI_Type_create_darray(size, rank, t->ndims, t->gsizes, t->distribs, t->dargs, t->psizes, t->order,
                                     MPI_INT, &mine));
    MPI_CHECK(MPI_Type_commit(&mine));
    int pos = 0;
    MPI_CHECK(MPI_Pack(global, 1, mine, packed, total * (int)sizeof(int) + 1, &pos, MPI_COMM_WORLD));
    if (rank != 0)
        MPI_CHECK(MPI_Send(packed, pos, MPI_PACKED, 0, 7, MPI_COMM_WORLD));
    else {
        int *rebuilt = mtest_malloc((size_t)total * sizeof(int));
        for (int i = 0; i < total; i++)
            rebuilt[i] = -1;
        for (int r = 0; r < size; r++) {
            int len = pos;
            if (r != 0) {
                MPI_Status st;
                MPI_CHECK(MPI_Recv(ref, total * (int)sizeof(int), MPI_PACKED, r, 7, MPI_COMM_WORLD, &st));
                MPI_CHECK(MPI_Get_count(&st, MPI_PACKED, &len));
            } else
                memcpy(ref, packed, (size_t)pos);
            MPI_Datatype theirs;
            MPI_CHECK(MPI_Type_create_darray(size, r, t->ndims, t->gsizes, t->distribs, t->dargs, t->psizes, t->order,
                                             MPI_INT, &theirs));
            MPI_CHECK(MPI_Type_commit(&theirs));
            int upos = 0;
            MPI_CHECK(MPI_Unpack(ref, len, &upos, rebuilt, 1, theirs, MPI_COMM_WORLD));
            CHECK(upos == len, "%s: unpacked %d of %d bytes from rank %d", t->name, upos, len, r);
            MPI_CHECK(MPI_Type_free(&theirs));
        }
        for (int i = 0; i < total; i++)
            CHECK(rebuilt[i] == global[i], "%s: rebuilt element %d is %d", t->name, i, rebuilt[i]);
        free(rebuilt);
    }
    MPI_CHECK(MPI_Type_free(&mine));
    free(global);
    free(ref);
    free(packed);
    free(seen);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* a 2-d process grid: 4 = 2 x 2, otherwise size x 1 */
    int p0 = size == 4 ? 2 : size, p1 = size == 4 ? 2 : 1;
    const int B = MPI_DISTRIBUTE_BLOCK, C = MPI_DISTRIBUTE_CYCLIC, N = MPI_DISTRIBUTE_NONE,
              D = MPI_DISTRIBUTE_DFLT_DARG;
    struct dcase cases[] = {
        { "1d block", 1, { 10 }, { B }, { D }, { size }, MPI_ORDER_C },
        { "1d cyclic", 1, { 11 }, { C }, { D }, { size }, MPI_ORDER_C },
        { "1d cyclic(3)", 1, { 17 }, { C }, { 3 }, { size }, MPI_ORDER_FORTRAN },
        { "1d block(4), some ranks empty", 1, { 4 * size - 2 }, { B }, { 4 }, { size }, MPI_ORDER_C },
        { "2d block x cyclic(2) C", 2, { 7, 5 }, { B, C }, { D, 2 }, { p0, p1 }, MPI_ORDER_C },
        { "2d block x cyclic(2) Fortran", 2, { 7, 5 }, { B, C }, { D, 2 }, { p0, p1 }, MPI_ORDER_FORTRAN },
        { "2d cyclic x block C", 2, { 6, 9 }, { C, B }, { D, D }, { p1, p0 }, MPI_ORDER_C },
        { "3d none x block x cyclic C", 3, { 2, 6, 5 }, { N, B, C }, { D, D, D }, { 1, p0, p1 }, MPI_ORDER_C },
        { "3d cyclic(2) x none x block Fortran",
          3,
          { 5, 3, 7 },
          { C, N, B },
          { 2, D, D },
          { p0, 1, p1 },
          MPI_ORDER_FORTRAN },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        run_case(&cases[i], rank, size);
    return mtest_finalize();
}
