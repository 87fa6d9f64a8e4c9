/* Unit tests of the configuration reader: the table, defaults, parsing of every type (good
 * and bad values, with the exact messages), the range of every variable of the table (walked
 * entry by entry: values at and beyond each end of each span), and the warning for unknown
 * APTUS_* variables.
 *
 *   test_config                     the unit tests
 *   test_config --check-doc FILE    checks that FILE (docs/TUNING.md) has, for every variable of
 *                                   config_vars.def, a line naming it with its type, default
 *                                   and range */
#include "runtime/config.h"

#include <inttypes.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

#include "unit_check.h"

static const char *type_word(enum aptus_cvar_type t)
{
    switch (t) {
    case APTUS_CVAR_BOOL: return "bool";
    case APTUS_CVAR_INT: return "int";
    case APTUS_CVAR_SIZE: return "size";
    case APTUS_CVAR_ENUM: return "enum";
    case APTUS_CVAR_STRING: return "string";
    }
    return "?";
}

/* Removes every APTUS_* variable from the environment. */
static void clear_aptus_env(void)
{
    for (;;) {
        char name[256] = "";
        for (char **e = environ; e && *e; e++)
            if (strncmp(*e, "APTUS_", 6) == 0) {
                size_t n = strcspn(*e, "=");
                if (n >= sizeof name)
                    n = sizeof name - 1;
                memcpy(name, *e, n);
                name[n] = '\0';
                break;
            }
        if (!name[0])
            return;
        unsetenv(name);
    }
}

/* Runs aptus_config_init with stderr captured into `captured`. */
static int init_capturing(char *err, size_t errlen, char *captured, size_t caplen)
{
    fflush(stderr);
    FILE *tmp = tmpfile();
    int saved = dup(STDERR_FILENO);
    if (!tmp || saved < 0) {
        fprintf(stderr, "cannot capture stderr\n");
        exit(1);
    }
    dup2(fileno(tmp), STDERR_FILENO);
    int rc = aptus_config_init(err, errlen);
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    rewind(tmp);
    size_t n = fread(captured, 1, caplen - 1, tmp);
    captured[n] = '\0';
    fclose(tmp);
    return rc;
}

static int init_quiet(char *err, size_t errlen)
{
    char cap[4096];
    return init_capturing(err, errlen, cap, sizeof cap);
}

/* Sets one variable, runs init, expects this exact message. */
static void expect_err(const char *name, const char *value, const char *msg, int line)
{
    char err[512] = "";
    setenv(name, value, 1);
    if (init_quiet(err, sizeof err) == 0) {
        fprintf(stderr, "line %d: %s='%s' accepted, expected: %s\n", line, name, value, msg);
        failures++;
    } else if (strcmp(err, msg) != 0) {
        fprintf(stderr, "line %d: %s='%s'\n  message:  %s\n  expected: %s\n", line, name, value, err, msg);
        failures++;
    }
    unsetenv(name);
}
#define EXPECT_ERR(name, value, msg) expect_err(name, value, msg, __LINE__)

static void test_table(void)
{
    int count = -1;
    const struct aptus_cvar_desc *t = aptus_config_table(&count);
    CHECK(t != NULL);
    /* One entry per line of the declarative table. */
    enum {
#define APTUS_CVAR(NAME, field, type, ctype, dflt, range, desc) VAR_##field,
#include "runtime/config_vars.def"
#undef APTUS_CVAR
        VAR_COUNT
    };
    CHECK(count == VAR_COUNT);
    CHECK(aptus_config_table(NULL) == t);
    for (int i = 0; i < count; i++) {
        CHECK(strncmp(t[i].name, "APTUS_", 6) == 0);
        CHECK(t[i].default_text != NULL);
        CHECK(t[i].description != NULL && strlen(t[i].description) > 10);
        CHECK(t[i].range != NULL && t[i].range[0] != '\0');
        for (int j = 0; j < i; j++)
            CHECK(strcmp(t[i].name, t[j].name) != 0);
    }
    CHECK(strcmp(t[0].name, "APTUS_STATS") == 0 && t[0].type == APTUS_CVAR_BOOL);
    CHECK(strcmp(t[1].name, "APTUS_TUNE_FILE") == 0 && t[1].type == APTUS_CVAR_STRING);
    CHECK(strcmp(t[2].name, "APTUS_SEND_RULES") == 0 && t[2].type == APTUS_CVAR_STRING);
    CHECK(strcmp(t[2].default_text, "auto") == 0);
    CHECK(strcmp(t[3].name, "APTUS_SMP_BLOCK_SIZE") == 0 && t[3].type == APTUS_CVAR_SIZE);
    CHECK(strcmp(t[VAR_spin_count].name, "APTUS_SPIN_COUNT") == 0 && t[VAR_spin_count].type == APTUS_CVAR_INT);
}

