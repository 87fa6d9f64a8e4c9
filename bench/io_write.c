/* MPI-IO bandwidth (issue 31): a 3-D array of doubles (N^3) block-decomposed over the ranks
 * (MPI_Dims_create), each rank with a subarray view, written into a new file with
 * MPI_File_write_all (without and with MPI_File_sync before the close) and read back with
 * MPI_File_read_all (every value checked); beside it, one process moving the same bytes with
 * plain write() (and fsync) and read() -- the ceiling on one node, where the file system
 * serializes the writers of one file. Bandwidths in MB/s (10^6 bytes) over open..close, the
 * slowest rank's time; best and median of the repetitions.
 *
 *   io_write [-n N] [-r reps] [-d dir]       (defaults: N = 128, i.e. 16 MiB; 5; /tmp)
 *
 * Builds with any MPI's mpicc: mpicc -O2 -std=c11 -o io_write io_write.c */
#include "bench_common.h"

#include <fcntl.h>
#include <sys/stat.h>

static int rank, size, n = 128, reps = 5;
static const char *dir = "/tmp";
static char path[512];

static double now(void)
{
    return MPI_Wtime();
}

/* The slowest rank's time. */
static double slowest(double t)
{
    double m;
    MPI_Allreduce(&t, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return m;
}

static void row(const char *what, size_t bytes, double *t, int k)
{
    if (rank != 0)
        return;
    double bw[BENCH_MAX_REPS] = { 0 };
    for (int i = 0; i < k; i++)
        bw[i] = (double)bytes / t[i] / 1e6;
    printf("# table: %s  unit: MB/s  better: higher\n#  size  iters  best  median\n", what);
    printf("%zu %d %.1f %.1f\n", bytes, k, bench_max(bw, k), bench_median(bw, k));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "-n") == 0)
            n = bench_parse_int(argv[i + 1], "-n", 1);
        else if (strcmp(argv[i], "-r") == 0)
            reps = bench_parse_int(argv[i + 1], "-r", 1);
        else if (strcmp(argv[i], "-d") == 0)
            dir = argv[i + 1];
        else
            bench_die("usage: io_write [-n N] [-r reps] [-d dir]");
    }
    if (reps > BENCH_MAX_REPS)
        reps = BENCH_MAX_REPS;
    int dims[3] = { 0, 0, 0 }, periods[3] = { 0, 0, 0 }, coords[3];
    MPI_Dims_create(size, 3, dims);
    MPI_Comm cart;
    MPI_Cart_create(MPI_COMM_WORLD, 3, dims, periods, 0, &cart);
    MPI_Cart_coords(cart, rank, 3, coords);
    int gs[3] = { n, n, n }, ls[3], st[3];
    for (int d = 0; d < 3; d++) {
        ls[d] = n / dims[d] + (coords[d] < n % dims[d]);
        st[d] = coords[d] * (n / dims[d]) + (coords[d] < n % dims[d] ? coords[d] : n % dims[d]);
    }
    size_t local = (size_t)ls[0] * ls[1] * ls[2], total = (size_t)n * n * n * sizeof(double);
    double *a = bench_alloc(local * sizeof(double)), *b = bench_alloc(local * sizeof(double));
    for (int i = 0; i < ls[0]; i++)
        for (int j = 0; j < ls[1]; j++)
            for (int k = 0; k < ls[2]; k++)
                a[((size_t)i * ls[1] + j) * ls[2] + k] =
                    (double)(((size_t)(st[0] + i) * n + st[1] + j) * n + st[2] + k);
    MPI_Datatype view;
    MPI_Type_create_subarray(3, gs, ls, st, MPI_ORDER_C, MPI_DOUBLE, &view);
    MPI_Type_commit(&view);
    char lib[256];
    bench_library_name(lib, sizeof lib);
    snprintf(path, sizeof path, "%s/aptus-io-bench-%d", dir, (int)getpid());
    MPI_Bcast(path, sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("# benchmark: io_write | library: %s | ranks: %d | array: %d^3 doubles (%zu bytes), ranks %dx%dx%d | "
               "file: %s\n",
               lib, size, n, total, dims[0], dims[1], dims[2], path);

    double t[BENCH_MAX_REPS];
    for (int sync = 0; sync < 2; sync++) {
        for (int r = 0; r < reps; r++) {
            if (rank == 0)
                unlink(path);
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = now();
            MPI_File fh;
            if (MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh) !=
                MPI_SUCCESS)
                bench_die("MPI_File_open %s", path);
            MPI_File_set_view(fh, 0, MPI_DOUBLE, view, "native", MPI_INFO_NULL);
            MPI_File_write_all(fh, a, (int)local, MPI_DOUBLE, MPI_STATUS_IGNORE);
            if (sync)
                MPI_File_sync(fh);
            MPI_File_close(&fh);
            t[r] = slowest(now() - t0);
        }
        row(sync ? "write_all+sync" : "write_all", total, t, reps);
    }
    for (int r = 0; r < reps; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = now();
        MPI_File fh;
        MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
        MPI_File_set_view(fh, 0, MPI_DOUBLE, view, "native", MPI_INFO_NULL);
        memset(b, 0, local * sizeof(double));
        MPI_File_read_all(fh, b, (int)local, MPI_DOUBLE, MPI_STATUS_IGNORE);
        MPI_File_close(&fh);
        t[r] = slowest(now() - t0);
        if (memcmp(a, b, local * sizeof(double)) != 0)
            bench_die("read_all: the data read back differs from what was written");
    }
    row("read_all", total, t, reps);

    /* one process, plain write() and read() of the same bytes */
    if (rank == 0) {
        char *whole = bench_alloc(total);
        memset(whole, 1, total);
        for (int sync = 0; sync < 2; sync++) {
            for (int r = 0; r < reps; r++) {
                unlink(path);
                double t0 = now();
                int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
                for (size_t off = 0; off < total;) {
                    ssize_t w = write(fd, whole + off, total - off);
                    if (w <= 0)
                        bench_die("write: %s", strerror(errno));
                    off += (size_t)w;
                }
                if (sync)
                    fsync(fd);
                close(fd);
                t[r] = now() - t0;
            }
            row(sync ? "posix_write+fsync (1 process)" : "posix_write (1 process)", total, t, reps);
        }
        for (int r = 0; r < reps; r++) {
            double t0 = now();
            int fd = open(path, O_RDONLY);
            for (size_t off = 0; off < total;) {
                ssize_t g = read(fd, whole + off, total - off);
                if (g <= 0)
                    bench_die("read: %s", strerror(errno));
                off += (size_t)g;
            }
            close(fd);
            t[r] = now() - t0;
        }
        row("posix_read (1 process)", total, t, reps);
        free(whole);
        unlink(path);
    }
    MPI_Type_free(&view);
    MPI_Comm_free(&cart);
    free(a);
    free(b);
    MPI_Finalize();
    return 0;
}
