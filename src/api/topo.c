/* Virtual topologies (MPI standard, chapter 8): Cartesian, graph and distributed graph
 * communicators, their queries, MPI_Dims_create, and the blocking neighborhood collectives.
 * Reordering is never done (rank i stays rank i). */
#include <stdlib.h>
#include <string.h>

#include "api/alias.h"
#include "api/check.h"
#include "coll/coll_internal.h"
#include "coll/neighbor.h"
#include "comm/create.h"
#include "core/op.h"
#include "core/topo.h"
#include "pt2pt/pt2pt.h"
#include "runtime/lock.h"

#define NEED_INTRA(c, FN)                                                                                              \
    if ((c)->is_inter)                                                                                                 \
    return aptus_error(c, MPI_ERR_COMM, FN, "virtual topologies need an intracommunicator, not an intercommunicator")

static const char *kind_name(int kind)
{
    return kind == MPI_CART ? "a Cartesian" : kind == MPI_GRAPH ? "a graph" : "a distributed graph";
}

#define GET_TOPO(t, c, KIND, FN)                                                                                       \
    struct aptus_topo *t = (c)->topo;                                                                                  \
    if (!t || t->kind != (KIND))                                                                                       \
    return aptus_error(c, MPI_ERR_TOPOLOGY, FN, "the communicator has %s topology, not %s one",                        \
                       t ? kind_name(t->kind) : "no", kind_name(KIND))

/* Attaches a topology to a new communicator (NULL topology: out of memory). */
static int attach(struct aptus_comm *c, struct aptus_comm *n, struct aptus_topo *t, MPI_Comm *out, const char *fn)
{
    if (!t) {
        aptus_comm_release(n);
        return aptus_error(c, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    n->topo = t;
    *out = n->handle;
    return MPI_SUCCESS;
}

/* A new communicator over the first `m` ranks of c (the others get NULL). */
static int first_ranks(struct aptus_comm *c, int m, struct aptus_comm **n, const char *fn)
{
    int *w = malloc((size_t)(m ? m : 1) * sizeof(int));
    if (!w)
        return aptus_error(c, MPI_ERR_NO_MEM, fn, "out of memory");
    for (int i = 0; i < m; i++)
        w[i] = aptus_comm_world_rank(c, i);
    int rc = aptus_comm_create_from(c, w, c->rank < m ? m : 0, n);
    free(w);
    if (rc)
        return aptus_error(c, rc, fn, rc == MPI_ERR_NO_MEM ? "out of memory" : "no free context id");
    return MPI_SUCCESS;
}

/* ---------------- Cartesian ---------------- */

/* Checks a grid description; *prod gets the number of processes it needs. */
static int check_grid(struct aptus_comm *c, int ndims, const int *dims, const int *periods, int *prod, const char *fn)
{
    if (ndims < 0)
        return aptus_error(c, MPI_ERR_DIMS, fn, "negative number of dimensions %d", ndims);
    if (ndims > 0 && (!dims || !periods))
        return aptus_error(c, MPI_ERR_ARG, fn, "null dims or periods array");
    long long p = 1;
    for (int d = 0; d < ndims; d++) {
        if (dims[d] <= 0)
            return aptus_error(c, MPI_ERR_DIMS, fn, "dims[%d] = %d (each dimension must be at least 1)", d, dims[d]);
        p *= dims[d];
        if (p > c->size)
            break;
    }
    if (p > c->size)
        return aptus_error(c, MPI_ERR_DIMS, fn, "the grid needs more processes than the communicator's %d", c->size);
    *prod = (int)p;
    return MPI_SUCCESS;
}

int PMPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[], int reorder,
                     MPI_Comm *comm_cart)
{
    APTUS_OUT_NULL(comm_cart, MPI_COMM_NULL);
    APTUS_API_LOCK();
    const char *fn = "MPI_Cart_create";
    GET_COMM(c, comm_old, fn);
    NEED_INTRA(c, fn);
    if (!comm_cart)
        return aptus_error(c, MPI_ERR_ARG, fn, "null comm_cart argument");
    int prod, rc = check_grid(c, ndims, dims, periods, &prod, fn);
    if (rc)
        return rc;
    struct aptus_comm *n;
    if ((rc = first_ranks(c, prod, &n, fn)))
        return rc;
    if (!n) {
        *comm_cart = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    return attach(c, n, aptus_topo_cart(ndims, dims, periods, n->rank), comm_cart, fn);
}
APTUS_ALIAS(Cart_create)

int PMPI_Cart_map(MPI_Comm comm, int ndims, const int dims[], const int periods[], int *newrank)
{
    APTUS_API_LOCK();
    const char *fn = "MPI_Cart_map";
    GET_COMM(c, comm, fn);
    NEED_INTRA(c, fn);
    if (!newrank)
        return aptus_error(c, MPI_ERR_ARG, fn, "null newrank argument");
    int prod, rc = check_grid(c, ndims, dims, periods, &prod, fn);
    if (rc)
        return rc;
    *newrank = c->rank < prod ? c->rank : MPI_UNDEFINED;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Cart_map)

int PMPI_Cartdim_get(MPI_Comm comm, int *ndims)
{
    APTUS_API_LOCK();
    GET_COMM(c, comm, "MPI_Cartdim_get");
    GET_TOPO(t, c, MPI_CART, "MPI_Cartdim_get");
    if (!ndims)
        return aptus_error(c, MPI_ERR_ARG, "MPI_Cartdim_get", "null ndims argument");
    *ndims = t->ndims;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Cartdim_get)

int PMPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[])
{
    APTUS_API_LOCK();
    const char *fn = "MPI_Cart_get";
    GET_COMM(c, comm, fn);
    GET_TOPO(t, c, MPI_CART, fn);
    if (maxdims < t->ndims)
        return aptus_error(c, MPI_ERR_ARG, fn, "maxdims %d is less than the %d dimensions", maxdims, t->ndims);
    if (t->ndims > 0 && (!dims || !periods || !coords))
        return aptus_error(c, MPI_ERR_ARG, fn, "null dims, periods or coords array");
    for (int d = 0; d < t->ndims; d++) {
        dims[d] = t->dims[d];
        periods[d] = t->periods[d];
    }
    aptus_cart_coords(t, c->rank, coords);
    return MPI_SUCCESS;
}
APTUS_ALIAS(Cart_get)

int PMPI_Cart_rank(MPI_Comm comm, const int coords[], int *rank)
{
    APTUS_API_LOCK();
    const char *fn = "MPI_Cart_rank";
    GET_COMM(c, comm, fn);
    GET_TOPO(t, c, MPI_CART, fn);
    if (!rank || (t->ndims > 0 && !coords))
        return aptus_error(c, MPI_ERR_ARG, fn, "null coords or rank argument");
    int r = aptus_cart_rank(t, coords);
    if (r < 0) {
        int d = 0;
        while (d < t->ndims && coords[d] >= 0 && coords[d] < t->dims[d])
            d++;
        return aptus_error(c, MPI_ERR_ARG, fn, "coordinate %d of dimension %d is outside 0..%d (not periodic)",
                           coords[d], d, t->dims[d] - 1);
    }
    *rank = r;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Cart_rank)

int PMPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[])
{
    APTUS_API_LOCK();
    const char *fn = "MPI_Cart_coords";
    GET_COMM(c, comm, fn);
    GET_TOPO(t, c, MPI_CART, fn);
    if (rank < 0 || rank >= c->size)
        return aptus_error(c, MPI_ERR_RANK, fn, "invalid rank %d (the communicator has %d ranks)", rank, c->size);
    if (maxdims < t->ndims)
        return aptus_error(c, MPI_ERR_ARG, fn, "maxdims %d is less than the %d dimensions", maxdims, t->ndims);
    if (t->ndims > 0 && !coords)
        return aptus_error(c, MPI_ERR_ARG, fn, "null coords array");
    aptus_cart_coords(t, rank, coords);
    return MPI_SUCCESS;
}
APTUS_ALIAS(Cart_coords)

