/* One-sided communication (MPI standard, chapter 12): windows, their epochs, and the movement
 * of data between an origin and a target.
 *
 * How a target is reached (per window and target, decided when the window is made):
 *   - on this node, window memory in the node's segment (MPI_Win_allocate, MPI_Win_allocate_shared):
 *     the origin loads and stores it itself ("shared");
 *   - on this node, memory of the target process (MPI_Win_create, MPI_Win_create_dynamic): the
 *     origin copies with Cross Memory Attach, process_vm_writev/readv ("cma");
 *   - otherwise (another node, or cross-memory copies refused): active messages over the
 *     message layer on the window's own communicator, applied by the target's agent, a passive
 *     background task of the progress engine ("am").
 * Every window has a segment per node (one per node of its group) whose control area holds,
 * for each rank of the node, the passive-target lock word, the accumulate lock and the regions
 * attached to a dynamic window; node-local origins take them directly, the target's agent takes
 * them for origins on other nodes.
 *
 * Accumulates are atomic per basic element: elements of 1, 2, 4 or 8 bytes in the node segment
 * are changed with compare-and-swap loops; every other case (larger elements, memory reached by
 * Cross Memory Attach, the agent's) under the target's accumulate lock. The choice depends on
 * the window and the element size only, so every origin makes the same one for a location. */
#ifndef APTUS_RMA_RMA_H
#define APTUS_RMA_RMA_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "core/objects.h"

#define APTUS_MAGIC_WIN 0x57696e5fu

struct aptus_attr;
struct aptus_request;
struct rma_ctrl;
struct rma_pend;
struct rma_agent;
struct rma_rdma;
struct rma_seg;
struct rma_region;
struct rma_dyn;
struct aptus_memh;

enum { RMA_PATH_SHARED = 1, RMA_PATH_CMA, RMA_PATH_AM, RMA_PATH_RDMA };

/* What a rank knows of each target of a window. */
struct rma_target {
    uint64_t base; /* window base in the target's address space (0 for dynamic windows) */
    uint64_t size;
    int64_t disp_unit;
    int world;                    /* world rank */
    int pid;                      /* for Cross Memory Attach */
    int path;                     /* RMA_PATH_* */
    char *local;                  /* the target's memory in this process (RMA_PATH_SHARED), else NULL */
    struct rma_ctrl *ctrl;        /* its control slot (same node), else NULL */
    uint8_t lock;                 /* lock this process holds: RL_SHARED or RL_EXCL (rma_internal.h), +4 with NOCHECK */
    uint8_t am_dirty;             /* active messages sent since the last flush */
    uint8_t rdma_ok;              /* its window is registered with the RC channel (rdma_addr, rdma_key) */
    uint8_t rdma_dirty;           /* RDMA writes since the last flush */
    uint64_t rdma_addr, rdma_key; /* dynamic windows: the target's control slot (its region table) */
    struct rma_dyn *dyn;          /* dynamic window on another node: its region table as last read */
    char *batch;                  /* active messages gathered for it, not sent yet (am.c, "batches") */
    uint32_t blen;
    uint8_t deferred;   /* the batch holds operations deferred to the epoch's end (defer.c) */
    uint8_t handed_ok;  /* the last batch handed to it was applied by its agent */
    uint8_t stale;      /* a batch taken back from it may still be on its way (defer.c) */
    uint64_t beat_seen; /* its heartbeat when last looked at */
};

