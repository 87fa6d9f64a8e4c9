/* One-sided communication: windows, epochs and data movement (see rma.h). */
#include "rma/rma.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include "channel/channel.h"
#include "coll/coll.h"
#include "coll/coll_internal.h"
#include "comm/create.h"
#include "core/attr.h"
#include "core/context.h"
#include "core/datatype.h"
#include "core/errors.h"
#include "core/info.h"
#include "core/op.h"
#include "pt2pt/pt2pt.h"
#include "runtime/config.h"
#include "runtime/lock.h"
#include "runtime/progress.h"
#include "runtime/runtime.h"

/* ---- the node segment's control area ------------------------------------------------------- */

#define RMA_REGIONS_MAX 32
#define RMA_LOCK_EXCL   0x80000000u

/* A region attached to a dynamic window, as its control slot publishes it. */
struct rma_regent {
    uint64_t base, size;
    uint64_t raddr, key, rdma; /* registered with the RC channel (rdma 1): where RDMA reaches it */
};

struct rma_ctrl {
    uint32_t lock;     /* passive target: RMA_LOCK_EXCL, or the number of shared holders */
    uint32_t acc;      /* accumulate lock (a spin lock) */
    uint32_t nregions; /* dynamic window: attached regions (the first RMA_REGIONS_MAX) */
    uint32_t overflow; /* more are attached than the table holds: the agent knows them all */
    uint32_t gen;      /* the table's sequence count: odd while the owner rewrites it */
    uint32_t pad;
    struct rma_regent region[RMA_REGIONS_MAX];
};

/* A dynamic window's region as its owner keeps it. */
struct rma_region {
    uint64_t off, len; /* address and length (first: `covered` reads them at a stride) */
    uint64_t raddr, key;
    struct aptus_memh *mh; /* its registration (NULL: none) */
};

/* What an origin knows of a dynamic window's region table on another node, read by RDMA from
 * the target's control slot (registered when the window was made). A region's key is trusted
 * only within the interval between two completions (w->sync_seq) in which it was checked: MPI
 * lets the target detach memory once the origin's operations on it are complete, and the origin
 * learns of that completion only by waiting for it, which ends the interval. A check reads the
 * table's sequence count, and the whole table when it changed. */
struct rma_dyn {
    uint32_t gen; /* the table's sequence count when it was read (odd: never read) */
    uint32_t n;
    struct {
        struct rma_regent r;
        uint32_t checked; /* sync_seq + 1 of the interval it was checked in (0: none) */
    } e[RMA_REGIONS_MAX];
};

#define RMA_CTRL_STRIDE (((sizeof(struct rma_ctrl) + 63) / 64) * 64)

/* internal lock codes (rma_target.lock) */
enum { RL_SHARED = 1, RL_EXCL = 2 };

/* Tags on the window's communicator (point-to-point context: only the library uses it). */
enum { TAG_REQ = 1, TAG_POST = 2, TAG_REPLY0 = 16 };
#define TAG_REPLY_SPAN 0x100000u

/* active-message kinds */
enum { AM_PUT = 1, AM_GET, AM_ACC, AM_GACC, AM_CAS, AM_LOCK, AM_UNLOCK, AM_FLUSH, AM_COMPLETE };

struct rma_hdr {
    uint8_t kind;
    uint8_t lock; /* RL_* (lock, unlock) */
    uint16_t op_id;
    uint32_t reply_tag;
    uint64_t basic; /* predefined datatype of the elements (accumulates) */
    uint64_t nsegs; /* (offset, length) pairs that follow, then the data */
    uint64_t bytes; /* data bytes after the pairs */
};

struct rma_seg {
    uint64_t off, len;
};

struct rma_pend {
    struct aptus_request *req;
    void *tmp;
};

struct rma_agent {
    int dead;                    /* the window was freed: the task ends at its next pass */
    struct rma_agent *next_live; /* the agents of the windows not freed yet */
    struct aptus_win *w;
    struct aptus_request *rx; /* the message being received */
    char *buf;
    size_t cap;
    struct rma_pend *out; /* replies in flight */
    int nout, capout;
    struct {
        int origin;
        uint8_t type;
        uint32_t tag;
    } * lockq; /* lock requests waiting */
    int nlockq, caplockq;
    int *err; /* first error per origin since its last flush */
};

/* statistics: operations by path, operations the agent applied, windows made */
static uint64_t st_ops[5], st_agent, st_windows, st_lb_jobs;
static uint64_t st_dyn_reads; /* dynamic windows: checks of a region table by RDMA */

void aptus_rma_stats_print(int rank)
{
    if (!st_windows)
        return;
    printf("[aptus stats] rank %d: one-sided: %llu windows; operations by load/store %llu, by cross-memory copy %llu, "
           "by active message %llu, by RDMA %llu; copies run by the copy agent %llu; operations applied for other "
           "ranks by the agent %llu; dynamic-window region checks by RDMA %llu\n",
           rank, (unsigned long long)st_windows, (unsigned long long)st_ops[RMA_PATH_SHARED],
           (unsigned long long)st_ops[RMA_PATH_CMA], (unsigned long long)st_ops[RMA_PATH_AM],
           (unsigned long long)st_ops[RMA_PATH_RDMA], (unsigned long long)st_lb_jobs, (unsigned long long)st_agent,
           (unsigned long long)st_dyn_reads);
}

/* ---- names of segments being created (removed by the emergency clean-up) ------------------- */

#define RMA_PENDING_NAMES 4
static char pending_names[RMA_PENDING_NAMES][96];

static void names_cleanup(void)
{
    for (int i = 0; i < RMA_PENDING_NAMES; i++)
        if (pending_names[i][0]) {
            (void)shm_unlink(pending_names[i]);
            pending_names[i][0] = 0;
        }
}

static int name_hold(const char *name)
{
    for (int i = 0; i < RMA_PENDING_NAMES; i++)
        if (!pending_names[i][0]) {
            snprintf(pending_names[i], sizeof pending_names[i], "%s", name);
            return i;
        }
    return -1;
}

static void lb_stop(void);
static struct rma_agent *live_agents;

void aptus_rma_finalize(void)
{
    lb_stop();
    /* windows the program did not free: their agents stop (MPI_Finalize waits for the
     * background tasks) */
    for (struct rma_agent *a = live_agents; a; a = a->next_live)
        a->dead = 1;
    live_agents = NULL;
}

void aptus_rma_init(void)
{
    static int done;
    if (!done && aptus_cleanup_add(names_cleanup) == 0)
        done = 1;
}

/* ---- small helpers ------------------------------------------------------------------------- */

struct aptus_win *aptus_win_get(MPI_Win h)
{
    struct aptus_win *w = (struct aptus_win *)h;
    return aptus_obj_in(h, APTUS_OBJ_WIN) && w->magic == APTUS_MAGIC_WIN ? w : NULL;
}

int aptus_win_error(struct aptus_win *w, int errclass, const char *fn, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (!w)
        return aptus_error(NULL, errclass, fn, "%s", msg);
    return aptus_error_on(w->errh, (void *)w->handle, errclass, fn, "%s", msg);
}

static int pend_add(struct aptus_win *w, struct aptus_request *r, void *tmp)
{
    if (w->npend == w->cappend) {
        int cap = w->cappend ? 2 * w->cappend : 16;
        struct rma_pend *p = realloc(w->pend, sizeof *p * (size_t)cap);
        if (!p)
            return MPI_ERR_NO_MEM;
        w->pend = p;
        w->cappend = cap;
    }
    w->pend[w->npend++] = (struct rma_pend){ r, tmp };
    return 0;
}

/* Completes every pending request of the origin side; the first error is returned. */
static void lb_drain(struct aptus_win *w);
static int rdma_wait(struct aptus_win *w, int target);
static const char *packed_of(const void *buf, size_t count, const struct aptus_dtype *dt, char **tmp);

/* Completes what the origin moves itself or hands to the copy agent or to RDMA, leaving the
 * active messages (and their batches) alone: a synchronization that sends a control message
 * to a target settles these first, then lets the control message ride at the end of the
 * target's batch, then waits for the messages' sends (pend_wait_all). */
static int settle_direct(struct aptus_win *w)
{
    if (__atomic_load_n(&w->lb_pending, __ATOMIC_ACQUIRE))
        lb_drain(w);
    return w->rdma_dirty_any ? rdma_wait(w, -1) : 0;
}

static int batch_send_all(struct aptus_win *w);

static int pend_wait_all(struct aptus_win *w)
{
    w->sync_seq++; /* (a dynamic window's region keys are checked again after this) */
    int brc = batch_send_all(w);
    int rc = settle_direct(w);
    for (int i = 0; i < w->npend; i++) {
        struct aptus_request *r = w->pend[i].req;
        aptus_wait(r);
        if (!rc && r->st_error)
            rc = r->st_error;
        aptus_req_free(r);
        free(w->pend[i].tmp);
    }
    w->npend = 0;
    return rc ? rc : brc;
}

static uint32_t reply_tag(struct aptus_win *w)
{
    return TAG_REPLY0 + (w->reply_seq++ % TAG_REPLY_SPAN);
}

static int am_send_now(struct aptus_win *w, int target, void *buf, size_t len, int keep_buf)
{
    struct aptus_request *r;
    int rc = aptus_coll_isend_on(w->comm, w->comm->ctx, buf, len, target, TAG_REQ, &r);
    if (rc) {
        if (keep_buf)
            free(buf);
        return rc;
    }
    rc = pend_add(w, r, keep_buf ? buf : NULL);
    if (rc) {
        aptus_wait(r);
        aptus_req_free(r);
        if (keep_buf)
            free(buf);
    }
    return rc;
}

/* Batches: small active messages that want no answer (puts, accumulates) are gathered per
 * target into one message, sent when a synchronization needs them (its own request rides in
 * the same message: a flush after a put is one message and its answer, not two messages), when
 * any other message goes to that target (which keeps the order of everything sent to it), or
 * when the batch is full. The agent takes the messages of a batch in order; each starts at a
 * multiple of 8 bytes. Every wait for the window's transfers sends the batches first. */
#define RMA_BATCH_MAX 4096u
#define RMA_PAD8(n)   (((n) + 7u) & ~(size_t)7u)

static int batch_send(struct aptus_win *w, int target)
{
    struct rma_target *t = &w->t[target];
    if (!t->blen)
        return 0;
    char *m = t->batch;
    size_t len = t->blen;
    t->batch = NULL;
    t->blen = 0;
    return am_send_now(w, target, m, len, 1);
}

static int batch_send_all(struct aptus_win *w)
{
    int rc = 0;
    for (int r = 0; r < w->size; r++)
        if (w->t[r].blen) {
            int e = batch_send(w, r);
            rc = rc ? rc : e;
        }
    return rc;
}

/* Room for a message of len bytes at the end of the target's batch (sent first when the message
 * would not fit): the caller writes the message there. NULL with *rc 0 when the message is too
 * large for a batch (it goes out on its own, after the batch), NULL with *rc set on an error. */
static char *batch_room(struct aptus_win *w, int target, size_t len, int *rc)
{
    struct rma_target *t = &w->t[target];
    *rc = 0;
    if (t->blen + RMA_PAD8(len) > RMA_BATCH_MAX && (*rc = batch_send(w, target)) != 0)
        return NULL;
    if (len > RMA_BATCH_MAX)
        return NULL;
    if (!t->batch && !(t->batch = malloc(RMA_BATCH_MAX))) {
        *rc = MPI_ERR_NO_MEM;
        return NULL;
    }
    char *m = t->batch + t->blen;
    memset(m + len, 0, RMA_PAD8(len) - len);
    t->blen += (uint32_t)RMA_PAD8(len);
    return m;
}

