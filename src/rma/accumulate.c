/* Accumulates and atomics on targets of the node: the target's accumulate lock, the element-wise
 * kernels (CPU atomics where the window allows them: rma.h), compare-and-swap, and the fast paths
 * of MPI_Fetch_and_op and MPI_Accumulate to memory in the node segment. */
#include "rma/rma_internal.h"

#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/datatype.h"
#include "core/op.h"
#include "runtime/lock.h"
#include "runtime/runtime.h"

static void acc_lock(struct rma_ctrl *c)
{
    unsigned spins = 0;
    while (__atomic_exchange_n(&c->acc, 1, __ATOMIC_ACQUIRE))
        while (__atomic_load_n(&c->acc, __ATOMIC_RELAXED)) {
            if (++spins < 1000)
                aptus_cpu_relax();
            else
                sched_yield(); /* the holder may be off its core */
        }
}

static void acc_unlock(struct rma_ctrl *c)
{
    __atomic_store_n(&c->acc, 0, __ATOMIC_RELEASE);
}

/* ---- element-wise accumulate ---------------------------------------------------------------- */

/* Applies op to n elements of es bytes: tgt = in op tgt, the old values to old (if not NULL).
 * Atomic per element with compare-and-swap (es of 1, 2, 4, 8, aligned). */
#define CAS_LOOP(T)                                                                                                    \
    do {                                                                                                               \
        T *p = (T *)(void *)tgt;                                                                                       \
        for (size_t i = 0; i < n; i++, p++) {                                                                          \
            T cur = __atomic_load_n(p, __ATOMIC_ACQUIRE), nv;                                                          \
            if (op_id == APTUS_OP_NO_OP) {                                                                             \
                nv = cur;                                                                                              \
            } else {                                                                                                   \
                do {                                                                                                   \
                    nv = cur;                                                                                          \
                    aptus_op_apply_kernel(op_id, in ? in + i * sizeof(T) : NULL, &nv, 1, kernel);                      \
                } while (!__atomic_compare_exchange_n(p, &cur, nv, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE));            \
            }                                                                                                          \
            if (old)                                                                                                   \
                memcpy(old + i * sizeof(T), &cur, sizeof(T));                                                          \
        }                                                                                                              \
    } while (0)

/* The common cases in line (no kernel call per element): integer fetch-and-op instructions,
 * and compare-and-swap loops that add floating-point values. 1 when done. */
#define FETCH_OP_LOOP(U, F)                                                                                            \
    do {                                                                                                               \
        U *p = (U *)(void *)tgt;                                                                                       \
        for (size_t i = 0; i < n; i++) {                                                                               \
            U v;                                                                                                       \
            memcpy(&v, in + i * sizeof v, sizeof v);                                                                   \
            U o = F(p + i, v, __ATOMIC_ACQ_REL);                                                                       \
            if (old)                                                                                                   \
                memcpy(old + i * sizeof o, &o, sizeof o);                                                              \
        }                                                                                                              \
        return 1;                                                                                                      \
    } while (0)
#define FLOAT_ADD_LOOP(T, U)                                                                                           \
    do {                                                                                                               \
        U *p = (U *)(void *)tgt;                                                                                       \
        for (size_t i = 0; i < n; i++) {                                                                               \
            T v, f;                                                                                                    \
            memcpy(&v, in + i * sizeof v, sizeof v);                                                                   \
            U cur = __atomic_load_n(p + i, __ATOMIC_RELAXED), nv;                                                      \
            do {                                                                                                       \
                memcpy(&f, &cur, sizeof f);                                                                            \
                f += v;                                                                                                \
                memcpy(&nv, &f, sizeof nv);                                                                            \
            } while (!__atomic_compare_exchange_n(p + i, &cur, nv, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED));            \
            if (old)                                                                                                   \
                memcpy(old + i * sizeof cur, &cur, sizeof cur);                                                        \
        }                                                                                                              \
        return 1;                                                                                                      \
    } while (0)

