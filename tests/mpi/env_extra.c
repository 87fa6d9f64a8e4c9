/* Functions mpi4py's test suite found missing that no other area covers:
 * MPI_Get_hw_resource_info (MPI 4.1) returns a new info object the caller can read and free;
 * MPI_Comm_disconnect frees a communicator collectively (intra and inter), sets the handle to
 * MPI_COMM_NULL, and refuses MPI_COMM_NULL with MPI_ERR_COMM (as MPICH does). */
#include <mpi.h>
#include <stdio.h>

#include "mtest.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    MPI_Info hw = MPI_INFO_NULL;
    MPI_CHECK(MPI_Get_hw_resource_info(&hw));
    CHECK(hw != MPI_INFO_NULL, "MPI_Get_hw_resource_info returned MPI_INFO_NULL");
    int nkeys = -1;
    MPI_CHECK(MPI_Info_get_nkeys(hw, &nkeys));
    CHECK(nkeys >= 0, "nkeys %d", nkeys);
    MPI_CHECK(MPI_Info_free(&hw));
    CHECK(hw == MPI_INFO_NULL, "MPI_Info_free left the handle");

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm c = MPI_COMM_NULL;
    CHECK_ERRCLASS(MPI_Comm_disconnect(&c), MPI_ERR_COMM, "MPI_Comm_disconnect(MPI_COMM_NULL)");

    /* Intracommunicator: traffic on it, then disconnect. */
    MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    int v = rank, sum = 0;
    MPI_CHECK(MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, c));
    CHECK(sum == size * (size - 1) / 2, "allreduce %d", sum);
    MPI_CHECK(MPI_Comm_disconnect(&c));
    CHECK(c == MPI_COMM_NULL, "MPI_Comm_disconnect left the handle");

    /* Intercommunicator between the even and the odd ranks. */
    if (size >= 2) {
        MPI_Comm half, inter;
        MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half));
        MPI_CHECK(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank % 2 ? 0 : 1, 7, &inter));
        int rsize = 0;
        MPI_CHECK(MPI_Comm_remote_size(inter, &rsize));
        CHECK(rsize == (rank % 2 ? (size + 1) / 2 : size / 2), "remote size %d", rsize);
        MPI_CHECK(MPI_Comm_disconnect(&inter));
        CHECK(inter == MPI_COMM_NULL, "MPI_Comm_disconnect left the intercommunicator handle");
        MPI_CHECK(MPI_Comm_free(&half));
    }
    return mtest_finalize();
}
