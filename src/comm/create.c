/* Communicators: context ids, creation (dup, idup, split, create, create_group), intercommunicators
 * (create, merge, split, create), release and comparison. docs/DESIGN.md, "Communicators, groups
 * and topologies", explains the context agreement. */
#include "comm/create.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "coll/coll.h"
#include "coll/coll_internal.h"
#include "core/attr.h"
#include "core/errors.h"
#include "core/session.h"
#include "core/topo.h"
#include "pt2pt/pt2pt.h"
#include "runtime/runtime.h"

struct aptus_comm aptus_comm_world_obj, aptus_comm_self_obj;

/* Context-id slots. Slot s gives the contexts 4s .. 4s+3 (core/context.h). Slot 0 is
 * MPI_COMM_WORLD, slot 1 MPI_COMM_SELF.
 *
 * Blocking creation calls take slots from the lower half (words 0 .. BLK_WORDS-1): the members
 * AND their free masks and take the lowest common slot. Only one blocking call runs at a time
 * in a process, and nothing else takes lower-half slots, so its contribution stays free until
 * it ends.
 *
 * MPI_Comm_idup takes slots from the upper half, one 32-slot window (one word) per round:
 * each member contributes the free slots of the window that no other nonblocking round of this
 * process holds, and holds them (ctx_locked) until the round ends. When the AND is empty the
 * next round tries the next window. A round never waits for anything but its own members'
 * messages, so a blocking creation call or another idup never waits for it, and it never waits
 * for them. */
#define CTX_SLOTS  8192
#define CTX_WORDS  (CTX_SLOTS / 32)
#define BLK_WORDS  (CTX_WORDS / 2)
#define NB_WINDOWS (CTX_WORDS - BLK_WORDS)
static uint32_t ctx_free[CTX_WORDS];
static uint32_t ctx_locked[CTX_WORDS];

static void ctx_mark(int slot, int used)
{
    if (used)
        ctx_free[slot / 32] &= ~(1u << (slot % 32));
    else
        ctx_free[slot / 32] |= 1u << (slot % 32);
}

static void comm_set_slot(struct aptus_comm *c, int slot)
{
    c->ctx = (uint16_t)(APTUS_CTX_PER_SLOT * slot);
    c->ctx_slot = (uint16_t)slot;
    ctx_mark(slot, 1);
}

/* The lowest `want` set bits of mask words [0, nwords) as slots (word w0 is slot 32 * w0).
 * Returns how many were found. */
static int pick_slots(const uint32_t *mask, int nwords, int w0, int want, int *slots)
{
    int got = 0;
    for (int i = 0; i < nwords && got < want; i++) {
        uint32_t m = mask[i];
        while (m && got < want) {
            int b = __builtin_ctz(m);
            slots[got++] = (w0 + i) * 32 + b;
            m &= m - 1;
        }
    }
    return got;
}

void aptus_comm_init(void)
{
    aptus_comm_release_set(aptus_comm_release);
    memset(ctx_free, 0xff, sizeof ctx_free);
    memset(ctx_locked, 0, sizeof ctx_locked);
    ctx_mark(0, 1);
    ctx_mark(1, 1);
    ctx_mark(APTUS_SLOT_RUNTIME, 1);
    struct aptus_comm *w = &aptus_comm_world_obj, *s = &aptus_comm_self_obj;
    memset(w, 0, sizeof *w);
    memset(s, 0, sizeof *s);
    w->magic = s->magic = APTUS_MAGIC_COMM;
    w->refcount = s->refcount = 1;
    w->rank = aptus_rt.rank;
    w->size = w->npeers = aptus_rt.size;
    w->ctx = 0;
    w->errh = s->errh = &aptus_errh_fatal;
    w->handle = MPI_COMM_WORLD;
    w->info = s->info = MPI_INFO_NULL;
    strcpy(w->name, "MPI_COMM_WORLD");
    s->rank = 0;
    s->size = s->npeers = 1;
    s->world = s->peers = malloc(sizeof(int));
    s->world[0] = aptus_rt.rank;
    s->ctx = APTUS_CTX_PER_SLOT;
    s->ctx_slot = 1;
    s->handle = MPI_COMM_SELF;
    strcpy(s->name, "MPI_COMM_SELF");
}

void aptus_comm_finalize(void)
{
    /* the predefined communicators are never released: their buffers (MPI_Comm_attach_buffer)
     * are given up here */
    aptus_bsend_pool_drop(aptus_comm_world_obj.bsend_pool);
    aptus_bsend_pool_drop(aptus_comm_self_obj.bsend_pool);
    aptus_comm_world_obj.bsend_pool = aptus_comm_self_obj.bsend_pool = NULL;
    free(aptus_comm_self_obj.world);
    aptus_comm_self_obj.world = aptus_comm_self_obj.peers = NULL;
}

/* ---------------- the agreement engine ----------------
 *
 * An allreduce over a list of participants (world ranks; this process is number `me`) on one
 * context and tag, as a state machine that never blocks: a binomial tree gathers to participant
 * 0, which sends the result back down the tree. Words 0 .. nand-1 are ANDed, the others ORed.
 * It needs no communicator of its own: `tc` carries just the addressing the message layer uses
 * (rank, peers). */
struct agree {
    struct aptus_comm tc;
    uint16_t ctx;
    int tag;
    int nw, nand;   /* words, of which the first nand are ANDed and the others ORed */
    uint32_t *val;  /* nw words: the contribution, then the result */
    uint32_t *bufs; /* (nchild + 1) * nw words: children's contributions, the parent's result */
    int nchild, parent;
    int child[32];
    struct aptus_request *rq[32], *sq[33];
    int nrq, nsq;
    int state; /* 0 gathering, 1 waiting for the result, 2 sending it down, 3 waiting for the sends,
                  4 done */
    int err;
};

