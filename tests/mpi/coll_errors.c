/* Argument errors of the collectives under MPI_ERRORS_RETURN: the right error class, and the job
 * goes on. (For a reference run: MTEST_KNOWN_BUGS=lenient_arg_check,lenient_op_check,no_alias_check,
 * predef_op_derived skips the checks that MPICH 4.0 does not make.) An error found only at some ranks (the root's
 * arguments, MPI_IN_PLACE at a non-root) is provoked only there, while the others skip the call, so that nobody waits
 * for a message that never comes; everything is followed by a correct collective to show that no stale message disturbs
 * it. */
#include "mtest.h"
#include "nbc_wrap.h"

static int rank, size;

#define EXPECT(call, cls) CHECK_ERRCLASS((call), cls, #call)

static void still_works(const char *after)
{
    int v = rank + 1, s = 0;
    MPI_CHECK(MPI_Allreduce(&v, &s, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(s == size * (size + 1) / 2, "Allreduce after %s gave %d", after, s);
    int b = rank == 0 ? 42 : 0;
    MPI_CHECK(MPI_Bcast(&b, 1, MPI_INT, 0, MPI_COMM_WORLD));
    CHECK(b == 42, "Bcast after %s gave %d", after, b);
}

int main(int argc, char **argv)
{
    mtest_init_errors_return(&argc, &argv, &rank, &size);
    int a[64], b[64], cnt[64], dsp[64];
    for (int i = 0; i < 64; i++) {
        a[i] = i;
        b[i] = 0;
        cnt[i] = 1;
        dsp[i] = i;
    }

    /* --- errors every rank sees --- */
    EXPECT(MPI_Barrier(MPI_COMM_NULL), MPI_ERR_COMM);
    EXPECT(MPI_Bcast(a, 1, MPI_INT, -1, MPI_COMM_WORLD), MPI_ERR_ROOT);
    EXPECT(MPI_Bcast(a, 1, MPI_INT, size, MPI_COMM_WORLD), MPI_ERR_ROOT);
    EXPECT(MPI_Bcast(a, -1, MPI_INT, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
    EXPECT(MPI_Bcast(a, 1, MPI_DATATYPE_NULL, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    EXPECT(MPI_Bcast(NULL, 3, MPI_INT, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    if (!mtest_known_bug("lenient_arg_check"))
        EXPECT(MPI_Bcast(MPI_IN_PLACE, 3, MPI_INT, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    {
        MPI_Datatype t;
        MPI_CHECK(MPI_Type_contiguous(2, MPI_INT, &t)); /* not committed */
        EXPECT(MPI_Bcast(a, 1, t, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
        if (!mtest_known_bug("predef_op_derived"))
            EXPECT(MPI_Allreduce(a, b, 1, t, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_TYPE);
        MPI_CHECK(MPI_Type_free(&t));
    }
    EXPECT(MPI_Gather(a, 1, MPI_INT, b, 1, MPI_INT, size + 3, MPI_COMM_WORLD), MPI_ERR_ROOT);
    EXPECT(MPI_Scatter(a, 1, MPI_INT, b, 1, MPI_INT, -5, MPI_COMM_WORLD), MPI_ERR_ROOT);
    EXPECT(MPI_Reduce(a, b, 1, MPI_INT, MPI_SUM, size, MPI_COMM_WORLD), MPI_ERR_ROOT);
    EXPECT(MPI_Allgather(a, -1, MPI_INT, b, 1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_COUNT);
    EXPECT(MPI_Alltoall(a, 1, MPI_INT, b, -2, MPI_INT, MPI_COMM_WORLD), MPI_ERR_COUNT);
    EXPECT(MPI_Alltoall(a, 1, MPI_INT, b, 1, MPI_DATATYPE_NULL, MPI_COMM_WORLD), MPI_ERR_TYPE);
    EXPECT(MPI_Allgather(a, 1, MPI_INT, NULL, 1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    if (!mtest_known_bug("lenient_arg_check"))
        EXPECT(MPI_Allreduce(a, b, -1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_COUNT);
    EXPECT(MPI_Allreduce(a, NULL, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    EXPECT(MPI_Allreduce(MPI_IN_PLACE, MPI_IN_PLACE, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    if (!mtest_known_bug("no_alias_check"))
        EXPECT(MPI_Allreduce(a, a, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    EXPECT(MPI_Scan(a, b, 1, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD), MPI_ERR_OP);
    if (!mtest_known_bug("lenient_arg_check")) {
        EXPECT(MPI_Exscan(a, b, -3, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_COUNT);
        EXPECT(MPI_Reduce_scatter_block(a, b, -1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_COUNT);
    }
    if (!mtest_known_bug("lenient_arg_check")) {
        int neg[64];
        for (int i = 0; i < 64; i++)
            neg[i] = i == size - 1 ? -1 : 1;
        EXPECT(MPI_Reduce_scatter(a, b, neg, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_COUNT);
        EXPECT(MPI_Allgatherv(a, 1, MPI_INT, b, neg, dsp, MPI_INT, MPI_COMM_WORLD), MPI_ERR_COUNT);
        EXPECT(MPI_Alltoallv(a, cnt, dsp, MPI_INT, b, neg, dsp, MPI_INT, MPI_COMM_WORLD), MPI_ERR_COUNT);
    }
    /* ops that the standard does not define on the type (MPICH 4.0 lets several through) */
    if (!mtest_known_bug("lenient_op_check")) {
        EXPECT(MPI_Allreduce(a, b, 1, MPI_C_BOOL, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_OP);
        EXPECT(MPI_Allreduce(a, b, 1, MPI_DOUBLE, MPI_LAND, MPI_COMM_WORLD), MPI_ERR_OP);
        EXPECT(MPI_Allreduce(a, b, 1, MPI_FLOAT, MPI_BXOR, MPI_COMM_WORLD), MPI_ERR_OP);
        EXPECT(MPI_Allreduce(a, b, 1, MPI_INT, MPI_MAXLOC, MPI_COMM_WORLD), MPI_ERR_OP);
        EXPECT(MPI_Allreduce(a, b, 1, MPI_2INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_OP);
        EXPECT(MPI_Allreduce(a, b, 1, MPI_C_DOUBLE_COMPLEX, MPI_MAX, MPI_COMM_WORLD), MPI_ERR_OP);
        EXPECT(MPI_Allreduce(a, b, 1, MPI_BYTE, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_OP);
        EXPECT(MPI_Reduce(a, b, 1, MPI_CHAR, MPI_MAXLOC, 0, MPI_COMM_WORLD), MPI_ERR_OP);
        EXPECT(MPI_Scan(a, b, 1, MPI_INT, MPI_REPLACE, MPI_COMM_WORLD), MPI_ERR_OP);
        EXPECT(MPI_Allreduce(a, b, 1, MPI_INT, MPI_NO_OP, MPI_COMM_WORLD), MPI_ERR_OP);
        EXPECT(MPI_Allreduce(a, b, 1, MPI_WCHAR, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_OP);
        EXPECT(MPI_Allreduce(a, b, 1, MPI_INTEGER, MPI_LAND, MPI_COMM_WORLD), MPI_ERR_OP);
        EXPECT(MPI_Allreduce(a, b, 1, MPI_LOGICAL, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_OP);
    }
    if (!mtest_known_bug("lenient_arg_check")) {
        EXPECT(MPI_Reduce_local(a, b, 1, MPI_DOUBLE, MPI_BAND), MPI_ERR_OP);
        EXPECT(MPI_Reduce_local(a, b, -1, MPI_INT, MPI_SUM), MPI_ERR_COUNT);
    }
    {
        MPI_Op op = MPI_SUM;
        EXPECT(MPI_Op_free(&op), MPI_ERR_OP);
    }
    still_works("errors seen by every rank");

    /* --- errors at some ranks only; the others do not take part --- */
    int root = size - 1;
    if (rank != root) { /* MPI_IN_PLACE is for the root only */
        EXPECT(MPI_Gather(MPI_IN_PLACE, 1, MPI_INT, b, 1, MPI_INT, root, MPI_COMM_WORLD), MPI_ERR_BUFFER);
        EXPECT(MPI_Gatherv(MPI_IN_PLACE, 1, MPI_INT, b, cnt, dsp, MPI_INT, root, MPI_COMM_WORLD), MPI_ERR_BUFFER);
        EXPECT(MPI_Reduce(MPI_IN_PLACE, b, 1, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD), MPI_ERR_BUFFER);
        EXPECT(MPI_Scatter(a, 1, MPI_INT, MPI_IN_PLACE, 1, MPI_INT, root, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    } else { /* the root's own arguments */
        EXPECT(MPI_Gather(a, 1, MPI_INT, NULL, 1, MPI_INT, root, MPI_COMM_WORLD), MPI_ERR_BUFFER);
        EXPECT(MPI_Gather(a, 1, MPI_INT, b, -1, MPI_INT, root, MPI_COMM_WORLD), MPI_ERR_COUNT);
        int neg[64];
        for (int i = 0; i < 64; i++)
            neg[i] = i == 0 ? -1 : 1;
        EXPECT(MPI_Gatherv(a, 1, MPI_INT, b, neg, dsp, MPI_INT, root, MPI_COMM_WORLD), MPI_ERR_COUNT);
        EXPECT(MPI_Scatterv(a, neg, dsp, MPI_INT, b, 1, MPI_INT, root, MPI_COMM_WORLD), MPI_ERR_COUNT);
        EXPECT(MPI_Scatter(a, 1, MPI_DATATYPE_NULL, b, 1, MPI_INT, root, MPI_COMM_WORLD), MPI_ERR_TYPE);
        if (!mtest_known_bug("no_alias_check"))
            EXPECT(MPI_Reduce(a, a, 2, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    }
    still_works("errors at some ranks");

    /* --- MPI_IN_PLACE where it is allowed works --- */
    for (int i = 0; i < size; i++)
        b[i] = rank == root && i == root ? 100 + i : -1;
    MPI_CHECK(MPI_Gather(rank == root ? MPI_IN_PLACE : &(int){ 100 + rank }, 1, MPI_INT, b, 1, MPI_INT, root,
                         MPI_COMM_WORLD));
    if (rank == root)
        for (int i = 0; i < size; i++)
            CHECK(b[i] == 100 + i, "Gather with MPI_IN_PLACE at the root: [%d] = %d", i, b[i]);
    return mtest_finalize();
}
