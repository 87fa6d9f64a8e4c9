/* Conventions for the MPI API layer.
 *
 * Every MPI function is defined once under its PMPI_ name and exported under its MPI_ name as
 * a weak alias (the profiling interface): define `int PMPI_Send(...) { ... }` and follow it
 * with APTUS_ALIAS(Send). The version script src/libmpi.map exports MPI_* and PMPI_* only. */
#ifndef APTUS_API_API_H
#define APTUS_API_API_H

#include <mpi.h>

#define APTUS_ALIAS(fn) extern __typeof__(PMPI_##fn) MPI_##fn __attribute__((weak, alias("PMPI_" #fn)));

#endif
