/* Customized rendezvous (seed 004): the protocol of a message above the eager limit is chosen
 * by its size and by who arrives first, over any channel with one-sided put (RECV_RNDV) or get
 * (HYBRID) -- Cross Memory Attach on a node, RDMA across nodes -- written once here:
 *
 *   RECV_RNDV  a receive posted first, from a named source and tag, sends RECEIVER_READY (RR)
 *              with its buffer; the send that finds it writes the message there and says
 *              WRITTEN -- or, where the channel places the last byte last, says nothing: the
 *              receiver watches that byte (FIN elimination).
 *   HYBRID     a medium message whose sender comes first is copied into a buffer of the
 *              sender's (a bounded pool), offered by an RTS that the receiver reads, and the
 *              send completes at once.
 *   SEND_RNDV  a larger one waits for its receiver: the RTS of rndv.c.
 *
 * Which send an RR is for. An RR carries what its receiver had seen of the sender when it was
 * sent: the next matched frame it expected (rseq) and the writes without FIN it had noticed
 * (rfinless). The sender takes it only if it has sent nothing since -- then the receive is the
 * (skip+1)-th of the sender's next messages on (ctx, tag), skip counting the receives on that
 * envelope posted before it and pending -- and drops it otherwise (the receive is then matched
 * the usual way: dropping an RR is always safe). Each later send on (ctx, tag) takes the RR at
 * skip 0 (writing, or dropping it if the message cannot go that way) and moves the others up.
 * Receives with MPI_ANY_SOURCE or MPI_ANY_TAG, and receives behind one, send no RR.
 *
 * Order. WRITTEN takes the message's place in the sequence of matched frames, so the receive
 * leaves the posted queue before any later frame is matched. A write without FIN takes no
 * place: a later frame on the same envelope that finds the receive still posted checks its
 * last byte first (the write was placed before that frame was sent).
 *
 * Cancel. Cancelling a receive with an RR out (or one posted before a receive with an RR out,
 * whose place it would change) asks the sender to drop every RR of that envelope (RR_REVOKE);
 * its answer, RR_REVOKED, comes in sequence after every write it made, and then the receive is
 * cancelled if nothing has matched it -- the sender never writes into a cancelled buffer. */
#include <stdio.h>
#include <stdlib.h>

#include "core/errors.h"
#include "pt2pt/mlayer.h"
#include "runtime/config.h"
#include "runtime/progress.h"

size_t aptus_rr_floor = SIZE_MAX;
static int customized;

/* A RECEIVER_READY the sender holds. */
struct aptus_rr {
    struct aptus_rr *next;
    uint16_t ctx;
    uint8_t chan, finless, sentinel;
    int tag;
    uint32_t skip;
    uint64_t rreq, addr, key, len;
};

/* The receives of this process with an RR out (or a revocation), in no order. */
static struct {
    struct aptus_request **v;
    int n, cap;
    int watching; /* of them, those watching their last byte */
    int poller;
} rl;

/* ---- the HYBRID copies: a bounded pool of pieces in power-of-two sizes ---------------------- */

/* Each piece has a 64-byte head: the link while it is free, and its size class. */
#define PIECE_HEAD   64
#define POOL_CLASSES 48
static struct {
    void *free[POOL_CLASSES];
    size_t bytes; /* held, in use or free */
} pool;

static void *piece_get(size_t n)
{
    int c = 12; /* 4 KiB at least */
    while (c < POOL_CLASSES && ((size_t)1 << c) < n + PIECE_HEAD)
        c++;
    if (c >= POOL_CLASSES)
        return NULL;
    char *p = pool.free[c];
    if (p) {
        pool.free[c] = *(void **)p;
    } else {
        size_t sz = (size_t)1 << c;
        void *v;
        if (pool.bytes + sz > aptus_config.rndv_hybrid_pool || posix_memalign(&v, 64, sz) != 0)
            return NULL;
        pool.bytes += sz;
        p = v;
    }
    ((int *)p)[2] = c;
    return p + PIECE_HEAD;
}

