/* Attributes and keyvals (MPI standard, section 7.7), including the predefined attributes of
 * MPI_COMM_WORLD. Keyval tables and attribute lists live in core/attr.c. */
#include <stdlib.h>
#include <string.h>

#include "api/check.h"
#include "core/attr.h"
#include "rma/rma.h"
#include "runtime/lock.h"

static int is_comm_predef_key(int k)
{
    return k >= MPI_TAG_UB && k <= MPI_UNIVERSE_SIZE;
}

static int is_win_predef_key(int k)
{
    return k >= MPI_WIN_BASE && k <= MPI_WIN_MODEL;
}

static const char *kind_name(int kind)
{
    return kind == APTUS_ATTR_COMM ? "communicators" : kind == APTUS_ATTR_TYPE ? "datatypes" : "windows";
}

/* Checks a keyval argument of a set/get/delete call on an object of `kind`: 0, or the raised
 * error. Predefined keyvals are accepted only when `predef_ok` (get on a communicator); a keyval
 * the user freed while attributes still hold it only when `freed_ok` (get and delete). */
static int check_keyval(struct aptus_comm *c, int kind, int keyval, int predef_ok, int freed_ok, const char *fn)
{
    if (keyval == MPI_KEYVAL_INVALID)
        return aptus_error(c, MPI_ERR_KEYVAL, fn, "MPI_KEYVAL_INVALID is not a valid keyval");
    if (is_comm_predef_key(keyval) || is_win_predef_key(keyval)) {
        int mine = kind == APTUS_ATTR_COMM  ? is_comm_predef_key(keyval)
                   : kind == APTUS_ATTR_WIN ? is_win_predef_key(keyval)
                                            : 0;
        if (!mine)
            return aptus_error(c, MPI_ERR_KEYVAL, fn, "keyval %d is a predefined attribute of %s, not of %s", keyval,
                               is_comm_predef_key(keyval) ? "communicators" : "windows", kind_name(kind));
        if (!predef_ok)
            return aptus_error(c, MPI_ERR_KEYVAL, fn, "keyval %d is predefined: its attribute cannot be changed",
                               keyval);
        return MPI_SUCCESS;
    }
    const char *why = aptus_keyval_problem(kind, keyval, freed_ok);
    return why ? aptus_error(c, MPI_ERR_KEYVAL, fn, "keyval %d %s", keyval, why) : MPI_SUCCESS;
}

/* ---- keyvals ---- */

static int create_keyval(int kind, void (*copy)(void), void (*del)(void), int *keyval, void *extra, const char *fn)
{
    APTUS_OUT_NULL(keyval, MPI_KEYVAL_INVALID);
    API_INIT(fn);
    if (!keyval)
        return aptus_error(NULL, MPI_ERR_ARG, fn, "null keyval argument");
    int rc = aptus_keyval_create(kind, copy, del, extra, keyval);
    return rc ? aptus_error(NULL, rc, fn, "cannot create a keyval (out of memory)") : MPI_SUCCESS;
}

static int free_keyval(int kind, int *keyval, const char *fn)
{
    API_INIT(fn);
    if (!keyval)
        return aptus_error(NULL, MPI_ERR_ARG, fn, "null keyval argument");
    int k = *keyval;
    if (is_comm_predef_key(k) || is_win_predef_key(k))
        return aptus_error(NULL, MPI_ERR_KEYVAL, fn, "keyval %d is predefined and cannot be freed", k);
    if (k == MPI_KEYVAL_INVALID)
        return aptus_error(NULL, MPI_ERR_KEYVAL, fn, "MPI_KEYVAL_INVALID is not a valid keyval");
    /* A keyval freed before (through another copy of its handle) is let pass, as in MPICH. */
    if (aptus_keyval_free(kind, k) != MPI_SUCCESS)
        return aptus_error(NULL, MPI_ERR_KEYVAL, fn, "keyval %d %s", k, aptus_keyval_problem(kind, k, 1));
    *keyval = MPI_KEYVAL_INVALID;
    return MPI_SUCCESS;
}

int PMPI_Comm_create_keyval(MPI_Comm_copy_attr_function *copy_fn, MPI_Comm_delete_attr_function *delete_fn, int *keyval,
                            void *extra_state)
{
    APTUS_API_LOCKED(create_keyval(APTUS_ATTR_COMM, (void (*)(void))copy_fn, (void (*)(void))delete_fn, keyval,
                                   extra_state, "MPI_Comm_create_keyval"));
}
APTUS_ALIAS(Comm_create_keyval)

