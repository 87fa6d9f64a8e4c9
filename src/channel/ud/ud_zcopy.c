/* The UD rendezvous channels (seed 000, section 3.2).
 *
 * ud-zcopy: zero-copy rendezvous over datagrams. The message layer's rendezvous by one-sided
 * read maps onto it: when an RTS that came over ud-zcopy matches, the receiver "gets" the
 * sender's buffer. The get takes one of a small pool of dedicated receive endpoints, posts
 * receives straight into the user's buffer -- each a small header slot plus the place of one
 * piece -- and sends PULL (over the peer's reliable ud-sr link) with the endpoint's address
 * and how many receives are posted. The sender streams the pieces from its buffer (gathered
 * sends: no copy on either side), as far as the receiver's credit goes, and says SENT when it
 * may send no more. Datagrams complete the posted receives in order; one that carries another
 * piece than the place it landed in (after a loss, a duplicate or reordering) is moved -- only
 * misplaced pieces are copied. The receiver extends credit (CREDIT) as receives complete, asks
 * for what is missing (NACK) when the sender has said SENT and nothing has come for a while,
 * and ends with DONE before the message layer's FIN, on the same ordered link: so the sender
 * drops its stream before its request completes. A message that cannot go zero-copy (a
 * non-contiguous receive buffer, no endpoint usable) falls back to the streamed copy.
 *
 * ud-copy: the copy-based rendezvous under a name of its own (RTS/CTS, then the data in eager
 * frames over ud-sr), for send rules that want it.
 *
 * Both reach a peer through its ud-sr record: every frame to a peer travels one ordered link.
 *
 * Receives that are still posted into a user's buffer when its message is complete (a
 * duplicate consumed a place, a late piece was asked for again) cannot be cancelled on every
 * provider (udp has no fi_cancel): the endpoint is then closed and opened anew, the completion
 * queue's entries for it discarded first, before the buffer is handed back. */
#ifdef APTUS_HAVE_LIBFABRIC

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "channel/stats_json.h"
#include "channel/ud/ud_int.h"
#include "core/errors.h"
#include "runtime/config.h"
#include "runtime/json.h"
#include "runtime/runtime.h"

#define ud  aptus_ud
#define imp aptus_ud_imp

#define UDZ_PEER_ADDRS 16        /* per peer: cached addresses of its zero-copy endpoints */
#define UDZ_NACK_MAX   256       /* pieces listed in one NACK */
#define UDZ_UDP_MTU    32768     /* default datagram over udp (see docs/BENCHMARKS.md) */
#define UDZ_RETRY_NS   100000ull /* a control frame refused for room: tried again after this */

enum { UDZ_F_PULL = APTUS_AM_CHANNEL, UDZ_F_CREDIT, UDZ_F_SENT, UDZ_F_NACK, UDZ_F_DONE };

/* Piece state at the receiver. */
enum { P_POSTED = 1, P_HAVE = 2, P_STASH = 4 };

/* In front of every zero-copy datagram (after the provider's prefix). */
struct udz_dhdr {
    uint32_t job;
    uint32_t src;
    uint32_t token;
    uint32_t piece;
};

struct udz_pull {
    uint8_t type;
    uint8_t zlen; /* bytes of zaddr */
    uint8_t pad[2];
    uint32_t token;
    uint64_t addr; /* the sender's buffer (from its RTS) */
    uint64_t len;
    uint32_t pz;    /* payload bytes of a piece */
    uint32_t limit; /* datagrams the sender may have sent in all */
    uint32_t ztag;  /* the endpoint: index and incarnation */
    uint32_t pad2;
    char zaddr[APTUS_FAB_ADDR_MAX];
};

/* CREDIT (value: limit), SENT (value: datagrams sent, n: pieces of the first pass sent),
 * NACK (value: limit; n pieces follow), DONE. */
struct udz_ctl {
    uint8_t type;
    uint8_t pad[3];
    uint32_t token;
    uint32_t value;
    uint32_t n;
};

struct udz_paddr {
    uint32_t tag; /* ztag + 1 (0: empty) */
    fi_addr_t a;
};

struct udz_zep;

/* A peer's endpoint of ud-zcopy / ud-copy: the peer's ud-sr record behind it. */
struct udz_wep {
    struct aptus_ep base;
    struct ud_ep *sr;
};

/* A posted zero-copy receive. */
struct udz_slot {
    struct aptus_fab_ctx ctx; /* first: the completion's context (UD_CTX_ZRX) */
    struct udz_zep *zep;
    struct udz_slot *next_free;
    uint32_t gen; /* the endpoint's incarnation when posted */
    uint32_t piece;
    char *hdr; /* prefix + struct udz_dhdr */
};

/* A receive stream (one message being pulled). */
struct udz_rx {
    struct udz_rx *next; /* waiting for an endpoint / finishing */
    struct ud_ep *e;
    struct udz_zep *zep;
    struct aptus_completion *comp;
    char *buf;
    size_t len;
    uint64_t raddr;
    uint32_t token, npieces, have, next_post;
    uint32_t credit, credit_sent; /* receives posted in all / last limit told */
    uint32_t sender_sent;         /* from the last SENT */
    uint32_t sender_np;           /* ... and how far its first pass has gone (pieces below were sent) */
    uint32_t arrived;             /* datagrams of this stream received (duplicates too) */
    uint32_t low;                 /* no piece below is missing */
    uint32_t seen;                /* 1 + the highest piece received: those below were sent */
    uint32_t fast_upto;           /* a hole below this has been asked for already */
    uint8_t fast;                 /* a hole appeared: ask for it at once */
    uint64_t nack_at;             /* next NACK due: 0 after a hole (fast), else sent_at */
    uint64_t sent_at;             /* a SENT is to be answered then (UINT64_MAX: none is) */
    uint8_t need_pull, need_credit;
    struct fid_mr *mr;
    void *desc;
    char **stash;
    uint8_t st[]; /* per piece: P_* */
};

