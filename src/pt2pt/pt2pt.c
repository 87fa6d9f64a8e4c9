/* Matching and protocols of the message layer. */
#include "pt2pt/pt2pt.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "channel/channel.h"
#include "core/errors.h"
#include "pt2pt/wire.h"
#include "runtime/config.h"
#include "runtime/runtime.h"

/* A message that arrived before its receive was posted. */
struct aptus_unexp {
    struct aptus_unexp *next, *prev;
    struct aptus_peer *from;
    uint8_t type;
    uint16_t ctx;
    int src, tag;
    uint64_t len;
    uint64_t sreq, addr;
    struct aptus_comm *comm; /* set when taken by a matched probe */
    char data[];             /* eager payload */
};

/* A frame waiting for room on its channel, or a streamed message being sent piece by piece. */
struct aptus_pending {
    struct aptus_pending *next;
    int chan;
    size_t hdrlen;
    _Alignas(8) char hdr[48];
    const char *payload;
    size_t len;
    struct aptus_request *req; /* completes once the frame (or stream) is out */
    /* stream */
    int stream;
    uint64_t rreq;
    size_t off;
    /* non-contiguous payload: packed from this cursor instead of read at `payload` */
    int nc;
    struct aptus_dt_cursor cur;
};

static struct {
    struct aptus_request *posted_head, *posted_tail;
    struct aptus_unexp *unexp_head, *unexp_tail;
    struct aptus_peer *pend_peers;
    struct aptus_request *free_reqs;
    uint64_t rndv_cma, rndv_copy; /* rendezvous receives by protocol */
    int rndv_out;                 /* rendezvous sends in flight from this rank */
    int npollers;
    int (*pollers[APTUS_CH_COUNT])(void); /* progress functions of the channels in use */
    struct bg_task {
        int (*poll)(void *);
        void *arg;
    } * bg; /* background tasks */
    int nbg, bg_cap;
    int in_bg; /* running the background tasks (no re-entry) */
} mq;

void aptus_pt2pt_init(void)
{
    memset(&mq, 0, sizeof mq);
    for (int c = 0; c < APTUS_CH_COUNT; c++)
        if (aptus_channels[c] && aptus_channels[c]->progress)
            mq.pollers[mq.npollers++] = aptus_channels[c]->progress;
}

void aptus_pt2pt_finalize(void)
{
    while (mq.free_reqs) {
        struct aptus_request *r = mq.free_reqs;
        mq.free_reqs = r->next;
        free(r);
    }
    while (mq.unexp_head) {
        struct aptus_unexp *u = mq.unexp_head;
        mq.unexp_head = u->next;
        free(u);
    }
    free(mq.bg);
    mq.bg = NULL;
    mq.nbg = mq.bg_cap = 0;
}

int aptus_bg_add(int (*poll)(void *arg), void *arg)
{
    if (mq.nbg == mq.bg_cap) {
        int cap = mq.bg_cap ? 2 * mq.bg_cap : 8;
        struct bg_task *t = realloc(mq.bg, (size_t)cap * sizeof *t);
        if (!t)
            return MPI_ERR_NO_MEM;
        mq.bg = t;
        mq.bg_cap = cap;
    }
    mq.bg[mq.nbg++] = (struct bg_task){ poll, arg };
    return 0;
}

static int bg_run(void)
{
    int done = 0;
    mq.in_bg = 1;
    for (int i = 0; i < mq.nbg;) {
        if (mq.bg[i].poll(mq.bg[i].arg)) {
            mq.bg[i] = mq.bg[--mq.nbg];
            done++;
        } else {
            i++;
        }
    }
    mq.in_bg = 0;
    return done;
}

/* ---------------- requests ---------------- */

struct aptus_request *aptus_req_new(int kind)
{
    struct aptus_request *r = mq.free_reqs;
    if (r)
        mq.free_reqs = r->next;
    else if (!(r = malloc(sizeof *r)))
        return NULL;
    memset(r, 0, sizeof *r);
    r->magic = APTUS_MAGIC_REQ;
    r->kind = (uint8_t)kind;
    return r;
}

struct aptus_request *aptus_req_new_nomsg(int kind)
{
    struct aptus_request *r = aptus_req_new(kind);
    if (r) {
        r->peer = MPI_ANY_SOURCE;
        r->st_source = MPI_ANY_SOURCE;
        r->st_tag = MPI_ANY_TAG;
    }
    return r;
}

