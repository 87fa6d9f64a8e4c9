/* Internals shared by the UD channels: ud-sr (ud.c: eager frames through the reliability
 * engine), and the rendezvous channels ud-zcopy and ud-copy (ud_zcopy.c), which reach a peer
 * through the same per-peer record and engine link, so that every frame to a peer, whichever
 * UD channel it takes, travels one ordered link. */
#ifndef APTUS_CHANNEL_UD_UD_INT_H
#define APTUS_CHANNEL_UD_UD_INT_H
#ifdef APTUS_HAVE_LIBFABRIC

#include <stdint.h>
#include <time.h>

#include "channel/channel.h"
#include "channel/reliab/reliab.h"
#include "fabric/fabric.h"
#include "runtime/progress.h"

#define UD_CARD          "ud"
#define UD_CQ_BATCH      16
#define UD_UDP_MTU       9000              /* default datagram size over the udp provider */
#define UD_FRAME_MAX     (64 * 1024 + 256) /* the message layer's largest frame over UD */
#define UD_FRAME_WORD    8                 /* in front of a frame's first piece: its length, then 4 bytes 0 */
#define UD_HEADER_ROOM   256               /* of a frame, kept for the message layer's header */
#define UD_LINGER_NS     20000000ull       /* finalize: quiet time before leaving (see ud_quiesce) */
#define UD_QUIESCE_MAXNS 5000000000ull     /* finalize: at most this long waiting for acks */
#define UD_HARD_FAIL_NS  5000000000ull     /* every send failing this long: the interface is gone */

/* In front of every datagram. */
struct ud_hdr {
    uint32_t src; /* sender's world rank */
    uint32_t job; /* a hash of the job id: datagrams of another job are dropped */
};

/* The per-peer record: an endpoint of the channel interface, with the engine's link. */
struct udz_paddr;
struct aptus_dt_cursor;

struct ud_ep {
    struct aptus_ep base; /* first: the channel interface's view */
    struct aptus_rel_link link;
    fi_addr_t addr;
    struct ud_ep *next_ep; /* the channel's list of open endpoints */
    char *asm_buf;         /* a frame being assembled (NULL: none) */
    uint32_t asm_len, asm_have;
    struct udz_paddr *zaddr; /* the peer's zero-copy endpoints, inserted on first use (NULL: none yet) */
    /* a lossy path (ud_loss.c) */
    uint32_t loss_mark;  /* link.rcv_nxt when the current sample started */
    uint32_t loss_quiet; /* no verdict before link.rcv_nxt reaches this (drops here came before) */
    uint32_t loss_local; /* datagrams dropped on arrival on this host then (ud_loss.c: local_drops) */
    uint16_t loss_n;     /* datagrams of the peer's lost in it (recovered by a retransmission) */
    uint8_t loss_moves;  /* moves of this peer off the connections so far */
    uint8_t loss_seen;   /* a sample during the hold found the path lossy */
    double lossy_until;  /* its messages are off the connections until then (0: they are not) */
};

/* A send buffer handed to the provider (sends too large for fi_inject). */
struct ud_txbuf {
    struct aptus_fab_ctx ctx; /* first: the completion's context */
    struct ud_txbuf *next_free;
    char data[];
};

/* A posted receive buffer. */
struct ud_rxbuf {
    struct aptus_fab_ctx ctx;
    _Alignas(16) char data[]; /* frames handed up from here must be 8-aligned */
};

/* Contexts of operations on the shared completion queue. */
enum { UD_CTX_RX = 1, UD_CTX_TX, UD_CTX_ZRX };

struct ud_state {
    int active;
    int dyn; /* started to meet other jobs (aptus_ud_dyn_start), not by MPI_Init */
    struct aptus_fab_dgram d;
    struct aptus_rel eng;
    uint32_t job;
    size_t dgram_max; /* bytes of a datagram (after the provider's prefix) */
    size_t frame_max; /* largest frame (frame_limit) */
    size_t piece_max; /* engine payload bytes of one datagram */
    char *rx_pool;    /* nrx receive buffers */
    size_t rx_stride; /* bytes of one, prefix included */
    int nrx;
    struct fid_mr *rx_mr;
    void *rx_desc;
    /* FI_MR_LOCAL: send buffers come from one registered pool of tx_cap (else malloc'd one by
     * one, up to the provider's queue depth) */
    char *tx_pool;
    struct fid_mr *tx_mr;
    void *tx_desc;
    size_t tx_cap;
    struct ud_txbuf *tx_free;
    size_t tx_stride;
    size_t ntx, ntx_out; /* send buffers in all / with the provider */
    struct ud_ep *eps;   /* open endpoints */
    int neps;
    char scratch[UD_FRAME_MAX]; /* a packed frame */
    uint64_t last_rx_ns;
    uint64_t refused;         /* datagrams the provider (or the send buffers) had no room for */
    uint64_t hard_since;      /* sends have failed (not for room) since then; 0: the last one went */
    int hard_rc;              /* ... with this provider error */
    struct aptus_timer timer; /* the next deadline (engine, zero-copy), so that a sleeping rank wakes */
    uint64_t timer_due;
};

