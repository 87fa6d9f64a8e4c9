/* One-sided communication (MPI standard, chapter 12): the argument checks of every MPI_Win_*
 * call and of the communication calls; the work is in src/rma/ (rma_internal.h lists its files).
 * Errors of a call on a window go to the window's error handler (MPI_ERRORS_ARE_FATAL unless
 * changed); errors of the creating calls to the communicator's. */
#include <stdlib.h>
#include <string.h>

#include "api/check.h"
#include "core/attr.h"
#include "core/datatype.h"
#include "core/group.h"
#include "core/info.h"
#include "core/op.h"
#include "pt2pt/pt2pt.h"
#include "rma/rma.h"
#include "runtime/lock.h"

/* The outcome of an engine call: success, or the error raised on the window. *why is read here,
 * after the call has set it (an argument `why` would be read in unspecified order with it). */
static int win_result(struct aptus_win *w, int rc, const char *fn, const char *const *why)
{
    return rc ? aptus_win_error(w, rc, fn, "%s", *why ? *why : "failed") : MPI_SUCCESS;
}

/* ---- creation ----------------------------------------------------------------------------- */

static int win_new(int flavor, void *base, MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm,
                   void *baseptr, MPI_Win *win, const char *fn)
{
    GET_COMM(c, comm, fn);
    if (c->is_inter)
        return aptus_error(c, MPI_ERR_COMM, fn, "windows are made over intracommunicators only");
    if (!win)
        return aptus_error(c, MPI_ERR_ARG, fn, "null win argument");
    if (size < 0)
        return aptus_error(c, MPI_ERR_SIZE, fn, "negative window size %lld", (long long)size);
    if (disp_unit <= 0)
        return aptus_error(c, MPI_ERR_DISP, fn, "displacement unit %lld is not positive", (long long)disp_unit);
    if (flavor == MPI_WIN_FLAVOR_CREATE && !base && size > 0)
        return aptus_error(c, MPI_ERR_BASE, fn, "null base for a window of %lld bytes", (long long)size);
    if ((flavor == MPI_WIN_FLAVOR_ALLOCATE || flavor == MPI_WIN_FLAVOR_SHARED) && !baseptr)
        return aptus_error(c, MPI_ERR_ARG, fn, "null baseptr argument");
    if (info != MPI_INFO_NULL && !aptus_info_get(info))
        return aptus_error(c, MPI_ERR_INFO, fn, "invalid info handle");
    struct aptus_win *w;
    const char *why = NULL;
    int rc = aptus_win_make(flavor, base, size, disp_unit, info, c, baseptr, &w, &why);
    if (rc)
        return aptus_error(c, rc, fn, "%s", why ? why : "cannot make the window");
    w->attr_size = w->wsize;
    w->attr_disp_unit = (int)disp_unit;
    w->attr_flavor = flavor;
    w->attr_model = w->model;
    *win = w->handle;
    return MPI_SUCCESS;
}

int PMPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
    APTUS_OUT_NULL(win, MPI_WIN_NULL);
    APTUS_API_LOCKED(win_new(MPI_WIN_FLAVOR_CREATE, base, size, disp_unit, info, comm, NULL, win, "MPI_Win_create"));
}
APTUS_ALIAS(Win_create)

int PMPI_Win_create_c(void *base, MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
    APTUS_OUT_NULL(win, MPI_WIN_NULL);
    APTUS_API_LOCKED(win_new(MPI_WIN_FLAVOR_CREATE, base, size, disp_unit, info, comm, NULL, win, "MPI_Win_create_c"));
}
APTUS_ALIAS(Win_create_c)

int PMPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win)
{
    APTUS_OUT_NULL(win, MPI_WIN_NULL);
    APTUS_API_LOCKED(
        win_new(MPI_WIN_FLAVOR_ALLOCATE, NULL, size, disp_unit, info, comm, baseptr, win, "MPI_Win_allocate"));
}
APTUS_ALIAS(Win_allocate)

int PMPI_Win_allocate_c(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win)
{
    APTUS_OUT_NULL(win, MPI_WIN_NULL);
    APTUS_API_LOCKED(
        win_new(MPI_WIN_FLAVOR_ALLOCATE, NULL, size, disp_unit, info, comm, baseptr, win, "MPI_Win_allocate_c"));
}
APTUS_ALIAS(Win_allocate_c)

int PMPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win)
{
    APTUS_OUT_NULL(win, MPI_WIN_NULL);
    APTUS_API_LOCKED(
        win_new(MPI_WIN_FLAVOR_SHARED, NULL, size, disp_unit, info, comm, baseptr, win, "MPI_Win_allocate_shared"));
}
APTUS_ALIAS(Win_allocate_shared)

int PMPI_Win_allocate_shared_c(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
                               MPI_Win *win)
{
    APTUS_OUT_NULL(win, MPI_WIN_NULL);
    APTUS_API_LOCKED(
        win_new(MPI_WIN_FLAVOR_SHARED, NULL, size, disp_unit, info, comm, baseptr, win, "MPI_Win_allocate_shared_c"));
}
APTUS_ALIAS(Win_allocate_shared_c)

int PMPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
    APTUS_OUT_NULL(win, MPI_WIN_NULL);
    APTUS_API_LOCKED(win_new(MPI_WIN_FLAVOR_DYNAMIC, NULL, 0, 1, info, comm, NULL, win, "MPI_Win_create_dynamic"));
}
APTUS_ALIAS(Win_create_dynamic)

int PMPI_Win_free(MPI_Win *win)
{
    APTUS_API_LOCK();
    const char *fn = "MPI_Win_free";
    API_INIT(fn);
    if (!win)
        return aptus_error(NULL, MPI_ERR_ARG, fn, "null win argument");
    GET_WIN(w, *win, fn);
    const char *why = NULL;
    /* the attributes go first, while the window is whole (their delete callbacks see it) */
    int rc = aptus_attr_delete_all(APTUS_ATTR_WIN, (void *)w->handle, &w->attrs);
    if (rc)
        return aptus_win_error(w, aptus_error_class_of(rc) > 0 ? aptus_error_class_of(rc) : MPI_ERR_OTHER, fn,
                               "an attribute delete callback failed (%d)", rc);
    struct aptus_errhandler *eh = w->errh;
    eh->refcount++; /* to report an error after the window is gone */
    MPI_Win h = w->handle;
    rc = aptus_win_free(w, &why);
    if (rc == MPI_ERR_RMA_SYNC) { /* refused: the window is still there */
        aptus_errh_release(eh);
        return aptus_win_error(w, rc, fn, "%s", why);
    }
    *win = MPI_WIN_NULL;
    if (rc)
        rc = aptus_error_on(eh, (void *)h, rc, fn, "%s", why ? why : "failed");
    aptus_errh_release(eh);
    return rc;
}
APTUS_ALIAS(Win_free)

int PMPI_Win_attach(MPI_Win win, void *base, MPI_Aint size)
{
    APTUS_API_LOCK();
    const char *fn = "MPI_Win_attach";
    GET_WIN(w, win, fn);
    if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC)
        return aptus_win_error(w, MPI_ERR_RMA_FLAVOR, fn, "memory is attached to dynamic windows only");
    if (size < 0)
        return aptus_win_error(w, MPI_ERR_SIZE, fn, "negative size %lld", (long long)size);
    if (!base && size > 0)
        return aptus_win_error(w, MPI_ERR_BASE, fn, "null base for %lld bytes", (long long)size);
    const char *why = NULL;
    return win_result(w, aptus_win_attach(w, base, size, &why), fn, &why);
}
APTUS_ALIAS(Win_attach)

int PMPI_Win_detach(MPI_Win win, const void *base)
{
    APTUS_API_LOCK();
    const char *fn = "MPI_Win_detach";
    GET_WIN(w, win, fn);
    if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC)
        return aptus_win_error(w, MPI_ERR_RMA_FLAVOR, fn, "memory is detached from dynamic windows only");
    const char *why = NULL;
    return win_result(w, aptus_win_detach(w, base, &why), fn, &why);
}
APTUS_ALIAS(Win_detach)

static int shared_query(MPI_Win win, int rank, MPI_Aint *size, MPI_Aint *disp_unit, void *baseptr, const char *fn)
{
    GET_WIN(w, win, fn);
    if (rank != MPI_PROC_NULL && (rank < 0 || rank >= w->size))
        return aptus_win_error(w, MPI_ERR_RANK, fn, "invalid rank %d (the window has %d ranks)", rank, w->size);
    if (!size || !disp_unit || !baseptr)
        return aptus_win_error(w, MPI_ERR_ARG, fn, "null size, disp_unit or baseptr argument");
    const char *why = NULL;
    return win_result(w, aptus_win_shared_query(w, rank, size, disp_unit, baseptr, &why), fn, &why);
}

int PMPI_Win_shared_query(MPI_Win win, int rank, MPI_Aint *size, int *disp_unit, void *baseptr)
{
    APTUS_API_LOCK();
    MPI_Aint du = 0;
    int rc = shared_query(win, rank, size, &du, baseptr, "MPI_Win_shared_query");
    if (!rc && disp_unit)
        *disp_unit = (int)du;
    return rc;
}
APTUS_ALIAS(Win_shared_query)

int PMPI_Win_shared_query_c(MPI_Win win, int rank, MPI_Aint *size, MPI_Aint *disp_unit, void *baseptr)
{
    APTUS_API_LOCKED(shared_query(win, rank, size, disp_unit, baseptr, "MPI_Win_shared_query_c"));
}
APTUS_ALIAS(Win_shared_query_c)

/* ---- names, groups, info ------------------------------------------------------------------- */

int PMPI_Win_set_name(MPI_Win win, const char *name)
{
    APTUS_API_LOCK();
    GET_WIN(w, win, "MPI_Win_set_name");
    if (!name)
        return aptus_win_error(w, MPI_ERR_ARG, "MPI_Win_set_name", "null name argument");
    strncpy(w->name, name, MPI_MAX_OBJECT_NAME - 1);
    w->name[MPI_MAX_OBJECT_NAME - 1] = 0;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Win_set_name)