int PMPI_Keyval_create(MPI_Copy_function *copy_fn, MPI_Delete_function *delete_fn, int *keyval, void *extra_state)
{
    APTUS_API_LOCKED(create_keyval(APTUS_ATTR_COMM, (void (*)(void))copy_fn, (void (*)(void))delete_fn, keyval,
                                   extra_state, "MPI_Keyval_create"));
}
APTUS_ALIAS(Keyval_create)

int PMPI_Type_create_keyval(MPI_Type_copy_attr_function *copy_fn, MPI_Type_delete_attr_function *delete_fn, int *keyval,
                            void *extra_state)
{
    APTUS_API_LOCKED(create_keyval(APTUS_ATTR_TYPE, (void (*)(void))copy_fn, (void (*)(void))delete_fn, keyval,
                                   extra_state, "MPI_Type_create_keyval"));
}
APTUS_ALIAS(Type_create_keyval)

int PMPI_Win_create_keyval(MPI_Win_copy_attr_function *copy_fn, MPI_Win_delete_attr_function *delete_fn, int *keyval,
                           void *extra_state)
{
    APTUS_API_LOCKED(create_keyval(APTUS_ATTR_WIN, (void (*)(void))copy_fn, (void (*)(void))delete_fn, keyval,
                                   extra_state, "MPI_Win_create_keyval"));
}
APTUS_ALIAS(Win_create_keyval)

int PMPI_Comm_free_keyval(int *keyval)
{
    APTUS_API_LOCKED(free_keyval(APTUS_ATTR_COMM, keyval, "MPI_Comm_free_keyval"));
}
APTUS_ALIAS(Comm_free_keyval)

int PMPI_Keyval_free(int *keyval)
{
    APTUS_API_LOCKED(free_keyval(APTUS_ATTR_COMM, keyval, "MPI_Keyval_free"));
}
APTUS_ALIAS(Keyval_free)

int PMPI_Type_free_keyval(int *keyval)
{
    APTUS_API_LOCKED(free_keyval(APTUS_ATTR_TYPE, keyval, "MPI_Type_free_keyval"));
}
APTUS_ALIAS(Type_free_keyval)

int PMPI_Win_free_keyval(int *keyval)
{
    APTUS_API_LOCKED(free_keyval(APTUS_ATTR_WIN, keyval, "MPI_Win_free_keyval"));
}
APTUS_ALIAS(Win_free_keyval)

/* ---- communicator attributes ---- */

/* The CPUs of a Slurm allocation (SLURM_JOB_CPUS_PER_NODE: "C" or "C(xN)" per group of nodes,
 * comma-separated), 0 outside Slurm or when it cannot be read. */
static long slurm_cpus(void)
{
    const char *s = getenv("SLURM_JOB_CPUS_PER_NODE");
    long total = 0;
    while (s && *s) {
        char *e;
        long c = strtol(s, &e, 10), n = 1;
        if (e == s || c < 0)
            return 0;
        if (!strncmp(e, "(x", 2)) {
            s = e + 2;
            n = strtol(s, &e, 10);
            if (e == s || *e != ')' || n < 1)
                return 0;
            e++;
        }
        total += c * n;
        if (total > INT_MAX)
            return 0;
        if (*e != ',' && *e)
            return 0;
        s = *e ? e + 1 : e;
    }
    return total;
}

/* The predefined attributes (cached on MPI_COMM_WORLD; every communicator answers them).
 * Values are pointers to ints, as the standard specifies for C. */
static int *predef_value(int keyval)
{
    static int tag_ub = APTUS_TAG_UB, host = MPI_PROC_NULL, io = MPI_ANY_SOURCE, wtime_global = 0, appnum, universe;
    switch (keyval) {
    case MPI_TAG_UB: return &tag_ub;
    case MPI_HOST: return &host;
    case MPI_IO: return &io; /* every process can do I/O */
    case MPI_WTIME_IS_GLOBAL: return &wtime_global;
    case MPI_APPNUM: appnum = aptus_rt.pmi.appnum; return &appnum;
    case MPI_UNIVERSE_SIZE: {
        /* The launcher may announce a larger universe (our mpiexec: MPI_UNIVERSE_SIZE; Slurm:
         * the allocation's CPUs); by default the job is the universe. */
        const char *env = getenv("MPI_UNIVERSE_SIZE");
        char *end;
        long v = env ? strtol(env, &end, 10) : 0;
        if (!(env && *env && !*end))
            v = slurm_cpus();
        universe = v >= aptus_rt.size && v <= INT_MAX ? (int)v : aptus_rt.size;
        return &universe;
    }
    case MPI_LASTUSEDCODE: return aptus_error_lastused();
    default: return NULL;
    }
}

/* Set, get and delete on the attribute list `list` of the object with handle h (c: the
 * communicator errors are raised on, NULL for datatypes). */