static int apply_atomic_inline(int op_id, int basic, size_t es, const char *in, char *tgt, char *old, size_t n)
{
    if (!in)
        return 0;
    int integer = basic >= APTUS_B_INT8 && basic <= APTUS_B_UINT64;
    if (integer && es == 8) {
        switch (op_id) {
        case APTUS_OP_SUM: FETCH_OP_LOOP(uint64_t, __atomic_fetch_add);
        case APTUS_OP_BAND: FETCH_OP_LOOP(uint64_t, __atomic_fetch_and);
        case APTUS_OP_BOR: FETCH_OP_LOOP(uint64_t, __atomic_fetch_or);
        case APTUS_OP_BXOR: FETCH_OP_LOOP(uint64_t, __atomic_fetch_xor);
        case APTUS_OP_REPLACE: FETCH_OP_LOOP(uint64_t, __atomic_exchange_n);
        default: return 0;
        }
    }
    if (integer && es == 4) {
        switch (op_id) {
        case APTUS_OP_SUM: FETCH_OP_LOOP(uint32_t, __atomic_fetch_add);
        case APTUS_OP_BAND: FETCH_OP_LOOP(uint32_t, __atomic_fetch_and);
        case APTUS_OP_BOR: FETCH_OP_LOOP(uint32_t, __atomic_fetch_or);
        case APTUS_OP_BXOR: FETCH_OP_LOOP(uint32_t, __atomic_fetch_xor);
        case APTUS_OP_REPLACE: FETCH_OP_LOOP(uint32_t, __atomic_exchange_n);
        default: return 0;
        }
    }
    if (op_id == APTUS_OP_SUM && basic == APTUS_B_DOUBLE)
        FLOAT_ADD_LOOP(double, uint64_t);
    if (op_id == APTUS_OP_SUM && basic == APTUS_B_FLOAT)
        FLOAT_ADD_LOOP(float, uint32_t);
    return 0;
}

static void apply_atomic(int op_id, int kernel, size_t es, const char *in, char *tgt, char *old, size_t n)
{
    switch (es) {
    case 1: CAS_LOOP(uint8_t); break;
    case 2: CAS_LOOP(uint16_t); break;
    case 4: CAS_LOOP(uint32_t); break;
    default: CAS_LOOP(uint64_t); break;
    }
}

/* tgt = in op tgt for n elements of the basic type bt, both packed (es = bt->size data bytes
 * each, no padding). The kernels work on elements laid out as in memory: a pair type with
 * padding (MPI_SHORT_INT: 6 bytes of data in 8, its int at offset 4) is unpacked element by
 * element into aligned copies. */
static void apply_plain(int op_id, int kernel, const struct aptus_dtype *bt, const char *in, char *tgt, char *old,
                        size_t n)
{
    size_t es = bt->size;
    if (old)
        memcpy(old, tgt, es * n);
    if (op_id == APTUS_OP_NO_OP)
        return;
    if (es == (size_t)bt->extent || bt->extent > 64) {
        aptus_op_apply_kernel(op_id, in, tgt, n, kernel);
        return;
    }
    _Alignas(16) char a[64], b[64];
    for (size_t i = 0; i < n; i++) {
        aptus_dt_unpack(in + i * es, 1, bt, a);
        aptus_dt_unpack(tgt + i * es, 1, bt, b);
        aptus_op_apply_kernel(op_id, a, b, 1, kernel);
        aptus_dt_pack(b, 1, bt, tgt + i * es);
    }
}

static int atomic_ok(const struct aptus_win *w, size_t es, const void *addr)
{
    return w->acc_fine && (w->flavor == MPI_WIN_FLAVOR_ALLOCATE || w->flavor == MPI_WIN_FLAVOR_SHARED) &&
           (es == 1 || es == 2 || es == 4 || es == 8) && ((uintptr_t)addr % es) == 0;
}

/* Accumulate into the target's ranges from packed data `in` (NULL for MPI_NO_OP), the old
 * values to `old` (packed, or NULL). */