int PMPI_Win_get_name(MPI_Win win, char *name, int *resultlen)
{
    APTUS_API_LOCK();
    if (win == MPI_WIN_NULL) { /* MPI 4.1: the null handle has a name too */
        API_INIT("MPI_Win_get_name");
        if (!name || !resultlen)
            return aptus_error(NULL, MPI_ERR_ARG, "MPI_Win_get_name", "null name or resultlen argument");
        strcpy(name, "MPI_WIN_NULL");
        *resultlen = (int)strlen(name);
        return MPI_SUCCESS;
    }
    GET_WIN(w, win, "MPI_Win_get_name");
    if (!name || !resultlen)
        return aptus_win_error(w, MPI_ERR_ARG, "MPI_Win_get_name", "null name or resultlen argument");
    strcpy(name, w->name);
    *resultlen = (int)strlen(name);
    return MPI_SUCCESS;
}
APTUS_ALIAS(Win_get_name)

int PMPI_Win_get_group(MPI_Win win, MPI_Group *group)
{
    APTUS_OUT_NULL(group, MPI_GROUP_NULL);
    APTUS_API_LOCK();
    GET_WIN(w, win, "MPI_Win_get_group");
    if (!group)
        return aptus_win_error(w, MPI_ERR_ARG, "MPI_Win_get_group", "null group argument");
    struct aptus_group *g = aptus_comm_group(w->comm, 0);
    if (!g)
        return aptus_win_error(w, MPI_ERR_NO_MEM, "MPI_Win_get_group", "out of memory");
    *group = aptus_group_handle(g);
    return MPI_SUCCESS;
}
APTUS_ALIAS(Win_get_group)

int PMPI_Win_set_info(MPI_Win win, MPI_Info info)
{
    APTUS_API_LOCK();
    GET_WIN(w, win, "MPI_Win_set_info");
    struct aptus_info *in = aptus_info_get(info);
    if (!in)
        return aptus_win_error(w, MPI_ERR_INFO, "MPI_Win_set_info",
                               info == MPI_INFO_NULL ? "MPI_INFO_NULL is not a valid info object here"
                                                     : "invalid info handle");
    if (w->info == MPI_INFO_NULL) {
        struct aptus_info *n = aptus_info_new();
        if (!n)
            return aptus_win_error(w, MPI_ERR_NO_MEM, "MPI_Win_set_info", "out of memory");
        w->info = (MPI_Info)n;
    }
    struct aptus_info *mine = aptus_info_get(w->info);
    for (int i = 0; i < in->n; i++)
        if (aptus_info_set(mine, in->keys[i], in->vals[i]))
            return aptus_win_error(w, MPI_ERR_NO_MEM, "MPI_Win_set_info", "out of memory");
    return MPI_SUCCESS;
}
APTUS_ALIAS(Win_set_info)

int PMPI_Win_get_info(MPI_Win win, MPI_Info *info_used)
{
    APTUS_OUT_NULL(info_used, MPI_INFO_NULL);
    APTUS_API_LOCK();
    GET_WIN(w, win, "MPI_Win_get_info");
    if (!info_used)
        return aptus_win_error(w, MPI_ERR_ARG, "MPI_Win_get_info", "null info_used argument");
    struct aptus_info *i = w->info != MPI_INFO_NULL ? aptus_info_dup(aptus_info_get(w->info)) : aptus_info_new();
    if (!i)
        return aptus_win_error(w, MPI_ERR_NO_MEM, "MPI_Win_get_info", "out of memory");
    /* the hints in effect: the defaults for those not set */
    static const char *const defaults[][2] = { { "no_locks", "false" },
                                               { "accumulate_ordering", "rar,raw,war,waw" },
                                               { "accumulate_ops", "same_op_no_op" },
                                               { "same_size", "false" },
                                               { "same_disp_unit", "false" } };
    for (size_t k = 0; k < sizeof defaults / sizeof defaults[0]; k++)
        if (!aptus_info_lookup(i, defaults[k][0]) && aptus_info_set(i, defaults[k][0], defaults[k][1])) {
            aptus_info_destroy(i);
            return aptus_win_error(w, MPI_ERR_NO_MEM, "MPI_Win_get_info", "out of memory");
        }
    *info_used = (MPI_Info)i;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Win_get_info)

/* ---- synchronization ---------------------------------------------------------------------- */

#define CHK_ASSERT(w, a, allowed, FN)                                                                                  \
    if ((a) & ~(allowed))                                                                                              \
    return aptus_win_error(w, MPI_ERR_ASSERT, FN, "invalid assertion %d for this call", (int)(a))

int PMPI_Win_fence(int assert, MPI_Win win)
{
    APTUS_API_LOCK();
    GET_WIN(w, win, "MPI_Win_fence");
    CHK_ASSERT(w, assert, MPI_MODE_NOSTORE | MPI_MODE_NOPUT | MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED, "MPI_Win_fence");
    const char *why = NULL;
    return win_result(w, aptus_win_fence(w, assert, &why), "MPI_Win_fence", &why);
}
APTUS_ALIAS(Win_fence)

