/* Communicators (MPI standard, chapter 7, except caching): creation, intercommunicators,
 * comparison, names and info hints. */
#include <stdlib.h>
#include <string.h>

#include "api/check.h"
#include "coll/coll.h"
#include "comm/create.h"
#include "core/attr.h"
#include "core/info.h"
#include "pt2pt/pt2pt.h"
#include "runtime/hwtopo.h"
#include "runtime/lock.h"

/* A creation call failed in the core: out of memory, out of context ids, or an error code from
 * an attribute copy callback (which goes to the handler as it is). */
static int create_failed(struct aptus_comm *c, int rc, const char *fn)
{
    if (rc == MPI_ERR_NO_MEM)
        return aptus_error(c, rc, fn, "out of memory");
    if (rc == MPI_ERR_INTERN)
        return aptus_error(c, rc, fn, "no context id is free on every member (too many communicators)");
    if (rc > 0 && rc <= MPI_ERR_LASTCODE)
        return aptus_error(c, rc, fn, "could not create the communicator");
    return aptus_error_callback(c, rc, fn, "an attribute copy callback");
}

#define NEED_INTRA(c, FN)                                                                                              \
    if ((c)->is_inter)                                                                                                 \
    return aptus_error(c, MPI_ERR_COMM, FN, "%s is an intercommunicator; this call needs an intracommunicator",        \
                       (c)->name[0] ? (c)->name : "the communicator")

#define NEED_INTER(c, FN)                                                                                              \
    if (!(c)->is_inter)                                                                                                \
    return aptus_error(c, MPI_ERR_COMM, FN, "%s is an intracommunicator; this call needs an intercommunicator",        \
                       (c)->name[0] ? (c)->name : "the communicator")

/* Replaces c's hints with a copy of `info` (MPI_INFO_NULL: none). Returns 0 or MPI_ERR_NO_MEM. */
static int set_hints(struct aptus_comm *c, MPI_Info info)
{
    struct aptus_info *copy = NULL;
    if (info != MPI_INFO_NULL) {
        copy = aptus_info_dup(aptus_info_get(info));
        if (!copy)
            return MPI_ERR_NO_MEM;
    }
    if (c->info != MPI_INFO_NULL)
        aptus_info_destroy(aptus_info_get(c->info));
    c->info = copy ? (MPI_Info)copy : MPI_INFO_NULL;
    return 0;
}

#define CHK_INFO(c, info, FN)                                                                                          \
    if ((info) != MPI_INFO_NULL && !aptus_info_get(info))                                                              \
    return aptus_error(c, MPI_ERR_INFO, FN, "invalid info handle")

