/* Communicators: Comm_dup / Comm_split (colors, key ordering, ties broken by
 * old rank, MPI_UNDEFINED -> MPI_COMM_NULL) / Comm_free / Comm_compare
 * (IDENT, CONGRUENT, SIMILAR, UNEQUAL); messages on a dup never match
 * receives on the parent; point-to-point and collectives on split
 * communicators; MPI_COMM_SELF send-to-self; many dup/free cycles.
 * Works with any number of ranks (meant for 3 and 4). */
#include "mtest.h"

static int rank, size;

static void test_dup_compare(void)
{
    MPI_Comm dup, dup2;
    int res = -1, r, s;
    MPI_CHECK(MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_WORLD, &res));
    CHECK(res == MPI_IDENT, "compare(WORLD, WORLD) = %d, want MPI_IDENT", res);
    MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    CHECK(dup != MPI_COMM_NULL && dup != MPI_COMM_WORLD, "Comm_dup returned a bad handle");
    MPI_CHECK(MPI_Comm_rank(dup, &r));
    MPI_CHECK(MPI_Comm_size(dup, &s));
    CHECK(r == rank && s == size, "dup rank/size %d/%d", r, s);
    MPI_CHECK(MPI_Comm_compare(MPI_COMM_WORLD, dup, &res));
    CHECK(res == MPI_CONGRUENT, "compare(WORLD, dup) = %d, want MPI_CONGRUENT", res);
    MPI_CHECK(MPI_Comm_compare(dup, dup, &res));
    CHECK(res == MPI_IDENT, "compare(dup, dup) = %d, want MPI_IDENT", res);
    MPI_CHECK(MPI_Comm_dup(dup, &dup2));
    MPI_CHECK(MPI_Comm_compare(dup, dup2, &res));
    CHECK(res == MPI_CONGRUENT, "compare(dup, dup of dup) = %d", res);
    MPI_CHECK(MPI_Comm_compare(MPI_COMM_SELF, MPI_COMM_WORLD, &res));
    if (size == 1)
        CHECK(res == MPI_CONGRUENT, "compare(SELF, WORLD) with 1 rank = %d", res);
    else
        CHECK(res == MPI_UNEQUAL, "compare(SELF, WORLD) = %d, want MPI_UNEQUAL", res);

    /* same group, reversed order: SIMILAR; same order: CONGRUENT */
    MPI_Comm rev, same;
    MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &rev));
    MPI_CHECK(MPI_Comm_rank(rev, &r));
    CHECK(r == size - 1 - rank, "reversed split: rank %d, want %d", r, size - 1 - rank);
    MPI_CHECK(MPI_Comm_compare(MPI_COMM_WORLD, rev, &res));
    CHECK(res == (size == 1 ? MPI_CONGRUENT : MPI_SIMILAR), "compare(WORLD, reversed) = %d", res);
    MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, 5, 0, &same));
    MPI_CHECK(MPI_Comm_rank(same, &r));
    CHECK(r == rank, "split with equal keys: rank %d, want %d (ties keep old order)", r, rank);
    MPI_CHECK(MPI_Comm_compare(MPI_COMM_WORLD, same, &res));
    CHECK(res == MPI_CONGRUENT, "compare(WORLD, same-order split) = %d", res);

    MPI_CHECK(MPI_Comm_free(&dup2));
    MPI_CHECK(MPI_Comm_free(&rev));
    MPI_CHECK(MPI_Comm_free(&same));
    MPI_CHECK(MPI_Comm_free(&dup));
    CHECK(dup == MPI_COMM_NULL, "Comm_free did not set MPI_COMM_NULL");
}