/* The window ranks of a group's members; NULL with *rc when a member is not in the window. */
static int *group_ranks(struct aptus_win *w, MPI_Group group, int *n, int *rc, const char *fn)
{
    *rc = 0;
    struct aptus_group *g = aptus_group_lookup(group);
    if (!g) {
        *rc = aptus_win_error(w, MPI_ERR_GROUP, fn,
                              group == MPI_GROUP_NULL ? "MPI_GROUP_NULL is not a valid group" : "invalid group handle");
        return NULL;
    }
    int *r = malloc(sizeof *r * (size_t)(g->size ? g->size : 1));
    if (!r) {
        *rc = aptus_win_error(w, MPI_ERR_NO_MEM, fn, "out of memory");
        return NULL;
    }
    for (int i = 0; i < g->size; i++) {
        r[i] = -1;
        for (int k = 0; k < w->size; k++)
            if (w->t[k].world == g->world[i])
                r[i] = k;
        if (r[i] < 0) {
            free(r);
            *rc = aptus_win_error(w, MPI_ERR_GROUP, fn, "member %d of the group is not in the window's group", i);
            return NULL;
        }
    }
    *n = g->size;
    return r;
}

static int pscw_open(MPI_Group group, int assert, MPI_Win win, int post, const char *fn)
{
    GET_WIN(w, win, fn);
    CHK_ASSERT(w, assert, post ? MPI_MODE_NOCHECK | MPI_MODE_NOSTORE | MPI_MODE_NOPUT : MPI_MODE_NOCHECK, fn);
    int n = 0, rc;
    int *r = group_ranks(w, group, &n, &rc, fn);
    if (!r)
        return rc;
    const char *why = NULL;
    rc = post ? aptus_win_post(w, r, n, assert, &why) : aptus_win_start(w, r, n, assert, &why);
    free(r);
    return win_result(w, rc, fn, &why);
}

int PMPI_Win_post(MPI_Group group, int assert, MPI_Win win)
{
    APTUS_API_LOCKED(pscw_open(group, assert, win, 1, "MPI_Win_post"));
}
APTUS_ALIAS(Win_post)

int PMPI_Win_start(MPI_Group group, int assert, MPI_Win win)
{
    APTUS_API_LOCKED(pscw_open(group, assert, win, 0, "MPI_Win_start"));
}
APTUS_ALIAS(Win_start)

int PMPI_Win_complete(MPI_Win win)
{
    APTUS_API_LOCK();
    GET_WIN(w, win, "MPI_Win_complete");
    const char *why = NULL;
    return win_result(w, aptus_win_complete(w, &why), "MPI_Win_complete", &why);
}
APTUS_ALIAS(Win_complete)

int PMPI_Win_wait(MPI_Win win)
{
    APTUS_API_LOCK();
    GET_WIN(w, win, "MPI_Win_wait");
    const char *why = NULL;
    return win_result(w, aptus_win_wait(w, 0, NULL, &why), "MPI_Win_wait", &why);
}
APTUS_ALIAS(Win_wait)

int PMPI_Win_test(MPI_Win win, int *flag)
{
    APTUS_API_LOCK();
    GET_WIN(w, win, "MPI_Win_test");
    if (!flag)
        return aptus_win_error(w, MPI_ERR_ARG, "MPI_Win_test", "null flag argument");
    const char *why = NULL;
    return win_result(w, aptus_win_wait(w, 1, flag, &why), "MPI_Win_test", &why);
}
APTUS_ALIAS(Win_test)

#define CHK_TARGET(w, r, FN)                                                                                           \
    if ((r) != MPI_PROC_NULL && ((r) < 0 || (r) >= (w)->size))                                                         \
    return aptus_win_error(w, MPI_ERR_RANK, FN, "invalid target rank %d (the window has %d ranks)", (int)(r), (w)->size)

