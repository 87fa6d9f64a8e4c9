/* Info objects and MPI_INFO_ENV (see core/info.h). */
#include "core/info.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "core/objects.h"
#include "runtime/runtime.h"

static struct aptus_info env_info = { .magic = APTUS_MAGIC_INFO, .predefined = 1 };
static int env_built; /* built on first use (the same before and after MPI_Init) */

/* Frees every key and value (the arrays stay). */
static void clear(struct aptus_info *info)
{
    for (int i = 0; i < info->n; i++) {
        free(info->keys[i]);
        free(info->vals[i]);
    }
    info->n = 0;
}

struct aptus_info *aptus_info_get(MPI_Info h)
{
    if (h == MPI_INFO_ENV) {
        if (!env_built) {
            clear(&env_info);
            aptus_info_fill_env(&env_info, 0, NULL);
            env_built = 1;
        }
        return &env_info;
    }
    struct aptus_info *i = (struct aptus_info *)h; /* MPI_INFO_NULL is in no arena slot */
    return aptus_obj_in(h, APTUS_OBJ_INFO) && i->magic == APTUS_MAGIC_INFO ? i : NULL;
}

static int find(const struct aptus_info *info, const char *key)
{
    for (int i = 0; i < info->n; i++)
        if (strcmp(info->keys[i], key) == 0)
            return i;
    return -1;
}

const char *aptus_info_lookup(const struct aptus_info *info, const char *key)
{
    int i = info ? find(info, key) : -1;
    return i < 0 ? NULL : info->vals[i];
}

struct aptus_info *aptus_info_new(void)
{
    struct aptus_info *info = aptus_obj_alloc(APTUS_OBJ_INFO, sizeof *info);
    if (info)
        info->magic = APTUS_MAGIC_INFO;
    return info;
}

void aptus_info_destroy(struct aptus_info *info)
{
    if (!info || info->predefined)
        return;
    clear(info);
    free(info->keys);
    free(info->vals);
    info->magic = 0;
    aptus_obj_free(APTUS_OBJ_INFO, info);
}

int aptus_info_set(struct aptus_info *info, const char *key, const char *value)
{
    char *v = strdup(value);
    if (!v)
        return MPI_ERR_NO_MEM;
    int i = find(info, key);
    if (i >= 0) {
        free(info->vals[i]);
        info->vals[i] = v;
        return MPI_SUCCESS;
    }
    if (info->n == info->cap) {
        int ncap = info->cap ? 2 * info->cap : 8;
        char **k = realloc(info->keys, (size_t)ncap * sizeof *k);
        if (k)
            info->keys = k;
        char **vv = k ? realloc(info->vals, (size_t)ncap * sizeof *vv) : NULL;
        if (!vv) {
            free(v);
            return MPI_ERR_NO_MEM;
        }
        info->vals = vv;
        info->cap = ncap;
    }
    char *k = strdup(key);
    if (!k) {
        free(v);
        return MPI_ERR_NO_MEM;
    }
    info->keys[info->n] = k;
    info->vals[info->n++] = v;
    return MPI_SUCCESS;
}

int aptus_info_remove(struct aptus_info *info, const char *key)
{
    int i = find(info, key);
    if (i < 0)
        return -1;
    free(info->keys[i]);
    free(info->vals[i]);
    memmove(info->keys + i, info->keys + i + 1, (size_t)(info->n - i - 1) * sizeof *info->keys);
    memmove(info->vals + i, info->vals + i + 1, (size_t)(info->n - i - 1) * sizeof *info->vals);
    info->n--;
    return 0;
}

struct aptus_info *aptus_info_dup(const struct aptus_info *info)
{
    struct aptus_info *d = aptus_info_new();
    if (!d)
        return NULL;
    for (int i = 0; i < info->n; i++)
        if (aptus_info_set(d, info->keys[i], info->vals[i]) != MPI_SUCCESS) {
            aptus_info_destroy(d);
            return NULL;
        }
    return d;
}

/* Appends s to buf (of APTUS_INFO_VAL_MAX + 1 bytes) at *len, separated by a space. */
static void append_word(char *buf, size_t *len, const char *s)
{
    size_t cap = APTUS_INFO_VAL_MAX;
    if (*len && *len < cap)
        buf[(*len)++] = ' ';
    size_t n = strlen(s);
    if (n > cap - *len)
        n = cap - *len;
    memcpy(buf + *len, s, n);
    *len += n;
    buf[*len] = 0;
}

int aptus_info_fill_env(struct aptus_info *info, int argc, char **argv)
{
    char val[APTUS_INFO_VAL_MAX + 1];
    size_t len = 0;
    int rc = MPI_SUCCESS;
#define PUT(k, v)                                                                                                      \
    do {                                                                                                               \
        if (rc == MPI_SUCCESS)                                                                                         \
            rc = aptus_info_set(info, k, v);                                                                           \
    } while (0)

    /* command and argv: from the caller's argv, else from /proc/self/cmdline (NUL-separated). */
    val[0] = 0;
    if (argv && argc > 0 && argv[0]) {
        PUT("command", argv[0]);
        for (int i = 1; i < argc && argv[i]; i++)
            append_word(val, &len, argv[i]);
        if (argc > 1)
            PUT("argv", val);
    } else {
        FILE *f = fopen("/proc/self/cmdline", "r");
        if (f) {
            char buf[8192];
            size_t n = fread(buf, 1, sizeof buf - 1, f);
            fclose(f);
            buf[n] = 0;
            if (n > 0) {
                PUT("command", buf);
                for (size_t p = strlen(buf) + 1; p < n; p += strlen(buf + p) + 1)
                    append_word(val, &len, buf + p);
                if (len)
                    PUT("argv", val);
            }
        }
    }
    /* The same before and after MPI_Init: from what the launcher gave the process (PMI_SIZE), or
     * 1 for a process started without one (a singleton). */
    const char *np = getenv("PMI_SIZE");
    char *end;
    long n = np && *np ? strtol(np, &end, 10) : 0;
    if (np && *np && !*end && n > 0 && n <= INT_MAX) {
        snprintf(val, sizeof val, "%ld", n);
        PUT("maxprocs", val);
    } else if (!getenv("PMI_FD")) {
        PUT("maxprocs", "1");
    }
    char host[256];
    if (gethostname(host, sizeof host) == 0) {
        host[sizeof host - 1] = 0;
        PUT("host", host);
    }
    struct utsname u;
    if (uname(&u) == 0)
        PUT("arch", u.machine);
    if (getcwd(val, sizeof val))
        PUT("wdir", val);
        /* No "thread_level": the standard gives it the level requested before the program started
         * (e.g. by an mpiexec option), and no launcher asks for one. */
#undef PUT
    return rc;
}
