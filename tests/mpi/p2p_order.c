/* Message ordering (non-overtaking rule).
 *  - many messages with the same (source, tag) and interleaved small / large
 *    sizes arrive in send order, whether the receives are posted before the
 *    sends (expected queue) or after (unexpected queue), with blocking and
 *    nonblocking sends, in both directions at once;
 *  - receiving with MPI_ANY_TAG sees messages in send order;
 *  - messages with distinct tags can be received in any order by tag.
 * Runs with 2 ranks (ranks >= 2 only join the barriers). */
#include "mtest.h"

#define NMSG  48
#define MAXSZ (1048576 + 7)

static int rank, size;

static int msg_size(int i)
{
    static const int cycle[] = { 8, 1048576, 0,    64, 200000, 4,    16384, 1048576 + 7,
                                 1, 65536,   4096, 12, 300,    4095, 4097,  100000 };
    return cycle[i % (int)(sizeof cycle / sizeof cycle[0])];
}

static char *sbufs[NMSG];
static char *rbufs[NMSG];

static void fill_msg(char *b, int n, unsigned seed, int seq)
{
    mtest_fill(b, (size_t)n, seed);
    if (n >= (int)sizeof(int))
        memcpy(b, &seq, sizeof seq);
}

/* The first int of a message is its sequence number; the rest is checked
 * against the seeded pattern. */
static void check_payload(const char *b, int n, unsigned seed, int seq, const char *what)
{
    if (n >= (int)sizeof(int)) {
        int got;
        memcpy(&got, b, sizeof got);
        CHECK(got == seq, "%s: got message %d where %d was expected (overtaking)", what, got, seq);
    }
    for (int i = (int)sizeof(int); i < n; i++)
        CHECK((unsigned char)b[i] == mtest_pat(seed, (size_t)i), "%s: message %d byte %d of %d wrong", what, seq, i, n);
}

/* mode 0: sender Isend all, receiver posts Irecv all first (expected)
 * mode 1: sender Isend all, receiver waits for a go from the sender on a
 *         separate comm, then receives with blocking Recv (mostly unexpected)
 * mode 2: sender uses blocking Send, receiver Recv
 * mode 3: both ranks send to each other at once (Isend + Irecv both ways) */
static void same_tag_order(int mode, MPI_Comm side)
{
    const int tag = 7;
    if (rank >= 2)
        return;
    int peer = 1 - rank;
    int sender = (mode == 3) || rank == 0;
    int receiver = (mode == 3) || rank == 1;
    MPI_Request sreq[NMSG], rreq[NMSG];
    MPI_Status st[NMSG];
    unsigned base = 1000u * (unsigned)mode + 100u * (unsigned)rank;
    unsigned pbase = 1000u * (unsigned)mode + 100u * (unsigned)peer;

    if (receiver && (mode == 0 || mode == 3)) {
        for (int i = 0; i < NMSG; i++)
            MPI_CHECK(MPI_Irecv(rbufs[i], MAXSZ, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &rreq[i]));
    }
    if (sender) {
        for (int i = 0; i < NMSG; i++)
            fill_msg(sbufs[i], msg_size(i), base + (unsigned)i, i);
        if (mode == 2) {
            for (int i = 0; i < NMSG; i++)
                MPI_CHECK(MPI_Send(sbufs[i], msg_size(i), MPI_BYTE, peer, tag, MPI_COMM_WORLD));
        } else {
            for (int i = 0; i < NMSG; i++)
                MPI_CHECK(MPI_Isend(sbufs[i], msg_size(i), MPI_BYTE, peer, tag, MPI_COMM_WORLD, &sreq[i]));
            if (mode == 1)
                MPI_CHECK(MPI_Send(NULL, 0, MPI_BYTE, peer, 0, side));
        }
    }
    if (receiver) {
        if (mode == 0 || mode == 3) {
            MPI_CHECK(MPI_Waitall(NMSG, rreq, st));
        } else {
            if (mode == 1)
                MPI_CHECK(MPI_Recv(NULL, 0, MPI_BYTE, peer, 0, side, MPI_STATUS_IGNORE));
            for (int i = 0; i < NMSG; i++)
                MPI_CHECK(MPI_Recv(rbufs[i], MAXSZ, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &st[i]));
        }
        for (int i = 0; i < NMSG; i++) {
            int n = -1;
            MPI_CHECK(MPI_Get_count(&st[i], MPI_BYTE, &n));
            CHECK(n == msg_size(i), "mode %d: message %d has %d bytes, want %d (overtaking?)", mode, i, n, msg_size(i));
            CHECK(st[i].MPI_SOURCE == peer && st[i].MPI_TAG == tag, "mode %d: bad status %d/%d", mode, st[i].MPI_SOURCE,
                  st[i].MPI_TAG);
            check_payload(rbufs[i], n, pbase + (unsigned)i, i, "same-tag order");
        }
    }
    if (sender && mode != 2)
        MPI_CHECK(MPI_Waitall(NMSG, sreq, MPI_STATUSES_IGNORE));
}

