/* A path that loses packets: every message to the peer moves off the connection
 * (APTUS_UD_LOSS_MOVE, channel/ud/ud_loss.c). Two ranks in two namespaces (tests/netns), the
 * built-in sockets chain (self;smp;size<=8K:ud-sr;rc-rdma;ud-zcopy: 1 MiB messages by rc-rdma
 * once the connection is up), APTUS_STATS=1. A round: rank 0 sends rank 1 a 1 MiB message and
 * three small ones on one tag (they must match in the order sent, whichever channel each took),
 * rank 1 answers with a small one; every byte is checked.
 *  1. rounds until the connection is up and has carried a large message, or the peer was moved
 *     first (a lossy path from the start: then no connection is ever asked for); with
 *     --connected-first (a loss that starts later: APTUS_UD_IMPAIR's after=) the connection must
 *     have come first;
 *  2. rounds until both ranks have moved the peer (ud.loss_moves: one saw the loss, the other
 *     was told), within --seconds (60);
 *  3. 20 more rounds: every large message of them went by ud-zcopy, none by rc-rdma (the hold,
 *     APTUS_RC_MOVE_HOLD, is longer than the test), and no connection was asked for again.
 * With --lossless (a path without loss): phase 2 runs --rounds (200) rounds and no rank moved the
 * peer, and phase 3's large messages went by rc-rdma.
 * The tool interface's events (registered before MPI_Init) tell the same story: channel_opened
 * (peer, rc-rdma) at rank 0 once the connection comes up, route_moved (peer, off_connections) as many times
 * as this rank moved the peer, none on a path without loss. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TEST_NAME "loss_move"
#include "counters.h"

enum { BIG = 1 << 18, SMALL = 4, AFTER = 20 }; /* BIG ints: 1 MiB */

static int *big;

