/* Start-up and shut-down: the one place that wires every layer together (runtime, channels,
 * message layer, objects, collectives). Everything below reaches the others only through
 * registrations (progress engine pollers, frame handlers, clean-up hooks). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api/api.h"
#include "api/stats_file.h"
#include "channel/channel.h"
#include "channel/fault/fault.h"
#include "channel/rules.h"
#ifdef APTUS_HAVE_LIBFABRIC
#include "fabric/fabric.h"
#endif
#include "coll/coll.h"
#include "coll/nbc.h"
#include "comm/create.h"
#include "core/datatype.h"
#include "pt2pt/pt2pt.h"
#include "rma/rma.h"
#include "runtime/config.h"
#include "runtime/lock.h"
#include "runtime/progress.h"
#include "runtime/runtime.h"

/* APTUS_STATS as read: whether the statistics lines are printed (APTUS_STATS_FILE turns the
 * statistics on -- aptus_config.stats, which the channels read -- without them). */
static int stats_lines;

static int check_rule_channels(void)
{
    /* The default chain names every channel the project has; one that this build lacks (the
     * network channels without libfabric) is skipped there, and named only when asked for. */
    int is_default = aptus_rules_auto & 1;
    for (int i = 0; i < aptus_rules.n; i++) {
        int ch = aptus_rules.rule[i].channel;
        if (!aptus_channels[ch] && !is_default) {
            fprintf(stderr,
                    "Aptus MPI: APTUS_SEND_RULES: rule %d uses channel '%s', which is not available in this build "
                    "(available: %s)\n",
                    i + 1, aptus_channel_name(ch), aptus_channels_available());
            return -1;
        }
    }
    return 0;
}

#define APTUS_OVERSUB_SPIN_MAX 0

/* Whether waiting ranks block (APTUS_WAIT_BLOCK): auto blocks when this node has more ranks
 * than the machine has cores, where spinning only takes the core from the rank that would
 * send what we wait for. */
static void wait_mode(void)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int oversubscribed = cores > 0 && aptus_rt.local_size > cores;
    /* Measured (docs/BENCHMARKS.md): 4 ranks on 2 cores run a ring + allreduce + barrier loop
     * 3-10x faster with a spin of at most 50 polls than with 2000, and faster again (as do the
     * OSU collectives) yielding at the first idle poll. */
    aptus_wait_spin_cap = oversubscribed ? APTUS_OVERSUB_SPIN_MAX : -1;
    const char *w = aptus_config.wait_block; /* a word of its range: auto, 0, 1, no, yes */
    if (!strcmp(w, "auto"))
        aptus_wait_blocks = oversubscribed;
    else
        aptus_wait_blocks = !strcmp(w, "1") || !strcmp(w, "yes");
    /* The progress thread sleeps on the wait objects between its passes: the peers must ring
     * the doorbell (smp) and the network channels' queues need their descriptors. (Application
     * threads do not sleep while locking is on: progress.c.) */
    if (aptus_config.async_progress)
        aptus_wait_blocks = 1;
}

static void stats_print(void)
{
    aptus_channel_stats_print();
    aptus_fault_stats_print();
    uint64_t one_sided, copied;
    aptus_pt2pt_rndv_counts(&one_sided, &copied);
    printf("[aptus stats] rank %d: rendezvous receives: one-sided %llu, copy %llu (%s)\n", aptus_rt.rank,
           (unsigned long long)one_sided, (unsigned long long)copied,
           one_sided && copied ? "mixed"
           : one_sided         ? "one-sided only"
           : copied            ? "copy only"
                               : "none");
    aptus_pt2pt_proto_stats_print();
    const struct aptus_cancel_stats *cs = aptus_pt2pt_cancel_stats();
    if (cs->asked || cs->dropped)
        printf("[aptus stats] rank %d: send cancellation: asked %llu, cancelled %llu, matched %llu, asked again %llu "
               "(not arrived yet); messages dropped for a sender %llu\n",
               aptus_rt.rank, (unsigned long long)cs->asked, (unsigned long long)cs->cancelled,
               (unsigned long long)cs->matched, (unsigned long long)cs->again, (unsigned long long)cs->dropped);
    if (aptus_config.async_progress)
        printf("[aptus stats] rank %d: progress thread (%s core): woken by the application leaving MPI %llu times; "
               "rendezvous reads put off by nonblocking starts %llu\n",
               aptus_rt.rank, aptus_progress_thread_own_core() ? "own" : "shared",
               (unsigned long long)__atomic_load_n(&aptus_lock_wakeups, __ATOMIC_RELAXED),
               (unsigned long long)aptus_pt2pt_rndv_deferred());
    if (aptus_wait_spin_cap >= 0)
        printf("[aptus stats] rank %d: oversubscribed node: polling calls that gave the core away %llu\n",
               aptus_rt.rank, (unsigned long long)aptus_poll_idle_given());
    aptus_coll_stats_print(aptus_rt.rank);
    aptus_rma_stats_print(aptus_rt.rank);
    fflush(stdout);
}