static void check_defaults(void)
{
    CHECK(aptus_config.stats == 0);
    CHECK(aptus_config.send_rules && strcmp(aptus_config.send_rules, "auto") == 0);
    CHECK(aptus_config.smp_block_size == 64 * 1024);
    CHECK(aptus_config.smp_eager_max == 32 * 1024);
    CHECK(aptus_config.smp_cma == 1);
    CHECK(aptus_config.smp_cma_min == 64 * 1024 * 1024);
    CHECK(aptus_config.smp_cma_busy_min == 32 * 1024);
    CHECK(aptus_config.smp_chunk == 16 * 1024);
    CHECK(aptus_config.spin_count == 2000);
}

static void test_defaults(void)
{
    /* Applied when the program starts, before any init. */
    check_defaults();
    char err[512] = "";
    CHECK(init_quiet(err, sizeof err) == 0);
    CHECK(err[0] == '\0');
    check_defaults();
}

static void test_bool(void)
{
    static const char *const on[] = { "1", "yes", "true", "on", "YES", "True", "ON", " on ", "yes\n" };
    static const char *const off[] = { "0", "no", "false", "off", "NO", "False", "Off", "\t0" };
    char err[512];
    for (size_t i = 0; i < sizeof on / sizeof on[0]; i++) {
        setenv("APTUS_STATS", on[i], 1);
        aptus_config.stats = -1;
        CHECK(init_quiet(err, sizeof err) == 0 && aptus_config.stats == 1);
    }
    for (size_t i = 0; i < sizeof off / sizeof off[0]; i++) {
        setenv("APTUS_SMP_CMA", off[i], 1);
        aptus_config.smp_cma = -1;
        CHECK(init_quiet(err, sizeof err) == 0 && aptus_config.smp_cma == 0);
    }
    unsetenv("APTUS_STATS");
    unsetenv("APTUS_SMP_CMA");
#define NOT_A_BOOL "is not a boolean (0, 1; also yes/no, true/false, on/off)"
    EXPECT_ERR("APTUS_STATS", "maybe", "APTUS_STATS=maybe " NOT_A_BOOL);
    EXPECT_ERR("APTUS_STATS", "2", "APTUS_STATS=2 " NOT_A_BOOL);
    /* an empty value or one with blanks is quoted */
    EXPECT_ERR("APTUS_SMP_CMA", "", "APTUS_SMP_CMA='' " NOT_A_BOOL);
    EXPECT_ERR("APTUS_SMP_CMA", "yess", "APTUS_SMP_CMA=yess " NOT_A_BOOL);
    EXPECT_ERR("APTUS_SMP_CMA", "o n", "APTUS_SMP_CMA='o n' " NOT_A_BOOL);
#undef NOT_A_BOOL
}

static void test_int(void)
{
    static const struct {
        const char *text;
        int value;
    } good[] = {
        { "0", 0 }, { "123", 123 }, { "+7", 7 }, { " 42 ", 42 }, { "2147483647", 2147483647 }, { "007", 7 },
    };
    char err[512];
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        setenv("APTUS_SPIN_COUNT", good[i].text, 1);
        CHECK(init_quiet(err, sizeof err) == 0 && aptus_config.spin_count == good[i].value);
    }
    unsetenv("APTUS_SPIN_COUNT");
    /* negative values where the range has them (-20..19) */
    setenv("APTUS_ASYNC_PROGRESS_NICE", "-5", 1);
    CHECK(init_quiet(err, sizeof err) == 0 && aptus_config.async_progress_nice == -5);
    setenv("APTUS_ASYNC_PROGRESS_NICE", " -20", 1);
    CHECK(init_quiet(err, sizeof err) == 0 && aptus_config.async_progress_nice == -20);
    unsetenv("APTUS_ASYNC_PROGRESS_NICE");
    EXPECT_ERR("APTUS_SPIN_COUNT", "abc", "APTUS_SPIN_COUNT=abc is not an integer (0..max)");
    EXPECT_ERR("APTUS_SPIN_COUNT", "12abc", "APTUS_SPIN_COUNT=12abc is not an integer (0..max)");
    EXPECT_ERR("APTUS_SPIN_COUNT", "1K", "APTUS_SPIN_COUNT=1K is not an integer (0..max)");
    EXPECT_ERR("APTUS_SPIN_COUNT", "", "APTUS_SPIN_COUNT='' is not an integer (0..max)");
    EXPECT_ERR("APTUS_SPIN_COUNT", "-", "APTUS_SPIN_COUNT=- is not an integer (0..max)");
    EXPECT_ERR("APTUS_SPIN_COUNT", "1.5", "APTUS_SPIN_COUNT=1.5 is not an integer (0..max)");
    EXPECT_ERR("APTUS_SPIN_COUNT", "-5", "APTUS_SPIN_COUNT=-5 is out of range (0..max)");
    EXPECT_ERR("APTUS_SPIN_COUNT", "2147483648", "APTUS_SPIN_COUNT=2147483648 is out of range (0..max)");
    EXPECT_ERR("APTUS_ASYNC_PROGRESS_NICE", "-2147483649",
               "APTUS_ASYNC_PROGRESS_NICE=-2147483649 is out of range (-20..19)");
    EXPECT_ERR("APTUS_SPIN_COUNT", "99999999999999999999999999",
               "APTUS_SPIN_COUNT=99999999999999999999999999 is out of range (0..max)");
}

