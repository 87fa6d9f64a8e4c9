/* RC connections under packet loss (tests/netns: two namespaces whose links drop a share of the
 * UDP and TCP packets, the default send chain, APTUS_STATS=1). Ranks 0 and 1:
 *  1. `rounds` rounds: rank 0 sends a burst of 4 small messages (every 8th round 1 KiB each),
 *     rank 1 takes them and answers with one; each message carries its round and place in the
 *     burst and a pattern, checked on arrival (contents, and order: the burst's messages share a
 *     tag, so they must match in the order sent, whichever channel each took);
 *  2. 64 KiB and 1 MiB messages both ways (rendezvous: the bulk over the connection, the
 *     control frames by the small messages' route), every byte checked.
 * It prints the mean one-way time of a round of phase 1 and fails above --max-us. With --moved:
 * the connection came up, the small messages were moved off it on both sides (rc.moved: one
 * saw the stalls, the other was told) and ud-sr carried most of the rounds; with --kicked: a rank
 * sent kicks (the tail-loss frames) and at least one was answered at once (a stall recovered); with
 * --back (a short APTUS_RC_MOVE_HOLD): the small messages came back to the connection after the
 * hold, and were moved off it again.
 *
 * With --pairs (4 ranks or more, the last one's namespace alone losing packets): every pair
 * connects; the pairs of the other ranks exchange checked small messages, one pair at a time
 * (phase A), then each of them with the last rank (phase B: its connections stall and move), then
 * phase A again. Over both
 * phases A the pairs without the last rank kept their connection: no message of theirs went by
 * ud-sr and their connections never moved (rc.moves.N). Whether the last rank's connections
 * moved is printed (on this machine's two cores it is timing-dependent). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TEST_NAME "rc_loss"
#include "counters.h"

static int connected(void)
{
    return counter("rc.connections") == 1;
}

enum { BURST = 4, SMALL = 8, MEDIUM = 256, BIG = 1 << 18 };

/* n checked round trips with peer (tag 11). */
static void pingpong(int peer, int n, int base)
{
    for (int i = 0; i < n; i++) {
        int x[SMALL + 2] = { rank, base + i }, y[SMALL + 2];
        pattern_fill(x + 2, SMALL, base + i, rank);
        MPI_Sendrecv(x, SMALL + 2, MPI_INT, peer, 11, y, SMALL + 2, MPI_INT, peer, 11, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        EXPECT(y[0] == peer && y[1] == base + i && pattern_intact(y + 2, SMALL, base + i, peer),
               "round %d with rank %d: wrong message", base + i, peer);
    }
}

static int all_connected(void)
{
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    return counter("rc.connections") == (unsigned long long)size - 1;
}

/* Phase A: the pairs of the ranks but the last, one pair at a time (the others wait: this machine's
 * two cores then run the pair's ranks, as on a node with a core each). Returns the ud-sr messages
 * of this rank's exchanges. */
static unsigned long long phase_a(int size, int rounds)
{
    unsigned long long ud = 0;
    for (int i = 0; i < size - 1; i++)
        for (int j = i + 1; j < size - 1; j++) {
            if (rank == i || rank == j) {
                unsigned long long u0 = counter("msgs.ud-sr");
                pingpong(rank == i ? j : i, rounds, 1000000 + i * 1000 + j);
                ud += counter("msgs.ud-sr") - u0;
            }
            MPI_Barrier(MPI_COMM_WORLD);
        }
    return ud;
}

/* Moves of this rank's connections to the ranks but the last. */
static unsigned long long moves_lossless(int size)
{
    unsigned long long n = 0;
    char name[32];
    for (int q = 0; q < size - 1; q++)
        if (q != rank) {
            snprintf(name, sizeof name, "rc.moves.%d", q);
            n += counter(name);
        }
    return n;
}

static int pairs(int size, int rounds)
{
    int last = size - 1;
    for (int d = 1; d < size; d++) /* every pair: messages for the allocation rules */
        for (int i = 0; i < 40; i++) {
            int to = (rank + d) % size, from = (rank - d + size) % size, x = rank * 1000 + i, y = -1;
            MPI_Sendrecv(&x, 1, MPI_INT, to, 10, &y, 1, MPI_INT, from, 10, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            EXPECT(y == from * 1000 + i, "connecting: wrong message from %d", from);
        }
    int up = progress_until(all_connected, 60), every = 0;
    MPI_Allreduce(&up, &every, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    EXPECT(every, "not every pair connected within 60 s (%llu connections here)", counter("rc.connections"));
    unsigned long long ud_a1 = phase_a(size, rounds);
    unsigned long long m0 = counter("rc.moved"), h0 = counter("rc.moved_here");
    for (int p = 0; p < last; p++) /* phase B: each with the last rank in turn */
        if (rank == p || rank == last)
            pingpong(rank == p ? last : p, rounds * 8, p * 100000);
    MPI_Barrier(MPI_COMM_WORLD);
    unsigned long long mv_b = counter("rc.moved") - m0, here_b = counter("rc.moved_here") - h0, here_all = 0;
    unsigned long long ud_a2 = phase_a(size, rounds), mv_ll = rank < last ? moves_lossless(size) : 0;
    printf("%s: rank %d: phase A: ud-sr messages %llu then %llu, moves of the lossless pairs' connections %llu; phase "
           "B: moves %llu (%llu seen here)\n",
           TEST_NAME, rank, ud_a1, ud_a2, mv_ll, mv_b, here_b);
    if (rank < last)
        EXPECT(ud_a1 == 0 && ud_a2 == 0 && mv_ll == 0,
               "a pair without the lossy rank left its connection: ud-sr messages %llu and %llu, moves %llu", ud_a1,
               ud_a2, mv_ll);
    /* Whether the lossy rank's pairs moved is reported, not required: four ranks on two cores under
     * a loaded machine see too few stalls at times (the 2-rank tests require the move). */
    unsigned long long here_run = counter("rc.moved_here");
    MPI_Allreduce(&here_run, &here_all, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank == last)
        printf("%s: the lossy rank's connections moved %llu times; stalls seen enough to move %llu times in all\n",
               TEST_NAME, counter("rc.moved"), here_all);
    return finish_test();
}

int main(int argc, char **argv)
{
    int rounds = 2000, want_moved = 0, want_kicked = 0, want_back = 0, want_pairs = 0;
    double max_us = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--max-us") && i + 1 < argc)
            max_us = atof(argv[++i]);
        else if (!strcmp(argv[i], "--moved"))
            want_moved = 1;
        else if (!strcmp(argv[i], "--kicked"))
            want_kicked = 1;
        else if (!strcmp(argv[i], "--back"))
            want_back = 1;
        else if (!strcmp(argv[i], "--pairs"))
            want_pairs = 1;
    }
    MPI_Init(&argc, &argv);
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (want_pairs && size >= 4)
        return pairs(size, rounds);
    if (size != 2 || want_pairs) {
        fprintf(stderr, "%s: needs 2 ranks (--pairs: 4 or more)\n", TEST_NAME);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int peer = 1 - rank;
    if (want_moved || want_kicked) {
        /* Enough messages for the allocation rules, then the connection (whose handshake may lose
         * packets too: tcp resends a lost SYN after a second, then 3, ...). */
        exchange(peer, 40, 0);
        int up = progress_until(connected, 60);
        int both = 0;
        MPI_Allreduce(&up, &both, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        EXPECT(both, "the RC connection did not come up within 60 s");
    }
    unsigned long long ud0 = counter("msgs.ud-sr");
    static int b[BURST][MEDIUM + 2];
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int r = 0; r < rounds; r++) {
        int n = r % 8 == 7 ? MEDIUM : SMALL;
        if (rank == 0) {
            MPI_Request q[BURST];
            for (int k = 0; k < BURST; k++) {
                b[k][0] = r;
                b[k][1] = k;
                pattern_fill(b[k] + 2, n, r, k);
                MPI_Isend(b[k], n + 2, MPI_INT, 1, 7, MPI_COMM_WORLD, &q[k]);
            }
            MPI_Waitall(BURST, q, MPI_STATUSES_IGNORE);
            int a[SMALL + 2];
            MPI_Recv(a, SMALL + 2, MPI_INT, 1, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            EXPECT(a[0] == r && a[1] == BURST && pattern_intact(a + 2, SMALL, r, BURST),
                   "round %d: the answer is wrong", r);
        } else {
            for (int k = 0; k < BURST; k++) {
                MPI_Recv(b[k], n + 2, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                EXPECT(b[k][0] == r && b[k][1] == k && pattern_intact(b[k] + 2, n, r, k),
                       "round %d: message %d of the burst is wrong (round %d, place %d): order or contents", r, k,
                       b[k][0], b[k][1]);
            }
            int a[SMALL + 2] = { r, BURST };
            pattern_fill(a + 2, SMALL, r, BURST);
            MPI_Send(a, SMALL + 2, MPI_INT, 0, 8, MPI_COMM_WORLD);
        }
        if (failures > 5)
            break;
    }
    double us = (MPI_Wtime() - t0) / rounds / 2 * 1e6;
    unsigned long long ud1 = counter("msgs.ud-sr");

    int *big = malloc(sizeof(int) * BIG), *in = malloc(sizeof(int) * BIG);
    for (int len = 1 << 14; len <= BIG; len <<= 4) {
        for (int rep = 0; rep < 4; rep++) {
            pattern_fill(big, len, rep, rank);
            memset(in, 0, sizeof(int) * (size_t)len);
            MPI_Sendrecv(big, len, MPI_INT, peer, 9, in, len, MPI_INT, peer, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            EXPECT(pattern_intact(in, len, rep, peer), "%zu bytes, repetition %d: contents wrong",
                   sizeof(int) * (size_t)len, rep);
        }
    }
    free(big);
    free(in);

    unsigned long long moved = counter("rc.moved"), here = counter("rc.moved_here"), kicks = counter("rc.kicks"),
                       stalls = counter("rc.stalls"), opened = counter("rc.opened"), back = counter("rc.moved_back");
    printf("%s: rank %d: %d rounds, %.1f us one-way; connections opened %llu, kicks %llu, stalls %llu, moved %llu "
           "(%llu seen here), small messages over ud-sr %llu\n",
           TEST_NAME, rank, rounds, us, opened, kicks, stalls, moved, here, ud1 - ud0);
    if (max_us > 0)
        EXPECT(us <= max_us, "a round took %.1f us one-way, above the bound of %.0f us", us, max_us);
    unsigned long long all[3] = { here, kicks, stalls }, sum[3];
    MPI_Allreduce(all, sum, 3, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (want_moved) {
        EXPECT(opened >= 1, "no RC connection came up");
        EXPECT(moved >= 1, "the small messages were never moved off the connection");
        EXPECT(sum[0] >= 1, "no rank saw the connection stall enough to move");
        EXPECT(ud1 - ud0 >= (unsigned long long)rounds / 2, "ud-sr carried %llu of the %d rounds' messages", ud1 - ud0,
               rounds);
    }
    if (want_back) /* a short APTUS_RC_MOVE_HOLD: the messages came back, and left again */
        EXPECT(back >= 1 && moved >= 2, "moved %llu times, back %llu times: want 2 and 1 at least", moved, back);
    if (want_kicked)
        EXPECT(sum[1] >= 1 && sum[2] >= 1, "kicks %llu, stalls seen %llu: none", sum[1], sum[2]);
    return finish_test();
}
