/* Run-time configuration: one declarative table of variables (name, type, default,
 * description), read from the environment (APTUS_*) at MPI_Init; the same table feeds
 * `aptus-info` and docs/TUNING.md. Add a variable by adding one line to config_vars.def. */
#ifndef APTUS_RUNTIME_CONFIG_H
#define APTUS_RUNTIME_CONFIG_H

#include <stddef.h>

enum aptus_cvar_type { APTUS_CVAR_BOOL, APTUS_CVAR_INT, APTUS_CVAR_SIZE, APTUS_CVAR_STRING };

/* The parsed values. One field per line of config_vars.def (same name, lower case). */
struct aptus_config {
#define APTUS_CVAR(NAME, field, type, ctype, dflt, desc) ctype field;
#include "runtime/config_vars.def"
#undef APTUS_CVAR
};

extern struct aptus_config aptus_config;

struct aptus_cvar_desc {
    const char *name; /* environment variable, e.g. "APTUS_STATS" */
    enum aptus_cvar_type type;
    const char *default_text;
    const char *description;
};

/* Reads every variable from the environment. Returns 0, or -1 after writing a message that
 * names the variable and the problem into err (e.g. "APTUS_SMP_BLOCK_SIZE: 'abc' is not a
 * size"). Sizes accept K/M/G suffixes (powers of 1024). */
int aptus_config_init(char *err, size_t errlen);
/* The default text of a variable of the table (NULL: no such variable). */
const char *aptus_config_default(const char *name);
/* The table, for listing. */
const struct aptus_cvar_desc *aptus_config_table(int *count);

#endif
