/* match_cost: cost of message matching with many receives posted or many messages unexpected.
 *
 * Ranks 0 and 1; N messages of 8 bytes (one long) with the distinct tags 0..N-1, matched in
 * the reverse order, so that a linear queue is scanned to its end for the first match, N-1
 * entries for the next, ... (on average N/2 entries per message); a hashed queue does not.
 *
 * Table "posted" (the posted-receive queue): rank 1 posts N MPI_Irecv with tags 0..N-1 (all
 * from rank 0), then sends a 0-byte handshake to rank 0 (on a separate communicator) and
 * waits for all N; rank 0 receives the handshake and sends tags N-1 down to 0. Time: on rank
 * 1, from just before the handshake until MPI_Waitall returns, divided by N (so the row for
 * N = 1 is about two one-way latencies: the handshake and the message).
 *
 * Table "unexpected" (the unexpected-message queue): rank 0 sends tags 0..N-1, then a 0-byte
 * fence with tag N on the same communicator; rank 1 receives the fence (by non-overtaking,
 * the N messages are then all queued as unexpected), then receives tags N-1 down to 0 with
 * MPI_Recv. Time: on rank 1, the N receives only, divided by N (the row for N = 1 is the cost
 * of one receive whose message is already there).
 *
 * One cycle is N messages; a timed loop runs enough cycles for at least MSGS messages (only
 * the parts described above are timed; every cycle starts with a handshake so that the next
 * cycle's messages never overlap the current one). For every N: one untimed cycle whose data,
 * tags and sources are verified, then REPS timed loops. Prints the best (lowest) and the
 * median of the REPS per-message averages, in microseconds. Ranks other than 0 and 1 wait in
 * a final barrier.
 *
 * Usage: match_cost [-n LIST] [-i MSGS] [-r REPS] [-m MODES]
 *   -n LIST   comma-separated queue lengths N, default 1,100,10000 (N + 1 must not exceed
 *             MPI_TAG_UB)
 *   -i MSGS   messages per timed loop, at least (default 10000: 10000 cycles of N = 1, one
 *             cycle of N = 10000)
 *   -r REPS   timed loops per N (default 5)
 *   -m MODES  comma-separated subset of posted,unexpected (default both)
 * Plain MPI; builds with any mpicc:  mpicc -O2 -std=c11 -o match_cost match_cost.c */
#include "bench_common.h"

#include <limits.h>

#define TAG_GO   1
#define TAG_RES  2
#define MAX_NS   64
#define N_MODES  2
#define M_POSTED 0
#define M_UNEXP  1

static const char *const mode_name[N_MODES] = { "posted", "unexpected" };

static void usage(void)
{
    fprintf(stderr, "usage: match_cost [-n LIST] [-i MSGS] [-r REPS] [-m posted,unexpected]\n");
}

/* One posted-queue cycle of n messages. Returns rank 1's timed seconds (0 on rank 0).
 * With `check`, rank 1 verifies every message's data, tag and source. */
static double cycle_posted(int me, int n, long *sbuf, long *rbuf, MPI_Request *req, MPI_Status *st, int check,
                           MPI_Comm data, MPI_Comm ctl)
{
    if (me == 0) {
        MPI_Recv(NULL, 0, MPI_BYTE, 1, TAG_GO, ctl, MPI_STATUS_IGNORE);
        for (int k = n - 1; k >= 0; k--)
            MPI_Send(&sbuf[k], 1, MPI_LONG, 1, k, data);
        return 0.0;
    }
    if (check)
        memset(rbuf, 0, (size_t)n * sizeof *rbuf);
    for (int k = 0; k < n; k++)
        MPI_Irecv(&rbuf[k], 1, MPI_LONG, 0, k, data, &req[k]);
    double t0 = MPI_Wtime();
    MPI_Send(NULL, 0, MPI_BYTE, 0, TAG_GO, ctl);
    MPI_Waitall(n, req, check ? st : MPI_STATUSES_IGNORE);
    double t1 = MPI_Wtime();
    if (check)
        for (int k = 0; k < n; k++) {
            if (rbuf[k] != sbuf[k])
                bench_die("posted: receive with tag %d got %ld, expected %ld", k, rbuf[k], sbuf[k]);
            if (st[k].MPI_TAG != k || st[k].MPI_SOURCE != 0)
                bench_die("posted: receive with tag %d completed with tag %d from rank %d", k, st[k].MPI_TAG,
                          st[k].MPI_SOURCE);
        }
    return t1 - t0;
}

