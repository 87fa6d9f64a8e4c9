/* Buffered sends: the buffers of MPI_Buffer_attach (the process's), MPI_Comm_attach_buffer and
 * MPI_Session_attach_buffer (MPI 4.1, 3.6), each a pool carved into pieces, one per buffered
 * send. A piece stays in use until its send has left (its request completes). Each piece costs
 * a small header, well within MPI_BSEND_OVERHEAD. A pool attached with MPI_BUFFER_AUTOMATIC
 * takes every piece from malloc instead.
 *
 * A buffered send on a communicator uses the communicator's pool if a buffer is attached to it,
 * else its session's, else the process's (aptus_bsend_pool_of). Flushing waits until every
 * piece taken before the flush began has been released (pieces carry a sequence number), so
 * sends started during a nonblocking flush do not hold it up. */
#include <stdint.h>
#include <stdlib.h>

#include "core/session.h"
#include "pt2pt/pt2pt.h"

struct piece {
    struct piece *next;            /* next piece in address order (automatic: in the list) */
    struct aptus_bsend_pool *pool; /* the pool it came from */
    size_t size;                   /* bytes including this header */
    uint32_t seq;                  /* the pool's take count when taken */
    uint32_t automatic;            /* malloc'ed (MPI_BUFFER_AUTOMATIC) */
};

struct aptus_bsend_pool {
    char *base; /* the user's buffer (NULL when none or automatic) */
    size_t size;
    int attached;        /* a buffer, or MPI_BUFFER_AUTOMATIC, is attached */
    int automatic;       /* MPI_BUFFER_AUTOMATIC */
    int refs;            /* owner (a communicator or session) + nonblocking flushes in flight */
    uint32_t seq;        /* pieces taken so far */
    size_t in_use;       /* pieces in use, both kinds */
    struct piece *used;  /* in-use pieces of the user's buffer, sorted by address */
    struct piece *autos; /* in-use automatic pieces */
};

/* The process's pool (MPI_Buffer_attach): never freed. */
static struct aptus_bsend_pool process_pool = { .refs = 1 };

struct aptus_bsend_pool *aptus_bsend_process_pool(void)
{
    return &process_pool;
}

struct aptus_bsend_pool *aptus_bsend_pool_new(void)
{
    struct aptus_bsend_pool *p = calloc(1, sizeof *p);
    if (p)
        p->refs = 1;
    return p;
}

/* A pool goes once it has no owner, no nonblocking flush and no piece in use. */
static void pool_free_if_unused(struct aptus_bsend_pool *p)
{
    if (p->refs == 0 && p->in_use == 0 && p != &process_pool)
        free(p);
}

static void pool_unref(struct aptus_bsend_pool *p)
{
    p->refs--;
    pool_free_if_unused(p);
}

void aptus_bsend_pool_drop(struct aptus_bsend_pool *p)
{
    if (!p)
        return;
    /* The owner is gone: nothing new is taken; pieces still in flight keep the pool until
     * their sends have left (aptus_bsend_release frees it with the last one). */
    p->attached = 0;
    p->base = NULL;
    pool_unref(p);
}

struct aptus_bsend_pool *aptus_bsend_pool_of(struct aptus_comm *c)
{
    struct aptus_bsend_pool *p = c->bsend_pool;
    if (p && p->attached)
        return p;
    if (c->session) {
        p = c->session->bsend_pool;
        if (p && p->attached)
            return p;
    }
    return &process_pool;
}

int aptus_bsend_attached(const struct aptus_bsend_pool *p)
{
    return p && p->attached;
}

int aptus_bsend_attach(struct aptus_bsend_pool *p, void *buf, size_t size)
{
    if (p->attached)
        return MPI_ERR_BUFFER;
    p->attached = 1;
    p->automatic = buf == MPI_BUFFER_AUTOMATIC;
    p->base = p->automatic ? NULL : buf;
    p->size = p->automatic ? 0 : size;
    p->used = NULL;
    return 0;
}

/* Whether no piece taken before sequence number `upto` is in use. */
static int pool_flushed(const struct aptus_bsend_pool *p, uint32_t upto)
{
    if (p->in_use == 0)
        return 1;
    for (int k = 0; k < 2; k++)
        for (const struct piece *q = k ? p->autos : p->used; q; q = q->next)
            if ((int32_t)(q->seq - upto) < 0)
                return 0;
    return 1;
}

