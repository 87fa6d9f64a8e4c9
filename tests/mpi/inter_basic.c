/* Intercommunicators: MPI_Intercomm_create over MPI_COMM_WORLD (groups: even/odd ranks, and
 * low/high halves), the local and remote groups, point-to-point between the groups (every rank
 * to every remote rank, received with MPI_ANY_SOURCE; Ssend, Irecv, Probe), Intercomm_merge with
 * both orders of `high` and with equal values, Comm_dup / Comm_idup / Comm_split / Comm_create of
 * an intercommunicator, Comm_compare, and the MPI_ERR_COMM / MPI_ERR_RANK cases. 2 or more ranks
 * (with 1 rank only the error cases run). */
#include "mtest.h"

static int rank, size;

struct side {
    int color;        /* which group this rank is in */
    int n[2];         /* group sizes */
    int world[2][64]; /* world ranks of each group, in local rank order */
};

static void make_side(struct side *s, int (*color_of)(int))
{
    s->n[0] = s->n[1] = 0;
    for (int r = 0; r < size; r++) {
        int c = color_of(r);
        s->world[c][s->n[c]++] = r;
    }
    s->color = color_of(rank);
}

static int parity(int r)
{
    return r % 2;
}

static int upper(int r)
{
    return r >= size / 2;
}

static int local_rank_of(const struct side *s, int c, int w)
{
    for (int i = 0; i < s->n[c]; i++)
        if (s->world[c][i] == w)
            return i;
    return -1;
}

static void check_group(MPI_Group g, const int *want, int n, const char *what)
{
    MPI_Group w;
    int gs, idx[64], tr[64];
    MPI_CHECK(MPI_Comm_group(MPI_COMM_WORLD, &w));
    MPI_CHECK(MPI_Group_size(g, &gs));
    CHECK(gs == n, "%s: size %d, want %d", what, gs, n);
    for (int i = 0; i < n; i++)
        idx[i] = i;
    MPI_CHECK(MPI_Group_translate_ranks(g, n, idx, w, tr));
    for (int i = 0; i < n; i++)
        CHECK(tr[i] == want[i], "%s: member %d is world %d, want %d", what, i, tr[i], want[i]);
    MPI_CHECK(MPI_Group_free(&w));
}

/* Checks the shape of an intercommunicator against the model. */
static void check_shape(MPI_Comm ic, const struct side *s, const char *what)
{
    int flag, lr, ls, rs, c = s->color;
    MPI_CHECK(MPI_Comm_test_inter(ic, &flag));
    CHECK(flag, "%s: not an intercommunicator", what);
    MPI_CHECK(MPI_Comm_rank(ic, &lr));
    MPI_CHECK(MPI_Comm_size(ic, &ls));
    MPI_CHECK(MPI_Comm_remote_size(ic, &rs));
    CHECK(lr == local_rank_of(s, c, rank) && ls == s->n[c] && rs == s->n[1 - c], "%s: rank %d size %d remote %d", what,
          lr, ls, rs);
    MPI_Group g;
    MPI_CHECK(MPI_Comm_group(ic, &g));
    check_group(g, s->world[c], s->n[c], what);
    MPI_CHECK(MPI_Group_free(&g));
    MPI_CHECK(MPI_Comm_remote_group(ic, &g));
    check_group(g, s->world[1 - c], s->n[1 - c], what);
    MPI_CHECK(MPI_Group_free(&g));
}

/* Every rank sends one message to every remote rank; each receives them all with ANY_SOURCE. */
static void check_p2p(MPI_Comm ic, const struct side *s, int tag, const char *what)
{
    int c = s->color, me = local_rank_of(s, c, rank), nr = s->n[1 - c];
    MPI_Request *req = mtest_malloc((size_t)nr * sizeof *req);
    int *out = mtest_malloc((size_t)nr * 2 * sizeof(int));
    for (int r = 0; r < nr; r++) {
        out[2 * r] = rank;
        out[2 * r + 1] = r;
        MPI_CHECK(MPI_Isend(&out[2 * r], 2, MPI_INT, r, tag, ic, &req[r]));
    }
    int *seen = calloc((size_t)nr, sizeof(int));
    for (int k = 0; k < nr; k++) {
        int in[2];
        MPI_Status st;
        MPI_CHECK(MPI_Recv(in, 2, MPI_INT, MPI_ANY_SOURCE, tag, ic, &st));
        int src = st.MPI_SOURCE;
        CHECK(src >= 0 && src < nr, "%s: source %d out of the remote group", what, src);
        CHECK(in[0] == s->world[1 - c][src] && in[1] == me, "%s: from remote %d got (%d, %d), want (%d, %d)", what, src,
              in[0], in[1], s->world[1 - c][src], me);
        CHECK(!seen[src], "%s: two messages from remote %d", what, src);
        seen[src] = 1;
    }
    MPI_CHECK(MPI_Waitall(nr, req, MPI_STATUSES_IGNORE));
    /* synchronous send to the remote rank with my local rank (mod), probed first */
    int dst = me % nr;
    int v = 1000 + rank;
    MPI_Request sr;
    MPI_CHECK(MPI_Issend(&v, 1, MPI_INT, dst, tag + 1, ic, &sr));
    /* the remote ranks that send to me: those with local rank % n_local == me */
    for (int r = 0; r < nr; r++) {
        if (r % s->n[c] != me)
            continue;
        MPI_Status st;
        MPI_CHECK(MPI_Probe(r, tag + 1, ic, &st));
        CHECK(st.MPI_SOURCE == r, "%s: probe source %d", what, st.MPI_SOURCE);
        int w = -1;
        MPI_CHECK(MPI_Recv(&w, 1, MPI_INT, r, tag + 1, ic, MPI_STATUS_IGNORE));
        CHECK(w == 1000 + s->world[1 - c][r], "%s: ssend payload %d", what, w);
    }
    MPI_CHECK(MPI_Wait(&sr, MPI_STATUS_IGNORE));
    free(seen);
    free(out);
    free(req);
}