/* A zero-copy receive endpoint. */
struct udz_zep {
    int idx;
    int broken; /* could not be opened again */
    int reopen; /* closed with receives posted: discard their entries, then open anew */
    struct fid_ep *ep;
    uint32_t gen;
    char addr[APTUS_FAB_ADDR_MAX];
    size_t addrlen;
    struct udz_rx *rx; /* the stream using it (NULL: free) */
    int posted;
    struct udz_slot *slots, *free_slots;
    char *hdrs;
    struct fid_mr *hdr_mr;
    void *hdr_desc;
};

/* A send stream. */
struct udz_tx {
    struct udz_tx *next;
    struct ud_ep *e;
    uint32_t token, npieces, pz;
    const char *buf;
    size_t len;
    fi_addr_t to;
    uint32_t limit, sent, np;  /* may send in all / sent in all / next piece of the first pass */
    uint32_t *rq, nrq, rq_pos; /* pieces asked for again */
    int sent_due;
    struct fid_mr *mr;
    void *desc;
};

static struct {
    int on;
    size_t pz;      /* payload bytes of a piece */
    size_t hdr_len; /* prefix + struct udz_dhdr */
    int nslots;     /* receives posted per stream at most */
    uint64_t nack_ns;
    int nzep;
    struct udz_zep *zeps;
    struct udz_rx *waiting, *waiting_tail; /* gets waiting for an endpoint */
    struct udz_rx *finishing;              /* complete; DONE not yet sent */
    struct udz_tx *tx;
    uint32_t serial;
    int retry;                  /* something was refused for room: progress soon */
    int nrx;                    /* receive streams running: none, no deadline to watch */
    struct fi_cq_msg_entry *dq; /* entries set aside by a retirement */
    int ndq, capdq;
    struct {
        uint64_t rx_msgs, rx_bytes, tx_msgs, tx_bytes, in_place, misplaced, stashed, nacks, retx, retired, waits, bad;
    } st;
} z;

/* ---- helpers ---------------------------------------------------------------------------- */

static size_t piece_len(size_t len, uint32_t k)
{
    size_t off = (size_t)k * z.pz;
    return len - off < z.pz ? len - off : z.pz;
}

static void unreg(struct fid_mr **mr)
{
    if (*mr)
        aptus_fab_mr_close(*mr);
    *mr = NULL;
}

static int send_ctl(struct ud_ep *e, uint8_t type, uint32_t token, uint32_t value, const uint32_t *list, uint32_t n)
{
    struct udz_ctl c = { .type = type, .token = token, .value = value, .n = n };
    return aptus_ud_send_frame(e, &c, sizeof c, list, (size_t)n * sizeof *list);
}

/* ---- receive endpoints ------------------------------------------------------------------ */

static int zep_open(struct udz_zep *zp)
{
    zp->addrlen = sizeof zp->addr;
    if (aptus_fab_dgram_ep_open(&ud.d, &zp->ep, zp->addr, &zp->addrlen) != 0) {
        zp->ep = NULL;
        zp->broken = 1;
        return -1;
    }
    zp->gen++;
    zp->posted = 0;
    zp->free_slots = NULL;
    for (int i = z.nslots - 1; i >= 0; i--) {
        zp->slots[i].next_free = zp->free_slots;
        zp->free_slots = &zp->slots[i];
    }
    return 0;
}

static int zep_init(struct udz_zep *zp, int idx)
{
    zp->idx = idx;
    zp->slots = calloc((size_t)z.nslots, sizeof *zp->slots);
    zp->hdrs = aligned_alloc(64, ((size_t)z.nslots * z.hdr_len + 63) & ~(size_t)63);
    if (!zp->slots || !zp->hdrs)
        return -1;
    if (aptus_fab_mr_reg(&ud.d, zp->hdrs, (size_t)z.nslots * z.hdr_len, &zp->hdr_mr, &zp->hdr_desc) != 0)
        return -1;
    for (int i = 0; i < z.nslots; i++) {
        zp->slots[i].ctx.kind = UD_CTX_ZRX;
        zp->slots[i].zep = zp;
        zp->slots[i].hdr = zp->hdrs + (size_t)i * z.hdr_len;
    }
    return zep_open(zp);
}

/* Closes an endpoint that still has receives posted into a user's buffer. */
static void zep_retire(struct udz_zep *zp)
{
    fi_close(&zp->ep->fid);
    zp->ep = NULL;
    zp->gen++; /* entries of its receives still in the queue are stale */
    zp->reopen = 1;
    z.st.retired++;
}

/* Sets aside every entry of the completion queue except those of retired endpoints, so that
 * none refers to their receives any more; then opens them anew. */
static void zep_reopen_all(void)
{
    struct fi_cq_msg_entry ent[UD_CQ_BATCH];
    for (;;) {
        ssize_t n = fi_cq_read(ud.d.cq, ent, UD_CQ_BATCH);
        if (n == -FI_EAVAIL) {
            aptus_ud_cq_error(); /* a stale zero-copy entry is recognised there by its incarnation */
            continue;
        }
        if (n <= 0)
            break;
        for (ssize_t i = 0; i < n; i++) {
            struct aptus_fab_ctx *c = ent[i].op_context;
            if (c->kind == UD_CTX_ZRX && ((struct udz_slot *)c)->zep->reopen)
                continue;
            if (z.ndq == z.capdq) {
                int cap = z.capdq ? 2 * z.capdq : 64;
                struct fi_cq_msg_entry *q = realloc(z.dq, (size_t)cap * sizeof *q);
                if (!q)
                    aptus_abort_job(MPI_ERR_NO_MEM, "UD zero-copy: out of memory");
                z.dq = q;
                z.capdq = cap;
            }
            z.dq[z.ndq++] = ent[i];
        }
    }
    for (int i = 0; i < z.nzep; i++)
        if (z.zeps[i].reopen) {
            z.zeps[i].reopen = 0;
            if (zep_open(&z.zeps[i]) != 0)
                fprintf(stderr, "Aptus MPI: rank %d: UD zero-copy: cannot open receive endpoint %d again; %s\n",
                        aptus_rt.rank, i, "messages use the others or the copy-based rendezvous");
        }
}

