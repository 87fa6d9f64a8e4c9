/* Datatypes (MPI standard, chapter 5): queries on the predefined types. Constructors of
 * derived types come with the datatype engine (they report "not implemented" until then). */
#include <string.h>

#include "api/check.h"
#include "core/datatype.h"

#define GET_ANY_DTYPE(d, h, FN)                                                                                        \
    struct aptus_dtype *d = aptus_dtype_get(h);                                                                        \
    if (!d)                                                                                                            \
    return aptus_error(NULL, MPI_ERR_TYPE, FN, "invalid datatype handle")

int PMPI_Type_size(MPI_Datatype datatype, int *size)
{
    GET_ANY_DTYPE(d, datatype, "MPI_Type_size");
    *size = (int)d->size;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Type_size)

int PMPI_Type_size_c(MPI_Datatype datatype, MPI_Count *size)
{
    GET_ANY_DTYPE(d, datatype, "MPI_Type_size_c");
    *size = (MPI_Count)d->size;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Type_size_c)

int PMPI_Type_size_x(MPI_Datatype datatype, MPI_Count *size)
{
    GET_ANY_DTYPE(d, datatype, "MPI_Type_size_x");
    *size = (MPI_Count)d->size;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Type_size_x)

int PMPI_Type_get_extent(MPI_Datatype datatype, MPI_Aint *lb, MPI_Aint *extent)
{
    GET_ANY_DTYPE(d, datatype, "MPI_Type_get_extent");
    *lb = d->lb;
    *extent = d->extent;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Type_get_extent)

int PMPI_Type_get_true_extent(MPI_Datatype datatype, MPI_Aint *lb, MPI_Aint *extent)
{
    GET_ANY_DTYPE(d, datatype, "MPI_Type_get_true_extent");
    *lb = d->true_lb;
    *extent = d->true_extent;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Type_get_true_extent)

int PMPI_Type_commit(MPI_Datatype *datatype)
{
    GET_ANY_DTYPE(d, *datatype, "MPI_Type_commit");
    d->committed = 1;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Type_commit)

int PMPI_Type_free(MPI_Datatype *datatype)
{
    GET_ANY_DTYPE(d, *datatype, "MPI_Type_free");
    if (d->predefined)
        return aptus_error(NULL, MPI_ERR_TYPE, "MPI_Type_free", "predefined datatype %s cannot be freed", d->name);
    return aptus_not_implemented("MPI_Type_free");
}
APTUS_ALIAS(Type_free)

int PMPI_Type_get_name(MPI_Datatype datatype, char *type_name, int *resultlen)
{
    GET_ANY_DTYPE(d, datatype, "MPI_Type_get_name");
    strcpy(type_name, d->name);
    *resultlen = (int)strlen(type_name);
    return MPI_SUCCESS;
}
APTUS_ALIAS(Type_get_name)
