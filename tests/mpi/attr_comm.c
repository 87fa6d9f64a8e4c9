/* Communicator attributes: keyvals with copy and delete callbacks counted on MPI_Comm_dup and
 * MPI_Comm_free, the predefined callbacks, replacement and deletion, a keyval freed while in
 * use, the deprecated MPI-1 interface, MPI_COMM_SELF's attributes deleted at MPI_Finalize, the
 * predefined attributes of MPI_COMM_WORLD and the errors of bad keyvals. */
#include "mtest.h"

#include <unistd.h>

static int rank, size;

/* Callback bookkeeping, per keyval slot (extra_state points at one of these). */
struct counts {
    int copies, deletes;
    int copy_flag;    /* what the copy callback answers */
    int last_deleted; /* value the delete callback last saw */
    int fail_delete;  /* the delete callback returns this code when non-zero */
};

static int copy_cb(MPI_Comm old, int keyval, void *extra, void *in, void *out, int *flag)
{
    struct counts *c = extra;
    c->copies++;
    /* The copy gets a distinct value: the original plus 1000. */
    *(void **)out = (void *)((intptr_t)in + 1000);
    *flag = c->copy_flag;
    return MPI_SUCCESS;
}

static int delete_cb(MPI_Comm comm, int keyval, void *value, void *extra)
{
    struct counts *c = extra;
    c->deletes++;
    c->last_deleted = (int)(intptr_t)value;
    return c->fail_delete ? c->fail_delete : MPI_SUCCESS;
}

static void *val(intptr_t v)
{
    return (void *)v;
}

static intptr_t get(MPI_Comm comm, int keyval, int *flag)
{
    void *v = NULL;
    MPI_CHECK(MPI_Comm_get_attr(comm, keyval, &v, flag));
    return (intptr_t)v;
}

static void test_dup_free(void)
{
    struct counts ck = { 0, 0, 1, 0, 0 }, nk = { 0, 0, 0, 0, 0 };
    int keep, nocopy, flag;
    MPI_Comm a, b, c;
    MPI_CHECK(MPI_Comm_create_keyval(copy_cb, delete_cb, &keep, &ck));
    MPI_CHECK(MPI_Comm_create_keyval(copy_cb, delete_cb, &nocopy, &nk));
    CHECK(keep != nocopy && keep != MPI_KEYVAL_INVALID, "keyvals %d %d", keep, nocopy);

    MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &a));
    CHECK(get(a, keep, &flag) == 0 && !flag, "attribute present before it was set");
    MPI_CHECK(MPI_Comm_set_attr(a, keep, val(7 + rank)));
    MPI_CHECK(MPI_Comm_set_attr(a, nocopy, val(9)));
    CHECK(get(a, keep, &flag) == 7 + rank && flag, "get after set: flag %d", flag);
    CHECK(get(a, nocopy, &flag) == 9 && flag, "get of second attribute: flag %d", flag);
    CHECK(ck.copies == 0 && ck.deletes == 0, "callbacks ran on set: %d %d", ck.copies, ck.deletes);

    /* Dup: each copy callback runs once; flag 0 keeps the attribute off the new communicator. */
    MPI_CHECK(MPI_Comm_dup(a, &b));
    CHECK(ck.copies == 1 && nk.copies == 1, "copies after dup: %d %d (want 1 1)", ck.copies, nk.copies);
    CHECK(get(b, keep, &flag) == 1007 + rank && flag, "copied value wrong (flag %d)", flag);
    get(b, nocopy, &flag);
    CHECK(!flag, "attribute with copy flag 0 was copied");
    CHECK(get(a, keep, &flag) == 7 + rank && flag, "original value changed by dup");

    /* A dup of the dup copies again (from the copy), and only the copied attribute. */
    MPI_CHECK(MPI_Comm_dup(b, &c));
    CHECK(ck.copies == 2 && nk.copies == 1, "copies after second dup: %d %d", ck.copies, nk.copies);
    CHECK(get(c, keep, &flag) == 2007 + rank && flag, "second-generation copy wrong");

    /* Replacing a value runs the delete callback on the old one. */
    MPI_CHECK(MPI_Comm_set_attr(c, keep, val(55)));
    CHECK(ck.deletes == 1 && ck.last_deleted == 2007 + rank, "replace: deletes %d last %d", ck.deletes,
          ck.last_deleted);
    CHECK(get(c, keep, &flag) == 55 && flag, "replaced value wrong");

    /* Free: one delete per attribute present. */
    MPI_CHECK(MPI_Comm_free(&c));
    CHECK(ck.deletes == 2 && ck.last_deleted == 55, "free c: deletes %d last %d", ck.deletes, ck.last_deleted);
    MPI_CHECK(MPI_Comm_free(&b));
    CHECK(ck.deletes == 3 && ck.last_deleted == 1007 + rank && nk.deletes == 0, "free b: %d %d %d", ck.deletes,
          ck.last_deleted, nk.deletes);

    /* Explicit delete, then a second delete of the missing attribute. */
    MPI_CHECK(MPI_Comm_delete_attr(a, nocopy));
    CHECK(nk.deletes == 1 && nk.last_deleted == 9, "delete_attr: %d %d", nk.deletes, nk.last_deleted);
    get(a, nocopy, &flag);
    CHECK(!flag, "attribute still there after delete");
    MPI_CHECK(MPI_Comm_delete_attr(a, nocopy));
    CHECK(nk.deletes == 1, "deleting a missing attribute ran the callback");

    /* Freeing a keyval still in use: the attribute lives on until its communicator goes. */
    MPI_CHECK(MPI_Comm_free_keyval(&keep));
    CHECK(keep == MPI_KEYVAL_INVALID, "free_keyval did not reset the keyval (%d)", keep);
    MPI_CHECK(MPI_Comm_dup(a, &b)); /* the freed keyval's attribute is still copied */
    CHECK(ck.copies == 3, "copy of a freed keyval's attribute: %d", ck.copies);
    MPI_CHECK(MPI_Comm_free(&b));
    CHECK(ck.deletes == 4 && ck.last_deleted == 1007 + rank, "free after keyval free: %d %d", ck.deletes,
          ck.last_deleted);
    MPI_CHECK(MPI_Comm_free(&a));
    CHECK(ck.deletes == 5 && ck.last_deleted == 7 + rank, "last delete: %d %d", ck.deletes, ck.last_deleted);
    MPI_CHECK(MPI_Comm_free_keyval(&nocopy));
}

