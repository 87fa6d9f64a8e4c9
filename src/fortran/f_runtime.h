/* The Fortran bindings' runtime (libmpifort_abi): what the generated entry points
 * (gen/f_entries.c) and the hand-written ones (f_hand.c) share. Everything here reaches the MPI
 * library through standard C ABI calls only (include/mpi.h): libmpifort_abi depends on
 * libmpi_abi and on nothing inside it.
 *
 * A Fortran INTEGER is a C int here (MPI_Fint); INTEGER(KIND=MPI_ADDRESS_KIND / MPI_COUNT_KIND /
 * MPI_OFFSET_KIND) are 8 bytes like MPI_Aint, MPI_Count and MPI_Offset; a status is eight
 * INTEGERs, byte for byte the C MPI_Status. docs/DESIGN.md, "Fortran". */
#ifndef APTUS_FORTRAN_RUNTIME_H
#define APTUS_FORTRAN_RUNTIME_H

#include <stddef.h>

#include <mpi.h>

/* Handle arrays up to this many elements are converted on the stack. */
#define APTUS_F_STACK 16

/* Handle kinds of aptus_f_handles_in/out. */
enum {
    APTUS_F_COMM,
    APTUS_F_TYPE,
    APTUS_F_ERRHANDLER,
    APTUS_F_FILE,
    APTUS_F_GROUP,
    APTUS_F_INFO,
    APTUS_F_MESSAGE,
    APTUS_F_OP,
    APTUS_F_REQUEST,
    APTUS_F_SESSION,
    APTUS_F_WIN
};

#define APTUS_F_HIDDEN __attribute__((visibility("hidden")))

/* The sentinels of mpif.h and the module `mpi`: Fortran variables in common blocks, whose
 * addresses the entry points recognise (f_runtime.c). */
APTUS_F_HIDDEN void *aptus_f_buf(void *p);
APTUS_F_HIDDEN int aptus_f_in_place(const void *p);
APTUS_F_HIDDEN MPI_Status *aptus_f_status(MPI_Fint *s);
APTUS_F_HIDDEN int *aptus_f_errcodes(MPI_Fint *e);
APTUS_F_HIDDEN int *aptus_f_weights(MPI_Fint *w);

/* LOGICAL values (gfortran's 1 and 0 unless MPI_Abi_set_fortran_booleans said otherwise). */
APTUS_F_HIDDEN int aptus_f_logical_in(MPI_Fint l);
APTUS_F_HIDDEN MPI_Fint aptus_f_logical_out(int c);
/* n LOGICALs as C ints: into buf when n <= APTUS_F_STACK, else a malloc'd array; NULL when out
 * of memory. out_only: the values are not read. */
APTUS_F_HIDDEN int *aptus_f_logicals_in(const MPI_Fint *f, int n, int *buf, int out_only);
APTUS_F_HIDDEN void aptus_f_logicals_out(MPI_Fint *f, int n, const int *c);

/* Handle arrays, the same way (buf: an array of APTUS_F_STACK handles of the kind). */
APTUS_F_HIDDEN void *aptus_f_handles_in(int kind, const MPI_Fint *f, int n, void *buf, int out_only);
APTUS_F_HIDDEN void aptus_f_handles_out(int kind, MPI_Fint *f, int n, const void *h);

/* A Fortran string as a C string: trailing blanks removed (leading ones too where trim_leading);
 * malloc'd, NULL when out of memory. */
APTUS_F_HIDDEN char *aptus_f_string_in(const char *f, size_t len, int trim_leading);
/* A buffer for a C string result of a Fortran string of len characters (large enough for any
 * string the library returns), malloc'd, zeroed. */
APTUS_F_HIDDEN char *aptus_f_string_buf(size_t len);
/* The C string c into the Fortran string f of len characters, padded with blanks. */
APTUS_F_HIDDEN void aptus_f_string_out(const char *c, char *f, size_t len);

/* The number of datatypes in the sendtypes (recv 0) or recvtypes (recv 1) array of an
 * alltoallw of this communicator (neighbor: of a neighbourhood collective). */
APTUS_F_HIDDEN int aptus_f_ntypes(MPI_Comm comm, int recv, int neighbor);
/* The number of dimensions of a Cartesian communicator (0 when it is none). */
APTUS_F_HIDDEN int aptus_f_cartdim(MPI_Comm comm);

/* An error of class cls in `call` (message "call: why"), through MPI_COMM_WORLD's handler; its
 * code returned (one code per call and reason). */
APTUS_F_HIDDEN int aptus_f_error(int cls, const char *call, const char *why);
/* Out of memory converting the arguments of `call`: the error through MPI_COMM_WORLD's
 * handler, its code returned. */
APTUS_F_HIDDEN int aptus_f_nomem(const char *call);
/* A procedure the Fortran bindings do not offer yet: MPI_ERR_UNSUPPORTED_OPERATION with a
 * message naming it, through MPI_COMM_WORLD's handler; its code returned. */
APTUS_F_HIDDEN int aptus_f_unsupported(const char *call, const char *why);
/* A name of up to 47 characters (not terminated) as a string that lives as long as the process,
 * one per name: what aptus_f_error wants as `call`. */
APTUS_F_HIDDEN const char *aptus_f_intern(const char *name, size_t len);
/* Frees a datatype the array-section conversion made (f_section.c), unless it is `datatype`. */
APTUS_F_HIDDEN void aptus_f08_section_free(MPI_Fint *newtype, const MPI_Fint *datatype);

#endif
