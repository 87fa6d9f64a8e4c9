/* Run-time configuration: one declarative table of variables (name, type, default, range,
 * description), read from the environment (APTUS_*) at MPI_Init; the same table feeds
 * `aptus-info` and docs/TUNING.md. Add a variable by adding one line to config_vars.def. */
#ifndef APTUS_RUNTIME_CONFIG_H
#define APTUS_RUNTIME_CONFIG_H

#include <stddef.h>
#include <stdint.h>

/* An enum is stored as a string (const char *): the allowed word, spelt as in the range. */
enum aptus_cvar_type { APTUS_CVAR_BOOL, APTUS_CVAR_INT, APTUS_CVAR_SIZE, APTUS_CVAR_ENUM, APTUS_CVAR_STRING };

/* The parsed values. One field per line of config_vars.def (same name, lower case). */
struct aptus_config {
#define APTUS_CVAR(NAME, field, type, ctype, dflt, range, desc) ctype field;
#include "runtime/config_vars.def"
#undef APTUS_CVAR
};

extern struct aptus_config aptus_config;

struct aptus_cvar_desc {
    const char *name; /* environment variable, e.g. "APTUS_STATS" */
    enum aptus_cvar_type type;
    const char *default_text;
    const char *range; /* the allowed values, as written in config_vars.def (its top says how) */
    const char *description;
};

/* Reads every variable from the environment and checks it against its range. Returns 0, or -1
 * after writing a message that names the variable, the value and the range into err, e.g.
 * "APTUS_UD_RECV_BUFS=0 is out of range (1..65536)" or "APTUS_SMP_CHUNK=lots is not a size
 * (1..max; ...)". Sizes accept K/M/G suffixes (powers of 1024). */
int aptus_config_init(char *err, size_t errlen);
/* The same without a word on stderr (the tool interface before MPI_Init: MPI_Init reads the
 * configuration again and reports). */
int aptus_config_init_quiet(void);
/* Whether the environment (1), the tune file (2) or a tool (3, MPI_T_cvar_write) set the variable, else 0 (it has its
 * default): for a layer whose default depends on the job (e.g. the smp channel's on an oversubscribed node). */
int aptus_config_given(const char *name);
/* The tune file read by the last successful aptus_config_init ("" when none), and the one
 * APTUS_TUNE_FILE=auto reads (<sysconfdir>/aptus/tune.conf of the installation). */
const char *aptus_config_tune_file(void);
const char *aptus_config_tune_default(void);
/* The default text of a variable of the table (NULL: no such variable). */
const char *aptus_config_default(const char *name);
/* The value of variable i now: numbers (bool, int, size) in *v, words and strings in *s.
 * 0, or -1 when there is no such variable. */
int aptus_config_read(int i, int64_t *v, const char **s);
/* The tool interface's write (MPI_T_cvar_write): parses `text` as the environment's value would
 * be, checks the range, and sets variable i; the value also wins over the environment at the next
 * aptus_config_init (a write before MPI_Init). aptus_config_given() then says 3. 0, or -1 with a
 * message naming the variable in err (aptus_config unchanged). The caller holds the library's
 * lock. */
int aptus_config_write(int i, const char *text, char *err, size_t errlen);
/* The table, for listing. */
const struct aptus_cvar_desc *aptus_config_table(int *count);

/* The range of variable i of the table, parsed; bounds that name another variable are given that
 * variable's value in aptus_config. For tests and tools. */
#define APTUS_CVAR_ITEMS_MAX 8
struct aptus_cvar_range {
    int n; /* int, size: spans; enum: words; bool, string: 0 */
    struct aptus_cvar_span {
        int64_t lo, hi;     /* int */
        uint64_t ulo, uhi;  /* size */
        int lo_var, hi_var; /* the variable a bound names (index in the table), or -1 */
    } span[APTUS_CVAR_ITEMS_MAX];
    uint64_t multiple; /* int, size: values must be multiples of it (1: any) */
    struct {
        unsigned off, len; /* enum: a word, at range[off..off+len) */
    } word[APTUS_CVAR_ITEMS_MAX];
};
/* 0, or -1 with a message when the range text of variable i does not parse (a fault of
 * config_vars.def, which the unit test finds). */
int aptus_config_range(int i, struct aptus_cvar_range *r, char *err, size_t errlen);

#endif
