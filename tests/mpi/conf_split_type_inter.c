/* MPI_Comm_split_type on an intercommunicator (MPI 4.1 allows it; MPICH does it): the result is
 * an intercommunicator whose local group is the members of my group that share my kind of
 * resource (here: the node) and whose remote group is the members of the other group on the same
 * one, ranked by key within each side; MPI_UNDEFINED gives MPI_COMM_NULL. All ranks run on one
 * node, so the shared-memory split keeps everybody who takes part.
 * MPI_COMM_WORLD is cut into a low half and a high half. */
#include "mtest.h"

static int rank, size;

static void check_inter(MPI_Comm n, int want_local, int want_remote, const char *what)
{
    int inter = 0, l = -1, r = -1;
    MPI_CHECK(MPI_Comm_test_inter(n, &inter));
    CHECK(inter, "%s: the result is not an intercommunicator", what);
    MPI_CHECK(MPI_Comm_size(n, &l));
    MPI_CHECK(MPI_Comm_remote_size(n, &r));
    CHECK(l == want_local && r == want_remote, "%s: groups of %d and %d, want %d and %d", what, l, r, want_local,
          want_remote);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int h = size / 2, low = rank < h;
    MPI_Comm local, ic, n;
    MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, low, rank, &local));
    MPI_CHECK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, low ? h : 0, 5, &ic));
    int lsize, rsize, lrank;
    MPI_CHECK(MPI_Comm_size(ic, &lsize));
    MPI_CHECK(MPI_Comm_remote_size(ic, &rsize));
    MPI_CHECK(MPI_Comm_rank(ic, &lrank));

    /* everybody, ranked in reverse by the key */
    MPI_CHECK(MPI_Comm_split_type(ic, MPI_COMM_TYPE_SHARED, -lrank, MPI_INFO_NULL, &n));
    CHECK(n != MPI_COMM_NULL, "MPI_COMM_TYPE_SHARED on an intercommunicator gave MPI_COMM_NULL");
    check_inter(n, lsize, rsize, "MPI_COMM_TYPE_SHARED");
    int nr = -1;
    MPI_CHECK(MPI_Comm_rank(n, &nr));
    CHECK(nr == lsize - 1 - lrank, "MPI_COMM_TYPE_SHARED: rank %d, want %d (key = -rank)", nr, lsize - 1 - lrank);
    /* the remote group is the other half, in its own key order: its world ranks */
    MPI_Group rg, wg;
    MPI_CHECK(MPI_Comm_remote_group(n, &rg));
    MPI_CHECK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    for (int i = 0; i < rsize; i++) {
        int w = -1;
        MPI_CHECK(MPI_Group_translate_ranks(rg, 1, &i, wg, &w));
        int want = (low ? h : 0) + (rsize - 1 - i);
        CHECK(w == want, "MPI_COMM_TYPE_SHARED: remote rank %d is world rank %d, want %d", i, w, want);
    }
    MPI_CHECK(MPI_Group_free(&rg));
    MPI_CHECK(MPI_Group_free(&wg));
    /* it works: every member gets the sum of the remote world ranks */
    int sum = 0, want = 0;
    for (int i = 0; i < rsize; i++)
        want += (low ? h : 0) + i;
    MPI_CHECK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, n));
    CHECK(sum == want, "Allreduce on the split intercommunicator: %d, want %d", sum, want);
    MPI_CHECK(MPI_Comm_free(&n));

    /* local rank 1 of each group stays out */
    int out = lrank == 1;
    MPI_CHECK(MPI_Comm_split_type(ic, out ? MPI_UNDEFINED : MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &n));
    if (out) {
        CHECK(n == MPI_COMM_NULL, "MPI_UNDEFINED on an intercommunicator: not MPI_COMM_NULL");
    } else {
        check_inter(n, lsize > 1 ? lsize - 1 : lsize, rsize > 1 ? rsize - 1 : rsize, "with MPI_UNDEFINED on rank 1");
        MPI_CHECK(MPI_Comm_free(&n));
    }

    MPI_CHECK(MPI_Comm_free(&ic));
    MPI_CHECK(MPI_Comm_free(&local));
    return mtest_finalize();
}
