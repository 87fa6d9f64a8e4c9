/* The hardware around this process, from hwloc (hwtopo.h). */
#include "runtime/hwtopo.h"

#include <pthread.h>
#include <stddef.h>
#include <string.h>
#include <strings.h>

#ifdef APTUS_HAVE_HWLOC
#include <hwloc.h>
#endif

static const char *const type_names[APTUS_HW_NTYPES] = {
    [APTUS_HW_MACHINE] = "Machine", [APTUS_HW_PACKAGE] = "Package", [APTUS_HW_NUMANODE] = "NUMANode",
    [APTUS_HW_DIE] = "Die",         [APTUS_HW_L5CACHE] = "L5Cache", [APTUS_HW_L4CACHE] = "L4Cache",
    [APTUS_HW_L3CACHE] = "L3Cache", [APTUS_HW_L2CACHE] = "L2Cache", [APTUS_HW_L1CACHE] = "L1Cache",
    [APTUS_HW_CORE] = "Core",       [APTUS_HW_PU] = "PU",
};
static const char *const type_uris[APTUS_HW_NTYPES] = {
    [APTUS_HW_MACHINE] = "hwloc://Machine",
    [APTUS_HW_PACKAGE] = "hwloc://Package",
    [APTUS_HW_NUMANODE] = "hwloc://NUMANode",
    [APTUS_HW_DIE] = "hwloc://Die",
    [APTUS_HW_L5CACHE] = "hwloc://L5Cache",
    [APTUS_HW_L4CACHE] = "hwloc://L4Cache",
    [APTUS_HW_L3CACHE] = "hwloc://L3Cache",
    [APTUS_HW_L2CACHE] = "hwloc://L2Cache",
    [APTUS_HW_L1CACHE] = "hwloc://L1Cache",
    [APTUS_HW_CORE] = "hwloc://Core",
    [APTUS_HW_PU] = "hwloc://PU",
};

const char *aptus_hw_type_name(int t)
{
    return t >= 0 && t < APTUS_HW_NTYPES ? type_names[t] : "?";
}

const char *aptus_hw_type_uri(int t)
{
    return t >= 0 && t < APTUS_HW_NTYPES ? type_uris[t] : "?";
}

int aptus_hw_type_parse(const char *s)
{
    static const char scheme[] = "hwloc://";
    if (!s)
        return -1;
    if (!strncasecmp(s, scheme, sizeof scheme - 1))
        s += sizeof scheme - 1;
    for (int t = 0; t < APTUS_HW_NTYPES; t++)
        if (!strcasecmp(s, type_names[t]))
            return t;
    return -1;
}

#ifdef APTUS_HAVE_HWLOC

/* hwloc's type of each of ours (NUMA nodes are looked at apart: they hang beside the tree of
 * CPU objects, not in it). */
static const hwloc_obj_type_t hwloc_types[APTUS_HW_NTYPES] = {
    [APTUS_HW_MACHINE] = HWLOC_OBJ_MACHINE,
    [APTUS_HW_PACKAGE] = HWLOC_OBJ_PACKAGE,
    [APTUS_HW_NUMANODE] = HWLOC_OBJ_NUMANODE,
#if HWLOC_API_VERSION >= 0x00020100
    [APTUS_HW_DIE] = HWLOC_OBJ_DIE,
#else
    [APTUS_HW_DIE] = HWLOC_OBJ_TYPE_MAX, /* none before hwloc 2.1 */
#endif
    [APTUS_HW_L5CACHE] = HWLOC_OBJ_L5CACHE,
    [APTUS_HW_L4CACHE] = HWLOC_OBJ_L4CACHE,
    [APTUS_HW_L3CACHE] = HWLOC_OBJ_L3CACHE,
    [APTUS_HW_L2CACHE] = HWLOC_OBJ_L2CACHE,
    [APTUS_HW_L1CACHE] = HWLOC_OBJ_L1CACHE,
    [APTUS_HW_CORE] = HWLOC_OBJ_CORE,
    [APTUS_HW_PU] = HWLOC_OBJ_PU,
};

