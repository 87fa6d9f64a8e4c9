#include "core/datatype.h"

#include <complex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <wchar.h>

#include "core/op.h"

struct aptus_dtype *aptus_dtype_predef[APTUS_PREDEF_LIMIT];
static struct aptus_dtype predef[APTUS_PREDEF_LIMIT - 0x200];

#define PAIR_T(VT, IT)                                                                                                 \
    struct {                                                                                                           \
        VT v;                                                                                                          \
        IT k;                                                                                                          \
    }

static int int_basic(size_t size, int is_signed)
{
    switch (size) {
    case 1: return is_signed ? APTUS_B_INT8 : APTUS_B_UINT8;
    case 2: return is_signed ? APTUS_B_INT16 : APTUS_B_UINT16;
    case 4: return is_signed ? APTUS_B_INT32 : APTUS_B_UINT32;
    default: return is_signed ? APTUS_B_INT64 : APTUS_B_UINT64;
    }
}

/* size: bytes of data; extent: bytes between consecutive elements (differs for padded pairs). */
static void def(MPI_Datatype h, const char *name, size_t size, size_t extent, int basic)
{
    uintptr_t v = (uintptr_t)h;
    struct aptus_dtype *d = &predef[v - 0x200];
    d->magic = APTUS_MAGIC_DTYPE;
    d->refcount = 1;
    d->size = size;
    d->lb = d->true_lb = 0;
    d->extent = (MPI_Aint)extent;
    d->true_extent = (MPI_Aint)size;
    d->contig = size == extent;
    d->basic = basic;
    d->predefined = 1;
    d->committed = 1;
    d->combiner = MPI_COMBINER_NAMED;
    strncpy(d->name, name, sizeof d->name - 1);
    aptus_dtype_predef[v] = d;
}

#define INT_T(H, T, S)     def(H, #H, sizeof(T), sizeof(T), int_basic(sizeof(T), S))
#define PAIR(H, VT, IT, B) def(H, #H, sizeof(VT) + sizeof(IT), sizeof(PAIR_T(VT, IT)), B)