/* The agreement's messages (a->nw words on a->ctx, a->tag). A failed start is kept in a->err;
 * a receive that did not start counts as arrived (NULL): the result is invalid anyway. */
static struct aptus_request *agree_irecv(struct agree *a, void *buf, int src)
{
    struct aptus_request *r;
    int rc = aptus_coll_irecv_on(&a->tc, a->ctx, buf, (size_t)a->nw * 4, src, a->tag, &r);
    if (rc && !a->err)
        a->err = rc;
    return r;
}

static void agree_isend(struct agree *a, const void *buf, int dst)
{
    struct aptus_request *r;
    int rc = aptus_coll_isend_on(&a->tc, a->ctx, buf, (size_t)a->nw * 4, dst, a->tag, &r);
    if (rc && !a->err)
        a->err = rc;
    if (r)
        a->sq[a->nsq++] = r;
}

/* Sets up the tree and posts the receives from the children; the caller has filled a->val. */
static int agree_init(struct agree *a, int *peers, int n, int me, uint16_t ctx, int tag, int nw, int nand)
{
    memset(a, 0, sizeof *a);
    a->nand = nand;
    a->tc.rank = me;
    a->tc.size = a->tc.npeers = n;
    a->tc.world = a->tc.peers = peers;
    a->ctx = ctx;
    a->tag = tag;
    a->nw = nw;
    a->parent = -1;
    for (int k = 1; k < n; k <<= 1) {
        if (me & k) {
            a->parent = me - k;
            break;
        }
        if (me + k < n)
            a->child[a->nchild++] = me + k;
    }
    a->val = calloc((size_t)nw * (size_t)(a->nchild + 2), 4);
    if (!a->val)
        return MPI_ERR_NO_MEM;
    a->bufs = a->val + nw;
    return 0;
}

static void agree_start(struct agree *a)
{
    a->state = 0;
    a->nrq = a->nsq = 0;
    for (int i = 0; i < a->nchild; i++)
        a->rq[a->nrq++] = agree_irecv(a, a->bufs + (size_t)i * (size_t)a->nw, a->child[i]);
}

static void agree_free_reqs(struct aptus_request **r, int *n, struct agree *a)
{
    for (int i = 0; i < *n; i++)
        if (r[i]) {
            if (r[i]->st_error && !a->err)
                a->err = r[i]->st_error;
            aptus_req_free(r[i]);
        }
    *n = 0;
}

/* One step; returns 1 once the result is in a->val (a->err says whether it is valid). */
static int agree_poll(struct agree *a)
{
    if (a->state == 0) {
        for (int i = 0; i < a->nrq; i++)
            if (a->rq[i] && !a->rq[i]->complete)
                return 0;
        for (int i = 0; i < a->nchild; i++) {
            const uint32_t *b = a->bufs + (size_t)i * (size_t)a->nw;
            for (int w = 0; w < a->nand; w++)
                a->val[w] &= b[w];
            for (int w = a->nand; w < a->nw; w++)
                a->val[w] |= b[w];
        }
        agree_free_reqs(a->rq, &a->nrq, a);
        if (a->parent >= 0) {
            agree_isend(a, a->val, a->parent);
            a->rq[a->nrq++] = agree_irecv(a, a->bufs + (size_t)a->nchild * (size_t)a->nw, a->parent);
            a->state = 1;
        } else {
            a->state = 2;
        }
    }
    if (a->state == 1) {
        if (a->rq[0] && !a->rq[0]->complete)
            return 0;
        /* the parent answered, so it had our contribution: the send from val is done */
        memcpy(a->val, a->bufs + (size_t)a->nchild * (size_t)a->nw, (size_t)a->nw * 4);
        agree_free_reqs(a->rq, &a->nrq, a);
        a->state = 2;
    }
    if (a->state == 2) {
        for (int i = 0; i < a->nchild; i++)
            agree_isend(a, a->val, a->child[i]);
        a->state = 3;
    }
    for (int i = 0; i < a->nsq; i++)
        if (!a->sq[i]->complete)
            return 0;
    agree_free_reqs(a->sq, &a->nsq, a);
    a->state = 4;
    return 1;
}

static void agree_done(struct agree *a)
{
    free(a->val);
    a->val = a->bufs = NULL;
}

static void agree_run(struct agree *a)
{
    unsigned idle = 0;
    agree_start(a);
    while (!agree_poll(a))
        aptus_wait_step(&idle);
}

/* Blocking agreement: mask gets the lower-half slots free on every participant. */
static int agree_free_mask(int *peers, int n, int me, uint16_t ctx, int tag, uint32_t *mask)
{
    struct agree a;
    int rc = agree_init(&a, peers, n, me, ctx, tag, BLK_WORDS, BLK_WORDS);
    if (rc)
        return rc;
    memcpy(a.val, ctx_free, BLK_WORDS * 4);
    agree_run(&a);
    memcpy(mask, a.val, BLK_WORDS * 4);
    rc = a.err;
    agree_done(&a);
    return rc;
}

/* Blocking agreement on `want` lower-half slots among the participants. */
static int agree_slots(int *peers, int n, int me, uint16_t ctx, int tag, int want, int *slots)
{
    uint32_t mask[BLK_WORDS];
    int rc = agree_free_mask(peers, n, me, ctx, tag, mask);
    if (!rc && pick_slots(mask, BLK_WORDS, 0, want, slots) < want)
        rc = MPI_ERR_INTERN; /* every context id in use */
    return rc;
}

