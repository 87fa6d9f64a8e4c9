/* Channel conformance test: one test body run against every registered channel, in the style
 * of UCX's test/gtest/uct (one body instantiated per transport).
 *
 * An MPI program linked with the library's internals: MPI_Init sets up the runtime and the
 * channels; then, for every channel in aptus_channels[] and every rank it reaches among
 * {this rank, the partner rank} (1 or 2 ranks), the same body runs:
 *
 *   caps      the table agrees with the capabilities (put/get/zcopy ops present when
 *             advertised, frame_max room for the test header), endpoints open on demand and
 *             are found again;
 *   frames    frames of every size 0, 1, 7, 8, 9, 15, 16, 17 and 2^k-1, 2^k, 2^k+1 up to the
 *             largest payload (caps.frame_max minus the test header, which is sent both 40 and
 *             45 bytes long), both directions at once; the receiving handler checks the length
 *             (a channel may pad: the frame may be longer than sent, never shorter, never over
 *             frame_max), the content (pattern and checksum) and the order (caps ORDERED: the
 *             sequence numbers arrive consecutively; otherwise each exactly once);
 *   packed    send_frame_packed from a datatype cursor over a committed MPI_Type_vector, in
 *             pieces of 4999 bytes (not a multiple of the element): the cursor advances by
 *             exactly the frame's bytes when sent and not at all on APTUS_NORES;
 *   noroom    back-pressure. A channel with a poller (progress != NULL) must refuse room
 *             (APTUS_NORES) once its peer stops polling: the receiver waits in a PMI barrier,
 *             which does not run the progress engine, while the sender sends frames of one
 *             size until APTUS_NORES (for smp: within block/frame + 1 frames, the block
 *             being frame_max + 16 bytes; for other channels within 65536 frames), checks
 *             that the refusal lasts, and enters the barrier; the receiver then drains, every
 *             frame arrives exactly once and in order, and a last frame sent after the
 *             refusal arrives too. Payloads of the largest size, a third of it, 1000 bytes and
 *             0 bytes, each direction. A channel without a poller (self) delivers
 *             synchronously: it must accept 256 largest frames in a row, each delivered before
 *             the send returns;
 *   put/get   (caps PUT/GET): the partner exposes two buffers (addresses, and keys when the
 *             channel needs registration, exchanged with MPI_Sendrecv); a get reads ~1 MiB of
 *             the partner's pattern into a list of local pieces with guard bytes between them,
 *             and a second get into 3000 pieces of 5 bytes (more than IOV_MAX); a put writes
 *             pieces into the partner's second buffer, flush (one endpoint and all) completes,
 *             the partner is told by MPI_Sendrecv and checks the content and the guards.
 *             APTUS_INPROGRESS returns are counted on a struct aptus_completion (one guard
 *             count held while operations start). smp's Cross Memory Attach may be refused
 *             (EPERM under ptrace policies): if its first get returns APTUS_ERR, put/get is
 *             reported as skipped ("CMA not permitted") on both ranks;
 *   zcopy     (send_zcopy != NULL): frames from a list of user pieces; APTUS_OK means the
 *             buffer may be reused at once (it is overwritten right away and the receiver
 *             must still see the original), APTUS_INPROGRESS that it is released by the
 *             completion;
 *   (between the parts the endpoint is flushed, closed with aptus_peer_ep_close and opened
 *   again: the next part runs on the reopened one -- except on a connected channel (caps
 *   CONNECTED: rc-sr, rc-rdma), whose last endpoint closed ends its connection; under
 *   APTUS_CHANNEL_FAULTS, which refuses room and holds and reorders frames, every part but
 *   no-room runs, unordered)
 *   --connect (2 ranks, a chain with RC channels and APTUS_RC_THRESHOLD=1): first exchange
 *             messages until rc-sr reaches the partner on both ranks, then test the connected
 *             channels only (rc-sr, rc-rdma); fails when no connection comes up in 20 s.
 *             (The UD channels have no flush operation yet: not tested here.)
 *   failure   (--fail, 2 ranks, APTUS_PEER_FAILURE_ERRORS=1, last of all): each rank posts an
 *             MPI_Irecv from the other (a tag never sent) and calls aptus_peer_fail on its
 *             record of the other; the receive must complete with MPI_ERR_PROC_ABORTED, a
 *             new send to the failed peer must fail with it too, and so must a receive posted
 *             after the failure; the peer's endpoints are closed; the job must finalize
 *             (MPI_Finalize may return MPI_ERR_PROC_ABORTED).
 *             With --fail-abort (default policy) the job must end with the channel's message.
 *
 * Every check prints "FAIL file:line: ..." and ends the job non-zero. At the end, one line per
 * channel and part. */
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpi.h"

#include "channel/channel.h"
#include "channel/rules.h"
#include "core/datatype.h"
#include "core/objects.h"
#include "runtime/config.h"
#include "runtime/pmi.h"
#include "runtime/progress.h"
#include "runtime/runtime.h"

#include "mtest.h"

static int me = -1, nprocs, partner;

/* FAIL(fmt, ...) and CHECK(cond, fmt, ...) of the MPI tests: print "FAIL file:line: [rank] ...",
 * then end the job. */
#define FAIL FAILF

#define TIMEOUT 60.0 /* seconds any one wait may take before the test calls it a hang */

/* ---- the test frame ---- */

enum { K_BYTES = 1, K_PACKED, K_FLOOD, K_FLOOD_END };

struct thdr {
    uint8_t type; /* APTUS_AM_TEST + channel id */
    uint8_t kind; /* K_* */
    uint8_t hlen; /* header bytes (this struct plus filler): the payload starts here */
    uint8_t pad0;
    uint32_t seq; /* per channel and sender -> receiver */
    uint32_t src; /* sender's world rank */
    uint32_t pad1;
    uint64_t len; /* payload bytes (the frame may be longer: padding) */
    uint64_t arg; /* K_BYTES: pattern seed; K_PACKED: packed offset; K_FLOOD_END: frames flooded */
    uint64_t sum; /* FNV-1a of the payload */
};
#define HDR_MAX (sizeof(struct thdr) + 8)

static uint8_t pat(uint64_t seed, size_t i)
{
    return (uint8_t)(seed * 37u + i + (i >> 8) * 13u + (i >> 16) * 101u);
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const uint8_t *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}
#define FNV0 0xcbf29ce484222325ull

/* The packed stream of the vector type of part "packed": element e of VEC_BLOCKS blocks of
 * VEC_BL ints, VEC_STRIDE ints apart; buffer int k holds packed_seed(src) + k. */
#define VEC_BLOCKS 1000
#define VEC_BL     3
#define VEC_STRIDE 5
#define VEC_COUNT  2
static size_t vec_extent_ints; /* from MPI_Type_get_extent */

static int packed_seed(uint32_t src)
{
    return 1000000 * (int)(src + 1) + 17;
}

static uint8_t packed_byte(uint32_t src, size_t o)
{
    size_t q = o / sizeof(int), e = q / (VEC_BLOCKS * VEC_BL), r = q % (VEC_BLOCKS * VEC_BL);
    size_t k = e * vec_extent_ints + (r / VEC_BL) * VEC_STRIDE + r % VEC_BL;
    int v = packed_seed(src) + (int)k;
    uint8_t b[sizeof v];
    memcpy(b, &v, sizeof v);
    return b[o % sizeof v];
}

