/* Error handlers, error codes and classes (MPI standard, chapter 9). */
#include <stdlib.h>

#include "api/check.h"
#include "rma/rma.h"
#include "runtime/lock.h"

/* MPI_<Kind>_create_errhandler: `user_fn` is the user's function of the type for `obj`. */
static int errh_create(enum aptus_errh_obj obj, void (*user_fn)(void), MPI_Errhandler *errhandler, const char *fn)
{
    if (!user_fn || !errhandler)
        return aptus_error(NULL, MPI_ERR_ARG, fn, "null %s argument", user_fn ? "errhandler" : "function");
    struct aptus_errhandler *e = aptus_obj_alloc(APTUS_OBJ_ERRH, sizeof *e);
    if (!e)
        return aptus_error(NULL, MPI_ERR_NO_MEM, fn, "out of memory");
    e->magic = APTUS_MAGIC_ERRH;
    e->kind = APTUS_ERRH_USER;
    e->refcount = 1;
    e->obj = obj;
    switch (obj) {
    case APTUS_ERRH_FOR_COMM: e->comm_fn = (MPI_Comm_errhandler_function *)user_fn; break;
    case APTUS_ERRH_FOR_FILE: e->file_fn = (MPI_File_errhandler_function *)user_fn; break;
    case APTUS_ERRH_FOR_WIN: e->win_fn = (MPI_Win_errhandler_function *)user_fn; break;
    case APTUS_ERRH_FOR_SESSION: e->session_fn = (MPI_Session_errhandler_function *)user_fn; break;
    }
    *errhandler = (MPI_Errhandler)e;
    return MPI_SUCCESS;
}

/* Attaches e where *slot held another handler (each holder keeps a reference). */
static void errh_attach(struct aptus_errhandler **slot, struct aptus_errhandler *e)
{
    e->refcount++;
    struct aptus_errhandler *old = *slot;
    *slot = e;
    aptus_errh_release(old);
}

/* A new reference to e, as the handle MPI_<Kind>_get_errhandler returns. */
static MPI_Errhandler errh_ref(struct aptus_errhandler *e)
{
    e->refcount++;
    return aptus_errh_handle(e);
}

/* Where the error handler of file f lives: MPI_FILE_NULL's is the default for files opened later
 * (and the handler of errors no file is open for); NULL for a handle that is no file. */
static struct aptus_errhandler **file_errh_slot(MPI_File f)
{
    if (f == MPI_FILE_NULL)
        return &aptus_file_default_errh;
    struct aptus_file_head *h = aptus_file_head_get(f);
    return h ? &h->errh : NULL;
}
#define GET_FILE_ERRH(slot, f, FN)                                                                                     \
    struct aptus_errhandler **slot = file_errh_slot(f);                                                                \
    if (!slot)                                                                                                         \
    return aptus_error(NULL, MPI_ERR_FILE, FN, "invalid file handle")

static const char *obj_name(enum aptus_errh_obj obj)
{
    switch (obj) {
    case APTUS_ERRH_FOR_COMM: return "communicators";
    case APTUS_ERRH_FOR_FILE: return "files";
    case APTUS_ERRH_FOR_WIN: return "windows";
    default: return "sessions";
    }
}

/* The error handler object for `h`, checked to be usable on objects of kind `obj`; on failure
 * raises the error on comm (NULL: MPI_COMM_SELF) and returns NULL with *rc set. */
static struct aptus_errhandler *errh_arg(MPI_Errhandler h, enum aptus_errh_obj obj, struct aptus_comm *comm,
                                         const char *fn, int *rc)
{
    struct aptus_errhandler *e = aptus_errh_get(h);
    if (!e) {
        *rc = aptus_error(comm, MPI_ERR_ERRHANDLER, fn,
                          h == MPI_ERRHANDLER_NULL ? "MPI_ERRHANDLER_NULL is not a valid error handler here"
                                                   : "invalid error handler handle");
        return NULL;
    }
    if (e->kind == APTUS_ERRH_USER && e->obj != obj) {
        *rc = aptus_error(comm, MPI_ERR_ARG, fn, "the error handler was created for %s, not for %s", obj_name(e->obj),
                          obj_name(obj));
        return NULL;
    }
    return e;
}

/* ---- communicators ---- */

int PMPI_Comm_create_errhandler(MPI_Comm_errhandler_function *fn, MPI_Errhandler *errhandler)
{
    APTUS_OUT_NULL(errhandler, MPI_ERRHANDLER_NULL);
    APTUS_API_LOCK();
    API_INIT("MPI_Comm_create_errhandler");
    return errh_create(APTUS_ERRH_FOR_COMM, (void (*)(void))fn, errhandler, "MPI_Comm_create_errhandler");
}
APTUS_ALIAS(Comm_create_errhandler)