int PMPI_Cart_shift(MPI_Comm comm, int direction, int disp, int *rank_source, int *rank_dest)
{
    APTUS_API_LOCK();
    const char *fn = "MPI_Cart_shift";
    GET_COMM(c, comm, fn);
    GET_TOPO(t, c, MPI_CART, fn);
    if (!rank_source || !rank_dest)
        return aptus_error(c, MPI_ERR_ARG, fn, "null rank_source or rank_dest argument");
    if (direction < 0 || direction >= t->ndims)
        return aptus_error(c, MPI_ERR_ARG, fn, "direction %d is not a dimension (the grid has %d)", direction,
                           t->ndims);
    aptus_cart_shift(t, c->rank, direction, disp, rank_source, rank_dest);
    return MPI_SUCCESS;
}
APTUS_ALIAS(Cart_shift)

int PMPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm)
{
    APTUS_OUT_NULL(newcomm, MPI_COMM_NULL);
    APTUS_API_LOCK();
    const char *fn = "MPI_Cart_sub";
    GET_COMM(c, comm, fn);
    GET_TOPO(t, c, MPI_CART, fn);
    if (!newcomm || (t->ndims > 0 && !remain_dims))
        return aptus_error(c, MPI_ERR_ARG, fn, "null remain_dims or newcomm argument");
    int nd = t->ndims > 0 ? t->ndims : 1;
    int coords[nd], dims[nd], periods[nd];
    aptus_cart_coords(t, c->rank, coords);
    /* color: the position along the dropped dimensions; key: the rank, which orders the
     * members row-major along the kept ones */
    int color = 0, k = 0;
    for (int d = 0; d < t->ndims; d++) {
        if (remain_dims[d]) {
            dims[k] = t->dims[d];
            periods[k++] = t->periods[d];
        } else {
            color = color * t->dims[d] + coords[d];
        }
    }
    struct aptus_comm *n;
    int rc = aptus_comm_split(c, color, c->rank, &n);
    if (rc)
        return aptus_error(c, rc, fn, rc == MPI_ERR_NO_MEM ? "out of memory" : "no free context id");
    return attach(c, n, aptus_topo_cart(k, dims, periods, n->rank), newcomm, fn);
}
APTUS_ALIAS(Cart_sub)

int PMPI_Dims_create(int nnodes, int ndims, int dims[])
{
    APTUS_API_LOCK();
    const char *fn = "MPI_Dims_create";
    API_INIT(fn);
    if (ndims < 0)
        return aptus_error(NULL, MPI_ERR_DIMS, fn, "negative number of dimensions %d", ndims);
    if (nnodes <= 0)
        return aptus_error(NULL, MPI_ERR_ARG, fn, "nnodes %d must be positive", nnodes);
    if (ndims > 0 && !dims)
        return aptus_error(NULL, MPI_ERR_ARG, fn, "null dims array");
    for (int d = 0; d < ndims; d++)
        if (dims[d] < 0)
            return aptus_error(NULL, MPI_ERR_DIMS, fn, "dims[%d] = %d is negative", d, dims[d]);
    int rc = aptus_dims_create(nnodes, ndims, dims);
    if (rc)
        return aptus_error(NULL, rc, fn, "the fixed entries of dims do not divide %d processes", nnodes);
    return MPI_SUCCESS;
}
APTUS_ALIAS(Dims_create)

/* ---------------- graph ---------------- */

static int check_graph(struct aptus_comm *c, int nnodes, const int *index, const int *edges, const char *fn)
{
    if (nnodes < 0 || nnodes > c->size)
        return aptus_error(c, MPI_ERR_ARG, fn, "nnodes %d is not between 0 and the communicator's %d ranks", nnodes,
                           c->size);
    if (nnodes > 0 && !index)
        return aptus_error(c, MPI_ERR_ARG, fn, "null index array");
    for (int i = 0; i < nnodes; i++)
        if (index[i] < (i ? index[i - 1] : 0))
            return aptus_error(c, MPI_ERR_ARG, fn, "index[%d] = %d is smaller than the entry before it", i, index[i]);
    int nedges = nnodes ? index[nnodes - 1] : 0;
    if (nedges > 0 && !edges)
        return aptus_error(c, MPI_ERR_ARG, fn, "null edges array");
    for (int i = 0; i < nedges; i++)
        if (edges[i] < 0 || edges[i] >= nnodes)
            return aptus_error(c, MPI_ERR_ARG, fn, "edges[%d] = %d is not a node (0..%d)", i, edges[i], nnodes - 1);
    return MPI_SUCCESS;
}

int PMPI_Graph_create(MPI_Comm comm_old, int nnodes, const int index[], const int edges[], int reorder,
                      MPI_Comm *comm_graph)
{
    APTUS_OUT_NULL(comm_graph, MPI_COMM_NULL);
    APTUS_API_LOCK();
    const char *fn = "MPI_Graph_create";
    GET_COMM(c, comm_old, fn);
    NEED_INTRA(c, fn);
    if (!comm_graph)
        return aptus_error(c, MPI_ERR_ARG, fn, "null comm_graph argument");
    int rc = check_graph(c, nnodes, index, edges, fn);
    if (rc)
        return rc;
    *comm_graph = MPI_COMM_NULL;
    if (nnodes == 0) /* MPI_COMM_NULL everywhere, as the standard says */
        return MPI_SUCCESS;
    struct aptus_comm *n;
    if ((rc = first_ranks(c, nnodes, &n, fn)))
        return rc;
    if (!n)
        return MPI_SUCCESS;
    return attach(c, n, aptus_topo_graph(nnodes, index, edges, n->rank), comm_graph, fn);
}
APTUS_ALIAS(Graph_create)