/* Both groups of intercommunicator c in one list, the local group first if local_first; *me
 * gets this process's position. NULL: out of memory. */
static int *inter_members(const struct aptus_comm *c, int local_first, int *me)
{
    int *l = malloc((size_t)(c->size + c->npeers) * sizeof(int));
    if (!l)
        return NULL;
    int off_local = local_first ? 0 : c->npeers, off_remote = local_first ? c->size : 0;
    memcpy(l + off_local, c->world, (size_t)c->size * sizeof(int));
    memcpy(l + off_remote, c->peers, (size_t)c->npeers * sizeof(int));
    *me = off_local + c->rank;
    return l;
}

/* The order of an intercommunicator's two groups that both agree on without talking: the group
 * holding the lower world rank first. */
#define INTER_LOCAL_FIRST(c) ((c)->world[0] < (c)->peers[0])

/* Blocking agreement over all of c (both groups of an intercommunicator). */
static int agree_over(struct aptus_comm *c, int seq, int want, int *slots)
{
    int n = c->size, me = c->rank, *l = NULL;
    if (c->is_inter) {
        if (!(l = inter_members(c, INTER_LOCAL_FIRST(c), &me)))
            return MPI_ERR_NO_MEM;
        n += c->npeers;
    }
    int rc =
        agree_slots(l ? l : c->world, n, me, (uint16_t)(c->ctx + APTUS_CTX_MGMT), APTUS_TAG_SEQ(seq, 0), want, slots);
    free(l);
    return rc;
}

/* ---------------- communicator objects ---------------- */

/* A communicator over `world` (n local members, copied) and, for an intercommunicator, the
 * remote group (m members, copied); no context yet. */
static struct aptus_comm *comm_alloc(struct aptus_errhandler *errh, const int *world, int n, const int *remote, int m)
{
    struct aptus_comm *c = aptus_obj_alloc(APTUS_OBJ_COMM, sizeof *c);
    int *w = malloc((size_t)(n ? n : 1) * sizeof(int));
    int *p = remote ? malloc((size_t)(m ? m : 1) * sizeof(int)) : w;
    if (!c || !w || !p) {
        aptus_obj_free(APTUS_OBJ_COMM, c);
        free(w);
        if (p != w)
            free(p);
        return NULL;
    }
    memcpy(w, world, (size_t)n * sizeof(int));
    c->magic = APTUS_MAGIC_COMM;
    c->refcount = 1;
    c->size = n;
    c->rank = -1;
    for (int i = 0; i < n; i++)
        if (w[i] == aptus_rt.rank)
            c->rank = i;
    c->world = w;
    if (remote) {
        memcpy(p, remote, (size_t)m * sizeof(int));
        c->is_inter = 1;
    }
    c->peers = p;
    c->npeers = remote ? m : n;
    c->errh = errh;
    errh->refcount++;
    c->handle = (MPI_Comm)c;
    c->info = MPI_INFO_NULL;
    return c;
}

/* An intercommunicator and its local_comm, on slots s[0] and s[1]. */
static struct aptus_comm *inter_new(struct aptus_errhandler *errh, const int *local, int n, const int *remote, int m,
                                    const int *s)
{
    struct aptus_comm *c = comm_alloc(errh, local, n, remote, m);
    if (!c)
        return NULL;
    c->local_comm = comm_alloc(errh, local, n, NULL, 0);
    if (!c->local_comm) {
        aptus_comm_release(c);
        return NULL;
    }
    if (s) {
        comm_set_slot(c, s[0]);
        comm_set_slot(c->local_comm, s[1]);
    }
    return c;
}

static int *member_list(const struct aptus_comm *c)
{
    int *l = malloc((size_t)(c->size ? c->size : 1) * sizeof(int));
    if (l)
        for (int i = 0; i < c->size; i++)
            l[i] = aptus_comm_world_rank(c, i);
    return l;
}

/* A communicator made from `parent` derives from the same session (core/session.h). */
static void inherit_session(struct aptus_comm *c, const struct aptus_comm *parent)
{
    if (!c)
        return;
    aptus_comm_set_session(c, parent->session);
}

void aptus_comm_set_session(struct aptus_comm *c, struct aptus_session *s)
{
    aptus_session_retain(s);
    c->session = s;
    if (c->local_comm) {
        aptus_session_retain(s);
        c->local_comm->session = s;
    }
}

int aptus_comm_create_from(struct aptus_comm *parent, const int *world, int n, struct aptus_comm **out)
{
    int slot;
    *out = NULL;
    int rc = agree_over(parent, (int)parent->mgmt_seq++, 1, &slot);
    if (rc || n == 0)
        return rc;
    *out = comm_alloc(parent->errh, world, n, NULL, 0);
    if (!*out)
        return MPI_ERR_NO_MEM;
    inherit_session(*out, parent);
    comm_set_slot(*out, slot);
    return MPI_SUCCESS;
}

int aptus_comm_create_group(struct aptus_comm *parent, const int *world, int n, int tag, struct aptus_comm **out)
{
    int me = -1, slot;
    *out = NULL;
    for (int i = 0; i < n; i++)
        if (world[i] == aptus_rt.rank)
            me = i;
    if (me < 0)
        return MPI_SUCCESS;
    int rc =
        agree_slots((int *)world, n, me, (uint16_t)(parent->ctx + APTUS_CTX_MGMT), APTUS_TAG_CGROUP(tag), 1, &slot);
    if (rc)
        return rc;
    *out = comm_alloc(parent->errh, world, n, NULL, 0);
    if (!*out)
        return MPI_ERR_NO_MEM;
    inherit_session(*out, parent);
    comm_set_slot(*out, slot);
    return MPI_SUCCESS;
}

