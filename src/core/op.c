#include "core/op.h"

#include <complex.h>
#include <stdint.h>
#include <string.h>

struct aptus_op *aptus_op_predef[APTUS_PREDEF_LIMIT];
static struct aptus_op predef_ops[APTUS_OP_COUNT];

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
}

static int is_int(int b)
{
    return b >= APTUS_B_INT8 && b <= APTUS_B_UINT64;
}
static int is_float(int b)
{
    return b == APTUS_B_FLOAT || b == APTUS_B_DOUBLE || b == APTUS_B_LONG_DOUBLE;
}
static int is_complex(int b)
{
    return b >= APTUS_B_C_FLOAT_COMPLEX && b <= APTUS_B_C_LONG_DOUBLE_COMPLEX;
}
static int is_pair(int b)
{
    return b >= APTUS_B_FLOAT_INT && b <= APTUS_B_2DOUBLE;
}

int aptus_op_valid(int op, int b)
{
    switch (op) {
    case APTUS_OP_SUM:
    case APTUS_OP_PROD: return is_int(b) || is_float(b) || is_complex(b);
    case APTUS_OP_MIN:
    case APTUS_OP_MAX: return is_int(b) || is_float(b);
    case APTUS_OP_LAND:
    case APTUS_OP_LOR:
    case APTUS_OP_LXOR: return is_int(b) || b == APTUS_B_BOOL;
    case APTUS_OP_BAND:
    case APTUS_OP_BOR:
    case APTUS_OP_BXOR: return is_int(b) || b == APTUS_B_BYTE;
    case APTUS_OP_MINLOC:
    case APTUS_OP_MAXLOC: return is_pair(b);
    case APTUS_OP_REPLACE:
    case APTUS_OP_NO_OP: return b != APTUS_B_NONE;
    default: return 0;
    }
}

#define LOOP(T, EXPR)                                                                                                  \
    do {                                                                                                               \
        const T *a = in;                                                                                               \
        T *b = inout;                                                                                                  \
        for (size_t i = 0; i < n; i++)                                                                                 \
            b[i] = (EXPR);                                                                                             \
    } while (0)

#define ARITH(T)                                                                                                       \
    switch (op) {                                                                                                      \
    case APTUS_OP_SUM: LOOP(T, a[i] + b[i]); return;                                                                   \
    case APTUS_OP_PROD: LOOP(T, a[i] * b[i]); return;                                                                  \
    case APTUS_OP_MIN: LOOP(T, a[i] < b[i] ? a[i] : b[i]); return;                                                     \
    case APTUS_OP_MAX: LOOP(T, a[i] > b[i] ? a[i] : b[i]); return;                                                     \
    default: break;                                                                                                    \
    }                                                                                                                  \
    LOGIC(T)

#define LOGIC(T)                                                                                                       \
    switch (op) {                                                                                                      \
    case APTUS_OP_LAND: LOOP(T, (T)((a[i] != 0) && (b[i] != 0))); return;                                              \
    case APTUS_OP_LOR: LOOP(T, (T)((a[i] != 0) || (b[i] != 0))); return;                                               \
    case APTUS_OP_LXOR: LOOP(T, (T)((a[i] != 0) != (b[i] != 0))); return;                                              \
    default: break;                                                                                                    \
    }

#define BITS(T)                                                                                                        \
    switch (op) {                                                                                                      \
    case APTUS_OP_BAND: LOOP(T, a[i] & b[i]); return;                                                                  \
    case APTUS_OP_BOR: LOOP(T, a[i] | b[i]); return;                                                                   \
    case APTUS_OP_BXOR: LOOP(T, a[i] ^ b[i]); return;                                                                  \
    default: break;                                                                                                    \
    }

#define INTEGER(T)                                                                                                     \
    ARITH(T)                                                                                                           \
    BITS(T)                                                                                                            \
    return

#define FLOATING(T)                                                                                                    \
    switch (op) {                                                                                                      \
    case APTUS_OP_SUM: LOOP(T, a[i] + b[i]); return;                                                                   \
    case APTUS_OP_PROD: LOOP(T, a[i] * b[i]); return;                                                                  \
    case APTUS_OP_MIN: LOOP(T, a[i] < b[i] ? a[i] : b[i]); return;                                                     \
    case APTUS_OP_MAX: LOOP(T, a[i] > b[i] ? a[i] : b[i]); return;                                                     \
    default: return;                                                                                                   \
    }

