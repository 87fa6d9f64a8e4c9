/* Allocation rules (APTUS_ALLOC_RULES="size>=64K:rc-rdma@3", 2 ranks on UD + RC chains): small
 * messages do not count toward a connection, large ones do. 200 small messages each way leave
 * both ranks without a connection (rc.connections and rc.opened stay 0 while the first ask would
 * have come after 16 messages of any size by the default rule); then 3 large messages from rank
 * 0 to rank 1 reach the threshold on both sides (a message counts where it is sent and where it
 * is received), and the connection comes up (polled for with small messages, which still do not
 * count). Every message's content is checked. */
#include <mpi.h>
#include <mpix_aptus.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BIG (64 * 1024)

static unsigned long long counter(const char *name)
{
    unsigned long long v = 0;
    if (MPIX_Aptus_counter(name, &v) != MPI_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, 2);
    return v;
}

int main(int argc, char **argv)
{
    int rank, size, failures = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2)
        MPI_Abort(MPI_COMM_WORLD, 2);
    int peer = 1 - rank;
    for (int i = 0; i < 200; i++) {
        int x = rank * 1000 + i, y = -1;
        MPI_Sendrecv(&x, 1, MPI_INT, peer, i, &y, 1, MPI_INT, peer, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (y != peer * 1000 + i)
            failures++;
    }
    if (counter("rc.opened") != 0 || counter("rc.connections") != 0) {
        fprintf(stderr, "rank %d: a connection came up from small messages only\n", rank);
        failures++;
    }
    char *buf = malloc(BIG);
    for (int k = 0; k < 3; k++) {
        if (rank == 0) {
            for (int i = 0; i < BIG; i++)
                buf[i] = (char)(i * 7 + k);
            MPI_Send(buf, BIG, MPI_CHAR, 1, 500 + k, MPI_COMM_WORLD);
        } else {
            MPI_Recv(buf, BIG, MPI_CHAR, 0, 500 + k, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            for (int i = 0; i < BIG; i++)
                if (buf[i] != (char)(i * 7 + k)) {
                    failures++;
                    break;
                }
        }
    }
    int up = 0, all = 0;
    double t0 = MPI_Wtime();
    while (!all && MPI_Wtime() - t0 < 20) {
        int x = rank;
        MPI_Sendrecv_replace(&x, 1, MPI_INT, peer, 9, peer, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        up = counter("rc.connections") == 1;
        MPI_Allreduce(&up, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    }
    if (!all) {
        fprintf(stderr, "rank %d: no connection after 3 large messages\n", rank);
        failures++;
    }
    free(buf);
    /* With --inject (a provider whose fi_inject takes a small frame: tcp's takes 128 bytes),
     * small messages over the connection go by inject, and arrive intact. */
    if (argc > 1 && !strcmp(argv[1], "--inject")) {
        unsigned long long before = counter("rc.frames_injected");
        for (int i = 0; i < 100; i++) {
            int x = rank * 7000 + i, y = -1;
            MPI_Sendrecv(&x, 1, MPI_INT, peer, 600 + i, &y, 1, MPI_INT, peer, 600 + i, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
            if (y != peer * 7000 + i)
                failures++;
        }
        unsigned long long sent = counter("rc.frames_injected") - before;
        if (sent < 100) {
            fprintf(stderr, "rank %d: %llu of 100 small messages over the connection went by inject\n", rank, sent);
            failures++;
        }
    }
    int total;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s\n", total ? "alloc_rules: FAILED" : "alloc_rules: ok");
    MPI_Finalize();
    return total != 0;
}
