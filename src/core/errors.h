/* Error reporting: every MPI error carries a message naming the call and the problem. */
#ifndef APTUS_CORE_ERRORS_H
#define APTUS_CORE_ERRORS_H

#include "core/objects.h"

/* Raises error class `errclass` found in MPI function `fn` (e.g. "MPI_Send") on communicator
 * `comm` (NULL: an error not tied to a communicator, raised on MPI_COMM_SELF as MPI-4 says).
 * Formats the message, stores it behind a fresh error code, invokes the error handler
 * (ERRORS_ARE_FATAL/ABORT print it and end the job) and returns the error code. */
int aptus_error(struct aptus_comm *comm, int errclass, const char *fn, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* MPI_ERR_UNSUPPORTED_OPERATION: "<fn>: not implemented in Aptus MPI". */
int aptus_not_implemented(const char *fn);
/* The class of any error code (0 for MPI_SUCCESS, -1 if not a valid code). */
int aptus_error_class_of(int code);
/* Message for an error code into buf (at most MPI_MAX_ERROR_STRING). Returns 0 or -1. */
int aptus_error_string(int code, char *buf, int *len);
/* Ends the whole job with this exit code, after printing msg (may be NULL). */
_Noreturn void aptus_abort_job(int code, const char *msg);

#endif
