/* The UD send/receive channel (ud-sr, seed 000 sections 3 and 5): eager frames over
 * connection-less datagrams, made reliable and ordered by the reliability engine
 * (channel/reliab/), segmented at the datagram size and reassembled in order.
 *
 * One datagram endpoint and one pool of posted receive buffers per process, shared by every
 * peer: what grows with the number of peers is only the small record of a peer we talk to
 * (its address-vector entry and engine link), created on first contact. A peer's address is
 * read from its business card (PMI) on first contact, never all at start-up.
 *
 * Datagram: [struct ud_hdr][engine header][payload]. A frame (the message layer's header and
 * payload) travels as one or more engine payloads; the first carries the frame's length in
 * front (4 bytes), the others are plain continuation bytes: the engine delivers a link's
 * payloads exactly once and in order, so a frame's pieces arrive back to back. A frame that
 * fits one datagram is handed up straight from the receive buffer; a longer one is assembled
 * in a buffer of the peer's that lives only while it is incomplete. */
#ifdef APTUS_HAVE_LIBFABRIC

#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "channel/channel.h"
#include "channel/rc/rc.h"
#include "channel/reliab/reliab.h"
#include "channel/ud/ud_int.h"
#include "core/datatype.h"
#include "core/errors.h"
#include "fabric/fabric.h"
#include "runtime/config.h"
#include "runtime/progress.h"
#include "runtime/runtime.h"

#define ud  aptus_ud
#define imp aptus_ud_imp

struct ud_state aptus_ud;
struct ud_imp aptus_ud_imp;

#define now_ns ud_now_ns

static struct ud_ep *ep_of_link(struct aptus_rel_link *l)
{
    return aptus_rel_link_user(l);
}

/* ---- sending ---------------------------------------------------------------------------- */

/* Send buffers registered at most (FI_MR_LOCAL: one pool, allocated at start). */
#define UD_TX_LOCAL_MAX 256

struct ud_txbuf *aptus_ud_txbuf_get(void)
{
    struct ud_txbuf *b = ud.tx_free;
    if (b) {
        ud.tx_free = b->next_free;
        return b;
    }
    if (ud.ntx >= ud.tx_cap)
        return NULL;
    if (ud.tx_pool)
        b = (struct ud_txbuf *)(ud.tx_pool + ud.ntx * ud.tx_stride);
    else if (!(b = malloc(ud.tx_stride)))
        return NULL;
    ud.ntx++;
    return b;
}

void aptus_ud_txbuf_put(struct ud_txbuf *b)
{
    b->next_free = ud.tx_free;
    ud.tx_free = b;
}

/* Hands one datagram (b->data: prefix, then len bytes) to the provider; b is given back. */
static int post_tx(struct ud_txbuf *b, size_t len, fi_addr_t to)
{
    ssize_t rc;
    if (len + ud.d.prefix <= ud.d.inject_max) {
        rc = fi_inject(ud.d.ep, b->data, len + ud.d.prefix, to);
        aptus_ud_txbuf_put(b);
    } else {
        b->ctx.kind = UD_CTX_TX;
        rc = fi_send(ud.d.ep, b->data, len + ud.d.prefix, ud.tx_desc, to, &b->ctx);
        if (rc == 0)
            ud.ntx_out++;
        else
            aptus_ud_txbuf_put(b);
    }
    /* No room in the provider now (or another error): the engine sends it again later. An
     * error that is not about room and lasts (the interface went away) ends the job, from
     * ud_progress. */
    if (rc != 0) {
        ud.refused++;
        if (rc != -FI_EAGAIN) {
            ud.hard_rc = (int)rc;
            if (!ud.hard_since)
                ud.hard_since = now_ns();
        }
    } else {
        ud.hard_since = 0;
    }
    return rc == 0 ? APTUS_OK : APTUS_NORES;
}

/* ---- the test-only impairment stage (APTUS_UD_IMPAIR) ----------------------------------- */

int aptus_ud_imp_now(void)
{
    if (imp.start_ns && ud_now_ns() < imp.start_ns)
        return 0;
    imp.start_ns = 0; /* (started: no more clock reads) */
    return 1;
}

double aptus_ud_imp_rand(void)
{
    imp.rng ^= imp.rng << 13; /* xorshift64 */
    imp.rng ^= imp.rng >> 7;
    imp.rng ^= imp.rng << 17;
    return (double)(imp.rng >> 11) / 9007199254740992.0;
}

/* "loss=P,dup=P,reorder=P,seed=S,after=SECONDS". Returns 0, or -1 with a message in err. */
static int imp_parse(const char *text, char *err, size_t errlen)
{
    memset(&imp, 0, sizeof imp);
    imp.rng = 88172645463325252ull;
    if (!*text)
        return 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", text);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(t, '='), *end;
        if (!eq) {
            snprintf(err, errlen, "APTUS_UD_IMPAIR: '%s' is not KEY=VALUE", t);
            return -1;
        }
        *eq = 0;
        double v = strtod(eq + 1, &end);
        int count = !strcmp(t, "seed") || !strcmp(t, "after"); /* (not probabilities) */
        if (end == eq + 1 || *end || v < 0 || (!count && v > 1) || (!strcmp(t, "after") && v > 1e6)) {
            snprintf(err, errlen, "APTUS_UD_IMPAIR: %s='%s' is not %s", t, eq + 1,
                     count ? "a number (after: seconds, 0..1000000)" : "a probability (0..1)");
            return -1;
        }
        if (!strcmp(t, "loss"))
            imp.loss = v;
        else if (!strcmp(t, "dup"))
            imp.dup = v;
        else if (!strcmp(t, "reorder"))
            imp.reorder = v;
        else if (!strcmp(t, "seed"))
            imp.rng = (uint64_t)v * 2654435761u + 1;
        else if (!strcmp(t, "after"))
            imp.start_ns = ud_now_ns() + (uint64_t)(v * 1e9);
        else {
            snprintf(err, errlen, "APTUS_UD_IMPAIR: unknown key '%s' (loss, dup, reorder, seed, after)", t);
            return -1;
        }
    }
    imp.rng += (uint64_t)aptus_rt.rank * 0x9e3779b97f4a7c15ull; /* each rank its own stream */
    imp.on = 1;
    return 0;
}