int PMPI_Win_lock(int lock_type, int rank, int assert, MPI_Win win)
{
    APTUS_API_LOCK();
    const char *fn = "MPI_Win_lock";
    GET_WIN(w, win, fn);
    if (lock_type != MPI_LOCK_SHARED && lock_type != MPI_LOCK_EXCLUSIVE)
        return aptus_win_error(w, MPI_ERR_LOCKTYPE, fn, "invalid lock type %d (MPI_LOCK_SHARED or MPI_LOCK_EXCLUSIVE)",
                               lock_type);
    CHK_TARGET(w, rank, fn);
    CHK_ASSERT(w, assert, MPI_MODE_NOCHECK, fn);
    if (rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    const char *why = NULL;
    return win_result(w, aptus_win_lock(w, lock_type, rank, assert, &why), fn, &why);
}
APTUS_ALIAS(Win_lock)

int PMPI_Win_unlock(int rank, MPI_Win win)
{
    APTUS_API_LOCK();
    const char *fn = "MPI_Win_unlock";
    GET_WIN(w, win, fn);
    CHK_TARGET(w, rank, fn);
    if (rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    const char *why = NULL;
    return win_result(w, aptus_win_unlock(w, rank, &why), fn, &why);
}
APTUS_ALIAS(Win_unlock)

int PMPI_Win_lock_all(int assert, MPI_Win win)
{
    APTUS_API_LOCK();
    GET_WIN(w, win, "MPI_Win_lock_all");
    CHK_ASSERT(w, assert, MPI_MODE_NOCHECK, "MPI_Win_lock_all");
    const char *why = NULL;
    return win_result(w, aptus_win_lock_all(w, assert, &why), "MPI_Win_lock_all", &why);
}
APTUS_ALIAS(Win_lock_all)

int PMPI_Win_unlock_all(MPI_Win win)
{
    APTUS_API_LOCK();
    GET_WIN(w, win, "MPI_Win_unlock_all");
    const char *why = NULL;
    return win_result(w, aptus_win_unlock_all(w, &why), "MPI_Win_unlock_all", &why);
}
APTUS_ALIAS(Win_unlock_all)

/* Flushes are valid in passive-target epochs only. */
static int flush_any(MPI_Win win, int rank, int all, int local, const char *fn)
{
    GET_WIN(w, win, fn);
    if (!all) {
        CHK_TARGET(w, rank, fn);
        if (rank == MPI_PROC_NULL)
            return MPI_SUCCESS;
    }
    int locked = w->lock_all || (all ? w->nlocks : w->t[rank].lock);
    if (locked && aptus_rma_flush_idle(w))
        return MPI_SUCCESS;
    if (!locked)
        return aptus_win_error(w, MPI_ERR_RMA_SYNC, fn,
                               all ? "no passive-target epoch is open (MPI_Win_lock or MPI_Win_lock_all first)"
                                   : "the target is not locked (MPI_Win_lock or MPI_Win_lock_all first)");
    const char *why = NULL;
    return win_result(w, aptus_win_flush(w, all ? -1 : rank, local, &why), fn, &why);
}

int PMPI_Win_flush(int rank, MPI_Win win)
{
    APTUS_API_LOCKED(flush_any(win, rank, 0, 0, "MPI_Win_flush"));
}
APTUS_ALIAS(Win_flush)

int PMPI_Win_flush_all(MPI_Win win)
{
    APTUS_API_LOCKED(flush_any(win, 0, 1, 0, "MPI_Win_flush_all"));
}
APTUS_ALIAS(Win_flush_all)

int PMPI_Win_flush_local(int rank, MPI_Win win)
{
    APTUS_API_LOCKED(flush_any(win, rank, 0, 1, "MPI_Win_flush_local"));
}
APTUS_ALIAS(Win_flush_local)

int PMPI_Win_flush_local_all(MPI_Win win)
{
    APTUS_API_LOCKED(flush_any(win, 0, 1, 1, "MPI_Win_flush_local_all"));
}
APTUS_ALIAS(Win_flush_local_all)

int PMPI_Win_sync(MPI_Win win)
{
    APTUS_API_LOCK();
    GET_WIN(w, win, "MPI_Win_sync");
    (void)w;
    aptus_rma_fence();
    return MPI_SUCCESS;
}
APTUS_ALIAS(Win_sync)

/* ---- communication ------------------------------------------------------------------------ */

/* A datatype argument of a communication call: committed (count 0 of MPI_DATATYPE_NULL is let
 * pass as an empty buffer, as for messages). */
static int rma_dtype(struct aptus_win *w, MPI_Datatype h, MPI_Count n, const char *which,
                     const struct aptus_dtype **out, const char *fn)
{
    const struct aptus_dtype *d = aptus_dtype_get(h);
    if (!d && h == MPI_DATATYPE_NULL && n == 0)
        d = aptus_dtype_get(MPI_BYTE);
    if (!d)
        return aptus_win_error(w, MPI_ERR_TYPE, fn, "invalid %s datatype%s", which,
                               h == MPI_DATATYPE_NULL ? " (MPI_DATATYPE_NULL)" : "");
    if (!d->committed)
        return aptus_win_error(w, MPI_ERR_TYPE, fn, "the %s datatype is not committed", which);
    if (n < 0)
        return aptus_win_error(w, MPI_ERR_COUNT, fn, "negative %s count %lld", which, (long long)n);
    size_t b;
    if (__builtin_mul_overflow((size_t)n, d->size, &b))
        return aptus_win_error(w, MPI_ERR_COUNT, fn, "%lld %s elements are too large", (long long)n, which);
    *out = d;
    return 0;
}

/* The checks shared by every communication call; then the engine. */
static int rma_call(struct aptus_win *w, struct rma_op *op, MPI_Datatype odt, MPI_Count ocount, MPI_Datatype rdt,
                    MPI_Count rcount, MPI_Datatype tdt, MPI_Count tcount, MPI_Op opH, MPI_Request *request,
                    const char *fn)
{
    int rc;
    CHK_TARGET(w, op->target, fn);
    if (op->disp < 0 && w->flavor != MPI_WIN_FLAVOR_DYNAMIC)
        return aptus_win_error(w, MPI_ERR_DISP, fn, "negative target displacement %lld", (long long)op->disp);
    int need_origin = op->kind != RMA_GET;
    if (op->kind == RMA_GACC) {
        struct aptus_op *o = aptus_op_get(opH);
        need_origin = !o || o->predefined != APTUS_OP_NO_OP;
    }
    if (need_origin && (rc = rma_dtype(w, odt, ocount, "origin", &op->odt, fn)))
        return rc;
    if ((op->kind == RMA_GET || op->kind == RMA_GACC || op->kind == RMA_CAS) &&
        (rc = rma_dtype(w, rdt, rcount, op->kind == RMA_GET ? "origin" : "result", &op->rdt, fn)))
        return rc;
    if ((rc = rma_dtype(w, tdt, tcount, "target", &op->tdt, fn)))
        return rc;
    op->ocount = need_origin ? (size_t)ocount : 0;
    op->rcount = (size_t)rcount;
    op->tcount = (size_t)tcount;
    size_t tb = op->tdt->size * op->tcount;
    if (op->kind == RMA_PUT || op->kind == RMA_ACC || (op->kind == RMA_GACC && need_origin)) {
        if (op->odt->size * op->ocount != tb)
            return aptus_win_error(w, MPI_ERR_TYPE, fn,
                                   "the origin (%zu bytes) and target (%zu bytes) type signatures differ in size",
                                   op->odt->size * op->ocount, tb);
        if (!op->obuf && tb && op->odt->true_lb == 0)
            return aptus_win_error(w, MPI_ERR_BUFFER, fn, "null origin buffer for %zu bytes", tb);
    }
    if (op->kind == RMA_GET || op->kind == RMA_GACC) {
        if (op->rdt->size * op->rcount != tb)
            return aptus_win_error(w, MPI_ERR_TYPE, fn,
                                   "the %s (%zu bytes) and target (%zu bytes) type signatures differ in size",
                                   op->kind == RMA_GET ? "origin" : "result", op->rdt->size * op->rcount, tb);
        if (!op->rbuf && tb && op->rdt->true_lb == 0)
            return aptus_win_error(w, MPI_ERR_BUFFER, fn, "null %s buffer for %zu bytes",
                                   op->kind == RMA_GET ? "origin" : "result", tb);
    }
    if (op->kind == RMA_ACC || op->kind == RMA_GACC) {
        struct aptus_op *o = aptus_op_get(opH);
        if (!o)
            return aptus_win_error(w, MPI_ERR_OP, fn,
                                   opH == MPI_OP_NULL ? "MPI_OP_NULL is not a valid op" : "invalid op handle");
        if (!o->predefined)
            return aptus_win_error(w, MPI_ERR_OP, fn, "accumulates take predefined ops only, not user-defined ones");
        op->op_id = o->predefined;
    }
    /* the basic types (an accumulate of no element has none to check: MPI_SUM on MPI_BYTE is let
     * pass at count 0, as mpi4py's tests expect) */
    if ((op->kind == RMA_ACC || op->kind == RMA_GACC || op->kind == RMA_CAS) && (tb || op->kind == RMA_CAS)) {
        size_t n;
        MPI_Datatype bt = aptus_dt_reduce_type(op->tdt, &n);
        if (bt == MPI_DATATYPE_NULL)
            return aptus_win_error(w, MPI_ERR_TYPE, fn,
                                   "the target datatype of an accumulate must be made of one predefined type");
        const struct aptus_dtype *od = need_origin && op->kind != RMA_CAS ? op->odt : NULL;
        if (od && od->size) {
            size_t m;
            if (aptus_dt_reduce_type(od, &m) != bt)
                return aptus_win_error(
                    w, MPI_ERR_TYPE, fn,
                    "the origin and target datatypes of an accumulate must have the same basic type");
        }
        if (op->kind != RMA_CAS && !aptus_op_allowed(op->op_id, bt, 1))
            return aptus_win_error(w, MPI_ERR_OP, fn, "%s is not defined for the target's basic datatype",
                                   aptus_op_name(op->op_id));
    }
    struct aptus_request *r = NULL;
    const char *why = NULL;
    rc = aptus_rma_op(w, op, request ? &r : NULL, &why);
    if (rc)
        return aptus_win_error(w, rc, fn, "%s", why ? why : "failed");
    if (request)
        *request = (MPI_Request)r;
    return MPI_SUCCESS;
}

static int put_get(int kind, const void *obuf, MPI_Count ocount, MPI_Datatype odt, int target, MPI_Aint disp,
                   MPI_Count tcount, MPI_Datatype tdt, MPI_Win win, MPI_Request *request, const char *fn)
{
    GET_WIN(w, win, fn);
    if (!request && aptus_rma_fast_putget(w, kind == RMA_PUT, (void *)obuf, ocount, odt, target, disp, tcount, tdt))
        return MPI_SUCCESS;
    if (!request && !strncmp(fn, "MPI_R", 5))
        return aptus_win_error(w, MPI_ERR_ARG, fn, "null request argument");
    struct rma_op op = { 0 };
    op.kind = kind;
    op.target = target;
    op.disp = disp;
    if (kind == RMA_PUT)
        op.obuf = obuf;
    else
        op.rbuf = (void *)obuf;
    return rma_call(w, &op, odt, ocount, odt, ocount, tdt, tcount, MPI_OP_NULL, request, fn);
}

int PMPI_Put(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
             MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win)
{
    APTUS_API_LOCKED(put_get(RMA_PUT, origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                             target_count, target_datatype, win, NULL, "MPI_Put"));
}
APTUS_ALIAS(Put)

int PMPI_Put_c(const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype, int target_rank,
               MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Win win)
{
    APTUS_API_LOCKED(put_get(RMA_PUT, origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                             target_count, target_datatype, win, NULL, "MPI_Put_c"));
}
APTUS_ALIAS(Put_c)

int PMPI_Get(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
             int target_count, MPI_Datatype target_datatype, MPI_Win win)
{
    APTUS_API_LOCKED(put_get(RMA_GET, origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                             target_count, target_datatype, win, NULL, "MPI_Get"));
}
APTUS_ALIAS(Get)

int PMPI_Get_c(void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype, int target_rank,
               MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Win win)
{
    APTUS_API_LOCKED(put_get(RMA_GET, origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                             target_count, target_datatype, win, NULL, "MPI_Get_c"));
}
APTUS_ALIAS(Get_c)

int PMPI_Rput(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
              MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request)
{
    APTUS_OUT_NULL(request, MPI_REQUEST_NULL);
    APTUS_API_LOCKED(put_get(RMA_PUT, origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                             target_count, target_datatype, win, request, "MPI_Rput"));
}
APTUS_ALIAS(Rput)

int PMPI_Rput_c(const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype, int target_rank,
                MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Win win,
                MPI_Request *request)
{
    APTUS_OUT_NULL(request, MPI_REQUEST_NULL);
    APTUS_API_LOCKED(put_get(RMA_PUT, origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                             target_count, target_datatype, win, request, "MPI_Rput_c"));
}
APTUS_ALIAS(Rput_c)

int PMPI_Rget(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
              int target_count, MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request)
{
    APTUS_OUT_NULL(request, MPI_REQUEST_NULL);
    APTUS_API_LOCKED(put_get(RMA_GET, origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                             target_count, target_datatype, win, request, "MPI_Rget"));
}
APTUS_ALIAS(Rget)

int PMPI_Rget_c(void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype, int target_rank,
                MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Win win,
                MPI_Request *request)
{
    APTUS_OUT_NULL(request, MPI_REQUEST_NULL);
    APTUS_API_LOCKED(put_get(RMA_GET, origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                             target_count, target_datatype, win, request, "MPI_Rget_c"));
}
APTUS_ALIAS(Rget_c)

static int acc_any(const void *obuf, MPI_Count ocount, MPI_Datatype odt, void *rbuf, MPI_Count rcount, MPI_Datatype rdt,
                   int target, MPI_Aint disp, MPI_Count tcount, MPI_Datatype tdt, MPI_Op opH, MPI_Win win, int fetch,
                   MPI_Request *request, int want_req, const char *fn)
{
    GET_WIN(w, win, fn);
    if (!fetch && !want_req) {
        struct aptus_op *o = aptus_op_get(opH);
        if (o && o->predefined && aptus_rma_fast_acc(w, obuf, ocount, odt, target, disp, tcount, tdt, o->predefined))
            return MPI_SUCCESS;
    }
    if (want_req && !request)
        return aptus_win_error(w, MPI_ERR_ARG, fn, "null request argument");
    struct rma_op op = { 0 };
    op.kind = fetch ? RMA_GACC : RMA_ACC;
    op.obuf = obuf;
    op.rbuf = rbuf;
    op.target = target;
    op.disp = disp;
    return rma_call(w, &op, odt, ocount, rdt, rcount, tdt, tcount, opH, request, fn);
}

int PMPI_Accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                    MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
    APTUS_API_LOCKED(acc_any(origin_addr, origin_count, origin_datatype, NULL, 0, MPI_DATATYPE_NULL, target_rank,
                             target_disp, target_count, target_datatype, op, win, 0, NULL, 0, "MPI_Accumulate"));
}
APTUS_ALIAS(Accumulate)

int PMPI_Accumulate_c(const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype, int target_rank,
                      MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op,
                      MPI_Win win)
{
    APTUS_API_LOCKED(acc_any(origin_addr, origin_count, origin_datatype, NULL, 0, MPI_DATATYPE_NULL, target_rank,
                             target_disp, target_count, target_datatype, op, win, 0, NULL, 0, "MPI_Accumulate_c"));
}
APTUS_ALIAS(Accumulate_c)

int PMPI_Raccumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                     MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                     MPI_Request *request)
{
    APTUS_OUT_NULL(request, MPI_REQUEST_NULL);
    APTUS_API_LOCKED(acc_any(origin_addr, origin_count, origin_datatype, NULL, 0, MPI_DATATYPE_NULL, target_rank,
                             target_disp, target_count, target_datatype, op, win, 0, request, 1, "MPI_Raccumulate"));
}
APTUS_ALIAS(Raccumulate)

