/* msg_rate: aggregate message rate of several sender/receiver pairs.
 *
 * With N ranks, rank i < N/2 sends to rank i + N/2 (with an odd N the last rank
 * only waits in the final barrier). Per window, each sender posts W MPI_Isend of
 * SIZE bytes and waits for them; its receiver posts W MPI_Irecv into distinct
 * page-aligned buffers, waits, and answers with a 0-byte acknowledgement that the
 * sender receives before its next window. All pairs run at the same time.
 *   messages/s = pairs * W * windows / time of the slowest rank
 *   MB/s       = messages/s * SIZE / 10^6
 * For every size: an untimed, verified exchange per pair, an untimed warm-up,
 * then REPS timed loops; prints the best (highest) and the median.
 *
 * Usage: msg_rate [-w WINDOW] [-m MAXSIZE] [-s SIZE] [-i WINDOWS] [-r REPS]
 *   -w WINDOW   messages in flight per window (default 64)
 *   -m MAXSIZE  largest size, default 64K (sizes 1, 2, 4, ... MAXSIZE)
 *   -s SIZE     measure only this size
 *   -i WINDOWS  most windows per timed loop (default 1000; fewer for large
 *               sizes, so that a pair moves about 64 MiB per loop, at least 2)
 *   -r REPS     timed loops per size (default 5) */
#include "bench_common.h"

#include <limits.h>

#define TAG_DATA   31
#define TAG_ACK    32
#define TAG_CHECK  33
#define LOOP_BYTES ((double)(64 * BENCH_MIB))
#define CHECK_MSGS 4

static void usage(void)
{
    fprintf(stderr, "usage: msg_rate [-w WINDOW] [-m MAXSIZE] [-s SIZE] [-i WINDOWS] [-r REPS]\n");
}

static long windows_for(size_t size, int w, long max_windows)
{
    long n = (long)(LOOP_BYTES / ((double)w * (double)(size ? size : 1)));
    if (n > max_windows)
        n = max_windows;
    return n < 2 ? 2 : n;
}

