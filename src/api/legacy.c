/* MPI-1 functions removed in MPI 3.0 that old programs still call (declared in mpi.h, section
 * 16, unless APTUS_NO_REMOVED_MPI1 is defined): address and extent queries. The removed
 * constructors and error-handler calls live beside their successors (api/datatype.c,
 * api/errhandler.c); MPI_Attr_* and MPI_Keyval_* (deprecated, not removed) in api/attr.c. */
#include <stdint.h>

#include "api/check.h"
#include "runtime/lock.h"

int PMPI_Address(void *location, MPI_Aint *address)
{
    APTUS_API_LOCK();
    if (!address)
        return aptus_error(NULL, MPI_ERR_ARG, "MPI_Address", "null address argument");
    *address = (MPI_Aint)(uintptr_t)location;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Address)

/* MPI_Type_extent, MPI_Type_lb and MPI_Type_ub: one bound of the type map (with the markers of
 * MPI_Type_create_resized, as MPI_LB and MPI_UB set them in MPI-1). */
enum { EXTENT, LB, UB };

static int bound(MPI_Datatype datatype, MPI_Aint *out, int which, const char *fn)
{
    GET_ANY_DTYPE(d, datatype, fn);
    if (!out)
        return aptus_error(NULL, MPI_ERR_ARG, fn, "null %s argument", which == EXTENT ? "extent" : "displacement");
    *out = which == EXTENT ? d->extent : which == LB ? d->lb : d->lb + d->extent;
    return MPI_SUCCESS;
}

int PMPI_Type_extent(MPI_Datatype datatype, MPI_Aint *extent)
{
    APTUS_API_LOCKED(bound(datatype, extent, EXTENT, "MPI_Type_extent"));
}
APTUS_ALIAS(Type_extent)

int PMPI_Type_lb(MPI_Datatype datatype, MPI_Aint *displacement)
{
    APTUS_API_LOCKED(bound(datatype, displacement, LB, "MPI_Type_lb"));
}
APTUS_ALIAS(Type_lb)

int PMPI_Type_ub(MPI_Datatype datatype, MPI_Aint *displacement)
{
    APTUS_API_LOCKED(bound(datatype, displacement, UB, "MPI_Type_ub"));
}
APTUS_ALIAS(Type_ub)