static void test_predefined_callbacks(void)
{
    int kdup, knull, flag;
    MPI_Comm a, b;
    MPI_CHECK(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &kdup, NULL));
    MPI_CHECK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &knull, NULL));
    MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &a));
    static int payload = 42;
    MPI_CHECK(MPI_Comm_set_attr(a, kdup, &payload));
    MPI_CHECK(MPI_Comm_set_attr(a, knull, &payload));
    MPI_CHECK(MPI_Comm_dup(a, &b));
    void *v = NULL;
    MPI_CHECK(MPI_Comm_get_attr(b, kdup, &v, &flag));
    CHECK(flag && v == &payload, "MPI_COMM_DUP_FN did not copy the pointer (flag %d)", flag);
    MPI_CHECK(MPI_Comm_get_attr(b, knull, &v, &flag));
    CHECK(!flag, "MPI_COMM_NULL_COPY_FN copied the attribute");
    MPI_CHECK(MPI_Comm_free(&b));
    MPI_CHECK(MPI_Comm_free(&a));
    MPI_CHECK(MPI_Comm_free_keyval(&kdup));
    MPI_CHECK(MPI_Comm_free_keyval(&knull));
}

/* The deprecated MPI-1 interface works on the same keyvals. */
static int old_copy(MPI_Comm old, int keyval, void *extra, void *in, void *out, int *flag)
{
    ++*(int *)extra;
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}

