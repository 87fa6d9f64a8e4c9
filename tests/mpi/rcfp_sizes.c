/* Per-peer block sizes (APTUS_RCFP_MEMORY=96K, blocks start at APTUS_RCFP_BLOCK=32K; 3 ranks on
 * one node over RC, rc-fp first in the chain): rank 1 sends rank 0 a stream of 2 KiB messages,
 * rank 2 a 16-byte one now and then. Rank 0's blocks follow their traffic: rank 2's shrinks to
 * 4 KiB, rank 1's grows to 64 KiB (the budget's room: 96 - 4 = 92 KiB, a power of two), each
 * given back by its sender and granted anew in the middle of the traffic. Every message's content
 * and order is checked. */
#include <mpi.h>
#include <mpix_aptus.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned long long counter(const char *name)
{
    unsigned long long v = 0;
    if (MPIX_Aptus_counter(name, &v) != MPI_SUCCESS) {
        fprintf(stderr, "rcfp_sizes: no counter %s (is rc-fp in the chain?)\n", name);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return v;
}

#define BIG 2048

int main(int argc, char **argv)
{
    int rank, size, failures = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 3)
        MPI_Abort(MPI_COMM_WORLD, 2);
    int buf[BIG / sizeof(int)];
    int stop = 0, round = 0;
    unsigned long long want = (64 + 4) * 1024;
    double t0 = MPI_Wtime();
    while (!stop) {
        /* a round: 20 big messages from rank 1, 1 small from rank 2, then a decision by rank 0 */
        if (rank == 0) {
            for (int i = 0; i < 21; i++) {
                MPI_Status st;
                MPI_Recv(buf, BIG / (int)sizeof(int), MPI_INT, MPI_ANY_SOURCE, 3, MPI_COMM_WORLD, &st);
                int n;
                MPI_Get_count(&st, MPI_INT, &n);
                int expect_n = st.MPI_SOURCE == 1 ? BIG / (int)sizeof(int) : 4;
                if (n != expect_n || buf[0] != st.MPI_SOURCE || buf[1] != round || buf[n - 1] != round * 7 + n)
                    failures++;
            }
            stop = counter("rcfp.memory") == want || MPI_Wtime() - t0 > 30;
        } else {
            int n = rank == 1 ? BIG / (int)sizeof(int) : 4, count = rank == 1 ? 20 : 1;
            memset(buf, 0, sizeof buf);
            buf[0] = rank;
            buf[1] = round;
            buf[n - 1] = round * 7 + n;
            for (int i = 0; i < count; i++)
                MPI_Send(buf, n, MPI_INT, 0, 3, MPI_COMM_WORLD);
        }
        MPI_Bcast(&stop, 1, MPI_INT, 0, MPI_COMM_WORLD);
        round++;
    }
    if (rank == 0) {
        if (counter("rcfp.memory") != want) {
            fprintf(stderr, "rcfp_sizes: rank 0 owns %llu bytes of blocks after %d rounds, not %llu (4 + 64 KiB)\n",
                    counter("rcfp.memory"), round, want);
            failures++;
        }
        if (counter("rcfp.resized") < 2) {
            fprintf(stderr, "rcfp_sizes: %llu blocks resized\n", counter("rcfp.resized"));
            failures++;
        }
    }
    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf(all ? "rcfp_sizes: FAILED (%d)\n" : "rcfp_sizes: ok\n", all);
    MPI_Finalize();
    return all != 0;
}
