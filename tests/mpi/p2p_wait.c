/* Completion functions: Wait/Test, Waitany/Testany, Waitall/Testall,
 * Waitsome/Testsome with MPI_REQUEST_NULL entries and all-null arrays,
 * empty statuses, Request_free of an active send, Cancel of a pending receive
 * (Test_cancelled true) and of a completed one (false), Request_get_status.
 * Uses ranks 0 and 1. */
#include "mtest.h"

static int rank, size;

static void check_empty(const MPI_Status *st, const char *what)
{
    int n = -1, c = -1;
    CHECK(st->MPI_SOURCE == MPI_ANY_SOURCE, "%s: empty status source %d, want MPI_ANY_SOURCE", what, st->MPI_SOURCE);
    CHECK(st->MPI_TAG == MPI_ANY_TAG, "%s: empty status tag %d, want MPI_ANY_TAG", what, st->MPI_TAG);
    MPI_CHECK(MPI_Get_count(st, MPI_INT, &n));
    CHECK(n == 0, "%s: empty status count %d", what, n);
    MPI_CHECK(MPI_Test_cancelled(st, &c));
    CHECK(!c, "%s: empty status says cancelled", what);
}

static void test_null_requests(void)
{
    MPI_Request r = MPI_REQUEST_NULL, ra[4];
    MPI_Status st, sta[4];
    int flag = 0, idx = 0, out = 0, idxs[4];

    memset(&st, 0x77, sizeof st);
    MPI_CHECK(MPI_Wait(&r, &st));
    check_empty(&st, "Wait(REQUEST_NULL)");
    memset(&st, 0x77, sizeof st);
    MPI_CHECK(MPI_Test(&r, &flag, &st));
    CHECK(flag, "Test(REQUEST_NULL) flag false");
    check_empty(&st, "Test(REQUEST_NULL)");

    for (int i = 0; i < 4; i++)
        ra[i] = MPI_REQUEST_NULL;
    memset(&st, 0x77, sizeof st);
    MPI_CHECK(MPI_Waitany(4, ra, &idx, &st));
    CHECK(idx == MPI_UNDEFINED, "Waitany(all null) index %d, want MPI_UNDEFINED", idx);
    check_empty(&st, "Waitany(all null)");
    flag = 0;
    idx = 0;
    MPI_CHECK(MPI_Testany(4, ra, &idx, &flag, &st));
    CHECK(flag, "Testany(all null) flag false");
    CHECK(idx == MPI_UNDEFINED, "Testany(all null) index %d", idx);
    MPI_CHECK(MPI_Waitany(0, NULL, &idx, MPI_STATUS_IGNORE));
    CHECK(idx == MPI_UNDEFINED, "Waitany(count 0) index %d", idx);

    MPI_CHECK(MPI_Waitall(4, ra, sta));
    for (int i = 0; i < 4; i++)
        check_empty(&sta[i], "Waitall(all null)");
    flag = 0;
    MPI_CHECK(MPI_Testall(4, ra, &flag, sta));
    CHECK(flag, "Testall(all null) flag false");
    MPI_CHECK(MPI_Waitall(0, NULL, MPI_STATUSES_IGNORE));

    out = 0;
    MPI_CHECK(MPI_Waitsome(4, ra, &out, idxs, sta));
    CHECK(out == MPI_UNDEFINED, "Waitsome(all null) outcount %d", out);
    out = 0;
    MPI_CHECK(MPI_Testsome(4, ra, &out, idxs, sta));
    CHECK(out == MPI_UNDEFINED, "Testsome(all null) outcount %d", out);
}

