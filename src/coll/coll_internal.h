/* Internals shared by the collective algorithms (the files of src/coll): messages on a communicator's
 * collective context, per-call tags, algorithm selection, and the layout of reduction data.
 *
 * Every collective call takes one fresh tag base from the communicator (aptus_coll_tag) and
 * sends all of its messages with tags base + phase (phase < APTUS_COLL_PHASES). Every member
 * calls the collectives of a communicator in the same order, so the bases agree; two
 * consecutive collectives never share a tag, even between ranks that are not otherwise
 * synchronized. Messages between the same pair within one phase match in sending order (MPI's
 * non-overtaking rule); algorithms post their receives in that order. */
#ifndef APTUS_COLL_COLL_INTERNAL_H
#define APTUS_COLL_COLL_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "coll/coll.h"
#include "core/objects.h"
#include "core/op.h"
#include "pt2pt/pt2pt.h"

/* ---- transport ---------------------------------------------------------------------------- */

#define APTUS_COLL_PHASES 16

/* A fresh tag base for one collective call on c (advances c->coll_seq; while a schedule is
 * recorded, the nonblocking collectives' sequence: aptus_coll_nbc_tag). */
int aptus_coll_tag(struct aptus_comm *c);
int aptus_coll_nbc_tag(struct aptus_comm *c);

/* Point-to-point on c's collective context (ctx + 1); ranks are c's point-to-point ranks (the
 * remote group on an intercommunicator). Return 0 or an MPI error class. The nonblocking forms
 * store the request in *req (NULL on failure); finish them with aptus_coll_waitall. */
int aptus_coll_isend(struct aptus_comm *c, const void *buf, size_t bytes, int dst, int tag, struct aptus_request **req);
int aptus_coll_irecv(struct aptus_comm *c, void *buf, size_t bytes, int src, int tag, struct aptus_request **req);
/* aptus_coll_isend for a caller that waits for the send before it goes on (a blocking
 * collective): no HYBRID copy (the receiver reads the data where it is, or the sender writes it
 * into the receiver's buffer). In a schedule being recorded, aptus_coll_isend. */
int aptus_coll_isend_wait(struct aptus_comm *c, const void *buf, size_t bytes, int dst, int tag,
                          struct aptus_request **req);
/* The same on another context of c (e.g. c->ctx + 2 for neighborhood collectives). */
int aptus_coll_isend_on(struct aptus_comm *c, uint16_t ctx, const void *buf, size_t bytes, int dst, int tag,
                        struct aptus_request **req);
int aptus_coll_irecv_on(struct aptus_comm *c, uint16_t ctx, void *buf, size_t bytes, int src, int tag,
                        struct aptus_request **req);
/* Starts a send (kind APTUS_REQ_SEND) or a receive of `bytes` packed bytes at buf, or (dt
 * non-NULL) of `count` elements of dt, on context ctx of c; MPI_PROC_NULL completes at once.
 * The schedules of coll/nbc.c start their messages with it too. */
int aptus_coll_start_msg(int kind, struct aptus_comm *c, uint16_t ctx, void *buf, size_t bytes,
                         const struct aptus_dtype *dt, size_t count, int peer, int tag, struct aptus_request **req);
/* Waits for every non-NULL request, frees them (setting the entries to NULL) and returns the
 * first error (receive errors such as MPI_ERR_TRUNCATE included). */
int aptus_coll_waitall(struct aptus_request **reqs, int n);
int aptus_coll_send(struct aptus_comm *c, const void *buf, size_t bytes, int dst, int tag);
int aptus_coll_recv(struct aptus_comm *c, void *buf, size_t bytes, int src, int tag);
/* Sends to dst and receives from src at the same time (no deadlock whatever the sizes). */
int aptus_coll_sendrecv(struct aptus_comm *c, const void *sbuf, size_t sbytes, int dst, void *rbuf, size_t rbytes,
                        int src, int tag);

/* Local data steps of the algorithms: every byte an algorithm moves in memory goes through
 * these (and aptus_coll_red_apply), so that a schedule records them (coll/nbc.h). copy has
 * memmove's semantics. */
