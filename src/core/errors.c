#include "core/errors.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/errstr.h"
#include "runtime/pmi.h"
#include "runtime/progress.h"
#include "runtime/runtime.h"

/* Raised errors: APTUS_ERR_RAISED | slot << 20 | class (see errors.h), where slot names a ring
 * entry holding the detailed message. Old messages are overwritten; their codes then report the
 * class description only. */
#define CLASS_BITS 20
#define CLASS_MASK ((1 << CLASS_BITS) - 1)
#define ERR_SLOTS  64
#define ERR_MSG    256

_Static_assert(APTUS_ERR_USER_LIMIT <= (1 << CLASS_BITS), "user classes must fit the class field");
_Static_assert(ERR_SLOTS <= (APTUS_ERR_RAISED >> CLASS_BITS), "slots must fit below the raised bit");

static struct {
    int code;
    char msg[ERR_MSG];
} err_ring[ERR_SLOTS];
static unsigned err_next;

/* ---- user classes and codes ----
 *
 * One table for both: value = APTUS_ERR_USER_FIRST + index. Removed entries go on a FIFO free
 * list and are handed out again (oldest first) before the table grows, so adding and removing
 * in a loop takes O(1) per call and the values stay below APTUS_ERR_USER_FIRST + the most
 * classes and codes ever alive at once. */

enum { USER_NONE, USER_CLASS, USER_CODE };
struct user_err {
    int kind;
    int cls;    /* USER_CODE: its class */
    int ncodes; /* USER_CLASS: how many codes it has */
    int next;   /* USER_NONE: the next free index, or -1 */
    char *str;  /* MPI_Add_error_string, or NULL */
};
static struct user_err *uerr; /* index: value - APTUS_ERR_USER_FIRST */
static int nuerr, capuerr;
static int free_head = -1, free_tail = -1;
static int lastused = MPI_ERR_LASTCODE;

static struct user_err *user_entry(int v)
{
    if (v < APTUS_ERR_USER_FIRST || v - APTUS_ERR_USER_FIRST >= nuerr)
        return NULL;
    struct user_err *u = &uerr[v - APTUS_ERR_USER_FIRST];
    return u->kind == USER_NONE ? NULL : u;
}

static int is_predef_class(int v)
{
    return v > 0 && v <= MPI_ERR_LASTCODE && aptus_error_class_string(v) != NULL;
}

static int valid_class(int cls)
{
    struct user_err *u = user_entry(cls);
    return is_predef_class(cls) || (u && u->kind == USER_CLASS);
}

/* A new class (cls ignored: a class is its own class) or code of class cls. */
static int user_new(int kind, int cls, int *out, const char **why)
{
    int i;
    if (free_head >= 0) {
        i = free_head;
        free_head = uerr[i].next;
        if (free_head < 0)
            free_tail = -1;
    } else {
        if (APTUS_ERR_USER_FIRST + nuerr >= APTUS_ERR_USER_LIMIT) {
            *why = "no more error classes and codes can be added (remove some first)";
            return MPI_ERR_OTHER;
        }
        if (nuerr == capuerr) {
            int ncap = capuerr ? 2 * capuerr : 32;
            struct user_err *n = realloc(uerr, (size_t)ncap * sizeof *n);
            if (!n) {
                *why = "out of memory";
                return MPI_ERR_NO_MEM;
            }
            uerr = n;
            capuerr = ncap;
        }
        i = nuerr++;
    }
    *out = APTUS_ERR_USER_FIRST + i;
    uerr[i] = (struct user_err){ kind, kind == USER_CLASS ? *out : cls, 0, -1, NULL };
    if (kind == USER_CLASS) {
        if (*out > lastused)
            lastused = *out; /* MPI_LASTUSEDCODE: the largest error class handed out */
    } else if (cls > MPI_ERR_LASTCODE) {
        user_entry(cls)->ncodes++;
    }
    return MPI_SUCCESS;
}