void aptus_hybrid_release(void *piece)
{
    char *p = (char *)piece - PIECE_HEAD;
    int c = ((int *)p)[2];
    *(void **)p = pool.free[c];
    pool.free[c] = p;
}

static void pool_finalize(void)
{
    for (int c = 0; c < POOL_CLASSES; c++)
        while (pool.free[c]) {
            void *p = pool.free[c];
            pool.free[c] = *(void **)p;
            free(p);
        }
    pool.bytes = 0;
}

/* ---- receives with an RR out ---------------------------------------------------------------- */

static void rl_add(struct aptus_request *r)
{
    if (rl.n == rl.cap) {
        int cap = rl.cap ? 2 * rl.cap : 16;
        struct aptus_request **v = realloc(rl.v, sizeof *v * (size_t)cap);
        if (!v)
            aptus_abort_job(MPI_ERR_NO_MEM, "out of memory for the list of receives told to their senders");
        rl.v = v;
        rl.cap = cap;
    }
    rl.v[rl.n++] = r;
}

static void watch(int d)
{
    int was = rl.watching;
    rl.watching += d;
    if (!was != !rl.watching) {
        /* a write without FIN rings no bell: keep polling while any receive watches */
        aptus_poller_enable(rl.poller, rl.watching > 0);
        aptus_progress_hold_awake(rl.watching > 0 ? 1 : -1);
    }
}

/* Ends r's RR state (its place in the list, and its registration unless kept). */
static void settle_keep(struct aptus_request *r, int keep_reg)
{
    if (r->rr & APTUS_RR_WATCH)
        watch(-1);
    r->rr = 0;
    if (!keep_reg)
        aptus_rndv_release(r);
    for (int i = 0; i < rl.n; i++)
        if (rl.v[i] == r) {
            rl.v[i] = rl.v[--rl.n];
            break;
        }
}

static void settle(struct aptus_request *r)
{
    settle_keep(r, 0);
}

static struct aptus_peer *peer_of(const struct aptus_request *r)
{
    return aptus_rt.peers[aptus_comm_peer_world(r->comm, r->peer)];
}

static int byte_written(const struct aptus_request *r)
{
    uint8_t b = __atomic_load_n((const uint8_t *)r->buf + r->bytes - 1, __ATOMIC_ACQUIRE);
    return b != r->rr_sentinel;
}

/* r's buffer has been written without FIN: it is received. */
static void finless_done(struct aptus_request *r)
{
    struct aptus_peer *p = peer_of(r);
    aptus_posted_remove(r);
    settle(r);
    aptus_peer_ml(p)->finless_seen++;
    aptus_ml.rndv_write++;
    aptus_set_envelope(r, r->peer, r->tag, r->bytes);
    aptus_req_done(r);
}

/* Completes the receives written without FIN whose last byte has changed: those from p (before
 * telling p what this rank has seen), or all (p NULL: the poller). Returns how many. */
static int notice(const struct aptus_peer *p)
{
    int seen = 0;
    for (int i = 0; i < rl.n;) {
        struct aptus_request *r = rl.v[i];
        if ((r->rr & APTUS_RR_WATCH) && r->posted && (!p || peer_of(r) == p) && byte_written(r)) {
            finless_done(r); /* (r left the list: slot i holds another now) */
            seen++;
            continue;
        }
        i++;
    }
    return seen;
}

static int watch_poll(void)
{
    return notice(NULL);
}

