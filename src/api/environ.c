/* Environment functions with no chapter of their own here: MPI_Pcontrol (profiling, 15.2),
 * and MPI_Alloc_mem / MPI_Free_mem (9.2). */
#include <stdint.h>
#include <stdlib.h>

#include "api/check.h"
#include "core/info.h"
#include "runtime/lock.h"

/* The profiling interface's hook: MPI itself does nothing with the level (the standard defines
 * MPI_Pcontrol as a no-op for the library; a profiling layer intercepts it). */
int PMPI_Pcontrol(const int level, ...)
{
    APTUS_API_LOCK();
    (void)level;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Pcontrol)

/* Plain heap memory: there is no memory the channels could use better (the shared-memory
 * channel copies through its segments; one-sided reads work on any address). The info hints
 * are checked and otherwise ignored. */
int PMPI_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr)
{
    APTUS_API_LOCK();
    const char *fn = "MPI_Alloc_mem";
    API_INIT(fn);
    if (size < 0)
        return aptus_error(NULL, MPI_ERR_ARG, fn, "negative size %lld", (long long)size);
    if (!baseptr)
        return aptus_error(NULL, MPI_ERR_ARG, fn, "null baseptr argument");
    if (info != MPI_INFO_NULL && !aptus_info_get(info))
        return aptus_error(NULL, MPI_ERR_INFO, fn, "invalid info handle");
    if ((uint64_t)size > SIZE_MAX)
        return aptus_error(NULL, MPI_ERR_NO_MEM, fn, "cannot allocate %lld bytes", (long long)size);
    void *p = malloc(size ? (size_t)size : 1);
    if (!p)
        return aptus_error(NULL, MPI_ERR_NO_MEM, fn, "cannot allocate %lld bytes", (long long)size);
    *(void **)baseptr = p;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Alloc_mem)

int PMPI_Free_mem(void *base)
{
    APTUS_API_LOCK();
    API_INIT("MPI_Free_mem");
    free(base);
    return MPI_SUCCESS;
}
APTUS_ALIAS(Free_mem)
