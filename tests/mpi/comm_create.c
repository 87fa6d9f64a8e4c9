/* MPI_Comm_create and MPI_Comm_create_group with subsets of MPI_COMM_WORLD (the odd ranks, all
 * ranks reversed, the empty group, one rank), Comm_group of the results, point-to-point and a
 * collective on each, create_group called only by the members (the others do something else
 * meanwhile), and its error classes. Any number of ranks (meant for 1, 2, 3 and 4). */
#include "mtest.h"

static int rank, size;

/* Checks that c holds exactly the world ranks in want[] (in this order) and works: a ring of
 * point-to-point messages and an allreduce of the world ranks. */
static void check_comm(MPI_Comm c, const int *want, int n, const char *what)
{
    int me = -1;
    for (int i = 0; i < n; i++)
        if (want[i] == rank)
            me = i;
    if (me < 0) {
        CHECK(c == MPI_COMM_NULL, "%s: a non-member got a communicator", what);
        return;
    }
    CHECK(c != MPI_COMM_NULL, "%s: a member got MPI_COMM_NULL", what);
    int r, s;
    MPI_CHECK(MPI_Comm_rank(c, &r));
    MPI_CHECK(MPI_Comm_size(c, &s));
    CHECK(r == me && s == n, "%s: rank/size %d/%d, want %d/%d", what, r, s, me, n);
    MPI_Group g, w;
    MPI_CHECK(MPI_Comm_group(c, &g));
    MPI_CHECK(MPI_Comm_group(MPI_COMM_WORLD, &w));
    int idx[64], tr[64];
    for (int i = 0; i < n; i++)
        idx[i] = i;
    MPI_CHECK(MPI_Group_translate_ranks(g, n, idx, w, tr));
    for (int i = 0; i < n; i++)
        CHECK(tr[i] == want[i], "%s: member %d is world %d, want %d", what, i, tr[i], want[i]);
    MPI_CHECK(MPI_Group_free(&g));
    MPI_CHECK(MPI_Group_free(&w));
    int flag;
    MPI_CHECK(MPI_Comm_test_inter(c, &flag));
    CHECK(!flag, "%s: test_inter says intercommunicator", what);

    int right = (me + 1) % n, left = (me + n - 1) % n, out[2] = { rank, me }, in[2] = { -1, -1 };
    MPI_Status st;
    MPI_CHECK(MPI_Sendrecv(out, 2, MPI_INT, right, 3, in, 2, MPI_INT, left, 3, c, &st));
    CHECK(in[0] == want[left] && in[1] == left && st.MPI_SOURCE == left, "%s: ring got %d/%d from %d", what, in[0],
          in[1], st.MPI_SOURCE);
    int sum = 0, model = 0;
    for (int i = 0; i < n; i++)
        model += want[i] * (i + 1);
    int mine = rank * (me + 1);
    MPI_CHECK(MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, c));
    CHECK(sum == model, "%s: allreduce %d, want %d", what, sum, model);
}

static void test_create(void)
{
    MPI_Group world, g;
    MPI_CHECK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    int list[64], n;
    MPI_Comm c;

    /* the odd ranks */
    n = 0;
    for (int r = 1; r < size; r += 2)
        list[n++] = r;
    MPI_CHECK(MPI_Group_incl(world, n, list, &g));
    MPI_CHECK(MPI_Comm_create(MPI_COMM_WORLD, g, &c));
    check_comm(c, list, n, "create(odd)");
    if (c != MPI_COMM_NULL)
        MPI_CHECK(MPI_Comm_free(&c));
    MPI_CHECK(MPI_Group_free(&g));

    /* everybody, reversed */
    for (int i = 0; i < size; i++)
        list[i] = size - 1 - i;
    MPI_CHECK(MPI_Group_incl(world, size, list, &g));
    MPI_CHECK(MPI_Comm_create(MPI_COMM_WORLD, g, &c));
    check_comm(c, list, size, "create(reversed)");
    int res;
    MPI_CHECK(MPI_Comm_compare(MPI_COMM_WORLD, c, &res));
    CHECK(res == (size == 1 ? MPI_CONGRUENT : MPI_SIMILAR), "compare(world, reversed) = %d", res);
    /* a create from the new communicator: its last member alone */
    MPI_Group g2, g3;
    MPI_CHECK(MPI_Comm_group(c, &g2));
    int last = size - 1;
    MPI_CHECK(MPI_Group_incl(g2, 1, &last, &g3));
    MPI_Comm c2;
    MPI_CHECK(MPI_Comm_create(c, g3, &c2));
    int w0 = 0;
    check_comm(c2, &w0, 1, "create(last of reversed)");
    if (c2 != MPI_COMM_NULL)
        MPI_CHECK(MPI_Comm_free(&c2));
    MPI_CHECK(MPI_Group_free(&g2));
    MPI_CHECK(MPI_Group_free(&g3));
    MPI_CHECK(MPI_Comm_free(&c));
    MPI_CHECK(MPI_Group_free(&g));

    /* the empty group: MPI_COMM_NULL everywhere */
    MPI_CHECK(MPI_Comm_create(MPI_COMM_WORLD, MPI_GROUP_EMPTY, &c));
    CHECK(c == MPI_COMM_NULL, "create(empty) gave a communicator");
    MPI_CHECK(MPI_Group_free(&world));
}

