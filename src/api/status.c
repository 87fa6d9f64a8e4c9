/* Status queries that depend on the datatype: MPI_Get_count, MPI_Get_elements,
 * MPI_Status_set_elements (MPI standard, sections 3.2.5 and 5.1.11). */
#include <limits.h>
#include <string.h>

#include "api/check.h"
#include "core/datatype.h"
#include "pt2pt/pt2pt.h"
#include "runtime/lock.h"

/* MPI_Get_count (elements = 0): whole elements of datatype in the received bytes, and
 * MPI_Get_elements (elements = 1): basic elements (the pair types such as MPI_2INT hold two
 * each); MPI_UNDEFINED when the data ends inside an element (a basic element). */
static int count_of(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count, int elements, const char *fn)
{
    if (!status || status == MPI_STATUS_IGNORE)
        return aptus_error(NULL, MPI_ERR_ARG, fn, "status must not be NULL or MPI_STATUS_IGNORE");
    if (!count)
        return aptus_error(NULL, MPI_ERR_ARG, fn, "null count argument");
    struct aptus_dtype *d = aptus_dtype_get(datatype);
    if (!d)
        return aptus_error(NULL, MPI_ERR_TYPE, fn, "invalid datatype");
    size_t bytes = aptus_status_bytes(status); /* packed bytes: count * size */
    MPI_Count n;
    if (elements)
        n = aptus_dt_elements(d, bytes);
    else if (d->size == 0)
        n = 0;
    else
        n = bytes % d->size ? -1 : (MPI_Count)(bytes / d->size);
    *count = n < 0 ? MPI_UNDEFINED : n;
    return MPI_SUCCESS;
}

/* The int forms: MPI_UNDEFINED when the count does not fit. */
static int count_of_int(const MPI_Status *status, MPI_Datatype datatype, int *count, int elements, const char *fn)
{
    MPI_Count n = 0;
    int rc = count_of(status, datatype, count ? &n : NULL, elements, fn);
    if (rc == MPI_SUCCESS)
        *count = n > INT_MAX ? MPI_UNDEFINED : (int)n;
    return rc;
}

int PMPI_Get_count(const MPI_Status *status, MPI_Datatype datatype, int *count)
{
    APTUS_API_LOCKED(count_of_int(status, datatype, count, 0, "MPI_Get_count"));
}
APTUS_ALIAS(Get_count)

int PMPI_Get_count_c(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count)
{
    APTUS_API_LOCKED(count_of(status, datatype, count, 0, "MPI_Get_count_c"));
}
APTUS_ALIAS(Get_count_c)

int PMPI_Get_elements(const MPI_Status *status, MPI_Datatype datatype, int *count)
{
    APTUS_API_LOCKED(count_of_int(status, datatype, count, 1, "MPI_Get_elements"));
}
APTUS_ALIAS(Get_elements)

int PMPI_Get_elements_c(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count)
{
    APTUS_API_LOCKED(count_of(status, datatype, count, 1, "MPI_Get_elements_c"));
}
APTUS_ALIAS(Get_elements_c)

int PMPI_Get_elements_x(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count)
{
    APTUS_API_LOCKED(count_of(status, datatype, count, 1, "MPI_Get_elements_x"));
}
APTUS_ALIAS(Get_elements_x)

/* Sets the status so that MPI_Get_elements with this datatype returns count (and
 * MPI_Get_count returns count / basic elements per element, when whole). */
static int set_elements(MPI_Status *status, MPI_Datatype datatype, MPI_Count count, const char *fn)
{
    if (!status || status == MPI_STATUS_IGNORE)
        return aptus_error(NULL, MPI_ERR_ARG, fn, "status must not be NULL or MPI_STATUS_IGNORE");
    struct aptus_dtype *d = aptus_dtype_get(datatype);
    if (!d)
        return aptus_error(NULL, MPI_ERR_TYPE, fn, "invalid datatype");
    if (count < 0)
        return aptus_error(NULL, MPI_ERR_COUNT, fn, "negative count %lld", (long long)count);
    if (d->nelem == 0 && count > 0)
        return aptus_error(NULL, MPI_ERR_ARG, fn, "datatype holds no basic elements, count must be 0");
    aptus_status_set_bytes(status, aptus_dt_elements_bytes(d, (size_t)count));
    return MPI_SUCCESS;
}

int PMPI_Status_set_elements(MPI_Status *status, MPI_Datatype datatype, int count)
{
    APTUS_API_LOCKED(set_elements(status, datatype, count, "MPI_Status_set_elements"));
}
APTUS_ALIAS(Status_set_elements)

