/* The reliability and re-order engine (seed 000, section 5.2): turns an unreliable, unordered
 * datagram service into exactly-once, in-order delivery per peer ("link").
 *
 * Generic over channels: it knows nothing of libfabric or MPI. The channel gives it a transmit
 * function and a delivery function (struct aptus_rel_ops), calls aptus_rel_input with every
 * datagram that arrives for a link and aptus_rel_tick when aptus_rel_due says a timer is due.
 * Time is passed in (nanoseconds, any monotonic origin), so a test drives a virtual clock.
 *
 * Mechanisms (wire format: docs/PROTOCOL.md, "Reliability engine header"):
 * - 32-bit sequence numbers per link and direction, compared wrap-safe (rel_seq_lt).
 * - Cumulative ack (the next sequence number expected) plus a 64-bit selective-ack bitmap of
 *   the datagrams received beyond it, piggybacked on every data datagram; a pure ACK datagram
 *   goes after cfg.ack_delay_ns without reverse traffic, after cfg.ack_every datagrams, and at
 *   once when an arrival shows a hole, is a duplicate or falls outside the window.
 * - Retransmission on an adaptive timeout (RFC 6298: srtt/rttvar from acks of datagrams sent
 *   once (Karn), RTO clamped to [rto_min, rto_max], doubled on each expiry until a new sample),
 *   and fast retransmission of a datagram once when 3 later ones are selectively acked.
 * - Duplicates dropped; arrivals ahead of a hole wait in a reorder ring of window_pkts slots;
 *   arrivals beyond it are dropped (the sender retransmits them).
 * - Send window per link in datagrams and bytes: aptus_rel_send answers APTUS_NORES when full.
 * - A link with data unacked and no progress for cfg.peer_timeout_ns is reported once through
 *   ops->dead; its sends fail from then on and its arrivals are ignored.
 * - Optional CRC32C over header + payload: a bad datagram is counted and dropped.
 *
 * Memory: struct aptus_rel_link is 64 bytes (sequence state, RTT estimate, pointers; the unit
 * test fails above 64). The per-link ring that holds datagrams in flight and out-of-order
 * arrivals (struct rel_flight: 48 bytes + 32 per slot, slots = window_pkts rounded up to a
 * power of two; 2096 bytes for the default 64) is taken from an engine-wide pool
 * when a link first has something in flight and given back as soon as everything is acked and
 * delivered; payload buffers (header + max_payload each) come from an engine-wide free list.
 * Both pools keep at most REL_POOL_KEEP idle entries and free the rest. So memory grows with
 * the links that have traffic in flight, not with the number of peers.
 *
 * Timers: links with a timer armed (retransmission, delayed ack, unsent datagrams) are on one
 * list; aptus_rel_tick walks that list only, so it costs O(links with work), and the engine
 * keeps the earliest deadline so the channel calls tick only when something is due.
 *
 * Re-entrancy: ops->xmit and ops->deliver may call aptus_rel_send (a handler answering at once
 * is normal); they must not call aptus_rel_input, aptus_rel_tick or free links. ops->dead may
 * call aptus_rel_link_fini on its own link.
 *
 * Not thread-safe: one engine is used by one thread at a time (the channel's). */
#ifndef APTUS_CHANNEL_RELIAB_H
#define APTUS_CHANNEL_RELIAB_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <sys/uio.h>

#include "channel/am.h"
#include "channel/channel.h"

struct aptus_rel;
struct aptus_rel_link;

/* Datagram types (first header byte), in the channel layer's range for the engine. */
enum { APTUS_REL_DATA = APTUS_AM_RELIAB, APTUS_REL_ACK = APTUS_AM_RELIAB + 1 };

struct aptus_rel_cfg {
    uint32_t window_pkts;     /* datagrams in flight per link (send window = reorder window) */
    size_t window_bytes;      /* payload bytes in flight per link (one datagram always fits) */
    size_t max_payload;       /* largest payload of one aptus_rel_send (at most 65535) */
    uint64_t ack_delay_ns;    /* an ack waits at most this long for reverse traffic */
    uint32_t ack_every;       /* ... or for this many datagrams (0: window_pkts / 4) */
    uint64_t rto_init_ns;     /* retransmission timeout before the first RTT sample */
    uint64_t rto_min_ns;      /* bounds of the adaptive timeout */
    uint64_t rto_max_ns;      /* (the doubled one too) */
    uint64_t tlp_min_ns;      /* tail-loss probe: at most 2 srtt + ack_delay (at least this) after
                                 the last progress, the newest datagram unacked goes again once,
                                 before the timeout (0: no probes) */
    uint64_t peer_timeout_ns; /* no progress on unacked data for this long: ops->dead */
    int crc;                  /* 1: CRC32C on every datagram (both ends must agree) */
    int link_stats;           /* 1: count per link too (allocated on first traffic) */
    uint32_t initial_seq;     /* first sequence number (both ends must agree; tests wrap) */
};