/* The settings that need no provider: the impairment (grammar). The stage itself is set up by
 * ud_setup, when the channel is used. */
static int ud_check(char *err, size_t errlen)
{
    int rc = imp_parse(aptus_config.ud_impair, err, errlen);
    memset(&imp, 0, sizeof imp);
    return rc;
}

static void imp_release_held(void)
{
    if (imp.held) {
        struct ud_txbuf *h = imp.held;
        imp.held = NULL;
        post_tx(h, imp.held_len, imp.held_to);
    }
}

/* The stage: drops, holds back or duplicates a datagram on its way to the provider. */
static int imp_tx(struct ud_txbuf *b, size_t len, fi_addr_t to)
{
    if (!aptus_ud_imp_now())
        return post_tx(b, len, to);
    if (aptus_ud_imp_rand() < imp.loss) {
        imp.lost++;
        aptus_ud_txbuf_put(b);
        return APTUS_OK;
    }
    if (!imp.held && aptus_ud_imp_rand() < imp.reorder) {
        imp.reordered++;
        imp.held = b;
        imp.held_len = len;
        imp.held_to = to;
        return APTUS_OK;
    }
    struct ud_txbuf *d = aptus_ud_imp_rand() < imp.dup ? aptus_ud_txbuf_get() : NULL;
    if (d) {
        imp.duplicated++;
        memcpy(d->data, b->data, ud.d.prefix + len);
    }
    int rc = post_tx(b, len, to);
    if (d)
        post_tx(d, len, to);
    imp_release_held();
    return rc;
}

/* The engine's transmit: one datagram to the link's peer. */
static int ud_xmit(struct aptus_rel_link *l, const struct iovec *iov, int n)
{
    struct ud_ep *e = ep_of_link(l);
    struct ud_txbuf *b = aptus_ud_txbuf_get();
    if (!b) {
        ud.refused++;
        return APTUS_NORES;
    }
    char *p = b->data + ud.d.prefix;
    struct ud_hdr h = { (uint32_t)aptus_rt.rank, ud.job };
    memcpy(p, &h, sizeof h);
    size_t len = sizeof h;
    for (int i = 0; i < n; i++) {
        memcpy(p + len, iov[i].iov_base, iov[i].iov_len);
        len += iov[i].iov_len;
    }
    return __builtin_expect(imp.on, 0) ? imp_tx(b, len, e->addr) : post_tx(b, len, e->addr);
}

/* Sends a whole frame (its length word in front of the first piece) as engine payloads. `frame`
 * points at `len` bytes; all of its datagrams go, or none (APTUS_NORES). */
static int send_pieces(struct ud_ep *e, const struct iovec *parts, int nparts, size_t len)
{
    size_t total = len + UD_FRAME_WORD;
    unsigned pieces = (unsigned)((total + ud.piece_max - 1) / ud.piece_max);
    if (aptus_rel_link_dead(&e->link))
        return APTUS_ERR;
    if (!aptus_rel_room(&ud.eng, &e->link, pieces, total))
        return APTUS_NORES;
    uint32_t word[2] = { (uint32_t)len, 0 };
    uint64_t now = now_ns();
    /* Walk the parts (length word first), cutting them at piece_max. */
    struct iovec src[4];
    int ns = 0;
    src[ns++] = (struct iovec){ word, UD_FRAME_WORD };
    for (int i = 0; i < nparts && ns < 4; i++)
        if (parts[i].iov_len)
            src[ns++] = parts[i];
    int si = 0;
    size_t soff = 0;
    for (unsigned k = 0; k < pieces; k++) {
        struct iovec v[4];
        int nv = 0;
        size_t room = ud.piece_max;
        while (room && si < ns) {
            size_t take = src[si].iov_len - soff;
            if (take > room)
                take = room;
            v[nv++] = (struct iovec){ (char *)src[si].iov_base + soff, take };
            room -= take;
            soff += take;
            if (soff == src[si].iov_len) {
                si++;
                soff = 0;
            }
        }
        int rc = aptus_rel_send(&ud.eng, &e->link, v, nv, now);
        if (rc != APTUS_OK) /* the window was checked: only a dead link or no memory */
            return APTUS_ERR;
    }
    return APTUS_OK;
}

int aptus_ud_send_frame(struct ud_ep *e, const void *hdr, size_t hdrlen, const void *payload, size_t len)
{
    if (hdrlen + len > ud.frame_max)
        return APTUS_ERR;
    struct iovec parts[2] = { { (void *)hdr, hdrlen }, { (void *)payload, len } };
    return send_pieces(e, parts, 2, hdrlen + len);
}

static int ud_send_frame(struct aptus_ep *ep, const void *hdr, size_t hdrlen, const void *payload, size_t len)
{
    return aptus_ud_send_frame((struct ud_ep *)ep, hdr, hdrlen, payload, len);
}

