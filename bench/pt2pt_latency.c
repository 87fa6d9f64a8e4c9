/* pt2pt_latency: ping-pong latency between ranks 0 and 1.
 *
 * Rank 0 sends a message of SIZE bytes to rank 1 with MPI_Send, rank 1 answers
 * with a message of the same size; one-way latency = round-trip time / 2.
 * For every size: one untimed exchange whose data is verified, an untimed
 * warm-up, then REPS timed loops of ITERS round trips each (ITERS is scaled
 * down for sizes above 8 KiB). Prints the best (lowest) and the median of the
 * REPS per-loop averages, in microseconds. Ranks other than 0 and 1 wait in a
 * final barrier.
 *
 * With -d, every round trip is also timed on its own, and the table adds the
 * distribution of the one-way latencies of all timed round trips: median, mean,
 * 99th percentile and maximum (the figures a lossy link changes: most round
 * trips are fast, a few wait for a retransmission).
 *
 * Usage: pt2pt_latency [-m MAXSIZE] [-s SIZE] [-i ITERS] [-r REPS] [-d]
 *   -m MAXSIZE  largest size, default 4M (sizes 0, 1, 2, 4, ... MAXSIZE)
 *   -s SIZE     measure only this size
 *   -i ITERS    round trips per timed loop for sizes <= 8 KiB (default 10000)
 *   -r REPS     timed loops per size (default 5)
 *   -d          per-round-trip distribution (median, mean, p99, max)
 * Sizes accept K/M/G suffixes (binary). Plain MPI; builds with any mpicc. */
#include "bench_common.h"

#include <limits.h>

#define TAG_PING 11
#define TAG_PONG 12

static void usage(void)
{
    fprintf(stderr, "usage: pt2pt_latency [-m MAXSIZE] [-s SIZE] [-i ITERS] [-r REPS] [-d]\n");
}

static long iters_for(size_t size, long iters)
{
    if (size <= 8 * BENCH_KIB)
        return iters;
    long n = (long)((double)iters * (double)(8 * BENCH_KIB) / (double)size);
    return n < 10 ? 10 : n;
}

