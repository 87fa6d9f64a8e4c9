/* Communicators: creation (dup, idup, split, create, create_group, from groups),
 * intercommunicators (create, merge, split, create), release and comparison. The members agree on
 * context ids through comm/context_id.h; docs/DESIGN.md, "Communicators, groups and topologies",
 * explains it. */
#include "comm/create.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "channel/channel.h"
#include "coll/coll.h"
#include "coll/coll_internal.h"
#include "comm/context_id.h"
#include "core/attr.h"
#include "core/errors.h"
#include "core/session.h"
#include "core/topo.h"
#include "pt2pt/pt2pt.h"
#include "runtime/runtime.h"

struct aptus_comm aptus_comm_world_obj, aptus_comm_self_obj;

/* Gives c the contexts of a slot that an agreement took for it (marked in use then). */
static void comm_set_slot(struct aptus_comm *c, int slot)
{
    c->ctx = (uint16_t)(APTUS_CTX_PER_SLOT * slot);
    c->ctx_slot = (uint16_t)slot;
}

/* Slots an agreement took that no communicator got (a failure after the agreement). */
static void slots_release(const int *s, int n)
{
    for (int i = 0; i < n; i++)
        aptus_ctxid_release(s[i]);
}

void aptus_comm_init(void)
{
    aptus_comm_release_set(aptus_comm_release);
    aptus_ctxid_init();
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
 * whose first member comes first (the lower world rank; processes of several jobs by (job hash,
 * rank there): channel/procs.c). */
#define INTER_LOCAL_FIRST(c) aptus_proc_before((c)->world[0], (c)->peers[0])

/* Blocking agreement over all of c (both groups of an intercommunicator). */

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

/* An intercommunicator and its local_comm, on slots s[0] and s[1] (taken by an agreement: given
 * back on failure), or on none (s NULL). */
static struct aptus_comm *inter_new(struct aptus_errhandler *errh, const int *local, int n, const int *remote, int m,
                                    const int *s)
{
    struct aptus_comm *c = comm_alloc(errh, local, n, remote, m);
    if (c && !(c->local_comm = comm_alloc(errh, local, n, NULL, 0))) {
        aptus_comm_release(c);
        c = NULL;
    }
    if (!c) {
        if (s)
            slots_release(s, 2);
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

/* A context-id agreement over all of c (both groups of an intercommunicator), for the seq-th
 * creation call on c: `want` slots into s[], taken here when `take` (this process gets the new
 * communicator), else this process only takes part. */
static int agree_over(struct aptus_comm *c, uint32_t seq, int want, int take, int *s)
{
    int n = c->size, me = c->rank, *l = NULL;
    if (c->is_inter) {
        if (!(l = inter_members(c, INTER_LOCAL_FIRST(c), &me)))
            return MPI_ERR_NO_MEM;
        n += c->npeers;
    }
    struct aptus_ctxid_agree g;
    int rc = aptus_ctxid_agree_run(&g, l ? l : c->world, n, me, (uint16_t)(c->ctx + APTUS_CTX_MGMT),
                                   APTUS_TAG_SEQ(seq, 0), APTUS_CTXID_KEY_SEQ(c->ctx_slot, seq), want, !take, 0, NULL);
    memcpy(s, g.slots, (size_t)want * sizeof(int));
    aptus_ctxid_agree_end(&g);
    free(l);
    return rc;
}

/* An intracommunicator over world[0 .. n-1] on slot s (taken by an agreement: given back on
 * failure), deriving from parent's session. */
static int intra_new(struct aptus_comm *parent, struct aptus_errhandler *errh, const int *world, int n, int s,
                     struct aptus_comm **out)
{
    *out = comm_alloc(errh, world, n, NULL, 0);
    if (!*out) {
        slots_release(&s, 1);
        return MPI_ERR_NO_MEM;
    }
    if (parent)
        inherit_session(*out, parent);
    comm_set_slot(*out, s);
    return MPI_SUCCESS;
}

int aptus_comm_create_from(struct aptus_comm *parent, const int *world, int n, struct aptus_comm **out)
{
    int slot;
    *out = NULL;
    int rc = agree_over(parent, parent->mgmt_seq++, 1, n > 0, &slot);
    if (rc || n == 0)
        return rc;
    return intra_new(parent, parent->errh, world, n, slot, out);
}

int aptus_comm_create_group(struct aptus_comm *parent, const int *world, int n, int tag, struct aptus_comm **out)
{
    int me = -1;
    *out = NULL;
    for (int i = 0; i < n; i++)
        if (world[i] == aptus_rt.rank)
            me = i;
    if (me < 0)
        return MPI_SUCCESS;
    struct aptus_ctxid_agree g;
    int rc = aptus_ctxid_agree_run(&g, (int *)world, n, me, (uint16_t)(parent->ctx + APTUS_CTX_MGMT),
                                   APTUS_TAG_CGROUP(tag), APTUS_CTXID_KEY_CGROUP(parent->ctx_slot, tag), 1, 0, 0, NULL);
    aptus_ctxid_agree_end(&g);
    if (rc)
        return rc;
    return intra_new(parent, parent->errh, world, n, g.slots[0], out);
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
    int s[2], want = c->is_inter ? 2 : 1;
    *out = NULL;
    int rc = agree_over(c, c->mgmt_seq++, want, 1, s);
    if (rc)
        return rc;
    rc = dup_object(c, out);
    if (rc) {
        slots_release(s, want);
        return rc;
    }
    comm_set_slot(*out, s[0]);
    if (c->is_inter)
        comm_set_slot((*out)->local_comm, s[1]);
    return MPI_SUCCESS;
}

/* ---------------- MPI_Comm_idup: the agreement as a background task ---------------- */

struct idup {
    struct aptus_comm *parent;
    /* The copy and the user's request; both NULL when the copy failed on this process (reported
     * by MPI_Comm_idup itself): the task then only takes part in the agreement, so that the
     * other members' idup completes. */
    struct aptus_comm *newc;
    struct aptus_request *req;
    int *list; /* participants (NULL: parent->world) */
    struct aptus_ctxid_agree g;
};

static int idup_poll(void *arg)
{
    struct idup *d = arg;
    if (!aptus_ctxid_agree_poll(&d->g))
        return 0;
    aptus_ctxid_agree_end(&d->g);
    int err = d->g.err;
    if (d->req) {
        if (!err) {
            comm_set_slot(d->newc, d->g.slots[0]);
            if (d->g.want == 2)
                comm_set_slot(d->newc->local_comm, d->g.slots[1]);
        } else {
            d->newc->magic = 0; /* no context: the handle is invalid (the object is leaked) */
        }
        d->req->st_error = err;
        aptus_req_complete(d->req);
    }
    aptus_comm_release(d->parent);
    free(d->list);
    free(d);
    return 1;
}

int aptus_comm_idup(struct aptus_comm *c, struct aptus_comm **out, struct aptus_request **req)
{
    *out = NULL;
    *req = NULL;
    struct idup *d = calloc(1, sizeof *d);
    if (!d)
        return MPI_ERR_NO_MEM;
    int n = c->size, me = c->rank;
    if (c->is_inter) {
        if (!(d->list = inter_members(c, INTER_LOCAL_FIRST(c), &me))) {
            free(d);
            return MPI_ERR_NO_MEM;
        }
        n += c->npeers;
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
    /* a failure to start is reported by the first poll, through the request */
    aptus_ctxid_agree_start(&d->g, d->list ? d->list : c->world, n, me, (uint16_t)(c->ctx + APTUS_CTX_MGMT),
                            APTUS_TAG_SEQ(seq, 0), APTUS_CTXID_KEY_SEQ(c->ctx_slot, seq), c->is_inter ? 2 : 1,
                            d->req == NULL, 0, NULL);
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
    int ln = 0, rn = 0, s[2];
    if (!rc) {
        ln = split_members(lt, n, color, c, 0, lw, e);
        rn = split_members(rt, m, color, c, 1, rw, e);
        rc = agree_over(c, seq, 2, ln > 0 && rn > 0, s);
    }
    if (!rc && ln > 0 && rn > 0) {
        *out = inter_new(c->errh, lw, ln, rw, rn, s);
        inherit_session(*out, c);
        if (!*out)
            rc = MPI_ERR_NO_MEM;
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

int aptus_comm_split_node(struct aptus_comm *c, int color, int key, int ncolors, struct aptus_comm **out)
{
    if (c->is_inter) {
        /* MPI 4.1: each side is split by the type; a part of one group on a node pairs with the
         * part of the other group on the same node (same color), as MPI_Comm_split pairs
         * colors. The node and the color make one color: colors here are below size + npeers
         * + 2 (mpi://SELF gives rank + 1) or ncolors (a hardware instance), the same bound on
         * both sides. */
        long stride = (long)c->size + c->npeers + 2;
        if (stride < ncolors)
            stride = ncolors;
        long nc = (long)aptus_rt.node * stride + color;
        if (color != MPI_UNDEFINED && nc > INT_MAX)
            return MPI_ERR_INTERN;
        return split_inter(c, color == MPI_UNDEFINED ? MPI_UNDEFINED : (int)nc, key, out);
    }
    /* The members on this node, in c's rank order: who they are is known here, so only they
     * talk. One agreement among them carries the context ids and every member's (in, color,
     * key), ORed into its own words; a member staying out only takes part. A slot free for all
     * the node's members that take part serves every color. */
    int in = color != MPI_UNDEFINED;
    uint32_t seq = c->mgmt_seq++;
    int n = 0, me = -1;
    *out = NULL;
    int *l = malloc((size_t)c->size * sizeof(int));
    uint32_t *x = calloc((size_t)c->size * 3, sizeof(uint32_t));
    if (!l || !x) {
        free(l);
        free(x);
        return MPI_ERR_NO_MEM;
    }
    for (int i = 0; i < c->size; i++) {
        int w = aptus_comm_world_rank(c, i);
        if (aptus_rt.node_of[w] != aptus_rt.node)
            continue;
        if (i == c->rank)
            me = n;
        l[n++] = w;
    }
    x[3 * me] = (uint32_t)in;
    x[3 * me + 1] = (uint32_t)color;
    x[3 * me + 2] = (uint32_t)key;
    struct aptus_ctxid_agree g;
    int rc = aptus_ctxid_agree_run(&g, l, n, me, (uint16_t)(c->ctx + APTUS_CTX_MGMT), APTUS_TAG_SEQ(seq, 1),
                                   APTUS_CTXID_KEY_SEQ(c->ctx_slot, seq), 1, !in, 3 * n, x);
    if (!rc && in) {
        const uint32_t *t = g.a.val + 2;
        struct split_entry *e = malloc((size_t)n * sizeof *e);
        int *w = malloc((size_t)n * sizeof(int));
        int m = 0;
        rc = MPI_ERR_NO_MEM;
        if (e && w) {
            for (int i = 0; i < n; i++)
                if (t[3 * i] && (int)t[3 * i + 1] == color)
                    e[m++] = (struct split_entry){ (int)t[3 * i + 2], i };
            qsort(e, (size_t)m, sizeof *e, split_cmp);
            for (int i = 0; i < m; i++)
                w[i] = l[e[i].rank];
            rc = intra_new(c, c->errh, w, m, g.slots[0], out);
        } else {
            slots_release(g.slots, 1);
        }
        free(e);
        free(w);
    }
    aptus_ctxid_agree_end(&g);
    free(l);
    free(x);
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
    int in = 0;
    for (int i = 0; i < n; i++)
        in |= world[i] == aptus_rt.rank;
    in = in && n > 0 && m > 0;
    int s[2];
    if (!rc)
        rc = agree_over(c, seq, 2, in, s);
    if (!rc && in) {
        *out = inter_new(c->errh, world, n, rw, m, s);
        inherit_session(*out, c);
        if (!*out)
            rc = MPI_ERR_NO_MEM;
    }
    free(rw);
    return rc;
}

/* MPI_Intercomm_create's rounds (comm/context_id.h): the local group ANDs its contributions, the
 * leaders AND the two groups' results, each leader tells its group. Both groups visit the same
 * windows (the key is made of both groups' keys) and see the same results, so they take the same
 * two slots or go on together. Returns an MPI error class; s[] gets the slots. */
static int icreate_agree(struct aptus_comm *local, int local_leader, struct aptus_comm *peer, int remote_leader,
                         int tag, uint32_t seq, uint64_t key, int *s)
{
    struct aptus_ctxid id;
    aptus_ctxid_open(&id, key, 1);
    int rc;
    for (;;) {
        struct aptus_agree a;
        uint32_t busy, mine[2];
        rc = aptus_agree_init(&a, local->world, local->size, local->rank, (uint16_t)(local->ctx + APTUS_CTX_MGMT),
                              APTUS_TAG_SEQ(seq, 2), 2, 1);
        if (rc)
            break;
        a.val[0] = aptus_ctxid_hold(&id, &busy);
        a.val[1] = busy;
        aptus_agree_run(&a);
        /* {status, result, busy} from the leader */
        int32_t info[3] = { a.err, (int32_t)a.val[0], (int32_t)a.val[1] };
        aptus_agree_done(&a);
        if (local->rank == local_leader && !info[0]) {
            uint32_t theirs[2] = { 0, 0 };
            mine[0] = (uint32_t)info[1];
            mine[1] = (uint32_t)info[2];
            info[0] = mgmt_sendrecv(peer, mine, sizeof mine, remote_leader, theirs, sizeof theirs, remote_leader,
                                    APTUS_TAG_ICREATE(tag));
            info[1] = (int32_t)(mine[0] & theirs[0]);
            info[2] = (int32_t)(mine[1] | theirs[1]);
        }
        rc = aptus_bcast(info, sizeof info, local_leader, local);
        if (!rc)
            rc = info[0];
        if (rc)
            break;
        rc = aptus_ctxid_settle(&id, (uint32_t)info[1], (uint32_t)info[2], 2, 1, s);
        if (rc) {
            rc = rc < 0 ? -rc : MPI_SUCCESS;
            break;
        }
    }
    aptus_ctxid_close(&id);
    return rc;
}

static int list_foreign(const int *l, int n)
{
    for (int i = 0; i < n; i++)
        if (l[i] >= aptus_rt.size)
            return 1;
    return 0;
}

/* MPI_Intercomm_create between groups with processes of other jobs (dynamic processes): a member
 * of one group may not know every member of the other, so the groups go as cards (channel/procs.c:
 * how to reach each process), not as process indexes, which mean nothing in another job. Every
 * member makes its card (starting UD if needed); the leaders swap their groups' cards over peer;
 * each leader checks that the groups do not overlap and broadcasts the outcome and the cards; each
 * member gives the other group's processes their indexes (*rw). info[1] is the remote size.
 * Returns an MPI error class, alike on every member. */
static int icreate_cards(struct aptus_comm *local, int local_leader, struct aptus_comm *peer, int remote_leader,
                         int tag, const int32_t *info, const int *lw, int **rw)
{
    int n = local->size, m = info[1], leader = local->rank == local_leader;
    size_t cs = sizeof(struct aptus_proc_card);
    struct aptus_proc_card me, *mine = malloc((size_t)n * cs), *theirs = malloc((size_t)(m > 0 ? m : 1) * cs);
    char err[320];
    if (aptus_proc_card_self(&me, 1, err, sizeof err) != 0) {
        char msg[400];
        snprintf(msg, sizeof msg, "MPI_Intercomm_create: this process cannot be reached by another job's: %s", err);
        aptus_abort_job(MPI_ERR_OTHER, msg); /* (the others would wait for its card) */
    }
    if (!mine || !theirs)
        aptus_abort_job(MPI_ERR_NO_MEM, "MPI_Intercomm_create: out of memory for the groups' cards");
    int rc = aptus_allgather_internal(local, &me, mine, cs);
    int32_t st = rc;
    if (leader && !st)
        st = mgmt_sendrecv(peer, mine, (size_t)n * cs, remote_leader, theirs, (size_t)m * cs, remote_leader,
                           APTUS_TAG_ICREATE(tag));
    if (!(*rw = malloc((size_t)(m > 0 ? m : 1) * sizeof(int))))
        aptus_abort_job(MPI_ERR_NO_MEM, "MPI_Intercomm_create: out of memory");
    if (leader && !st)
        for (int j = 0; j < m && !st; j++) {
            if (((*rw)[j] = aptus_proc_index(&theirs[j], err, sizeof err)) < 0)
                st = MPI_ERR_OTHER;
            for (int i = 0; i < n && !st; i++)
                if (lw && lw[i] == (*rw)[j])
                    st = MPI_ERR_ARG; /* the groups overlap */
        }
    int rc2 = aptus_bcast(&st, sizeof st, local_leader, local);
    if (!rc2 && !st)
        rc2 = aptus_bcast(theirs, (size_t)m * cs, local_leader, local);
    for (int j = 0; !rc2 && !st && !leader && j < m; j++)
        if (((*rw)[j] = aptus_proc_index(&theirs[j], err, sizeof err)) < 0) {
            char msg[400];
            snprintf(msg, sizeof msg, "MPI_Intercomm_create: a process of the remote group cannot be reached: %s", err);
            aptus_abort_job(MPI_ERR_OTHER, msg);
        }
    free(mine);
    free(theirs);
    return rc2 ? rc2 : st;
}

int aptus_intercomm_create(struct aptus_comm *local, int local_leader, struct aptus_comm *peer, int remote_leader,
                           int tag, int leader_err, struct aptus_comm **out, const char **why)
{
    uint32_t seq = local->mgmt_seq++;
    int n = local->size;
    *out = NULL;
    *why = "out of memory";
    /* 1. the leaders swap group sizes, agreement keys and member lists; 2. each tells its group:
     * {status, remote size, remote key}, the remote list; 3. the rounds of the agreement */
    struct {
        int32_t size, pad;
        uint64_t key;
    } mine = { n, 0, APTUS_CTXID_KEY_SEQ(local->ctx_slot, seq) }, theirs = { 0, 0, 0 };
    int *lw = member_list(local), *rw = NULL;
    int local_err = lw ? 0 : MPI_ERR_NO_MEM;
    int32_t info[5] = { 0, 0, 0, 0, 0 };
    if (local->rank == local_leader)
        info[0] = local_err ? local_err : leader_err;
    if (local->rank == local_leader && !info[0]) {
        int t = APTUS_TAG_ICREATE(tag);
        /* (processes of other jobs on either side: the groups go as cards, below) */
        mine.pad = lw && (list_foreign(lw, n) || aptus_comm_peer_world(peer, remote_leader) >= aptus_rt.size);
        info[0] = mgmt_sendrecv(peer, &mine, sizeof mine, remote_leader, &theirs, sizeof theirs, remote_leader, t);
        info[4] = mine.pad | theirs.pad;
        if (!info[0] && info[4]) {
            info[1] = theirs.size;
            memcpy(info + 2, &theirs.key, sizeof theirs.key);
        } else if (!info[0]) {
            rw = malloc((size_t)(theirs.size > 0 ? theirs.size : 1) * sizeof(int));
            info[1] = theirs.size;
            memcpy(info + 2, &theirs.key, sizeof theirs.key);
            info[0] = rw ? mgmt_sendrecv(peer, lw, (size_t)n * sizeof(int), remote_leader, rw,
                                         (size_t)theirs.size * sizeof(int), remote_leader, t)
                         : MPI_ERR_NO_MEM;
        }
        for (int i = 0; i < n && !info[0] && !info[4]; i++)
            for (int j = 0; j < theirs.size && !info[0]; j++)
                if (lw[i] == rw[j])
                    info[0] = MPI_ERR_ARG; /* the groups overlap (cards: icreate_cards checks) */
    }
    int rc = aptus_bcast(info, sizeof info, local_leader, local);
    if (!rc)
        rc = info[0];
    if (!rc && info[4]) {
        /* the groups as cards: every member's own, then the other group's from the leaders */
        rc = icreate_cards(local, local_leader, peer, remote_leader, tag, info, lw, &rw);
        if (rc)
            info[0] = rc; /* (the same on every member: the leader's outcome was broadcast) */
    } else if (!rc && local->rank != local_leader) {
        rw = malloc((size_t)(info[1] > 0 ? info[1] : 1) * sizeof(int));
        if (!rw)
            rc = MPI_ERR_NO_MEM; /* the broadcast below still needs everyone: report after */
    }
    if (info[0] == 0 && !info[4]) {
        int rc2 = aptus_bcast(rw ? rw : info, rw ? (size_t)info[1] * sizeof(int) : 0, local_leader, local);
        if (!rc)
            rc = rc2;
    }
    int s[2];
    if (info[0] == 0) {
        uint64_t rkey;
        memcpy(&rkey, info + 2, sizeof rkey);
        /* every member takes part in the rounds, also one whose own allocation failed */
        int rc2 =
            icreate_agree(local, local_leader, peer, remote_leader, tag, seq, aptus_ctxid_key_pair(mine.key, rkey), s);
        if (!rc)
            rc = local_err; /* this member's own failure (the leader's is in info[0]) */
        if (!rc)
            rc = rc2;
        else if (!rc2)
            slots_release(s, 2);
    }
    if (!rc) {
        *out = inter_new(local->errh, lw, n, rw, info[1], s);
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
    int n = c->size + c->npeers, me;
    int *l = inter_members(c, high != rhigh ? !high : INTER_LOCAL_FIRST(c), &me);
    if (!l)
        return MPI_ERR_NO_MEM;
    struct aptus_ctxid_agree g;
    rc = aptus_ctxid_agree_run(&g, l, n, me, (uint16_t)(c->ctx + APTUS_CTX_MGMT), APTUS_TAG_SEQ(seq, 0),
                               APTUS_CTXID_KEY_SEQ(c->ctx_slot, seq), 1, 0, 0, NULL);
    aptus_ctxid_agree_end(&g);
    if (!rc)
        rc = intra_new(c, c->errh, l, n, g.slots[0], out);
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

/* The agreement of both forms: `want` slots among the n participants of `list`. */
static int from_group_agree(int *list, int n, int me, int tag, int want, int *s)
{
    struct aptus_ctxid_agree g;
    int rc = aptus_ctxid_agree_run(&g, list, n, me, APTUS_CTX_FROM_GROUP, tag, APTUS_CTXID_KEY_FROM_GROUP(tag), want, 0,
                                   0, NULL);
    memcpy(s, g.slots, (size_t)want * sizeof(int));
    aptus_ctxid_agree_end(&g);
    return rc;
}

int aptus_comm_from_group(const int *world, int n, int tag, struct aptus_errhandler *errh, struct aptus_comm **out)
{
    int slot, me = from_group_list(world, n);
    *out = NULL;
    if (me < 0)
        return MPI_ERR_GROUP;
    int rc = from_group_agree((int *)world, n, me, tag, 1, &slot);
    return rc ? rc : intra_new(NULL, errh, world, n, slot, out);
}

/* Both forms' agreement over the union of the groups, listed alike on every participant:
 * `local_first` says whether this side's group comes first. */
static int inter_from_lists(const int *local, int n, const int *remote, int m, int local_first, int tag,
                            struct aptus_errhandler *errh, struct aptus_comm **out)
{
    *out = NULL;
    int me = from_group_list(local, n);
    if (me < 0 || n == 0 || m == 0)
        return MPI_ERR_GROUP;
    int *l = malloc((size_t)(n + m) * sizeof(int));
    if (!l)
        return MPI_ERR_NO_MEM;
    memcpy(l + (local_first ? 0 : m), local, (size_t)n * sizeof(int));
    memcpy(l + (local_first ? n : 0), remote, (size_t)m * sizeof(int));
    if (!local_first)
        me += m;
    int s[2];
    int rc = from_group_agree(l, n + m, me, tag, 2, s);
    free(l);
    if (rc)
        return rc;
    *out = inter_new(errh, local, n, remote, m, s);
    return *out ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}

int aptus_intercomm_from_groups(const int *local, int n, const int *remote, int m, int tag,
                                struct aptus_errhandler *errh, struct aptus_comm **out)
{
    /* both sides list the union the same way: the group whose first member comes first first */
    return inter_from_lists(local, n, remote, m, n && m && aptus_proc_before(local[0], remote[0]), tag, errh, out);
}

int aptus_intercomm_from_parent(struct aptus_comm *parent, const int *remote, int m, int tag, struct aptus_comm **out)
{
    int *l = member_list(parent);
    if (!l)
        return MPI_ERR_NO_MEM;
    int rc =
        inter_from_lists(l, parent->size, remote, m, m && aptus_proc_before(l[0], remote[0]), tag, parent->errh, out);
    free(l);
    inherit_session(*out, parent);
    return rc;
}

/* ---------------- release, compare ---------------- */

void aptus_comm_release(struct aptus_comm *c)
{
    if (c == &aptus_comm_world_obj || c == &aptus_comm_self_obj)
        return;
    if (--c->refcount > 0)
        return;
    if (c->ctx_slot)
        aptus_ctxid_release(c->ctx_slot);
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
