/* rc-fp: the RC fast path (seeds 000 section 3, 003). For each peer with a fast path this rank
 * owns memory (a block) that the peer fills with RDMA writes over its RC connection; this rank
 * polls the blocks it owns (a list: only peers with a fast path). Two layouts
 * (APTUS_RCFP_DESIGN), the same code around them:
 *  - veloblock (the default): one Veloblock block (channel/fastpath/veloblock.h, the same format
 *    and code as smp's blocks). The sender keeps the block's positions and its credits, never a
 *    copy of the block: each frame goes as one image -- the zero word that resets the next
 *    frame's trailer slot, the frame, the trailer whose flag is the image's last byte -- by one
 *    write (rc-rdma's put, over the same connection), staged in a ring of the process's.
 *  - fixed, fixed-reduced (the paper's baseline): cells of 8 KiB (channel/fastpath/fixedcell.h),
 *    32 of them or 2, filled from the top with a head and a tail word; the sender keeps a mirror
 *    of the receiver's cells and writes each frame from it.
 *
 * Placement: the design needs the flag to land after the rest of its image, and a WRAP's two
 * words after every earlier write. The tcp provider receives a write off the connection's
 * stream into the target buffer in address order and in the order the writes were posted, only
 * while the target's process drives the provider (rc-sr's poller reads the completion queue in
 * every progress pass: that is when the bytes land, and this channel's poller looks after it).
 * verbs on InfiniBand places one write's bytes in address order and the writes of a connection
 * in order in practice (not a promise of the specification); docs/DESIGN.md, "RC fast path".
 *
 * No room: a frame that finds no room in the block (no credits, no free cell) goes over the
 * connection's send/receive path instead (rc-sr's frames), wrapped in FP_VIA, which says how many
 * frames were written into the block before it: the receiver takes those from the block first
 * (they have landed: the connection delivers in order). The sender writes into the block again
 * only once the receiver has said (FP_CREDIT) that it took every FP_VIA frame, so the peer sees
 * the frames in the order they were sent.
 *
 * Life cycle: a fast path is asked for (FP_ASK) when the allocation rules that name rc-fp
 * (APTUS_ALLOC_RULES) count enough messages to the peer, with an RC connection up (asked for
 * first when there is none); without such rules, when a connection comes up. The peer, if it owns
 * fewer than APTUS_RCFP_MAX blocks, allocates and registers one and answers with its address and
 * key (FP_GRANT), else refuses (FP_REFUSE); a refused peer is asked again after twice as many
 * messages. Credits are bytes (fixed: a cell's bytes per cell): the receiver returns them by a
 * frame over the connection (FP_CREDIT) once half of the block is free again, or at once when a
 * sender out of room asks (FP_CREDIT_ASK), or in the trailers of its own frames to the sender. A
 * connection that goes takes its fast paths with it. */
#ifdef APTUS_HAVE_LIBFABRIC

#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fabric.h>
#include <rdma/fi_rma.h>

#include "channel/channel.h"
#include "channel/fastpath/fixedcell.h"
#include "channel/fastpath/veloblock.h"
#include "channel/rc/rc_int.h"
#include "channel/stats_json.h"
#include "core/datatype.h"
#include "runtime/config.h"
#include "runtime/json.h"
#include "runtime/progress.h"

enum { DESIGN_VELOBLOCK, DESIGN_FIXED };
#define FX_CELL       8192u /* the paper's cell */
#define FX_CELLS      32u   /* fixed: 32 cells (256 KiB each way) */
#define FX_CELLS_LESS 2u    /* fixed-reduced: 2 cells (16 KiB each way: 32 KiB a pair, Veloblock's) */

/* Control frames, over the RC connection (rc-sr's frames). */
struct fp_ctl {
    uint8_t type;
    uint8_t design; /* FP_ASK, FP_GRANT: the asker's / the block's layout (DESIGN_*) */
    uint8_t pad[2];
    uint32_t size; /* FP_GRANT: block bytes; FP_CREDIT: FP_VIA frames taken */
    uint64_t addr; /* FP_GRANT: the block's remote address; FP_CREDIT: bytes freed */
    uint64_t key;  /* FP_GRANT: its key */
};

/* A frame that found no room in the block, over the connection: this, then the frame. */
struct fp_via {
    uint8_t type;
    uint8_t pad[3];
    uint32_t via;    /* its number among the sender's FP_VIA frames (from 1) */
    uint64_t before; /* frames written into the block before it */
};
#define FP_HDR_MAX 64 /* the message layer's headers at most */

enum { FP_NONE, FP_ASKING, FP_ASKED, FP_READY, FP_REFUSED };

struct fp_tx;
struct fx_slot { /* fixed: a cell of the mirror while its write is in flight */
    struct aptus_completion comp;
    struct fp_tx *tx;
    int busy;
};

/* A fast path of this rank's to a peer: the sender's side. */
struct fp_tx {
    struct aptus_ep ep; /* first */
    int rank;
    const struct rc_ep *conn; /* the connection it was granted on (identity only) */
    struct vb_sender vb;      /* veloblock: the block's positions */
    _Atomic uint64_t freed;   /* the receiver's credits, from FP_CREDIT */
    uint64_t raddr, rkey;
    uint32_t size;      /* the block's bytes */
    int credit_asked;   /* an FP_CREDIT_ASK is out */
    int open;           /* handed to the peer record */
    uint32_t via_sent;  /* FP_VIA frames sent ... */
    uint32_t via_acked; /* ... and those the receiver said it took (block writes wait till equal) */
    uint64_t blk_sent;  /* frames written into the block */
    uint8_t *mirror;    /* fixed: the receiver's cells, as the sender wrote them */
    struct aptus_memh *mirror_mh;
    struct fx_slot *slot; /* fixed: per cell */
    int inflight;         /* fixed: writes from the mirror not completed */
    int dead;             /* fixed: the connection went; freed when the last write completes */
    uint8_t stamp;        /* fixed: the last head's stamp */
    int released;         /* given back (idle): its frames go over the connection as they are */
    uint64_t idle_mark;   /* frames sent, at the last idle check */
    int idle_ticks;       /* checks since it last sent */
    int give_back;        /* the receiver asked for the block back (to size it anew) */
};

/* A block of this rank's that a peer writes: the receiver's side. */
struct fp_rx {
    int rank;
    const struct rc_ep *conn;
    uint8_t *block;
    struct aptus_memh *mh;
    struct vb_receiver vb;            /* veloblock */
    struct vb_ctrl ctrl;              /* the credits (ctrl.freed), sent to the peer by FP_CREDIT */
    uint64_t sent;                    /* the last credits sent */
    int asked;                        /* the sender is out of room and asked */
    uint32_t next;                    /* fixed: the cell the next frame lands in */
    uint64_t taken;                   /* frames taken from the block */
    uint32_t via_seen;                /* FP_VIA frames taken ... */
    uint32_t via_told;                /* ... and as last told to the sender */
    uint32_t size;                    /* the block's bytes */
    uint64_t bytes_taken, bytes_mark; /* APTUS_RCFP_MEMORY: its traffic, and at the last look */
    int resize_wait;                  /* looks before it may be resized again */
};

/* Staging for the images (veloblock): one ring per process, registered once, made at the first
 * grant; a write's image stays until its write completes. */
struct stage_hdr {
    struct aptus_completion comp;
    uint32_t bytes; /* of the whole entry, header included */
    uint32_t done;
    struct fp_tx *tx; /* NULL: filler or a wrap word */
};
/* Entries are multiples of the header's size: a filler header always fits before the end. */
#define STAGE_HDR        ((uint32_t)((sizeof(struct stage_hdr) + 15) & ~(size_t)15))
#define STAGE_ROUND(len) (((size_t)(len) + STAGE_HDR - 1) / STAGE_HDR * STAGE_HDR)