/* aptus_config_given: set in the environment (even to the default value) or not; a failed
 * init leaves the last answers. */
static void test_given(void)
{
    char err[512];
    CHECK(init_quiet(err, sizeof err) == 0 && !aptus_config_given("APTUS_SMP_CMA_MIN"));
    setenv("APTUS_SMP_CMA_MIN", aptus_config_default("APTUS_SMP_CMA_MIN"), 1);
    CHECK(init_quiet(err, sizeof err) == 0 && aptus_config_given("APTUS_SMP_CMA_MIN"));
    CHECK(!aptus_config_given("APTUS_SMP_CHUNK") && !aptus_config_given("APTUS_NO_SUCH_VARIABLE"));
    setenv("APTUS_SMP_CHUNK", "none", 1);
    unsetenv("APTUS_SMP_CMA_MIN");
    CHECK(init_quiet(err, sizeof err) != 0 && aptus_config_given("APTUS_SMP_CMA_MIN"));
    unsetenv("APTUS_SMP_CHUNK");
    CHECK(init_quiet(err, sizeof err) == 0 && !aptus_config_given("APTUS_SMP_CMA_MIN"));
}

static int write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fputs(text, f);
    return fclose(f);
}

/* APTUS_TUNE_FILE: NAME=VALUE lines read before the environment, which wins; a bad line, a bad
 * value or a value out of range is refused with the file and the line named; `none` reads
 * nothing; an explicit name must exist; auto reads the installation's file only if it is there. */
static void test_tune_file(void)
{
    char err[512], path[64], other[64];
    snprintf(path, sizeof path, "/tmp/aptus-test-tune-%d.conf", (int)getpid());
    snprintf(other, sizeof other, "/tmp/aptus-test-tune-%d-missing.conf", (int)getpid());
    CHECK(write_file(path, "# written by a test\n\nAPTUS_SPIN_COUNT = 77   # spins\n"
                           "APTUS_SEND_RULES=self;size<=1K:ud-sr;ud-zcopy\n  APTUS_UD_EAGER_MAX=4K\n") == 0);
    setenv("APTUS_TUNE_FILE", path, 1);
    CHECK(init_quiet(err, sizeof err) == 0);
    CHECK(aptus_config.spin_count == 77 && aptus_config.ud_eager_max == 4096);
    CHECK(strcmp(aptus_config.send_rules, "self;size<=1K:ud-sr;ud-zcopy") == 0);
    CHECK(aptus_config_given("APTUS_SPIN_COUNT") == 2 && aptus_config_given("APTUS_STATS") == 0);
    CHECK(strcmp(aptus_config_tune_file(), path) == 0);
    /* the environment wins */
    setenv("APTUS_SPIN_COUNT", "5", 1);
    CHECK(init_quiet(err, sizeof err) == 0 && aptus_config.spin_count == 5 && aptus_config.ud_eager_max == 4096);
    CHECK(aptus_config_given("APTUS_SPIN_COUNT") == 1);
    unsetenv("APTUS_SPIN_COUNT");
    /* a line that is not a variable; a value that does not parse; one out of range */
    static const struct {
        const char *text, *want;
    } bad[] = {
        { "APTUS_STATS=1\nAPTUS_NO_SUCH=3\n", "line 2: 'APTUS_NO_SUCH=3' is not NAME=VALUE" },
        { "APTUS_STATS\n", "line 1: 'APTUS_STATS' is not NAME=VALUE" },
        { "APTUS_TUNE_FILE=/etc/x\n", "line 1: 'APTUS_TUNE_FILE=/etc/x' is not NAME=VALUE" },
        { "#\n#\nAPTUS_SPIN_COUNT=lots\n", "line 3: APTUS_SPIN_COUNT=lots is not" },
        { "APTUS_UD_RECV_BUFS=0\n", "line 1: APTUS_UD_RECV_BUFS=0 is out of range (1..65536)" },
    };
    CHECK(init_quiet(err, sizeof err) == 0 && aptus_config.spin_count == 77);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK(write_file(path, bad[i].text) == 0);
        err[0] = 0;
        CHECK(init_quiet(err, sizeof err) != 0);
        CHECK(strstr(err, path) != NULL && strstr(err, bad[i].want) != NULL);
        if (!strstr(err, bad[i].want))
            fprintf(stderr, "  tune file case %zu: got '%s'\n", i, err);
        CHECK(aptus_config.spin_count == 77); /* (the previous values stay) */
    }
    /* an environment value covers a bad file line of its variable */
    setenv("APTUS_UD_RECV_BUFS", "64", 1);
    CHECK(init_quiet(err, sizeof err) == 0 && aptus_config.ud_recv_bufs == 64);
    unsetenv("APTUS_UD_RECV_BUFS");
    /* none: nothing read; a missing file named explicitly is an error */
    setenv("APTUS_TUNE_FILE", "none", 1);
    CHECK(init_quiet(err, sizeof err) == 0 && aptus_config.spin_count != 77 && aptus_config_tune_file()[0] == 0);
    setenv("APTUS_TUNE_FILE", other, 1);
    CHECK(init_quiet(err, sizeof err) != 0 && strstr(err, "cannot read it") && strstr(err, other));
    unsetenv("APTUS_TUNE_FILE");
    unlink(path);
    CHECK(init_quiet(err, sizeof err) == 0);
}

