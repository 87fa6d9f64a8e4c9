/* Groups: size/rank, translate_ranks, compare, union/intersection/difference, incl/excl,
 * range_incl/range_excl, MPI_GROUP_EMPTY, and the error classes of bad arguments. Every result
 * is checked against a serial model: a group is a list of world ranks. Any number of ranks. */
#include "mtest.h"

static int rank, size;

/* the world ranks of a group, through translate_ranks to the world group */
static int members(MPI_Group g, int *out)
{
    MPI_Group world;
    int n;
    MPI_CHECK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    MPI_CHECK(MPI_Group_size(g, &n));
    int *r = mtest_malloc((size_t)n * sizeof(int));
    for (int i = 0; i < n; i++)
        r[i] = i;
    MPI_CHECK(MPI_Group_translate_ranks(g, n, r, world, out));
    free(r);
    MPI_CHECK(MPI_Group_free(&world));
    return n;
}

static void expect(MPI_Group g, const int *want, int n, const char *what)
{
    int got[64], m = members(g, got);
    CHECK(m == n, "%s: size %d, want %d", what, m, n);
    for (int i = 0; i < n; i++)
        CHECK(got[i] == want[i], "%s: member %d is world %d, want %d", what, i, got[i], want[i]);
    int r;
    MPI_CHECK(MPI_Group_rank(g, &r));
    int wr = MPI_UNDEFINED;
    for (int i = 0; i < n; i++)
        if (want[i] == rank)
            wr = i;
    CHECK(r == wr, "%s: Group_rank %d, want %d", what, r, wr);
}

static void test_basics(MPI_Group world)
{
    int n, r;
    MPI_CHECK(MPI_Group_size(world, &n));
    MPI_CHECK(MPI_Group_rank(world, &r));
    CHECK(n == size && r == rank, "world group size/rank %d/%d", n, r);
    MPI_CHECK(MPI_Group_size(MPI_GROUP_EMPTY, &n));
    MPI_CHECK(MPI_Group_rank(MPI_GROUP_EMPTY, &r));
    CHECK(n == 0 && r == MPI_UNDEFINED, "empty group size/rank %d/%d", n, r);

    MPI_Group self;
    MPI_CHECK(MPI_Comm_group(MPI_COMM_SELF, &self));
    int want[1] = { rank };
    expect(self, want, 1, "SELF group");

    /* translate: world -> self, with MPI_PROC_NULL passing through */
    int in[3] = { rank, MPI_PROC_NULL, (rank + 1) % size }, out[3];
    MPI_CHECK(MPI_Group_translate_ranks(world, 3, in, self, out));
    CHECK(out[0] == 0 && out[1] == MPI_PROC_NULL && out[2] == (size == 1 ? 0 : MPI_UNDEFINED),
          "translate to SELF: %d %d %d", out[0], out[1], out[2]);
    MPI_CHECK(MPI_Group_translate_ranks(world, 0, NULL, self, NULL));

    int res;
    MPI_CHECK(MPI_Group_compare(world, world, &res));
    CHECK(res == MPI_IDENT, "compare(world, world) = %d", res);
    MPI_CHECK(MPI_Group_compare(self, world, &res));
    CHECK(res == (size == 1 ? MPI_IDENT : MPI_UNEQUAL), "compare(self, world) = %d", res);
    MPI_CHECK(MPI_Group_compare(MPI_GROUP_EMPTY, MPI_GROUP_EMPTY, &res));
    CHECK(res == MPI_IDENT, "compare(empty, empty) = %d", res);
    MPI_CHECK(MPI_Group_free(&self));
    CHECK(self == MPI_GROUP_NULL, "Group_free did not set MPI_GROUP_NULL");
}

