/* One-sided rendezvous.
 * Read: the receiver gets the sender's contiguous buffer straight into its own (an iovec list
 * when the receive type is not contiguous), then answers FIN. The get may complete at once or
 * later, through a completion.
 * Write: the receiver registers its contiguous buffer and sends CTS with its address and key;
 * the sender writes its buffer there (an iovec list when the send type is not contiguous) with
 * put_notify, whose note -- the receive request -- completes the receive at the target. The
 * receive also completes from DATA frames: a sender that cannot write streams instead. */
#include <stdlib.h>

#include "core/errors.h"
#include "pt2pt/mlayer.h"

#define READ_IOV 256

struct read_op {
    struct aptus_completion comp;
    struct aptus_request *r;
    struct aptus_peer *from;
    uint64_t sreq;
};

static void read_finish(struct aptus_request *r, struct aptus_peer *from, uint64_t sreq)
{
    aptus_ml.rndv_read++;
    struct aptus_f_ctrl c = { .type = APTUS_F_FIN, .sreq = sreq };
    aptus_send_ctrl(from, &c, sizeof c);
    aptus_req_done(r);
}

static void read_done(struct aptus_completion *comp)
{
    struct read_op *op = (struct read_op *)comp;
    if (comp->status != APTUS_OK) {
        /* The data could not be read after all: the sender still holds it; fail the receive
         * rather than leave it waiting (the channel has said why). */
        op->r->st_error = MPI_ERR_OTHER;
    }
    read_finish(op->r, op->from, op->sreq);
    free(op);
}

/* Issues the gets for n bytes; returns APTUS_OK (all done), APTUS_INPROGRESS (op->comp counts
 * those outstanding) or APTUS_ERR (nothing was read). */
static int issue(struct aptus_ep *ep, struct aptus_request *r, uint64_t addr, uint64_t key, size_t n,
                 struct read_op *op)
{
    int pending = 0;
    if (!r->nc) {
        struct iovec v = { r->buf, n };
        int rc = ep->ch->get(ep, &v, 1, addr, key, &op->comp);
        return rc == APTUS_INPROGRESS ? (op->comp.count++, APTUS_INPROGRESS) : rc;
    }
    struct iovec iov[READ_IOV];
    struct aptus_dt_cursor cur;
    aptus_dt_cursor_init(&cur, r->buf, r->count, r->dt);
    for (size_t done = 0; done < n;) {
        size_t b;
        int k = aptus_dt_iov_some(&cur, iov, READ_IOV < ep->ch->caps.iov_max ? READ_IOV : ep->ch->caps.iov_max,
                                  n - done, &b);
        int rc = ep->ch->get(ep, iov, k, addr + done, key, &op->comp);
        if (rc == APTUS_INPROGRESS) {
            op->comp.count++;
            pending = 1;
        } else if (rc != APTUS_OK) {
            if (done == 0 && !pending)
                return APTUS_ERR;
            aptus_abort_job(MPI_ERR_OTHER, "a one-sided read of a rendezvous message failed part way");
        }
        done += b;
    }
    return pending ? APTUS_INPROGRESS : APTUS_OK;
}

int aptus_rndv_read(struct aptus_request *r, struct aptus_peer *from, const struct aptus_unexp *rts, size_t n)
{
    struct aptus_ep *ep = aptus_peer_ep(from, rts->chan);
    if (!ep || !ep->ch->get || !(ep->ch->caps.flags & APTUS_CAP_GET))
        return -1;
    if (n == 0) {
        read_finish(r, from, rts->sreq);
        return 0;
    }
    struct read_op *op = malloc(sizeof *op);
    if (!op)
        return -1;
    *op = (struct read_op){ { read_done, 1, APTUS_OK }, r, from, rts->sreq };
    int rc = issue(ep, r, rts->addr, rts->key, n, op);
    if (rc == APTUS_ERR) {
        free(op);
        return -1;
    }
    if (rc == APTUS_OK) {
        free(op);
        read_finish(r, from, rts->sreq);
        return 0;
    }
    aptus_req_wait_remote(r, from->world_rank);
    aptus_completion_done(&op->comp, APTUS_OK); /* drop the initiator's count */
    return 0;
}

/* ---- write ------------------------------------------------------------------------------ */