/* The test-only impairment stage (APTUS_UD_IMPAIR). */
struct ud_imp {
    int on;
    double loss, dup, reorder;
    uint64_t rng;
    struct ud_txbuf *held; /* a datagram held back, sent after the next one (or the next poll) */
    size_t held_len;
    fi_addr_t held_to;
    uint64_t lost, duplicated, reordered;
    uint64_t start_ns; /* after=: nothing is impaired before this time (0: from the start) */
};

extern struct ud_state aptus_ud;
extern struct ud_imp aptus_ud_imp;
extern struct aptus_channel aptus_channel_ud_sr;

/* Whether a datagram header's (job, src) names process index idx (a world rank, or another job's
 * process: channel/procs.c). */
static inline int aptus_ud_from(int idx, uint32_t job, uint32_t src)
{
    if (__builtin_expect(idx < aptus_rt.size, 1))
        return job == aptus_ud.job && src == (uint32_t)idx;
    const struct aptus_proc_card *c = aptus_proc_foreign(idx);
    return c && c->job == job && (uint32_t)c->rank == src;
}

static inline uint64_t ud_now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

struct ud_txbuf *aptus_ud_txbuf_get(void);
void aptus_ud_txbuf_put(struct ud_txbuf *b);
double aptus_ud_imp_rand(void);
/* Whether the impairment stage has started (APTUS_UD_IMPAIR's after=). */
int aptus_ud_imp_now(void);
/* Sends a frame (hdr, then payload) to the peer over the engine link: APTUS_OK, APTUS_NORES
 * (no room now: nothing was sent) or APTUS_ERR. */
int aptus_ud_send_frame(struct ud_ep *e, const void *hdr, size_t hdrlen, const void *payload, size_t len);
int aptus_ud_send_frame_packed(struct ud_ep *e, const void *hdr, size_t hdrlen, struct aptus_dt_cursor *cur,
                               size_t len);
/* Handles one entry of the completion queue / its error entry (ud.c). */
void aptus_ud_cq_entry(const struct fi_cq_msg_entry *ent);
void aptus_ud_cq_error(void);
/* The ud-sr record of a peer (opened on first use; NULL: cannot be). */
struct ud_ep *aptus_ud_ep_of(struct aptus_peer *p);
int aptus_ud_reaches(int world_rank);

/* ud_loss.c: peers on a lossy path moved off the connected channels (APTUS_UD_LOSS_MOVE). */
void aptus_udl_setup(void);
void aptus_udl_finalize(void);
void aptus_udl_ep_init(struct ud_ep *e);
void aptus_udl_ep_closing(struct ud_ep *e);
/* The engine's ops->recovered. */
void aptus_udl_recovered(struct aptus_rel_link *l);
int aptus_udl_counter(const char *name, uint64_t *value);
void aptus_udl_stats_print(void);

/* ud_zcopy.c: the zero-copy and copy-based rendezvous channels. */
extern struct aptus_channel aptus_channel_ud_zcopy;
/* The zero-copy and copy channels' capabilities again (UD started after their init). */
void aptus_udz_caps_refresh(void);
extern struct aptus_channel aptus_channel_ud_copy;
/* The zero-copy receive endpoints the start-up will open (APTUS_UD_ZCOPY_EPS where a send rule
 * names ud-zcopy and the provider allows it; else 0), once the datagram endpoint is open: each
 * takes at least one receive of the provider's queue, beside the UD receive buffers. */
int aptus_udz_endpoints(void);
/* Start-up after the datagram endpoint is open and the UD receive buffers are posted (0, or -1
 * with a message in err); finalize. */
int aptus_udz_setup(char *err, size_t errlen);
void aptus_udz_finalize(void);
/* A completion of a zero-copy receive (len: bytes received; failed: an error completion). */
void aptus_udz_rx_done(struct aptus_fab_ctx *c, size_t len, int failed);
/* Handles the completion entries set aside while a zero-copy endpoint was retired; events. */
int aptus_udz_deferred(void);
/* Progress of the zero-copy streams (sending, deadlines); returns events. */
int aptus_udz_progress(uint64_t now);
/* The earliest deadline of the zero-copy streams (UINT64_MAX: none). */
uint64_t aptus_udz_next_due(void);
/* Whether zero-copy receives are still posted or streams still run (finalize waits). */
int aptus_udz_busy(void);
/* A peer's record is closing: forget what refers to it. */
void aptus_udz_ep_closing(struct ud_ep *e);
size_t aptus_udz_memory(void);
void aptus_udz_stats_print(void);

#endif
#endif
