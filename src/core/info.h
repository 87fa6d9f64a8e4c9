/* Info objects (MPI standard, chapter 10): ordered lists of (key, value) strings.
 *
 * Handles are pointers to struct aptus_info; MPI_INFO_ENV is a predefined object built from the
 * process's environment on first use. Other parts of the library read hints with
 * aptus_info_get() + aptus_info_lookup(). */
#ifndef APTUS_CORE_INFO_H
#define APTUS_CORE_INFO_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "core/arena.h"

#define APTUS_MAGIC_INFO 0x496e666fu

/* Longest key and value accepted (characters, without the terminating null): a buffer of
 * MPI_MAX_INFO_KEY / MPI_MAX_INFO_VAL chars always holds what MPI returns. */
#define APTUS_INFO_KEY_MAX (MPI_MAX_INFO_KEY - 1)
#define APTUS_INFO_VAL_MAX (MPI_MAX_INFO_VAL - 1)

struct aptus_info {
    uint32_t magic;
    int predefined; /* MPI_INFO_ENV: cannot be changed or freed */
    int n, cap;     /* keys in insertion order */
    char **keys, **vals;
};
APTUS_OBJ_FITS(struct aptus_info, INFO);

/* The object behind a handle; NULL for MPI_INFO_NULL and invalid handles. */
struct aptus_info *aptus_info_get(MPI_Info h);
/* The value of key, or NULL. */
const char *aptus_info_lookup(const struct aptus_info *info, const char *key);
/* New empty object, copy, destruction (NULL on out of memory). */
struct aptus_info *aptus_info_new(void);
struct aptus_info *aptus_info_dup(const struct aptus_info *info);
void aptus_info_destroy(struct aptus_info *info);
/* Adds or replaces key (no length checks here). Returns 0 or MPI_ERR_NO_MEM. */
int aptus_info_set(struct aptus_info *info, const char *key, const char *value);
/* Removes key: 0, or -1 when it was not there. */
int aptus_info_remove(struct aptus_info *info, const char *key);
/* Fills an object with the MPI_INFO_ENV keys; argv (may be NULL) replaces /proc/self/cmdline. */
int aptus_info_fill_env(struct aptus_info *info, int argc, char **argv);

#endif
