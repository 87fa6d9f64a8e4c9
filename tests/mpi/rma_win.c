/* RMA window objects (MPI 4.1 chapter 12.2 and 12.7): the four creation flavors (MPI_Win_create,
 * MPI_Win_allocate, MPI_Win_allocate_shared with MPI_Win_shared_query, MPI_Win_create_dynamic with
 * MPI_Win_attach/detach), their attributes (MPI_WIN_BASE, SIZE, DISP_UNIT, CREATE_FLAVOR, MODEL), the
 * window's group (also of a window over a reordered sub-communicator), names, info hints, user keyvals
 * with their delete callback, and user error handlers. Every data movement is checked against the values
 * a serial model of the job computes; neighbours are taken modulo the size, so that any size works. */
#include "rma_common.h"

#define MPI41 (MPI_VERSION > 4 || (MPI_VERSION == 4 && MPI_SUBVERSION >= 1))

static void *attr_ptr(MPI_Win win, int key, const char *what)
{
    void *p = NULL;
    int flag = 0;
    MPI_CHECK(MPI_Win_get_attr(win, key, &p, &flag));
    CHECK(flag, "%s: attribute not set", what);
    return p;
}

/* The predefined attributes of a window. base is checked only where want_base is not NULL (a zero-size
 * window may have any base). */
static void check_attrs(MPI_Win win, void *want_base, MPI_Aint want_size, int want_du, int want_flavor,
                        const char *what)
{
    void *base = attr_ptr(win, MPI_WIN_BASE, what);
    MPI_Aint sz = *(MPI_Aint *)attr_ptr(win, MPI_WIN_SIZE, what);
    int du = *(int *)attr_ptr(win, MPI_WIN_DISP_UNIT, what);
    int flavor = *(int *)attr_ptr(win, MPI_WIN_CREATE_FLAVOR, what);
    int model = *(int *)attr_ptr(win, MPI_WIN_MODEL, what);
    if (want_base)
        CHECK(base == want_base, "%s: MPI_WIN_BASE %p, want %p", what, base, want_base);
    CHECK(sz == want_size, "%s: MPI_WIN_SIZE %ld, want %ld", what, (long)sz, (long)want_size);
    if (want_du > 0)
        CHECK(du == want_du, "%s: MPI_WIN_DISP_UNIT %d, want %d", what, du, want_du);
    CHECK(flavor == want_flavor, "%s: MPI_WIN_CREATE_FLAVOR %d, want %d", what, flavor, want_flavor);
    CHECK(model == MPI_WIN_UNIFIED || model == MPI_WIN_SEPARATE, "%s: MPI_WIN_MODEL %d is neither UNIFIED nor SEPARATE",
          what, model);
}

/* MPI_Win_create with a different size at every rank (zero at every fourth) and MPI_Win_allocate: the
 * attributes, then a Put/Get round through the neighbours. */
