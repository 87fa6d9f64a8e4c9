/* Blocking collective operations (MPI standard, chapter 6) and reduction operations: argument
 * checks, datatypes (through src/coll/dtview.c) and the intra/intercommunicator dispatch. The
 * algorithms are in src/coll/. */
#include <stdlib.h>
#include <string.h>

#include "api/alias.h"
#include "api/check.h"
#include "coll/coll_internal.h"
#include "coll/nbc.h"
#include "core/datatype.h"
#include "core/info.h"
#include "core/op.h"
#include "runtime/lock.h"

/* ---- argument checks -------------------------------------------------------------------------- */

/* Turns an algorithm's result into the MPI return value (raising the error once). */
static int fail(struct aptus_comm *c, int rc, const char *fn)
{
    if (rc == 0)
        return MPI_SUCCESS;
    if (rc & APTUS_ERR_RAISED)
        return rc;
    switch (rc) {
    case MPI_ERR_TRUNCATE:
        return aptus_error(c, rc, fn,
                           "a message was longer than its receive buffer: the ranks' send and receive type "
                           "signatures do not match");
    case MPI_ERR_NO_MEM: return aptus_error(c, rc, fn, "out of memory for temporary buffers");
    case MPI_ERR_COMM: return aptus_error(c, rc, fn, "the intercommunicator has no local communicator");
    default: return aptus_error(c, rc, fn, "the collective operation failed");
    }
}

#define TRY(expr)                                                                                                      \
    do {                                                                                                               \
        int try_rc_ = (expr);                                                                                          \
        if (try_rc_)                                                                                                   \
            return try_rc_;                                                                                            \
    } while (0)

static int type_arg(struct aptus_comm *c, MPI_Datatype h, const char *fn, const char *what,
                    const struct aptus_dtype **out)
{
    const struct aptus_dtype *d = aptus_dtype_get(h);
    if (!d)
        return aptus_error(c, MPI_ERR_TYPE, fn, "%s: %s", what,
                           h == MPI_DATATYPE_NULL ? "MPI_DATATYPE_NULL is not a valid datatype"
                                                  : "invalid datatype handle");
    if (!d->committed)
        return aptus_error(c, MPI_ERR_TYPE, fn, "%s: datatype is not committed (call MPI_Type_commit first)", what);
    *out = d;
    return 0;
}

static int count_arg(struct aptus_comm *c, MPI_Count n, const char *fn, const char *what)
{
    if (n < 0)
        return aptus_error(c, MPI_ERR_COUNT, fn, "negative %s %lld", what, (long long)n);
    return 0;
}

/* A buffer for count elements of d: never MPI_IN_PLACE here, and not NULL when it holds data
 * (unless the type's data starts away from 0: MPI_BOTTOM with absolute addresses, check.h). */
static int buf_arg(struct aptus_comm *c, const void *buf, MPI_Count count, const struct aptus_dtype *d, const char *fn,
                   const char *what)
{
    if (buf == MPI_IN_PLACE)
        return aptus_error(c, MPI_ERR_BUFFER, fn, "MPI_IN_PLACE is not allowed as the %s here", what);
    if (aptus_buf_missing(buf, (size_t)count * d->size, d))
        return aptus_error(c, MPI_ERR_BUFFER, fn, "null %s for %lld elements of %s", what, (long long)count,
                           aptus_dtype_name(d));
    return 0;
}

static int root_arg(struct aptus_comm *c, int root, const char *fn)
{
    if (c->is_inter) {
        if (root == MPI_ROOT || root == MPI_PROC_NULL || (root >= 0 && root < c->npeers))
            return 0;
        return aptus_error(c, MPI_ERR_ROOT, fn,
                           "invalid root %d on intercommunicator %s (use MPI_ROOT, MPI_PROC_NULL or a rank of the "
                           "remote group, which has %d ranks)",
                           root, c->name, c->npeers);
    }
    if (root < 0 || root >= c->size)
        return aptus_error(c, MPI_ERR_ROOT, fn, "invalid root %d (communicator %s has %d ranks)", root, c->name,
                           c->size);
    return 0;
}

static int intra_arg(struct aptus_comm *c, const char *fn)
{
    if (c->is_inter)
        return aptus_error(c, MPI_ERR_COMM, fn, "not defined on an intercommunicator (%s)", c->name);
    return 0;
}

static int no_in_place(struct aptus_comm *c, const void *buf, const char *fn, const char *why)
{
    if (buf == MPI_IN_PLACE)
        return aptus_error(c, MPI_ERR_BUFFER, fn, "MPI_IN_PLACE is not allowed %s", why);
    return 0;
}

/* Aliased send and receive buffers (api/alias.h): checked wherever the caller's own arguments
 * name both -- at the root of a rooted operation, which then fails before it sends or receives
 * anything or takes a tag, so a root that calls again with correct arguments completes the
 * operation the other ranks are in (docs/DESIGN.md, "Errors"). */
static int alias_error(struct aptus_comm *c, const char *fn)
{
    return aptus_error(c, MPI_ERR_BUFFER, fn,
                       "the send and receive buffers overlap (aliased arguments); use MPI_IN_PLACE instead");
}

static __attribute__((noinline)) int alias_arg_any(struct aptus_comm *c, const void *sbuf, size_t scount,
                                                   const struct aptus_dtype *sd, const void *rbuf, size_t rcount,
                                                   const struct aptus_dtype *rd, const char *fn)
{
    if (aptus_span_alias(aptus_span_of(sbuf, 0, scount, sd), aptus_span_of(rbuf, 0, rcount, rd)))
        return alias_error(c, fn);
    return 0;
}

/* scount elements of sd at sbuf against rcount elements of rd at rbuf. In line for contiguous
 * data (each buffer one run of count * size bytes from its true lower bound): a few compares on
 * every reduction's path; other types take the general test. */
static inline int alias_arg(struct aptus_comm *c, const void *sbuf, size_t scount, const struct aptus_dtype *sd,
                            const void *rbuf, size_t rcount, const struct aptus_dtype *rd, const char *fn)
{
    if (__builtin_expect(!sd->contig || !rd->contig, 0))
        return alias_arg_any(c, sbuf, scount, sd, rbuf, rcount, rd, fn);
    /* [s0, s0 + sb) and [r0, r0 + rb) meet iff -rb < r0 - s0 < sb */
    uintptr_t d = (uintptr_t)rbuf + (uintptr_t)rd->true_lb - ((uintptr_t)sbuf + (uintptr_t)sd->true_lb);
    size_t sb = scount * sd->size, rb = rcount * rd->size;
    if (__builtin_expect(d + rb - 1 < sb + rb - 1, 0) && sb && rb)
        return alias_error(c, fn);
    return 0;
}

/* The spans of n blocks: block i is cnt[i] elements of types[i] (or one) at buf + disp[i] bytes.
 * NULL when out of memory. */
static struct aptus_span *block_spans(const void *buf, int n, const size_t *cnt, const MPI_Aint *disp,
                                      const struct aptus_dtype *one, const struct aptus_dtype *const *types)
{
    struct aptus_span *s = aptus_coll_arr(sizeof *s * (size_t)(n > 0 ? n : 1), 0);
    for (int i = 0; s && i < n; i++)
        s[i] = aptus_span_of(buf, disp[i], cnt[i], types ? types[i] : one);
    return s;
}

/* One buffer (the span one) against n blocks (see block_spans). Without memory for the spans
 * the check is left out. */
static int alias_blocks(struct aptus_comm *c, struct aptus_span one, const void *buf, int n, const size_t *cnt,
                        const MPI_Aint *disp, const struct aptus_dtype *d, const char *fn)
{
    struct aptus_span *s = block_spans(buf, n, cnt, disp, d, NULL);
    int aliased = s && aptus_spans_alias(&one, 1, s, (size_t)n);
    aptus_coll_arr_free(s);
    return aliased ? alias_error(c, fn) : 0;
}

static int op_arg(struct aptus_comm *c, MPI_Op oph, const char *fn, const struct aptus_op **out)
{
    const struct aptus_op *op = aptus_op_get(oph);
    if (!op)
        return aptus_error(c, MPI_ERR_OP, fn,
                           oph == MPI_OP_NULL ? "MPI_OP_NULL is not a valid operation" : "invalid operation handle");
    if (op->predefined == APTUS_OP_REPLACE || op->predefined == APTUS_OP_NO_OP)
        return aptus_error(c, MPI_ERR_OP, fn, "%s is only valid in accumulate operations (one-sided communication)",
                           aptus_op_name(op->predefined));
    *out = op;
    return 0;
}

static int rsetup_arg(struct aptus_comm *c, struct coll_rsetup *S, const struct aptus_op *op, MPI_Datatype h,
                      const struct aptus_dtype *d, size_t count, const char *fn)
{
    int rc = aptus_coll_rsetup(S, op, h, d, count);
    if (rc == MPI_ERR_OP) {
        size_t nb;
        MPI_Datatype b = aptus_dt_reduce_type(d, &nb);
        if (b == MPI_DATATYPE_NULL)
            return aptus_error(c, MPI_ERR_OP, fn,
                               "%s needs a datatype made of one predefined type; %s mixes several or has none",
                               aptus_op_name(op->predefined), aptus_dtype_name(d));
        return aptus_error(c, MPI_ERR_OP, fn, "%s is not defined for datatype %s (MPI standard, section 6.9.2)",
                           aptus_op_name(op->predefined), aptus_dtype_name(aptus_dtype_get(b)));
    }
    if (rc == MPI_ERR_TYPE)
        return aptus_error(c, rc, fn,
                           "user-defined operations on more than one element need a datatype with a positive "
                           "extent (this one has %ld)",
                           (long)d->extent);
    if (rc)
        return fail(c, rc, fn);
    return 0;
}

/* The names of one side's arguments, for messages: count, datatype, buffer, and the side
 * itself (v-variants). */
enum side { ARGS, SEND, RECV };
static const char *const side_names[][4] = {
    [ARGS] = { "count", "datatype", "buffer", "" },
    [SEND] = { "send count", "send datatype", "send buffer", "send" },
    [RECV] = { "receive count", "receive datatype", "receive buffer", "receive" },
};

/* One side of an operation: count elements of datatype h at buf, nblk times over (the root's
 * buffer of a rooted operation, the buffers of an all-to-all). *d: the datatype object. */
static int side_args(struct aptus_comm *c, const void *buf, MPI_Count count, MPI_Count nblk, MPI_Datatype h,
                     enum side s, const char *fn, const struct aptus_dtype **d)
{
    TRY(count_arg(c, count, fn, side_names[s][0]));
    TRY(type_arg(c, h, fn, side_names[s][1], d));
    return buf_arg(c, buf, count * nblk, *d, fn, side_names[s][2]);
}

/* The arguments every reduction checks: count elements of datatype h, op oph; S is set up. */
static int red_args(struct aptus_comm *c, MPI_Count count, MPI_Datatype h, MPI_Op oph, const char *fn,
                    const struct aptus_dtype **d, struct coll_rsetup *S)
{
    const struct aptus_op *op = NULL;
    TRY(count_arg(c, count, fn, "count"));
    TRY(type_arg(c, h, fn, "datatype", d));
    TRY(op_arg(c, oph, fn, &op));
    return rsetup_arg(c, S, op, h, *d, (size_t)count, fn);
}

/* Counts and displacements of the v-variants: int arrays, or MPI_Count / MPI_Aint (large). */
static MPI_Count v_count(const void *a, int large, int i)
{
    return large ? ((const MPI_Count *)a)[i] : ((const int *)a)[i];
}

static MPI_Aint v_disp(const void *a, int large, int i)
{
    return large ? ((const MPI_Aint *)a)[i] : ((const int *)a)[i];
}

static void arrays_free(size_t **cnt, MPI_Aint **disp)
{
    aptus_coll_arr_free(*cnt);
    aptus_coll_arr_free(*disp);
    *cnt = NULL;
    *disp = NULL;
}

/* Count and displacement arrays for n blocks (both NULL on failure). */
static int arrays_alloc(int n, size_t **cnt, MPI_Aint **disp)
{
    size_t k = (size_t)(n > 0 ? n : 1);
    *cnt = aptus_coll_arr(sizeof(size_t) * k, 0);
    *disp = aptus_coll_arr(sizeof(MPI_Aint) * k, 0);
    if (*cnt && *disp)
        return 0;
    arrays_free(cnt, disp);
    return MPI_ERR_NO_MEM;
}

/* n blocks of count elements of extent ext, one after the other. */
static int even_arrays(int n, MPI_Count count, MPI_Aint ext, size_t **cnt, MPI_Aint **disp)
{
    int rc = arrays_alloc(n, cnt, disp);
    for (int i = 0; rc == 0 && i < n; i++) {
        (*cnt)[i] = (size_t)count;
        (*disp)[i] = (MPI_Aint)i * count * ext;
    }
    return rc;
}

/* counts[] and byte displacements (displs[i] * extent; Alltoallw passes extent 1, its
 * displacements being bytes) of n blocks; errors for negative counts or a missing array. */
static int v_arrays(struct aptus_comm *c, int n, const void *counts, const void *displs, int large, MPI_Aint extent,
                    size_t **cnt, MPI_Aint **disp, const char *fn, const char *what)
{
    *cnt = NULL;
    *disp = NULL;
    if (n > 0 && (!counts || !displs))
        return aptus_error(c, MPI_ERR_ARG, fn, "null %s counts or displacements array", what);
    if (arrays_alloc(n, cnt, disp))
        return aptus_error(c, MPI_ERR_NO_MEM, fn, "out of memory");
    for (int i = 0; i < n; i++) {
        MPI_Count k = v_count(counts, large, i);
        if (k < 0) {
            arrays_free(cnt, disp);
            return aptus_error(c, MPI_ERR_COUNT, fn, "negative %s count %lld for rank %d", what, (long long)k, i);
        }
        (*cnt)[i] = (size_t)k;
        (*disp)[i] = v_disp(displs, large, i) * extent;
    }
    return 0;
}

