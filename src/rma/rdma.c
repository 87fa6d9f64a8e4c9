/* RDMA over the RC channel for targets on other nodes: the window's registration and the
 * exchange of keys at creation, writes and reads (staged through a buffer for non-contiguous
 * origin data), their completion and the placement of writes. */
#include "rma/rma_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "channel/channel.h"
#include "coll/coll.h"
#include "core/datatype.h"
#include "runtime/config.h"
#include "runtime/progress.h"

/* Operations in flight on the RC channel, counted by one completion; their staging buffers
 * (freed, or unpacked into the origin's datatype, once it reaches zero). */
struct rma_rdma {
    struct aptus_completion comp;
    char probe; /* the byte read back to confirm placement */
    struct {
        char *tmp;
        void *ubuf; /* a get into a non-contiguous origin: unpack tmp here */
        size_t count;
        const struct aptus_dtype *dt;
    } * stage;
    int nstage, capstage;
};

struct aptus_channel *rma_rdma_channel(void)
{
    int id = aptus_channel_id_of("rc-rdma");
    struct aptus_channel *ch = id >= 0 && id < APTUS_CH_COUNT ? aptus_channels[id] : NULL;
    if (!ch || !ch->put || !ch->get || !ch->mem_reg || !ch->reaches ||
        (ch->caps.flags & (APTUS_CAP_PUT | APTUS_CAP_GET)) != (APTUS_CAP_PUT | APTUS_CAP_GET))
        return NULL;
    return ch;
}

/* APTUS_RMA_PUT_RDMA_MIN when set, else `soft` bytes over a provider that serves RDMA in the
 * target's process and 0 with an RDMA adapter (whose operations need no target CPU). */
static size_t rdma_min(size_t soft)
{
    if (aptus_config.rma_put_rdma_min >= 0)
        return (size_t)aptus_config.rma_put_rdma_min;
    struct aptus_channel *ch = rma_rdma_channel();
    return ch && (ch->caps.flags & APTUS_CAP_SOFT_RMA) ? soft : 0;
}

/* Puts smaller than this go as (batched) active messages even where RDMA could write them:
 * over a provider that serves RDMA in the target's process, a write and the flush's read-back
 * are two messages from the origin where a batch carrying the put and the flush is one. */
static size_t rdma_put_min(void)
{
    return rdma_min(2048);
}

/* The smallest put or get for which an origin checks a dynamic window's region on another node
 * (a read of the target's table: a round trip, once per region between two completions). With
 * a provider that serves RDMA in the target's process, measured across two namespaces: one
 * operation per flush gains from 8 KiB (get 8 KiB: 28 us checked, 40 by active message), many
 * per flush from 4 KiB; below, the batch and its flush answer cost less than the check. */
static size_t dyn_check_min(void)
{
    return rdma_min(8192);
}

/* RDMA: windows spanning nodes register their memory with the RC channel, if there is one (a
 * dynamic window its control slot, whose table of regions origins read to find their keys) */
int rma_rdma_setup(struct aptus_win *w, int nodes_many, MPI_Aint size)
{
    int rc = 0, n = w->size;
    struct aptus_channel *rch = rma_rdma_channel();
    w->put_rdma_min = rdma_put_min();
    w->dyn_check_min = dyn_check_min();
    if (nodes_many && rch) {
        struct {
            uint64_t addr, key, ok;
        } me = { 0, 0, 0 }, *all = calloc((size_t)n, sizeof *all);
        w->rdma = calloc(1, sizeof *w->rdma);
        void *reg = w->flavor == MPI_WIN_FLAVOR_DYNAMIC ? (void *)rma_my_ctrl(w) : w->base;
        size_t rlen = w->flavor == MPI_WIN_FLAVOR_DYNAMIC ? sizeof(struct rma_ctrl) : (size_t)size;
        if (reg && rlen > 0 && rch->mem_reg(reg, rlen, &w->memh, &me.addr, &me.key) == APTUS_OK)
            me.ok = 1;
        if (!all || !w->rdma)
            rc = MPI_ERR_NO_MEM; /* (out of memory here leaves the others in the allgather, as the
                                    allocations before the first one do: see docs/DESIGN.md) */
        else
            rc = aptus_allgather_internal(w->comm, &me, all, sizeof me);
        for (int r = 0; r < n && !rc; r++) {
            w->t[r].rdma_ok = (uint8_t)all[r].ok;
            w->t[r].rdma_addr = all[r].addr;
            w->t[r].rdma_key = all[r].key;
        }
        free(all);
    }
    return rc;
}

/* The RC endpoint to a target, when its connection is up now; NULL otherwise (active
 * messages then, whose traffic counts toward opening a connection). */
