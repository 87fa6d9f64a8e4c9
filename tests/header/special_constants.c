/* Uses every special constant of mpi.h in the calls that take it, so that a compiler that
 * second-guesses constant pointers (GCC 11+ -Wstringop-overread / -Wstringop-overflow /
 * -Wnonnull on array parameters) is caught by compiling this file with -Wall -Wextra -Werror
 * at -O2 and -O3 (tests/header/check_header.sh). It is compiled and linked, never run. */
#include <mpi.h>
#include <stddef.h>

static void errh(MPI_Comm *comm, int *code, ...)
{
    (void)comm, (void)code;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    if (argc > 1000) { /* never true: only the compiler's view of the calls matters */
        int buf[4] = { 0 }, src[1] = { 0 }, deg[1] = { 1 }, dst[1] = { 0 }, counts[1] = { 1 }, displs[1] = { 0 };
        int flag, idx, n;
        MPI_Aint adispls[1] = { 0 };
        MPI_Datatype types[1] = { MPI_INT };
        MPI_Request reqs[2] = { MPI_REQUEST_NULL, MPI_REQUEST_NULL };
        MPI_Comm g, inter;
        MPI_Fint fstat[MPI_F_STATUS_SIZE];
        MPI_Status st;
        MPI_F08_status f08;
        MPI_Errhandler eh;

        /* Buffers: MPI_BOTTOM, MPI_IN_PLACE, MPI_BUFFER_AUTOMATIC. */
        MPI_Send(MPI_BOTTOM, 0, MPI_INT, 0, 0, MPI_COMM_WORLD);
        MPI_Recv(MPI_BOTTOM, 0, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Allreduce(MPI_IN_PLACE, buf, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        MPI_Reduce(MPI_IN_PLACE, buf, 4, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
        MPI_Gather(MPI_IN_PLACE, 1, MPI_INT, buf, 1, MPI_INT, 0, MPI_COMM_WORLD);
        MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buf, counts, displs, MPI_INT, MPI_COMM_WORLD);
        MPI_Alltoallw(MPI_IN_PLACE, counts, displs, types, buf, counts, displs, types, MPI_COMM_WORLD);
        MPI_Neighbor_alltoallw(MPI_BOTTOM, counts, adispls, types, MPI_BOTTOM, counts, adispls, types, MPI_COMM_WORLD);
        MPI_Buffer_attach(MPI_BUFFER_AUTOMATIC, 0);
        MPI_Comm_attach_buffer(MPI_COMM_WORLD, MPI_BUFFER_AUTOMATIC, 0);

        /* Statuses. */
        MPI_Wait(&reqs[0], MPI_STATUS_IGNORE);
        MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
        MPI_Testall(2, reqs, &flag, MPI_STATUSES_IGNORE);
        MPI_Waitany(2, reqs, &idx, MPI_STATUS_IGNORE);
        MPI_Waitsome(2, reqs, &n, &idx, MPI_STATUSES_IGNORE);
        MPI_Testsome(2, reqs, &n, &idx, MPI_STATUSES_IGNORE);
        MPI_Probe(0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Sendrecv(buf, 1, MPI_INT, 0, 0, buf, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Status_c2f(&st, MPI_F_STATUS_IGNORE);
        MPI_Status_f2c(fstat, MPI_STATUS_IGNORE);
        MPI_Status_c2f08(&st, MPI_F08_STATUS_IGNORE);
        MPI_Status_f082c(&f08, MPI_STATUS_IGNORE);
        (void)MPI_F_STATUSES_IGNORE;
        (void)MPI_F08_STATUSES_IGNORE;

        /* Topologies: MPI_UNWEIGHTED and MPI_WEIGHTS_EMPTY. */
        MPI_Dist_graph_create(MPI_COMM_WORLD, 1, src, deg, dst, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g);
        MPI_Dist_graph_create(MPI_COMM_WORLD, 0, src, deg, dst, MPI_WEIGHTS_EMPTY, MPI_INFO_NULL, 0, &g);
        MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, src, MPI_UNWEIGHTED, 1, dst, MPI_UNWEIGHTED, MPI_INFO_NULL, 0,
                                       &g);
        MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 0, src, MPI_WEIGHTS_EMPTY, 0, dst, MPI_WEIGHTS_EMPTY,
                                       MPI_INFO_NULL, 1, &g);
        MPI_Dist_graph_neighbors(g, 1, src, MPI_UNWEIGHTED, 1, dst, MPI_UNWEIGHTED);

        /* Process management: MPI_ARGV_NULL, MPI_ARGVS_NULL, MPI_ERRCODES_IGNORE. */
        char cmd[] = "prog";
        char *cmds[1] = { cmd };
        int maxprocs[1] = { 1 };
        MPI_Info infos[1] = { MPI_INFO_NULL };
        MPI_Comm_spawn(cmd, MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter, MPI_ERRCODES_IGNORE);
        MPI_Comm_spawn_multiple(1, cmds, MPI_ARGVS_NULL, maxprocs, infos, 0, MPI_COMM_SELF, &inter,
                                MPI_ERRCODES_IGNORE);

        /* Callbacks given as constants. */
        int kv;
        MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &kv, NULL);
        MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &kv, NULL);
        MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, &kv, NULL);
        MPI_Type_create_keyval(MPI_TYPE_DUP_FN, MPI_TYPE_NULL_DELETE_FN, &kv, NULL);
        MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, MPI_WIN_NULL_DELETE_FN, &kv, NULL);
        MPI_Win_create_keyval(MPI_WIN_DUP_FN, MPI_WIN_NULL_DELETE_FN, &kv, NULL);
        MPI_Keyval_create(MPI_NULL_COPY_FN, MPI_NULL_DELETE_FN, &kv, NULL);
        MPI_Keyval_create(MPI_DUP_FN, MPI_NULL_DELETE_FN, &kv, NULL);
        MPI_Register_datarep("mine", MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL, NULL, NULL);

        /* The removed MPI-1 calls are declared by default. */
        MPI_Aint a;
        MPI_Address(buf, &a);
        MPI_Errhandler_create(errh, &eh);
        MPI_Errhandler_set(MPI_COMM_WORLD, eh);
    }
    MPI_Finalize();
    return 0;
}
