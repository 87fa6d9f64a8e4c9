/* MPI_Comm_split_type's hardware types (MPI_COMM_TYPE_HW_GUIDED, MPI_COMM_TYPE_HW_UNGUIDED) and
 * MPI_Get_hw_resource_info, checked against the kernel's own account of the hardware (sysfs:
 * /sys/devices/system/cpu/cpuN/topology and cache, /sys/devices/system/node) and of each rank's
 * CPUs (sched_getaffinity), not against hwloc, which the library reads it with.
 *
 * For every type (Machine, Package, NUMANode, L3/L2/L1 caches, Core, PU) each rank works out
 * from sysfs which instance its CPUs lie in (named by the instance's first CPU), or that they
 * span several; the ranks swap these, and then:
 *  - MPI_Get_hw_resource_info has a key "hwloc://<Type>" for each, "true" exactly when this
 *    rank's CPUs lie in one instance, and no key that is not "hwloc://..." = true/false;
 *  - HW_GUIDED with mpi_hw_resource_type "hwloc://<Type>" (also "Core", "core", "PU" without the
 *    scheme) gives exactly the ranks in this rank's instance, ordered by key, or MPI_COMM_NULL
 *    when this rank's CPUs span several instances; its hints name the type; an unknown type,
 *    an info without the key and MPI_INFO_NULL give MPI_COMM_NULL; "mpi_shared_memory" gives
 *    everybody (one node); on an intercommunicator "hwloc://Core" pairs the ranks of each
 *    core on both sides;
 *  - HW_UNGUIDED gives a strict subset of the parent or MPI_COMM_NULL; a result is the ranks
 *    of this rank's instance of the type its hints and the caller's info name, the largest
 *    such group below the parent (no other type gives a group between the two); a rank whose
 *    CPUs lie in an instance of some type that holds some of the parent's ranks but not all
 *    gets a communicator, and ranks with the same CPUs always get MPI_COMM_NULL (no instance
 *    can cut them apart); splitting the result again goes down to MPI_COMM_NULL in fewer steps
 *    than there are types; with one rank giving MPI_UNDEFINED the others get the node
 *    (mpi_shared_memory);
 *  - an invalid split_type is MPI_ERR_ARG, an invalid info handle MPI_ERR_INFO.
 *
 * argv[1]: "core" -- mpiexec bound every rank to cores (MPIEXEC_BIND_TO=core...): each rank's
 * CPUs must lie in one core; "none" -- not bound (MPIEXEC_BIND_TO=none): on a machine with two
 * cores or more a rank's CPUs span several, so HW_GUIDED "Core" must give MPI_COMM_NULL;
 * "mixed" -- not bound by mpiexec, the even ranks bind themselves to one CPU each before MPI_Init
 * (PMI_RANK) and the odd ones stay on every CPU: some ranks lie in one instance where others
 * span several.
 * argv[2] = "threads": first two threads of every rank call MPI_Get_hw_resource_info at once
 * before MPI_Init (where the library's lock is off: the library reads the topology on the first
 * question, and that must be safe by itself), then the checks run from two threads at once
 * (MPI_THREAD_MULTIPLE), each on its own duplicate of MPI_COMM_WORLD. All ranks must be on one
 * node. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <pthread.h>
#include <sched.h>

#include "mtest.h"

enum { T_MACHINE, T_PACKAGE, T_NUMANODE, T_L3, T_L2, T_L1, T_CORE, T_PU, NT };
static const char *const tname[NT] = {
    "Machine", "Package", "NUMANode", "L3Cache", "L2Cache", "L1Cache", "Core", "PU"
};
#define SPANS   (-1) /* this rank's CPUs lie in several instances */
#define UNKNOWN (-3) /* sysfs does not say (then the type is not checked) */

static int rank, size;
static int mine[NT];  /* this rank's instance of each type (its first CPU), SPANS or UNKNOWN */
static int *all;      /* every world rank's mine[], by world rank */
static int same_cpus; /* every rank has the same CPUs */

/* ---------------- the oracle: sysfs ---------------- */

/* Reads a CPU list ("0-3,8") into set; 0, or -1 when the file cannot be read. */
static int read_list(const char *path, cpu_set_t *set)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char buf[4096];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    CPU_ZERO(set);
    for (char *p = buf; *p && *p != '\n';) {
        char *end;
        long a = strtol(p, &end, 10), b = a;
        if (end == p)
            return -1;
        if (*end == '-')
            b = strtol(end + 1, &end, 10);
        for (long c = a; c <= b && c < CPU_SETSIZE; c++)
            CPU_SET((int)c, set);
        p = *end == ',' ? end + 1 : end;
    }
    return 0;
}