/* The receiver: a receive just posted. */
void aptus_rr_post(struct aptus_request *r)
{
    if (r->nc || r->peer < 0 || r->tag == MPI_ANY_TAG || !r->comm)
        return;
    int w = aptus_comm_peer_world(r->comm, r->peer);
    if (w == aptus_rt.rank)
        return;
    struct aptus_peer *p = aptus_peer_get(w);
    if (!p || p->failed)
        return;
    int i = aptus_route_find(p->route, r->bytes);
    if (i < 0 || p->route->proto[i] == APTUS_PROTO_EAGER)
        return;
    int chan = p->route->channel[i];
    const struct aptus_channel *ch = aptus_channels[chan];
    uint32_t fl = ch->caps.flags;
    if (!ch->caps.rr_min || r->bytes < ch->caps.rr_min || !ch->put ||
        !((fl & APTUS_CAP_REMOTE_FLUSH) || ch->put_notify))
        return;
    struct aptus_sendq *q = aptus_peer_ml(p);
    if (q->revoking)
        return;
    notice(p);
    int skip = aptus_posted_ahead(r);
    if (skip < 0)
        return;
    uint64_t raddr = (uint64_t)(uintptr_t)r->buf, rkey = 0;
    if (fl & APTUS_CAP_NEEDS_REG) {
        if (ch->mem_reg(r->buf, r->bytes, &r->memh, &raddr, &rkey) != APTUS_OK) {
            r->memh = NULL;
            return;
        }
        r->memch = (uint8_t)chan;
        r->rr_raddr = raddr;
        r->rr_rkey = rkey;
    }
    int finless =
        aptus_config.rndv_fin_elim && (fl & APTUS_CAP_REMOTE_FLUSH) && !(fl & APTUS_CAP_NEEDS_REG) && r->bytes >= 2;
    r->rr_sentinel = __atomic_load_n((const uint8_t *)r->buf + r->bytes - 1, __ATOMIC_RELAXED);
    struct aptus_f_rr f = { .type = APTUS_F_RR,
                            .chan = (uint8_t)chan,
                            .finless = (uint8_t)finless,
                            .sentinel = r->rr_sentinel,
                            .ctx = r->ctx,
                            .tag = r->tag,
                            .skip = (uint32_t)skip,
                            .rseq = p->recv_seq,
                            .rfinless = q->finless_seen,
                            .rrno = ++q->rr_sent,
                            .len = r->bytes,
                            .rreq = (uint64_t)(uintptr_t)r,
                            .addr = raddr,
                            .key = rkey };
    r->rr = APTUS_RR_OUT;
    if (finless) {
        r->rr |= APTUS_RR_WATCH;
        watch(1);
    }
    rl_add(r);
    aptus_pstat(p, APTUS_PS_RR_SENT);
    aptus_send_ctrl(p, &f, sizeof f);
}

int aptus_rr_matched(struct aptus_request *r, int keep_reg)
{
    if ((r->rr & APTUS_RR_WATCH) && byte_written(r)) {
        finless_done(r);
        return 1;
    }
    settle_keep(r, keep_reg && r->memh);
    return 0;
}

void aptus_rr_forget(struct aptus_request *r)
{
    settle(r);
}

int aptus_rr_cancel_needs_revoke(const struct aptus_request *r)
{
    if (!rl.n || r->peer < 0 || r->tag == MPI_ANY_TAG)
        return 0;
    for (int i = 0; i < rl.n; i++) {
        const struct aptus_request *q = rl.v[i];
        if (q != r && (q->rr & APTUS_RR_OUT) && q->posted && q->ctx == r->ctx && q->peer == r->peer &&
            q->tag == r->tag && q->stamp > r->stamp)
            return 1;
    }
    return 0;
}

int aptus_rr_recv_cancel(struct aptus_request *r)
{
    if (!r->posted || (r->rr & APTUS_RR_REVOKE))
        return 0;
    if ((r->rr & APTUS_RR_WATCH) && byte_written(r)) {
        finless_done(r);
        return 0;
    }
    struct aptus_peer *p = peer_of(r);
    struct aptus_sendq *q = aptus_peer_ml(p);
    struct aptus_f_revoke f = { .m = { APTUS_F_RR_REVOKE, 0, r->ctx, r->comm->rank, r->tag, 0, 0 },
                                .rreq = (uint64_t)(uintptr_t)r,
                                .rrno = q->rr_sent };
    if (!r->rr)
        rl_add(r);
    r->rr |= APTUS_RR_REVOKE;
    q->revoking++;
    aptus_send_ctrl(p, &f, sizeof f);
    return 0;
}