/* Puts entry u back on the free list. */
static void user_release(struct user_err *u)
{
    int i = (int)(u - uerr);
    *u = (struct user_err){ USER_NONE, 0, 0, -1, NULL };
    if (free_tail >= 0)
        uerr[free_tail].next = i;
    else
        free_head = i;
    free_tail = i;
}

int aptus_error_add_class(int *cls, const char **why)
{
    return user_new(USER_CLASS, 0, cls, why);
}

int aptus_error_add_code(int cls, int *code, const char **why)
{
    if (!valid_class(cls)) {
        *why = "not a valid error class (predefined or added by MPI_Add_error_class)";
        return MPI_ERR_ARG;
    }
    return user_new(USER_CODE, cls, code, why);
}

int aptus_error_add_string(int code, const char *str, const char **why)
{
    if (code >= 0 && code <= MPI_ERR_LASTCODE) {
        *why = "the strings of predefined error classes cannot be changed";
        return MPI_ERR_ARG;
    }
    struct user_err *u = user_entry(code);
    if (!u) {
        *why = "not an error class or code added by MPI_Add_error_class or MPI_Add_error_code";
        return MPI_ERR_ARG;
    }
    if (!str) {
        *why = "null string";
        return MPI_ERR_ARG;
    }
    if (strlen(str) >= MPI_MAX_ERROR_STRING) {
        *why = "string longer than MPI_MAX_ERROR_STRING - 1 characters";
        return MPI_ERR_ARG;
    }
    char *s = strdup(str);
    if (!s) {
        *why = "out of memory";
        return MPI_ERR_NO_MEM;
    }
    free(u->str);
    u->str = s;
    return MPI_SUCCESS;
}

int aptus_error_remove_class(int cls, const char **why)
{
    struct user_err *u = user_entry(cls);
    if (!u || u->kind != USER_CLASS) {
        *why = "not an error class added by MPI_Add_error_class";
        return MPI_ERR_ARG;
    }
    if (u->ncodes) {
        *why = "error codes of this class have not been removed (MPI_Remove_error_code)";
        return MPI_ERR_ARG;
    }
    if (u->str) {
        *why = "the error string of this class has not been removed (MPI_Remove_error_string)";
        return MPI_ERR_ARG;
    }
    user_release(u);
    return MPI_SUCCESS;
}

int aptus_error_remove_code(int code, const char **why)
{
    struct user_err *u = user_entry(code);
    if (!u || u->kind != USER_CODE) {
        *why = "not an error code added by MPI_Add_error_code";
        return MPI_ERR_ARG;
    }
    if (u->str) {
        *why = "the error string of this code has not been removed (MPI_Remove_error_string)";
        return MPI_ERR_ARG;
    }
    if (u->cls > MPI_ERR_LASTCODE)
        user_entry(u->cls)->ncodes--;
    user_release(u);
    return MPI_SUCCESS;
}

int aptus_error_remove_string(int code, const char **why)
{
    struct user_err *u = user_entry(code);
    if (!u || !u->str) {
        *why = "no error string was added for this code";
        return MPI_ERR_ARG;
    }
    free(u->str);
    u->str = NULL;
    return MPI_SUCCESS;
}

int *aptus_error_lastused(void)
{
    return &lastused;
}

/* ---- codes to classes and strings ---- */

int aptus_error_class_of(int code)
{
    if (code == MPI_SUCCESS)
        return MPI_SUCCESS;
    if (code < 0)
        return -1;
    if (code & APTUS_ERR_RAISED) {
        int cls = code & CLASS_MASK;
        return valid_class(cls) ? cls : -1;
    }
    if (is_predef_class(code))
        return code;
    struct user_err *u = user_entry(code);
    return u ? u->cls : -1;
}

/* The description of a predefined class, or the string added for a user class or code ("" if
 * none was added: the standard's default). */
static const char *own_text(int v)
{
    const char *s = aptus_error_class_string(v);
    if (s)
        return s;
    struct user_err *u = user_entry(v);
    return u && u->str ? u->str : "";
}