static int first_cpu(const cpu_set_t *set)
{
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, set))
            return c;
    return -1;
}

/* The instance of type t around CPU c, as its first CPU; UNKNOWN when sysfs does not say. */
static int instance_of(int c, int t)
{
    char path[256];
    cpu_set_t set;
    switch (t) {
    case T_PU: return c;
    case T_CORE:
    case T_PACKAGE: {
        const char *names[2] = { t == T_CORE ? "core_cpus_list" : "package_cpus_list",
                                 t == T_CORE ? "thread_siblings_list" : "core_siblings_list" };
        for (int k = 0; k < 2; k++) {
            snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/%s", c, names[k]);
            if (read_list(path, &set) == 0)
                return first_cpu(&set);
        }
        return UNKNOWN;
    }
    default: { /* a data or unified cache of the type's level */
        int level = t == T_L1 ? 1 : t == T_L2 ? 2 : 3;
        for (int i = 0; i < 16; i++) {
            char s[64] = "";
            int lv = 0;
            snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/cache/index%d/level", c, i);
            FILE *f = fopen(path, "r");
            if (!f)
                break;
            if (fscanf(f, "%d", &lv) != 1)
                lv = 0;
            fclose(f);
            snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/cache/index%d/type", c, i);
            if ((f = fopen(path, "r")) != NULL) {
                if (fscanf(f, "%63s", s) != 1)
                    s[0] = '\0';
                fclose(f);
            }
            if (lv != level || strcmp(s, "Instruction") == 0)
                continue;
            snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/cache/index%d/shared_cpu_list", c, i);
            return read_list(path, &set) == 0 ? first_cpu(&set) : UNKNOWN;
        }
        return UNKNOWN;
    }
    }
}

/* The one NUMA node whose CPUs meet `cpus` (its number), SPANS, or 0 without NUMA in sysfs (one
 * node: hwloc makes one too). */
static int numa_of(const cpu_set_t *cpus)
{
    DIR *d = opendir("/sys/devices/system/node");
    if (!d)
        return 0;
    int found = SPANS, n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        int node;
        char path[300];
        cpu_set_t set, both;
        if (sscanf(e->d_name, "node%d", &node) != 1)
            continue;
        snprintf(path, sizeof path, "/sys/devices/system/node/%s/cpulist", e->d_name);
        if (read_list(path, &set) != 0)
            continue;
        CPU_AND(&both, &set, cpus);
        if (CPU_COUNT(&both) > 0) {
            n++;
            found = node;
        }
    }
    closedir(d);
    return n == 1 ? found : SPANS;
}

static cpu_set_t cpus; /* this rank's */

/* mine[] (before MPI_Init: no MPI call) */
static void oracle_local(void)
{
    CHECK(sched_getaffinity(0, sizeof cpus, &cpus) == 0, "sched_getaffinity failed");
    for (int t = 0; t < NT; t++) {
        if (t == T_MACHINE) {
            mine[t] = 0;
            continue;
        }
        if (t == T_NUMANODE) {
            mine[t] = numa_of(&cpus);
            continue;
        }
        mine[t] = UNKNOWN - 1; /* none seen yet */
        for (int c = 0; c < CPU_SETSIZE; c++) {
            if (!CPU_ISSET(c, &cpus))
                continue;
            int id = instance_of(c, t);
            if (id == UNKNOWN)
                mine[t] = UNKNOWN;
            if (mine[t] == UNKNOWN)
                break;
            mine[t] = mine[t] == UNKNOWN - 1 || mine[t] == id ? id : SPANS;
        }
    }
}

/* all[] and same_cpus */
static void oracle_exchange(void)
{
    all = malloc(sizeof(int) * NT * (size_t)size);
    CHECK(all, "out of memory");
    MPI_CHECK(MPI_Allgather(mine, NT, MPI_INT, all, NT, MPI_INT, MPI_COMM_WORLD));
    /* the same CPUs everywhere: compare the masks */
    unsigned char m[CPU_SETSIZE / 8] = { 0 }, r[CPU_SETSIZE / 8];
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &cpus))
            m[c / 8] |= (unsigned char)(1u << (c % 8));
    memcpy(r, m, sizeof m);
    MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, r, (int)sizeof r, MPI_BYTE, MPI_BAND, MPI_COMM_WORLD));
    int eq = memcmp(r, m, sizeof m) == 0; /* at every rank: every mask is the AND of all */
    MPI_CHECK(MPI_Allreduce(&eq, &same_cpus, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD));
}

