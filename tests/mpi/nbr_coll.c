/* Neighborhood collectives against a serial reference: Neighbor_allgather(v), Neighbor_alltoall
 * (v, w; and the _c forms; Ineighbor_allgather and Ineighbor_alltoall_c in flight together) on Cartesian topologies
 * (1-D periodic, where with 1 or 2 ranks the same process is both neighbours and the blocks must still land by
 * direction; 2-D periodic and not, where MPI_PROC_NULL neighbours keep their untouched slots), on a graph and on a
 * distributed graph with asymmetric edges. alltoallw receives into a strided derived datatype.
 * Any number of ranks. */
#include "mtest.h"
#include "nbc_wrap.h"

static int rank, size;

#define SENTINEL (-99)

struct nbrs {
    int nin, nout;
    int in[128], out[128];
    int cart; /* Cartesian: the block from in[j] is the one the neighbour sent to direction j ^ 1 */
};

/* The out index of `me` in the source's out list (graph topologies: unique by construction). */
static int out_index_at(const int *all_out, const int *all_nout, int maxdeg, int src, int me)
{
    for (int j = 0; j < all_nout[src]; j++)
        if (all_out[src * maxdeg + j] == me)
            return j;
    return -1;
}

static int value(int r, int j, int k)
{
    return r * 10000 + j * 100 + k;
}

static int vcount(int j)
{
    return j % 3 + 1;
}