static int set_attr(struct aptus_comm *c, int kind, void *h, struct aptus_attr **list, int keyval, void *value,
                    const char *fn)
{
    int rc = check_keyval(c, kind, keyval, 0, 0, fn);
    if (rc)
        return rc;
    rc = aptus_attr_set(kind, h, list, keyval, value);
    return rc ? aptus_error_callback(c, rc, fn, "the attribute delete callback") : MPI_SUCCESS;
}

static int get_attr(struct aptus_comm *c, int kind, struct aptus_attr *list, int keyval, void *value, int *flag,
                    const char *fn)
{
    if (!value || !flag)
        return aptus_error(c, MPI_ERR_ARG, fn, "null %s argument", value ? "flag" : "attribute_val");
    int rc = check_keyval(c, kind, keyval, kind == APTUS_ATTR_COMM, 1, fn);
    if (rc)
        return rc;
    int *p = kind == APTUS_ATTR_COMM ? predef_value(keyval) : NULL;
    if (p) {
        *(int **)value = p;
        *flag = 1;
        return MPI_SUCCESS;
    }
    return aptus_attr_get(list, keyval, (void **)value, flag);
}

static int delete_attr(struct aptus_comm *c, int kind, void *h, struct aptus_attr **list, int keyval, const char *fn)
{
    int rc = check_keyval(c, kind, keyval, 0, 1, fn);
    if (rc)
        return rc;
    rc = aptus_attr_delete(kind, h, list, keyval);
    return rc ? aptus_error_callback(c, rc, fn, "the attribute delete callback") : MPI_SUCCESS;
}

static int comm_set(MPI_Comm comm, int keyval, void *value, const char *fn)
{
    GET_COMM(c, comm, fn);
    return set_attr(c, APTUS_ATTR_COMM, (void *)c->handle, &c->attrs, keyval, value, fn);
}

static int comm_get(MPI_Comm comm, int keyval, void *value, int *flag, const char *fn)
{
    GET_COMM(c, comm, fn);
    return get_attr(c, APTUS_ATTR_COMM, c->attrs, keyval, value, flag, fn);
}

static int comm_delete(MPI_Comm comm, int keyval, const char *fn)
{
    GET_COMM(c, comm, fn);
    return delete_attr(c, APTUS_ATTR_COMM, (void *)c->handle, &c->attrs, keyval, fn);
}

int PMPI_Comm_set_attr(MPI_Comm comm, int keyval, void *attribute_val)
{
    APTUS_API_LOCKED(comm_set(comm, keyval, attribute_val, "MPI_Comm_set_attr"));
}
APTUS_ALIAS(Comm_set_attr)

int PMPI_Attr_put(MPI_Comm comm, int keyval, void *attribute_val)
{
    APTUS_API_LOCKED(comm_set(comm, keyval, attribute_val, "MPI_Attr_put"));
}
APTUS_ALIAS(Attr_put)

int PMPI_Comm_get_attr(MPI_Comm comm, int keyval, void *attribute_val, int *flag)
{
    APTUS_API_LOCKED(comm_get(comm, keyval, attribute_val, flag, "MPI_Comm_get_attr"));
}
APTUS_ALIAS(Comm_get_attr)

int PMPI_Attr_get(MPI_Comm comm, int keyval, void *attribute_val, int *flag)
{
    APTUS_API_LOCKED(comm_get(comm, keyval, attribute_val, flag, "MPI_Attr_get"));
}
APTUS_ALIAS(Attr_get)

int PMPI_Comm_delete_attr(MPI_Comm comm, int keyval)
{
    APTUS_API_LOCKED(comm_delete(comm, keyval, "MPI_Comm_delete_attr"));
}
APTUS_ALIAS(Comm_delete_attr)

int PMPI_Attr_delete(MPI_Comm comm, int keyval)
{
    APTUS_API_LOCKED(comm_delete(comm, keyval, "MPI_Attr_delete"));
}
APTUS_ALIAS(Attr_delete)

/* ---- datatype attributes (predefined datatypes may carry attributes too) ---- */

#define GET_ATTR_DTYPE(d, h, FN)                                                                                       \
    API_INIT(FN);                                                                                                      \
    GET_ANY_DTYPE(d, h, FN)

int PMPI_Type_set_attr(MPI_Datatype datatype, int keyval, void *attribute_val)
{
    APTUS_API_LOCK();
    GET_ATTR_DTYPE(d, datatype, "MPI_Type_set_attr");
    return set_attr(NULL, APTUS_ATTR_TYPE, (void *)datatype, &d->attrs, keyval, attribute_val, "MPI_Type_set_attr");
}
APTUS_ALIAS(Type_set_attr)

