/* Info objects (MPI standard, chapter 10). Every MPI_Info_* call may be made at any time,
 * before MPI_Init and after MPI_Finalize too (MPI 4.1, table 9). */
#include <stdio.h>
#include <string.h>

#include "api/check.h"
#include "core/info.h"
#include "runtime/lock.h"

#define GET_INFO(i, h, FN)                                                                                             \
    struct aptus_info *i = aptus_info_get(h);                                                                          \
    if (!i)                                                                                                            \
    return aptus_error(NULL, MPI_ERR_INFO, FN,                                                                         \
                       (h) == MPI_INFO_NULL ? "MPI_INFO_NULL is not a valid info object here" : "invalid info handle")

#define CHK_KEY(k, FN)                                                                                                 \
    do {                                                                                                               \
        if (!(k))                                                                                                      \
            return aptus_error(NULL, MPI_ERR_INFO_KEY, FN, "null key");                                                \
        size_t klen_ = strlen(k);                                                                                      \
        if (klen_ == 0)                                                                                                \
            return aptus_error(NULL, MPI_ERR_INFO_KEY, FN, "empty key");                                               \
        if (klen_ > APTUS_INFO_KEY_MAX)                                                                                \
            return aptus_error(NULL, MPI_ERR_INFO_KEY, FN, "key of %zu characters (at most %d allowed)", klen_,        \
                               APTUS_INFO_KEY_MAX);                                                                    \
    } while (0)

#define CHK_WRITABLE(i, FN)                                                                                            \
    if ((i)->predefined)                                                                                               \
    return aptus_error(NULL, MPI_ERR_INFO, FN, "MPI_INFO_ENV cannot be changed")

/* Copies at most max characters of v to buf, null-terminated. */
static void copy_value(char *buf, const char *v, size_t max)
{
    size_t n = strlen(v);
    if (n > max)
        n = max;
    memcpy(buf, v, n);
    buf[n] = 0;
}

int PMPI_Info_create(MPI_Info *info)
{
    APTUS_OUT_NULL(info, MPI_INFO_NULL);
    APTUS_API_LOCK();
    if (!info)
        return aptus_error(NULL, MPI_ERR_ARG, "MPI_Info_create", "null info argument");
    struct aptus_info *i = aptus_info_new();
    if (!i)
        return aptus_error(NULL, MPI_ERR_NO_MEM, "MPI_Info_create", "out of memory");
    *info = (MPI_Info)i;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Info_create)

int PMPI_Info_create_env(int argc, char *argv[], MPI_Info *info)
{
    APTUS_OUT_NULL(info, MPI_INFO_NULL);
    APTUS_API_LOCK();
    if (!info)
        return aptus_error(NULL, MPI_ERR_ARG, "MPI_Info_create_env", "null info argument");
    struct aptus_info *i = aptus_info_new();
    if (!i || aptus_info_fill_env(i, argc, argv) != MPI_SUCCESS) {
        aptus_info_destroy(i);
        return aptus_error(NULL, MPI_ERR_NO_MEM, "MPI_Info_create_env", "out of memory");
    }
    *info = (MPI_Info)i;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Info_create_env)

int PMPI_Info_free(MPI_Info *info)
{
    APTUS_API_LOCK();
    if (!info)
        return aptus_error(NULL, MPI_ERR_ARG, "MPI_Info_free", "null info argument");
    GET_INFO(i, *info, "MPI_Info_free");
    if (i->predefined)
        return aptus_error(NULL, MPI_ERR_INFO, "MPI_Info_free", "MPI_INFO_ENV cannot be freed");
    aptus_info_destroy(i);
    *info = MPI_INFO_NULL;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Info_free)

