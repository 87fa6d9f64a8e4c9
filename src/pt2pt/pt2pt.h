/* The message layer: requests, matching (posted and unexpected queues) and the protocols
 * (eager, synchronous eager, rendezvous by one-sided read or by streamed copy). Messages travel
 * in packed form (count * size bytes); a non-contiguous buffer is packed straight into the
 * channel's frames and unpacked straight out of them, or read by a one-sided copy into an
 * iovec list, through a datatype cursor: never through a full-message copy. */
#ifndef APTUS_PT2PT_PT2PT_H
#define APTUS_PT2PT_PT2PT_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/datatype.h"
#include "core/objects.h"
#include "runtime/progress.h"

/* GENERIC: a request completed by a background task (e.g. MPI_Comm_idup), not by a message.
 * GREQ: a generalized request (MPI_Grequest_start, api/grequest.c), completed by the user. */
enum aptus_req_kind { APTUS_REQ_SEND = 1, APTUS_REQ_RECV, APTUS_REQ_GENERIC, APTUS_REQ_GREQ };
enum aptus_send_mode { APTUS_MODE_STANDARD, APTUS_MODE_SYNC, APTUS_MODE_READY, APTUS_MODE_BUFFERED };

struct aptus_unexp;

struct aptus_memh;

/* In rr of a send, set by its starter: the sender waits for it anyway (no HYBRID copy). */
#define APTUS_RR_NO_HYBRID 128
struct aptus_request {
    uint32_t magic;
    uint8_t kind;       /* enum aptus_req_kind */
    uint8_t mode;       /* enum aptus_send_mode (sends) */
    uint8_t persistent; /* created by *_init */
    uint8_t active;     /* persistent: started and not yet waited for */
    uint8_t rndv_out;   /* a rendezvous send in flight (counted in the message layer) */
    uint8_t nc;         /* buf holds `count` elements of non-contiguous dt (else: bytes at buf) */
    uint8_t posted;     /* in the posted-receive queue */
    uint8_t rwait;      /* in the list of requests waiting for a peer's answer */
    volatile int complete;
    int cancelled;
    int free_on_complete; /* MPI_Request_free while in flight */
    /* send cancellation (cancel.c): a CANCEL_REQ is out; the send completed meanwhile and its
     * completion waits for the answer */
    uint8_t cancel_out, cancel_held;
    /* customized rendezvous (rndv_cust.c): enum aptus_rr_flag; a receive's last byte when it
     * sent RECEIVER_READY (the sentinel it watches) */
    uint8_t rr, rr_sentinel;
    uint32_t sseq; /* send: the sequence number its message took (set when started) */
    /* arguments: see aptus_req_set_data */
    void *buf;
    size_t bytes; /* packed size */
    int peer;     /* rank in comm, or MPI_ANY_SOURCE / MPI_PROC_NULL */
    int tag;
    struct aptus_comm *comm;
    uint16_t ctx;
    const struct aptus_dtype *dt;
    size_t count;
    /* status */
    int st_source, st_tag, st_error;
    size_t st_bytes;
    uint64_t msg_bytes; /* bytes the sender sent (reported on truncation) */
    /* links: the posted queue's (a posted receive), the list of requests waiting for a peer's
     * answer (a matched receive or a send: never posted at the same time), or the free list */
    struct aptus_request *next, *prev;
    union {
        struct {
            void *bucket;   /* the posted queue's list it is in */
            uint64_t stamp; /* order stamp (matching order across queues) */
        };
        int wpeer; /* waiting for a peer's answer (failure path): the peer's world rank */
    };
    /* buffered send: the piece of the attached buffer to release on completion */
    void *bsend_piece;
    /* generalized request: the user's callbacks (api/grequest.c) */
    struct aptus_greq *greq;
    union {
        /* partitioned send or receive (api/part.c): its partitions' state, freed by
         * MPI_Request_free */
        struct aptus_part *part;
        /* GENERIC request of a nonblocking or persistent collective: its schedule (coll/nbc.h) */
        struct aptus_nbc *nbc;
    };
    /* rendezvous over a channel that needs registration: this request's use of it, and the
     * channel (mem_dereg when the rendezvous ends) */
    struct aptus_memh *memh;
    uint8_t memch;
    /* Not zeroed by aptus_req_init: set by whoever uses them. */
    /* rendezvous (receiver side): bytes expected / received by streamed copy */
    size_t expect, recvd;
    /* non-contiguous data: where the streamed copy or an eager unpack goes next */
    struct aptus_dt_cursor cur;
    /* a payload small enough to travel in the request itself, so that its buffer lives exactly
     * as long as the request (a partitioned request's handshake, api/part.c) */
    uint64_t small;
    /* a receive that sent RECEIVER_READY over a channel that needs registration: its buffer's
     * remote address and key (kept for the sender's write if the RTS asks for one) */
    uint64_t rr_raddr, rr_rkey;
};
APTUS_OBJ_FITS(struct aptus_request, REQUEST);

