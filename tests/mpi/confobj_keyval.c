/* Keyval lifetime (MPI 4.1, section 7.7.2): a keyval freed while attributes still use it stays
 * usable for reading and deleting those attributes (through a copy of its handle), with
 * MPI_Comm_delete_attr, MPI_Attr_delete and MPI_Type_delete_attr; the delete callbacks run once
 * each; freeing the keyval again through a copy of the handle while attributes hold it is
 * tolerated (as MPICH does). With MTEST_APTUS=1 also: a second free after the keyval is gone is
 * tolerated, and setting an attribute with a freed keyval is refused (MPI_ERR_KEYVAL). */
#include "mtest.h"

static int deleted[8];

static int del_comm(MPI_Comm comm, int keyval, void *val, void *extra)
{
    (void)comm, (void)keyval, (void)extra;
    deleted[(int)(intptr_t)val]++;
    return MPI_SUCCESS;
}

static int del_type(MPI_Datatype t, int keyval, void *val, void *extra)
{
    (void)t, (void)keyval, (void)extra;
    deleted[(int)(intptr_t)val]++;
    return MPI_SUCCESS;
}

/* MPI_Comm_delete_attr (legacy: MPI_Attr_delete) with a freed keyval's copy. */
static void comm_case(int legacy, int slot)
{
    MPI_Comm c;
    int kv, copy, flag;
    void *v;
    MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    MPI_CHECK(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
    if (legacy)
        MPI_CHECK(MPI_Keyval_create(MPI_NULL_COPY_FN, del_comm, &kv, NULL));
    else
        MPI_CHECK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, del_comm, &kv, NULL));
    copy = kv;
    MPI_CHECK(MPI_Comm_set_attr(c, kv, (void *)(intptr_t)slot));
    if (legacy)
        MPI_CHECK(MPI_Keyval_free(&kv));
    else
        MPI_CHECK(MPI_Comm_free_keyval(&kv));
    CHECK(kv == MPI_KEYVAL_INVALID, "free did not set the keyval to MPI_KEYVAL_INVALID");
    CHECK(deleted[slot] == 0, "freeing the keyval deleted the attribute");

    /* The attribute is still there and can be read through the copy. */
    MPI_CHECK(MPI_Comm_get_attr(c, copy, &v, &flag));
    CHECK(flag && v == (void *)(intptr_t)slot, "attribute of a freed keyval: flag %d", flag);

    /* A second free through another copy of the handle is tolerated. */
    int copy2 = copy;
    MPI_CHECK(MPI_Comm_free_keyval(&copy2));

    if (legacy)
        MPI_CHECK(MPI_Attr_delete(c, copy));
    else
        MPI_CHECK(MPI_Comm_delete_attr(c, copy));
    CHECK(deleted[slot] == 1, "delete callback ran %d times, want 1", deleted[slot]);
    MPI_CHECK(MPI_Comm_free(&c));
    CHECK(deleted[slot] == 1, "delete callback ran %d times after MPI_Comm_free", deleted[slot]);

    if (getenv("MTEST_APTUS")) {
        /* The keyval is gone now: freeing it again is still tolerated. */
        copy2 = copy;
        MPI_CHECK(MPI_Comm_free_keyval(&copy2));
    }
}

/* The last reference goes with MPI_Comm_free: the keyval stays usable until then. */
static void comm_free_case(int slot)
{
    MPI_Comm c, d;
    int kv, copy, flag;
    void *v;
    MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    MPI_CHECK(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, del_comm, &kv, NULL));
    copy = kv;
    MPI_CHECK(MPI_Comm_set_attr(c, kv, (void *)(intptr_t)slot));
    MPI_CHECK(MPI_Comm_free_keyval(&kv));
    /* Copy callbacks of a freed keyval still run on MPI_Comm_dup. */
    MPI_CHECK(MPI_Comm_dup(c, &d));
    MPI_CHECK(MPI_Comm_get_attr(d, copy, &v, &flag));
    CHECK(flag && v == (void *)(intptr_t)slot, "dup of an attribute of a freed keyval: flag %d", flag);
    MPI_CHECK(MPI_Comm_free(&c));
    CHECK(deleted[slot] == 1, "delete callback ran %d times, want 1", deleted[slot]);
    MPI_CHECK(MPI_Comm_delete_attr(d, copy));
    CHECK(deleted[slot] == 2, "delete callback ran %d times, want 2", deleted[slot]);
    MPI_CHECK(MPI_Comm_free(&d));
    CHECK(deleted[slot] == 2, "delete callback ran %d times, want 2", deleted[slot]);
}

static void type_case(int slot)
{
    MPI_Datatype t;
    int kv, copy, flag;
    void *v;
    MPI_CHECK(MPI_Type_contiguous(2, MPI_INT, &t));
    MPI_CHECK(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, del_type, &kv, NULL));
    copy = kv;
    MPI_CHECK(MPI_Type_set_attr(t, kv, (void *)(intptr_t)slot));
    MPI_CHECK(MPI_Type_free_keyval(&kv));
    CHECK(kv == MPI_KEYVAL_INVALID, "free did not set the keyval to MPI_KEYVAL_INVALID");
    MPI_CHECK(MPI_Type_get_attr(t, copy, &v, &flag));
    CHECK(flag && v == (void *)(intptr_t)slot, "type attribute of a freed keyval: flag %d", flag);
    int copy2 = copy;
    MPI_CHECK(MPI_Type_free_keyval(&copy2));
    MPI_CHECK(MPI_Type_delete_attr(t, copy));
    CHECK(deleted[slot] == 1, "type delete callback ran %d times, want 1", deleted[slot]);
    MPI_CHECK(MPI_Type_free(&t));
    CHECK(deleted[slot] == 1, "type delete callback ran %d times, want 1", deleted[slot]);
}

/* Aptus only: a freed keyval cannot be used to set a new attribute. */
static void set_after_free(void)
{
    MPI_Comm c;
    int kv, copy;
    MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    MPI_CHECK(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
    MPI_CHECK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &kv, NULL));
    copy = kv;
    MPI_CHECK(MPI_Comm_set_attr(c, kv, NULL));
    MPI_CHECK(MPI_Comm_free_keyval(&kv));
    int rc = MPI_Comm_set_attr(c, copy, NULL);
    CHECK_ERRCLASS(rc, MPI_ERR_KEYVAL, "MPI_Comm_set_attr with a freed keyval");
    MPI_CHECK(MPI_Comm_free(&c));
    /* A keyval of another kind is still refused by the free calls. */
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    MPI_CHECK(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, &kv, NULL));
    copy = kv;
    rc = MPI_Comm_free_keyval(&copy);
    CHECK_ERRCLASS(rc, MPI_ERR_KEYVAL, "MPI_Comm_free_keyval of a datatype keyval");
    MPI_CHECK(MPI_Type_free_keyval(&kv));
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    comm_case(0, 0);
    comm_case(1, 1);
    comm_free_case(2);
    type_case(3);
    if (getenv("MTEST_APTUS"))
        set_after_free();
    MPI_Finalize();
    return 0;
}
