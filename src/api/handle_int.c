/* Handles as integers (MPI_*_c2f / _f2c and the MPI 5.0 _toint / _fromint functions).
 * Predefined handles keep their standard ABI value; other objects get a slot in a growing
 * table, numbered from APTUS_PREDEF_LIMIT upward. A freed object's number is not reused. */
#include <stdint.h>
#include <stdlib.h>

#include "api/api.h"
#include "runtime/lock.h"

static void **table;
static int used, cap;

static int to_int(void *h)
{
    if ((uintptr_t)h < 0x400)
        return (int)(uintptr_t)h;
    for (int i = used - 1; i >= 0; i--)
        if (table[i] == h)
            return 0x400 + i;
    if (used == cap) {
        int ncap = cap ? 2 * cap : 64;
        void **t = realloc(table, (size_t)ncap * sizeof *t);
        if (!t)
            return 0;
        table = t;
        cap = ncap;
    }
    table[used] = h;
    return 0x400 + used++;
}

static void *from_int(int v)
{
    if (v >= 0 && v < 0x400)
        return (void *)(uintptr_t)v;
    v -= 0x400;
    return v >= 0 && v < used ? table[v] : NULL;
}

#define CONVERT(KIND, T)                                                                                               \
    MPI_Fint PMPI_##KIND##_c2f(T h)                                                                                    \
    {                                                                                                                  \
        APTUS_API_LOCKED(to_int((void *)h));                                                                           \
    }                                                                                                                  \
    APTUS_ALIAS(KIND##_c2f)                                                                                            \
    T PMPI_##KIND##_f2c(MPI_Fint v)                                                                                    \
    {                                                                                                                  \
        APTUS_API_LOCKED((T)from_int(v));                                                                              \
    }                                                                                                                  \
    APTUS_ALIAS(KIND##_f2c)                                                                                            \
    int PMPI_##KIND##_toint(T h)                                                                                       \
    {                                                                                                                  \
        APTUS_API_LOCKED(to_int((void *)h));                                                                           \
    }                                                                                                                  \
    APTUS_ALIAS(KIND##_toint)                                                                                          \
    T PMPI_##KIND##_fromint(int v)                                                                                     \
    {                                                                                                                  \
        APTUS_API_LOCKED((T)from_int(v));                                                                              \
    }                                                                                                                  \
    APTUS_ALIAS(KIND##_fromint)

CONVERT(Comm, MPI_Comm)
CONVERT(Errhandler, MPI_Errhandler)
CONVERT(File, MPI_File)
CONVERT(Group, MPI_Group)
CONVERT(Info, MPI_Info)
CONVERT(Message, MPI_Message)
CONVERT(Op, MPI_Op)
CONVERT(Request, MPI_Request)
CONVERT(Session, MPI_Session)
CONVERT(Type, MPI_Datatype)
CONVERT(Win, MPI_Win)