void aptus_req_free(struct aptus_request *r)
{
    if (r->nc)
        aptus_dtype_release((struct aptus_dtype *)r->dt);
    r->magic = 0;
    r->next = mq.free_reqs;
    mq.free_reqs = r;
}

static void req_complete(struct aptus_request *r)
{
    if (r->rndv_out) {
        r->rndv_out = 0;
        mq.rndv_out--;
    }
    if (r->bsend_piece) {
        aptus_bsend_release(r->bsend_piece);
        r->bsend_piece = NULL;
    }
    r->complete = 1;
    if (r->free_on_complete)
        aptus_req_free(r);
}

void aptus_req_complete(struct aptus_request *r)
{
    req_complete(r);
}

void aptus_status_set_bytes(MPI_Status *st, size_t bytes)
{
    st->MPI_internal[0] = (int)(uint32_t)(bytes & 0xffffffffu);
    st->MPI_internal[1] = (int)(uint32_t)((uint64_t)bytes >> 32);
}

size_t aptus_status_bytes(const MPI_Status *st)
{
    return (size_t)(uint32_t)st->MPI_internal[0] | ((size_t)(uint32_t)st->MPI_internal[1] << 32);
}

void aptus_status_fill(MPI_Status *st, const struct aptus_request *r)
{
    if (st == MPI_STATUS_IGNORE)
        return;
    st->MPI_SOURCE = r->st_source;
    st->MPI_TAG = r->st_tag;
    aptus_status_set_bytes(st, r->st_bytes);
    st->MPI_internal[2] = r->cancelled;
}

void aptus_status_empty(MPI_Status *st)
{
    if (st == MPI_STATUS_IGNORE)
        return;
    st->MPI_SOURCE = MPI_ANY_SOURCE;
    st->MPI_TAG = MPI_ANY_TAG;
    st->MPI_ERROR = MPI_SUCCESS;
    aptus_status_set_bytes(st, 0);
    st->MPI_internal[2] = 0;
}

/* ---------------- sending frames ---------------- */

static void pend_enqueue(struct aptus_peer *p, struct aptus_pending *e)
{
    e->next = NULL;
    if (p->pend_tail)
        p->pend_tail->next = e;
    else
        p->pend_head = e;
    p->pend_tail = e;
    if (!p->in_pend_list) {
        p->in_pend_list = 1;
        p->pend_next = mq.pend_peers;
        mq.pend_peers = p;
    }
}

/* Hands one frame to a channel: payload bytes, or (cur != NULL) len bytes packed from a cursor. */
static inline int chan_send(struct aptus_peer *p, int chan, const void *hdr, size_t hdrlen, const void *payload,
                            struct aptus_dt_cursor *cur, size_t len)
{
    const struct aptus_channel *ch = aptus_channels[chan];
    return cur ? ch->send_frame_packed(p, hdr, hdrlen, cur, len) : ch->send_frame(p, hdr, hdrlen, payload, len);
}

/* Sends a frame now if nothing is queued before it and there is room; else queues it. The
 * payload must stay valid until req completes (req == NULL: payload must be NULL or copied). */
static int frame_out(struct aptus_peer *p, int chan, const void *hdr, size_t hdrlen, const void *payload,
                     struct aptus_dt_cursor *cur, size_t len, struct aptus_request *req)
{
    if (!p->pend_head && chan_send(p, chan, hdr, hdrlen, payload, cur, len) == 0)
        return 0;
    struct aptus_pending *e = calloc(1, sizeof *e);
    if (!e)
        return MPI_ERR_NO_MEM;
    e->chan = chan;
    e->hdrlen = hdrlen;
    memcpy(e->hdr, hdr, hdrlen);
    e->payload = payload;
    e->len = len;
    e->req = req;
    if (cur) {
        e->nc = 1;
        e->cur = *cur;
    }
    pend_enqueue(p, e);
    return 1;
}

static int ctrl_chan(struct aptus_peer *p)
{
    return aptus_route_pick(&p->route, sizeof(struct aptus_f_ctrl));
}

static void send_ctrl(struct aptus_peer *p, int type, uint64_t sreq, uint64_t rreq, uint64_t len)
{
    struct aptus_f_ctrl c = { .type = (uint8_t)type, .sreq = sreq, .rreq = rreq, .len = len };
    /* A lost control frame would leave the peer waiting forever: fail loudly instead. */
    if (frame_out(p, ctrl_chan(p), &c, sizeof c, NULL, NULL, 0, NULL) > 1)
        aptus_abort_job(MPI_ERR_NO_MEM, "out of memory for a control frame");
}