static struct {
    int active;
    int cap;              /* entries of the per-peer arrays (every process index) */
    int design;           /* DESIGN_* */
    uint32_t block;       /* bytes of a block (fixed: cells x cell) */
    uint32_t cells, cell; /* fixed */
    int max;
    int split;             /* APTUS_RCFP_FLAG=separate */
    uint32_t inject_max;   /* images sent by fi_inject_write at most (0: none) */
    uint8_t *state;        /* per world rank: FP_* of this rank's fast path to it */
    struct fp_tx **tx;     /* per world rank */
    struct fp_rx **rx;     /* per world rank: the block it writes, if any */
    struct fp_rx **polled; /* the blocks polled */
    struct fp_reply {
        int rank;
        uint8_t type; /* RC_F_FP_GRANT or RC_F_FP_REFUSE */
        uint32_t size;
        uint64_t raddr, rkey;
    } * reply; /* answers to send again (no room on the connection) */
    int nreply, reply_cap;
    int npolled, ntx, asking, asked_out; /* asking: to ask again (no room); asked_out: unanswered */
    /* allocation: the rules naming rc-fp (none: every connection asks when it comes up) */
    struct aptus_rule_chain rules;
    uint16_t *count;     /* per rule and world rank: messages counted */
    uint8_t *tries;      /* per world rank: refusals so far */
    uint8_t *wanted;     /* per world rank: the rules asked for a fast path (the connection first) */
    struct fp_tx **live; /* the fast paths in use (the idle checks go through them) */
    int nlive;
    double idle_s; /* APTUS_CHANNEL_IDLE (0: never) */
    struct aptus_timer idle_timer;
    size_t budget, owned; /* APTUS_RCFP_MEMORY (0: one size) and the bytes of the blocks owned */
    uint32_t *want_size;  /* budget: per world rank, the size its next block should have */
    struct aptus_timer size_timer;
    int give_backs; /* fast paths whose receiver asked for them back, not yet given */
    uint8_t *ring;
    size_t ring_size, head, tail; /* monotonic */
    struct aptus_memh *ring_mh;
    struct {
        uint64_t frames, bytes, injected, no_room, credits_sent, credits_piggybacked, credit_asks, wraps, granted,
            refused, asked, received, via, msgs, msgs_via, refused_here, released, returned, resized;
    } st;
} fp;

/* ---- staging ---------------------------------------------------------------------------- */

static void stage_retire(void)
{
    while (fp.tail < fp.head) {
        struct stage_hdr *h = (struct stage_hdr *)(fp.ring + fp.tail % fp.ring_size);
        if (!h->done)
            break;
        fp.tail += h->bytes;
    }
}

static void stage_done(struct aptus_completion *c)
{
    struct stage_hdr *h = (struct stage_hdr *)c;
    h->done = 1;
    if (c->status != APTUS_OK && h->tx) {
        struct aptus_peer *p = aptus_peer_get(h->tx->rank);
        if (p)
            aptus_peer_fail(p, &aptus_channel_rc_fp, "a fast-path write over its connection failed");
    }
    stage_retire();
}

/* The ring, at the first grant (a process with no fast path has none). 0, or -1. */
static int stage_setup(void)
{
    if (fp.ring)
        return 0;
    size_t size = 4 * (size_t)fp.block > ((size_t)64 << 10) ? 4 * (size_t)fp.block : (size_t)64 << 10;
    uint64_t raddr, rkey;
    if (!(fp.ring = aligned_alloc(64, size)))
        return -1;
    if (aptus_channel_rc_rdma.mem_reg(fp.ring, size, &fp.ring_mh, &raddr, &rkey) != APTUS_OK) {
        free(fp.ring);
        fp.ring = NULL;
        return -1;
    }
    fp.ring_size = size;
    return 0;
}

/* Whether an image of `bytes` can be staged now, with a wrap's two words before it and the
 * fillers that keep entries contiguous (each shorter than the entry after it). */
static int stage_room(uint32_t bytes)
{
    stage_retire();
    size_t n = STAGE_HDR + STAGE_ROUND(bytes), word = STAGE_HDR + STAGE_ROUND(8);
    return fp.ring_size - (fp.head - fp.tail) >= 2 * n + 4 * word;
}

/* An entry of `bytes` (stage_room said there is room); returns its data. */
static uint8_t *stage_get(uint32_t bytes, struct fp_tx *tx, struct stage_hdr **out)
{
    uint32_t n = (uint32_t)(STAGE_HDR + STAGE_ROUND(bytes));
    size_t at = fp.head % fp.ring_size;
    if (at + n > fp.ring_size) { /* not contiguous: a filler to the end */
        struct stage_hdr *f = (struct stage_hdr *)(fp.ring + at);
        f->bytes = (uint32_t)(fp.ring_size - at);
        f->done = 1;
        f->tx = NULL;
        fp.head += f->bytes;
        at = 0;
    }
    struct stage_hdr *h = (struct stage_hdr *)(fp.ring + at);
    h->comp = (struct aptus_completion){ stage_done, 1, APTUS_OK };
    h->bytes = n;
    h->done = 0;
    h->tx = tx;
    fp.head += n;
    *out = h;
    return (uint8_t *)h + STAGE_HDR;
}

/* Writes `len` bytes from data (registered: the ring or a mirror) at offset `at` of tx's block:
 * one write, or (split: APTUS_RCFP_FLAG=separate) all but the last word, then the last word --
 * the flag -- by a write of its own. A piece not handed over completes comp failed (its owner
 * fails the peer). */
static int image_write(struct fp_tx *tx, struct aptus_completion *comp, uint8_t *data, uint32_t len, uint64_t at,
                       int split)
{
    struct rc_ep *e = aptus_rc_up(tx->rank);
    int n = split && len > VB_ALIGN ? 2 : 1, failed = 0;
    comp->count = n;
    for (int i = 0; i < n; i++) {
        uint32_t off = i ? len - VB_ALIGN : 0, l = n == 1 ? len : i ? VB_ALIGN : len - VB_ALIGN;
        struct iovec v = { data + off, l };
        int r = e && e == tx->conn ? aptus_channel_rc_rdma.put(&e->rdma, &v, 1, tx->raddr + at + off, tx->rkey, comp)
                                   : APTUS_ERR;
        if (r != APTUS_INPROGRESS) {
            failed = 1;
            aptus_completion_done(comp, APTUS_ERR);
        }
    }
    return failed ? APTUS_ERR : APTUS_OK;
}

/* vb's WRAP words (the top slot's zero, then the marker), in order after the frames before. */
static void put_word(void *ctx, uint32_t end, uint64_t word)
{
    struct fp_tx *tx = ctx;
    struct stage_hdr *h;
    uint8_t *d = stage_get(8, tx, &h);
    memcpy(d, &word, 8);
    (void)image_write(tx, &h->comp, d, 8, end - 8, 0); /* (a failure fails the peer: stage_done) */
    if (end != tx->vb.size)
        fp.st.wraps++;
}

/* ---- the fixed design's mirror ---------------------------------------------------------- */

/* The mirror of a fixed fast path given back, once no write from it is in flight. */
static void fx_shrink(struct fp_tx *tx)
{
    if (tx->mirror_mh)
        aptus_channel_rc_rdma.mem_dereg(tx->mirror_mh);
    free(tx->mirror);
    free(tx->slot);
    tx->mirror_mh = NULL;
    tx->mirror = NULL;
    tx->slot = NULL;
}

static void tx_free(struct fp_tx *tx)
{
    fx_shrink(tx);
    free(tx);
}

static void fx_done(struct aptus_completion *c)
{
    struct fx_slot *s = (struct fx_slot *)c;
    struct fp_tx *tx = s->tx;
    s->busy = 0;
    tx->inflight--;
    if (c->status != APTUS_OK && !tx->dead) {
        struct aptus_peer *p = aptus_peer_get(tx->rank);
        if (p)
            aptus_peer_fail(p, &aptus_channel_rc_fp, "a fast-path write over its connection failed");
    }
    if (tx->dead && !tx->inflight)
        tx_free(tx);
    else if (tx->released && !tx->inflight)
        fx_shrink(tx);
}

