/* The channel interface, version 2. A channel is a way of moving bytes to peers (self, smp, and
 * the UD/RC channels over libfabric): a table of operations plus its capabilities as data.
 * The layers above never test which channel they talk to: the protocol choice and the send
 * rule chain read the capabilities, and frames are handed up through registered handlers
 * (channel/am.h), so a channel never calls the message layer by name.
 *
 * Status convention of every channel operation (enum aptus_status):
 *   APTUS_OK          done; buffers may be reused
 *   APTUS_INPROGRESS  accepted; the completion passed in is updated when done
 *   APTUS_NORES       no resources now (no room, no credits): nothing happened, retry later
 *   APTUS_ERR         failed (the channel has said why); for a peer it gives up on, it also
 *                     calls aptus_peer_fail
 *
 * Adding a channel: one folder under src/channel/ with its table, and one line in
 * src/channel/channels.def. */
#ifndef APTUS_CHANNEL_CHANNEL_H
#define APTUS_CHANNEL_CHANNEL_H

#include <stddef.h>
#include <stdint.h>

#include <sys/uio.h>

#include "channel/am.h"
#include "channel/rules.h"
#include "runtime/runtime.h"

struct aptus_dt_cursor;
struct aptus_peer;
struct aptus_ep;
struct aptus_memh;

enum aptus_status { APTUS_ERR = -1, APTUS_OK = 0, APTUS_INPROGRESS = 1, APTUS_NORES = 2 };

/* Counts outstanding operations and carries their status: the initiator sets count (one per
 * operation that returned APTUS_INPROGRESS) and func; each such operation calls
 * aptus_completion_done once, and func runs when count reaches zero. */
struct aptus_completion {
    void (*func)(struct aptus_completion *self);
    int count;
    int status; /* APTUS_OK, or the first failure */
};

static inline void aptus_completion_done(struct aptus_completion *c, int status)
{
    if (status != APTUS_OK && c->status == APTUS_OK)
        c->status = status;
    if (--c->count == 0 && c->func)
        c->func(c);
}

/* Capabilities. */
enum aptus_cap_flag {
    APTUS_CAP_PUT = 1u << 0,          /* put: one-sided write into the peer's memory */
    APTUS_CAP_GET = 1u << 1,          /* get: one-sided read of the peer's memory */
    APTUS_CAP_ATOMIC = 1u << 2,       /* remote atomics */
    APTUS_CAP_ORDERED = 1u << 3,      /* frames to one peer arrive in the order sent */
    APTUS_CAP_REMOTE_DATA = 1u << 4,  /* a put can carry data that completes at the target */
    APTUS_CAP_NEEDS_REG = 1u << 5,    /* put/get need registered memory (mem_reg, keys) */
    APTUS_CAP_CONNECTED = 1u << 6,    /* endpoints are connections (costly; limited) */
    APTUS_CAP_ZCOPY_SEND = 1u << 7,   /* send_zcopy sends from the user's buffer */
    APTUS_CAP_RELIABLE = 1u << 8,     /* delivery is guaranteed by the channel */
    APTUS_CAP_REMOTE_FLUSH = 1u << 9, /* flush waits for remote placement, not only local */
    APTUS_CAP_RNDV_WRITE = 1u << 10,  /* rendezvous: the sender writes into the receiver's buffer
                                         (put_notify) instead of the receiver reading (get) */
    APTUS_CAP_SOFT_RMA = 1u << 11,    /* put/get are served by the peer's process (a provider
                                         over sockets), not by its adapter */
};

