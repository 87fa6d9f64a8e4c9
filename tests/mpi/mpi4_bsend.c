/* Buffered-send buffers of MPI 4.1 (3.6): the process's (MPI_Buffer_attach/detach/flush/
 * iflush), a communicator's (MPI_Comm_*_buffer) and a session's (MPI_Session_*_buffer), and
 * MPI_BUFFER_AUTOMATIC. A buffered send on a communicator uses the communicator's buffer, else
 * the process's; the tests make the other buffer too small, so that the wrong choice fails.
 * Ring over any number of ranks. */
#include "mtest.h"

#define N 1000 /* ints per message */

static void recv_check(int src, int tag, int seed, MPI_Comm comm, const char *what)
{
    int *in = mtest_malloc(N * sizeof(int));
    MPI_Status st;
    MPI_CHECK(MPI_Recv(in, N, MPI_INT, src, tag, comm, &st));
    int n = -1;
    MPI_CHECK(MPI_Get_count(&st, MPI_INT, &n));
    CHECK(n == N && st.MPI_SOURCE == src && st.MPI_TAG == tag, "%s: count %d source %d tag %d", what, n, st.MPI_SOURCE,
          st.MPI_TAG);
    for (int i = 0; i < N; i++)
        CHECK(in[i] == seed + i, "%s: data [%d] = %d", what, i, in[i]);
    free(in);
}