int PMPI_Info_dup(MPI_Info info, MPI_Info *newinfo)
{
    APTUS_OUT_NULL(newinfo, MPI_INFO_NULL);
    APTUS_API_LOCK();
    GET_INFO(i, info, "MPI_Info_dup");
    if (!newinfo)
        return aptus_error(NULL, MPI_ERR_ARG, "MPI_Info_dup", "null newinfo argument");
    struct aptus_info *d = aptus_info_dup(i);
    if (!d)
        return aptus_error(NULL, MPI_ERR_NO_MEM, "MPI_Info_dup", "out of memory");
    *newinfo = (MPI_Info)d;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Info_dup)

int PMPI_Info_set(MPI_Info info, const char *key, const char *value)
{
    APTUS_API_LOCK();
    GET_INFO(i, info, "MPI_Info_set");
    CHK_WRITABLE(i, "MPI_Info_set");
    CHK_KEY(key, "MPI_Info_set");
    if (!value)
        return aptus_error(NULL, MPI_ERR_INFO_VALUE, "MPI_Info_set", "null value for key \"%s\"", key);
    size_t vlen = strlen(value);
    if (vlen > APTUS_INFO_VAL_MAX)
        return aptus_error(NULL, MPI_ERR_INFO_VALUE, "MPI_Info_set",
                           "value of %zu characters for key \"%s\" (at most %d allowed)", vlen, key,
                           APTUS_INFO_VAL_MAX);
    if (aptus_info_set(i, key, value) != MPI_SUCCESS)
        return aptus_error(NULL, MPI_ERR_NO_MEM, "MPI_Info_set", "out of memory");
    return MPI_SUCCESS;
}
APTUS_ALIAS(Info_set)

int PMPI_Info_delete(MPI_Info info, const char *key)
{
    APTUS_API_LOCK();
    GET_INFO(i, info, "MPI_Info_delete");
    CHK_WRITABLE(i, "MPI_Info_delete");
    CHK_KEY(key, "MPI_Info_delete");
    if (aptus_info_remove(i, key) != 0)
        return aptus_error(NULL, MPI_ERR_INFO_NOKEY, "MPI_Info_delete", "key \"%s\" is not in the info object", key);
    return MPI_SUCCESS;
}
APTUS_ALIAS(Info_delete)

int PMPI_Info_get(MPI_Info info, const char *key, int valuelen, char *value, int *flag)
{
    APTUS_API_LOCK();
    GET_INFO(i, info, "MPI_Info_get");
    CHK_KEY(key, "MPI_Info_get");
    if (valuelen < 0)
        return aptus_error(NULL, MPI_ERR_ARG, "MPI_Info_get", "negative valuelen %d", valuelen);
    if (!flag || (!value && valuelen > 0))
        return aptus_error(NULL, MPI_ERR_ARG, "MPI_Info_get", "null %s argument", flag ? "value" : "flag");
    const char *v = aptus_info_lookup(i, key);
    *flag = v != NULL;
    if (v && value) /* at most valuelen characters, plus the null (the buffer has valuelen + 1) */
        copy_value(value, v, (size_t)valuelen);
    return MPI_SUCCESS;
}
APTUS_ALIAS(Info_get)

int PMPI_Info_get_string(MPI_Info info, const char *key, int *buflen, char *value, int *flag)
{
    APTUS_API_LOCK();
    GET_INFO(i, info, "MPI_Info_get_string");
    CHK_KEY(key, "MPI_Info_get_string");
    if (!buflen || !flag)
        return aptus_error(NULL, MPI_ERR_ARG, "MPI_Info_get_string", "null %s argument", buflen ? "flag" : "buflen");
    if (*buflen < 0)
        return aptus_error(NULL, MPI_ERR_ARG, "MPI_Info_get_string", "negative buflen %d", *buflen);
    if (!value && *buflen > 0)
        return aptus_error(NULL, MPI_ERR_ARG, "MPI_Info_get_string", "null value buffer of %d bytes", *buflen);
    const char *v = aptus_info_lookup(i, key);
    *flag = v != NULL;
    if (!v)
        return MPI_SUCCESS;
    /* Copies what fits (always null-terminated); returns the full size with the null. */
    if (*buflen > 0)
        copy_value(value, v, (size_t)*buflen - 1);
    *buflen = (int)strlen(v) + 1;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Info_get_string)