struct aptus_chan_caps {
    uint32_t flags;      /* enum aptus_cap_flag */
    uint32_t key_size;   /* bytes of a remote key (0: put/get need no key) */
    size_t frame_max;    /* largest frame, header + payload */
    size_t eager_max;    /* largest message sent eagerly (payload) */
    size_t put_max;      /* largest single put (0: none) */
    size_t get_max;      /* largest single get (0: none) */
    int iov_max;         /* pieces in one put/get list */
    size_t chunk;        /* piece of a streamed copy (payload per DATA frame) */
    size_t get_min;      /* rendezvous messages at least this large: the receiver reads them */
    size_t get_busy_min; /* ... and at least this large while the receiver has a rendezvous
                            send of its own in flight (both directions busy) */
    /* Customized rendezvous (pt2pt/rndv_cust.c; put needed, and placement known at completion
     * (REMOTE_FLUSH) or told (put_notify)): receives of at least rr_min bytes above the eager
     * limit tell the sender where to write (0: never); messages up to hybrid_max bytes whose
     * sender arrives first are copied into a buffer of the sender's and read from there (get
     * needed; 0: never). */
    size_t rr_min;
    size_t hybrid_max;
};

struct aptus_channel {
    const char *name;            /* as written in the send rules */
    int id;                      /* enum aptus_channel_id, set by the registry from the name */
    struct aptus_chan_caps caps; /* filled by init */

    /* Life cycle. init returns APTUS_OK (usable or not: see reaches), or APTUS_ERR after
     * printing why (the job cannot start). cleanup removes anything that would outlive the
     * process (files); it may run at any time, from error paths too. */
    int (*init)(void);
    void (*finalize)(void);
    /* Checks the channel's settings that need neither its provider nor the job (a setting's own
     * grammar), at start-up whether or not the job will use the channel, so that a typo is found
     * in any run: 0, or -1 with a message naming the variable in err. NULL: nothing to check. */
    int (*check)(char *err, size_t errlen);
    void (*cleanup)(void);
    /* After the last barrier of MPI_Finalize, before endpoints close: settles what is still in
     * flight (a channel with its own acknowledgements waits for them). NULL: nothing to do. */
    void (*quiesce)(void);

    /* Endpoints: per peer, opened on first use and closed at finalize (or when the channel
     * closes them, e.g. to stay within a per-process limit). reaches says whether this channel
     * can reach a world rank at all. ep_open returns APTUS_OK with *ep set, APTUS_NORES when
     * no endpoint can be opened now (limit), APTUS_ERR. addr_export writes this process's
     * address for the channel (what a peer needs to connect); addr_connect uses a peer's.
     * Both NULL when the launcher's information is enough. */
    int (*reaches)(int world_rank);
    int (*ep_open)(struct aptus_peer *p, struct aptus_ep **ep);
    void (*ep_close)(struct aptus_ep *ep);
    int (*addr_export)(void *buf, size_t *len);
    int (*addr_connect)(struct aptus_ep *ep, const void *addr, size_t len);

    /* Frames: hdr followed by payload (bytes, or len bytes packed from a datatype cursor, which
     * advances only when the frame is sent), at most caps.frame_max in all. APTUS_OK when
     * handed over (buffers may be reused), APTUS_NORES when there is no room now. */
    int (*send_frame)(struct aptus_ep *ep, const void *hdr, size_t hdrlen, const void *payload, size_t len);
    int (*send_frame_packed)(struct aptus_ep *ep, const void *hdr, size_t hdrlen, struct aptus_dt_cursor *cur,
                             size_t len);
    /* A frame whose payload is sent from the caller's buffers: they stay in use until comp is
     * updated (APTUS_INPROGRESS), or may be reused at once (APTUS_OK). NULL: not supported. */
    int (*send_zcopy)(struct aptus_ep *ep, const void *hdr, size_t hdrlen, const struct iovec *iov, int n,
                      struct aptus_completion *comp);