/* ---------------- helpers ---------------- */

/* The world ranks of c's members (its rank order) into w; returns how many. */
static int members(MPI_Comm c, int *w)
{
    int n;
    MPI_CHECK(MPI_Comm_size(c, &n));
    MPI_CHECK(MPI_Allgather(&rank, 1, MPI_INT, w, 1, MPI_INT, c));
    return n;
}

/* The world ranks among par[0..np) in world rank w's instance of t, in par's order; -1 when w's
 * CPUs span several instances. */
static int group_of(int w, int t, const int *par, int np, int *g)
{
    int id = all[w * NT + t], n = 0;
    if (id < 0)
        return -1;
    for (int i = 0; i < np; i++)
        if (all[par[i] * NT + t] == id)
            g[n++] = par[i];
    return n;
}

static int contains(const int *g, int n, int w)
{
    for (int i = 0; i < n; i++)
        if (g[i] == w)
            return 1;
    return 0;
}

/* Whether the sets a (na) and b (nb) are equal. */
static int same_set(const int *a, int na, const int *b, int nb)
{
    if (na != nb)
        return 0;
    for (int i = 0; i < na; i++)
        if (!contains(b, nb, a[i]))
            return 0;
    return 1;
}

static void hint_is(MPI_Comm c, const char *want, const char *what)
{
    MPI_Info used;
    char v[MPI_MAX_INFO_VAL + 1] = "";
    int flag = 0;
    MPI_CHECK(MPI_Comm_get_info(c, &used));
    MPI_CHECK(MPI_Info_get(used, "mpi_hw_resource_type", MPI_MAX_INFO_VAL, v, &flag));
    MPI_CHECK(MPI_Info_free(&used));
    CHECK(flag && strcmp(v, want) == 0, "%s: the result's mpi_hw_resource_type is %s, want %s", what,
          flag ? v : "(not set)", want);
}

/* MPI_Comm_split_type(comm, MPI_COMM_TYPE_HW_GUIDED) with mpi_hw_resource_type = value. */
static MPI_Comm guided(MPI_Comm comm, const char *value, int key)
{
    MPI_Info info;
    MPI_Comm c;
    MPI_CHECK(MPI_Info_create(&info));
    MPI_CHECK(MPI_Info_set(info, "mpi_hw_resource_type", value));
    MPI_CHECK(MPI_Comm_split_type(comm, MPI_COMM_TYPE_HW_GUIDED, key, info, &c));
    MPI_CHECK(MPI_Info_free(&info));
    return c;
}

/* ---------------- the checks ---------------- */

static void check_hw_info(void)
{
    MPI_Info hw;
    MPI_CHECK(MPI_Get_hw_resource_info(&hw));
    CHECK(hw != MPI_INFO_NULL, "MPI_Get_hw_resource_info gave MPI_INFO_NULL");
    int nkeys = 0;
    MPI_CHECK(MPI_Info_get_nkeys(hw, &nkeys));
    for (int k = 0; k < nkeys; k++) {
        char key[MPI_MAX_INFO_KEY + 1], v[MPI_MAX_INFO_VAL + 1];
        int flag = 0;
        MPI_CHECK(MPI_Info_get_nthkey(hw, k, key));
        MPI_CHECK(MPI_Info_get(hw, key, MPI_MAX_INFO_VAL, v, &flag));
        CHECK(flag && strncmp(key, "hwloc://", 8) == 0 && (!strcmp(v, "true") || !strcmp(v, "false")),
              "MPI_Get_hw_resource_info: key %s = %s (want hwloc://<type> = true or false)", key, flag ? v : "?");
    }
    for (int t = 0; t < NT; t++) {
        char key[64], v[MPI_MAX_INFO_VAL + 1] = "";
        int flag = 0;
        snprintf(key, sizeof key, "hwloc://%s", tname[t]);
        MPI_CHECK(MPI_Info_get(hw, key, MPI_MAX_INFO_VAL, v, &flag));
        if (mine[t] == UNKNOWN)
            continue;
        CHECK(flag, "MPI_Get_hw_resource_info: no key %s (sysfs has the type)", key);
        const char *want = mine[t] >= 0 ? "true" : "false";
        CHECK(strcmp(v, want) == 0, "MPI_Get_hw_resource_info: %s = %s, want %s (sysfs: %s)", key, v, want,
              mine[t] >= 0 ? "my CPUs lie in one instance" : "my CPUs span several instances");
    }
    MPI_CHECK(MPI_Info_free(&hw));
}

