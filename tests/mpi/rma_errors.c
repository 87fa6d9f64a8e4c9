/* Erroneous RMA under MPI_ERRORS_RETURN on the window (and on MPI_COMM_WORLD / MPI_COMM_SELF for the
 * errors that have no window): each must return an error of the right class (MPI_Error_class), and the
 * window must go on working afterwards. Covered: communication outside any epoch and synchronization
 * calls without their opening call (MPI_ERR_RMA_SYNC), a second lock of a target already locked
 * (MPI_ERR_RMA_SYNC or MPI_ERR_RMA_CONFLICT), target ranges past the end of the window
 * (MPI_ERR_RMA_RANGE), target ranks outside the group (MPI_ERR_RANK), MPI_WIN_NULL (MPI_ERR_WIN),
 * accumulates with a user-defined op (MPI_ERR_OP), MPI_Win_shared_query of a dynamic window
 * (MPI_ERR_RMA_FLAVOR), an invalid lock type (MPI_ERR_LOCKTYPE or MPI_ERR_ARG), and accumulates whose
 * origin and target types differ (MPI_ERR_TYPE or MPI_ERR_ARG).
 *
 * The standard lets an implementation leave some of these undetected; the reference implementations
 * that do are run with MTEST_KNOWN_BUGS naming them (see run_with_mpich.sh), which skips the erroneous
 * call altogether. Aptus MPI detects all of them. */
#include "mtest.h"

static int rank, size, left, right;

enum { N = 16 };

#define EXPECT(call, cls) CHECK_ERRCLASS((call), cls, #call)

/* rc must be an error of class a or b; returns the class */
#define EXPECT2(call, a, b) expect2((call), (a), (b), #a, #b, #call, __FILE__, __LINE__)

static int expect2(int rc, int a, int b, const char *an, const char *bn, const char *what, const char *file, int line)
{
    int cls = -1;
    if (rc == MPI_SUCCESS)
        mtest_fail(file, line, "%s: expected %s or %s, got MPI_SUCCESS", what, an, bn);
    MPI_Error_class(rc, &cls);
    if (cls != a && cls != b)
        mtest_fail(file, line, "%s: expected class %s or %s, got class %d (%s)", what, an, bn, cls, mtest_errstr(rc));
    return cls;
}

static void user_sum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    for (int i = 0; i < *len; i++)
        ((int *)inout)[i] += ((int *)in)[i];
}