void aptus_bsend_flush(struct aptus_bsend_pool *p)
{
    uint32_t upto = p->seq;
    unsigned idle = 0;
    while (!pool_flushed(p, upto))
        aptus_wait_step(&idle);
}

int aptus_bsend_detach(struct aptus_bsend_pool *p, void **buf, size_t *size, size_t max)
{
    if (!p->attached) {
        *buf = NULL;
        *size = 0;
        return MPI_ERR_BUFFER;
    }
    if (!p->automatic && p->size > max)
        return MPI_ERR_COUNT;
    unsigned idle = 0;
    while (p->in_use)
        aptus_wait_step(&idle);
    *buf = p->automatic ? MPI_BUFFER_AUTOMATIC : p->base;
    *size = p->size;
    p->attached = 0;
    p->automatic = 0;
    p->base = NULL;
    p->size = 0;
    return 0;
}

/* ---- nonblocking flush: a GENERIC request completed by a background task ---- */

struct iflush {
    struct aptus_bsend_pool *pool;
    struct aptus_request *req;
    uint32_t upto;
};

static int iflush_poll(void *arg)
{
    struct iflush *f = arg;
    if (!pool_flushed(f->pool, f->upto))
        return 0;
    aptus_req_complete(f->req);
    pool_unref(f->pool);
    free(f);
    return 1;
}

int aptus_bsend_iflush(struct aptus_bsend_pool *p, struct aptus_request **out)
{
    struct aptus_request *r = aptus_req_new_nomsg(APTUS_REQ_GENERIC);
    struct iflush *f = malloc(sizeof *f);
    if (!r || !f) {
        if (r)
            aptus_req_free(r);
        free(f);
        return MPI_ERR_NO_MEM;
    }
    f->pool = p;
    f->req = r;
    f->upto = p->seq;
    p->refs++;
    *out = r;
    if (pool_flushed(p, f->upto) || aptus_bg_add(iflush_poll, f)) {
        /* nothing to wait for, or no room for a background task: flush here */
        unsigned idle = 0;
        while (!iflush_poll(f))
            aptus_wait_step(&idle);
    }
    return 0;
}

/* ---- pieces ---- */

void *aptus_bsend_alloc(struct aptus_bsend_pool *p, size_t bytes)
{
    if (!p->attached)
        return NULL;
    size_t need = sizeof(struct piece) + ((bytes + 15) & ~(size_t)15);
    struct piece *got = NULL;
    if (p->automatic) {
        got = malloc(need);
        if (!got)
            return NULL;
        got->automatic = 1;
        got->next = p->autos;
        p->autos = got;
    } else {
        char *start = (char *)(((uintptr_t)p->base + 15) & ~(uintptr_t)15);
        char *end = p->base + p->size;
        struct piece **link = &p->used;
        char *cursor = start;
        for (;;) {
            char *limit = *link ? (char *)*link : end;
            if (limit >= cursor && (size_t)(limit - cursor) >= need) {
                got = (struct piece *)cursor;
                got->automatic = 0;
                got->next = *link;
                *link = got;
                break;
            }
            if (!*link)
                return NULL;
            cursor = (char *)*link + (*link)->size;
            link = &(*link)->next;
        }
    }
    got->size = need;
    got->pool = p;
    got->seq = p->seq++;
    p->in_use++;
    return got + 1;
}

void aptus_bsend_release(void *data)
{
    struct piece *q = (struct piece *)data - 1;
    struct aptus_bsend_pool *p = q->pool;
    for (struct piece **link = q->automatic ? &p->autos : &p->used; *link; link = &(*link)->next)
        if (*link == q) {
            *link = q->next;
            break;
        }
    if (q->automatic)
        free(q);
    p->in_use--;
    pool_free_if_unused(p);
}

/* MPI_Session_finalize (core/session.h): the session's buffered sends complete, then its pool
 * goes. */
void aptus_bsend_session_finalize(struct aptus_session *s)
{
    struct aptus_bsend_pool *p = s->bsend_pool;
    if (!p)
        return;
    aptus_bsend_flush(p);
    s->bsend_pool = NULL;
    aptus_bsend_pool_drop(p);
}
