/* A standard-ABI MPI program for the binary compatibility test (abi_binary.sh): it is compiled
 * against another implementation's MPI 5.0 ABI header and library (the MPICH wheel), then run
 * with Aptus MPI's library. It exercises what crosses the ABI boundary: predefined handles and
 * constants baked into the binary, the MPI_Status layout, strings returned by the library,
 * communicator splitting, a user reduction operation called back by the library, an error
 * handler, attributes and info objects. Prints the library version from rank 0 (the test checks
 * which library ran). Exit status 0 on success. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size, failures;

#define CHECK(cond, ...)                                                                                               \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            fprintf(stderr, "FAIL abi_prog.c:%d: [rank %d] ", __LINE__, rank);                                         \
            fprintf(stderr, __VA_ARGS__);                                                                              \
            fputc('\n', stderr);                                                                                       \
            failures++;                                                                                                \
        }                                                                                                              \
    } while (0)

/* A pair {int a; int b} reduced field by field: a summed, b the maximum. */
typedef struct {
    int a, b;
} pair;

static void pair_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    pair *x = in, *y = inout;
    for (int i = 0; i < *len; i++) {
        y[i].a += x[i].a;
        if (x[i].b > y[i].b)
            y[i].b = x[i].b;
    }
}

static int handler_calls, handler_class;
static void on_error(MPI_Comm *comm, int *code, ...)
{
    handler_calls++;
    MPI_Error_class(*code, &handler_class);
}

static void test_constants(void)
{
    int major = -1, minor = -1, v, sv;
    MPI_Abi_get_version(&major, &minor);
    CHECK(major == MPI_ABI_VERSION && minor == MPI_ABI_SUBVERSION, "Abi_get_version %d.%d, header %d.%d", major, minor,
          MPI_ABI_VERSION, MPI_ABI_SUBVERSION);
    MPI_Get_version(&v, &sv);
    CHECK(v == MPI_VERSION && sv == MPI_SUBVERSION, "Get_version %d.%d, header %d.%d", v, sv, MPI_VERSION,
          MPI_SUBVERSION);

    /* Predefined datatypes: names and sizes as the library sees the handles. */
    static const struct {
        MPI_Datatype t;
        const char *name;
        int size;
    } types[] = {
        { MPI_CHAR, "MPI_CHAR", 1 },         { MPI_INT, "MPI_INT", (int)sizeof(int) },
        { MPI_DOUBLE, "MPI_DOUBLE", 8 },     { MPI_INT64_T, "MPI_INT64_T", 8 },
        { MPI_BYTE, "MPI_BYTE", 1 },         { MPI_2INT, "MPI_2INT", 2 * (int)sizeof(int) },
        { MPI_UINT16_T, "MPI_UINT16_T", 2 }, { MPI_C_DOUBLE_COMPLEX, "MPI_C_DOUBLE_COMPLEX", 16 },
    };
    for (size_t i = 0; i < sizeof types / sizeof *types; i++) {
        char name[MPI_MAX_OBJECT_NAME];
        int len = -1, sz = -1;
        MPI_Type_get_name(types[i].t, name, &len);
        CHECK(strcmp(name, types[i].name) == 0 && len == (int)strlen(types[i].name), "Type_get_name: %s, want %s", name,
              types[i].name);
        MPI_Type_size(types[i].t, &sz);
        CHECK(sz == types[i].size, "Type_size(%s) = %d, want %d", types[i].name, sz, types[i].size);
    }
    char cname[MPI_MAX_OBJECT_NAME];
    int len;
    MPI_Comm_get_name(MPI_COMM_WORLD, cname, &len);
    CHECK(strcmp(cname, "MPI_COMM_WORLD") == 0, "world's name %s", cname);

    int *tag_ub, flag = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag);
    CHECK(flag && *tag_ub >= 32767, "MPI_TAG_UB");

    char err[MPI_MAX_ERROR_STRING];
    MPI_Error_string(MPI_ERR_TRUNCATE, err, &len);
    CHECK(len > 0 && (int)strlen(err) == len, "Error_string(MPI_ERR_TRUNCATE)");
    int cls = -1;
    MPI_Error_class(MPI_ERR_RANK, &cls);
    CHECK(cls == MPI_ERR_RANK, "Error_class(MPI_ERR_RANK) = %d", cls);
}

static void test_status(void)
{
    /* A ring: the status fields written by the library land where the binary reads them. */
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    double out[5], in[7];
    for (int i = 0; i < 5; i++)
        out[i] = rank * 10.0 + i;
    MPI_Status st;
    st.MPI_SOURCE = st.MPI_TAG = st.MPI_ERROR = -12345;
    MPI_Sendrecv(out, 5, MPI_DOUBLE, right, 40 + rank, in, 7, MPI_DOUBLE, left, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
    CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 40 + left, "status source %d tag %d, want %d %d", st.MPI_SOURCE,
          st.MPI_TAG, left, 40 + left);
    int count = -1;
    MPI_Get_count(&st, MPI_DOUBLE, &count);
    CHECK(count == 5, "Get_count %d", count);
    for (int i = 0; i < 5; i++)
        CHECK(in[i] == left * 10.0 + i, "ring data %d: %g", i, in[i]);

    /* MPI_PROC_NULL and MPI_ANY_SOURCE are constants compiled into the binary. */
    MPI_Recv(in, 1, MPI_DOUBLE, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st);
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG, "receive from MPI_PROC_NULL: %d %d",
          st.MPI_SOURCE, st.MPI_TAG);
}

