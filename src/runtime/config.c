/* Run-time configuration: the table of variables built from config_vars.def, the parsed
 * values in `aptus_config`, the environment reader and the range checker (see config.h). */
#include "runtime/config.h"
#include "runtime/text.h"

#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern char **environ;

struct aptus_config aptus_config;

/* ---- the table ---------------------------------------------------------------------- */

static const struct aptus_cvar_desc cvar_table[] = {
#define APTUS_CVAR(NAME, field, type, ctype, dflt, range, desc) { #NAME, type, dflt, range, desc },
#include "runtime/config_vars.def"
#undef APTUS_CVAR
};

/* Where each variable lives in struct aptus_config, in table order. */
static const size_t cvar_offset[] = {
#define APTUS_CVAR(NAME, field, type, ctype, dflt, range, desc) offsetof(struct aptus_config, field),
#include "runtime/config_vars.def"
#undef APTUS_CVAR
};

enum { CVAR_COUNT = (int)(sizeof cvar_table / sizeof cvar_table[0]) };

/* APTUS_* variables that are not tunables but belong to the launcher (tools/mpiexec): set by
 * it for the library to read, or read by it and inherited by the ranks. They are never
 * reported as unknown. This is the only list of them. */
static const char *const launcher_vars[] = {
    "APTUS_NODE_ID",    /* set: index of the node this rank runs on */
    "APTUS_LOCAL_RANK", /* set: rank among the ranks of its node */
    "APTUS_LOCAL_SIZE", /* set: number of ranks on its node */
    "APTUS_NUM_NODES",  /* set: number of nodes of the job */
    "APTUS_PPN",        /* read by mpiexec: processes per node (default for --ppn) */
    "APTUS_MPIEXEC",    /* set: the job runs under our mpiexec (it serves MPI_Comm_spawn: tools/mpiexec/spawn.c) */
    /* set by mpiexec for a job MPI_Comm_spawn started (mpiexec --app-exec): */
    "APTUS_SPAWN_APPS", /* the commands and their ranks */
    "APTUS_APPNUM",     /* this rank's command (MPI_APPNUM) */
};

/* Which variables the environment set, as of the last successful aptus_config_init. */
static unsigned char cvar_given[CVAR_COUNT];

int aptus_config_given(const char *name)
{
    for (int i = 0; i < CVAR_COUNT; i++)
        if (!strcmp(cvar_table[i].name, name))
            return cvar_given[i];
    return 0;
}

const char *aptus_config_default(const char *name)
{
    for (int i = 0; i < CVAR_COUNT; i++)
        if (!strcmp(cvar_table[i].name, name))
            return cvar_table[i].default_text;
    return NULL;
}

const struct aptus_cvar_desc *aptus_config_table(int *count)
{
    if (count)
        *count = CVAR_COUNT;
    return cvar_table;
}

/* ---- value parsers ------------------------------------------------------------------ */