/* Pushes a streamed message; returns 1 when all of it is out. */
static int stream_push(struct aptus_peer *p, struct aptus_pending *e)
{
    const struct aptus_channel *ch = aptus_channels[e->chan];
    size_t room = ch->max_frame(p) - sizeof(struct aptus_f_data);
    size_t chunk = aptus_config.smp_chunk < room ? aptus_config.smp_chunk : room;
    while (e->off < e->len) {
        size_t n = e->len - e->off < chunk ? e->len - e->off : chunk;
        struct aptus_f_data d = { .type = APTUS_F_DATA, .len = (uint32_t)n, .rreq = e->rreq, .offset = e->off };
        if (chan_send(p, e->chan, &d, sizeof d, e->payload + e->off, e->nc ? &e->cur : NULL, n) != 0)
            return 0;
        e->off += n;
    }
    return 1;
}

static int pend_flush_peer(struct aptus_peer *p)
{
    int sent = 0;
    while (p->pend_head) {
        struct aptus_pending *e = p->pend_head;
        if (e->stream) {
            if (!stream_push(p, e))
                break;
        } else if (chan_send(p, e->chan, e->hdr, e->hdrlen, e->payload, e->nc ? &e->cur : NULL, e->len) != 0) {
            break;
        }
        p->pend_head = e->next;
        if (!p->pend_head)
            p->pend_tail = NULL;
        if (e->req)
            req_complete(e->req);
        free(e);
        sent++;
    }
    return sent;
}

static int pend_flush(void)
{
    int sent = 0;
    struct aptus_peer **pp = &mq.pend_peers;
    while (*pp) {
        struct aptus_peer *p = *pp;
        sent += pend_flush_peer(p);
        if (!p->pend_head) {
            p->in_pend_list = 0;
            *pp = p->pend_next;
        } else {
            pp = &p->pend_next;
        }
    }
    return sent;
}

int aptus_progress(void)
{
    int n = 0;
    for (int i = 0; i < mq.npollers; i++)
        n += mq.pollers[i]();
    if (mq.pend_peers)
        n += pend_flush();
    if (mq.nbg && !mq.in_bg)
        n += bg_run();
    return n;
}

void aptus_wait_step(unsigned *idle)
{
    if (aptus_progress() > 0) {
        *idle = 0;
        return;
    }
    if (++*idle > (unsigned)aptus_config.spin_count)
        sched_yield();
}

void aptus_wait(struct aptus_request *r)
{
    unsigned idle = 0;
    while (!r->complete)
        aptus_wait_step(&idle);
}

/* ---------------- send side ---------------- */

static inline size_t eager_limit(const struct aptus_peer *p, int chan)
{
    return p->eager_max[chan];
}

int aptus_send_start(struct aptus_request *r)
{
    int wdst = aptus_comm_peer_world(r->comm, r->peer);
    struct aptus_peer *p = aptus_peer_get(wdst);
    if (!p)
        return MPI_ERR_NO_MEM;
    int chan = aptus_route_pick(&p->route, r->bytes);
    if (chan < 0)
        return MPI_ERR_OTHER;
    p->msgs[chan]++;
    p->bytes[chan] += r->bytes;
    r->complete = 0;

    if (r->bytes <= eager_limit(p, chan)) {
        struct aptus_dt_cursor cur, *cp = NULL;
        if (r->nc) {
            aptus_dt_cursor_init(&cur, r->buf, r->count, r->dt);
            cp = &cur;
        }
        if (r->mode == APTUS_MODE_SYNC) {
            struct aptus_f_sync h = { { APTUS_F_EAGER_SYNC, 0, r->ctx, r->comm->rank, r->tag, 0, r->bytes },
                                      (uint64_t)(uintptr_t)r };
            /* Completes on SYNC_ACK; the frame itself needs no completion. */
            /* If queued, the payload stays valid: the request waits for the ack. */
            int rc = frame_out(p, chan, &h, sizeof h, r->buf, cp, r->bytes, NULL);
            return rc > 1 ? rc : 0;
        }
        struct aptus_f_msg h = { APTUS_F_EAGER, 0, r->ctx, r->comm->rank, r->tag, 0, r->bytes };
        int rc = frame_out(p, chan, &h, sizeof h, r->buf, cp, r->bytes, r);
        if (rc == 0)
            req_complete(r);
        return rc > 1 ? rc : 0;
    }
    /* A non-contiguous sender offers no address: the receiver then asks for a streamed copy,
     * which packs straight into the frames. */
    struct aptus_f_rts h = { { APTUS_F_RTS, 0, r->ctx, r->comm->rank, r->tag, 0, r->bytes },
                             (uint64_t)(uintptr_t)r,
                             r->nc ? 0 : (uint64_t)(uintptr_t)r->buf };
    r->rndv_out = 1;
    mq.rndv_out++;
    int rc = frame_out(p, chan, &h, sizeof h, NULL, NULL, 0, NULL);
    return rc > 1 ? rc : 0;
}