int aptus_rndv_write_request(struct aptus_request *r, struct aptus_peer *from, const struct aptus_unexp *rts, size_t n)
{
    struct aptus_ep *ep = aptus_peer_ep(from, rts->chan);
    if (r->nc || n == 0 || !ep || !ep->ch->put_notify)
        return -1;
    uint64_t raddr = (uint64_t)(uintptr_t)r->buf, rkey = 0;
    if (ep->ch->caps.flags & APTUS_CAP_NEEDS_REG) {
        if (ep->ch->mem_reg(r->buf, n, &r->memh, &raddr, &rkey) != APTUS_OK) {
            r->memh = NULL;
            return -1;
        }
        r->memch = rts->chan;
    }
    r->expect = n;
    r->recvd = 0;
    struct aptus_f_cts c = { .type = APTUS_F_CTS,
                             .chan = rts->chan,
                             .write = 1,
                             .sreq = rts->sreq,
                             .rreq = (uint64_t)(uintptr_t)r,
                             .len = n,
                             .addr = raddr,
                             .key = rkey };
    aptus_req_wait_remote(r, from->world_rank);
    aptus_send_ctrl(from, &c, sizeof c);
    return 0;
}

/* The write's note at the receiver: its data is in place. */
static void on_note(uint64_t note)
{
    struct aptus_request *r = (struct aptus_request *)(uintptr_t)note;
    aptus_ml.rndv_write++;
    aptus_rndv_release(r);
    aptus_req_done(r);
}

struct write_op {
    struct aptus_completion comp;
    struct aptus_request *s;
};

static void write_done(struct aptus_completion *comp)
{
    struct write_op *op = (struct write_op *)comp;
    if (comp->status != APTUS_OK)
        op->s->st_error = MPI_ERR_OTHER; /* the channel has said why (and failed the peer) */
    aptus_req_done(op->s);
    free(op);
}

/* Issues the puts of n bytes of s, the last with the note; as issue() above. */
static int write_issue(struct aptus_ep *ep, struct aptus_request *s, const struct aptus_f_cts *c, size_t n,
                       struct write_op *op)
{
    if (!s->nc) {
        struct iovec v = { s->buf, n };
        int rc = ep->ch->put_notify(ep, &v, 1, c->addr, c->key, c->rreq, &op->comp);
        return rc == APTUS_INPROGRESS ? (op->comp.count++, APTUS_INPROGRESS) : rc;
    }
    struct iovec iov[READ_IOV];
    struct aptus_dt_cursor cur;
    int pending = 0;
    aptus_dt_cursor_init(&cur, s->buf, s->count, s->dt);
    for (size_t done = 0; done < n;) {
        size_t b;
        int k = aptus_dt_iov_some(&cur, iov, READ_IOV < ep->ch->caps.iov_max ? READ_IOV : ep->ch->caps.iov_max,
                                  n - done, &b);
        int rc = done + b < n ? ep->ch->put(ep, iov, k, c->addr + done, c->key, &op->comp)
                              : ep->ch->put_notify(ep, iov, k, c->addr + done, c->key, c->rreq, &op->comp);
        if (rc == APTUS_INPROGRESS) {
            op->comp.count++;
            pending = 1;
        } else if (rc != APTUS_OK) {
            if (done == 0 && !pending)
                return APTUS_ERR;
            aptus_abort_job(MPI_ERR_OTHER, "a one-sided write of a rendezvous message failed part way");
        }
        done += b;
    }
    return pending ? APTUS_INPROGRESS : APTUS_OK;
}

void aptus_rndv_write(struct aptus_peer *to, struct aptus_request *s, const struct aptus_f_cts *c)
{
    size_t n = (size_t)c->len;
    struct aptus_ep *ep = aptus_peer_ep(to, c->chan);
    struct write_op *op = ep && ep->ch->put_notify && (!s->nc || ep->ch->put) ? malloc(sizeof *op) : NULL;
    if (!op) {
        aptus_stream_start(to, c->chan, s, c->rreq, n); /* the receive completes from DATA too */
        return;
    }
    *op = (struct write_op){ { write_done, 1, APTUS_OK }, s };
    if (write_issue(ep, s, c, n, op) == APTUS_ERR) {
        free(op);
        aptus_stream_start(to, c->chan, s, c->rreq, n);
        return;
    }
    aptus_completion_done(&op->comp, APTUS_OK); /* drop the initiator's count */
}

void aptus_rndv_write_init(void)
{
    aptus_rdma_note_handler_set(on_note);
}
