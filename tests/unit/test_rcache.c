/* The registration cache (src/fabric/rcache.c) with a mock registration that records every
 * registered range: hits and misses, ranges inside a registration, whole-page registrations,
 * references, least-recently-used eviction by count and by bytes, invalidation of unused and
 * of in-use entries, and a seeded random run checked against the mock after every step: every
 * registration handed out covers its range and is live, every live registration is one the
 * cache holds, nothing handed out after its memory was invalidated. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabric/rcache.h"

static int failures;
#define CHECK(cond, ...)                                                                                               \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            fprintf(stderr, "test_rcache:%d: ", __LINE__);                                                             \
            fprintf(stderr, __VA_ARGS__);                                                                              \
            fputc('\n', stderr);                                                                                       \
            failures++;                                                                                                \
        }                                                                                                              \
    } while (0)

/* The mock: live registrations by handle (an index into this table). */
#define MAXREG 65536
static struct {
    uintptr_t base;
    size_t len;
    int live;
} regs[MAXREG];
static int nregs, nlive, refuse;

static int mock_reg(void *ctx, void *addr, size_t len, void **handle)
{
    (void)ctx;
    if (refuse || nregs == MAXREG)
        return -1;
    regs[nregs].base = (uintptr_t)addr;
    regs[nregs].len = len;
    regs[nregs].live = 1;
    *handle = (void *)(uintptr_t)(nregs + 1);
    nregs++;
    nlive++;
    return 0;
}

static void mock_dereg(void *ctx, void *handle)
{
    (void)ctx;
    int i = (int)(uintptr_t)handle - 1;
    if (i < 0 || i >= nregs || !regs[i].live) {
        fprintf(stderr, "test_rcache: deregistered handle %d twice or never registered\n", i + 1);
        failures++;
        return;
    }
    regs[i].live = 0;
    nlive--;
}

static const struct aptus_rcache_ops ops = { mock_reg, mock_dereg };

static int covers(const struct aptus_rreg *r, uintptr_t a, size_t len)
{
    int i = (int)(uintptr_t)r->handle - 1;
    return r->base <= a && r->base + r->len >= a + len && i >= 0 && i < nregs && regs[i].live &&
           regs[i].base == r->base && regs[i].len == r->len;
}

#define PG   4096u
#define A(x) ((uintptr_t)0x10000000u + (uintptr_t)(x))

static void basics(void)
{
    struct aptus_rcache c;
    struct aptus_rcache_cfg cfg = { 0, 0, PG, 0 };
    CHECK(aptus_rcache_init(&c, &ops, NULL, &cfg) == 0, "init");
    struct aptus_rreg *r1 = aptus_rcache_get(&c, (void *)A(100), 5000);
    CHECK(r1 && covers(r1, A(100), 5000) && r1->base == A(0) && r1->len == 2 * PG,
          "a miss registers the whole pages around the range");
    struct aptus_rreg *r2 = aptus_rcache_get(&c, (void *)A(200), 100);
    CHECK(r2 == r1 && c.st.hits == 1 && c.st.misses == 1, "a range inside is a hit");
    aptus_rcache_put(&c, r2);
    aptus_rcache_put(&c, r1);
    CHECK(c.st.in_use == 0 && nlive == 1, "unused entries stay registered");
    struct aptus_rreg *r3 = aptus_rcache_get(&c, (void *)A(2 * PG - 10), 20);
    CHECK(r3 && r3 != r1 && covers(r3, A(2 * PG - 10), 20), "a range beyond the entry is a miss");
    aptus_rcache_put(&c, r3);
    /* Invalidating an unused entry deregisters it at once; the next get registers anew. */
    CHECK(aptus_rcache_invalidate(&c, (void *)A(0), 1) == 1 && !regs[0].live && regs[1].live,
          "the unused entry overlapping is dropped at once, the other kept");
    struct aptus_rreg *r4 = aptus_rcache_get(&c, (void *)A(100), 10);
    CHECK(r4 && r4 != r1 && covers(r4, A(100), 10) && c.st.misses == 3, "an invalidated range is registered anew");
    /* Invalidating an entry in use: not found again, deregistered when put. */
    size_t live_before = (size_t)nlive;
    CHECK(aptus_rcache_invalidate(&c, (void *)A(0), PG) == 1, "in-use entry dropped from the lookup");
    CHECK((size_t)nlive == live_before, "an entry in use stays registered until put");
    struct aptus_rreg *r5 = aptus_rcache_get(&c, (void *)A(100), 10);
    CHECK(r5 && r5 != r4, "an invalidated entry in use is not found again");
    aptus_rcache_put(&c, r4);
    CHECK((size_t)nlive == live_before, "put of the invalidated entry deregisters it (one new, one gone)");
    aptus_rcache_put(&c, r5);
    /* A refused registration. */
    refuse = 1;
    CHECK(!aptus_rcache_get(&c, (void *)A(100 * PG), 10) && c.st.reg_failures == 1, "a refusal is reported");
    refuse = 0;
    aptus_rcache_fini(&c);
    CHECK(nlive == 0, "fini deregisters everything (%d left)", nlive);
}