/* The blocks side of Gatherv, Scatterv and Allgatherv: the datatype, the counts and
 * displacements of n blocks, and a buffer for the largest. The arrays are freed on error. */
static int v_side_args(struct aptus_comm *c, int n, const void *buf, const void *counts, const void *displs, int large,
                       MPI_Datatype h, enum side s, const char *fn, const struct aptus_dtype **d, size_t **cnt,
                       MPI_Aint **disp)
{
    TRY(type_arg(c, h, fn, side_names[s][1], d));
    TRY(v_arrays(c, n, counts, displs, large, (*d)->extent, cnt, disp, fn, side_names[s][3]));
    size_t most = 0;
    for (int i = 0; i < n; i++)
        most = (*cnt)[i] > most ? (*cnt)[i] : most;
    int rc = buf_arg(c, buf, (MPI_Count)most, *d, fn, side_names[s][2]);
    if (rc)
        arrays_free(cnt, disp);
    return rc;
}

/* ---- Barrier, Bcast ------------------------------------------------------------------------------- */

static int barrier_any(const char *fn, MPI_Comm comm)
{
    GET_COMM(c, comm, fn);
    return fail(c, aptus_barrier(c), fn);
}

int PMPI_Barrier(MPI_Comm comm)
{
    APTUS_API_LOCKED(barrier_any("MPI_Barrier", comm));
}
APTUS_ALIAS(Barrier)

static int bcast_any(const char *fn, void *buf, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    GET_COMM(c, comm, fn);
    const struct aptus_dtype *d;
    TRY(root_arg(c, root, fn));
    if (c->is_inter && root == MPI_PROC_NULL)
        return fail(c, aptus_coll_bcast(NULL, 0, root, c, fn), fn);
    TRY(side_args(c, buf, count, 1, datatype, ARGS, fn, &d));
    size_t n = (size_t)count, bytes = n * d->size;
    int sender = c->is_inter ? root == MPI_ROOT : c->rank == root;
    void *tmp;
    char *p;
    int rc;
    if (sender) {
        const char *sp;
        rc = aptus_coll_pack_in(buf, n, d, &sp, &tmp);
        if (rc == 0)
            rc = aptus_coll_bcast((char *)sp, bytes, root, c, fn);
        aptus_coll_buf_free(tmp);
        return fail(c, rc, fn);
    }
    rc = aptus_coll_unpack_prep(buf, n, d, &p, &tmp);
    if (rc == 0)
        rc = aptus_coll_bcast(p, bytes, root, c, fn);
    aptus_coll_unpack_done(buf, n, d, tmp, rc);
    return fail(c, rc, fn);
}

int PMPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    APTUS_API_LOCKED(bcast_any("MPI_Bcast", buffer, count, datatype, root, comm));
}
APTUS_ALIAS(Bcast)
int PMPI_Bcast_c(void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    APTUS_API_LOCKED(bcast_any("MPI_Bcast_c", buffer, count, datatype, root, comm));
}
APTUS_ALIAS(Bcast_c)

/* ---- Gather, Gatherv ---------------------------------------------------------------------------------- */

/* Checks of a rooted operation's "send side" (the ranks that contribute data). */
struct rooted {
    int inter, am_root, sends, in_place, n;
};

static int rooted_args(struct aptus_comm *c, int root, const void *inplace_buf, struct rooted *R, const char *fn,
                       const char *inplace_what)
{
    TRY(root_arg(c, root, fn));
    R->inter = c->is_inter;
    R->am_root = R->inter ? root == MPI_ROOT : c->rank == root;
    R->sends = R->inter ? (root != MPI_ROOT && root != MPI_PROC_NULL) : 1;
    R->in_place = inplace_buf == MPI_IN_PLACE;
    R->n = R->inter ? c->npeers : c->size;
    if (R->in_place && (R->inter || !R->am_root))
        return aptus_error(c, MPI_ERR_BUFFER, fn, "MPI_IN_PLACE as the %s is only valid at the root%s", inplace_what,
                           R->inter ? " of an intracommunicator" : "");
    return 0;
}

/* Gatherv's data movement once the arguments are checked (and Gather's on an
 * intercommunicator). At the root, block i is cnt[i] elements of rd at rbuf + disp[i] bytes. */
static int gatherv_run(struct aptus_comm *c, const struct rooted *A, const void *sbuf, MPI_Count scount,
                       const struct aptus_dtype *sd, void *rbuf, const size_t *cnt, const MPI_Aint *disp,
                       const struct aptus_dtype *rd, int root)
{
    size_t sbytes = sd ? (size_t)scount * sd->size : 0;
    const char *sp = NULL;
    void *stmp = NULL;
    struct coll_blocks B = { 0 };
    int rc = 0;
    if (sd)
        rc = aptus_coll_pack_in(sbuf, (size_t)scount, sd, &sp, &stmp);
    if (rc == 0 && A->am_root) {
        rc = aptus_coll_blocks_init(&B, A->n, rbuf, disp, cnt, rd, NULL, 0);
        if (rc == 0 && A->in_place)
            aptus_coll_blocks_pack_one(&B, c->rank, rbuf, disp, cnt, rd, NULL);
    }
    if (rc == 0) {
        if (A->inter)
            rc = aptus_coll_inter_gatherv(sp, sbytes, B.ptr, B.bytes, root, c);
        else
            rc = aptus_coll_gatherv(A->in_place ? NULL : sp, sbytes, B.ptr, B.bytes, root, c);
    }
    if (rc == 0 && A->am_root)
        aptus_coll_blocks_unpack(&B, rbuf, disp, cnt, rd, NULL, -1);
    aptus_coll_blocks_free(&B);
    aptus_coll_buf_free(stmp);
    return rc;
}

static int gather_any(const char *fn, const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf,
                      MPI_Count rcount, MPI_Datatype rtype, int root, MPI_Comm comm)
{
    GET_COMM(c, comm, fn);
    struct rooted A;
    const struct aptus_dtype *sd = NULL, *rd = NULL;
    TRY(rooted_args(c, root, sbuf, &A, fn, "send buffer"));
    if (A.sends && !A.in_place)
        TRY(side_args(c, sbuf, scount, 1, stype, SEND, fn, &sd));
    if (A.am_root)
        TRY(side_args(c, rbuf, rcount, A.n, rtype, RECV, fn, &rd));
    if (A.am_root && A.sends && !A.in_place)
        TRY(alias_arg(c, sbuf, (size_t)scount, sd, rbuf, (size_t)rcount * (size_t)A.n, rd, fn));
    int rc = 0;
    if (A.inter) { /* a Gatherv of equal blocks */
        size_t *cnt = NULL;
        MPI_Aint *disp = NULL;
        if (A.am_root)
            rc = even_arrays(A.n, rcount, rd->extent, &cnt, &disp);
        if (rc == 0)
            rc = gatherv_run(c, &A, sbuf, scount, sd, rbuf, cnt, disp, rd, root);
        arrays_free(&cnt, &disp);
        return fail(c, rc, fn);
    }
    size_t sbytes = sd ? (size_t)scount * sd->size : 0, rblk = rd ? (size_t)rcount * rd->size : 0;
    if (A.am_root && !A.in_place && sbytes != rblk)
        return aptus_error(c, MPI_ERR_TRUNCATE, fn,
                           "the root's send data (%zu bytes) and its receive block (%zu bytes) differ: the type "
                           "signatures do not match",
                           sbytes, rblk);
    const char *sp = NULL;
    void *stmp = NULL, *rtmp = NULL;
    if (sd)
        TRY(fail(c, aptus_coll_pack_in(sbuf, (size_t)scount, sd, &sp, &stmp), fn));
    char *rp = NULL;
    size_t total = (size_t)rcount * (size_t)A.n;
    if (A.am_root) {
        rc = aptus_coll_unpack_prep(rbuf, total, rd, &rp, &rtmp);
        if (rc == 0 && rtmp && A.in_place)
            aptus_coll_pack((char *)rbuf + (MPI_Aint)c->rank * rcount * rd->extent, (size_t)rcount, rd,
                            rp + (size_t)c->rank * rblk);
    }
    if (rc == 0)
        rc = aptus_coll_gather(A.in_place ? NULL : sp, rp, A.am_root ? rblk : sbytes, root, c);
    if (A.am_root)
        aptus_coll_unpack_done(rbuf, total, rd, rtmp, rc);
    aptus_coll_buf_free(stmp);
    return fail(c, rc, fn);
}

int PMPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    APTUS_API_LOCKED(gather_any("MPI_Gather", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm));
}
APTUS_ALIAS(Gather)
int PMPI_Gather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                  MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    APTUS_API_LOCKED(
        gather_any("MPI_Gather_c", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm));
}
APTUS_ALIAS(Gather_c)

static int gatherv_any(const char *fn, const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf,
                       const void *rcounts, const void *displs, MPI_Datatype rtype, int root, MPI_Comm comm, int large)
{
    GET_COMM(c, comm, fn);
    struct rooted A;
    const struct aptus_dtype *sd = NULL, *rd = NULL;
    TRY(rooted_args(c, root, sbuf, &A, fn, "send buffer"));
    if (A.sends && !A.in_place)
        TRY(side_args(c, sbuf, scount, 1, stype, SEND, fn, &sd));
    size_t *cnt = NULL;
    MPI_Aint *disp = NULL;
    if (A.am_root)
        TRY(v_side_args(c, A.n, rbuf, rcounts, displs, large, rtype, RECV, fn, &rd, &cnt, &disp));
    int rc = 0;
    if (A.am_root && A.sends && !A.in_place)
        rc = alias_blocks(c, aptus_span_of(sbuf, 0, (size_t)scount, sd), rbuf, A.n, cnt, disp, rd, fn);
    if (rc == 0)
        rc = gatherv_run(c, &A, sbuf, scount, sd, rbuf, cnt, disp, rd, root);
    arrays_free(&cnt, &disp);
    return fail(c, rc, fn);
}

int PMPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                 const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    APTUS_API_LOCKED(
        gatherv_any("MPI_Gatherv", sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm, 0));
}
APTUS_ALIAS(Gatherv)
int PMPI_Gatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                   const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype, int root,
                   MPI_Comm comm)
{
    APTUS_API_LOCKED(gatherv_any("MPI_Gatherv_c", sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                                 root, comm, 1));
}
APTUS_ALIAS(Gatherv_c)

/* ---- Scatter, Scatterv ------------------------------------------------------------------------------- */

/* Scatterv's data movement once the arguments are checked (and Scatter's on an
 * intercommunicator). At the root, block i is cnt[i] elements of sd at sbuf + disp[i] bytes. */
static int scatterv_run(struct aptus_comm *c, const struct rooted *A, const void *sbuf, const size_t *cnt,
                        const MPI_Aint *disp, const struct aptus_dtype *sd, void *rbuf, MPI_Count rcount,
                        const struct aptus_dtype *rd, int root)
{
    size_t rbytes = rd ? (size_t)rcount * rd->size : 0;
    char *rp = NULL;
    void *rtmp = NULL;
    struct coll_blocks B = { 0 };
    int rc = 0;
    if (rd)
        rc = aptus_coll_unpack_prep(rbuf, (size_t)rcount, rd, &rp, &rtmp);
    if (rc == 0 && A->am_root)
        rc = aptus_coll_blocks_init(&B, A->n, sbuf, disp, cnt, sd, NULL, 1);
    if (rc == 0) {
        if (A->inter)
            rc = aptus_coll_inter_scatterv((const char *const *)B.ptr, B.bytes, rp, rbytes, root, c);
        else
            rc = aptus_coll_scatterv((const char *const *)B.ptr, B.bytes, A->in_place ? NULL : rp, rbytes, root, c);
    }
    if (rd)
        aptus_coll_unpack_done(rbuf, (size_t)rcount, rd, rtmp, rc);
    aptus_coll_blocks_free(&B);
    return rc;
}

static int scatter_any(const char *fn, const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf,
                       MPI_Count rcount, MPI_Datatype rtype, int root, MPI_Comm comm)
{
    GET_COMM(c, comm, fn);
    struct rooted A;
    const struct aptus_dtype *sd = NULL, *rd = NULL;
    TRY(rooted_args(c, root, rbuf, &A, fn, "receive buffer"));
    int receives = A.sends; /* the ranks that get a block */
    if (receives && !A.in_place)
        TRY(side_args(c, rbuf, rcount, 1, rtype, RECV, fn, &rd));
    if (A.am_root)
        TRY(side_args(c, sbuf, scount, A.n, stype, SEND, fn, &sd));
    if (A.am_root && receives && !A.in_place)
        TRY(alias_arg(c, sbuf, (size_t)scount * (size_t)A.n, sd, rbuf, (size_t)rcount, rd, fn));
    int rc = 0;
    if (A.inter) { /* a Scatterv of equal blocks */
        size_t *cnt = NULL;
        MPI_Aint *disp = NULL;
        if (A.am_root)
            rc = even_arrays(A.n, scount, sd->extent, &cnt, &disp);
        if (rc == 0)
            rc = scatterv_run(c, &A, sbuf, cnt, disp, sd, rbuf, rcount, rd, root);
        arrays_free(&cnt, &disp);
        return fail(c, rc, fn);
    }
    size_t rbytes = rd ? (size_t)rcount * rd->size : 0, sblk = sd ? (size_t)scount * sd->size : 0;
    if (A.am_root && !A.in_place && sblk != rbytes)
        return aptus_error(c, MPI_ERR_TRUNCATE, fn,
                           "the root's send block (%zu bytes) and its receive data (%zu bytes) differ: the type "
                           "signatures do not match",
                           sblk, rbytes);
    char *rp = NULL;
    void *rtmp = NULL;
    if (rd)
        TRY(fail(c, aptus_coll_unpack_prep(rbuf, (size_t)rcount, rd, &rp, &rtmp), fn));
    const char *sp = NULL;
    void *stmp = NULL;
    if (A.am_root)
        rc = aptus_coll_pack_in(sbuf, (size_t)scount * (size_t)A.n, sd, &sp, &stmp);
    if (rc == 0)
        rc = aptus_coll_scatter(sp, A.in_place ? NULL : rp, A.am_root ? sblk : rbytes, root, c);
    if (rd)
        aptus_coll_unpack_done(rbuf, (size_t)rcount, rd, rtmp, rc);
    aptus_coll_buf_free(stmp);
    return fail(c, rc, fn);
}

int PMPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                 MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    APTUS_API_LOCKED(
        scatter_any("MPI_Scatter", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm));
}
APTUS_ALIAS(Scatter)
int PMPI_Scatter_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                   MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    APTUS_API_LOCKED(
        scatter_any("MPI_Scatter_c", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm));
}
APTUS_ALIAS(Scatter_c)

static int scatterv_any(const char *fn, const void *sbuf, const void *scounts, const void *displs, MPI_Datatype stype,
                        void *rbuf, MPI_Count rcount, MPI_Datatype rtype, int root, MPI_Comm comm, int large)
{
    GET_COMM(c, comm, fn);
    struct rooted A;
    const struct aptus_dtype *sd = NULL, *rd = NULL;
    TRY(rooted_args(c, root, rbuf, &A, fn, "receive buffer"));
    if (A.sends && !A.in_place)
        TRY(side_args(c, rbuf, rcount, 1, rtype, RECV, fn, &rd));
    size_t *cnt = NULL;
    MPI_Aint *disp = NULL;
    if (A.am_root)
        TRY(v_side_args(c, A.n, sbuf, scounts, displs, large, stype, SEND, fn, &sd, &cnt, &disp));
    int rc = 0;
    if (A.am_root && A.sends && !A.in_place)
        rc = alias_blocks(c, aptus_span_of(rbuf, 0, (size_t)rcount, rd), sbuf, A.n, cnt, disp, sd, fn);
    if (rc == 0)
        rc = scatterv_run(c, &A, sbuf, cnt, disp, sd, rbuf, rcount, rd, root);
    arrays_free(&cnt, &disp);
    return fail(c, rc, fn);
}

int PMPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    APTUS_API_LOCKED(scatterv_any("MPI_Scatterv", sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype,
                                  root, comm, 0));
}
APTUS_ALIAS(Scatterv)
int PMPI_Scatterv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[], MPI_Datatype sendtype,
                    void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    APTUS_API_LOCKED(scatterv_any("MPI_Scatterv_c", sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype,
                                  root, comm, 1));
}
APTUS_ALIAS(Scatterv_c)

/* ---- Allgather, Allgatherv ----------------------------------------------------------------------------- */

/* Allgatherv's data movement once the arguments are checked (and Allgather's on an
 * intercommunicator); sd NULL: in place. Block i is cnt[i] elements of rd at rbuf + disp[i]
 * bytes. */
static int allgatherv_run(struct aptus_comm *c, const void *sbuf, MPI_Count scount, const struct aptus_dtype *sd,
                          void *rbuf, const size_t *cnt, const MPI_Aint *disp, const struct aptus_dtype *rd)
{
    int n = c->is_inter ? c->npeers : c->size, r = c->rank, rc = 0;
    size_t sbytes = sd ? (size_t)scount * sd->size : 0;
    const char *sp = NULL;
    void *stmp = NULL;
    struct coll_blocks B = { 0 };
    if (sd)
        rc = aptus_coll_pack_in(sbuf, (size_t)scount, sd, &sp, &stmp);
    if (rc == 0)
        rc = aptus_coll_blocks_init(&B, n, rbuf, disp, cnt, rd, NULL, 0);
    if (rc == 0 && c->is_inter) {
        rc = aptus_coll_inter_allgatherv(sp, sbytes, B.ptr, B.bytes, c);
    } else if (rc == 0) {
        if (!sd) {
            aptus_coll_blocks_pack_one(&B, r, rbuf, disp, cnt, rd, NULL);
        } else if (sbytes > B.bytes[r]) {
            rc = MPI_ERR_TRUNCATE;
        } else if (sbytes) {
            aptus_coll_copy(B.ptr[r], sp, sbytes);
        }
        if (rc == 0)
            rc = aptus_coll_allgatherv(NULL, B.ptr, B.bytes, c);
    }
    if (rc == 0)
        aptus_coll_blocks_unpack(&B, rbuf, disp, cnt, rd, NULL, -1);
    aptus_coll_blocks_free(&B);
    aptus_coll_buf_free(stmp);
    return rc;
}

static int allgather_any(const char *fn, const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf,
                         MPI_Count rcount, MPI_Datatype rtype, MPI_Comm comm)
{
    GET_COMM(c, comm, fn);
    const struct aptus_dtype *sd = NULL, *rd = NULL;
    int in_place = sbuf == MPI_IN_PLACE, n = c->is_inter ? c->npeers : c->size, r = c->rank;
    if (in_place && c->is_inter)
        return no_in_place(c, sbuf, fn, "on an intercommunicator");
    if (!in_place)
        TRY(side_args(c, sbuf, scount, 1, stype, SEND, fn, &sd));
    TRY(side_args(c, rbuf, rcount, n, rtype, RECV, fn, &rd));
    size_t sbytes = sd ? (size_t)scount * sd->size : 0, rblk = (size_t)rcount * rd->size;
    if (!in_place)
        TRY(alias_arg(c, sbuf, (size_t)scount, sd, rbuf, (size_t)rcount * (size_t)n, rd, fn));
    int rc;
    if (c->is_inter) { /* an Allgatherv of equal blocks */
        size_t *cnt;
        MPI_Aint *disp;
        rc = even_arrays(n, rcount, rd->extent, &cnt, &disp);
        if (rc == 0)
            rc = allgatherv_run(c, sbuf, scount, sd, rbuf, cnt, disp, rd);
        arrays_free(&cnt, &disp);
        return fail(c, rc, fn);
    }
    if (!in_place && sbytes != rblk)
        return aptus_error(c, MPI_ERR_TRUNCATE, fn,
                           "the send data (%zu bytes) and a receive block (%zu bytes) differ: the type signatures do "
                           "not match",
                           sbytes, rblk);
    const char *sp = NULL;
    void *stmp = NULL, *rtmp = NULL;
    if (sd)
        TRY(fail(c, aptus_coll_pack_in(sbuf, (size_t)scount, sd, &sp, &stmp), fn));
    size_t total = (size_t)rcount * (size_t)n;
    char *rp;
    rc = aptus_coll_unpack_prep(rbuf, total, rd, &rp, &rtmp);
    if (rc == 0 && rtmp) { /* my block goes into the packed buffer first */
        if (in_place)
            aptus_coll_pack((char *)rbuf + (MPI_Aint)r * rcount * rd->extent, (size_t)rcount, rd,
                            rp + (size_t)r * rblk);
        else
            aptus_coll_copy(rp + (size_t)r * rblk, sp, rblk);
    }
    if (rc == 0)
        rc = aptus_coll_allgather((in_place || rtmp) ? NULL : sp, rp, rblk, c);
    aptus_coll_unpack_done(rbuf, total, rd, rtmp, rc);
    aptus_coll_buf_free(stmp);
    return fail(c, rc, fn);
}

int PMPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                   MPI_Datatype recvtype, MPI_Comm comm)
{
    APTUS_API_LOCKED(allgather_any("MPI_Allgather", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm));
}
APTUS_ALIAS(Allgather)
int PMPI_Allgather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                     MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    APTUS_API_LOCKED(
        allgather_any("MPI_Allgather_c", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm));
}
APTUS_ALIAS(Allgather_c)

static int allgatherv_any(const char *fn, const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf,
                          const void *rcounts, const void *displs, MPI_Datatype rtype, MPI_Comm comm, int large)
{
    GET_COMM(c, comm, fn);
    const struct aptus_dtype *sd = NULL, *rd = NULL;
    int in_place = sbuf == MPI_IN_PLACE, n = c->is_inter ? c->npeers : c->size;
    if (in_place && c->is_inter)
        return no_in_place(c, sbuf, fn, "on an intercommunicator");
    if (!in_place)
        TRY(side_args(c, sbuf, scount, 1, stype, SEND, fn, &sd));
    size_t *cnt = NULL;
    MPI_Aint *disp = NULL;
    TRY(v_side_args(c, n, rbuf, rcounts, displs, large, rtype, RECV, fn, &rd, &cnt, &disp));
    int rc = in_place ? 0 : alias_blocks(c, aptus_span_of(sbuf, 0, (size_t)scount, sd), rbuf, n, cnt, disp, rd, fn);
    if (rc == 0)
        rc = allgatherv_run(c, sbuf, scount, sd, rbuf, cnt, disp, rd);
    arrays_free(&cnt, &disp);
    return fail(c, rc, fn);
}

int PMPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                    const int displs[], MPI_Datatype recvtype, MPI_Comm comm)
{
    APTUS_API_LOCKED(
        allgatherv_any("MPI_Allgatherv", sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, 0));
}
APTUS_ALIAS(Allgatherv)
int PMPI_Allgatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                      const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype, MPI_Comm comm)
{
    APTUS_API_LOCKED(allgatherv_any("MPI_Allgatherv_c", sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                    recvtype, comm, 1));
}
APTUS_ALIAS(Allgatherv_c)

/* ---- Alltoall, Alltoallv, Alltoallw ---------------------------------------------------------------------- */

static int alltoall_any(const char *fn, const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf,
                        MPI_Count rcount, MPI_Datatype rtype, MPI_Comm comm)
{
    GET_COMM(c, comm, fn);
    const struct aptus_dtype *sd = NULL, *rd = NULL;
    int in_place = sbuf == MPI_IN_PLACE, n = c->is_inter ? c->npeers : c->size;
    if (in_place && c->is_inter)
        return no_in_place(c, sbuf, fn, "on an intercommunicator");
    TRY(side_args(c, rbuf, rcount, n, rtype, RECV, fn, &rd));
    if (!in_place) {
        TRY(side_args(c, sbuf, scount, n, stype, SEND, fn, &sd));
    } else {
        scount = rcount;
        sd = rd;
    }
    size_t sblk = (size_t)scount * sd->size, rblk = (size_t)rcount * rd->size;
    if (!in_place)
        TRY(alias_arg(c, sbuf, (size_t)scount * (size_t)n, sd, rbuf, (size_t)rcount * (size_t)n, rd, fn));
    int rc;
    if (c->is_inter) { /* an Alltoallv of equal blocks */
        size_t *scnt = NULL, *rcnt = NULL;
        MPI_Aint *sdisp = NULL, *rdisp = NULL;
        struct coll_blocks SB = { 0 }, RB = { 0 };
        rc = even_arrays(n, scount, sd->extent, &scnt, &sdisp);
        if (rc == 0)
            rc = even_arrays(n, rcount, rd->extent, &rcnt, &rdisp);
        if (rc == 0)
            rc = aptus_coll_blocks_init(&SB, n, sbuf, sdisp, scnt, sd, NULL, 1);
        if (rc == 0)
            rc = aptus_coll_blocks_init(&RB, n, rbuf, rdisp, rcnt, rd, NULL, 0);
        if (rc == 0)
            rc = aptus_coll_alltoallv((const char *const *)SB.ptr, SB.bytes, RB.ptr, RB.bytes, c);
        if (rc == 0)
            aptus_coll_blocks_unpack(&RB, rbuf, rdisp, rcnt, rd, NULL, -1);
        aptus_coll_blocks_free(&SB);
        aptus_coll_blocks_free(&RB);
        arrays_free(&scnt, &sdisp);
        arrays_free(&rcnt, &rdisp);
        return fail(c, rc, fn);
    }
    if (sblk != rblk)
        return aptus_error(c, MPI_ERR_TRUNCATE, fn,
                           "send blocks (%zu bytes) and receive blocks (%zu bytes) differ: the type signatures do not "
                           "match",
                           sblk, rblk);
    /* one packed buffer each way */
    const char *sp = NULL;
    char *rp = NULL;
    void *stmp = NULL, *rtmp = NULL;
    size_t total = (size_t)rcount * (size_t)n;
    if (in_place) {
        stmp = aptus_coll_buf(rblk * (size_t)n);
        rc = stmp ? 0 : MPI_ERR_NO_MEM;
        if (stmp)
            aptus_coll_pack(rbuf, total, rd, stmp);
        sp = stmp;
    } else {
        rc = aptus_coll_pack_in(sbuf, (size_t)scount * (size_t)n, sd, &sp, &stmp);
    }
    if (rc == 0)
        rc = aptus_coll_unpack_prep(rbuf, total, rd, &rp, &rtmp);
    if (rc == 0)
        rc = aptus_coll_alltoall(sp, rp, rblk, c);
    aptus_coll_unpack_done(rbuf, total, rd, rtmp, rc);
    aptus_coll_buf_free(stmp);
    return fail(c, rc, fn);
}

int PMPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                  MPI_Datatype recvtype, MPI_Comm comm)
{
    APTUS_API_LOCKED(alltoall_any("MPI_Alltoall", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm));
}
APTUS_ALIAS(Alltoall)
int PMPI_Alltoall_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                    MPI_Datatype recvtype, MPI_Comm comm)
{
    APTUS_API_LOCKED(alltoall_any("MPI_Alltoall_c", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm));
}
APTUS_ALIAS(Alltoall_c)

/* Alltoallv (one type each way, displacements in elements) and Alltoallw (a type per block,
 * displacements in bytes). */
static int alltoallvw_any(const char *fn, const void *sbuf, const void *scounts, const void *sdispls,
                          const MPI_Datatype *stypes, void *rbuf, const void *rcounts, const void *rdispls,
                          const MPI_Datatype *rtypes, MPI_Comm comm, int large, int w)
{
    GET_COMM(c, comm, fn);
    int in_place = sbuf == MPI_IN_PLACE, n = c->is_inter ? c->npeers : c->size, rc = 0;
    if (in_place && c->is_inter)
        return no_in_place(c, sbuf, fn, "on an intercommunicator");
    if (rbuf == MPI_IN_PLACE)
        return no_in_place(c, rbuf, fn, "as the receive buffer");
    size_t *scnt = NULL, *rcnt = NULL;
    MPI_Aint *sdisp = NULL, *rdisp = NULL;
    const struct aptus_dtype **sdt = aptus_coll_arr((size_t)(n > 0 ? n : 1) * sizeof *sdt, 1);
    const struct aptus_dtype **rdt = aptus_coll_arr((size_t)(n > 0 ? n : 1) * sizeof *rdt, 1);
    struct coll_blocks SB = { 0 }, RB = { 0 };
    if (!sdt || !rdt) {
        rc = aptus_error(c, MPI_ERR_NO_MEM, fn, "out of memory");
        goto out;
    }
    /* receive side */
    if (n > 0 && !rtypes) {
        rc = aptus_error(c, MPI_ERR_ARG, fn, "null receive datatype array");
        goto out;
    }
    for (int i = 0; i < n; i++)
        if ((rc = type_arg(c, rtypes[w ? i : 0], fn, "receive datatype", &rdt[i])) != 0)
            goto out;
    if ((rc = v_arrays(c, n, rcounts, rdispls, large, w ? 1 : (n ? rdt[0]->extent : 1), &rcnt, &rdisp, fn,
                       "receive")) != 0)
        goto out;
    /* send side (in place: the receive side's) */
    if (in_place) {
        for (int i = 0; i < n; i++)
            sdt[i] = rdt[i];
    } else {
        if (n > 0 && !stypes) {
            rc = aptus_error(c, MPI_ERR_ARG, fn, "null send datatype array");
            goto out;
        }
        for (int i = 0; i < n; i++)
            if ((rc = type_arg(c, stypes[w ? i : 0], fn, "send datatype", &sdt[i])) != 0)
                goto out;
        if ((rc = v_arrays(c, n, scounts, sdispls, large, w ? 1 : (n ? sdt[0]->extent : 1), &scnt, &sdisp, fn,
                           "send")) != 0)
            goto out;
    }
    /* A null buffer with a non-zero displacement is MPI_BOTTOM with an absolute address. */
    for (int i = 0; i < n; i++) {
        if (rcnt[i] && (rbuf || !rdisp[i]) &&
            (rc = buf_arg(c, rbuf, (MPI_Count)rcnt[i], rdt[i], fn, "receive buffer")) != 0)
            goto out;
        if (!in_place && scnt[i] && (sbuf || !sdisp[i]) &&
            (rc = buf_arg(c, sbuf, (MPI_Count)scnt[i], sdt[i], fn, "send buffer")) != 0)
            goto out;
    }
    if (!in_place) {
        struct aptus_span *ss = block_spans(sbuf, n, scnt, sdisp, NULL, sdt),
                          *rs = block_spans(rbuf, n, rcnt, rdisp, NULL, rdt);
        int aliased = ss && rs && aptus_spans_alias(ss, (size_t)n, rs, (size_t)n);
        aptus_coll_arr_free(ss);
        aptus_coll_arr_free(rs);
        if (aliased) {
            rc = alias_error(c, fn);
            goto out;
        }
    }
    if (in_place)
        rc = aptus_coll_blocks_init(&SB, n, rbuf, rdisp, rcnt, NULL, rdt, 2);
    else
        rc = aptus_coll_blocks_init(&SB, n, sbuf, sdisp, scnt, NULL, sdt, 1);
    if (rc == 0)
        rc = aptus_coll_blocks_init(&RB, n, rbuf, rdisp, rcnt, NULL, rdt, 0);
    if (rc == 0)
        rc = aptus_coll_alltoallv((const char *const *)SB.ptr, SB.bytes, RB.ptr, RB.bytes, c);
    if (rc == 0)
        aptus_coll_blocks_unpack(&RB, rbuf, rdisp, rcnt, NULL, rdt, -1);
    rc = fail(c, rc, fn);
out:
    aptus_coll_blocks_free(&SB);
    aptus_coll_blocks_free(&RB);
    aptus_coll_arr_free(sdt);
    aptus_coll_arr_free(rdt);
    arrays_free(&scnt, &sdisp);
    arrays_free(&rcnt, &rdisp);
    return rc;
}

int PMPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                   void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    APTUS_API_LOCKED(alltoallvw_any("MPI_Alltoallv", sendbuf, sendcounts, sdispls, &sendtype, recvbuf, recvcounts,
                                    rdispls, &recvtype, comm, 0, 0));
}
APTUS_ALIAS(Alltoallv)
int PMPI_Alltoallv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[], MPI_Datatype sendtype,
                     void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[], MPI_Datatype recvtype,
                     MPI_Comm comm)
{
    APTUS_API_LOCKED(alltoallvw_any("MPI_Alltoallv_c", sendbuf, sendcounts, sdispls, &sendtype, recvbuf, recvcounts,
                                    rdispls, &recvtype, comm, 1, 0));
}
APTUS_ALIAS(Alltoallv_c)
int PMPI_Alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[], const MPI_Datatype sendtypes[],
                   void *recvbuf, const int recvcounts[], const int rdispls[], const MPI_Datatype recvtypes[],
                   MPI_Comm comm)
{
    APTUS_API_LOCKED(alltoallvw_any("MPI_Alltoallw", sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
                                    rdispls, recvtypes, comm, 0, 1));
}
APTUS_ALIAS(Alltoallw)
int PMPI_Alltoallw_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                     const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[],
                     const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    APTUS_API_LOCKED(alltoallvw_any("MPI_Alltoallw_c", sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
                                    rdispls, recvtypes, comm, 1, 1));
}
APTUS_ALIAS(Alltoallw_c)

/* ---- Reduce, Allreduce, Scan, Exscan ------------------------------------------------------------------- */

static int reduce_any(const char *fn, const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op oph,
                      int root, MPI_Comm comm)
{
    GET_COMM(c, comm, fn);
    struct rooted A;
    const struct aptus_dtype *d;
    struct coll_rsetup S;
    TRY(rooted_args(c, root, sbuf, &A, fn, "send buffer"));
    int active = A.sends || A.am_root;
    if (!active) /* intercommunicator, MPI_PROC_NULL */
        return fail(c, aptus_coll_inter_reduce(NULL, NULL, 0, NULL, root, c), fn);
    TRY(red_args(c, count, datatype, oph, fn, &d, &S));
    if (A.sends && !A.in_place)
        TRY(buf_arg(c, sbuf, count, d, fn, "send buffer"));
    if (A.am_root) {
        TRY(buf_arg(c, rbuf, count, d, fn, "receive buffer"));
        if (A.sends && !A.in_place)
            TRY(alias_arg(c, sbuf, (size_t)count, d, rbuf, (size_t)count, d, fn));
    }
    int rc = 0, rc2 = 0;
    char *src = NULL, *dst = NULL;
    if (A.sends && !A.in_place)
        src = aptus_coll_rwork(&S, sbuf, 1, &rc);
    if (rc == 0 && A.am_root)
        dst = aptus_coll_rwork(&S, rbuf, A.in_place, &rc);
    if (rc == 0) {
        if (A.inter)
            rc = aptus_coll_inter_reduce(src, dst, S.n, &S.R, root, c);
        else
            rc = aptus_coll_reduce(src, dst, S.n, &S.R, root, c);
    }
    if (src)
        aptus_coll_rdone(&S, src, NULL, 0);
    if (dst)
        rc2 = aptus_coll_rdone(&S, dst, rbuf, rc == 0);
    return fail(c, rc ? rc : rc2, fn);
}

int PMPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                MPI_Comm comm)
{
    APTUS_API_LOCKED(reduce_any("MPI_Reduce", sendbuf, recvbuf, count, datatype, op, root, comm));
}
APTUS_ALIAS(Reduce)
int PMPI_Reduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, int root,
                  MPI_Comm comm)
{
    APTUS_API_LOCKED(reduce_any("MPI_Reduce_c", sendbuf, recvbuf, count, datatype, op, root, comm));
}
APTUS_ALIAS(Reduce_c)

/* Allreduce, Scan and Exscan: every rank's result has count elements. */
enum red_kind { RED_ALL, RED_SCAN, RED_EXSCAN };

static int allreduce_any(const char *fn, const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype datatype,
                         MPI_Op oph, MPI_Comm comm, enum red_kind kind)
{
    GET_COMM(c, comm, fn);
    const struct aptus_dtype *d;
    struct coll_rsetup S;
    int in_place = sbuf == MPI_IN_PLACE;
    if (kind != RED_ALL)
        TRY(intra_arg(c, fn));
    else if (in_place && c->is_inter)
        return no_in_place(c, sbuf, fn, "on an intercommunicator");
    TRY(red_args(c, count, datatype, oph, fn, &d, &S));
    if (!in_place) {
        TRY(buf_arg(c, sbuf, count, d, fn, "send buffer"));
        TRY(alias_arg(c, sbuf, (size_t)count, d, rbuf, (size_t)count, d, fn));
    }
    TRY(buf_arg(c, rbuf, count, d, fn, "receive buffer"));
    int rc = 0, rc2 = 0;
    /* the work vector starts as my input */
    const char *src = NULL;
    char *w;
    if (S.direct) {
        w = (char *)rbuf + S.off;
        src = in_place ? NULL : (const char *)sbuf + S.off;
    } else {
        w = aptus_coll_rwork(&S, in_place ? rbuf : sbuf, 1, &rc);
    }
    if (rc == 0) {
        if (kind != RED_ALL)
            rc = aptus_coll_scan(src, w, S.n, &S.R, c, kind == RED_EXSCAN);
        else if (c->is_inter)
            rc = aptus_coll_inter_allreduce(src ? src : w, w, S.n, &S.R, c);
        else
            rc = aptus_coll_allreduce(src, w, S.n, &S.R, c);
    }
    /* MPI_Exscan leaves rank 0's receive buffer alone */
    if (w)
        rc2 = aptus_coll_rdone(&S, w, rbuf, rc == 0 && !(kind == RED_EXSCAN && c->rank == 0));
    return fail(c, rc ? rc : rc2, fn);
}

int PMPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    APTUS_API_LOCKED(allreduce_any("MPI_Allreduce", sendbuf, recvbuf, count, datatype, op, comm, RED_ALL));
}
APTUS_ALIAS(Allreduce)
int PMPI_Allreduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                     MPI_Comm comm)
{
    APTUS_API_LOCKED(allreduce_any("MPI_Allreduce_c", sendbuf, recvbuf, count, datatype, op, comm, RED_ALL));
}
APTUS_ALIAS(Allreduce_c)
int PMPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    APTUS_API_LOCKED(allreduce_any("MPI_Scan", sendbuf, recvbuf, count, datatype, op, comm, RED_SCAN));
}
APTUS_ALIAS(Scan)
int PMPI_Scan_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    APTUS_API_LOCKED(allreduce_any("MPI_Scan_c", sendbuf, recvbuf, count, datatype, op, comm, RED_SCAN));
}
APTUS_ALIAS(Scan_c)
int PMPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    APTUS_API_LOCKED(allreduce_any("MPI_Exscan", sendbuf, recvbuf, count, datatype, op, comm, RED_EXSCAN));
}
APTUS_ALIAS(Exscan)
int PMPI_Exscan_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    APTUS_API_LOCKED(allreduce_any("MPI_Exscan_c", sendbuf, recvbuf, count, datatype, op, comm, RED_EXSCAN));
}
APTUS_ALIAS(Exscan_c)

/* ---- Reduce_scatter, Reduce_scatter_block ------------------------------------------------------------- */