static void run_all(MPI_Comm c, const char *what)
{
    struct nbrs n;
    int t;
    MPI_CHECK(MPI_Topo_test(c, &t));
    n.cart = t == MPI_CART;
    if (t == MPI_CART) {
        int nd;
        MPI_CHECK(MPI_Cartdim_get(c, &nd));
        for (int d = 0; d < nd; d++)
            MPI_CHECK(MPI_Cart_shift(c, d, 1, &n.in[2 * d], &n.in[2 * d + 1]));
        n.nin = n.nout = 2 * nd;
        memcpy(n.out, n.in, sizeof n.in);
    } else if (t == MPI_GRAPH) {
        MPI_CHECK(MPI_Graph_neighbors_count(c, rank, &n.nin));
        MPI_CHECK(MPI_Graph_neighbors(c, rank, 128, n.in));
        n.nout = n.nin;
        memcpy(n.out, n.in, sizeof n.in);
    } else {
        int w;
        MPI_CHECK(MPI_Dist_graph_neighbors_count(c, &n.nin, &n.nout, &w));
        MPI_CHECK(MPI_Dist_graph_neighbors(c, 128, n.in, MPI_UNWEIGHTED, 128, n.out, MPI_UNWEIGHTED));
    }
    /* everyone's out lists, to know which of its blocks a source sends me */
    enum { MAXDEG = 128 };
    int *all_out = mtest_malloc((size_t)size * MAXDEG * sizeof(int)),
        *all_nout = mtest_malloc((size_t)size * sizeof(int));
    int myout[MAXDEG];
    for (int j = 0; j < MAXDEG; j++)
        myout[j] = j < n.nout ? n.out[j] : -1;
    MPI_CHECK(MPI_Allgather(myout, MAXDEG, MPI_INT, all_out, MAXDEG, MPI_INT, MPI_COMM_WORLD));
    MPI_CHECK(MPI_Allgather(&n.nout, 1, MPI_INT, all_nout, 1, MPI_INT, MPI_COMM_WORLD));
    int srcidx[MAXDEG]; /* for in-neighbour j: the sender's out index of the block for me */
    for (int j = 0; j < n.nin; j++) {
        if (n.in[j] == MPI_PROC_NULL)
            srcidx[j] = -1;
        else if (n.cart)
            srcidx[j] = j ^ 1;
        else
            srcidx[j] = out_index_at(all_out, all_nout, MAXDEG, n.in[j], rank);
        CHECK(n.in[j] == MPI_PROC_NULL || srcidx[j] >= 0, "%s: source %d does not list me", what, n.in[j]);
    }

    /* MPICH 4.0 pairs the two blocks exchanged with one neighbour (a periodic dimension of size
     * 1 or 2) by order instead of by direction in alltoall(v, w) */
    int repeated = 0;
    for (int j = 0; n.cart && j + 1 < n.nin; j += 2)
        repeated |= n.in[j] == n.in[j + 1] && n.in[j] != MPI_PROC_NULL;
    int skip_vw = repeated && mtest_known_bug("nbr_cart_repeated_neighbor");

    enum { CNT = 3 };
    int *sbuf = mtest_malloc((size_t)(n.nout + 1) * 4 * CNT * sizeof(int));
    int *rbuf = mtest_malloc((size_t)(n.nin + 1) * 4 * CNT * sizeof(int));

    /* allgather (int and _c) */
    for (int variant = 0; variant < 2; variant++) {
        for (int k = 0; k < CNT; k++)
            sbuf[k] = value(rank, 0, k);
        for (int i = 0; i < n.nin * CNT; i++)
            rbuf[i] = SENTINEL;
        if (variant == 0)
            MPI_CHECK(MPI_Neighbor_allgather(sbuf, CNT, MPI_INT, rbuf, CNT, MPI_INT, c));
        else
            MPI_CHECK(MPI_Neighbor_allgather_c(sbuf, CNT, MPI_INT, rbuf, CNT, MPI_INT, c));
        for (int j = 0; j < n.nin; j++)
            for (int k = 0; k < CNT; k++) {
                int want = n.in[j] == MPI_PROC_NULL ? SENTINEL : value(n.in[j], 0, k);
                CHECK(rbuf[j * CNT + k] == want, "%s: allgather%s block %d [%d] = %d, want %d", what,
                      variant ? "_c" : "", j, k, rbuf[j * CNT + k], want);
            }
    }

    /* allgatherv: block j of vcount(j) elements at displacement 4 j (a gap after each) */
    {
        int rc[MAXDEG], rd[MAXDEG];
        for (int j = 0; j < n.nin; j++) {
            rc[j] = CNT;
            rd[j] = 4 * j + 1;
        }
        for (int i = 0; i < 4 * n.nin + 4; i++)
            rbuf[i] = SENTINEL;
        MPI_CHECK(MPI_Neighbor_allgatherv(sbuf, CNT, MPI_INT, rbuf, rc, rd, MPI_INT, c));
        for (int j = 0; j < n.nin; j++) {
            CHECK(rbuf[4 * j] == SENTINEL, "%s: allgatherv wrote into a gap", what);
            for (int k = 0; k < CNT; k++) {
                int want = n.in[j] == MPI_PROC_NULL ? SENTINEL : value(n.in[j], 0, k);
                CHECK(rbuf[4 * j + 1 + k] == want, "%s: allgatherv block %d [%d] = %d, want %d", what, j, k,
                      rbuf[4 * j + 1 + k], want);
            }
        }
    }

    /* alltoall (int and _c) */
    for (int variant = 0; variant < 2 && !skip_vw; variant++) {
        for (int j = 0; j < n.nout; j++)
            for (int k = 0; k < CNT; k++)
                sbuf[j * CNT + k] = value(rank, j, k);
        for (int i = 0; i < n.nin * CNT; i++)
            rbuf[i] = SENTINEL;
        if (variant == 0)
            MPI_CHECK(MPI_Neighbor_alltoall(sbuf, CNT, MPI_INT, rbuf, CNT, MPI_INT, c));
        else
            MPI_CHECK(MPI_Neighbor_alltoall_c(sbuf, CNT, MPI_INT, rbuf, CNT, MPI_INT, c));
        for (int j = 0; j < n.nin; j++)
            for (int k = 0; k < CNT; k++) {
                int want = n.in[j] == MPI_PROC_NULL ? SENTINEL : value(n.in[j], srcidx[j], k);
                CHECK(rbuf[j * CNT + k] == want, "%s: alltoall%s block %d [%d] = %d, want %d", what,
                      variant ? "_c" : "", j, k, rbuf[j * CNT + k], want);
            }
    }

    /* alltoallv (int and _c): out block j has vcount(j) elements at displacement 4 j; in block j
     * has vcount(sender's index) elements at 4 (nin - 1 - j) (reversed layout) */
    for (int variant = 0; variant < 2 && !skip_vw; variant++) {
        int sc[MAXDEG], sd[MAXDEG], rc[MAXDEG], rd[MAXDEG];
        MPI_Count scc[MAXDEG], rcc[MAXDEG];
        MPI_Aint sdc[MAXDEG], rdc[MAXDEG];
        for (int j = 0; j < n.nout; j++) {
            sc[j] = scc[j] = vcount(j);
            sd[j] = sdc[j] = 4 * j;
            for (int k = 0; k < sc[j]; k++)
                sbuf[4 * j + k] = value(rank, j, k);
        }
        for (int j = 0; j < n.nin; j++) {
            rc[j] = rcc[j] = srcidx[j] >= 0 ? vcount(srcidx[j]) : 2;
            rd[j] = rdc[j] = 4 * (n.nin - 1 - j);
        }
        for (int i = 0; i < 4 * n.nin + 4; i++)
            rbuf[i] = SENTINEL;
        if (variant == 0)
            MPI_CHECK(MPI_Neighbor_alltoallv(sbuf, sc, sd, MPI_INT, rbuf, rc, rd, MPI_INT, c));
        else
            MPI_CHECK(MPI_Neighbor_alltoallv_c(sbuf, scc, sdc, MPI_INT, rbuf, rcc, rdc, MPI_INT, c));
        for (int j = 0; j < n.nin; j++)
            for (int k = 0; k < 4; k++) {
                int want = n.in[j] == MPI_PROC_NULL || k >= rc[j] ? SENTINEL : value(n.in[j], srcidx[j], k);
                CHECK(rbuf[rd[j] + k] == want, "%s: alltoallv%s block %d [%d] = %d, want %d", what, variant ? "_c" : "",
                      j, k, rbuf[rd[j] + k], want);
            }
    }

    /* alltoallw: byte displacements; receives into a vector type (every other int) */
    if (!skip_vw) {
        MPI_Datatype vec;
        MPI_CHECK(MPI_Type_vector(CNT, 1, 2, MPI_INT, &vec));
        MPI_CHECK(MPI_Type_commit(&vec));
        int sc[MAXDEG], rc[MAXDEG];
        MPI_Aint sd[MAXDEG], rd[MAXDEG];
        MPI_Datatype st[MAXDEG], rt[MAXDEG];
        for (int j = 0; j < n.nout; j++) {
            sc[j] = CNT;
            sd[j] = (MPI_Aint)(j * CNT * sizeof(int));
            st[j] = MPI_INT;
            for (int k = 0; k < CNT; k++)
                sbuf[j * CNT + k] = value(rank, j, k) + 7;
        }
        for (int j = 0; j < n.nin; j++) {
            rc[j] = 1;
            rd[j] = (MPI_Aint)(j * 2 * CNT * sizeof(int));
            rt[j] = vec;
        }
        for (int i = 0; i < 2 * CNT * n.nin; i++)
            rbuf[i] = SENTINEL;
        MPI_CHECK(MPI_Neighbor_alltoallw(sbuf, sc, sd, st, rbuf, rc, rd, rt, c));
        for (int j = 0; j < n.nin; j++)
            for (int k = 0; k < 2 * CNT; k++) {
                int want = n.in[j] == MPI_PROC_NULL || k % 2 ? SENTINEL : value(n.in[j], srcidx[j], k / 2) + 7;
                CHECK(rbuf[j * 2 * CNT + k] == want, "%s: alltoallw block %d [%d] = %d, want %d", what, j, k,
                      rbuf[j * 2 * CNT + k], want);
            }
        MPI_CHECK(MPI_Type_free(&vec));
    }
    /* nonblocking: Ineighbor_allgather and Ineighbor_alltoall(_c / v) in flight together, then one
     * Waitall; the two receive buffers are distinct */
    {
        int *rbuf2 = mtest_malloc((size_t)(n.nin + 1) * CNT * sizeof(int));
        int *sbuf2 = mtest_malloc((size_t)(n.nout + 1) * CNT * sizeof(int));
        int mine[CNT];
        for (int k = 0; k < CNT; k++)
            mine[k] = value(rank, 0, k) + 3;
        for (int j = 0; j < n.nout; j++)
            for (int k = 0; k < CNT; k++)
                sbuf2[j * CNT + k] = value(rank, j, k) + 5;
        for (int i = 0; i < n.nin * CNT; i++)
            rbuf[i] = rbuf2[i] = SENTINEL;
        MPI_Request req[2];
        MPI_CHECK(MPI_Ineighbor_allgather(mine, CNT, MPI_INT, rbuf, CNT, MPI_INT, c, &req[0]));
        if (skip_vw) {
            req[1] = MPI_REQUEST_NULL;
        } else {
            MPI_CHECK(MPI_Ineighbor_alltoall_c(sbuf2, CNT, MPI_INT, rbuf2, CNT, MPI_INT, c, &req[1]));
        }
        MPI_CHECK(MPI_Waitall(2, req, MPI_STATUSES_IGNORE));
        for (int j = 0; j < n.nin; j++)
            for (int k = 0; k < CNT; k++) {
                int null = n.in[j] == MPI_PROC_NULL;
                int w1 = null ? SENTINEL : value(n.in[j], 0, k) + 3;
                int w2 = null || skip_vw ? SENTINEL : value(n.in[j], srcidx[j], k) + 5;
                CHECK(rbuf[j * CNT + k] == w1, "%s: Ineighbor_allgather block %d [%d] = %d, want %d", what, j, k,
                      rbuf[j * CNT + k], w1);
                CHECK(rbuf2[j * CNT + k] == w2, "%s: Ineighbor_alltoall_c block %d [%d] = %d, want %d", what, j, k,
                      rbuf2[j * CNT + k], w2);
            }
        free(rbuf2);
        free(sbuf2);
    }
    free(sbuf);
    free(rbuf);
    free(all_out);
    free(all_nout);
}

