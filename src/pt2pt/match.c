/* The posted and unexpected queues: one ordered list each while matches are found near the
 * front (the common case, and the cheapest), hashed by (context, source, tag) once a search
 * has had to walk far, back to the list when the queue empties.
 *
 * Hashed posted queue: receives with a full envelope go to the bucket of their key; receives
 * with MPI_ANY_SOURCE or MPI_ANY_TAG go to one wildcard list. Every posted receive carries an
 * order stamp: an arriving message takes the first match of its bucket and the first match of
 * the wildcard list, whichever was posted first, which is exactly MPI's order.
 *
 * Hashed unexpected queue: messages always have a full envelope; each sits in its key's bucket
 * and in the list in arrival order (kept in both modes). A receive with a full envelope takes
 * the first message of its key in the bucket (the bucket keeps arrival order among equal keys);
 * a wildcard receive scans the arrival list.
 *
 * Both tables double when they hold more than two entries per bucket; rehashing keeps the
 * order of equal keys, the only order that matters. */
#include <stdlib.h>

#include "core/errors.h"
#include "pt2pt/mlayer.h"

#define TABLE_MIN 64
/* A search that walks more entries than this switches its queue to hashing. */
#define SCAN_MAX 32

#define mt aptus_mt
struct aptus_match_state aptus_mt;

static inline uint32_t key_hash(uint16_t ctx, int src, int tag)
{
    uint32_t h = (uint32_t)ctx * 0x9e3779b1u ^ (uint32_t)src * 0x85ebca77u ^ (uint32_t)tag * 0xc2b2ae3du;
    return h ^ (h >> 15);
}

static inline int is_wild(const struct aptus_request *r)
{
    return r->peer == MPI_ANY_SOURCE || r->tag == MPI_ANY_TAG;
}

static inline int matches(const struct aptus_request *r, uint16_t ctx, int src, int tag)
{
    return r->ctx == ctx && (r->peer == src || r->peer == MPI_ANY_SOURCE) && (r->tag == tag || r->tag == MPI_ANY_TAG);
}

void aptus_match_init(void)
{
    memset(&mt, 0, sizeof mt);
}

void aptus_match_finalize(void)
{
    while (mt.uhead) {
        struct aptus_unexp *u = mt.uhead;
        mt.uhead = u->next;
        free(u);
    }
    free(mt.posted);
    free(mt.unexp);
    memset(&mt, 0, sizeof mt);
}

/* ---- posted receives ---- */

static inline void pbucket_unlink(struct pbucket *b, struct aptus_request *r)
{
    if (r->prev)
        r->prev->next = r->next;
    else
        b->head = r->next;
    if (r->next)
        r->next->prev = r->prev;
    else
        b->tail = r->prev;
    r->next = r->prev = NULL;
}

static inline void phash_insert(struct aptus_request *r)
{
    if (is_wild(r)) {
        aptus_pbucket_append(&mt.wild, r);
    } else {
        mt.pcount++;
        aptus_pbucket_append(&mt.posted[key_hash(r->ctx, r->peer, r->tag) & mt.pmask], r);
    }
}

/* Rehashes into a table of n buckets (keeps the order of equal keys). 0, or -1 (no memory:
 * the queue stays as it is, slower but correct). */
static __attribute__((noinline, cold)) int posted_rehash(uint32_t n)
{
    struct pbucket *t = calloc(n, sizeof *t), *old = mt.posted;
    if (!t)
        return -1;
    uint32_t oldn = mt.posted ? mt.pmask + 1 : 0;
    mt.posted = t;
    mt.pmask = n - 1;
    mt.pcount = 0;
    for (uint32_t i = 0; i < oldn; i++) {
        struct aptus_request *r = old[i].head;
        while (r) {
            struct aptus_request *next = r->next;
            phash_insert(r);
            r = next;
        }
    }
    free(old);
    return 0;
}

/* The linear list becomes the hashed queue (wildcards to their list), in order. */
static __attribute__((noinline, cold)) void posted_to_hash(void)
{
    uint32_t n = TABLE_MIN;
    while (2 * n < mt.pall)
        n *= 2;
    if ((!mt.posted || mt.pmask + 1 < n) && posted_rehash(n) != 0)
        return;
    struct aptus_request *r = mt.lin.head;
    mt.lin.head = mt.lin.tail = NULL;
    while (r) {
        struct aptus_request *next = r->next;
        phash_insert(r);
        r = next;
    }
    mt.phashed = 1;
}

