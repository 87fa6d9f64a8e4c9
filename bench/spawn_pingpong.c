/* spawn_pingpong: ping-pong between a process and the child it spawned (dynamic processes).
 *
 * The single process of the job (start it with -n 1) spawns one copy of this program
 * (MPI_Comm_spawn, MPI_COMM_SELF) and measures, over the intercommunicator they share, the
 * one-way latency of a ping-pong (round trip / 2) at each size, REPS timed loops of ITERS round
 * trips (ITERS scaled down above 8 KiB), every message's contents checked once before the loops.
 * Prints best and median per size, and the bandwidth of the best loop. Also prints the time the
 * spawn took (MPI_Comm_spawn's return, as the parent sees it).
 *
 * On one node this compares the ways two jobs' processes can talk (Aptus: APTUS_SMP_JOBS=1,
 * shared memory, against 0, UD) with the same pair inside one job (pt2pt_latency -n 2).
 *
 * With -H the child runs on another host (info key "host"): the pair then talks over the network,
 * as two jobs on two nodes do (Aptus: over UD, or the RC channels its send rules name).
 *
 * Usage: spawn_pingpong [-m MAXSIZE] [-i ITERS] [-r REPS] [-H HOST]
 *   -m MAXSIZE  largest size, default 1M (sizes 1, 8, 64, ... by 8x, and MAXSIZE)
 *   -i ITERS    round trips per timed loop for sizes <= 8 KiB (default 10000)
 *   -r REPS     timed loops per size (default 5)
 *   -H HOST     where the child runs (MPI_Comm_spawn's info key "host"; default: the launcher's choice)
 * Sizes accept K/M/G suffixes (binary). Plain MPI; builds with any mpicc. */
#include "bench_common.h"

#define TAG 21

static void usage(void)
{
    printf("usage: spawn_pingpong [-m MAXSIZE] [-i ITERS] [-r REPS] [-H HOST]\n");
}

/* iters round trips of size bytes; the parent (first) sends first. Seconds per round trip. */
static double rounds(MPI_Comm c, int first, unsigned char *buf, size_t size, long iters)
{
    double t0 = MPI_Wtime();
    for (long i = 0; i < iters; i++) {
        if (first) {
            MPI_Send(buf, (int)size, MPI_BYTE, 0, TAG, c);
            MPI_Recv(buf, (int)size, MPI_BYTE, 0, TAG, c, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(buf, (int)size, MPI_BYTE, 0, TAG, c, MPI_STATUS_IGNORE);
            MPI_Send(buf, (int)size, MPI_BYTE, 0, TAG, c);
        }
    }
    return (MPI_Wtime() - t0) / (double)iters;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm parent, c;
    MPI_Comm_get_parent(&parent);
    int is_parent = parent == MPI_COMM_NULL, rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    size_t max = BENCH_MIB;
    long iters = 10000;
    int reps = 5, opt;
    const char *host = NULL;
    while ((opt = getopt(argc, argv, "m:i:r:H:h")) != -1) {
        if (opt == 'H')
            host = optarg;
        else if (opt == 'm')
            max = bench_parse_size(optarg, "-m");
        else if (opt == 'i')
            iters = bench_parse_int(optarg, "-i", 1);
        else if (opt == 'r')
            reps = bench_parse_int(optarg, "-r", 1);
        else
            return bench_usage_exit(rank, usage, opt == 'h' ? 0 : 2);
    }
    if (reps > BENCH_MAX_REPS)
        reps = BENCH_MAX_REPS;
    if (is_parent && size != 1)
        bench_die("start it as one process (mpiexec -n 1): it spawns its partner");
    double spawn_s = 0;
    if (is_parent) {
        MPI_Info info = MPI_INFO_NULL;
        if (host) {
            MPI_Info_create(&info);
            MPI_Info_set(info, "host", host);
        }
        double t0 = MPI_Wtime();
        /* (the child gets the same options: argv past the program name) */
        MPI_Comm_spawn(argv[0], argc > 1 ? argv + 1 : MPI_ARGV_NULL, 1, info, 0, MPI_COMM_SELF, &c,
                       MPI_ERRCODES_IGNORE);
        spawn_s = MPI_Wtime() - t0;
        if (info != MPI_INFO_NULL)
            MPI_Info_free(&info);
    } else {
        c = parent;
    }
    unsigned char *buf = bench_alloc(max > 0 ? max : 1);
    size_t sizes[16];
    int n = 0;
    for (size_t s = 1; s < max && n < 15; s *= 8)
        sizes[n++] = s;
    sizes[n++] = max;
    double *t = malloc((size_t)reps * sizeof *t);
    if (!t)
        bench_die("out of memory");
    if (is_parent) {
        char lib[256];
        bench_library_name(lib, sizeof lib);
        printf("# benchmark: spawn_pingpong | library: %s | ranks: 1 + 1 spawned%s%s | spawn: %.1f ms\n", lib,
               host ? " on " : "", host ? host : "", spawn_s * 1e3);
        printf("# table: latency  unit: us  better: lower\n");
        printf("#  size  iters  best  median  best_MB/s\n");
    }
    for (int k = 0; k < n; k++) {
        size_t s = sizes[k];
        long it = s <= 8 * BENCH_KIB ? iters : iters * 8 * (long)BENCH_KIB / (long)s;
        if (it < 20)
            it = 20;
        /* one checked exchange each way */
        if (is_parent) {
            bench_fill(buf, s, 1);
            MPI_Send(buf, (int)s, MPI_BYTE, 0, TAG, c);
            MPI_Recv(buf, (int)s, MPI_BYTE, 0, TAG, c, MPI_STATUS_IGNORE);
            bench_verify(buf, s, 2, "the child's answer");
        } else {
            MPI_Recv(buf, (int)s, MPI_BYTE, 0, TAG, c, MPI_STATUS_IGNORE);
            bench_verify(buf, s, 1, "the parent's message");
            bench_fill(buf, s, 2);
            MPI_Send(buf, (int)s, MPI_BYTE, 0, TAG, c);
        }
        rounds(c, is_parent, buf, s, it / 10 + 1); /* warm-up */
        for (int r = 0; r < reps; r++)
            t[r] = rounds(c, is_parent, buf, s, it) / 2 * 1e6;
        if (is_parent) {
            double best = bench_min(t, reps), med = bench_median(t, reps);
            printf("%zu %ld %.3f %.3f %.1f\n", s, it, best, med, (double)s / best);
        }
    }
    free(t);
    MPI_Comm_disconnect(&c);
    MPI_Finalize();
    return 0;
}
