/* A window's flush across an idle connection's close (2 ranks over RC, APTUS_CHANNEL_IDLE=100,
 * puts by RDMA from any size). Rank 0 puts 64 KiB into rank 1's window by an RDMA write, whose
 * local completion says only that it left (tcp: handed to the socket), while rank 1 makes no
 * progress for 0.8 s; rank 0, idle, starts closing the connection. Its MPI_Win_flush then finds no
 * endpoint to read back through: it must wait until the close is through (rank 1 has taken every
 * byte before rank 0's BYE) -- so the close is over when the flush returns. Rank 0 then tells rank
 * 1 over UD, and rank 1 must find the data in its window. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <time.h>

#define TEST_NAME "rc_idle_rma"
#include "counters.h"

static int connected(void)
{
    return counter("rc.connections") == 1;
}
static int closing(void)
{
    return counter("rc.closing") == 1;
}

enum { N = 16384 }; /* ints: 64 KiB */

int main(int argc, char **argv)
{
    int size, *base;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2)
        MPI_Abort(MPI_COMM_WORLD, 2);
    MPI_Win win;
    MPI_Win_allocate(N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    for (int i = 0; i < N; i++)
        base[i] = -1;
    int peer = 1 - rank, x = 0, y = 0;
    for (int i = 0; i < 20; i++)
        MPI_Sendrecv(&x, 1, MPI_INT, peer, 1, &y, 1, MPI_INT, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    EXPECT(progress_until(connected, 20), "no connection after 40 messages");
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        static int src[N];
        for (int i = 0; i < N; i++)
            src[i] = i * 3 + 1;
        unsigned long long writes = counter("rdma.writes");
        MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
        MPI_Put(src, N, MPI_INT, 1, 0, N, MPI_INT, win);
        EXPECT(counter("rdma.writes") > writes, "the put did not go by RDMA");
        EXPECT(progress_until(closing, 20), "the idle connection did not start closing");
        MPI_Win_flush(1, win);
        EXPECT(counter("rc.closing") == 0 && counter("rc.idle_closed_here") >= 1,
               "MPI_Win_flush returned while the connection was still closing (closing %llu, closed %llu)",
               counter("rc.closing"), counter("rc.idle_closed_here"));
        MPI_Win_unlock_all(win);
        MPI_Send(&x, 1, MPI_INT, 1, 2, MPI_COMM_WORLD);
    } else {
        struct timespec ts = { 0, 800 * 1000 * 1000 };
        nanosleep(&ts, NULL); /* (no progress: rank 0's write waits in the connection) */
        MPI_Recv(&y, 1, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        int bad = 0;
        for (int i = 0; i < N; i++)
            bad += base[i] != i * 3 + 1;
        EXPECT(!bad, "%d of %d ints of the put not in the window when rank 0 said its flush was done", bad, N);
    }
    MPI_Win_free(&win);
    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf(all ? "rc_idle_rma: FAILED (%d)\n" : "rc_idle_rma: ok\n", all);
    MPI_Finalize();
    return all != 0;
}
