/* The RC send/receive channel (rc-sr; seed 000 sections 3 and 5.4, seed 002 III-C): frames over
 * reliable connections (libfabric FI_EP_MSG: verbs RC queue pairs on a cluster, tcp sockets
 * here), opened on demand.
 *
 * A job starts with UD only: no connection exists after MPI_Init. Every frame exchanged with a
 * peer over UD counts toward it (the UD channel calls aptus_rc_note); at APTUS_RC_THRESHOLD
 * this rank asks for a connection, within APTUS_RC_MAX per process (a request beyond it is
 * refused, counted, and the peer stays on UD). The lower rank of a pair always makes the
 * connection: a higher rank asks it over UD (RC_ASK), the lower one connects (its request
 * names rank and job) -- so when both sides want it at once there is still exactly one
 * connection, and no endpoint is left over.
 *
 * Processes of other jobs (dynamic processes, channel/procs.c) are peers like the ranks, by the
 * index they have here: their RC address comes in their card, not from the launcher; "lower" is
 * the order every job sees alike (aptus_proc_before: job hash, then rank). A job that ran no RC
 * channel (one node) starts it when it first gives its card to another job, if the send rules
 * name one (aptus_rc_card); it then connects to other jobs' processes only. Since a process has
 * its own index for each peer, the two sides swap them when connecting (struct rc_param): a
 * frame's header names its sender by the index the receiver gives it. A request the other side cannot take (its limit)
 * is answered with RC_NAK over UD or a rejected connection: the peer stays on UD, counted.
 * Once connected, rc-sr reaches the peer and its route is made again from the send rules, so
 * the next messages take it; those still on their way over UD keep their channel, and the
 * per-peer sequence numbers of the message layer keep the order.
 *
 * Frames: an 8-byte header (sender's rank, length) and the frame, copied into a send buffer;
 * receive buffers of APTUS_RC_BUF_SIZE bytes are posted once to the shared receive context
 * (one pool for all connections; the header says whose frame it is). A provider without a
 * shared receive context needs per-connection credits: not built yet (rc-sr is then not
 * offered, with a message). Frames never exceed the receive buffers, so the provider never
 * sees a truncating receive. */
#ifdef APTUS_HAVE_LIBFABRIC

#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rdma/fi_errno.h>

#include "channel/am.h"
#include "channel/channel.h"
#include "channel/rc/rc.h"
#include "channel/rc/rc_int.h"
#include "channel/stats_json.h"
#include "core/datatype.h"
#include "core/errors.h"
#include "fabric/fabric.h"
#include "runtime/config.h"
#include "runtime/json.h"
#include "runtime/pmi.h"
#include "runtime/progress.h"
#include "runtime/runtime.h"

#define RC_CARD         "rc"
#define RC_CQ_BATCH     16
#define RC_HEADER_ROOM  256 /* of a frame, kept for the message layer's header */
#define RC_MAGIC        0x41524331u
#define RC_TRIES_MAX    4 /* refusals of one peer before this rank stops asking */
#define RC_CREDIT_SLACK 2 /* the credit path: receive buffers posted beyond the credits, for credit frames */

/* Per-rank connection state. */
enum { RC_NONE = 0, RC_ASKING, RC_ASKED, RC_CONNECTING, RC_UP, RC_REFUSED, RC_CLOSED, RC_DRAIN, RC_BYE };

/* In front of every frame. */
struct rc_hdr {
    uint32_t src;     /* sender's index at the receiver (its world rank, within a job) */
    uint32_t len;     /* frame bytes that follow (0: a credit frame, nothing to hand up) */
    uint32_t credits; /* the credit path: receive buffers the sender reposted for us */
    uint32_t flags;   /* RC_HDR_* (the size keeps frames 8-byte aligned, as the layers above read them) */
};

/* A header-only frame that is a kick (rc_stall.c): it follows frames the peer has not answered. */
#define RC_HDR_KICK 1u

_Static_assert(sizeof(struct rc_hdr) % 8 == 0, "rc-sr frames must start 8-byte aligned");

/* A connection's parameters (fi_connect / fi_accept): the sender's job hash and world rank, and
 * the index the sender gives the receiver (what the receiver's frame headers then carry). */
struct rc_param {
    uint32_t magic, job, rank, idx;
};

struct rc_buf {
    struct aptus_fab_ctx ctx; /* first: the completion's context */
    struct rc_buf *next_free; /* free list, or the queue of frames the provider refused */
    struct rc_ep *to;         /* where it goes (while queued: the endpoint is live) */
    int rank;                 /* ... the peer's world rank (what an error completion names) */
    int bye;                  /* completes once delivered (an idle connection's BYE, finalize's last frame): its
                                 failure, once the peer closed, loses nothing */
    size_t len;               /* frame bytes */
    _Alignas(8) char data[];  /* struct rc_hdr, then the frame (read in place: 8-byte aligned) */
};

extern struct aptus_channel aptus_channel_rc_sr;

/* A flush waiting: for the frames to one rank (rank >= 0) or to every rank (-1). */
struct rc_flush {
    struct rc_flush *next;
    int rank;
    struct aptus_completion *comp;
};

static struct {
    int active;
    int refusing; /* RC wanted, but this rank could not set it up (RC_SETUP_NO_MEMORY) */
    int dyn;      /* started for other jobs' processes (aptus_rc_card): this job's ranks have no cards */
    int dyn_tried;
    int cap; /* entries of the per-peer arrays: every process index (aptus_rt.procs_cap) */
    struct aptus_fab_rc r;
    uint32_t job;
    size_t buf_size, frame_max;
    uint8_t *state;                /* per process index (world rank, then other jobs' processes) */
    struct aptus_rule_chain alloc; /* the allocation rules (APTUS_ALLOC_RULES) */
    uint16_t *count;               /* messages per allocation rule and world rank, until its threshold */
    uint32_t *seen;                /* per world rank: messages exchanged before the connection was asked */
    uint8_t *why;                  /* per world rank: the allocation rule that asked (1-based; 0: the peer) */
    uint8_t *tries;                /* per world rank: refusals so far (the next try waits longer) */
    struct rc_ep **conn;           /* per world rank: the connection (being) made */
    int nconn, npending;           /* up / being made (both count toward APTUS_RC_MAX) */
    int cq_costly;                 /* reading the queue costs a system call (a sockets provider), and
                                    * the connections carry only large messages */
    unsigned cq_pass, cq_hot;      /* idle passes; passes left at the full rate after a completion */
    int nclosing;                  /* closing while idle (RC_DRAIN, RC_BYE: they count too) */
    struct rc_ep *closing;         /* ... their list */
    double idle_s;                 /* APTUS_CHANNEL_IDLE (0: connections stay) */
    struct aptus_timer idle_timer;
    int ask_retry;             /* an RC_ASK could not be sent: try again */
    int hello;                 /* RC_HELLOs heard whose connection requests may still come ... */
    double hello_until;        /* ... until then: the event queue is read on every pass */
    struct rc_buf *q, *q_tail; /* frames the provider refused for now, in order */
    char *rx_pool;
    size_t stride;
    int nrx;
    /* FI_MR_LOCAL (verbs; APTUS_FABRIC_MR_LOCAL=1 anywhere): the shared receive pool and one
     * pool of send buffers are registered, their descriptors passed with every operation. */
    struct fid_mr *rx_mr, *tx_mr;
    void *rx_desc, *tx_desc;
    char *tx_pool;
    size_t tx_cap; /* send buffers at most */
    struct rc_buf *tx_free;
    int ntx, ntx_out;
    int finishing;
    double ping_s, next_check; /* liveness: see ping_silent */
    int credit_path;           /* no shared receive context: per-connection buffers and credits */
    int conn_bufs;             /* ... receive buffers per connection (APTUS_RC_CONN_BUFS) */
    int owing;                 /* a credit frame could not go: try again from progress */
    char **retired;            /* receive pools of closed connections (completions may still name them) */
    uint32_t *txo;             /* per world rank: buffered frames queued or with the provider (flush waits) */
    struct rc_flush *flushes;  /* flushes waiting for frames to complete */
    int nretired;
    struct {
        uint64_t opened_by_me, opened_by_peer, refused_limit, refused_by_peer, failed, closed, frames_out, frames_in;
        uint64_t no_credit, credit_frames, injected, reg_failed;
        uint64_t idle_closed, idle_agreed; /* closed while idle: this rank asked / the peer did */
    } st;
} rc;

/* ---- sending ---------------------------------------------------------------------------- */

static struct rc_buf *tx_get(void)
{
    struct rc_buf *b = rc.tx_free;
    if (b) {
        rc.tx_free = b->next_free;
    } else {
        if ((size_t)rc.ntx >= rc.tx_cap)
            return NULL;
        if (rc.tx_pool) /* registered: carved from the pool, never freed before the end */
            b = (struct rc_buf *)(rc.tx_pool + (size_t)rc.ntx * rc.stride);
        else if (!(b = malloc(sizeof *b + rc.buf_size)))
            return NULL;
        rc.ntx++;
    }
    b->bye = 0;
    return b;
}

static void tx_put(struct rc_buf *b)
{
    b->next_free = rc.tx_free;
    rc.tx_free = b;
}

/* A buffered frame to `rank` is complete, or will never be: what a flush waits for. */
static void tx_done(int rank)
{
    if (rc.txo && rc.txo[rank])
        rc.txo[rank]--;
}

/* A frame handed over will never arrive (its connection broke, or closed with it queued). While
 * the job runs that is a lost message: the peer is failed (by default the job ends) rather than
 * the loss going unnoticed. At the end of the job a closing peer has nothing left to receive. */
void aptus_rc_lost(int rank, const char *why)
{
    struct aptus_peer *p = aptus_peer_get(rank);
    if (!rc.finishing && p)
        aptus_peer_fail(p, &aptus_channel_rc_sr, why);
}

static void tx_lost(int rank)
{
    aptus_rc_lost(rank, "a frame sent over its connection was lost (the connection broke)");
}

/* A buffered frame failed: lost, unless it was the BYE of an idle connection (the peer closes
 * once it has it: its failure then loses nothing). */
static void tx_failed(struct rc_buf *b)
{
    int rank = b->rank, bye = b->bye;
    tx_put(b);
    tx_done(rank);
    if (!bye)
        tx_lost(rank);
}

