/* Context ids: slots, the agreement engine, and rounds over windows that let any number of
 * agreements run at once in a process (comm/context_id.h). */
#include "comm/context_id.h"

#include <stdlib.h>
#include <string.h>

#include "coll/coll_internal.h"
#include "core/context.h"
#include "core/errors.h"
#include "runtime/runtime.h"

#define CTX_SLOTS   8192
#define CTX_WINDOWS (CTX_SLOTS / 32)

/* ctx_free: slots no communicator of this process uses; ctx_held: free slots that a running
 * round holds (contributed, so that no other agreement of this process may take them before the
 * round ends). Both under the library's lock. */
static uint32_t ctx_free[CTX_WINDOWS];
static uint32_t ctx_held[CTX_WINDOWS];
/* The agreements running in this process (blocking calls of several threads, nonblocking ones). */
static struct aptus_ctxid *running;

static void ctx_mark(int slot, int used)
{
    if (used)
        ctx_free[slot / 32] &= ~(1u << (slot % 32));
    else
        ctx_free[slot / 32] |= 1u << (slot % 32);
}

void aptus_ctxid_init(void)
{
    memset(ctx_free, 0xff, sizeof ctx_free);
    memset(ctx_held, 0, sizeof ctx_held);
    running = NULL;
    ctx_mark(0, 1); /* MPI_COMM_WORLD */
    ctx_mark(1, 1); /* MPI_COMM_SELF */
    ctx_mark(APTUS_SLOT_RUNTIME, 1);
}

void aptus_ctxid_release(int slot)
{
    ctx_mark(slot, 0);
}

/* ---------------- the agreement engine ---------------- */

/* The agreement's messages (a->nw words on a->ctx, a->tag). A failed start is kept in a->err;
 * a receive that did not start counts as arrived (NULL): the result is invalid anyway. */
static struct aptus_request *agree_irecv(struct aptus_agree *a, void *buf, int src)
{
    struct aptus_request *r;
    int rc = aptus_coll_irecv_on(&a->tc, a->ctx, buf, (size_t)a->nw * 4, src, a->tag, &r);
    if (rc && !a->err)
        a->err = rc;
    return r;
}

static void agree_isend(struct aptus_agree *a, const void *buf, int dst)
{
    struct aptus_request *r;
    int rc = aptus_coll_isend_on(&a->tc, a->ctx, buf, (size_t)a->nw * 4, dst, a->tag, &r);
    if (rc && !a->err)
        a->err = rc;
    if (r)
        a->sq[a->nsq++] = r;
}

int aptus_agree_init(struct aptus_agree *a, int *peers, int n, int me, uint16_t ctx, int tag, int nw, int nand)
{
    memset(a, 0, sizeof *a);
    a->nand = nand;
    a->tc.rank = me;
    a->tc.size = a->tc.npeers = n;
    a->tc.world = a->tc.peers = peers;
    a->ctx = ctx;
    a->tag = tag;
    a->nw = nw;
    a->parent = -1;
    for (int k = 1; k < n; k <<= 1) {
        if (me & k) {
            a->parent = me - k;
            break;
        }
        if (me + k < n)
            a->child[a->nchild++] = me + k;
    }
    a->val = calloc((size_t)nw * (size_t)(a->nchild + 2), 4);
    if (!a->val)
        return MPI_ERR_NO_MEM;
    a->bufs = a->val + nw;
    return 0;
}

void aptus_agree_start(struct aptus_agree *a)
{
    a->state = 0;
    a->nrq = a->nsq = 0;
    for (int i = 0; i < a->nchild; i++)
        a->rq[a->nrq++] = agree_irecv(a, a->bufs + (size_t)i * (size_t)a->nw, a->child[i]);
}

static void agree_free_reqs(struct aptus_request **r, int *n, struct aptus_agree *a)
{
    for (int i = 0; i < *n; i++)
        if (r[i]) {
            if (r[i]->st_error && !a->err)
                a->err = r[i]->st_error;
            aptus_req_free(r[i]);
        }
    *n = 0;
}

