/* Sessions (MPI 4.1, 11.3) and communicators from groups (7.4.2, 7.6.2).
 *
 * A session is a user of the runtime: the first of MPI_Session_init and MPI_Init starts it; the
 * last session to end leaves it up for the next one (or MPI_Init) until the process exits, and
 * MPI_Finalize, or the last session after it, tears it down (api/startup.c). The process sets
 * are "mpi://WORLD" (every process of the job) and "mpi://SELF". Groups are lists of world ranks
 * whatever model made them, so a group from a session and one from MPI_COMM_WORLD are the same
 * kind of object and both can make communicators. docs/DESIGN.md, "Sessions", explains the
 * context agreement of MPI_Comm_create_from_group. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api/check.h"
#include "comm/create.h"
#include "core/info.h"
#include "core/session.h"
#include "runtime/lock.h"

static const char *const pset_names[] = { "mpi://WORLD", "mpi://SELF" };
#define NPSETS ((int)(sizeof pset_names / sizeof *pset_names))

static const char *const level_names[] = { "MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED", "MPI_THREAD_SERIALIZED",
                                           "MPI_THREAD_MULTIPLE" };

/* The open sessions, newest first: a communicator made from a group derives from the newest
 * (groups do not record the session they came from). */
static struct aptus_session *open_sessions[64];
static int n_open;

static struct aptus_session *current_session(void)
{
    return n_open ? open_sessions[n_open - 1] : NULL;
}

#define SESSION_ERR(s, cls, FN, ...) aptus_error_on((s)->errh, (void *)(s), cls, FN, __VA_ARGS__)

#define GET_SESSION(s, h, FN)                                                                                          \
    API_INIT(FN);                                                                                                      \
    struct aptus_session *s = aptus_session_get(h);                                                                    \
    if (!s)                                                                                                            \
    return aptus_error(NULL, MPI_ERR_SESSION, FN,                                                                      \
                       (h) == MPI_SESSION_NULL ? "MPI_SESSION_NULL is not a valid session" : "invalid session handle")

/* An error handler usable on objects of kind `obj`: predefined, or created for that kind. */
static const char *errh_unusable(struct aptus_errhandler *e, enum aptus_errh_obj obj)
{
    if (!e)
        return "invalid error handler handle";
    if (e->kind == APTUS_ERRH_USER && e->obj != obj)
        return obj == APTUS_ERRH_FOR_SESSION ? "the error handler was not created for sessions "
                                               "(use MPI_Session_create_errhandler)"
                                             : "the error handler was not created for communicators";
    return NULL;
}

/* Thread level asked for in the info "thread_level" key; -1 for a value that names no level.
 * Without the key: MPI_THREAD_MULTIPLE, the highest level (MPI 4.1 advises against
 * MPI_THREAD_SINGLE as the sessions' default; MPICH gives MULTIPLE). It costs a single-threaded
 * program little: the lock stays lazy until a second thread enters MPI (runtime/lock.h). */
static int level_from_info(MPI_Info info)
{
    const char *v = info == MPI_INFO_NULL ? NULL : aptus_info_lookup(aptus_info_get(info), "thread_level");
    if (!v)
        return MPI_THREAD_MULTIPLE;
    static const int levels[] = { MPI_THREAD_SINGLE, MPI_THREAD_FUNNELED, MPI_THREAD_SERIALIZED, MPI_THREAD_MULTIPLE };
    for (int i = 0; i < 4; i++)
        if (strcmp(v, level_names[i]) == 0)
            return levels[i];
    return -1;
}

static const char *level_name(int level)
{
    switch (level) {
    case MPI_THREAD_FUNNELED: return level_names[1];
    case MPI_THREAD_SERIALIZED: return level_names[2];
    case MPI_THREAD_MULTIPLE: return level_names[3];
    default: return level_names[0];
    }
}

