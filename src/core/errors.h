/* Error reporting: every MPI error carries a message naming the call and the problem.
 *
 * Error codes and classes (all non-negative ints):
 *   0                              MPI_SUCCESS
 *   1 .. MPI_ERR_LASTCODE          predefined classes (those with a description in errstr.c)
 *   APTUS_ERR_USER_FIRST ..        classes and codes added by MPI_Add_error_class/_code, one
 *     APTUS_ERR_USER_LIMIT - 1     table for both; removed values are handed out again
 *                                  (MPI_LASTUSEDCODE: the largest class handed out so far)
 *   APTUS_ERR_RAISED | slot << 20 | class
 *                                  a raised error: the class plus a ring slot holding the
 *                                  detailed message (see aptus_error). */
#ifndef APTUS_CORE_ERRORS_H
#define APTUS_CORE_ERRORS_H

#include "core/objects.h"

#define APTUS_ERR_USER_FIRST (MPI_ERR_LASTCODE + 1)
#define APTUS_ERR_USER_LIMIT 0x100000
#define APTUS_ERR_RAISED     0x40000000

/* Raises error class `errclass` found in MPI function `fn` (e.g. "MPI_Send") on communicator
 * `comm` (NULL: an error not tied to a communicator, raised on MPI_COMM_SELF as MPI-4 says, see
 * aptus_error_invoke).
 * Formats the message, stores it behind a fresh error code, invokes the error handler
 * (ERRORS_ARE_FATAL/ABORT print it and end the job) and returns the error code. */
int aptus_error(struct aptus_comm *comm, int errclass, const char *fn, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Like aptus_error, on error handler eh of the object with handle obj (a file, a window, a
 * session: eh->obj says which kind); NULL or a fatal handler ends the job. Returns the code as a
 * user handler left it -- the code the MPI call returns (MPI 4.1, 9.3) -- so every caller
 * returns it at once. */
int aptus_error_on(struct aptus_errhandler *eh, void *obj, int errclass, const char *fn, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* Invokes comm's error handler with an existing error code as it is (MPI_Comm_call_errhandler).
 * Fatal handlers print `fn` and the code's message and end the job. comm NULL (an error tied to
 * no object): MPI_COMM_SELF's handler, or MPI_COMM_WORLD's when the program set a handler on
 * MPI_COMM_WORLD and never on MPI_COMM_SELF (see aptus_errh_user_set). */
void aptus_error_invoke(struct aptus_comm *comm, int code, const char *fn);
/* Notes that the program set the error handler of comm (MPI_Comm_set_errhandler). */
void aptus_errh_user_set(struct aptus_comm *comm);
/* Invokes error handler `eh` for the object with handle `obj` (an MPI_Comm or MPI_File, per the
 * kind the handler was created for); NULL or a fatal handler ends the job as above. Returns the
 * code as the handler left it (a user handler may change it: MPI 4.1, 9.3). */
int aptus_errh_invoke(struct aptus_errhandler *eh, void *obj, int code, const char *fn);
/* A user callback (an attribute copy or delete function) returned `rc` != MPI_SUCCESS, or our
 * own MPI_ERR_NO_MEM came back in its place: raises it on comm and returns the code. A valid
 * error code goes to the error handler as it is; anything else becomes MPI_ERR_OTHER with the
 * message "<what> returned <rc>". */
int aptus_error_callback(struct aptus_comm *comm, int rc, const char *fn, const char *what);
/* MPI_ERR_UNSUPPORTED_OPERATION: "<fn>: not implemented in Aptus MPI". */
int aptus_not_implemented(const char *fn);
/* The class of any error code (0 for MPI_SUCCESS, -1 if not a valid code). */
int aptus_error_class_of(int code);
/* Message for an error code into buf (at most MPI_MAX_ERROR_STRING). Returns 0 or -1. */
int aptus_error_string(int code, char *buf, int *len);
/* A tool-interface function failing with class cls (an MPI_T_ERR_* code): keeps the message
 * (naming the call and the problem) for MPI_Error_string(cls) in this thread, calls no error
 * handler, prints nothing, and returns cls. */
int aptus_mpit_fail(int cls, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Ends the whole job with this exit code, after printing msg (may be NULL). */
_Noreturn void aptus_abort_job(int code, const char *msg);
/* The same for an abort that is a consequence of the loss of world rank lost_peer: the launcher
 * reports that rank's own failure instead when it learns of one soon enough. */
_Noreturn void aptus_abort_job_lost(int code, int lost_peer, const char *msg);

/* User error classes and codes (MPI_Add_error_*, MPI_Remove_error_*). Each returns 0 or an
 * MPI error class, with a static explanation in *why. */
int aptus_error_add_class(int *cls, const char **why);
int aptus_error_add_code(int cls, int *code, const char **why);
int aptus_error_add_string(int code, const char *str, const char **why);
int aptus_error_remove_class(int cls, const char **why);
int aptus_error_remove_code(int code, const char **why);
int aptus_error_remove_string(int code, const char **why);
/* The MPI_LASTUSEDCODE attribute value: the largest error class handed out so far (user classes
 * included; MPI_ERR_LASTCODE before any). It does not go down when classes are removed, so every
 * class in use is at most this value; as removed values are reused first it stays bounded by
 * the most classes and codes alive at once. A stable pointer, updated by aptus_error_add_class. */
int *aptus_error_lastused(void);

/* Drops one reference to an error handler; frees a user handler at zero. */
void aptus_errh_release(struct aptus_errhandler *e);
/* The handle of an error handler object (the predefined ones map back to their constants). */
MPI_Errhandler aptus_errh_handle(struct aptus_errhandler *e);
/* The predefined error handlers (core/handles.c). */
extern struct aptus_errhandler aptus_errh_fatal, aptus_errh_abort, aptus_errh_return;
/* The error handler of MPI_FILE_NULL: the default for files opened later (MPI_ERRORS_RETURN). */
extern struct aptus_errhandler *aptus_file_default_errh;

#endif
