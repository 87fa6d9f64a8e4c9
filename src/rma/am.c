/* Active messages, origin side: the requests in flight, the per-target batches of operations
 * that want no answer, control messages (lock, unlock, flush, complete) and their answers. */
#include "rma/rma_internal.h"

#include <stdlib.h>
#include <string.h>

#include "coll/coll_internal.h"
#include "pt2pt/pt2pt.h"

int rma_pend_add(struct aptus_win *w, struct aptus_request *r, void *tmp)
{
    if (w->npend == w->cappend) {
        int cap = w->cappend ? 2 * w->cappend : 16;
        struct rma_pend *p = realloc(w->pend, sizeof *p * (size_t)cap);
        if (!p)
            return MPI_ERR_NO_MEM;
        w->pend = p;
        w->cappend = cap;
    }
    w->pend[w->npend++] = (struct rma_pend){ r, tmp, 0 };
    return 0;
}

/* Completes what the origin moves itself or hands to the copy agent or to RDMA, leaving the
 * active messages (and their batches) alone: a synchronization that sends a control message
 * to a target settles these first, then lets the control message ride at the end of the
 * target's batch, then waits for the messages' sends (rma_pend_wait_all). */
int rma_settle_direct(struct aptus_win *w)
{
    if (__atomic_load_n(&w->lb_pending, __ATOMIC_ACQUIRE))
        rma_lb_drain(w);
    return w->rdma_dirty_any ? rma_rdma_wait(w, -1) : 0;
}

static int batch_send_all(struct aptus_win *w);

/* Completes every pending request of the origin side; the first error is returned. */
int rma_pend_wait_all(struct aptus_win *w)
{
    w->sync_seq++; /* (a dynamic window's region keys are checked again after this) */
    int brc = batch_send_all(w);
    int rc = rma_settle_direct(w);
    for (int i = 0; i < w->npend; i++) {
        struct aptus_request *r = w->pend[i].req;
        aptus_wait(r);
        if (!rc && r->st_error)
            rc = r->st_error;
        aptus_req_free(r);
        if (w->pend[i].batch && w->nspare < RMA_SPARES) /* (for the next batch) */
            w->spare[w->nspare++] = w->pend[i].tmp;
        else
            free(w->pend[i].tmp);
    }
    w->npend = 0;
    return rc ? rc : brc;
}

static uint32_t reply_tag(struct aptus_win *w)
{
    return TAG_REPLY0 + (w->reply_seq++ % TAG_REPLY_SPAN);
}

/* keep_buf: the request owns buf (1), a batch buffer (2) */
static int am_send_now(struct aptus_win *w, int target, void *buf, size_t len, int keep_buf)
{
    struct aptus_request *r;
    int rc = aptus_coll_isend_on(w->comm, w->comm->ctx, buf, len, target, TAG_REQ, &r);
    if (rc) {
        if (keep_buf)
            free(buf);
        return rc;
    }
    rc = rma_pend_add(w, r, keep_buf ? buf : NULL);
    if (!rc)
        w->pend[w->npend - 1].batch = keep_buf == 2;
    if (rc) {
        aptus_wait(r);
        aptus_req_free(r);
        if (keep_buf)
            free(buf);
    }
    return rc;
}

/* Batches: small active messages that want no answer (puts, accumulates) are gathered per
 * target into one message, sent when a synchronization needs them (its own request rides in
 * the same message: a flush after a put is one message and its answer, not two messages), when
 * any other message goes to that target (which keeps the order of everything sent to it), or
 * when the batch is full. The agent takes the messages of a batch in order; each starts at a
 * multiple of 8 bytes (RMA_PAD8). Every wait for the window's transfers sends the batches first,
 * except those of operations deferred to the epoch's end (defer.c settles them). */
int rma_batch_send(struct aptus_win *w, int target)
{
    struct rma_target *t = &w->t[target];
    if (!t->blen)
        return 0;
    char *m = t->batch;
    size_t len = t->blen;
    t->batch = NULL;
    t->blen = 0;
    if (t->deferred) {
        t->deferred = 0;
        w->ndeferred--;
    }
    return am_send_now(w, target, m, len, 2);
}

static int batch_send_all(struct aptus_win *w)
{
    int rc = 0;
    for (int r = 0; r < w->size; r++)
        if (w->t[r].blen && !w->t[r].deferred) {
            int e = rma_batch_send(w, r);
            rc = rc ? rc : e;
        }
    return rc;
}

/* Room for a message of len bytes at the end of the target's batch (sent first when the message
 * would not fit): the caller writes the message there. NULL with *rc 0 when the message is too
 * large for a batch (it goes out on its own, after the batch), NULL with *rc set on an error. */
char *rma_batch_room(struct aptus_win *w, int target, size_t len, int *rc)
{
    struct rma_target *t = &w->t[target];
    *rc = 0;
    if (t->blen + RMA_PAD8(len) > RMA_BATCH_MAX && (*rc = rma_batch_send(w, target)) != 0)
        return NULL;
    if (len > RMA_BATCH_MAX)
        return NULL;
    if (!t->batch && !(t->batch = w->nspare ? w->spare[--w->nspare] : malloc(RMA_BATCH_MAX))) {
        *rc = MPI_ERR_NO_MEM;
        return NULL;
    }
    char *m = t->batch + t->blen;
    memset(m + len, 0, RMA_PAD8(len) - len);
    t->blen += (uint32_t)RMA_PAD8(len);
    return m;
}