/* Read once (pthread_once: the first asker loads it, any other waits), never changed after, so
 * any number of threads may read it at once (hwloc allows concurrent read-only use). The
 * topology is the whole machine as this process may see it (I/O devices left out): instances
 * are named by their first CPU in the complete CPU set, which holds the CPUs a cgroup hides
 * from us too, so that every process of the machine names an instance alike. */
static pthread_once_t topo_once = PTHREAD_ONCE_INIT;
static hwloc_topology_t topo;
static int topo_ok;
static int present[APTUS_HW_NTYPES];

static void topo_load(void)
{
    if (hwloc_topology_init(&topo) != 0)
        return;
    hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_NONE);
    if (hwloc_topology_load(topo) != 0) {
        hwloc_topology_destroy(topo);
        return;
    }
    for (int t = 0; t < APTUS_HW_NTYPES; t++)
        present[t] = hwloc_types[t] != HWLOC_OBJ_TYPE_MAX && hwloc_get_nbobjs_by_type(topo, hwloc_types[t]) > 0;
    topo_ok = 1;
}

/* The instance of CPU-side type k whose CPUs hold all of `set`: the smallest object covering the
 * set, or one of its ancestors. */
static int cpu_instance(hwloc_obj_t cover, hwloc_obj_type_t k)
{
    for (hwloc_obj_t o = cover; o; o = o->parent)
        if (o->type == k) {
            int first = hwloc_bitmap_first(o->complete_cpuset ? o->complete_cpuset : o->cpuset);
            return first >= 0 ? first : APTUS_HW_SPANS;
        }
    return APTUS_HW_SPANS;
}

/* The one NUMA node local to every CPU of `set` (by OS index), or APTUS_HW_SPANS when the set's
 * CPUs have several (or none) -- e.g. a package with DDR and high-bandwidth memory has two. */
static int numa_instance(hwloc_const_cpuset_t set)
{
    int found = APTUS_HW_SPANS, n = 0;
    for (hwloc_obj_t o = NULL; (o = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_NUMANODE, o)) != NULL;)
        if (o->cpuset && hwloc_bitmap_intersects(o->cpuset, set)) {
            n++;
            found = (int)o->os_index;
        }
    return n == 1 && found >= 0 ? found : APTUS_HW_SPANS;
}

int aptus_hw_instances(int id[APTUS_HW_NTYPES])
{
    for (int t = 0; t < APTUS_HW_NTYPES; t++)
        id[t] = APTUS_HW_ABSENT;
    pthread_once(&topo_once, topo_load);
    if (!topo_ok)
        return -1;
    hwloc_const_cpuset_t all = hwloc_topology_get_topology_cpuset(topo);
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    if (!set)
        return -1;
    /* the CPUs of every thread of the process; unknown: the whole machine */
    if (hwloc_get_cpubind(topo, set, HWLOC_CPUBIND_PROCESS) != 0)
        hwloc_bitmap_copy(set, all);
    hwloc_bitmap_and(set, set, all);
    if (hwloc_bitmap_iszero(set))
        hwloc_bitmap_copy(set, all);
    hwloc_obj_t cover = hwloc_get_obj_covering_cpuset(topo, set);
    for (int t = 0; t < APTUS_HW_NTYPES; t++) {
        if (!present[t])
            continue;
        if (t == APTUS_HW_MACHINE)
            id[t] = 0; /* the root: one per machine */
        else if (t == APTUS_HW_NUMANODE)
            id[t] = numa_instance(set);
        else
            id[t] = cpu_instance(cover, hwloc_types[t]);
    }
    hwloc_bitmap_free(set);
    return 0;
}

#else /* no hwloc: nothing is known below the node */

int aptus_hw_instances(int id[APTUS_HW_NTYPES])
{
    for (int t = 0; t < APTUS_HW_NTYPES; t++)
        id[t] = APTUS_HW_ABSENT;
    return -1;
}

#endif