static void test_split_reduce(void)
{
    /* Split by parity, keys reversed. */
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half);
    int hrank, hsize;
    MPI_Comm_rank(half, &hrank);
    MPI_Comm_size(half, &hsize);
    int expect_size = (size + (rank % 2 == 0)) / 2;
    CHECK(hsize == expect_size, "split size %d, want %d", hsize, expect_size);
    int higher = 0; /* members of my color with a larger world rank come first */
    for (int r = rank + 2; r < size; r += 2)
        higher++;
    CHECK(hrank == higher, "split rank %d, want %d", hrank, higher);

    /* Built-in op on the split communicator. */
    long sum = -1, want = 0;
    long mine = rank + 1;
    MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, half);
    for (int r = rank % 2; r < size; r += 2)
        want += r + 1;
    CHECK(sum == want, "Allreduce on the split: %ld, want %ld", sum, want);
    MPI_Comm_free(&half);
    CHECK(half == MPI_COMM_NULL, "Comm_free did not reset the handle");

    /* User op on a derived type: three pairs per rank. */
    MPI_Datatype pt;
    MPI_Type_contiguous(2, MPI_INT, &pt);
    MPI_Type_commit(&pt);
    MPI_Op op;
    MPI_Op_create(pair_op, 1, &op);
    pair v[3], r[3];
    for (int i = 0; i < 3; i++) {
        v[i].a = rank + i;
        v[i].b = rank * i;
    }
    MPI_Allreduce(v, r, 3, pt, op, MPI_COMM_WORLD);
    for (int i = 0; i < 3; i++) {
        long wa = 0;
        for (int q = 0; q < size; q++)
            wa += q + i;
        CHECK(r[i].a == wa, "user op: a[%d] = %d, want %ld", i, r[i].a, wa);
        CHECK(r[i].b == (size - 1) * i, "user op: b[%d] = %d, want %d", i, r[i].b, (size - 1) * i);
    }
    MPI_Op_free(&op);
    MPI_Type_free(&pt);
}

static void test_errhandler(void)
{
    MPI_Comm dup;
    MPI_Errhandler eh;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_create_errhandler(on_error, &eh);
    MPI_Comm_set_errhandler(dup, eh);
    MPI_Errhandler_free(&eh);
    int x = 0;
    int rc = MPI_Send(&x, 1, MPI_INT, size + 3, 0, dup);
    int cls = -1;
    MPI_Error_class(rc, &cls);
    /* What the call returns after a user handler ran differs between implementations. */
    CHECK(rc == MPI_SUCCESS || cls == MPI_ERR_RANK, "Send to a bad rank: class %d", cls);
    CHECK(handler_calls == 1 && handler_class == MPI_ERR_RANK, "error handler: %d calls, class %d", handler_calls,
          handler_class);
    MPI_Comm_free(&dup);

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    rc = MPI_Bcast(&x, 1, MPI_DATATYPE_NULL, 0, MPI_COMM_WORLD);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_TYPE, "Bcast with MPI_DATATYPE_NULL: class %d", cls);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

static int deletes;
static int count_delete(MPI_Comm comm, int keyval, void *value, void *extra)
{
    deletes++;
    return MPI_SUCCESS;
}

static void test_attr_info(void)
{
    int key, flag;
    MPI_Comm dup;
    MPI_Comm_create_keyval(MPI_COMM_DUP_FN, count_delete, &key, NULL);
    MPI_Comm_set_attr(MPI_COMM_WORLD, key, (void *)(intptr_t)(rank + 100));
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    void *v = NULL;
    MPI_Comm_get_attr(dup, key, &v, &flag);
    CHECK(flag && (intptr_t)v == rank + 100, "MPI_COMM_DUP_FN attribute on the dup: flag %d", flag);
    MPI_Comm_free(&dup);
    MPI_Comm_delete_attr(MPI_COMM_WORLD, key);
    CHECK(deletes == 2, "delete callbacks: %d, want 2", deletes);
    MPI_Comm_free_keyval(&key);

    MPI_Info info;
    char value[16];
    int n = -1;
    MPI_Info_create(&info);
    MPI_Info_set(info, "abi_key", "abi_value");
    MPI_Info_get_nkeys(info, &n);
    int buflen = sizeof value;
    MPI_Info_get_string(info, "abi_key", &buflen, value, &flag);
    CHECK(n == 1 && flag && strcmp(value, "abi_value") == 0, "info round trip");
    MPI_Info_free(&info);
    CHECK(info == MPI_INFO_NULL, "Info_free did not reset the handle");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank == 0) {
        char lib[MPI_MAX_LIBRARY_VERSION_STRING];
        int len;
        MPI_Get_library_version(lib, &len);
        printf("abi_prog: library: %s\n", lib);
        fflush(stdout);
    }
    test_constants();
    test_status();
    test_split_reduce();
    test_errhandler();
    test_attr_info();

    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("abi_prog: %d ranks, %s\n", size, all ? "FAILED" : "all checks passed");
    MPI_Finalize();
    return all ? 1 : 0;
}