static inline __attribute__((always_inline)) void posted_add(struct aptus_request *r)
{
    aptus_posted_stamp(r);
    if (!mt.phashed) {
        aptus_pbucket_append(&mt.lin, r);
        return;
    }
    phash_insert(r);
    if (mt.pcount > 2 * (mt.pmask + 1))
        posted_rehash(2 * (mt.pmask + 1));
}

static inline void posted_unlink(struct aptus_request *r)
{
    struct pbucket *b = r->bucket;
    if (b != &mt.lin && b != &mt.wild)
        mt.pcount--;
    pbucket_unlink(b, r);
    r->posted = 0;
    if (mt.pall > mt.phwm) /* (the queue's longest is always seen here, before it shrinks) */
        mt.phwm = mt.pall;
    if (--mt.pall == 0)
        mt.phashed = 0; /* empty: back to the cheap list */
}

int aptus_posted_remove(struct aptus_request *r)
{
    if (!r->posted)
        return 0;
    posted_unlink(r);
    return 1;
}

struct aptus_request *aptus_posted_take(uint16_t ctx, int src, int tag)
{
    if (!mt.pall)
        return NULL;
    struct aptus_request *r;
    if (!mt.phashed) {
        int walked = 0;
        for (r = mt.lin.head; r; r = r->next, walked++)
            if (matches(r, ctx, src, tag))
                break;
        if (r)
            posted_unlink(r);
        if (walked > SCAN_MAX && mt.pall)
            posted_to_hash();
        return r;
    }
    struct aptus_request *exact = NULL, *wild = NULL;
    for (r = mt.posted[key_hash(ctx, src, tag) & mt.pmask].head; r; r = r->next)
        if (r->ctx == ctx && r->peer == src && r->tag == tag) {
            exact = r;
            break;
        }
    for (r = mt.wild.head; r; r = r->next)
        if (matches(r, ctx, src, tag)) {
            wild = r;
            break;
        }
    r = !wild ? exact : !exact ? wild : exact->stamp < wild->stamp ? exact : wild;
    if (r)
        posted_unlink(r);
    return r;
}

int aptus_posted_ahead(const struct aptus_request *r)
{
    int n = 0, walked = 0;
    if (!mt.phashed) {
        for (const struct aptus_request *q = mt.lin.head; q && q != r; q = q->next) {
            if (++walked > 4 * SCAN_MAX)
                return -1; /* (a long queue: not worth the walk) */
            if (q->ctx != r->ctx)
                continue;
            if (is_wild(q)) {
                if ((q->peer == MPI_ANY_SOURCE || q->peer == r->peer) && (q->tag == MPI_ANY_TAG || q->tag == r->tag))
                    return -1;
            } else if (q->peer == r->peer && q->tag == r->tag) {
                n++;
            }
        }
        return n;
    }
    for (const struct aptus_request *q = mt.wild.head; q; q = q->next)
        if (matches(q, r->ctx, r->peer, r->tag))
            return -1;
    for (const struct aptus_request *q = mt.posted[key_hash(r->ctx, r->peer, r->tag) & mt.pmask].head; q && q != r;
         q = q->next)
        if (q->ctx == r->ctx && q->peer == r->peer && q->tag == r->tag)
            n++;
    return n;
}

void aptus_posted_each(void (*fn)(struct aptus_request *r, void *arg), void *arg)
{
    uint32_t n = mt.posted ? mt.pmask + 1 : 0;
    for (uint32_t i = 0; i < n + 2; i++) {
        struct pbucket *b = i < n ? &mt.posted[i] : i == n ? &mt.wild : &mt.lin;
        for (struct aptus_request *r = b->head, *next; r; r = next) {
            next = r->next;
            fn(r, arg);
        }
    }
}

/* ---- unexpected messages ---- */

