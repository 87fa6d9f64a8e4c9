/* Graph and distributed graph topologies against a serial model: MPI_Graph_create (ring plus a
 * star around node 0, and a graph over fewer nodes than ranks), Graphdims_get, Graph_get,
 * Graph_neighbors(_count) of every node, Graph_map, Topo_test; MPI_Dist_graph_create_adjacent
 * (weighted and unweighted) and MPI_Dist_graph_create with edges given by processes other than
 * their endpoints, compared as multisets of (neighbour, weight); the error classes. Any number
 * of ranks. */
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

/* ring (both directions) plus a star: node 0 is connected to every node not already a ring
 * neighbour. Adjacency lists in increasing order, no repeats. */
static int build_graph(int n, int *index, int *edges)
{
    int e = 0;
    for (int v = 0; v < n; v++) {
        for (int u = 0; u < n; u++) {
            if (u == v)
                continue;
            int ring = u == (v + 1) % n || v == (u + 1) % n;
            int star = u == 0 || v == 0;
            if (ring || star)
                edges[e++] = u;
        }
        index[v] = e;
    }
    return e;
}

static void test_graph(int n)
{
    int index[64], edges[64 * 64];
    int ne = build_graph(n, index, edges);
    MPI_Comm g;
    MPI_CHECK(MPI_Graph_create(MPI_COMM_WORLD, n, index, edges, 0, &g));
    int mapped;
    MPI_CHECK(MPI_Graph_map(MPI_COMM_WORLD, n, index, edges, &mapped));
    CHECK(mapped == (rank < n ? rank : MPI_UNDEFINED), "Graph_map gave %d", mapped);
    if (rank >= n) {
        CHECK(g == MPI_COMM_NULL, "rank %d outside a %d-node graph got a communicator", rank, n);
        return;
    }
    int t, nn, nedges, s;
    MPI_CHECK(MPI_Topo_test(g, &t));
    MPI_CHECK(MPI_Graphdims_get(g, &nn, &nedges));
    MPI_CHECK(MPI_Comm_size(g, &s));
    CHECK(t == MPI_GRAPH && nn == n && nedges == ne && s == n, "graph: topo %d nnodes %d nedges %d size %d", t, nn,
          nedges, s);
    int gi[64], ge[64 * 64];
    MPI_CHECK(MPI_Graph_get(g, 64, 64 * 64, gi, ge));
    for (int i = 0; i < n; i++)
        CHECK(gi[i] == index[i], "Graph_get index[%d] = %d, want %d", i, gi[i], index[i]);
    for (int i = 0; i < ne; i++)
        CHECK(ge[i] == edges[i], "Graph_get edges[%d] = %d, want %d", i, ge[i], edges[i]);
    for (int v = 0; v < n; v++) {
        int cnt, nb[64], first = v ? index[v - 1] : 0;
        MPI_CHECK(MPI_Graph_neighbors_count(g, v, &cnt));
        CHECK(cnt == index[v] - first, "neighbors_count(%d) = %d", v, cnt);
        MPI_CHECK(MPI_Graph_neighbors(g, v, 64, nb));
        for (int i = 0; i < cnt; i++)
            CHECK(nb[i] == edges[first + i], "neighbors(%d)[%d] = %d", v, i, nb[i]);
    }
    MPI_Comm d;
    MPI_CHECK(MPI_Comm_dup(g, &d));
    MPI_CHECK(MPI_Graphdims_get(d, &nn, &nedges));
    CHECK(nn == n && nedges == ne, "dup of a graph communicator: %d %d", nn, nedges);
    MPI_CHECK(MPI_Comm_free(&d));
    MPI_CHECK(MPI_Comm_free(&g));
}

/* edge lists for the distributed graph: rank r describes, for source (r + 1) % size, edges to
 * r and to (r + 2) % size with weights 10 r + 1 and 10 r + 2; rank 0 also gives every source s
 * an edge to (2 s) % size with weight 1000 + s. */
struct edge {
    int s, d, w;
};

static int all_edges(struct edge *e)
{
    int n = 0;
    for (int r = 0; r < size; r++) {
        int s = (r + 1) % size;
        e[n++] = (struct edge){ s, r, 10 * r + 1 };
        e[n++] = (struct edge){ s, (r + 2) % size, 10 * r + 2 };
    }
    for (int s = 0; s < size; s++)
        e[n++] = (struct edge){ s, (2 * s) % size, 1000 + s };
    return n;
}

