/* Nonblocking collectives that move while a rank computes without calling MPI (docs/DESIGN.md,
 * "Threads"): rank 0 starts MPI_Ialltoall (1 MiB blocks), MPI_Iallreduce (1 MiB of doubles) and
 * MPI_Ibcast (1 MiB) and then computes for MTEST_COMPUTE seconds (default 0.4) without calling
 * MPI; the other ranks start the same collectives first (so that their offers are already there
 * when rank 0 starts) and wait for them. The results are checked everywhere. With
 * MTEST_NBC_FAST=1 the other ranks' waits must also end before rank 0's computation does (within
 * half of it): their collectives need rank 0's part, which only its progress thread
 * (APTUS_ASYNC_PROGRESS=1) can do while it computes. Without the thread the waits end once rank 0
 * calls MPI again -- still correct, which the run without MTEST_NBC_FAST checks. */
#include <time.h>

#include "mtest.h"

enum { BLOCK = 1 << 20, NRED = (1 << 20) / 8, NCOLL = 3 };

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *env = getenv("MTEST_COMPUTE");
    double compute = env ? atof(env) : 0.4;
    int fast = getenv("MTEST_NBC_FAST") && atoi(getenv("MTEST_NBC_FAST"));

    unsigned char *sbuf = mtest_malloc((size_t)size * BLOCK), *rbuf = mtest_malloc((size_t)size * BLOCK);
    unsigned char *bbuf = mtest_malloc(BLOCK);
    double *in = mtest_malloc(NRED * sizeof(double)), *out = mtest_malloc(NRED * sizeof(double));
    for (int p = 0; p < size; p++)
        for (size_t i = 0; i < BLOCK; i += 4096)
            sbuf[(size_t)p * BLOCK + i] = (unsigned char)(rank * 16 + p + i / 4096);
    memset(rbuf, 0xee, (size_t)size * BLOCK);
    for (size_t i = 0; i < NRED; i++)
        in[i] = (double)(rank + 1) * (double)(i % 1000);
    for (size_t i = 0; i < BLOCK; i++)
        bbuf[i] = rank == 0 ? (unsigned char)(i * 7) : 0;

    MPI_Request rq[NCOLL];
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        /* let the others' offers arrive first (a sleep, not MPI) */
        struct timespec ts = { 0, 50 * 1000 * 1000 };
        nanosleep(&ts, NULL);
    }
    MPI_CHECK(MPI_Ialltoall(sbuf, BLOCK, MPI_BYTE, rbuf, BLOCK, MPI_BYTE, MPI_COMM_WORLD, &rq[0]));
    MPI_CHECK(MPI_Iallreduce(in, out, NRED, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &rq[1]));
    MPI_CHECK(MPI_Ibcast(bbuf, BLOCK, MPI_BYTE, 0, MPI_COMM_WORLD, &rq[2]));
    double waited = 0;
    if (rank == 0) {
        volatile double x = 0;
        double t0 = now();
        while (now() - t0 < compute)
            for (int k = 0; k < 1000; k++)
                x += k * 0.5;
        MPI_CHECK(MPI_Waitall(NCOLL, rq, MPI_STATUSES_IGNORE));
    } else {
        double t0 = now();
        MPI_CHECK(MPI_Waitall(NCOLL, rq, MPI_STATUSES_IGNORE));
        waited = now() - t0;
    }

    for (int p = 0; p < size; p++)
        for (size_t i = 0; i < BLOCK; i += 4096) {
            unsigned char want = (unsigned char)(p * 16 + rank + i / 4096);
            CHECK(rbuf[(size_t)p * BLOCK + i] == want, "Ialltoall: block from %d, byte %zu = %d, want %d", p, i,
                  rbuf[(size_t)p * BLOCK + i], want);
        }
    double sum = (double)size * (size + 1) / 2;
    for (size_t i = 0; i < NRED; i += 997)
        CHECK(out[i] == sum * (double)(i % 1000), "Iallreduce: [%zu] = %g, want %g", i, out[i],
              sum * (double)(i % 1000));
    for (size_t i = 0; i < BLOCK; i += 1009)
        CHECK(bbuf[i] == (unsigned char)(i * 7), "Ibcast: [%zu] = %d, want %d", i, bbuf[i], (unsigned char)(i * 7));
    if (fast && rank != 0)
        CHECK(waited < compute / 2,
              "the collectives waited %.3f s for rank 0, which computed for %.3f s: they did not move while it "
              "computed",
              waited, compute);
    if (rank == 1)
        printf("nbc_background: rank 1 waited %.3f s while rank 0 computed for %.3f s\n", waited, compute);
    free(sbuf);
    free(rbuf);
    free(bbuf);
    free(in);
    free(out);
    return mtest_finalize();
}
