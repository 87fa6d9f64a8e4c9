/* Fast paths opened by the allocation rules (3 ranks on one node over RC, rc-fp first in the
 * chain; APTUS_ALLOC_RULES="size<=1K:rc-fp@24;*:rc-sr@4", APTUS_RCFP_MAX=1):
 *  1. ranks 0 and 1 exchange 16 small messages (8 each way): the connection comes up (4
 *     messages; waited for without messages), no fast path is asked for yet (a message counts where it is sent and
 * where it arrives: 16 < 24);
 *  2. they go on: each asks for a fast path once its count reaches 24 and gets one;
 *  3. rank 0 and rank 2 then exchange 200 small messages: rank 0 is at its limit both ways (one
 *     block owned, one fast path), so rank 2 is refused and rank 0 asks for nothing.
 * Every message's content is checked. */
#include <mpi.h>
#include <mpix_aptus.h>
#include <stdio.h>
#include <stdlib.h>

static unsigned long long counter(const char *name)
{
    unsigned long long v = 0;
    if (MPIX_Aptus_counter(name, &v) != MPI_SUCCESS) {
        fprintf(stderr, "rcfp_alloc: no counter %s (is rc-fp in the chain?)\n", name);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return v;
}

static int failures;

static void exchange(int peer, int n, int *seq)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (int i = 0; i < n; i++, (*seq)++) {
        int x[4] = { rank, peer, *seq, rank * 7919 + *seq }, y[4] = { -1, -1, -1, -1 };
        MPI_Sendrecv(x, 4, MPI_INT, peer, *seq % 100, y, 4, MPI_INT, peer, *seq % 100, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        if (y[0] != peer || y[1] != rank || y[2] != *seq || y[3] != peer * 7919 + *seq)
            failures++;
    }
}

#define EXPECT(cond, ...)                                                                                              \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            fprintf(stderr, "rcfp_alloc: rank %d: ", rank);                                                            \
            fprintf(stderr, __VA_ARGS__);                                                                              \
            fputc('\n', stderr);                                                                                       \
            failures++;                                                                                                \
        }                                                                                                              \
    } while (0)

int main(int argc, char **argv)
{
    int rank, size, seq = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 3)
        MPI_Abort(MPI_COMM_WORLD, 2);
    if (rank < 2) {
        exchange(1 - rank, 8, &seq);
        /* the connection comes up while nothing is sent (progress only), and some time after it
         * still no fast path: the rule has not counted enough */
        double t0 = MPI_Wtime(), up = 0;
        while (MPI_Wtime() - t0 < 20 && (!up || MPI_Wtime() - up < 0.05)) {
            int flag;
            MPI_Iprobe(MPI_ANY_SOURCE, 999, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
            if (!up && counter("rc.connections") == 1)
                up = MPI_Wtime();
        }
        EXPECT(up, "no connection after 16 messages (the rule says 4)");
        EXPECT(counter("rcfp.asked") == 0 && counter("rcfp.paths") == 0,
               "a fast path asked for after 16 messages (the rule says 24): asked %llu, paths %llu",
               counter("rcfp.asked"), counter("rcfp.paths"));
        /* on until both sides have their fast path (granted a round trip after the ask) */
        int more = 0, both = 0;
        while (!both && more < 20000) {
            exchange(1 - rank, 4, &seq);
            more += 4;
            int mine = counter("rcfp.paths") == 1 && counter("rcfp.blocks") == 1, all = 0;
            MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
            both = all;
        }
        EXPECT(both, "no fast path between ranks 0 and 1 after %d more messages each way", more);
        EXPECT(counter("rcfp.asked") == 1, "asked %llu times for one fast path", counter("rcfp.asked"));
        /* messages now take it */
        unsigned long long before = counter("rcfp.msgs");
        exchange(1 - rank, 10, &seq);
        EXPECT(counter("rcfp.msgs") >= before + 10, "10 small messages, %llu of them over the fast path",
               counter("rcfp.msgs") - before);
    } else {
        int more = 0, both = 0;
        while (!both && more < 20000) { /* (rank 2 takes part in the allreduce of ranks 0 and 1) */
            int mine = 1, all = 0;
            more += 4;
            MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
            both = all;
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    seq = 1000000;
    if (rank == 0 || rank == 2)
        exchange(2 - rank, 200, &seq);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        EXPECT(counter("rcfp.paths") == 1 && counter("rcfp.blocks") == 1,
               "beyond the limit of 1: paths %llu, blocks %llu", counter("rcfp.paths"), counter("rcfp.blocks"));
        EXPECT(counter("rcfp.refused") >= 1, "rank 2's ask was not refused (refused %llu)", counter("rcfp.refused"));
        EXPECT(counter("rcfp.asked") == 1, "asked %llu times (the limit stops the second)", counter("rcfp.asked"));
    }
    if (rank == 2)
        EXPECT(counter("rcfp.paths") == 0 && counter("rcfp.asked") >= 1,
               "rank 2: paths %llu, asked %llu (it asks once its count is reached, and is refused)",
               counter("rcfp.paths"), counter("rcfp.asked"));
    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf(all ? "rcfp_alloc: FAILED (%d)\n" : "rcfp_alloc: ok\n", all);
    MPI_Finalize();
    return all != 0;
}