/* Any message that is not batched: the target's batch goes first. */
static int am_send(struct aptus_win *w, int target, void *buf, size_t len, int keep_buf)
{
    int rc = batch_send(w, target);
    if (rc) {
        if (keep_buf)
            free(buf);
        return rc;
    }
    return am_send_now(w, target, buf, len, keep_buf);
}

/* Posts the receive of a reply into (buf, count, dt) -- dt NULL: `bytes` bytes. */
static int am_expect(struct aptus_win *w, int target, uint32_t tag, void *buf, size_t bytes,
                     const struct aptus_dtype *dt, size_t count, struct aptus_request **out)
{
    struct aptus_request *r;
    int rc = aptus_coll_start_msg(APTUS_REQ_RECV, w->comm, w->comm->ctx, buf, bytes, dt, count, target, (int)tag, &r);
    if (rc)
        return rc;
    if (out) {
        *out = r;
        return 0;
    }
    rc = pend_add(w, r, NULL);
    if (rc) {
        aptus_wait(r);
        aptus_req_free(r);
    }
    return rc;
}

/* Sends a control message (no segments, no data); with rr, posts the receive of its answer (an
 * int, an error class, into *answer) and returns its request there. */
static int am_control_start(struct aptus_win *w, int target, int kind, int lock, struct aptus_request **rr, int *answer)
{
    struct rma_hdr h = { (uint8_t)kind, (uint8_t)lock, 0, 0, 0, 0, 0 };
    int rc;
    if (rr) {
        *answer = 0;
        h.reply_tag = reply_tag(w);
        rc = am_expect(w, target, h.reply_tag, answer, sizeof *answer, NULL, 0, rr);
        if (rc)
            return rc;
    }
    char *m = batch_room(w, target, sizeof h, &rc);
    if (m) {
        memcpy(m, &h, sizeof h);
        rc = batch_send(w, target);
    }
    if (rc && rr) {
        if (!aptus_recv_cancel(*rr))
            aptus_wait(*rr);
        aptus_req_free(*rr);
        *rr = NULL;
    }
    return rc;
}

/* Waits for a control message's answer: its error class, or the receive's error. */
static int am_control_finish(struct aptus_request *rr, const int *answer)
{
    aptus_wait(rr);
    int rc = rr->st_error;
    aptus_req_free(rr);
    return rc ? rc : *answer;
}

/* Sends a control message and, with reply, waits for its answer. */
static int am_control(struct aptus_win *w, int target, int kind, int lock, int wait_reply)
{
    struct aptus_request *rr = NULL;
    int answer = 0;
    int rc = am_control_start(w, target, kind, lock, wait_reply ? &rr : NULL, &answer);
    if (!rc && rr)
        rc = am_control_finish(rr, &answer);
    return rc;
}

/* ---- lock words ---------------------------------------------------------------------------- */

