/* A job that keeps exchanging messages around a ring (every rank sends to the next and receives
 * from the previous one, the payload checked byte for byte) while the test runner
 * (tests/netns/run_netns.sh --link-down) takes one host's link down. Rank 0 makes the file named
 * by $NETNS_TEST_READY after the first rounds, the signal for the runner.
 *
 * Expected ending: a rank whose neighbour has become unreachable gets no answer from it, its
 * channel gives up on it after APTUS_PEER_TIMEOUT seconds, and the job ends with the library's
 * message naming that rank. If the job is still exchanging messages after 90 s, the link never
 * went down (or the library never gave up): the program says so and exits 0, which the test
 * counts as a failure. The rank that gives up prints the tool interface's peer_failed event it
 * got (tests/mpi/counters.h: events_watch) before the job ends. */
#include "mtest.h"
#define TEST_NAME "dead_peer"
#include "counters.h"

enum { LEN = 20000 }; /* several datagrams per message */

int main(int argc, char **argv)
{
    int size;
    events_watch(1); /* (the tool interface's peer_failed, printed before the job ends) */
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size >= 2, "needs at least 2 ranks, got %d", size);
    const char *ready = getenv("NETNS_TEST_READY");
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    unsigned char *s = mtest_malloc(LEN), *r = mtest_malloc(LEN);
    double t0 = MPI_Wtime();
    for (unsigned i = 0;; i++) {
        mtest_fill(s, LEN, (unsigned)rank * 1000003u + i);
        MPI_CHECK(
            MPI_Sendrecv(s, LEN, MPI_BYTE, next, 1, r, LEN, MPI_BYTE, prev, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK_PATTERN(r, LEN, (unsigned)prev * 1000003u + i, "ring payload from the previous rank");
        if (i == 20 && rank == 0 && ready) {
            FILE *f = fopen(ready, "w");
            CHECK(f != NULL, "cannot create %s", ready);
            fclose(f);
            printf("dead_peer: ready after %u rounds\n", i + 1);
            fflush(stdout);
        }
        if (i % 64 == 63) { /* every rank stops in the same round */
            int late = rank == 0 && MPI_Wtime() - t0 > 90, stop = 0;
            MPI_CHECK(MPI_Allreduce(&late, &stop, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
            if (stop) {
                if (rank == 0)
                    printf("dead_peer: still exchanging messages after 90 s (%u rounds)\n", i + 1);
                break;
            }
        }
    }
    free(s);
    free(r);
    MPI_Finalize();
    return 0;
}
