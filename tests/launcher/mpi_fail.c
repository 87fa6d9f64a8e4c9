/* MPI program that fails on purpose, for the launcher tests.
 *
 *   mpi_fail segv R     rank R writes to a page that allows no access, once every rank is past
 *                       MPI_Init
 *   mpi_fail abort R    rank R calls abort()
 *   mpi_fail loop       every rank runs MPI_Ialltoall rounds until it is killed (or 120 s pass)
 *
 * Every rank prints "rank R pid P" once it is running (the tests kill ranks by that pid), rank 0
 * its job id, and in loop mode each rank "rank R looping" after some rounds. The ranks that do
 * not fail wait in a receive that nothing answers, so the launcher must end them. Further
 * arguments are ignored (tests tag the command line). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static void ialltoall_loop(int rank, int size)
{
    enum { COUNT = 256 };
    int *s = malloc(sizeof(int) * COUNT * (size_t)size), *r = malloc(sizeof(int) * COUNT * (size_t)size);
    if (!s || !r) {
        fprintf(stderr, "mpi_fail: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    double t0 = MPI_Wtime();
    for (long it = 0;; it++) {
        MPI_Request req;
        for (int k = 0; k < COUNT * size; k++)
            s[k] = rank * 7 + (int)it + k;
        MPI_Ialltoall(s, COUNT, MPI_INT, r, COUNT, MPI_INT, MPI_COMM_WORLD, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        for (int p = 0; p < size; p++)
            if (r[p * COUNT] != p * 7 + (int)it + rank * COUNT) {
                fprintf(stderr, "mpi_fail: rank %d round %ld: wrong data from rank %d\n", rank, it, p);
                MPI_Abort(MPI_COMM_WORLD, 3);
            }
        if (it == 50) {
            printf("rank %d looping\n", rank);
            fflush(stdout);
        }
        if (it % 64 == 63 && MPI_Wtime() - t0 > 120) {
            printf("rank %d: nobody was killed within 120 s\n", rank);
            break;
        }
    }
    free(s);
    free(r);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *mode = argc > 1 ? argv[1] : "";
    int victim = argc > 2 ? atoi(argv[2]) : -1;
    if (rank == 0) {
        const char *j = getenv("PMI_JOBID");
        printf("jobid %s\n", j ? j : "none");
    }
    printf("rank %d pid %ld\n", rank, (long)getpid());
    fflush(stdout);
    MPI_Barrier(MPI_COMM_WORLD);
    if (!strcmp(mode, "loop")) {
        ialltoall_loop(rank, size);
    } else if (!strcmp(mode, "segv") || !strcmp(mode, "abort")) {
        if (rank == victim) {
            if (!strcmp(mode, "abort"))
                abort();
            /* A store to a page that allows none: a real fault (a null pointer would be caught
             * by UndefinedBehaviorSanitizer in the sanitizer builds). */
            volatile int *p = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (p == MAP_FAILED) {
                fprintf(stderr, "mpi_fail: mmap failed\n");
                MPI_Abort(MPI_COMM_WORLD, 3);
            }
            *p = 1;
        }
        int x;
        MPI_Recv(&x, 1, MPI_INT, victim, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        fprintf(stderr, "usage: mpi_fail segv|abort RANK | loop\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Finalize();
    return 0;
}