static void test_incl_excl(MPI_Group world)
{
    /* reversed world: incl with ranks n-1..0 */
    int rev[64], want[64];
    for (int i = 0; i < size; i++)
        rev[i] = want[i] = size - 1 - i;
    MPI_Group g, h;
    MPI_CHECK(MPI_Group_incl(world, size, rev, &g));
    expect(g, want, size, "incl reversed");
    int res;
    MPI_CHECK(MPI_Group_compare(world, g, &res));
    CHECK(res == (size == 1 ? MPI_IDENT : MPI_SIMILAR), "compare(world, reversed) = %d", res);

    /* translate world ranks into the reversed group */
    int all[64], tr[64];
    for (int i = 0; i < size; i++)
        all[i] = i;
    MPI_CHECK(MPI_Group_translate_ranks(world, size, all, g, tr));
    for (int i = 0; i < size; i++)
        CHECK(tr[i] == size - 1 - i, "translate %d into reversed: %d", i, tr[i]);

    /* excl the even ranks: the odd ones in order */
    int ev[64], ne = 0, odd[64], no = 0;
    for (int i = 0; i < size; i++) {
        if (i % 2 == 0)
            ev[ne++] = i;
        else
            odd[no++] = i;
    }
    MPI_CHECK(MPI_Group_excl(world, ne, ev, &h));
    expect(h, odd, no, "excl evens");
    MPI_CHECK(MPI_Group_free(&h));
    /* excl of the reversed group: order of the group kept */
    int first = 0;
    MPI_CHECK(MPI_Group_excl(g, 1, &first, &h));
    expect(h, want + 1, size - 1, "excl first of reversed");
    MPI_CHECK(MPI_Group_free(&h));
    /* incl of nothing and excl of everything give empty groups */
    MPI_CHECK(MPI_Group_incl(world, 0, NULL, &h));
    MPI_CHECK(MPI_Group_compare(h, MPI_GROUP_EMPTY, &res));
    CHECK(res == MPI_IDENT, "incl of nothing is not empty (%d)", res);
    MPI_CHECK(MPI_Group_free(&h));
    MPI_CHECK(MPI_Group_excl(world, size, all, &h));
    int n;
    MPI_CHECK(MPI_Group_size(h, &n));
    CHECK(n == 0, "excl of everything has size %d", n);
    MPI_CHECK(MPI_Group_free(&h));
    MPI_CHECK(MPI_Group_free(&g));
}

static void test_ranges(MPI_Group world)
{
    /* range_incl: (size-1 .. 0 step -2) then (0 .. size-1 step 2) if disjoint */
    int ranges[2][3] = { { size - 1, 0, -2 }, { size % 2 == 0 ? 0 : 1, size - 1, 2 } };
    int want[64], n = 0;
    for (int r = size - 1; r >= 0; r -= 2)
        want[n++] = r;
    int n1 = n;
    for (int r = ranges[1][0]; r <= size - 1; r += 2)
        want[n++] = r;
    int nr = (size > 1) ? 2 : 1;
    if (nr == 1)
        n = n1;
    MPI_Group g, h;
    MPI_CHECK(MPI_Group_range_incl(world, nr, ranges, &g));
    expect(g, want, n, "range_incl");
    CHECK(n == size, "model: the two ranges cover everything (%d of %d)", n, size);

    /* range_excl of (1 .. size-1 step 2): the even ranks stay, in order */
    int ex[1][3] = { { 1, size - 1, 2 } };
    int ev[64], ne = 0;
    for (int r = 0; r < size; r += 2)
        ev[ne++] = r;
    if (size > 1) {
        MPI_CHECK(MPI_Group_range_excl(world, 1, ex, &h));
        expect(h, ev, ne, "range_excl odds");
        MPI_CHECK(MPI_Group_free(&h));
    }
    /* a single-rank range with a large stride */
    int one[1][3] = { { size - 1, size - 1, 7 } };
    MPI_CHECK(MPI_Group_range_incl(world, 1, one, &h));
    int last = size - 1;
    expect(h, &last, 1, "range_incl single");
    MPI_CHECK(MPI_Group_free(&h));
    MPI_CHECK(MPI_Group_free(&g));
}

