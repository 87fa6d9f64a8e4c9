/* Rendezvous by streamed copy: the receiver answers CTS with the bytes it can hold; the sender
 * streams them in DATA frames of the channel's chunk size, packed straight from a
 * non-contiguous buffer, and the receiver unpacks each where its offset says (frames may come
 * in any order on a channel that does not keep it). */
#include "pt2pt/mlayer.h"

void aptus_rndv_copy_request(struct aptus_request *r, struct aptus_peer *from, const struct aptus_unexp *rts, size_t n)
{
    aptus_ml.rndv_copy++;
    r->expect = n;
    r->recvd = 0;
    if (r->nc)
        aptus_dt_cursor_init(&r->cur, r->buf, r->count, r->dt);
    struct aptus_f_cts c = {
        .type = APTUS_F_CTS, .chan = rts->chan, .sreq = rts->sreq, .rreq = (uint64_t)(uintptr_t)r, .len = n
    };
    if (n)
        aptus_req_wait_remote(r, from->world_rank);
    aptus_send_ctrl(from, &c, sizeof c);
    if (n == 0)
        aptus_req_done(r);
}

static void on_cts(struct aptus_peer *from, const void *frame, size_t len)
{
    const struct aptus_f_cts *c = frame;
    struct aptus_request *s = (struct aptus_request *)(uintptr_t)c->sreq;
    if (c->len == 0) {
        aptus_req_done(s);
        return;
    }
    if (c->write) {
        aptus_rndv_write(from, s, c);
        return;
    }
    aptus_stream_start(from, c->chan, s, c->rreq, (size_t)c->len);
}

static void on_data(struct aptus_peer *from, const void *frame, size_t len)
{
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
    if (r->recvd == r->expect) {
        aptus_rndv_release(r); /* a write the sender streamed instead */
        aptus_req_done(r);
    }
}

void aptus_rndv_copy_init(void)
{
    aptus_am_register(APTUS_F_CTS, on_cts);
    aptus_am_register(APTUS_F_DATA, on_data);
}
