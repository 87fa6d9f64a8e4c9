/* Handle <-> object conversion and the predefined objects. A handle that is not predefined is
 * read only once it is known to be a slot of its kind in the handle arena (core/arena.h). */
#include <stddef.h>

#include "core/errors.h"

struct aptus_errhandler aptus_errh_fatal = { .magic = APTUS_MAGIC_ERRH, .kind = APTUS_ERRH_FATAL, .refcount = 1 };
struct aptus_errhandler aptus_errh_abort = { .magic = APTUS_MAGIC_ERRH, .kind = APTUS_ERRH_ABORT, .refcount = 1 };
struct aptus_errhandler aptus_errh_return = { .magic = APTUS_MAGIC_ERRH, .kind = APTUS_ERRH_RETURN, .refcount = 1 };

extern struct aptus_op *aptus_op_predef[APTUS_PREDEF_LIMIT];

struct aptus_op *aptus_op_get(MPI_Op h)
{
    if (APTUS_IS_PREDEF(h))
        return aptus_op_predef[(uintptr_t)h];
    struct aptus_op *o = (struct aptus_op *)h;
    return aptus_obj_in(h, APTUS_OBJ_OP) && o->magic == APTUS_MAGIC_OP ? o : NULL;
}

struct aptus_errhandler *aptus_errh_get(MPI_Errhandler h)
{
    if (h == MPI_ERRORS_ARE_FATAL)
        return &aptus_errh_fatal;
    if (h == MPI_ERRORS_ABORT)
        return &aptus_errh_abort;
    if (h == MPI_ERRORS_RETURN)
        return &aptus_errh_return;
    struct aptus_errhandler *e = (struct aptus_errhandler *)h;
    return aptus_obj_in(h, APTUS_OBJ_ERRH) && e->magic == APTUS_MAGIC_ERRH ? e : NULL;
}

struct aptus_group *aptus_group_get(MPI_Group h)
{
    struct aptus_group *g = (struct aptus_group *)h;
    return aptus_obj_in(h, APTUS_OBJ_GROUP) && g->magic == APTUS_MAGIC_GROUP ? g : NULL;
}
