/* Schedules of nonblocking and persistent collectives: recording and execution (see nbc.h). */
#include "coll/nbc.h"

#include <stdlib.h>
#include <string.h>

#include "coll/coll_internal.h"
#include "core/context.h"
#include "core/datatype.h"
#include "pt2pt/pt2pt.h"
#include "runtime/config.h"

_Thread_local struct aptus_nbc *aptus_nbc_rec __attribute__((tls_model("initial-exec")));

enum { ST_SEND, ST_RECV, ST_WAIT, ST_LOCAL };

#define NBC_TAGS_MAX 4

struct nbc_step {
    uint8_t kind;
    union {
        struct { /* ST_SEND, ST_RECV */
            struct aptus_comm *c;
            void *buf;
            size_t bytes;
            const struct aptus_dtype *dt; /* NULL: bytes of packed data */
            size_t count;
            int peer, tag; /* tag: added to tagbase[tg] */
            uint16_t ctx;
            uint8_t tg; /* 0: the tag as recorded; t + 1: relative to the tag base t (cached) */
        } m;
        struct { /* ST_WAIT: the message steps ids[first .. first + n) */
            uint32_t first, n;
        } w;
        struct { /* ST_LOCAL: fn(arena + off) */
            void (*fn)(const void *args);
            size_t off;
        } l;
    };
};

struct nbc_defer {
    void (*release)(void *p);
    void *p;
};

struct aptus_nbc {
    struct nbc_step *steps;
    int nsteps, capsteps;
    uint32_t *ids; /* step indices waited for by the ST_WAIT steps */
    uint32_t nids, capids;
    unsigned char *arena; /* arguments of the local steps */
    size_t narena, caparena;
    struct nbc_defer *defers;
    int ndefers, capdefers;
    int rec_err; /* recording ran out of memory */
    /* execution */
    struct aptus_request **reqs; /* per step: the message started by it, until waited for */
    int capreqs;
    struct aptus_request *user;
    struct aptus_comm *comm; /* held while the schedule exists */
    int pos, err, running;
    size_t volume; /* bytes of its messages (sends and receives) */
    /* the tag bases taken from these communicators, in order: tagbase[t + 1] from tagc[t] (a
     * replay takes new ones; a cached schedule's message steps hold their tags relative to
     * them, st->m.tg = t + 1; tagbase[0] stays 0 for the tags as recorded) */
    struct aptus_comm *tagc[NBC_TAGS_MAX];
    int tagbase[NBC_TAGS_MAX + 1];
    int ntags;  /* > NBC_TAGS_MAX: too many to replay */
    int cached; /* in the cache (kept when it finishes) */
};

static uint64_t nbc_started, nbc_steps;
static uint64_t nbc_handed; /* left whole to the progress thread (run) */

static uint64_t cache_hits;

void aptus_nbc_counts(uint64_t *started, uint64_t *steps, uint64_t *replayed, uint64_t *handed)
{
    *started = nbc_started;
    *steps = nbc_steps;
    *replayed = cache_hits;
    *handed = nbc_handed;
}

/* Grows an array to hold at least `need` elements of `size` bytes (doubling). */
static int grow(void **arr, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return 0;
    size_t n = *cap ? *cap : 16;
    while (n < need)
        n *= 2;
    void *p = realloc(*arr, n * size);
    if (!p)
        return -1;
    *arr = p;
    *cap = n;
    return 0;
}

static struct nbc_step *step_add(struct aptus_nbc *s, int kind)
{
    size_t cap = (size_t)s->capsteps;
    if (grow((void **)&s->steps, &cap, (size_t)s->nsteps + 1, sizeof *s->steps)) {
        s->rec_err = MPI_ERR_NO_MEM;
        return NULL;
    }
    s->capsteps = (int)cap;
    struct nbc_step *st = &s->steps[s->nsteps++];
    memset(st, 0, sizeof *st);
    st->kind = (uint8_t)kind;
    return st;
}

