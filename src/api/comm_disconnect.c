/* MPI_Comm_disconnect (MPI 4.1, 11.10.4). It belongs to the dynamic-process chapter, but works
 * on every communicator, and programs that use sessions or want a collective free use it. */
#include "api/check.h"
#include "runtime/lock.h"

/* The caller has completed (and matched) all communication on comm, as the standard requires;
 * the barrier makes the call collective -- no process returns before every other one has got
 * here, so nothing is still in flight to any of them -- and then the handle is freed as by
 * MPI_Comm_free (attribute delete callbacks included). */
int PMPI_Comm_disconnect(MPI_Comm *comm)
{
    APTUS_API_LOCK();
    API_INIT("MPI_Comm_disconnect");
    if (!comm)
        return aptus_error(NULL, MPI_ERR_ARG, "MPI_Comm_disconnect", "null argument");
    if (*comm == MPI_COMM_WORLD || *comm == MPI_COMM_SELF)
        return aptus_error(NULL, MPI_ERR_COMM, "MPI_Comm_disconnect",
                           "predefined communicators cannot be disconnected");
    if (!aptus_comm_get(*comm))
        return aptus_error(NULL, MPI_ERR_COMM, "MPI_Comm_disconnect",
                           *comm == MPI_COMM_NULL ? "MPI_COMM_NULL cannot be disconnected"
                                                  : "invalid communicator handle");
    int rc = PMPI_Barrier(*comm);
    if (rc != MPI_SUCCESS)
        return rc;
    return PMPI_Comm_free(comm);
}
APTUS_ALIAS(Comm_disconnect)
