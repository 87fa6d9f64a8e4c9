#include "core/errors.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/errstr.h"
#include "runtime/pmi.h"
#include "runtime/runtime.h"

/* Error codes: a class below 256 alone, or APTUS_CODE_BIT | slot << 8 | class, where slot names
 * a ring entry holding the detailed message. Old messages are overwritten; their codes then
 * report the class description only. */
#define APTUS_CODE_BIT  0x40000000
#define APTUS_ERR_SLOTS 64
#define APTUS_ERR_MSG   256

static struct {
    int code;
    char msg[APTUS_ERR_MSG];
} err_ring[APTUS_ERR_SLOTS];
static unsigned err_next;

int aptus_error_class_of(int code)
{
    if (code == MPI_SUCCESS)
        return MPI_SUCCESS;
    if (code > 0 && code <= MPI_ERR_LASTCODE && aptus_error_class_string(code))
        return code;
    if ((code & APTUS_CODE_BIT) && code > 0) {
        int cls = code & 0xff;
        if (aptus_error_class_string(cls))
            return cls;
    }
    return -1;
}

int aptus_error_string(int code, char *buf, int *len)
{
    int cls = aptus_error_class_of(code);
    if (cls < 0)
        return -1;
    const char *detail = NULL;
    if (code & APTUS_CODE_BIT) {
        unsigned slot = ((unsigned)code >> 8) & 0xfff;
        if (slot < APTUS_ERR_SLOTS && err_ring[slot].code == code)
            detail = err_ring[slot].msg;
    }
    const char *desc = cls == MPI_SUCCESS ? "no error" : aptus_error_class_string(cls);
    int n = detail ? snprintf(buf, MPI_MAX_ERROR_STRING, "%s (%s)", detail, desc)
                   : snprintf(buf, MPI_MAX_ERROR_STRING, "%s", desc);
    if (n >= MPI_MAX_ERROR_STRING)
        n = MPI_MAX_ERROR_STRING - 1;
    *len = n;
    return 0;
}

_Noreturn void aptus_abort_job(int code, const char *msg)
{
    if (msg)
        fprintf(stderr, "Aptus MPI: rank %d: %s\n", aptus_rt.rank, msg);
    fflush(stdout);
    fflush(stderr);
    aptus_runtime_emergency_cleanup();
    if (!aptus_rt.pmi.singleton)
        aptus_pmi_abort(code, msg ? msg : "MPI_Abort");
    _exit(code);
}

int aptus_error(struct aptus_comm *comm, int errclass, const char *fn, const char *fmt, ...)
{
    unsigned slot = err_next++ % APTUS_ERR_SLOTS;
    int code = APTUS_CODE_BIT | (int)(slot << 8) | errclass;
    int n = snprintf(err_ring[slot].msg, APTUS_ERR_MSG, "%s: ", fn);
    va_list ap;
    va_start(ap, fmt);
    if (n > 0 && n < APTUS_ERR_MSG)
        vsnprintf(err_ring[slot].msg + n, APTUS_ERR_MSG - (size_t)n, fmt, ap);
    va_end(ap);
    err_ring[slot].code = code;

    if (!comm)
        comm = &aptus_comm_self_obj;
    struct aptus_errhandler *eh = comm->errh;
    if (!aptus_rt.initialized || !eh || eh->kind == APTUS_ERRH_FATAL || eh->kind == APTUS_ERRH_ABORT) {
        char text[MPI_MAX_ERROR_STRING];
        int len;
        aptus_error_string(code, text, &len);
        aptus_abort_job(errclass, text);
    }
    if (eh->kind == APTUS_ERRH_USER && eh->comm_fn) {
        MPI_Comm h = comm->handle;
        int c = code;
        eh->comm_fn(&h, &c);
    }
    return code;
}

int aptus_not_implemented(const char *fn)
{
    return aptus_error(NULL, MPI_ERR_UNSUPPORTED_OPERATION, fn, "not implemented in Aptus MPI");
}