/* The mirror of tx's cells (registered: the writes go from it). 0, or -1. */
static int fx_setup(struct fp_tx *tx)
{
    uint64_t raddr, rkey;
    if (tx->mirror_mh)
        return 0; /* a fast path given back and granted again before its writes completed: its mirror
                   * may hold older bytes than the new cells' zeros, which no stamp (never 0) can equal */
    fx_shrink(tx);
    tx->slot = calloc(fp.cells, sizeof *tx->slot);
    tx->mirror = aligned_alloc(64, fp.block);
    if (tx->slot && tx->mirror) {
        memset(tx->mirror, 0, fp.block); /* as the receiver's cells start */
        for (uint32_t i = 0; i < fp.cells; i++)
            tx->slot[i].tx = tx;
        if (aptus_channel_rc_rdma.mem_reg(tx->mirror, fp.block, &tx->mirror_mh, &raddr, &rkey) == APTUS_OK)
            return 0;
        tx->mirror_mh = NULL;
    }
    fx_shrink(tx);
    return -1;
}

static void live_del(struct fp_tx *tx)
{
    for (int i = 0; i < fp.nlive; i++)
        if (fp.live[i] == tx) {
            fp.live[i] = fp.live[--fp.nlive];
            return;
        }
}

/* ---- control frames --------------------------------------------------------------------- */

static int ctl_send(int rank, uint8_t type, uint32_t size, uint64_t addr, uint64_t key)
{
    struct rc_ep *e = aptus_rc_up(rank);
    if (!e)
        return APTUS_ERR;
    struct fp_ctl c = { type, (uint8_t)fp.design, { 0 }, size, addr, key };
    return aptus_rc_frame(e, &c, sizeof c, NULL, 0);
}

static void ask(int rank)
{
    int r = ctl_send(rank, RC_F_FP_ASK, 0, 0, 0);
    if (r == APTUS_OK) {
        fp.state[rank] = FP_ASKED;
        fp.asked_out++;
        fp.st.asked++;
    } else if (r == APTUS_NORES) {
        if (fp.state[rank] != FP_ASKING)
            fp.asking++;
        fp.state[rank] = FP_ASKING; /* retried from the poller */
        aptus_channel_poll_enable(&aptus_channel_rc_fp, 1);
        return;
    } else {
        fp.state[rank] = FP_NONE;
    }
}

/* This rank would ask for a fast path to rank now (its connection is up): within the limit it
 * asks, beyond it the peer is refused here (asked again after more messages). */
static void ask_within_limit(int rank)
{
    if (fp.ntx + fp.asking + fp.asked_out < fp.max) {
        ask(rank);
        return;
    }
    fp.st.refused_here++;
    fp.state[rank] = FP_REFUSED;
    if (fp.tries[rank] < 255)
        fp.tries[rank]++;
}

static void rx_free(struct fp_rx *x)
{
    for (int i = 0; i < fp.npolled; i++)
        if (fp.polled[i] == x) {
            fp.polled[i] = fp.polled[--fp.npolled];
            break;
        }
    if (x->mh)
        aptus_channel_rc_rdma.mem_dereg(x->mh);
    free(x->block);
    fp.owned -= x->size;
    fp.rx[x->rank] = NULL;
    free(x);
}

/* The answer to an FP_ASK; one that finds no room on the connection is sent again from the
 * poller (the asker waits for it: its asks count towards its limit until answered). */
static void reply(int rank, uint8_t type, uint32_t size, uint64_t raddr, uint64_t rkey)
{
    if (ctl_send(rank, type, size, raddr, rkey) != APTUS_NORES)
        return; /* sent, or lost with its connection */
    if (fp.nreply == fp.reply_cap) {
        int cap = fp.reply_cap ? 2 * fp.reply_cap : 8;
        struct fp_reply *v = realloc(fp.reply, (size_t)cap * sizeof *v);
        if (!v)
            return; /* out of memory: the asker keeps the next rule for this peer */
        fp.reply = v;
        fp.reply_cap = cap;
    }
    fp.reply[fp.nreply++] = (struct fp_reply){ rank, type, size, raddr, rkey };
    aptus_channel_poll_enable(&aptus_channel_rc_fp, 1);
}

/* Takes rank's answers out of the list (rank -1: sends them all again). */
static void replies_run(int rank)
{
    int n = fp.nreply;
    fp.nreply = 0;
    for (int i = 0; i < n; i++) {
        struct fp_reply a = fp.reply[i];
        if (rank < 0)
            reply(a.rank, a.type, a.size, a.raddr, a.rkey); /* (may put it back, behind the kept ones) */
        else if (a.rank != rank)
            fp.reply[fp.nreply++] = a;
    }
}

#define BLOCK_MIN ((uint32_t)4 << 10)   /* APTUS_RCFP_MEMORY: blocks of 4 KiB ... */
#define BLOCK_MAX ((uint32_t)256 << 10) /* ... to 256 KiB */

/* The bytes of the block rank is granted: APTUS_RCFP_BLOCK, or under a budget the size its
 * traffic asked for (the block's first: APTUS_RCFP_BLOCK), halved while the budget has not room
 * for it; 0: no room even for the smallest. */
static uint32_t grant_size(int rank)
{
    if (!fp.budget)
        return fp.block;
    uint32_t want = fp.want_size[rank] ? fp.want_size[rank] : fp.block;
    size_t left = fp.budget > fp.owned ? fp.budget - fp.owned : 0;
    while (want > left && want > BLOCK_MIN)
        want /= 2;
    return want <= left ? want : 0;
}

static void on_ask(struct aptus_peer *from, const void *frame, size_t len)
{
    struct fp_ctl c;
    int rank = from->world_rank;
    struct rc_ep *e = aptus_rc_up(rank);
    if (!e || len < sizeof c)
        return;
    if (!fp.active) {
        /* (a process of another job whose rules name no rc-fp, or that could not start it: the
         * asker frees its request's slot; lost for room, it waits until the connection goes) */
        (void)ctl_send(rank, RC_F_FP_REFUSE, 0, 0, 0);
        return;
    }
    memcpy(&c, frame, sizeof c);
    if (fp.rx[rank]) /* asked again on a new connection: the old block goes */
        rx_free(fp.rx[rank]);
    struct fp_rx *x = NULL;
    uint64_t raddr = 0, rkey = 0;
    /* (a peer with another layout is refused: APTUS_RCFP_DESIGN differs between the processes) */
    uint32_t size = grant_size(rank);
    if (c.design == fp.design && fp.npolled < fp.max && size &&
        (x = aligned_alloc(64, (sizeof *x + 63) & ~(size_t)63))) {
        memset(x, 0, sizeof *x);
        x->rank = rank;
        x->conn = e;
        x->size = size;
        x->block = aligned_alloc(64, size);
        if (x->block) {
            vb_block_init(x->block, size, &x->ctrl); /* (zeroes it: the fixed cells start empty too) */
            vb_receiver_init(&x->vb, x->block, size, &x->ctrl);
        }
        if (!x->block || aptus_channel_rc_rdma.mem_reg(x->block, size, &x->mh, &raddr, &rkey) != APTUS_OK) {
            free(x->block);
            free(x);
            x = NULL;
        }
    }
    if (!x) {
        fp.st.refused++;
        reply(rank, RC_F_FP_REFUSE, 0, 0, 0);
        return;
    }
    fp.rx[rank] = x;
    fp.polled[fp.npolled++] = x;
    fp.owned += size;
    fp.st.granted++;
    aptus_channel_poll_enable(&aptus_channel_rc_fp, 1);
    reply(rank, RC_F_FP_GRANT, size, raddr, rkey);
}

static int rx_take(struct fp_rx *x, struct aptus_peer *p);