int PMPI_Raccumulate_c(const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype, int target_rank,
                       MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op,
                       MPI_Win win, MPI_Request *request)
{
    APTUS_OUT_NULL(request, MPI_REQUEST_NULL);
    APTUS_API_LOCKED(acc_any(origin_addr, origin_count, origin_datatype, NULL, 0, MPI_DATATYPE_NULL, target_rank,
                             target_disp, target_count, target_datatype, op, win, 0, request, 1, "MPI_Raccumulate_c"));
}
APTUS_ALIAS(Raccumulate_c)

int PMPI_Get_accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, void *result_addr,
                        int result_count, MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                        int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
    APTUS_API_LOCKED(acc_any(origin_addr, origin_count, origin_datatype, result_addr, result_count, result_datatype,
                             target_rank, target_disp, target_count, target_datatype, op, win, 1, NULL, 0,
                             "MPI_Get_accumulate"));
}
APTUS_ALIAS(Get_accumulate)

int PMPI_Get_accumulate_c(const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
                          void *result_addr, MPI_Count result_count, MPI_Datatype result_datatype, int target_rank,
                          MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op,
                          MPI_Win win)
{
    APTUS_API_LOCKED(acc_any(origin_addr, origin_count, origin_datatype, result_addr, result_count, result_datatype,
                             target_rank, target_disp, target_count, target_datatype, op, win, 1, NULL, 0,
                             "MPI_Get_accumulate_c"));
}
APTUS_ALIAS(Get_accumulate_c)

