/* Basic collectives: Barrier, Bcast (every root, 0 .. 1 MiB), Reduce (every
 * root) and Allreduce with every predefined operation on the datatypes it is
 * defined for, MAXLOC/MINLOC on the pair types, MPI_IN_PLACE; results are
 * checked against a serial reference computed locally from the inputs that
 * every rank can regenerate. Works with any number of ranks (run 1..4). */
#include "mtest.h"
#include "nbc_wrap.h"
#include <stdbool.h>

static int rank, size;

enum { OSUM, OPROD, OMIN, OMAX, OLAND, OLOR, OLXOR, OBAND, OBOR, OBXOR, NOPS };
static const char *opname[NOPS] = { "SUM", "PROD", "MIN", "MAX", "LAND", "LOR", "LXOR", "BAND", "BOR", "BXOR" };
#define ARITH ((1 << OSUM) | (1 << OPROD) | (1 << OMIN) | (1 << OMAX))
#define LOGIC ((1 << OLAND) | (1 << OLOR) | (1 << OLXOR))
#define BITS  ((1 << OBAND) | (1 << OBOR) | (1 << OBXOR))

static MPI_Op mpi_op(int o)
{
    switch (o) {
    case OSUM: return MPI_SUM;
    case OPROD: return MPI_PROD;
    case OMIN: return MPI_MIN;
    case OMAX: return MPI_MAX;
    case OLAND: return MPI_LAND;
    case OLOR: return MPI_LOR;
    case OLXOR: return MPI_LXOR;
    case OBAND: return MPI_BAND;
    case OBOR: return MPI_BOR;
    default: return MPI_BXOR;
    }
}

static unsigned hash2(int r, int i)
{
    unsigned x = (unsigned)r * 0x9E3779B1u ^ (unsigned)i * 0x85EBCA77u;
    x ^= x >> 15;
    x *= 0x2C1B3C6Du;
    x ^= x >> 12;
    return x;
}

/* Input of rank r, element i, for op o; kept small so that every result is
 * exact and in range for 8-bit types with up to 4 ranks (and beyond for
 * SUM/MIN/MAX). uns: the type is unsigned; is_bool: C _Bool. */
static long long gen(int o, int r, int i, int uns, int is_bool)
{
    switch (o) {
    case OSUM: return uns ? (r * 5 + i * 3) % 7 : (r * 5 + i * 3) % 7 - 3;
    case OPROD: /* |product| <= 2^size; only 1 and 2 (and -1) */
        if ((r + 2 * i) % 3 == 0)
            return 2;
        return (!uns && (r + i) % 2) ? -1 : 1;
    case OMIN:
    case OMAX: return uns ? (r * 7 + i * 13) % 11 : (r * 7 + i * 13) % 11 - 5;
    case OLAND:
    case OLOR:
    case OLXOR: {
        /* truth of rank r for element i: bit r%8 of (i + 1) with a twist,
         * so that all-true, all-false and mixed columns all occur */
        int t = (((i * 37 + 1) >> (r % 8)) & 1) || (i % 5 == 0);
        if (i % 7 == 0)
            t = 0;
        return t ? (is_bool ? 1 : 1 + (r + i) % 3) : 0;
    }
    default: /* bitwise: 7 bits, fits every integer type */ return (long long)(hash2(r, i) & 0x7f);
    }
}

/* exact for the small values used; a function so that the _Bool
 * instantiation does not multiply in a boolean context */
static long double mul_ld(long double a, long double b)
{
    return a * b;
}