static void test_size(void)
{
    static const struct {
        const char *text;
        uint64_t value;
    } good[] = {
        { "0", 0 },         { "100", 100 },     { "64K", 65536 },   { "64k", 65536 }, { "2M", 2u << 20 },
        { "3m", 3u << 20 }, { "1G", 1u << 30 }, { "1g", 1u << 30 }, { " 8K ", 8192 }, { "0K", 0 },
    };
    char err[512];
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        setenv("APTUS_SMP_CMA_MIN", good[i].text, 1);
        CHECK(init_quiet(err, sizeof err) == 0 && aptus_config.smp_cma_min == good[i].value);
    }
    unsetenv("APTUS_SMP_CMA_MIN");
    if (sizeof(size_t) >= 8) {
        setenv("APTUS_SMP_CMA_MIN", "4G", 1);
        CHECK(init_quiet(err, sizeof err) == 0 && (uint64_t)aptus_config.smp_cma_min == 4ull << 30);
        setenv("APTUS_SMP_CMA_MIN", "18446744073709551615", 1);
        CHECK(init_quiet(err, sizeof err) == 0 && (uint64_t)aptus_config.smp_cma_min == UINT64_MAX);
        unsetenv("APTUS_SMP_CMA_MIN");
    }
#define NOT_A_SIZE(nv)                                                                                                 \
    "APTUS_SMP_BLOCK_SIZE=" nv " is not a size (1K..1G, multiple of 64; bytes, with an optional K, M or G suffix)"
    EXPECT_ERR("APTUS_SMP_BLOCK_SIZE", "abc", NOT_A_SIZE("abc"));
    EXPECT_ERR("APTUS_SMP_BLOCK_SIZE", "", NOT_A_SIZE("''"));
    EXPECT_ERR("APTUS_SMP_BLOCK_SIZE", "-1", NOT_A_SIZE("-1"));
    EXPECT_ERR("APTUS_SMP_BLOCK_SIZE", "1T", NOT_A_SIZE("1T"));
    EXPECT_ERR("APTUS_SMP_BLOCK_SIZE", "1KB", NOT_A_SIZE("1KB"));
    EXPECT_ERR("APTUS_SMP_BLOCK_SIZE", "K", NOT_A_SIZE("K"));
    EXPECT_ERR("APTUS_SMP_BLOCK_SIZE", "8 K", NOT_A_SIZE("'8 K'"));
    EXPECT_ERR("APTUS_SMP_BLOCK_SIZE", "1.5M", NOT_A_SIZE("1.5M"));
    /* parsed, but outside the range: below it, above it, not a multiple of 64 */
    EXPECT_ERR("APTUS_SMP_BLOCK_SIZE", "100", "APTUS_SMP_BLOCK_SIZE=100 is out of range (1K..1G, multiple of 64)");
    EXPECT_ERR("APTUS_SMP_BLOCK_SIZE", "2G", "APTUS_SMP_BLOCK_SIZE=2G is out of range (1K..1G, multiple of 64)");
    EXPECT_ERR("APTUS_SMP_BLOCK_SIZE", "4100", "APTUS_SMP_BLOCK_SIZE=4100 is out of range (1K..1G, multiple of 64)");
    setenv("APTUS_SMP_BLOCK_SIZE", "4160", 1);
    CHECK(init_quiet(err, sizeof err) == 0 && aptus_config.smp_block_size == 4160);
    unsetenv("APTUS_SMP_BLOCK_SIZE");
    EXPECT_ERR("APTUS_SMP_EAGER_MAX", "18446744073709551616",
               "APTUS_SMP_EAGER_MAX=18446744073709551616 is out of range (0..max)");
    EXPECT_ERR("APTUS_SMP_CHUNK", "17179869184G", "APTUS_SMP_CHUNK=17179869184G is out of range (1..max)");
