/* Aliased send and receive buffers (without MPI_IN_PLACE) in every collective that has both,
 * under MPI_ERRORS_RETURN: MPI_ERR_BUFFER wherever the caller's own arguments overlap -- the
 * same pointer, a partial overlap, a send buffer that is the caller's own block of the receive
 * buffer -- and no error for buffers that only come close (adjacent ranges, one base array with
 * disjoint displacements, interleaved datatypes). A rooted operation whose root alone has the
 * aliased arguments fails at the root before anything moves: the root may call alone (the others
 * skip the call), or everybody calls and the root calls again with correct arguments, which
 * completes what the others started (MPICH's errors/coll/noalias tests do both; with large
 * messages the others really wait for the root). MTEST_NBC runs the nonblocking and persistent
 * forms. (For a reference run: MTEST_KNOWN_BUGS=alias_partial,nbr_alias_check,predef_op_derived
 * skips what MPICH 4.0 does not check -- overlaps other than equal pointers and own blocks, the
 * neighborhood collectives -- and what it does not take, predefined ops on derived types.) */
#include "mtest.h"
#include "nbc_wrap.h"

static int rank, size;

#define EXPECT_ALIAS(call) CHECK_ERRCLASS((call), MPI_ERR_BUFFER, #call)
#define MAXP               64
#define BIG                16384 /* ints per rank in the large rooted operations: a rendezvous */

