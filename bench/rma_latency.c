/* rma_latency: one-sided communication (MPI RMA) between ranks 0 and 1, in the manner of the OSU
 * micro-benchmarks' osu_put_latency, osu_get_latency, osu_put_bw, osu_acc_latency,
 * osu_fop_latency and osu_cas_latency: rank 0 is the origin of every operation, rank 1 the
 * target (ranks above 1 wait in a final barrier).
 *
 * Measurements (tables; sizes MINSIZE, 2 MINSIZE, ... MAXSIZE unless said otherwise):
 *   put_latency    MPI_Put of SIZE bytes (MPI_BYTE) + the synchronization that completes it, us
 *   get_latency    MPI_Get of SIZE bytes + the synchronization, us
 *   put_bandwidth  a window of W MPI_Put of SIZE bytes to consecutive target slots, then the
 *                  synchronization: MB/s (10^6 B/s) moved
 *   acc_latency    MPI_Accumulate of SIZE/8 doubles with MPI_SUM + the synchronization, us
 *                  (sizes of at least 8 bytes)
 *   fop_latency    MPI_Fetch_and_op of one int64_t with MPI_SUM + the synchronization, us (one
 *                  row, size 8)
 *   cas_latency    MPI_Compare_and_swap of one int64_t + the synchronization, us (one row, size 8)
 * The synchronization (-s) is one of
 *   flush   rank 0 calls MPI_Win_lock_all once; every operation (or window of puts) is followed
 *           by MPI_Win_flush(1) (OSU's default for MPI_Win_allocate windows)
 *   lock    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1) + operation + MPI_Win_unlock(1) each time
 *   fence   operation + MPI_Win_fence on both ranks each time
 *   pscw    rank 0: MPI_Win_start + operation + MPI_Win_complete; rank 1: MPI_Win_post +
 *           MPI_Win_wait, each time
 * The window (-w) is made by MPI_Win_allocate, MPI_Win_create (over page-aligned memory) or
 * MPI_Win_create_dynamic + MPI_Win_attach (the target's address sent to the origin); rank 1's
 * window holds W * MAXSIZE bytes, rank 0's none.
 * For every measurement and size: one check (dies on wrong data) -- for put, get and
 * put_bandwidth a put of a known pattern then a get of it back, compared; for accumulate,
 * fetch-and-op and compare-and-swap a put of known values, the operation, the fetched values
 * and a get of the result compared -- each step in its own epoch of the chosen
 * synchronization; an untimed warm-up; then REPS timed loops of ITERS operations (windows for
 * put_bandwidth) on rank 0. Each row has the best and the median of the REPS loops.
 *
 * Usage: rma_latency [-m MAXSIZE] [-n MINSIZE] [-i ITERS] [-r REPS] [-c LIST] [-s SYNC] [-w WIN]
 *                    [-W PUTS]
 *   -m MAXSIZE  largest size, default 1M; -n MINSIZE smallest, default 8 (doubling)
 *   -i ITERS    operations per timed loop for sizes <= 8 KiB (default 1000; scaled down above,
 *               at least 10); put_bandwidth runs ITERS/10 windows per loop, fewer so that a
 *               loop moves at most 64 MiB, at least 2
 *   -r REPS     timed loops per size (default 5)
 *   -c LIST     comma-separated subset of put,get,put_bw,acc,fop,cas (default: all)
 *   -s SYNC     flush | lock | fence | pscw (default flush)
 *   -w WIN      allocate | create | dynamic (default allocate)
 *   -W PUTS     puts per window of put_bandwidth (default 64)
 * Sizes accept K/M/G suffixes (binary). Plain MPI; builds with any mpicc:
 *     mpicc -O2 -std=c11 -o rma_latency rma_latency.c
 * Known: Debian's Open MPI 4.1 kills the target with SIGSEGV in MPI_Compare_and_swap on an
 * MPI_Win_allocate window (osc/rdma over btl/vader; OSU's osu_cas_latency too, open-mpi/ompi
 * issue 11349): leave cas out (-c) or choose another osc component (--mca osc sm) there. */
