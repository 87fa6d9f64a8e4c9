/* Unit tests for the Veloblock fast-path block (src/channel/fastpath/veloblock.[ch]).
 *
 * Single-process tests check the exact layout, every frame size, wrap-around at every
 * alignment, credit exhaustion and recovery, the publication rules for credits, and run a
 * randomised sequence against independent safety/liveness checks. The hammer tests run a
 * sender and a receiver concurrently (fork + MAP_SHARED, or threads so ThreadSanitizer can see
 * both sides) and verify every byte and the order of millions of frames.
 *
 * Usage: test_veloblock [-n FRAMES] [--threads] [--quick]
 *   -n FRAMES   frames per direction in each hammer run (default 2000000)
 *   --threads   run the hammers with threads instead of processes (for -fsanitize=thread)
 *   --quick     shorter single-process loops (for slow sanitizer builds) */
#include "channel/fastpath/veloblock.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static pid_t g_child;

static void die(const char *file, int line, const char *what)
{
    fprintf(stderr, "%s:%d: CHECK failed: %s\n", file, line, what);
    fflush(stderr);
    if (g_child > 0)
        kill(g_child, SIGKILL);
    _exit(1);
}

#define CHECK(c)                                                                                                       \
    do {                                                                                                               \
        if (!(c))                                                                                                      \
            die(__FILE__, __LINE__, #c);                                                                               \
    } while (0)

/* ---- deterministic content ------------------------------------------------------------ */

static inline uint64_t mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    return x;
}

/* Payload of frame `seq`: 8-byte words k + j*phi, k = mix64(seq); a stale or misplaced frame
 * (another seq, another offset) differs in nearly every byte. */
static void fill(uint8_t *p, uint32_t len, uint64_t seq)
{
    uint64_t k = mix64(seq + 1);
    uint32_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t w = k + (uint64_t)i * 0x9e3779b97f4a7c15ull;
        memcpy(p + i, &w, 8);
    }
    if (i < len) {
        uint64_t w = k + (uint64_t)i * 0x9e3779b97f4a7c15ull;
        memcpy(p + i, &w, len - i);
    }
}

static int verify(const uint8_t *p, uint32_t len, uint64_t seq)
{
    uint64_t k = mix64(seq + 1);
    uint32_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t w = k + (uint64_t)i * 0x9e3779b97f4a7c15ull, got;
        memcpy(&got, p + i, 8);
        if (got != w)
            return 0;
    }
    if (i < len) {
        uint64_t w = k + (uint64_t)i * 0x9e3779b97f4a7c15ull;
        if (memcmp(p + i, &w, len - i) != 0)
            return 0;
    }
    return 1;
}

/* ---- single-process helpers ----------------------------------------------------------- */

struct pair {
    uint8_t *block;
    uint32_t size;
    int remote; /* the sender as over RDMA: positions only, each frame's image copied in */
    struct vb_ctrl ctrl;
    struct vb_sender s;
    struct vb_receiver r;
};

/* dirty: fill everything but the top trailer slot with garbage after init, as if the block had
 * been used before; the protocol must never depend on it being zero. */
static void pair_init(struct pair *p, uint32_t size, int dirty)
{
    p->size = size;
    p->block = aligned_alloc(64, (size + 63) & ~63u);
    CHECK(p->block != NULL);
    vb_block_init(p->block, size, &p->ctrl);
    if (dirty)
        memset(p->block, 0xa5, size - VB_TRAILER);
    vb_sender_init(&p->s, p->block, size, &p->ctrl);
    vb_receiver_init(&p->r, p->block, size, &p->ctrl);
    p->remote = 0;
}

/* The "RDMA write" of a remote sender's word: in address order, as one write lands. */
static void remote_put_word(void *ctx, uint32_t end, uint64_t word)
{
    struct pair *p = ctx;
    CHECK(end >= 8 && end <= p->size && end % 8 == 0);
    memcpy(p->block + end - 8, &word, sizeof word);
}