/* Hands a new communicator to the user, or discards it when its hints cannot be stored. */
static int give(struct aptus_comm *c, struct aptus_comm *n, MPI_Info info, MPI_Comm *newcomm, const char *fn)
{
    if (n && info != MPI_INFO_NULL && set_hints(n, info)) {
        aptus_attr_delete_all(APTUS_ATTR_COMM, (void *)n->handle, &n->attrs);
        aptus_comm_release(n);
        return aptus_error(c, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    *newcomm = n ? n->handle : MPI_COMM_NULL;
    return MPI_SUCCESS;
}

int PMPI_Comm_rank(MPI_Comm comm, int *rank)
{
    APTUS_API_LOCK();
    GET_COMM(c, comm, "MPI_Comm_rank");
    if (!rank)
        return aptus_error(c, MPI_ERR_ARG, "MPI_Comm_rank", "null rank argument");
    *rank = c->rank;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Comm_rank)

int PMPI_Comm_size(MPI_Comm comm, int *size)
{
    APTUS_API_LOCK();
    GET_COMM(c, comm, "MPI_Comm_size");
    if (!size)
        return aptus_error(c, MPI_ERR_ARG, "MPI_Comm_size", "null size argument");
    *size = c->size;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Comm_size)

int PMPI_Comm_remote_size(MPI_Comm comm, int *size)
{
    APTUS_API_LOCK();
    GET_COMM(c, comm, "MPI_Comm_remote_size");
    NEED_INTER(c, "MPI_Comm_remote_size");
    if (!size)
        return aptus_error(c, MPI_ERR_ARG, "MPI_Comm_remote_size", "null size argument");
    *size = c->npeers;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Comm_remote_size)

int PMPI_Comm_test_inter(MPI_Comm comm, int *flag)
{
    APTUS_API_LOCK();
    GET_COMM(c, comm, "MPI_Comm_test_inter");
    if (!flag)
        return aptus_error(c, MPI_ERR_ARG, "MPI_Comm_test_inter", "null flag argument");
    *flag = c->is_inter;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Comm_test_inter)

static int comm_group(MPI_Comm comm, MPI_Group *group, int remote, const char *fn)
{
    GET_COMM(c, comm, fn);
    if (remote)
        NEED_INTER(c, fn);
    if (!group)
        return aptus_error(c, MPI_ERR_ARG, fn, "null group argument");
    struct aptus_group *g = aptus_comm_group(c, remote);
    if (!g)
        return aptus_error(c, MPI_ERR_NO_MEM, fn, "out of memory");
    *group = aptus_group_handle(g);
    return MPI_SUCCESS;
}

int PMPI_Comm_group(MPI_Comm comm, MPI_Group *group)
{
    APTUS_OUT_NULL(group, MPI_GROUP_NULL);
    APTUS_API_LOCKED(comm_group(comm, group, 0, "MPI_Comm_group"));
}
APTUS_ALIAS(Comm_group)

int PMPI_Comm_remote_group(MPI_Comm comm, MPI_Group *group)
{
    APTUS_OUT_NULL(group, MPI_GROUP_NULL);
    APTUS_API_LOCKED(comm_group(comm, group, 1, "MPI_Comm_remote_group"));
}
APTUS_ALIAS(Comm_remote_group)

/* ---------------- duplication ---------------- */

static int dup_common(MPI_Comm comm, MPI_Info info, int with_info, MPI_Comm *newcomm, const char *fn)
{
    GET_COMM(c, comm, fn);
    if (with_info)
        CHK_INFO(c, info, fn);
    if (!newcomm)
        return aptus_error(c, MPI_ERR_ARG, fn, "null newcomm argument");
    struct aptus_comm *n;
    int rc = aptus_comm_dup(c, &n);
    if (rc)
        return create_failed(c, rc, fn);
    return give(c, n, with_info ? info : c->info, newcomm, fn);
}

int PMPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    APTUS_OUT_NULL(newcomm, MPI_COMM_NULL);
    APTUS_API_LOCKED(dup_common(comm, MPI_INFO_NULL, 0, newcomm, "MPI_Comm_dup"));
}
APTUS_ALIAS(Comm_dup)

int PMPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm)
{
    APTUS_OUT_NULL(newcomm, MPI_COMM_NULL);
    APTUS_API_LOCKED(dup_common(comm, info, 1, newcomm, "MPI_Comm_dup_with_info"));
}
APTUS_ALIAS(Comm_dup_with_info)

static int idup_common(MPI_Comm comm, MPI_Info info, int with_info, MPI_Comm *newcomm, MPI_Request *request,
                       const char *fn)
{
    GET_COMM(c, comm, fn);
    if (with_info)
        CHK_INFO(c, info, fn);
    if (!newcomm || !request)
        return aptus_error(c, MPI_ERR_ARG, fn, "null newcomm or request argument");
    struct aptus_comm *n;
    struct aptus_request *r;
    int rc = aptus_comm_idup(c, &n, &r);
    if (rc)
        return create_failed(c, rc, fn);
    /* the agreement is under way: the handles are the user's even if the hints are lost */
    *newcomm = n->handle;
    *request = (MPI_Request)r;
    MPI_Info hints = with_info ? info : c->info;
    if (hints != MPI_INFO_NULL && set_hints(n, hints))
        return aptus_error(c, MPI_ERR_NO_MEM, fn, "out of memory (the new communicator has no hints)");
    return MPI_SUCCESS;
}

int PMPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request)
{
    APTUS_OUT_NULL(newcomm, MPI_COMM_NULL);
    APTUS_OUT_NULL(request, MPI_REQUEST_NULL);
    APTUS_API_LOCKED(idup_common(comm, MPI_INFO_NULL, 0, newcomm, request, "MPI_Comm_idup"));
}
APTUS_ALIAS(Comm_idup)

int PMPI_Comm_idup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm, MPI_Request *request)
{
    APTUS_OUT_NULL(newcomm, MPI_COMM_NULL);
    APTUS_OUT_NULL(request, MPI_REQUEST_NULL);
    APTUS_API_LOCKED(idup_common(comm, info, 1, newcomm, request, "MPI_Comm_idup_with_info"));
}
APTUS_ALIAS(Comm_idup_with_info)

/* ---------------- split ---------------- */

int PMPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    APTUS_OUT_NULL(newcomm, MPI_COMM_NULL);
    APTUS_API_LOCK();
    GET_COMM(c, comm, "MPI_Comm_split");
    if (color < 0 && color != MPI_UNDEFINED)
        return aptus_error(c, MPI_ERR_ARG, "MPI_Comm_split", "invalid color %d (must be >= 0 or MPI_UNDEFINED)", color);
    if (!newcomm)
        return aptus_error(c, MPI_ERR_ARG, "MPI_Comm_split", "null newcomm argument");
    struct aptus_comm *n;
    int rc = aptus_comm_split(c, color, key, &n);
    if (rc)
        return create_failed(c, rc, "MPI_Comm_split");
    *newcomm = n ? n->handle : MPI_COMM_NULL;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Comm_split)

/* Instances of hardware types are named by a CPU number or a NUMA node number: below this on
 * every machine there is, which is what an intercommunicator's split needs to know
 * (comm/create.h; a larger one would give MPI_COMM_NULL there). */
#define HW_COLORS 65536

#define HWID(ids, i, t) (ids)[APTUS_HW_NTYPES * (size_t)(i) + (size_t)(t)]

/* Whether type t cuts the m members apart (ids: every member's aptus_hw_instances): some member
 * lies in one instance of it that not every member shares. */
static int hw_cuts(const int *ids, int m, int t)
{
    int v = -1;
    for (int i = 0; i < m && v < 0; i++)
        v = HWID(ids, i, t);
    if (v < 0)
        return 0;
    for (int i = 0; i < m; i++)
        if (HWID(ids, i, t) != v)
            return 1;
    return 0;
}

/* The type member i splits by: the first, from the top down, of which it lies in one instance
 * that not every member shares; APTUS_HW_NTYPES when there is none. */
static int hw_level(const int *ids, int m, int i)
{
    for (int t = 0; t < APTUS_HW_NTYPES; t++) {
        int v = HWID(ids, i, t);
        for (int j = 0; j < m && v >= 0; j++)
            if (HWID(ids, j, t) != v)
                return t;
    }
    return APTUS_HW_NTYPES;
}

/* Each member's type (lvl[i], APTUS_HW_NTYPES: none) and color, the same at every member: the
 * members with one type and one instance of it together. Each takes the first type below c that
 * gives it a strict subset, so that the communicators are as few and as large as can be, and
 * a member whose CPUs span several instances of one type can still get a deeper one (the
 * results of one call may stand for different types, as MPI 4.1 allows). Where the instances
 * nest (a hierarchy), every member of an instance at a member's type has that type too, so the
 * result holds every member of the instance, as the standard wants; where they do not, every
 * member takes the first type that cuts any of them apart (a member spanning several of its
 * instances gets none). */
static void hw_choose(const int *ids, int m, int *lvl, int *color)
{
    int nested = 1;
    for (int i = 0; i < m; i++)
        lvl[i] = hw_level(ids, m, i);
    for (int i = 0; i < m && nested; i++)
        for (int j = 0; j < m && lvl[i] < APTUS_HW_NTYPES; j++)
            if (HWID(ids, j, lvl[i]) == HWID(ids, i, lvl[i]) && lvl[j] != lvl[i])
                nested = 0;
    if (!nested) {
        int t = 0;
        while (t < APTUS_HW_NTYPES && !hw_cuts(ids, m, t))
            t++;
        for (int i = 0; i < m; i++)
            lvl[i] = t < APTUS_HW_NTYPES && HWID(ids, i, t) >= 0 ? t : APTUS_HW_NTYPES;
    }
    /* the color: the first member with the same type and instance */
    for (int i = 0; i < m; i++) {
        color[i] = MPI_UNDEFINED;
        for (int j = 0; j <= i && lvl[i] < APTUS_HW_NTYPES && color[i] == MPI_UNDEFINED; j++)
            if (lvl[j] == lvl[i] && HWID(ids, j, lvl[i]) == HWID(ids, i, lvl[i]))
                color[i] = j;
    }
}

