/* MPI_Session_init once every session has been finalized (and MPI_Init never called). MPI allows
 * it; a library that cannot start again must say so with MPI_ERR_UNSUPPORTED_OPERATION and a
 * message naming the call, returned to an MPI_ERRORS_RETURN handler (docs/DESIGN.md, "Sessions").
 * A new session (what the standard allows) is accepted too; Debian's MPICH 4.0.2 crashes (SIGSEGV)
 * in the second MPI_Session_init. */
#include <string.h>

#include "mtest.h"

int main(void)
{
    MPI_Session s = MPI_SESSION_NULL;
    MPI_CHECK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s));
    MPI_CHECK(MPI_Session_finalize(&s));
    int rc = MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s);
    if (rc == MPI_SUCCESS) {
        CHECK(s != MPI_SESSION_NULL, "MPI_Session_init succeeded without a session");
        MPI_CHECK(MPI_Session_finalize(&s));
        return 0;
    }
    int cls = -1, len = 0;
    char msg[MPI_MAX_ERROR_STRING];
    MPI_CHECK(MPI_Error_class(rc, &cls));
    MPI_CHECK(MPI_Error_string(rc, msg, &len));
    CHECK(cls == MPI_ERR_UNSUPPORTED_OPERATION, "class %d, expected MPI_ERR_UNSUPPORTED_OPERATION (%s)", cls, msg);
    CHECK(strncmp(msg, "MPI_Session_init", 16) == 0 && strstr(msg, "again"),
          "the message does not name the call and the reason: %s", msg);
    return 0;
}