struct aptus_rel_ops {
    /* Transmit one datagram made of these pieces (the engine header first). Returns APTUS_OK,
     * or APTUS_NORES when nothing was sent (the engine tries again from aptus_rel_tick). The
     * pieces may be reused as soon as it returns. */
    int (*xmit)(struct aptus_rel_link *l, const struct iovec *iov, int n);
    /* Exactly-once, in-order delivery of one payload sent with aptus_rel_send. */
    void (*deliver)(struct aptus_rel_link *l, const void *data, size_t len);
    /* The peer has not answered for cfg.peer_timeout_ns with data unacked: called once. */
    void (*dead)(struct aptus_rel_link *l);
    /* Optional (NULL: not called): a datagram of the peer's arrived by a retransmission and was
     * new here -- its first transmission never came: a datagram lost on the way from the peer
     * (or dropped here), not a retransmission that was not needed. Called before the datagram is
     * delivered (in order) or after it is held (out of order); it may send on the link. */
    void (*recovered)(struct aptus_rel_link *l);
};

/* Counters, per engine (always) and per link (cfg.link_stats). */
struct aptus_rel_stats {
    uint64_t sent;          /* data datagrams, first transmissions */
    uint64_t retx_timeout;  /* retransmissions after a timeout */
    uint64_t retx_fast;     /* retransmissions on selective acks showing a hole */
    uint64_t acks_sent;     /* pure ACK datagrams (acks also ride on every data datagram) */
    uint64_t delivered;     /* payloads delivered */
    uint64_t dups;          /* duplicate data datagrams dropped */
    uint64_t out_of_order;  /* arrivals ahead of a hole, held in the reorder ring */
    uint64_t out_of_window; /* arrivals beyond the reorder window, dropped */
    uint64_t crc_fail;      /* datagrams dropped for a bad CRC32C */
    uint64_t malformed;     /* datagrams dropped as too short or of unknown type */
    uint64_t timeouts;      /* retransmission timer expiries */
    uint64_t probes;        /* tail-loss probes sent (retransmissions of the newest datagram) */
    uint64_t recovered;     /* datagrams received by a retransmission, the first one never here */
    uint64_t bytes_sent;    /* payload bytes accepted by aptus_rel_send */
    uint64_t bytes_delivered;
};

/* ---- API -------------------------------------------------------------------------------- */

/* Defaults, the ones docs/TUNING.md gives for the APTUS_UD_* variables. */
void aptus_rel_cfg_default(struct aptus_rel_cfg *cfg);

/* APTUS_OK, or APTUS_ERR for a configuration out of range. */
int aptus_rel_init(struct aptus_rel *e, const struct aptus_rel_ops *ops, const struct aptus_rel_cfg *cfg);
/* Frees everything; links must have been finalised (or are abandoned: their memory is freed). */
void aptus_rel_fini(struct aptus_rel *e);

/* A link per peer, embedded in the channel's peer record; `user` is for the callbacks. */
void aptus_rel_link_init(struct aptus_rel *e, struct aptus_rel_link *l, void *user);
/* Drops whatever the link holds (unacked data is lost). O(links with timers armed). */
void aptus_rel_link_fini(struct aptus_rel *e, struct aptus_rel_link *l);
static inline void *aptus_rel_link_user(const struct aptus_rel_link *l);
/* Nonzero once ops->dead has been called for the link. */
static inline int aptus_rel_link_dead(const struct aptus_rel_link *l);
/* NULL unless cfg.link_stats and the link has had traffic. */
static inline const struct aptus_rel_stats *aptus_rel_link_stats(const struct aptus_rel_link *l);
/* The link's smoothed RTT (0 before the first sample) and current timeout (back-off included). */
void aptus_rel_link_rtt(const struct aptus_rel *e, const struct aptus_rel_link *l, uint64_t *srtt_ns, uint64_t *rto_ns);

/* Sends one payload gathered from iov (at most cfg.max_payload bytes; the engine copies it).
 * APTUS_OK; APTUS_NORES when the link's window is full (retry after input/tick); APTUS_ERR
 * when too large or the link is dead. */
static inline int aptus_rel_send(struct aptus_rel *e, struct aptus_rel_link *l, const struct iovec *iov, int n,
                                 uint64_t now);

/* Whether the link's window has room now for `pkts` more datagrams carrying `bytes` payload
 * bytes in all (a channel that sends a unit of several datagrams whole checks first). */
static inline int aptus_rel_room(const struct aptus_rel *e, const struct aptus_rel_link *l, uint32_t pkts,
                                 size_t bytes);

