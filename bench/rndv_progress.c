/* rndv_progress: communication progress and overlap of rendezvous messages, in the manner of the
 * progress benchmark of seed 004 (its Figure 8), plus a halo exchange in the manner of its
 * application runs.
 *
 * Progress (2 ranks; every iteration starts with MPI_Barrier):
 *   rank 0 (sender)    compute c1; MPI_Isend; compute c2; MPI_Wait; compute c3
 *   rank 1 (receiver)  compute c4; MPI_Irecv; compute c5; MPI_Wait; compute c6
 * in units of U microseconds (a busy loop on the clock). The ideal time of an iteration is the
 * longer side's computation, max(c1+c2+c3, c4+c5+c6) units: communication fully hidden.
 * Configurations (c1,c2,c3,c4,c5,c6):
 *   sender_early    (0,0,60,30,0,0)   the sender is done with its message before the receiver
 *                                     comes: a protocol that waits for the receiver costs 1.5
 *   both            (0,20,0,5,5,20)   both compute between start and wait
 *   receiver_early  (20,0,0,0,60,0)   the receiver posts and computes; the data can move while
 *                                     it does, if the sender can put it there
 * Halo (any number of ranks, a ring): MPI_Irecv from both neighbours, compute 30, MPI_Isend to
 * both, compute 30, MPI_Waitall; ideal 60 units.
 *
 * Table per configuration, "progress_<config>", one row per size: iterations, best and median
 * (over REPS loops) of time per iteration / ideal, then the best time per iteration in us and
 * the ideal in us. An iteration's time is the slowest rank's (MPI_MAX of the loop times).
 *
 * Usage: rndv_progress [-s SIZES] [-c CONFIGS] [-i ITERS] [-r REPS] [-u US]
 *   -s SIZES    comma-separated message sizes (default 30K,16M)
 *   -c CONFIGS  comma-separated: sender_early,both,receiver_early,halo (default: all)
 *   -i ITERS    iterations per timed loop (default 200; 20 for sizes above 1 MiB)
 *   -r REPS     timed loops (default 5)
 *   -u US       the unit (default 10 us; 100 us for sizes above 1 MiB)
 * Plain MPI; builds with any mpicc: mpicc -O2 -std=c11 -o rndv_progress rndv_progress.c */
#include "bench_common.h"

enum { SENDER_EARLY, BOTH, RECEIVER_EARLY, HALO, NCFG };
static const char *const cfg_name[NCFG] = { "sender_early", "both", "receiver_early", "halo" };
static const int cfg_units[3][6] = { { 0, 0, 60, 30, 0, 0 }, { 0, 20, 0, 5, 5, 20 }, { 20, 0, 0, 0, 60, 0 } };

static int rank, nranks;
static double unit_s;

static void usage(void)
{
    fprintf(stderr, "usage: rndv_progress [-s SIZES] [-c sender_early,both,receiver_early,halo] [-i ITERS] [-r REPS] "
                    "[-u US]\n");
}

static void compute(int units)
{
    if (units <= 0)
        return;
    double end = MPI_Wtime() + units * unit_s;
    volatile double x = 1.0;
    while (MPI_Wtime() < end)
        x = x * 1.0000001 + 1e-9;
}

static unsigned char *sbuf, *rbuf, *sbuf2, *rbuf2;

/* One timed loop of `iters` iterations; returns the slowest rank's time per iteration. */
static double loop(int cfg, size_t n, int iters)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t = 0;
    for (int i = 0; i < iters; i++) {
        /* data that changes from one message to the next, as an application's does (its last
         * byte too: a receiver that watches it sees it change) */
        sbuf[n - 1] = sbuf2[n - 1] = (unsigned char)i;
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        if (cfg == HALO) {
            int left = (rank - 1 + nranks) % nranks, right = (rank + 1) % nranks;
            MPI_Request r[4];
            MPI_Irecv(rbuf, (int)n, MPI_BYTE, left, 1, MPI_COMM_WORLD, &r[0]);
            MPI_Irecv(rbuf2, (int)n, MPI_BYTE, right, 2, MPI_COMM_WORLD, &r[1]);
            compute(30);
            MPI_Isend(sbuf, (int)n, MPI_BYTE, right, 1, MPI_COMM_WORLD, &r[2]);
            MPI_Isend(sbuf2, (int)n, MPI_BYTE, left, 2, MPI_COMM_WORLD, &r[3]);
            compute(30);
            MPI_Waitall(4, r, MPI_STATUSES_IGNORE);
        } else if (rank < 2) {
            const int *c = cfg_units[cfg] + 3 * rank;
            MPI_Request r;
            compute(c[0]);
            if (rank == 0)
                MPI_Isend(sbuf, (int)n, MPI_BYTE, 1, 1, MPI_COMM_WORLD, &r);
            else
                MPI_Irecv(rbuf, (int)n, MPI_BYTE, 0, 1, MPI_COMM_WORLD, &r);
            compute(c[1]);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
            compute(c[2]);
        }
        t += MPI_Wtime() - t0;
    }
    double tmax;
    MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return tmax / iters;
}