/* The text without leading/trailing blanks: returns its start and sets *len. */
static const char *trim_n(const char *s, size_t n, size_t *len)
{
    while (n > 0 && (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')) {
        s++;
        n--;
    }
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n' || s[n - 1] == '\r'))
        n--;
    *len = n;
    return s;
}

static const char *trim(const char *s, size_t *len)
{
    return trim_n(s, strlen(s), len);
}

/* Case-insensitive comparison of s[0..len) with a lower-case word. */
static int word_eq(const char *s, size_t len, const char *word)
{
    return aptus_text_eq_nocase(s, len, word);
}

/* The value is quoted in messages, shortened so that a huge value cannot drown the name. */
#define QUOTE_MAX 64

/* "NAME=VALUE" into buf: the value as given, in quotes when it is empty or holds a blank. */
static void name_value(char *buf, size_t len, const char *name, const char *text)
{
    int blank = !*text;
    for (const char *p = text; *p && !blank; p++)
        blank = (unsigned char)*p <= ' ';
    snprintf(buf, len, blank ? "%s='%.*s'" : "%s=%.*s", name, QUOTE_MAX, text);
}

/* Decimal integer with an optional sign: 0, 1 if it is not one, 2 if it does not fit in 64 bits. */
static int text_int(const char *p, size_t n, int64_t *out)
{
    const char *end = p + n;
    int neg = 0;
    if (p < end && (*p == '+' || *p == '-'))
        neg = (*p++ == '-');
    if (p == end)
        return 1;
    uint64_t acc = 0;
    int too_large = 0;
    for (; p < end; p++) {
        if (*p < '0' || *p > '9')
            return 1;
        if (acc > (UINT64_MAX - 9) / 10)
            too_large = 1;
        else
            acc = acc * 10 + (uint64_t)(*p - '0');
    }
    if (too_large || acc > (uint64_t)INT64_MAX)
        return 2;
    *out = neg ? -(int64_t)acc : (int64_t)acc;
    return 0;
}

static int var_index(const char *s, size_t n)
{
    for (int i = 0; i < CVAR_COUNT; i++)
        if (strlen(cvar_table[i].name) == n && memcmp(cvar_table[i].name, s, n) == 0)
            return i;
    return -1;
}

/* ---- ranges ------------------------------------------------------------------------- */

/* One bound of a span: a number, "max" or the name of a variable of the same type. */
static int parse_bound(int i, const char *s, size_t n, int64_t *v, uint64_t *u, int *var)
{
    enum aptus_cvar_type type = cvar_table[i].type;
    *var = -1;
    if (n == 3 && memcmp(s, "max", 3) == 0) {
        *v = INT_MAX;
        *u = SIZE_MAX;
        return 0;
    }
    if (n > 6 && memcmp(s, "APTUS_", 6) == 0) {
        int j = var_index(s, n);
        if (j < 0 || j == i || cvar_table[j].type != type)
            return -1;
        *var = j;
        return 0;
    }
    if (type == APTUS_CVAR_INT)
        return text_int(s, n, v) != 0 || *v < INT_MIN || *v > INT_MAX ? -1 : 0;
    return aptus_text_bytes(s, n, u) != 0 || *u > (uint64_t)SIZE_MAX ? -1 : 0;
}

/* The value of variable j in cfg, as a signed or unsigned number. */
static void var_value(const struct aptus_config *cfg, int j, int64_t *v, uint64_t *u)
{
    const void *field = (const char *)cfg + cvar_offset[j];
    if (cvar_table[j].type == APTUS_CVAR_INT) {
        int x;
        memcpy(&x, field, sizeof x);
        *v = x;
    } else {
        size_t x;
        memcpy(&x, field, sizeof x);
        *u = x;
    }
}

/* Bytes of variable i's field. */
static size_t field_size(int i)
{
    switch (cvar_table[i].type) {
    case APTUS_CVAR_BOOL:
    case APTUS_CVAR_INT: return sizeof(int);
    case APTUS_CVAR_SIZE: return sizeof(size_t);
    default: return sizeof(const char *);
    }
}

int aptus_config_read(int i, int64_t *v, const char **s)
{
    if (i < 0 || i >= CVAR_COUNT)
        return -1;
    const void *field = (const char *)&aptus_config + cvar_offset[i];
    *v = 0;
    *s = NULL;
    switch (cvar_table[i].type) {
    case APTUS_CVAR_BOOL:
    case APTUS_CVAR_INT: {
        int x;
        memcpy(&x, field, sizeof x);
        *v = x;
        break;
    }
    case APTUS_CVAR_SIZE: {
        size_t x;
        memcpy(&x, field, sizeof x);
        *v = (int64_t)x;
        break;
    }
    default: memcpy(s, field, sizeof *s); break;
    }
    return 0;
}

static int range_error(int i, char *err, size_t errlen, const char *what)
{
    snprintf(err, errlen, "%s: the range '%s' in config_vars.def %s", cvar_table[i].name,
             cvar_table[i].range ? cvar_table[i].range : "", what);
    return -1;
}

/* Parses the range of variable i; bounds naming a variable take its value in cfg. */
static int parse_range(int i, const struct aptus_config *cfg, struct aptus_cvar_range *r, char *err, size_t errlen)
{
    const struct aptus_cvar_desc *d = &cvar_table[i];
    memset(r, 0, sizeof *r);
    r->multiple = 1;
    const char *t = d->range;
    if (!t || !*t)
        return range_error(i, err, errlen, "is empty: every variable needs one");
    if (d->type == APTUS_CVAR_STRING)
        return 0; /* words for the reader; the value's own parser checks it at start-up */
    if (d->type == APTUS_CVAR_BOOL)
        return strcmp(t, "0, 1") == 0 ? 0 : range_error(i, err, errlen, "is not \"0, 1\" (a bool)");
    for (const char *p = t;;) {
        size_t n, len = strcspn(p, ",");
        const char *item = trim_n(p, len, &n);
        if (n == 0)
            return range_error(i, err, errlen, "has an empty item");
        if (r->n == APTUS_CVAR_ITEMS_MAX)
            return range_error(i, err, errlen, "has too many items");
        if (d->type == APTUS_CVAR_ENUM) {
            for (size_t k = 0; k < n; k++)
                if (!((item[k] >= 'a' && item[k] <= 'z') || (item[k] >= '0' && item[k] <= '9') || item[k] == '_' ||
                      (item[k] == '-' && k > 0)))
                    return range_error(i, err, errlen,
                                       "has a word that is not lower case letters, digits, '_' and inner '-'");
            r->word[r->n].off = (unsigned)(item - t);
            r->word[r->n].len = (unsigned)n;
            r->n++;
        } else if (n > 12 && memcmp(item, "multiple of ", 12) == 0) {
            int64_t v = 0;
            uint64_t u = 0;
            int var;
            if (r->multiple != 1 || parse_bound(i, item + 12, n - 12, &v, &u, &var) != 0 || var >= 0)
                return range_error(i, err, errlen, "has a bad 'multiple of'");
            uint64_t m = d->type == APTUS_CVAR_INT ? (uint64_t)v : u;
            if (m < 2 || (d->type == APTUS_CVAR_INT && v < 2))
                return range_error(i, err, errlen, "has a bad 'multiple of'");
            r->multiple = m;
        } else {
            struct aptus_cvar_span *s = &r->span[r->n];
            const char *dots = NULL;
            for (size_t k = 0; k + 1 < n; k++)
                if (item[k] == '.' && item[k + 1] == '.') {
                    dots = item + k;
                    break;
                }
            size_t lo_n = dots ? (size_t)(dots - item) : n;
            const char *hi_s = dots ? dots + 2 : item;
            size_t hi_n = dots ? n - lo_n - 2 : n;
            if (parse_bound(i, item, lo_n, &s->lo, &s->ulo, &s->lo_var) != 0 ||
                parse_bound(i, hi_s, hi_n, &s->hi, &s->uhi, &s->hi_var) != 0)
                return range_error(i, err, errlen, "has an item that is not N, LO..HI or 'multiple of N'");
            if (s->lo_var >= 0)
                var_value(cfg, s->lo_var, &s->lo, &s->ulo);
            if (s->hi_var >= 0)
                var_value(cfg, s->hi_var, &s->hi, &s->uhi);
            if (s->lo_var < 0 && s->hi_var < 0 && (d->type == APTUS_CVAR_INT ? s->lo > s->hi : s->ulo > s->uhi))
                return range_error(i, err, errlen, "has a span whose low end is above its high end");
            r->n++;
        }
        p += len;
        if (!*p)
            break;
        p++;
    }
    if (r->n == 0)
        return range_error(i, err, errlen, "allows nothing");
    return 0;
}

int aptus_config_range(int i, struct aptus_cvar_range *r, char *err, size_t errlen)
{
    char scratch[256];
    if (!err || errlen == 0) {
        err = scratch;
        errlen = sizeof scratch;
    }
    if (i < 0 || i >= CVAR_COUNT || !r) {
        snprintf(err, errlen, "no variable %d in the table", i);
        return -1;
    }
    return parse_range(i, &aptus_config, r, err, errlen);
}

/* Whether the number (v for int, u for size) lies in the range. */
static int in_range(int i, const struct aptus_cvar_range *r, int64_t v, uint64_t u)
{
    int is_int = cvar_table[i].type == APTUS_CVAR_INT;
    if (is_int ? (uint64_t)(v < 0 ? -v : v) % r->multiple != 0 : u % r->multiple != 0)
        return 0;
    for (int k = 0; k < r->n; k++) {
        const struct aptus_cvar_span *s = &r->span[k];
        if (is_int ? (v >= s->lo && v <= s->hi) : (u >= s->ulo && u <= s->uhi))
            return 1;
    }
    return 0;
}

/* "NAME=VALUE is out of range (RANGE[, with OTHER=VALUE...])": the values of the variables the
 * range names are given too. */
static void out_of_range(int i, const char *text, const struct aptus_config *cfg, const struct aptus_cvar_range *r,
                         char *err, size_t errlen)
{
    char nv[QUOTE_MAX + 80];
    name_value(nv, sizeof nv, cvar_table[i].name, text);
    int used = snprintf(err, errlen, "%s is out of range (%s", nv, cvar_table[i].range);
    for (int k = 0; r && k < r->n && used >= 0 && (size_t)used < errlen; k++)
        for (int side = 0; side < 2; side++) {
            int j = side ? r->span[k].hi_var : r->span[k].lo_var;
            if (j < 0 || (side && j == r->span[k].lo_var))
                continue;
            int64_t v = 0;
            uint64_t u = 0;
            var_value(cfg, j, &v, &u);
            used += snprintf(err + used, errlen - (size_t)used, ", with %s=", cvar_table[j].name);
            if (used >= 0 && (size_t)used < errlen)
                used += cvar_table[j].type == APTUS_CVAR_INT
                            ? snprintf(err + used, errlen - (size_t)used, "%lld", (long long)v)
                            : snprintf(err + used, errlen - (size_t)used, "%llu", (unsigned long long)u);
        }
    if (used >= 0 && (size_t)used < errlen)
        snprintf(err + used, errlen - (size_t)used, ")");
}

static int parse_bool(int i, const char *text, int *out, char *err, size_t errlen)
{
    static const char *const yes[] = { "1", "yes", "true", "on" };
    static const char *const no[] = { "0", "no", "false", "off" };
    size_t n;
    const char *v = trim(text, &n);
    for (size_t k = 0; k < sizeof yes / sizeof yes[0]; k++) {
        if (word_eq(v, n, yes[k])) {
            *out = 1;
            return 0;
        }
        if (word_eq(v, n, no[k])) {
            *out = 0;
            return 0;
        }
    }
    char nv[QUOTE_MAX + 80];
    name_value(nv, sizeof nv, cvar_table[i].name, text);
    snprintf(err, errlen, "%s is not a boolean (%s; also yes/no, true/false, on/off)", nv, cvar_table[i].range);
    return -1;
}

static int parse_int(int i, const char *text, int *out, char *err, size_t errlen)
{
    size_t n;
    const char *p = trim(text, &n);
    int64_t v;
    int rc = text_int(p, n, &v);
    char nv[QUOTE_MAX + 80];
    if (rc == 1) {
        name_value(nv, sizeof nv, cvar_table[i].name, text);
        snprintf(err, errlen, "%s is not an integer (%s)", nv, cvar_table[i].range);
        return -1;
    }
    if (rc == 2 || v < INT_MIN || v > INT_MAX) {
        out_of_range(i, text, NULL, NULL, err, errlen);
        return -1;
    }
    *out = (int)v;
    return 0;
}

static int parse_size(int i, const char *text, size_t *out, char *err, size_t errlen)
{
    size_t n;
    const char *p = trim(text, &n);
    uint64_t v = 0;
    int rc = aptus_text_bytes(p, n, &v);
    if (rc == 1) {
        char nv[QUOTE_MAX + 80];
        name_value(nv, sizeof nv, cvar_table[i].name, text);
        snprintf(err, errlen, "%s is not a size (%s; bytes, with an optional K, M or G suffix)", nv,
                 cvar_table[i].range);
        return -1;
    }
    if (rc == 2 || v > (uint64_t)SIZE_MAX) {
        out_of_range(i, text, NULL, NULL, err, errlen);
        return -1;
    }
    *out = (size_t)v;
    return 0;
}

/* An enum value: one of the range's words in any letter case; *word is the word as the range
 * spells it (r parsed). */
static int parse_enum(int i, const struct aptus_cvar_range *r, const char *text, const char **word, size_t *wlen,
                      char *err, size_t errlen)
{
    size_t n;
    const char *v = trim(text, &n);
    for (int k = 0; k < r->n; k++) {
        const char *w = cvar_table[i].range + r->word[k].off;
        char lower[64];
        if (r->word[k].len >= sizeof lower)
            continue;
        memcpy(lower, w, r->word[k].len);
        lower[r->word[k].len] = '\0';
        if (word_eq(v, n, lower)) {
            *word = w;
            *wlen = r->word[k].len;
            return 0;
        }
    }
    out_of_range(i, text, NULL, NULL, err, errlen);
    return -1;
}

/* A copy of s[0..n), or NULL. */
static char *copy_n(const char *s, size_t n)
{
    char *c = malloc(n + 1);
    if (c) {
        memcpy(c, s, n);
        c[n] = '\0';
    }
    return c;
}

/* Stores `text` into the field of variable i in cfg. Strings and enum words are copied (into
 * *owned, or leaked once per process for the defaults applied at load) so that the value
 * survives later changes to the environment. The range is checked later (check_range), once
 * every value is in: a bound may name another variable. */
static int set_value(struct aptus_config *cfg, int i, const char *text, char **owned, char *err, size_t errlen)
{
    const struct aptus_cvar_desc *d = &cvar_table[i];
    void *field = (char *)cfg + cvar_offset[i];
    switch (d->type) {
    case APTUS_CVAR_BOOL: {
        int b;
        if (parse_bool(i, text, &b, err, errlen))
            return -1;
        memcpy(field, &b, sizeof b);
        return 0;
    }
    case APTUS_CVAR_INT: {
        int n;
        if (parse_int(i, text, &n, err, errlen))
            return -1;
        memcpy(field, &n, sizeof n);
        return 0;
    }
    case APTUS_CVAR_SIZE: {
        size_t n;
        if (parse_size(i, text, &n, err, errlen))
            return -1;
        memcpy(field, &n, sizeof n);
        return 0;
    }
    case APTUS_CVAR_ENUM:
    case APTUS_CVAR_STRING: {
        const char *s = text;
        size_t n = strlen(text);
        if (d->type == APTUS_CVAR_ENUM) {
            struct aptus_cvar_range r;
            if (parse_range(i, cfg, &r, err, errlen) || parse_enum(i, &r, text, &s, &n, err, errlen))
                return -1;
        }
        char *copy = copy_n(s, n);
        if (!copy) {
            snprintf(err, errlen, "%s: out of memory", d->name);
            return -1;
        }
        if (owned)
            *owned = copy;
        s = copy;
        memcpy(field, &s, sizeof s);
        return 0;
    }
    }
    snprintf(err, errlen, "%s: unknown variable type %d", d->name, (int)d->type);
    return -1;
}

/* Checks the value of variable i in cfg (given as `text`) against its range. */
static int check_range(const struct aptus_config *cfg, int i, const char *text, char *err, size_t errlen)
{
    enum aptus_cvar_type type = cvar_table[i].type;
    struct aptus_cvar_range r;
    if (parse_range(i, cfg, &r, err, errlen))
        return -1;
    if (type != APTUS_CVAR_INT && type != APTUS_CVAR_SIZE)
        return 0; /* bool and enum: parsing checked them; string: its own parser does */
    int64_t v = 0;
    uint64_t u = 0;
    var_value(cfg, i, &v, &u);
    if (in_range(i, &r, v, u))
        return 0;
    out_of_range(i, text, cfg, &r, err, errlen);
    return -1;
}

/* Strings copied for the values now in aptus_config. */
static char *owned_strings[CVAR_COUNT];

/* Fills cfg with every default, and checks them. The defaults are text in config_vars.def; a
 * default that does not parse or is out of its range is a bug in that file, reported like a bad
 * environment value (the unit test finds it). */
static int apply_defaults(struct aptus_config *cfg, char **owned, char *err, size_t errlen)
{
    memset(cfg, 0, sizeof *cfg);
    for (int i = 0; i < CVAR_COUNT; i++)
        if (set_value(cfg, i, cvar_table[i].default_text, owned ? &owned[i] : NULL, err, errlen))
            return -1;
    for (int i = 0; i < CVAR_COUNT; i++)
        if (check_range(cfg, i, cvar_table[i].default_text, err, errlen))
            return -1;
    return 0;
}

#if defined(__GNUC__)
/* The defaults hold before aptus_config_init runs (and in programs that never call it). */
__attribute__((constructor)) static void config_defaults_at_load(void)
{
    char err[256];
    (void)apply_defaults(&aptus_config, owned_strings, err, sizeof err);
}
#endif

/* ---- unknown APTUS_* variables ------------------------------------------------------ */

static int is_known_name(const char *name, size_t len)
{
    for (int i = 0; i < CVAR_COUNT; i++)
        if (strlen(cvar_table[i].name) == len && memcmp(cvar_table[i].name, name, len) == 0)
            return 1;
    for (size_t i = 0; i < sizeof launcher_vars / sizeof launcher_vars[0]; i++)
        if (strlen(launcher_vars[i]) == len && memcmp(launcher_vars[i], name, len) == 0)
            return 1;
    /* scripts/netns.sh exports the names of the namespaces it made (APTUS_NETNS_HOSTS, ...). */
    return len > 12 && memcmp(name, "APTUS_NETNS_", 12) == 0;
}

/* Edit distance between a[0..alen) and b, capped at 9 (only small distances matter). */
static unsigned edit_distance(const char *a, size_t alen, const char *b)
{
    size_t blen = strlen(b);
    if (alen > 63 || blen > 63)
        return 9;
    unsigned row[64];
    for (size_t j = 0; j <= blen; j++)
        row[j] = (unsigned)j;
    for (size_t i = 1; i <= alen; i++) {
        unsigned diag = row[0];
        row[0] = (unsigned)i;
        for (size_t j = 1; j <= blen; j++) {
            unsigned up = row[j];
            unsigned best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[blen] > 9 ? 9 : row[blen];
}

/* aptus_config_init_quiet under way: no warnings. */
static int quiet;

static void warn_unknown_variables(void)
{
    if (!environ || quiet)
        return;
    for (char **e = environ; *e; e++) {
        const char *s = *e;
        if (strncmp(s, "APTUS_", 6) != 0)
            continue;
        const char *eq = strchr(s, '=');
        size_t len = eq ? (size_t)(eq - s) : strlen(s);
        if (is_known_name(s, len))
            continue;
        const char *best = NULL;
        unsigned best_d = 4; /* suggest only close names */
        for (int i = 0; i < CVAR_COUNT; i++) {
            unsigned d = edit_distance(s, len, cvar_table[i].name);
            if (d < best_d) {
                best_d = d;
                best = cvar_table[i].name;
            }
        }
        if (best)
            fprintf(stderr,
                    "aptus: warning: %.*s is not a configuration variable and is ignored "
                    "(did you mean %s?)\n",
                    (int)len, s, best);
        else
            fprintf(stderr,
                    "aptus: warning: %.*s is not a configuration variable and is ignored "
                    "(`aptus-info` lists them)\n",
                    (int)len, s);
    }
}

/* ---- the tune file -------------------------------------------------------------------- */

#ifndef APTUS_SYSCONFDIR
#define APTUS_SYSCONFDIR "/usr/local/etc"
#endif

const char *aptus_config_tune_default(void)
{
    return APTUS_SYSCONFDIR "/aptus/tune.conf";
}

/* The tune file in use after the last successful aptus_config_init ("" when none). */
static char tune_path[512];

const char *aptus_config_tune_file(void)
{
    return tune_path;
}

/* The file of APTUS_TUNE_FILE (env or default): NULL for none (auto and no file there). A
 * name given explicitly must exist. */
static FILE *tune_open(char *path, size_t len, char *err, size_t errlen)
{
    const char *v = getenv("APTUS_TUNE_FILE");
    size_t n;
    const char *t = v ? trim(v, &n) : "auto";
    if (!v)
        n = 4;
    if (word_eq(t, n, "none"))
        return NULL;
    int autoname = word_eq(t, n, "auto");
    if (autoname)
        snprintf(path, len, "%s", aptus_config_tune_default());
    else
        snprintf(path, len, "%.*s", (int)n, t);
    FILE *f = fopen(path, "r");
    if (!f && !autoname)
        snprintf(err, errlen, "APTUS_TUNE_FILE=%s: cannot read it (%s)", path, strerror(errno));
    return f;
}

/* Reads the tune file into cfg: NAME=VALUE lines ('#' starts a comment, blank lines are
 * skipped), each NAME a variable of the table; a variable the environment also sets keeps the
 * environment's value (it is set after). The values' text stays in *text (freed by the
 * caller) for the range checks' messages; line[i] is the line of variable i (0: not in the
 * file). 0, or -1 with a message naming the file and the line. */
static int tune_read(struct aptus_config *cfg, char **owned, const char **given, int *line, char **text, char *err,
                     size_t errlen)
{
    char path[sizeof tune_path];
    err[0] = 0;
    FILE *f = tune_open(path, sizeof path, err, errlen);
    if (!f)
        return err[0] ? -1 : 0;
    size_t cap = 0, used = 0;
    char *buf = NULL, chunk[4096];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) {
        if (used + got + 1 > cap) {
            cap = (used + got + 1) * 2;
            char *nb = realloc(buf, cap);
            if (!nb)
                break;
            buf = nb;
        }
        memcpy(buf + used, chunk, got);
        used += got;
    }
    int bad = ferror(f) || got > 0;
    fclose(f);
    if (bad) {
        free(buf);
        snprintf(err, errlen, "APTUS_TUNE_FILE %s: cannot read it", path);
        return -1;
    }
    if (!buf)
        buf = calloc(1, 1);
    if (!buf) {
        snprintf(err, errlen, "APTUS_TUNE_FILE %s: out of memory", path);
        return -1;
    }
    buf[used] = 0;
    *text = buf;
    int ln = 0;
    for (char *p = buf; *p;) {
        char *end = strchr(p, '\n');
        if (end)
            *end = 0;
        ln++;
        char *hash = strchr(p, '#');
        if (hash)
            *hash = 0;
        size_t n;
        const char *s = trim(p, &n);
        p = end ? end + 1 : p + strlen(p);
        if (!n)
            continue;
        const char *eq = memchr(s, '=', n);
        size_t nlen;
        const char *name = eq ? trim_n(s, (size_t)(eq - s), &nlen) : s;
        int i = eq ? var_index(name, nlen) : -1;
        if (!eq || i < 0 || !strcmp(cvar_table[i].name, "APTUS_TUNE_FILE")) {
            snprintf(
                err, errlen,
                "APTUS_TUNE_FILE %s line %d: '%.*s' is not NAME=VALUE with NAME a variable (`aptus-info` lists them)",
                path, ln, QUOTE_MAX, s);
            return -1;
        }
        if (getenv(cvar_table[i].name))
            continue;
        size_t vlen;
        char *value = (char *)trim_n(eq + 1, n - (size_t)(eq + 1 - s), &vlen);
        value[vlen] = 0;
        free(owned[i]);
        owned[i] = NULL;
        char msg[384];
        if (set_value(cfg, i, value, &owned[i], msg, sizeof msg) != 0) {
            snprintf(err, errlen, "APTUS_TUNE_FILE %s line %d: %s", path, ln, msg);
            return -1;
        }
        given[i] = value;
        line[i] = ln;
    }
    snprintf(tune_path, sizeof tune_path, "%s", path);
    return 0;
}

/* ---- the tool interface's writes ---------------------------------------------------- */

/* Values written through the tool interface (MPI_T_cvar_write), as text: a later
 * aptus_config_init (MPI_Init after a tool wrote before it) applies them after the environment. */
static char *tool_text[CVAR_COUNT];
/* Strings a write replaced: kept, never reused, so that a reader comparing a string's address
 * with the one it saw last (the collectives' algorithm choice) cannot mistake a new value for an
 * old one at the same address. */
static struct retired_string {
    struct retired_string *next;
    char *s;
} * retired;

int aptus_config_write(int i, const char *text, char *err, size_t errlen)
{
    if (i < 0 || i >= CVAR_COUNT || !text) {
        snprintf(err, errlen, "no variable %d", i);
        return -1;
    }
    struct aptus_config cfg = aptus_config;
    char *owned = NULL;
    if (set_value(&cfg, i, text, &owned, err, errlen) != 0)
        return -1;
    if (check_range(&cfg, i, text, err, errlen) != 0) {
        free(owned);
        return -1;
    }
    char *keep = strdup(text);
    struct retired_string *old = owned_strings[i] ? malloc(sizeof *old) : NULL;
    if (!keep || (owned_strings[i] && !old)) {
        free(keep);
        free(old);
        free(owned);
        snprintf(err, errlen, "%s: out of memory", cvar_table[i].name);
        return -1;
    }
    if (old) {
        old->s = owned_strings[i];
        old->next = retired;
        retired = old;
    }
    owned_strings[i] = owned;
    free(tool_text[i]);
    tool_text[i] = keep;
    cvar_given[i] = 3;
    /* only this variable's field: the others may be read meanwhile */
    memcpy((char *)&aptus_config + cvar_offset[i], (char *)&cfg + cvar_offset[i], field_size(i));
    return 0;
}

/* ---- the reader --------------------------------------------------------------------- */

int aptus_config_init(char *err, size_t errlen)
{
    char scratch[256];
    if (!err || errlen == 0) {
        err = scratch;
        errlen = sizeof scratch;
    }
    err[0] = '\0';

    /* Parse into a copy: on error aptus_config keeps its previous values. */
    struct aptus_config cfg;
    char *owned[CVAR_COUNT];
    const char *given[CVAR_COUNT];
    memset(owned, 0, sizeof owned);
    memset(given, 0, sizeof given);
    int rc = apply_defaults(&cfg, owned, err, errlen);
    int line[CVAR_COUNT];
    char *file_text = NULL, prev_tune[sizeof tune_path];
    memset(line, 0, sizeof line);
    memcpy(prev_tune, tune_path, sizeof prev_tune); /* (kept on error, as the values are) */
    tune_path[0] = 0;
    if (rc == 0)
        rc = tune_read(&cfg, owned, given, line, &file_text, err, errlen);
    for (int i = 0; i < CVAR_COUNT && rc == 0; i++) {
        const char *v = getenv(cvar_table[i].name);
        if (!v)
            continue;
        given[i] = v;
        line[i] = 0;
        free(owned[i]);
        owned[i] = NULL;
        rc = set_value(&cfg, i, v, &owned[i], err, errlen);
    }
    /* Values a tool wrote (MPI_T_cvar_write) win over the environment and the file. */
    for (int i = 0; i < CVAR_COUNT && rc == 0; i++)
        if (tool_text[i]) {
            given[i] = tool_text[i];
            line[i] = 0;
            free(owned[i]);
            owned[i] = NULL;
            rc = set_value(&cfg, i, tool_text[i], &owned[i], err, errlen);
        }
    /* Ranges once every value is in (a bound may name another variable): the variables set in the
     * environment first, so that a relation between a value set and a default blames the one
     * set. */
    for (int pass = 0; pass < 2 && rc == 0; pass++)
        for (int i = 0; i < CVAR_COUNT && rc == 0; i++)
            if ((given[i] != NULL) == (pass == 0)) {
                char msg[512];
                rc = check_range(&cfg, i, given[i] ? given[i] : cvar_table[i].default_text, msg, sizeof msg);
                if (rc != 0 && line[i])
                    snprintf(err, errlen, "APTUS_TUNE_FILE %s line %d: %s", tune_path, line[i], msg);
                else if (rc != 0)
                    snprintf(err, errlen, "%s", msg);
            }
    free(file_text);
    if (rc != 0) {
        memcpy(tune_path, prev_tune, sizeof tune_path);
        for (int j = 0; j < CVAR_COUNT; j++)
            free(owned[j]);
        return -1;
    }
    warn_unknown_variables();

    aptus_config = cfg;
    for (int i = 0; i < CVAR_COUNT; i++) {
        free(owned_strings[i]);
        owned_strings[i] = owned[i];
        cvar_given[i] = given[i] == NULL ? 0 : tool_text[i] ? 3 : line[i] ? 2 : 1;
    }
    return 0;
}

int aptus_config_init_quiet(void)
{
    char err[256];
    quiet = 1;
    int rc = aptus_config_init(err, sizeof err);
    quiet = 0;
    return rc;
}
