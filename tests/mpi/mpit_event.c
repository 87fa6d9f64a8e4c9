/* The tool interface's events (MPI 4.1 section 15.3.8): registered before MPI_Init, the event
 * channel_opened is raised once for every endpoint a rank opens -- the shared-memory one to each
 * peer it sends to on the node, the self one for a send to itself -- with the peer and the
 * channel as its elements (read one by one and copied whole agree), a timestamp from the one
 * source that does not go back, and the callback of the least safety level that suffices. A
 * registration whose only callback promises too little (MPI_T_CB_REQUIRE_NONE) gets none of them:
 * its dropped handler is told how many. A freed registration is called no more; bad input gets
 * the standard's classes. With argument "threads" every rank's threads send at once
 * (MPI_THREAD_MULTIPLE: the callbacks must then be thread safe, and the level passed says so). */
#include <pthread.h>
#include <string.h>

#include "mtest.h"

#define MAXR 64
static int opened[MAXR][8]; /* [peer][channel] */
static int nopened, bad_safety, calls_none, freed;
static MPI_Count dropped, last_stamp;
static MPI_T_cb_safety want_safety;
static int smp_id = -1, self_id = -1;

static void on_open(MPI_T_event_instance ev, MPI_T_event_registration reg, MPI_T_cb_safety safety, void *data)
{
    (void)reg;
    CHECK(data == (void *)&opened, "user data %p", data);
    if (safety != want_safety)
        bad_safety++;
    int peer = -1, chan = -1, both[2] = { -1, -1 }, src = -1;
    TCHECK(MPI_T_event_read(ev, 0, &peer), MPI_SUCCESS);
    TCHECK(MPI_T_event_read(ev, 1, &chan), MPI_SUCCESS);
    TCHECK(MPI_T_event_copy(ev, both), MPI_SUCCESS);
    CHECK(both[0] == peer && both[1] == chan, "copy %d %d, read %d %d", both[0], both[1], peer, chan);
    TCHECK(MPI_T_event_read(ev, 2, &peer), MPI_T_ERR_INVALID_INDEX);
    MPI_Count stamp = 0, now = 0;
    TCHECK(MPI_T_event_get_timestamp(ev, &stamp), MPI_SUCCESS);
    TCHECK(MPI_T_event_get_source(ev, &src), MPI_SUCCESS);
    TCHECK(MPI_T_source_get_timestamp(src, &now), MPI_SUCCESS);
    CHECK(src == 0 && stamp >= last_stamp && stamp <= now, "source %d, stamp %lld after %lld, now %lld", src,
          (long long)stamp, (long long)last_stamp, (long long)now);
    last_stamp = stamp;
    CHECK(peer >= 0 && peer < MAXR && chan >= 0 && chan < 8, "elements %d %d", peer, chan);
    opened[peer][chan]++;
    nopened++;
}

static void on_open_none(MPI_T_event_instance ev, MPI_T_event_registration reg, MPI_T_cb_safety s, void *data)
{
    (void)ev, (void)reg, (void)s, (void)data;
    calls_none++;
}

static void on_dropped(MPI_Count count, MPI_T_event_registration reg, int source, MPI_T_cb_safety s, void *data)
{
    (void)reg, (void)s, (void)data;
    CHECK(source == 0 && count > 0, "dropped %lld from source %d", (long long)count, source);
    dropped += count;
}

static void on_free(MPI_T_event_registration reg, MPI_T_cb_safety s, void *data)
{
    (void)reg, (void)s;
    CHECK(data == (void *)&freed, "free data");
    freed++;
}

static int rank, size;

