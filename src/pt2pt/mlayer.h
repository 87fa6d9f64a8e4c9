/* Internals shared by the files of the message layer (not used outside src/pt2pt/):
 *   request.c    requests, completion, status
 *   match.c      posted and unexpected queues (hashed), matching order
 *   recv.c       arrival of matching frames: sequence numbers, reorder list; receives, probes
 *   sendq.c      per-peer queue of frames waiting for room, streams
 *   proto.c      protocol selector (per route size range) and the send entry points
 *   eager.c      eager and synchronous eager
 *   rndv.c       rendezvous: RTS, the receiver's choice, FIN
 *   rndv_read.c  rendezvous by one-sided read (get with completion) and write (put_notify)
 *   rndv_copy.c  rendezvous by streamed copy (CTS, DATA)
 *   cancel.c     cancellation of sends (CANCEL_REQ, CANCEL_ANS)
 *   fail.c       requests that depend on a failed peer */
#ifndef APTUS_PT2PT_MLAYER_H
#define APTUS_PT2PT_MLAYER_H

#include <stdint.h>
#include <string.h>

#include "channel/channel.h"
#include "pt2pt/pt2pt.h"
#include "pt2pt/wire.h"

/* Room reserved in a frame for the largest eager header. */
#define APTUS_EAGER_HEADER_MAX 48

/* Protocols, chosen per route size range by proto.c. */
enum aptus_proto {
    APTUS_PROTO_EAGER = 0,
    APTUS_PROTO_RNDV_COPY,      /* rendezvous, streamed copy */
    APTUS_PROTO_RNDV_READ_BUSY, /* rendezvous, read one-sidedly when the receiver is sending too */
    APTUS_PROTO_RNDV_READ,      /* rendezvous, read one-sidedly */
    APTUS_PROTO_RNDV_WRITE,     /* rendezvous, written one-sidedly by the sender (put_notify) */
};

/* A message that arrived before its receive was posted: in its hash bucket and in the list of
 * all unexpected messages in arrival order (for wildcard receives). */
struct aptus_unexp {
    struct aptus_unexp *next, *prev;   /* arrival order */
    struct aptus_unexp *bnext, *bprev; /* hash bucket */
    struct aptus_peer *from;
    uint8_t type;
    uint8_t chan, proto; /* RTS: where the data can be read */
    uint8_t readable;    /* RTS: addr and key are valid */
    uint16_t ctx;
    int src, tag;
    uint32_t seq; /* the sender's sequence number (found by a send's cancellation) */
    uint64_t len;
    uint64_t sreq, addr, key;
    struct aptus_comm *comm; /* set when taken by a matched probe */
    char data[];             /* eager payload */
};

/* A frame waiting for room on its channel, or a streamed message being sent piece by piece. */
struct aptus_pending {
    struct aptus_pending *next;
    int chan;
    size_t hdrlen;
    _Alignas(8) char hdr[64];
    const char *payload;
    size_t len;
    struct aptus_request *req; /* completes once the frame (or stream) is out */
    /* stream */
    int stream;
    uint64_t rreq;
    size_t off;
    /* non-contiguous payload: packed from this cursor instead of read at `payload` */
    int nc;
    struct aptus_dt_cursor cur;
};

/* The message layer's state of a peer beyond the peer's own fields (made on first need,
 * aptus_peer_ml): its send queue and the customized rendezvous's state (rndv_cust.c). */
struct aptus_rr;
_Static_assert(sizeof(struct aptus_f_rr) <= 64 && sizeof(struct aptus_f_rts) <= 64 && sizeof(struct aptus_f_cts) <= 64,
               "a control frame must fit a waiting frame's header (struct aptus_pending)");
