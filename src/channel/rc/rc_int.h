/* Internals shared by the RC channels: rc.c (connections on demand and rc-sr, the frames) and
 * rc_rdma.c (rc-rdma: one-sided reads and writes over the same connections, the registration
 * cache). Not used outside src/channel/rc/. */
#ifndef APTUS_CHANNEL_RC_RC_INT_H
#define APTUS_CHANNEL_RC_RC_INT_H
#ifdef APTUS_HAVE_LIBFABRIC

#include <stddef.h>
#include <stdint.h>

#include "channel/channel.h"
#include "fabric/fabric.h"
#include "runtime/progress.h"

/* Kinds of completion context on the shared completion queue. */
enum { RC_CTX_RX = 1, RC_CTX_TX, RC_CTX_RMA };

/* Control frames over UD (ASK, NAK, PING) and over the connection (NOTE), in the channels'
 * range of channel/am.h. */
enum {
    RC_F_ASK = APTUS_AM_CHANNEL + 16,
    RC_F_NAK,
    RC_F_PING,
    RC_F_NOTE,
    /* rc-fp (rc_fp.c), over the connection */
    RC_F_FP_ASK,
    RC_F_FP_GRANT,
    RC_F_FP_REFUSE,
    RC_F_FP_CREDIT,
    RC_F_FP_CREDIT_ASK,
    RC_F_FP_VIA,
    RC_F_FP_RELEASE,
    RC_F_FP_GIVE_BACK,
    /* an idle connection closing (rc.c), over the connection: nothing more of the sender's comes */
    RC_F_BYE,
    /* a connection stalls (rc_stall.c), over UD: small messages leave it, both sides */
    RC_F_MOVE,
    /* over UD, from the lower of a pair that connects without being asked: read the connection
     * events (rc.c) */
    RC_F_HELLO,
};

/* Who holds a connection (rc_ep.handed): the peer record, by channel (SR, RDMA), and rc.c itself
 * while the connection closes when idle (SELF: its views are given up first). */
enum { RC_HANDED_SR = 1, RC_HANDED_RDMA = 2, RC_HANDED_SELF = 4 };

struct rcr_op;

/* One connection: the endpoint both RC channels use, with an aptus_ep for each. */
struct rc_ep {
    struct aptus_ep base; /* first: rc-sr's view */
    struct aptus_ep rdma; /* rc-rdma's view */
    struct fid_ep *ep;
    int rank;      /* the peer's process index here */
    uint32_t hsrc; /* this process's index at the peer: its frames' headers carry it */
    int handed;    /* RC_HANDED_*: given to the peer record by ep_open (the last ep_close frees it) */
    int initiator;
    uint32_t rx_frames, rx_seen; /* frames received; as counted at the last liveness check */
    double heard;                /* when frames were last seen coming, or a ping went */
    /* rc-rdma: operations not yet (fully) handed to the provider, in order; and, where notes go
     * as frames, those handed over whose completion a note waits for, in order */
    struct rcr_op *wait_head, *wait_tail;
    struct rcr_op *fifo_head, *fifo_tail;
    int rma_out; /* operations of this endpoint the provider holds */
    /* The credit path (no shared receive context): receive buffers of its own, frames this rank
     * may still send (the peer's buffers free for them), buffers reposted since the last frame
     * to the peer (returned with the next one, or by a credit frame) */
    char *rx_pool;
    struct fid_mr *rx_mr; /* ... registered (FI_MR_LOCAL), and its descriptor */
    void *rx_desc;
    int credits, owed;
    int inj;        /* frames that may still go by fi_inject before a buffered one completes (rc.c) */
    int hello_owed; /* an unasked connection's RC_HELLO waits for room on UD (rc.c) */
    /* Idle connections (APTUS_CHANNEL_IDLE, rc.c): frames and one-sided operations so far, as
     * counted at the last idle check, and checks since they last moved; closing: BYE sent /
     * received, the peer's endpoint shut, the next connection closing */
    uint32_t act, act_mark;
    int idle_ticks;
    int bye_sent, bye_in, shut;
    struct rc_ep *next_closing;
    /* Stalls (rc_stall.c): what went out expecting an answer (data frames, reads, writes that
     * complete on delivery) and what came in (data frames, those completions), as counted when the
     * connection was last looked at; the watch's phase (RCS_*); the next watched connection.
     * Stalls seen in the current second, since when; moves so far, and until when small messages
     * stay off the connection (0: they do not). */
    uint32_t out_n, in_n, w_out, w_in;
    int w_phase, w_skip;
    struct rc_ep *next_watch;
    int stalls, moves;
    double stall_t0, moved_until;
    /* ... the peer's side: the progress pass that last handed up a frame of the peer's, and the
     * one that took a kick of its with no frame yet (kick_pending) */
    uint64_t rx_pass, kick_pass;
    int rx_in_pass; /* frames of the peer's taken in rx_pass */
    int kick_pending;
};

static inline struct rc_ep *rc_ep_of_rdma(struct aptus_ep *ep)
{
    return (struct rc_ep *)((char *)ep - offsetof(struct rc_ep, rdma));
}

/* rc.c, for rc_rdma.c */
struct aptus_fab_rc *aptus_rc_fabric(void); /* NULL while rc-sr is not active */
struct rc_ep *aptus_rc_up(int rank);        /* the connection to rank when it is up, else NULL */
int aptus_rc_finishing(void);
/* Whether the connection to rank is closing while idle (its views gone, the BYEs not through:
 * until they are, this side's writes over it may not have landed). */
