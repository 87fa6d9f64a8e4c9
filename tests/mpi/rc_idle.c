/* Idle RC connections closed (APTUS_CHANNEL_IDLE=100 ms; 3 ranks on one node over RC, chain
 * "self,size<=8K:rc-sr,rc-rdma,ud-sr,ud-zcopy", APTUS_RC_MAX=1, allocation rule "*:rc-sr@4"):
 *  1. in flight: rank 0 posts 200 receives from MPI_ANY_SOURCE and a 1 MiB receive, and stops
 *     calling MPI for 0.6 s; meanwhile rank 1 sends it 100 small messages and two 1 MiB ones
 *     (their RTS over the connection: rank 0 reads the first by RDMA -- with --read, under
 *     APTUS_RC_RDMA_MODE=read; else rank 1, closing, streams it --, the second waits unmatched)
 *     and, idle, starts closing the connection while all of it waits at rank 0. Rank 0 wakes,
 *     takes everything before rank 1's BYE (reading the first large message over the closing
 *     connection), closes too, then matches the second large message, whose RTS names rc-rdma,
 *     now without a connection (a streamed copy over UD); then rank 1 sends 100 more small
 *     messages over UD. Rank 0 must get all 200, in order, and both large ones intact;
 *  2. the slot moves: ranks 0 and 2 exchange small messages for a while; rank 0's one slot
 *     (APTUS_RC_MAX=1) goes to rank 2 once its connection to rank 1, if rank 1's second round made
 *     one again, has closed in turn.
 *  3. threads: ranks 0 and 1, connected again, run 4 threads each (MPI_THREAD_MULTIPLE), which exchange bursts of
 *     small and 64 KiB messages (rendezvous over rc-rdma while connected) with pauses around the
 *     idle time between them: the connection closes in some pauses, and the next burst starts
 *     from several threads at once while it is closing, has closed or comes up again.
 * Every message's content is checked, and the tool interface's events (registered before
 * MPI_Init) tell the same: a channel_opened(peer, rc-sr) for every rc-sr endpoint this rank opened
 * over a connection, a channel_closed(peer, rc-sr) when a close took it (at most one for every
 * connection closed, rc.idle_closed: a connection this rank never sent over has no endpoint).
 * With --credit-path (APTUS_RC_SRX=0, 4 receive buffers a
 * connection): rank 1's messages wait for credits in its send queue while rank 0 sleeps, and the
 * close moves them to UD (the frames queued for the connection's channels take the route's);
 * which side asks to close, and whether the first large message is read, is then open. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TEST_NAME "rc_idle"
#include "counters.h"

static int read_mode, credit_path;

static int connected(void)
{
    return counter("rc.connections") == 1;
}
static int closed(void)
{
    return counter("rc.idle_closed") >= 1 && counter("rc.connections") == 0 && counter("rc.closing") == 0;
}

enum { N = 100, BIG = 1 << 18 }; /* BIG ints: 1 MiB */

static void fill(int *b, int salt)
{
    for (int i = 0; i < BIG; i++)
        b[i] = i * 7 + salt;
}
static int intact(const int *b, int salt)
{
    for (int i = 0; i < BIG; i++)
        if (b[i] != i * 7 + salt)
            return 0;
    return 1;
}

/* Small messages with peer (the only other rank in pair) until both have one connection, over
 * which the last exchange came (or 20 s on either). */
static void until_connected(int peer, MPI_Comm pair)
{
    int got = 0, rounds = 0, late = 0;
    double t0 = MPI_Wtime();
    while (!got && !late) {
        unsigned long long in = counter("rc.frames_in");
        exchange(peer, 10, rounds * 10);
        rounds++;
        int mine = connected() && counter("rc.frames_in") - in >= 10, over = MPI_Wtime() - t0 > 20;
        MPI_Allreduce(&mine, &got, 1, MPI_INT, MPI_LAND, pair);
        MPI_Allreduce(&over, &late, 1, MPI_INT, MPI_LOR, pair);
    }
    EXPECT(got, "ranks %d and %d have no connection after %d rounds of 10 messages", rank, peer, rounds);
}

enum { THREADS = 4, ROUNDS = 8, BURST = 40, MID = 16384 };
static pthread_barrier_t burst;
static int bad[THREADS];