static int lock_try(uint32_t *word, int type)
{
    uint32_t v = __atomic_load_n(word, __ATOMIC_ACQUIRE);
    if (type == RL_EXCL)
        return v == 0 && __atomic_compare_exchange_n(word, &v, RMA_LOCK_EXCL, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
    while (!(v & RMA_LOCK_EXCL))
        if (__atomic_compare_exchange_n(word, &v, v + 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            return 1;
    return 0;
}

static void lock_release(uint32_t *word, int type)
{
    if (type == RL_EXCL)
        __atomic_store_n(word, 0, __ATOMIC_RELEASE);
    else
        __atomic_sub_fetch(word, 1, __ATOMIC_RELEASE);
}

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

/* ---- target layouts ------------------------------------------------------------------------ */

/* The byte ranges of tcount elements of tdt at byte offset start (relative to the target's
 * base, or an absolute address for dynamic windows), adjacent ranges merged. */
static int build_segs(const struct aptus_dtype *dt, size_t count, int64_t start, struct rma_seg **out, size_t *nout)
{
    *out = NULL;
    *nout = 0;
    if (!count || !dt->size)
        return 0;
    if (dt->contig) {
        struct rma_seg *s = malloc(sizeof *s);
        if (!s)
            return MPI_ERR_NO_MEM;
        s->off = (uint64_t)(start + dt->true_lb);
        s->len = (uint64_t)dt->size * count;
        *out = s;
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

/* Whether every range lies in [0, size) (signed offsets: a negative one wrapped around). */
static int segs_in(const struct rma_seg *s, size_t n, uint64_t size)
{
    for (size_t i = 0; i < n; i++)
        if ((int64_t)s[i].off < 0 || s[i].off > size || s[i].len > size - s[i].off)
            return 0;
    return 1;
}

/* Whether [off, off + len) is covered by attached regions (adjacent regions together count:
 * an access may run from one into the next). base[k], size[k] at stride bytes apart. */
static int covered(uint64_t off, uint64_t len, const uint64_t *base, const uint64_t *size, size_t stride, uint32_t nr)
{
    uint64_t pos = off, end = off + len;
    if (end < off)
        return 0;
    while (pos < end) {
        uint64_t next = pos;
        for (uint32_t k = 0; k < nr && next == pos; k++) {
            uint64_t b = *(const uint64_t *)(const void *)((const char *)base + k * stride);
            uint64_t z = *(const uint64_t *)(const void *)((const char *)size + k * stride);
            if (pos >= b && pos - b < z)
                next = b + z;
        }
        if (next == pos)
            return 0;
        pos = next;
    }
    return 1;
}

/* Whether every range lies inside memory attached at the target (its control slot's table).
 * The owner may detach (and so rewrite the table) while an origin reads it: the reader copies
 * the table between two reads of its sequence count and retries when the owner was writing
 * (sequentially consistent accesses throughout: no fences, which ThreadSanitizer does not model). */
static int segs_attached(const struct rma_seg *s, size_t n, const struct rma_ctrl *c)
{
    struct rma_seg t[RMA_REGIONS_MAX];
    uint32_t nr;
    for (;;) {
        uint32_t g = __atomic_load_n(&c->gen, __ATOMIC_SEQ_CST);
        if (g & 1) {
            aptus_cpu_relax();
            continue;
        }
        nr = __atomic_load_n(&c->nregions, __ATOMIC_SEQ_CST);
        if (nr > RMA_REGIONS_MAX)
            nr = RMA_REGIONS_MAX;
        for (uint32_t k = 0; k < nr; k++) {
            t[k].off = __atomic_load_n(&c->region[k].base, __ATOMIC_SEQ_CST);
            t[k].len = __atomic_load_n(&c->region[k].size, __ATOMIC_SEQ_CST);
        }
        if (__atomic_load_n(&c->gen, __ATOMIC_SEQ_CST) == g)
            break;
    }
    for (size_t i = 0; i < n; i++)
        if (!covered(s[i].off, s[i].len, &t[0].off, &t[0].len, sizeof t[0], nr))
            return 0;
    return 1;
}

/* ---- moving bytes to and from a target's ranges -------------------------------------------- */

/* Cross Memory Attach between a contiguous local buffer and the target's ranges. */
static int cma_move(int pid, char *local, const struct rma_seg *s, size_t n, int write)
{
    struct iovec liov, riov[64];
    size_t i = 0;
    while (i < n) {
        size_t k = 0, bytes = 0;
        while (i + k < n && k < 64) {
            riov[k].iov_base = (void *)(uintptr_t)s[i + k].off;
            riov[k].iov_len = s[i + k].len;
            bytes += s[i + k].len;
            k++;
        }
        size_t done = 0;
        while (done < bytes) {
            liov.iov_base = local + done;
            liov.iov_len = bytes - done;
            /* skip the remote ranges already done */
            size_t skip = done, first = 0;
            while (skip >= riov[first].iov_len) {
                skip -= riov[first].iov_len;
                first++;
            }
            struct iovec save = riov[first];
            riov[first].iov_base = (char *)riov[first].iov_base + skip;
            riov[first].iov_len -= skip;
            ssize_t got = write ? process_vm_writev(pid, &liov, 1, riov + first, (unsigned long)(k - first), 0)
                                : process_vm_readv(pid, &liov, 1, riov + first, (unsigned long)(k - first), 0);
            riov[first] = save;
            if (got <= 0) {
                if (got < 0 && errno == EINTR)
                    continue;
                return -1;
            }
            done += (size_t)got;
        }
        local += bytes;
        i += k;
    }
    return 0;
}

/* Where a target's ranges are in this process (shared segment, or our own memory): the
 * pointer for offset off. */
static char *tgt_ptr(const struct aptus_win *w, const struct rma_target *t, uint64_t off)
{
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC)
        return (char *)(uintptr_t)off;
    return (char *)(uintptr_t)((t->local ? (uint64_t)(uintptr_t)t->local : t->base) + off);
}

/* Data between a packed buffer and the target's ranges: write (put) or read (get). */
static int move_direct(const struct aptus_win *w, const struct rma_target *t, char *packed, const struct rma_seg *s,
                       size_t n, int write)
{
    if (t->path == RMA_PATH_CMA && t->pid != (int)aptus_rt.pid) {
        if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC) {
            struct rma_seg local_s[16] = { { 0, 0 } }, *abs = n <= 16 ? local_s : malloc(sizeof *abs * n);
            if (!abs)
                return MPI_ERR_NO_MEM;
            for (size_t i = 0; i < n; i++)
                abs[i] = (struct rma_seg){ t->base + s[i].off, s[i].len };
            int r = cma_move(t->pid, packed, abs, n, write);
            if (abs != local_s)
                free(abs);
            return r ? MPI_ERR_RMA_RANGE : 0;
        }
        return cma_move(t->pid, packed, s, n, write) ? MPI_ERR_RMA_RANGE : 0;
    }
    for (size_t i = 0; i < n; i++) {
        char *p = tgt_ptr(w, t, s[i].off);
        if (write)
            memcpy(p, packed, s[i].len);
        else
            memcpy(packed, p, s[i].len);
        packed += s[i].len;
    }
    return 0;
}

/* Accumulate into the target's ranges from packed data `in` (NULL for MPI_NO_OP), the old
 * values to `old` (packed, or NULL). */
static int acc_direct(const struct aptus_win *w, const struct rma_target *t, int op_id, MPI_Datatype basic,
                      const char *in, char *old, const struct rma_seg *s, size_t n)
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
        int r = move_direct(w, t, tmp, s, n, 0);
        if (!r) {
            apply_plain(op_id, kernel, bt, in, tmp, old, total / es);
            if (op_id != APTUS_OP_NO_OP)
                r = move_direct(w, t, tmp, s, n, 1);
        }
        acc_unlock(t->ctrl);
        free(tmp);
        return r;
    }
    int locked = 0;
    for (size_t i = 0; i < n; i++) {
        char *p = tgt_ptr(w, t, s[i].off);
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

static int cas_direct(const struct aptus_win *w, const struct rma_target *t, size_t es, const char *val,
                      const char *cmp, char *old, const struct rma_seg *s)
{
    char *p = t->path == RMA_PATH_CMA && t->pid != (int)aptus_rt.pid ? NULL : tgt_ptr(w, t, s->off);
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
        r = cma_move(t->pid, old, &a, 1, 0);
        if (!r && !memcmp(old, cmp, es))
            r = cma_move(t->pid, (char *)val, &a, 1, 1);
    }
    acc_unlock(t->ctrl);
    return r ? MPI_ERR_RMA_RANGE : 0;
}

/* ---- the copy agent (APTUS_RMA_LOOPBACK) ---------------------------------------------------- */

/* A thread of the rank that runs the copies of intra-node MPI_Put/MPI_Get handed to it: the
 * application thread only queues them; they complete (each window counts its own) before the
 * window's next flush or synchronization returns. The queue is a ring under a mutex; the
 * thread spins a while after the last job, then sleeps on a condition variable. */
struct lb_job {
    char *local;                  /* origin side: contiguous bytes, or count elements of dt */
    const struct aptus_dtype *dt; /* NULL: contiguous */
    size_t count, len;            /* len: bytes moved */
    struct rma_seg *segs, one;    /* target ranges (addresses; segs owned by the job, or &one) */
    size_t nsegs;
    int pid, write; /* pid: the target's process for Cross Memory Attach, 0: here */
    int *pending;   /* the window's count */
};

#define LB_RING 1024
static struct {
    pthread_t tid;
    pthread_mutex_t m;
    pthread_cond_t c;
    struct lb_job ring[LB_RING];
    unsigned head, tail; /* tail: next to take */
    int running, stop, sleeping;
} lb = { .m = PTHREAD_MUTEX_INITIALIZER, .c = PTHREAD_COND_INITIALIZER };

static void lb_run(struct lb_job *j)
{
    char *tmp = NULL, *data = j->local;
    const struct rma_seg *sg = j->segs ? j->segs : &j->one;
    if (j->dt) {
        tmp = malloc(j->len ? j->len : 1);
        if (tmp && j->write)
            aptus_dt_pack(j->local, j->count, j->dt, tmp);
        data = tmp;
    }
    if (data && j->pid) {
        (void)cma_move(j->pid, data, sg, j->nsegs, j->write);
    } else if (data) {
        char *p = data;
        for (size_t i = 0; i < j->nsegs; i++) {
            void *addr = (void *)(uintptr_t)sg[i].off;
            if (j->write)
                memcpy(addr, p, sg[i].len);
            else
                memcpy(p, addr, sg[i].len);
            p += sg[i].len;
        }
    }
    if (tmp && !j->write)
        aptus_dt_unpack(tmp, j->count, j->dt, j->local);
    free(tmp);
    free(j->segs);
    __atomic_sub_fetch(j->pending, 1, __ATOMIC_RELEASE);
}

static void *lb_main(void *arg)
{
    (void)arg;
    unsigned idle = 0;
    pthread_mutex_lock(&lb.m);
    while (!lb.stop) {
        if (lb.tail == lb.head) {
            if (++idle < 2000) {
                pthread_mutex_unlock(&lb.m);
                aptus_cpu_relax();
                pthread_mutex_lock(&lb.m);
                continue;
            }
            lb.sleeping = 1;
            pthread_cond_wait(&lb.c, &lb.m);
            lb.sleeping = 0;
            idle = 0;
            continue;
        }
        struct lb_job j = lb.ring[lb.tail % LB_RING];
        lb.tail++;
        pthread_mutex_unlock(&lb.m);
        lb_run(&j);
        idle = 0;
        pthread_mutex_lock(&lb.m);
    }
    pthread_mutex_unlock(&lb.m);
    return NULL;
}

static int lb_start(void)
{
    if (lb.running)
        return 0;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    if (aptus_config.rma_loopback_cpu >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(aptus_config.rma_loopback_cpu, &set);
        pthread_attr_setaffinity_np(&attr, sizeof set, &set);
    }
    lb.stop = 0;
    int rc = pthread_create(&lb.tid, &attr, lb_main, NULL);
    pthread_attr_destroy(&attr);
    if (rc)
        return -1;
    lb.running = 1;
    return 0;
}

/* Hands a transfer to the agent: 1 if it took it (then it owns segs, and the window holds dt
 * until the copy has run), 0: do it yourself. */
static int lb_take(struct aptus_win *w, struct lb_job *j)
{
    if (!aptus_config.rma_loopback || j->len < aptus_config.rma_loopback_min || (!lb.running && lb_start()))
        return 0;
    if (j->dt) {
        if (w->nlb_types == w->caplb_types) {
            int cap = w->caplb_types ? 2 * w->caplb_types : 8;
            const struct aptus_dtype **t = realloc(w->lb_types, sizeof *t * (size_t)cap);
            if (!t)
                return 0;
            w->lb_types = t;
            w->caplb_types = cap;
        }
        aptus_dtype_retain((struct aptus_dtype *)j->dt);
        w->lb_types[w->nlb_types++] = j->dt;
    }
    pthread_mutex_lock(&lb.m);
    if (lb.head - lb.tail >= LB_RING) {
        pthread_mutex_unlock(&lb.m);
        if (j->dt)
            aptus_dtype_release((struct aptus_dtype *)w->lb_types[--w->nlb_types]);
        return 0;
    }
    __atomic_add_fetch(&w->lb_pending, 1, __ATOMIC_RELAXED);
    j->pending = &w->lb_pending;
    lb.ring[lb.head % LB_RING] = *j;
    lb.head++;
    if (lb.sleeping)
        pthread_cond_signal(&lb.c);
    pthread_mutex_unlock(&lb.m);
    st_lb_jobs++;
    return 1;
}

/* One contiguous copy (the fast path's). */
static int lb_take_bytes(struct aptus_win *w, char *local, uint64_t remote, size_t len, int pid, int write)
{
    struct lb_job j = { local, NULL, 0, len, NULL, { remote, len }, 1, pid, write, NULL };
    return lb_take(w, &j);
}

/* Waits until the agent has run every copy of the window. */
static void lb_drain(struct aptus_win *w)
{
    unsigned spins = 0;
    while (__atomic_load_n(&w->lb_pending, __ATOMIC_ACQUIRE))
        if (++spins < 1000)
            aptus_cpu_relax();
        else
            sched_yield();
    while (w->nlb_types > 0)
        aptus_dtype_release((struct aptus_dtype *)w->lb_types[--w->nlb_types]);
}

static void lb_stop(void)
{
    if (!lb.running)
        return;
    pthread_mutex_lock(&lb.m);
    lb.stop = 1;
    pthread_cond_signal(&lb.c);
    pthread_mutex_unlock(&lb.m);
    pthread_join(lb.tid, NULL);
    lb.running = 0;
    lb.head = lb.tail = 0;
}

/* ---- RDMA over the RC channel ---------------------------------------------------------------- */

/* Operations in flight on the RC channel, counted by one completion; their staging buffers
 * (freed, or unpacked into the origin's datatype, once it reaches zero). */
struct rma_rdma {
    struct aptus_completion comp;
    char probe; /* the byte read back to confirm placement */
    struct {
        char *tmp;
        void *ubuf; /* a get into a non-contiguous origin: unpack tmp here */
        size_t count;
        const struct aptus_dtype *dt;
    } * stage;
    int nstage, capstage;
};

static struct aptus_channel *rdma_channel(void)
{
    int id = aptus_channel_id_of("rc-rdma");
    struct aptus_channel *ch = id >= 0 && id < APTUS_CH_COUNT ? aptus_channels[id] : NULL;
    if (!ch || !ch->put || !ch->get || !ch->mem_reg || !ch->reaches ||
        (ch->caps.flags & (APTUS_CAP_PUT | APTUS_CAP_GET)) != (APTUS_CAP_PUT | APTUS_CAP_GET))
        return NULL;
    return ch;
}

/* APTUS_RMA_PUT_RDMA_MIN when set, else `soft` bytes over a provider that serves RDMA in the
 * target's process and 0 with an RDMA adapter (whose operations need no target CPU). */
static size_t rdma_min(size_t soft)
{
    if (aptus_config.rma_put_rdma_min >= 0)
        return (size_t)aptus_config.rma_put_rdma_min;
    struct aptus_channel *ch = rdma_channel();
    return ch && (ch->caps.flags & APTUS_CAP_SOFT_RMA) ? soft : 0;
}

/* Puts smaller than this go as (batched) active messages even where RDMA could write them:
 * over a provider that serves RDMA in the target's process, a write and the flush's read-back
 * are two messages from the origin where a batch carrying the put and the flush is one. */
static size_t rdma_put_min(void)
{
    return rdma_min(2048);
}

/* The smallest put or get for which an origin checks a dynamic window's region on another node
 * (a read of the target's table: a round trip, once per region between two completions). With
 * a provider that serves RDMA in the target's process, measured across two namespaces: one
 * operation per flush gains from 8 KiB (get 8 KiB: 28 us checked, 40 by active message), many
 * per flush from 4 KiB; below, the batch and its flush answer cost less than the check. */
static size_t dyn_check_min(void)
{
    return rdma_min(8192);
}

/* The RC endpoint to a target, when its connection is up now; NULL otherwise (active
 * messages then, whose traffic counts toward opening a connection). */
static struct aptus_ep *rdma_ep(const struct rma_target *t, struct aptus_channel **chp)
{
    if (!t->rdma_ok)
        return NULL;
    struct aptus_channel *ch = rdma_channel();
    if (!ch || !ch->reaches(t->world))
        return NULL;
    struct aptus_peer *p = aptus_peer_get(t->world);
    if (!p || p->failed)
        return NULL;
    *chp = ch;
    return aptus_peer_ep(p, ch->id);
}

static int rdma_stage(struct aptus_win *w, char *tmp, void *ubuf, size_t count, const struct aptus_dtype *dt)
{
    struct rma_rdma *d = w->rdma;
    if (d->nstage == d->capstage) {
        int cap = d->capstage ? 2 * d->capstage : 8;
        void *p = realloc(d->stage, sizeof *d->stage * (size_t)cap);
        if (!p)
            return MPI_ERR_NO_MEM;
        d->stage = p;
        d->capstage = cap;
    }
    if (dt)
        aptus_dtype_retain((struct aptus_dtype *)dt);
    d->stage[d->nstage].tmp = tmp;
    d->stage[d->nstage].ubuf = ubuf;
    d->stage[d->nstage].count = count;
    d->stage[d->nstage].dt = dt;
    d->nstage++;
    return 0;
}

/* One RDMA write or read of len bytes at buf to (addr, key), waiting for room when the channel
 * has none; an operation in flight is counted in comp. The channel's status (APTUS_ERR: failed). */
static int rdma_issue(struct aptus_channel *ch, struct aptus_ep *ep, int write, void *buf, size_t len, uint64_t addr,
                      uint64_t key, struct aptus_completion *comp)
{
    unsigned idle = 0;
    int st;
    for (;;) {
        struct iovec iov = { buf, len }; /* (the channel may use it as scratch) */
        st = write ? ch->put(ep, &iov, 1, addr, key, comp) : ch->get(ep, &iov, 1, addr, key, comp);
        if (st != APTUS_NORES)
            break;
        aptus_wait_step(&idle);
    }
    if (st == APTUS_INPROGRESS)
        comp->count++;
    return st;
}

/* Puts or gets the target's ranges from/into the contiguous `data`, piece by piece (at most
 * the channel's largest operation each); waits for room when the channel has none. */
static int rdma_move(struct aptus_win *w, struct rma_target *t, struct aptus_channel *ch, struct aptus_ep *ep,
                     char *data, const struct rma_seg *s, size_t n, int write, uint64_t addr, uint64_t key)
{
    size_t max = write ? ch->caps.put_max : ch->caps.get_max;
    if (!max)
        max = SIZE_MAX;
    for (size_t i = 0; i < n; i++) {
        for (uint64_t done = 0; done < s[i].len;) {
            size_t len = s[i].len - done < max ? (size_t)(s[i].len - done) : max;
            if (rdma_issue(ch, ep, write, data, len, addr + s[i].off + done, key, &w->rdma->comp) == APTUS_ERR)
                return MPI_ERR_OTHER;
            data += len;
            done += len;
        }
    }
    if (write)
        t->rdma_dirty = 1;
    return 0;
}

/* Waits for the RDMA operations in flight, then for the placement of the writes at their
 * targets (target -1: all), and settles the staging buffers. */
static int rdma_wait(struct aptus_win *w, int target)
{
    struct rma_rdma *d = w->rdma;
    if (!d)
        return 0;
    unsigned idle = 0;
    /* The read-backs go out at once, without waiting for the writes' local completions: a read
     * on the same connection is answered after the writes before it anyway. */
    struct aptus_channel *ch = rdma_channel();
    for (int r = 0; r < w->size && ch; r++) {
        struct rma_target *t = &w->t[r];
        if (!t->rdma_dirty || (target >= 0 && r != target))
            continue;
        t->rdma_dirty = 0;
        struct aptus_ep *ep = rdma_ep(t, &ch);
        if (!ep)
            continue;
        if (ch->flush && ch->flush(ep, &d->comp) == APTUS_INPROGRESS)
            d->comp.count++;
        /* A write's local completion (the tcp provider: handed to the socket) does not say it is
         * in place; a read from the same connection is answered after it: read a byte back (of
         * the window, or of a dynamic window's control slot). */
        if (t->size || w->flavor == MPI_WIN_FLAVOR_DYNAMIC)
            (void)rdma_issue(ch, ep, 0, &d->probe, 1, t->rdma_addr, t->rdma_key, &d->comp);
    }
    while (d->comp.count > 0)
        aptus_wait_step(&idle);
    for (int i = 0; i < d->nstage; i++) {
        if (d->stage[i].dt) {
            aptus_dt_unpack(d->stage[i].tmp, d->stage[i].count, d->stage[i].dt, d->stage[i].ubuf);
            aptus_dtype_release((struct aptus_dtype *)d->stage[i].dt);
        }
        free(d->stage[i].tmp);
    }
    d->nstage = 0;
    int rc = d->comp.status != APTUS_OK ? MPI_ERR_OTHER : 0;
    d->comp.status = APTUS_OK;
    if (target < 0)
        w->rdma_dirty_any = 0;
    return rc;
}

/* Reads len bytes at offset off of the target's registered memory (a dynamic window's control
 * slot) and waits for them: 0, or -1 when the read failed. */
static int rdma_read_now(struct rma_target *t, struct aptus_channel *ch, struct aptus_ep *ep, void *buf, size_t len,
                         size_t off)
{
    struct aptus_completion c = { NULL, 0, APTUS_OK };
    int st = rdma_issue(ch, ep, 0, buf, len, t->rdma_addr + off, t->rdma_key, &c);
    unsigned idle = 0;
    while (c.count > 0)
        aptus_wait_step(&idle);
    return st == APTUS_ERR || c.status != APTUS_OK ? -1 : 0;
}

/* The registered region of the origin's copy of the target's table that holds address pos;
 * -1: none. */
static int dyn_at(const struct rma_dyn *d, uint64_t pos)
{
    for (uint32_t k = 0; k < d->n; k++)
        if (pos >= d->e[k].r.base && pos - d->e[k].r.base < d->e[k].r.size)
            return d->e[k].r.rdma ? (int)k : -1;
    return -1;
}

/* Whether every byte of the ranges lies in registered regions of the copy (an access may run
 * from one region into the next); with mark, those regions are marked checked in the interval
 * `stamp`, else *need is set when one of them is not checked in it. */
static int dyn_cover(struct rma_dyn *d, const struct rma_seg *s, size_t n, uint32_t stamp, int mark, int *need)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t end = s[i].off + s[i].len;
        for (uint64_t pos = s[i].off; pos < end;) {
            int k = dyn_at(d, pos);
            if (k < 0)
                return 0;
            if (mark)
                d->e[k].checked = stamp;
            else if (d->e[k].checked != stamp)
                *need = 1;
            uint64_t e = d->e[k].r.base + d->e[k].r.size;
            pos = e < end ? e : end;
        }
    }
    return 1;
}

