/* Reduction operations: predefined op objects, the standard's table of allowed (op, datatype)
 * pairs and the element-wise kernels (see op.h). */
#include "core/op.h"

#include <complex.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

struct aptus_op *aptus_op_predef[APTUS_PREDEF_LIMIT];
static struct aptus_op predef_ops[APTUS_OP_COUNT];

static const char *const op_names[APTUS_OP_COUNT] = { "MPI_OP_NULL", "MPI_SUM",     "MPI_MIN",  "MPI_MAX",
                                                      "MPI_PROD",    "MPI_BAND",    "MPI_BOR",  "MPI_BXOR",
                                                      "MPI_LAND",    "MPI_LOR",     "MPI_LXOR", "MPI_MINLOC",
                                                      "MPI_MAXLOC",  "MPI_REPLACE", "MPI_NO_OP" };

const char *aptus_op_name(int op_id)
{
    return op_id > 0 && op_id < APTUS_OP_COUNT ? op_names[op_id] : "(user-defined operation)";
}

/* ---- kernels: one per representation ---------------------------------------------------- */

enum kernel {
    K_NONE = 0,
    K_I8,
    K_U8,
    K_I16,
    K_U16,
    K_I32,
    K_U32,
    K_I64,
    K_U64,
    K_I128,
    K_F16,
    K_F32,
    K_F64,
    K_LD,
    K_F128,
    K_BOOL,
    K_CF16,
    K_CF32,
    K_CF64,
    K_CLD,
    K_CF128,
    K_FLOAT_INT,
    K_DOUBLE_INT,
    K_LONG_INT,
    K_2INT,
    K_SHORT_INT,
    K_LONG_DOUBLE_INT,
    K_2FLOAT,
    K_2DOUBLE,
    K_COUNT
};

/* The standard's datatype groups (section 6.9.2). */
enum group {
    G_NONE = 0,
    G_CINT = 1 << 0,    /* C integer */
    G_FINT = 1 << 1,    /* Fortran integer */
    G_FLOAT = 1 << 2,   /* floating point */
    G_LOGICAL = 1 << 3, /* logical */
    G_COMPLEX = 1 << 4, /* complex */
    G_BYTE = 1 << 5,    /* byte */
    G_MULTI = 1 << 6,   /* multi-language types: MPI_AINT, MPI_OFFSET, MPI_COUNT */
    G_PAIR = 1 << 7     /* the MINLOC / MAXLOC pair types */
};

static struct {
    uint8_t group, kernel;
} tinfo[APTUS_PREDEF_LIMIT];

static int int_kernel(size_t size, int is_signed)
{
    switch (size) {
    case 1: return is_signed ? K_I8 : K_U8;
    case 2: return is_signed ? K_I16 : K_U16;
    case 4: return is_signed ? K_I32 : K_U32;
    case 8: return is_signed ? K_I64 : K_U64;
    default: return is_signed ? K_I128 : K_NONE;
    }
}

static void tdef(MPI_Datatype h, int group, int kernel)
{
    uintptr_t v = (uintptr_t)h;
    if (v < APTUS_PREDEF_LIMIT) {
        tinfo[v].group = (uint8_t)group;
        tinfo[v].kernel = (uint8_t)kernel;
    }
}

#define CINT(H, T, S) tdef(H, G_CINT, int_kernel(sizeof(T), S))

static void def(MPI_Op h, int id)
{
    predef_ops[id] = (struct aptus_op){ APTUS_MAGIC_OP, 1, 1, id, NULL, NULL };
    aptus_op_predef[(uintptr_t)h] = &predef_ops[id];
}

