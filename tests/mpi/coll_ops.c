/* Predefined reduction operations against the standard's table (MPI 4.1, section 6.9.2): every
 * predefined op on every predefined datatype through MPI_Reduce_local. Allowed pairs must give
 * the right result (two elements, computed by hand below); the others must fail with MPI_ERR_OP
 * (MPI_REPLACE and MPI_NO_OP are for accumulate functions only). Then the exotic kernels
 * (MPI_INTEGER16, MPI_REAL16, MPI_COMPLEX32, MPI_LOGICAL, MPI_C_BOOL, MPI_AINT...) once through
 * MPI_Allreduce. Types that the library does not provide (MPI_Type_size fails) are skipped.
 *
 * Run against another MPI, MTEST_KNOWN_BUGS=lenient_op_check skips the "must fail" half (MPICH
 * accepts some pairs the standard does not list), real16_is_long_double the binary128 kernels
 * (MPICH 4.0 computes MPI_REAL16 / MPI_COMPLEX32 as C long double). Uses GCC's __int128, _Float16, _Float128. */
#include "mtest.h"
#include "nbc_wrap.h"

#include <complex.h>
#include <stdbool.h>

enum grp { G_CINT, G_FINT, G_FLOAT, G_LOGICAL, G_COMPLEX, G_BYTE, G_MULTI, G_PAIR, G_NONE };

enum repr {
    R_INT,
    R_BOOL,
    R_F32,
    R_F64,
    R_LD,
    R_F16,
    R_F128,
    R_CF32,
    R_CF64,
    R_CLD,
    R_CF16,
    R_CF128,
    R_P_F_I,
    R_P_D_I,
    R_P_L_I,
    R_P_I_I,
    R_P_S_I,
    R_P_LD_I,
    R_P_F_F,
    R_P_D_D,
    R_NONE
};

struct tdesc {
    MPI_Datatype t;
    const char *name;
    int grp, repr;
};

#define T(t, g, r)                                                                                                     \
    {                                                                                                                  \
        t, #t, g, r                                                                                                    \
    }
