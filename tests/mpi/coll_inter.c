/* Intercommunicator collectives (MPI standard, sections 6.2.2 and 6.3): the world is split into
 * group 0 (even ranks) and group 1 (odd ranks) joined by MPI_Intercomm_create. Rooted operations
 * use MPI_ROOT / MPI_PROC_NULL in the root's group and the root's rank in the other group, in
 * both directions; the all-to-all forms exchange with the remote group; reductions return the
 * remote group's reduction (a non-commutative op checks its rank order). Scan / Exscan and
 * MPI_IN_PLACE are errors on an intercommunicator. Needs at least 2 ranks. */
#include "mtest.h"
#include "nbc_wrap.h"

static int wrank, wsize, g, lr, lsize, rsize;
static MPI_Comm inter;

static int val(int grp, int src, int dst, int j)
{
    return grp * 1000000 + src * 10000 + dst * 100 + j;
}

static void test_bcast(int rootgrp, int root, int n)
{
    int *b = mtest_malloc(sizeof(int) * (size_t)(n + 1));
    for (int j = 0; j <= n; j++)
        b[j] = -1;
    int arg;
    if (g == rootgrp) {
        arg = lr == root ? MPI_ROOT : MPI_PROC_NULL;
        if (lr == root)
            for (int j = 0; j < n; j++)
                b[j] = val(g, lr, 0, j);
    } else {
        arg = root;
    }
    MPI_CHECK(MPI_Bcast(b, n, MPI_INT, arg, inter));
    for (int j = 0; j < n; j++) {
        int want = (g == rootgrp && lr != root) ? -1 : val(rootgrp, root, 0, j);
        CHECK(b[j] == want, "intercomm Bcast from group %d rank %d, count %d: [%d] = %d, expected %d", rootgrp, root, n,
              j, b[j], want);
    }
    CHECK(b[n] == -1, "intercomm Bcast wrote past the buffer");
    free(b);
}

static void test_gather_scatter(int rootgrp, int root, int n)
{
    int is_root = g == rootgrp && lr == root, arg = g == rootgrp ? (lr == root ? MPI_ROOT : MPI_PROC_NULL) : root;
    int *s = mtest_malloc(sizeof(int) * (size_t)(n * 4 + 16)), *r = mtest_malloc(sizeof(int) * (size_t)(n * 4 + 16));
    int cnt[8], dsp[8];
    /* Gather: the root gets n ints from each remote rank */
    for (int j = 0; j < n + 8; j++)
        s[j] = val(g, lr, root, j);
    for (int j = 0; j < n * rsize; j++)
        r[j] = -1;
    MPI_CHECK(MPI_Gather(s, n, MPI_INT, r, n, MPI_INT, arg, inter));
    if (is_root)
        for (int i = 0; i < rsize; i++)
            for (int j = 0; j < n; j++)
                CHECK(r[i * n + j] == val(1 - g, i, root, j), "intercomm Gather block %d [%d] = %d", i, j,
                      r[i * n + j]);
    /* Gatherv: remote rank i sends i + 1 ints, placed in reverse order */
    int pos = 0;
    for (int i = rsize - 1; i >= 0; i--) {
        cnt[i] = i + 1;
        dsp[i] = pos;
        pos += i + 2;
    }
    for (int j = 0; j < pos; j++)
        r[j] = -1;
    MPI_CHECK(MPI_Gatherv(s, lr + 1, MPI_INT, r, cnt, dsp, MPI_INT, arg, inter));
    if (is_root)
        for (int i = 0; i < rsize; i++) {
            for (int j = 0; j <= i; j++)
                CHECK(r[dsp[i] + j] == val(1 - g, i, root, j), "intercomm Gatherv block %d [%d]", i, j);
            CHECK(r[dsp[i] + i + 1] == -1, "intercomm Gatherv wrote into a gap");
        }
    /* Scatter: the root sends n ints to each remote rank */
    if (is_root)
        for (int i = 0; i < rsize; i++)
            for (int j = 0; j < n; j++)
                s[i * n + j] = val(g, lr, i, j);
    for (int j = 0; j < n; j++)
        r[j] = -1;
    MPI_CHECK(MPI_Scatter(s, n, MPI_INT, r, n, MPI_INT, arg, inter));
    if (g != rootgrp)
        for (int j = 0; j < n; j++)
            CHECK(r[j] == val(rootgrp, root, lr, j), "intercomm Scatter [%d] = %d", j, r[j]);
    /* Scatterv: remote rank i gets i + 1 ints */
    if (is_root)
        for (int i = 0; i < rsize; i++)
            for (int j = 0; j <= i; j++)
                s[dsp[i] + j] = val(g, lr, i, j);
    for (int j = 0; j < n + 4; j++)
        r[j] = -1;
    MPI_CHECK(MPI_Scatterv(s, cnt, dsp, MPI_INT, r, lr + 1, MPI_INT, arg, inter));
    if (g != rootgrp)
        for (int j = 0; j <= lr; j++)
            CHECK(r[j] == val(rootgrp, root, lr, j), "intercomm Scatterv [%d] = %d", j, r[j]);
    free(s);
    free(r);
}

