/* Binding ranks to CPUs (--bind-to, --map-by, --cpus-per-rank, --report-bindings), from the
 * host's topology as hwloc reads it -- once per host, by whoever forks that host's ranks (mpiexec
 * itself, or the host's proxy), restricted to the CPUs this process may use (a cpuset cgroup,
 * Slurm's allocation, taskset).
 *
 * Mapping lays the host's ranks onto places in order: cores (--map-by core, the default), hardware
 * threads (hwthread), or round-robin over packages (socket) or NUMA nodes (numa), each rank taking
 * --cpus-per-rank consecutive cores of its place. Binding then gives each rank the CPUs of what
 * it was mapped to (core, hwthread: its cores' first hardware threads) or of the package or NUMA
 * node around it. By default a rank is bound to its cores when the host's ranks fit on its cores,
 * and not bound when they do not (an oversubscribed node), nor under Slurm (its own binding wins),
 * nor with the netns launcher (its "hosts" are one machine). An explicit --bind-to core or
 * hwthread that needs more places than the host has is refused unless ":overload-allowed" is
 * added (then the places are reused in turn). */
#include "mpiexec.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef APTUS_HAVE_HWLOC
#include <hwloc.h>
#endif

static const char *const bind_names[] = { "none", "hwthread", "core", "numa", "socket" };
static const char *const map_names[] = { "core", "hwthread", "numa", "socket", "node" };

static int word_index(const char *const *names, int n, const char *w, size_t len)
{
    for (int k = 0; k < n; k++)
        if (strlen(names[k]) == len && !strncmp(names[k], w, len))
            return k;
    return -1;
}

int bind_option(const char *val)
{
    const char *colon = strchr(val, ':');
    size_t len = colon ? (size_t)(colon - val) : strlen(val);
    int k = word_index(bind_names, 5, val, len);
    if (k < 0 && len == 7 && !strncmp(val, "package", 7))
        k = BIND_SOCKET;
    if (k < 0 || (colon && strcmp(colon + 1, "overload-allowed") != 0)) {
        msg("mpiexec: --bind-to '%s': expected none, hwthread, core, numa or socket (package), optionally "
            "followed by :overload-allowed",
            val);
        return -1;
    }
    J.bind = k;
    J.bind_overload = colon != NULL;
    return 0;
}

int map_option(const char *val)
{
    int k = word_index(map_names, 5, val, strlen(val));
    if (k < 0 && !strcmp(val, "package"))
        k = MAP_SOCKET;
    if (k < 0 && !strcmp(val, "slot"))
        k = MAP_CORE;
    if (k < 0) {
        msg("mpiexec: --map-by '%s': expected core, hwthread, numa, socket (package) or node", val);
        return -1;
    }
    J.map = k;
    return 0;
}

#ifdef APTUS_HAVE_HWLOC
static const char *host_name(void)
{
    static char name[256];
    if (J.proxy)
        return J.proxy_host;
    if (!name[0] && gethostname(name, sizeof name - 1) != 0)
        strcpy(name, "localhost");
    return name;
}

/* The cpuset of place i of kind t (cores or hardware threads), grouped round-robin over the
 * objects of kind g when g is not HWLOC_OBJ_TYPE_MAX: the k-th place of group k % G. */
static hwloc_obj_t place(hwloc_topology_t topo, hwloc_obj_type_t t, hwloc_obj_type_t g, int i)
{
    int n = hwloc_get_nbobjs_by_type(topo, t);
    if (g == HWLOC_OBJ_TYPE_MAX)
        return hwloc_get_obj_by_type(topo, t, (unsigned)(i % n));
    int ng = hwloc_get_nbobjs_by_type(topo, g);
    if (ng <= 0)
        return hwloc_get_obj_by_type(topo, t, (unsigned)(i % n));
    hwloc_obj_t grp = hwloc_get_obj_by_type(topo, g, (unsigned)(i % ng));
    int in = hwloc_get_nbobjs_inside_cpuset_by_type(topo, grp->cpuset, t);
    if (in <= 0)
        return hwloc_get_obj_by_type(topo, t, (unsigned)(i % n));
    return hwloc_get_obj_inside_cpuset_by_type(topo, grp->cpuset, t, (unsigned)((i / ng) % in));
}

