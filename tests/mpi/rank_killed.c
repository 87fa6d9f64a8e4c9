/* A rank dies by a signal in the middle of the job (rank 1 raises SIGKILL after a barrier and
 * a first exchange); the others wait for a message from it that never comes. The launcher
 * must end the job with a non-zero status, and nothing may be left behind (no process, no
 * /dev/shm/aptus-* file): the shared-memory names were already gone when MPI_Init returned. */
#include <signal.h>

#include "mtest.h"

int main(int argc, char **argv)
{
    int rank, size, v = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int culprit = size > 1 ? 1 : 0;

    v = rank;
    MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(v == size * (size - 1) / 2, "allreduce gave %d", v);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == culprit) {
        fflush(stdout);
        raise(SIGKILL);
    }
    MPI_Recv(&v, 1, MPI_INT, culprit, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    fprintf(stderr, "FAIL rank_killed.c: rank %d received from a killed rank\n", rank);
    return 1;
}