static void test_create_allocate(void)
{
    int n = rank % 4 == 3 ? 0 : 16 + rank;
    int *buf = mtest_malloc(sizeof(int) * 32);
    MPI_Win win;
    MPI_CHECK(MPI_Win_create(buf, (MPI_Aint)(n * sizeof(int)), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    check_attrs(win, n ? buf : NULL, (MPI_Aint)(n * sizeof(int)), (int)sizeof(int), MPI_WIN_FLAVOR_CREATE,
                "Win_create");
    MPI_CHECK(MPI_Win_free(&win));
    CHECK(win == MPI_WIN_NULL, "Win_free did not set MPI_WIN_NULL");

    int *base = NULL;
    MPI_Aint bytes = (MPI_Aint)(sizeof(double) * 8);
    MPI_CHECK(MPI_Win_allocate(bytes, sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    CHECK(base != NULL, "Win_allocate returned a NULL base for %ld bytes", (long)bytes);
    check_attrs(win, base, bytes, (int)sizeof(double), MPI_WIN_FLAVOR_ALLOCATE, "Win_allocate");
    double *d = (double *)base, src[8], got[8];
    for (int i = 0; i < 8; i++) {
        d[i] = -1.0;
        src[i] = val(rank, i) + 0.5;
    }
    MPI_CHECK(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
    MPI_CHECK(MPI_Put(src, 8, MPI_DOUBLE, right, 0, 8, MPI_DOUBLE, win));
    MPI_CHECK(MPI_Win_fence(0, win));
    for (int i = 0; i < 8; i++)
        CHECK(d[i] == val(left, i) + 0.5, "Win_allocate: [%d] = %g after Put from %d", i, d[i], left);
    MPI_CHECK(MPI_Get(got, 8, MPI_DOUBLE, right, 0, 8, MPI_DOUBLE, win));
    MPI_CHECK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    for (int i = 0; i < 8; i++)
        CHECK(got[i] == src[i], "Win_allocate: Get [%d] = %g, want %g", i, got[i], src[i]);
    MPI_CHECK(MPI_Win_free(&win));

    /* a zero-size allocation at some ranks */
    MPI_CHECK(MPI_Win_allocate(rank % 2 ? 0 : 64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    check_attrs(win, NULL, rank % 2 ? 0 : 64, 1, MPI_WIN_FLAVOR_ALLOCATE, "Win_allocate of 0 bytes at odd ranks");
    MPI_CHECK(MPI_Win_free(&win));

#if MPI_VERSION >= 4
    /* the large-count forms: the displacement unit is an MPI_Aint there, the attribute stays an int */
    MPI_CHECK(
        MPI_Win_create_c(buf, (MPI_Aint)(n * sizeof(int)), (MPI_Aint)sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    check_attrs(win, n ? buf : NULL, (MPI_Aint)(n * sizeof(int)), (int)sizeof(int), MPI_WIN_FLAVOR_CREATE,
                "Win_create_c");
    MPI_CHECK(MPI_Win_free(&win));
    MPI_CHECK(MPI_Win_allocate_c(48, 12, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    check_attrs(win, base, 48, 12, MPI_WIN_FLAVOR_ALLOCATE, "Win_allocate_c");
    MPI_CHECK(MPI_Win_free(&win));
#endif
    free(buf);
}

/* The group of a window is the group of its communicator: MPI_COMM_WORLD, and a sub-communicator whose
 * ranks run backwards, where a Put to the window's rank r must reach the process of communicator rank r. */
static void test_group(void)
{
    int buf[4] = { -1, -1, -1, -1 };
    MPI_Win win;
    MPI_Group wg, cg;
    int cmp = -1;
    MPI_CHECK(MPI_Win_create(buf, sizeof buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_CHECK(MPI_Win_get_group(win, &wg));
    MPI_CHECK(MPI_Comm_group(MPI_COMM_WORLD, &cg));
    MPI_CHECK(MPI_Group_compare(wg, cg, &cmp));
    CHECK(cmp == MPI_IDENT, "Win_get_group of a world window: compare gave %d, want MPI_IDENT", cmp);
    MPI_CHECK(MPI_Group_free(&wg));
    MPI_CHECK(MPI_Group_free(&cg));
    MPI_CHECK(MPI_Win_free(&win));

    MPI_Comm sub;
    int srank, ssize;
    MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, size - rank, &sub));
    MPI_CHECK(MPI_Comm_rank(sub, &srank));
    MPI_CHECK(MPI_Comm_size(sub, &ssize));
    MPI_CHECK(MPI_Win_create(buf, sizeof buf, sizeof(int), MPI_INFO_NULL, sub, &win));
    MPI_CHECK(MPI_Win_get_group(win, &wg));
    MPI_CHECK(MPI_Comm_group(sub, &cg));
    MPI_CHECK(MPI_Group_compare(wg, cg, &cmp));
    CHECK(cmp == MPI_IDENT, "Win_get_group of a sub-communicator window: compare gave %d, want MPI_IDENT", cmp);
    int gs = -1, gr = -1;
    MPI_CHECK(MPI_Group_size(wg, &gs));
    MPI_CHECK(MPI_Group_rank(wg, &gr));
    CHECK(gs == ssize && gr == srank, "window group: size %d rank %d, want %d %d", gs, gr, ssize, srank);

    /* the world rank of the window rank to our left, by the window's group */
    MPI_Group world;
    MPI_CHECK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    int sleft = (srank - 1 + ssize) % ssize, wleft = -1;
    MPI_CHECK(MPI_Group_translate_ranks(wg, 1, &sleft, world, &wleft));
    MPI_CHECK(MPI_Group_free(&world));
    MPI_CHECK(MPI_Group_free(&wg));
    MPI_CHECK(MPI_Group_free(&cg));
    /* the ranks run backwards: the window's left neighbour has the next higher world rank of our parity */
    int want_wleft = ssize == 1 ? rank : (srank == 0 ? rank % 2 : rank + 2);
    CHECK(wleft == want_wleft, "sub-communicator window: left neighbour is world rank %d, want %d", wleft, want_wleft);

    MPI_CHECK(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
    MPI_CHECK(MPI_Put(&rank, 1, MPI_INT, (srank + 1) % ssize, 1, 1, MPI_INT, win));
    MPI_CHECK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    CHECK(buf[1] == wleft && buf[0] == -1 && buf[2] == -1, "sub-communicator window: got %d %d %d, want -1 %d -1",
          buf[0], buf[1], buf[2], wleft);
    MPI_CHECK(MPI_Win_free(&win));
    MPI_CHECK(MPI_Comm_free(&sub));
}

static void test_name(void)
{
    char name[MPI_MAX_OBJECT_NAME];
    int len = -1;
    int *base;
    MPI_Win win;
    MPI_CHECK(MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    memset(name, 'x', sizeof name);
    MPI_CHECK(MPI_Win_get_name(win, name, &len));
    CHECK(len == 0 && name[0] == '\0', "a new window has name \"%.*s\" (length %d), want \"\"", len > 0 ? len : 0, name,
          len);
    char want[MPI_MAX_OBJECT_NAME];
    snprintf(want, sizeof want, "rma window of rank %d", rank);
    MPI_CHECK(MPI_Win_set_name(win, want));
    MPI_CHECK(MPI_Win_get_name(win, name, &len));
    CHECK(len == (int)strlen(want) && strcmp(name, want) == 0, "Win_get_name \"%s\" (%d), want \"%s\"", name, len,
          want);
    /* the longest name there is room for, then a shorter one replacing it */
    memset(want, 'a' + rank % 26, sizeof want - 1);
    want[sizeof want - 1] = '\0';
    MPI_CHECK(MPI_Win_set_name(win, want));
    MPI_CHECK(MPI_Win_get_name(win, name, &len));
    CHECK(len == MPI_MAX_OBJECT_NAME - 1 && strcmp(name, want) == 0, "longest window name came back with length %d",
          len);
    MPI_CHECK(MPI_Win_set_name(win, "w2"));
    MPI_CHECK(MPI_Win_get_name(win, name, &len));
    CHECK(len == 2 && strcmp(name, "w2") == 0, "renamed window: \"%s\" (%d)", name, len);
    MPI_CHECK(MPI_Win_free(&win));
}

/* A value of a hint the implementation reports must be a valid value of that hint. */
static void check_hint_values(MPI_Info info, const char *what)
{
    static const char *const bools[] = { "no_locks", "same_size", "same_disp_unit", "alloc_shared_noncontig" };
    char v[MPI_MAX_INFO_VAL + 1];
    int flag = 0;
    for (size_t k = 0; k < sizeof bools / sizeof bools[0]; k++) {
        MPI_CHECK(MPI_Info_get(info, bools[k], MPI_MAX_INFO_VAL, v, &flag));
        if (flag)
            CHECK(strcmp(v, "true") == 0 || strcmp(v, "false") == 0, "%s: hint %s = \"%s\"", what, bools[k], v);
    }
    MPI_CHECK(MPI_Info_get(info, "accumulate_ops", MPI_MAX_INFO_VAL, v, &flag));
    if (flag)
        CHECK(strcmp(v, "same_op") == 0 || strcmp(v, "same_op_no_op") == 0, "%s: accumulate_ops = \"%s\"", what, v);
    MPI_CHECK(MPI_Info_get(info, "accumulate_ordering", MPI_MAX_INFO_VAL, v, &flag));
    if (flag && strcmp(v, "none") != 0) {
        /* a comma-separated list of rar, raw, war, waw */
        for (const char *tok = v; *tok;) {
            size_t len = strcspn(tok, ",");
            CHECK(len == 3 && (strncmp(tok, "rar", 3) == 0 || strncmp(tok, "raw", 3) == 0 ||
                               strncmp(tok, "war", 3) == 0 || strncmp(tok, "waw", 3) == 0),
                  "%s: accumulate_ordering = \"%s\"", what, v);
            tok += len + (tok[len] == ',');
        }
    }
}

static void test_info(void)
{
    MPI_Info in, used, used2;
    int buf[8];
    MPI_Win win;
    MPI_CHECK(MPI_Info_create(&in));
    MPI_CHECK(MPI_Info_set(in, "no_locks", "false"));
    MPI_CHECK(MPI_Info_set(in, "accumulate_ordering", "rar,waw"));
    MPI_CHECK(MPI_Info_set(in, "accumulate_ops", "same_op_no_op"));
    MPI_CHECK(MPI_Info_set(in, "same_size", "true"));
    MPI_CHECK(MPI_Info_set(in, "mtest_unknown_hint", "ignored"));
    MPI_CHECK(MPI_Win_create(buf, sizeof buf, sizeof(int), in, MPI_COMM_WORLD, &win));
    MPI_CHECK(MPI_Info_free(&in));

    MPI_CHECK(MPI_Win_get_info(win, &used));
    CHECK(used != MPI_INFO_NULL, "Win_get_info returned MPI_INFO_NULL");
    int nkeys = -1;
    MPI_CHECK(MPI_Info_get_nkeys(used, &nkeys));
    CHECK(nkeys >= 0, "Win_get_info: %d keys", nkeys);
    check_hint_values(used, "Win_get_info after Win_create");
    /* the info returned is a new object: changing it does not change the window's hints */
    char before[MPI_MAX_INFO_VAL + 1], after[MPI_MAX_INFO_VAL + 1];
    int had = 0, has = 0;
    MPI_CHECK(MPI_Info_get(used, "no_locks", MPI_MAX_INFO_VAL, before, &had));
    MPI_CHECK(MPI_Info_set(used, "no_locks", "true"));
    MPI_CHECK(MPI_Info_free(&used));
    CHECK(used == MPI_INFO_NULL, "Info_free did not set MPI_INFO_NULL");
    MPI_CHECK(MPI_Win_get_info(win, &used2));
    MPI_CHECK(MPI_Info_get(used2, "no_locks", MPI_MAX_INFO_VAL, after, &has));
    CHECK(had == has && (!had || strcmp(before, after) == 0),
          "changing the info from Win_get_info changed the window: no_locks %s\"%s\" -> %s\"%s\"", had ? "" : "unset ",
          had ? before : "", has ? "" : "unset ", has ? after : "");
    MPI_CHECK(MPI_Info_free(&used2));

    /* new hints on a live window, unknown ones among them, then the window still works under a lock */
    MPI_CHECK(MPI_Info_create(&in));
    MPI_CHECK(MPI_Info_set(in, "accumulate_ordering", "none"));
    MPI_CHECK(MPI_Info_set(in, "mtest_other_unknown_hint", "1"));
    MPI_CHECK(MPI_Win_set_info(win, in));
    MPI_CHECK(MPI_Info_free(&in));
    MPI_CHECK(MPI_Win_get_info(win, &used));
    check_hint_values(used, "Win_get_info after Win_set_info");
    MPI_CHECK(MPI_Info_free(&used));

    local_begin(win);
    for (int i = 0; i < 8; i++)
        buf[i] = val(rank, i);
    local_end(win);
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    int got[8];
    MPI_CHECK(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
    MPI_CHECK(MPI_Get(got, 8, MPI_INT, right, 0, 8, MPI_INT, win));
    MPI_CHECK(MPI_Win_unlock(right, win));
    for (int i = 0; i < 8; i++)
        CHECK(got[i] == val(right, i), "Get after Win_set_info: [%d] = %d, want %d", i, got[i], val(right, i));
    MPI_CHECK(MPI_Win_free(&win));
}

/* --- user attributes ---------------------------------------------------------------------------------- */
static int del_calls, del_bad;
static void *del_last;
static MPI_Win del_win;
static int del_key;
static char extra_marker;

static int del_fn(MPI_Win win, int keyval, void *attribute_val, void *extra_state)
{
    del_calls++;
    del_last = attribute_val;
    del_win = win;
    if (extra_state != &extra_marker || keyval != del_key)
        del_bad++;
    return MPI_SUCCESS;
}

static void test_keyval(void)
{
    int *base, v1 = 1, v2 = 2, v3 = 3, v4 = 4, key, key2, flag = -1;
    void *p = NULL;
    MPI_Win win;
    MPI_CHECK(MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    MPI_CHECK(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, del_fn, &key, &extra_marker));
    MPI_CHECK(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, MPI_WIN_NULL_DELETE_FN, &key2, NULL));
    CHECK(key != key2, "two window keyvals with the same value %d", key);
    del_key = key;

    MPI_CHECK(MPI_Win_get_attr(win, key, &p, &flag));
    CHECK(!flag, "Win_get_attr of a keyval never set: flag %d", flag);
    MPI_CHECK(MPI_Win_set_attr(win, key, &v1));
    MPI_CHECK(MPI_Win_set_attr(win, key2, &v4));
    MPI_CHECK(MPI_Win_get_attr(win, key, &p, &flag));
    CHECK(flag && p == &v1, "Win_get_attr: flag %d value %p, want %p", flag, p, (void *)&v1);
    CHECK(del_calls == 0, "delete callback called %d times before any delete", del_calls);

    /* replacing a value deletes the old one */
    MPI_CHECK(MPI_Win_set_attr(win, key, &v2));
    CHECK(del_calls == 1 && del_last == &v1 && del_win == win, "replacing: %d delete calls, last value %p (want %p)",
          del_calls, del_last, (void *)&v1);
    MPI_CHECK(MPI_Win_get_attr(win, key, &p, &flag));
    CHECK(flag && p == &v2, "after replacing: flag %d value %p", flag, p);

    MPI_CHECK(MPI_Win_delete_attr(win, key));
    CHECK(del_calls == 2 && del_last == &v2, "Win_delete_attr: %d delete calls, last value %p (want %p)", del_calls,
          del_last, (void *)&v2);
    MPI_CHECK(MPI_Win_get_attr(win, key, &p, &flag));
    CHECK(!flag, "Win_get_attr after Win_delete_attr: flag %d", flag);
    MPI_CHECK(MPI_Win_get_attr(win, key2, &p, &flag));
    CHECK(flag && p == &v4, "the other keyval's attribute: flag %d value %p", flag, p);

    /* a keyval freed while its attribute is still set: the attribute stays until the window is freed */
    MPI_CHECK(MPI_Win_set_attr(win, key, &v3));
    int freed = key;
    MPI_CHECK(MPI_Win_free_keyval(&freed));
    CHECK(freed == MPI_KEYVAL_INVALID, "Win_free_keyval left %d, want MPI_KEYVAL_INVALID", freed);
    CHECK(del_calls == 2, "Win_free_keyval called the delete callback");
    MPI_Win old = win;
    MPI_CHECK(MPI_Win_free(&win));
    CHECK(del_calls == 3 && del_last == &v3 && del_win == old,
          "Win_free: %d delete calls (want 3), last value %p (want %p), window %s", del_calls, del_last, (void *)&v3,
          del_win == old ? "right" : "wrong");
    CHECK(del_bad == 0, "the delete callback got a wrong keyval or extra_state %d times", del_bad);
    MPI_CHECK(MPI_Win_free_keyval(&key2));
}

/* --- user error handlers ------------------------------------------------------------------------------ */
static int eh_calls, eh_code;
static MPI_Win eh_win;

static void eh_fn(MPI_Win *win, int *code, ...)
{
    eh_calls++;
    eh_code = *code;
    eh_win = *win;
}

static void test_errhandler(void)
{
    int buf[4];
    MPI_Win win;
    MPI_Errhandler eh, cur;
    MPI_CHECK(MPI_Win_create(buf, sizeof buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_CHECK(MPI_Win_get_errhandler(win, &cur));
    CHECK(cur == MPI_ERRORS_ARE_FATAL, "the error handler of a new window is not MPI_ERRORS_ARE_FATAL");
    MPI_CHECK(MPI_Errhandler_free(&cur));

    MPI_CHECK(MPI_Win_create_errhandler(eh_fn, &eh));
    MPI_CHECK(MPI_Win_set_errhandler(win, eh));
    MPI_CHECK(MPI_Win_get_errhandler(win, &cur));
    CHECK(cur == eh, "Win_get_errhandler did not return the handler just set");
    MPI_CHECK(MPI_Errhandler_free(&cur));
    /* freeing the handle leaves the handler on the window */
    MPI_CHECK(MPI_Errhandler_free(&eh));
    CHECK(eh == MPI_ERRHANDLER_NULL, "Errhandler_free did not set MPI_ERRHANDLER_NULL");

    MPI_CHECK(MPI_Win_call_errhandler(win, MPI_ERR_OTHER));
    CHECK(eh_calls == 1 && eh_code == MPI_ERR_OTHER && eh_win == win,
          "Win_call_errhandler: %d calls, code %d (want %d), window %s", eh_calls, eh_code, MPI_ERR_OTHER,
          eh_win == win ? "right" : "wrong");
    int cls, code;
    MPI_CHECK(MPI_Add_error_class(&cls));
    MPI_CHECK(MPI_Add_error_code(cls, &code));
    MPI_CHECK(MPI_Win_call_errhandler(win, code));
    CHECK(eh_calls == 2 && eh_code == code, "Win_call_errhandler with a user code: %d calls, code %d (want %d)",
          eh_calls, eh_code, code);

    /* an error raised by an RMA call goes to the window's handler, and the call returns the same code */
    MPI_CHECK(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
    int rc = MPI_Put(buf, 1, MPI_INT, size, 0, 1, MPI_INT, win);
    CHECK(eh_calls == 3, "Put to rank %d: the window's handler was called %d times, want once", size, eh_calls - 2);
    CHECK(rc == eh_code, "Put to rank %d returned %d, the handler saw %d", size, rc, eh_code);
    CHECK_ERRCLASS(rc, MPI_ERR_RANK, "Put to a rank outside the window's group");
    MPI_CHECK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));

    MPI_CHECK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    MPI_CHECK(MPI_Win_get_errhandler(win, &cur));
    CHECK(cur == MPI_ERRORS_RETURN, "Win_get_errhandler after setting MPI_ERRORS_RETURN");
    MPI_CHECK(MPI_Errhandler_free(&cur));
    MPI_CHECK(MPI_Win_call_errhandler(win, MPI_ERR_OTHER));
    CHECK(eh_calls == 3, "the user handler was called after it was replaced");
    MPI_CHECK(MPI_Win_free(&win));
}

/* --- shared memory windows ---------------------------------------------------------------------------- */
/* Segment sizes (in ints) and displacement units of the shared window: rank 1 contributes nothing. */
static int seg_ints(int r)
{
    return r == 1 ? 0 : 8 + 4 * r;
}

static int seg_du(int r)
{
    return (int)sizeof(int) * (1 + r % 2);
}

static void test_shared(int noncontig)
{
    const char *what = noncontig ? "shared window (alloc_shared_noncontig)" : "shared window";
    MPI_Comm shm;
    int sr, ss;
    MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shm));
    MPI_CHECK(MPI_Comm_rank(shm, &sr));
    MPI_CHECK(MPI_Comm_size(shm, &ss));
    int sright = (sr + 1) % ss, sleft = (sr - 1 + ss) % ss;
    MPI_Info info = MPI_INFO_NULL;
    if (noncontig) {
        MPI_CHECK(MPI_Info_create(&info));
        MPI_CHECK(MPI_Info_set(info, "alloc_shared_noncontig", "true"));
    }
    MPI_Aint mysize = (MPI_Aint)(seg_ints(sr) * sizeof(int));
    int *mine = NULL;
    MPI_Win win;
#if MPI_VERSION >= 4
    if (noncontig)
        MPI_CHECK(MPI_Win_allocate_shared_c(mysize, seg_du(sr), info, shm, &mine, &win));
    else
#endif
        MPI_CHECK(MPI_Win_allocate_shared(mysize, seg_du(sr), info, shm, &mine, &win));
    if (info != MPI_INFO_NULL)
        MPI_CHECK(MPI_Info_free(&info));
    check_attrs(win, mysize ? mine : NULL, mysize, seg_du(sr), MPI_WIN_FLAVOR_SHARED, what);

    /* every segment, by shared_query; contiguous unless alloc_shared_noncontig was given */
    int **seg = mtest_malloc(sizeof(int *) * (size_t)ss);
    char *base0 = NULL;
    MPI_Aint before = 0;
    for (int q = 0; q < ss; q++) {
        MPI_Aint qs = -1;
        int qdu = -1;
#if MPI_VERSION >= 4
        if (noncontig) {
            MPI_Aint qdu_c = -1;
            MPI_CHECK(MPI_Win_shared_query_c(win, q, &qs, &qdu_c, &seg[q]));
            qdu = (int)qdu_c;
        } else
#endif
            MPI_CHECK(MPI_Win_shared_query(win, q, &qs, &qdu, &seg[q]));
        MPI_Aint want = (MPI_Aint)(seg_ints(q) * sizeof(int));
        /* Open MPI 4.1 reports the page-rounded size of a non-contiguous segment */
        int rounded = noncontig && mtest_known_bug("shared_noncontig_size") && qs > want;
        CHECK((qs == want || rounded) && qdu == seg_du(q),
              "%s: shared_query(%d) gave size %ld disp_unit %d, want %ld %d", what, q, (long)qs, qdu,
              (long)(seg_ints(q) * sizeof(int)), seg_du(q));
        if (q == sr && qs > 0)
            CHECK(seg[q] == mine, "%s: shared_query of my own rank gave %p, Win_allocate_shared %p", what,
                  (void *)seg[q], (void *)mine);
        if (q == 0)
            base0 = (char *)seg[0];
        else if (!noncontig && qs > 0)
            CHECK((char *)seg[q] == base0 + before, "%s: segment %d at offset %ld from segment 0, want %ld", what, q,
                  (long)((char *)seg[q] - base0), (long)before);
        before += qs;
    }
    /* MPI_PROC_NULL: the segment of the lowest rank with a non-zero size (rank 0 here) */
    {
        MPI_Aint qs = -1;
        int qdu = -1;
        void *qb = NULL;
        MPI_CHECK(MPI_Win_shared_query(win, MPI_PROC_NULL, &qs, &qdu, &qb));
        MPI_Aint want = (MPI_Aint)(seg_ints(0) * sizeof(int));
        int rounded = noncontig && mtest_known_bug("shared_noncontig_size") && qs > want;
        CHECK(qb == seg[0] && (qs == want || rounded) && qdu == seg_du(0),
              "%s: shared_query(MPI_PROC_NULL) gave %p size %ld disp_unit %d, want segment 0", what, qb, (long)qs, qdu);
    }

    MPI_CHECK(MPI_Win_lock_all(MPI_MODE_NOCHECK, win));
    /* direct stores into the own segment, direct loads of all segments */
    for (int i = 0; i < seg_ints(sr); i++)
        mine[i] = val(sr, i);
    MPI_CHECK(MPI_Win_sync(win));
    MPI_CHECK(MPI_Barrier(shm));
    MPI_CHECK(MPI_Win_sync(win));
    for (int q = 0; q < ss; q++)
        for (int i = 0; i < seg_ints(q); i++)
            CHECK(seg[q][i] == val(q, i), "%s: load of segment %d [%d] = %d, want %d", what, q, i, seg[q][i],
                  val(q, i));
    MPI_CHECK(MPI_Barrier(shm));
    /* direct stores into the right neighbour's segment */
    for (int i = 0; i < seg_ints(sright); i++)
        seg[sright][i] = -val(sr, i);
    MPI_CHECK(MPI_Win_sync(win));
    MPI_CHECK(MPI_Barrier(shm));
    MPI_CHECK(MPI_Win_sync(win));
    for (int i = 0; i < seg_ints(sr); i++)
        CHECK(mine[i] == -val(sleft, i), "%s: [%d] = %d after the store of %d, want %d", what, i, mine[i], sleft,
              -val(sleft, i));
    MPI_CHECK(MPI_Barrier(shm));
    /* RMA on the shared window: target_disp 1 is scaled by the target's disp_unit */
    if (seg_ints(sright) > 0) {
        int v = 777 + sr;
        MPI_CHECK(MPI_Put(&v, 1, MPI_INT, sright, 1, 1, MPI_INT, win));
        MPI_CHECK(MPI_Win_flush(sright, win));
    }
    MPI_CHECK(MPI_Barrier(shm));
    MPI_CHECK(MPI_Win_sync(win));
    if (seg_ints(sr) > 0) {
        int at = seg_du(sr) / (int)sizeof(int);
        CHECK(mine[at] == 777 + sleft, "%s: Put to disp 1 landed wrong: [%d] = %d, want %d", what, at, mine[at],
              777 + sleft);
    }
    MPI_CHECK(MPI_Win_unlock_all(win));
    free(seg);
    MPI_CHECK(MPI_Win_free(&win));
    MPI_CHECK(MPI_Comm_free(&shm));
}

/* Before MPI 4.1 only shared windows may be queried; since then windows of MPI_Win_create and
 * MPI_Win_allocate may be too (size 0 where the memory is not shared), dynamic ones still may not. */
static void test_shared_query_other_flavors(void)
{
    int buf[4];
    MPI_Win win;
    MPI_Aint qs = -1;
    int qdu = -1;
    void *qb = NULL;
    MPI_CHECK(MPI_Win_create(buf, sizeof buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_CHECK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    int rc = MPI_Win_shared_query(win, rank, &qs, &qdu, &qb);
#if MPI41
    MPI_CHECK(rc);
    CHECK(qs == 0 || (qs == (MPI_Aint)sizeof buf && qb == buf && qdu == (int)sizeof(int)),
          "shared_query of my own created window: size %ld base %p disp_unit %d", (long)qs, qb, qdu);
#else
    CHECK_ERRCLASS(rc, MPI_ERR_RMA_FLAVOR, "MPI_Win_shared_query of a window of MPI_Win_create (MPI < 4.1)");
#endif
    MPI_CHECK(MPI_Win_free(&win));
}

/* --- dynamic windows ---------------------------------------------------------------------------------- */
static void test_dynamic(void)
{
    MPI_Win win;
    MPI_CHECK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    check_attrs(win, NULL, 0, 0, MPI_WIN_FLAVOR_DYNAMIC, "Win_create_dynamic");
    CHECK(attr_ptr(win, MPI_WIN_BASE, "dynamic") == MPI_BOTTOM, "a dynamic window's MPI_WIN_BASE is not MPI_BOTTOM");

    enum { NA = 16, NB = 8 };
    int *a = mtest_malloc(NA * sizeof(int)), *b = mtest_malloc(NB * sizeof(int));
    MPI_Aint *addr = mtest_malloc(sizeof(MPI_Aint) * (size_t)size), my;
    MPI_CHECK(MPI_Win_attach(win, a, NA * sizeof(int)));
    local_begin(win);
    for (int i = 0; i < NA; i++)
        a[i] = -1;
    local_end(win);
    MPI_CHECK(MPI_Get_address(a, &my));
    MPI_CHECK(MPI_Allgather(&my, 1, MPI_AINT, addr, 1, MPI_AINT, MPI_COMM_WORLD));

    /* target displacements are addresses at the target (relative to MPI_BOTTOM) */
    int src[8], got[8], one[4] = { 1, 1, 1, 1 };
    for (int i = 0; i < 8; i++)
        src[i] = val(rank, i);
    MPI_CHECK(MPI_Win_lock_all(0, win));
    MPI_CHECK(MPI_Put(src, 8, MPI_INT, right, addr[right], 8, MPI_INT, win));
    MPI_CHECK(
        MPI_Accumulate(one, 4, MPI_INT, right, MPI_Aint_add(addr[right], 10 * sizeof(int)), 4, MPI_INT, MPI_SUM, win));
    MPI_CHECK(MPI_Win_flush(right, win));
    MPI_CHECK(MPI_Get(got, 8, MPI_INT, right, addr[right], 8, MPI_INT, win));
    MPI_CHECK(MPI_Win_unlock_all(win));
    for (int i = 0; i < 8; i++)
        CHECK(got[i] == src[i], "dynamic window: Get [%d] = %d, want %d", i, got[i], src[i]);
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    local_begin(win);
    for (int i = 0; i < NA; i++) {
        int want = i < 8 ? val(left, i) : (i >= 10 && i < 14 ? 0 : -1);
        CHECK(a[i] == want, "dynamic window: [%d] = %d, want %d", i, a[i], want);
    }
    local_end(win);

    /* a second region; then the first detached while the second stays usable */
    MPI_CHECK(MPI_Win_attach(win, b, NB * sizeof(int)));
    local_begin(win);
    for (int i = 0; i < NB; i++)
        b[i] = -2;
    local_end(win);
    MPI_CHECK(MPI_Get_address(b, &my));
    MPI_CHECK(MPI_Allgather(&my, 1, MPI_AINT, addr, 1, MPI_AINT, MPI_COMM_WORLD));
    MPI_CHECK(MPI_Win_detach(win, a));
    MPI_CHECK(MPI_Win_lock_all(0, win));
    MPI_CHECK(MPI_Put(src, 4, MPI_INT, right, MPI_Aint_add(addr[right], 2 * sizeof(int)), 4, MPI_INT, win));
    MPI_CHECK(MPI_Win_unlock_all(win));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    local_begin(win);
    for (int i = 0; i < NB; i++) {
        int want = i >= 2 && i < 6 ? val(left, i - 2) : -2;
        CHECK(b[i] == want, "dynamic window, second region: [%d] = %d, want %d", i, b[i], want);
    }
    local_end(win);

    /* regions come and go at a target while origins write to one that stays: an origin never
     * sees the region it writes to missing (the table is rewritten on every detach) */
    int churn[4];
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_CHECK(MPI_Win_lock_all(0, win));
    for (int it = 0; it < 5000; it++) {
        MPI_CHECK(MPI_Win_attach(win, churn, sizeof churn));
        MPI_CHECK(MPI_Put(src, 1, MPI_INT, right, MPI_Aint_add(addr[right], (it % NB) * sizeof(int)), 1, MPI_INT, win));
        MPI_CHECK(MPI_Win_flush(right, win));
        MPI_CHECK(MPI_Win_detach(win, churn));
    }
    MPI_CHECK(MPI_Win_unlock_all(win));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    local_begin(win);
    for (int i = 0; i < NB; i++)
        CHECK(b[i] == val(left, 0), "dynamic window under attach/detach: [%d] = %d, want %d", i, b[i], val(left, 0));
    local_end(win);
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_CHECK(MPI_Win_detach(win, b));
    MPI_CHECK(MPI_Win_free(&win));
    free(a);
    free(b);
    free(addr);
}

int main(int argc, char **argv)
{
    rma_init(&argc, &argv);

    test_create_allocate();
    test_group();
    test_name();
    test_info();
    test_keyval();
    test_errhandler();
    test_shared(0);
    test_shared(1);
    test_shared_query_other_flavors();
    test_dynamic();
    return mtest_finalize();
}
