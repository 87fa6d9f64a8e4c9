/* Helpers of the tests that read the library's counters (MPIX_Aptus_counter, mpix_aptus.h): a
 * counter that must exist, a check that counts a failure and says why, progress without
 * messages until a condition holds, a checked exchange of small messages. A test defines TEST_NAME (its name in
 * messages) first and sets `rank`. */
#ifndef APTUS_TESTS_MPI_COUNTERS_H
#define APTUS_TESTS_MPI_COUNTERS_H

#include <mpi.h>
#include <mpix_aptus.h>
#include <stdio.h>

static int failures, rank;

static inline unsigned long long counter(const char *name)
{
    unsigned long long v = 0;
    if (MPIX_Aptus_counter(name, &v) != MPI_SUCCESS) {
        fprintf(stderr, "%s: no counter %s (is its channel in the chain?)\n", TEST_NAME, name);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return v;
}

#define EXPECT(cond, ...)                                                                                              \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            fprintf(stderr, "%s: rank %d: ", TEST_NAME, rank);                                                         \
            fprintf(stderr, __VA_ARGS__);                                                                              \
            fputc('\n', stderr);                                                                                       \
            failures++;                                                                                                \
        }                                                                                                              \
    } while (0)

/* Progress only (no message to anyone) until pred() or `limit` seconds; pred()'s last answer. */
static inline int progress_until(int (*pred)(void), double limit)
{
    double t0 = MPI_Wtime();
    int flag;
    while (!pred() && MPI_Wtime() - t0 < limit)
        MPI_Iprobe(MPI_ANY_SOURCE, 12345, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    return pred();
}

/* n small messages each way with peer (a Sendrecv each, tag 5), every one checked. */
static inline void exchange(int peer, int n, int base)
{
    for (int i = 0; i < n; i++) {
        int x[3] = { rank, base + i, rank * 31 + i }, y[3] = { -1, -1, -1 };
        MPI_Sendrecv(x, 3, MPI_INT, peer, 5, y, 3, MPI_INT, peer, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (y[0] != peer || y[1] != base + i || y[2] != peer * 31 + i)
            failures++;
    }
}

/* A checkable pattern: n ints for message k of round `round`. */
static inline void pattern_fill(int *b, int n, int round, int k)
{
    for (int i = 0; i < n; i++)
        b[i] = round * 131 + k * 17 + i * 7;
}
static inline int pattern_intact(const int *b, int n, int round, int k)
{
    for (int i = 0; i < n; i++)
        if (b[i] != round * 131 + k * 17 + i * 7)
            return 0;
    return 1;
}

/* Every rank's failures summed; "TEST_NAME: ok" from rank 0 when none; MPI_Finalize. The exit
 * status. */
static inline int finish_test(void)
{
    int bad = 0;
    MPI_Allreduce(&failures, &bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && bad == 0)
        printf("%s: ok\n", TEST_NAME);
    MPI_Finalize();
    return bad ? 1 : 0;
}

#endif