int aptus_send_now(const void *buf, size_t bytes, int dst, int tag, struct aptus_comm *c, uint16_t ctx, int mode)
{
    if (mode == APTUS_MODE_STANDARD || mode == APTUS_MODE_READY) {
        struct aptus_peer *p = aptus_peer_get(aptus_comm_peer_world(c, dst));
        if (!p)
            return MPI_ERR_NO_MEM;
        int chan = aptus_route_pick(&p->route, bytes);
        if (chan >= 0 && !p->pend_head && bytes <= eager_limit(p, chan)) {
            struct aptus_f_msg h = { APTUS_F_EAGER, 0, ctx, c->rank, tag, 0, bytes };
            if (aptus_channels[chan]->send_frame(p, &h, sizeof h, buf, bytes) == 0) {
                p->msgs[chan]++;
                p->bytes[chan] += bytes;
                return 0;
            }
        }
    }
    struct aptus_request *r = aptus_req_new(APTUS_REQ_SEND);
    if (!r)
        return MPI_ERR_NO_MEM;
    r->buf = (void *)buf;
    r->bytes = bytes;
    r->peer = dst;
    r->tag = tag;
    r->comm = c;
    r->ctx = ctx;
    r->mode = (uint8_t)mode;
    int rc = aptus_send_start(r);
    if (rc == 0)
        aptus_wait(r);
    aptus_req_free(r);
    return rc;
}

/* ---------------- receive side ---------------- */

static inline int matches(const struct aptus_request *r, uint16_t ctx, int src, int tag)
{
    return r->ctx == ctx && (r->peer == src || r->peer == MPI_ANY_SOURCE) && (r->tag == tag || r->tag == MPI_ANY_TAG);
}

static void posted_remove(struct aptus_request *r)
{
    if (r->prev)
        r->prev->next = r->next;
    else
        mq.posted_head = r->next;
    if (r->next)
        r->next->prev = r->prev;
    else
        mq.posted_tail = r->prev;
    r->next = r->prev = NULL;
}

static void unexp_remove(struct aptus_unexp *u)
{
    if (u->prev)
        u->prev->next = u->next;
    else
        mq.unexp_head = u->next;
    if (u->next)
        u->next->prev = u->prev;
    else
        mq.unexp_tail = u->prev;
    u->next = u->prev = NULL;
}

static size_t set_envelope(struct aptus_request *r, int src, int tag, uint64_t len)
{
    r->st_source = src;
    r->st_tag = tag;
    r->msg_bytes = len;
    size_t n = len <= r->bytes ? (size_t)len : r->bytes;
    r->st_bytes = n;
    r->st_error = len > r->bytes ? MPI_ERR_TRUNCATE : MPI_SUCCESS;
    return n;
}

/* One-sided copy of n bytes at the sender's addr into the receive buffer (0, or -1 when the
 * channel cannot: then the caller asks for a streamed copy, which rewrites everything). */
static int read_one_sided(const struct aptus_channel *ch, struct aptus_peer *from, struct aptus_request *r,
                          uint64_t addr, size_t n)
{
    if (!r->nc)
        return ch->rdma_read(from, r->buf, addr, n);
    if (!ch->rdma_readv)
        return -1;
    struct iovec iov[256];
    struct aptus_dt_cursor cur;
    aptus_dt_cursor_init(&cur, r->buf, r->count, r->dt);
    for (size_t done = 0; done < n;) {
        size_t b;
        int k = aptus_dt_iov_some(&cur, iov, 256, n - done, &b);
        if (ch->rdma_readv(from, iov, k, addr + done, b) != 0)
            return -1;
        done += b;
    }
    return 0;
}

/* Receiver side of the rendezvous: one-sided read when the channel can (and the sender's
 * data is contiguous), else ask for a streamed copy. */