/* ---- receive side: one state per channel and sender ---- */

#define SEQ_BITS 65536
struct rxstate {
    uint32_t next_seq;   /* ordered: the next expected */
    uint64_t frames;     /* frames received */
    uint64_t bytes;      /* payload bytes received */
    uint64_t flood_end;  /* K_FLOOD_END frames seen */
    uint64_t flood_told; /* the flood count it carried */
    uint8_t seen[SEQ_BITS / 8];
};
static struct rxstate rx[APTUS_CH_COUNT][2];
static uint32_t tx_seq[APTUS_CH_COUNT][2];

static struct rxstate *rx_of(int chan, int src)
{
    return &rx[chan][nprocs == 1 ? 0 : src];
}

static void on_frame(struct aptus_peer *from, const void *frame, size_t flen)
{
    struct thdr h;
    CHECK(flen >= sizeof h, "frame of %zu bytes is shorter than the test header", flen);
    memcpy(&h, frame, sizeof h);
    int chan = h.type - APTUS_AM_TEST;
    CHECK(chan >= 0 && chan < APTUS_CH_COUNT && aptus_channels[chan], "frame of type %u names no channel", h.type);
    const struct aptus_channel *ch = aptus_channels[chan];
    CHECK(from && (int)h.src == from->world_rank, "%s: frame from rank %d handed up as from rank %d", ch->name,
          (int)h.src, from ? from->world_rank : -1);
    CHECK(h.hlen >= sizeof h && h.hlen <= HDR_MAX, "%s: bad header length %u", ch->name, h.hlen);
    CHECK(flen >= h.hlen + h.len, "%s: frame of %zu bytes is shorter than header %u + payload %llu", ch->name, flen,
          h.hlen, (unsigned long long)h.len);
    CHECK(flen <= ch->caps.frame_max, "%s: frame of %zu bytes exceeds frame_max %zu", ch->name, flen,
          ch->caps.frame_max);
    struct rxstate *s = rx_of(chan, (int)h.src);
    if (ch->caps.flags & APTUS_CAP_ORDERED) {
        CHECK(h.seq == s->next_seq, "%s: frame %u from rank %u arrived when %u was next (ordered channel)", ch->name,
              h.seq, h.src, s->next_seq);
        s->next_seq++;
    }
    CHECK(h.seq < SEQ_BITS, "%s: more frames than the test tracks", ch->name);
    CHECK(!(s->seen[h.seq / 8] & (1u << (h.seq % 8))), "%s: frame %u from rank %u arrived twice", ch->name, h.seq,
          h.src);
    s->seen[h.seq / 8] |= (uint8_t)(1u << (h.seq % 8));
    const uint8_t *hb = frame, *pl = hb + h.hlen;
    for (size_t i = sizeof h; i < h.hlen; i++)
        CHECK(hb[i] == 0xA5, "%s: header filler byte %zu changed", ch->name, i);
    CHECK(fnv(FNV0, pl, h.len) == h.sum, "%s: frame %u (%llu bytes, kind %u): checksum mismatch", ch->name, h.seq,
          (unsigned long long)h.len, h.kind);
    switch (h.kind) {
    case K_BYTES:
    case K_FLOOD:
    case K_FLOOD_END: {
        uint64_t seed = h.kind == K_FLOOD_END ? h.arg & 0xffffffffu : h.arg;
        for (size_t i = 0; i < h.len; i++)
            if (pl[i] != pat(seed, i))
                FAIL("%s: frame %u (%llu bytes): payload byte %zu is %u, expected %u", ch->name, h.seq,
                     (unsigned long long)h.len, i, pl[i], pat(seed, i));
        break;
    }
    case K_PACKED:
        for (size_t i = 0; i < h.len; i++)
            if (pl[i] != packed_byte(h.src, h.arg + i))
                FAIL("%s: packed frame %u at offset %llu: byte %zu is %u, expected %u", ch->name, h.seq,
                     (unsigned long long)h.arg, i, pl[i], packed_byte(h.src, h.arg + i));
        break;
    default: FAIL("%s: frame of unknown kind %u", ch->name, h.kind);
    }
    if (h.kind == K_FLOOD_END) {
        s->flood_end++;
        s->flood_told = h.arg >> 32;
    }
    s->frames++;
    s->bytes += h.len;
}

/* ---- helpers ---- */

struct target {
    struct aptus_channel *ch;
    struct aptus_peer *p;
    struct aptus_ep *ep;
    int rank;     /* the world rank talked to */
    int loopback; /* rank == me */
    size_t pmax;  /* largest payload after a HDR_MAX header */
};

static void hdr_fill(uint8_t *buf, const struct target *t, uint8_t kind, size_t hlen, size_t len, uint64_t arg)
{
    struct thdr h = { .type = (uint8_t)(APTUS_AM_TEST + t->ch->id),
                      .kind = kind,
                      .hlen = (uint8_t)hlen,
                      .seq = tx_seq[t->ch->id][nprocs == 1 ? 0 : t->rank],
                      .src = (uint32_t)me,
                      .len = len,
                      .arg = arg };
    memcpy(buf, &h, sizeof h);
    memset(buf + sizeof h, 0xA5, hlen - sizeof h);
}

static void hdr_sum(uint8_t *buf, uint64_t sum)
{
    memcpy(buf + offsetof(struct thdr, sum), &sum, sizeof sum);
}

static void seq_sent(const struct target *t)
{
    tx_seq[t->ch->id][nprocs == 1 ? 0 : t->rank]++;
}

/* One try at sending `len` pattern bytes; returns the channel's status. */
static int send_try(const struct target *t, uint8_t kind, size_t hlen, const uint8_t *payload, size_t len, uint64_t arg)
{
    uint8_t hdr[HDR_MAX];
    hdr_fill(hdr, t, kind, hlen, len, arg);
    hdr_sum(hdr, fnv(FNV0, payload, len));
    int rc = t->ch->send_frame(t->ep, hdr, hlen, payload, len);
    CHECK(rc == APTUS_OK || rc == APTUS_NORES, "%s: send_frame of %zu+%zu bytes returned %d", t->ch->name, hlen, len,
          rc);
    if (rc == APTUS_OK)
        seq_sent(t);
    return rc;
}

/* Sends, running the progress engine while the channel has no room. */
static void send_retry(const struct target *t, uint8_t kind, size_t hlen, const uint8_t *payload, size_t len,
                       uint64_t arg)
{
    double t0 = MPI_Wtime();
    while (send_try(t, kind, hlen, payload, len, arg) == APTUS_NORES) {
        CHECK(MPI_Wtime() - t0 < TIMEOUT, "%s: no room for a frame of %zu bytes for %.0f s", t->ch->name, len, TIMEOUT);
        if (aptus_progress() == 0)
            sched_yield();
    }
}