/* ---- recording ---------------------------------------------------------------------------------- */

/* Placeholder requests are step numbers + 1 dressed as pointers: never dereferenced, only
 * handed back to aptus_nbc_wait. */
static struct aptus_request *placeholder(int step)
{
    return (struct aptus_request *)(uintptr_t)((size_t)step + 1);
}

int aptus_nbc_msg(int send, struct aptus_comm *c, uint16_t ctx, void *buf, size_t bytes, const struct aptus_dtype *dt,
                  size_t count, int peer, int tag, struct aptus_request **req)
{
    struct aptus_nbc *s = aptus_nbc_rec;
    *req = NULL;
    struct nbc_step *st = step_add(s, send ? ST_SEND : ST_RECV);
    if (!st)
        return MPI_ERR_NO_MEM;
    st->m.c = c;
    st->m.ctx = ctx;
    st->m.buf = buf;
    st->m.bytes = bytes;
    st->m.dt = dt;
    st->m.count = count;
    st->m.peer = peer;
    st->m.tag = tag;
    s->volume += dt ? count * dt->size : bytes;
    if (dt)
        aptus_nbc_hold_type(dt);
    *req = placeholder(s->nsteps - 1);
    return 0;
}

int aptus_nbc_wait(struct aptus_request **reqs, int n)
{
    struct aptus_nbc *s = aptus_nbc_rec;
    uint32_t first = s->nids, k = 0;
    for (int i = 0; i < n; i++) {
        if (!reqs[i])
            continue;
        size_t cap = s->capids;
        if (grow((void **)&s->ids, &cap, (size_t)s->nids + 1, sizeof *s->ids)) {
            s->rec_err = MPI_ERR_NO_MEM;
            return MPI_ERR_NO_MEM;
        }
        s->capids = (uint32_t)cap;
        s->ids[s->nids++] = (uint32_t)((uintptr_t)reqs[i] - 1);
        reqs[i] = NULL;
        k++;
    }
    if (k == 0)
        return 0;
    struct nbc_step *st = step_add(s, ST_WAIT);
    if (!st)
        return MPI_ERR_NO_MEM;
    st->w.first = first;
    st->w.n = k;
    return 0;
}

void aptus_nbc_local(void (*fn)(const void *args), const void *args, size_t len)
{
    struct aptus_nbc *s = aptus_nbc_rec;
    size_t off = (s->narena + 15) & ~(size_t)15;
    if (grow((void **)&s->arena, &s->caparena, off + len, 1)) {
        s->rec_err = MPI_ERR_NO_MEM;
        return;
    }
    struct nbc_step *st = step_add(s, ST_LOCAL);
    if (!st)
        return;
    memcpy(s->arena + off, args, len);
    s->narena = off + len;
    st->l.fn = fn;
    st->l.off = off;
}

void aptus_nbc_defer(void (*release)(void *p), void *p)
{
    struct aptus_nbc *s = aptus_nbc_rec;
    size_t cap = (size_t)s->capdefers;
    if (grow((void **)&s->defers, &cap, (size_t)s->ndefers + 1, sizeof *s->defers)) {
        /* cannot remember it: released now would leave a dangling step, so it leaks; the
         * recording fails anyway */
        s->rec_err = MPI_ERR_NO_MEM;
        return;
    }
    s->capdefers = (int)cap;
    s->defers[s->ndefers++] = (struct nbc_defer){ release, p };
}

static void type_release(void *p)
{
    aptus_dtype_release(p);
}

void aptus_nbc_hold_type(const struct aptus_dtype *dt)
{
    if (dt->predefined)
        return;
    aptus_dtype_retain((struct aptus_dtype *)dt);
    aptus_nbc_defer(type_release, (void *)dt);
}

static void op_release(void *p)
{
    struct aptus_op *op = p;
    if (--op->refcount == 0) {
        op->magic = 0;
        aptus_obj_free(APTUS_OBJ_OP, op);
    }
}