int PMPI_Status_set_elements_x(MPI_Status *status, MPI_Datatype datatype, MPI_Count count)
{
    APTUS_API_LOCKED(set_elements(status, datatype, count, "MPI_Status_set_elements_x"));
}
APTUS_ALIAS(Status_set_elements_x)

int PMPI_Status_set_elements_c(MPI_Status *status, MPI_Datatype datatype, MPI_Count count)
{
    APTUS_API_LOCKED(set_elements(status, datatype, count, "MPI_Status_set_elements_c"));
}
APTUS_ALIAS(Status_set_elements_c)

int PMPI_Status_set_cancelled(MPI_Status *status, int flag)
{
    APTUS_API_LOCK();
    if (!status)
        return aptus_error(NULL, MPI_ERR_ARG, "MPI_Status_set_cancelled", "null status");
    status->MPI_internal[2] = flag != 0;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Status_set_cancelled)

/* Status field accessors (MPI 4.1). */
#define STATUS_GET(NAME, FIELD)                                                                                        \
    int PMPI_Status_get_##NAME(const MPI_Status *status, int *v)                                                       \
    {                                                                                                                  \
        if (!status || !v)                                                                                             \
            return aptus_error(NULL, MPI_ERR_ARG, "MPI_Status_get_" #NAME, "null argument");                           \
        *v = status->FIELD;                                                                                            \
        return MPI_SUCCESS;                                                                                            \
    }                                                                                                                  \
    APTUS_ALIAS(Status_get_##NAME)
#define STATUS_SET(NAME, FIELD)                                                                                        \
    int PMPI_Status_set_##NAME(MPI_Status *status, int v)                                                              \
    {                                                                                                                  \
        if (!status)                                                                                                   \
            return aptus_error(NULL, MPI_ERR_ARG, "MPI_Status_set_" #NAME, "null status");                             \
        status->FIELD = v;                                                                                             \
        return MPI_SUCCESS;                                                                                            \
    }                                                                                                                  \
    APTUS_ALIAS(Status_set_##NAME)

STATUS_GET(source, MPI_SOURCE)
STATUS_GET(tag, MPI_TAG)
STATUS_GET(error, MPI_ERROR)
STATUS_SET(source, MPI_SOURCE)
STATUS_SET(tag, MPI_TAG)
STATUS_SET(error, MPI_ERROR)

/* ---- status conversions between C, Fortran and Fortran 2008 (MPI 4.1, 19.3.5) ----------------
 * In the standard ABI all three are eight ints in the same order (MPI_SOURCE, MPI_TAG,
 * MPI_ERROR, five words of the library): a conversion is a copy. The ignore constants are not
 * statuses and are refused. */
MPI_Fint *MPI_F_STATUS_IGNORE = NULL;
MPI_Fint *MPI_F_STATUSES_IGNORE = NULL;
MPI_F08_status *MPI_F08_STATUS_IGNORE = NULL;
MPI_F08_status *MPI_F08_STATUSES_IGNORE = NULL;

static int not_a_status(const void *p)
{
    return !p || p == (const void *)MPI_F_STATUS_IGNORE || p == (const void *)MPI_F_STATUSES_IGNORE ||
           p == (const void *)MPI_F08_STATUS_IGNORE || p == (const void *)MPI_F08_STATUSES_IGNORE;
}

#define STATUS_COPY(NAME, FROM_T, TO_T)                                                                                \
    int PMPI_Status_##NAME(const FROM_T *from, TO_T *to)                                                               \
    {                                                                                                                  \
        if (not_a_status(from) || not_a_status(to))                                                                    \
            return aptus_error(NULL, MPI_ERR_ARG, "MPI_Status_" #NAME,                                                 \
                               "a status argument is NULL or an ignore constant (not a status)");                      \
        memcpy(to, from, sizeof(MPI_Status));                                                                          \
        return MPI_SUCCESS;                                                                                            \
    }                                                                                                                  \
    APTUS_ALIAS(Status_##NAME)

_Static_assert(sizeof(MPI_F08_status) == sizeof(MPI_Status) && 8 * sizeof(MPI_Fint) == sizeof(MPI_Status),
               "statuses of every language have the C status's size");
STATUS_COPY(f2c, MPI_Fint, MPI_Status)
STATUS_COPY(c2f, MPI_Status, MPI_Fint)
STATUS_COPY(f082c, MPI_F08_status, MPI_Status)
STATUS_COPY(c2f08, MPI_Status, MPI_F08_status)
STATUS_COPY(f2f08, MPI_Fint, MPI_F08_status)
STATUS_COPY(f082f, MPI_F08_status, MPI_Fint)
