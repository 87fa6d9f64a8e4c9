/* The posted and unexpected queues, hashed by (context, source, tag).
 *
 * Posted receives with a full envelope go to the bucket of their key; receives with
 * MPI_ANY_SOURCE or MPI_ANY_TAG go to one wildcard list. Every posted receive carries an order
 * stamp: an arriving message takes the first match of its bucket and the first match of the
 * wildcard list, whichever was posted first, which is exactly MPI's order.
 *
 * Unexpected messages always have a full envelope: each sits in its key's bucket and in one
 * list in arrival order. A receive with a full envelope takes the first message of its key
 * in the bucket (the bucket keeps arrival order among equal keys); a wildcard receive scans
 * the arrival list.
 *
 * Both tables double when they hold more than two entries per bucket; rehashing keeps the
 * order of equal keys, the only order that matters. */
#include <stdlib.h>

#include "core/errors.h"
#include "pt2pt/mlayer.h"

#define TABLE_MIN 64

struct pbucket {
    struct aptus_request *head, *tail;
};
struct ubucket {
    struct aptus_unexp *head, *tail;
};

static struct {
    struct pbucket *posted;
    uint32_t pmask, pcount;
    struct pbucket wild;
    uint64_t stamp;
    struct ubucket *unexp;
    uint32_t umask, ucount;
    struct aptus_unexp *uhead, *utail; /* arrival order */
} mt;

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

static void *table_new(uint32_t n, size_t each)
{
    void *t = calloc(n, each);
    if (!t)
        aptus_abort_job(MPI_ERR_NO_MEM, "out of memory for the matching queues");
    return t;
}

