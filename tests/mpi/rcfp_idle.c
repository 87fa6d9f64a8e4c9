/* Idle fast paths given back (APTUS_CHANNEL_IDLE=100 ms; 3 ranks on one node over RC, rc-fp first
 * in the chain, APTUS_RCFP_MAX=1, allocation rules "size<=1K:rc-fp@8,*:rc-sr@2"):
 *  1. in flight: rank 0 posts 200 receives from MPI_ANY_SOURCE and stops calling MPI for 0.6 s;
 *     meanwhile rank 1 sends it 100 small messages -- into rank 0's block, where they wait --,
 *     stays idle (in MPI, without sending to rank 0) until its fast path has been given back,
 *     then sends 100 more, which go over the connection. Rank 0 must get all 200, in order;
 *  2. traffic moves: ranks 0 and 2 then exchange small messages for a while: rank 0's fast paths
 *     to and from rank 1 (idle) are given back, and rank 0 and rank 2 get theirs -- which the
 *     limit of 1 refused while rank 1 held the slots.
 * Every message's content is checked. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define TEST_NAME "rcfp_idle"
#include "counters.h"

static int given_back(void)
{
    return counter("rcfp.released") >= 1 && counter("rcfp.paths") == 0;
}
static int have_path(void)
{
    return counter("rcfp.paths") == 1;
}

int main(int argc, char **argv)
{
    int size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 3)
        MPI_Abort(MPI_COMM_WORLD, 2);
    /* fast paths between 0 and 1 */
    if (rank < 2) {
        exchange(1 - rank, 20, 0);
        EXPECT(progress_until(have_path, 20), "no fast path between ranks 0 and 1 after 40 messages");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    /* 1. in flight */
    enum { N = 100 };
    if (rank == 0) {
        int(*buf)[2] = malloc(sizeof *buf * 2 * N);
        MPI_Request req[2 * N];
        for (int i = 0; i < 2 * N; i++)
            MPI_Irecv(buf[i], 2, MPI_INT, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &req[i]);
        struct timespec ts = { 0, 600 * 1000 * 1000 };
        nanosleep(&ts, NULL); /* (no progress: rank 1's frames wait in the block) */
        MPI_Status st[2 * N];
        MPI_Waitall(2 * N, req, st);
        for (int i = 0; i < 2 * N; i++)
            EXPECT(st[i].MPI_SOURCE == 1 && buf[i][0] == 1 && buf[i][1] == i, "message %d: from %d, (%d, %d)", i,
                   st[i].MPI_SOURCE, buf[i][0], buf[i][1]);
        EXPECT(counter("rcfp.returned") >= 1, "rank 1's block was not given back to rank 0");
        free(buf);
    } else if (rank == 1) {
        int x[2] = { 1, 0 };
        unsigned long long blk = counter("rcfp.msgs"), via = counter("rcfp.msgs_via");
        for (int i = 0; i < N; i++, x[1]++)
            MPI_Send(x, 2, MPI_INT, 0, 7, MPI_COMM_WORLD);
        /* (into the block, or over the connection where the fixed cells ran out) */
        EXPECT(counter("rcfp.msgs") > blk && counter("rcfp.msgs") - blk + counter("rcfp.msgs_via") - via == N,
               "%llu of %d messages written into rank 0's block, %llu over the connection", counter("rcfp.msgs") - blk,
               N, counter("rcfp.msgs_via") - via);
        EXPECT(progress_until(given_back, 20), "the idle fast path to rank 0 was not given back");
        blk = counter("rcfp.msgs");
        via = counter("rcfp.msgs_via");
        for (int i = 0; i < N; i++, x[1]++)
            MPI_Send(x, 2, MPI_INT, 0, 7, MPI_COMM_WORLD);
        EXPECT(counter("rcfp.msgs") == blk && counter("rcfp.msgs_via") == via,
               "messages went by a fast path given back");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    /* 2. the traffic moves to ranks 0 and 2; rank 1 idles in MPI (in a barrier with nothing more to
     * send), ranks 0 and 2 agree among themselves */
    MPI_Comm pair;
    MPI_Comm_split(MPI_COMM_WORLD, rank == 1, rank, &pair);
    MPI_Request bar;
    if (rank != 1) {
        int got = 0, rounds = 0, late = 0;
        double t0 = MPI_Wtime();
        while (!got && !late) { /* (until both have it, or 20 s on either) */
            exchange(2 - rank, 10, rounds * 10);
            rounds++;
            /* (rank 0's one fast path is rank 2's once its idle one to rank 1 was given back) */
            int mine = have_path() && (rank != 0 || counter("rcfp.released") >= 1), over = MPI_Wtime() - t0 > 20;
            MPI_Allreduce(&mine, &got, 1, MPI_INT, MPI_LAND, pair);
            MPI_Allreduce(&over, &late, 1, MPI_INT, MPI_LOR, pair);
        }
        EXPECT(got, "ranks 0 and 2 have no fast path after %d rounds of 10 messages", rounds);
        if (rank == 0)
            EXPECT(counter("rcfp.released") >= 1 && counter("rcfp.blocks") == 1,
                   "rank 0: given back %llu, blocks %llu (rank 2's, after rank 1's went)", counter("rcfp.released"),
                   counter("rcfp.blocks"));
    }
    MPI_Ibarrier(MPI_COMM_WORLD, &bar);
    MPI_Wait(&bar, MPI_STATUS_IGNORE);
    MPI_Comm_free(&pair);
    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf(all ? "rcfp_idle: FAILED (%d)\n" : "rcfp_idle: ok\n", all);
    MPI_Finalize();
    return all != 0;
}
