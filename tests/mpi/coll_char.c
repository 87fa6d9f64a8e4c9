/* MPI_CHAR in the arithmetic, logical and bitwise reductions, as a signed 8-bit integer (an
 * extension MPICH and Open MPI share; docs/DESIGN.md, "Where the standard leaves room"): every
 * reducing collective (blocking here; MTEST_NBC runs the nonblocking and persistent forms),
 * MPI_Reduce_local, derived types of MPI_CHAR, and the accumulate functions (MPI_Accumulate,
 * MPI_Get_accumulate, MPI_Fetch_and_op) on allocated and created windows, with values that wrap
 * around and that tell a signed comparison from an unsigned one. MPI_MINLOC / MPI_MAXLOC (pair
 * types only) and MPI_REPLACE / MPI_NO_OP in collectives stay errors. Runs at any number of
 * ranks; the results are computed here, element by element. */
#include "mtest.h"
#include "nbc_wrap.h"

#define N 16

static int rank, size;

static signed char wrap(int v)
{
    return (signed char)(unsigned char)(v & 0xff);
}

/* rank r's element i: negative and positive values, some zeros (for the logical ops) */
static signed char contrib(int r, int i)
{
    if ((r + i) % 5 == 0)
        return 0;
    return wrap(37 * r + 29 * i - 90 + ((r + i) % 3 == 0 ? 120 : 0));
}

enum { OSUM, OPROD, OMIN, OMAX, OLAND, OLOR, OLXOR, OBAND, OBOR, OBXOR, NOPS };
static const char *const opname[NOPS] = { "MPI_SUM", "MPI_PROD", "MPI_MIN",  "MPI_MAX", "MPI_LAND",
                                          "MPI_LOR", "MPI_LXOR", "MPI_BAND", "MPI_BOR", "MPI_BXOR" };

static MPI_Op mpi_op(int o)
{
    const MPI_Op ops[NOPS] = { MPI_SUM, MPI_PROD, MPI_MIN,  MPI_MAX, MPI_LAND,
                               MPI_LOR, MPI_LXOR, MPI_BAND, MPI_BOR, MPI_BXOR };
    return ops[o];
}

/* a op b on signed 8-bit integers (wrapping) */
static signed char apply(int o, signed char a, signed char b)
{
    switch (o) {
    case OSUM: return wrap(a + b);
    case OPROD: return wrap(a * b);
    case OMIN: return a < b ? a : b;
    case OMAX: return a > b ? a : b;
    case OLAND: return (signed char)(a && b);
    case OLOR: return (signed char)(a || b);
    case OLXOR: return (signed char)(!a != !b);
    case OBAND: return (signed char)(a & b);
    case OBOR: return (signed char)(a | b);
    default: return (signed char)(a ^ b);
    }
}

/* The reduction of element i over ranks lo..hi-1. */
static signed char reduced(int o, int lo, int hi, int i)
{
    signed char acc = contrib(lo, i);
    for (int r = lo + 1; r < hi; r++)
        acc = apply(o, acc, contrib(r, i));
    return acc;
}

static void check_vec(const char *what, int o, const char *got, int first, int n, int lo, int hi)
{
    for (int i = 0; i < n; i++) {
        signed char want = reduced(o, lo, hi, first + i);
        CHECK((signed char)got[i] == want, "%s %s on MPI_CHAR: element %d is %d, expected %d", what, opname[o],
              first + i, (signed char)got[i], want);
    }
}

