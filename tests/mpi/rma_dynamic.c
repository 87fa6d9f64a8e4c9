/* Dynamic windows (MPI_Win_create_dynamic) under the traffic that reaches a target on another node
 * by RDMA: regions of 64 KiB and more, several large puts and gets per epoch followed by small ones
 * into a region the epoch already used; regions detached and attached again while one lock_all epoch
 * stays open -- the same memory at the same address, smaller, and new memory where freed memory was
 * (the origin must never use what it knew of the old region); more regions than the target's table
 * holds; transfers running from one region into an adjacent one; fence and post-start-complete-wait
 * epochs; a range that is not attached. Every value is checked against what the neighbour put. Any
 * number of ranks (neighbours modulo the size). */
#include "rma_common.h"

enum { NA = 16384, NB = 64, CHUNK = 4096, NSMALL = 40 };

static MPI_Aint addr_of(const void *p)
{
    MPI_Aint a;
    MPI_CHECK(MPI_Get_address(p, &a));
    return a;
}

/* Every rank's address of its buffer p (NULL: MPI_BOTTOM). */
static void share(const void *p, MPI_Aint *all)
{
    MPI_Aint my = p ? addr_of(p) : 0;
    MPI_CHECK(MPI_Allgather(&my, 1, MPI_AINT, all, 1, MPI_AINT, MPI_COMM_WORLD));
}

static MPI_Aint at(MPI_Aint base, size_t ints)
{
    return MPI_Aint_add(base, (MPI_Aint)(ints * sizeof(int)));
}

/* Large puts and gets, then small ones into the regions already used, in one lock_all epoch. */
static void test_epoch(MPI_Win win, int *a, int *b, const MPI_Aint *aa, const MPI_Aint *ab)
{
    int *src = mtest_malloc(NA * sizeof(int)), *got = mtest_malloc(NA * sizeof(int));
    for (int i = 0; i < NA; i++)
        src[i] = val(rank, i);
    MPI_CHECK(MPI_Win_lock_all(0, win));
    for (int c = 0; c < NA / CHUNK; c++) {
        MPI_CHECK(
            MPI_Put(src + c * CHUNK, CHUNK, MPI_INT, right, at(aa[right], (size_t)c * CHUNK), CHUNK, MPI_INT, win));
        MPI_CHECK(MPI_Put(src + 2 * c, 2, MPI_INT, right, at(ab[right], 2 * (size_t)c), 2, MPI_INT, win));
    }
    /* small ones into the large region, in the same interval as a large one */
    MPI_CHECK(MPI_Put(src + 100, 1, MPI_INT, right, at(aa[right], NA - 1), 1, MPI_INT, win));
    MPI_CHECK(MPI_Win_flush(right, win));
    MPI_CHECK(MPI_Get(got, NA - 1, MPI_INT, right, aa[right], NA - 1, MPI_INT, win));
    MPI_CHECK(MPI_Get(got + NA - 1, 1, MPI_INT, right, at(aa[right], NA - 1), 1, MPI_INT, win));
    MPI_CHECK(MPI_Win_flush(right, win));
    for (int i = 0; i < NA; i++) {
        int want = i == NA - 1 ? src[100] : src[i];
        CHECK(got[i] == want, "large puts, then a get: [%d] = %d, want %d", i, got[i], want);
    }
    for (int i = 0; i < 8; i++)
        got[i] = -9;
    MPI_CHECK(MPI_Get(got, 8, MPI_INT, right, ab[right], 8, MPI_INT, win));
    MPI_CHECK(MPI_Win_unlock_all(win));
    for (int i = 0; i < 8; i++)
        CHECK(got[i] == src[i], "small puts, then a get: [%d] = %d, want %d", i, got[i], src[i]);
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    local_begin(win);
    for (int i = 0; i < NA; i++) {
        int want = i == NA - 1 ? val(left, 100) : val(left, i);
        CHECK(a[i] == want, "after the epoch: own region A [%d] = %d, want %d", i, a[i], want);
    }
    for (int i = 0; i < NB; i++) {
        int want = i < 8 ? val(left, i) : -2;
        CHECK(b[i] == want, "after the epoch: own region B [%d] = %d, want %d", i, b[i], want);
    }
    local_end(win);
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    free(src);
    free(got);
}