/* Takes the frames queued for e out of the queue (e is closing); returns how many. */
static int q_drop(struct rc_ep *e)
{
    int n = 0;
    struct rc_buf **pp = &rc.q, *last = NULL;
    while (*pp) {
        struct rc_buf *b = *pp;
        if (b->to == e) {
            *pp = b->next_free;
            tx_put(b);
            tx_done(b->rank);
            n++;
        } else {
            last = b;
            pp = &b->next_free;
        }
    }
    rc.q_tail = last;
    if (n && !rc.q)
        aptus_progress_hold_awake(-1);
    return n;
}

/* The header of a frame of len bytes to e (on the credit path: the credits e owes back). */
static struct rc_hdr hdr_for(const struct rc_ep *e, size_t len)
{
    struct rc_hdr h = { e->hsrc, (uint32_t)len, 0, 0 };
    if (rc.credit_path)
        h.credits = (uint32_t)e->owed;
    return h;
}

/* A frame with that header went (or is queued to go): its credits are spent, what e owed is
 * returned. A credit frame (len 0) costs none: see conn_post_rx. */
static void hdr_sent(struct rc_ep *e, size_t len)
{
    if (!rc.credit_path)
        return;
    if (len)
        e->credits--;
    e->owed = 0;
}

/* Hands b (header + its frame) to the provider: 0, or -FI_EAGAIN / another error. */
static ssize_t tx_go(struct rc_buf *b)
{
    b->ctx.kind = RC_CTX_TX;
    size_t n = sizeof(struct rc_hdr) + b->len;
    ssize_t r = -FI_ENOSYS;
    if (b->bye) {
        /* An idle connection's BYE completes once delivered, not only sent: the peer's provider has
         * then taken every write of ours before it (a window's puts, whose local completion says
         * only that they left), and the closing that waits for it leaves them in place. A provider
         * without the flag sends it plainly (verbs RC: a send completes on the peer's
         * acknowledgement, which follows the writes before it anyway). */
        struct iovec v = { b->data, n };
        void *desc = rc.tx_desc;
        struct fi_msg m = { .msg_iov = &v, .desc = &desc, .iov_count = 1, .addr = 0, .context = &b->ctx };
        r = fi_sendmsg(b->to->ep, &m, FI_COMPLETION | FI_DELIVERY_COMPLETE);
    }
    if (r == -FI_ENOSYS || r == -FI_EBADFLAGS || r == -FI_EOPNOTSUPP)
        r = fi_send(b->to->ep, b->data, n, rc.tx_desc, 0, &b->ctx);
    if (r == 0) {
        rc.ntx_out++;
        rc.st.frames_out++;
    }
    return r;
}

/* Sends the frame in b on e (header flags: RC_HDR_*). Once the frame is in b it goes: when the
 * provider has no room, it waits in the queue (behind any frame already there, so the order
 * holds). */
static int post_tx_flags(struct rc_ep *e, struct rc_buf *b, size_t len, uint32_t flags)
{
    struct rc_hdr h = hdr_for(e, len);
    h.flags = flags;
    hdr_sent(e, len);
    memcpy(b->data, &h, sizeof h);
    b->to = e;
    b->rank = e->rank;
    b->len = len;
    if (len) {
        e->act++;
        aptus_rc_out(e);
    }
    ssize_t r = rc.q ? -FI_EAGAIN : tx_go(b);
    if (r == -FI_EAGAIN) {
        b->next_free = NULL;
        if (rc.q_tail)
            rc.q_tail->next_free = b;
        else
            rc.q = b;
        rc.q_tail = b;
        aptus_progress_hold_awake(rc.q == b ? 1 : 0); /* no wake-up comes for room */
        rc.txo[e->rank]++;
        return APTUS_OK;
    }
    if (r != 0) {
        tx_put(b);
        return APTUS_ERR;
    }
    rc.txo[e->rank]++;
    return APTUS_OK;
}

static int post_tx(struct rc_ep *e, struct rc_buf *b, size_t len)
{
    return post_tx_flags(e, b, len, 0);
}

/* The queue, as far as the provider takes it. */
static int tx_flush(void)
{
    int n = 0;
    while (rc.q) {
        struct rc_buf *b = rc.q;
        ssize_t r = tx_go(b);
        if (r == -FI_EAGAIN)
            break;
        rc.q = b->next_free;
        if (!rc.q) {
            rc.q_tail = NULL;
            aptus_progress_hold_awake(-1);
        }
        if (r != 0)
            tx_failed(b);
        n++;
    }
    return n;
}

/* The credit path: a frame may go while the peer has a buffer free for it. */
static int no_credit(struct rc_ep *e)
{
    if (!rc.credit_path || e->credits > 0)
        return 0;
    rc.st.no_credit++;
    return 1;
}

/* The largest frame (header included) sent by fi_inject, when the provider takes that much. */
#define RC_INJECT_MAX 256

/* Frames a connection sends by fi_inject in a row before one goes buffered and must complete:
 * an inject leaves no completion, and a provider may queue injected frames without bound when
 * the peer stops reading (tcp does: measured, 600000 frames accepted), so the buffered frame's
 * completion -- the provider's queue drained up to it -- is the back-pressure (the send
 * buffers run out when it does not come). */
#define RC_INJECT_RUN 256

/* A small frame goes by fi_inject when no frame waits before it: the provider copies it at
 * once, so it needs no send buffer and leaves no completion to read (a latency-bound exchange
 * of small messages then costs what a raw ping-pong does). 1: it went; 0: it takes the
 * buffered path (too long, frames queued, or the provider has no room now); -1: an error. */
static int tx_inject(struct rc_ep *e, const void *hdr, size_t hdrlen, const void *payload, size_t len)
{
    size_t n = sizeof(struct rc_hdr) + hdrlen + len;
    if (rc.q || n > rc.r.inject_max || n > RC_INJECT_MAX || e->inj <= 0)
        return 0;
    uint64_t frame[RC_INJECT_MAX / sizeof(uint64_t)];
    struct rc_hdr h = hdr_for(e, hdrlen + len);
    char *p = (char *)frame;
    memcpy(p, &h, sizeof h);
    memcpy(p + sizeof h, hdr, hdrlen);
    if (len)
        memcpy(p + sizeof h + hdrlen, payload, len);
    ssize_t r = fi_inject(e->ep, frame, n, 0);
    if (r == -FI_EAGAIN)
        return 0;
    if (r != 0)
        return -1;
    hdr_sent(e, hdrlen + len);
    e->inj--;
    e->act++;
    aptus_rc_out(e);
    rc.st.frames_out++;
    rc.st.injected++;
    return 1;
}

static int rc_send_frame(struct aptus_ep *ep, const void *hdr, size_t hdrlen, const void *payload, size_t len)
{
    struct rc_ep *e = (struct rc_ep *)ep;
    if (hdrlen + len > rc.frame_max)
        return APTUS_ERR;
    if (no_credit(e))
        return APTUS_NORES;
    int inj = tx_inject(e, hdr, hdrlen, payload, len);
    if (inj)
        return inj > 0 ? APTUS_OK : APTUS_ERR;
    struct rc_buf *b = tx_get();
    if (!b)
        return APTUS_NORES;
    char *p = b->data + sizeof(struct rc_hdr);
    memcpy(p, hdr, hdrlen);
    if (len)
        memcpy(p + hdrlen, payload, len);
    return post_tx(e, b, hdrlen + len);
}

static int rc_send_frame_packed(struct aptus_ep *ep, const void *hdr, size_t hdrlen, struct aptus_dt_cursor *cur,
                                size_t len)
{
    struct rc_ep *e = (struct rc_ep *)ep;
    if (hdrlen + len > rc.frame_max)
        return APTUS_ERR;
    if (no_credit(e))
        return APTUS_NORES; /* the cursor moves only when the frame goes */
    struct rc_buf *b = tx_get();
    if (!b)
        return APTUS_NORES;
    char *p = b->data + sizeof(struct rc_hdr);
    memcpy(p, hdr, hdrlen);
    aptus_dt_pack_some(cur, p + hdrlen, len);
    return post_tx(e, b, hdrlen + len);
}

/* ---- connections ------------------------------------------------------------------------ */

static const char *state_name(int s)
{
    static const char *const n[] = {
        "none", "asking", "asked", "connecting", "up", "refused", "closed", "closing (draining)", "closing (BYE sent)"
    };
    return s >= 0 && s <= RC_BYE ? n[s] : "?";
}

int aptus_rc_connected;

static void set_state(int rank, int s)
{
    int old = rc.state[rank];
    if (s == RC_REFUSED && old != RC_REFUSED && rc.tries[rank] < 255)
        rc.tries[rank]++;
    if (old == RC_ASKING || old == RC_ASKED || old == RC_CONNECTING)
        rc.npending--;
    if (old == RC_UP && s != RC_UP && rc.conn[rank])
        aptus_rcs_forget(rc.conn[rank]); /* (before any reroute: its moved state goes) */
    if (old == RC_UP)
        rc.nconn--;
    if (old == RC_DRAIN || old == RC_BYE)
        rc.nclosing--;
    if (s == RC_ASKING || s == RC_ASKED || s == RC_CONNECTING)
        rc.npending++;
    if (s == RC_UP)
        rc.nconn++;
    if (s == RC_DRAIN || s == RC_BYE)
        rc.nclosing++;
    rc.state[rank] = (uint8_t)s;
    aptus_rc_connected = rc.nconn > 0;
}

static int room(void)
{
    return rc.nconn + rc.npending + rc.nclosing < aptus_config.rc_max;
}

/* Closes e's endpoint and frees e. Its own receive buffers (the credit path) are kept until
 * the channel finalizes, marked dead: completions already queued may still name them. */
static void conn_free(struct rc_ep *e)
{
    aptus_rcs_forget(e);
    if (e->ep)
        fi_close(&e->ep->fid);
    e->ep = NULL;
    if (e->rx_mr)
        aptus_fab_mr_close(e->rx_mr);
    e->rx_mr = NULL;
    if (e->rx_pool) {
        for (int i = 0; i < rc.conn_bufs + RC_CREDIT_SLACK; i++)
            ((struct rc_buf *)(e->rx_pool + (size_t)i * rc.stride))->to = NULL;
        char **v = realloc(rc.retired, sizeof *v * (size_t)(rc.nretired + 1));
        if (v) {
            rc.retired = v;
            rc.retired[rc.nretired++] = e->rx_pool;
        } /* else: leaked rather than freed under a completion */
        e->rx_pool = NULL;
    }
    free(e);
}

static int rx_post(struct rc_buf *b);

/* Send buffers registered at most (FI_MR_LOCAL: one pool, allocated at start). */
#define RC_TX_LOCAL_MAX 256

/* rc_setup could not register its buffers (locked memory): the rank goes on without RC. */
#define RC_SETUP_NO_MEMORY (-2)

