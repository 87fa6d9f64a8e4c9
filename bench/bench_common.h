/* Shared helpers for the Aptus MPI benchmark programs (the .c files in bench/).
 *
 * Header-only (static functions) so that every benchmark stays a single
 * translation unit that builds with any MPI's mpicc:
 *     mpicc -O2 -std=c11 -o pt2pt_latency pt2pt_latency.c
 * Only standard MPI calls are used.
 *
 * Output convention shared by all benchmarks (bench/compare.sh relies on it):
 *   # benchmark: NAME | library: FIRST LINE OF MPI_Get_library_version | ranks: N | ...
 *   # table: NAME  unit: UNIT  better: lower|higher
 *   #  size  iters  best  median  [extra columns]
 *   <data rows: column 1 size in bytes, 2 iterations, 3 best, 4 median, then extras>
 * Lines starting with '#' are comments; every other non-empty line is a data row. */
#ifndef APTUS_BENCH_COMMON_H
#define APTUS_BENCH_COMMON_H

#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <mpi.h>

/* GCC >= 11 warns (-Wstringop-overflow) when MPICH's MPI_STATUSES_IGNORE, a
 * constant pointer, is passed as a status array; a false positive. */
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 11
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BENCH_KIB      ((size_t)1024)
#define BENCH_MIB      ((size_t)1024 * 1024)
#define BENCH_MAX_REPS 1000

/* Prints a message on stderr (prefixed by the rank) and aborts the whole job. */
static inline void bench_die(const char *fmt, ...)
{
    int rank = -1;
    int inited = 0;
    MPI_Initialized(&inited);
    if (inited)
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "[rank %d] bench error: ", rank);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    fflush(stderr);
    if (inited)
        MPI_Abort(MPI_COMM_WORLD, 2);
    exit(2);
}

/* Parses "65536", "64K", "64k", "4M", "1G" (binary multiples). Dies on garbage. */
static inline size_t bench_parse_size(const char *s, const char *what)
{
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s)
        bench_die("bad %s '%s'", what, s);
    switch (toupper((unsigned char)*end)) {
    case 'K':
        v *= 1024ULL;
        end++;
        break;
    case 'M':
        v *= 1024ULL * 1024ULL;
        end++;
        break;
    case 'G':
        v *= 1024ULL * 1024ULL * 1024ULL;
        end++;
        break;
    default: break;
    }
    if (*end == 'B' || *end == 'b')
        end++;
    if (*end != '\0')
        bench_die("bad %s '%s'", what, s);
    return (size_t)v;
}

static inline int bench_parse_int(const char *s, const char *what, int min)
{
    char *end = NULL;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end != '\0' || v < min || v > 1000000000L)
        bench_die("bad %s '%s' (must be an integer >= %d)", what, s, min);
    return (int)v;
}

/* -h (code 0) or a bad option (code 1): rank 0 prints the usage, every rank finalizes; the
 * caller returns the code from main. */
static inline int bench_usage_exit(int rank, void (*usage)(void), int code)
{
    if (rank == 0)
        usage();
    MPI_Finalize();
    return code;
}

/* A time in seconds, >= 0 (e.g. the -T cap). */
static inline double bench_parse_seconds(const char *s, const char *what)
{
    char *end = NULL;
    double v = strtod(s, &end);
    if (end == s || *end != '\0' || !(v >= 0.0))
        bench_die("bad %s '%s'", what, s);
    return v;
}

/* A comma-separated choice among names[0..n-1] (modifies list): want[i] = 1 for each named,
 * 0 for the others. */
static inline void bench_parse_choice(char *list, const char *const *names, int n, int *want, const char *what)
{
    memset(want, 0, (size_t)n * sizeof *want);
    char *save = NULL;
    for (char *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int found = 0;
        for (int i = 0; i < n; i++)
            if (strcmp(tok, names[i]) == 0)
                want[i] = found = 1;
        if (!found)
            bench_die("unknown %s '%s'", what, tok);
    }
}

/* First line of MPI_Get_library_version, whitespace runs collapsed to one space. */
static inline void bench_library_name(char *out, size_t outlen)
{
    char buf[MPI_MAX_LIBRARY_VERSION_STRING + 1];
    int len = 0;
    memset(buf, 0, sizeof buf);
    MPI_Get_library_version(buf, &len);
    if (len < 0)
        len = 0;
    if (len > MPI_MAX_LIBRARY_VERSION_STRING)
        len = MPI_MAX_LIBRARY_VERSION_STRING;
    buf[len] = '\0';
    size_t o = 0;
    int pending_space = 0;
    for (const char *p = buf; *p && *p != '\n' && *p != '\r'; p++) {
        if (isspace((unsigned char)*p) || *p == '|') {
            pending_space = (o > 0);
            continue;
        }
        if (pending_space && o + 1 < outlen)
            out[o++] = ' ';
        pending_space = 0;
        if (o + 1 < outlen)
            out[o++] = *p;
    }
    out[o] = '\0';
    if (o == 0)
        snprintf(out, outlen, "unknown");
}

/* Page-aligned allocation, every page written once (so that page faults and
 * first-touch happen before timing). Dies on failure. */
static inline void *bench_alloc(size_t bytes)
{
    long page = sysconf(_SC_PAGESIZE);
    if (page <= 0)
        page = 4096;
    void *p = NULL;
    size_t n = bytes ? bytes : 1;
    if (posix_memalign(&p, (size_t)page, n) != 0 || p == NULL)
        bench_die("cannot allocate %zu bytes", n);
    memset(p, 0xa5, n);
    return p;
}

