/* Atomicity and mutual exclusion of RMA under contention (MPI 4.1 sections 12.3.4, 12.5.3, 12.7):
 *  - every rank accumulates MPI_SUM into the same int64 counters of one target under MPI_Win_lock_all:
 *    no update may be lost;
 *  - every rank does MPI_Fetch_and_op(+1) on one counter: the values fetched by all ranks together are
 *    exactly 0 .. size*N-1 (no two alike), increasing at each rank, and the final counter is size*N;
 *  - exclusive locks exclude each other and shared locks: each rank increments a counter and an array by
 *    Get + Put under MPI_LOCK_EXCLUSIVE (the result must be exact), while readers under MPI_LOCK_SHARED
 *    must never see the array half updated;
 *  - MPI_Compare_and_swap as a spin lock protecting a counter updated by plain Get + Put.
 * The target is the last rank (rank 0 too at 1 rank); its memory is allocated by MPI_Win_allocate,
 * or its own with the argument `create` (MPI_Win_create). */
#include "mtest.h"

static int rank, size, target;

enum { N_ACC = 300, N_FOP = 300, N_EXCL = 8, N_CAS = 10, NARR = 8 };

struct area {
    int64_t acc[4];
    int64_t fop;
    int lockword;
    int cs_counter;
    int excl_counter;
    int arr[NARR];
};

#define OFF(field) ((MPI_Aint)offsetof(struct area, field))

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static void read_area(MPI_Win win, struct area *out)
{
    MPI_CHECK(MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win));
    MPI_CHECK(MPI_Get(out, sizeof *out, MPI_BYTE, target, 0, sizeof *out, MPI_BYTE, win));
    MPI_CHECK(MPI_Win_unlock(target, win));
}

static void test_accumulate(MPI_Win win)
{
    int64_t add[4] = { 1, 2, 3, 4 };
    MPI_CHECK(MPI_Win_lock_all(0, win));
    for (int n = 0; n < N_ACC; n++) {
        MPI_CHECK(MPI_Accumulate(add, 4, MPI_INT64_T, target, OFF(acc), 4, MPI_INT64_T, MPI_SUM, win));
        if (n % 64 == 63)
            MPI_CHECK(MPI_Win_flush(target, win));
    }
    MPI_CHECK(MPI_Win_unlock_all(win));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    struct area a;
    read_area(win, &a);
    for (int k = 0; k < 4; k++)
        CHECK(a.acc[k] == (int64_t)size * N_ACC * (k + 1), "concurrent MPI_SUM: counter %d = %lld, want %lld", k,
              (long long)a.acc[k], (long long)size * N_ACC * (k + 1));
}

static void test_fetch_and_op(MPI_Win win)
{
    int64_t one = 1, *got = mtest_malloc(sizeof(int64_t) * N_FOP);
    MPI_CHECK(MPI_Win_lock_all(0, win));
    for (int n = 0; n < N_FOP; n++) {
        MPI_CHECK(MPI_Fetch_and_op(&one, &got[n], MPI_INT64_T, target, OFF(fop), MPI_SUM, win));
        if (n % 32 == 31)
            MPI_CHECK(MPI_Win_flush(target, win));
    }
    MPI_CHECK(MPI_Win_unlock_all(win));
    /* operations of one origin on one location are ordered (default accumulate_ordering) */
    for (int n = 1; n < N_FOP; n++)
        CHECK(got[n] > got[n - 1], "Fetch_and_op %d fetched %lld after %lld", n, (long long)got[n],
              (long long)got[n - 1]);
    int64_t *all = rank == 0 ? mtest_malloc(sizeof(int64_t) * N_FOP * (size_t)size) : NULL;
    MPI_CHECK(MPI_Gather(got, N_FOP, MPI_INT64_T, all, N_FOP, MPI_INT64_T, 0, MPI_COMM_WORLD));
    if (rank == 0) {
        qsort(all, (size_t)N_FOP * (size_t)size, sizeof(int64_t), cmp_i64);
        for (int64_t n = 0; n < (int64_t)N_FOP * size; n++)
            CHECK(all[n] == n, "Fetch_and_op: sorted fetched value %lld is %lld (lost or duplicated update)",
                  (long long)n, (long long)all[n]);
        free(all);
    }
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    struct area a;
    read_area(win, &a);
    CHECK(a.fop == (int64_t)size * N_FOP, "Fetch_and_op counter %lld, want %lld", (long long)a.fop,
          (long long)size * N_FOP);
    free(got);
}

/* Get + Put increments under exclusive locks; the array is written in two halves with a flush between,
 * so that a reader admitted at the wrong time would see them differ. */
