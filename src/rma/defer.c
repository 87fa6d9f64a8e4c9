/* Small puts and accumulates to targets of the node reached by Cross Memory Attach (the memory of
 * MPI_Win_create and dynamic windows), deferred to the end of the epoch. Done at once, each costs
 * a system call (process_vm_writev; an accumulate two, under the target's accumulate lock). They
 * are gathered instead into the target's batch of active messages (am.c), whose first header is
 * kept free, and settled at the epoch's end:
 *   - MPI_Win_complete: the batch rides with the complete message (am.c's control message, as to
 *     a target on another node); the target's agent applies it in MPI_Win_wait, where it is
 *     bound to be;
 *   - fence: the batch is handed over to the target's agent before the fence's barrier, and
 *     counted in the target's slot (fence_offered); after the barrier every rank waits until its
 *     agent applied as many batches as were handed to it (they were all sent before the barrier)
 *     and its own batches were applied -- the target is in its fence, so nothing is taken back;
 *   - flush, unlock: the batch is handed over when the target was seen polling (its heartbeat, a
 *     count its agent moves on every progress pass, moved since the origin last looked, or it
 *     applied the last batch handed to it), and the origin waits until it is applied. When the
 *     target does not take it within APTUS_RMA_HANDOVER_WAIT microseconds (it left MPI), the
 *     origin takes it back and writes it itself: an epoch still ends without the target calling
 *     MPI. A claim word in the origin's slot decides who applies a batch: the origin offers it
 *     (seq, OFFERED) before sending it; the agent takes it (TAKEN, then DONE once applied) or the
 *     origin takes it back (ORIGIN); whoever loses the compare-and-swap leaves it alone;
 *   - otherwise (a target not polling, an operation that must come after them -- an accumulate
 *     not deferred, a fetch, a compare-and-swap, an active message): the origin writes the
 *     batch itself, its puts with one process_vm_writev.
 * A batch that is full is settled as at a flush (in PSCW: sent to the target at once).
 * A hand-over starts and ends within one call, under the library's lock (its wait does not hand
 * the lock to other threads), so a claim word serves one batch at a time. */
#include "rma/rma_internal.h"

#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "runtime/config.h"
#include "runtime/progress.h"
#include "runtime/runtime.h"

#define HDR sizeof(struct rma_hdr)

_Static_assert(sizeof(((struct aptus_win *)0)->fence_seq) == RMA_CLAIMS * sizeof(uint64_t), "fence_seq: RMA_CLAIMS");
_Static_assert(sizeof(((struct aptus_win *)0)->spare) == RMA_SPARES * sizeof(char *), "spare: RMA_SPARES");

int rma_defer_ok(const struct aptus_win *w, const struct rma_target *t, size_t ns, size_t bytes)
{
    return t->path == RMA_PATH_CMA && bytes <= aptus_config.rma_defer_max && t->pid != (int)aptus_rt.pid &&
           (t->deferred || !t->blen) && HDR + RMA_PAD8(HDR + ns * sizeof(struct rma_seg) + bytes) <= RMA_BATCH_MAX;
}

int rma_defer_op(struct aptus_win *w, const struct rma_op *op, int kind, MPI_Datatype basic, const struct rma_seg *s,
                 size_t ns, const char *data, size_t bytes)
{
    struct rma_target *t = &w->t[op->target];
    int rc = 0;
    if (t->deferred && t->blen + RMA_PAD8(HDR + ns * sizeof *s + bytes) > RMA_BATCH_MAX)
        /* full: in an access epoch of PSCW it goes to the target now (applied before the complete
         * message that follows it), else as at a flush */
        rc = w->start ? rma_batch_send(w, op->target) : rma_defer_settle(w, op->target, RMA_SETTLE_FLUSH);
    if (rc)
        return rc;
    if (!t->deferred) {
        char *h = rma_batch_room(w, op->target, HDR, &rc);
        if (!h)
            return rc ? rc : MPI_ERR_INTERN;
        memset(h, 0, HDR); /* AM_NOP, or AM_CLAIM when handed over */
        t->deferred = 1;
        w->ndeferred++;
    }
    rma_stats.deferred++;
    return rma_am_op(w, op, kind, basic, s, ns, data, bytes, NULL, 0);
}

/* Writes a batch of deferred operations to t by Cross Memory Attach: runs of puts with one
 * process_vm_writev each (up to 64 pieces), accumulates one by one under the target's lock. */