/* ---- the sender ------------------------------------------------------------------------------ */

static void on_rr(struct aptus_peer *from, const void *frame, size_t len)
{
    const struct aptus_f_rr *f = frame;
    struct aptus_sendq *q = aptus_peer_ml(from);
    struct aptus_rr *e = NULL;
    if (customized && f->rseq == from->send_seq && f->rfinless == q->finless_sent &&
        (int32_t)(f->rrno - q->drop_upto) > 0)
        e = malloc(sizeof *e);
    if (!e) {
        aptus_pstat(from, APTUS_PS_RR_STALE);
        return;
    }
    *e = (struct aptus_rr){ NULL,    f->ctx,  f->chan, f->finless, f->sentinel, f->tag,
                            f->skip, f->rreq, f->addr, f->key,     f->len };
    struct aptus_rr **pp = &q->rr_head;
    while (*pp)
        pp = &(*pp)->next;
    *pp = e;
    from->rr = 1;
}

struct aptus_rr *aptus_rr_consume(struct aptus_peer *p, uint16_t ctx, int tag)
{
    struct aptus_sendq *q = p->sq;
    struct aptus_rr *hit = NULL;
    for (struct aptus_rr **pp = &q->rr_head; *pp;) {
        struct aptus_rr *e = *pp;
        if (e->ctx == ctx && e->tag == tag) {
            if (e->skip == 0) {
                *pp = e->next;
                if (hit) { /* (cannot happen: two for one place) */
                    aptus_pstat(p, APTUS_PS_RR_UNUSED);
                    free(e);
                } else {
                    hit = e;
                }
                continue;
            }
            e->skip--;
        }
        pp = &e->next;
    }
    p->rr = q->rr_head != NULL;
    return hit;
}

void aptus_rr_uncount(struct aptus_peer *p, uint16_t ctx, int tag)
{
    if (!p->sq)
        return;
    for (struct aptus_rr *e = p->sq->rr_head; e; e = e->next)
        if (e->ctx == ctx && e->tag == tag)
            e->skip++;
}

/* A frame of the matched sequence that is not matched (WRITTEN, RR_REVOKED): sent in its turn. */
static void seq_frame_out(struct aptus_peer *p, int chan, const void *hdr, size_t len)
{
    if (aptus_frame_out(p, chan, hdr, len, NULL, NULL, 0, NULL) == APTUS_ERR && !p->failed)
        aptus_abort_job(MPI_ERR_NO_MEM, "out of memory for a control frame");
}

struct rr_op {
    struct aptus_completion comp;
    struct aptus_request *s;
    struct aptus_peer *p;
    int chan;
    int written_at_end; /* WRITTEN goes out when the write is in place */
    struct aptus_f_written w;
};

static void rr_op_done(struct aptus_completion *comp)
{
    struct rr_op *op = (struct rr_op *)comp;
    if (comp->status != APTUS_OK)
        op->s->st_error = MPI_ERR_OTHER; /* the channel has said why (and failed the peer) */
    else if (op->written_at_end)
        seq_frame_out(op->p, op->chan, &op->w, sizeof op->w);
    aptus_req_done(op->s);
    free(op);
}

struct rr_target {
    uint64_t addr, key, note;
    int notify;
};

static int rr_put_op(struct aptus_ep *ep, struct iovec *iov, int k, size_t off, int last, void *arg,
                     struct aptus_completion *comp)
{
    const struct rr_target *t = arg;
    return last && t->notify ? ep->ch->put_notify(ep, iov, k, t->addr + off, t->key, t->note, comp)
                             : ep->ch->put(ep, iov, k, t->addr + off, t->key, comp);
}

