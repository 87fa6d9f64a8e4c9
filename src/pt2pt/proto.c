/* The protocol selector and the send entry points. Like the channel, the protocol is chosen
 * once per route size range (when the route is built, from the channel's capabilities) and
 * found per message by the same short scan:
 *   up to min(eager_max, frame room)             eager
 *   then, on a channel with one-sided get:
 *     below get_busy_min                         rendezvous, streamed copy
 *     from get_busy_min, below get_min           rendezvous, read when the receiver is busy
 *     from get_min                               rendezvous, read
 *   on a channel that writes rendezvous messages  rendezvous, written by the sender
 *   on a channel without get                     rendezvous, streamed copy */
#include <string.h>

#include "pt2pt/mlayer.h"
#include "runtime/progress.h"

struct piece {
    uint64_t lo, hi;
    uint8_t proto;
};

/* The protocol pieces of [lo, hi] on channel ch (at most 4). */
static int pieces(const struct aptus_channel *ch, uint64_t lo, uint64_t hi, struct piece out[4])
{
    const struct aptus_chan_caps *c = &ch->caps;
    uint64_t room = c->frame_max > APTUS_EAGER_HEADER_MAX ? c->frame_max - APTUS_EAGER_HEADER_MAX : 0;
    uint64_t eager = c->eager_max < room ? c->eager_max : room;
    uint64_t get = c->get_min > eager ? c->get_min : eager + 1;
    uint64_t get_busy = c->get_busy_min > eager ? c->get_busy_min : eager + 1;
    if (get_busy > get)
        get_busy = get;
    int has_get = (c->flags & APTUS_CAP_GET) && ch->get;
    if ((c->flags & APTUS_CAP_RNDV_WRITE) && ch->put_notify) {
        int n = 0;
        if (lo <= eager)
            out[n++] = (struct piece){ lo, eager < hi ? eager : hi, APTUS_PROTO_EAGER };
        if (hi > eager)
            out[n++] = (struct piece){ lo > eager ? lo : eager + 1, hi, APTUS_PROTO_RNDV_WRITE };
        return n;
    }
    struct piece all[4] = {
        { 0, eager, APTUS_PROTO_EAGER },
        { eager + 1, has_get ? get_busy - 1 : UINT64_MAX, APTUS_PROTO_RNDV_COPY },
        { get_busy, get - 1, APTUS_PROTO_RNDV_READ_BUSY },
        { get, UINT64_MAX, APTUS_PROTO_RNDV_READ },
    };
    int n = 0;
    for (int i = 0; i < (has_get ? 4 : 2); i++) {
        uint64_t a = all[i].lo > lo ? all[i].lo : lo, b = all[i].hi < hi ? all[i].hi : hi;
        if (a <= b && all[i].lo <= all[i].hi)
            out[n++] = (struct piece){ a, b, all[i].proto };
    }
    return n;
}

static void refine(struct aptus_route *route)
{
    struct aptus_route in = *route;
    route->n = 0;
    for (unsigned i = 0; i < in.n; i++) {
        struct piece p[4];
        int k = pieces(aptus_channels[in.channel[i]], in.size_min[i], in.size_max[i], p);
        for (int j = 0; j < k && route->n < APTUS_ROUTE_MAX; j++) {
            route->channel[route->n] = in.channel[i];
            route->proto[route->n] = p[j].proto;
            route->size_min[route->n] = p[j].lo;
            route->size_max[route->n] = p[j].hi;
            route->n++;
        }
    }
}

/* The matched frames carry the messages (for the statistics of a channel that sends a frame
 * another way than the route said: channel.h). */
static int frame_message(const void *hdr, uint64_t *bytes)
{
    uint8_t type = *(const uint8_t *)hdr;
    if (type != APTUS_F_EAGER && type != APTUS_F_EAGER_SYNC && type != APTUS_F_RTS)
        return 0;
    struct aptus_f_msg m; /* (the headers of these frames start with it) */
    memcpy(&m, hdr, sizeof m);
    *bytes = m.len;
    return 1;
}

void aptus_proto_init(void)
{
    aptus_route_refine_set(refine);
    aptus_frame_message = frame_message;
}

/* The rest of a send that is not a plain eager one: a rendezvous message, or a peer holding
 * RECEIVER_READYs. */