/* Regions detached and attached again inside one lock_all epoch; the new address goes to the origin
 * by a message (an allgather), as a program would send it. Even rounds attach the same memory again
 * with another size; odd rounds free it and attach new memory (often at the same address). */
static int *test_reattach(MPI_Win win, int *a)
{
    enum { ROUNDS = 24 };
    MPI_Aint *aa = mtest_malloc(sizeof(MPI_Aint) * (size_t)size);
    int *src = mtest_malloc(2 * NA * sizeof(int)), *got = mtest_malloc(2 * NA * sizeof(int));
    MPI_CHECK(MPI_Win_lock_all(0, win));
    for (int it = 0; it < ROUNDS; it++) {
        size_t n = it % 2 ? (it % 4 == 1 ? 2 * NA : NA / 2) : NA - (size_t)it * 64;
        MPI_CHECK(MPI_Win_detach(win, a));
        if (it % 2) {
            free(a);
            a = mtest_malloc(2 * NA * sizeof(int));
        }
        for (size_t i = 0; i < n; i++)
            a[i] = -it;
        MPI_CHECK(MPI_Win_attach(win, a, (MPI_Aint)(n * sizeof(int))));
        MPI_CHECK(MPI_Win_sync(win));
        share(a, aa);
        /* every rank attaches the same size this round */
        for (size_t i = 0; i < n; i++)
            src[i] = val(rank, (int)i + it);
        MPI_CHECK(MPI_Put(src, (int)n, MPI_INT, right, aa[right], (int)n, MPI_INT, win));
        MPI_CHECK(MPI_Win_flush(right, win));
        MPI_CHECK(MPI_Get(got, (int)n, MPI_INT, right, aa[right], (int)n, MPI_INT, win));
        MPI_CHECK(MPI_Win_flush(right, win));
        for (size_t i = 0; i < n; i++)
            CHECK(got[i] == src[i], "round %d (%zu ints): get back [%zu] = %d, want %d", it, n, i, got[i], src[i]);
        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
        MPI_CHECK(MPI_Win_sync(win));
        for (size_t i = 0; i < n; i++)
            CHECK(a[i] == val(left, (int)i + it), "round %d (%zu ints): own region [%zu] = %d, want %d", it, n, i, a[i],
                  val(left, (int)i + it));
        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD)); /* (nobody reads this region any more: it may go) */
    }
    MPI_CHECK(MPI_Win_unlock_all(win));
    free(aa);
    free(src);
    free(got);
    return a;
}

