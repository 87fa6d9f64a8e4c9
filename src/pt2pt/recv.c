/* Arrival of the frames that are matched (EAGER, EAGER_SYNC, RTS), in per-peer sequence order;
 * receives, probes and cancellation. */
#include <stdlib.h>

#include "core/errors.h"
#include "pt2pt/mlayer.h"

/* A frame that arrived ahead of its turn (a channel without order, or several channels). */
struct aptus_early {
    struct aptus_early *next;
    uint32_t seq;
    size_t len;
    _Alignas(16) char frame[];
};

/* An RTS or message header in the form the queues keep (payload not copied). */
static void describe(struct aptus_unexp *u, struct aptus_peer *from, const struct aptus_f_msg *m, const char *frame)
{
    u->from = from;
    u->type = m->type;
    u->ctx = m->ctx;
    u->src = m->src;
    u->tag = m->tag;
    u->seq = m->seq;
    u->len = m->len;
    u->sreq = u->addr = u->key = 0;
    u->chan = u->proto = u->readable = 0;
    u->comm = NULL;
    if (m->type == APTUS_F_EAGER_SYNC) {
        u->sreq = ((const struct aptus_f_sync *)frame)->sreq;
    } else if (m->type == APTUS_F_RTS) {
        const struct aptus_f_rts *t = (const struct aptus_f_rts *)frame;
        u->sreq = t->sreq;
        u->addr = t->addr;
        u->key = t->key;
        u->chan = t->chan;
        u->proto = t->proto;
        u->readable = t->readable;
    }
}

static size_t header_len(uint8_t type)
{
    return type == APTUS_F_EAGER_SYNC ? sizeof(struct aptus_f_sync)
           : type == APTUS_F_RTS      ? sizeof(struct aptus_f_rts)
                                      : sizeof(struct aptus_f_msg);
}

static void deliver(struct aptus_request *r, const struct aptus_unexp *u, const void *payload)
{
    if (u->type == APTUS_F_RTS) {
        aptus_set_envelope(r, u->src, u->tag, u->len);
        aptus_rndv_matched(r, u->from, u);
    } else {
        struct aptus_f_msg m = { u->type, 0, u->ctx, u->src, u->tag, 0, u->len };
        aptus_eager_deliver(r, u->from, &m, payload, u->sreq);
    }
}

/* A matched frame that no posted receive wants (yet), or one that is not plain eager. */
static __attribute__((noinline)) void message_slow(struct aptus_peer *from, const struct aptus_f_msg *m,
                                                   const char *frame, struct aptus_request *r)
{
    size_t hl = header_len(m->type);
    int wr = m->type == APTUS_F_RTS && ((const struct aptus_f_rts *)frame)->proto == APTUS_PROTO_RNDV_WRITE;
    while (r && r->rr && aptus_rr_matched(r, wr && ((const struct aptus_f_rts *)frame)->chan == r->memch))
        r = aptus_posted_take(m->ctx, m->src, m->tag); /* r had been written: the next one */
    if (r) {
        struct aptus_unexp u;
        describe(&u, from, m, frame);
        deliver(r, &u, frame + hl);
        return;
    }
    size_t keep = m->type == APTUS_F_RTS ? 0 : (size_t)m->len;
    struct aptus_unexp *u = malloc(sizeof *u + keep);
    if (!u)
        aptus_abort_job(MPI_ERR_NO_MEM, "out of memory for an unexpected message");
    describe(u, from, m, frame);
    if (keep)
        memcpy(u->data, frame + hl, keep);
    aptus_unexp_add(u);
}

static inline void message(struct aptus_peer *from, const struct aptus_f_msg *m, const char *frame)
{
    struct aptus_request *r = aptus_posted_take(m->ctx, m->src, m->tag);
    if (__builtin_expect(r && m->type == APTUS_F_EAGER && !r->rr, 1))
        aptus_eager_deliver(r, from, m, frame + sizeof(struct aptus_f_msg), 0);
    else
        message_slow(from, m, frame, r);
}

static void stash(struct aptus_peer *from, const struct aptus_f_msg *m, size_t len)
{
    struct aptus_early *e = malloc(sizeof *e + len);
    if (!e)
        aptus_abort_job(MPI_ERR_NO_MEM, "out of memory for a frame that arrived early");
    e->seq = m->seq;
    e->len = len;
    memcpy(e->frame, m, len);
    struct aptus_early **pp = &from->early;
    while (*pp && (int32_t)((*pp)->seq - m->seq) < 0)
        pp = &(*pp)->next;
    e->next = *pp;
    *pp = e;
}

/* A frame of the matched sequence that is not matched itself (WRITTEN, RR_REVOKED), or one that is. */
static void process(struct aptus_peer *from, const struct aptus_f_msg *m, const char *frame)
{
    if (m->type == APTUS_F_WRITTEN || m->type == APTUS_F_RR_REVOKED)
        aptus_rr_seq_frame(from, m, frame);
    else
        message(from, m, frame);
}

