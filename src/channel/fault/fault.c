/* Fault injection (see fault.h): a channel that refuses room, delays frames and reorders them,
 * made from any real channel by replacing its frame sends in the table. The message layer must
 * stay correct over it: matching frames carry per-peer sequence numbers, DATA frames their
 * offsets, refused frames wait in the per-peer send queue.
 *
 * A delayed frame is copied (a packed one is packed now: the cursor advances as if the frame had
 * been sent) into the held list and reported sent. Held frames go out through the real channel
 * later, picked at random: from the poller (enabled while any are held) and from later sends
 * through a wrapper. One whose real send finds no room stays held. While frames are held the
 * progress engine is kept awake: no peer would wake a sleeping rank for them.
 *
 * Frames to oneself (the self channel) are dispatched inside the real send: a held one is then
 * dispatched from the poller or from a later send, where handlers may send again; a send made by
 * such a handler may be refused or held but never releases held frames itself (no re-entry). */
#include "channel/fault/fault.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "channel/channel.h"
#include "channel/stats_json.h"
#include "core/datatype.h"
#include "runtime/config.h"
#include "runtime/json.h"
#include "runtime/progress.h"
#include "runtime/runtime.h"

/* At most this many frames held at once (beyond it, frames go out at once). */
#define FAULT_HOLD_MAX 64

struct held {
    struct aptus_ep *ep;
    uint64_t stamp; /* frames handed to the real channel for this peer when this one was held */
    size_t hdrlen, len;
    _Alignas(16) char data[]; /* header, then payload */
};

/* The real operations of a wrapped channel. */
struct real_ops {
    int (*send_frame)(struct aptus_ep *ep, const void *hdr, size_t hdrlen, const void *payload, size_t len);
    int (*send_frame_packed)(struct aptus_ep *ep, const void *hdr, size_t hdrlen, struct aptus_dt_cursor *cur,
                             size_t len);
    int (*send_zcopy)(struct aptus_ep *ep, const void *hdr, size_t hdrlen, const struct iovec *iov, int n,
                      struct aptus_completion *comp);
};

static struct {
    int parsed, on;
    double noroom, delay;
    uint64_t rng;
    int poller;
    int awake;                             /* holding the progress engine awake */
    int releasing;                         /* sending held frames (no re-entry) */
    int draining;                          /* finalize: no more faults */
    struct held *held[FAULT_HOLD_MAX + 1]; /* + 1: a frame put back after a nested send held more */
    int nheld;
    uint64_t *sent; /* per world rank: frames handed to the real channel */
    uint64_t refused, delayed, overtaken;
    struct real_ops real[APTUS_CH_COUNT];
} flt;

/* xorshift64*: a small generator, seeded per rank so that ranks differ. */
static uint64_t rnd(void)
{
    flt.rng ^= flt.rng >> 12;
    flt.rng ^= flt.rng << 25;
    flt.rng ^= flt.rng >> 27;
    return flt.rng * 0x2545F4914F6CDD1DULL;
}

static int chance(double p)
{
    return p > 0 && (double)(rnd() >> 11) * 0x1.0p-53 < p;
}

/* ---- the setting ---- */

static int parse_prob(const char *key, const char *val, double *out, double max, int max_open, char *err, size_t errlen)
{
    char *end;
    double v = strtod(val, &end);
    if (end == val || *end || !(v >= 0) || v > max || (max_open && v >= max)) {
        snprintf(err, errlen,
                 "APTUS_CHANNEL_FAULTS: %s='%s' is not a probability in [0, %g%s (e.g. noroom=0.2,delay=0.3,seed=7)",
                 key, val, max, max_open ? ")" : "]");
        return -1;
    }
    *out = v;
    return 0;
}

/* Parses the setting into noroom, delay and the seed: 0, or -1 with a message in err. */
static int parse(const char *spec, double *noroom, double *delay, uint64_t *seed, char *err, size_t errlen)
{
    char buf[256];
    *noroom = *delay = 0;
    *seed = 1;
    if (strlen(spec) >= sizeof buf) {
        snprintf(err, errlen, "APTUS_CHANNEL_FAULTS: setting too long (%zu characters)", strlen(spec));
        return -1;
    }
    strcpy(buf, spec);
    for (char *save = NULL, *item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(item, '=');
        if (!eq) {
            snprintf(err, errlen, "APTUS_CHANNEL_FAULTS: '%s' is not KEY=VALUE (keys: noroom, delay, seed)", item);
            return -1;
        }
        *eq = 0;
        const char *val = eq + 1;
        if (!strcmp(item, "noroom")) {
            /* Refusing every send would never let a frame through. */
            if (parse_prob(item, val, noroom, 1, 1, err, errlen) != 0)
                return -1;
        } else if (!strcmp(item, "delay")) {
            if (parse_prob(item, val, delay, 1, 0, err, errlen) != 0)
                return -1;
        } else if (!strcmp(item, "seed")) {
            char *end;
            unsigned long long s = strtoull(val, &end, 10);
            if (end == val || *end) {
                snprintf(err, errlen, "APTUS_CHANNEL_FAULTS: seed='%s' is not a number", val);
                return -1;
            }
            *seed = s;
        } else {
            snprintf(err, errlen, "APTUS_CHANNEL_FAULTS: unknown key '%s' (keys: noroom, delay, seed)", item);
            return -1;
        }
    }
    return 0;
}