static void on_grant(struct aptus_peer *from, const void *frame, size_t len)
{
    struct fp_ctl c;
    int rank = from->world_rank;
    struct rc_ep *e = aptus_rc_up(rank);
    if (!fp.active || len < sizeof c || !e || fp.state[rank] != FP_ASKED)
        return;
    fp.asked_out--;
    memcpy(&c, frame, sizeof c);
    /* A fast path given back and granted again keeps its record (the peer record may hold it):
     * the frames of the peer's own fast path that landed before this grant are taken first, so
     * that the credits they carry -- of the block given back -- reach the old incarnation. */
    struct fp_tx *tx = fp.tx[rank];
    if (tx) {
        struct fp_rx *x = fp.rx[rank];
        while (x && rx_take(x, from))
            ;
    } else if (!(tx = calloc(1, sizeof *tx))) {
        fp.state[rank] = FP_REFUSED;
        return;
    }
    fp.tx[rank] = tx;
    tx->rank = rank;
    int size_ok =
        fp.design == DESIGN_FIXED ? c.size == fp.block : c.size >= 1024 && c.size <= BLOCK_MAX && c.size % 64 == 0;
    if (c.design != fp.design || !size_ok || (fp.design == DESIGN_VELOBLOCK ? stage_setup() : fx_setup(tx)) != 0) {
        /* (the peer's block stays unused until the connection goes) */
        tx->released = 1;
        fp.state[rank] = FP_REFUSED;
        return;
    }
    tx->conn = e;
    tx->raddr = c.addr;
    tx->rkey = c.key;
    tx->size = c.size;
    atomic_store_explicit(&tx->freed, 0, memory_order_relaxed);
    tx->credit_asked = 0;
    tx->via_sent = tx->via_acked = 0;
    tx->blk_sent = 0;
    tx->released = 0;
    tx->idle_mark = 0;
    tx->idle_ticks = 0;
    if (tx->give_back)
        fp.give_backs--;
    tx->give_back = 0;
    if (fp.design == DESIGN_VELOBLOCK)
        vb_sender_init_remote(&tx->vb, c.size, &tx->freed, put_word, tx);
    fp.state[rank] = FP_READY;
    fp.tries[rank] = 0;
    fp.ntx++;
    fp.live[fp.nlive++] = tx;
    aptus_peer_reroute(from); /* rc-fp reaches it now */
}

static void on_refuse(struct aptus_peer *from, const void *frame, size_t len)
{
    (void)frame;
    (void)len;
    int rank = from->world_rank;
    if (fp.active && fp.state[rank] == FP_ASKED) {
        fp.asked_out--;
        fp.state[rank] = FP_REFUSED;
        if (fp.tries[rank] < 255)
            fp.tries[rank]++;
    }
}

static void on_credit(struct aptus_peer *from, const void *frame, size_t len)
{
    struct fp_ctl c;
    struct fp_tx *tx = fp.active ? fp.tx[from->world_rank] : NULL;
    if (!tx || len < sizeof c)
        return;
    memcpy(&c, frame, sizeof c);
    if (c.addr > atomic_load_explicit(&tx->freed, memory_order_relaxed))
        atomic_store_explicit(&tx->freed, c.addr, memory_order_release);
    if ((int32_t)(c.size - tx->via_acked) > 0)
        tx->via_acked = c.size;
    tx->credit_asked = 0;
}

static void on_credit_ask(struct aptus_peer *from, const void *frame, size_t len)
{
    (void)frame;
    (void)len;
    struct fp_rx *x = fp.active ? fp.rx[from->world_rank] : NULL;
    if (x)
        x->asked = 1; /* answered by the poller once there is something to return */
}

/* Returns the credits of x by a frame when half of the block is free again and no frame going
 * the other way took them, or when its sender asked and there are any, or when it took FP_VIA
 * frames it has not told of (the sender writes into the block again once told). */
static void credit_maybe(struct fp_rx *x)
{
    uint64_t freed = atomic_load_explicit(&x->ctrl.freed, memory_order_relaxed);
    if (x->via_seen == x->via_told && (freed == x->sent || (!x->asked && freed - x->sent < x->size / 2)))
        return;
    if (ctl_send(x->rank, RC_F_FP_CREDIT, x->via_seen, freed, 0) == APTUS_OK) {
        x->sent = freed;
        x->via_told = x->via_seen;
        x->asked = 0;
        fp.st.credits_sent++;
    }
}

/* Credits ride on the frames going the other way (seed 003: piggybacked): a frame's trailer
 * (fixed: its head) carries, in its 16-bit aux, the low 16 bits of the credits (in 8-byte units)
 * of the block its sender owns for the frame's receiver; 0: none. The receiver takes the
 * smallest value not below what it knew with those low bits, if it is at most a block ahead
 * (frames and credit frames travel apart: an older value comes out more than a block ahead and
 * is ignored). */
#define CREDIT_WRAP ((uint64_t)8 << 16)

static uint16_t credit_piggyback(int rank)
{
    struct fp_rx *x = fp.rx[rank];
    if (!x)
        return 0;
    uint64_t freed = atomic_load_explicit(&x->ctrl.freed, memory_order_relaxed);
    uint16_t low = (uint16_t)(freed / 8);
    if (freed == x->sent || !low)
        return 0;
    x->sent = freed;
    fp.st.credits_piggybacked++;
    return low;
}

static void credit_take(struct fp_tx *tx, uint16_t low)
{
    uint64_t cur = atomic_load_explicit(&tx->freed, memory_order_relaxed);
    uint64_t v = (cur & ~(CREDIT_WRAP - 1)) | (uint64_t)low * 8;
    if (v < cur)
        v += CREDIT_WRAP;
    if (v != cur && v - cur <= tx->size) {
        atomic_store_explicit(&tx->freed, v, memory_order_release);
        tx->credit_asked = 0;
    }
}

/* ---- the receiver's side ---------------------------------------------------------------- */

/* Takes the next frame of x's block to the message layer: 1, or 0 when none has landed. */
static int rx_take(struct fp_rx *x, struct aptus_peer *p)
{
    uint32_t len;
    uint16_t aux;
    uint8_t *cell = NULL;
    const void *f;
    if (fp.design == DESIGN_VELOBLOCK)
        f = vb_peek(&x->vb, &len, &aux);
    else
        f = fc_peek(cell = x->block + (size_t)x->next * fp.cell, fp.cell, &len, &aux);
    if (!f)
        return 0;
    if (aux && fp.tx[x->rank])
        credit_take(fp.tx[x->rank], aux);
    struct rc_ep *e = aptus_rc_up(x->rank);
    if (e && e == x->conn)
        aptus_rcs_in(e); /* (rc_stall.c: an answer) */
    aptus_am_dispatch(p, f, len);
    x->bytes_taken += len;
    if (cell) {
        fc_release(cell);
        x->next = x->next + 1 == fp.cells ? 0 : x->next + 1;
        atomic_store_explicit(&x->ctrl.freed, atomic_load_explicit(&x->ctrl.freed, memory_order_relaxed) + fp.cell,
                              memory_order_relaxed);
    } else {
        vb_release(&x->vb);
    }
    x->taken++;
    fp.st.received++;
    return 1;
}

/* Takes x's frames until `n` were taken in all: they have landed (they were written before the
 * frame over the connection being handled, which the connection delivers after them). A peer
 * where they have not is broken: failed, -1. */
static int take_upto(struct fp_rx *x, struct aptus_peer *p, uint64_t n, const char *why)
{
    while (x->taken < n && rx_take(x, p))
        ;
    if (x->taken >= n)
        return 0;
    aptus_peer_fail(p, &aptus_channel_rc_fp, why);
    return -1;
}

/* A frame that found no room in the block: the frames written into the block before it first
 * (they have landed: the connection delivers in order). */
static void on_via(struct aptus_peer *from, const void *frame, size_t len)
{
    struct fp_via v;
    struct fp_rx *x = fp.active ? fp.rx[from->world_rank] : NULL;
    if (len < sizeof v)
        return;
    memcpy(&v, frame, sizeof v);
    if (x) {
        if (take_upto(x, from, v.before,
                      "frames written into its fast-path block before one sent over the connection "
                      "have not landed") != 0)
            return;
        x->via_seen = v.via;
    }
    aptus_am_dispatch(from, (const uint8_t *)frame + sizeof v, len - sizeof v);
}