static int write_batch(struct aptus_win *w, const struct rma_target *t, const char *b, size_t len)
{
    enum { NV = 64 };
    struct iovec l[NV], r[NV];
    size_t nl = 0, nr = 0;
    uint64_t base = w->flavor == MPI_WIN_FLAVOR_DYNAMIC ? 0 : t->base;
    int rc = 0;
    for (size_t pos = HDR; pos + HDR <= len && !rc;) {
        struct rma_hdr h;
        memcpy(&h, b + pos, HDR);
        const struct rma_seg *s = (const struct rma_seg *)(const void *)(b + pos + HDR);
        const char *data = b + pos + HDR + h.nsegs * sizeof *s;
        pos += RMA_PAD8(HDR + h.nsegs * sizeof *s + h.bytes);
        if (h.kind == AM_PUT && h.nsegs <= NV) {
            if (nl == NV || nr + h.nsegs > NV) {
                rc = rma_cma_iov(t->pid, l, nl, r, nr, 1) ? MPI_ERR_RMA_RANGE : 0;
                nl = nr = 0;
            }
            l[nl++] = (struct iovec){ (void *)(uintptr_t)data, h.bytes };
            for (uint64_t i = 0; i < h.nsegs; i++)
                r[nr++] = (struct iovec){ (void *)(uintptr_t)(base + s[i].off), s[i].len };
            continue;
        }
        if (nl) { /* (the pieces before it first: the batch's order) */
            rc = rma_cma_iov(t->pid, l, nl, r, nr, 1) ? MPI_ERR_RMA_RANGE : 0;
            nl = nr = 0;
        }
        if (rc)
            break;
        if (h.kind == AM_PUT)
            rc = rma_move_direct(w, t, (char *)data, s, h.nsegs, 1);
        else if (h.kind == AM_ACC)
            rc = rma_acc_direct(w, t, h.op_id, (MPI_Datatype)(uintptr_t)h.basic, data, NULL, s, h.nsegs);
    }
    if (nl && !rc)
        rc = rma_cma_iov(t->pid, l, nl, r, nr, 1) ? MPI_ERR_RMA_RANGE : 0;
    return rc;
}

int rma_defer_write(struct aptus_win *w, int target)
{
    struct rma_target *t = &w->t[target];
    if (!t->deferred)
        return 0;
    int rc = write_batch(w, t, t->batch, t->blen);
    t->blen = 0; /* (the buffer stays for the next batch) */
    t->deferred = 0;
    w->ndeferred--;
    rma_stats.by_origin++;
    return rc;
}

/* A batch handed over, until the target applied it or the origin took it back. */
struct handover {
    int target, k;
    uint64_t seq;
    const char *buf; /* the batch (kept by the send's pending request until rma_pend_wait_all) */
    size_t len;
};

/* Whether to hand t's batch over: a fence always; a flush when the target is seen polling. */
static int hand_wanted(const struct aptus_win *w, struct rma_target *t, int mode)
{
    if (!aptus_config.rma_handover_wait)
        return 0;
    if (mode == RMA_SETTLE_FENCE)
        return 1;
    uint64_t beat = __atomic_load_n(&rma_slot_of(t->ctrl)->beat, __ATOMIC_RELAXED);
    int polling = t->handed_ok || beat != t->beat_seen;
    t->beat_seen = beat;
    return polling;
}

/* Offers the target's batch (claim word k of this rank's slot) and sends it; in a fence, counted
 * in the target's slot first (it waits for it after the barrier). */
static int hand_start(struct aptus_win *w, int target, int k, int fence, struct handover *h)
{
    struct rma_target *t = &w->t[target];
    uint64_t *word = &rma_slot_of(rma_my_ctrl(w))->claim[k];
    h->target = target;
    h->k = k;
    h->seq = ++w->claim_seq;
    h->buf = t->batch;
    h->len = t->blen;
    struct rma_hdr c = { AM_CLAIM, (uint8_t)fence, (uint16_t)k, 0, h->seq, 0, 0 };
    memcpy(t->batch, &c, HDR);
    __atomic_store_n(word, h->seq << 2 | RMA_CLAIM_OFFERED, __ATOMIC_RELEASE);
    if (fence)
        __atomic_fetch_add(&rma_slot_of(t->ctrl)->fence_offered, 1, __ATOMIC_SEQ_CST);
    int rc = rma_batch_send(w, target);
    if (rc) { /* (the batch is lost with the send: nothing to take back, nothing to wait for) */
        __atomic_store_n(word, h->seq << 2 | RMA_CLAIM_ORIGIN, __ATOMIC_RELEASE);
        if (fence)
            __atomic_fetch_sub(&rma_slot_of(t->ctrl)->fence_offered, 1, __ATOMIC_SEQ_CST);
    }
    return rc;
}

/* Waits until each batch handed over is applied by its target, or takes it back once the wait
 * is over and writes it; the first error. */