/* More regions than a target's table holds: the last ones are reached through its agent. */
static void test_many(MPI_Win win)
{
    int *r[NSMALL];
    MPI_Aint *first = mtest_malloc(sizeof(MPI_Aint) * (size_t)size),
             *last = mtest_malloc(sizeof(MPI_Aint) * (size_t)size);
    for (int k = 0; k < NSMALL; k++) {
        r[k] = mtest_malloc(1024 * sizeof(int));
        for (int i = 0; i < 1024; i++)
            r[k][i] = -3;
        MPI_CHECK(MPI_Win_attach(win, r[k], 1024 * sizeof(int)));
    }
    share(r[0], first);
    share(r[NSMALL - 1], last);
    int src[1024], got[1024];
    for (int i = 0; i < 1024; i++)
        src[i] = val(rank, i);
    MPI_CHECK(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
    MPI_CHECK(MPI_Put(src, 1024, MPI_INT, right, first[right], 1024, MPI_INT, win));
    MPI_CHECK(MPI_Put(src, 1024, MPI_INT, right, last[right], 1024, MPI_INT, win));
    MPI_CHECK(MPI_Win_flush(right, win));
    MPI_CHECK(MPI_Get(got, 1024, MPI_INT, right, last[right], 1024, MPI_INT, win));
    MPI_CHECK(MPI_Win_unlock(right, win));
    for (int i = 0; i < 1024; i++)
        CHECK(got[i] == src[i], "the last of %d regions: get back [%d] = %d, want %d", NSMALL, i, got[i], src[i]);
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    for (int i = 0; i < 1024; i++) {
        CHECK(r[0][i] == val(left, i), "the first of %d regions: [%d] = %d, want %d", NSMALL, i, r[0][i], val(left, i));
        CHECK(r[NSMALL - 1][i] == val(left, i), "the last of %d regions: [%d] = %d, want %d", NSMALL, i,
              r[NSMALL - 1][i], val(left, i));
        CHECK(r[1][i] == -3, "a region nobody wrote: [%d] = %d, want -3", i, r[1][i]);
    }
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    for (int k = 0; k < NSMALL; k++) {
        MPI_CHECK(MPI_Win_detach(win, r[k]));
        free(r[k]);
    }
    free(first);
    free(last);
}

/* Two adjacent regions (one buffer attached as two halves): transfers that run from one into the
 * other, with the keys of both. */
static void test_adjacent(MPI_Win win)
{
    enum { HALF = 4096 };
    int *buf = mtest_malloc(2 * HALF * sizeof(int)), *src = mtest_malloc(2 * HALF * sizeof(int)),
        *got = mtest_malloc(2 * HALF * sizeof(int));
    MPI_Aint *ab = mtest_malloc(sizeof(MPI_Aint) * (size_t)size);
    for (int i = 0; i < 2 * HALF; i++) {
        buf[i] = -4;
        src[i] = val(rank, i);
    }
    MPI_CHECK(MPI_Win_attach(win, buf, HALF * sizeof(int)));
    MPI_CHECK(MPI_Win_attach(win, buf + HALF, HALF * sizeof(int)));
    share(buf, ab);
    MPI_CHECK(MPI_Win_lock_all(0, win));
    MPI_CHECK(MPI_Put(src, HALF, MPI_INT, right, at(ab[right], HALF / 2), HALF, MPI_INT, win));
    MPI_CHECK(MPI_Win_flush(right, win));
    MPI_CHECK(MPI_Get(got, 2 * HALF, MPI_INT, right, ab[right], 2 * HALF, MPI_INT, win));
    MPI_CHECK(MPI_Win_unlock_all(win));
    for (int i = 0; i < 2 * HALF; i++) {
        int want = i >= HALF / 2 && i < HALF / 2 + HALF ? src[i - HALF / 2] : -4;
        CHECK(got[i] == want, "across two adjacent regions: get [%d] = %d, want %d", i, got[i], want);
    }
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_CHECK(MPI_Win_detach(win, buf));
    MPI_CHECK(MPI_Win_detach(win, buf + HALF));
    free(buf);
    free(src);
    free(got);
    free(ab);
}

/* Fence and post-start-complete-wait epochs with several large transfers each. */
static void test_active(MPI_Win win, int *a, const MPI_Aint *aa)
{
    int *src = mtest_malloc(NA * sizeof(int)), *got = mtest_malloc(NA * sizeof(int));
    for (int i = 0; i < NA; i++)
        src[i] = -val(rank, i);
    MPI_CHECK(MPI_Win_fence(0, win));
    for (int c = 0; c < NA / CHUNK; c++)
        MPI_CHECK(
            MPI_Put(src + c * CHUNK, CHUNK, MPI_INT, right, at(aa[right], (size_t)c * CHUNK), CHUNK, MPI_INT, win));
    MPI_CHECK(MPI_Win_fence(0, win));
    for (int i = 0; i < NA; i++)
        CHECK(a[i] == -val(left, i), "fence: own region [%d] = %d, want %d", i, a[i], -val(left, i));
    MPI_CHECK(MPI_Win_fence(0, win));
    MPI_Group world, gl, gr;
    MPI_CHECK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    MPI_CHECK(MPI_Group_incl(world, 1, &left, &gl));
    MPI_CHECK(MPI_Group_incl(world, 1, &right, &gr));
    MPI_CHECK(MPI_Win_post(gl, 0, win));
    MPI_CHECK(MPI_Win_start(gr, 0, win));
    for (int c = 0; c < NA / CHUNK; c++)
        MPI_CHECK(
            MPI_Get(got + c * CHUNK, CHUNK, MPI_INT, right, at(aa[right], (size_t)c * CHUNK), CHUNK, MPI_INT, win));
    MPI_CHECK(MPI_Win_complete(win));
    MPI_CHECK(MPI_Win_wait(win));
    for (int i = 0; i < NA; i++)
        CHECK(got[i] == -val(rank, i), "PSCW: get [%d] = %d, want %d", i, got[i], -val(rank, i));
    MPI_CHECK(MPI_Group_free(&gl));
    MPI_CHECK(MPI_Group_free(&gr));
    MPI_CHECK(MPI_Group_free(&world));
    free(src);
    free(got);
}

/* A range that is not attached at the target: MPI_ERR_RMA_RANGE, at the operation or at its flush. */
static void test_unattached(MPI_Win win)
{
    int *spare = mtest_malloc(CHUNK * sizeof(int)), *src = mtest_malloc(CHUNK * sizeof(int));
    MPI_Aint *as = mtest_malloc(sizeof(MPI_Aint) * (size_t)size);
    for (int i = 0; i < CHUNK; i++)
        src[i] = i;
    share(spare, as);
    MPI_CHECK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    MPI_CHECK(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
    int rc = MPI_Put(src, CHUNK, MPI_INT, right, as[right], CHUNK, MPI_INT, win);
    if (rc == MPI_SUCCESS)
        rc = MPI_Win_flush(right, win);
    CHECK_ERRCLASS(rc, MPI_ERR_RMA_RANGE, "a put to memory not attached at the target");
    MPI_CHECK(MPI_Win_unlock(right, win));
    MPI_CHECK(MPI_Win_set_errhandler(win, MPI_ERRORS_ARE_FATAL));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    free(spare);
    free(src);
    free(as);
}

int main(int argc, char **argv)
{
    rma_init(&argc, &argv);
    MPI_Win win;
    MPI_CHECK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    int *a = mtest_malloc(2 * NA * sizeof(int)), *b = mtest_malloc(NB * sizeof(int));
    for (int i = 0; i < NA; i++)
        a[i] = -1;
    for (int i = 0; i < NB; i++)
        b[i] = -2;
    MPI_CHECK(MPI_Win_attach(win, a, NA * sizeof(int)));
    MPI_CHECK(MPI_Win_attach(win, b, NB * sizeof(int)));
    MPI_Aint *aa = mtest_malloc(sizeof(MPI_Aint) * (size_t)size), *ab = mtest_malloc(sizeof(MPI_Aint) * (size_t)size);
    share(a, aa);
    share(b, ab);

    test_epoch(win, a, b, aa, ab);
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    a = test_reattach(win, a);
    MPI_CHECK(MPI_Win_detach(win, a));
    MPI_CHECK(MPI_Win_attach(win, a, NA * sizeof(int)));
    share(a, aa);
    test_many(win);
    test_adjacent(win);
    test_active(win, a, aa);
    test_unattached(win);

    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_CHECK(MPI_Win_detach(win, a));
    MPI_CHECK(MPI_Win_detach(win, b));
    MPI_CHECK(MPI_Win_free(&win));
    free(a);
    free(b);
    free(aa);
    free(ab);
    return mtest_finalize();
}
