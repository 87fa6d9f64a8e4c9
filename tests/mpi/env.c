/* Environment: Initialized/Finalized before and after, Init_thread with the
 * level named by argv[1] (single|funneled|serialized|multiple, default
 * funneled), Query_thread, Is_thread_main, Comm_rank/size consistency,
 * Get_processor_name, Get_version (== MPI_VERSION.MPI_SUBVERSION, and equal
 * to $MTEST_EXPECT_MPI_VERSION such as "5.0" when that is set),
 * Get_library_version, Wtime monotonic, Wtick > 0, predefined attributes. */
#include "mtest.h"
#include <time.h>

static int level_from_name(const char *s)
{
    if (!strcmp(s, "single"))
        return MPI_THREAD_SINGLE;
    if (!strcmp(s, "funneled"))
        return MPI_THREAD_FUNNELED;
    if (!strcmp(s, "serialized"))
        return MPI_THREAD_SERIALIZED;
    if (!strcmp(s, "multiple"))
        return MPI_THREAD_MULTIPLE;
    fprintf(stderr, "FAIL %s:%d: unknown thread level %s\n", __FILE__, __LINE__, s);
    exit(1);
}

static int level_index(int l)
{
    if (l == MPI_THREAD_SINGLE)
        return 0;
    if (l == MPI_THREAD_FUNNELED)
        return 1;
    if (l == MPI_THREAD_SERIALIZED)
        return 2;
    if (l == MPI_THREAD_MULTIPLE)
        return 3;
    return -1;
}

/* Before MPI_Init only a few calls are allowed; failures are reported
 * without MPI_Abort. */
#define PRECHECK(cond, ...)                                                                                            \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                                       \
            fprintf(stderr, __VA_ARGS__);                                                                              \
            fprintf(stderr, "\n");                                                                                     \
            exit(1);                                                                                                   \
        }                                                                                                              \
    } while (0)

static void check_version(int v, int sv, const char *when)
{
    PRECHECK(v == MPI_VERSION && sv == MPI_SUBVERSION, "%s: Get_version %d.%d, header says %d.%d", when, v, sv,
             MPI_VERSION, MPI_SUBVERSION);
    const char *want = getenv("MTEST_EXPECT_MPI_VERSION");
    if (want && *want) {
        char got[32];
        snprintf(got, sizeof got, "%d.%d", v, sv);
        PRECHECK(!strcmp(got, want), "%s: Get_version %s, expected %s", when, got, want);
    }
}