static void test_deprecated(void)
{
    int k, calls = 0, flag;
    MPI_Comm a;
    MPI_CHECK(MPI_Keyval_create(old_copy, MPI_NULL_DELETE_FN, &k, &calls));
    MPI_CHECK(MPI_Attr_put(MPI_COMM_WORLD, k, val(123)));
    void *v = NULL;
    MPI_CHECK(MPI_Attr_get(MPI_COMM_WORLD, k, &v, &flag));
    CHECK(flag && v == val(123), "MPI_Attr_get: flag %d value %p", flag, v);
    MPI_CHECK(MPI_Comm_get_attr(MPI_COMM_WORLD, k, &v, &flag));
    CHECK(flag && v == val(123), "MPI_Comm_get_attr on an MPI_Attr_put value");
    MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &a));
    CHECK(calls == 1, "MPI-1 copy function ran %d times", calls);
    MPI_CHECK(MPI_Attr_get(a, k, &v, &flag));
    CHECK(flag && v == val(123), "copied MPI-1 attribute");
    MPI_CHECK(MPI_Comm_free(&a));
    MPI_CHECK(MPI_Attr_delete(MPI_COMM_WORLD, k));
    MPI_CHECK(MPI_Attr_get(MPI_COMM_WORLD, k, &v, &flag));
    CHECK(!flag, "MPI_Attr_delete left the attribute");
    MPI_CHECK(MPI_Keyval_free(&k));
    CHECK(k == MPI_KEYVAL_INVALID, "MPI_Keyval_free did not reset the keyval");
}

static void test_predefined_attrs(void)
{
    int flag, *p;
    MPI_CHECK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &p, &flag));
    CHECK(flag && *p >= 32767, "MPI_TAG_UB flag %d value %d", flag, flag ? *p : 0);
    MPI_CHECK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_HOST, &p, &flag));
    CHECK(flag && (*p == MPI_PROC_NULL || (*p >= 0 && *p < size)), "MPI_HOST flag %d value %d", flag, flag ? *p : 0);
    MPI_CHECK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_IO, &p, &flag));
    CHECK(flag && (*p == MPI_ANY_SOURCE || *p == rank || *p == MPI_PROC_NULL || (*p >= 0 && *p < size)),
          "MPI_IO flag %d value %d", flag, flag ? *p : 0);
    MPI_CHECK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &p, &flag));
    CHECK(!flag || *p == 0 || *p == 1, "MPI_WTIME_IS_GLOBAL value %d", *p);
    MPI_CHECK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &p, &flag));
    CHECK(!flag || *p >= size, "MPI_UNIVERSE_SIZE %d < world size %d", *p, size);
    MPI_CHECK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &p, &flag));
    CHECK(!flag || *p == 0, "MPI_APPNUM %d (one application: 0)", *p);
    MPI_CHECK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &p, &flag));
    CHECK(flag && *p >= MPI_ERR_LASTCODE, "MPI_LASTUSEDCODE flag %d value %d", flag, flag ? *p : 0);

    /* Aptus-specific expectations: mpiexec's universe without hosts or --universe-size is this
     * machine's CPUs, at least the job; no host. */
    if (getenv("MTEST_APTUS")) {
        long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
        int want = ncpu > size ? (int)ncpu : size;
        MPI_CHECK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &p, &flag));
        CHECK(flag && *p == want, "MPI_UNIVERSE_SIZE %d, want %d", flag ? *p : -1, want);
        MPI_CHECK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_HOST, &p, &flag));
        CHECK(*p == MPI_PROC_NULL, "MPI_HOST %d", *p);
        MPI_CHECK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &p, &flag));
        CHECK(flag && *p == 0, "MPI_APPNUM flag %d", flag);
    }
}

static int delete_errcode;
static int failing_delete(MPI_Comm comm, int keyval, void *value, void *extra)
{
    return delete_errcode;
}

