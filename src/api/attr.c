/* Attributes and keyvals (MPI standard, section 7.7), including the predefined attributes of
 * MPI_COMM_WORLD. */
#include "api/check.h"

int PMPI_Comm_get_attr(MPI_Comm comm, int keyval, void *attribute_val, int *flag)
{
    /* The predefined attributes of MPI_COMM_WORLD; user keyvals come with the attribute
     * chapter. Values are returned as pointers to static ints, as the standard specifies. */
    static int tag_ub = APTUS_TAG_UB, host = MPI_PROC_NULL, io = MPI_ANY_SOURCE, wtime_global = 0, appnum, universe,
               lastused = MPI_ERR_LASTCODE;
    GET_COMM(c, comm, "MPI_Comm_get_attr");
    int *v = NULL;
    switch (keyval) {
    case MPI_TAG_UB: v = &tag_ub; break;
    case MPI_HOST: v = &host; break;
    case MPI_IO: v = &io; break;
    case MPI_WTIME_IS_GLOBAL: v = &wtime_global; break;
    case MPI_APPNUM:
        appnum = aptus_rt.pmi.appnum;
        v = &appnum;
        break;
    case MPI_UNIVERSE_SIZE:
        universe = aptus_rt.size;
        v = &universe;
        break;
    case MPI_LASTUSEDCODE: v = &lastused; break;
    default:
        return aptus_error(c, MPI_ERR_KEYVAL, "MPI_Comm_get_attr",
                           "keyval %d: only the predefined attributes are implemented so far", keyval);
    }
    *flag = 1;
    *(int **)attribute_val = v;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Comm_get_attr)

