/* Matching order with deep queues: hundreds of receives posted (or messages unexpected) with
 * distinct tags, matched in reverse order, with wildcard receives among them, twice over (the
 * library switches its queues to hashing when a search walks far and back when they empty;
 * MPI's order must hold throughout). Rank 0 sends, rank 1 receives; 2 ranks or more (others
 * idle). */
#include "mtest.h"

#define N 200

static int rank;

/* Message payload: (tag, serial) so that a receive can tell which send it got. */
static void send_one(int tag, int serial)
{
    int v[2] = { tag, serial };
    MPI_CHECK(MPI_Send(v, 2, MPI_INT, 1, tag, MPI_COMM_WORLD));
}

static void expect(const int *v, const MPI_Status *st, int tag, int serial, const char *what)
{
    CHECK(v[0] == tag && v[1] == serial && st->MPI_TAG == tag && st->MPI_SOURCE == 0,
          "%s: got tag %d serial %d (status tag %d source %d), want tag %d serial %d", what, v[0], v[1], st->MPI_TAG,
          st->MPI_SOURCE, tag, serial);
}

/* Posted: a wildcard first, the N tags, a wildcard last; messages in reverse tag order, then a
 * second message of the last tag, then one for the last wildcard. */
static void posted_round(int round)
{
    int v[N + 2][2];
    MPI_Request rq[N + 2];
    MPI_Status st[N + 2];
    if (rank == 1) {
        MPI_CHECK(MPI_Irecv(v[0], 2, MPI_INT, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &rq[0]));
        for (int t = 0; t < N; t++)
            MPI_CHECK(MPI_Irecv(v[1 + t], 2, MPI_INT, 0, t, MPI_COMM_WORLD, &rq[1 + t]));
        MPI_CHECK(MPI_Irecv(v[N + 1], 2, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &rq[N + 1]));
    }
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD)); /* every receive is posted before any message */
    if (rank == 0) {
        for (int t = N - 1; t >= 0; t--)
            send_one(t, round);
        send_one(N - 1, 100 + round);
        send_one(5000, round);
    } else if (rank == 1) {
        MPI_CHECK(MPI_Waitall(N + 2, rq, st));
        expect(v[0], &st[0], N - 1, round, "first wildcard (posted first) takes the first message");
        for (int t = 0; t < N - 1; t++)
            expect(v[1 + t], &st[1 + t], t, round, "posted receive");
        expect(v[N], &st[N], N - 1, 100 + round, "receive of the last tag takes its second message");
        expect(v[N + 1], &st[N + 1], 5000, round, "last wildcard (posted last)");
    }
}

/* Unexpected: N tags in order, a second message of tag 0, then a fence; received: the fence,
 * a wildcard (the first arrival), the tags in reverse order, a wildcard (the second tag 0). */
static void unexpected_round(int round)
{
    int v[2];
    MPI_Status st;
    if (rank == 0) {
        for (int t = 0; t < N; t++)
            send_one(t, round);
        send_one(0, 100 + round);
        send_one(9999, round);
    } else if (rank == 1) {
        MPI_CHECK(MPI_Recv(v, 2, MPI_INT, 0, 9999, MPI_COMM_WORLD, &st)); /* all have arrived */
        expect(v, &st, 9999, round, "fence");
        MPI_CHECK(MPI_Recv(v, 2, MPI_INT, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
        expect(v, &st, 0, round, "wildcard takes the earliest arrival");
        for (int t = N - 1; t >= 1; t--) {
            int flag = 0;
            MPI_CHECK(MPI_Iprobe(0, t, MPI_COMM_WORLD, &flag, &st));
            CHECK(flag && st.MPI_TAG == t, "Iprobe of tag %d: flag %d tag %d", t, flag, st.MPI_TAG);
            MPI_CHECK(MPI_Recv(v, 2, MPI_INT, 0, t, MPI_COMM_WORLD, &st));
            expect(v, &st, t, round, "specific receive");
        }
        MPI_CHECK(MPI_Recv(v, 2, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
        expect(v, &st, 0, 100 + round, "wildcard takes the second tag 0");
        int flag = 1;
        MPI_CHECK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
        CHECK(!flag, "a message is left over (tag %d)", st.MPI_TAG);
    }
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size >= 2, "needs 2 ranks");
    for (int round = 0; round < 2; round++) {
        posted_round(round);
        unexpected_round(round);
    }
    return mtest_finalize();
}