/* A datagram arrived for this link (engine header first; the channel has found the link). */
void aptus_rel_input(struct aptus_rel *e, struct aptus_rel_link *l, const void *dgram, size_t len, uint64_t now);

/* Nonzero when aptus_rel_tick has something to do at `now` (one compare). */
static inline int aptus_rel_due(const struct aptus_rel *e, uint64_t now);
/* Retransmissions, delayed acks, unsent datagrams, dead peers. Returns the next deadline
 * (UINT64_MAX: none). */
uint64_t aptus_rel_tick(struct aptus_rel *e, uint64_t now);

/* Bytes of the engine header in front of every payload (APTUS_REL_HDR). */
static inline size_t aptus_rel_header_size(const struct aptus_rel *e);

/* Engine totals, and memory: `held` = payload buffers and link rings in use, `pooled` = idle
 * ones kept for reuse (bytes). */
const struct aptus_rel_stats *aptus_rel_stats(const struct aptus_rel *e);
void aptus_rel_mem(const struct aptus_rel *e, size_t *held, size_t *pooled);

/* ---- implementation details (not API) ---------------------------------------------------- */

/* Wire header, 24 bytes, little-endian fields (docs/PROTOCOL.md). Read and written with
 * memcpy: datagrams need not be aligned. */
struct aptus_rel_hdr {
    uint8_t type;  /* APTUS_REL_DATA or APTUS_REL_ACK */
    uint8_t flags; /* REL_F_CRC when crc is set; REL_F_RETX on a retransmission */
    uint16_t len;  /* payload bytes following the header (0 for ACK) */
    uint32_t seq;  /* DATA: this datagram's number; ACK: the sender's next number */
    uint32_t ack;  /* next number expected from the peer: all before it were received */
    uint32_t crc;  /* CRC32C of header (crc = 0) + payload; 0 without REL_F_CRC */
    uint64_t sack; /* bit i: number ack + 1 + i was received too */
};
#define APTUS_REL_HDR 24u
_Static_assert(sizeof(struct aptus_rel_hdr) == APTUS_REL_HDR, "engine header is 24 bytes");

enum { REL_F_CRC = 1, REL_F_RETX = 2 /* a retransmission */ };

/* Link flags. */
enum {
    REL_L_ACTIVE = 1,   /* on the engine's timer list */
    REL_L_DEAD = 2,     /* ops->dead called */
    REL_L_HAVE_RTT = 4, /* srtt/rttvar hold a sample */
};

/* One datagram in flight. buf holds header + payload; NULL once selectively acked. */
struct rel_txslot {
    uint8_t *buf;
    uint64_t last_tx; /* time of the latest transmission */
    uint32_t len;     /* payload bytes */
    uint16_t ntx;     /* transmissions so far (0: not yet sent, NORES) */
    uint8_t fast;     /* fast-retransmitted already */
    uint8_t pad;
};

/* What a link holds while it has traffic in flight: pooled, see the top of this file. */
struct rel_flight {
    struct rel_flight *next_free;
    uint64_t rto_due;       /* retransmission timer (UINT64_MAX: none) */
    uint64_t progress;      /* last time the peer acked something new (dead-peer clock) */
    size_t bytes;           /* payload bytes unacked */
    uint32_t unsent;        /* first sequence number not yet transmitted (snd_nxt: none) */
    uint32_t rx_count;      /* datagrams held in rx[] */
    uint8_t probe;          /* rto_due is a tail-loss probe's deadline, not the timeout's */
    uint8_t **rx;           /* reorder ring: rx[seq & mask] holds header + payload, or NULL */
    struct rel_txslot tx[]; /* tx[seq & mask] */
};

struct aptus_rel_link {
    struct aptus_rel_link *next_active; /* timer list */
    struct rel_flight *fl;              /* NULL while nothing is in flight or held */
    struct aptus_rel_stats *stats;      /* cfg.link_stats only */
    void *user;
    uint64_t ack_due;    /* delayed ack deadline (UINT64_MAX: no ack owed) */
    uint32_t snd_nxt;    /* next number to send */
    uint32_t snd_una;    /* oldest number not cumulatively acked */
    uint32_t rcv_nxt;    /* next number expected */
    uint32_t srtt;       /* ns, smoothed RTT (valid with REL_L_HAVE_RTT) */
    uint32_t rttvar;     /* ns */
    uint16_t rx_unacked; /* datagrams received since our last ack */
    uint8_t flags;       /* REL_L_* */
    uint8_t backoff;     /* RTO doublings since the last RTT sample */
};