/* counts: NULL for the block form (every rank gets `block` elements). */
static int reduce_scatter_any(const char *fn, const void *sbuf, void *rbuf, const void *counts, MPI_Count block,
                              MPI_Datatype datatype, MPI_Op oph, MPI_Comm comm, int large)
{
    GET_COMM(c, comm, fn);
    const struct aptus_dtype *d = NULL;
    const struct aptus_op *op = NULL;
    struct coll_rsetup S, Sme;
    int in_place = sbuf == MPI_IN_PLACE, n = c->size, r = c->rank;
    if (in_place && c->is_inter)
        return no_in_place(c, sbuf, fn, "on an intercommunicator");
    TRY(type_arg(c, datatype, fn, "datatype", &d));
    TRY(op_arg(c, oph, fn, &op));
    if (!counts)
        TRY(count_arg(c, block, fn, "receive count"));
    size_t *cnt = aptus_coll_arr(sizeof(size_t) * (size_t)(n > 0 ? n : 1), 0);
    if (!cnt)
        return aptus_error(c, MPI_ERR_NO_MEM, fn, "out of memory");
    size_t total = 0;
    for (int i = 0; i < n; i++) {
        MPI_Count k = counts ? v_count(counts, large, i) : block;
        if (k < 0) {
            aptus_coll_arr_free(cnt);
            return aptus_error(c, MPI_ERR_COUNT, fn, "negative receive count %lld for rank %d", (long long)k, i);
        }
        cnt[i] = (size_t)k;
        total += cnt[i];
    }
    int rc = rsetup_arg(c, &S, op, datatype, d, total, fn);
    if (rc == 0)
        rc = rsetup_arg(c, &Sme, op, datatype, d, cnt[r], fn);
    if (rc == 0 && !in_place)
        rc = buf_arg(c, sbuf, (MPI_Count)total, d, fn, "send buffer");
    if (rc == 0)
        rc = buf_arg(c, rbuf, (MPI_Count)(in_place ? total : cnt[r]), d, fn, "receive buffer");
    if (rc == 0 && !in_place)
        rc = alias_arg(c, sbuf, total, d, rbuf, cnt[r], d, fn);
    if (rc) {
        aptus_coll_arr_free(cnt);
        return rc;
    }
    for (int i = 0; i < n; i++)
        cnt[i] *= S.per; /* work elements */
    char *src = NULL, *dst = NULL;
    if (S.direct) {
        src = in_place ? NULL : (char *)sbuf + S.off;
        dst = (char *)rbuf + S.off;
        rc = c->is_inter ? aptus_coll_inter_reduce_scatter(src, dst, cnt, &S.R, c)
                         : aptus_coll_reduce_scatter(src, dst, cnt, &S.R, c);
    } else {
        /* the whole input vector in a work buffer; my block ends up at its start */
        src = aptus_coll_rwork(&S, in_place ? rbuf : sbuf, 1, &rc);
        if (rc == 0) {
            if (c->is_inter) {
                dst = aptus_coll_rwork(&Sme, rbuf, 0, &rc);
                if (rc == 0)
                    rc = aptus_coll_inter_reduce_scatter(src, dst, cnt, &S.R, c);
                if (dst) {
                    int rc2 = aptus_coll_rdone(&Sme, dst, rbuf, rc == 0);
                    rc = rc ? rc : rc2;
                }
            } else {
                rc = aptus_coll_reduce_scatter(NULL, src, cnt, &S.R, c);
                if (rc == 0 && Sme.count) {
                    /* src now starts with my block: hand it to a setup of cnt[r] elements */
                    rc = aptus_coll_rdone(&Sme, src, rbuf, 1);
                    src = NULL;
                }
            }
        }
        if (src)
            aptus_coll_rdone(&S, src, NULL, 0);
    }
    aptus_coll_arr_free(cnt);
    return fail(c, rc, fn);
}

/* Reduce_scatter's forms: the counts array must be there. */
static int reduce_scatter_v(const char *fn, const void *sbuf, void *rbuf, const void *counts, MPI_Datatype datatype,
                            MPI_Op op, MPI_Comm comm, int large)
{
    GET_COMM(c, comm, fn);
    if (!counts)
        return aptus_error(c, MPI_ERR_ARG, fn, "null receive counts array");
    return reduce_scatter_any(fn, sbuf, rbuf, counts, 0, datatype, op, comm, large);
}

int PMPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op,
                        MPI_Comm comm)
{
    APTUS_API_LOCKED(reduce_scatter_v("MPI_Reduce_scatter", sendbuf, recvbuf, recvcounts, datatype, op, comm, 0));
}
APTUS_ALIAS(Reduce_scatter)
int PMPI_Reduce_scatter_c(const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[], MPI_Datatype datatype,
                          MPI_Op op, MPI_Comm comm)
{
    APTUS_API_LOCKED(reduce_scatter_v("MPI_Reduce_scatter_c", sendbuf, recvbuf, recvcounts, datatype, op, comm, 1));
}
APTUS_ALIAS(Reduce_scatter_c)
int PMPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op,
                              MPI_Comm comm)
{
    APTUS_API_LOCKED(
        reduce_scatter_any("MPI_Reduce_scatter_block", sendbuf, recvbuf, NULL, recvcount, datatype, op, comm, 0));
}
APTUS_ALIAS(Reduce_scatter_block)
int PMPI_Reduce_scatter_block_c(const void *sendbuf, void *recvbuf, MPI_Count recvcount, MPI_Datatype datatype,
                                MPI_Op op, MPI_Comm comm)
{
    APTUS_API_LOCKED(
        reduce_scatter_any("MPI_Reduce_scatter_block_c", sendbuf, recvbuf, NULL, recvcount, datatype, op, comm, 1));
}
APTUS_ALIAS(Reduce_scatter_block_c)

/* ---- Reduce_local and the op objects ----------------------------------------------------------------- */

static int reduce_local_any(const char *fn, const void *inbuf, void *inoutbuf, MPI_Count count, MPI_Datatype datatype,
                            MPI_Op oph)
{
    API_INIT(fn);
    const struct aptus_dtype *d = NULL;
    struct coll_rsetup S;
    TRY(red_args(NULL, count, datatype, oph, fn, &d, &S));
    TRY(buf_arg(NULL, inbuf, count, d, fn, "input buffer"));
    TRY(buf_arg(NULL, inoutbuf, count, d, fn, "input/output buffer"));
    TRY(alias_arg(NULL, inbuf, (size_t)count, d, inoutbuf, (size_t)count, d, fn));
    int rc = 0, rc2 = 0;
    char *in = aptus_coll_rwork(&S, inbuf, 1, &rc), *io = NULL;
    if (rc == 0)
        io = aptus_coll_rwork(&S, inoutbuf, 1, &rc);
    if (rc == 0)
        aptus_coll_red_apply(&S.R, in, io, 0, S.n);
    if (io)
        rc2 = aptus_coll_rdone(&S, io, inoutbuf, rc == 0);
    if (in)
        aptus_coll_rdone(&S, in, NULL, 0);
    return fail(NULL, rc ? rc : rc2, fn);
}

int PMPI_Reduce_local(const void *inbuf, void *inoutbuf, int count, MPI_Datatype datatype, MPI_Op op)
{
    APTUS_API_LOCKED(reduce_local_any("MPI_Reduce_local", inbuf, inoutbuf, count, datatype, op));
}
APTUS_ALIAS(Reduce_local)
int PMPI_Reduce_local_c(const void *inbuf, void *inoutbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op)
{
    APTUS_API_LOCKED(reduce_local_any("MPI_Reduce_local_c", inbuf, inoutbuf, count, datatype, op));
}
APTUS_ALIAS(Reduce_local_c)

static int op_create_any(const char *fn, MPI_User_function *fn_i, MPI_User_function_c *fn_c, int commute, MPI_Op *op)
{
    API_INIT(fn);
    if (!fn_i && !fn_c)
        return aptus_error(NULL, MPI_ERR_ARG, fn, "null user function");
    if (!op)
        return aptus_error(NULL, MPI_ERR_ARG, fn, "null output handle");
    struct aptus_op *o = aptus_obj_alloc(APTUS_OBJ_OP, sizeof *o);
    if (!o)
        return aptus_error(NULL, MPI_ERR_NO_MEM, fn, "out of memory");
    o->magic = APTUS_MAGIC_OP;
    o->refcount = 1;
    o->commute = commute != 0;
    o->user_fn = fn_i;
    o->user_fn_c = fn_c;
    *op = (MPI_Op)o;
    return MPI_SUCCESS;
}

int PMPI_Op_create(MPI_User_function *user_fn, int commute, MPI_Op *op)
{
    APTUS_OUT_NULL(op, MPI_OP_NULL);
    APTUS_API_LOCKED(op_create_any("MPI_Op_create", user_fn, NULL, commute, op));
}
APTUS_ALIAS(Op_create)
int PMPI_Op_create_c(MPI_User_function_c *user_fn, int commute, MPI_Op *op)
{
    APTUS_OUT_NULL(op, MPI_OP_NULL);
    APTUS_API_LOCKED(op_create_any("MPI_Op_create_c", NULL, user_fn, commute, op));
}
APTUS_ALIAS(Op_create_c)

int PMPI_Op_free(MPI_Op *op)
{
    APTUS_API_LOCK();
    API_INIT("MPI_Op_free");
    struct aptus_op *o = op ? aptus_op_get(*op) : NULL;
    if (!o)
        return aptus_error(NULL, MPI_ERR_OP, "MPI_Op_free", "invalid operation handle");
    if (o->predefined)
        return aptus_error(NULL, MPI_ERR_OP, "MPI_Op_free", "%s is predefined and cannot be freed",
                           aptus_op_name(o->predefined));
    o->magic = 0; /* the handle is gone; a pending nonblocking reduction may still hold the object */
    if (--o->refcount == 0)
        aptus_obj_free(APTUS_OBJ_OP, o);
    *op = MPI_OP_NULL;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Op_free)

int PMPI_Op_commutative(MPI_Op op, int *commute)
{
    APTUS_API_LOCK();
    API_INIT("MPI_Op_commutative");
    struct aptus_op *o = aptus_op_get(op);
    if (!o)
        return aptus_error(NULL, MPI_ERR_OP, "MPI_Op_commutative", "invalid operation handle");
    if (!commute)
        return aptus_error(NULL, MPI_ERR_ARG, "MPI_Op_commutative", "null output argument");
    *commute = o->commute;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Op_commutative)

/* ---- Nonblocking and persistent forms (MPI standard, sections 6.12 and 6.13) ---------------------------- */

/* Each runs the blocking form's code above in recording mode (coll/nbc.h): the same checks,
 * reported by this call, and the same algorithms, recorded as a schedule that the progress
 * engine executes (nonblocking forms) or that MPI_Start starts (persistent forms). */

int aptus_api_nb_begin(MPI_Request *request, MPI_Info info, const char *fn)
{
    APTUS_OUT_NULL(request, MPI_REQUEST_NULL); /* until aptus_api_nb_end succeeds */
    API_INIT(fn);
    if (!request)
        return aptus_error(NULL, MPI_ERR_ARG, fn, "null request pointer");
    if (info != MPI_INFO_NULL && !aptus_info_get(info))
        return aptus_error(NULL, MPI_ERR_INFO, fn, "invalid info handle");
    if (aptus_nbc_recording())
        return aptus_error(NULL, MPI_ERR_OTHER, fn,
                           "called while another collective is being set up on this thread (from an error "
                           "handler?)");
    int rc = aptus_nbc_begin();
    return rc ? aptus_error(NULL, rc, fn, "out of memory") : 0;
}

int aptus_api_nb_replay(const void *key, size_t klen, MPI_Comm comm, MPI_Request *request)
{
    if (!aptus_rt.initialized || aptus_rt.finalized || !request)
        return 0;
    struct aptus_comm *c = aptus_comm_get(comm);
    struct aptus_request *r;
    if (!c || !aptus_nbc_replay(key, klen, c, &r))
        return 0;
    *request = (MPI_Request)r;
    return 1;
}

/* The key of a nonblocking call for the schedule cache (coll/nbc.h): the function and its
 * arguments' values. */
#define NB_KEY_BEGIN(FN)                                                                                               \
    unsigned char nbk_[96];                                                                                            \
    size_t nbkl_ = 0;                                                                                                  \
    const char *nbfn_ = (FN);                                                                                          \
    NB_KEY(nbfn_)
#define NB_KEY(X) (memcpy(nbk_ + nbkl_, &(X), sizeof(X)), nbkl_ += sizeof(X))

/* rc: what recording the blocking form returned (an error it reported already). */
int aptus_api_nb_end(int rc, MPI_Comm comm, MPI_Request *request, int persistent, const void *key, size_t klen,
                     const char *fn)
{
    struct aptus_comm *c = rc ? NULL : aptus_comm_get(comm);
    struct aptus_request *r;
    int erc = aptus_nbc_end(rc, c, persistent, key, klen, &r);
    if (rc)
        return rc;
    if (erc)
        return fail(c, erc, fn);
    *request = (MPI_Request)r;
    return MPI_SUCCESS;
}

int PMPI_Ibarrier(MPI_Comm comm, MPI_Request *request)
{
    APTUS_API_LOCK();
    NB_KEY_BEGIN("MPI_Ibarrier");
    NB_KEY(comm);
    if (aptus_api_nb_replay(nbk_, nbkl_, comm, request))
        return MPI_SUCCESS;
    APTUS_NB_BEGIN("MPI_Ibarrier", MPI_INFO_NULL);
    return aptus_api_nb_end(barrier_any("MPI_Ibarrier", comm), comm, request, 0, nbk_, nbkl_, "MPI_Ibarrier");
}
APTUS_ALIAS(Ibarrier)

int PMPI_Barrier_init(MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    APTUS_API_LOCK();
    APTUS_NB_BEGIN("MPI_Barrier_init", info);
    return aptus_api_nb_end(barrier_any("MPI_Barrier_init", comm), comm, request, 1, NULL, 0, "MPI_Barrier_init");
}
APTUS_ALIAS(Barrier_init)