void aptus_op_init(void)
{
    def(MPI_SUM, APTUS_OP_SUM);
    def(MPI_MIN, APTUS_OP_MIN);
    def(MPI_MAX, APTUS_OP_MAX);
    def(MPI_PROD, APTUS_OP_PROD);
    def(MPI_BAND, APTUS_OP_BAND);
    def(MPI_BOR, APTUS_OP_BOR);
    def(MPI_BXOR, APTUS_OP_BXOR);
    def(MPI_LAND, APTUS_OP_LAND);
    def(MPI_LOR, APTUS_OP_LOR);
    def(MPI_LXOR, APTUS_OP_LXOR);
    def(MPI_MINLOC, APTUS_OP_MINLOC);
    def(MPI_MAXLOC, APTUS_OP_MAXLOC);
    def(MPI_REPLACE, APTUS_OP_REPLACE);
    def(MPI_NO_OP, APTUS_OP_NO_OP);

    /* C integer */
    CINT(MPI_SHORT, short, 1);
    CINT(MPI_INT, int, 1);
    CINT(MPI_LONG, long, 1);
    CINT(MPI_LONG_LONG, long long, 1);
    CINT(MPI_UNSIGNED_SHORT, unsigned short, 0);
    CINT(MPI_UNSIGNED, unsigned, 0);
    CINT(MPI_UNSIGNED_LONG, unsigned long, 0);
    CINT(MPI_UNSIGNED_LONG_LONG, unsigned long long, 0);
    CINT(MPI_SIGNED_CHAR, signed char, 1);
    CINT(MPI_UNSIGNED_CHAR, unsigned char, 0);
    CINT(MPI_INT8_T, int8_t, 1);
    CINT(MPI_UINT8_T, uint8_t, 0);
    CINT(MPI_INT16_T, int16_t, 1);
    CINT(MPI_UINT16_T, uint16_t, 0);
    CINT(MPI_INT32_T, int32_t, 1);
    CINT(MPI_UINT32_T, uint32_t, 0);
    CINT(MPI_INT64_T, int64_t, 1);
    CINT(MPI_UINT64_T, uint64_t, 0);
    /* MPI_CHAR: not a C integer in the standard's table, but MPICH and Open MPI reduce it as one
     * (MPICH's rma tests and the OSU benchmarks' defaults do); a signed 8-bit integer on every
     * platform, as both do, whatever the signedness of C's char (docs/DESIGN.md, "Where the
     * standard leaves room"). */
    tdef(MPI_CHAR, G_CINT, K_I8);
    /* Fortran integer */
    tdef(MPI_INTEGER, G_FINT, K_I32);
    tdef(MPI_INTEGER1, G_FINT, K_I8);
    tdef(MPI_INTEGER2, G_FINT, K_I16);
    tdef(MPI_INTEGER4, G_FINT, K_I32);
    tdef(MPI_INTEGER8, G_FINT, K_I64);
    tdef(MPI_INTEGER16, G_FINT, K_I128);
    /* floating point (MPI_REAL16 is Fortran's real(16): IEEE binary128, not the x87 long double) */
    tdef(MPI_FLOAT, G_FLOAT, K_F32);
    tdef(MPI_DOUBLE, G_FLOAT, K_F64);
    tdef(MPI_LONG_DOUBLE, G_FLOAT, K_LD);
    tdef(MPI_REAL, G_FLOAT, K_F32);
    tdef(MPI_DOUBLE_PRECISION, G_FLOAT, K_F64);
    tdef(MPI_REAL2, G_FLOAT, K_F16);
    tdef(MPI_REAL4, G_FLOAT, K_F32);
    tdef(MPI_REAL8, G_FLOAT, K_F64);
    tdef(MPI_REAL16, G_FLOAT, K_F128);
    /* logical (Fortran LOGICALs: zero is false, anything else true; results are 0 or 1) */
    tdef(MPI_LOGICAL, G_LOGICAL, K_I32);
    tdef(MPI_C_BOOL, G_LOGICAL, K_BOOL);
    tdef(MPI_CXX_BOOL, G_LOGICAL, K_BOOL);
    tdef(MPI_LOGICAL1, G_LOGICAL, K_I8);
    tdef(MPI_LOGICAL2, G_LOGICAL, K_I16);
    tdef(MPI_LOGICAL4, G_LOGICAL, K_I32);
    tdef(MPI_LOGICAL8, G_LOGICAL, K_I64);
    tdef(MPI_LOGICAL16, G_LOGICAL, K_I128);
    /* complex */
    tdef(MPI_C_FLOAT_COMPLEX, G_COMPLEX, K_CF32);
    tdef(MPI_C_DOUBLE_COMPLEX, G_COMPLEX, K_CF64);
    tdef(MPI_C_LONG_DOUBLE_COMPLEX, G_COMPLEX, K_CLD);
    tdef(MPI_CXX_FLOAT_COMPLEX, G_COMPLEX, K_CF32);
    tdef(MPI_CXX_DOUBLE_COMPLEX, G_COMPLEX, K_CF64);
    tdef(MPI_CXX_LONG_DOUBLE_COMPLEX, G_COMPLEX, K_CLD);
    tdef(MPI_COMPLEX, G_COMPLEX, K_CF32);
    tdef(MPI_DOUBLE_COMPLEX, G_COMPLEX, K_CF64);
    tdef(MPI_COMPLEX4, G_COMPLEX, K_CF16);
    tdef(MPI_COMPLEX8, G_COMPLEX, K_CF32);
    tdef(MPI_COMPLEX16, G_COMPLEX, K_CF64);
    tdef(MPI_COMPLEX32, G_COMPLEX, K_CF128);
    /* byte */
    tdef(MPI_BYTE, G_BYTE, K_U8);
    /* multi-language types */
    tdef(MPI_AINT, G_MULTI, int_kernel(sizeof(MPI_Aint), 1));
    tdef(MPI_OFFSET, G_MULTI, int_kernel(sizeof(MPI_Offset), 1));
    tdef(MPI_COUNT, G_MULTI, int_kernel(sizeof(MPI_Count), 1));
    /* MINLOC / MAXLOC pairs */
    tdef(MPI_FLOAT_INT, G_PAIR, K_FLOAT_INT);
    tdef(MPI_DOUBLE_INT, G_PAIR, K_DOUBLE_INT);
    tdef(MPI_LONG_INT, G_PAIR, K_LONG_INT);
    tdef(MPI_2INT, G_PAIR, K_2INT);
    tdef(MPI_SHORT_INT, G_PAIR, K_SHORT_INT);
    tdef(MPI_LONG_DOUBLE_INT, G_PAIR, K_LONG_DOUBLE_INT);
    tdef(MPI_2REAL, G_PAIR, K_2FLOAT);
    tdef(MPI_2DOUBLE_PRECISION, G_PAIR, K_2DOUBLE);
    tdef(MPI_2INTEGER, G_PAIR, K_2INT);
    /* MPI_WCHAR, MPI_CHARACTER, MPI_PACKED: text and packed data, no reduction group (only
     * MPI_REPLACE / MPI_NO_OP in accumulate functions). */
    tdef(MPI_CHARACTER, G_NONE, K_U8);
    tdef(MPI_PACKED, G_NONE, K_U8);
    tdef(MPI_WCHAR, G_NONE, int_kernel(sizeof(wchar_t), 1));
}

