/* Polling loops: a token passed around the ring of ranks, each rank receiving it by a loop of
 * nonblocking calls -- MPI_Iprobe(MPI_ANY_SOURCE), MPI_Improbe, MPI_Test, MPI_Testany,
 * MPI_Testsome, MPI_Testall, MPI_Request_get_status -- with every token checked. Run with more
 * ranks than cores, where a poller must give its core to the rank that holds the token (the
 * statistics line "polling calls that gave the core away" counts it: tests/mpi/threads.cmake).
 * Argument: [ROUNDS] (default 20). */
#include "mtest.h"

enum { P_IPROBE, P_IMPROBE, P_TEST, P_TESTANY, P_TESTSOME, P_TESTALL, P_GET_STATUS, P_COUNT };

static int rank, size, left, right;

static long receive(int how)
{
    long token = -1, never;
    int flag = 0, idx = -1, n = 0, ids[2];
    MPI_Status st;
    MPI_Request r[2];
    MPI_Message m;
    switch (how) {
    case P_IPROBE:
        while (!flag)
            MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
        CHECK(st.MPI_SOURCE == left, "iprobe found rank %d", st.MPI_SOURCE);
        MPI_Recv(&token, 1, MPI_LONG, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        break;
    case P_IMPROBE:
        while (!flag)
            MPI_Improbe(left, 1, MPI_COMM_WORLD, &flag, &m, &st);
        MPI_Mrecv(&token, 1, MPI_LONG, &m, MPI_STATUS_IGNORE);
        break;
    case P_TEST:
        MPI_Irecv(&token, 1, MPI_LONG, left, 1, MPI_COMM_WORLD, &r[0]);
        while (!flag)
            MPI_Test(&r[0], &flag, MPI_STATUS_IGNORE);
        break;
    case P_TESTANY:
    case P_TESTSOME:
        MPI_Irecv(&never, 1, MPI_LONG, MPI_ANY_SOURCE, 2, MPI_COMM_WORLD, &r[0]);
        MPI_Irecv(&token, 1, MPI_LONG, left, 1, MPI_COMM_WORLD, &r[1]);
        if (how == P_TESTANY) {
            while (!flag)
                MPI_Testany(2, r, &idx, &flag, MPI_STATUS_IGNORE);
            CHECK(idx == 1, "testany completed request %d", idx);
        } else {
            while (n == 0)
                MPI_Testsome(2, r, &n, ids, MPI_STATUSES_IGNORE);
            CHECK(n == 1 && ids[0] == 1, "testsome completed %d requests, first %d", n, ids[0]);
        }
        MPI_Cancel(&r[0]);
        MPI_Wait(&r[0], MPI_STATUS_IGNORE);
        break;
    case P_TESTALL:
        MPI_Irecv(&token, 1, MPI_LONG, left, 1, MPI_COMM_WORLD, &r[0]);
        while (!flag)
            MPI_Testall(1, r, &flag, MPI_STATUSES_IGNORE);
        break;
    case P_GET_STATUS:
        MPI_Irecv(&token, 1, MPI_LONG, left, 1, MPI_COMM_WORLD, &r[0]);
        while (!flag)
            MPI_Request_get_status(r[0], &flag, MPI_STATUS_IGNORE);
        MPI_Wait(&r[0], MPI_STATUS_IGNORE);
        break;
    }
    return token;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int rounds = argc > 1 ? atoi(argv[1]) : 20;
    left = (rank + size - 1) % size;
    right = (rank + 1) % size;
    if (size < 2) {
        MPI_Finalize();
        return 0;
    }
    for (int how = 0; how < P_COUNT; how++)
        for (int i = 0; i < rounds; i++) {
            long base = (long)(how * rounds + i) * size;
            if (rank == 0) {
                MPI_Send(&base, 1, MPI_LONG, right, 1, MPI_COMM_WORLD);
                long back = receive(how);
                CHECK(back == base + size - 1, "loop %d round %d: token %ld, expected %ld", how, i, back,
                      base + size - 1);
            } else {
                long t = receive(how);
                CHECK(t == base + rank - 1, "loop %d round %d: token %ld, expected %ld", how, i, t, base + rank - 1);
                t++;
                MPI_Send(&t, 1, MPI_LONG, right, 1, MPI_COMM_WORLD);
            }
        }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("poll_loops: %d ranks, %d kinds x %d rounds: OK\n", size, P_COUNT, rounds);
    MPI_Finalize();
    return 0;
}