static void check_merge(MPI_Comm ic, const struct side *s, int high0, int high1, const char *what)
{
    int c = s->color, high = c == 0 ? high0 : high1;
    MPI_Comm m;
    MPI_CHECK(MPI_Intercomm_merge(ic, high, &m));
    int flag, ms, mr;
    MPI_CHECK(MPI_Comm_test_inter(m, &flag));
    MPI_CHECK(MPI_Comm_size(m, &ms));
    MPI_CHECK(MPI_Comm_rank(m, &mr));
    CHECK(!flag && ms == size, "%s: merged size %d inter %d", what, ms, flag);
    int all[64];
    MPI_CHECK(MPI_Allgather(&rank, 1, MPI_INT, all, 1, MPI_INT, m));
    /* the group with high = false first; with equal values either order, the same everywhere */
    int first = high0 != high1 ? (high0 ? 1 : 0) : (local_rank_of(s, 0, all[0]) >= 0 ? 0 : 1);
    /* model: group `first` then the other, each in local order */
    int k = 0;
    for (int g = 0; g < 2; g++) {
        int gg = g == 0 ? first : 1 - first;
        for (int i = 0; i < s->n[gg]; i++, k++)
            CHECK(all[k] == s->world[gg][i], "%s: merged rank %d is world %d, want %d", what, k, all[k],
                  s->world[gg][i]);
    }
    CHECK(all[mr] == rank, "%s: my merged rank %d", what, mr);
    int x = rank, sum = 0;
    MPI_CHECK(MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, m));
    CHECK(sum == size * (size - 1) / 2, "%s: allreduce on merged %d", what, sum);
    MPI_CHECK(MPI_Comm_free(&m));
}

static void run_pair(int (*color_of)(int), const char *name)
{
    struct side s;
    make_side(&s, color_of);
    MPI_Comm local, ic;
    MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, s.color, rank, &local));
    int remote_leader = s.world[1 - s.color][0];
    MPI_CHECK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, remote_leader, 77, &ic));
    check_shape(ic, &s, name);
    check_p2p(ic, &s, 100, name);

    /* a message on the intercomm is not seen on local or world */
    int flag;
    MPI_Status st;
    MPI_CHECK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, local, &flag, &st));
    CHECK(!flag, "%s: a message leaked onto the local communicator", name);

    check_merge(ic, &s, 0, 1, name);
    check_merge(ic, &s, 1, 0, name);
    check_merge(ic, &s, 1, 1, name);

    /* dup and idup: same shape, separate messages */
    MPI_Comm d, id;
    MPI_Request r;
    MPI_CHECK(MPI_Comm_dup(ic, &d));
    MPI_CHECK(MPI_Comm_idup(ic, &id, &r));
    MPI_CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    check_shape(d, &s, "dup of intercomm");
    check_shape(id, &s, "idup of intercomm");
    int res;
    MPI_CHECK(MPI_Comm_compare(ic, d, &res));
    CHECK(res == MPI_CONGRUENT, "%s: compare(ic, dup) = %d", name, res);
    MPI_CHECK(MPI_Comm_compare(ic, ic, &res));
    CHECK(res == MPI_IDENT, "%s: compare(ic, ic) = %d", name, res);
    MPI_CHECK(MPI_Comm_compare(ic, local, &res));
    CHECK(res == MPI_UNEQUAL, "%s: compare(ic, local) = %d", name, res);
    check_p2p(id, &s, 200, "idup of intercomm");
    check_p2p(d, &s, 300, "dup of intercomm");
    MPI_CHECK(MPI_Comm_free(&id));
    MPI_CHECK(MPI_Comm_free(&d));

    /* split: color = local rank % 2 on both sides; key reverses */
    int lr;
    MPI_CHECK(MPI_Comm_rank(ic, &lr));
    MPI_Comm sp;
    MPI_CHECK(MPI_Comm_split(ic, lr % 2, -lr, &sp));
    struct side t;
    t.color = s.color;
    for (int g = 0; g < 2; g++) {
        t.n[g] = 0;
        for (int i = s.n[g] - 1; i >= 0; i--)
            if (i % 2 == lr % 2)
                t.world[g][t.n[g]++] = s.world[g][i];
    }
    if (t.n[0] > 0 && t.n[1] > 0) {
        check_shape(sp, &t, "split of intercomm");
        check_p2p(sp, &t, 400, "split of intercomm");
        MPI_CHECK(MPI_Comm_free(&sp));
    } else {
        CHECK(sp == MPI_COMM_NULL, "%s: split of intercomm with an empty side gave a communicator", name);
    }

    /* create: side 0 keeps its leader only, side 1 keeps everyone */
    MPI_Group lg, sub = MPI_GROUP_NULL;
    MPI_CHECK(MPI_Comm_group(ic, &lg));
    int zero = 0;
    if (s.color == 0)
        MPI_CHECK(MPI_Group_incl(lg, 1, &zero, &sub));
    MPI_Comm cr;
    MPI_CHECK(MPI_Comm_create(ic, s.color == 0 ? sub : lg, &cr));
    t = s;
    t.n[0] = 1;
    if (s.color == 0 && rank != s.world[0][0]) {
        CHECK(cr == MPI_COMM_NULL, "%s: create on intercomm: a rank outside the subgroup got a communicator", name);
    } else {
        check_shape(cr, &t, "create on intercomm");
        check_p2p(cr, &t, 500, "create on intercomm");
        MPI_CHECK(MPI_Comm_free(&cr));
    }
    if (sub != MPI_GROUP_NULL)
        MPI_CHECK(MPI_Group_free(&sub));
    MPI_CHECK(MPI_Group_free(&lg));

    /* an intercommunicator made with the other leader choice and a peer that is a dup */
    MPI_Comm peer, ic2;
    MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &peer));
    int ll = s.n[s.color] - 1, rl = s.world[1 - s.color][s.n[1 - s.color] - 1];
    MPI_CHECK(MPI_Intercomm_create(local, ll, peer, rl, 5, &ic2));
    check_shape(ic2, &s, "intercomm with last ranks as leaders");
    check_p2p(ic2, &s, 600, "intercomm with last ranks as leaders");
    MPI_CHECK(MPI_Comm_free(&ic2));
    MPI_CHECK(MPI_Comm_free(&peer));

    MPI_CHECK(MPI_Comm_free(&ic));
    MPI_CHECK(MPI_Comm_free(&local));
}