struct aptus_sendq {
    struct aptus_pending *head, *tail;
    struct aptus_peer *next_peer; /* in the list of peers with waiting frames */
    /* as a sender: RECEIVER_READYs taken (p->rr while any), writes made without FIN, and
     * RECEIVER_READYs numbered up to drop_upto to drop (revoked) */
    struct aptus_rr *rr_head;
    uint32_t finless_sent, drop_upto;
    /* as a receiver: writes without FIN noticed, RECEIVER_READYs sent, revocations out */
    uint32_t finless_seen, rr_sent, revoking;
};
/* The peer's message-layer state, made on first use (out of memory ends the job). */
struct aptus_sendq *aptus_peer_ml(struct aptus_peer *p);

/* State of the message layer. */
struct aptus_mlayer {
    struct aptus_request *free_reqs;
    struct aptus_peer *queued_peers; /* peers with waiting frames */
    int sendq_poller;
    uint64_t rndv_read, rndv_write, rndv_copy; /* rendezvous receives by protocol */
    uint64_t rndv_deferred;                    /* reads put off by nonblocking starts */
    int rndv_out;                              /* rendezvous sends in flight from this rank */
    struct aptus_request *remote_wait;         /* requests waiting for a peer's answer (failure path) */
    struct aptus_cancel_stats cancels;         /* cancel.c */
    uint64_t pstat[8];                         /* rndv_cust.c: enum aptus_pstat, all peers */
};
extern struct aptus_mlayer aptus_ml;

/* request.c */
void aptus_req_done_slow(struct aptus_request *r);
/* Completes a request: the common case (nothing to release or unlink) inline. */
static inline void aptus_req_done(struct aptus_request *r)
{
    if (__builtin_expect((r->rwait | r->rndv_out) == 0 && !r->bsend_piece && !r->free_on_complete, 1))
        r->complete = 1;
    else
        aptus_req_done_slow(r);
}
/* Links a request into the list of those waiting for the peer's answer (world rank wpeer). */
void aptus_req_wait_remote(struct aptus_request *r, int wpeer);

/* match.c: the queues. */
void aptus_match_init(void);
void aptus_match_finalize(void);
/* The earliest posted receive matching (ctx, src, tag), removed from the queue; or NULL. */
struct aptus_request *aptus_posted_take(uint16_t ctx, int src, int tag);
void aptus_posted_add(struct aptus_request *r);
int aptus_posted_remove(struct aptus_request *r); /* 1 if it was posted */
/* r (posted last, full envelope): -1 if a receive posted before it with MPI_ANY_SOURCE or
 * MPI_ANY_TAG could take its messages (or the queue is too long to tell cheaply), else the
 * receives posted before it with its envelope. */
int aptus_posted_ahead(const struct aptus_request *r);
/* Visits every posted receive (fn may remove the one it is given). */
void aptus_posted_each(void (*fn)(struct aptus_request *r, void *arg), void *arg);
/* The earliest unexpected message matching (ctx, src, tag) (wildcards allowed); not removed. */
struct aptus_unexp *aptus_unexp_find(uint16_t ctx, int src, int tag);
void aptus_unexp_add(struct aptus_unexp *u);
/* State of the queues (match.c owns it; the fast path below reads it). */
struct pbucket {
    struct aptus_request *head, *tail;
};
struct ubucket {
    struct aptus_unexp *head, *tail;
};
struct aptus_match_state {
    /* posted receives */
    int phashed;         /* 0: all in `lin`, in order */
    struct pbucket lin;  /* linear mode */
    struct pbucket wild; /* hashed mode: the wildcard receives */
    struct pbucket *posted;
    uint32_t pmask, pcount; /* hashed mode: table, entries in the table */
    uint32_t pall;          /* posted receives in all */
    uint32_t phwm;          /* the most posted receives at once (seen when one leaves) */
    uint64_t stamp;
    /* unexpected messages */
    int uhashed;
    struct ubucket *unexp;
    uint32_t umask, ucount;
    struct aptus_unexp *uhead, *utail; /* arrival order */
    uint32_t uhwm;                     /* the most unexpected messages at once */
};
extern struct aptus_match_state aptus_mt;

/* A receive starting: the earliest unexpected message it matches, removed from the queue; or
 * NULL after posting r. The common case (nothing unexpected, the list mode) inline. */