int aptus_agree_poll(struct aptus_agree *a)
{
    if (a->state == 0) {
        for (int i = 0; i < a->nrq; i++)
            if (a->rq[i] && !a->rq[i]->complete)
                return 0;
        for (int i = 0; i < a->nchild; i++) {
            const uint32_t *b = a->bufs + (size_t)i * (size_t)a->nw;
            for (int w = 0; w < a->nand; w++)
                a->val[w] &= b[w];
            for (int w = a->nand; w < a->nw; w++)
                a->val[w] |= b[w];
        }
        agree_free_reqs(a->rq, &a->nrq, a);
        if (a->parent >= 0) {
            agree_isend(a, a->val, a->parent);
            a->rq[a->nrq++] = agree_irecv(a, a->bufs + (size_t)a->nchild * (size_t)a->nw, a->parent);
            a->state = 1;
        } else {
            a->state = 2;
        }
    }
    if (a->state == 1) {
        if (a->rq[0] && !a->rq[0]->complete)
            return 0;
        /* the parent answered, so it had our contribution: the send from val is done */
        memcpy(a->val, a->bufs + (size_t)a->nchild * (size_t)a->nw, (size_t)a->nw * 4);
        agree_free_reqs(a->rq, &a->nrq, a);
        a->state = 2;
    }
    if (a->state == 2) {
        for (int i = 0; i < a->nchild; i++)
            agree_isend(a, a->val, a->child[i]);
        a->state = 3;
    }
    for (int i = 0; i < a->nsq; i++)
        if (!a->sq[i]->complete)
            return 0;
    agree_free_reqs(a->sq, &a->nsq, a);
    a->state = 4;
    return 1;
}

void aptus_agree_done(struct aptus_agree *a)
{
    free(a->val);
    a->val = a->bufs = NULL;
}

void aptus_agree_run(struct aptus_agree *a)
{
    unsigned idle = 0;
    aptus_agree_start(a);
    while (!aptus_agree_poll(a))
        aptus_wait_step(&idle);
}

/* ---------------- rounds over windows ---------------- */

static uint64_t mix64(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 33;
    return h;
}

uint64_t aptus_ctxid_key_pair(uint64_t a, uint64_t b)
{
    uint64_t lo = a < b ? a : b, hi = a < b ? b : a;
    return (uint64_t)4 << 60 | (mix64(lo ^ mix64(hi)) & (((uint64_t)1 << 60) - 1));
}

/* The window of round r: a permutation of the windows (an odd multiplier, then an xor) that
 * depends on the key, so that every participant computes the same, a lap visits every window
 * once, and two agreements that met in a window most likely part at once. */
static int window_of(const struct aptus_ctxid *d, int r)
{
    return (int)((((unsigned)r * d->wmul) ^ d->wxor) % CTX_WINDOWS);
}

void aptus_ctxid_open(struct aptus_ctxid *d, uint64_t key, int listed)
{
    memset(d, 0, sizeof *d);
    d->key = key;
    uint32_t h = (uint32_t)mix64(key);
    d->wmul = ((h >> 8) % CTX_WINDOWS) | 1;
    d->wxor = h % CTX_WINDOWS;
    if (!(d->listed = listed))
        return;
    d->next = running;
    d->pprev = &running;
    if (running)
        running->pprev = &d->next;
    running = d;
}

void aptus_ctxid_close(struct aptus_ctxid *d)
{
    if (d->holding) {
        ctx_held[window_of(d, d->round)] &= ~d->held;
        d->holding = 0;
    }
    if (!d->listed)
        return;
    *d->pprev = d->next;
    if (d->next)
        d->next->pprev = d->pprev;
    d->listed = 0;
}

int aptus_ctxid_window(const struct aptus_ctxid *d)
{
    return window_of(d, d->round);
}

/* Two agreements that meet in a window may have taken its slots in opposite orders on two
 * processes, so that both fail; if their orders of windows coincide they would meet again and
 * again. So a round leaves alone (contributes nothing to) a window that an agreement with a
 * lower key, running here, uses in its current round or will use in its next one: the lower key
 * then gets the window everywhere. */