int PMPI_Graph_map(MPI_Comm comm, int nnodes, const int index[], const int edges[], int *newrank)
{
    APTUS_API_LOCK();
    const char *fn = "MPI_Graph_map";
    GET_COMM(c, comm, fn);
    NEED_INTRA(c, fn);
    if (!newrank)
        return aptus_error(c, MPI_ERR_ARG, fn, "null newrank argument");
    int rc = check_graph(c, nnodes, index, edges, fn);
    if (rc)
        return rc;
    *newrank = c->rank < nnodes ? c->rank : MPI_UNDEFINED;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Graph_map)

int PMPI_Graphdims_get(MPI_Comm comm, int *nnodes, int *nedges)
{
    APTUS_API_LOCK();
    GET_COMM(c, comm, "MPI_Graphdims_get");
    GET_TOPO(t, c, MPI_GRAPH, "MPI_Graphdims_get");
    if (!nnodes || !nedges)
        return aptus_error(c, MPI_ERR_ARG, "MPI_Graphdims_get", "null nnodes or nedges argument");
    *nnodes = t->nnodes;
    *nedges = t->nedges;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Graphdims_get)

int PMPI_Graph_get(MPI_Comm comm, int maxindex, int maxedges, int index[], int edges[])
{
    APTUS_API_LOCK();
    const char *fn = "MPI_Graph_get";
    GET_COMM(c, comm, fn);
    GET_TOPO(t, c, MPI_GRAPH, fn);
    if (maxindex < 0 || maxedges < 0)
        return aptus_error(c, MPI_ERR_ARG, fn, "negative maxindex or maxedges");
    int ni = maxindex < t->nnodes ? maxindex : t->nnodes, ne = maxedges < t->nedges ? maxedges : t->nedges;
    if ((ni > 0 && !index) || (ne > 0 && !edges))
        return aptus_error(c, MPI_ERR_ARG, fn, "null index or edges array");
    if (ni > 0)
        memcpy(index, t->index, (size_t)ni * sizeof(int));
    if (ne > 0)
        memcpy(edges, t->edges, (size_t)ne * sizeof(int));
    return MPI_SUCCESS;
}
APTUS_ALIAS(Graph_get)

int PMPI_Graph_neighbors_count(MPI_Comm comm, int rank, int *nneighbors)
{
    APTUS_API_LOCK();
    const char *fn = "MPI_Graph_neighbors_count";
    GET_COMM(c, comm, fn);
    GET_TOPO(t, c, MPI_GRAPH, fn);
    if (rank < 0 || rank >= t->nnodes)
        return aptus_error(c, MPI_ERR_RANK, fn, "invalid rank %d (the graph has %d nodes)", rank, t->nnodes);
    if (!nneighbors)
        return aptus_error(c, MPI_ERR_ARG, fn, "null nneighbors argument");
    *nneighbors = t->index[rank] - (rank ? t->index[rank - 1] : 0);
    return MPI_SUCCESS;
}
APTUS_ALIAS(Graph_neighbors_count)

int PMPI_Graph_neighbors(MPI_Comm comm, int rank, int maxneighbors, int neighbors[])
{
    APTUS_API_LOCK();
    const char *fn = "MPI_Graph_neighbors";
    GET_COMM(c, comm, fn);
    GET_TOPO(t, c, MPI_GRAPH, fn);
    if (rank < 0 || rank >= t->nnodes)
        return aptus_error(c, MPI_ERR_RANK, fn, "invalid rank %d (the graph has %d nodes)", rank, t->nnodes);
    if (maxneighbors < 0)
        return aptus_error(c, MPI_ERR_ARG, fn, "negative maxneighbors %d", maxneighbors);
    int first = rank ? t->index[rank - 1] : 0, n = t->index[rank] - first;
    if (n > maxneighbors)
        n = maxneighbors;
    if (n > 0 && !neighbors)
        return aptus_error(c, MPI_ERR_ARG, fn, "null neighbors array");
    if (n > 0)
        memcpy(neighbors, t->edges + first, (size_t)n * sizeof(int));
    return MPI_SUCCESS;
}
APTUS_ALIAS(Graph_neighbors)

int PMPI_Topo_test(MPI_Comm comm, int *status)
{
    APTUS_API_LOCK();
    GET_COMM(c, comm, "MPI_Topo_test");
    if (!status)
        return aptus_error(c, MPI_ERR_ARG, "MPI_Topo_test", "null status argument");
    *status = c->topo ? c->topo->kind : MPI_UNDEFINED;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Topo_test)

/* ---------------- distributed graph ---------------- */

/* Checks n ranks of c and their weights (w: NULL when unweighted). */
static int check_adj(struct aptus_comm *c, int n, const int *ranks, const int *w, const char *what, const char *fn)
{
    if (n < 0)
        return aptus_error(c, MPI_ERR_ARG, fn, "negative %s count %d", what, n);
    if (n > 0 && !ranks)
        return aptus_error(c, MPI_ERR_ARG, fn, "null %s array", what);
    for (int i = 0; i < n; i++) {
        if (ranks[i] < 0 || ranks[i] >= c->size)
            return aptus_error(c, MPI_ERR_RANK, fn, "%s[%d] = %d is not a rank (the communicator has %d)", what, i,
                               ranks[i], c->size);
        if (w && w[i] < 0)
            return aptus_error(c, MPI_ERR_ARG, fn, "%s weight %d is negative (%d)", what, i, w[i]);
    }
    return MPI_SUCCESS;
}

/* The weights argument as an array (NULL when there are none to read); *weighted says whether
 * the graph carries weights. */
static int weights_arg(struct aptus_comm *c, const int *w, int n, const int **arr, int *weighted, const char *fn)
{
    *weighted = w != MPI_UNWEIGHTED;
    *arr = NULL;
    if (w == MPI_UNWEIGHTED || w == MPI_WEIGHTS_EMPTY) {
        if (w == MPI_WEIGHTS_EMPTY && n > 0)
            return aptus_error(c, MPI_ERR_ARG, fn, "MPI_WEIGHTS_EMPTY given for %d edges", n);
        return MPI_SUCCESS;
    }
    if (n > 0 && !w)
        return aptus_error(c, MPI_ERR_ARG, fn, "null weights array (use MPI_UNWEIGHTED)");
    *arr = w;
    return MPI_SUCCESS;
}

int PMPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[], const int sourceweights[],
                                    int outdegree, const int destinations[], const int destweights[], MPI_Info info,
                                    int reorder, MPI_Comm *comm_dist_graph)
{
    APTUS_OUT_NULL(comm_dist_graph, MPI_COMM_NULL);
    APTUS_API_LOCK();
    const char *fn = "MPI_Dist_graph_create_adjacent";
    GET_COMM(c, comm_old, fn);
    NEED_INTRA(c, fn);
    if (!comm_dist_graph)
        return aptus_error(c, MPI_ERR_ARG, fn, "null comm_dist_graph argument");
    const int *sw, *dw;
    int wi, wo;
    int rc = weights_arg(c, sourceweights, indegree, &sw, &wi, fn);
    if (!rc)
        rc = weights_arg(c, destweights, outdegree, &dw, &wo, fn);
    if (!rc)
        rc = check_adj(c, indegree, sources, sw, "sources", fn);
    if (!rc)
        rc = check_adj(c, outdegree, destinations, dw, "destinations", fn);
    if (rc)
        return rc;
    struct aptus_comm *n;
    if ((rc = first_ranks(c, c->size, &n, fn)))
        return rc;
    return attach(c, n, aptus_topo_dist_graph(indegree, sources, sw, outdegree, destinations, dw, wi || wo),
                  comm_dist_graph, fn);
}
APTUS_ALIAS(Dist_graph_create_adjacent)

/* One edge as it travels to an endpoint: the endpoint's neighbour, the weight, and where it
 * came from (contributor rank, position in its list) for a deterministic order. */
struct dg_entry {
    int out; /* 1: an out-edge of the receiver (neighbour = destination), 0: an in-edge */
    int other, weight, from, idx;
};

static int dg_cmp(const void *a, const void *b)
{
    const struct dg_entry *x = a, *y = b;
    if (x->out != y->out)
        return x->out - y->out;
    if (x->from != y->from)
        return x->from < y->from ? -1 : 1;
    return x->idx < y->idx ? -1 : (x->idx > y->idx);
}

/* Sends every edge to both endpoints over the new communicator n and collects this process's
 * own, sorted (in-edges first). */
static int dg_exchange(struct aptus_comm *n, int cnt, const int *sources, const int *degrees, const int *dests,
                       const int *w, int weighted_here, struct dg_entry **mine, int *nmine, int *weighted)
{
    int size = n->size, me = n->rank, rc = 0;
    int nedges = 0;
    for (int i = 0; i < cnt; i++)
        nedges += degrees[i];
    uint32_t *vec = calloc((size_t)(2 * size + 1), sizeof(uint32_t));
    int *fill = calloc((size_t)size, sizeof(int));
    struct dg_entry *out = malloc((size_t)(2 * nedges + 1) * sizeof *out);
    int *start = malloc((size_t)(size + 1) * sizeof(int));
    if (!vec || !fill || !out || !start) {
        free(vec);
        free(fill);
        free(out);
        free(start);
        return MPI_ERR_NO_MEM;
    }
    /* counts per destination process, then the entries grouped by destination */
    for (int i = 0, k = 0; i < cnt; i++)
        for (int j = 0; j < degrees[i]; j++, k++) {
            vec[size + sources[i]]++;
            vec[size + dests[k]]++;
        }
    start[0] = 0;
    for (int p = 0; p < size; p++) {
        start[p + 1] = start[p] + (int)vec[size + p];
        vec[p] = vec[size + p] > 0;
    }
    for (int i = 0, k = 0; i < cnt; i++)
        for (int j = 0; j < degrees[i]; j++, k++) {
            int s = sources[i], d = dests[k], wt = w ? w[k] : 1;
            out[start[s] + fill[s]++] = (struct dg_entry){ 1, d, wt, me, 2 * k };
            out[start[d] + fill[d]++] = (struct dg_entry){ 0, s, wt, me, 2 * k + 1 };
        }
    vec[2 * size] = weighted_here ? 1 : 0;
    rc = aptus_allreduce_u32(n, vec, (size_t)(2 * size + 1), APTUS_OP_SUM);
    int nmsg = (int)vec[me], total = (int)vec[size + me];
    *weighted = vec[2 * size] > 0;
    struct dg_entry *in = malloc((size_t)(total + 1) * sizeof *in);
    struct aptus_request **sreq = malloc((size_t)(size + 1) * sizeof *sreq);
    int ns = 0;
    if (!rc && (!in || !sreq))
        rc = MPI_ERR_NO_MEM;
    int tag = APTUS_TAG_SEQ(n->mgmt_seq++, 3);
    uint16_t ctx = (uint16_t)(n->ctx + APTUS_CTX_MGMT);
    for (int p = 0; p < size && !rc; p++)
        if (fill[p] > 0)
            rc = aptus_coll_isend_on(n, ctx, out + start[p], (size_t)fill[p] * sizeof *out, p, tag, &sreq[ns++]);
    int got = 0;
    for (int m = 0; m < nmsg && !rc; m++) {
        struct aptus_request *r;
        rc = aptus_coll_irecv_on(n, ctx, in + got, (size_t)(total - got) * sizeof *in, MPI_ANY_SOURCE, tag, &r);
        if (!rc) {
            aptus_wait(r);
            rc = r->st_error;
            got += (int)(r->st_bytes / sizeof *in);
            aptus_req_free(r);
        }
    }
    aptus_coll_waitall(sreq, ns);
    free(sreq);
    free(vec);
    free(fill);
    free(out);
    free(start);
    if (rc) {
        free(in);
        return rc;
    }
    qsort(in, (size_t)got, sizeof *in, dg_cmp);
    *mine = in;
    *nmine = got;
    return MPI_SUCCESS;
}

int PMPI_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[], const int degrees[], const int destinations[],
                           const int weights[], MPI_Info info, int reorder, MPI_Comm *comm_dist_graph)
{
    APTUS_OUT_NULL(comm_dist_graph, MPI_COMM_NULL);
    APTUS_API_LOCK();
    const char *fn = "MPI_Dist_graph_create";
    GET_COMM(c, comm_old, fn);
    NEED_INTRA(c, fn);
    if (!comm_dist_graph)
        return aptus_error(c, MPI_ERR_ARG, fn, "null comm_dist_graph argument");
    if (n < 0)
        return aptus_error(c, MPI_ERR_ARG, fn, "negative number of sources %d", n);
    if (n > 0 && (!sources || !degrees))
        return aptus_error(c, MPI_ERR_ARG, fn, "null sources or degrees array");
    long long nedges = 0;
    for (int i = 0; i < n; i++) {
        if (degrees[i] < 0)
            return aptus_error(c, MPI_ERR_ARG, fn, "degrees[%d] = %d is negative", i, degrees[i]);
        nedges += degrees[i];
    }
    if (nedges > 0x3fffffff)
        return aptus_error(c, MPI_ERR_ARG, fn, "too many edges (%lld)", nedges);
    const int *w;
    int weighted_here;
    int rc = weights_arg(c, weights, (int)nedges, &w, &weighted_here, fn);
    if (!rc)
        rc = check_adj(c, n, sources, NULL, "sources", fn);
    if (!rc)
        rc = check_adj(c, (int)nedges, destinations, w, "destinations", fn);
    if (rc)
        return rc;
    struct aptus_comm *nc;
    if ((rc = first_ranks(c, c->size, &nc, fn)))
        return rc;
    struct dg_entry *e;
    int ne, weighted;
    rc = dg_exchange(nc, n, sources, degrees, destinations, w, weighted_here, &e, &ne, &weighted);
    if (rc) {
        aptus_comm_release(nc);
        return aptus_error(c, rc, fn, rc == MPI_ERR_NO_MEM ? "out of memory" : "the exchange of edges failed");
    }
    int nin = 0;
    while (nin < ne && !e[nin].out)
        nin++;
    int nout = ne - nin;
    int *l = malloc((size_t)(2 * ne + 1) * sizeof(int));
    struct aptus_topo *t = NULL;
    if (l) {
        for (int i = 0; i < ne; i++) {
            l[i] = e[i].other;
            l[ne + i] = e[i].weight;
        }
        t = aptus_topo_dist_graph(nin, l, l + ne, nout, l + nin, l + ne + nin, weighted);
    }
    free(l);
    free(e);
    return attach(c, nc, t, comm_dist_graph, fn);
}
APTUS_ALIAS(Dist_graph_create)

