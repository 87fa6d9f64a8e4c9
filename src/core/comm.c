#include "core/comm.h"

#include <stdlib.h>
#include <string.h>

#include "coll/coll.h"
#include "core/errors.h"
#include "runtime/runtime.h"

extern struct aptus_errhandler aptus_errh_fatal;

struct aptus_comm aptus_comm_world_obj, aptus_comm_self_obj;

/* Context ids: slot s gives point-to-point context 2s and collective context 2s + 1. Slot 0 is
 * MPI_COMM_WORLD, slot 1 MPI_COMM_SELF. A new communicator takes the lowest slot free on every
 * member, agreed by an allreduce (bitwise AND) of the free masks over the parent. */
#define CTX_SLOTS 2048
static uint32_t ctx_free[CTX_SLOTS / 32];

static void ctx_mark(int slot, int used)
{
    if (used)
        ctx_free[slot / 32] &= ~(1u << (slot % 32));
    else
        ctx_free[slot / 32] |= 1u << (slot % 32);
}

void aptus_comm_init(void)
{
    memset(ctx_free, 0xff, sizeof ctx_free);
    ctx_mark(0, 1);
    ctx_mark(1, 1);
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
    strcpy(w->name, "MPI_COMM_WORLD");
    s->rank = 0;
    s->size = s->npeers = 1;
    s->world = s->peers = malloc(sizeof(int));
    s->world[0] = aptus_rt.rank;
    s->ctx = 2;
    s->ctx_slot = 1;
    s->handle = MPI_COMM_SELF;
    strcpy(s->name, "MPI_COMM_SELF");
}

void aptus_comm_finalize(void)
{
    free(aptus_comm_self_obj.world);
    aptus_comm_self_obj.world = aptus_comm_self_obj.peers = NULL;
}

static int ctx_agree(struct aptus_comm *parent, int *slot)
{
    uint32_t mask[CTX_SLOTS / 32];
    memcpy(mask, ctx_free, sizeof mask);
    int rc = aptus_allreduce_u32(parent, mask, CTX_SLOTS / 32, APTUS_OP_BAND);
    if (rc)
        return rc;
    for (int i = 0; i < CTX_SLOTS / 32; i++)
        if (mask[i]) {
            *slot = i * 32 + __builtin_ctz(mask[i]);
            return 0;
        }
    return MPI_ERR_INTERN;
}

static struct aptus_comm *comm_new(struct aptus_comm *parent, const int *world, int n, int slot)
{
    struct aptus_comm *c = calloc(1, sizeof *c);
    int *w = malloc((size_t)n * sizeof(int));
    if (!c || !w) {
        free(c);
        free(w);
        return NULL;
    }
    memcpy(w, world, (size_t)n * sizeof(int));
    c->magic = APTUS_MAGIC_COMM;
    c->refcount = 1;
    c->size = c->npeers = n;
    c->rank = -1;
    for (int i = 0; i < n; i++)
        if (w[i] == aptus_rt.rank)
            c->rank = i;
    c->world = c->peers = w;
    c->ctx = (uint16_t)(2 * slot);
    c->ctx_slot = (uint16_t)slot;
    c->errh = parent->errh;
    c->errh->refcount++;
    c->handle = (MPI_Comm)c;
    ctx_mark(slot, 1);
    return c;
}

int aptus_comm_create_from(struct aptus_comm *parent, const int *world, int n, struct aptus_comm **out)
{
    int slot;
    int rc = ctx_agree(parent, &slot);
    *out = NULL;
    if (rc)
        return rc;
    if (n == 0)
        return MPI_SUCCESS;
    *out = comm_new(parent, world, n, slot);
    return *out ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}

int aptus_comm_dup(struct aptus_comm *c, struct aptus_comm **out)
{
    int *world = malloc((size_t)c->size * sizeof(int));
    if (!world)
        return MPI_ERR_NO_MEM;
    for (int i = 0; i < c->size; i++)
        world[i] = aptus_comm_world_rank(c, i);
    int rc = aptus_comm_create_from(c, world, c->size, out);
    free(world);
    return rc;
}

struct split_entry {
    int color, key, rank;
};

static int split_cmp(const void *a, const void *b)
{
    const struct split_entry *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->rank < y->rank ? -1 : (x->rank > y->rank);
}

int aptus_comm_split(struct aptus_comm *c, int color, int key, struct aptus_comm **out)
{
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
    if (!rc && color != MPI_UNDEFINED) {
        for (int i = 0; i < n; i++)
            if (all[2 * i] == color)
                e[m++] = (struct split_entry){ color, all[2 * i + 1], i };
        qsort(e, (size_t)m, sizeof *e, split_cmp);
        for (int i = 0; i < m; i++)
            world[i] = aptus_comm_world_rank(c, e[i].rank);
    }
    if (!rc)
        rc = aptus_comm_create_from(c, world, m, out);
    free(all);
    free(e);
    free(world);
    return rc;
}

void aptus_comm_release(struct aptus_comm *c)
{
    if (c == &aptus_comm_world_obj || c == &aptus_comm_self_obj)
        return;
    if (--c->refcount > 0)
        return;
    ctx_mark(c->ctx_slot, 0);
    c->magic = 0;
    free(c->world);
    free(c);
}

int aptus_comm_compare(const struct aptus_comm *a, const struct aptus_comm *b)
{
    if (a == b)
        return MPI_IDENT;
    if (a->size != b->size)
        return MPI_UNEQUAL;
    int same_order = 1;
    for (int i = 0; i < a->size; i++)
        if (aptus_comm_world_rank(a, i) != aptus_comm_world_rank(b, i))
            same_order = 0;
    if (same_order)
        return MPI_CONGRUENT;
    for (int i = 0; i < a->size; i++) {
        int found = 0;
        for (int j = 0; j < b->size && !found; j++)
            found = aptus_comm_world_rank(a, i) == aptus_comm_world_rank(b, j);
        if (!found)
            return MPI_UNEQUAL;
    }
    return MPI_SIMILAR;
}