int aptus_udz_deferred(void)
{
    int n = z.ndq;
    if (!n)
        return 0;
    /* Entries may be set aside again while these are handled: take the list first. */
    struct fi_cq_msg_entry *q = z.dq;
    z.dq = NULL;
    z.ndq = z.capdq = 0;
    for (int i = 0; i < n; i++)
        aptus_ud_cq_entry(&q[i]);
    free(q);
    return n;
}

/* ---- receiving a message ---------------------------------------------------------------- */

static int post_slot(struct udz_rx *s, uint32_t k)
{
    struct udz_zep *zp = s->zep;
    struct udz_slot *sl = zp->free_slots;
    if (!sl)
        return -1;
    struct iovec iov[2] = { { sl->hdr, z.hdr_len }, { s->buf + (size_t)k * z.pz, piece_len(s->len, k) } };
    void *desc[2] = { zp->hdr_desc, s->desc };
    if (fi_recvv(zp->ep, iov, desc, 2, FI_ADDR_UNSPEC, &sl->ctx) != 0)
        return -1;
    zp->free_slots = sl->next_free;
    sl->gen = zp->gen;
    sl->piece = k;
    s->st[k] |= P_POSTED;
    zp->posted++;
    s->credit++;
    return 0;
}

/* Posts receives for the pieces not yet had, in order, up to the window: first the pieces
 * never posted, then those whose receive took another piece. */
static void refill(struct udz_rx *s)
{
    while (s->zep->posted < z.nslots && s->next_post < s->npieces) {
        uint32_t k = s->next_post;
        if (!(s->st[k] & (P_POSTED | P_HAVE | P_STASH)) && post_slot(s, k) != 0)
            return;
        s->next_post++;
    }
    while (s->low < s->npieces && (s->st[s->low] & (P_HAVE | P_STASH)))
        s->low++;
    for (uint32_t k = s->low; k < s->npieces && s->zep->posted < z.nslots; k++)
        if (!(s->st[k] & (P_POSTED | P_HAVE | P_STASH)) && post_slot(s, k) != 0)
            return;
    if (s->credit - s->credit_sent >= (uint32_t)(z.nslots + 1) / 2)
        s->need_credit = 1;
}

static void place_stash(struct udz_rx *s, uint32_t k)
{
    memcpy(s->buf + (size_t)k * z.pz, s->stash[k], piece_len(s->len, k));
    free(s->stash[k]);
    s->stash[k] = NULL;
    s->st[k] = (uint8_t)((s->st[k] & ~P_STASH) | P_HAVE);
}

static void rx_release(struct udz_rx *s);

/* After SENT: the sender may send no more. Once all it sent is here -- or after a while, when
 * some may still be on its way or is lost --, the receiver tells it what is missing and how far
 * it may go (receives whose datagram was lost are still posted and usable). */
static void nack_arm(struct udz_rx *s)
{
    s->sent_at = s->arrived >= s->sender_sent ? 0 : ud_now_ns() + z.nack_ns;
    if (!s->fast)
        s->nack_at = s->sent_at;
}

/* Everything is here: no receive may stay posted into the buffer, stashed pieces go to their
 * places, and DONE goes before the message layer hears of it. */
static void rx_complete(struct udz_rx *s)
{
    struct udz_zep *zp = s->zep;
    if (zp->posted)
        zep_retire(zp);
    for (uint32_t k = 0; s->stash && k < s->npieces; k++)
        if (s->st[k] & P_STASH)
            place_stash(s, k);
    zp->rx = NULL;
    z.nrx--;
    s->zep = NULL;
    s->nack_at = s->sent_at = UINT64_MAX;
    z.st.rx_msgs++;
    z.st.rx_bytes += s->len;
    s->next = z.finishing;
    z.finishing = s;
    z.retry = 1;
}

static void rx_start(struct udz_rx *s, struct udz_zep *zp)
{
    s->zep = zp;
    zp->rx = s;
    z.nrx++;
    s->token = (++z.serial << 8) | (uint32_t)zp->idx;
    refill(s);
    s->need_pull = 1;
    s->need_credit = 0;
    z.retry = 1;
}

static struct udz_zep *zep_free(void)
{
    for (int i = 0; i < z.nzep; i++)
        if (z.zeps[i].ep && !z.zeps[i].rx && !z.zeps[i].reopen)
            return &z.zeps[i];
    return NULL;
}

static int live_zeps(void)
{
    int n = 0;
    for (int i = 0; i < z.nzep; i++)
        n += !z.zeps[i].broken;
    return n;
}

/* The channel's get: pull n bytes of the peer's buffer at raddr into local[0]. */
static int udz_get(struct aptus_ep *ep, struct iovec *local, int n, uint64_t raddr, uint64_t rkey,
                   struct aptus_completion *comp)
{
    (void)rkey;
    struct ud_ep *e = ((struct udz_wep *)ep)->sr;
    if (!z.on || n != 1 || !live_zeps())
        return APTUS_ERR; /* the message layer streams a copy instead */
    size_t len = local[0].iov_len;
    if (len == 0)
        return APTUS_OK;
    uint64_t np = (len + z.pz - 1) / z.pz;
    if (np > UINT32_MAX / 2)
        return APTUS_ERR;
    struct udz_rx *s = calloc(1, sizeof *s + (size_t)np);
    if (!s)
        return APTUS_ERR;
    s->e = e;
    s->comp = comp;
    s->buf = local[0].iov_base;
    s->len = len;
    s->raddr = raddr;
    s->npieces = (uint32_t)np;
    s->nack_at = s->sent_at = UINT64_MAX;
    if (aptus_fab_mr_reg(&ud.d, s->buf, len, &s->mr, &s->desc) != 0) {
        free(s);
        return APTUS_ERR;
    }
    struct udz_zep *zp = zep_free();
    if (zp) {
        rx_start(s, zp);
    } else {
        z.st.waits++;
        if (z.waiting_tail)
            z.waiting_tail->next = s;
        else
            z.waiting = s;
        z.waiting_tail = s;
    }
    return APTUS_INPROGRESS;
}

