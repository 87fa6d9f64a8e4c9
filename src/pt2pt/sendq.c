/* The per-peer send queue: frames that found no room wait here, in order, with the streams of
 * the rendezvous by copy; a poller of the progress engine pushes them while any wait. */
#include <stdlib.h>

#include "core/errors.h"
#include "pt2pt/mlayer.h"

static int sendq_flush(void);

void aptus_sendq_init(void)
{
    aptus_ml.sendq_poller = aptus_poller_add("sendq", sendq_flush, 0);
}

struct aptus_sendq *aptus_peer_ml(struct aptus_peer *p)
{
    if (!p->sq && !(p->sq = calloc(1, sizeof *p->sq)))
        aptus_abort_job(MPI_ERR_NO_MEM, "out of memory for a peer's message-layer state");
    return p->sq;
}

static void enqueue(struct aptus_peer *p, struct aptus_pending *e)
{
    struct aptus_sendq *q = aptus_peer_ml(p);
    e->next = NULL;
    if (q->tail)
        q->tail->next = e;
    else
        q->head = e;
    q->tail = e;
    if (!p->queued) {
        p->queued = 1;
        q->next_peer = aptus_ml.queued_peers;
        if (!aptus_ml.queued_peers) {
            aptus_poller_enable(aptus_ml.sendq_poller, 1);
            aptus_progress_hold_awake(1); /* the receiver does not wake us when room frees */
        }
        aptus_ml.queued_peers = p;
    }
}

/* The endpoint for a frame of `bytes` on channel *chan. A channel that reaches the peer no longer
 * (its connection closed while idle, after the frame or the rendezvous naming it was made) is
 * replaced by the route's channel for that size now, in *chan: frames carry their message's
 * sequence number, data frames their offset, so the channel they take changes nothing at the
 * receiver. NULL: none for now (no room, or a failed peer). */
static struct aptus_ep *ep_now(struct aptus_peer *p, int *chan, size_t bytes)
{
    struct aptus_ep *ep = aptus_peer_ep(p, *chan);
    if (ep || p->failed || aptus_channels[*chan]->reaches(p->world_rank))
        return ep;
    int c = aptus_route_pick(p->route, bytes);
    if (c < 0 || c == *chan || !(ep = aptus_peer_ep(p, c)) || bytes > ep->ch->caps.frame_max)
        return NULL;
    *chan = c;
    return ep;
}

int aptus_frame_out(struct aptus_peer *p, int chan, const void *hdr, size_t hdrlen, const void *payload,
                    struct aptus_dt_cursor *cur, size_t len, struct aptus_request *req)
{
    if (!p->queued) {
        struct aptus_ep *ep = ep_now(p, &chan, hdrlen + len);
        if (!ep)
            return APTUS_ERR;
        int rc = aptus_chan_send(ep, hdr, hdrlen, payload, cur, len);
        if (rc == APTUS_OK)
            return APTUS_OK;
        if (rc != APTUS_NORES)
            return APTUS_ERR;
    }
    struct aptus_pending *e = calloc(1, sizeof *e);
    if (!e)
        return APTUS_ERR;
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
    enqueue(p, e);
    return APTUS_INPROGRESS;
}

void aptus_send_ctrl(struct aptus_peer *p, const void *hdr, size_t hdrlen)
{
    int chan = aptus_route_pick(p->route, hdrlen);
    /* A lost control frame would leave the peer waiting forever: fail loudly instead. */
    if (chan < 0 || aptus_frame_out(p, chan, hdr, hdrlen, NULL, NULL, 0, NULL) == APTUS_ERR) {
        if (!p->failed)
            aptus_abort_job(MPI_ERR_NO_MEM, "out of memory for a control frame");
    }
}

