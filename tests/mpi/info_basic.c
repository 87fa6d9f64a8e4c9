/* Info objects: set/get/get_string/get_valuelen/nkeys/nthkey/dup/delete/free, their error
 * classes, MPI_Info calls before MPI_Init, MPI_INFO_ENV and MPI_Info_create_env. */
#include "mtest.h"

#include <unistd.h>

static int rank, size;

/* Reads key through MPI_Info_get_string into a fresh buffer; NULL if absent. */
static char *get_string(MPI_Info info, const char *key)
{
    int len = 0, flag = 0;
    char none;
    MPI_CHECK(MPI_Info_get_string(info, key, &len, &none, &flag));
    if (!flag)
        return NULL;
    CHECK(len >= 1, "get_string(%s): length %d with flag set", key, len);
    char *buf = malloc((size_t)len);
    int len2 = len;
    MPI_CHECK(MPI_Info_get_string(info, key, &len2, buf, &flag));
    CHECK(flag && len2 == len && (int)strlen(buf) == len - 1, "get_string(%s): lengths %d %d %zu", key, len, len2,
          strlen(buf));
    return buf;
}

static void test_basic(void)
{
    MPI_Info info, dup;
    int n, flag, vlen;
    char key[MPI_MAX_INFO_KEY], value[64];
    MPI_CHECK(MPI_Info_create(&info));
    MPI_CHECK(MPI_Info_get_nkeys(info, &n));
    CHECK(n == 0, "new info has %d keys", n);

    /* An odd number of keys with values derived from the rank. */
    const char *keys[] = { "alpha", "beta", "gamma", "delta", "epsilon" };
    char vals[5][32];
    for (int i = 0; i < 5; i++) {
        snprintf(vals[i], sizeof vals[i], "v%d_r%d", i * 7, rank);
        MPI_CHECK(MPI_Info_set(info, keys[i], vals[i]));
    }
    MPI_CHECK(MPI_Info_get_nkeys(info, &n));
    CHECK(n == 5, "nkeys %d, want 5", n);
    /* nthkey enumerates each key exactly once. */
    int seen[5] = { 0 };
    for (int i = 0; i < n; i++) {
        MPI_CHECK(MPI_Info_get_nthkey(info, i, key));
        int found = 0;
        for (int j = 0; j < 5; j++)
            if (strcmp(key, keys[j]) == 0) {
                seen[j]++;
                found = 1;
            }
        CHECK(found, "nthkey(%d) = \"%s\" is not a key that was set", i, key);
    }
    for (int j = 0; j < 5; j++)
        CHECK(seen[j] == 1, "key %s enumerated %d times", keys[j], seen[j]);

    for (int i = 0; i < 5; i++) {
        char *s = get_string(info, keys[i]);
        CHECK(s && strcmp(s, vals[i]) == 0, "get_string(%s) = %s, want %s", keys[i], s ? s : "(absent)", vals[i]);
        free(s);
        MPI_CHECK(MPI_Info_get_valuelen(info, keys[i], &vlen, &flag));
        CHECK(flag && vlen == (int)strlen(vals[i]), "valuelen(%s) = %d flag %d", keys[i], vlen, flag);
    }
    /* Replace a value: the key count stays. */
    MPI_CHECK(MPI_Info_set(info, "beta", "replaced"));
    MPI_CHECK(MPI_Info_get_nkeys(info, &n));
    CHECK(n == 5, "nkeys after replace %d", n);
    char *s = get_string(info, "beta");
    CHECK(s && strcmp(s, "replaced") == 0, "replaced value %s", s ? s : "(absent)");
    free(s);

    /* Truncation by MPI_Info_get_string: what fits, null-terminated, full length reported. */
    int buflen = 4;
    memset(value, 'x', sizeof value);
    MPI_CHECK(MPI_Info_get_string(info, "beta", &buflen, value, &flag));
    CHECK(flag && buflen == 9 && strcmp(value, "rep") == 0, "truncated get_string: buflen %d value %.8s", buflen,
          value);

    /* MPI_Info_get: at most valuelen characters, null-terminated (the standard truncates; MPICH
     * 4.0 raises an error instead, so the truncation is checked for Aptus MPI only). */
    if (getenv("MTEST_APTUS")) {
        memset(value, 'x', sizeof value);
        MPI_CHECK(MPI_Info_get(info, "beta", 3, value, &flag));
        CHECK(flag && strcmp(value, "rep") == 0, "MPI_Info_get with valuelen 3: flag %d value %.8s", flag, value);
    }
    MPI_CHECK(MPI_Info_get(info, "alpha", (int)sizeof value - 1, value, &flag));
    CHECK(flag && strcmp(value, vals[0]) == 0, "MPI_Info_get(alpha) = %s, want %s", value, vals[0]);
    MPI_CHECK(MPI_Info_get(info, "nope", (int)sizeof value - 1, value, &flag));
    CHECK(!flag, "MPI_Info_get of a missing key set flag");

    /* Absent key: flag false, valuelen untouched. */
    vlen = -77;
    MPI_CHECK(MPI_Info_get_valuelen(info, "nope", &vlen, &flag));
    CHECK(!flag && vlen == -77, "valuelen of a missing key: flag %d len %d", flag, vlen);
    buflen = sizeof value;
    MPI_CHECK(MPI_Info_get_string(info, "nope", &buflen, value, &flag));
    CHECK(!flag, "get_string of a missing key set flag");

    /* Dup is a deep copy. */
    MPI_CHECK(MPI_Info_dup(info, &dup));
    MPI_CHECK(MPI_Info_delete(info, "gamma"));
    MPI_CHECK(MPI_Info_get_nkeys(info, &n));
    CHECK(n == 4, "nkeys after delete %d", n);
    MPI_CHECK(MPI_Info_get_nkeys(dup, &n));
    CHECK(n == 5, "dup changed by delete on the original: %d keys", n);
    s = get_string(dup, "gamma");
    CHECK(s && strcmp(s, vals[2]) == 0, "dup lost gamma");
    free(s);
    s = get_string(info, "gamma");
    CHECK(!s, "deleted key still readable");
    MPI_CHECK(MPI_Info_set(dup, "zeta", "only in dup"));
    s = get_string(info, "zeta");
    CHECK(!s, "key set on the dup appears in the original");

    MPI_CHECK(MPI_Info_free(&dup));
    CHECK(dup == MPI_INFO_NULL, "Info_free did not reset the handle");
    MPI_CHECK(MPI_Info_free(&info));
    CHECK(info == MPI_INFO_NULL, "Info_free did not reset the handle");
}

