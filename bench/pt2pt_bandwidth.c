/* pt2pt_bandwidth: streaming bandwidth between ranks 0 and 1.
 *
 * Uni-directional: rank 0 posts a window of W MPI_Isend of SIZE bytes to rank 1
 * and waits for them; rank 1 posts W MPI_Irecv, waits, and answers with a small
 * acknowledgement that rank 0 receives before the next window.
 *   bandwidth = SIZE * W * windows / time (measured on rank 0, ack included).
 * Bi-directional: both ranks post W MPI_Irecv and W MPI_Isend and wait for all.
 *   bandwidth = 2 * SIZE * W * windows / time (slower of the two ranks).
 * Every message of a window has its own page-aligned receive buffer (no two
 * pending receives overlap); the send side uses one buffer. MB/s = 10^6 bytes/s.
 *
 * For every size and direction: an untimed, verified exchange, an untimed
 * warm-up, then REPS timed loops; prints the best (highest) and the median.
 * Ranks other than 0 and 1 wait in a final barrier.
 *
 * Usage: pt2pt_bandwidth [-w WINDOW] [-m MAXSIZE] [-s SIZE] [-i WINDOWS] [-r REPS] [-u|-b]
 *   -w WINDOW   messages in flight per window (default 64)
 *   -m MAXSIZE  largest size, default 4M (sizes 1, 2, 4, ... MAXSIZE)
 *   -s SIZE     measure only this size
 *   -i WINDOWS  most windows per timed loop (default 1000; fewer for large
 *               sizes, so that a loop moves about 128 MiB, at least 2 windows)
 *   -r REPS     timed loops per size (default 5)
 *   -u / -b     uni-directional only / bi-directional only (default both) */
#include "bench_common.h"

#include <limits.h>

#define TAG_DATA   21
#define TAG_ACK    22
#define TAG_CHECK  23
#define LOOP_BYTES ((double)(128 * BENCH_MIB))
#define CHECK_MSGS 4

enum mode { UNI = 0, BI = 1 };

static void usage(void)
{
    fprintf(stderr, "usage: pt2pt_bandwidth [-w WINDOW] [-m MAXSIZE] [-s SIZE] [-i WINDOWS] [-r REPS] [-u|-b]\n");
}

static long windows_for(size_t size, int w, long max_windows)
{
    double per_window = (double)w * (double)(size ? size : 1);
    long n = (long)(LOOP_BYTES / per_window);
    if (n > max_windows)
        n = max_windows;
    return n < 2 ? 2 : n;
}

struct bufs {
    unsigned char *sbuf;
    unsigned char **slot; /* W receive buffers */
    MPI_Request *req;     /* 2 * W */
    MPI_Status *st;       /* 2 * W */
    int w;
};

static void run_uni(int me, struct bufs *b, int count, long windows, MPI_Comm comm)
{
    int w = b->w;
    for (long it = 0; it < windows; it++) {
        if (me == 0) {
            for (int j = 0; j < w; j++)
                MPI_Isend(b->sbuf, count, MPI_BYTE, 1, TAG_DATA, comm, &b->req[j]);
            MPI_Waitall(w, b->req, MPI_STATUSES_IGNORE);
            MPI_Recv(NULL, 0, MPI_BYTE, 1, TAG_ACK, comm, MPI_STATUS_IGNORE);
        } else {
            for (int j = 0; j < w; j++)
                MPI_Irecv(b->slot[j], count, MPI_BYTE, 0, TAG_DATA, comm, &b->req[j]);
            MPI_Waitall(w, b->req, MPI_STATUSES_IGNORE);
            MPI_Send(NULL, 0, MPI_BYTE, 0, TAG_ACK, comm);
        }
    }
}

static void run_bi(int me, struct bufs *b, int count, long windows, MPI_Comm comm)
{
    int w = b->w, peer = 1 - me;
    for (long it = 0; it < windows; it++) {
        for (int j = 0; j < w; j++)
            MPI_Irecv(b->slot[j], count, MPI_BYTE, peer, TAG_DATA, comm, &b->req[j]);
        for (int j = 0; j < w; j++)
            MPI_Isend(b->sbuf, count, MPI_BYTE, peer, TAG_DATA, comm, &b->req[w + j]);
        MPI_Waitall(2 * w, b->req, MPI_STATUSES_IGNORE);
    }
}