/* Reads the target's sequence count and, when it differs from the copy's, the table (then the
 * count again: a sequence lock). 0, or -1 when the owner was rewriting it or a read failed. */
static int dyn_refresh(struct rma_target *t, struct aptus_channel *ch, struct aptus_ep *ep)
{
    struct rma_dyn *d = t->dyn;
    uint32_t g;
    st_dyn_reads++;
    if (rdma_read_now(t, ch, ep, &g, sizeof g, offsetof(struct rma_ctrl, gen)) || (g & 1))
        return -1;
    if (g == d->gen)
        return 0;
    struct rma_ctrl *c = malloc(sizeof *c);
    uint32_t g2 = 1;
    int bad = !c || rdma_read_now(t, ch, ep, c, sizeof *c, 0) ||
              rdma_read_now(t, ch, ep, &g2, sizeof g2, offsetof(struct rma_ctrl, gen)) || g2 != g;
    if (!bad) {
        d->n = c->nregions < RMA_REGIONS_MAX ? c->nregions : RMA_REGIONS_MAX;
        for (uint32_t i = 0; i < d->n; i++) {
            d->e[i].r = c->region[i];
            d->e[i].checked = 0;
        }
        d->gen = g;
    }
    free(c);
    return bad ? -1 : 0;
}

/* Whether the ranges of an operation on a dynamic window on another node can go by RDMA: every
 * byte in a registered region checked in this interval between completions (struct rma_dyn) --
 * after a check (a round trip) when `check` and one of them is not. 0: active message (not
 * attached there as registered regions, the table outgrown, being rewritten, or a read failed:
 * the target's agent then checks the ranges). */
static int dyn_ready(struct aptus_win *w, struct rma_target *t, struct aptus_channel *ch, struct aptus_ep *ep,
                     const struct rma_seg *s, size_t n, int check)
{
    struct rma_dyn *d = t->dyn;
    if (!d) {
        if (!check || !(d = t->dyn = calloc(1, sizeof *d)))
            return 0;
        d->gen = 1;
    }
    uint32_t stamp = w->sync_seq + 1;
    int need = 0;
    if (dyn_cover(d, s, n, stamp, 0, &need) && !need)
        return 1;
    if (!check || dyn_refresh(t, ch, ep))
        return 0;
    return dyn_cover(d, s, n, stamp, 1, &need);
}

/* rdma_move for a target's ranges: its window's key, or the key of each region a dynamic
 * window's ranges pass through (dyn_ready said they all are in the copy of its table). */
static int rdma_move_to(struct aptus_win *w, struct rma_target *t, struct aptus_channel *ch, struct aptus_ep *ep,
                        char *data, const struct rma_seg *s, size_t n, int write)
{
    if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC)
        return rdma_move(w, t, ch, ep, data, s, n, write, t->rdma_addr, t->rdma_key);
    const struct rma_dyn *d = t->dyn;
    for (size_t i = 0; i < n; i++) {
        uint64_t end = s[i].off + s[i].len;
        for (uint64_t pos = s[i].off; pos < end;) {
            int k = dyn_at(d, pos);
            uint64_t e = d->e[k].r.base + d->e[k].r.size;
            struct rma_seg piece = { pos, (e < end ? e : end) - pos };
            /* (the ranges are addresses: raddr - base + pos lands in the region) */
            int rc = rdma_move(w, t, ch, ep, data, &piece, 1, write, d->e[k].r.raddr - d->e[k].r.base, d->e[k].r.key);
            if (rc)
                return rc;
            data += piece.len;
            pos += piece.len;
        }
    }
    return 0;
}

/* A put or get to a target on another node by RDMA: 1 when done that way (*rc its result), 0
 * when the target is not reachable so (no RC connection up, or not registered; for a dynamic
 * window, no registered region known to hold the ranges -- looked up when `check`). */
static int rdma_op(struct aptus_win *w, struct rma_target *t, const struct rma_op *op, const struct rma_seg *s,
                   size_t ns, size_t bytes, int check, int *rc)
{
    struct aptus_channel *ch = NULL;
    struct aptus_ep *ep = w->rdma ? rdma_ep(t, &ch) : NULL;
    if (!ep)
        return 0;
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC && !dyn_ready(w, t, ch, ep, s, ns, check))
        return 0;
    *rc = 0;
    if (op->kind == RMA_PUT) {
        char *tmp = NULL;
        const char *data = packed_of(op->obuf, op->ocount, op->odt, &tmp);
        if (!data && bytes)
            *rc = MPI_ERR_NO_MEM;
        if (!*rc)
            *rc = rdma_move_to(w, t, ch, ep, (char *)data, s, ns, 1);
        if (tmp && (*rc || rdma_stage(w, tmp, NULL, 0, NULL)))
            free(tmp); /* (staging failed: the operation waits here) */
        return 1;
    }
    int contig = op->rdt->contig;
    char *out = contig ? (char *)op->rbuf + op->rdt->true_lb : malloc(bytes ? bytes : 1);
    if (!out) {
        *rc = MPI_ERR_NO_MEM;
        return 1;
    }
    *rc = rdma_move_to(w, t, ch, ep, out, s, ns, 0);
    if (!contig && (*rc || rdma_stage(w, out, op->rbuf, op->rcount, op->rdt))) {
        if (!*rc) { /* no room to stage: complete it here */
            *rc = rdma_wait(w, -1);
            aptus_dt_unpack(out, op->rcount, op->rdt, op->rbuf);
        }
        free(out);
    }
    return 1;
}

/* ---- the target's agent (active messages) --------------------------------------------------- */

static void agent_reply(struct rma_agent *a, int origin, uint32_t tag, void *buf, size_t len)
{
    struct aptus_win *w = a->w;
    struct aptus_request *r;
    if (aptus_coll_isend_on(w->comm, w->comm->ctx, buf, len, origin, (int)tag, &r)) {
        free(buf);
        return;
    }
    if (a->nout == a->capout) {
        int cap = a->capout ? 2 * a->capout : 8;
        struct rma_pend *p = realloc(a->out, sizeof *p * (size_t)cap);
        if (!p) {
            aptus_wait(r);
            aptus_req_free(r);
            free(buf);
            return;
        }
        a->out = p;
        a->capout = cap;
    }
    a->out[a->nout++] = (struct rma_pend){ r, buf };
}

static void agent_reply_int(struct rma_agent *a, int origin, uint32_t tag, int v)
{
    int *b = malloc(sizeof *b);
    if (!b)
        return;
    *b = v;
    agent_reply(a, origin, tag, b, sizeof *b);
}

static void agent_note(struct rma_agent *a, int origin, int err)
{
    if (err && !a->err[origin])
        a->err[origin] = err;
}

static struct rma_ctrl *my_ctrl(struct aptus_win *w)
{
    return w->t[w->rank].ctrl;
}

/* Checks the ranges of a request against this rank's window. */
static int agent_range(struct aptus_win *w, const struct rma_seg *s, size_t n)
{
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC) {
        if (!w->nregions)
            return n == 0;
        for (size_t i = 0; i < n; i++)
            if (!covered(s[i].off, s[i].len, &w->regions[0].off, &w->regions[0].len, sizeof w->regions[0],
                         (uint32_t)w->nregions))
                return 0;
        return 1;
    }
    return segs_in(s, n, (uint64_t)w->wsize);
}

static void agent_lockq_add(struct rma_agent *a, int origin, int type, uint32_t tag)
{
    if (a->nlockq == a->caplockq) {
        int cap = a->caplockq ? 2 * a->caplockq : 8;
        void *p = realloc(a->lockq, sizeof *a->lockq * (size_t)cap);
        if (!p) {
            agent_reply_int(a, origin, tag, MPI_ERR_NO_MEM);
            return;
        }
        a->lockq = p;
        a->caplockq = cap;
    }
    a->lockq[a->nlockq].origin = origin;
    a->lockq[a->nlockq].type = (uint8_t)type;
    a->lockq[a->nlockq].tag = tag;
    a->nlockq++;
}