static void *sender(void *arg)
{
    int t = (int)(intptr_t)arg, x = t;
    for (int r = 0; r < size; r++)
        if (r != rank)
            MPI_Sendrecv_replace(&x, 1, MPI_INT, r, 100 + t, r, 100 + t, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    return NULL;
}

/* The item of the channel enumeration named `word`. */
static int channel_value(MPI_T_enum en, const char *word)
{
    int n = 0;
    TCHECK(MPI_T_enum_get_info(en, &n, NULL, NULL), MPI_SUCCESS);
    for (int k = 0; k < n; k++) {
        char name[32];
        int len = sizeof name, v;
        TCHECK(MPI_T_enum_get_item(en, k, &v, name, &len), MPI_SUCCESS);
        if (!strcmp(name, word))
            return v;
    }
    return -1;
}

int main(int argc, char **argv)
{
    int threads = argc > 1 && !strcmp(argv[1], "threads"), provided;
    TCHECK(MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided), MPI_SUCCESS);
    int ne = 0, idx = -1;
    TCHECK(MPI_T_event_get_num(&ne), MPI_SUCCESS);
    CHECK(ne >= 4, "%d events", ne);
    const char *names[] = { "channel_opened", "channel_closed", "route_moved", "peer_failed" };
    for (int k = 0; k < 4; k++) {
        TCHECK(MPI_T_event_get_index(names[k], &idx), MPI_SUCCESS);
        char name[64], desc[512];
        int nlen = sizeof name, dlen = sizeof desc, verb, nel = 4, bind;
        MPI_Datatype dts[4];
        MPI_Aint displ[4];
        MPI_T_enum en;
        MPI_Info info;
        TCHECK(MPI_T_event_get_info(idx, name, &nlen, &verb, dts, displ, &nel, &en, &info, desc, &dlen, &bind),
               MPI_SUCCESS);
        CHECK(!strcmp(name, names[k]) && nel == 2 && dts[0] == MPI_INT && dts[1] == MPI_INT && displ[1] == sizeof(int),
              "event %s: info", names[k]);
        CHECK(en != MPI_T_ENUM_NULL && bind == MPI_T_BIND_NO_OBJECT && dlen > 20, "event %s: enum, bind, desc",
              names[k]);
        if (k == 0) {
            smp_id = channel_value(en, "smp");
            self_id = channel_value(en, "self");
        }
    }
    CHECK(smp_id >= 0 && self_id >= 0 && smp_id < 8 && self_id < 8, "channel enumeration: smp %d self %d", smp_id,
          self_id);
    /* the one source: the library, ordered, nanoseconds */
    int nsrc = 0;
    TCHECK(MPI_T_source_get_num(&nsrc), MPI_SUCCESS);
    CHECK(nsrc == 1, "%d sources", nsrc);
    {
        char name[32], desc[256];
        int nlen = sizeof name, dlen = sizeof desc;
        MPI_T_source_order order;
        MPI_Count tps = 0, maxt = 0, t1 = 0, t2 = 0;
        MPI_Info info;
        TCHECK(MPI_T_source_get_info(0, name, &nlen, desc, &dlen, &order, &tps, &maxt, &info), MPI_SUCCESS);
        CHECK(order == MPI_T_SOURCE_ORDERED && tps == 1000000000 && maxt > 0 && dlen > 10, "source info");
        TCHECK(MPI_T_source_get_timestamp(0, &t1), MPI_SUCCESS);
        TCHECK(MPI_T_source_get_timestamp(0, &t2), MPI_SUCCESS);
        CHECK(t2 >= t1 && t1 > 0, "timestamps %lld %lld", (long long)t1, (long long)t2);
        TCHECK(MPI_T_source_get_info(1, NULL, NULL, NULL, NULL, &order, &tps, &maxt, &info), MPI_T_ERR_INVALID_INDEX);
        TCHECK(MPI_T_source_get_timestamp(-1, &t1), MPI_T_ERR_INVALID_INDEX);
    }
    /* every event is in a category */
    int ncat, total = 0;
    TCHECK(MPI_T_category_get_num(&ncat), MPI_SUCCESS);
    for (int c = 0; c < ncat; c++) {
        int n = 0;
        TCHECK(MPI_T_category_get_num_events(c, &n), MPI_SUCCESS);
        total += n;
    }
    CHECK(total == ne, "%d events in categories, %d in all", total, ne);

    MPI_T_event_registration reg, reg_none, reg_gone;
    TCHECK(MPI_T_event_get_index("channel_opened", &idx), MPI_SUCCESS);
    TCHECK(MPI_T_event_handle_alloc(idx, NULL, MPI_INFO_NULL, &reg), MPI_SUCCESS);
    TCHECK(MPI_T_event_register_callback(reg, MPI_T_CB_REQUIRE_THREAD_SAFE, MPI_INFO_NULL, &opened, on_open),
           MPI_SUCCESS);
    TCHECK(MPI_T_event_handle_alloc(idx, NULL, MPI_INFO_NULL, &reg_none), MPI_SUCCESS);
    TCHECK(MPI_T_event_register_callback(reg_none, MPI_T_CB_REQUIRE_NONE, MPI_INFO_NULL, NULL, on_open_none),
           MPI_SUCCESS);
    TCHECK(MPI_T_event_set_dropped_handler(reg_none, on_dropped), MPI_SUCCESS);
    TCHECK(MPI_T_event_handle_alloc(idx, NULL, MPI_INFO_NULL, &reg_gone), MPI_SUCCESS);
    TCHECK(
        MPI_T_event_register_callback(reg_gone, MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE, MPI_INFO_NULL, NULL, on_open_none),
        MPI_SUCCESS);
    TCHECK(MPI_T_event_handle_free(reg_gone, &freed, on_free), MPI_SUCCESS);
    CHECK(freed == 1, "the free callback ran %d times", freed);
    MPI_Info used;
    TCHECK(MPI_T_event_handle_get_info(reg, &used), MPI_SUCCESS);
    MPI_Info_free(&used);
    TCHECK(MPI_T_event_callback_get_info(reg, MPI_T_CB_REQUIRE_THREAD_SAFE, &used), MPI_SUCCESS);
    MPI_Info_free(&used);

    /* bad input */
    TCHECK(MPI_T_event_get_index("no_such_event", &idx), MPI_T_ERR_INVALID_NAME);
    TCHECK(MPI_T_event_handle_alloc(ne, NULL, MPI_INFO_NULL, &reg_gone), MPI_T_ERR_INVALID_INDEX);
    TCHECK(MPI_T_event_register_callback(reg_gone, MPI_T_CB_REQUIRE_NONE, MPI_INFO_NULL, NULL, on_open_none),
           MPI_T_ERR_INVALID_HANDLE);
    TCHECK(MPI_T_event_register_callback(reg, (MPI_T_cb_safety)77, MPI_INFO_NULL, NULL, on_open_none),
           MPI_T_ERR_INVALID);
    int x;
    TCHECK(MPI_T_event_read((MPI_T_event_instance)&x, 0, &x), MPI_T_ERR_INVALID_HANDLE); /* not in a callback */

    if (threads) {
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
        CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    } else {
        MPI_Init(&argc, &argv);
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size <= MAXR, "size");
    /* a raise needs what the lock makes it need: thread safety once other threads may call MPI */
    want_safety = threads ? MPI_T_CB_REQUIRE_THREAD_SAFE : MPI_T_CB_REQUIRE_MPI_RESTRICTED;
    if (threads) {
        pthread_t th[4];
        for (int t = 0; t < 4; t++)
            pthread_create(&th[t], NULL, sender, (void *)(intptr_t)t);
        for (int t = 0; t < 4; t++)
            pthread_join(th[t], NULL);
    } else {
        sender((void *)(intptr_t)0);
    }
    int me = rank;
    MPI_Sendrecv_replace(&me, 1, MPI_INT, rank, 5, rank, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);

    /* each endpoint once: smp to every other rank (one node), self to itself */
    for (int r = 0; r < size; r++) {
        int want_smp = r != rank, want_self = r == rank;
        CHECK(opened[r][smp_id] == want_smp, "channel_opened(%d, smp) seen %d times, expected %d", r, opened[r][smp_id],
              want_smp);
        CHECK(opened[r][self_id] == want_self, "channel_opened(%d, self) seen %d times, expected %d", r,
              opened[r][self_id], want_self);
    }
    CHECK(bad_safety == 0, "%d callbacks were told another safety level than %d", bad_safety, (int)want_safety);
    CHECK(calls_none == 0, "the MPI_T_CB_REQUIRE_NONE callback was called %d times", calls_none);
    CHECK(dropped == nopened, "dropped %lld for the NONE registration, %d raised", (long long)dropped, nopened);

    /* freed: called no more */
    TCHECK(MPI_T_event_handle_free(reg, NULL, NULL), MPI_SUCCESS);
    TCHECK(MPI_T_event_handle_free(reg_none, NULL, NULL), MPI_SUCCESS);
    TCHECK(MPI_T_event_handle_free(reg, NULL, NULL), MPI_T_ERR_INVALID_HANDLE);
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_free(&dup);
    MPI_Finalize();
    TCHECK(MPI_T_finalize(), MPI_SUCCESS);
    if (rank == 0)
        printf("mpit_event: OK (%d endpoints opened%s)\n", nopened, threads ? ", threads" : "");
    return 0;
}