struct aptus_unexp *aptus_unexp_take_or_post_slow(struct aptus_request *r);
/* Appends r to a posted-queue list (in posting order) / gives it its order stamp. */
static inline void aptus_pbucket_append(struct pbucket *b, struct aptus_request *r)
{
    r->bucket = b;
    r->next = NULL;
    r->prev = b->tail;
    if (b->tail)
        b->tail->next = r;
    else
        b->head = r;
    b->tail = r;
}

static inline void aptus_posted_stamp(struct aptus_request *r)
{
    r->stamp = ++aptus_mt.stamp;
    r->posted = 1;
    aptus_mt.pall++;
}

static inline struct aptus_unexp *aptus_unexp_take_or_post(struct aptus_request *r)
{
    if (__builtin_expect(aptus_mt.ucount != 0 || aptus_mt.phashed, 0))
        return aptus_unexp_take_or_post_slow(r);
    aptus_posted_stamp(r);
    aptus_pbucket_append(&aptus_mt.lin, r);
    return NULL;
}
void aptus_unexp_remove(struct aptus_unexp *u);

/* sendq.c. frame_out sends a frame now if nothing waits before it and there is room, else
 * queues it (the payload must then stay valid until req completes; req == NULL: payload must
 * be NULL). Returns APTUS_OK (sent), APTUS_INPROGRESS (queued) or APTUS_ERR (no memory). */
int aptus_frame_out(struct aptus_peer *p, int chan, const void *hdr, size_t hdrlen, const void *payload,
                    struct aptus_dt_cursor *cur, size_t len, struct aptus_request *req);
/* A control frame: must not be lost (out of memory ends the job). */
void aptus_send_ctrl(struct aptus_peer *p, const void *hdr, size_t hdrlen);
/* Starts streaming len bytes of s as DATA frames for the receiver's request rreq. */
void aptus_stream_start(struct aptus_peer *p, int chan, struct aptus_request *s, uint64_t rreq, size_t len);
/* Drops p's waiting frames, completing their requests with err (failure path). */
void aptus_sendq_drop(struct aptus_peer *p, int err);
void aptus_sendq_init(void);

static inline int aptus_chan_send(struct aptus_ep *ep, const void *hdr, size_t hdrlen, const void *payload,
                                  struct aptus_dt_cursor *cur, size_t len)
{
    return cur ? ep->ch->send_frame_packed(ep, hdr, hdrlen, cur, len)
               : ep->ch->send_frame(ep, hdr, hdrlen, payload, len);
}

/* recv.c */
void aptus_recv_init(void);
/* Cancels r if it is still posted (removed, completed cancelled): 1 if it was. */
int aptus_recv_cancelled(struct aptus_request *r);
void aptus_recv_peer_free(struct aptus_peer *p); /* its frames that arrived early */
/* The envelope of a matched message into r; returns the bytes that will be delivered. */
static inline size_t aptus_set_envelope(struct aptus_request *r, int src, int tag, uint64_t len)
{
    r->st_source = src;
    r->st_tag = tag;
    r->msg_bytes = len;
    size_t n = len <= r->bytes ? (size_t)len : r->bytes;
    r->st_bytes = n;
    r->st_error = len > r->bytes ? MPI_ERR_TRUNCATE : MPI_SUCCESS;
    return n;
}

/* eager.c */
int aptus_eager_send(struct aptus_request *r, struct aptus_peer *p, int chan);
/* Copies n bytes of a contiguous payload: small ones without a call (8..16 bytes: two
 * overlapping 8-byte words). */
static inline void aptus_copy_payload(void *dst, const void *src, size_t n)
{
    if (n >= 8 && n <= 16) {
        uint64_t a, b;
        memcpy(&a, src, 8);
        memcpy(&b, (const char *)src + n - 8, 8);
        memcpy(dst, &a, 8);
        memcpy((char *)dst + n - 8, &b, 8);
    } else if (n) {
        memcpy(dst, src, n);
    }
}

