/* Datatype attributes: keyvals with callbacks counted on MPI_Type_dup and MPI_Type_free,
 * attributes on a predefined datatype, copy flag 0, the predefined callbacks and keyval errors.
 * Attributes are per process: each rank uses values derived from its rank. */
#include "mtest.h"

struct counts {
    int copies, deletes, copy_flag;
    intptr_t last_deleted;
    MPI_Datatype last_type;
};

static int copy_cb(MPI_Datatype old, int keyval, void *extra, void *in, void *out, int *flag)
{
    struct counts *c = extra;
    c->copies++;
    *(void **)out = (void *)((intptr_t)in * 10);
    *flag = c->copy_flag;
    return MPI_SUCCESS;
}

static int delete_cb(MPI_Datatype type, int keyval, void *value, void *extra)
{
    struct counts *c = extra;
    c->deletes++;
    c->last_deleted = (intptr_t)value;
    c->last_type = type;
    return MPI_SUCCESS;
}

static intptr_t get(MPI_Datatype t, int k, int *flag)
{
    void *v = NULL;
    MPI_CHECK(MPI_Type_get_attr(t, k, &v, flag));
    return (intptr_t)v;
}

int main(int argc, char **argv)
{
    int rank, flag, rc;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);

    struct counts ck = { 0, 0, 1, 0, MPI_DATATYPE_NULL }, nk = { 0, 0, 0, 0, MPI_DATATYPE_NULL };
    int keep, nocopy, kdup;
    MPI_CHECK(MPI_Type_create_keyval(copy_cb, delete_cb, &keep, &ck));
    MPI_CHECK(MPI_Type_create_keyval(copy_cb, delete_cb, &nocopy, &nk));
    MPI_CHECK(MPI_Type_create_keyval(MPI_TYPE_DUP_FN, MPI_TYPE_NULL_DELETE_FN, &kdup, NULL));

    /* A predefined datatype can carry attributes. */
    MPI_CHECK(MPI_Type_set_attr(MPI_DOUBLE, keep, (void *)(intptr_t)(rank + 5)));
    CHECK(get(MPI_DOUBLE, keep, &flag) == rank + 5 && flag, "attribute on MPI_DOUBLE (flag %d)", flag);
    get(MPI_INT, keep, &flag);
    CHECK(!flag, "attribute of MPI_DOUBLE visible on MPI_INT");
    MPI_CHECK(MPI_Type_delete_attr(MPI_DOUBLE, keep));
    CHECK(ck.deletes == 1 && ck.last_deleted == rank + 5 && ck.last_type == MPI_DOUBLE,
          "delete on MPI_DOUBLE: %d deletes, value %ld", ck.deletes, (long)ck.last_deleted);

    /* Derived type, duplicated: copy callbacks once each, flag 0 leaves the attribute behind. */
    MPI_Datatype t, d;
    MPI_CHECK(MPI_Type_contiguous(3, MPI_INT, &t));
    MPI_CHECK(MPI_Type_commit(&t));
    MPI_CHECK(MPI_Type_set_attr(t, keep, (void *)(intptr_t)(rank + 2)));
    MPI_CHECK(MPI_Type_set_attr(t, nocopy, (void *)(intptr_t)7));
    MPI_CHECK(MPI_Type_set_attr(t, kdup, (void *)(intptr_t)99));
    MPI_CHECK(MPI_Type_dup(t, &d));
    CHECK(ck.copies == 1 && nk.copies == 1, "copies on Type_dup: %d %d (want 1 1)", ck.copies, nk.copies);
    CHECK(get(d, keep, &flag) == 10 * (rank + 2) && flag, "copied value on the dup (flag %d)", flag);
    get(d, nocopy, &flag);
    CHECK(!flag, "attribute with copy flag 0 was copied to the dup");
    CHECK(get(d, kdup, &flag) == 99 && flag, "MPI_TYPE_DUP_FN attribute not copied (flag %d)", flag);
    CHECK(get(t, keep, &flag) == rank + 2 && flag, "original changed by Type_dup");

    /* The dup is a working type: its size is the original's. */
    int sz;
    MPI_CHECK(MPI_Type_size(d, &sz));
    CHECK(sz == 3 * (int)sizeof(int), "Type_size of the dup %d", sz);

    /* Free runs the delete callbacks of the attributes present. */
    MPI_CHECK(MPI_Type_free(&d));
    CHECK(ck.deletes == 2 && ck.last_deleted == 10 * (rank + 2) && nk.deletes == 0,
          "Type_free of the dup: deletes %d %d, value %ld", ck.deletes, nk.deletes, (long)ck.last_deleted);
    MPI_CHECK(MPI_Type_free(&t));
    CHECK(ck.deletes == 3 && ck.last_deleted == rank + 2 && nk.deletes == 1 && nk.last_deleted == 7,
          "Type_free of the original: deletes %d %d", ck.deletes, nk.deletes);

    /* Errors. */
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    void *v;
    rc = MPI_Type_get_attr(MPI_INT, MPI_TAG_UB, &v, &flag);
    CHECK_ERRCLASS(rc, MPI_ERR_KEYVAL, "communicator's predefined keyval on a datatype");
    rc = MPI_Type_set_attr(MPI_DATATYPE_NULL, keep, NULL);
    CHECK_ERRCLASS(rc, MPI_ERR_TYPE, "set_attr on MPI_DATATYPE_NULL");
    int k2 = keep;
    MPI_CHECK(MPI_Type_free_keyval(&keep));
    CHECK(keep == MPI_KEYVAL_INVALID, "Type_free_keyval did not reset the keyval");
    if (getenv("MTEST_APTUS")) { /* erroneous programs: Aptus MPI detects them */
        rc = MPI_Type_set_attr(MPI_INT, k2, NULL);
        CHECK_ERRCLASS(rc, MPI_ERR_KEYVAL, "set_attr with a freed keyval");
        /* A second free through a copy of the handle is tolerated, as in MPICH. */
        MPI_CHECK(MPI_Type_free_keyval(&k2));
    }
    MPI_CHECK(MPI_Type_free_keyval(&nocopy));
    MPI_CHECK(MPI_Type_free_keyval(&kdup));

    MPI_Finalize();
    return 0;
}