/* A fresh request of the given kind: every field zero up to `expect` (the fields after it are
 * set before they are read), so that a request on the stack costs no more than it needs. */
static inline void aptus_req_init(struct aptus_request *r, int kind)
{
    memset(r, 0, offsetof(struct aptus_request, expect));
    r->magic = APTUS_MAGIC_REQ;
    r->kind = (uint8_t)kind;
}

/* The request behind a handle; NULL for MPI_REQUEST_NULL and any value that is no live request
 * (checked without reading it first: core/arena.h). */
static inline struct aptus_request *aptus_req_get(MPI_Request h)
{
    struct aptus_request *r = (struct aptus_request *)h;
    return aptus_obj_in(h, APTUS_OBJ_REQUEST) && r->magic == APTUS_MAGIC_REQ ? r : NULL;
}

/* MPI_Start of a partitioned request (api/part.c); r is marked active. Returns an MPI error code. */
int aptus_part_start(struct aptus_request *r, const char *fn);
/* A completed partitioned receive's status: its message came with the pair's own tag, the
 * status gives the user's (api/part.c). */
void aptus_part_status(struct aptus_request *r);
/* MPI_Request_free of an inactive partitioned request: its partition record and handshake. */
void aptus_part_free(struct aptus_request *r);

/* Completes a request whose peer is MPI_PROC_NULL (or a message from MPI_Mprobe of it): an
 * empty status from MPI_PROC_NULL. */
static inline void aptus_req_done_proc_null(struct aptus_request *r)
{
    r->complete = 1;
    r->st_source = MPI_PROC_NULL;
    r->st_tag = MPI_ANY_TAG;
    r->st_bytes = 0;
}

/* Points a request at `count` elements of dt at buf: a contiguous type becomes plain bytes at
 * buf + true_lb, any other keeps its layout for the cursor. A request from aptus_req_new
 * that keeps a non-contiguous type then holds it (aptus_req_hold_type) until aptus_req_free,
 * so that MPI_Type_free during the operation is safe. */
static inline void aptus_req_set_data(struct aptus_request *r, const void *buf, size_t count,
                                      const struct aptus_dtype *dt)
{
    r->dt = dt;
    r->count = count;
    r->bytes = count * dt->size;
    r->nc = !dt->contig;
    r->buf = dt->contig ? (char *)buf + dt->true_lb : (char *)buf;
}

static inline void aptus_req_hold_type(struct aptus_request *r)
{
    if (r->nc)
        aptus_dtype_retain((struct aptus_dtype *)r->dt);
}

/* Set-up registers the message layer's frame handlers, pollers, protocol selector and failure
 * handler; peers_release frees its per-peer state (before the peers go), finalize the rest. */
void aptus_pt2pt_init(void);
void aptus_pt2pt_peers_release(void);
void aptus_pt2pt_finalize(void);
/* After the channels are up: what the customized rendezvous can use (their capabilities). */
void aptus_rndv_cust_setup(void);
/* Prints the per-peer protocol counters (APTUS_STATS). */
void aptus_pt2pt_proto_stats_print(void);
/* The statistics document (APTUS_STATS_FILE, docs/STATS.md; pt2pt/proto_json.c): a peer's
 * protocol counts ("protocols", a member of the peer's object: the channel layer's writer calls
 * it for every peer), and the message layer's own counters ("pt2pt"). */
struct aptus_json;
struct aptus_peer;
void aptus_pt2pt_peer_json(struct aptus_json *j, const struct aptus_peer *p);
void aptus_pt2pt_stats_json(struct aptus_json *j);
/* The message layer's counters by name (MPIX_Aptus_counter): 0 with *value set, or -1. */
int aptus_pt2pt_counter(const char *name, uint64_t *value);
extern const char aptus_pt2pt_counter_names[];

/* Sends a contiguous message at once, without a request, when its route is eager and the frame
 * fits now (nothing queued for the peer, the channel takes it); returns 1 if it did, 0 if the
 * caller must send it with a request. */
int aptus_send_eager_try(const void *buf, size_t bytes, int dst, int tag, struct aptus_comm *c, uint16_t ctx);

struct aptus_request *aptus_req_new(int kind);
/* A request that no message completes (GENERIC, GREQ): until its task or the user completes it,
 * its status is the empty one (MPI_ANY_SOURCE, MPI_ANY_TAG). NULL when out of memory. */
struct aptus_request *aptus_req_new_nomsg(int kind);
void aptus_req_free(struct aptus_request *r);
/* Starts a send / receive described by r's argument fields. Returns 0 or an MPI error class
 * (the API layer reports it). */
