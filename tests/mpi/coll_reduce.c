/* Reduction collectives: Reduce (every root), Allreduce, Reduce_scatter, Reduce_scatter_block,
 * Scan, Exscan and their _c forms, plain and MPI_IN_PLACE, with
 *  - every predefined op on a type of each class it is defined for (C integers of several
 *    widths, floating point, complex, C _Bool, MPI_BYTE), against a serial reference;
 *  - MINLOC / MAXLOC on MPI_2INT and the padded MPI_DOUBLE_INT with ties (lowest index wins);
 *  - a non-commutative user op (2x2 matrix product) whose result must follow rank order, and a
 *    commutative user op on a datatype with holes (the holes must survive);
 *  - predefined ops on derived datatypes (contiguous, and a vector with holes): an extension, as
 *    the standard promises predefined ops on predefined types only (MPICH refuses them, so
 *    MTEST_KNOWN_BUGS=predef_op_derived skips these cases for a reference run);
 *  - counts from 0 to past the large-message switch points (Rabenseifner, recursive halving).
 *
 * Checked against MPICH 4.0.2 with MTEST_KNOWN_BUGS=predef_op_derived,reduce_scatter_in_place,
 * rsb_noncommutative_derived: its in-place MPI_Reduce_scatter with unequal counts trips an
 * internal assertion (overlapping memcpy) at 70000 ints, and its MPI_Reduce_scatter_block with a
 * non-commutative op on a datatype with holes returns wrong data.
 *
 * Usage: coll_reduce [quick]   (quick: skip the largest counts). Any number of ranks. */
#include "mtest.h"
#include "nbc_wrap.h"

#include <complex.h>
#include <stdbool.h>

static int rank, size, quick;

enum { OSUM, OPROD, OMIN, OMAX, OLAND, OLOR, OLXOR, OBAND, OBOR, OBXOR, NOPS };
static const char *opname[NOPS] = { "SUM", "PROD", "MIN", "MAX", "LAND", "LOR", "LXOR", "BAND", "BOR", "BXOR" };
static MPI_Op mpi_op(int o)
{
    const MPI_Op ops[NOPS] = { MPI_SUM, MPI_PROD, MPI_MIN,  MPI_MAX, MPI_LAND,
                               MPI_LOR, MPI_LXOR, MPI_BAND, MPI_BOR, MPI_BXOR };
    return ops[o];
}
#define ARITH ((1 << OSUM) | (1 << OPROD) | (1 << OMIN) | (1 << OMAX))
#define LOGIC ((1 << OLAND) | (1 << OLOR) | (1 << OLXOR))
#define BITS  ((1 << OBAND) | (1 << OBOR) | (1 << OBXOR))

/* the reduction collectives */
enum { C_REDUCE, C_ALLREDUCE, C_RSB, C_RS, C_SCAN, C_EXSCAN, NCOLL };
static const char *collname[NCOLL] = {
    "Reduce", "Allreduce", "Reduce_scatter_block", "Reduce_scatter", "Scan", "Exscan"
};

/* Reduce_scatter counts: rank i gets n + (i % 3) - 1 elements (at least 0) */
static int rs_count(int n, int i)
{
    int k = n + (i % 3) - 1;
    return k < 0 ? 0 : k;
}

/* Input of rank r, element i, for op o: small values so that every result is exact. */
static long long gen(int o, int r, int i)
{
    switch (o) {
    case OSUM: return (r * 5 + i * 3) % 7 - 3;
    case OPROD: return ((r + 2 * i) % 3 == 0) ? 2 : (((r + i) % 2) ? -1 : 1);
    case OMIN:
    case OMAX: return (r * 7 + i * 13) % 11 - 5;
    case OLAND:
    case OLOR:
    case OLXOR: return ((i % 7) == 0) ? 0 : ((((i * 37 + 1) >> (r % 8)) & 1) || (i % 5 == 0));
    default: return (long long)(((unsigned)r * 0x9E3779B1u ^ (unsigned)i * 0x85EBCA77u) >> 9 & 0x7f);
    }
}

static long long combine(int o, long long a, long long b)
{
    switch (o) {
    case OSUM: return a + b;
    case OPROD: return a * b;
    case OMIN: return a < b ? a : b;
    case OMAX: return a > b ? a : b;
    case OLAND: return (a != 0) && (b != 0);
    case OLOR: return (a != 0) || (b != 0);
    case OLXOR: return (a != 0) != (b != 0);
    case OBAND: return a & b;
    case OBOR: return a | b;
    default: return a ^ b;
    }
}

