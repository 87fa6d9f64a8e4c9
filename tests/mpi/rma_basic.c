/* RMA communication calls (MPI 4.1 chapter 12.3): MPI_Put, MPI_Get, MPI_Accumulate (MPI_SUM, MPI_MAX,
 * MPI_REPLACE, MPI_BAND on int, MPI_SUM on double, MPI_MAXLOC on MPI_2INT), MPI_Get_accumulate (with
 * MPI_NO_OP as an atomic read and MPI_REPLACE as a swap), MPI_Fetch_and_op, MPI_Compare_and_swap, the
 * request-based MPI_Rput/Rget/Raccumulate/Rget_accumulate, derived datatypes on either side, windows
 * whose displacement unit differs from rank to rank, and the large-count (_c) forms. Every result is
 * compared with what a serial model of the whole job computes locally; each target is written by its
 * left neighbour only, or by every rank with operations whose result does not depend on their order.
 * Neighbours are taken modulo the size, so that any size works (at 1 rank a process is its own
 * neighbour). */
#include "rma_common.h"

/* --- Put and Get under fences, MPI_Win_create ------------------------------------------------------------ */
static void test_put_get(void)
{
    enum { N = 100, OFF = 10, CNT = 40 };
    int *buf = mtest_malloc(N * sizeof(int)), src[CNT], got[CNT];
    for (int i = 0; i < N; i++)
        buf[i] = -1;
    for (int i = 0; i < CNT; i++) {
        src[i] = val(rank, i);
        got[i] = -2;
    }
    MPI_Win win;
    MPI_CHECK(MPI_Win_create(buf, N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_CHECK(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
    MPI_CHECK(MPI_Put(src, CNT, MPI_INT, right, OFF, CNT, MPI_INT, win));
    /* zero-count transfers and MPI_PROC_NULL targets are no-ops */
    MPI_CHECK(MPI_Put(src, 0, MPI_INT, right, 0, 0, MPI_INT, win));
    MPI_CHECK(MPI_Put(src, CNT, MPI_INT, MPI_PROC_NULL, 0, CNT, MPI_INT, win));
    MPI_CHECK(MPI_Get(got, CNT, MPI_INT, MPI_PROC_NULL, 0, CNT, MPI_INT, win));
    MPI_CHECK(MPI_Win_fence(0, win));
    for (int i = 0; i < N; i++) {
        int want = i >= OFF && i < OFF + CNT ? val(left, i - OFF) : -1;
        CHECK(buf[i] == want, "Put: [%d] = %d, want %d", i, buf[i], want);
    }
    CHECK(got[0] == -2, "Get from MPI_PROC_NULL wrote the origin buffer");
    /* what this rank put at its right neighbour comes back */
    MPI_CHECK(MPI_Get(got, CNT, MPI_INT, right, OFF, CNT, MPI_INT, win));
    MPI_CHECK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    for (int i = 0; i < CNT; i++)
        CHECK(got[i] == src[i], "Get: [%d] = %d, want %d", i, got[i], src[i]);
    MPI_CHECK(MPI_Win_free(&win));
    free(buf);
}

/* --- Accumulate from every rank to every rank, one fence epoch -------------------------------------------- */
enum { S = 16 };
typedef struct {
    int v, loc;
} int2;
struct acc_area {
    int sum[S], max[S], repl[S], band[S];
    int2 maxloc[S];
    double dsum[S];
};

static void acc_init(struct acc_area *a, int t)
{
    for (int i = 0; i < S; i++) {
        a->sum[i] = t * 10 + i;
        a->max[i] = -20 + i;
        a->repl[i] = -7;
        a->band[i] = -1;
        a->maxloc[i].v = 1;
        a->maxloc[i].loc = 500 + t;
        a->dsum[i] = 0.5 * i;
    }
}

/* The contribution of origin o to target t. */
static void acc_contrib(struct acc_area *c, int o, int t)
{
    for (int i = 0; i < S; i++) {
        c->sum[i] = (o + 1) * (i + 1) + t;
        c->max[i] = (o * 37 + i * 11 + t * 5) % 41 - 20;
        c->repl[i] = o * 100 + t * 10 + i;
        c->band[i] = ~(1 << ((o + i + t) % 31));
        c->maxloc[i].v = i % 2 == 0 ? 2 : (o + i + t) % 3; /* ties: the lowest loc wins */
        c->maxloc[i].loc = o * 100 + i;
        c->dsum[i] = 0.25 * (o + 1) + i;
    }
}

static void test_accumulate(void)
{
    struct acc_area *a, want, c;
    MPI_Win win;
    MPI_CHECK(MPI_Win_allocate(sizeof *a, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &a, &win));
    acc_init(a, rank);
    MPI_CHECK(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
    struct acc_area *mine = mtest_malloc(sizeof(struct acc_area) * (size_t)size);
    for (int t = 0; t < size; t++) {
        acc_contrib(&mine[t], rank, t); /* origin buffers stay untouched until the fence */
        struct acc_area *m = &mine[t];
        MPI_CHECK(MPI_Accumulate(m->sum, S, MPI_INT, t, offsetof(struct acc_area, sum), S, MPI_INT, MPI_SUM, win));
        MPI_CHECK(MPI_Accumulate(m->max, S, MPI_INT, t, offsetof(struct acc_area, max), S, MPI_INT, MPI_MAX, win));
        MPI_CHECK(
            MPI_Accumulate(m->repl, S, MPI_INT, t, offsetof(struct acc_area, repl), S, MPI_INT, MPI_REPLACE, win));
        MPI_CHECK(MPI_Accumulate(m->band, S, MPI_INT, t, offsetof(struct acc_area, band), S, MPI_INT, MPI_BAND, win));
        MPI_CHECK(
            MPI_Accumulate(m->maxloc, S, MPI_2INT, t, offsetof(struct acc_area, maxloc), S, MPI_2INT, MPI_MAXLOC, win));
        MPI_CHECK(
            MPI_Accumulate(m->dsum, S, MPI_DOUBLE, t, offsetof(struct acc_area, dsum), S, MPI_DOUBLE, MPI_SUM, win));
    }
    MPI_CHECK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));

    /* the serial model: every origin's contribution applied in turn */
    acc_init(&want, rank);
    for (int o = 0; o < size; o++) {
        acc_contrib(&c, o, rank);
        for (int i = 0; i < S; i++) {
            want.sum[i] += c.sum[i];
            want.max[i] = c.max[i] > want.max[i] ? c.max[i] : want.max[i];
            want.band[i] &= c.band[i];
            if (c.maxloc[i].v > want.maxloc[i].v ||
                (c.maxloc[i].v == want.maxloc[i].v && c.maxloc[i].loc < want.maxloc[i].loc))
                want.maxloc[i] = c.maxloc[i];
            want.dsum[i] += c.dsum[i];
        }
    }
    for (int i = 0; i < S; i++) {
        CHECK(a->sum[i] == want.sum[i], "MPI_SUM: [%d] = %d, want %d", i, a->sum[i], want.sum[i]);
        CHECK(a->max[i] == want.max[i], "MPI_MAX: [%d] = %d, want %d", i, a->max[i], want.max[i]);
        CHECK(a->band[i] == want.band[i], "MPI_BAND: [%d] = %#x, want %#x", i, (unsigned)a->band[i],
              (unsigned)want.band[i]);
        CHECK(a->maxloc[i].v == want.maxloc[i].v && a->maxloc[i].loc == want.maxloc[i].loc,
              "MPI_MAXLOC: [%d] = (%d, %d), want (%d, %d)", i, a->maxloc[i].v, a->maxloc[i].loc, want.maxloc[i].v,
              want.maxloc[i].loc);
        CHECK(a->dsum[i] == want.dsum[i], "MPI_SUM on double: [%d] = %g, want %g", i, a->dsum[i], want.dsum[i]);
        /* MPI_REPLACE from every rank: whole elements of one of them, in any order */
        int found = 0;
        for (int o = 0; o < size && !found; o++) {
            acc_contrib(&c, o, rank);
            found = a->repl[i] == c.repl[i];
        }
        CHECK(found, "MPI_REPLACE: [%d] = %d is nobody's value", i, a->repl[i]);
    }
    free(mine);
    MPI_CHECK(MPI_Win_free(&win));
}

/* --- fetching atomics, one origin per target ------------------------------------------------------------ */
struct fetch_area {
    int i[16];
    long long ll[4];
    double d[4];
};

static void fetch_init(struct fetch_area *f, int t)
{
    for (int k = 0; k < 16; k++)
        f->i[k] = t * 100 + k;
    for (int k = 0; k < 4; k++) {
        f->ll[k] = ((long long)t << 40) + k;
        f->d[k] = t + 0.5 * k;
    }
}

#define IOFF(k)  ((MPI_Aint)(offsetof(struct fetch_area, i) + (k) * sizeof(int)))
#define LLOFF(k) ((MPI_Aint)(offsetof(struct fetch_area, ll) + (k) * sizeof(long long)))
#define DOFF(k)  ((MPI_Aint)(offsetof(struct fetch_area, d) + (k) * sizeof(double)))

static void test_fetch_ops(void)
{
    struct fetch_area *f, init, want, now;
    MPI_Win win;
    MPI_CHECK(MPI_Win_allocate(sizeof *f, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &f, &win));
    local_begin(win);
    fetch_init(f, rank);
    local_end(win);
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));

    fetch_init(&init, right);
    want = init;
    int t = right, r[16], dummy = 0;
    long long rl[2];
    double rd[3];
    for (int k = 0; k < 16; k++)
        r[k] = -99999;
    MPI_CHECK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win));
    int five = 5, rep = 77, three = 3, newv = 1234, other = 999, swapv = 4242, one = 1;
    int cmp_hit = init.i[5], cmp_miss = init.i[6] + 1;
    int maxv[3] = { init.i[7] - 1, init.i[8] + 50, init.i[9] };
    MPI_CHECK(MPI_Get_accumulate(&five, 1, MPI_INT, &r[0], 1, MPI_INT, t, IOFF(0), 1, MPI_INT, MPI_SUM, win));
    want.i[0] += 5;
    MPI_CHECK(MPI_Get_accumulate(&dummy, 1, MPI_INT, &r[1], 1, MPI_INT, t, IOFF(1), 1, MPI_INT, MPI_NO_OP, win));
    MPI_CHECK(MPI_Get_accumulate(&rep, 1, MPI_INT, &r[2], 1, MPI_INT, t, IOFF(2), 1, MPI_INT, MPI_REPLACE, win));
    want.i[2] = 77;
    MPI_CHECK(MPI_Fetch_and_op(&three, &r[3], MPI_INT, t, IOFF(3), MPI_SUM, win));
    want.i[3] += 3;
    MPI_CHECK(MPI_Fetch_and_op(NULL, &r[4], MPI_INT, t, IOFF(4), MPI_NO_OP, win));
    MPI_CHECK(MPI_Compare_and_swap(&newv, &cmp_hit, &r[5], MPI_INT, t, IOFF(5), win));
    want.i[5] = newv;
    MPI_CHECK(MPI_Compare_and_swap(&other, &cmp_miss, &r[6], MPI_INT, t, IOFF(6), win));
    MPI_CHECK(MPI_Get_accumulate(maxv, 3, MPI_INT, &r[7], 3, MPI_INT, t, IOFF(7), 3, MPI_INT, MPI_MAX, win));
    for (int k = 0; k < 3; k++)
        want.i[7 + k] = maxv[k] > init.i[7 + k] ? maxv[k] : init.i[7 + k];
    /* three fetch-and-adds to one location from one origin: ordered (accumulate_ordering is rar,raw,war,waw
     * by default) */
    int seq[3];
    for (int k = 0; k < 3; k++)
        MPI_CHECK(MPI_Fetch_and_op(&one, &seq[k], MPI_INT, t, IOFF(10), MPI_SUM, win));
    want.i[10] += 3;
    MPI_CHECK(MPI_Fetch_and_op(&swapv, &r[11], MPI_INT, t, IOFF(11), MPI_REPLACE, win));
    want.i[11] = swapv;
    long long big = 1LL << 35, llcmp = init.ll[1], llnew = -5;
    MPI_CHECK(MPI_Fetch_and_op(&big, &rl[0], MPI_LONG_LONG, t, LLOFF(0), MPI_SUM, win));
    want.ll[0] += big;
    MPI_CHECK(MPI_Compare_and_swap(&llnew, &llcmp, &rl[1], MPI_LONG_LONG, t, LLOFF(1), win));
    want.ll[1] = llnew;
    double quarter = 0.25, dadd[2] = { 1.5, -2.0 };
    MPI_CHECK(MPI_Fetch_and_op(&quarter, &rd[0], MPI_DOUBLE, t, DOFF(0), MPI_SUM, win));
    want.d[0] += quarter;
    MPI_CHECK(MPI_Get_accumulate(dadd, 2, MPI_DOUBLE, &rd[1], 2, MPI_DOUBLE, t, DOFF(1), 2, MPI_DOUBLE, MPI_SUM, win));
    want.d[1] += dadd[0];
    want.d[2] += dadd[1];
    MPI_CHECK(MPI_Win_unlock(t, win));

    /* every fetch returned the value before its own operation */
    for (int k = 0; k < 12; k++)
        if (k != 10)
            CHECK(r[k] == init.i[k], "fetching op on int %d returned %d, want %d", k, r[k], init.i[k]);
    for (int k = 0; k < 3; k++)
        CHECK(seq[k] == init.i[10] + k, "fetch-and-add %d of 3 to one location returned %d, want %d", k, seq[k],
              init.i[10] + k);
    CHECK(rl[0] == init.ll[0] && rl[1] == init.ll[1], "long long fetches returned %lld %lld, want %lld %lld", rl[0],
          rl[1], init.ll[0], init.ll[1]);
    CHECK(rd[0] == init.d[0] && rd[1] == init.d[1] && rd[2] == init.d[2], "double fetches returned %g %g %g", rd[0],
          rd[1], rd[2]);

    /* and the target holds what the model says: read it back whole (as bytes) */
    MPI_CHECK(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win));
    MPI_CHECK(MPI_Get(&now, sizeof now, MPI_BYTE, t, 0, sizeof now, MPI_BYTE, win));
    MPI_CHECK(MPI_Win_unlock(t, win));
    for (int k = 0; k < 16; k++)
        CHECK(now.i[k] == want.i[k], "after the fetching ops: int %d = %d, want %d", k, now.i[k], want.i[k]);
    for (int k = 0; k < 4; k++) {
        CHECK(now.ll[k] == want.ll[k], "after the fetching ops: long long %d = %lld, want %lld", k, now.ll[k],
              want.ll[k]);
        CHECK(now.d[k] == want.d[k], "after the fetching ops: double %d = %g, want %g", k, now.d[k], want.d[k]);
    }
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_CHECK(MPI_Win_free(&win));
}