/* Waits for the operations counted in c (a channel that places at completion completes at
 * once as a rule: smp). */
static int settle_comp(struct aptus_completion *c, int rc)
{
    if (rc != APTUS_INPROGRESS)
        return rc;
    aptus_completion_done(c, APTUS_OK); /* the initiator's count */
    while (c->count > 0)
        aptus_progress();
    return c->status == APTUS_OK ? APTUS_OK : APTUS_ERR;
}

/* Without FIN: all but the last byte, then the last byte (`last`) by a later put, so that it
 * lands last. 0 when all is in place, -1 when the last byte was not written (the message then
 * goes the usual way, which overwrites whatever the first puts left). */
static int write_finless(struct aptus_ep *ep, struct aptus_request *r, const struct aptus_rr *e, uint8_t last)
{
    size_t n = r->bytes;
    struct rr_target t = { e->addr, e->key, 0, 0 };
    struct aptus_completion c = { NULL, 1, APTUS_OK };
    int rc = aptus_rndv_issue_pieces(ep, r, n - 1, rr_put_op, &t, &c,
                                     "a one-sided write into a receiver's buffer failed part way");
    if (settle_comp(&c, rc) != APTUS_OK)
        return -1;
    struct iovec v = { &last, 1 };
    c = (struct aptus_completion){ NULL, 1, APTUS_OK };
    rc = ep->ch->put(ep, &v, 1, e->addr + n - 1, e->key, &c);
    if (rc == APTUS_INPROGRESS)
        c.count++;
    return settle_comp(&c, rc) == APTUS_OK ? 0 : -1;
}

/* The last byte of r's message. */
static uint8_t last_byte(const struct aptus_request *r)
{
    if (!r->nc)
        return ((const uint8_t *)r->buf)[r->bytes - 1];
    struct aptus_dt_cursor cur;
    uint8_t b = 0;
    aptus_dt_cursor_init(&cur, r->buf, r->count, r->dt);
    aptus_dt_cursor_seek(&cur, r->bytes - 1);
    aptus_dt_pack_some(&cur, &b, 1);
    return b;
}

int aptus_rr_send(struct aptus_request *r, struct aptus_peer *p, int proto, struct aptus_rr *e)
{
    size_t n = r->bytes;
    struct aptus_ep *ep = proto != APTUS_PROTO_EAGER && n && n <= e->len ? aptus_peer_ep(p, e->chan) : NULL;
    const struct aptus_channel *ch = ep ? ep->ch : NULL;
    int noted = ch && !(ch->caps.flags & APTUS_CAP_REMOTE_FLUSH);
    if (!ch || !ch->put || (noted && !ch->put_notify)) {
        aptus_pstat(p, APTUS_PS_RR_UNUSED);
        free(e);
        return -1;
    }
    /* A receiver watching its last byte gets a write without FIN whenever the message fills
     * its buffer (a WRITTEN after the byte changed would come for a completed receive); the
     * same byte as before cannot be seen, so that message says WRITTEN. */
    uint8_t last = 0;
    if (!noted && e->finless && n == e->len && (last = last_byte(r)) != e->sentinel) {
        int rc = write_finless(ep, r, e, last);
        if (rc == 0) {
            p->sq->finless_sent++;
            aptus_pstat(p, APTUS_PS_RECV_RNDV);
            aptus_pstat(p, APTUS_PS_FIN_ELIM);
            r->rr |= APTUS_RR_USED;
            free(e);
            aptus_req_done(r);
            return 0;
        }
        /* the last byte is as it was: the receiver still waits for a message */
        aptus_pstat(p, APTUS_PS_RR_UNUSED);
        free(e);
        return -1;
    }
    struct rr_op *op = malloc(sizeof *op);
    if (!op) {
        aptus_pstat(p, APTUS_PS_RR_UNUSED);
        free(e);
        return -1;
    }
    *op = (struct rr_op){ .comp = { rr_op_done, 1, APTUS_OK }, .s = r, .p = p, .chan = e->chan };
    op->w = (struct aptus_f_written){ .m = { APTUS_F_WRITTEN, 0, r->ctx, r->comm->rank, r->tag, p->send_seq, n },
                                      .rreq = e->rreq,
                                      .noted = (uint8_t)noted };
    struct rr_target t = { e->addr, e->key, e->rreq, noted };
    free(e);
    int rc = aptus_rndv_issue_pieces(ep, r, n, rr_put_op, &t, &op->comp,
                                     "a one-sided write into a receiver's buffer failed part way");
    if (rc == APTUS_ERR) {
        free(op);
        aptus_pstat(p, APTUS_PS_RR_UNUSED);
        return -1;
    }
    p->send_seq++;
    aptus_pstat(p, APTUS_PS_RECV_RNDV);
    r->rr |= APTUS_RR_USED;
    /* WRITTEN now when the channel tells the receiver of the write itself (the note) or the
     * write is in place already; else once it is */
    if (noted || rc == APTUS_OK)
        seq_frame_out(p, op->chan, &op->w, sizeof op->w);
    else
        op->written_at_end = 1;
    aptus_completion_done(&op->comp, APTUS_OK); /* drop the initiator's count */
    return 0;
}

