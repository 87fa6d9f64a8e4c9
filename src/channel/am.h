/* Receive dispatch by registered handlers. Every frame starts with a one-byte type; the layer
 * that owns a type registers its handler, and channels hand every arriving frame to
 * aptus_am_dispatch. Types are allotted by range so that layers never collide. */
#ifndef APTUS_CHANNEL_AM_H
#define APTUS_CHANNEL_AM_H

#include <stddef.h>
#include <stdint.h>

struct aptus_peer;

enum aptus_am_range {
    APTUS_AM_PT2PT = 1,     /* 1..31: the message layer (pt2pt/wire.h) */
    APTUS_AM_RMA = 32,      /* 32..63: one-sided communication */
    APTUS_AM_RELIAB = 64,   /* 64..95: reliability engine (acknowledgements) */
    APTUS_AM_CONNECT = 96,  /* 96..127: connection set-up */
    APTUS_AM_CHANNEL = 128, /* 128..223: channels' own control frames (e.g. UD zero-copy) */
    APTUS_AM_TEST = 224,    /* 224..255: tests */
};

typedef void (*aptus_am_handler)(struct aptus_peer *from, const void *frame, size_t len);

extern aptus_am_handler aptus_am_table[256];

/* Registers fn for frames of this type (NULL restores the default, which ends the job with a
 * "corrupt frame" message). */
void aptus_am_register(uint8_t type, aptus_am_handler fn);

static inline void aptus_am_dispatch(struct aptus_peer *from, const void *frame, size_t len)
{
    aptus_am_table[*(const uint8_t *)frame](from, frame, len);
}

#endif