/* Delivers an eager payload into r (envelope, copy or unpack); a synchronous one is answered. */
void aptus_eager_deliver_slow(struct aptus_request *r, struct aptus_peer *from, const struct aptus_f_msg *m,
                              const void *payload, uint64_t sreq);
static inline void aptus_eager_deliver(struct aptus_request *r, struct aptus_peer *from, const struct aptus_f_msg *m,
                                       const void *payload, uint64_t sreq)
{
    if (__builtin_expect(r->nc || m->type != APTUS_F_EAGER, 0)) {
        aptus_eager_deliver_slow(r, from, m, payload, sreq);
        return;
    }
    aptus_copy_payload(r->buf, payload, aptus_set_envelope(r, m->src, m->tag, m->len));
    aptus_req_done(r);
}
void aptus_eager_init(void);

/* rndv.c */
int aptus_rndv_send(struct aptus_request *r, struct aptus_peer *p, int chan, int proto);
/* The receiver's side once an RTS has matched r (envelope set). */
void aptus_rndv_matched(struct aptus_request *r, struct aptus_peer *from, const struct aptus_unexp *rts);
void aptus_rndv_init(void);
/* rndv_read.c: reads the data one-sidedly; 0 when started (r completes and FIN goes out when
 * done), -1 when the channel cannot (the caller streams instead). */
int aptus_rndv_read(struct aptus_request *r, struct aptus_peer *from, const struct aptus_unexp *rts, size_t n);
/* The receiver's side of a write: registers r's buffer and asks the sender (CTS with address
 * and key) to write it; 0 when asked (r completes when the write's note arrives), -1 when the
 * buffer cannot be written one-sidedly (the caller streams instead). */
int aptus_rndv_write_request(struct aptus_request *r, struct aptus_peer *from, const struct aptus_unexp *rts, size_t n);
/* The sender's side: writes s into the receiver's buffer (CTS c); s completes when its buffer
 * may be reused. */
void aptus_rndv_write(struct aptus_peer *to, struct aptus_request *s, const struct aptus_f_cts *c);
void aptus_rndv_write_init(void);
/* One list of local pieces for a one-sided operation: `off` bytes into the message, `last` for
 * the list that ends it. Returns a channel status. */
typedef int (*aptus_piece_op)(struct aptus_ep *ep, struct iovec *iov, int k, size_t off, int last, void *arg,
                              struct aptus_completion *comp);
/* Issues op over the n bytes of r's buffer (lists of its runs when it is not contiguous):
 * APTUS_OK (all done), APTUS_INPROGRESS (comp counts those outstanding) or APTUS_ERR (nothing
 * was issued); a failure part way ends the job (what, for the message). */
int aptus_rndv_issue_pieces(struct aptus_ep *ep, struct aptus_request *r, size_t n, aptus_piece_op op, void *arg,
                            struct aptus_completion *comp, const char *what);
/* Releases the registration a rendezvous request holds (if any). */
static inline void aptus_rndv_release(struct aptus_request *r)
{
    if (__builtin_expect(r->memh != NULL, 0)) {
        aptus_channels[r->memch]->mem_dereg(r->memh);
        r->memh = NULL;
    }
}
/* rndv_copy.c */
void aptus_rndv_copy_request(struct aptus_request *r, struct aptus_peer *from, const struct aptus_unexp *rts, size_t n);
void aptus_rndv_copy_init(void);

