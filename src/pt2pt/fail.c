/* The failure path: when a channel gives up on a peer (and the job is to go on,
 * APTUS_PEER_FAILURE_ERRORS=1), every request that depends on that peer completes with
 * MPI_ERR_PROC_ABORTED instead of waiting forever: frames queued to it, sends and receives
 * waiting for its answer (rendezvous, synchronous sends, cancellations), and receives posted for it by rank. */
#include "pt2pt/mlayer.h"

static void fail_posted(struct aptus_request *r, void *arg)
{
    const struct aptus_peer *p = arg;
    if (r->peer == MPI_ANY_SOURCE || !r->comm || aptus_comm_peer_world(r->comm, r->peer) != p->world_rank)
        return;
    aptus_posted_remove(r);
    if (r->rr)
        aptus_rr_forget(r);
    r->st_source = r->peer;
    r->st_tag = r->tag;
    r->st_bytes = 0;
    r->st_error = MPI_ERR_PROC_ABORTED;
    aptus_req_done(r);
}

static void on_peer_failed(struct aptus_peer *p, const char *why)
{
    aptus_sendq_drop(p, MPI_ERR_PROC_ABORTED);
    for (struct aptus_request *r = aptus_ml.remote_wait, *next; r; r = next) {
        next = r->next;
        if (r->wpeer != p->world_rank)
            continue;
        r->st_error = MPI_ERR_PROC_ABORTED;
        r->cancel_out = 0; /* no answer will come */
        aptus_req_done(r);
    }
    aptus_posted_each(fail_posted, p);
}

void aptus_fail_init(void)
{
    aptus_peer_fail_handler_set(on_peer_failed);
}