#include "bench_common.h"

enum { T_PUT, T_GET, T_PUT_BW, T_ACC, T_FOP, T_CAS, NT };
static const char *const opname[NT] = { "put", "get", "put_bw", "acc", "fop", "cas" };
static const char *const tname[NT] = { "put_latency", "get_latency", "put_bandwidth",
                                       "acc_latency", "fop_latency", "cas_latency" };

enum { S_FLUSH, S_LOCK, S_FENCE, S_PSCW, NS };
static const char *const sname[NS] = { "flush", "lock", "fence", "pscw" };

enum { W_ALLOCATE, W_CREATE, W_DYNAMIC, NW };
static const char *const wname[NW] = { "allocate", "create", "dynamic" };

#define TARGET 1 /* rank 1 of the pair communicator (and of MPI_COMM_WORLD) */

static int rank, nranks, sync_mode = S_FLUSH, win_mode = W_ALLOCATE, bw_window = 64;
static MPI_Comm pair = MPI_COMM_NULL; /* ranks 0 and 1 */
static MPI_Group peer;                /* the other rank of the pair */
static MPI_Win win = MPI_WIN_NULL;
static void *winmem;               /* this rank's window memory */
static size_t winbytes;            /* its size */
static size_t tbytes;              /* the size of rank 1's window */
static MPI_Aint base;              /* rank 0: the target displacement of rank 1's window start */
static unsigned char *obuf, *rbuf; /* rank 0: origin and result buffers, MAXSIZE each */

static void usage(void)
{
    fprintf(stderr, "usage: rma_latency [-m MAXSIZE] [-n MINSIZE] [-i ITERS] [-r REPS] [-c LIST] [-s SYNC] [-w WIN] "
                    "[-W PUTS]\n"
                    "  LIST: comma-separated subset of put,get,put_bw,acc,fop,cas\n"
                    "  SYNC: flush | lock | fence | pscw;  WIN: allocate | create | dynamic\n");
}

static int pick(const char *s, const char *const *names, int n, const char *what)
{
    for (int i = 0; i < n; i++)
        if (strcmp(s, names[i]) == 0)
            return i;
    bench_die("unknown %s '%s'", what, s);
    return -1;
}

/* ---- windows and epochs --------------------------------------------------------------------- */

static void window_create(size_t target_bytes)
{
    tbytes = target_bytes;
    winbytes = rank == TARGET ? target_bytes : 0;
    switch (win_mode) {
    case W_ALLOCATE: MPI_Win_allocate((MPI_Aint)winbytes, 1, MPI_INFO_NULL, pair, &winmem, &win); break;
    case W_CREATE:
        winmem = bench_alloc(winbytes);
        MPI_Win_create(winmem, (MPI_Aint)winbytes, 1, MPI_INFO_NULL, pair, &win);
        break;
    default:
        MPI_Win_create_dynamic(MPI_INFO_NULL, pair, &win);
        winmem = bench_alloc(winbytes);
        if (winbytes)
            MPI_Win_attach(win, winmem, (MPI_Aint)winbytes);
        break;
    }
    /* the target's memory written once (first touch) in an epoch of its own */
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
    if (winbytes)
        memset(winmem, 0, winbytes);
    MPI_Win_unlock(rank, win);
    base = 0;
    if (win_mode == W_DYNAMIC) {
        MPI_Aint addr = 0;
        MPI_Get_address(winmem, &addr);
        MPI_Bcast(&addr, 1, MPI_AINT, TARGET, pair);
        base = addr;
    }
    MPI_Group g;
    int other = 1 - rank;
    MPI_Comm_group(pair, &g);
    MPI_Group_incl(g, 1, &other, &peer);
    MPI_Group_free(&g);
    MPI_Barrier(pair);
    if (sync_mode == S_FLUSH && rank == 0)
        MPI_Win_lock_all(0, win);
    if (sync_mode == S_FENCE)
        MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
}

