/* Aptus MPI demo: every rank exchanges small (eager) and large (rendezvous) messages with
 * every other rank, checks every byte, and agrees on the result with MPI_Allreduce. Run it
 * with APTUS_STATS=1 to see which channel carried what. Builds with any MPI's mpicc. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned char pattern(int from, int to, size_t i)
{
    return (unsigned char)(from * 31 + to * 7 + (int)(i % 251));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const size_t sizes[] = { 0, 8, 1000, 16000, 100000, 4u << 20 };
    const int nsizes = (int)(sizeof sizes / sizeof sizes[0]);
    size_t max = sizes[nsizes - 1];
    unsigned char *out = malloc(max), *in = malloc(max);
    int errors = 0;
    for (int s = 0; s < nsizes; s++) {
        for (int shift = 1; shift < size; shift++) {
            int to = (rank + shift) % size, from = (rank - shift + size) % size;
            for (size_t i = 0; i < sizes[s]; i++)
                out[i] = pattern(rank, to, i);
            MPI_Status st;
            MPI_Sendrecv(out, (int)sizes[s], MPI_BYTE, to, s, in, (int)max, MPI_BYTE, from, s, MPI_COMM_WORLD, &st);
            int got;
            MPI_Get_count(&st, MPI_BYTE, &got);
            if ((size_t)got != sizes[s])
                errors++;
            for (size_t i = 0; i < sizes[s]; i++)
                if (in[i] != pattern(from, rank, i)) {
                    errors++;
                    break;
                }
        }
    }
    int total;
    MPI_Allreduce(&errors, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    char name[MPI_MAX_PROCESSOR_NAME], lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Get_processor_name(name, &len);
    MPI_Get_library_version(lib, &len);
    if (rank == 0)
        printf("%s\n%d ranks exchanged %d message sizes (0 B to %zu B) with every peer: %s\n", lib, size, nsizes, max,
               total == 0 ? "all data correct" : "DATA ERRORS");
    free(out);
    free(in);
    MPI_Finalize();
    return total == 0 ? 0 : 1;
}
