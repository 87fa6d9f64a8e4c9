/* Groups: ordered lists of world ranks, reference counted. MPI_GROUP_EMPTY is a static object
 * that every empty result shares. */
#include <stdlib.h>
#include <string.h>

#include "core/group.h"
#include "runtime/runtime.h"

struct aptus_group aptus_group_empty_obj = { APTUS_MAGIC_GROUP, 1, 0, NULL };

struct aptus_group *aptus_group_lookup(MPI_Group h)
{
    if (h == MPI_GROUP_EMPTY)
        return &aptus_group_empty_obj;
    return aptus_group_get(h);
}

MPI_Group aptus_group_handle(struct aptus_group *g)
{
    return g == &aptus_group_empty_obj ? MPI_GROUP_EMPTY : (MPI_Group)g;
}

struct aptus_group *aptus_group_new(const int *world, int n)
{
    if (n == 0)
        return &aptus_group_empty_obj;
    struct aptus_group *g = aptus_obj_alloc(APTUS_OBJ_GROUP, sizeof *g);
    int *w = malloc((size_t)n * sizeof(int));
    if (!g || !w) {
        aptus_obj_free(APTUS_OBJ_GROUP, g);
        free(w);
        return NULL;
    }
    memcpy(w, world, (size_t)n * sizeof(int));
    g->magic = APTUS_MAGIC_GROUP;
    g->refcount = 1;
    g->size = n;
    g->world = w;
    return g;
}

void aptus_group_release(struct aptus_group *g)
{
    if (g == &aptus_group_empty_obj)
        return;
    if (--g->refcount > 0)
        return;
    g->magic = 0;
    free(g->world);
    aptus_obj_free(APTUS_OBJ_GROUP, g);
}

int aptus_group_index(const struct aptus_group *g, int w)
{
    for (int i = 0; i < g->size; i++)
        if (g->world[i] == w)
            return i;
    return MPI_UNDEFINED;
}

struct aptus_group *aptus_comm_group(const struct aptus_comm *c, int remote)
{
    int n = remote ? c->npeers : c->size;
    int *w = malloc((size_t)(n ? n : 1) * sizeof(int));
    if (!w)
        return NULL;
    for (int i = 0; i < n; i++)
        w[i] = remote ? aptus_comm_peer_world(c, i) : aptus_comm_world_rank(c, i);
    struct aptus_group *g = aptus_group_new(w, n);
    free(w);
    return g;
}

static void (*comm_release)(struct aptus_comm *c);

void aptus_comm_release_set(void (*release)(struct aptus_comm *c))
{
    comm_release = release;
}

void aptus_comm_unref(struct aptus_comm *c)
{
    comm_release(c);
}