static int group_of(MPI_Datatype type)
{
    uintptr_t v = (uintptr_t)type;
    return v < APTUS_PREDEF_LIMIT ? tinfo[v].group : G_NONE;
}

int aptus_op_kernel(MPI_Datatype type)
{
    uintptr_t v = (uintptr_t)type;
    return v < APTUS_PREDEF_LIMIT ? tinfo[v].kernel : K_NONE;
}

int aptus_op_allowed(int op, MPI_Datatype type, int for_rma)
{
    int g = group_of(type);
    switch (op) {
    case APTUS_OP_MAX:
    case APTUS_OP_MIN: return (g & (G_CINT | G_FINT | G_FLOAT | G_MULTI)) != 0;
    case APTUS_OP_SUM:
    case APTUS_OP_PROD: return (g & (G_CINT | G_FINT | G_FLOAT | G_COMPLEX | G_MULTI)) != 0;
    case APTUS_OP_LAND:
    case APTUS_OP_LOR:
    case APTUS_OP_LXOR: /* + the multi-language integers: an extension MPICH has too */
        return (g & (G_CINT | G_LOGICAL | G_MULTI)) != 0;
    case APTUS_OP_BAND:
    case APTUS_OP_BOR:
    case APTUS_OP_BXOR: return (g & (G_CINT | G_FINT | G_BYTE | G_MULTI)) != 0;
    case APTUS_OP_MINLOC:
    case APTUS_OP_MAXLOC: return g == G_PAIR;
    case APTUS_OP_REPLACE:
    case APTUS_OP_NO_OP: return for_rma && aptus_dtype_get(type) != NULL;
    default: return 0;
    }
}

/* Element-wise kernels: inout[i] = in[i] op inout[i] (b = a op b) for the ops a type group
 * supports; any other op leaves b alone. SUM and PROD compute in a type W: for integers a wide
 * unsigned type (wrap-around, never undefined behaviour on overflow), else the type itself. */
