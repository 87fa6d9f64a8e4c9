/* Packing and unpacking (MPI standard, sections "Pack and Unpack" and "Canonical MPI_PACK and
 * MPI_UNPACK"). The native packed form is the engine's packed form (count * size bytes, type
 * map order, no padding), the same bytes a message carries; "external32" is converted by
 * core/dtype_ext32.c. */
#include <limits.h>
#include <string.h>

#include "api/check.h"
#include "core/datatype.h"

/* ---- native ---- */

static int pack_any(const char *fn, const void *inbuf, MPI_Count incount, MPI_Datatype datatype, void *outbuf,
                    MPI_Count outsize, MPI_Count *position, MPI_Comm comm)
{
    GET_COMM(c, comm, fn);
    CHK_COUNT(c, incount, fn);
    GET_DTYPE(d, datatype, c, fn);
    if (!position)
        return aptus_error(c, MPI_ERR_ARG, fn, "null position argument");
    if (outsize < 0 || *position < 0 || *position > outsize)
        return aptus_error(c, MPI_ERR_ARG, fn, "position %lld outside the output buffer of %lld bytes",
                           (long long)*position, (long long)outsize);
    size_t need = (size_t)incount * d->size;
    if (need > (size_t)(outsize - *position))
        return aptus_error(c, MPI_ERR_TRUNCATE, fn,
                           "output buffer too small: %zu bytes to pack at position %lld, outsize %lld", need,
                           (long long)*position, (long long)outsize);
    CHK_BUF(c, outbuf, need, fn);
    if (need)
        aptus_dt_pack(inbuf, (size_t)incount, d, (char *)outbuf + *position);
    *position += (MPI_Count)need;
    return MPI_SUCCESS;
}

int PMPI_Pack(const void *inbuf, int incount, MPI_Datatype datatype, void *outbuf, int outsize, int *position,
              MPI_Comm comm)
{
    if (!position)
        return aptus_error(NULL, MPI_ERR_ARG, "MPI_Pack", "null position argument");
    MPI_Count pos = *position;
    int rc = pack_any("MPI_Pack", inbuf, incount, datatype, outbuf, outsize, &pos, comm);
    if (rc == MPI_SUCCESS)
        *position = (int)pos;
    return rc;
}
APTUS_ALIAS(Pack)

int PMPI_Pack_c(const void *inbuf, MPI_Count incount, MPI_Datatype datatype, void *outbuf, MPI_Count outsize,
                MPI_Count *position, MPI_Comm comm)
{
    return pack_any("MPI_Pack_c", inbuf, incount, datatype, outbuf, outsize, position, comm);
}
APTUS_ALIAS(Pack_c)

static int unpack_any(const char *fn, const void *inbuf, MPI_Count insize, MPI_Count *position, void *outbuf,
                      MPI_Count outcount, MPI_Datatype datatype, MPI_Comm comm)
{
    GET_COMM(c, comm, fn);
    CHK_COUNT(c, outcount, fn);
    GET_DTYPE(d, datatype, c, fn);
    if (!position)
        return aptus_error(c, MPI_ERR_ARG, fn, "null position argument");
    if (insize < 0 || *position < 0 || *position > insize)
        return aptus_error(c, MPI_ERR_ARG, fn, "position %lld outside the input buffer of %lld bytes",
                           (long long)*position, (long long)insize);
    size_t need = (size_t)outcount * d->size;
    if (need > (size_t)(insize - *position))
        return aptus_error(c, MPI_ERR_TRUNCATE, fn,
                           "input buffer too short: %zu bytes to unpack at position %lld, insize %lld", need,
                           (long long)*position, (long long)insize);
    CHK_BUF(c, inbuf, need, fn);
    if (need)
        aptus_dt_unpack((const char *)inbuf + *position, (size_t)outcount, d, outbuf);
    *position += (MPI_Count)need;
    return MPI_SUCCESS;
}

int PMPI_Unpack(const void *inbuf, int insize, int *position, void *outbuf, int outcount, MPI_Datatype datatype,
                MPI_Comm comm)
{
    if (!position)
        return aptus_error(NULL, MPI_ERR_ARG, "MPI_Unpack", "null position argument");
    MPI_Count pos = *position;
    int rc = unpack_any("MPI_Unpack", inbuf, insize, &pos, outbuf, outcount, datatype, comm);
    if (rc == MPI_SUCCESS)
        *position = (int)pos;
    return rc;
}
APTUS_ALIAS(Unpack)

int PMPI_Unpack_c(const void *inbuf, MPI_Count insize, MPI_Count *position, void *outbuf, MPI_Count outcount,
                  MPI_Datatype datatype, MPI_Comm comm)
{
    return unpack_any("MPI_Unpack_c", inbuf, insize, position, outbuf, outcount, datatype, comm);
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
    MPI_Count n = 0;
    int rc = pack_size("MPI_Pack_size", incount, datatype, comm, &n);
    if (rc)
        return rc;
    if (!size)
        return aptus_error(NULL, MPI_ERR_ARG, "MPI_Pack_size", "null size argument");
    if (n > INT_MAX)
        return aptus_error(aptus_comm_get(comm), MPI_ERR_COUNT, "MPI_Pack_size",
                           "%lld bytes do not fit in an int (use MPI_Pack_size_c)", (long long)n);
    *size = (int)n;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Pack_size)

