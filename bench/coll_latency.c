/* coll_latency: average latency of blocking collectives over message sizes.
 *
 * For each collective and size: one untimed call whose result is verified, an untimed warm-up,
 * then REPS timed loops of ITERS back-to-back calls (ITERS scaled down above 8 KiB). A loop's
 * time is its average per call on the slowest rank (MPI_MAX over the ranks of each loop's
 * average): a collective is done when its last rank is. Prints the best (lowest) and the median
 * of the REPS loops, in microseconds, one table per collective.
 *
 * Sizes are bytes per rank: the vector of Allreduce / Reduce (MPI_DOUBLE, MPI_SUM, root 0),
 * the buffer of Bcast (MPI_BYTE, root 0), the block each rank sends to each other rank in
 * Alltoall, the block each rank contributes to Allgather. Barrier has one row (size 0).
 *
 * With -B every call is followed by an MPI_Barrier, as in OSU's osu_<collective>: the loop's
 * time per call (collective + barrier, slowest rank) and, in two more columns, OSU's figure --
 * the time each rank spent inside the collective, averaged over the ranks. Where ranks share
 * cores the second depends on which ranks the barrier lets go first (a rank that leaves it
 * early waits inside the collective instead), so the pair shows where the time went.
 *
 * Usage: coll_latency [-m MAXSIZE] [-n MINSIZE] [-i ITERS] [-r REPS] [-T SECONDS] [-c LIST] [-B]
 *   -m MAXSIZE  largest size, default 1M (sizes MINSIZE, 2 MINSIZE, ... MAXSIZE)
 *   -n MINSIZE  smallest size, default 8 (at least 8: one double)
 *   -i ITERS    calls per timed loop for sizes <= 8 KiB (default 1000)
 *   -r REPS     timed loops per size (default 5)
 *   -T SECONDS  time limit per timed loop (default 0: none); with it the warm-up runs batches of
 *               1, 2, 4, ... calls until one takes 50 ms (or ITERS/10 calls), and a loop runs
 *               fewer calls (at least 5) when the warm-up's estimate says ITERS would take longer
 *               (for slow cases, e.g. MPICH oversubscribed); column 2 shows the calls run
 *   -c LIST     comma-separated collectives, default allreduce,bcast,alltoall,reduce,allgather,barrier
 *   -B          a barrier after every call; adds the columns osu_best_us and osu_median_us
 * Sizes accept K/M/G suffixes (binary). Plain MPI; builds with any mpicc:
 *     mpicc -O2 -std=c11 -o coll_latency coll_latency.c */
#include "bench_common.h"

#include <limits.h>

enum { C_ALLREDUCE, C_BCAST, C_ALLTOALL, C_REDUCE, C_ALLGATHER, C_BARRIER, NCOLL };
static const char *const cname[NCOLL] = { "allreduce", "bcast", "alltoall", "reduce", "allgather", "barrier" };

static int rank, nranks;

static void usage(void)
{
    fprintf(stderr, "usage: coll_latency [-m MAXSIZE] [-n MINSIZE] [-i ITERS] [-r REPS] [-T SECONDS] [-c LIST] [-B]\n"
                    "  LIST: comma-separated subset of allreduce,bcast,alltoall,reduce,allgather,barrier\n");
}

static long iters_for(size_t size, long iters)
{
    if (size <= 8 * BENCH_KIB)
        return iters;
    long n = (long)((double)iters * (double)(8 * BENCH_KIB) / (double)size);
    return n < 10 ? 10 : n;
}

