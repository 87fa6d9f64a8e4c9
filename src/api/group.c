/* Groups (MPI standard, section 7.3): queries, set algebra, inclusion and exclusion. A group is
 * an ordered list of world ranks (core/group.c); the operations use a world-rank -> index map
 * so that every one is linear in the sizes involved. */
#include <stdlib.h>
#include <string.h>

#include "api/check.h"
#include "comm/create.h"
#include "runtime/lock.h"

/* index_of[w] = position of world rank w in g, or -1. NULL: out of memory. */
static int *index_map(const struct aptus_group *g)
{
    int *m = malloc((size_t)(aptus_rt.size > 0 ? aptus_rt.size : 1) * sizeof(int));
    if (!m)
        return NULL;
    for (int i = 0; i < aptus_rt.size; i++)
        m[i] = -1;
    for (int i = 0; i < g->size; i++)
        m[g->world[i]] = i;
    return m;
}

/* Hands a new group of n world ranks to the user. */
static int give(const int *world, int n, MPI_Group *newgroup, const char *fn)
{
    struct aptus_group *g = aptus_group_new(world, n);
    if (!g)
        return aptus_error(NULL, MPI_ERR_NO_MEM, fn, "out of memory");
    *newgroup = aptus_group_handle(g);
    return MPI_SUCCESS;
}

int PMPI_Group_size(MPI_Group group, int *size)
{
    APTUS_API_LOCK();
    API_INIT("MPI_Group_size");
    GET_GROUP(g, group, NULL, "MPI_Group_size");
    if (!size)
        return aptus_error(NULL, MPI_ERR_ARG, "MPI_Group_size", "null size argument");
    *size = g->size;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Group_size)

int PMPI_Group_rank(MPI_Group group, int *rank)
{
    APTUS_API_LOCK();
    API_INIT("MPI_Group_rank");
    GET_GROUP(g, group, NULL, "MPI_Group_rank");
    if (!rank)
        return aptus_error(NULL, MPI_ERR_ARG, "MPI_Group_rank", "null rank argument");
    *rank = aptus_group_index(g, aptus_rt.rank);
    return MPI_SUCCESS;
}
APTUS_ALIAS(Group_rank)

int PMPI_Group_free(MPI_Group *group)
{
    APTUS_API_LOCK();
    API_INIT("MPI_Group_free");
    if (!group)
        return aptus_error(NULL, MPI_ERR_ARG, "MPI_Group_free", "null group argument");
    GET_GROUP(g, *group, NULL, "MPI_Group_free");
    aptus_group_release(g); /* MPI_GROUP_EMPTY (what empty results are) stays */
    *group = MPI_GROUP_NULL;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Group_free)

int PMPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[], MPI_Group group2, int ranks2[])
{
    APTUS_API_LOCK();
    const char *fn = "MPI_Group_translate_ranks";
    API_INIT(fn);
    GET_GROUP(a, group1, NULL, fn);
    GET_GROUP(b, group2, NULL, fn);
    if (n < 0)
        return aptus_error(NULL, MPI_ERR_ARG, fn, "negative number of ranks %d", n);
    if (n > 0 && (!ranks1 || !ranks2))
        return aptus_error(NULL, MPI_ERR_ARG, fn, "null ranks array");
    for (int i = 0; i < n; i++)
        if (ranks1[i] != MPI_PROC_NULL && (ranks1[i] < 0 || ranks1[i] >= a->size))
            return aptus_error(NULL, MPI_ERR_RANK, fn, "ranks1[%d] = %d is not a rank of group1 (size %d)", i,
                               ranks1[i], a->size);
    int *map = index_map(b);
    if (!map)
        return aptus_error(NULL, MPI_ERR_NO_MEM, fn, "out of memory");
    for (int i = 0; i < n; i++) {
        if (ranks1[i] == MPI_PROC_NULL) {
            ranks2[i] = MPI_PROC_NULL;
        } else {
            int j = map[a->world[ranks1[i]]];
            ranks2[i] = j < 0 ? MPI_UNDEFINED : j;
        }
    }
    free(map);
    return MPI_SUCCESS;
}
APTUS_ALIAS(Group_translate_ranks)

