/* Aptus MPI extensions (include/mpix_aptus.h). */
#include <stdint.h>

#include "api/check.h"
#include "channel/channel.h"
#include "mpix_aptus.h"
#include "pt2pt/pt2pt.h"
#include "runtime/lock.h"

int MPIX_Aptus_counter(const char *name, unsigned long long *value)
{
    APTUS_API_LOCK();
    static const char fn[] = "MPIX_Aptus_counter";
    API_INIT(fn);
    if (!name || !value)
        return aptus_error(&aptus_comm_world_obj, MPI_ERR_ARG, fn, "null %s argument", name ? "value" : "name");
    uint64_t v;
    if (aptus_pt2pt_counter(name, &v) != 0 && aptus_channel_counter(name, &v) != 0)
        return aptus_error(&aptus_comm_world_obj, MPI_ERR_ARG, fn,
                           "unknown counter '%s' (or its channel is not in use in this job); known: %s, %s", name,
                           aptus_pt2pt_counter_names, aptus_channel_counter_names());
    *value = (unsigned long long)v;
    return MPI_SUCCESS;
}