/* The tool interface's last failure in this thread: its functions return the bare class (a
 * tool compares the code with MPI_T_ERR_*), so the message naming the call and the problem is
 * kept here and shown by MPI_Error_string for that class. */
static _Thread_local struct {
    int cls;
    char msg[320];
} mpit_last;

int aptus_mpit_fail(int cls, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(mpit_last.msg, sizeof mpit_last.msg, fmt, ap);
    va_end(ap);
    mpit_last.cls = cls;
    return cls;
}

int aptus_error_string(int code, char *buf, int *len)
{
    int cls = aptus_error_class_of(code);
    if (cls < 0)
        return -1;
    const char *detail = NULL, *desc;
    if (code & APTUS_ERR_RAISED) {
        unsigned slot = ((unsigned)code >> CLASS_BITS) & 0x3ff;
        if (slot < ERR_SLOTS && err_ring[slot].code == code)
            detail = err_ring[slot].msg;
        desc = own_text(cls);
    } else {
        desc = own_text(code); /* a user code has its own string, not its class's */
        if (code == mpit_last.cls && code != MPI_SUCCESS && mpit_last.msg[0])
            detail = mpit_last.msg;
    }
    int n = detail && *desc ? snprintf(buf, MPI_MAX_ERROR_STRING, "%s (%s)", detail, desc)
            : detail        ? snprintf(buf, MPI_MAX_ERROR_STRING, "%s", detail)
                            : snprintf(buf, MPI_MAX_ERROR_STRING, "%s", desc);
    if (n >= MPI_MAX_ERROR_STRING)
        n = MPI_MAX_ERROR_STRING - 1;
    *len = n < 0 ? 0 : n;
    return 0;
}

/* ---- raising errors ---- */

_Noreturn void aptus_abort_job_lost(int code, int lost_peer, const char *msg)
{
    if (msg)
        fprintf(stderr, "Aptus MPI: rank %d: %s\n", aptus_rt.rank, msg);
    fflush(stdout);
    fflush(stderr);
    aptus_cleanup_run();
    if (!aptus_rt.pmi.singleton)
        aptus_pmi_abort(code, msg ? msg : "MPI_Abort", lost_peer);
    _exit(code);
}

_Noreturn void aptus_abort_job(int code, const char *msg)
{
    aptus_abort_job_lost(code, -1, msg);
}

/* Exit status of a job ended by an error of this class: the class where it fits in 8 bits. */
static int exit_status(int cls)
{
    return cls > 0 && cls < 256 ? cls : 1;
}

/* What a fatal error handler does with an error code: print it (with `fn` for codes that carry
 * no message of their own) and end the job. */
static _Noreturn void aptus_error_fatal(int code, const char *fn)
{
    char text[MPI_MAX_ERROR_STRING], msg[MPI_MAX_ERROR_STRING + 64];
    int len;
    if (code & APTUS_ERR_RAISED)
        snprintf(msg, sizeof msg, "%s", aptus_error_string(code, text, &len) == 0 ? text : "unknown error");
    else
        snprintf(msg, sizeof msg, "%s: error code %d: %s", fn, code,
                 aptus_error_string(code, text, &len) == 0 ? text : "unknown error code");
    aptus_abort_job(exit_status(aptus_error_class_of(code)), msg);
}

int aptus_errh_invoke(struct aptus_errhandler *eh, void *obj, int code, const char *fn)
{
    if (!aptus_rt.initialized || !eh || eh->kind == APTUS_ERRH_FATAL || eh->kind == APTUS_ERRH_ABORT)
        aptus_error_fatal(code, fn);
    if (eh->kind != APTUS_ERRH_USER)
        return code;
    int c = code;
    if (eh->obj == APTUS_ERRH_FOR_COMM) {
        MPI_Comm h = obj;
        eh->comm_fn(&h, &c);
    } else if (eh->obj == APTUS_ERRH_FOR_FILE) {
        MPI_File h = obj;
        eh->file_fn(&h, &c);
    } else if (eh->obj == APTUS_ERRH_FOR_WIN) {
        MPI_Win h = obj;
        eh->win_fn(&h, &c);
    } else if (eh->obj == APTUS_ERRH_FOR_SESSION) {
        MPI_Session h = obj;
        eh->session_fn(&h, &c);
    }
    return c;
}

