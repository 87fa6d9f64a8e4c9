/* nbc_overlap: how much of a nonblocking collective's time computation can hide, in the manner
 * of the OSU micro-benchmarks' osu_ialltoall / osu_ibcast / osu_iallreduce, plus the latency of
 * the nonblocking form against the blocking one.
 *
 * For each collective and size (every loop of ITERS calls is timed on every rank; a loop counts
 * at its slowest rank, MPI_MAX):
 *   blocking   MPI_<Coll> back to back
 *   pure       MPI_I<coll> + MPI_Wait back to back: the communication time
 *   compute    a busy loop calibrated to last `pure` (measured alone)
 *   overall    MPI_I<coll>, the compute loop, MPI_Wait
 *   overlap %  100 * (1 - (overall - compute) / pure), clamped to [0, 100]: the share of the
 *              communication time hidden behind the computation (OSU's definition)
 * Tables in bench/compare.sh's format, per collective: <coll>_overlap (%, per loop against the
 * median pure time), <coll>_pure, <coll>_blocking and <coll>_compute (us), each row the best
 * and the median of REPS loops. With -t N the compute loop calls MPI_Test on the request N
 * times, evenly spread (an application that polls); default 0, as OSU's default.
 * The compute loop does a fixed amount of work by default (calibrated alone), so CPU time that a
 * progress thread takes from it on a shared core makes it longer and counts against overlap.
 * With -w it runs for a fixed wall-clock time instead, in short slices whose elapsed times add
 * up -- exactly what OSU's do_compute_cpu does: time the computation loses to another thread on
 * its core then counts as overlapped (the communication did move during it; the computation got
 * less done). The table header says which.
 *
 * Usage: nbc_overlap [-m MAXSIZE] [-n MINSIZE] [-i ITERS] [-r REPS] [-t TESTS] [-c LIST] [-w]
 *   -w          wall-clock compute loop (OSU's), see above
 *   -m MAXSIZE  largest size, default 1M; -n MINSIZE smallest, default 1K (doubling)
 *   -i ITERS    calls per timed loop for sizes <= 8 KiB (default 200; scaled down above)
 *   -r REPS     timed loops per size (default 5)
 *   -c LIST     comma-separated: ialltoall,ibcast,iallreduce,iallgather (default: all)
 * Sizes are bytes per rank (Alltoall: the block for each peer). Plain MPI; builds with any mpicc:
 *     mpicc -O2 -std=c11 -o nbc_overlap nbc_overlap.c */
#include "bench_common.h"

enum { C_ALLTOALL, C_BCAST, C_ALLREDUCE, C_ALLGATHER, NCOLL };
static const char *const cname[NCOLL] = { "ialltoall", "ibcast", "iallreduce", "iallgather" };

static int rank, nranks, ntests, wallclock;

static void usage(void)
{
    fprintf(stderr, "usage: nbc_overlap [-m MAXSIZE] [-n MINSIZE] [-i ITERS] [-r REPS] [-t TESTS] [-c LIST] [-w]\n"
                    "  LIST: comma-separated subset of ialltoall,ibcast,iallreduce,iallgather\n");
}

static void start(int c, size_t size, void *s, void *r, MPI_Request *rq)
{
    int n = (int)size;
    switch (c) {
    case C_ALLTOALL: MPI_Ialltoall(s, n, MPI_BYTE, r, n, MPI_BYTE, MPI_COMM_WORLD, rq); break;
    case C_BCAST: MPI_Ibcast(s, n, MPI_BYTE, 0, MPI_COMM_WORLD, rq); break;
    case C_ALLREDUCE: MPI_Iallreduce(s, r, n / 8, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, rq); break;
    default: MPI_Iallgather(s, n, MPI_BYTE, r, n, MPI_BYTE, MPI_COMM_WORLD, rq); break;
    }
}

static void blocking(int c, size_t size, void *s, void *r)
{
    int n = (int)size;
    switch (c) {
    case C_ALLTOALL: MPI_Alltoall(s, n, MPI_BYTE, r, n, MPI_BYTE, MPI_COMM_WORLD); break;
    case C_BCAST: MPI_Bcast(s, n, MPI_BYTE, 0, MPI_COMM_WORLD); break;
    case C_ALLREDUCE: MPI_Allreduce(s, r, n / 8, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); break;
    default: MPI_Allgather(s, n, MPI_BYTE, r, n, MPI_BYTE, MPI_COMM_WORLD); break;
    }
}

/* ---- the compute loop ---------------------------------------------------------------------- */

static volatile double sink;
static double spins_per_us;