void aptus_udz_rx_done(struct aptus_fab_ctx *c, size_t len, int failed)
{
    struct udz_slot *sl = (struct udz_slot *)c;
    struct udz_zep *zp = sl->zep;
    if (sl->gen != zp->gen || zp->reopen)
        return; /* an endpoint closed since: its receives are reclaimed when it opens again */
    zp->posted--;
    sl->next_free = zp->free_slots;
    zp->free_slots = sl;
    struct udz_rx *s = zp->rx;
    if (!s)
        return;
    uint32_t k = sl->piece;
    s->st[k] &= (uint8_t)~P_POSTED;
    struct udz_dhdr h;
    memcpy(&h, sl->hdr + ud.d.prefix, sizeof h);
    int ok = !failed && len >= z.hdr_len && h.token == s->token &&
             aptus_ud_from(s->e->base.peer->world_rank, h.job, h.src) && h.piece < s->npieces &&
             len - z.hdr_len == piece_len(s->len, h.piece);
    if (!ok) {
        z.st.bad++;
    } else if (h.piece == k) {
        if (!(s->st[k] & (P_HAVE | P_STASH)))
            s->have++;
        if (s->st[k] & P_STASH) {
            free(s->stash[k]);
            s->stash[k] = NULL;
        }
        s->st[k] = P_HAVE;
        z.st.in_place++;
    } else if (!(s->st[h.piece] & (P_HAVE | P_STASH))) {
        uint32_t j = h.piece;
        const char *from = s->buf + (size_t)k * z.pz;
        size_t n = piece_len(s->len, j);
        z.st.misplaced++;
        if (s->st[j] & P_POSTED) {
            /* Its own place may still receive another piece: keep it aside until then. */
            if (!s->stash && !(s->stash = calloc(s->npieces, sizeof *s->stash)))
                aptus_abort_job(MPI_ERR_NO_MEM, "UD zero-copy: out of memory");
            if (!(s->stash[j] = malloc(n)))
                aptus_abort_job(MPI_ERR_NO_MEM, "UD zero-copy: out of memory");
            memcpy(s->stash[j], from, n);
            s->st[j] |= P_STASH;
            z.st.stashed++;
        } else {
            memcpy(s->buf + (size_t)j * z.pz, from, n);
            s->st[j] |= P_HAVE;
        }
        s->have++;
    }
    /* A piece kept aside for this place can go there now. */
    if ((s->st[k] & P_STASH) && !(s->st[k] & P_POSTED))
        place_stash(s, k);
    if (ok) {
        s->arrived++;
        if (h.piece >= s->seen)
            s->seen = h.piece + 1;
        /* A piece ahead of its place: the one before it was lost (or overtaken). Ask for the
         * hole at once rather than after SENT -- the sooner it is filled, the sooner arriving
         * pieces land in their own places again. */
        if (h.piece > k && h.piece > s->fast_upto && s->have + 1 < s->npieces) {
            s->fast = 1;
            s->nack_at = 0;
            z.retry = 1;
        } else if (s->sent_at != UINT64_MAX) {
            nack_arm(s);
        }
    }
    if (s->have == s->npieces) {
        rx_complete(s);
        return;
    }
    refill(s);
    if (s->need_credit)
        z.retry = 1;
}

/* The pieces still missing: receives posted for those that have none (within the window), and
 * the first of them listed for the sender. Returns how many are listed. */
static uint32_t nack_list(struct udz_rx *s, uint32_t *list)
{
    uint32_t n = 0;
    while (s->low < s->npieces && (s->st[s->low] & (P_HAVE | P_STASH)))
        s->low++;
    refill(s);
    uint32_t sent = s->sender_np > s->seen ? s->sender_np : s->seen;
    for (uint32_t k = s->low; k < sent && n < UDZ_NACK_MAX && n < (uint32_t)s->zep->posted; k++)
        if (!(s->st[k] & (P_HAVE | P_STASH)))
            list[n++] = k;
    return n;
}

/* Control frames of a receive stream that are due; returns events. */
static int rx_push(struct udz_rx *s, uint64_t now)
{
    int ev = 0;
    if (s->need_pull) {
        struct udz_zep *zp = s->zep;
        struct udz_pull p = { .type = UDZ_F_PULL,
                              .zlen = (uint8_t)zp->addrlen,
                              .token = s->token,
                              .addr = s->raddr,
                              .len = s->len,
                              .pz = (uint32_t)z.pz,
                              .limit = s->credit,
                              .ztag = (zp->gen << 8) | (uint32_t)zp->idx };
        memcpy(p.zaddr, zp->addr, zp->addrlen);
        if (aptus_ud_send_frame(s->e, &p, sizeof p, NULL, 0) != APTUS_OK)
            return (z.retry = 1), ev;
        s->need_pull = 0;
        s->credit_sent = s->credit;
        ev++;
    }
    if (s->need_credit && s->credit != s->credit_sent) {
        if (send_ctl(s->e, UDZ_F_CREDIT, s->token, s->credit, NULL, 0) != APTUS_OK)
            return (z.retry = 1), ev;
        s->credit_sent = s->credit;
        s->need_credit = 0;
        ev++;
    }
    if (s->nack_at <= now) {
        uint32_t list[UDZ_NACK_MAX];
        uint32_t n = nack_list(s, list);
        /* A hole found on the way: its receive is still free, one per piece asked for. After
         * SENT (the sender may send no more): all it sent is accounted, the receives still
         * posted are free. A SENT is always answered when its time comes, also when a hole
         * was asked for meanwhile: the sender waits for that answer. */
        uint32_t limit = s->fast ? s->credit_sent + n : s->credit_sent;
        int answer = s->sent_at <= now;
        if (answer && s->sender_sent + (uint32_t)s->zep->posted > limit)
            limit = s->sender_sent + (uint32_t)s->zep->posted;
        int nack = n || limit > s->credit_sent;
        if (nack && send_ctl(s->e, UDZ_F_NACK, s->token, limit, list, n) != APTUS_OK)
            return (z.retry = 1), ev;
        if (s->fast)
            s->fast_upto = s->seen;
        s->fast = 0;
        if (limit > s->credit_sent)
            s->credit_sent = limit;
        z.st.nacks += n != 0;
        /* A NACK makes the sender say SENT again once it may send no more: that SENT arms
         * the next answer. */
        if (nack || answer)
            s->sent_at = UINT64_MAX;
        s->nack_at = s->sent_at;
        ev++;
    }
    return ev;
}

