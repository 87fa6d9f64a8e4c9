/* Buffers for buffered sends (MPI 4.1, 3.6): the process's (MPI_Buffer_*), a communicator's
 * (MPI_Comm_*_buffer) and a session's (MPI_Session_*_buffer); attach, detach, flush and
 * nonblocking flush, each in int and large-count (_c) forms. The pools live in pt2pt/bsend.c. */
#include <stdint.h>

#include "api/check.h"
#include "core/session.h"
#include "pt2pt/pt2pt.h"
#include "runtime/lock.h"

#define APTUS_COUNT_MAX ((MPI_Count)INT64_MAX)

/* Where a buffer call acts: the process (c == s == NULL), a communicator or a session. Errors go
 * to that object's handler. */
struct target {
    struct aptus_comm *c;
    struct aptus_session *s;
};

#define T_ERR(t, cls, FN, ...)                                                                                         \
    ((t).s ? aptus_error_on((t).s->errh, (void *)(t).s, cls, FN, __VA_ARGS__)                                          \
           : aptus_error((t).c, cls, FN, __VA_ARGS__))

/* The target's pool; with `make`, created when missing (NULL: out of memory). */
static struct aptus_bsend_pool *pool_of(struct target t, int make)
{
    if (!t.c && !t.s)
        return aptus_bsend_process_pool();
    struct aptus_bsend_pool *p = t.c ? t.c->bsend_pool : t.s->bsend_pool;
    if (!p && make) {
        p = aptus_bsend_pool_new();
        if (t.c)
            t.c->bsend_pool = p;
        else
            t.s->bsend_pool = p;
    }
    return p;
}

static int attach(struct target t, void *buffer, MPI_Count size, const char *fn)
{
    if (buffer != MPI_BUFFER_AUTOMATIC) {
        if (size < 0)
            return T_ERR(t, MPI_ERR_ARG, fn, "negative buffer size %lld", (long long)size);
        if (!buffer && size > 0)
            return T_ERR(t, MPI_ERR_BUFFER, fn, "null buffer of %lld bytes", (long long)size);
    }
    struct aptus_bsend_pool *p = pool_of(t, 1);
    if (!p)
        return T_ERR(t, MPI_ERR_NO_MEM, fn, "out of memory");
    if (aptus_bsend_attach(p, buffer, buffer == MPI_BUFFER_AUTOMATIC ? 0 : (size_t)size))
        return T_ERR(t, MPI_ERR_BUFFER, fn, "a buffer is already attached (detach it first)");
    return MPI_SUCCESS;
}

static int detach(struct target t, void *buffer_addr, MPI_Count *size, MPI_Count max, const char *fn)
{
    if (!buffer_addr || !size)
        return T_ERR(t, MPI_ERR_ARG, fn, "null argument");
    struct aptus_bsend_pool *p = pool_of(t, 0);
    void *b = NULL;
    size_t s = 0;
    int rc = p ? aptus_bsend_detach(p, &b, &s, (size_t)max) : MPI_ERR_BUFFER;
    if (rc == MPI_ERR_COUNT)
        return T_ERR(t, MPI_ERR_VALUE_TOO_LARGE, fn,
                     "the attached buffer's size does not fit an int (use %s_c); it stays attached", fn);
    if (rc)
        return T_ERR(t, MPI_ERR_BUFFER, fn, "no buffer is attached");
    *(void **)buffer_addr = b;
    *size = (MPI_Count)s;
    return MPI_SUCCESS;
}

/* The int forms of detach: a buffer larger than INT_MAX stays attached (MPI_ERR_VALUE_TOO_LARGE). */
static int detach_int(struct target t, void *buffer_addr, int *size, const char *fn)
{
    MPI_Count n = 0;
    int rc = detach(t, buffer_addr, size ? &n : NULL, INT_MAX, fn);
    if (!rc)
        *size = (int)n;
    return rc;
}

