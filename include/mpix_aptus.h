/* Aptus MPI extensions (MPIX_): include after mpi.h. */
#ifndef MPIX_APTUS_H
#define MPIX_APTUS_H

#ifdef __cplusplus
extern "C" {
#endif

#define MPIX_APTUS_COUNTERS 1

/* Reads one of the library's counters at run time, by name: "memory" (bytes the channels hold),
 * "memory.CHANNEL" (e.g. "memory.rc-rdma"), "rc.connections", "rcache.hits", ... -- the full
 * list is in docs/TUNING.md and in the message for an unknown name. Returns MPI_SUCCESS with
 * *value set; MPI_ERR_ARG for an unknown name or a null argument (raised on MPI_COMM_WORLD's
 * error handler); MPI_ERR_OTHER before MPI_Init or after MPI_Finalize. */
int MPIX_Aptus_counter(const char *name, unsigned long long *value);

#ifdef __cplusplus
}
#endif
#endif