/* --- request-based operations inside a lock epoch -------------------------------------------------------- */
static void test_request_ops(void)
{
    enum { N = 64 };
    int *w;
    MPI_Win win;
    MPI_CHECK(MPI_Win_allocate(N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &w, &win));
    local_begin(win);
    for (int i = 0; i < N; i++)
        w[i] = -1;
    local_end(win);
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));

    int src[16], got[16], ones[16], res[16], ten[8], res8[8], got8[8];
    MPI_Request rq[2];
    for (int i = 0; i < 16; i++) {
        src[i] = val(rank, i);
        ones[i] = 1;
    }
    for (int i = 0; i < 8; i++)
        ten[i] = 10;
    MPI_CHECK(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
    MPI_CHECK(MPI_Rput(src, 16, MPI_INT, right, 0, 16, MPI_INT, win, &rq[0]));
    MPI_CHECK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
    CHECK(rq[0] == MPI_REQUEST_NULL, "MPI_Wait left the Rput request");
    /* local completion: the origin buffer may be reused at once */
    for (int i = 0; i < 16; i++)
        src[i] = -99;
    MPI_CHECK(MPI_Win_flush(right, win));
    MPI_CHECK(MPI_Rget(got, 16, MPI_INT, right, 0, 16, MPI_INT, win, &rq[0]));
    MPI_CHECK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
    for (int i = 0; i < 16; i++)
        CHECK(got[i] == val(rank, i), "Rget after Rput: [%d] = %d, want %d", i, got[i], val(rank, i));

    MPI_CHECK(MPI_Raccumulate(ones, 16, MPI_INT, right, 16, 16, MPI_INT, MPI_SUM, win, &rq[0]));
    MPI_CHECK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
    MPI_CHECK(MPI_Raccumulate(ones, 16, MPI_INT, right, 16, 16, MPI_INT, MPI_SUM, win, &rq[0]));
    int done = 0;
    while (!done)
        MPI_CHECK(MPI_Test(&rq[0], &done, MPI_STATUS_IGNORE));
    MPI_CHECK(MPI_Win_flush(right, win));
    MPI_CHECK(MPI_Rget_accumulate(NULL, 0, MPI_INT, res, 16, MPI_INT, right, 16, 16, MPI_INT, MPI_NO_OP, win, &rq[0]));
    MPI_CHECK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
    for (int i = 0; i < 16; i++)
        CHECK(res[i] == 1, "Rget_accumulate(MPI_NO_OP) after two Raccumulate of 1 to -1: [%d] = %d", i, res[i]);

    MPI_CHECK(MPI_Rget_accumulate(ten, 8, MPI_INT, res8, 8, MPI_INT, right, 32, 8, MPI_INT, MPI_SUM, win, &rq[0]));
    MPI_CHECK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
    for (int i = 0; i < 8; i++)
        CHECK(res8[i] == -1, "Rget_accumulate(MPI_SUM) fetched [%d] = %d, want -1", i, res8[i]);
    MPI_CHECK(MPI_Win_flush(right, win));
    MPI_CHECK(MPI_Rget(got8, 8, MPI_INT, right, 32, 8, MPI_INT, win, &rq[0]));
    MPI_CHECK(MPI_Rget(got, 16, MPI_INT, right, 16, 16, MPI_INT, win, &rq[1]));
    MPI_Status st[2];
    MPI_CHECK(MPI_Waitall(2, rq, st));
    for (int i = 0; i < 8; i++)
        CHECK(got8[i] == 9, "Rget after Rget_accumulate(MPI_SUM): [%d] = %d, want 9", i, got8[i]);
    for (int i = 0; i < 16; i++)
        CHECK(got[i] == 1, "Rget after Raccumulate: [%d] = %d, want 1", i, got[i]);
    MPI_CHECK(MPI_Win_unlock(right, win));

    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    local_begin(win);
    for (int i = 0; i < N; i++) {
        int want = i < 16 ? val(left, i) : i < 32 ? 1 : i < 40 ? 9 : -1;
        CHECK(w[i] == want, "after the request-based ops: [%d] = %d, want %d", i, w[i], want);
    }
    local_end(win);
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_CHECK(MPI_Win_free(&win));
}