static void test_create_group(void)
{
    MPI_Group world, g;
    MPI_CHECK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    int list[64], n = 0;
    MPI_Comm c;

    /* the odd ranks, reversed; only they call; the even ones exchange messages meanwhile */
    for (int r = size - 1; r >= 0; r--)
        if (r & 1)
            list[n++] = r;
    MPI_CHECK(MPI_Group_incl(world, n, list, &g));
    if (rank & 1) {
        MPI_CHECK(MPI_Comm_create_group(MPI_COMM_WORLD, g, 7, &c));
        check_comm(c, list, n, "create_group(odd reversed)");
        MPI_CHECK(MPI_Comm_free(&c));
    } else {
        int nev = (size + 1) / 2, me = rank / 2, x = rank, y = -1;
        MPI_Status st;
        MPI_CHECK(MPI_Sendrecv(&x, 1, MPI_INT, 2 * ((me + 1) % nev), 9, &y, 1, MPI_INT, 2 * ((me + nev - 1) % nev), 9,
                               MPI_COMM_WORLD, &st));
        CHECK(y == 2 * ((me + nev - 1) % nev), "even ring got %d", y);
    }
    MPI_CHECK(MPI_Group_free(&g));

    /* two disjoint halves at the same time, same tag */
    int half = rank < size / 2, h[64], nh = 0;
    for (int r = 0; r < size; r++)
        if ((r < size / 2) == half)
            h[nh++] = r;
    MPI_CHECK(MPI_Group_incl(world, nh, h, &g));
    MPI_CHECK(MPI_Comm_create_group(MPI_COMM_WORLD, g, 0, &c));
    check_comm(c, h, nh, "create_group(half)");
    /* and from that communicator, the member alone */
    MPI_Group gs;
    MPI_CHECK(MPI_Comm_group(MPI_COMM_SELF, &gs));
    MPI_Comm cs;
    MPI_CHECK(MPI_Comm_create_group(c, gs, 12345, &cs));
    check_comm(cs, &rank, 1, "create_group(self)");
    MPI_CHECK(MPI_Comm_free(&cs));
    MPI_CHECK(MPI_Group_free(&gs));
    MPI_CHECK(MPI_Comm_free(&c));
    MPI_CHECK(MPI_Group_free(&g));

    /* the whole world, in order: congruent */
    MPI_CHECK(MPI_Comm_create_group(MPI_COMM_WORLD, world, 1, &c));
    int res;
    MPI_CHECK(MPI_Comm_compare(MPI_COMM_WORLD, c, &res));
    CHECK(res == MPI_CONGRUENT, "compare(world, create_group(world)) = %d", res);
    MPI_CHECK(MPI_Comm_free(&c));

    /* errors */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK_ERRCLASS(MPI_Comm_create_group(MPI_COMM_WORLD, world, -1, &c), MPI_ERR_TAG, "create_group negative tag");
    CHECK_ERRCLASS(MPI_Comm_create_group(MPI_COMM_WORLD, MPI_GROUP_NULL, 0, &c), MPI_ERR_GROUP,
                   "create_group(GROUP_NULL)");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    /* a group with a rank outside the communicator: MPI_COMM_SELF's group on world ranks other
     * than 0, used on a communicator holding only rank 0 */
    MPI_Comm zero;
    MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, rank == 0 ? 0 : MPI_UNDEFINED, 0, &zero));
    /* a group that is not a subset of the communicator's is erroneous; Aptus checks (MPICH
     * does not) */
    if (rank == 0 && size > 1 && !mtest_known_bug("foreign_group_unchecked")) {
        MPI_Group other;
        int one = 1;
        MPI_CHECK(MPI_Group_incl(world, 1, &one, &other));
        MPI_Comm_set_errhandler(zero, MPI_ERRORS_RETURN);
        CHECK_ERRCLASS(MPI_Comm_create_group(zero, other, 0, &c), MPI_ERR_GROUP, "create_group(foreign group)");
        CHECK_ERRCLASS(MPI_Comm_create(zero, other, &c), MPI_ERR_GROUP, "create(foreign group)");
        MPI_CHECK(MPI_Group_free(&other));
    }
    if (zero != MPI_COMM_NULL)
        MPI_CHECK(MPI_Comm_free(&zero));
    MPI_CHECK(MPI_Group_free(&world));
}

/* Many create/free cycles, and 100 communicators alive at once. */
static void test_cycles(void)
{
    for (int i = 0; i < 1000; i++) {
        MPI_Comm c;
        MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
        MPI_CHECK(MPI_Comm_free(&c));
    }
    MPI_Comm keep[100];
    for (int i = 0; i < 100; i++)
        MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &keep[i]));
    int x = 1, y = 0;
    MPI_CHECK(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, keep[99]));
    CHECK(y == size, "allreduce on the 100th dup: %d", y);
    for (int i = 0; i < 100; i++)
        MPI_CHECK(MPI_Comm_free(&keep[i]));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size <= 64, "test written for at most 64 ranks");
    test_create();
    test_create_group();
    test_cycles();
    return mtest_finalize();
}
