/* Large counts whose byte size does not fit a size_t (count * extent >= 2^64) are refused with
 * MPI_ERR_COUNT by the _c point-to-point calls, on MPI_COMM_SELF: before, the size wrapped, so
 * MPI_Send_c of 2^62 ints sent an empty message and succeeded, and MPI_Sendrecv_replace_c of
 * 2^62 + 1 ints packed them into a 4-byte copy (a heap overflow). */
#include <stdint.h>

#include "mtest.h"

static void expect_count_error(int rc, const char *call)
{
    int cls = MPI_SUCCESS;
    if (rc != MPI_SUCCESS)
        MPI_CHECK(MPI_Error_class(rc, &cls));
    CHECK(cls == MPI_ERR_COUNT, "%s: class %d, expected MPI_ERR_COUNT (%s)", call, cls,
          rc == MPI_SUCCESS ? "it succeeded" : mtest_errstr(rc));
}

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    int buf[4] = { 1, 2, 3, 4 };
    const MPI_Count huge = (MPI_Count)1 << 62; /* 2^62 ints are 2^64 bytes */
    expect_count_error(MPI_Send_c(buf, huge, MPI_INT, 0, 1, MPI_COMM_SELF), "MPI_Send_c");
    MPI_Request r = MPI_REQUEST_NULL;
    expect_count_error(MPI_Irecv_c(buf, huge, MPI_INT, 0, 1, MPI_COMM_SELF, &r), "MPI_Irecv_c");
    CHECK(r == MPI_REQUEST_NULL, "MPI_Irecv_c failed but made a request");
    expect_count_error(MPI_Sendrecv_replace_c(buf, huge + 1, MPI_INT, 0, 2, 0, 2, MPI_COMM_SELF, MPI_STATUS_IGNORE),
                       "MPI_Sendrecv_replace_c");
    expect_count_error(
        MPI_Sendrecv_c(buf, 1, MPI_INT, 0, 3, buf + 1, huge, MPI_INT, 0, 3, MPI_COMM_SELF, MPI_STATUS_IGNORE),
        "MPI_Sendrecv_c");
    /* nothing was left behind: an ordinary exchange still works */
    MPI_CHECK(MPI_Sendrecv(buf, 1, MPI_INT, 0, 4, buf + 2, 1, MPI_INT, 0, 4, MPI_COMM_SELF, MPI_STATUS_IGNORE));
    CHECK(buf[2] == 1, "buf[2] = %d after the exchange", buf[2]);
    MPI_CHECK(MPI_Finalize());
    return 0;
}