#undef NOT_A_SIZE
}

static void test_string(void)
{
    char err[512];
    setenv("APTUS_SEND_RULES", "size<=1K:rc-fp;*:ud-sr", 1);
    CHECK(init_quiet(err, sizeof err) == 0);
    CHECK(strcmp(aptus_config.send_rules, "size<=1K:rc-fp;*:ud-sr") == 0);
    /* The value is a copy: changing the environment later does not change it. */
    setenv("APTUS_SEND_RULES", "smp", 1);
    CHECK(strcmp(aptus_config.send_rules, "size<=1K:rc-fp;*:ud-sr") == 0);
    CHECK(init_quiet(err, sizeof err) == 0 && strcmp(aptus_config.send_rules, "smp") == 0);
    /* Strings are taken as they are (the rule chain is checked by its own parser). */
    setenv("APTUS_SEND_RULES", "", 1);
    CHECK(init_quiet(err, sizeof err) == 0 && strcmp(aptus_config.send_rules, "") == 0);
    unsetenv("APTUS_SEND_RULES");
    CHECK(init_quiet(err, sizeof err) == 0 && strcmp(aptus_config.send_rules, "auto") == 0);
}

static void test_enum(void)
{
    char err[512];
    /* any letter case and blanks in; stored as the range spells the word */
    static const char *const bcast[] = { "binomial", "BINOMIAL", " Scatter_Allgather ", "auto" };
    static const char *const stored[] = { "binomial", "binomial", "scatter_allgather", "auto" };
    for (size_t i = 0; i < sizeof bcast / sizeof bcast[0]; i++) {
        setenv("APTUS_COLL_BCAST_ALG", bcast[i], 1);
        CHECK(init_quiet(err, sizeof err) == 0 && strcmp(aptus_config.coll_bcast_alg, stored[i]) == 0);
    }
    unsetenv("APTUS_COLL_BCAST_ALG");
    setenv("APTUS_WAIT_BLOCK", "YES", 1);
    CHECK(init_quiet(err, sizeof err) == 0 && strcmp(aptus_config.wait_block, "yes") == 0);
    unsetenv("APTUS_WAIT_BLOCK");
    EXPECT_ERR("APTUS_COLL_BCAST_ALG", "fast",
               "APTUS_COLL_BCAST_ALG=fast is out of range (auto, binomial, scatter_allgather, pipelined, linear)");
    EXPECT_ERR("APTUS_COLL_BCAST_ALG", "",
               "APTUS_COLL_BCAST_ALG='' is out of range (auto, binomial, scatter_allgather, pipelined, linear)");
    /* a word of another collective's range */
    EXPECT_ERR("APTUS_COLL_BCAST_ALG", "ring",
               "APTUS_COLL_BCAST_ALG=ring is out of range (auto, binomial, scatter_allgather, pipelined, linear)");
    EXPECT_ERR("APTUS_RC_RDMA_MODE", "sideways", "APTUS_RC_RDMA_MODE=sideways is out of range (write, read)");
    EXPECT_ERR("APTUS_WAIT_BLOCK", "sometimes", "APTUS_WAIT_BLOCK=sometimes is out of range (auto, 0, 1, no, yes)");
}

/* A bound that names another variable: the retransmission timeout's bounds. The variable set
 * in the environment is the one blamed, with the other's value. */
static void test_relation(void)
{
    char err[512];
    setenv("APTUS_UD_RTO_MIN_US", "5000", 1);
    setenv("APTUS_UD_RTO_MAX_US", "5000", 1);
    CHECK(init_quiet(err, sizeof err) == 0 && aptus_config.ud_rto_min_us == 5000 && aptus_config.ud_rto_max_us == 5000);
    unsetenv("APTUS_UD_RTO_MAX_US");
    unsetenv("APTUS_UD_RTO_MIN_US");
    EXPECT_ERR("APTUS_UD_RTO_MAX_US", "500",
               "APTUS_UD_RTO_MAX_US=500 is out of range (APTUS_UD_RTO_MIN_US..max, with APTUS_UD_RTO_MIN_US=1000)");
    EXPECT_ERR(
        "APTUS_UD_RTO_MIN_US", "2000000",
        "APTUS_UD_RTO_MIN_US=2000000 is out of range (1..APTUS_UD_RTO_MAX_US, with APTUS_UD_RTO_MAX_US=1000000)");
    EXPECT_ERR("APTUS_UD_RTO_MIN_US", "-1",
               "APTUS_UD_RTO_MIN_US=-1 is out of range (1..APTUS_UD_RTO_MAX_US, with APTUS_UD_RTO_MAX_US=1000000)");
    /* both set, inverted: the first of the table is blamed, with the other's value */
    setenv("APTUS_UD_RTO_MAX_US", "100", 1);
    EXPECT_ERR("APTUS_UD_RTO_MIN_US", "200",
               "APTUS_UD_RTO_MIN_US=200 is out of range (1..APTUS_UD_RTO_MAX_US, with APTUS_UD_RTO_MAX_US=100)");
    unsetenv("APTUS_UD_RTO_MAX_US");
}

