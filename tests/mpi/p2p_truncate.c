/* Truncation and counts, with MPI_ERRORS_RETURN set on MPI_COMM_WORLD:
 *  - a message longer than the receive buffer gives an error of class
 *    MPI_ERR_TRUNCATE, for eager (16 B) and large (1 MiB) messages, with
 *    Recv, Irecv+Wait, Mrecv, ANY_SOURCE; the sender is not affected and the
 *    truncated message is consumed (the next receive gets the next message);
 *  - Waitall / Waitsome / Testall with one truncated request return
 *    MPI_ERR_IN_STATUS and the per-request status.MPI_ERROR says which;
 *  - Get_count / Get_elements for exact and non-multiple sizes
 *    (MPI_UNDEFINED).
 * Uses ranks 0 and 1. */
#include "mtest.h"

static int rank, size;

static void sync_pair(void)
{
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
}

static void test_truncate_blocking(int n, int cap, int tag)
{
    if (rank == 1) {
        char *b = mtest_malloc((size_t)n);
        mtest_fill(b, (size_t)n, (unsigned)tag);
        int rc = MPI_Send(b, n, MPI_BYTE, 0, tag, MPI_COMM_WORLD);
        CHECK(rc == MPI_SUCCESS, "sender of a truncated message got error %d (%s)", rc, mtest_errstr(rc));
        /* a follow-up message that must arrive intact */
        int v = tag * 3;
        MPI_CHECK(MPI_Send(&v, 1, MPI_INT, 0, tag, MPI_COMM_WORLD));
        free(b);
    } else if (rank == 0) {
        char *b = mtest_malloc((size_t)cap + 16);
        MPI_Status st;
        memset(b, 0x3c, (size_t)cap + 16);
        int rc = MPI_Recv(b, cap, MPI_BYTE, 1, tag, MPI_COMM_WORLD, &st);
        char what[64];
        snprintf(what, sizeof what, "Recv of %d bytes into %d", n, cap);
        CHECK_ERRCLASS(rc, MPI_ERR_TRUNCATE, what);
        for (int i = cap; i < cap + 16; i++)
            CHECK((unsigned char)b[i] == 0x3c, "%s: wrote past the buffer (byte %d)", what, i);
        /* the truncated message is gone: the next receive gets the int */
        int v = -1;
        MPI_CHECK(MPI_Recv(&v, 1, MPI_INT, 1, tag, MPI_COMM_WORLD, &st));
        CHECK(v == tag * 3, "after truncation got %d, want %d", v, tag * 3);
        free(b);
    }
    sync_pair();
}

static void test_truncate_nonblocking(int n, int cap, int tag)
{
    if (rank == 1) {
        char *b = mtest_malloc((size_t)n);
        mtest_fill(b, (size_t)n, (unsigned)tag);
        /* 1: Irecv+Wait, 2: ANY_SOURCE Irecv + Test, 3: Mprobe+Mrecv */
        for (int k = 0; k < 3; k++)
            MPI_CHECK(MPI_Send(b, n, MPI_BYTE, 0, tag + k, MPI_COMM_WORLD));
        free(b);
    } else if (rank == 0) {
        char *b = mtest_malloc((size_t)cap);
        MPI_Request rq;
        MPI_Status st;
        MPI_Message m;
        int rc, flag = 0;
        MPI_CHECK(MPI_Irecv(b, cap, MPI_BYTE, 1, tag, MPI_COMM_WORLD, &rq));
        rc = MPI_Wait(&rq, &st);
        CHECK_ERRCLASS(rc, MPI_ERR_TRUNCATE, "Irecv+Wait");
        CHECK(rq == MPI_REQUEST_NULL, "Wait with an error did not free the request");

        MPI_CHECK(MPI_Irecv(b, cap, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &rq));
        rc = MPI_SUCCESS;
        while (!flag && rc == MPI_SUCCESS)
            rc = MPI_Test(&rq, &flag, &st);
        CHECK_ERRCLASS(rc, MPI_ERR_TRUNCATE, "ANY_SOURCE Irecv+Test");

        MPI_CHECK(MPI_Mprobe(1, tag + 2, MPI_COMM_WORLD, &m, &st));
        int cnt;
        MPI_CHECK(MPI_Get_count(&st, MPI_BYTE, &cnt));
        CHECK(cnt == n, "Mprobe count %d, want %d", cnt, n);
        rc = MPI_Mrecv(b, cap, MPI_BYTE, &m, &st);
        CHECK_ERRCLASS(rc, MPI_ERR_TRUNCATE, "Mrecv");
        free(b);
    }
    sync_pair();
}