static void *body(void *arg)
{
    int t = (int)(intptr_t)arg, peer = 1 - rank;
    static const int pause_ms[ROUNDS] = { 60, 150, 110, 250, 90, 180, 40, 200 };
    int *mid = malloc(sizeof(int) * MID), *got = malloc(sizeof(int) * MID);
    for (int round = 0; round < ROUNDS; round++) {
        pthread_barrier_wait(&burst); /* (the threads start each burst together) */
        for (int i = 0; i < BURST; i++) {
            int x[3] = { t, round, i }, y[3] = { -1, -1, -1 };
            MPI_Sendrecv(x, 3, MPI_INT, peer, 100 + t, y, 3, MPI_INT, peer, 100 + t, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (y[0] != t || y[1] != round || y[2] != i)
                bad[t]++;
            if (i % 10 == 9) {
                for (int k = 0; k < MID; k++)
                    mid[k] = rank * 1000003 + t * 10007 + round * 101 + i + k;
                MPI_Sendrecv(mid, MID, MPI_INT, peer, 200 + t, got, MID, MPI_INT, peer, 200 + t, MPI_COMM_WORLD,
                             MPI_STATUS_IGNORE);
                for (int k = 0; k < MID; k++)
                    if (got[k] != peer * 1000003 + t * 10007 + round * 101 + i + k) {
                        bad[t]++;
                        break;
                    }
            }
        }
        /* the pause: starts when every thread's burst is over (a thread still exchanging would
         * keep the connection busy into the pause, and a slow build ends the threads' bursts far
         * apart); one thread drives progress (idle connections close
         * only in a progress pass), the others sleep */
        pthread_barrier_wait(&burst);
        if (t == 0) {
            double t0 = MPI_Wtime();
            int flag;
            while (MPI_Wtime() - t0 < pause_ms[round] / 1000.0)
                MPI_Iprobe(MPI_ANY_SOURCE, 12345, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        } else {
            struct timespec ts = { 0, pause_ms[round] * 1000L * 1000L };
            nanosleep(&ts, NULL);
        }
    }
    free(mid);
    free(got);
    return NULL;
}

int main(int argc, char **argv)
{
    int size, provided;
    events_watch(0);
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (provided != MPI_THREAD_MULTIPLE)
        MPI_Abort(MPI_COMM_WORLD, 2);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 3)
        MPI_Abort(MPI_COMM_WORLD, 2);
    for (int i = 1; i < argc; i++) {
        read_mode |= !strcmp(argv[i], "--read");
        credit_path |= !strcmp(argv[i], "--credit-path");
    }
    /* a connection between 0 and 1 */
    if (rank < 2) {
        exchange(1 - rank, 20, 0);
        EXPECT(progress_until(connected, 20), "no connection between ranks 0 and 1 after 40 messages");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    /* 1. in flight */
    int *big1 = malloc(sizeof(int) * BIG), *big2 = malloc(sizeof(int) * BIG);
    if (rank == 0) {
        int(*buf)[2] = malloc(sizeof *buf * 2 * N);
        MPI_Request req[2 * N], r1, r2;
        for (int i = 0; i < 2 * N; i++)
            MPI_Irecv(buf[i], 2, MPI_INT, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &req[i]);
        MPI_Irecv(big1, BIG, MPI_INT, 1, 8, MPI_COMM_WORLD, &r1);
        struct timespec ts = { 0, 600 * 1000 * 1000 };
        nanosleep(&ts, NULL); /* (no progress: rank 1's frames, and its BYE, wait here) */
        MPI_Wait(&r1, MPI_STATUS_IGNORE);
        EXPECT(intact(big1, 1), "the first large message (read while the connection closed) is wrong");
        if (read_mode && !credit_path) /* (APTUS_RC_RDMA_MODE=read) */
            EXPECT(counter("rdma.reads") == 1, "the first large message was not read over the closing connection");
        EXPECT(progress_until(closed, 20),
               "the connection to rank 1 did not close (closed %llu, up %llu, closing %llu)", counter("rc.idle_closed"),
               counter("rc.connections"), counter("rc.closing"));
        EXPECT(credit_path || counter("rc.idle_closed_here") == 0,
               "rank 0 asked to close, but rank 1 was the idle one");
        /* (its RTS came over the connection, naming rc-rdma) */
        MPI_Irecv(big2, BIG, MPI_INT, 1, 9, MPI_COMM_WORLD, &r2);
        MPI_Wait(&r2, MPI_STATUS_IGNORE);
        EXPECT(intact(big2, 2), "the second large message (matched after the connection closed) is wrong");
        MPI_Status st[2 * N];
        MPI_Waitall(2 * N, req, st);
        for (int i = 0; i < 2 * N; i++)
            EXPECT(st[i].MPI_SOURCE == 1 && buf[i][0] == 1 && buf[i][1] == i, "message %d: from %d, (%d, %d)", i,
                   st[i].MPI_SOURCE, buf[i][0], buf[i][1]);
        free(buf);
    } else if (rank == 1) {
        int x[2] = { 1, 0 };
        fill(big1, 1);
        fill(big2, 2);
        MPI_Request r[2];
        unsigned long long out = counter("rc.frames_out") + counter("rc.frames_injected");
        for (int i = 0; i < N; i++, x[1]++)
            MPI_Send(x, 2, MPI_INT, 0, 7, MPI_COMM_WORLD);
        MPI_Isend(big1, BIG, MPI_INT, 0, 8, MPI_COMM_WORLD, &r[0]);
        MPI_Isend(big2, BIG, MPI_INT, 0, 9, MPI_COMM_WORLD, &r[1]);
        EXPECT(credit_path || counter("rc.frames_out") + counter("rc.frames_injected") - out >= N + 2,
               "the messages did not go over the connection");
        EXPECT(progress_until(closed, 20), "the idle connection to rank 0 did not close");
        EXPECT(credit_path || counter("rc.idle_closed_here") == 1, "rank 1 did not ask to close its idle connection");
        MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
        for (int i = 0; i < N; i++, x[1]++)
            MPI_Send(x, 2, MPI_INT, 0, 7, MPI_COMM_WORLD);
    }
    free(big1);
    free(big2);
    MPI_Barrier(MPI_COMM_WORLD);
    /* 2. the traffic moves to ranks 0 and 2; rank 1 idles in MPI (a nonblocking barrier) */
    MPI_Comm pair;
    MPI_Comm_split(MPI_COMM_WORLD, rank == 1, rank, &pair);
    MPI_Request bar;
    if (rank != 1)
        until_connected(2 - rank, pair);
    MPI_Ibarrier(MPI_COMM_WORLD, &bar);
    MPI_Wait(&bar, MPI_STATUS_IGNORE);
    MPI_Comm_free(&pair);
    /* 3. threads */
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Comm_split(MPI_COMM_WORLD, rank < 2, rank, &pair);
    if (rank < 2) {
        until_connected(1 - rank, pair); /* (rank 0's slot comes back from rank 2) */
        unsigned long long before = counter("rc.idle_closed");
        pthread_t th[THREADS];
        pthread_barrier_init(&burst, NULL, THREADS);
        for (int t = 0; t < THREADS; t++)
            pthread_create(&th[t], NULL, body, (void *)(intptr_t)t);
        for (int t = 0; t < THREADS; t++) {
            pthread_join(th[t], NULL);
            EXPECT(!bad[t], "thread %d: %d messages wrong", t, bad[t]);
        }
        pthread_barrier_destroy(&burst);
        EXPECT(counter("rc.idle_closed") > before, "no connection closed between the threads' bursts");
    }
    MPI_Comm_free(&pair);
    /* the events: a connection closed here closes its rc-sr endpoint if this rank had opened one
     * over it (one event; a connection the peer opened and this rank never sent over has none),
     * so per peer the endpoint is open or not at the end (opened - closed is 0 or 1), and no more
     * endpoints closed than connections closed idle (nothing else closed one here) */
    int sr = channel_value("rc-sr"), closed_ev = 0, opened_ev = 0;
    EXPECT(sr >= 0, "no channel rc-sr in the events' enumeration");
    for (int p = 0; sr >= 0 && p < size; p++) {
        int o = ev_seen[EV_OPENED][p][sr], c = ev_seen[EV_CLOSED][p][sr];
        EXPECT(o - c == 0 || o - c == 1, "peer %d: channel_opened(rc-sr) %d, channel_closed %d", p, o, c);
        closed_ev += c;
        opened_ev += o;
    }
    EXPECT((unsigned long long)closed_ev <= counter("rc.idle_closed") && (rank == 2 || closed_ev >= 1),
           "channel_closed(rc-sr) seen %d times, connections closed idle %llu", closed_ev, counter("rc.idle_closed"));
    printf("rc_idle: rank %d: events: rc-sr endpoints opened %d, closed %d\n", rank, opened_ev, closed_ev);
    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf(all ? "rc_idle: FAILED (%d)\n" : "rc_idle: ok\n", all);
    MPI_Finalize();
    return all != 0;
}
