/* Persistent requests: Send_init / Recv_init / Ssend_init / Bsend_init /
 * Rsend_init, Start and Startall reused many times with changing buffer
 * contents, small and large messages; inactive requests in Wait/Test;
 * Request_free of an inactive persistent request; PROC_NULL persistent
 * requests. Uses ranks 0 and 1. */
#include "mtest.h"

static int rank, size;

static void check_inactive(MPI_Request *rq, const char *what)
{
    /* Wait / Test on an inactive persistent request returns at once with an
     * empty status and leaves the request allocated. */
    MPI_Status st;
    int flag = 0;
    MPI_CHECK(MPI_Wait(rq, &st));
    CHECK(*rq != MPI_REQUEST_NULL, "%s: Wait on inactive persistent request freed it", what);
    CHECK(st.MPI_SOURCE == MPI_ANY_SOURCE && st.MPI_TAG == MPI_ANY_TAG, "%s: inactive request status not empty (%d/%d)",
          what, st.MPI_SOURCE, st.MPI_TAG);
    MPI_CHECK(MPI_Test(rq, &flag, &st));
    CHECK(flag, "%s: Test on inactive persistent request flag false", what);
    CHECK(*rq != MPI_REQUEST_NULL, "%s: Test on inactive persistent request freed it", what);
}

static void test_send_recv_init(int n, int iters)
{
    if (rank >= 2)
        return;
    char *sb = mtest_malloc((size_t)n), *rb = mtest_malloc((size_t)n);
    MPI_Request rq[2];
    int peer = 1 - rank;
    /* both directions at once */
    MPI_CHECK(MPI_Recv_init(rb, n, MPI_BYTE, peer, 5, MPI_COMM_WORLD, &rq[0]));
    MPI_CHECK(MPI_Send_init(sb, n, MPI_BYTE, peer, 5, MPI_COMM_WORLD, &rq[1]));
    check_inactive(&rq[0], "Recv_init before start");
    for (int it = 0; it < iters; it++) {
        MPI_Status st[2];
        mtest_fill(sb, (size_t)n, (unsigned)(it * 2 + rank));
        memset(rb, 0, (size_t)n);
        if (it % 2) {
            MPI_CHECK(MPI_Startall(2, rq));
        } else {
            MPI_CHECK(MPI_Start(&rq[0]));
            MPI_CHECK(MPI_Start(&rq[1]));
        }
        MPI_CHECK(MPI_Waitall(2, rq, st));
        CHECK(rq[0] != MPI_REQUEST_NULL && rq[1] != MPI_REQUEST_NULL, "Waitall freed a persistent request");
        int got;
        MPI_CHECK(MPI_Get_count(&st[0], MPI_BYTE, &got));
        CHECK(got == n && st[0].MPI_SOURCE == peer && st[0].MPI_TAG == 5, "iteration %d: count %d source %d tag %d", it,
              got, st[0].MPI_SOURCE, st[0].MPI_TAG);
        CHECK_PATTERN(rb, n, (unsigned)(it * 2 + peer), "persistent payload");
    }
    check_inactive(&rq[1], "Send_init after completion");
    MPI_CHECK(MPI_Request_free(&rq[0]));
    MPI_CHECK(MPI_Request_free(&rq[1]));
    CHECK(rq[0] == MPI_REQUEST_NULL && rq[1] == MPI_REQUEST_NULL, "Request_free did not set MPI_REQUEST_NULL");
    free(sb);
    free(rb);
}