    /* One-sided: write the local pieces to / read into them from one contiguous remote range
     * at (remote address, key). The local list may be modified (scratch) and need only stay valid
     * during the call (a channel that completes later keeps its own copy). NULL: not supported
     * (see caps). */
    int (*put)(struct aptus_ep *ep, struct iovec *local, int n, uint64_t raddr, uint64_t rkey,
               struct aptus_completion *comp);
    int (*get)(struct aptus_ep *ep, struct iovec *local, int n, uint64_t raddr, uint64_t rkey,
               struct aptus_completion *comp);
    /* A put the target is told of: once these bytes -- and those of every put issued before
     * on ep -- are in place at the target, its channel calls aptus_rdma_noted(note) there
     * (remote completion data where the provider has it, else a frame after delivery). comp
     * completes when the local pieces may be reused. NULL: not supported. */
    int (*put_notify)(struct aptus_ep *ep, struct iovec *local, int n, uint64_t raddr, uint64_t rkey, uint64_t note,
                      struct aptus_completion *comp);
    /* Memory registration (NULL when caps say none is needed): *raddr and *rkey are what a peer
     * passes to put/get for addr. A channel may keep registrations in a cache (the RC channels'
     * registration cache): mem_dereg then only releases this use. */
    int (*mem_reg)(void *addr, size_t len, struct aptus_memh **mh, uint64_t *raddr, uint64_t *rkey);
    void (*mem_dereg)(struct aptus_memh *mh);
    /* Completes when every operation started so far on ep (every endpoint: NULL) is done. */
    int (*flush)(struct aptus_ep *ep, struct aptus_completion *comp);
    /* Nonzero while the endpoint to world_rank is going away (its views already gone) and what
     * was written over it is not yet known to be in place at the target: a caller that must know
     * (a window's flush finding no endpoint) waits for 0. NULL: never. */
    int (*settling)(int world_rank);

    /* Polls for arrivals (handing each frame to aptus_am_dispatch) and completions. Returns
     * events seen. Registered with the progress engine by the registry; enabled by the channel
     * while it has something to poll (aptus_channel_poll_enable). */
    int (*progress)(void);
    /* Bytes of memory this channel holds, for the statistics. */
    size_t (*memory_in_use)(void);
    /* Prints the channel's own statistics lines (APTUS_STATS); NULL: none. */
    void (*stats_print)(void);
    /* A counter of the channel by name (MPIX_Aptus_counter): 0 with *value set, or -1 when the
     * name is not one of its own. NULL: none. */
    int (*counter)(const char *name, uint64_t *value);
};

/* An open endpoint; channels embed it first in their own per-peer state. */
struct aptus_ep {
    struct aptus_ep *next; /* the peer's next open endpoint */
    struct aptus_channel *ch;
    struct aptus_peer *peer;
    uint8_t chan;
    uint8_t failed;
};

/* Per-peer state, created on first contact: deliberately small (tests/unit/test_peer checks
 * its size). Routes are shared by every peer reached the same way; endpoints are opened on
 * demand; counters exist only with APTUS_STATS. */
struct aptus_peer {
    int32_t world_rank;
    union {
        struct {
            uint8_t queued; /* in the message layer's list of peers with waiting frames */
            uint8_t rr;     /* message layer: receivers' RECEIVER_READY pending (rndv_cust.c) */
        };
        uint16_t send_slow; /* either: a send to this peer takes the full path */
    };
    uint8_t failed; /* a channel gave up on this peer */
    uint8_t nopen;  /* endpoints open */
    const struct aptus_route *route;
    struct aptus_ep *ep;            /* open endpoints, the most recently used channel first */
    struct aptus_sendq *sq;         /* message layer: frames waiting for room (NULL: never any) */
    uint32_t send_seq, recv_seq;    /* message layer: matching order (next to send / to match) */
    struct aptus_early *early;      /* message layer: frames that arrived ahead of recv_seq */
    struct aptus_peer_stats *stats; /* APTUS_STATS only */
};

struct aptus_peer_stats {
    uint64_t msgs[APTUS_CH_COUNT];
    uint64_t bytes[APTUS_CH_COUNT];
    uint64_t proto[8]; /* the message layer's protocol counters (pt2pt/rndv_cust.c) */
};