#define DEFINE_REDUCE_TEST(T, NAME)                                                                                    \
    static T ref_##NAME(int o, int i, int uns, int isb)                                                                \
    {                                                                                                                  \
        T acc = (T)gen(o, 0, i, uns, isb);                                                                             \
        for (int r = 1; r < size; r++) {                                                                               \
            T v = (T)gen(o, r, i, uns, isb);                                                                           \
            switch (o) {                                                                                               \
            case OSUM: acc = (T)(acc + v); break;                                                                      \
            case OPROD: acc = (T)mul_ld(acc, v); break;                                                                \
            case OMIN: acc = v < acc ? v : acc; break;                                                                 \
            case OMAX: acc = v > acc ? v : acc; break;                                                                 \
            case OLAND: acc = (T)((acc != 0) && (v != 0)); break;                                                      \
            case OLOR: acc = (T)((acc != 0) || (v != 0)); break;                                                       \
            case OLXOR: acc = (T)((acc != 0) != (v != 0)); break;                                                      \
            default: break;                                                                                            \
            }                                                                                                          \
        }                                                                                                              \
        return acc;                                                                                                    \
    }                                                                                                                  \
    static void run_##NAME(MPI_Datatype dt, const char *tname, int ops, int uns, int isb, int maxcount)                \
    {                                                                                                                  \
        const int counts[] = { 1, 5, 129, 4099, maxcount };                                                            \
        for (int o = 0; o < NOPS; o++) {                                                                               \
            if (!(ops & (1 << o)))                                                                                     \
                continue;                                                                                              \
            for (int ci = 0; ci < 5; ci++) {                                                                           \
                int n = counts[ci];                                                                                    \
                if (ci == 4 && n <= counts[3])                                                                         \
                    continue;                                                                                          \
                T *in = mtest_malloc(sizeof(T) * (size_t)n);                                                           \
                T *out = mtest_malloc(sizeof(T) * (size_t)n);                                                          \
                T *ref = mtest_malloc(sizeof(T) * (size_t)n);                                                          \
                for (int i = 0; i < n; i++)                                                                            \
                    ref[i] = ref_##NAME(o, i, uns, isb);                                                               \
                /* count 5: Allreduce, Allreduce in place, then Reduce to every  */                                    \
                /* root, plain and in place. Other counts: one Allreduce and one  */                                   \
                /* Reduce (root and in-place-ness rotating with op and count).    */                                   \
                int full = (n == 5);                                                                                   \
                int nmodes = full ? 2 + 2 * size : 2;                                                                  \
                for (int m = 0; m < nmodes; m++) {                                                                     \
                    int root, inplace;                                                                                 \
                    if (full) {                                                                                        \
                        root = m >= 2 ? (m - 2) / 2 : -1;                                                              \
                        inplace = m % 2;                                                                               \
                    } else {                                                                                           \
                        root = m == 0 ? -1 : (ci + o) % size;                                                          \
                        inplace = (ci + o + m) % 2;                                                                    \
                    }                                                                                                  \
                    for (int i = 0; i < n; i++) {                                                                      \
                        in[i] = (T)gen(o, rank, i, uns, isb);                                                          \
                        out[i] = (T)(3);                                                                               \
                    }                                                                                                  \
                    if (root < 0) {                                                                                    \
                        if (inplace) {                                                                                 \
                            memcpy(out, in, sizeof(T) * (size_t)n);                                                    \
                            MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, out, n, dt, mpi_op(o), MPI_COMM_WORLD));             \
                        } else {                                                                                       \
                            MPI_CHECK(MPI_Allreduce(in, out, n, dt, mpi_op(o), MPI_COMM_WORLD));                       \
                        }                                                                                              \
                    } else if (inplace && rank == root) {                                                              \
                        memcpy(out, in, sizeof(T) * (size_t)n);                                                        \
                        MPI_CHECK(MPI_Reduce(MPI_IN_PLACE, out, n, dt, mpi_op(o), root, MPI_COMM_WORLD));              \
                    } else {                                                                                           \
                        MPI_CHECK(MPI_Reduce(in, rank == root ? out : NULL, n, dt, mpi_op(o), root, MPI_COMM_WORLD));  \
                    }                                                                                                  \
                    for (int i = 0; i < n; i++)                                                                        \
                        if (in[i] != (T)gen(o, rank, i, uns, isb))                                                     \
                            FAILF("%s %s n=%d mode %d: send buffer modified at %d", tname, opname[o], n, m, i);        \
                    if (root < 0 || rank == root) {                                                                    \
                        /* logical ops: compare truth values (a single rank's input  */                                \
                        /* may come back unnormalized, e.g. 2 for true)               */                               \
                        int logical = o == OLAND || o == OLOR || o == OLXOR;                                           \
                        for (int i = 0; i < n; i++)                                                                    \
                            if (logical ? ((out[i] != 0) != (ref[i] != 0)) : !(out[i] == ref[i]))                      \
                                FAILF("%s %s count %d %s%s root %d: element %d = %lld, "                               \
                                      "want %lld",                                                                     \
                                      tname, opname[o], n, root < 0 ? "Allreduce" : "Reduce",                          \
                                      inplace ? " in place" : "", root, i, (long long)out[i], (long long)ref[i]);      \
                    }                                                                                                  \
                }                                                                                                      \
                free(in);                                                                                              \
                free(out);                                                                                             \
                free(ref);                                                                                             \
            }                                                                                                          \
        }                                                                                                              \
    }