static void test_algebra(MPI_Group world)
{
    /* A = ranks with bit 0 set, in descending order; B = ranks < size/2 + 1, ascending */
    int a[64], na = 0, b[64], nb = 0;
    for (int r = size - 1; r >= 0; r--)
        if (r & 1)
            a[na++] = r;
    for (int r = 0; r < size / 2 + 1 && r < size; r++)
        b[nb++] = r;
    MPI_Group A, B, U, I, D, D2;
    MPI_CHECK(MPI_Group_incl(world, na, a, &A));
    MPI_CHECK(MPI_Group_incl(world, nb, b, &B));
    /* model */
    int u[64], nu = 0, in[64], ni = 0, d[64], nd = 0, d2[64], nd2 = 0;
    for (int i = 0; i < na; i++) {
        u[nu++] = a[i];
        int inb = 0;
        for (int j = 0; j < nb; j++)
            inb |= a[i] == b[j];
        if (inb)
            in[ni++] = a[i];
        else
            d[nd++] = a[i];
    }
    for (int j = 0; j < nb; j++) {
        int ina = 0;
        for (int i = 0; i < na; i++)
            ina |= a[i] == b[j];
        if (!ina) {
            u[nu++] = b[j];
            d2[nd2++] = b[j];
        }
    }
    MPI_CHECK(MPI_Group_union(A, B, &U));
    MPI_CHECK(MPI_Group_intersection(A, B, &I));
    MPI_CHECK(MPI_Group_difference(A, B, &D));
    MPI_CHECK(MPI_Group_difference(B, A, &D2));
    expect(U, u, nu, "union");
    expect(I, in, ni, "intersection");
    expect(D, d, nd, "difference A-B");
    expect(D2, d2, nd2, "difference B-A");
    int res;
    MPI_CHECK(MPI_Group_compare(A, A, &res));
    CHECK(res == MPI_IDENT, "compare(A, A) = %d", res);
    /* with the empty group */
    MPI_Group e1, e2, e3;
    MPI_CHECK(MPI_Group_union(A, MPI_GROUP_EMPTY, &e1));
    expect(e1, a, na, "union with empty");
    MPI_CHECK(MPI_Group_intersection(A, MPI_GROUP_EMPTY, &e2));
    MPI_CHECK(MPI_Group_difference(A, A, &e3));
    int n2, n3;
    MPI_CHECK(MPI_Group_size(e2, &n2));
    MPI_CHECK(MPI_Group_size(e3, &n3));
    CHECK(n2 == 0 && n3 == 0, "intersection with empty / A-A sizes %d %d", n2, n3);
    MPI_Group fr[] = { A, B, U, I, D, D2, e1, e2, e3 };
    for (int i = 0; i < 9; i++)
        MPI_CHECK(MPI_Group_free(&fr[i]));
}

static void test_errors(MPI_Group world)
{
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Group g = MPI_GROUP_NULL;
    int n, bad[2] = { 0, size }, dup[2] = { 0, 0 }, out[2];
    CHECK_ERRCLASS(MPI_Group_size(MPI_GROUP_NULL, &n), MPI_ERR_GROUP, "Group_size(NULL)");
    CHECK_ERRCLASS(MPI_Group_incl(world, 2, bad, &g), MPI_ERR_RANK, "Group_incl out of range");
    /* repeated ranks are erroneous; Aptus checks (MPICH does not) */
    if (size > 1 && !mtest_known_bug("group_dup_ranks_unchecked"))
        CHECK_ERRCLASS(MPI_Group_incl(world, 2, dup, &g), MPI_ERR_RANK, "Group_incl duplicate");
    CHECK_ERRCLASS(MPI_Group_excl(world, 1, &bad[1], &g), MPI_ERR_RANK, "Group_excl out of range");
    CHECK_ERRCLASS(MPI_Group_translate_ranks(world, 2, bad, world, out), MPI_ERR_RANK, "translate out of range");
    int zero[1][3] = { { 0, 0, 0 } }, far[1][3] = { { 0, size, 1 } };
    CHECK_ERRCLASS(MPI_Group_range_incl(world, 1, zero, &g), MPI_ERR_ARG, "range stride 0");
    CHECK_ERRCLASS(MPI_Group_range_incl(world, 1, far, &g), MPI_ERR_ARG, "range past the end");
    CHECK_ERRCLASS(MPI_Group_union(world, MPI_GROUP_NULL, &g), MPI_ERR_GROUP, "union with NULL");
    MPI_Comm nc;
    CHECK_ERRCLASS(MPI_Comm_create(MPI_COMM_WORLD, MPI_GROUP_NULL, &nc), MPI_ERR_GROUP, "Comm_create(NULL group)");
    CHECK(g == MPI_GROUP_NULL, "a failed call changed newgroup");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size <= 64, "test written for at most 64 ranks");
    MPI_Group world;
    MPI_CHECK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    test_basics(world);
    test_incl_excl(world);
    test_ranges(world);
    test_algebra(world);
    test_errors(world);
    MPI_CHECK(MPI_Group_free(&world));
    return mtest_finalize();
}