/* FI_MR_LOCAL: registers a pool of buffers; 0 (also when the provider needs none), or a
 * negative libfabric error code. */
static int pool_reg(void *pool, size_t len, uint64_t access, struct fid_mr **mr, void **desc)
{
    *mr = NULL;
    *desc = NULL;
    if (!rc.r.mr_local)
        return 0;
    uint64_t key, raddr;
    return aptus_fab_rc_mr_reg(&rc.r, pool, len, access, mr, desc, &key, &raddr);
}

/* The credit path: the connection's own receive buffers, posted once its endpoint exists; the
 * peer does the same, so each side starts with conn_bufs credits. Credit frames cost no credit
 * and are owed nothing back (that would make each answer the other's, for ever): two more
 * buffers are posted for them -- a rank sends one only after half its buffers' worth of data
 * frames, so no more than two are in flight -- and one arriving before a buffer is free waits
 * in the connection (the stream of tcp, RNR retries of verbs RC) until the receiver, handing up
 * the frames before it, posts one again. 0, or -1. */
static int conn_post_rx(struct rc_ep *e)
{
    if (!rc.credit_path)
        return 0;
    int n = rc.conn_bufs + RC_CREDIT_SLACK;
    e->rx_pool = aligned_alloc(64, (size_t)n * rc.stride);
    if (!e->rx_pool)
        return -1;
    if (pool_reg(e->rx_pool, (size_t)n * rc.stride, FI_RECV, &e->rx_mr, &e->rx_desc) != 0) {
        rc.st.reg_failed++;
        return -1; /* the connection fails: this peer stays on UD */
    }
    for (int i = 0; i < n; i++) {
        struct rc_buf *b = (struct rc_buf *)(e->rx_pool + (size_t)i * rc.stride);
        b->to = e;
        if (rx_post(b) != 0)
            return -1;
    }
    e->credits = rc.conn_bufs;
    return 0;
}

static struct rc_ep *conn_new(int rank, int initiator)
{
    struct rc_ep *e = calloc(1, sizeof *e);
    if (e) {
        e->rank = rank;
        e->hsrc = (uint32_t)aptus_rt.rank; /* (what the peer's parameters then say) */
        e->initiator = initiator;
        rc.conn[rank] = e;
    }
    return e;
}

static void conn_drop(int rank)
{
    struct rc_ep *e = rc.conn[rank];
    rc.conn[rank] = NULL;
    if (!e)
        return;
    if (!e->handed) {
        conn_free(e);
    } else if (e->ep) {
        fi_close(&e->ep->fid);
        e->ep = NULL;
    }
}

/* The connection to `rank` cannot be had (counted by the caller; the statistics show the
 * peer's state): it stays on UD. */
static void give_up(int rank)
{
    conn_drop(rank);
    set_state(rank, RC_REFUSED);
}

/* The RC address of `rank`: a rank's from the launcher's key-value space, another job's process's
 * from its card. 0, or -1 (it has none). */
static int addr_of(int rank, char *addr, size_t *alen)
{
    if (rank < aptus_rt.size)
        return rc.dyn ? -1 : aptus_fab_card_get(RC_CARD, rank, addr, alen);
    const struct aptus_proc_card *c = aptus_proc_foreign(rank);
    if (!c || c->rclen == 0 || c->rclen > *alen)
        return -1;
    memcpy(addr, c->rcaddr, c->rclen);
    *alen = c->rclen;
    return 0;
}

/* Whether a connection to `rank` may be had at all: a rank of this job (when RC started with it),
 * or another job's process that gave an RC address. */
static int connectable(int rank)
{
    if (rank < aptus_rt.size)
        return !rc.dyn;
    const struct aptus_proc_card *c = aptus_proc_foreign(rank);
    return c && c->rclen > 0;
}

static int send_ctl(int rank, uint8_t type);

static void connect_to(int rank, int asked)
{
    char addr[APTUS_FAB_ADDR_MAX];
    size_t alen = sizeof addr;
    struct rc_ep *e = conn_new(rank, 1);
    if (!e || addr_of(rank, addr, &alen) != 0) {
        rc.st.failed++;
        give_up(rank);
        return;
    }
    struct rc_param prm = { RC_MAGIC, rc.job, (uint32_t)aptus_rt.rank, (uint32_t)rank };
    int r = aptus_fab_rc_connect(&rc.r, addr, alen, &prm, sizeof prm, e, &e->ep);
    if (r == 0 && conn_post_rx(e) != 0)
        r = -FI_ENOMEM;
    if (r != 0) {
        rc.st.failed++;
        give_up(rank);
        return;
    }
    set_state(rank, RC_CONNECTING);
    /* Unasked (the peer did not want it yet), the peer may have nothing of RC to make it read its
     * connection events: it is told (a lost HELLO only leaves the request waiting for its next
     * look, or its own want of the connection). */
    if (!asked && send_ctl(rank, RC_F_HELLO) == APTUS_NORES) {
        e->hello_owed = 1; /* (sent from progress: no room on UD now) */
        rc.ask_retry = 1;
    }
}

int aptus_rc_ctl(int rank, const void *frame, size_t len)
{
    struct aptus_peer *p = aptus_peer_get(rank);
    struct aptus_ep *ep = p ? aptus_peer_ep(p, APTUS_CH_UD_SR) : NULL;
    if (!ep)
        return APTUS_ERR;
    return ep->ch->send_frame(ep, frame, len, NULL, 0);
}

static int send_ctl(int rank, uint8_t type)
{
    uint8_t f[8] = { type };
    return aptus_rc_ctl(rank, f, sizeof f);
}

/* Whether the path to `rank` loses packets (channel/ud/ud_loss.c): its messages are off the
 * connections, and none is asked for. */
static int lossy(int rank)
{
    return aptus_peer_lossy && aptus_peer_lossy(rank);
}

/* This rank wants a connection to `rank` (the threshold was reached). */
static void want(int rank)
{
    if (rc.state[rank] != RC_NONE || lossy(rank) || !connectable(rank))
        return;
    if (!room()) {
        rc.st.refused_limit++;
        set_state(rank, RC_REFUSED);
        return;
    }
    if (aptus_proc_before(aptus_rt.rank, rank)) {
        connect_to(rank, 0);
        return;
    }
    /* The lower rank connects: ask it. */
    int r = send_ctl(rank, RC_F_ASK);
    if (r == APTUS_ERR) {
        rc.st.failed++;
        set_state(rank, RC_REFUSED);
        return;
    }
    set_state(rank, r == APTUS_NORES ? RC_ASKING : RC_ASKED); /* ASKING: sent from progress */
    if (r == APTUS_NORES)
        rc.ask_retry = 1;
}

/* Messages before the next try: the rule's threshold, doubled after each refusal (a peer that
 * was refused is asked again later, in case the refusal was a moment's contention: both sides
 * holding their last slot for attempts of their own), 256 times it at most. After RC_TRIES_MAX
 * refusals a peer is asked no more -- unless idle connections close (APTUS_CHANNEL_IDLE): slots
 * then come free for good, and a refused peer is asked again for as long as the job runs. */
static uint32_t threshold(int rank, int rule)
{
    unsigned t = rc.tries[rank] < 8 ? rc.tries[rank] : 8;
    uint32_t n = (uint32_t)rc.alloc.rule[rule].threshold << t;
    return n > 65535 ? 65535 : n;
}

#define WHY_FP 255 /* rc.why: an allocation rule naming rc-fp asked (for the connection under it) */

/* The allocation hook (channel.h): a message to or from p, of a size some allocation rule takes
 * (aptus_alloc_min: the others are not seen here). Only messages that this rank's
 * route to p sends over UD count (not those of peers reached by self or smp, nor of peers
 * connected or being connected); the first allocation rule that takes the message counts it,
 * and at its threshold the connection is asked for. The rules naming rc-fp count the messages
 * of peers without a fast path (rc_fp.c), connected or not: a fast path needs a connection, so
 * when one of them reaches its threshold the connection is asked for first. */
static void alloc_note(struct aptus_peer *p, uint64_t bytes)
{
    int rank = p->world_rank;
    /* (not counted: messages off the connections, and peers that cannot have one) */
    if (!connectable(rank) || lossy(rank))
        return;
    int s = rc.state[rank];
    int ch = -1;
    if (aptus_rcfp_counting()) {
        ch = p->route ? aptus_route_pick(p->route, bytes) : -1;
        /* (a connection refused is asked again by the connection rules, after more messages each
         * time; the fast path follows when it comes up) */
        if (ch > APTUS_CH_SMP && ch != APTUS_CH_RC_FP && aptus_rcfp_note(rank, bytes, s == RC_UP) && s == RC_NONE) {
            rc.why[rank] = WHY_FP;
            want(rank);
            return;
        }
    }
    if (s != RC_NONE && s != RC_REFUSED)
        return;
    if (ch < 0)
        ch = p->route ? aptus_route_pick(p->route, bytes) : -1;
    if (ch != APTUS_CH_UD_SR && ch != APTUS_CH_UD_ZCOPY && ch != APTUS_CH_UD_COPY)
        return;
    if (rc.seen[rank] < UINT32_MAX)
        rc.seen[rank]++;
    int k = aptus_alloc_rules_find_except(&rc.alloc, bytes, aptus_rt.size, APTUS_CH_RC_FP); /* (rc_fp.c: its own) */
    if (k < 0)
        return;
    uint16_t *c = &rc.count[(size_t)k * (size_t)rc.cap + (size_t)rank];
    if (*c < 65535)
        (*c)++;
    if (*c < threshold(rank, k) || (s == RC_REFUSED && rc.tries[rank] >= RC_TRIES_MAX && !(rc.idle_s > 0)))
        return;
    for (int i = 0; i < rc.alloc.n; i++)
        rc.count[(size_t)i * (size_t)rc.cap + (size_t)rank] = 0;
    rc.why[rank] = (uint8_t)(k + 1);
    if (s == RC_REFUSED)
        set_state(rank, RC_NONE);
    want(rank);
}

/* RC_ASK from a higher rank: it wants a connection, which we make. */
static void on_ask(struct aptus_peer *from, const void *frame, size_t len)
{
    (void)frame;
    (void)len;
    int rank = from->world_rank;
    if (rc.refusing) {
        (void)send_ctl(rank, RC_F_NAK);
        return;
    }
    if (!rc.active || aptus_proc_before(rank, aptus_rt.rank))
        return;
    if (!connectable(rank)) {
        (void)send_ctl(rank, RC_F_NAK);
        return;
    }
    int s = rc.state[rank];
    if (s == RC_CONNECTING || s == RC_UP)
        return; /* ours is on its way, or there already */
    if (s == RC_CLOSED || s == RC_DRAIN || s == RC_BYE || !room()) {
        if (s == RC_NONE || s == RC_REFUSED) {
            rc.st.refused_limit++;
            set_state(rank, RC_REFUSED);
        }
        (void)send_ctl(rank, RC_F_NAK); /* lost for room: the asker asks again later */
        return;
    }
    if (s == RC_REFUSED)
        set_state(rank, RC_NONE);
    connect_to(rank, 1);
}