/* The copy of c that MPI_Comm_dup and MPI_Comm_idup make: groups, error handler, topology,
 * attributes; no context. */
static int dup_object(struct aptus_comm *c, struct aptus_comm **out)
{
    int *l = member_list(c);
    struct aptus_comm *n = NULL;
    if (l)
        n = c->is_inter ? inter_new(c->errh, l, c->size, c->peers, c->npeers, NULL)
                        : comm_alloc(c->errh, l, c->size, NULL, 0);
    free(l);
    if (!n)
        return MPI_ERR_NO_MEM;
    inherit_session(n, c);
    int ok;
    n->topo = aptus_topo_dup(c->topo, &ok);
    if (!ok) {
        aptus_comm_release(n);
        return MPI_ERR_NO_MEM;
    }
    int rc = aptus_attr_copy_all(APTUS_ATTR_COMM, (void *)c->handle, c->attrs, (void *)n->handle, &n->attrs);
    if (rc) {
        aptus_comm_release(n);
        return rc;
    }
    *out = n;
    return MPI_SUCCESS;
}

int aptus_comm_dup(struct aptus_comm *c, struct aptus_comm **out)
{
    int s[2];
    *out = NULL;
    int rc = agree_over(c, (int)c->mgmt_seq++, c->is_inter ? 2 : 1, s);
    if (rc)
        return rc;
    rc = dup_object(c, out);
    if (rc)
        return rc;
    comm_set_slot(*out, s[0]);
    if (c->is_inter)
        comm_set_slot((*out)->local_comm, s[1]);
    return MPI_SUCCESS;
}

/* ---------------- MPI_Comm_idup: rounds over windows of the upper half ---------------- */

struct idup {
    struct aptus_comm *parent;
    /* The copy and the user's request; both NULL when the copy failed on this process (reported
     * by MPI_Comm_idup itself): the task then only takes part in the agreement, so that the
     * other members' idup completes. */
    struct aptus_comm *newc;
    struct aptus_request *req;
    int *list; /* participants (NULL: parent->world) */
    int n, me;
    uint16_t ctx;
    int tag;
    int want;
    uint64_t key;        /* (parent slot, sequence): the same on every member; lower goes first */
    unsigned wmul, wxor; /* the order of the windows (see idup_window) */
    int round, misses, conflict_seen;
    int start_err;
    uint32_t held; /* slots of the current window this round holds */
    struct agree a;
    struct idup *next, **pprev; /* the idups running in this process */
};

static struct idup *idups;

/* The window of round r: a permutation of the windows (an odd multiplier, then an xor) that
 * depends on the key, so that every member computes the same, a lap visits every window once,
 * and two idups that met in a window most likely part at once. */
static int idup_window(const struct idup *d, int r)
{
    return BLK_WORDS + (int)((((unsigned)r * d->wmul) ^ d->wxor) % NB_WINDOWS);
}

/* Starts round d->round. Two idups that met in a window may have taken its slots in opposite
 * orders on two processes, so that both fail; if their orders of windows coincide they would
 * meet again and again. So a round leaves alone (contributes nothing to) a window that an idup
 * with a lower key, running here, is using in its current round or will use in its next one: the
 * lower key then gets the window everywhere. */
static int idup_round(struct idup *d)
{
    int w = idup_window(d, d->round), yield = 0;
    for (struct idup *e = idups; e && !yield; e = e->next)
        yield = e->key < d->key && (idup_window(e, e->round) == w || idup_window(e, e->round + 1) == w);
    d->held = yield ? 0 : ctx_free[w] & ~ctx_locked[w];
    ctx_locked[w] |= d->held;
    int rc = agree_init(&d->a, d->list ? d->list : d->parent->world, d->n, d->me, d->ctx, d->tag, 2, 1);
    if (rc)
        return rc;
    d->a.val[0] = d->held;
    d->a.val[1] = yield || (ctx_free[w] & ~d->held) != 0; /* free slots another idup holds */
    agree_start(&d->a);
    return 0;
}

static void idup_finish(struct idup *d, int err)
{
    *d->pprev = d->next;
    if (d->next)
        d->next->pprev = d->pprev;
    if (d->req) {
        d->req->st_error = err;
        if (err)
            d->newc->magic = 0; /* no context: the handle is invalid (the object is leaked) */
        aptus_req_complete(d->req);
    }
    aptus_comm_release(d->parent);
    free(d->list);
    free(d);
}

static int idup_poll(void *arg)
{
    struct idup *d = arg;
    int w = idup_window(d, d->round);
    if (d->start_err) {
        ctx_locked[w] &= ~d->held;
        agree_done(&d->a);
        idup_finish(d, d->start_err);
        return 1;
    }
    if (!agree_poll(&d->a))
        return 0;
    ctx_locked[w] &= ~d->held;
    int s[2], err = d->a.err;
    uint32_t result = d->a.val[0], conflict = d->a.val[1];
    agree_done(&d->a);
    if (!err && pick_slots(&result, 1, w, d->want, s) == d->want) {
        if (d->newc) {
            comm_set_slot(d->newc, s[0]);
            if (d->want == 2)
                comm_set_slot(d->newc->local_comm, s[1]);
        }
        idup_finish(d, 0);
        return 1;
    }
    if (!err) {
        d->conflict_seen |= conflict != 0;
        d->round++;
        if (++d->misses == NB_WINDOWS) {
            /* a whole lap without a common slot: out of ids unless some were held */
            if (!d->conflict_seen)
                err = MPI_ERR_INTERN;
            d->misses = 0;
            d->conflict_seen = 0;
        }
    }
    if (err) {
        idup_finish(d, err);
        return 1;
    }
    d->start_err = idup_round(d);
    return 0;
}