/* One round (see the top). */
static void round_trip(int round)
{
    int small[SMALL + 1], answer[2];
    if (rank == 0) {
        pattern_fill(big, BIG, round, 0);
        MPI_Send(big, BIG, MPI_INT, 1, 7, MPI_COMM_WORLD);
        for (int k = 1; k <= 3; k++) {
            small[0] = k;
            pattern_fill(small + 1, SMALL, round, k);
            MPI_Send(small, SMALL + 1, MPI_INT, 1, 7, MPI_COMM_WORLD);
        }
        MPI_Recv(answer, 2, MPI_INT, 1, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        EXPECT(answer[0] == round && answer[1] == 1, "round %d: wrong answer (%d, %d)", round, answer[0], answer[1]);
    } else if (rank == 1) {
        MPI_Status st;
        MPI_Recv(big, BIG, MPI_INT, 0, 7, MPI_COMM_WORLD, &st);
        int n;
        MPI_Get_count(&st, MPI_INT, &n);
        EXPECT(n == BIG && pattern_intact(big, BIG, round, 0), "round %d: the large message is wrong (%d ints)", round,
               n);
        for (int k = 1; k <= 3; k++) {
            MPI_Recv(small, SMALL + 1, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            EXPECT(small[0] == k && pattern_intact(small + 1, SMALL, round, k),
                   "round %d: small message %d arrived in place %d (or is wrong)", round, small[0], k);
        }
        answer[0] = round;
        answer[1] = 1;
        MPI_Send(answer, 2, MPI_INT, 0, 8, MPI_COMM_WORLD);
    }
}

/* Whether every rank has flag set. */
static int every(int flag)
{
    int all;
    MPI_Allreduce(&flag, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    return all;
}

int main(int argc, char **argv)
{
    int size, rounds = 200, lossless = 0, connected_first = 0, round = 0;
    double seconds = 60;
    events_watch(0);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2)
        MPI_Abort(MPI_COMM_WORLD, 2);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
            seconds = atof(argv[++i]);
        else if (!strcmp(argv[i], "--lossless"))
            lossless = 1;
        else if (!strcmp(argv[i], "--connected-first"))
            connected_first = 1;
    }
    big = malloc(sizeof(int) * BIG);
    double t0 = MPI_Wtime();
    /* 1. the connection, and a large message over it */
    int up = 0, moved = 0;
    while (!up && !moved && round < 200) {
        round_trip(round++);
        up = every(counter("rc.connections") == 1 && (rank != 0 || counter("msgs.rc-rdma") > 0));
        moved = !up && every(counter("ud.loss_moves") >= 1);
    }
    EXPECT(up || moved, "no connection carried a large message in %d rounds, and no move", round);
    EXPECT(up || !connected_first, "the peer was moved before the connection carried a large message");
    /* 2. the move */
    int first = round;
    if (lossless) {
        while (round - first < rounds)
            round_trip(round++);
    } else {
        int late = 0;
        while (!moved && !late) {
            for (int i = 0; i < 8; i++)
                round_trip(round++);
            moved = every(counter("ud.loss_moves") >= 1);
            late = !every(MPI_Wtime() - t0 < seconds);
        }
    }
    double t_moved = MPI_Wtime() - t0;
    unsigned long long moves = counter("ud.loss_moves"), here = counter("ud.loss_moves_here"),
                       lost = counter("ud.recovered"), asks = counter("rc.opened");
    if (lossless)
        EXPECT(moves == 0, "the peer was moved off the connection on a path without loss (%llu datagrams lost)", lost);
    else
        EXPECT(moved, "no move within %.0f s (ud.loss_moves %llu, datagrams lost %llu)", seconds, moves, lost);
    /* 3. after it */
    unsigned long long z0 = counter("msgs.ud-zcopy"), r0 = counter("msgs.rc-rdma");
    for (int i = 0; i < AFTER; i++)
        round_trip(round++);
    unsigned long long z = counter("msgs.ud-zcopy") - z0, r = counter("msgs.rc-rdma") - r0;
    if (rank == 0) {
        if (lossless)
            EXPECT(r == AFTER && z == 0,
                   "on a path without loss the last %d large messages went %llu by rc-rdma, %llu by ud-zcopy", AFTER, r,
                   z);
        else
            EXPECT(z == AFTER && r == 0,
                   "after the move the last %d large messages went %llu by ud-zcopy, %llu by rc-rdma", AFTER, z, r);
    }
    EXPECT(counter("rc.opened") == asks, "a connection was opened again while the path was held lossy");
    /* the events: the connection (rc-rdma's endpoint) opened once if it came up; every move of
     * the peer off the connections seen (one per verdict here or word from the peer) */
    int rdma_id = channel_value("rc-rdma"), opened_rdma = rdma_id >= 0 ? ev_seen[EV_OPENED][1 - rank][rdma_id] : -1;
    int *moved_to = ev_seen[EV_MOVED][1 - rank];
    EXPECT(rdma_id >= 0, "no channel rc-rdma in the events' enumeration");
    if (rank == 0) /* (the sender of the large messages; rank 1 opens its end only to read one) */
        EXPECT(opened_rdma == (up ? 1 : 0), "channel_opened(peer, rc-rdma) seen %d times, connection %s", opened_rdma,
               up ? "up" : "never up");
    else
        EXPECT(opened_rdma <= (up ? 1 : 0), "channel_opened(peer, rc-rdma) seen %d times, connection %s", opened_rdma,
               up ? "up" : "never up");
    if (lossless)
        EXPECT(moved_to[2] == 0, "route_moved(peer, off_connections) seen %d times without loss", moved_to[2]);
    else
        EXPECT(moved_to[2] >= 1, "route_moved(peer, off_connections) never seen (ud.loss_moves %llu)", moves);
    printf("%s: rank %d: %d rounds; %s after %d; %s after %d more (%.2f s): moves %llu (%llu seen here), "
           "datagrams lost %llu; afterwards large messages by ud-zcopy %llu, rc-rdma %llu\n",
           TEST_NAME, rank, round, up ? "connection" : "moved, no connection", first, moved ? "moved" : "not moved",
           round - AFTER - first, t_moved, moves, here, lost, z, r);
    printf("%s: rank %d: events: channel_opened(rc-rdma) %d, route_moved to off_connections %d, back %d\n", TEST_NAME,
           rank, opened_rdma, moved_to[2], moved_to[0]);
    free(big);
    MPI_T_finalize();
    return finish_test();
}