static void test_exclusive(MPI_Win win)
{
    for (int n = 0; n < N_EXCL; n++) {
        int c = -1, arr[NARR];
        MPI_CHECK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win));
        MPI_CHECK(MPI_Get(&c, 1, MPI_INT, target, OFF(excl_counter), 1, MPI_INT, win));
        MPI_CHECK(MPI_Get(arr, NARR, MPI_INT, target, OFF(arr), NARR, MPI_INT, win));
        MPI_CHECK(MPI_Win_flush(target, win));
        for (int k = 0; k < NARR; k++)
            CHECK(arr[k] == c, "exclusive lock: array [%d] = %d, counter %d", k, arr[k], c);
        c++;
        for (int k = 0; k < NARR; k++)
            arr[k] = c;
        MPI_CHECK(MPI_Put(arr, NARR / 2, MPI_INT, target, OFF(arr), NARR / 2, MPI_INT, win));
        MPI_CHECK(MPI_Win_flush(target, win));
        MPI_CHECK(MPI_Put(arr + NARR / 2, NARR / 2, MPI_INT, target, OFF(arr) + NARR / 2 * sizeof(int), NARR / 2,
                          MPI_INT, win));
        MPI_CHECK(MPI_Put(&c, 1, MPI_INT, target, OFF(excl_counter), 1, MPI_INT, win));
        MPI_CHECK(MPI_Win_unlock(target, win));

        /* a reader under a shared lock sees the array whole */
        int snap[NARR];
        MPI_CHECK(MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win));
        MPI_CHECK(MPI_Get(snap, NARR, MPI_INT, target, OFF(arr), NARR, MPI_INT, win));
        MPI_CHECK(MPI_Win_unlock(target, win));
        for (int k = 1; k < NARR; k++)
            CHECK(snap[k] == snap[0], "shared lock admitted during an exclusive one: array [%d] = %d, [0] = %d", k,
                  snap[k], snap[0]);
        CHECK(snap[0] >= c, "shared-lock read after my increment to %d saw %d", c, snap[0]);
    }
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    struct area a;
    read_area(win, &a);
    CHECK(a.excl_counter == size * N_EXCL, "exclusive-lock counter %d, want %d (mutual exclusion failed)",
          a.excl_counter, size * N_EXCL);
    for (int k = 0; k < NARR; k++)
        CHECK(a.arr[k] == size * N_EXCL, "exclusive-lock array [%d] = %d, want %d", k, a.arr[k], size * N_EXCL);
}

/* A spin lock on lockword (0 = free, r+1 = held by rank r) by MPI_Compare_and_swap. */
static void test_cas_lock(MPI_Win win)
{
    int mine = rank + 1, zero = 0;
    long spins = 0;
    MPI_CHECK(MPI_Win_lock_all(0, win));
    for (int n = 0; n < N_CAS; n++) {
        int prev = -1;
        for (;;) {
            MPI_CHECK(MPI_Compare_and_swap(&mine, &zero, &prev, MPI_INT, target, OFF(lockword), win));
            MPI_CHECK(MPI_Win_flush(target, win));
            if (prev == 0)
                break;
            CHECK(prev >= 1 && prev <= size && prev != mine, "spin lock word holds %d", prev);
            spins++;
        }
        /* inside: the lock word is ours, the counter moves by plain Get + Put */
        int held = -1, c = -1;
        MPI_CHECK(MPI_Fetch_and_op(NULL, &held, MPI_INT, target, OFF(lockword), MPI_NO_OP, win));
        MPI_CHECK(MPI_Get(&c, 1, MPI_INT, target, OFF(cs_counter), 1, MPI_INT, win));
        MPI_CHECK(MPI_Win_flush(target, win));
        CHECK(held == mine, "inside the spin lock the lock word is %d, want %d", held, mine);
        c++;
        MPI_CHECK(MPI_Put(&c, 1, MPI_INT, target, OFF(cs_counter), 1, MPI_INT, win));
        MPI_CHECK(MPI_Win_flush(target, win));
        MPI_CHECK(MPI_Compare_and_swap(&zero, &mine, &prev, MPI_INT, target, OFF(lockword), win));
        MPI_CHECK(MPI_Win_flush(target, win));
        CHECK(prev == mine, "releasing the spin lock found %d, want %d", prev, mine);
    }
    MPI_CHECK(MPI_Win_unlock_all(win));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    struct area a;
    read_area(win, &a);
    CHECK(a.cs_counter == size * N_CAS, "counter under the CAS spin lock %d, want %d (spins %ld)", a.cs_counter,
          size * N_CAS, spins);
    CHECK(a.lockword == 0, "spin lock word %d at the end, want 0", a.lockword);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    target = size - 1;

    struct area *a;
    MPI_Win win;
    /* MTEST_ACC_GRANULARITY: the mpi_accumulate_granularity hint (MPI 4.1), e.g. 8 for atomicity per
     * element (an implementation may then use CPU atomics instead of a lock around each accumulate) */
    MPI_Info info = MPI_INFO_NULL;
    const char *gran = getenv("MTEST_ACC_GRANULARITY");
    if (gran) {
        MPI_CHECK(MPI_Info_create(&info));
        MPI_CHECK(MPI_Info_set(info, "mpi_accumulate_granularity", gran));
    }
    /* argument `create`: the target's memory is its own (MPI_Win_create): the ranks of the node reach
     * it by Cross Memory Attach, or their small accumulates wait for the flush */
    int create = argc > 1 && !strcmp(argv[1], "create");
    if (create) {
        a = rank == target ? mtest_malloc(sizeof *a) : NULL;
        MPI_CHECK(MPI_Win_create(a, rank == target ? sizeof *a : 0, 1, info, MPI_COMM_WORLD, &win));
    } else {
        MPI_CHECK(MPI_Win_allocate(rank == target ? sizeof *a : 0, 1, info, MPI_COMM_WORLD, &a, &win));
    }
    if (info != MPI_INFO_NULL)
        MPI_CHECK(MPI_Info_free(&info));
    if (rank == target) {
        MPI_CHECK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win));
        memset(a, 0, sizeof *a);
        MPI_CHECK(MPI_Win_sync(win));
        MPI_CHECK(MPI_Win_unlock(rank, win));
    }
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));

    test_accumulate(win);
    test_fetch_and_op(win);
    test_exclusive(win);
    test_cas_lock(win);

    MPI_CHECK(MPI_Win_free(&win));
    if (create)
        free(a);
    return mtest_finalize();
}