static void rx_release(struct udz_rx *s)
{
    for (uint32_t k = 0; s->stash && k < s->npieces; k++)
        free(s->stash[k]);
    free(s->stash);
    unreg(&s->mr);
    free(s);
}

static struct udz_rx *rx_by_token(struct aptus_peer *from, uint32_t token)
{
    uint32_t idx = token & 0xff;
    if (idx >= (uint32_t)z.nzep)
        return NULL;
    struct udz_rx *s = z.zeps[idx].rx;
    return s && s->token == token && s->e->base.peer == from ? s : NULL;
}

/* ---- sending a message ------------------------------------------------------------------ */

static fi_addr_t peer_zaddr(struct ud_ep *e, const struct udz_pull *p)
{
    if (!e->zaddr && !(e->zaddr = calloc(UDZ_PEER_ADDRS, sizeof *e->zaddr)))
        return FI_ADDR_NOTAVAIL;
    struct udz_paddr *a = &e->zaddr[p->ztag % UDZ_PEER_ADDRS];
    if (a->tag != p->ztag + 1) {
        if (aptus_fab_av_insert(&ud.d, p->zaddr, p->zlen, &a->a) != 0)
            return FI_ADDR_NOTAVAIL;
        a->tag = p->ztag + 1;
    }
    return a->a;
}

static int tx_done_sending(const struct udz_tx *t)
{
    return t->rq_pos == t->nrq && t->np == t->npieces;
}

/* One datagram: piece k of t, gathered from the user's buffer. Returns 0, or -1 when the
 * provider has no room now. */
static int send_piece(struct udz_tx *t, uint32_t k)
{
    struct ud_txbuf *b = aptus_ud_txbuf_get();
    if (!b)
        return -1;
    struct udz_dhdr h = { ud.job, (uint32_t)aptus_rt.rank, t->token, k };
    memcpy(b->data + ud.d.prefix, &h, sizeof h);
    b->ctx.kind = UD_CTX_TX;
    size_t off = (size_t)k * t->pz;
    struct iovec iov[2] = { { b->data, z.hdr_len },
                            { (char *)t->buf + off, t->len - off < t->pz ? t->len - off : t->pz } };
    void *desc[2] = { ud.tx_desc, t->desc };
    if (fi_sendv(ud.d.ep, iov, desc, 2, t->to, &b->ctx) != 0) {
        aptus_ud_txbuf_put(b);
        return -1;
    }
    ud.ntx_out++;
    return 0;
}

/* The test-only impairment stage on the first pass: a piece lost, duplicated, or sent after
 * the next one. Returns datagrams accounted (0: no room now). */
static uint32_t impaired_first(struct udz_tx *t)
{
    uint32_t k = t->np;
    if (aptus_ud_imp_rand() < imp.loss) {
        imp.lost++;
        return 1;
    }
    if (k + 1 < t->npieces && t->sent + 2 <= t->limit && aptus_ud_imp_rand() < imp.reorder) {
        if (send_piece(t, k + 1) != 0)
            return 0;
        imp.reordered++;
        if (send_piece(t, k) != 0)
            imp.lost++; /* no room for the second: the receiver asks for it again */
        return 2;
    }
    if (send_piece(t, k) != 0)
        return 0;
    if (aptus_ud_imp_rand() < imp.dup && send_piece(t, k) == 0)
        imp.duplicated++;
    return 1;
}

/* Sends what the credit allows; SENT when no more may go. Returns events. */
static int tx_push(struct udz_tx *t)
{
    int ev = 0;
    while (t->sent < t->limit && !tx_done_sending(t)) {
        if (t->rq_pos < t->nrq) {
            if (send_piece(t, t->rq[t->rq_pos]) != 0)
                break;
            t->rq_pos++;
            t->sent++;
            z.st.retx++;
        } else if (__builtin_expect(imp.on, 0) && aptus_ud_imp_now()) {
            uint32_t n = impaired_first(t);
            if (!n)
                break;
            t->np += n;
            t->sent += n;
        } else {
            if (send_piece(t, t->np) != 0)
                break;
            t->np++;
            t->sent++;
        }
        ev++;
    }
    if (t->sent_due && (t->sent >= t->limit || tx_done_sending(t))) {
        struct udz_ctl c = { .type = UDZ_F_SENT, .token = t->token, .value = t->sent, .n = t->np };
        if (aptus_ud_send_frame(t->e, &c, sizeof c, NULL, 0) == APTUS_OK)
            t->sent_due = 0, ev++;
        else
            z.retry = 1;
    }
    if (t->sent < t->limit && !tx_done_sending(t))
        z.retry = 1; /* stopped for room in the provider */
    return ev;
}

static struct udz_tx *tx_by_token(struct aptus_peer *from, uint32_t token, struct udz_tx ***link)
{
    for (struct udz_tx **pp = &z.tx; *pp; pp = &(*pp)->next)
        if ((*pp)->token == token && (*pp)->e->base.peer == from) {
            if (link)
                *link = pp;
            return *pp;
        }
    return NULL;
}

static void tx_free(struct udz_tx *t)
{
    unreg(&t->mr);
    free(t->rq);
    free(t);
}