/* --- derived datatypes ------------------------------------------------------------------------------------ */
/* index in the origin array of element m of the vector type (8 blocks of 2, stride 3) */
static int vidx(int m)
{
    return (m / 2) * 3 + m % 2;
}

static const int ib_len[3] = { 1, 3, 2 }, ib_disp[3] = { 0, 4, 9 };  /* 6 ints, extent 11 */
static const int ia_len[3] = { 4, 4, 8 }, ia_disp[3] = { 0, 6, 12 }; /* 16 ints, extent 20 */

/* offsets (in ints) of the elements of count copies of an indexed type */
static int idx_offsets(const int *len, const int *disp, int nblk, int count, int *out)
{
    int n = 0, extent = disp[nblk - 1] + len[nblk - 1];
    for (int c = 0; c < count; c++)
        for (int b = 0; b < nblk; b++)
            for (int j = 0; j < len[b]; j++)
                out[n++] = c * extent + disp[b] + j;
    return n;
}

static void test_datatypes(void)
{
    enum { N = 64, PUT_IDX = 20, ACC_IDX = 44 };
    int *tgt = mtest_malloc(N * sizeof(int)), o[24], c12[12], want[N], off[16];
    for (int i = 0; i < N; i++)
        tgt[i] = -1;
    for (int i = 0; i < 24; i++)
        o[i] = val(rank, i);
    for (int j = 0; j < 12; j++)
        c12[j] = val(rank, 100 + j);
    MPI_Win win;
    MPI_CHECK(MPI_Win_create(tgt, N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));

    MPI_Datatype vec, ib, ia, c4;
    MPI_CHECK(MPI_Type_vector(8, 2, 3, MPI_INT, &vec));
    MPI_CHECK(MPI_Type_indexed(3, ib_len, ib_disp, MPI_INT, &ib));
    MPI_CHECK(MPI_Type_indexed(3, ia_len, ia_disp, MPI_INT, &ia));
    MPI_CHECK(MPI_Type_contiguous(4, MPI_INT, &c4));
    MPI_CHECK(MPI_Type_commit(&vec));
    MPI_CHECK(MPI_Type_commit(&ib));
    MPI_CHECK(MPI_Type_commit(&ia));
    MPI_CHECK(MPI_Type_commit(&c4));

    MPI_CHECK(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
    /* a vector at the origin into 16 contiguous ints */
    MPI_CHECK(MPI_Put(o, 1, vec, right, 0, 16, MPI_INT, win));
    /* 12 contiguous ints into two copies of an indexed type */
    MPI_CHECK(MPI_Put(c12, 12, MPI_INT, right, PUT_IDX, 2, ib, win));
    /* a vector accumulated into an indexed type (both made of MPI_INT) */
    MPI_CHECK(MPI_Accumulate(o, 1, vec, right, ACC_IDX, 1, ia, MPI_SUM, win));
    /* the types may be freed while the operations using them are pending */
    MPI_CHECK(MPI_Type_free(&ia));
    MPI_CHECK(MPI_Win_fence(0, win));

    for (int i = 0; i < N; i++)
        want[i] = -1;
    for (int m = 0; m < 16; m++)
        want[m] = val(left, vidx(m));
    int n = idx_offsets(ib_len, ib_disp, 3, 2, off);
    for (int j = 0; j < n; j++)
        want[PUT_IDX + off[j]] = val(left, 100 + j);
    n = idx_offsets(ia_len, ia_disp, 3, 1, off);
    for (int m = 0; m < n; m++)
        want[ACC_IDX + off[m]] += val(left, vidx(m));
    for (int i = 0; i < N; i++)
        CHECK(tgt[i] == want[i], "derived datatypes: [%d] = %d, want %d", i, tgt[i], want[i]);

    /* back again: 16 contiguous ints into a vector at the origin, two indexed types into 12 ints, and
     * 8 ints as 2 x contiguous(4) */
    int g[24], h[12], k[8];
    for (int i = 0; i < 24; i++)
        g[i] = -5;
    MPI_CHECK(MPI_Get(g, 1, vec, right, 0, 16, MPI_INT, win));
    MPI_CHECK(MPI_Get(h, 12, MPI_INT, right, PUT_IDX, 2, ib, win));
    MPI_CHECK(MPI_Get(k, 2, c4, right, 0, 8, MPI_INT, win));
    MPI_CHECK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    for (int i = 0; i < 24; i++) {
        int in_vec = i % 3 != 2 && i < 23;
        CHECK(g[i] == (in_vec ? o[i] : -5), "Get into a vector: [%d] = %d, want %d", i, g[i], in_vec ? o[i] : -5);
    }
    for (int j = 0; j < 12; j++)
        CHECK(h[j] == c12[j], "Get from an indexed type: [%d] = %d, want %d", j, h[j], c12[j]);
    for (int j = 0; j < 8; j++)
        CHECK(k[j] == o[vidx(j)], "Get into contiguous(4) x 2: [%d] = %d, want %d", j, k[j], o[vidx(j)]);
    MPI_CHECK(MPI_Type_free(&vec));
    MPI_CHECK(MPI_Type_free(&ib));
    MPI_CHECK(MPI_Type_free(&c4));
    MPI_CHECK(MPI_Win_free(&win));
    free(tgt);
}

/* --- a displacement unit that differs from rank to rank -------------------------------------------------- */
static int du_ints(int r)
{
    return 1 + r % 3;
}

static void test_disp_unit(void)
{
    enum { N = 64 };
    int *buf = mtest_malloc(N * sizeof(int));
    for (int i = 0; i < N; i++)
        buf[i] = -1;
    MPI_Win win;
    int du = du_ints(rank) * (int)sizeof(int);
    MPI_CHECK(MPI_Win_create(buf, N * sizeof(int), du, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    int *p, flag;
    MPI_CHECK(MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &p, &flag));
    CHECK(flag && *p == du, "MPI_WIN_DISP_UNIT %d, want %d", flag ? *p : -1, du);

    /* target displacements are scaled by the target's unit, not the origin's */
    int v = val(rank, 7), one = 1, g = 0;
    MPI_CHECK(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
    MPI_CHECK(MPI_Put(&v, 1, MPI_INT, right, 5, 1, MPI_INT, win));
    MPI_CHECK(MPI_Accumulate(&one, 1, MPI_INT, right, 3, 1, MPI_INT, MPI_SUM, win));
    MPI_CHECK(MPI_Win_fence(0, win));
    MPI_CHECK(MPI_Get(&g, 1, MPI_INT, right, 5, 1, MPI_INT, win));
    MPI_CHECK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    CHECK(g == v, "Get from disp 5 of rank %d: %d, want %d", right, g, v);
    for (int i = 0; i < N; i++) {
        int want = i == 5 * du_ints(rank) ? val(left, 7) : i == 3 * du_ints(rank) ? 0 : -1;
        CHECK(buf[i] == want, "disp_unit %d: [%d] = %d, want %d", du, i, buf[i], want);
    }
    MPI_CHECK(MPI_Win_free(&win));
    free(buf);
}

/* --- the large-count forms ------------------------------------------------------------------------------ */
static void test_large_count(void)
{
#if MPI_VERSION >= 4
    enum { N = 32 };
    double *w, src[8], got[8], res[8], add[8];
    MPI_Win win;
    MPI_CHECK(MPI_Win_allocate_c((MPI_Aint)(N * sizeof(double)), (MPI_Aint)sizeof(double), MPI_INFO_NULL,
                                 MPI_COMM_WORLD, &w, &win));
    local_begin(win);
    for (int i = 0; i < N; i++)
        w[i] = -1.0;
    local_end(win);
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    for (int i = 0; i < 8; i++) {
        src[i] = val(rank, i) + 0.5;
        add[i] = 2.0;
    }
    MPI_Request rq;
    MPI_CHECK(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
    MPI_CHECK(MPI_Put_c(src, 8, MPI_DOUBLE, right, 0, 8, MPI_DOUBLE, win));
    MPI_CHECK(MPI_Accumulate_c(add, 8, MPI_DOUBLE, right, 8, 8, MPI_DOUBLE, MPI_SUM, win));
    MPI_CHECK(MPI_Rput_c(src, 8, MPI_DOUBLE, right, 16, 8, MPI_DOUBLE, win, &rq));
    MPI_CHECK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    MPI_CHECK(MPI_Raccumulate_c(add, 8, MPI_DOUBLE, right, 24, 8, MPI_DOUBLE, MPI_SUM, win, &rq));
    MPI_CHECK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    MPI_CHECK(MPI_Win_flush(right, win));
    MPI_CHECK(MPI_Get_c(got, 8, MPI_DOUBLE, right, 0, 8, MPI_DOUBLE, win));
    MPI_CHECK(MPI_Win_flush(right, win));
    for (int i = 0; i < 8; i++)
        CHECK(got[i] == src[i], "Put_c/Get_c: [%d] = %g, want %g", i, got[i], src[i]);
    MPI_CHECK(MPI_Get_accumulate_c(add, 8, MPI_DOUBLE, res, 8, MPI_DOUBLE, right, 8, 8, MPI_DOUBLE, MPI_SUM, win));
    MPI_CHECK(MPI_Win_flush(right, win));
    for (int i = 0; i < 8; i++)
        CHECK(res[i] == 1.0, "Get_accumulate_c after Accumulate_c: [%d] = %g, want 1", i, res[i]);
    MPI_CHECK(MPI_Rget_c(got, 8, MPI_DOUBLE, right, 16, 8, MPI_DOUBLE, win, &rq));
    MPI_CHECK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    for (int i = 0; i < 8; i++)
        CHECK(got[i] == src[i], "Rput_c/Rget_c: [%d] = %g, want %g", i, got[i], src[i]);
    MPI_CHECK(
        MPI_Rget_accumulate_c(NULL, 0, MPI_DOUBLE, res, 8, MPI_DOUBLE, right, 24, 8, MPI_DOUBLE, MPI_NO_OP, win, &rq));
    MPI_CHECK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    for (int i = 0; i < 8; i++)
        CHECK(res[i] == 1.0, "Rget_accumulate_c after Raccumulate_c: [%d] = %g, want 1", i, res[i]);
    MPI_CHECK(MPI_Win_unlock(right, win));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_CHECK(MPI_Win_free(&win));
#endif
}

int main(int argc, char **argv)
{
    rma_init(&argc, &argv);

    test_put_get();
    test_accumulate();
    test_fetch_ops();
    test_request_ops();
    test_datatypes();
    test_disp_unit();
    test_large_count();
    return mtest_finalize();
}
