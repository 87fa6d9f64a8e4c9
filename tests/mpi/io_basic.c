/* MPI-IO (MPI 4.1, chapter 14), at 1-4 ranks: open and close (amode checks, MPI_MODE_EXCL,
 * MPI_MODE_DELETE_ON_CLOSE, errno mapped to error classes, MPI_ERRORS_RETURN as the default file
 * handler), explicit offsets, the individual pointer (seek set/cur/end, positions, byte offsets),
 * views (a strided vector, a 2-D subarray written collectively and read back whole, a resized
 * filetype with LB/UB markers), short reads at the end of the file (status counts), sizes
 * (set_size, preallocate never shrinking), the shared pointer and ordered writes, nonblocking and
 * split collective forms, hints, handles as integers. Every byte written is read back. */
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mtest.h"

static char dir[256];

static void path(char *out, size_t n, const char *name)
{
    snprintf(out, n, "%s/%s", dir, name);
}

static int handled, handled_cls;
static MPI_File handled_fh;

static void on_error(MPI_File *fh, int *code, ...)
{
    handled++;
    handled_fh = *fh;
    MPI_Error_class(*code, &handled_cls);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank == 0) {
        snprintf(dir, sizeof dir, "/tmp/aptus-io-XXXXXX");
        CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    }
    MPI_Bcast(dir, sizeof dir, MPI_CHAR, 0, MPI_COMM_WORLD);
    char f1[300], f2[300], f3[300], missing[300];
    path(f1, sizeof f1, "one");
    path(f2, sizeof f2, "two");
    path(f3, sizeof f3, "three");
    path(missing, sizeof missing, "no/such/file");
    MPI_File fh;
    MPI_Status st;
    int rc, n;

    /* errors: the default file error handler returns; classes from errno and amode */
    rc = MPI_File_open(MPI_COMM_WORLD, missing, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    CHECK(mtest_class(rc) == MPI_ERR_NO_SUCH_FILE, "open of a missing file: class %d", mtest_class(rc));
    CHECK(fh == MPI_FILE_NULL, "fh not MPI_FILE_NULL after a failed open");
    rc = MPI_File_open(MPI_COMM_WORLD, f1, MPI_MODE_RDONLY | MPI_MODE_CREATE, MPI_INFO_NULL, &fh);
    CHECK(mtest_class(rc) == MPI_ERR_AMODE, "RDONLY|CREATE: class %d", mtest_class(rc));
    rc = MPI_File_open(MPI_COMM_WORLD, f1, MPI_MODE_RDWR | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
    CHECK(mtest_class(rc) == MPI_ERR_AMODE, "RDWR|WRONLY: class %d", mtest_class(rc));
    rc = MPI_File_delete(missing, MPI_INFO_NULL);
    CHECK(mtest_class(rc) == MPI_ERR_NO_SUCH_FILE, "delete of a missing file: class %d", mtest_class(rc));

    /* the reserved hint file_perm for a file MPI_File_open creates */
    char fperm[300];
    path(fperm, sizeof fperm, "perm");
    MPI_Info pinfo;
    MPI_Info_create(&pinfo);
    MPI_Info_set(pinfo, "file_perm", "0600");
    CHECK(MPI_File_open(MPI_COMM_WORLD, fperm, MPI_MODE_WRONLY | MPI_MODE_CREATE | MPI_MODE_DELETE_ON_CLOSE, pinfo,
                        &fh) == MPI_SUCCESS,
          "open with file_perm");
    MPI_Info_free(&pinfo);
    struct stat sb;
    CHECK(stat(fperm, &sb) == 0 && (sb.st_mode & 0777) == 0600, "file_perm 0600 gave mode %o",
          (unsigned)(sb.st_mode & 0777));
    MPI_File_close(&fh);

    /* explicit offsets: each rank writes its block of 100 ints, reads its neighbour's */
    CHECK(MPI_File_open(MPI_COMM_WORLD, f1, MPI_MODE_RDWR | MPI_MODE_CREATE | MPI_MODE_EXCL, MPI_INFO_NULL, &fh) ==
              MPI_SUCCESS,
          "open with CREATE|EXCL");
    int buf[100], in[100];
    for (int i = 0; i < 100; i++)
        buf[i] = rank * 1000 + i;
    CHECK(MPI_File_write_at(fh, (MPI_Offset)rank * 400, buf, 100, MPI_INT, &st) == MPI_SUCCESS, "write_at");
    MPI_Get_count(&st, MPI_INT, &n);
    CHECK(n == 100, "write_at count %d", n);
    MPI_File_sync(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_sync(fh);
    int peer = (rank + 1) % size;
    CHECK(MPI_File_read_at_all(fh, (MPI_Offset)peer * 400, in, 100, MPI_INT, &st) == MPI_SUCCESS, "read_at_all");
    for (int i = 0; i < 100; i++)
        CHECK(in[i] == peer * 1000 + i, "read_at: in[%d] = %d", i, in[i]);
    MPI_Offset fsize;
    MPI_File_get_size(fh, &fsize);
    CHECK(fsize == 400 * size, "size %lld", (long long)fsize);

    /* reading past the end: a short count */
    CHECK(MPI_File_read_at(fh, fsize - 8, in, 10, MPI_INT, &st) == MPI_SUCCESS, "read_at at the end");
    MPI_Get_count(&st, MPI_INT, &n);
    CHECK(n == 2, "read at the end: count %d, expected 2", n);

    /* the individual pointer, in bytes (the default view) */
    MPI_Offset pos;
    MPI_File_seek(fh, 40, MPI_SEEK_SET);
    MPI_File_read(fh, in, 10, MPI_INT, MPI_STATUS_IGNORE);
    MPI_File_get_position(fh, &pos);
    CHECK(pos == 80, "position after read %lld", (long long)pos);
    CHECK(in[0] == 10 && in[9] == 19, "read at the pointer: %d %d", in[0], in[9]);
    MPI_File_seek(fh, -40, MPI_SEEK_CUR);
    MPI_File_get_position(fh, &pos);
    CHECK(pos == 40, "seek cur %lld", (long long)pos);
    MPI_File_seek(fh, -4, MPI_SEEK_END);
    MPI_File_read(fh, in, 1, MPI_INT, MPI_STATUS_IGNORE);
    CHECK(in[0] == (size - 1) * 1000 + 99, "seek end then read: %d", in[0]);
    rc = MPI_File_seek(fh, -1, MPI_SEEK_SET);
    CHECK(mtest_class(rc) == MPI_ERR_ARG, "negative seek: class %d", mtest_class(rc));

    /* set_size shrinks, preallocate never does */
    MPI_File_set_size(fh, 800);
    MPI_File_get_size(fh, &fsize);
    CHECK(fsize == 800, "set_size: %lld", (long long)fsize);
    MPI_File_preallocate(fh, 100);
    MPI_File_get_size(fh, &fsize);
    CHECK(fsize == 800, "preallocate shrank the file to %lld", (long long)fsize);
    MPI_File_preallocate(fh, 4096);
    MPI_File_get_size(fh, &fsize);
    CHECK(fsize == 4096, "preallocate: %lld", (long long)fsize);
    /* a set_size to the size the file has leaves it alone (no truncate: on ext4 one would make
     * the next close write back everything written since); seen by its modification time */
    if (rank == 0) {
        struct timespec old[2] = { { 1000000000, 0 }, { 1000000000, 0 } };
        CHECK(utimensat(AT_FDCWD, f1, old, 0) == 0, "utimensat");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(MPI_File_set_size(fh, 4096) == MPI_SUCCESS, "set_size to the same size");
    if (rank == 0) {
        struct stat sb;
        CHECK(stat(f1, &sb) == 0 && sb.st_mtim.tv_sec == 1000000000, "set_size to the file's own size touched it");
    }

    /* hints: a new info each time */
    MPI_Info used;
    CHECK(MPI_File_get_info(fh, &used) == MPI_SUCCESS && used != MPI_INFO_NULL, "get_info");
    char v[MPI_MAX_INFO_VAL];
    int len = sizeof v, flag = 0;
    MPI_Info_get_string(used, "cb_nodes", &len, v, &flag);
    CHECK(flag && atoi(v) == size, "cb_nodes hint");
    MPI_Info_free(&used);
    /* handles as integers */
    CHECK(MPI_File_f2c(MPI_File_c2f(fh)) == fh, "MPI_File_f2c(MPI_File_c2f(fh))");
    int amode;
    MPI_File_get_amode(fh, &amode);
    CHECK(amode == (MPI_MODE_RDWR | MPI_MODE_CREATE | MPI_MODE_EXCL), "amode %#x", amode);
    CHECK(MPI_File_close(&fh) == MPI_SUCCESS && fh == MPI_FILE_NULL, "close");
    rc = MPI_File_get_size(fh, &fsize);
    CHECK(mtest_class(rc) == MPI_ERR_FILE, "get_size on MPI_FILE_NULL: class %d", mtest_class(rc));
    rc = MPI_File_open(MPI_COMM_WORLD, f1, MPI_MODE_RDWR | MPI_MODE_CREATE | MPI_MODE_EXCL, MPI_INFO_NULL, &fh);
    CHECK(mtest_class(rc) == MPI_ERR_FILE_EXISTS, "EXCL on an existing file: class %d", mtest_class(rc));

    /* read-only: writing is refused, through the file's own error handler, which a file opened
     * later takes from MPI_FILE_NULL */
    MPI_Errhandler eh, got_eh;
    MPI_File_create_errhandler(on_error, &eh);
    MPI_File_set_errhandler(MPI_FILE_NULL, eh);
    MPI_File_open(MPI_COMM_WORLD, f1, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
    MPI_File_get_errhandler(fh, &got_eh);
    CHECK(got_eh == eh, "a new file did not take MPI_FILE_NULL's error handler");
    MPI_Errhandler_free(&got_eh);
    rc = MPI_File_write_at(fh, 0, buf, 1, MPI_INT, MPI_STATUS_IGNORE);
    CHECK(mtest_class(rc) == MPI_ERR_READ_ONLY, "write to a read-only file: class %d", mtest_class(rc));
    CHECK(handled == 1 && handled_fh == fh && handled_cls == MPI_ERR_READ_ONLY, "the file's error handler: %d %d",
          handled, handled_cls);
    MPI_File_call_errhandler(fh, MPI_ERR_IO);
    CHECK(handled == 2 && handled_cls == MPI_ERR_IO, "MPI_File_call_errhandler");
    MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN);
    MPI_Errhandler_free(&eh);
    rc = MPI_File_read_at(fh, 0, buf, -1, MPI_INT, MPI_STATUS_IGNORE);
    CHECK(mtest_class(rc) == MPI_ERR_COUNT && handled == 2, "negative count: class %d", mtest_class(rc));
    MPI_File_close(&fh);
    MPI_File_open(MPI_COMM_WORLD, f1, MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
    rc = MPI_File_read_at(fh, 0, buf, 1, MPI_INT, MPI_STATUS_IGNORE);
    CHECK(mtest_class(rc) == MPI_ERR_ACCESS, "read from a write-only file: class %d", mtest_class(rc));
    MPI_File_close(&fh);

    /* a strided view: rank r owns ints r, r + size, r + 2 size, ... (blocks of 2 ints) */
    MPI_Datatype vec, ftype;
    MPI_Type_vector(1, 2, 2 * size, MPI_INT, &vec);
    MPI_Type_create_resized(vec, 0, (MPI_Aint)(2 * size * sizeof(int)), &ftype);
    MPI_Type_commit(&ftype);
    MPI_Type_free(&vec);
    MPI_File_open(MPI_COMM_WORLD, f2, MPI_MODE_RDWR | MPI_MODE_CREATE | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh);
    CHECK(MPI_File_set_view(fh, (MPI_Offset)(rank * 2 * sizeof(int)), MPI_INT, ftype, "native", MPI_INFO_NULL) ==
              MPI_SUCCESS,
          "set_view");
    MPI_Type_free(&ftype); /* the file keeps its own */
    for (int i = 0; i < 100; i++)
        buf[i] = rank * 1000 + i;
    CHECK(MPI_File_write_all(fh, buf, 100, MPI_INT, &st) == MPI_SUCCESS, "write_all through the view");
    MPI_File_get_position(fh, &pos);
    CHECK(pos == 100, "position in etypes after write_all: %lld", (long long)pos);
    MPI_File_get_byte_offset(fh, 3, &pos);
    CHECK(pos == (MPI_Offset)((rank * 2 + 2 * size + 1) * sizeof(int)), "byte offset of etype 3: %lld", (long long)pos);
    MPI_File_sync(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_sync(fh);
    /* independent writes into each other's holes, at once: the strided ranks' writes are sieved
     * (read, fill in, write back a window of 4 KiB under a lock of it); the last rank writes its
     * blocks one by one through the byte view. No rank's bytes may be lost. */
    if (size > 1) {
        char f4[300];
        path(f4, sizeof f4, "interleaved");
        MPI_File fi;
        MPI_Info si;
        MPI_Info_create(&si);
        MPI_Info_set(si, "ind_wr_buffer_size", "4096");
        MPI_Info_set(si, "romio_ds_write", "enable");
        MPI_File_open(MPI_COMM_WORLD, f4, MPI_MODE_RDWR | MPI_MODE_CREATE | MPI_MODE_DELETE_ON_CLOSE, si, &fi);
        MPI_Info_free(&si);
        MPI_Type_vector(1, 2, 2 * size, MPI_INT, &vec);
        MPI_Type_create_resized(vec, 0, (MPI_Aint)(2 * size * sizeof(int)), &ftype);
        MPI_Type_commit(&ftype);
        MPI_Type_free(&vec);
        int last = rank == size - 1, nints = 2000;
        if (last) /* (set_view is collective) */
            MPI_File_set_view(fi, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
        else
            MPI_File_set_view(fi, (MPI_Offset)(rank * 2 * sizeof(int)), MPI_INT, ftype, "native", MPI_INFO_NULL);
        MPI_Type_free(&ftype);
        int *w = malloc(sizeof(int) * (size_t)nints), *whole = malloc(sizeof(int) * (size_t)nints * (size_t)size);
        for (int round = 0; round < 6; round++) {
            for (int i = 0; i < nints; i++)
                w[i] = round * 100000 + rank * 10000 + i;
            MPI_Barrier(MPI_COMM_WORLD);
            if (!last) {
                for (int part = 0; part < 4; part++) /* 4 calls, each many windows */
                    CHECK(MPI_File_write_at(fi, part * nints / 4, w + part * nints / 4, nints / 4, MPI_INT,
                                            MPI_STATUS_IGNORE) == MPI_SUCCESS,
                          "sieved write_at");
            } else {
                for (int b = 0; b < nints / 2; b++)
                    CHECK(MPI_File_write_at(fi, (MPI_Offset)((b * 2 * size + rank * 2) * sizeof(int)), w + 2 * b, 2,
                                            MPI_INT, MPI_STATUS_IGNORE) == MPI_SUCCESS,
                          "plain write_at");
            }
            MPI_File_sync(fi);
            MPI_Barrier(MPI_COMM_WORLD);
            MPI_File_sync(fi);
            if (rank == 0) {
                int fd = open(f4, O_RDONLY);
                CHECK(fd >= 0 && pread(fd, whole, sizeof(int) * (size_t)nints * (size_t)size, 0) ==
                                     (ssize_t)(sizeof(int) * (size_t)nints * (size_t)size),
                      "read the interleaved file");
                close(fd);
                for (int i = 0; i < nints * size; i++) {
                    int owner = (i / 2) % size, k = (i / (2 * size)) * 2 + i % 2;
                    CHECK(whole[i] == round * 100000 + owner * 10000 + k,
                          "round %d: int %d is %d, expected %d (a write lost)", round, i, whole[i],
                          round * 100000 + owner * 10000 + k);
                }
            }
            MPI_Barrier(MPI_COMM_WORLD);
        }
        free(w);
        free(whole);
        MPI_File_close(&fi);
    }
    /* the whole file through the default view */
    MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
    MPI_File_get_position(fh, &pos);
    CHECK(pos == 0, "set_view resets the individual pointer");
    int *all = malloc(sizeof(int) * 100 * (size_t)size);
    MPI_File_read_at(fh, 0, all, 100 * size, MPI_INT, &st);
    MPI_Get_count(&st, MPI_INT, &n);
    CHECK(n == 100 * size, "whole file: count %d", n);
    for (int i = 0; i < 100 * size; i++) {
        int owner = (i / 2) % size, k = (i / (2 * size)) * 2 + i % 2;
        CHECK(all[i] == owner * 1000 + k, "strided view: int %d is %d, expected %d", i, all[i], owner * 1000 + k);
    }
    MPI_Datatype et, ft;
    char rep[MPI_MAX_DATAREP_STRING];
    MPI_Offset disp;
    MPI_File_get_view(fh, &disp, &et, &ft, rep);
    CHECK(disp == 0 && et == MPI_BYTE && ft == MPI_BYTE && strcmp(rep, "native") == 0, "get_view");
    rc = MPI_File_set_view(fh, 0, MPI_DOUBLE, MPI_INT, "native", MPI_INFO_NULL);
    CHECK(mtest_class(rc) == MPI_ERR_ARG, "an etype that does not divide the filetype: class %d", mtest_class(rc));
    int dz[2] = { 3, 0 }, bz[2] = { 1, 1 };
    MPI_Datatype down;
    MPI_Type_indexed(2, bz, dz, MPI_INT, &down);
    MPI_Type_commit(&down);
    rc = MPI_File_set_view(fh, 0, MPI_INT, down, "native", MPI_INFO_NULL);
    CHECK(mtest_class(rc) == MPI_ERR_ARG, "a filetype with decreasing displacements: class %d", mtest_class(rc));
    MPI_Type_free(&down);
    rc = MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "no-such-rep", MPI_INFO_NULL);
    CHECK(mtest_class(rc) == MPI_ERR_UNSUPPORTED_DATAREP, "unknown datarep: class %d", mtest_class(rc));
    MPI_File_close(&fh);
    if (rank == 0)
        CHECK(access(f2, F_OK) != 0, "MPI_MODE_DELETE_ON_CLOSE left the file");

    /* a 2-D subarray view: a (2 size) x 6 array of doubles, rank r owns rows 2r and 2r + 1 */
    int sizes[2] = { 2 * size, 6 }, subs[2] = { 2, 6 }, starts[2] = { 2 * rank, 0 };
    MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_DOUBLE, &ftype);
    MPI_Type_commit(&ftype);
    MPI_File_open(MPI_COMM_WORLD, f3, MPI_MODE_RDWR | MPI_MODE_CREATE, MPI_INFO_NULL, &fh);
    MPI_File_set_view(fh, 0, MPI_DOUBLE, ftype, "native", MPI_INFO_NULL);
    double d[12], back[12];
    for (int i = 0; i < 12; i++)
        d[i] = rank * 100 + i + 0.5;
    MPI_File_write_at_all(fh, 0, d, 12, MPI_DOUBLE, MPI_STATUS_IGNORE);
    MPI_File_sync(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_sync(fh);
    memset(back, 0, sizeof back);
    MPI_File_read_at_all(fh, 0, back, 12, MPI_DOUBLE, MPI_STATUS_IGNORE);
    CHECK(memcmp(back, d, sizeof d) == 0, "subarray view read back");
    MPI_File_get_size(fh, &fsize);
    CHECK(fsize == (MPI_Offset)(12 * size * sizeof(double)), "subarray file size %lld", (long long)fsize);
    /* the end of the file in the view: a seek to the end is this rank's 12 etypes */
    MPI_File_seek(fh, 0, MPI_SEEK_END);
    MPI_File_get_position(fh, &pos);
    CHECK(pos == 12, "seek end in a subarray view: %lld", (long long)pos);
    MPI_Type_free(&ftype);

    /* a resized filetype with LB/UB: one double then a hole of one, disp 8 */
    MPI_Type_create_resized(MPI_DOUBLE, 0, 16, &ftype);
    MPI_Type_commit(&ftype);
    MPI_File_set_view(fh, 8, MPI_DOUBLE, ftype, "native", MPI_INFO_NULL);
    if (rank == 0) {
        double two[2];
        MPI_File_read_at(fh, 0, two, 2, MPI_DOUBLE, &st);
        CHECK(two[0] == 1.5 && two[1] == 3.5, "resized filetype read: %g %g", two[0], two[1]);
    }
    MPI_Type_free(&ftype);
    MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);

    /* nonblocking and split collective forms */
    MPI_Request req;
    int one = rank + 7, got = -1;
    MPI_File_iwrite_at(fh, 4096 + rank * 4, &one, 1, MPI_INT, &req);
    MPI_Wait(&req, &st);
    MPI_Get_count(&st, MPI_INT, &n);
    CHECK(n == 1, "iwrite_at count %d", n);
    MPI_File_sync(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_sync(fh);
    MPI_File_read_at_all_begin(fh, 4096 + peer * 4, &got, 1, MPI_INT);
    MPI_File_read_at_all_end(fh, &got, &st);
    CHECK(got == peer + 7, "split collective read: %d", got);
    rc = MPI_File_read_all_end(fh, &got, &st);
    CHECK(mtest_class(rc) == MPI_ERR_OTHER, "an end without a begin: class %d", mtest_class(rc));
    rc = MPI_File_write_all_begin(MPI_FILE_NULL, &got, 1, MPI_INT);
    CHECK(mtest_class(rc) == MPI_ERR_FILE, "a split collective on MPI_FILE_NULL: class %d", mtest_class(rc));
    rc = MPI_File_read_ordered_begin(MPI_FILE_NULL, &got, 1, MPI_INT);
    CHECK(mtest_class(rc) == MPI_ERR_FILE, "an ordered split collective on MPI_FILE_NULL: class %d", mtest_class(rc));

    /* the shared pointer: every rank appends one record; ordered writes in rank order */
    MPI_File_seek_shared(fh, 0, MPI_SEEK_SET);
    MPI_File_write_shared(fh, &one, 1, MPI_INT, MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_get_position_shared(fh, &pos);
    CHECK(pos == 4 * size, "shared pointer after %d records: %lld", size, (long long)pos);
    MPI_File_sync(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_sync(fh);
    int *recs = calloc((size_t)size, sizeof(int));
    MPI_File_read_at(fh, 0, recs, size, MPI_INT, MPI_STATUS_IGNORE);
    long sum = 0;
    for (int i = 0; i < size; i++)
        sum += recs[i];
    CHECK(sum == (long)size * (size - 1) / 2 + 7L * size, "shared-pointer records sum %ld", sum);
    int mine[3] = { rank, rank, rank };
    MPI_File_write_ordered(fh, mine, rank % 3 + 1, MPI_INT, MPI_STATUS_IGNORE);
    MPI_File_sync(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_sync(fh);
    int *ord = calloc(64, sizeof(int));
    MPI_File_read_at(fh, 4 * size, ord, 64, MPI_INT, MPI_STATUS_IGNORE);
    for (int r = 0, k = 0; r < size; r++)
        for (int j = 0; j < r % 3 + 1; j++, k++)
            CHECK(ord[k] == r, "ordered write: slot %d holds %d, expected rank %d", k, ord[k], r);
    free(ord);
    free(recs);
    free(all);

    /* past 4 GiB: 64-bit offsets end to end (a sparse file) */
    const MPI_Offset far = ((MPI_Offset)5 << 30) + 12;
    long long big = 0x1122334455667788LL + rank, bigback = 0;
    CHECK(MPI_File_write_at(fh, far + rank * 8, &big, 1, MPI_LONG_LONG, MPI_STATUS_IGNORE) == MPI_SUCCESS,
          "write past 4 GiB");
    MPI_File_sync(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_sync(fh);
    MPI_File_read_at(fh, far + peer * 8, &bigback, 1, MPI_LONG_LONG, MPI_STATUS_IGNORE);
    CHECK(bigback == 0x1122334455667788LL + peer, "read past 4 GiB: %llx", (unsigned long long)bigback);
    MPI_File_get_size(fh, &fsize);
    CHECK(fsize == far + 8 * size, "size past 4 GiB: %lld", (long long)fsize);
    MPI_File_set_size(fh, 12288);

    /* a darray view (cyclic blocks of 2 ints over the ranks), a rank with nothing to write */
    MPI_Datatype da;
    int gs[1] = { 8 * size }, dist[1] = { MPI_DISTRIBUTE_CYCLIC }, darg[1] = { 2 }, ps[1] = { size };
    MPI_Type_create_darray(size, rank, 1, gs, dist, darg, ps, MPI_ORDER_C, MPI_INT, &da);
    MPI_Type_commit(&da);
    MPI_File_set_view(fh, 16384, MPI_INT, da, "native", MPI_INFO_NULL);
    int eight[8];
    for (int i = 0; i < 8; i++)
        eight[i] = 100 * rank + i;
    CHECK(MPI_File_write_all(fh, eight, 8, MPI_INT, MPI_STATUS_IGNORE) == MPI_SUCCESS, "write_all, darray view");
    CHECK(MPI_File_write_at_all(fh, 8, eight, rank % 2 ? 0 : 2, MPI_INT, &st) == MPI_SUCCESS,
          "write_at_all with some ranks writing nothing");
    MPI_Get_count(&st, MPI_INT, &n);
    CHECK(n == (rank % 2 ? 0 : 2), "count of a zero-size participant: %d", n);
    MPI_Type_free(&da);
    MPI_File_sync(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_sync(fh);
    MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
    int *dall = malloc(sizeof(int) * 8 * (size_t)size);
    MPI_File_read_at(fh, 16384, dall, 8 * size, MPI_INT, MPI_STATUS_IGNORE);
    for (int i = 0; i < 8 * size; i++) {
        int owner = (i / 2) % size, k = (i / (2 * size)) * 2 + i % 2;
        CHECK(dall[i] == 100 * owner + k, "darray view: int %d is %d", i, dall[i]);
    }
    free(dall);

    /* atomic mode (whole-access locks) still reads and writes */
    MPI_File_set_atomicity(fh, 1);
    int atom = 0;
    MPI_File_get_atomicity(fh, &atom);
    CHECK(atom == 1, "atomicity");
    MPI_File_write_at(fh, 8192 + rank * 4, &one, 1, MPI_INT, MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_read_at(fh, 8192 + peer * 4, &got, 1, MPI_INT, MPI_STATUS_IGNORE);
    CHECK(got == peer + 7, "atomic mode: read %d", got);
    MPI_File_close(&fh);

    /* sieved reads of long runs, straight into memory (io/view.c, gap_read): runs of R bytes
     * every R + G, in more runs than one system call takes, holes longer than its scratch, into
     * contiguous memory and into blocks of 100 bytes every 150; the end of the file inside a run
     * and inside a hole (the count is what lies before it) */
    char f4[300];
    path(f4, sizeof f4, "gaps");
    MPI_File_open(MPI_COMM_WORLD, f4, MPI_MODE_RDWR | MPI_MODE_CREATE, MPI_INFO_NULL, &fh);
    const int S = 3000000;
    if (rank == 0) {
        unsigned char *all = malloc((size_t)S);
        for (int i = 0; i < S; i++)
            all[i] = (unsigned char)(i * 7 + i / 251);
        MPI_File_write_at(fh, 0, all, S, MPI_BYTE, MPI_STATUS_IGNORE);
        free(all);
    }
    MPI_File_sync(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_sync(fh);
    const struct {
        int R, G, runs;
    } gcase[] = {
        { 600, 100, 4000 }, { 2000, 100000, 25 }, { 600, 100, 4300 }, { 2000, 100000, 31 }, { 2000, 100000, 29 }
    };
    for (int k = 0; k < (int)(sizeof gcase / sizeof gcase[0]); k++) {
        int R = gcase[k].R, G = gcase[k].G, runs = gcase[k].runs;
        MPI_Datatype run, ft, chunk, mt;
        MPI_Type_contiguous(R, MPI_BYTE, &run);
        MPI_Type_create_resized(run, 0, R + G, &ft);
        MPI_Type_commit(&ft);
        MPI_File_set_view(fh, 0, MPI_BYTE, ft, "native", MPI_INFO_NULL);
        /* the bytes the view holds before the end of the file */
        long want = 0;
        for (int q = 0; q < runs; q++) {
            long at = (long)q * (R + G);
            want += at >= S ? 0 : at + R <= S ? R : S - at;
        }
        for (int noncontig = 0; noncontig < 2; noncontig++) {
            int n = R * runs;
            unsigned char *mem = malloc((size_t)n / 100 * 150 + 150);
            memset(mem, 0xEE, (size_t)n / 100 * 150 + 150);
            MPI_Type_contiguous(100, MPI_BYTE, &chunk);
            MPI_Type_create_resized(chunk, 0, 150, &mt);
            MPI_Type_commit(&mt);
            MPI_Status st;
            int cnt = 0;
            if (noncontig)
                CHECK(MPI_File_read_at(fh, 0, mem, n / 100, mt, &st) == MPI_SUCCESS, "gap read %d", k);
            else
                CHECK(MPI_File_read_at(fh, 0, mem, n, MPI_BYTE, &st) == MPI_SUCCESS, "gap read %d", k);
            MPI_Get_count(&st, MPI_BYTE, &cnt);
            CHECK(cnt == want, "gap read %d (memory %s): %d bytes, expected %ld", k,
                  noncontig ? "in blocks" : "contiguous", cnt, want);
            for (long b = 0; b < n; b++) {
                long q = b / R, fo = q * (R + G) + b % R;
                long mo = noncontig ? b / 100 * 150 + b % 100 : b;
                unsigned char expect = b < want ? (unsigned char)(fo * 7 + fo / 251) : 0xEE;
                CHECK(mem[mo] == expect, "gap read %d (memory %s): data byte %ld is %d, expected %d", k,
                      noncontig ? "in blocks" : "contiguous", b, mem[mo], expect);
                if (noncontig && b % 100 == 99)
                    for (long z = mo + 1; z < mo + 51; z++)
                        CHECK(mem[z] == 0xEE, "gap read %d: the memory type's hole was written", k);
            }
            MPI_Type_free(&mt);
            MPI_Type_free(&chunk);
            free(mem);
        }
        MPI_Type_free(&ft);
        MPI_Type_free(&run);
    }
    /* a filetype whose runs overlap (allowed for reading): 1000 bytes at 0, 1000 at 600, every
     * 2000 bytes; each run is read from its own place */
    {
        int bl[2] = { 1000, 1000 };
        MPI_Aint dp[2] = { 0, 600 };
        MPI_Datatype two, ft;
        MPI_Type_create_hindexed(2, bl, dp, MPI_BYTE, &two);
        MPI_Type_create_resized(two, 0, 2000, &ft);
        MPI_Type_commit(&ft);
        MPI_File_set_view(fh, 0, MPI_BYTE, ft, "native", MPI_INFO_NULL);
        enum { TILES = 1000 };
        unsigned char *mem = malloc(2000 * (size_t)TILES);
        MPI_Status st;
        int cnt = 0;
        CHECK(MPI_File_read_at(fh, 0, mem, 2000 * TILES, MPI_BYTE, &st) == MPI_SUCCESS, "overlapping runs read");
        MPI_Get_count(&st, MPI_BYTE, &cnt);
        CHECK(cnt == 2000 * TILES, "overlapping runs: %d bytes", cnt);
        for (long b = 0; b < 2000L * TILES; b++) {
            long t = b / 2000, w = b % 2000, fo = t * 2000 + (w < 1000 ? w : 600 + w - 1000);
            CHECK(mem[b] == (unsigned char)(fo * 7 + fo / 251), "overlapping runs: byte %ld is %d, expected %d", b,
                  mem[b], (unsigned char)(fo * 7 + fo / 251));
        }
        free(mem);
        MPI_Type_free(&ft);
        MPI_Type_free(&two);
    }
    MPI_File_close(&fh);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        MPI_File_delete(f4, MPI_INFO_NULL);

    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        CHECK(MPI_File_delete(f1, MPI_INFO_NULL) == MPI_SUCCESS, "delete");
        MPI_File_delete(f3, MPI_INFO_NULL);
        rmdir(dir);
    }
    MPI_Finalize();
    return 0;
}
