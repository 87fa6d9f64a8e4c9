/* Veloblock: the variable-length bottom-fill fast-path block (seed 003).
 *
 * One block per ordered pair (sender -> receiver), living in the receiver's memory (here: a
 * shared-memory segment; on a cluster: RDMA-registered memory written by the sender).
 * Frames are written from the top of the block downwards ("bottom fill" in the paper's terms:
 * each frame ends with its tail flag at its highest address, written last). Each frame also
 * carries one extra zero byte just below its start, which resets the tail-flag location of the
 * next frame, so the receiver never has to clear anything and there is no sender-side mirror.
 * Credits are bytes: the receiver publishes a monotonically growing count of bytes freed; the
 * sender keeps its own count of bytes used. See docs/PROTOCOL.md for the exact layout.
 *
 * Implementation notes (see docs/PROTOCOL.md, "Veloblock fast-path block"):
 * - The "extra zero byte" is written as a whole aligned 8-byte word: the sender zeroes the
 *   complete trailer slot of the next frame ([start-8, start)), which is exactly the 8-byte
 *   slack the credit rule reserves. Trailer words are always stored and loaded as single
 *   aligned 64-bit atomics (the flag byte is the highest-addressed byte of that word), so the
 *   receiver polls one word and gets flag, len, aux and kind in one load.
 * - The hot paths (reserve, commit, send, peek, release) are static inline below; only the
 *   rare cases (credit refresh, wrap) call into veloblock.c. */
#ifndef APTUS_CHANNEL_VELOBLOCK_H
#define APTUS_CHANNEL_VELOBLOCK_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Frame trailer, at the top (highest address) of each frame; `flag` is the last byte. */
struct vb_trailer {
    uint32_t len; /* payload bytes (not rounded); for WRAP: bytes skipped */
    uint16_t aux; /* user-defined (channel frame kind) */
    uint8_t kind; /* VB_KIND_* */
    uint8_t flag; /* 0 = empty, 1 = frame present; written last (release) */
};
_Static_assert(sizeof(struct vb_trailer) == 8, "vb_trailer must be one 8-byte word");

enum { VB_KIND_DATA = 1, VB_KIND_WRAP = 2 };

/* Shared control words for one block, each on its own cache line. */
struct vb_ctrl {
    _Alignas(64) _Atomic uint64_t freed; /* bytes released by the receiver (credits) */
    char pad[56];
};

struct vb_sender {
    uint8_t *block;       /* receiver's block, as mapped by the sender (NULL: a remote block) */
    uint32_t size;        /* block bytes, multiple of 8 */
    uint32_t pos;         /* offset where the next frame ends (top of the free area) */
    uint64_t used;        /* bytes consumed in the ring (monotonic) */
    uint64_t freed_cache; /* last value read from ctrl->freed */
    const _Atomic uint64_t *freed;
    /* A remote block (block NULL: the sender moves each frame's image by an RDMA write): puts
     * the 8-byte word ending at offset `end` of the block, after every write put before it. */
    void (*put_word)(void *ctx, uint32_t end, uint64_t word);
    void *put_ctx;
};

struct vb_receiver {
    uint8_t *block;
    uint32_t size;
    uint32_t head;     /* offset where the next frame ends */
    uint64_t consumed; /* bytes consumed (monotonic) */
    uint64_t reported; /* last value written to ctrl->freed */
    _Atomic uint64_t *freed;
};

/* Size and alignment rules. */
#define VB_ALIGN   8u
#define VB_TRAILER ((uint32_t)sizeof(struct vb_trailer))

/* Prepare a zeroed block of `size` bytes (size % 8 == 0, size >= 64, block 8-byte aligned,
 * 64 recommended) and its control words. */
void vb_block_init(void *block, uint32_t size, struct vb_ctrl *ctrl);
void vb_sender_init(struct vb_sender *s, void *block, uint32_t size, const struct vb_ctrl *ctrl);
void vb_receiver_init(struct vb_receiver *r, void *block, uint32_t size, struct vb_ctrl *ctrl);

/* A sender to a block it cannot map (RDMA): it keeps the positions and credits only -- no copy
 * of the block -- and moves each frame as one image, [start - 8, end): the zero word that resets
 * the next frame's trailer slot, the payload (padded to 8), the trailer with its flag at the
 * image's last byte. The image must land in address order (the flag last); a WRAP goes by
 * put_word (the top slot's zero, then the marker). `freed` is a word of the sender's that the
 * receiver's credits update. */
