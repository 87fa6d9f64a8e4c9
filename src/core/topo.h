/* Virtual topologies (MPI standard, chapter 8): the Cartesian, graph and distributed graph
 * structures hung on a communicator, and the neighbour lists the neighborhood collectives use.
 *
 * A topology belongs to one communicator: MPI_Comm_dup copies it (aptus_topo_dup), freeing the
 * communicator frees it. Reordering is never done: rank i of the new communicator is rank i of
 * the old one (among the ranks that take part). */
#ifndef APTUS_CORE_TOPO_H
#define APTUS_CORE_TOPO_H

#include "core/objects.h"

struct aptus_topo {
    int kind; /* MPI_CART, MPI_GRAPH or MPI_DIST_GRAPH */
    /* Cartesian */
    int ndims;
    int *dims, *periods;
    /* graph: the whole graph, as given to MPI_Graph_create */
    int nnodes, nedges;
    int *index, *edges;
    /* distributed graph: this process's edges */
    int weighted;
    int *srcw, *dstw; /* weights (NULL when unweighted) */
    /* Neighbours of this process for the neighborhood collectives, in the standard's order:
     * nin sources (receive blocks) and nout destinations (send blocks); MPI_PROC_NULL entries
     * (Cartesian edges) keep their block. For Cartesian topologies in == out, 2 per dimension
     * (negative then positive direction); for graphs in == out == the adjacency list; for
     * distributed graphs the sources and destinations. */
    int nin, nout;
    int *in, *out;
};

void aptus_topo_free(struct aptus_topo *t);
/* A deep copy (MPI_Comm_dup). NULL in gives NULL; *ok is 0 when out of memory. */
struct aptus_topo *aptus_topo_dup(const struct aptus_topo *t, int *ok);

/* Builders. Each returns NULL when out of memory; the arrays are copied. */
/* A Cartesian topology for the member `rank` of a grid (ndims may be 0). */
struct aptus_topo *aptus_topo_cart(int ndims, const int *dims, const int *periods, int rank);
struct aptus_topo *aptus_topo_graph(int nnodes, const int *index, const int *edges, int rank);
/* sw / dw NULL: unweighted. */
struct aptus_topo *aptus_topo_dist_graph(int nin, const int *src, const int *sw, int nout, const int *dst,
                                         const int *dw, int weighted);

/* Cartesian helpers (t->kind == MPI_CART). */
void aptus_cart_coords(const struct aptus_topo *t, int rank, int *coords);
/* Rank of coords with periodic wrap; -1 when a non-periodic coordinate is out of range. */
int aptus_cart_rank(const struct aptus_topo *t, const int *coords);
/* Source and destination of a shift (MPI_PROC_NULL past a non-periodic edge). */
void aptus_cart_shift(const struct aptus_topo *t, int rank, int dir, int disp, int *src, int *dst);

/* Balanced factorisation of nnodes into ndims factors (MPI_Dims_create): entries of dims that
 * are > 0 are kept; the others are filled, in non-increasing order. Returns 0 or an MPI error
 * class (MPI_ERR_DIMS when the fixed entries do not divide nnodes or are negative). */
int aptus_dims_create(int nnodes, int ndims, int *dims);

/* Tags of neighborhood collectives on the management context (ctx + 2): negative, so they
 * never meet the communicator-creation tags. Block j travels with tag APTUS_TAG_NBR - k where k
 * is the sender's out index j for Cartesian topologies (and the receiver expects the opposite
 * direction of the same dimension, j ^ 1), 0 for graphs (order pairs repeated edges). */
#define APTUS_TAG_NBR (-16)

#endif