static void window_free(void)
{
    if (sync_mode == S_FLUSH && rank == 0)
        MPI_Win_unlock_all(win);
    if (sync_mode == S_FENCE)
        MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    if (win_mode == W_DYNAMIC && winbytes)
        MPI_Win_detach(win, winmem);
    MPI_Win_free(&win);
    if (win_mode != W_ALLOCATE)
        free(winmem);
    MPI_Group_free(&peer);
}

/* Whether rank 1 takes part in every epoch (active target) or only waits (passive target). */
static int target_active(void)
{
    return sync_mode == S_FENCE || sync_mode == S_PSCW;
}

static void epoch_open(void)
{
    switch (sync_mode) {
    case S_LOCK:
        if (rank == 0)
            MPI_Win_lock(MPI_LOCK_EXCLUSIVE, TARGET, 0, win);
        break;
    case S_PSCW:
        if (rank == 0)
            MPI_Win_start(peer, 0, win);
        else
            MPI_Win_post(peer, 0, win);
        break;
    default: break; /* flush: inside the lock_all epoch; fence: the last fence opened it */
    }
}

static void epoch_close(void)
{
    switch (sync_mode) {
    case S_FLUSH:
        if (rank == 0)
            MPI_Win_flush(TARGET, win);
        break;
    case S_LOCK:
        if (rank == 0)
            MPI_Win_unlock(TARGET, win);
        break;
    case S_FENCE: MPI_Win_fence(0, win); break;
    default:
        if (rank == 0)
            MPI_Win_complete(win);
        else
            MPI_Win_wait(win);
        break;
    }
}

/* ---- operations (rank 0) ---------------------------------------------------------------------- */

static int64_t fop_in = 1, fop_out, cas_new, cas_cmp, cas_out;

static MPI_Aint at(size_t off)
{
    return MPI_Aint_add(base, (MPI_Aint)off);
}

static void op(int t, size_t size, size_t off)
{
    int n = (int)size, nd = (int)(size / sizeof(double));
    switch (t) {
    case T_PUT:
    case T_PUT_BW: MPI_Put(obuf, n, MPI_BYTE, TARGET, at(off), n, MPI_BYTE, win); break;
    case T_GET: MPI_Get(rbuf, n, MPI_BYTE, TARGET, at(off), n, MPI_BYTE, win); break;
    case T_ACC: MPI_Accumulate(obuf, nd, MPI_DOUBLE, TARGET, at(off), nd, MPI_DOUBLE, MPI_SUM, win); break;
    case T_FOP: MPI_Fetch_and_op(&fop_in, &fop_out, MPI_INT64_T, TARGET, at(off), MPI_SUM, win); break;
    default: MPI_Compare_and_swap(&cas_new, &cas_cmp, &cas_out, MPI_INT64_T, TARGET, at(off), win); break;
    }
}

/* One epoch around one operation of rank 0 (every rank of the pair calls it). */
static void epoch_op(int t, size_t size)
{
    epoch_open();
    if (rank == 0)
        op(t, size, 0);
    epoch_close();
}

/* ---- the checks --------------------------------------------------------------------------------- */

static void check_put_get(size_t size, unsigned tag)
{
    if (rank == 0) {
        bench_fill(obuf, size, tag);
        memset(rbuf, 0, size);
    }
    epoch_op(T_PUT, size);
    epoch_op(T_GET, size);
    if (rank == 0)
        bench_verify(rbuf, size, tag, "put then get back");
}

static void check_acc(size_t size)
{
    size_t nd = size / sizeof(double);
    double *o = (double *)obuf, *r = (double *)rbuf;
    if (rank == 0)
        for (size_t i = 0; i < nd; i++)
            o[i] = (double)(i % 100) + 0.5;
    epoch_op(T_PUT, nd * sizeof(double));
    if (rank == 0)
        for (size_t i = 0; i < nd; i++)
            o[i] = (double)(i % 7) * 2.0;
    epoch_op(T_ACC, size);
    if (rank == 0)
        memset(rbuf, 0, nd * sizeof(double));
    epoch_op(T_GET, nd * sizeof(double));
    if (rank == 0)
        for (size_t i = 0; i < nd; i++) {
            double want = (double)(i % 100) + 0.5 + (double)(i % 7) * 2.0;
            if (r[i] != want)
                bench_die("accumulate of %zu bytes: element %zu is %g, expected %g", size, i, r[i], want);
        }
}

