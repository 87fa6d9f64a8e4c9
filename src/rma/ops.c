/* The operations (MPI_Put, MPI_Get, the accumulates, compare-and-swap): the epoch and range
 * checks, the target's byte ranges, the choice of path (load/store, Cross Memory Attach, the copy
 * agent, RDMA, active messages); the load/store fast path of put and get. */
#include "rma/rma_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/datatype.h"
#include "core/op.h"
#include "pt2pt/pt2pt.h"
#include "runtime/config.h"
#include "runtime/progress.h"

/* ---- target layouts ------------------------------------------------------------------------ */

/* The byte ranges of tcount elements of tdt at byte offset start (relative to the target's
 * base, or an absolute address for dynamic windows), adjacent ranges merged: in *one when the
 * type is contiguous, else in a list to free (segs_free). */
static int build_segs(const struct aptus_dtype *dt, size_t count, int64_t start, struct rma_seg *one,
                      struct rma_seg **out, size_t *nout)
{
    *out = NULL;
    *nout = 0;
    if (!count || !dt->size)
        return 0;
    if (dt->contig) {
        one->off = (uint64_t)(start + dt->true_lb);
        one->len = (uint64_t)dt->size * count;
        *out = one;
        *nout = 1;
        return 0;
    }
    size_t cap = 16, n = 0;
    struct rma_seg *s = malloc(sizeof *s * cap);
    if (!s)
        return MPI_ERR_NO_MEM;
    for (size_t e = 0; e < count; e++) {
        int64_t ebase = start + (int64_t)e * dt->extent;
        for (size_t k = 0; k < dt->nsegs; k++) {
            const struct aptus_dt_seg *g = &dt->segs[k];
            for (size_t r = 0; r < g->count; r++) {
                uint64_t off = (uint64_t)(ebase + g->disp + (int64_t)r * g->stride);
                if (n && s[n - 1].off + s[n - 1].len == off) {
                    s[n - 1].len += g->len;
                    continue;
                }
                if (n == cap) {
                    cap *= 2;
                    struct rma_seg *t = realloc(s, sizeof *s * cap);
                    if (!t) {
                        free(s);
                        return MPI_ERR_NO_MEM;
                    }
                    s = t;
                }
                s[n++] = (struct rma_seg){ off, g->len };
            }
        }
    }
    *out = s;
    *nout = n;
    return 0;
}

static void segs_free(struct rma_seg *s, const struct rma_seg *one)
{
    if (s != one)
        free(s);
}

/* Whether every range lies in [0, size) (signed offsets: a negative one wrapped around). */
int rma_segs_in(const struct rma_seg *s, size_t n, uint64_t size)
{
    for (size_t i = 0; i < n; i++)
        if ((int64_t)s[i].off < 0 || s[i].off > size || s[i].len > size - s[i].off)
            return 0;
    return 1;
}

/* ---- communication -------------------------------------------------------------------------- */

static int in_list(const int *l, int n, int r)
{
    for (int i = 0; i < n; i++)
        if (l[i] == r)
            return 1;
    return 0;
}

static int epoch_ok(const struct aptus_win *w, int target)
{
    return w->fence || w->lock_all || w->t[target].lock || (w->start && in_list(w->start, w->nstart, target));
}

/* Packed form of (buf, count, dt): the buffer itself when contiguous (*tmp NULL), else a copy. */
const char *rma_packed_of(const void *buf, size_t count, const struct aptus_dtype *dt, char **tmp)
{
    *tmp = NULL;
    if (dt->contig || !count)
        return (const char *)buf + dt->true_lb;
    *tmp = malloc(dt->size * count);
    if (!*tmp)
        return NULL;
    aptus_dt_pack(buf, count, dt, *tmp);
    return *tmp;
}