static void derived(int o, const char *in)
{
    MPI_Op op = mpi_op(o);
    char out[N];
    MPI_Datatype pair, strided;
    MPI_CHECK(MPI_Type_contiguous(2, MPI_CHAR, &pair));
    MPI_CHECK(MPI_Type_commit(&pair));
    memset(out, 0x55, sizeof out);
    MPI_CHECK(MPI_Allreduce(in, out, N / 2, pair, op, MPI_COMM_WORLD));
    check_vec("MPI_Allreduce (contiguous type)", o, out, 0, N, 0, size);
    MPI_CHECK(MPI_Type_free(&pair));
    MPI_CHECK(MPI_Type_vector(N, 1, 2, MPI_CHAR, &strided));
    MPI_CHECK(MPI_Type_commit(&strided));
    char sin[2 * N], sout[2 * N];
    for (int i = 0; i < N; i++) {
        sin[2 * i] = (char)contrib(rank, i);
        sin[2 * i + 1] = 7;
        sout[2 * i] = 0x55;
        sout[2 * i + 1] = 9;
    }
    MPI_CHECK(MPI_Allreduce(sin, sout, 1, strided, op, MPI_COMM_WORLD));
    for (int i = 0; i < N; i++) {
        CHECK((signed char)sout[2 * i] == reduced(o, 0, size, i), "MPI_Allreduce (vector type) %s: element %d is %d",
              opname[o], i, (signed char)sout[2 * i]);
        CHECK(sout[2 * i + 1] == 9, "MPI_Allreduce (vector type) %s wrote into a hole", opname[o]);
    }
    MPI_CHECK(MPI_Type_free(&strided));
}

static void collectives(int o)
{
    MPI_Op op = mpi_op(o);
    char in[N * 8], out[N * 8];
    for (int i = 0; i < N; i++)
        in[i] = (char)contrib(rank, i);

    memset(out, 0x55, sizeof out);
    MPI_CHECK(MPI_Allreduce(in, out, N, MPI_CHAR, op, MPI_COMM_WORLD));
    check_vec("MPI_Allreduce", o, out, 0, N, 0, size);

    int root = size - 1;
    memset(out, 0x55, sizeof out);
    MPI_CHECK(MPI_Reduce(in, out, N, MPI_CHAR, op, root, MPI_COMM_WORLD));
    if (rank == root)
        check_vec("MPI_Reduce", o, out, 0, N, 0, size);

    /* in place at the root */
    memcpy(out, in, N);
    MPI_CHECK(MPI_Reduce(rank == 0 ? MPI_IN_PLACE : in, rank == 0 ? out : NULL, N, MPI_CHAR, op, 0, MPI_COMM_WORLD));
    if (rank == 0)
        check_vec("MPI_Reduce (in place)", o, out, 0, N, 0, size);

    memset(out, 0x55, sizeof out);
    MPI_CHECK(MPI_Scan(in, out, N, MPI_CHAR, op, MPI_COMM_WORLD));
    check_vec("MPI_Scan", o, out, 0, N, 0, rank + 1);

    memset(out, 0x55, sizeof out);
    MPI_CHECK(MPI_Exscan(in, out, N, MPI_CHAR, op, MPI_COMM_WORLD));
    if (rank > 0)
        check_vec("MPI_Exscan", o, out, 0, N, 0, rank);

    /* Reduce_scatter_block: 2 elements each out of size * 2 */
    char big[2 * 64];
    for (int i = 0; i < 2 * size; i++)
        big[i] = (char)contrib(rank, i);
    memset(out, 0x55, sizeof out);
    MPI_CHECK(MPI_Reduce_scatter_block(big, out, 2, MPI_CHAR, op, MPI_COMM_WORLD));
    check_vec("MPI_Reduce_scatter_block", o, out, 2 * rank, 2, 0, size);

    /* Reduce_scatter: 1 or 2 elements each */
    int counts[64], first = 0, total = 0;
    for (int r = 0; r < size; r++) {
        counts[r] = 1 + r % 2;
        if (r < rank)
            first += counts[r];
        total += counts[r];
    }
    for (int i = 0; i < total; i++)
        big[i] = (char)contrib(rank, i);
    memset(out, 0x55, sizeof out);
    MPI_CHECK(MPI_Reduce_scatter(big, out, counts, MPI_CHAR, op, MPI_COMM_WORLD));
    check_vec("MPI_Reduce_scatter", o, out, first, counts[rank], 0, size);

    /* derived types of MPI_CHAR: contiguous pairs, and every other element (packed); MPICH 4.0
     * takes no predefined op on a derived type (MTEST_KNOWN_BUGS=predef_op_derived) */
    if (!mtest_known_bug("predef_op_derived"))
        derived(o, in);

    /* Reduce_local: inout = in op inout */
    char a[N], b[N];
    for (int i = 0; i < N; i++) {
        a[i] = (char)contrib(1, i);
        b[i] = (char)contrib(0, i);
    }
    MPI_CHECK(MPI_Reduce_local(a, b, N, MPI_CHAR, op));
    check_vec("MPI_Reduce_local", o, b, 0, N, 0, 2);
}

