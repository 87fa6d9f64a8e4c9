/* The Fortran bindings' runtime: sentinels, LOGICALs, strings, handle arrays (f_runtime.h). */
#include "fortran/f_runtime.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The sentinels are Fortran variables in common blocks of these names (mpif.h, the module
 * `mpi`): their addresses are what a program passes. The program's own copy of a common block
 * takes precedence over these definitions when it is linked (the dynamic linker binds every
 * reference to the executable's), so the addresses compared below are the program's. */
MPI_Fint aptus_f_bottom_[1] __attribute__((aligned(32)));
MPI_Fint aptus_f_in_place_[1] __attribute__((aligned(32)));
MPI_Fint aptus_f_buffer_automatic_[1] __attribute__((aligned(32)));
MPI_Fint aptus_f_status_ignore_[8] __attribute__((aligned(32)));
MPI_Fint aptus_f_statuses_ignore_[8] __attribute__((aligned(32)));
MPI_Fint aptus_f_errcodes_ignore_[1] __attribute__((aligned(32)));
MPI_Fint aptus_f_unweighted_[1] __attribute__((aligned(32)));
MPI_Fint aptus_f_weights_empty_[1] __attribute__((aligned(32)));
char aptus_f_argv_null_[1] __attribute__((aligned(32)));
char aptus_f_argvs_null_[1] __attribute__((aligned(32)));

/* The module mpi_f08's sentinels: variables of the module (BIND(C) names, gen/mpi_f08.f90). */
extern MPI_Fint aptus_f08_bottom, aptus_f08_in_place, aptus_f08_buffer_automatic, aptus_f08_status_ignore[8],
    aptus_f08_statuses_ignore[8], aptus_f08_errcodes_ignore[1], aptus_f08_unweighted[1], aptus_f08_weights_empty[1];

void *aptus_f_buf(void *p)
{
    if (p == (void *)aptus_f_bottom_ || p == (void *)&aptus_f08_bottom)
        return MPI_BOTTOM;
    if (p == (void *)aptus_f_in_place_ || p == (void *)&aptus_f08_in_place)
        return MPI_IN_PLACE;
    if (p == (void *)aptus_f_buffer_automatic_ || p == (void *)&aptus_f08_buffer_automatic)
        return MPI_BUFFER_AUTOMATIC;
    return p;
}

int aptus_f_in_place(const void *p)
{
    return p == (const void *)aptus_f_in_place_ || p == (const void *)&aptus_f08_in_place;
}

MPI_Status *aptus_f_status(MPI_Fint *s)
{
    if (s == aptus_f_status_ignore_ || s == aptus_f_statuses_ignore_ || s == aptus_f08_status_ignore ||
        s == aptus_f08_statuses_ignore)
        return MPI_STATUS_IGNORE;
    return (MPI_Status *)(void *)s;
}

int *aptus_f_errcodes(MPI_Fint *e)
{
    return e == aptus_f_errcodes_ignore_ || e == aptus_f08_errcodes_ignore ? MPI_ERRCODES_IGNORE : e;
}

int *aptus_f_weights(MPI_Fint *w)
{
    if (w == aptus_f_unweighted_ || w == aptus_f08_unweighted)
        return MPI_UNWEIGHTED;
    if (w == aptus_f_weights_empty_ || w == aptus_f08_weights_empty)
        return MPI_WEIGHTS_EMPTY;
    return w;
}

/* ---- LOGICAL ----------------------------------------------------------------------------- */

/* gfortran's .TRUE. and .FALSE.; a value other than .FALSE. reads as true. */
static MPI_Fint f_true = 1, f_false = 0;

int aptus_f_logical_in(MPI_Fint l)
{
    return l != f_false;
}

MPI_Fint aptus_f_logical_out(int c)
{
    return c ? f_true : f_false;
}

int *aptus_f_logicals_in(const MPI_Fint *f, int n, int *buf, int out_only)
{
    int *c = n <= APTUS_F_STACK ? buf : malloc(sizeof *c * (size_t)n);
    if (c && !out_only)
        for (int i = 0; i < n; i++)
            c[i] = aptus_f_logical_in(f[i]);
    return c;
}

void aptus_f_logicals_out(MPI_Fint *f, int n, const int *c)
{
    for (int i = 0; i < n; i++)
        f[i] = aptus_f_logical_out(c[i]);
}

/* ---- what this library tells the C library, when it is loaded --------------------------------- */

/* The Fortran ABI details of the compiler the bindings were built for (gfortran: INTEGER, REAL
 * and LOGICAL 4 bytes; no REAL*2 and so no COMPLEX*4), for MPI_Abi_get_fortran_info; and the
 * values of .TRUE. and .FALSE. (MPI_Abi_set_fortran_booleans). Values set before (by the
 * application, through the C library) are kept and used. Never fails a program's start. */
__attribute__((constructor)) static void f_register(void)
{
    /* the C library's MPI_F_STATUS(ES)_IGNORE and the f08 ones: Fortran's sentinels */
    MPI_F_STATUS_IGNORE = aptus_f_status_ignore_;
    MPI_F_STATUSES_IGNORE = aptus_f_statuses_ignore_;
    MPI_F08_STATUS_IGNORE = (MPI_F08_status *)(void *)aptus_f08_status_ignore;
    MPI_F08_STATUSES_IGNORE = (MPI_F08_status *)(void *)aptus_f08_statuses_ignore;
    MPI_Fint t = 0, f = 0;
    int is_set = 0;
    if (PMPI_Abi_get_fortran_booleans((int)sizeof(MPI_Fint), &t, &f, &is_set) == MPI_SUCCESS && is_set) {
        f_true = t;
        f_false = f;
    } else {
        PMPI_Abi_set_fortran_booleans((int)sizeof(MPI_Fint), &f_true, &f_false);
    }
    MPI_Info info = MPI_INFO_NULL;
    if (PMPI_Abi_get_fortran_info(&info) != MPI_SUCCESS || info != MPI_INFO_NULL) {
        if (info != MPI_INFO_NULL)
            PMPI_Info_free(&info);
        return;
    }
    static const char *const keys[][2] = {
        { "mpi_logical_size", "4" },
        { "mpi_integer_size", "4" },
        { "mpi_real_size", "4" },
        { "mpi_double_precision_size", "8" },
        { "mpi_logical1_supported", "true" },
        { "mpi_logical2_supported", "true" },
        { "mpi_logical4_supported", "true" },
        { "mpi_logical8_supported", "true" },
        { "mpi_logical16_supported", "true" },
        { "mpi_integer1_supported", "true" },
        { "mpi_integer2_supported", "true" },
        { "mpi_integer4_supported", "true" },
        { "mpi_integer8_supported", "true" },
        { "mpi_integer16_supported", "true" },
        { "mpi_real2_supported", "false" },
        { "mpi_real4_supported", "true" },
        { "mpi_real8_supported", "true" },
        { "mpi_real16_supported", "true" },
        { "mpi_complex4_supported", "false" },
        { "mpi_complex8_supported", "true" },
        { "mpi_complex16_supported", "true" },
        { "mpi_complex32_supported", "true" },
        { "mpi_double_complex_supported", "true" },
    };
    if (PMPI_Info_create(&info) != MPI_SUCCESS)
        return;
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
        PMPI_Info_set(info, keys[k][0], keys[k][1]);
    PMPI_Abi_set_fortran_info(info);
    PMPI_Info_free(&info);
}

/* ---- handle arrays (every handle of the standard ABI is a pointer) ------------------------ */

static void *from_int(int kind, MPI_Fint v)
{
    switch (kind) {
    case APTUS_F_COMM: return MPI_Comm_fromint(v);
    case APTUS_F_TYPE: return MPI_Type_fromint(v);
    case APTUS_F_ERRHANDLER: return MPI_Errhandler_fromint(v);
    case APTUS_F_FILE: return MPI_File_fromint(v);
    case APTUS_F_GROUP: return MPI_Group_fromint(v);
    case APTUS_F_INFO: return MPI_Info_fromint(v);
    case APTUS_F_MESSAGE: return MPI_Message_fromint(v);
    case APTUS_F_OP: return MPI_Op_fromint(v);
    case APTUS_F_REQUEST: return MPI_Request_fromint(v);
    case APTUS_F_SESSION: return MPI_Session_fromint(v);
    default: return MPI_Win_fromint(v);
    }
}

static MPI_Fint to_int(int kind, void *h)
{
    switch (kind) {
    case APTUS_F_COMM: return MPI_Comm_toint(h);
    case APTUS_F_TYPE: return MPI_Type_toint(h);
    case APTUS_F_ERRHANDLER: return MPI_Errhandler_toint(h);
    case APTUS_F_FILE: return MPI_File_toint(h);
    case APTUS_F_GROUP: return MPI_Group_toint(h);
    case APTUS_F_INFO: return MPI_Info_toint(h);
    case APTUS_F_MESSAGE: return MPI_Message_toint(h);
    case APTUS_F_OP: return MPI_Op_toint(h);
    case APTUS_F_REQUEST: return MPI_Request_toint(h);
    case APTUS_F_SESSION: return MPI_Session_toint(h);
    default: return MPI_Win_toint(h);
    }
}

void *aptus_f_handles_in(int kind, const MPI_Fint *f, int n, void *buf, int out_only)
{
    void **h = n <= APTUS_F_STACK ? buf : malloc(sizeof *h * (size_t)n);
    if (h && !out_only)
        for (int i = 0; i < n; i++)
            h[i] = from_int(kind, f[i]);
    return h;
}

void aptus_f_handles_out(int kind, MPI_Fint *f, int n, const void *h)
{
    void *const *v = h;
    for (int i = 0; i < n; i++)
        f[i] = to_int(kind, v[i]);
}

/* ---- strings ------------------------------------------------------------------------------- */

char *aptus_f_string_in(const char *f, size_t len, int trim_leading)
{
    size_t b = 0;
    while (len > 0 && f[len - 1] == ' ')
        len--;
    while (trim_leading && b < len && f[b] == ' ')
        b++;
    char *c = malloc(len - b + 1);
    if (c) {
        memcpy(c, f + b, len - b);
        c[len - b] = '\0';
    }
    return c;
}

/* The longest string the library writes (MPI_MAX_LIBRARY_VERSION_STRING) and its NUL. */
#define F_STRING_MIN (MPI_MAX_LIBRARY_VERSION_STRING + 1)

char *aptus_f_string_buf(size_t len)
{
    return calloc(len + 1 > F_STRING_MIN ? len + 1 : F_STRING_MIN, 1);
}

void aptus_f_string_out(const char *c, char *f, size_t len)
{
    size_t n = strlen(c);
    if (n > len)
        n = len;
    memcpy(f, c, n);
    memset(f + n, ' ', len - n);
}

/* ---- lengths of arrays the standard sizes by the communicator ---------------------------- */

int aptus_f_ntypes(MPI_Comm comm, int recv, int neighbor)
{
    int n = 0, flag = 0, topo = MPI_UNDEFINED;
    if (!neighbor) {
        if (PMPI_Comm_test_inter(comm, &flag) != MPI_SUCCESS)
            return 0;
        if (flag)
            PMPI_Comm_remote_size(comm, &n);
        else
            PMPI_Comm_size(comm, &n);
        return n;
    }
    if (PMPI_Topo_test(comm, &topo) != MPI_SUCCESS)
        return 0;
    if (topo == MPI_CART) {
        PMPI_Cartdim_get(comm, &n);
        return 2 * n;
    }
    if (topo == MPI_GRAPH) {
        int rank;
        PMPI_Comm_rank(comm, &rank);
        PMPI_Graph_neighbors_count(comm, rank, &n);
        return n;
    }
    if (topo == MPI_DIST_GRAPH) {
        int in = 0, out = 0, weighted;
        PMPI_Dist_graph_neighbors_count(comm, &in, &out, &weighted);
        return recv ? in : out;
    }
    return 0;
}

int aptus_f_cartdim(MPI_Comm comm)
{
    int topo = MPI_UNDEFINED, n = 0;
    if (PMPI_Topo_test(comm, &topo) == MPI_SUCCESS && topo == MPI_CART)
        PMPI_Cartdim_get(comm, &n);
    return n;
}

/* ---- errors ------------------------------------------------------------------------------- */

/* One error code per call and reason, made on first use (its message names both). */
static struct {
    const char *call, *why;
    int code;
} codes[64];
static int ncodes;
static pthread_mutex_t codes_lock = PTHREAD_MUTEX_INITIALIZER;

int aptus_f_error(int cls, const char *call, const char *why)
{
    int code = cls;
    pthread_mutex_lock(&codes_lock);
    int i = 0;
    while (i < ncodes && (codes[i].call != call || codes[i].why != why))
        i++;
    if (i < ncodes) {
        code = codes[i].code;
    } else if (PMPI_Add_error_code(cls, &code) == MPI_SUCCESS) {
        char msg[MPI_MAX_ERROR_STRING];
        snprintf(msg, sizeof msg, "%s: %s", call, why);
        PMPI_Add_error_string(code, msg);
        if (ncodes < (int)(sizeof codes / sizeof codes[0]))
            codes[ncodes++] = (__typeof__(codes[0])){ call, why, code };
    } else {
        code = cls;
    }
    pthread_mutex_unlock(&codes_lock);
    PMPI_Comm_call_errhandler(MPI_COMM_WORLD, code);
    return code;
}

int aptus_f_nomem(const char *call)
{
    return aptus_f_error(MPI_ERR_NO_MEM, call, "out of memory converting the Fortran arguments");
}

int aptus_f_unsupported(const char *call, const char *why)
{
    return aptus_f_error(MPI_ERR_UNSUPPORTED_OPERATION, call, why);
}

static pthread_mutex_t intern_lock = PTHREAD_MUTEX_INITIALIZER;

const char *aptus_f_intern(const char *name, size_t len)
{
    static struct {
        char name[48];
        const char *kept;
    } names[256];
    static int nnames;
    if (len >= sizeof names[0].name)
        len = sizeof names[0].name - 1;
    pthread_mutex_lock(&intern_lock);
    const char *r = "an MPI call";
    for (int i = 0; i < nnames; i++)
        if (strncmp(names[i].name, name, len) == 0 && names[i].name[len] == '\0')
            r = names[i].name;
    if (strcmp(r, "an MPI call") == 0 && nnames < 256) {
        memcpy(names[nnames].name, name, len);
        names[nnames].name[len] = '\0';
        r = names[nnames++].name;
    }
    pthread_mutex_unlock(&intern_lock);
    return r;
}