void aptus_nbc_hold_op(const struct aptus_op *op)
{
    if (op->predefined)
        return;
    ((struct aptus_op *)op)->refcount++;
    aptus_nbc_defer(op_release, (void *)op);
}

/* ---- life -------------------------------------------------------------------------------------- */

/* Freed schedules keep their arrays for the next recording (a small collective records a
 * dozen steps: reusing the arrays saves most of the allocations of a call). */
#define NBC_POOL_KEEP 8
static struct aptus_nbc *pool[NBC_POOL_KEEP];
static int npool;

static void destroy(struct aptus_nbc *s)
{
    free(s->steps);
    free(s->ids);
    free(s->arena);
    free(s->defers);
    free(s->reqs);
    free(s);
}

void aptus_nbc_free(struct aptus_nbc *s)
{
    if (!s)
        return;
    for (int i = s->ndefers - 1; i >= 0; i--)
        s->defers[i].release(s->defers[i].p);
    if (s->comm)
        aptus_comm_unref(s->comm);
    if (npool < NBC_POOL_KEEP && s->capsteps <= 1024) {
        s->nsteps = 0;
        s->nids = 0;
        s->narena = 0;
        s->ndefers = 0;
        s->rec_err = 0;
        s->user = NULL;
        s->comm = NULL;
        s->ntags = 0;
        s->cached = 0;
        s->volume = 0;
        pool[npool++] = s;
        return;
    }
    destroy(s);
}

int aptus_nbc_begin(void)
{
    struct aptus_nbc *s = npool ? pool[--npool] : calloc(1, sizeof *s);
    if (!s)
        return MPI_ERR_NO_MEM;
    aptus_nbc_rec = s;
    return 0;
}

void aptus_nbc_pool_drain(void)
{
    while (npool > 0)
        destroy(pool[--npool]);
}

/* ---- execution --------------------------------------------------------------------------------- */

static int start_msg(struct aptus_nbc *s, int i)
{
    const struct nbc_step *st = &s->steps[i];
    int tag = st->m.tag + s->tagbase[st->m.tg];
    /* a small contiguous send goes out at once when it can, with no request (a wait step takes
     * a missing request for a completed one), as the blocking collectives send */
    if (st->kind == ST_SEND && !st->m.dt && st->m.peer >= 0 &&
        aptus_send_eager_try(st->m.buf, st->m.bytes, st->m.peer, tag, st->m.c, st->m.ctx)) {
        s->reqs[i] = NULL;
        return 0;
    }
    return aptus_coll_start_msg(st->kind == ST_SEND ? APTUS_REQ_SEND : APTUS_REQ_RECV, st->m.c, st->m.ctx, st->m.buf,
                                st->m.bytes, st->m.dt, st->m.count, st->m.peer, tag, &s->reqs[i]);
}

/* Frees the completed message request of step `id` (a receive's error kept). */
static void msg_done(struct aptus_nbc *s, uint32_t id)
{
    struct aptus_request *r = s->reqs[id];
    if (!r)
        return;
    if (!s->err && r->kind == APTUS_REQ_RECV && r->st_error)
        s->err = r->st_error;
    aptus_req_free(r);
    s->reqs[id] = NULL;
}

/* Whether the messages of a wait step have completed; if so they are freed (errors kept). */
static int wait_done(struct aptus_nbc *s, const struct nbc_step *st)
{
    const uint32_t *ids = s->ids + st->w.first;
    const uint32_t n = st->w.n;
    for (uint32_t k = 0; k < n; k++) {
        const struct aptus_request *r = s->reqs[ids[k]];
        if (r && !r->complete)
            return 0;
    }
    for (uint32_t k = 0; k < n; k++)
        msg_done(s, ids[k]);
    return 1;
}

static void finish(struct aptus_nbc *s)
{
    struct aptus_request *u = s->user;
    s->running = 0;
    s->user = NULL;
    u->st_error = s->err;
    if (s->cached) {
        u->nbc = NULL; /* the cache keeps it for the next identical call */
    } else if (!u->persistent || u->free_on_complete) {
        u->nbc = NULL;
        aptus_nbc_free(s);
    }
    aptus_req_complete(u);
}

