/* The reduction kernels over whole vectors (MPI_Reduce_local, which accumulates and reductions
 * share): every arithmetic, logical and bitwise op on the 4- and 8-byte integer types, float and
 * double, for every length from 0 to 70 and a few long ones, from every start offset 0..3
 * elements (vector loops, their remainders and unaligned starts), against the same expression
 * computed one element at a time here; the elements around the range must stay untouched. The
 * floating-point values include -0.0, infinities and NaNs (MIN/MAX take the C expression
 * `a < b ? a : b`: with a NaN, the inout element). One rank is enough; every rank runs it. */
#include "mtest.h"

#include <math.h>

enum { OSUM, OPROD, OMIN, OMAX, OLAND, OLOR, OLXOR, OBAND, OBOR, OBXOR, NOPS };
static const char *const opname[NOPS] = { "SUM", "PROD", "MIN", "MAX", "LAND", "LOR", "LXOR", "BAND", "BOR", "BXOR" };
static MPI_Op ophandle(int o)
{
    const MPI_Op h[NOPS] = { MPI_SUM, MPI_PROD, MPI_MIN,  MPI_MAX, MPI_LAND,
                             MPI_LOR, MPI_LXOR, MPI_BAND, MPI_BOR, MPI_BXOR };
    return h[o];
}

enum { MAXN = 1100, GUARD = 4 };

/* The reference, one element at a time (noinline: the compiler keeps it apart from the checks). */
#define REF_INT(NAME, T, W)                                                                                            \
    static __attribute__((noinline)) T NAME(int o, T a, T b)                                                           \
    {                                                                                                                  \
        switch (o) {                                                                                                   \
        case OSUM: return (T)((W)a + (W)b);                                                                            \
        case OPROD: return (T)((W)a * (W)b);                                                                           \
        case OMIN: return a < b ? a : b;                                                                               \
        case OMAX: return a > b ? a : b;                                                                               \
        case OLAND: return (T)(a && b);                                                                                \
        case OLOR: return (T)(a || b);                                                                                 \
        case OLXOR: return (T)(!a != !b);                                                                              \
        case OBAND: return (T)(a & b);                                                                                 \
        case OBOR: return (T)(a | b);                                                                                  \
        default: return (T)(a ^ b);                                                                                    \
        }                                                                                                              \
    }
#define REF_FLOAT(NAME, T)                                                                                             \
    static __attribute__((noinline)) T NAME(int o, T a, T b)                                                           \
    {                                                                                                                  \
        switch (o) {                                                                                                   \
        case OSUM: return a + b;                                                                                       \
        case OPROD: return a * b;                                                                                      \
        case OMIN: return a < b ? a : b;                                                                               \
        default: return a > b ? a : b;                                                                                 \
        }                                                                                                              \
    }
REF_INT(ref_i32, int32_t, uint32_t)
REF_INT(ref_u32, uint32_t, uint32_t)
REF_INT(ref_i64, int64_t, uint64_t)
REF_INT(ref_u64, uint64_t, uint64_t)
REF_FLOAT(ref_f32, float)
REF_FLOAT(ref_f64, double)

/* Bitwise equality (NaNs compare equal to themselves here). */
#define SAME(T, x, y) (memcmp(&(x), &(y), sizeof(T)) == 0)

#define RUN(T, MPIT, REF, NOPS_OF, FILL)                                                                               \
    do {                                                                                                               \
        static T in[MAXN + 2 * GUARD], io[MAXN + 2 * GUARD], want[MAXN + 2 * GUARD];                                   \
        for (int o = 0; o < NOPS_OF; o++)                                                                              \
            for (int ni = 0; ni < (int)(sizeof lens / sizeof lens[0]); ni++)                                           \
                for (int start = 0; start < 4; start++) {                                                              \
                    int n = lens[ni];                                                                                  \
                    for (int i = 0; i < MAXN + 2 * GUARD; i++) {                                                       \
                        FILL;                                                                                          \
                        want[i] = io[i];                                                                               \
                    }                                                                                                  \
                    for (int i = 0; i < n; i++)                                                                        \
                        want[GUARD + start + i] = REF(o, in[GUARD + start + i], io[GUARD + start + i]);                \
                    MPI_CHECK(MPI_Reduce_local(in + GUARD + start, io + GUARD + start, n, MPIT, ophandle(o)));         \
                    for (int i = 0; i < MAXN + 2 * GUARD; i++)                                                         \
                        CHECK(SAME(T, io[i], want[i]), "%s on %s, %d elements from %d: element %d is %g, want %g",     \
                              opname[o], #MPIT, n, start, i - GUARD - start, (double)io[i], (double)want[i]);          \
                    checks++;                                                                                          \
                }                                                                                                      \
    } while (0)

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int lens[75], nl = 0;
    for (int n = 0; n <= 70; n++)
        lens[nl++] = n;
    lens[nl++] = 255;
    lens[nl++] = 256;
    lens[nl++] = 1023;
    lens[nl++] = 1024 + 3;
    long checks = 0;
    /* integers: values with high bits, signs and zeros (for the logical ops) */
    RUN(int32_t, MPI_INT32_T, ref_i32, NOPS,
        (in[i] = (int32_t)(i % 5 ? (uint32_t)i * 2654435761u : 0),
         io[i] = (int32_t)(i % 7 ? (uint32_t)(i + 17) * 40503u : 0)));
    RUN(uint32_t, MPI_UINT32_T, ref_u32, NOPS,
        (in[i] = i % 5 ? (uint32_t)i * 2654435761u : 0, io[i] = i % 7 ? (uint32_t)(i + 17) * 40503u : 0));
    RUN(int64_t, MPI_INT64_T, ref_i64, NOPS,
        (in[i] = (int64_t)(i % 5 ? (uint64_t)i * 0x9e3779b97f4a7c15ull : 0),
         io[i] = (int64_t)(i % 7 ? (uint64_t)(i + 3) * 0xbf58476d1ce4e5b9ull : 0)));
    RUN(uint64_t, MPI_UINT64_T, ref_u64, NOPS,
        (in[i] = i % 5 ? (uint64_t)i * 0x9e3779b97f4a7c15ull : 0,
         io[i] = i % 7 ? (uint64_t)(i + 3) * 0xbf58476d1ce4e5b9ull : 0));
    /* floating point: ordinary values, -0.0 against 0.0, infinities, NaNs on either side */
    static const double special[] = { 0.0, -0.0, 1.5, -2.25, INFINITY, -INFINITY, NAN, 1e300, -1e-300, 3.0 };
    RUN(float, MPI_FLOAT, ref_f32, 4, (in[i] = (float)special[(i * 3) % 10], io[i] = (float)special[(i * 7 + 1) % 10]));
    RUN(double, MPI_DOUBLE, ref_f64, 4, (in[i] = special[(i * 3) % 10], io[i] = special[(i * 7 + 1) % 10]));
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0)
        printf("op_vector: %ld vectors checked\n", checks);
    return mtest_finalize();
}