static void agent_handle_one(struct rma_agent *a, int origin, const char *msg, const struct rma_hdr *hp)
{
    struct aptus_win *w = a->w;
    struct rma_hdr h = *hp;
    const struct rma_seg *s = (const struct rma_seg *)(const void *)(msg + sizeof h);
    const char *data = msg + sizeof h + h.nsegs * sizeof *s;
    struct rma_target *me = &w->t[w->rank];
    if (h.kind <= AM_CAS)
        st_agent++;
    size_t total = 0;
    for (uint64_t i = 0; i < h.nsegs; i++)
        total += s[i].len;
    switch (h.kind) {
    case AM_PUT:
        if (!agent_range(w, s, h.nsegs))
            agent_note(a, origin, MPI_ERR_RMA_RANGE);
        else
            move_direct(w, me, (char *)data, s, h.nsegs, 1);
        break;
    case AM_GET:
    case AM_GACC:
    case AM_CAS: {
        char *out = malloc(total ? total : 1);
        if (!out) {
            agent_note(a, origin, MPI_ERR_NO_MEM);
            break;
        }
        if (!agent_range(w, s, h.nsegs)) {
            agent_note(a, origin, MPI_ERR_RMA_RANGE);
            memset(out, 0, total);
        } else if (h.kind == AM_GET) {
            move_direct(w, me, out, s, h.nsegs, 0);
        } else if (h.kind == AM_GACC) {
            acc_direct(w, me, h.op_id, (MPI_Datatype)(uintptr_t)h.basic, h.op_id == APTUS_OP_NO_OP ? NULL : data, out,
                       s, h.nsegs);
        } else {
            cas_direct(w, me, total, data, data + total, out, s);
        }
        agent_reply(a, origin, h.reply_tag, out, total);
        break;
    }
    case AM_ACC:
        if (!agent_range(w, s, h.nsegs))
            agent_note(a, origin, MPI_ERR_RMA_RANGE);
        else
            acc_direct(w, me, h.op_id, (MPI_Datatype)(uintptr_t)h.basic, data, NULL, s, h.nsegs);
        break;
    case AM_LOCK:
        if (lock_try(&my_ctrl(w)->lock, h.lock))
            agent_reply_int(a, origin, h.reply_tag, 0);
        else
            agent_lockq_add(a, origin, h.lock, h.reply_tag);
        break;
    case AM_UNLOCK:
        lock_release(&my_ctrl(w)->lock, h.lock);
        /* the answer carries the errors, as a flush's */
        __attribute__((fallthrough));
    case AM_FLUSH:
        agent_reply_int(a, origin, h.reply_tag, a->err[origin]);
        a->err[origin] = 0;
        break;
    case AM_COMPLETE: w->completes++; break;
    default: break;
    }
}

/* A message from an origin: one active message or a batch of them (each at a multiple of 8
 * bytes), taken in order. */
static void agent_handle(struct rma_agent *a, int origin, const char *msg, size_t len)
{
    size_t pos = 0;
    while (len - pos >= sizeof(struct rma_hdr)) {
        struct rma_hdr h;
        memcpy(&h, msg + pos, sizeof h);
        size_t room = len - pos - sizeof h;
        if (h.nsegs > room / sizeof(struct rma_seg) || h.bytes > room - h.nsegs * sizeof(struct rma_seg))
            return; /* malformed: the library sent it, so this cannot happen */
        agent_handle_one(a, origin, msg + pos, &h);
        pos += RMA_PAD8(sizeof h + h.nsegs * sizeof(struct rma_seg) + h.bytes);
        if (pos >= len)
            break;
    }
}

static int agent_poll(void *arg)
{
    struct rma_agent *a = arg;
    if (a->dead) {
        for (int i = 0; i < a->nout; i++) {
            aptus_wait(a->out[i].req);
            aptus_req_free(a->out[i].req);
            free(a->out[i].tmp);
        }
        free(a->out);
        free(a->lockq);
        free(a->buf);
        free(a->err);
        free(a);
        return 1;
    }
    struct aptus_win *w = a->w;
    /* replies sent */
    for (int i = 0; i < a->nout;) {
        if (a->out[i].req->complete) {
            aptus_req_free(a->out[i].req);
            free(a->out[i].tmp);
            a->out[i] = a->out[--a->nout];
        } else {
            i++;
        }
    }
    /* locks waiting */
    for (int i = 0; i < a->nlockq;) {
        if (lock_try(&my_ctrl(w)->lock, a->lockq[i].type)) {
            agent_reply_int(a, a->lockq[i].origin, a->lockq[i].tag, 0);
            memmove(a->lockq + i, a->lockq + i + 1, sizeof *a->lockq * (size_t)(a->nlockq - i - 1));
            a->nlockq--;
        } else {
            i++;
        }
    }
    for (;;) {
        if (a->rx) {
            if (!a->rx->complete)
                break;
            struct aptus_request *r = a->rx;
            a->rx = NULL;
            agent_handle(a, r->st_source, a->buf, r->st_bytes);
            aptus_req_free(r);
            continue;
        }
        MPI_Status st;
        struct aptus_unexp *msg = NULL;
        if (!aptus_probe_test(MPI_ANY_SOURCE, TAG_REQ, w->comm, w->comm->ctx, &st, 1, &msg))
            break;
        size_t len = aptus_status_bytes(&st);
        if (len > a->cap) {
            char *b = realloc(a->buf, len);
            if (!b)
                break; /* the message stays taken: it will be lost; out of memory is fatal soon */
            a->buf = b;
            a->cap = len;
        }
        struct aptus_request *r = aptus_req_new(APTUS_REQ_RECV);
        if (!r)
            break;
        r->buf = a->buf;
        r->bytes = len;
        r->comm = w->comm;
        aptus_recv_taken(r, msg);
        a->rx = r;
    }
    return 0;
}

/* ---- creation ------------------------------------------------------------------------------- */

struct rank_info {
    uint64_t base, size;
    int64_t disp_unit;
    int32_t pid, node;
};

static size_t page_size(void)
{
    long p = sysconf(_SC_PAGESIZE);
    return p > 0 ? (size_t)p : 4096;
}

static size_t round_up(size_t v, size_t a)
{
    return (v + a - 1) / a * a;
}

/* Maps the node segment of size bytes: created by the node's first rank (leader), opened by the
 * others. Collective over w->comm (two agreements). */
static int seg_setup(struct aptus_win *w, int leader_world, size_t bytes, int leader, const char **why)
{
    char name[96];
    snprintf(name, sizeof name, "/aptus-%s-w%d-%u", aptus_rt.pmi.jobid, leader_world, (unsigned)w->comm->ctx);
    uint32_t bad = 0;
    int slot = -1;
    void *p = MAP_FAILED;
    if (leader) {
        slot = name_hold(name);
        int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
        if (fd >= 0 && ftruncate(fd, (off_t)bytes) == 0)
            p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (fd >= 0)
            close(fd);
        bad = p == MAP_FAILED;
    }
    int rc = aptus_allreduce_u32(w->comm, &bad, 1, APTUS_OP_MAX);
    if (!rc && !bad && !leader) {
        int fd = shm_open(name, O_RDWR, 0);
        if (fd >= 0) {
            p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
            close(fd);
        }
        bad = p == MAP_FAILED;
    }
    if (!rc && !bad)
        rc = aptus_allreduce_u32(w->comm, &bad, 1, APTUS_OP_MAX);
    if (leader) {
        (void)shm_unlink(name);
        if (slot >= 0)
            pending_names[slot][0] = 0;
    }
    if (rc || bad) {
        if (p != MAP_FAILED)
            munmap(p, bytes);
        *why = "cannot create the window's shared memory segment (/dev/shm full, or too little memory)";
        return rc ? rc : MPI_ERR_NO_MEM;
    }
    w->seg = p;
    w->seg_size = bytes;
    return 0;
}

/* Whether this process may copy from and into other processes of the node with Cross Memory
 * Attach: tried on the first other local rank's control slot (its address there). */
static int cma_probe(struct aptus_win *w, const uint64_t *ctrl_addr)
{
    for (int r = 0; r < w->size; r++) {
        if (r == w->rank || !w->t[r].ctrl)
            continue;
        uint32_t v;
        struct iovec l = { &v, sizeof v }, rm = { (void *)(uintptr_t)ctrl_addr[r], sizeof v };
        return process_vm_readv(w->t[r].pid, &l, 1, &rm, 1, 0) == (ssize_t)sizeof v;
    }
    return 1;
}

static void win_destroy(struct aptus_win *w)
{
    if (w->rdma) {
        rdma_wait(w, -1);
        free(w->rdma->stage);
        free(w->rdma);
    }
    if (w->memh) {
        struct aptus_channel *ch = rdma_channel();
        if (ch && ch->mem_dereg)
            ch->mem_dereg(w->memh);
    }
    if (w->agent) {
        w->agent->dead = 1;
        for (struct rma_agent **pp = &live_agents; *pp; pp = &(*pp)->next_live)
            if (*pp == w->agent) {
                *pp = w->agent->next_live;
                break;
            }
    }
    if (w->seg)
        munmap(w->seg, w->seg_size);
    if (w->alloc_owned)
        free(w->base);
    if (w->comm)
        aptus_comm_release(w->comm);
    if (w->info != MPI_INFO_NULL)
        aptus_info_destroy(aptus_info_get(w->info));
    free(w->pend);
    free(w->lb_types);
    for (int i = 0; i < w->nregions; i++)
        if (w->regions[i].mh)
            rdma_channel()->mem_dereg(w->regions[i].mh);
    free(w->regions);
    for (int r = 0; w->t && r < w->size; r++)
        free(w->t[r].dyn);
    free(w->start);
    free(w->post);
    for (int r = 0; w->t && r < w->size; r++)
        free(w->t[r].batch);
    free(w->t);
    aptus_errh_release(w->errh);
    w->magic = 0;
    aptus_obj_free(APTUS_OBJ_WIN, w);
}