/* ---- every variable of the table against its range ------------------------------------ */

/* Where each variable lives in struct aptus_config, in table order (as config.c has it). */
static const size_t field_offset[] = {
#define APTUS_CVAR(NAME, field, type, ctype, dflt, range, desc) offsetof(struct aptus_config, field),
#include "runtime/config_vars.def"
#undef APTUS_CVAR
};

/* Sets NAME=text, reads the configuration: accepted (0) or refused (-1, message in err). */
static int try_value(const char *name, const char *text, char *err, size_t errlen)
{
    setenv(name, text, 1);
    int rc = init_quiet(err, errlen);
    unsetenv(name);
    return rc;
}

/* Whether the number lies in the parsed range (the test's own reading of it). */
static int allowed(const struct aptus_cvar_desc *d, const struct aptus_cvar_range *r, int64_t v, uint64_t u)
{
    int is_int = d->type == APTUS_CVAR_INT;
    if (is_int ? (uint64_t)(v < 0 ? -v : v) % r->multiple : u % r->multiple)
        return 0;
    for (int k = 0; k < r->n; k++)
        if (is_int ? (v >= r->span[k].lo && v <= r->span[k].hi) : (u >= r->span[k].ulo && u <= r->span[k].uhi))
            return 1;
    return 0;
}

/* One number for variable i: accepted and stored when the range allows it, refused with
 * "NAME=VALUE is out of range (RANGE...)" when not. */
static void probe_number(int i, const struct aptus_cvar_desc *d, const struct aptus_cvar_range *r, int64_t v,
                         uint64_t u)
{
    char text[32], err[512], want[256];
    if (d->type == APTUS_CVAR_INT)
        snprintf(text, sizeof text, "%" PRId64, v);
    else
        snprintf(text, sizeof text, "%" PRIu64, u);
    int ok = allowed(d, r, v, u);
    int rc = try_value(d->name, text, err, sizeof err);
    if (ok && rc != 0) {
        fprintf(stderr, "%s=%s (range %s) refused: %s\n", d->name, text, d->range, err);
        failures++;
    } else if (ok) {
        const void *field = (const char *)&aptus_config + field_offset[i];
        int iv;
        size_t sv;
        if (d->type == APTUS_CVAR_INT)
            memcpy(&iv, field, sizeof iv);
        else
            memcpy(&sv, field, sizeof sv);
        if (d->type == APTUS_CVAR_INT ? iv != v : sv != u) {
            fprintf(stderr, "%s=%s accepted but stored as another value\n", d->name, text);
            failures++;
        }
    } else {
        snprintf(want, sizeof want, "%s=%s is out of range (%s", d->name, text, d->range);
        if (rc == 0 || strncmp(err, want, strlen(want)) != 0 || err[strlen(err) - 1] != ')') {
            fprintf(stderr, "%s=%s (range %s): %s\n  expected a refusal: %s...)\n", d->name, text, d->range,
                    rc == 0 ? "accepted" : err, want);
            failures++;
        }
    }
}

static void probe_int_span(int i, const struct aptus_cvar_desc *d, const struct aptus_cvar_range *r,
                           const struct aptus_cvar_span *s)
{
    int64_t probes[] = { s->lo, s->hi, s->lo - 1, s->hi + 1, s->lo + (s->hi - s->lo) / 2, s->lo + 1 };
    for (size_t k = 0; k < sizeof probes / sizeof probes[0]; k++)
        if (probes[k] >= INT_MIN && probes[k] <= INT_MAX)
            probe_number(i, d, r, probes[k], 0);
}

static void probe_size_span(int i, const struct aptus_cvar_desc *d, const struct aptus_cvar_range *r,
                            const struct aptus_cvar_span *s)
{
    uint64_t probes[] = { s->ulo, s->uhi, s->ulo + (s->uhi - s->ulo) / 2, s->ulo + 1 };
    for (size_t k = 0; k < sizeof probes / sizeof probes[0]; k++)
        probe_number(i, d, r, 0, probes[k]);
    if (s->ulo > 0)
        probe_number(i, d, r, 0, s->ulo - 1);
    if (s->uhi < SIZE_MAX)
        probe_number(i, d, r, 0, s->uhi + 1);
}

/* Walks the table: every variable has a range that parses and holds its default, and each
 * value at and beyond the ends of each span (in the range or not, as the test reads it) is
 * accepted or refused with the message that names the variable, the value and the range; a
 * value of the wrong form is refused with the range too. A variable added without a range, or
 * with one that does not parse, fails here. */