static void test_dup_isolation(void)
{
    if (size < 2)
        return;
    MPI_Comm dup;
    MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    if (rank == 0) {
        int a = 111, b = 222;
        /* the dup message is sent first */
        MPI_CHECK(MPI_Send(&a, 1, MPI_INT, 1, 5, dup));
        MPI_CHECK(MPI_Send(&b, 1, MPI_INT, 1, 5, MPI_COMM_WORLD));
        MPI_CHECK(MPI_Send(&a, 1, MPI_INT, 1, 6, dup));
    } else if (rank == 1) {
        int v = 0, flag = 1;
        MPI_Status st;
        /* once the dup's tag-6 message is here, the dup's tag-5 one is too;
         * nothing with tag 6 was ever sent on WORLD */
        MPI_CHECK(MPI_Probe(0, 6, dup, &st));
        MPI_CHECK(MPI_Iprobe(MPI_ANY_SOURCE, 6, MPI_COMM_WORLD, &flag, &st));
        CHECK(!flag, "a message sent on a dup is visible on the parent");
        MPI_CHECK(MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
        CHECK(v == 222, "wildcard receive on WORLD got %d (the dup's message?)", v);
        MPI_CHECK(MPI_Recv(&v, 1, MPI_INT, 0, 5, dup, &st));
        CHECK(v == 111, "receive on dup got %d", v);
        MPI_CHECK(MPI_Recv(&v, 1, MPI_INT, 0, 6, dup, &st));
        CHECK(v == 111, "receive on dup got %d", v);
    }
    /* collectives on the dup and the parent interleaved */
    int x = rank + 1, y = 0, z = 0;
    MPI_CHECK(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, dup));
    MPI_CHECK(MPI_Allreduce(&x, &z, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
    CHECK(y == size * (size + 1) / 2 && z == size, "collectives on dup/parent: %d %d", y, z);
    MPI_CHECK(MPI_Comm_free(&dup));
}

static void test_split(void)
{
    /* colors: rank % 3, with rank 2 opting out (MPI_UNDEFINED);
     * key: descending rank within each color */
    int color = rank % 3;
    if (rank == 2)
        color = MPI_UNDEFINED;
    MPI_Comm sub;
    MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, color, -rank, &sub));
    if (color == MPI_UNDEFINED) {
        CHECK(sub == MPI_COMM_NULL, "MPI_UNDEFINED color did not give MPI_COMM_NULL");
        return;
    }
    CHECK(sub != MPI_COMM_NULL, "split returned MPI_COMM_NULL for color %d", color);
    /* expected members: ranks with the same color, excluding 2, descending */
    int members[64], n = 0;
    for (int r = size - 1; r >= 0; r--)
        if (r % 3 == color && r != 2 && n < 64)
            members[n++] = r;
    int sr = -1, ss = -1;
    MPI_CHECK(MPI_Comm_rank(sub, &sr));
    MPI_CHECK(MPI_Comm_size(sub, &ss));
    CHECK(ss == n, "color %d: size %d, want %d", color, ss, n);
    CHECK(sr >= 0 && sr < n && members[sr] == rank, "color %d: rank %d maps to world %d, not %d", color, sr,
          sr >= 0 && sr < n ? members[sr] : -1, rank);

    /* point to point by sub-rank: ring */
    if (ss > 1) {
        int right = (sr + 1) % ss, left = (sr + ss - 1) % ss;
        int out[2] = { rank, sr }, in[2] = { -1, -1 };
        MPI_Status st;
        MPI_CHECK(MPI_Sendrecv(out, 2, MPI_INT, right, 1, in, 2, MPI_INT, left, 1, sub, &st));
        CHECK(in[0] == members[left] && in[1] == left && st.MPI_SOURCE == left,
              "sub ring: got world %d sub %d from source %d, want %d/%d", in[0], in[1], st.MPI_SOURCE, members[left],
              left);
    }
    /* collectives within the color */
    int sum = 0, expect = 0;
    for (int i = 0; i < n; i++)
        expect += members[i];
    MPI_CHECK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, sub));
    CHECK(sum == expect, "color %d: Allreduce of world ranks %d, want %d", color, sum, expect);
    int b = sr == 0 ? 1000 + color : -1;
    MPI_CHECK(MPI_Bcast(&b, 1, MPI_INT, 0, sub));
    CHECK(b == 1000 + color, "color %d: Bcast got %d", color, b);
    MPI_CHECK(MPI_Barrier(sub));

    /* split of a split */
    MPI_Comm sub2;
    MPI_CHECK(MPI_Comm_split(sub, sr % 2, sr, &sub2));
    int s2 = -1;
    MPI_CHECK(MPI_Comm_size(sub2, &s2));
    CHECK(s2 == (n + 1 - sr % 2) / 2, "nested split size %d", s2);
    MPI_CHECK(MPI_Comm_free(&sub2));
    MPI_CHECK(MPI_Comm_free(&sub));
}