/* The send rule chain (APTUS_SEND_RULES), parsed at start-up. */
extern struct aptus_rule_chain aptus_rules;

/* The registered channels, by id (NULL: not in this build or not usable here). */
extern struct aptus_channel *aptus_channels[APTUS_CH_COUNT];

/* Registry: initialises every channel of the build (registering its poller and clean-up hook),
 * and finalizes them. Returns 0, or -1 after printing why. */
int aptus_channels_init(void);
/* Checks the settings of every channel of the build and of the fault injection (their `check`,
 * aptus_fault_check), before any is initialised: 0, or -1 with a message in err. */
int aptus_channels_check(char *err, size_t errlen);
void aptus_channels_finalize(void);
/* Runs every channel's quiesce (MPI_Finalize, after its barrier). */
void aptus_channels_quiesce(void);
/* Comma-separated names of the channels in this build (for messages). */
const char *aptus_channels_available(void);
/* Enables or disables a channel's poller (a channel with nothing to poll is not polled). */
void aptus_channel_poll_enable(const struct aptus_channel *ch, int on);

/* The peer for a world rank, created on first use (NULL only when out of memory). A peer that
 * no channel reaches ends the job with a message: it could never be talked to. */
struct aptus_peer *aptus_peer_create(int world_rank);
static inline struct aptus_peer *aptus_peer_get(int world_rank)
{
    struct aptus_peer *p = aptus_rt.peers[world_rank];
    return __builtin_expect(p != NULL, 1) ? p : aptus_peer_create(world_rank);
}
/* Frees every peer and closes every endpoint (finalize). */
void aptus_peers_finalize(void);
/* Whether a route to that process can be made from the send rule chain (no job is ended). */
int aptus_peer_routable(int world_rank);

/* ---- processes of other jobs (dynamic processes: channel/procs.c) ---- */
#define APTUS_PROC_ADDR_MAX 64 /* (APTUS_FAB_ADDR_MAX) */
struct aptus_proc_card {
    uint32_t job;  /* its job's hash (the one in its datagrams' headers) */
    int32_t rank;  /* its rank in its job's MPI_COMM_WORLD */
    uint32_t alen; /* bytes of its UD address */
    uint8_t addr[APTUS_PROC_ADDR_MAX];
    /* shared memory (channel/smp/smp_jobs.c): its node's key (0: none), its pid, and the
     * descriptor of its door (-1: it takes no frames through shared memory from other jobs) */
    uint64_t node;
    int32_t pid;
    int32_t door;
    /* its RC address (channel/rc/rc.c: 0 bytes when it runs no RC channel), the connections'
     * listening end */
    uint32_t rclen;
    uint8_t rcaddr[APTUS_PROC_ADDR_MAX];
};
/* This process's card. With net, or where UD runs already, or shared memory with other jobs is
 * not to be had, it carries the UD address, starting the UD channel here if it was not running (a
 * job on one node does without it until then); else it has none (alen 0), and only processes
 * sharing this node's memory can reach this one by it. 0, or -1 with the reason in err. */
int aptus_proc_card_self(struct aptus_proc_card *c, int net, char *err, size_t errlen);
/* The process index of the card's process: its world rank if it is of this job, else the index
 * it has here, given on first sight (its peer can then be made). -1 with the reason in err: the
 * table is full (APTUS_DPM_PROCS), the card is bad, or no channel reaches it. */
int aptus_proc_index(const struct aptus_proc_card *c, char *err, size_t errlen);
/* The index of rank `rank` of the job of hash `job` (another job), -1 if unknown. */
int aptus_proc_find(uint32_t job, int rank);
/* The card of an index of another job's process (NULL for a world rank). */
const struct aptus_proc_card *aptus_proc_foreign(int idx);
/* Whether the card given to index idx (another job's process; also while aptus_proc_index is
 * giving it) carries a UD address. */
int aptus_proc_has_addr(int idx);
/* An order of processes that every job sees alike (by job hash, then rank there): whether
 * index a comes before index b. Within one job it is the order of the world ranks. */
