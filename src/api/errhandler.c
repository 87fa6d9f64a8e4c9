/* Error handlers, error codes and classes (MPI standard, chapter 9). */
#include <stdlib.h>

#include "api/check.h"

int PMPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler)
{
    GET_COMM(c, comm, "MPI_Comm_set_errhandler");
    struct aptus_errhandler *e = aptus_errh_get(errhandler);
    if (!e)
        return aptus_error(c, MPI_ERR_ARG, "MPI_Comm_set_errhandler", "invalid error handler");
    e->refcount++;
    c->errh = e;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Comm_set_errhandler)

extern struct aptus_errhandler aptus_errh_fatal, aptus_errh_abort, aptus_errh_return;

int PMPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler *errhandler)
{
    GET_COMM(c, comm, "MPI_Comm_get_errhandler");
    struct aptus_errhandler *e = c->errh;
    e->refcount++;
    *errhandler = e == &aptus_errh_fatal    ? MPI_ERRORS_ARE_FATAL
                  : e == &aptus_errh_abort  ? MPI_ERRORS_ABORT
                  : e == &aptus_errh_return ? MPI_ERRORS_RETURN
                                            : (MPI_Errhandler)e;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Comm_get_errhandler)

int PMPI_Comm_create_errhandler(MPI_Comm_errhandler_function *fn, MPI_Errhandler *errhandler)
{
    API_INIT("MPI_Comm_create_errhandler");
    struct aptus_errhandler *e = calloc(1, sizeof *e);
    if (!e)
        return aptus_error(NULL, MPI_ERR_NO_MEM, "MPI_Comm_create_errhandler", "out of memory");
    e->magic = APTUS_MAGIC_ERRH;
    e->kind = APTUS_ERRH_USER;
    e->refcount = 1;
    e->comm_fn = fn;
    *errhandler = (MPI_Errhandler)e;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Comm_create_errhandler)

int PMPI_Errhandler_free(MPI_Errhandler *errhandler)
{
    API_INIT("MPI_Errhandler_free");
    struct aptus_errhandler *e = aptus_errh_get(*errhandler);
    if (!e)
        return aptus_error(NULL, MPI_ERR_ARG, "MPI_Errhandler_free", "invalid error handler");
    if (--e->refcount == 0 && e->kind == APTUS_ERRH_USER) {
        e->magic = 0;
        free(e);
    }
    *errhandler = MPI_ERRHANDLER_NULL;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Errhandler_free)

int PMPI_Comm_call_errhandler(MPI_Comm comm, int errorcode)
{
    GET_COMM(c, comm, "MPI_Comm_call_errhandler");
    int cls = aptus_error_class_of(errorcode);
    return aptus_error(c, cls > 0 ? cls : MPI_ERR_UNKNOWN, "MPI_Comm_call_errhandler",
                       "error code %d raised by the program", errorcode);
}
APTUS_ALIAS(Comm_call_errhandler)

int PMPI_Error_string(int errorcode, char *string, int *resultlen)
{
    if (aptus_error_string(errorcode, string, resultlen) != 0)
        return aptus_error(NULL, MPI_ERR_ARG, "MPI_Error_string", "%d is not a valid error code", errorcode);
    return MPI_SUCCESS;
}
APTUS_ALIAS(Error_string)

int PMPI_Error_class(int errorcode, int *errorclass)
{
    int cls = aptus_error_class_of(errorcode);
    if (cls < 0)
        return aptus_error(NULL, MPI_ERR_ARG, "MPI_Error_class", "%d is not a valid error code", errorcode);
    *errorclass = cls;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Error_class)