/* MPI_Comm_set_errhandler and MPI-1's MPI_Errhandler_set. */
static int comm_set_errh(MPI_Comm comm, MPI_Errhandler errhandler, const char *fn)
{
    GET_COMM(c, comm, fn);
    int rc;
    struct aptus_errhandler *e = errh_arg(errhandler, APTUS_ERRH_FOR_COMM, c, fn, &rc);
    if (!e)
        return rc;
    errh_attach(&c->errh, e);
    aptus_errh_user_set(c);
    return MPI_SUCCESS;
}

/* MPI_Comm_get_errhandler and MPI-1's MPI_Errhandler_get. */
static int comm_get_errh(MPI_Comm comm, MPI_Errhandler *errhandler, const char *fn)
{
    APTUS_OUT_NULL(errhandler, MPI_ERRHANDLER_NULL);
    GET_COMM(c, comm, fn);
    if (!errhandler)
        return aptus_error(c, MPI_ERR_ARG, fn, "null errhandler argument");
    *errhandler = errh_ref(c->errh);
    return MPI_SUCCESS;
}

/* MPI_<NAME>(comm, errhandler) as body(comm, errhandler, "MPI_<NAME>"): the MPI-2 names and
 * the MPI-1 ones of the same calls. */
#define COMM_ERRH_CALL(NAME, ARG_T, body)                                                                              \
    int PMPI_##NAME(MPI_Comm comm, ARG_T errhandler)                                                                   \
    {                                                                                                                  \
        APTUS_API_LOCKED(body(comm, errhandler, "MPI_" #NAME));                                                        \
    }                                                                                                                  \
    APTUS_ALIAS(NAME)

COMM_ERRH_CALL(Comm_set_errhandler, MPI_Errhandler, comm_set_errh)
COMM_ERRH_CALL(Comm_get_errhandler, MPI_Errhandler *, comm_get_errh)

/* The MPI-1 names, removed in MPI 3.0 (see mpi.h, section 16). */
int PMPI_Errhandler_create(MPI_Handler_function *function, MPI_Errhandler *errhandler)
{
    APTUS_OUT_NULL(errhandler, MPI_ERRHANDLER_NULL);
    APTUS_API_LOCK();
    API_INIT("MPI_Errhandler_create");
    return errh_create(APTUS_ERRH_FOR_COMM, (void (*)(void))function, errhandler, "MPI_Errhandler_create");
}
APTUS_ALIAS(Errhandler_create)

COMM_ERRH_CALL(Errhandler_set, MPI_Errhandler, comm_set_errh)
COMM_ERRH_CALL(Errhandler_get, MPI_Errhandler *, comm_get_errh)

int PMPI_Comm_call_errhandler(MPI_Comm comm, int errorcode)
{
    APTUS_API_LOCK();
    GET_COMM(c, comm, "MPI_Comm_call_errhandler");
    if (aptus_error_class_of(errorcode) < 0)
        return aptus_error(c, MPI_ERR_ARG, "MPI_Comm_call_errhandler", "%d is not a valid error code", errorcode);
    /* The handler receives the code itself; the call succeeds once the handler returns. */
    aptus_error_invoke(c, errorcode, "MPI_Comm_call_errhandler");
    return MPI_SUCCESS;
}
APTUS_ALIAS(Comm_call_errhandler)

int PMPI_Errhandler_free(MPI_Errhandler *errhandler)
{
    APTUS_API_LOCK();
    /* May be called at any time (MPI 4.1, table 9). */
    if (!errhandler)
        return aptus_error(NULL, MPI_ERR_ARG, "MPI_Errhandler_free", "null argument");
    struct aptus_errhandler *e = aptus_errh_get(*errhandler);
    if (!e)
        return aptus_error(NULL, MPI_ERR_ERRHANDLER, "MPI_Errhandler_free",
                           *errhandler == MPI_ERRHANDLER_NULL ? "MPI_ERRHANDLER_NULL cannot be freed"
                                                              : "invalid error handler handle");
    /* A predefined handler is never destroyed; objects using a user one keep it alive. */
    aptus_errh_release(e);
    *errhandler = MPI_ERRHANDLER_NULL;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Errhandler_free)

/* ---- files: MPI_FILE_NULL holds the default error handler of the files opened later ---- */

int PMPI_File_create_errhandler(MPI_File_errhandler_function *fn, MPI_Errhandler *errhandler)
{
    APTUS_OUT_NULL(errhandler, MPI_ERRHANDLER_NULL);
    APTUS_API_LOCK();
    API_INIT("MPI_File_create_errhandler");
    return errh_create(APTUS_ERRH_FOR_FILE, (void (*)(void))fn, errhandler, "MPI_File_create_errhandler");
}
APTUS_ALIAS(File_create_errhandler)

int PMPI_File_set_errhandler(MPI_File file, MPI_Errhandler errhandler)
{
    APTUS_API_LOCK();
    API_INIT("MPI_File_set_errhandler");
    GET_FILE_ERRH(slot, file, "MPI_File_set_errhandler");
    int rc;
    struct aptus_errhandler *e = errh_arg(errhandler, APTUS_ERRH_FOR_FILE, NULL, "MPI_File_set_errhandler", &rc);
    if (!e)
        return rc;
    errh_attach(slot, e);
    return MPI_SUCCESS;
}
APTUS_ALIAS(File_set_errhandler)

int PMPI_File_get_errhandler(MPI_File file, MPI_Errhandler *errhandler)
{
    APTUS_OUT_NULL(errhandler, MPI_ERRHANDLER_NULL);
    APTUS_API_LOCK();
    API_INIT("MPI_File_get_errhandler");
    GET_FILE_ERRH(slot, file, "MPI_File_get_errhandler");
    if (!errhandler)
        return aptus_error(NULL, MPI_ERR_ARG, "MPI_File_get_errhandler", "null errhandler argument");
    *errhandler = errh_ref(*slot);
    return MPI_SUCCESS;
}
APTUS_ALIAS(File_get_errhandler)

/* ---- windows ---- */

int PMPI_Win_set_errhandler(MPI_Win win, MPI_Errhandler errhandler)
{
    APTUS_API_LOCK();
    GET_WIN(w, win, "MPI_Win_set_errhandler");
    int rc;
    struct aptus_errhandler *e = errh_arg(errhandler, APTUS_ERRH_FOR_WIN, NULL, "MPI_Win_set_errhandler", &rc);
    if (!e)
        return rc;
    errh_attach(&w->errh, e);
    return MPI_SUCCESS;
}
APTUS_ALIAS(Win_set_errhandler)

int PMPI_Win_get_errhandler(MPI_Win win, MPI_Errhandler *errhandler)
{
    APTUS_OUT_NULL(errhandler, MPI_ERRHANDLER_NULL);
    APTUS_API_LOCK();
    GET_WIN(w, win, "MPI_Win_get_errhandler");
    if (!errhandler)
        return aptus_win_error(w, MPI_ERR_ARG, "MPI_Win_get_errhandler", "null errhandler argument");
    *errhandler = errh_ref(w->errh);
    return MPI_SUCCESS;
}
APTUS_ALIAS(Win_get_errhandler)

int PMPI_Win_call_errhandler(MPI_Win win, int errorcode)
{
    APTUS_API_LOCK();
    GET_WIN(w, win, "MPI_Win_call_errhandler");
    if (aptus_error_class_of(errorcode) < 0)
        return aptus_win_error(w, MPI_ERR_ARG, "MPI_Win_call_errhandler", "%d is not a valid error code", errorcode);
    aptus_errh_invoke(w->errh, (void *)w->handle, errorcode, "MPI_Win_call_errhandler");
    return MPI_SUCCESS;
}
APTUS_ALIAS(Win_call_errhandler)

/* ---- windows and sessions: the handlers can be created (and freed); attaching them is up to
 * the window and session implementations. ---- */

int PMPI_Win_create_errhandler(MPI_Win_errhandler_function *fn, MPI_Errhandler *errhandler)
{
    APTUS_OUT_NULL(errhandler, MPI_ERRHANDLER_NULL);
    APTUS_API_LOCK();
    API_INIT("MPI_Win_create_errhandler");
    return errh_create(APTUS_ERRH_FOR_WIN, (void (*)(void))fn, errhandler, "MPI_Win_create_errhandler");
}
APTUS_ALIAS(Win_create_errhandler)

int PMPI_Session_create_errhandler(MPI_Session_errhandler_function *fn, MPI_Errhandler *errhandler)
{
    APTUS_OUT_NULL(errhandler, MPI_ERRHANDLER_NULL);
    APTUS_API_LOCK();
    /* May be called at any time (MPI 4.1, table 9). */
    return errh_create(APTUS_ERRH_FOR_SESSION, (void (*)(void))fn, errhandler, "MPI_Session_create_errhandler");
}
APTUS_ALIAS(Session_create_errhandler)

/* ---- error codes, classes and strings: callable at any time (MPI 4.1, table 9) ---- */

int PMPI_Error_string(int errorcode, char *string, int *resultlen)
{
    APTUS_API_LOCK();
    if (!string || !resultlen)
        return aptus_error(NULL, MPI_ERR_ARG, "MPI_Error_string", "null %s argument", string ? "resultlen" : "string");
    if (aptus_error_string(errorcode, string, resultlen) != 0)
        return aptus_error(NULL, MPI_ERR_ARG, "MPI_Error_string", "%d is not a valid error code", errorcode);
    return MPI_SUCCESS;
}
APTUS_ALIAS(Error_string)

int PMPI_Error_class(int errorcode, int *errorclass)
{
    APTUS_API_LOCK();
    if (!errorclass)
        return aptus_error(NULL, MPI_ERR_ARG, "MPI_Error_class", "null errorclass argument");
    int cls = aptus_error_class_of(errorcode);
    if (cls < 0)
        return aptus_error(NULL, MPI_ERR_ARG, "MPI_Error_class", "%d is not a valid error code", errorcode);
    *errorclass = cls;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Error_class)

int PMPI_Add_error_class(int *errorclass)
{
    APTUS_API_LOCK();
    if (!errorclass)
        return aptus_error(NULL, MPI_ERR_ARG, "MPI_Add_error_class", "null errorclass argument");
    const char *why = "";
    int rc = aptus_error_add_class(errorclass, &why);
    return rc ? aptus_error(NULL, rc, "MPI_Add_error_class", "%s", why) : MPI_SUCCESS;
}
APTUS_ALIAS(Add_error_class)

int PMPI_Add_error_code(int errorclass, int *errorcode)
{
    APTUS_API_LOCK();
    if (!errorcode)
        return aptus_error(NULL, MPI_ERR_ARG, "MPI_Add_error_code", "null errorcode argument");
    const char *why = "";
    int rc = aptus_error_add_code(errorclass, errorcode, &why);
    return rc ? aptus_error(NULL, rc, "MPI_Add_error_code", "error class %d: %s", errorclass, why) : MPI_SUCCESS;
}
APTUS_ALIAS(Add_error_code)

int PMPI_Add_error_string(int errorcode, const char *string)
{
    APTUS_API_LOCK();
    const char *why = "";
    int rc = aptus_error_add_string(errorcode, string, &why);
    return rc ? aptus_error(NULL, rc, "MPI_Add_error_string", "error code %d: %s", errorcode, why) : MPI_SUCCESS;
}
APTUS_ALIAS(Add_error_string)

int PMPI_Remove_error_class(int errorclass)
{
    APTUS_API_LOCK();
    const char *why = "";
    int rc = aptus_error_remove_class(errorclass, &why);
    return rc ? aptus_error(NULL, rc, "MPI_Remove_error_class", "error class %d: %s", errorclass, why) : MPI_SUCCESS;
}
APTUS_ALIAS(Remove_error_class)

int PMPI_Remove_error_code(int errorcode)
{
    APTUS_API_LOCK();
    const char *why = "";
    int rc = aptus_error_remove_code(errorcode, &why);
    return rc ? aptus_error(NULL, rc, "MPI_Remove_error_code", "error code %d: %s", errorcode, why) : MPI_SUCCESS;
}
APTUS_ALIAS(Remove_error_code)

int PMPI_Remove_error_string(int errorcode)
{
    APTUS_API_LOCK();
    const char *why = "";
    int rc = aptus_error_remove_string(errorcode, &why);
    return rc ? aptus_error(NULL, rc, "MPI_Remove_error_string", "error code %d: %s", errorcode, why) : MPI_SUCCESS;
}
APTUS_ALIAS(Remove_error_string)

int PMPI_File_call_errhandler(MPI_File fh, int errorcode)
{
    APTUS_API_LOCK();
    API_INIT("MPI_File_call_errhandler");
    GET_FILE_ERRH(slot, fh, "MPI_File_call_errhandler");
    if (aptus_error_class_of(errorcode) < 0)
        return aptus_error(NULL, MPI_ERR_ARG, "MPI_File_call_errhandler", "%d is not a valid error code", errorcode);
    aptus_errh_invoke(*slot, (void *)fh, errorcode, "MPI_File_call_errhandler");
    return MPI_SUCCESS;
}
APTUS_ALIAS(File_call_errhandler)