int aptus_ud_send_frame_packed(struct ud_ep *e, const void *hdr, size_t hdrlen, struct aptus_dt_cursor *cur, size_t len)
{
    size_t total = hdrlen + len + UD_FRAME_WORD;
    if (hdrlen + len > ud.frame_max)
        return APTUS_ERR;
    if (!aptus_rel_room(&ud.eng, &e->link, (uint32_t)((total + ud.piece_max - 1) / ud.piece_max), total))
        return APTUS_NORES; /* the cursor moves only when the frame goes */
    memcpy(ud.scratch, hdr, hdrlen);
    aptus_dt_pack_some(cur, ud.scratch + hdrlen, len);
    struct iovec part = { ud.scratch, hdrlen + len };
    return send_pieces(e, &part, 1, hdrlen + len);
}

static int ud_send_frame_packed(struct aptus_ep *ep, const void *hdr, size_t hdrlen, struct aptus_dt_cursor *cur,
                                size_t len)
{
    return aptus_ud_send_frame_packed((struct ud_ep *)ep, hdr, hdrlen, cur, len);
}

/* ---- receiving -------------------------------------------------------------------------- */

static void frame_in(struct ud_ep *e, const char *frame, size_t len)
{
    aptus_am_dispatch(e->base.peer, frame, len);
}

/* The engine's delivery: the next payload of the link, in order. */
static void ud_deliver(struct aptus_rel_link *l, const void *data, size_t len)
{
    struct ud_ep *e = ep_of_link(l);
    const char *p = data;
    if (!e->asm_buf) {
        uint32_t flen;
        if (len < UD_FRAME_WORD) {
            aptus_peer_fail(e->base.peer, &aptus_channel_ud_sr, "a frame piece without its length");
            return;
        }
        memcpy(&flen, p, 4);
        if (flen == 0 || flen > UD_FRAME_MAX) {
            aptus_peer_fail(e->base.peer, &aptus_channel_ud_sr, "a frame of impossible length");
            return;
        }
        p += UD_FRAME_WORD;
        len -= UD_FRAME_WORD;
        /* The whole frame in one datagram: handed up from the receive buffer, where it is
         * 8-aligned as the message layer's headers need (receive buffers are 16-aligned and the
         * prefix, our header, the engine's and the frame word are multiples of 8) -- unless a
         * provider's prefix is not: then it is copied like a frame of several pieces. */
        if (len == flen && ((uintptr_t)p & 7) == 0) {
            frame_in(e, p, flen);
            return;
        }
        if (len > flen || !(e->asm_buf = malloc(flen))) {
            aptus_peer_fail(e->base.peer, &aptus_channel_ud_sr,
                            len > flen ? "a frame piece longer than its frame" : "out of memory");
            return;
        }
        e->asm_len = flen;
        e->asm_have = 0;
    }
    if (len > e->asm_len - e->asm_have) {
        aptus_peer_fail(e->base.peer, &aptus_channel_ud_sr, "a frame piece beyond its frame");
        return;
    }
    memcpy(e->asm_buf + e->asm_have, p, len);
    e->asm_have += (uint32_t)len;
    if (e->asm_have == e->asm_len) {
        char *f = e->asm_buf;
        e->asm_buf = NULL;
        frame_in(e, f, e->asm_len);
        free(f);
    }
}

static void ud_dead(struct aptus_rel_link *l)
{
    struct ud_ep *e = ep_of_link(l);
    char why[128];
    snprintf(why, sizeof why, "no answer from it over UD for %d s (APTUS_PEER_TIMEOUT)", aptus_config.peer_timeout);
    aptus_peer_fail(e->base.peer, &aptus_channel_ud_sr, why);
}

static int rx_post(struct ud_rxbuf *b)
{
    b->ctx.kind = UD_CTX_RX;
    /* A buffer goes back where one was just taken (or at start-up, within the queue's depth):
     * the provider has room for it. */
    return fi_recv(ud.d.ep, b->data, ud.rx_stride - sizeof *b, ud.rx_desc, FI_ADDR_UNSPEC, &b->ctx) == 0 ? 0 : -1;
}

static void rx_handle(struct ud_rxbuf *b, size_t len)
{
    const char *p = b->data + ud.d.prefix;
    struct ud_hdr h;
    if (len < ud.d.prefix + sizeof h + APTUS_REL_HDR)
        return;
    len -= ud.d.prefix;
    memcpy(&h, p, sizeof h);
    int src;
    if (__builtin_expect(h.job == ud.job, 1)) {
        if (h.src >= (uint32_t)aptus_rt.size || h.src == (uint32_t)aptus_rt.rank)
            return;
        src = (int)h.src;
    } else if ((src = aptus_proc_find(h.job, (int)h.src)) < 0) {
        return; /* (another job's process not known here, or not yet: its sender retransmits) */
    }
    struct aptus_peer *peer = aptus_peer_get(src);
    if (!peer || peer->failed)
        return;
    struct ud_ep *e = (struct ud_ep *)aptus_peer_ep(peer, APTUS_CH_UD_SR);
    if (!e)
        return;
    uint64_t now = now_ns();
    ud.last_rx_ns = now;
    aptus_rel_input(&ud.eng, &e->link, p + sizeof h, len - sizeof h, now);
}

void aptus_ud_cq_error(void)
{
    struct fi_cq_err_entry err;
    memset(&err, 0, sizeof err);
    if (fi_cq_readerr(ud.d.cq, &err, 0) != 1)
        return;
    struct aptus_fab_ctx *c = err.op_context;
    if (c && c->kind == UD_CTX_ZRX) {
        aptus_udz_rx_done(c, 0, 1);
    } else if (c && c->kind == UD_CTX_RX) {
        if (rx_post((struct ud_rxbuf *)c) != 0)
            aptus_abort_job(MPI_ERR_OTHER, "UD channel: cannot post a receive buffer again");
    } else if (c && c->kind == UD_CTX_TX) {
        ud.ntx_out--;
        aptus_ud_txbuf_put((struct ud_txbuf *)c); /* a lost datagram: the engine retransmits it */
    }
}

