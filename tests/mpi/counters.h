/* Helpers of the tests that read the library's counters (MPIX_Aptus_counter, mpix_aptus.h): a
 * counter that must exist, a check that counts a failure and says why, progress without
 * messages until a condition holds, a checked exchange of small messages. A test defines TEST_NAME (its name in
 * messages) first and sets `rank`. */
#ifndef APTUS_TESTS_MPI_COUNTERS_H
#define APTUS_TESTS_MPI_COUNTERS_H

#include <mpi.h>
#include <mpix_aptus.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures, rank;

static inline unsigned long long counter(const char *name)
{
    unsigned long long v = 0;
    if (MPIX_Aptus_counter(name, &v) != MPI_SUCCESS) {
        fprintf(stderr, "%s: no counter %s (is its channel in the chain?)\n", TEST_NAME, name);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return v;
}

#define EXPECT(cond, ...)                                                                                              \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            fprintf(stderr, "%s: rank %d: ", TEST_NAME, rank);                                                         \
            fprintf(stderr, __VA_ARGS__);                                                                              \
            fputc('\n', stderr);                                                                                       \
            failures++;                                                                                                \
        }                                                                                                              \
    } while (0)

/* Progress only (no message to anyone) until pred() or `limit` seconds; pred()'s last answer. */
static inline int progress_until(int (*pred)(void), double limit)
{
    double t0 = MPI_Wtime();
    int flag;
    while (!pred() && MPI_Wtime() - t0 < limit)
        MPI_Iprobe(MPI_ANY_SOURCE, 12345, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    return pred();
}

/* n small messages each way with peer (a Sendrecv each, tag 5), every one checked. */
static inline void exchange(int peer, int n, int base)
{
    for (int i = 0; i < n; i++) {
        int x[3] = { rank, base + i, rank * 31 + i }, y[3] = { -1, -1, -1 };
        MPI_Sendrecv(x, 3, MPI_INT, peer, 5, y, 3, MPI_INT, peer, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (y[0] != peer || y[1] != base + i || y[2] != peer * 31 + i)
            failures++;
    }
}

/* Dynamic processes (tests/mpi/dpm_*.c): with DPM_JOBS_SMP=1 in the environment, that this
 * process's traffic with every process of another job (remote of them, each of which sent to
 * this one and was sent to) went through shared memory -- a block each way with each, frames read
 * from them -- and that the UD channel never started (jobs on one node: the cards went without
 * network addresses); with DPM_JOBS_SMP=0, that nothing went through shared memory. Nothing
 * without the variable. */
static inline void jobs_smp_check(int remote)
{
    const char *want = getenv("DPM_JOBS_SMP");
    if (!want)
        return;
    unsigned long long out = counter("smp.jobs_blocks_out"), in = counter("smp.jobs_blocks_in"),
                       frames = counter("smp.jobs_frames_in");
    if (atoi(want)) {
        EXPECT(out >= (unsigned)remote && in >= (unsigned)remote && frames >= (unsigned)remote,
               "shared-memory blocks with the other job's %d processes: %llu posted, %llu taken, %llu frames read",
               remote, out, in, frames);
        unsigned long long ud = 0; /* (no such counter: a build without the UD channel) */
        if (MPIX_Aptus_counter("memory.ud-sr", &ud) == MPI_SUCCESS)
            EXPECT(ud == 0, "the UD channel started (%llu bytes) though the other job shares this node", ud);
    } else {
        EXPECT(out == 0 && in == 0 && frames == 0,
               "shared memory with other jobs is off, yet %llu blocks posted, %llu taken, %llu frames read", out, in,
               frames);
    }
}

/* Dynamic processes across hosts: with DPM_JOBS_RC=1 in the environment, that this process has
 * (within 10 s) an RC connection up with each of the other job's `remote` processes (none of its own job's: the
 * job is on one node, its RC channel started for the other job) and frames went both ways over
 * them; with DPM_JOBS_RC=2, also that it has a fast path (rc-fp) to each of them and a block of
 * each of them, frames read from those. Nothing without the variable. */
static int jobs_rc_want;
static int jobs_rc_up(void)
{
    return counter("rc.connections") >= (unsigned)jobs_rc_want;
}
static inline void jobs_rc_check(int remote)
{
    const char *want = getenv("DPM_JOBS_RC");
    if (!want || !atoi(want))
        return;
    jobs_rc_want = remote; /* (a connection asked for by the last messages may still be on its way) */
    progress_until(jobs_rc_up, 10);
    unsigned long long up = counter("rc.connections"), opened = counter("rc.opened"), out = counter("rc.frames_out"),
                       in = counter("rc.frames_in");
    EXPECT(up == (unsigned)remote && opened == (unsigned)remote && out > 0 && in > 0,
           "RC connections with the other job's %d processes: %llu up, %llu opened; frames %llu out, %llu in", remote,
           up, opened, out, in);
    if (atoi(want) == 2) { /* (and a fast path each way with each of them) */
        unsigned long long paths = counter("rcfp.paths"), blocks = counter("rcfp.blocks"),
                           got = counter("rcfp.received");
        EXPECT(paths == (unsigned)remote && blocks == (unsigned)remote && got > 0,
               "RC fast paths with the other job's %d processes: %llu to them, %llu blocks of theirs, %llu frames read",
               remote, paths, blocks, got);
    }
}

/* A checkable pattern: n ints for message k of round `round`. */
static inline void pattern_fill(int *b, int n, int round, int k)
{
    for (int i = 0; i < n; i++)
        b[i] = round * 131 + k * 17 + i * 7;
}
static inline int pattern_intact(const int *b, int n, int round, int k)
{
    for (int i = 0; i < n; i++)
        if (b[i] != round * 131 + k * 17 + i * 7)
            return 0;
    return 1;
}

/* The tool interface's events seen by this rank (events_watch, before MPI_Init, registers for
 * them all): ev_seen[kind][peer][second element] -- the channel (channel_value) or the level a
 * route moved to. Callbacks run under the library's lock: plain counts suffice. */
enum { EV_OPENED, EV_CLOSED, EV_MOVED, EV_FAILED, EV_KINDS, EV_PEERS = 16 };
static const char *const ev_names[EV_KINDS] = { "channel_opened", "channel_closed", "route_moved", "peer_failed" };
static int ev_seen[EV_KINDS][EV_PEERS][8];
/* events_watch(1): each event is also printed on stderr, "TEST_NAME: rank R: event
 * peer_failed(PEER, CHANNEL)" (the channel by name, a route's level by number). */
static int ev_verbose;
static char ev_channel[8][16];

static void ev_callback(MPI_T_event_instance ev, MPI_T_event_registration reg, MPI_T_cb_safety s, void *data)
{
    (void)reg, (void)s;
    int e[2], kind = (int)(intptr_t)data;
    if (MPI_T_event_copy(ev, e) != MPI_SUCCESS)
        return;
    if (ev_verbose) {
        char second[16];
        if (kind != EV_MOVED && e[1] >= 0 && e[1] < 8 && ev_channel[e[1]][0])
            snprintf(second, sizeof second, "%s", ev_channel[e[1]]);
        else
            snprintf(second, sizeof second, "%d", e[1]);
        fprintf(stderr, "%s: rank %d: event %s(%d, %s)\n", TEST_NAME, rank, ev_names[kind], e[0], second);
    }
    if (e[0] >= 0 && e[0] < EV_PEERS && e[1] >= 0 && e[1] < 8)
        ev_seen[kind][e[0]][e[1]]++;
}

static inline void events_watch(int verbose)
{
    int provided, idx, n = 0;
    MPI_T_event_registration reg;
    MPI_T_enum en;
    ev_verbose = verbose;
    MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided);
    if (MPI_T_event_get_index("channel_opened", &idx) == MPI_SUCCESS &&
        MPI_T_event_get_info(idx, NULL, NULL, NULL, NULL, NULL, &n, &en, NULL, NULL, NULL, NULL) == MPI_SUCCESS &&
        MPI_T_enum_get_info(en, &n, NULL, NULL) == MPI_SUCCESS)
        for (int k = 0; k < n; k++) {
            char item[16];
            int len = sizeof item, v;
            if (MPI_T_enum_get_item(en, k, &v, item, &len) == MPI_SUCCESS && v >= 0 && v < 8)
                snprintf(ev_channel[v], sizeof ev_channel[v], "%s", item);
        }
    for (int k = 0; k < EV_KINDS; k++)
        if (MPI_T_event_get_index(ev_names[k], &idx) != MPI_SUCCESS ||
            MPI_T_event_handle_alloc(idx, NULL, MPI_INFO_NULL, &reg) != MPI_SUCCESS ||
            MPI_T_event_register_callback(reg, MPI_T_CB_REQUIRE_THREAD_SAFE, MPI_INFO_NULL, (void *)(intptr_t)k,
                                          ev_callback) != MPI_SUCCESS) {
            fprintf(stderr, "%s: cannot register for the event %s\n", TEST_NAME, ev_names[k]);
            exit(2);
        }
}

/* The value of channel `name` in the events' channel enumeration (-1: none; after events_watch). */
static inline int channel_value(const char *name)
{
    for (int v = 0; v < 8; v++)
        if (!strcmp(ev_channel[v], name))
            return v;
    return -1;
}

/* Every rank's failures summed; "TEST_NAME: ok" from rank 0 when none; MPI_Finalize. The exit
 * status. */
static inline int finish_test(void)
{
    int bad = 0;
    MPI_Allreduce(&failures, &bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && bad == 0)
        printf("%s: ok\n", TEST_NAME);
    MPI_Finalize();
    return bad ? 1 : 0;
}

#endif
