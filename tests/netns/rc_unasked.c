/* A connection only the lower rank wants (tests/netns): rank 1 counts its messages toward a
 * threshold it never reaches (APTUS_RC_THRESHOLD=60000, set here before MPI_Init), rank 0 toward
 * the environment's (1), so rank 0 connects without being asked while rank 1 has no connection
 * and none pending -- nothing of its own that would make it read its connection events. Rank 0
 * sends 64 KiB messages to rank 1, each answered by a small one, until its connection is up
 * (5 s at most); then a few more, which the connection carries. Both ranks must see one
 * connection up; the contents are checked. Usage: rc_unasked (2 ranks on two hosts). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TEST_NAME "rc_unasked"
#include "counters.h"

#define N (16 * 1024)

int main(int argc, char **argv)
{
    (void)argc, (void)argv;
    const char *pr = getenv("PMI_RANK");
    if (pr && strcmp(pr, "0") != 0)
        setenv("APTUS_RC_THRESHOLD", "60000", 1);
    MPI_Init(&argc, &argv);
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        fprintf(stderr, "%s: needs 2 ranks\n", TEST_NAME);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int *buf = malloc(N * sizeof(int));
    int go = 1, k = 0, extra = 0;
    double t0 = MPI_Wtime();
    while (go) {
        if (rank == 0) {
            pattern_fill(buf, N, 0, k);
            MPI_Send(buf, N, MPI_INT, 1, 1, MPI_COMM_WORLD);
            int ack = -1;
            MPI_Recv(&ack, 1, MPI_INT, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            EXPECT(ack == k, "message %d answered with %d", k, ack);
            if (counter("rc.connections") == 1 || MPI_Wtime() - t0 > 5)
                extra++;
            go = extra < 4;
            MPI_Send(&go, 1, MPI_INT, 1, 3, MPI_COMM_WORLD);
        } else {
            MPI_Recv(buf, N, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            EXPECT(pattern_intact(buf, N, 0, k), "message %d is wrong", k);
            MPI_Send(&k, 1, MPI_INT, 0, 2, MPI_COMM_WORLD);
            MPI_Recv(&go, 1, MPI_INT, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        k++;
    }
    unsigned long long up = counter("rc.connections"), opened = counter("rc.opened");
    EXPECT(up == 1 && opened == 1, "after %d messages (%.1f s): %llu connections up, %llu opened", k, MPI_Wtime() - t0,
           up, opened);
    free(buf);
    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && all == 0)
        printf("%s: ok after %d messages\n", TEST_NAME, k);
    MPI_Finalize();
    return all ? 1 : 0;
}