int PMPI_Info_get_valuelen(MPI_Info info, const char *key, int *valuelen, int *flag)
{
    APTUS_API_LOCK();
    GET_INFO(i, info, "MPI_Info_get_valuelen");
    CHK_KEY(key, "MPI_Info_get_valuelen");
    if (!valuelen || !flag)
        return aptus_error(NULL, MPI_ERR_ARG, "MPI_Info_get_valuelen", "null %s argument",
                           valuelen ? "flag" : "valuelen");
    const char *v = aptus_info_lookup(i, key);
    *flag = v != NULL;
    if (v)
        *valuelen = (int)strlen(v);
    return MPI_SUCCESS;
}
APTUS_ALIAS(Info_get_valuelen)

int PMPI_Info_get_nkeys(MPI_Info info, int *nkeys)
{
    APTUS_API_LOCK();
    GET_INFO(i, info, "MPI_Info_get_nkeys");
    if (!nkeys)
        return aptus_error(NULL, MPI_ERR_ARG, "MPI_Info_get_nkeys", "null nkeys argument");
    *nkeys = i->n;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Info_get_nkeys)

int PMPI_Info_get_nthkey(MPI_Info info, int n, char *key)
{
    APTUS_API_LOCK();
    GET_INFO(i, info, "MPI_Info_get_nthkey");
    if (n < 0 || n >= i->n)
        return aptus_error(NULL, MPI_ERR_ARG, "MPI_Info_get_nthkey", "key number %d out of range (the object has %d)",
                           n, i->n);
    if (!key)
        return aptus_error(NULL, MPI_ERR_ARG, "MPI_Info_get_nthkey", "null key argument");
    strcpy(key, i->keys[n]); /* at most APTUS_INFO_KEY_MAX characters: fits MPI_MAX_INFO_KEY */
    return MPI_SUCCESS;
}
APTUS_ALIAS(Info_get_nthkey)

/* ---- the standard ABI's own queries (MPI 5.0, 21.2), callable at any time ---- */

int PMPI_Abi_get_version(int *abi_major, int *abi_minor)
{
    APTUS_API_LOCK();
    if (!abi_major || !abi_minor)
        return aptus_error(NULL, MPI_ERR_ARG, "MPI_Abi_get_version", "null %s argument",
                           abi_major ? "abi_minor" : "abi_major");
    *abi_major = MPI_ABI_VERSION;
    *abi_minor = MPI_ABI_SUBVERSION;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Abi_get_version)

int PMPI_Abi_get_info(MPI_Info *info)
{
    APTUS_OUT_NULL(info, MPI_INFO_NULL);
    APTUS_API_LOCK();
    if (!info)
        return aptus_error(NULL, MPI_ERR_ARG, "MPI_Abi_get_info", "null info argument");
    static const struct {
        const char *key;
        size_t size;
    } sizes[] = { { "mpi_aint_size", sizeof(MPI_Aint) },
                  { "mpi_count_size", sizeof(MPI_Count) },
                  { "mpi_offset_size", sizeof(MPI_Offset) } };
    struct aptus_info *i = aptus_info_new();
    int rc = i ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    for (size_t k = 0; !rc && k < sizeof sizes / sizeof *sizes; k++) {
        char v[8];
        snprintf(v, sizeof v, "%zu", sizes[k].size);
        rc = aptus_info_set(i, sizes[k].key, v);
    }
    if (rc) {
        aptus_info_destroy(i);
        return aptus_error(NULL, MPI_ERR_NO_MEM, "MPI_Abi_get_info", "out of memory");
    }
    *info = (MPI_Info)i;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Abi_get_info)

