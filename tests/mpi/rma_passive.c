/* Passive-target progress while the target computes (MPI 4.1, 12.7; docs/DESIGN.md, "One-sided
 * communication"): rank 0 locks rank 1's window, puts, gets back, fetches-and-adds and unlocks
 * while rank 1 computes for MTEST_COMPUTE seconds (default 1.5) without calling MPI. The epoch
 * must end with the right data; with MTEST_PASSIVE_FAST=1 it must also end before the target's
 * computation does (at most half of it): on a node the origin acts on the target's memory
 * itself; across nodes the target's progress thread (APTUS_ASYNC_PROGRESS=1) serves it. Without
 * either, the epoch ends once the target calls MPI again (the documented progress rule) --
 * still correct, which is what the run without MTEST_PASSIVE_FAST checks.
 * Usage: rma_passive [create|allocate] (default allocate). */
#include "mtest.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2) {
        if (rank == 0)
            printf("rma_passive: needs 2 ranks; nothing to do\n");
        return mtest_finalize();
    }
    const char *env = getenv("MTEST_COMPUTE");
    double compute = env ? atof(env) : 1.5;
    int fast = getenv("MTEST_PASSIVE_FAST") && atoi(getenv("MTEST_PASSIVE_FAST"));
    int create = argc > 1 && !strcmp(argv[1], "create");
    enum { N = 1024 };
    int64_t *w, *mem = NULL;
    MPI_Win win;
    if (create) {
        mem = calloc(N, sizeof *mem);
        CHECK(mem != NULL, "out of memory");
        w = mem;
        MPI_CHECK(MPI_Win_create(w, N * sizeof *w, sizeof *w, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    } else {
        MPI_CHECK(MPI_Win_allocate(N * sizeof *w, sizeof *w, MPI_INFO_NULL, MPI_COMM_WORLD, &w, &win));
        for (int i = 0; i < N; i++)
            w[i] = 0;
    }
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 1) {
        /* computes without calling MPI (MPI_Wtime is a clock, not progress) */
        volatile double x = 1;
        double t0 = MPI_Wtime();
        while (MPI_Wtime() - t0 < compute)
            for (int k = 0; k < 1000; k++)
                x = x * 1.0000001 + 1e-9;
    } else if (rank == 0) {
        int64_t src[N], back[N], one = 1, old = -1;
        for (int i = 0; i < N; i++)
            src[i] = 7 * i + 3;
        double t0 = MPI_Wtime();
        MPI_CHECK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win));
        MPI_CHECK(MPI_Put(src, N, MPI_INT64_T, 1, 0, N, MPI_INT64_T, win));
        MPI_CHECK(MPI_Win_flush(1, win));
        MPI_CHECK(MPI_Get(back, N, MPI_INT64_T, 1, 0, N, MPI_INT64_T, win));
        MPI_CHECK(MPI_Fetch_and_op(&one, &old, MPI_INT64_T, 1, 5, MPI_SUM, win));
        MPI_CHECK(MPI_Win_unlock(1, win));
        double t = MPI_Wtime() - t0;
        for (int i = 0; i < N; i++)
            CHECK(back[i] == src[i], "Get after Put: [%d] = %lld, want %lld", i, (long long)back[i], (long long)src[i]);
        CHECK(old == src[5], "Fetch_and_op fetched %lld, want %lld", (long long)old, (long long)src[5]);
        printf("rma_passive: the epoch took %.3f s while the target computed for %.1f s\n", t, compute);
        if (fast)
            CHECK(t < compute / 2, "the passive-target epoch took %.3f s: it waited for the target's computation", t);
    }
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 1)
        CHECK(w[5] == 7 * 5 + 3 + 1, "target: element 5 is %lld, want %d", (long long)w[5], 7 * 5 + 3 + 1);
    MPI_CHECK(MPI_Win_free(&win));
    free(mem);
    return mtest_finalize();
}