static void check_guided(MPI_Comm comm, const char *what)
{
    int np, par[256], got[256], want[256];
    np = members(comm, par);
    CHECK(np <= 256, "too many ranks");
    for (int t = 0; t < NT; t++) {
        char value[64];
        snprintf(value, sizeof value, "hwloc://%s", tname[t]);
        int descending = t & 1, r;
        MPI_CHECK(MPI_Comm_rank(comm, &r));
        MPI_Comm c = guided(comm, value, descending ? -r : r);
        if (mine[t] == UNKNOWN) { /* (the call is collective: made all the same) */
            if (c != MPI_COMM_NULL)
                MPI_CHECK(MPI_Comm_free(&c));
            continue;
        }
        int nw = group_of(rank, t, par, np, want);
        if (nw < 0) {
            CHECK(c == MPI_COMM_NULL, "%s: HW_GUIDED %s gave a communicator though my CPUs span several instances",
                  what, value);
            continue;
        }
        CHECK(c != MPI_COMM_NULL, "%s: HW_GUIDED %s gave MPI_COMM_NULL though my CPUs lie in one instance", what,
              value);
        int ng = members(c, got);
        CHECK(ng == nw, "%s: HW_GUIDED %s: %d ranks, want %d", what, value, ng, nw);
        for (int i = 0; i < nw; i++) {
            int w = descending ? want[nw - 1 - i] : want[i];
            CHECK(got[i] == w, "%s: HW_GUIDED %s: member %d is world rank %d, want %d", what, value, i, got[i], w);
        }
        hint_is(c, value, value);
        MPI_CHECK(MPI_Comm_free(&c));
    }
    /* the name without the scheme, in any case */
    const char *plain[] = { "Core", "core", "PU" };
    for (int k = 0; k < 3; k++) {
        int t = k < 2 ? T_CORE : T_PU;
        MPI_Comm c = guided(comm, plain[k], 0);
        int nw = group_of(rank, t, par, np, want);
        CHECK((c != MPI_COMM_NULL) == (nw > 0), "%s: HW_GUIDED %s: %s", what, plain[k],
              c == MPI_COMM_NULL ? "MPI_COMM_NULL" : "a communicator though my CPUs span several");
        if (c != MPI_COMM_NULL) {
            int ng = members(c, got);
            CHECK(same_set(got, ng, want, nw), "%s: HW_GUIDED %s: not the ranks of my instance", what, plain[k]);
            hint_is(c, t == T_CORE ? "hwloc://Core" : "hwloc://PU", plain[k]);
            MPI_CHECK(MPI_Comm_free(&c));
        }
    }
    /* unknown resources, no key, no info: MPI_COMM_NULL */
    const char *bogus[] = { "no-such-resource", "hwloc://NoSuchType", "hwloc://", "Cores", "" };
    for (int k = 0; k < 5; k++) {
        MPI_Comm c = guided(comm, bogus[k], 0);
        CHECK(c == MPI_COMM_NULL, "%s: HW_GUIDED \"%s\" gave a communicator", what, bogus[k]);
    }
    MPI_Info info;
    MPI_Comm c;
    MPI_CHECK(MPI_Info_create(&info));
    MPI_CHECK(MPI_Info_set(info, "mpi_hw_resource", "hwloc://Core")); /* not the key */
    MPI_CHECK(MPI_Comm_split_type(comm, MPI_COMM_TYPE_HW_GUIDED, 0, info, &c));
    CHECK(c == MPI_COMM_NULL, "%s: HW_GUIDED without mpi_hw_resource_type gave a communicator", what);
    MPI_CHECK(MPI_Info_free(&info));
    MPI_CHECK(MPI_Comm_split_type(comm, MPI_COMM_TYPE_HW_GUIDED, 0, MPI_INFO_NULL, &c));
    CHECK(c == MPI_COMM_NULL, "%s: HW_GUIDED with MPI_INFO_NULL gave a communicator", what);
    /* the node: everybody */
    c = guided(comm, "mpi_shared_memory", 0);
    CHECK(c != MPI_COMM_NULL, "%s: HW_GUIDED mpi_shared_memory gave MPI_COMM_NULL", what);
    int ng = members(c, got), res;
    CHECK(ng == np, "%s: HW_GUIDED mpi_shared_memory: %d ranks, want %d", what, ng, np);
    MPI_CHECK(MPI_Comm_compare(c, comm, &res));
    CHECK(res == MPI_CONGRUENT, "%s: HW_GUIDED mpi_shared_memory: not the parent's group in its order", what);
    hint_is(c, "mpi_shared_memory", "mpi_shared_memory");
    MPI_CHECK(MPI_Comm_free(&c));
}