/* RC_HELLO from a lower process: its connection request is on its way (or here). */
#define RC_HELLO_WAIT 10.0 /* seconds the event queue is read on every pass after one */
static void on_hello(struct aptus_peer *from, const void *frame, size_t len)
{
    (void)from, (void)frame, (void)len;
    if (!rc.active)
        return;
    rc.hello++;
    rc.hello_until = aptus_wtime() + RC_HELLO_WAIT;
}

static void on_nak(struct aptus_peer *from, const void *frame, size_t len)
{
    (void)frame;
    (void)len;
    int rank = from->world_rank;
    if (rc.active && rc.state[rank] == RC_ASKED) {
        rc.st.refused_by_peer++;
        set_state(rank, RC_REFUSED);
    }
}

static void up(struct rc_ep *e, const struct aptus_fab_cm_event *ev)
{
    if (e->initiator) { /* the index the peer gives this process: in its accept's parameters */
        struct rc_param prm;
        memset(&prm, 0, sizeof prm);
        memcpy(&prm, ev->param, ev->plen < sizeof prm ? ev->plen : sizeof prm);
        if (prm.magic == RC_MAGIC) {
            e->hsrc = prm.idx;
        } else if (e->rank >= aptus_rt.size) {
            /* (a provider that passes no accept data: another job's process cannot be named) */
            rc.st.failed++;
            give_up(e->rank);
            return;
        }
    }
    set_state(e->rank, RC_UP);
    e->inj = RC_INJECT_RUN;
    e->heard = aptus_wtime();
    if (e->initiator)
        rc.st.opened_by_me++;
    else
        rc.st.opened_by_peer++;
    struct aptus_peer *p = aptus_peer_get(e->rank);
    if (p)
        aptus_peer_reroute(p);
    aptus_rcfp_conn_up(e->rank);
}

static void on_connreq(struct aptus_fab_cm_event *ev)
{
    if (rc.hello > 0)
        rc.hello--;
    if (rc.finishing) { /* the job is ending: no new connection */
        aptus_fab_rc_reject(&rc.r, ev->req);
        return;
    }
    struct rc_param prm;
    memset(&prm, 0, sizeof prm);
    memcpy(&prm, ev->param, ev->plen < sizeof prm ? ev->plen : sizeof prm);
    int rank = -1;
    if (prm.magic == RC_MAGIC && prm.job == rc.job)
        rank = !rc.dyn && prm.rank < (uint32_t)aptus_rt.size ? (int)prm.rank : -1;
    else if (prm.magic == RC_MAGIC)
        rank = aptus_proc_find(prm.job, (int)prm.rank); /* (another job's process this one met) */
    if (rank < 0 || rank == aptus_rt.rank || !aptus_proc_before(rank, aptus_rt.rank) || !connectable(rank)) {
        aptus_fab_rc_reject(&rc.r, ev->req); /* unknown here, or not the lower of the pair */
        return;
    }
    int s = rc.state[rank];
    if (!(s == RC_ASKED || s == RC_ASKING || ((s == RC_NONE || s == RC_REFUSED) && room()))) {
        if (s == RC_NONE || s == RC_REFUSED) {
            rc.st.refused_limit++;
            set_state(rank, RC_REFUSED);
        }
        aptus_fab_rc_reject(&rc.r, ev->req);
        return;
    }
    if (s == RC_REFUSED)
        set_state(rank, RC_NONE);
    struct rc_ep *e = conn_new(rank, 0);
    if (!e) {
        aptus_fab_rc_reject(&rc.r, ev->req);
        give_up(rank);
        return;
    }
    e->hsrc = prm.idx;
    struct rc_param mine = { RC_MAGIC, rc.job, (uint32_t)aptus_rt.rank, (uint32_t)rank };
    int r = aptus_fab_rc_accept(&rc.r, ev->req, &mine, sizeof mine, e, &e->ep);
    if (r == 0 && conn_post_rx(e) != 0)
        r = -FI_ENOMEM;
    if (r != 0) {
        rc.st.failed++;
        give_up(rank);
        return;
    }
    set_state(rank, RC_CONNECTING);
}

/* ---- idle connections (APTUS_CHANNEL_IDLE) ---------------------------------------------- */

/* A connection with nothing over it for APTUS_CHANNEL_IDLE (two idle checks in a row, half that
 * apart, saw no frame either way and no one-sided operation of this rank's) closes, and its slot
 * is free for the next peer the allocation rules choose. Either side may start; a BYE received
 * makes the other side close too, whatever its own traffic: from then on it goes over UD.
 * Closing, on each side: the connection's views leave the peer record, and the peer is routed
 * again -- its messages take UD, the message layer's sequence numbers keeping their order with
 * those still arriving over the connection, and frames of its queue that waited for an RC
 * channel take the route's channel when they go (sendq.c) --; what this side has going over the
 * connection completes (buffered frames, one-sided operations and their notes); then its BYE goes,
 * behind all of it. Each side lets go of the connection once it has the other's BYE (every frame
 * the other sent over it came before) and its own BYE has completed. A connection with anything of
 * rc-fp on it does not start closing: rc-fp gives idle fast paths back first. */

static void closing_del(struct rc_ep *e)
{
    for (struct rc_ep **pp = &rc.closing; *pp; pp = &(*pp)->next_closing)
        if (*pp == e) {
            *pp = e->next_closing;
            return;
        }
}

/* Whether nothing of this side's is on its way over e. */
static int drained(const struct rc_ep *e)
{
    return rc.txo[e->rank] == 0 && !e->rma_out && !e->wait_head && !e->fifo_head;
}

static void start_close(struct rc_ep *e, int asked_here)
{
    int rank = e->rank, views = e->handed;
    set_state(rank, RC_DRAIN);
    e->next_closing = rc.closing;
    rc.closing = e;
    if (asked_here)
        rc.st.idle_closed++;
    else
        rc.st.idle_agreed++;
    e->handed |= RC_HANDED_SELF; /* (the views' closing does not free it) */
    aptus_rcfp_conn_down(rank);
    struct aptus_peer *p = aptus_peer_get(rank);
    if (p) {
        aptus_peer_reroute(p);
        if (views & RC_HANDED_RDMA)
            aptus_peer_ep_close(&e->rdma);
        if (views & RC_HANDED_SR)
            aptus_peer_ep_close(&e->base);
    }
}

/* BYE, buffered (its completion is waited for). 0 when it went, -1 to try again. */
static int send_bye(struct rc_ep *e)
{
    if (no_credit(e))
        return -1;
    struct rc_buf *b = tx_get();
    if (!b)
        return -1;
    uint8_t f[8] = { RC_F_BYE };
    memcpy(b->data + sizeof(struct rc_hdr), f, sizeof f);
    b->bye = 1;
    (void)post_tx(e, b, sizeof f); /* (a failure is the connection's: its end reports it) */
    e->bye_sent = 1;
    set_state(e->rank, RC_BYE);
    return 0;
}

/* Both BYEs are through: the connection goes; the peer starts over on UD (its counts anew). */
static void finish_close(struct rc_ep *e)
{
    int rank = e->rank;
    closing_del(e);
    set_state(rank, RC_NONE);
    for (int i = 0; i < rc.alloc.n; i++)
        rc.count[(size_t)i * (size_t)rc.cap + (size_t)rank] = 0;
    rc.seen[rank] = 0;
    rc.tries[rank] = 0;
    rc.why[rank] = 0;
    aptus_rc_ep_release(e, RC_HANDED_SELF);
}

static int closing_progress(void)
{
    int n = 0;
    for (struct rc_ep *e = rc.closing, *next; e; e = next) {
        next = e->next_closing;
        if (!e->bye_sent && drained(e) && send_bye(e) == 0)
            n++;
        if (e->bye_sent && e->bye_in && rc.txo[e->rank] == 0) {
            finish_close(e);
            n++;
        }
    }
    return n;
}

static void on_bye(struct aptus_peer *from, const void *frame, size_t len)
{
    (void)frame;
    (void)len;
    int rank = from->world_rank;
    struct rc_ep *e = rc.active ? rc.conn[rank] : NULL;
    if (!e)
        return;
    int s = rc.state[rank];
    if (s == RC_UP || s == RC_CONNECTING)
        start_close(e, 0);
    else if (s != RC_DRAIN && s != RC_BYE)
        return;
    e->bye_in = 1;
}

/* Every half APTUS_CHANNEL_IDLE. */
static void idle_check(struct aptus_timer *t)
{
    for (int r = 0; r < aptus_rt.nprocs && !rc.finishing; r++) {
        struct rc_ep *e = rc.conn[r];
        if (!e || rc.state[r] != RC_UP)
            continue;
        if (e->act != e->act_mark) {
            e->act_mark = e->act;
            e->idle_ticks = 0;
        } else if (++e->idle_ticks >= 2 && drained(e) && aptus_rcfp_quiet(r)) {
            start_close(e, 1);
        }
    }
    aptus_timer_arm(t, aptus_wtime() + rc.idle_s / 2);
}

/* A connection went (the other side finished, or died): the peer goes back to UD. While the
 * job runs a dead peer is the launcher's and UD's to report. */
static void closed(struct rc_ep *e)
{
    int rank = e->rank;
    if (rc.conn[rank] != e)
        return;
    if (rc.state[rank] == RC_DRAIN || rc.state[rank] == RC_BYE) {
        if (e->bye_sent) { /* the peer had our BYE: its own is here, or in the completion queue */
            e->shut = 1;
            return;
        }
        /* gone without our BYE (finishing, or dead): what was still going over it is lost */
        closing_del(e);
        rc.st.closed++;
        set_state(rank, RC_CLOSED);
        aptus_rc_ep_release(e, RC_HANDED_SELF);
        return;
    }
    rc.st.closed++;
    set_state(rank, RC_CLOSED);
    aptus_rcfp_conn_down(rank);
    struct aptus_peer *p = aptus_peer_get(rank);
    if (p)
        aptus_peer_reroute(p);
    if (!e->handed) {
        conn_drop(rank);
    } else if (p && !rc.finishing) {
        int views = e->handed; /* each ep_close lets go of one; the last frees e */
        if (views & RC_HANDED_RDMA)
            aptus_peer_ep_close(&e->rdma);
        if (views & RC_HANDED_SR)
            aptus_peer_ep_close(&e->base);
    }
}