DEFINE_REDUCE_TEST(signed char, schar)
DEFINE_REDUCE_TEST(unsigned char, uchar)
DEFINE_REDUCE_TEST(short, short)
DEFINE_REDUCE_TEST(unsigned short, ushort)
DEFINE_REDUCE_TEST(int, int)
DEFINE_REDUCE_TEST(unsigned, unsigned)
DEFINE_REDUCE_TEST(long, long)
DEFINE_REDUCE_TEST(unsigned long, ulong)
DEFINE_REDUCE_TEST(long long, llong)
DEFINE_REDUCE_TEST(unsigned long long, ullong)
DEFINE_REDUCE_TEST(int8_t, i8)
DEFINE_REDUCE_TEST(uint8_t, u8)
DEFINE_REDUCE_TEST(int16_t, i16)
DEFINE_REDUCE_TEST(uint16_t, u16)
DEFINE_REDUCE_TEST(int32_t, i32)
DEFINE_REDUCE_TEST(uint32_t, u32)
DEFINE_REDUCE_TEST(int64_t, i64)
DEFINE_REDUCE_TEST(uint64_t, u64)
DEFINE_REDUCE_TEST(float, float)
DEFINE_REDUCE_TEST(double, double)
DEFINE_REDUCE_TEST(long double, ldouble)
DEFINE_REDUCE_TEST(bool, cbool)

/* Mode m of the bitwise and MINLOC / MAXLOC tests: 0 Allreduce, 1 Allreduce in place, else
 * Reduce to root. Returns whether this rank has a result in out. */
static int reduce_mode(int m, const void *in, void *out, int n, size_t elem, MPI_Datatype dt, MPI_Op op, int root)
{
    if (m == 0) {
        MPI_CHECK(MPI_Allreduce(in, out, n, dt, op, MPI_COMM_WORLD));
    } else if (m == 1) {
        memcpy(out, in, elem * (size_t)n);
        MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, out, n, dt, op, MPI_COMM_WORLD));
    } else {
        MPI_CHECK(MPI_Reduce(in, out, n, dt, op, root, MPI_COMM_WORLD));
        return rank == root;
    }
    return 1;
}

