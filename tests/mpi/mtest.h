/* Shared helpers for the Aptus MPI integration tests (tests/mpi).
 *
 * Every test is a plain, standard MPI C11 program.  It exits 0 on success;
 * on failure it prints "FAIL <file>:<line>: <what>" to stderr and calls
 * MPI_Abort(MPI_COMM_WORLD, 1).
 */
#ifndef APTUS_TESTS_MTEST_H
#define APTUS_TESTS_MTEST_H

#include <mpi.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__)
#define MTEST_UNUSED       __attribute__((unused))
#define MTEST_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define MTEST_UNUSED
#define MTEST_PRINTF(a, b)
#endif

static int mtest_world_rank(void) MTEST_UNUSED;
static int mtest_world_rank(void)
{
    int init = 0, fin = 0, rank = -1;
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    if (init && !fin)
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    return rank;
}

static void mtest_fail(const char *file, int line, const char *fmt, ...) MTEST_PRINTF(3, 4) MTEST_UNUSED;
static void mtest_fail(const char *file, int line, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "FAIL %s:%d: [rank %d] %s\n", file, line, mtest_world_rank(), msg);
    fflush(stderr);
    {
        int init = 0, fin = 0;
        MPI_Initialized(&init);
        MPI_Finalized(&fin);
        if (init && !fin)
            MPI_Abort(MPI_COMM_WORLD, 1);
    }
    exit(1);
}

/* CHECK(cond, fmt, ...): fail the test unless cond holds. */
#define CHECK(cond, ...)                                                                                               \
    do {                                                                                                               \
        if (!(cond))                                                                                                   \
            mtest_fail(__FILE__, __LINE__, __VA_ARGS__);                                                               \
    } while (0)

/* TCHECK(call, want): a tool-interface call (MPI_T_*, which calls no error handler) must return
 * exactly `want`; on any other code the test fails with the code and its string. */
#define TCHECK(call, want)                                                                                             \
    do {                                                                                                               \
        int tcheck_rc_ = (call);                                                                                       \
        if (tcheck_rc_ != (want)) {                                                                                    \
            char tcheck_s_[MPI_MAX_ERROR_STRING];                                                                      \
            int tcheck_l_ = 0;                                                                                         \
            MPI_Error_string(tcheck_rc_, tcheck_s_, &tcheck_l_);                                                       \
            mtest_fail(__FILE__, __LINE__, "%s returned %d (%s), expected %d", #call, tcheck_rc_, tcheck_s_,           \
                       (int)(want));                                                                                   \
        }                                                                                                              \
    } while (0)

/* FAILF(fmt, ...): unconditional failure. */
#define FAILF(...) mtest_fail(__FILE__, __LINE__, __VA_ARGS__)

static const char *mtest_errstr(int err) MTEST_UNUSED;
static const char *mtest_errstr(int err)
{
    static char buf[MPI_MAX_ERROR_STRING + 1];
    int len = 0;
    buf[0] = '\0';
    if (MPI_Error_string(err, buf, &len) != MPI_SUCCESS)
        snprintf(buf, sizeof buf, "(unknown error %d)", err);
    return buf;
}

/* The class of an error code (MPI_SUCCESS for MPI_SUCCESS). */
static int mtest_class(int rc) MTEST_UNUSED;
static int mtest_class(int rc)
{
    int cls = MPI_SUCCESS;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    return cls;
}

/* MPI_CHECK(call): the call must return MPI_SUCCESS.  With the default
 * MPI_ERRORS_ARE_FATAL a failure aborts inside the library anyway; with
 * MPI_ERRORS_RETURN this reports which call failed. */