/* n round trips; rank 0 starts and, with lat, times each (one-way microseconds). */
static void round_trips(int me, unsigned char *sbuf, unsigned char *rbuf, int count, long n, MPI_Comm comm, double *lat)
{
    if (me == 0) {
        for (long i = 0; i < n; i++) {
            double t0 = lat ? MPI_Wtime() : 0;
            MPI_Send(sbuf, count, MPI_BYTE, 1, TAG_PING, comm);
            MPI_Recv(rbuf, count, MPI_BYTE, 1, TAG_PONG, comm, MPI_STATUS_IGNORE);
            if (lat)
                lat[i] = (MPI_Wtime() - t0) * 1e6 / 2.0;
        }
    } else {
        for (long i = 0; i < n; i++) {
            MPI_Recv(rbuf, count, MPI_BYTE, 0, TAG_PING, comm, MPI_STATUS_IGNORE);
            MPI_Send(sbuf, count, MPI_BYTE, 0, TAG_PONG, comm);
        }
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Untimed exchange with distinct patterns in each direction, verified on both sides. */
static void check_once(int me, unsigned char *sbuf, unsigned char *rbuf, size_t size, MPI_Comm comm)
{
    int count = (int)size;
    MPI_Status st;
    if (me == 0) {
        bench_fill(sbuf, size, 1);
        memset(rbuf, 0, size);
        MPI_Send(sbuf, count, MPI_BYTE, 1, TAG_PING, comm);
        MPI_Recv(rbuf, count, MPI_BYTE, 1, TAG_PONG, comm, &st);
        bench_check_status(&st, size, 1, "pt2pt_latency pong");
        bench_verify(rbuf, size, 2, "pt2pt_latency pong");
    } else {
        bench_fill(sbuf, size, 2);
        memset(rbuf, 0, size);
        MPI_Recv(rbuf, count, MPI_BYTE, 0, TAG_PING, comm, &st);
        bench_check_status(&st, size, 0, "pt2pt_latency ping");
        bench_verify(rbuf, size, 1, "pt2pt_latency ping");
        MPI_Send(sbuf, count, MPI_BYTE, 0, TAG_PONG, comm);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, nranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);

    size_t maxsize = 4 * BENCH_MIB, single = 0;
    int have_single = 0;
    long iters = 10000;
    int reps = 5;
    int opt, dist = 0;
    while ((opt = getopt(argc, argv, "m:s:i:r:dh")) != -1) {
        switch (opt) {
        case 'd': dist = 1; break;
        case 'm': maxsize = bench_parse_size(optarg, "maximum size (-m)"); break;
        case 's':
            single = bench_parse_size(optarg, "size (-s)");
            have_single = 1;
            break;
        case 'i': iters = bench_parse_int(optarg, "iterations (-i)", 1); break;
        case 'r': reps = bench_parse_int(optarg, "repetitions (-r)", 1); break;
        case 'h': return bench_usage_exit(rank, usage, 0);
        default: return bench_usage_exit(rank, usage, 1);
        }
    }
    if (reps > BENCH_MAX_REPS)
        bench_die("at most %d repetitions", BENCH_MAX_REPS);
    if (nranks < 2)
        bench_die("pt2pt_latency needs at least 2 ranks (got %d)", nranks);
    if (have_single)
        maxsize = single;
    if (maxsize > (size_t)INT_MAX)
        bench_die("sizes above %d bytes are not supported", INT_MAX);

    MPI_Comm pair;
    MPI_Comm_split(MPI_COMM_WORLD, rank < 2 ? 0 : MPI_UNDEFINED, rank, &pair);

    if (rank < 2) {
        char lib[256];
        bench_library_name(lib, sizeof lib);
        unsigned char *sbuf = bench_alloc(maxsize);
        unsigned char *rbuf = bench_alloc(maxsize);
        size_t sizes[64];
        int nsizes = bench_sizes(sizes, 64, maxsize, 1, have_single, single);
        double t[BENCH_MAX_REPS];

        if (rank == 0) {
            printf("# benchmark: pt2pt_latency | library: %s | ranks: %d (ping-pong 0<->1) | reps: %d | iters: %ld "
                   "(scaled down above 8 KiB)\n",
                   lib, nranks, reps, iters);
            printf("# table: latency  unit: us  better: lower  (one-way = round trip / 2)\n");
            if (dist)
                printf("# %10s %9s %12s %12s %12s %12s %12s %12s\n", "size", "iters", "best_us", "median_us", "p50_us",
                       "mean_us", "p99_us", "max_us");
            else
                printf("# %10s %9s %12s %12s\n", "size", "iters", "best_us", "median_us");
            fflush(stdout);
        }
        for (int k = 0; k < nsizes; k++) {
            size_t size = sizes[k];
            int count = (int)size;
            long n = iters_for(size, iters);

            check_once(rank, sbuf, rbuf, size, pair);
            round_trips(rank, sbuf, rbuf, count, n / 10 > 2 ? n / 10 : 2, pair, NULL); /* warm-up */
            double *lat = dist && rank == 0 ? malloc((size_t)n * (size_t)reps * sizeof *lat) : NULL;
            if (dist && rank == 0 && !lat)
                bench_die("out of memory for %ld latencies", n * reps);
            for (int r = 0; r < reps; r++) {
                MPI_Barrier(pair);
                double t0 = MPI_Wtime();
                round_trips(rank, sbuf, rbuf, count, n, pair, lat ? lat + (size_t)r * (size_t)n : NULL);
                double t1 = MPI_Wtime();
                t[r] = (t1 - t0) * 1e6 / (2.0 * (double)n);
            }
            if (rank == 0) {
                double best = bench_min(t, reps);
                double med = bench_median(t, reps);
                if (lat) {
                    size_t m = (size_t)n * (size_t)reps;
                    double sum = 0;
                    for (size_t i = 0; i < m; i++)
                        sum += lat[i];
                    qsort(lat, m, sizeof *lat, cmp_double);
                    printf("  %10zu %9ld %12.3f %12.3f %12.3f %12.3f %12.3f %12.3f\n", size, n, best, med, lat[m / 2],
                           sum / (double)m, lat[(size_t)((double)(m - 1) * 0.99)], lat[m - 1]);
                    free(lat);
                } else {
                    printf("  %10zu %9ld %12.3f %12.3f\n", size, n, best, med);
                }
                fflush(stdout);
            }
        }
        free(sbuf);
        free(rbuf);
        MPI_Comm_free(&pair);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
