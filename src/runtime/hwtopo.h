/* The hardware around this process, from hwloc: which instance of each hardware resource type
 * (a core, an L3 cache, a package, ...) the process is restricted to. MPI_Comm_split_type's
 * hardware types (MPI_COMM_TYPE_HW_GUIDED, _HW_UNGUIDED, _RESOURCE_GUIDED) and
 * MPI_Get_hw_resource_info answer from here (docs/DESIGN.md, "Communicators, groups and
 * topologies", hardware resources).
 *
 * The topology is read on the first question, not at start-up (reading it costs milliseconds on
 * a large machine), once per process whichever thread asks first; the process's CPU binding
 * (every thread's CPUs: hwloc's cpubind of the process) is read at every question, since it may
 * change. Built without hwloc, or where hwloc cannot read the machine, every type is absent. */
#ifndef APTUS_RUNTIME_HWTOPO_H
#define APTUS_RUNTIME_HWTOPO_H

/* The types, from the top of the hierarchy down (the order MPI_COMM_TYPE_HW_UNGUIDED tries
 * them in; a NUMA node is put below the package and above the caches, where it usually is). */
enum aptus_hw_type {
    APTUS_HW_MACHINE,
    APTUS_HW_PACKAGE,
    APTUS_HW_NUMANODE,
    APTUS_HW_DIE,
    APTUS_HW_L5CACHE,
    APTUS_HW_L4CACHE,
    APTUS_HW_L3CACHE,
    APTUS_HW_L2CACHE,
    APTUS_HW_L1CACHE,
    APTUS_HW_CORE,
    APTUS_HW_PU,
    APTUS_HW_NTYPES
};

/* What aptus_hw_instances gives for a type the process is not restricted to one instance of
 * (its CPUs span several), and for one the machine does not have (or no topology). */
#define APTUS_HW_SPANS  (-1)
#define APTUS_HW_ABSENT (-2)

/* hwloc's name of the type ("Package", "L3Cache", ...). */
const char *aptus_hw_type_name(int t);
/* The name in the URI form MPI 4.1 recommends for resource types: "hwloc://Package". */
const char *aptus_hw_type_uri(int t);
/* The type a value of the info key mpi_hw_resource_type names: "hwloc://<name>" or "<name>",
 * the name one of hwloc's type names above (case ignored, as the URI scheme); -1 for any other
 * string. */
int aptus_hw_type_parse(const char *s);
/* For every type t: the instance of t this process's CPU binding lies in, as a number >= 0 that
 * names the same instance in every process of this machine, or APTUS_HW_SPANS, or
 * APTUS_HW_ABSENT. Reads the topology on its first call (thread-safe). Returns 0, or -1 when no
 * topology is known (every entry APTUS_HW_ABSENT). */
int aptus_hw_instances(int id[APTUS_HW_NTYPES]);

#endif