static int cm_progress(void)
{
    int ev_n = 0;
    struct aptus_fab_cm_event ev;
    while (aptus_fab_rc_event(&rc.r, &ev) == 1) {
        ev_n++;
        struct rc_ep *e = ev.ctx;
        switch (ev.kind) {
        case APTUS_FAB_CM_CONNREQ: on_connreq(&ev); break;
        case APTUS_FAB_CM_CONNECTED:
            if (e && rc.conn[e->rank] == e && rc.state[e->rank] == RC_CONNECTING)
                up(e, &ev);
            break;
        case APTUS_FAB_CM_SHUTDOWN:
            if (e)
                closed(e);
            break;
        default: /* a refused or failed connection attempt */
            if (e && rc.conn[e->rank] == e) {
                int s = rc.state[e->rank];
                if (s == RC_UP || s == RC_DRAIN || s == RC_BYE) {
                    closed(e);
                } else {
                    rc.st.refused_by_peer++;
                    give_up(e->rank);
                }
            }
            break;
        }
    }
    return ev_n;
}

/* ---- receiving and progress ------------------------------------------------------------- */

static int rx_post(struct rc_buf *b)
{
    b->ctx.kind = RC_CTX_RX;
    if (rc.credit_path) {
        if (!b->to || !b->to->ep)
            return 0; /* its connection is gone: the buffer rests */
        return fi_recv(b->to->ep, b->data, rc.buf_size, b->to->rx_desc, FI_ADDR_UNSPEC, &b->ctx) == 0 ? 0 : -1;
    }
    return fi_recv(rc.r.srx, b->data, rc.buf_size, rc.rx_desc, FI_ADDR_UNSPEC, &b->ctx) == 0 ? 0 : -1;
}

/* The credit path: a header-only frame returning what e owes. 0 when sent or nothing is owed,
 * -1 when it must wait (no send buffer now). */
static int credit_frame(struct rc_ep *e)
{
    if (!e->owed || !e->ep)
        return 0;
    if (rc.state[e->rank] == RC_CONNECTING)
        return -1; /* (the initiator learns the index its headers carry as the connection comes up) */
    struct rc_buf *b = tx_get();
    if (!b)
        return -1;
    rc.st.credit_frames++;
    (void)post_tx(e, b, 0); /* a failure is the connection's: its close reports it */
    return 0;
}

/* After a buffer of e was handed up and posted again: return credits when half the buffers
 * are owed (a frame going back would carry them anyway). */
static void credit_owed(struct rc_ep *e)
{
    e->owed++;
    if (e->owed >= (rc.conn_bufs + 1) / 2 && credit_frame(e) != 0)
        rc.owing = 1;
}

/* Liveness. A connection says nothing when its peer's node is cut off (a TCP connection waits
 * for minutes; a rank blocked in a receive would wait for ever). So a connection silent for
 * ping_s gets a ping over UD, whose reliability engine declares the peer dead after
 * APTUS_PEER_TIMEOUT without an answer -- and the job ends with a message naming it. At most
 * one ping per connection per ping_s, only while it is silent (frames seen coming are counted
 * on the receive path and looked at here: no clock read per frame). */
static void ping_silent(double now)
{
    rc.next_check = now + rc.ping_s / 4;
    for (int r = 0; r < aptus_rt.nprocs; r++) {
        struct rc_ep *e = rc.conn[r];
        if (!e || rc.state[r] != RC_UP)
            continue;
        if (e->rx_frames != e->rx_seen) {
            e->rx_seen = e->rx_frames;
            e->heard = now;
        } else if (now - e->heard > rc.ping_s && send_ctl(r, RC_F_PING) != APTUS_NORES) {
            e->heard = now;
        }
    }
}

static void on_ping(struct aptus_peer *from, const void *frame, size_t len)
{
    (void)from, (void)frame, (void)len; /* the UD engine's acknowledgement is the answer */
}

/* Hands up a received frame; returns 1 for a data frame (its buffer is owed back on the credit
 * path), 0 for a credit frame or one dropped. */
static int rx_handle(struct rc_buf *b, size_t len)
{
    struct rc_hdr h;
    if (len < sizeof h)
        return 0;
    memcpy(&h, b->data, sizeof h);
    if (h.src >= (uint32_t)aptus_rt.nprocs || h.len != len - sizeof h)
        return 0;
    struct rc_ep *e = rc.credit_path ? b->to : rc.conn[h.src];
    if (rc.credit_path && e)
        e->credits += (int)h.credits;
    if (!h.len) { /* a credit frame, or a kick */
        if ((h.flags & RC_HDR_KICK) && e)
            aptus_rcs_kick_in(e);
        return 0;
    }
    struct aptus_peer *p = aptus_peer_get((int)h.src);
    if (!p || p->failed)
        return 1;
    rc.st.frames_in++;
    if (e) {
        e->rx_frames++;
        aptus_rcs_in(e);
        e->act++;
    }
    aptus_am_dispatch(p, b->data + sizeof h, h.len);
    return 1;
}

/* A receive buffer handed up: posted again (and, on the credit path, owed to the peer when a
 * data frame had it). */
static void rx_again(struct rc_buf *b, int data)
{
    struct rc_ep *e = rc.credit_path ? b->to : NULL;
    if (rx_post(b) != 0)
        aptus_abort_job(MPI_ERR_OTHER, "rc-sr: cannot post a receive buffer again");
    if (data && e && e->ep)
        credit_owed(e);
}

/* Connection events are read on every pass while connections are being made, and on one pass
 * in RC_CM_IDLE_PASSES otherwise (a request from a new peer, a connection ending: nothing that
 * a few passes' delay hurts, while reading the event queue costs the frames' latency). */
#define RC_CM_IDLE_PASSES 16
#define RC_CQ_IDLE_PASSES 8
#define RC_CQ_HOT_PASSES  256
static int flushes_check(void);
static int rc_progress(void)
{
    static unsigned pass;
    int events = 0;
    if (rc.npending || rc.nclosing || rc.finishing || rc.hello || (rc.nconn && ++pass % RC_CM_IDLE_PASSES == 0))
        events += cm_progress();
    if (rc.hello && aptus_wtime() > rc.hello_until)
        rc.hello = 0;
    if (rc.q)
        events += tx_flush();
    if (rc.closing)
        events += closing_progress();
    if (rc.owing) {
        rc.owing = 0;
        for (int r = 0; r < aptus_rt.nprocs; r++)
            if (rc.conn[r] && rc.conn[r]->owed >= (rc.conn_bufs + 1) / 2 && credit_frame(rc.conn[r]) != 0)
                rc.owing = 1;
    }
    if (aptus_rcr_waiting)
        events += aptus_rcr_progress();
    if (rc.nconn && !rc.finishing) {
        double now = aptus_wtime();
        aptus_rcs_pass(now);
        if (now >= rc.next_check)
            ping_silent(now);
    }
    if (rc.ask_retry) {
        rc.ask_retry = 0;
        for (int r = 0; r < aptus_rt.nprocs; r++) {
            struct rc_ep *e = rc.conn[r];
            if (rc.state[r] == RC_CONNECTING && e && e->hello_owed) {
                if (send_ctl(r, RC_F_HELLO) == APTUS_NORES)
                    rc.ask_retry = 1;
                else
                    e->hello_owed = 0;
            }
            if (rc.state[r] == RC_ASKING) {
                int s = send_ctl(r, RC_F_ASK);
                if (s == APTUS_NORES)
                    rc.ask_retry = 1;
                else
                    set_state(r, s == APTUS_OK ? RC_ASKED : RC_REFUSED);
            }
        }
    }
    /* Nothing can complete without a connection (made, being made or closing) or a send still
     * out, and reading the queue is what an idle channel costs the other channels' messages
     * (the tcp provider progresses its sockets in it: a system call, 0.5 us a pass without a
     * connection, 2.7 us a round trip with one, docs/BENCHMARKS.md). With connections up but
     * nothing of this rank's in flight and nothing completed lately, a sockets provider's queue
     * is read on one pass in RC_CQ_IDLE_PASSES (its descriptor still wakes a sleeping rank). */
    int busy = rc.npending || rc.nclosing || rc.ntx_out || rc.finishing || aptus_rcr_waiting || rc.q;
    if (!busy && (!rc.nconn || (rc.cq_costly && !rc.cq_hot && ++rc.cq_pass % RC_CQ_IDLE_PASSES != 0)))
        return events + (rc.flushes ? flushes_check() : 0);
    if (rc.cq_hot)
        rc.cq_hot--;
    struct fi_cq_data_entry ent[RC_CQ_BATCH];
    for (;;) {
        ssize_t n = fi_cq_read(rc.r.cq, ent, RC_CQ_BATCH);
        if (n == -FI_EAVAIL) {
            struct fi_cq_err_entry err;
            memset(&err, 0, sizeof err);
            if (fi_cq_readerr(rc.r.cq, &err, 0) != 1)
                break;
            struct aptus_fab_ctx *c = err.op_context;
            if (c && c->kind == RC_CTX_TX) {
                rc.ntx_out--;
                tx_failed((struct rc_buf *)c);
            } else if (c && c->kind == RC_CTX_RMA) {
                aptus_rcr_completion(c, 0);
            } else if (c && c->kind == RC_CTX_RX && !rc.finishing && rx_post((struct rc_buf *)c) != 0) {
                aptus_abort_job(MPI_ERR_OTHER, "rc-sr: cannot post a receive buffer again");
            }
            events++;
            continue;
        }
        if (n <= 0)
            break;
        for (ssize_t i = 0; i < n; i++) {
            struct aptus_fab_ctx *c = ent[i].op_context;
            if (ent[i].flags & FI_REMOTE_CQ_DATA) {
                /* A write's note (rc-rdma); a provider may have used a posted receive for it. */
                if (c && c->kind == RC_CTX_RX && rx_post((struct rc_buf *)c) != 0)
                    aptus_abort_job(MPI_ERR_OTHER, "rc-sr: cannot post a receive buffer again");
                aptus_rdma_noted(ent[i].data);
                continue;
            }
            if (!c)
                continue;
            if (c->kind == RC_CTX_RMA) {
                aptus_rcr_completion(c, 1);
            } else if (c->kind == RC_CTX_RX) {
                int data = rx_handle((struct rc_buf *)c, ent[i].len);
                rx_again((struct rc_buf *)c, data);
            } else {
                int rank = ((struct rc_buf *)c)->rank;
                rc.ntx_out--;
                tx_put((struct rc_buf *)c);
                tx_done(rank);
                if (rc.conn[rank]) /* the provider's queue moved past it: injects may go again */
                    rc.conn[rank]->inj = RC_INJECT_RUN;
            }
        }
        events += (int)n;
        rc.cq_hot = RC_CQ_HOT_PASSES;
        if (n < RC_CQ_BATCH)
            break;
    }
    if (rc.flushes)
        events += flushes_check();
    return events;
}

