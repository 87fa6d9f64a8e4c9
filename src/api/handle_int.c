/* Handles as integers (MPI_*_c2f / _f2c and the MPI 5.0 _toint / _fromint functions, which the
 * Fortran bindings call on every handle they pass). Predefined handles keep their standard ABI
 * value (below APTUS_INT_FIRST); any other object is the number of its slot in the handle arena
 * (core/arena.h) plus APTUS_INT_FIRST: O(1) both ways, no lock, and a freed object's number is
 * its slot's, given again to the next object that takes the slot. A value that names no slot
 * converts to NULL (and NULL to -1), which every check refuses with its kind's error class. */
#include <limits.h>
#include <stdint.h>

#include "api/api.h"
#include "core/arena.h"

#define APTUS_INT_FIRST 0x400

static int to_int(const void *h, int kind)
{
    if ((uintptr_t)h < APTUS_INT_FIRST)
        return (int)(uintptr_t)h;
    if (kind >= 0 && aptus_obj_in_(h, kind, aptus_obj_inv_(kind), aptus_obj_shift_(kind))) {
        uintptr_t i = aptus_obj_index(h, kind);
        if (i <= (uintptr_t)(INT_MAX - APTUS_INT_FIRST))
            return APTUS_INT_FIRST + (int)i;
    }
    return -1;
}

static void *from_int(int v, int kind)
{
    if (v >= 0 && v < APTUS_INT_FIRST)
        return (void *)(uintptr_t)v;
    return v >= APTUS_INT_FIRST && kind >= 0 ? aptus_obj_at(kind, (uintptr_t)(v - APTUS_INT_FIRST)) : NULL;
}

/* KIND: the arena's kind of the handle. */
#define CONVERT(NAME, T, KIND)                                                                                         \
    MPI_Fint PMPI_##NAME##_c2f(T h)                                                                                    \
    {                                                                                                                  \
        return to_int((const void *)h, KIND);                                                                          \
    }                                                                                                                  \
    APTUS_ALIAS(NAME##_c2f)                                                                                            \
    T PMPI_##NAME##_f2c(MPI_Fint v)                                                                                    \
    {                                                                                                                  \
        return (T)from_int(v, KIND);                                                                                   \
    }                                                                                                                  \
    APTUS_ALIAS(NAME##_f2c)                                                                                            \
    int PMPI_##NAME##_toint(T h)                                                                                       \
    {                                                                                                                  \
        return to_int((const void *)h, KIND);                                                                          \
    }                                                                                                                  \
    APTUS_ALIAS(NAME##_toint)                                                                                          \
    T PMPI_##NAME##_fromint(int v)                                                                                     \
    {                                                                                                                  \
        return (T)from_int(v, KIND);                                                                                   \
    }                                                                                                                  \
    APTUS_ALIAS(NAME##_fromint)

CONVERT(Comm, MPI_Comm, APTUS_OBJ_COMM)
CONVERT(Errhandler, MPI_Errhandler, APTUS_OBJ_ERRH)
CONVERT(File, MPI_File, APTUS_OBJ_FILE)
CONVERT(Group, MPI_Group, APTUS_OBJ_GROUP)
CONVERT(Info, MPI_Info, APTUS_OBJ_INFO)
CONVERT(Message, MPI_Message, APTUS_OBJ_MESSAGE)
CONVERT(Op, MPI_Op, APTUS_OBJ_OP)
CONVERT(Request, MPI_Request, APTUS_OBJ_REQUEST)
CONVERT(Session, MPI_Session, APTUS_OBJ_SESSION)
CONVERT(Type, MPI_Datatype, APTUS_OBJ_DTYPE)
CONVERT(Win, MPI_Win, APTUS_OBJ_WIN)