void aptus_coll_copy(void *dst, const void *src, size_t n);
void aptus_coll_pack(const void *buf, size_t count, const struct aptus_dtype *dt, void *packed);
void aptus_coll_unpack(const void *packed, size_t count, const struct aptus_dtype *dt, void *buf);

/* Temporary data buffers (64-byte aligned); large ones are cached between calls. Release with
 * aptus_coll_buf_free, never free(). */
void *aptus_coll_buf(size_t bytes);
void aptus_coll_buf_free(void *p);

/* Small arrays that live for one call (counts, displacements, datatypes, block pointers of the
 * v and w collectives): from free lists of a few size classes, with malloc beyond; zeroed when
 * `zero`. Release with aptus_coll_arr_free. A v collective at 2 ranks made a dozen mallocs per
 * call, about 2,000 instructions. */
void *aptus_coll_arr(size_t bytes, int zero);
void aptus_coll_arr_free(void *p);

/* ---- algorithm selection (select.c) ---------------------------------------------------------- */

enum coll_kind {
    COLL_BCAST,
    COLL_REDUCE,
    COLL_ALLREDUCE,
    COLL_ALLGATHER,
    COLL_ALLTOALL,
    COLL_GATHER,
    COLL_SCATTER,
    COLL_REDUCE_SCATTER,
    COLL_KIND_COUNT
};

enum coll_alg {
    ALG_AUTO = 0,
    ALG_BINOMIAL,
    ALG_SCATTER_ALLGATHER,
    ALG_RABENSEIFNER,
    ALG_RECURSIVE_DOUBLING,
    ALG_REDUCE_BCAST,
    ALG_BRUCK,
    ALG_RING,
    ALG_LINEAR,
    ALG_PAIRWISE,
    ALG_RECURSIVE_HALVING,
    ALG_REDUCE_SCATTERV,
    ALG_BATCHED,
    ALG_PIPELINED
};

/* The algorithm forced by APTUS_COLL_<KIND>_ALG (ALG_AUTO when unset or "auto"). An invalid
 * name is reported once as an error of the calling function: returns -1 and *rc is set. */
int aptus_coll_forced(int kind, struct aptus_comm *c, const char *fn, int *rc);
/* Counts one run of algorithm `alg` of collective `kind` for the statistics (select.c). */
void aptus_coll_ran(int kind, int alg);
const char *aptus_coll_alg_name(int alg);

/* ---- reduction data ------------------------------------------------------------------------- */

/* How the elements of a reduction lie in memory. Work buffers hold n elements; element i's data
 * starts at p + i * ext (p points at the data, i.e. at base + lb) and the user function gets
 * base pointers (p - lb). For predefined ops the elements are those of one predefined type
 * (h) in its natural C layout; for user ops, those of the user's datatype. */
struct coll_red {
    const struct aptus_op *op;
    MPI_Datatype h;               /* datatype handed to the user function / predefined type */
    const struct aptus_dtype *dt; /* its object */
    int kernel;                   /* predefined op: kernel of h */
    int commute;
    int whole;  /* elements interleave (true extent > extent): never split the vector */
    size_t ext; /* bytes between consecutive elements */
    size_t lb;  /* offset of the data from an element's base (user ops on derived types) */
    size_t tex; /* bytes spanned by one element's data */
};

/* Sets R up for elements that are the datatype dt (handle h) itself: a predefined type with a
 * predefined op, or any type with a user op. MPI_ERR_OP when a predefined op has no kernel. */
int aptus_coll_red_init(struct coll_red *R, const struct aptus_op *op, MPI_Datatype h, const struct aptus_dtype *dt);
/* Bytes spanned by elements [a, b) (0 when b <= a). */
static inline size_t coll_red_span(const struct coll_red *R, size_t a, size_t b)
{
    return b > a ? (b - a - 1) * R->ext + R->tex : 0;
}
/* inout[a..b) = in[a..b) op inout[a..b); in and inout point at element 0's data. */
void aptus_coll_red_apply(const struct coll_red *R, const void *in, void *inout, size_t a, size_t b);
/* A work buffer for n elements; release with aptus_coll_buf_free(). */
void *aptus_coll_red_alloc(const struct coll_red *R, size_t n);