/* rank 1 sends the values 0..n-1 (one int each, tag = value) when told */
static void test_wait_test(void)
{
    if (rank == 1) {
        for (int round = 0; round < 5; round++) {
            MPI_CHECK(MPI_Recv(NULL, 0, MPI_BYTE, 0, 1000, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            for (int i = 0; i < 6; i++) {
                int v = round * 100 + i;
                MPI_CHECK(MPI_Send(&v, 1, MPI_INT, 0, i, MPI_COMM_WORLD));
            }
        }
        return;
    }
    if (rank != 0)
        return;
    int v[6];
    MPI_Request rq[6];
    MPI_Status st[6];
    int flag, idx, out, idxs[6];

    /* round 0: Test until done */
    for (int i = 0; i < 6; i++)
        MPI_CHECK(MPI_Irecv(&v[i], 1, MPI_INT, 1, i, MPI_COMM_WORLD, &rq[i]));
    flag = 1;
    MPI_CHECK(MPI_Testall(6, rq, &flag, st));
    CHECK(!flag, "Testall true before anything was sent");
    for (int i = 0; i < 6; i++)
        CHECK(rq[i] != MPI_REQUEST_NULL, "Testall(false) freed request %d", i);
    flag = 1;
    MPI_CHECK(MPI_Testany(6, rq, &idx, &flag, &st[0]));
    CHECK(!flag && idx == MPI_UNDEFINED, "Testany before send: flag %d idx %d", flag, idx);
    out = -5;
    MPI_CHECK(MPI_Testsome(6, rq, &out, idxs, st));
    CHECK(out == 0, "Testsome before send: outcount %d", out);
    MPI_CHECK(MPI_Send(NULL, 0, MPI_BYTE, 1, 1000, MPI_COMM_WORLD));
    for (int i = 0; i < 6; i++) {
        flag = 0;
        while (!flag)
            MPI_CHECK(MPI_Test(&rq[i], &flag, &st[i]));
        CHECK(rq[i] == MPI_REQUEST_NULL, "Test(true) left request");
        CHECK(v[i] == i && st[i].MPI_TAG == i && st[i].MPI_SOURCE == 1, "Test: v=%d tag=%d", v[i], st[i].MPI_TAG);
    }

    /* round 1: Waitany with null entries interleaved */
    MPI_Request rq2[9];
    int map[9];
    for (int i = 0, k = 0; i < 9; i++) {
        if (i % 3 == 1) {
            rq2[i] = MPI_REQUEST_NULL;
            map[i] = -1;
        } else {
            map[i] = k;
            MPI_CHECK(MPI_Irecv(&v[k], 1, MPI_INT, 1, k, MPI_COMM_WORLD, &rq2[i]));
            k++;
        }
    }
    MPI_CHECK(MPI_Send(NULL, 0, MPI_BYTE, 1, 1000, MPI_COMM_WORLD));
    int done = 0, seen = 0;
    while (1) {
        MPI_Status s1;
        MPI_CHECK(MPI_Waitany(9, rq2, &idx, &s1));
        if (idx == MPI_UNDEFINED)
            break;
        CHECK(idx >= 0 && idx < 9 && map[idx] >= 0, "Waitany returned index %d", idx);
        CHECK(rq2[idx] == MPI_REQUEST_NULL, "Waitany did not free request %d", idx);
        CHECK(!(seen & (1 << idx)), "Waitany returned index %d twice", idx);
        seen |= 1 << idx;
        CHECK(s1.MPI_TAG == map[idx] && v[map[idx]] == 100 + map[idx], "Waitany index %d: tag %d value %d", idx,
              s1.MPI_TAG, v[map[idx]]);
        done++;
    }
    CHECK(done == 6, "Waitany completed %d of 6", done);

    /* round 2: Testany loop */
    for (int i = 0; i < 6; i++)
        MPI_CHECK(MPI_Irecv(&v[i], 1, MPI_INT, 1, i, MPI_COMM_WORLD, &rq[i]));
    MPI_CHECK(MPI_Send(NULL, 0, MPI_BYTE, 1, 1000, MPI_COMM_WORLD));
    done = 0;
    while (1) {
        MPI_Status s1;
        flag = 0;
        MPI_CHECK(MPI_Testany(6, rq, &idx, &flag, &s1));
        if (!flag)
            continue;
        if (idx == MPI_UNDEFINED)
            break;
        CHECK(s1.MPI_TAG == idx && v[idx] == 200 + idx, "Testany %d: tag %d value %d", idx, s1.MPI_TAG, v[idx]);
        done++;
    }
    CHECK(done == 6, "Testany completed %d of 6", done);

    /* round 3: Waitsome / Testsome */
    for (int i = 0; i < 6; i++)
        MPI_CHECK(MPI_Irecv(&v[i], 1, MPI_INT, 1, i, MPI_COMM_WORLD, &rq[i]));
    MPI_CHECK(MPI_Send(NULL, 0, MPI_BYTE, 1, 1000, MPI_COMM_WORLD));
    done = 0;
    seen = 0;
    for (int iter = 0;; iter++) {
        if (iter % 2)
            MPI_CHECK(MPI_Waitsome(6, rq, &out, idxs, st));
        else
            MPI_CHECK(MPI_Testsome(6, rq, &out, idxs, st));
        if (out == MPI_UNDEFINED)
            break;
        CHECK(out >= 0 && out <= 6, "Waitsome outcount %d", out);
        if (iter % 2)
            CHECK(out >= 1, "Waitsome returned 0 completions with active requests");
        for (int j = 0; j < out; j++) {
            int i = idxs[j];
            CHECK(i >= 0 && i < 6 && !(seen & (1 << i)), "Waitsome index %d bad or repeated", i);
            seen |= 1 << i;
            CHECK(rq[i] == MPI_REQUEST_NULL, "Waitsome left request %d", i);
            CHECK(st[j].MPI_TAG == i && v[i] == 300 + i, "Waitsome %d: tag %d value %d", i, st[j].MPI_TAG, v[i]);
            done++;
        }
    }
    CHECK(done == 6, "Waitsome completed %d of 6", done);

    /* round 4: Waitall with null entries and statuses */
    MPI_Request rq3[8];
    MPI_Status st3[8];
    for (int i = 0; i < 8; i++)
        rq3[i] = MPI_REQUEST_NULL;
    for (int i = 0; i < 6; i++)
        MPI_CHECK(MPI_Irecv(&v[i], 1, MPI_INT, 1, i, MPI_COMM_WORLD, &rq3[i + 1]));
    MPI_CHECK(MPI_Send(NULL, 0, MPI_BYTE, 1, 1000, MPI_COMM_WORLD));
    MPI_CHECK(MPI_Waitall(8, rq3, st3));
    check_empty(&st3[0], "Waitall null entry 0");
    check_empty(&st3[7], "Waitall null entry 7");
    for (int i = 0; i < 6; i++) {
        CHECK(rq3[i + 1] == MPI_REQUEST_NULL, "Waitall left request");
        CHECK(st3[i + 1].MPI_TAG == i && st3[i + 1].MPI_SOURCE == 1 && v[i] == 400 + i, "Waitall %d: tag %d value %d",
              i, st3[i + 1].MPI_TAG, v[i]);
    }
}

static char freebuf[1 << 20];

static void test_request_free(void)
{
    if (rank == 0) {
        for (int i = 0; i < 3; i++) {
            MPI_Request rq;
            int n = i == 0 ? 16 : i == 1 ? 70000 : (int)sizeof freebuf;
            mtest_fill(freebuf, (size_t)n, 40u + (unsigned)i);
            MPI_CHECK(MPI_Isend(freebuf, n, MPI_BYTE, 1, 50, MPI_COMM_WORLD, &rq));
            MPI_CHECK(MPI_Request_free(&rq));
            CHECK(rq == MPI_REQUEST_NULL, "Request_free did not set MPI_REQUEST_NULL");
            /* the receiver acknowledges; only then is the buffer reused */
            MPI_CHECK(MPI_Recv(NULL, 0, MPI_BYTE, 1, 51, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        }
    } else if (rank == 1) {
        char *b = mtest_malloc(sizeof freebuf);
        for (int i = 0; i < 3; i++) {
            int n = i == 0 ? 16 : i == 1 ? 70000 : (int)sizeof freebuf, got;
            MPI_Status st;
            MPI_CHECK(MPI_Recv(b, (int)sizeof freebuf, MPI_BYTE, 0, 50, MPI_COMM_WORLD, &st));
            MPI_CHECK(MPI_Get_count(&st, MPI_BYTE, &got));
            CHECK(got == n, "freed-request message has %d bytes, want %d", got, n);
            CHECK_PATTERN(b, n, 40u + (unsigned)i, "freed-request message");
            MPI_CHECK(MPI_Send(NULL, 0, MPI_BYTE, 0, 51, MPI_COMM_WORLD));
        }
        free(b);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static void test_cancel(void)
{
    if (rank == 0) {
        int v = -1, c = -1;
        MPI_Request rq;
        MPI_Status st;
        /* cancel a receive that can never match */
        MPI_CHECK(MPI_Irecv(&v, 1, MPI_INT, 1, 60, MPI_COMM_WORLD, &rq));
        MPI_CHECK(MPI_Cancel(&rq));
        MPI_CHECK(MPI_Wait(&rq, &st));
        CHECK(rq == MPI_REQUEST_NULL, "Wait on cancelled request left it");
        MPI_CHECK(MPI_Test_cancelled(&st, &c));
        CHECK(c, "Test_cancelled false for a cancelled pending receive");
        CHECK(v == -1, "cancelled receive wrote the buffer");

        /* cancel + Test loop, ANY_SOURCE */
        MPI_CHECK(MPI_Irecv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 60, MPI_COMM_WORLD, &rq));
        MPI_CHECK(MPI_Cancel(&rq));
        int flag = 0;
        while (!flag)
            MPI_CHECK(MPI_Test(&rq, &flag, &st));
        MPI_CHECK(MPI_Test_cancelled(&st, &c));
        CHECK(c, "Test_cancelled false for a cancelled ANY_SOURCE receive");

        /* now the message with tag 60 is sent: it must go to the new
         * receive, not to a cancelled one */
        MPI_CHECK(MPI_Send(NULL, 0, MPI_BYTE, 1, 61, MPI_COMM_WORLD));
        MPI_CHECK(MPI_Recv(&v, 1, MPI_INT, 1, 60, MPI_COMM_WORLD, &st));
        CHECK(v == 4242, "receive after cancel got %d", v);
        MPI_CHECK(MPI_Test_cancelled(&st, &c));
        CHECK(!c, "normal receive status says cancelled");

        /* cancel of a receive that already completed has no effect */
        v = -1;
        MPI_CHECK(MPI_Irecv(&v, 1, MPI_INT, 1, 62, MPI_COMM_WORLD, &rq));
        MPI_CHECK(MPI_Send(NULL, 0, MPI_BYTE, 1, 61, MPI_COMM_WORLD));
        flag = 0;
        while (!flag)
            MPI_CHECK(MPI_Request_get_status(rq, &flag, MPI_STATUS_IGNORE));
        CHECK(rq != MPI_REQUEST_NULL, "Request_get_status freed the request");
        MPI_CHECK(MPI_Cancel(&rq));
        MPI_CHECK(MPI_Wait(&rq, &st));
        MPI_CHECK(MPI_Test_cancelled(&st, &c));
        CHECK(!c, "completed receive reported as cancelled");
        CHECK(v == 4343, "completed-then-cancelled receive has %d", v);
        CHECK(st.MPI_SOURCE == 1 && st.MPI_TAG == 62, "completed receive status %d/%d", st.MPI_SOURCE, st.MPI_TAG);

        /* a large receive cancelled before the send, then matched by a new one */
        char *big = mtest_malloc(1048576);
        MPI_CHECK(MPI_Irecv(big, 1048576, MPI_BYTE, 1, 63, MPI_COMM_WORLD, &rq));
        MPI_CHECK(MPI_Cancel(&rq));
        MPI_CHECK(MPI_Wait(&rq, &st));
        MPI_CHECK(MPI_Test_cancelled(&st, &c));
        CHECK(c, "large receive not cancelled");
        MPI_CHECK(MPI_Send(NULL, 0, MPI_BYTE, 1, 61, MPI_COMM_WORLD));
        MPI_CHECK(MPI_Recv(big, 1048576, MPI_BYTE, 1, 63, MPI_COMM_WORLD, &st));
        CHECK_PATTERN(big, 1048576, 63, "large receive after cancel");
        free(big);
    } else if (rank == 1) {
        int v = 4242;
        MPI_CHECK(MPI_Recv(NULL, 0, MPI_BYTE, 0, 61, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MPI_CHECK(MPI_Send(&v, 1, MPI_INT, 0, 60, MPI_COMM_WORLD));
        v = 4343;
        MPI_CHECK(MPI_Recv(NULL, 0, MPI_BYTE, 0, 61, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MPI_CHECK(MPI_Send(&v, 1, MPI_INT, 0, 62, MPI_COMM_WORLD));
        char *big = mtest_malloc(1048576);
        mtest_fill(big, 1048576, 63);
        MPI_CHECK(MPI_Recv(NULL, 0, MPI_BYTE, 0, 61, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MPI_CHECK(MPI_Send(big, 1048576, MPI_BYTE, 0, 63, MPI_COMM_WORLD));
        free(big);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Wait on a send request; Waitall mixing sends and receives; Testall until
 * done; the same request array reused. */
static void test_mixed(void)
{
    enum { N = 16 };
    if (rank >= 2) {
        MPI_Barrier(MPI_COMM_WORLD);
        return;
    }
    int peer = 1 - rank;
    static int sv[N], rv[N];
    MPI_Request rq[2 * N];
    for (int rep = 0; rep < 20; rep++) {
        for (int i = 0; i < N; i++) {
            sv[i] = rank * 1000000 + rep * 1000 + i;
            rv[i] = -1;
            MPI_CHECK(MPI_Irecv(&rv[i], 1, MPI_INT, peer, i, MPI_COMM_WORLD, &rq[2 * i]));
            MPI_CHECK(MPI_Isend(&sv[i], 1, MPI_INT, peer, i, MPI_COMM_WORLD, &rq[2 * i + 1]));
        }
        if (rep % 2) {
            MPI_CHECK(MPI_Waitall(2 * N, rq, MPI_STATUSES_IGNORE));
        } else {
            int flag = 0;
            while (!flag)
                MPI_CHECK(MPI_Testall(2 * N, rq, &flag, MPI_STATUSES_IGNORE));
        }
        for (int i = 0; i < 2 * N; i++)
            CHECK(rq[i] == MPI_REQUEST_NULL, "request %d not freed", i);
        for (int i = 0; i < N; i++)
            CHECK(rv[i] == peer * 1000000 + rep * 1000 + i, "mixed: rv[%d] = %d", i, rv[i]);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size >= 2, "needs at least 2 ranks, got %d", size);

    test_null_requests();
    MPI_Barrier(MPI_COMM_WORLD);
    test_wait_test();
    MPI_Barrier(MPI_COMM_WORLD);
    test_request_free();
    test_cancel();
    test_mixed();
    return mtest_finalize();
}