static void fill(int *v, int seed)
{
    for (int i = 0; i < N; i++)
        v[i] = seed + i;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int *v = mtest_malloc(N * sizeof(int));
    int one = N * (int)sizeof(int) + MPI_BSEND_OVERHEAD;
    void *b;
    int bsz;

    /* The process's buffer: two buffered sends, flush, nonblocking flush, detach. */
    {
        char *buf = mtest_malloc(2 * (size_t)one);
        MPI_CHECK(MPI_Buffer_attach(buf, 2 * one));
        fill(v, rank * 10000);
        MPI_CHECK(MPI_Bsend(v, N, MPI_INT, right, 1, MPI_COMM_WORLD));
        fill(v, rank * 10000 + 1); /* the data was copied at the call */
        MPI_Request r;
        MPI_CHECK(MPI_Ibsend(v, N, MPI_INT, right, 2, MPI_COMM_WORLD, &r));
        MPI_CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        fill(v, -5);
        recv_check(left, 1, left * 10000, MPI_COMM_WORLD, "Bsend through MPI_Buffer_attach");
        recv_check(left, 2, left * 10000 + 1, MPI_COMM_WORLD, "Ibsend through MPI_Buffer_attach");
        MPI_CHECK(MPI_Buffer_flush());
        /* after a flush the whole buffer is free again: two more messages fit */
        fill(v, 7);
        MPI_CHECK(MPI_Bsend(v, N, MPI_INT, right, 3, MPI_COMM_WORLD));
        MPI_CHECK(MPI_Bsend(v, N, MPI_INT, right, 4, MPI_COMM_WORLD));
        MPI_Request fr;
        MPI_CHECK(MPI_Buffer_iflush(&fr));
        recv_check(left, 3, 7, MPI_COMM_WORLD, "Bsend after MPI_Buffer_flush");
        recv_check(left, 4, 7, MPI_COMM_WORLD, "second Bsend after MPI_Buffer_flush");
        MPI_Status st;
        MPI_CHECK(MPI_Wait(&fr, &st));
        CHECK(fr == MPI_REQUEST_NULL, "MPI_Wait left the iflush request");
        MPI_CHECK(MPI_Buffer_detach(&b, &bsz));
        CHECK(b == buf && bsz == 2 * one, "MPI_Buffer_detach returned %p / %d", b, bsz);
        free(buf);
    }

    /* MPI_BUFFER_AUTOMATIC: any number of buffered sends; detach gives MPI_BUFFER_AUTOMATIC back. */
    {
        MPI_CHECK(MPI_Buffer_attach(MPI_BUFFER_AUTOMATIC, 0));
        for (int k = 0; k < 20; k++) {
            fill(v, 100 * k + rank);
            MPI_CHECK(MPI_Bsend(v, N, MPI_INT, right, 10 + k, MPI_COMM_WORLD));
        }
        for (int k = 0; k < 20; k++)
            recv_check(left, 10 + k, 100 * k + left, MPI_COMM_WORLD, "Bsend with MPI_BUFFER_AUTOMATIC");
        MPI_CHECK(MPI_Buffer_flush());
        MPI_CHECK(MPI_Buffer_detach(&b, &bsz));
        CHECK(b == MPI_BUFFER_AUTOMATIC, "MPI_Buffer_detach returned %p, not MPI_BUFFER_AUTOMATIC", b);
    }

    /* A communicator's buffer is used before the process's (which is too small here), only on
     * that communicator, and goes with MPI_Comm_detach_buffer. */
    {
        MPI_Comm dup;
        MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
        static char tiny[16];
        MPI_CHECK(MPI_Buffer_attach(tiny, sizeof tiny));
        char *cbuf = mtest_malloc(3 * (size_t)one);
        MPI_CHECK(MPI_Comm_attach_buffer(dup, cbuf, 3 * one));
        for (int k = 0; k < 3; k++) {
            fill(v, rank + 1000 * k);
            MPI_CHECK(MPI_Bsend(v, N, MPI_INT, right, 20 + k, dup));
        }
        MPI_CHECK(MPI_Comm_flush_buffer(dup));
        for (int k = 0; k < 3; k++)
            recv_check(left, 20 + k, left + 1000 * k, dup, "Bsend through MPI_Comm_attach_buffer");
        /* MPI_COMM_WORLD still has only the tiny process buffer */
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        int rc = MPI_Bsend(v, N, MPI_INT, right, 29, MPI_COMM_WORLD);
        CHECK_ERRCLASS(rc, MPI_ERR_BUFFER, "MPI_Bsend on a communicator without a buffer of its own");
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
        MPI_Request fr;
        MPI_CHECK(MPI_Comm_iflush_buffer(dup, &fr));
        MPI_CHECK(MPI_Wait(&fr, MPI_STATUS_IGNORE));
        MPI_CHECK(MPI_Comm_detach_buffer(dup, &b, &bsz));
        CHECK(b == cbuf && bsz == 3 * one, "MPI_Comm_detach_buffer returned %p / %d", b, bsz);
        MPI_Count csz;
        MPI_CHECK(MPI_Comm_attach_buffer_c(dup, MPI_BUFFER_AUTOMATIC, 0));
        fill(v, 55);
        MPI_CHECK(MPI_Bsend(v, N, MPI_INT, right, 30, dup));
        MPI_CHECK(MPI_Bsend(v, N, MPI_INT, right, 31, dup));
        recv_check(left, 30, 55, dup, "Bsend with MPI_Comm_attach_buffer(MPI_BUFFER_AUTOMATIC)");
        recv_check(left, 31, 55, dup, "second Bsend with MPI_Comm_attach_buffer(MPI_BUFFER_AUTOMATIC)");
        MPI_CHECK(MPI_Comm_detach_buffer_c(dup, &b, &csz));
        CHECK(b == MPI_BUFFER_AUTOMATIC, "MPI_Comm_detach_buffer_c returned %p", b);
        /* a buffer still attached when the communicator is freed: the pending buffered send (a
         * rendezvous, so still in flight) completes; the receive was posted before the free */
        enum { BIGN = 20000 };
        int *bv = mtest_malloc(BIGN * sizeof(int)), *bin = mtest_malloc(BIGN * sizeof(int));
        char *bbuf = mtest_malloc(BIGN * sizeof(int) + MPI_BSEND_OVERHEAD);
        MPI_CHECK(MPI_Comm_attach_buffer(dup, bbuf, BIGN * (int)sizeof(int) + MPI_BSEND_OVERHEAD));
        for (int i = 0; i < BIGN; i++)
            bv[i] = rank * 3 + i;
        MPI_Request rr;
        MPI_CHECK(MPI_Irecv(bin, BIGN, MPI_INT, left, 32, dup, &rr));
        MPI_CHECK(MPI_Bsend(bv, BIGN, MPI_INT, right, 32, dup));
        memset(bv, 0, BIGN * sizeof(int));
        MPI_CHECK(MPI_Comm_free(&dup));
        MPI_CHECK(MPI_Wait(&rr, MPI_STATUS_IGNORE));
        for (int i = 0; i < BIGN; i++)
            CHECK(bin[i] == left * 3 + i, "Bsend pending at MPI_Comm_free: data [%d] = %d", i, bin[i]);
        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD)); /* every send has been received */
        free(bv);
        free(bin);
        free(bbuf);
        free(cbuf);
        MPI_CHECK(MPI_Buffer_detach(&b, &bsz));
        CHECK(b == tiny && bsz == (int)sizeof tiny, "MPI_Buffer_detach returned %p / %d", b, bsz);
    }

    /* Errors. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    {
        static char sb[64];
        int rc = MPI_Buffer_detach(&b, &bsz);
        CHECK_ERRCLASS(rc, MPI_ERR_BUFFER, "MPI_Buffer_detach with no buffer attached");
        rc = MPI_Bsend(v, 1, MPI_INT, right, 40, MPI_COMM_WORLD);
        CHECK_ERRCLASS(rc, MPI_ERR_BUFFER, "MPI_Bsend with no buffer attached");
        MPI_CHECK(MPI_Buffer_attach(sb, sizeof sb));
        rc = MPI_Buffer_attach(sb, sizeof sb);
        CHECK_ERRCLASS(rc, MPI_ERR_BUFFER, "a second MPI_Buffer_attach");
        rc = MPI_Bsend(v, N, MPI_INT, right, 40, MPI_COMM_WORLD);
        CHECK_ERRCLASS(rc, MPI_ERR_BUFFER, "MPI_Bsend larger than the buffer");
        MPI_CHECK(MPI_Buffer_detach(&b, &bsz));
        rc = MPI_Buffer_attach(NULL, 10);
        CHECK_ERRCLASS(rc, MPI_ERR_BUFFER, "MPI_Buffer_attach of a null buffer");
        rc = MPI_Buffer_attach(sb, -1);
        CHECK_ERRCLASS(rc, MPI_ERR_ARG, "MPI_Buffer_attach with a negative size");
        rc = MPI_Comm_detach_buffer(MPI_COMM_WORLD, &b, &bsz);
        CHECK_ERRCLASS(rc, MPI_ERR_BUFFER, "MPI_Comm_detach_buffer with no buffer attached");
        rc = MPI_Comm_attach_buffer(MPI_COMM_NULL, sb, sizeof sb);
        CHECK_ERRCLASS(rc, MPI_ERR_COMM, "MPI_Comm_attach_buffer on MPI_COMM_NULL");
        MPI_CHECK(MPI_Comm_attach_buffer(MPI_COMM_WORLD, sb, sizeof sb));
        rc = MPI_Comm_attach_buffer(MPI_COMM_WORLD, sb, sizeof sb);
        CHECK_ERRCLASS(rc, MPI_ERR_BUFFER, "a second MPI_Comm_attach_buffer");
        MPI_CHECK(MPI_Comm_detach_buffer(MPI_COMM_WORLD, &b, &bsz));
        CHECK(b == sb, "MPI_Comm_detach_buffer on MPI_COMM_WORLD returned %p", b);
        MPI_CHECK(MPI_Comm_flush_buffer(MPI_COMM_WORLD)); /* nothing attached: nothing to wait for */
        rc = MPI_Session_attach_buffer(MPI_SESSION_NULL, sb, sizeof sb);
        CHECK_ERRCLASS(rc, MPI_ERR_SESSION, "MPI_Session_attach_buffer on MPI_SESSION_NULL");
    }

    /* A session's buffer. */
    {
        MPI_Session s;
        MPI_CHECK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s));
        char *sbuf = mtest_malloc((size_t)one);
        MPI_CHECK(MPI_Session_attach_buffer(s, sbuf, one));
        int rc = MPI_Session_attach_buffer(s, sbuf, one);
        CHECK_ERRCLASS(rc, MPI_ERR_BUFFER, "a second MPI_Session_attach_buffer");
        MPI_CHECK(MPI_Session_flush_buffer(s));
        MPI_Request fr;
        MPI_CHECK(MPI_Session_iflush_buffer(s, &fr));
        MPI_CHECK(MPI_Wait(&fr, MPI_STATUS_IGNORE));
        MPI_CHECK(MPI_Session_detach_buffer(s, &b, &bsz));
        CHECK(b == sbuf && bsz == one, "MPI_Session_detach_buffer returned %p / %d", b, bsz);
        MPI_CHECK(MPI_Session_attach_buffer_c(s, MPI_BUFFER_AUTOMATIC, 0));
        MPI_Count csz;
        MPI_CHECK(MPI_Session_detach_buffer_c(s, &b, &csz));
        CHECK(b == MPI_BUFFER_AUTOMATIC, "MPI_Session_detach_buffer_c returned %p", b);
        rc = MPI_Session_detach_buffer(s, &b, &bsz);
        CHECK_ERRCLASS(rc, MPI_ERR_BUFFER, "MPI_Session_detach_buffer with no buffer attached");
        MPI_CHECK(MPI_Session_attach_buffer(s, sbuf, one)); /* finalize detaches it */
        MPI_CHECK(MPI_Session_finalize(&s));
        free(sbuf);
    }
    free(v);
    return mtest_finalize();
}
