/* The fixed top-fill fast-path cells: the design Veloblock replaced (seed 003, section 4 and its
 * "Original"), kept as rc-fp's baseline (APTUS_RCFP_DESIGN=fixed|fixed-reduced).
 *
 * The receiver owns, per sender, a ring of cells of one fixed size; the sender owns a mirror of
 * them (the same bytes, kept in step). A frame fills one cell from its top: a head word, the
 * payload (padded to 8), then a tail word equal to the head, the cell's last written byte being
 * the tail's highest. The receiver polls the head of the next cell: non-zero, it reads the
 * length there, then the tail where that length puts it; the frame is complete when the tail
 * equals the head. The receiver clears the head when done; the tail slot it cannot clear (it does
 * not know where the next tail lands), so the sender picks the head's top byte (the tail's last
 * byte, the one that lands last) to differ from what the mirror says the receiver's cell holds
 * there: that is why the sender needs the mirror. A head whose top byte is set has landed whole
 * (the receiver cleared the word before), and a tail whose top byte has the new value too, so
 * bytes that land in address order in any pieces are never mistaken for a complete frame.
 *
 * Layout of a cell (offsets in bytes, t = 8 + round8(len)):
 *   [0, 8)      head: len (32 bits) | aux (16) << 32 | stamp (8) << 56, non-zero
 *   [8, 8+len)  payload
 *   [t, t+8)    tail: the head's value
 * Credits are cells, returned by the receiver (docs/PROTOCOL.md, "Over RDMA writes"). */
#ifndef APTUS_CHANNEL_FIXEDCELL_H
#define APTUS_CHANNEL_FIXEDCELL_H

#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#define FC_WORD 8u

static inline uint32_t fc_round8(uint32_t n)
{
    return (n + FC_WORD - 1) & ~(FC_WORD - 1);
}

/* Largest payload of a cell of `cell` bytes. */
static inline uint32_t fc_max_payload(uint32_t cell)
{
    return cell - 2 * FC_WORD;
}

/* Sender: the payload is at mirror_cell + 8; writes the head and the tail around it, with a
 * stamp (*stamp, the sender's, moves on) whose byte differs from the one the receiver's cell
 * holds where the tail lands. Returns the bytes of the image to write, [0, return). */
static inline uint32_t fc_seal(uint8_t *mirror_cell, uint32_t len, uint16_t aux, uint8_t *stamp)
{
    uint32_t t = FC_WORD + fc_round8(len);
    uint64_t old;
    memcpy(&old, mirror_cell + t, sizeof old);
    uint8_t s = *stamp;
    do
        s = (uint8_t)(s + 1);
    while (s == 0 || s == (uint8_t)(old >> 56));
    *stamp = s;
    uint64_t w = (uint64_t)len | (uint64_t)aux << 32 | (uint64_t)s << 56;
    memcpy(mirror_cell, &w, sizeof w);
    memcpy(mirror_cell + t, &w, sizeof w);
    return t + FC_WORD;
}

/* Receiver: the frame in `cell` (payload, *len, *aux), or NULL while none is complete there. */
static inline const void *fc_peek(uint8_t *cell, uint32_t cell_bytes, uint32_t *len, uint16_t *aux)
{
    uint64_t h = atomic_load_explicit((_Atomic uint64_t *)(void *)cell, memory_order_acquire);
    if (!(h >> 56))
        return NULL; /* empty, or the head still landing */
    uint32_t l = (uint32_t)h;
    if (l > fc_max_payload(cell_bytes))
        return NULL; /* (never from a sender that keeps to the format) */
    uint64_t t =
        atomic_load_explicit((_Atomic uint64_t *)(void *)(cell + FC_WORD + fc_round8(l)), memory_order_acquire);
    if (t != h)
        return NULL;
    *len = l;
    *aux = (uint16_t)(h >> 32);
    return cell + FC_WORD;
}

/* Receiver: the frame of `cell` is done with; the cell is empty again. */
static inline void fc_release(uint8_t *cell)
{
    atomic_store_explicit((_Atomic uint64_t *)(void *)cell, 0, memory_order_relaxed);
}

#endif
