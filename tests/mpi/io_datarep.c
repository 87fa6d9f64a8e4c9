/* Data representations in MPI-IO (MPI 4.1, 14.5), at 1-3 ranks: "external32" written big-endian
 * with the standard's sizes (an MPI_LONG is 4 bytes in the file, a long double 16) and read back
 * converted, the file's bytes checked by hand; a portable filetype (vector) scaled to the file's
 * sizes and a byte-displacement one (hvector) taken as it is; MPI_File_get_type_extent following
 * the representation; an indexed MPI_CHAR view written and read collectively (MPICH's
 * external32_derived_dtype case); a representation registered with conversion functions (ints
 * kept as 8-byte big-endian values), in the int and the _c form, its failures (a conversion
 * function's error: MPI_ERR_CONVERSION; an extent function's error at set_view), a duplicate name
 * (MPI_ERR_DUP_DATAREP) and one registered without functions (the native bytes). */
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "mtest.h"

static char dir[256];
static int rank, size;

static void path(char *out, size_t n, const char *name)
{
    snprintf(out, n, "%s/%s.%d", dir, name, rank);
}

/* The first n bytes of a file, read with POSIX calls. */
static void raw(const char *name, unsigned char *out, size_t n)
{
    int fd = open(name, O_RDONLY);
    CHECK(fd >= 0, "open %s", name);
    ssize_t got = read(fd, out, n);
    CHECK(got == (ssize_t)n, "read %zu bytes of %s: %zd", n, name, got);
    close(fd);
}

static void expect_bytes(const char *what, const unsigned char *got, const unsigned char *want, size_t n)
{
    for (size_t i = 0; i < n; i++)
        CHECK(got[i] == want[i], "%s: byte %zu is %02x, expected %02x", what, i, got[i], want[i]);
}

/* ---- a registered representation: every MPI_INT as an 8-byte big-endian value ---- */

static int fail_next; /* the next conversion fails */
static int calls;

static int wide_extent(MPI_Datatype t, MPI_Aint *extent, void *extra)
{
    CHECK(extra == &calls, "extent function: extra_state %p", extra);
    if (t != MPI_INT)
        return MPI_ERR_TYPE;
    *extent = 8;
    return MPI_SUCCESS;
}

/* userbuf holds MPI_INTs (the datatype is MPI_INT, tiled); items start at index position */
static int wide_convert(int write, void *userbuf, MPI_Datatype t, MPI_Count count, void *filebuf, MPI_Offset position)
{
    calls++;
    if (fail_next) {
        fail_next = 0;
        return MPI_ERR_OTHER;
    }
    CHECK(t == MPI_INT, "conversion called with another datatype");
    int *u = (int *)userbuf + position;
    unsigned char *f = filebuf;
    for (MPI_Count i = 0; i < count; i++, f += 8) {
        if (write) {
            uint64_t v = (uint64_t)(int64_t)u[i];
            for (int b = 0; b < 8; b++)
                f[b] = (unsigned char)(v >> (56 - 8 * b));
        } else {
            uint64_t v = 0;
            for (int b = 0; b < 8; b++)
                v = v << 8 | f[b];
            u[i] = (int)(int64_t)v;
        }
    }
    return MPI_SUCCESS;
}

static int wide_read(void *u, MPI_Datatype t, int count, void *f, MPI_Offset pos, void *extra)
{
    CHECK(extra == &calls, "read conversion: extra_state");
    return wide_convert(0, u, t, count, f, pos);
}
static int wide_write(void *u, MPI_Datatype t, int count, void *f, MPI_Offset pos, void *extra)
{
    CHECK(extra == &calls, "write conversion: extra_state");
    return wide_convert(1, u, t, count, f, pos);
}
static int wide_read_c(void *u, MPI_Datatype t, MPI_Count count, void *f, MPI_Offset pos, void *extra)
{
    (void)extra;
    return wide_convert(0, u, t, count, f, pos);
}
static int wide_write_c(void *u, MPI_Datatype t, MPI_Count count, void *f, MPI_Offset pos, void *extra)
{
    (void)extra;
    return wide_convert(1, u, t, count, f, pos);
}