static void test_self(void)
{
    int r = -1, s = -1;
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_SELF, &r));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_SELF, &s));
    CHECK(r == 0 && s == 1, "COMM_SELF rank %d size %d", r, s);
    const int sizes[] = { 0, 4, 4096, 1048576 };
    for (int i = 0; i < 4; i++) {
        int n = sizes[i];
        char *sb = mtest_malloc((size_t)n), *rb = mtest_malloc((size_t)n);
        MPI_Request rq;
        MPI_Status st;
        int cnt;
        mtest_fill(sb, (size_t)n, 60u + (unsigned)(rank * 4 + i));
        MPI_CHECK(MPI_Isend(sb, n, MPI_BYTE, 0, 3, MPI_COMM_SELF, &rq));
        MPI_CHECK(MPI_Recv(rb, n, MPI_BYTE, 0, 3, MPI_COMM_SELF, &st));
        MPI_CHECK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        MPI_CHECK(MPI_Get_count(&st, MPI_BYTE, &cnt));
        CHECK(cnt == n && st.MPI_SOURCE == 0 && st.MPI_TAG == 3, "COMM_SELF status %d/%d/%d", cnt, st.MPI_SOURCE,
              st.MPI_TAG);
        CHECK_PATTERN(rb, n, 60u + (unsigned)(rank * 4 + i), "COMM_SELF payload");
        free(sb);
        free(rb);
    }
    int v = 5, w = 0;
    MPI_CHECK(MPI_Allreduce(&v, &w, 1, MPI_INT, MPI_SUM, MPI_COMM_SELF));
    CHECK(w == 5, "Allreduce on COMM_SELF = %d", w);
    MPI_Comm sd;
    MPI_CHECK(MPI_Comm_dup(MPI_COMM_SELF, &sd));
    MPI_CHECK(MPI_Sendrecv(&v, 1, MPI_INT, 0, 0, &w, 1, MPI_INT, 0, 0, sd, MPI_STATUS_IGNORE));
    MPI_CHECK(MPI_Comm_free(&sd));
}

static void test_many_dups(void)
{
    /* context ids must be recycled or plentiful */
    for (int i = 0; i < 300; i++) {
        MPI_Comm c;
        MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
        if (i % 50 == 0) {
            int x = 1, y = 0;
            MPI_CHECK(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, c));
            CHECK(y == size, "Allreduce on dup %d = %d", i, y);
        }
        MPI_CHECK(MPI_Comm_free(&c));
    }
    /* 40 live at once, each with its own message */
    MPI_Comm cs[40];
    for (int i = 0; i < 40; i++)
        MPI_CHECK(MPI_Comm_dup(i % 2 ? MPI_COMM_WORLD : MPI_COMM_SELF, &cs[i]));
    if (size > 1) {
        int peer = (rank + 1) % size, from = (rank + size - 1) % size;
        MPI_Request rq[40];
        int in[40];
        for (int i = 1; i < 40; i += 2)
            MPI_CHECK(MPI_Irecv(&in[i], 1, MPI_INT, from, 0, cs[i], &rq[i / 2]));
        for (int i = 39; i >= 1; i -= 2) {
            int v = i * 1000 + rank;
            MPI_CHECK(MPI_Send(&v, 1, MPI_INT, peer, 0, cs[i]));
        }
        MPI_CHECK(MPI_Waitall(20, rq, MPI_STATUSES_IGNORE));
        for (int i = 1; i < 40; i += 2)
            CHECK(in[i] == i * 1000 + from, "comm %d got %d", i, in[i]);
    }
    for (int i = 0; i < 40; i++)
        MPI_CHECK(MPI_Comm_free(&cs[i]));
}

static void test_names(void)
{
    char name[MPI_MAX_OBJECT_NAME];
    int len = -1;
    MPI_CHECK(MPI_Comm_get_name(MPI_COMM_WORLD, name, &len));
    CHECK(!strcmp(name, "MPI_COMM_WORLD") && len == 14, "WORLD name \"%s\"", name);
    MPI_CHECK(MPI_Comm_get_name(MPI_COMM_SELF, name, &len));
    CHECK(!strcmp(name, "MPI_COMM_SELF"), "SELF name \"%s\"", name);
    MPI_Comm d;
    MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    MPI_CHECK(MPI_Comm_set_name(d, "my dup"));
    MPI_CHECK(MPI_Comm_get_name(d, name, &len));
    CHECK(!strcmp(name, "my dup") && len == 6, "dup name \"%s\"", name);
    MPI_CHECK(MPI_Comm_free(&d));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    test_dup_compare();
    test_dup_isolation();
    test_split();
    MPI_Barrier(MPI_COMM_WORLD);
    test_self();
    test_many_dups();
    test_names();
    return mtest_finalize();
}