int PMPI_Rget_accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, void *result_addr,
                         int result_count, MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                         int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request *request)
{
    APTUS_OUT_NULL(request, MPI_REQUEST_NULL);
    APTUS_API_LOCKED(acc_any(origin_addr, origin_count, origin_datatype, result_addr, result_count, result_datatype,
                             target_rank, target_disp, target_count, target_datatype, op, win, 1, request, 1,
                             "MPI_Rget_accumulate"));
}
APTUS_ALIAS(Rget_accumulate)

int PMPI_Rget_accumulate_c(const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
                           void *result_addr, MPI_Count result_count, MPI_Datatype result_datatype, int target_rank,
                           MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op,
                           MPI_Win win, MPI_Request *request)
{
    APTUS_OUT_NULL(request, MPI_REQUEST_NULL);
    APTUS_API_LOCKED(acc_any(origin_addr, origin_count, origin_datatype, result_addr, result_count, result_datatype,
                             target_rank, target_disp, target_count, target_datatype, op, win, 1, request, 1,
                             "MPI_Rget_accumulate_c"));
}
APTUS_ALIAS(Rget_accumulate_c)

int PMPI_Fetch_and_op(const void *origin_addr, void *result_addr, MPI_Datatype datatype, int target_rank,
                      MPI_Aint target_disp, MPI_Op op, MPI_Win win)
{
    APTUS_API_LOCK();
    const char *fn = "MPI_Fetch_and_op";
    GET_WIN(w, win, fn);
    struct aptus_op *o = aptus_op_get(op);
    if (o && o->predefined &&
        aptus_rma_fast_fop(w, origin_addr, result_addr, datatype, target_rank, target_disp, o->predefined))
        return MPI_SUCCESS;
    const struct aptus_dtype *d = aptus_dtype_get(datatype);
    if (!d || !d->predefined)
        return aptus_win_error(w, MPI_ERR_TYPE, fn, "the datatype must be a predefined one");
    return acc_any(origin_addr, 1, datatype, result_addr, 1, datatype, target_rank, target_disp, 1, datatype, op, win,
                   1, NULL, 0, fn);
}
APTUS_ALIAS(Fetch_and_op)

