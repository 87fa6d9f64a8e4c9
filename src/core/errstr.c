/* English descriptions of the predefined MPI error classes. */
#include "core/errstr.h"

#include <mpi.h>
#include <stddef.h>

const char *aptus_error_class_string(int errclass)
{
    switch (errclass) {
    case MPI_SUCCESS: return "no error";
    case MPI_ERR_BUFFER: return "invalid buffer pointer";
    case MPI_ERR_COUNT: return "invalid count argument";
    case MPI_ERR_TYPE: return "invalid datatype argument";
    case MPI_ERR_TAG: return "invalid tag argument";
    case MPI_ERR_COMM: return "invalid communicator";
    case MPI_ERR_RANK: return "invalid rank";
    case MPI_ERR_REQUEST: return "invalid request handle";
    case MPI_ERR_ROOT: return "invalid root rank";
    case MPI_ERR_GROUP: return "invalid group";
    case MPI_ERR_OP: return "invalid reduction operation";
    case MPI_ERR_TOPOLOGY: return "invalid topology: the communicator has no or the wrong kind of topology";
    case MPI_ERR_DIMS: return "invalid dimension argument";
    case MPI_ERR_ARG: return "invalid argument";
    case MPI_ERR_UNKNOWN: return "unknown error";
    case MPI_ERR_TRUNCATE: return "message truncated: the receive buffer is too small";
    case MPI_ERR_OTHER: return "other error (the error string of the code has details)";
    case MPI_ERR_INTERN: return "internal error in the MPI library";
    case MPI_ERR_PENDING: return "operation not completed yet (pending request)";
    case MPI_ERR_IN_STATUS: return "error code is in the status of one or more requests";
    case MPI_ERR_ACCESS: return "permission denied";
    case MPI_ERR_AMODE: return "invalid file access mode";
    case MPI_ERR_ASSERT: return "invalid assertion argument";
    case MPI_ERR_BAD_FILE: return "invalid file name";
    case MPI_ERR_BASE: return "invalid base address";
    case MPI_ERR_CONVERSION: return "error in a user-supplied data conversion function";
    case MPI_ERR_DISP: return "invalid displacement argument";
    case MPI_ERR_DUP_DATAREP: return "data representation name is already registered";
    case MPI_ERR_FILE_EXISTS: return "file already exists";
    case MPI_ERR_FILE_IN_USE: return "file is in use by another process";
    case MPI_ERR_FILE: return "invalid file handle";
    case MPI_ERR_INFO_KEY: return "info key is too long or empty";
    case MPI_ERR_INFO_NOKEY: return "info key is not defined in the info object";
    case MPI_ERR_INFO_VALUE: return "info value is too long or empty";
    case MPI_ERR_INFO: return "invalid info object";
    case MPI_ERR_IO: return "I/O error";
    case MPI_ERR_KEYVAL: return "invalid attribute key";
    case MPI_ERR_LOCKTYPE: return "invalid window lock type";
    case MPI_ERR_NAME: return "service name is not published";
    case MPI_ERR_NO_MEM: return "out of memory";
    case MPI_ERR_NOT_SAME: return "collective argument is not the same on all processes";
    case MPI_ERR_NO_SPACE: return "not enough space on the storage device";
    case MPI_ERR_NO_SUCH_FILE: return "file does not exist";
    case MPI_ERR_PORT: return "invalid port name";
    case MPI_ERR_QUOTA: return "storage quota exceeded";
    case MPI_ERR_READ_ONLY: return "file or file system is read-only";
    case MPI_ERR_RMA_ATTACH: return "memory cannot be attached to the dynamic window";
    case MPI_ERR_RMA_CONFLICT: return "conflicting accesses to a window";
    case MPI_ERR_RMA_RANGE: return "target memory is outside the window";
    case MPI_ERR_RMA_SHARED: return "memory cannot be shared through the window";
    case MPI_ERR_RMA_SYNC: return "wrong synchronization of one-sided operations";
    case MPI_ERR_SERVICE: return "invalid service name";
    case MPI_ERR_SIZE: return "invalid size argument";
    case MPI_ERR_SPAWN: return "processes could not be spawned";
    case MPI_ERR_UNSUPPORTED_DATAREP: return "unsupported data representation";
    case MPI_ERR_UNSUPPORTED_OPERATION: return "operation is not supported";
    case MPI_ERR_WIN: return "invalid window";
    case MPI_ERR_RMA_FLAVOR: return "operation is not allowed on a window of this flavor";
    case MPI_ERR_PROC_ABORTED: return "operation involves a process that has aborted";
    case MPI_ERR_VALUE_TOO_LARGE: return "value is too large to be stored in the output argument";
    case MPI_ERR_SESSION: return "invalid session";
    case MPI_ERR_ERRHANDLER: return "invalid error handler";
    case MPI_ERR_ABI: return "mismatch between the MPI ABI of the program and that of the library";

    case MPI_T_ERR_CANNOT_INIT: return "the tool interface cannot be initialized";
    case MPI_T_ERR_NOT_ACCESSIBLE: return "the tool interface is not accessible in this state";
    case MPI_T_ERR_NOT_INITIALIZED: return "the tool interface is not initialized";
    case MPI_T_ERR_NOT_SUPPORTED: return "requested tool interface functionality is not supported";
    case MPI_T_ERR_MEMORY: return "out of memory in the tool interface";
    case MPI_T_ERR_INVALID: return "invalid use of the tool interface or invalid argument";
    case MPI_T_ERR_INVALID_INDEX: return "invalid tool variable, category, event or source index";
    case MPI_T_ERR_INVALID_ITEM: return "invalid item index of an enumeration";
    case MPI_T_ERR_INVALID_SESSION: return "invalid performance variable session";
    case MPI_T_ERR_INVALID_HANDLE: return "invalid tool interface handle";
    case MPI_T_ERR_INVALID_NAME: return "no tool variable, category or event has this name";
    case MPI_T_ERR_OUT_OF_HANDLES: return "no more tool interface handles available";
    case MPI_T_ERR_OUT_OF_SESSIONS: return "no more performance variable sessions available";
    case MPI_T_ERR_CVAR_SET_NOT_NOW: return "control variable cannot be set at this moment";
    case MPI_T_ERR_CVAR_SET_NEVER: return "control variable cannot be set until the end of execution";
    case MPI_T_ERR_PVAR_NO_WRITE: return "performance variable cannot be written or reset";
    case MPI_T_ERR_PVAR_NO_STARTSTOP: return "performance variable cannot be started or stopped";
    case MPI_T_ERR_PVAR_NO_ATOMIC: return "performance variable cannot be read and reset atomically";
    default: return NULL;
    }
}