/* The type a name in mpi_hw_resource_type stands for: 0..NT-1, NT for mpi_shared_memory, -1. */
static int type_of(const char *v)
{
    if (!strcmp(v, "mpi_shared_memory"))
        return NT;
    for (int t = 0; t < NT; t++)
        if (!strncmp(v, "hwloc://", 8) && !strcmp(v + 8, tname[t]))
            return t;
    return -1;
}

/* HW_UNGUIDED of `parent` (members par[0..np)), then of the result, down to MPI_COMM_NULL. */
static void check_unguided(MPI_Comm parent, const char *what)
{
    int par[256], np = members(parent, par);
    for (int depth = 0;; depth++) {
        MPI_Info info;
        MPI_Comm c;
        MPI_CHECK(MPI_Info_create(&info));
        MPI_CHECK(MPI_Comm_split_type(parent, MPI_COMM_TYPE_HW_UNGUIDED, 0, info, &c));
        /* a type whose instance around my CPUs holds some of the parent's ranks, not all */
        int could = -1;
        for (int t = 0; t < NT && could < 0; t++) {
            int g[256], n = group_of(rank, t, par, np, g);
            if (mine[t] != UNKNOWN && n > 0 && n < np)
                could = t;
        }
        if (c == MPI_COMM_NULL) {
            CHECK(could < 0,
                  "%s, level %d: HW_UNGUIDED gave MPI_COMM_NULL though my %s holds some of the %d ranks, not all", what,
                  depth, could >= 0 ? tname[could] : "", np);
            MPI_CHECK(MPI_Info_free(&info));
            if (depth > 0)
                MPI_CHECK(MPI_Comm_free(&parent));
            return;
        }
        CHECK(depth < NT + 1, "%s: HW_UNGUIDED went on for %d levels", what, depth);
        CHECK(!same_cpus, "%s, level %d: HW_UNGUIDED cut ranks that have the same CPUs", what, depth);
        int got[256], ng = members(c, got);
        CHECK(ng < np, "%s, level %d: HW_UNGUIDED gave all %d ranks of the parent", what, depth, np);
        char v[MPI_MAX_INFO_VAL + 1] = "";
        int flag = 0;
        MPI_CHECK(MPI_Info_get(info, "mpi_hw_resource_type", MPI_MAX_INFO_VAL, v, &flag));
        MPI_CHECK(MPI_Info_free(&info));
        int t = flag ? type_of(v) : -1;
        CHECK(t >= 0, "%s, level %d: HW_UNGUIDED set mpi_hw_resource_type to %s in the caller's info", what, depth,
              flag ? v : "(nothing)");
        hint_is(c, v, "HW_UNGUIDED");
        CHECK(t < NT, "%s, level %d: HW_UNGUIDED split by the node within one node", what, depth);
        if (mine[t] != UNKNOWN) {
            int want[256], nw = group_of(rank, t, par, np, want);
            CHECK(nw > 0 && same_set(got, ng, want, nw), "%s, level %d: HW_UNGUIDED (%s): not the ranks of my instance",
                  what, depth, v);
            /* the largest group below the parent: no type gives one between */
            for (int u = 0; u < NT; u++) {
                int g[256], n = group_of(rank, u, par, np, g);
                if (mine[u] == UNKNOWN || n <= ng || n >= np)
                    continue;
                int holds = 1;
                for (int i = 0; i < ng; i++)
                    holds &= contains(g, n, got[i]);
                CHECK(!holds, "%s, level %d: HW_UNGUIDED gave %s (%d ranks) where %s has %d, still below the parent",
                      what, depth, v, ng, tname[u], n);
            }
        }
        /* the ranks keep the parent's order (key 0 everywhere) */
        for (int i = 1; i < ng; i++) {
            int a = -1, b = -1;
            for (int j = 0; j < np; j++) {
                if (par[j] == got[i - 1])
                    a = j;
                if (par[j] == got[i])
                    b = j;
            }
            CHECK(a < b, "%s, level %d: HW_UNGUIDED: members out of the parent's order", what, depth);
        }
        if (depth > 0)
            MPI_CHECK(MPI_Comm_free(&parent));
        parent = c;
        np = ng;
        memcpy(par, got, sizeof(int) * (size_t)ng);
    }
}