/* ---- what the Fortran bindings tell the C library (MPI 5.0, the ABI chapter) ----------------
 * libmpifort_abi sets both when it is loaded (src/fortran/f_runtime.c): the sizes of its types
 * (an info object, kept as a copy) and the values of .TRUE. and .FALSE. per LOGICAL size. */
static struct aptus_info *fortran_info;
static struct {
    int set;
    unsigned char t[16], f[16];
} fortran_bool[5]; /* LOGICAL sizes 1, 2, 4, 8, 16 */

/* The slot of a LOGICAL size (a power of two up to 16), -1 for any other. */
static int bool_slot(int size)
{
    for (int k = 0; k < 5; k++)
        if (size == 1 << k)
            return k;
    return -1;
}

int PMPI_Abi_get_fortran_info(MPI_Info *info)
{
    APTUS_OUT_NULL(info, MPI_INFO_NULL);
    APTUS_API_LOCK();
    if (!info)
        return aptus_error(NULL, MPI_ERR_ARG, "MPI_Abi_get_fortran_info", "null info argument");
    if (!fortran_info) { /* no Fortran bindings loaded: no details (as the standard allows) */
        *info = MPI_INFO_NULL;
        return MPI_SUCCESS;
    }
    struct aptus_info *i = aptus_info_dup(fortran_info);
    if (!i)
        return aptus_error(NULL, MPI_ERR_NO_MEM, "MPI_Abi_get_fortran_info", "out of memory");
    *info = (MPI_Info)i;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Abi_get_fortran_info)

int PMPI_Abi_set_fortran_info(MPI_Info info)
{
    APTUS_API_LOCK();
    struct aptus_info *i = aptus_info_get(info);
    if (!i)
        return aptus_error(NULL, MPI_ERR_INFO, "MPI_Abi_set_fortran_info", "invalid info object");
    if (fortran_info)
        return aptus_error(NULL, MPI_ERR_ABI, "MPI_Abi_set_fortran_info",
                           "the Fortran ABI details are set already (by the Fortran bindings or an earlier call)");
    if (!(fortran_info = aptus_info_dup(i)))
        return aptus_error(NULL, MPI_ERR_NO_MEM, "MPI_Abi_set_fortran_info", "out of memory");
    return MPI_SUCCESS;
}
APTUS_ALIAS(Abi_set_fortran_info)

int PMPI_Abi_set_fortran_booleans(int logical_size, void *logical_true, void *logical_false)
{
    APTUS_API_LOCK();
    int k = bool_slot(logical_size);
    if (k < 0)
        return aptus_error(NULL, MPI_ERR_ARG, "MPI_Abi_set_fortran_booleans",
                           "logical_size %d is not a power of two from 1 to 16", logical_size);
    if (!logical_true || !logical_false)
        return aptus_error(NULL, MPI_ERR_ARG, "MPI_Abi_set_fortran_booleans", "null value argument");
    memcpy(fortran_bool[k].t, logical_true, (size_t)logical_size);
    memcpy(fortran_bool[k].f, logical_false, (size_t)logical_size);
    fortran_bool[k].set = 1;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Abi_set_fortran_booleans)

int PMPI_Abi_get_fortran_booleans(int logical_size, void *logical_true, void *logical_false, int *is_set)
{
    APTUS_API_LOCK();
    int k = bool_slot(logical_size);
    if (k < 0)
        return aptus_error(NULL, MPI_ERR_ARG, "MPI_Abi_get_fortran_booleans",
                           "logical_size %d is not a power of two from 1 to 16", logical_size);
    if (!logical_true || !logical_false || !is_set)
        return aptus_error(NULL, MPI_ERR_ARG, "MPI_Abi_get_fortran_booleans", "null argument");
    *is_set = fortran_bool[k].set;
    if (*is_set) {
        memcpy(logical_true, fortran_bool[k].t, (size_t)logical_size);
        memcpy(logical_false, fortran_bool[k].f, (size_t)logical_size);
    }
    return MPI_SUCCESS;
}
APTUS_ALIAS(Abi_get_fortran_booleans)