int aptus_hybrid_send(struct aptus_request *r, struct aptus_peer *p, int chan)
{
    const struct aptus_channel *ch = aptus_channels[chan];
    if (!customized || (r->mode != APTUS_MODE_STANDARD && r->mode != APTUS_MODE_READY) || r->bsend_piece ||
        (r->rr & (APTUS_RR_HYBRID | APTUS_RR_NO_HYBRID)) || !r->bytes || !ch->get ||
        !(ch->caps.flags & APTUS_CAP_GET) || p->world_rank == aptus_rt.rank)
        return -1;
    void *piece = piece_get(r->bytes);
    if (!piece)
        return -1;
    struct aptus_request *m = aptus_req_new(APTUS_REQ_SEND);
    if (!m) {
        aptus_hybrid_release(piece);
        return -1;
    }
    if (r->nc) {
        struct aptus_dt_cursor cur;
        aptus_dt_cursor_init(&cur, r->buf, r->count, r->dt);
        aptus_dt_pack_some(&cur, piece, r->bytes);
    } else {
        memcpy(piece, r->buf, r->bytes);
    }
    m->buf = piece;
    m->bytes = r->bytes;
    m->peer = r->peer;
    m->tag = r->tag;
    m->comm = r->comm;
    m->ctx = r->ctx;
    m->mode = APTUS_MODE_STANDARD;
    m->rr = APTUS_RR_HYBRID;
    m->bsend_piece = piece;
    m->sseq = r->sseq;
    m->complete = 0;
    if (aptus_rndv_send(m, p, chan, APTUS_PROTO_RNDV_READ) != 0) {
        m->bsend_piece = NULL;
        aptus_hybrid_release(piece);
        aptus_req_free(m);
        return -1;
    }
    /* the copy lives until the receiver has read it (FIN), or the message is cancelled */
    if (m->complete)
        aptus_req_free(m);
    else
        m->free_on_complete = 1;
    aptus_pstat(p, APTUS_PS_HYBRID);
    aptus_req_done(r);
    return 0;
}

/* ---- the receiver: WRITTEN, the note, RR_REVOKED ------------------------------------------- */

static void written_done(struct aptus_request *r)
{
    settle(r);
    aptus_ml.rndv_write++;
    aptus_req_done(r);
}

void aptus_rr_noted(struct aptus_request *r)
{
    if (r->rr & APTUS_RR_WRITTEN)
        written_done(r);
    else
        r->rr |= APTUS_RR_NOTE_IN;
}

