/* Large messages: 1, 4 and 64 MiB (plus odd sizes and unaligned buffers)
 * with every byte checked; blocking, nonblocking, both directions at once,
 * receive posted before and after the send.
 * With argv[1] == "huge": one message larger than 2 GiB (a count of
 * MPI_DOUBLE below INT_MAX), checked element by element.
 * Uses ranks 0 and 1. */
#include "mtest.h"
#include <limits.h>

static int rank, size;

/* Fast 8-byte-word pattern for big buffers (byte-granular checks would be
 * slow at 64 MiB+); tail bytes use the byte pattern. */
static void fill_big(char *b, size_t n, unsigned seed)
{
    size_t w = n / 8;
    uint64_t *p = (uint64_t *)(void *)b;
    for (size_t i = 0; i < w; i++) {
        uint64_t v = (uint64_t)i * 0x9E3779B97F4A7C15ull ^ ((uint64_t)seed << 32);
        memcpy(&p[i], &v, 8); /* b may be unaligned */
    }
    for (size_t i = w * 8; i < n; i++)
        b[i] = (char)mtest_pat(seed, i);
}

static void check_big(const char *b, size_t n, unsigned seed, const char *what)
{
    size_t w = n / 8;
    for (size_t i = 0; i < w; i++) {
        uint64_t v = (uint64_t)i * 0x9E3779B97F4A7C15ull ^ ((uint64_t)seed << 32), got;
        memcpy(&got, b + 8 * i, 8);
        if (got != v)
            FAILF("%s: %zu bytes: word %zu (byte offset %zu) wrong: 0x%016llx want 0x%016llx", what, n, i, 8 * i,
                  (unsigned long long)got, (unsigned long long)v);
    }
    for (size_t i = w * 8; i < n; i++)
        CHECK((unsigned char)b[i] == mtest_pat(seed, i), "%s: tail byte %zu wrong", what, i);
}

static void one_way(size_t n, int soff, int roff, int late_recv, int nonblocking, unsigned seed)
{
    char *sraw = NULL, *rraw = NULL;
    if (rank == 0) {
        sraw = mtest_malloc(n + 64);
        char *s = sraw + soff;
        fill_big(s, n, seed);
        if (late_recv)
            MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
        if (nonblocking) {
            MPI_Request rq;
            MPI_CHECK(MPI_Isend(s, (int)n, MPI_BYTE, 1, 7, MPI_COMM_WORLD, &rq));
            MPI_CHECK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        } else {
            MPI_CHECK(MPI_Send(s, (int)n, MPI_BYTE, 1, 7, MPI_COMM_WORLD));
        }
        /* the send buffer must be untouched */
        check_big(s, n, seed, "send buffer after send");
    } else if (rank == 1) {
        rraw = mtest_malloc(n + 64);
        char *r = rraw + roff;
        MPI_Status st;
        int cnt;
        memset(rraw, 0x5a, n + 64);
        if (late_recv) {
            /* the sender starts before this receive is posted */
            MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
            MPI_CHECK(MPI_Probe(0, 7, MPI_COMM_WORLD, &st));
        }
        if (nonblocking) {
            MPI_Request rq;
            MPI_CHECK(MPI_Irecv(r, (int)n, MPI_BYTE, 0, 7, MPI_COMM_WORLD, &rq));
            MPI_CHECK(MPI_Wait(&rq, &st));
        } else {
            MPI_CHECK(MPI_Recv(r, (int)n, MPI_BYTE, 0, 7, MPI_COMM_WORLD, &st));
        }
        MPI_CHECK(MPI_Get_count(&st, MPI_BYTE, &cnt));
        CHECK((size_t)cnt == n, "large recv count %d, want %zu", cnt, n);
        char what[96];
        snprintf(what, sizeof what, "large message (soff %d roff %d late %d nb %d)", soff, roff, late_recv,
                 nonblocking);
        check_big(r, n, seed, what);
        for (int i = 0; i < roff; i++)
            CHECK((unsigned char)rraw[i] == 0x5a, "%s: wrote before the buffer", what);
        for (size_t i = (size_t)roff + n; i < n + 64; i++)
            CHECK((unsigned char)rraw[i] == 0x5a, "%s: wrote after the buffer", what);
    } else if (late_recv) {
        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    }
    free(sraw);
    free(rraw);
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
}

