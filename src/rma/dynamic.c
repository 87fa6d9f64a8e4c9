/* Dynamic windows: MPI_Win_attach/detach and the table of regions each rank publishes in its
 * control slot (read by the origins of the node, under a sequence count); an origin's copy of a
 * table on another node, read by RDMA, and when its keys may be trusted (rma_internal.h,
 * struct rma_dyn). */
#include "rma/rma_internal.h"

#include <stdlib.h>
#include <string.h>

#include "channel/channel.h"
#include "runtime/lock.h"

/* Whether [off, off + len) is covered by attached regions (adjacent regions together count:
 * an access may run from one into the next). base[k], size[k] at stride bytes apart. */
int rma_covered(uint64_t off, uint64_t len, const uint64_t *base, const uint64_t *size, size_t stride, uint32_t nr)
{
    uint64_t pos = off, end = off + len;
    if (end < off)
        return 0;
    while (pos < end) {
        uint64_t next = pos;
        for (uint32_t k = 0; k < nr && next == pos; k++) {
            uint64_t b = *(const uint64_t *)(const void *)((const char *)base + k * stride);
            uint64_t z = *(const uint64_t *)(const void *)((const char *)size + k * stride);
            if (pos >= b && pos - b < z)
                next = b + z;
        }
        if (next == pos)
            return 0;
        pos = next;
    }
    return 1;
}

/* Whether every range lies inside memory attached at the target (its control slot's table).
 * The owner may detach (and so rewrite the table) while an origin reads it: the reader copies
 * the table between two reads of its sequence count and retries when the owner was writing
 * (sequentially consistent accesses throughout: no fences, which ThreadSanitizer does not model). */
int rma_segs_attached(const struct rma_seg *s, size_t n, const struct rma_ctrl *c)
{
    struct rma_seg t[RMA_REGIONS_MAX];
    uint32_t nr;
    for (;;) {
        uint32_t g = __atomic_load_n(&c->gen, __ATOMIC_SEQ_CST);
        if (g & 1) {
            aptus_cpu_relax();
            continue;
        }
        nr = __atomic_load_n(&c->nregions, __ATOMIC_SEQ_CST);
        if (nr > RMA_REGIONS_MAX)
            nr = RMA_REGIONS_MAX;
        for (uint32_t k = 0; k < nr; k++) {
            t[k].off = __atomic_load_n(&c->region[k].base, __ATOMIC_SEQ_CST);
            t[k].len = __atomic_load_n(&c->region[k].size, __ATOMIC_SEQ_CST);
        }
        if (__atomic_load_n(&c->gen, __ATOMIC_SEQ_CST) == g)
            break;
    }
    for (size_t i = 0; i < n; i++)
        if (!rma_covered(s[i].off, s[i].len, &t[0].off, &t[0].len, sizeof t[0], nr))
            return 0;
    return 1;
}

/* The control slot's table mirrors the first RMA_REGIONS_MAX regions of the private list, so
 * that origins of the node check their ranges (and copy by Cross Memory Attach) without the
 * target; beyond it they let the target's agent check. */
static void regions_publish(struct aptus_win *w)
{
    struct rma_ctrl *c = rma_my_ctrl(w);
    uint32_t n = w->nregions < RMA_REGIONS_MAX ? (uint32_t)w->nregions : RMA_REGIONS_MAX;
    uint32_t g = __atomic_load_n(&c->gen, __ATOMIC_SEQ_CST);
    __atomic_store_n(&c->gen, g + 1, __ATOMIC_SEQ_CST);
    for (uint32_t i = 0; i < n; i++) {
        __atomic_store_n(&c->region[i].base, w->regions[i].off, __ATOMIC_SEQ_CST);
        __atomic_store_n(&c->region[i].size, w->regions[i].len, __ATOMIC_SEQ_CST);
        __atomic_store_n(&c->region[i].raddr, w->regions[i].raddr, __ATOMIC_SEQ_CST);
        __atomic_store_n(&c->region[i].key, w->regions[i].key, __ATOMIC_SEQ_CST);
        __atomic_store_n(&c->region[i].rdma, (uint64_t)(w->regions[i].mh != NULL), __ATOMIC_SEQ_CST);
    }
    __atomic_store_n(&c->nregions, n, __ATOMIC_SEQ_CST);
    __atomic_store_n(&c->overflow, w->nregions > RMA_REGIONS_MAX, __ATOMIC_SEQ_CST);
    __atomic_store_n(&c->gen, g + 2, __ATOMIC_SEQ_CST);
}