/* Ssend_init, Bsend_init, Rsend_init from rank 0 to rank 1 */
static void test_modes(int n, int iters)
{
    if (rank >= 2)
        return;
    char *b[3];
    MPI_Request rq[3];
    for (int m = 0; m < 3; m++)
        b[m] = mtest_malloc((size_t)n);
    if (rank == 0) {
        int bsize = n + MPI_BSEND_OVERHEAD;
        char *bbuf = mtest_malloc((size_t)bsize);
        MPI_CHECK(MPI_Buffer_attach(bbuf, bsize));
        MPI_CHECK(MPI_Ssend_init(b[0], n, MPI_BYTE, 1, 10, MPI_COMM_WORLD, &rq[0]));
        MPI_CHECK(MPI_Bsend_init(b[1], n, MPI_BYTE, 1, 11, MPI_COMM_WORLD, &rq[1]));
        MPI_CHECK(MPI_Rsend_init(b[2], n, MPI_BYTE, 1, 12, MPI_COMM_WORLD, &rq[2]));
        for (int it = 0; it < iters; it++) {
            for (int m = 0; m < 3; m++)
                mtest_fill(b[m], (size_t)n, (unsigned)(it * 3 + m));
            /* rank 1 has posted all receives when this arrives */
            MPI_CHECK(MPI_Recv(NULL, 0, MPI_BYTE, 1, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            MPI_CHECK(MPI_Startall(3, rq));
            MPI_CHECK(MPI_Waitall(3, rq, MPI_STATUSES_IGNORE));
        }
        for (int m = 0; m < 3; m++)
            MPI_CHECK(MPI_Request_free(&rq[m]));
        void *d;
        int dsz;
        MPI_CHECK(MPI_Buffer_detach(&d, &dsz));
        CHECK(d == (void *)bbuf && dsz == bsize, "Buffer_detach returned %p/%d", d, dsz);
        free(bbuf);
    } else {
        for (int m = 0; m < 3; m++)
            MPI_CHECK(MPI_Recv_init(b[m], n, MPI_BYTE, 0, 10 + m, MPI_COMM_WORLD, &rq[m]));
        for (int it = 0; it < iters; it++) {
            MPI_Status st[3];
            for (int m = 0; m < 3; m++)
                memset(b[m], 0, (size_t)n);
            MPI_CHECK(MPI_Startall(3, rq));
            MPI_CHECK(MPI_Send(NULL, 0, MPI_BYTE, 0, 99, MPI_COMM_WORLD));
            MPI_CHECK(MPI_Waitall(3, rq, st));
            for (int m = 0; m < 3; m++) {
                int got;
                MPI_CHECK(MPI_Get_count(&st[m], MPI_BYTE, &got));
                CHECK(got == n && st[m].MPI_TAG == 10 + m, "mode %d: count %d tag %d", m, got, st[m].MPI_TAG);
                /* Open MPI < 4.1.9/5.0.9 resends the first payload on every
                 * restart of a Bsend_init request (open-mpi/ompi#12797) */
                if (m == 1 && mtest_known_bug("bsend_init_stale"))
                    continue;
                CHECK_PATTERN(b[m], n, (unsigned)(it * 3 + m),
                              m == 0   ? "Ssend_init payload"
                              : m == 1 ? "Bsend_init payload"
                                       : "Rsend_init payload");
            }
        }
        for (int m = 0; m < 3; m++)
            MPI_CHECK(MPI_Request_free(&rq[m]));
    }
    for (int m = 0; m < 3; m++)
        free(b[m]);
}

/* Persistent receive with ANY_SOURCE / ANY_TAG, fed by every other rank. */
static void test_wildcard(void)
{
    const int iters = 50;
    if (rank == 0) {
        int v[2];
        MPI_Request rq;
        int *cnt = mtest_malloc(sizeof(int) * (size_t)size);
        for (int i = 0; i < size; i++)
            cnt[i] = 0;
        MPI_CHECK(MPI_Recv_init(v, 2, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &rq));
        for (int it = 0; it < iters * (size - 1); it++) {
            MPI_Status st;
            MPI_CHECK(MPI_Start(&rq));
            int flag = 0;
            if (it % 2)
                MPI_CHECK(MPI_Wait(&rq, &st));
            else
                while (!flag)
                    MPI_CHECK(MPI_Test(&rq, &flag, &st));
            CHECK(v[0] == st.MPI_SOURCE && v[1] == cnt[st.MPI_SOURCE] && st.MPI_TAG == v[1] % 7,
                  "wildcard persistent: src %d seq %d (status src %d tag %d), want seq %d", v[0], v[1], st.MPI_SOURCE,
                  st.MPI_TAG, cnt[st.MPI_SOURCE]);
            cnt[st.MPI_SOURCE]++;
        }
        for (int i = 1; i < size; i++)
            CHECK(cnt[i] == iters, "wildcard persistent: %d messages from %d", cnt[i], i);
        MPI_CHECK(MPI_Request_free(&rq));
        free(cnt);
    } else {
        int v[2] = { rank, 0 };
        MPI_Request rq;
        MPI_CHECK(MPI_Send_init(v, 2, MPI_INT, 0, 0, MPI_COMM_WORLD, &rq));
        for (int it = 0; it < iters; it++) {
            /* a persistent request's envelope is fixed; use the data only */
            v[1] = it;
            MPI_Request r2;
            if (it % 7 == 0) {
                MPI_CHECK(MPI_Start(&rq));
                MPI_CHECK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
            } else {
                MPI_CHECK(MPI_Isend(v, 2, MPI_INT, 0, it % 7, MPI_COMM_WORLD, &r2));
                MPI_CHECK(MPI_Wait(&r2, MPI_STATUS_IGNORE));
            }
        }
        MPI_CHECK(MPI_Request_free(&rq));
    }
}

static void test_free_inactive_and_null(void)
{
    MPI_Request rq[4];
    int buf[4] = { 0 };
    /* never started, then freed */
    MPI_CHECK(MPI_Send_init(buf, 4, MPI_INT, (rank + 1) % size, 1, MPI_COMM_WORLD, &rq[0]));
    MPI_CHECK(MPI_Recv_init(buf, 4, MPI_INT, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, &rq[1]));
    MPI_CHECK(MPI_Request_free(&rq[0]));
    MPI_CHECK(MPI_Request_free(&rq[1]));
    CHECK(rq[0] == MPI_REQUEST_NULL && rq[1] == MPI_REQUEST_NULL, "Request_free of inactive");

    /* PROC_NULL persistent requests complete at once, repeatedly */
    MPI_CHECK(MPI_Send_init(buf, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &rq[0]));
    MPI_CHECK(MPI_Recv_init(buf, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &rq[1]));
    MPI_CHECK(MPI_Ssend_init(buf, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &rq[2]));
    MPI_CHECK(MPI_Rsend_init(buf, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &rq[3]));
    for (int it = 0; it < 5; it++) {
        MPI_Status st[4];
        MPI_CHECK(MPI_Startall(4, rq));
        MPI_CHECK(MPI_Waitall(4, rq, st));
        /* MPICH < 4.2 returns an empty status here (pmodels/mpich#6805) */
        if (!mtest_known_bug("proc_null_nb_status"))
            CHECK(st[1].MPI_SOURCE == MPI_PROC_NULL && st[1].MPI_TAG == MPI_ANY_TAG,
                  "persistent PROC_NULL recv status %d/%d", st[1].MPI_SOURCE, st[1].MPI_TAG);
    }
    for (int i = 0; i < 4; i++)
        MPI_CHECK(MPI_Request_free(&rq[i]));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size >= 2, "needs at least 2 ranks, got %d", size);

    test_send_recv_init(0, 10);
    test_send_recv_init(8, 200);
    test_send_recv_init(20000, 50);
    test_send_recv_init(1048576, 10);
    MPI_Barrier(MPI_COMM_WORLD);
    test_modes(4, 50);
    test_modes(100000, 10);
    test_modes(1048576, 4);
    MPI_Barrier(MPI_COMM_WORLD);
    test_wildcard();
    MPI_Barrier(MPI_COMM_WORLD);
    test_free_inactive_and_null();
    return mtest_finalize();
}