int aptus_rma_op(struct aptus_win *w, const struct rma_op *op, struct aptus_request **req, const char **why)
{
    if (req)
        *req = NULL;
    /* other nodes' requests to this rank's window (every 16th operation: a pass polls every
     * network channel, which costs more than a batched operation) */
    if (w->spans && !(w->op_seq++ & 15))
        aptus_progress();
    if (op->target == MPI_PROC_NULL)
        goto done;
    if (!epoch_ok(w, op->target)) {
        *why = "no access epoch is open to this target (MPI_Win_fence, MPI_Win_start, MPI_Win_lock or "
               "MPI_Win_lock_all first)";
        return MPI_ERR_RMA_SYNC;
    }
    struct rma_target *t = &w->t[op->target];
    int64_t start = w->flavor == MPI_WIN_FLAVOR_DYNAMIC ? (int64_t)op->disp : (int64_t)op->disp * t->disp_unit;
    struct rma_seg one, *s;
    size_t ns;
    int rc = build_segs(op->tdt, op->tcount, start, &one, &s, &ns);
    if (rc) {
        *why = "out of memory";
        return rc;
    }
    /* ranges: known for every target of a static window, for node-local targets of a dynamic one */
    int in = w->flavor == MPI_WIN_FLAVOR_DYNAMIC ? (t->path == RMA_PATH_AM || rma_segs_attached(s, ns, t->ctrl))
                                                 : rma_segs_in(s, ns, t->size);
    int via_agent = 0; /* a dynamic target whose regions outgrew its table: its agent checks */
    if (!in && w->flavor == MPI_WIN_FLAVOR_DYNAMIC && __atomic_load_n(&t->ctrl->overflow, __ATOMIC_ACQUIRE))
        in = via_agent = 1;
    if (!in) {
        segs_free(s, &one);
        *why = w->flavor == MPI_WIN_FLAVOR_DYNAMIC ? "the target range is not inside memory attached at the target"
                                                   : "the target range reaches outside the target's window";
        return MPI_ERR_RMA_RANGE;
    }
    size_t tbytes = op->tdt->size * op->tcount;
    if (!tbytes) { /* nothing moves (the epoch and the target were checked) */
        segs_free(s, &one);
        goto done;
    }
    char *tmp = NULL;
    MPI_Datatype basic = MPI_DATATYPE_NULL;
    if (op->kind == RMA_ACC || op->kind == RMA_GACC || op->kind == RMA_CAS) {
        size_t nb;
        basic = aptus_dt_reduce_type(op->tdt, &nb);
    }
    int am = t->path == RMA_PATH_AM || via_agent;
    /* RDMA for puts from rdma_put_min() and every get; to a dynamic window, a region not checked
     * in this interval is looked up only for operations from dyn_check_min() */
    if (am && (op->kind == RMA_GET || (op->kind == RMA_PUT && tbytes >= w->put_rdma_min)) &&
        rma_rdma_op(w, t, op, s, ns, tbytes, w->flavor == MPI_WIN_FLAVOR_DYNAMIC && tbytes >= w->dyn_check_min, &rc)) {
        rma_stats.ops[RMA_PATH_RDMA]++;
        w->rdma_dirty_any = 1;
        segs_free(s, &one);
        if (!rc && req)
            rc = rma_pend_wait_all(w); /* a request-based operation completes here */
        if (rc) {
            *why = "an RDMA transfer failed";
            return rc;
        }
        goto done;
    }
    rma_stats.ops[am ? RMA_PATH_AM : t->path]++;
    /* small puts and accumulates to a target reached by Cross Memory Attach wait for the epoch's
     * end (defer.c); an accumulate, fetch or compare-and-swap that does not wait, or an active
     * message, comes after them */
    int defer = !am && (op->kind == RMA_PUT || op->kind == RMA_ACC) && rma_defer_ok(w, t, ns, tbytes);
    if (t->deferred && !defer && (am || (op->kind != RMA_PUT && op->kind != RMA_GET)) &&
        (rc = rma_defer_write(w, op->target)) != 0) {
        segs_free(s, &one);
        *why = "the operations deferred to the target could not be written";
        return rc;
    }
    switch (op->kind) {
    case RMA_PUT:
    case RMA_ACC: {
        if (op->kind == RMA_PUT && !am &&
            rma_lb_handover(w, t, (char *)op->obuf, op->ocount, op->odt, &s, ns, tbytes, 1))
            break;
        const char *data = rma_packed_of(op->obuf, op->ocount, op->odt, &tmp);
        if (!data && tbytes) {
            rc = MPI_ERR_NO_MEM;
            break;
        }
        if (am)
            rc = rma_am_op(w, op, op->kind == RMA_PUT ? AM_PUT : AM_ACC, basic, s, ns, data, tbytes, NULL, 0);
        else if (defer)
            rc = rma_defer_op(w, op, op->kind == RMA_PUT ? AM_PUT : AM_ACC, basic, s, ns, data, tbytes);
        else if (op->kind == RMA_PUT)
            rc = rma_move_direct(w, t, (char *)data, s, ns, 1);
        else
            rc = rma_acc_direct(w, t, op->op_id, basic, data, NULL, s, ns);
        break;
    }
    case RMA_GET:
    case RMA_GACC: {
        const char *data = NULL;
        if (op->kind == RMA_GACC && op->op_id != APTUS_OP_NO_OP) {
            data = rma_packed_of(op->obuf, op->ocount, op->odt, &tmp);
            if (!data && tbytes) {
                rc = MPI_ERR_NO_MEM;
                break;
            }
        }
        if (am) {
            rc = rma_am_op(w, op, op->kind == RMA_GET ? AM_GET : AM_GACC, basic, s, ns, data, data ? tbytes : 0, NULL,
                           0);
            break;
        }
        int contig = op->rdt->contig;
        if (op->kind == RMA_GET && rma_lb_handover(w, t, op->rbuf, op->rcount, op->rdt, &s, ns, tbytes, 0))
            break;
        char *out = contig ? (char *)op->rbuf + op->rdt->true_lb : malloc(tbytes ? tbytes : 1);
        if (!out) {
            rc = MPI_ERR_NO_MEM;
            break;
        }
        if (op->kind == RMA_GET)
            rc = rma_move_direct(w, t, out, s, ns, 0);
        else
            rc = rma_acc_direct(w, t, op->op_id, basic, data, out, s, ns);
        if (!contig) {
            if (!rc)
                aptus_dt_unpack(out, op->rcount, op->rdt, op->rbuf);
            free(out);
        }
        break;
    }
    default: { /* compare and swap: one predefined element */
        size_t es = op->tdt->size;
        if (am)
            rc = rma_am_op(w, op, AM_CAS, basic, s, ns, op->obuf, es, op->cbuf, es);
        else
            rc = rma_cas_direct(w, t, es, op->obuf, op->cbuf, op->rbuf, s);
        break;
    }
    }
    free(tmp);
    segs_free(s, &one);
    if (rc) {
        *why = rc == MPI_ERR_RMA_RANGE ? "the target's memory could not be reached there"
               : rc == MPI_ERR_NO_MEM  ? "out of memory"
                                       : "the transfer failed";
        return rc;
    }
    if (req && (am || __atomic_load_n(&w->lb_pending, __ATOMIC_ACQUIRE))) {
        /* request-based operations over active messages (or handed to the copy agent) complete
         * here */
        rc = rma_pend_wait_all(w);
        if (rc) {
            *why = "the transfer failed";
            return rc;
        }
    }
done:
    if (req) {
        struct aptus_request *u = aptus_req_new_nomsg(APTUS_REQ_GENERIC);
        if (!u) {
            *why = "out of memory";
            return MPI_ERR_NO_MEM;
        }
        aptus_req_complete(u);
        *req = u;
    }
    return 0;
}