static void test_in_status(int n, int cap)
{
    if (rank == 1) {
        char *b = mtest_malloc((size_t)n);
        mtest_fill(b, (size_t)n, 77);
        for (int round = 0; round < 3; round++) {
            MPI_CHECK(MPI_Send(b, 4, MPI_BYTE, 0, 1, MPI_COMM_WORLD));
            MPI_CHECK(MPI_Send(b, n, MPI_BYTE, 0, 2, MPI_COMM_WORLD));
            MPI_CHECK(MPI_Send(b, 4, MPI_BYTE, 0, 3, MPI_COMM_WORLD));
        }
        free(b);
    } else if (rank == 0) {
        char small1[8], small3[8];
        char *b = mtest_malloc((size_t)cap);
        for (int round = 0; round < 3; round++) {
            MPI_Request rq[3];
            MPI_Status st[3];
            int rc;
            for (int i = 0; i < 3; i++)
                st[i].MPI_ERROR = -12345;
            MPI_CHECK(MPI_Irecv(small1, 8, MPI_BYTE, 1, 1, MPI_COMM_WORLD, &rq[0]));
            MPI_CHECK(MPI_Irecv(b, cap, MPI_BYTE, 1, 2, MPI_COMM_WORLD, &rq[1]));
            MPI_CHECK(MPI_Irecv(small3, 8, MPI_BYTE, 1, 3, MPI_COMM_WORLD, &rq[2]));
            if (round == 0) {
                rc = MPI_Waitall(3, rq, st);
                CHECK(rc == MPI_ERR_IN_STATUS, "Waitall with a truncated request returned %d (%s)", rc,
                      mtest_errstr(rc));
                CHECK_ERRCLASS(st[1].MPI_ERROR, MPI_ERR_TRUNCATE, "Waitall status[1].MPI_ERROR");
                /* the others either completed (MPI_SUCCESS) or, if the
                 * implementation stopped at the error, are MPI_ERR_PENDING
                 * and still active */
                for (int i = 0; i < 3; i += 2) {
                    CHECK(st[i].MPI_ERROR == MPI_SUCCESS || st[i].MPI_ERROR == MPI_ERR_PENDING,
                          "Waitall status[%d].MPI_ERROR = %d (%s)", i, st[i].MPI_ERROR, mtest_errstr(st[i].MPI_ERROR));
                    if (st[i].MPI_ERROR == MPI_ERR_PENDING) {
                        CHECK(rq[i] != MPI_REQUEST_NULL, "pending request %d was freed", i);
                        MPI_CHECK(MPI_Wait(&rq[i], &st[i]));
                    } else {
                        CHECK(rq[i] == MPI_REQUEST_NULL, "completed request %d not freed", i);
                    }
                }
                CHECK(st[0].MPI_TAG == 1 && st[2].MPI_TAG == 3, "Waitall statuses tags %d %d", st[0].MPI_TAG,
                      st[2].MPI_TAG);
                CHECK(!memcmp(small1, small3, 4), "small payloads differ");
            } else if (round == 1) {
                int flag = 0;
                rc = MPI_SUCCESS;
                while (!flag && rc == MPI_SUCCESS)
                    rc = MPI_Testall(3, rq, &flag, st);
                CHECK(rc == MPI_ERR_IN_STATUS, "Testall with a truncated request returned %d (%s)", rc,
                      mtest_errstr(rc));
                CHECK_ERRCLASS(st[1].MPI_ERROR, MPI_ERR_TRUNCATE, "Testall status[1].MPI_ERROR");
                /* requests may or may not have been completed; wait for the rest */
                for (int i = 0; i < 3; i++)
                    if (i != 1 && rq[i] != MPI_REQUEST_NULL)
                        MPI_CHECK(MPI_Wait(&rq[i], MPI_STATUS_IGNORE));
                if (rq[1] != MPI_REQUEST_NULL)
                    (void)MPI_Wait(&rq[1], MPI_STATUS_IGNORE);
            } else {
                int done = 0, out, idx[3], truncs = 0;
                while (done < 3) {
                    rc = MPI_Waitsome(3, rq, &out, idx, st);
                    CHECK(out != MPI_UNDEFINED, "Waitsome: no active requests after %d", done);
                    if (rc == MPI_ERR_IN_STATUS) {
                        for (int j = 0; j < out; j++) {
                            if (idx[j] == 1) {
                                CHECK_ERRCLASS(st[j].MPI_ERROR, MPI_ERR_TRUNCATE, "Waitsome status.MPI_ERROR");
                                truncs++;
                            } else {
                                CHECK(st[j].MPI_ERROR == MPI_SUCCESS, "Waitsome: request %d error %d", idx[j],
                                      st[j].MPI_ERROR);
                            }
                        }
                    } else {
                        CHECK(rc == MPI_SUCCESS, "Waitsome returned %d (%s)", rc, mtest_errstr(rc));
                        for (int j = 0; j < out; j++)
                            CHECK(idx[j] != 1, "Waitsome completed the truncated request "
                                               "without MPI_ERR_IN_STATUS");
                    }
                    done += out;
                }
                CHECK(truncs == 1, "Waitsome reported %d truncations", truncs);
            }
        }
        free(b);
    }
    sync_pair();
}