#define COMPLEX(T)                                                                                                     \
    switch (op) {                                                                                                      \
    case APTUS_OP_SUM: LOOP(T, a[i] + b[i]); return;                                                                   \
    case APTUS_OP_PROD: LOOP(T, a[i] * b[i]); return;                                                                  \
    default: return;                                                                                                   \
    }

/* MINLOC / MAXLOC on (value, index) pairs: ties keep the smaller index. */
#define PAIR(VT, IT)                                                                                                   \
    do {                                                                                                               \
        struct pr {                                                                                                    \
            VT v;                                                                                                      \
            IT k;                                                                                                      \
        };                                                                                                             \
        const struct pr *a = in;                                                                                       \
        struct pr *b = inout;                                                                                          \
        for (size_t i = 0; i < n; i++) {                                                                               \
            int better = op == APTUS_OP_MINLOC ? a[i].v < b[i].v : a[i].v > b[i].v;                                    \
            if (better || (a[i].v == b[i].v && a[i].k < b[i].k))                                                       \
                b[i] = a[i];                                                                                           \
        }                                                                                                              \
        return;                                                                                                        \
    } while (0)

void aptus_op_apply(int op, const void *in, void *inout, size_t n, int basic)
{
    if (op == APTUS_OP_NO_OP)
        return;
    if (op == APTUS_OP_REPLACE)
        return; /* the caller copies; REPLACE has no element-wise kernel here */
    switch (basic) {
    case APTUS_B_INT8: INTEGER(int8_t);
    case APTUS_B_UINT8: INTEGER(uint8_t);
    case APTUS_B_INT16: INTEGER(int16_t);
    case APTUS_B_UINT16: INTEGER(uint16_t);
    case APTUS_B_INT32: INTEGER(int32_t);
    case APTUS_B_UINT32: INTEGER(uint32_t);
    case APTUS_B_INT64: INTEGER(int64_t);
    case APTUS_B_UINT64: INTEGER(uint64_t);
    case APTUS_B_BYTE: BITS(uint8_t) return;
    case APTUS_B_BOOL: LOGIC(_Bool) return;
    case APTUS_B_FLOAT: FLOATING(float);
    case APTUS_B_DOUBLE: FLOATING(double);
    case APTUS_B_LONG_DOUBLE: FLOATING(long double);
    case APTUS_B_C_FLOAT_COMPLEX: COMPLEX(float _Complex);
    case APTUS_B_C_DOUBLE_COMPLEX: COMPLEX(double _Complex);
    case APTUS_B_C_LONG_DOUBLE_COMPLEX: COMPLEX(long double _Complex);
    case APTUS_B_FLOAT_INT: PAIR(float, int);
    case APTUS_B_DOUBLE_INT: PAIR(double, int);
    case APTUS_B_LONG_INT: PAIR(long, int);
    case APTUS_B_2INT: PAIR(int, int);
    case APTUS_B_SHORT_INT: PAIR(short, int);
    case APTUS_B_LONG_DOUBLE_INT: PAIR(long double, int);
    case APTUS_B_2FLOAT: PAIR(float, float);
    case APTUS_B_2DOUBLE: PAIR(double, double);
    default: return;
    }
}

void aptus_op_reduce(const struct aptus_op *op, const void *in, void *inout, size_t n, const struct aptus_dtype *dt,
                     MPI_Datatype dt_handle)
{
    if (op->predefined) {
        if (op->predefined == APTUS_OP_REPLACE)
            memcpy(inout, in, n * dt->size);
        else
            aptus_op_apply(op->predefined, in, inout, n, dt->basic);
        return;
    }
    MPI_Datatype h = dt_handle;
    while (n > 0) {
        int len = n > (size_t)INT32_MAX ? INT32_MAX : (int)n;
        op->user_fn((void *)in, inout, &len, &h);
        in = (const char *)in + (size_t)len * dt->extent;
        inout = (char *)inout + (size_t)len * dt->extent;
        n -= (size_t)len;
    }
}