/* A blocking flush (nonblocking 0) or a nonblocking one, whose request goes to *request. */
static int flush(struct target t, int nonblocking, MPI_Request *request, const char *fn)
{
    if (nonblocking && !request)
        return T_ERR(t, MPI_ERR_ARG, fn, "null request pointer");
    struct aptus_bsend_pool *p = pool_of(t, 1);
    if (!p)
        return T_ERR(t, MPI_ERR_NO_MEM, fn, "out of memory");
    if (!nonblocking) {
        aptus_bsend_flush(p);
        return MPI_SUCCESS;
    }
    struct aptus_request *r;
    if (aptus_bsend_iflush(p, &r))
        return T_ERR(t, MPI_ERR_NO_MEM, fn, "out of memory");
    r->comm = t.c;
    *request = (MPI_Request)r;
    return MPI_SUCCESS;
}

/* ---------------- the process's buffer ---------------- */

#define PROCESS ((struct target){ NULL, NULL })

int PMPI_Buffer_attach(void *buffer, int size)
{
    APTUS_API_LOCK();
    API_INIT("MPI_Buffer_attach");
    return attach(PROCESS, buffer, size, "MPI_Buffer_attach");
}
APTUS_ALIAS(Buffer_attach)

int PMPI_Buffer_attach_c(void *buffer, MPI_Count size)
{
    APTUS_API_LOCK();
    API_INIT("MPI_Buffer_attach_c");
    return attach(PROCESS, buffer, size, "MPI_Buffer_attach_c");
}
APTUS_ALIAS(Buffer_attach_c)

int PMPI_Buffer_detach(void *buffer_addr, int *size)
{
    APTUS_API_LOCK();
    API_INIT("MPI_Buffer_detach");
    return detach_int(PROCESS, buffer_addr, size, "MPI_Buffer_detach");
}
APTUS_ALIAS(Buffer_detach)

int PMPI_Buffer_detach_c(void *buffer_addr, MPI_Count *size)
{
    APTUS_API_LOCK();
    API_INIT("MPI_Buffer_detach_c");
    return detach(PROCESS, buffer_addr, size, APTUS_COUNT_MAX, "MPI_Buffer_detach_c");
}
APTUS_ALIAS(Buffer_detach_c)

int PMPI_Buffer_flush(void)
{
    APTUS_API_LOCK();
    API_INIT("MPI_Buffer_flush");
    return flush(PROCESS, 0, NULL, "MPI_Buffer_flush");
}
APTUS_ALIAS(Buffer_flush)

int PMPI_Buffer_iflush(MPI_Request *request)
{
    APTUS_OUT_NULL(request, MPI_REQUEST_NULL);
    APTUS_API_LOCK();
    API_INIT("MPI_Buffer_iflush");
    return flush(PROCESS, 1, request, "MPI_Buffer_iflush");
}
APTUS_ALIAS(Buffer_iflush)

/* ---------------- a communicator's buffer ---------------- */

int PMPI_Comm_attach_buffer(MPI_Comm comm, void *buffer, int size)
{
    APTUS_API_LOCK();
    GET_COMM(c, comm, "MPI_Comm_attach_buffer");
    return attach((struct target){ c, NULL }, buffer, size, "MPI_Comm_attach_buffer");
}
APTUS_ALIAS(Comm_attach_buffer)

int PMPI_Comm_attach_buffer_c(MPI_Comm comm, void *buffer, MPI_Count size)
{
    APTUS_API_LOCK();
    GET_COMM(c, comm, "MPI_Comm_attach_buffer_c");
    return attach((struct target){ c, NULL }, buffer, size, "MPI_Comm_attach_buffer_c");
}
APTUS_ALIAS(Comm_attach_buffer_c)

int PMPI_Comm_detach_buffer(MPI_Comm comm, void *buffer_addr, int *size)
{
    APTUS_API_LOCK();
    GET_COMM(c, comm, "MPI_Comm_detach_buffer");
    return detach_int((struct target){ c, NULL }, buffer_addr, size, "MPI_Comm_detach_buffer");
}
APTUS_ALIAS(Comm_detach_buffer)