/* Deterministic test pattern: depends on the position, the message size and a
 * per-message tag, so that a wrong size, a wrong message or stale data is caught. */
static inline unsigned char bench_pattern_byte(size_t i, size_t size, unsigned tag)
{
    uint32_t x = (uint32_t)i * 2654435761u ^ (uint32_t)size * 40503u ^ tag * 2246822519u;
    x ^= x >> 15;
    return (unsigned char)(x ^ (x >> 8));
}

static inline void bench_fill(unsigned char *buf, size_t size, unsigned tag)
{
    for (size_t i = 0; i < size; i++)
        buf[i] = bench_pattern_byte(i, size, tag);
}

/* Verifies a received buffer; dies with the first mismatch. */
static inline void bench_verify(const unsigned char *buf, size_t size, unsigned tag, const char *what)
{
    for (size_t i = 0; i < size; i++) {
        unsigned char want = bench_pattern_byte(i, size, tag);
        if (buf[i] != want)
            bench_die("%s: wrong data for message size %zu (tag %u): byte %zu is 0x%02x, expected 0x%02x", what, size,
                      tag, i, buf[i], want);
    }
}

/* Checks that a completed receive got exactly `size` bytes from `src`. */
static inline void bench_check_status(const MPI_Status *st, size_t size, int src, const char *what)
{
    int count = -1;
    MPI_Get_count(st, MPI_BYTE, &count);
    if (count < 0 || (size_t)count != size)
        bench_die("%s: received %d bytes, expected %zu", what, count, size);
    if (src >= 0 && st->MPI_SOURCE != src)
        bench_die("%s: message came from rank %d, expected %d", what, st->MPI_SOURCE, src);
}

static inline int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sorts v in place; returns the median. */
static inline double bench_median(double *v, int n)
{
    if (n <= 0)
        return 0.0;
    qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
    return (n % 2) ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static inline double bench_min(const double *v, int n)
{
    double m = v[0];
    for (int i = 1; i < n; i++)
        if (v[i] < m)
            m = v[i];
    return m;
}

static inline double bench_max(const double *v, int n)
{
    double m = v[0];
    for (int i = 1; i < n; i++)
        if (v[i] > m)
            m = v[i];
    return m;
}

/* The timed loops of one table: a warm-up that also calibrates (batches of 1, 2, 4, ... iterations
 * until a batch takes 50 ms or iters/10 iterations), then reps loops of iters iterations, or fewer
 * when a loop would take more than limit seconds (0: no limit) by the warm-up's estimate, at least
 * min_loop. timed(table, n) runs n iterations and returns seconds per iteration on the slowest
 * rank (collective: every rank sees the same estimate). t[0 .. reps) gets the loops' microseconds
 * per iteration; returns the iterations per loop. */
static inline long bench_timed_loops(double (*timed)(int, long), int table, long iters, double limit, long min_loop,
                                     int reps, double *t)
{
    double est = 0.0;
    for (long w = 1;; w *= 2) {
        est = timed(table, w);
        if (est * (double)w >= 0.05 || w >= iters / 10)
            break;
    }
    long n = iters;
    if (limit > 0.0 && est > 0.0 && est * (double)n > limit) {
        n = (long)(limit / est);
        if (n < min_loop)
            n = min_loop;
    }
    for (int r = 0; r < reps; r++)
        t[r] = timed(table, n) * 1e6;
    return n;
}

/* The options of a benchmark of tables of timed loops (bench_timed_loops): -i COUNT (loop
 * iterations, at most; `count_what` names them in errors) -r REPS -T SECONDS -c LIST (of
 * names[0..n-1], into want) -h. Returns -1 to go on, or the exit status for main after -h or a
 * bad option (bench_usage_exit). */
static inline int bench_loop_options(int argc, char **argv, int rank, void (*usage)(void), const char *count_what,
                                     long *count, int *reps, double *limit, const char *const *names, int n, int *want)
{
    int opt;
    while ((opt = getopt(argc, argv, "i:r:T:c:h")) != -1) {
        switch (opt) {
        case 'i': *count = bench_parse_int(optarg, count_what, 1); break;
        case 'r': *reps = bench_parse_int(optarg, "repetitions (-r)", 1); break;
        case 'T': *limit = bench_parse_seconds(optarg, "time limit (-T)"); break;
        case 'c': bench_parse_choice(optarg, names, n, want, "table in -c"); break;
        case 'h': return bench_usage_exit(rank, usage, 0);
        default: return bench_usage_exit(rank, usage, 1);
        }
    }
    if (*reps > BENCH_MAX_REPS)
        bench_die("at most %d repetitions", BENCH_MAX_REPS);
    return -1;
}

/* Message sizes: 0 (if with_zero), 1, 2, 4, ... up to max, or only `single`. */
static inline int bench_sizes(size_t *out, int cap, size_t max, int with_zero, int have_single, size_t single)
{
    int n = 0;
    if (have_single) {
        out[n++] = single;
        return n;
    }
    if (with_zero)
        out[n++] = 0;
    for (size_t s = 1; s <= max && n < cap; s *= 2)
        out[n++] = s;
    return n;
}

#endif /* APTUS_BENCH_COMMON_H */