/* Untimed, verified exchange. Uni: CHECK_MSGS messages 0 -> 1, each with its own
 * pattern (checks data, sizes and ordering). Bi: both ranks at once, each
 * message again with its own pattern. The messages are sent from temporary
 * buffers so that every message of the check is distinct. */
static void check_once(int me, enum mode mode, struct bufs *b, size_t size, MPI_Comm comm)
{
    int count = (int)size, peer = 1 - me;
    int n = b->w < CHECK_MSGS ? b->w : CHECK_MSGS;
    unsigned char *tmp[CHECK_MSGS];
    for (int j = 0; j < n; j++)
        tmp[j] = bench_alloc(size);
    if (mode == UNI) {
        if (me == 0) {
            for (int j = 0; j < n; j++) {
                bench_fill(tmp[j], size, 100u + (unsigned)j);
                MPI_Isend(tmp[j], count, MPI_BYTE, 1, TAG_CHECK, comm, &b->req[j]);
            }
            MPI_Waitall(n, b->req, MPI_STATUSES_IGNORE);
            MPI_Recv(NULL, 0, MPI_BYTE, 1, TAG_ACK, comm, MPI_STATUS_IGNORE);
        } else {
            for (int j = 0; j < n; j++) {
                memset(b->slot[j], 0, size);
                MPI_Irecv(b->slot[j], count, MPI_BYTE, 0, TAG_CHECK, comm, &b->req[j]);
            }
            MPI_Waitall(n, b->req, b->st);
            for (int j = 0; j < n; j++) {
                bench_check_status(&b->st[j], size, 0, "pt2pt_bandwidth uni");
                bench_verify(b->slot[j], size, 100u + (unsigned)j, "pt2pt_bandwidth uni");
            }
            MPI_Send(NULL, 0, MPI_BYTE, 0, TAG_ACK, comm);
        }
    } else {
        for (int j = 0; j < n; j++) {
            memset(b->slot[j], 0, size);
            MPI_Irecv(b->slot[j], count, MPI_BYTE, peer, TAG_CHECK, comm, &b->req[j]);
        }
        for (int j = 0; j < n; j++) {
            bench_fill(tmp[j], size, 200u + 10u * (unsigned)me + (unsigned)j);
            MPI_Isend(tmp[j], count, MPI_BYTE, peer, TAG_CHECK, comm, &b->req[n + j]);
        }
        MPI_Waitall(2 * n, b->req, b->st);
        for (int j = 0; j < n; j++) {
            bench_check_status(&b->st[j], size, peer, "pt2pt_bandwidth bi");
            bench_verify(b->slot[j], size, 200u + 10u * (unsigned)peer + (unsigned)j, "pt2pt_bandwidth bi");
        }
    }
    for (int j = 0; j < n; j++)
        free(tmp[j]);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, nranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);

    size_t maxsize = 4 * BENCH_MIB, single = 0;
    int have_single = 0, window = 64, reps = 5, do_uni = 1, do_bi = 1;
    long max_windows = 1000;
    int opt;
    while ((opt = getopt(argc, argv, "w:m:s:i:r:ubh")) != -1) {
        switch (opt) {
        case 'w': window = bench_parse_int(optarg, "window (-w)", 1); break;
        case 'm': maxsize = bench_parse_size(optarg, "maximum size (-m)"); break;
        case 's':
            single = bench_parse_size(optarg, "size (-s)");
            have_single = 1;
            break;
        case 'i': max_windows = bench_parse_int(optarg, "windows (-i)", 1); break;
        case 'r': reps = bench_parse_int(optarg, "repetitions (-r)", 1); break;
        case 'u':
            do_uni = 1;
            do_bi = 0;
            break;
        case 'b':
            do_bi = 1;
            do_uni = 0;
            break;
        case 'h': return bench_usage_exit(rank, usage, 0);
        default: return bench_usage_exit(rank, usage, 1);
        }
    }
    if (reps > BENCH_MAX_REPS)
        bench_die("at most %d repetitions", BENCH_MAX_REPS);
    if (nranks < 2)
        bench_die("pt2pt_bandwidth needs at least 2 ranks (got %d)", nranks);
    if (have_single)
        maxsize = single;
    if (maxsize > (size_t)INT_MAX)
        bench_die("sizes above %d bytes are not supported", INT_MAX);
    if ((double)window * (double)maxsize > 2.0 * 1024 * 1024 * 1024)
        bench_die("window * max size above 2 GiB of receive buffers; lower -w or -m");

    MPI_Comm pair;
    MPI_Comm_split(MPI_COMM_WORLD, rank < 2 ? 0 : MPI_UNDEFINED, rank, &pair);

    if (rank < 2) {
        char lib[256];
        bench_library_name(lib, sizeof lib);
        struct bufs b;
        b.w = window;
        b.sbuf = bench_alloc(maxsize);
        b.slot = malloc(sizeof *b.slot * (size_t)window);
        b.req = malloc(sizeof *b.req * 2 * (size_t)window);
        b.st = malloc(sizeof *b.st * 2 * (size_t)window);
        if (!b.slot || !b.req || !b.st)
            bench_die("out of memory");
        for (int j = 0; j < window; j++)
            b.slot[j] = bench_alloc(maxsize);
        bench_fill(b.sbuf, maxsize, 7);

        size_t sizes[64];
        int nsizes = bench_sizes(sizes, 64, maxsize, 0, have_single, single);
        double bw[BENCH_MAX_REPS];

        if (rank == 0) {
            printf("# benchmark: pt2pt_bandwidth | library: %s | ranks: %d (0 -> 1) | reps: %d | window: %d | MB/s = "
                   "10^6 B/s\n",
                   lib, nranks, reps, window);
            fflush(stdout);
        }
        for (int mode = UNI; mode <= BI; mode++) {
            if ((mode == UNI && !do_uni) || (mode == BI && !do_bi))
                continue;
            if (rank == 0) {
                printf("# table: %s  unit: MB/s  better: higher  (%s)\n",
                       mode == UNI ? "uni_bandwidth" : "bi_bandwidth",
                       mode == UNI ? "window of Isends 0->1, then ack" : "both ranks: window of Irecv+Isend");
                printf("# %10s %9s %12s %12s %7s\n", "size", "windows", "best_MBps", "median_MBps", "window");
                fflush(stdout);
            }
            for (int k = 0; k < nsizes; k++) {
                size_t size = sizes[k];
                int count = (int)size;
                long n = windows_for(size, window, max_windows);
                double bytes = (double)size * window * (double)n * (mode == BI ? 2.0 : 1.0);

                check_once(rank, (enum mode)mode, &b, size, pair);
                long warm = n / 10 > 1 ? n / 10 : 1;
                if (mode == UNI)
                    run_uni(rank, &b, count, warm, pair);
                else
                    run_bi(rank, &b, count, warm, pair);
                for (int r = 0; r < reps; r++) {
                    MPI_Barrier(pair);
                    double t0 = MPI_Wtime();
                    if (mode == UNI)
                        run_uni(rank, &b, count, n, pair);
                    else
                        run_bi(rank, &b, count, n, pair);
                    double dt = MPI_Wtime() - t0, dtmax = dt;
                    if (mode == BI) /* outside the timed region */
                        MPI_Reduce(&dt, &dtmax, 1, MPI_DOUBLE, MPI_MAX, 0, pair);
                    bw[r] = bytes / dtmax / 1e6;
                }
                if (rank == 0) {
                    double best = bench_max(bw, reps);
                    double med = bench_median(bw, reps);
                    printf("  %10zu %9ld %12.2f %12.2f %7d\n", size, n, best, med, window);
                    fflush(stdout);
                }
            }
        }
        for (int j = 0; j < window; j++)
            free(b.slot[j]);
        free(b.slot);
        free(b.req);
        free(b.st);
        free(b.sbuf);
        MPI_Comm_free(&pair);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
