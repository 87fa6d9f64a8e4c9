/* The tool interface's control variables, enumerations and categories (MPI 4.1 chapter 15):
 * - usable before MPI_Init and after MPI_Finalize, nested init/finalize, not before init; a
 *   write before MPI_Init wins over the environment at MPI_Init (APTUS_SPIN_COUNT=500 set);
 * - every variable of the configuration table listed with a name, type, scope and description,
 *   found again by name, readable; the values the environment set are the ones read (the test
 *   runs with APTUS_SMP_EAGER_MAX=16K, APTUS_COLL_BCAST_ALG=binomial, APTUS_STATS=0);
 * - a READONLY variable refuses a write (MPI_T_ERR_CVAR_SET_NEVER); a variable honoured at run
 *   time (APTUS_COLL_BCAST_ALG, scope ALL_EQ) takes a write, and the broadcasts after it run
 *   the algorithm written (the performance variable coll.bcast.* proves it), nonblocking ones too
 *   (the schedules cached before the write are dropped); an out-of-range
 *   write is refused with a message naming the variable;
 * - enumerations list the words of the choice variables;
 * - every variable is in exactly one category; category lookups agree;
 * - bad input: index out of range, unknown name, a handle that is not one, null arguments: the
 *   standard's classes, no error handler called, nothing printed. */
#include <string.h>

#include "mtest.h"

static int rank;

static int cvar_index(const char *name)
{
    int i = -1;
    TCHECK(MPI_T_cvar_get_index(name, &i), MPI_SUCCESS);
    return i;
}

static int read_int(int i)
{
    MPI_T_cvar_handle h;
    int count = 0, v = -1;
    TCHECK(MPI_T_cvar_handle_alloc(i, NULL, &h, &count), MPI_SUCCESS);
    CHECK(count == 1, "count %d", count);
    TCHECK(MPI_T_cvar_read(h, &v), MPI_SUCCESS);
    TCHECK(MPI_T_cvar_handle_free(&h), MPI_SUCCESS);
    CHECK(h == MPI_T_CVAR_HANDLE_NULL, "handle not nulled");
    return v;
}

/* The item number of word in enumeration e, or -1. */
static int enum_item(MPI_T_enum e, const char *word)
{
    int n = 0;
    char name[64];
    int len = sizeof name;
    TCHECK(MPI_T_enum_get_info(e, &n, name, &len), MPI_SUCCESS);
    for (int k = 0; k < n; k++) {
        int v = -1;
        char item[64];
        int ilen = sizeof item;
        TCHECK(MPI_T_enum_get_item(e, k, &v, item, &ilen), MPI_SUCCESS);
        CHECK(ilen == (int)strlen(item) + 1, "item length %d for '%s'", ilen, item);
        if (!strcmp(item, word))
            return v;
    }
    return -1;
}

/* A started handle of counter `name` in session s. */
static MPI_T_pvar_handle counter_handle(MPI_T_pvar_session s, const char *name)
{
    int i, count;
    MPI_T_pvar_handle h;
    TCHECK(MPI_T_pvar_get_index(name, MPI_T_PVAR_CLASS_COUNTER, &i), MPI_SUCCESS);
    TCHECK(MPI_T_pvar_handle_alloc(s, i, NULL, &h, &count), MPI_SUCCESS);
    CHECK(count == 1, "%s: count %d", name, count);
    TCHECK(MPI_T_pvar_start(s, h), MPI_SUCCESS);
    return h;
}

static unsigned long long counter_read(MPI_T_pvar_session s, MPI_T_pvar_handle h)
{
    unsigned long long v = ~0ull;
    TCHECK(MPI_T_pvar_read(s, h, &v), MPI_SUCCESS);
    return v;
}