/* Pushes a streamed message; returns 1 when all of it is out. */
static int stream_push(struct aptus_peer *p, struct aptus_pending *e)
{
    struct aptus_ep *ep = ep_now(p, &e->chan, sizeof(struct aptus_f_data) + 1);
    if (!ep)
        return 0;
    const struct aptus_chan_caps *caps = &ep->ch->caps;
    size_t room = caps->frame_max - sizeof(struct aptus_f_data);
    size_t chunk = caps->chunk && caps->chunk < room ? caps->chunk : room;
    while (e->off < e->len) {
        size_t n = e->len - e->off < chunk ? e->len - e->off : chunk;
        struct aptus_f_data d = { .type = APTUS_F_DATA, .len = (uint32_t)n, .rreq = e->rreq, .offset = e->off };
        if (aptus_chan_send(ep, &d, sizeof d, e->payload + e->off, e->nc ? &e->cur : NULL, n) != APTUS_OK)
            return 0;
        e->off += n;
    }
    return 1;
}

void aptus_stream_start(struct aptus_peer *p, int chan, struct aptus_request *s, uint64_t rreq, size_t len)
{
    struct aptus_pending *e = calloc(1, sizeof *e);
    if (!e)
        aptus_abort_job(MPI_ERR_NO_MEM, "out of memory for a rendezvous");
    e->chan = chan;
    e->stream = 1;
    e->rreq = rreq;
    e->payload = s->buf;
    e->len = len;
    e->req = s;
    if (s->nc) {
        e->nc = 1;
        aptus_dt_cursor_init(&e->cur, s->buf, s->count, s->dt);
    }
    if (!p->queued && stream_push(p, e)) {
        aptus_req_done(s);
        free(e);
    } else {
        enqueue(p, e);
    }
}

static int flush_peer(struct aptus_peer *p)
{
    struct aptus_sendq *q = p->sq;
    int sent = 0;
    while (q->head) {
        struct aptus_pending *e = q->head;
        if (e->stream) {
            if (!stream_push(p, e))
                break;
        } else {
            struct aptus_ep *ep = ep_now(p, &e->chan, e->hdrlen + e->len);
            if (!ep || aptus_chan_send(ep, e->hdr, e->hdrlen, e->payload, e->nc ? &e->cur : NULL, e->len) != APTUS_OK)
                break;
        }
        q->head = e->next;
        if (!q->head)
            q->tail = NULL;
        if (e->req)
            aptus_req_done(e->req);
        free(e);
        sent++;
    }
    return sent;
}

static void unqueue_done(void)
{
    if (!aptus_ml.queued_peers) {
        aptus_poller_enable(aptus_ml.sendq_poller, 0);
        aptus_progress_hold_awake(-1);
    }
}

static int sendq_flush(void)
{
    int sent = 0;
    struct aptus_peer **pp = &aptus_ml.queued_peers;
    while (*pp) {
        struct aptus_peer *p = *pp;
        sent += flush_peer(p);
        /* A channel may deliver inside a send (self; a held frame released by the fault layer),
         * and the handlers may queue frames to a peer that was not queued: pushed at the head,
         * so p's link may have moved. Unlinking through a stale link would drop that peer from
         * the list while it stays marked queued, and its frames would never go. */
        if (*pp != p)
            for (pp = &aptus_ml.queued_peers; *pp != p;)
                pp = &(*pp)->sq->next_peer;
        if (!p->sq->head) {
            p->queued = 0;
            *pp = p->sq->next_peer;
        } else {
            pp = &p->sq->next_peer;
        }
    }
    unqueue_done();
    return sent;
}

void aptus_sendq_drop(struct aptus_peer *p, int err)
{
    if (!p->sq)
        return;
    while (p->sq->head) {
        struct aptus_pending *e = p->sq->head;
        p->sq->head = e->next;
        if (e->req) {
            e->req->st_error = err;
            aptus_req_done(e->req);
        }
        free(e);
    }
    p->sq->tail = NULL;
    if (p->queued) {
        for (struct aptus_peer **pp = &aptus_ml.queued_peers; *pp; pp = &(*pp)->sq->next_peer)
            if (*pp == p) {
                *pp = p->sq->next_peer;
                break;
            }
        p->queued = 0;
        unqueue_done();
    }
}
