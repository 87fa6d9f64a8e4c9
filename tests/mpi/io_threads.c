/* MPI-IO under MPI_THREAD_MULTIPLE: four threads per rank at once, each opening, writing (explicit
 * offsets, the individual and the shared pointer, nonblocking independent and collective), reading
 * back and closing a file of its own on a communicator of its own, while all of them also write
 * their records into one file every rank opened together (disjoint offsets, the same handle from
 * every thread); each round also writes and reads its file through an external32 view of every
 * other int (converted, sieved). */
#include <pthread.h>
#include <unistd.h>

#include "mtest.h"

#define NT     4
#define ROUNDS 20
#define N      256

static char dir[256];
static int rank, size;
static MPI_Comm comms[NT];
static MPI_File common;
static int bad[NT];
static MPI_Datatype every_other;

static void *work(void *arg)
{
    int t = (int)(long)arg;
    char name[320];
    snprintf(name, sizeof name, "%s/r%d-t%d", dir, rank, t);
    int buf[N], in[N];
    for (int r = 0; r < ROUNDS; r++) {
        MPI_File fh;
        if (MPI_File_open(comms[t], name, MPI_MODE_RDWR | MPI_MODE_CREATE, MPI_INFO_NULL, &fh) != MPI_SUCCESS) {
            bad[t]++;
            continue;
        }
        for (int i = 0; i < N; i++)
            buf[i] = (rank * NT + t) * 100000 + r * 1000 + i;
        MPI_Request req;
        MPI_File_write_at(fh, 0, buf, N / 2, MPI_INT, MPI_STATUS_IGNORE);
        MPI_File_iwrite_at(fh, (N / 2) * sizeof(int), buf + N / 2, N / 4, MPI_INT, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        MPI_File_iwrite_at_all(fh, (N / 2) * sizeof(int), buf + N / 2, N / 4, MPI_INT, &req); /* again, collectively */
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        MPI_File_seek(fh, (3 * N / 4) * sizeof(int), MPI_SEEK_SET);
        MPI_File_write(fh, buf + 3 * N / 4, N / 4, MPI_INT, MPI_STATUS_IGNORE);
        MPI_File_read_at(fh, 0, in, N, MPI_INT, MPI_STATUS_IGNORE);
        if (memcmp(in, buf, sizeof buf) != 0)
            bad[t]++;
        /* external32 through a view of every other int (sieved windows): back converted, and
         * the first int big-endian in the file */
        if (MPI_File_set_view(fh, 0, MPI_INT, every_other, "external32", MPI_INFO_NULL) != MPI_SUCCESS ||
            MPI_File_write_at(fh, 0, buf, N, MPI_INT, MPI_STATUS_IGNORE) != MPI_SUCCESS ||
            MPI_File_read_at(fh, 0, in, N, MPI_INT, MPI_STATUS_IGNORE) != MPI_SUCCESS || memcmp(in, buf, sizeof buf))
            bad[t]++;
        unsigned char be[4];
        MPI_File_sync(fh);
        FILE *raw = fopen(name, "rb");
        if (!raw || fread(be, 1, 4, raw) != 4 ||
            ((unsigned)be[0] << 24 | (unsigned)be[1] << 16 | (unsigned)be[2] << 8 | be[3]) != (unsigned)buf[0])
            bad[t]++;
        if (raw)
            fclose(raw);
        MPI_File_close(&fh);
        /* this thread's record in the common file */
        int rec[2] = { rank * NT + t, r };
        MPI_Offset at = ((MPI_Offset)r * size * NT + rank * NT + t) * (MPI_Offset)sizeof rec;
        if (MPI_File_write_at(common, at, rec, 2, MPI_INT, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            bad[t]++;
    }
    MPI_File_delete(name, MPI_INFO_NULL);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    CHECK(provided == MPI_THREAD_MULTIPLE, "MPI_THREAD_MULTIPLE not provided");
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank == 0) {
        snprintf(dir, sizeof dir, "/tmp/aptus-iot-XXXXXX");
        CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    }
    MPI_Bcast(dir, sizeof dir, MPI_CHAR, 0, MPI_COMM_WORLD);
    char cname[320];
    snprintf(cname, sizeof cname, "%s/common", dir);
    CHECK(MPI_File_open(MPI_COMM_WORLD, cname, MPI_MODE_RDWR | MPI_MODE_CREATE, MPI_INFO_NULL, &common) == MPI_SUCCESS,
          "open the common file");
    for (int t = 0; t < NT; t++)
        MPI_Comm_dup(MPI_COMM_SELF, &comms[t]);
    MPI_Type_create_resized(MPI_INT, 0, 2 * sizeof(int), &every_other);
    MPI_Type_commit(&every_other);
    pthread_t th[NT];
    for (int t = 0; t < NT; t++)
        pthread_create(&th[t], NULL, work, (void *)(long)t);
    for (int t = 0; t < NT; t++)
        pthread_join(th[t], NULL);
    for (int t = 0; t < NT; t++) {
        CHECK(bad[t] == 0, "thread %d: %d wrong rounds", t, bad[t]);
        MPI_Comm_free(&comms[t]);
    }
    MPI_File_sync(common);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_sync(common);
    if (rank == 0) {
        int n = ROUNDS * size * NT;
        int *all = malloc(sizeof(int) * 2 * (size_t)n);
        MPI_Status st;
        int got;
        MPI_File_read_at(common, 0, all, 2 * n, MPI_INT, &st);
        MPI_Get_count(&st, MPI_INT, &got);
        CHECK(got == 2 * n, "common file: %d ints", got);
        for (int i = 0; i < n; i++)
            CHECK(all[2 * i] == i % (size * NT) && all[2 * i + 1] == i / (size * NT), "common record %d: %d %d", i,
                  all[2 * i], all[2 * i + 1]);
        free(all);
    }
    MPI_File_close(&common);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        MPI_File_delete(cname, MPI_INFO_NULL);
        rmdir(dir);
    }
    MPI_Type_free(&every_other);
    MPI_Finalize();
    return 0;
}