int PMPI_Comm_detach_buffer_c(MPI_Comm comm, void *buffer_addr, MPI_Count *size)
{
    APTUS_API_LOCK();
    GET_COMM(c, comm, "MPI_Comm_detach_buffer_c");
    return detach((struct target){ c, NULL }, buffer_addr, size, APTUS_COUNT_MAX, "MPI_Comm_detach_buffer_c");
}
APTUS_ALIAS(Comm_detach_buffer_c)

int PMPI_Comm_flush_buffer(MPI_Comm comm)
{
    APTUS_API_LOCK();
    GET_COMM(c, comm, "MPI_Comm_flush_buffer");
    return flush((struct target){ c, NULL }, 0, NULL, "MPI_Comm_flush_buffer");
}
APTUS_ALIAS(Comm_flush_buffer)

int PMPI_Comm_iflush_buffer(MPI_Comm comm, MPI_Request *request)
{
    APTUS_OUT_NULL(request, MPI_REQUEST_NULL);
    APTUS_API_LOCK();
    GET_COMM(c, comm, "MPI_Comm_iflush_buffer");
    return flush((struct target){ c, NULL }, 1, request, "MPI_Comm_iflush_buffer");
}
APTUS_ALIAS(Comm_iflush_buffer)

/* ---------------- a session's buffer ---------------- */

#define GET_SESSION_T(t, h, FN)                                                                                        \
    API_INIT(FN);                                                                                                      \
    struct target t = { NULL, aptus_session_get(h) };                                                                  \
    if (!t.s)                                                                                                          \
    return aptus_error(NULL, MPI_ERR_SESSION, FN,                                                                      \
                       (h) == MPI_SESSION_NULL ? "MPI_SESSION_NULL is not a valid session" : "invalid session handle")

int PMPI_Session_attach_buffer(MPI_Session session, void *buffer, int size)
{
    APTUS_API_LOCK();
    GET_SESSION_T(t, session, "MPI_Session_attach_buffer");
    return attach(t, buffer, size, "MPI_Session_attach_buffer");
}
APTUS_ALIAS(Session_attach_buffer)

int PMPI_Session_attach_buffer_c(MPI_Session session, void *buffer, MPI_Count size)
{
    APTUS_API_LOCK();
    GET_SESSION_T(t, session, "MPI_Session_attach_buffer_c");
    return attach(t, buffer, size, "MPI_Session_attach_buffer_c");
}
APTUS_ALIAS(Session_attach_buffer_c)

int PMPI_Session_detach_buffer(MPI_Session session, void *buffer_addr, int *size)
{
    APTUS_API_LOCK();
    GET_SESSION_T(t, session, "MPI_Session_detach_buffer");
    return detach_int(t, buffer_addr, size, "MPI_Session_detach_buffer");
}
APTUS_ALIAS(Session_detach_buffer)

int PMPI_Session_detach_buffer_c(MPI_Session session, void *buffer_addr, MPI_Count *size)
{
    APTUS_API_LOCK();
    GET_SESSION_T(t, session, "MPI_Session_detach_buffer_c");
    return detach(t, buffer_addr, size, APTUS_COUNT_MAX, "MPI_Session_detach_buffer_c");
}
APTUS_ALIAS(Session_detach_buffer_c)

int PMPI_Session_flush_buffer(MPI_Session session)
{
    APTUS_API_LOCK();
    GET_SESSION_T(t, session, "MPI_Session_flush_buffer");
    return flush(t, 0, NULL, "MPI_Session_flush_buffer");
}
APTUS_ALIAS(Session_flush_buffer)

int PMPI_Session_iflush_buffer(MPI_Session session, MPI_Request *request)
{
    APTUS_OUT_NULL(request, MPI_REQUEST_NULL);
    APTUS_API_LOCK();
    GET_SESSION_T(t, session, "MPI_Session_iflush_buffer");
    return flush(t, 1, request, "MPI_Session_iflush_buffer");
}
APTUS_ALIAS(Session_iflush_buffer)