int aptus_send_start(struct aptus_request *r);
int aptus_recv_start(struct aptus_request *r);
/* Blocking eager shortcut for MPI_Send: returns 0 if sent (or queued with a request that
 * has completed); otherwise falls back to a request internally. */
int aptus_send_now(const void *buf, size_t bytes, int dst, int tag, struct aptus_comm *c, uint16_t ctx, int mode);

/* Waits for r, driving the progress engine (runtime/progress.h: aptus_progress,
 * aptus_wait_step, aptus_bg_add for background tasks). */
void aptus_wait(struct aptus_request *r);

/* Set by a nonblocking start while the progress thread runs: one-sided rendezvous reads matched
 * meanwhile are left to the next progress pass that is not such a start (rndv.c). */
extern _Thread_local int aptus_rndv_defer __attribute__((tls_model("initial-exec")));
/* Completes a request (for background tasks finishing a GENERIC request). */
void aptus_req_complete(struct aptus_request *r);

/* Removes a posted receive that has not matched yet. Returns 1 if cancelled. */
int aptus_recv_cancel(struct aptus_request *r);
/* MPI_Cancel of a send (cancel.c): asks the receiver to drop the message if it has not matched
 * yet; r completes -- cancelled, or as the send it was -- once the answer has come. */
void aptus_send_cancel(struct aptus_request *r);
/* The sequence number the next message to rank dest of c will take (a buffered send records
 * it in the user's request, whose message an internal request carries). */
uint32_t aptus_send_seq_next(struct aptus_comm *c, int dest);

/* Probing. With `take`, the matched message is removed from the queue and returned in *msg
 * (matched probe). */
int aptus_probe_test(int src, int tag, struct aptus_comm *c, uint16_t ctx, MPI_Status *st, int take,
                     struct aptus_unexp **msg);
/* Receives a message taken by a matched probe into r (a receive request). */
void aptus_recv_taken(struct aptus_request *r, struct aptus_unexp *msg);

void aptus_status_fill(MPI_Status *st, const struct aptus_request *r);
void aptus_status_empty(MPI_Status *st);
size_t aptus_status_bytes(const MPI_Status *st);
void aptus_status_set_bytes(MPI_Status *st, size_t bytes);

/* Rendezvous receives so far: by one-sided copy (CMA, or memcpy to oneself) and by streamed
 * copy, for the statistics. */
void aptus_pt2pt_rndv_counts(uint64_t *one_sided, uint64_t *copied);
/* Rendezvous reads put off by nonblocking starts (rndv.c, aptus_rndv_defer). */
uint64_t aptus_pt2pt_rndv_deferred(void);
/* Cancellation of sends (cancel.c), for the statistics: as the sender -- cancels asked, answers
 * cancelled / matched, questions asked again (the message had not arrived) --, and as the
 * receiver, messages dropped. */
struct aptus_cancel_stats {
    uint64_t asked, cancelled, matched, again, dropped;
};
const struct aptus_cancel_stats *aptus_pt2pt_cancel_stats(void);

/* Buffered sends (pt2pt/bsend.c): pools of attached buffers, the process's
 * (MPI_Buffer_attach), a communicator's (aptus_comm.bsend_pool) or a session's
 * (aptus_session.bsend_pool); a pool that is not the process's is made by aptus_bsend_pool_new
 * and given up by its owner with aptus_bsend_pool_drop (it lives on until its sends have left). */
struct aptus_bsend_pool;
struct aptus_bsend_pool *aptus_bsend_process_pool(void);
struct aptus_bsend_pool *aptus_bsend_pool_new(void);
void aptus_bsend_pool_drop(struct aptus_bsend_pool *p);
/* The pool a buffered send on c uses: c's, else its session's, else the process's. */
struct aptus_bsend_pool *aptus_bsend_pool_of(struct aptus_comm *c);
int aptus_bsend_attached(const struct aptus_bsend_pool *p);
/* buf may be MPI_BUFFER_AUTOMATIC. Returns 0 or MPI_ERR_BUFFER (one is attached already). */
int aptus_bsend_attach(struct aptus_bsend_pool *p, void *buf, size_t size);
/* Waits for the pool's sends, then detaches. MPI_ERR_BUFFER: none attached; MPI_ERR_COUNT: its
 * size is above max (nothing detached). */
int aptus_bsend_detach(struct aptus_bsend_pool *p, void **buf, size_t *size, size_t max);
/* Waits until the sends buffered so far have left. */
void aptus_bsend_flush(struct aptus_bsend_pool *p);
/* The same, nonblocking: a GENERIC request. Returns 0 or MPI_ERR_NO_MEM. */
int aptus_bsend_iflush(struct aptus_bsend_pool *p, struct aptus_request **req);
/* A piece of `bytes` for one buffered send, released when the send completes; NULL: no room. */
void *aptus_bsend_alloc(struct aptus_bsend_pool *p, size_t bytes);
void aptus_bsend_release(void *piece);

#endif