/* Waits until `frames` frames from src arrived on the channel. */
static void wait_frames(const struct aptus_channel *ch, int src, uint64_t frames)
{
    struct rxstate *s = rx_of(ch->id, src);
    double t0 = MPI_Wtime();
    unsigned idle = 0;
    while (s->frames < frames) {
        CHECK(MPI_Wtime() - t0 < TIMEOUT, "%s: %llu of %llu frames from rank %d arrived in %.0f s", ch->name,
              (unsigned long long)s->frames, (unsigned long long)frames, src, TIMEOUT);
        aptus_wait_step(&idle);
    }
    CHECK(s->frames == frames, "%s: %llu frames from rank %d arrived, %llu sent", ch->name,
          (unsigned long long)s->frames, src, (unsigned long long)frames);
}

/* A barrier with the target (nothing when it is this rank). */
static void sync_target(const struct target *t)
{
    if (!t->loopback)
        MPI_Barrier(MPI_COMM_WORLD);
}

/* Exchanges a value with the target (the same value back when it is this rank). */
static uint64_t swap_u64(const struct target *t, uint64_t v)
{
    uint64_t got = v;
    if (!t->loopback)
        MPI_Sendrecv(&v, 1, MPI_UINT64_T, t->rank, 77, &got, 1, MPI_UINT64_T, t->rank, 77, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
    return got;
}

/* Completions: one guard count is held while operations start, so that an operation that
 * completes during a later start cannot run func early. */
struct tcomp {
    struct aptus_completion c;
    int done;  /* func ran */
    int calls; /* times func ran */
};

static void tcomp_func(struct aptus_completion *c)
{
    struct tcomp *t = (struct tcomp *)c;
    t->done = 1;
    t->calls++;
}

static void tcomp_start(struct tcomp *t)
{
    memset(t, 0, sizeof *t);
    t->c.func = tcomp_func;
    t->c.count = 1;
    t->c.status = APTUS_OK;
}

/* Accounts for an operation's return: APTUS_INPROGRESS adds a count. */
static void tcomp_rc(struct tcomp *t, int rc, const char *ch, const char *what)
{
    CHECK(rc == APTUS_OK || rc == APTUS_INPROGRESS, "%s: %s returned %d", ch, what, rc);
    CHECK(!t->done, "%s: completion ran while its guard count was held (%s)", ch, what);
    if (rc == APTUS_INPROGRESS)
        t->c.count++;
}

/* Drops the guard and waits for func; returns the completion's status. */
static int tcomp_wait(struct tcomp *t, const char *ch, const char *what)
{
    aptus_completion_done(&t->c, APTUS_OK);
    double t0 = MPI_Wtime();
    while (!t->done) {
        CHECK(MPI_Wtime() - t0 < TIMEOUT, "%s: %s did not complete in %.0f s (count %d)", ch, what, TIMEOUT,
              t->c.count);
        if (aptus_progress() == 0)
            sched_yield();
    }
    CHECK(t->calls == 1 && t->c.count == 0, "%s: %s: completion func ran %d times, count %d", ch, what, t->calls,
          t->c.count);
    return t->c.status;
}

/* ---- part: capabilities and endpoints ---- */

static void part_caps(struct target *t)
{
    const struct aptus_channel *ch = t->ch;
    const struct aptus_chan_caps *c = &ch->caps;
    CHECK(ch->send_frame && ch->send_frame_packed && ch->ep_open && ch->ep_close && ch->reaches && ch->flush,
          "%s: a required operation is missing", ch->name);
    CHECK(c->frame_max >= HDR_MAX + 64, "%s: frame_max %zu leaves no room for a payload", ch->name, c->frame_max);
    if (c->flags & APTUS_CAP_PUT)
        CHECK(ch->put && c->put_max > 0, "%s: PUT advertised without a put operation", ch->name);
    if (c->flags & APTUS_CAP_GET)
        CHECK(ch->get && c->get_max > 0, "%s: GET advertised without a get operation", ch->name);
    if (c->flags & (APTUS_CAP_PUT | APTUS_CAP_GET))
        CHECK(c->iov_max >= 1, "%s: put/get with iov_max %d", ch->name, c->iov_max);
    CHECK(!(c->flags & APTUS_CAP_ZCOPY_SEND) == !ch->send_zcopy, "%s: ZCOPY_SEND capability and send_zcopy disagree",
          ch->name);
    if (c->flags & APTUS_CAP_NEEDS_REG)
        CHECK(ch->mem_reg && ch->mem_dereg, "%s: NEEDS_REG without mem_reg/mem_dereg", ch->name);
    CHECK(!!ch->mem_reg == !!ch->mem_dereg, "%s: mem_reg and mem_dereg come together", ch->name);

    t->p = aptus_peer_get(t->rank);
    CHECK(t->p && t->p->world_rank == t->rank, "peer record of rank %d", t->rank);
    CHECK(!t->p->failed, "%s: peer %d is failed before the test", ch->name, t->rank);
    t->ep = aptus_peer_ep(t->p, ch->id);
    CHECK(t->ep, "%s: no endpoint to rank %d", ch->name, t->rank);
    CHECK(t->ep->ch == ch && t->ep->peer == t->p && t->ep->chan == ch->id && !t->ep->failed,
          "%s: endpoint fields wrong (ch %p peer %p chan %d failed %d)", ch->name, (void *)t->ep->ch,
          (void *)t->ep->peer, t->ep->chan, t->ep->failed);
    CHECK(aptus_peer_ep(t->p, ch->id) == t->ep, "%s: a second lookup gave another endpoint", ch->name);
    int n = 0;
    for (struct aptus_ep *e = t->p->ep; e; e = e->next) {
        CHECK(e->peer == t->p, "%s: endpoint of another peer in the list", ch->name);
        n++;
    }
    CHECK(n == t->p->nopen, "%s: %d endpoints listed, nopen %d", ch->name, n, t->p->nopen);
    t->pmax = c->frame_max - HDR_MAX;
}

/* ---- part: frames of every size ---- */

static int sizes_upto(size_t max, size_t *out, int cap)
{
    static const size_t small[] = { 0, 1, 7, 8, 9, 15, 16, 17 };
    int n = 0;
    for (size_t i = 0; i < sizeof small / sizeof small[0]; i++)
        if (small[i] <= max)
            out[n++] = small[i];
    for (size_t p = 32; p - 1 <= max && n + 3 <= cap; p *= 2)
        for (size_t s = p - 1; s <= p + 1 && s <= max; s++)
            out[n++] = s;
    if (out[n - 1] != max) {
        if (out[n - 1] != max - 1)
            out[n++] = max - 1;
        out[n++] = max;
    }
    return n;
}

static void part_frames(struct target *t, char *report, size_t rlen)
{
    const struct aptus_channel *ch = t->ch;
    size_t sizes[128];
    uint8_t *buf = malloc(ch->caps.frame_max);
    CHECK(buf, "out of memory");
    struct rxstate *s = rx_of(ch->id, t->rank);
    int total = 0;
    size_t biggest = 0;
    for (size_t hlen = sizeof(struct thdr); hlen <= HDR_MAX; hlen += 5) {
        size_t max = ch->caps.frame_max - hlen;
        int n = sizes_upto(max, sizes, 128);
        /* Read before the barrier: once the partner is past it, its frames may arrive. */
        uint64_t base = s->frames, bytes0 = s->bytes, want_bytes = 0;
        sync_target(t);
        for (int i = 0; i < n; i++) {
            uint64_t seed = (uint64_t)me * 1000u + (uint64_t)i + hlen;
            for (size_t k = 0; k < sizes[i]; k++)
                buf[k] = pat(seed, k);
            send_retry(t, K_BYTES, hlen, buf, sizes[i], seed);
            want_bytes += sizes[i];
            /* The buffer is ours again: scribble, so a channel that kept a pointer shows it. */
            memset(buf, 0x5A, sizes[i]);
        }
        wait_frames(ch, t->rank, base + (uint64_t)n);
        CHECK(s->bytes - bytes0 == want_bytes, "%s: %llu payload bytes arrived, %llu sent", ch->name,
              (unsigned long long)(s->bytes - bytes0), (unsigned long long)want_bytes);
        total += n;
        biggest = max;
    }
    sync_target(t);
    free(buf);
    snprintf(report, rlen, "frames 0..%zu ok (%d frames, headers of 40 and 45 bytes%s)", biggest, total,
             t->loopback ? "" : ", both directions");
}

/* ---- part: frames packed from a datatype cursor ---- */

static void part_packed(struct target *t, char *report, size_t rlen)
{
    const struct aptus_channel *ch = t->ch;
    MPI_Datatype vt;
    MPI_Aint lb, extent;
    CHECK(MPI_Type_vector(VEC_BLOCKS, VEC_BL, VEC_STRIDE, MPI_INT, &vt) == MPI_SUCCESS, "MPI_Type_vector");
    CHECK(MPI_Type_commit(&vt) == MPI_SUCCESS, "MPI_Type_commit");
    MPI_Type_get_extent(vt, &lb, &extent);
    vec_extent_ints = (size_t)extent / sizeof(int);
    const struct aptus_dtype *dt = aptus_dtype_get(vt);
    CHECK(dt && !dt->contig && dt->committed, "the vector type's object");
    size_t nints = vec_extent_ints * VEC_COUNT;
    int *ubuf = malloc(nints * sizeof(int));
    CHECK(ubuf, "out of memory");
    for (size_t k = 0; k < nints; k++)
        ubuf[k] = packed_seed((uint32_t)me) + (int)k;
    struct aptus_dt_cursor cur;
    aptus_dt_cursor_init(&cur, ubuf, VEC_COUNT, dt);
    size_t total = cur.total, chunk = t->pmax < 4999 ? t->pmax : 4999;
    CHECK(total == (size_t)VEC_COUNT * VEC_BLOCKS * VEC_BL * sizeof(int), "cursor total %zu", total);
    /* The checksum of each piece, from a packed copy. */
    uint8_t *packed = malloc(total);
    CHECK(packed, "out of memory");
    aptus_dt_pack(ubuf, VEC_COUNT, dt, packed);

    struct rxstate *s = rx_of(ch->id, t->rank);
    uint64_t base = s->frames, bytes0 = s->bytes;
    sync_target(t);
    int frames = 0, refused = 0;
    double t0 = MPI_Wtime();
    while (cur.pos < total) {
        size_t pos = cur.pos, n = total - pos < chunk ? total - pos : chunk;
        uint8_t hdr[HDR_MAX];
        hdr_fill(hdr, t, K_PACKED, sizeof(struct thdr), n, pos);
        hdr_sum(hdr, fnv(FNV0, packed + pos, n));
        int rc = ch->send_frame_packed(t->ep, hdr, sizeof(struct thdr), &cur, n);
        if (rc == APTUS_NORES) {
            CHECK(cur.pos == pos, "%s: send_frame_packed refused room but moved the cursor %zu -> %zu", ch->name, pos,
                  cur.pos);
            CHECK(MPI_Wtime() - t0 < TIMEOUT, "%s: no room for a packed frame for %.0f s", ch->name, TIMEOUT);
            refused++;
            if (aptus_progress() == 0)
                sched_yield();
            continue;
        }
        CHECK(rc == APTUS_OK, "%s: send_frame_packed returned %d", ch->name, rc);
        CHECK(cur.pos == pos + n, "%s: send_frame_packed of %zu bytes moved the cursor %zu -> %zu", ch->name, n, pos,
              cur.pos);
        seq_sent(t);
        frames++;
    }
    wait_frames(ch, t->rank, base + (uint64_t)frames);
    CHECK(s->bytes - bytes0 == total, "%s: %llu packed bytes arrived, %zu sent", ch->name,
          (unsigned long long)(s->bytes - bytes0), total);
    sync_target(t);
    free(packed);
    free(ubuf);
    MPI_Type_free(&vt);
    snprintf(report, rlen,
             "send_frame_packed ok (vector %dx%d of %d ints, %zu bytes in %d frames of <= %zu, %d refusals)",
             VEC_BLOCKS, VEC_BL, VEC_STRIDE, total, frames, chunk, refused);
}

/* ---- part: no room (back-pressure) ---- */

static int flood_counter;

/* One flood: `sender` sends frames of `len` payload bytes to the other rank until NORES. */
static void flood_once(struct target *t, int sender, size_t len, const uint8_t *buf, uint64_t seed, int *count_out)
{
    const struct aptus_channel *ch = t->ch;
    char name[48];
    int peers[1] = { t->rank };
    snprintf(name, sizeof name, "tc-flood-%d-%d", ch->id, flood_counter++);
    struct rxstate *s = rx_of(ch->id, t->rank);
    uint64_t base = s->frames, ends = s->flood_end;
    /* Both ranks out of the MPI barrier (which polls), and quiet. */
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(aptus_pmi_barrier(name, 1, peers, 1, NULL) == 0, "PMI barrier %s", name);
    snprintf(name, sizeof name, "tc-flood-%d-%d", ch->id, flood_counter++);
    if (me == sender) {
        /* smp: the block is frame_max + 16 bytes, a frame takes round8(len) + 8 of it. */
        uint64_t fb = ((sizeof(struct thdr) + len + 7) & ~(size_t)7) + 8;
        int bound = !strcmp(ch->name, "smp") ? (int)((ch->caps.frame_max + 16) / fb) + 1 : 65536;
        /* A connected channel over a byte stream (tcp) has the sockets' buffers in front of its
         * own: megabytes, so many more small frames fit before the refusal. */
        if ((ch->caps.flags & APTUS_CAP_CONNECTED) && (64u << 20) / (fb + 64) > (uint64_t)bound)
            bound = (int)((64u << 20) / (fb + 64));
        int k = 0;
        while (send_try(t, K_FLOOD, sizeof(struct thdr), buf, len, seed) == APTUS_OK) {
            k++;
            CHECK(k <= bound, "%s: %d frames of %zu bytes accepted while the receiver does not poll (at most %d fit)",
                  ch->name, k, len, bound);
        }
        /* The refusal lasts while the receiver does not poll. */
        for (int i = 0; i < 3; i++) {
            usleep(1000);
            CHECK(send_try(t, K_FLOOD, sizeof(struct thdr), buf, len, seed) == APTUS_NORES,
                  "%s: room came back without the receiver polling (after %d frames)", ch->name, k);
        }
        CHECK(aptus_pmi_barrier(name, 1, peers, 1, NULL) == 0, "PMI barrier %s", name);
        /* Sending works again once the receiver drains. */
        send_retry(t, K_FLOOD_END, sizeof(struct thdr), buf, len, seed | ((uint64_t)k << 32));
        *count_out = k;
    } else {
        /* No polling until the sender has seen NORES. */
        CHECK(aptus_pmi_barrier(name, 1, peers, 1, NULL) == 0, "PMI barrier %s", name);
        double t0 = MPI_Wtime();
        unsigned idle = 0;
        while (s->flood_end == ends) {
            CHECK(MPI_Wtime() - t0 < TIMEOUT, "%s: the frame after the flood did not arrive in %.0f s", ch->name,
                  TIMEOUT);
            aptus_wait_step(&idle);
        }
        CHECK(s->frames - base == s->flood_told + 1, "%s: %llu frames arrived after a flood of %llu + 1", ch->name,
              (unsigned long long)(s->frames - base), (unsigned long long)s->flood_told);
        *count_out = (int)s->flood_told;
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static void part_noroom(struct target *t, char *report, size_t rlen)
{
    const struct aptus_channel *ch = t->ch;
    size_t pmax = ch->caps.frame_max - sizeof(struct thdr);
    if (*aptus_config.channel_faults) {
        /* Injected refusals and held frames (APTUS_CHANNEL_FAULTS) are not the channel's own. */
        snprintf(report, rlen, "no-room n/a under APTUS_CHANNEL_FAULTS");
        return;
    }
    uint8_t *buf = malloc(pmax);
    CHECK(buf, "out of memory");
    if (!ch->progress && !(ch->caps.flags & APTUS_CAP_CONNECTED)) {
        /* No poller: delivery is synchronous, room is never short. (rc-rdma has no poller of
         * its own either, but its frames go over rc-sr's connection and progress.) */
        struct rxstate *s = rx_of(ch->id, t->rank);
        for (size_t k = 0; k < pmax; k++)
            buf[k] = pat(99, k);
        for (int i = 0; i < 256; i++) {
            uint64_t before = s->frames;
            int rc = send_try(t, K_FLOOD, sizeof(struct thdr), buf, pmax, 99);
            CHECK(rc == APTUS_OK, "%s: a channel without a poller refused room (frame %d): %d", ch->name, i, rc);
            CHECK(t->loopback ? s->frames == before + 1 : 1,
                  "%s: a channel without a poller did not deliver before the send returned", ch->name);
        }
        free(buf);
        snprintf(report, rlen, "no-room n/a: no poller, synchronous delivery (256 largest frames delivered at once)");
        return;
    }
    if (t->loopback) {
        /* One process is both ends: flood without polling, then drain. */
        struct rxstate *s = rx_of(ch->id, t->rank);
        uint64_t base = s->frames;
        int k = 0;
        for (size_t j = 0; j < pmax; j++)
            buf[j] = pat(5, j);
        while (send_try(t, K_FLOOD, sizeof(struct thdr), buf, pmax, 5) == APTUS_OK)
            CHECK(++k <= 65536, "%s: no refusal after 65536 frames", ch->name);
        send_retry(t, K_FLOOD, sizeof(struct thdr), buf, pmax, 5);
        wait_frames(ch, t->rank, base + (uint64_t)k + 1);
        free(buf);
        snprintf(report, rlen, "no-room ok (loopback: %d largest frames, then room after draining)", k);
        return;
    }
    /* The largest frame only fits an empty block at its top (after a wrap it needs the
     * receiver to consume the wrap), so a third of it and small frames fill the block. */
    size_t lens[4] = { pmax, pmax / 3, pmax > 1000 ? 1000 : pmax / 2, 0 }; /* (small blocks: below pmax) */
    char line[256];
    int off = snprintf(report, rlen, "no-room ok:");
    for (int dir = 0; dir < 2; dir++) {
        int sender = dir == 0 ? 0 : 1;
        for (int j = 0; j < 4; j++) {
            size_t len = lens[j];
            uint64_t seed = 200u + (uint64_t)j + (uint64_t)dir * 10u;
            for (size_t k = 0; k < len; k++)
                buf[k] = pat(seed, k);
            int count = 0;
            flood_once(t, sender, len, buf, seed, &count);
            snprintf(line, sizeof line, " %d->%d %zu B: NORES after %d;", sender, 1 - sender, len, count);
            if (off >= 0 && (size_t)off < rlen)
                off += snprintf(report + off, rlen - (size_t)off, "%s", line);
        }
    }
    free(buf);
}

/* ---- part: put and get ---- */

#define PG_SMALL_N   3000
#define PG_SMALL_LEN 5

/* Local pieces covering `len` bytes, with a 3-byte guard after each, laid out in `base`.
 * Returns the count; base needs len + 3 * count bytes. */
static int pieces_make(uint8_t *base, size_t len, struct iovec *iov, int max, size_t *span)
{
    static const size_t cycle[] = { 1, 7, 4096, 13, 65541, 8, 9, 4095, 100003, 3 };
    size_t off = 0, done = 0;
    int n = 0;
    while (done < len && n < max) {
        size_t l = cycle[n % (sizeof cycle / sizeof cycle[0])];
        if (l > len - done || n == max - 1)
            l = len - done;
        iov[n].iov_base = base + off;
        iov[n].iov_len = l;
        memset(base + off + l, 0xEE, 3);
        off += l + 3;
        done += l;
        n++;
    }
    *span = off;
    return n;
}

static void part_putget(struct target *t, char *report, size_t rlen)
{
    struct aptus_channel *ch = t->ch;
    const struct aptus_chan_caps *c = &ch->caps;
    int can_get = (c->flags & APTUS_CAP_GET) && ch->get, can_put = (c->flags & APTUS_CAP_PUT) && ch->put;
    if (!can_get && !can_put) {
        snprintf(report, rlen, "put/get n/a (no PUT/GET capability)");
        return;
    }
    /* Sizes within the channel's limits. */
    size_t big = (size_t)1 << 20 | 4093;
    if (can_get && big > c->get_max)
        big = c->get_max;
    if (can_put && big > c->put_max)
        big = c->put_max;
    int iovmax = c->iov_max < 4096 ? c->iov_max : 4096;
    size_t small_n = PG_SMALL_N <= (size_t)iovmax ? PG_SMALL_N : (size_t)iovmax;
    size_t wlen = big + small_n * PG_SMALL_LEN + 64; /* exposed: [0, big) [big, big + small) guard */
    uint8_t *win = malloc(wlen), *win2 = malloc(wlen);
    uint8_t *loc = malloc(big + 3 * (size_t)iovmax + small_n * (PG_SMALL_LEN + 3) + 64);
    struct iovec *iov = malloc(sizeof(struct iovec) * (size_t)iovmax),
                 *scratch = malloc(sizeof(struct iovec) * (size_t)iovmax);
    CHECK(win && win2 && loc && iov && scratch, "out of memory");
    uint64_t my_seed = 300u + (uint64_t)me, peer_seed = 300u + (uint64_t)t->rank;
    for (size_t i = 0; i < wlen; i++)
        win[i] = pat(my_seed, i);
    memset(win2, 0xCC, wlen);

    /* Registration (channels that need it) and the exchange of addresses and keys. */
    struct aptus_memh *mh = NULL, *mh2 = NULL;
    uint64_t key = 0, key2 = 0, a1 = (uint64_t)(uintptr_t)win, a2 = (uint64_t)(uintptr_t)win2;
    if ((c->flags & APTUS_CAP_NEEDS_REG) && ch->mem_reg) {
        CHECK(ch->mem_reg(win, wlen, &mh, &a1, &key) == APTUS_OK, "%s: mem_reg", ch->name);
        CHECK(ch->mem_reg(win2, wlen, &mh2, &a2, &key2) == APTUS_OK, "%s: mem_reg", ch->name);
    }
    uint64_t raddr = swap_u64(t, a1), raddr2 = swap_u64(t, a2);
    uint64_t rkey = swap_u64(t, key), rkey2 = swap_u64(t, key2);
    char gets[160] = "", puts_[160] = "";

    /* get: the partner's pattern into local pieces. */
    int skipped = 0;
    if (can_get) {
        size_t span;
        int n = pieces_make(loc, big, iov, iovmax, &span);
        memcpy(scratch, iov, sizeof *iov * (size_t)n);
        struct tcomp tc;
        tcomp_start(&tc);
        int rc = ch->get(t->ep, scratch, n, raddr, rkey, &tc.c);
        if (rc == APTUS_ERR && !strcmp(ch->name, "smp")) {
            skipped = 1; /* CMA refused here (e.g. EPERM under a ptrace policy) */
            aptus_completion_done(&tc.c, APTUS_OK);
        } else {
            tcomp_rc(&tc, rc, ch->name, "get");
            /* Many tiny pieces: more than one system call's worth (IOV_MAX). */
            uint8_t *sbase = loc + span;
            size_t sspan;
            struct iovec *siov = malloc(sizeof *siov * small_n);
            CHECK(siov, "out of memory");
            for (size_t i = 0; i < small_n; i++) {
                siov[i].iov_base = sbase + i * (PG_SMALL_LEN + 3);
                siov[i].iov_len = PG_SMALL_LEN;
                memset(sbase + i * (PG_SMALL_LEN + 3) + PG_SMALL_LEN, 0xEE, 3);
            }
            sspan = small_n * (PG_SMALL_LEN + 3);
            struct iovec *sscr = malloc(sizeof *sscr * small_n);
            CHECK(sscr, "out of memory");
            memcpy(sscr, siov, sizeof *siov * small_n);
            rc = ch->get(t->ep, sscr, (int)small_n, raddr + big, rkey, &tc.c);
            tcomp_rc(&tc, rc, ch->name, "get of many pieces");
            CHECK(tcomp_wait(&tc, ch->name, "get") == APTUS_OK, "%s: get completed with an error", ch->name);
            size_t r = 0;
            for (int i = 0; i < n; i++) {
                const uint8_t *b = iov[i].iov_base;
                for (size_t k = 0; k < iov[i].iov_len; k++, r++)
                    if (b[k] != pat(peer_seed, r))
                        FAIL("%s: get: piece %d byte %zu (remote offset %zu) is %u, expected %u", ch->name, i, k, r,
                             b[k], pat(peer_seed, r));
                for (int g = 0; g < 3; g++)
                    CHECK(b[iov[i].iov_len + g] == 0xEE, "%s: get wrote past piece %d", ch->name, i);
            }
            for (size_t i = 0; i < small_n; i++) {
                const uint8_t *b = siov[i].iov_base;
                for (size_t k = 0; k < PG_SMALL_LEN; k++)
                    if (b[k] != pat(peer_seed, big + i * PG_SMALL_LEN + k))
                        FAIL("%s: get of many pieces: piece %zu byte %zu is %u, expected %u", ch->name, i, k, b[k],
                             pat(peer_seed, big + i * PG_SMALL_LEN + k));
                for (int g = 0; g < 3; g++)
                    CHECK(b[PG_SMALL_LEN + g] == 0xEE, "%s: get wrote past small piece %zu", ch->name, i);
            }
            (void)sspan;
            free(siov);
            free(sscr);
            snprintf(gets, sizeof gets, "get %zu B into %d pieces + %zu pieces of %d B", big, n, small_n, PG_SMALL_LEN);
        }
    }
    /* Both ranks skip, or neither. */
    int peer_skipped = (int)swap_u64(t, (uint64_t)skipped);
    if (skipped || peer_skipped) {
        if (mh)
            ch->mem_dereg(mh);
        if (mh2)
            ch->mem_dereg(mh2);
        free(win), free(win2), free(loc), free(iov), free(scratch);
        snprintf(report, rlen, "put/get skipped: CMA not permitted here (the first get returned APTUS_ERR on rank %d)",
                 skipped ? me : t->rank);
        sync_target(t);
        return;
    }

    /* put: local pieces of our pattern into the partner's second buffer, then flush. */
    if (can_put) {
        uint64_t put_seed = 400u + (uint64_t)me;
        size_t span;
        int n = pieces_make(loc, big, iov, iovmax, &span);
        size_t r = 0;
        for (int i = 0; i < n; i++)
            for (size_t k = 0; k < iov[i].iov_len; k++, r++)
                ((uint8_t *)iov[i].iov_base)[k] = pat(put_seed, r);
        memcpy(scratch, iov, sizeof *iov * (size_t)n);
        struct tcomp tc;
        tcomp_start(&tc);
        tcomp_rc(&tc, ch->put(t->ep, scratch, n, raddr2, rkey2, &tc.c), ch->name, "put");
        /* Many tiny pieces after it. */
        uint8_t *sbase = loc + span;
        struct iovec *siov = malloc(sizeof *siov * small_n);
        CHECK(siov, "out of memory");
        for (size_t i = 0; i < small_n; i++) {
            siov[i].iov_base = sbase + i * PG_SMALL_LEN;
            siov[i].iov_len = PG_SMALL_LEN;
            for (size_t k = 0; k < PG_SMALL_LEN; k++)
                sbase[i * PG_SMALL_LEN + k] = pat(put_seed, big + i * PG_SMALL_LEN + k);
        }
        tcomp_rc(&tc, ch->put(t->ep, siov, (int)small_n, raddr2 + big, rkey2, &tc.c), ch->name, "put of many pieces");
        CHECK(tcomp_wait(&tc, ch->name, "put") == APTUS_OK, "%s: put completed with an error", ch->name);
        free(siov);
        /* flush: this endpoint, then every endpoint. */
        tcomp_start(&tc);
        tcomp_rc(&tc, ch->flush(t->ep, &tc.c), ch->name, "flush");
        CHECK(tcomp_wait(&tc, ch->name, "flush") == APTUS_OK, "%s: flush completed with an error", ch->name);
        tcomp_start(&tc);
        tcomp_rc(&tc, ch->flush(NULL, &tc.c), ch->name, "flush of every endpoint");
        CHECK(tcomp_wait(&tc, ch->name, "flush of every endpoint") == APTUS_OK, "%s: flush(NULL) failed", ch->name);
        /* Tell the partner, which checks what landed in its buffer. */
        (void)swap_u64(t, 1);
        if (c->flags & APTUS_CAP_REMOTE_FLUSH) {
            uint64_t from_seed = 400u + (uint64_t)t->rank;
            for (size_t i = 0; i < big + small_n * PG_SMALL_LEN; i++)
                if (win2[i] != pat(from_seed, i))
                    FAIL("%s: put: byte %zu of the target buffer is %u, expected %u", ch->name, i, win2[i],
                         pat(from_seed, i));
            for (size_t i = big + small_n * PG_SMALL_LEN; i < wlen; i++)
                CHECK(win2[i] == 0xCC, "%s: put wrote past its range (byte %zu)", ch->name, i);
            snprintf(puts_, sizeof puts_, "put %zu B from %d pieces + %zu pieces of %d B, flush", big, n, small_n,
                     PG_SMALL_LEN);
        } else {
            snprintf(puts_, sizeof puts_, "put + flush (no REMOTE_FLUSH: target not checked)");
        }
    }
    sync_target(t);
    if (mh)
        ch->mem_dereg(mh);
    if (mh2)
        ch->mem_dereg(mh2);
    free(win), free(win2), free(loc), free(iov), free(scratch);
    snprintf(report, rlen, "put/get ok (%s%s%s)", gets, *gets && *puts_ ? "; " : "", puts_);
}

/* ---- part: zero-copy sends ---- */

static void part_zcopy(struct target *t, char *report, size_t rlen)
{
    struct aptus_channel *ch = t->ch;
    if (!ch->send_zcopy) {
        snprintf(report, rlen, "send_zcopy n/a");
        return;
    }
    struct rxstate *s = rx_of(ch->id, t->rank);
    size_t pmax = ch->caps.frame_max - sizeof(struct thdr);
    static const size_t shapes[][4] = { { 0 }, { 1, 1 }, { 3, 100, 1, 2000 }, { 2, 4096, 4096 }, { 1, 0 } };
    int nshapes = (int)(sizeof shapes / sizeof shapes[0]);
    uint8_t *ubuf = malloc(pmax + 64);
    CHECK(ubuf, "out of memory");
    uint64_t base = s->frames;
    sync_target(t);
    int frames = 0, inprogress = 0;
    for (int round = 0; round < nshapes + 1; round++) {
        struct iovec iov[3];
        int n;
        size_t len = 0;
        if (round < nshapes) {
            n = (int)shapes[round][0];
            for (int i = 0; i < n; i++) {
                size_t l = shapes[round][i + 1];
                iov[i].iov_len = l <= pmax / (size_t)n ? l : pmax / (size_t)n;
                len += iov[i].iov_len;
            }
        } else { /* the largest payload in three pieces */
            n = 3;
            iov[0].iov_len = 1;
            iov[1].iov_len = pmax - 2;
            iov[2].iov_len = 1;
            len = pmax;
        }
        uint64_t seed = 500u + (uint64_t)round + (uint64_t)me * 10u;
        size_t off = 0;
        for (int i = 0; i < n; i++) {
            iov[i].iov_base = ubuf + off + (size_t)i * 8; /* gaps between pieces */
            for (size_t k = 0; k < iov[i].iov_len; k++)
                ((uint8_t *)iov[i].iov_base)[k] = pat(seed, off + k);
            off += iov[i].iov_len;
        }
        uint8_t hdr[HDR_MAX];
        hdr_fill(hdr, t, K_BYTES, sizeof(struct thdr), len, seed);
        uint64_t sum = FNV0;
        for (int i = 0; i < n; i++)
            sum = fnv(sum, iov[i].iov_base, iov[i].iov_len);
        hdr_sum(hdr, sum);
        struct tcomp tc;
        tcomp_start(&tc);
        double t0 = MPI_Wtime();
        int rc;
        while ((rc = ch->send_zcopy(t->ep, hdr, sizeof(struct thdr), iov, n, &tc.c)) == APTUS_NORES) {
            CHECK(MPI_Wtime() - t0 < TIMEOUT, "%s: no room for a zero-copy frame for %.0f s", ch->name, TIMEOUT);
            if (aptus_progress() == 0)
                sched_yield();
        }
        tcomp_rc(&tc, rc, ch->name, "send_zcopy");
        inprogress += rc == APTUS_INPROGRESS;
        seq_sent(t);
        frames++;
        /* APTUS_OK: the buffer may be reused at once; otherwise once the completion ran. */
        CHECK(tcomp_wait(&tc, ch->name, "send_zcopy") == APTUS_OK, "%s: send_zcopy completed with an error", ch->name);
        memset(ubuf, 0x3C, pmax + 64);
    }
    wait_frames(ch, t->rank, base + (uint64_t)frames);
    sync_target(t);
    free(ubuf);
    snprintf(report, rlen, "send_zcopy ok (%d frames of 0..%zu bytes in 0..3 pieces, %d completed later)", frames, pmax,
             inprogress);
}

/* ---- part: failure path (--fail) ---- */

static void part_failure(int abort_policy)
{
    if (nprocs < 2) {
        printf("failure: n/a (needs 2 ranks)\n");
        return;
    }
    struct aptus_channel *ch = NULL;
    for (int c = 0; c < APTUS_CH_COUNT && !ch; c++)
        if (aptus_channels[c] && aptus_channels[c]->reaches(partner))
            ch = aptus_channels[c];
    CHECK(ch, "no channel reaches rank %d", partner);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Barrier(MPI_COMM_WORLD);
    int v = 0, cls = 0;
    MPI_Request req;
    MPI_Status st;
    CHECK(MPI_Irecv(&v, 1, MPI_INT, partner, 4242, MPI_COMM_WORLD, &req) == MPI_SUCCESS, "MPI_Irecv");
    struct aptus_peer *p = aptus_peer_get(partner);
    struct aptus_ep *ep = aptus_peer_ep(p, ch->id);
    CHECK(p && ep, "peer/endpoint of rank %d", partner);
    if (abort_policy)
        printf("failure: calling aptus_peer_fail with APTUS_PEER_FAILURE_ERRORS=0: the job must end\n");
    fflush(stdout);
    aptus_peer_fail(p, ch, "test");
    CHECK(!abort_policy, "aptus_peer_fail returned under the abort policy");
    CHECK(p->failed, "the peer is not marked failed");
    /* Its endpoints are closed (ep may be gone: not read again), and none opens again. */
    CHECK(!p->ep && p->nopen == 0, "the failed peer still has %d open endpoints", p->nopen);
    CHECK(!aptus_peer_ep(p, ch->id), "%s: an endpoint to the failed peer opened again", ch->name);
    ep = NULL;
    int rc = MPI_Wait(&req, &st);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_PROC_ABORTED, "MPI_Wait on a receive from the failed rank returned class %d, expected %d", cls,
          MPI_ERR_PROC_ABORTED);
    /* A second failure report is ignored. */
    aptus_peer_fail(p, ch, "again");
    /* Nonblocking and blocking sends to the failed peer fail too. */
    rc = MPI_Isend(&v, 1, MPI_INT, partner, 4243, MPI_COMM_WORLD, &req);
    if (rc == MPI_SUCCESS)
        rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_PROC_ABORTED, "MPI_Isend to the failed rank: class %d, expected %d", cls,
          MPI_ERR_PROC_ABORTED);
    rc = MPI_Send(&v, 1, MPI_INT, partner, 4244, MPI_COMM_WORLD);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_PROC_ABORTED, "MPI_Send to the failed rank: class %d, expected %d", cls, MPI_ERR_PROC_ABORTED);
    printf("%s: failure ok (aptus_peer_fail on rank %d: posted receive, new Isend and Send fail with "
           "MPI_ERR_PROC_ABORTED)\n",
           ch->name, partner);
    /* A receive posted after the failure: it can never be matched, so it should complete with
     * the error too (MPI_Finalize's barrier posts such receives). */
    CHECK(MPI_Irecv(&v, 1, MPI_INT, partner, 4245, MPI_COMM_WORLD, &req) == MPI_SUCCESS, "MPI_Irecv");
    int flag = 0;
    double t0 = MPI_Wtime();
    while (!flag && MPI_Wtime() - t0 < 2.0) {
        rc = MPI_Test(&req, &flag, &st);
        if (rc != MPI_SUCCESS)
            break;
    }
    if (!flag && rc == MPI_SUCCESS) {
        /* MPI_Finalize's barrier posts such a receive: it would wait for ever. */
        MPI_Cancel(&req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        FAIL("a receive from rank %d posted after its failure did not complete in 2 s (MPI_Finalize would hang)",
             partner);
    }
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_PROC_ABORTED, "a receive posted after the failure completed with class %d, expected %d", cls,
          MPI_ERR_PROC_ABORTED);
    printf("%s: failure ok (a receive posted after the failure completes with MPI_ERR_PROC_ABORTED)\n", ch->name);
    fflush(stdout);
}