/* The object of kind k (a package or a NUMA node) whose CPUs include those of o, else o. */
static hwloc_obj_t around(hwloc_topology_t topo, hwloc_obj_t o, hwloc_obj_type_t k)
{
    int n = hwloc_get_nbobjs_by_type(topo, k);
    for (int j = 0; j < n; j++) {
        hwloc_obj_t a = hwloc_get_obj_by_type(topo, k, (unsigned)j);
        if (a->cpuset && hwloc_bitmap_isincluded(o->cpuset, a->cpuset))
            return a;
    }
    return o;
}
#endif

int bind_plan(const int *ranks, int nlocal)
{
    int bind = J.bind;
    if (bind == BIND_DEFAULT && (J.launcher == LAUNCH_NETNS || getenv("SLURM_JOB_ID")))
        bind = BIND_NONE;
    if (bind == BIND_NONE && !J.report_bindings)
        return 0;
    J.cpus = calloc((size_t)J.n, sizeof *J.cpus);
    J.bound = calloc((size_t)J.n, sizeof *J.bound);
    if (!J.cpus || !J.bound) {
        msg("mpiexec: out of memory");
        return 1;
    }
#ifndef APTUS_HAVE_HWLOC
    if (bind != BIND_DEFAULT && bind != BIND_NONE) {
        msg("mpiexec: --bind-to %s: this mpiexec was built without hwloc (libhwloc-dev)", bind_names[bind]);
        return 2;
    }
    (void)ranks;
    (void)nlocal;
    return 0;
#else
    hwloc_topology_t topo;
    if (hwloc_topology_init(&topo) != 0 || hwloc_topology_load(topo) != 0) {
        msg("mpiexec: hwloc could not read this host's topology; ranks are not bound");
        return 0;
    }
    /* only the CPUs this process may run on (taskset, a binding given to mpiexec or its proxy) */
    hwloc_bitmap_t mine = hwloc_bitmap_alloc();
    if (mine && hwloc_get_cpubind(topo, mine, HWLOC_CPUBIND_PROCESS) == 0 && !hwloc_bitmap_iszero(mine))
        hwloc_topology_restrict(topo, mine, 0);
    hwloc_bitmap_free(mine);
    int hw = J.map == MAP_HWTHREAD || bind == BIND_HWTHREAD;
    hwloc_obj_type_t t = J.map == MAP_HWTHREAD ? HWLOC_OBJ_PU : HWLOC_OBJ_CORE;
    hwloc_obj_type_t g = J.map == MAP_SOCKET ? HWLOC_OBJ_PACKAGE
                         : J.map == MAP_NUMA ? HWLOC_OBJ_NUMANODE
                                             : HWLOC_OBJ_TYPE_MAX;
    int places = hwloc_get_nbobjs_by_type(topo, t);
    int cpr = J.cpus_per_rank > 0 ? J.cpus_per_rank : 1;
    long need = (long)nlocal * cpr;
    if (places <= 0) {
        hwloc_topology_destroy(topo);
        msg("mpiexec: hwloc found no %s on this host; ranks are not bound", hw ? "hardware thread" : "core");
        return 0;
    }
    if (bind == BIND_DEFAULT)
        bind = need <= places ? (J.map == MAP_HWTHREAD ? BIND_HWTHREAD : BIND_CORE) : BIND_NONE;
    if ((bind == BIND_CORE || bind == BIND_HWTHREAD) && need > places && !J.bind_overload) {
        msg("mpiexec: --bind-to %s: %d rank(s)%s on host %s need %ld %s, it has %d for this job (add "
            ":overload-allowed to share them, or --bind-to none)",
            bind_names[bind], nlocal, cpr > 1 ? " of --cpus-per-rank" : "", host_name(), need,
            t == HWLOC_OBJ_PU ? "hardware threads" : "cores", places);
        hwloc_topology_destroy(topo);
        return 2;
    }
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    for (int k = 0; k < nlocal; k++) {
        int r = ranks[k];
        hwloc_bitmap_zero(set);
        for (int c = 0; c < cpr; c++) {
            hwloc_obj_t o = place(topo, t, g, k * cpr + c);
            if (bind == BIND_HWTHREAD && o->type != HWLOC_OBJ_PU)
                o = hwloc_get_obj_inside_cpuset_by_type(topo, o->cpuset, HWLOC_OBJ_PU, 0);
            else if (bind == BIND_SOCKET || bind == BIND_NUMA)
                o = around(topo, o, bind == BIND_SOCKET ? HWLOC_OBJ_PACKAGE : HWLOC_OBJ_NUMANODE);
            if (o && o->cpuset)
                hwloc_bitmap_or(set, set, o->cpuset);
        }
        if (bind == BIND_NONE) /* (reporting only: what the rank may use) */
            hwloc_bitmap_copy(set, hwloc_topology_get_allowed_cpuset(topo));
        CPU_ZERO(&J.cpus[r]);
        for (int cpu = hwloc_bitmap_first(set); cpu >= 0; cpu = hwloc_bitmap_next(set, cpu))
            if (cpu < CPU_SETSIZE)
                CPU_SET(cpu, &J.cpus[r]);
        J.bound[r] = bind == BIND_NONE ? 0 : bind;
        if (J.report_bindings) {
            char list[256];
            hwloc_bitmap_list_snprintf(list, sizeof list, set);
            if (bind == BIND_NONE)
                msg("mpiexec: rank %d on host %s: not bound (may use CPUs %s)", r, host_name(), list);
            else
                msg("mpiexec: rank %d on host %s: bound to %s%s (CPUs %s)", r, host_name(),
                    bind == BIND_NUMA     ? "a NUMA node"
                    : bind == BIND_SOCKET ? "a socket"
                                          : bind_names[bind],
                    (bind == BIND_CORE || bind == BIND_HWTHREAD) && cpr > 1 ? "s" : "", list);
        }
    }
    hwloc_bitmap_free(set);
    hwloc_topology_destroy(topo);
    return 0;
#endif
}