/* Any message that is not batched: the target's batch goes first. */
static int am_send(struct aptus_win *w, int target, void *buf, size_t len, int keep_buf)
{
    int rc = rma_batch_send(w, target);
    if (rc) {
        if (keep_buf)
            free(buf);
        return rc;
    }
    return am_send_now(w, target, buf, len, keep_buf);
}

/* Posts the receive of a reply into (buf, count, dt) -- dt NULL: `bytes` bytes. */
static int am_expect(struct aptus_win *w, int target, uint32_t tag, void *buf, size_t bytes,
                     const struct aptus_dtype *dt, size_t count, struct aptus_request **out)
{
    struct aptus_request *r;
    int rc = aptus_coll_start_msg(APTUS_REQ_RECV, w->comm, w->comm->ctx, buf, bytes, dt, count, target, (int)tag, &r);
    if (rc)
        return rc;
    if (out) {
        *out = r;
        return 0;
    }
    rc = rma_pend_add(w, r, NULL);
    if (rc) {
        aptus_wait(r);
        aptus_req_free(r);
    }
    return rc;
}

/* Sends a control message (no segments, no data); with rr, posts the receive of its answer (an
 * int, an error class, into *answer) and returns its request there. */
int rma_am_control_start(struct aptus_win *w, int target, int kind, int lock, struct aptus_request **rr, int *answer)
{
    struct rma_hdr h = { (uint8_t)kind, (uint8_t)lock, 0, 0, 0, 0, 0 };
    int rc;
    if (rr) {
        *answer = 0;
        h.reply_tag = reply_tag(w);
        rc = am_expect(w, target, h.reply_tag, answer, sizeof *answer, NULL, 0, rr);
        if (rc)
            return rc;
    }
    char *m = rma_batch_room(w, target, sizeof h, &rc);
    if (m) {
        memcpy(m, &h, sizeof h);
        rc = rma_batch_send(w, target);
    }
    if (rc && rr) {
        if (!aptus_recv_cancel(*rr))
            aptus_wait(*rr);
        aptus_req_free(*rr);
        *rr = NULL;
    }
    return rc;
}

/* Waits for a control message's answer: its error class, or the receive's error. */
int rma_am_control_finish(struct aptus_request *rr, const int *answer)
{
    aptus_wait(rr);
    int rc = rr->st_error;
    aptus_req_free(rr);
    return rc ? rc : *answer;
}

/* Sends a control message and, with reply, waits for its answer. */
int rma_am_control(struct aptus_win *w, int target, int kind, int lock, int wait_reply)
{
    struct aptus_request *rr = NULL;
    int answer = 0;
    int rc = rma_am_control_start(w, target, kind, lock, wait_reply ? &rr : NULL, &answer);
    if (!rc && rr)
        rc = rma_am_control_finish(rr, &answer);
    return rc;
}

/* The count of targets with active messages not yet flushed follows their flags. */
void rma_am_dirty_set(struct aptus_win *w, struct rma_target *t, int dirty)
{
    if (t->am_dirty != dirty) {
        t->am_dirty = (uint8_t)dirty;
        w->ndirty += dirty ? 1 : -1;
    }
}

/* Active message: header, ranges, data (packed), sent; replies expected into (rbuf, rcount, rdt). */
int rma_am_op(struct aptus_win *w, const struct rma_op *op, int kind, MPI_Datatype basic, const struct rma_seg *s,
              size_t ns, const char *data, size_t dbytes, const char *data2, size_t d2bytes)
{
    size_t len = sizeof(struct rma_hdr) + ns * sizeof *s + dbytes + d2bytes;
    struct rma_hdr h = { (uint8_t)kind, 0, (uint16_t)op->op_id, 0, (uint64_t)(uintptr_t)basic, ns, dbytes + d2bytes };
    int rc = 0;
    /* a put or accumulate needs a flush round trip to be known complete, and goes in the
     * target's batch; a get, fetch or compare-and-swap is complete when its answer has come
     * (flush waits for it), and goes at once */
    int batched = kind == AM_PUT || kind == AM_ACC;
    if (!batched) {
        h.reply_tag = reply_tag(w);
        size_t bytes = 0;
        for (size_t i = 0; i < ns; i++)
            bytes += s[i].len;
        rc = am_expect(w, op->target, h.reply_tag, op->rbuf, bytes, op->rdt, op->rcount, NULL);
        if (rc)
            return rc;
    }
    char *m = batched ? rma_batch_room(w, op->target, len, &rc) : NULL;
    if (rc)
        return rc;
    int own = !m; /* a message of its own */
    if (own && !(m = malloc(len)))
        return MPI_ERR_NO_MEM;
    memcpy(m, &h, sizeof h);
    if (ns)
        memcpy(m + sizeof h, s, ns * sizeof *s);
    if (dbytes)
        memcpy(m + sizeof h + ns * sizeof *s, data, dbytes);
    if (d2bytes)
        memcpy(m + sizeof h + ns * sizeof *s + dbytes, data2, d2bytes);
    if (batched && !w->t[op->target].deferred) /* (deferred ones are settled otherwise: defer.c) */
        rma_am_dirty_set(w, &w->t[op->target], 1);
    return own ? am_send(w, op->target, m, len, 1) : 0;
}