static void pair_init_remote(struct pair *p, uint32_t size, int dirty)
{
    pair_init(p, size, dirty);
    vb_sender_init_remote(&p->s, size, &p->ctrl.freed, remote_put_word, p);
    p->remote = 1;
}

static void pair_free(struct pair *p)
{
    free(p->block);
    p->block = NULL;
}

static uint64_t ctrl_freed(struct pair *p)
{
    return atomic_load_explicit(&p->ctrl.freed, memory_order_acquire);
}

static struct vb_trailer slot_at(struct pair *p, uint32_t end)
{
    struct vb_trailer t;
    memcpy(&t, p->block + end - 8, 8);
    return t;
}

/* Safety: nothing the sender has written (or reserved, plus the zero slot) may reach bytes the
 * receiver has not released yet. Checked against the receiver's own count, not the published
 * one, so this does not trust the credit path under test. */
static void check_safety(struct pair *p, uint64_t extra)
{
    CHECK(p->s.used + extra + VB_ALIGN <= p->r.consumed + p->size);
    CHECK(p->s.pos >= VB_ALIGN && p->s.pos <= p->size && p->s.pos % VB_ALIGN == 0);
    CHECK((p->size - p->s.pos) % p->size == p->s.used % p->size);
}

/* Send one frame; returns 0 when out of credits. Checks placement. */
static int try_send(struct pair *p, uint32_t len, uint64_t seq, uint16_t aux)
{
    if (p->remote) {
        int64_t at = vb_reserve_remote(&p->s, len);
        check_safety(p, 0);
        if (at < 0)
            return 0;
        uint32_t ib = vb_image_bytes(len);
        CHECK(at % 8 == 0 && (uint64_t)at + ib == p->s.pos);
        check_safety(p, vb_frame_bytes(len));
        static uint8_t img[1 << 17];
        CHECK(ib <= sizeof img);
        memset(img, 0x5a, ib); /* the padding is never read */
        fill(img + 8, len, seq);
        vb_image_seal(img, len, aux);
        memcpy(p->block + at, img, ib);
        vb_advance(&p->s, len);
        return 1;
    }
    uint8_t *d = vb_reserve(&p->s, len);
    check_safety(p, 0);
    if (!d)
        return 0;
    uint64_t fb = vb_frame_bytes(len);
    CHECK(d == p->block + p->s.pos - fb);
    CHECK((d - p->block) >= 8 && (d - p->block) % 8 == 0);
    check_safety(p, fb);
    fill(d, len, seq);
    vb_commit(&p->s, len, aux);
    return 1;
}

static void expect_frame(struct pair *p, uint32_t len, uint64_t seq, uint16_t aux)
{
    uint32_t l = 12345;
    uint16_t a = 0;
    const uint8_t *d = vb_peek(&p->r, &l, &a);
    CHECK(d != NULL);
    CHECK(l == len);
    CHECK(a == aux);
    CHECK(((uintptr_t)d & 7) == 0);
    CHECK(d == p->block + p->r.head - vb_frame_bytes(len));
    CHECK(verify(d, len, seq));
    /* peeking again returns the same frame */
    uint32_t l2;
    uint16_t a2;
    CHECK(vb_peek(&p->r, &l2, &a2) == d && l2 == len && a2 == aux);
    vb_release(&p->r);
}

static void expect_empty(struct pair *p)
{
    uint32_t l;
    uint16_t a;
    CHECK(vb_peek(&p->r, &l, &a) == NULL);
    /* an empty peek publishes everything consumed */
    CHECK(ctrl_freed(p) == p->r.consumed);
    CHECK(p->r.reported == p->r.consumed);
}

/* ---- single-process tests ------------------------------------------------------------- */