static int ideal_units(int cfg)
{
    if (cfg == HALO)
        return 60;
    const int *c = cfg_units[cfg];
    int s = c[0] + c[1] + c[2], r = c[3] + c[4] + c[5];
    return s > r ? s : r;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    char sizes_arg[256] = "30K,16M", cfg_arg[128] = "sender_early,both,receiver_early,halo";
    int iters = 0, reps = 5;
    double unit_us = 0;
    for (int a = 1; a < argc; a++) {
        if (a + 1 >= argc)
            return bench_usage_exit(rank, usage, 1);
        if (!strcmp(argv[a], "-s"))
            snprintf(sizes_arg, sizeof sizes_arg, "%s", argv[++a]);
        else if (!strcmp(argv[a], "-c"))
            snprintf(cfg_arg, sizeof cfg_arg, "%s", argv[++a]);
        else if (!strcmp(argv[a], "-i"))
            iters = bench_parse_int(argv[++a], "-i", 1);
        else if (!strcmp(argv[a], "-r"))
            reps = bench_parse_int(argv[++a], "-r", 1);
        else if (!strcmp(argv[a], "-u"))
            unit_us = bench_parse_seconds(argv[++a], "-u");
        else
            return bench_usage_exit(rank, usage, 1);
    }
    if (nranks < 2)
        bench_die("needs at least 2 ranks");
    if (reps > BENCH_MAX_REPS)
        reps = BENCH_MAX_REPS;
    int want[NCFG] = { 0 };
    bench_parse_choice(cfg_arg, cfg_name, NCFG, want, "-c");
    size_t sizes[16];
    int nsizes = 0;
    for (char *tok = strtok(sizes_arg, ","); tok && nsizes < 16; tok = strtok(NULL, ","))
        sizes[nsizes++] = bench_parse_size(tok, "-s");
    char lib[256];
    bench_library_name(lib, sizeof lib);
    if (rank == 0)
        printf("# benchmark: rndv_progress | library: %s | ranks: %d | progress configurations on ranks 0 and 1\n", lib,
               nranks);
    for (int cfg = 0; cfg < NCFG; cfg++) {
        if (!want[cfg])
            continue;
        if (rank == 0) {
            printf("# table: progress_%s  unit: ratio to ideal  better: lower\n", cfg_name[cfg]);
            printf("#  size  iters  best  median  best_us_per_iter  ideal_us  unit_us\n");
        }
        for (int k = 0; k < nsizes; k++) {
            size_t n = sizes[k];
            int big = n > BENCH_MIB;
            int it = iters ? iters : big ? 20 : 200;
            double u = unit_us > 0 ? unit_us * 1e-6 : big ? 100e-6 : 10e-6;
            unit_s = u;
            sbuf = bench_alloc(n);
            rbuf = bench_alloc(n);
            sbuf2 = bench_alloc(n);
            rbuf2 = bench_alloc(n);
            bench_fill(sbuf, n, 1);
            bench_fill(sbuf2, n, 2);
            loop(cfg, n, it > 5 ? 5 : it); /* warm-up */
            double v[BENCH_MAX_REPS];
            for (int r = 0; r < reps; r++)
                v[r] = loop(cfg, n, it);
            double ideal = ideal_units(cfg) * u;
            double best = bench_min(v, reps), med = bench_median(v, reps);
            if (rank == 0)
                printf("%zu %d %.3f %.3f %.1f %.1f %.0f\n", n, it, best / ideal, med / ideal, best * 1e6, ideal * 1e6,
                       u * 1e6);
            free(sbuf);
            free(rbuf);
            free(sbuf2);
            free(rbuf2);
        }
        if (rank == 0)
            fflush(stdout);
    }
    MPI_Finalize();
    return 0;
}