/* ---- control frames --------------------------------------------------------------------- */

static void on_pull(struct aptus_peer *from, const void *frame, size_t len)
{
    struct udz_pull p;
    struct ud_ep *e = aptus_ud_ep_of(from);
    if (len < sizeof p || !e) {
        aptus_peer_fail(from, &aptus_channel_ud_zcopy, "a malformed zero-copy request");
        return;
    }
    memcpy(&p, frame, sizeof p);
    struct udz_tx *t = calloc(1, sizeof *t);
    if (!t || p.pz == 0 || p.zlen > APTUS_FAB_ADDR_MAX) {
        free(t);
        aptus_peer_fail(from, &aptus_channel_ud_zcopy, t ? "a malformed zero-copy request" : "out of memory");
        return;
    }
    t->e = e;
    t->token = p.token;
    t->buf = (const char *)(uintptr_t)p.addr;
    t->len = (size_t)p.len;
    t->pz = p.pz;
    t->npieces = (uint32_t)((p.len + p.pz - 1) / p.pz);
    t->limit = p.limit;
    t->sent_due = 1;
    t->to = peer_zaddr(e, &p);
    if (t->to == FI_ADDR_NOTAVAIL || aptus_fab_mr_reg(&ud.d, (void *)t->buf, t->len, &t->mr, &t->desc) != 0) {
        free(t);
        aptus_peer_fail(from, &aptus_channel_ud_zcopy, "cannot reach its zero-copy endpoint");
        return;
    }
    t->next = z.tx;
    z.tx = t;
    z.st.tx_msgs++;
    z.st.tx_bytes += t->len;
    tx_push(t);
}

static void on_ctl(struct aptus_peer *from, const void *frame, size_t len)
{
    struct udz_ctl c;
    if (len < sizeof c) {
        aptus_peer_fail(from, &aptus_channel_ud_zcopy, "a malformed zero-copy control frame");
        return;
    }
    memcpy(&c, frame, sizeof c);
    if (c.type == UDZ_F_SENT) {
        struct udz_rx *s = rx_by_token(from, c.token);
        if (s) { /* otherwise complete already */
            s->sender_sent = c.value;
            s->sender_np = c.n < s->npieces ? c.n : s->npieces;
            nack_arm(s);
            z.retry = 1;
        }
        return;
    }
    struct udz_tx **link = NULL;
    struct udz_tx *t = tx_by_token(from, c.token, &link);
    if (!t)
        return; /* a stream already finished */
    if (c.type == UDZ_F_DONE) {
        *link = t->next;
        tx_free(t);
        return;
    }
    if (c.value > t->limit)
        t->limit = c.value;
    t->sent_due = 1; /* SENT again when this credit is used up */
    if (c.type == UDZ_F_NACK) {
        if (len < sizeof c + (size_t)c.n * sizeof(uint32_t) || c.n > UDZ_NACK_MAX) {
            aptus_peer_fail(from, &aptus_channel_ud_zcopy, "a malformed zero-copy control frame");
            return;
        }
        uint32_t *rq = realloc(t->rq, (c.n ? c.n : 1) * sizeof *rq);
        if (!rq)
            aptus_abort_job(MPI_ERR_NO_MEM, "UD zero-copy: out of memory");
        memcpy(rq, (const char *)frame + sizeof c, (size_t)c.n * sizeof *rq);
        for (uint32_t i = 0; i < c.n; i++)
            if (rq[i] >= t->npieces) {
                aptus_peer_fail(from, &aptus_channel_ud_zcopy, "a zero-copy request for a piece beyond the message");
                return;
            }
        t->rq = rq;
        t->nrq = c.n;
        t->rq_pos = 0;
        t->sent_due = 1;
    }
    tx_push(t);
}

/* ---- progress --------------------------------------------------------------------------- */

static int nack_deadlines(uint64_t now)
{
    int ev = 0;
    for (int i = 0; i < z.nzep; i++)
        if (z.zeps[i].rx && z.zeps[i].rx->nack_at <= now)
            ev += rx_push(z.zeps[i].rx, now);
    return ev;
}

int aptus_udz_progress(uint64_t now)
{
    if (!z.retry && !z.finishing)
        return z.nrx ? nack_deadlines(now) : 0; /* the common case: one test per progress pass */
    z.retry = 0;
    int ev = 0;
    for (int i = 0; i < z.nzep; i++)
        if (z.zeps[i].rx)
            ev += rx_push(z.zeps[i].rx, now);
    for (struct udz_tx *t = z.tx; t; t = t->next)
        if (t->sent_due || (t->sent < t->limit && !tx_done_sending(t)))
            ev += tx_push(t);
    /* Finished receives: closed endpoints reopen first (their stale entries set aside), then
     * DONE goes, then the message layer hears of it. */
    int reopen = 0;
    for (int i = 0; i < z.nzep; i++)
        reopen |= z.zeps[i].reopen;
    if (reopen)
        zep_reopen_all();
    while (z.finishing) {
        struct udz_rx *s = z.finishing;
        if (send_ctl(s->e, UDZ_F_DONE, s->token, 0, NULL, 0) != APTUS_OK) {
            z.retry = 1;
            break;
        }
        z.finishing = s->next;
        struct aptus_completion *comp = s->comp;
        rx_release(s);
        aptus_completion_done(comp, APTUS_OK);
        ev++;
    }
    /* Gets waiting for an endpoint. */
    struct udz_zep *zp;
    while (z.waiting && (zp = zep_free())) {
        struct udz_rx *s = z.waiting;
        z.waiting = s->next;
        if (!z.waiting)
            z.waiting_tail = NULL;
        s->next = NULL;
        rx_start(s, zp);
        ev += rx_push(s, now);
    }
    if (z.waiting && !live_zeps())
        aptus_abort_job(MPI_ERR_OTHER, "UD zero-copy: no receive endpoint can be opened any more");
    return ev;
}

