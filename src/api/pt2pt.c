/* MPI point-to-point communication (MPI standard, chapter 3). */
#include <stdlib.h>
#include <string.h>

#include "api/check.h"
#include "api/grequest.h"
#include "coll/nbc.h"
#include "pt2pt/pt2pt.h"
#include "runtime/lock.h"

#define REQ(h) ((struct aptus_request *)(h))

static __attribute__((noinline, cold)) int req_invalid(const char *fn)
{
    return aptus_error(NULL, MPI_ERR_REQUEST, fn, "invalid request handle");
}

static inline int req_check(MPI_Request h, const char *fn)
{
    return __builtin_expect(!aptus_req_get(h), 0) ? req_invalid(fn) : 0;
}

/* ---------------- sends ---------------- */

/* Buffered send of the data a request describes (aptus_req_set_data): pack it into the
 * attached buffer and send the copy; the internal request frees itself (and the piece) once
 * the copy has left. A user's request (nonblocking or persistent) records the sequence number
 * of the copy's message, by which MPI_Cancel finds it. */
static int bsend_copy(struct aptus_comm *c, const char *fn, struct aptus_request *src, int dest, int tag)
{
    size_t bytes = src->bytes;
    struct aptus_bsend_pool *pool = aptus_bsend_pool_of(c);
    void *piece = aptus_bsend_alloc(pool, bytes);
    if (!piece)
        return aptus_error(c, MPI_ERR_BUFFER, fn,
                           aptus_bsend_attached(pool)
                               ? "the attached buffer has no room for %zu more bytes (attach a larger one)"
                               : "no buffer is attached for the %zu bytes of a buffered send (MPI_Buffer_attach, "
                                 "MPI_Comm_attach_buffer or MPI_Session_attach_buffer)",
                           bytes);
    if (src->nc)
        aptus_dt_pack(src->buf, src->count, src->dt, piece);
    else
        memcpy(piece, src->buf, bytes);
    struct aptus_request *r = aptus_req_new(APTUS_REQ_SEND);
    if (!r)
        return aptus_error(c, MPI_ERR_NO_MEM, fn, "out of memory");
    *r = (struct aptus_request){ .magic = APTUS_MAGIC_REQ,
                                 .kind = APTUS_REQ_SEND,
                                 .buf = piece,
                                 .bytes = bytes,
                                 .peer = dest,
                                 .tag = tag,
                                 .comm = c,
                                 .ctx = c->ctx,
                                 .bsend_piece = piece,
                                 .free_on_complete = 1 };
    src->sseq = aptus_send_seq_next(c, dest);
    int rc = aptus_send_start(r);
    return rc ? aptus_error(c, rc, fn, "send to rank %d failed", dest) : MPI_SUCCESS;
}

/* Blocking send of a non-contiguous buffer, or a buffered send: through a request on the
 * stack (kept out of send_any so that the common path keeps a small frame). */
static __attribute__((noinline)) int send_blocking_slow(const char *fn, struct aptus_comm *c, const void *buf,
                                                        size_t count, const struct aptus_dtype *d, int dest, int tag,
                                                        int mode)
{
    if (dest == MPI_PROC_NULL)
        return MPI_SUCCESS;
    struct aptus_request r;
    aptus_req_init(&r, APTUS_REQ_SEND);
    aptus_req_set_data(&r, buf, count, d);
    r.peer = dest;
    r.tag = tag;
    r.comm = c;
    r.ctx = c->ctx;
    r.mode = (uint8_t)mode;
    if (mode == APTUS_MODE_BUFFERED)
        return bsend_copy(c, fn, &r, dest, tag);
    int rc = aptus_send_start(&r);
    if (rc == 0) {
        aptus_wait(&r);
        rc = r.st_error;
    }
    if (rc == MPI_ERR_PROC_ABORTED)
        return aptus_error(c, rc, fn, "rank %d failed: a channel gave up on it", dest);
    return rc ? aptus_error(c, rc, fn, "send to rank %d failed", dest) : MPI_SUCCESS;
}

static inline __attribute__((always_inline)) int send_any(const char *fn, const void *buf, MPI_Count count,
                                                          MPI_Datatype dtype, int dest, int tag, MPI_Comm comm,
                                                          int mode, int persistent, MPI_Request *req)
{
    APTUS_OUT_NULL(req, MPI_REQUEST_NULL);
    GET_COMM(c, comm, fn);
    CHK_COUNT(c, count, fn);
    GET_MSG_DTYPE(d, dtype, count, c, fn);
    CHK_DEST(c, dest, fn);
    CHK_SEND_TAG(c, tag, fn);
    GET_BYTES(bytes, c, d, count, fn);
    CHK_DATA_BUF(c, buf, d, bytes, fn);
    if (!req && __builtin_expect(d->contig, 1)) {
        if (dest == MPI_PROC_NULL)
            return MPI_SUCCESS;
        if (mode != APTUS_MODE_BUFFERED) {
            int rc = aptus_send_now((const char *)buf + d->true_lb, bytes, dest, tag, c, c->ctx, mode);
            if (__builtin_expect(rc != 0, 0))
                return rc == MPI_ERR_PROC_ABORTED
                           ? aptus_error(c, rc, fn, "rank %d failed: a channel gave up on it", dest)
                           : aptus_error(c, rc, fn, "send to rank %d failed", dest);
            return MPI_SUCCESS;
        }
    }
    if (!req)
        return send_blocking_slow(fn, c, buf, (size_t)count, d, dest, tag, mode);
    struct aptus_request *r = aptus_req_new(APTUS_REQ_SEND);
    if (!r)
        return aptus_error(c, MPI_ERR_NO_MEM, fn, "out of memory");
    aptus_req_set_data(r, buf, (size_t)count, d);
    aptus_req_hold_type(r);
    r->peer = dest;
    r->tag = tag;
    r->comm = c;
    r->ctx = c->ctx;
    r->mode = (uint8_t)mode;
    r->persistent = (uint8_t)persistent;
    *req = (MPI_Request)r;
    if (persistent) {
        r->complete = 1; /* inactive */
        return MPI_SUCCESS;
    }
    if (dest == MPI_PROC_NULL) {
        aptus_req_done_proc_null(r);
        return MPI_SUCCESS;
    }
    if (mode == APTUS_MODE_BUFFERED) {
        /* The data is copied now; the user's request is complete at once and an internal
         * request carries the copy. */
        r->complete = 1;
        int rc = bsend_copy(c, fn, r, dest, tag);
        if (rc) {
            aptus_req_free(r);
            *req = MPI_REQUEST_NULL;
        }
        return rc;
    }
    int rc = aptus_send_start(r);
    if (rc) {
        aptus_req_free(r);
        *req = MPI_REQUEST_NULL;
        return aptus_error(c, rc, fn, "send to rank %d failed", dest);
    }
    return MPI_SUCCESS;
}