int rma_acc_direct(const struct aptus_win *w, const struct rma_target *t, int op_id, MPI_Datatype basic, const char *in,
                   char *old, const struct rma_seg *s, size_t n)
{
    const struct aptus_dtype *bt = aptus_dtype_get(basic);
    size_t es = bt->size;
    int kernel = aptus_op_kernel(basic);
    /* Gathered, applied and scattered back under the lock: when an element may span ranges
     * (padded pair types), or when the memory is another process's (Cross Memory Attach). */
    if (es != (size_t)bt->extent || (t->path == RMA_PATH_CMA && t->pid != (int)aptus_rt.pid)) {
        size_t total = 0;
        for (size_t i = 0; i < n; i++)
            total += s[i].len;
        char *tmp = malloc(total ? total : 1);
        if (!tmp)
            return MPI_ERR_NO_MEM;
        acc_lock(t->ctrl);
        int r = rma_move_direct(w, t, tmp, s, n, 0);
        if (!r) {
            apply_plain(op_id, kernel, bt, in, tmp, old, total / es);
            if (op_id != APTUS_OP_NO_OP)
                r = rma_move_direct(w, t, tmp, s, n, 1);
        }
        acc_unlock(t->ctrl);
        free(tmp);
        return r;
    }
    int locked = 0;
    for (size_t i = 0; i < n; i++) {
        char *p = rma_tgt_ptr(w, t, s[i].off);
        size_t k = s[i].len / es;
        if (atomic_ok(w, es, p)) {
            if (!apply_atomic_inline(op_id, bt->basic, es, in, p, old, k))
                apply_atomic(op_id, kernel, es, in, p, old, k);
        } else {
            if (!locked)
                acc_lock(t->ctrl);
            locked = 1;
            apply_plain(op_id, kernel, bt, in, p, old, k);
        }
        if (in)
            in += s[i].len;
        if (old)
            old += s[i].len;
    }
    if (locked)
        acc_unlock(t->ctrl);
    return 0;
}

int rma_cas_direct(const struct aptus_win *w, const struct rma_target *t, size_t es, const char *val, const char *cmp,
                   char *old, const struct rma_seg *s)
{
    char *p = t->path == RMA_PATH_CMA && t->pid != (int)aptus_rt.pid ? NULL : rma_tgt_ptr(w, t, s->off);
    if (p && atomic_ok(w, es, p)) {
        switch (es) {
#define CAS_ONE(T)                                                                                                     \
    do {                                                                                                               \
        T e, v;                                                                                                        \
        memcpy(&e, cmp, sizeof e);                                                                                     \
        memcpy(&v, val, sizeof v);                                                                                     \
        __atomic_compare_exchange_n((T *)(void *)p, &e, v, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);                     \
        memcpy(old, &e, sizeof e);                                                                                     \
    } while (0)
        case 1: CAS_ONE(uint8_t); break;
        case 2: CAS_ONE(uint16_t); break;
        case 4: CAS_ONE(uint32_t); break;
        default: CAS_ONE(uint64_t); break;
#undef CAS_ONE
        }
        return 0;
    }
    acc_lock(t->ctrl);
    int r = 0;
    if (p) {
        memcpy(old, p, es);
        if (!memcmp(old, cmp, es))
            memcpy(p, val, es);
    } else {
        struct rma_seg a = { (w->flavor == MPI_WIN_FLAVOR_DYNAMIC ? 0 : t->base) + s->off, es };
        r = rma_cma_move(t->pid, old, &a, 1, 0);
        if (!r && !memcmp(old, cmp, es))
            r = rma_cma_move(t->pid, (char *)val, &a, 1, 1);
    }
    acc_unlock(t->ctrl);
    return r ? MPI_ERR_RMA_RANGE : 0;
}

/* One element of the predefined type dt at displacement disp of a target reached by load/store in
 * an epoch open to it (fetch-and-op, compare-and-swap): its offset, with the target and the
 * type; -1 when the general path must run (which also reports any error). */
static int64_t fast_elem(struct aptus_win *w, int target, MPI_Aint disp, MPI_Datatype dt, struct rma_target **tp,
                         const struct aptus_dtype **dp)
{
    if (w->spans)
        return -1;
    struct rma_target *t = rma_fast_target(w, target);
    if (!t || disp < 0 || !APTUS_IS_PREDEF(dt))
        return -1;
    const struct aptus_dtype *d = aptus_dtype_predef[(uintptr_t)dt];
    if (!d || !d->basic || d->size != (size_t)d->extent)
        return -1;
    uint64_t off = (uint64_t)disp * (uint64_t)t->disp_unit;
    if (off > t->size || d->size > t->size - off || (uint64_t)disp > (UINT64_MAX >> 8) / (uint64_t)t->disp_unit)
        return -1;
    *tp = t;
    *dp = d;
    return (int64_t)off;
}