static void test_errors(void)
{
    MPI_Info info;
    int rc, flag, n;
    char key[MPI_MAX_INFO_KEY], big[MPI_MAX_INFO_KEY + 8], bigval[MPI_MAX_INFO_VAL + 8];
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_CHECK(MPI_Info_create(&info));
    MPI_CHECK(MPI_Info_set(info, "k", "v"));

    memset(big, 'k', sizeof big - 1);
    big[sizeof big - 1] = 0;
    rc = MPI_Info_set(info, big, "v");
    CHECK_ERRCLASS(rc, MPI_ERR_INFO_KEY, "key longer than MPI_MAX_INFO_KEY");
    rc = MPI_Info_set(info, "", "v");
    CHECK_ERRCLASS(rc, MPI_ERR_INFO_KEY, "empty key");
    memset(bigval, 'v', sizeof bigval - 1);
    bigval[sizeof bigval - 1] = 0;
    rc = MPI_Info_set(info, "k2", bigval);
    CHECK_ERRCLASS(rc, MPI_ERR_INFO_VALUE, "value longer than MPI_MAX_INFO_VAL");
    rc = MPI_Info_delete(info, "missing");
    CHECK_ERRCLASS(rc, MPI_ERR_INFO_NOKEY, "delete of a missing key");
    rc = MPI_Info_get_nthkey(info, 1, key);
    CHECK_ERRCLASS(rc, MPI_ERR_ARG, "nthkey past the end");
    rc = MPI_Info_get_nthkey(info, -1, key);
    CHECK_ERRCLASS(rc, MPI_ERR_ARG, "nthkey -1");
    /* A null info handle: MPI_ERR_INFO (some implementations say MPI_ERR_ARG). */
    MPI_Info null = MPI_INFO_NULL;
    int bad_rc[3];
    bad_rc[0] = MPI_Info_get_nkeys(MPI_INFO_NULL, &n);
    bad_rc[1] = MPI_Info_set(MPI_INFO_NULL, "a", "b");
    bad_rc[2] = MPI_Info_free(&null);
    for (int i = 0; i < 3; i++) {
        int cls = -1;
        CHECK(bad_rc[i] != MPI_SUCCESS, "call %d on MPI_INFO_NULL succeeded", i);
        MPI_Error_class(bad_rc[i], &cls);
        if (getenv("MTEST_APTUS"))
            CHECK_ERRCLASS(bad_rc[i], MPI_ERR_INFO, "call on MPI_INFO_NULL");
        else
            CHECK(cls == MPI_ERR_INFO || cls == MPI_ERR_ARG, "call %d on MPI_INFO_NULL: class %d", i, cls);
    }
    /* The failed calls changed nothing. */
    MPI_CHECK(MPI_Info_get_nkeys(info, &n));
    CHECK(n == 1, "info has %d keys after the failed calls", n);
    int buflen = 0;
    char untouched = 'u';
    MPI_CHECK(MPI_Info_get_string(info, "k", &buflen, &untouched, &flag));
    CHECK(flag && buflen == 2 && untouched == 'u', "get_string with buflen 0: flag %d buflen %d", flag, buflen);
    MPI_CHECK(MPI_Info_free(&info));
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

static void test_env(int argc, char **argv)
{
    int n, flag;
    char key[MPI_MAX_INFO_KEY];
    MPI_CHECK(MPI_Info_get_nkeys(MPI_INFO_ENV, &n));
    for (int i = 0; i < n; i++) {
        MPI_CHECK(MPI_Info_get_nthkey(MPI_INFO_ENV, i, key));
        static const char *const allowed[] = { "command", "argv", "maxprocs", "soft",        "host",
                                               "arch",    "wdir", "file",     "thread_level" };
        int ok = 0;
        for (size_t j = 0; j < sizeof allowed / sizeof *allowed; j++)
            ok |= strcmp(key, allowed[j]) == 0;
        /* Implementations may add keys; only report them. */
        if (!ok && rank == 0)
            printf("note: MPI_INFO_ENV has the extra key %s\n", key);
    }
    if (!getenv("MTEST_APTUS"))
        return;
    /* What Aptus MPI fills in. */
    char *cmd = get_string(MPI_INFO_ENV, "command");
    CHECK(cmd && strcmp(cmd, argv[0]) == 0, "command = %s, want %s", cmd ? cmd : "(absent)", argv[0]);
    free(cmd);
    char *a = get_string(MPI_INFO_ENV, "argv");
    CHECK(a && strcmp(a, "one two") == 0, "argv = %s, want \"one two\"", a ? a : "(absent)");
    free(a);
    char *mp = get_string(MPI_INFO_ENV, "maxprocs");
    CHECK(mp && atoi(mp) == size, "maxprocs = %s, want %d", mp ? mp : "(absent)", size);
    free(mp);
    char host[256], cwd[1024];
    gethostname(host, sizeof host);
    char *h = get_string(MPI_INFO_ENV, "host");
    CHECK(h && strcmp(h, host) == 0, "host = %s, want %s", h ? h : "(absent)", host);
    free(h);
    char *w = get_string(MPI_INFO_ENV, "wdir");
    CHECK(w && getcwd(cwd, sizeof cwd) && strcmp(w, cwd) == 0, "wdir = %s", w ? w : "(absent)");
    free(w);
    char *t = get_string(MPI_INFO_ENV, "thread_level");
    /* The level requested before the program started (no launcher asks for one): absent. */
    CHECK(!t, "thread_level = %s, want it absent", t ? t : "(absent)");
    free(t);
    /* MPI_INFO_ENV is predefined: it cannot be freed. */
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Info env = MPI_INFO_ENV;
    int rc = MPI_Info_free(&env);
    CHECK_ERRCLASS(rc, MPI_ERR_INFO, "free of MPI_INFO_ENV");
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);

    /* MPI_Info_create_env from an argv of our own. */
    MPI_Info e;
    char *myargv[] = { "prog", "x", "y z", NULL };
    MPI_CHECK(MPI_Info_create_env(3, myargv, &e));
    char *c2 = get_string(e, "command");
    CHECK(c2 && strcmp(c2, "prog") == 0, "create_env command %s", c2 ? c2 : "(absent)");
    free(c2);
    char *a2 = get_string(e, "argv");
    CHECK(a2 && strcmp(a2, "x y z") == 0, "create_env argv %s", a2 ? a2 : "(absent)");
    free(a2);
    MPI_CHECK(MPI_Info_set(e, "mine", "1")); /* an ordinary, modifiable object */
    MPI_CHECK(MPI_Info_get_nkeys(e, &n));
    CHECK(n >= 3, "create_env object has %d keys", n);
    MPI_CHECK(MPI_Info_get_valuelen(e, "mine", &n, &flag));
    CHECK(flag && n == 1, "key set on the create_env object");
    MPI_CHECK(MPI_Info_free(&e));
}