/* The sender gave its fast path back: the frames it wrote before (addr: how many) are taken,
 * then the block goes and its slot is free for another peer. */
static void on_release(struct aptus_peer *from, const void *frame, size_t len)
{
    struct fp_ctl c;
    struct fp_rx *x = fp.active ? fp.rx[from->world_rank] : NULL;
    if (!x || len < sizeof c)
        return;
    memcpy(&c, frame, sizeof c);
    if (take_upto(x, from, c.addr,
                  "frames written into its fast-path block before it gave the block back have not landed") != 0)
        return;
    fp.st.returned++;
    rx_free(x);
}

/* ---- allocation ------------------------------------------------------------------------- */

static uint32_t fp_threshold(int rank, int rule)
{
    unsigned t = fp.tries[rank] < 8 ? fp.tries[rank] : 8;
    uint32_t n = (uint32_t)fp.rules.rule[rule].threshold << t;
    return n > 65535 ? 65535 : n;
}

int aptus_rcfp_note(int rank, uint64_t bytes, int connected)
{
    int s = fp.state[rank];
    if (s != FP_NONE && s != FP_REFUSED)
        return 0;
    int k = aptus_alloc_rules_find(&fp.rules, bytes, aptus_rt.size);
    if (k < 0)
        return 0;
    uint16_t *c = &fp.count[(size_t)k * (size_t)fp.cap + (size_t)rank];
    if (*c < 65535)
        (*c)++;
    if (*c < fp_threshold(rank, k)) /* (a refused peer is asked again, after more messages each time:
                                     * slots come free as fast paths are given back) */
        return 0;
    for (int i = 0; i < fp.rules.n; i++)
        fp.count[(size_t)i * (size_t)fp.cap + (size_t)rank] = 0;
    fp.wanted[rank] = 1;
    fp.state[rank] = FP_NONE;
    if (!connected)
        return 1; /* the connection first; its coming up asks */
    ask_within_limit(rank);
    return 0;
}

int aptus_rcfp_counting(void)
{
    return fp.active && fp.rules.n > 0;
}

/* ---- idle fast paths ------------------------------------------------------------------- */

/* Gives tx's fast path back (it was idle): FP_RELEASE tells the receiver how many frames went
 * into its block, after which it frees the block; the peer is routed again (its small messages
 * take the next rule), and the record stays as the peer's rc-fp endpoint, its frames going over
 * the connection as they are (frames the message layer had already given to rc-fp). Not while
 * frames wait in the message layer's queue for this peer, or FP_VIA frames are unacknowledged:
 * the next check tries again. 0 when given back. */
static int release(struct fp_tx *tx)
{
    struct aptus_peer *p = aptus_peer_get(tx->rank);
    if (!p || p->queued || tx->via_sent != tx->via_acked)
        return -1;
    if (ctl_send(tx->rank, RC_F_FP_RELEASE, 0, tx->blk_sent, 0) != APTUS_OK)
        return -1;
    tx->released = 1;
    fp.state[tx->rank] = FP_NONE;
    fp.ntx--;
    live_del(tx);
    fp.st.released++;
    if (fp.design == DESIGN_FIXED && !tx->inflight)
        fx_shrink(tx);
    aptus_peer_reroute(p);
    return 0;
}

/* Every half APTUS_CHANNEL_IDLE: a fast path that sent nothing since the check before last is
 * idle. */
static void idle_check(struct aptus_timer *t)
{
    for (int i = 0; i < fp.nlive;) {
        struct fp_tx *tx = fp.live[i];
        uint64_t sent = tx->blk_sent + tx->via_sent;
        if (sent != tx->idle_mark) {
            tx->idle_mark = sent;
            tx->idle_ticks = 0;
        } else if (++tx->idle_ticks >= 2 && release(tx) == 0) {
            continue; /* (live[i] is another now) */
        }
        i++;
    }
    aptus_timer_arm(t, aptus_wtime() + fp.idle_s / 2);
}

/* ---- per-peer block sizes (APTUS_RCFP_MEMORY) ------------------------------------------- */

/* The receiver asked for its block back, to grant one of another size: the fast path is given
 * back (as when idle; when it cannot be yet, from the poller) and asked for again at once. */
static void give_back_now(struct fp_tx *tx)
{
    if (release(tx) != 0)
        return;
    tx->give_back = 0;
    fp.give_backs--;
    fp.wanted[tx->rank] = 0;
    ask_within_limit(tx->rank);
}

static void on_give_back(struct aptus_peer *from, const void *frame, size_t len)
{
    (void)frame;
    (void)len;
    struct fp_tx *tx = fp.active ? fp.tx[from->world_rank] : NULL;
    if (!tx || tx->released || tx->give_back)
        return;
    tx->give_back = 1;
    fp.give_backs++;
    aptus_channel_poll_enable(&aptus_channel_rc_fp, 1);
    give_back_now(tx);
}

static uint32_t pow2_floor(uint64_t v)
{
    uint32_t p = BLOCK_MIN;
    while ((uint64_t)p * 2 <= v && p < BLOCK_MAX)
        p *= 2;
    return p;
}

/* Every 100 ms under a budget: each block's share of the budget follows its share of the bytes
 * that came through the blocks since the last look (4 KiB..256 KiB, a power of two); a block at
 * half or at twice its share is asked back from its sender, who asks again at once and is
 * granted the new size (as much of it as the budget has room for). A block resized waits a
 * second before the next. */
static void size_check(struct aptus_timer *t)
{
    uint64_t total = 0;
    for (int i = 0; i < fp.npolled; i++)
        total += fp.polled[i]->bytes_taken - fp.polled[i]->bytes_mark;
    for (int i = 0; i < fp.npolled; i++) {
        struct fp_rx *x = fp.polled[i];
        uint64_t rate = x->bytes_taken - x->bytes_mark;
        x->bytes_mark = x->bytes_taken;
        if (x->resize_wait > 0) {
            x->resize_wait--;
            continue;
        }
        if (!total)
            continue;
        uint32_t want = pow2_floor((uint64_t)((double)fp.budget * (double)rate / (double)total));
        if (want < 2 * x->size && 2 * want > x->size)
            continue;
        if (ctl_send(x->rank, RC_F_FP_GIVE_BACK, 0, 0, 0) == APTUS_OK) {
            fp.want_size[x->rank] = want;
            x->resize_wait = 10;
            fp.st.resized++;
        }
    }
    aptus_timer_arm(t, aptus_wtime() + 0.1);
}

/* ---- the channel ------------------------------------------------------------------------ */

void aptus_rcfp_conn_up(int rank)
{
    if (!fp.active || fp.state[rank] != FP_NONE || (fp.rules.n && !fp.wanted[rank]))
        return;
    fp.wanted[rank] = 0;
    ask_within_limit(rank);
}

void aptus_rcfp_conn_down(int rank)
{
    if (!fp.active)
        return;
    if (fp.state[rank] == FP_ASKING)
        fp.asking--;
    if (fp.state[rank] == FP_ASKED)
        fp.asked_out--;
    struct fp_tx *tx = fp.tx[rank];
    if (tx) {
        if (tx->open) {
            tx->open = 0;
            aptus_peer_ep_close(&tx->ep);
        }
        /* images still staged forget tx: their completions must not reach the freed record */
        for (size_t o = fp.tail; o < fp.head;) {
            struct stage_hdr *h = (struct stage_hdr *)(fp.ring + o % fp.ring_size);
            if (h->tx == tx)
                h->tx = NULL;
            o += h->bytes;
        }
        fp.tx[rank] = NULL;
        if (tx->give_back)
            fp.give_backs--;
        if (!tx->released) {
            fp.ntx--;
            live_del(tx);
        }
        tx->dead = 1;
        if (!tx->inflight) /* (else the last write's completion frees it) */
            tx_free(tx);
    }
    fp.state[rank] = FP_NONE;
    fp.wanted[rank] = 0;
    replies_run(rank);
    if (fp.rx[rank])
        rx_free(fp.rx[rank]);
}

