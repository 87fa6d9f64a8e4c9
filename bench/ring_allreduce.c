/* ring_allreduce: the small-message loop of a bulk-synchronous application, per iteration.
 *
 * One iteration of table "loop": every rank exchanges 8 bytes with its neighbours on a ring
 * (MPI_Sendrecv to rank+1, from rank-1), then an MPI_Allreduce of one double (MPI_SUM), then
 * an MPI_Barrier. Meant for oversubscription (more ranks than cores, where how a library waits
 * matters more than how fast it copies) as well as for pinned runs. The tables "ring",
 * "allreduce" and "barrier" time each part alone, to tell which one costs.
 *
 * For every table: one untimed iteration whose results are verified, a warm-up that also
 * calibrates (batches of 1, 2, 4, ... iterations until a batch takes 50 ms or ITERS/10
 * iterations), then REPS timed loops of ITERS iterations, or fewer when a loop would take more
 * than SECONDS by the warm-up's estimate (at least 5). A loop's time is its average per
 * iteration on the slowest rank (MPI_MAX over the ranks). Prints the best (lowest) and the
 * median of the REPS loops, in microseconds; column 2 is the iterations per loop actually run.
 *
 * Usage: ring_allreduce [-i ITERS] [-r REPS] [-T SECONDS] [-c LIST]
 *   -i ITERS    iterations per timed loop, at most (default 10000)
 *   -r REPS     timed loops per table (default 5)
 *   -T SECONDS  time limit per timed loop, by the warm-up's estimate (default 1; 0: none)
 *   -c LIST     comma-separated tables, default loop,ring,allreduce,barrier
 * Plain MPI; builds with any mpicc:  mpicc -O2 -std=c11 -o ring_allreduce ring_allreduce.c */
#include "bench_common.h"

#include <limits.h>

#define TAG_RING 21
#define MIN_LOOP 5

enum { T_LOOP, T_RING, T_ALLREDUCE, T_BARRIER, NTAB };
static const char *const tname[NTAB] = { "loop", "ring", "allreduce", "barrier" };
static const char *const tdesc[NTAB] = { "8-byte ring Sendrecv + 8-byte Allreduce + Barrier", "8-byte ring Sendrecv",
                                         "8-byte Allreduce (one double, MPI_SUM)", "Barrier" };

static int rank, nranks, right, left;

static void usage(void)
{
    fprintf(stderr, "usage: ring_allreduce [-i ITERS] [-r REPS] [-T SECONDS] [-c loop,ring,allreduce,barrier]\n");
}

/* n iterations of table t. */
static void run(int t, long n)
{
    double out = (double)rank, in = -1.0, sum = 0.0;
    for (long i = 0; i < n; i++) {
        if (t == T_LOOP || t == T_RING)
            MPI_Sendrecv(&out, 1, MPI_DOUBLE, right, TAG_RING, &in, 1, MPI_DOUBLE, left, TAG_RING, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
        if (t == T_LOOP || t == T_ALLREDUCE)
            MPI_Allreduce(&out, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        if (t == T_LOOP || t == T_BARRIER)
            MPI_Barrier(MPI_COMM_WORLD);
    }
}

/* One verified iteration of table t. */
static void check_once(int t)
{
    double out = (double)rank + 0.5, in = -1.0, one = 1.0, sum = 0.0;
    if (t == T_LOOP || t == T_RING) {
        MPI_Status st;
        MPI_Sendrecv(&out, 1, MPI_DOUBLE, right, TAG_RING, &in, 1, MPI_DOUBLE, left, TAG_RING, MPI_COMM_WORLD, &st);
        if (in != (double)left + 0.5 || st.MPI_SOURCE != left)
            bench_die("ring: got %g from rank %d, expected %g from rank %d", in, st.MPI_SOURCE, (double)left + 0.5,
                      left);
    }
    if (t == T_LOOP || t == T_ALLREDUCE) {
        MPI_Allreduce(&one, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        if (sum != (double)nranks)
            bench_die("allreduce: sum is %g, expected %d", sum, nranks);
    }
    if (t == T_LOOP || t == T_BARRIER)
        MPI_Barrier(MPI_COMM_WORLD);
}

/* Seconds per iteration of n iterations on the slowest rank (collective). */
static double timed(int t, long n)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    run(t, n);
    double mine = (MPI_Wtime() - t0) / (double)n, slowest = 0.0;
    MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return slowest;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    right = (rank + 1) % nranks;
    left = (rank + nranks - 1) % nranks;

    long iters = 10000;
    int reps = 5, want[NTAB] = { 1, 1, 1, 1 };
    double limit = 1.0;
    int code = bench_loop_options(argc, argv, rank, usage, "iterations (-i)", &iters, &reps, &limit, tname, NTAB, want);
    if (code >= 0)
        return code;

    char lib[256];
    bench_library_name(lib, sizeof lib);
    if (rank == 0) {
        printf("# benchmark: ring_allreduce | library: %s | ranks: %d | reps: %d | iters: at most %ld | time limit: "
               "%g s per loop | time: per iteration, slowest rank\n",
               lib, nranks, reps, iters, limit);
        fflush(stdout);
    }
    double t[BENCH_MAX_REPS];
    for (int k = 0; k < NTAB; k++) {
        if (!want[k])
            continue;
        check_once(k);
        long n = bench_timed_loops(timed, k, iters, limit, MIN_LOOP, reps, t);
        if (rank == 0) {
            printf("# table: %s  unit: us  better: lower  (%s)\n", tname[k], tdesc[k]);
            printf("# %10s %9s %12s %12s\n", "size", "iters", "best_us", "median_us");
            printf("  %10d %9ld %12.3f %12.3f\n", k == T_BARRIER ? 0 : 8, n, bench_min(t, reps), bench_median(t, reps));
            fflush(stdout);
        }
    }
    MPI_Finalize();
    return 0;
}