int aptus_rma_fast_fop(struct aptus_win *w, const void *obuf, void *rbuf, MPI_Datatype dt, int target, MPI_Aint disp,
                       int op_id)
{
    struct rma_target *t;
    const struct aptus_dtype *d;
    int64_t off = obuf && rbuf ? fast_elem(w, target, disp, dt, &t, &d) : -1;
    if (off < 0 || !aptus_op_allowed(op_id, dt, 1))
        return 0;
    size_t es = d->size;
    char *p = t->local + off;
    rma_stats.ops[RMA_PATH_SHARED]++;
    if (!atomic_ok(w, es, p)) { /* under the target's accumulate lock */
        acc_lock(t->ctrl);
        apply_plain(op_id, aptus_op_kernel(dt), d, obuf, p, rbuf, 1);
        acc_unlock(t->ctrl);
        return 1;
    }
    int integer = d->basic >= APTUS_B_INT8 && d->basic <= APTUS_B_UINT64;
    if (integer && (es == 8 || es == 4)) {
        switch (op_id) {
#define FOP(T, F)                                                                                                      \
    do {                                                                                                               \
        T v;                                                                                                           \
        memcpy(&v, obuf, sizeof v);                                                                                    \
        T o = F((T *)(void *)p, v, __ATOMIC_ACQ_REL);                                                                  \
        memcpy(rbuf, &o, sizeof o);                                                                                    \
        return 1;                                                                                                      \
    } while (0)
#define FOP_SIZED(F)                                                                                                   \
    if (es == 8)                                                                                                       \
        FOP(uint64_t, F);                                                                                              \
    FOP(uint32_t, F)
        case APTUS_OP_SUM: FOP_SIZED(__atomic_fetch_add);
        case APTUS_OP_BAND: FOP_SIZED(__atomic_fetch_and);
        case APTUS_OP_BOR: FOP_SIZED(__atomic_fetch_or);
        case APTUS_OP_BXOR: FOP_SIZED(__atomic_fetch_xor);
        case APTUS_OP_REPLACE: FOP_SIZED(__atomic_exchange_n);
#undef FOP_SIZED
#undef FOP
        default: break;
        }
    }
    apply_atomic(op_id, aptus_op_kernel(dt), es, op_id == APTUS_OP_NO_OP ? NULL : obuf, p, rbuf, 1);
    return 1;
}

int aptus_rma_fast_acc(struct aptus_win *w, const void *obuf, MPI_Count ocount, MPI_Datatype odt, int target,
                       MPI_Aint disp, MPI_Count tcount, MPI_Datatype tdt, int op_id)
{
    if (w->spans || odt != tdt || ocount != tcount || ocount <= 0)
        return 0;
    struct rma_target *t = rma_fast_target(w, target);
    if (!t || disp < 0 || !APTUS_IS_PREDEF(tdt) || !obuf)
        return 0;
    const struct aptus_dtype *d = aptus_dtype_predef[(uintptr_t)tdt];
    if (!d || !d->basic || d->size != (size_t)d->extent || !aptus_op_allowed(op_id, tdt, 1))
        return 0;
    size_t es = d->size, bytes = es * (size_t)tcount;
    uint64_t off = (uint64_t)disp * (uint64_t)t->disp_unit;
    if (off > t->size || bytes > t->size - off || (uint64_t)disp > (UINT64_MAX >> 8) / (uint64_t)t->disp_unit)
        return 0;
    char *p = t->local + off;
    rma_stats.ops[RMA_PATH_SHARED]++;
    if (atomic_ok(w, es, p)) {
        if (!apply_atomic_inline(op_id, d->basic, es, obuf, p, NULL, (size_t)tcount))
            apply_atomic(op_id, aptus_op_kernel(tdt), es, obuf, p, NULL, (size_t)tcount);
        return 1;
    }
    acc_lock(t->ctrl);
    apply_plain(op_id, aptus_op_kernel(tdt), d, obuf, p, NULL, (size_t)tcount);
    acc_unlock(t->ctrl);
    return 1;
}

int aptus_rma_fast_cas(struct aptus_win *w, const void *obuf, const void *cbuf, void *rbuf, MPI_Datatype dt, int target,
                       MPI_Aint disp)
{
    struct rma_target *t;
    const struct aptus_dtype *d;
    int64_t off = fast_elem(w, target, disp, dt, &t, &d);
    if (off < 0)
        return 0;
    rma_stats.ops[RMA_PATH_SHARED]++;
    struct rma_seg s = { (uint64_t)off, d->size };
    rma_cas_direct(w, t, d->size, obuf, cbuf, rbuf, &s); /* (load/store: it cannot fail) */
    return 1;
}
