/* Status queries that depend on the datatype: MPI_Get_count, MPI_Get_elements,
 * MPI_Status_set_elements (MPI standard, sections 3.2.5 and 5.1.11). */
#include <limits.h>

#include "api/check.h"
#include "pt2pt/pt2pt.h"

static int count_of(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count, const char *fn)
{
    if (!status || !count)
        return aptus_error(NULL, MPI_ERR_ARG, fn, "null argument");
    struct aptus_dtype *d = aptus_dtype_get(datatype);
    if (!d)
        return aptus_error(NULL, MPI_ERR_TYPE, fn, "invalid datatype");
    size_t bytes = aptus_status_bytes(status);
    size_t per = (size_t)d->extent;
    if (per == 0)
        *count = bytes == 0 ? 0 : MPI_UNDEFINED;
    else
        *count = bytes % per ? MPI_UNDEFINED : (MPI_Count)(bytes / per);
    return MPI_SUCCESS;
}

int PMPI_Get_count(const MPI_Status *status, MPI_Datatype datatype, int *count)
{
    MPI_Count n;
    int rc = count_of(status, datatype, &n, "MPI_Get_count");
    if (rc)
        return rc;
    *count = n > INT_MAX ? MPI_UNDEFINED : (int)n;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Get_count)

int PMPI_Get_count_c(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count)
{
    return count_of(status, datatype, count, "MPI_Get_count_c");
}
APTUS_ALIAS(Get_count_c)

/* Basic elements: like count_of, except that the pair types (MPI_2INT, MPI_DOUBLE_INT, ...)
 * hold two basic elements each, and a trailing lone first member counts as one. */
static int elements_of(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count, const char *fn)
{
    int rc = count_of(status, datatype, count, fn);
    struct aptus_dtype *d = aptus_dtype_get(datatype);
    if (rc || d->basic < APTUS_B_FLOAT_INT || d->basic > APTUS_B_2DOUBLE)
        return rc;
    size_t bytes = aptus_status_bytes(status), per = (size_t)d->extent;
    size_t first = d->basic == APTUS_B_2INT || d->basic == APTUS_B_2FLOAT ? 4
                   : d->basic == APTUS_B_2DOUBLE                          ? 8
                                                                          : d->size - sizeof(int);
    size_t rem = bytes % per;
    *count = (MPI_Count)(2 * (bytes / per) + (rem >= first ? 1 : 0));
    if (rem && rem != first)
        *count = MPI_UNDEFINED;
    return 0;
}

int PMPI_Get_elements(const MPI_Status *status, MPI_Datatype datatype, int *count)
{
    MPI_Count n;
    int rc = elements_of(status, datatype, &n, "MPI_Get_elements");
    if (rc)
        return rc;
    *count = n > INT_MAX ? MPI_UNDEFINED : (int)n;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Get_elements)

int PMPI_Get_elements_c(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count)
{
    return elements_of(status, datatype, count, "MPI_Get_elements_c");
}
APTUS_ALIAS(Get_elements_c)

int PMPI_Get_elements_x(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count)
{
    return elements_of(status, datatype, count, "MPI_Get_elements_x");
}
APTUS_ALIAS(Get_elements_x)

int PMPI_Status_set_elements(MPI_Status *status, MPI_Datatype datatype, int count)
{
    struct aptus_dtype *d = aptus_dtype_get(datatype);
    if (!status || !d)
        return aptus_error(NULL, MPI_ERR_ARG, "MPI_Status_set_elements", "invalid argument");
    aptus_status_set_bytes(status, (size_t)count * (size_t)d->extent);
    return MPI_SUCCESS;
}
APTUS_ALIAS(Status_set_elements)

int PMPI_Status_set_cancelled(MPI_Status *status, int flag)
{
    if (!status)
        return aptus_error(NULL, MPI_ERR_ARG, "MPI_Status_set_cancelled", "null status");
    status->MPI_internal[2] = flag != 0;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Status_set_cancelled)
