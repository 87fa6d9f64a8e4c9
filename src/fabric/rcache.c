/* The registration cache (see rcache.h). */
#include "fabric/rcache.h"

#include <stdlib.h>
#include <string.h>

int aptus_rcache_init(struct aptus_rcache *c, const struct aptus_rcache_ops *ops, void *ctx,
                      const struct aptus_rcache_cfg *cfg)
{
    memset(c, 0, sizeof *c);
    c->ops = *ops;
    c->ctx = ctx;
    c->cfg = *cfg;
    if (!c->cfg.align)
        c->cfg.align = 4096;
    if (c->cfg.align & (c->cfg.align - 1))
        return -1;
    return 0;
}

/* ---- the least-recently-used list of unused entries ---------------------------------- */

static void lru_remove(struct aptus_rcache *c, struct aptus_rreg *r)
{
    if (r->lru_prev)
        r->lru_prev->lru_next = r->lru_next;
    else
        c->lru_head = r->lru_next;
    if (r->lru_next)
        r->lru_next->lru_prev = r->lru_prev;
    else
        c->lru_tail = r->lru_prev;
    r->lru_prev = r->lru_next = NULL;
}

static void lru_push(struct aptus_rcache *c, struct aptus_rreg *r)
{
    r->lru_prev = NULL;
    r->lru_next = c->lru_head;
    if (c->lru_head)
        c->lru_head->lru_prev = r;
    else
        c->lru_tail = r;
    c->lru_head = r;
}

/* ---- the sorted array ------------------------------------------------------------------ */

/* The number of valid entries whose base is <= a. */
static size_t upper(const struct aptus_rcache *c, uintptr_t a)
{
    size_t lo = 0, hi = c->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->v[mid]->base <= a)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int insert(struct aptus_rcache *c, struct aptus_rreg *r)
{
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 64;
        struct aptus_rreg **v = realloc(c->v, cap * sizeof *v);
        if (!v)
            return -1;
        c->v = v;
        c->cap = cap;
    }
    size_t i = upper(c, r->base);
    memmove(&c->v[i + 1], &c->v[i], (c->n - i) * sizeof *c->v);
    c->v[i] = r;
    c->n++;
    if (r->len > c->longest)
        c->longest = r->len;
    return 0;
}

static void remove_at(struct aptus_rcache *c, size_t i)
{
    memmove(&c->v[i], &c->v[i + 1], (c->n - i - 1) * sizeof *c->v);
    c->n--;
}

static void release(struct aptus_rcache *c, struct aptus_rreg *r)
{
    c->ops.dereg(c->ctx, r->handle);
    c->st.entries--;
    c->st.bytes -= r->len;
    free(r);
}

static void unlink_entry(struct aptus_rcache *c, struct aptus_rreg *r)
{
    for (size_t i = upper(c, r->base); i-- > 0;)
        if (c->v[i] == r) {
            remove_at(c, i);
            break;
        }
}

/* Deregisters unused entries, least recently used first, while over a limit. */
static void evict(struct aptus_rcache *c)
{
    while (c->lru_tail && ((c->cfg.max_entries && c->st.entries > c->cfg.max_entries) ||
                           (c->cfg.max_bytes && c->st.bytes > c->cfg.max_bytes))) {
        struct aptus_rreg *r = c->lru_tail;
        lru_remove(c, r);
        unlink_entry(c, r);
        c->st.evictions++;
        release(c, r);
    }
}

/* ---- API ------------------------------------------------------------------------------- */

struct aptus_rreg *aptus_rcache_get(struct aptus_rcache *c, const void *addr, size_t len)
{
    uintptr_t a = (uintptr_t)addr, end = a + (len ? len : 1);
    /* An entry covering [a, end) starts at or before a, and no earlier than a - longest. */
    for (size_t i = c->cfg.off ? 0 : upper(c, a); i-- > 0;) {
        struct aptus_rreg *r = c->v[i];
        if (a - r->base > c->longest)
            break;
        if (r->base + r->len >= end) {
            if (r->refs++ == 0) {
                lru_remove(c, r);
                c->st.in_use++;
            }
            c->st.hits++;
            return r;
        }
    }
    uintptr_t m = c->cfg.align - 1, base = a & ~m, top = (end + m) & ~m;
    struct aptus_rreg *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->base = base;
    r->len = top - base;
    if (c->ops.reg(c->ctx, (void *)base, r->len, &r->handle) != 0) {
        c->st.reg_failures++;
        free(r);
        return NULL;
    }
    if (insert(c, r) != 0) {
        c->ops.dereg(c->ctx, r->handle);
        free(r);
        return NULL;
    }
    r->refs = 1;
    c->st.misses++;
    c->st.entries++;
    c->st.bytes += r->len;
    c->st.in_use++;
    evict(c);
    return r;
}

void aptus_rcache_put(struct aptus_rcache *c, struct aptus_rreg *r)
{
    if (--r->refs)
        return;
    c->st.in_use--;
    if (r->invalid) {
        release(c, r);
        return;
    }
    if (c->cfg.off) {
        unlink_entry(c, r);
        release(c, r);
        return;
    }
    lru_push(c, r);
    evict(c);
}

size_t aptus_rcache_invalidate(struct aptus_rcache *c, const void *addr, size_t len)
{
    uintptr_t a = (uintptr_t)addr, end = a + len;
    size_t dropped = 0;
    if (!len || !c->n)
        return 0;
    /* Entries overlapping [a, end): base < end and base + len > a. */
    for (size_t i = upper(c, end - 1); i-- > 0;) {
        struct aptus_rreg *r = c->v[i];
        if (r->base + c->longest <= a)
            break;
        if (r->base + r->len <= a)
            continue;
        remove_at(c, i);
        c->st.invalidations++;
        dropped++;
        if (r->refs) {
            r->invalid = 1; /* deregistered when its last user lets go */
        } else {
            lru_remove(c, r);
            release(c, r);
        }
    }
    return dropped;
}

void aptus_rcache_fini(struct aptus_rcache *c)
{
    for (size_t i = 0; i < c->n; i++)
        c->ops.dereg(c->ctx, c->v[i]->handle);
    for (size_t i = 0; i < c->n; i++)
        free(c->v[i]);
    free(c->v);
    memset(c, 0, sizeof *c);
}