/* The settings, before anything starts: every variable against its range (config_vars.def),
 * then the grammars of the strings -- the send rules and what each channel of the build reads
 * (allocation rules, injected faults, UD impairment) --, whether or not the job will use that
 * channel: a typo is found in any run. 0, or -1 with a message in err. */
static int check_settings(char *err, size_t errlen)
{
    if (aptus_config_init(err, errlen) != 0 || aptus_stats_file_check(aptus_config.stats_file, err, errlen) != 0)
        return -1;
    stats_lines = aptus_config.stats;
    if (aptus_config.stats_file[0])
        aptus_config.stats = 1;
    /* (auto: the chain for RDMA hardware until the job's fabric is known, fabric_chains) */
    aptus_rules_auto = aptus_rules_is_auto(aptus_config.send_rules) | aptus_rules_is_auto(aptus_config.alloc_rules)
                                                                          << 1;
    aptus_config.send_rules = aptus_rules_text(aptus_config.send_rules, 1);
    if (aptus_rules_parse(aptus_config.send_rules, &aptus_rules, err, errlen) != 0 ||
        aptus_rules_check_start(&aptus_rules, aptus_config.send_rules, err, errlen) != 0)
        return -1;
    aptus_config.alloc_rules = aptus_alloc_rules_text(aptus_config.alloc_rules, &aptus_rules);
    return aptus_channels_check(err, errlen);
}

/* The built-in chains (APTUS_SEND_RULES / APTUS_ALLOC_RULES left at auto) of a job that spans
 * nodes over a sockets provider (channel/rules.h): every rank of the job finds the same provider,
 * so all take the same chain. A job on one node keeps the RDMA chain (smp carries everything)
 * and does not load the fabric for it. */
static void fabric_chains(void)
{
    if (aptus_rt.local_size < aptus_rt.size) /* (ranks on other nodes) */
        aptus_rules_fit_fabric();
}

/* A setting was refused at start-up: the job cannot run. Every rank finds the same fault as a
 * rule, and one line says it (aptus_startup_error: rank 0 at once, the others only if the
 * launcher has not ended them within a few seconds). Returns the error for MPI_Init /
 * MPI_Session_init. */
static int refuse_settings(const char *msg)
{
    if (aptus_pmi_init(&aptus_rt.pmi) == 0) {
        aptus_rt.rank = aptus_rt.pmi.rank;
        aptus_rt.size = aptus_rt.pmi.size;
    } else {
        aptus_rt.pmi.singleton = 1; /* no launcher to wait for */
    }
    aptus_startup_error("%s", msg);
    return MPI_ERR_OTHER;
}

/* The thread level provided for `required`: what was asked (docs/DESIGN.md, "Threads"); a
 * value that names no level gets MPI_THREAD_SINGLE. MPI_THREAD_MULTIPLE makes the library's lock
 * lazy (runtime/lock.h): it turns on, for the rest of the process's life, when a second thread
 * enters MPI. */
static int level_provided(int required)
{
    int level = required;
    if (level != MPI_THREAD_SINGLE && level != MPI_THREAD_FUNNELED && level != MPI_THREAD_SERIALIZED &&
        level != MPI_THREAD_MULTIPLE)
        level = MPI_THREAD_SINGLE;
    if (level == MPI_THREAD_MULTIPLE)
        aptus_lock_enable_lazy();
    return level;
}

/* At the process's exit: a runtime that its last session left up is torn down (the collective
 * shut-down MPI_Finalize would do: every process of the job reaches it once, at its exit or in
 * MPI_Finalize). Only on a successful exit: a process that fails (exit status not 0) leaves as
 * one that fails before MPI_Finalize does -- the launcher ends the job --, rather than wait in a
 * collective for peers that may wait for it. Not in a child forked from this process, nor while
 * a user is still open (a program that ends without finalizing what it opened gets what it got
 * before: no shut-down). */
static void runtime_at_exit(int status, void *arg)
{
    (void)arg;
    APTUS_API_LOCK();
    if (getpid() == aptus_rt.pid && aptus_rt.initialized && !aptus_rt.finalized)
        aptus_smp_jobs_exit(); /* (what it wrote to other jobs' processes is read) */
    if (getpid() == aptus_rt.pid)
        aptus_dpm_finalize(); /* (the names it published go, whatever the exit) */
    if (status != 0 || getpid() != aptus_rt.pid || !aptus_rt.initialized || aptus_rt.finalized || aptus_rt.users > 0)
        return;
    aptus_runtime_finalize();
}