static void registered(const char *rep)
{
    char name[300];
    path(name, sizeof name, rep);
    MPI_File fh;
    MPI_Status st;
    int n, rc;
    MPI_CHECK(MPI_File_open(MPI_COMM_SELF, name, MPI_MODE_RDWR | MPI_MODE_CREATE, MPI_INFO_NULL, &fh));
    MPI_CHECK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, rep, MPI_INFO_NULL));
    MPI_Aint ext;
    MPI_Datatype three;
    MPI_Type_contiguous(3, MPI_INT, &three);
    MPI_CHECK(MPI_File_get_type_extent(fh, MPI_INT, &ext));
    CHECK(ext == 8, "%s: file extent of MPI_INT %ld", rep, (long)ext);
    MPI_CHECK(MPI_File_get_type_extent(fh, three, &ext));
    CHECK(ext == 24, "%s: file extent of 3 MPI_INTs %ld", rep, (long)ext);
    MPI_Type_free(&three);
    rc = MPI_File_get_type_extent(fh, MPI_DOUBLE, &ext);
    CHECK(mtest_class(rc) == MPI_ERR_CONVERSION, "%s: extent function failing: class %d", rep, mtest_class(rc));

    int v[5] = { -1, 2, -300000, 0x12345678, rank }, back[5] = { 0 };
    MPI_CHECK(MPI_File_write(fh, v, 5, MPI_INT, &st));
    MPI_Get_count(&st, MPI_INT, &n);
    CHECK(n == 5, "%s: write count %d", rep, n);
    MPI_Offset pos, fsize;
    MPI_File_get_position(fh, &pos);
    CHECK(pos == 5, "%s: position %lld etypes", rep, (long long)pos);
    MPI_File_sync(fh);
    MPI_File_get_size(fh, &fsize);
    CHECK(fsize == 40, "%s: file size %lld, expected 40", rep, (long long)fsize);
    unsigned char b[40];
    raw(name, b, 40);
    static const unsigned char want[24] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0,    0,    0,    0,
                                            0,    0,    0,    2,    0xff, 0xff, 0xff, 0xff, 0xff, 0xfb, 0x6c, 0x20 };
    expect_bytes(rep, b, want, sizeof want);
    MPI_CHECK(MPI_File_read_at(fh, 0, back, 5, MPI_INT, &st));
    MPI_Get_count(&st, MPI_INT, &n);
    CHECK(n == 5, "%s: read count %d", rep, n);
    for (int i = 0; i < 5; i++)
        CHECK(back[i] == v[i], "%s: read back [%d] = %d, expected %d", rep, i, back[i], v[i]);
    /* a short read at the end: 2 of 4 elements */
    MPI_CHECK(MPI_File_read_at(fh, 3, back, 4, MPI_INT, &st));
    MPI_Get_count(&st, MPI_INT, &n);
    CHECK(n == 2 && back[0] == v[3] && back[1] == v[4], "%s: read at the end: count %d", rep, n);

    fail_next = 1;
    rc = MPI_File_write_at(fh, 0, v, 1, MPI_INT, MPI_STATUS_IGNORE);
    CHECK(mtest_class(rc) == MPI_ERR_CONVERSION, "%s: failing write conversion: class %d", rep, mtest_class(rc));
    fail_next = 1;
    rc = MPI_File_read_at(fh, 0, back, 1, MPI_INT, MPI_STATUS_IGNORE);
    CHECK(mtest_class(rc) == MPI_ERR_CONVERSION, "%s: failing read conversion: class %d", rep, mtest_class(rc));
    rc = MPI_File_write_at(fh, 0, back, 1, MPI_DOUBLE, MPI_STATUS_IGNORE);
    CHECK(mtest_class(rc) == MPI_ERR_CONVERSION, "%s: data with no extent: class %d", rep, mtest_class(rc));
    rc = MPI_File_set_view(fh, 0, MPI_DOUBLE, MPI_DOUBLE, rep, MPI_INFO_NULL);
    CHECK(mtest_class(rc) == MPI_ERR_CONVERSION, "%s: view of a type with no extent: class %d", rep, mtest_class(rc));
    char got[MPI_MAX_DATAREP_STRING];
    MPI_Datatype et, ft;
    MPI_Offset disp;
    MPI_File_get_view(fh, &disp, &et, &ft, got);
    CHECK(strcmp(got, rep) == 0 && et == MPI_INT, "%s: the refused view changed the view to %s", rep, got);
    MPI_CHECK(MPI_File_close(&fh));
    MPI_CHECK(MPI_File_delete(name, MPI_INFO_NULL));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank == 0) {
        snprintf(dir, sizeof dir, "/tmp/aptus-iorep-XXXXXX");
        CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    }
    MPI_Bcast(dir, sizeof dir, MPI_CHAR, 0, MPI_COMM_WORLD);
    char name[300];
    MPI_File fh;
    MPI_Status st;
    MPI_Aint ext;
    int n;

    /* ---- external32: ints, each rank its 4 at etype offset 4 rank, in one shared file ---- */
    char shared[300];
    snprintf(shared, sizeof shared, "%s/ints", dir);
    MPI_CHECK(MPI_File_open(MPI_COMM_WORLD, shared, MPI_MODE_RDWR | MPI_MODE_CREATE, MPI_INFO_NULL, &fh));
    MPI_CHECK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "external32", MPI_INFO_NULL));
    int iv[4], ib[4];
    for (int i = 0; i < 4; i++)
        iv[i] = 0x01020300 + rank * 16 + i;
    MPI_CHECK(MPI_File_write_at_all(fh, 4 * rank, iv, 4, MPI_INT, &st));
    MPI_Get_count(&st, MPI_INT, &n);
    CHECK(n == 4, "external32 write_at_all count %d", n);
    MPI_File_sync(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_sync(fh);
    if (rank == 0) {
        unsigned char b[16 * 3];
        raw(shared, b, (size_t)16 * size);
        for (int r = 0; r < size; r++)
            for (int i = 0; i < 4; i++) {
                unsigned char w[4] = { 1, 2, 3, (unsigned char)(r * 16 + i) };
                expect_bytes("external32 ints", b + 16 * r + 4 * i, w, 4);
            }
    }
    int peer = (rank + 1) % size;
    MPI_CHECK(MPI_File_read_at_all(fh, 4 * peer, ib, 4, MPI_INT, &st));
    for (int i = 0; i < 4; i++)
        CHECK(ib[i] == 0x01020300 + peer * 16 + i, "external32 ints read back: [%d] = %x", i, ib[i]);
    char got[MPI_MAX_DATAREP_STRING];
    MPI_Datatype et, ft;
    MPI_Offset disp;
    MPI_File_get_view(fh, &disp, &et, &ft, got);
    CHECK(strcmp(got, "external32") == 0, "get_view datarep %s", got);
    MPI_CHECK(MPI_File_close(&fh));

    /* ---- external32 layouts: MPI_LONG is 4 bytes in the file ---- */
    path(name, sizeof name, "longs");
    MPI_CHECK(MPI_File_open(MPI_COMM_SELF, name, MPI_MODE_RDWR | MPI_MODE_CREATE, MPI_INFO_NULL, &fh));
    MPI_Datatype vec, hvec;
    MPI_Type_vector(2, 1, 2, MPI_LONG, &vec);           /* portable: scaled to 4-byte longs */
    MPI_Type_create_hvector(2, 1, 16, MPI_LONG, &hvec); /* bytes: as they are */
    MPI_Type_commit(&vec);
    MPI_Type_commit(&hvec);
    MPI_CHECK(MPI_File_get_type_extent(fh, MPI_LONG, &ext));
    CHECK(ext == (MPI_Aint)sizeof(long), "native file extent of MPI_LONG %ld", (long)ext);
    MPI_CHECK(MPI_File_set_view(fh, 0, MPI_LONG, vec, "external32", MPI_INFO_NULL));
    MPI_CHECK(MPI_File_get_type_extent(fh, MPI_LONG, &ext));
    CHECK(ext == 4, "external32 file extent of MPI_LONG %ld", (long)ext);
    MPI_CHECK(MPI_File_get_type_extent(fh, vec, &ext));
    CHECK(ext == 12, "external32 file extent of vector(2,1,2,MPI_LONG) %ld", (long)ext);
    MPI_CHECK(MPI_File_get_type_extent(fh, hvec, &ext));
    CHECK(ext == 20, "external32 file extent of hvector(2,1,16 bytes,MPI_LONG) %ld", (long)ext);
    MPI_CHECK(MPI_File_get_type_extent(fh, MPI_LONG_DOUBLE, &ext));
    CHECK(ext == 16, "external32 file extent of MPI_LONG_DOUBLE %ld", (long)ext);
    long lv[4] = { 1, -2, 3, 0x7fffffff }, lb[4] = { 0 };
    MPI_CHECK(MPI_File_write(fh, lv, 4, MPI_LONG, &st));
    MPI_Get_count(&st, MPI_LONG, &n);
    CHECK(n == 4, "external32 longs: write count %d", n);
    MPI_Offset fsize;
    MPI_File_sync(fh);
    MPI_File_get_size(fh, &fsize);
    CHECK(fsize == 24, "external32 longs through vector: file size %lld, expected 24", (long long)fsize);
    unsigned char b[40];
    raw(name, b, 24);
    static const unsigned char wl[24] = { 0, 0, 0, 1, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xfe,
                                          0, 0, 0, 3, 0, 0, 0, 0, 0x7f, 0xff, 0xff, 0xff };
    expect_bytes("external32 longs through a vector view", b, wl, 24);
    MPI_CHECK(MPI_File_read_at(fh, 0, lb, 4, MPI_LONG, &st));
    MPI_Get_count(&st, MPI_LONG, &n);
    CHECK(n == 4, "external32 longs: read count %d", n);
    for (int i = 0; i < 4; i++)
        CHECK(lb[i] == lv[i], "external32 longs read back: [%d] = %ld", i, lb[i]);
    MPI_CHECK(MPI_File_set_view(fh, 0, MPI_LONG, hvec, "external32", MPI_INFO_NULL));
    long two[2] = { 5, 6 };
    MPI_CHECK(MPI_File_write_at(fh, 0, two, 2, MPI_LONG, MPI_STATUS_IGNORE));
    MPI_File_sync(fh);
    raw(name, b, 24);
    static const unsigned char wh[24] = { 0, 0, 0, 5, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xfe,
                                          0, 0, 0, 3, 0, 0, 0, 6, 0x7f, 0xff, 0xff, 0xff };
    expect_bytes("external32 longs through an hvector view", b, wh, 24);
    MPI_Type_free(&vec);
    MPI_Type_free(&hvec);

    /* ---- external32 of a padded struct: double, short, long double = 26 bytes in the file ---- */
    struct rec {
        double d;
        short s;
        long double ld;
    } rv[2] = { { 1.5, -3, 1.5L }, { -2.0, 7, -0.25L } }, rb[2];
    int bl[3] = { 1, 1, 1 };
    MPI_Aint dp[3] = { offsetof(struct rec, d), offsetof(struct rec, s), offsetof(struct rec, ld) };
    MPI_Datatype ty[3] = { MPI_DOUBLE, MPI_SHORT, MPI_LONG_DOUBLE }, rect;
    MPI_Type_create_struct(3, bl, dp, ty, &rect);
    MPI_Type_commit(&rect);
    MPI_CHECK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "external32", MPI_INFO_NULL));
    MPI_CHECK(MPI_File_set_size(fh, 0));
    MPI_CHECK(MPI_File_write_at(fh, 0, rv, 2, rect, &st));
    MPI_Get_count(&st, rect, &n);
    CHECK(n == 2, "external32 structs: write count %d", n);
    MPI_File_sync(fh);
    MPI_File_get_size(fh, &fsize);
    CHECK(fsize == 52, "external32 structs: file size %lld, expected 52", (long long)fsize);
    raw(name, b, 26);
    static const unsigned char ws[26] = { 0x3f, 0xf8, 0, 0, 0, 0, 0, 0, 0xff, 0xfd, 0x3f, 0xff, 0x80,
                                          0,    0,    0, 0, 0, 0, 0, 0, 0,    0,    0,    0,    0 };
    expect_bytes("external32 struct", b, ws, 26);
    memset(rb, 0, sizeof rb);
    MPI_CHECK(MPI_File_read_at(fh, 0, rb, 2, rect, &st));
    MPI_Get_count(&st, rect, &n);
    CHECK(n == 2, "external32 structs: read count %d", n);
    for (int i = 0; i < 2; i++)
        CHECK(rb[i].d == rv[i].d && rb[i].s == rv[i].s && rb[i].ld == rv[i].ld, "external32 struct %d read back", i);
    /* an element cut by the end of the file is not counted */
    MPI_CHECK(MPI_File_read_at(fh, 13, rb, 2, rect, &st));
    MPI_Get_count(&st, rect, &n);
    CHECK(n == 1, "external32 structs at the end: count %d, expected 1", n);
    MPI_Type_free(&rect);
    MPI_CHECK(MPI_File_close(&fh));
    MPI_CHECK(MPI_File_delete(name, MPI_INFO_NULL));

    /* ---- an indexed MPI_CHAR view, collectively (MPICH io/external32_derived_dtype) ---- */
    MPI_Datatype idx;
    int blocks[2] = { 1, 1 }, disps[2] = { 0, 1 };
    MPI_Type_indexed(2, blocks, disps, MPI_CHAR, &idx);
    MPI_Type_commit(&idx);
    MPI_CHECK(MPI_File_open(MPI_COMM_WORLD, shared, MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    MPI_CHECK(MPI_File_set_size(fh, 0));
    MPI_CHECK(MPI_File_set_view(fh, 0, idx, idx, "external32", MPI_INFO_NULL));
    char cv[2] = { (char)('a' + rank), (char)('A' + rank) }, cb[2] = { 0, 0 };
    MPI_CHECK(MPI_File_write_at_all(fh, rank, cv, 1, idx, MPI_STATUS_IGNORE));
    MPI_File_sync(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_sync(fh);
    MPI_CHECK(MPI_File_read_at_all(fh, peer, cb, 1, idx, MPI_STATUS_IGNORE));
    CHECK(cb[0] == 'a' + peer && cb[1] == 'A' + peer, "indexed chars read back: %c%c", cb[0], cb[1]);
    MPI_Type_free(&idx);
    MPI_CHECK(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        MPI_CHECK(MPI_File_delete(shared, MPI_INFO_NULL));

    /* ---- registered representations (their errors are not a file's) ---- */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_CHECK(MPI_Register_datarep("wide32", wide_read, wide_write, wide_extent, &calls));
    MPI_CHECK(MPI_Register_datarep_c("wide32c", wide_read_c, wide_write_c, wide_extent, &calls));
    int rc = MPI_Register_datarep("wide32", wide_read, wide_write, wide_extent, &calls);
    CHECK(mtest_class(rc) == MPI_ERR_DUP_DATAREP, "a second wide32: class %d", mtest_class(rc));
    rc = MPI_Register_datarep("external32", wide_read, wide_write, wide_extent, &calls);
    CHECK(mtest_class(rc) == MPI_ERR_DUP_DATAREP, "registering external32: class %d", mtest_class(rc));
    registered("wide32");
    registered("wide32c");
    CHECK(calls > 0, "the conversion functions were never called");

    /* registered without conversion functions: the native bytes */
    MPI_CHECK(MPI_Register_datarep("plain", MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL, wide_extent, &calls));
    path(name, sizeof name, "plain");
    MPI_CHECK(MPI_File_open(MPI_COMM_SELF, name, MPI_MODE_RDWR | MPI_MODE_CREATE | MPI_MODE_DELETE_ON_CLOSE,
                            MPI_INFO_NULL, &fh));
    MPI_CHECK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "plain", MPI_INFO_NULL));
    MPI_CHECK(MPI_File_write(fh, iv, 4, MPI_INT, MPI_STATUS_IGNORE));
    MPI_File_sync(fh);
    raw(name, b, 16);
    CHECK(memcmp(b, iv, 16) == 0, "a representation without conversion functions changed the bytes");
    MPI_CHECK(MPI_File_close(&fh));

    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        rmdir(dir);
    MPI_Finalize();
    if (rank == 0)
        printf("No Errors\n");
    return 0;
}