int aptus_rcfp_quiet(int rank)
{
    if (!fp.active)
        return 1;
    if (fp.state[rank] != FP_NONE && fp.state[rank] != FP_REFUSED)
        return 0;
    const struct fp_tx *tx = fp.tx[rank];
    if (fp.rx[rank] || (tx && (!tx->released || tx->inflight)))
        return 0;
    for (int i = 0; i < fp.nreply; i++)
        if (fp.reply[i].rank == rank)
            return 0;
    return 1;
}

static int fp_reaches(int world_rank)
{
    return fp.active && world_rank < fp.cap && fp.state[world_rank] == FP_READY &&
           aptus_rc_up(world_rank) == fp.tx[world_rank]->conn;
}

static int fp_ep_open(struct aptus_peer *p, struct aptus_ep **out)
{
    if (!fp_reaches(p->world_rank))
        return APTUS_NORES;
    struct fp_tx *tx = fp.tx[p->world_rank];
    tx->open = 1;
    *out = &tx->ep;
    return APTUS_OK;
}

static void fp_ep_close(struct aptus_ep *ep)
{
    ((struct fp_tx *)ep)->open = 0;
}

/* No room: ask the receiver for its credits once (it returns them only by halves otherwise). */
static void no_room(struct fp_tx *tx)
{
    fp.st.no_room++;
    if (!tx->credit_asked && ctl_send(tx->rank, RC_F_FP_CREDIT_ASK, 0, 0, 0) == APTUS_OK) {
        tx->credit_asked = 1;
        fp.st.credit_asks++;
    }
}

/* Whether a frame carries a message (the message layer says), and its bytes. */
static int matched(const void *hdr, uint64_t *bytes)
{
    return aptus_frame_message && aptus_frame_message(hdr, bytes);
}

/* A frame with no room in the block, over the connection (FP_VIA). The per-peer statistics move
 * its message to rc-sr, whose frames it took. */
static int via_send(struct fp_tx *tx, const void *hdr, size_t hdrlen, const void *payload, struct aptus_dt_cursor *cur,
                    size_t len)
{
    struct rc_ep *e = aptus_rc_up(tx->rank);
    if (!e || e != tx->conn || hdrlen > FP_HDR_MAX)
        return APTUS_ERR;
    if (e->wait_head)
        return APTUS_NORES; /* writes into the block wait to be handed over: they go first */
    _Alignas(8) uint8_t h[sizeof(struct fp_via) + FP_HDR_MAX];
    struct fp_via v = { RC_F_FP_VIA, { 0 }, tx->via_sent + 1, tx->blk_sent };
    memcpy(h, &v, sizeof v);
    memcpy(h + sizeof v, hdr, hdrlen);
    int r = cur ? aptus_rc_frame_packed(e, h, sizeof v + hdrlen, cur, len)
                : aptus_rc_frame(e, h, sizeof v + hdrlen, payload, len);
    if (r != APTUS_OK)
        return r;
    tx->via_sent++;
    fp.st.via++;
    uint64_t bytes;
    if (matched(hdr, &bytes)) {
        fp.st.msgs_via++;
        struct aptus_peer *p = aptus_peer_get(tx->rank);
        if (p)
            aptus_peer_recount(p, APTUS_CH_RC_FP, APTUS_CH_RC_SR, bytes);
    }
    return APTUS_OK;
}

/* A small image goes by fi_inject_write when nothing of the connection's waits before it: the
 * provider copies it at once, no staging and no completion to read (its credits bound what the
 * provider may queue). 1: it went; 0: not now (the staged way). */
#define FP_INJECT_MAX 256
static int inject_image(struct fp_tx *tx, const uint8_t *img, uint32_t len, uint64_t at)
{
    struct rc_ep *e = aptus_rc_up(tx->rank);
    if (!e || e != tx->conn || e->wait_head || !e->ep)
        return 0;
    if (fi_inject_write(e->ep, img, len, 0, tx->raddr + at, tx->rkey) != 0)
        return 0;
    fp.st.injected++;
    return 1;
}

static void payload_put(uint8_t *to, const void *hdr, size_t hdrlen, const void *payload, struct aptus_dt_cursor *cur,
                        size_t len)
{
    memcpy(to, hdr, hdrlen);
    if (cur)
        aptus_dt_pack_some(cur, to + hdrlen, len);
    else if (len)
        memcpy(to + hdrlen, payload, len);
}

/* Veloblock: the image is built on the stack when it may be injected, else in the staging ring;
 * a write not handed over fails the peer (stage_done). APTUS_NORES: no room. */
static int vb_frame(struct fp_tx *tx, const void *hdr, size_t hdrlen, const void *payload, struct aptus_dt_cursor *cur,
                    size_t len)
{
    uint32_t total = (uint32_t)(hdrlen + len), ib = vb_image_bytes(total);
    if (!stage_room(ib)) /* (a wrap's words go staged too) */
        return APTUS_NORES;
    int64_t at = vb_reserve_remote(&tx->vb, total);
    if (at < 0)
        return APTUS_NORES;
    uint64_t small[FP_INJECT_MAX / sizeof(uint64_t)];
    struct stage_hdr *h = NULL;
    uint8_t *img = ib <= fp.inject_max ? (uint8_t *)small : stage_get(ib, tx, &h);
    payload_put(img + VB_ALIGN, hdr, hdrlen, payload, cur, len);
    vb_image_seal(img, total, credit_piggyback(tx->rank));
    vb_advance(&tx->vb, total);
    if (!h) {
        if (inject_image(tx, img, ib, (uint64_t)at))
            return APTUS_OK;
        uint8_t *d = stage_get(ib, tx, &h);
        memcpy(d, img, ib);
        img = d;
    }
    return image_write(tx, &h->comp, img, ib, (uint64_t)at, fp.split);
}

/* Fixed: the next cell, when the receiver has freed it and its last write from the mirror is
 * done; the frame is built in the mirror and written from there. APTUS_NORES: no room. */
static int fx_frame(struct fp_tx *tx, const void *hdr, size_t hdrlen, const void *payload, struct aptus_dt_cursor *cur,
                    size_t len)
{
    uint64_t freed = atomic_load_explicit(&tx->freed, memory_order_acquire) / fp.cell;
    uint32_t k = (uint32_t)(tx->blk_sent % fp.cells);
    if (tx->blk_sent - freed >= fp.cells || tx->slot[k].busy)
        return APTUS_NORES;
    uint8_t *cell = tx->mirror + (size_t)k * fp.cell;
    payload_put(cell + FC_WORD, hdr, hdrlen, payload, cur, len);
    uint32_t ib = fc_seal(cell, (uint32_t)(hdrlen + len), credit_piggyback(tx->rank), &tx->stamp);
    uint64_t at = (uint64_t)k * fp.cell;
    if (ib <= fp.inject_max && inject_image(tx, cell, ib, at))
        return APTUS_OK;
    struct fx_slot *s = &tx->slot[k];
    s->busy = 1;
    s->comp = (struct aptus_completion){ fx_done, 1, APTUS_OK };
    tx->inflight++;
    return image_write(tx, &s->comp, cell, ib, at, fp.split);
}

/* A frame: into the block, or over the connection when the block has no room for it (or
 * frames sent that way are not yet known to be taken). */