/* The wait object: the completion queue's and the event queue's descriptors. */
static int rc_wait_arm(void)
{
    struct fid *f[2] = { &rc.r.cq->fid, &rc.r.eq->fid };
    return rc.r.cq_fd < 0 || rc.r.eq_fd < 0 || fi_trywait(rc.r.fabric, f, 2) != FI_SUCCESS;
}

static void rc_wait_disarm(void)
{
}

static int rc_wait_fds(struct pollfd *out, int max)
{
    if (max < 2)
        return 0;
    out[0] = (struct pollfd){ .fd = rc.r.cq_fd, .events = POLLIN };
    out[1] = (struct pollfd){ .fd = rc.r.eq_fd, .events = POLLIN };
    return 2;
}

static const struct aptus_waiter rc_waiter = { rc_wait_arm, NULL, rc_wait_disarm, rc_wait_fds, NULL };

/* ---- endpoints -------------------------------------------------------------------------- */

static int rc_reaches(int world_rank)
{
    return rc.active && world_rank < rc.cap && rc.state[world_rank] == RC_UP;
}

static int rc_ep_open(struct aptus_peer *p, struct aptus_ep **out)
{
    struct rc_ep *e = rc.conn[p->world_rank];
    if (!e || rc.state[p->world_rank] != RC_UP)
        return APTUS_NORES;
    e->handed |= RC_HANDED_SR;
    *out = &e->base;
    return APTUS_OK;
}

/* Whether no buffered frame to `rank` (-1: to any rank) is queued or with the provider. */
static int flushed(int rank)
{
    return rank >= 0 ? rc.txo[rank] == 0 : rc.ntx_out == 0 && !rc.q;
}

/* Complete when every buffered frame handed over before it to the endpoint's rank (ep NULL:
 * to any rank) has completed (frames sent by fi_inject are complete when handed over). */
static int rc_flush(struct aptus_ep *ep, struct aptus_completion *comp)
{
    int rank = ep ? ((struct rc_ep *)ep)->rank : -1;
    if (flushed(rank))
        return APTUS_OK;
    struct rc_flush *f = malloc(sizeof *f);
    if (!f)
        return APTUS_ERR;
    *f = (struct rc_flush){ rc.flushes, rank, comp };
    rc.flushes = f;
    aptus_progress_hold_awake(1); /* a completion, not a wake-up, ends it */
    return APTUS_INPROGRESS;
}

static int flushes_check(void)
{
    int done = 0;
    for (struct rc_flush **pp = &rc.flushes; *pp;) {
        struct rc_flush *f = *pp;
        if (!flushed(f->rank)) {
            pp = &f->next;
            continue;
        }
        *pp = f->next;
        aptus_progress_hold_awake(-1);
        aptus_completion_done(f->comp, APTUS_OK);
        free(f);
        done++;
    }
    return done;
}

static void rc_ep_close(struct aptus_ep *ep)
{
    aptus_rc_ep_release((struct rc_ep *)ep, RC_HANDED_SR);
}

void aptus_rc_ep_release(struct rc_ep *e, int view)
{
    e->handed &= ~view;
    if (e->handed)
        return;
    if (rc.active && q_drop(e))
        tx_lost(e->rank);
    if (rc.active && aptus_rcr_ep_drop(e))
        aptus_rc_lost(e->rank, "a one-sided operation over its connection was lost (the connection broke)");
    if (rc.active && rc.conn[e->rank] == e)
        rc.conn[e->rank] = NULL;
    conn_free(e);
}

/* ---- life cycle ------------------------------------------------------------------------- */

/* Whether a send rule names an RC channel that some peer may take (the same answer on every
 * rank): the job spans nodes, or (a test of RC on one node) an RC rule comes before an
 * unconditional smp rule ends the chain for every other rank. */
int aptus_rc_wanted(void)
{
    if (aptus_rt.size < 2)
        return 0;
    int named = 0, before_smp = 0, smp_ends = 0;
    for (int i = 0; i < aptus_rules.n; i++) {
        int c = aptus_rules.rule[i].channel;
        if (c == APTUS_CH_RC_SR || c == APTUS_CH_RC_RDMA || c == APTUS_CH_RC_FP) {
            named = 1;
            before_smp |= !smp_ends;
        }
        if (c == APTUS_CH_SMP && aptus_rules.rule[i].unconditional)
            smp_ends = 1;
    }
    if (!named)
        return 0;
    for (int r = 0; r < aptus_rt.size; r++)
        if (aptus_rt.node_of[r] != aptus_rt.node)
            return 1;
    return before_smp;
}

int aptus_rc_rule_names(int chan)
{
    for (int i = 0; i < aptus_rules.n; i++)
        if (aptus_rules.rule[i].channel == chan)
            return 1;
    return 0;
}

struct aptus_fab_rc *aptus_rc_fabric(void)
{
    return rc.active ? &rc.r : NULL;
}

struct rc_ep *aptus_rc_up(int rank)
{
    return rc.active && rank < rc.cap && rc.state[rank] == RC_UP ? rc.conn[rank] : NULL;
}

int aptus_rc_finishing(void)
{
    return rc.finishing;
}

int aptus_rc_closing(int rank)
{
    if (!rc.active || rank >= rc.cap || (rc.state[rank] != RC_DRAIN && rc.state[rank] != RC_BYE))
        return 0;
    const struct aptus_peer *p = aptus_rt.peers[rank];
    return !p || !p->failed; /* (a failed peer's close never completes: nothing to wait for) */
}

int aptus_rc_kick(struct rc_ep *e)
{
    if (!e->ep || rc.state[e->rank] != RC_UP)
        return 0;
    struct rc_buf *b = tx_get();
    if (!b)
        return -1;
    (void)post_tx_flags(e, b, 0, RC_HDR_KICK); /* a failure is the connection's: its close reports it */
    return 0;
}

int aptus_rc_queued(int rank)
{
    return rank < rc.cap && rc.txo[rank] > 0;
}

int aptus_rc_frame(struct rc_ep *e, const void *hdr, size_t hdrlen, const void *payload, size_t len)
{
    return rc_send_frame(&e->base, hdr, hdrlen, payload, len);
}

int aptus_rc_frame_packed(struct rc_ep *e, const void *hdr, size_t hdrlen, struct aptus_dt_cursor *cur, size_t len)
{
    return rc_send_frame_packed(&e->base, hdr, hdrlen, cur, len);
}

const struct aptus_chan_caps *aptus_rc_frame_caps(void)
{
    return &aptus_channel_rc_sr.caps;
}

/* The settings that need no provider: the allocation rules (their grammar, and thresholds
 * without @N from APTUS_RC_THRESHOLD). */
static int rc_check(char *err, size_t errlen)
{
    struct aptus_rule_chain alloc;
    return aptus_alloc_rules_parse(aptus_config.alloc_rules, aptus_config.rc_threshold, &alloc, err, errlen);
}

static int rc_setup(char *err, size_t errlen)
{
    /* The ranges of APTUS_RC_* are checked with the configuration (config_vars.def); a buffer
     * must hold the message layer's header twice over, as the range of APTUS_RC_BUF_SIZE says. */
    if (aptus_config.rc_buf_size < 2 * RC_HEADER_ROOM) {
        snprintf(err, errlen, "APTUS_RC_BUF_SIZE=%zu is below %d (the range in config_vars.def is wrong)",
                 aptus_config.rc_buf_size, 2 * RC_HEADER_ROOM);
        return -1;
    }
    /* The completion queue's descriptor only for a rank that may sleep: the provider writes
     * to it on every completion (measured: 1-byte rc-sr latency 6.7 -> 5.6 us without). */
    if (aptus_fab_rc_open(&rc.r, aptus_config.fabric_rc_provider, aptus_config.fabric_iface, aptus_config.rc_srx,
                          aptus_wait_blocks, err, errlen) != 0)
        return -1;
    if (rc.r.mr_local && (rc.r.mr_mode & FI_MR_ENDPOINT)) {
        snprintf(err, errlen,
                 "provider %s needs memory regions bound to each endpoint (FI_MR_ENDPOINT): not implemented for "
                 "connected endpoints",
                 rc.r.prov);
        return -1;
    }
    /* Without a shared receive context (the provider has none, or APTUS_RC_SRX=0): receive
     * buffers per connection, and credits. */
    rc.credit_path = rc.r.srx == NULL;
    rc.conn_bufs = aptus_config.rc_conn_bufs;
    if ((size_t)rc.conn_bufs > rc.r.rx_depth)
        rc.conn_bufs = (int)rc.r.rx_depth;
    /* A third of the peer timeout, at most 10 s: a cut-off peer is found within about
     * APTUS_PEER_TIMEOUT + ping_s. */
    rc.ping_s = aptus_config.peer_timeout / 3.0;
    if (rc.ping_s > 10)
        rc.ping_s = 10;
    if (rc.ping_s < 0.1)
        rc.ping_s = 0.1;
    rc.buf_size = aptus_config.rc_buf_size;
    if (rc.buf_size > rc.r.max_msg)
        rc.buf_size = rc.r.max_msg;
    rc.frame_max = rc.buf_size - sizeof(struct rc_hdr);
    rc.stride = (sizeof(struct rc_buf) + rc.buf_size + 63) & ~(size_t)63;
    rc.nrx = (size_t)aptus_config.rc_recv_bufs > rc.r.rx_depth ? (int)rc.r.rx_depth : aptus_config.rc_recv_bufs;
    if (rc.credit_path)
        rc.nrx = 0; /* no shared pool */
    size_t n = (size_t)aptus_rt.procs_cap;
    rc.cap = aptus_rt.procs_cap;
    if (aptus_alloc_rules_parse(aptus_config.alloc_rules, aptus_config.rc_threshold, &rc.alloc, err, errlen) != 0)
        return -1;
    rc.state = calloc(n, 1);
    rc.count = calloc(n * (size_t)rc.alloc.n, sizeof *rc.count);
    rc.seen = calloc(n, sizeof *rc.seen);
    rc.why = calloc(n, 1);
    rc.tries = calloc(n, 1);
    rc.txo = calloc(n, sizeof *rc.txo);
    rc.conn = calloc(n, sizeof *rc.conn);
    rc.rx_pool = rc.nrx ? aligned_alloc(64, (size_t)rc.nrx * rc.stride) : NULL;
    rc.tx_cap = rc.r.tx_depth;
    if (rc.r.mr_local) {
        if (rc.tx_cap > RC_TX_LOCAL_MAX)
            rc.tx_cap = RC_TX_LOCAL_MAX;
        rc.tx_pool = aligned_alloc(64, rc.tx_cap * rc.stride);
    }
    if (!rc.state || !rc.count || !rc.seen || !rc.why || !rc.tries || !rc.txo || !rc.conn || (rc.nrx && !rc.rx_pool) ||
        (rc.r.mr_local && !rc.tx_pool)) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int reg = rc.nrx ? pool_reg(rc.rx_pool, (size_t)rc.nrx * rc.stride, FI_RECV, &rc.rx_mr, &rc.rx_desc) : 0;
    if (reg == 0 && rc.tx_pool)
        reg = pool_reg(rc.tx_pool, rc.tx_cap * rc.stride, FI_SEND, &rc.tx_mr, &rc.tx_desc);
    if (reg != 0) {
        snprintf(err, errlen,
                 "cannot register %zu bytes of send and receive buffers (%s; ulimit -l, APTUS_FABRIC_REG_LIMIT?)",
                 ((size_t)rc.nrx + rc.tx_cap) * rc.stride, aptus_fab_strerror(reg));
        return RC_SETUP_NO_MEMORY;
    }
    for (int i = 0; i < rc.nrx; i++)
        if (rx_post((struct rc_buf *)(rc.rx_pool + (size_t)i * rc.stride)) != 0) {
            snprintf(err, errlen, "cannot post receive buffer %d", i);
            return -1;
        }
    return 0;
}