int aptus_comm_idup(struct aptus_comm *c, struct aptus_comm **out, struct aptus_request **req)
{
    *out = NULL;
    *req = NULL;
    struct idup *d = calloc(1, sizeof *d);
    if (!d)
        return MPI_ERR_NO_MEM;
    d->n = c->size;
    d->me = c->rank;
    if (c->is_inter) {
        if (!(d->list = inter_members(c, INTER_LOCAL_FIRST(c), &d->me))) {
            free(d);
            return MPI_ERR_NO_MEM;
        }
        d->n += c->npeers;
    }
    /* From here on this process takes part in the agreement whatever happens, so that the other
     * members' idup completes and every member's mgmt_seq stays in step; a failed copy is
     * reported at once and the task runs without a communicator or a request. */
    struct aptus_request *r = aptus_req_new_nomsg(APTUS_REQ_GENERIC);
    int rc = r ? dup_object(c, &d->newc) : MPI_ERR_NO_MEM;
    if (rc && r)
        aptus_req_free(r);
    if (!rc) {
        d->req = r;
        *out = d->newc;
        *req = r;
    }
    uint32_t seq = c->mgmt_seq++;
    d->parent = c;
    c->refcount++;
    d->ctx = (uint16_t)(c->ctx + APTUS_CTX_MGMT);
    d->tag = APTUS_TAG_SEQ(seq, 0);
    d->want = c->is_inter ? 2 : 1;
    uint32_t h = (uint32_t)c->ctx_slot * 0x9e3779b1u + seq * 0x85ebca77u;
    h ^= h >> 15;
    h *= 0x2c1b3c6du;
    h ^= h >> 12;
    d->wmul = ((h >> 8) % NB_WINDOWS) | 1;
    d->wxor = h % NB_WINDOWS;
    d->key = (uint64_t)c->ctx_slot << 32 | seq;
    d->next = idups;
    d->pprev = &idups;
    if (idups)
        idups->pprev = &d->next;
    idups = d;
    /* a failure to start is reported by the first poll, through the request */
    d->start_err = idup_round(d);
    if (aptus_bg_add(idup_poll, d)) {
        unsigned idle = 0; /* no room for a background task: agree here */
        while (!idup_poll(d))
            aptus_wait_step(&idle);
    }
    return rc;
}

/* ---------------- split ---------------- */

struct split_entry {
    int key, rank;
};

static int split_cmp(const void *a, const void *b)
{
    const struct split_entry *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->rank < y->rank ? -1 : (x->rank > y->rank);
}

/* The members of `color` in a (color, key) table of n ranks, ordered by key then rank, as
 * world ranks of the group `c` (remote: c's remote group). Returns how many. */
static int split_members(const int *table, int n, int color, const struct aptus_comm *c, int remote, int *world,
                         struct split_entry *e)
{
    int m = 0;
    if (color == MPI_UNDEFINED)
        return 0;
    for (int i = 0; i < n; i++)
        if (table[2 * i] == color)
            e[m++] = (struct split_entry){ table[2 * i + 1], i };
    qsort(e, (size_t)m, sizeof *e, split_cmp);
    for (int i = 0; i < m; i++)
        world[i] = remote ? aptus_comm_peer_world(c, e[i].rank) : aptus_comm_world_rank(c, e[i].rank);
    return m;
}

/* Sends sbuf to dst and receives into rbuf from src on c's management context (e.g. between the
 * two leaders of an intercommunicator), the receive posted first so that neither side waits. */
static int mgmt_sendrecv(struct aptus_comm *c, const void *sbuf, size_t sbytes, int dst, void *rbuf, size_t rbytes,
                         int src, int tag)
{
    uint16_t ctx = (uint16_t)(c->ctx + APTUS_CTX_MGMT);
    struct aptus_request *r[2] = { NULL, NULL };
    int rc = aptus_coll_irecv_on(c, ctx, rbuf, rbytes, src, tag, &r[0]);
    if (!rc)
        rc = aptus_coll_isend_on(c, ctx, sbuf, sbytes, dst, tag, &r[1]);
    int rc2 = aptus_coll_waitall(r, 2);
    return rc ? rc : rc2;
}

static int split_inter(struct aptus_comm *c, int color, int key, struct aptus_comm **out)
{
    int n = c->size, m = c->npeers, rc = 0;
    uint32_t seq = c->mgmt_seq++;
    int mine[2] = { color, key };
    int *lt = malloc((size_t)n * 2 * sizeof(int)), *rt = malloc((size_t)m * 2 * sizeof(int));
    int *lw = malloc((size_t)n * sizeof(int)), *rw = malloc((size_t)m * sizeof(int));
    struct split_entry *e = malloc((size_t)(n > m ? n : m) * sizeof *e);
    *out = NULL;
    if (!lt || !rt || !lw || !rw || !e)
        rc = MPI_ERR_NO_MEM;
    /* the local (color, key) table; the leaders swap tables; each leader tells its group */
    if (!rc)
        rc = aptus_allgather_internal(c->local_comm, mine, lt, 2 * sizeof(int));
    if (!rc && c->rank == 0)
        rc = mgmt_sendrecv(c, lt, (size_t)n * 2 * sizeof(int), 0, rt, (size_t)m * 2 * sizeof(int), 0,
                           APTUS_TAG_SEQ(seq, 1));
    if (!rc)
        rc = aptus_bcast(rt, (size_t)m * 2 * sizeof(int), 0, c->local_comm);
    int s[2];
    if (!rc)
        rc = agree_over(c, (int)seq, 2, s);
    if (!rc) {
        int ln = split_members(lt, n, color, c, 0, lw, e);
        int rn = split_members(rt, m, color, c, 1, rw, e);
        if (ln > 0 && rn > 0) {
            *out = inter_new(c->errh, lw, ln, rw, rn, s);
            inherit_session(*out, c);
            if (!*out)
                rc = MPI_ERR_NO_MEM;
        }
    }
    free(lt);
    free(rt);
    free(lw);
    free(rw);
    free(e);
    return rc;
}