static const struct tdesc types[] = {
    T(MPI_SHORT, G_CINT, R_INT),
    T(MPI_INT, G_CINT, R_INT),
    T(MPI_LONG, G_CINT, R_INT),
    T(MPI_LONG_LONG, G_CINT, R_INT),
    T(MPI_UNSIGNED_SHORT, G_CINT, R_INT),
    T(MPI_UNSIGNED, G_CINT, R_INT),
    T(MPI_UNSIGNED_LONG, G_CINT, R_INT),
    T(MPI_UNSIGNED_LONG_LONG, G_CINT, R_INT),
    T(MPI_SIGNED_CHAR, G_CINT, R_INT),
    T(MPI_UNSIGNED_CHAR, G_CINT, R_INT),
    T(MPI_INT8_T, G_CINT, R_INT),
    T(MPI_UINT8_T, G_CINT, R_INT),
    T(MPI_INT16_T, G_CINT, R_INT),
    T(MPI_UINT16_T, G_CINT, R_INT),
    T(MPI_INT32_T, G_CINT, R_INT),
    T(MPI_UINT32_T, G_CINT, R_INT),
    T(MPI_INT64_T, G_CINT, R_INT),
    T(MPI_UINT64_T, G_CINT, R_INT),
    T(MPI_INTEGER, G_FINT, R_INT),
    T(MPI_INTEGER1, G_FINT, R_INT),
    T(MPI_INTEGER2, G_FINT, R_INT),
    T(MPI_INTEGER4, G_FINT, R_INT),
    T(MPI_INTEGER8, G_FINT, R_INT),
    T(MPI_INTEGER16, G_FINT, R_INT),
    T(MPI_FLOAT, G_FLOAT, R_F32),
    T(MPI_DOUBLE, G_FLOAT, R_F64),
    T(MPI_LONG_DOUBLE, G_FLOAT, R_LD),
    T(MPI_REAL, G_FLOAT, R_F32),
    T(MPI_DOUBLE_PRECISION, G_FLOAT, R_F64),
#ifdef MPI_REAL2
    T(MPI_REAL2, G_FLOAT, R_F16),
#endif
    T(MPI_REAL4, G_FLOAT, R_F32),
    T(MPI_REAL8, G_FLOAT, R_F64),
    T(MPI_REAL16, G_FLOAT, R_F128),
    T(MPI_LOGICAL, G_LOGICAL, R_INT),
    T(MPI_C_BOOL, G_LOGICAL, R_BOOL),
    T(MPI_CXX_BOOL, G_LOGICAL, R_BOOL),
    T(MPI_C_FLOAT_COMPLEX, G_COMPLEX, R_CF32),
    T(MPI_C_DOUBLE_COMPLEX, G_COMPLEX, R_CF64),
    T(MPI_C_LONG_DOUBLE_COMPLEX, G_COMPLEX, R_CLD),
    T(MPI_CXX_FLOAT_COMPLEX, G_COMPLEX, R_CF32),
    T(MPI_CXX_DOUBLE_COMPLEX, G_COMPLEX, R_CF64),
    T(MPI_CXX_LONG_DOUBLE_COMPLEX, G_COMPLEX, R_CLD),
    T(MPI_COMPLEX, G_COMPLEX, R_CF32),
    T(MPI_DOUBLE_COMPLEX, G_COMPLEX, R_CF64),
#ifdef MPI_COMPLEX4
    T(MPI_COMPLEX4, G_COMPLEX, R_CF16),
#endif
    T(MPI_COMPLEX8, G_COMPLEX, R_CF32),
    T(MPI_COMPLEX16, G_COMPLEX, R_CF64),
    T(MPI_COMPLEX32, G_COMPLEX, R_CF128),
    T(MPI_BYTE, G_BYTE, R_INT),
    T(MPI_AINT, G_MULTI, R_INT),
    T(MPI_OFFSET, G_MULTI, R_INT),
    T(MPI_COUNT, G_MULTI, R_INT),
    T(MPI_FLOAT_INT, G_PAIR, R_P_F_I),
    T(MPI_DOUBLE_INT, G_PAIR, R_P_D_I),
    T(MPI_LONG_INT, G_PAIR, R_P_L_I),
    T(MPI_2INT, G_PAIR, R_P_I_I),
    T(MPI_SHORT_INT, G_PAIR, R_P_S_I),
    T(MPI_LONG_DOUBLE_INT, G_PAIR, R_P_LD_I),
    T(MPI_2REAL, G_PAIR, R_P_F_F),
    T(MPI_2DOUBLE_PRECISION, G_PAIR, R_P_D_D),
    T(MPI_2INTEGER, G_PAIR, R_P_I_I),
    T(MPI_CHAR, G_CINT, R_INT), /* an extension: a C integer, as in MPICH and Open MPI */
    T(MPI_WCHAR, G_NONE, R_NONE),
    T(MPI_CHARACTER, G_NONE, R_NONE),
    T(MPI_PACKED, G_NONE, R_NONE),
};
#define NTYPES ((int)(sizeof types / sizeof types[0]))

enum { OMAX, OMIN, OSUM, OPROD, OLAND, OBAND, OLOR, OBOR, OLXOR, OBXOR, OMINLOC, OMAXLOC, OREPLACE, ONOOP, NOPS };
static const char *opname[NOPS] = { "MPI_MAX",    "MPI_MIN",    "MPI_SUM",     "MPI_PROD", "MPI_LAND",
                                    "MPI_BAND",   "MPI_LOR",    "MPI_BOR",     "MPI_LXOR", "MPI_BXOR",
                                    "MPI_MINLOC", "MPI_MAXLOC", "MPI_REPLACE", "MPI_NO_OP" };
static MPI_Op mpi_op(int o)
{
    const MPI_Op ops[NOPS] = { MPI_MAX, MPI_MIN,  MPI_SUM,  MPI_PROD,   MPI_LAND,   MPI_BAND,    MPI_LOR,
                               MPI_BOR, MPI_LXOR, MPI_BXOR, MPI_MINLOC, MPI_MAXLOC, MPI_REPLACE, MPI_NO_OP };
    return ops[o];
}

/* the standard's table */
static int allowed(int o, int g)
{
    switch (o) {
    case OMAX:
    case OMIN: return g == G_CINT || g == G_FINT || g == G_FLOAT || g == G_MULTI;
    case OSUM:
    case OPROD: return g == G_CINT || g == G_FINT || g == G_FLOAT || g == G_COMPLEX || g == G_MULTI;
    case OLAND:
    case OLOR:
    case OLXOR: /* the standard: C integer and logical; Aptus (as MPICH) also the multi-language types */
        return g == G_CINT || g == G_LOGICAL || g == G_MULTI;
    case OBAND:
    case OBOR:
    case OBXOR: return g == G_CINT || g == G_FINT || g == G_BYTE || g == G_MULTI;
    case OMINLOC:
    case OMAXLOC: return g == G_PAIR;
    default: return 0;
    }
}

