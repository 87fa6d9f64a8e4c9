/* Packing and unpacking (MPI standard, sections "Pack and Unpack" and "Canonical MPI_PACK and
 * MPI_UNPACK"). The native packed form is the engine's packed form (count * size bytes, type
 * map order, no padding), the same bytes a message carries; "external32" is converted by
 * core/dtype_ext32.c. */
#include <limits.h>
#include <string.h>

#include "api/check.h"
#include "core/datatype.h"
#include "runtime/lock.h"

/* The engine calls, [external32][unpack]: each copies count elements `from` -> `to`. */
static void (*const convert[2][2])(const void *from, size_t count, const struct aptus_dtype *dt, void *to) = {
    { aptus_dt_pack, aptus_dt_unpack },
    { aptus_dt_ext32_pack, aptus_dt_ext32_unpack },
};

/* What every pack and unpack call does once its datatype is checked: `packed` is the packed
 * buffer of `size` bytes (outbuf of a pack, inbuf of an unpack) and *position the offset in it;
 * `user` holds count elements of d, each `unit` bytes in the packed form. */
static int transfer(const char *fn, struct aptus_comm *c, int ext, int unpack, const struct aptus_dtype *d, size_t unit,
                    const void *user, MPI_Count count, const void *packed, MPI_Count size, MPI_Count *position)
{
    if (!position)
        return aptus_error(c, MPI_ERR_ARG, fn, "null position argument");
    if (size < 0 || *position < 0 || *position > size)
        return aptus_error(c, MPI_ERR_ARG, fn, "position %lld outside the %s buffer of %lld bytes",
                           (long long)*position, unpack ? "input" : "output", (long long)size);
    size_t need = (size_t)count * unit;
    if (need > (size_t)(size - *position))
        return aptus_error(c, MPI_ERR_TRUNCATE, fn,
                           unpack ? "input buffer too short: %zu bytes to unpack at position %lld, insize %lld"
                                  : "output buffer too small: %zu bytes to pack at position %lld, outsize %lld",
                           need, (long long)*position, (long long)size);
    CHK_BUF(c, packed, need, fn);
    if (need) {
        const char *at = (const char *)packed + *position;
        if (unpack)
            convert[ext][1](at, (size_t)count, d, (void *)user);
        else
            convert[ext][0](user, (size_t)count, d, (void *)at);
    }
    *position += (MPI_Count)need;
    return MPI_SUCCESS;
}

/* ---- native ---- */

static int native(const char *fn, int unpack, const void *user, MPI_Count count, MPI_Datatype datatype,
                  const void *packed, MPI_Count size, MPI_Count *position, MPI_Comm comm)
{
    GET_COMM(c, comm, fn);
    CHK_COUNT(c, count, fn);
    GET_DTYPE(d, datatype, c, fn);
    return transfer(fn, c, 0, unpack, d, d->size, user, count, packed, size, position);
}

int PMPI_Pack(const void *inbuf, int incount, MPI_Datatype datatype, void *outbuf, int outsize, int *position,
              MPI_Comm comm)
{
    APTUS_API_LOCK();
    if (!position)
        return aptus_error(NULL, MPI_ERR_ARG, "MPI_Pack", "null position argument");
    MPI_Count pos = *position;
    int rc = native("MPI_Pack", 0, inbuf, incount, datatype, outbuf, outsize, &pos, comm);
    if (rc == MPI_SUCCESS)
        *position = (int)pos;
    return rc;
}
APTUS_ALIAS(Pack)

int PMPI_Pack_c(const void *inbuf, MPI_Count incount, MPI_Datatype datatype, void *outbuf, MPI_Count outsize,
                MPI_Count *position, MPI_Comm comm)
{
    APTUS_API_LOCKED(native("MPI_Pack_c", 0, inbuf, incount, datatype, outbuf, outsize, position, comm));
}
APTUS_ALIAS(Pack_c)