int aptus_win_make(int flavor, void *base, MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, struct aptus_comm *comm,
                   void *baseptr, struct aptus_win **out, const char **why)
{
    *out = NULL;
    *why = "out of memory";
    struct aptus_win *w = aptus_obj_alloc(APTUS_OBJ_WIN, sizeof *w);
    if (!w)
        return MPI_ERR_NO_MEM;
    w->magic = APTUS_MAGIC_WIN;
    w->handle = (MPI_Win)w;
    w->flavor = flavor;
    w->model = MPI_WIN_UNIFIED;
    w->info = MPI_INFO_NULL;
    w->wsize = flavor == MPI_WIN_FLAVOR_DYNAMIC ? 0 : size;
    w->disp_unit = disp_unit;
    w->errh = &aptus_errh_fatal; /* a window's default handler (MPI 4.1, 9.3) */
    w->errh->refcount++;
    int n = comm->size;
    int *world = malloc(sizeof *world * (size_t)n);
    if (!world) {
        aptus_obj_free(APTUS_OBJ_WIN, w);
        return MPI_ERR_NO_MEM;
    }
    for (int i = 0; i < n; i++)
        world[i] = aptus_comm_world_rank(comm, i);
    int rc = aptus_comm_create_from(comm, world, n, &w->comm);
    free(world);
    if (rc) {
        aptus_obj_free(APTUS_OBJ_WIN, w);
        *why = "cannot make the window's communicator";
        return rc;
    }
    w->rank = w->comm->rank;
    w->size = w->comm->size;
    snprintf(w->comm->name, sizeof w->comm->name, "window of %.100s", comm->name);
    w->t = calloc((size_t)n, sizeof *w->t);
    struct rank_info *ri = calloc((size_t)n, sizeof *ri);
    uint64_t *ctrl_addr = calloc((size_t)n, sizeof *ctrl_addr);
    if (!w->t || !ri || !ctrl_addr) {
        free(ri);
        free(ctrl_addr);
        win_destroy(w);
        return MPI_ERR_NO_MEM;
    }
    struct rank_info mine = { (uint64_t)(uintptr_t)base, (uint64_t)size, (int64_t)disp_unit, (int32_t)aptus_rt.pid,
                              (int32_t)aptus_rt.node };
    rc = aptus_allgather_internal(w->comm, &mine, ri, sizeof mine);
    /* the node's ranks, in rank order: the layout of the segment */
    int nlocal = 0, li = 0, leader = -1;
    for (int r = 0; r < n && !rc; r++) {
        w->t[r].size = ri[r].size;
        w->t[r].disp_unit = ri[r].disp_unit;
        w->t[r].world = aptus_comm_world_rank(w->comm, r);
        w->t[r].pid = ri[r].pid;
        w->t[r].base = ri[r].base;
        if (ri[r].node == mine.node) {
            if (leader < 0)
                leader = r;
            if (r == w->rank)
                li = nlocal;
            nlocal++;
        }
    }
    w->nlocal = nlocal;
    if (flavor == MPI_WIN_FLAVOR_SHARED && !rc && nlocal != n) {
        free(ri);
        free(ctrl_addr);
        win_destroy(w);
        *why = "the processes of the communicator are not all on one node (shared memory cannot span nodes)";
        return MPI_ERR_RMA_SHARED;
    }
    /* segment: control slots, then the memory of the allocating flavors */
    size_t pg = page_size(), ctrl_bytes = round_up((size_t)nlocal * RMA_CTRL_STRIDE, pg), total = ctrl_bytes;
    size_t *off = calloc((size_t)n, sizeof *off);
    int noncontig = 0;
    const char *nc = info != MPI_INFO_NULL ? aptus_info_lookup(aptus_info_get(info), "alloc_shared_noncontig") : NULL;
    if (nc && !strcmp(nc, "true"))
        noncontig = 1;
    if (!off && !rc)
        rc = MPI_ERR_NO_MEM;
    for (int r = 0; r < n && !rc; r++) {
        if (ri[r].node != mine.node)
            continue;
        if (flavor == MPI_WIN_FLAVOR_ALLOCATE || (flavor == MPI_WIN_FLAVOR_SHARED && noncontig))
            total = round_up(total, pg);
        off[r] = total;
        if (flavor == MPI_WIN_FLAVOR_ALLOCATE || flavor == MPI_WIN_FLAVOR_SHARED)
            total += (size_t)ri[r].size;
    }
    if (!rc)
        rc = seg_setup(w, leader >= 0 ? w->t[leader].world : aptus_rt.rank, total ? total : pg, w->rank == leader, why);
    if (rc) {
        free(ri);
        free(ctrl_addr);
        free(off);
        win_destroy(w);
        return rc;
    }
    int k = 0;
    for (int r = 0; r < n; r++) {
        struct rma_target *t = &w->t[r];
        if (ri[r].node != mine.node) {
            t->path = RMA_PATH_AM;
            continue;
        }
        t->ctrl = (struct rma_ctrl *)(void *)(w->seg + (size_t)k * RMA_CTRL_STRIDE);
        k++;
        if (flavor == MPI_WIN_FLAVOR_ALLOCATE || flavor == MPI_WIN_FLAVOR_SHARED) {
            t->path = RMA_PATH_SHARED;
            t->local = w->seg + off[r];
        } else {
            t->path = RMA_PATH_CMA;
        }
    }
    (void)li;
    free(off);
    if (flavor == MPI_WIN_FLAVOR_ALLOCATE || flavor == MPI_WIN_FLAVOR_SHARED) {
        w->base = w->t[w->rank].local;
        if (size == 0)
            w->base = NULL;
        *(void **)baseptr = w->base;
        /* the address of the memory in each process differs: targets on the node are reached by
         * `local`, the others by offsets */
    } else {
        w->base = base;
    }
    /* Cross Memory Attach, for create and dynamic windows: tried once */
    if (flavor == MPI_WIN_FLAVOR_CREATE || flavor == MPI_WIN_FLAVOR_DYNAMIC) {
        uint64_t a = (uint64_t)(uintptr_t)w->t[w->rank].ctrl;
        rc = aptus_allgather_internal(w->comm, &a, ctrl_addr, sizeof a);
        if (!rc && !cma_probe(w, ctrl_addr))
            for (int r = 0; r < n; r++)
                if (w->t[r].path == RMA_PATH_CMA && r != w->rank)
                    w->t[r].path = RMA_PATH_AM;
    }
    /* RDMA: windows spanning nodes register their memory with the RC channel, if there is one (a
     * dynamic window its control slot, whose table of regions origins read to find their keys) */
    int nodes_many = 0;
    for (int r = 0; r < n; r++)
        nodes_many |= ri[r].node != ri[0].node;
    w->spans = nodes_many;
    free(ri);
    free(ctrl_addr);
    struct aptus_channel *rch = rdma_channel();
    w->put_rdma_min = rdma_put_min();
    w->dyn_check_min = dyn_check_min();
    if (!rc && nodes_many && rch) {
        struct {
            uint64_t addr, key, ok;
        } me = { 0, 0, 0 }, *all = calloc((size_t)n, sizeof *all);
        w->rdma = calloc(1, sizeof *w->rdma);
        void *reg = flavor == MPI_WIN_FLAVOR_DYNAMIC ? (void *)my_ctrl(w) : w->base;
        size_t rlen = flavor == MPI_WIN_FLAVOR_DYNAMIC ? sizeof(struct rma_ctrl) : (size_t)size;
        if (reg && rlen > 0 && rch->mem_reg(reg, rlen, &w->memh, &me.addr, &me.key) == APTUS_OK)
            me.ok = 1;
        if (!all || !w->rdma)
            rc = MPI_ERR_NO_MEM; /* (out of memory here leaves the others in the allgather, as the
                                    allocations before the first one do: see docs/DESIGN.md) */
        else
            rc = aptus_allgather_internal(w->comm, &me, all, sizeof me);
        for (int r = 0; r < n && !rc; r++) {
            w->t[r].rdma_ok = (uint8_t)all[r].ok;
            w->t[r].rdma_addr = all[r].addr;
            w->t[r].rdma_key = all[r].key;
        }
        free(all);
    }
    if (!rc) {
        struct rma_agent *a = calloc(1, sizeof *a);
        if (a)
            a->err = calloc((size_t)n, sizeof *a->err);
        if (!a || !a->err || aptus_bg_add_quiet(agent_poll, a)) {
            if (a)
                free(a->err);
            free(a);
            rc = MPI_ERR_NO_MEM;
        } else {
            a->w = w;
            w->agent = a;
            a->next_live = live_agents;
            live_agents = a;
        }
    }
    /* MPI 4.1's mpi_accumulate_granularity: up to 8 bytes asks for atomicity per element (CPU
     * atomics in the node segment); 0 (the default) or more leaves the choice to us: the target's
     * accumulate lock around whole operations (docs/DESIGN.md) */
    const char *gran =
        info != MPI_INFO_NULL ? aptus_info_lookup(aptus_info_get(info), "mpi_accumulate_granularity") : NULL;
    if (gran) {
        long g = strtol(gran, NULL, 10);
        w->acc_fine = g >= 1 && g <= 8;
    }
    if (!rc && info != MPI_INFO_NULL) {
        struct aptus_info *d = aptus_info_dup(aptus_info_get(info));
        if (d)
            w->info = (MPI_Info)d;
    }
    if (rc) {
        win_destroy(w);
        return rc;
    }
    st_windows++;
    *out = w;
    return 0;
}

int aptus_win_free(struct aptus_win *w, const char **why)
{
    if (w->nlocks || w->lock_all || w->start || w->post) {
        *why = w->post || w->start ? "an access or exposure epoch (MPI_Win_start / MPI_Win_post) is still open"
                                   : "a passive-target epoch (MPI_Win_lock / MPI_Win_lock_all) is still open";
        return MPI_ERR_RMA_SYNC;
    }
    int rc = aptus_win_flush(w, -1, 0, why);
    int rc2 = aptus_barrier(w->comm);
    if (!rc)
        rc = rc2;
    win_destroy(w);
    return rc;
}

/* The control slot's table mirrors the first RMA_REGIONS_MAX regions of the private list, so
 * that origins of the node check their ranges (and copy by Cross Memory Attach) without the
 * target; beyond it they let the target's agent check. */
static void regions_publish(struct aptus_win *w)
{
    struct rma_ctrl *c = my_ctrl(w);
    uint32_t n = w->nregions < RMA_REGIONS_MAX ? (uint32_t)w->nregions : RMA_REGIONS_MAX;
    uint32_t g = __atomic_load_n(&c->gen, __ATOMIC_SEQ_CST);
    __atomic_store_n(&c->gen, g + 1, __ATOMIC_SEQ_CST);
    for (uint32_t i = 0; i < n; i++) {
        __atomic_store_n(&c->region[i].base, w->regions[i].off, __ATOMIC_SEQ_CST);
        __atomic_store_n(&c->region[i].size, w->regions[i].len, __ATOMIC_SEQ_CST);
        __atomic_store_n(&c->region[i].raddr, w->regions[i].raddr, __ATOMIC_SEQ_CST);
        __atomic_store_n(&c->region[i].key, w->regions[i].key, __ATOMIC_SEQ_CST);
        __atomic_store_n(&c->region[i].rdma, (uint64_t)(w->regions[i].mh != NULL), __ATOMIC_SEQ_CST);
    }
    __atomic_store_n(&c->nregions, n, __ATOMIC_SEQ_CST);
    __atomic_store_n(&c->overflow, w->nregions > RMA_REGIONS_MAX, __ATOMIC_SEQ_CST);
    __atomic_store_n(&c->gen, g + 2, __ATOMIC_SEQ_CST);
}

int aptus_win_attach(struct aptus_win *w, void *base, MPI_Aint size, const char **why)
{
    if (size == 0)
        return 0;
    uint64_t b0 = (uint64_t)(uintptr_t)base, e0 = b0 + (uint64_t)size;
    for (int i = 0; i < w->nregions; i++) {
        uint64_t b = w->regions[i].off, e = b + w->regions[i].len;
        if (b0 < e && e0 > b) {
            *why = "the region overlaps a region already attached";
            return MPI_ERR_RMA_ATTACH;
        }
    }
    if (w->nregions == w->capregions) {
        int cap = w->capregions ? 2 * w->capregions : 16;
        struct rma_region *r = realloc(w->regions, sizeof *r * (size_t)cap);
        if (!r) {
            *why = "out of memory";
            return MPI_ERR_NO_MEM;
        }
        w->regions = r;
        w->capregions = cap;
    }
    struct rma_region *g = &w->regions[w->nregions++];
    *g = (struct rma_region){ b0, (uint64_t)size, 0, 0, NULL };
    /* origins on other nodes reach it by RDMA when it can be registered (else by active messages) */
    struct aptus_channel *ch = w->rdma ? rdma_channel() : NULL;
    if (ch && ch->mem_reg(base, (size_t)size, &g->mh, &g->raddr, &g->key) != APTUS_OK)
        g->mh = NULL;
    regions_publish(w);
    return 0;
}

int aptus_win_detach(struct aptus_win *w, const void *base, const char **why)
{
    for (int i = 0; i < w->nregions; i++) {
        if (w->regions[i].off != (uint64_t)(uintptr_t)base)
            continue;
        struct aptus_memh *mh = w->regions[i].mh;
        memmove(w->regions + i, w->regions + i + 1, sizeof *w->regions * (size_t)(w->nregions - i - 1));
        w->nregions--;
        regions_publish(w);
        if (mh) /* (through the registration cache: it may stay registered, unused) */
            rdma_channel()->mem_dereg(mh);
        return 0;
    }
    *why = "no region attached at this address";
    return MPI_ERR_RMA_ATTACH;
}

int aptus_win_shared_query(struct aptus_win *w, int rank, MPI_Aint *size, MPI_Aint *disp_unit, void *baseptr,
                           const char **why)
{
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC) {
        *why = "a dynamic window has no memory segments to query";
        return MPI_ERR_RMA_FLAVOR;
    }
    if (rank == MPI_PROC_NULL) {
        rank = 0;
        for (int r = 0; r < w->size; r++)
            if (w->t[r].size > 0) {
                rank = r;
                break;
            }
    }
    const struct rma_target *t = &w->t[rank];
    if (t->path != RMA_PATH_SHARED) {
        /* not in memory this process can load and store (MPI 4.1: size 0, no pointer) */
        *size = 0;
        *disp_unit = t->disp_unit;
        *(void **)baseptr = NULL;
        return 0;
    }
    *size = (MPI_Aint)t->size;
    *disp_unit = (MPI_Aint)t->disp_unit;
    *(void **)baseptr = t->size ? t->local : NULL; /* (a segment of no bytes has no address) */
    return 0;
}

