/* Internals shared by the files of the one-sided layer (not used outside src/rma/; rma.h is the
 * layer's interface). One job per file:
 *   window.c      the window object: creation in the four flavours, the node segment, freeing,
 *                 shared queries; the layer's set-up, clean-up and statistics
 *   ops.c         the operations (put, get, accumulates, compare-and-swap): epoch and range
 *                 checks, the choice of path; the load/store fast path of put and get
 *   move.c        moving bytes between a packed buffer and a target's ranges: load/store and
 *                 Cross Memory Attach
 *   accumulate.c  accumulates and atomics: the accumulate lock, the element-wise kernels, the
 *                 fast paths of fetch-and-op and accumulate
 *   active.c      active target synchronization: fence, post-start-complete-wait
 *   passive.c     passive target synchronization: lock words, lock/unlock (all), flush
 *   am.c          active messages, origin side: pending requests, per-target batches, control
 *                 messages and their answers
 *   agent.c       the target's agent: applies other ranks' active messages, grants locks
 *   defer.c       small puts and accumulates to a node target reached by Cross Memory Attach,
 *                 kept for the end of the epoch: handed to the target's agent or written at once
 *   dynamic.c     dynamic windows: attach/detach and the table of regions in the control slot;
 *                 the origin's copy of a table read by RDMA
 *   rdma.c        RDMA over the RC channel: registration, writes and reads, their completion
 *   loopback.c    the copy agent (APTUS_RMA_LOOPBACK): a thread that runs node-local copies */
#ifndef APTUS_RMA_RMA_INTERNAL_H
#define APTUS_RMA_RMA_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "rma/rma.h"

struct aptus_channel;
struct aptus_ep;
struct iovec;

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
    uint64_t off, len; /* address and length (first: `rma_covered` reads them at a stride) */
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

/* A rank's slot in the segment: its control block (the part a dynamic window registers for
 * RDMA), then what the deferred operations to targets reached by Cross Memory Attach use
 * (defer.c): the owner's heartbeat, and the claim words of its hand-overs as an origin. */
#define RMA_CLAIMS 16
struct rma_slot {
    struct rma_ctrl c;
    _Alignas(64) uint64_t beat;              /* the owner's agent passes: it moves while the owner runs MPI */
    _Alignas(64) uint64_t fence_offered;     /* batches handed to the owner in fences, by all origins */
    _Alignas(64) uint64_t claim[RMA_CLAIMS]; /* seq << 2 | RMA_CLAIM_*, one per hand-over in flight */
};
enum { RMA_CLAIM_OFFERED = 0, RMA_CLAIM_TAKEN = 1, RMA_CLAIM_DONE = 2, RMA_CLAIM_ORIGIN = 3 };
#define RMA_CTRL_STRIDE (((sizeof(struct rma_slot) + 63) / 64) * 64)

static inline struct rma_slot *rma_slot_of(struct rma_ctrl *c)
{
    return (struct rma_slot *)(void *)c;
}

/* internal lock codes (rma_target.lock) */
enum { RL_SHARED = 1, RL_EXCL = 2 };

/* Tags on the window's communicator (point-to-point context: only the library uses it). */
enum { TAG_REQ = 1, TAG_POST = 2, TAG_REPLY0 = 16 };
#define TAG_REPLY_SPAN 0x100000u

/* active-message kinds; AM_NOP (0) is the unused first header of a batch of deferred operations,
 * AM_CLAIM the same header when the batch is handed over (defer.c) */
enum { AM_NOP = 0, AM_PUT, AM_GET, AM_ACC, AM_GACC, AM_CAS, AM_LOCK, AM_UNLOCK, AM_FLUSH, AM_COMPLETE, AM_CLAIM };

struct rma_hdr {
    uint8_t kind;
    uint8_t lock; /* RL_* (lock, unlock) */
    uint16_t op_id;
    uint32_t reply_tag;
    uint64_t basic; /* predefined datatype of the elements (accumulates) */
    uint64_t nsegs; /* (offset, length) pairs that follow, then the data */
    uint64_t bytes; /* data bytes after the pairs */
};

/* Messages to an agent may come in batches (am.c) of at most RMA_BATCH_MAX bytes: each starts
 * at a multiple of 8 bytes. */
#define RMA_PAD8(n)   (((n) + 7u) & ~(size_t)7u)
#define RMA_BATCH_MAX 4096u
#define RMA_SPARES    4 /* batch buffers a window keeps for reuse (aptus_win.spare) */

struct rma_seg {
    uint64_t off, len;
};

struct rma_pend {
    struct aptus_request *req;
    void *tmp;
    int batch; /* tmp is a batch buffer: kept for the next batch (am.c) */
};

/* How a synchronization settles the deferred operations: a flush or unlock hands a target's batch
 * over when the target is seen polling, a fence always (the target is in its fence too). */
enum { RMA_SETTLE_FLUSH, RMA_SETTLE_FENCE };

/* ---- statistics (window.c; printed by aptus_rma_stats_print) ---------------------------------- */