int aptus_runtime_init(int required, int *provided)
{
    char err[640];
    static int exit_hook;
    if (!exit_hook && on_exit(runtime_at_exit, NULL) == 0)
        exit_hook = 1;
    aptus_rt.pid = getpid();
    if (check_settings(err, sizeof err) != 0)
        return refuse_settings(err);
    if (aptus_pmi_init(&aptus_rt.pmi) != 0)
        return MPI_ERR_OTHER;
    aptus_rt.rank = aptus_rt.pmi.rank;
    aptus_rt.size = aptus_rt.pmi.size;
    /* a job MPI_Comm_spawn_multiple started: this rank's command (mpiexec --app-exec says) */
    const char *appnum = getenv("APTUS_APPNUM");
    if (appnum && *appnum)
        aptus_rt.pmi.appnum = atoi(appnum);
    unsetenv("APTUS_APPNUM"); /* (not for the jobs this one starts) */
    aptus_rt.nprocs = aptus_rt.size;
    aptus_rt.procs_cap =
        aptus_config.dpm_procs < INT_MAX - aptus_rt.size ? aptus_rt.size + aptus_config.dpm_procs : INT_MAX;
    aptus_rt.node_of = calloc((size_t)aptus_rt.procs_cap, sizeof(int));
    aptus_rt.peers = calloc((size_t)aptus_rt.procs_cap, sizeof(struct aptus_peer *));
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
    wait_mode();
    fabric_chains();
    aptus_pt2pt_init();
    aptus_rma_init();
    aptus_datatype_init();
    if (aptus_channels_init() != 0 || check_rule_channels() != 0)
        return MPI_ERR_OTHER;
    aptus_rndv_cust_setup();
    aptus_comm_init();
    aptus_rt.t0 = aptus_wtime();
    aptus_rt.thread_level = level_provided(required);
    if (provided)
        *provided = aptus_rt.thread_level;
    aptus_rt.main_thread = pthread_self();
    aptus_rt.initialized = 1;
    if (aptus_config.async_progress && aptus_progress_thread_start(err, sizeof err) != 0) {
        fprintf(stderr, "Aptus MPI: %s\n", err);
        return MPI_ERR_OTHER;
    }
    return MPI_SUCCESS;
}

int aptus_runtime_finalize(void)
{
    /* The barrier's frames queue behind anything still pending, so once it completes every
     * frame this rank sent has been handed over. */
    aptus_progress_thread_stop();
    aptus_rma_finalize();
    int rc = aptus_barrier(&aptus_comm_world_obj);
    /* Operations whose requests were freed while active (a persistent collective, ...) complete
     * before the tear-down: every rank is here, progressing; one that cannot complete (a
     * nonblocking collective some rank never started) is given up after a few seconds. */
    double give_up = aptus_wtime() + 10.0;
    for (unsigned idle = 0; aptus_bg_count() > 0 && aptus_wtime() < give_up;)
        aptus_wait_step(&idle);
    aptus_fault_drain(); /* frames held by APTUS_CHANNEL_FAULTS count as handed over: send them */
    /* The statistics as the job left them, before the channels settle (a peer that has settled
     * closes its connections: a snapshot taken later would see them closing) */
    if (stats_lines)
        stats_print();
    if (aptus_config.stats_file[0]) /* (a failure is reported; the job's outcome stays as it is) */
        aptus_stats_file_write();
    aptus_channels_quiesce(); /* acknowledgements still owed or awaited (UD), frames delivered (RC) */
    aptus_dpm_finalize();
    aptus_pmi_finalize();
    aptus_nbc_cache_drain();
    aptus_comm_finalize();
    aptus_pt2pt_peers_release();
    aptus_peers_finalize();
    aptus_procs_finalize();
    aptus_channels_finalize();
    aptus_nbc_pool_drain();
    aptus_pt2pt_finalize();
    aptus_progress_reset();
    aptus_datatype_finalize();
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
        fprintf(stderr, "Aptus MPI: the runtime was shut down (by MPI_Finalize, or the last MPI_Session_finalize "
                        "after it) and cannot be started again\n");
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
    /* The last session of a process whose world model has not ended: the runtime stays up for
     * the next session (MPI allows as many as a process likes) or MPI_Init; runtime_at_exit
     * tears it down. */
    if (!aptus_rt.world_finalized)
        return MPI_SUCCESS;
    return aptus_runtime_finalize();
}