/* ---- synchronization ------------------------------------------------------------------------ */

static int in_list(const int *l, int n, int r)
{
    for (int i = 0; i < n; i++)
        if (l[i] == r)
            return 1;
    return 0;
}

/* The count of targets with active messages not yet flushed follows their flags. */
static void am_dirty_set(struct aptus_win *w, struct rma_target *t, int dirty)
{
    if (t->am_dirty != dirty) {
        t->am_dirty = (uint8_t)dirty;
        w->ndirty += dirty ? 1 : -1;
    }
}

int aptus_win_flush(struct aptus_win *w, int target, int local, const char **why)
{
    if (w->spans)
        aptus_progress();
    /* The flush requests go out first, behind the operations on each target's stream, so that
     * their round trips overlap the completion of the operations' own sends (and RDMA's). */
    struct flush_wait {
        struct aptus_request *rr;
        int answer;
    } one, *fw = &one;
    int nfw = 0, rc = 0;
    if (!local && w->ndirty) {
        if (target < 0 && w->ndirty > 1 && !(fw = malloc(sizeof *fw * (size_t)w->ndirty)))
            return MPI_ERR_NO_MEM;
        for (int r = 0; r < w->size && !rc; r++) {
            if ((target >= 0 && r != target) || !w->t[r].am_dirty)
                continue;
            am_dirty_set(w, &w->t[r], 0);
            rc = am_control_start(w, r, AM_FLUSH, 0, &fw[nfw].rr, &fw[nfw].answer);
            if (!rc)
                nfw++;
        }
        if (rc)
            *why = "a flush request could not be sent";
    }
    int e = pend_wait_all(w);
    if (e && !rc) {
        rc = e;
        *why = "a transfer of the window failed";
    }
    for (int i = 0; i < nfw; i++) {
        e = am_control_finish(fw[i].rr, &fw[i].answer);
        if (e && !rc) {
            rc = e;
            *why = e == MPI_ERR_RMA_RANGE ? "an operation reached outside the target's window (or attached memory)"
                                          : "an operation failed at the target";
        }
    }
    if (fw != &one)
        free(fw);
    return rc;
}

int aptus_win_fence(struct aptus_win *w, int assert, const char **why)
{
    if (w->start || w->post || w->nlocks || w->lock_all) {
        *why = "a PSCW or passive-target epoch is open on this window";
        return MPI_ERR_RMA_SYNC;
    }
    int rc = aptus_win_flush(w, -1, 0, why);
    aptus_rma_fence();
    int rc2 = aptus_barrier(w->comm);
    aptus_rma_fence();
    if (!rc && rc2) {
        rc = rc2;
        *why = "the fence's barrier failed";
    }
    w->fence = !(assert &MPI_MODE_NOSUCCEED);
    return rc;
}

int aptus_win_post(struct aptus_win *w, const int *ranks, int n, int assert, const char **why)
{
    if (w->post) {
        *why = "an exposure epoch is already open (MPI_Win_post without MPI_Win_wait)";
        return MPI_ERR_RMA_SYNC;
    }
    int *l = malloc(sizeof *l * (size_t)(n ? n : 1));
    if (!l)
        return MPI_ERR_NO_MEM;
    memcpy(l, ranks, sizeof *l * (size_t)n);
    w->post = l;
    w->npost = n;
    w->fence = 0;
    aptus_rma_fence();
    if (assert & MPI_MODE_NOCHECK)
        return 0;
    static const int token = 1;
    for (int i = 0; i < n; i++) {
        struct aptus_request *r;
        int rc = aptus_coll_isend_on(w->comm, w->comm->ctx, &token, sizeof token, ranks[i], TAG_POST, &r);
        if (!rc)
            rc = pend_add(w, r, NULL);
        if (rc) {
            *why = "cannot send the post notices";
            return rc;
        }
    }
    return 0;
}

int aptus_win_start(struct aptus_win *w, const int *ranks, int n, int assert, const char **why)
{
    if (w->start) {
        *why = "an access epoch is already open (MPI_Win_start without MPI_Win_complete)";
        return MPI_ERR_RMA_SYNC;
    }
    if (w->nlocks || w->lock_all) {
        *why = "a passive-target epoch is open on this window";
        return MPI_ERR_RMA_SYNC;
    }
    int *l = malloc(sizeof *l * (size_t)(n ? n : 1));
    if (!l)
        return MPI_ERR_NO_MEM;
    memcpy(l, ranks, sizeof *l * (size_t)n);
    if (!(assert &MPI_MODE_NOCHECK)) {
        /* wait for each target's post */
        int token[64], *tk = n <= 64 ? token : malloc(sizeof *tk * (size_t)n);
        struct aptus_request *rr[64], **rq = n <= 64 ? rr : malloc(sizeof *rq * (size_t)n);
        int rc = tk && rq ? 0 : MPI_ERR_NO_MEM;
        int k = 0;
        for (; k < n && !rc; k++)
            rc = aptus_coll_irecv_on(w->comm, w->comm->ctx, &tk[k], sizeof tk[k], ranks[k], TAG_POST, &rq[k]);
        for (int i = 0; i < k - (rc ? 1 : 0); i++) {
            aptus_wait(rq[i]);
            aptus_req_free(rq[i]);
        }
        if (tk != token)
            free(tk);
        if (rq != rr)
            free(rq);
        if (rc) {
            free(l);
            *why = "cannot receive the post notices";
            return rc;
        }
    }
    aptus_rma_fence();
    w->start = l;
    w->nstart = n;
    w->fence = 0;
    return 0;
}

int aptus_win_complete(struct aptus_win *w, const char **why)
{
    if (!w->start) {
        *why = "no access epoch is open (MPI_Win_complete without MPI_Win_start)";
        return MPI_ERR_RMA_SYNC;
    }
    int rc = settle_direct(w);
    aptus_rma_fence();
    for (int i = 0; i < w->nstart && !rc; i++) {
        am_dirty_set(w, &w->t[w->start[i]], 0);
        rc = am_control(w, w->start[i], AM_COMPLETE, 0, 0);
    }
    int rc2 = pend_wait_all(w);
    if (!rc)
        rc = rc2;
    free(w->start);
    w->start = NULL;
    w->nstart = 0;
    if (rc)
        *why = "cannot tell the targets that the epoch is complete";
    return rc;
}

int aptus_win_wait(struct aptus_win *w, int test, int *flag, const char **why)
{
    if (!w->post) {
        *why = test ? "no exposure epoch is open (MPI_Win_test without MPI_Win_post)"
                    : "no exposure epoch is open (MPI_Win_wait without MPI_Win_post)";
        return MPI_ERR_RMA_SYNC;
    }
    unsigned idle = 0;
    while (w->completes < w->npost) {
        if (test) {
            aptus_progress();
            if (w->completes < w->npost) {
                *flag = 0;
                return 0;
            }
            break;
        }
        aptus_wait_step(&idle);
    }
    w->completes -= w->npost;
    free(w->post);
    w->post = NULL;
    w->npost = 0;
    int rc = pend_wait_all(w); /* the post notices */
    aptus_rma_fence();
    if (flag)
        *flag = 1;
    if (rc)
        *why = "a post notice failed";
    return rc;
}

static int lock_one(struct aptus_win *w, int type, int target)
{
    struct rma_target *t = &w->t[target];
    if (t->path == RMA_PATH_AM)
        return am_control(w, target, AM_LOCK, type, 1);
    /* A release is a store in the segment: nothing rings a sleeping waiter's doorbell, so the
     * wait never sleeps (aptus_wait_step could); it progresses, and yields the core to the holder
     * after a while (it may share it). */
    unsigned spins = 0;
    while (!lock_try(&t->ctrl->lock, type)) {
        aptus_lock_pause();
        aptus_progress();
        if (++spins > 64)
            sched_yield();
        else
            aptus_cpu_relax();
    }
    return 0;
}

static int unlock_one(struct aptus_win *w, int type, int target)
{
    struct rma_target *t = &w->t[target];
    if (t->path == RMA_PATH_AM) {
        am_dirty_set(w, t, 0);
        return am_control(w, target, AM_UNLOCK, type, 1);
    }
    aptus_rma_fence();
    lock_release(&t->ctrl->lock, type);
    /* lock requests of other nodes wait in the target's agent: when this rank is the target, let
     * it grant one now, before this rank can take the lock again (else a rank that locks its own
     * window in a loop starves them) */
    if (w->spans && target == w->rank)
        aptus_progress();
    return 0;
}

int aptus_win_lock(struct aptus_win *w, int type, int target, int assert, const char **why)
{
    struct rma_target *t = &w->t[target];
    if (t->lock || w->lock_all) {
        *why = "this process already holds a lock on the target (MPI_Win_lock twice without MPI_Win_unlock)";
        return MPI_ERR_RMA_SYNC;
    }
    if (w->start) {
        *why = "an access epoch (MPI_Win_start) is open on this window";
        return MPI_ERR_RMA_SYNC;
    }
    int lt = type == MPI_LOCK_EXCLUSIVE ? RL_EXCL : RL_SHARED;
    int rc = assert &MPI_MODE_NOCHECK ? 0 : lock_one(w, lt, target);
    if (rc) {
        *why = "the target could not grant the lock";
        return rc;
    }
    t->lock = (uint8_t)(lt | (assert &MPI_MODE_NOCHECK ? 4 : 0));
    w->nlocks++;
    w->fence = 0;
    return 0;
}

int aptus_win_unlock(struct aptus_win *w, int target, const char **why)
{
    struct rma_target *t = &w->t[target];
    if (!t->lock) {
        *why = w->lock_all ? "the target was locked by MPI_Win_lock_all (use MPI_Win_unlock_all)"
                           : "the target is not locked by this process (MPI_Win_unlock without MPI_Win_lock)";
        return MPI_ERR_RMA_SYNC;
    }
    int rc = settle_direct(w);
    int nocheck = t->lock & 4;
    if (nocheck) {
        if (t->am_dirty && !rc)
            rc = aptus_win_flush(w, target, 0, why);
    } else {
        int e = unlock_one(w, t->lock & 3, target);
        if (!rc)
            rc = e;
    }
    int e = pend_wait_all(w);
    if (!rc)
        rc = e;
    t->lock = 0;
    w->nlocks--;
    if (rc && !*why)
        *why = "an operation of the epoch failed";
    return rc;
}

int aptus_win_lock_all(struct aptus_win *w, int assert, const char **why)
{
    if (w->lock_all || w->nlocks) {
        *why = "a passive-target epoch is already open on this window";
        return MPI_ERR_RMA_SYNC;
    }
    if (w->start) {
        *why = "an access epoch (MPI_Win_start) is open on this window";
        return MPI_ERR_RMA_SYNC;
    }
    if (!(assert &MPI_MODE_NOCHECK))
        for (int r = 0; r < w->size; r++) {
            int rc = lock_one(w, RL_SHARED, r);
            if (rc) {
                for (int q = 0; q < r; q++)
                    unlock_one(w, RL_SHARED, q);
                *why = "a target could not grant the lock";
                return rc;
            }
        }
    w->lock_all = assert &MPI_MODE_NOCHECK ? 2 : 1;
    w->fence = 0;
    return 0;
}

