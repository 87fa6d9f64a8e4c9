/* MPI 4.0's nonblocking send-receive (MPI_Isendrecv, MPI_Isendrecv_replace and their _c forms)
 * and MPI 4.1's MPI_Request_get_status_all / _any / _some. Ring over any number of ranks.
 *
 * The operations must be truly nonblocking: every rank posts its send-receive with the
 * neighbours before anyone waits, and in the second part a rank only waits for its exchange
 * after its left neighbour has sent a separate message that is itself received inside the
 * exchange's lifetime. */
#include "mtest.h"

#define BIG 50000 /* ints: rendezvous */

/* MPICH 4.0's MPI_Isendrecv(_replace) reports a status that is not the receive's (tag 0). */
static int isendrecv_status_bug;

static void check_status(const MPI_Status *st, int src, int tag, MPI_Datatype dt, MPI_Count count, const char *what)
{
    if (isendrecv_status_bug && strncmp(what, "MPI_Isendrecv", 13) == 0)
        return;
    mtest_check_status(st, src, tag, dt, count, what);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    isendrecv_status_bug = mtest_known_bug("isendrecv_status");
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Status st;
    int *out = mtest_malloc(BIG * sizeof(int)), *in = mtest_malloc(BIG * sizeof(int));

    /* Isendrecv and Isendrecv_c, eager and rendezvous, both directions at once. */
    for (int k = 0; k < 2; k++) {
        int n = k ? BIG : 5;
        int *in2 = mtest_malloc((size_t)n * sizeof(int));
        for (int i = 0; i < n; i++) {
            out[i] = rank * 100 + i;
            in[i] = in2[i] = -1;
        }
        MPI_Request r[2];
        MPI_CHECK(MPI_Isendrecv(out, n, MPI_INT, right, 1, in, n, MPI_INT, left, 1, MPI_COMM_WORLD, &r[0]));
        MPI_CHECK(MPI_Isendrecv_c(out, n, MPI_INT, left, 2, in2, n, MPI_INT, right, 2, MPI_COMM_WORLD, &r[1]));
        MPI_Status sts[2];
        MPI_CHECK(MPI_Waitall(2, r, sts));
        check_status(&sts[0], left, 1, MPI_INT, n, "MPI_Isendrecv");
        check_status(&sts[1], right, 2, MPI_INT, n, "MPI_Isendrecv_c");
        for (int i = 0; i < n; i++) {
            CHECK(in[i] == left * 100 + i, "Isendrecv data [%d] = %d", i, in[i]);
            CHECK(in2[i] == right * 100 + i, "Isendrecv_c data [%d] = %d", i, in2[i]);
        }
        free(in2);
    }

    /* Isendrecv_replace(_c) with a non-contiguous type; the send's data is taken at the call (a
     * copy): the buffer then receives. The request also completes through MPI_Test loops. */
    {
        MPI_Datatype vec;
        MPI_CHECK(MPI_Type_vector(BIG / 2, 1, 2, MPI_INT, &vec));
        MPI_CHECK(MPI_Type_commit(&vec));
        for (int i = 0; i < BIG; i++)
            in[i] = i % 2 ? -3 : rank * 7 + i;
        /* (MPICH 4.0 fails an assertion on its datatype's reference count here) */
        int type_bug = mtest_known_bug("isendrecv_type_free");
        MPI_Request r;
        if (!type_bug) {
            MPI_CHECK(MPI_Isendrecv_replace(in, 1, vec, right, 3, left, 3, MPI_COMM_WORLD, &r));
            MPI_CHECK(MPI_Type_free(&vec)); /* freeing the type during the operation is allowed */
            int flag = 0;
            while (!flag)
                MPI_CHECK(MPI_Test(&r, &flag, &st));
            check_status(&st, left, 3, MPI_INT, BIG / 2, "MPI_Isendrecv_replace");
            for (int i = 0; i < BIG; i++)
                CHECK(in[i] == (i % 2 ? -3 : left * 7 + i), "Isendrecv_replace data [%d] = %d", i, in[i]);
        } else {
            MPI_CHECK(MPI_Type_free(&vec));
        }
        double d[3] = { rank + 0.5, rank + 1.5, rank + 2.5 };
        MPI_CHECK(MPI_Isendrecv_replace_c(d, 3, MPI_DOUBLE, left, 4, right, 4, MPI_COMM_WORLD, &r));
        MPI_CHECK(MPI_Wait(&r, &st));
        check_status(&st, right, 4, MPI_DOUBLE, 3, "MPI_Isendrecv_replace_c");
        CHECK(d[0] == right + 0.5 && d[2] == right + 2.5, "Isendrecv_replace_c data %g %g", d[0], d[2]);
    }

    /* Truly nonblocking: rank r's exchange with its left neighbour cannot complete before that
     * neighbour has posted it; each rank first posts, then sends a token to the right, then
     * waits for the left's token, and only then waits for the exchange. */
    {
        MPI_Request r;
        int token = rank, got = -1;
        MPI_CHECK(MPI_Isendrecv(out, BIG, MPI_INT, right, 5, in, BIG, MPI_INT, left, 5, MPI_COMM_WORLD, &r));
        MPI_Request tr;
        MPI_CHECK(MPI_Isend(&token, 1, MPI_INT, right, 6, MPI_COMM_WORLD, &tr));
        MPI_CHECK(MPI_Recv(&got, 1, MPI_INT, left, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MPI_CHECK(MPI_Wait(&tr, MPI_STATUS_IGNORE));
        CHECK(got == left, "token %d", got);
        MPI_CHECK(MPI_Wait(&r, &st));
        check_status(&st, left, 5, MPI_INT, BIG, "MPI_Isendrecv posted before a blocking exchange");
    }

    /* MPI_PROC_NULL: completes at once with the null status. (MPICH 4.0 crashes here.) */
    if (!mtest_known_bug("isendrecv_proc_null")) {
        MPI_Request r;
        int x = 3;
        MPI_CHECK(
            MPI_Isendrecv(&x, 1, MPI_INT, MPI_PROC_NULL, 0, &x, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &r));
        st.MPI_ERROR = 4242;
        MPI_CHECK(MPI_Wait(&r, &st));
        check_status(&st, MPI_PROC_NULL, MPI_ANY_TAG, MPI_INT, 0, "MPI_Isendrecv with MPI_PROC_NULL");
        CHECK(st.MPI_ERROR == 4242, "MPI_Wait changed MPI_ERROR");
        MPI_CHECK(MPI_Isendrecv_replace(&x, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &r));
        MPI_CHECK(MPI_Wait(&r, &st));
        check_status(&st, MPI_PROC_NULL, MPI_ANY_TAG, MPI_INT, 0, "MPI_Isendrecv_replace with MPI_PROC_NULL");
        CHECK(x == 3, "MPI_Isendrecv_replace with MPI_PROC_NULL changed the buffer");
    }

    /* MPI_Request_free while in flight: the operation still completes (the data arrives; an
     * eager message, so that its data is in place once a later message has matched). MPICH 4.0
     * refuses to free the request. */
    if (!mtest_known_bug("isendrecv_request_free")) {
        MPI_Request r;
        for (int i = 0; i < BIG; i++)
            in[i] = -1;
        MPI_CHECK(MPI_Isendrecv(out, 5, MPI_INT, right, 12, in, 5, MPI_INT, left, 12, MPI_COMM_WORLD, &r));
        MPI_CHECK(MPI_Request_free(&r));
        CHECK(r == MPI_REQUEST_NULL, "MPI_Request_free left the handle");
        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD)); /* every exchange posted */
        int dummy = 0;                          /* a message behind it on the same pair orders it */
        MPI_CHECK(MPI_Sendrecv(&dummy, 1, MPI_INT, right, 12, &dummy, 1, MPI_INT, left, 12, MPI_COMM_WORLD, &st));
        for (int i = 0; i < 5; i++)
            CHECK(in[i] == out[i] - rank * 100 + left * 100, "freed Isendrecv data [%d] = %d", i, in[i]);
        CHECK(in[5] == -1, "freed Isendrecv wrote past its count");
    }

    /* MPI_Request_get_status_all / _any / _some: statuses without freeing the requests. */
    {
        MPI_Request r[3];
        MPI_Status sts[3];
        int a = rank, b = -1, flag = -1, index = -2, outcount = -2, idx[3];
        /* empty lists and lists of null requests */
        r[0] = r[1] = r[2] = MPI_REQUEST_NULL;
        MPI_CHECK(MPI_Request_get_status_all(3, r, &flag, sts));
        CHECK(flag == 1, "get_status_all of null requests: flag %d", flag);
        check_status(&sts[2], MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_INT, 0, "get_status_all of a null request");
        CHECK(sts[2].MPI_ERROR == MPI_SUCCESS, "empty status has MPI_ERROR %d", sts[2].MPI_ERROR);
        MPI_CHECK(MPI_Request_get_status_any(3, r, &index, &flag, &st));
        CHECK(flag == 1 && index == MPI_UNDEFINED, "get_status_any of null requests: flag %d index %d", flag, index);
        MPI_CHECK(MPI_Request_get_status_some(3, r, &outcount, idx, sts));
        CHECK(outcount == MPI_UNDEFINED, "get_status_some of null requests: outcount %d", outcount);
        MPI_CHECK(MPI_Request_get_status_all(0, NULL, &flag, MPI_STATUSES_IGNORE));
        CHECK(flag == 1, "get_status_all of no requests: flag %d", flag);

        /* a receive that cannot complete yet (the message is sent after the check) */
        MPI_CHECK(MPI_Irecv(&b, 1, MPI_INT, left, 20, MPI_COMM_WORLD, &r[0]));
        MPI_CHECK(MPI_Isend(&a, 1, MPI_INT, 0, 21, MPI_COMM_SELF, &r[1]));
        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
        MPI_CHECK(MPI_Request_get_status_all(2, r, &flag, sts));
        CHECK(flag == 0, "get_status_all before the message: flag %d", flag);
        MPI_CHECK(MPI_Request_get_status_some(1, r, &outcount, idx, sts));
        CHECK(outcount == 0, "get_status_some before the message: outcount %d", outcount);
        MPI_CHECK(MPI_Request_get_status_any(1, r, &index, &flag, &st));
        CHECK(flag == 0 && index == MPI_UNDEFINED, "get_status_any before the message: flag %d index %d", flag, index);
        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
        MPI_CHECK(MPI_Send(&a, 1, MPI_INT, right, 20, MPI_COMM_WORLD));
        do
            MPI_CHECK(MPI_Request_get_status_all(2, r, &flag, sts));
        while (!flag);
        CHECK(r[0] != MPI_REQUEST_NULL && r[1] != MPI_REQUEST_NULL, "get_status_all freed a request");
        check_status(&sts[0], left, 20, MPI_INT, 1, "get_status_all of the receive");
        CHECK(b == left, "received %d", b);
        MPI_CHECK(MPI_Request_get_status_any(2, r, &index, &flag, &st));
        CHECK(flag == 1 && (index == 0 || index == 1), "get_status_any: flag %d index %d", flag, index);
        if (index == 0)
            check_status(&st, left, 20, MPI_INT, 1, "get_status_any of the receive");
        MPI_CHECK(MPI_Request_get_status_some(2, r, &outcount, idx, sts));
        CHECK(outcount == 2 && idx[0] == 0 && idx[1] == 1, "get_status_some: outcount %d", outcount);
        check_status(&sts[0], left, 20, MPI_INT, 1, "get_status_some of the receive");
        CHECK(r[0] != MPI_REQUEST_NULL && r[1] != MPI_REQUEST_NULL, "get_status_some freed a request");
        /* the requests are still there to be completed */
        MPI_CHECK(MPI_Waitall(2, r, sts));
        check_status(&sts[0], left, 20, MPI_INT, 1, "Waitall after get_status");
        MPI_CHECK(MPI_Recv(&b, 1, MPI_INT, 0, 21, MPI_COMM_SELF, MPI_STATUS_IGNORE));
        /* an inactive persistent request counts as null */
        MPI_CHECK(MPI_Recv_init(&b, 1, MPI_INT, left, 22, MPI_COMM_WORLD, &r[0]));
        MPI_CHECK(MPI_Request_get_status_any(1, r, &index, &flag, &st));
        CHECK(flag == 1 && index == MPI_UNDEFINED, "get_status_any of an inactive request: flag %d index %d", flag,
              index);
        MPI_CHECK(MPI_Request_free(&r[0]));
    }

    /* Errors: a truncated Isendrecv fails at its completion; bad arguments fail at the call. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    {
        MPI_Request r;
        MPI_CHECK(MPI_Isendrecv(out, 10, MPI_INT, right, 30, in, 5, MPI_INT, left, 30, MPI_COMM_WORLD, &r));
        int rc = MPI_Wait(&r, &st);
        CHECK_ERRCLASS(rc, MPI_ERR_TRUNCATE, "MPI_Wait of a truncated MPI_Isendrecv");
        MPI_Request rs[1];
        MPI_CHECK(MPI_Isendrecv(out, 10, MPI_INT, right, 31, in, 5, MPI_INT, left, 31, MPI_COMM_WORLD, &rs[0]));
        int flag = 0;
        do
            rc = MPI_Request_get_status_all(1, rs, &flag, &st);
        while (rc == MPI_SUCCESS && !flag);
        CHECK_ERRCLASS(rc, MPI_ERR_IN_STATUS, "MPI_Request_get_status_all of a truncated receive");
        CHECK_ERRCLASS(st.MPI_ERROR, MPI_ERR_TRUNCATE, "its status");
        rc = MPI_Waitall(1, rs, &st);
        CHECK_ERRCLASS(rc, MPI_ERR_IN_STATUS, "MPI_Waitall of a truncated receive");
        rc = MPI_Isendrecv(out, 1, MPI_INT, size, 0, in, 1, MPI_INT, left, 0, MPI_COMM_WORLD, &r);
        CHECK_ERRCLASS(rc, MPI_ERR_RANK, "MPI_Isendrecv to rank size");
        rc = MPI_Isendrecv_replace(in, -1, MPI_INT, right, 0, left, 0, MPI_COMM_WORLD, &r);
        CHECK_ERRCLASS(rc, MPI_ERR_COUNT, "MPI_Isendrecv_replace with a negative count");
        rc = MPI_Isendrecv(out, 1, MPI_INT, right, 0, in, 1, MPI_INT, left, 0, MPI_COMM_WORLD, NULL);
        CHECK_ERRCLASS(rc, MPI_ERR_ARG, "MPI_Isendrecv with a null request");
        rc = MPI_Isendrecv_replace_c(in, 1, MPI_INT, right, -5, left, 0, MPI_COMM_WORLD, &r);
        CHECK_ERRCLASS(rc, MPI_ERR_TAG, "MPI_Isendrecv_replace_c with a negative tag");
    }
    free(out);
    free(in);
    return mtest_finalize();
}