int aptus_comm_split(struct aptus_comm *c, int color, int key, struct aptus_comm **out)
{
    if (c->is_inter)
        return split_inter(c, color, key, out);
    int n = c->size;
    int mine[2] = { color, key };
    int *all = malloc((size_t)n * 2 * sizeof(int));
    struct split_entry *e = malloc((size_t)n * sizeof *e);
    int *world = malloc((size_t)n * sizeof(int));
    if (!all || !e || !world) {
        free(all);
        free(e);
        free(world);
        return MPI_ERR_NO_MEM;
    }
    int rc = aptus_allgather_internal(c, mine, all, 2 * sizeof(int));
    int m = 0;
    if (!rc)
        m = split_members(all, n, color, c, 0, world, e);
    if (!rc)
        rc = aptus_comm_create_from(c, world, m, out);
    free(all);
    free(e);
    free(world);
    return rc;
}

int aptus_comm_split_node(struct aptus_comm *c, int color, int key, struct aptus_comm **out)
{
    if (c->is_inter) {
        /* MPI 4.1: each side is split by the type; a part of one group on a node pairs with the
         * part of the other group on the same node (same color), as MPI_Comm_split pairs
         * colors. The node and the color make one color: colors here are below size + npeers
         * + 2 (mpi://SELF gives rank + 1), the same bound on both sides. */
        long stride = (long)c->size + c->npeers + 2;
        long nc = (long)aptus_rt.node * stride + color;
        if (color != MPI_UNDEFINED && nc > INT_MAX)
            return MPI_ERR_INTERN;
        return split_inter(c, color == MPI_UNDEFINED ? MPI_UNDEFINED : (int)nc, key, out);
    }
    /* The members on this node, in c's rank order: who they are is known here, so only they
     * talk. One agreement among them carries the context masks (ANDed; a member staying out
     * contributes all ones) and every member's (in, color, key) (ORed into its own words). A
     * slot free for all the node's members that take part serves every color. */
    int in = color != MPI_UNDEFINED;
    uint32_t seq = c->mgmt_seq++;
    int n = 0, me = -1;
    *out = NULL;
    int *l = malloc((size_t)c->size * sizeof(int));
    if (!l)
        return MPI_ERR_NO_MEM;
    for (int i = 0; i < c->size; i++) {
        int w = aptus_comm_world_rank(c, i);
        if (aptus_rt.node_of[w] != aptus_rt.node)
            continue;
        if (i == c->rank)
            me = n;
        l[n++] = w;
    }
    struct agree a;
    int rc = agree_init(&a, l, n, me, (uint16_t)(c->ctx + APTUS_CTX_MGMT), APTUS_TAG_SEQ(seq, 1), BLK_WORDS + 3 * n,
                        BLK_WORDS);
    if (rc) {
        free(l);
        return rc;
    }
    if (in)
        memcpy(a.val, ctx_free, BLK_WORDS * 4);
    else
        memset(a.val, 0xff, BLK_WORDS * 4);
    a.val[BLK_WORDS + 3 * me] = (uint32_t)in;
    a.val[BLK_WORDS + 3 * me + 1] = (uint32_t)color;
    a.val[BLK_WORDS + 3 * me + 2] = (uint32_t)key;
    agree_run(&a);
    rc = a.err;
    int slot;
    if (!rc && in && pick_slots(a.val, BLK_WORDS, 0, 1, &slot) < 1)
        rc = MPI_ERR_INTERN;
    if (!rc && in) {
        struct split_entry *e = malloc((size_t)n * sizeof *e);
        int *w = malloc((size_t)n * sizeof(int));
        int m = 0;
        if (e && w) {
            for (int i = 0; i < n; i++)
                if (a.val[BLK_WORDS + 3 * i] && (int)a.val[BLK_WORDS + 3 * i + 1] == color)
                    e[m++] = (struct split_entry){ (int)a.val[BLK_WORDS + 3 * i + 2], i };
            qsort(e, (size_t)m, sizeof *e, split_cmp);
            for (int i = 0; i < m; i++)
                w[i] = l[e[i].rank];
            *out = comm_alloc(c->errh, w, m, NULL, 0);
            inherit_session(*out, c);
        }
        if (*out)
            comm_set_slot(*out, slot);
        else
            rc = MPI_ERR_NO_MEM;
        free(e);
        free(w);
    }
    agree_done(&a);
    free(l);
    return rc;
}

/* ---------------- intercommunicators ---------------- */