#define SEND_FN(NAME, MODE)                                                                                            \
    APTUS_API_FN_HOT(int, PMPI_##NAME,                                                                                 \
                     (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm),            \
                     (buf, count, datatype, dest, tag, comm),                                                          \
                     send_any("MPI_" #NAME, buf, count, datatype, dest, tag, comm, MODE, 0, NULL))                     \
    APTUS_ALIAS(NAME)                                                                                                  \
    APTUS_API_FN_HOT(int, PMPI_##NAME##_c,                                                                             \
                     (const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm),      \
                     (buf, count, datatype, dest, tag, comm),                                                          \
                     send_any("MPI_" #NAME "_c", buf, count, datatype, dest, tag, comm, MODE, 0, NULL))                \
    APTUS_ALIAS(NAME##_c)

#define ISEND_FN(NAME, MODE, PERSIST)                                                                                  \
    APTUS_API_FN_HOT(                                                                                                  \
        int, PMPI_##NAME,                                                                                              \
        (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request),   \
        (buf, count, datatype, dest, tag, comm, request),                                                              \
        !request ? aptus_error(NULL, MPI_ERR_ARG, "MPI_" #NAME, "null request pointer")                                \
                 : send_any("MPI_" #NAME, buf, count, datatype, dest, tag, comm, MODE, PERSIST, request))              \
    APTUS_ALIAS(NAME)                                                                                                  \
    APTUS_API_FN_HOT(int, PMPI_##NAME##_c,                                                                             \
                     (const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,       \
                      MPI_Request *request),                                                                           \
                     (buf, count, datatype, dest, tag, comm, request),                                                 \
                     !request                                                                                          \
                         ? aptus_error(NULL, MPI_ERR_ARG, "MPI_" #NAME "_c", "null request pointer")                   \
                         : send_any("MPI_" #NAME "_c", buf, count, datatype, dest, tag, comm, MODE, PERSIST, request)) \
    APTUS_ALIAS(NAME##_c)

SEND_FN(Send, APTUS_MODE_STANDARD)
SEND_FN(Ssend, APTUS_MODE_SYNC)
SEND_FN(Rsend, APTUS_MODE_READY)
SEND_FN(Bsend, APTUS_MODE_BUFFERED)
ISEND_FN(Isend, APTUS_MODE_STANDARD, 0)
ISEND_FN(Issend, APTUS_MODE_SYNC, 0)
ISEND_FN(Irsend, APTUS_MODE_READY, 0)
ISEND_FN(Ibsend, APTUS_MODE_BUFFERED, 0)
ISEND_FN(Send_init, APTUS_MODE_STANDARD, 1)
ISEND_FN(Ssend_init, APTUS_MODE_SYNC, 1)
ISEND_FN(Rsend_init, APTUS_MODE_READY, 1)
ISEND_FN(Bsend_init, APTUS_MODE_BUFFERED, 1)

/* ---------------- receives ---------------- */

static inline __attribute__((always_inline)) int recv_any(const char *fn, void *buf, MPI_Count count,
                                                          MPI_Datatype dtype, int source, int tag, MPI_Comm comm,
                                                          int persistent, MPI_Request *req, MPI_Status *status)
{
    APTUS_OUT_NULL(req, MPI_REQUEST_NULL);
    GET_COMM(c, comm, fn);
    CHK_COUNT(c, count, fn);
    GET_MSG_DTYPE(d, dtype, count, c, fn);
    CHK_SRC(c, source, fn);
    CHK_RECV_TAG(c, tag, fn);
    GET_BYTES(bytes, c, d, count, fn);
    CHK_DATA_BUF(c, buf, d, bytes, fn);
    struct aptus_request local, *r;
    if (req) {
        r = aptus_req_new(APTUS_REQ_RECV);
        if (!r)
            return aptus_error(c, MPI_ERR_NO_MEM, fn, "out of memory");
    } else {
        r = &local;
        aptus_req_init(r, APTUS_REQ_RECV);
    }
    aptus_req_set_data(r, buf, (size_t)count, d);
    if (req)
        aptus_req_hold_type(r);
    r->peer = source;
    r->tag = tag;
    r->comm = c;
    r->ctx = c->ctx;
    r->persistent = (uint8_t)persistent;
    if (req)
        *req = (MPI_Request)r;
    if (persistent) {
        r->complete = 1;
        return MPI_SUCCESS;
    }
    if (source == MPI_PROC_NULL)
        aptus_req_done_proc_null(r);
    else
        aptus_recv_start(r);
    if (req)
        return MPI_SUCCESS;
    aptus_wait(r);
    aptus_status_fill(status, r);
    if (r->st_error == MPI_ERR_PROC_ABORTED)
        return aptus_error(c, r->st_error, fn, "rank %d failed: a channel gave up on it", source);
    if (r->st_error)
        return aptus_error(c, r->st_error, fn,
                           "message of %llu bytes from rank %d (tag %d) does not fit the %zu-byte receive buffer",
                           (unsigned long long)r->msg_bytes, r->st_source, r->st_tag, bytes);
    return MPI_SUCCESS;
}

APTUS_API_FN_HOT(int, PMPI_Recv,
                 (void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Status *status),
                 (buf, count, datatype, source, tag, comm, status),
                 recv_any("MPI_Recv", buf, count, datatype, source, tag, comm, 0, NULL, status))
APTUS_ALIAS(Recv)
APTUS_API_FN_HOT(int, PMPI_Recv_c,
                 (void *buf, MPI_Count count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                  MPI_Status *status),
                 (buf, count, datatype, source, tag, comm, status),
                 recv_any("MPI_Recv_c", buf, count, datatype, source, tag, comm, 0, NULL, status))
APTUS_ALIAS(Recv_c)

#define IRECV_FN(NAME, PERSIST)                                                                                        \
    APTUS_API_FN_HOT(                                                                                                  \
        int, PMPI_##NAME,                                                                                              \
        (void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Request *request),       \
        (buf, count, datatype, source, tag, comm, request),                                                            \
        !request ? aptus_error(NULL, MPI_ERR_ARG, "MPI_" #NAME, "null request pointer")                                \
                 : recv_any("MPI_" #NAME, buf, count, datatype, source, tag, comm, PERSIST, request, NULL))            \
    APTUS_ALIAS(NAME)                                                                                                  \
    APTUS_API_FN_HOT(                                                                                                  \
        int, PMPI_##NAME##_c,                                                                                          \
        (void *buf, MPI_Count count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Request *request), \
        (buf, count, datatype, source, tag, comm, request),                                                            \
        !request ? aptus_error(NULL, MPI_ERR_ARG, "MPI_" #NAME "_c", "null request pointer")                           \
                 : recv_any("MPI_" #NAME "_c", buf, count, datatype, source, tag, comm, PERSIST, request, NULL))       \
    APTUS_ALIAS(NAME##_c)

IRECV_FN(Irecv, 0)
IRECV_FN(Recv_init, 1)

/* ---------------- completion ---------------- */

/* The end of a generalized request in req_finish: its free function runs after the query
 * (req_query), as the standard says. Out of line, off the path of ordinary requests. */
static __attribute__((noinline, cold)) int greq_finish(struct aptus_request *r, int err)
{
    int frc = aptus_greq_free(r);
    return err ? err : frc;
}

/* A partitioned receive's status gives the user's tag, not its pair's (api/part.c). Called
 * wherever a persistent request's status is read. */
static inline void part_status(struct aptus_request *r)
{
    if (r->kind == APTUS_REQ_RECV && r->part)
        aptus_part_status(r);
}

/* Finishes a completed request: status, error, and release (or deactivation if persistent). */
static inline int req_finish(MPI_Request *h, MPI_Status *status)
{
    struct aptus_request *r = REQ(*h);
    if (__builtin_expect(r->persistent, 0)) {
        part_status(r);
        aptus_status_fill(status, r);
        r->active = 0;
        return r->st_error;
    }
    aptus_status_fill(status, r);
    int err = r->st_error;
    if (__builtin_expect(r->kind == APTUS_REQ_GREQ, 0))
        err = greq_finish(r, err);
    aptus_req_free(r);
    *h = MPI_REQUEST_NULL;
    return err;
}

/* A request found complete is about to report its status: a generalized request asks the
 * user's query function for it. */
static inline void req_query(struct aptus_request *r)
{
    if (r->kind == APTUS_REQ_GREQ)
        aptus_greq_query(r);
}

/* req_finish for single-completion calls: reports the request's error (computed before, in
 * code) or else a failure of a generalized request's free function. */
static int req_finish_one(MPI_Request *h, MPI_Status *status, int code, const char *fn)
{
    int err = req_finish(h, status);
    if (!code && err)
        code = aptus_error_callback(NULL, err, fn, "the generalized request's free function");
    return code;
}

static int req_error(struct aptus_request *r, int err, const char *fn)
{
    part_status(r);
    if (r->kind == APTUS_REQ_GREQ)
        return aptus_error_callback(r->comm, err, fn, "the generalized request's query function");
    if (r->kind == APTUS_REQ_GENERIC && err != MPI_ERR_TRUNCATE)
        return aptus_error(r->comm, err, fn, "the nonblocking operation behind this request failed");
    if (err == MPI_ERR_PROC_ABORTED)
        return aptus_error(r->comm, err, fn, "rank %d failed: a channel gave up on it (tag %d)", r->peer, r->tag);
    return aptus_error(r->comm, err, fn,
                       "message of %llu bytes from rank %d (tag %d) is larger than the %zu-byte receive buffer",
                       (unsigned long long)r->msg_bytes, r->st_source, r->st_tag, r->bytes);
}

/* h is MPI_REQUEST_NULL or a valid request (req_check, check_array). */
static int null_or_inactive(MPI_Request h)
{
    return h == MPI_REQUEST_NULL || (REQ(h)->persistent && !REQ(h)->active);
}

static int wait_one(MPI_Request *request, MPI_Status *status)
{
    API_INIT("MPI_Wait");
    if (!request)
        return aptus_error(NULL, MPI_ERR_ARG, "MPI_Wait", "null request pointer");
    int rc = *request == MPI_REQUEST_NULL ? 0 : req_check(*request, "MPI_Wait");
    if (rc)
        return rc;
    if (null_or_inactive(*request)) {
        aptus_status_empty(status);
        return MPI_SUCCESS;
    }
    struct aptus_request *r = REQ(*request);
    aptus_wait(r);
    req_query(r);
    int code = r->st_error ? req_error(r, r->st_error, "MPI_Wait") : MPI_SUCCESS;
    return req_finish_one(request, status, code, "MPI_Wait");
}

APTUS_API_FN_HOT(int, PMPI_Wait, (MPI_Request * request, MPI_Status *status), (request, status),
                 wait_one(request, status))
APTUS_ALIAS(Wait)

static int test_one(MPI_Request *request, int *flag, MPI_Status *status)
{
    API_INIT("MPI_Test");
    if (!request || !flag)
        return aptus_error(NULL, MPI_ERR_ARG, "MPI_Test", "null argument");
    int rc = *request == MPI_REQUEST_NULL ? 0 : req_check(*request, "MPI_Test");
    if (rc)
        return rc;
    if (null_or_inactive(*request)) {
        *flag = 1;
        aptus_status_empty(status);
        return MPI_SUCCESS;
    }
    struct aptus_request *r = REQ(*request);
    if (!r->complete && (aptus_progress_poll() == 0 || !r->complete)) {
        *flag = 0; /* (a pass that saw nothing completed nothing) */
        return MPI_SUCCESS;
    }
    *flag = 1;
    req_query(r);
    int code = r->st_error ? req_error(r, r->st_error, "MPI_Test") : MPI_SUCCESS;
    return req_finish_one(request, status, code, "MPI_Test");
}

APTUS_API_FN_HOT(int, PMPI_Test, (MPI_Request * request, int *flag, MPI_Status *status), (request, flag, status),
                 test_one(request, flag, status))
APTUS_ALIAS(Test)

static int check_array(int count, MPI_Request reqs[], const char *fn)
{
    if (count < 0)
        return aptus_error(NULL, MPI_ERR_COUNT, fn, "negative count %d", count);
    if (count > 0 && !reqs)
        return aptus_error(NULL, MPI_ERR_ARG, fn, "null request array");
    for (int i = 0; i < count; i++)
        if (reqs[i] != MPI_REQUEST_NULL) {
            int rc = req_check(reqs[i], fn);
            if (rc)
                return rc;
        }
    return 0;
}

/* Scans for a completed active request; returns its index, or MPI_UNDEFINED when there are no
 * active ones, or -1 when none has completed yet. */
static int scan_any(int count, MPI_Request reqs[])
{
    int active = 0;
    for (int i = 0; i < count; i++) {
        if (null_or_inactive(reqs[i]))
            continue;
        active = 1;
        if (REQ(reqs[i])->complete)
            return i;
    }
    return active ? -1 : MPI_UNDEFINED;
}

static int finish_any(int count, MPI_Request reqs[], int i, int *index, MPI_Status *status, const char *fn)
{
    (void)count;
    *index = i;
    if (i == MPI_UNDEFINED) {
        aptus_status_empty(status);
        return MPI_SUCCESS;
    }
    struct aptus_request *r = REQ(reqs[i]);
    req_query(r);
    int code = r->st_error ? req_error(r, r->st_error, fn) : MPI_SUCCESS;
    return req_finish_one(&reqs[i], status, code, fn);
}

int PMPI_Waitany(int count, MPI_Request reqs[], int *index, MPI_Status *status)
{
    APTUS_API_LOCK();
    API_INIT("MPI_Waitany");
    int rc = check_array(count, reqs, "MPI_Waitany");
    if (rc)
        return rc;
    unsigned idle = 0;
    int i;
    while ((i = scan_any(count, reqs)) == -1)
        aptus_wait_step(&idle);
    return finish_any(count, reqs, i, index, status, "MPI_Waitany");
}
APTUS_ALIAS(Waitany)

int PMPI_Testany(int count, MPI_Request reqs[], int *index, int *flag, MPI_Status *status)
{
    APTUS_API_LOCK();
    API_INIT("MPI_Testany");
    int rc = check_array(count, reqs, "MPI_Testany");
    if (rc)
        return rc;
    int i = scan_any(count, reqs);
    if (i == -1) {
        aptus_progress_poll();
        i = scan_any(count, reqs);
    }
    if (i == -1) {
        *flag = 0;
        *index = MPI_UNDEFINED;
        return MPI_SUCCESS;
    }
    *flag = 1;
    return finish_any(count, reqs, i, index, status, "MPI_Testany");
}
APTUS_ALIAS(Testany)

/* Completes every request in the list; returns MPI_ERR_IN_STATUS if any failed. */
/* The active requests of reqs[0..count), all complete, get their statuses (generalized ones from
 * their query functions). Returns whether one failed; *err_comm is then the last failed one's
 * communicator. */
static int query_all(int count, MPI_Request reqs[], struct aptus_comm **err_comm)
{
    int any_err = 0;
    for (int i = 0; i < count; i++) {
        if (null_or_inactive(reqs[i]))
            continue;
        req_query(REQ(reqs[i]));
        if (REQ(reqs[i])->st_error) {
            any_err = 1;
            *err_comm = REQ(reqs[i])->comm;
        }
    }
    return any_err;
}

static int finish_all(int count, MPI_Request reqs[], MPI_Status statuses[], const char *fn)
{
    struct aptus_comm *err_comm = NULL;
    int any_err = query_all(count, reqs, &err_comm);
    for (int i = 0; i < count; i++) {
        MPI_Status *st = statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[i];
        int err = 0;
        if (null_or_inactive(reqs[i]))
            aptus_status_empty(st);
        else
            err = req_finish(&reqs[i], st);
        if (err && !any_err) { /* a generalized request's free function failed */
            any_err = 1;
            for (int j = 0; j < i && statuses != MPI_STATUSES_IGNORE; j++)
                statuses[j].MPI_ERROR = MPI_SUCCESS;
        }
        if (any_err && st != MPI_STATUS_IGNORE)
            st->MPI_ERROR = err;
    }
    if (any_err) {
        aptus_error(err_comm, MPI_ERR_IN_STATUS, fn, "at least one request failed; see the statuses");
        return MPI_ERR_IN_STATUS;
    }
    return MPI_SUCCESS;
}

static int all_complete(int count, MPI_Request reqs[])
{
    for (int i = 0; i < count; i++)
        if (!null_or_inactive(reqs[i]) && !REQ(reqs[i])->complete)
            return 0;
    return 1;
}

int PMPI_Waitall(int count, MPI_Request reqs[], MPI_Status statuses[])
{
    APTUS_API_LOCK();
    API_INIT("MPI_Waitall");
    int rc = check_array(count, reqs, "MPI_Waitall");
    if (rc)
        return rc;
    unsigned idle = 0;
    while (!all_complete(count, reqs))
        aptus_wait_step(&idle);
    return finish_all(count, reqs, statuses, "MPI_Waitall");
}
APTUS_ALIAS(Waitall)

int PMPI_Testall(int count, MPI_Request reqs[], int *flag, MPI_Status statuses[])
{
    APTUS_API_LOCK();
    API_INIT("MPI_Testall");
    int rc = check_array(count, reqs, "MPI_Testall");
    if (rc)
        return rc;
    if (!all_complete(count, reqs))
        aptus_progress_poll();
    *flag = all_complete(count, reqs);
    if (!*flag)
        return MPI_SUCCESS;
    return finish_all(count, reqs, statuses, "MPI_Testall");
}
APTUS_ALIAS(Testall)

static int some(int incount, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[], int block,
                const char *fn)
{
    API_INIT(fn);
    int rc = check_array(incount, reqs, fn);
    if (rc)
        return rc;
    unsigned idle = 0;
    for (;;) {
        int active = 0, done = 0;
        for (int i = 0; i < incount; i++) {
            if (null_or_inactive(reqs[i]))
                continue;
            active = 1;
            done += REQ(reqs[i])->complete;
        }
        if (!active) {
            *outcount = MPI_UNDEFINED;
            return MPI_SUCCESS;
        }
        if (done)
            break;
        if (!block) {
            aptus_progress_poll();
            done = 0;
            for (int i = 0; i < incount; i++)
                if (!null_or_inactive(reqs[i]) && REQ(reqs[i])->complete)
                    done = 1;
            if (!done) {
                *outcount = 0;
                return MPI_SUCCESS;
            }
            break;
        }
        aptus_wait_step(&idle);
    }
    int n = 0, any_err = 0;
    struct aptus_comm *err_comm = NULL;
    for (int i = 0; i < incount; i++) {
        if (null_or_inactive(reqs[i]) || !REQ(reqs[i])->complete)
            continue;
        req_query(REQ(reqs[i]));
        if (REQ(reqs[i])->st_error)
            err_comm = REQ(reqs[i])->comm;
        MPI_Status *st = statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[n];
        int err = req_finish(&reqs[i], st);
        if (st != MPI_STATUS_IGNORE)
            st->MPI_ERROR = err;
        any_err |= err != 0;
        indices[n++] = i;
    }
    *outcount = n;
    if (any_err) {
        aptus_error(err_comm, MPI_ERR_IN_STATUS, fn, "at least one request failed; see the statuses");
        return MPI_ERR_IN_STATUS;
    }
    return MPI_SUCCESS;
}

int PMPI_Waitsome(int incount, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[])
{
    APTUS_API_LOCKED(some(incount, reqs, outcount, indices, statuses, 1, "MPI_Waitsome"));
}
APTUS_ALIAS(Waitsome)

int PMPI_Testsome(int incount, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[])
{
    APTUS_API_LOCKED(some(incount, reqs, outcount, indices, statuses, 0, "MPI_Testsome"));
}
APTUS_ALIAS(Testsome)

int PMPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status)
{
    APTUS_API_LOCK();
    API_INIT("MPI_Request_get_status");
    int rc = request == MPI_REQUEST_NULL ? 0 : req_check(request, "MPI_Request_get_status");
    if (rc)
        return rc;
    if (null_or_inactive(request)) {
        *flag = 1;
        aptus_status_empty(status);
        return MPI_SUCCESS;
    }
    if (!REQ(request)->complete)
        aptus_progress_poll();
    *flag = REQ(request)->complete;
    if (*flag) {
        req_query(REQ(request));
        part_status(REQ(request));
        aptus_status_fill(status, REQ(request));
    }
    return MPI_SUCCESS;
}
APTUS_ALIAS(Request_get_status)

/* MPI 4.1: the statuses of Testall / Testany / Testsome without freeing or deactivating the
 * requests. */
int PMPI_Request_get_status_all(int count, const MPI_Request reqs[], int *flag, MPI_Status statuses[])
{
    APTUS_API_LOCK();
    const char *fn = "MPI_Request_get_status_all";
    API_INIT(fn);
    MPI_Request *rq = (MPI_Request *)reqs;
    int rc = check_array(count, rq, fn);
    if (rc)
        return rc;
    if (!flag)
        return aptus_error(NULL, MPI_ERR_ARG, fn, "null flag argument");
    if (!all_complete(count, rq))
        aptus_progress_poll();
    *flag = all_complete(count, rq);
    if (!*flag)
        return MPI_SUCCESS;
    struct aptus_comm *err_comm = NULL;
    int any_err = query_all(count, rq, &err_comm);
    for (int i = 0; statuses != MPI_STATUSES_IGNORE && i < count; i++) {
        if (null_or_inactive(rq[i])) {
            aptus_status_empty(&statuses[i]);
        } else {
            part_status(REQ(rq[i]));
            aptus_status_fill(&statuses[i], REQ(rq[i]));
            if (any_err)
                statuses[i].MPI_ERROR = REQ(rq[i])->st_error;
        }
    }
    if (any_err) {
        aptus_error(err_comm, MPI_ERR_IN_STATUS, fn, "at least one request failed; see the statuses");
        return MPI_ERR_IN_STATUS;
    }
    return MPI_SUCCESS;
}
APTUS_ALIAS(Request_get_status_all)

int PMPI_Request_get_status_any(int count, const MPI_Request reqs[], int *index, int *flag, MPI_Status *status)
{
    APTUS_API_LOCK();
    const char *fn = "MPI_Request_get_status_any";
    API_INIT(fn);
    MPI_Request *rq = (MPI_Request *)reqs;
    int rc = check_array(count, rq, fn);
    if (rc)
        return rc;
    if (!index || !flag)
        return aptus_error(NULL, MPI_ERR_ARG, fn, "null index or flag argument");
    int i = scan_any(count, rq);
    if (i == -1) {
        aptus_progress_poll();
        i = scan_any(count, rq);
    }
    *index = MPI_UNDEFINED;
    *flag = i != -1;
    if (i == -1)
        return MPI_SUCCESS;
    if (i == MPI_UNDEFINED) {
        aptus_status_empty(status);
        return MPI_SUCCESS;
    }
    *index = i;
    struct aptus_request *r = REQ(rq[i]);
    req_query(r);
    part_status(r);
    aptus_status_fill(status, r);
    return r->st_error ? req_error(r, r->st_error, fn) : MPI_SUCCESS;
}
APTUS_ALIAS(Request_get_status_any)

int PMPI_Request_get_status_some(int incount, const MPI_Request reqs[], int *outcount, int indices[],
                                 MPI_Status statuses[])
{
    APTUS_API_LOCK();
    const char *fn = "MPI_Request_get_status_some";
    API_INIT(fn);
    MPI_Request *rq = (MPI_Request *)reqs;
    int rc = check_array(incount, rq, fn);
    if (rc)
        return rc;
    if (!outcount)
        return aptus_error(NULL, MPI_ERR_ARG, fn, "null outcount argument");
    int i = scan_any(incount, rq);
    if (i == MPI_UNDEFINED) {
        *outcount = MPI_UNDEFINED;
        return MPI_SUCCESS;
    }
    if (i == -1)
        aptus_progress_poll();
    int n = 0, any_err = 0;
    struct aptus_comm *err_comm = NULL;
    for (i = 0; i < incount; i++) {
        if (null_or_inactive(rq[i]) || !REQ(rq[i])->complete)
            continue;
        struct aptus_request *r = REQ(rq[i]);
        req_query(r);
        if (r->st_error) {
            any_err = 1;
            err_comm = r->comm;
        }
        if (statuses != MPI_STATUSES_IGNORE) {
            part_status(r);
            aptus_status_fill(&statuses[n], r);
            statuses[n].MPI_ERROR = r->st_error;
        }
        indices[n++] = i;
    }
    *outcount = n;
    if (any_err) {
        aptus_error(err_comm, MPI_ERR_IN_STATUS, fn, "at least one request failed; see the statuses");
        return MPI_ERR_IN_STATUS;
    }
    return MPI_SUCCESS;
}
APTUS_ALIAS(Request_get_status_some)

/* MPI 4.1 makes freeing or cancelling an active partitioned request erroneous: while its
 * operation is in progress it is refused (MPI_ERR_REQUEST), and the request stays as it was, to be
 * completed as usual; once the operation has finished (the message sent, or all arrived) the
 * request is freed as any finished one, before the wait that would complete it too. */
static int part_active(struct aptus_request *r, const char *fn)
{
    if (r->kind == APTUS_REQ_GENERIC || !r->part || !r->active || r->complete)
        return 0;
    return aptus_error(r->comm, MPI_ERR_REQUEST, fn,
                       "the partitioned %s request is active and its operation in progress: it cannot be %s "
                       "before it completes (MPI_Wait, MPI_Test, ...)",
                       r->kind == APTUS_REQ_SEND ? "send" : "receive", fn[4] == 'C' ? "cancelled" : "freed");
}

int PMPI_Request_free(MPI_Request *request)
{
    APTUS_API_LOCK();
    API_INIT("MPI_Request_free");
    if (!request || *request == MPI_REQUEST_NULL)
        return aptus_error(NULL, MPI_ERR_REQUEST, "MPI_Request_free", "MPI_REQUEST_NULL cannot be freed");
    int rc = req_check(*request, "MPI_Request_free");
    if (rc)
        return rc;
    struct aptus_request *r = REQ(*request);
    if ((rc = part_active(r, "MPI_Request_free")))
        return rc;
    *request = MPI_REQUEST_NULL;
    /* a partitioned request's record goes now: only calls given its handle use it (MPI_Start,
     * MPI_Pready*, MPI_Parrived), and the handle is gone */
    if (r->kind == APTUS_REQ_GENERIC) {
        /* a persistent collective's schedule goes with its request (now, or when the active
         * operation ends) */
        if (r->nbc && r->persistent && r->complete) {
            aptus_nbc_free(r->nbc);
            r->nbc = NULL;
        }
    } else if (r->part) {
        aptus_part_free(r);
    }
    if (r->kind == APTUS_REQ_GREQ && r->complete) {
        /* a generalized request goes once both this and MPI_Grequest_complete were called */
        int frc = aptus_greq_free(r);
        aptus_req_free(r);
        return frc ? aptus_error_callback(NULL, frc, "MPI_Request_free", "the generalized request's free function")
                   : MPI_SUCCESS;
    }
    /* a completed request is in no queue any more, active or not */
    if (r->complete)
        aptus_req_free(r);
    else
        r->free_on_complete = 1;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Request_free)

int PMPI_Cancel(MPI_Request *request)
{
    APTUS_API_LOCK();
    API_INIT("MPI_Cancel");
    if (!request || *request == MPI_REQUEST_NULL)
        return aptus_error(NULL, MPI_ERR_REQUEST, "MPI_Cancel", "MPI_REQUEST_NULL cannot be cancelled");
    int rc = req_check(*request, "MPI_Cancel");
    if (rc)
        return rc;
    struct aptus_request *r = REQ(*request);
    if ((rc = part_active(r, "MPI_Cancel")))
        return rc;
    if (r->kind == APTUS_REQ_GREQ) {
        int crc = aptus_greq_cancel(r);
        return crc ? aptus_error_callback(r->comm, crc, "MPI_Cancel", "the generalized request's cancel function")
                   : MPI_SUCCESS;
    }
    /* A receive not yet matched is cancelled at once; a send is cancelled if the receiver has
     * not matched its message yet, which the receiver answers (pt2pt/cancel.c): MPI_Wait
     * returns once the answer is in, with MPI_Test_cancelled telling which. */
    if (r->kind == APTUS_REQ_RECV && !r->complete)
        aptus_recv_cancel(r);
    else if (r->kind == APTUS_REQ_SEND)
        aptus_send_cancel(r);
    return MPI_SUCCESS;
}
APTUS_ALIAS(Cancel)

int PMPI_Test_cancelled(const MPI_Status *status, int *flag)
{
    APTUS_API_LOCK();
    if (!status || !flag)
        return aptus_error(NULL, MPI_ERR_ARG, "MPI_Test_cancelled", "null argument");
    *flag = status->MPI_internal[2] != 0;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Test_cancelled)

/* ---------------- persistent ---------------- */

static int start_one(MPI_Request *h, const char *fn)
{
    int rc = req_check(*h, fn);
    if (rc)
        return rc;
    struct aptus_request *r = REQ(*h);
    if (!r->persistent)
        return aptus_error(r->comm, MPI_ERR_REQUEST, fn, "request is not persistent");
    if (r->active)
        return aptus_error(r->comm, MPI_ERR_REQUEST, fn, "request is already active");
    r->active = 1;
    r->complete = 0;
    r->st_error = 0;
    r->cancelled = 0;
    if (r->kind == APTUS_REQ_GENERIC)
        return aptus_nbc_start(r);
    if (r->part)
        return aptus_part_start(r, fn);
    if (r->peer == MPI_PROC_NULL) {
        aptus_req_done_proc_null(r);
        return MPI_SUCCESS;
    }
    if (r->kind == APTUS_REQ_RECV) {
        aptus_recv_start(r);
        return MPI_SUCCESS;
    }
    if (r->mode == APTUS_MODE_BUFFERED) {
        r->complete = 1;
        return bsend_copy(r->comm, fn, r, r->peer, r->tag);
    }
    rc = aptus_send_start(r);
    return rc ? aptus_error(r->comm, rc, fn, "send to rank %d failed", r->peer) : MPI_SUCCESS;
}

int PMPI_Start(MPI_Request *request)
{
    APTUS_API_LOCK();
    API_INIT("MPI_Start");
    if (!request)
        return aptus_error(NULL, MPI_ERR_ARG, "MPI_Start", "null request pointer");
    return start_one(request, "MPI_Start");
}
APTUS_ALIAS(Start)

int PMPI_Startall(int count, MPI_Request reqs[])
{
    APTUS_API_LOCK();
    API_INIT("MPI_Startall");
    if (count < 0)
        return aptus_error(NULL, MPI_ERR_COUNT, "MPI_Startall", "negative count %d", count);
    for (int i = 0; i < count; i++) {
        int rc = start_one(&reqs[i], "MPI_Startall");
        if (rc)
            return rc;
    }
    return MPI_SUCCESS;
}
APTUS_ALIAS(Startall)

/* ---------------- combined ---------------- */

/* Starts the receive and the send of a send-receive: *rr and *sr are internal requests. */
static int sendrecv_start(const char *fn, const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest,
                          int sendtag, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int source,
                          int recvtag, MPI_Comm comm, MPI_Request *rr, MPI_Request *sr)
{
    int rc = recv_any(fn, recvbuf, recvcount, recvtype, source, recvtag, comm, 0, rr, NULL);
    if (rc)
        return rc;
    rc = send_any(fn, sendbuf, sendcount, sendtype, dest, sendtag, comm, APTUS_MODE_STANDARD, 0, sr);
    if (rc) {
        aptus_recv_cancel(REQ(*rr));
        aptus_req_free(REQ(*rr));
    }
    return rc;
}

static int sendrecv_any(const char *fn, const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest,
                        int sendtag, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int source, int recvtag,
                        MPI_Comm comm, MPI_Status *status)
{
    MPI_Request rr, sr;
    int rc = sendrecv_start(fn, sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source,
                            recvtag, comm, &rr, &sr);
    if (rc)
        return rc;
    struct aptus_request *s = REQ(sr), *r = REQ(rr);
    aptus_wait(s);
    aptus_wait(r);
    aptus_status_fill(status, r);
    int serr = s->st_error, rerr = r->st_error;
    size_t msg = r->msg_bytes, bytes = r->bytes;
    int src = r->st_source, tag = r->st_tag;
    struct aptus_comm *c = r->comm;
    aptus_req_free(s);
    aptus_req_free(r);
    if (serr)
        return aptus_error(c, serr, fn, "send to rank %d failed", dest);
    if (rerr)
        return aptus_error(c, rerr, fn,
                           "message of %zu bytes from rank %d (tag %d) does not fit the %zu-byte receive buffer", msg,
                           src, tag, bytes);
    return MPI_SUCCESS;
}

/* The int and large-count (_c) forms of a send-receive call, both ANY(fn, ..., last). */
#define SENDRECV_FN(NAME, ANY, LAST_T)                                                                                 \
    int PMPI_##NAME(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf,   \
                    int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, LAST_T last)         \
    {                                                                                                                  \
        APTUS_API_LOCKED(ANY("MPI_" #NAME, sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype,  \
                             source, recvtag, comm, last));                                                            \
    }                                                                                                                  \
    APTUS_ALIAS(NAME)                                                                                                  \
    int PMPI_##NAME##_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest, int sendtag,        \
                        void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int source, int recvtag,            \
                        MPI_Comm comm, LAST_T last)                                                                    \
    {                                                                                                                  \
        APTUS_API_LOCKED(ANY("MPI_" #NAME "_c", sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount,       \
                             recvtype, source, recvtag, comm, last));                                                  \
    }                                                                                                                  \
    APTUS_ALIAS(NAME##_c)

/* The same for a replacing send-receive. */
#define REPLACE_FN(NAME, ANY, LAST_T)                                                                                  \
    int PMPI_##NAME(void *buf, int count, MPI_Datatype datatype, int dest, int sendtag, int source, int recvtag,       \
                    MPI_Comm comm, LAST_T last)                                                                        \
    {                                                                                                                  \
        APTUS_API_LOCKED(ANY("MPI_" #NAME, buf, count, datatype, dest, sendtag, source, recvtag, comm, last));         \
    }                                                                                                                  \
    APTUS_ALIAS(NAME)                                                                                                  \
    int PMPI_##NAME##_c(void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int sendtag, int source,          \
                        int recvtag, MPI_Comm comm, LAST_T last)                                                       \
    {                                                                                                                  \
        APTUS_API_LOCKED(ANY("MPI_" #NAME "_c", buf, count, datatype, dest, sendtag, source, recvtag, comm, last));    \
    }                                                                                                                  \
    APTUS_ALIAS(NAME##_c)

SENDRECV_FN(Sendrecv, sendrecv_any, MPI_Status *)

/* The outgoing data of a replacing send-receive, packed into a copy (sent as bytes; it arrives
 * as the receiver's datatype) in *copy, to be freed by the caller. */
static int replace_copy(const char *fn, const void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Comm comm,
                        void **copy, size_t *bytes_out)
{
    GET_COMM(c, comm, fn);
    CHK_COUNT(c, count, fn);
    GET_MSG_DTYPE(d, datatype, count, c, fn);
    GET_BYTES(bytes, c, d, count, fn);
    CHK_DATA_BUF(c, buf, d, bytes, fn);
    *copy = malloc(bytes ? bytes : 1);
    if (!*copy)
        return aptus_error(c, MPI_ERR_NO_MEM, fn, "out of memory for %zu bytes", bytes);
    if (bytes)
        aptus_dt_pack(buf, (size_t)count, d, *copy);
    *bytes_out = bytes;
    return MPI_SUCCESS;
}

static int sendrecv_replace_any(const char *fn, void *buf, MPI_Count count, MPI_Datatype datatype, int dest,
                                int sendtag, int source, int recvtag, MPI_Comm comm, MPI_Status *status)
{
    size_t bytes = 0;
    void *copy = NULL;
    int rc = replace_copy(fn, buf, count, datatype, comm, &copy, &bytes);
    if (rc)
        return rc;
    rc = sendrecv_any(fn, copy, (MPI_Count)bytes, MPI_BYTE, dest, sendtag, buf, count, datatype, source, recvtag, comm,
                      status);
    free(copy);
    return rc;
}

REPLACE_FN(Sendrecv_replace, sendrecv_replace_any, MPI_Status *)

/* Nonblocking send-receive (MPI 4.0): a GENERIC request that a background task completes once
 * both halves have; its status is the receive's. The replacing form owns the packed copy of
 * the outgoing data and frees it then. */
struct isendrecv {
    struct aptus_request *user, *s, *r;
    void *copy;
};

static int isendrecv_poll(void *arg)
{
    struct isendrecv *op = arg;
    if (!op->s->complete || !op->r->complete)
        return 0;
    struct aptus_request *u = op->user, *r = op->r;
    u->st_source = r->st_source;
    u->st_tag = r->st_tag;
    u->st_bytes = r->st_bytes;
    u->msg_bytes = r->msg_bytes;
    u->bytes = r->bytes;
    u->st_error = op->s->st_error ? op->s->st_error : r->st_error;
    aptus_req_free(op->s);
    aptus_req_free(op->r);
    free(op->copy);
    free(op);
    aptus_req_complete(u); /* may free u (MPI_Request_free before completion) */
    return 1;
}

/* copy: the replacing form's packed outgoing data (sendbuf), which the operation then owns. */
static int isendrecv_own(const char *fn, const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest,
                         int sendtag, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int source,
                         int recvtag, MPI_Comm comm, MPI_Request *request, void *copy)
{
    if (!request) {
        free(copy);
        return aptus_error(NULL, MPI_ERR_ARG, fn, "null request pointer");
    }
    struct isendrecv *op = calloc(1, sizeof *op);
    struct aptus_request *u = aptus_req_new_nomsg(APTUS_REQ_GENERIC);
    if (!op || !u) {
        free(op);
        free(copy);
        if (u)
            aptus_req_free(u);
        return aptus_error(aptus_comm_get(comm), MPI_ERR_NO_MEM, fn, "out of memory");
    }
    MPI_Request rr, sr;
    int rc = sendrecv_start(fn, sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source,
                            recvtag, comm, &rr, &sr);
    if (rc) {
        free(op);
        free(copy);
        aptus_req_free(u);
        return rc;
    }
    u->comm = REQ(rr)->comm;
    u->peer = source;
    op->user = u;
    op->s = REQ(sr);
    op->r = REQ(rr);
    op->copy = copy;
    *request = (MPI_Request)u;
    if (isendrecv_poll(op))
        return MPI_SUCCESS;
    if (aptus_bg_add(isendrecv_poll, op)) {
        unsigned idle = 0; /* no room for a background task: finish here */
        while (!isendrecv_poll(op))
            aptus_wait_step(&idle);
    }
    return MPI_SUCCESS;
}

static int isendrecv_any(const char *fn, const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest,
                         int sendtag, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int source,
                         int recvtag, MPI_Comm comm, MPI_Request *request)
{
    APTUS_OUT_NULL(request, MPI_REQUEST_NULL);
    return isendrecv_own(fn, sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag,
                         comm, request, NULL);
}

SENDRECV_FN(Isendrecv, isendrecv_any, MPI_Request *)

static int isendrecv_replace_any(const char *fn, void *buf, MPI_Count count, MPI_Datatype datatype, int dest,
                                 int sendtag, int source, int recvtag, MPI_Comm comm, MPI_Request *request)
{
    APTUS_OUT_NULL(request, MPI_REQUEST_NULL);
    size_t bytes = 0;
    void *copy = NULL;
    int rc = replace_copy(fn, buf, count, datatype, comm, &copy, &bytes);
    if (rc)
        return rc;
    return isendrecv_own(fn, copy, (MPI_Count)bytes, MPI_BYTE, dest, sendtag, buf, count, datatype, source, recvtag,
                         comm, request, copy);
}

REPLACE_FN(Isendrecv_replace, isendrecv_replace_any, MPI_Request *)

/* ---------------- probe ---------------- */

/* A matched message's handle (MPI_Mprobe, MPI_Improbe): a slot of the handle arena that names the
 * message taken off the unexpected queue, so that MPI_Mrecv can check a handle before it reads
 * anything (core/arena.h). */
#define APTUS_MAGIC_MSG 0x4d736721u
struct aptus_mmsg {
    uint32_t magic;
    struct aptus_unexp *msg;
};
APTUS_OBJ_FITS(struct aptus_mmsg, MESSAGE);
/* A handle left over by a probe that matched nothing (under the library's lock), for the next
 * one: a loop of MPI_Improbe allocates nothing. */
static struct aptus_mmsg *mmsg_spare;

static int probe_any(const char *fn, int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status, int block,
                     MPI_Message *message)
{
    GET_COMM(c, comm, fn);
    CHK_SRC(c, source, fn);
    CHK_RECV_TAG(c, tag, fn);
    if (source == MPI_PROC_NULL) {
        if (flag)
            *flag = 1;
        if (status != MPI_STATUS_IGNORE) {
            /* a single status: MPI_ERROR is left alone, as by MPI_Recv */
            int err = status->MPI_ERROR;
            aptus_status_empty(status);
            status->MPI_SOURCE = MPI_PROC_NULL;
            status->MPI_ERROR = err;
        }
        if (message)
            *message = MPI_MESSAGE_NO_PROC;
        return MPI_SUCCESS;
    }
    /* the handle is made before the message is taken (never a message taken and no handle for
     * it), and kept by this call: a blocking probe lets other threads in while it waits */
    struct aptus_mmsg *m = NULL;
    if (message) {
        m = mmsg_spare ? mmsg_spare : aptus_obj_alloc(APTUS_OBJ_MESSAGE, sizeof *m);
        mmsg_spare = NULL;
        if (!m)
            return aptus_error(c, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    struct aptus_unexp *msg = NULL;
    unsigned idle = 0;
    int found = aptus_probe_test(source, tag, c, c->ctx, status, message != NULL, &msg);
    while (!found) {
        if (block)
            aptus_wait_step(&idle);
        else if (aptus_progress_poll() == 0)
            break; /* the pass saw nothing: no new message to look at */
        found = aptus_probe_test(source, tag, c, c->ctx, status, message != NULL, &msg);
        if (!block)
            break;
    }
    if (flag)
        *flag = found;
    if (message && found) {
        m->magic = APTUS_MAGIC_MSG;
        m->msg = msg;
        *message = (MPI_Message)m;
    } else if (message) {
        *message = MPI_MESSAGE_NULL;
        if (mmsg_spare)
            aptus_obj_free(APTUS_OBJ_MESSAGE, m);
        else
            mmsg_spare = m;
    }
    return MPI_SUCCESS;
}

int PMPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    APTUS_API_LOCKED(probe_any("MPI_Probe", source, tag, comm, NULL, status, 1, NULL));
}
APTUS_ALIAS(Probe)

int PMPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
    APTUS_API_LOCKED(probe_any("MPI_Iprobe", source, tag, comm, flag, status, 0, NULL));
}
APTUS_ALIAS(Iprobe)

int PMPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status)
{
    APTUS_OUT_NULL(message, MPI_MESSAGE_NULL);
    APTUS_API_LOCK();
    if (!message)
        return aptus_error(NULL, MPI_ERR_ARG, "MPI_Mprobe", "null message pointer");
    return probe_any("MPI_Mprobe", source, tag, comm, NULL, status, 1, message);
}
APTUS_ALIAS(Mprobe)

int PMPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message, MPI_Status *status)
{
    APTUS_OUT_NULL(message, MPI_MESSAGE_NULL);
    APTUS_API_LOCK();
    if (!message)
        return aptus_error(NULL, MPI_ERR_ARG, "MPI_Improbe", "null message pointer");
    return probe_any("MPI_Improbe", source, tag, comm, flag, status, 0, message);
}
APTUS_ALIAS(Improbe)

static int mrecv_any(const char *fn, void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Message *message,
                     MPI_Request *req, MPI_Status *status)
{
    API_INIT(fn);
    if (!message || *message == MPI_MESSAGE_NULL)
        return aptus_error(NULL, MPI_ERR_REQUEST, fn, "MPI_MESSAGE_NULL is not a matched message");
    struct aptus_mmsg *m = (struct aptus_mmsg *)*message;
    if (*message != MPI_MESSAGE_NO_PROC && !(aptus_obj_in(m, APTUS_OBJ_MESSAGE) && m->magic == APTUS_MAGIC_MSG))
        return aptus_error(NULL, MPI_ERR_REQUEST, fn,
                           "invalid message handle (MPI_Mprobe and MPI_Improbe make them; each is received once)");
    CHK_COUNT(NULL, count, fn);
    GET_MSG_DTYPE(d, datatype, count, NULL, fn);
    GET_BYTES(bytes, NULL, d, count, fn);
    CHK_DATA_BUF(NULL, buf, d, bytes, fn);
    struct aptus_request local, *r = req ? aptus_req_new(APTUS_REQ_RECV) : &local;
    if (!r)
        return aptus_error(NULL, MPI_ERR_NO_MEM, fn, "out of memory");
    aptus_req_init(r, APTUS_REQ_RECV);
    aptus_req_set_data(r, buf, (size_t)count, d);
    if (req)
        aptus_req_hold_type(r);
    r->comm = &aptus_comm_self_obj;
    if (*message == MPI_MESSAGE_NO_PROC)
        aptus_req_done_proc_null(r);
    else {
        struct aptus_unexp *u = m->msg;
        aptus_obj_free(APTUS_OBJ_MESSAGE, m);
        aptus_recv_taken(r, u);
    }
    *message = MPI_MESSAGE_NULL;
    if (req) {
        *req = (MPI_Request)r;
        return MPI_SUCCESS;
    }
    aptus_wait(r);
    aptus_status_fill(status, r);
    if (r->st_error)
        return aptus_error(r->comm, r->st_error, fn, "message of %llu bytes does not fit the %zu-byte receive buffer",
                           (unsigned long long)r->msg_bytes, bytes);
    return MPI_SUCCESS;
}

int PMPI_Mrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message, MPI_Status *status)
{
    APTUS_API_LOCKED(mrecv_any("MPI_Mrecv", buf, count, datatype, message, NULL, status));
}
APTUS_ALIAS(Mrecv)

int PMPI_Imrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message, MPI_Request *request)
{
    APTUS_OUT_NULL(request, MPI_REQUEST_NULL);
    APTUS_API_LOCK();
    if (!request)
        return aptus_error(NULL, MPI_ERR_ARG, "MPI_Imrecv", "null request pointer");
    return mrecv_any("MPI_Imrecv", buf, count, datatype, message, request, NULL);
}
APTUS_ALIAS(Imrecv)

int PMPI_Mrecv_c(void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Message *message, MPI_Status *status)
{
    APTUS_API_LOCKED(mrecv_any("MPI_Mrecv_c", buf, count, datatype, message, NULL, status));
}
APTUS_ALIAS(Mrecv_c)

int PMPI_Imrecv_c(void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Message *message, MPI_Request *request)
{
    APTUS_OUT_NULL(request, MPI_REQUEST_NULL);
    APTUS_API_LOCK();
    if (!request)
        return aptus_error(NULL, MPI_ERR_ARG, "MPI_Imrecv_c", "null request pointer");
    return mrecv_any("MPI_Imrecv_c", buf, count, datatype, message, request, NULL);
}
APTUS_ALIAS(Imrecv_c)
