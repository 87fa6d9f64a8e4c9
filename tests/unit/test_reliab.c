/* The reliability and re-order engine over a simulated network.
 *
 * Two engines ("sides"), each with L links, joined by a simulated datagram network driven by a
 * virtual clock: every datagram is lost, duplicated, delayed, reordered or corrupted (bit
 * flips) with given probabilities, and the channel may refuse a datagram (NORES). Both sides
 * send many payloads of random sizes (0..max) on every link, some from inside the delivery
 * callback; each receiver checks that payload k of a link arrives k-th, once, with the right
 * bytes. A run fails when it does not finish within a bounded virtual time and number of steps
 * (a livelock or a hang), when the engines' counters disagree with the faults injected, or when
 * memory is still held once everything is acknowledged.
 *
 * Further tests: the send window (datagrams and bytes), a dead peer reported once after the
 * peer timeout (never before), the RTT estimate and timeout following a link's delay, sequence
 * numbers wrapping around, the size of a link record.
 *
 *   test_reliab            all tests
 *   test_reliab --bench    also: ns per send + arrival on a lossless loop (printed only) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "channel/reliab/reliab.h"

#include "unit_check.h"

#define MS  1000000ull
#define US  1000ull
#define SEC 1000000000ull

/* ---- random numbers -------------------------------------------------------------------- */