void aptus_ud_cq_entry(const struct fi_cq_msg_entry *ent)
{
    struct aptus_fab_ctx *c = ent->op_context;
    if (c->kind == UD_CTX_RX) {
        rx_handle((struct ud_rxbuf *)c, ent->len);
        if (rx_post((struct ud_rxbuf *)c) != 0)
            aptus_abort_job(MPI_ERR_OTHER, "UD channel: cannot post a receive buffer again");
    } else if (c->kind == UD_CTX_ZRX) {
        aptus_udz_rx_done(c, ent->len, 0);
    } else {
        ud.ntx_out--;
        aptus_ud_txbuf_put((struct ud_txbuf *)c);
    }
}

/* Whether the completion queue may have something: always, unless RC connections are up,
 * nothing of ours awaits a completion and nothing came in the last UD_HOT_PASSES passes (RC
 * carries the traffic) -- then its descriptor (level-triggered: a datagram waiting on any
 * endpoint, a completion written) says, asked on one progress pass in UD_IDLE_PASSES (a system
 * call per pass would cost the RC channels' latency more than a datagram's few passes of delay).
 * Where UD carries the small messages beside a connection (the sockets chain), they keep it hot.
 * Likewise when UD was started only to meet other jobs (a job on one node) and every process of
 * theirs it met is reached through shared memory (aptus_procs_net == 0): UD carries nothing
 * then, and a provider over sockets pays a system call for each read of an empty queue (the udp
 * provider: a recvmsg) -- a spawned child's ping-pong with its parent paid it on every pass. */
#define UD_IDLE_PASSES 8
#define UD_HOT_PASSES  256
static unsigned cq_hot;
static int cq_worth_reading(void)
{
    static unsigned pass;
    if (cq_hot) {
        cq_hot--;
        return 1;
    }
    if (ud.ntx_out > 0 || !(aptus_rc_connected || (ud.dyn && aptus_procs_net == 0)))
        return 1;
    if (ud.d.wait_fd < 0) /* (quiet and no descriptor: the queue itself, one pass in UD_IDLE_PASSES) */
        return aptus_rc_connected || ++pass % UD_IDLE_PASSES == 0;
    if (++pass % UD_IDLE_PASSES)
        return 0;
    struct pollfd pfd = { .fd = ud.d.wait_fd, .events = POLLIN };
    if (poll(&pfd, 1, 0) == 0)
        return 0;
    /* Readable may only mean that the provider signalled a completion written earlier (the
     * signal stays set until a trywait clears it, and the descriptor with it): trywait says
     * whether something is there, and clears a stale signal, so that later polls say no. */
    struct fid *f = &ud.d.cq->fid;
    return fi_trywait(ud.d.fabric, &f, 1) != FI_SUCCESS;
}

/* Handles what the completion queue holds; returns the entries. */
static int cq_drain(void)
{
    int events = 0;
    struct fi_cq_msg_entry ent[UD_CQ_BATCH];
    for (;;) {
        ssize_t n = fi_cq_read(ud.d.cq, ent, UD_CQ_BATCH);
        if (n == -FI_EAVAIL) {
            aptus_ud_cq_error();
            continue;
        }
        if (n <= 0)
            return events;
        for (ssize_t i = 0; i < n; i++)
            aptus_ud_cq_entry(&ent[i]);
        events += (int)n;
        cq_hot = UD_HOT_PASSES;
        if (n < UD_CQ_BATCH)
            return events;
    }
}

static int ud_progress(void)
{
    int events = aptus_udz_deferred();
    if (cq_worth_reading())
        events += cq_drain();
    if (imp.held)
        imp_release_held();
    uint64_t now = now_ns();
    if (__builtin_expect(ud.hard_since != 0, 0) && now - ud.hard_since > UD_HARD_FAIL_NS) {
        char msg[320];
        snprintf(
            msg, sizeof msg,
            "UD channel: every datagram sent for %llu s failed: %s (provider %s, interface %s: did the interface go "
            "away? APTUS_FABRIC_IFACE chooses it)",
            UD_HARD_FAIL_NS / 1000000000ull, aptus_fab_strerror(ud.hard_rc), ud.d.prov, ud.d.iface);
        aptus_abort_job(MPI_ERR_OTHER, msg);
    }
    if (aptus_rel_due(&ud.eng, now)) {
        aptus_rel_tick(&ud.eng, now);
        events++;
    }
    events += aptus_udz_progress(now);
    /* The progress engine's timer follows the next deadline of the engine and the zero-copy
     * streams (a sleeping rank wakes for retransmissions, delayed acks and requests for lost
     * pieces). */
    uint64_t due = aptus_udz_next_due();
    if (ud.eng.next_due < due)
        due = ud.eng.next_due;
    if (due != ud.timer_due) {
        ud.timer_due = due;
        if (ud.timer_due == UINT64_MAX)
            aptus_timer_cancel(&ud.timer);
        else
            aptus_timer_arm(&ud.timer, (double)ud.timer_due * 1e-9);
    }
    return events;
}

static void ud_timer_fire(struct aptus_timer *t)
{
    ud.timer_due = 0; /* disarmed by the engine: re-armed by the pass below */
    ud_progress();
}

/* The wait object: the completion queue's file descriptor. */
static int ud_wait_arm(void)
{
    struct fid *f = &ud.d.cq->fid;
    return ud.d.wait_fd < 0 || fi_trywait(ud.d.fabric, &f, 1) != FI_SUCCESS;
}