static void run(int sender, int peer, unsigned char *sbuf, unsigned char **slot, MPI_Request *req, int w, int count,
                long windows)
{
    for (long it = 0; it < windows; it++) {
        if (sender) {
            for (int j = 0; j < w; j++)
                MPI_Isend(sbuf, count, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD, &req[j]);
            MPI_Waitall(w, req, MPI_STATUSES_IGNORE);
            MPI_Recv(NULL, 0, MPI_BYTE, peer, TAG_ACK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            for (int j = 0; j < w; j++)
                MPI_Irecv(slot[j], count, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD, &req[j]);
            MPI_Waitall(w, req, MPI_STATUSES_IGNORE);
            MPI_Send(NULL, 0, MPI_BYTE, peer, TAG_ACK, MPI_COMM_WORLD);
        }
    }
}

/* Untimed exchange: each sender sends up to CHECK_MSGS messages, each with a
 * pattern that depends on the pair and the message index; the receiver checks
 * data, size, source and order. */
static void check_once(int sender, int pairidx, int peer, unsigned char **slot, MPI_Request *req, MPI_Status *st, int w,
                       size_t size)
{
    int n = w < CHECK_MSGS ? w : CHECK_MSGS, count = (int)size;
    if (sender) {
        unsigned char *tmp[CHECK_MSGS];
        for (int j = 0; j < n; j++) {
            tmp[j] = bench_alloc(size);
            bench_fill(tmp[j], size, 1000u * (unsigned)pairidx + (unsigned)j);
            MPI_Isend(tmp[j], count, MPI_BYTE, peer, TAG_CHECK, MPI_COMM_WORLD, &req[j]);
        }
        MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
        MPI_Recv(NULL, 0, MPI_BYTE, peer, TAG_ACK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int j = 0; j < n; j++)
            free(tmp[j]);
    } else {
        for (int j = 0; j < n; j++) {
            memset(slot[j], 0, size);
            MPI_Irecv(slot[j], count, MPI_BYTE, peer, TAG_CHECK, MPI_COMM_WORLD, &req[j]);
        }
        MPI_Waitall(n, req, st);
        for (int j = 0; j < n; j++) {
            bench_check_status(&st[j], size, peer, "msg_rate");
            bench_verify(slot[j], size, 1000u * (unsigned)pairidx + (unsigned)j, "msg_rate");
        }
        MPI_Send(NULL, 0, MPI_BYTE, peer, TAG_ACK, MPI_COMM_WORLD);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, nranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);

    size_t maxsize = 64 * BENCH_KIB, single = 0;
    int have_single = 0, window = 64, reps = 5;
    long max_windows = 1000;
    int opt;
    while ((opt = getopt(argc, argv, "w:m:s:i:r:h")) != -1) {
        switch (opt) {
        case 'w': window = bench_parse_int(optarg, "window (-w)", 1); break;
        case 'm': maxsize = bench_parse_size(optarg, "maximum size (-m)"); break;
        case 's':
            single = bench_parse_size(optarg, "size (-s)");
            have_single = 1;
            break;
        case 'i': max_windows = bench_parse_int(optarg, "windows (-i)", 1); break;
        case 'r': reps = bench_parse_int(optarg, "repetitions (-r)", 1); break;
        case 'h': return bench_usage_exit(rank, usage, 0);
        default: return bench_usage_exit(rank, usage, 1);
        }
    }
    if (reps > BENCH_MAX_REPS)
        bench_die("at most %d repetitions", BENCH_MAX_REPS);
    if (nranks < 2)
        bench_die("msg_rate needs at least 2 ranks (got %d)", nranks);
    if (have_single)
        maxsize = single;
    if (maxsize > (size_t)INT_MAX)
        bench_die("sizes above %d bytes are not supported", INT_MAX);
    if ((double)window * (double)maxsize > 2.0 * 1024 * 1024 * 1024)
        bench_die("window * max size above 2 GiB of receive buffers; lower -w or -m");

    int npairs = nranks / 2;
    int active = rank < 2 * npairs;
    int sender = rank < npairs;
    int peer = sender ? rank + npairs : rank - npairs;
    int pairidx = sender ? rank : rank - npairs;

    MPI_Comm comm;
    MPI_Comm_split(MPI_COMM_WORLD, active ? 0 : MPI_UNDEFINED, rank, &comm);

    if (active) {
        char lib[256];
        bench_library_name(lib, sizeof lib);
        unsigned char *sbuf = bench_alloc(maxsize);
        unsigned char **slot = malloc(sizeof *slot * (size_t)window);
        MPI_Request *req = malloc(sizeof *req * (size_t)window);
        MPI_Status *st = malloc(sizeof *st * (size_t)window);
        if (!slot || !req || !st)
            bench_die("out of memory");
        for (int j = 0; j < window; j++)
            slot[j] = bench_alloc(maxsize);
        bench_fill(sbuf, maxsize, 7);

        size_t sizes[64];
        int nsizes = bench_sizes(sizes, 64, maxsize, 0, have_single, single);
        double rate[BENCH_MAX_REPS];

        if (rank == 0) {
            printf("# benchmark: msg_rate | library: %s | ranks: %d (%d pairs i -> i+%d) | reps: %d | window: %d | "
                   "MB/s = 10^6 B/s\n",
                   lib, nranks, npairs, npairs, reps, window);
            printf("# table: msg_rate  unit: msgs/s  better: higher  (aggregate over all pairs)\n");
            printf("# %10s %9s %14s %14s %12s %12s %6s\n", "size", "windows", "best_msgs/s", "median_msgs/s",
                   "best_MBps", "median_MBps", "pairs");
            fflush(stdout);
        }
        for (int k = 0; k < nsizes; k++) {
            size_t size = sizes[k];
            int count = (int)size;
            long n = windows_for(size, window, max_windows);
            double msgs = (double)npairs * window * (double)n;

            check_once(sender, pairidx, peer, slot, req, st, window, size);
            run(sender, peer, sbuf, slot, req, window, count, n / 10 > 1 ? n / 10 : 1); /* warm-up */
            for (int r = 0; r < reps; r++) {
                MPI_Barrier(comm);
                double t0 = MPI_Wtime();
                run(sender, peer, sbuf, slot, req, window, count, n);
                double dt = MPI_Wtime() - t0, dtmax = dt;
                MPI_Reduce(&dt, &dtmax, 1, MPI_DOUBLE, MPI_MAX, 0, comm); /* outside timing */
                rate[r] = msgs / dtmax;
            }
            if (rank == 0) {
                double best = bench_max(rate, reps);
                double med = bench_median(rate, reps);
                printf("  %10zu %9ld %14.0f %14.0f %12.2f %12.2f %6d\n", size, n, best, med, best * (double)size / 1e6,
                       med * (double)size / 1e6, npairs);
                fflush(stdout);
            }
        }
        for (int j = 0; j < window; j++)
            free(slot[j]);
        free(slot);
        free(req);
        free(st);
        free(sbuf);
        MPI_Comm_free(&comm);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