/* MPI_COMM_TYPE_HW_UNGUIDED: the next level of the hardware below c, for this process. First the
 * node: its members that take part, when they are a strict subset of c (c spans several nodes,
 * or a member here gave MPI_UNDEFINED). Else -- all of c on this node, every member taking part
 * (so every member of the node communicator comes here) -- the members sharing an instance of
 * a hardware type below (hw_choose), NULL for a member that lies in no instance that would cut
 * c (the members share one core, or none is bound). *type: the type (APTUS_HW_NTYPES for the
 * node), the same for every member of a result. On an intercommunicator, the node level only.
 * Returns an MPI error class. */
static int split_unguided(struct aptus_comm *c, int key, struct aptus_comm **out, int *type)
{
    struct aptus_comm *n;
    *out = NULL;
    *type = APTUS_HW_NTYPES;
    int rc = aptus_comm_split_node(c, 0, key, 0, &n);
    if (rc || !n)
        return rc;
    if (n->size < c->size || (c->is_inter && n->npeers < c->npeers)) {
        *out = n;
        return MPI_SUCCESS;
    }
    if (c->is_inter) {
        aptus_comm_release(n);
        return MPI_SUCCESS;
    }
    int mine[APTUS_HW_NTYPES], m = n->size;
    aptus_hw_instances(mine);
    int *ids = malloc((size_t)m * sizeof mine), *lvl = malloc((size_t)m * 2 * sizeof(int));
    rc = ids && lvl ? aptus_allgather_internal(n, mine, ids, sizeof mine) : MPI_ERR_NO_MEM;
    if (!rc) {
        hw_choose(ids, m, lvl, lvl + m);
        /* n is ordered by key, then rank in c: its rank keeps that order */
        rc = aptus_comm_split_node(n, lvl[m + n->rank], n->rank, 0, out);
        *type = lvl[n->rank];
    }
    free(ids);
    free(lvl);
    aptus_comm_release(n);
    return rc;
}

int PMPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm)
{
    APTUS_OUT_NULL(newcomm, MPI_COMM_NULL);
    APTUS_API_LOCK();
    const char *fn = "MPI_Comm_split_type";
    GET_COMM(c, comm, fn);
    CHK_INFO(c, info, fn);
    if (!newcomm)
        return aptus_error(c, MPI_ERR_ARG, fn, "null newcomm argument");
    /* Every type splits within the node (only the members on one node talk to each other): the
     * node is the shared-memory level (mpi_shared_memory), the hardware types below it are read
     * with hwloc (runtime/hwtopo.h), and the one process set below mpi://WORLD is mpi://SELF.
     * Unknown resources, and a process whose CPUs span several instances of the type asked
     * for, give MPI_COMM_NULL, as the standard says. */
    int color = MPI_UNDEFINED, ncolors = 0;
    const char *restype = NULL; /* the resource the result stands for, named in its hints */
    const char *res = aptus_info_lookup(aptus_info_get(info), "mpi_hw_resource_type");
    const char *pset = aptus_info_lookup(aptus_info_get(info), "mpi_pset_name");
    struct aptus_comm *n = NULL;
    int rc;
    switch (split_type) {
    case MPI_UNDEFINED: break;
    case MPI_COMM_TYPE_SHARED: color = 0; break;
    case MPI_COMM_TYPE_HW_UNGUIDED: break;
    case MPI_COMM_TYPE_HW_GUIDED:
    case MPI_COMM_TYPE_RESOURCE_GUIDED:
        if (res && strcmp(res, "mpi_shared_memory") == 0) {
            color = 0;
            restype = res;
        } else if (res && aptus_hw_type_parse(res) >= 0) {
            int t = aptus_hw_type_parse(res), id[APTUS_HW_NTYPES];
            aptus_hw_instances(id);
            if (id[t] >= 0 && (!c->is_inter || id[t] < HW_COLORS))
                color = id[t];
            ncolors = HW_COLORS;
            restype = aptus_hw_type_uri(t);
        } else if (split_type == MPI_COMM_TYPE_RESOURCE_GUIDED && pset && strcmp(pset, "mpi://SELF") == 0) {
            color = c->rank + 1;
        }
        break;
    default: return aptus_error(c, MPI_ERR_ARG, fn, "invalid split_type %d", split_type);
    }
    if (split_type == MPI_COMM_TYPE_HW_UNGUIDED) {
        int t;
        rc = split_unguided(c, key, &n, &t);
        restype = t < APTUS_HW_NTYPES ? aptus_hw_type_uri(t) : "mpi_shared_memory";
    } else {
        rc = aptus_comm_split_node(c, color, key, ncolors, &n);
    }
    if (rc)
        return create_failed(c, rc, fn);
    if (n && restype) {
        /* the result names the resource; HW_UNGUIDED also tells the caller, in the info it gave
         * (MPI 4.1: "sets the info key mpi_hw_resource_type"), unless that is MPI_INFO_ENV */
        struct aptus_info *i = aptus_info_new(), *ui = aptus_info_get(info);
        if (!i || aptus_info_set(i, "mpi_hw_resource_type", restype) ||
            (split_type == MPI_COMM_TYPE_HW_UNGUIDED && ui && !ui->predefined &&
             aptus_info_set(ui, "mpi_hw_resource_type", restype))) {
            if (i)
                aptus_info_destroy(i);
            aptus_comm_release(n);
            return aptus_error(c, MPI_ERR_NO_MEM, fn, "out of memory");
        }
        n->info = (MPI_Info)i;
    }
    *newcomm = n ? n->handle : MPI_COMM_NULL;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Comm_split_type)

/* ---------------- create ---------------- */

/* Checks that every member of g is in c's local group. */
static int subset_check(struct aptus_comm *c, const struct aptus_group *g, const char *fn)
{
    for (int i = 0; i < g->size; i++) {
        int found = 0;
        for (int j = 0; j < c->size && !found; j++)
            found = aptus_comm_world_rank(c, j) == g->world[i];
        if (!found)
            return aptus_error(c, MPI_ERR_GROUP, fn,
                               "member %d of the group (world rank %d) is not in the communicator's group", i,
                               g->world[i]);
    }
    return MPI_SUCCESS;
}

int PMPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
    APTUS_OUT_NULL(newcomm, MPI_COMM_NULL);
    APTUS_API_LOCK();
    const char *fn = "MPI_Comm_create";
    GET_COMM(c, comm, fn);
    GET_GROUP(g, group, c, fn);
    if (!newcomm)
        return aptus_error(c, MPI_ERR_ARG, fn, "null newcomm argument");
    int rc = subset_check(c, g, fn);
    if (rc)
        return rc;
    struct aptus_comm *n;
    if (c->is_inter) {
        rc = aptus_comm_create_inter(c, g->world, g->size, &n);
    } else {
        int in = aptus_group_index(g, aptus_rt.rank) != MPI_UNDEFINED;
        rc = aptus_comm_create_from(c, g->world, in ? g->size : 0, &n);
    }
    if (rc)
        return create_failed(c, rc, fn);
    *newcomm = n ? n->handle : MPI_COMM_NULL;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Comm_create)

int PMPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm)
{
    APTUS_OUT_NULL(newcomm, MPI_COMM_NULL);
    APTUS_API_LOCK();
    const char *fn = "MPI_Comm_create_group";
    GET_COMM(c, comm, fn);
    NEED_INTRA(c, fn);
    GET_GROUP(g, group, c, fn);
    CHK_SEND_TAG(c, tag, fn);
    if (!newcomm)
        return aptus_error(c, MPI_ERR_ARG, fn, "null newcomm argument");
    int rc = subset_check(c, g, fn);
    if (rc)
        return rc;
    struct aptus_comm *n;
    rc = aptus_comm_create_group(c, g->world, g->size, tag, &n);
    if (rc)
        return create_failed(c, rc, fn);
    *newcomm = n ? n->handle : MPI_COMM_NULL;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Comm_create_group)

