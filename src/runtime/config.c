/* Run-time configuration: the table of variables built from config_vars.def, the parsed
 * values in `aptus_config`, and the environment reader (see config.h). */
#include "runtime/config.h"
#include "runtime/text.h"

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
#define APTUS_CVAR(NAME, field, type, ctype, dflt, desc) { #NAME, type, dflt, desc },
#include "runtime/config_vars.def"
#undef APTUS_CVAR
};

/* Where each variable lives in struct aptus_config, in table order. */
static const size_t cvar_offset[] = {
#define APTUS_CVAR(NAME, field, type, ctype, dflt, desc) offsetof(struct aptus_config, field),
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
};

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
static const char *trim(const char *s, size_t *len)
{
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
        s++;
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n' || s[n - 1] == '\r'))
        n--;
    *len = n;
    return s;
}

/* Case-insensitive comparison of s[0..len) with a lower-case word. */
static int word_eq(const char *s, size_t len, const char *word)
{
    return aptus_text_eq_nocase(s, len, word);
}

/* The value is quoted in messages, shortened so that a huge value cannot drown the name. */
#define QUOTE_MAX 64

static int parse_bool(const char *name, const char *text, int *out, char *err, size_t errlen)
{
    static const char *const yes[] = { "1", "yes", "true", "on" };
    static const char *const no[] = { "0", "no", "false", "off" };
    size_t n;
    const char *v = trim(text, &n);
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) {
        if (word_eq(v, n, yes[i])) {
            *out = 1;
            return 0;
        }
        if (word_eq(v, n, no[i])) {
            *out = 0;
            return 0;
        }
    }
    snprintf(err, errlen, "%s: '%.*s' is not a boolean (use 0/1, yes/no, true/false or on/off)", name, QUOTE_MAX, text);
    return -1;
}

static int parse_int(const char *name, const char *text, int *out, char *err, size_t errlen)
{
    size_t n;
    const char *p = trim(text, &n);
    const char *end = p + n;
    int neg = 0;
    if (p < end && (*p == '+' || *p == '-'))
        neg = (*p++ == '-');
    if (p == end)
        goto bad;
    long long acc = 0;
    int out_of_range = 0;
    for (; p < end; p++) {
        if (*p < '0' || *p > '9')
            goto bad;
        if (!out_of_range) {
            acc = acc * 10 + (*p - '0');
            if (acc > (long long)INT_MAX + 1)
                out_of_range = 1;
        }
    }
    if (neg)
        acc = -acc;
    if (out_of_range || acc > INT_MAX || acc < INT_MIN) {
        snprintf(err, errlen, "%s: '%.*s' is out of range (%d..%d)", name, QUOTE_MAX, text, INT_MIN, INT_MAX);
        return -1;
    }
    *out = (int)acc;
    return 0;
bad:
    snprintf(err, errlen, "%s: '%.*s' is not an integer", name, QUOTE_MAX, text);
    return -1;
}

static int parse_size(const char *name, const char *text, size_t *out, char *err, size_t errlen)
{
    size_t n;
    const char *p = trim(text, &n);
    uint64_t v = 0;
    int rc = aptus_text_bytes(p, n, &v);
    if (rc == 1) {
        snprintf(err, errlen,
                 "%s: '%.*s' is not a size (use a number of bytes with an optional K, M or G suffix, e.g. 64K)", name,
                 QUOTE_MAX, text);
        return -1;
    }
    if (rc == 2 || v > (uint64_t)SIZE_MAX) {
        snprintf(err, errlen, "%s: '%.*s' is too large", name, QUOTE_MAX, text);
        return -1;
    }
    *out = (size_t)v;
    return 0;
}

/* Stores `text` into the field of variable i in cfg. Strings are copied (into *owned) so that
 * the value survives later changes to the environment. */
static int set_value(struct aptus_config *cfg, int i, const char *text, char **owned, char *err, size_t errlen)
{
    const struct aptus_cvar_desc *d = &cvar_table[i];
    void *field = (char *)cfg + cvar_offset[i];
    switch (d->type) {
    case APTUS_CVAR_BOOL: {
        int b;
        if (parse_bool(d->name, text, &b, err, errlen))
            return -1;
        memcpy(field, &b, sizeof b);
        return 0;
    }
    case APTUS_CVAR_INT: {
        int n;
        if (parse_int(d->name, text, &n, err, errlen))
            return -1;
        memcpy(field, &n, sizeof n);
        return 0;
    }
    case APTUS_CVAR_SIZE: {
        size_t n;
        if (parse_size(d->name, text, &n, err, errlen))
            return -1;
        memcpy(field, &n, sizeof n);
        return 0;
    }
    case APTUS_CVAR_STRING: {
        const char *s = text;
        if (owned) {
            size_t len = strlen(text) + 1;
            char *copy = malloc(len);
            if (!copy) {
                snprintf(err, errlen, "%s: out of memory", d->name);
                return -1;
            }
            memcpy(copy, text, len);
            *owned = copy;
            s = copy;
        }
        memcpy(field, &s, sizeof s);
        return 0;
    }
    }
    snprintf(err, errlen, "%s: unknown variable type %d", d->name, (int)d->type);
    return -1;
}

/* Fills cfg with every default. The defaults are text in config_vars.def; a default that
 * does not parse is a bug in that file, reported like a bad environment value. */
static int apply_defaults(struct aptus_config *cfg, char *err, size_t errlen)
{
    memset(cfg, 0, sizeof *cfg);
    for (int i = 0; i < CVAR_COUNT; i++)
        if (set_value(cfg, i, cvar_table[i].default_text, NULL, err, errlen))
            return -1;
    return 0;
}

/* Strings copied from the environment for the values now in aptus_config. */
static char *owned_strings[CVAR_COUNT];

#if defined(__GNUC__)
/* The defaults hold before aptus_config_init runs (and in programs that never call it). */
__attribute__((constructor)) static void config_defaults_at_load(void)
{
    char err[256];
    (void)apply_defaults(&aptus_config, err, sizeof err);
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

static void warn_unknown_variables(void)
{
    if (!environ)
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
    memset(owned, 0, sizeof owned);
    if (apply_defaults(&cfg, err, errlen))
        return -1;
    for (int i = 0; i < CVAR_COUNT; i++) {
        const char *v = getenv(cvar_table[i].name);
        if (!v)
            continue;
        if (set_value(&cfg, i, v, &owned[i], err, errlen)) {
            for (int j = 0; j < CVAR_COUNT; j++)
                free(owned[j]);
            return -1;
        }
    }
    warn_unknown_variables();

    aptus_config = cfg;
    for (int i = 0; i < CVAR_COUNT; i++) {
        free(owned_strings[i]);
        owned_strings[i] = owned[i];
    }
    return 0;
}