int PMPI_Unpack(const void *inbuf, int insize, int *position, void *outbuf, int outcount, MPI_Datatype datatype,
                MPI_Comm comm)
{
    APTUS_API_LOCK();
    if (!position)
        return aptus_error(NULL, MPI_ERR_ARG, "MPI_Unpack", "null position argument");
    MPI_Count pos = *position;
    int rc = native("MPI_Unpack", 1, outbuf, outcount, datatype, inbuf, insize, &pos, comm);
    if (rc == MPI_SUCCESS)
        *position = (int)pos;
    return rc;
}
APTUS_ALIAS(Unpack)

int PMPI_Unpack_c(const void *inbuf, MPI_Count insize, MPI_Count *position, void *outbuf, MPI_Count outcount,
                  MPI_Datatype datatype, MPI_Comm comm)
{
    APTUS_API_LOCKED(native("MPI_Unpack_c", 1, outbuf, outcount, datatype, inbuf, insize, position, comm));
}
APTUS_ALIAS(Unpack_c)

static int pack_size(const char *fn, MPI_Count incount, MPI_Datatype datatype, MPI_Comm comm, MPI_Count *size)
{
    GET_COMM(c, comm, fn);
    CHK_COUNT(c, incount, fn);
    struct aptus_dtype *d = aptus_dtype_get(datatype);
    if (!d)
        return aptus_error(c, MPI_ERR_TYPE, fn, "invalid datatype handle");
    if (!size)
        return aptus_error(c, MPI_ERR_ARG, fn, "null size argument");
    *size = incount * (MPI_Count)d->size;
    return MPI_SUCCESS;
}

int PMPI_Pack_size(int incount, MPI_Datatype datatype, MPI_Comm comm, int *size)
{
    APTUS_API_LOCK();
    MPI_Count n = 0;
    int rc = pack_size("MPI_Pack_size", incount, datatype, comm, size ? &n : NULL);
    if (rc)
        return rc;
    if (n > INT_MAX)
        return aptus_error(aptus_comm_get(comm), MPI_ERR_COUNT, "MPI_Pack_size",
                           "%lld bytes do not fit in an int (use MPI_Pack_size_c)", (long long)n);
    *size = (int)n;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Pack_size)

int PMPI_Pack_size_c(MPI_Count incount, MPI_Datatype datatype, MPI_Comm comm, MPI_Count *size)
{
    APTUS_API_LOCKED(pack_size("MPI_Pack_size_c", incount, datatype, comm, size));
}
APTUS_ALIAS(Pack_size_c)

/* ---- external32 ---- */

static int check_ext(const char *fn, const char *datarep, MPI_Count count, MPI_Datatype datatype,
                     struct aptus_dtype **out, size_t *ext_size, int need_commit)
{
    API_INIT(fn);
    if (!datarep)
        return aptus_error(NULL, MPI_ERR_ARG, fn, "null datarep argument");
    if (strcmp(datarep, "external32") != 0)
        return aptus_error(NULL, MPI_ERR_ARG, fn, "unknown data representation \"%s\" (only \"external32\")", datarep);
    CHK_COUNT(NULL, count, fn);
    struct aptus_dtype *d = aptus_dtype_get(datatype);
    if (!d)
        return aptus_error(NULL, MPI_ERR_TYPE, fn, "invalid datatype handle");
    if (need_commit && !d->committed)
        return aptus_error(NULL, MPI_ERR_TYPE, fn, "datatype is not committed (call MPI_Type_commit first)");
    int ok;
    *ext_size = aptus_dt_ext32_size(d, &ok);
    if (!ok)
        return aptus_error(NULL, MPI_ERR_TYPE, fn, "datatype %s contains a type with no external32 representation",
                           aptus_dtype_name(d));
    *out = d;
    return MPI_SUCCESS;
}