/* One unexpected-queue cycle of n messages; as cycle_posted. */
static double cycle_unexpected(int me, int n, long *sbuf, long *rbuf, int check, MPI_Comm data, MPI_Comm ctl)
{
    if (me == 0) {
        MPI_Recv(NULL, 0, MPI_BYTE, 1, TAG_GO, ctl, MPI_STATUS_IGNORE);
        for (int k = 0; k < n; k++)
            MPI_Send(&sbuf[k], 1, MPI_LONG, 1, k, data);
        MPI_Send(NULL, 0, MPI_BYTE, 1, n, data); /* fence */
        return 0.0;
    }
    if (check)
        memset(rbuf, 0, (size_t)n * sizeof *rbuf);
    MPI_Send(NULL, 0, MPI_BYTE, 0, TAG_GO, ctl);
    MPI_Recv(NULL, 0, MPI_BYTE, 0, n, data, MPI_STATUS_IGNORE);
    MPI_Status st;
    double t0 = MPI_Wtime();
    if (check) {
        for (int k = n - 1; k >= 0; k--) {
            MPI_Recv(&rbuf[k], 1, MPI_LONG, 0, k, data, &st);
            if (rbuf[k] != sbuf[k] || st.MPI_TAG != k || st.MPI_SOURCE != 0)
                bench_die("unexpected: receive with tag %d got %ld (tag %d, rank %d), expected %ld", k, rbuf[k],
                          st.MPI_TAG, st.MPI_SOURCE, sbuf[k]);
        }
    } else {
        for (int k = n - 1; k >= 0; k--)
            MPI_Recv(&rbuf[k], 1, MPI_LONG, 0, k, data, MPI_STATUS_IGNORE);
    }
    return MPI_Wtime() - t0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, nranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);

    int ns[MAX_NS] = { 1, 100, 10000 }, nn = 3;
    int want[N_MODES] = { 1, 1 };
    long msgs = 10000;
    int reps = 5;
    int opt;
    while ((opt = getopt(argc, argv, "n:i:r:m:h")) != -1) {
        switch (opt) {
        case 'n': {
            nn = 0;
            char *tok, *save = NULL;
            for (tok = strtok_r(optarg, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
                if (nn == MAX_NS)
                    bench_die("at most %d values in -n", MAX_NS);
                ns[nn++] = bench_parse_int(tok, "queue length (-n)", 1);
            }
            if (nn == 0)
                bench_die("empty list in -n");
            break;
        }
        case 'i': msgs = bench_parse_int(optarg, "messages per loop (-i)", 1); break;
        case 'r': reps = bench_parse_int(optarg, "repetitions (-r)", 1); break;
        case 'm': bench_parse_choice(optarg, mode_name, N_MODES, want, "mode in -m (posted, unexpected)"); break;
        case 'h': return bench_usage_exit(rank, usage, 0);
        default: return bench_usage_exit(rank, usage, 1);
        }
    }
    if (reps > BENCH_MAX_REPS)
        bench_die("at most %d repetitions", BENCH_MAX_REPS);
    if (nranks < 2)
        bench_die("match_cost needs at least 2 ranks (got %d)", nranks);
    int *tag_ub = NULL, flag = 0, maxn = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag);
    for (int i = 0; i < nn; i++) {
        if (flag && tag_ub && ns[i] > *tag_ub - 1)
            bench_die("N = %d is too large: tags 0..N must fit under MPI_TAG_UB = %d", ns[i], *tag_ub);
        if (ns[i] > maxn)
            maxn = ns[i];
    }

    MPI_Comm pair;
    MPI_Comm_split(MPI_COMM_WORLD, rank < 2 ? 0 : MPI_UNDEFINED, rank, &pair);
    if (rank < 2) {
        MPI_Comm data, ctl;
        MPI_Comm_dup(pair, &data);
        MPI_Comm_dup(pair, &ctl);
        char lib[256];
        bench_library_name(lib, sizeof lib);
        long *sbuf = bench_alloc((size_t)maxn * sizeof(long));
        long *rbuf = bench_alloc((size_t)maxn * sizeof(long));
        MPI_Request *req = bench_alloc((size_t)maxn * sizeof(MPI_Request));
        MPI_Status *st = bench_alloc((size_t)maxn * sizeof(MPI_Status));
        for (int k = 0; k < maxn; k++)
            sbuf[k] = 1000003L * k + 17;
        double t[BENCH_MAX_REPS];

        if (rank == 0) {
            printf("# benchmark: match_cost | library: %s | ranks: %d (0 sends, 1 receives) | reps: %d | msgs: at "
                   "least %ld per loop | tags matched in reverse order | time: per message, on rank 1\n",
                   lib, nranks, reps, msgs);
            fflush(stdout);
        }
        for (int m = 0; m < N_MODES; m++) {
            if (!want[m])
                continue;
            if (rank == 0) {
                printf("# table: %s  unit: us  better: lower  (size: N = %s)\n", mode_name[m],
                       m == M_POSTED ? "receives posted before the messages arrive"
                                     : "messages queued unexpected before the receives");
                printf("# %10s %9s %12s %12s\n", "N", "msgs", "best_us", "median_us");
                fflush(stdout);
            }
            for (int i = 0; i < nn; i++) {
                int n = ns[i];
                long cycles = (msgs + n - 1) / n;
                if (m == M_POSTED)
                    cycle_posted(rank, n, sbuf, rbuf, req, st, 1, data, ctl);
                else
                    cycle_unexpected(rank, n, sbuf, rbuf, 1, data, ctl);
                for (int r = 0; r < reps; r++) {
                    double sum = 0.0;
                    for (long c = 0; c < cycles; c++)
                        sum += m == M_POSTED ? cycle_posted(rank, n, sbuf, rbuf, req, st, 0, data, ctl)
                                             : cycle_unexpected(rank, n, sbuf, rbuf, 0, data, ctl);
                    t[r] = sum * 1e6 / ((double)cycles * (double)n);
                }
                if (rank == 1) {
                    MPI_Send(t, reps, MPI_DOUBLE, 0, TAG_RES, ctl);
                } else {
                    MPI_Recv(t, reps, MPI_DOUBLE, 1, TAG_RES, ctl, MPI_STATUS_IGNORE);
                    double best = bench_min(t, reps), med = bench_median(t, reps);
                    printf("  %10d %9ld %12.3f %12.3f\n", n, cycles * n, best, med);
                    fflush(stdout);
                }
            }
        }
        free(sbuf);
        free(rbuf);
        free(req);
        free(st);
        MPI_Comm_free(&data);
        MPI_Comm_free(&ctl);
        MPI_Comm_free(&pair);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