static void ud_wait_disarm(void)
{
}

static int ud_wait_fds(struct pollfd *out, int max)
{
    if (max < 1 || ud.d.wait_fd < 0)
        return 0;
    out[0] = (struct pollfd){ .fd = ud.d.wait_fd, .events = POLLIN };
    return 1;
}

static const struct aptus_waiter ud_waiter = { ud_wait_arm, NULL, ud_wait_disarm, ud_wait_fds, NULL };

/* ---- endpoints -------------------------------------------------------------------------- */

struct ud_ep *aptus_ud_ep_of(struct aptus_peer *p)
{
    return (struct ud_ep *)aptus_peer_ep(p, APTUS_CH_UD_SR);
}

int aptus_ud_reaches(int world_rank)
{
    if (world_rank >= aptus_rt.size) /* (another job's process: only if its card has an address) */
        return ud.active && aptus_proc_has_addr(world_rank);
    return ud.active && world_rank != aptus_rt.rank;
}

static int ud_ep_open(struct aptus_peer *p, struct aptus_ep **out)
{
    char addr[APTUS_FAB_ADDR_MAX];
    size_t alen = sizeof addr;
    const struct aptus_proc_card *fc = aptus_proc_foreign(p->world_rank);
    if (fc) { /* (another job's process: its card came with the connection) */
        alen = fc->alen;
        memcpy(addr, fc->addr, alen);
    } else if (aptus_fab_card_get(UD_CARD, p->world_rank, addr, &alen) != 0) {
        fprintf(stderr, "Aptus MPI: rank %d: UD channel: rank %d published no address\n", aptus_rt.rank, p->world_rank);
        return APTUS_ERR;
    }
    struct ud_ep *e = calloc(1, sizeof *e);
    if (!e)
        return APTUS_ERR;
    if (aptus_fab_av_insert(&ud.d, addr, alen, &e->addr) != 0) {
        fprintf(stderr, "Aptus MPI: rank %d: UD channel: cannot add rank %d's address\n", aptus_rt.rank, p->world_rank);
        free(e);
        return APTUS_ERR;
    }
    aptus_rel_link_init(&ud.eng, &e->link, e);
    aptus_udl_ep_init(e);
    e->next_ep = ud.eps;
    ud.eps = e;
    ud.neps++;
    *out = &e->base;
    return APTUS_OK;
}

static void ud_ep_close(struct aptus_ep *ep)
{
    struct ud_ep *e = (struct ud_ep *)ep;
    for (struct ud_ep **pp = &ud.eps; *pp; pp = &(*pp)->next_ep)
        if (*pp == e) {
            *pp = e->next_ep;
            ud.neps--;
            break;
        }
    aptus_udz_ep_closing(e);
    aptus_udl_ep_closing(e);
    aptus_rel_link_fini(&ud.eng, &e->link);
    free(e->asm_buf);
    free(e->zaddr);
    free(e);
}

/* ---- life cycle ------------------------------------------------------------------------- */

/* Whether the job needs this channel: it spans nodes, or the send rules name it (a test of UD
 * on one node). The same answer on every rank: the start-up below is collective. */
static int ud_wanted(void)
{
    for (int r = 0; r < aptus_rt.size; r++)
        if (aptus_rt.node_of[r] != aptus_rt.node)
            return 1;
    /* One node: only if a rule takes ud-sr before an unconditional smp rule ends the chain for
     * every other rank (a test of UD on one node: APTUS_SEND_RULES=self;ud-sr). */
    for (int i = 0; aptus_rt.size > 1 && i < aptus_rules.n; i++) {
        int c = aptus_rules.rule[i].channel;
        if (c == APTUS_CH_UD_SR || c == APTUS_CH_UD_ZCOPY || c == APTUS_CH_UD_COPY)
            return 1;
        if (aptus_rules.rule[i].channel == APTUS_CH_SMP && aptus_rules.rule[i].unconditional)
            return 0;
    }
    return 0;
}

static size_t frame_limit(void);