void aptus_match_init(void)
{
    memset(&mt, 0, sizeof mt);
    mt.posted = table_new(TABLE_MIN, sizeof *mt.posted);
    mt.pmask = TABLE_MIN - 1;
    mt.unexp = table_new(TABLE_MIN, sizeof *mt.unexp);
    mt.umask = TABLE_MIN - 1;
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

static void pbucket_append(struct pbucket *b, struct aptus_request *r)
{
    r->bucket = b;
    r->next = NULL;
    r->prev = b->tail;
    if (b->tail)
        b->tail->next = r;
    else
        b->head = r;
    b->tail = r;
}

static void pbucket_unlink(struct pbucket *b, struct aptus_request *r)
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

static __attribute__((noinline, cold)) void posted_grow(void)
{
    uint32_t n = 2 * (mt.pmask + 1);
    struct pbucket *t = calloc(n, sizeof *t);
    if (!t)
        return; /* stay at this size: slower, still correct */
    for (uint32_t i = 0; i <= mt.pmask; i++) {
        struct aptus_request *r = mt.posted[i].head;
        while (r) {
            struct aptus_request *next = r->next;
            pbucket_append(&t[key_hash(r->ctx, r->peer, r->tag) & (n - 1)], r);
            r = next;
        }
    }
    free(mt.posted);
    mt.posted = t;
    mt.pmask = n - 1;
}

void aptus_posted_add(struct aptus_request *r)
{
    r->stamp = ++mt.stamp;
    r->posted = 1;
    if (is_wild(r)) {
        pbucket_append(&mt.wild, r);
        return;
    }
    if (++mt.pcount > 2 * (mt.pmask + 1))
        posted_grow();
    pbucket_append(&mt.posted[key_hash(r->ctx, r->peer, r->tag) & mt.pmask], r);
}

int aptus_posted_remove(struct aptus_request *r)
{
    if (!r->posted)
        return 0;
    struct pbucket *b = r->bucket;
    if (b != &mt.wild)
        mt.pcount--;
    pbucket_unlink(b, r);
    r->posted = 0;
    return 1;
}

struct aptus_request *aptus_posted_take(uint16_t ctx, int src, int tag)
{
    struct aptus_request *exact = NULL, *wild = NULL;
    if (!mt.pcount && !mt.wild.head)
        return NULL;
    struct pbucket *b = &mt.posted[key_hash(ctx, src, tag) & mt.pmask];
    for (struct aptus_request *r = b->head; r; r = r->next)
        if (r->ctx == ctx && r->peer == src && r->tag == tag) {
            exact = r;
            break;
        }
    for (struct aptus_request *r = mt.wild.head; r; r = r->next)
        if (matches(r, ctx, src, tag)) {
            wild = r;
            break;
        }
    struct aptus_request *r = !wild ? exact : !exact ? wild : exact->stamp < wild->stamp ? exact : wild;
    if (r)
        aptus_posted_remove(r);
    return r;
}

void aptus_posted_each(void (*fn)(struct aptus_request *r, void *arg), void *arg)
{
    for (uint32_t i = 0; i <= mt.pmask + 1; i++) {
        struct pbucket *b = i <= mt.pmask ? &mt.posted[i] : &mt.wild;
        for (struct aptus_request *r = b->head, *next; r; r = next) {
            next = r->next;
            fn(r, arg);
        }
    }
}

/* ---- unexpected messages ---- */

static void ubucket_append(struct ubucket *b, struct aptus_unexp *u)
{
    u->bnext = NULL;
    u->bprev = b->tail;
    if (b->tail)
        b->tail->bnext = u;
    else
        b->head = u;
    b->tail = u;
}

static __attribute__((noinline, cold)) void unexp_grow(void)
{
    uint32_t n = 2 * (mt.umask + 1);
    struct ubucket *t = calloc(n, sizeof *t);
    if (!t)
        return;
    for (uint32_t i = 0; i <= mt.umask; i++) {
        struct aptus_unexp *u = mt.unexp[i].head;
        while (u) {
            struct aptus_unexp *next = u->bnext;
            ubucket_append(&t[key_hash(u->ctx, u->src, u->tag) & (n - 1)], u);
            u = next;
        }
    }
    free(mt.unexp);
    mt.unexp = t;
    mt.umask = n - 1;
}

void aptus_unexp_add(struct aptus_unexp *u)
{
    if (++mt.ucount > 2 * (mt.umask + 1))
        unexp_grow();
    ubucket_append(&mt.unexp[key_hash(u->ctx, u->src, u->tag) & mt.umask], u);
    u->next = NULL;
    u->prev = mt.utail;
    if (mt.utail)
        mt.utail->next = u;
    else
        mt.uhead = u;
    mt.utail = u;
}

void aptus_unexp_remove(struct aptus_unexp *u)
{
    struct ubucket *b = &mt.unexp[key_hash(u->ctx, u->src, u->tag) & mt.umask];
    if (u->bprev)
        u->bprev->bnext = u->bnext;
    else
        b->head = u->bnext;
    if (u->bnext)
        u->bnext->bprev = u->bprev;
    else
        b->tail = u->bprev;
    if (u->prev)
        u->prev->next = u->next;
    else
        mt.uhead = u->next;
    if (u->next)
        u->next->prev = u->prev;
    else
        mt.utail = u->prev;
    u->next = u->prev = u->bnext = u->bprev = NULL;
    mt.ucount--;
}

struct aptus_unexp *aptus_unexp_find(uint16_t ctx, int src, int tag)
{
    if (!mt.ucount)
        return NULL;
    if (src != MPI_ANY_SOURCE && tag != MPI_ANY_TAG) {
        for (struct aptus_unexp *u = mt.unexp[key_hash(ctx, src, tag) & mt.umask].head; u; u = u->bnext)
            if (u->ctx == ctx && u->src == src && u->tag == tag)
                return u;
        return NULL;
    }
    for (struct aptus_unexp *u = mt.uhead; u; u = u->next)
        if (u->ctx == ctx && (src == MPI_ANY_SOURCE || u->src == src) && (tag == MPI_ANY_TAG || u->tag == tag))
            return u;
    return NULL;
}