struct rma_stats {
    uint64_t ops[5];    /* operations by path (RMA_PATH_*) */
    uint64_t agent;     /* operations the agent applied for other ranks */
    uint64_t windows;   /* windows made */
    uint64_t lb_jobs;   /* copies run by the copy agent */
    uint64_t dyn_reads; /* dynamic windows: checks of a region table by RDMA */
    /* small operations to targets reached by Cross Memory Attach, deferred to the epoch's end
     * (defer.c): how many, and how their batches ended */
    uint64_t deferred, with_complete, handed, taken_back, by_origin;
};
extern struct rma_stats rma_stats;

/* This rank's control slot. */
static inline struct rma_ctrl *rma_my_ctrl(struct aptus_win *w)
{
    return w->t[w->rank].ctrl;
}

/* ---- ops.c ----------------------------------------------------------------------------------- */

/* Whether every range lies in [0, size). */
int rma_segs_in(const struct rma_seg *s, size_t n, uint64_t size);
/* Packed form of (buf, count, dt): the buffer itself when contiguous (*tmp NULL), else a copy. */
const char *rma_packed_of(const void *buf, size_t count, const struct aptus_dtype *dt, char **tmp);

/* Whether target t of w can be reached now by load/store without any check left: an epoch
 * that needs no bookkeeping per operation is open to it. */
static inline struct rma_target *rma_fast_target(struct aptus_win *w, int target)
{
    if ((unsigned)target >= (unsigned)w->size)
        return NULL;
    struct rma_target *t = &w->t[target];
    if (t->path != RMA_PATH_SHARED || !(w->lock_all || t->lock || w->fence))
        return NULL;
    return t;
}

/* ---- move.c ---------------------------------------------------------------------------------- */

/* Cross Memory Attach between a contiguous local buffer and the ranges (addresses) of process
 * pid: 0, or -1 when the kernel refused. */
int rma_cma_move(int pid, char *local, const struct rma_seg *s, size_t n, int write);
/* The same between a local and a remote iovec list (of as many bytes; used as scratch). */
int rma_cma_iov(int pid, struct iovec *l, size_t nl, struct iovec *r, size_t nr, int write);
/* Where a target's ranges are in this process: the pointer for offset off. */
char *rma_tgt_ptr(const struct aptus_win *w, const struct rma_target *t, uint64_t off);
/* Data between a packed buffer and the target's ranges: write (put) or read (get). */
int rma_move_direct(const struct aptus_win *w, const struct rma_target *t, char *packed, const struct rma_seg *s,
                    size_t n, int write);

/* ---- accumulate.c ---------------------------------------------------------------------------- */

/* Accumulate into the target's ranges from packed data `in` (NULL for MPI_NO_OP), the old
 * values to `old` (packed, or NULL). */
int rma_acc_direct(const struct aptus_win *w, const struct rma_target *t, int op_id, MPI_Datatype basic, const char *in,
                   char *old, const struct rma_seg *s, size_t n);
/* Compare-and-swap of one element of es bytes at the target's range s. */
int rma_cas_direct(const struct aptus_win *w, const struct rma_target *t, size_t es, const char *val, const char *cmp,
                   char *old, const struct rma_seg *s);

/* ---- passive.c ------------------------------------------------------------------------------- */

/* A passive-target lock word: take (1 when taken) and release, type RL_SHARED or RL_EXCL. */
int rma_lock_try(uint32_t *word, int type);
void rma_lock_release(uint32_t *word, int type);
/* Completes the operations to target (-1: all; local: locally only); mode RMA_SETTLE_* (the
 * fence's or a flush's) says how the deferred ones are settled (defer.c). */
int rma_flush(struct aptus_win *w, int target, int local, int mode, const char **why);

/* ---- am.c ------------------------------------------------------------------------------------ */

int rma_pend_add(struct aptus_win *w, struct aptus_request *r, void *tmp);
/* Completes what the origin moves itself or hands to the copy agent or to RDMA. */
int rma_settle_direct(struct aptus_win *w);
/* Completes every pending request of the origin side (batches sent first); the first error. */
int rma_pend_wait_all(struct aptus_win *w);
/* A control message (AM_*) to a target, riding at the end of its batch; with rr, the receive
 * of its answer (an error class, into *answer) is posted and returned there. */
int rma_am_control_start(struct aptus_win *w, int target, int kind, int lock, struct aptus_request **rr, int *answer);
int rma_am_control_finish(struct aptus_request *rr, const int *answer);
int rma_am_control(struct aptus_win *w, int target, int kind, int lock, int wait_reply);
/* Room for a message of len bytes at the end of the target's batch (the batch is sent first when
 * it would not fit); NULL with *rc 0 when it is too large for a batch, with *rc set on an error. */
char *rma_batch_room(struct aptus_win *w, int target, size_t len, int *rc);
/* Sends the target's batch. */
int rma_batch_send(struct aptus_win *w, int target);
/* The count of targets with active messages not yet flushed follows their flags. */
void rma_am_dirty_set(struct aptus_win *w, struct rma_target *t, int dirty);
/* An operation as an active message (batched when it wants no answer). */
int rma_am_op(struct aptus_win *w, const struct rma_op *op, int kind, MPI_Datatype basic, const struct rma_seg *s,
              size_t ns, const char *data, size_t dbytes, const char *data2, size_t d2bytes);