static int send_frame(struct fp_tx *tx, const void *hdr, size_t hdrlen, const void *payload,
                      struct aptus_dt_cursor *cur, size_t len)
{
    if (tx->released) { /* (given back: the receiver took its block's frames already) */
        struct rc_ep *e = aptus_rc_up(tx->rank);
        if (!e)
            return APTUS_ERR;
        int r = cur ? aptus_rc_frame_packed(e, hdr, hdrlen, cur, len) : aptus_rc_frame(e, hdr, hdrlen, payload, len);
        uint64_t bytes;
        struct aptus_peer *p;
        if (r == APTUS_OK && matched(hdr, &bytes) && (p = aptus_peer_get(tx->rank)))
            aptus_peer_recount(p, APTUS_CH_RC_FP, APTUS_CH_RC_SR, bytes);
        return r;
    }
    if (tx->via_sent == tx->via_acked) {
        int r = fp.design == DESIGN_VELOBLOCK ? vb_frame(tx, hdr, hdrlen, payload, cur, len)
                                              : fx_frame(tx, hdr, hdrlen, payload, cur, len);
        if (r != APTUS_NORES) {
            tx->blk_sent++; /* (a write not handed over has failed the peer) */
            struct rc_ep *e = aptus_rc_up(tx->rank);
            if (e && e == tx->conn)
                aptus_rc_out(e); /* (rc_stall.c: what comes back answers it) */
            fp.st.frames++;
            fp.st.bytes += hdrlen + len;
            uint64_t bytes;
            if (matched(hdr, &bytes))
                fp.st.msgs++;
            return r;
        }
        no_room(tx);
    }
    return via_send(tx, hdr, hdrlen, payload, cur, len);
}

static int fp_send_frame(struct aptus_ep *ep, const void *hdr, size_t hdrlen, const void *payload, size_t len)
{
    return send_frame((struct fp_tx *)ep, hdr, hdrlen, payload, NULL, len);
}

static int fp_send_frame_packed(struct aptus_ep *ep, const void *hdr, size_t hdrlen, struct aptus_dt_cursor *cur,
                                size_t len)
{
    return send_frame((struct fp_tx *)ep, hdr, hdrlen, NULL, cur, len);
}

/* The writes are rc-rdma's operations on the connection: its flush waits for them. */
static int fp_flush(struct aptus_ep *ep, struct aptus_completion *comp)
{
    if (!ep)
        return aptus_channel_rc_rdma.flush(NULL, comp);
    struct fp_tx *tx = (struct fp_tx *)ep;
    struct rc_ep *e = aptus_rc_up(tx->rank);
    if (!e || e != tx->conn)
        return APTUS_ERR;
    return aptus_channel_rc_rdma.flush(&e->rdma, comp);
}

/* The blocks this rank owns (their bytes landed while rc-sr's poller drove the provider, in this
 * pass or an earlier one), and the asks that found no room. */
static int fp_progress(void)
{
    int seen = 0;
    for (int i = 0; i < fp.npolled; i++) {
        struct fp_rx *x = fp.polled[i];
        struct aptus_peer *p = aptus_peer_get(x->rank);
        int budget = 32;
        while (budget-- && rx_take(x, p))
            seen++;
        credit_maybe(x);
    }
    if (fp.nreply)
        replies_run(-1);
    for (int i = 0; fp.give_backs && i < fp.nlive; i++)
        if (fp.live[i]->give_back)
            give_back_now(fp.live[i]); /* (live[i] may be another now: the next pass sees it) */
    if (fp.asking)
        for (int r = 0; r < aptus_rt.nprocs && fp.asking; r++)
            if (fp.state[r] == FP_ASKING) {
                fp.asking--;
                fp.state[r] = FP_NONE;
                if (aptus_rc_up(r))
                    ask(r);
            }
    return seen;
}

static void fp_release(void)
{
    if (fp.ring_mh)
        aptus_channel_rc_rdma.mem_dereg(fp.ring_mh);
    free(fp.state);
    free(fp.tx);
    free(fp.rx);
    free(fp.reply);
    free(fp.polled);
    free(fp.live);
    free(fp.want_size);
    free(fp.ring);
    free(fp.count);
    free(fp.tries);
    free(fp.wanted);
    memset(&fp, 0, sizeof fp);
}

static int fp_init(void)
{
    aptus_am_register(RC_F_FP_ASK, on_ask);
    aptus_am_register(RC_F_FP_GRANT, on_grant);
    aptus_am_register(RC_F_FP_REFUSE, on_refuse);
    aptus_am_register(RC_F_FP_CREDIT, on_credit);
    aptus_am_register(RC_F_FP_CREDIT_ASK, on_credit_ask);
    aptus_am_register(RC_F_FP_VIA, on_via);
    aptus_am_register(RC_F_FP_RELEASE, on_release);
    aptus_am_register(RC_F_FP_GIVE_BACK, on_give_back);
    if (fp.active || !aptus_rc_rule_names(APTUS_CH_RC_FP) || !aptus_rc_fabric() || !aptus_rcr_active() ||
        aptus_config.rcfp_max == 0)
        return APTUS_OK;
    const struct aptus_fab_rc *r = aptus_rc_fabric();
    if (!(r->msg_order & FI_ORDER_WAW)) {
        /* a WRAP's words and the frames after it would land in any order */
        fprintf(stderr,
                "Aptus MPI: rank %d: rc-fp channel: provider %s does not keep RDMA writes in order (FI_ORDER_WAW): "
                "no fast path, small messages take the next rule\n",
                aptus_rt.rank, r->prov);
        return APTUS_OK;
    }
    int n = aptus_rt.procs_cap; /* (per process index: the ranks, then other jobs' processes) */
    fp.cap = n;
    fp.split = !strcmp(aptus_config.rcfp_flag, "separate");
    fp.inject_max = fp.split ? 0 : r->inject_max < FP_INJECT_MAX ? (uint32_t)r->inject_max : FP_INJECT_MAX;
    fp.design = strcmp(aptus_config.rcfp_design, "veloblock") ? DESIGN_FIXED : DESIGN_VELOBLOCK;
    if (fp.design == DESIGN_FIXED) {
        fp.cell = FX_CELL;
        fp.cells = strcmp(aptus_config.rcfp_design, "fixed") ? FX_CELLS_LESS : FX_CELLS;
        fp.block = fp.cell * fp.cells;
    } else {
        fp.block = (uint32_t)aptus_config.rcfp_block;
    }
    fp.max = aptus_config.rcfp_max;
    fp.budget = fp.design == DESIGN_VELOBLOCK ? aptus_config.rcfp_memory : 0; /* (fixed cells: one size) */
    char err[256];
    struct aptus_rule_chain all;
    (void)aptus_alloc_rules_parse(aptus_config.alloc_rules, aptus_config.rc_threshold, &all, err, sizeof err);
    for (int i = 0; i < all.n; i++) /* (checked at start-up) */
        if (all.rule[i].channel == APTUS_CH_RC_FP)
            fp.rules.rule[fp.rules.n++] = all.rule[i];
    fp.state = calloc((size_t)n, 1);
    fp.tx = calloc((size_t)n, sizeof *fp.tx);
    fp.rx = calloc((size_t)n, sizeof *fp.rx);
    fp.polled = calloc((size_t)fp.max, sizeof *fp.polled);
    fp.live = calloc((size_t)fp.max, sizeof *fp.live);
    if (fp.budget)
        fp.want_size = calloc((size_t)n, sizeof *fp.want_size);
    fp.tries = calloc((size_t)n, 1);
    fp.wanted = calloc((size_t)n, 1);
    fp.count = calloc((size_t)n * (size_t)(fp.rules.n ? fp.rules.n : 1), sizeof *fp.count);
    if (!fp.state || !fp.tx || !fp.rx || !fp.polled || !fp.live || (fp.budget && !fp.want_size) || !fp.tries ||
        !fp.wanted || !fp.count) {
        fprintf(stderr, "Aptus MPI: rank %d: rc-fp channel: out of memory for its state: no fast path\n",
                aptus_rt.rank);
        fp_release();
        return APTUS_OK;
    }
    struct aptus_chan_caps *c = &aptus_channel_rc_fp.caps;
    const struct aptus_chan_caps *f = aptus_rc_frame_caps();
    c->flags = APTUS_CAP_ORDERED | APTUS_CAP_RELIABLE | APTUS_CAP_CONNECTED;
    c->frame_max =
        fp.design == DESIGN_FIXED ? fc_max_payload(fp.cell) : vb_max_payload(fp.budget ? BLOCK_MAX : fp.block);
    if (c->frame_max > f->frame_max - sizeof(struct fp_via)) /* (room for FP_VIA's header over rc-sr) */
        c->frame_max = f->frame_max - sizeof(struct fp_via);
    c->chunk = c->frame_max - (f->frame_max - f->chunk); /* the same room for the header as rc-sr */
    c->eager_max = c->chunk;
    fp.active = 1;
    if (fp.budget) {
        fp.size_timer.fire = size_check;
        aptus_timer_arm(&fp.size_timer, aptus_wtime() + 0.1);
    }
    if (aptus_config.channel_idle > 0) {
        fp.idle_s = aptus_config.channel_idle / 1000.0;
        fp.idle_timer.fire = idle_check;
        aptus_timer_arm(&fp.idle_timer, aptus_wtime() + fp.idle_s / 2);
    }
    return APTUS_OK;
}