static void still_works(const char *after)
{
    int v = rank + 1, s = 0;
    MPI_CHECK(MPI_Allreduce(&v, &s, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(s == size * (size + 1) / 2, "Allreduce after %s gave %d", after, s);
    int b = rank == 0 ? 42 : 0;
    MPI_CHECK(MPI_Bcast(&b, 1, MPI_INT, 0, MPI_COMM_WORLD));
    CHECK(b == 42, "Bcast after %s gave %d", after, b);
}

static void fill(int *a, int n, int base)
{
    for (int i = 0; i < n; i++)
        a[i] = base + i;
}

/* ---- errors every rank sees (each passes aliased arguments of its own) ---- */
static void everybody(void)
{
    /* rcnt: a copy of cnt for the legal calls on one array (MPICH 4.0 refuses one buffer with the
     * same counts array on both sides, whatever the displacements) */
    static int a[16 * MAXP], cnt[MAXP], rcnt[MAXP], dsp[MAXP], rdsp[MAXP];
    MPI_Datatype types[MAXP];
    int partial = !mtest_known_bug("alias_partial");
    for (int i = 0; i < size; i++) {
        cnt[i] = rcnt[i] = 1;
        dsp[i] = i;
        rdsp[i] = size + i;
        types[i] = MPI_INT;
    }
    fill(a, 16 * MAXP, 0);

    /* reductions: the same buffer, overlaps by one int either way, and adjacent ranges (legal) */
    EXPECT_ALIAS(MPI_Allreduce(a, a, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    if (partial) {
        EXPECT_ALIAS(MPI_Allreduce(a, a + 3, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        EXPECT_ALIAS(MPI_Allreduce(a + 3, a, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        EXPECT_ALIAS(MPI_Scan(a, a + 1, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        EXPECT_ALIAS(MPI_Exscan(a + 2, a, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        EXPECT_ALIAS(MPI_Reduce_local(a, a + 1, 4, MPI_INT, MPI_SUM));
    }
    EXPECT_ALIAS(MPI_Scan(a, a, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    EXPECT_ALIAS(MPI_Exscan(a, a, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    EXPECT_ALIAS(MPI_Reduce_local(a, a, 4, MPI_INT, MPI_SUM));
    fill(a, 8, 10 * rank);
    MPI_CHECK(MPI_Allreduce(a, a + 4, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    for (int i = 0; i < 4; i++)
        CHECK(a[4 + i] == 10 * size * (size - 1) / 2 + size * i, "Allreduce into the adjacent range: [%d] = %d", i,
              a[4 + i]);
    fill(a, 8, 10 * rank);
    MPI_CHECK(MPI_Allreduce(a + 4, a, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    for (int i = 0; i < 4; i++)
        CHECK(a[i] == 10 * size * (size - 1) / 2 + size * (4 + i), "Allreduce from the range after: [%d] = %d", i,
              a[i]);
    fill(a, 8, 1);
    MPI_CHECK(MPI_Reduce_local(a, a + 4, 4, MPI_INT, MPI_SUM));
    CHECK(a[4] == 1 + 5 && a[7] == 4 + 8, "Reduce_local into the adjacent range");
    /* no data: nothing overlaps */
    MPI_CHECK(MPI_Allreduce(a, a, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD));

    /* Reduce_scatter(_block): the send vector (2 * size ints) against my block */
    EXPECT_ALIAS(MPI_Reduce_scatter_block(a, a, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    if (partial)
        EXPECT_ALIAS(MPI_Reduce_scatter_block(a, a + 2 * size - 1, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    EXPECT_ALIAS(MPI_Reduce_scatter(a, a, cnt, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    fill(a, 3 * size, 100 * rank);
    MPI_CHECK(MPI_Reduce_scatter_block(a, a + 2 * size, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(a[2 * size] == 100 * size * (size - 1) / 2 + size * rank, "Reduce_scatter_block into the adjacent range: %d",
          a[2 * size]);

    /* Allgather(v): my own block of the receive buffer as the send buffer, another rank's block,
     * and the range right after the receive buffer (legal) */
    EXPECT_ALIAS(MPI_Allgather(&a[rank], 1, MPI_INT, a, 1, MPI_INT, MPI_COMM_WORLD));
    if (partial)
        EXPECT_ALIAS(MPI_Allgather(&a[size - 1 - rank], 1, MPI_INT, a, 1, MPI_INT, MPI_COMM_WORLD));
    EXPECT_ALIAS(MPI_Allgatherv(&a[rank], 1, MPI_INT, a, cnt, dsp, MPI_INT, MPI_COMM_WORLD));
    fill(a, 2 * size + 1, 0);
    a[size] = 1000 + rank;
    MPI_CHECK(MPI_Allgather(&a[size], 1, MPI_INT, a, 1, MPI_INT, MPI_COMM_WORLD));
    for (int i = 0; i < size; i++)
        CHECK(a[i] == 1000 + i, "Allgather from the int after the receive buffer: [%d] = %d", i, a[i]);
    a[size] = 2000 + rank;
    MPI_CHECK(MPI_Allgatherv(&a[size], 1, MPI_INT, a, cnt, dsp, MPI_INT, MPI_COMM_WORLD));
    for (int i = 0; i < size; i++)
        CHECK(a[i] == 2000 + i, "Allgatherv from the int after the receive buffer: [%d] = %d", i, a[i]);

    /* Alltoall(v/w): one array for both, aliased; then its two halves (legal) */
    EXPECT_ALIAS(MPI_Alltoall(a, 1, MPI_INT, a, 1, MPI_INT, MPI_COMM_WORLD));
    EXPECT_ALIAS(MPI_Alltoallv(a, cnt, dsp, MPI_INT, a, cnt, dsp, MPI_INT, MPI_COMM_WORLD));
    {
        int bdsp[MAXP], rb[MAXP];
        for (int i = 0; i < size; i++)
            bdsp[i] = i * (int)sizeof(int);
        EXPECT_ALIAS(MPI_Alltoallw(a, cnt, bdsp, types, a, cnt, bdsp, types, MPI_COMM_WORLD));
        if (partial) { /* only the last block of each side meets */
            for (int i = 0; i < size; i++)
                rb[i] = (size - 1 + i) * (int)sizeof(int);
            EXPECT_ALIAS(MPI_Alltoallw(a, cnt, bdsp, types, a, cnt, rb, types, MPI_COMM_WORLD));
        }
        for (int i = 0; i < size; i++) {
            a[i] = 100 * rank + i;
            a[size + i] = -1;
            rb[i] = (size + i) * (int)sizeof(int);
        }
        MPI_CHECK(MPI_Alltoallw(a, cnt, bdsp, types, a, rcnt, rb, types, MPI_COMM_WORLD));
        for (int i = 0; i < size; i++)
            CHECK(a[size + i] == 100 * i + rank, "Alltoallw within one array: [%d] = %d", i, a[size + i]);
    }
    if (partial)
        EXPECT_ALIAS(MPI_Alltoall(a, 1, MPI_INT, a + size - 1, 1, MPI_INT, MPI_COMM_WORLD));
    for (int i = 0; i < size; i++) {
        a[i] = 100 * rank + i;
        a[size + i] = -1;
    }
    MPI_CHECK(MPI_Alltoall(a, 1, MPI_INT, a + size, 1, MPI_INT, MPI_COMM_WORLD));
    for (int i = 0; i < size; i++)
        CHECK(a[size + i] == 100 * i + rank, "Alltoall within one array: [%d] = %d", i, a[size + i]);
    for (int i = 0; i < size; i++) {
        a[i] = 300 * rank + i;
        a[size + i] = -1;
    }
    MPI_CHECK(MPI_Alltoallv(a, cnt, dsp, MPI_INT, a, rcnt, rdsp, MPI_INT, MPI_COMM_WORLD));
    for (int i = 0; i < size; i++)
        CHECK(a[size + i] == 300 * i + rank, "Alltoallv within one array: [%d] = %d", i, a[size + i]);
    { /* interleaved blocks: sent from the even ints, received into the odd ones */
        int ev[MAXP], od[MAXP];
        for (int i = 0; i < size; i++) {
            ev[i] = 2 * i;
            od[i] = 2 * i + 1;
            a[2 * i] = 500 * rank + i;
            a[2 * i + 1] = -1;
        }
        MPI_CHECK(MPI_Alltoallv(a, cnt, ev, MPI_INT, a, rcnt, od, MPI_INT, MPI_COMM_WORLD));
        for (int i = 0; i < size; i++)
            CHECK(a[2 * i + 1] == 500 * i + rank && a[2 * i] == 500 * rank + i,
                  "Alltoallv on interleaved blocks of one array: [%d] = %d", 2 * i + 1, a[2 * i + 1]);
        if (partial) /* one receive block on a send block */
            EXPECT_ALIAS(MPI_Alltoallv(a, cnt, ev, MPI_INT, a, rcnt, dsp, MPI_INT, MPI_COMM_WORLD));
    }

    /* datatypes with holes: interleaved buffers are fine, the same start is not */
    MPI_Datatype even;
    MPI_CHECK(MPI_Type_vector(4, 1, 2, MPI_INT, &even));
    MPI_CHECK(MPI_Type_commit(&even));
    EXPECT_ALIAS(MPI_Alltoall(a, 1, even, a, 1, even, MPI_COMM_WORLD));
    if (!mtest_known_bug("predef_op_derived")) { /* MPICH 4.0: no predefined op on derived types */
        EXPECT_ALIAS(MPI_Allreduce(a, a, 1, even, MPI_SUM, MPI_COMM_WORLD));
        fill(a, 8, rank);
        MPI_CHECK(MPI_Allreduce(a, a + 1, 1, even, MPI_SUM, MPI_COMM_WORLD));
        for (int i = 0; i < 4; i++) {
            CHECK(a[2 * i] == rank + 2 * i, "Allreduce on interleaved buffers changed the send data");
            CHECK(a[2 * i + 1] == size * (size - 1) / 2 + size * 2 * i, "Allreduce on interleaved buffers: [%d] = %d",
                  2 * i + 1, a[2 * i + 1]);
        }
    }
    MPI_CHECK(MPI_Type_free(&even));
}

/* ---- neighborhood collectives on a periodic ring ---- */
static void neighbors(void)
{
    if (mtest_known_bug("nbr_alias_check"))
        return;
    MPI_Comm ring;
    int dims[1] = { size }, periods[1] = { 1 };
    MPI_CHECK(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring));
    MPI_CHECK(MPI_Comm_set_errhandler(ring, MPI_ERRORS_RETURN));
    int a[8] = { 0 }, cnt[2] = { 1, 1 }, dsp[2] = { 0, 1 }, rdsp[2] = { 2, 3 };
    MPI_Aint bd[2] = { 0, sizeof(int) }, rbd[2] = { 2 * sizeof(int), 3 * sizeof(int) };
    MPI_Datatype t[2] = { MPI_INT, MPI_INT };
    EXPECT_ALIAS(MPI_Neighbor_allgather(a, 1, MPI_INT, a, 1, MPI_INT, ring));
    EXPECT_ALIAS(MPI_Neighbor_allgather(a + 1, 1, MPI_INT, a, 1, MPI_INT, ring));
    EXPECT_ALIAS(MPI_Neighbor_alltoall(a, 1, MPI_INT, a, 1, MPI_INT, ring));
    EXPECT_ALIAS(MPI_Neighbor_allgatherv(a, 1, MPI_INT, a, cnt, dsp, MPI_INT, ring));
    EXPECT_ALIAS(MPI_Neighbor_alltoallv(a, cnt, dsp, MPI_INT, a, cnt, dsp, MPI_INT, ring));
    EXPECT_ALIAS(MPI_Neighbor_alltoallw(a, cnt, bd, t, a, cnt, bd, t, ring));
    /* one array, disjoint ranges: legal (the values checked where the two neighbours differ) */
    int left = (rank - 1 + size) % size, right = (rank + 1) % size;
    a[0] = 10 * rank;
    a[1] = 10 * rank + 1;
    MPI_CHECK(MPI_Neighbor_alltoall(a, 1, MPI_INT, a + 2, 1, MPI_INT, ring));
    if (size >= 3)
        CHECK(a[2] == 10 * left + 1 && a[3] == 10 * right, "Neighbor_alltoall within one array: %d %d", a[2], a[3]);
    a[2] = a[3] = -1;
    MPI_CHECK(MPI_Neighbor_alltoallv(a, cnt, dsp, MPI_INT, a, cnt, rdsp, MPI_INT, ring));
    if (size >= 3)
        CHECK(a[2] == 10 * left + 1 && a[3] == 10 * right, "Neighbor_alltoallv within one array: %d %d", a[2], a[3]);
    a[2] = a[3] = -1;
    MPI_CHECK(MPI_Neighbor_alltoallw(a, cnt, bd, t, a, cnt, rbd, t, ring));
    if (size >= 3)
        CHECK(a[2] == 10 * left + 1 && a[3] == 10 * right, "Neighbor_alltoallw within one array: %d %d", a[2], a[3]);
    a[2] = a[3] = -1;
    MPI_CHECK(MPI_Neighbor_allgather(a, 1, MPI_INT, a + 2, 1, MPI_INT, ring));
    if (size >= 3)
        CHECK(a[2] == 10 * left && a[3] == 10 * right, "Neighbor_allgather within one array: %d %d", a[2], a[3]);
    MPI_CHECK(MPI_Comm_free(&ring));
}

/* ---- the root alone has the aliased arguments ---- */
static void root_alone(int root)
{
    static int a[4 * MAXP], cnt[MAXP], dsp[MAXP];
    for (int i = 0; i < size; i++) {
        cnt[i] = 2;
        dsp[i] = 2 * i;
    }
    /* the root calls alone: nobody else is involved, so it must return at once */
    if (rank == root) {
        EXPECT_ALIAS(MPI_Gather(a, 2, MPI_INT, a, 2, MPI_INT, root, MPI_COMM_WORLD));
        EXPECT_ALIAS(MPI_Gather(&a[2 * root], 2, MPI_INT, a, 2, MPI_INT, root, MPI_COMM_WORLD));
        EXPECT_ALIAS(MPI_Gatherv(a, 2, MPI_INT, a, cnt, dsp, MPI_INT, root, MPI_COMM_WORLD));
        EXPECT_ALIAS(MPI_Scatter(a, 2, MPI_INT, a, 2, MPI_INT, root, MPI_COMM_WORLD));
        EXPECT_ALIAS(MPI_Scatterv(a, cnt, dsp, MPI_INT, &a[2 * root], 2, MPI_INT, root, MPI_COMM_WORLD));
        EXPECT_ALIAS(MPI_Reduce(a, a, 2, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD));
        if (!mtest_known_bug("alias_partial")) {
            EXPECT_ALIAS(MPI_Gather(&a[1], 2, MPI_INT, a, 2, MPI_INT, root, MPI_COMM_WORLD));
            EXPECT_ALIAS(MPI_Reduce(a, a + 1, 2, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD));
        }
    }
    still_works("aliased arguments at the root alone");

    /* everybody calls; the root fails, then calls again correctly, which completes the others'
     * call -- with messages large enough that the others wait for the root's receive */
    int *s = mtest_malloc(sizeof(int) * BIG * (size_t)(size + 1)), *r = mtest_malloc(sizeof(int) * BIG * (size_t)size);
    int big_cnt[MAXP], big_dsp[MAXP];
    for (int i = 0; i < size; i++) {
        big_cnt[i] = BIG;
        big_dsp[i] = BIG * i;
    }
    for (int i = 0; i < BIG; i++)
        s[i] = rank * BIG + i;
    int rc = MPI_Gather(s, BIG, MPI_INT, rank == root ? s : NULL, BIG, MPI_INT, root, MPI_COMM_WORLD);
    if (rank == root) {
        CHECK_ERRCLASS(rc, MPI_ERR_BUFFER, "MPI_Gather with the root's buffers aliased");
        MPI_CHECK(MPI_Gather(s, BIG, MPI_INT, r, BIG, MPI_INT, root, MPI_COMM_WORLD));
        for (int i = 0; i < BIG * size; i++)
            CHECK(r[i] == i, "Gather after the root's error: [%d] = %d", i, r[i]);
    } else {
        MPI_CHECK(rc);
    }
    rc = MPI_Gatherv(s, BIG, MPI_INT, rank == root ? s : NULL, big_cnt, big_dsp, MPI_INT, root, MPI_COMM_WORLD);
    if (rank == root) {
        CHECK_ERRCLASS(rc, MPI_ERR_BUFFER, "MPI_Gatherv with the root's buffers aliased");
        memset(r, 0, sizeof(int) * BIG * (size_t)size);
        MPI_CHECK(MPI_Gatherv(s, BIG, MPI_INT, r, big_cnt, big_dsp, MPI_INT, root, MPI_COMM_WORLD));
        for (int i = 0; i < BIG * size; i++)
            CHECK(r[i] == i, "Gatherv after the root's error: [%d] = %d", i, r[i]);
    } else {
        MPI_CHECK(rc);
    }
    if (rank == root)
        for (int i = 0; i < BIG * size; i++)
            s[i] = 7 * i;
    memset(r, 0, sizeof(int) * BIG);
    rc = MPI_Scatter(s, BIG, MPI_INT, rank == root ? s : r, BIG, MPI_INT, root, MPI_COMM_WORLD);
    if (rank == root) {
        CHECK_ERRCLASS(rc, MPI_ERR_BUFFER, "MPI_Scatter with the root's buffers aliased");
        MPI_CHECK(MPI_Scatter(s, BIG, MPI_INT, r, BIG, MPI_INT, root, MPI_COMM_WORLD));
    } else {
        MPI_CHECK(rc);
    }
    for (int i = 0; i < BIG; i++)
        CHECK(r[i] == 7 * (rank * BIG + i), "Scatter after the root's error: [%d] = %d", i, r[i]);
    memset(r, 0, sizeof(int) * BIG);
    rc = MPI_Scatterv(s, big_cnt, big_dsp, MPI_INT, rank == root ? s + BIG * root : r, BIG, MPI_INT, root,
                      MPI_COMM_WORLD);
    if (rank == root) {
        CHECK_ERRCLASS(rc, MPI_ERR_BUFFER, "MPI_Scatterv with the root's buffers aliased");
        MPI_CHECK(MPI_Scatterv(s, big_cnt, big_dsp, MPI_INT, r, BIG, MPI_INT, root, MPI_COMM_WORLD));
    } else {
        MPI_CHECK(rc);
    }
    for (int i = 0; i < BIG; i++)
        CHECK(r[i] == 7 * (rank * BIG + i), "Scatterv after the root's error: [%d] = %d", i, r[i]);
    for (int i = 0; i < BIG; i++)
        s[i] = rank + i;
    rc = MPI_Reduce(s, rank == root ? s : NULL, BIG, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD);
    if (rank == root) {
        CHECK_ERRCLASS(rc, MPI_ERR_BUFFER, "MPI_Reduce with the root's buffers aliased");
        MPI_CHECK(MPI_Reduce(s, r, BIG, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD));
        for (int i = 0; i < BIG; i++)
            CHECK(r[i] == size * (size - 1) / 2 + size * i, "Reduce after the root's error: [%d] = %d", i, r[i]);
    } else {
        MPI_CHECK(rc);
    }
    free(s);
    free(r);
    still_works("the root's second call");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size > MAXP)
        FAILF("at most %d ranks", MAXP);
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));

    everybody();
    still_works("aliased arguments at every rank");
    neighbors();
    still_works("aliased neighborhood collectives");
    root_alone(0);
    if (!mtest_known_bug("alias_partial")) /* MPICH compares with the root's own block only */
        root_alone(size - 1);

    /* MPI_IN_PLACE where it is allowed still works */
    int v[MAXP];
    for (int i = 0; i < size; i++)
        v[i] = i == rank ? 5 * rank : -1;
    MPI_CHECK(MPI_Allgather(MPI_IN_PLACE, 1, MPI_INT, v, 1, MPI_INT, MPI_COMM_WORLD));
    for (int i = 0; i < size; i++)
        CHECK(v[i] == 5 * i, "Allgather in place: [%d] = %d", i, v[i]);
    return mtest_finalize();
}
