/* The library loaded with dlopen after the program started (what Python and mpi4py do): the
 * program's free and munmap then resolve to the C library, and the memory hooks never hear of
 * them -- a registration cache would find a freed-and-reallocated buffer's old registration
 * (under verbs: the pages pinned before, no longer the buffer's). The library must see that
 * and run rc-rdma without the cache: every large message registers its own buffer (misses
 * grow, hits stay 0), and the data is right with new content at reused addresses.
 * Not linked against the library: argv[1] names it; the MPI functions come from dlsym. */
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SZ     (1u << 20)
#define ROUNDS 4

static int (*p_init)(int *, char ***);
static int (*p_finalize)(void);
static int (*p_rank)(MPI_Comm, int *);
static int (*p_size)(MPI_Comm, int *);
static int (*p_send)(const void *, int, MPI_Datatype, int, int, MPI_Comm);
static int (*p_recv)(void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Status *);
static int (*p_allreduce)(const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm);
static int (*p_counter)(const char *, unsigned long long *);

static void *sym(void *lib, const char *name)
{
    void *f = dlsym(lib, name);
    if (!f) {
        fprintf(stderr, "dlopen_rcache: %s not found: %s\n", name, dlerror());
        exit(2);
    }
    return f;
}

static unsigned long long counter(const char *name)
{
    unsigned long long v = 0;
    if (p_counter(name, &v) != MPI_SUCCESS) {
        fprintf(stderr, "dlopen_rcache: no counter %s\n", name);
        exit(2);
    }
    return v;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: dlopen_rcache LIBRARY\n");
        return 2;
    }
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "dlopen_rcache: %s\n", dlerror());
        return 2;
    }
    *(void **)&p_init = sym(lib, "MPI_Init");
    *(void **)&p_finalize = sym(lib, "MPI_Finalize");
    *(void **)&p_rank = sym(lib, "MPI_Comm_rank");
    *(void **)&p_size = sym(lib, "MPI_Comm_size");
    *(void **)&p_send = sym(lib, "MPI_Send");
    *(void **)&p_recv = sym(lib, "MPI_Recv");
    *(void **)&p_allreduce = sym(lib, "MPI_Allreduce");
    *(void **)&p_counter = sym(lib, "MPIX_Aptus_counter");

    int rank, size, failures = 0;
    p_init(&argc, &argv);
    p_rank(MPI_COMM_WORLD, &rank);
    p_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        fprintf(stderr, "dlopen_rcache: needs 2 ranks\n");
        return 2;
    }
    if (counter("memhooks.active") != 0) {
        fprintf(stderr, "rank %d: the memory hooks say they see the program's frees, loaded by dlopen\n", rank);
        failures++;
    }
    /* A first large message, while the connection comes up (it may still go over UD). */
    void *warm = calloc(1, SZ);
    if (!warm)
        return 2;
    if (rank == 0)
        p_send(warm, (int)SZ, MPI_BYTE, 1, 99, MPI_COMM_WORLD);
    else
        p_recv(warm, (int)SZ, MPI_BYTE, 0, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    free(warm);
    unsigned long long misses0 = counter("rcache.misses");
    void *prev = NULL;
    int reused = 0;
    for (int round = 0; round < ROUNDS; round++) {
        unsigned char *buf = malloc(SZ);
        if (!buf)
            return 2;
        reused += buf == prev;
        prev = buf;
        if (rank == 0) {
            for (unsigned i = 0; i < SZ; i++)
                buf[i] = (unsigned char)(i * 13 + round * 7);
            p_send(buf, (int)SZ, MPI_BYTE, 1, round, MPI_COMM_WORLD);
        } else {
            memset(buf, 0, SZ);
            p_recv(buf, (int)SZ, MPI_BYTE, 0, round, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            for (unsigned i = 0; i < SZ; i++)
                if (buf[i] != (unsigned char)(i * 13 + round * 7)) {
                    fprintf(stderr, "rank 1: round %d: byte %u wrong\n", round, i);
                    failures++;
                    break;
                }
        }
        free(buf); /* the C library's free: the hooks do not see it */
    }
    /* The side that registers (the receiver in write mode, the sender in read mode) must have
     * registered anew each round: no hit. */
    unsigned long long hits = counter("rcache.hits"), misses = counter("rcache.misses") - misses0;
    if (hits != 0) {
        fprintf(stderr, "rank %d: %llu registration cache hits with the cache blind to frees\n", rank, hits);
        failures++;
    }
    unsigned long long all_misses = 0;
    p_allreduce(&misses, &all_misses, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (all_misses < ROUNDS) {
        fprintf(stderr,
                "rank %d: %llu new registrations for %d large messages (one each expected; did rc-rdma carry them?)\n",
                rank, all_misses, ROUNDS);
        failures++;
    }
    int total = 0;
    p_allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("dlopen_rcache: %s (%d of %d buffers at a reused address)\n", total ? "FAILED" : "ok", reused,
               ROUNDS - 1);
    p_finalize();
    return total != 0;
}
