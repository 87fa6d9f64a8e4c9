/* Messages from a rank to itself on MPI_COMM_WORLD: eager sizes and 8 MiB,
 * Isend+Recv (unexpected), Irecv+Send (expected), Issend+Recv,
 * Sendrecv, ordering of many queued self messages, Probe and ANY_SOURCE on
 * self messages, and self messages mixed with messages from a peer.
 * Works with any number of ranks. */
#include "mtest.h"

static int rank, size;

static void self_roundtrip(int n, unsigned seed)
{
    char *s = mtest_malloc((size_t)n), *r = mtest_malloc((size_t)n);
    MPI_Request rq;
    MPI_Status st;
    int cnt;

    /* Isend first, then a blocking Recv: the message is unexpected */
    mtest_fill(s, (size_t)n, seed);
    memset(r, 0, (size_t)n);
    MPI_CHECK(MPI_Isend(s, n, MPI_BYTE, rank, 1, MPI_COMM_WORLD, &rq));
    MPI_CHECK(MPI_Recv(r, n, MPI_BYTE, rank, 1, MPI_COMM_WORLD, &st));
    MPI_CHECK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    MPI_CHECK(MPI_Get_count(&st, MPI_BYTE, &cnt));
    CHECK(cnt == n && st.MPI_SOURCE == rank && st.MPI_TAG == 1, "Isend/Recv self %d: %d/%d/%d", n, cnt, st.MPI_SOURCE,
          st.MPI_TAG);
    CHECK_PATTERN(r, n, seed, "Isend/Recv self payload");

    /* Irecv first, then a blocking Send: the receive is already posted */
    mtest_fill(s, (size_t)n, seed + 1);
    memset(r, 0, (size_t)n);
    MPI_CHECK(MPI_Irecv(r, n, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &rq));
    MPI_CHECK(MPI_Send(s, n, MPI_BYTE, rank, 2, MPI_COMM_WORLD));
    MPI_CHECK(MPI_Wait(&rq, &st));
    CHECK(st.MPI_SOURCE == rank && st.MPI_TAG == 2, "Irecv/Send self status %d/%d", st.MPI_SOURCE, st.MPI_TAG);
    CHECK_PATTERN(r, n, seed + 1, "Irecv/Send self payload");

    /* synchronous self send */
    mtest_fill(s, (size_t)n, seed + 2);
    MPI_CHECK(MPI_Issend(s, n, MPI_BYTE, rank, 3, MPI_COMM_WORLD, &rq));
    int flag = 1;
    MPI_CHECK(MPI_Test(&rq, &flag, MPI_STATUS_IGNORE));
    CHECK(!flag, "Issend to self completed before the receive was posted");
    MPI_CHECK(MPI_Probe(rank, 3, MPI_COMM_WORLD, &st));
    MPI_CHECK(MPI_Get_count(&st, MPI_BYTE, &cnt));
    CHECK(cnt == n, "Probe of self message: count %d, want %d", cnt, n);
    MPI_CHECK(MPI_Recv(r, n, MPI_BYTE, rank, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MPI_CHECK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    CHECK_PATTERN(r, n, seed + 2, "Issend self payload");

    /* Sendrecv with self */
    mtest_fill(s, (size_t)n, seed + 3);
    MPI_CHECK(MPI_Sendrecv(s, n, MPI_BYTE, rank, 4, r, n, MPI_BYTE, rank, 4, MPI_COMM_WORLD, &st));
    CHECK_PATTERN(r, n, seed + 3, "Sendrecv self payload");
    free(s);
    free(r);
}

static void self_queue(void)
{
    /* many self messages with mixed sizes queued before any receive */
    enum { N = 64 };
    char *bufs[N];
    MPI_Request rq[N];
    for (int i = 0; i < N; i++) {
        int n = (i % 4 == 3) ? 300000 : 8 + i;
        bufs[i] = mtest_malloc((size_t)n);
        mtest_fill(bufs[i], (size_t)n, 900u + (unsigned)i);
        MPI_CHECK(MPI_Isend(bufs[i], n, MPI_BYTE, rank, 7, MPI_COMM_WORLD, &rq[i]));
    }
    char *r = mtest_malloc(300000);
    for (int i = 0; i < N; i++) {
        int n = (i % 4 == 3) ? 300000 : 8 + i, cnt;
        MPI_Status st;
        MPI_CHECK(MPI_Recv(r, 300000, MPI_BYTE, rank, 7, MPI_COMM_WORLD, &st));
        MPI_CHECK(MPI_Get_count(&st, MPI_BYTE, &cnt));
        CHECK(cnt == n, "self queue: message %d has %d bytes, want %d (out of order?)", i, cnt, n);
        CHECK_PATTERN(r, n, 900u + (unsigned)i, "self queue payload");
    }
    MPI_CHECK(MPI_Waitall(N, rq, MPI_STATUSES_IGNORE));
    for (int i = 0; i < N; i++)
        free(bufs[i]);
    free(r);
}

/* Every rank sends to itself and to its right neighbour with the same tag;
 * ANY_SOURCE receives get both, the source tells which is which. */
static void self_and_peer(void)
{
    if (size < 2)
        return;
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int a[2] = { rank, 1 }, b[2] = { rank, 2 };
    MPI_Request rq[2];
    MPI_CHECK(MPI_Isend(a, 2, MPI_INT, rank, 5, MPI_COMM_WORLD, &rq[0]));
    MPI_CHECK(MPI_Isend(b, 2, MPI_INT, right, 5, MPI_COMM_WORLD, &rq[1]));
    int got_self = 0, got_left = 0;
    for (int k = 0; k < 2; k++) {
        int v[2];
        MPI_Status st;
        MPI_CHECK(MPI_Recv(v, 2, MPI_INT, MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, &st));
        CHECK(v[0] == st.MPI_SOURCE, "payload says %d, status source %d", v[0], st.MPI_SOURCE);
        if (st.MPI_SOURCE == rank && v[1] == 1)
            got_self++;
        else if (st.MPI_SOURCE == left && v[1] == 2)
            got_left++;
        else
            FAILF("unexpected message %d/%d from %d", v[0], v[1], st.MPI_SOURCE);
    }
    CHECK(got_self == 1 && got_left == 1, "self %d left %d", got_self, got_left);
    MPI_CHECK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    const int sizes[] = { 0, 1, 64, 4000, 65536, 1048576, 8 << 20 };
    for (int i = 0; i < 7; i++)
        self_roundtrip(sizes[i], 10u * (unsigned)i + (unsigned)rank);
    self_queue();
    /* The wildcard receive of self_roundtrip must not meet the peer's message of
     * self_and_peer: a rank that is still in the former waits here for the other. */
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    self_and_peer();
    return mtest_finalize();
}
