/* Probe / Iprobe / Mprobe / Improbe / Mrecv / Imrecv.
 *  - Probe and Iprobe report source, tag and count before the receive, for
 *    small and large messages; probing does not consume the message;
 *  - Iprobe for a message that was never sent returns flag = 0;
 *  - Mprobe / Improbe remove the message from matching: a later Recv or Probe
 *    with the same envelope gets the next message, and Mrecv / Imrecv then
 *    deliver the probed one;
 *  - probing MPI_PROC_NULL returns MPI_MESSAGE_NO_PROC, and Mrecv on it
 *    completes at once with a PROC_NULL status.
 * Uses ranks 0 and 1. */
#include "mtest.h"

static int rank, size;

static void test_probe_count(void)
{
    const int sizes[] = { 0, 1, 10, 4096, 100000, 1048576 };
    if (rank == 1) {
        for (int s = 0; s < 6; s++) {
            int n = sizes[s];
            char *b = mtest_malloc((size_t)n);
            mtest_fill(b, (size_t)n, 10u + (unsigned)s);
            MPI_CHECK(MPI_Send(b, n, MPI_BYTE, 0, 20 + s, MPI_COMM_WORLD));
            free(b);
        }
        /* doubles for Get_count with a typed probe */
        double d[5] = { 1, 2, 3, 4, 5 };
        MPI_CHECK(MPI_Send(d, 5, MPI_DOUBLE, 0, 30, MPI_COMM_WORLD));
    } else if (rank == 0) {
        for (int s = 0; s < 6; s++) {
            MPI_Status st;
            int n = -1, flag = 0;
            if (s % 2 == 0) {
                MPI_CHECK(MPI_Probe(1, 20 + s, MPI_COMM_WORLD, &st));
            } else {
                while (!flag)
                    MPI_CHECK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
            }
            CHECK(st.MPI_SOURCE == 1 && st.MPI_TAG == 20 + s, "probe status %d/%d, want 1/%d", st.MPI_SOURCE,
                  st.MPI_TAG, 20 + s);
            MPI_CHECK(MPI_Get_count(&st, MPI_BYTE, &n));
            CHECK(n == sizes[s], "probe count %d, want %d", n, sizes[s]);
            /* a second probe sees the same message */
            MPI_Status st2;
            MPI_CHECK(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st2));
            int n2 = -1;
            MPI_CHECK(MPI_Get_count(&st2, MPI_BYTE, &n2));
            CHECK(st2.MPI_TAG == 20 + s && n2 == n, "re-probe saw tag %d count %d", st2.MPI_TAG, n2);
            char *b = mtest_malloc((size_t)n);
            MPI_CHECK(MPI_Recv(b, n, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, &st2));
            CHECK_PATTERN(b, n, 10u + (unsigned)s, "probed message payload");
            free(b);
        }
        MPI_Status st;
        int n = -1;
        MPI_CHECK(MPI_Probe(1, 30, MPI_COMM_WORLD, &st));
        MPI_CHECK(MPI_Get_count(&st, MPI_DOUBLE, &n));
        CHECK(n == 5, "probe Get_count(MPI_DOUBLE) = %d, want 5", n);
        MPI_CHECK(MPI_Get_count(&st, MPI_INT, &n));
        CHECK(n == (int)(5 * sizeof(double) / sizeof(int)), "probe Get_count(MPI_INT) = %d", n);
        double d[5];
        MPI_CHECK(MPI_Recv(d, 5, MPI_DOUBLE, 1, 30, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(d[0] == 1 && d[4] == 5, "double payload");
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* Nothing was sent with tag 777: Iprobe must say so (repeatedly) */
    for (int i = 0; i < 100; i++) {
        int flag = 1;
        MPI_Status st;
        MPI_CHECK(MPI_Iprobe(MPI_ANY_SOURCE, 777, MPI_COMM_WORLD, &flag, &st));
        CHECK(!flag, "Iprobe found a message that was never sent");
        flag = 1;
        MPI_CHECK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
        CHECK(!flag, "Iprobe(ANY, ANY) found a message when none is pending");
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static void test_mprobe(void)
{
    if (rank == 1) {
        int a = 111, b = 222, c = 333, d = 444;
        char *big = mtest_malloc(1048576);
        mtest_fill(big, 1048576, 55);
        MPI_CHECK(MPI_Send(&a, 1, MPI_INT, 0, 5, MPI_COMM_WORLD));
        MPI_CHECK(MPI_Send(&b, 1, MPI_INT, 0, 5, MPI_COMM_WORLD));
        MPI_CHECK(MPI_Send(&c, 1, MPI_INT, 0, 5, MPI_COMM_WORLD));
        MPI_CHECK(MPI_Send(&d, 1, MPI_INT, 0, 5, MPI_COMM_WORLD));
        MPI_Request rq;
        MPI_CHECK(MPI_Isend(big, 1048576, MPI_BYTE, 0, 6, MPI_COMM_WORLD, &rq));
        MPI_CHECK(MPI_Send(&a, 1, MPI_INT, 0, 6, MPI_COMM_WORLD));
        MPI_CHECK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        free(big);
    } else if (rank == 0) {
        MPI_Message m1 = MPI_MESSAGE_NULL, m2 = MPI_MESSAGE_NULL;
        MPI_Status st;
        int v = 0, n = -1, flag = 0;

        MPI_CHECK(MPI_Mprobe(1, 5, MPI_COMM_WORLD, &m1, &st));
        CHECK(m1 != MPI_MESSAGE_NULL && m1 != MPI_MESSAGE_NO_PROC, "Mprobe gave no message");
        CHECK(st.MPI_SOURCE == 1 && st.MPI_TAG == 5, "Mprobe status %d/%d", st.MPI_SOURCE, st.MPI_TAG);
        MPI_CHECK(MPI_Get_count(&st, MPI_INT, &n));
        CHECK(n == 1, "Mprobe count %d", n);
        /* the matched message (111) cannot be stolen by a later receive */
        MPI_CHECK(MPI_Recv(&v, 1, MPI_INT, 1, 5, MPI_COMM_WORLD, &st));
        CHECK(v == 222, "Recv after Mprobe got %d, want 222 (matched message stolen?)", v);
        /* nor seen by a probe */
        MPI_CHECK(MPI_Probe(MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, &st));
        /* improbe the next one (333) */
        while (!flag)
            MPI_CHECK(MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &m2, &st));
        CHECK(m2 != MPI_MESSAGE_NULL && st.MPI_TAG == 5, "Improbe message / tag %d", st.MPI_TAG);
        MPI_CHECK(MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
        CHECK(v == 444, "ANY_SOURCE Recv after Improbe got %d, want 444", v);
        /* now receive the matched ones, in reverse order */
        MPI_Request rq;
        v = 0;
        MPI_CHECK(MPI_Imrecv(&v, 1, MPI_INT, &m2, &rq));
        CHECK(m2 == MPI_MESSAGE_NULL, "Imrecv did not set message to MPI_MESSAGE_NULL");
        MPI_CHECK(MPI_Wait(&rq, &st));
        CHECK(v == 333, "Imrecv got %d, want 333", v);
        CHECK(st.MPI_SOURCE == 1 && st.MPI_TAG == 5, "Imrecv status %d/%d", st.MPI_SOURCE, st.MPI_TAG);
        v = 0;
        MPI_CHECK(MPI_Mrecv(&v, 1, MPI_INT, &m1, &st));
        CHECK(m1 == MPI_MESSAGE_NULL, "Mrecv did not set message to MPI_MESSAGE_NULL");
        CHECK(v == 111, "Mrecv got %d, want 111", v);
        CHECK(st.MPI_SOURCE == 1 && st.MPI_TAG == 5, "Mrecv status %d/%d", st.MPI_SOURCE, st.MPI_TAG);

        /* large message through Mprobe + Mrecv; the small one behind it
         * (same tag) is received first with a plain Recv */
        char *big = mtest_malloc(1048576);
        MPI_CHECK(MPI_Mprobe(1, 6, MPI_COMM_WORLD, &m1, &st));
        MPI_CHECK(MPI_Get_count(&st, MPI_BYTE, &n));
        CHECK(n == 1048576, "Mprobe large count %d", n);
        v = 0;
        MPI_CHECK(MPI_Recv(&v, 1, MPI_INT, 1, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(v == 111, "Recv behind large Mprobe got %d", v);
        MPI_CHECK(MPI_Mrecv(big, n, MPI_BYTE, &m1, &st));
        MPI_CHECK(MPI_Get_count(&st, MPI_BYTE, &n));
        CHECK(n == 1048576, "Mrecv large count %d", n);
        CHECK_PATTERN(big, 1048576, 55, "Mrecv large payload");
        free(big);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static void test_proc_null(void)
{
    MPI_Message m = MPI_MESSAGE_NULL;
    MPI_Status st;
    int flag = 0, buf = 5;

    MPI_CHECK(MPI_Probe(MPI_PROC_NULL, 3, MPI_COMM_WORLD, &st));
    mtest_check_null_status(&st, "Probe(PROC_NULL)");
    MPI_CHECK(MPI_Iprobe(MPI_PROC_NULL, 3, MPI_COMM_WORLD, &flag, &st));
    CHECK(flag, "Iprobe(PROC_NULL) flag false");
    mtest_check_null_status(&st, "Iprobe(PROC_NULL)");

    MPI_CHECK(MPI_Mprobe(MPI_PROC_NULL, 3, MPI_COMM_WORLD, &m, &st));
    CHECK(m == MPI_MESSAGE_NO_PROC, "Mprobe(PROC_NULL) did not return MPI_MESSAGE_NO_PROC");
    mtest_check_null_status(&st, "Mprobe(PROC_NULL)");
    MPI_CHECK(MPI_Mrecv(&buf, 1, MPI_INT, &m, &st));
    CHECK(m == MPI_MESSAGE_NULL, "Mrecv(NO_PROC) did not set MPI_MESSAGE_NULL");
    CHECK(buf == 5, "Mrecv(NO_PROC) wrote the buffer");
    mtest_check_null_status(&st, "Mrecv(NO_PROC)");

    flag = 0;
    m = MPI_MESSAGE_NULL;
    MPI_CHECK(MPI_Improbe(MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &m, &st));
    CHECK(flag, "Improbe(PROC_NULL) flag false");
    CHECK(m == MPI_MESSAGE_NO_PROC, "Improbe(PROC_NULL) did not return MPI_MESSAGE_NO_PROC");
    MPI_Request rq;
    MPI_CHECK(MPI_Imrecv(&buf, 1, MPI_INT, &m, &rq));
    CHECK(m == MPI_MESSAGE_NULL, "Imrecv(NO_PROC) did not set MPI_MESSAGE_NULL");
    MPI_CHECK(MPI_Wait(&rq, &st));
    mtest_check_null_status(&st, "Imrecv(NO_PROC)");
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Mprobe with ANY_SOURCE from every other rank; everyone sends to rank 0. */
static void test_mprobe_anysource(void)
{
    if (rank == 0) {
        int *seen = mtest_malloc(sizeof(int) * (size_t)size);
        MPI_Message *msgs = mtest_malloc(sizeof(MPI_Message) * (size_t)size);
        for (int i = 0; i < size; i++)
            seen[i] = -1;
        /* probe all first, then receive all: probed messages stay put */
        for (int i = 1; i < size; i++) {
            MPI_Status st;
            MPI_CHECK(MPI_Mprobe(MPI_ANY_SOURCE, 9, MPI_COMM_WORLD, &msgs[i], &st));
            CHECK(st.MPI_SOURCE >= 1 && st.MPI_SOURCE < size && seen[st.MPI_SOURCE] == -1,
                  "Mprobe ANY_SOURCE gave source %d twice or out of range", st.MPI_SOURCE);
            seen[st.MPI_SOURCE] = i;
        }
        int flag = 1;
        MPI_CHECK(MPI_Iprobe(MPI_ANY_SOURCE, 9, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
        CHECK(!flag, "Iprobe sees a message that was already matched by Mprobe");
        for (int s = 1; s < size; s++) {
            int v[2] = { 0, 0 };
            MPI_Status st;
            MPI_CHECK(MPI_Mrecv(v, 2, MPI_INT, &msgs[seen[s]], &st));
            CHECK(v[0] == s && v[1] == s * s, "Mrecv from %d got %d/%d", s, v[0], v[1]);
            CHECK(st.MPI_SOURCE == s, "Mrecv status source %d, want %d", st.MPI_SOURCE, s);
        }
        free(seen);
        free(msgs);
    } else {
        int v[2] = { rank, rank * rank };
        MPI_CHECK(MPI_Send(v, 2, MPI_INT, 0, 9, MPI_COMM_WORLD));
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size >= 2, "needs at least 2 ranks, got %d", size);

    test_probe_count();
    test_mprobe();
    test_proc_null();
    test_mprobe_anysource();
    return mtest_finalize();
}