int aptus_comm_create_inter(struct aptus_comm *c, const int *world, int n, struct aptus_comm **out)
{
    uint32_t seq = c->mgmt_seq++;
    int m = 0, rc = 0;
    int *rw = NULL;
    *out = NULL;
    if (c->rank == 0)
        rc = mgmt_sendrecv(c, &n, sizeof n, 0, &m, sizeof m, 0, APTUS_TAG_SEQ(seq, 1));
    int rc2 = aptus_bcast(&m, sizeof m, 0, c->local_comm);
    if (!rc)
        rc = rc2;
    if (!rc) {
        rw = malloc((size_t)(m ? m : 1) * sizeof(int));
        if (!rw)
            return MPI_ERR_NO_MEM;
        if (c->rank == 0)
            rc = mgmt_sendrecv(c, world, (size_t)n * sizeof(int), 0, rw, (size_t)m * sizeof(int), 0,
                               APTUS_TAG_SEQ(seq, 2));
        rc2 = aptus_bcast(rw, (size_t)m * sizeof(int), 0, c->local_comm);
        if (!rc)
            rc = rc2;
    }
    int s[2];
    if (!rc)
        rc = agree_over(c, (int)seq, 2, s);
    int in = 0;
    for (int i = 0; i < n; i++)
        in |= world[i] == aptus_rt.rank;
    if (!rc && in && n > 0 && m > 0) {
        *out = inter_new(c->errh, world, n, rw, m, s);
        inherit_session(*out, c);
        if (!*out)
            rc = MPI_ERR_NO_MEM;
    }
    free(rw);
    return rc;
}

int aptus_intercomm_create(struct aptus_comm *local, int local_leader, struct aptus_comm *peer, int remote_leader,
                           int tag, int leader_err, struct aptus_comm **out, const char **why)
{
    uint32_t seq = local->mgmt_seq++;
    int n = local->size;
    *out = NULL;
    *why = "out of memory";
    /* 1. the local group's common free slots */
    struct {
        int32_t size;
        uint32_t mask[BLK_WORDS];
    } mine, theirs;
    mine.size = n;
    int local_err = agree_free_mask(local->world, n, local->rank, (uint16_t)(local->ctx + APTUS_CTX_MGMT),
                                    APTUS_TAG_SEQ(seq, 0), mine.mask);
    int *lw = member_list(local), *rw = NULL;
    if (!lw && !local_err)
        local_err = MPI_ERR_NO_MEM;
    /* 2. the leaders swap group sizes, masks and member lists and pick two slots free in both
     * groups; 3. the leader tells its group: {status, slot, slot, remote size}, remote list */
    int info[4] = { 0, 0, 0, 0 };
    if (local->rank == local_leader)
        info[0] = local_err ? local_err : leader_err;
    if (local->rank == local_leader && !info[0]) {
        int t = APTUS_TAG_ICREATE(tag);
        info[0] = mgmt_sendrecv(peer, &mine, sizeof mine, remote_leader, &theirs, sizeof theirs, remote_leader, t);
        if (!info[0]) {
            rw = malloc((size_t)(theirs.size > 0 ? theirs.size : 1) * sizeof(int));
            info[3] = theirs.size;
            info[0] = rw ? mgmt_sendrecv(peer, lw, (size_t)n * sizeof(int), remote_leader, rw,
                                         (size_t)theirs.size * sizeof(int), remote_leader, t)
                         : MPI_ERR_NO_MEM;
        }
        if (!info[0]) {
            for (int i = 0; i < BLK_WORDS; i++)
                mine.mask[i] &= theirs.mask[i];
            if (pick_slots(mine.mask, BLK_WORDS, 0, 2, info + 1) < 2)
                info[0] = MPI_ERR_INTERN;
            for (int i = 0; i < n && !info[0]; i++)
                for (int j = 0; j < theirs.size && !info[0]; j++)
                    if (lw[i] == rw[j])
                        info[0] = MPI_ERR_ARG; /* the groups overlap */
        }
    }
    int rc = aptus_bcast(info, sizeof info, local_leader, local);
    if (!rc)
        rc = info[0];
    if (!rc && local->rank != local_leader) {
        rw = malloc((size_t)(info[3] > 0 ? info[3] : 1) * sizeof(int));
        if (!rw)
            rc = MPI_ERR_NO_MEM; /* the broadcast below still needs everyone: report after */
    }
    if (info[0] == 0) {
        int rc2 = aptus_bcast(rw ? rw : info, rw ? (size_t)info[3] * sizeof(int) : 0, local_leader, local);
        if (!rc)
            rc = rc2;
    }
    if (!rc)
        rc = local_err; /* this member's own failure (the leader's is in info[0]) */
    if (!rc) {
        *out = inter_new(local->errh, lw, n, rw, info[3], info + 1);
        inherit_session(*out, local);
        if (!*out)
            rc = MPI_ERR_NO_MEM;
    }
    if (rc == MPI_ERR_ARG)
        *why = "the local and remote groups overlap";
    else if (rc == MPI_ERR_INTERN)
        *why = "no context id is free in both groups";
    else if (rc && rc != MPI_ERR_NO_MEM)
        *why = "the local leader failed (bad peer_comm, remote_leader or tag there, or its exchange with the remote "
               "leader failed)";
    free(lw);
    free(rw);
    return rc;
}