int PMPI_Pack_size_c(MPI_Count incount, MPI_Datatype datatype, MPI_Comm comm, MPI_Count *size)
{
    return pack_size("MPI_Pack_size_c", incount, datatype, comm, size);
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

static int pack_ext(const char *fn, const char *datarep, const void *inbuf, MPI_Count incount, MPI_Datatype datatype,
                    void *outbuf, MPI_Count outsize, MPI_Count *position)
{
    struct aptus_dtype *d;
    size_t es;
    int rc = check_ext(fn, datarep, incount, datatype, &d, &es, 1);
    if (rc)
        return rc;
    if (!position)
        return aptus_error(NULL, MPI_ERR_ARG, fn, "null position argument");
    if (outsize < 0 || *position < 0 || *position > outsize)
        return aptus_error(NULL, MPI_ERR_ARG, fn, "position %lld outside the output buffer of %lld bytes",
                           (long long)*position, (long long)outsize);
    size_t need = (size_t)incount * es;
    if (need > (size_t)(outsize - *position))
        return aptus_error(NULL, MPI_ERR_TRUNCATE, fn,
                           "output buffer too small: %zu bytes to pack at position %lld, outsize %lld", need,
                           (long long)*position, (long long)outsize);
    CHK_BUF(NULL, outbuf, need, fn);
    if (need)
        aptus_dt_ext32_pack(inbuf, (size_t)incount, d, (char *)outbuf + *position);
    *position += (MPI_Count)need;
    return MPI_SUCCESS;
}

int PMPI_Pack_external(const char datarep[], const void *inbuf, int incount, MPI_Datatype datatype, void *outbuf,
                       MPI_Aint outsize, MPI_Aint *position)
{
    if (!position)
        return aptus_error(NULL, MPI_ERR_ARG, "MPI_Pack_external", "null position argument");
    MPI_Count pos = *position;
    int rc = pack_ext("MPI_Pack_external", datarep, inbuf, incount, datatype, outbuf, outsize, &pos);
    if (rc == MPI_SUCCESS)
        *position = (MPI_Aint)pos;
    return rc;
}
APTUS_ALIAS(Pack_external)

int PMPI_Pack_external_c(const char datarep[], const void *inbuf, MPI_Count incount, MPI_Datatype datatype,
                         void *outbuf, MPI_Count outsize, MPI_Count *position)
{
    return pack_ext("MPI_Pack_external_c", datarep, inbuf, incount, datatype, outbuf, outsize, position);
}
APTUS_ALIAS(Pack_external_c)

static int unpack_ext(const char *fn, const char *datarep, const void *inbuf, MPI_Count insize, MPI_Count *position,
                      void *outbuf, MPI_Count outcount, MPI_Datatype datatype)
{
    struct aptus_dtype *d;
    size_t es;
    int rc = check_ext(fn, datarep, outcount, datatype, &d, &es, 1);
    if (rc)
        return rc;
    if (!position)
        return aptus_error(NULL, MPI_ERR_ARG, fn, "null position argument");
    if (insize < 0 || *position < 0 || *position > insize)
        return aptus_error(NULL, MPI_ERR_ARG, fn, "position %lld outside the input buffer of %lld bytes",
                           (long long)*position, (long long)insize);
    size_t need = (size_t)outcount * es;
    if (need > (size_t)(insize - *position))
        return aptus_error(NULL, MPI_ERR_TRUNCATE, fn,
                           "input buffer too short: %zu bytes to unpack at position %lld, insize %lld", need,
                           (long long)*position, (long long)insize);
    CHK_BUF(NULL, inbuf, need, fn);
    if (need)
        aptus_dt_ext32_unpack((const char *)inbuf + *position, (size_t)outcount, d, outbuf);
    *position += (MPI_Count)need;
    return MPI_SUCCESS;
}

int PMPI_Unpack_external(const char datarep[], const void *inbuf, MPI_Aint insize, MPI_Aint *position, void *outbuf,
                         int outcount, MPI_Datatype datatype)
{
    if (!position)
        return aptus_error(NULL, MPI_ERR_ARG, "MPI_Unpack_external", "null position argument");
    MPI_Count pos = *position;
    int rc = unpack_ext("MPI_Unpack_external", datarep, inbuf, insize, &pos, outbuf, outcount, datatype);
    if (rc == MPI_SUCCESS)
        *position = (MPI_Aint)pos;
    return rc;
}
APTUS_ALIAS(Unpack_external)

int PMPI_Unpack_external_c(const char datarep[], const void *inbuf, MPI_Count insize, MPI_Count *position, void *outbuf,
                           MPI_Count outcount, MPI_Datatype datatype)
{
    return unpack_ext("MPI_Unpack_external_c", datarep, inbuf, insize, position, outbuf, outcount, datatype);
}
APTUS_ALIAS(Unpack_external_c)

int PMPI_Pack_external_size(const char datarep[], int incount, MPI_Datatype datatype, MPI_Aint *size)
{
    const char *fn = "MPI_Pack_external_size";
    struct aptus_dtype *d;
    size_t es;
    int rc = check_ext(fn, datarep, incount, datatype, &d, &es, 0);
    if (rc)
        return rc;
    if (!size)
        return aptus_error(NULL, MPI_ERR_ARG, fn, "null size argument");
    *size = (MPI_Aint)((size_t)incount * es);
    return MPI_SUCCESS;
}
APTUS_ALIAS(Pack_external_size)

int PMPI_Pack_external_size_c(const char datarep[], MPI_Count incount, MPI_Datatype datatype, MPI_Count *size)
{
    const char *fn = "MPI_Pack_external_size_c";
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
APTUS_ALIAS(Pack_external_size_c)
