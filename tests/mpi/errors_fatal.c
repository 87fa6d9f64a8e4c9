/* With the default error handler (MPI_ERRORS_ARE_FATAL) an invalid call
 * aborts the whole job.  Rank 1 (rank 0 when alone) sends to a rank that does
 * not exist while the other ranks wait in a receive that is never satisfied.
 * Registered as expected-to-fail: the launcher must exit non-zero and the
 * output must name the failing call ("MPI_Send"). */
#include "mtest.h"

int main(int argc, char **argv)
{
    int rank, size, v = 1;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    MPI_Errhandler eh;
    MPI_CHECK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh));
    CHECK(eh == MPI_ERRORS_ARE_FATAL, "default error handler of MPI_COMM_WORLD is not "
                                      "MPI_ERRORS_ARE_FATAL");

    int culprit = size > 1 ? 1 : 0;
    if (rank == culprit) {
        MPI_Send(&v, 1, MPI_INT, size + 1, 0, MPI_COMM_WORLD);
        /* not reached with MPI_ERRORS_ARE_FATAL */
        fprintf(stderr, "errors_fatal: MPI_Send to an invalid rank returned\n");
        MPI_Finalize();
        return 0; /* exit 0 makes the expected-failure test fail */
    }
    /* never satisfied: the abort must take these ranks down too */
    MPI_Recv(&v, 1, MPI_INT, culprit, 12345, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    fprintf(stderr, "errors_fatal: rank %d receive completed unexpectedly\n", rank);
    MPI_Finalize();
    return 0;
}