uint32_t aptus_ctxid_hold(struct aptus_ctxid *d, uint32_t *busy)
{
    int w = window_of(d, d->round), yield = 0;
    for (struct aptus_ctxid *e = running; e && !yield; e = e->next)
        yield = e != d && e->key < d->key && (window_of(e, e->round) == w || window_of(e, e->round + 1) == w);
    d->held = yield ? 0 : ctx_free[w] & ~ctx_held[w];
    ctx_held[w] |= d->held;
    d->holding = 1;
    *busy = yield || (ctx_free[w] & ~d->held) != 0;
    return d->held;
}

/* The lowest `want` set bits of word m as slots (the word is window w). Returns how many. */
static int pick_slots(uint32_t m, int w, int want, int *slots)
{
    int got = 0;
    while (m && got < want) {
        slots[got++] = w * 32 + __builtin_ctz(m);
        m &= m - 1;
    }
    return got;
}

int aptus_ctxid_settle(struct aptus_ctxid *d, uint32_t result, uint32_t busy, int want, int take, int *slots)
{
    int w = window_of(d, d->round);
    if (d->holding)
        ctx_held[w] &= ~d->held;
    d->holding = 0;
    d->held = 0;
    if (pick_slots(result, w, want, slots) == want) {
        /* a slot in the result was contributed (so held and free) by every participant that
         * takes it: still free here */
        for (int i = 0; take && i < want; i++)
            ctx_mark(slots[i], 1);
        return 1;
    }
    d->conflict_seen |= busy != 0;
    d->round++;
    if (++d->misses == CTX_WINDOWS) {
        /* a whole lap without a common slot: out of ids unless some were held */
        if (!d->conflict_seen)
            return -MPI_ERR_INTERN;
        d->misses = 0;
        d->conflict_seen = 0;
    }
    return 0;
}

/* ---------------- agreement by allreduce over a list ---------------- */

static void round_start(struct aptus_ctxid_agree *g)
{
    int rc = aptus_agree_init(&g->a, g->list, g->n, g->me, g->ctx, g->tag, 2 + g->nx, 1);
    if (rc) {
        g->err = rc;
        return;
    }
    g->started = 1;
    uint32_t busy = 0;
    /* a bystander neither limits the result nor holds anything */
    g->a.val[0] = g->bystander ? ~0u : aptus_ctxid_hold(&g->id, &busy);
    g->a.val[1] = busy;
    if (g->nx)
        memcpy(g->a.val + 2, g->extra, (size_t)g->nx * 4);
    aptus_agree_start(&g->a);
}

void aptus_ctxid_agree_start(struct aptus_ctxid_agree *g, int *list, int n, int me, uint16_t ctx, int tag, uint64_t key,
                             int want, int bystander, int nx, const uint32_t *extra)
{
    memset(g, 0, sizeof *g);
    g->list = list;
    g->n = n;
    g->me = me;
    g->ctx = ctx;
    g->tag = tag;
    g->want = want;
    g->bystander = bystander;
    g->nx = nx;
    g->extra = extra;
    aptus_ctxid_open(&g->id, key, !bystander);
    round_start(g);
}

int aptus_ctxid_agree_poll(struct aptus_ctxid_agree *g)
{
    for (;;) {
        if (g->err || !g->started)
            break;
        if (!aptus_agree_poll(&g->a))
            return 0;
        if (g->a.err) {
            g->err = g->a.err;
            break;
        }
        int rc = aptus_ctxid_settle(&g->id, g->a.val[0], g->a.val[1], g->want, !g->bystander, g->slots);
        if (rc) {
            if (rc < 0)
                g->err = -rc;
            break;
        }
        aptus_agree_done(&g->a);
        g->started = 0;
        round_start(g);
    }
    aptus_ctxid_close(&g->id);
    return 1;
}

int aptus_ctxid_agree_run(struct aptus_ctxid_agree *g, int *list, int n, int me, uint16_t ctx, int tag, uint64_t key,
                          int want, int bystander, int nx, const uint32_t *extra)
{
    unsigned idle = 0;
    aptus_ctxid_agree_start(g, list, n, me, ctx, tag, key, want, bystander, nx, extra);
    while (!aptus_ctxid_agree_poll(g))
        aptus_wait_step(&idle);
    return g->err;
}

void aptus_ctxid_agree_end(struct aptus_ctxid_agree *g)
{
    if (g->started)
        aptus_agree_done(&g->a);
    g->started = 0;
}
