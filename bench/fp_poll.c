/* fp_poll: small-message latency against the number of fast paths the receiver polls (seed 000,
 * Figure 3b). Rank 0 on one node, ranks 1..N on another: every rank 1..N exchanges enough small
 * messages with rank 0 for the allocation rules to open a fast path each way (rank 0 then owns N
 * blocks and polls them all in every progress pass), the ranks 2..N go idle (a nonblocking barrier
 * tested every 20 ms, so they leave the cores to the two that measure), and ranks 0 and 1 ping-pong
 * an 8-byte message. With rc-fp out of the send chain (or APTUS_RCFP_MAX=0) the same job measures
 * rc-sr, whose cost does not grow with the peers (one shared receive context).
 *
 * usage: fp_poll [-s BYTES] [-i ITERS] [-r REPEATS] [-c LABEL]
 * Output: one comment line, one row:
 *   config peers polled one_way_best_us one_way_median_us */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__has_include)
#if __has_include(<mpix_aptus.h>)
#include <mpix_aptus.h>
#endif
#endif

static unsigned long long counter(const char *name)
{
#ifdef MPIX_APTUS_COUNTERS
    unsigned long long v = 0;
    if (MPIX_Aptus_counter(name, &v) == MPI_SUCCESS)
        return v;
#else
    (void)name;
#endif
    return 0;
}

/* n round trips of `bytes` with peer, this side sending first when `first`. */
static void pingpong(char *buf, int bytes, int first, int peer, int n)
{
    for (int i = 0; i < n; i++) {
        if (first)
            MPI_Send(buf, bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
        MPI_Recv(buf, bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (!first)
            MPI_Send(buf, bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    int bytes = 8, iters = 20000, reps = 7;
    const char *label = "-";
    MPI_Init(&argc, &argv);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-s") && i + 1 < argc)
            bytes = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-i") && i + 1 < argc)
            iters = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-r") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-c") && i + 1 < argc)
            label = argv[++i];
    }
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN); /* (counters of channels not in use) */
    if (size < 2 || reps < 1 || reps > 100 || bytes < 1 || bytes > 8192)
        MPI_Abort(MPI_COMM_WORLD, 2);
    char buf[8192] = { 0 };
    /* open the fast paths: 40 small round trips with rank 0, one peer after another */
    for (int r = 1; r < size; r++)
        if (rank == 0 || rank == r)
            pingpong(buf, 8, rank == 0, rank == 0 ? r : 0, 40);
    /* rank 0: wait (progress only) until it polls a block per peer, or 10 s */
    if (rank == 0) {
        double t0 = MPI_Wtime();
        int flag;
        while (counter("rcfp.blocks") < (unsigned long long)(size - 1) && MPI_Wtime() - t0 < 10)
            MPI_Iprobe(MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    }
    unsigned long long polled = counter("rcfp.blocks");
    MPI_Request bar;
    double lat[100];
    if (rank >= 2) {
        MPI_Ibarrier(MPI_COMM_WORLD, &bar);
        int done = 0;
        struct timespec ts = { 0, 20 * 1000 * 1000 };
        while (!done) {
            nanosleep(&ts, NULL);
            MPI_Test(&bar, &done, MPI_STATUS_IGNORE);
        }
    } else {
        int peer = 1 - rank;
        pingpong(buf, bytes, rank == 0, peer, 1000); /* warm-up */
        for (int k = 0; k < reps; k++) {
            double t0 = MPI_Wtime();
            pingpong(buf, bytes, rank == 0, peer, iters);
            lat[k] = (MPI_Wtime() - t0) * 1e6 / (2.0 * iters);
        }
        MPI_Ibarrier(MPI_COMM_WORLD, &bar);
        MPI_Wait(&bar, MPI_STATUS_IGNORE);
    }
    if (rank == 0) {
        qsort(lat, (size_t)reps, sizeof lat[0], cmp_double);
        printf("# fp_poll: rank 0 and %d peers on another node; %d-byte ping-pong with rank 1, %d repeats of %d "
               "round trips; polled = fast-path blocks rank 0 polls\n",
               size - 1, bytes, reps, iters);
        printf("# %-14s %5s %6s %9s %9s\n", "config", "peers", "polled", "best_us", "median_us");
        printf("%-16s %5d %6llu %9.3f %9.3f\n", label, size - 1, polled, lat[0], lat[reps / 2]);
    }
    MPI_Finalize();
    return 0;
}