static void test_errors(void)
{
    int rc, k, tk, flag;
    void *v;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);

    rc = MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_TAG_UB, val(5));
    CHECK_ERRCLASS(rc, MPI_ERR_KEYVAL, "set of predefined MPI_TAG_UB");
    rc = MPI_Comm_delete_attr(MPI_COMM_WORLD, MPI_TAG_UB);
    CHECK_ERRCLASS(rc, MPI_ERR_KEYVAL, "delete of predefined MPI_TAG_UB");
    k = MPI_TAG_UB;
    rc = MPI_Comm_free_keyval(&k);
    CHECK_ERRCLASS(rc, MPI_ERR_KEYVAL, "free of predefined MPI_TAG_UB");
    rc = MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_KEYVAL_INVALID, &v, &flag);
    CHECK_ERRCLASS(rc, MPI_ERR_KEYVAL, "get with MPI_KEYVAL_INVALID");
    rc = MPI_Comm_set_attr(MPI_COMM_WORLD, 987654, val(1));
    CHECK_ERRCLASS(rc, MPI_ERR_KEYVAL, "set with a made-up keyval");

    /* A datatype keyval on a communicator, and a communicator keyval on a datatype. */
    MPI_CHECK(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, &tk, NULL));
    rc = MPI_Comm_set_attr(MPI_COMM_WORLD, tk, val(1));
    CHECK_ERRCLASS(rc, MPI_ERR_KEYVAL, "datatype keyval on a communicator");
    rc = MPI_Comm_get_attr(MPI_COMM_WORLD, tk, &v, &flag);
    CHECK_ERRCLASS(rc, MPI_ERR_KEYVAL, "get with a datatype keyval on a communicator");
    rc = MPI_Comm_free_keyval(&tk);
    CHECK_ERRCLASS(rc, MPI_ERR_KEYVAL, "MPI_Comm_free_keyval of a datatype keyval");
    MPI_CHECK(MPI_Type_free_keyval(&tk));

    MPI_CHECK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &k, NULL));
    rc = MPI_Type_set_attr(MPI_INT, k, val(1));
    CHECK_ERRCLASS(rc, MPI_ERR_KEYVAL, "communicator keyval on a datatype");
    rc = MPI_Comm_set_attr(MPI_COMM_NULL, k, val(1));
    CHECK_ERRCLASS(rc, MPI_ERR_COMM, "set_attr on MPI_COMM_NULL");
    MPI_CHECK(MPI_Comm_free_keyval(&k));

    /* A delete callback that fails makes MPI_Comm_delete_attr fail; the attribute stays. */
    MPI_CHECK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, failing_delete, &k, NULL));
    MPI_CHECK(MPI_Comm_set_attr(MPI_COMM_SELF, k, val(3)));
    delete_errcode = MPI_ERR_OTHER;
    rc = MPI_Comm_delete_attr(MPI_COMM_SELF, k);
    CHECK_ERRCLASS(rc, MPI_ERR_OTHER, "failing delete callback");
    MPI_CHECK(MPI_Comm_get_attr(MPI_COMM_SELF, k, &v, &flag));
    CHECK(flag && v == val(3), "attribute gone after a failed delete");
    if (getenv("MTEST_APTUS")) { /* a return value that is no error code: Aptus MPI says MPI_ERR_OTHER */
        delete_errcode = -7;
        rc = MPI_Comm_delete_attr(MPI_COMM_SELF, k);
        CHECK_ERRCLASS(rc, MPI_ERR_OTHER, "delete callback returning -7");
        MPI_CHECK(MPI_Comm_get_attr(MPI_COMM_SELF, k, &v, &flag));
        CHECK(flag && v == val(3), "attribute gone after a delete callback returned -7");
    }
    delete_errcode = MPI_SUCCESS;
    MPI_CHECK(MPI_Comm_delete_attr(MPI_COMM_SELF, k));
    MPI_CHECK(MPI_Comm_free_keyval(&k));

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
}

/* Attributes on MPI_COMM_SELF are deleted at MPI_Finalize, newest first (MPI 4.1, 11.2.2). */
static int self_order[2], self_n;
static int self_delete(MPI_Comm comm, int keyval, void *value, void *extra)
{
    if (self_n < 2)
        self_order[self_n] = (int)(intptr_t)value;
    self_n++;
    return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    test_predefined_attrs();
    test_dup_free();
    test_predefined_callbacks();
    test_deprecated();
    test_errors();

    int k1, k2;
    MPI_CHECK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, self_delete, &k1, NULL));
    MPI_CHECK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, self_delete, &k2, NULL));
    MPI_CHECK(MPI_Comm_set_attr(MPI_COMM_SELF, k1, val(1)));
    MPI_CHECK(MPI_Comm_set_attr(MPI_COMM_SELF, k2, val(2)));
    MPI_CHECK(MPI_Comm_free_keyval(&k1)); /* still in use by MPI_COMM_SELF */
    MPI_CHECK(MPI_Comm_free_keyval(&k2));
    CHECK(self_n == 0, "delete ran before MPI_Finalize");
    MPI_Finalize();
    if (self_n != 2 || self_order[0] != 2 || self_order[1] != 1) {
        fprintf(stderr, "FAIL %s: MPI_COMM_SELF attributes at MPI_Finalize: %d deletes, order %d %d (want 2: 2 1)\n",
                __FILE__, self_n, self_order[0], self_order[1]);
        return 1;
    }
    return 0;
}
