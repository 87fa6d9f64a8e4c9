/* Process-wide state of the library, set up by MPI_Init. */
#ifndef APTUS_RUNTIME_RUNTIME_H
#define APTUS_RUNTIME_RUNTIME_H

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

#include "runtime/pmi.h"

struct aptus_peer;

struct aptus_runtime {
    int initialized, finalized; /* the runtime is up / has been torn down (any user) */
    /* The world model (MPI_Init / MPI_Finalize), what MPI_Initialized and MPI_Finalized say,
     * and the runtime's users: the world model while initialized, and every open session. */
    int world_initialized, world_finalized;
    int users;
    int rank, size; /* in MPI_COMM_WORLD */
    int thread_level;
    pthread_t main_thread; /* the thread that initialized MPI (MPI_Is_thread_main) */
    pid_t pid;
    struct aptus_pmi_info pmi;
    /* Processes are named by an index: a world rank below size, and from size on the processes of
     * other jobs this one connected to (dynamic processes: channel/procs.c), nprocs of them in
     * all, at most procs_cap (size + APTUS_DPM_PROCS: the arrays below never move). */
    int nprocs, procs_cap;
    int *node_of;               /* node index of every process (from the launcher; another job's: -1 - index) */
    int node;                   /* this process's node */
    int local_size, local_rank; /* ranks on this node, and our index among them */
    struct aptus_peer **peers;  /* process index -> peer state, created on first use */
    double t0;
};

extern struct aptus_runtime aptus_rt;

/* MPI_Init / MPI_Finalize bodies (api/startup.c: the one place that wires every layer).
 * Return an MPI error class, after printing the reason. */
int aptus_runtime_init(int required, int *provided);
int aptus_runtime_finalize(void);
/* A new user of the runtime (MPI_Init, MPI_Session_init): starts it if it is not up (or takes
 * it up again where the last session left it). Returns an MPI error class after printing the
 * reason; MPI_ERR_OTHER without starting anything if the runtime was already torn down (by
 * MPI_Finalize: it cannot be restarted). */
int aptus_runtime_acquire(int required, int *provided);
/* A user is done (MPI_Finalize, MPI_Session_finalize). Once the world model has ended, the last
 * one tears the runtime down, collectively over all processes. Before that -- the last session
 * of a process that has not called MPI_Finalize -- the runtime stays up, unused, for the next
 * MPI_Session_init or MPI_Init, and the process's exit tears it down (docs/DESIGN.md,
 * "Sessions"). Returns an MPI error class. */
int aptus_runtime_release(void);
/* A fault that stops the start-up and that every rank is likely to find alike (a setting out of
 * its range: the environment reaches every rank alike as a rule). One line says it, not one per
 * rank: rank 0 prints "Aptus MPI: <message>" at once -- its MPI_Init then ends the job through
 * the launcher --, and every other rank first sleeps up to APTUS_STARTUP_ERROR_WAIT_S seconds
 * for the launcher to end it, and prints only if it has not (a fault that rank 0 did not find).
 * A singleton prints at once. aptus_rt.rank and aptus_rt.pmi must be set (aptus_pmi_init). */
#define APTUS_STARTUP_ERROR_WAIT_S 3
void aptus_startup_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Seconds since an arbitrary point (monotonic). */
double aptus_wtime(void);
/* A hash of this job's id (FNV-1a of aptus_rt.pmi.jobid), carried by datagrams, connection
 * requests and the cards of dynamic processes so that those of another job are told apart. */
uint32_t aptus_job_hash(void);

#endif