uint64_t aptus_udz_next_due(void)
{
    uint64_t due = UINT64_MAX;
    if (!z.retry && !z.finishing && !z.nrx)
        return due;
    if (z.retry || z.finishing)
        due = ud_now_ns() + UDZ_RETRY_NS;
    for (int i = 0; i < z.nzep; i++)
        if (z.zeps[i].rx && z.zeps[i].rx->nack_at < due)
            due = z.zeps[i].rx->nack_at;
    return due;
}

int aptus_udz_busy(void)
{
    return z.tx || z.finishing || z.waiting || z.ndq;
}

void aptus_udz_ep_closing(struct ud_ep *e)
{
    /* Only at finalize, when no message is in flight; a receive still running is dropped
     * (its endpoint closed first, so that nothing lands in its buffer afterwards). */
    for (int i = 0; i < z.nzep; i++) {
        struct udz_rx *s = z.zeps[i].rx;
        if (s && s->e == e) {
            if (z.zeps[i].posted)
                zep_retire(&z.zeps[i]);
            z.zeps[i].rx = NULL;
            z.nrx--;
            rx_release(s);
        }
    }
    for (struct udz_tx **pp = &z.tx; *pp;) {
        struct udz_tx *t = *pp;
        if (t->e == e) {
            *pp = t->next;
            tx_free(t);
        } else {
            pp = &t->next;
        }
    }
}

size_t aptus_udz_memory(void)
{
    if (!z.on)
        return 0;
    size_t m = (size_t)z.nzep * (size_t)z.nslots * (sizeof(struct udz_slot) + z.hdr_len);
    for (struct udz_tx *t = z.tx; t; t = t->next)
        m += sizeof *t + t->nrq * sizeof(uint32_t);
    return m;
}

void aptus_udz_stats_print(void)
{
    if (!z.st.rx_msgs && !z.st.tx_msgs)
        return; /* no zero-copy message to or from this rank */
    printf("[aptus stats] rank %d: ud-zcopy: received %" PRIu64 " messages (%" PRIu64 " bytes), sent %" PRIu64
           " (%" PRIu64 " bytes); pieces in place %" PRIu64 ", misplaced (copied) %" PRIu64
           " of which kept aside %" PRIu64 ", bad %" PRIu64 "; NACKs %" PRIu64 ", pieces sent again %" PRIu64
           ", endpoints reopened %" PRIu64 ", waits for an endpoint %" PRIu64
           "; %d endpoints x %d receives of %zu bytes\n",
           aptus_rt.rank, z.st.rx_msgs, z.st.rx_bytes, z.st.tx_msgs, z.st.tx_bytes, z.st.in_place, z.st.misplaced,
           z.st.stashed, z.st.bad, z.st.nacks, z.st.retx, z.st.retired, z.st.waits, z.nzep, z.nslots, z.pz);
}

/* The statistics document (channel/stats_json.h): what aptus_udz_stats_print prints (ud-zcopy
 * and ud-copy, whose messages it counts together). */
void aptus_udz_stats_json(struct aptus_json *j)
{
    if (!z.st.rx_msgs && !z.st.tx_msgs)
        return;
    aptus_json_object(j, "ud-zcopy");
    aptus_json_u64(j, "received", z.st.rx_msgs);
    aptus_json_u64(j, "bytes_received", z.st.rx_bytes);
    aptus_json_u64(j, "sent", z.st.tx_msgs);
    aptus_json_u64(j, "bytes_sent", z.st.tx_bytes);
    aptus_json_u64(j, "pieces_in_place", z.st.in_place);
    aptus_json_u64(j, "pieces_misplaced", z.st.misplaced);
    aptus_json_u64(j, "pieces_kept_aside", z.st.stashed);
    aptus_json_u64(j, "pieces_bad", z.st.bad);
    aptus_json_u64(j, "nacks", z.st.nacks);
    aptus_json_u64(j, "pieces_sent_again", z.st.retx);
    aptus_json_u64(j, "endpoints_reopened", z.st.retired);
    aptus_json_u64(j, "waits_for_endpoint", z.st.waits);
    aptus_json_int(j, "endpoints", z.nzep);
    aptus_json_int(j, "receives_per_endpoint", z.nslots);
    aptus_json_u64(j, "receive_bytes", z.pz);
    aptus_json_close(j);
}

/* ---- life cycle ------------------------------------------------------------------------- */

int aptus_udz_endpoints(void)
{
    /* Endpoints only where a rule can pick ud-zcopy; zero-copy needs receives of two pieces
     * (header, place) and sends of two. */
    int named = 0;
    for (int i = 0; i < aptus_rules.n; i++)
        named |= aptus_rules.rule[i].channel == APTUS_CH_UD_ZCOPY;
    if (!named || ud.d.info->rx_attr->iov_limit < 2 || ud.d.info->tx_attr->iov_limit < 2 ||
        (ud.d.mr_local && (ud.d.mr_mode & FI_MR_ENDPOINT)))
        return 0;                     /* ud-zcopy streams copies (its caps say so) */
    return aptus_config.ud_zcopy_eps; /* 0..255 (config_vars.def) */
}

