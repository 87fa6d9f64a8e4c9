/* MPI_Abort(MPI_COMM_WORLD, 3) on rank 1 ends the whole job and the launcher
 * exits with status 3 (registered with expect_exit.sh --exit 3).  The other
 * ranks are blocked in a receive that is never satisfied. */
#include "mtest.h"

int main(int argc, char **argv)
{
    int rank, size, v = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int culprit = size > 1 ? 1 : 0;

    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == culprit) {
        MPI_Abort(MPI_COMM_WORLD, 3);
        fprintf(stderr, "FAIL abort.c: MPI_Abort returned\n");
        exit(1);
    }
    MPI_Recv(&v, 1, MPI_INT, culprit, 777, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    fprintf(stderr, "FAIL abort.c: rank %d receive completed after MPI_Abort\n", rank);
    exit(1);
}