static void test_every_range(void)
{
    int count;
    const struct aptus_cvar_desc *t = aptus_config_table(&count);
    char err[512], want[320];
    clear_aptus_env();
    CHECK(init_quiet(err, sizeof err) == 0);
    for (int i = 0; i < count; i++) {
        const struct aptus_cvar_desc *d = &t[i];
        struct aptus_cvar_range r;
        /* the defaults back (a bound naming another variable takes its value) */
        CHECK(init_quiet(err, sizeof err) == 0);
        if (aptus_config_range(i, &r, err, sizeof err) != 0) {
            fprintf(stderr, "%s: %s\n", d->name, err);
            failures++;
            continue;
        }
        /* the default, set explicitly, is accepted */
        if (try_value(d->name, d->default_text, err, sizeof err) != 0) {
            fprintf(stderr, "%s: its default '%s' is refused: %s\n", d->name, d->default_text, err);
            failures++;
        }
        switch (d->type) {
        case APTUS_CVAR_BOOL:
            CHECK(strcmp(d->range, "0, 1") == 0);
            CHECK(try_value(d->name, "1", err, sizeof err) == 0 && try_value(d->name, "off", err, sizeof err) == 0);
            snprintf(want, sizeof want, "%s=2 is not a boolean (0, 1; also yes/no, true/false, on/off)", d->name);
            CHECK(try_value(d->name, "2", err, sizeof err) == -1 && strcmp(err, want) == 0);
            break;
        case APTUS_CVAR_INT:
        case APTUS_CVAR_SIZE:
            CHECK(r.n >= 1 && r.multiple >= 1);
            for (int k = 0; k < r.n; k++) {
                if (d->type == APTUS_CVAR_INT)
                    probe_int_span(i, d, &r, &r.span[k]);
                else
                    probe_size_span(i, d, &r, &r.span[k]);
            }
            if (d->type == APTUS_CVAR_INT) {
                snprintf(want, sizeof want, "%s=2147483648 is out of range (%s)", d->name, d->range);
                CHECK(try_value(d->name, "2147483648", err, sizeof err) == -1 && strcmp(err, want) == 0);
                snprintf(want, sizeof want, "%s=x1 is not an integer (%s)", d->name, d->range);
            } else {
                snprintf(want, sizeof want, "%s=18446744073709551616 is out of range (%s)", d->name, d->range);
                CHECK(try_value(d->name, "18446744073709551616", err, sizeof err) == -1 && strcmp(err, want) == 0);
                snprintf(want, sizeof want, "%s=x1 is not a size (%s; bytes, with an optional K, M or G suffix)",
                         d->name, d->range);
            }
            CHECK(try_value(d->name, "x1", err, sizeof err) == -1 && strcmp(err, want) == 0);
            break;
        case APTUS_CVAR_ENUM: {
            CHECK(r.n >= 1);
            int default_is_word = 0;
            for (int k = 0; k < r.n; k++) {
                char word[64], upper[64];
                snprintf(word, sizeof word, "%.*s", (int)r.word[k].len, d->range + r.word[k].off);
                for (size_t c = 0; c <= strlen(word); c++)
                    upper[c] = (char)(word[c] >= 'a' && word[c] <= 'z' ? word[c] - 'a' + 'A' : word[c]);
                default_is_word |= strcmp(word, d->default_text) == 0;
                const char *const *field = (const char *const *)((const char *)&aptus_config + field_offset[i]);
                setenv(d->name, upper, 1);
                CHECK(init_quiet(err, sizeof err) == 0 && strcmp(*field, word) == 0);
                unsetenv(d->name);
            }
            CHECK(default_is_word);
            snprintf(want, sizeof want, "%s=no_such_word is out of range (%s)", d->name, d->range);
            CHECK(try_value(d->name, "no_such_word", err, sizeof err) == -1 && strcmp(err, want) == 0);
            break;
        }
        case APTUS_CVAR_STRING: CHECK(r.n == 0); break;
        }
    }
    CHECK(init_quiet(err, sizeof err) == 0);
    check_defaults();
}

static void test_error_keeps_previous_values(void)
{
    char err[512];
    setenv("APTUS_SPIN_COUNT", "77", 1);
    setenv("APTUS_SEND_RULES", "smp", 1);
    CHECK(init_quiet(err, sizeof err) == 0 && aptus_config.spin_count == 77);
    setenv("APTUS_SPIN_COUNT", "5", 1);
    setenv("APTUS_SMP_CHUNK", "lots", 1);
    CHECK(init_quiet(err, sizeof err) == -1);
    CHECK(strstr(err, "APTUS_SMP_CHUNK=lots") != NULL);
    CHECK(aptus_config.spin_count == 77);
    CHECK(strcmp(aptus_config.send_rules, "smp") == 0);
    /* A tiny or absent error buffer is safe. */
    char tiny[6];
    CHECK(init_quiet(tiny, sizeof tiny) == -1 && strlen(tiny) == sizeof tiny - 1);
    CHECK(init_quiet(NULL, 0) == -1);
    clear_aptus_env();
    CHECK(init_quiet(err, sizeof err) == 0);
    check_defaults();
}