static void test_geometry(void)
{
    CHECK(VB_TRAILER == 8);
    CHECK(vb_frame_bytes(0) == 8);
    CHECK(vb_frame_bytes(1) == 16);
    CHECK(vb_frame_bytes(8) == 16);
    CHECK(vb_frame_bytes(9) == 24);
    CHECK(vb_frame_bytes(UINT32_MAX) == 0x100000000ull + 8);
    CHECK(vb_max_payload(64) == 48);
    CHECK(vb_max_payload(72) == 56);
    CHECK(vb_max_payload(256) == 240);
    CHECK(vb_max_payload(65536) == 65520);

    uint32_t sizes[] = { 64, 72, 256, 1024, 65536 };
    for (unsigned i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        struct pair p;
        pair_init(&p, sizes[i], 1);
        uint32_t max = vb_max_payload(p.size);
        /* too large: refused, and nothing changes */
        CHECK(vb_reserve(&p.s, max + 1) == NULL);
        CHECK(vb_reserve(&p.s, max + 8) == NULL);
        CHECK(vb_reserve(&p.s, UINT32_MAX) == NULL);
        CHECK(vb_send(&p.s, p.block, max + 1, 0) == -1);
        CHECK(p.s.pos == p.size && p.s.used == 0);
        /* the largest frame fits in an empty block, and leaves exactly the 8-byte slot */
        CHECK(try_send(&p, max, 7, 0xbeef));
        CHECK(p.s.pos == 8);
        CHECK(slot_at(&p, 8).flag == 0);
        CHECK(vb_reserve(&p.s, 0) == NULL);
        expect_frame(&p, max, 7, 0xbeef);
        expect_empty(&p);
        /* a largest frame after a small one: the sender wraps early, is refused until the
         * receiver has passed the marker, then succeeds at the top */
        CHECK(try_send(&p, 0, 8, 1));
        expect_frame(&p, 0, 8, 1);
        expect_empty(&p);
        CHECK(vb_reserve(&p.s, max) == NULL);
        CHECK(p.s.pos == p.size); /* wrapped */
        expect_empty(&p);         /* consumes WRAP, publishes */
        CHECK(try_send(&p, max, 9, 2));
        expect_frame(&p, max, 9, 2);
        expect_empty(&p);
        CHECK(p.r.consumed == p.s.used && p.r.head == p.s.pos);
        pair_free(&p);
    }
}

/* Exact byte layout of frames, zero slot, and lazy credit publication. */
static void test_layout(void)
{
    struct pair p;
    pair_init(&p, 256, 1);
    CHECK(slot_at(&p, 256).flag == 0);

    uint8_t *d = vb_reserve(&p.s, 5);
    CHECK(d == p.block + 256 - 16);
    memcpy(d, "hello", 5);
    vb_commit(&p.s, 5, 0x1234);
    struct vb_trailer t = slot_at(&p, 256);
    CHECK(t.len == 5 && t.aux == 0x1234 && t.kind == VB_KIND_DATA && t.flag == 1);
    CHECK(p.block[255] == 1); /* the flag is the last byte */
    CHECK(memcmp(p.block + 240, "hello", 5) == 0);
    CHECK(p.block[245] == 0xa5); /* padding untouched */
    for (int i = 232; i < 240; i++)
        CHECK(p.block[i] == 0);  /* next frame's slot zeroed */
    CHECK(p.block[231] == 0xa5); /* nothing below it written */
    CHECK(p.s.pos == 240 && p.s.used == 16);

    uint32_t len;
    uint16_t aux;
    const uint8_t *q = vb_peek(&p.r, &len, &aux);
    CHECK(q == p.block + 240 && len == 5 && aux == 0x1234);
    vb_release(&p.r);
    CHECK(p.r.head == 240 && p.r.consumed == 16);
    CHECK(ctrl_freed(&p) == 0); /* 16 < 256/8: not yet published */
    CHECK(vb_peek(&p.r, &len, &aux) == NULL);
    CHECK(ctrl_freed(&p) == 16); /* empty peek publishes */

    /* empty frame: trailer only */
    d = vb_reserve(&p.s, 0);
    CHECK(d == p.block + 232);
    vb_commit(&p.s, 0, 7);
    t = slot_at(&p, 240);
    CHECK(t.len == 0 && t.aux == 7 && t.kind == VB_KIND_DATA && t.flag == 1);
    for (int i = 224; i < 232; i++)
        CHECK(p.block[i] == 0);
    CHECK(p.block[223] == 0xa5);
    q = vb_peek(&p.r, &len, &aux);
    CHECK(q == p.block + 232 && len == 0 && aux == 7);
    vb_release(&p.r);

    /* 9 bytes: rounded to 16 */
    CHECK(try_send(&p, 9, 3, 9));
    CHECK(p.s.pos == 232 - 24);
    expect_frame(&p, 9, 3, 9);
    expect_empty(&p);
    pair_free(&p);
}

