/* Memory per process against the number of peers it talks to (seed 000, Figure 3a).
 *
 * usage: mem_scale [-p PEERS] [-r ROUNDS] [-s BYTES] [-l BYTES]
 *   -p PEERS  peers each rank exchanges messages with: the next PEERS ranks around the ring
 *             (sends to rank+1..rank+PEERS, receives from rank-1..rank-PEERS); default all
 *   -r ROUNDS rounds (default 40): each round sends one BYTES message (default 1 KiB) to every
 *             peer, and every 10th round one -l BYTES message (default 64 KiB, a rendezvous)
 *   -s, -l    the small and large message sizes
 * Every message's content is checked. Then each rank reads its resident memory (VmRSS and its
 * peak VmHWM from /proc/self/status) and, under Aptus MPI, what its channels hold
 * (MPIX_Aptus_counter "memory") and its RC connections; rank 0 prints one table row:
 *   ranks peers  rss_avg_MB rss_max_MB hwm_max_MB  lib_avg_MB lib_max_MB  rc_avg rc_max  fp_avg
 *   fpmem_avg_MB
 * (fast paths per rank and their memory, rcfp.paths and rcfp.memory; lib, rc and fp columns are
 * "-" under other libraries). Plain MPI otherwise: builds with any
 * mpicc. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__has_include)
#if __has_include(<mpix_aptus.h>)
#include <mpix_aptus.h>
#endif
#endif

static long status_kb(const char *key)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long v = -1;
    size_t k = strlen(key);
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, key, k) && line[k] == ':') {
            v = strtol(line + k + 1, NULL, 10);
            break;
        }
    fclose(f);
    return v;
}

static unsigned char pat(int from, int round, size_t i)
{
    return (unsigned char)(from * 31 + round * 7 + (int)(i % 251));
}

int main(int argc, char **argv)
{
    int rank, size, peers = -1, rounds = 40;
    size_t small = 1024, large = 64 * 1024;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "-p"))
            peers = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "-r"))
            rounds = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "-s"))
            small = (size_t)atol(argv[i + 1]);
        else if (!strcmp(argv[i], "-l"))
            large = (size_t)atol(argv[i + 1]);
    }
    if (peers < 0 || peers > size - 1)
        peers = size - 1;
    size_t maxlen = small > large ? small : large;
    unsigned char *sbuf = malloc(maxlen), *rbuf = malloc((size_t)(peers ? peers : 1) * maxlen);
    MPI_Request *req = malloc(sizeof(MPI_Request) * (size_t)(2 * peers + 1));
    if (!sbuf || !rbuf || !req)
        MPI_Abort(MPI_COMM_WORLD, 2);
    long bad = 0;
    for (int round = 0; round < rounds; round++) {
        size_t n = (round % 10 == 9) ? large : small;
        for (size_t i = 0; i < n; i++)
            sbuf[i] = pat(rank, round, i);
        int k = 0;
        for (int d = 1; d <= peers; d++)
            MPI_Irecv(rbuf + (size_t)(d - 1) * maxlen, (int)n, MPI_BYTE, (rank - d + size) % size, round,
                      MPI_COMM_WORLD, &req[k++]);
        for (int d = 1; d <= peers; d++)
            MPI_Isend(sbuf, (int)n, MPI_BYTE, (rank + d) % size, round, MPI_COMM_WORLD, &req[k++]);
        MPI_Waitall(k, req, MPI_STATUSES_IGNORE);
        for (int d = 1; d <= peers; d++) {
            int from = (rank - d + size) % size;
            for (size_t i = 0; i < n; i++)
                bad += rbuf[(size_t)(d - 1) * maxlen + i] != pat(from, round, i);
        }
    }
    double mine[6] = { (double)status_kb("VmRSS") / 1024.0, (double)status_kb("VmHWM") / 1024.0, -1, -1, 0, 0 };
#ifdef MPIX_APTUS_COUNTERS
    unsigned long long v;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN); /* rc.* exist only where RC is in use */
    if (MPIX_Aptus_counter("memory", &v) == MPI_SUCCESS)
        mine[2] = (double)v / (1024.0 * 1024.0);
    mine[3] = MPIX_Aptus_counter("rc.connections", &v) == MPI_SUCCESS ? (double)v : 0;
    mine[4] = MPIX_Aptus_counter("rcfp.paths", &v) == MPI_SUCCESS ? (double)v : 0;
    mine[5] = MPIX_Aptus_counter("rcfp.memory", &v) == MPI_SUCCESS ? (double)v / (1024.0 * 1024.0) : 0;
#endif
    double sum[6], max[6];
    long allbad;
    MPI_Reduce(mine, sum, 6, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(mine, max, 6, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&bad, &allbad, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("# mem_scale: %d ranks, %d peers each, %d rounds of %zu B (every 10th: %zu B)%s\n", size, peers, rounds,
               small, large, allbad ? "; DATA WRONG" : "");
        printf("# ranks peers  rss_avg_MB rss_max_MB hwm_max_MB  lib_avg_MB lib_max_MB  rc_avg rc_max  fp_avg "
               "fpmem_avg_MB\n");
        printf("%7d %5d  %10.1f %10.1f %10.1f", size, peers, sum[0] / size, max[0], max[1]);
        if (max[2] >= 0)
            printf("  %10.2f %10.2f  %6.1f %6.0f  %6.1f %12.2f\n", sum[2] / size, max[2], sum[3] / size, max[3],
                   sum[4] / size, sum[5] / size);
        else
            printf("  %10s %10s  %6s %6s  %6s %12s\n", "-", "-", "-", "-", "-", "-");
    }
    free(sbuf);
    free(rbuf);
    free(req);
    MPI_Finalize();
    return allbad != 0;
}