/* Bitwise ops need integer semantics: a separate reference. */
#define DEFINE_BIT_TEST(T, NAME)                                                                                       \
    static void bits_##NAME(MPI_Datatype dt, const char *tname)                                                        \
    {                                                                                                                  \
        const int counts[] = { 1, 3, 1000, 70000 };                                                                    \
        for (int o = OBAND; o <= OBXOR; o++)                                                                           \
            for (int ci = 0; ci < 4; ci++) {                                                                           \
                int n = counts[ci];                                                                                    \
                T *in = mtest_malloc(sizeof(T) * (size_t)n);                                                           \
                T *out = mtest_malloc(sizeof(T) * (size_t)n);                                                          \
                for (int i = 0; i < n; i++)                                                                            \
                    in[i] = (T)gen(o, rank, i, 0, 0);                                                                  \
                for (int m = 0; m < 3; m++) {                                                                          \
                    if (!reduce_mode(m, in, out, n, sizeof(T), dt, mpi_op(o), (ci + m) % size))                        \
                        continue;                                                                                      \
                    for (int i = 0; i < n; i++) {                                                                      \
                        unsigned long long acc = (unsigned long long)gen(o, 0, i, 0, 0);                               \
                        for (int r = 1; r < size; r++) {                                                               \
                            unsigned long long v = (unsigned long long)gen(o, r, i, 0, 0);                             \
                            acc = o == OBAND ? (acc & v) : o == OBOR ? (acc | v) : (acc ^ v);                          \
                        }                                                                                              \
                        if ((unsigned long long)out[i] != acc)                                                         \
                            FAILF("%s %s count %d mode %d: element %d = %llu, want %llu", tname, opname[o], n, m, i,   \
                                  (unsigned long long)out[i], acc);                                                    \
                    }                                                                                                  \
                }                                                                                                      \
                free(in);                                                                                              \
                free(out);                                                                                             \
            }                                                                                                          \
    }

DEFINE_BIT_TEST(unsigned char, byte)
DEFINE_BIT_TEST(short, short)
DEFINE_BIT_TEST(int, int)
DEFINE_BIT_TEST(unsigned, unsigned)
DEFINE_BIT_TEST(long, long)
DEFINE_BIT_TEST(unsigned long long, ullong)
DEFINE_BIT_TEST(int8_t, i8)
DEFINE_BIT_TEST(uint64_t, u64)