#define K_CASE(OP, EXPR)                                                                                               \
    case OP:                                                                                                           \
        for (i = 0; i < n; i++)                                                                                        \
            b[i] = EXPR;                                                                                               \
        break;
#define SUM_PROD(T, W) K_CASE(APTUS_OP_SUM, (T)((W)a[i] + (W)b[i])) K_CASE(APTUS_OP_PROD, (T)((W)a[i] * (W)b[i]))
#define MIN_MAX        K_CASE(APTUS_OP_MIN, a[i] < b[i] ? a[i] : b[i]) K_CASE(APTUS_OP_MAX, a[i] > b[i] ? a[i] : b[i])
#define LOGICAL(T)                                                                                                     \
    K_CASE(APTUS_OP_LAND, (T)((a[i] != 0) && (b[i] != 0)))                                                             \
    K_CASE(APTUS_OP_LOR, (T)((a[i] != 0) || (b[i] != 0)))                                                              \
    K_CASE(APTUS_OP_LXOR, (T)((a[i] != 0) != (b[i] != 0)))
#define BITWISE(T)                                                                                                     \
    K_CASE(APTUS_OP_BAND, (T)(a[i] & b[i]))                                                                            \
    K_CASE(APTUS_OP_BOR, (T)(a[i] | b[i])) K_CASE(APTUS_OP_BXOR, (T)(a[i] ^ b[i]))
#define KERNEL_A(ATTR, NAME, T, CASES)                                                                                 \
    static ATTR void NAME(int op, const void *vin, void *vio, size_t n)                                                \
    {                                                                                                                  \
        const T *restrict a = vin;                                                                                     \
        T *restrict b = vio;                                                                                           \
        size_t i;                                                                                                      \
        switch (op) {                                                                                                  \
            CASES                                                                                                      \
        default: break;                                                                                                \
        }                                                                                                              \
    }
#define KERNEL(NAME, T, CASES)  KERNEL_A(, NAME, T, CASES)
#define INT_CASES(T, W)         SUM_PROD(T, W) MIN_MAX LOGICAL(T) BITWISE(T)
#define INT_KERNEL(NAME, T, W)  KERNEL(NAME, T, INT_CASES(T, W))
#define FLOAT_KERNEL(NAME, T)   KERNEL(NAME, T, SUM_PROD(T, T) MIN_MAX)
#define COMPLEX_KERNEL(NAME, T) KERNEL(NAME, T, SUM_PROD(T, T))

/* The kernels of the common 4- and 8-byte types are vectorised (the build asks the compiler to:
 * CMakeLists.txt) and, on x86-64, built also for AVX2 and AVX-512 (glibc), one of which the
 * loader picks for the CPU: an accumulate of 64 KiB of doubles was 3.1 us with the scalar loop,
 * 1.6 with SSE2 and 1.35 with AVX (docs/BENCHMARKS.md, "One-sided communication"). */
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define APTUS_NO_IFUNC /* (ThreadSanitizer's runtime is not up yet when the loader runs a resolver) */
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define APTUS_NO_IFUNC
#endif
#if defined(__x86_64__) && defined(__GLIBC__) && defined(__has_attribute) && !defined(APTUS_NO_IFUNC)
#if __has_attribute(target_clones)
#define KERNEL_SIMD __attribute__((target_clones("avx512f", "avx2", "default")))
#endif
#endif
#ifndef KERNEL_SIMD
#define KERNEL_SIMD
#endif