static void rc_release(void)
{
    for (int r = 0; rc.conn && r < rc.cap; r++)
        if (rc.conn[r]) {
            struct rc_ep *e = rc.conn[r];
            rc.conn[r] = NULL;
            e->handed &= ~RC_HANDED_SELF; /* (closing while idle: nothing else holds it) */
            if (!e->handed) {
                conn_free(e);
            } else if (e->ep) {
                fi_close(&e->ep->fid);
                e->ep = NULL;
            }
        }
    /* Connection requests still queued (a peer that asked as the job ended): answered, so that
     * the provider frees what it made for them. */
    struct aptus_fab_cm_event ev;
    while (rc.r.eq && aptus_fab_rc_event(&rc.r, &ev) == 1)
        if (ev.kind == APTUS_FAB_CM_CONNREQ)
            aptus_fab_rc_reject(&rc.r, ev.req);
    if (rc.rx_mr)
        aptus_fab_mr_close(rc.rx_mr);
    if (rc.tx_mr)
        aptus_fab_mr_close(rc.tx_mr);
    aptus_fab_rc_close(&rc.r);
    for (int i = 0; i < rc.nretired; i++)
        free(rc.retired[i]);
    free(rc.retired);
    free(rc.rx_pool);
    free(rc.state);
    free(rc.count);
    free(rc.seen);
    free(rc.why);
    aptus_alloc_hook = NULL;
    aptus_alloc_min = 0;
    free(rc.tries);
    while (rc.flushes) { /* the channel ends with them waiting: what they wait for is lost */
        struct rc_flush *f = rc.flushes;
        rc.flushes = f->next;
        aptus_progress_hold_awake(-1);
        aptus_completion_done(f->comp, APTUS_ERR);
        free(f);
    }
    free(rc.txo);
    free(rc.conn);
    if (rc.q)
        aptus_progress_hold_awake(-1);
    while (rc.q) {
        struct rc_buf *b = rc.q;
        rc.q = b->next_free;
        if (!rc.tx_pool)
            free(b);
    }
    while (rc.tx_free) {
        struct rc_buf *b = rc.tx_free;
        rc.tx_free = b->next_free;
        if (!rc.tx_pool)
            free(b);
    }
    free(rc.tx_pool);
    memset(&rc, 0, sizeof rc);
    aptus_rc_connected = 0;
}

static void rc_set_caps(void)
{
    struct aptus_chan_caps *c = &aptus_channel_rc_sr.caps;
    c->flags = APTUS_CAP_ORDERED | APTUS_CAP_RELIABLE | APTUS_CAP_CONNECTED;
    c->frame_max = rc.frame_max;
    c->chunk = rc.frame_max - RC_HEADER_ROOM;
    c->eager_max = c->chunk;
    c->put_max = c->get_max = 0;
    c->iov_max = 0;
}

static void rc_activate(void);

static int rc_init(void)
{
    aptus_rcs_setup();
    aptus_am_register(RC_F_ASK, on_ask);
    aptus_am_register(RC_F_NAK, on_nak);
    aptus_am_register(RC_F_PING, on_ping);
    aptus_am_register(RC_F_BYE, on_bye);
    aptus_am_register(RC_F_HELLO, on_hello);
    if (!aptus_rc_wanted())
        return APTUS_OK;
    char err[640];
    rc.job = aptus_job_hash();
    int setup = rc_setup(err, sizeof err);
    if (setup == 0 && aptus_fab_card_put(RC_CARD, rc.r.addr, rc.r.addrlen) != 0) {
        snprintf(err, sizeof err, "cannot publish this rank's RC address");
        setup = -1;
    }
    if (setup == RC_SETUP_NO_MEMORY) {
        /* No card published: peers that try to connect fail and keep this rank on UD (a
         * counted fallback); its own requests are answered with a refusal. */
        fprintf(stderr, "Aptus MPI: rank %d: rc-sr channel: %s: this rank's traffic stays on UD\n", aptus_rt.rank, err);
        rc_release();
        rc.refusing = 1;
        return aptus_pmi_fence() == 0 ? APTUS_OK : APTUS_ERR;
    }
    if (setup != 0) {
        aptus_startup_error("rank %d: rc-sr channel: %s", aptus_rt.rank, err); /* as a rule every rank's */
        rc_release();
        return APTUS_ERR;
    }
    if (aptus_pmi_fence() != 0) {
        fprintf(stderr, "Aptus MPI: rank %d: rc-sr channel: the launcher's key-value space failed\n", aptus_rt.rank);
        rc_release();
        return APTUS_ERR;
    }
    rc_activate();
    return APTUS_OK;
}

/* The channel runs (set up: with the job, or for other jobs' processes). */
static void rc_activate(void)
{
    rc.active = 1;
    /* (a chain that sends small messages over the connections keeps reading at every pass:
     * their latency, and the stall detection's view of when frames came, rc_stall.c) */
    rc.cq_costly = (!strcmp(rc.r.prov, "tcp") || !strcmp(rc.r.prov, "sockets") || !strncmp(rc.r.prov, "tcp;", 4)) &&
                   !aptus_rc_rule_names(APTUS_CH_RC_SR) && !aptus_rc_rule_names(APTUS_CH_RC_FP);
    aptus_alloc_min = UINT64_MAX;
    for (int i = 0; i < rc.alloc.n; i++)
        if (aptus_rt.size >= rc.alloc.rule[i].ranks_min && aptus_rt.size <= rc.alloc.rule[i].ranks_max &&
            rc.alloc.rule[i].size_min < aptus_alloc_min)
            aptus_alloc_min = rc.alloc.rule[i].size_min;
    aptus_alloc_hook = alloc_note;
    rc_set_caps();
    aptus_channel_poll_enable(&aptus_channel_rc_sr, 1);
    if (rc.r.cq_fd >= 0 && rc.r.eq_fd >= 0)
        aptus_waiter_set(&rc_waiter);
    if (aptus_config.channel_idle > 0) {
        rc.idle_s = aptus_config.channel_idle / 1000.0;
        rc.idle_timer.fire = idle_check;
        aptus_timer_arm(&rc.idle_timer, aptus_wtime() + rc.idle_s / 2);
    }
}

void aptus_rc_card(struct aptus_proc_card *c)
{
    c->rclen = 0;
    if (!rc.active && !rc.refusing && !rc.dyn_tried &&
        (aptus_rc_rule_names(APTUS_CH_RC_SR) || aptus_rc_rule_names(APTUS_CH_RC_RDMA) ||
         aptus_rc_rule_names(APTUS_CH_RC_FP))) {
        /* This job runs no RC channel (it is on one node): started now, for other jobs' processes
         * alone (no card of this job's ranks exists, and they need none: they share the node). */
        char err[640];
        rc.job = aptus_job_hash();
        rc.dyn = 1;
        if (rc_setup(err, sizeof err) != 0) {
            fprintf(stderr,
                    "Aptus MPI: rank %d: rc-sr channel for other jobs' processes: %s: they are reached over UD\n",
                    aptus_rt.rank, err);
            rc_release();
        } else {
            rc_activate();
            aptus_rcr_dyn_start();
            aptus_rcfp_dyn_start();
        }
        rc.dyn_tried = 1;
    }
    if (!rc.active || rc.r.addrlen > sizeof c->rcaddr)
        return;
    memcpy(c->rcaddr, rc.r.addr, rc.r.addrlen);
    c->rclen = (uint32_t)rc.r.addrlen;
}

/* After the last barrier of MPI_Finalize: sends still in the provider's hands complete; from
 * now on a connection that ends is the other side finishing too. */
static void rc_quiesce(void)
{
    if (!rc.active)
        return;
    rc.finishing = 1;
    double t0 = aptus_wtime();
    /* A last header-only frame on every connection, completing once delivered: when it completes,
     * every frame and write of this rank's before it has reached the peer's side. A send completes
     * once the provider has handed it to its socket; a process that ended then could take frames
     * still on their way with it -- its end resets the connection when frames of the peer's (a
     * kick) are still unread there, and what its kernel still had to send is dropped. */
    for (int r = 0; r < aptus_rt.nprocs; r++) {
        struct rc_ep *e = rc.conn[r];
        if (!e || !e->ep || rc.state[r] != RC_UP)
            continue;
        struct rc_buf *b = tx_get();
        while (!b && aptus_wtime() - t0 < 5) {
            rc_progress(); /* (send buffers come back as sends complete) */
            b = tx_get();
        }
        if (b && (rc.conn[r] != e || !e->ep || rc.state[r] != RC_UP)) {
            tx_put(b);
            b = NULL;
        }
        if (b) {
            b->bye = 1;
            (void)post_tx(e, b, 0);
        }
    }
    while ((rc.ntx_out > 0 || rc.q || aptus_rcr_busy()) && aptus_wtime() - t0 < 5)
        rc_progress();
}