int aptus_proc_before(int a, int b);
/* This job's hash (the one its processes' cards and datagrams carry). */
uint32_t aptus_proc_job(void);
void aptus_procs_finalize(void);
/* Shared memory with other jobs' processes on this node (channel/smp/smp_jobs.c): fills the
 * card's node, pid and door (opening this process's door the first time), and learns of a
 * process given index idx (mapping its door when it is on this node), before its route is made. */
void aptus_smp_card(struct aptus_proc_card *c);
int aptus_smp_proc_met(int idx, const struct aptus_proc_card *c); /* 1: reached through it */
/* Processes of other jobs met so far that shared memory does not reach (channel/procs.c): while 0,
 * a UD channel started only to meet them carries nothing and is read seldom. */
extern int aptus_procs_net;
/* At an exit without MPI_Finalize: waits (a second at most) for other jobs' processes to take the
 * blocks this one wrote to them, so that what it sent is read (as a datagram already sent is). */
void aptus_smp_jobs_exit(void);
/* The UD channel's start outside MPI_Init (this process alone: no fence): 0 when it runs. */
int aptus_ud_dyn_start(char *err, size_t errlen);
/* The RC channels for processes of other jobs (channel/rc/rc.c): started here, outside MPI_Init,
 * when the send rules name one and they did not start with the job (it ran on one node), and the
 * address written into the card; the card keeps no address (rclen 0: other jobs' processes reach
 * this one over UD) when no RC channel is named or it cannot start. */
#ifdef APTUS_HAVE_LIBFABRIC
void aptus_rc_card(struct aptus_proc_card *c);
#else
static inline void aptus_rc_card(struct aptus_proc_card *c)
{
    c->rclen = 0;
}
#endif

/* The endpoint of channel chan to p, opened on first use (NULL: cannot be opened, the reason
 * printed; the peer is then failed). */
struct aptus_ep *aptus_peer_ep_slow(struct aptus_peer *p, int chan);
static inline struct aptus_ep *aptus_peer_ep(struct aptus_peer *p, int chan)
{
    struct aptus_ep *e = p->ep;
    if (__builtin_expect(e != NULL && e->chan == chan, 1))
        return e;
    return aptus_peer_ep_slow(p, chan);
}

/* The channels reaching a peer changed (an RC connection came up or went): its route is
 * made again from the send rules. Messages already on their way keep their channel; the
 * per-peer sequence numbers keep the order. */
void aptus_peer_reroute(struct aptus_peer *p);
/* Whether a peer's small messages are moved off its connection (a connection that stalls under
 * loss, channel/rc/rc_stall.c): its route is then made from the send rules with every rule naming
 * a connected channel restricted to the sizes above the connected channels' eager limits, so
 * those messages take the next rule (UD). Set by the RC channels; NULL: never. The channel calls
 * aptus_peer_reroute when the answer changes. */
extern int (*aptus_peer_moved)(int world_rank);
/* Whether every message to a peer is moved off the connected channels (a path that loses
 * packets, seen by the UD engine: channel/ud/ud_loss.c): its route is then made from the send
 * rules without the rules naming a connected channel (rc-sr, rc-fp, rc-rdma), and no connection
 * to it is asked for. Set by the UD channel; NULL: never. The channel calls aptus_peer_reroute
 * when the answer changes. */
extern int (*aptus_peer_lossy)(int world_rank);

/* Closes one endpoint (a channel keeping within a per-process limit, or tests): it leaves the
 * peer's list and the channel's ep_close frees it. The next use opens a new one. The caller
 * makes sure nothing is in flight on it (flush). */
void aptus_peer_ep_close(struct aptus_ep *ep);

/* Failure path: a channel that gives up on a peer calls this once. The peer is marked failed
 * and the registered failure handlers run (the message layer completes the requests that
 * depend on the peer with an error); by policy (APTUS_PEER_FAILURE_ERRORS=0, the default) the job
 * then ends, from here. */