/* Reductions on data already in the layout of R (sbuf NULL: in place, the input is in rbuf).
 * rbuf is read and written only where the standard says so. */
int aptus_coll_reduce(const void *sbuf, void *rbuf, size_t n, const struct coll_red *R, int root, struct aptus_comm *c);
int aptus_coll_allreduce(const void *sbuf, void *rbuf, size_t n, const struct coll_red *R, struct aptus_comm *c);
/* counts[i]: elements of rank i's block; the input holds sum(counts) elements; my block is
 * written at rbuf (in place: the input is in rbuf and my block ends up at its start). */
int aptus_coll_reduce_scatter(const void *sbuf, void *rbuf, const size_t *counts, const struct coll_red *R,
                              struct aptus_comm *c);
int aptus_coll_scan(const void *sbuf, void *rbuf, size_t n, const struct coll_red *R, struct aptus_comm *c,
                    int exclusive);
/* Rank 0 (of c) holds sum(counts) reduced elements at W: rank i gets the counts[i] elements of
 * its block in rbuf (a Scatterv; W is only read at rank 0). */
int aptus_coll_scatter_elems(const char *W, const size_t *counts, void *rbuf, const struct coll_red *R,
                             struct aptus_comm *c);

/* ---- user buffers (dtview.c) ------------------------------------------------------------------ */

/* Packed view of count elements of dt at buf: the buffer itself for contiguous types, else a
 * temporary (*tmp, NULL when none; release with aptus_coll_buf_free) filled by the engine. */
int aptus_coll_pack_in(const void *buf, size_t count, const struct aptus_dtype *dt, const char **p, void **tmp);
/* Where to receive the packed form of count elements of dt at buf; after the algorithm,
 * aptus_coll_unpack_done unpacks the temporary (when rc == 0) and frees it. */
int aptus_coll_unpack_prep(void *buf, size_t count, const struct aptus_dtype *dt, char **p, void **tmp);
void aptus_coll_unpack_done(void *buf, size_t count, const struct aptus_dtype *dt, void *tmp, int rc);

/* n blocks of counts[i] elements of types[i] (or `one`) at buf + disp[i] bytes, as packed
 * bytes: ptr[i] / bytes[i]. Contiguous blocks are used in place, the others get room in tmp
 * (filled when `pack`); pack == 2 copies every block into tmp (in-place alltoall). */
struct coll_blocks {
    int n;
    char **ptr;
    size_t *bytes;
    char *tmp;
};
int aptus_coll_blocks_init(struct coll_blocks *B, int n, const void *buf, const MPI_Aint *disp, const size_t *counts,
                           const struct aptus_dtype *one, const struct aptus_dtype *const *types, int pack);
void aptus_coll_blocks_pack_one(struct coll_blocks *B, int i, const void *buf, const MPI_Aint *disp,
                                const size_t *counts, const struct aptus_dtype *one,
                                const struct aptus_dtype *const *types);
/* Unpacks the blocks that live in tmp (all but block `skip`; -1 for none). */
void aptus_coll_blocks_unpack(struct coll_blocks *B, void *buf, const MPI_Aint *disp, const size_t *counts,
                              const struct aptus_dtype *one, const struct aptus_dtype *const *types, int skip);
void aptus_coll_blocks_free(struct coll_blocks *B);

/* A reduction of count elements of a user datatype: the work layout R (elements of the basic
 * type for predefined ops, of the user type for user ops), n = count * per work elements, and
 * whether the user's buffers are already in that layout (`direct`, data at buf + off). */
struct coll_rsetup {
    struct coll_red R;
    const struct aptus_dtype *dt;
    size_t count, n, per, off;
    int direct, natural;
};
/* MPI_ERR_OP when a predefined op is not defined on the type (or the type mixes basic types). */
int aptus_coll_rsetup(struct coll_rsetup *S, const struct aptus_op *op, MPI_Datatype h, const struct aptus_dtype *dt,
                      size_t count);
