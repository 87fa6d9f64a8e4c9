/* The registration cache (seed 002, H.2): registering memory with the network adapter is
 * costly (pinning pages, a system call, a translation entry), so registrations are kept and
 * found again by address range. Entries are reference-counted while operations use them; an
 * unused one stays registered on a least-recently-used list and is deregistered when the cache
 * grows past its limits (entries and bytes). Memory the application gives back (free, munmap)
 * must be reported with aptus_rcache_invalidate before the same addresses can hold something
 * else: an entry overlapping it is never found again, and is deregistered as soon as nothing
 * uses it.
 *
 * Generic: registration and deregistration are the user's callbacks (the fabric layer's
 * fi_mr_reg in the RC channels; a mock in the unit test). Not thread-safe.
 *
 * Lookup: entries sorted by start address in an array, found by binary search; an entry
 * covering the range may start before the nearest one, so the search walks back over entries
 * that start within the longest entry's length. O(log n + overlaps). Registered ranges are
 * whole pages (cfg.align) around the range asked for. */
#ifndef APTUS_FABRIC_RCACHE_H
#define APTUS_FABRIC_RCACHE_H

#include <stddef.h>
#include <stdint.h>

struct aptus_rcache_ops {
    /* Registers [addr, addr + len); 0 with *handle set, or -1. */
    int (*reg)(void *ctx, void *addr, size_t len, void **handle);
    void (*dereg)(void *ctx, void *handle);
};

struct aptus_rcache_cfg {
    size_t max_entries; /* unused entries are evicted beyond this many in all (0: no limit) */
    size_t max_bytes;   /* ... or beyond this many bytes registered (0: no limit) */
    size_t align;       /* registrations cover whole units of this (a power of two; 0: 4096) */
    int off;            /* 1: no caching -- every get registers, every last put deregisters
                           (to measure what the cache saves) */
};

struct aptus_rcache_stats {
    uint64_t hits, misses;  /* aptus_rcache_get found an entry / registered a new one */
    uint64_t evictions;     /* unused entries deregistered for the limits */
    uint64_t invalidations; /* entries dropped because their memory went away */
    uint64_t reg_failures;  /* registrations the callback refused */
    size_t entries, bytes;  /* registered now (invalidated ones still in use included) */
    size_t in_use;          /* entries with references */
};

/* One registration: what an operation needs (the range and the callback's handle). */
struct aptus_rreg {
    uintptr_t base;
    size_t len;
    void *handle;
    /* The cache's own. */
    uint32_t refs;
    uint8_t invalid;
    struct aptus_rreg *lru_prev, *lru_next;
};

struct aptus_rcache {
    struct aptus_rcache_ops ops;
    void *ctx;
    struct aptus_rcache_cfg cfg;
    struct aptus_rreg **v; /* valid entries by base */
    size_t n, cap;
    size_t longest;                         /* no valid entry is longer (bounds the walk back) */
    struct aptus_rreg *lru_head, *lru_tail; /* unused valid entries, most recent first */
    struct aptus_rcache_stats st;
};

int aptus_rcache_init(struct aptus_rcache *c, const struct aptus_rcache_ops *ops, void *ctx,
                      const struct aptus_rcache_cfg *cfg);
/* Deregisters and frees every entry; none may be in use (an invalidated entry still in use
 * would be left behind). */
void aptus_rcache_fini(struct aptus_rcache *c);

/* A registration covering [addr, addr + len) (len > 0), with a reference; NULL when the
 * callback refused. */
struct aptus_rreg *aptus_rcache_get(struct aptus_rcache *c, const void *addr, size_t len);
/* Drops the reference; the entry becomes unused (or goes, if invalidated meanwhile). */
void aptus_rcache_put(struct aptus_rcache *c, struct aptus_rreg *r);
/* [addr, addr + len) is going away: no entry overlapping it is found again. Returns how many
 * entries were dropped. */
size_t aptus_rcache_invalidate(struct aptus_rcache *c, const void *addr, size_t len);

static inline const struct aptus_rcache_stats *aptus_rcache_stats(const struct aptus_rcache *c)
{
    return &c->st;
}

#endif
