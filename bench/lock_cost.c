/* lock_cost: what the thread level a program runs at costs its calls, in instructions: an 8-byte
 * MPI_Send / MPI_Recv ping-pong between ranks 0 and 1, then MPI_Isend + MPI_Wait of the completed
 * (eager) send, N times each. Meant to be run under callgrind, whose per-call counts of
 * PMPI_Send, PMPI_Isend and PMPI_Wait on rank 0 are the figures (docs/DESIGN.md, "Threads"):
 *
 *   mpiexec -n 2 valgrind --tool=callgrind --callgrind-out-file=cg.%p build/bench/lock_cost MODE 2000
 *   callgrind_annotate --inclusive=yes --tree=calling cg.<rank 0's pid>    (the "PMPI_Send (2,000x)" lines)
 *
 * MODE: world     MPI_Init (MPI_THREAD_SINGLE), MPI_COMM_WORLD
 *       session   MPI_Session_init(MPI_INFO_NULL): the sessions' default level
 *       single    a session asking for MPI_THREAD_SINGLE
 *       multiple  a session asking for MPI_THREAD_MULTIPLE
 *       on        the session's default level, and a second thread that calls MPI once before
 *                 the loops (a library with a lazy lock has turned it on by then)
 * The communicator of the session modes is made from mpi://WORLD. Plain MPI; builds with any mpicc. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static MPI_Comm comm;

static void *touch(void *arg)
{
    (void)arg;
    int r;
    MPI_Comm_rank(comm, &r);
    return NULL;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "world";
    int n = argc > 2 ? atoi(argv[2]) : 2000;
    MPI_Session s = MPI_SESSION_NULL;
    if (strcmp(mode, "world") != 0) {
        MPI_Info req = MPI_INFO_NULL;
        if (!strcmp(mode, "single") || !strcmp(mode, "multiple")) {
            MPI_Info_create(&req);
            MPI_Info_set(req, "thread_level", mode[0] == 's' ? "MPI_THREAD_SINGLE" : "MPI_THREAD_MULTIPLE");
        } else if (strcmp(mode, "session") != 0 && strcmp(mode, "on") != 0) {
            fprintf(stderr, "lock_cost: unknown mode %s (world, session, single, multiple, on)\n", mode);
            return 2;
        }
        MPI_Session_init(req, MPI_ERRORS_ARE_FATAL, &s);
        if (req != MPI_INFO_NULL)
            MPI_Info_free(&req);
        MPI_Group g;
        MPI_Group_from_session_pset(s, "mpi://WORLD", &g);
        MPI_Comm_create_from_group(g, "org.aptus.bench.lock_cost", MPI_INFO_NULL, MPI_ERRORS_ARE_FATAL, &comm);
        MPI_Group_free(&g);
        if (!strcmp(mode, "on")) {
            pthread_t t;
            pthread_create(&t, NULL, touch, NULL);
            pthread_join(t, NULL);
        }
    } else {
        MPI_Init(&argc, &argv);
        comm = MPI_COMM_WORLD;
    }
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    if (size < 2) {
        fprintf(stderr, "lock_cost: needs 2 ranks\n");
        return 2;
    }
    double buf = 0;
    for (int i = 0; i < n && rank < 2; i++) {
        if (rank == 0) {
            MPI_Send(&buf, 1, MPI_DOUBLE, 1, 0, comm);
            MPI_Recv(&buf, 1, MPI_DOUBLE, 1, 0, comm, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(&buf, 1, MPI_DOUBLE, 0, 0, comm, MPI_STATUS_IGNORE);
            MPI_Send(&buf, 1, MPI_DOUBLE, 0, 0, comm);
        }
    }
    for (int i = 0; i < n && rank < 2; i++) {
        MPI_Request rq;
        int peer = rank ^ 1;
        if (rank == 0) {
            MPI_Isend(&buf, 1, MPI_DOUBLE, peer, 1, comm, &rq);
            MPI_Wait(&rq, MPI_STATUS_IGNORE);
            MPI_Recv(&buf, 1, MPI_DOUBLE, peer, 1, comm, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(&buf, 1, MPI_DOUBLE, peer, 1, comm, MPI_STATUS_IGNORE);
            MPI_Isend(&buf, 1, MPI_DOUBLE, peer, 1, comm, &rq);
            MPI_Wait(&rq, MPI_STATUS_IGNORE);
        }
    }
    if (s != MPI_SESSION_NULL) {
        MPI_Comm_free(&comm);
        MPI_Session_finalize(&s);
    } else {
        MPI_Finalize();
    }
    return 0;
}