/* ---------------- intercommunicators ---------------- */

int PMPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm, int remote_leader, int tag,
                          MPI_Comm *newintercomm)
{
    APTUS_OUT_NULL(newintercomm, MPI_COMM_NULL);
    APTUS_API_LOCK();
    const char *fn = "MPI_Intercomm_create";
    GET_COMM(c, local_comm, fn);
    NEED_INTRA(c, fn);
    if (local_leader < 0 || local_leader >= c->size)
        return aptus_error(c, MPI_ERR_RANK, fn, "invalid local leader %d (local_comm has %d ranks)", local_leader,
                           c->size);
    if (!newintercomm)
        return aptus_error(c, MPI_ERR_ARG, fn, "null newintercomm argument");
    /* peer_comm, remote_leader and tag matter at the local leader only; a problem there is sent
     * to the whole local group so that nobody waits for the leader. */
    struct aptus_comm *p = NULL;
    int leader_err = 0;
    const char *leader_why = NULL;
    if (c->rank == local_leader) {
        p = aptus_comm_get(peer_comm);
        if (!p) {
            leader_err = MPI_ERR_COMM;
            leader_why = "invalid peer_comm at the local leader";
        } else if (remote_leader < 0 || remote_leader >= p->npeers) {
            leader_err = MPI_ERR_RANK;
            leader_why = "invalid remote leader (not a rank of peer_comm)";
        } else if (tag < 0) {
            leader_err = MPI_ERR_TAG;
            leader_why = "invalid tag (must be >= 0)";
        }
    }
    struct aptus_comm *n;
    const char *why;
    int rc = aptus_intercomm_create(c, local_leader, p, remote_leader, tag, leader_err, &n, &why);
    if (rc) {
        if (leader_why && rc == leader_err)
            why = leader_why;
        return aptus_error(c, rc, fn, "%s", why);
    }
    *newintercomm = n->handle;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Intercomm_create)

int PMPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm *newintracomm)
{
    APTUS_OUT_NULL(newintracomm, MPI_COMM_NULL);
    APTUS_API_LOCK();
    const char *fn = "MPI_Intercomm_merge";
    GET_COMM(c, intercomm, fn);
    NEED_INTER(c, fn);
    if (!newintracomm)
        return aptus_error(c, MPI_ERR_ARG, fn, "null newintracomm argument");
    struct aptus_comm *n;
    int rc = aptus_intercomm_merge(c, high, &n);
    if (rc)
        return create_failed(c, rc, fn);
    *newintracomm = n->handle;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Intercomm_merge)

/* ---------------- free, compare ---------------- */

int PMPI_Comm_free(MPI_Comm *comm)
{
    APTUS_API_LOCK();
    API_INIT("MPI_Comm_free");
    if (!comm)
        return aptus_error(NULL, MPI_ERR_ARG, "MPI_Comm_free", "null argument");
    if (*comm == MPI_COMM_WORLD || *comm == MPI_COMM_SELF)
        return aptus_error(NULL, MPI_ERR_COMM, "MPI_Comm_free", "predefined communicators cannot be freed");
    struct aptus_comm *c = aptus_comm_get(*comm);
    if (!c)
        return aptus_error(NULL, MPI_ERR_COMM, "MPI_Comm_free",
                           *comm == MPI_COMM_NULL ? "MPI_COMM_NULL cannot be freed" : "invalid communicator handle");
    int rc = c->attrs ? aptus_attr_delete_all(APTUS_ATTR_COMM, (void *)c->handle, &c->attrs) : MPI_SUCCESS;
    if (rc)
        return aptus_error_callback(c, rc, "MPI_Comm_free", "an attribute delete callback");
    if (c->info != MPI_INFO_NULL) {
        aptus_info_destroy(aptus_info_get(c->info));
        c->info = MPI_INFO_NULL;
    }
    aptus_dpm_comm_freed(c->handle);
    aptus_comm_release(c);
    *comm = MPI_COMM_NULL;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Comm_free)

int PMPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int *result)
{
    APTUS_API_LOCK();
    GET_COMM(a, comm1, "MPI_Comm_compare");
    struct aptus_comm *b = aptus_comm_get(comm2);
    if (!b)
        return aptus_error(a, MPI_ERR_COMM, "MPI_Comm_compare", "invalid second communicator");
    if (!result)
        return aptus_error(a, MPI_ERR_ARG, "MPI_Comm_compare", "null result argument");
    *result = aptus_comm_compare(a, b);
    return MPI_SUCCESS;
}
APTUS_ALIAS(Comm_compare)

/* ---------------- names and hints ---------------- */

int PMPI_Comm_set_name(MPI_Comm comm, const char *name)
{
    APTUS_API_LOCK();
    GET_COMM(c, comm, "MPI_Comm_set_name");
    if (!name)
        return aptus_error(c, MPI_ERR_ARG, "MPI_Comm_set_name", "null name argument");
    strncpy(c->name, name, MPI_MAX_OBJECT_NAME - 1);
    c->name[MPI_MAX_OBJECT_NAME - 1] = 0;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Comm_set_name)

int PMPI_Comm_get_name(MPI_Comm comm, char *name, int *resultlen)
{
    APTUS_API_LOCK();
    if (comm == MPI_COMM_NULL) { /* MPI 4.1: the null handle has a name too */
        API_INIT("MPI_Comm_get_name");
        if (!name || !resultlen)
            return aptus_error(NULL, MPI_ERR_ARG, "MPI_Comm_get_name", "null name or resultlen argument");
        strcpy(name, "MPI_COMM_NULL");
        *resultlen = (int)strlen(name);
        return MPI_SUCCESS;
    }
    GET_COMM(c, comm, "MPI_Comm_get_name");
    if (!name || !resultlen)
        return aptus_error(c, MPI_ERR_ARG, "MPI_Comm_get_name", "null name or resultlen argument");
    strcpy(name, c->name);
    *resultlen = (int)strlen(name);
    return MPI_SUCCESS;
}
APTUS_ALIAS(Comm_get_name)

int PMPI_Comm_set_info(MPI_Comm comm, MPI_Info info)
{
    APTUS_API_LOCK();
    GET_COMM(c, comm, "MPI_Comm_set_info");
    if (!aptus_info_get(info))
        return aptus_error(c, MPI_ERR_INFO, "MPI_Comm_set_info",
                           info == MPI_INFO_NULL ? "MPI_INFO_NULL is not a valid info object here"
                                                 : "invalid info handle");
    /* new values for the keys given; the other hints stay */
    struct aptus_info *in = aptus_info_get(info), *mine = aptus_info_get(c->info);
    int rc = 0;
    if (!mine)
        rc = set_hints(c, info);
    for (int i = 0; mine && i < in->n && !rc; i++)
        rc = aptus_info_set(mine, in->keys[i], in->vals[i]);
    if (rc)
        return aptus_error(c, MPI_ERR_NO_MEM, "MPI_Comm_set_info", "out of memory");
    return MPI_SUCCESS;
}
APTUS_ALIAS(Comm_set_info)

int PMPI_Comm_get_info(MPI_Comm comm, MPI_Info *info_used)
{
    APTUS_OUT_NULL(info_used, MPI_INFO_NULL);
    APTUS_API_LOCK();
    GET_COMM(c, comm, "MPI_Comm_get_info");
    if (!info_used)
        return aptus_error(c, MPI_ERR_ARG, "MPI_Comm_get_info", "null info_used argument");
    struct aptus_info *i = c->info != MPI_INFO_NULL ? aptus_info_dup(aptus_info_get(c->info)) : aptus_info_new();
    if (!i)
        return aptus_error(c, MPI_ERR_NO_MEM, "MPI_Comm_get_info", "out of memory");
    *info_used = (MPI_Info)i;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Comm_get_info)