static void rc_finalize(void)
{
    rc.refusing = 0;
    rc.dyn_tried = 0;
    aptus_rcs_finalize();
    if (!rc.active)
        return;
    aptus_channel_poll_enable(&aptus_channel_rc_sr, 0);
    rc.finishing = 1;
    if (rc.idle_s > 0)
        aptus_timer_cancel(&rc.idle_timer);
    rc_release();
}

/* Bytes of send buffers: the registered pool whole (FI_MR_LOCAL), else those made so far. */
static size_t tx_bytes(void)
{
    return rc.tx_pool ? rc.tx_cap * rc.stride : (size_t)rc.ntx * (sizeof(struct rc_buf) + rc.buf_size);
}

static size_t rc_memory(void)
{
    if (!rc.active)
        return 0;
    size_t pool = (size_t)(rc.conn_bufs + RC_CREDIT_SLACK) * rc.stride;
    size_t per_conn = sizeof(struct rc_ep) + (rc.credit_path ? pool : 0);
    return (size_t)rc.nrx * rc.stride + tx_bytes() + (size_t)(rc.nconn + rc.npending + rc.nclosing) * per_conn +
           (size_t)rc.nretired * pool +
           (size_t)rc.cap *
               (3 + sizeof *rc.seen + sizeof *rc.txo + (size_t)rc.alloc.n * sizeof *rc.count + sizeof *rc.conn);
}

static void rc_stats_print(void)
{
    if (!rc.active)
        return;
    printf("[aptus stats] rank %d: rc-sr: connections opened %" PRIu64 " by this rank, %" PRIu64
           " by peers, up %d; refused by the limit (APTUS_RC_MAX=%d) %" PRIu64 ", by peers %" PRIu64 ", failed %" PRIu64
           ", closed %" PRIu64 " (when idle %" PRIu64 " asked here, %" PRIu64 " by peers)"
           "; frames out %" PRIu64 " (%" PRIu64 " injected), in %" PRIu64
           "; memory: receive pool %zu, send buffers %zu%s%s\n",
           aptus_rt.rank, rc.st.opened_by_me, rc.st.opened_by_peer, rc.nconn, aptus_config.rc_max, rc.st.refused_limit,
           rc.st.refused_by_peer, rc.st.failed, rc.st.closed, rc.st.idle_closed, rc.st.idle_agreed, rc.st.frames_out,
           rc.st.injected, rc.st.frames_in, (size_t)rc.nrx * rc.stride, tx_bytes(),
           rc.st.frames_in && rc.st.frames_out ? " (frames both ways)" : "",
           rc.st.refused_limit ? " (limit reached)" : "");
    aptus_rcs_stats_print();
    if (rc.credit_path)
        printf("[aptus stats] rank %d: rc-sr: credit path (no shared receive context): %d receive buffers per "
               "connection (%zu bytes each connection); frames held for credits %" PRIu64 ", credit frames %" PRIu64
               "\n",
               aptus_rt.rank, rc.conn_bufs, (size_t)(rc.conn_bufs + RC_CREDIT_SLACK) * rc.stride, rc.st.no_credit,
               rc.st.credit_frames);
    else
        printf("[aptus stats] rank %d: rc-sr: shared receive context: %d buffers of %zu bytes for every connection\n",
               aptus_rt.rank, rc.nrx, rc.buf_size);
    if (rc.r.mr_local)
        printf("[aptus stats] rank %d: rc-sr: send and receive buffers registered (FI_MR_LOCAL%s): %zu send buffers "
               "at most; registrations failed %" PRIu64 "\n",
               aptus_rt.rank, aptus_config.fabric_mr_local ? ", forced by APTUS_FABRIC_MR_LOCAL" : "", rc.tx_cap,
               rc.st.reg_failed);
    for (int r = 0; r < aptus_rt.nprocs; r++) {
        if (rc.state[r] == RC_NONE)
            continue;
        char why[96];
        if (rc.why[r] == WHY_FP) {
            snprintf(why, sizeof why, "this rank asked after %u messages, for a fast path (an rc-fp allocation rule)",
                     rc.seen[r]);
        } else if (rc.why[r]) {
            const struct aptus_rule *a = &rc.alloc.rule[rc.why[r] - 1];
            snprintf(why, sizeof why, "this rank asked after %u messages, allocation rule %d (%s@%d)", rc.seen[r],
                     rc.why[r], aptus_channel_name(a->channel), a->threshold);
        } else {
            snprintf(why, sizeof why, "the peer asked (after %u messages here)", rc.seen[r]);
        }
        char other[64] = "";
        const struct aptus_proc_card *c = aptus_proc_foreign(r);
        if (c)
            snprintf(other, sizeof other, " (rank %d of job %08x)", c->rank, c->job);
        printf("[aptus stats] rank %d: rc-sr: peer %d%s %s%s: %s\n", aptus_rt.rank, r, other, state_name(rc.state[r]),
               rc.tries[r] ? " (after refusals)" : "", why);
    }
}

static int rc_counter(const char *name, uint64_t *value)
{
    if (!rc.active)
        return -1;
    const struct aptus_counter t[] = { { "rc.connections", (uint64_t)rc.nconn },
                                       { "rc.opened", rc.st.opened_by_me + rc.st.opened_by_peer },
                                       { "rc.refused_limit", rc.st.refused_limit },
                                       { "rc.frames_out", rc.st.frames_out },
                                       { "rc.frames_injected", rc.st.injected },
                                       { "rc.frames_in", rc.st.frames_in },
                                       { "rc.idle_closed", rc.st.idle_closed + rc.st.idle_agreed },
                                       { "rc.idle_closed_here", rc.st.idle_closed },
                                       { "rc.closing", (uint64_t)rc.nclosing } };
    if (aptus_counter_lookup(t, sizeof t / sizeof t[0], name, value) == 0)
        return 0;
    return aptus_rcs_counter(name, value);
}

/* The statistics document (channel/stats_json.h): what rc_stats_print prints. */
void aptus_rc_stats_json(struct aptus_json *j)
{
    if (!rc.active)
        return;
    aptus_json_object(j, "rc-sr");
    aptus_json_object(j, "connections");
    aptus_json_u64(j, "opened_here", rc.st.opened_by_me);
    aptus_json_u64(j, "opened_by_peers", rc.st.opened_by_peer);
    aptus_json_int(j, "up", rc.nconn);
    aptus_json_int(j, "limit", aptus_config.rc_max);
    aptus_json_u64(j, "refused_by_limit", rc.st.refused_limit);
    aptus_json_u64(j, "refused_by_peers", rc.st.refused_by_peer);
    aptus_json_u64(j, "failed", rc.st.failed);
    aptus_json_u64(j, "closed", rc.st.closed);
    aptus_json_u64(j, "closed_idle_here", rc.st.idle_closed);
    aptus_json_u64(j, "closed_idle_by_peers", rc.st.idle_agreed);
    aptus_json_close(j);
    aptus_json_u64(j, "frames_out", rc.st.frames_out);
    aptus_json_u64(j, "frames_injected", rc.st.injected);
    aptus_json_u64(j, "frames_in", rc.st.frames_in);
    aptus_json_object(j, "memory");
    aptus_json_u64(j, "receive_pool", (uint64_t)rc.nrx * rc.stride);
    aptus_json_u64(j, "send_buffers", tx_bytes());
    aptus_json_close(j);
    if (rc.credit_path) {
        aptus_json_object(j, "credit_path");
        aptus_json_int(j, "buffers_per_connection", rc.conn_bufs);
        aptus_json_u64(j, "bytes_per_connection", (uint64_t)(rc.conn_bufs + RC_CREDIT_SLACK) * rc.stride);
        aptus_json_u64(j, "frames_held_for_credits", rc.st.no_credit);
        aptus_json_u64(j, "credit_frames", rc.st.credit_frames);
        aptus_json_close(j);
    } else {
        aptus_json_object(j, "shared_receive");
        aptus_json_int(j, "buffers", rc.nrx);
        aptus_json_u64(j, "buffer_bytes", rc.buf_size);
        aptus_json_close(j);
    }
    if (rc.r.mr_local) {
        aptus_json_object(j, "registered_buffers");
        aptus_json_bool(j, "forced", aptus_config.fabric_mr_local);
        aptus_json_u64(j, "send_buffers_max", rc.tx_cap);
        aptus_json_u64(j, "registrations_failed", rc.st.reg_failed);
        aptus_json_close(j);
    }
    aptus_json_close(j);
}

/* A peer's connection, when it has (had) one: its state, who asked and why (the "rc-sr: peer"
 * lines), and how often its small messages moved off it (rc_stall.c). */
void aptus_rc_peer_json(struct aptus_json *j, int rank)
{
    if (!rc.active || rc.state[rank] == RC_NONE)
        return;
    aptus_json_object(j, "rc");
    aptus_json_string(j, "state", state_name(rc.state[rank]));
    aptus_json_int(j, "refusals", rc.tries[rank]);
    aptus_json_string(j, "asked_by", rc.why[rank] ? "this rank" : "the peer");
    aptus_json_u64(j, "after_messages", rc.seen[rank]);
    if (rc.why[rank] == WHY_FP) {
        aptus_json_string(j, "rule_channel", "rc-fp");
    } else if (rc.why[rank]) {
        const struct aptus_rule *a = &rc.alloc.rule[rc.why[rank] - 1];
        aptus_json_int(j, "rule", rc.why[rank]);
        aptus_json_string(j, "rule_channel", aptus_channel_name(a->channel));
        aptus_json_int(j, "rule_threshold", a->threshold);
    }
    const struct rc_ep *e = aptus_rc_up(rank);
    aptus_json_int(j, "moves", e ? e->moves : 0);
    aptus_json_close(j);
}

struct aptus_channel aptus_channel_rc_sr = {
    .name = "rc-sr",
    .init = rc_init,
    .check = rc_check,
    .finalize = rc_finalize,
    .quiesce = rc_quiesce,
    .reaches = rc_reaches,
    .ep_open = rc_ep_open,
    .ep_close = rc_ep_close,
    .send_frame = rc_send_frame,
    .send_frame_packed = rc_send_frame_packed,
    .flush = rc_flush,
    .progress = rc_progress,
    .memory_in_use = rc_memory,
    .stats_print = rc_stats_print,
    .counter = rc_counter,
};

#else
typedef int aptus_rc_unused;
#endif
