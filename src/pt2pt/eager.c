/* Eager protocol: header and payload in one frame; the synchronous form is answered by
 * SYNC_ACK when the message matches. */
#include "pt2pt/mlayer.h"

int aptus_eager_send(struct aptus_request *r, struct aptus_peer *p, int chan)
{
    struct aptus_dt_cursor cur, *cp = NULL;
    if (r->nc) {
        aptus_dt_cursor_init(&cur, r->buf, r->count, r->dt);
        cp = &cur;
    }
    int rc;
    if (r->mode == APTUS_MODE_SYNC) {
        struct aptus_f_sync h = { { APTUS_F_EAGER_SYNC, 0, r->ctx, r->comm->rank, r->tag, p->send_seq, r->bytes },
                                  (uint64_t)(uintptr_t)r };
        /* Completes on SYNC_ACK; if queued, the payload stays valid: the request waits for it. */
        rc = aptus_frame_out(p, chan, &h, sizeof h, r->buf, cp, r->bytes, NULL);
        if (rc != APTUS_ERR) {
            p->send_seq++;
            aptus_req_wait_remote(r, p->world_rank);
        }
    } else {
        struct aptus_f_msg h = { APTUS_F_EAGER, 0, r->ctx, r->comm->rank, r->tag, p->send_seq, r->bytes };
        rc = aptus_frame_out(p, chan, &h, sizeof h, r->buf, cp, r->bytes, r);
        if (rc != APTUS_ERR)
            p->send_seq++;
        if (rc == APTUS_OK)
            aptus_req_done(r);
    }
    return rc == APTUS_ERR ? (p->failed ? MPI_ERR_PROC_ABORTED : MPI_ERR_NO_MEM) : 0;
}

void aptus_eager_deliver_slow(struct aptus_request *r, struct aptus_peer *from, const struct aptus_f_msg *m,
                              const void *payload, uint64_t sreq)
{
    size_t n = aptus_set_envelope(r, m->src, m->tag, m->len);
    if (r->nc) {
        aptus_dt_cursor_init(&r->cur, r->buf, r->count, r->dt);
        aptus_dt_unpack_some(&r->cur, payload, n);
    } else {
        aptus_copy_payload(r->buf, payload, n);
    }
    if (m->type == APTUS_F_EAGER_SYNC) {
        struct aptus_f_ctrl c = { .type = APTUS_F_SYNC_ACK, .sreq = sreq };
        aptus_send_ctrl(from, &c, sizeof c);
    }
    aptus_req_done(r);
}

static void on_sync_ack(struct aptus_peer *from, const void *frame, size_t len)
{
    aptus_req_done((struct aptus_request *)(uintptr_t)((const struct aptus_f_ctrl *)frame)->sreq);
}

void aptus_eager_init(void)
{
    aptus_am_register(APTUS_F_SYNC_ACK, on_sync_ack);
}