static __attribute__((noinline)) int send_slow(struct aptus_request *r, struct aptus_peer *p, int i)
{
    /* A rendezvous message: first look for a RECEIVER_READY that has arrived (seed 004's Isend
     * checks the control messages first), unless this runs inside a progress pass -- or carries
     * a buffered send, whose user's request has recorded the sequence number already. */
    if (p->route->proto[i] != APTUS_PROTO_EAGER && aptus_rr_floor != SIZE_MAX && !aptus_progress_depth &&
        !r->bsend_piece) {
        aptus_progress();
        if (p->failed)
            return MPI_ERR_PROC_ABORTED;
        if ((i = aptus_route_find(p->route, r->bytes)) < 0) /* (the route may have changed) */
            return MPI_ERR_OTHER;
        r->sseq = p->send_seq;
    }
    int chan = p->route->channel[i], proto = p->route->proto[i];
    if (p->rr) {
        /* a receiver told where this message goes (RECV_RNDV) */
        struct aptus_rr *e = aptus_rr_consume(p, r->ctx, r->tag);
        if (e && aptus_rr_send(r, p, proto, e) == 0)
            return r->st_error;
    }
    if (proto == APTUS_PROTO_EAGER)
        return aptus_eager_send(r, p, chan);
    if (r->bytes <= aptus_channels[chan]->caps.hybrid_max && aptus_hybrid_send(r, p, chan) == 0)
        return 0;
    /* SEND_RNDV: the sender came first and may be computing -- the receiver moves the data
     * alone, by a one-sided read, wherever the channel lets the customized protocols copy
     * one-sidedly at this size (not a streamed copy that needs both sides) */
    const struct aptus_channel *ch = aptus_channels[chan];
    if ((proto == APTUS_PROTO_RNDV_COPY || proto == APTUS_PROTO_RNDV_READ_BUSY) && aptus_rr_floor != SIZE_MAX &&
        ch->caps.rr_min && r->bytes >= ch->caps.rr_min && (ch->caps.flags & APTUS_CAP_GET) && ch->get)
        proto = APTUS_PROTO_RNDV_READ;
    aptus_pstat(p, APTUS_PS_SEND_RNDV);
    return aptus_rndv_send(r, p, chan, proto);
}

int aptus_send_start(struct aptus_request *r)
{
    struct aptus_peer *p = aptus_peer_get(aptus_comm_peer_world(r->comm, r->peer));
    if (!p)
        return MPI_ERR_NO_MEM;
    if (p->failed)
        return MPI_ERR_PROC_ABORTED;
    int i = aptus_route_find(p->route, r->bytes);
    if (i < 0)
        return MPI_ERR_OTHER;
    int chan = p->route->channel[i], proto = p->route->proto[i];
    aptus_peer_count(p, chan, r->bytes);
    aptus_alloc_note(p, r->bytes);
    r->complete = 0;
    r->sseq = p->send_seq;
    if (__builtin_expect(proto == APTUS_PROTO_EAGER && !p->rr, 1))
        return aptus_eager_send(r, p, chan);
    return send_slow(r, p, i);
}

int aptus_send_eager_try(const void *buf, size_t bytes, int dst, int tag, struct aptus_comm *c, uint16_t ctx)
{
    struct aptus_peer *p = aptus_peer_get(aptus_comm_peer_world(c, dst));
    if (!p)
        return 0;
    int i = aptus_route_find(p->route, bytes);
    if (i < 0 || p->route->proto[i] != APTUS_PROTO_EAGER || p->send_slow)
        return 0;
    int chan = p->route->channel[i];
    struct aptus_ep *ep = aptus_peer_ep(p, chan);
    struct aptus_f_msg h = { APTUS_F_EAGER, 0, ctx, c->rank, tag, p->send_seq, bytes };
    if (!ep || ep->ch->send_frame(ep, &h, sizeof h, buf, bytes) != APTUS_OK)
        return 0;
    p->send_seq++;
    aptus_peer_count(p, chan, bytes);
    aptus_alloc_note(p, bytes);
    return 1;
}

int aptus_send_now(const void *buf, size_t bytes, int dst, int tag, struct aptus_comm *c, uint16_t ctx, int mode)
{
    if ((mode == APTUS_MODE_STANDARD || mode == APTUS_MODE_READY) && aptus_send_eager_try(buf, bytes, dst, tag, c, ctx))
        return 0;
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
    if (rc == 0)
        rc = r->st_error;
    aptus_req_free(r);
    return rc;
}
