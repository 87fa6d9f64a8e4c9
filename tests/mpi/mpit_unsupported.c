/* The tool interface (MPI_T_*) is not implemented yet: every one of its functions must return an
 * MPI_T_ERR_* code -- MPI_T_init_thread MPI_T_ERR_NOT_SUPPORTED, the others
 * MPI_T_ERR_NOT_INITIALIZED, since the interface never is -- without invoking an error handler
 * (MPI_T functions never do: the default MPI_ERRORS_ARE_FATAL would end the job) and without
 * printing anything. Each function is called once before MPI_Init (MPI_T may be used then) and
 * once after; the codes are error classes of their own that MPI_Error_class and
 * MPI_Error_string know. */
#include <unistd.h>

#include "mtest.h"

#define MAXCALLS 128

static const char *names[MAXCALLS];
static int codes[MAXCALLS], ncalls;

#define T(call)                                                                                                        \
    do {                                                                                                               \
        if (ncalls < MAXCALLS) {                                                                                       \
            names[ncalls] = #call;                                                                                     \
            codes[ncalls++] = (call);                                                                                  \
        }                                                                                                              \
    } while (0)

static void dropped_cb(MPI_Count count, MPI_T_event_registration reg, int source, MPI_T_cb_safety s, void *data)
{
    (void)count, (void)reg, (void)source, (void)s, (void)data;
}

static void event_cb(MPI_T_event_instance ev, MPI_T_event_registration reg, MPI_T_cb_safety s, void *data)
{
    (void)ev, (void)reg, (void)s, (void)data;
}

static void free_cb(MPI_T_event_registration reg, MPI_T_cb_safety s, void *data)
{
    (void)reg, (void)s, (void)data;
}

