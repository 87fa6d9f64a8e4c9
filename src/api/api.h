/* Conventions for the MPI API layer.
 *
 * Every MPI function is defined once under its PMPI_ name and exported under its MPI_ name as
 * a weak alias (the profiling interface): define `int PMPI_Send(...) { ... }` and follow it
 * with APTUS_ALIAS(Send). The version script src/libmpi.map exports MPI_* and PMPI_* only. */
#ifndef APTUS_API_API_H
#define APTUS_API_API_H

#include <mpi.h>
#include <stddef.h>

#define APTUS_ALIAS(fn) extern __typeof__(PMPI_##fn) MPI_##fn __attribute__((weak, alias("PMPI_" #fn)));

/* Constructors (every MPI function that returns an object through an output handle, requests
 * included): the first statement sets the handle to the null one, so that every error return
 * leaves it so; success overwrites it, and a step that fails after the object was made frees it
 * and sets the null handle again. A null pointer is left alone (the call reports it). */
#define APTUS_OUT_NULL(p, null)                                                                                        \
    do {                                                                                                               \
        if (p)                                                                                                         \
            *(p) = (null);                                                                                             \
    } while (0)

/* Nonblocking and persistent collectives, recorded from the blocking forms' code (coll/nbc.h,
 * api/coll.c): begin checks the request pointer and info and starts recording; end turns what
 * the blocking form recorded (it returned rc, an error it reported already) into the request.
 * APTUS_NB_BEGIN(FN, INFO) begins in a function with a `request` argument. */
int aptus_api_nb_begin(MPI_Request *request, MPI_Info info, const char *fn);
int aptus_api_nb_end(int rc, MPI_Comm comm, MPI_Request *request, int persistent, const void *key, size_t klen,
                     const char *fn);
/* A nonblocking call whose schedule the cache holds (key: its arguments): started from there;
 * returns 1 with *request set, else 0. */
int aptus_api_nb_replay(const void *key, size_t klen, MPI_Comm comm, MPI_Request *request);
#define APTUS_NB_BEGIN(FN, INFO)                                                                                       \
    do {                                                                                                               \
        int nb_rc_ = aptus_api_nb_begin(request, INFO, FN);                                                            \
        if (nb_rc_)                                                                                                    \
            return nb_rc_;                                                                                             \
    } while (0)

/* Dynamic processes (api/dpm.c): closes the ports still open and removes the names this process
 * published (MPI_Finalize, and the process's exit). */
void aptus_dpm_finalize(void);
/* MPI_Init of a process that MPI_Comm_spawn started: connects to its parents (MPI_Comm_get_parent). */
void aptus_dpm_init_child(void);
/* A communicator is freed: MPI_Comm_get_parent forgets it if it was the parent. */
void aptus_dpm_comm_freed(MPI_Comm h);

#endif
