/* Reduction operations: the predefined ops, which (op, datatype) pairs the MPI standard allows
 * (section 6.9.2 of MPI 4.x), and the element-wise kernels.
 *
 * Validity is decided by the name of the predefined datatype (its standard group: C integer,
 * Fortran integer, floating point, logical, complex, byte, multi-language, pair), not by its
 * representation: MPI_INTEGER and MPI_LOGICAL have the same bits but not the same ops. The
 * kernel is decided by the representation (MPI_INTEGER16 is a 128-bit integer, MPI_REAL16 an
 * IEEE binary128 number, MPI_LONG_DOUBLE the C long double). */
#ifndef APTUS_CORE_OP_H
#define APTUS_CORE_OP_H

#include <stddef.h>

#include "core/objects.h"

enum aptus_op_id {
    APTUS_OP_NONE = 0,
    APTUS_OP_SUM,
    APTUS_OP_MIN,
    APTUS_OP_MAX,
    APTUS_OP_PROD,
    APTUS_OP_BAND,
    APTUS_OP_BOR,
    APTUS_OP_BXOR,
    APTUS_OP_LAND,
    APTUS_OP_LOR,
    APTUS_OP_LXOR,
    APTUS_OP_MINLOC,
    APTUS_OP_MAXLOC,
    APTUS_OP_REPLACE,
    APTUS_OP_NO_OP,
    APTUS_OP_COUNT
};

void aptus_op_init(void);
/* Name of a predefined op ("MPI_SUM"), for messages. */
const char *aptus_op_name(int op_id);

/* Whether the predefined op may be applied to the predefined datatype `type` by the standard's
 * table. `for_rma`: MPI_REPLACE and MPI_NO_OP are allowed (accumulate functions) on any
 * predefined type; otherwise they are not valid at all (collective reductions). */
int aptus_op_allowed(int op_id, MPI_Datatype type, int for_rma);

/* The element kernel of a predefined datatype (0 when it has none, e.g. MPI_DATATYPE_NULL or a derived type). */
int aptus_op_kernel(MPI_Datatype type);
/* inout[i] = in[i] op inout[i] for n elements of a kernel (aptus_op_kernel). MPI_REPLACE copies
 * in into inout; MPI_NO_OP leaves inout. */
void aptus_op_apply_kernel(int op_id, const void *in, void *inout, size_t n, int kernel);

/* Applies any op object (predefined or user) to n elements of dt, inout = in op inout. For a
 * predefined op, dt_handle must be a predefined datatype (the elements' basic type) or dt
 * must have a basic code; for a user op the user function is called with dt_handle. */
void aptus_op_reduce(const struct aptus_op *op, const void *in, void *inout, size_t n, const struct aptus_dtype *dt,
                     MPI_Datatype dt_handle);

#endif