/* ---- two elements of each representation: input, input/output, expected per op ---- */

/* integers (any width up to 16 bytes, little-endian, small non-negative values) */
static void put_int(unsigned char *p, int w, unsigned long long v)
{
    if (w <= 0 || w > 16)
        FAILF("unexpected integer size %d", w);
    memset(p, 0, (size_t)w);
    for (int b = 0; b < w && b < 8; b++)
        p[b] = (unsigned char)(v >> (8 * b));
}

static unsigned long long get_int(const unsigned char *p, int w, int *clean)
{
    unsigned long long v = 0;
    for (int b = 0; b < w && b < 8; b++)
        v |= (unsigned long long)p[b] << (8 * b);
    for (int b = 8; b < w; b++)
        if (p[b])
            *clean = 0;
    return v;
}

static int int_result(int o, int grp, unsigned long long a, unsigned long long b, unsigned long long *r)
{
    if (grp == G_LOGICAL || o == OLAND || o == OLOR || o == OLXOR) {
        int x = a != 0, y = b != 0;
        *r = o == OLAND ? (x && y) : o == OLOR ? (x || y) : (x != y);
        return 1;
    }
    switch (o) {
    case OMAX: *r = a > b ? a : b; return 1;
    case OMIN: *r = a < b ? a : b; return 1;
    case OSUM: *r = a + b; return 1;
    case OPROD: *r = a * b; return 1;
    case OBAND: *r = a & b; return 1;
    case OBOR: *r = a | b; return 1;
    case OBXOR: *r = a ^ b; return 1;
    default: return 0;
    }
}

/* floating point: one C type per format, values exact in every format (half precision included) */
#define FLOAT_CASE(R, CT)                                                                                              \
    case R: {                                                                                                          \
        CT in[2] = { (CT)1.5, (CT)-2 }, io[2] = { (CT)2, (CT)0.25 }, want[2];                                          \
        for (int i = 0; i < 2; i++) {                                                                                  \
            CT a = in[i], b = io[i];                                                                                   \
            want[i] = o == OMAX ? (a > b ? a : b) : o == OMIN ? (a < b ? a : b) : o == OSUM ? a + b : a * b;           \
        }                                                                                                              \
        rc = MPI_Reduce_local(in, io, 2, t->t, op);                                                                    \
        if (rc == MPI_SUCCESS && expect_ok)                                                                            \
            for (int i = 0; i < 2; i++)                                                                                \
                CHECK(io[i] == want[i], "%s on %s: element %d is %g, expected %g", opname[o], t->name, i,              \
                      (double)io[i], (double)want[i]);                                                                 \
        break;                                                                                                         \
    }

#define COMPLEX_CASE(R, CT, RT)                                                                                        \
    case R: {                                                                                                          \
        CT in[2], io[2], want[2];                                                                                      \
        __real__ in[0] = (RT)1;                                                                                        \
        __imag__ in[0] = (RT)2;                                                                                        \
        __real__ in[1] = (RT)0.5;                                                                                      \
        __imag__ in[1] = (RT)-1;                                                                                       \
        __real__ io[0] = (RT)3;                                                                                        \
        __imag__ io[0] = (RT)-1;                                                                                       \
        __real__ io[1] = (RT)2;                                                                                        \
        __imag__ io[1] = (RT)0.5;                                                                                      \
        for (int i = 0; i < 2; i++)                                                                                    \
            want[i] = o == OSUM ? in[i] + io[i] : in[i] * io[i];                                                       \
        rc = MPI_Reduce_local(in, io, 2, t->t, op);                                                                    \
        if (rc == MPI_SUCCESS && expect_ok)                                                                            \
            for (int i = 0; i < 2; i++)                                                                                \
                CHECK(__real__ io[i] == __real__ want[i] && __imag__ io[i] == __imag__ want[i],                        \
                      "%s on %s: element %d is (%g,%g), expected (%g,%g)", opname[o], t->name, i,                      \
                      (double)__real__ io[i], (double)__imag__ io[i], (double)__real__ want[i],                        \
                      (double)__imag__ want[i]);                                                                       \
        break;                                                                                                         \
    }