/* Every payload size 0..max, one frame at a time and in batches that fill the block. */
static void test_sizes(int quick)
{
    uint32_t sizes[] = { 64, 72, 128, 256, 1024, 4096, 65536 };
    for (unsigned i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        struct pair p;
        pair_init(&p, sizes[i], 1);
        uint32_t max = vb_max_payload(p.size);
        uint32_t step = (p.size > 4096 && quick) ? 97 : 1;
        uint64_t seq = 0;
        for (uint32_t len = 0; len <= max; len += (len < 1100 ? 1 : step)) {
            int ok = try_send(&p, len, seq, (uint16_t)(len * 3));
            if (!ok) { /* must have wrapped; the receiver passes the marker */
                expect_empty(&p);
                ok = try_send(&p, len, seq, (uint16_t)(len * 3));
            }
            CHECK(ok);
            expect_frame(&p, len, seq, (uint16_t)(len * 3));
            seq++;
        }
        /* batches: as many frames as fit (lengths growing), then drain and continue */
        uint32_t *inflight = malloc(sizeof(uint32_t) * (p.size / 8 + 1));
        CHECK(inflight != NULL);
        uint64_t first = seq;
        uint32_t len = 0;
        while (len <= max) {
            if (try_send(&p, len, seq, (uint16_t)seq)) {
                CHECK(seq - first < p.size / 8);
                inflight[seq - first] = len;
                seq++;
                len += len < 300 ? 1 : 7 * step;
                continue;
            }
            CHECK(seq > first || p.s.pos == p.size); /* refused with nothing in flight: wrapped */
            for (uint64_t k = first; k < seq; k++)
                expect_frame(&p, inflight[k - first], k, (uint16_t)k);
            expect_empty(&p);
            first = seq;
        }
        for (uint64_t k = first; k < seq; k++)
            expect_frame(&p, inflight[k - first], k, (uint16_t)k);
        expect_empty(&p);
        CHECK(p.r.consumed == p.s.used);
        free(inflight);
        pair_free(&p);
    }
}

/* Wrap at every alignment: position the sender at pos = P (every multiple of 8), then send a
 * frame of every size; check the WRAP marker, the zeroed top slot, placement and delivery. */
