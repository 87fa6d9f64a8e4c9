/* poll_ring: a token passed around a ring of ranks, received by polling loops -- how fast a
 * library lets a rank that polls give its core to the rank that has work, on a node with more
 * ranks than cores (the pattern of hypre's data exchange: MPI_Iprobe(MPI_ANY_SOURCE) and
 * MPI_Test in loops), against the same ring received by blocking calls.
 *
 * Rank 0 sends an 8-byte token to rank 1, which passes it on, ..., back to rank 0. Tables:
 *   recv    each rank receives by MPI_Recv (the blocking path: the baseline)
 *   iprobe  each rank loops on MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG) until the token is
 *           there, then MPI_Recv
 *   test    each rank posts MPI_Irecv and loops on MPI_Test
 *   testany each rank posts MPI_Irecv from its left neighbour and one that never matches, and
 *           loops on MPI_Testany
 * The time is per hop (a loop's time over ranks * rounds). For every table: one verified round,
 * a warm-up that calibrates (batches of 1, 2, 4, ... rounds until a batch takes 50 ms or
 * ROUNDS/10 rounds), then REPS timed loops of ROUNDS rounds, or fewer when a loop would take
 * more than SECONDS by the warm-up's estimate (at least 5). Prints the best and the median of
 * the REPS loops in microseconds; column 2 is the rounds per loop actually run.
 *
 * Usage: poll_ring [-i ROUNDS] [-r REPS] [-T SECONDS] [-c LIST]
 *   -i ROUNDS   rounds of the token per timed loop, at most (default 2000)
 *   -r REPS     timed loops per table (default 5)
 *   -T SECONDS  time limit per timed loop, by the warm-up's estimate (default 1; 0: none)
 *   -c LIST     comma-separated tables, default recv,iprobe,test,testany
 * Plain MPI; builds with any mpicc:  mpicc -O2 -std=c11 -o poll_ring poll_ring.c */
#include "bench_common.h"

#define TAG_TOKEN 5
#define TAG_NEVER 6
#define MIN_LOOP  5

enum { T_RECV, T_IPROBE, T_TEST, T_TESTANY, NTAB };
static const char *const tname[NTAB] = { "recv", "iprobe", "test", "testany" };
static const char *const tdesc[NTAB] = { "token received by MPI_Recv", "MPI_Iprobe(MPI_ANY_SOURCE) loop, then MPI_Recv",
                                         "MPI_Irecv, then an MPI_Test loop",
                                         "MPI_Irecv + a never-matched one, then an MPI_Testany loop" };

static int rank, nranks, right, left;

static void usage(void)
{
    fprintf(stderr, "usage: poll_ring [-i ROUNDS] [-r REPS] [-T SECONDS] [-c recv,iprobe,test,testany]\n");
}

/* Receives the token from the left neighbour the way table t does. */
static long receive(int t)
{
    long token = -1;
    MPI_Status st;
    int flag = 0;
    switch (t) {
    case T_RECV: MPI_Recv(&token, 1, MPI_LONG, left, TAG_TOKEN, MPI_COMM_WORLD, &st); break;
    case T_IPROBE:
        while (!flag)
            MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
        if (st.MPI_SOURCE != left || st.MPI_TAG != TAG_TOKEN)
            bench_die("iprobe: found a message from %d tag %d", st.MPI_SOURCE, st.MPI_TAG);
        MPI_Recv(&token, 1, MPI_LONG, left, TAG_TOKEN, MPI_COMM_WORLD, &st);
        break;
    case T_TEST: {
        MPI_Request r;
        MPI_Irecv(&token, 1, MPI_LONG, left, TAG_TOKEN, MPI_COMM_WORLD, &r);
        while (!flag)
            MPI_Test(&r, &flag, &st);
        break;
    }
    case T_TESTANY: {
        MPI_Request r[2];
        long never;
        int idx = -1;
        MPI_Irecv(&never, 1, MPI_LONG, MPI_ANY_SOURCE, TAG_NEVER, MPI_COMM_WORLD, &r[0]);
        MPI_Irecv(&token, 1, MPI_LONG, left, TAG_TOKEN, MPI_COMM_WORLD, &r[1]);
        while (!flag)
            MPI_Testany(2, r, &idx, &flag, &st);
        if (idx != 1)
            bench_die("testany: request %d completed", idx);
        MPI_Cancel(&r[0]);
        MPI_Wait(&r[0], MPI_STATUS_IGNORE);
        break;
    }
    }
    return token;
}

/* n rounds of the token; returns the last token rank 0 received. */
static long run(int t, long n)
{
    long token = 0;
    for (long i = 0; i < n; i++) {
        if (rank == 0) {
            token = i * nranks;
            MPI_Send(&token, 1, MPI_LONG, right, TAG_TOKEN, MPI_COMM_WORLD);
            token = receive(t);
        } else {
            token = receive(t) + 1;
            MPI_Send(&token, 1, MPI_LONG, right, TAG_TOKEN, MPI_COMM_WORLD);
        }
    }
    return token;
}

/* Seconds per round of n rounds (collective). */
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
    if (nranks < 2)
        bench_die("poll_ring needs at least 2 ranks");
    right = (rank + 1) % nranks;
    left = (rank + nranks - 1) % nranks;

    long rounds = 2000;
    int reps = 5, want[NTAB] = { 1, 1, 1, 1 };
    double limit = 1.0;
    int code = bench_loop_options(argc, argv, rank, usage, "rounds (-i)", &rounds, &reps, &limit, tname, NTAB, want);
    if (code >= 0)
        return code;

    char lib[256];
    bench_library_name(lib, sizeof lib);
    if (rank == 0) {
        printf("# benchmark: poll_ring | library: %s | ranks: %d | reps: %d | rounds: at most %ld | time limit: %g s "
               "per loop | time: per hop, slowest rank\n",
               lib, nranks, reps, rounds, limit);
        fflush(stdout);
    }
    double t[BENCH_MAX_REPS];
    for (int k = 0; k < NTAB; k++) {
        if (!want[k])
            continue;
        long last = run(k, 1);
        if (rank == 0 && last != nranks - 1)
            bench_die("%s: the token came back as %ld, expected %d", tname[k], last, nranks - 1);
        long n = bench_timed_loops(timed, k, rounds, limit, MIN_LOOP, reps, t);
        for (int r = 0; r < reps; r++)
            t[r] /= nranks; /* per hop */
        if (rank == 0) {
            printf("# table: %s  unit: us  better: lower  (%s)\n", tname[k], tdesc[k]);
            printf("# %10s %9s %12s %12s\n", "size", "iters", "best_us", "median_us");
            printf("  %10d %9ld %12.3f %12.3f\n", 8, n, bench_min(t, reps), bench_median(t, reps));
            fflush(stdout);
        }
    }
    MPI_Finalize();
    return 0;
}