/* A work buffer for the user buffer ubuf: ubuf itself when direct, else a temporary, filled from
 * ubuf when `fill`. Release with aptus_coll_rdone, which copies it back to ubuf when `out`. */
char *aptus_coll_rwork(const struct coll_rsetup *S, const void *ubuf, int fill, int *rc);
int aptus_coll_rdone(const struct coll_rsetup *S, char *work, void *ubuf, int out);

/* ---- data movement in packed bytes ------------------------------------------------------------ */

/* Gather / scatter of equal blocks of `blk` bytes; the root's buffer holds size * blk bytes in
 * rank order. sbuf NULL at the root of gather (rbuf NULL at the root of scatter): in place. */
int aptus_coll_gather(const void *sbuf, void *rbuf, size_t blk, int root, struct aptus_comm *c);
int aptus_coll_scatter(const void *sbuf, void *rbuf, size_t blk, int root, struct aptus_comm *c);
/* Varying blocks: at the root, block i has bytes[i] bytes at ptr[i] (sbuf NULL at the root of
 * gatherv, rbuf NULL at the root of scatterv: in place). */
int aptus_coll_gatherv(const void *sbuf, size_t sbytes, char *const *rptr, const size_t *bytes, int root,
                       struct aptus_comm *c);
int aptus_coll_scatterv(const char *const *sptr, const size_t *bytes, void *rbuf, size_t rbytes, int root,
                        struct aptus_comm *c);
/* rbuf holds size * blk bytes in rank order; sbuf NULL: in place (my block is already there). */
int aptus_coll_allgather(const void *sbuf, void *rbuf, size_t blk, struct aptus_comm *c);
/* Block i: bytes[i] bytes at rptr[i]; sbuf NULL: in place. */
int aptus_coll_allgatherv(const void *sbuf, char *const *rptr, const size_t *bytes, struct aptus_comm *c);
/* sbuf / rbuf hold size blocks of blk bytes in rank order. */
int aptus_coll_alltoall(const void *sbuf, void *rbuf, size_t blk, struct aptus_comm *c);
/* Per peer i: sbytes[i] bytes from sptr[i], rbytes[i] bytes into rptr[i]. */
int aptus_coll_alltoallv(const char *const *sptr, const size_t *sbytes, char *const *rptr, const size_t *rbytes,
                         struct aptus_comm *c);

/* Broadcast of packed bytes (any communicator); fn names the MPI call for error messages. */
int aptus_coll_bcast(void *buf, size_t bytes, int root, struct aptus_comm *c, const char *fn);

/* Intercommunicator forms (inter.c): `root` as given by the user (MPI_ROOT, MPI_PROC_NULL or a
 * rank of the remote group). Local phases run on c->local_comm. */
int aptus_coll_inter_barrier(struct aptus_comm *c);
int aptus_coll_inter_bcast(void *buf, size_t bytes, int root, struct aptus_comm *c);
int aptus_coll_inter_gatherv(const void *sbuf, size_t sbytes, char *const *rptr, const size_t *bytes, int root,
                             struct aptus_comm *c);
int aptus_coll_inter_scatterv(const char *const *sptr, const size_t *bytes, void *rbuf, size_t rbytes, int root,
                              struct aptus_comm *c);
/* rptr / bytes: the remote group's blocks */
int aptus_coll_inter_allgatherv(const void *sbuf, size_t sbytes, char *const *rptr, const size_t *bytes,
                                struct aptus_comm *c);
int aptus_coll_inter_reduce(const void *sbuf, void *rbuf, size_t n, const struct coll_red *R, int root,
                            struct aptus_comm *c);
int aptus_coll_inter_allreduce(const void *sbuf, void *rbuf, size_t n, const struct coll_red *R, struct aptus_comm *c);
/* counts: the local group's blocks (elements) */
int aptus_coll_inter_reduce_scatter(const void *sbuf, void *rbuf, const size_t *counts, const struct coll_red *R,
                                    struct aptus_comm *c);

#endif