static void check_atomic(int t)
{
    int64_t *o = (int64_t *)obuf, *r = (int64_t *)rbuf;
    if (rank == 0)
        *o = 40;
    epoch_op(T_PUT, sizeof(int64_t));
    if (t == T_FOP) {
        fop_in = 2;
        fop_out = -1;
        epoch_op(T_FOP, sizeof(int64_t));
        if (rank == 0 && fop_out != 40)
            bench_die("fetch-and-op fetched %lld, expected 40", (long long)fop_out);
    } else {
        cas_cmp = 40; /* matches: swaps in 42 */
        cas_new = 42;
        cas_out = -1;
        epoch_op(T_CAS, sizeof(int64_t));
        if (rank == 0 && cas_out != 40)
            bench_die("compare-and-swap (matching) fetched %lld, expected 40", (long long)cas_out);
        cas_cmp = 40; /* does not match any more: no swap */
        cas_new = 7;
        epoch_op(T_CAS, sizeof(int64_t));
        if (rank == 0 && cas_out != 42)
            bench_die("compare-and-swap (not matching) fetched %lld, expected 42", (long long)cas_out);
    }
    if (rank == 0)
        *r = 0;
    epoch_op(T_GET, sizeof(int64_t));
    if (rank == 0 && *r != 42)
        bench_die("%s: the target holds %lld afterwards, expected 42", opname[t], (long long)*r);
    fop_in = 1; /* the timed loops add 1 and compare with a value that never matches */
    cas_cmp = -1;
    cas_new = 5;
}

/* ---- measurements --------------------------------------------------------------------------------- */

/* One loop of n epochs of measurement t (both ranks of the pair call it); rank 0's time in
 * seconds (0 on rank 1). */
static double loop(int t, size_t size, long n)
{
    MPI_Barrier(pair);
    double secs = 0;
    if (rank == 0 || target_active()) {
        size_t slots = tbytes / (size ? size : 1);
        double t0 = MPI_Wtime();
        for (long i = 0; i < n; i++) {
            epoch_open();
            if (rank == 0) {
                if (t == T_PUT_BW)
                    for (int k = 0; k < bw_window; k++)
                        op(t, size, ((size_t)k % (slots ? slots : 1)) * size);
                else
                    op(t, size, 0);
            }
            epoch_close();
        }
        secs = MPI_Wtime() - t0;
    }
    MPI_Barrier(pair);
    return secs;
}

