/* The target's agent: a passive background task of the progress engine that receives other
 * ranks' active messages on the window's communicator, applies them to this rank's window,
 * answers gets, fetches and flushes, and queues lock requests until the lock is free. */
#include "rma/rma_internal.h"

#include <stdlib.h>
#include <string.h>

#include "coll/coll_internal.h"
#include "pt2pt/pt2pt.h"
#include "runtime/progress.h"

struct rma_agent {
    int dead;                    /* the window was freed: the task ends at its next pass */
    struct rma_agent *next_live; /* the agents of the windows not freed yet */
    struct aptus_win *w;
    struct aptus_request *rx; /* the message being received */
    char *buf;
    size_t cap;
    struct rma_pend *out; /* replies in flight */
    int nout, capout;
    struct {
        int origin;
        uint8_t type;
        uint32_t tag;
    } * lockq; /* lock requests waiting */
    int nlockq, caplockq;
    int *err; /* first error per origin since its last flush */
};

/* the agents of the windows not freed yet */
static struct rma_agent *live_agents;

static void agent_reply(struct rma_agent *a, int origin, uint32_t tag, void *buf, size_t len)
{
    struct aptus_win *w = a->w;
    struct aptus_request *r;
    if (aptus_coll_isend_on(w->comm, w->comm->ctx, buf, len, origin, (int)tag, &r)) {
        free(buf);
        return;
    }
    if (a->nout == a->capout) {
        int cap = a->capout ? 2 * a->capout : 8;
        struct rma_pend *p = realloc(a->out, sizeof *p * (size_t)cap);
        if (!p) {
            aptus_wait(r);
            aptus_req_free(r);
            free(buf);
            return;
        }
        a->out = p;
        a->capout = cap;
    }
    a->out[a->nout++] = (struct rma_pend){ r, buf, 0 };
}

static void agent_reply_int(struct rma_agent *a, int origin, uint32_t tag, int v)
{
    int *b = malloc(sizeof *b);
    if (!b)
        return;
    *b = v;
    agent_reply(a, origin, tag, b, sizeof *b);
}

static void agent_note(struct rma_agent *a, int origin, int err)
{
    if (err && !a->err[origin])
        a->err[origin] = err;
}

/* Checks the ranges of a request against this rank's window. */
static int agent_range(struct aptus_win *w, const struct rma_seg *s, size_t n)
{
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC) {
        if (!w->nregions)
            return n == 0;
        for (size_t i = 0; i < n; i++)
            if (!rma_covered(s[i].off, s[i].len, &w->regions[0].off, &w->regions[0].len, sizeof w->regions[0],
                             (uint32_t)w->nregions))
                return 0;
        return 1;
    }
    return rma_segs_in(s, n, (uint64_t)w->wsize);
}

static void agent_lockq_add(struct rma_agent *a, int origin, int type, uint32_t tag)
{
    if (a->nlockq == a->caplockq) {
        int cap = a->caplockq ? 2 * a->caplockq : 8;
        void *p = realloc(a->lockq, sizeof *a->lockq * (size_t)cap);
        if (!p) {
            agent_reply_int(a, origin, tag, MPI_ERR_NO_MEM);
            return;
        }
        a->lockq = p;
        a->caplockq = cap;
    }
    a->lockq[a->nlockq].origin = origin;
    a->lockq[a->nlockq].type = (uint8_t)type;
    a->lockq[a->nlockq].tag = tag;
    a->nlockq++;
}

static void agent_handle_one(struct rma_agent *a, int origin, const char *msg, const struct rma_hdr *hp)
{
    struct aptus_win *w = a->w;
    struct rma_hdr h = *hp;
    const struct rma_seg *s = (const struct rma_seg *)(const void *)(msg + sizeof h);
    const char *data = msg + sizeof h + h.nsegs * sizeof *s;
    struct rma_target *me = &w->t[w->rank];
    if (h.kind >= AM_PUT && h.kind <= AM_CAS)
        rma_stats.agent++;
    size_t total = 0;
    for (uint64_t i = 0; i < h.nsegs; i++)
        total += s[i].len;
    switch (h.kind) {
    case AM_PUT:
        if (!agent_range(w, s, h.nsegs))
            agent_note(a, origin, MPI_ERR_RMA_RANGE);
        else
            rma_move_direct(w, me, (char *)data, s, h.nsegs, 1);
        break;
    case AM_GET:
    case AM_GACC:
    case AM_CAS: {
        char *out = malloc(total ? total : 1);
        if (!out) {
            agent_note(a, origin, MPI_ERR_NO_MEM);
            break;
        }
        if (!agent_range(w, s, h.nsegs)) {
            agent_note(a, origin, MPI_ERR_RMA_RANGE);
            memset(out, 0, total);
        } else if (h.kind == AM_GET) {
            rma_move_direct(w, me, out, s, h.nsegs, 0);
        } else if (h.kind == AM_GACC) {
            rma_acc_direct(w, me, h.op_id, (MPI_Datatype)(uintptr_t)h.basic, h.op_id == APTUS_OP_NO_OP ? NULL : data,
                           out, s, h.nsegs);
        } else {
            rma_cas_direct(w, me, total, data, data + total, out, s);
        }
        agent_reply(a, origin, h.reply_tag, out, total);
        break;
    }
    case AM_ACC:
        if (!agent_range(w, s, h.nsegs))
            agent_note(a, origin, MPI_ERR_RMA_RANGE);
        else
            rma_acc_direct(w, me, h.op_id, (MPI_Datatype)(uintptr_t)h.basic, data, NULL, s, h.nsegs);
        break;
    case AM_LOCK:
        if (rma_lock_try(&rma_my_ctrl(w)->lock, h.lock))
            agent_reply_int(a, origin, h.reply_tag, 0);
        else
            agent_lockq_add(a, origin, h.lock, h.reply_tag);
        break;
    case AM_UNLOCK:
        rma_lock_release(&rma_my_ctrl(w)->lock, h.lock);
        /* the answer carries the errors, as a flush's */
        __attribute__((fallthrough));
    case AM_FLUSH:
        agent_reply_int(a, origin, h.reply_tag, a->err[origin]);
        a->err[origin] = 0;
        break;
    case AM_COMPLETE: w->completes++; break;
    default: break;
    }
}