int PMPI_Dist_graph_neighbors_count(MPI_Comm comm, int *indegree, int *outdegree, int *weighted)
{
    APTUS_API_LOCK();
    const char *fn = "MPI_Dist_graph_neighbors_count";
    GET_COMM(c, comm, fn);
    GET_TOPO(t, c, MPI_DIST_GRAPH, fn);
    if (!indegree || !outdegree || !weighted)
        return aptus_error(c, MPI_ERR_ARG, fn, "null argument");
    *indegree = t->nin;
    *outdegree = t->nout;
    *weighted = t->weighted;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Dist_graph_neighbors_count)

int PMPI_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[], int sourceweights[], int maxoutdegree,
                              int destinations[], int destweights[])
{
    APTUS_API_LOCK();
    const char *fn = "MPI_Dist_graph_neighbors";
    GET_COMM(c, comm, fn);
    GET_TOPO(t, c, MPI_DIST_GRAPH, fn);
    if (maxindegree < t->nin || maxoutdegree < t->nout)
        return aptus_error(c, MPI_ERR_ARG, fn, "maxindegree %d / maxoutdegree %d are less than the degrees %d / %d",
                           maxindegree, maxoutdegree, t->nin, t->nout);
    if ((t->nin > 0 && !sources) || (t->nout > 0 && !destinations))
        return aptus_error(c, MPI_ERR_ARG, fn, "null sources or destinations array");
    for (int i = 0; i < t->nin; i++)
        sources[i] = t->in[i];
    for (int i = 0; i < t->nout; i++)
        destinations[i] = t->out[i];
    if (t->weighted) {
        if (sourceweights && sourceweights != MPI_UNWEIGHTED && sourceweights != MPI_WEIGHTS_EMPTY)
            for (int i = 0; i < t->nin; i++)
                sourceweights[i] = t->srcw[i];
        if (destweights && destweights != MPI_UNWEIGHTED && destweights != MPI_WEIGHTS_EMPTY)
            for (int i = 0; i < t->nout; i++)
                destweights[i] = t->dstw[i];
    }
    return MPI_SUCCESS;
}
APTUS_ALIAS(Dist_graph_neighbors)

/* ---------------- neighborhood collectives ---------------- */

/* req: NULL for the blocking forms; else the nonblocking form's request argument. */
#define CHK_REQ_ARG(c, req, FN)                                                                                        \
    if ((req) == (MPI_Request *)&nbr_blocking_marker)                                                                  \
        (req) = NULL;                                                                                                  \
    else if (!(req))                                                                                                   \
    return aptus_error(c, MPI_ERR_ARG, FN, "null request argument")

/* The nonblocking forms' request is MPI_REQUEST_NULL until they succeed. */
#define NBR_REQ_NULL(req)                                                                                              \
    if ((req) != (MPI_Request *)&nbr_blocking_marker)                                                                  \
    APTUS_OUT_NULL(req, MPI_REQUEST_NULL)

static int nbr_blocking_marker;
#define BLOCKING ((MPI_Request *)&nbr_blocking_marker)

#define GET_NBR_COMM(c, h, FN)                                                                                         \
    GET_COMM(c, h, FN);                                                                                                \
    NEED_INTRA(c, FN);                                                                                                 \
    if (!(c)->topo)                                                                                                    \
    return aptus_error(c, MPI_ERR_TOPOLOGY, FN, "the communicator has no virtual topology")

/* off: the block's displacement; a null buffer with a non-zero one is MPI_BOTTOM with an absolute
 * address. */
static int chk_buf(struct aptus_comm *c, const void *buf, MPI_Aint off, MPI_Count count, const struct aptus_dtype *d,
                   const char *fn)
{
    if (buf == MPI_IN_PLACE)
        return aptus_error(c, MPI_ERR_BUFFER, fn, "MPI_IN_PLACE is not allowed in neighborhood collectives");
    if (count < 0)
        return aptus_error(c, MPI_ERR_COUNT, fn, "negative count %lld", (long long)count);
    if (off == 0 && aptus_buf_missing(buf, (size_t)count * d->size, d))
        return aptus_error(c, MPI_ERR_BUFFER, fn, "null buffer for %lld elements", (long long)count);
    return MPI_SUCCESS;
}

/* Send blocks s[0..ns) and receive blocks r[0..nr) that share a byte: aliased arguments
 * (api/alias.h; without memory for the check it is left out). */
static int nbr_alias(struct aptus_comm *c, const struct aptus_nbr_buf *s, int ns, const struct aptus_nbr_buf *r, int nr,
                     const char *fn)
{
    if (ns == 0 || nr == 0)
        return MPI_SUCCESS;
    struct aptus_span *sp = malloc(sizeof *sp * (size_t)(ns + nr));
    if (!sp)
        return MPI_SUCCESS;
    for (int j = 0; j < ns; j++)
        sp[j] = aptus_span_of(s[j].buf, 0, s[j].count, s[j].dt);
    for (int j = 0; j < nr; j++)
        sp[ns + j] = aptus_span_of(r[j].buf, 0, r[j].count, r[j].dt);
    int aliased = aptus_spans_alias(sp, (size_t)ns, sp + ns, (size_t)nr);
    free(sp);
    if (aliased)
        return aptus_error(c, MPI_ERR_BUFFER, fn,
                           "the send and receive buffers overlap (aliased arguments, which neighborhood "
                           "collectives do not allow)");
    return MPI_SUCCESS;
}

/* Blocking (req NULL) or nonblocking. */
static int run(struct aptus_comm *c, struct aptus_nbr_buf *s, struct aptus_nbr_buf *r, MPI_Request *req, const char *fn)
{
    struct aptus_request *ur = NULL;
    int rc = req ? aptus_neighbor_iexchange(c, s, r, &ur) : aptus_neighbor_exchange(c, s, r);
    if (req && !rc)
        *req = (MPI_Request)ur;
    free(s);
    free(r);
    if (rc == MPI_ERR_TRUNCATE)
        return aptus_error(c, rc, fn, "a neighbour sent more data than its receive block holds");
    if (rc)
        return aptus_error(c, rc, fn, rc == MPI_ERR_NO_MEM ? "out of memory" : "communication with a neighbour failed");
    return MPI_SUCCESS;
}