static void test_all(int n, MPI_Datatype vec)
{
    int *s = mtest_malloc(sizeof(int) * (size_t)(8 * n + 8)), *r = mtest_malloc(sizeof(int) * (size_t)(8 * n + 8));
    /* Allgather: my n ints to every remote rank */
    for (int j = 0; j < n + 8; j++)
        s[j] = val(g, lr, 0, j);
    MPI_CHECK(MPI_Allgather(s, n, MPI_INT, r, n, MPI_INT, inter));
    for (int i = 0; i < rsize; i++)
        for (int j = 0; j < n; j++)
            CHECK(r[i * n + j] == val(1 - g, i, 0, j), "intercomm Allgather block %d [%d] = %d", i, j, r[i * n + j]);
    /* the same into a datatype with holes (every other int) */
    for (int j = 0; j < 2 * n * rsize; j++)
        r[j] = -1;
    MPI_CHECK(MPI_Allgather(s, n, MPI_INT, r, n, vec, inter));
    for (int i = 0; i < rsize; i++)
        for (int j = 0; j < n; j++) {
            CHECK(r[2 * (i * n + j)] == val(1 - g, i, 0, j), "intercomm Allgather into a vector type");
            CHECK(r[2 * (i * n + j) + 1] == -1, "intercomm Allgather wrote into a hole");
        }
    /* Allgatherv: remote rank i contributes i + 1 ints */
    int cnt[8], dsp[8], pos = 0;
    for (int i = 0; i < rsize; i++) {
        cnt[i] = i + 1;
        dsp[i] = pos;
        pos += i + 1;
    }
    MPI_CHECK(MPI_Allgatherv(s, lr + 1, MPI_INT, r, cnt, dsp, MPI_INT, inter));
    for (int i = 0; i < rsize; i++)
        for (int j = 0; j <= i; j++)
            CHECK(r[dsp[i] + j] == val(1 - g, i, 0, j), "intercomm Allgatherv block %d [%d]", i, j);
    /* Alltoall: block i to remote rank i */
    for (int i = 0; i < rsize; i++)
        for (int j = 0; j < n; j++)
            s[i * n + j] = val(g, lr, i, j);
    MPI_CHECK(MPI_Alltoall(s, n, MPI_INT, r, n, MPI_INT, inter));
    for (int i = 0; i < rsize; i++)
        for (int j = 0; j < n; j++)
            CHECK(r[i * n + j] == val(1 - g, i, lr, j), "intercomm Alltoall block %d [%d] = %d", i, j, r[i * n + j]);
    /* Alltoallv / Alltoallw: my block to remote rank i has (lr + i) % 3 + 1 ints */
    int sc[8], sd[8], rc[8], rd[8], sdb[8], rdb[8];
    MPI_Datatype ty[8];
    int sp = 0, rp = 0;
    for (int i = 0; i < rsize; i++) {
        sc[i] = (lr + i) % 3 + 1;
        rc[i] = (i + lr) % 3 + 1;
        sd[i] = sp;
        rd[i] = rp;
        sdb[i] = sp * (int)sizeof(int);
        rdb[i] = rp * (int)sizeof(int);
        ty[i] = MPI_INT;
        for (int j = 0; j < sc[i]; j++)
            s[sp + j] = val(g, lr, i, j);
        sp += sc[i];
        rp += rc[i];
    }
    for (int w = 0; w < 2; w++) {
        for (int j = 0; j < rp; j++)
            r[j] = -1;
        if (w)
            MPI_CHECK(MPI_Alltoallw(s, sc, sdb, ty, r, rc, rdb, ty, inter));
        else
            MPI_CHECK(MPI_Alltoallv(s, sc, sd, MPI_INT, r, rc, rd, MPI_INT, inter));
        for (int i = 0; i < rsize; i++)
            for (int j = 0; j < rc[i]; j++)
                CHECK(r[rd[i] + j] == val(1 - g, i, lr, j), "intercomm %s block %d [%d] = %d",
                      w ? "Alltoallw" : "Alltoallv", i, j, r[rd[i] + j]);
    }
    free(s);
    free(r);
}

