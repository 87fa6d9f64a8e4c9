/* The registration cache of rc-rdma against memory the application gives back (2 ranks, an RC
 * chain with rc-rdma for large messages). Each round both ranks allocate fresh send and receive
 * buffers, fill the send buffer with the round's pattern, exchange them (rendezvous over
 * rc-rdma: the receiver's buffer is registered in write mode, the sender's in read mode),
 * check every byte, and give the buffers back -- by free (malloc), by munmap (mmap), by
 * realloc, and through madvise(MADV_DONTNEED) on memory that stays mapped. Allocations come back
 * at the same addresses; the buffer must then be registered anew (a miss), never found in the
 * cache (a hit on a stale registration):
 *   - every round registers exactly one new buffer on each rank: misses grow by one per round
 *     and hits stay 0, while invalidations keep up with the releases;
 *   - and the data is right, with new content at old addresses.
 * Argument "evict N": a second part keeps 8 buffers alive and sends each twice in turn with
 * APTUS_RCACHE_MAX_ENTRIES=N (< 8): the cache must evict (evictions > 0, entries <= N once
 * nothing is in use) and the data stay right.
 * Where the build cannot intercept releases (sanitizer builds), the counter checks are skipped
 * with a message and only the data is checked. */
#include <mpi.h>
#include <mpix_aptus.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define SZ     (1u << 20)
#define ROUNDS 6

static int rank, failures;

#define CHECK(cond, ...)                                                                                               \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            fprintf(stderr, "rank %d: rcache_reuse:%d: ", rank, __LINE__);                                             \
            fprintf(stderr, __VA_ARGS__);                                                                              \
            fputc('\n', stderr);                                                                                       \
            failures++;                                                                                                \
        }                                                                                                              \
    } while (0)