int bind_free_cores(const cpu_set_t *busy, int want, cpu_set_t *out)
{
    CPU_ZERO(out);
#ifndef APTUS_HAVE_HWLOC
    (void)busy;
    (void)want;
    return -1;
#else
    hwloc_topology_t topo;
    if (want < 1 || hwloc_topology_init(&topo) != 0)
        return -1;
    if (hwloc_topology_load(topo) != 0) {
        hwloc_topology_destroy(topo);
        return -1;
    }
    hwloc_bitmap_t mine = hwloc_bitmap_alloc();
    if (mine && hwloc_get_cpubind(topo, mine, HWLOC_CPUBIND_PROCESS) == 0 && !hwloc_bitmap_iszero(mine))
        hwloc_topology_restrict(topo, mine, 0);
    hwloc_bitmap_free(mine);
    int n = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE), got = 0;
    for (int k = 0; k < n && got < want; k++) {
        hwloc_obj_t core = hwloc_get_obj_by_type(topo, HWLOC_OBJ_CORE, (unsigned)k);
        int free = core && core->cpuset && !hwloc_bitmap_iszero(core->cpuset);
        for (int cpu = free ? hwloc_bitmap_first(core->cpuset) : -1; cpu >= 0 && free;
             cpu = hwloc_bitmap_next(core->cpuset, cpu))
            free = cpu < CPU_SETSIZE && !CPU_ISSET(cpu, busy);
        if (!free)
            continue;
        for (int cpu = hwloc_bitmap_first(core->cpuset); cpu >= 0; cpu = hwloc_bitmap_next(core->cpuset, cpu))
            CPU_SET(cpu, out);
        got++;
    }
    hwloc_topology_destroy(topo);
    return got == want ? 0 : -1;
#endif
}

void bind_apply(int rank)
{
    if (J.bound && J.bound[rank] && sched_setaffinity(0, sizeof J.cpus[rank], &J.cpus[rank]) != 0)
        child_fail("sched_setaffinity");
}
