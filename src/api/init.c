/* Environment management (MPI standard, chapter 11): init, finalize, abort, versions, timers. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "api/check.h"
#include "channel/channel.h"
#include "core/attr.h"
#include "runtime/lock.h"
#include "runtime/runtime.h"

int aptus_api_not_initialized(const char *fn)
{
    fprintf(stderr, "Aptus MPI: %s called %s\n", fn,
            aptus_rt.finalized ? "after MPI_Finalize (and the last MPI_Session_finalize after it)"
                               : "before MPI_Init (or MPI_Session_init)");
    fflush(stderr);
    _exit(MPI_ERR_OTHER);
}

/* The world model: MPI_Init starts the runtime unless a session already did (core/session.h). */
static int do_init(int required, int *provided, const char *fn)
{
    if (aptus_rt.world_initialized || aptus_rt.world_finalized)
        return aptus_error(NULL, MPI_ERR_OTHER, fn, "MPI is already %s",
                           aptus_rt.world_finalized ? "finalized" : "initialized");
    int level;
    int rc = aptus_runtime_acquire(required, &level);
    if (rc) {
        aptus_abort_job(rc, "MPI initialization failed (see the message above)");
    }
    aptus_rt.thread_level = level;
    if (provided)
        *provided = level;
    aptus_rt.world_initialized = 1;
    aptus_dpm_init_child(); /* (started by MPI_Comm_spawn: the parents wait) */
    return MPI_SUCCESS;
}

int PMPI_Init(int *argc, char ***argv)
{
    APTUS_API_LOCKED(do_init(MPI_THREAD_SINGLE, NULL, "MPI_Init"));
}
APTUS_ALIAS(Init)

int PMPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    APTUS_API_LOCK();
    /* Provided: the level asked for; MPI_THREAD_MULTIPLE turns the library's lock on. */
    return do_init(required, provided, "MPI_Init_thread");
}
APTUS_ALIAS(Init_thread)

int PMPI_Finalize(void)
{
    APTUS_API_LOCK();
    API_INIT("MPI_Finalize");
    if (!aptus_rt.world_initialized || aptus_rt.world_finalized)
        return aptus_error(NULL, MPI_ERR_OTHER, "MPI_Finalize", "%s",
                           aptus_rt.world_finalized ? "MPI_Finalize was already called"
                                                    : "MPI_Init was not called (only sessions are open)");
    /* MPI_COMM_SELF's attributes are deleted first, as if it were freed (MPI 4.1, 11.2.2). */
    int arc = aptus_attr_delete_all(APTUS_ATTR_COMM, MPI_COMM_SELF, &aptus_comm_self_obj.attrs);
    if (arc)
        aptus_error_callback(NULL, arc, "MPI_Finalize", "an attribute delete callback of MPI_COMM_SELF");
    aptus_rt.world_finalized = 1;
    /* the runtime stays up while sessions are open; the last user tears it down */
    int rc = aptus_runtime_release();
    return rc ? aptus_error(NULL, rc, "MPI_Finalize", "finalization failed") : MPI_SUCCESS;
}
APTUS_ALIAS(Finalize)

int PMPI_Initialized(int *flag)
{
    APTUS_API_LOCK();
    *flag = aptus_rt.world_initialized;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Initialized)

int PMPI_Finalized(int *flag)
{
    APTUS_API_LOCK();
    *flag = aptus_rt.world_finalized;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Finalized)

int PMPI_Query_thread(int *provided)
{
    APTUS_API_LOCK();
    API_INIT("MPI_Query_thread");
    *provided = aptus_rt.thread_level;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Query_thread)

int PMPI_Is_thread_main(int *flag)
{
    APTUS_API_LOCK();
    API_INIT("MPI_Is_thread_main");
    *flag = pthread_equal(pthread_self(), aptus_rt.main_thread) != 0;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Is_thread_main)

int PMPI_Abort(MPI_Comm comm, int errorcode)
{
    APTUS_API_LOCK();
    char msg[128];
    snprintf(msg, sizeof msg, "MPI_Abort called with error code %d", errorcode);
    aptus_abort_job(errorcode, msg);
}
APTUS_ALIAS(Abort)

int PMPI_Get_version(int *version, int *subversion)
{
    APTUS_API_LOCK();
    *version = MPI_VERSION;
    *subversion = MPI_SUBVERSION;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Get_version)

int PMPI_Get_library_version(char *version, int *resultlen)
{
    APTUS_API_LOCK();
    /* The channels of this build (a build without libfabric has no network channel). */
    int n = snprintf(version, MPI_MAX_LIBRARY_VERSION_STRING, "Aptus MPI 0.1.0 (MPI 5.0 standard ABI; channels: %s)",
                     aptus_channels_available());
    if (n >= MPI_MAX_LIBRARY_VERSION_STRING)
        n = MPI_MAX_LIBRARY_VERSION_STRING - 1;
    *resultlen = n;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Get_library_version)

int PMPI_Get_processor_name(char *name, int *resultlen)
{
    APTUS_API_LOCK();
    char host[MPI_MAX_PROCESSOR_NAME];
    if (gethostname(host, sizeof host) != 0)
        strcpy(host, "localhost");
    host[sizeof host - 1] = 0;
    int n = snprintf(name, MPI_MAX_PROCESSOR_NAME, "%s", host);
    *resultlen = n;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Get_processor_name)

/* MPI_Wtime and MPI_Wtick touch no shared state and take no lock: a computation that reads the
 * clock often (OSU's compute loop calls it every microsecond) is not taken for a thread inside
 * MPI, which would keep the progress thread away. */
double PMPI_Wtime(void)
{
    return aptus_wtime() - aptus_rt.t0;
}
APTUS_ALIAS(Wtime)

double PMPI_Wtick(void)
{
    return 1e-9;
}
APTUS_ALIAS(Wtick)