static void eviction(void)
{
    struct aptus_rcache c;
    struct aptus_rcache_cfg cfg = { 3, 0, PG, 0 };
    aptus_rcache_init(&c, &ops, NULL, &cfg);
    struct aptus_rreg *r[5];
    for (int i = 0; i < 5; i++)
        r[i] = aptus_rcache_get(&c, (void *)A((uintptr_t)i * 10 * PG), 10);
    CHECK(c.st.entries == 5 && c.st.evictions == 0, "entries in use are never evicted");
    for (int i = 0; i < 5; i++)
        aptus_rcache_put(&c, r[i]);
    CHECK(c.st.entries == 3 && c.st.evictions == 2, "the limit holds once they are unused (%zu)", c.st.entries);
    /* The two put first (least recently used) went. */
    struct aptus_rreg *x = aptus_rcache_get(&c, (void *)A(0), 10);
    CHECK(c.st.misses == 6, "the least recently used entry was evicted");
    aptus_rcache_put(&c, x);
    struct aptus_rreg *y = aptus_rcache_get(&c, (void *)A(40 * PG), 10);
    CHECK(c.st.hits == 1, "a recently used entry stayed");
    aptus_rcache_put(&c, y);
    aptus_rcache_fini(&c);
    /* By bytes. */
    struct aptus_rcache_cfg cfgb = { 0, 8 * PG, PG, 0 };
    aptus_rcache_init(&c, &ops, NULL, &cfgb);
    for (int i = 0; i < 6; i++)
        aptus_rcache_put(&c, aptus_rcache_get(&c, (void *)A((uintptr_t)i * 10 * PG), 3 * PG));
    CHECK(c.st.bytes <= 8 * PG && c.st.entries == 2, "the byte limit holds (%zu bytes)", c.st.bytes);
    aptus_rcache_fini(&c);
    CHECK(nlive == 0, "fini deregisters everything");
}

/* cfg.off: no caching -- every get registers, the last put deregisters; two uses of one range
 * at once each have their own registration. */
static void off(void)
{
    struct aptus_rcache c;
    struct aptus_rcache_cfg cfg = { 0, 0, PG, 1 };
    aptus_rcache_init(&c, &ops, NULL, &cfg);
    struct aptus_rreg *a = aptus_rcache_get(&c, (void *)A(100), 10), *b = aptus_rcache_get(&c, (void *)A(100), 10);
    CHECK(a && b && a != b && covers(a, A(100), 10) && covers(b, A(100), 10) && nlive == 2,
          "off: each get registers (%d live)", nlive);
    aptus_rcache_put(&c, a);
    CHECK(nlive == 1 && covers(b, A(100), 10), "off: a put deregisters that use only (%d live)", nlive);
    aptus_rcache_put(&c, b);
    CHECK(nlive == 0 && c.st.entries == 0 && c.st.misses == 2 && c.st.hits == 0, "off: nothing kept (%d live)", nlive);
    aptus_rcache_fini(&c);
}

/* Random gets, puts and invalidations over a small address range, checked at every step. */
static void random_run(unsigned seed)
{
    struct aptus_rcache c;
    struct aptus_rcache_cfg cfg = { 16, 64 * PG, PG, 0 };
    aptus_rcache_init(&c, &ops, NULL, &cfg);
    struct aptus_rreg *held[32] = { 0 };
    uintptr_t hbase[32];
    size_t hlen[32];
    uint64_t rng = seed * 2654435761u + 1;
#define RND() (rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17, rng)
    for (int step = 0; step < 20000; step++) {
        int k = (int)(RND() % 32);
        int op = (int)(RND() % 10);
        if (op < 5 && !held[k]) {
            uintptr_t a = A(RND() % (48 * PG));
            size_t len = 1 + RND() % (6 * PG);
            held[k] = aptus_rcache_get(&c, (void *)a, len);
            hbase[k] = a;
            hlen[k] = len;
            if (!held[k] || !covers(held[k], a, len)) {
                CHECK(0, "step %d: get(%#lx, %zu) gave no live registration covering it", step, (unsigned long)a, len);
                break;
            }
        } else if (op < 9 && held[k]) {
            aptus_rcache_put(&c, held[k]);
            held[k] = NULL;
        } else if (op == 9) {
            uintptr_t a = A(RND() % (48 * PG));
            size_t len = 1 + RND() % (4 * PG);
            aptus_rcache_invalidate(&c, (void *)a, len);
            /* Nothing overlapping may be found again: a get now must register anew. */
            for (size_t i = 0; i < c.n; i++)
                if (c.v[i]->base < a + len && c.v[i]->base + c.v[i]->len > a) {
                    CHECK(0, "step %d: an entry overlapping invalidated memory is still in the lookup", step);
                    i = c.n;
                }
        }
        /* Held registrations stay live (even invalidated ones, until put). */
        for (int i = 0; i < 32; i++)
            if (held[i] && !covers(held[i], hbase[i], hlen[i])) {
                CHECK(0, "step %d: a held registration was deregistered", step);
                step = 20000;
                break;
            }
        /* Limits: only entries in use may exceed them. */
        if (c.st.entries > cfg.max_entries && c.st.entries > c.st.in_use + 0 && c.lru_tail) {
            CHECK(0, "step %d: %zu entries with unused ones left (limit %zu)", step, c.st.entries, cfg.max_entries);
            break;
        }
    }
    for (int i = 0; i < 32; i++)
        if (held[i])
            aptus_rcache_put(&c, held[i]);
    CHECK((size_t)nlive == c.st.entries, "the cache's count (%zu) and the live registrations (%d) agree", c.st.entries,
          nlive);
    printf("seed %u: hits %llu, misses %llu, evictions %llu, invalidations %llu\n", seed, (unsigned long long)c.st.hits,
           (unsigned long long)c.st.misses, (unsigned long long)c.st.evictions, (unsigned long long)c.st.invalidations);
    aptus_rcache_fini(&c);
    CHECK(nlive == 0, "fini deregisters everything");
}

int main(void)
{
    basics();
    nregs = 0;
    eviction();
    nregs = 0;
    off();
    for (unsigned s = 1; s <= 3; s++) {
        nregs = 0;
        random_run(s);
    }
    if (failures) {
        fprintf(stderr, "test_rcache: %d check(s) failed\n", failures);
        return 1;
    }
    printf("test_rcache: ok\n");
    return 0;
}