static struct aptus_ep *rdma_ep(const struct rma_target *t, struct aptus_channel **chp)
{
    if (!t->rdma_ok)
        return NULL;
    struct aptus_channel *ch = rma_rdma_channel();
    if (!ch || !ch->reaches(t->world))
        return NULL;
    struct aptus_peer *p = aptus_peer_get(t->world);
    if (!p || p->failed)
        return NULL;
    *chp = ch;
    return aptus_peer_ep(p, ch->id);
}

static int rdma_stage(struct aptus_win *w, char *tmp, void *ubuf, size_t count, const struct aptus_dtype *dt)
{
    struct rma_rdma *d = w->rdma;
    if (d->nstage == d->capstage) {
        int cap = d->capstage ? 2 * d->capstage : 8;
        void *p = realloc(d->stage, sizeof *d->stage * (size_t)cap);
        if (!p)
            return MPI_ERR_NO_MEM;
        d->stage = p;
        d->capstage = cap;
    }
    if (dt)
        aptus_dtype_retain((struct aptus_dtype *)dt);
    d->stage[d->nstage].tmp = tmp;
    d->stage[d->nstage].ubuf = ubuf;
    d->stage[d->nstage].count = count;
    d->stage[d->nstage].dt = dt;
    d->nstage++;
    return 0;
}

/* One RDMA write or read of len bytes at buf to (addr, key), waiting for room when the channel
 * has none; an operation in flight is counted in comp. The channel's status (APTUS_ERR: failed). */
static int rdma_issue(struct aptus_channel *ch, struct aptus_ep *ep, int write, void *buf, size_t len, uint64_t addr,
                      uint64_t key, struct aptus_completion *comp)
{
    unsigned idle = 0;
    int st;
    for (;;) {
        struct iovec iov = { buf, len }; /* (the channel may use it as scratch) */
        st = write ? ch->put(ep, &iov, 1, addr, key, comp) : ch->get(ep, &iov, 1, addr, key, comp);
        if (st != APTUS_NORES)
            break;
        aptus_wait_step(&idle);
    }
    if (st == APTUS_INPROGRESS)
        comp->count++;
    return st;
}

/* Puts or gets the target's ranges from/into the contiguous `data`, piece by piece (at most
 * the channel's largest operation each); waits for room when the channel has none. */
static int rdma_move(struct aptus_win *w, struct rma_target *t, struct aptus_channel *ch, struct aptus_ep *ep,
                     char *data, const struct rma_seg *s, size_t n, int write, uint64_t addr, uint64_t key)
{
    size_t max = write ? ch->caps.put_max : ch->caps.get_max;
    if (!max)
        max = SIZE_MAX;
    for (size_t i = 0; i < n; i++) {
        for (uint64_t done = 0; done < s[i].len;) {
            size_t len = s[i].len - done < max ? (size_t)(s[i].len - done) : max;
            if (rdma_issue(ch, ep, write, data, len, addr + s[i].off + done, key, &w->rdma->comp) == APTUS_ERR)
                return MPI_ERR_OTHER;
            data += len;
            done += len;
        }
    }
    if (write)
        t->rdma_dirty = 1;
    return 0;
}

/* Waits for the RDMA operations in flight, then for the placement of the writes at their
 * targets (target -1: all), and settles the staging buffers. */
int rma_rdma_wait(struct aptus_win *w, int target)
{
    struct rma_rdma *d = w->rdma;
    if (!d)
        return 0;
    unsigned idle = 0;
    /* The read-backs go out at once, without waiting for the writes' local completions: a read
     * on the same connection is answered after the writes before it anyway. */
    struct aptus_channel *ch = rma_rdma_channel();
    for (int r = 0; r < w->size && ch; r++) {
        struct rma_target *t = &w->t[r];
        if (!t->rdma_dirty || (target >= 0 && r != target))
            continue;
        t->rdma_dirty = 0;
        struct aptus_ep *ep = rdma_ep(t, &ch);
        if (!ep) {
            /* the connection closed (idle) after the writes: closing makes them land first */
            while (ch->settling && ch->settling(t->world))
                aptus_wait_step(&idle);
            continue;
        }
        if (ch->flush && ch->flush(ep, &d->comp) == APTUS_INPROGRESS)
            d->comp.count++;
        /* A write's local completion (the tcp provider: handed to the socket) does not say it is
         * in place; a read from the same connection is answered after it: read a byte back (of
         * the window, or of a dynamic window's control slot). */
        if (t->size || w->flavor == MPI_WIN_FLAVOR_DYNAMIC)
            (void)rdma_issue(ch, ep, 0, &d->probe, 1, t->rdma_addr, t->rdma_key, &d->comp);
    }
    while (d->comp.count > 0)
        aptus_wait_step(&idle);
    for (int i = 0; i < d->nstage; i++) {
        if (d->stage[i].dt) {
            aptus_dt_unpack(d->stage[i].tmp, d->stage[i].count, d->stage[i].dt, d->stage[i].ubuf);
            aptus_dtype_release((struct aptus_dtype *)d->stage[i].dt);
        }
        free(d->stage[i].tmp);
    }
    d->nstage = 0;
    int rc = d->comp.status != APTUS_OK ? MPI_ERR_OTHER : 0;
    d->comp.status = APTUS_OK;
    if (target < 0)
        w->rdma_dirty_any = 0;
    return rc;
}