int aptus_fault_check(char *err, size_t errlen)
{
    const char *spec = aptus_config.channel_faults;
    double noroom, delay;
    uint64_t seed;
    return spec && *spec ? parse(spec, &noroom, &delay, &seed, err, errlen) : 0;
}

/* Applies the setting: the probabilities, and a generator seeded from the seed and the rank. */
static int apply(const char *spec)
{
    char err[320];
    uint64_t seed;
    if (parse(spec, &flt.noroom, &flt.delay, &seed, err, sizeof err) != 0) {
        fprintf(stderr, "Aptus MPI: %s\n", err);
        return -1;
    }
    /* splitmix64 of seed and rank: never zero in practice, and distinct per rank. */
    uint64_t z = seed * 0x9E3779B97F4A7C15ULL + (uint64_t)aptus_rt.rank + 1;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    flt.rng = (z ^ (z >> 31)) | 1;
    return 0;
}

/* ---- held frames ---- */

static void set_holding(void)
{
    int want = flt.nheld > 0;
    if (want == flt.awake)
        return;
    flt.awake = want;
    aptus_poller_enable(flt.poller, want);
    aptus_progress_hold_awake(want ? 1 : -1);
}

/* Copies the frame (payload: pieces, or len bytes packed from cur) into the held list. */
static int hold(struct aptus_ep *ep, const void *hdr, size_t hdrlen, const struct iovec *iov, int n,
                struct aptus_dt_cursor *cur, size_t len)
{
    struct held *h = malloc(sizeof *h + hdrlen + len);
    if (!h)
        return -1;
    h->ep = ep;
    h->stamp = flt.sent[ep->peer->world_rank];
    h->hdrlen = hdrlen;
    h->len = len;
    memcpy(h->data, hdr, hdrlen);
    if (cur) {
        aptus_dt_pack_some(cur, h->data + hdrlen, len);
    } else {
        size_t off = hdrlen;
        for (int i = 0; i < n; i++) {
            memcpy(h->data + off, iov[i].iov_base, iov[i].iov_len);
            off += iov[i].iov_len;
        }
    }
    flt.held[flt.nheld++] = h;
    flt.delayed++;
    set_holding();
    return 0;
}

/* Sends held frame i through the real channel; returns its status (NORES: it stays held). */
static int release(int i)
{
    struct held *h = flt.held[i];
    flt.held[i] = flt.held[--flt.nheld]; /* out of the list while the real send runs */
    struct aptus_ep *ep = h->ep;
    int rc = flt.real[ep->chan].send_frame(ep, h->data, h->hdrlen, h->data + h->hdrlen, h->len);
    if (rc == APTUS_NORES) {
        flt.held[flt.nheld++] = h;
        return rc;
    }
    if (rc == APTUS_OK) {
        uint64_t *sent = &flt.sent[ep->peer->world_rank];
        if (*sent != h->stamp)
            flt.overtaken++;
        ++*sent;
    }
    /* APTUS_ERR: the channel has said why (and failed the peer); the frame is dropped. */
    free(h);
    set_holding();
    return rc;
}

/* Sends held frames, each with probability 1/2 (all of them when draining). */
static int release_some(int all)
{
    if (flt.releasing)
        return 0;
    flt.releasing = 1;
    int events = 0;
    for (int k = 0, n = flt.nheld; k < n && flt.nheld > 0; k++)
        if (all || k == 0 || chance(0.5))
            events += release((int)(rnd() % (uint64_t)flt.nheld)) == APTUS_OK;
    flt.releasing = 0;
    return events;
}

static int fault_poll(void)
{
    return release_some(flt.draining);
}

/* ---- the wrappers ---- */

enum { SEND, REFUSE, DELAY };

/* What to do with a new frame; may first send one held frame (it then overtakes those still
 * held, and the new one overtakes them too). */
static int decide(void)
{
    if (flt.draining)
        return SEND;
    if (chance(flt.noroom)) {
        flt.refused++;
        return REFUSE;
    }
    if (flt.nheld && !flt.releasing && chance(0.5)) {
        flt.releasing = 1;
        release((int)(rnd() % (uint64_t)flt.nheld));
        flt.releasing = 0;
    }
    return chance(flt.delay) && flt.nheld < FAULT_HOLD_MAX ? DELAY : SEND;
}