static void spin(long n)
{
    double x = 1.0;
    for (long i = 0; i < n; i++)
        x = x * 1.0000001 + 1e-9;
    sink = x;
}

static void calibrate(void)
{
    long n = 1000;
    double t;
    for (;;) {
        double t0 = MPI_Wtime();
        spin(n);
        t = MPI_Wtime() - t0;
        if (t > 0.05)
            break;
        n *= 2;
    }
    double best = t;
    for (int k = 0; k < 4; k++) {
        double t0 = MPI_Wtime();
        spin(n);
        double d = MPI_Wtime() - t0;
        best = d < best ? d : best;
    }
    spins_per_us = (double)n / (best * 1e6);
}

/* OSU's way: slices of about a microsecond of work, until their elapsed times add up to `us`. */
static void spin_wall(double us)
{
    long slice = (long)spins_per_us + 1;
    double elapsed = 0;
    while (elapsed < us * 1e-6) {
        double t0 = MPI_Wtime();
        spin(slice);
        elapsed += MPI_Wtime() - t0;
    }
}

/* Computes for `us` microseconds, calling MPI_Test on rq ntests times on the way. */
static void compute(double us, MPI_Request *rq)
{
    if (wallclock) {
        for (int k = 0; k <= ntests; k++) {
            spin_wall(us / (ntests + 1));
            if (k < ntests && rq) {
                int flag;
                MPI_Test(rq, &flag, MPI_STATUS_IGNORE);
            }
        }
        return;
    }
    long total = (long)(us * spins_per_us);
    if (ntests <= 0 || !rq) {
        spin(total);
        return;
    }
    long part = total / (ntests + 1);
    for (int k = 0; k < ntests; k++) {
        spin(part);
        int flag;
        MPI_Test(rq, &flag, MPI_STATUS_IGNORE);
    }
    spin(total - part * ntests);
}

/* ---- measurements ---------------------------------------------------------------------------- */

enum { M_BLOCKING, M_PURE, M_COMPUTE, M_OVERALL, NM };

/* One timed loop of `iters` calls of measurement m; the slowest rank's average, in us. */
static double loop(int m, int c, size_t size, long iters, void *s, void *r, double comp_us)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (long i = 0; i < iters; i++) {
        MPI_Request rq;
        switch (m) {
        case M_BLOCKING: blocking(c, size, s, r); break;
        case M_PURE:
            start(c, size, s, r, &rq);
            MPI_Wait(&rq, MPI_STATUS_IGNORE);
            break;
        case M_COMPUTE: compute(comp_us, NULL); break;
        default:
            start(c, size, s, r, &rq);
            compute(comp_us, &rq);
            MPI_Wait(&rq, MPI_STATUS_IGNORE);
            break;
        }
    }
    double mine = (MPI_Wtime() - t0) / (double)iters * 1e6, slowest;
    MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return slowest;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Checks one call's result (dies on a wrong one): every rank's data where it should be. */