static int hand_wait(struct aptus_win *w, struct handover *h, int n)
{
    uint64_t *claim = rma_slot_of(rma_my_ctrl(w))->claim;
    double deadline = aptus_wtime() + (double)aptus_config.rma_handover_wait * 1e-6;
    int rc = 0, late = 0;
    unsigned spins = 0, idle = 0;
    while (n > 0) {
        for (int i = 0; i < n;) {
            uint64_t offered = h[i].seq << 2 | RMA_CLAIM_OFFERED;
            uint64_t v = __atomic_load_n(&claim[h[i].k], __ATOMIC_ACQUIRE);
            struct rma_target *t = &w->t[h[i].target];
            int done = v == (h[i].seq << 2 | RMA_CLAIM_DONE);
            if (done) {
                t->handed_ok = 1;
                t->stale = 0; /* (its agent takes messages in order: any taken back before are gone) */
                rma_stats.handed++;
            } else if (late && v == offered &&
                       __atomic_compare_exchange_n(&claim[h[i].k], &offered, h[i].seq << 2 | RMA_CLAIM_ORIGIN, 0,
                                                   __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
                int e = write_batch(w, t, h[i].buf, h[i].len);
                rc = rc ? rc : e;
                t->handed_ok = 0;
                t->stale = 1;
                rma_stats.taken_back++;
                done = 1;
            }
            if (done)
                h[i] = h[--n];
            else
                i++;
        }
        if (!n)
            break;
        /* (the target may be waiting for this rank's batch to it in the same way) */
        aptus_spin_step(&idle);
        if (!(++spins & 7))
            late = aptus_wtime() >= deadline;
    }
    return rc;
}

int rma_defer_settle(struct aptus_win *w, int target, int mode)
{
    if (!w->ndeferred)
        return 0;
    struct handover one[1], *h = one;
    int nh = 0, cap = 1, rc = 0;
    if (target < 0 && w->ndeferred > 1) {
        cap = w->ndeferred < RMA_CLAIMS ? w->ndeferred : RMA_CLAIMS;
        h = malloc(sizeof *h * (size_t)cap);
        if (!h) {
            h = one;
            cap = 1;
        }
    }
    uint32_t busy = 0; /* claim words in use by this settle */
    for (int r = target < 0 ? 0 : target; r < (target < 0 ? w->size : target + 1); r++) {
        struct rma_target *t = &w->t[r];
        if (!t->deferred)
            continue;
        int k = (int)(((char *)t->ctrl - w->seg) / RMA_CTRL_STRIDE) % RMA_CLAIMS, e;
        int fence = mode == RMA_SETTLE_FENCE;
        if (!((busy | (uint32_t)w->fence_hands) & (1u << k)) && (fence || nh < cap) && hand_wanted(w, t, mode)) {
            busy |= 1u << k;
            struct handover f, *hv = fence ? &f : &h[nh];
            e = hand_start(w, r, k, fence, hv);
            if (!e && fence) { /* (waited for after the fence's barrier: rma_defer_fence_end) */
                w->fence_hands |= 1 << k;
                w->fence_seq[k] = f.seq;
            } else if (!e) {
                nh++;
            }
        } else {
            e = rma_defer_write(w, r);
        }
        rc = rc ? rc : e;
    }
    int e = nh ? hand_wait(w, h, nh) : 0;
    if (h != one)
        free(h);
    return rc ? rc : e;
}

void rma_defer_fence_end(struct aptus_win *w)
{
    if (!w->fence_hands && !w->beats)
        return; /* (no origin of the node defers to this rank) */
    struct rma_slot *me = rma_slot_of(rma_my_ctrl(w));
    unsigned idle = 0;
    for (;;) {
        for (int k = 0; k < RMA_CLAIMS; k++)
            if ((w->fence_hands & (1 << k)) &&
                __atomic_load_n(&me->claim[k], __ATOMIC_ACQUIRE) == (w->fence_seq[k] << 2 | RMA_CLAIM_DONE)) {
                w->fence_hands &= ~(1 << k);
                rma_stats.handed++;
            }
        if (!w->fence_hands && w->fence_applied >= __atomic_load_n(&me->fence_offered, __ATOMIC_ACQUIRE))
            return;
        aptus_spin_step(&idle);
    }
}

int rma_defer_drain(struct aptus_win *w)
{
    int rc = 0, sent = 0;
    for (int r = 0; r < w->size; r++)
        if (w->t[r].stale) {
            int e = rma_am_control(w, r, AM_FLUSH, 0, 1);
            rc = rc ? rc : e;
            w->t[r].stale = 0;
            sent = 1;
        }
    int e = sent ? rma_pend_wait_all(w) : 0; /* (the requests' sends) */
    return rc ? rc : e;
}

/* ---- the target's side (agent.c) ------------------------------------------------------------ */

static uint64_t *claim_word(struct aptus_win *w, int origin, const struct rma_hdr *h)
{
    struct rma_ctrl *c = w->t[origin].ctrl;
    return c && h->op_id < RMA_CLAIMS ? &rma_slot_of(c)->claim[h->op_id] : NULL;
}

int rma_defer_claim(struct aptus_win *w, int origin, const struct rma_hdr *h)
{
    uint64_t *word = claim_word(w, origin, h), offered = h->basic << 2 | RMA_CLAIM_OFFERED;
    return word && __atomic_compare_exchange_n(word, &offered, h->basic << 2 | RMA_CLAIM_TAKEN, 0, __ATOMIC_ACQ_REL,
                                               __ATOMIC_ACQUIRE);
}

void rma_defer_applied(struct aptus_win *w, int origin, const struct rma_hdr *h)
{
    if (h->lock) /* handed over in a fence (counted in this rank's slot) */
        w->fence_applied++;
    __atomic_store_n(claim_word(w, origin, h), h->basic << 2 | RMA_CLAIM_DONE, __ATOMIC_RELEASE);
}
