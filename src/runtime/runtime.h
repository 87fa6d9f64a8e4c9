/* Process-wide state of the library, set up by MPI_Init. */
#ifndef APTUS_RUNTIME_RUNTIME_H
#define APTUS_RUNTIME_RUNTIME_H

#include <stdint.h>
#include <sys/types.h>

#include "channel/rules.h"
#include "runtime/pmi.h"

struct aptus_peer;

struct aptus_runtime {
    int initialized, finalized;
    int rank, size; /* in MPI_COMM_WORLD */
    int thread_level;
    pid_t pid;
    struct aptus_pmi_info pmi;
    int *node_of;               /* node index of every world rank (from the launcher) */
    int node;                   /* this process's node */
    int local_size, local_rank; /* ranks on this node, and our index among them */
    struct aptus_peer **peers;  /* world rank -> peer state, created on first use */
    struct aptus_rule_chain rules;
    double t0;
};

extern struct aptus_runtime aptus_rt;

/* MPI_Init / MPI_Finalize bodies. Return an MPI error class, after printing the reason. */
int aptus_runtime_init(int required, int *provided);
int aptus_runtime_finalize(void);
/* Removes anything this process left in /dev/shm; safe to call from error paths. */
void aptus_runtime_emergency_cleanup(void);
/* Seconds since an arbitrary point (monotonic). */
double aptus_wtime(void);

#endif