/* Allocates the block lists (one more entry so that nothing is of size zero). */
static int blocks(struct aptus_comm *c, struct aptus_nbr_buf **s, struct aptus_nbr_buf **r, const char *fn)
{
    *s = calloc((size_t)c->topo->nout + 1, sizeof **s);
    *r = calloc((size_t)c->topo->nin + 1, sizeof **r);
    if (!*s || !*r) {
        free(*s);
        free(*r);
        return aptus_error(c, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    return MPI_SUCCESS;
}

/* kind: 0 allgather, 1 alltoall. Equal blocks. */
static int nbr_equal(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, MPI_Count rcount,
                     MPI_Datatype rtype, MPI_Comm comm, int alltoall, MPI_Request *req, const char *fn)
{
    NBR_REQ_NULL(req);
    GET_NBR_COMM(c, comm, fn);
    CHK_REQ_ARG(c, req, fn);
    GET_DTYPE(sd, stype, c, fn);
    GET_DTYPE(rd, rtype, c, fn);
    int rc = chk_buf(c, sbuf, 0, scount, sd, fn);
    if (!rc)
        rc = chk_buf(c, rbuf, 0, rcount, rd, fn);
    struct aptus_nbr_buf *s, *r;
    if (rc || (rc = blocks(c, &s, &r, fn)))
        return rc;
    for (int j = 0; j < c->topo->nout; j++)
        s[j] = (struct aptus_nbr_buf){ (const char *)sbuf + (alltoall ? (MPI_Aint)j * scount * sd->extent : 0),
                                       (size_t)scount, sd };
    for (int j = 0; j < c->topo->nin; j++)
        r[j] = (struct aptus_nbr_buf){ (char *)rbuf + (MPI_Aint)j * rcount * rd->extent, (size_t)rcount, rd };
    if ((rc = nbr_alias(c, s, c->topo->nout, r, c->topo->nin, fn))) {
        free(s);
        free(r);
        return rc;
    }
    return run(c, s, r, req, fn);
}

/* Varying blocks. !svary: one send block of scount for everybody (allgatherv). Displacements are
 * in elements of the type, or in bytes with per-block types (alltoallw). */
static int nbr_vary(const void *sbuf, MPI_Count scount, int svary, const MPI_Count *scounts, const MPI_Aint *sdispls,
                    const MPI_Datatype *stypes, MPI_Datatype stype, void *rbuf, const MPI_Count *rcounts,
                    const MPI_Aint *rdispls, const MPI_Datatype *rtypes, MPI_Datatype rtype, MPI_Comm comm,
                    MPI_Request *req, const char *fn)
{
    NBR_REQ_NULL(req);
    GET_NBR_COMM(c, comm, fn);
    CHK_REQ_ARG(c, req, fn);
    struct aptus_topo *t = c->topo;
    if ((t->nin > 0 && (!rcounts || !rdispls || (!rtypes && rtype == MPI_DATATYPE_NULL))) ||
        (svary && t->nout > 0 && (!scounts || !sdispls || (!stypes && stype == MPI_DATATYPE_NULL))))
        return aptus_error(c, MPI_ERR_ARG, fn, "null counts, displacements or types array");
    if (sbuf == MPI_IN_PLACE || rbuf == MPI_IN_PLACE)
        return aptus_error(c, MPI_ERR_BUFFER, fn, "MPI_IN_PLACE is not allowed in neighborhood collectives");
    struct aptus_nbr_buf *s, *r;
    int rc = blocks(c, &s, &r, fn);
    if (rc)
        return rc;
    for (int j = 0; j < t->nout && !rc; j++) {
        MPI_Datatype h = stypes ? stypes[j] : stype;
        const struct aptus_dtype *d = aptus_dtype_get(h);
        if (!d || !d->committed) {
            rc = aptus_error(c, MPI_ERR_TYPE, fn, "send type of block %d is invalid or not committed", j);
            break;
        }
        MPI_Count n = svary ? scounts[j] : scount;
        MPI_Aint off = !svary ? 0 : stypes ? sdispls[j] : sdispls[j] * d->extent;
        if ((rc = chk_buf(c, sbuf, off, n, d, fn)))
            break;
        s[j] = (struct aptus_nbr_buf){ (const char *)sbuf + off, (size_t)n, d };
    }
    for (int j = 0; j < t->nin && !rc; j++) {
        MPI_Datatype h = rtypes ? rtypes[j] : rtype;
        const struct aptus_dtype *d = aptus_dtype_get(h);
        if (!d || !d->committed) {
            rc = aptus_error(c, MPI_ERR_TYPE, fn, "receive type of block %d is invalid or not committed", j);
            break;
        }
        MPI_Aint off = rtypes ? rdispls[j] : rdispls[j] * d->extent;
        if ((rc = chk_buf(c, rbuf, off, rcounts[j], d, fn)))
            break;
        r[j] = (struct aptus_nbr_buf){ (char *)rbuf + off, (size_t)rcounts[j], d };
    }
    if (!rc)
        rc = nbr_alias(c, s, t->nout, r, t->nin, fn);
    if (rc) {
        free(s);
        free(r);
        return rc;
    }
    return run(c, s, r, req, fn);
}

/* int counts and displacements widened for nbr_vary. */
struct wide {
    MPI_Count *sc, *rc;
    MPI_Aint *sd, *rd;
};

static int widen(MPI_Comm comm, const int *sc, const int *sd, const int *rc, const int *rd, struct wide *w,
                 const char *fn)
{
    struct aptus_comm *c = aptus_comm_get(comm);
    memset(w, 0, sizeof *w);
    if (!c || !c->topo)
        return 0; /* nbr_vary reports it */
    int no = c->topo->nout, ni = c->topo->nin;
    w->sc = malloc((size_t)(no + 1) * sizeof(MPI_Count));
    w->sd = malloc((size_t)(no + 1) * sizeof(MPI_Aint));
    w->rc = malloc((size_t)(ni + 1) * sizeof(MPI_Count));
    w->rd = malloc((size_t)(ni + 1) * sizeof(MPI_Aint));
    if (!w->sc || !w->sd || !w->rc || !w->rd)
        return aptus_error(c, MPI_ERR_NO_MEM, fn, "out of memory");
    for (int j = 0; j < no; j++) {
        w->sc[j] = sc ? sc[j] : 0;
        w->sd[j] = sd ? sd[j] : 0;
    }
    for (int j = 0; j < ni; j++) {
        w->rc[j] = rc ? rc[j] : 0;
        w->rd[j] = rd ? rd[j] : 0;
    }
    return 0;
}

static void wide_free(struct wide *w)
{
    free(w->sc);
    free(w->sd);
    free(w->rc);
    free(w->rd);
}

/* The public forms: blocking (BLOCKING) and nonblocking (the user's request pointer), int and
 * MPI_Count/MPI_Aint arguments. */
#define NBR_EQUAL(NAME, INAME, CT, A2A)                                                                                \
    int PMPI_##NAME(const void *sendbuf, CT sendcount, MPI_Datatype sendtype, void *recvbuf, CT recvcount,             \
                    MPI_Datatype recvtype, MPI_Comm comm)                                                              \
    {                                                                                                                  \
        APTUS_API_LOCKED(                                                                                              \
            nbr_equal(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, A2A, BLOCKING, "MPI_" #NAME)); \
    }                                                                                                                  \
    APTUS_ALIAS(NAME)                                                                                                  \
    int PMPI_##INAME(const void *sendbuf, CT sendcount, MPI_Datatype sendtype, void *recvbuf, CT recvcount,            \
                     MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)                                       \
    {                                                                                                                  \
        APTUS_API_LOCKED(                                                                                              \
            nbr_equal(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, A2A, request, "MPI_" #INAME)); \
    }                                                                                                                  \
    APTUS_ALIAS(INAME)

NBR_EQUAL(Neighbor_allgather, Ineighbor_allgather, int, 0)
NBR_EQUAL(Neighbor_allgather_c, Ineighbor_allgather_c, MPI_Count, 0)
NBR_EQUAL(Neighbor_alltoall, Ineighbor_alltoall, int, 1)
NBR_EQUAL(Neighbor_alltoall_c, Ineighbor_alltoall_c, MPI_Count, 1)

static int allgatherv_int(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                          const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                          MPI_Request *req, const char *fn)
{
    NBR_REQ_NULL(req);
    API_INIT(fn);
    struct wide w;
    int rc = widen(comm, NULL, NULL, recvcounts, displs, &w, fn);
    if (!rc)
        rc = nbr_vary(sendbuf, sendcount, 0, NULL, NULL, NULL, sendtype, recvbuf, recvcounts ? w.rc : NULL,
                      displs ? w.rd : NULL, NULL, recvtype, comm, req, fn);
    wide_free(&w);
    return rc;
}

static int alltoallv_int(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                         void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                         MPI_Comm comm, MPI_Request *req, const char *fn)
{
    NBR_REQ_NULL(req);
    API_INIT(fn);
    struct wide w;
    int rc = widen(comm, sendcounts, sdispls, recvcounts, rdispls, &w, fn);
    if (!rc)
        rc = nbr_vary(sendbuf, 0, 1, sendcounts ? w.sc : NULL, sdispls ? w.sd : NULL, NULL, sendtype, recvbuf,
                      recvcounts ? w.rc : NULL, rdispls ? w.rd : NULL, NULL, recvtype, comm, req, fn);
    wide_free(&w);
    return rc;
}

static int alltoallw_int(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                         const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                         const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Request *req,
                         const char *fn)
{
    NBR_REQ_NULL(req);
    API_INIT(fn);
    struct wide w;
    int rc = widen(comm, sendcounts, NULL, recvcounts, NULL, &w, fn);
    if (!rc)
        rc = nbr_vary(sendbuf, 0, 1, sendcounts ? w.sc : NULL, sdispls, sendtypes, MPI_DATATYPE_NULL, recvbuf,
                      recvcounts ? w.rc : NULL, rdispls, recvtypes, MPI_DATATYPE_NULL, comm, req, fn);
    wide_free(&w);
    return rc;
}

int PMPI_Neighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                             const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm)
{
    APTUS_API_LOCKED(allgatherv_int(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, BLOCKING,
                                    "MPI_Neighbor_allgatherv"));
}
APTUS_ALIAS(Neighbor_allgatherv)

int PMPI_Ineighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                              const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                              MPI_Request *request)
{
    APTUS_API_LOCKED(allgatherv_int(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, request,
                                    "MPI_Ineighbor_allgatherv"));
}
APTUS_ALIAS(Ineighbor_allgatherv)

int PMPI_Neighbor_allgatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                               const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                               MPI_Comm comm)
{
    APTUS_API_LOCKED(nbr_vary(sendbuf, sendcount, 0, NULL, NULL, NULL, sendtype, recvbuf, recvcounts, displs, NULL,
                              recvtype, comm, BLOCKING, "MPI_Neighbor_allgatherv_c"));
}
APTUS_ALIAS(Neighbor_allgatherv_c)

int PMPI_Ineighbor_allgatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                                const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                                MPI_Comm comm, MPI_Request *request)
{
    APTUS_API_LOCKED(nbr_vary(sendbuf, sendcount, 0, NULL, NULL, NULL, sendtype, recvbuf, recvcounts, displs, NULL,
                              recvtype, comm, request, "MPI_Ineighbor_allgatherv_c"));
}
APTUS_ALIAS(Ineighbor_allgatherv_c)