static void rndv_recv(struct aptus_request *r, struct aptus_peer *from, uint64_t len, uint64_t sreq, uint64_t addr)
{
    size_t n = r->st_bytes;
    int chan = aptus_route_pick(&from->route, len);
    const struct aptus_channel *ch = aptus_channels[chan];
    /* The one-sided copy costs this core one copy and the sender none; the streamed copy costs
     * each side one. So it is taken for very large messages, and whenever this rank is itself
     * busy sending a rendezvous message (both directions at once: half the copies per core). */
    int one_sided = ch->rdma_read && addr &&
                    (chan == APTUS_CH_SELF ||
                     (aptus_config.smp_cma &&
                      (len >= aptus_config.smp_cma_min || (mq.rndv_out > 0 && len >= aptus_config.smp_cma_busy_min))));
    if (one_sided && (n == 0 || read_one_sided(ch, from, r, addr, n) == 0)) {
        mq.rndv_cma++;
        send_ctrl(from, APTUS_F_FIN, sreq, 0, 0);
        req_complete(r);
        return;
    }
    mq.rndv_copy++;
    r->expect = n;
    r->recvd = 0;
    if (r->nc)
        aptus_dt_cursor_init(&r->cur, r->buf, r->count, r->dt);
    send_ctrl(from, APTUS_F_CTS, sreq, (uint64_t)(uintptr_t)r, n);
    if (n == 0)
        req_complete(r);
}

static void deliver_eager(struct aptus_request *r, struct aptus_peer *from, const struct aptus_f_msg *m,
                          const void *payload, uint64_t sreq)
{
    size_t n = set_envelope(r, m->src, m->tag, m->len);
    if (r->nc) {
        aptus_dt_cursor_init(&r->cur, r->buf, r->count, r->dt);
        aptus_dt_unpack_some(&r->cur, payload, n);
    } else if (n) {
        memcpy(r->buf, payload, n);
    }
    if (m->type == APTUS_F_EAGER_SYNC)
        send_ctrl(from, APTUS_F_SYNC_ACK, sreq, 0, 0);
    req_complete(r);
}

static void frame_message(struct aptus_peer *from, const struct aptus_f_msg *m, const char *frame, size_t len)
{
    uint64_t sreq = 0, addr = 0;
    size_t hl = sizeof(struct aptus_f_msg);
    if (m->type == APTUS_F_EAGER_SYNC) {
        sreq = ((const struct aptus_f_sync *)frame)->sreq;
        hl = sizeof(struct aptus_f_sync);
    } else if (m->type == APTUS_F_RTS) {
        sreq = ((const struct aptus_f_rts *)frame)->sreq;
        addr = ((const struct aptus_f_rts *)frame)->addr;
        hl = sizeof(struct aptus_f_rts);
    }
    for (struct aptus_request *r = mq.posted_head; r; r = r->next) {
        if (!matches(r, m->ctx, m->src, m->tag))
            continue;
        posted_remove(r);
        if (m->type == APTUS_F_RTS) {
            set_envelope(r, m->src, m->tag, m->len);
            rndv_recv(r, from, m->len, sreq, addr);
        } else {
            deliver_eager(r, from, m, frame + hl, sreq);
        }
        return;
    }
    size_t keep = m->type == APTUS_F_RTS ? 0 : (size_t)m->len;
    struct aptus_unexp *u = malloc(sizeof *u + keep);
    if (!u)
        aptus_abort_job(MPI_ERR_NO_MEM, "out of memory for an unexpected message");
    u->from = from;
    u->type = m->type;
    u->ctx = m->ctx;
    u->src = m->src;
    u->tag = m->tag;
    u->len = m->len;
    u->sreq = sreq;
    u->addr = addr;
    if (keep)
        memcpy(u->data, frame + hl, keep);
    u->next = NULL;
    u->prev = mq.unexp_tail;
    if (mq.unexp_tail)
        mq.unexp_tail->next = u;
    else
        mq.unexp_head = u;
    mq.unexp_tail = u;
}

