/* The MPI 4.1 buffer calls on the predefined communicators, which are never freed: a buffer
 * attached to MPI_COMM_WORLD and detached again (the same pointer and size back), and an
 * automatic buffer attached to MPI_COMM_SELF and left attached through MPI_Finalize. A buffered
 * send to itself on each.
 * What this cannot check: that MPI_Finalize releases the automatic buffer. The predefined
 * communicators are static objects, so a pool left attached to one stays reachable and
 * LeakSanitizer (the sanitizer build) does not report it; the release at finalize
 * (src/core/comm.c) is proven by reading, not by this test. */
#include <stdlib.h>

#include "mtest.h"

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    int rank, v = 42, got = 0, size = 0;
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    int bytes = (int)sizeof v + MPI_BSEND_OVERHEAD;
    char *buf = malloc((size_t)bytes);
    CHECK(buf != NULL, "out of memory");
    MPI_CHECK(MPI_Comm_attach_buffer(MPI_COMM_WORLD, buf, bytes));
    MPI_CHECK(MPI_Bsend(&v, 1, MPI_INT, rank, 1, MPI_COMM_WORLD));
    MPI_CHECK(MPI_Recv(&got, 1, MPI_INT, rank, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(got == 42, "received %d", got);
    void *b = NULL;
    MPI_CHECK(MPI_Comm_detach_buffer(MPI_COMM_WORLD, &b, &size));
    CHECK(b == buf && size == bytes, "MPI_Comm_detach_buffer gave %p / %d", b, size);
    free(buf);
    /* an automatic buffer stays attached to MPI_COMM_SELF until the end */
    MPI_CHECK(MPI_Comm_attach_buffer(MPI_COMM_SELF, MPI_BUFFER_AUTOMATIC, 0));
    MPI_CHECK(MPI_Bsend(&v, 1, MPI_INT, 0, 2, MPI_COMM_SELF));
    MPI_CHECK(MPI_Comm_flush_buffer(MPI_COMM_SELF));
    MPI_CHECK(MPI_Recv(&got, 1, MPI_INT, 0, 2, MPI_COMM_SELF, MPI_STATUS_IGNORE));
    MPI_CHECK(MPI_Finalize());
    return 0;
}
