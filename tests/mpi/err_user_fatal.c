/* A user error class raised with MPI_Comm_call_errhandler under MPI_ERRORS_ARE_FATAL ends the
 * job, and the message shows the string the program gave the class. Run with EXPECT_NONZERO. */
#include "mtest.h"

int main(int argc, char **argv)
{
    int rank, cls, code;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_CHECK(MPI_Add_error_class(&cls));
    MPI_CHECK(MPI_Add_error_code(cls, &code));
    MPI_CHECK(MPI_Add_error_string(code, "the frobnicator is jammed"));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1)
        MPI_Comm_call_errhandler(MPI_COMM_WORLD, code);
    MPI_Barrier(MPI_COMM_WORLD); /* rank 0 waits here until the job is ended */
    fprintf(stderr, "rank %d: still running after a fatal error\n", rank);
    MPI_Finalize();
    return 0;
}