/* Messages with varying tags received with MPI_ANY_TAG arrive in send order. */
static void any_tag_order(MPI_Comm side)
{
    if (rank >= 2)
        return;
    if (rank == 0) {
        MPI_Request rq[NMSG];
        for (int i = 0; i < NMSG; i++) {
            fill_msg(sbufs[i], msg_size(i), 5000u + (unsigned)i, i);
            MPI_CHECK(MPI_Isend(sbufs[i], msg_size(i), MPI_BYTE, 1, (i * 7) % 11, MPI_COMM_WORLD, &rq[i]));
        }
        MPI_CHECK(MPI_Send(NULL, 0, MPI_BYTE, 1, 0, side));
        MPI_CHECK(MPI_Waitall(NMSG, rq, MPI_STATUSES_IGNORE));
    } else {
        MPI_Status st;
        /* first half posted before the sender started (maybe), second after */
        MPI_Request rq[NMSG / 2];
        for (int i = 0; i < NMSG / 2; i++)
            MPI_CHECK(MPI_Irecv(rbufs[i], MAXSZ, MPI_BYTE, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &rq[i]));
        MPI_CHECK(MPI_Recv(NULL, 0, MPI_BYTE, 0, 0, side, MPI_STATUS_IGNORE));
        for (int i = 0; i < NMSG / 2; i++) {
            int n;
            MPI_CHECK(MPI_Wait(&rq[i], &st));
            MPI_CHECK(MPI_Get_count(&st, MPI_BYTE, &n));
            CHECK(st.MPI_TAG == (i * 7) % 11, "ANY_TAG: message %d has tag %d, want %d", i, st.MPI_TAG, (i * 7) % 11);
            CHECK(n == msg_size(i), "ANY_TAG: message %d has %d bytes, want %d", i, n, msg_size(i));
            check_payload(rbufs[i], n, 5000u + (unsigned)i, i, "ANY_TAG order");
        }
        for (int i = NMSG / 2; i < NMSG; i++) {
            int n;
            MPI_CHECK(MPI_Recv(rbufs[i], MAXSZ, MPI_BYTE, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
            MPI_CHECK(MPI_Get_count(&st, MPI_BYTE, &n));
            CHECK(st.MPI_TAG == (i * 7) % 11, "ANY_TAG: message %d has tag %d, want %d", i, st.MPI_TAG, (i * 7) % 11);
            CHECK(n == msg_size(i), "ANY_TAG: message %d has %d bytes, want %d", i, n, msg_size(i));
            check_payload(rbufs[i], n, 5000u + (unsigned)i, i, "ANY_TAG order");
        }
    }
}

/* Distinct tags, received in reverse (and then scrambled) tag order; also a
 * specific-tag receive posted among ANY_TAG receives. */
static void by_tag(MPI_Comm side)
{
    if (rank >= 2)
        return;
    for (int round = 0; round < 2; round++) {
        if (rank == 0) {
            MPI_Request rq[NMSG];
            for (int i = 0; i < NMSG; i++) {
                fill_msg(sbufs[i], msg_size(i), 7000u + (unsigned)i, i);
                MPI_CHECK(MPI_Isend(sbufs[i], msg_size(i), MPI_BYTE, 1, 100 + i, MPI_COMM_WORLD, &rq[i]));
            }
            MPI_CHECK(MPI_Waitall(NMSG, rq, MPI_STATUSES_IGNORE));
        } else {
            for (int k = 0; k < NMSG; k++) {
                /* round 0: reverse order; round 1: a permutation */
                int i = round == 0 ? NMSG - 1 - k : (k * 13 + 5) % NMSG;
                MPI_Status st;
                int n;
                MPI_CHECK(MPI_Recv(rbufs[i], MAXSZ, MPI_BYTE, 0, 100 + i, MPI_COMM_WORLD, &st));
                MPI_CHECK(MPI_Get_count(&st, MPI_BYTE, &n));
                CHECK(st.MPI_TAG == 100 + i, "by tag: got tag %d want %d", st.MPI_TAG, 100 + i);
                CHECK(n == msg_size(i), "by tag: tag %d has %d bytes, want %d", 100 + i, n, msg_size(i));
                check_payload(rbufs[i], n, 7000u + (unsigned)i, i, "by tag");
            }
        }
        MPI_CHECK(MPI_Barrier(side));
    }
    /* Irecvs for specific tags posted in reverse order before the sends:
     * each must get its own message regardless of posting order. */
    if (rank == 1) {
        MPI_Request rq[NMSG];
        MPI_Status st[NMSG];
        for (int k = 0; k < NMSG; k++) {
            int i = NMSG - 1 - k;
            MPI_CHECK(MPI_Irecv(rbufs[i], MAXSZ, MPI_BYTE, 0, 300 + i, MPI_COMM_WORLD, &rq[k]));
        }
        MPI_CHECK(MPI_Send(NULL, 0, MPI_BYTE, 0, 1, side));
        MPI_CHECK(MPI_Waitall(NMSG, rq, st));
        for (int k = 0; k < NMSG; k++) {
            int i = NMSG - 1 - k, n;
            MPI_CHECK(MPI_Get_count(&st[k], MPI_BYTE, &n));
            CHECK(st[k].MPI_TAG == 300 + i && n == msg_size(i), "posted by tag: %d/%d", st[k].MPI_TAG, n);
            check_payload(rbufs[i], n, 7100u + (unsigned)i, i, "posted by tag");
        }
    } else {
        MPI_CHECK(MPI_Recv(NULL, 0, MPI_BYTE, 1, 1, side, MPI_STATUS_IGNORE));
        for (int i = 0; i < NMSG; i++) {
            fill_msg(sbufs[i], msg_size(i), 7100u + (unsigned)i, i);
            MPI_CHECK(MPI_Send(sbufs[i], msg_size(i), MPI_BYTE, 1, 300 + i, MPI_COMM_WORLD));
        }
    }
}

/* Many small messages in a burst (fills eager buffers / credits). */
static void small_burst(void)
{
    enum { N = 5000 };
    if (rank >= 2)
        return;
    if (rank == 0) {
        for (int i = 0; i < N; i++) {
            int v[3] = { i, i * 3, -i };
            MPI_CHECK(MPI_Send(v, 1 + i % 3, MPI_INT, 1, 9, MPI_COMM_WORLD));
        }
    } else {
        for (int i = 0; i < N; i++) {
            int v[3] = { -1, -1, -1 }, n;
            MPI_Status st;
            MPI_CHECK(MPI_Recv(v, 3, MPI_INT, 0, 9, MPI_COMM_WORLD, &st));
            MPI_CHECK(MPI_Get_count(&st, MPI_INT, &n));
            CHECK(n == 1 + i % 3, "burst: message %d has %d ints", i, n);
            CHECK(v[0] == i, "burst: got message %d, want %d", v[0], i);
            if (n > 1)
                CHECK(v[1] == i * 3, "burst: message %d payload", i);
            if (n > 2)
                CHECK(v[2] == -i, "burst: message %d payload", i);
        }
    }
}

int main(int argc, char **argv)
{
    MPI_Comm side;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size >= 2, "needs at least 2 ranks, got %d", size);
    MPI_Comm_dup(MPI_COMM_WORLD, &side);

    for (int i = 0; i < NMSG; i++) {
        sbufs[i] = mtest_malloc(MAXSZ);
        rbufs[i] = mtest_malloc(MAXSZ);
    }
    for (int rep = 0; rep < 2; rep++)
        for (int mode = 0; mode < 4; mode++) {
            same_tag_order(mode, side);
            MPI_Barrier(MPI_COMM_WORLD);
        }
    any_tag_order(side);
    MPI_Barrier(MPI_COMM_WORLD);
    by_tag(side);
    MPI_Barrier(MPI_COMM_WORLD);
    small_burst();

    for (int i = 0; i < NMSG; i++) {
        free(sbufs[i]);
        free(rbufs[i]);
    }
    MPI_Comm_free(&side);
    return mtest_finalize();
}
