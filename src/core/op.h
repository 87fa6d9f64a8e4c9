/* Reduction operations. */
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
/* Whether a predefined op is defined on a basic type (MPI standard, section on reductions). */
int aptus_op_valid(int op_id, int basic);
/* inout[i] = in[i] op inout[i] for n elements of basic type. */
void aptus_op_apply(int op_id, const void *in, void *inout, size_t n, int basic);
/* Applies any op object (predefined or user) to n elements of dt. */
void aptus_op_reduce(const struct aptus_op *op, const void *in, void *inout, size_t n, const struct aptus_dtype *dt,
                     MPI_Datatype dt_handle);

#endif