/* rndv_cust.c: the customized rendezvous (EAGER, HYBRID, SEND_RNDV, RECV_RNDV). */
enum aptus_rr_flag {
    APTUS_RR_OUT = 1,     /* a receive's RECEIVER_READY is out, not settled */
    APTUS_RR_WATCH = 2,   /* ... and it watches its last byte (write without FIN) */
    APTUS_RR_WRITTEN = 4, /* WRITTEN came; the write's note has not */
    APTUS_RR_NOTE_IN = 8, /* the note came; WRITTEN has not */
    APTUS_RR_REVOKE = 16, /* cancelled: waiting for RR_REVOKED */
    APTUS_RR_USED = 32,   /* a send that wrote into a receiver's buffer (never cancelled) */
    APTUS_RR_HYBRID = 64, /* an internal send holding a HYBRID copy in bsend_piece */
    /* APTUS_RR_NO_HYBRID = 128 (pt2pt.h) */
};
/* Receives at least this large may send RECEIVER_READY (SIZE_MAX: none can). */
extern size_t aptus_rr_floor;
void aptus_rndv_cust_init(void);
void aptus_rndv_cust_peer_free(struct aptus_peer *p);
void aptus_rndv_cust_finalize(void);
/* A receive just posted (no message was waiting): RECEIVER_READY if it qualifies. */
void aptus_rr_post(struct aptus_request *r);
/* A frame matched r, which has its RECEIVER_READY out: 1 if r had been written without FIN
 * (it is complete now: the frame is for a later receive), 0 if the frame is r's (keep_reg: an
 * RTS that will ask for a write over the channel r registered its buffer with: r keeps it). */
int aptus_rr_matched(struct aptus_request *r, int keep_reg);
/* MPI_Cancel of a posted receive with a RECEIVER_READY out (or a later one on its stream): 1
 * when cancelled now, 0 when it completes later (cancelled or received). */
int aptus_rr_recv_cancel(struct aptus_request *r);
/* Would cancelling r (posted) need the sender's word (a later receive on its stream has a
 * RECEIVER_READY out)? */
int aptus_rr_cancel_needs_revoke(const struct aptus_request *r);
/* A posted receive given up (failed peer): its RECEIVER_READY state dropped. */
void aptus_rr_forget(struct aptus_request *r);
/* The sender's side, at every send to p while p->rr: the RECEIVER_READY for this send, if one
 * is (then written or dropped by aptus_rr_send); the others on (ctx, tag) move up. */
struct aptus_rr *aptus_rr_consume(struct aptus_peer *p, uint16_t ctx, int tag);
/* Writes r into the receiver's buffer: 0 (done or on its way), or -1 when it cannot (the send
 * goes on by the other protocols). e is freed. */
int aptus_rr_send(struct aptus_request *r, struct aptus_peer *p, int proto, struct aptus_rr *e);
/* HYBRID: 0 when r was copied and offered (r complete), -1 when it does not apply. */
int aptus_hybrid_send(struct aptus_request *r, struct aptus_peer *p, int chan);
void aptus_hybrid_release(void *piece);
/* A send on (ctx, tag) to p was cancelled: the RECEIVER_READYs it moved up move back. */
void aptus_rr_uncount(struct aptus_peer *p, uint16_t ctx, int tag);
/* WRITTEN and RR_REVOKED, in sequence order (recv.c). */
void aptus_rr_seq_frame(struct aptus_peer *from, const struct aptus_f_msg *m, const char *frame);
/* The put_notify note of a RECV_RNDV write (rndv_read.c's handler passes it on). */
void aptus_rr_noted(struct aptus_request *r);
/* Counters per peer (APTUS_STATS). */
enum aptus_pstat { /* (eager: the messages sent, less the others) */
                   APTUS_PS_HYBRID,
                   APTUS_PS_SEND_RNDV,
                   APTUS_PS_RECV_RNDV,
                   APTUS_PS_FIN_ELIM,
                   APTUS_PS_RR_SENT,
                   APTUS_PS_RR_STALE,
                   APTUS_PS_RR_UNUSED,
};
#define APTUS_PS_COUNT 7
static inline void aptus_pstat(struct aptus_peer *p, int what)
{
    aptus_ml.pstat[what]++;
    if (__builtin_expect(p->stats != NULL, 0))
        p->stats->proto[what]++;
}

/* proto.c */
void aptus_proto_init(void);

/* fail.c */
void aptus_fail_init(void);

/* cancel.c */
void aptus_cancel_init(void);

#endif