int PMPI_Neighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                            void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                            MPI_Comm comm)
{
    APTUS_API_LOCKED(alltoallv_int(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm,
                                   BLOCKING, "MPI_Neighbor_alltoallv"));
}
APTUS_ALIAS(Neighbor_alltoallv)

int PMPI_Ineighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                             void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                             MPI_Comm comm, MPI_Request *request)
{
    APTUS_API_LOCKED(alltoallv_int(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm,
                                   request, "MPI_Ineighbor_alltoallv"));
}
APTUS_ALIAS(Ineighbor_alltoallv)

int PMPI_Neighbor_alltoallv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                              MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
                              const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    APTUS_API_LOCKED(nbr_vary(sendbuf, 0, 1, sendcounts, sdispls, NULL, sendtype, recvbuf, recvcounts, rdispls, NULL,
                              recvtype, comm, BLOCKING, "MPI_Neighbor_alltoallv_c"));
}
APTUS_ALIAS(Neighbor_alltoallv_c)

int PMPI_Ineighbor_alltoallv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                               MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
                               const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    APTUS_API_LOCKED(nbr_vary(sendbuf, 0, 1, sendcounts, sdispls, NULL, sendtype, recvbuf, recvcounts, rdispls, NULL,
                              recvtype, comm, request, "MPI_Ineighbor_alltoallv_c"));
}
APTUS_ALIAS(Ineighbor_alltoallv_c)

int PMPI_Neighbor_alltoallw(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                            const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                            const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    APTUS_API_LOCKED(alltoallw_int(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes,
                                   comm, BLOCKING, "MPI_Neighbor_alltoallw"));
}
APTUS_ALIAS(Neighbor_alltoallw)

int PMPI_Ineighbor_alltoallw(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                             const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                             const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                             MPI_Request *request)
{
    APTUS_API_LOCKED(alltoallw_int(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes,
                                   comm, request, "MPI_Ineighbor_alltoallw"));
}
APTUS_ALIAS(Ineighbor_alltoallw)

