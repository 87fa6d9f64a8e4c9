/* MPI-IO collective access through two-phase I/O (io/coll.c), at 1-4 ranks: a 3-D array of
 * doubles block-decomposed over the ranks (subarray views, sizes that do not divide evenly),
 * written with MPI_File_write_all in several rounds (a small "cb_buffer_size") and read back
 * both whole and through the views, then again from memory that is not contiguous (every other
 * double); writes that leave holes keep the bytes already in the file
 * (data sieving); ranks with nothing to write; a rank whose arguments are wrong gets its error
 * while the others complete. Every byte is checked. An argument: the number of aggregators
 * (the hint cb_nodes), reported back by MPI_File_get_info. */
#include <stdlib.h>
#include <unistd.h>

#include "mtest.h"

#define N 37

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char dir[256], name[300];
    if (rank == 0) {
        snprintf(dir, sizeof dir, "/tmp/aptus-ioc-XXXXXX");
        CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    }
    MPI_Bcast(dir, sizeof dir, MPI_CHAR, 0, MPI_COMM_WORLD);
    snprintf(name, sizeof name, "%s/array", dir);

    /* the block of this rank */
    int dims[3] = { 0, 0, 0 }, periods[3] = { 0, 0, 0 }, coords[3];
    MPI_Dims_create(size, 3, dims);
    MPI_Comm cart;
    MPI_Cart_create(MPI_COMM_WORLD, 3, dims, periods, 0, &cart);
    MPI_Cart_coords(cart, rank, 3, coords);
    int gs[3] = { N, N, N }, ls[3], st[3];
    for (int d = 0; d < 3; d++) {
        ls[d] = N / dims[d] + (coords[d] < N % dims[d]);
        st[d] = coords[d] * (N / dims[d]) + (coords[d] < N % dims[d] ? coords[d] : N % dims[d]);
    }
    size_t local = (size_t)ls[0] * ls[1] * ls[2];
    double *a = malloc(local * sizeof(double)), *b = malloc(local * sizeof(double));
    for (int i = 0; i < ls[0]; i++)
        for (int j = 0; j < ls[1]; j++)
            for (int k = 0; k < ls[2]; k++)
                a[((size_t)i * ls[1] + j) * ls[2] + k] = (double)(((st[0] + i) * N + st[1] + j) * N + st[2] + k);
    MPI_Datatype view;
    MPI_Type_create_subarray(3, gs, ls, st, MPI_ORDER_C, MPI_DOUBLE, &view);
    MPI_Type_commit(&view);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "cb_buffer_size", "4096"); /* many rounds */
    int aggregators = size;
    if (argc > 1) { /* the number of aggregators (cb_nodes) */
        MPI_Info_set(info, "cb_nodes", argv[1]);
        aggregators = atoi(argv[1]) < size ? atoi(argv[1]) : size;
    }
    MPI_File fh;
    CHECK(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDWR | MPI_MODE_CREATE, info, &fh) == MPI_SUCCESS, "open");
    MPI_Info used;
    char v[MPI_MAX_INFO_VAL];
    int vlen = MPI_MAX_INFO_VAL, has = 0;
    MPI_File_get_info(fh, &used);
    MPI_Info_get_string(used, "cb_nodes", &vlen, v, &has);
    CHECK(has && atoi(v) == aggregators, "cb_nodes in effect: %s, expected %d", has ? v : "(none)", aggregators);
    MPI_Info_free(&used);
    MPI_File_set_view(fh, 0, MPI_DOUBLE, view, "native", MPI_INFO_NULL);
    MPI_Status s;
    int n;
    CHECK(MPI_File_write_all(fh, a, (int)local, MPI_DOUBLE, &s) == MPI_SUCCESS, "write_all");
    MPI_Get_count(&s, MPI_DOUBLE, &n);
    CHECK((size_t)n == local, "write_all count %d", n);
    MPI_File_sync(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_sync(fh);
    memset(b, 0, local * sizeof(double));
    CHECK(MPI_File_read_at_all(fh, 0, b, (int)local, MPI_DOUBLE, &s) == MPI_SUCCESS, "read_at_all");
    MPI_Get_count(&s, MPI_DOUBLE, &n);
    CHECK((size_t)n == local, "read_at_all count %d", n);
    for (size_t i = 0; i < local; i++)
        CHECK(b[i] == a[i], "read_all through the view: element %zu is %g, expected %g", i, b[i], a[i]);
    /* from memory that is not contiguous: the writer packs its pieces */
    MPI_Datatype gap;
    MPI_Type_vector((int)local, 1, 2, MPI_DOUBLE, &gap);
    MPI_Type_commit(&gap);
    double *g = malloc(2 * local * sizeof(double));
    for (size_t i = 0; i < local; i++) {
        g[2 * i] = a[i] + 0.5;
        g[2 * i + 1] = -1;
    }
    CHECK(MPI_File_write_at_all(fh, 0, g, 1, gap, &s) == MPI_SUCCESS, "write_at_all from every other double");
    MPI_Get_count(&s, MPI_DOUBLE, &n);
    CHECK((size_t)n == local, "write_at_all from every other double: count %d", n);
    MPI_File_sync(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_sync(fh);
    for (size_t i = 0; i < 2 * local; i++)
        g[i] = -2;
    CHECK(MPI_File_read_at_all(fh, 0, g, 1, gap, &s) == MPI_SUCCESS, "read_at_all into every other double");
    for (size_t i = 0; i < local; i++)
        CHECK(g[2 * i] == a[i] + 0.5 && g[2 * i + 1] == -2, "every other double: element %zu is %g / %g", i, g[2 * i],
              g[2 * i + 1]);
    for (size_t i = 0; i < local; i++)
        g[i] = a[i];
    CHECK(MPI_File_write_at_all(fh, 0, g, (int)local, MPI_DOUBLE, &s) == MPI_SUCCESS, "write_at_all again");
    free(g);
    MPI_Type_free(&gap);
    MPI_File_sync(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_sync(fh);
    if (rank == 0) {
        double *whole = malloc(sizeof(double) * N * N * N);
        MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
        MPI_File_read_at(fh, 0, whole, N * N * N, MPI_DOUBLE, &s);
        MPI_Get_count(&s, MPI_DOUBLE, &n);
        CHECK(n == N * N * N, "whole file: %d doubles", n);
        for (int i = 0; i < N * N * N; i++)
            CHECK(whole[i] == (double)i, "whole file: element %d is %g", i, whole[i]);
        free(whole);
    } else {
        MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
    }
    MPI_File_close(&fh);
    /* again with collective buffering off (each rank its own runs): the same file */
    MPI_Info off;
    MPI_Info_create(&off);
    MPI_Info_set(off, "collective_buffering", "false");
    MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDWR, off, &fh);
    MPI_Info_free(&off);
    MPI_File_set_view(fh, 0, MPI_DOUBLE, view, "native", MPI_INFO_NULL);
    for (size_t i = 0; i < local; i++)
        a[i] = -a[i];
    CHECK(MPI_File_write_all(fh, a, (int)local, MPI_DOUBLE, MPI_STATUS_IGNORE) == MPI_SUCCESS,
          "write_all, no buffering");
    MPI_File_sync(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_sync(fh);
    memset(b, 0, local * sizeof(double));
    MPI_File_seek(fh, 0, MPI_SEEK_SET); /* (write_all moved the individual pointer) */
    MPI_File_read_all(fh, b, (int)local, MPI_DOUBLE, MPI_STATUS_IGNORE);
    CHECK(memcmp(a, b, local * sizeof(double)) == 0, "read_all, no buffering");
    MPI_File_close(&fh);
    MPI_Type_free(&view);

    /* holes: every rank writes one int of each 2 * size, the rest keeps the file's bytes */
    MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDWR, info, &fh);
    MPI_File_set_size(fh, 0);
    enum { M = 5000 };
    if (rank == 0) {
        int *fill = malloc(sizeof(int) * 2 * M * (size_t)size);
        for (int i = 0; i < 2 * M * size; i++)
            fill[i] = -i;
        MPI_File_write_at(fh, 0, fill, 2 * M * size, MPI_INT, MPI_STATUS_IGNORE);
        free(fill);
    }
    MPI_File_sync(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_sync(fh);
    MPI_Datatype one, sparse;
    MPI_Type_create_resized(MPI_INT, 0, (MPI_Aint)(2 * size * sizeof(int)), &one);
    MPI_Type_contiguous(1, one, &sparse);
    MPI_Type_commit(&sparse);
    MPI_File_set_view(fh, (MPI_Offset)(rank * sizeof(int)), MPI_INT, sparse, "native", MPI_INFO_NULL);
    int *mine = malloc(sizeof(int) * M);
    for (int i = 0; i < M; i++)
        mine[i] = 1000000 * (rank + 1) + i;
    /* the last rank writes nothing (count 0) */
    int cnt = size > 1 && rank == size - 1 ? 0 : M;
    CHECK(MPI_File_write_all(fh, mine, cnt, MPI_INT, MPI_STATUS_IGNORE) == MPI_SUCCESS, "write_all with holes");
    MPI_File_sync(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_sync(fh);
    MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
    if (rank == 0) {
        int *back = malloc(sizeof(int) * 2 * M * (size_t)size);
        MPI_File_read_at(fh, 0, back, 2 * M * size, MPI_INT, MPI_STATUS_IGNORE);
        for (int i = 0; i < 2 * M * size; i++) {
            int r = i % (2 * size), k = i / (2 * size);
            int wrote = r < size && !(size > 1 && r == size - 1);
            int want = wrote ? 1000000 * (r + 1) + k : -i;
            CHECK(back[i] == want, "holes: int %d is %d, expected %d", i, back[i], want);
        }
        free(back);
    }
    /* read back through the sparse views, collectively (two-phase: each rank's ints lie between
     * the others'), into every other int */
    MPI_File_set_view(fh, (MPI_Offset)(rank * sizeof(int)), MPI_INT, sparse, "native", MPI_INFO_NULL);
    MPI_Datatype other;
    MPI_Type_vector(M, 1, 2, MPI_INT, &other);
    MPI_Type_commit(&other);
    int *got = malloc(sizeof(int) * 2 * M);
    for (int i = 0; i < 2 * M; i++)
        got[i] = -7;
    CHECK(MPI_File_read_all(fh, got, 1, other, MPI_STATUS_IGNORE) == MPI_SUCCESS, "read_all of the holes' file");
    for (int i = 0; i < M; i++) {
        int want = cnt ? 1000000 * (rank + 1) + i : -(i * 2 * size + rank);
        CHECK(got[2 * i] == want && got[2 * i + 1] == -7, "read_all of the holes' file: int %d is %d / %d, expected %d",
              i, got[2 * i], got[2 * i + 1], want);
    }
    free(got);
    MPI_Type_free(&other);
    /* a rank with a wrong argument: its error, the others complete */
    MPI_File_set_view(fh, (MPI_Offset)(rank * sizeof(int)), MPI_INT, sparse, "native", MPI_INFO_NULL);
    int rc = MPI_File_write_at_all(fh, 0, mine, rank == 0 ? -1 : 10, MPI_INT, MPI_STATUS_IGNORE);
    if (rank == 0)
        CHECK(mtest_class(rc) == MPI_ERR_COUNT, "negative count in write_at_all: class %d", mtest_class(rc));
    else
        CHECK(rc == MPI_SUCCESS, "write_at_all beside a rank with a wrong argument: class %d", mtest_class(rc));
    MPI_Type_free(&sparse);
    MPI_Type_free(&one);
    MPI_File_close(&fh);
    MPI_Info_free(&info);
    free(mine);
    free(a);
    free(b);
    MPI_Comm_free(&cart);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        MPI_File_delete(name, MPI_INFO_NULL);
        rmdir(dir);
    }
    MPI_Finalize();
    return 0;
}