static int ud_setup(char *err, size_t errlen)
{
    if (imp_parse(aptus_config.ud_impair, err, errlen) != 0)
        return -1;
    /* A descriptor to wait on when the rank may sleep, or when RC connections may come (the
     * progress pass then asks it whether a datagram waits: cq_worth_reading). */
    int wait = aptus_wait_blocks || aptus_rc_wanted();
    if (aptus_fab_dgram_open(&ud.d, aptus_config.fabric_provider, aptus_config.fabric_iface, wait, err, errlen) != 0)
        return -1;
    /* udp: 9000 bytes (one jumbo frame, IP-fragmented on a 1500-byte link) measured faster than
     * one Ethernet frame from 2 KiB up and as fast below (docs/BENCHMARKS.md); under verbs
     * the provider's size is the path MTU. */
    size_t mtu = aptus_config.ud_mtu ? aptus_config.ud_mtu : !strcmp(ud.d.prov, "udp") ? UD_UDP_MTU : ud.d.mtu;
    if (mtu > 65535 - ud.d.prefix)
        mtu = 65535 - ud.d.prefix;
    if (mtu < sizeof(struct ud_hdr) + APTUS_REL_HDR + 64) {
        snprintf(err, errlen, "APTUS_UD_MTU=%zu is too small (at least %zu)", mtu,
                 sizeof(struct ud_hdr) + APTUS_REL_HDR + 64);
        return -1;
    }
    ud.dgram_max = mtu;
    ud.piece_max = mtu - sizeof(struct ud_hdr) - APTUS_REL_HDR;

    struct aptus_rel_cfg cfg;
    aptus_rel_cfg_default(&cfg);
    cfg.max_payload = ud.piece_max;
    cfg.crc = aptus_config.crc;
    cfg.link_stats = aptus_config.stats;
    cfg.peer_timeout_ns = (uint64_t)aptus_config.peer_timeout * 1000000000ull;
    cfg.window_pkts = (uint32_t)aptus_config.ud_window;
    cfg.window_bytes = aptus_config.ud_window_bytes;
    cfg.ack_delay_ns = (uint64_t)aptus_config.ud_ack_delay_us * 1000u;
    cfg.rto_min_ns = (uint64_t)aptus_config.ud_rto_min_us * 1000u;
    cfg.rto_init_ns = (uint64_t)aptus_config.ud_rto_init_us * 1000u;
    cfg.rto_max_ns = (uint64_t)aptus_config.ud_rto_max_us * 1000u;
    cfg.tlp_min_ns = (uint64_t)aptus_config.ud_tlp_us * 1000u;
    static const struct aptus_rel_ops ops = { ud_xmit, ud_deliver, ud_dead, aptus_udl_recovered };
    if (aptus_rel_init(&ud.eng, &ops, &cfg) != APTUS_OK) {
        snprintf(err, errlen,
                 "the reliability engine refused its configuration (APTUS_UD_WINDOW=%d, datagrams of %zu bytes, "
                 "APTUS_UD_RTO_MIN_US=%d, APTUS_UD_RTO_INIT_US=%d, APTUS_UD_RTO_MAX_US=%d, APTUS_PEER_TIMEOUT=%d)",
                 aptus_config.ud_window, ud.piece_max, aptus_config.ud_rto_min_us, aptus_config.ud_rto_init_us,
                 aptus_config.ud_rto_max_us, aptus_config.peer_timeout);
        return -1;
    }

    ud.frame_max = frame_limit();
    if (ud.frame_max < 2 * UD_HEADER_ROOM) {
        snprintf(err, errlen,
                 "the window (APTUS_UD_WINDOW=%d datagrams of %zu bytes, APTUS_UD_WINDOW_BYTES=%zu) holds no frame "
                 "of %d bytes",
                 aptus_config.ud_window, ud.piece_max, aptus_config.ud_window_bytes, 2 * UD_HEADER_ROOM);
        return -1;
    }
    /* Receive buffers: one region, posted once, reposted as they are consumed. They and one
     * receive per zero-copy endpoint (at least) must fit the provider's receive queue, whose
     * depth the completion queue is sized for: a value set beyond is refused, the default is
     * lowered to fit. */
    int zeps = aptus_udz_endpoints();
    size_t nrx_max = ud.d.rx_depth > (size_t)zeps ? ud.d.rx_depth - (size_t)zeps : 0;
    if (nrx_max > INT_MAX)
        nrx_max = INT_MAX;
    ud.nrx = aptus_config.ud_recv_bufs;
    if ((size_t)ud.nrx > nrx_max && getenv("APTUS_UD_RECV_BUFS")) {
        if (zeps > 0)
            snprintf(
                err, errlen,
                "APTUS_UD_RECV_BUFS=%d is out of range with APTUS_UD_ZCOPY_EPS=%d (1..%zu: the receive buffers and "
                "one receive per zero-copy endpoint must fit provider %s's receive queue of %zu; lower "
                "APTUS_UD_RECV_BUFS or APTUS_UD_ZCOPY_EPS)",
                ud.nrx, zeps, nrx_max, ud.d.prov, ud.d.rx_depth);
        else
            snprintf(err, errlen,
                     "APTUS_UD_RECV_BUFS=%d is out of range (1..%zu: the receive buffers must fit provider %s's "
                     "receive queue of %zu)",
                     ud.nrx, nrx_max, ud.d.prov, ud.d.rx_depth);
        return -1;
    }
    if ((size_t)ud.nrx > nrx_max)
        ud.nrx = (int)nrx_max;
    if (ud.nrx < 1) {
        snprintf(err, errlen,
                 "provider %s's receive queue of %zu leaves no room for a receive buffer beside APTUS_UD_ZCOPY_EPS=%d "
                 "zero-copy endpoints (lower APTUS_UD_ZCOPY_EPS)",
                 ud.d.prov, ud.d.rx_depth, zeps);
        return -1;
    }
    ud.rx_stride = (sizeof(struct ud_rxbuf) + ud.d.prefix + ud.dgram_max + 63) & ~(size_t)63;
    ud.tx_stride = (sizeof(struct ud_txbuf) + ud.d.prefix + ud.dgram_max + 63) & ~(size_t)63;
    ud.tx_cap = ud.d.tx_depth;
    if (ud.d.mr_local) {
        if (ud.tx_cap > UD_TX_LOCAL_MAX)
            ud.tx_cap = UD_TX_LOCAL_MAX;
        if (!(ud.tx_pool = aligned_alloc(64, ud.tx_cap * ud.tx_stride))) {
            snprintf(err, errlen, "out of memory for %zu send buffers", ud.tx_cap);
            return -1;
        }
        if (aptus_fab_mr_reg(&ud.d, ud.tx_pool, ud.tx_cap * ud.tx_stride, &ud.tx_mr, &ud.tx_desc) != 0) {
            snprintf(err, errlen, "cannot register %zu bytes of send buffers (ulimit -l, APTUS_FABRIC_REG_LIMIT?)",
                     ud.tx_cap * ud.tx_stride);
            return -1;
        }
    }
    if (!(ud.rx_pool = aligned_alloc(64, (size_t)ud.nrx * ud.rx_stride))) {
        snprintf(err, errlen, "out of memory for %d receive buffers", ud.nrx);
        return -1;
    }
    if (aptus_fab_mr_reg(&ud.d, ud.rx_pool, (size_t)ud.nrx * ud.rx_stride, &ud.rx_mr, &ud.rx_desc) != 0) {
        snprintf(err, errlen, "cannot register %zu bytes of receive buffers (ulimit -l, APTUS_FABRIC_REG_LIMIT?)",
                 (size_t)ud.nrx * ud.rx_stride);
        return -1;
    }
    for (int i = 0; i < ud.nrx; i++)
        if (rx_post((struct ud_rxbuf *)(ud.rx_pool + (size_t)i * ud.rx_stride)) != 0) {
            snprintf(err, errlen, "cannot post receive buffer %d", i);
            return -1;
        }
    if (aptus_udz_setup(err, errlen) != 0)
        return -1;
    if (aptus_fab_card_put(UD_CARD, ud.d.addr, ud.d.addrlen) != 0) {
        snprintf(err, errlen, "cannot publish this rank's address");
        return -1;
    }
    return 0;
}