static void check(int c, size_t size, unsigned char *s, unsigned char *r)
{
    MPI_Request rq;
    if (c == C_ALLREDUCE) {
        double *sd = (double *)s, *rd = (double *)r;
        size_t n = size / 8;
        for (size_t i = 0; i < n; i++)
            sd[i] = (double)(rank + 1) * (double)(i % 100);
        start(c, size, s, r, &rq);
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
        for (size_t i = 0; i < n; i++)
            if (rd[i] != (double)nranks * (nranks + 1) / 2 * (double)(i % 100))
                bench_die("%s of %zu bytes: element %zu is %g", cname[c], size, i, rd[i]);
        return;
    }
    size_t blocks = c == C_BCAST ? 1 : (size_t)nranks;
    for (size_t b = 0; b < blocks; b++)
        bench_fill(s + b * size, size, (unsigned)(c == C_BCAST ? 0 : rank * 1000 + (int)b));
    if (c == C_BCAST && rank != 0)
        memset(s, 0, size);
    start(c, size, s, r, &rq);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    if (c == C_BCAST)
        bench_verify(s, size, 0, cname[c]);
    else
        for (int p = 0; p < nranks; p++)
            bench_verify(r + (size_t)p * size, size, (unsigned)(p * 1000 + (c == C_ALLTOALL ? rank : 0)), cname[c]);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    size_t maxsize = BENCH_MIB, minsize = BENCH_KIB;
    long iters = 200;
    int reps = 5, want[NCOLL] = { 1, 1, 1, 1 }, opt;
    while ((opt = getopt(argc, argv, "m:n:i:r:t:c:wh")) != -1) {
        switch (opt) {
        case 'm': maxsize = bench_parse_size(optarg, "-m"); break;
        case 'n': minsize = bench_parse_size(optarg, "-n"); break;
        case 'i': iters = bench_parse_int(optarg, "-i", 1); break;
        case 'r': reps = bench_parse_int(optarg, "-r", 1); break;
        case 't': ntests = bench_parse_int(optarg, "-t", 0); break;
        case 'w': wallclock = 1; break;
        case 'c': bench_parse_choice(optarg, cname, NCOLL, want, "collective in -c"); break;
        case 'h': return bench_usage_exit(rank, usage, 0);
        default: return bench_usage_exit(rank, usage, 1);
        }
    }
    if (minsize < 8)
        minsize = 8;
    if (reps > BENCH_MAX_REPS)
        reps = BENCH_MAX_REPS;
    unsigned char *s = bench_alloc(maxsize * (size_t)nranks), *r = bench_alloc(maxsize * (size_t)nranks);
    calibrate();
    char lib[256];
    bench_library_name(lib, sizeof lib);
    if (rank == 0)
        printf("# benchmark: nbc_overlap | library: %s | ranks: %d | reps: %d | iters: %ld (scaled down above 8 "
               "KiB) | MPI_Test calls in the compute loop: %d | compute loop: %s\n",
               lib, nranks, reps, iters, ntests, wallclock ? "wall-clock time (OSU's)" : "fixed work");
    int nsizes = 0;
    for (size_t size = minsize; size <= maxsize; size *= 2)
        nsizes++;
    /* rows[table][size]: iters, best, median; printed per collective once its sizes are done */
    enum { T_OVERLAP, T_PURE, T_BLOCKING, T_COMPUTE, NT };
    static const char *const tname[NT] = { "overlap", "pure", "blocking", "compute" };
    static const char *const tunit[NT] = { "%", "us", "us", "us" };
    static const char *const tbetter[NT] = { "higher", "lower", "lower", "lower" };
    double(*row)[3] = malloc(sizeof *row * (size_t)nsizes * NT);
    if (!row)
        bench_die("out of memory");
    for (int c = 0; c < NCOLL; c++) {
        if (!want[c])
            continue;
        int si = 0;
        for (size_t size = minsize; size <= maxsize; size *= 2, si++) {
            long it = size <= 8 * BENCH_KIB ? iters : (long)((double)iters * 8 * BENCH_KIB / (double)size);
            if (it < 5)
                it = 5;
            check(c, size, s, r);
            double v[NM][BENCH_MAX_REPS], ov[BENCH_MAX_REPS];
            loop(M_PURE, c, size, it / 4 + 1, s, r, 0); /* warm-up */
            for (int k = 0; k < reps; k++) {
                v[M_BLOCKING][k] = loop(M_BLOCKING, c, size, it, s, r, 0);
                v[M_PURE][k] = loop(M_PURE, c, size, it, s, r, 0);
            }
            double pure = median(v[M_PURE], reps); /* sorts v[M_PURE] */
            for (int k = 0; k < reps; k++) {
                v[M_COMPUTE][k] = loop(M_COMPUTE, c, size, it, s, r, pure);
                v[M_OVERALL][k] = loop(M_OVERALL, c, size, it, s, r, pure);
                double o = 100.0 * (1.0 - (v[M_OVERALL][k] - v[M_COMPUTE][k]) / pure);
                ov[k] = o < 0 ? 0 : o > 100 ? 100 : o;
            }
            double *src[NT] = { ov, v[M_PURE], v[M_BLOCKING], v[M_COMPUTE] };
            for (int t = 0; t < NT; t++) {
                double med = median(src[t], reps); /* sorted: best is an end */
                double best = t == T_OVERLAP ? src[t][reps - 1] : src[t][0];
                row[(size_t)t * nsizes + si][0] = (double)it;
                row[(size_t)t * nsizes + si][1] = best;
                row[(size_t)t * nsizes + si][2] = med;
            }
        }
        if (rank != 0)
            continue;
        for (int t = 0; t < NT; t++) {
            printf("# table: %s_%s  unit: %s  better: %s  (size: bytes per rank)\n", cname[c], tname[t], tunit[t],
                   tbetter[t]);
            printf("# %10s %9s %12s %12s\n", "size", "iters", "best", "median");
            si = 0;
            for (size_t size = minsize; size <= maxsize; size *= 2, si++) {
                const double *x = row[(size_t)t * nsizes + si];
                printf("  %10zu %9ld %12.3f %12.3f\n", size, (long)x[0], x[1], x[2]);
            }
        }
        fflush(stdout);
    }
    free(row);
    free(s);
    free(r);
    MPI_Finalize();
    return 0;
}
