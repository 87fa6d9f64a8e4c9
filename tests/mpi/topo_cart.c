/* Cartesian topologies against a serial model (row-major coordinates): 1-D, 2-D and 3-D grids,
 * periodic and not, Cart_get / Cart_rank / Cart_coords / Cart_shift (wrap-around and
 * MPI_PROC_NULL at the edges, displacements 1, -1 and 2) with messages along the shifts,
 * Cart_sub, Cart_map, grids smaller than the communicator, zero dimensions, Comm_dup keeping the
 * topology, and the MPI_ERR_TOPOLOGY / MPI_ERR_DIMS / MPI_ERR_RANK / MPI_ERR_ARG cases. Any
 * number of ranks. */
#include "mtest.h"

/* The standard names no class for this error: either of two is right. */
#define CHECK_ERRCLASS2(rc, c1, c2, what)                                                                              \
    do {                                                                                                               \
        int cls_ = -1, rc_ = (rc);                                                                                     \
        MPI_Error_class(rc_, &cls_);                                                                                   \
        CHECK(rc_ != MPI_SUCCESS && (cls_ == (c1) || cls_ == (c2)), "%s: expected class %s or %s, got %d", (what),     \
              #c1, #c2, rc_ == MPI_SUCCESS ? 0 : cls_);                                                                \
    } while (0)

static int rank, size;

/* serial model */
static void model_coords(int nd, const int *dims, int r, int *coords)
{
    for (int d = nd - 1; d >= 0; d--) {
        coords[d] = r % dims[d];
        r /= dims[d];
    }
}

static int model_rank(int nd, const int *dims, const int *periods, const int *coords)
{
    int r = 0;
    for (int d = 0; d < nd; d++) {
        int c = coords[d];
        if (c < 0 || c >= dims[d]) {
            if (!periods[d])
                return MPI_PROC_NULL;
            c = ((c % dims[d]) + dims[d]) % dims[d];
        }
        r = r * dims[d] + c;
    }
    return r;
}

static int model_shift(int nd, const int *dims, const int *periods, int r, int dir, int disp)
{
    int c[8];
    model_coords(nd, dims, r, c);
    c[dir] += disp;
    return model_rank(nd, dims, periods, c);
}

static void check_grid(int nd, const int *dims, const int *periods, const char *what)
{
    int n = 1;
    for (int d = 0; d < nd; d++)
        n *= dims[d];
    MPI_Comm cart;
    MPI_CHECK(MPI_Cart_create(MPI_COMM_WORLD, nd, dims, periods, 0, &cart));
    int mapped;
    MPI_CHECK(MPI_Cart_map(MPI_COMM_WORLD, nd, dims, periods, &mapped));
    CHECK(mapped == (rank < n ? rank : MPI_UNDEFINED), "%s: Cart_map gave %d", what, mapped);
    if (rank >= n) {
        CHECK(cart == MPI_COMM_NULL, "%s: rank %d outside the grid got a communicator", what, rank);
        return;
    }
    CHECK(cart != MPI_COMM_NULL, "%s: MPI_COMM_NULL inside the grid", what);
    int t, nd2, r, s;
    MPI_CHECK(MPI_Topo_test(cart, &t));
    MPI_CHECK(MPI_Cartdim_get(cart, &nd2));
    MPI_CHECK(MPI_Comm_rank(cart, &r));
    MPI_CHECK(MPI_Comm_size(cart, &s));
    CHECK(t == MPI_CART && nd2 == nd && r == rank && s == n, "%s: topo %d ndims %d rank %d size %d", what, t, nd2, r,
          s);
    int gd[8], gp[8], gc[8], mc[8];
    MPI_CHECK(MPI_Cart_get(cart, 8, gd, gp, gc));
    model_coords(nd, dims, rank, mc);
    for (int d = 0; d < nd; d++)
        CHECK(gd[d] == dims[d] && !gp[d] == !periods[d] && gc[d] == mc[d], "%s: Cart_get dim %d: %d %d %d", what, d,
              gd[d], gp[d], gc[d]);
    for (int q = 0; q < n; q++) {
        int c[8], m[8], back;
        MPI_CHECK(MPI_Cart_coords(cart, q, 8, c));
        model_coords(nd, dims, q, m);
        for (int d = 0; d < nd; d++)
            CHECK(c[d] == m[d], "%s: coords of %d, dim %d: %d, want %d", what, q, d, c[d], m[d]);
        MPI_CHECK(MPI_Cart_rank(cart, c, &back));
        CHECK(back == q, "%s: Cart_rank(coords(%d)) = %d", what, q, back);
    }
    /* periodic wrap in Cart_rank: coordinates one period away */
    for (int d = 0; d < nd; d++) {
        if (!periods[d])
            continue;
        int c[8], got;
        model_coords(nd, dims, rank, c);
        c[d] += dims[d] * (d + 1);
        MPI_CHECK(MPI_Cart_rank(cart, c, &got));
        CHECK(got == rank, "%s: wrapped Cart_rank dim %d: %d", what, d, got);
        c[d] = -1;
        MPI_CHECK(MPI_Cart_rank(cart, c, &got));
        CHECK(got == model_rank(nd, dims, periods, c), "%s: Cart_rank with coordinate -1: %d", what, got);
    }
    /* shifts, and messages along them */
    int disps[3] = { 1, -1, 2 };
    for (int d = 0; d < nd; d++)
        for (int k = 0; k < 3; k++) {
            int src, dst;
            MPI_CHECK(MPI_Cart_shift(cart, d, disps[k], &src, &dst));
            int wsrc = model_shift(nd, dims, periods, rank, d, -disps[k]);
            int wdst = model_shift(nd, dims, periods, rank, d, disps[k]);
            CHECK(src == wsrc && dst == wdst, "%s: shift(dim %d, %d) = (%d, %d), want (%d, %d)", what, d, disps[k], src,
                  dst, wsrc, wdst);
            int out = rank * 10 + k, in = -7;
            MPI_Status st;
            MPI_CHECK(MPI_Sendrecv(&out, 1, MPI_INT, dst, 50 + k, &in, 1, MPI_INT, src, 50 + k, cart, &st));
            if (src == MPI_PROC_NULL)
                CHECK(in == -7 && st.MPI_SOURCE == MPI_PROC_NULL, "%s: receive from MPI_PROC_NULL changed data", what);
            else
                CHECK(in == src * 10 + k, "%s: shift message from %d: %d", what, src, in);
        }
    /* a dup keeps the topology */
    MPI_Comm dup;
    MPI_CHECK(MPI_Comm_dup(cart, &dup));
    int dd[8], dp[8], dc[8];
    MPI_CHECK(MPI_Topo_test(dup, &t));
    MPI_CHECK(MPI_Cart_get(dup, 8, dd, dp, dc));
    CHECK(t == MPI_CART, "%s: dup lost the topology", what);
    for (int d = 0; d < nd; d++)
        CHECK(dd[d] == dims[d] && dc[d] == mc[d], "%s: dup's Cart_get differs", what);
    MPI_CHECK(MPI_Comm_free(&dup));

    /* Cart_sub keeping each single dimension, then keeping none (every process gets its own
     * zero-dimensional communicator; MPICH 4.0 gives MPI_COMM_NULL to all but one) */
    for (int keep = 0; keep <= nd - mtest_known_bug("cart_sub_zero_dims"); keep++) {
        int remain[8];
        for (int d = 0; d < nd; d++)
            remain[d] = d == keep;
        MPI_Comm sub;
        MPI_CHECK(MPI_Cart_sub(cart, remain, &sub));
        int sr, ss, snd;
        MPI_CHECK(MPI_Comm_rank(sub, &sr));
        MPI_CHECK(MPI_Comm_size(sub, &ss));
        MPI_CHECK(MPI_Cartdim_get(sub, &snd));
        if (keep < nd) {
            CHECK(snd == 1 && ss == dims[keep] && sr == mc[keep], "%s: Cart_sub(dim %d): ndims %d size %d rank %d",
                  what, keep, snd, ss, sr);
            int sd, sp, sc;
            MPI_CHECK(MPI_Cart_get(sub, 1, &sd, &sp, &sc));
            CHECK(sd == dims[keep] && !sp == !periods[keep] && sc == mc[keep], "%s: Cart_sub(dim %d) Cart_get", what,
                  keep);
            /* members: the ranks differing from mine in dimension `keep` only */
            int sum = 0, want = 0, one = rank;
            MPI_CHECK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, sub));
            for (int i = 0; i < dims[keep]; i++) {
                int c[8];
                model_coords(nd, dims, rank, c);
                c[keep] = i;
                want += model_rank(nd, dims, periods, c);
            }
            CHECK(sum == want, "%s: Cart_sub(dim %d) members sum %d, want %d", what, keep, sum, want);
        } else {
            CHECK(snd == 0 && ss == 1 && sr == 0, "%s: Cart_sub(nothing): ndims %d size %d", what, snd, ss);
        }
        MPI_CHECK(MPI_Comm_free(&sub));
    }
    MPI_CHECK(MPI_Comm_free(&cart));
}