/* 2x2 matrix product (mod 2^32), not commutative */
typedef struct {
    unsigned m[4];
} mat;
static void matop(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    mat *a = in, *b = inout;
    for (int i = 0; i < *len; i++) {
        mat t;
        t.m[0] = a[i].m[0] * b[i].m[0] + a[i].m[1] * b[i].m[2];
        t.m[1] = a[i].m[0] * b[i].m[1] + a[i].m[1] * b[i].m[3];
        t.m[2] = a[i].m[2] * b[i].m[0] + a[i].m[3] * b[i].m[2];
        t.m[3] = a[i].m[2] * b[i].m[1] + a[i].m[3] * b[i].m[3];
        b[i] = t;
    }
}
static mat mgen(int grp, int r, int j)
{
    mat x = { { (unsigned)(grp + r + 1), (unsigned)(j + 2), (unsigned)(r * 3 + 1), (unsigned)(grp + 1) } };
    return x;
}

static void test_reductions(int n, MPI_Datatype mat_t, MPI_Op mop)
{
    int *s = mtest_malloc(sizeof(int) * (size_t)(20 * n + 20)), *r = mtest_malloc(sizeof(int) * (size_t)(20 * n + 20));
    /* Allreduce: the remote group's sum */
    for (int j = 0; j < n; j++)
        s[j] = val(g, lr, 0, j);
    MPI_CHECK(MPI_Allreduce(s, r, n, MPI_INT, MPI_SUM, inter));
    for (int j = 0; j < n; j++) {
        int want = 0;
        for (int i = 0; i < rsize; i++)
            want += val(1 - g, i, 0, j);
        CHECK(r[j] == want, "intercomm Allreduce [%d] = %d, expected %d", j, r[j], want);
    }
    /* Reduce to a root of each group in turn, non-commutative */
    mat *ms = mtest_malloc(sizeof(mat) * (size_t)(n + 1)), *mr = mtest_malloc(sizeof(mat) * (size_t)(n + 1));
    for (int rootgrp = 0; rootgrp < 2; rootgrp++) {
        int gs = g == rootgrp ? lsize : rsize, root = rootgrp == 0 ? 1 % gs : 0;
        int arg = g == rootgrp ? (lr == root ? MPI_ROOT : MPI_PROC_NULL) : root;
        for (int j = 0; j < n; j++)
            ms[j] = mgen(g, lr, j);
        MPI_CHECK(MPI_Reduce(ms, mr, n, mat_t, mop, arg, inter));
        if (g == rootgrp && lr == root)
            for (int j = 0; j < n; j++) {
                mat w = mgen(1 - g, 0, j);
                for (int i = 1; i < rsize; i++) {
                    mat v = mgen(1 - g, i, j);
                    matop(&w, &v, &(int){ 1 }, &mat_t);
                    w = v;
                }
                CHECK(memcmp(&mr[j], &w, sizeof w) == 0, "intercomm Reduce (non-commutative) element %d", j);
            }
        /* and a predefined op */
        MPI_CHECK(MPI_Reduce(s, r, n, MPI_INT, MPI_MAX, arg, inter));
        if (g == rootgrp && lr == root)
            for (int j = 0; j < n; j++)
                CHECK(r[j] == val(1 - g, rsize - 1, 0, j), "intercomm Reduce MAX [%d] = %d", j, r[j]);
    }
    /* Reduce_scatter_block: group g's vector has lsize * rcount ints, equal in both groups */
    int rcount = rsize * n;
    for (int j = 0; j < lsize * rcount; j++)
        s[j] = val(g, lr, 0, j % 50);
    MPI_CHECK(MPI_Reduce_scatter_block(s, r, rcount, MPI_INT, MPI_SUM, inter));
    for (int j = 0; j < rcount; j++) {
        int want = 0;
        for (int i = 0; i < rsize; i++)
            want += val(1 - g, i, 0, (lr * rcount + j) % 50);
        CHECK(r[j] == want, "intercomm Reduce_scatter_block [%d] = %d, expected %d", j, r[j], want);
    }
    /* Reduce_scatter: 12 * n ints in all, split unevenly over the local group */
    int cnt[8], off = 0, tot = 12 * n, base = tot / lsize > 0 ? tot / lsize - 1 : 0;
    for (int i = 0; i < lsize; i++)
        cnt[i] = i == lsize - 1 ? tot - (lsize - 1) * base : base;
    for (int i = 0; i < lr; i++)
        off += cnt[i];
    for (int j = 0; j < tot; j++)
        s[j] = val(g, lr, 0, j % 50);
    MPI_CHECK(MPI_Reduce_scatter(s, r, cnt, MPI_INT, MPI_SUM, inter));
    for (int j = 0; j < cnt[lr]; j++) {
        int want = 0;
        for (int i = 0; i < rsize; i++)
            want += val(1 - g, i, 0, (off + j) % 50);
        CHECK(r[j] == want, "intercomm Reduce_scatter [%d] = %d, expected %d", j, r[j], want);
    }
    free(ms);
    free(mr);
    free(s);
    free(r);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    CHECK(wsize >= 2 && wsize <= 8, "needs 2 to 8 ranks");
    g = wrank % 2;
    MPI_Comm local;
    MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, g, wrank, &local));
    MPI_CHECK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, g ? 0 : 1, 77, &inter));
    MPI_Comm_rank(inter, &lr);
    MPI_Comm_size(inter, &lsize);
    MPI_Comm_remote_size(inter, &rsize);

    MPI_Datatype vec, mat_t;
    MPI_Op mop;
    MPI_CHECK(MPI_Type_vector(1, 1, 2, MPI_INT, &vec)); /* one int, extent 1 int... */
    MPI_Datatype vec2;
    MPI_CHECK(MPI_Type_create_resized(vec, 0, 2 * (MPI_Aint)sizeof(int), &vec2)); /* ...every other int */
    MPI_CHECK(MPI_Type_commit(&vec2));
    MPI_CHECK(MPI_Type_contiguous(4, MPI_UNSIGNED, &mat_t));
    MPI_CHECK(MPI_Type_commit(&mat_t));
    MPI_CHECK(MPI_Op_create(matop, 0, &mop));

    MPI_CHECK(MPI_Barrier(inter));
    const int counts[] = { 0, 1, 5, 3000 };
    for (int ci = 0; ci < 4; ci++) {
        int n = counts[ci];
        for (int rootgrp = 0; rootgrp < 2; rootgrp++) {
            int gs = rootgrp == g ? lsize : rsize;
            for (int root = 0; root < gs; root++) {
                test_bcast(rootgrp, root, n);
                if (n < 1000)
                    test_gather_scatter(rootgrp, root, n);
            }
        }
        if (n < 1000 || ci == 3)
            test_all(n, vec2);
        test_reductions(n, mat_t, mop);
    }
    MPI_CHECK(MPI_Barrier(inter));

    /* errors: Scan / Exscan are not defined on intercommunicators; no MPI_IN_PLACE */
    MPI_CHECK(MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN));
    int x = 1, y;
    CHECK_ERRCLASS(MPI_Scan(&x, &y, 1, MPI_INT, MPI_SUM, inter), MPI_ERR_COMM, "MPI_Scan on an intercommunicator");
    CHECK_ERRCLASS(MPI_Exscan(&x, &y, 1, MPI_INT, MPI_SUM, inter), MPI_ERR_COMM, "MPI_Exscan on an intercommunicator");
    if (!mtest_known_bug("inter_in_place"))
        CHECK_ERRCLASS(MPI_Allreduce(MPI_IN_PLACE, &y, 1, MPI_INT, MPI_SUM, inter), MPI_ERR_BUFFER,
                       "MPI_Allreduce with MPI_IN_PLACE on an intercommunicator");
    CHECK_ERRCLASS(MPI_Bcast(&x, 1, MPI_INT, rsize + 5, inter), MPI_ERR_ROOT, "MPI_Bcast with a bad root");
    /* still consistent afterwards */
    MPI_CHECK(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, inter));
    CHECK(y == rsize, "intercomm Allreduce after errors: %d", y);

    MPI_CHECK(MPI_Op_free(&mop));
    MPI_CHECK(MPI_Type_free(&vec));
    MPI_CHECK(MPI_Type_free(&vec2));
    MPI_CHECK(MPI_Type_free(&mat_t));
    MPI_CHECK(MPI_Comm_free(&inter));
    MPI_CHECK(MPI_Comm_free(&local));
    return mtest_finalize();
}