int aptus_udz_setup(char *err, size_t errlen)
{
    memset(&z, 0, sizeof z);
    aptus_am_register(UDZ_F_PULL, on_pull);
    for (int t = UDZ_F_CREDIT; t <= UDZ_F_DONE; t++)
        aptus_am_register((uint8_t)t, on_ctl);
    int neps = aptus_udz_endpoints();
    size_t mtu = aptus_config.ud_zcopy_mtu;
    if (!mtu)
        mtu = !strcmp(ud.d.prov, "udp") ? UDZ_UDP_MTU : ud.d.mtu;
    if (mtu > 65507 - ud.d.prefix)
        mtu = 65507 - ud.d.prefix;
    if (mtu < sizeof(struct udz_dhdr) + 64) {
        snprintf(err, errlen, "APTUS_UD_ZCOPY_MTU=%zu is too small (at least %zu)", mtu, sizeof(struct udz_dhdr) + 64);
        return -1;
    }
    z.pz = mtu - sizeof(struct udz_dhdr);
    z.hdr_len = ud.d.prefix + sizeof(struct udz_dhdr);
    z.nack_ns = (uint64_t)aptus_config.ud_zcopy_nack_us * 1000u;
    size_t w = aptus_config.ud_zcopy_window_bytes / z.pz;
    z.nslots = w < 1 ? 1 : w > 1024 ? 1024 : (int)w;
    if ((size_t)z.nslots > ud.d.rx_depth)
        z.nslots = (int)ud.d.rx_depth;
    if (neps == 0)
        return 0;
    /* The completion queue is shared: sends in flight + the main receives + every zero-copy
     * endpoint's receives must fit in it (see cq_size). ud_setup left each endpoint at least
     * one (APTUS_UD_RECV_BUFS against APTUS_UD_ZCOPY_EPS). */
    size_t room = ud.d.cq_size - ud.d.tx_depth - (size_t)ud.nrx, per = room / (size_t)neps;
    if (ud.d.cq_size < ud.d.tx_depth + (size_t)ud.nrx || per < 1) {
        snprintf(err, errlen,
                 "APTUS_UD_ZCOPY_EPS=%d with APTUS_UD_RECV_BUFS=%d: the completion queue (%zu entries) has no room for "
                 "the receives of %d endpoints beside %zu sends and %d receives",
                 neps, ud.nrx, ud.d.cq_size, neps, ud.d.tx_depth, ud.nrx);
        return -1;
    }
    if ((size_t)z.nslots > per)
        z.nslots = (int)per;
    if (!(z.zeps = calloc((size_t)neps, sizeof *z.zeps))) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    z.nzep = neps;
    for (int i = 0; i < neps; i++)
        if (zep_init(&z.zeps[i], i) != 0) {
            snprintf(err, errlen, "cannot open zero-copy receive endpoint %d (APTUS_UD_ZCOPY_EPS=0 turns them off)", i);
            return -1;
        }
    z.on = 1;
    return 0;
}

void aptus_udz_finalize(void)
{
    while (z.tx) {
        struct udz_tx *t = z.tx;
        z.tx = t->next;
        tx_free(t);
    }
    for (struct udz_rx *s; (s = z.waiting);) {
        z.waiting = s->next;
        rx_release(s);
    }
    for (struct udz_rx *s; (s = z.finishing);) {
        z.finishing = s->next;
        rx_release(s);
    }
    for (int i = 0; i < z.nzep; i++) {
        struct udz_zep *zp = &z.zeps[i];
        if (zp->rx)
            rx_release(zp->rx);
        if (zp->ep)
            fi_close(&zp->ep->fid);
        unreg(&zp->hdr_mr);
        free(zp->slots);
        free(zp->hdrs);
    }
    free(z.zeps);
    free(z.dq);
    memset(&z, 0, sizeof z);
}

/* ---- the channel tables ----------------------------------------------------------------- */

static int wep_open(struct aptus_peer *p, struct aptus_ep **out)
{
    struct ud_ep *sr = aptus_ud_ep_of(p);
    struct udz_wep *w = sr ? calloc(1, sizeof *w) : NULL;
    if (!w)
        return APTUS_ERR;
    w->sr = sr;
    *out = &w->base;
    return APTUS_OK;
}

static void wep_close(struct aptus_ep *ep)
{
    free(ep);
}

static int wep_send_frame(struct aptus_ep *ep, const void *hdr, size_t hdrlen, const void *payload, size_t len)
{
    return aptus_ud_send_frame(((struct udz_wep *)ep)->sr, hdr, hdrlen, payload, len);
}

static int wep_send_frame_packed(struct aptus_ep *ep, const void *hdr, size_t hdrlen, struct aptus_dt_cursor *cur,
                                 size_t len)
{
    return aptus_ud_send_frame_packed(((struct udz_wep *)ep)->sr, hdr, hdrlen, cur, len);
}

/* Both take every message through a rendezvous (a send rule puts the eager sizes on ud-sr):
 * ud-zcopy by the receiver's pull, ud-copy by the streamed copy. */
static void set_caps(struct aptus_channel *ch, int zcopy)
{
    struct aptus_chan_caps *c = &ch->caps;
    const struct aptus_chan_caps *sr = &aptus_channel_ud_sr.caps;
    memset(c, 0, sizeof *c);
    c->flags = APTUS_CAP_ORDERED | APTUS_CAP_RELIABLE | (zcopy && z.on ? APTUS_CAP_GET : 0);
    c->frame_max = sr->frame_max;
    c->chunk = sr->chunk;
    c->eager_max = 0;
    c->get_max = zcopy && z.on ? SIZE_MAX : 0;
    c->iov_max = 256; /* a list of more than one piece is refused: the copy is streamed */
}

static int udz_init(void)
{
    set_caps(&aptus_channel_ud_zcopy, 1);
    return APTUS_OK;
}

static int udc_init(void)
{
    set_caps(&aptus_channel_ud_copy, 0);
    return APTUS_OK;
}

void aptus_udz_caps_refresh(void)
{
    set_caps(&aptus_channel_ud_zcopy, 1);
    set_caps(&aptus_channel_ud_copy, 0);
}

struct aptus_channel aptus_channel_ud_zcopy = {
    .name = "ud-zcopy",
    .init = udz_init,
    .reaches = aptus_ud_reaches,
    .ep_open = wep_open,
    .ep_close = wep_close,
    .send_frame = wep_send_frame,
    .send_frame_packed = wep_send_frame_packed,
    .get = udz_get,
};

struct aptus_channel aptus_channel_ud_copy = {
    .name = "ud-copy",
    .init = udc_init,
    .reaches = aptus_ud_reaches,
    .ep_open = wep_open,
    .ep_close = wep_close,
    .send_frame = wep_send_frame,
    .send_frame_packed = wep_send_frame_packed,
};

#else
typedef int aptus_ud_zcopy_unused;
#endif