static void on_written(struct aptus_peer *from, const struct aptus_f_written *w)
{
    struct aptus_request *r = (struct aptus_request *)(uintptr_t)w->rreq;
    aptus_posted_remove(r);
    aptus_set_envelope(r, w->m.src, w->m.tag, w->m.len);
    if (w->noted && !(r->rr & APTUS_RR_NOTE_IN)) {
        if (r->rr & APTUS_RR_WATCH) {
            watch(-1);
            r->rr &= (uint8_t)~APTUS_RR_WATCH;
        }
        r->rr |= APTUS_RR_WRITTEN; /* the data is in place when the note comes */
        return;
    }
    written_done(r);
}

static void on_revoked(struct aptus_peer *from, const struct aptus_f_revoke *f)
{
    aptus_peer_ml(from)->revoking--;
    for (int i = 0; i < rl.n;) {
        struct aptus_request *r = rl.v[i];
        if (peer_of(r) != from || r->ctx != f->m.ctx || r->tag != f->m.tag ||
            (r->rr & (APTUS_RR_WRITTEN | APTUS_RR_NOTE_IN))) {
            i++;
            continue;
        }
        if ((r->rr & APTUS_RR_WATCH) && r->posted && byte_written(r)) {
            finless_done(r);
            continue;
        }
        /* its RR is gone: a plain posted receive now, or, if cancelled (by this revocation or
         * a later one on the same envelope: no RR was sent in between), cancelled now */
        int cancel = r->rr & APTUS_RR_REVOKE;
        settle(r);
        if (cancel)
            aptus_recv_cancelled(r);
    }
}

void aptus_rr_seq_frame(struct aptus_peer *from, const struct aptus_f_msg *m, const char *frame)
{
    if (m->type == APTUS_F_WRITTEN)
        on_written(from, (const struct aptus_f_written *)frame);
    else
        on_revoked(from, (const struct aptus_f_revoke *)frame);
}

/* The sender: drop every RR of (ctx, tag), and those on their way, then answer in sequence. */
static void on_revoke(struct aptus_peer *from, const void *frame, size_t len)
{
    const struct aptus_f_revoke *f = frame;
    struct aptus_sendq *q = aptus_peer_ml(from);
    for (struct aptus_rr **pp = &q->rr_head; *pp;) {
        struct aptus_rr *e = *pp;
        if (e->ctx == f->m.ctx && e->tag == f->m.tag) {
            *pp = e->next;
            aptus_pstat(from, APTUS_PS_RR_UNUSED);
            free(e);
            continue;
        }
        pp = &e->next;
    }
    from->rr = q->rr_head != NULL;
    if ((int32_t)(f->rrno - q->drop_upto) > 0)
        q->drop_upto = f->rrno;
    struct aptus_f_revoke a = { .m = { APTUS_F_RR_REVOKED, 0, f->m.ctx, 0, f->m.tag, from->send_seq, 0 },
                                .rreq = f->rreq };
    int chan = aptus_route_pick(from->route, sizeof a);
    if (chan < 0)
        aptus_abort_job(MPI_ERR_OTHER, "no channel for a control frame");
    from->send_seq++;
    seq_frame_out(from, chan, &a, sizeof a);
}

/* ---- set-up, statistics ---------------------------------------------------------------------- */

void aptus_rndv_cust_init(void)
{
    customized = !strcmp(aptus_config.rndv_mode, "customized");
    aptus_am_register(APTUS_F_RR, on_rr);
    aptus_am_register(APTUS_F_RR_REVOKE, on_revoke);
    rl.poller = aptus_poller_add("rr-watch", watch_poll, 0);
}

void aptus_rndv_cust_setup(void)
{
    aptus_rr_floor = SIZE_MAX;
    if (!customized)
        return;
    for (int c = 0; c < APTUS_CH_COUNT; c++) {
        const struct aptus_channel *ch = aptus_channels[c];
        if (!ch || !ch->caps.rr_min || !ch->put)
            continue;
        size_t lo = ch->caps.rr_min > ch->caps.eager_max ? ch->caps.rr_min : ch->caps.eager_max + 1;
        if (lo < aptus_rr_floor)
            aptus_rr_floor = lo;
    }
}