#if MPI_VERSION >= 5
/* MPI 5.0: the standard ABI's version and the sizes of its integer types. */
static void test_abi(void)
{
    int major = -1, minor = -1;
    MPI_CHECK(MPI_Abi_get_version(&major, &minor));
    CHECK(major == MPI_ABI_VERSION && minor == MPI_ABI_SUBVERSION, "Abi_get_version %d.%d", major, minor);
    MPI_Info info;
    MPI_CHECK(MPI_Abi_get_info(&info));
    static const struct {
        const char *key;
        size_t size;
    } want[] = { { "mpi_aint_size", sizeof(MPI_Aint) },
                 { "mpi_count_size", sizeof(MPI_Count) },
                 { "mpi_offset_size", sizeof(MPI_Offset) } };
    for (int i = 0; i < 3; i++) {
        char *s = get_string(info, want[i].key);
        if (s) /* the keys are optional */
            CHECK(strtoul(s, NULL, 10) == want[i].size, "%s = %s, want %zu", want[i].key, s, want[i].size);
        else
            CHECK(!getenv("MTEST_APTUS"), "MPI_Abi_get_info has no %s", want[i].key);
        free(s);
    }
    MPI_CHECK(MPI_Info_free(&info));
}
#else
static void test_abi(void)
{
}
#endif

int main(int argc, char **argv)
{
    /* Info objects may be used before MPI_Init (MPI 4.0). */
    MPI_Info early;
    int n = -1;
    MPI_Info_create(&early);
    MPI_Info_set(early, "early", "yes");
    MPI_Info_get_nkeys(early, &n);

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(n == 1, "info created before MPI_Init had %d keys", n);
    char *s = get_string(early, "early");
    CHECK(s && strcmp(s, "yes") == 0, "info set before MPI_Init lost its value");
    free(s);
    MPI_CHECK(MPI_Info_free(&early));

    test_basic();
    test_errors();
    test_env(argc, argv);
    test_abi();
    MPI_Finalize();
    return 0;
}