int PMPI_Session_init(MPI_Info info, MPI_Errhandler errhandler, MPI_Session *session)
{
    APTUS_OUT_NULL(session, MPI_SESSION_NULL);
    APTUS_API_LOCK();
    const char *fn = "MPI_Session_init";
    /* Before the runtime is up the errors found here are fatal unless the handler given is
     * MPI_ERRORS_RETURN (a user handler is called once the runtime is up). */
    struct aptus_errhandler *e = aptus_errh_get(errhandler);
    const char *bad = errh_unusable(e, APTUS_ERRH_FOR_SESSION);
    if (bad)
        return aptus_error_on(NULL, NULL, MPI_ERR_ERRHANDLER, fn, "%s",
                              errhandler == MPI_ERRHANDLER_NULL ? "MPI_ERRHANDLER_NULL is not a valid error handler"
                                                                : bad);
    struct aptus_errhandler *early = e->kind == APTUS_ERRH_RETURN ? e : NULL;
    if (!session)
        return aptus_error_on(early, NULL, MPI_ERR_ARG, fn, "null session argument");
    if (info != MPI_INFO_NULL && !aptus_info_get(info))
        return aptus_error_on(early, NULL, MPI_ERR_INFO, fn, "invalid info handle");
    int required = level_from_info(info);
    if (required < 0)
        return aptus_error_on(early, NULL, MPI_ERR_INFO, fn,
                              "info key thread_level is \"%s\": not one of MPI_THREAD_SINGLE, MPI_THREAD_FUNNELED, "
                              "MPI_THREAD_SERIALIZED, MPI_THREAD_MULTIPLE",
                              aptus_info_lookup(aptus_info_get(info), "thread_level"));
    /* A new session once all are finalized takes up the runtime the last one left running; after
     * MPI_Finalize (which MPI allows too) it is gone, and Aptus cannot start it again */
    if (aptus_rt.finalized)
        return aptus_error_on(early, NULL, MPI_ERR_UNSUPPORTED_OPERATION, fn,
                              "the MPI runtime of this process was shut down by MPI_Finalize (or by the last "
                              "MPI_Session_finalize after it), and Aptus MPI cannot start it again (keep a "
                              "session open across MPI_Finalize to start others after it)");
    struct aptus_session *s = aptus_obj_alloc(APTUS_OBJ_SESSION, sizeof *s);
    struct aptus_info *hints = info == MPI_INFO_NULL ? aptus_info_new() : aptus_info_dup(aptus_info_get(info));
    if (!s || !hints) {
        aptus_obj_free(APTUS_OBJ_SESSION, s);
        if (hints)
            aptus_info_destroy(hints);
        return aptus_error_on(early, NULL, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    int provided;
    int rc = aptus_runtime_acquire(required, &provided);
    if (rc) {
        aptus_obj_free(APTUS_OBJ_SESSION, s);
        aptus_info_destroy(hints);
        return aptus_error_on(early, NULL, rc, fn, "the MPI runtime could not be started (see the message above)");
    }
    s->magic = APTUS_MAGIC_SESSION;
    s->refcount = 1;
    if (n_open < (int)(sizeof open_sessions / sizeof *open_sessions))
        open_sessions[n_open++] = s;
    s->thread_level = provided;
    s->errh = e;
    e->refcount++;
    if (aptus_info_set(hints, "thread_level", level_name(provided)) != 0) {
        aptus_info_destroy(hints);
        hints = NULL;
    }
    s->info = hints ? (MPI_Info)hints : MPI_INFO_NULL;
    *session = (MPI_Session)s;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Session_init)

int PMPI_Session_finalize(MPI_Session *session)
{
    APTUS_API_LOCK();
    const char *fn = "MPI_Session_finalize";
    API_INIT(fn);
    if (!session)
        return aptus_error(NULL, MPI_ERR_ARG, fn, "null session argument");
    GET_SESSION(s, *session, fn);
    aptus_bsend_session_finalize(s);
    s->magic = 0;
    for (int i = 0; i < n_open; i++)
        if (open_sessions[i] == s) {
            memmove(open_sessions + i, open_sessions + i + 1, (size_t)(n_open - i - 1) * sizeof *open_sessions);
            n_open--;
            break;
        }
    aptus_errh_release(s->errh);
    if (s->info != MPI_INFO_NULL)
        aptus_info_destroy(aptus_info_get(s->info));
    s->errh = NULL;
    s->info = MPI_INFO_NULL;
    aptus_session_release(s);
    *session = MPI_SESSION_NULL;
    int rc = aptus_runtime_release();
    return rc ? aptus_error(NULL, rc, fn, "shutting the MPI runtime down failed") : MPI_SUCCESS;
}
APTUS_ALIAS(Session_finalize)

int PMPI_Session_get_info(MPI_Session session, MPI_Info *info_used)
{
    APTUS_OUT_NULL(info_used, MPI_INFO_NULL);
    APTUS_API_LOCK();
    const char *fn = "MPI_Session_get_info";
    GET_SESSION(s, session, fn);
    if (!info_used)
        return SESSION_ERR(s, MPI_ERR_ARG, fn, "null info_used argument");
    struct aptus_info *i = s->info != MPI_INFO_NULL ? aptus_info_dup(aptus_info_get(s->info)) : aptus_info_new();
    if (!i)
        return SESSION_ERR(s, MPI_ERR_NO_MEM, fn, "out of memory");
    *info_used = (MPI_Info)i;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Session_get_info)

#define CHK_QUERY_INFO(s, info, FN)                                                                                    \
    if ((info) != MPI_INFO_NULL && !aptus_info_get(info))                                                              \
    return SESSION_ERR(s, MPI_ERR_INFO, FN, "invalid info handle")

int PMPI_Session_get_num_psets(MPI_Session session, MPI_Info info, int *npset_names)
{
    APTUS_API_LOCK();
    const char *fn = "MPI_Session_get_num_psets";
    GET_SESSION(s, session, fn);
    CHK_QUERY_INFO(s, info, fn);
    if (!npset_names)
        return SESSION_ERR(s, MPI_ERR_ARG, fn, "null npset_names argument");
    *npset_names = NPSETS;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Session_get_num_psets)

int PMPI_Session_get_nth_pset(MPI_Session session, MPI_Info info, int n, int *pset_len, char *pset_name)
{
    APTUS_API_LOCK();
    const char *fn = "MPI_Session_get_nth_pset";
    GET_SESSION(s, session, fn);
    CHK_QUERY_INFO(s, info, fn);
    if (n < 0 || n >= NPSETS)
        return SESSION_ERR(s, MPI_ERR_ARG, fn, "process set number %d out of range (there are %d)", n, NPSETS);
    if (!pset_len || *pset_len < 0)
        return SESSION_ERR(s, MPI_ERR_ARG, fn, pset_len ? "negative pset_len %d" : "null pset_len argument",
                           pset_len ? *pset_len : 0);
    const char *name = pset_names[n];
    int need = (int)strlen(name) + 1;
    if (*pset_len > 0) {
        if (!pset_name)
            return SESSION_ERR(s, MPI_ERR_ARG, fn, "null pset_name argument");
        int len = need <= *pset_len ? need - 1 : *pset_len - 1;
        memcpy(pset_name, name, (size_t)len);
        pset_name[len] = 0;
    }
    *pset_len = need;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Session_get_nth_pset)

/* Index of a process set name, or -1. Names are compared without regard to case, as MPICH and
 * Open MPI compare them ("mpi://world" is mpi://WORLD; docs/DESIGN.md, "Where the standard
 * leaves room"). */
static int pset_index(const char *name)
{
    for (int i = 0; name && i < NPSETS; i++)
        if (strcasecmp(name, pset_names[i]) == 0)
            return i;
    return -1;
}

#define GET_PSET(p, s, name, FN)                                                                                       \
    if (!(name))                                                                                                       \
        return SESSION_ERR(s, MPI_ERR_ARG, FN, "null pset_name argument");                                             \
    int p = pset_index(name);                                                                                          \
    if (p < 0)                                                                                                         \
    return SESSION_ERR(s, MPI_ERR_ARG, FN, "unknown process set \"%.200s\" (there are mpi://WORLD and mpi://SELF)",    \
                       name)

int PMPI_Session_get_pset_info(MPI_Session session, const char *pset_name, MPI_Info *info)
{
    APTUS_OUT_NULL(info, MPI_INFO_NULL);
    APTUS_API_LOCK();
    const char *fn = "MPI_Session_get_pset_info";
    GET_SESSION(s, session, fn);
    GET_PSET(p, s, pset_name, fn);
    if (!info)
        return SESSION_ERR(s, MPI_ERR_ARG, fn, "null info argument");
    char v[16];
    snprintf(v, sizeof v, "%d", p == 0 ? aptus_rt.size : 1);
    struct aptus_info *i = aptus_info_new();
    if (!i || aptus_info_set(i, "mpi_size", v) != 0) {
        if (i)
            aptus_info_destroy(i);
        return SESSION_ERR(s, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    *info = (MPI_Info)i;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Session_get_pset_info)

int PMPI_Group_from_session_pset(MPI_Session session, const char *pset_name, MPI_Group *newgroup)
{
    APTUS_OUT_NULL(newgroup, MPI_GROUP_NULL);
    APTUS_API_LOCK();
    const char *fn = "MPI_Group_from_session_pset";
    GET_SESSION(s, session, fn);
    GET_PSET(p, s, pset_name, fn);
    if (!newgroup)
        return SESSION_ERR(s, MPI_ERR_ARG, fn, "null newgroup argument");
    int n = p == 0 ? aptus_rt.size : 1;
    int *w = malloc((size_t)n * sizeof(int));
    if (!w)
        return SESSION_ERR(s, MPI_ERR_NO_MEM, fn, "out of memory");
    for (int i = 0; i < n; i++)
        w[i] = p == 0 ? i : aptus_rt.rank;
    struct aptus_group *g = aptus_group_new(w, n);
    free(w);
    if (!g)
        return SESSION_ERR(s, MPI_ERR_NO_MEM, fn, "out of memory");
    *newgroup = aptus_group_handle(g);
    return MPI_SUCCESS;
}
APTUS_ALIAS(Group_from_session_pset)

/* ---- error handlers ---- */

int PMPI_Session_set_errhandler(MPI_Session session, MPI_Errhandler errhandler)
{
    APTUS_API_LOCK();
    const char *fn = "MPI_Session_set_errhandler";
    GET_SESSION(s, session, fn);
    struct aptus_errhandler *e = aptus_errh_get(errhandler);
    const char *bad = errh_unusable(e, APTUS_ERRH_FOR_SESSION);
    if (bad)
        return SESSION_ERR(s, e ? MPI_ERR_ARG : MPI_ERR_ERRHANDLER, fn, "%s",
                           errhandler == MPI_ERRHANDLER_NULL ? "MPI_ERRHANDLER_NULL is not a valid error handler"
                                                             : bad);
    e->refcount++;
    struct aptus_errhandler *old = s->errh;
    s->errh = e;
    aptus_errh_release(old);
    return MPI_SUCCESS;
}
APTUS_ALIAS(Session_set_errhandler)

int PMPI_Session_get_errhandler(MPI_Session session, MPI_Errhandler *errhandler)
{
    APTUS_OUT_NULL(errhandler, MPI_ERRHANDLER_NULL);
    APTUS_API_LOCK();
    const char *fn = "MPI_Session_get_errhandler";
    GET_SESSION(s, session, fn);
    if (!errhandler)
        return SESSION_ERR(s, MPI_ERR_ARG, fn, "null errhandler argument");
    s->errh->refcount++;
    *errhandler = aptus_errh_handle(s->errh);
    return MPI_SUCCESS;
}
APTUS_ALIAS(Session_get_errhandler)

int PMPI_Session_call_errhandler(MPI_Session session, int errorcode)
{
    APTUS_API_LOCK();
    const char *fn = "MPI_Session_call_errhandler";
    GET_SESSION(s, session, fn);
    if (aptus_error_class_of(errorcode) < 0)
        return SESSION_ERR(s, MPI_ERR_ARG, fn, "%d is not a valid error code", errorcode);
    /* the handler gets the caller's code as it is */
    aptus_errh_invoke(s->errh, (void *)s, errorcode, fn);
    return MPI_SUCCESS;
}
APTUS_ALIAS(Session_call_errhandler)

/* ---- communicators from groups ---- */

/* The tag of a from-group agreement: a hash (FNV-1a) of the string tag and the member lists,
 * the same on every member, as a non-negative int. */
static int group_tag(const char *stringtag, const int *a, int n, const int *b, int m)
{
    uint32_t h = 2166136261u;
    for (const unsigned char *p = (const unsigned char *)stringtag; *p; p++)
        h = (h ^ *p) * 16777619u;
    h = (h ^ 0xffu) * 16777619u; /* end of the string */
    for (int i = 0; i < n; i++)
        for (int k = 0; k < 4; k++)
            h = (h ^ (((uint32_t)a[i] >> (8 * k)) & 0xffu)) * 16777619u;
    h = (h ^ 0xfeu) * 16777619u; /* end of the first group */
    for (int i = 0; i < m; i++)
        for (int k = 0; k < 4; k++)
            h = (h ^ (((uint32_t)b[i] >> (8 * k)) & 0xffu)) * 16777619u;
    return (int)(h & 0x7fffffffu);
}

/* The error handler argument of a from-group call: it also receives the call's own errors.
 * An invalid one is reported on MPI_COMM_SELF. */
#define GET_NEW_ERRH(e, h, FN)                                                                                         \
    struct aptus_errhandler *e = aptus_errh_get(h);                                                                    \
    {                                                                                                                  \
        const char *bad_ = errh_unusable(e, APTUS_ERRH_FOR_COMM);                                                      \
        if (bad_)                                                                                                      \
            return aptus_error(NULL, e ? MPI_ERR_ARG : MPI_ERR_ERRHANDLER, FN, "%s",                                   \
                               (h) == MPI_ERRHANDLER_NULL ? "MPI_ERRHANDLER_NULL is not a valid error handler"         \
                                                          : bad_);                                                     \
    }

#define NEW_ERR(e, cls, FN, ...) aptus_error_on(e, (void *)MPI_COMM_NULL, cls, FN, __VA_ARGS__)

static int chk_stringtag(struct aptus_errhandler *e, const char *tag, const char *fn)
{
    if (!tag)
        return NEW_ERR(e, MPI_ERR_ARG, fn, "null stringtag argument");
    size_t n = strlen(tag);
    if (n >= MPI_MAX_STRINGTAG_LEN)
        return NEW_ERR(e, MPI_ERR_ARG, fn, "stringtag of %zu characters (at most %d allowed)", n,
                       MPI_MAX_STRINGTAG_LEN - 1);
    return MPI_SUCCESS;
}

/* The arguments every from-group call checks after its groups: the string tag, the info and
 * the pointer for the new communicator (`out_name` names it). */
static int chk_new_args(struct aptus_errhandler *e, const char *stringtag, MPI_Info info, const MPI_Comm *out,
                        const char *out_name, const char *fn)
{
    int rc = chk_stringtag(e, stringtag, fn);
    if (rc)
        return rc;
    if (info != MPI_INFO_NULL && !aptus_info_get(info))
        return NEW_ERR(e, MPI_ERR_INFO, fn, "invalid info handle");
    if (!out)
        return NEW_ERR(e, MPI_ERR_ARG, fn, "null %s argument", out_name);
    return MPI_SUCCESS;
}

/* Gives the new communicator a copy of the hints. Returns 0 or MPI_ERR_NO_MEM. */
static int take_hints(struct aptus_comm *c, MPI_Info info)
{
    if (info == MPI_INFO_NULL)
        return 0;
    struct aptus_info *i = aptus_info_dup(aptus_info_get(info));
    if (!i)
        return MPI_ERR_NO_MEM;
    c->info = (MPI_Info)i;
    return 0;
}

/* The end of a from-group call: rc is the creation's result; on success c gets the hints and
 * the newest open session, and *out its handle. */
static int new_comm_done(struct aptus_errhandler *e, int rc, struct aptus_comm *c, MPI_Info info, MPI_Comm *out,
                         const char *fn)
{
    if (!rc && take_hints(c, info)) {
        aptus_comm_release(c);
        rc = MPI_ERR_NO_MEM;
    }
    if (rc)
        return NEW_ERR(e, rc, fn, "%s",
                       rc == MPI_ERR_NO_MEM ? "out of memory"
                                            : "the members could not agree on a context id (all in use, or the "
                                              "exchange failed)");
    aptus_comm_set_session(c, current_session());
    *out = c->handle;
    return MPI_SUCCESS;
}

int PMPI_Comm_create_from_group(MPI_Group group, const char *stringtag, MPI_Info info, MPI_Errhandler errhandler,
                                MPI_Comm *newcomm)
{
    APTUS_OUT_NULL(newcomm, MPI_COMM_NULL);
    APTUS_API_LOCK();
    const char *fn = "MPI_Comm_create_from_group";
    API_INIT(fn);
    GET_NEW_ERRH(e, errhandler, fn);
    GET_GROUP(g, group, NULL, fn);
    int rc = chk_new_args(e, stringtag, info, newcomm, "newcomm", fn);
    if (rc)
        return rc;
    if (g->size == 0) {
        *newcomm = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    if (aptus_group_index(g, aptus_rt.rank) == MPI_UNDEFINED)
        return NEW_ERR(e, MPI_ERR_GROUP, fn, "the calling process is not a member of the group");
    struct aptus_comm *c;
    rc = aptus_comm_from_group(g->world, g->size, group_tag(stringtag, g->world, g->size, NULL, 0), e, &c);
    return new_comm_done(e, rc, c, info, newcomm, fn);
}
APTUS_ALIAS(Comm_create_from_group)

int PMPI_Intercomm_create_from_groups(MPI_Group local_group, int local_leader, MPI_Group remote_group,
                                      int remote_leader, const char *stringtag, MPI_Info info,
                                      MPI_Errhandler errhandler, MPI_Comm *newintercomm)
{
    APTUS_OUT_NULL(newintercomm, MPI_COMM_NULL);
    APTUS_API_LOCK();
    const char *fn = "MPI_Intercomm_create_from_groups";
    API_INIT(fn);
    GET_NEW_ERRH(e, errhandler, fn);
    GET_GROUP(lg, local_group, NULL, fn);
    GET_GROUP(rg, remote_group, NULL, fn);
    int rc = chk_new_args(e, stringtag, info, newintercomm, "newintercomm", fn);
    if (rc)
        return rc;
    if (lg->size == 0 || rg->size == 0)
        return NEW_ERR(e, MPI_ERR_GROUP, fn, "the %s group is empty", lg->size == 0 ? "local" : "remote");
    if (local_leader < 0 || local_leader >= lg->size)
        return NEW_ERR(e, MPI_ERR_RANK, fn, "invalid local_leader %d (the local group has %d members)", local_leader,
                       lg->size);
    if (remote_leader < 0 || remote_leader >= rg->size)
        return NEW_ERR(e, MPI_ERR_RANK, fn, "invalid remote_leader %d (the remote group has %d members)", remote_leader,
                       rg->size);
    if (aptus_group_index(lg, aptus_rt.rank) == MPI_UNDEFINED)
        return NEW_ERR(e, MPI_ERR_GROUP, fn, "the calling process is not a member of local_group");
    for (int i = 0; i < rg->size; i++)
        if (aptus_group_index(lg, rg->world[i]) != MPI_UNDEFINED)
            return NEW_ERR(e, MPI_ERR_GROUP, fn, "the local and remote groups overlap (world rank %d is in both)",
                           rg->world[i]);
    /* the tag covers both groups in the order every member lists them */
    int lf = lg->world[0] < rg->world[0];
    int tag = lf ? group_tag(stringtag, lg->world, lg->size, rg->world, rg->size)
                 : group_tag(stringtag, rg->world, rg->size, lg->world, lg->size);
    struct aptus_comm *c;
    rc = aptus_intercomm_from_groups(lg->world, lg->size, rg->world, rg->size, tag, e, &c);
    return new_comm_done(e, rc, c, info, newintercomm, fn);
}
APTUS_ALIAS(Intercomm_create_from_groups)