static void test_wrap_alignments(void)
{
    uint32_t sizes[] = { 64, 128, 256, 1024 };
    uint64_t seq = 0;
    for (unsigned i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        uint32_t size = sizes[i];
        struct pair p;
        pair_init(&p, size, 1);
        for (uint32_t P = 8; P <= size; P += 8) {
            for (uint32_t fb = 8; fb + 8 <= size; fb += 8) {
                uint32_t len = fb - 8 - (fb > 8 ? (uint32_t)(seq % 8) : 0); /* any len with this fb */
                CHECK(vb_frame_bytes(len) == fb);
                /* restart from a fresh, dirty block and move pos to P */
                pair_free(&p);
                pair_init(&p, size, 1);
                if (P < size) {
                    CHECK(try_send(&p, size - P - 8, seq, 1));
                    expect_frame(&p, size - P - 8, seq, 1);
                    expect_empty(&p);
                    seq++;
                }
                CHECK(p.s.pos == P);
                uint64_t used0 = p.s.used;
                int wraps = fb + 8 > P;
                uint8_t *d = vb_reserve(&p.s, len);
                check_safety(&p, d ? fb : 0);
                if (wraps) {
                    struct vb_trailer t = slot_at(&p, P);
                    CHECK(t.kind == VB_KIND_WRAP && t.flag == 1 && t.len == P);
                    CHECK(p.s.used == used0 + P && p.s.pos == size);
                    CHECK(slot_at(&p, size).flag == 0); /* top slot zeroed for the new lap */
                    if (P < size && (uint64_t)P + fb + 8 > size) {
                        CHECK(d == NULL); /* needs the skipped bytes back first */
                        expect_empty(&p);
                        d = vb_reserve(&p.s, len);
                    }
                    CHECK(d == p.block + size - fb);
                } else {
                    CHECK(d == p.block + P - fb);
                    CHECK(p.s.used == used0);
                }
                fill(d, len, seq);
                vb_commit(&p.s, len, (uint16_t)seq);
                expect_frame(&p, len, seq, (uint16_t)seq);
                /* and one more small frame behind it, to check the chain continues */
                if (!try_send(&p, 3, seq + 1, 2)) {
                    expect_empty(&p);
                    CHECK(try_send(&p, 3, seq + 1, 2));
                }
                expect_frame(&p, 3, seq + 1, 2);
                expect_empty(&p);
                CHECK(p.r.consumed == p.s.used && p.r.head == p.s.pos);
                seq += 2;
            }
        }
        pair_free(&p);
    }
}

/* Credits: fill until refused, check the exact count, the lazy/threshold/empty publication, and
 * that releasing lets the sender continue, across a wrap. */
static void test_credits(void)
{
    struct pair p;
    pair_init(&p, 256, 1);
    int n = 0;
    while (try_send(&p, 8, (uint64_t)n, (uint16_t)n))
        n++;
    CHECK(n == (256 - 8) / 16); /* 15 frames of 16 bytes; 16 bytes left, pos = 16 */
    CHECK(p.s.used == 240 && p.s.pos == 16);
    CHECK(vb_reserve(&p.s, 1) == NULL);      /* 16 bytes would end at 0: needs a wrap, and a
                                                wrap needs 16 + 8 credits; only 16 left */
    CHECK(p.s.pos == 16 && p.s.used == 240); /* refused without wrapping */
    uint8_t x = 0;
    CHECK(vb_send(&p.s, &x, 1, 0) == -1);
    CHECK(try_send(&p, 0, 15, 15)); /* an empty frame still fits: [8, 16) + slot [0, 8) */
    CHECK(p.s.pos == 8 && p.s.used == 248);
    CHECK(vb_reserve(&p.s, 0) == NULL); /* wrap needs 8 + 8 credits; 8 left */
    CHECK(p.s.pos == 8);

    expect_frame(&p, 8, 0, 0);
    CHECK(ctrl_freed(&p) == 0); /* 16 < 256/8: lazy */
    CHECK(vb_reserve(&p.s, 8) == NULL);
    expect_frame(&p, 8, 1, 1);
    CHECK(ctrl_freed(&p) == 32); /* threshold size/8 reached */
    /* 8-byte frame: does not fit below 8 -> wrap (8 + 8 <= 256 - 216) then the frame at the
     * top (24 <= 256 - 224) */
    CHECK(try_send(&p, 8, 100, 100));
    CHECK(p.s.pos == 240 && p.s.used == 272);
    CHECK(slot_at(&p, 8).kind == VB_KIND_WRAP && slot_at(&p, 8).len == 8);
    CHECK(vb_reserve(&p.s, 8) == NULL); /* 272 + 24 - 32 > 256 */
    for (int k = 2; k < n; k++) {
        expect_frame(&p, 8, (uint64_t)k, (uint16_t)k);
        CHECK(p.s.used + 8 <= p.r.consumed + 256);
    }
    expect_frame(&p, 0, 15, 15);
    expect_frame(&p, 8, 100, 100); /* WRAP skipped internally */
    expect_empty(&p);
    CHECK(ctrl_freed(&p) == 272);
    /* all credits back: 14 more 16-byte frames from 240 down to 16 */
    int m = 0;
    while (try_send(&p, 8, 200 + (uint64_t)m, 0))
        m++;
    CHECK(m == 14); /* 240 -> 16; then a wrap fits, the frame not */
    CHECK(p.s.pos == 256 && p.s.used == 272 + 14 * 16 + 16);
    for (int k = 0; k < m; k++)
        expect_frame(&p, 8, 200 + (uint64_t)k, 0);
    expect_empty(&p);
    pair_free(&p);
}