void aptus_rndv_cust_peer_free(struct aptus_peer *p)
{
    if (!p->sq)
        return;
    while (p->sq->rr_head) {
        struct aptus_rr *e = p->sq->rr_head;
        p->sq->rr_head = e->next;
        free(e);
    }
    p->rr = 0;
}

void aptus_rndv_cust_finalize(void)
{
    if (rl.watching)
        aptus_progress_hold_awake(-1);
    free(rl.v);
    int poller = rl.poller;
    memset(&rl, 0, sizeof rl);
    rl.poller = poller;
    pool_finalize();
}

void aptus_pt2pt_proto_stats_print(void)
{
    for (int w = 0; w < aptus_rt.nprocs && aptus_rt.peers; w++) {
        const struct aptus_peer *p = aptus_rt.peers[w];
        if (!p || !p->stats)
            continue;
        const uint64_t *s = p->stats->proto;
        uint64_t all = 0;
        for (int c = 0; c < APTUS_CH_COUNT; c++)
            all += p->stats->msgs[c];
        uint64_t rndv = s[APTUS_PS_HYBRID] + s[APTUS_PS_SEND_RNDV] + s[APTUS_PS_RECV_RNDV];
        if (!all && !s[APTUS_PS_RR_SENT] && !s[APTUS_PS_RR_STALE])
            continue;
        printf("[aptus stats] rank %d: protocols to %d: eager %llu, hybrid %llu, send-rndv %llu, recv-rndv %llu (FIN "
               "eliminated %llu); receiver-ready sent %llu, from it stale %llu, not used %llu\n",
               aptus_rt.rank, w, (unsigned long long)(all > rndv ? all - rndv : 0),
               (unsigned long long)s[APTUS_PS_HYBRID], (unsigned long long)s[APTUS_PS_SEND_RNDV],
               (unsigned long long)s[APTUS_PS_RECV_RNDV], (unsigned long long)s[APTUS_PS_FIN_ELIM],
               (unsigned long long)s[APTUS_PS_RR_SENT], (unsigned long long)s[APTUS_PS_RR_STALE],
               (unsigned long long)s[APTUS_PS_RR_UNUSED]);
    }
}

const char aptus_pt2pt_counter_names[] = "pt2pt.hybrid, pt2pt.send_rndv, pt2pt.recv_rndv, pt2pt.fin_eliminated, "
                                         "pt2pt.rr_sent, pt2pt.rr_stale, pt2pt.rr_unused, pt2pt.posted, "
                                         "pt2pt.posted_hwm, pt2pt.unexpected, pt2pt.unexpected_hwm";

int aptus_pt2pt_counter(const char *name, uint64_t *value)
{
    static const char *const names[APTUS_PS_COUNT] = { "pt2pt.hybrid",         "pt2pt.send_rndv", "pt2pt.recv_rndv",
                                                       "pt2pt.fin_eliminated", "pt2pt.rr_sent",   "pt2pt.rr_stale",
                                                       "pt2pt.rr_unused" };
    for (int i = 0; i < APTUS_PS_COUNT; i++)
        if (!strcmp(name, names[i])) {
            *value = aptus_ml.pstat[i];
            return 0;
        }
    /* the matching queues' lengths and the most they held (match.c) */
    if (!strcmp(name, "pt2pt.posted"))
        *value = aptus_mt.pall;
    else if (!strcmp(name, "pt2pt.posted_hwm"))
        *value = aptus_mt.pall > aptus_mt.phwm ? aptus_mt.pall : aptus_mt.phwm;
    else if (!strcmp(name, "pt2pt.unexpected"))
        *value = aptus_mt.ucount;
    else if (!strcmp(name, "pt2pt.unexpected_hwm"))
        *value = aptus_mt.uhwm;
    else
        return -1;
    return 0;
}