int PMPI_Ibcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Request *request)
{
    APTUS_API_LOCK();
    NB_KEY_BEGIN("MPI_Ibcast");
    NB_KEY(buffer);
    NB_KEY(count);
    NB_KEY(datatype);
    NB_KEY(root);
    NB_KEY(comm);
    if (aptus_api_nb_replay(nbk_, nbkl_, comm, request))
        return MPI_SUCCESS;
    APTUS_NB_BEGIN("MPI_Ibcast", MPI_INFO_NULL);
    return aptus_api_nb_end(bcast_any("MPI_Ibcast", buffer, count, datatype, root, comm), comm, request, 0, nbk_, nbkl_,
                            "MPI_Ibcast");
}
APTUS_ALIAS(Ibcast)

int PMPI_Ibcast_c(void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Request *request)
{
    APTUS_API_LOCK();
    NB_KEY_BEGIN("MPI_Ibcast_c");
    NB_KEY(buffer);
    NB_KEY(count);
    NB_KEY(datatype);
    NB_KEY(root);
    NB_KEY(comm);
    if (aptus_api_nb_replay(nbk_, nbkl_, comm, request))
        return MPI_SUCCESS;
    APTUS_NB_BEGIN("MPI_Ibcast_c", MPI_INFO_NULL);
    return aptus_api_nb_end(bcast_any("MPI_Ibcast_c", buffer, count, datatype, root, comm), comm, request, 0, nbk_,
                            nbkl_, "MPI_Ibcast_c");
}
APTUS_ALIAS(Ibcast_c)

int PMPI_Bcast_init(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Info info,
                    MPI_Request *request)
{
    APTUS_API_LOCK();
    APTUS_NB_BEGIN("MPI_Bcast_init", info);
    return aptus_api_nb_end(bcast_any("MPI_Bcast_init", buffer, count, datatype, root, comm), comm, request, 1, NULL, 0,
                            "MPI_Bcast_init");
}
APTUS_ALIAS(Bcast_init)

int PMPI_Bcast_init_c(void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Info info,
                      MPI_Request *request)
{
    APTUS_API_LOCK();
    APTUS_NB_BEGIN("MPI_Bcast_init_c", info);
    return aptus_api_nb_end(bcast_any("MPI_Bcast_init_c", buffer, count, datatype, root, comm), comm, request, 1, NULL,
                            0, "MPI_Bcast_init_c");
}
APTUS_ALIAS(Bcast_init_c)

int PMPI_Igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                 MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request)
{
    APTUS_API_LOCK();
    NB_KEY_BEGIN("MPI_Igather");
    NB_KEY(sendbuf);
    NB_KEY(sendcount);
    NB_KEY(sendtype);
    NB_KEY(recvbuf);
    NB_KEY(recvcount);
    NB_KEY(recvtype);
    NB_KEY(root);
    NB_KEY(comm);
    if (aptus_api_nb_replay(nbk_, nbkl_, comm, request))
        return MPI_SUCCESS;
    APTUS_NB_BEGIN("MPI_Igather", MPI_INFO_NULL);
    return aptus_api_nb_end(
        gather_any("MPI_Igather", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm), comm,
        request, 0, nbk_, nbkl_, "MPI_Igather");
}
APTUS_ALIAS(Igather)

int PMPI_Igather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                   MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request)
{
    APTUS_API_LOCK();
    NB_KEY_BEGIN("MPI_Igather_c");
    NB_KEY(sendbuf);
    NB_KEY(sendcount);
    NB_KEY(sendtype);
    NB_KEY(recvbuf);
    NB_KEY(recvcount);
    NB_KEY(recvtype);
    NB_KEY(root);
    NB_KEY(comm);
    if (aptus_api_nb_replay(nbk_, nbkl_, comm, request))
        return MPI_SUCCESS;
    APTUS_NB_BEGIN("MPI_Igather_c", MPI_INFO_NULL);
    return aptus_api_nb_end(
        gather_any("MPI_Igather_c", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm), comm,
        request, 0, nbk_, nbkl_, "MPI_Igather_c");
}
APTUS_ALIAS(Igather_c)

int PMPI_Gather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                     MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    APTUS_API_LOCK();
    APTUS_NB_BEGIN("MPI_Gather_init", info);
    return aptus_api_nb_end(
        gather_any("MPI_Gather_init", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm), comm,
        request, 1, NULL, 0, "MPI_Gather_init");
}
APTUS_ALIAS(Gather_init)

int PMPI_Gather_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                       MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                       MPI_Request *request)
{
    APTUS_API_LOCK();
    APTUS_NB_BEGIN("MPI_Gather_init_c", info);
    return aptus_api_nb_end(
        gather_any("MPI_Gather_init_c", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm), comm,
        request, 1, NULL, 0, "MPI_Gather_init_c");
}
APTUS_ALIAS(Gather_init_c)

int PMPI_Igatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int *recvcounts,
                  const int *displs, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request)
{
    APTUS_API_LOCK();
    APTUS_NB_BEGIN("MPI_Igatherv", MPI_INFO_NULL);
    return aptus_api_nb_end(
        gatherv_any("MPI_Igatherv", sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm, 0),
        comm, request, 0, NULL, 0, "MPI_Igatherv");
}
APTUS_ALIAS(Igatherv)

int PMPI_Igatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                    const MPI_Count *recvcounts, const MPI_Aint *displs, MPI_Datatype recvtype, int root, MPI_Comm comm,
                    MPI_Request *request)
{
    APTUS_API_LOCK();
    APTUS_NB_BEGIN("MPI_Igatherv_c", MPI_INFO_NULL);
    return aptus_api_nb_end(gatherv_any("MPI_Igatherv_c", sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                        recvtype, root, comm, 1),
                            comm, request, 0, NULL, 0, "MPI_Igatherv_c");
}
APTUS_ALIAS(Igatherv_c)

int PMPI_Gatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int *recvcounts,
                      const int *displs, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                      MPI_Request *request)
{
    APTUS_API_LOCK();
    APTUS_NB_BEGIN("MPI_Gatherv_init", info);
    return aptus_api_nb_end(gatherv_any("MPI_Gatherv_init", sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                        recvtype, root, comm, 0),
                            comm, request, 1, NULL, 0, "MPI_Gatherv_init");
}
APTUS_ALIAS(Gatherv_init)

int PMPI_Gatherv_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                        const MPI_Count *recvcounts, const MPI_Aint *displs, MPI_Datatype recvtype, int root,
                        MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    APTUS_API_LOCK();
    APTUS_NB_BEGIN("MPI_Gatherv_init_c", info);
    return aptus_api_nb_end(gatherv_any("MPI_Gatherv_init_c", sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                        recvtype, root, comm, 1),
                            comm, request, 1, NULL, 0, "MPI_Gatherv_init_c");
}
APTUS_ALIAS(Gatherv_init_c)

int PMPI_Iscatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                  MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request)
{
    APTUS_API_LOCK();
    NB_KEY_BEGIN("MPI_Iscatter");
    NB_KEY(sendbuf);
    NB_KEY(sendcount);
    NB_KEY(sendtype);
    NB_KEY(recvbuf);
    NB_KEY(recvcount);
    NB_KEY(recvtype);
    NB_KEY(root);
    NB_KEY(comm);
    if (aptus_api_nb_replay(nbk_, nbkl_, comm, request))
        return MPI_SUCCESS;
    APTUS_NB_BEGIN("MPI_Iscatter", MPI_INFO_NULL);
    return aptus_api_nb_end(
        scatter_any("MPI_Iscatter", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm), comm,
        request, 0, nbk_, nbkl_, "MPI_Iscatter");
}
APTUS_ALIAS(Iscatter)

int PMPI_Iscatter_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                    MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request)
{
    APTUS_API_LOCK();
    NB_KEY_BEGIN("MPI_Iscatter_c");
    NB_KEY(sendbuf);
    NB_KEY(sendcount);
    NB_KEY(sendtype);
    NB_KEY(recvbuf);
    NB_KEY(recvcount);
    NB_KEY(recvtype);
    NB_KEY(root);
    NB_KEY(comm);
    if (aptus_api_nb_replay(nbk_, nbkl_, comm, request))
        return MPI_SUCCESS;
    APTUS_NB_BEGIN("MPI_Iscatter_c", MPI_INFO_NULL);
    return aptus_api_nb_end(
        scatter_any("MPI_Iscatter_c", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm), comm,
        request, 0, nbk_, nbkl_, "MPI_Iscatter_c");
}
APTUS_ALIAS(Iscatter_c)

int PMPI_Scatter_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                      MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    APTUS_API_LOCK();
    APTUS_NB_BEGIN("MPI_Scatter_init", info);
    return aptus_api_nb_end(
        scatter_any("MPI_Scatter_init", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm), comm,
        request, 1, NULL, 0, "MPI_Scatter_init");
}
APTUS_ALIAS(Scatter_init)

int PMPI_Scatter_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                        MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                        MPI_Request *request)
{
    APTUS_API_LOCK();
    APTUS_NB_BEGIN("MPI_Scatter_init_c", info);
    return aptus_api_nb_end(
        scatter_any("MPI_Scatter_init_c", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm), comm,
        request, 1, NULL, 0, "MPI_Scatter_init_c");
}
APTUS_ALIAS(Scatter_init_c)

int PMPI_Iscatterv(const void *sendbuf, const int *sendcounts, const int *displs, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request)
{
    APTUS_API_LOCK();
    APTUS_NB_BEGIN("MPI_Iscatterv", MPI_INFO_NULL);
    return aptus_api_nb_end(scatterv_any("MPI_Iscatterv", sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
                                         recvtype, root, comm, 0),
                            comm, request, 0, NULL, 0, "MPI_Iscatterv");
}
APTUS_ALIAS(Iscatterv)

int PMPI_Iscatterv_c(const void *sendbuf, const MPI_Count *sendcounts, const MPI_Aint *displs, MPI_Datatype sendtype,
                     void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                     MPI_Request *request)
{
    APTUS_API_LOCK();
    APTUS_NB_BEGIN("MPI_Iscatterv_c", MPI_INFO_NULL);
    return aptus_api_nb_end(scatterv_any("MPI_Iscatterv_c", sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
                                         recvtype, root, comm, 1),
                            comm, request, 0, NULL, 0, "MPI_Iscatterv_c");
}
APTUS_ALIAS(Iscatterv_c)

int PMPI_Scatterv_init(const void *sendbuf, const int *sendcounts, const int *displs, MPI_Datatype sendtype,
                       void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                       MPI_Request *request)
{
    APTUS_API_LOCK();
    APTUS_NB_BEGIN("MPI_Scatterv_init", info);
    return aptus_api_nb_end(scatterv_any("MPI_Scatterv_init", sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
                                         recvtype, root, comm, 0),
                            comm, request, 1, NULL, 0, "MPI_Scatterv_init");
}
APTUS_ALIAS(Scatterv_init)

int PMPI_Scatterv_init_c(const void *sendbuf, const MPI_Count *sendcounts, const MPI_Aint *displs,
                         MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root,
                         MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    APTUS_API_LOCK();
    APTUS_NB_BEGIN("MPI_Scatterv_init_c", info);
    return aptus_api_nb_end(scatterv_any("MPI_Scatterv_init_c", sendbuf, sendcounts, displs, sendtype, recvbuf,
                                         recvcount, recvtype, root, comm, 1),
                            comm, request, 1, NULL, 0, "MPI_Scatterv_init_c");
}
APTUS_ALIAS(Scatterv_init_c)

int PMPI_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                    MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    APTUS_API_LOCK();
    NB_KEY_BEGIN("MPI_Iallgather");
    NB_KEY(sendbuf);
    NB_KEY(sendcount);
    NB_KEY(sendtype);
    NB_KEY(recvbuf);
    NB_KEY(recvcount);
    NB_KEY(recvtype);
    NB_KEY(comm);
    if (aptus_api_nb_replay(nbk_, nbkl_, comm, request))
        return MPI_SUCCESS;
    APTUS_NB_BEGIN("MPI_Iallgather", MPI_INFO_NULL);
    return aptus_api_nb_end(
        allgather_any("MPI_Iallgather", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm), comm,
        request, 0, nbk_, nbkl_, "MPI_Iallgather");
}
APTUS_ALIAS(Iallgather)

int PMPI_Iallgather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                      MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    APTUS_API_LOCK();
    NB_KEY_BEGIN("MPI_Iallgather_c");
    NB_KEY(sendbuf);
    NB_KEY(sendcount);
    NB_KEY(sendtype);
    NB_KEY(recvbuf);
    NB_KEY(recvcount);
    NB_KEY(recvtype);
    NB_KEY(comm);
    if (aptus_api_nb_replay(nbk_, nbkl_, comm, request))
        return MPI_SUCCESS;
    APTUS_NB_BEGIN("MPI_Iallgather_c", MPI_INFO_NULL);
    return aptus_api_nb_end(
        allgather_any("MPI_Iallgather_c", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm), comm,
        request, 0, nbk_, nbkl_, "MPI_Iallgather_c");
}
APTUS_ALIAS(Iallgather_c)

int PMPI_Allgather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                        MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    APTUS_API_LOCK();
    APTUS_NB_BEGIN("MPI_Allgather_init", info);
    return aptus_api_nb_end(
        allgather_any("MPI_Allgather_init", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm), comm,
        request, 1, NULL, 0, "MPI_Allgather_init");
}
APTUS_ALIAS(Allgather_init)

int PMPI_Allgather_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                          MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                          MPI_Request *request)
{
    APTUS_API_LOCK();
    APTUS_NB_BEGIN("MPI_Allgather_init_c", info);
    return aptus_api_nb_end(
        allgather_any("MPI_Allgather_init_c", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm), comm,
        request, 1, NULL, 0, "MPI_Allgather_init_c");
}
APTUS_ALIAS(Allgather_init_c)