/* A frame of the matched sequence arriving: handled in its turn (ctrl: one of those that are
 * not matched), with those that had come early and follow it. */
static inline __attribute__((always_inline)) void arrive(struct aptus_peer *from, const void *frame, size_t len,
                                                         int ctrl)
{
    const struct aptus_f_msg *m = frame;
    aptus_alloc_note(from, m->len);
    if (__builtin_expect(m->seq != from->recv_seq, 0)) {
        stash(from, m, len);
        return;
    }
    from->recv_seq++;
    if (ctrl)
        aptus_rr_seq_frame(from, m, frame);
    else
        message(from, m, frame);
    while (from->early && from->early->seq == from->recv_seq) {
        struct aptus_early *e = from->early;
        from->early = e->next;
        from->recv_seq++;
        process(from, (const struct aptus_f_msg *)e->frame, e->frame);
        free(e);
    }
}

static void on_message(struct aptus_peer *from, const void *frame, size_t len)
{
    arrive(from, frame, len, 0);
}

static void on_seq_ctrl(struct aptus_peer *from, const void *frame, size_t len)
{
    arrive(from, frame, len, 1);
}

void aptus_recv_init(void)
{
    aptus_am_register(APTUS_F_EAGER, on_message);
    aptus_am_register(APTUS_F_EAGER_SYNC, on_message);
    aptus_am_register(APTUS_F_RTS, on_message);
    aptus_am_register(APTUS_F_WRITTEN, on_seq_ctrl);
    aptus_am_register(APTUS_F_RR_REVOKED, on_seq_ctrl);
}

void aptus_recv_peer_free(struct aptus_peer *p)
{
    while (p->early) {
        struct aptus_early *e = p->early;
        p->early = e->next;
        free(e);
    }
}

/* A receive from a failed peer (after its messages that had arrived): it could never match. */
static int recv_from_failed(struct aptus_request *r)
{
    if (r->peer < 0 || !r->comm)
        return 0;
    struct aptus_peer *p = aptus_rt.peers[aptus_comm_peer_world(r->comm, r->peer)];
    if (!p || !p->failed)
        return 0;
    r->st_source = r->peer;
    r->st_tag = r->tag;
    r->st_bytes = 0;
    r->st_error = MPI_ERR_PROC_ABORTED;
    aptus_req_done(r);
    return 1;
}

int aptus_recv_start(struct aptus_request *r)
{
    r->complete = 0;
    r->cancelled = 0;
    struct aptus_unexp *u;
    if (__builtin_expect(aptus_peers_failed == 0, 1)) {
        u = aptus_unexp_take_or_post(r);
    } else {
        u = aptus_unexp_find(r->ctx, r->peer, r->tag);
        if (u)
            aptus_unexp_remove(u);
        else if (!recv_from_failed(r))
            aptus_posted_add(r);
    }
    if (u) {
        deliver(r, u, u->data);
        free(u);
    } else if (__builtin_expect(r->bytes >= aptus_rr_floor, 0) && r->posted) {
        aptus_rr_post(r);
    }
    return 0;
}

int aptus_recv_cancel(struct aptus_request *r)
{
    if (__builtin_expect(r->rr != 0, 0) || (r->posted && aptus_rr_cancel_needs_revoke(r)))
        return aptus_rr_recv_cancel(r);
    return aptus_recv_cancelled(r);
}

int aptus_recv_cancelled(struct aptus_request *r)
{
    if (!aptus_posted_remove(r))
        return 0;
    r->cancelled = 1;
    r->st_source = MPI_ANY_SOURCE;
    r->st_tag = MPI_ANY_TAG;
    r->st_bytes = 0;
    r->st_error = MPI_SUCCESS;
    aptus_req_done(r);
    return 1;
}

int aptus_probe_test(int src, int tag, struct aptus_comm *c, uint16_t ctx, MPI_Status *st, int take,
                     struct aptus_unexp **msg)
{
    struct aptus_unexp *u = aptus_unexp_find(ctx, src, tag);
    if (!u)
        return 0;
    if (st != MPI_STATUS_IGNORE) {
        st->MPI_SOURCE = u->src;
        st->MPI_TAG = u->tag;
        aptus_status_set_bytes(st, (size_t)u->len);
        st->MPI_internal[2] = 0;
    }
    if (take) {
        aptus_unexp_remove(u);
        u->comm = c;
        *msg = u;
    }
    return 1;
}

void aptus_recv_taken(struct aptus_request *r, struct aptus_unexp *msg)
{
    r->complete = 0;
    r->comm = msg->comm;
    deliver(r, msg, msg->data);
    free(msg);
}