void vb_sender_init_remote(struct vb_sender *s, uint32_t size, const _Atomic uint64_t *freed,
                           void (*put_word)(void *ctx, uint32_t end, uint64_t word), void *ctx);
/* Bytes of the image of a frame carrying len payload bytes. */
static inline uint32_t vb_image_bytes(uint32_t len);
/* Room for a frame of len payload bytes: the block offset where its image starts, or -1 (no
 * credits now; a WRAP marker may have been put). Followed by vb_image_seal and vb_advance. */
static inline int64_t vb_reserve_remote(struct vb_sender *s, uint32_t len);
/* Fills the image's zero word and trailer around the payload the caller put at img + 8. */
static inline void vb_image_seal(uint8_t *img, uint32_t len, uint16_t aux);
/* The reserved frame is on its way: the positions move past it. */
static inline void vb_advance(struct vb_sender *s, uint32_t len);

/* Largest payload one frame may carry in a block of this size (size - 16). */
uint32_t vb_max_payload(uint32_t size);

/* Sender: reserve space for a frame carrying `len` payload bytes. Returns a pointer where the
 * caller writes the payload (len bytes), or NULL when the receiver has not yet freed enough
 * bytes (try again later). Must be followed by vb_commit() before the next reserve.
 * len > vb_max_payload(size) always returns NULL. A NULL return may still have published a
 * WRAP marker (the sender wraps as soon as the skipped bytes are covered by credits, so that
 * large frames are never starved). */
static inline void *vb_reserve(struct vb_sender *s, uint32_t len);
/* Sender: publish the reserved frame (zero slot, trailer, tail flag with release order). */
static inline void vb_commit(struct vb_sender *s, uint32_t len, uint16_t aux);
/* Convenience: reserve + memcpy + commit. Returns 0, or -1 when out of credits. */
static inline int vb_send(struct vb_sender *s, const void *payload, uint32_t len, uint16_t aux);

/* Receiver: look at the next frame. Returns a pointer to its payload (8-byte aligned) and fills
 * *len and *aux, or NULL if nothing has arrived (wrap markers are consumed internally). Calling
 * it again before vb_release returns the same frame. Finding the block empty publishes any
 * unreported credits, so a receiver that keeps polling never starves its sender. */
static inline const void *vb_peek(struct vb_receiver *r, uint32_t *len, uint16_t *aux);
/* Receiver: release the frame returned by the last vb_peek (its bytes become credits). */
static inline void vb_release(struct vb_receiver *r);

/* ---- implementation details (not API) ---------------------------------------------------- */

#if defined(__GNUC__)
#define VB_LIKELY(x)   __builtin_expect(!!(x), 1)
#define VB_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define VB_LIKELY(x)   (x)
#define VB_UNLIKELY(x) (x)
#endif

/* Slow paths, in veloblock.c. vb_room: 0 when a frame of len fits below pos with its credits
 * (wrapping first if it must), -1 when not now. */
int vb_room(struct vb_sender *s, uint32_t len);
void *vb_reserve_slow(struct vb_sender *s, uint32_t len);
const void *vb_peek_wrap(struct vb_receiver *r, uint32_t *len, uint16_t *aux);

/* Bytes a frame with `len` payload bytes occupies: round8(len) + trailer. 64-bit so that any
 * uint32_t len is safe. */
static inline uint64_t vb_frame_bytes(uint32_t len)
{
    return (((uint64_t)len + (VB_ALIGN - 1)) & ~(uint64_t)(VB_ALIGN - 1)) + VB_TRAILER;
}

/* The aligned trailer slot whose highest byte is block[end-1]. */
static inline _Atomic uint64_t *vb_slot(uint8_t *block, uint32_t end)
{
    return (_Atomic uint64_t *)(void *)(block + end - VB_TRAILER);
}

static inline uint64_t vb_trailer_word(uint32_t len, uint16_t aux, uint8_t kind)
{
    struct vb_trailer t = { len, aux, kind, 1 };
    uint64_t w;
    memcpy(&w, &t, sizeof w);
    return w;
}

static inline struct vb_trailer vb_trailer_decode(uint64_t w)
{
    struct vb_trailer t;
    memcpy(&t, &w, sizeof t);
    return t;
}

/* Ask for exclusive ownership of a cache line the sender will write soon. */
static inline void vb_prefetch_w(const void *p)
{
#if defined(__x86_64__) && defined(__GNUC__)
    __asm__("prefetchw %0" : : "m"(*(const char *)p)); /* a NOP where unsupported */
#elif defined(__GNUC__)
    __builtin_prefetch(p, 1, 3);
#else
    (void)p;
#endif
}