static int pair_cmp(const void *a, const void *b)
{
    const int *x = a, *y = b;
    return x[0] != y[0] ? x[0] - y[0] : x[1] - y[1];
}

/* compare (neighbour, weight) lists as multisets */
static void same_multiset(int n, const int *nb, const int *w, int m, int (*want)[2], const char *what)
{
    CHECK(n == m, "%s: %d neighbours, want %d", what, n, m);
    int(*got)[2] = mtest_malloc((size_t)(n + 1) * sizeof *got);
    for (int i = 0; i < n; i++) {
        got[i][0] = nb[i];
        got[i][1] = w ? w[i] : 0;
    }
    qsort(got, (size_t)n, sizeof *got, pair_cmp);
    qsort(want, (size_t)m, sizeof *want, pair_cmp);
    for (int i = 0; i < n; i++)
        CHECK(got[i][0] == want[i][0] && got[i][1] == want[i][1], "%s: entry %d is (%d, %d), want (%d, %d)", what, i,
              got[i][0], got[i][1], want[i][0], want[i][1]);
    free(got);
}

static void check_dist(MPI_Comm c, const struct edge *e, int ne, int weighted, const char *what)
{
    int t, indeg, outdeg, wflag;
    MPI_CHECK(MPI_Topo_test(c, &t));
    CHECK(t == MPI_DIST_GRAPH, "%s: topology %d", what, t);
    MPI_CHECK(MPI_Dist_graph_neighbors_count(c, &indeg, &outdeg, &wflag));
    CHECK(!wflag == !weighted, "%s: weighted flag %d", what, wflag);
    int(*win)[2] = mtest_malloc((size_t)(ne + 1) * sizeof *win),
    (*wout)[2] = mtest_malloc((size_t)(ne + 1) * sizeof *wout);
    int nin = 0, nout = 0;
    for (int i = 0; i < ne; i++) {
        if (e[i].d == rank) {
            win[nin][0] = e[i].s;
            win[nin++][1] = weighted ? e[i].w : 0;
        }
        if (e[i].s == rank) {
            wout[nout][0] = e[i].d;
            wout[nout++][1] = weighted ? e[i].w : 0;
        }
    }
    int *src = mtest_malloc((size_t)(indeg + 1) * sizeof(int)), *sw = mtest_malloc((size_t)(indeg + 1) * sizeof(int));
    int *dst = mtest_malloc((size_t)(outdeg + 1) * sizeof(int)), *dw = mtest_malloc((size_t)(outdeg + 1) * sizeof(int));
    if (weighted)
        MPI_CHECK(MPI_Dist_graph_neighbors(c, indeg, src, sw, outdeg, dst, dw));
    else
        MPI_CHECK(MPI_Dist_graph_neighbors(c, indeg, src, MPI_UNWEIGHTED, outdeg, dst, MPI_UNWEIGHTED));
    char buf[128];
    snprintf(buf, sizeof buf, "%s: sources", what);
    same_multiset(indeg, src, weighted ? sw : NULL, nin, win, buf);
    snprintf(buf, sizeof buf, "%s: destinations", what);
    same_multiset(outdeg, dst, weighted ? dw : NULL, nout, wout, buf);
    free(src);
    free(sw);
    free(dst);
    free(dw);
    free(win);
    free(wout);
}

