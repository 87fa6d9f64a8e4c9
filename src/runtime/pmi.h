/* PMI-2 client: wire-up through the launcher's key-value space.
 *
 * Speaks the PMI-2 wire protocol on the file descriptor named by PMI_FD (as served by
 * our mpiexec, Slurm's `srun --mpi=pmi2` and MPICH's Hydra). Without PMI_FD the process is a
 * singleton: rank 0 of 1, and put/get/fence work on a local table. */
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
/* Publishes key=value for this rank; visible to others after the next fence. */
int aptus_pmi_put(const char *key, const char *value);
/* Collective over all ranks of the job: makes every put before it visible. */
int aptus_pmi_fence(void);
/* Reads a key published by rank src_rank (-1: any). Returns 0, or -1 if not found. */
int aptus_pmi_get(int src_rank, const char *key, char *value, size_t maxlen);
/* Fills node_of[i] (i < size) with the node index of rank i, from the launcher's
 * PMI_process_mapping job attribute; never from host names. Singleton: node_of[0] = 0.
 * Returns 0, or -1 if the launcher gave no usable mapping. */
int aptus_pmi_get_node_map(int *node_of, int size);
/* Tells the launcher to abort the whole job with this exit code, then exits. */
void aptus_pmi_abort(int code, const char *msg);
int aptus_pmi_finalize(void);

#endif