void aptus_datatype_init(void)
{
    aptus_op_init();
    INT_T(MPI_AINT, MPI_Aint, 1);
    INT_T(MPI_COUNT, MPI_Count, 1);
    INT_T(MPI_OFFSET, MPI_Offset, 1);
    def(MPI_PACKED, "MPI_PACKED", 1, 1, APTUS_B_BYTE);
    INT_T(MPI_SHORT, short, 1);
    INT_T(MPI_INT, int, 1);
    INT_T(MPI_LONG, long, 1);
    INT_T(MPI_LONG_LONG, long long, 1);
    INT_T(MPI_UNSIGNED_SHORT, unsigned short, 0);
    INT_T(MPI_UNSIGNED, unsigned, 0);
    INT_T(MPI_UNSIGNED_LONG, unsigned long, 0);
    INT_T(MPI_UNSIGNED_LONG_LONG, unsigned long long, 0);
    def(MPI_FLOAT, "MPI_FLOAT", sizeof(float), sizeof(float), APTUS_B_FLOAT);
    def(MPI_C_FLOAT_COMPLEX, "MPI_C_FLOAT_COMPLEX", sizeof(float _Complex), sizeof(float _Complex),
        APTUS_B_C_FLOAT_COMPLEX);
    def(MPI_CXX_FLOAT_COMPLEX, "MPI_CXX_FLOAT_COMPLEX", sizeof(float _Complex), sizeof(float _Complex),
        APTUS_B_C_FLOAT_COMPLEX);
    def(MPI_DOUBLE, "MPI_DOUBLE", sizeof(double), sizeof(double), APTUS_B_DOUBLE);
    def(MPI_C_DOUBLE_COMPLEX, "MPI_C_DOUBLE_COMPLEX", sizeof(double _Complex), sizeof(double _Complex),
        APTUS_B_C_DOUBLE_COMPLEX);
    def(MPI_CXX_DOUBLE_COMPLEX, "MPI_CXX_DOUBLE_COMPLEX", sizeof(double _Complex), sizeof(double _Complex),
        APTUS_B_C_DOUBLE_COMPLEX);
    def(MPI_LONG_DOUBLE, "MPI_LONG_DOUBLE", sizeof(long double), sizeof(long double), APTUS_B_LONG_DOUBLE);
    def(MPI_C_LONG_DOUBLE_COMPLEX, "MPI_C_LONG_DOUBLE_COMPLEX", sizeof(long double _Complex),
        sizeof(long double _Complex), APTUS_B_C_LONG_DOUBLE_COMPLEX);
    def(MPI_CXX_LONG_DOUBLE_COMPLEX, "MPI_CXX_LONG_DOUBLE_COMPLEX", sizeof(long double _Complex),
        sizeof(long double _Complex), APTUS_B_C_LONG_DOUBLE_COMPLEX);
    /* Fortran types with the usual sizes (INTEGER/REAL 4 bytes, DOUBLE PRECISION 8). */
    def(MPI_LOGICAL, "MPI_LOGICAL", 4, 4, APTUS_B_INT32);
    def(MPI_INTEGER, "MPI_INTEGER", 4, 4, APTUS_B_INT32);
    def(MPI_REAL, "MPI_REAL", 4, 4, APTUS_B_FLOAT);
    def(MPI_COMPLEX, "MPI_COMPLEX", 8, 8, APTUS_B_C_FLOAT_COMPLEX);
    def(MPI_DOUBLE_PRECISION, "MPI_DOUBLE_PRECISION", 8, 8, APTUS_B_DOUBLE);
    def(MPI_DOUBLE_COMPLEX, "MPI_DOUBLE_COMPLEX", 16, 16, APTUS_B_C_DOUBLE_COMPLEX);
    def(MPI_CHARACTER, "MPI_CHARACTER", 1, 1, APTUS_B_CHAR);
    PAIR(MPI_FLOAT_INT, float, int, APTUS_B_FLOAT_INT);
    PAIR(MPI_DOUBLE_INT, double, int, APTUS_B_DOUBLE_INT);
    PAIR(MPI_LONG_INT, long, int, APTUS_B_LONG_INT);
    PAIR(MPI_2INT, int, int, APTUS_B_2INT);
    PAIR(MPI_SHORT_INT, short, int, APTUS_B_SHORT_INT);
    PAIR(MPI_LONG_DOUBLE_INT, long double, int, APTUS_B_LONG_DOUBLE_INT);
    PAIR(MPI_2REAL, float, float, APTUS_B_2FLOAT);
    PAIR(MPI_2DOUBLE_PRECISION, double, double, APTUS_B_2DOUBLE);
    PAIR(MPI_2INTEGER, int, int, APTUS_B_2INT);
    def(MPI_C_BOOL, "MPI_C_BOOL", sizeof(bool), sizeof(bool), APTUS_B_BOOL);
    def(MPI_CXX_BOOL, "MPI_CXX_BOOL", sizeof(bool), sizeof(bool), APTUS_B_BOOL);
    def(MPI_WCHAR, "MPI_WCHAR", sizeof(wchar_t), sizeof(wchar_t), APTUS_B_NONE);
    INT_T(MPI_INT8_T, int8_t, 1);
    INT_T(MPI_UINT8_T, uint8_t, 0);
    def(MPI_CHAR, "MPI_CHAR", 1, 1, APTUS_B_CHAR);
    INT_T(MPI_SIGNED_CHAR, signed char, 1);
    INT_T(MPI_UNSIGNED_CHAR, unsigned char, 0);
    def(MPI_BYTE, "MPI_BYTE", 1, 1, APTUS_B_BYTE);
    INT_T(MPI_INT16_T, int16_t, 1);
    INT_T(MPI_UINT16_T, uint16_t, 0);
    INT_T(MPI_INT32_T, int32_t, 1);
    INT_T(MPI_UINT32_T, uint32_t, 0);
    INT_T(MPI_INT64_T, int64_t, 1);
    INT_T(MPI_UINT64_T, uint64_t, 0);
    def(MPI_LOGICAL1, "MPI_LOGICAL1", 1, 1, APTUS_B_INT8);
    def(MPI_INTEGER1, "MPI_INTEGER1", 1, 1, APTUS_B_INT8);
    def(MPI_LOGICAL2, "MPI_LOGICAL2", 2, 2, APTUS_B_INT16);
    def(MPI_INTEGER2, "MPI_INTEGER2", 2, 2, APTUS_B_INT16);
    def(MPI_LOGICAL4, "MPI_LOGICAL4", 4, 4, APTUS_B_INT32);
    def(MPI_INTEGER4, "MPI_INTEGER4", 4, 4, APTUS_B_INT32);
    def(MPI_REAL4, "MPI_REAL4", 4, 4, APTUS_B_FLOAT);
    def(MPI_COMPLEX4, "MPI_COMPLEX4", 4, 4, APTUS_B_NONE);
    def(MPI_LOGICAL8, "MPI_LOGICAL8", 8, 8, APTUS_B_INT64);
    def(MPI_INTEGER8, "MPI_INTEGER8", 8, 8, APTUS_B_INT64);
    def(MPI_REAL8, "MPI_REAL8", 8, 8, APTUS_B_DOUBLE);
    def(MPI_COMPLEX8, "MPI_COMPLEX8", 8, 8, APTUS_B_C_FLOAT_COMPLEX);
    def(MPI_LOGICAL16, "MPI_LOGICAL16", 16, 16, APTUS_B_NONE);
    def(MPI_INTEGER16, "MPI_INTEGER16", 16, 16, APTUS_B_NONE);
    def(MPI_REAL16, "MPI_REAL16", 16, 16, APTUS_B_LONG_DOUBLE);
    def(MPI_COMPLEX16, "MPI_COMPLEX16", 16, 16, APTUS_B_C_DOUBLE_COMPLEX);
    def(MPI_COMPLEX32, "MPI_COMPLEX32", 32, 32, APTUS_B_C_LONG_DOUBLE_COMPLEX);
}

const char *aptus_dtype_name(const struct aptus_dtype *dt)
{
    return dt->name[0] ? dt->name : "(derived datatype)";
}