/* A message from an origin: one active message or a batch of them (each at a multiple of 8
 * bytes), taken in order. A batch handed over (AM_CLAIM first: defer.c) is applied only when
 * this rank wins its claim, and said to be applied at the end. */
static void agent_handle(struct rma_agent *a, int origin, const char *msg, size_t len)
{
    size_t pos = 0;
    struct rma_hdr claim = { 0 };
    while (len - pos >= sizeof(struct rma_hdr)) {
        struct rma_hdr h;
        memcpy(&h, msg + pos, sizeof h);
        size_t room = len - pos - sizeof h;
        if (h.nsegs > room / sizeof(struct rma_seg) || h.bytes > room - h.nsegs * sizeof(struct rma_seg))
            break; /* malformed: the library sent it, so this cannot happen */
        if (h.kind == AM_CLAIM) {
            if (!rma_defer_claim(a->w, origin, &h))
                return; /* the origin took it back */
            claim = h;
        } else {
            agent_handle_one(a, origin, msg + pos, &h);
        }
        pos += RMA_PAD8(sizeof h + h.nsegs * sizeof(struct rma_seg) + h.bytes);
        if (pos >= len)
            break;
    }
    if (claim.kind)
        rma_defer_applied(a->w, origin, &claim);
}

static int agent_poll(void *arg)
{
    struct rma_agent *a = arg;
    if (a->dead) {
        for (int i = 0; i < a->nout; i++) {
            aptus_wait(a->out[i].req);
            aptus_req_free(a->out[i].req);
            free(a->out[i].tmp);
        }
        free(a->out);
        free(a->lockq);
        free(a->buf);
        free(a->err);
        free(a);
        return 1;
    }
    struct aptus_win *w = a->w;
    if (w->beats) { /* this rank polls: origins of the node may hand it their deferred batches */
        uint64_t *beat = &rma_slot_of(rma_my_ctrl(w))->beat;
        __atomic_store_n(beat, __atomic_load_n(beat, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
    }
    /* replies sent */
    for (int i = 0; i < a->nout;) {
        if (a->out[i].req->complete) {
            aptus_req_free(a->out[i].req);
            free(a->out[i].tmp);
            a->out[i] = a->out[--a->nout];
        } else {
            i++;
        }
    }
    /* locks waiting */
    for (int i = 0; i < a->nlockq;) {
        if (rma_lock_try(&rma_my_ctrl(w)->lock, a->lockq[i].type)) {
            agent_reply_int(a, a->lockq[i].origin, a->lockq[i].tag, 0);
            memmove(a->lockq + i, a->lockq + i + 1, sizeof *a->lockq * (size_t)(a->nlockq - i - 1));
            a->nlockq--;
        } else {
            i++;
        }
    }
    for (;;) {
        if (a->rx) {
            if (!a->rx->complete)
                break;
            struct aptus_request *r = a->rx;
            a->rx = NULL;
            agent_handle(a, r->st_source, a->buf, r->st_bytes);
            aptus_req_free(r);
            continue;
        }
        MPI_Status st;
        struct aptus_unexp *msg = NULL;
        if (!aptus_probe_test(MPI_ANY_SOURCE, TAG_REQ, w->comm, w->comm->ctx, &st, 1, &msg))
            break;
        size_t len = aptus_status_bytes(&st);
        if (len > a->cap) {
            char *b = realloc(a->buf, len);
            if (!b)
                break; /* the message stays taken: it will be lost; out of memory is fatal soon */
            a->buf = b;
            a->cap = len;
        }
        struct aptus_request *r = aptus_req_new(APTUS_REQ_RECV);
        if (!r)
            break;
        r->buf = a->buf;
        r->bytes = len;
        r->comm = w->comm;
        aptus_recv_taken(r, msg);
        a->rx = r;
    }
    return 0;
}

int rma_agent_start(struct aptus_win *w)
{
    struct rma_agent *a = calloc(1, sizeof *a);
    if (a)
        a->err = calloc((size_t)w->size, sizeof *a->err);
    if (!a || !a->err || aptus_bg_add_quiet(agent_poll, a)) {
        if (a)
            free(a->err);
        free(a);
        return MPI_ERR_NO_MEM;
    }
    a->w = w;
    w->agent = a;
    /* origins of the node reach this rank's memory by Cross Memory Attach: its heartbeat tells
     * them when it polls (defer.c) */
    w->beats = (w->flavor == MPI_WIN_FLAVOR_CREATE || w->flavor == MPI_WIN_FLAVOR_DYNAMIC) && w->nlocal > 1;
    a->next_live = live_agents;
    live_agents = a;
    return 0;
}

void rma_agent_stop(struct aptus_win *w)
{
    if (!w->agent)
        return;
    w->agent->dead = 1;
    for (struct rma_agent **pp = &live_agents; *pp; pp = &(*pp)->next_live)
        if (*pp == w->agent) {
            *pp = w->agent->next_live;
            break;
        }
}

void rma_agents_stop_all(void)
{
    /* windows the program did not free: their agents stop (MPI_Finalize waits for the
     * background tasks) */
    for (struct rma_agent *a = live_agents; a; a = a->next_live)
        a->dead = 1;
    live_agents = NULL;
}
