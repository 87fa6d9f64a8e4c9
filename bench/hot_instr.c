/* hot_instr: a point-to-point hot path for instruction counting under callgrind: rank 0 runs N
 * iterations of MPI_Irecv + MPI_Isend + MPI_Waitall of 8 bytes with rank 1 inside
 * measured_loop(), which callgrind is told to count alone.
 *
 * So that the loop never waits (a wait would add a varying number of polling passes), rank 1
 * sends rank 0's N messages beforehand and rank 0 has them all before the loop (each MPI_Irecv
 * matches a message already there, each MPI_Isend leaves eagerly; MPI_Waitall finds both
 * complete). Rank 1 then receives rank 0's N messages.
 *
 *   hot_instr world N   MPI_COMM_WORLD, 2 x MPI_INT
 *   hot_instr dup N     a duplicate of MPI_COMM_WORLD, 1 x a committed contiguous type of 2 MPI_INT
 *   hot_instr self N [tool]   one rank, to itself: each MPI_Irecv is posted before its message,
 *                       which the MPI_Isend to itself matches at once (the posted-queue path);
 *                       with "tool", a tool's MPI_T session holds a started handle of the
 *                       per-peer counter peer.msgs.self (what the tool interface costs then)
 *
 * Instructions per iteration: (Ir at 2N - Ir at N) / N, e.g.
 *   mpiexec -n 2 valgrind --tool=callgrind --toggle-collect=measured_loop \
 *       --callgrind-out-file=cg.%p hot_instr dup 1000
 * and the "summary:" line of rank 0's file (the larger one: rank 1 counts nothing). Rank 0 also
 * prints the loop's time per iteration (meaningful without valgrind). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TAG_DATA 11
#define TAG_GO   12

__attribute__((noinline)) void measured_loop(long n, MPI_Comm c, MPI_Datatype t, int count, int peer, int *out,
                                             int *in);

__attribute__((noinline)) void measured_loop(long n, MPI_Comm c, MPI_Datatype t, int count, int peer, int *out, int *in)
{
    for (long i = 0; i < n; i++) {
        MPI_Request q[2];
        MPI_Irecv(in, count, t, peer, TAG_DATA, c, &q[0]);
        MPI_Isend(out, count, t, peer, TAG_DATA, c, &q[1]);
        MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int self = argc >= 3 && !strcmp(argv[1], "self");
    if (self ? size != 1 || argc > 4 || (argc == 4 && strcmp(argv[3], "tool") != 0)
             : argc != 3 || (strcmp(argv[1], "world") != 0 && strcmp(argv[1], "dup") != 0) || size != 2) {
        if (rank == 0)
            fprintf(stderr, "usage: mpiexec -n 2 hot_instr world|dup N, or mpiexec -n 1 hot_instr self N [tool]\n");
        MPI_Finalize();
        return 2;
    }
    long n = atol(argv[2]);
    if (self) {
        int out[2] = { 7, 7 }, in[2] = { -1, -1 };
        if (argc == 4) { /* a tool counting this rank's messages per peer */
            int provided, i, cnt;
            MPI_T_pvar_session ts;
            MPI_T_pvar_handle th;
            if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS ||
                MPI_T_pvar_get_index("peer.msgs.self", MPI_T_PVAR_CLASS_COUNTER, &i) != MPI_SUCCESS ||
                MPI_T_pvar_session_create(&ts) != MPI_SUCCESS ||
                MPI_T_pvar_handle_alloc(ts, i, NULL, &th, &cnt) != MPI_SUCCESS ||
                MPI_T_pvar_start(ts, th) != MPI_SUCCESS)
                MPI_Abort(MPI_COMM_WORLD, 1);
        }
        double t0 = MPI_Wtime();
        measured_loop(n, MPI_COMM_WORLD, MPI_INT, 2, 0, out, in);
        printf("hot_instr self%s: %.1f ns per iteration\n", argc == 4 ? " (tool)" : "",
               (MPI_Wtime() - t0) * 1e9 / (double)n);
        if (in[0] != 7 || in[1] != 7)
            MPI_Abort(MPI_COMM_WORLD, 1);
        MPI_Finalize();
        return 0;
    }
    MPI_Comm c = MPI_COMM_WORLD;
    MPI_Datatype t = MPI_INT;
    int count = 2;
    if (strcmp(argv[1], "dup") == 0) {
        MPI_Comm_dup(MPI_COMM_WORLD, &c);
        MPI_Type_contiguous(2, MPI_INT, &t);
        MPI_Type_commit(&t);
        count = 1;
    }
    int out[2] = { rank, rank }, in[2] = { -1, -1 }, go = 0;
    if (rank == 1) {
        for (long i = 0; i < n; i++)
            MPI_Send(out, count, t, 0, TAG_DATA, c);
        MPI_Send(&go, 1, MPI_INT, 0, TAG_GO, c);
        for (long i = 0; i < n; i++)
            MPI_Recv(in, count, t, 0, TAG_DATA, c, MPI_STATUS_IGNORE);
    } else {
        MPI_Recv(&go, 1, MPI_INT, 1, TAG_GO, c, MPI_STATUS_IGNORE); /* the N messages are here */
        double t0 = MPI_Wtime();
        measured_loop(n, c, t, count, 1, out, in);
        printf("hot_instr %s: %.1f ns per iteration\n", argv[1], (MPI_Wtime() - t0) * 1e9 / (double)n);
    }
    if (in[0] != 1 - rank || in[1] != 1 - rank) {
        fprintf(stderr, "rank %d: wrong data %d %d\n", rank, in[0], in[1]);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (c != MPI_COMM_WORLD) {
        MPI_Type_free(&t);
        MPI_Comm_free(&c);
    }
    MPI_Finalize();
    return 0;
}