/* Reads len bytes at offset off of the target's registered memory (a dynamic window's control
 * slot) and waits for them: 0, or -1 when the read failed. */
int rma_rdma_read_now(struct rma_target *t, struct aptus_channel *ch, struct aptus_ep *ep, void *buf, size_t len,
                      size_t off)
{
    struct aptus_completion c = { NULL, 0, APTUS_OK };
    int st = rdma_issue(ch, ep, 0, buf, len, t->rdma_addr + off, t->rdma_key, &c);
    unsigned idle = 0;
    while (c.count > 0)
        aptus_wait_step(&idle);
    return st == APTUS_ERR || c.status != APTUS_OK ? -1 : 0;
}

/* rdma_move for a target's ranges: its window's key, or the key of each region a dynamic
 * window's ranges pass through (dyn_ready said they all are in the copy of its table). */
static int rdma_move_to(struct aptus_win *w, struct rma_target *t, struct aptus_channel *ch, struct aptus_ep *ep,
                        char *data, const struct rma_seg *s, size_t n, int write)
{
    if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC)
        return rdma_move(w, t, ch, ep, data, s, n, write, t->rdma_addr, t->rdma_key);
    const struct rma_dyn *d = t->dyn;
    for (size_t i = 0; i < n; i++) {
        uint64_t end = s[i].off + s[i].len;
        for (uint64_t pos = s[i].off; pos < end;) {
            int k = rma_dyn_at(d, pos);
            uint64_t e = d->e[k].r.base + d->e[k].r.size;
            struct rma_seg piece = { pos, (e < end ? e : end) - pos };
            /* (the ranges are addresses: raddr - base + pos lands in the region) */
            int rc = rdma_move(w, t, ch, ep, data, &piece, 1, write, d->e[k].r.raddr - d->e[k].r.base, d->e[k].r.key);
            if (rc)
                return rc;
            data += piece.len;
            pos += piece.len;
        }
    }
    return 0;
}

/* A put or get to a target on another node by RDMA: 1 when done that way (*rc its result), 0
 * when the target is not reachable so (no RC connection up, or not registered; for a dynamic
 * window, no registered region known to hold the ranges -- looked up when `check`). */
int rma_rdma_op(struct aptus_win *w, struct rma_target *t, const struct rma_op *op, const struct rma_seg *s, size_t ns,
                size_t bytes, int check, int *rc)
{
    struct aptus_channel *ch = NULL;
    struct aptus_ep *ep = w->rdma ? rdma_ep(t, &ch) : NULL;
    if (!ep)
        return 0;
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC && !rma_dyn_ready(w, t, ch, ep, s, ns, check))
        return 0;
    *rc = 0;
    if (op->kind == RMA_PUT) {
        char *tmp = NULL;
        const char *data = rma_packed_of(op->obuf, op->ocount, op->odt, &tmp);
        if (!data && bytes)
            *rc = MPI_ERR_NO_MEM;
        if (!*rc)
            *rc = rdma_move_to(w, t, ch, ep, (char *)data, s, ns, 1);
        if (tmp && (*rc || rdma_stage(w, tmp, NULL, 0, NULL)))
            free(tmp); /* (staging failed: the operation waits here) */
        return 1;
    }
    int contig = op->rdt->contig;
    char *out = contig ? (char *)op->rbuf + op->rdt->true_lb : malloc(bytes ? bytes : 1);
    if (!out) {
        *rc = MPI_ERR_NO_MEM;
        return 1;
    }
    *rc = rdma_move_to(w, t, ch, ep, out, s, ns, 0);
    if (!contig && (*rc || rdma_stage(w, out, op->rbuf, op->rcount, op->rdt))) {
        if (!*rc) { /* no room to stage: complete it here */
            *rc = rma_rdma_wait(w, -1);
            aptus_dt_unpack(out, op->rcount, op->rdt, op->rbuf);
        }
        free(out);
    }
    return 1;
}

void rma_rdma_teardown(struct aptus_win *w)
{
    if (w->rdma) {
        rma_rdma_wait(w, -1);
        free(w->rdma->stage);
        free(w->rdma);
    }
    if (w->memh) {
        struct aptus_channel *ch = rma_rdma_channel();
        if (ch && ch->mem_dereg)
            ch->mem_dereg(w->memh);
    }
}