int aptus_intercomm_merge(struct aptus_comm *c, int high, struct aptus_comm **out)
{
    uint32_t seq = c->mgmt_seq++;
    int rhigh = 0, rc = 0;
    high = high != 0;
    *out = NULL;
    if (c->rank == 0)
        rc = mgmt_sendrecv(c, &high, sizeof high, 0, &rhigh, sizeof rhigh, 0, APTUS_TAG_SEQ(seq, 1));
    int rc2 = aptus_bcast(&rhigh, sizeof rhigh, 0, c->local_comm);
    if (rc)
        return rc;
    if (rc2)
        return rc2;
    int n = c->size + c->npeers, me, slot;
    int *l = inter_members(c, high != rhigh ? !high : INTER_LOCAL_FIRST(c), &me);
    if (!l)
        return MPI_ERR_NO_MEM;
    rc = agree_slots(l, n, me, (uint16_t)(c->ctx + APTUS_CTX_MGMT), APTUS_TAG_SEQ(seq, 0), 1, &slot);
    if (!rc) {
        *out = comm_alloc(c->errh, l, n, NULL, 0);
        inherit_session(*out, c);
        if (*out)
            comm_set_slot(*out, slot);
        else
            rc = MPI_ERR_NO_MEM;
    }
    free(l);
    return rc;
}

/* ---------------- from groups, without a parent (MPI 4) ---------------- */

/* A communicator from groups has no parent to talk on: the members agree on the runtime's own
 * context (APTUS_CTX_FROM_GROUP, reserved slot APTUS_SLOT_RUNTIME, which spans every process),
 * with a tag that the caller derives from the string tag and the groups. Only the members talk,
 * so processes outside the groups are not involved. */
static int from_group_list(const int *world, int n)
{
    for (int i = 0; i < n; i++)
        if (world[i] == aptus_rt.rank)
            return i;
    return -1;
}

int aptus_comm_from_group(const int *world, int n, int tag, struct aptus_errhandler *errh, struct aptus_comm **out)
{
    int slot, me = from_group_list(world, n);
    *out = NULL;
    if (me < 0)
        return MPI_ERR_GROUP;
    int rc = agree_slots((int *)world, n, me, APTUS_CTX_FROM_GROUP, tag, 1, &slot);
    if (rc)
        return rc;
    *out = comm_alloc(errh, world, n, NULL, 0);
    if (!*out)
        return MPI_ERR_NO_MEM;
    comm_set_slot(*out, slot);
    return MPI_SUCCESS;
}

int aptus_intercomm_from_groups(const int *local, int n, const int *remote, int m, int tag,
                                struct aptus_errhandler *errh, struct aptus_comm **out)
{
    *out = NULL;
    int me = from_group_list(local, n);
    if (me < 0 || n == 0 || m == 0)
        return MPI_ERR_GROUP;
    /* both sides list the union the same way: the group holding the lower first member first */
    int *l = malloc((size_t)(n + m) * sizeof(int));
    if (!l)
        return MPI_ERR_NO_MEM;
    int local_first = local[0] < remote[0];
    memcpy(l + (local_first ? 0 : m), local, (size_t)n * sizeof(int));
    memcpy(l + (local_first ? n : 0), remote, (size_t)m * sizeof(int));
    if (!local_first)
        me += m;
    int s[2];
    int rc = agree_slots(l, n + m, me, APTUS_CTX_FROM_GROUP, tag, 2, s);
    free(l);
    if (rc)
        return rc;
    *out = inter_new(errh, local, n, remote, m, s);
    return *out ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}

/* ---------------- release, compare ---------------- */

void aptus_comm_release(struct aptus_comm *c)
{
    if (c == &aptus_comm_world_obj || c == &aptus_comm_self_obj)
        return;
    if (--c->refcount > 0)
        return;
    if (c->ctx_slot)
        ctx_mark(c->ctx_slot, 0);
    c->magic = 0;
    aptus_bsend_pool_drop(c->bsend_pool); /* pt2pt/bsend.c: lives on until its sends have left */
    aptus_topo_free(c->topo);
    if (c->local_comm)
        aptus_comm_release(c->local_comm);
    aptus_errh_release(c->errh);
    aptus_session_release(c->session);
    if (c->peers != c->world)
        free(c->peers);
    free(c->world);
    aptus_obj_free(APTUS_OBJ_COMM, c);
}

/* Compares two member lists: MPI_IDENT (same order), MPI_SIMILAR (same members) or
 * MPI_UNEQUAL. */
static int compare_lists(const struct aptus_comm *a, const struct aptus_comm *b, int remote)
{
    int na = remote ? a->npeers : a->size, nb = remote ? b->npeers : b->size;
    if (na != nb)
        return MPI_UNEQUAL;
#define MEMBER(c, i) (remote ? aptus_comm_peer_world(c, i) : aptus_comm_world_rank(c, i))
    int same_order = 1;
    for (int i = 0; i < na && same_order; i++)
        same_order = MEMBER(a, i) == MEMBER(b, i);
    if (same_order)
        return MPI_IDENT;
    for (int i = 0; i < na; i++) {
        int found = 0;
        for (int j = 0; j < nb && !found; j++)
            found = MEMBER(a, i) == MEMBER(b, j);
        if (!found)
            return MPI_UNEQUAL;
    }
#undef MEMBER
    return MPI_SIMILAR;
}

int aptus_comm_compare(const struct aptus_comm *a, const struct aptus_comm *b)
{
    if (a == b)
        return MPI_IDENT;
    if (a->is_inter != b->is_inter)
        return MPI_UNEQUAL;
    int l = compare_lists(a, b, 0);
    if (a->is_inter) {
        int r = compare_lists(a, b, 1);
        if (l == MPI_UNEQUAL || r == MPI_UNEQUAL)
            return MPI_UNEQUAL;
        return l == MPI_IDENT && r == MPI_IDENT ? MPI_CONGRUENT : MPI_SIMILAR;
    }
    return l == MPI_IDENT ? MPI_CONGRUENT : l;
}