static void test_dist(void)
{
    struct edge e[3 * 64];
    int ne = all_edges(e);

    /* adjacent: every process states its own edges */
    int src[3 * 64], sw[3 * 64], dst[3 * 64], dw[3 * 64], ni = 0, no = 0;
    for (int i = 0; i < ne; i++) {
        if (e[i].d == rank) {
            src[ni] = e[i].s;
            sw[ni++] = e[i].w;
        }
        if (e[i].s == rank) {
            dst[no] = e[i].d;
            dw[no++] = e[i].w;
        }
    }
    MPI_Comm c;
    MPI_CHECK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, ni, src, sw, no, dst, dw, MPI_INFO_NULL, 0, &c));
    check_dist(c, e, ne, 1, "create_adjacent weighted");
    MPI_Comm d;
    MPI_CHECK(MPI_Comm_dup(c, &d));
    check_dist(d, e, ne, 1, "dup of create_adjacent");
    MPI_CHECK(MPI_Comm_free(&d));
    MPI_CHECK(MPI_Comm_free(&c));
    MPI_CHECK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, ni, src, MPI_UNWEIGHTED, no, dst, MPI_UNWEIGHTED,
                                             MPI_INFO_NULL, 0, &c));
    check_dist(c, e, ne, 0, "create_adjacent unweighted");
    MPI_CHECK(MPI_Comm_free(&c));

    /* general: rank r gives the edges of source (r + 1) % size; rank 0 also one edge per source */
    int sources[65], degrees[65], dests[3 * 64], w[3 * 64], n = 0, k = 0;
    sources[n] = (rank + 1) % size;
    degrees[n++] = 2;
    dests[k] = rank;
    w[k++] = 10 * rank + 1;
    dests[k] = (rank + 2) % size;
    w[k++] = 10 * rank + 2;
    if (rank == 0)
        for (int s = 0; s < size; s++) {
            sources[n] = s;
            degrees[n++] = 1;
            dests[k] = (2 * s) % size;
            w[k++] = 1000 + s;
        }
    MPI_CHECK(MPI_Dist_graph_create(MPI_COMM_WORLD, n, sources, degrees, dests, w, MPI_INFO_NULL, 0, &c));
    check_dist(c, e, ne, 1, "Dist_graph_create weighted");
    MPI_CHECK(MPI_Comm_free(&c));
    MPI_CHECK(MPI_Dist_graph_create(MPI_COMM_WORLD, n, sources, degrees, dests, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &c));
    check_dist(c, e, ne, 0, "Dist_graph_create unweighted");
    MPI_CHECK(MPI_Comm_free(&c));
    /* nobody gives any edge */
    MPI_CHECK(MPI_Dist_graph_create(MPI_COMM_WORLD, 0, NULL, NULL, NULL, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &c));
    int indeg, outdeg, wf;
    MPI_CHECK(MPI_Dist_graph_neighbors_count(c, &indeg, &outdeg, &wf));
    CHECK(indeg == 0 && outdeg == 0, "empty dist graph: degrees %d %d", indeg, outdeg);
    MPI_CHECK(MPI_Comm_free(&c));
}

static void test_errors(void)
{
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm c;
    int index[2] = { 1, 2 }, edges[2] = { 1, 5 }, cnt, nb[4];
    CHECK_ERRCLASS(MPI_Graph_create(MPI_COMM_WORLD, size + 1, index, edges, 0, &c), MPI_ERR_ARG, "nnodes > size");
    if (size >= 2)
        CHECK_ERRCLASS(MPI_Graph_create(MPI_COMM_WORLD, 2, index, edges, 0, &c), MPI_ERR_ARG, "edge to node 5");
    CHECK_ERRCLASS(MPI_Graph_neighbors_count(MPI_COMM_WORLD, 0, &cnt), MPI_ERR_TOPOLOGY, "neighbors_count(world)");
    int bad = size;
    if (!mtest_known_bug("dist_graph_ranks_unchecked"))
        CHECK_ERRCLASS2(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &bad, MPI_UNWEIGHTED, 0, NULL, MPI_UNWEIGHTED,
                                                       MPI_INFO_NULL, 0, &c),
                        MPI_ERR_RANK, MPI_ERR_ARG, "adjacent source out of range");
    int idx1[1] = { 0 };
    MPI_CHECK(MPI_Graph_create(MPI_COMM_WORLD, 1, idx1, edges, 0, &c));
    if (rank == 0) {
        MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
        CHECK_ERRCLASS(MPI_Graph_neighbors(c, 1, 4, nb), MPI_ERR_RANK, "Graph_neighbors of node 1 of 1");
        int d;
        CHECK_ERRCLASS(MPI_Cartdim_get(c, &d), MPI_ERR_TOPOLOGY, "Cartdim_get(graph)");
        MPI_CHECK(MPI_Comm_free(&c));
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size <= 64, "test written for at most 64 ranks");
    test_graph(size);
    if (size > 1)
        test_graph(size - 1);
    MPI_Comm g;
    MPI_CHECK(MPI_Graph_create(MPI_COMM_WORLD, 0, NULL, NULL, 0, &g));
    CHECK(g == MPI_COMM_NULL, "a graph of 0 nodes gave a communicator");
    test_dist();
    test_errors();
    return mtest_finalize();
}