static void test_counts(void)
{
    if (rank == 1) {
        int v[4] = { 1, 2, 3, 4 };
        MPI_CHECK(MPI_Send(v, 3, MPI_INT, 0, 1, MPI_COMM_WORLD));
        MPI_CHECK(MPI_Send(v, 4, MPI_INT, 0, 2, MPI_COMM_WORLD));
        MPI_CHECK(MPI_Send(v, 0, MPI_INT, 0, 3, MPI_COMM_WORLD));
        char c[10] = { 0 };
        MPI_CHECK(MPI_Send(c, 10, MPI_BYTE, 0, 4, MPI_COMM_WORLD));
        double d[3] = { 1, 2, 3 };
        MPI_CHECK(MPI_Send(d, 3, MPI_DOUBLE, 0, 5, MPI_COMM_WORLD));
    } else if (rank == 0) {
        int v[4], n;
        MPI_Status st;
        /* 3 ints received as MPI_2INT: not a whole number of pairs */
        MPI_CHECK(MPI_Recv(v, 2, MPI_2INT, 1, 1, MPI_COMM_WORLD, &st));
        MPI_CHECK(MPI_Get_count(&st, MPI_2INT, &n));
        CHECK(n == MPI_UNDEFINED, "Get_count(3 ints as MPI_2INT) = %d, want MPI_UNDEFINED", n);
        /* (Get_elements on MPI_2INT for a partial pair is left out: MPICH
         * and Open MPI both return MPI_UNDEFINED rather than 3.) */
        CHECK(v[0] == 1 && v[1] == 2 && v[2] == 3, "2INT payload");
        /* 4 ints as MPI_2INT: exact */
        MPI_CHECK(MPI_Recv(v, 2, MPI_2INT, 1, 2, MPI_COMM_WORLD, &st));
        MPI_CHECK(MPI_Get_count(&st, MPI_2INT, &n));
        CHECK(n == 2, "Get_count(4 ints as MPI_2INT) = %d, want 2", n);
        MPI_CHECK(MPI_Get_elements(&st, MPI_2INT, &n));
        /* Open MPI 4.1 counts pairs, not basic elements, here */
        if (!mtest_known_bug("get_elements_pair"))
            CHECK(n == 4, "Get_elements(4 ints as MPI_2INT) = %d, want 4", n);
        MPI_CHECK(MPI_Get_count(&st, MPI_INT, &n));
        CHECK(n == 4, "Get_count(MPI_INT) of 16 bytes = %d", n);
        /* empty */
        MPI_CHECK(MPI_Recv(v, 4, MPI_INT, 1, 3, MPI_COMM_WORLD, &st));
        MPI_CHECK(MPI_Get_count(&st, MPI_INT, &n));
        CHECK(n == 0, "Get_count(empty) = %d", n);
        MPI_CHECK(MPI_Get_elements(&st, MPI_INT, &n));
        CHECK(n == 0, "Get_elements(empty) = %d", n);
        /* 10 bytes */
        char c[16];
        MPI_CHECK(MPI_Recv(c, 16, MPI_BYTE, 1, 4, MPI_COMM_WORLD, &st));
        MPI_CHECK(MPI_Get_count(&st, MPI_BYTE, &n));
        CHECK(n == 10, "Get_count(10 bytes) = %d", n);
        MPI_CHECK(MPI_Get_elements(&st, MPI_BYTE, &n));
        CHECK(n == 10, "Get_elements(10 bytes) = %d", n);
        MPI_CHECK(MPI_Get_count(&st, MPI_INT, &n));
        CHECK(n == MPI_UNDEFINED, "Get_count(10 bytes as MPI_INT) = %d, want MPI_UNDEFINED", n);
        MPI_CHECK(MPI_Get_elements(&st, MPI_INT, &n));
        CHECK(n == MPI_UNDEFINED, "Get_elements(10 bytes as MPI_INT) = %d, want MPI_UNDEFINED", n);
        MPI_Count nc = -1;
        MPI_CHECK(MPI_Get_elements_x(&st, MPI_BYTE, &nc));
        CHECK(nc == 10, "Get_elements_x(10 bytes) = %lld", (long long)nc);
        /* doubles */
        double d[3];
        MPI_CHECK(MPI_Recv(d, 3, MPI_DOUBLE, 1, 5, MPI_COMM_WORLD, &st));
        MPI_CHECK(MPI_Get_count(&st, MPI_DOUBLE, &n));
        CHECK(n == 3, "Get_count(3 doubles) = %d", n);
        MPI_CHECK(MPI_Get_count(&st, MPI_BYTE, &n));
        CHECK(n == (int)(3 * sizeof(double)), "Get_count(3 doubles as bytes) = %d", n);
    }
    sync_pair();
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size >= 2, "needs at least 2 ranks, got %d", size);
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_Errhandler eh;
    MPI_CHECK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh));
    CHECK(eh == MPI_ERRORS_RETURN, "Comm_get_errhandler did not return MPI_ERRORS_RETURN");

    test_truncate_blocking(16, 8, 100);
    test_truncate_blocking(1, 0, 101);
    test_truncate_blocking(1048576, 524288, 102);
    test_truncate_blocking(1048576, 1048575, 103);
    test_truncate_blocking(70000, 16, 104);
    test_truncate_nonblocking(16, 15, 200);
    test_truncate_nonblocking(1048576, 1000, 210);
    test_in_status(16, 8);
    test_in_status(1048576, 4096);
    test_counts();
    return mtest_finalize();
}