static unsigned long long counter(const char *name)
{
    unsigned long long v = 0;
    if (MPIX_Aptus_counter(name, &v) != MPI_SUCCESS) {
        fprintf(stderr, "rank %d: counter %s unreadable\n", rank, name);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return v;
}

static unsigned char pat(int round, int from, size_t i)
{
    return (unsigned char)(i * 31u + (unsigned)round * 7u + (unsigned)from * 101u + (i >> 12));
}

/* One exchange with the other rank: sb -> peer, rb <- peer; the received bytes checked. */
static void exchange(unsigned char *sb, unsigned char *rb, int round, const char *how)
{
    int peer = 1 - rank;
    for (size_t i = 0; i < SZ; i++)
        sb[i] = pat(round, rank, i);
    memset(rb, 0xEE, SZ);
    MPI_Sendrecv(sb, SZ, MPI_BYTE, peer, round, rb, SZ, MPI_BYTE, peer, round, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    size_t bad = 0;
    for (size_t i = 0; i < SZ; i++)
        bad += rb[i] != pat(round, peer, i);
    CHECK(bad == 0, "round %d (%s): %zu bytes wrong", round, how, bad);
}

/* Small messages until this rank's connection to the other is up (the threshold is 1). */
static void connect_rc(void)
{
    int up = 0, all = 0;
    double t0 = MPI_Wtime();
    while (!all && MPI_Wtime() - t0 < 20) {
        int x = rank;
        MPI_Sendrecv_replace(&x, 1, MPI_INT, 1 - rank, 0, 1 - rank, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        up = counter("rc.connections") > 0;
        MPI_Allreduce(&up, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    }
    if (!all) {
        fprintf(stderr, "rank %d: no RC connection after 20 s\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
}

typedef void *(*alloc_fn)(void);
typedef void (*release_fn)(void *);

static void *m_alloc(void)
{
    return malloc(SZ);
}
static void m_free(void *p)
{
    free(p);
}
static void *mm_alloc(void)
{
    void *p = mmap(NULL, SZ, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}
static void mm_free(void *p)
{
    munmap(p, SZ);
}
static void *ra_alloc(void)
{
    return malloc(SZ);
}
/* realloc to a larger size, then free: the realloc already gives the old range back. */
static void ra_free(void *p)
{
    free(realloc(p, 2 * SZ));
}

/* Rounds of fresh buffers released by `rel`; returns how often a buffer came back at an
 * address already used. */
static int rounds(const char *how, alloc_fn al, release_fn rel, int hooks)
{
    uintptr_t seen[2 * ROUNDS];
    int nseen = 0, again = 0;
    for (int round = 0; round < ROUNDS; round++) {
        unsigned long long m0 = counter("rcache.misses"), h0 = counter("rcache.hits");
        unsigned char *sb = al(), *rb = al();
        if (!sb || !rb) {
            fprintf(stderr, "rank %d: out of memory\n", rank);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        for (int k = 0; k < nseen; k++)
            again += seen[k] == (uintptr_t)sb || seen[k] == (uintptr_t)rb;
        seen[nseen++] = (uintptr_t)sb;
        seen[nseen++] = (uintptr_t)rb;
        exchange(sb, rb, round, how);
        unsigned long long dm = counter("rcache.misses") - m0, dh = counter("rcache.hits") - h0;
        if (hooks)
            CHECK(dm == 1 && dh == 0, "%s round %d: %llu misses and %llu hits; a fresh buffer must be one miss", how,
                  round, dm, dh);
        rel(sb);
        rel(rb);
    }
    return again;
}

/* madvise(MADV_DONTNEED) on a buffer that stays mapped: its pages go (they read as zeros
 * after), so its registration must go too. */
static void dontneed(int hooks)
{
    unsigned char *sb = mm_alloc(), *rb = mm_alloc();
    if (!sb || !rb)
        MPI_Abort(MPI_COMM_WORLD, 2);
    for (int round = 0; round < 3; round++) {
        unsigned long long m0 = counter("rcache.misses"), i0 = counter("rcache.invalidations");
        exchange(sb, rb, 100 + round, "madvise");
        if (hooks && round > 0)
            CHECK(counter("rcache.misses") - m0 == 1, "madvise round %d: the buffer was not registered anew", round);
        madvise(sb, SZ, MADV_DONTNEED);
        madvise(rb, SZ, MADV_DONTNEED);
        if (hooks)
            CHECK(counter("rcache.invalidations") > i0, "madvise round %d: nothing invalidated", round);
    }
    munmap(sb, SZ);
    munmap(rb, SZ);
}

static void evict(int limit)
{
    enum { NB = 8 };
    unsigned char *sb[NB], *rb[NB];
    for (int k = 0; k < NB; k++) {
        sb[k] = malloc(SZ);
        rb[k] = malloc(SZ);
        if (!sb[k] || !rb[k])
            MPI_Abort(MPI_COMM_WORLD, 2);
    }
    unsigned long long e0 = counter("rcache.evictions");
    for (int pass = 0; pass < 2; pass++)
        for (int k = 0; k < NB; k++)
            exchange(sb[k], rb[k], 200 + pass * NB + k, "evict");
    unsigned long long ev = counter("rcache.evictions") - e0, entries = counter("rcache.entries");
    CHECK(ev > 0, "no eviction with %d buffers and APTUS_RCACHE_MAX_ENTRIES=%d", NB, limit);
    CHECK(entries <= (unsigned long long)limit, "%llu registrations kept, the limit is %d", entries, limit);
    printf("rank %d: evict: limit %d, evictions %llu, entries %llu\n", rank, limit, ev, entries);
    for (int k = 0; k < NB; k++) {
        free(sb[k]);
        free(rb[k]);
    }
}

int main(int argc, char **argv)
{
    int size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (rank == 0)
            fprintf(stderr, "rcache_reuse needs 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    connect_rc();
    int hooks = (int)counter("memhooks.active");
    if (!hooks && rank == 0)
        printf("releases are not intercepted in this build (sanitizer): counter checks skipped, data checked\n");
    if (argc > 2 && !strcmp(argv[1], "evict")) {
        evict(atoi(argv[2]));
    } else {
        unsigned long long i0 = counter("rcache.invalidations");
        int again = rounds("malloc/free", m_alloc, m_free, hooks);
        again += rounds("mmap/munmap", mm_alloc, mm_free, hooks);
        again += rounds("malloc/realloc", ra_alloc, ra_free, hooks);
        dontneed(hooks);
        unsigned long long inv = counter("rcache.invalidations") - i0;
        printf("rank %d: buffers back at a used address %d times; invalidations %llu, misses %llu, hits %llu\n", rank,
               again, inv, counter("rcache.misses"), counter("rcache.hits"));
        CHECK(again > 0, "no allocation came back at a used address: the test proves nothing");
        if (hooks)
            CHECK(inv >= 3 * ROUNDS, "only %llu invalidations for %d released registered buffers", inv, 3 * ROUNDS);
    }
    int all;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s\n", all ? "rcache_reuse: FAILED" : "rcache_reuse: ok");
    MPI_Finalize();
    return all != 0;
}
