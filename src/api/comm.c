/* Communicators (MPI standard, chapter 7): the part needed by ordinary programs so far. */
#include <stdlib.h>
#include <string.h>

#include "api/check.h"
#include "core/comm.h"

int PMPI_Comm_rank(MPI_Comm comm, int *rank)
{
    GET_COMM(c, comm, "MPI_Comm_rank");
    *rank = c->rank;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Comm_rank)

int PMPI_Comm_size(MPI_Comm comm, int *size)
{
    GET_COMM(c, comm, "MPI_Comm_size");
    *size = c->size;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Comm_size)

int PMPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    GET_COMM(c, comm, "MPI_Comm_dup");
    struct aptus_comm *n;
    int rc = aptus_comm_dup(c, &n);
    if (rc)
        return aptus_error(c, rc, "MPI_Comm_dup", "could not create the communicator");
    *newcomm = n->handle;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Comm_dup)

int PMPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    GET_COMM(c, comm, "MPI_Comm_split");
    if (color < 0 && color != MPI_UNDEFINED)
        return aptus_error(c, MPI_ERR_ARG, "MPI_Comm_split", "invalid color %d (must be >= 0 or MPI_UNDEFINED)", color);
    struct aptus_comm *n;
    int rc = aptus_comm_split(c, color, key, &n);
    if (rc)
        return aptus_error(c, rc, "MPI_Comm_split", "could not create the communicator");
    *newcomm = n ? n->handle : MPI_COMM_NULL;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Comm_split)

int PMPI_Comm_free(MPI_Comm *comm)
{
    API_INIT("MPI_Comm_free");
    if (!comm)
        return aptus_error(NULL, MPI_ERR_ARG, "MPI_Comm_free", "null argument");
    if (*comm == MPI_COMM_WORLD || *comm == MPI_COMM_SELF)
        return aptus_error(NULL, MPI_ERR_COMM, "MPI_Comm_free", "predefined communicators cannot be freed");
    struct aptus_comm *c = aptus_comm_get(*comm);
    if (!c)
        return aptus_error(NULL, MPI_ERR_COMM, "MPI_Comm_free", "invalid communicator handle");
    aptus_comm_release(c);
    *comm = MPI_COMM_NULL;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Comm_free)

int PMPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int *result)
{
    GET_COMM(a, comm1, "MPI_Comm_compare");
    struct aptus_comm *b = aptus_comm_get(comm2);
    if (!b)
        return aptus_error(a, MPI_ERR_COMM, "MPI_Comm_compare", "invalid second communicator");
    *result = aptus_comm_compare(a, b);
    return MPI_SUCCESS;
}
APTUS_ALIAS(Comm_compare)

int PMPI_Comm_set_name(MPI_Comm comm, const char *name)
{
    GET_COMM(c, comm, "MPI_Comm_set_name");
    strncpy(c->name, name, MPI_MAX_OBJECT_NAME - 1);
    c->name[MPI_MAX_OBJECT_NAME - 1] = 0;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Comm_set_name)

int PMPI_Comm_get_name(MPI_Comm comm, char *name, int *resultlen)
{
    GET_COMM(c, comm, "MPI_Comm_get_name");
    strcpy(name, c->name);
    *resultlen = (int)strlen(name);
    return MPI_SUCCESS;
}
APTUS_ALIAS(Comm_get_name)

int PMPI_Comm_test_inter(MPI_Comm comm, int *flag)
{
    GET_COMM(c, comm, "MPI_Comm_test_inter");
    *flag = 0;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Comm_test_inter)

int PMPI_Comm_get_attr(MPI_Comm comm, int keyval, void *attribute_val, int *flag)
{
    /* The predefined attributes of MPI_COMM_WORLD; user keyvals come with the attribute
     * chapter. Values are returned as pointers to static ints, as the standard specifies. */
    static int tag_ub = APTUS_TAG_UB, host = MPI_PROC_NULL, io = MPI_ANY_SOURCE, wtime_global = 0, appnum, universe,
               lastused = MPI_ERR_LASTCODE;
    GET_COMM(c, comm, "MPI_Comm_get_attr");
    int *v = NULL;
    switch (keyval) {
    case MPI_TAG_UB: v = &tag_ub; break;
    case MPI_HOST: v = &host; break;
    case MPI_IO: v = &io; break;
    case MPI_WTIME_IS_GLOBAL: v = &wtime_global; break;
    case MPI_APPNUM:
        appnum = aptus_rt.pmi.appnum;
        v = &appnum;
        break;
    case MPI_UNIVERSE_SIZE:
        universe = aptus_rt.size;
        v = &universe;
        break;
    case MPI_LASTUSEDCODE: v = &lastused; break;
    default:
        return aptus_error(c, MPI_ERR_KEYVAL, "MPI_Comm_get_attr",
                           "keyval %d: only the predefined attributes are implemented so far", keyval);
    }
    *flag = 1;
    *(int **)attribute_val = v;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Comm_get_attr)

/* ---------------- error handlers on communicators ---------------- */

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