/* reduction over ranks lo..hi-1 of element i */
static long long ref(int o, int lo, int hi, int i)
{
    long long acc = gen(o, lo, i);
    for (int r = lo + 1; r < hi; r++)
        acc = combine(o, acc, gen(o, r, i));
    return acc;
}

/* Runs collective `coll` with n elements (per rank block for the scatter forms) of T. Elements
 * are held as long long in the reference. */
#define DEFINE_RUN(T, NAME, UNS)                                                                                       \
    static T conv_##NAME(long long v)                                                                                  \
    {                                                                                                                  \
        return (T)(UNS ? (v < 0 ? -v : v) : v);                                                                        \
    }                                                                                                                  \
    static void run_##NAME(MPI_Datatype dt, const char *tname, int o, int coll, int n, int in_place, int root,         \
                           int large)                                                                                  \
    {                                                                                                                  \
        int len = n, mylen = n, off = 0;                                                                               \
        int *rc_arr = mtest_malloc(sizeof(int) * (size_t)size);                                                        \
        if (coll == C_RSB) {                                                                                           \
            len = n * size;                                                                                            \
            off = n * rank;                                                                                            \
        } else if (coll == C_RS) {                                                                                     \
            len = 0;                                                                                                   \
            for (int i = 0; i < size; i++) {                                                                           \
                rc_arr[i] = rs_count(n, i);                                                                            \
                if (i < rank)                                                                                          \
                    off += rc_arr[i];                                                                                  \
                len += rc_arr[i];                                                                                      \
            }                                                                                                          \
            mylen = rc_arr[rank];                                                                                      \
        }                                                                                                              \
        if (coll == C_RS && in_place && large && mtest_known_bug("reduce_scatter_in_place")) {                         \
            free(rc_arr);                                                                                              \
            return;                                                                                                    \
        }                                                                                                              \
        T *in = mtest_malloc(sizeof(T) * (size_t)(len + 1)), *out = mtest_malloc(sizeof(T) * (size_t)(len + 1));       \
        for (int i = 0; i < len; i++)                                                                                  \
            in[i] = conv_##NAME(gen(o, rank, i));                                                                      \
        for (int i = 0; i <= len; i++)                                                                                 \
            out[i] = (T)99;                                                                                            \
        if (in_place)                                                                                                  \
            memcpy(out, in, sizeof(T) * (size_t)len);                                                                  \
        const void *sb = in_place ? MPI_IN_PLACE : in;                                                                 \
        MPI_Op op = mpi_op(o);                                                                                         \
        switch (coll) {                                                                                                \
        case C_REDUCE:                                                                                                 \
            if (in_place && rank != root)                                                                              \
                sb = in;                                                                                               \
            if (large)                                                                                                 \
                MPI_CHECK(MPI_Reduce_c(sb, out, n, dt, op, root, MPI_COMM_WORLD));                                     \
            else                                                                                                       \
                MPI_CHECK(MPI_Reduce(sb, out, n, dt, op, root, MPI_COMM_WORLD));                                       \
            break;                                                                                                     \
        case C_ALLREDUCE:                                                                                              \
            if (large)                                                                                                 \
                MPI_CHECK(MPI_Allreduce_c(sb, out, n, dt, op, MPI_COMM_WORLD));                                        \
            else                                                                                                       \
                MPI_CHECK(MPI_Allreduce(sb, out, n, dt, op, MPI_COMM_WORLD));                                          \
            break;                                                                                                     \
        case C_RSB:                                                                                                    \
            if (large)                                                                                                 \
                MPI_CHECK(MPI_Reduce_scatter_block_c(sb, out, n, dt, op, MPI_COMM_WORLD));                             \
            else                                                                                                       \
                MPI_CHECK(MPI_Reduce_scatter_block(sb, out, n, dt, op, MPI_COMM_WORLD));                               \
            break;                                                                                                     \
        case C_RS:                                                                                                     \
            if (large) {                                                                                               \
                MPI_Count *cc = mtest_malloc(sizeof(MPI_Count) * (size_t)size);                                        \
                for (int i = 0; i < size; i++)                                                                         \
                    cc[i] = rc_arr[i];                                                                                 \
                MPI_CHECK(MPI_Reduce_scatter_c(sb, out, cc, dt, op, MPI_COMM_WORLD));                                  \
                free(cc);                                                                                              \
            } else {                                                                                                   \
                MPI_CHECK(MPI_Reduce_scatter(sb, out, rc_arr, dt, op, MPI_COMM_WORLD));                                \
            }                                                                                                          \
            break;                                                                                                     \
        case C_SCAN:                                                                                                   \
            if (large)                                                                                                 \
                MPI_CHECK(MPI_Scan_c(sb, out, n, dt, op, MPI_COMM_WORLD));                                             \
            else                                                                                                       \
                MPI_CHECK(MPI_Scan(sb, out, n, dt, op, MPI_COMM_WORLD));                                               \
            break;                                                                                                     \
        default:                                                                                                       \
            if (large)                                                                                                 \
                MPI_CHECK(MPI_Exscan_c(sb, out, n, dt, op, MPI_COMM_WORLD));                                           \
            else                                                                                                       \
                MPI_CHECK(MPI_Exscan(sb, out, n, dt, op, MPI_COMM_WORLD));                                             \
            break;                                                                                                     \
        }                                                                                                              \
        int check = !(coll == C_REDUCE && rank != root) && !(coll == C_EXSCAN && rank == 0);                           \
        int lo = 0, hi = size;                                                                                         \
        if (coll == C_SCAN)                                                                                            \
            hi = rank + 1;                                                                                             \
        if (coll == C_EXSCAN)                                                                                          \
            hi = rank;                                                                                                 \
        for (int i = 0; check && i < mylen; i++) {                                                                     \
            T want = conv_##NAME(ref(o, lo, hi, off + i));                                                             \
            if (out[i] != want)                                                                                        \
                FAILF("%s%s %s on %s, count %d, root %d: element %d is %lld, expected %lld", collname[coll],           \
                      in_place ? " (in place)" : "", opname[o], tname, n, root, i, (long long)out[i],                  \
                      (long long)want);                                                                                \
        }                                                                                                              \
        /* nothing written past the result (in place: past the input) */                                               \
        if (!in_place && check)                                                                                        \
            CHECK(out[mylen] == (T)99, "%s %s on %s wrote past its result", collname[coll], opname[o], tname);         \
        if (!check && !in_place)                                                                                       \
            for (int i = 0; i <= len; i++)                                                                             \
                CHECK(out[i] == (T)99, "%s: receive buffer of rank %d modified", collname[coll], rank);                \
        for (int i = 0; i < len; i++)                                                                                  \
            CHECK(in_place || in[i] == conv_##NAME(gen(o, rank, i)), "%s modified its send buffer", collname[coll]);   \
        free(in);                                                                                                      \
        free(out);                                                                                                     \
        free(rc_arr);                                                                                                  \
    }

/* unsigned types take |v|: the reference still holds for SUM / MIN / MAX / logic / bits (the
 * values are made non-negative before combining) */
DEFINE_RUN(int, int, 0)
DEFINE_RUN(signed char, schar, 0)
DEFINE_RUN(long long, llong, 0)
DEFINE_RUN(double, double, 0)
DEFINE_RUN(float, float, 0)
DEFINE_RUN(bool, cbool, 1)
DEFINE_RUN(unsigned char, byte, 1)

/* Complex: SUM and PROD against the reference on real part; imaginary part 0 * anything. */
static void run_complex(int coll, int n, int in_place)
{
    double _Complex *in = mtest_malloc(sizeof(double _Complex) * (size_t)(n * size + 1));
    double _Complex *out = mtest_malloc(sizeof(double _Complex) * (size_t)(n * size + 1));
    int len = coll == C_RSB ? n * size : n;
    for (int o = OSUM; o <= OPROD; o++) {
        for (int i = 0; i < len; i++) /* (a + b i) with b such that products stay exact */
            in[i] = (double)gen(o, rank, i) + (double)((rank + i) % 2) * I;
        if (in_place)
            memcpy(out, in, sizeof(double _Complex) * (size_t)len);
        const void *sb = in_place ? MPI_IN_PLACE : in;
        if (coll == C_RSB)
            MPI_CHECK(MPI_Reduce_scatter_block(sb, out, n, MPI_C_DOUBLE_COMPLEX, mpi_op(o), MPI_COMM_WORLD));
        else if (coll == C_SCAN)
            MPI_CHECK(MPI_Scan(sb, out, n, MPI_C_DOUBLE_COMPLEX, mpi_op(o), MPI_COMM_WORLD));
        else
            MPI_CHECK(MPI_Allreduce(sb, out, n, MPI_C_DOUBLE_COMPLEX, mpi_op(o), MPI_COMM_WORLD));
        int hi = coll == C_SCAN ? rank + 1 : size, off = coll == C_RSB ? n * rank : 0;
        for (int i = 0; i < n; i++) {
            double _Complex want = (double)gen(o, 0, off + i) + (double)((0 + off + i) % 2) * I;
            for (int r = 1; r < hi; r++) {
                double _Complex v = (double)gen(o, r, off + i) + (double)((r + off + i) % 2) * I;
                want = o == OSUM ? want + v : want * v;
            }
            CHECK(creal(out[i]) == creal(want) && cimag(out[i]) == cimag(want),
                  "%s %s on MPI_C_DOUBLE_COMPLEX element %d: (%g,%g), expected (%g,%g)", collname[coll], opname[o], i,
                  creal(out[i]), cimag(out[i]), creal(want), cimag(want));
        }
    }
    free(in);
    free(out);
}

static void test_predefined(const int *counts, int ncounts)
{
    int variant = 0;
    for (int coll = 0; coll < NCOLL; coll++) {
        for (int ci = 0; ci < ncounts; ci++) {
            int n = counts[ci], large = ci == ncounts - 1;
            for (int o = 0; o < NOPS; o++) {
                int bit = 1 << o, ip = (variant++) % 2;
                int root = (variant / 2) % size;
                if (bit & (ARITH | LOGIC | BITS))
                    run_int(MPI_INT, "MPI_INT", o, coll, n, ip, root, large);
                if (large && coll != C_ALLREDUCE)
                    continue; /* the largest count: MPI_INT everywhere, more types for Allreduce */
                if (bit & (ARITH | LOGIC | BITS))
                    run_schar(MPI_SIGNED_CHAR, "MPI_SIGNED_CHAR", o, coll, n, !ip, root, 0);
                if (bit & (ARITH | LOGIC | BITS))
                    run_llong(MPI_LONG_LONG, "MPI_LONG_LONG", o, coll, n, ip, root, 0);
                if (bit & ARITH) {
                    run_double(MPI_DOUBLE, "MPI_DOUBLE", o, coll, n, !ip, root, 0);
                    run_float(MPI_FLOAT, "MPI_FLOAT", o, coll, n, ip, root, 0);
                }
                if (bit & LOGIC)
                    run_cbool(MPI_C_BOOL, "MPI_C_BOOL", o, coll, n, !ip, root, 0);
                if (bit & BITS)
                    run_byte(MPI_BYTE, "MPI_BYTE", o, coll, n, ip, root, 0);
            }
        }
    }
    for (int ci = 0; ci < ncounts - 1; ci++)
        for (int ip = 0; ip < 2; ip++) {
            run_complex(C_ALLREDUCE, counts[ci], ip);
            run_complex(C_RSB, counts[ci], ip);
            run_complex(C_SCAN, counts[ci], ip);
        }
    /* every root for Reduce */
    for (int root = 0; root < size; root++)
        for (int ci = 0; ci < ncounts; ci++) {
            run_int(MPI_INT, "MPI_INT", OSUM, C_REDUCE, counts[ci], root % 2, root, 0);
            run_double(MPI_DOUBLE, "MPI_DOUBLE", OMAX, C_REDUCE, counts[ci], !(root % 2), root, 0);
        }
}

/* ---- MINLOC / MAXLOC with ties ---- */
struct di {
    double v;
    int k;
};
struct ii {
    int v, k;
};

static void test_loc(int n)
{
    struct ii *a = mtest_malloc(sizeof(struct ii) * (size_t)(n * size + 1)),
              *b = mtest_malloc(sizeof(struct ii) * (size_t)(n * size + 1));
    struct di *c = mtest_malloc(sizeof(struct di) * (size_t)(n * size + 1)),
              *d = mtest_malloc(sizeof(struct di) * (size_t)(n * size + 1));
    for (int ismax = 0; ismax < 2; ismax++) {
        MPI_Op op = ismax ? MPI_MAXLOC : MPI_MINLOC;
        for (int coll = C_ALLREDUCE; coll <= C_SCAN; coll++) {
            int len = coll == C_RSB ? n * size : n, off = coll == C_RSB ? n * rank : 0;
            if (coll == C_RS)
                continue;
            for (int i = 0; i < len; i++) {
                /* values with many ties across ranks; index decreasing with the rank so that
                 * the lowest index is not simply the first rank */
                a[i].v = (i * 7 + rank) % 3;
                a[i].k = 100 - rank * 3 + i % 2;
                c[i].v = 0.5 * ((i + rank * 5) % 4);
                c[i].k = 1000 - rank;
            }
            if (coll == C_ALLREDUCE) {
                MPI_CHECK(MPI_Allreduce(a, b, n, MPI_2INT, op, MPI_COMM_WORLD));
                MPI_CHECK(MPI_Allreduce(c, d, n, MPI_DOUBLE_INT, op, MPI_COMM_WORLD));
            } else if (coll == C_RSB) {
                MPI_CHECK(MPI_Reduce_scatter_block(a, b, n, MPI_2INT, op, MPI_COMM_WORLD));
                MPI_CHECK(MPI_Reduce_scatter_block(c, d, n, MPI_DOUBLE_INT, op, MPI_COMM_WORLD));
            } else {
                MPI_CHECK(MPI_Scan(a, b, n, MPI_2INT, op, MPI_COMM_WORLD));
                MPI_CHECK(MPI_Scan(c, d, n, MPI_DOUBLE_INT, op, MPI_COMM_WORLD));
            }
            int hi = coll == C_SCAN ? rank + 1 : size;
            for (int i = 0; i < n; i++) {
                int gi = off + i;
                struct ii w = { (gi * 7) % 3, 100 + gi % 2 };
                struct di x = { 0.5 * (gi % 4), 1000 };
                for (int r = 1; r < hi; r++) {
                    struct ii v = { (gi * 7 + r) % 3, 100 - r * 3 + gi % 2 };
                    struct di y = { 0.5 * ((gi + r * 5) % 4), 1000 - r };
                    if (ismax ? v.v > w.v : v.v < w.v)
                        w = v;
                    else if (v.v == w.v && v.k < w.k)
                        w.k = v.k;
                    if (ismax ? y.v > x.v : y.v < x.v)
                        x = y;
                    else if (y.v == x.v && y.k < x.k)
                        x.k = y.k;
                }
                CHECK(b[i].v == w.v && b[i].k == w.k, "%s %s on MPI_2INT element %d: (%d,%d), expected (%d,%d)",
                      collname[coll], ismax ? "MAXLOC" : "MINLOC", i, b[i].v, b[i].k, w.v, w.k);
                CHECK(d[i].v == x.v && d[i].k == x.k, "%s %s on MPI_DOUBLE_INT element %d: (%g,%d), expected (%g,%d)",
                      collname[coll], ismax ? "MAXLOC" : "MINLOC", i, d[i].v, d[i].k, x.v, x.k);
            }
        }
    }
    free(a);
    free(b);
    free(c);
    free(d);
}

/* ---- user ops ---- */

/* 2x2 matrices of unsigned ints (mod 2^32), an element of the contiguous type mat_t */
typedef struct {
    unsigned m[4];
} mat;

static void matmul(const mat *x, const mat *y, mat *z)
{
    mat t;
    t.m[0] = x->m[0] * y->m[0] + x->m[1] * y->m[2];
    t.m[1] = x->m[0] * y->m[1] + x->m[1] * y->m[3];
    t.m[2] = x->m[2] * y->m[0] + x->m[3] * y->m[2];
    t.m[3] = x->m[2] * y->m[1] + x->m[3] * y->m[3];
    *z = t;
}

static MPI_Datatype mat_t;
static int matop_calls;

static void matop(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    if (*dt != mat_t)
        FAILF("user op called with the wrong datatype");
    mat *a = in, *b = inout;
    for (int i = 0; i < *len; i++)
        matmul(&a[i], &b[i], &b[i]); /* inout = in (lower ranks) x inout */
    matop_calls++;
}

static void matop_c(void *in, void *inout, MPI_Count *len, MPI_Datatype *dt)
{
    int l = (int)*len;
    matop(in, inout, &l, dt);
}

static mat mgen(int r, int i)
{
    mat x = { { (unsigned)(r + 1), (unsigned)(i % 5 + 1), (unsigned)((r * i) % 3), (unsigned)(r + i % 2) } };
    return x;
}

static void test_noncommutative(MPI_Op op, int n, int coll, int in_place)
{
    int len = coll == C_RSB ? n * size : n, off = coll == C_RSB ? n * rank : 0;
    mat *a = mtest_malloc(sizeof(mat) * (size_t)(len + 1)), *b = mtest_malloc(sizeof(mat) * (size_t)(len + 1));
    for (int i = 0; i < len; i++)
        a[i] = mgen(rank, i);
    if (in_place)
        memcpy(b, a, sizeof(mat) * (size_t)len);
    const void *sb = in_place ? MPI_IN_PLACE : a;
    int root = size - 1, hi = size, lo = 0;
    switch (coll) {
    case C_REDUCE:
        MPI_CHECK(MPI_Reduce(in_place && rank != root ? a : sb, b, n, mat_t, op, root, MPI_COMM_WORLD));
        break;
    case C_ALLREDUCE: MPI_CHECK(MPI_Allreduce(sb, b, n, mat_t, op, MPI_COMM_WORLD)); break;
    case C_RSB: MPI_CHECK(MPI_Reduce_scatter_block(sb, b, n, mat_t, op, MPI_COMM_WORLD)); break;
    case C_SCAN:
        MPI_CHECK(MPI_Scan(sb, b, n, mat_t, op, MPI_COMM_WORLD));
        hi = rank + 1;
        break;
    default:
        MPI_CHECK(MPI_Exscan(sb, b, n, mat_t, op, MPI_COMM_WORLD));
        hi = rank;
        break;
    }
    if ((coll == C_REDUCE && rank != root) || (coll == C_EXSCAN && rank == 0))
        hi = lo; /* nothing to check */
    int differs = 0;
    for (int i = 0; hi > lo && i < n; i++) {
        mat w = mgen(lo, off + i), rev = w;
        for (int r = lo + 1; r < hi; r++) {
            mat v = mgen(r, off + i);
            matmul(&w, &v, &w);
            matmul(&v, &rev, &rev);
        }
        differs |= memcmp(&w, &rev, sizeof w) != 0;
        CHECK(
            memcmp(&b[i], &w, sizeof w) == 0,
            "%s%s with a non-commutative op, count %d, element %d: [%u %u %u %u], expected [%u %u %u %u] (rank order)",
            collname[coll], in_place ? " (in place)" : "", n, i, b[i].m[0], b[i].m[1], b[i].m[2], b[i].m[3], w.m[0],
            w.m[1], w.m[2], w.m[3]);
    }
    /* the check is meaningful: the operands do not commute (with 2+ operands) */
    if (hi - lo >= 2 && n >= 3)
        CHECK(differs, "test data commute; the rank-order check would prove nothing");
    free(a);
    free(b);
}

/* Commutative user op on the vector-with-holes type: elements are 2 ints at 0 and 2 of every 4;
 * the op adds them. */
static MPI_Datatype hole_t;
static void holeop(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    int *a = in, *b = inout;
    for (int i = 0; i < *len; i++) {
        b[4 * i] += a[4 * i];
        b[4 * i + 2] += a[4 * i + 2];
    }
}

static void test_holes(MPI_Op op, MPI_Datatype dt, int n, int coll, int in_place, const char *what)
{
    int len = coll == C_RSB ? n * size : n, off = coll == C_RSB ? n * rank : 0;
    int *a = mtest_malloc(sizeof(int) * (size_t)(4 * len + 1)), *b = mtest_malloc(sizeof(int) * (size_t)(4 * len + 1));
    for (int i = 0; i < 4 * len + 1; i++) {
        a[i] = (i % 4 == 0 || i % 4 == 2) ? rank * 3 + i : -1;
        b[i] = in_place ? a[i] : -2;
    }
    const void *sb = in_place ? MPI_IN_PLACE : a;
    int hi = size;
    if (coll == C_ALLREDUCE)
        MPI_CHECK(MPI_Allreduce(sb, b, n, dt, op, MPI_COMM_WORLD));
    else if (coll == C_RSB)
        MPI_CHECK(MPI_Reduce_scatter_block(sb, b, n, dt, op, MPI_COMM_WORLD));
    else {
        MPI_CHECK(MPI_Scan(sb, b, n, dt, op, MPI_COMM_WORLD));
        hi = rank + 1;
    }
    int is_max = op == MPI_MAX;
    for (int i = 0; i < 4 * n + 1; i++) {
        int gi = i + 4 * off, want;
        if (i < 4 * n && (i % 4 == 0 || i % 4 == 2)) {
            want = is_max ? (hi - 1) * 3 + gi : 0;
            if (!is_max)
                for (int r = 0; r < hi; r++)
                    want += r * 3 + gi;
        } else {
            want = in_place ? a[i] : -2; /* holes and what follows the result: untouched */
        }
        if (in_place && coll == C_RSB && i >= 4 * n)
            continue; /* the rest of the in-place input vector is undefined after the call */
        CHECK(b[i] == want, "%s %s, count %d: int %d is %d, expected %d", collname[coll], what, n, i, b[i], want);
    }
    free(a);
    free(b);
}

/* Commutative user op on a type whose elements interleave (ints 2k and 2k + 3 form element k:
 * extent 2 ints, true extent 4): the library must not cut the vector into byte ranges. */
static MPI_Datatype ilv_t;
static void ilvop(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    int *a = in, *b = inout;
    for (int i = 0; i < *len; i++) {
        b[2 * i] += a[2 * i];
        b[2 * i + 3] += a[2 * i + 3];
    }
}

/* whether int j belongs to one of the first n elements */
static int ilv_data(int j, int n)
{
    return (j % 2 == 0 && j / 2 < n) || (j % 2 == 1 && j >= 3 && (j - 3) / 2 < n);
}

static void test_interleaved(MPI_Op op, int n)
{
    int m = 2 * n + 2; /* ints spanned by n elements, plus one */
    int *a = mtest_malloc(sizeof(int) * (size_t)(m * size)), *b = mtest_malloc(sizeof(int) * (size_t)(m * size));
    for (int coll = C_REDUCE; coll <= C_RSB; coll++) {
        int len = coll == C_RSB ? n * size : n, span = 2 * len + 2;
        for (int j = 0; j < span; j++) {
            a[j] = ilv_data(j, len) ? rank * 10 + j : -1;
            b[j] = -2;
        }
        if (coll == C_REDUCE)
            MPI_CHECK(MPI_Reduce(a, b, n, ilv_t, op, 0, MPI_COMM_WORLD));
        else if (coll == C_ALLREDUCE)
            MPI_CHECK(MPI_Allreduce(a, b, n, ilv_t, op, MPI_COMM_WORLD));
        else
            MPI_CHECK(MPI_Reduce_scatter_block(a, b, n, ilv_t, op, MPI_COMM_WORLD));
        if (coll == C_REDUCE && rank != 0)
            continue;
        int off = coll == C_RSB ? 2 * n * rank : 0; /* my block's first int in the input */
        for (int j = 0; j < 2 * n + 2; j++) {
            int want = -2;
            if (ilv_data(j, n))
                want = size * (size - 1) * 5 + size * (j + off);
            CHECK(b[j] == want, "%s of interleaved elements, count %d: int %d is %d, expected %d", collname[coll], n, j,
                  b[j], want);
        }
    }
    free(a);
    free(b);
}

/* predefined op on a contiguous derived type */
static void test_contig_type(int n)
{
    MPI_Datatype t3;
    MPI_CHECK(MPI_Type_contiguous(3, MPI_INT, &t3));
    MPI_CHECK(MPI_Type_commit(&t3));
    int *a = mtest_malloc(sizeof(int) * (size_t)(3 * n * size + 1)),
        *b = mtest_malloc(sizeof(int) * (size_t)(3 * n * size + 1));
    for (int i = 0; i < 3 * n * size; i++)
        a[i] = rank + i;
    MPI_CHECK(MPI_Allreduce(a, b, n, t3, MPI_SUM, MPI_COMM_WORLD));
    for (int i = 0; i < 3 * n; i++)
        CHECK(b[i] == size * (size - 1) / 2 + size * i, "Allreduce SUM on contiguous(3, MPI_INT): int %d is %d", i,
              b[i]);
    MPI_CHECK(MPI_Reduce_scatter_block(a, b, n, t3, MPI_MAX, MPI_COMM_WORLD));
    for (int i = 0; i < 3 * n; i++)
        CHECK(b[i] == size - 1 + 3 * n * rank + i, "Reduce_scatter_block MAX on contiguous(3, MPI_INT): int %d is %d",
              i, b[i]);
    MPI_CHECK(MPI_Type_free(&t3));
    free(a);
    free(b);
}

static void test_reduce_local(void)
{
    int a[5] = { 1, 2, 3, 4, 5 }, b[5] = { 10, 20, 30, 40, 50 };
    MPI_CHECK(MPI_Reduce_local(a, b, 5, MPI_INT, MPI_SUM));
    for (int i = 0; i < 5; i++)
        CHECK(b[i] == 11 * (i + 1), "Reduce_local SUM [%d] = %d", i, b[i]);
    MPI_CHECK(MPI_Reduce_local_c(a, b, 5, MPI_INT, MPI_MAX));
    for (int i = 0; i < 5; i++)
        CHECK(b[i] == 11 * (i + 1), "Reduce_local_c MAX [%d] = %d", i, b[i]);
    /* user op: b = a x b */
    MPI_Op op;
    MPI_CHECK(MPI_Op_create(matop, 0, &op));
    mat x = mgen(1, 2), y = mgen(2, 3), z;
    matmul(&x, &y, &z);
    MPI_CHECK(MPI_Reduce_local(&x, &y, 1, mat_t, op));
    CHECK(memcmp(&y, &z, sizeof z) == 0, "Reduce_local with a user op: wrong operand order");
    int commute = -1;
    MPI_CHECK(MPI_Op_commutative(op, &commute));
    CHECK(commute == 0, "MPI_Op_commutative of a non-commutative op gave %d", commute);
    MPI_CHECK(MPI_Op_commutative(MPI_SUM, &commute));
    CHECK(commute == 1, "MPI_Op_commutative(MPI_SUM) gave %d", commute);
    MPI_CHECK(MPI_Op_free(&op));
    CHECK(op == MPI_OP_NULL, "MPI_Op_free did not reset the handle");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    quick = argc > 1 && strcmp(argv[1], "quick") == 0;

    MPI_CHECK(MPI_Type_contiguous(4, MPI_UNSIGNED, &mat_t));
    MPI_CHECK(MPI_Type_commit(&mat_t));
    MPI_Datatype v;
    MPI_CHECK(MPI_Type_vector(2, 1, 2, MPI_INT, &v));
    MPI_CHECK(MPI_Type_create_resized(v, 0, 4 * (MPI_Aint)sizeof(int), &hole_t));
    MPI_CHECK(MPI_Type_commit(&hole_t));
    MPI_CHECK(MPI_Type_free(&v));
    const int ilv_disp[2] = { 0, 3 };
    MPI_CHECK(MPI_Type_create_indexed_block(2, 1, ilv_disp, MPI_INT, &v));
    MPI_CHECK(MPI_Type_create_resized(v, 0, 2 * (MPI_Aint)sizeof(int), &ilv_t));
    MPI_CHECK(MPI_Type_commit(&ilv_t));
    MPI_CHECK(MPI_Type_free(&v));

    /* 0, 1, odd, about the number of ranks, medium, and past every large-message limit */
    const int counts[] = { 0, 1, 3, 5, 1001, quick ? 3000 : 70001 };
    test_predefined(counts, 6);
    test_loc(1);
    test_loc(7);
    test_loc(quick ? 500 : 5000);

    MPI_Op mop, mop_c, hop, hop_nc;
    MPI_CHECK(MPI_Op_create(matop, 0, &mop));
    MPI_CHECK(MPI_Op_create_c(matop_c, 0, &mop_c));
    MPI_CHECK(MPI_Op_create(holeop, 1, &hop));
    MPI_CHECK(MPI_Op_create(holeop, 0, &hop_nc));
    const int mcounts[] = { 1, 3, 17, quick ? 2000 : 20000 };
    for (int ci = 0; ci < 4; ci++)
        for (int coll = 0; coll < NCOLL; coll++) {
            if (coll == C_RS)
                continue;
            test_noncommutative(ci % 2 ? mop_c : mop, mcounts[ci], coll, 0);
            test_noncommutative(mop, mcounts[ci], coll, 1);
        }
    CHECK(matop_calls > 0 || size == 1, "the user op was never called");
    const int hcounts[] = { 1, 6, quick ? 1000 : 20000 };
    for (int ci = 0; ci < 3; ci++)
        for (int coll = C_ALLREDUCE; coll <= C_SCAN; coll++) {
            if (coll == C_RS)
                continue;
            for (int ip = 0; ip < 2; ip++) {
                test_holes(hop, hole_t, hcounts[ci], coll, ip, "commutative user op on vector type");
                if (coll != C_RSB || !mtest_known_bug("rsb_noncommutative_derived"))
                    test_holes(hop_nc, hole_t, hcounts[ci], coll, ip, "non-commutative user op on vector type");
                if (mtest_known_bug("predef_op_derived"))
                    continue;
                test_holes(MPI_SUM, hole_t, hcounts[ci], coll, ip, "MPI_SUM on vector type");
                test_holes(MPI_MAX, hole_t, hcounts[ci], coll, ip, "MPI_MAX on vector type");
            }
        }
    if (!mtest_known_bug("predef_op_derived")) {
        test_contig_type(7);
        test_contig_type(quick ? 1000 : 12000);
    }
    {
        MPI_Op iop;
        MPI_CHECK(MPI_Op_create(ilvop, 1, &iop));
        test_interleaved(iop, 1);
        test_interleaved(iop, 7);
        test_interleaved(iop, quick ? 3000 : 40000);
        MPI_CHECK(MPI_Op_free(&iop));
    }
    test_reduce_local();
    MPI_CHECK(MPI_Op_free(&mop));
    MPI_CHECK(MPI_Op_free(&mop_c));
    MPI_CHECK(MPI_Op_free(&hop));
    MPI_CHECK(MPI_Op_free(&hop_nc));
    MPI_CHECK(MPI_Type_free(&mat_t));
    MPI_CHECK(MPI_Type_free(&hole_t));
    MPI_CHECK(MPI_Type_free(&ilv_t));
    return mtest_finalize();
}