int PMPI_Compare_and_swap(const void *origin_addr, const void *compare_addr, void *result_addr, MPI_Datatype datatype,
                          int target_rank, MPI_Aint target_disp, MPI_Win win)
{
    APTUS_API_LOCK();
    const char *fn = "MPI_Compare_and_swap";
    GET_WIN(w, win, fn);
    const struct aptus_dtype *d = aptus_dtype_get(datatype);
    if (!d || !d->predefined || !d->basic)
        return aptus_win_error(w, MPI_ERR_TYPE, fn, "the datatype must be a predefined one");
    if (d->basic == APTUS_B_FLOAT || d->basic == APTUS_B_DOUBLE || d->basic == APTUS_B_LONG_DOUBLE ||
        d->basic >= APTUS_B_C_FLOAT_COMPLEX)
        return aptus_win_error(w, MPI_ERR_TYPE, fn,
                               "compare-and-swap takes an integer, logical or byte datatype, not %s",
                               aptus_dtype_name(d));
    if (!origin_addr || !compare_addr || !result_addr)
        return aptus_win_error(w, MPI_ERR_BUFFER, fn, "null origin, compare or result buffer");
    if (aptus_rma_fast_cas(w, origin_addr, compare_addr, result_addr, datatype, target_rank, target_disp))
        return MPI_SUCCESS;
    struct rma_op op = { 0 };
    op.kind = RMA_CAS;
    op.obuf = origin_addr;
    op.cbuf = compare_addr;
    op.rbuf = result_addr;
    op.target = target_rank;
    op.disp = target_disp;
    return rma_call(w, &op, datatype, 1, datatype, 1, datatype, 1, MPI_OP_NULL, NULL, fn);
}
APTUS_ALIAS(Compare_and_swap)