/* ---- agent.c --------------------------------------------------------------------------------- */

/* Starts the window's agent (a background task): 0 or MPI_ERR_NO_MEM. */
int rma_agent_start(struct aptus_win *w);
/* The window is being freed: its agent ends at its next pass. */
void rma_agent_stop(struct aptus_win *w);
/* MPI_Finalize: the agents of windows the program did not free end. */
void rma_agents_stop_all(void);

/* ---- dynamic.c ------------------------------------------------------------------------------- */

/* Whether [off, off + len) is covered by attached regions (base[k], size[k] at stride bytes). */
int rma_covered(uint64_t off, uint64_t len, const uint64_t *base, const uint64_t *size, size_t stride, uint32_t nr);
/* Whether every range lies inside memory attached at the target (its control slot's table). */
int rma_segs_attached(const struct rma_seg *s, size_t n, const struct rma_ctrl *c);
/* The registered region of an origin's copy of a target's table that holds address pos; -1. */
int rma_dyn_at(const struct rma_dyn *d, uint64_t pos);
/* Whether a dynamic window's ranges on another node can go by RDMA (after a check of the
 * target's table when `check`). */
int rma_dyn_ready(struct aptus_win *w, struct rma_target *t, struct aptus_channel *ch, struct aptus_ep *ep,
                  const struct rma_seg *s, size_t n, int check);

/* ---- rdma.c ---------------------------------------------------------------------------------- */

/* The RC channel when it can serve RDMA, else NULL. */
struct aptus_channel *rma_rdma_channel(void);
/* Creation: the thresholds, and for a window spanning nodes its registration and the exchange of
 * keys (collective). */
int rma_rdma_setup(struct aptus_win *w, int nodes_many, MPI_Aint size);
/* Freeing: the operations in flight are waited for, the registration dropped. */
void rma_rdma_teardown(struct aptus_win *w);
/* Waits for the RDMA operations in flight and the placement of the writes (target -1: all). */
int rma_rdma_wait(struct aptus_win *w, int target);
int rma_rdma_read_now(struct rma_target *t, struct aptus_channel *ch, struct aptus_ep *ep, void *buf, size_t len,
                      size_t off);
/* A put or get by RDMA: 1 when done that way (*rc its result), 0 when not reachable so. */
int rma_rdma_op(struct aptus_win *w, struct rma_target *t, const struct rma_op *op, const struct rma_seg *s, size_t ns,
                size_t bytes, int check, int *rc);

/* ---- defer.c --------------------------------------------------------------------------------- */

/* Whether a put or accumulate of `bytes` in ns ranges to t is deferred to the epoch's end. */
int rma_defer_ok(const struct aptus_win *w, const struct rma_target *t, size_t ns, size_t bytes);
/* Defers it: into the target's batch (an AM_PUT or AM_ACC message). */
int rma_defer_op(struct aptus_win *w, const struct rma_op *op, int kind, MPI_Datatype basic, const struct rma_seg *s,
                 size_t ns, const char *data, size_t bytes);
/* Completes the deferred operations to target (-1: every target): handed over to its agent, or
 * written by this process. */
int rma_defer_settle(struct aptus_win *w, int target, int mode);
/* The fence after its barrier: waits until this rank applied every batch handed to it in fences
 * and its targets applied those it handed to them. */
void rma_defer_fence_end(struct aptus_win *w);
/* MPI_Win_free, before its barrier: a batch taken back may still be on its way to its target;
 * such a target answers a flush request (its agent takes messages in order), so that no message
 * outlives the window (its context may serve another communicator next). */
int rma_defer_drain(struct aptus_win *w);
/* Writes the target's deferred operations itself (before an operation that must follow them). */
int rma_defer_write(struct aptus_win *w, int target);
/* The agent: a batch handed over by origin (its AM_CLAIM header at h): 1 when this rank won it
 * (then it applies the rest and calls rma_defer_applied), 0 when the origin took it back. */
int rma_defer_claim(struct aptus_win *w, int origin, const struct rma_hdr *h);
void rma_defer_applied(struct aptus_win *w, int origin, const struct rma_hdr *h);

/* ---- loopback.c ------------------------------------------------------------------------------ */

/* Waits until the copy agent has run every copy of the window. */
void rma_lb_drain(struct aptus_win *w);
/* Stops the copy agent's thread (MPI_Finalize). */
void rma_lb_stop(void);
/* One contiguous copy handed to the copy agent (the fast path's): 1 when taken. */
int rma_lb_take_bytes(struct aptus_win *w, char *local, uint64_t remote, size_t len, int pid, int write);
/* A put or get to a target of the node handed to the copy agent: 1 when taken (a list of several
 * ranges is the job's then: *s NULL). */
int rma_lb_handover(struct aptus_win *w, const struct rma_target *t, char *buf, size_t count,
                    const struct aptus_dtype *dt, struct rma_seg **s, size_t ns, size_t len, int write);

#endif