static void check_unguided_optout(MPI_Comm comm, const char *what)
{
    int n, r;
    MPI_CHECK(MPI_Comm_size(comm, &n));
    MPI_CHECK(MPI_Comm_rank(comm, &r));
    if (n < 2)
        return;
    MPI_Info info;
    MPI_Comm c;
    MPI_CHECK(MPI_Info_create(&info));
    MPI_CHECK(MPI_Comm_split_type(comm, r == n - 1 ? MPI_UNDEFINED : MPI_COMM_TYPE_HW_UNGUIDED, 0, info, &c));
    if (r == n - 1) {
        CHECK(c == MPI_COMM_NULL, "%s: MPI_UNDEFINED gave a communicator", what);
    } else {
        CHECK(c != MPI_COMM_NULL, "%s: HW_UNGUIDED without the last rank gave MPI_COMM_NULL", what);
        int s;
        MPI_CHECK(MPI_Comm_size(c, &s));
        CHECK(s == n - 1, "%s: HW_UNGUIDED without the last rank: %d ranks, want %d", what, s, n - 1);
        hint_is(c, "mpi_shared_memory", "HW_UNGUIDED without the last rank");
        MPI_CHECK(MPI_Comm_free(&c));
    }
    MPI_CHECK(MPI_Info_free(&info));
}

/* On an intercommunicator (low half, high half): "hwloc://Core" gives my side's ranks of my
 * core and the other side's ranks of the same core. */
static void check_inter(MPI_Comm comm, const char *what)
{
    int n, r;
    MPI_CHECK(MPI_Comm_size(comm, &n));
    MPI_CHECK(MPI_Comm_rank(comm, &r));
    if (n < 2)
        return;
    int h = n / 2, low = r < h, par[256];
    members(comm, par);
    MPI_Comm local, ic;
    MPI_CHECK(MPI_Comm_split(comm, low, r, &local));
    MPI_CHECK(MPI_Intercomm_create(local, 0, comm, low ? h : 0, 7, &ic));
    MPI_Comm c = guided(ic, "hwloc://Core", 0);
    int id = mine[T_CORE], nl = 0, nr = 0;
    if (id != UNKNOWN) {
        for (int i = 0; i < n; i++)
            if (id >= 0 && all[par[i] * NT + T_CORE] == id)
                *((i < h) == low ? &nl : &nr) += 1;
        if (id < 0 || nr == 0) {
            CHECK(c == MPI_COMM_NULL, "%s: HW_GUIDED Core on an intercommunicator gave a communicator", what);
        } else {
            CHECK(c != MPI_COMM_NULL, "%s: HW_GUIDED Core on an intercommunicator gave MPI_COMM_NULL", what);
            int l, rs;
            MPI_CHECK(MPI_Comm_size(c, &l));
            MPI_CHECK(MPI_Comm_remote_size(c, &rs));
            CHECK(l == nl && rs == nr,
                  "%s: HW_GUIDED Core on an intercommunicator: groups of %d and %d, want %d and %d", what, l, rs, nl,
                  nr);
        }
    }
    if (c != MPI_COMM_NULL)
        MPI_CHECK(MPI_Comm_free(&c));
    MPI_CHECK(MPI_Comm_free(&ic));
    MPI_CHECK(MPI_Comm_free(&local));
}

static void check_errors(MPI_Comm comm, const char *what)
{
    MPI_Comm c;
    int not_an_info[8] = { 0 }; /* (a freed info's address could be another thread's new one) */
    CHECK_ERRCLASS(MPI_Comm_split_type(comm, 12345, 0, MPI_INFO_NULL, &c), MPI_ERR_ARG, "split_type 12345");
    CHECK_ERRCLASS(MPI_Comm_split_type(comm, MPI_COMM_TYPE_HW_UNGUIDED, 0, (MPI_Info)(void *)not_an_info, &c),
                   MPI_ERR_INFO, "an invalid info handle");
    (void)what;
}