/* ---- accumulates ------------------------------------------------------------------------------ */

#define WN 8

static void accumulates(MPI_Win win, char *base, const char *kind)
{
    /* every rank accumulates into every target (atomic per element) holding a value of its own */
    const int ops[] = { OSUM, OPROD, OMIN, OMAX, OBXOR, OLOR, OBAND };
    MPI_CHECK(MPI_Win_fence(0, win));
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
        int o = ops[k];
        for (int i = 0; i < WN; i++)
            base[i] = (char)contrib(size + 3, i); /* the target's own value: like one more rank */
        MPI_CHECK(MPI_Win_fence(0, win));
        char v[WN];
        for (int i = 0; i < WN; i++)
            v[i] = (char)contrib(rank, i);
        for (int t = 0; t < size; t++)
            MPI_CHECK(MPI_Accumulate(v, WN, MPI_CHAR, t, 0, WN, MPI_CHAR, mpi_op(o), win));
        MPI_CHECK(MPI_Win_fence(0, win));
        for (int i = 0; i < WN; i++) {
            signed char want = apply(o, reduced(o, 0, size, i), contrib(size + 3, i));
            CHECK((signed char)base[i] == want,
                  "MPI_Accumulate %s on MPI_CHAR (%s window): element %d is %d, expected %d", opname[o], kind, i,
                  (signed char)base[i], want);
        }
    }
    MPI_CHECK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));

    /* Fetch_and_op and Get_accumulate from one origin per target (the previous rank), in order:
     * the values fetched tell wrap-around and signedness apart */
    MPI_CHECK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win));
    base[0] = 100;
    base[1] = -1;
    base[2] = 1;
    for (int i = 3; i < WN; i++)
        base[i] = (char)wrap(i * 40);
    MPI_CHECK(MPI_Win_unlock(rank, win));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    int t = (rank + 1) % size;
    MPI_CHECK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win));
    char x, old;
    struct {
        int disp, o;
        signed char operand, want_old;
    } steps[] = {
        { 0, OSUM, 100, 100 }, /* 100 + 100 wraps to -56 */
        { 0, OMAX, 5, -56 },   /* signed: 5 */
        { 0, OPROD, -30, 5 },  /* -150 wraps to 106 */
        { 0, OMIN, -2, 106 },  /* -2 */
        { 1, OMAX, 1, -1 },    /* signed: 1 (unsigned would keep 0xff) */
        { 1, OMIN, -128, 1 },  /* -128 */
        { 1, OSUM, -1, -128 }, /* wraps to 127 */
        { 2, OBXOR, -1, 1 },   /* ~1 = -2 */
        { 2, OLAND, 3, -2 },   /* 1 */
        { 2, OLXOR, 0, 1 },    /* 1 */
    };
    for (size_t k = 0; k < sizeof steps / sizeof steps[0]; k++) {
        x = (char)steps[k].operand;
        old = 0x55;
        MPI_CHECK(MPI_Fetch_and_op(&x, &old, MPI_CHAR, t, steps[k].disp, mpi_op(steps[k].o), win));
        MPI_CHECK(MPI_Win_flush(t, win));
        CHECK((signed char)old == steps[k].want_old,
              "MPI_Fetch_and_op step %zu (%s, %s window): fetched %d, expected %d", k, opname[steps[k].o], kind,
              (signed char)old, steps[k].want_old);
    }
    /* Get_accumulate of the last elements: SUM then fetch what it made */
    char add[WN], got[WN];
    for (int i = 3; i < WN; i++)
        add[i] = (char)(100 + i);
    MPI_CHECK(
        MPI_Get_accumulate(add + 3, WN - 3, MPI_CHAR, got + 3, WN - 3, MPI_CHAR, t, 3, WN - 3, MPI_CHAR, MPI_SUM, win));
    MPI_CHECK(MPI_Win_flush(t, win));
    for (int i = 3; i < WN; i++)
        CHECK((signed char)got[i] == wrap(i * 40), "MPI_Get_accumulate (%s window): fetched [%d] = %d", kind, i,
              (signed char)got[i]);
    MPI_CHECK(MPI_Get_accumulate(NULL, 0, MPI_CHAR, got + 3, WN - 3, MPI_CHAR, t, 3, WN - 3, MPI_CHAR, MPI_NO_OP, win));
    MPI_CHECK(MPI_Win_unlock(t, win));
    for (int i = 3; i < WN; i++)
        CHECK((signed char)got[i] == wrap(i * 40 + 100 + i),
              "MPI_Get_accumulate SUM on MPI_CHAR (%s window): [%d] = %d", kind, i, (signed char)got[i]);
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_CHECK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win));
    const signed char final[3] = { -2, 127, 1 };
    for (int i = 0; i < 3; i++)
        CHECK((signed char)base[i] == final[i], "after the fetch-and-ops (%s window): [%d] = %d, expected %d", kind, i,
              (signed char)base[i], final[i]);
    MPI_CHECK(MPI_Win_unlock(rank, win));

    /* still errors: MINLOC / MAXLOC need pair types */
    MPI_CHECK(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win));
    x = 1;
    CHECK_ERRCLASS(MPI_Accumulate(&x, 1, MPI_CHAR, t, 0, 1, MPI_CHAR, MPI_MAXLOC, win), MPI_ERR_OP,
                   "MPI_Accumulate MPI_MAXLOC on MPI_CHAR");
    CHECK_ERRCLASS(MPI_Fetch_and_op(&x, &old, MPI_CHAR, t, 0, MPI_MINLOC, win), MPI_ERR_OP,
                   "MPI_Fetch_and_op MPI_MINLOC on MPI_CHAR");
    MPI_CHECK(MPI_Win_unlock(t, win));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char **argv)
{
    mtest_init_errors_return(&argc, &argv, &rank, &size);
    if (size > 64)
        FAILF("at most 64 ranks");

    for (int o = 0; o < NOPS; o++)
        collectives(o);

    /* signed on every platform, whatever C's char is */
    char m = rank == 0 ? (char)-1 : (char)1, r = 0;
    MPI_CHECK(MPI_Allreduce(&m, &r, 1, MPI_CHAR, MPI_MAX, MPI_COMM_WORLD));
    CHECK((signed char)r == (size > 1 ? 1 : -1), "MPI_MAX of -1 and 1 on MPI_CHAR gave %d", (signed char)r);

    /* what stays an error */
    char a[2] = { 1, 2 }, b[2];
    CHECK_ERRCLASS(MPI_Allreduce(a, b, 1, MPI_CHAR, MPI_MAXLOC, MPI_COMM_WORLD), MPI_ERR_OP, "MPI_MAXLOC on MPI_CHAR");
    CHECK_ERRCLASS(MPI_Allreduce(a, b, 1, MPI_CHAR, MPI_REPLACE, MPI_COMM_WORLD), MPI_ERR_OP,
                   "MPI_REPLACE in MPI_Allreduce");
    CHECK_ERRCLASS(MPI_Reduce_local(a, b, 1, MPI_CHAR, MPI_MINLOC), MPI_ERR_OP, "MPI_MINLOC on MPI_CHAR (local)");

    /* one-sided: an allocated window (load/store on the node) and a created one (Cross Memory
     * Attach on the node); across nodes both by active messages. (MPICH 4.0 applies the 1-byte
     * accumulates of ranks with different targets at one target: MTEST_KNOWN_BUGS=rma_acc_byte_target) */
    if (mtest_known_bug("rma_acc_byte_target"))
        return mtest_finalize();
    char *base;
    MPI_Win win;
    MPI_CHECK(MPI_Win_allocate(WN, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    MPI_CHECK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    accumulates(win, base, "allocated");
    MPI_CHECK(MPI_Win_free(&win));
    char *mem = malloc(WN);
    MPI_CHECK(MPI_Win_create(mem, WN, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_CHECK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    accumulates(win, mem, "created");
    MPI_CHECK(MPI_Win_free(&win));
    free(mem);
    return mtest_finalize();
}