static void both_ways(size_t n, unsigned seed)
{
    if (rank < 2) {
        int peer = 1 - rank;
        char *s = mtest_malloc(n), *r = mtest_malloc(n);
        MPI_Request rq[2];
        fill_big(s, n, seed + (unsigned)rank);
        MPI_CHECK(MPI_Irecv(r, (int)n, MPI_BYTE, peer, 8, MPI_COMM_WORLD, &rq[0]));
        MPI_CHECK(MPI_Isend(s, (int)n, MPI_BYTE, peer, 8, MPI_COMM_WORLD, &rq[1]));
        MPI_CHECK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
        check_big(r, n, seed + (unsigned)peer, "exchange");
        /* Sendrecv of the same size */
        fill_big(s, n, seed + 10 + (unsigned)rank);
        MPI_CHECK(MPI_Sendrecv(s, (int)n, MPI_BYTE, peer, 9, r, (int)n, MPI_BYTE, peer, 9, MPI_COMM_WORLD,
                               MPI_STATUS_IGNORE));
        check_big(r, n, seed + 10 + (unsigned)peer, "Sendrecv");
        free(s);
        free(r);
    }
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
}

/* Several large messages in flight at once on the same tag, in order. */
static void many_in_flight(size_t n, int k)
{
    if (rank == 0) {
        char **b = mtest_malloc(sizeof(char *) * (size_t)k);
        MPI_Request *rq = mtest_malloc(sizeof(MPI_Request) * (size_t)k);
        for (int i = 0; i < k; i++) {
            b[i] = mtest_malloc(n);
            fill_big(b[i], n, 300u + (unsigned)i);
            MPI_CHECK(MPI_Isend(b[i], (int)n, MPI_BYTE, 1, 10, MPI_COMM_WORLD, &rq[i]));
        }
        MPI_CHECK(MPI_Waitall(k, rq, MPI_STATUSES_IGNORE));
        for (int i = 0; i < k; i++)
            free(b[i]);
        free(b);
        free(rq);
    } else if (rank == 1) {
        char *r = mtest_malloc(n);
        for (int i = 0; i < k; i++) {
            MPI_CHECK(MPI_Recv(r, (int)n, MPI_BYTE, 0, 10, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            check_big(r, n, 300u + (unsigned)i, "in-flight large message");
        }
        free(r);
    }
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
}

static void huge(void)
{
    /* 2.5 GiB of doubles: count 335544320 < INT_MAX */
    const size_t count = (size_t)5 << 26; /* 335544320 */
    const size_t bytes = count * sizeof(double);
    CHECK(count < (size_t)INT_MAX, "huge count overflow");
    if (rank < 2) {
        double *b = malloc(bytes);
        CHECK(b != NULL, "cannot allocate %zu bytes for the huge test", bytes);
        if (rank == 0) {
            for (size_t i = 0; i < count; i++)
                b[i] = (double)i * 0.5 + 1.0;
            MPI_CHECK(MPI_Send(b, (int)count, MPI_DOUBLE, 1, 11, MPI_COMM_WORLD));
        } else {
            MPI_Status st;
            int cnt;
            MPI_Count xcnt = 0;
            memset(b, 0, bytes);
            MPI_CHECK(MPI_Recv(b, (int)count, MPI_DOUBLE, 0, 11, MPI_COMM_WORLD, &st));
            MPI_CHECK(MPI_Get_count(&st, MPI_DOUBLE, &cnt));
            CHECK((size_t)cnt == count, "huge: count %d, want %zu", cnt, count);
            MPI_CHECK(MPI_Get_elements_x(&st, MPI_BYTE, &xcnt));
            CHECK((size_t)xcnt == bytes, "huge: Get_elements_x(MPI_BYTE) %lld, want %zu", (long long)xcnt, bytes);
            for (size_t i = 0; i < count; i++)
                if (b[i] != (double)i * 0.5 + 1.0)
                    FAILF("huge: element %zu (byte %zu) = %g, want %g", i, i * 8, b[i], (double)i * 0.5 + 1.0);
        }
        free(b);
    }
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size >= 2, "needs at least 2 ranks, got %d", size);

    if (argc > 1 && strcmp(argv[1], "huge") == 0) {
        huge();
        return mtest_finalize();
    }

    const size_t sizes[] = { (size_t)1 << 20, ((size_t)1 << 20) + 13, (size_t)4 << 20, ((size_t)4 << 20) - 1,
                             (size_t)64 << 20 };
    for (int s = 0; s < 5; s++) {
        unsigned seed = 10u * (unsigned)s;
        one_way(sizes[s], 0, 0, 0, 0, seed + 1);
        one_way(sizes[s], 0, 0, 1, 1, seed + 2);
        if (sizes[s] < ((size_t)64 << 20)) {
            one_way(sizes[s], 3, 5, 0, 1, seed + 3);
            one_way(sizes[s], 7, 1, 1, 0, seed + 4);
        }
        both_ways(sizes[s], seed + 5);
    }
    many_in_flight((size_t)4 << 20, 6);
    many_in_flight(((size_t)1 << 20) + 1, 12);
    return mtest_finalize();
}