static void test_reductions(void)
{
#define R(NAME, DT, OPS, UNS, ISB, MAXC) run_##NAME(DT, #DT, OPS, UNS, ISB, MAXC)
    R(schar, MPI_SIGNED_CHAR, ARITH | LOGIC, 0, 0, 0);
    R(uchar, MPI_UNSIGNED_CHAR, ARITH | LOGIC, 1, 0, 0);
    R(short, MPI_SHORT, ARITH | LOGIC, 0, 0, 0);
    R(ushort, MPI_UNSIGNED_SHORT, ARITH | LOGIC, 1, 0, 0);
    R(int, MPI_INT, ARITH | LOGIC, 0, 0, 262144);
    R(unsigned, MPI_UNSIGNED, ARITH | LOGIC, 1, 0, 0);
    R(long, MPI_LONG, ARITH | LOGIC, 0, 0, 0);
    R(ulong, MPI_UNSIGNED_LONG, ARITH | LOGIC, 1, 0, 0);
    R(llong, MPI_LONG_LONG, ARITH | LOGIC, 0, 0, 0);
    R(ullong, MPI_UNSIGNED_LONG_LONG, ARITH | LOGIC, 1, 0, 0);
    R(llong, MPI_LONG_LONG_INT, (1 << OSUM), 0, 0, 0);
    R(i8, MPI_INT8_T, ARITH | LOGIC, 0, 0, 0);
    R(u8, MPI_UINT8_T, ARITH | LOGIC, 1, 0, 0);
    R(i16, MPI_INT16_T, ARITH | LOGIC, 0, 0, 0);
    R(u16, MPI_UINT16_T, ARITH | LOGIC, 1, 0, 0);
    R(i32, MPI_INT32_T, ARITH | LOGIC, 0, 0, 0);
    R(u32, MPI_UINT32_T, ARITH | LOGIC, 1, 0, 0);
    R(i64, MPI_INT64_T, ARITH | LOGIC, 0, 0, 0);
    R(u64, MPI_UINT64_T, ARITH | LOGIC, 1, 0, 0);
    R(float, MPI_FLOAT, ARITH, 0, 0, 0);
    R(double, MPI_DOUBLE, ARITH, 0, 0, 131072);
    R(ldouble, MPI_LONG_DOUBLE, ARITH, 0, 0, 0);
    R(cbool, MPI_C_BOOL, LOGIC, 1, 1, 0);
#undef R
    bits_byte(MPI_BYTE, "MPI_BYTE");
    bits_byte(MPI_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR");
    bits_short(MPI_SHORT, "MPI_SHORT");
    bits_int(MPI_INT, "MPI_INT");
    bits_unsigned(MPI_UNSIGNED, "MPI_UNSIGNED");
    bits_long(MPI_LONG, "MPI_LONG");
    bits_ullong(MPI_UNSIGNED_LONG_LONG, "MPI_UNSIGNED_LONG_LONG");
    bits_i8(MPI_INT8_T, "MPI_INT8_T");
    bits_u64(MPI_UINT64_T, "MPI_UINT64_T");
}

/* MAXLOC / MINLOC on the pair types */
#define DEFINE_LOC_TEST(VT, NAME)                                                                                      \
    struct pair_##NAME {                                                                                               \
        VT v;                                                                                                          \
        int loc;                                                                                                       \
    };                                                                                                                 \
    static void loc_##NAME(MPI_Datatype dt, const char *tname)                                                         \
    {                                                                                                                  \
        const int counts[] = { 1, 10, 3001 };                                                                          \
        for (int ismax = 0; ismax < 2; ismax++)                                                                        \
            for (int ci = 0; ci < 3; ci++) {                                                                           \
                int n = counts[ci];                                                                                    \
                struct pair_##NAME *in = mtest_malloc(sizeof(*in) * (size_t)n);                                        \
                struct pair_##NAME *out = mtest_malloc(sizeof(*out) * (size_t)n);                                      \
                for (int m = 0; m < 2 + size; m++) {                                                                   \
                    int root = m - 2;                                                                                  \
                    for (int i = 0; i < n; i++) {                                                                      \
                        /* values 0..3 so that ties are frequent; locs not ordered like */                             \
                        /* ranks */                                                                                    \
                        in[i].v = (VT)((rank * 3 + i) % 4);                                                            \
                        in[i].loc = ((size - rank) * 10 + i % 5);                                                      \
                    }                                                                                                  \
                    if (!reduce_mode(m, in, out, n, sizeof(*in), dt, ismax ? MPI_MAXLOC : MPI_MINLOC, root))           \
                        continue;                                                                                      \
                    for (int i = 0; i < n; i++) {                                                                      \
                        VT bv = (VT)((0 * 3 + i) % 4);                                                                 \
                        int bl = size * 10 + i % 5;                                                                    \
                        for (int r = 1; r < size; r++) {                                                               \
                            VT v = (VT)((r * 3 + i) % 4);                                                              \
                            int l = (size - r) * 10 + i % 5;                                                           \
                            if ((ismax ? v > bv : v < bv) || (v == bv && l < bl)) {                                    \
                                bv = v;                                                                                \
                                bl = l;                                                                                \
                            }                                                                                          \
                        }                                                                                              \
                        if (out[i].v != bv || out[i].loc != bl)                                                        \
                            FAILF("%s %s count %d mode %d: element %d = (%g, %d), want "                               \
                                  "(%g, %d)",                                                                          \
                                  tname, ismax ? "MAXLOC" : "MINLOC", n, m, i, (double)out[i].v, out[i].loc,           \
                                  (double)bv, bl);                                                                     \
                    }                                                                                                  \
                }                                                                                                      \
                free(in);                                                                                              \
                free(out);                                                                                             \
            }                                                                                                          \
    }

DEFINE_LOC_TEST(double, double)
DEFINE_LOC_TEST(int, int)
DEFINE_LOC_TEST(float, float)
DEFINE_LOC_TEST(long, long)
DEFINE_LOC_TEST(short, short)