void aptus_rcfp_dyn_start(void)
{
    (void)fp_init(); /* (its failures are said, and leave it off) */
}

static void fp_finalize(void)
{
    if (!fp.active)
        return;
    if (fp.idle_s > 0)
        aptus_timer_cancel(&fp.idle_timer);
    if (fp.budget)
        aptus_timer_cancel(&fp.size_timer);
    for (int r = 0; r < fp.cap; r++) /* (other jobs' processes too: their count is reset by now) */
        if (fp.state[r] != FP_NONE || fp.rx[r] || fp.tx[r])
            aptus_rcfp_conn_down(r);
    fp_release();
}

/* Bytes of the fast paths themselves: the blocks this rank owns and its mirrors of the peers'. */
static size_t fp_path_memory(void)
{
    return fp.owned + (fp.design == DESIGN_FIXED ? (size_t)fp.ntx * fp.block : 0);
}

static size_t fp_memory(void)
{
    if (!fp.active)
        return 0;
    return fp_path_memory() + (size_t)fp.npolled * sizeof(struct fp_rx) +
           (size_t)fp.ntx * (sizeof(struct fp_tx) + (size_t)fp.cells * sizeof(struct fx_slot)) + fp.ring_size +
           (size_t)fp.cap * (3 + 2 * sizeof(void *) + (size_t)(fp.rules.n ? fp.rules.n : 1) * sizeof *fp.count +
                             (fp.budget ? sizeof *fp.want_size : 0)) +
           (size_t)fp.reply_cap * sizeof *fp.reply + (size_t)fp.max * sizeof(void *);
}

static void fp_stats_print(void)
{
    if (!fp.active)
        return;
    printf("[aptus stats] rank %d: rc-fp: fast paths to peers %d, blocks owned %d (of %d, %u bytes each); "
           "asked %" PRIu64 ", granted %" PRIu64 ", refused %" PRIu64 " (here %" PRIu64 "); frames sent %" PRIu64
           " (%" PRIu64 " bytes; injected %" PRIu64 "; messages %" PRIu64
           "), over the connection for want of room %" PRIu64 " (messages %" PRIu64 "), received %" PRIu64
           "; no room %" PRIu64 ", credits by frames %" PRIu64 ", piggybacked %" PRIu64 ", asked for %" PRIu64
           "; wraps %" PRIu64 "; given back idle %" PRIu64 ", returned to this rank %" PRIu64
           "; design %s; block bytes owned %zu (budget %zu), blocks resized %" PRIu64 "\n",
           aptus_rt.rank, fp.ntx, fp.npolled, fp.max, fp.block, fp.st.asked, fp.st.granted, fp.st.refused,
           fp.st.refused_here, fp.st.frames, fp.st.bytes, fp.st.injected, fp.st.msgs, fp.st.via, fp.st.msgs_via,
           fp.st.received, fp.st.no_room, fp.st.credits_sent, fp.st.credits_piggybacked, fp.st.credit_asks, fp.st.wraps,
           fp.st.released, fp.st.returned, aptus_config.rcfp_design, fp.owned, fp.budget, fp.st.resized);
}

/* The statistics document (channel/stats_json.h): what fp_stats_print prints. */
void aptus_rcfp_stats_json(struct aptus_json *j)
{
    if (!fp.active)
        return;
    aptus_json_object(j, "rc-fp");
    aptus_json_int(j, "fast_paths", fp.ntx);
    aptus_json_int(j, "blocks_owned", fp.npolled);
    aptus_json_int(j, "blocks_max", fp.max);
    aptus_json_u64(j, "block_bytes", fp.block);
    aptus_json_u64(j, "asked", fp.st.asked);
    aptus_json_u64(j, "granted", fp.st.granted);
    aptus_json_u64(j, "refused", fp.st.refused);
    aptus_json_u64(j, "refused_here", fp.st.refused_here);
    aptus_json_u64(j, "frames", fp.st.frames);
    aptus_json_u64(j, "bytes", fp.st.bytes);
    aptus_json_u64(j, "injected", fp.st.injected);
    aptus_json_u64(j, "messages", fp.st.msgs);
    aptus_json_u64(j, "frames_via_connection", fp.st.via);
    aptus_json_u64(j, "messages_via_connection", fp.st.msgs_via);
    aptus_json_u64(j, "received", fp.st.received);
    aptus_json_u64(j, "no_room", fp.st.no_room);
    aptus_json_u64(j, "credit_frames", fp.st.credits_sent);
    aptus_json_u64(j, "credits_piggybacked", fp.st.credits_piggybacked);
    aptus_json_u64(j, "credit_asks", fp.st.credit_asks);
    aptus_json_u64(j, "wraps", fp.st.wraps);
    aptus_json_u64(j, "given_back_idle", fp.st.released);
    aptus_json_u64(j, "returned", fp.st.returned);
    aptus_json_string(j, "design", aptus_config.rcfp_design);
    aptus_json_u64(j, "block_bytes_owned", fp.owned);
    aptus_json_u64(j, "budget", fp.budget);
    aptus_json_u64(j, "resized", fp.st.resized);
    aptus_json_close(j);
}

static int fp_counter(const char *name, uint64_t *value)
{
    if (!fp.active)
        return -1;
    const struct aptus_counter t[] = { { "rcfp.paths", (uint64_t)fp.ntx },
                                       { "rcfp.blocks", (uint64_t)fp.npolled },
                                       { "rcfp.frames", fp.st.frames },
                                       { "rcfp.received", fp.st.received },
                                       { "rcfp.no_room", fp.st.no_room },
                                       { "rcfp.credits", fp.st.credits_sent },
                                       { "rcfp.credit_asks", fp.st.credit_asks },
                                       { "rcfp.wraps", fp.st.wraps },
                                       { "rcfp.refused", fp.st.refused },
                                       { "rcfp.via", fp.st.via },
                                       { "rcfp.msgs", fp.st.msgs },
                                       { "rcfp.msgs_via", fp.st.msgs_via },
                                       { "rcfp.memory", fp_path_memory() },
                                       { "rcfp.asked", fp.st.asked },
                                       { "rcfp.released", fp.st.released },
                                       { "rcfp.returned", fp.st.returned },
                                       { "rcfp.resized", fp.st.resized } };
    return aptus_counter_lookup(t, sizeof t / sizeof t[0], name, value);
}

struct aptus_channel aptus_channel_rc_fp = {
    .name = "rc-fp",
    .init = fp_init,
    .finalize = fp_finalize,
    .reaches = fp_reaches,
    .ep_open = fp_ep_open,
    .ep_close = fp_ep_close,
    .send_frame = fp_send_frame,
    .send_frame_packed = fp_send_frame_packed,
    .flush = fp_flush,
    .progress = fp_progress,
    .memory_in_use = fp_memory,
    .stats_print = fp_stats_print,
    .counter = fp_counter,
};

#else
typedef int aptus_rc_fp_unused;
#endif