/* Runs the schedule as far as it goes; returns 1 once it is finished (the user's request is
 * then complete). After an error no new step starts; what was started is still waited for. */
static int advance(void *arg)
{
    struct aptus_nbc *s = arg;
    /* (no re-entry for one schedule: the progress engine runs no background task from inside
     * one, and a schedule that is not one yet is run only by its starting call) */
    int pos = s->pos, n = s->nsteps;
    const int from = pos;
    for (; pos < n; pos++) {
        const struct nbc_step *st = &s->steps[pos];
        if (st->kind == ST_WAIT) {
            if (!wait_done(s, st))
                break;
        } else if (s->err) {
            continue;
        } else if (st->kind == ST_LOCAL) {
            st->l.fn(s->arena + st->l.off);
        } else {
            int rc = start_msg(s, pos);
            if (rc)
                s->err = rc;
        }
    }
    s->pos = pos;
    nbc_steps += (uint64_t)(pos - from);
    if (pos < n)
        return 0;
    finish(s);
    return 1;
}

static inline __attribute__((always_inline)) int run(struct aptus_nbc *s)
{
    s->pos = 0;
    s->err = 0;
    s->running = 1;
    nbc_started++;
    int wakes = s->volume >= aptus_config.async_progress_wake_min;
    if (aptus_config.async_progress) {
        /* A progress thread on a core of its own takes up a large schedule from its first step:
         * the application returns at once instead of doing the first local steps itself (an
         * allreduce's copy of its input, a first reduction) while the thread waits. */
        if (wakes && aptus_progress_thread_own_core_now() && !aptus_bg_add_passive(advance, s)) {
            nbc_handed++;
            return 0;
        }
        aptus_rndv_defer = 1; /* (the thread moves the data) */
        int done = advance(s);
        aptus_rndv_defer = 0;
        if (done)
            return 0;
    } else if (advance(s)) {
        return 0;
    }
    /* (a small schedule does not wake the progress thread: it would cost more than it moves) */
    if ((wakes ? aptus_bg_add_passive : aptus_bg_add_quiet)(advance, s)) {
        unsigned idle = 0; /* no room for a background task: finish here */
        while (!advance(s))
            aptus_wait_step(&idle);
    }
    return 0;
}

static void cache_put(struct aptus_nbc *s, const void *key, size_t klen);

int aptus_nbc_end(int rc, struct aptus_comm *c, int persistent, const void *key, size_t klen,
                  struct aptus_request **out)
{
    struct aptus_nbc *s = aptus_nbc_rec;
    aptus_nbc_rec = NULL;
    *out = NULL;
    if (!rc)
        rc = s->rec_err;
    if (!rc && s->capreqs < s->nsteps) {
        struct aptus_request **q = realloc(s->reqs, sizeof *q * (size_t)s->nsteps);
        if (q) {
            s->reqs = q;
            s->capreqs = s->nsteps;
        } else {
            rc = MPI_ERR_NO_MEM;
        }
    }
    if (!rc && s->nsteps)
        memset(s->reqs, 0, sizeof *s->reqs * (size_t)s->nsteps);
    struct aptus_request *u = rc ? NULL : aptus_req_new_nomsg(APTUS_REQ_GENERIC);
    if (!rc && !u)
        rc = MPI_ERR_NO_MEM;
    if (rc) {
        aptus_nbc_free(s);
        return rc;
    }
    s->comm = c;
    c->refcount++;
    s->user = u;
    u->comm = c;
    u->nbc = s;
    *out = u;
    if (persistent) {
        u->persistent = 1;
        u->complete = 1; /* inactive until MPI_Start */
        return 0;
    }
    if (key)
        cache_put(s, key, klen);
    return run(s);
}

/* ---- the cache of recorded schedules -------------------------------------------------------- */

