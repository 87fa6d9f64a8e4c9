/* A point-to-point call with count 0 and MPI_DATATYPE_NULL succeeds (the reading MPICH and
 * Open MPI take, docs/DESIGN.md): receives from MPI_PROC_NULL and from a real sender
 * (MPI_Recv, MPI_Irecv, MPI_Recv_init, MPI_Sendrecv, MPI_Mrecv), and the matching sends.
 * With count 1 MPI_DATATYPE_NULL stays an error (tests/mpi/errors.c). */
#include "mtest.h"

static void check_empty(const MPI_Status *st, int src, int tag, const char *what)
{
    int n = -1;
    CHECK(st->MPI_SOURCE == src, "%s: source %d, want %d", what, st->MPI_SOURCE, src);
    CHECK(st->MPI_TAG == tag, "%s: tag %d, want %d", what, st->MPI_TAG, tag);
    MPI_CHECK(MPI_Get_count(st, MPI_BYTE, &n));
    CHECK(n == 0, "%s: count %d, want 0", what, n);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Status st;
    MPI_Request r;
    MPI_Message m;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    /* from and to MPI_PROC_NULL */
    MPI_CHECK(MPI_Recv(NULL, 0, MPI_DATATYPE_NULL, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &st));
    check_empty(&st, MPI_PROC_NULL, MPI_ANY_TAG, "MPI_Recv from MPI_PROC_NULL");
    MPI_CHECK(MPI_Irecv(NULL, 0, MPI_DATATYPE_NULL, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &r));
    MPI_CHECK(MPI_Wait(&r, &st));
    if (!mtest_known_bug("proc_null_nb_status"))
        check_empty(&st, MPI_PROC_NULL, MPI_ANY_TAG, "MPI_Irecv from MPI_PROC_NULL");
    MPI_CHECK(MPI_Recv_init(NULL, 0, MPI_DATATYPE_NULL, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &r));
    MPI_CHECK(MPI_Start(&r));
    MPI_CHECK(MPI_Wait(&r, &st));
    MPI_CHECK(MPI_Request_free(&r));
    MPI_CHECK(MPI_Sendrecv(NULL, 0, MPI_INT, MPI_PROC_NULL, 1, NULL, 0, MPI_DATATYPE_NULL, MPI_PROC_NULL, 1,
                           MPI_COMM_WORLD, &st));
    check_empty(&st, MPI_PROC_NULL, MPI_ANY_TAG, "MPI_Sendrecv from MPI_PROC_NULL");
    MPI_CHECK(MPI_Send(NULL, 0, MPI_DATATYPE_NULL, MPI_PROC_NULL, 1, MPI_COMM_WORLD));
    MPI_CHECK(MPI_Sendrecv(NULL, 0, MPI_DATATYPE_NULL, MPI_PROC_NULL, 1, NULL, 0, MPI_DATATYPE_NULL, MPI_PROC_NULL, 1,
                           MPI_COMM_WORLD, &st));

    /* from a real sender: rank 1 sends empty messages to rank 0 */
    if (size >= 2 && rank == 1) {
        MPI_CHECK(MPI_Send(NULL, 0, MPI_INT, 0, 3, MPI_COMM_WORLD));
        MPI_CHECK(MPI_Send(NULL, 0, MPI_DATATYPE_NULL, 0, 4, MPI_COMM_WORLD));
        MPI_CHECK(MPI_Send(NULL, 0, MPI_INT, 0, 5, MPI_COMM_WORLD));
        MPI_CHECK(
            MPI_Sendrecv(NULL, 0, MPI_DATATYPE_NULL, 0, 6, NULL, 0, MPI_DATATYPE_NULL, 0, 7, MPI_COMM_WORLD, &st));
        check_empty(&st, 0, 7, "MPI_Sendrecv from rank 0");
    } else if (size >= 2 && rank == 0) {
        MPI_CHECK(MPI_Recv(NULL, 0, MPI_DATATYPE_NULL, 1, 3, MPI_COMM_WORLD, &st));
        check_empty(&st, 1, 3, "MPI_Recv from rank 1");
        MPI_CHECK(MPI_Irecv(NULL, 0, MPI_DATATYPE_NULL, 1, 4, MPI_COMM_WORLD, &r));
        MPI_CHECK(MPI_Wait(&r, &st));
        check_empty(&st, 1, 4, "MPI_Irecv from rank 1");
        MPI_CHECK(MPI_Mprobe(1, 5, MPI_COMM_WORLD, &m, &st));
        MPI_CHECK(MPI_Mrecv(NULL, 0, MPI_DATATYPE_NULL, &m, &st));
        check_empty(&st, 1, 5, "MPI_Mrecv from rank 1");
        MPI_CHECK(
            MPI_Sendrecv(NULL, 0, MPI_DATATYPE_NULL, 1, 7, NULL, 0, MPI_DATATYPE_NULL, 1, 6, MPI_COMM_WORLD, &st));
        check_empty(&st, 1, 6, "MPI_Sendrecv from rank 1");
    }

    /* count 1 stays an error */
    int rc = MPI_Recv(NULL, 1, MPI_DATATYPE_NULL, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &st);
    CHECK_ERRCLASS(rc, MPI_ERR_TYPE, "MPI_Recv of 1 MPI_DATATYPE_NULL");
    return mtest_finalize();
}
