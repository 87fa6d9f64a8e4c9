/* MPI_Get_hw_resource_info (MPI 4.1, "Process Hardware Resource Information"). */
#include "api/check.h"
#include "core/info.h"
#include "runtime/hwtopo.h"
#include "runtime/lock.h"

/* One key per hardware resource type the machine has, in the URI form the standard recommends
 * ("hwloc://Package", "hwloc://L3Cache", "hwloc://Core", ... from the top of the hierarchy
 * down), whose value is "true" when the calling process is restricted to one instance of that
 * type (its CPU binding lies within it) and "false" when its CPUs span several. Each key is a
 * value MPI_Comm_split_type's mpi_hw_resource_type accepts, and "true" is exactly when
 * MPI_COMM_TYPE_HW_GUIDED with it gives this process a communicator. Without a topology (built
 * without hwloc, or hwloc cannot read the machine) the object is empty. The topology is read on
 * the first call (runtime/hwtopo.h); the binding at every call. Like MPI_Info_create, it works
 * before MPI_Init too; the caller frees the object with MPI_Info_free. */
int PMPI_Get_hw_resource_info(MPI_Info *hw_info)
{
    APTUS_OUT_NULL(hw_info, MPI_INFO_NULL);
    APTUS_API_LOCK();
    if (!hw_info)
        return aptus_error(NULL, MPI_ERR_ARG, "MPI_Get_hw_resource_info", "null hw_info argument");
    struct aptus_info *i = aptus_info_new();
    if (!i)
        return aptus_error(NULL, MPI_ERR_NO_MEM, "MPI_Get_hw_resource_info", "out of memory");
    int id[APTUS_HW_NTYPES];
    aptus_hw_instances(id);
    for (int t = 0; t < APTUS_HW_NTYPES; t++) {
        if (id[t] == APTUS_HW_ABSENT)
            continue;
        if (aptus_info_set(i, aptus_hw_type_uri(t), id[t] >= 0 ? "true" : "false")) {
            aptus_info_destroy(i);
            return aptus_error(NULL, MPI_ERR_NO_MEM, "MPI_Get_hw_resource_info", "out of memory");
        }
    }
    *hw_info = (MPI_Info)i;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Get_hw_resource_info)
