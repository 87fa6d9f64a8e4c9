/* The MPI-1 functions removed in MPI 3.0 (and the deprecated attribute calls), as old programs
 * use them: MPI_Address, MPI_Type_struct, MPI_Type_hvector, MPI_Type_hindexed, MPI_Type_extent,
 * MPI_Type_lb, MPI_Type_ub, MPI_Errhandler_create/set/get, MPI_Keyval_create/free,
 * MPI_Attr_put/get/delete. The types built with them carry data round a ring. Any number of
 * ranks. */
#include "mtest.h"

struct rec {
    int id;
    double x[3];
    char tag;
};

static int eh_calls;
static void old_handler(MPI_Comm *comm, int *code, ...)
{
    (void)comm, (void)code;
    eh_calls++;
}

static int attr_deleted;
static int old_delete(MPI_Comm comm, int keyval, void *val, void *extra)
{
    (void)comm, (void)keyval, (void)extra;
    attr_deleted += *(int *)val;
    return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* MPI_Address and MPI_Type_struct. */
    struct rec r[2];
    MPI_Aint base, a[3], ext, lb, ub;
    MPI_CHECK(MPI_Address(&r[0], &base));
    MPI_CHECK(MPI_Address(&r[0].id, &a[0]));
    MPI_CHECK(MPI_Address(&r[0].x[0], &a[1]));
    MPI_CHECK(MPI_Address(&r[0].tag, &a[2]));
    MPI_Aint ga;
    MPI_CHECK(MPI_Get_address(&r[0].x[0], &ga));
    CHECK(ga == a[1], "MPI_Address %ld, MPI_Get_address %ld", (long)a[1], (long)ga);
    for (int i = 0; i < 3; i++)
        a[i] -= base;
    int bl[3] = { 1, 3, 1 };
    MPI_Datatype types[3] = { MPI_INT, MPI_DOUBLE, MPI_CHAR }, st, rt;
    MPI_CHECK(MPI_Type_struct(3, bl, a, types, &st));
    MPI_CHECK(MPI_Type_create_resized(st, 0, (MPI_Aint)sizeof(struct rec), &rt));
    MPI_CHECK(MPI_Type_commit(&rt));
    MPI_CHECK(MPI_Type_extent(rt, &ext));
    MPI_CHECK(MPI_Type_lb(rt, &lb));
    MPI_CHECK(MPI_Type_ub(rt, &ub));
    CHECK(ext == (MPI_Aint)sizeof(struct rec) && lb == 0 && ub == ext, "struct: extent %ld lb %ld ub %ld", (long)ext,
          (long)lb, (long)ub);
    MPI_CHECK(MPI_Type_extent(st, &ext));
    MPI_CHECK(MPI_Type_lb(st, &lb));
    MPI_CHECK(MPI_Type_ub(st, &ub));
    CHECK(lb == 0 && ub == lb + ext && ub >= a[2] + 1, "unresized struct: extent %ld lb %ld ub %ld", (long)ext,
          (long)lb, (long)ub);

    int to = (rank + 1) % size, from = (rank + size - 1) % size;
    struct rec out[2], in[2];
    memset(out, 0, sizeof out);
    memset(in, 0, sizeof in);
    for (int i = 0; i < 2; i++) {
        out[i].id = rank * 10 + i;
        out[i].x[0] = rank + 0.5, out[i].x[1] = i, out[i].x[2] = -rank;
        out[i].tag = (char)('a' + rank % 26);
    }
    MPI_CHECK(MPI_Sendrecv(out, 2, rt, to, 1, in, 2, rt, from, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    for (int i = 0; i < 2; i++)
        CHECK(in[i].id == from * 10 + i && in[i].x[0] == from + 0.5 && in[i].x[1] == i && in[i].x[2] == -from &&
                  in[i].tag == (char)('a' + from % 26),
              "struct record %d from %d wrong", i, from);

    /* MPI_Type_hvector: every other int of 8, stride in bytes; lb/ub of a negative stride. */
    MPI_Datatype hv, hi;
    MPI_CHECK(MPI_Type_hvector(4, 1, 2 * (MPI_Aint)sizeof(int), MPI_INT, &hv));
    MPI_CHECK(MPI_Type_commit(&hv));
    MPI_CHECK(MPI_Type_extent(hv, &ext));
    CHECK(ext == 7 * (MPI_Aint)sizeof(int), "hvector extent %ld", (long)ext);
    int v[8], w[8];
    for (int i = 0; i < 8; i++)
        v[i] = rank * 100 + i, w[i] = -1;
    MPI_CHECK(MPI_Sendrecv(v, 1, hv, to, 2, w, 1, hv, from, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    for (int i = 0; i < 8; i++)
        CHECK(w[i] == (i % 2 ? -1 : from * 100 + i), "hvector element %d: %d", i, w[i]);
    MPI_Datatype neg;
    MPI_CHECK(MPI_Type_hvector(2, 1, -(MPI_Aint)sizeof(double), MPI_DOUBLE, &neg));
    MPI_CHECK(MPI_Type_lb(neg, &lb));
    MPI_CHECK(MPI_Type_ub(neg, &ub));
    CHECK(lb == -(MPI_Aint)sizeof(double) && ub == (MPI_Aint)sizeof(double), "negative hvector lb %ld ub %ld", (long)lb,
          (long)ub);

    /* MPI_Type_hindexed: ints 5, 6 and 1 of 8 (displacements in bytes). */
    int hbl[2] = { 2, 1 };
    MPI_Aint hd[2] = { 5 * (MPI_Aint)sizeof(int), 1 * (MPI_Aint)sizeof(int) };
    MPI_CHECK(MPI_Type_hindexed(2, hbl, hd, MPI_INT, &hi));
    MPI_CHECK(MPI_Type_commit(&hi));
    MPI_CHECK(MPI_Type_lb(hi, &lb));
    MPI_CHECK(MPI_Type_ub(hi, &ub));
    CHECK(lb == (MPI_Aint)sizeof(int) && ub == 7 * (MPI_Aint)sizeof(int), "hindexed lb %ld ub %ld", (long)lb, (long)ub);
    for (int i = 0; i < 8; i++)
        w[i] = -1;
    MPI_CHECK(MPI_Sendrecv(v, 1, hi, to, 3, w, 1, hi, from, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    for (int i = 0; i < 8; i++)
        CHECK(w[i] == (i == 1 || i == 5 || i == 6 ? from * 100 + i : -1), "hindexed element %d: %d", i, w[i]);
    MPI_CHECK(MPI_Type_free(&hv));
    MPI_CHECK(MPI_Type_free(&hi));
    MPI_CHECK(MPI_Type_free(&neg));
    MPI_CHECK(MPI_Type_free(&rt));
    MPI_CHECK(MPI_Type_free(&st));

    /* MPI_Errhandler_create/set/get on a duplicate of MPI_COMM_WORLD. */
    MPI_Comm dup;
    MPI_Errhandler eh, got;
    MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    MPI_CHECK(MPI_Errhandler_create(old_handler, &eh));
    MPI_CHECK(MPI_Errhandler_set(dup, eh));
    MPI_CHECK(MPI_Errhandler_get(dup, &got));
    CHECK(got == eh, "MPI_Errhandler_get returned another handler");
    MPI_CHECK(MPI_Errhandler_free(&got));
    int rc = MPI_Send(v, 1, MPI_INT, size + 5, 0, dup); /* invalid rank */
    CHECK(rc != MPI_SUCCESS && eh_calls == 1, "user handler of MPI_Errhandler_create: %d calls, rc %d", eh_calls, rc);
    MPI_CHECK(MPI_Errhandler_set(dup, MPI_ERRORS_RETURN));
    MPI_CHECK(MPI_Errhandler_get(dup, &got));
    CHECK(got == MPI_ERRORS_RETURN, "MPI_Errhandler_get after setting MPI_ERRORS_RETURN");
    MPI_CHECK(MPI_Errhandler_free(&got));
    MPI_CHECK(MPI_Errhandler_free(&eh));

    /* MPI_Keyval_create/free and MPI_Attr_put/get/delete. */
    int kv, flag, val = 7, *p;
    MPI_CHECK(MPI_Keyval_create(MPI_DUP_FN, old_delete, &kv, NULL));
    MPI_CHECK(MPI_Attr_put(dup, kv, &val));
    MPI_CHECK(MPI_Attr_get(dup, kv, &p, &flag));
    CHECK(flag && p == &val, "MPI_Attr_get: flag %d", flag);
    MPI_CHECK(MPI_Attr_get(dup, MPI_TAG_UB, &p, &flag));
    CHECK(flag && *p >= 32767, "MPI_TAG_UB through MPI_Attr_get: flag %d", flag);
    MPI_CHECK(MPI_Attr_delete(dup, kv));
    CHECK(attr_deleted == 7, "delete callback through MPI_Attr_delete: %d", attr_deleted);
    MPI_CHECK(MPI_Attr_get(dup, kv, &p, &flag));
    CHECK(!flag, "attribute still there after MPI_Attr_delete");
    MPI_CHECK(MPI_Keyval_free(&kv));
    CHECK(kv == MPI_KEYVAL_INVALID, "MPI_Keyval_free did not reset the keyval");
    MPI_CHECK(MPI_Comm_free(&dup));

    MPI_Finalize();
    return 0;
}
