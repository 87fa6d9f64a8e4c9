/* Requests: allocation (a free list), completion, status; set-up of the message layer. */
#include <stdlib.h>
#include <string.h>

#include "pt2pt/mlayer.h"

struct aptus_mlayer aptus_ml;

void aptus_pt2pt_init(void)
{
    memset(&aptus_ml, 0, sizeof aptus_ml);
    aptus_match_init();
    aptus_sendq_init();
    aptus_recv_init();
    aptus_eager_init();
    aptus_rndv_init();
    aptus_rndv_copy_init();
    aptus_rndv_write_init();
    aptus_rndv_cust_init();
    aptus_proto_init();
    aptus_fail_init();
    aptus_cancel_init();
}

void aptus_pt2pt_peers_release(void)
{
    for (int w = 0; w < aptus_rt.nprocs && aptus_rt.peers; w++) {
        struct aptus_peer *p = aptus_rt.peers[w];
        if (!p)
            continue;
        aptus_sendq_drop(p, MPI_ERR_OTHER);
        aptus_rndv_cust_peer_free(p);
        free(p->sq);
        p->sq = NULL;
        aptus_recv_peer_free(p);
    }
}

void aptus_pt2pt_finalize(void)
{
    while (aptus_ml.free_reqs) {
        struct aptus_request *r = aptus_ml.free_reqs;
        aptus_ml.free_reqs = r->next;
        aptus_obj_free(APTUS_OBJ_REQUEST, r);
    }
    aptus_rndv_cust_finalize();
    aptus_match_finalize();
}

struct aptus_request *aptus_req_new(int kind)
{
    struct aptus_request *r = aptus_ml.free_reqs;
    if (r)
        aptus_ml.free_reqs = r->next;
    else if (!(r = aptus_obj_alloc(APTUS_OBJ_REQUEST, sizeof *r)))
        return NULL;
    aptus_req_init(r, kind);
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
    r->next = aptus_ml.free_reqs;
    aptus_ml.free_reqs = r;
}

void aptus_req_wait_remote(struct aptus_request *r, int wpeer)
{
    /* A request can be complete already: to oneself (self channel) the answer comes back
     * inside the send. */
    if (r->rwait || r->complete)
        return;
    r->rwait = 1;
    r->wpeer = wpeer;
    r->prev = NULL;
    r->next = aptus_ml.remote_wait;
    if (aptus_ml.remote_wait)
        aptus_ml.remote_wait->prev = r;
    aptus_ml.remote_wait = r;
}

static void remote_wait_unlink(struct aptus_request *r)
{
    if (r->prev)
        r->prev->next = r->next;
    else
        aptus_ml.remote_wait = r->next;
    if (r->next)
        r->next->prev = r->prev;
    r->rwait = 0;
}

void aptus_req_done_slow(struct aptus_request *r)
{
    if (r->cancel_out) {
        /* the receiver's answer to a cancellation decides how it completes (cancel.c) */
        r->cancel_held = 1;
        return;
    }
    if (r->rwait)
        remote_wait_unlink(r);
    if (r->rndv_out) {
        r->rndv_out = 0;
        aptus_ml.rndv_out--;
    }
    if (r->bsend_piece) {
        if (r->rr & APTUS_RR_HYBRID)
            aptus_hybrid_release(r->bsend_piece);
        else
            aptus_bsend_release(r->bsend_piece);
        r->bsend_piece = NULL;
    }
    r->complete = 1;
    if (r->free_on_complete)
        aptus_req_free(r);
}

void aptus_req_complete(struct aptus_request *r)
{
    aptus_req_done(r);
}

void aptus_wait(struct aptus_request *r)
{
    unsigned idle = 0;
    while (!r->complete)
        aptus_wait_step(&idle);
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

void aptus_pt2pt_rndv_counts(uint64_t *one_sided, uint64_t *copied)
{
    *one_sided = aptus_ml.rndv_read + aptus_ml.rndv_write;
    *copied = aptus_ml.rndv_copy;
}

uint64_t aptus_pt2pt_rndv_deferred(void)
{
    return aptus_ml.rndv_deferred;
}
