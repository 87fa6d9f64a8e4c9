/* PMI-2 client: wire-up through the launcher's key-value space.
 *
 * Speaks the PMI-2 wire protocol on the file descriptor named by PMI_FD (as served by
 * our mpiexec, Slurm's `srun --mpi=pmi2` and MPICH's Hydra), or, without PMI_FD, over a TCP
 * connection to PMI_PORT=host:port (our mpiexec's ranks on other hosts). Without either the
 * process is a singleton: rank 0 of 1, and put/get/fence work on a local table. */
#ifndef APTUS_RUNTIME_PMI_H
#define APTUS_RUNTIME_PMI_H

#include <stddef.h>

#define APTUS_PMI_MAX_KEY 64
#define APTUS_PMI_MAX_VAL 1024

struct aptus_pmi_info {
    int rank;
    int size;
    int appnum;
    int singleton;  /* 1 when started without a PMI server */
    char jobid[64]; /* unique for the job (used in shared-memory names) */
};

/* Connects (or becomes a singleton). Returns 0 or -1 with a message on stderr. */
int aptus_pmi_init(struct aptus_pmi_info *info);
/* Publishes key=value for this rank; visible to others after the next fence. Keys should be
 * unique per rank (Slurm's and Hydra's key spaces are global). */
int aptus_pmi_put(const char *key, const char *value);
/* Collective over all ranks of the job: every put made before a rank's fence is visible to
 * every get made after the matching fence of any rank. It is NOT a barrier: the PMI-2
 * definition allows a lazy fence, and Hydra's returns at once (a later get of a key not yet
 * put waits there until every rank has reached the same fence). To order anything else
 * across ranks, use aptus_pmi_barrier. */
int aptus_pmi_fence(void);
/* Reads a key published by rank src_rank (-1: any). Returns 0, or -1 if not found. */
int aptus_pmi_get(int src_rank, const char *key, char *value, size_t maxlen);
/* A barrier with a vote, correct under any PMI-2 server (lazy fences included): collective
 * over all ranks of the job, every rank passing the same name (at most 40 characters, unique
 * for each use). Each rank publishes whether it is ok, fences, and reads the vote of each of
 * the npeers ranks in peers[] (a rank that reads no votes publishes none). On return every
 * listed peer has reached this call, so what it did before it is done.
 * Returns 0 when every listed peer voted ok, 1 when one did not (*failed_peer, if not NULL,
 * names it), -1 on a PMI error (with a message). The caller's own vote is not counted. */
int aptus_pmi_barrier(const char *name, int ok, const int *peers, int npeers, int *failed_peer);
/* Fills node_of[i] (i < size) with the node index of rank i, from the launcher's
 * PMI_process_mapping job attribute; never from host names. Singleton: node_of[0] = 0.
 * Returns 0, or -1 if the launcher gave no usable mapping. */
int aptus_pmi_get_node_map(int *node_of, int size);
/* Tells the launcher to abort the whole job with this exit code, then exits with it. lost_peer
 * >= 0: the abort is a consequence of that rank's loss (its process or its connection went),
 * which the launcher learns (key peerlost) so that it can name that rank's own failure instead
 * when it hears of one (docs/DESIGN.md, "Launch across hosts"). Under Hydra the abort is sent in
 * the PMI-1 form (see pmi.c), which carries neither: callers print msg themselves. */
void aptus_pmi_abort(int code, const char *msg, int lost_peer);
int aptus_pmi_finalize(void);

/* One command of a spawn: maxprocs copies of cmd with argv (NULL-terminated, may be NULL) and
 * the spawn's info keys as the PMI-2 definition names them (host, hosts, hostfile, wdir, path). */
struct aptus_pmi_cmd {
    const char *cmd;
    char **argv;
    int n;
    int ninfo;
    const char *info_keys[5], *info_vals[5];
};
/* Asks the launcher (its PMI-2 spawn command: our mpiexec, Slurm's srun --mpi=pmi2, Hydra) to
 * start a new job of these commands, whose key space holds ppkey=ppval from the start. 0 once the
 * launcher says it started it (its job id in jobid, "" when it names none); -1 with the reason in
 * err (no answer within timeout_s seconds included: a late answer is dropped when it comes). */
int aptus_pmi_spawn(int ncmds, const struct aptus_pmi_cmd *cmds, const char *ppkey, const char *ppval, int timeout_s,
                    char *jobid, size_t jlen, char *err, size_t errlen);
/* Our mpiexec only: the spawn whose job is jobid (NULL: those it has not answered -- and one whose
 * answer crossed the cancel, by its job id) is given up -- the job is ended, and its end is no
 * failure of the run. 0 or -1. */
int aptus_pmi_spawn_cancel(const char *jobid);
/* Our mpiexec only (command aptus-universe): processes the universe has room for now, and the jobs
 * spawns started that still run. 0, or -1 with the reason in err. */
int aptus_pmi_universe(long *free_procs, long *live_jobs, char *err, size_t errlen);
/* Our mpiexec's name service: cmd name-publish (service, port), name-lookup (service: the port in
 * value) or name-unpublish (service, port); dir (or NULL) the directory runs share names in. 0, or
 * -1 with the reason in err. */
int aptus_pmi_name(const char *cmd, const char *service, const char *port, const char *dir, char *value, size_t vlen,
                   char *err, size_t errlen);
/* 1 when this job was started by another job's spawn command through the launcher. */
int aptus_pmi_spawned(void);

#endif