/* Whether the program set an error handler on MPI_COMM_SELF / MPI_COMM_WORLD. */
static int self_errh_set, world_errh_set;

void aptus_errh_user_set(struct aptus_comm *comm)
{
    if (comm == &aptus_comm_self_obj)
        self_errh_set = 1;
    else if (comm == &aptus_comm_world_obj)
        world_errh_set = 1;
}

void aptus_error_invoke(struct aptus_comm *comm, int code, const char *fn)
{
    /* No communicator: MPI_COMM_SELF's handler (MPI 4.0), or MPI_COMM_WORLD's when the program
     * set one only there, as programs written before MPI 4.0 expect (MPICH does the same). */
    if (!comm)
        comm = world_errh_set && !self_errh_set ? &aptus_comm_world_obj : &aptus_comm_self_obj;
    aptus_errh_invoke(comm->errh, (void *)comm->handle, code, fn);
}

int aptus_error_callback(struct aptus_comm *comm, int rc, const char *fn, const char *what)
{
    if (rc == MPI_ERR_NO_MEM)
        return aptus_error(comm, MPI_ERR_NO_MEM, fn, "out of memory");
    if (aptus_error_class_of(rc) <= 0)
        return aptus_error(comm, MPI_ERR_OTHER, fn, "%s returned %d", what, rc);
    aptus_error_invoke(comm, rc, fn);
    return rc;
}

/* Stores "fn: message" in a fresh ring slot and returns the error code that refers to it. */
static __attribute__((format(printf, 3, 0))) int error_store(int errclass, const char *fn, const char *fmt, va_list ap)
{
    unsigned slot = err_next++ % ERR_SLOTS;
    int code = APTUS_ERR_RAISED | (int)(slot << CLASS_BITS) | (errclass & CLASS_MASK);
    int n = snprintf(err_ring[slot].msg, ERR_MSG, "%s: ", fn);
    if (n > 0 && n < ERR_MSG)
        vsnprintf(err_ring[slot].msg + n, ERR_MSG - (size_t)n, fmt, ap);
    err_ring[slot].code = code;
    return code;
}

int aptus_error(struct aptus_comm *comm, int errclass, const char *fn, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int code = error_store(errclass, fn, fmt, ap);
    va_end(ap);
    aptus_error_invoke(comm, code, fn);
    return code;
}

int aptus_error_on(struct aptus_errhandler *eh, void *obj, int errclass, const char *fn, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int code = error_store(errclass, fn, fmt, ap);
    va_end(ap);
    if (!eh || eh->kind != APTUS_ERRH_RETURN)
        code = aptus_errh_invoke(eh, obj, code, fn);
    return code;
}

int aptus_not_implemented(const char *fn)
{
    return aptus_error(NULL, MPI_ERR_UNSUPPORTED_OPERATION, fn, "not implemented in Aptus MPI");
}

/* ---- error handler objects ---- */

struct aptus_errhandler *aptus_file_default_errh = &aptus_errh_return;

void aptus_errh_release(struct aptus_errhandler *e)
{
    if (e && --e->refcount == 0 && e->kind == APTUS_ERRH_USER) {
        e->magic = 0;
        aptus_obj_free(APTUS_OBJ_ERRH, e);
    }
}

MPI_Errhandler aptus_errh_handle(struct aptus_errhandler *e)
{
    return e == &aptus_errh_fatal    ? MPI_ERRORS_ARE_FATAL
           : e == &aptus_errh_abort  ? MPI_ERRORS_ABORT
           : e == &aptus_errh_return ? MPI_ERRORS_RETURN
                                     : (MPI_Errhandler)e;
}