int aptus_rc_closing(int rank);
/* A frame over the connection (as rc-sr's send_frame). */
int aptus_rc_frame(struct rc_ep *e, const void *hdr, size_t hdrlen, const void *payload, size_t len);
int aptus_rc_frame_packed(struct rc_ep *e, const void *hdr, size_t hdrlen, struct aptus_dt_cursor *cur, size_t len);
/* rc-sr's capabilities for frames (rc-rdma sends its frames the same way). */
const struct aptus_chan_caps *aptus_rc_frame_caps(void);
/* The peer record lets go of one of e's views (RC_HANDED_*): the last one closes it. */
void aptus_rc_ep_release(struct rc_ep *e, int view);
/* Whether a send rule names channel chan (APTUS_CH_*; the same answer on every rank). */
int aptus_rc_rule_names(int chan);
/* A connection failed on e while operations were in flight: the peer is failed. */
void aptus_rc_lost(int rank, const char *why);

/* rc.c, for rc_stall.c */
/* A control frame over UD (frame[0]: its kind; at most 16 bytes): APTUS_OK, _NORES, _ERR. */
int aptus_rc_ctl(int rank, const void *frame, size_t len);
/* A header-only frame after what went to e (it makes the peer's side of the connection answer):
 * 0, or -1 when there is no send buffer now. */
int aptus_rc_kick(struct rc_ep *e);
/* Whether buffered frames of this rank's to `rank` are queued or with the provider (not yet
 * handed to the transport: flow control, not loss, holds them). */
int aptus_rc_queued(int rank);

/* rc_stall.c, for rc.c and rc_rdma.c: stalls of a connection, and small messages moved off it.
 * A connection whose answers stop coming after this rank sent something gets a header-only frame
 * after it (a kick: a transport that recovers a lost packet from the acknowledgements of later
 * ones -- tcp, and RC's sequence-error NAKs -- then resends it at once instead of on its
 * retransmission timer); a connection with APTUS_RC_MOVE_STALLS stalls in a second (kicks
 * answered at once) loses its small messages to the next rule of the send chain (UD) for
 * APTUS_RC_MOVE_HOLD, doubled at each move, both sides together. */
void aptus_rcs_setup(void);
void aptus_rcs_finalize(void);
/* Something that will be answered went out on e (a data frame, a read, ...). */
void aptus_rcs_watch(struct rc_ep *e);
static inline void aptus_rc_out(struct rc_ep *e)
{
    e->out_n++;
    if (__builtin_expect(e->w_phase == 0, 0))
        aptus_rcs_watch(e);
}
/* A frame (or an answer: a read's data) came from e's peer. */
void aptus_rcs_late(struct rc_ep *e);
static inline void aptus_rcs_in(struct rc_ep *e)
{
    e->in_n++;
    if (e->rx_pass != aptus_progress_pass) {
        e->rx_pass = aptus_progress_pass;
        e->rx_in_pass = 0;
    }
    e->rx_in_pass++;
    if (__builtin_expect(e->kick_pending, 0))
        aptus_rcs_late(e);
}
/* A kick came from e's peer. */
void aptus_rcs_kick_in(struct rc_ep *e);
/* Each rc-sr progress pass, with the time: whether this rank has been polling (or was woken by
 * what arrived), so that frames taken in this pass arrived just now. */
void aptus_rcs_pass(double now);
/* e leaves (closes, or its peer goes): it is no longer watched, nor moved. */
void aptus_rcs_forget(struct rc_ep *e);
/* Whether small messages to rank are off its connection now (rc-sr and rc-fp do not reach it). */
int aptus_rc_moved(int rank);
void aptus_rcs_stats_print(void);
int aptus_rcs_counter(const char *name, uint64_t *value);

/* rc_rdma.c, for rc.c */
extern struct aptus_channel aptus_channel_rc_rdma;
/* Completion (ok) or error completion (!ok) of an operation of rc-rdma. */
void aptus_rcr_completion(struct aptus_fab_ctx *ctx, int ok);
/* Issues what waits (operations the provider had no room for, notes). Returns events. */
int aptus_rcr_progress(void);
extern int aptus_rcr_waiting; /* operations or notes wait for room */
/* e is closing: what it still holds is dropped (the caller fails the peer when it matters). */
int aptus_rcr_ep_drop(struct rc_ep *e);
/* Whether rc-rdma is set up (rc-fp writes through it). */
int aptus_rcr_active(void);
/* Operations in flight (quiesce waits for them). */
int aptus_rcr_busy(void);
/* rc-sr started for other jobs' processes (aptus_rc_card): rc-rdma and rc-fp start too, as they
 * would have with the job (each only when the send rules name it; a failure leaves it off, said). */
void aptus_rcr_dyn_start(void);
void aptus_rcfp_dyn_start(void);

/* rc_fp.c, for rc.c and rc_rdma.c */
extern struct aptus_channel aptus_channel_rc_fp;
/* The connection to rank came up (a fast path may be asked for) / went (its fast paths go). */
void aptus_rcfp_conn_up(int rank);
void aptus_rcfp_conn_down(int rank);
/* Whether the allocation rules name rc-fp (and the channel is set up): alloc_note calls
 * aptus_rcfp_note for the messages of peers without a fast path, over any remote channel. */
int aptus_rcfp_counting(void);
/* Counts a message of `bytes` to or from rank by the rules naming rc-fp; at a rule's threshold a
 * fast path is asked for when `connected`, else 1 is returned: ask for the connection first (its
 * coming up asks for the fast path). */
int aptus_rcfp_note(int rank, uint64_t bytes, int connected);
/* Whether nothing of rc-fp lives on the connection to rank: no fast path either way (a sender's
 * given back and without writes in flight is none), none asked for, no answer waiting. An idle
 * connection closes only then. */
int aptus_rcfp_quiet(int rank);

#endif
#endif