struct aptus_win {
    uint32_t magic;
    struct aptus_comm *comm; /* private copy of the creating communicator (agent and control) */
    int rank, size;
    int flavor; /* MPI_WIN_FLAVOR_* */
    int model;  /* MPI_WIN_UNIFIED */
    void *base;
    MPI_Aint wsize;
    MPI_Aint disp_unit;
    struct rma_target *t;
    /* the node segment */
    char *seg;
    size_t seg_size;
    int nlocal;      /* ranks of this window on this node */
    int acc_fine;    /* accumulates atomic per element by CPU atomics (mpi_accumulate_granularity <= 8) */
    int spans;       /* the window has ranks on other nodes: its calls run the progress engine (their
                        agents serve this rank's window only from progress) */
    uint32_t op_seq; /* operations started (a window spanning nodes runs progress every 16th) */
    /* epochs */
    int fence;    /* a fence epoch may be open (since a fence without MPI_MODE_NOSUCCEED) */
    int lock_all; /* MPI_Win_lock_all held */
    int nlocks;   /* targets locked by MPI_Win_lock */
    int *start;   /* PSCW access epoch: target ranks (NULL: none) */
    int nstart;
    int *post; /* PSCW exposure epoch: origin ranks (NULL: none) */
    int npost;
    int completes; /* MPI_Win_complete messages received (for MPI_Win_wait) */
    /* active messages */
    struct rma_pend *pend; /* origin side: sends and reply receives not yet complete */
    char *spare[4];        /* batch buffers for the next batches (RMA_SPARES) */
    int nspare;
    int npend, cappend;
    uint32_t reply_seq;
    int ndirty;             /* targets with am_dirty set */
    int ndeferred;          /* targets with operations deferred (rma_target.deferred) */
    int beats;              /* this rank's agent keeps the heartbeat (defer.c: created windows on a shared node) */
    uint64_t claim_seq;     /* hand-overs made (defer.c) */
    uint64_t fence_applied; /* batches handed to this rank in fences that its agent applied */
    int fence_hands;        /* claim words of this rank's hand-overs in the current fence (a bit each) */
    uint64_t fence_seq[16]; /* their sequence numbers (RMA_CLAIMS) */
    int lb_pending;         /* copies handed to the copy agent, not yet run (atomic) */
    /* RDMA over the RC channel (targets on other nodes with a connection up) */
    struct aptus_memh *memh;             /* this rank's window registration */
    struct rma_rdma *rdma;               /* operations in flight, their buffers (NULL: no RDMA) */
    int rdma_dirty_any;                  /* RDMA operations since the last complete flush */
    uint32_t sync_seq;                   /* completions waited for (rma_pend_wait_all): dynamic windows
                                            trust a region's key only within one such interval */
    size_t put_rdma_min, dyn_check_min;  /* rdma.c's rdma_put_min(), dyn_check_min(), at creation */
    const struct aptus_dtype **lb_types; /* datatypes held for those copies */
    int nlb_types, caplb_types;
    struct rma_agent *agent; /* target side */
    /* dynamic windows: this rank's attached regions (mirrored in the control slot) */
    struct rma_region *regions; /* every region, in attach order */
    int nregions, capregions;
    /* the user's view */
    MPI_Win handle;
    struct aptus_attr *attrs;
    struct aptus_errhandler *errh;
    MPI_Info info;
    int alloc_owned; /* base was allocated by the window outside the segment (free at MPI_Win_free) */
    /* what MPI_Win_get_attr points to for the predefined attributes */
    MPI_Aint attr_size;
    int attr_disp_unit, attr_flavor, attr_model;
    char name[MPI_MAX_OBJECT_NAME];
};
APTUS_OBJ_FITS(struct aptus_win, WIN);

/* A full memory barrier (a locked read-modify-write: what ThreadSanitizer understands, where
 * it rejects a bare fence). */
static inline void aptus_rma_fence(void)
{
    static int word;
    __atomic_fetch_add(&word, 0, __ATOMIC_SEQ_CST);
}

/* The window behind a handle; NULL for MPI_WIN_NULL and invalid handles. */
struct aptus_win *aptus_win_get(MPI_Win h);