void aptus_peer_fail(struct aptus_peer *p, const struct aptus_channel *ch, const char *why);
/* Peers failed so far (0 in a healthy job: paths that must check a peer test this first). */
extern int aptus_peers_failed;
void aptus_peer_fail_handler_set(void (*fn)(struct aptus_peer *p, const char *why));

/* A route refinement hook: the message layer's protocol selector fills route->proto[] for
 * each size range from the channel's capabilities (and may split ranges). */
void aptus_route_refine_set(void (*fn)(struct aptus_route *route));

/* Allocation (seed 000 section 5.4): every message sent to or received from a peer is noted;
 * the RC channels register the hook while they may open connections, and count the messages
 * of peers not yet connected by the allocation rules (APTUS_ALLOC_RULES). */
extern void (*aptus_alloc_hook)(struct aptus_peer *p, uint64_t bytes);
/* The smallest message any allocation rule takes: smaller ones are not noted (the default
 * sockets chain asks for connections by large messages only: its small ones skip the call). */
extern uint64_t aptus_alloc_min;
static inline void aptus_alloc_note(struct aptus_peer *p, uint64_t bytes)
{
    if (__builtin_expect(aptus_alloc_hook != NULL, 0) && bytes >= aptus_alloc_min)
        aptus_alloc_hook(p, bytes);
}

/* The target's side of put_notify: the message layer registers the handler; a channel calls
 * aptus_rdma_noted when a put's note arrives. */
void aptus_rdma_note_handler_set(void (*fn)(uint64_t note));
void aptus_rdma_noted(uint64_t note);

/* Statistics. */
static inline void aptus_peer_count(struct aptus_peer *p, int chan, uint64_t bytes)
{
    if (__builtin_expect(p->stats != NULL, 0)) {
        p->stats->msgs[chan]++;
        p->stats->bytes[chan] += bytes;
    }
}
/* Which frames carry a message, and of how many bytes (the message layer's matched frames; set
 * by it): a channel that sends a frame another way than the peer's route said -- rc-fp's frames
 * that find no room, over the connection -- moves the message's count to the channel that took it.
 * Returns 1 with *bytes set, or 0. NULL until the message layer sets it. */
extern int (*aptus_frame_message)(const void *hdr, uint64_t *bytes);
/* Moves one message of `bytes` from channel `from` to channel `to` in p's statistics. */
static inline void aptus_peer_recount(struct aptus_peer *p, int from, int to, uint64_t bytes)
{
    if (__builtin_expect(p->stats != NULL, 0)) {
        p->stats->msgs[from]--;
        p->stats->bytes[from] -= bytes;
        p->stats->msgs[to]++;
        p->stats->bytes[to] += bytes;
    }
}
/* The per-peer counters are kept (p->stats) when APTUS_STATS asks, or from when a tool asks
 * for them (MPI_T: a handle of a per-peer performance variable): aptus_peer_stats_enable gives
 * every peer made so far its counters and every later one too. 0, or -1 out of memory. */
extern int aptus_peer_stats_on;
int aptus_peer_stats_enable(void);
/* Prints the per-peer, per-channel counters and the channels' memory. */
void aptus_channel_stats_print(void);
/* A counter by name, readable at run time: "memory" (bytes the channels hold), "memory.CHANNEL",
 * "memhooks.active", "memhooks.reports" and the channels' own (rc.*, rcache.*). 0 with *value
 * set, or -1 (unknown name). */
int aptus_channel_counter(const char *name, uint64_t *value);
/* A channel's counter op over a table of its counters: 0 with *value set, or -1. */
struct aptus_counter {
    const char *name;
    uint64_t value;
};
int aptus_counter_lookup(const struct aptus_counter *t, size_t n, const char *name, uint64_t *value);
/* The names aptus_channel_counter knows, for messages. */
const char *aptus_channel_counter_names(void);

#endif