static void test_errors(void)
{
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm c;
    int dims[2] = { size + 1, 1 }, periods[2] = { 0, 0 }, nd, coords[2] = { 0, 0 }, r, s, d;
    CHECK_ERRCLASS2(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &c), MPI_ERR_DIMS, MPI_ERR_ARG,
                    "grid larger than comm");
    dims[0] = -1;
    if (!mtest_known_bug("cart_dims_unchecked"))
        CHECK_ERRCLASS(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &c), MPI_ERR_DIMS, "negative dimension");
    CHECK_ERRCLASS2(MPI_Cart_create(MPI_COMM_WORLD, -1, dims, periods, 0, &c), MPI_ERR_DIMS, MPI_ERR_ARG, "ndims -1");
    CHECK_ERRCLASS(MPI_Cartdim_get(MPI_COMM_WORLD, &nd), MPI_ERR_TOPOLOGY, "Cartdim_get(world)");
    CHECK_ERRCLASS(MPI_Cart_shift(MPI_COMM_WORLD, 0, 1, &r, &s), MPI_ERR_TOPOLOGY, "Cart_shift(world)");
    CHECK_ERRCLASS(MPI_Cart_rank(MPI_COMM_WORLD, coords, &r), MPI_ERR_TOPOLOGY, "Cart_rank(world)");
    dims[0] = size;
    MPI_CHECK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &c));
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    CHECK_ERRCLASS(MPI_Cart_coords(c, size, 2, coords), MPI_ERR_RANK, "Cart_coords(rank = size)");
    CHECK_ERRCLASS(MPI_Cart_shift(c, 2, 1, &r, &s), MPI_ERR_ARG, "Cart_shift(direction = ndims)");
    coords[0] = size;
    CHECK_ERRCLASS(MPI_Cart_rank(c, coords, &r), MPI_ERR_ARG, "Cart_rank outside a non-periodic dimension");
    CHECK_ERRCLASS(MPI_Graphdims_get(c, &r, &s), MPI_ERR_TOPOLOGY, "Graphdims_get(cart)");
    CHECK_ERRCLASS(MPI_Dist_graph_neighbors_count(c, &r, &s, &d), MPI_ERR_TOPOLOGY, "Dist_graph_neighbors_count(cart)");
    MPI_CHECK(MPI_Comm_free(&c));
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int d1[1] = { size }, p1[1] = { 1 }, p0[1] = { 0 };
    check_grid(1, d1, p1, "1-D periodic");
    check_grid(1, d1, p0, "1-D");
    int d2[2] = { 0, 0 };
    MPI_CHECK(MPI_Dims_create(size, 2, d2));
    int p11[2] = { 1, 1 }, p01[2] = { 0, 1 }, p00[2] = { 0, 0 };
    check_grid(2, d2, p11, "2-D periodic");
    check_grid(2, d2, p01, "2-D periodic in dim 1");
    check_grid(2, d2, p00, "2-D");
    int d3[3] = { 0, 0, 0 }, p101[3] = { 1, 0, 1 }, p000[3] = { 0, 0, 0 };
    MPI_CHECK(MPI_Dims_create(size, 3, d3));
    check_grid(3, d3, p101, "3-D periodic in dims 0 and 2");
    check_grid(3, d3, p000, "3-D");
    /* a grid one rank smaller than the communicator, and a 2 x k grid */
    if (size > 1) {
        int ds[1] = { size - 1 };
        check_grid(1, ds, p1, "1-D, one rank left out");
    }
    if (size >= 2) {
        int dk[2] = { 2, size / 2 };
        check_grid(2, dk, p01, "2 x k");
    }
    /* zero dimensions: rank 0 alone */
    MPI_Comm z;
    MPI_CHECK(MPI_Cart_create(MPI_COMM_WORLD, 0, NULL, NULL, 0, &z));
    if (rank == 0) {
        int nd = -1, s;
        MPI_CHECK(MPI_Cartdim_get(z, &nd));
        MPI_CHECK(MPI_Comm_size(z, &s));
        CHECK(nd == 0 && s == 1, "0-D: ndims %d size %d", nd, s);
        MPI_CHECK(MPI_Comm_free(&z));
    } else {
        CHECK(z == MPI_COMM_NULL, "0-D grid: rank %d got a communicator", rank);
    }
    test_errors();
    return mtest_finalize();
}
