/* The reliability and re-order engine: everything but the send fast path (inline in reliab.h).
 * Mechanisms, memory and re-entrancy rules: reliab.h; wire format: docs/PROTOCOL.md, section
 * "Reliability engine header". */
#include "channel/reliab/reliab.h"

#include <endian.h>
#include <stdlib.h>

#include "runtime/crc32c.h"

#define REL_FAST_THRESH 3 /* later datagrams selectively acked before a hole is resent */
#define REL_BACKOFF_MAX 30

#define REL_COUNT(e, l, field, n)                                                                                      \
    do {                                                                                                               \
        (e)->st.field += (n);                                                                                          \
        if ((l)->stats)                                                                                                \
            (l)->stats->field += (n);                                                                                  \
    } while (0)

static inline uint64_t u64_min(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

void aptus_rel_cfg_default(struct aptus_rel_cfg *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->window_pkts = 64;
    cfg->window_bytes = 256 * 1024;
    cfg->max_payload = 1472 - APTUS_REL_HDR; /* one UDP datagram on Ethernet */
    cfg->ack_delay_ns = 50 * 1000;
    cfg->ack_every = 0;
    cfg->rto_init_ns = 50 * 1000 * 1000ull;
    cfg->rto_min_ns = 5 * 1000 * 1000ull;
    cfg->rto_max_ns = 1000 * 1000 * 1000ull;
    cfg->peer_timeout_ns = 30 * 1000 * 1000 * 1000ull;
}

/* ---- pools --------------------------------------------------------------------------------- */

static uint8_t *buf_get(struct aptus_rel *e)
{
    uint8_t *b = e->buf_free;
    if (b) {
        memcpy(&e->buf_free, b, sizeof(void *));
        e->nbuf_free--;
    } else if (!(b = malloc(e->buf_size))) {
        return NULL;
    }
    e->nbuf_used++;
    return b;
}

static void buf_put(struct aptus_rel *e, uint8_t *b)
{
    e->nbuf_used--;
    if (e->nbuf_free >= REL_POOL_KEEP) {
        free(b);
        return;
    }
    memcpy(b, &e->buf_free, sizeof(void *));
    e->buf_free = b;
    e->nbuf_free++;
}

/* A ring for a link that starts having traffic. Idle rings have every rx[] slot NULL. */
static struct rel_flight *flight_get(struct aptus_rel *e, struct aptus_rel_link *l, uint64_t now)
{
    struct rel_flight *fl = e->fl_free;
    if (fl) {
        e->fl_free = fl->next_free;
        e->nfl_free--;
    } else {
        if (!(fl = calloc(1, e->fl_size)))
            return NULL;
        fl->rx = (uint8_t **)(void *)(fl->tx + e->mask + 1);
    }
    e->nfl_used++;
    fl->next_free = NULL;
    fl->rto_due = UINT64_MAX;
    fl->progress = now;
    fl->bytes = 0;
    fl->unsent = l->snd_nxt;
    fl->rx_count = 0;
    l->fl = fl;
    return fl;
}

static void flight_put(struct aptus_rel *e, struct aptus_rel_link *l)
{
    struct rel_flight *fl = l->fl;
    l->fl = NULL;
    e->nfl_used--;
    if (e->nfl_free >= REL_POOL_KEEP) {
        free(fl);
        return;
    }
    fl->next_free = e->fl_free;
    e->fl_free = fl;
    e->nfl_free++;
}

/* Gives the ring back once nothing is in flight and nothing waits for a hole. */
static inline void flight_maybe_put(struct aptus_rel *e, struct aptus_rel_link *l)
{
    struct rel_flight *fl = l->fl;
    if (fl && l->snd_una == l->snd_nxt && fl->rx_count == 0)
        flight_put(e, l);
}

/* ---- timers -------------------------------------------------------------------------------- */

static inline void rel_arm(struct aptus_rel *e, struct aptus_rel_link *l, uint64_t when)
{
    if (!(l->flags & REL_L_ACTIVE)) {
        l->flags |= REL_L_ACTIVE;
        l->next_active = e->active;
        e->active = l;
    }
    if (when < e->next_due)
        e->next_due = when;
}

static uint64_t rel_rto(const struct aptus_rel *e, const struct aptus_rel_link *l)
{
    const struct aptus_rel_cfg *c = &e->cfg;
    uint64_t r = c->rto_init_ns;
    if (l->flags & REL_L_HAVE_RTT) {
        /* RFC 6298: srtt + max(G, 4 rttvar); G is the receiver's ack delay. */
        uint64_t v = 4 * (uint64_t)l->rttvar;
        r = (uint64_t)l->srtt + (v > c->ack_delay_ns ? v : c->ack_delay_ns);
    }
    if (r < c->rto_min_ns)
        r = c->rto_min_ns;
    if (r > c->rto_max_ns >> l->backoff)
        return c->rto_max_ns;
    return r << l->backoff;
}

/* The timer after progress (a first transmission with nothing in flight, or an ack of something
 * new): a tail-loss probe's deadline when it comes before the timeout -- the last datagram of an
 * exchange (a ping-pong's) has nothing after it to reveal its loss by selective acks, and would
 * otherwise wait for the timeout, at least rto_min -- else the timeout's. The probe waits two round
 * trips and the peer's ack delay: an answer or an ack comes before it unless something was lost
 * (or the peer is not polling: then one datagram goes twice). */
static uint64_t rel_due_after_progress(const struct aptus_rel *e, struct aptus_rel_link *l, uint64_t now)
{
    uint64_t rto = rel_rto(e, l);
    struct rel_flight *fl = l->fl;
    fl->probe = 0;
    if (e->cfg.tlp_min_ns && (l->flags & REL_L_HAVE_RTT) && !l->backoff) {
        uint64_t pto = 2 * (uint64_t)l->srtt + e->cfg.ack_delay_ns;
        if (pto < e->cfg.tlp_min_ns)
            pto = e->cfg.tlp_min_ns;
        if (pto < rto) {
            fl->probe = 1;
            return now + pto;
        }
    }
    return now + rto;
}

static void rel_rtt_sample(struct aptus_rel_link *l, uint64_t rtt)
{
    uint64_t r = rtt > UINT32_MAX ? UINT32_MAX : rtt;
    if (!(l->flags & REL_L_HAVE_RTT)) {
        l->srtt = (uint32_t)r;
        l->rttvar = (uint32_t)(r / 2);
        l->flags |= REL_L_HAVE_RTT;
    } else {
        uint64_t d = r > l->srtt ? r - l->srtt : l->srtt - r;
        l->rttvar = (uint32_t)((3 * (uint64_t)l->rttvar + d) / 4);
        l->srtt = (uint32_t)((7 * (uint64_t)l->srtt + r) / 8);
    }
    l->backoff = 0; /* Karn: a fresh sample ends the back-off */
}

void aptus_rel_link_rtt(const struct aptus_rel *e, const struct aptus_rel_link *l, uint64_t *srtt_ns, uint64_t *rto_ns)
{
    if (srtt_ns)
        *srtt_ns = (l->flags & REL_L_HAVE_RTT) ? l->srtt : 0;
    if (rto_ns)
        *rto_ns = rel_rto(e, l);
}

/* ---- transmission -------------------------------------------------------------------------- */

/* Selective acks: bit i set when rcv_nxt + 1 + i is held in the reorder ring. */
static uint64_t rel_sack(const struct aptus_rel *e, const struct aptus_rel_link *l)
{
    const struct rel_flight *fl = l->fl;
    if (!fl || !fl->rx_count)
        return 0;
    uint64_t map = 0;
    uint32_t span = e->cfg.window_pkts - 1 < 64 ? e->cfg.window_pkts - 1 : 64;
    for (uint32_t i = 0; i < span; i++)
        if (fl->rx[(l->rcv_nxt + 1 + i) & e->mask])
            map |= 1ull << i;
    return map;
}

/* Writes the header (with the current ack state) in front of a payload of len bytes at buf,
 * and its CRC when configured. */
static void rel_hdr_write(struct aptus_rel *e, struct aptus_rel_link *l, uint8_t *buf, uint8_t type, uint32_t seq,
                          uint32_t len, uint8_t flags)
{
    struct aptus_rel_hdr h;
    h.type = type;
    h.flags = (uint8_t)(flags | (e->cfg.crc ? REL_F_CRC : 0));
    h.len = htole16((uint16_t)len);
    h.seq = htole32(seq);
    h.ack = htole32(l->rcv_nxt);
    h.crc = 0;
    h.sack = htole64(rel_sack(e, l));
    memcpy(buf, &h, sizeof h);
    if (e->cfg.crc) {
        uint32_t c = htole32(aptus_crc32c(0, buf, APTUS_REL_HDR + len));
        memcpy(buf + offsetof(struct aptus_rel_hdr, crc), &c, sizeof c);
    }
}

/* Every datagram carries the ack state: once one is out, no ack is owed. */
static inline void rel_acked_now(struct aptus_rel_link *l)
{
    l->ack_due = UINT64_MAX;
    l->rx_unacked = 0;
}

/* (Re)transmits data datagram seq with fresh ack fields; flags: REL_F_RETX for a retransmission
 * (the receiver tells a loss from a retransmission that was not needed by it). */
static int rel_tx(struct aptus_rel *e, struct aptus_rel_link *l, uint32_t seq, uint64_t now, uint8_t flags)
{
    struct rel_txslot *s = &l->fl->tx[seq & e->mask];
    rel_hdr_write(e, l, s->buf, APTUS_REL_DATA, seq, s->len, flags);
    struct iovec iov = { s->buf, APTUS_REL_HDR + s->len };
    if (e->ops.xmit(l, &iov, 1) != APTUS_OK)
        return APTUS_NORES;
    s->ntx++;
    s->last_tx = now;
    rel_acked_now(l);
    return APTUS_OK;
}

void rel_flush_unsent(struct aptus_rel *e, struct aptus_rel_link *l, uint64_t now)
{
    struct rel_flight *fl = l->fl;
    while (fl->unsent != l->snd_nxt) {
        if (rel_tx(e, l, fl->unsent, now, 0) != APTUS_OK) {
            rel_arm(e, l, now); /* try again from the next tick */
            return;
        }
        fl->unsent++;
        if (fl->rto_due == UINT64_MAX) {
            fl->rto_due = rel_due_after_progress(e, l, now);
            rel_arm(e, l, fl->rto_due);
        }
    }
}

static void rel_send_ack(struct aptus_rel *e, struct aptus_rel_link *l, uint64_t now)
{
    uint8_t buf[APTUS_REL_HDR];
    rel_hdr_write(e, l, buf, APTUS_REL_ACK, l->snd_nxt, 0, 0);
    struct iovec iov = { buf, sizeof buf };
    if (e->ops.xmit(l, &iov, 1) != APTUS_OK) {
        l->ack_due = now;
        rel_arm(e, l, now);
        return;
    }
    REL_COUNT(e, l, acks_sent, 1);
    rel_acked_now(l);
}

int aptus_rel_send_slow(struct aptus_rel *e, struct aptus_rel_link *l, const struct iovec *iov, int n, uint64_t now)
{
    size_t len = 0;
    for (int i = 0; i < n; i++)
        len += iov[i].iov_len;
    if (len > e->cfg.max_payload || (l->flags & REL_L_DEAD))
        return APTUS_ERR;
    struct rel_flight *fl = l->fl;
    if (l->snd_nxt - l->snd_una >= e->cfg.window_pkts || (fl && fl->bytes > 0 && fl->bytes + len > e->cfg.window_bytes))
        return APTUS_NORES;
    if (e->cfg.link_stats && !l->stats && !(l->stats = calloc(1, sizeof *l->stats)))
        return APTUS_ERR;
    if (!fl && !(fl = flight_get(e, l, now)))
        return APTUS_ERR;
    uint8_t *buf = buf_get(e);
    if (!buf) {
        flight_maybe_put(e, l);
        return APTUS_ERR;
    }
    rel_enqueue(e, l, fl, buf, iov, n, len, now);
    REL_COUNT(e, l, sent, 1);
    REL_COUNT(e, l, bytes_sent, len);
    /* Behind datagrams still unsent (the channel said NORES), it waits its turn. */
    if (fl->unsent == l->snd_nxt - 1)
        rel_flush_unsent(e, l, now);
    return APTUS_OK;
}

/* ---- acknowledgements in --------------------------------------------------------------------- */

static inline void rel_tx_release(struct aptus_rel *e, struct rel_flight *fl, struct rel_txslot *s)
{
    fl->bytes -= s->len;
    buf_put(e, s->buf);
    s->buf = NULL;
}

/* Selective acks, relative to snd_una (== the cumulative ack just processed): frees what the
 * peer holds, takes an RTT sample, fast-retransmits holes with enough acked after them. */
static void rel_sack_input(struct aptus_rel *e, struct aptus_rel_link *l, uint64_t sack, uint64_t now)
{
    struct rel_flight *fl = l->fl;
    uint32_t sent = fl->unsent - l->snd_una; /* numbers snd_una .. unsent-1 were sent */
    if (sent == 0)
        return; /* nothing sent yet: no bit can be ours */
    if (sent - 1 < 64)
        sack &= (1ull << (sent - 1)) - 1; /* ignore bits for numbers never sent */
    if (!sack)
        return;
    struct rel_txslot *sample = NULL;
    for (uint64_t m = sack; m; m &= m - 1) {
        uint32_t seq = l->snd_una + 1 + (uint32_t)__builtin_ctzll(m);
        struct rel_txslot *s = &fl->tx[seq & e->mask];
        if (s->buf) {
            if (s->ntx == 1 && (!sample || s->last_tx > sample->last_tx))
                sample = s;
            rel_tx_release(e, fl, s);
        }
    }
    if (sample)
        rel_rtt_sample(l, now - sample->last_tx);
    /* Holes: number snd_una + j has popcount(sack >> j) later ones acked. */
    for (uint32_t j = 0; j < 64 && j < sent; j++) {
        uint64_t later = j ? sack >> j : sack;
        if (__builtin_popcountll(later) < REL_FAST_THRESH)
            break;
        uint32_t seq = l->snd_una + j;
        struct rel_txslot *s = &fl->tx[seq & e->mask];
        if (!s->buf || s->fast)
            continue;
        if (rel_tx(e, l, seq, now, REL_F_RETX) != APTUS_OK)
            break;
        s->fast = 1;
        REL_COUNT(e, l, retx_fast, 1);
    }
}

static void rel_ack_input(struct aptus_rel *e, struct aptus_rel_link *l, uint32_t ack, uint64_t sack, uint64_t now)
{
    struct rel_flight *fl = l->fl;
    if (!fl || l->snd_una == l->snd_nxt)
        return;
    /* Stale (reordered) or claiming numbers never sent: ignore. */
    if (rel_seq_lt(ack, l->snd_una) || rel_seq_lt(fl->unsent, ack))
        return;
    if (ack != l->snd_una) {
        struct rel_txslot *sample = NULL;
        for (uint32_t seq = l->snd_una; seq != ack; seq++) {
            struct rel_txslot *s = &fl->tx[seq & e->mask];
            if (s->buf) {
                if (s->ntx == 1)
                    sample = s; /* the newest one sent once (Karn) */
                rel_tx_release(e, fl, s);
            }
        }
        l->snd_una = ack;
        fl->progress = now;
        if (sample)
            rel_rtt_sample(l, now - sample->last_tx);
        fl->rto_due = ack == fl->unsent ? UINT64_MAX : rel_due_after_progress(e, l, now); /* RFC 6298 5.3 */
    }
    if (sack && l->snd_una != fl->unsent)
        rel_sack_input(e, l, sack, now);
}

/* ---- data in --------------------------------------------------------------------------------- */

/* A retransmission brought a datagram that was not here: its first transmission was lost. */
static void rel_recovered(struct aptus_rel *e, struct aptus_rel_link *l)
{
    REL_COUNT(e, l, recovered, 1);
    if (e->ops.recovered)
        e->ops.recovered(l);
}

static void rel_data_input(struct aptus_rel *e, struct aptus_rel_link *l, const uint8_t *dgram, uint32_t seq,
                           uint32_t plen, uint8_t flags, uint64_t now)
{
    uint32_t d = seq - l->rcv_nxt;
    /* (a retransmission that is new here: counted where it is delivered or held, not where this
     * side drops it for want of a buffer -- its next copy would count again) */
    if (REL_LIKELY(d == 0)) {
        if (REL_UNLIKELY(flags & REL_F_RETX))
            rel_recovered(e, l);
        /* In order: deliver in place, then whatever the hole held back. The ack state is
         * updated first, so a send from the handler carries it. */
        int ack_now = 0;
        l->rcv_nxt++;
        if (++l->rx_unacked >= e->cfg.ack_every)
            ack_now = 1;
        else if (l->ack_due == UINT64_MAX) {
            l->ack_due = now + e->cfg.ack_delay_ns;
            rel_arm(e, l, l->ack_due);
        }
        REL_COUNT(e, l, delivered, 1);
        REL_COUNT(e, l, bytes_delivered, plen);
        e->ops.deliver(l, dgram + APTUS_REL_HDR, plen);
        struct rel_flight *fl = l->fl;
        if (fl && fl->rx_count) {
            uint8_t *b;
            while ((b = fl->rx[l->rcv_nxt & e->mask])) {
                uint16_t bl;
                memcpy(&bl, b + offsetof(struct aptus_rel_hdr, len), sizeof bl);
                bl = le16toh(bl);
                fl->rx[l->rcv_nxt & e->mask] = NULL;
                fl->rx_count--;
                l->rcv_nxt++;
                l->rx_unacked++;
                REL_COUNT(e, l, delivered, 1);
                REL_COUNT(e, l, bytes_delivered, bl);
                e->ops.deliver(l, b + APTUS_REL_HDR, bl);
                buf_put(e, b);
            }
            ack_now = 1; /* tell the sender at once what the hole was */
        }
        if (ack_now && l->rx_unacked)
            rel_send_ack(e, l, now);
        return;
    }
    if (d < 0x80000000u) {
        if (d >= e->cfg.window_pkts) {
            REL_COUNT(e, l, out_of_window, 1);
        } else {
            struct rel_flight *fl = l->fl;
            if (!fl && !(fl = flight_get(e, l, now)))
                return;
            uint8_t **slot = &fl->rx[seq & e->mask];
            if (*slot) {
                REL_COUNT(e, l, dups, 1);
            } else {
                uint8_t *b = buf_get(e);
                if (!b) {
                    flight_maybe_put(e, l);
                    return; /* dropped: it will come again */
                }
                memcpy(b, dgram, APTUS_REL_HDR + plen);
                *slot = b;
                if (flags & REL_F_RETX)
                    rel_recovered(e, l);
                fl->rx_count++;
                REL_COUNT(e, l, out_of_order, 1);
            }
        }
    } else {
        REL_COUNT(e, l, dups, 1); /* already delivered: our ack may have been lost */
    }
    rel_send_ack(e, l, now);
}

void aptus_rel_input(struct aptus_rel *e, struct aptus_rel_link *l, const void *dgram, size_t len, uint64_t now)
{
    const uint8_t *p = dgram;
    struct aptus_rel_hdr h;
    if (REL_UNLIKELY(len < APTUS_REL_HDR)) {
        REL_COUNT(e, l, malformed, 1);
        return;
    }
    memcpy(&h, p, sizeof h);
    uint32_t plen = le16toh(h.len);
    if (REL_UNLIKELY((h.type != APTUS_REL_DATA && h.type != APTUS_REL_ACK) || APTUS_REL_HDR + plen > len ||
                     plen > e->cfg.max_payload)) {
        REL_COUNT(e, l, malformed, 1);
        return;
    }
    if (e->cfg.crc) {
        static const uint8_t zero[4];
        uint32_t c = aptus_crc32c(0, p, offsetof(struct aptus_rel_hdr, crc));
        c = aptus_crc32c(c, zero, sizeof zero);
        c = aptus_crc32c(c, p + offsetof(struct aptus_rel_hdr, sack), APTUS_REL_HDR - 16 + plen);
        if (c != le32toh(h.crc)) {
            REL_COUNT(e, l, crc_fail, 1);
            return;
        }
    }
    if (REL_UNLIKELY(l->flags & REL_L_DEAD))
        return;
    if (l->fl)
        rel_ack_input(e, l, le32toh(h.ack), le64toh(h.sack), now);
    if (h.type == APTUS_REL_DATA)
        rel_data_input(e, l, p, le32toh(h.seq), plen, h.flags, now);
    flight_maybe_put(e, l);
}

/* ---- timers ---------------------------------------------------------------------------------- */

/* The retransmission timer expired: resend every datagram not acked within the timeout, and
 * double it. */
static void rel_timeout(struct aptus_rel *e, struct aptus_rel_link *l, uint64_t now)
{
    struct rel_flight *fl = l->fl;
    if (fl->probe) {
        /* The tail-loss probe: the newest datagram unacked goes again (its ack, selective or
         * not, shows what else is missing); the timeout proper follows from the oldest. */
        fl->probe = 0;
        uint32_t seq = fl->unsent;
        while (seq != l->snd_una && !fl->tx[(seq - 1) & e->mask].buf)
            seq--;
        if (seq != l->snd_una && rel_tx(e, l, seq - 1, now, REL_F_RETX) == APTUS_OK)
            REL_COUNT(e, l, probes, 1);
        uint64_t rto = rel_rto(e, l), due = now + rto;
        const struct rel_txslot *old = &fl->tx[l->snd_una & e->mask];
        if (old->buf)
            due = u64_min(due, old->last_tx + rto);
        fl->rto_due = due;
        return;
    }
    uint64_t rto_old = rel_rto(e, l), next = UINT64_MAX;
    int backed_off = 0, n = 0;
    if (l->backoff < REL_BACKOFF_MAX) {
        l->backoff++;
        backed_off = 1;
    }
    uint64_t rto = rel_rto(e, l);
    for (uint32_t seq = l->snd_una; seq != fl->unsent; seq++) {
        struct rel_txslot *s = &fl->tx[seq & e->mask];
        if (!s->buf)
            continue;
        if (s->last_tx + rto_old <= now) {
            if (rel_tx(e, l, seq, now, REL_F_RETX) != APTUS_OK) {
                next = now;
                break;
            }
            n++;
        }
        next = u64_min(next, s->last_tx + rto);
    }
    if (n)
        REL_COUNT(e, l, timeouts, 1);
    else if (backed_off)
        l->backoff--;
    REL_COUNT(e, l, retx_timeout, (uint64_t)n);
    fl->rto_due = next;
}

/* Frees what a link holds (dead or finalised). */
static void rel_link_drop(struct aptus_rel *e, struct aptus_rel_link *l)
{
    struct rel_flight *fl = l->fl;
    if (fl) {
        for (uint32_t seq = l->snd_una; seq != l->snd_nxt; seq++) {
            struct rel_txslot *s = &fl->tx[seq & e->mask];
            if (s->buf)
                rel_tx_release(e, fl, s);
        }
        for (uint32_t i = 0; i <= e->mask && fl->rx_count; i++)
            if (fl->rx[i]) {
                buf_put(e, fl->rx[i]);
                fl->rx[i] = NULL;
                fl->rx_count--;
            }
        flight_put(e, l);
    }
    l->snd_una = l->snd_nxt;
    l->ack_due = UINT64_MAX;
}

uint64_t aptus_rel_tick(struct aptus_rel *e, uint64_t now)
{
    uint64_t next = UINT64_MAX;
    struct aptus_rel_link **pp = &e->active, *l, *dead = NULL;
    while ((l = *pp)) {
        struct rel_flight *fl = l->fl;
        uint64_t due = UINT64_MAX;
        if (fl && l->snd_una != l->snd_nxt && now >= fl->progress + e->cfg.peer_timeout_ns) {
            *pp = l->next_active;
            l->flags = (uint8_t)((l->flags & ~REL_L_ACTIVE) | REL_L_DEAD);
            l->next_active = dead;
            dead = l;
            continue;
        }
        if (l->ack_due <= now)
            rel_send_ack(e, l, now);
        if (fl) {
            if (fl->unsent != l->snd_nxt)
                rel_flush_unsent(e, l, now);
            if (fl->rto_due <= now)
                rel_timeout(e, l, now);
            due = fl->rto_due;
            if (fl->unsent != l->snd_nxt)
                due = now; /* the channel had no room: try again next time */
            if (l->snd_una != l->snd_nxt)
                due = u64_min(due, fl->progress + e->cfg.peer_timeout_ns);
        }
        due = u64_min(due, l->ack_due);
        if (due == UINT64_MAX) {
            *pp = l->next_active;
            l->flags &= (uint8_t)~REL_L_ACTIVE;
            continue;
        }
        next = u64_min(next, due);
        pp = &l->next_active;
    }
    e->next_due = next;
    while (dead) {
        l = dead;
        dead = l->next_active;
        l->next_active = NULL;
        rel_link_drop(e, l);
        e->ops.dead(l);
    }
    return e->next_due;
}

/* ---- set-up -------------------------------------------------------------------------------- */

int aptus_rel_init(struct aptus_rel *e, const struct aptus_rel_ops *ops, const struct aptus_rel_cfg *cfg)
{
    memset(e, 0, sizeof *e);
    if (!ops || !ops->xmit || !ops->deliver || !ops->dead || !cfg)
        return APTUS_ERR;
    if (cfg->window_pkts < 1 || cfg->window_pkts > 32768 || cfg->max_payload > 65535 || cfg->rto_min_ns == 0 ||
        cfg->rto_min_ns > cfg->rto_max_ns || cfg->rto_init_ns == 0 || cfg->peer_timeout_ns == 0)
        return APTUS_ERR;
    e->ops = *ops;
    e->cfg = *cfg;
    if (e->cfg.ack_every == 0)
        e->cfg.ack_every = cfg->window_pkts / 4 ? cfg->window_pkts / 4 : 1;
    if (e->cfg.ack_every > UINT16_MAX)
        e->cfg.ack_every = UINT16_MAX;
    if (e->cfg.window_bytes < e->cfg.max_payload)
        e->cfg.window_bytes = e->cfg.max_payload;
    uint32_t slots = 1;
    while (slots < cfg->window_pkts)
        slots <<= 1;
    e->mask = slots - 1;
    e->buf_size = (APTUS_REL_HDR + cfg->max_payload + 7) & ~(size_t)7;
    e->fl_size = sizeof(struct rel_flight) + slots * (sizeof(struct rel_txslot) + sizeof(uint8_t *));
    e->next_due = UINT64_MAX;
    return APTUS_OK;
}

void aptus_rel_fini(struct aptus_rel *e)
{
    while (e->buf_free) {
        void *b = e->buf_free;
        memcpy(&e->buf_free, b, sizeof(void *));
        free(b);
    }
    while (e->fl_free) {
        struct rel_flight *fl = e->fl_free;
        e->fl_free = fl->next_free;
        free(fl);
    }
    e->nbuf_free = e->nfl_free = 0;
}

void aptus_rel_link_init(struct aptus_rel *e, struct aptus_rel_link *l, void *user)
{
    memset(l, 0, sizeof *l);
    l->user = user;
    l->ack_due = UINT64_MAX;
    l->snd_nxt = l->snd_una = l->rcv_nxt = e->cfg.initial_seq;
}

void aptus_rel_link_fini(struct aptus_rel *e, struct aptus_rel_link *l)
{
    if (l->flags & REL_L_ACTIVE) {
        for (struct aptus_rel_link **pp = &e->active; *pp; pp = &(*pp)->next_active)
            if (*pp == l) {
                *pp = l->next_active;
                break;
            }
        l->flags &= (uint8_t)~REL_L_ACTIVE;
    }
    rel_link_drop(e, l);
    free(l->stats);
    l->stats = NULL;
}

const struct aptus_rel_stats *aptus_rel_stats(const struct aptus_rel *e)
{
    return &e->st;
}

void aptus_rel_mem(const struct aptus_rel *e, size_t *held, size_t *pooled)
{
    if (held)
        *held = e->nbuf_used * e->buf_size + e->nfl_used * e->fl_size;
    if (pooled)
        *pooled = (size_t)e->nbuf_free * e->buf_size + (size_t)e->nfl_free * e->fl_size;
}
