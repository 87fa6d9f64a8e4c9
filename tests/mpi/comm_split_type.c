/* MPI_Comm_split_type: MPI_COMM_TYPE_SHARED follows the launcher's nodes, keys order the ranks,
 * MPI_UNDEFINED gives MPI_COMM_NULL, HW_GUIDED with mpi_hw_resource_type = mpi_shared_memory is
 * the same as SHARED (and sets the key on the result), HW_GUIDED with an unknown value gives
 * MPI_COMM_NULL, HW_UNGUIDED gives a strict subset or MPI_COMM_NULL (and a subset names the
 * resource in the caller's info: the node over several nodes or when a rank opts out, else maybe
 * a hardware level below it), and an invalid split_type is MPI_ERR_ARG.
 *
 * argv[1] = K: the job runs with K ranks per node (mpiexec --ppn K / APTUS_PPN=K), so world rank
 * r is on node r / K. Without it, the whole job is on one node. */
#include "mtest.h"

static int rank, size, ppn;

static void check_node_comm(MPI_Comm c, int reversed, const char *what)
{
    int node = rank / ppn, first = node * ppn, n = size - first < ppn ? size - first : ppn;
    CHECK(c != MPI_COMM_NULL, "%s: MPI_COMM_NULL", what);
    int r, s;
    MPI_CHECK(MPI_Comm_rank(c, &r));
    MPI_CHECK(MPI_Comm_size(c, &s));
    int want = reversed ? n - 1 - (rank - first) : rank - first;
    CHECK(s == n && r == want, "%s: rank/size %d/%d, want %d/%d (node %d)", what, r, s, want, n, node);
    /* every member's world rank, gathered: the node's ranks, in the expected order */
    int all[64];
    MPI_CHECK(MPI_Allgather(&rank, 1, MPI_INT, all, 1, MPI_INT, c));
    for (int i = 0; i < n; i++) {
        int w = reversed ? first + n - 1 - i : first + i;
        CHECK(all[i] == w, "%s: member %d is world %d, want %d", what, i, all[i], w);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    ppn = argc > 1 ? atoi(argv[1]) : size;
    CHECK(ppn >= 1 && size <= 64, "bad arguments");
    MPI_Comm c;

    MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &c));
    check_node_comm(c, 0, "SHARED");
    /* a split of the node communicator by the same type is the same group */
    MPI_Comm c2;
    MPI_CHECK(MPI_Comm_split_type(c, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &c2));
    int res;
    MPI_CHECK(MPI_Comm_compare(c, c2, &res));
    CHECK(res == MPI_CONGRUENT, "SHARED of the node communicator: compare = %d", res);
    MPI_CHECK(MPI_Comm_free(&c2));
    MPI_CHECK(MPI_Comm_free(&c));

    MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, -rank, MPI_INFO_NULL, &c));
    check_node_comm(c, 1, "SHARED, keys descending");
    MPI_CHECK(MPI_Comm_free(&c));

    /* odd ranks opt out */
    MPI_CHECK(
        MPI_Comm_split_type(MPI_COMM_WORLD, rank & 1 ? MPI_UNDEFINED : MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &c));
    if (rank & 1) {
        CHECK(c == MPI_COMM_NULL, "MPI_UNDEFINED gave a communicator");
    } else {
        int s, node = rank / ppn, n = 0;
        for (int r = 0; r < size; r += 2)
            n += r / ppn == node;
        MPI_CHECK(MPI_Comm_size(c, &s));
        CHECK(s == n, "SHARED without the odd ranks: size %d, want %d", s, n);
        MPI_CHECK(MPI_Comm_free(&c));
    }

    /* HW_GUIDED */
    MPI_Info info;
    MPI_CHECK(MPI_Info_create(&info));
    MPI_CHECK(MPI_Info_set(info, "mpi_hw_resource_type", "mpi_shared_memory"));
    MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, info, &c));
    check_node_comm(c, 0, "HW_GUIDED mpi_shared_memory");
    MPI_Info used;
    char val[MPI_MAX_INFO_VAL + 1];
    int flag = 0;
    MPI_CHECK(MPI_Comm_get_info(c, &used));
    MPI_CHECK(MPI_Info_get(used, "mpi_hw_resource_type", MPI_MAX_INFO_VAL, val, &flag));
    if (!mtest_known_bug("split_type_no_hw_info"))
        CHECK(flag && strcmp(val, "mpi_shared_memory") == 0, "HW_GUIDED result: mpi_hw_resource_type %s",
              flag ? val : "(not set)");
    MPI_CHECK(MPI_Info_free(&used));
    MPI_CHECK(MPI_Comm_free(&c));
    MPI_CHECK(MPI_Info_set(info, "mpi_hw_resource_type", "no-such-resource"));
    MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, info, &c));
    CHECK(c == MPI_COMM_NULL, "HW_GUIDED with an unknown resource gave a communicator");
    MPI_CHECK(MPI_Info_free(&info));

    /* HW_UNGUIDED: a strict subset of the parent, or MPI_COMM_NULL */
    MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_UNGUIDED, 0, MPI_INFO_NULL, &c));
    if (c != MPI_COMM_NULL) {
        int s;
        MPI_CHECK(MPI_Comm_size(c, &s));
        CHECK(s < size, "HW_UNGUIDED gave the whole parent (%d ranks)", s);
        MPI_CHECK(MPI_Comm_free(&c));
    } else {
        /* the node is the first level: over several nodes it always cuts */
        if (getenv("APTUS_PPN") || argc > 1)
            CHECK(ppn >= size, "HW_UNGUIDED gave MPI_COMM_NULL with several nodes");
    }

    /* HW_UNGUIDED with an info object: a result that is not MPI_COMM_NULL sets
     * mpi_hw_resource_type in it to the resource split by (MPI 4.1). The last rank opts out, so
     * that on one node the others get a strict subset (Open MPI's cmsplit_type). */
    for (int optout = 0; optout < 2; optout++) {
        if (optout && size < 2)
            break;
        int out = optout && rank == size - 1;
        MPI_CHECK(MPI_Info_create(&info));
        MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, out ? MPI_UNDEFINED : MPI_COMM_TYPE_HW_UNGUIDED, 0, info, &c));
        if (out)
            CHECK(c == MPI_COMM_NULL, "MPI_UNDEFINED gave a communicator");
        if (optout && !out && ppn >= size)
            CHECK(c != MPI_COMM_NULL, "HW_UNGUIDED of all but the last rank (one node) gave MPI_COMM_NULL");
        if (c != MPI_COMM_NULL) {
            char v[MPI_MAX_INFO_VAL + 1] = "";
            int flag = 0, s;
            MPI_CHECK(MPI_Comm_size(c, &s));
            CHECK(s < size, "HW_UNGUIDED gave the whole parent (%d ranks)", s);
            MPI_CHECK(MPI_Info_get(info, "mpi_hw_resource_type", MPI_MAX_INFO_VAL, v, &flag));
            /* the node, or -- everybody on one node taking part -- a level of its hardware
             * (comm_split_hw.c checks those) */
            int hw_level = !optout && ppn >= size && flag && strncmp(v, "hwloc://", 8) == 0;
            CHECK(flag && (strcmp(v, "mpi_shared_memory") == 0 || hw_level),
                  "HW_UNGUIDED (%s): mpi_hw_resource_type in the caller's info is %s", optout ? "one opts out" : "all",
                  flag ? v : "not set");
            MPI_CHECK(MPI_Comm_free(&c));
        }
        MPI_CHECK(MPI_Info_free(&info));
    }

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK_ERRCLASS(MPI_Comm_split_type(MPI_COMM_WORLD, 12345, 0, MPI_INFO_NULL, &c), MPI_ERR_ARG, "split_type 12345");
    if (argc > 1) /* the checks above need no message between nodes; the end below does */
        printf("rank %d: node-local checks passed\n", rank);
    fflush(stdout);
    return mtest_finalize();
}