static inline void ubucket_append(struct ubucket *b, struct aptus_unexp *u)
{
    u->bnext = NULL;
    u->bprev = b->tail;
    if (b->tail)
        b->tail->bnext = u;
    else
        b->head = u;
    b->tail = u;
}

/* (Re)builds the buckets, n of them, from the arrival list (so equal keys keep their order). */
static __attribute__((noinline, cold)) void unexp_rehash(uint32_t n)
{
    struct ubucket *t = calloc(n, sizeof *t);
    if (!t)
        return; /* stay as it is: slower, still correct */
    free(mt.unexp);
    mt.unexp = t;
    mt.umask = n - 1;
    for (struct aptus_unexp *u = mt.uhead; u; u = u->next)
        ubucket_append(&t[key_hash(u->ctx, u->src, u->tag) & (n - 1)], u);
    mt.uhashed = 1;
}

void aptus_unexp_add(struct aptus_unexp *u)
{
    u->next = NULL;
    u->prev = mt.utail;
    if (mt.utail)
        mt.utail->next = u;
    else
        mt.uhead = u;
    mt.utail = u;
    if (++mt.ucount > mt.uhwm)
        mt.uhwm = mt.ucount;
    if (!mt.uhashed)
        return;
    ubucket_append(&mt.unexp[key_hash(u->ctx, u->src, u->tag) & mt.umask], u);
    if (mt.ucount > 2 * (mt.umask + 1))
        unexp_rehash(2 * (mt.umask + 1));
}

static inline __attribute__((always_inline)) void unexp_remove(struct aptus_unexp *u)
{
    if (mt.uhashed) {
        struct ubucket *b = &mt.unexp[key_hash(u->ctx, u->src, u->tag) & mt.umask];
        if (u->bprev)
            u->bprev->bnext = u->bnext;
        else
            b->head = u->bnext;
        if (u->bnext)
            u->bnext->bprev = u->bprev;
        else
            b->tail = u->bprev;
    }
    if (u->prev)
        u->prev->next = u->next;
    else
        mt.uhead = u->next;
    if (u->next)
        u->next->prev = u->prev;
    else
        mt.utail = u->prev;
    u->next = u->prev = u->bnext = u->bprev = NULL;
    if (--mt.ucount == 0 && mt.uhashed) {
        /* empty: back to the list alone (the table is kept for next time) */
        memset(mt.unexp, 0, (mt.umask + 1) * sizeof *mt.unexp);
        mt.uhashed = 0;
    }
}

static inline __attribute__((always_inline)) struct aptus_unexp *unexp_find(uint16_t ctx, int src, int tag)
{
    if (!mt.ucount)
        return NULL;
    int wild = src == MPI_ANY_SOURCE || tag == MPI_ANY_TAG;
    if (mt.uhashed && !wild) {
        for (struct aptus_unexp *u = mt.unexp[key_hash(ctx, src, tag) & mt.umask].head; u; u = u->bnext)
            if (u->ctx == ctx && u->src == src && u->tag == tag)
                return u;
        return NULL;
    }
    int walked = 0;
    struct aptus_unexp *u;
    for (u = mt.uhead; u; u = u->next, walked++)
        if (u->ctx == ctx && (src == MPI_ANY_SOURCE || u->src == src) && (tag == MPI_ANY_TAG || u->tag == tag))
            break;
    if (walked > SCAN_MAX && !wild && !mt.uhashed) {
        uint32_t n = mt.unexp ? mt.umask + 1 : TABLE_MIN;
        while (2 * n < mt.ucount)
            n *= 2;
        unexp_rehash(n);
    }
    return u;
}

void aptus_posted_add(struct aptus_request *r)
{
    posted_add(r);
}

struct aptus_unexp *aptus_unexp_find(uint16_t ctx, int src, int tag)
{
    return unexp_find(ctx, src, tag);
}

void aptus_unexp_remove(struct aptus_unexp *u)
{
    unexp_remove(u);
}

struct aptus_unexp *aptus_unexp_take_or_post_slow(struct aptus_request *r)
{
    struct aptus_unexp *u = mt.ucount ? unexp_find(r->ctx, r->peer, r->tag) : NULL;
    if (u)
        unexp_remove(u);
    else
        posted_add(r);
    return u;
}