/* ---- fast path (the API calls it first; 0 means: take the general path) ------------------- */

int aptus_rma_fast_putget(struct aptus_win *w, int put, void *obuf, MPI_Count ocount, MPI_Datatype odt, int target,
                          MPI_Aint disp, MPI_Count tcount, MPI_Datatype tdt)
{
    if (w->spans)
        return 0;
    struct rma_target *t = rma_fast_target(w, target);
    if (!t || ocount < 0 || tcount < 0 || disp < 0 || !APTUS_IS_PREDEF(odt) || !APTUS_IS_PREDEF(tdt))
        return 0;
    const struct aptus_dtype *od = aptus_dtype_predef[(uintptr_t)odt], *td = aptus_dtype_predef[(uintptr_t)tdt];
    if (!od || !td || od->size != (size_t)od->extent || td->size != (size_t)td->extent)
        return 0;
    size_t bytes = od->size * (size_t)ocount;
    uint64_t off = (uint64_t)disp * (uint64_t)t->disp_unit;
    if (bytes != td->size * (size_t)tcount || (!obuf && bytes) || off > t->size || bytes > t->size - off ||
        (uint64_t)disp > (UINT64_MAX >> 8) / (uint64_t)t->disp_unit)
        return 0;
    rma_stats.ops[RMA_PATH_SHARED]++;
    if (bytes >= aptus_config.rma_loopback_min && aptus_config.rma_loopback &&
        rma_lb_take_bytes(w, obuf, (uint64_t)(uintptr_t)(t->local + off), bytes, 0, put))
        return 1;
    if (put)
        memcpy(t->local + off, obuf, bytes);
    else
        memcpy(obuf, t->local + off, bytes);
    return 1;
}