/* Every function of the tool interface, with arguments a tool would pass. */
static void call_all(void)
{
    int provided = -1, n = 0, idx = 0, len = 64, dlen = 64, verb, bind, scope, cls, ro, cont, atomic, v, src, nel;
    int ints[8];
    char name[64], desc[64], buf[64] = { 0 };
    MPI_Datatype dt[4];
    MPI_Aint displs[4];
    MPI_T_enum en = MPI_T_ENUM_NULL;
    MPI_T_cvar_handle ch = MPI_T_CVAR_HANDLE_NULL;
    MPI_T_pvar_session ps = MPI_T_PVAR_SESSION_NULL;
    MPI_T_pvar_handle ph = MPI_T_PVAR_HANDLE_NULL;
    MPI_T_event_registration er = NULL;
    MPI_T_event_instance ei = NULL;
    MPI_T_source_order order;
    MPI_Count c1, c2;
    MPI_Info info = MPI_INFO_NULL;

    T(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    T(MPI_T_cvar_get_num(&n));
    T(MPI_T_cvar_get_info(0, name, &len, &verb, &dt[0], &en, desc, &dlen, &bind, &scope));
    T(MPI_T_cvar_get_index("aptus_send_rules", &idx));
    T(MPI_T_cvar_handle_alloc(0, NULL, &ch, &n));
    T(MPI_T_cvar_read(ch, buf));
    T(MPI_T_cvar_write(ch, buf));
    T(MPI_T_cvar_handle_free(&ch));
    T(MPI_T_enum_get_info(en, &n, name, &len));
    T(MPI_T_enum_get_item(en, 0, &v, name, &len));
    T(MPI_T_pvar_get_num(&n));
    T(MPI_T_pvar_get_info(0, name, &len, &verb, &cls, &dt[0], &en, desc, &dlen, &bind, &ro, &cont, &atomic));
    T(MPI_T_pvar_get_index("aptus_messages", MPI_T_PVAR_CLASS_COUNTER, &idx));
    T(MPI_T_pvar_session_create(&ps));
    T(MPI_T_pvar_handle_alloc(ps, 0, NULL, &ph, &n));
    T(MPI_T_pvar_start(ps, ph));
    T(MPI_T_pvar_stop(ps, ph));
    T(MPI_T_pvar_read(ps, ph, buf));
    T(MPI_T_pvar_write(ps, ph, buf));
    T(MPI_T_pvar_reset(ps, ph));
    T(MPI_T_pvar_readreset(ps, ph, buf));
    T(MPI_T_pvar_handle_free(ps, &ph));
    T(MPI_T_pvar_session_free(&ps));
    T(MPI_T_category_get_num(&n));
    T(MPI_T_category_get_info(0, name, &len, desc, &dlen, &ints[0], &ints[1], &ints[2]));
    T(MPI_T_category_get_index("aptus", &idx));
    T(MPI_T_category_get_cvars(0, 8, ints));
    T(MPI_T_category_get_pvars(0, 8, ints));
    T(MPI_T_category_get_categories(0, 8, ints));
    T(MPI_T_category_get_num_events(0, &n));
    T(MPI_T_category_get_events(0, 8, ints));
    T(MPI_T_category_changed(&n));
    T(MPI_T_source_get_num(&n));
    T(MPI_T_source_get_info(0, name, &len, desc, &dlen, &order, &c1, &c2, &info));
    T(MPI_T_source_get_timestamp(0, &c1));
    T(MPI_T_event_get_num(&n));
    T(MPI_T_event_get_info(0, name, &len, &verb, dt, displs, &nel, &en, &info, desc, &dlen, &bind));
    T(MPI_T_event_get_index("aptus_event", &idx));
    T(MPI_T_event_handle_alloc(0, NULL, MPI_INFO_NULL, &er));
    T(MPI_T_event_handle_set_info(er, MPI_INFO_NULL));
    T(MPI_T_event_handle_get_info(er, &info));
    T(MPI_T_event_register_callback(er, MPI_T_CB_REQUIRE_NONE, MPI_INFO_NULL, NULL, event_cb));
    T(MPI_T_event_callback_set_info(er, MPI_T_CB_REQUIRE_NONE, MPI_INFO_NULL));
    T(MPI_T_event_callback_get_info(er, MPI_T_CB_REQUIRE_NONE, &info));
    T(MPI_T_event_set_dropped_handler(er, dropped_cb));
    T(MPI_T_event_read(ei, 0, buf));
    T(MPI_T_event_copy(ei, buf));
    T(MPI_T_event_get_timestamp(ei, &c1));
    T(MPI_T_event_get_source(ei, &src));
    T(MPI_T_event_handle_free(er, NULL, free_cb));
    T(MPI_T_finalize());
}

/* Calls every function with stdout and stderr sent to a file, which must stay empty. */
static void call_all_quietly(const char *when)
{
    char path[] = "/tmp/mpit_unsupported_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0, "mkstemp");
    unlink(path);
    fflush(stdout);
    fflush(stderr);
    int out = dup(1), err = dup(2);
    CHECK(out >= 0 && err >= 0 && dup2(fd, 1) == 1 && dup2(fd, 2) == 2, "redirecting output");
    ncalls = 0;
    call_all();
    fflush(stdout);
    fflush(stderr);
    dup2(out, 1);
    dup2(err, 2);
    close(out);
    close(err);
    char text[512] = "";
    ssize_t got = pread(fd, text, sizeof text - 1, 0);
    close(fd);
    CHECK(got == 0, "%s: the tool interface printed: %.400s", when, got > 0 ? text : "(read failed)");
    CHECK(ncalls == 51, "%s: %d functions called, expected 51", when, ncalls);
}

/* After MPI_Init: every code recorded must be the expected one, and an error class. */
static void check_codes(const char *when)
{
    for (int i = 0; i < ncalls; i++) {
        int want = i == 0 ? MPI_T_ERR_NOT_SUPPORTED : MPI_T_ERR_NOT_INITIALIZED;
        CHECK(codes[i] == want, "%s: %s returned %d, expected %d", when, names[i], codes[i], want);
        int cls = -1, len = 0;
        char s[MPI_MAX_ERROR_STRING];
        MPI_CHECK(MPI_Error_class(codes[i], &cls));
        CHECK(cls == want, "%s: MPI_Error_class(%d) = %d", when, codes[i], cls);
        MPI_CHECK(MPI_Error_string(codes[i], s, &len));
        CHECK(len > 0, "%s: MPI_Error_string(%d) is empty", when, codes[i]);
    }
}

int main(int argc, char **argv)
{
    call_all_quietly("before MPI_Init");
    int before[MAXCALLS], nbefore = ncalls;
    memcpy(before, codes, sizeof before);
    MPI_CHECK(MPI_Init(&argc, &argv));
    /* the default handler stays MPI_ERRORS_ARE_FATAL: were one invoked, the job would end */
    memcpy(codes, before, sizeof before);
    ncalls = nbefore;
    check_codes("before MPI_Init");
    call_all_quietly("after MPI_Init");
    check_codes("after MPI_Init");
    int rank;
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Finalize());
    if (rank == 0)
        printf("mpit_unsupported: OK (%d functions)\n", ncalls);
    return 0;
}