void aptus_frame_arrived(struct aptus_peer *from, const void *frame, size_t len)
{
    const uint8_t type = *(const uint8_t *)frame;
    switch (type) {
    case APTUS_F_EAGER:
    case APTUS_F_EAGER_SYNC:
    case APTUS_F_RTS: frame_message(from, frame, frame, len); break;
    case APTUS_F_CTS: {
        const struct aptus_f_ctrl *c = frame;
        struct aptus_request *s = (struct aptus_request *)(uintptr_t)c->sreq;
        if (c->len == 0) {
            req_complete(s);
            break;
        }
        struct aptus_pending *e = calloc(1, sizeof *e);
        if (!e)
            aptus_abort_job(MPI_ERR_NO_MEM, "out of memory for a rendezvous");
        e->chan = aptus_route_pick(&from->route, s->bytes);
        e->stream = 1;
        e->rreq = c->rreq;
        e->payload = s->buf;
        e->len = c->len;
        e->req = s;
        if (s->nc) {
            e->nc = 1;
            aptus_dt_cursor_init(&e->cur, s->buf, s->count, s->dt);
        }
        if (!from->pend_head && stream_push(from, e)) {
            req_complete(s);
            free(e);
        } else {
            pend_enqueue(from, e);
        }
        break;
    }
    case APTUS_F_DATA: {
        const struct aptus_f_data *d = frame;
        struct aptus_request *r = (struct aptus_request *)(uintptr_t)d->rreq;
        size_t n = d->len;
        if (r->nc) {
            if (r->cur.pos != d->offset)
                aptus_dt_cursor_seek(&r->cur, d->offset);
            aptus_dt_unpack_some(&r->cur, (const char *)frame + sizeof *d, n);
        } else {
            memcpy((char *)r->buf + d->offset, (const char *)frame + sizeof *d, n);
        }
        r->recvd += n;
        if (r->recvd == r->expect)
            req_complete(r);
        break;
    }
    case APTUS_F_FIN:
    case APTUS_F_SYNC_ACK:
        req_complete((struct aptus_request *)(uintptr_t)((const struct aptus_f_ctrl *)frame)->sreq);
        break;
    default:
        fprintf(stderr, "Aptus MPI: rank %d: corrupt frame of type %u from rank %d\n", aptus_rt.rank, type,
                from->world_rank);
        aptus_abort_job(MPI_ERR_INTERN, "corrupt frame");
    }
}

static void deliver_unexp(struct aptus_request *r, struct aptus_unexp *u)
{
    if (u->type == APTUS_F_RTS) {
        set_envelope(r, u->src, u->tag, u->len);
        rndv_recv(r, u->from, u->len, u->sreq, u->addr);
    } else {
        struct aptus_f_msg m = { u->type, 0, u->ctx, u->src, u->tag, 0, u->len };
        deliver_eager(r, u->from, &m, u->data, u->sreq);
    }
    free(u);
}

int aptus_recv_start(struct aptus_request *r)
{
    r->complete = 0;
    r->cancelled = 0;
    for (struct aptus_unexp *u = mq.unexp_head; u; u = u->next) {
        if (matches(r, u->ctx, u->src, u->tag)) {
            unexp_remove(u);
            deliver_unexp(r, u);
            return 0;
        }
    }
    r->next = NULL;
    r->prev = mq.posted_tail;
    if (mq.posted_tail)
        mq.posted_tail->next = r;
    else
        mq.posted_head = r;
    mq.posted_tail = r;
    return 0;
}

int aptus_recv_cancel(struct aptus_request *r)
{
    for (struct aptus_request *q = mq.posted_head; q; q = q->next) {
        if (q == r) {
            posted_remove(r);
            r->cancelled = 1;
            r->st_source = MPI_ANY_SOURCE;
            r->st_tag = MPI_ANY_TAG;
            r->st_bytes = 0;
            r->st_error = MPI_SUCCESS;
            req_complete(r);
            return 1;
        }
    }
    return 0;
}

int aptus_probe_test(int src, int tag, struct aptus_comm *c, uint16_t ctx, MPI_Status *st, int take,
                     struct aptus_unexp **msg)
{
    struct aptus_request probe = { .peer = src, .tag = tag, .ctx = ctx };
    for (struct aptus_unexp *u = mq.unexp_head; u; u = u->next) {
        if (!matches(&probe, u->ctx, u->src, u->tag))
            continue;
        if (st != MPI_STATUS_IGNORE) {
            st->MPI_SOURCE = u->src;
            st->MPI_TAG = u->tag;
            aptus_status_set_bytes(st, (size_t)u->len);
            st->MPI_internal[2] = 0;
        }
        if (take) {
            unexp_remove(u);
            u->comm = c;
            *msg = u;
        }
        return 1;
    }
    return 0;
}

void aptus_recv_taken(struct aptus_request *r, struct aptus_unexp *msg)
{
    r->complete = 0;
    r->comm = msg->comm;
    deliver_unexp(r, msg);
}

void aptus_pt2pt_rndv_counts(uint64_t *one_sided, uint64_t *copied)
{
    *one_sided = mq.rndv_cma;
    *copied = mq.rndv_copy;
}