int aptus_win_attach(struct aptus_win *w, void *base, MPI_Aint size, const char **why)
{
    if (size == 0)
        return 0;
    uint64_t b0 = (uint64_t)(uintptr_t)base, e0 = b0 + (uint64_t)size;
    for (int i = 0; i < w->nregions; i++) {
        uint64_t b = w->regions[i].off, e = b + w->regions[i].len;
        if (b0 < e && e0 > b) {
            *why = "the region overlaps a region already attached";
            return MPI_ERR_RMA_ATTACH;
        }
    }
    if (w->nregions == w->capregions) {
        int cap = w->capregions ? 2 * w->capregions : 16;
        struct rma_region *r = realloc(w->regions, sizeof *r * (size_t)cap);
        if (!r) {
            *why = "out of memory";
            return MPI_ERR_NO_MEM;
        }
        w->regions = r;
        w->capregions = cap;
    }
    struct rma_region *g = &w->regions[w->nregions++];
    *g = (struct rma_region){ b0, (uint64_t)size, 0, 0, NULL };
    /* origins on other nodes reach it by RDMA when it can be registered (else by active messages) */
    struct aptus_channel *ch = w->rdma ? rma_rdma_channel() : NULL;
    if (ch && ch->mem_reg(base, (size_t)size, &g->mh, &g->raddr, &g->key) != APTUS_OK)
        g->mh = NULL;
    regions_publish(w);
    return 0;
}

int aptus_win_detach(struct aptus_win *w, const void *base, const char **why)
{
    for (int i = 0; i < w->nregions; i++) {
        if (w->regions[i].off != (uint64_t)(uintptr_t)base)
            continue;
        struct aptus_memh *mh = w->regions[i].mh;
        memmove(w->regions + i, w->regions + i + 1, sizeof *w->regions * (size_t)(w->nregions - i - 1));
        w->nregions--;
        regions_publish(w);
        if (mh) /* (through the registration cache: it may stay registered, unused) */
            rma_rdma_channel()->mem_dereg(mh);
        return 0;
    }
    *why = "no region attached at this address";
    return MPI_ERR_RMA_ATTACH;
}

/* The registered region of the origin's copy of the target's table that holds address pos;
 * -1: none. */
int rma_dyn_at(const struct rma_dyn *d, uint64_t pos)
{
    for (uint32_t k = 0; k < d->n; k++)
        if (pos >= d->e[k].r.base && pos - d->e[k].r.base < d->e[k].r.size)
            return d->e[k].r.rdma ? (int)k : -1;
    return -1;
}

/* Whether every byte of the ranges lies in registered regions of the copy (an access may run
 * from one region into the next); with mark, those regions are marked checked in the interval
 * `stamp`, else *need is set when one of them is not checked in it. */
static int dyn_cover(struct rma_dyn *d, const struct rma_seg *s, size_t n, uint32_t stamp, int mark, int *need)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t end = s[i].off + s[i].len;
        for (uint64_t pos = s[i].off; pos < end;) {
            int k = rma_dyn_at(d, pos);
            if (k < 0)
                return 0;
            if (mark)
                d->e[k].checked = stamp;
            else if (d->e[k].checked != stamp)
                *need = 1;
            uint64_t e = d->e[k].r.base + d->e[k].r.size;
            pos = e < end ? e : end;
        }
    }
    return 1;
}

/* Reads the target's sequence count and, when it differs from the copy's, the table (then the
 * count again: a sequence lock). 0, or -1 when the owner was rewriting it or a read failed. */
static int dyn_refresh(struct rma_target *t, struct aptus_channel *ch, struct aptus_ep *ep)
{
    struct rma_dyn *d = t->dyn;
    uint32_t g;
    rma_stats.dyn_reads++;
    if (rma_rdma_read_now(t, ch, ep, &g, sizeof g, offsetof(struct rma_ctrl, gen)) || (g & 1))
        return -1;
    if (g == d->gen)
        return 0;
    struct rma_ctrl *c = malloc(sizeof *c);
    uint32_t g2 = 1;
    int bad = !c || rma_rdma_read_now(t, ch, ep, c, sizeof *c, 0) ||
              rma_rdma_read_now(t, ch, ep, &g2, sizeof g2, offsetof(struct rma_ctrl, gen)) || g2 != g;
    if (!bad) {
        d->n = c->nregions < RMA_REGIONS_MAX ? c->nregions : RMA_REGIONS_MAX;
        for (uint32_t i = 0; i < d->n; i++) {
            d->e[i].r = c->region[i];
            d->e[i].checked = 0;
        }
        d->gen = g;
    }
    free(c);
    return bad ? -1 : 0;
}

/* Whether the ranges of an operation on a dynamic window on another node can go by RDMA: every
 * byte in a registered region checked in this interval between completions (struct rma_dyn) --
 * after a check (a round trip) when `check` and one of them is not. 0: active message (not
 * attached there as registered regions, the table outgrown, being rewritten, or a read failed:
 * the target's agent then checks the ranges). */
int rma_dyn_ready(struct aptus_win *w, struct rma_target *t, struct aptus_channel *ch, struct aptus_ep *ep,
                  const struct rma_seg *s, size_t n, int check)
{
    struct rma_dyn *d = t->dyn;
    if (!d) {
        if (!check || !(d = t->dyn = calloc(1, sizeof *d)))
            return 0;
        d->gen = 1;
    }
    uint32_t stamp = w->sync_seq + 1;
    int need = 0;
    if (dyn_cover(d, s, n, stamp, 0, &need) && !need)
        return 1;
    if (!check || dyn_refresh(t, ch, ep))
        return 0;
    return dyn_cover(d, s, n, stamp, 1, &need);
}
