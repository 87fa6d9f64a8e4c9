/* Veloblock fast-path block: initialisation and the rare paths (credit refresh, wrap).
 * The per-frame fast paths are static inline in veloblock.h. Layout and rules: docs/PROTOCOL.md,
 * section "Veloblock fast-path block". */
#include "channel/fastpath/veloblock.h"

#include <assert.h>
#include <string.h>

static void vb_check_geometry(const void *block, uint32_t size)
{
    (void)block;
    (void)size;
    assert(block != NULL && ((uintptr_t)block % VB_ALIGN) == 0);
    assert(size % VB_ALIGN == 0 && size >= 64);
}

void vb_block_init(void *block, uint32_t size, struct vb_ctrl *ctrl)
{
    vb_check_geometry(block, size);
    /* Only the top trailer slot must be zero (every frame zeroes its successor's slot), but
     * a clean block is easier to debug. */
    memset(block, 0, size);
    atomic_store_explicit(&ctrl->freed, 0, memory_order_release);
}

void vb_sender_init_remote(struct vb_sender *s, uint32_t size, const _Atomic uint64_t *freed,
                           void (*put_word)(void *ctx, uint32_t end, uint64_t word), void *ctx)
{
    assert(size % VB_ALIGN == 0 && size >= 64);
    memset(s, 0, sizeof *s);
    s->size = size;
    s->pos = size;
    s->freed = freed;
    s->put_word = put_word;
    s->put_ctx = ctx;
}

void vb_sender_init(struct vb_sender *s, void *block, uint32_t size, const struct vb_ctrl *ctrl)
{
    vb_check_geometry(block, size);
    vb_sender_init_remote(s, size, &ctrl->freed, NULL, NULL);
    s->block = block;
}

void vb_receiver_init(struct vb_receiver *r, void *block, uint32_t size, struct vb_ctrl *ctrl)
{
    vb_check_geometry(block, size);
    r->block = block;
    r->size = size;
    r->head = size;
    r->consumed = 0;
    r->reported = 0;
    r->freed = &ctrl->freed;
}

uint32_t vb_max_payload(uint32_t size)
{
    /* A frame must leave 8 bytes below it (pos - bytes >= 8) and needs 8 bytes of slack in
     * credits: round8(len) + 8 + 8 <= size. */
    return size >= 2 * VB_ALIGN + VB_TRAILER ? size - VB_ALIGN - VB_TRAILER : 0;
}

/* True when `need` more bytes fit in the ring, refreshing the cached credits if necessary. */
static inline int vb_credits(struct vb_sender *s, uint64_t need)
{
    if (s->used + need - s->freed_cache <= s->size)
        return 1;
    s->freed_cache = atomic_load_explicit(s->freed, memory_order_acquire);
    return s->used + need - s->freed_cache <= s->size;
}

int vb_room(struct vb_sender *s, uint32_t len)
{
    uint64_t fb = vb_frame_bytes(len);
    if (fb + VB_ALIGN > s->size)
        return -1; /* larger than vb_max_payload(size): can never be sent */
    if (fb + VB_ALIGN > s->pos) {
        /* Does not fit below pos: skip the rest of the lap. The skipped bytes (including the
         * WRAP trailer in [pos-8, pos)) count as used; the 8-byte slack covers zeroing the top
         * slot, which belongs to the next lap. Wrapping needs only those credits, never the
         * new frame's, or a frame larger than size - pos - 16 could wait forever. */
        uint32_t pos = s->pos;
        if (!vb_credits(s, (uint64_t)pos + VB_ALIGN))
            return -1;
        if (s->block) {
            atomic_store_explicit(vb_slot(s->block, s->size), 0, memory_order_relaxed);
            atomic_store_explicit(vb_slot(s->block, pos), vb_trailer_word(pos, 0, VB_KIND_WRAP), memory_order_release);
        } else { /* in this order: the marker sends the receiver to the top slot */
            s->put_word(s->put_ctx, s->size, 0);
            s->put_word(s->put_ctx, pos, vb_trailer_word(pos, 0, VB_KIND_WRAP));
        }
        s->used += pos;
        s->pos = s->size;
    }
    return vb_credits(s, fb + VB_ALIGN) ? 0 : -1;
}

void *vb_reserve_slow(struct vb_sender *s, uint32_t len)
{
    if (vb_room(s, len) != 0)
        return NULL;
    return s->block + s->pos - vb_frame_bytes(len);
}

const void *vb_peek_wrap(struct vb_receiver *r, uint32_t *len, uint16_t *aux)
{
    /* vb_peek saw a flagged trailer that is not DATA: a WRAP marker. Release the skipped
     * bytes (head of them, the marker included) and continue at the top. */
    assert(vb_trailer_decode(atomic_load_explicit(vb_slot(r->block, r->head), memory_order_relaxed)).kind ==
           VB_KIND_WRAP);
    r->consumed += r->head;
    r->head = r->size;
    if (r->consumed - r->reported >= (r->size >> 3))
        vb_publish_freed(r);
    /* The top slot was zeroed before the marker was released, so this cannot be another
     * marker: a frame at the top always fits. */
    return vb_peek(r, len, aux);
}