static int sent(struct aptus_ep *ep, int rc)
{
    if (rc == APTUS_OK || rc == APTUS_INPROGRESS)
        flt.sent[ep->peer->world_rank]++;
    return rc;
}

static int fault_send_frame(struct aptus_ep *ep, const void *hdr, size_t hdrlen, const void *payload, size_t len)
{
    switch (decide()) {
    case REFUSE: return APTUS_NORES;
    case DELAY: {
        struct iovec v = { (void *)payload, len };
        if (hold(ep, hdr, hdrlen, &v, len ? 1 : 0, NULL, len) == 0)
            return APTUS_OK;
        break;
    }
    }
    return sent(ep, flt.real[ep->chan].send_frame(ep, hdr, hdrlen, payload, len));
}

static int fault_send_frame_packed(struct aptus_ep *ep, const void *hdr, size_t hdrlen, struct aptus_dt_cursor *cur,
                                   size_t len)
{
    switch (decide()) {
    case REFUSE: return APTUS_NORES;
    case DELAY:
        if (hold(ep, hdr, hdrlen, NULL, 0, cur, len) == 0)
            return APTUS_OK;
        break;
    }
    return sent(ep, flt.real[ep->chan].send_frame_packed(ep, hdr, hdrlen, cur, len));
}

static int fault_send_zcopy(struct aptus_ep *ep, const void *hdr, size_t hdrlen, const struct iovec *iov, int n,
                            struct aptus_completion *comp)
{
    switch (decide()) {
    case REFUSE: return APTUS_NORES;
    case DELAY: {
        size_t len = 0;
        for (int i = 0; i < n; i++)
            len += iov[i].iov_len;
        if (hold(ep, hdr, hdrlen, iov, n, NULL, len) == 0)
            return APTUS_OK; /* copied: the caller's buffers are free at once */
        break;
    }
    }
    return sent(ep, flt.real[ep->chan].send_zcopy(ep, hdr, hdrlen, iov, n, comp));
}

/* ---- set-up, drain, statistics ---- */

int aptus_fault_wrap(struct aptus_channel *ch)
{
    const char *spec = aptus_config.channel_faults;
    if (!spec || !*spec)
        return 0;
    if (!flt.parsed) {
        if (apply(spec) != 0)
            return -1;
        flt.parsed = 1;
        flt.sent = calloc((size_t)aptus_rt.procs_cap, sizeof *flt.sent);
        flt.poller = aptus_poller_add("faults", fault_poll, 0);
        if (!flt.sent || flt.poller < 0) {
            fprintf(stderr, "Aptus MPI: APTUS_CHANNEL_FAULTS: cannot set up the fault injection\n");
            return -1;
        }
        flt.on = 1;
    }
    if (!ch->send_frame || !ch->send_frame_packed)
        return 0;
    struct real_ops *r = &flt.real[ch->id];
    r->send_frame = ch->send_frame;
    r->send_frame_packed = ch->send_frame_packed;
    r->send_zcopy = ch->send_zcopy;
    ch->send_frame = fault_send_frame;
    ch->send_frame_packed = fault_send_frame_packed;
    if (ch->send_zcopy)
        ch->send_zcopy = fault_send_zcopy;
    if (flt.delay > 0)
        ch->caps.flags &= ~(uint32_t)APTUS_CAP_ORDERED;
    return 0;
}

void aptus_fault_drain(void)
{
    if (!flt.on)
        return;
    flt.draining = 1;
    unsigned idle = 0;
    while (flt.nheld > 0)
        aptus_wait_step(&idle); /* the poller sends them; progress makes room */
}

void aptus_fault_stats_print(void)
{
    if (!flt.on)
        return;
    int all = (flt.noroom == 0 || flt.refused > 0) && (flt.delay == 0 || (flt.delayed > 0 && flt.overtaken > 0));
    printf("[aptus stats] rank %d: faults: refused %llu, delayed %llu, overtaken %llu (%s)\n", aptus_rt.rank,
           (unsigned long long)flt.refused, (unsigned long long)flt.delayed, (unsigned long long)flt.overtaken,
           all ? "injected" : "not all injected");
}

/* The statistics document (channel/stats_json.h): what aptus_fault_stats_print prints. */
void aptus_fault_stats_json(struct aptus_json *j)
{
    if (!flt.on)
        return;
    aptus_json_object(j, "faults");
    aptus_json_u64(j, "refused", flt.refused);
    aptus_json_u64(j, "delayed", flt.delayed);
    aptus_json_u64(j, "overtaken", flt.overtaken);
    aptus_json_bool(j, "all_injected",
                    (flt.noroom == 0 || flt.refused > 0) && (flt.delay == 0 || (flt.delayed > 0 && flt.overtaken > 0)));
    aptus_json_close(j);
}
