/* The tool interface from several threads at once (MPI_THREAD_MULTIPLE): on every rank two
 * threads exchange messages with the other ranks while two others use MPI_T -- each its own
 * session with handles of the per-peer counters (which turns them on while messages are being
 * sent), of the matching queues and of the reliability engine, started, read, reset, stopped and
 * freed in a loop, control variables read and APTUS_SPIN_COUNT written -- and the main thread
 * registered for events before MPI_Init (every smp endpoint opened is seen once). At the end every thread's exchange is
 * checked, and a last session proves the counters counted: the messages a handle started before a final, known exchange
 * saw are exactly those. Run under ThreadSanitizer by the threads label. */
#include <pthread.h>
#include <string.h>

#include "mtest.h"

enum { ROUNDS = 200, TOOL_LOOPS = 100 };

static int rank, size;
static volatile int failed;

static void *exchanger(void *arg)
{
    int t = (int)(intptr_t)arg;
    for (int i = 0; i < ROUNDS; i++)
        for (int r = 0; r < size; r++) {
            if (r == rank)
                continue;
            int out = rank * 100000 + i, in = -1;
            MPI_Sendrecv(&out, 1, MPI_INT, r, 10 + t, &in, 1, MPI_INT, r, 10 + t, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (in != r * 100000 + i)
                failed = 1;
        }
    return NULL;
}

static int index_of(const char *name, int cls)
{
    int i = -1;
    CHECK(MPI_T_pvar_get_index(name, cls, &i) == MPI_SUCCESS, "%s", name);
    return i;
}

static void *tool(void *arg)
{
    (void)arg;
    const char *names[] = { "peer.msgs.smp", "comm.bytes.smp", "pt2pt.unexpected", "ud.retx_timeout", "memory.smp" };
    const int cls[] = { MPI_T_PVAR_CLASS_COUNTER, MPI_T_PVAR_CLASS_COUNTER, MPI_T_PVAR_CLASS_LEVEL,
                        MPI_T_PVAR_CLASS_COUNTER, MPI_T_PVAR_CLASS_SIZE };
    int spin = -1;
    CHECK(MPI_T_cvar_get_index("APTUS_SPIN_COUNT", &spin) == MPI_SUCCESS, "APTUS_SPIN_COUNT");
    for (int loop = 0; loop < TOOL_LOOPS; loop++) {
        MPI_T_pvar_session s;
        CHECK(MPI_T_pvar_session_create(&s) == MPI_SUCCESS, "session");
        MPI_T_pvar_handle h[5];
        MPI_Comm world = MPI_COMM_WORLD;
        for (int k = 0; k < 5; k++) {
            int count;
            CHECK(MPI_T_pvar_handle_alloc(s, index_of(names[k], cls[k]), k == 1 ? (void *)&world : NULL, &h[k],
                                          &count) == MPI_SUCCESS,
                  "alloc %s", names[k]);
        }
        CHECK(MPI_T_pvar_start(s, MPI_T_PVAR_ALL_HANDLES) == MPI_SUCCESS, "start");
        unsigned long long v[64];
        for (int k = 0; k < 5; k++)
            CHECK(MPI_T_pvar_read(s, h[k], v) == MPI_SUCCESS, "read %s", names[k]);
        CHECK(MPI_T_pvar_reset(s, h[0]) == MPI_SUCCESS, "reset");
        CHECK(MPI_T_pvar_readreset(s, h[1], v) == MPI_SUCCESS, "readreset");
        CHECK(MPI_T_pvar_stop(s, MPI_T_PVAR_ALL_HANDLES) == MPI_SUCCESS, "stop");
        CHECK(MPI_T_pvar_handle_free(s, &h[3]) == MPI_SUCCESS, "free");
        CHECK(MPI_T_pvar_session_free(&s) == MPI_SUCCESS, "session free");
        MPI_T_cvar_handle c;
        int count, value = 0;
        CHECK(MPI_T_cvar_handle_alloc(spin, NULL, &c, &count) == MPI_SUCCESS, "cvar alloc");
        CHECK(MPI_T_cvar_read(c, &value) == MPI_SUCCESS, "cvar read");
        value = 1000 + loop % 7;
        CHECK(MPI_T_cvar_write(c, &value) == MPI_SUCCESS, "cvar write");
        CHECK(MPI_T_cvar_handle_free(&c) == MPI_SUCCESS, "cvar free");
    }
    return NULL;
}

static void on_event(MPI_T_event_instance ev, MPI_T_event_registration reg, MPI_T_cb_safety s, void *data)
{
    (void)reg, (void)s;
    int e[2];
    if (MPI_T_event_copy(ev, e) == MPI_SUCCESS)
        __atomic_fetch_add((int *)data, 1, __ATOMIC_RELAXED);
}

int main(int argc, char **argv)
{
    int provided, nev = 0;
    MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided);
    int idx;
    MPI_T_event_registration reg;
    CHECK(MPI_T_event_get_index("channel_opened", &idx) == MPI_SUCCESS, "event index");
    CHECK(MPI_T_event_handle_alloc(idx, NULL, MPI_INFO_NULL, &reg) == MPI_SUCCESS, "event alloc");
    CHECK(MPI_T_event_register_callback(reg, MPI_T_CB_REQUIRE_THREAD_SAFE, MPI_INFO_NULL, &nev, on_event) ==
              MPI_SUCCESS,
          "register");
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size <= 64, "size");

    pthread_t th[4];
    for (int t = 0; t < 2; t++)
        pthread_create(&th[t], NULL, exchanger, (void *)(intptr_t)t);
    for (int t = 2; t < 4; t++)
        pthread_create(&th[t], NULL, tool, NULL);
    for (int t = 0; t < 4; t++)
        pthread_join(th[t], NULL);
    CHECK(!failed, "an exchange received the wrong value");
    CHECK(nev == size - 1, "channel_opened seen %d times, expected %d (one smp endpoint per peer)", nev, size - 1);

    /* the counters counted: exactly the messages of a known exchange */
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_T_pvar_session s;
    MPI_T_pvar_handle h;
    int count;
    MPI_T_pvar_session_create(&s);
    MPI_T_pvar_handle_alloc(s, index_of("peer.msgs.smp", MPI_T_PVAR_CLASS_COUNTER), NULL, &h, &count);
    CHECK(count == size, "count %d", count);
    MPI_T_pvar_start(s, h);
    exchanger((void *)(intptr_t)7);
    MPI_T_pvar_stop(s, h);
    unsigned long long v[64] = { 0 };
    MPI_T_pvar_read(s, h, v);
    for (int r = 0; r < size; r++)
        CHECK(v[r] == (r == rank ? 0u : (unsigned)ROUNDS), "peer.msgs.smp[%d] = %llu, expected %d", r, v[r],
              r == rank ? 0 : ROUNDS);
    MPI_T_pvar_session_free(&s);
    MPI_T_event_handle_free(reg, NULL, NULL);
    MPI_T_finalize();
    MPI_Finalize();
    if (rank == 0)
        printf("mpit_threads: OK\n");
    return 0;
}