/* The largest frame: the message layer's, within what the link's window takes at once (a
 * frame goes whole or not at all, so it must fit an empty window). */
static size_t frame_limit(void)
{
    size_t by_pkts = (size_t)ud.eng.cfg.window_pkts * ud.piece_max - UD_FRAME_WORD;
    size_t by_bytes = ud.eng.cfg.window_bytes - UD_FRAME_WORD;
    size_t m = UD_FRAME_MAX;
    return m < by_pkts ? (m < by_bytes ? m : by_bytes) : (by_pkts < by_bytes ? by_pkts : by_bytes);
}

static void ud_set_caps(void)
{
    struct aptus_chan_caps *c = &aptus_channel_ud_sr.caps;
    c->flags = APTUS_CAP_ORDERED | APTUS_CAP_RELIABLE;
    c->frame_max = ud.frame_max;
    /* Room for the message layer's largest header in front of a payload. */
    c->chunk = ud.frame_max - UD_HEADER_ROOM;
    c->eager_max = aptus_config.ud_eager_max < c->chunk ? aptus_config.ud_eager_max : c->chunk;
    c->put_max = c->get_max = 0;
    c->iov_max = 0;
}

static void ud_activate(void);
static void ud_release(void);

static int ud_init(void)
{
    ud.job = aptus_job_hash();
    if (!ud_wanted())
        return APTUS_OK;
    char err[640];
    if (ud_setup(err, sizeof err) != 0) {
        aptus_startup_error("rank %d: UD channel: %s", aptus_rt.rank, err); /* as a rule every rank's */
        return APTUS_ERR;
    }
    /* Every card is readable after this fence; peers look them up on first contact. */
    if (aptus_pmi_fence() != 0) {
        fprintf(stderr, "Aptus MPI: rank %d: UD channel: the launcher's key-value space failed\n", aptus_rt.rank);
        return APTUS_ERR;
    }
    ud_activate();
    return APTUS_OK;
}

/* A job that did not need UD at start-up (one node) starts it when a process of another job is
 * to be reached: this process alone, so its card is handed over by the caller (channel/procs.c)
 * instead of through the launcher's key-value space. */
int aptus_ud_dyn_start(char *err, size_t errlen)
{
    if (ud.active)
        return 0;
    if (!aptus_channels[APTUS_CH_UD_SR]) {
        snprintf(err, errlen, "the UD channel is not available here (channels: %s)", aptus_channels_available());
        return -1;
    }
    uint32_t job = ud.job;
    if (ud_setup(err, errlen) != 0) {
        ud_release();
        ud.job = job;
        return -1;
    }
    ud_activate();
    aptus_udz_caps_refresh();
    ud.dyn = 1;
    return 0;
}

static void ud_activate(void)
{
    ud.active = 1;
    ud_set_caps();
    aptus_udl_setup();
    aptus_channel_poll_enable(&aptus_channel_ud_sr, 1);
    ud.timer.fire = ud_timer_fire;
    ud.timer_due = UINT64_MAX;
    if (ud.d.wait_fd >= 0)
        aptus_waiter_set(&ud_waiter);
}

/* After the last barrier of MPI_Finalize, before endpoints close: what this rank sent must be
 * acknowledged (a peer may still need a retransmission), and a peer whose last datagrams we
 * acknowledged may not have heard the ack. So: progress until nothing of ours is unacked, then
 * until the link has been quiet for a while (answering retransmissions), within a bound. */
static void ud_quiesce(void)
{
    if (!ud.active)
        return;
    uint64_t start = now_ns();
    for (;;) {
        ud_progress();
        uint64_t now = now_ns();
        int busy = 0;
        for (struct ud_ep *e = ud.eps; e && !busy; e = e->next_ep)
            busy = e->link.snd_nxt != e->link.snd_una && !aptus_rel_link_dead(&e->link);
        busy = busy || aptus_udz_busy();
        if (now - start > UD_QUIESCE_MAXNS)
            break;
        if (!busy && now - ud.last_rx_ns > UD_LINGER_NS && now - start > UD_LINGER_NS)
            break;
    }
}

static void ud_finalize(void)
{
    if (!ud.active)
        return;
    aptus_channel_poll_enable(&aptus_channel_ud_sr, 0);
    aptus_timer_cancel(&ud.timer);
    aptus_udl_finalize();
    ud.active = 0;
    ud_release();
}

