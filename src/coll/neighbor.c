/* Neighborhood collectives: every receive is posted first, then every send is started, then
 * all are waited for, so blocks of any size flow without ordering constraints between
 * neighbours. Messages go on the management context (ctx + 2) with the negative tags of
 * core/topo.h: on a Cartesian topology the tag names the direction, so that the two blocks
 * exchanged with the same neighbour (a periodic dimension of size 1 or 2) land in the right
 * slots; on graphs repeated edges pair up in order. */
#include "coll/neighbor.h"
#include "coll/nbc.h"

#include <stdlib.h>

#include "core/context.h"
#include "core/topo.h"
#include "pt2pt/pt2pt.h"

/* Posts every receive, then starts every send; *n gets the requests started. On failure the
 * started ones are still in reqs (the caller finishes them). */
static int start_all(struct aptus_comm *c, const struct aptus_nbr_buf *sends, const struct aptus_nbr_buf *recvs,
                     struct aptus_request **reqs, int *n)
{
    const struct aptus_topo *t = c->topo;
    int cart = t->kind == MPI_CART, rc = 0;
    uint16_t ctx = (uint16_t)(c->ctx + APTUS_CTX_MGMT);
    *n = 0;
    for (int j = 0; j < t->nin && !rc; j++) {
        if (t->in[j] == MPI_PROC_NULL)
            continue;
        struct aptus_request *r = aptus_req_new(APTUS_REQ_RECV);
        if (!r)
            return MPI_ERR_NO_MEM;
        aptus_req_set_data(r, recvs[j].buf, recvs[j].count, recvs[j].dt);
        aptus_req_hold_type(r);
        r->peer = t->in[j];
        r->tag = cart ? APTUS_TAG_NBR - (j ^ 1) : APTUS_TAG_NBR;
        r->comm = c;
        r->ctx = ctx;
        rc = aptus_recv_start(r);
        if (rc)
            aptus_req_free(r);
        else
            reqs[(*n)++] = r;
    }
    for (int j = 0; j < t->nout && !rc; j++) {
        if (t->out[j] == MPI_PROC_NULL)
            continue;
        struct aptus_request *r = aptus_req_new(APTUS_REQ_SEND);
        if (!r)
            return MPI_ERR_NO_MEM;
        aptus_req_set_data(r, sends[j].buf, sends[j].count, sends[j].dt);
        aptus_req_hold_type(r);
        r->peer = t->out[j];
        r->tag = cart ? APTUS_TAG_NBR - j : APTUS_TAG_NBR;
        r->comm = c;
        r->ctx = ctx;
        r->mode = APTUS_MODE_STANDARD;
        rc = aptus_send_start(r);
        if (rc)
            aptus_req_free(r);
        else
            reqs[(*n)++] = r;
    }
    return rc;
}

/* Frees finished requests, keeping the first error. */
static int finish_all(struct aptus_request **reqs, int n, int rc)
{
    for (int i = 0; i < n; i++) {
        if (reqs[i]->st_error && !rc)
            rc = reqs[i]->st_error;
        aptus_req_free(reqs[i]);
    }
    return rc;
}

/* Recording a persistent neighborhood collective (coll/nbc.h): the same messages, in the same
 * order, then one wait for all of them. */
static int record_all(struct aptus_comm *c, const struct aptus_nbr_buf *sends, const struct aptus_nbr_buf *recvs)
{
    const struct aptus_topo *t = c->topo;
    int cart = t->kind == MPI_CART, rc = 0, n = 0;
    uint16_t ctx = (uint16_t)(c->ctx + APTUS_CTX_MGMT);
    struct aptus_request **ph = malloc((size_t)(t->nin + t->nout + 1) * sizeof *ph);
    if (!ph)
        return MPI_ERR_NO_MEM;
    for (int j = 0; j < t->nin && !rc; j++)
        if (t->in[j] != MPI_PROC_NULL)
            rc = aptus_nbc_msg(0, c, ctx, (void *)recvs[j].buf, 0, recvs[j].dt, recvs[j].count, t->in[j],
                               cart ? APTUS_TAG_NBR - (j ^ 1) : APTUS_TAG_NBR, &ph[n++]);
    for (int j = 0; j < t->nout && !rc; j++)
        if (t->out[j] != MPI_PROC_NULL)
            rc = aptus_nbc_msg(1, c, ctx, (void *)sends[j].buf, 0, sends[j].dt, sends[j].count, t->out[j],
                               cart ? APTUS_TAG_NBR - j : APTUS_TAG_NBR, &ph[n++]);
    if (!rc)
        rc = aptus_nbc_wait(ph, n);
    free(ph);
    return rc;
}

int aptus_neighbor_exchange(struct aptus_comm *c, const struct aptus_nbr_buf *sends, const struct aptus_nbr_buf *recvs)
{
    if (aptus_nbc_recording())
        return record_all(c, sends, recvs);
    int n;
    struct aptus_request **reqs = malloc((size_t)(c->topo->nin + c->topo->nout + 1) * sizeof *reqs);
    if (!reqs)
        return MPI_ERR_NO_MEM;
    int rc = start_all(c, sends, recvs, reqs, &n);
    /* even after a failure, what was started is finished (the buffers belong to the caller) */
    for (int i = 0; i < n; i++)
        aptus_wait(reqs[i]);
    rc = finish_all(reqs, n, rc);
    free(reqs);
    return rc;
}

/* A nonblocking exchange: the user's GENERIC request and the messages it waits for. */
struct nbr_op {
    struct aptus_request *user;
    struct aptus_comm *c;
    int n, err;
    struct aptus_request *reqs[];
};

static int nbr_poll(void *arg)
{
    struct nbr_op *op = arg;
    for (int i = 0; i < op->n; i++)
        if (!op->reqs[i]->complete)
            return 0;
    op->user->st_error = finish_all(op->reqs, op->n, op->err);
    aptus_req_complete(op->user);
    aptus_comm_unref(op->c);
    free(op);
    return 1;
}

int aptus_neighbor_iexchange(struct aptus_comm *c, const struct aptus_nbr_buf *sends, const struct aptus_nbr_buf *recvs,
                             struct aptus_request **req)
{
    *req = NULL;
    struct nbr_op *op = malloc(sizeof *op + (size_t)(c->topo->nin + c->topo->nout + 1) * sizeof op->reqs[0]);
    struct aptus_request *u = aptus_req_new_nomsg(APTUS_REQ_GENERIC);
    if (!op || !u) {
        free(op);
        if (u)
            aptus_req_free(u);
        return MPI_ERR_NO_MEM;
    }
    op->user = u;
    op->c = c;
    c->refcount++; /* the communicator may be freed before the operation ends */
    /* a failure to start is reported through the request, once what did start has finished */
    op->err = start_all(c, sends, recvs, op->reqs, &op->n);
    if (aptus_bg_add_passive(nbr_poll, op)) {
        unsigned idle = 0; /* no room for a background task: finish here */
        while (!nbr_poll(op))
            aptus_wait_step(&idle);
    }
    *req = u;
    return MPI_SUCCESS;
}