/* The window still works: a Put/Get round through the neighbours under fences. */
static void still_works(MPI_Win win, int *w, const char *after)
{
    static int round;
    int src[4], got[4], base = 1000 * ++round;
    for (int i = 0; i < 4; i++)
        src[i] = base + rank * 100 + i;
    MPI_CHECK(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
    MPI_CHECK(MPI_Put(src, 4, MPI_INT, right, 4, 4, MPI_INT, win));
    MPI_CHECK(MPI_Win_fence(0, win));
    for (int i = 0; i < 4; i++)
        CHECK(w[4 + i] == base + left * 100 + i, "after %s: [%d] = %d, want %d", after, 4 + i, w[4 + i],
              base + left * 100 + i);
    MPI_CHECK(MPI_Get(got, 4, MPI_INT, right, 4, 4, MPI_INT, win));
    MPI_CHECK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    for (int i = 0; i < 4; i++)
        CHECK(got[i] == src[i], "after %s: Get [%d] = %d, want %d", after, i, got[i], src[i]);
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
}

static void test_sync_errors(MPI_Win win, int *w)
{
    int v[2] = { 1, 2 }, r = 0;
    MPI_Request req;
    /* communication outside any epoch */
    if (!mtest_known_bug("rma_no_epoch_check")) {
        EXPECT(MPI_Put(v, 1, MPI_INT, right, 0, 1, MPI_INT, win), MPI_ERR_RMA_SYNC);
        EXPECT(MPI_Get(v, 1, MPI_INT, right, 0, 1, MPI_INT, win), MPI_ERR_RMA_SYNC);
        EXPECT(MPI_Accumulate(v, 1, MPI_INT, right, 0, 1, MPI_INT, MPI_SUM, win), MPI_ERR_RMA_SYNC);
        EXPECT(MPI_Fetch_and_op(v, &r, MPI_INT, right, 0, MPI_SUM, win), MPI_ERR_RMA_SYNC);
    }
    if (!mtest_known_bug("rma_request_epoch_check"))
        EXPECT(MPI_Rput(v, 1, MPI_INT, right, 0, 1, MPI_INT, win, &req), MPI_ERR_RMA_SYNC);
    /* closing calls without their opening call */
    EXPECT(MPI_Win_complete(win), MPI_ERR_RMA_SYNC);
    EXPECT(MPI_Win_wait(win), MPI_ERR_RMA_SYNC);
    EXPECT(MPI_Win_unlock(right, win), MPI_ERR_RMA_SYNC);
    EXPECT(MPI_Win_unlock_all(win), MPI_ERR_RMA_SYNC);
    if (!mtest_known_bug("rma_flush_epoch_check")) {
        EXPECT(MPI_Win_flush(right, win), MPI_ERR_RMA_SYNC);
        EXPECT(MPI_Win_flush_all(win), MPI_ERR_RMA_SYNC);
    }
    /* unlock of a target other than the one locked */
    if (size > 1 && !mtest_known_bug("rma_unlock_wrong_target")) {
        MPI_CHECK(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
        EXPECT(MPI_Win_unlock(rank, win), MPI_ERR_RMA_SYNC);
        MPI_CHECK(MPI_Win_unlock(right, win));
    }
    /* a target locked twice by the same process (shared, so that an undetected second lock cannot hang) */
    MPI_CHECK(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
    int cls = EXPECT2(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win), MPI_ERR_RMA_SYNC, MPI_ERR_RMA_CONFLICT);
    if (rank == 0)
        printf("a second MPI_Win_lock of one target: %s\n",
               cls == MPI_ERR_RMA_SYNC ? "MPI_ERR_RMA_SYNC" : "MPI_ERR_RMA_CONFLICT");
    MPI_CHECK(MPI_Win_unlock(right, win));
    /* the first lock's epoch was ended by that unlock: a second unlock is an error */
    EXPECT(MPI_Win_unlock(right, win), MPI_ERR_RMA_SYNC);
    /* a lock of a target already locked by an open lock_all epoch */
    MPI_CHECK(MPI_Win_lock_all(0, win));
    EXPECT2(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win), MPI_ERR_RMA_SYNC, MPI_ERR_RMA_CONFLICT);
    MPI_CHECK(MPI_Win_unlock_all(win));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    still_works(win, w, "synchronization errors");
}

static void test_arg_errors(MPI_Win win, int *w)
{
    int v[4] = { 1, 2, 3, 4 }, r[4];
    double d[2] = { 1.0, 2.0 };

    /* an invalid lock type */
    EXPECT2(MPI_Win_lock(12345, right, 0, win), MPI_ERR_LOCKTYPE, MPI_ERR_ARG);
    /* target ranks outside the group */
    EXPECT(MPI_Win_lock(MPI_LOCK_SHARED, size, 0, win), MPI_ERR_RANK);
    MPI_CHECK(MPI_Win_lock_all(0, win));
    EXPECT(MPI_Put(v, 1, MPI_INT, size, 0, 1, MPI_INT, win), MPI_ERR_RANK);
    EXPECT(MPI_Get(v, 1, MPI_INT, size + 3, 0, 1, MPI_INT, win), MPI_ERR_RANK);
    EXPECT(MPI_Accumulate(v, 1, MPI_INT, -5, 0, 1, MPI_INT, MPI_SUM, win), MPI_ERR_RANK);
    if (!mtest_known_bug("rma_flush_rank_check"))
        EXPECT(MPI_Win_flush(size, win), MPI_ERR_RANK);

    /* target ranges past the end of the window (N ints at every rank) */
    if (!mtest_known_bug("rma_range_check")) {
        EXPECT(MPI_Put(v, 1, MPI_INT, right, N, 1, MPI_INT, win), MPI_ERR_RMA_RANGE);
        EXPECT(MPI_Put(v, 2, MPI_INT, right, N - 1, 2, MPI_INT, win), MPI_ERR_RMA_RANGE);
        EXPECT(MPI_Get(r, 4, MPI_INT, right, N - 2, 4, MPI_INT, win), MPI_ERR_RMA_RANGE);
        EXPECT(MPI_Accumulate(v, 1, MPI_INT, right, N + 100, 1, MPI_INT, MPI_SUM, win), MPI_ERR_RMA_RANGE);
        EXPECT(MPI_Fetch_and_op(v, r, MPI_INT, right, N, MPI_SUM, win), MPI_ERR_RMA_RANGE);
    }

    /* user-defined and null ops are not allowed in accumulates */
    MPI_Op mine;
    MPI_CHECK(MPI_Op_create(user_sum, 1, &mine));
    EXPECT(MPI_Accumulate(v, 1, MPI_INT, right, 0, 1, MPI_INT, mine, win), MPI_ERR_OP);
    EXPECT(MPI_Get_accumulate(v, 1, MPI_INT, r, 1, MPI_INT, right, 0, 1, MPI_INT, mine, win), MPI_ERR_OP);
    if (!mtest_known_bug("rma_fop_op_check"))
        EXPECT(MPI_Fetch_and_op(v, r, MPI_INT, right, 0, mine, win), MPI_ERR_OP);
    EXPECT(MPI_Accumulate(v, 1, MPI_INT, right, 0, 1, MPI_INT, MPI_OP_NULL, win), MPI_ERR_OP);
    MPI_CHECK(MPI_Op_free(&mine));

    /* origin and target types made of different basic types */
    if (!mtest_known_bug("rma_acc_type_check")) {
        EXPECT2(MPI_Accumulate(v, 2, MPI_INT, right, 0, 1, MPI_DOUBLE, MPI_SUM, win), MPI_ERR_TYPE, MPI_ERR_ARG);
        EXPECT2(MPI_Accumulate(d, 1, MPI_DOUBLE, right, 0, 2, MPI_INT, MPI_SUM, win), MPI_ERR_TYPE, MPI_ERR_ARG);
    }
    MPI_CHECK(MPI_Win_unlock_all(win));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    still_works(win, w, "argument errors");
}

static void test_object_errors(void)
{
    int v = 0;
    MPI_Win null = MPI_WIN_NULL;
    EXPECT(MPI_Win_fence(0, MPI_WIN_NULL), MPI_ERR_WIN);
    EXPECT(MPI_Put(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_WIN_NULL), MPI_ERR_WIN);
    EXPECT(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, MPI_WIN_NULL), MPI_ERR_WIN);
    EXPECT(MPI_Win_free(&null), MPI_ERR_WIN);
    EXPECT(MPI_Win_set_errhandler(MPI_WIN_NULL, MPI_ERRORS_RETURN), MPI_ERR_WIN);

    /* MPI_Win_shared_query of a dynamic window (no shared memory segments at all) */
    MPI_Win dyn;
    MPI_CHECK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &dyn));
    MPI_CHECK(MPI_Win_set_errhandler(dyn, MPI_ERRORS_RETURN));
    MPI_Aint qs;
    int qdu;
    void *qb;
    EXPECT(MPI_Win_shared_query(dyn, rank, &qs, &qdu, &qb), MPI_ERR_RMA_FLAVOR);
    MPI_CHECK(MPI_Win_free(&dyn));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    right = (rank + 1) % size;
    left = (rank - 1 + size) % size;
    /* errors on MPI_WIN_NULL have no window: they go to MPI_COMM_SELF's handler (MPICH 4.0: WORLD's) */
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));

    int *w;
    MPI_Win win;
    MPI_CHECK(MPI_Win_allocate(N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &w, &win));
    MPI_CHECK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    for (int i = 0; i < N; i++)
        w[i] = -1;

    test_sync_errors(win, w);
    test_arg_errors(win, w);
    test_object_errors();

    MPI_CHECK(MPI_Win_free(&win));
    return mtest_finalize();
}