int PMPI_Type_get_attr(MPI_Datatype datatype, int keyval, void *attribute_val, int *flag)
{
    APTUS_API_LOCK();
    GET_ATTR_DTYPE(d, datatype, "MPI_Type_get_attr");
    return get_attr(NULL, APTUS_ATTR_TYPE, d->attrs, keyval, attribute_val, flag, "MPI_Type_get_attr");
}
APTUS_ALIAS(Type_get_attr)

int PMPI_Type_delete_attr(MPI_Datatype datatype, int keyval)
{
    APTUS_API_LOCK();
    GET_ATTR_DTYPE(d, datatype, "MPI_Type_delete_attr");
    return delete_attr(NULL, APTUS_ATTR_TYPE, (void *)datatype, &d->attrs, keyval, "MPI_Type_delete_attr");
}
APTUS_ALIAS(Type_delete_attr)

/* ---- window attributes (errors on the window's handler) ---- */

static int win_keyval(struct aptus_win *w, int keyval, int predef_ok, int freed_ok, const char *fn)
{
    if (keyval == MPI_KEYVAL_INVALID)
        return aptus_win_error(w, MPI_ERR_KEYVAL, fn, "MPI_KEYVAL_INVALID is not a valid keyval");
    if (is_comm_predef_key(keyval))
        return aptus_win_error(w, MPI_ERR_KEYVAL, fn, "keyval %d is a predefined attribute of communicators", keyval);
    if (is_win_predef_key(keyval))
        return predef_ok ? MPI_SUCCESS
                         : aptus_win_error(w, MPI_ERR_KEYVAL, fn,
                                           "keyval %d is predefined: its attribute cannot be changed", keyval);
    const char *why = aptus_keyval_problem(APTUS_ATTR_WIN, keyval, freed_ok);
    return why ? aptus_win_error(w, MPI_ERR_KEYVAL, fn, "keyval %d %s", keyval, why) : MPI_SUCCESS;
}

int PMPI_Win_set_attr(MPI_Win win, int keyval, void *attribute_val)
{
    APTUS_API_LOCK();
    const char *fn = "MPI_Win_set_attr";
    GET_WIN(w, win, fn);
    int rc = win_keyval(w, keyval, 0, 0, fn);
    if (rc)
        return rc;
    rc = aptus_attr_set(APTUS_ATTR_WIN, (void *)w->handle, &w->attrs, keyval, attribute_val);
    return rc ? aptus_win_error(w, aptus_error_class_of(rc) > 0 ? aptus_error_class_of(rc) : MPI_ERR_OTHER, fn,
                                "the attribute delete callback failed (%d)", rc)
              : MPI_SUCCESS;
}
APTUS_ALIAS(Win_set_attr)

int PMPI_Win_get_attr(MPI_Win win, int keyval, void *attribute_val, int *flag)
{
    APTUS_API_LOCK();
    const char *fn = "MPI_Win_get_attr";
    GET_WIN(w, win, fn);
    if (!attribute_val || !flag)
        return aptus_win_error(w, MPI_ERR_ARG, fn, "null %s argument", attribute_val ? "flag" : "attribute_val");
    int rc = win_keyval(w, keyval, 1, 1, fn);
    if (rc)
        return rc;
    *flag = 1;
    switch (keyval) {
    case MPI_WIN_BASE: *(void **)attribute_val = w->base; return MPI_SUCCESS;
    case MPI_WIN_SIZE: *(MPI_Aint **)attribute_val = &w->attr_size; return MPI_SUCCESS;
    case MPI_WIN_DISP_UNIT: *(int **)attribute_val = &w->attr_disp_unit; return MPI_SUCCESS;
    case MPI_WIN_CREATE_FLAVOR: *(int **)attribute_val = &w->attr_flavor; return MPI_SUCCESS;
    case MPI_WIN_MODEL: *(int **)attribute_val = &w->attr_model; return MPI_SUCCESS;
    default: break;
    }
    *flag = 0;
    return aptus_attr_get(w->attrs, keyval, (void **)attribute_val, flag);
}
APTUS_ALIAS(Win_get_attr)

int PMPI_Win_delete_attr(MPI_Win win, int keyval)
{
    APTUS_API_LOCK();
    const char *fn = "MPI_Win_delete_attr";
    GET_WIN(w, win, fn);
    int rc = win_keyval(w, keyval, 0, 1, fn);
    if (rc)
        return rc;
    rc = aptus_attr_delete(APTUS_ATTR_WIN, (void *)w->handle, &w->attrs, keyval);
    return rc ? aptus_win_error(w, aptus_error_class_of(rc) > 0 ? aptus_error_class_of(rc) : MPI_ERR_OTHER, fn,
                                "the attribute delete callback failed (%d)", rc)
              : MPI_SUCCESS;
}
APTUS_ALIAS(Win_delete_attr)