/* A program that repeats a nonblocking collective with the same arguments (the common case:
 * the same buffers every iteration) gets the schedule recorded the first time, with fresh tags,
 * instead of recording it again. The key is the call's arguments (values and handles; the API
 * layer builds it for the collectives without count arrays). A cached schedule holds its
 * communicator, datatypes and ops, so a handle in a key can only name the object it named when
 * recorded; it runs once at a time (its temporary buffers are its own): while it runs, an
 * identical call records anew. */
#define NBC_CACHE   8
#define NBC_KEY_MAX 96
static struct {
    struct aptus_nbc *s;
    size_t klen;
    uint64_t used;
    unsigned char key[NBC_KEY_MAX];
} cache[NBC_CACHE];
static uint64_t cache_clock;

static void cache_drop(int i)
{
    struct aptus_nbc *s = cache[i].s;
    cache[i].s = NULL;
    if (!s)
        return;
    s->cached = 0;
    if (!s->running)
        aptus_nbc_free(s); /* a running one is freed by finish() */
}

static void cache_put(struct aptus_nbc *s, const void *key, size_t klen)
{
    if (klen > NBC_KEY_MAX || s->ntags > NBC_TAGS_MAX)
        return;
    int slot = 0;
    for (int i = 0; i < NBC_CACHE; i++) {
        if (!cache[i].s) {
            slot = i;
            break;
        }
        if (cache[i].used < cache[slot].used)
            slot = i;
    }
    cache_drop(slot);
    cache[slot].s = s;
    cache[slot].klen = klen;
    cache[slot].used = ++cache_clock;
    memcpy(cache[slot].key, key, klen);
    s->cached = 1;
    /* the messages' tags made relative to the bases they were taken from, so that a replay
     * only takes new bases */
    for (int i = 0; i < s->nsteps; i++) {
        struct nbc_step *st = &s->steps[i];
        if (st->kind != ST_SEND && st->kind != ST_RECV)
            continue;
        for (int t = 0; t < s->ntags; t++)
            if (st->m.c == s->tagc[t] && st->m.tag >= s->tagbase[t + 1] &&
                st->m.tag < s->tagbase[t + 1] + APTUS_COLL_PHASES) {
                st->m.tag -= s->tagbase[t + 1];
                st->m.tg = (uint8_t)(t + 1);
                break;
            }
    }
}

void aptus_nbc_tag_taken(struct aptus_comm *c, int base)
{
    struct aptus_nbc *s = aptus_nbc_rec;
    if (s->ntags < NBC_TAGS_MAX) {
        s->tagc[s->ntags] = c;
        s->tagbase[s->ntags + 1] = base;
    }
    s->ntags++;
}

int aptus_nbc_replay(const void *key, size_t klen, struct aptus_comm *c, struct aptus_request **out)
{
    int hit = 0;
    for (; hit < NBC_CACHE; hit++)
        if (cache[hit].s && cache[hit].klen == klen && !memcmp(cache[hit].key, key, klen))
            break;
    struct aptus_nbc *s = hit < NBC_CACHE ? cache[hit].s : NULL;
    struct aptus_request *u;
    if (!s || s->running || s->comm != c || !(u = aptus_req_new_nomsg(APTUS_REQ_GENERIC))) {
        *out = NULL;
        return 0;
    }
    /* new tag bases, taken in the recording's order from the same communicators */
    for (int t = 0; t < s->ntags; t++)
        s->tagbase[t + 1] = aptus_coll_nbc_tag(s->tagc[t]);
    cache[hit].used = ++cache_clock;
    cache_hits++;
    s->user = u;
    u->comm = c;
    u->nbc = s;
    *out = u;
    run(s);
    return 1;
}

void aptus_nbc_cache_drain(void)
{
    for (int i = 0; i < NBC_CACHE; i++)
        cache_drop(i);
}

int aptus_nbc_start(struct aptus_request *r)
{
    r->nbc->user = r;
    return run(r->nbc);
}