static long iters_for(int t, size_t size, long iters)
{
    if (t == T_PUT_BW) {
        long n = iters / 10;
        long cap = (long)((double)(64 * BENCH_MIB) / ((double)bw_window * (double)size));
        n = n < cap ? n : cap;
        return n < 2 ? 2 : n;
    }
    if (size <= 8 * BENCH_KIB)
        return iters;
    long n = (long)((double)iters * (double)(8 * BENCH_KIB) / (double)size);
    return n < 10 ? 10 : n;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    size_t maxsize = BENCH_MIB, minsize = 8;
    long iters = 1000;
    int reps = 5, want[NT] = { 1, 1, 1, 1, 1, 1 }, opt;
    while ((opt = getopt(argc, argv, "m:n:i:r:c:s:w:W:h")) != -1) {
        switch (opt) {
        case 'm': maxsize = bench_parse_size(optarg, "maximum size (-m)"); break;
        case 'n': minsize = bench_parse_size(optarg, "minimum size (-n)"); break;
        case 'i': iters = bench_parse_int(optarg, "iterations (-i)", 1); break;
        case 'r': reps = bench_parse_int(optarg, "repetitions (-r)", 1); break;
        case 'c': bench_parse_choice(optarg, opname, NT, want, "measurement in -c"); break;
        case 's': sync_mode = pick(optarg, sname, NS, "synchronization (-s)"); break;
        case 'w': win_mode = pick(optarg, wname, NW, "window kind (-w)"); break;
        case 'W': bw_window = bench_parse_int(optarg, "puts per window (-W)", 1); break;
        case 'h': return bench_usage_exit(rank, usage, 0);
        default: return bench_usage_exit(rank, usage, 1);
        }
    }
    if (nranks < 2)
        bench_die("rma_latency needs at least 2 ranks");
    if (minsize < 1)
        minsize = 1;
    if (maxsize < minsize)
        maxsize = minsize;
    if (maxsize < sizeof(int64_t))
        maxsize = sizeof(int64_t);
    if (maxsize > (size_t)1 << 30 || (double)bw_window * (double)maxsize > (double)((size_t)1 << 30))
        bench_die("the target window (-W %d puts of -m %zu bytes) would exceed 1 GiB", bw_window, maxsize);
    if (reps > BENCH_MAX_REPS)
        reps = BENCH_MAX_REPS;
    MPI_Comm_split(MPI_COMM_WORLD, rank < 2 ? 0 : MPI_UNDEFINED, rank, &pair);
    char lib[256];
    bench_library_name(lib, sizeof lib);
    if (rank == 0)
        printf("# benchmark: rma_latency | library: %s | ranks: %d (origin 0, target 1) | reps: %d | iters: %ld "
               "(scaled down above 8 KiB) | sync: %s | window: %s | puts per put_bandwidth window: %d\n",
               lib, nranks, reps, iters, sname[sync_mode], wname[win_mode], bw_window);
    if (pair != MPI_COMM_NULL) {
        window_create((size_t)bw_window * maxsize);
        if (rank == 0) {
            obuf = bench_alloc(maxsize);
            rbuf = bench_alloc(maxsize);
        }
        for (int t = 0; t < NT; t++) {
            if (!want[t])
                continue;
            int atomic = t == T_FOP || t == T_CAS;
            if (rank == 0) {
                printf("# table: %s  unit: %s  better: %s  (sync: %s, window: %s%s)\n", tname[t],
                       t == T_PUT_BW ? "MB/s" : "us", t == T_PUT_BW ? "higher" : "lower", sname[sync_mode],
                       wname[win_mode], t == T_PUT_BW ? ", size: bytes per put" : "");
                printf("# %10s %9s %12s %12s\n", "size", "iters", "best", "median");
            }
            for (size_t size = atomic ? sizeof(int64_t) : minsize; size <= maxsize; size *= 2) {
                if (t == T_ACC && size < sizeof(double))
                    continue;
                if (t == T_ACC)
                    check_acc(size);
                else if (atomic)
                    check_atomic(t);
                else
                    check_put_get(size, (unsigned)(t * 100 + 1));
                if (t == T_ACC && rank == 0) /* summands that stay small however often added */
                    for (size_t i = 0; i < size / sizeof(double); i++)
                        ((double *)obuf)[i] = 1.0;
                long n = iters_for(t, size, iters);
                loop(t, size, n / 10 + 1); /* warm-up */
                double v[BENCH_MAX_REPS];
                for (int k = 0; k < reps; k++) {
                    double secs = loop(t, size, n);
                    v[k] = t == T_PUT_BW ? (double)size * bw_window * (double)n / secs / 1e6 : secs / (double)n * 1e6;
                }
                if (rank == 0) {
                    double med = bench_median(v, reps); /* sorts v */
                    double best = t == T_PUT_BW ? v[reps - 1] : v[0];
                    printf("  %10zu %9ld %12.3f %12.3f\n", size, n, best, med);
                    fflush(stdout);
                }
                if (atomic)
                    break;
            }
        }
        window_free();
        if (rank == 0) {
            free(obuf);
            free(rbuf);
        }
        MPI_Comm_free(&pair);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