static uint64_t mix64(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

static uint64_t rng_state;
static uint64_t rnd(void)
{
    return rng_state = mix64(rng_state);
}
static double rnd01(void)
{
    return (double)(rnd() >> 11) * (1.0 / 9007199254740992.0);
}

/* ---- the simulated network --------------------------------------------------------------- */

struct sim_params {
    const char *name;
    double loss, dup, reorder, corrupt, noroom;
    uint64_t delay, jitter, reorder_extra; /* ns */
    int crc;
    uint32_t count;  /* payloads per link and direction */
    uint32_t links;  /* links per side */
    uint32_t window; /* datagrams */
    size_t max_payload;
    uint32_t initial_seq;
    uint64_t seed;
};

struct dgram {
    uint64_t at;
    uint64_t order; /* enqueue count: equal times leave in the order sent */
    int to;         /* side */
    uint32_t link;  /* index */
    size_t len;
    uint8_t data[];
};

struct linkst {
    struct aptus_rel_link rl;
    int side;
    uint32_t idx;
    uint32_t next_send, next_recv;
    int blocked;      /* the last send was refused: wait for an arrival or a tick */
    uint64_t fifo_at; /* latest arrival time given to a datagram not reordered */
    int dead_calls;
    uint64_t dead_at;
};

struct side {
    struct aptus_rel e;
    struct linkst *links;
};

static struct sim {
    struct sim_params p;
    struct side s[2];
    struct dgram **q;
    size_t nq, capq;
    uint64_t now, enq;
    uint64_t injected_loss, injected_dup, injected_corrupt, injected_noroom;
    int cut[2];         /* datagrams to side i are dropped (a dead peer) */
    int in_input;       /* re-entrancy guard check */
    int bad_order;      /* deliveries out of order / wrong bytes */
    uint64_t lost_data; /* data datagrams the loss dropped */
    uint64_t recovered; /* ops->recovered calls */
} S;

static size_t payload_len(int side, uint32_t link, uint32_t k)
{
    uint64_t h = mix64(S.p.seed ^ ((uint64_t)side << 62) ^ ((uint64_t)link << 32) ^ k);
    if ((h & 7) == 0)
        return 0; /* empty payloads are common enough to matter */
    if ((h & 7) == 1)
        return S.p.max_payload;
    return (size_t)((h >> 8) % (S.p.max_payload + 1));
}

static void payload_fill(int side, uint32_t link, uint32_t k, uint8_t *buf, size_t len)
{
    uint64_t x = mix64(S.p.seed * 31 + ((uint64_t)side << 62) + ((uint64_t)link << 32) + k);
    for (size_t i = 0; i < len; i++) {
        if ((i & 7) == 0)
            x = mix64(x);
        buf[i] = (uint8_t)(x >> ((i & 7) * 8));
    }
}

/* The datagrams in flight: a binary min-heap on (at, order). */
static int dg_before(const struct dgram *a, const struct dgram *b)
{
    return a->at < b->at || (a->at == b->at && a->order < b->order);
}

static void heap_push(struct dgram *d)
{
    if (S.nq == S.capq) {
        S.capq = S.capq ? 2 * S.capq : 256;
        S.q = realloc(S.q, S.capq * sizeof *S.q);
    }
    size_t i = S.nq++;
    while (i > 0 && dg_before(d, S.q[(i - 1) / 2])) {
        S.q[i] = S.q[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    S.q[i] = d;
}

static struct dgram *heap_pop(void)
{
    struct dgram *top = S.q[0], *last = S.q[--S.nq];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= S.nq)
            break;
        if (c + 1 < S.nq && dg_before(S.q[c + 1], S.q[c]))
            c++;
        if (!dg_before(S.q[c], last))
            break;
        S.q[i] = S.q[c];
        i = c;
    }
    if (S.nq)
        S.q[i] = last;
    return top;
}

static void enqueue(int to, uint32_t link, const uint8_t *data, size_t len, uint64_t extra)
{
    struct dgram *d = malloc(sizeof *d + len);
    d->order = S.enq++;
    /* Jitter alone keeps a link's datagrams in order (as a network path does); the reorder
     * probability picks the ones that are held back and overtaken. */
    struct linkst *ls = &S.s[to].links[link];
    d->at = S.now + S.p.delay + (S.p.jitter ? rnd() % S.p.jitter : 0) + extra;
    if (S.p.reorder > 0 && rnd01() < S.p.reorder) {
        d->at += S.p.reorder_extra ? rnd() % S.p.reorder_extra : 0;
    } else if (!extra) {
        if (d->at < ls->fifo_at)
            d->at = ls->fifo_at;
        ls->fifo_at = d->at;
    }
    d->to = to;
    d->link = link;
    d->len = len;
    memcpy(d->data, data, len);
    if (S.p.corrupt > 0 && rnd01() < S.p.corrupt) {
        int flips = 1 + (int)(rnd() % 3);
        for (int i = 0; i < flips && len; i++) {
            size_t bit = rnd() % (len * 8);
            d->data[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        }
        S.injected_corrupt++;
    }
    heap_push(d);
}

static int sim_xmit(struct aptus_rel_link *rl, const struct iovec *iov, int n)
{
    struct linkst *ls = aptus_rel_link_user(rl);
    if (S.p.noroom > 0 && rnd01() < S.p.noroom) {
        S.injected_noroom++;
        return APTUS_NORES;
    }
    uint8_t buf[70000];
    size_t len = 0;
    for (int i = 0; i < n; i++) {
        memcpy(buf + len, iov[i].iov_base, iov[i].iov_len);
        len += iov[i].iov_len;
    }
    int to = 1 - ls->side;
    if (S.cut[to] || S.cut[ls->side] || (S.p.loss > 0 && rnd01() < S.p.loss)) {
        S.injected_loss++;
        S.lost_data += buf[0] == APTUS_REL_DATA;
        return APTUS_OK;
    }
    enqueue(to, ls->idx, buf, len, 0);
    if (S.p.dup > 0 && rnd01() < S.p.dup) {
        S.injected_dup++;
        enqueue(to, ls->idx, buf, len, rnd() % (S.p.delay + 1));
    }
    return APTUS_OK;
}

/* Sends the next payload of a link; returns the engine's answer. */
static int send_next(int side, struct linkst *ls)
{
    static uint8_t buf[70000];
    uint32_t k = ls->next_send;
    size_t len = payload_len(side, ls->idx, k);
    payload_fill(side, ls->idx, k, buf, len);
    /* Gathered from up to three pieces. */
    struct iovec iov[3];
    size_t a = len / 3, b = len / 2;
    iov[0] = (struct iovec){ buf, a };
    iov[1] = (struct iovec){ buf + a, b - a };
    iov[2] = (struct iovec){ buf + b, len - b };
    int rc = aptus_rel_send(&S.s[side].e, &ls->rl, iov, 3, S.now);
    if (rc == APTUS_OK)
        ls->next_send++;
    ls->blocked = rc == APTUS_NORES;
    return rc;
}

static void sim_deliver(struct aptus_rel_link *rl, const void *data, size_t len)
{
    struct linkst *ls = aptus_rel_link_user(rl);
    static uint8_t want[70000];
    int from = 1 - ls->side;
    uint32_t k = ls->next_recv++;
    size_t wl = payload_len(from, ls->idx, k);
    payload_fill(from, ls->idx, k, want, wl);
    if (k >= S.p.count || len != wl || memcmp(data, want, len) != 0) {
        if (S.bad_order++ < 5)
            fprintf(stderr, "%s: side %d link %u: payload %u: got %zu bytes, want %zu%s\n", S.p.name, ls->side, ls->idx,
                    k, len, wl, len == wl ? " (contents differ)" : "");
    }
    /* Answer from inside the handler now and then (the engine must allow it). */
    if (ls->next_send < S.p.count && (rnd() & 3) == 0)
        (void)send_next(ls->side, ls);
}

static void sim_dead(struct aptus_rel_link *rl)
{
    struct linkst *ls = aptus_rel_link_user(rl);
    ls->dead_calls++;
    ls->dead_at = S.now;
}

/* A datagram arrived by a retransmission, its first transmission never here. */
static void sim_recovered(struct aptus_rel_link *rl)
{
    (void)rl;
    S.recovered++;
}

static const struct aptus_rel_ops sim_ops = { sim_xmit, sim_deliver, sim_dead, sim_recovered };

static void sim_cfg(struct aptus_rel_cfg *c)
{
    aptus_rel_cfg_default(c);
    c->window_pkts = S.p.window ? S.p.window : 32;
    c->window_bytes = 64 * 1024;
    c->max_payload = S.p.max_payload;
    c->ack_delay_ns = 50 * US;
    c->rto_init_ns = 20 * MS;
    c->rto_min_ns = 2 * MS;
    c->rto_max_ns = 500 * MS;
    c->peer_timeout_ns = 60 * SEC;
    c->crc = S.p.crc;
    c->link_stats = 1;
    c->initial_seq = S.p.initial_seq;
}

static void sim_setup(const struct sim_params *p)
{
    memset(&S, 0, sizeof S);
    S.p = *p;
    if (!S.p.links)
        S.p.links = 1;
    rng_state = p->seed;
    struct aptus_rel_cfg c;
    sim_cfg(&c);
    for (int i = 0; i < 2; i++) {
        CHECK(aptus_rel_init(&S.s[i].e, &sim_ops, &c) == APTUS_OK);
        S.s[i].links = calloc(S.p.links, sizeof(struct linkst));
        for (uint32_t j = 0; j < S.p.links; j++) {
            struct linkst *ls = &S.s[i].links[j];
            ls->side = i;
            ls->idx = j;
            aptus_rel_link_init(&S.s[i].e, &ls->rl, ls);
        }
    }
}

static void sim_teardown(void)
{
    for (size_t i = 0; i < S.nq; i++)
        free(S.q[i]);
    free(S.q);
    for (int i = 0; i < 2; i++) {
        for (uint32_t j = 0; j < S.p.links; j++)
            aptus_rel_link_fini(&S.s[i].e, &S.s[i].links[j].rl);
        aptus_rel_fini(&S.s[i].e);
        free(S.s[i].links);
    }
}

static int sim_done(void)
{
    for (int i = 0; i < 2; i++)
        for (uint32_t j = 0; j < S.p.links; j++)
            if (S.s[i].links[j].next_recv < S.p.count)
                return 0;
    return 1;
}

/* One step: the applications send what the windows take, time jumps to the next event
 * (arrival or engine deadline), arrivals are handed in, due engines ticked. Returns 0 when
 * nothing is left to happen at all. */
static int sim_step(int app_sends)
{
    if (app_sends)
        for (int i = 0; i < 2; i++)
            for (uint32_t j = 0; j < S.p.links; j++) {
                struct linkst *ls = &S.s[i].links[j];
                while (!ls->blocked && ls->next_send < S.p.count && send_next(i, ls) == APTUS_OK)
                    ;
            }
    uint64_t t = S.nq ? S.q[0]->at : UINT64_MAX;
    for (int i = 0; i < 2; i++)
        if (S.s[i].e.next_due < t)
            t = S.s[i].e.next_due;
    if (t == UINT64_MAX)
        return 0;
    if (t > S.now)
        S.now = t;
    /* Arrivals due now, earliest first; an arrival may enqueue more (zero delay). */
    while (S.nq && S.q[0]->at <= S.now) {
        struct dgram *d = heap_pop();
        if (!S.cut[d->to]) {
            struct linkst *ls = &S.s[d->to].links[d->link];
            ls->blocked = 0;
            aptus_rel_input(&S.s[d->to].e, &ls->rl, d->data, d->len, S.now);
        }
        free(d);
    }
    for (int i = 0; i < 2; i++)
        if (aptus_rel_due(&S.s[i].e, S.now)) {
            aptus_rel_tick(&S.s[i].e, S.now);
            for (uint32_t j = 0; j < S.p.links; j++)
                S.s[i].links[j].blocked = 0;
        }
    return 1;
}

static void print_stats(const char *who, const struct aptus_rel_stats *st)
{
    printf("  %s: sent %llu retx timeout %llu fast %llu (timer expiries %llu) acks %llu delivered %llu dups %llu "
           "ooo %llu oow %llu crc %llu malformed %llu bytes %llu/%llu\n",
           who, (unsigned long long)st->sent, (unsigned long long)st->retx_timeout, (unsigned long long)st->retx_fast,
           (unsigned long long)st->timeouts, (unsigned long long)st->acks_sent, (unsigned long long)st->delivered,
           (unsigned long long)st->dups, (unsigned long long)st->out_of_order, (unsigned long long)st->out_of_window,
           (unsigned long long)st->crc_fail, (unsigned long long)st->malformed, (unsigned long long)st->bytes_sent,
           (unsigned long long)st->bytes_delivered);
}

/* Runs a whole exchange and checks it. */
static void run_scenario(const struct sim_params *p)
{
    sim_setup(p);
    const uint64_t vtime_max = 600 * SEC;
    const long steps_max = 20 * 1000 * 1000;
    long steps = 0;
    int hang = 0;
    while (!sim_done()) {
        if (!sim_step(1)) {
            hang = 1; /* nothing in flight, no timer, not finished */
            break;
        }
        if (++steps > steps_max || S.now > vtime_max)
            break;
    }
    int finished = sim_done();
    if (!finished)
        fprintf(stderr, "%s: not finished after %ld steps, %.3f s virtual%s\n", p->name, steps, S.now / 1e9,
                hang ? " (nothing left to happen: a hang)" : "");
    CHECK(finished);
    uint64_t t_done = S.now;
    /* Let the last acks land; then nothing may be held. */
    for (long k = 0; k < 100000 && sim_step(0); k++)
        ;
    CHECK(S.nq == 0);
    CHECK(S.bad_order == 0);
    const struct aptus_rel_stats *a = aptus_rel_stats(&S.s[0].e), *b = aptus_rel_stats(&S.s[1].e);
    uint64_t n = (uint64_t)S.p.count * S.p.links;
    printf("%s: %u links x %u payloads each way, done at %.3f s virtual, %ld steps; injected: loss %llu dup %llu "
           "corrupt %llu noroom %llu\n",
           p->name, S.p.links, S.p.count, t_done / 1e9, steps, (unsigned long long)S.injected_loss,
           (unsigned long long)S.injected_dup, (unsigned long long)S.injected_corrupt,
           (unsigned long long)S.injected_noroom);
    print_stats("side 0", a);
    print_stats("side 1", b);
    uint64_t retx = a->retx_timeout + a->retx_fast + b->retx_timeout + b->retx_fast;
    uint64_t dups = a->dups + b->dups, crcf = a->crc_fail + b->crc_fail;
    CHECK(a->sent == n && b->sent == n);
    CHECK(a->delivered == n && b->delivered == n);
    CHECK(a->bytes_sent == b->bytes_delivered && b->bytes_sent == a->bytes_delivered);
    /* Per-link counters add up to the totals. */
    uint64_t sum_sent = 0, sum_del = 0;
    for (uint32_t j = 0; j < S.p.links; j++) {
        const struct aptus_rel_stats *ls = aptus_rel_link_stats(&S.s[0].links[j].rl);
        CHECK(ls != NULL);
        if (ls) {
            sum_sent += ls->sent;
            sum_del += ls->delivered;
        }
    }
    CHECK(sum_sent == a->sent && sum_del == a->delivered);
    if (p->loss > 0) {
        CHECK(retx > 0);
        if (!p->window || p->window >= 8)
            CHECK(a->retx_fast + b->retx_fast > 0); /* holes are found by selective acks */
    }
    if (p->initial_seq > UINT32_MAX - p->count) { /* the numbers wrapped around */
        uint32_t nxt = S.s[0].links[0].rl.snd_nxt;
        printf("  sequence numbers went from %u to %u\n", p->initial_seq, nxt);
        CHECK(nxt < p->initial_seq && nxt > 0);
    }
    /* Losses seen by the receivers: each one a data datagram whose first transmission (at least)
     * was dropped; none without loss (a duplicate is not one). */
    uint64_t recovered = a->recovered + b->recovered;
    printf("  data datagrams dropped %llu, recovered by a retransmission %llu\n", (unsigned long long)S.lost_data,
           (unsigned long long)recovered);
    CHECK(recovered == S.recovered);
    if (p->loss > 0 && p->corrupt == 0 && p->reorder == 0)
        CHECK(recovered > 0 && recovered <= S.lost_data);
    if (p->loss == 0 && p->corrupt == 0 && p->reorder == 0 && p->noroom == 0)
        CHECK(recovered == 0);
    if (p->loss == 0 && p->dup == 0 && p->corrupt == 0 && p->reorder == 0)
        CHECK(retx == 0 && dups == 0 && a->out_of_order + b->out_of_order == 0); /* nothing spurious */
    if (p->dup > 0)
        CHECK(dups > 0);
    if (p->reorder > 0)
        CHECK(a->out_of_order + b->out_of_order > 0);
    if (p->corrupt > 0 && p->crc)
        CHECK(crcf > 0);
    if (p->crc == 0)
        CHECK(crcf == 0);
    CHECK(a->acks_sent + b->acks_sent > 0);
    for (int i = 0; i < 2; i++) {
        size_t held, pooled;
        aptus_rel_mem(&S.s[i].e, &held, &pooled);
        if (held)
            fprintf(stderr, "%s: side %d still holds %zu bytes once idle\n", p->name, i, held);
        CHECK(held == 0);
        CHECK(S.s[i].e.next_due == UINT64_MAX); /* no timer left */
        for (uint32_t j = 0; j < S.p.links; j++) {
            CHECK(S.s[i].links[j].dead_calls == 0);
            CHECK(S.s[i].links[j].rl.fl == NULL);
        }
    }
    sim_teardown();
}

/* ---- the send window --------------------------------------------------------------------- */

static void test_window(void)
{
    struct sim_params p = {
        .name = "window", .delay = 1 * MS, .count = 1000, .window = 4, .max_payload = 500, .seed = 11
    };
    sim_setup(&p);
    struct linkst *ls = &S.s[0].links[0];
    uint8_t buf[600] = { 0 };
    struct iovec iov = { buf, 100 };
    /* Only payload sizes from the generator are checked on delivery: send generated ones. */
    int ok = 0;
    while (send_next(0, ls) == APTUS_OK)
        ok++;
    CHECK(ok == 4); /* window of 4 datagrams (the generator's sizes fit in 64 KiB) */
    CHECK(send_next(0, ls) == APTUS_NORES);
    iov.iov_len = 501;
    CHECK(aptus_rel_send(&S.s[0].e, &ls->rl, &iov, 1, S.now) == APTUS_ERR); /* over max_payload */
    /* Acks come back after a round trip: sending works again. */
    while (S.now < 3 * MS && sim_step(0))
        ;
    CHECK(send_next(0, ls) == APTUS_OK);
    sim_teardown();

    /* The byte window: 1000 bytes, payloads of 400. */
    struct aptus_rel e;
    struct aptus_rel_cfg c;
    aptus_rel_cfg_default(&c);
    c.window_pkts = 16;
    c.window_bytes = 1000;
    c.max_payload = 500;
    struct sim_params q = { .name = "window_bytes", .delay = 1 * MS, .max_payload = 500, .seed = 12 };
    sim_setup(&q);
    CHECK(aptus_rel_init(&e, &sim_ops, &c) == APTUS_OK);
    struct linkst l2 = { .side = 0, .idx = 0 };
    aptus_rel_link_init(&e, &l2.rl, &l2);
    iov.iov_len = 400;
    CHECK(aptus_rel_send(&e, &l2.rl, &iov, 1, 0) == APTUS_OK);
    CHECK(aptus_rel_send(&e, &l2.rl, &iov, 1, 0) == APTUS_OK);
    CHECK(aptus_rel_send(&e, &l2.rl, &iov, 1, 0) == APTUS_NORES);
    iov.iov_len = 200;
    CHECK(aptus_rel_send(&e, &l2.rl, &iov, 1, 0) == APTUS_OK); /* exactly 1000 */
    iov.iov_len = 0;
    CHECK(aptus_rel_send(&e, &l2.rl, &iov, 1, 0) == APTUS_OK); /* an empty payload still fits */
    aptus_rel_link_fini(&e, &l2.rl);
    size_t held;
    aptus_rel_mem(&e, &held, NULL);
    CHECK(held == 0);
    aptus_rel_fini(&e);
    sim_teardown();
    printf("window: datagram and byte windows answer NORES when full, OK again after acks\n");
}

/* ---- a dead peer ------------------------------------------------------------------------- */

static void test_dead_peer(void)
{
    /* 1) A peer that never answers: reported once, at the peer timeout after the first send,
     *    with exponential back-off in between. */
    struct sim_params p = { .name = "dead_silent", .delay = 1 * MS, .count = 3, .max_payload = 100, .seed = 21 };
    sim_setup(&p);
    S.cut[1] = 1;
    struct aptus_rel *e = &S.s[0].e;
    struct linkst *ls = &S.s[0].links[0];
    e->cfg.peer_timeout_ns = 2 * SEC;
    while (ls->next_send < 3)
        CHECK(send_next(0, ls) == APTUS_OK);
    long ticks = 0;
    while (S.now < 10 * SEC && ticks < 100000) {
        uint64_t t = e->next_due;
        if (t == UINT64_MAX)
            break;
        S.now = t;
        aptus_rel_tick(e, S.now);
        ticks++;
        if (S.now < 2 * SEC)
            CHECK(ls->dead_calls == 0);
    }
    CHECK(ls->dead_calls == 1);
    CHECK(ls->dead_at == 2 * SEC);
    CHECK(aptus_rel_link_dead(&ls->rl));
    CHECK(e->next_due == UINT64_MAX); /* nothing armed for a dead link */
    CHECK(send_next(0, ls) == APTUS_ERR);
    const struct aptus_rel_stats *st = aptus_rel_stats(e);
    /* rto 20 ms doubling up to 500 ms over 2 s: about 7 timer expiries, not 1000 (2 ms each). */
    CHECK(st->timeouts >= 4 && st->timeouts <= 12);
    size_t held;
    aptus_rel_mem(e, &held, NULL);
    CHECK(held == 0);
    printf("dead_silent: dead reported once at %.3f s (peer timeout 2 s), %llu timer expiries, %llu "
           "retransmissions, %ld ticks\n",
           ls->dead_at / 1e9, (unsigned long long)st->timeouts, (unsigned long long)st->retx_timeout, ticks);
    sim_teardown();

    /* 2) A peer that answers for 5 s, then goes silent: reported a peer timeout after its last
     *    answer, not before. */
    struct sim_params q = { .name = "dead_later", .delay = 1 * MS, .count = 1u << 30, .max_payload = 100, .seed = 22 };
    sim_setup(&q);
    e = &S.s[0].e;
    ls = &S.s[0].links[0];
    e->cfg.peer_timeout_ns = 3 * SEC;
    S.s[1].e.cfg.peer_timeout_ns = 3 * SEC;
    long steps = 0;
    while (S.now < 20 * SEC && steps < 5000000 && ls->dead_calls == 0) {
        if (S.now >= 5 * SEC)
            S.cut[1] = 1;
        if (!sim_step(1))
            break;
        steps++;
    }
    CHECK(ls->dead_calls == 1);
    CHECK(ls->dead_at >= 8 * SEC - 10 * MS && ls->dead_at <= 8 * SEC + 10 * MS);
    for (int k = 0; k < 1000 && sim_step(0); k++) /* nothing more is reported */
        ;
    CHECK(ls->dead_calls == 1);
    printf("dead_later: peer silent from 5.000 s, dead reported once at %.3f s (peer timeout 3 s)\n",
           ls->dead_at / 1e9);
    S.cut[1] = 0;
    sim_teardown();
}

/* ---- RTT estimate ------------------------------------------------------------------------ */

static void test_rtt(void)
{
    struct sim_params p = { .name = "rtt", .delay = 1 * MS, .count = 1u << 30, .max_payload = 200, .seed = 31 };
    sim_setup(&p);
    for (int i = 0; i < 2; i++) {
        S.s[i].e.cfg.rto_min_ns = 100 * US; /* let the estimate, not the floor, decide */
        S.s[i].e.cfg.rto_init_ns = 500 * MS;
        S.s[i].e.cfg.ack_delay_ns = 20 * US;
    }
    struct aptus_rel_link *rl = &S.s[0].links[0].rl;
    uint64_t srtt, rto;
    aptus_rel_link_rtt(&S.s[0].e, rl, &srtt, &rto);
    CHECK(srtt == 0 && rto == 500 * MS);
    while (S.now < 1 * SEC && sim_step(1))
        ;
    aptus_rel_link_rtt(&S.s[0].e, rl, &srtt, &rto);
    printf("rtt: one-way delay 1 ms: srtt %.3f ms, rto %.3f ms\n", srtt / 1e6, rto / 1e6);
    CHECK(srtt >= 2 * MS - 1 * US && srtt <= 2 * MS + 25 * US); /* 2D, plus at most the ack delay */
    CHECK(rto >= srtt && rto < 3 * MS);
    uint64_t retx0 = aptus_rel_stats(&S.s[0].e)->retx_timeout;
    CHECK(retx0 == 0);
    /* The path gets slower: 5 ms each way. The estimate follows; once it has, no more
     * (spurious) timeouts. */
    S.p.delay = 5 * MS;
    while (S.now < 2 * SEC && sim_step(1))
        ;
    uint64_t retx1 = aptus_rel_stats(&S.s[0].e)->retx_timeout;
    while (S.now < 4 * SEC && sim_step(1))
        ;
    aptus_rel_link_rtt(&S.s[0].e, rl, &srtt, &rto);
    uint64_t retx2 = aptus_rel_stats(&S.s[0].e)->retx_timeout;
    printf("rtt: one-way delay 5 ms: srtt %.3f ms, rto %.3f ms; spurious retransmissions while adapting %llu, "
           "after %llu\n",
           srtt / 1e6, rto / 1e6, (unsigned long long)(retx1 - retx0), (unsigned long long)(retx2 - retx1));
    CHECK(srtt >= 10 * MS - 1 * US && srtt <= 10 * MS + 25 * US);
    CHECK(rto >= srtt && rto < 12 * MS);
    CHECK(retx2 == retx1);
    /* the spurious retransmissions arrived as duplicates: no loss seen */
    CHECK(aptus_rel_stats(&S.s[0].e)->recovered + aptus_rel_stats(&S.s[1].e)->recovered == 0 && S.recovered == 0);
    CHECK(S.bad_order == 0);
    sim_teardown();
}

/* ---- tail-loss probe ---------------------------------------------------------------------- */

/* A lost last datagram -- nothing sent after it to reveal the loss by selective acks -- arrives
 * after the tail-loss probe (two round trips and the ack delay, at least tlp_min), or, without
 * probes, after the timeout (rto_min 2 ms here). Returns how long it took to arrive. */
static uint64_t tail_loss_delay(uint64_t tlp_min, uint64_t *probes)
{
    struct sim_params p = { .name = "tail", .delay = 20 * US, .count = 6, .max_payload = 200, .seed = 41 };
    sim_setup(&p);
    for (int i = 0; i < 2; i++)
        S.s[i].e.cfg.tlp_min_ns = tlp_min;
    struct linkst *a = &S.s[0].links[0], *b = &S.s[1].links[0];
    b->next_send = S.p.count;           /* side 1 sends nothing (no answers from its handler): acks only */
    for (uint32_t k = 1; k <= 5; k++) { /* one at a time, each delivered and acked: RTT samples */
        CHECK(send_next(0, a) == APTUS_OK);
        uint64_t until = S.now + 1 * MS;
        while (S.now < until && sim_step(0))
            ;
        CHECK(b->next_recv == k);
    }
    S.p.loss = 1.0; /* the next one is lost on its first transmission */
    CHECK(send_next(0, a) == APTUS_OK);
    S.p.loss = 0;
    uint64_t t0 = S.now;
    while (b->next_recv < 6 && S.now < t0 + 100 * MS && sim_step(0))
        ;
    CHECK(b->next_recv == 6);
    CHECK(S.bad_order == 0);
    CHECK(aptus_rel_stats(&S.s[1].e)->recovered == 1); /* the lost one, seen by its receiver */
    *probes = aptus_rel_stats(&S.s[0].e)->probes;
    uint64_t d = S.now - t0;
    sim_teardown();
    return d;
}

static void test_tail_probe(void)
{
    uint64_t probes_on, probes_off;
    uint64_t on = tail_loss_delay(100 * US, &probes_on), off = tail_loss_delay(0, &probes_off);
    printf("tail: a lost last datagram arrives after %.3f ms with probes (%llu sent), %.3f ms without\n", on / 1e6,
           (unsigned long long)probes_on, off / 1e6);
    /* srtt ~ 40 us + the 50 us ack delay: the probe goes ~130-200 us after; the timeout at 2 ms */
    CHECK(probes_on == 1 && probes_off == 0);
    CHECK(on < 500 * US);
    CHECK(off >= 2 * MS);
}

/* ---- sizes and idle memory --------------------------------------------------------------- */

static void test_sizes(void)
{
    printf("sizeof(struct aptus_rel_link) = %zu (bound 64), sizeof(struct aptus_rel) = %zu, header %zu\n",
           sizeof(struct aptus_rel_link), sizeof(struct aptus_rel), aptus_rel_header_size(NULL));
    if (sizeof(struct aptus_rel_link) > 64) {
        fprintf(stderr, "FAIL %s:%d: struct aptus_rel_link is %zu bytes: a link must fit in 64\n", __FILE__, __LINE__,
                sizeof(struct aptus_rel_link));
        failures++;
    }
    CHECK(aptus_rel_header_size(NULL) == 24);
    struct aptus_rel e;
    struct aptus_rel_cfg c;
    aptus_rel_cfg_default(&c);
    CHECK(aptus_rel_init(&e, &sim_ops, &c) == APTUS_OK);
    printf("defaults: ring per active link %zu bytes, payload buffer %zu bytes\n", e.fl_size, e.buf_size);
    /* 100000 links with no traffic hold nothing but their records. */
    enum { NL = 100000 };
    struct aptus_rel_link *links = calloc(NL, sizeof *links);
    for (int i = 0; i < NL; i++)
        aptus_rel_link_init(&e, &links[i], NULL);
    size_t held, pooled;
    aptus_rel_mem(&e, &held, &pooled);
    CHECK(held == 0 && pooled == 0);
    for (int i = 0; i < NL; i++)
        aptus_rel_link_fini(&e, &links[i]);
    free(links);
    aptus_rel_fini(&e);
    /* Bad configurations are refused. */
    struct aptus_rel_cfg bad = c;
    bad.window_pkts = 0;
    CHECK(aptus_rel_init(&e, &sim_ops, &bad) == APTUS_ERR);
    bad = c;
    bad.max_payload = 70000;
    CHECK(aptus_rel_init(&e, &sim_ops, &bad) == APTUS_ERR);
    bad = c;
    bad.rto_min_ns = bad.rto_max_ns + 1;
    CHECK(aptus_rel_init(&e, &sim_ops, &bad) == APTUS_ERR);
}

/* ---- malformed input --------------------------------------------------------------------- */

static void test_malformed(void)
{
    struct sim_params p = { .name = "malformed", .delay = 1 * MS, .count = 10, .max_payload = 100, .seed = 41 };
    sim_setup(&p);
    struct aptus_rel *e = &S.s[1].e;
    struct aptus_rel_link *rl = &S.s[1].links[0].rl;
    uint8_t junk[64] = { 0 };
    aptus_rel_input(e, rl, junk, 10, 0); /* too short */
    junk[0] = 7;
    aptus_rel_input(e, rl, junk, 24, 0); /* not ours */
    junk[0] = APTUS_REL_DATA;
    junk[2] = 50; /* claims 50 bytes, has 10 */
    aptus_rel_input(e, rl, junk, 34, 0);
    CHECK(aptus_rel_stats(e)->malformed == 3);
    CHECK(aptus_rel_stats(e)->delivered == 0);
    sim_teardown();
}

/* A retransmission counts as a loss only when it is new here: not a copy of one held out of
 * order, nor of one delivered. Side 1 is fed side 0's payloads 0 and 1 by hand. */
static void feed(uint32_t k, uint8_t flags)
{
    uint8_t d[APTUS_REL_HDR + 256];
    size_t len = payload_len(0, 0, k);
    struct aptus_rel_hdr h = { APTUS_REL_DATA, flags, (uint16_t)len, k, 0, 0, 0 };
    memcpy(d, &h, sizeof h);
    payload_fill(0, 0, k, d + APTUS_REL_HDR, len);
    aptus_rel_input(&S.s[1].e, &S.s[1].links[0].rl, d, APTUS_REL_HDR + len, S.now);
}

static void test_recovered(void)
{
    struct sim_params p = { .name = "recovered", .delay = 1 * MS, .count = 10, .max_payload = 200, .seed = 43 };
    sim_setup(&p);
    feed(1, 0);          /* ahead of a hole: held */
    feed(1, REL_F_RETX); /* a copy of the one held */
    CHECK(S.recovered == 0);
    feed(0, REL_F_RETX); /* the hole, filled by a retransmission: a loss */
    CHECK(S.recovered == 1);
    feed(0, REL_F_RETX); /* delivered already */
    feed(1, REL_F_RETX);
    CHECK(S.recovered == 1 && aptus_rel_stats(&S.s[1].e)->recovered == 1);
    CHECK(S.s[1].links[0].next_recv == 2 && S.bad_order == 0);
    printf("recovered: a retransmission counted only when new (held or delivered copies are not)\n");
    sim_teardown();
}

/* ---- speed (printed, not asserted) ------------------------------------------------------- */

static struct {
    struct aptus_rel e[2];
    struct aptus_rel_link l[2];
    uint8_t box[2][2048];
    size_t boxlen[2];
    uint64_t got;
} B;

static int bench_xmit(struct aptus_rel_link *rl, const struct iovec *iov, int n)
{
    int to = rl == &B.l[0];
    size_t len = 0;
    for (int i = 0; i < n; i++) {
        memcpy(B.box[to] + len, iov[i].iov_base, iov[i].iov_len);
        len += iov[i].iov_len;
    }
    B.boxlen[to] = len;
    return APTUS_OK;
}

static void bench_deliver(struct aptus_rel_link *rl, const void *data, size_t len)
{
    (void)rl;
    (void)data;
    B.got += len;
}

static void bench_dead(struct aptus_rel_link *rl)
{
    (void)rl;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void bench(int crc)
{
    static const struct aptus_rel_ops ops = { bench_xmit, bench_deliver, bench_dead, NULL };
    struct aptus_rel_cfg c;
    aptus_rel_cfg_default(&c);
    c.crc = crc;
    c.max_payload = 1024;
    for (int i = 0; i < 2; i++) {
        aptus_rel_init(&B.e[i], &ops, &c);
        aptus_rel_link_init(&B.e[i], &B.l[i], NULL);
    }
    uint8_t msg[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
    struct iovec iov = { msg, sizeof msg };
    const int iters = 2000000;
    /* Ping-pong: each side sends one payload, the other's arrival acknowledges it. */
    double t0 = now_s();
    for (int i = 0; i < iters; i++) {
        int a = i & 1;
        aptus_rel_send(&B.e[a], &B.l[a], &iov, 1, (uint64_t)i);
        aptus_rel_input(&B.e[1 - a], &B.l[1 - a], B.box[1 - a], B.boxlen[1 - a], (uint64_t)i);
    }
    double t1 = now_s();
    /* Streaming: side 0 sends, side 1 receives; its acks (every window/4) come back. */
    uint64_t acks = B.e[1].st.acks_sent;
    double t2 = now_s();
    for (int i = 0; i < iters; i++) {
        B.boxlen[0] = 0;
        aptus_rel_send(&B.e[0], &B.l[0], &iov, 1, (uint64_t)i);
        aptus_rel_input(&B.e[1], &B.l[1], B.box[1], B.boxlen[1], (uint64_t)i);
        if (B.boxlen[0]) {
            aptus_rel_input(&B.e[0], &B.l[0], B.box[0], B.boxlen[0], (uint64_t)i);
        }
    }
    double t3 = now_s();
    printf("bench (crc %d, 8-byte payloads, this machine): ping-pong %.1f ns per send + arrival; streaming %.1f ns "
           "per send + arrival (%llu acks)\n",
           crc, (t1 - t0) * 1e9 / iters, (t3 - t2) * 1e9 / iters, (unsigned long long)(B.e[1].st.acks_sent - acks));
    for (int i = 0; i < 2; i++) {
        aptus_rel_link_fini(&B.e[i], &B.l[i]);
        aptus_rel_fini(&B.e[i]);
    }
}

int main(int argc, char **argv)
{
    int do_bench = argc > 1 && strcmp(argv[1], "--bench") == 0;
    test_sizes();
    test_malformed();
    test_recovered();
    const struct sim_params scenarios[] = {
        { .name = "no_loss", .delay = 20 * US, .jitter = 0, .count = 3000, .max_payload = 1400, .seed = 1 },
        { .name = "loss_5",
          .loss = 0.05,
          .delay = 20 * US,
          .jitter = 5 * US,
          .count = 3000,
          .max_payload = 1400,
          .seed = 2 },
        { .name = "reorder_25_dup_1_delay",
          .reorder = 0.25,
          .dup = 0.01,
          .delay = 200 * US,
          .jitter = 50 * US,
          .reorder_extra = 400 * US,
          .count = 3000,
          .max_payload = 1400,
          .seed = 3 },
        { .name = "loss_30_heavy",
          .loss = 0.30,
          .dup = 0.02,
          .reorder = 0.1,
          .delay = 50 * US,
          .jitter = 20 * US,
          .reorder_extra = 100 * US,
          .count = 1500,
          .max_payload = 1400,
          .seed = 4 },
        { .name = "corrupt_crc",
          .corrupt = 0.05,
          .loss = 0.01,
          .crc = 1,
          .delay = 30 * US,
          .jitter = 10 * US,
          .count = 2000,
          .max_payload = 1400,
          .seed = 5 },
        { .name = "noroom_20",
          .noroom = 0.2,
          .loss = 0.02,
          .delay = 30 * US,
          .jitter = 10 * US,
          .count = 2000,
          .max_payload = 1400,
          .seed = 6 },
        { .name = "wrap",
          .loss = 0.05,
          .reorder = 0.2,
          .dup = 0.01,
          .delay = 30 * US,
          .jitter = 10 * US,
          .reorder_extra = 60 * US,
          .count = 3000,
          .max_payload = 300,
          .initial_seq = UINT32_MAX - 1000,
          .seed = 7 },
        { .name = "many_links",
          .loss = 0.05,
          .reorder = 0.1,
          .delay = 50 * US,
          .jitter = 20 * US,
          .reorder_extra = 100 * US,
          .count = 40,
          .links = 300,
          .max_payload = 1000,
          .seed = 8 },
        { .name = "window_1", .loss = 0.1, .delay = 20 * US, .count = 300, .window = 1, .max_payload = 64, .seed = 9 },
    };
    for (size_t i = 0; i < sizeof scenarios / sizeof scenarios[0]; i++)
        run_scenario(&scenarios[i]);
    test_window();
    test_dead_peer();
    test_rtt();
    test_tail_probe();
    if (do_bench) {
        bench(0);
        bench(1);
    }
    if (failures) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    printf("reliab: all checks passed\n");
    return 0;
}
