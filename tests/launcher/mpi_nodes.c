/* MPI program for the launcher tests across hosts: prints the size of its node's
 * MPI_COMM_TYPE_SHARED communicator (which follows the launcher's node assignment) and the
 * world size, then checks an allreduce over the world (which needs a channel between nodes).
 * With --hold=S the ranks then stay S seconds out of MPI (computing, as far as the launcher can
 * tell) before a last barrier. Other arguments are ignored (tests tag the command line). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int main(int argc, char **argv)
{
    int rank, size, node_size, one = 1, sum = 0, ranksum = 0;
    MPI_Comm node;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank == 0) {
        const char *j = getenv("PMI_JOBID");
        printf("jobid %s\n", j ? j : "none");
        fflush(stdout);
    }
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, node);
    MPI_Comm_size(node, &node_size);
    printf("node_size %d world %d%s\n", node_size, size, sum == node_size ? "" : " (node allreduce wrong)");
    fflush(stdout);
    MPI_Allreduce(&rank, &ranksum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s\n", ranksum == size * (size - 1) / 2 ? "sum ok" : "sum wrong");
    MPI_Comm_free(&node);
    for (int i = 1; i < argc; i++)
        if (!strncmp(argv[i], "--hold=", 7)) {
            double s = atof(argv[i] + 7);
            struct timespec ts = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };
            nanosleep(&ts, NULL);
            MPI_Barrier(MPI_COMM_WORLD);
        }
    MPI_Finalize();
    return 0;
}