int main(int argc, char **argv)
{
    int provided = -1, n = 0;

    /* not initialized yet */
    TCHECK(MPI_T_cvar_get_num(&n), MPI_T_ERR_NOT_INITIALIZED);
    /* before MPI_Init, nested */
    TCHECK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided), MPI_SUCCESS);
    CHECK(provided == MPI_THREAD_SINGLE, "provided %d", provided);
    TCHECK(MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided), MPI_SUCCESS);
    CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    TCHECK(MPI_T_init_thread(12345, &provided), MPI_T_ERR_INVALID);
    TCHECK(MPI_T_cvar_get_num(&n), MPI_SUCCESS);
    CHECK(n > 50, "only %d control variables", n);
    /* the environment's value, before MPI_Init */
    int eager = cvar_index("APTUS_SMP_EAGER_MAX");
    MPI_T_cvar_handle h;
    int count = 0;
    TCHECK(MPI_T_cvar_handle_alloc(eager, NULL, &h, &count), MPI_SUCCESS);
    unsigned long long ull = 0;
    TCHECK(MPI_T_cvar_read(h, &ull), MPI_SUCCESS);
    CHECK(ull == 16384, "APTUS_SMP_EAGER_MAX read %llu before MPI_Init, expected 16384 (the environment's 16K)", ull);
    TCHECK(MPI_T_cvar_write(h, &ull), MPI_T_ERR_CVAR_SET_NEVER);
    {
        char s[MPI_MAX_ERROR_STRING];
        int l = 0;
        MPI_Error_string(MPI_T_ERR_CVAR_SET_NEVER, s, &l);
        CHECK(strstr(s, "MPI_T_cvar_write") && strstr(s, "APTUS_SMP_EAGER_MAX"),
              "MPI_Error_string does not name the call and the variable: '%s'", s);
    }
    TCHECK(MPI_T_cvar_handle_free(&h), MPI_SUCCESS);
    TCHECK(MPI_T_cvar_read(h, &ull), MPI_T_ERR_INVALID_HANDLE); /* the null handle */

    /* a write before MPI_Init wins over the environment there (APTUS_SPIN_COUNT=500 is set) */
    int spin = cvar_index("APTUS_SPIN_COUNT");
    CHECK(read_int(spin) == 500, "APTUS_SPIN_COUNT reads %d before MPI_Init, the environment says 500", read_int(spin));
    TCHECK(MPI_T_cvar_handle_alloc(spin, NULL, &h, &count), MPI_SUCCESS);
    int spin_new = 777;
    TCHECK(MPI_T_cvar_write(h, &spin_new), MPI_SUCCESS);
    TCHECK(MPI_T_cvar_handle_free(&h), MPI_SUCCESS);

    MPI_Init(&argc, &argv);
    CHECK(read_int(spin) == 777, "APTUS_SPIN_COUNT reads %d after MPI_Init: the write before it was lost",
          read_int(spin));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size >= 2, "run it on 2 ranks or more (the broadcasts must run an algorithm)");

    /* every variable */
    int ncat = 0;
    TCHECK(MPI_T_category_get_num(&ncat), MPI_SUCCESS);
    CHECK(ncat >= 5, "%d categories", ncat);
    int *seen = calloc((size_t)n, sizeof *seen);
    for (int c = 0; c < ncat; c++) {
        char cname[64];
        int clen = sizeof cname, ncv = -1, npv = -1, nsub = -1, dlen = 0;
        TCHECK(MPI_T_category_get_info(c, cname, &clen, NULL, &dlen, &ncv, &npv, &nsub), MPI_SUCCESS);
        CHECK(dlen > 10, "category %s has no description", cname);
        int back = -1;
        TCHECK(MPI_T_category_get_index(cname, &back), MPI_SUCCESS);
        CHECK(back == c, "category %s: index %d back %d", cname, c, back);
        int *idx = malloc((size_t)(ncv + 1) * sizeof *idx);
        TCHECK(MPI_T_category_get_cvars(c, ncv, idx), MPI_SUCCESS);
        for (int k = 0; k < ncv; k++) {
            CHECK(idx[k] >= 0 && idx[k] < n, "category %s lists cvar %d", cname, idx[k]);
            seen[idx[k]]++;
        }
        free(idx);
    }
    for (int i = 0; i < n; i++) {
        char name[128], desc[4096];
        int nlen = sizeof name, dlen = sizeof desc, verb = -1, bind = -1, scope = -1;
        MPI_Datatype dt = MPI_DATATYPE_NULL;
        MPI_T_enum en = MPI_T_ENUM_NULL;
        TCHECK(MPI_T_cvar_get_info(i, name, &nlen, &verb, &dt, &en, desc, &dlen, &bind, &scope), MPI_SUCCESS);
        CHECK(seen[i] == 1, "cvar %s is in %d categories", name, seen[i]);
        CHECK(!strncmp(name, "APTUS_", 6) && nlen == (int)strlen(name) + 1, "cvar %d name '%s' len %d", i, name, nlen);
        CHECK(dlen > 20 && strstr(desc, "default:"), "cvar %s: description '%s'", name, desc);
        CHECK(cvar_index(name) == i, "cvar %s: index lookup", name);
        CHECK(bind == MPI_T_BIND_NO_OBJECT, "cvar %s bind %d", name, bind);
        CHECK(scope == MPI_T_SCOPE_READONLY || scope == MPI_T_SCOPE_LOCAL || scope == MPI_T_SCOPE_ALL_EQ,
              "cvar %s scope %d", name, scope);
        CHECK(dt == MPI_INT || dt == MPI_UNSIGNED_LONG_LONG || dt == MPI_CHAR, "cvar %s datatype", name);
        CHECK(en == MPI_T_ENUM_NULL || dt == MPI_INT, "cvar %s: an enumeration on a non-int", name);
        /* read every one */
        TCHECK(MPI_T_cvar_handle_alloc(i, NULL, &h, &count), MPI_SUCCESS);
        char buf[4096];
        CHECK(count >= 1 && (dt == MPI_CHAR ? count <= (int)sizeof buf : count == 1), "cvar %s count %d", name, count);
        TCHECK(MPI_T_cvar_read(h, buf), MPI_SUCCESS);
        if (dt == MPI_CHAR)
            CHECK(memchr(buf, 0, (size_t)count) != NULL, "cvar %s: string not terminated", name);
        if (en != MPI_T_ENUM_NULL) {
            int item;
            memcpy(&item, buf, sizeof item);
            int ne = 0;
            TCHECK(MPI_T_enum_get_info(en, &ne, NULL, NULL), MPI_SUCCESS);
            CHECK(item >= 0 && item < ne, "cvar %s: item %d of %d", name, item, ne);
        }
        TCHECK(MPI_T_cvar_handle_free(&h), MPI_SUCCESS);
    }
    free(seen);

    /* the environment's values after MPI_Init */
    CHECK(read_int(cvar_index("APTUS_STATS")) == 0, "APTUS_STATS");
    int alg = cvar_index("APTUS_COLL_BCAST_ALG");
    MPI_T_enum en;
    int scope;
    TCHECK(MPI_T_cvar_get_info(alg, NULL, NULL, NULL, NULL, &en, NULL, NULL, NULL, &scope), MPI_SUCCESS);
    CHECK(scope == MPI_T_SCOPE_ALL_EQ, "APTUS_COLL_BCAST_ALG scope %d", scope);
    int binomial = enum_item(en, "binomial"), linear = enum_item(en, "linear");
    CHECK(binomial >= 0 && linear >= 0 && binomial != linear, "enumeration items %d %d", binomial, linear);
    CHECK(read_int(alg) == binomial, "APTUS_COLL_BCAST_ALG reads %d, expected binomial (%d)", read_int(alg), binomial);

    /* a write honoured at run time: the broadcasts after it are linear */
    MPI_T_pvar_session ses;
    TCHECK(MPI_T_pvar_session_create(&ses), MPI_SUCCESS);
    MPI_T_pvar_handle hlin = counter_handle(ses, "coll.bcast.linear"),
                      hbin = counter_handle(ses, "coll.bcast.binomial");
    int data[64];
    for (int k = 0; k < 64; k++)
        data[k] = rank == 0 ? k : -1;
    MPI_Bcast(data, 64, MPI_INT, 0, MPI_COMM_WORLD);
    CHECK(counter_read(ses, hbin) == 1 && counter_read(ses, hlin) == 0,
          "before the write: binomial %llu, linear %llu (expected 1, 0)", counter_read(ses, hbin),
          counter_read(ses, hlin));
    TCHECK(MPI_T_cvar_handle_alloc(alg, NULL, &h, &count), MPI_SUCCESS);
    TCHECK(MPI_T_cvar_write(h, &linear), MPI_SUCCESS);
    CHECK(read_int(alg) == linear, "the write did not stick");
    for (int k = 0; k < 64; k++)
        data[k] = rank == 0 ? 2 * k : -1;
    MPI_Bcast(data, 64, MPI_INT, 0, MPI_COMM_WORLD);
    for (int k = 0; k < 64; k++)
        CHECK(data[k] == 2 * k, "broadcast data[%d] = %d", k, data[k]);
    CHECK(counter_read(ses, hbin) == 1 && counter_read(ses, hlin) == 1,
          "after the write: binomial %llu, linear %llu (expected 1, 1)", counter_read(ses, hbin),
          counter_read(ses, hlin));
    int bad = 999;
    TCHECK(MPI_T_cvar_write(h, &bad), MPI_T_ERR_INVALID);
    TCHECK(MPI_T_cvar_write(h, &binomial), MPI_SUCCESS);
    /* nonblocking broadcasts: the second of two alike is replayed from the schedule cache (no
     * algorithm chosen); after a write the cache is dropped and the next one runs the new choice */
    MPI_Request rq;
    unsigned long long b0 = counter_read(ses, hbin), l0 = counter_read(ses, hlin);
    for (int k = 0; k < 2; k++) {
        MPI_Ibcast(data, 64, MPI_INT, 0, MPI_COMM_WORLD, &rq);
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
    }
    CHECK(counter_read(ses, hbin) == b0 + 1 && counter_read(ses, hlin) == l0,
          "two alike MPI_Ibcast: binomial ran %llu times, linear %llu (expected 1, 0: the second replayed)",
          counter_read(ses, hbin) - b0, counter_read(ses, hlin) - l0);
    TCHECK(MPI_T_cvar_write(h, &linear), MPI_SUCCESS);
    for (int k = 0; k < 64; k++)
        data[k] = rank == 0 ? 3 * k : -1;
    MPI_Ibcast(data, 64, MPI_INT, 0, MPI_COMM_WORLD, &rq);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    for (int k = 0; k < 64; k++)
        CHECK(data[k] == 3 * k, "nonblocking broadcast data[%d] = %d", k, data[k]);
    CHECK(counter_read(ses, hlin) == l0 + 1,
          "after the write an MPI_Ibcast alike ran linear %llu times (expected 1: the cached schedule was replayed)",
          counter_read(ses, hlin) - l0);
    TCHECK(MPI_T_cvar_write(h, &binomial), MPI_SUCCESS);
    TCHECK(MPI_T_pvar_session_free(&ses), MPI_SUCCESS);
    TCHECK(MPI_T_cvar_handle_free(&h), MPI_SUCCESS);
    /* out of range: APTUS_COLL_ALLTOALL_BATCH is at least 1 */
    TCHECK(MPI_T_cvar_handle_alloc(cvar_index("APTUS_COLL_ALLTOALL_BATCH"), NULL, &h, &count), MPI_SUCCESS);
    int zero = 0;
    TCHECK(MPI_T_cvar_write(h, &zero), MPI_T_ERR_INVALID);
    {
        char s[MPI_MAX_ERROR_STRING];
        int l = 0;
        MPI_Error_string(MPI_T_ERR_INVALID, s, &l);
        CHECK(strstr(s, "APTUS_COLL_ALLTOALL_BATCH") != NULL, "the message does not name the variable: '%s'", s);
    }
    TCHECK(MPI_T_cvar_handle_free(&h), MPI_SUCCESS);

    /* bad input */
    TCHECK(MPI_T_cvar_get_info(n, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL), MPI_T_ERR_INVALID_INDEX);
    TCHECK(MPI_T_cvar_get_info(-1, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL), MPI_T_ERR_INVALID_INDEX);
    TCHECK(MPI_T_cvar_handle_alloc(n, NULL, &h, &count), MPI_T_ERR_INVALID_INDEX);
    int idx;
    TCHECK(MPI_T_cvar_get_index("APTUS_NO_SUCH_THING", &idx), MPI_T_ERR_INVALID_NAME);
    TCHECK(MPI_T_cvar_get_index(NULL, &idx), MPI_T_ERR_INVALID);
    TCHECK(MPI_T_cvar_read((MPI_T_cvar_handle)&idx, &idx), MPI_T_ERR_INVALID_HANDLE);
    TCHECK(MPI_T_cvar_read((MPI_T_cvar_handle)(uintptr_t)12345, &idx), MPI_T_ERR_INVALID_HANDLE);
    TCHECK(MPI_T_enum_get_info((MPI_T_enum)&idx, &n, NULL, NULL), MPI_T_ERR_INVALID_HANDLE);
    TCHECK(MPI_T_enum_get_item(en, 9999, &idx, NULL, NULL), MPI_T_ERR_INVALID_ITEM);
    TCHECK(MPI_T_category_get_info(ncat, NULL, NULL, NULL, NULL, NULL, NULL, NULL), MPI_T_ERR_INVALID_INDEX);
    TCHECK(MPI_T_category_get_index("no-such-category", &idx), MPI_T_ERR_INVALID_NAME);
    TCHECK(MPI_T_category_get_cvars(0, 5, NULL), MPI_T_ERR_INVALID);
    {
        char s[8];
        int l = sizeof s;
        TCHECK(MPI_T_cvar_get_info(eager, s, &l, NULL, NULL, NULL, NULL, NULL, NULL, NULL), MPI_SUCCESS);
        CHECK(l == 8 && s[7] == 0 && !strncmp(s, "APTUS_S", 7), "a short buffer: '%s' %d", s, l);
        l = 0;
        TCHECK(MPI_T_cvar_get_info(eager, NULL, &l, NULL, NULL, NULL, NULL, NULL, NULL, NULL), MPI_SUCCESS);
        CHECK(l == (int)strlen("APTUS_SMP_EAGER_MAX") + 1, "the length asked for: %d", l);
    }
    int changed = -1;
    TCHECK(MPI_T_category_changed(&changed), MPI_SUCCESS);

    MPI_Finalize();
    /* after MPI_Finalize: still usable until the last MPI_T_finalize */
    TCHECK(MPI_T_cvar_get_num(&n), MPI_SUCCESS);
    TCHECK(MPI_T_finalize(), MPI_SUCCESS);
    TCHECK(MPI_T_cvar_get_num(&n), MPI_SUCCESS);
    TCHECK(MPI_T_finalize(), MPI_SUCCESS);
    TCHECK(MPI_T_cvar_get_num(&n), MPI_T_ERR_NOT_INITIALIZED);
    TCHECK(MPI_T_finalize(), MPI_T_ERR_NOT_INITIALIZED);
    if (rank == 0)
        printf("mpit_cvar: OK (%d control variables)\n", n > 0 ? n : 0);
    return 0;
}