/* What ud_setup made, whole or in part, goes. */
static void ud_release(void)
{
    if (imp.held)
        aptus_ud_txbuf_put(imp.held);
    aptus_udz_finalize();
    /* The provider lets go of our buffers first (the endpoint closes), then their
     * registrations go, then the domain. */
    if (ud.d.ep)
        fi_close(&ud.d.ep->fid);
    ud.d.ep = NULL;
    if (ud.rx_mr)
        aptus_fab_mr_close(ud.rx_mr);
    if (ud.tx_mr)
        aptus_fab_mr_close(ud.tx_mr);
    aptus_fab_dgram_close(&ud.d);
    aptus_rel_fini(&ud.eng);
    free(ud.rx_pool);
    while (ud.tx_free) {
        struct ud_txbuf *b = ud.tx_free;
        ud.tx_free = b->next_free;
        if (!ud.tx_pool)
            free(b);
    }
    free(ud.tx_pool);
    memset(&ud, 0, sizeof ud);
}

/* Bytes of send buffers: the registered pool whole (FI_MR_LOCAL), else those made so far. */
static size_t ud_tx_bytes(void)
{
    return (ud.tx_pool ? ud.tx_cap : ud.ntx) * ud.tx_stride;
}

static size_t ud_memory(void)
{
    if (!ud.active)
        return 0;
    size_t held, pooled;
    aptus_rel_mem(&ud.eng, &held, &pooled);
    return (size_t)ud.nrx * ud.rx_stride + ud_tx_bytes() + held + pooled + (size_t)ud.neps * sizeof(struct ud_ep) +
           aptus_udz_memory();
}

static void ud_stats_print(void)
{
    if (!ud.active)
        return;
    const struct aptus_rel_stats *t = aptus_rel_stats(&ud.eng);
    size_t held, pooled;
    aptus_rel_mem(&ud.eng, &held, &pooled);
    printf("[aptus stats] rank %d: ud-sr engine: provider %s, interface %s; datagrams %" PRIu64
           ", retransmitted %" PRIu64 " (timeout) %" PRIu64 " (fast) %" PRIu64 " (tail-loss probe), acks sent %" PRIu64
           ", duplicates dropped %" PRIu64 ", out of order %" PRIu64 ", out of window %" PRIu64
           ", crc failures %" PRIu64 "; memory: receive pool %zu, send buffers %zu, engine %zu "
           "held + %zu pooled, %d peers x %zu; sends refused for room %" PRIu64 "\n",
           aptus_rt.rank, ud.d.prov, ud.d.iface, t->sent, t->retx_timeout, t->retx_fast, t->probes, t->acks_sent,
           t->dups, t->out_of_order, t->out_of_window, t->crc_fail, (size_t)ud.nrx * ud.rx_stride, ud_tx_bytes(), held,
           pooled, ud.neps, sizeof(struct ud_ep), ud.refused);
    if (ud.d.mr_local)
        printf("[aptus stats] rank %d: ud-sr: send and receive buffers registered (FI_MR_LOCAL%s): %zu send "
               "buffers at most\n",
               aptus_rt.rank, aptus_config.fabric_mr_local ? ", forced by APTUS_FABRIC_MR_LOCAL" : "", ud.tx_cap);
    if (imp.on)
        printf("[aptus stats] rank %d: ud-sr impairment: lost %" PRIu64 ", duplicated %" PRIu64 ", reordered %" PRIu64
               " (impaired)\n",
               aptus_rt.rank, imp.lost, imp.duplicated, imp.reordered);
    aptus_udl_stats_print();
    aptus_udz_stats_print();
}

/* The reliability engine's counters, by name (the tool interface's performance variables). */
static int ud_rel_counter(const char *name, uint64_t *value)
{
    const struct aptus_rel_stats *t = aptus_rel_stats(&ud.eng);
    static const struct {
        const char *name;
        size_t off;
    } fields[] = {
        { "ud.datagrams", offsetof(struct aptus_rel_stats, sent) },
        { "ud.retx_timeout", offsetof(struct aptus_rel_stats, retx_timeout) },
        { "ud.retx_fast", offsetof(struct aptus_rel_stats, retx_fast) },
        { "ud.probes", offsetof(struct aptus_rel_stats, probes) },
        { "ud.acks_sent", offsetof(struct aptus_rel_stats, acks_sent) },
        { "ud.delivered", offsetof(struct aptus_rel_stats, delivered) },
        { "ud.duplicates", offsetof(struct aptus_rel_stats, dups) },
        { "ud.out_of_order", offsetof(struct aptus_rel_stats, out_of_order) },
        { "ud.out_of_window", offsetof(struct aptus_rel_stats, out_of_window) },
        { "ud.crc_failures", offsetof(struct aptus_rel_stats, crc_fail) },
        { "ud.timeouts", offsetof(struct aptus_rel_stats, timeouts) },
    };
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        if (!strcmp(name, fields[i].name)) {
            memcpy(value, (const char *)t + fields[i].off, sizeof *value);
            return 0;
        }
    return -1;
}

static int ud_counter(const char *name, uint64_t *value)
{
    if (!ud.active)
        return -1;
    return ud_rel_counter(name, value) == 0 ? 0 : aptus_udl_counter(name, value);
}

struct aptus_channel aptus_channel_ud_sr = {
    .name = "ud-sr",
    .init = ud_init,
    .check = ud_check,
    .finalize = ud_finalize,
    .quiesce = ud_quiesce,
    .reaches = aptus_ud_reaches,
    .ep_open = ud_ep_open,
    .ep_close = ud_ep_close,
    .send_frame = ud_send_frame,
    .send_frame_packed = ud_send_frame_packed,
    .progress = ud_progress,
    .memory_in_use = ud_memory,
    .stats_print = ud_stats_print,
    .counter = ud_counter,
};

#else
typedef int aptus_ud_unused;
#endif