INT_KERNEL(k_i8, int8_t, unsigned)
INT_KERNEL(k_u8, uint8_t, unsigned)
INT_KERNEL(k_i16, int16_t, unsigned)
INT_KERNEL(k_u16, uint16_t, unsigned)
KERNEL_A(KERNEL_SIMD, k_i32, int32_t, INT_CASES(int32_t, uint32_t))
KERNEL_A(KERNEL_SIMD, k_u32, uint32_t, INT_CASES(uint32_t, uint32_t))
KERNEL_A(KERNEL_SIMD, k_i64, int64_t, INT_CASES(int64_t, uint64_t))
KERNEL_A(KERNEL_SIMD, k_u64, uint64_t, INT_CASES(uint64_t, uint64_t))
INT_KERNEL(k_i128, __int128, unsigned __int128)
FLOAT_KERNEL(k_f16, _Float16)
KERNEL_A(KERNEL_SIMD, k_f32, float, SUM_PROD(float, float) MIN_MAX)
KERNEL_A(KERNEL_SIMD, k_f64, double, SUM_PROD(double, double) MIN_MAX)
FLOAT_KERNEL(k_ld, long double)
FLOAT_KERNEL(k_f128, _Float128)
COMPLEX_KERNEL(k_cf16, _Complex _Float16)
COMPLEX_KERNEL(k_cf32, float _Complex)
COMPLEX_KERNEL(k_cf64, double _Complex)
COMPLEX_KERNEL(k_cld, long double _Complex)
COMPLEX_KERNEL(k_cf128, _Complex _Float128)
KERNEL(k_bool, bool, LOGICAL(bool))

/* MINLOC / MAXLOC on (value, index) pairs laid out as the C struct { VT v; IT k; }: the better
 * value wins; on a tie the smaller index. */
#define PAIR_KERNEL(NAME, VT, IT)                                                                                      \
    static void NAME(int op, const void *vin, void *vio, size_t n)                                                     \
    {                                                                                                                  \
        struct pr {                                                                                                    \
            VT v;                                                                                                      \
            IT k;                                                                                                      \
        };                                                                                                             \
        const struct pr *restrict a = vin;                                                                             \
        struct pr *restrict b = vio;                                                                                   \
        if (op != APTUS_OP_MINLOC && op != APTUS_OP_MAXLOC)                                                            \
            return;                                                                                                    \
        int max = op == APTUS_OP_MAXLOC;                                                                               \
        for (size_t i = 0; i < n; i++) {                                                                               \
            int better = max ? a[i].v > b[i].v : a[i].v < b[i].v;                                                      \
            if (better)                                                                                                \
                b[i] = a[i];                                                                                           \
            else if (a[i].v == b[i].v && a[i].k < b[i].k)                                                              \
                b[i].k = a[i].k;                                                                                       \
        }                                                                                                              \
    }

PAIR_KERNEL(k_float_int, float, int)
PAIR_KERNEL(k_double_int, double, int)
PAIR_KERNEL(k_long_int, long, int)
PAIR_KERNEL(k_2int, int, int)
PAIR_KERNEL(k_short_int, short, int)
PAIR_KERNEL(k_long_double_int, long double, int)
PAIR_KERNEL(k_2float, float, float)
PAIR_KERNEL(k_2double, double, double)

typedef void (*kernel_fn)(int op, const void *in, void *inout, size_t n);

static const kernel_fn kernels[K_COUNT] = {
    [K_I8] = k_i8,
    [K_U8] = k_u8,
    [K_I16] = k_i16,
    [K_U16] = k_u16,
    [K_I32] = k_i32,
    [K_U32] = k_u32,
    [K_I64] = k_i64,
    [K_U64] = k_u64,
    [K_I128] = k_i128,
    [K_F16] = k_f16,
    [K_F32] = k_f32,
    [K_F64] = k_f64,
    [K_LD] = k_ld,
    [K_F128] = k_f128,
    [K_BOOL] = k_bool,
    [K_CF16] = k_cf16,
    [K_CF32] = k_cf32,
    [K_CF64] = k_cf64,
    [K_CLD] = k_cld,
    [K_CF128] = k_cf128,
    [K_FLOAT_INT] = k_float_int,
    [K_DOUBLE_INT] = k_double_int,
    [K_LONG_INT] = k_long_int,
    [K_2INT] = k_2int,
    [K_SHORT_INT] = k_short_int,
    [K_LONG_DOUBLE_INT] = k_long_double_int,
    [K_2FLOAT] = k_2float,
    [K_2DOUBLE] = k_2double,
};