/* Random interleavings against independent checks: FIFO order and content, placement, the
 * safety invariant against the receiver's own count, and liveness (a drained receiver lets
 * any legal frame through within one more drain). */
static void test_random(int quick, int remote)
{
    uint32_t sizes[] = { 64, 80, 256, 1000, 4096, 65536 };
    enum { QMAX = 8192 };
    static struct {
        uint64_t seq;
        uint32_t len;
        uint16_t aux;
    } q[QMAX];
    uint64_t rng = 0x1234567;
    for (unsigned i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        struct pair p;
        if (remote)
            pair_init_remote(&p, sizes[i], 1);
        else
            pair_init(&p, sizes[i], 1);
        uint32_t max = vb_max_payload(p.size);
        unsigned qh = 0, qt = 0;
        uint64_t seq = 0, nulls = 0, wraps = 0;
        long ops = quick ? 50000 : 400000;
        for (long op = 0; op < ops; op++) {
            uint64_t h = mix64(++rng);
            int send_bias = (op / 5000) % 3; /* phases: sender-heavy, balanced, receiver-heavy */
            int do_send = (h & 7) < (unsigned)(send_bias == 0 ? 6 : send_bias == 1 ? 4 : 2);
            if (do_send && qt - qh < QMAX) {
                uint32_t len;
                switch ((h >> 8) & 3) {
                case 0: len = (uint32_t)((h >> 16) % 17); break;
                case 1: len = (uint32_t)((h >> 16) % (max < 200 ? max + 1 : 201)); break;
                case 2: len = (uint32_t)((h >> 16) % (max / 4 + 1)); break;
                default: len = (h >> 16) % 16 == 0 ? max - (uint32_t)((h >> 24) % 9) : (uint32_t)((h >> 16) % 64);
                }
                if (len > max)
                    len = max;
                uint64_t used0 = p.s.used;
                if (try_send(&p, len, seq, (uint16_t)(seq * 7))) {
                    q[qt % QMAX].seq = seq;
                    q[qt % QMAX].len = len;
                    q[qt % QMAX].aux = (uint16_t)(seq * 7);
                    qt++;
                    seq++;
                } else {
                    nulls++;
                    if (qt == qh) {
                        /* nothing outstanding: liveness */
                        expect_empty(&p);
                        if (!try_send(&p, len, seq, (uint16_t)(seq * 7))) {
                            CHECK(p.s.pos == p.size); /* only a fresh wrap may defer it */
                            expect_empty(&p);
                            CHECK(try_send(&p, len, seq, (uint16_t)(seq * 7)));
                        }
                        q[qt % QMAX].seq = seq;
                        q[qt % QMAX].len = len;
                        q[qt % QMAX].aux = (uint16_t)(seq * 7);
                        qt++;
                        seq++;
                    }
                }
                uint64_t moved = p.s.used - used0;
                if (moved != 0 && moved != vb_frame_bytes(len))
                    wraps++; /* the sender skipped the end of a lap */
            } else {
                uint32_t l;
                uint16_t a;
                const uint8_t *d = vb_peek(&p.r, &l, &a);
                if (qt == qh) {
                    CHECK(d == NULL);
                    CHECK(ctrl_freed(&p) == p.r.consumed);
                } else {
                    CHECK(d != NULL);
                    CHECK(l == q[qh % QMAX].len && a == q[qh % QMAX].aux);
                    CHECK(verify(d, l, q[qh % QMAX].seq));
                    vb_release(&p.r);
                    qh++;
                }
            }
        }
        while (qh != qt) {
            expect_frame(&p, q[qh % QMAX].len, q[qh % QMAX].seq, q[qh % QMAX].aux);
            qh++;
        }
        expect_empty(&p);
        CHECK(p.r.consumed == p.s.used);
        CHECK(nulls > 0 && wraps > 0);
        pair_free(&p);
    }
}