int aptus_win_unlock_all(struct aptus_win *w, const char **why)
{
    if (!w->lock_all) {
        *why = "no MPI_Win_lock_all epoch is open";
        return MPI_ERR_RMA_SYNC;
    }
    int rc = settle_direct(w);
    for (int r = 0; r < w->size; r++) {
        int e = 0;
        if (w->lock_all == 1)
            e = unlock_one(w, RL_SHARED, r);
        else if (w->t[r].am_dirty)
            e = aptus_win_flush(w, r, 0, why);
        if (!rc)
            rc = e;
    }
    int e = pend_wait_all(w);
    if (!rc)
        rc = e;
    w->lock_all = 0;
    if (rc)
        *why = "an operation of the epoch failed";
    return rc;
}

/* ---- communication -------------------------------------------------------------------------- */

static int epoch_ok(const struct aptus_win *w, int target)
{
    return w->fence || w->lock_all || w->t[target].lock || (w->start && in_list(w->start, w->nstart, target));
}

/* Packed form of (buf, count, dt): the buffer itself when contiguous (*tmp NULL), else a copy. */
static const char *packed_of(const void *buf, size_t count, const struct aptus_dtype *dt, char **tmp)
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

/* Active message: header, ranges, data (packed), sent; replies expected into (rbuf, rcount, rdt). */
static int am_op(struct aptus_win *w, const struct rma_op *op, int kind, MPI_Datatype basic, const struct rma_seg *s,
                 size_t ns, const char *data, size_t dbytes, const char *data2, size_t d2bytes)
{
    size_t len = sizeof(struct rma_hdr) + ns * sizeof *s + dbytes + d2bytes;
    struct rma_hdr h = { (uint8_t)kind, 0, (uint16_t)op->op_id, 0, (uint64_t)(uintptr_t)basic, ns, dbytes + d2bytes };
    int rc = 0;
    /* a put or accumulate needs a flush round trip to be known complete, and goes in the
     * target's batch; a get, fetch or compare-and-swap is complete when its answer has come
     * (flush waits for it), and goes at once */
    int batched = kind == AM_PUT || kind == AM_ACC;
    if (!batched) {
        h.reply_tag = reply_tag(w);
        size_t bytes = 0;
        for (size_t i = 0; i < ns; i++)
            bytes += s[i].len;
        rc = am_expect(w, op->target, h.reply_tag, op->rbuf, bytes, op->rdt, op->rcount, NULL);
        if (rc)
            return rc;
    }
    char *m = batched ? batch_room(w, op->target, len, &rc) : NULL;
    if (rc)
        return rc;
    int own = !m; /* a message of its own */
    if (own && !(m = malloc(len)))
        return MPI_ERR_NO_MEM;
    memcpy(m, &h, sizeof h);
    if (ns)
        memcpy(m + sizeof h, s, ns * sizeof *s);
    if (dbytes)
        memcpy(m + sizeof h + ns * sizeof *s, data, dbytes);
    if (d2bytes)
        memcpy(m + sizeof h + ns * sizeof *s + dbytes, data2, d2bytes);
    if (batched)
        am_dirty_set(w, &w->t[op->target], 1);
    return own ? am_send(w, op->target, m, len, 1) : 0;
}

/* A put or get to a target of the node, handed to the copy agent if it takes it: the ranges
 * become addresses (in this process, or in the target's for Cross Memory Attach) and the job
 * owns them (*s is then NULL). */
static int lb_handover(struct aptus_win *w, const struct rma_target *t, char *buf, size_t count,
                       const struct aptus_dtype *dt, struct rma_seg **s, size_t ns, size_t len, int write)
{
    if (!aptus_config.rma_loopback || len < aptus_config.rma_loopback_min)
        return 0;
    int other = t->path == RMA_PATH_CMA && t->pid != (int)aptus_rt.pid;
    for (size_t i = 0; i < ns; i++)
        (*s)[i].off = other ? (w->flavor == MPI_WIN_FLAVOR_DYNAMIC ? 0 : t->base) + (*s)[i].off
                            : (uint64_t)(uintptr_t)tgt_ptr(w, t, (*s)[i].off);
    struct lb_job j = { dt->contig ? buf + dt->true_lb : buf,
                        dt->contig ? NULL : dt,
                        count,
                        len,
                        *s,
                        { 0, 0 },
                        ns,
                        other ? t->pid : 0,
                        write,
                        NULL };
    if (lb_take(w, &j)) {
        *s = NULL;
        return 1;
    }
    /* not taken: the ranges back to offsets */
    for (size_t i = 0; i < ns; i++)
        (*s)[i].off = other ? (*s)[i].off - (w->flavor == MPI_WIN_FLAVOR_DYNAMIC ? 0 : t->base)
                            : (*s)[i].off - (uint64_t)(uintptr_t)tgt_ptr(w, t, 0);
    return 0;
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
    struct rma_seg *s;
    size_t ns;
    int rc = build_segs(op->tdt, op->tcount, start, &s, &ns);
    if (rc) {
        *why = "out of memory";
        return rc;
    }
    /* ranges: known for every target of a static window, for node-local targets of a dynamic one */
    int in = w->flavor == MPI_WIN_FLAVOR_DYNAMIC ? (t->path == RMA_PATH_AM || segs_attached(s, ns, t->ctrl))
                                                 : segs_in(s, ns, t->size);
    int via_agent = 0; /* a dynamic target whose regions outgrew its table: its agent checks */
    if (!in && w->flavor == MPI_WIN_FLAVOR_DYNAMIC && __atomic_load_n(&t->ctrl->overflow, __ATOMIC_ACQUIRE))
        in = via_agent = 1;
    if (!in) {
        free(s);
        *why = w->flavor == MPI_WIN_FLAVOR_DYNAMIC ? "the target range is not inside memory attached at the target"
                                                   : "the target range reaches outside the target's window";
        return MPI_ERR_RMA_RANGE;
    }
    size_t tbytes = op->tdt->size * op->tcount;
    if (!tbytes) { /* nothing moves (the epoch and the target were checked) */
        free(s);
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
        rdma_op(w, t, op, s, ns, tbytes, w->flavor == MPI_WIN_FLAVOR_DYNAMIC && tbytes >= w->dyn_check_min, &rc)) {
        st_ops[RMA_PATH_RDMA]++;
        w->rdma_dirty_any = 1;
        free(s);
        if (!rc && req)
            rc = pend_wait_all(w); /* a request-based operation completes here */
        if (rc) {
            *why = "an RDMA transfer failed";
            return rc;
        }
        goto done;
    }
    st_ops[am ? RMA_PATH_AM : t->path]++;
    switch (op->kind) {
    case RMA_PUT:
    case RMA_ACC: {
        if (op->kind == RMA_PUT && !am && lb_handover(w, t, (char *)op->obuf, op->ocount, op->odt, &s, ns, tbytes, 1))
            break;
        const char *data = packed_of(op->obuf, op->ocount, op->odt, &tmp);
        if (!data && tbytes) {
            rc = MPI_ERR_NO_MEM;
            break;
        }
        if (am)
            rc = am_op(w, op, op->kind == RMA_PUT ? AM_PUT : AM_ACC, basic, s, ns, data, tbytes, NULL, 0);
        else if (op->kind == RMA_PUT)
            rc = move_direct(w, t, (char *)data, s, ns, 1);
        else
            rc = acc_direct(w, t, op->op_id, basic, data, NULL, s, ns);
        break;
    }
    case RMA_GET:
    case RMA_GACC: {
        const char *data = NULL;
        if (op->kind == RMA_GACC && op->op_id != APTUS_OP_NO_OP) {
            data = packed_of(op->obuf, op->ocount, op->odt, &tmp);
            if (!data && tbytes) {
                rc = MPI_ERR_NO_MEM;
                break;
            }
        }
        if (am) {
            rc = am_op(w, op, op->kind == RMA_GET ? AM_GET : AM_GACC, basic, s, ns, data, data ? tbytes : 0, NULL, 0);
            break;
        }
        int contig = op->rdt->contig;
        if (op->kind == RMA_GET && lb_handover(w, t, op->rbuf, op->rcount, op->rdt, &s, ns, tbytes, 0))
            break;
        char *out = contig ? (char *)op->rbuf + op->rdt->true_lb : malloc(tbytes ? tbytes : 1);
        if (!out) {
            rc = MPI_ERR_NO_MEM;
            break;
        }
        if (op->kind == RMA_GET)
            rc = move_direct(w, t, out, s, ns, 0);
        else
            rc = acc_direct(w, t, op->op_id, basic, data, out, s, ns);
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
            rc = am_op(w, op, AM_CAS, basic, s, ns, op->obuf, es, op->cbuf, es);
        else
            rc = cas_direct(w, t, es, op->obuf, op->cbuf, op->rbuf, s);
        break;
    }
    }
    free(tmp);
    free(s);
    if (rc) {
        *why = rc == MPI_ERR_RMA_RANGE ? "the target's memory could not be reached there"
               : rc == MPI_ERR_NO_MEM  ? "out of memory"
                                       : "the transfer failed";
        return rc;
    }
    if (req && (am || __atomic_load_n(&w->lb_pending, __ATOMIC_ACQUIRE))) {
        /* request-based operations over active messages (or handed to the copy agent) complete
         * here */
        rc = pend_wait_all(w);
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

/* ---- fast paths (the API calls them first; 0 means: take the general path) ----------------- */

/* Whether target t of w can be reached now by load/store without any check left: an epoch
 * that needs no bookkeeping per operation is open to it. */
static inline struct rma_target *fast_target(struct aptus_win *w, int target)
{
    if ((unsigned)target >= (unsigned)w->size)
        return NULL;
    struct rma_target *t = &w->t[target];
    if (t->path != RMA_PATH_SHARED || !(w->lock_all || t->lock || w->fence))
        return NULL;
    return t;
}

int aptus_rma_fast_putget(struct aptus_win *w, int put, void *obuf, MPI_Count ocount, MPI_Datatype odt, int target,
                          MPI_Aint disp, MPI_Count tcount, MPI_Datatype tdt)
{
    if (w->spans)
        return 0;
    struct rma_target *t = fast_target(w, target);
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
    st_ops[RMA_PATH_SHARED]++;
    if (bytes >= aptus_config.rma_loopback_min && aptus_config.rma_loopback &&
        lb_take_bytes(w, obuf, (uint64_t)(uintptr_t)(t->local + off), bytes, 0, put))
        return 1;
    if (put)
        memcpy(t->local + off, obuf, bytes);
    else
        memcpy(obuf, t->local + off, bytes);
    return 1;
}

int aptus_rma_fast_fop(struct aptus_win *w, const void *obuf, void *rbuf, MPI_Datatype dt, int target, MPI_Aint disp,
                       int op_id)
{
    if (w->spans)
        return 0;
    struct rma_target *t = fast_target(w, target);
    if (!t || disp < 0 || !APTUS_IS_PREDEF(dt) || !obuf || !rbuf)
        return 0;
    const struct aptus_dtype *d = aptus_dtype_predef[(uintptr_t)dt];
    if (!d || !d->basic || d->size != (size_t)d->extent)
        return 0;
    size_t es = d->size;
    uint64_t off = (uint64_t)disp * (uint64_t)t->disp_unit;
    if (off > t->size || es > t->size - off || (uint64_t)disp > (UINT64_MAX >> 8) / (uint64_t)t->disp_unit)
        return 0;
    char *p = t->local + off;
    if (!aptus_op_allowed(op_id, dt, 1))
        return 0;
    st_ops[RMA_PATH_SHARED]++;
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
    struct rma_target *t = fast_target(w, target);
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
    st_ops[RMA_PATH_SHARED]++;
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

/* Nothing to wait for: no active message in flight and none unflushed. */
int aptus_rma_flush_idle(const struct aptus_win *w)
{
    return !w->spans && !w->npend && !w->ndirty && !w->rdma_dirty_any &&
           !__atomic_load_n(&w->lb_pending, __ATOMIC_ACQUIRE);
}
