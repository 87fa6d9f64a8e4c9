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

/* (lists of at most the channel's iov_max runs) */
int aptus_rndv_issue_pieces(struct aptus_ep *ep, struct aptus_request *r, size_t n, aptus_piece_op op, void *arg,
                            struct aptus_completion *comp, const char *what)
{
    if (!r->nc) {
        struct iovec v = { r->buf, n };
        int rc = op(ep, &v, 1, 0, 1, arg, comp);
        return rc == APTUS_INPROGRESS ? (comp->count++, APTUS_INPROGRESS) : rc;
    }
    struct iovec iov[READ_IOV];
    struct aptus_dt_cursor cur;
    int pending = 0;
    aptus_dt_cursor_init(&cur, r->buf, r->count, r->dt);
    for (size_t done = 0; done < n;) {
        size_t b;
        int k = aptus_dt_iov_some(&cur, iov, READ_IOV < ep->ch->caps.iov_max ? READ_IOV : ep->ch->caps.iov_max,
                                  n - done, &b);
        int rc = op(ep, iov, k, done, done + b == n, arg, comp);
        if (rc == APTUS_INPROGRESS) {
            comp->count++;
            pending = 1;
        } else if (rc != APTUS_OK) {
            if (done == 0 && !pending)
                return APTUS_ERR;
            aptus_abort_job(MPI_ERR_OTHER, what);
        }
        done += b;
    }
    return pending ? APTUS_INPROGRESS : APTUS_OK;
}

struct remote {
    uint64_t addr, key;
};

static int get_op(struct aptus_ep *ep, struct iovec *iov, int k, size_t off, int last, void *arg,
                  struct aptus_completion *comp)
{
    (void)last;
    const struct remote *rm = arg;
    return ep->ch->get(ep, iov, k, rm->addr + off, rm->key, comp);
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
    struct remote rm = { rts->addr, rts->key };
    int rc = aptus_rndv_issue_pieces(ep, r, n, get_op, &rm, &op->comp,
                                     "a one-sided read of a rendezvous message failed part way");
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
    if (r->nc || n == 0 || !ep || !ep->ch->put_notify) {
        aptus_rndv_release(r);
        return -1;
    }
    uint64_t raddr = (uint64_t)(uintptr_t)r->buf, rkey = 0;
    if (r->memh) { /* registered for its RECEIVER_READY (rndv_cust.c) */
        raddr = r->rr_raddr;
        rkey = r->rr_rkey;
    } else if (ep->ch->caps.flags & APTUS_CAP_NEEDS_REG) {
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
    if (r->rr) {
        aptus_rr_noted(r); /* a RECV_RNDV write (rndv_cust.c) */
        return;
    }
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

/* A list of the sender's pieces: the last carries the note (the receive request). */
static int put_op(struct aptus_ep *ep, struct iovec *iov, int k, size_t off, int last, void *arg,
                  struct aptus_completion *comp)
{
    const struct aptus_f_cts *c = arg;
    return last ? ep->ch->put_notify(ep, iov, k, c->addr + off, c->key, c->rreq, comp)
                : ep->ch->put(ep, iov, k, c->addr + off, c->key, comp);
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
    if (aptus_rndv_issue_pieces(ep, s, n, put_op, (void *)c, &op->comp,
                                "a one-sided write of a rendezvous message failed part way") == APTUS_ERR) {
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
