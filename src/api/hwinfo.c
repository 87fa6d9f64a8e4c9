/* MPI_Get_hw_resource_info (MPI 4.1, "Process Hardware Resource Information"). */
#include "api/check.h"
#include "core/info.h"
#include "runtime/lock.h"

/* The standard leaves the keys of the returned object to the implementation. Aptus MPI knows no
 * hardware topology beyond "the ranks of one node share memory" (MPI_COMM_TYPE_SHARED), so the
 * object it returns is new and empty, which a program must accept (Open MPI answers the same);
 * the caller frees it with MPI_Info_free. Like MPI_Info_create, it works before MPI_Init too. */
int PMPI_Get_hw_resource_info(MPI_Info *hw_info)
{
    APTUS_OUT_NULL(hw_info, MPI_INFO_NULL);
    APTUS_API_LOCK();
    if (!hw_info)
        return aptus_error(NULL, MPI_ERR_ARG, "MPI_Get_hw_resource_info", "null hw_info argument");
    struct aptus_info *i = aptus_info_new();
    if (!i)
        return aptus_error(NULL, MPI_ERR_NO_MEM, "MPI_Get_hw_resource_info", "out of memory");
    *hw_info = (MPI_Info)i;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Get_hw_resource_info)