/* MINLOC / MAXLOC: element 0 is a tie (the smaller index wins), element 1 is not */
#define PAIR_CASE(R, VT, IT)                                                                                           \
    case R: {                                                                                                          \
        struct {                                                                                                       \
            VT v;                                                                                                      \
            IT k;                                                                                                      \
        } in[2] = { { (VT)2, (IT)5 }, { (VT)1, (IT)3 } }, io[2] = { { (VT)2, (IT)4 }, { (VT)3, (IT)9 } };              \
        rc = MPI_Reduce_local(in, io, 2, t->t, op);                                                                    \
        if (rc == MPI_SUCCESS && expect_ok) {                                                                          \
            int mx = o == OMAXLOC;                                                                                     \
            CHECK(io[0].v == (VT)2 && io[0].k == (IT)4, "%s on %s: tie kept index %g", opname[o], t->name,             \
                  (double)io[0].k);                                                                                    \
            CHECK(io[1].v == (VT)(mx ? 3 : 1) && io[1].k == (IT)(mx ? 9 : 3), "%s on %s: (%g,%g)", opname[o], t->name, \
                  (double)io[1].v, (double)io[1].k);                                                                   \
        }                                                                                                              \
        break;                                                                                                         \
    }

static void check_pair(const struct tdesc *t, int o)
{
    int size = 0;
    if (MPI_Type_size(t->t, &size) != MPI_SUCCESS || size <= 0)
        return; /* not provided by this library */
    if ((t->repr == R_F128 || t->repr == R_CF128) && mtest_known_bug("real16_is_long_double"))
        return;
    int expect_ok = allowed(o, t->grp);
    if (!expect_ok && mtest_known_bug("lenient_op_check"))
        return;
    MPI_Op op = mpi_op(o);
    int rc = MPI_SUCCESS;
    switch (t->repr) {
    case R_INT:
    case R_BOOL: {
        unsigned char in[2][16], io[2][16];
        int logical = t->grp == G_LOGICAL;
        unsigned long long a[2] = { logical ? 1 : 5, logical ? 0 : 12 }, b[2] = { logical ? 1 : 6, logical ? 1 : 3 };
        for (int i = 0; i < 2; i++) {
            put_int(in[i], size, a[i]);
            put_int(io[i], size, b[i]);
        }
        unsigned char inb[32], iob[32];
        for (int i = 0; i < 2; i++) {
            memcpy(inb + i * size, in[i], (size_t)size);
            memcpy(iob + i * size, io[i], (size_t)size);
        }
        rc = MPI_Reduce_local(inb, iob, 2, t->t, op);
        if (rc == MPI_SUCCESS && expect_ok)
            for (int i = 0; i < 2; i++) {
                unsigned long long want;
                int clean = 1;
                if (!int_result(o, t->grp, a[i], b[i], &want))
                    continue;
                if (size < 8)
                    want &= (1ull << (8 * size)) - 1;
                unsigned long long got = get_int(iob + i * size, size, &clean);
                CHECK(got == want && clean, "%s on %s: element %d is %llu, expected %llu", opname[o], t->name, i, got,
                      want);
            }
        break;
    }
        FLOAT_CASE(R_F32, float)
        FLOAT_CASE(R_F64, double)
        FLOAT_CASE(R_LD, long double)
        FLOAT_CASE(R_F16, _Float16)
        FLOAT_CASE(R_F128, _Float128)
        COMPLEX_CASE(R_CF32, float _Complex, float)
        COMPLEX_CASE(R_CF64, double _Complex, double)
        COMPLEX_CASE(R_CLD, long double _Complex, long double)
        COMPLEX_CASE(R_CF16, _Complex _Float16, _Float16)
        COMPLEX_CASE(R_CF128, _Complex _Float128, _Float128)
        PAIR_CASE(R_P_F_I, float, int)
        PAIR_CASE(R_P_D_I, double, int)
        PAIR_CASE(R_P_L_I, long, int)
        PAIR_CASE(R_P_I_I, int, int)
        PAIR_CASE(R_P_S_I, short, int)
        PAIR_CASE(R_P_LD_I, long double, int)
        PAIR_CASE(R_P_F_F, float, float)
        PAIR_CASE(R_P_D_D, double, double)
    default: {
        char in[64] = { 0 }, io[64] = { 0 };
        rc = MPI_Reduce_local(in, io, 2, t->t, op);
        break;
    }
    }
    if (expect_ok)
        CHECK(rc == MPI_SUCCESS, "%s on %s is allowed by the standard but failed: %s", opname[o], t->name,
              mtest_errstr(rc));
    else
        CHECK_ERRCLASS(rc, MPI_ERR_OP, opname[o]);
}