int PMPI_Neighbor_alltoallw_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                              const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[],
                              const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    APTUS_API_LOCKED(nbr_vary(sendbuf, 0, 1, sendcounts, sdispls, sendtypes, MPI_DATATYPE_NULL, recvbuf, recvcounts,
                              rdispls, recvtypes, MPI_DATATYPE_NULL, comm, BLOCKING, "MPI_Neighbor_alltoallw_c"));
}
APTUS_ALIAS(Neighbor_alltoallw_c)

int PMPI_Ineighbor_alltoallw_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                               const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[],
                               const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                               MPI_Request *request)
{
    APTUS_API_LOCKED(nbr_vary(sendbuf, 0, 1, sendcounts, sdispls, sendtypes, MPI_DATATYPE_NULL, recvbuf, recvcounts,
                              rdispls, recvtypes, MPI_DATATYPE_NULL, comm, request, "MPI_Ineighbor_alltoallw_c"));
}
APTUS_ALIAS(Ineighbor_alltoallw_c)

/* Persistent forms (MPI_Neighbor_*_init): the blocking form recorded as a schedule (coll/nbc.h). */

int PMPI_Neighbor_allgather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                 MPI_Request *request)
{
    APTUS_API_LOCK();
    APTUS_NB_BEGIN("MPI_Neighbor_allgather_init", info);
    return aptus_api_nb_end(nbr_equal(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, 0, BLOCKING,
                                      "MPI_Neighbor_allgather_init"),
                            comm, request, 1, NULL, 0, "MPI_Neighbor_allgather_init");
}
APTUS_ALIAS(Neighbor_allgather_init)

int PMPI_Neighbor_allgather_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                                   MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                   MPI_Request *request)
{
    APTUS_API_LOCK();
    APTUS_NB_BEGIN("MPI_Neighbor_allgather_init_c", info);
    return aptus_api_nb_end(nbr_equal(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, 0, BLOCKING,
                                      "MPI_Neighbor_allgather_init_c"),
                            comm, request, 1, NULL, 0, "MPI_Neighbor_allgather_init_c");
}
APTUS_ALIAS(Neighbor_allgather_init_c)

int PMPI_Neighbor_alltoall_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                                MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    APTUS_API_LOCK();
    APTUS_NB_BEGIN("MPI_Neighbor_alltoall_init", info);
    return aptus_api_nb_end(nbr_equal(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, 1, BLOCKING,
                                      "MPI_Neighbor_alltoall_init"),
                            comm, request, 1, NULL, 0, "MPI_Neighbor_alltoall_init");
}
APTUS_ALIAS(Neighbor_alltoall_init)

int PMPI_Neighbor_alltoall_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                                  MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                  MPI_Request *request)
{
    APTUS_API_LOCK();
    APTUS_NB_BEGIN("MPI_Neighbor_alltoall_init_c", info);
    return aptus_api_nb_end(nbr_equal(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, 1, BLOCKING,
                                      "MPI_Neighbor_alltoall_init_c"),
                            comm, request, 1, NULL, 0, "MPI_Neighbor_alltoall_init_c");
}
APTUS_ALIAS(Neighbor_alltoall_init_c)

int PMPI_Neighbor_allgatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                  const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                                  MPI_Info info, MPI_Request *request)
{
    APTUS_API_LOCK();
    APTUS_NB_BEGIN("MPI_Neighbor_allgatherv_init", info);
    return aptus_api_nb_end(allgatherv_int(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm,
                                           BLOCKING, "MPI_Neighbor_allgatherv_init"),
                            comm, request, 1, NULL, 0, "MPI_Neighbor_allgatherv_init");
}
APTUS_ALIAS(Neighbor_allgatherv_init)

int PMPI_Neighbor_allgatherv_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                                    const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                                    MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    APTUS_API_LOCK();
    APTUS_NB_BEGIN("MPI_Neighbor_allgatherv_init_c", info);
    return aptus_api_nb_end(nbr_vary(sendbuf, sendcount, 0, NULL, NULL, NULL, sendtype, recvbuf, recvcounts, displs,
                                     NULL, recvtype, comm, BLOCKING, "MPI_Neighbor_allgatherv_init_c"),
                            comm, request, 1, NULL, 0, "MPI_Neighbor_allgatherv_init_c");
}
APTUS_ALIAS(Neighbor_allgatherv_init_c)

int PMPI_Neighbor_alltoallv_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
                                 MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[],
                                 MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    APTUS_API_LOCK();
    APTUS_NB_BEGIN("MPI_Neighbor_alltoallv_init", info);
    return aptus_api_nb_end(alltoallv_int(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                                          recvtype, comm, BLOCKING, "MPI_Neighbor_alltoallv_init"),
                            comm, request, 1, NULL, 0, "MPI_Neighbor_alltoallv_init");
}
APTUS_ALIAS(Neighbor_alltoallv_init)

int PMPI_Neighbor_alltoallv_init_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                                   MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
                                   const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                   MPI_Request *request)
{
    APTUS_API_LOCK();
    APTUS_NB_BEGIN("MPI_Neighbor_alltoallv_init_c", info);
    return aptus_api_nb_end(nbr_vary(sendbuf, 0, 1, sendcounts, sdispls, NULL, sendtype, recvbuf, recvcounts, rdispls,
                                     NULL, recvtype, comm, BLOCKING, "MPI_Neighbor_alltoallv_init_c"),
                            comm, request, 1, NULL, 0, "MPI_Neighbor_alltoallv_init_c");
}
APTUS_ALIAS(Neighbor_alltoallv_init_c)

int PMPI_Neighbor_alltoallw_init(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                                 const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                                 const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info,
                                 MPI_Request *request)
{
    APTUS_API_LOCK();
    APTUS_NB_BEGIN("MPI_Neighbor_alltoallw_init", info);
    return aptus_api_nb_end(alltoallw_int(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                                          recvtypes, comm, BLOCKING, "MPI_Neighbor_alltoallw_init"),
                            comm, request, 1, NULL, 0, "MPI_Neighbor_alltoallw_init");
}
APTUS_ALIAS(Neighbor_alltoallw_init)

int PMPI_Neighbor_alltoallw_init_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                                   const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[],
                                   const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                                   MPI_Info info, MPI_Request *request)
{
    APTUS_API_LOCK();
    APTUS_NB_BEGIN("MPI_Neighbor_alltoallw_init_c", info);
    return aptus_api_nb_end(nbr_vary(sendbuf, 0, 1, sendcounts, sdispls, sendtypes, MPI_DATATYPE_NULL, recvbuf,
                                     recvcounts, rdispls, recvtypes, MPI_DATATYPE_NULL, comm, BLOCKING,
                                     "MPI_Neighbor_alltoallw_init_c"),
                            comm, request, 1, NULL, 0, "MPI_Neighbor_alltoallw_init_c");
}
APTUS_ALIAS(Neighbor_alltoallw_init_c)