/* ---- concurrent hammer ---------------------------------------------------------------- */

static uint32_t hammer_len(uint64_t seq, uint32_t max)
{
    uint64_t h = mix64(seq * 0x2545f4914f6cdd1dull + 77);
    uint32_t small = max < 256 ? max : 256;
    if ((h & 63) == 0)
        return (uint32_t)((h >> 8) % ((uint64_t)max + 1)); /* rare: anything up to max */
    if ((h & 7) == 1)
        return (uint32_t)((h >> 8) % 9); /* tiny */
    return (uint32_t)((h >> 8) % (small + 1));
}

static inline void spin_wait(unsigned *spins)
{
    if (++*spins >= 256) {
        *spins = 0;
        sched_yield();
    } else {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
    }
}

struct role {
    uint8_t *send_block, *recv_block;
    struct vb_ctrl *send_ctrl, *recv_ctrl;
    uint32_t size;
    uint64_t n;
    uint64_t salt_send, salt_recv; /* different sequence spaces per direction */
    int bad;
};

static void *role_run(void *arg)
{
    struct role *ro = arg;
    struct vb_sender s;
    struct vb_receiver r;
    uint32_t max = vb_max_payload(ro->size);
    uint64_t sent = ro->send_block ? 0 : ro->n, recvd = ro->recv_block ? 0 : ro->n;
    if (ro->send_block)
        vb_sender_init(&s, ro->send_block, ro->size, ro->send_ctrl);
    if (ro->recv_block)
        vb_receiver_init(&r, ro->recv_block, ro->size, ro->recv_ctrl);
    unsigned spins = 0;
    while (sent < ro->n || recvd < ro->n) {
        int progress = 0;
        if (sent < ro->n) {
            uint64_t seq = sent + ro->salt_send;
            uint32_t len = hammer_len(seq, max);
            uint8_t *d = vb_reserve(&s, len);
            if (d) {
                fill(d, len, seq);
                vb_commit(&s, len, (uint16_t)seq);
                sent++;
                progress = 1;
            }
        }
        if (recvd < ro->n) {
            uint32_t l;
            uint16_t a;
            const uint8_t *d = vb_peek(&r, &l, &a);
            if (d) {
                uint64_t seq = recvd + ro->salt_recv;
                if (l != hammer_len(seq, max) || a != (uint16_t)seq || !verify(d, l, seq)) {
                    fprintf(stderr, "hammer: frame %llu corrupt (len %u want %u, aux %u want %u)\n",
                            (unsigned long long)recvd, l, hammer_len(seq, max), a, (uint16_t)seq);
                    ro->bad = 1;
                    return NULL;
                }
                vb_release(&r);
                recvd++;
                progress = 1;
            }
        }
        if (progress)
            spins = 0;
        else
            spin_wait(&spins);
    }
    if (ro->recv_block) { /* everything consumed: the block is empty and all credits are out */
        uint32_t l;
        uint16_t a;
        if (vb_peek(&r, &l, &a) != NULL || atomic_load(&ro->recv_ctrl->freed) != r.consumed)
            ro->bad = 1;
    }
    return NULL;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Block 0 carries child -> parent, block 1 (bidirectional runs) parent -> child. */
static void hammer(uint32_t size, uint64_t n, int bidir, int threads)
{
    size_t blk = ((size_t)size + 4095) & ~(size_t)4095;
    size_t total = 4096 + 2 * blk;
    uint8_t *mem = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(mem != MAP_FAILED);
    struct vb_ctrl *ctrl = (struct vb_ctrl *)(void *)mem;
    uint8_t *b0 = mem + 4096, *b1 = mem + 4096 + blk;
    vb_block_init(b0, size, &ctrl[0]);
    vb_block_init(b1, size, &ctrl[1]);

    struct role parent = { NULL, b0, NULL, &ctrl[0], size, n, 0, 1000, 0 };
    struct role child = { b0, NULL, &ctrl[0], NULL, size, n, 1000, 0, 0 };
    if (bidir) {
        parent.send_block = b1;
        parent.send_ctrl = &ctrl[1];
        parent.salt_send = 5000000000ull;
        child.recv_block = b1;
        child.recv_ctrl = &ctrl[1];
        child.salt_recv = 5000000000ull;
    }
    double t0 = now_s();
    if (threads) {
        pthread_t th;
        CHECK(pthread_create(&th, NULL, role_run, &child) == 0);
        role_run(&parent);
        CHECK(pthread_join(th, NULL) == 0);
        CHECK(!child.bad);
    } else {
        fflush(NULL);
        pid_t pid = fork();
        CHECK(pid >= 0);
        if (pid == 0) {
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            role_run(&child);
            _exit(child.bad ? 3 : 0);
        }
        g_child = pid;
        role_run(&parent);
        if (parent.bad)
            kill(pid, SIGKILL);
        int st = 0;
        CHECK(waitpid(pid, &st, 0) == pid);
        g_child = 0;
        CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    }
    CHECK(!parent.bad);
    double t = now_s() - t0;
    printf("  hammer %-7s %-5s size %6u: %llu frames/direction in %.2f s (%.1f Mframes/s)\n",
           threads ? "threads" : "fork", bidir ? "bidir" : "uni", size, (unsigned long long)n, t,
           (double)n * (bidir ? 2 : 1) / t / 1e6);
    munmap(mem, total);
}

int main(int argc, char **argv)
{
    uint64_t n = 2000000;
    int threads = 0, quick = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-n") && i + 1 < argc)
            n = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--threads"))
            threads = 1;
        else if (!strcmp(argv[i], "--quick"))
            quick = 1;
        else {
            fprintf(stderr, "usage: %s [-n FRAMES] [--threads] [--quick]\n", argv[0]);
            return 2;
        }
    }
    alarm(600); /* a lost credit or flag shows up as a hang: make it a failure */
    setvbuf(stdout, NULL, _IOLBF, 0);

    test_geometry();
    printf("geometry ok\n");
    test_layout();
    printf("layout ok\n");
    test_sizes(quick);
    printf("sizes ok\n");
    test_wrap_alignments();
    printf("wrap alignments ok\n");
    test_credits();
    printf("credits ok\n");
    test_random(quick, 0);
    printf("random ok\n");
    test_random(quick, 1);
    printf("random, remote sender (images) ok\n");

    uint32_t hsizes[] = { 256, 1024, 65536 };
    for (unsigned i = 0; i < 3; i++)
        hammer(hsizes[i], n, 0, threads);
    for (unsigned i = 0; i < 3; i++)
        hammer(hsizes[i], n, 1, threads);
    printf("all veloblock tests passed\n");
    return 0;
}