/* Bytes of one element of a kernel (its C type's size), for MPI_REPLACE. */
static size_t kernel_size(int k)
{
    switch (k) {
    case K_I8:
    case K_U8:
    case K_BOOL: return 1;
    case K_I16:
    case K_U16:
    case K_F16: return 2;
    case K_I32:
    case K_U32:
    case K_F32:
    case K_CF16: return 4;
    case K_I64:
    case K_U64:
    case K_F64:
    case K_CF32:
    case K_FLOAT_INT:
    case K_2INT:
    case K_2FLOAT: return 8;
    case K_I128:
    case K_F128:
    case K_CF64:
    case K_2DOUBLE: return 16;
    case K_LD: return sizeof(long double);
    case K_CLD: return sizeof(long double _Complex);
    case K_CF128: return sizeof(_Complex _Float128);
    case K_DOUBLE_INT:
        return sizeof(struct {
            double v;
            int k;
        });
    case K_LONG_INT:
        return sizeof(struct {
            long v;
            int k;
        });
    case K_SHORT_INT:
        return sizeof(struct {
            short v;
            int k;
        });
    case K_LONG_DOUBLE_INT:
        return sizeof(struct {
            long double v;
            int k;
        });
    default: return 0;
    }
}

void aptus_op_apply_kernel(int op, const void *in, void *inout, size_t n, int kernel)
{
    if (op == APTUS_OP_NO_OP || kernel <= K_NONE || kernel >= K_COUNT)
        return;
    if (op == APTUS_OP_REPLACE) {
        memmove(inout, in, n * kernel_size(kernel));
        return;
    }
    kernels[kernel](op, in, inout, n);
}

/* ---- kernels by basic code (datatypes that are not predefined) ------------------------------- */

static int basic_kernel(int b)
{
    switch (b) {
    case APTUS_B_INT8: return K_I8;
    case APTUS_B_UINT8: return K_U8;
    case APTUS_B_INT16: return K_I16;
    case APTUS_B_UINT16: return K_U16;
    case APTUS_B_INT32: return K_I32;
    case APTUS_B_UINT32: return K_U32;
    case APTUS_B_INT64: return K_I64;
    case APTUS_B_UINT64: return K_U64;
    case APTUS_B_FLOAT: return K_F32;
    case APTUS_B_DOUBLE: return K_F64;
    case APTUS_B_LONG_DOUBLE: return K_LD;
    case APTUS_B_BOOL: return K_BOOL;
    case APTUS_B_BYTE: return K_U8;
    case APTUS_B_CHAR: return K_I8; /* MPI_CHAR reduces as a signed 8-bit integer (see above) */
    case APTUS_B_C_FLOAT_COMPLEX: return K_CF32;
    case APTUS_B_C_DOUBLE_COMPLEX: return K_CF64;
    case APTUS_B_C_LONG_DOUBLE_COMPLEX: return K_CLD;
    case APTUS_B_FLOAT_INT: return K_FLOAT_INT;
    case APTUS_B_DOUBLE_INT: return K_DOUBLE_INT;
    case APTUS_B_LONG_INT: return K_LONG_INT;
    case APTUS_B_2INT: return K_2INT;
    case APTUS_B_SHORT_INT: return K_SHORT_INT;
    case APTUS_B_LONG_DOUBLE_INT: return K_LONG_DOUBLE_INT;
    case APTUS_B_2FLOAT: return K_2FLOAT;
    case APTUS_B_2DOUBLE: return K_2DOUBLE;
    default: return K_NONE;
    }
}

/* ---- any op object ------------------------------------------------------------------------ */

void aptus_op_reduce(const struct aptus_op *op, const void *in, void *inout, size_t n, const struct aptus_dtype *dt,
                     MPI_Datatype dt_handle)
{
    if (n == 0)
        return;
    if (op->predefined) {
        int k = aptus_op_kernel(dt_handle);
        if (k == K_NONE && dt)
            k = basic_kernel(dt->basic);
        if (op->predefined == APTUS_OP_REPLACE && k == K_NONE && dt) {
            memmove(inout, in, n * dt->size);
            return;
        }
        aptus_op_apply_kernel(op->predefined, in, inout, n, k);
        return;
    }
    MPI_Datatype h = dt_handle;
    MPI_Aint ext = dt ? dt->extent : 0;
    if (op->user_fn_c) {
        MPI_Count len = (MPI_Count)n;
        op->user_fn_c((void *)in, inout, &len, &h);
        return;
    }
    while (n > 0) {
        int len = n > (size_t)INT_MAX ? INT_MAX : (int)n;
        op->user_fn((void *)in, inout, &len, &h);
        in = (const char *)in + (size_t)len * (size_t)ext;
        inout = (char *)inout + (size_t)len * (size_t)ext;
        n -= (size_t)len;
    }
}