static void test_errors(void)
{
    int x = 0, y[8];
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK_ERRCLASS(MPI_Neighbor_allgather(&x, 1, MPI_INT, y, 1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_TOPOLOGY,
                   "Neighbor_allgather without a topology");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size <= 64, "test written for at most 64 ranks");
    MPI_Comm c;
    int d1[1] = { size }, p1[1] = { 1 };
    MPI_CHECK(MPI_Cart_create(MPI_COMM_WORLD, 1, d1, p1, 0, &c));
    run_all(c, "1-D periodic");
    MPI_CHECK(MPI_Comm_free(&c));
    int d2[2] = { 0, 0 }, p11[2] = { 1, 1 }, p00[2] = { 0, 0 };
    MPI_CHECK(MPI_Dims_create(size, 2, d2));
    MPI_CHECK(MPI_Cart_create(MPI_COMM_WORLD, 2, d2, p11, 0, &c));
    run_all(c, "2-D periodic");
    MPI_CHECK(MPI_Comm_free(&c));
    MPI_CHECK(MPI_Cart_create(MPI_COMM_WORLD, 2, d2, p00, 0, &c));
    run_all(c, "2-D");
    MPI_CHECK(MPI_Comm_free(&c));

    /* graph: ring plus star around 0 (symmetric, no repeated edges) */
    int index[64], edges[64 * 64], e = 0;
    for (int v = 0; v < size; v++) {
        for (int u = 0; u < size; u++)
            if (u != v && (u == (v + 1) % size || v == (u + 1) % size || u == 0 || v == 0))
                edges[e++] = u;
        index[v] = e;
    }
    MPI_CHECK(MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &c));
    run_all(c, "graph");
    MPI_CHECK(MPI_Comm_free(&c));

    /* distributed graph: r -> r+1 and r -> r+3 (distinct targets only), given by the source's
     * predecessor; asymmetric */
    int src = (rank + 1) % size, dst[2], nd = 0;
    dst[nd++] = (src + 1) % size;
    if ((src + 3) % size != dst[0])
        dst[nd++] = (src + 3) % size;
    int deg = nd;
    MPI_CHECK(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &src, &deg, dst, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &c));
    run_all(c, "distributed graph");
    MPI_CHECK(MPI_Comm_free(&c));
    test_errors();
    return mtest_finalize();
}