static void test_loc(void)
{
    loc_double(MPI_DOUBLE_INT, "MPI_DOUBLE_INT");
    loc_int(MPI_2INT, "MPI_2INT");
    loc_float(MPI_FLOAT_INT, "MPI_FLOAT_INT");
    loc_long(MPI_LONG_INT, "MPI_LONG_INT");
    loc_short(MPI_SHORT_INT, "MPI_SHORT_INT");
}

static void test_barrier(void)
{
    for (int i = 0; i < 20; i++)
        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    /* Rank 0 sends only after leaving the barrier; the others probe before
     * entering it, so they must never see the message early. */
    for (int it = 0; it < 50; it++) {
        if (rank == 0) {
            MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
            for (int r = 1; r < size; r++)
                MPI_CHECK(MPI_Send(&it, 1, MPI_INT, r, 100 + it, MPI_COMM_WORLD));
        } else {
            int flag = 1, v = -1;
            MPI_CHECK(MPI_Iprobe(0, 100 + it, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
            CHECK(!flag, "message sent after the barrier was visible before entering it");
            MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
            MPI_CHECK(MPI_Recv(&v, 1, MPI_INT, 0, 100 + it, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK(v == it, "barrier round %d got %d", it, v);
        }
    }
}

static void test_bcast(void)
{
    const int sizes[] = { 0, 1, 3, 100, 4096, 65537, 262144, 1048576 };
    char *buf = mtest_malloc(1048576);
    for (int s = 0; s < 8; s++) {
        for (int root = 0; root < size; root++) {
            int n = sizes[s];
            unsigned seed = (unsigned)(s * 16 + root);
            if (rank == root)
                mtest_fill(buf, (size_t)n, seed);
            else
                memset(buf, 0xA5, (size_t)n);
            MPI_CHECK(MPI_Bcast(buf, n, MPI_BYTE, root, MPI_COMM_WORLD));
            CHECK_PATTERN(buf, n, seed, "Bcast payload");
        }
    }
    /* typed broadcasts */
    for (int root = 0; root < size; root++) {
        int iv[1000];
        double dv[777];
        for (int i = 0; i < 1000; i++)
            iv[i] = rank == root ? i * (root + 1) : -1;
        for (int i = 0; i < 777; i++)
            dv[i] = rank == root ? i * 0.5 + root : -1.0;
        MPI_CHECK(MPI_Bcast(iv, 1000, MPI_INT, root, MPI_COMM_WORLD));
        MPI_CHECK(MPI_Bcast(dv, 777, MPI_DOUBLE, root, MPI_COMM_WORLD));
        for (int i = 0; i < 1000; i++)
            CHECK(iv[i] == i * (root + 1), "Bcast int root %d [%d] = %d", root, i, iv[i]);
        for (int i = 0; i < 777; i++)
            CHECK(dv[i] == i * 0.5 + root, "Bcast double root %d [%d] = %g", root, i, dv[i]);
    }
    /* back-to-back broadcasts from different roots without barriers */
    for (int i = 0; i < 100; i++) {
        int root = (i * 7) % size, v = rank == root ? i * 11 : -1;
        MPI_CHECK(MPI_Bcast(&v, 1, MPI_INT, root, MPI_COMM_WORLD));
        CHECK(v == i * 11, "Bcast burst %d got %d", i, v);
    }
    free(buf);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    test_barrier();
    test_bcast();
    test_reductions();
    test_loc();
    /* collectives on a dup do not interfere with those on the parent */
    {
        MPI_Comm d;
        int a = rank, b = 0, c = 0;
        MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
        MPI_CHECK(MPI_Allreduce(&a, &b, 1, MPI_INT, MPI_SUM, d));
        MPI_CHECK(MPI_Allreduce(&a, &c, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
        CHECK(b == size * (size - 1) / 2 && c == size - 1, "dup/parent Allreduce %d %d", b, c);
        MPI_CHECK(MPI_Comm_free(&d));
    }
    return mtest_finalize();
}