int PMPI_Group_compare(MPI_Group group1, MPI_Group group2, int *result)
{
    APTUS_API_LOCK();
    const char *fn = "MPI_Group_compare";
    API_INIT(fn);
    GET_GROUP(a, group1, NULL, fn);
    GET_GROUP(b, group2, NULL, fn);
    if (!result)
        return aptus_error(NULL, MPI_ERR_ARG, fn, "null result argument");
    if (a->size != b->size) {
        *result = MPI_UNEQUAL;
        return MPI_SUCCESS;
    }
    int same = 1;
    for (int i = 0; i < a->size && same; i++)
        same = a->world[i] == b->world[i];
    if (same) {
        *result = MPI_IDENT;
        return MPI_SUCCESS;
    }
    int *map = index_map(b);
    if (!map)
        return aptus_error(NULL, MPI_ERR_NO_MEM, fn, "out of memory");
    *result = MPI_SIMILAR;
    for (int i = 0; i < a->size; i++)
        if (map[a->world[i]] < 0)
            *result = MPI_UNEQUAL;
    free(map);
    return MPI_SUCCESS;
}
APTUS_ALIAS(Group_compare)

/* Union, intersection and difference: op 0, 1, 2. */
static int set_op(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup, int op, const char *fn)
{
    API_INIT(fn);
    GET_GROUP(a, group1, NULL, fn);
    GET_GROUP(b, group2, NULL, fn);
    if (!newgroup)
        return aptus_error(NULL, MPI_ERR_ARG, fn, "null newgroup argument");
    int *map = index_map(b);
    int *out = malloc((size_t)(a->size + b->size + 1) * sizeof(int));
    int *in_a = op == 0 ? index_map(a) : NULL;
    if (!map || !out || (op == 0 && !in_a)) {
        free(map);
        free(out);
        free(in_a);
        return aptus_error(NULL, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    int n = 0;
    for (int i = 0; i < a->size; i++) {
        int in_b = map[a->world[i]] >= 0;
        if (op == 0 || (op == 1 && in_b) || (op == 2 && !in_b))
            out[n++] = a->world[i];
    }
    if (op == 0)
        for (int i = 0; i < b->size; i++)
            if (in_a[b->world[i]] < 0)
                out[n++] = b->world[i];
    int rc = give(out, n, newgroup, fn);
    free(map);
    free(out);
    free(in_a);
    return rc;
}

int PMPI_Group_union(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    APTUS_OUT_NULL(newgroup, MPI_GROUP_NULL);
    APTUS_API_LOCKED(set_op(group1, group2, newgroup, 0, "MPI_Group_union"));
}
APTUS_ALIAS(Group_union)

int PMPI_Group_intersection(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    APTUS_OUT_NULL(newgroup, MPI_GROUP_NULL);
    APTUS_API_LOCKED(set_op(group1, group2, newgroup, 1, "MPI_Group_intersection"));
}
APTUS_ALIAS(Group_intersection)

int PMPI_Group_difference(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    APTUS_OUT_NULL(newgroup, MPI_GROUP_NULL);
    APTUS_API_LOCKED(set_op(group1, group2, newgroup, 2, "MPI_Group_difference"));
}
APTUS_ALIAS(Group_difference)

/* Checks a list of n ranks of g (each valid, all distinct); `seen` has g->size zeroed entries.
 * Returns 0 or the raised error. */
static int check_ranks(const struct aptus_group *g, int n, const int *ranks, char *seen, const char *fn)
{
    for (int i = 0; i < n; i++) {
        if (ranks[i] < 0 || ranks[i] >= g->size)
            return aptus_error(NULL, MPI_ERR_RANK, fn, "ranks[%d] = %d is not a rank of the group (size %d)", i,
                               ranks[i], g->size);
        if (seen[ranks[i]])
            return aptus_error(NULL, MPI_ERR_RANK, fn, "rank %d appears twice", ranks[i]);
        seen[ranks[i]] = 1;
    }
    return MPI_SUCCESS;
}

/* Include (excl == 0) or exclude the n ranks listed. */
static int incl_excl(struct aptus_group *g, int n, const int *ranks, int excl, MPI_Group *newgroup, const char *fn)
{
    if (!newgroup)
        return aptus_error(NULL, MPI_ERR_ARG, fn, "null newgroup argument");
    if (n < 0)
        return aptus_error(NULL, MPI_ERR_ARG, fn, "negative number of ranks %d", n);
    if (n > 0 && !ranks)
        return aptus_error(NULL, MPI_ERR_ARG, fn, "null ranks array");
    char *seen = calloc((size_t)g->size + 1, 1);
    int *out = malloc((size_t)(g->size + 1) * sizeof(int));
    if (!seen || !out) {
        free(seen);
        free(out);
        return aptus_error(NULL, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    int rc = check_ranks(g, n, ranks, seen, fn);
    if (!rc) {
        int m = 0;
        if (excl) {
            for (int i = 0; i < g->size; i++)
                if (!seen[i])
                    out[m++] = g->world[i];
        } else {
            for (int i = 0; i < n; i++)
                out[m++] = g->world[ranks[i]];
        }
        rc = give(out, m, newgroup, fn);
    }
    free(seen);
    free(out);
    return rc;
}

int PMPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
    APTUS_OUT_NULL(newgroup, MPI_GROUP_NULL);
    APTUS_API_LOCK();
    API_INIT("MPI_Group_incl");
    GET_GROUP(g, group, NULL, "MPI_Group_incl");
    return incl_excl(g, n, ranks, 0, newgroup, "MPI_Group_incl");
}
APTUS_ALIAS(Group_incl)

int PMPI_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
    APTUS_OUT_NULL(newgroup, MPI_GROUP_NULL);
    APTUS_API_LOCK();
    API_INIT("MPI_Group_excl");
    GET_GROUP(g, group, NULL, "MPI_Group_excl");
    return incl_excl(g, n, ranks, 1, newgroup, "MPI_Group_excl");
}
APTUS_ALIAS(Group_excl)

/* Expands n (first, last, stride) triplets into ranks of g, checking each triplet. *out gets a
 * malloc'ed list (count in *m). Returns 0 or the raised error. */
static int expand_ranges(const struct aptus_group *g, int n, int ranges[][3], int **out, int *m, const char *fn)
{
    *out = NULL;
    *m = 0;
    if (n < 0)
        return aptus_error(NULL, MPI_ERR_ARG, fn, "negative number of ranges %d", n);
    if (n > 0 && !ranges)
        return aptus_error(NULL, MPI_ERR_ARG, fn, "null ranges array");
    long long total = 0;
    for (int i = 0; i < n; i++) {
        int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
        if (stride == 0)
            return aptus_error(NULL, MPI_ERR_ARG, fn, "range %d (%d, %d, %d) has stride 0", i, first, last, stride);
        if (first < 0 || first >= g->size || last < 0 || last >= g->size)
            return aptus_error(NULL, MPI_ERR_ARG, fn, "range %d (%d, %d, %d) names a rank outside the group (size %d)",
                               i, first, last, stride, g->size);
        if ((stride > 0 && first > last) || (stride < 0 && first < last))
            return aptus_error(NULL, MPI_ERR_ARG, fn, "range %d (%d, %d, %d): the stride goes away from the last rank",
                               i, first, last, stride);
        total += ((long long)last - first) / stride + 1;
    }
    if (total > g->size)
        return aptus_error(NULL, MPI_ERR_RANK, fn, "the ranges name %lld ranks, more than the group's %d (repeats)",
                           total, g->size);
    int *l = malloc((size_t)(total + 1) * sizeof(int));
    if (!l)
        return aptus_error(NULL, MPI_ERR_NO_MEM, fn, "out of memory");
    int k = 0;
    for (int i = 0; i < n; i++) {
        int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
        for (long long r = first; stride > 0 ? r <= last : r >= last; r += stride)
            l[k++] = (int)r;
    }
    *out = l;
    *m = k;
    return MPI_SUCCESS;
}

static int range_common(MPI_Group group, int n, int ranges[][3], int excl, MPI_Group *newgroup, const char *fn)
{
    API_INIT(fn);
    GET_GROUP(g, group, NULL, fn);
    int *l, m;
    int rc = expand_ranges(g, n, ranges, &l, &m, fn);
    if (rc)
        return rc;
    rc = incl_excl(g, m, l, excl, newgroup, fn);
    free(l);
    return rc;
}

int PMPI_Group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
    APTUS_OUT_NULL(newgroup, MPI_GROUP_NULL);
    APTUS_API_LOCKED(range_common(group, n, ranges, 0, newgroup, "MPI_Group_range_incl"));
}
APTUS_ALIAS(Group_range_incl)

int PMPI_Group_range_excl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
    APTUS_OUT_NULL(newgroup, MPI_GROUP_NULL);
    APTUS_API_LOCKED(range_common(group, n, ranges, 1, newgroup, "MPI_Group_range_excl"));
}
APTUS_ALIAS(Group_range_excl)