int PMPI_Iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int *recvcounts,
                     const int *displs, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    APTUS_API_LOCK();
    APTUS_NB_BEGIN("MPI_Iallgatherv", MPI_INFO_NULL);
    return aptus_api_nb_end(
        allgatherv_any("MPI_Iallgatherv", sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, 0),
        comm, request, 0, NULL, 0, "MPI_Iallgatherv");
}
APTUS_ALIAS(Iallgatherv)

int PMPI_Iallgatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                       const MPI_Count *recvcounts, const MPI_Aint *displs, MPI_Datatype recvtype, MPI_Comm comm,
                       MPI_Request *request)
{
    APTUS_API_LOCK();
    APTUS_NB_BEGIN("MPI_Iallgatherv_c", MPI_INFO_NULL);
    return aptus_api_nb_end(allgatherv_any("MPI_Iallgatherv_c", sendbuf, sendcount, sendtype, recvbuf, recvcounts,
                                           displs, recvtype, comm, 1),
                            comm, request, 0, NULL, 0, "MPI_Iallgatherv_c");
}
APTUS_ALIAS(Iallgatherv_c)

int PMPI_Allgatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                         const int *recvcounts, const int *displs, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                         MPI_Request *request)
{
    APTUS_API_LOCK();
    APTUS_NB_BEGIN("MPI_Allgatherv_init", info);
    return aptus_api_nb_end(allgatherv_any("MPI_Allgatherv_init", sendbuf, sendcount, sendtype, recvbuf, recvcounts,
                                           displs, recvtype, comm, 0),
                            comm, request, 1, NULL, 0, "MPI_Allgatherv_init");
}
APTUS_ALIAS(Allgatherv_init)

int PMPI_Allgatherv_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                           const MPI_Count *recvcounts, const MPI_Aint *displs, MPI_Datatype recvtype, MPI_Comm comm,
                           MPI_Info info, MPI_Request *request)
{
    APTUS_API_LOCK();
    APTUS_NB_BEGIN("MPI_Allgatherv_init_c", info);
    return aptus_api_nb_end(allgatherv_any("MPI_Allgatherv_init_c", sendbuf, sendcount, sendtype, recvbuf, recvcounts,
                                           displs, recvtype, comm, 1),
                            comm, request, 1, NULL, 0, "MPI_Allgatherv_init_c");
}
APTUS_ALIAS(Allgatherv_init_c)

int PMPI_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                   MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    APTUS_API_LOCK();
    NB_KEY_BEGIN("MPI_Ialltoall");
    NB_KEY(sendbuf);
    NB_KEY(sendcount);
    NB_KEY(sendtype);
    NB_KEY(recvbuf);
    NB_KEY(recvcount);
    NB_KEY(recvtype);
    NB_KEY(comm);
    if (aptus_api_nb_replay(nbk_, nbkl_, comm, request))
        return MPI_SUCCESS;
    APTUS_NB_BEGIN("MPI_Ialltoall", MPI_INFO_NULL);
    return aptus_api_nb_end(
        alltoall_any("MPI_Ialltoall", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm), comm, request,
        0, nbk_, nbkl_, "MPI_Ialltoall");
}
APTUS_ALIAS(Ialltoall)

int PMPI_Ialltoall_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                     MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    APTUS_API_LOCK();
    NB_KEY_BEGIN("MPI_Ialltoall_c");
    NB_KEY(sendbuf);
    NB_KEY(sendcount);
    NB_KEY(sendtype);
    NB_KEY(recvbuf);
    NB_KEY(recvcount);
    NB_KEY(recvtype);
    NB_KEY(comm);
    if (aptus_api_nb_replay(nbk_, nbkl_, comm, request))
        return MPI_SUCCESS;
    APTUS_NB_BEGIN("MPI_Ialltoall_c", MPI_INFO_NULL);
    return aptus_api_nb_end(
        alltoall_any("MPI_Ialltoall_c", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm), comm,
        request, 0, nbk_, nbkl_, "MPI_Ialltoall_c");
}
APTUS_ALIAS(Ialltoall_c)

int PMPI_Alltoall_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                       MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    APTUS_API_LOCK();
    APTUS_NB_BEGIN("MPI_Alltoall_init", info);
    return aptus_api_nb_end(
        alltoall_any("MPI_Alltoall_init", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm), comm,
        request, 1, NULL, 0, "MPI_Alltoall_init");
}
APTUS_ALIAS(Alltoall_init)

int PMPI_Alltoall_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                         MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    APTUS_API_LOCK();
    APTUS_NB_BEGIN("MPI_Alltoall_init_c", info);
    return aptus_api_nb_end(
        alltoall_any("MPI_Alltoall_init_c", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm), comm,
        request, 1, NULL, 0, "MPI_Alltoall_init_c");
}
APTUS_ALIAS(Alltoall_init_c)

int PMPI_Ialltoallv(const void *sendbuf, const int *sendcounts, const int *sdispls, MPI_Datatype sendtype,
                    void *recvbuf, const int *recvcounts, const int *rdispls, MPI_Datatype recvtype, MPI_Comm comm,
                    MPI_Request *request)
{
    APTUS_API_LOCK();
    APTUS_NB_BEGIN("MPI_Ialltoallv", MPI_INFO_NULL);
    return aptus_api_nb_end(alltoallvw_any("MPI_Ialltoallv", sendbuf, sendcounts, sdispls, &sendtype, recvbuf,
                                           recvcounts, rdispls, &recvtype, comm, 0, 0),
                            comm, request, 0, NULL, 0, "MPI_Ialltoallv");
}
APTUS_ALIAS(Ialltoallv)

int PMPI_Ialltoallv_c(const void *sendbuf, const MPI_Count *sendcounts, const MPI_Aint *sdispls, MPI_Datatype sendtype,
                      void *recvbuf, const MPI_Count *recvcounts, const MPI_Aint *rdispls, MPI_Datatype recvtype,
                      MPI_Comm comm, MPI_Request *request)
{
    APTUS_API_LOCK();
    APTUS_NB_BEGIN("MPI_Ialltoallv_c", MPI_INFO_NULL);
    return aptus_api_nb_end(alltoallvw_any("MPI_Ialltoallv_c", sendbuf, sendcounts, sdispls, &sendtype, recvbuf,
                                           recvcounts, rdispls, &recvtype, comm, 1, 0),
                            comm, request, 0, NULL, 0, "MPI_Ialltoallv_c");
}
APTUS_ALIAS(Ialltoallv_c)

int PMPI_Alltoallv_init(const void *sendbuf, const int *sendcounts, const int *sdispls, MPI_Datatype sendtype,
                        void *recvbuf, const int *recvcounts, const int *rdispls, MPI_Datatype recvtype, MPI_Comm comm,
                        MPI_Info info, MPI_Request *request)
{
    APTUS_API_LOCK();
    APTUS_NB_BEGIN("MPI_Alltoallv_init", info);
    return aptus_api_nb_end(alltoallvw_any("MPI_Alltoallv_init", sendbuf, sendcounts, sdispls, &sendtype, recvbuf,
                                           recvcounts, rdispls, &recvtype, comm, 0, 0),
                            comm, request, 1, NULL, 0, "MPI_Alltoallv_init");
}
APTUS_ALIAS(Alltoallv_init)

int PMPI_Alltoallv_init_c(const void *sendbuf, const MPI_Count *sendcounts, const MPI_Aint *sdispls,
                          MPI_Datatype sendtype, void *recvbuf, const MPI_Count *recvcounts, const MPI_Aint *rdispls,
                          MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    APTUS_API_LOCK();
    APTUS_NB_BEGIN("MPI_Alltoallv_init_c", info);
    return aptus_api_nb_end(alltoallvw_any("MPI_Alltoallv_init_c", sendbuf, sendcounts, sdispls, &sendtype, recvbuf,
                                           recvcounts, rdispls, &recvtype, comm, 1, 0),
                            comm, request, 1, NULL, 0, "MPI_Alltoallv_init_c");
}
APTUS_ALIAS(Alltoallv_init_c)

int PMPI_Ialltoallw(const void *sendbuf, const int *sendcounts, const int *sdispls, const MPI_Datatype *sendtypes,
                    void *recvbuf, const int *recvcounts, const int *rdispls, const MPI_Datatype *recvtypes,
                    MPI_Comm comm, MPI_Request *request)
{
    APTUS_API_LOCK();
    APTUS_NB_BEGIN("MPI_Ialltoallw", MPI_INFO_NULL);
    return aptus_api_nb_end(alltoallvw_any("MPI_Ialltoallw", sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                                           recvcounts, rdispls, recvtypes, comm, 0, 1),
                            comm, request, 0, NULL, 0, "MPI_Ialltoallw");
}
APTUS_ALIAS(Ialltoallw)

int PMPI_Ialltoallw_c(const void *sendbuf, const MPI_Count *sendcounts, const MPI_Aint *sdispls,
                      const MPI_Datatype *sendtypes, void *recvbuf, const MPI_Count *recvcounts,
                      const MPI_Aint *rdispls, const MPI_Datatype *recvtypes, MPI_Comm comm, MPI_Request *request)
{
    APTUS_API_LOCK();
    APTUS_NB_BEGIN("MPI_Ialltoallw_c", MPI_INFO_NULL);
    return aptus_api_nb_end(alltoallvw_any("MPI_Ialltoallw_c", sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                                           recvcounts, rdispls, recvtypes, comm, 1, 1),
                            comm, request, 0, NULL, 0, "MPI_Ialltoallw_c");
}
APTUS_ALIAS(Ialltoallw_c)

int PMPI_Alltoallw_init(const void *sendbuf, const int *sendcounts, const int *sdispls, const MPI_Datatype *sendtypes,
                        void *recvbuf, const int *recvcounts, const int *rdispls, const MPI_Datatype *recvtypes,
                        MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    APTUS_API_LOCK();
    APTUS_NB_BEGIN("MPI_Alltoallw_init", info);
    return aptus_api_nb_end(alltoallvw_any("MPI_Alltoallw_init", sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                                           recvcounts, rdispls, recvtypes, comm, 0, 1),
                            comm, request, 1, NULL, 0, "MPI_Alltoallw_init");
}
APTUS_ALIAS(Alltoallw_init)

int PMPI_Alltoallw_init_c(const void *sendbuf, const MPI_Count *sendcounts, const MPI_Aint *sdispls,
                          const MPI_Datatype *sendtypes, void *recvbuf, const MPI_Count *recvcounts,
                          const MPI_Aint *rdispls, const MPI_Datatype *recvtypes, MPI_Comm comm, MPI_Info info,
                          MPI_Request *request)
{
    APTUS_API_LOCK();
    APTUS_NB_BEGIN("MPI_Alltoallw_init_c", info);
    return aptus_api_nb_end(alltoallvw_any("MPI_Alltoallw_init_c", sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                                           recvcounts, rdispls, recvtypes, comm, 1, 1),
                            comm, request, 1, NULL, 0, "MPI_Alltoallw_init_c");
}
APTUS_ALIAS(Alltoallw_init_c)

int PMPI_Ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                 MPI_Comm comm, MPI_Request *request)
{
    APTUS_API_LOCK();
    NB_KEY_BEGIN("MPI_Ireduce");
    NB_KEY(sendbuf);
    NB_KEY(recvbuf);
    NB_KEY(count);
    NB_KEY(datatype);
    NB_KEY(op);
    NB_KEY(root);
    NB_KEY(comm);
    if (aptus_api_nb_replay(nbk_, nbkl_, comm, request))
        return MPI_SUCCESS;
    APTUS_NB_BEGIN("MPI_Ireduce", MPI_INFO_NULL);
    return aptus_api_nb_end(reduce_any("MPI_Ireduce", sendbuf, recvbuf, count, datatype, op, root, comm), comm, request,
                            0, nbk_, nbkl_, "MPI_Ireduce");
}
APTUS_ALIAS(Ireduce)

int PMPI_Ireduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, int root,
                   MPI_Comm comm, MPI_Request *request)
{
    APTUS_API_LOCK();
    NB_KEY_BEGIN("MPI_Ireduce_c");
    NB_KEY(sendbuf);
    NB_KEY(recvbuf);
    NB_KEY(count);
    NB_KEY(datatype);
    NB_KEY(op);
    NB_KEY(root);
    NB_KEY(comm);
    if (aptus_api_nb_replay(nbk_, nbkl_, comm, request))
        return MPI_SUCCESS;
    APTUS_NB_BEGIN("MPI_Ireduce_c", MPI_INFO_NULL);
    return aptus_api_nb_end(reduce_any("MPI_Ireduce_c", sendbuf, recvbuf, count, datatype, op, root, comm), comm,
                            request, 0, nbk_, nbkl_, "MPI_Ireduce_c");
}
APTUS_ALIAS(Ireduce_c)

int PMPI_Reduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                     MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    APTUS_API_LOCK();
    APTUS_NB_BEGIN("MPI_Reduce_init", info);
    return aptus_api_nb_end(reduce_any("MPI_Reduce_init", sendbuf, recvbuf, count, datatype, op, root, comm), comm,
                            request, 1, NULL, 0, "MPI_Reduce_init");
}
APTUS_ALIAS(Reduce_init)

int PMPI_Reduce_init_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, int root,
                       MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    APTUS_API_LOCK();
    APTUS_NB_BEGIN("MPI_Reduce_init_c", info);
    return aptus_api_nb_end(reduce_any("MPI_Reduce_init_c", sendbuf, recvbuf, count, datatype, op, root, comm), comm,
                            request, 1, NULL, 0, "MPI_Reduce_init_c");
}
APTUS_ALIAS(Reduce_init_c)

int PMPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                    MPI_Request *request)
{
    APTUS_API_LOCK();
    NB_KEY_BEGIN("MPI_Iallreduce");
    NB_KEY(sendbuf);
    NB_KEY(recvbuf);
    NB_KEY(count);
    NB_KEY(datatype);
    NB_KEY(op);
    NB_KEY(comm);
    if (aptus_api_nb_replay(nbk_, nbkl_, comm, request))
        return MPI_SUCCESS;
    APTUS_NB_BEGIN("MPI_Iallreduce", MPI_INFO_NULL);
    return aptus_api_nb_end(allreduce_any("MPI_Iallreduce", sendbuf, recvbuf, count, datatype, op, comm, RED_ALL), comm,
                            request, 0, nbk_, nbkl_, "MPI_Iallreduce");
}
APTUS_ALIAS(Iallreduce)

int PMPI_Iallreduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                      MPI_Comm comm, MPI_Request *request)
{
    APTUS_API_LOCK();
    NB_KEY_BEGIN("MPI_Iallreduce_c");
    NB_KEY(sendbuf);
    NB_KEY(recvbuf);
    NB_KEY(count);
    NB_KEY(datatype);
    NB_KEY(op);
    NB_KEY(comm);
    if (aptus_api_nb_replay(nbk_, nbkl_, comm, request))
        return MPI_SUCCESS;
    APTUS_NB_BEGIN("MPI_Iallreduce_c", MPI_INFO_NULL);
    return aptus_api_nb_end(allreduce_any("MPI_Iallreduce_c", sendbuf, recvbuf, count, datatype, op, comm, RED_ALL),
                            comm, request, 0, nbk_, nbkl_, "MPI_Iallreduce_c");
}
APTUS_ALIAS(Iallreduce_c)

int PMPI_Allreduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                        MPI_Info info, MPI_Request *request)
{
    APTUS_API_LOCK();
    APTUS_NB_BEGIN("MPI_Allreduce_init", info);
    return aptus_api_nb_end(allreduce_any("MPI_Allreduce_init", sendbuf, recvbuf, count, datatype, op, comm, RED_ALL),
                            comm, request, 1, NULL, 0, "MPI_Allreduce_init");
}
APTUS_ALIAS(Allreduce_init)

int PMPI_Allreduce_init_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                          MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    APTUS_API_LOCK();
    APTUS_NB_BEGIN("MPI_Allreduce_init_c", info);
    return aptus_api_nb_end(allreduce_any("MPI_Allreduce_init_c", sendbuf, recvbuf, count, datatype, op, comm, RED_ALL),
                            comm, request, 1, NULL, 0, "MPI_Allreduce_init_c");
}
APTUS_ALIAS(Allreduce_init_c)

int PMPI_Ireduce_scatter(const void *sendbuf, void *recvbuf, const int *recvcounts, MPI_Datatype datatype, MPI_Op op,
                         MPI_Comm comm, MPI_Request *request)
{
    APTUS_API_LOCK();
    APTUS_NB_BEGIN("MPI_Ireduce_scatter", MPI_INFO_NULL);
    return aptus_api_nb_end(
        reduce_scatter_v("MPI_Ireduce_scatter", sendbuf, recvbuf, recvcounts, datatype, op, comm, 0), comm, request, 0,
        NULL, 0, "MPI_Ireduce_scatter");
}
APTUS_ALIAS(Ireduce_scatter)

int PMPI_Ireduce_scatter_c(const void *sendbuf, void *recvbuf, const MPI_Count *recvcounts, MPI_Datatype datatype,
                           MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    APTUS_API_LOCK();
    APTUS_NB_BEGIN("MPI_Ireduce_scatter_c", MPI_INFO_NULL);
    return aptus_api_nb_end(
        reduce_scatter_v("MPI_Ireduce_scatter_c", sendbuf, recvbuf, recvcounts, datatype, op, comm, 1), comm, request,
        0, NULL, 0, "MPI_Ireduce_scatter_c");
}
APTUS_ALIAS(Ireduce_scatter_c)

int PMPI_Reduce_scatter_init(const void *sendbuf, void *recvbuf, const int *recvcounts, MPI_Datatype datatype,
                             MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    APTUS_API_LOCK();
    APTUS_NB_BEGIN("MPI_Reduce_scatter_init", info);
    return aptus_api_nb_end(
        reduce_scatter_v("MPI_Reduce_scatter_init", sendbuf, recvbuf, recvcounts, datatype, op, comm, 0), comm, request,
        1, NULL, 0, "MPI_Reduce_scatter_init");
}
APTUS_ALIAS(Reduce_scatter_init)

int PMPI_Reduce_scatter_init_c(const void *sendbuf, void *recvbuf, const MPI_Count *recvcounts, MPI_Datatype datatype,
                               MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    APTUS_API_LOCK();
    APTUS_NB_BEGIN("MPI_Reduce_scatter_init_c", info);
    return aptus_api_nb_end(
        reduce_scatter_v("MPI_Reduce_scatter_init_c", sendbuf, recvbuf, recvcounts, datatype, op, comm, 1), comm,
        request, 1, NULL, 0, "MPI_Reduce_scatter_init_c");
}
APTUS_ALIAS(Reduce_scatter_init_c)

int PMPI_Ireduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op,
                               MPI_Comm comm, MPI_Request *request)
{
    APTUS_API_LOCK();
    NB_KEY_BEGIN("MPI_Ireduce_scatter_block");
    NB_KEY(sendbuf);
    NB_KEY(recvbuf);
    NB_KEY(recvcount);
    NB_KEY(datatype);
    NB_KEY(op);
    NB_KEY(comm);
    if (aptus_api_nb_replay(nbk_, nbkl_, comm, request))
        return MPI_SUCCESS;
    APTUS_NB_BEGIN("MPI_Ireduce_scatter_block", MPI_INFO_NULL);
    return aptus_api_nb_end(
        reduce_scatter_any("MPI_Ireduce_scatter_block", sendbuf, recvbuf, NULL, recvcount, datatype, op, comm, 0), comm,
        request, 0, nbk_, nbkl_, "MPI_Ireduce_scatter_block");
}
APTUS_ALIAS(Ireduce_scatter_block)

int PMPI_Ireduce_scatter_block_c(const void *sendbuf, void *recvbuf, MPI_Count recvcount, MPI_Datatype datatype,
                                 MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    APTUS_API_LOCK();
    NB_KEY_BEGIN("MPI_Ireduce_scatter_block_c");
    NB_KEY(sendbuf);
    NB_KEY(recvbuf);
    NB_KEY(recvcount);
    NB_KEY(datatype);
    NB_KEY(op);
    NB_KEY(comm);
    if (aptus_api_nb_replay(nbk_, nbkl_, comm, request))
        return MPI_SUCCESS;
    APTUS_NB_BEGIN("MPI_Ireduce_scatter_block_c", MPI_INFO_NULL);
    return aptus_api_nb_end(
        reduce_scatter_any("MPI_Ireduce_scatter_block_c", sendbuf, recvbuf, NULL, recvcount, datatype, op, comm, 1),
        comm, request, 0, nbk_, nbkl_, "MPI_Ireduce_scatter_block_c");
}
APTUS_ALIAS(Ireduce_scatter_block_c)

int PMPI_Reduce_scatter_block_init(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op,
                                   MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    APTUS_API_LOCK();
    APTUS_NB_BEGIN("MPI_Reduce_scatter_block_init", info);
    return aptus_api_nb_end(
        reduce_scatter_any("MPI_Reduce_scatter_block_init", sendbuf, recvbuf, NULL, recvcount, datatype, op, comm, 0),
        comm, request, 1, NULL, 0, "MPI_Reduce_scatter_block_init");
}
APTUS_ALIAS(Reduce_scatter_block_init)

int PMPI_Reduce_scatter_block_init_c(const void *sendbuf, void *recvbuf, MPI_Count recvcount, MPI_Datatype datatype,
                                     MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    APTUS_API_LOCK();
    APTUS_NB_BEGIN("MPI_Reduce_scatter_block_init_c", info);
    return aptus_api_nb_end(
        reduce_scatter_any("MPI_Reduce_scatter_block_init_c", sendbuf, recvbuf, NULL, recvcount, datatype, op, comm, 1),
        comm, request, 1, NULL, 0, "MPI_Reduce_scatter_block_init_c");
}
APTUS_ALIAS(Reduce_scatter_block_init_c)

int PMPI_Iscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
               MPI_Request *request)
{
    APTUS_API_LOCK();
    NB_KEY_BEGIN("MPI_Iscan");
    NB_KEY(sendbuf);
    NB_KEY(recvbuf);
    NB_KEY(count);
    NB_KEY(datatype);
    NB_KEY(op);
    NB_KEY(comm);
    if (aptus_api_nb_replay(nbk_, nbkl_, comm, request))
        return MPI_SUCCESS;
    APTUS_NB_BEGIN("MPI_Iscan", MPI_INFO_NULL);
    return aptus_api_nb_end(allreduce_any("MPI_Iscan", sendbuf, recvbuf, count, datatype, op, comm, RED_SCAN), comm,
                            request, 0, nbk_, nbkl_, "MPI_Iscan");
}
APTUS_ALIAS(Iscan)

int PMPI_Iscan_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                 MPI_Request *request)
{
    APTUS_API_LOCK();
    NB_KEY_BEGIN("MPI_Iscan_c");
    NB_KEY(sendbuf);
    NB_KEY(recvbuf);
    NB_KEY(count);
    NB_KEY(datatype);
    NB_KEY(op);
    NB_KEY(comm);
    if (aptus_api_nb_replay(nbk_, nbkl_, comm, request))
        return MPI_SUCCESS;
    APTUS_NB_BEGIN("MPI_Iscan_c", MPI_INFO_NULL);
    return aptus_api_nb_end(allreduce_any("MPI_Iscan_c", sendbuf, recvbuf, count, datatype, op, comm, RED_SCAN), comm,
                            request, 0, nbk_, nbkl_, "MPI_Iscan_c");
}
APTUS_ALIAS(Iscan_c)

int PMPI_Scan_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                   MPI_Info info, MPI_Request *request)
{
    APTUS_API_LOCK();
    APTUS_NB_BEGIN("MPI_Scan_init", info);
    return aptus_api_nb_end(allreduce_any("MPI_Scan_init", sendbuf, recvbuf, count, datatype, op, comm, RED_SCAN), comm,
                            request, 1, NULL, 0, "MPI_Scan_init");
}
APTUS_ALIAS(Scan_init)

int PMPI_Scan_init_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                     MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    APTUS_API_LOCK();
    APTUS_NB_BEGIN("MPI_Scan_init_c", info);
    return aptus_api_nb_end(allreduce_any("MPI_Scan_init_c", sendbuf, recvbuf, count, datatype, op, comm, RED_SCAN),
                            comm, request, 1, NULL, 0, "MPI_Scan_init_c");
}
APTUS_ALIAS(Scan_init_c)

int PMPI_Iexscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                 MPI_Request *request)
{
    APTUS_API_LOCK();
    NB_KEY_BEGIN("MPI_Iexscan");
    NB_KEY(sendbuf);
    NB_KEY(recvbuf);
    NB_KEY(count);
    NB_KEY(datatype);
    NB_KEY(op);
    NB_KEY(comm);
    if (aptus_api_nb_replay(nbk_, nbkl_, comm, request))
        return MPI_SUCCESS;
    APTUS_NB_BEGIN("MPI_Iexscan", MPI_INFO_NULL);
    return aptus_api_nb_end(allreduce_any("MPI_Iexscan", sendbuf, recvbuf, count, datatype, op, comm, RED_EXSCAN), comm,
                            request, 0, nbk_, nbkl_, "MPI_Iexscan");
}
APTUS_ALIAS(Iexscan)

int PMPI_Iexscan_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                   MPI_Request *request)
{
    APTUS_API_LOCK();
    NB_KEY_BEGIN("MPI_Iexscan_c");
    NB_KEY(sendbuf);
    NB_KEY(recvbuf);
    NB_KEY(count);
    NB_KEY(datatype);
    NB_KEY(op);
    NB_KEY(comm);
    if (aptus_api_nb_replay(nbk_, nbkl_, comm, request))
        return MPI_SUCCESS;
    APTUS_NB_BEGIN("MPI_Iexscan_c", MPI_INFO_NULL);
    return aptus_api_nb_end(allreduce_any("MPI_Iexscan_c", sendbuf, recvbuf, count, datatype, op, comm, RED_EXSCAN),
                            comm, request, 0, nbk_, nbkl_, "MPI_Iexscan_c");
}
APTUS_ALIAS(Iexscan_c)

int PMPI_Exscan_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                     MPI_Info info, MPI_Request *request)
{
    APTUS_API_LOCK();
    APTUS_NB_BEGIN("MPI_Exscan_init", info);
    return aptus_api_nb_end(allreduce_any("MPI_Exscan_init", sendbuf, recvbuf, count, datatype, op, comm, RED_EXSCAN),
                            comm, request, 1, NULL, 0, "MPI_Exscan_init");
}
APTUS_ALIAS(Exscan_init)

int PMPI_Exscan_init_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                       MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    APTUS_API_LOCK();
    APTUS_NB_BEGIN("MPI_Exscan_init_c", info);
    return aptus_api_nb_end(allreduce_any("MPI_Exscan_init_c", sendbuf, recvbuf, count, datatype, op, comm, RED_EXSCAN),
                            comm, request, 1, NULL, 0, "MPI_Exscan_init_c");
}
APTUS_ALIAS(Exscan_init_c)