/* One call of collective c on `size` bytes per rank. */
static void run_once(int c, size_t size, unsigned char *sbuf, unsigned char *rbuf)
{
    int count = (int)size, dcount = (int)(size / sizeof(double));
    switch (c) {
    case C_ALLREDUCE: MPI_Allreduce(sbuf, rbuf, dcount, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); break;
    case C_BCAST: MPI_Bcast(sbuf, count, MPI_BYTE, 0, MPI_COMM_WORLD); break;
    case C_ALLTOALL: MPI_Alltoall(sbuf, count, MPI_BYTE, rbuf, count, MPI_BYTE, MPI_COMM_WORLD); break;
    case C_REDUCE: MPI_Reduce(sbuf, rbuf, dcount, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD); break;
    case C_ALLGATHER: MPI_Allgather(sbuf, count, MPI_BYTE, rbuf, count, MPI_BYTE, MPI_COMM_WORLD); break;
    default: MPI_Barrier(MPI_COMM_WORLD); break;
    }
}

/* Untimed call with known data, result verified (dies on a wrong result). */
static void check_once(int c, size_t size, unsigned char *sbuf, unsigned char *rbuf)
{
    size_t nd = size / sizeof(double);
    double *sd = (double *)sbuf, *rd = (double *)rbuf;
    switch (c) {
    case C_ALLREDUCE:
    case C_REDUCE:
        for (size_t i = 0; i < nd; i++)
            sd[i] = (double)(rank + 1) * (double)(i % 1000 + 1);
        memset(rbuf, 0, nd * sizeof(double));
        run_once(c, size, sbuf, rbuf);
        if (c == C_ALLREDUCE || rank == 0)
            for (size_t i = 0; i < nd; i++) {
                double want = (double)nranks * (nranks + 1) / 2 * (double)(i % 1000 + 1);
                if (rd[i] != want)
                    bench_die("%s of %zu bytes: element %zu is %g, expected %g", cname[c], size, i, rd[i], want);
            }
        break;
    case C_BCAST:
        if (rank == 0)
            bench_fill(sbuf, size, 7);
        else
            memset(sbuf, 0, size);
        run_once(c, size, sbuf, rbuf);
        bench_verify(sbuf, size, 7, "bcast");
        break;
    case C_ALLTOALL:
        for (int p = 0; p < nranks; p++)
            bench_fill(sbuf + (size_t)p * size, size, (unsigned)(rank * 1000 + p));
        memset(rbuf, 0, size * (size_t)nranks);
        run_once(c, size, sbuf, rbuf);
        for (int p = 0; p < nranks; p++)
            bench_verify(rbuf + (size_t)p * size, size, (unsigned)(p * 1000 + rank), "alltoall");
        break;
    case C_ALLGATHER:
        bench_fill(sbuf, size, (unsigned)rank + 11);
        memset(rbuf, 0, size * (size_t)nranks);
        run_once(c, size, sbuf, rbuf);
        for (int p = 0; p < nranks; p++)
            bench_verify(rbuf + (size_t)p * size, size, (unsigned)p + 11, "allgather");
        break;
    default: run_once(c, size, sbuf, rbuf); break;
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);

    size_t maxsize = BENCH_MIB, minsize = 8;
    long iters = 1000;
    int reps = 5, want[NCOLL] = { 1, 1, 1, 1, 1, 1 }, split = 0;
    double limit = 0.0;
    int opt;
    while ((opt = getopt(argc, argv, "m:n:i:r:T:c:Bh")) != -1) {
        switch (opt) {
        case 'm': maxsize = bench_parse_size(optarg, "maximum size (-m)"); break;
        case 'n': minsize = bench_parse_size(optarg, "minimum size (-n)"); break;
        case 'i': iters = bench_parse_int(optarg, "iterations (-i)", 1); break;
        case 'r': reps = bench_parse_int(optarg, "repetitions (-r)", 1); break;
        case 'T': limit = bench_parse_seconds(optarg, "time limit (-T)"); break;
        case 'c': bench_parse_choice(optarg, cname, NCOLL, want, "collective in -c"); break;
        case 'B': split = 1; break;
        case 'h': return bench_usage_exit(rank, usage, 0);
        default: return bench_usage_exit(rank, usage, 1);
        }
    }
    if (reps > BENCH_MAX_REPS)
        bench_die("at most %d repetitions", BENCH_MAX_REPS);
    if (minsize < 8)
        minsize = 8;
    if (maxsize < minsize)
        maxsize = minsize;
    if (maxsize > (size_t)INT_MAX / (size_t)nranks)
        bench_die("sizes above %zu bytes are not supported on %d ranks", (size_t)INT_MAX / (size_t)nranks, nranks);

    char lib[256];
    bench_library_name(lib, sizeof lib);
    size_t bufsize = maxsize * (size_t)nranks;
    unsigned char *sbuf = bench_alloc(bufsize), *rbuf = bench_alloc(bufsize);
    double t[BENCH_MAX_REPS], tin[BENCH_MAX_REPS];
    if (rank == 0) {
        printf("# benchmark: coll_latency | library: %s | ranks: %d | reps: %d | iters: %ld (scaled down above 8 "
               "KiB) | time: per call, slowest rank%s\n",
               lib, nranks, reps, iters,
               split ? " | a barrier after each call (osu: time inside the call, mean over the ranks)" : "");
        fflush(stdout);
    }
    for (int c = 0; c < NCOLL; c++) {
        if (!want[c])
            continue;
        if (rank == 0) {
            printf("# table: %s  unit: us  better: lower  (size: bytes per rank)\n", cname[c]);
            if (split)
                printf("# %10s %9s %12s %12s %14s %14s\n", "size", "iters", "best_us", "median_us", "osu_best_us",
                       "osu_median_us");
            else
                printf("# %10s %9s %12s %12s\n", "size", "iters", "best_us", "median_us");
            fflush(stdout);
        }
        for (size_t size = c == C_BARRIER ? 0 : minsize; size <= (c == C_BARRIER ? 0 : maxsize);
             size = size ? size * 2 : 1) {
            long n = iters_for(size, iters);
            check_once(c, size, sbuf, rbuf);
            if (limit > 0.0) { /* warm-up that estimates the time per call (slowest rank) */
                double est = 0.0;
                for (long w = 1;; w *= 2) {
                    MPI_Barrier(MPI_COMM_WORLD);
                    double t0 = MPI_Wtime();
                    for (long i = 0; i < w; i++)
                        run_once(c, size, sbuf, rbuf);
                    double mine = (MPI_Wtime() - t0) / (double)w;
                    MPI_Allreduce(&mine, &est, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
                    if (est * (double)w >= 0.05 || w >= n / 10)
                        break;
                }
                if (est * (double)n > limit)
                    n = (long)(limit / est) < 5 ? 5 : (long)(limit / est);
            } else {
                for (long i = 0; i < (n / 10 > 2 ? n / 10 : 2); i++) /* warm-up */
                    run_once(c, size, sbuf, rbuf);
            }
            for (int r = 0; r < reps; r++) {
                MPI_Barrier(MPI_COMM_WORLD);
                double t0 = MPI_Wtime(), inside = 0.0;
                for (long i = 0; i < n; i++) {
                    if (split) {
                        double a = MPI_Wtime();
                        run_once(c, size, sbuf, rbuf);
                        inside += MPI_Wtime() - a;
                        if (c != C_BARRIER)
                            MPI_Barrier(MPI_COMM_WORLD);
                    } else {
                        run_once(c, size, sbuf, rbuf);
                    }
                }
                double mine = (MPI_Wtime() - t0) * 1e6 / (double)n, slowest = 0, in = inside * 1e6 / (double)n,
                       insum = 0;
                MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
                MPI_Reduce(&in, &insum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
                t[r] = slowest;
                tin[r] = insum / nranks;
            }
            if (rank == 0) {
                double best = bench_min(t, reps), med = bench_median(t, reps);
                if (split)
                    printf("  %10zu %9ld %12.3f %12.3f %14.3f %14.3f\n", size, n, best, med, bench_min(tin, reps),
                           bench_median(tin, reps));
                else
                    printf("  %10zu %9ld %12.3f %12.3f\n", size, n, best, med);
                fflush(stdout);
            }
            if (c == C_BARRIER)
                break;
        }
    }
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