struct aptus_rel {
    struct aptus_rel_ops ops;
    struct aptus_rel_cfg cfg;
    uint64_t next_due;             /* no timer is due before this (a lower bound) */
    struct aptus_rel_link *active; /* links with a timer armed */
    void *buf_free;                /* idle payload buffers, linked through their first word */
    struct rel_flight *fl_free;    /* idle link rings */
    uint32_t mask;                 /* ring slots - 1 (slots: window_pkts rounded up to 2^k) */
    uint32_t nbuf_free, nfl_free;
    size_t buf_size, fl_size; /* bytes of one buffer / one link ring */
    size_t nbuf_used, nfl_used;
    struct aptus_rel_stats st;
};

#define REL_POOL_KEEP 256 /* idle buffers and rings kept for reuse; more are freed */

#if defined(__GNUC__)
#define REL_LIKELY(x)   __builtin_expect(!!(x), 1)
#define REL_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define REL_LIKELY(x)   (x)
#define REL_UNLIKELY(x) (x)
#endif

/* Wrap-safe order of 32-bit sequence numbers (valid within 2^31 of each other). */
static inline int rel_seq_lt(uint32_t a, uint32_t b)
{
    return (int32_t)(a - b) < 0;
}

/* Slow paths, in reliab.c. */
int aptus_rel_send_slow(struct aptus_rel *e, struct aptus_rel_link *l, const struct iovec *iov, int n, uint64_t now);
void rel_flush_unsent(struct aptus_rel *e, struct aptus_rel_link *l, uint64_t now);

static inline void *aptus_rel_link_user(const struct aptus_rel_link *l)
{
    return l->user;
}

static inline int aptus_rel_link_dead(const struct aptus_rel_link *l)
{
    return (l->flags & REL_L_DEAD) != 0;
}

static inline const struct aptus_rel_stats *aptus_rel_link_stats(const struct aptus_rel_link *l)
{
    return l->stats;
}

static inline size_t aptus_rel_header_size(const struct aptus_rel *e)
{
    (void)e;
    return APTUS_REL_HDR;
}

static inline int aptus_rel_room(const struct aptus_rel *e, const struct aptus_rel_link *l, uint32_t pkts, size_t bytes)
{
    size_t held = l->fl ? l->fl->bytes : 0;
    return l->snd_nxt - l->snd_una + pkts <= e->cfg.window_pkts && held + bytes <= e->cfg.window_bytes;
}

static inline int aptus_rel_due(const struct aptus_rel *e, uint64_t now)
{
    return now >= e->next_due;
}

/* Copies a payload behind its header in buf and gives it the link's next sequence number (both
 * send paths; counting and transmitting are theirs). */
static inline void rel_enqueue(struct aptus_rel *e, struct aptus_rel_link *l, struct rel_flight *fl, uint8_t *buf,
                               const struct iovec *iov, int n, size_t len, uint64_t now)
{
    uint8_t *p = buf + APTUS_REL_HDR;
    for (int i = 0; i < n; i++) {
        memcpy(p, iov[i].iov_base, iov[i].iov_len);
        p += iov[i].iov_len;
    }
    if (l->snd_nxt == l->snd_una)
        fl->progress = now; /* the dead-peer clock starts with the flight */
    struct rel_txslot *s = &fl->tx[l->snd_nxt++ & e->mask];
    s->buf = buf;
    s->len = (uint32_t)len;
    s->ntx = 0;
    s->fast = 0;
    fl->bytes += len;
}

/* The fast path: the link has a ring (traffic in flight), the windows have room, a pooled
 * buffer is there, the payload fits and nothing waits unsent. Everything else (first datagram
 * of a burst, full window, dead link, ...) goes to aptus_rel_send_slow. */
static inline int aptus_rel_send(struct aptus_rel *e, struct aptus_rel_link *l, const struct iovec *iov, int n,
                                 uint64_t now)
{
    struct rel_flight *fl = l->fl;
    size_t len = 0;
    for (int i = 0; i < n; i++)
        len += iov[i].iov_len;
    if (REL_UNLIKELY(!fl || !e->buf_free || len > e->cfg.max_payload || (l->flags & REL_L_DEAD) ||
                     l->snd_nxt - l->snd_una >= e->cfg.window_pkts || fl->bytes + len > e->cfg.window_bytes ||
                     fl->unsent != l->snd_nxt || l->stats))
        return aptus_rel_send_slow(e, l, iov, n, now);
    uint8_t *buf = (uint8_t *)e->buf_free;
    memcpy(&e->buf_free, buf, sizeof(void *));
    e->nbuf_free--;
    e->nbuf_used++;
    rel_enqueue(e, l, fl, buf, iov, n, len, now);
    e->st.sent++;
    e->st.bytes_sent += len;
    rel_flush_unsent(e, l, now); /* transmits it (fl->unsent was the new number) */
    return APTUS_OK;
}

#endif