static inline void vb_publish_freed(struct vb_receiver *r)
{
    r->reported = r->consumed;
    atomic_store_explicit(r->freed, r->consumed, memory_order_release);
}

static inline void *vb_reserve(struct vb_sender *s, uint32_t len)
{
    uint64_t fb = vb_frame_bytes(len);
    /* Fits below pos leaving >= 8 bytes (room for the next trailer / a WRAP), and the cached
     * credits cover the frame plus the 8-byte zero slot. */
    if (VB_LIKELY(fb + VB_ALIGN <= s->pos && s->used + fb + VB_ALIGN - s->freed_cache <= s->size))
        return s->block + s->pos - fb;
    return vb_reserve_slow(s, len);
}

static inline void vb_commit(struct vb_sender *s, uint32_t len, uint16_t aux)
{
    uint8_t *b = s->block;
    uint32_t fb = (uint32_t)vb_frame_bytes(len);
    uint32_t end = s->pos, start = end - fb;
    /* Reset the next frame's trailer slot (the paper's extra zero byte, as a word)... */
    atomic_store_explicit(vb_slot(b, start), 0, memory_order_relaxed);
    /* ...then publish this frame: the flag is in the same word, released last. */
    atomic_store_explicit(vb_slot(b, end), vb_trailer_word(len, aux, VB_KIND_DATA), memory_order_release);
    s->pos = start;
    s->used += fb;
    /* Off the critical path (after the release): take the next line down (the top line, near
     * the bottom) exclusively. It still holds the receiver's reads from the last lap; without
     * this, the zero-slot store that first touches it has to wait for that line before the
     * next flag can become visible (x86 commits stores in order). 8-byte ping-pong: 78 -> 65 ns
     * one-way (docs/PROTOCOL.md). */
    vb_prefetch_w(b + (start >= 64 + VB_TRAILER ? start - VB_TRAILER - 64 : s->size - VB_TRAILER));
}

static inline int vb_send(struct vb_sender *s, const void *payload, uint32_t len, uint16_t aux)
{
    void *p = vb_reserve(s, len);
    if (VB_UNLIKELY(!p))
        return -1;
    memcpy(p, payload, len);
    vb_commit(s, len, aux);
    return 0;
}

static inline uint32_t vb_image_bytes(uint32_t len)
{
    return (uint32_t)vb_frame_bytes(len) + VB_ALIGN;
}

static inline int64_t vb_reserve_remote(struct vb_sender *s, uint32_t len)
{
    uint64_t fb = vb_frame_bytes(len);
    if (VB_LIKELY(fb + VB_ALIGN <= s->pos && s->used + fb + VB_ALIGN - s->freed_cache <= s->size))
        return (int64_t)(s->pos - fb - VB_ALIGN);
    if (vb_room(s, len) != 0)
        return -1;
    return (int64_t)(s->pos - fb - VB_ALIGN);
}

static inline void vb_image_seal(uint8_t *img, uint32_t len, uint16_t aux)
{
    uint64_t zero = 0, t = vb_trailer_word(len, aux, VB_KIND_DATA);
    memcpy(img, &zero, sizeof zero);
    memcpy(img + vb_image_bytes(len) - VB_TRAILER, &t, sizeof t);
}

static inline void vb_advance(struct vb_sender *s, uint32_t len)
{
    uint32_t fb = (uint32_t)vb_frame_bytes(len);
    s->pos -= fb;
    s->used += fb;
}

static inline const void *vb_peek(struct vb_receiver *r, uint32_t *len, uint16_t *aux)
{
    uint64_t w = atomic_load_explicit(vb_slot(r->block, r->head), memory_order_acquire);
    struct vb_trailer t = vb_trailer_decode(w);
    if (!t.flag) {
        if (r->consumed != r->reported)
            vb_publish_freed(r);
        return NULL;
    }
    if (VB_UNLIKELY(t.kind != VB_KIND_DATA))
        return vb_peek_wrap(r, len, aux);
    *len = t.len;
    *aux = t.aux;
    return r->block + r->head - vb_frame_bytes(t.len);
}

static inline void vb_release(struct vb_receiver *r)
{
    /* The trailer was acquired by vb_peek; re-read it (same cache line, still ours). */
    uint64_t w = atomic_load_explicit(vb_slot(r->block, r->head), memory_order_relaxed);
    uint32_t fb = (uint32_t)vb_frame_bytes(vb_trailer_decode(w).len);
    r->head -= fb;
    r->consumed += fb;
    if (r->consumed - r->reported >= (r->size >> 3))
        vb_publish_freed(r);
}

#endif