static int external(const char *fn, int unpack, const char *datarep, const void *user, MPI_Count count,
                    MPI_Datatype datatype, const void *packed, MPI_Count size, MPI_Count *position)
{
    struct aptus_dtype *d;
    size_t es;
    int rc = check_ext(fn, datarep, count, datatype, &d, &es, 1);
    if (rc)
        return rc;
    return transfer(fn, NULL, 1, unpack, d, es, user, count, packed, size, position);
}

int PMPI_Pack_external(const char datarep[], const void *inbuf, int incount, MPI_Datatype datatype, void *outbuf,
                       MPI_Aint outsize, MPI_Aint *position)
{
    APTUS_API_LOCK();
    if (!position)
        return aptus_error(NULL, MPI_ERR_ARG, "MPI_Pack_external", "null position argument");
    MPI_Count pos = *position;
    int rc = external("MPI_Pack_external", 0, datarep, inbuf, incount, datatype, outbuf, outsize, &pos);
    if (rc == MPI_SUCCESS)
        *position = (MPI_Aint)pos;
    return rc;
}
APTUS_ALIAS(Pack_external)

int PMPI_Pack_external_c(const char datarep[], const void *inbuf, MPI_Count incount, MPI_Datatype datatype,
                         void *outbuf, MPI_Count outsize, MPI_Count *position)
{
    APTUS_API_LOCKED(external("MPI_Pack_external_c", 0, datarep, inbuf, incount, datatype, outbuf, outsize, position));
}
APTUS_ALIAS(Pack_external_c)

int PMPI_Unpack_external(const char datarep[], const void *inbuf, MPI_Aint insize, MPI_Aint *position, void *outbuf,
                         int outcount, MPI_Datatype datatype)
{
    APTUS_API_LOCK();
    if (!position)
        return aptus_error(NULL, MPI_ERR_ARG, "MPI_Unpack_external", "null position argument");
    MPI_Count pos = *position;
    int rc = external("MPI_Unpack_external", 1, datarep, outbuf, outcount, datatype, inbuf, insize, &pos);
    if (rc == MPI_SUCCESS)
        *position = (MPI_Aint)pos;
    return rc;
}
APTUS_ALIAS(Unpack_external)

int PMPI_Unpack_external_c(const char datarep[], const void *inbuf, MPI_Count insize, MPI_Count *position, void *outbuf,
                           MPI_Count outcount, MPI_Datatype datatype)
{
    APTUS_API_LOCKED(
        external("MPI_Unpack_external_c", 1, datarep, outbuf, outcount, datatype, inbuf, insize, position));
}
APTUS_ALIAS(Unpack_external_c)

static int ext_size(const char *fn, const char *datarep, MPI_Count incount, MPI_Datatype datatype, MPI_Count *size)
{
    struct aptus_dtype *d;
    size_t es;
    int rc = check_ext(fn, datarep, incount, datatype, &d, &es, 0);
    if (rc)
        return rc;
    if (!size)
        return aptus_error(NULL, MPI_ERR_ARG, fn, "null size argument");
    *size = (MPI_Count)((size_t)incount * es);
    return MPI_SUCCESS;
}

int PMPI_Pack_external_size(const char datarep[], int incount, MPI_Datatype datatype, MPI_Aint *size)
{
    APTUS_API_LOCK();
    MPI_Count n = 0;
    int rc = ext_size("MPI_Pack_external_size", datarep, incount, datatype, size ? &n : NULL);
    if (rc == MPI_SUCCESS)
        *size = (MPI_Aint)n;
    return rc;
}
APTUS_ALIAS(Pack_external_size)

int PMPI_Pack_external_size_c(const char datarep[], MPI_Count incount, MPI_Datatype datatype, MPI_Count *size)
{
    APTUS_API_LOCKED(ext_size("MPI_Pack_external_size_c", datarep, incount, datatype, size));
}
APTUS_ALIAS(Pack_external_size_c)
