/* MPI_Init / MPI_Finalize: wire-up, channel set-up and tear-down. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "channel/channel.h"
#include "coll/coll.h"
#include "core/comm.h"
#include "core/datatype.h"
#include "pt2pt/pt2pt.h"
#include "runtime/config.h"
#include "runtime/runtime.h"

struct aptus_runtime aptus_rt;

double aptus_wtime(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void aptus_runtime_emergency_cleanup(void)
{
    aptus_smp_cleanup_files();
}

static int check_rule_channels(void)
{
    for (int i = 0; i < aptus_rt.rules.n; i++) {
        int ch = aptus_rt.rules.rule[i].channel;
        if (!aptus_channels[ch]) {
            fprintf(stderr,
                    "Aptus MPI: APTUS_SEND_RULES: rule %d uses channel '%s', which is not available in this build "
                    "(available: self, smp)\n",
                    i + 1, aptus_channel_name(ch));
            return -1;
        }
    }
    return 0;
}

/* The thread level provided for `required`: at most MPI_THREAD_SERIALIZED (docs/DESIGN.md,
 * "Threads"); a value that names no level gets MPI_THREAD_SINGLE. */
static int level_provided(int required)
{
    int level = required < MPI_THREAD_SERIALIZED ? required : MPI_THREAD_SERIALIZED;
    if (level != MPI_THREAD_SINGLE && level != MPI_THREAD_FUNNELED && level != MPI_THREAD_SERIALIZED)
        level = MPI_THREAD_SINGLE;
    return level;
}

int aptus_runtime_init(int required, int *provided)
{
    char err[512];
    aptus_rt.pid = getpid();
    if (aptus_config_init(err, sizeof err) != 0) {
        fprintf(stderr, "Aptus MPI: %s\n", err);
        return MPI_ERR_OTHER;
    }
    if (aptus_rules_parse(aptus_config.send_rules, &aptus_rt.rules, err, sizeof err) != 0) {
        fprintf(stderr, "Aptus MPI: %s\n", err);
        return MPI_ERR_OTHER;
    }
    aptus_channels[APTUS_CH_SELF] = &aptus_channel_self;
    aptus_channels[APTUS_CH_SMP] = &aptus_channel_smp;
    if (check_rule_channels() != 0)
        return MPI_ERR_OTHER;
    if (aptus_pmi_init(&aptus_rt.pmi) != 0)
        return MPI_ERR_OTHER;
    aptus_rt.rank = aptus_rt.pmi.rank;
    aptus_rt.size = aptus_rt.pmi.size;
    aptus_rt.node_of = calloc((size_t)aptus_rt.size, sizeof(int));
    aptus_rt.peers = calloc((size_t)aptus_rt.size, sizeof(struct aptus_peer *));
    if (!aptus_rt.node_of || !aptus_rt.peers)
        return MPI_ERR_NO_MEM;
    if (aptus_pmi_get_node_map(aptus_rt.node_of, aptus_rt.size) != 0) {
        fprintf(stderr, "Aptus MPI: the launcher gave no process-to-node mapping (PMI_process_mapping)\n");
        return MPI_ERR_OTHER;
    }
    aptus_rt.node = aptus_rt.node_of[aptus_rt.rank];
    for (int r = 0; r < aptus_rt.size; r++) {
        if (aptus_rt.node_of[r] != aptus_rt.node)
            continue;
        if (r == aptus_rt.rank)
            aptus_rt.local_rank = aptus_rt.local_size;
        aptus_rt.local_size++;
    }
    aptus_pt2pt_init();
    aptus_datatype_init();
    if (aptus_smp_init() != 0)
        return MPI_ERR_OTHER;
    aptus_comm_init();
    aptus_rt.t0 = aptus_wtime();
    aptus_rt.thread_level = level_provided(required);
    if (provided)
        *provided = aptus_rt.thread_level;
    aptus_rt.initialized = 1;
    return MPI_SUCCESS;
}

int aptus_runtime_finalize(void)
{
    /* The barrier's frames queue behind anything still pending, so once it completes every
     * frame this rank sent has been handed over. */
    int rc = aptus_barrier(&aptus_comm_world_obj);
    if (aptus_config.stats)
        aptus_stats_print();
    aptus_smp_finalize();
    aptus_pmi_finalize();
    aptus_comm_finalize();
    aptus_pt2pt_finalize();
    aptus_datatype_finalize();
    for (int r = 0; r < aptus_rt.size; r++)
        free(aptus_rt.peers[r]);
    free(aptus_rt.peers);
    free(aptus_rt.node_of);
    aptus_rt.peers = NULL;
    aptus_rt.node_of = NULL;
    aptus_rt.finalized = 1;
    return rc;
}

int aptus_runtime_acquire(int required, int *provided)
{
    if (aptus_rt.finalized) {
        fprintf(stderr, "Aptus MPI: the runtime was shut down (by the last MPI_Finalize or MPI_Session_finalize) "
                        "and cannot be started again\n");
        return MPI_ERR_OTHER;
    }
    if (!aptus_rt.initialized) {
        int rc = aptus_runtime_init(required, provided);
        if (rc)
            return rc;
    } else if (provided) {
        *provided = level_provided(required);
    }
    aptus_rt.users++;
    return MPI_SUCCESS;
}

int aptus_runtime_release(void)
{
    if (--aptus_rt.users > 0)
        return MPI_SUCCESS;
    return aptus_runtime_finalize();
}