/* Raises an error on the window (its error handler), returns the code. */
int aptus_win_error(struct aptus_win *w, int errclass, const char *fn, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* ---- creation (collective over comm; an MPI error class, with *why naming the problem) ---- */
/* size, disp_unit: this rank's; base: the user's memory (create) or NULL; for the allocating
 * flavors *baseptr receives the memory. */
int aptus_win_make(int flavor, void *base, MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, struct aptus_comm *comm,
                   void *baseptr, struct aptus_win **out, const char **why);
int aptus_win_free(struct aptus_win *w, const char **why);
int aptus_win_attach(struct aptus_win *w, void *base, MPI_Aint size, const char **why);
int aptus_win_detach(struct aptus_win *w, const void *base, const char **why);
/* MPI_Win_shared_query: rank MPI_PROC_NULL = the first rank with memory. */
int aptus_win_shared_query(struct aptus_win *w, int rank, MPI_Aint *size, MPI_Aint *disp_unit, void *baseptr,
                           const char **why);

/* ---- synchronization (an MPI error class; *why names the problem) ---- */
int aptus_win_fence(struct aptus_win *w, int assert, const char **why);
int aptus_win_post(struct aptus_win *w, const int *ranks, int n, int assert, const char **why);
int aptus_win_start(struct aptus_win *w, const int *ranks, int n, int assert, const char **why);
int aptus_win_complete(struct aptus_win *w, const char **why);
int aptus_win_wait(struct aptus_win *w, int test, int *flag, const char **why);
int aptus_win_lock(struct aptus_win *w, int type, int target, int assert, const char **why);
int aptus_win_unlock(struct aptus_win *w, int target, const char **why);
int aptus_win_lock_all(struct aptus_win *w, int assert, const char **why);
int aptus_win_unlock_all(struct aptus_win *w, const char **why);
/* target -1: every target; local: only local completion */
int aptus_win_flush(struct aptus_win *w, int target, int local, const char **why);

/* ---- communication ---- */
enum { RMA_PUT = 1, RMA_GET, RMA_ACC, RMA_GACC, RMA_CAS };
struct rma_op {
    int kind;
    const void *obuf; /* origin (put, acc, gacc, cas: the new value) */
    size_t ocount;
    const struct aptus_dtype *odt;
    void *rbuf; /* result (get: the origin buffer; gacc, cas) */
    size_t rcount;
    const struct aptus_dtype *rdt;
    const void *cbuf; /* compare (cas) */
    int target;
    MPI_Aint disp;
    size_t tcount;
    const struct aptus_dtype *tdt;
    int op_id; /* predefined op (acc, gacc) */
};
/* Checks the epoch and the range, then moves the data. With req, the operation's request. */
int aptus_rma_op(struct aptus_win *w, const struct rma_op *op, struct aptus_request **req, const char **why);

/* Fast paths for predefined datatypes to targets reached by load/store, in an epoch open to
 * them: 1 when done, 0 when the general path must run (which also reports any error). */
int aptus_rma_fast_putget(struct aptus_win *w, int put, void *obuf, MPI_Count ocount, MPI_Datatype odt, int target,
                          MPI_Aint disp, MPI_Count tcount, MPI_Datatype tdt);
int aptus_rma_fast_fop(struct aptus_win *w, const void *obuf, void *rbuf, MPI_Datatype dt, int target, MPI_Aint disp,
                       int op_id);
int aptus_rma_fast_acc(struct aptus_win *w, const void *obuf, MPI_Count ocount, MPI_Datatype odt, int target,
                       MPI_Aint disp, MPI_Count tcount, MPI_Datatype tdt, int op_id);
/* Compare-and-swap (the datatype already checked: an integer, logical or byte type). */
int aptus_rma_fast_cas(struct aptus_win *w, const void *obuf, const void *cbuf, void *rbuf, MPI_Datatype dt, int target,
                       MPI_Aint disp);
int aptus_rma_flush_idle(const struct aptus_win *w);

/* The agents' registrations (set-up) and the clean-up of segment names on an abnormal end. */
void aptus_rma_init(void);
/* Stops the copy agent (MPI_Finalize). */
void aptus_rma_finalize(void);
/* The statistics line (APTUS_STATS), and its numbers as the member "one_sided" of the
 * statistics document (APTUS_STATS_FILE, docs/STATS.md; nothing when no window was made). */
void aptus_rma_stats_print(int rank);
struct aptus_json;
void aptus_rma_stats_json(struct aptus_json *j);

#endif