#define MPI_CHECK(call)                                                                                                \
    do {                                                                                                               \
        int mtest_rc_ = (call);                                                                                        \
        if (mtest_rc_ != MPI_SUCCESS)                                                                                  \
            mtest_fail(__FILE__, __LINE__, "%s returned %d (%s)", #call, mtest_rc_, mtest_errstr(mtest_rc_));          \
    } while (0)

/* CHECK_ERRCLASS(rc, cls, what): rc must be an error code of class cls. */
#define CHECK_ERRCLASS(rc, cls, what)                                                                                  \
    do {                                                                                                               \
        int mtest_rc2_ = (rc), mtest_cls_ = -1;                                                                        \
        if (mtest_rc2_ == MPI_SUCCESS)                                                                                 \
            mtest_fail(__FILE__, __LINE__, "%s: expected %s, got MPI_SUCCESS", (what), #cls);                          \
        MPI_Error_class(mtest_rc2_, &mtest_cls_);                                                                      \
        if (mtest_cls_ != (cls))                                                                                       \
            mtest_fail(__FILE__, __LINE__, "%s: expected class %s (%d), got class %d (%s)", (what), #cls, (int)(cls),  \
                       mtest_cls_, mtest_errstr(mtest_rc2_));                                                          \
    } while (0)

/* Deterministic byte pattern that depends on a seed and the offset, so that
 * shifted, truncated or mixed-up payloads are detected. */
static inline unsigned char mtest_pat(unsigned seed, size_t i)
{
    uint32_t x = (uint32_t)(i * 2654435761u) ^ (seed * 40503u + 0x9e37u);
    x ^= x >> 13;
    x ^= (uint32_t)(i >> 8) * 97u;
    return (unsigned char)(x ^ (x >> 7));
}

static void mtest_fill(void *buf, size_t n, unsigned seed) MTEST_UNUSED;
static void mtest_fill(void *buf, size_t n, unsigned seed)
{
    unsigned char *p = (unsigned char *)buf;
    for (size_t i = 0; i < n; i++)
        p[i] = mtest_pat(seed, i);
}

/* Returns the index of the first wrong byte, or (size_t)-1 if all match. */
static size_t mtest_verify(const void *buf, size_t n, unsigned seed) MTEST_UNUSED;
static size_t mtest_verify(const void *buf, size_t n, unsigned seed)
{
    const unsigned char *p = (const unsigned char *)buf;
    for (size_t i = 0; i < n; i++)
        if (p[i] != mtest_pat(seed, i))
            return i;
    return (size_t)-1;
}

#define CHECK_PATTERN(buf, n, seed, what)                                                                              \
    do {                                                                                                               \
        size_t mtest_bad_ = mtest_verify((buf), (size_t)(n), (unsigned)(seed));                                        \
        if (mtest_bad_ != (size_t)-1)                                                                                  \
            mtest_fail(__FILE__, __LINE__, "%s: byte %zu of %zu wrong: got 0x%02x want 0x%02x", (what), mtest_bad_,    \
                       (size_t)(n), ((const unsigned char *)(buf))[mtest_bad_],                                        \
                       mtest_pat((unsigned)(seed), mtest_bad_));                                                       \
    } while (0)

static void *mtest_malloc(size_t n) MTEST_UNUSED;
static void *mtest_malloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        FAILF("out of memory allocating %zu bytes", n);
    return p;
}

/* The status of a completed receive: source, tag and the element count of dt (MPI_Get_count_c). */
static void mtest_check_status(const MPI_Status *st, int src, int tag, MPI_Datatype dt, MPI_Count count,
                               const char *what) MTEST_UNUSED;
static void mtest_check_status(const MPI_Status *st, int src, int tag, MPI_Datatype dt, MPI_Count count,
                               const char *what)
{
    MPI_Count n = -1;
    MPI_CHECK(MPI_Get_count_c(st, dt, &n));
    CHECK(st->MPI_SOURCE == src, "%s: source %d, want %d", what, st->MPI_SOURCE, src);
    CHECK(st->MPI_TAG == tag, "%s: tag %d, want %d", what, st->MPI_TAG, tag);
    CHECK(n == count, "%s: count %lld, want %lld", what, (long long)n, (long long)count);
}

/* The status of a receive or probe of MPI_PROC_NULL: source MPI_PROC_NULL, tag MPI_ANY_TAG,
 * count 0 (MPI 4.1, 3.11). */
static void mtest_check_null_status(const MPI_Status *st, const char *what) MTEST_UNUSED;
static void mtest_check_null_status(const MPI_Status *st, const char *what)
{
    int n = -1;
    CHECK(st->MPI_SOURCE == MPI_PROC_NULL, "%s: source %d, want MPI_PROC_NULL", what, st->MPI_SOURCE);
    CHECK(st->MPI_TAG == MPI_ANY_TAG, "%s: tag %d, want MPI_ANY_TAG", what, st->MPI_TAG);
    MPI_CHECK(MPI_Get_count(st, MPI_BYTE, &n));
    CHECK(n == 0, "%s: count %d, want 0", what, n);
}

/* MPI_Init, the rank and size in MPI_COMM_WORLD, and errors returned on MPI_COMM_WORLD and
 * MPI_COMM_SELF (the tests of error classes). */
static void mtest_init_errors_return(int *argc, char ***argv, int *rank, int *size) MTEST_UNUSED;
static void mtest_init_errors_return(int *argc, char ***argv, int *rank, int *size)
{
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, size);
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
}

/* Known bugs of a reference implementation can be skipped at run time:
 * MTEST_KNOWN_BUGS is a comma-separated list of bug names (set by
 * run_with_mpich.sh only).  The Aptus registration never sets it. */
static int mtest_known_bug(const char *name) MTEST_UNUSED;
static int mtest_known_bug(const char *name)
{
    const char *list = getenv("MTEST_KNOWN_BUGS");
    size_t n = strlen(name);
    while (list && *list) {
        const char *end = strchr(list, ',');
        size_t len = end ? (size_t)(end - list) : strlen(list);
        if (len == n && strncmp(list, name, n) == 0)
            return 1;
        list = end ? end + 1 : NULL;
    }
    return 0;
}

/* Call at the end of main() instead of a bare MPI_Finalize(). */
static int mtest_finalize(void) MTEST_UNUSED;
static int mtest_finalize(void)
{
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}

#endif
