/* Cancellation of sends (MPI 4.1, 3.8.4). A send's message is found at the receiver by its
 * sequence number, which orders the matched frames of each pair of processes: the sender asks
 * with CANCEL_REQ(seq, sreq) and the receiver answers CANCEL_ANS with one of
 *   DONE     the message sat in the unexpected queue: it is dropped and will never match (an
 *            EAGER_SYNC or RTS also gives back the sreq it carried, for the request that
 *            waits for it);
 *   MATCHED  a receive (or MPI_Mprobe) has taken it, or takes it now: the send goes on;
 *   NOT_YET  it has not been handled in order yet (still on its way, on another channel than
 *            the request, or waiting for an earlier one): the sender asks again.
 * The sender's request completes only with the answer, so that MPI_Wait tells which: cancelled
 * (MPI_Test_cancelled true; the receiver never sees the message) or completed as a send. While
 * the question is out, a completion that arrives (SYNC_ACK, FIN, the last DATA frame, a queued
 * eager frame leaving) is held back (request.c). Every kind of send can be cancelled this way
 * -- eager, synchronous, ready, buffered (its message is carried by an internal request: the
 * user's request records the sequence number), rendezvous of every protocol, to oneself --
 * and nothing of it costs the paths that do not cancel: the receiver keeps the number in an
 * unexpected message's record only. */
#include <stdlib.h>

#include "core/errors.h"
#include "pt2pt/mlayer.h"

uint32_t aptus_send_seq_next(struct aptus_comm *c, int dest)
{
    struct aptus_peer *p = aptus_peer_get(aptus_comm_peer_world(c, dest));
    return p ? p->send_seq : 0;
}

const struct aptus_cancel_stats *aptus_pt2pt_cancel_stats(void)
{
    return &aptus_ml.cancels;
}

static void ask(struct aptus_peer *p, struct aptus_request *r)
{
    struct aptus_f_cancel q = { .type = APTUS_F_CANCEL_REQ, .seq = r->sseq, .sreq = (uint64_t)(uintptr_t)r };
    aptus_send_ctrl(p, &q, sizeof q);
}

void aptus_send_cancel(struct aptus_request *r)
{
    /* (a partitioned send's messages are its internal requests': it is never cancelled) */
    /* (a send that wrote into its receiver's buffer has matched) */
    if (r->kind != APTUS_REQ_SEND || r->part || r->peer == MPI_PROC_NULL || r->cancelled || r->cancel_out ||
        (r->rr & APTUS_RR_USED) || (r->persistent && !r->active) || r->st_error)
        return;
    struct aptus_peer *p = aptus_rt.peers[aptus_comm_peer_world(r->comm, r->peer)];
    if (!p || p->failed)
        return;
    /* A completed send (eager, buffered) may still be unexpected at the receiver: it becomes
     * incomplete again until the answer comes. */
    int was_complete = r->complete;
    r->complete = 0;
    r->cancel_out = 1;
    r->cancel_held = (uint8_t)was_complete;
    aptus_req_wait_remote(r, p->world_rank); /* a failure of the peer ends the wait */
    aptus_ml.cancels.asked++;
    ask(p, r);
}

/* The receiver: where message `seq` from `from` stands. */
static void on_cancel_req(struct aptus_peer *from, const void *frame, size_t len)
{
    const struct aptus_f_cancel *q = frame;
    struct aptus_f_cancel a = { .type = APTUS_F_CANCEL_ANS, .seq = q->seq, .sreq = q->sreq };
    struct aptus_unexp *u = NULL;
    if ((int32_t)(q->seq - from->recv_seq) >= 0) {
        a.outcome = APTUS_CANCEL_NOT_YET;
    } else {
        for (u = aptus_mt.uhead; u; u = u->next)
            if (u->from == from && u->seq == q->seq)
                break;
        a.outcome = u ? APTUS_CANCEL_DONE : APTUS_CANCEL_MATCHED;
    }
    if (u) {
        aptus_ml.cancels.dropped++;
        a.msg = u->type == APTUS_F_EAGER ? 0 : u->sreq;
        aptus_unexp_remove(u);
        free(u);
    }
    aptus_send_ctrl(from, &a, sizeof a);
}

/* The sender: the answer. */
static void on_cancel_ans(struct aptus_peer *from, const void *frame, size_t len)
{
    const struct aptus_f_cancel *a = frame;
    struct aptus_request *r = (struct aptus_request *)(uintptr_t)a->sreq;
    if (a->outcome == APTUS_CANCEL_NOT_YET) {
        aptus_ml.cancels.again++;
        ask(from, r);
        return;
    }
    r->cancel_out = 0;
    int held = r->cancel_held;
    r->cancel_held = 0;
    if (a->outcome == APTUS_CANCEL_DONE) {
        aptus_ml.cancels.cancelled++;
        aptus_rr_uncount(from, r->ctx, r->tag); /* its message no longer takes a receive's place */
        struct aptus_request *m = (struct aptus_request *)(uintptr_t)a->msg;
        if (m && m != r) { /* the internal request of a buffered send: it ends with its message */
            aptus_rndv_release(m);
            aptus_req_done(m);
        }
        aptus_rndv_release(r);
        r->cancelled = 1;
        aptus_req_done_slow(r);
        return;
    }
    aptus_ml.cancels.matched++;
    if (held)
        aptus_req_done_slow(r);
}

void aptus_cancel_init(void)
{
    aptus_am_register(APTUS_F_CANCEL_REQ, on_cancel_req);
    aptus_am_register(APTUS_F_CANCEL_ANS, on_cancel_ans);
}