/* ---- endpoints closed and opened again between parts ---- */

static void reopen(struct target *t)
{
    const struct aptus_channel *ch = t->ch;
    struct tcomp tc;
    tcomp_start(&tc);
    tcomp_rc(&tc, ch->flush(t->ep, &tc.c), ch->name, "flush before closing");
    CHECK(tcomp_wait(&tc, ch->name, "flush before closing") == APTUS_OK, "%s: flush failed", ch->name);
    int n = t->p->nopen;
    aptus_peer_ep_close(t->ep);
    CHECK(t->p->nopen == n - 1, "%s: nopen %d after closing one of %d", ch->name, t->p->nopen, n);
    for (struct aptus_ep *e = t->p->ep; e; e = e->next)
        CHECK(e->chan != ch->id, "%s: a closed endpoint is still listed", ch->name);
    t->ep = aptus_peer_ep(t->p, ch->id);
    CHECK(t->ep && t->ep->ch == ch && t->ep->peer == t->p && t->ep->chan == ch->id && t->p->nopen == n,
          "%s: the endpoint did not open again", ch->name);
}

/* ---- the body, per channel and target ---- */

static void body(struct aptus_channel *ch, int rank)
{
    struct target t = { .ch = ch, .rank = rank, .loopback = rank == me };
    char rep[512];
    const char *to = t.loopback ? "loopback" : "pair";
    part_caps(&t);
    part_frames(&t, rep, sizeof rep);
    printf("%s (%s, rank %d): %s\n", ch->name, to, me, rep);
    if (!(ch->caps.flags & APTUS_CAP_CONNECTED))
        reopen(&t); /* the next parts run on a reopened endpoint */
    part_packed(&t, rep, sizeof rep);
    printf("%s (%s, rank %d): %s\n", ch->name, to, me, rep);
    part_noroom(&t, rep, sizeof rep);
    printf("%s (%s, rank %d): %s\n", ch->name, to, me, rep);
    part_putget(&t, rep, sizeof rep);
    printf("%s (%s, rank %d): %s\n", ch->name, to, me, rep);
    if (!(ch->caps.flags & APTUS_CAP_CONNECTED))
        reopen(&t);
    part_zcopy(&t, rep, sizeof rep);
    printf("%s (%s, rank %d): %s\n", ch->name, to, me, rep);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    int fail_mode = 0, abort_policy = 0, connect = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--fail"))
            fail_mode = 1;
        else if (!strcmp(argv[i], "--fail-abort"))
            fail_mode = abort_policy = 1;
        else if (!strcmp(argv[i], "--connect"))
            connect = 1;
        else {
            fprintf(stderr, "usage: test_channels [--fail | --fail-abort | --connect]\n");
            return 2;
        }
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    CHECK(nprocs <= 2, "run with 1 or 2 ranks (got %d)", nprocs);
    partner = nprocs == 2 ? 1 - me : me;
    CHECK(APTUS_CH_COUNT <= 32, "the test types cover 32 channels");
    if (connect) {
        const struct aptus_channel *rc = aptus_channels[APTUS_CH_RC_SR];
        CHECK(partner != me && rc, "--connect needs 2 ranks and a build with the RC channels");
        int all = 0;
        double t0 = MPI_Wtime();
        while (!all && MPI_Wtime() - t0 < 20) {
            int x = me, y = -1, up;
            MPI_Sendrecv(&x, 1, MPI_INT, partner, 7, &y, 1, MPI_INT, partner, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            CHECK(y == partner, "warm-up message from rank %d carried %d", partner, y);
            up = rc->reaches(partner);
            /* rc-fp, where a rule names it: its fast path is asked for once the connection is up */
            const struct aptus_channel *fpc = aptus_channels[APTUS_CH_RC_FP];
            if (up && fpc && fpc->caps.frame_max)
                up = fpc->reaches(partner);
            MPI_Allreduce(&up, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
        }
        CHECK(all, "no RC connection to rank %d within 20 s", partner);
    }
    for (int c = 0; c < APTUS_CH_COUNT; c++)
        aptus_am_register((uint8_t)(APTUS_AM_TEST + c), on_frame);

    int tested = 0;
    for (int c = 0; c < APTUS_CH_COUNT; c++) {
        struct aptus_channel *ch = aptus_channels[c];
        if (!ch || (connect && !(ch->caps.flags & APTUS_CAP_CONNECTED)))
            continue;
        CHECK(ch->id == c, "channel %s registered at %d has id %d", ch->name, c, ch->id);
        int targets[2] = { me, partner }, any = 0;
        for (int i = 0; i < (partner == me ? 1 : 2); i++) {
            if (!ch->reaches(targets[i]))
                continue;
            body(ch, targets[i]);
            any = 1;
            tested++;
        }
        if (!any)
            printf("%s (rank %d): reaches no rank of this job: not tested\n", ch->name, me);
    }
    CHECK(tested > 0, "no channel reaches any rank");
    if (fail_mode)
        part_failure(abort_policy);
    for (int c = 0; c < APTUS_CH_COUNT; c++)
        aptus_am_register((uint8_t)(APTUS_AM_TEST + c), NULL);
    fflush(stdout);
    /* After a failure MPI_Finalize must return (its barrier cannot include the failed peer);
     * it may say so with MPI_ERR_PROC_ABORTED. */
    int rc = MPI_Finalize(), cls = MPI_SUCCESS;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    if (fail_mode && !abort_policy && nprocs == 2) {
        if (cls != MPI_SUCCESS && cls != MPI_ERR_PROC_ABORTED) {
            fprintf(stderr, "FAIL %s:%d: [rank %d] MPI_Finalize after the failure returned class %d\n", __FILE__,
                    __LINE__, me, cls);
            return 1;
        }
        printf("rank %d: MPI_Finalize after the failure returned (%s)\n", me,
               cls == MPI_SUCCESS ? "MPI_SUCCESS" : "MPI_ERR_PROC_ABORTED");
    } else if (rc != MPI_SUCCESS) {
        fprintf(stderr, "FAIL %s:%d: [rank %d] MPI_Finalize returned class %d\n", __FILE__, __LINE__, me, cls);
        return 1;
    }
    printf("rank %d: all channel checks passed\n", me);
    return 0;
}