/* The unusual kernels through a collective: every rank contributes rank + 1 (+ 0.5 for reals). */
static void collective_kernels(int rank, int size)
{
    int sz = 0;
    long long sum = (long long)size * (size + 1) / 2;
    if (MPI_Type_size(MPI_INTEGER16, &sz) == MPI_SUCCESS && sz == 16) {
        __int128 a[3], b[3];
        for (int i = 0; i < 3; i++)
            a[i] = (__int128)(rank + 1) << (40 * i); /* beyond 64 bits for i = 2 */
        MPI_CHECK(MPI_Allreduce(a, b, 3, MPI_INTEGER16, MPI_SUM, MPI_COMM_WORLD));
        for (int i = 0; i < 3; i++)
            CHECK(b[i] == (__int128)sum << (40 * i), "Allreduce SUM on MPI_INTEGER16 element %d", i);
    }
    if (mtest_known_bug("real16_is_long_double"))
        sz = 0;
    else if (MPI_Type_size(MPI_REAL16, &sz) != MPI_SUCCESS)
        sz = 0;
    if (sz == 16) {
        _Float128 a[3], b[3];
        for (int i = 0; i < 3; i++) /* 1 + 2^-100 needs binary128: it would round to 1 in x87 */
            a[i] = (_Float128)(rank + 1) * ((_Float128)1 + (_Float128)0x1p-100);
        MPI_CHECK(MPI_Allreduce(a, b, 3, MPI_REAL16, MPI_SUM, MPI_COMM_WORLD));
        for (int i = 0; i < 3; i++)
            CHECK(b[i] == (_Float128)sum * ((_Float128)1 + (_Float128)0x1p-100), "Allreduce SUM on MPI_REAL16");
    }
    if (!mtest_known_bug("real16_is_long_double") && MPI_Type_size(MPI_COMPLEX32, &sz) == MPI_SUCCESS && sz == 32) {
        _Complex _Float128 a, b, want = 1;
        __real__ a = 0;
        __imag__ a = 1; /* i^size */
        MPI_CHECK(MPI_Allreduce(&a, &b, 1, MPI_COMPLEX32, MPI_PROD, MPI_COMM_WORLD));
        for (int r = 0; r < size; r++)
            want *= a;
        CHECK(__real__ b == __real__ want && __imag__ b == __imag__ want, "Allreduce PROD on MPI_COMPLEX32");
    }
    {
        bool a[4] = { true, rank == 0, rank != 0, false }, b[4];
        MPI_CHECK(MPI_Allreduce(a, b, 4, MPI_C_BOOL, MPI_LAND, MPI_COMM_WORLD));
        CHECK(b[0] && b[1] == (size == 1) && !b[2] && !b[3], "Allreduce LAND on MPI_C_BOOL");
        MPI_CHECK(MPI_Allreduce(a, b, 4, MPI_C_BOOL, MPI_LXOR, MPI_COMM_WORLD));
        CHECK(b[0] == (size % 2) && b[1] && b[2] == ((size - 1) % 2) && !b[3], "Allreduce LXOR on MPI_C_BOOL");
    }
    {
        int a[2] = { rank == 1, 0 }, b[2]; /* Fortran LOGICAL */
        MPI_CHECK(MPI_Allreduce(a, b, 2, MPI_LOGICAL, MPI_LOR, MPI_COMM_WORLD));
        CHECK(b[0] == (size > 1) && b[1] == 0, "Allreduce LOR on MPI_LOGICAL");
    }
    {
        MPI_Aint a = (MPI_Aint)(rank + 1) << 33, b;
        MPI_CHECK(MPI_Allreduce(&a, &b, 1, MPI_AINT, MPI_SUM, MPI_COMM_WORLD));
        CHECK(b == (MPI_Aint)sum << 33, "Allreduce SUM on MPI_AINT");
        MPI_Count x = (MPI_Count)1 << (rank % 60), y;
        MPI_CHECK(MPI_Allreduce(&x, &y, 1, MPI_COUNT, MPI_BOR, MPI_COMM_WORLD));
        CHECK(y == ((MPI_Count)1 << size) - 1 || size > 60, "Allreduce BOR on MPI_COUNT");
    }
    {
        signed char a = (signed char)(rank * 3 - 4), b; /* MPI_INTEGER1 */
        MPI_CHECK(MPI_Allreduce(&a, &b, 1, MPI_INTEGER1, MPI_MIN, MPI_COMM_WORLD));
        CHECK(b == -4, "Allreduce MIN on MPI_INTEGER1: %d", b);
    }
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    for (int i = 0; i < NTYPES; i++)
        for (int o = 0; o < NOPS; o++)
            check_pair(&types[i], o);
    collective_kernels(rank, size);
    return mtest_finalize();
}