static void test_errors(void)
{
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    int n;
    MPI_Comm c;
    MPI_Group g;
    /* intercommunicator-only calls on an intracommunicator: Aptus says MPI_ERR_COMM (MPICH 4.0
     * answers remote_size and asserts in merge) */
    if (!mtest_known_bug("inter_calls_on_intracomm_unchecked")) {
        CHECK_ERRCLASS(MPI_Comm_remote_size(MPI_COMM_WORLD, &n), MPI_ERR_COMM, "remote_size(world)");
        CHECK_ERRCLASS(MPI_Comm_remote_group(MPI_COMM_WORLD, &g), MPI_ERR_COMM, "remote_group(world)");
        CHECK_ERRCLASS(MPI_Intercomm_merge(MPI_COMM_WORLD, 0, &c), MPI_ERR_COMM, "merge(world)");
    }
    CHECK_ERRCLASS(MPI_Intercomm_create(MPI_COMM_WORLD, size, MPI_COMM_WORLD, 0, 0, &c), MPI_ERR_RANK,
                   "intercomm_create with a bad local leader");
    CHECK_ERRCLASS(MPI_Intercomm_create(MPI_COMM_NULL, 0, MPI_COMM_WORLD, 0, 0, &c), MPI_ERR_COMM,
                   "intercomm_create(COMM_NULL)");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
    if (size < 2)
        return;
    /* intracommunicator-only calls on an intercommunicator */
    MPI_Comm local, ic;
    MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &local));
    MPI_CHECK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, 1 - rank % 2, 1, &ic));
    MPI_Comm_set_errhandler(ic, MPI_ERRORS_RETURN);
    int dims[1] = { 1 }, periods[1] = { 0 };
    CHECK_ERRCLASS(MPI_Cart_create(ic, 1, dims, periods, 0, &c), MPI_ERR_COMM, "Cart_create(intercomm)");
    MPI_CHECK(MPI_Comm_group(ic, &g));
    CHECK_ERRCLASS(MPI_Comm_create_group(ic, g, 0, &c), MPI_ERR_COMM, "create_group(intercomm)");
    CHECK_ERRCLASS(MPI_Intercomm_create(ic, 0, MPI_COMM_WORLD, 0, 0, &c), MPI_ERR_COMM,
                   "intercomm_create(local_comm = intercomm)");
    CHECK_ERRCLASS(MPI_Send(&n, 1, MPI_INT, size, 0, ic), MPI_ERR_RANK, "send to a rank past the remote group");
    MPI_CHECK(MPI_Group_free(&g));
    MPI_CHECK(MPI_Comm_free(&ic));
    MPI_CHECK(MPI_Comm_free(&local));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size <= 64, "test written for at most 64 ranks");
    if (size >= 2) {
        run_pair(parity, "even/odd");
        run_pair(upper, "low/high");
    }
    test_errors();
    return mtest_finalize();
}