int main(int argc, char **argv)
{
    int flag = -1, rank, size, required, provided = -1;
    int v = -1, sv = -1, len = -1;
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];

    /* before init */
    PRECHECK(MPI_Initialized(&flag) == MPI_SUCCESS && flag == 0, "MPI_Initialized before init: %d", flag);
    flag = -1;
    PRECHECK(MPI_Finalized(&flag) == MPI_SUCCESS && flag == 0, "MPI_Finalized before init: %d", flag);
    PRECHECK(MPI_Get_version(&v, &sv) == MPI_SUCCESS, "Get_version before init failed");
    check_version(v, sv, "before init");
    memset(lib, 0, sizeof lib);
    PRECHECK(MPI_Get_library_version(lib, &len) == MPI_SUCCESS, "Get_library_version before init");
    PRECHECK(len > 0 && len < MPI_MAX_LIBRARY_VERSION_STRING, "Get_library_version: len %d", len);
    /* Open MPI 4.1 counts the terminating NUL in resultlen */
    PRECHECK((int)strlen(lib) == len || mtest_known_bug("library_version_len"),
             "Get_library_version before init: len %d strlen %zu", len, strlen(lib));

    required = argc > 1 ? level_from_name(argv[1]) : MPI_THREAD_FUNNELED;
    PRECHECK(MPI_THREAD_SINGLE < MPI_THREAD_FUNNELED && MPI_THREAD_FUNNELED < MPI_THREAD_SERIALIZED &&
                 MPI_THREAD_SERIALIZED < MPI_THREAD_MULTIPLE,
             "thread level constants are not ordered");
    PRECHECK(MPI_Init_thread(&argc, &argv, required, &provided) == MPI_SUCCESS, "MPI_Init_thread failed");

    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* provided is one of the four levels; an implementation returns the
     * required level if it supports it, otherwise the least higher one it
     * supports, otherwise its highest; so provided < required only when
     * required is beyond what the library supports at all. */
    CHECK(level_index(provided) >= 0, "Init_thread provided invalid level %d", provided);
    {
        int q = -1, main_flag = -1;
        MPI_CHECK(MPI_Query_thread(&q));
        CHECK(q == provided, "Query_thread %d != provided %d", q, provided);
        MPI_CHECK(MPI_Is_thread_main(&main_flag));
        CHECK(main_flag, "Is_thread_main false on the thread that called Init_thread");
        if (rank == 0 && getenv("MTEST_VERBOSE"))
            printf("env: required %d provided %d\n", required, provided);
    }

    flag = 0;
    MPI_CHECK(MPI_Initialized(&flag));
    CHECK(flag, "MPI_Initialized false after init");
    flag = 1;
    MPI_CHECK(MPI_Finalized(&flag));
    CHECK(!flag, "MPI_Finalized true before finalize");

    /* rank / size */
    CHECK(size >= 1 && rank >= 0 && rank < size, "rank %d size %d", rank, size);
    {
        int sum = 0, mx = -1, mn = -1, sz = 0;
        MPI_CHECK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        MPI_CHECK(MPI_Allreduce(&rank, &mx, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
        MPI_CHECK(MPI_Allreduce(&rank, &mn, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
        MPI_CHECK(MPI_Allreduce(&size, &sz, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
        CHECK(sum == size * (size - 1) / 2 && mx == size - 1 && mn == 0 && sz == size,
              "ranks are not 0..size-1: sum %d max %d min %d size %d", sum, mx, mn, sz);
        int r = -1, s = -1;
        MPI_CHECK(MPI_Comm_rank(MPI_COMM_SELF, &r));
        MPI_CHECK(MPI_Comm_size(MPI_COMM_SELF, &s));
        CHECK(r == 0 && s == 1, "COMM_SELF rank %d size %d", r, s);
        const char *env_np = getenv("MTEST_EXPECT_NP");
        if (env_np)
            CHECK(size == atoi(env_np), "size %d, launcher was asked for %s", size, env_np);
    }

    /* processor name */
    {
        char name[MPI_MAX_PROCESSOR_NAME];
        int n = -1;
        memset(name, 0, sizeof name);
        MPI_CHECK(MPI_Get_processor_name(name, &n));
        CHECK(n > 0 && n < MPI_MAX_PROCESSOR_NAME, "Get_processor_name length %d", n);
        CHECK((int)strlen(name) == n, "Get_processor_name strlen %zu != %d", strlen(name), n);
    }

    /* versions */
    MPI_CHECK(MPI_Get_version(&v, &sv));
    check_version(v, sv, "after init");
    {
        char lib2[MPI_MAX_LIBRARY_VERSION_STRING];
        int len2 = -1;
        MPI_CHECK(MPI_Get_library_version(lib2, &len2));
        CHECK(len2 == len && !strcmp(lib, lib2), "Get_library_version changed after init");
    }

    /* Wtime / Wtick */
    {
        double tick = MPI_Wtick();
        CHECK(tick > 0.0 && tick < 1.0, "MPI_Wtick = %g", tick);
        double prev = MPI_Wtime(), first = prev;
        for (int i = 0; i < 100000; i++) {
            double t = MPI_Wtime();
            CHECK(t >= prev, "MPI_Wtime went backwards: %.9f after %.9f", t, prev);
            prev = t;
        }
        struct timespec ts = { 0, 20 * 1000 * 1000 };
        nanosleep(&ts, NULL);
        double after = MPI_Wtime();
        CHECK(after > first, "MPI_Wtime did not advance across a 20 ms sleep");
        void *val;
        int f = 0;
        MPI_CHECK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &val, &f));
        if (f)
            CHECK(*(int *)val == 0 || *(int *)val == 1, "MPI_WTIME_IS_GLOBAL = %d", *(int *)val);
    }

    /* predefined attributes */
    {
        void *val;
        int f = 0;
        MPI_CHECK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &val, &f));
        CHECK(f && *(int *)val >= 32767, "MPI_TAG_UB missing or too small");
        f = 0;
        MPI_CHECK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_IO, &val, &f));
        CHECK(f, "MPI_IO attribute missing");
    }

    MPI_Barrier(MPI_COMM_WORLD);
    MPI_CHECK(MPI_Finalize());

    flag = 0;
    PRECHECK(MPI_Finalized(&flag) == MPI_SUCCESS && flag, "MPI_Finalized false after finalize");
    flag = 0;
    PRECHECK(MPI_Initialized(&flag) == MPI_SUCCESS && flag, "MPI_Initialized false after finalize");
    PRECHECK(MPI_Get_version(&v, &sv) == MPI_SUCCESS, "Get_version after finalize failed");
    check_version(v, sv, "after finalize");
    return 0;
}