static void check_all(MPI_Comm comm, const char *what)
{
    check_hw_info();
    check_guided(comm, what);
    check_unguided(comm, what);
    check_unguided_optout(comm, what);
    check_inter(comm, what);
    check_errors(comm, what);
    check_hw_info();
}

/* Before MPI_Init, two threads ask at once (MPI_Get_hw_resource_info may be called then, and
 * the library's lock is not on yet): the topology is read among them. */
static void *early_main(void *arg)
{
    (void)arg;
    for (int i = 0; i < 20; i++)
        check_hw_info();
    return NULL;
}

static MPI_Comm tcomm[2];
static void *thread_main(void *arg)
{
    int t = (int)(intptr_t)arg;
    char what[32];
    snprintf(what, sizeof what, "thread %d", t);
    for (int i = 0; i < 3; i++)
        check_all(tcomm[t], what);
    return NULL;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    int threads = argc > 2 && !strcmp(argv[2], "threads"), provided;
    if (!strcmp(mode, "mixed") && getenv("PMI_RANK") && atoi(getenv("PMI_RANK")) % 2 == 0) {
        /* the (r/2)-th of my CPUs, before the library may start a thread */
        cpu_set_t cpus, one;
        CHECK(sched_getaffinity(0, sizeof cpus, &cpus) == 0, "sched_getaffinity failed");
        int k = (atoi(getenv("PMI_RANK")) / 2) % CPU_COUNT(&cpus), c = 0;
        for (;; c++)
            if (CPU_ISSET(c, &cpus) && k-- == 0)
                break;
        CPU_ZERO(&one);
        CPU_SET(c, &one);
        CHECK(sched_setaffinity(0, sizeof one, &one) == 0, "sched_setaffinity failed");
    }
    oracle_local();
    if (threads) {
        pthread_t tid[2];
        for (int t = 0; t < 2; t++)
            CHECK(pthread_create(&tid[t], NULL, early_main, NULL) == 0, "pthread_create");
        for (int t = 0; t < 2; t++)
            pthread_join(tid[t], NULL);
    }
    MPI_Init_thread(&argc, &argv, threads ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK(size <= 256, "at most 256 ranks");
    oracle_exchange();
    if (!strcmp(mode, "core"))
        CHECK(mine[T_CORE] >= 0, "bound to cores (mpiexec --bind-to core), but my CPUs span several cores");
    if (!strcmp(mode, "none")) {
        /* unbound: every rank has the CPUs mpiexec had, several cores where it had several */
        CHECK(same_cpus, "not bound (--bind-to none), but the ranks have different CPUs");
        MPI_Comm c = guided(MPI_COMM_WORLD, "hwloc://Core", 0);
        if (mine[T_CORE] == SPANS)
            CHECK(c == MPI_COMM_NULL, "unbound, my CPUs span several cores, and HW_GUIDED Core gave a communicator");
        else if (rank == 0)
            printf("note: not bound, but all my CPUs are in one core: no rank spans several\n");
        if (c != MPI_COMM_NULL)
            MPI_CHECK(MPI_Comm_free(&c));
    }
    if (threads) {
        CHECK(provided == MPI_THREAD_MULTIPLE, "MPI_THREAD_MULTIPLE not provided");
        pthread_t tid[2];
        for (int t = 0; t < 2; t++) {
            MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &tcomm[t]));
            MPI_CHECK(MPI_Comm_set_errhandler(tcomm[t], MPI_ERRORS_RETURN));
        }
        for (int t = 0; t < 2; t++)
            CHECK(pthread_create(&tid[t], NULL, thread_main, (void *)(intptr_t)t) == 0, "pthread_create");
        for (int t = 0; t < 2; t++)
            pthread_join(tid[t], NULL);
        for (int t = 0; t < 2; t++)
            MPI_CHECK(MPI_Comm_free(&tcomm[t]));
    } else {
        check_all(MPI_COMM_WORLD, "MPI_COMM_WORLD");
    }
    if (rank == 0) {
        printf("sysfs:");
        for (int t = 0; t < NT; t++)
            printf(" %s=%d", tname[t], mine[t]);
        printf(" (rank 0; -1: spans several)\n");
    }
    free(all);
    return mtest_finalize();
}