static void test_unknown_variable_warning(void)
{
    char err[512], cap[4096];
    /* A typo: a warning that names it and suggests the closest variable; not an error. */
    setenv("APTUS_STAT", "1", 1);
    CHECK(init_capturing(err, sizeof err, cap, sizeof cap) == 0);
    CHECK(strstr(cap, "warning") != NULL);
    CHECK(strstr(cap, "APTUS_STAT ") != NULL);
    CHECK(strstr(cap, "did you mean APTUS_STATS?") != NULL);
    CHECK(aptus_config.stats == 0);
    unsetenv("APTUS_STAT");

    setenv("APTUS_SMP_BLOCKSIZE", "1M", 1);
    CHECK(init_capturing(err, sizeof err, cap, sizeof cap) == 0);
    CHECK(strstr(cap, "APTUS_SMP_BLOCKSIZE") != NULL && strstr(cap, "did you mean APTUS_SMP_BLOCK_SIZE?"));
    unsetenv("APTUS_SMP_BLOCKSIZE");

    /* Far from every name: a warning without a suggestion. */
    setenv("APTUS_COMPLETELY_DIFFERENT", "x", 1);
    CHECK(init_capturing(err, sizeof err, cap, sizeof cap) == 0);
    CHECK(strstr(cap, "APTUS_COMPLETELY_DIFFERENT") != NULL && strstr(cap, "did you mean") == NULL);
    unsetenv("APTUS_COMPLETELY_DIFFERENT");

    /* Set by the launcher: silent. Known variables and other prefixes: silent. */
    setenv("APTUS_NODE_ID", "3", 1);
    setenv("APTUS_LOCAL_RANK", "1", 1);
    setenv("APTUS_LOCAL_SIZE", "2", 1);
    setenv("APTUS_NUM_NODES", "4", 1);
    setenv("APTUS_PPN", "4", 1);
    setenv("APTUS_STATS", "1", 1);
    setenv("APTUSX_THING", "1", 1);
    setenv("MY_APTUS_STAT", "1", 1);
    CHECK(init_capturing(err, sizeof err, cap, sizeof cap) == 0);
    CHECK(cap[0] == '\0');
    CHECK(aptus_config.stats == 1);
    unsetenv("APTUSX_THING");
    unsetenv("MY_APTUS_STAT");
    clear_aptus_env();
}

/* Every variable must have a line in the doc naming it (`NAME`), its type and its default. */
static int check_doc(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "cannot open %s\n", path);
        return 1;
    }
    int count;
    const struct aptus_cvar_desc *t = aptus_config_table(&count);
    int *found = calloc((size_t)count, sizeof *found);
    char line[4096];
    while (fgets(line, sizeof line, f)) {
        for (int i = 0; i < count; i++) {
            char name[128], type[32], dflt[256], range[256];
            snprintf(name, sizeof name, "| `%s` |", t[i].name);
            snprintf(type, sizeof type, "| %s |", type_word(t[i].type));
            snprintf(dflt, sizeof dflt, "| `%s` |", t[i].default_text);
            /* a string's range is words for the reader, the others' are values */
            snprintf(range, sizeof range, t[i].type == APTUS_CVAR_STRING ? "| %s |" : "| `%s` |", t[i].range);
            if (strncmp(line, name, strlen(name)) == 0 && strstr(line, type) && strstr(line, dflt) &&
                strstr(line, range))
                found[i] = 1;
        }
    }
    fclose(f);
    int missing = 0;
    for (int i = 0; i < count; i++)
        if (!found[i]) {
            fprintf(stderr, "%s: no table row for %s with type %s, default `%s` and range %s\n", path, t[i].name,
                    type_word(t[i].type), t[i].default_text, t[i].range);
            missing++;
        }
    free(found);
    if (missing)
        return 1;
    printf("%s documents all %d variables\n", path, count);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--check-doc") == 0)
        return check_doc(argv[2]);
    if (argc != 1) {
        fprintf(stderr, "usage: test_config [--check-doc docs/TUNING.md]\n");
        return 2;
    }
    /* The constructor applied the defaults before main; the environment of the test runner
     * must not leak into the tests after that. */
    test_table();
    clear_aptus_env();
    test_defaults();
    test_bool();
    test_int();
    test_size();
    test_given();
    test_tune_file();
    test_string();
    test_enum();
    test_relation();
    test_every_range();
    test_error_keeps_previous_values();
    test_unknown_variable_warning();
    if (failures) {
        fprintf(stderr, "test_config: %d failure(s)\n", failures);
        return 1;
    }
    printf("test_config: all passed\n");
    return 0;
}
