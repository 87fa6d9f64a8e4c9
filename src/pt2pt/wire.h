/* Frame formats of the message layer (documented in docs/PROTOCOL.md). Every frame starts
 * with a one-byte type (a handler registered in the channel layer's table, channel/am.h) and
 * says how long its payload is: a channel may deliver a frame with trailing padding. All fields
 * are in host byte order: frames never leave a node yet. */
#ifndef APTUS_PT2PT_WIRE_H
#define APTUS_PT2PT_WIRE_H

#include <stdint.h>

#include "channel/am.h"

enum aptus_frame_type {
    APTUS_F_EAGER = APTUS_AM_PT2PT, /* aptus_f_msg + payload */
    APTUS_F_EAGER_SYNC,             /* aptus_f_sync + payload; receiver answers SYNC_ACK on match */
    APTUS_F_RTS,                    /* aptus_f_rts: rendezvous request to send */
    APTUS_F_CTS,                    /* aptus_f_cts: receiver wants `len` bytes streamed as DATA */
    APTUS_F_DATA,                   /* aptus_f_data + chunk: one piece of a streamed message */
    APTUS_F_FIN,                    /* aptus_f_ctrl: receiver has read the data (one-sided copy) */
    APTUS_F_SYNC_ACK,               /* aptus_f_ctrl: a synchronous eager send has been matched */
    APTUS_F_CANCEL_REQ,             /* aptus_f_cancel: drop message `seq` if it has not matched */
    APTUS_F_CANCEL_ANS,             /* aptus_f_cancel: what became of it (enum aptus_cancel_outcome) */
    APTUS_F_RR,                     /* aptus_f_rr: RECEIVER_READY, a receive's buffer to write into */
    APTUS_F_RR_REVOKE,              /* aptus_f_revoke: drop the RECEIVER_READYs of a (ctx, tag) */
    /* In the sequence of the matched frames (below: the data sender's), not matched themselves: */
    APTUS_F_WRITTEN,    /* aptus_f_written: a message was written into the buffer of RECEIVER_READY */
    APTUS_F_RR_REVOKED, /* aptus_f_revoke: RR_REVOKE done, every write before it is in place */
};

/* Header of the frames that are matched (EAGER, EAGER_SYNC, RTS). `seq` counts them per
 * ordered pair of processes: the receiver matches them in that order, whichever channels they
 * took (those that arrive early wait). */
struct aptus_f_msg {
    uint8_t type;
    uint8_t flags;
    uint16_t ctx; /* communicator context */
    int32_t src;  /* sender's rank in the communicator */
    int32_t tag;
    uint32_t seq;
    uint64_t len; /* message bytes */
};

struct aptus_f_sync {
    struct aptus_f_msg m;
    uint64_t sreq; /* sender's request, echoed in SYNC_ACK */
};

struct aptus_f_rts {
    struct aptus_f_msg m;
    uint64_t sreq;    /* sender's request, echoed in CTS / FIN */
    uint64_t addr;    /* sender's buffer for a one-sided read, as `chan` names it */
    uint64_t key;     /* remote key of that buffer on `chan` (channels that need registration) */
    uint8_t chan;     /* the channel the sender chose (the read goes over it) */
    uint8_t proto;    /* the sender's route's protocol for this size (enum aptus_proto) */
    uint8_t readable; /* addr and key are valid (0: not readable, stream it) */
    uint8_t pad[5];
};

struct aptus_f_cts {
    uint8_t type;
    uint8_t chan;  /* the channel the receiver wants the data on */
    uint8_t write; /* 1: write it one-sidedly to (addr, key); 0: stream DATA frames */
    uint8_t pad[5];
    uint64_t sreq;
    uint64_t rreq;
    uint64_t len;
    uint64_t addr; /* receiver's buffer for a one-sided write, as `chan` names it */
    uint64_t key;
};

struct aptus_f_ctrl {
    uint8_t type;
    uint8_t pad[7];
    uint64_t sreq;
};

struct aptus_f_data {
    uint8_t type;
    uint8_t pad[3];
    uint32_t len; /* chunk bytes (the frame may be longer: channels may pad) */
    uint64_t rreq;
    uint64_t offset;
};

/* RECEIVER_READY (customized rendezvous, pt2pt/rndv_cust.c): the next message but `skip` on
 * (ctx, tag) from its receiver goes to (addr, key) on `chan` if it fits `len`. It holds only
 * if the sender has sent nothing that the receiver had not seen when it asked: `rseq` (its
 * next matched frame expected) and `rfinless` (writes without FIN it had noticed). */
struct aptus_f_rr {
    uint8_t type;
    uint8_t chan;     /* the channel to write over */
    uint8_t finless;  /* the receiver watches its last byte: no FIN if the data's differs */
    uint8_t sentinel; /* that byte's value now */
    uint16_t ctx;
    uint16_t pad;
    int32_t tag;
    uint32_t skip; /* receives from the sender on (ctx, tag) posted before this one, pending */
    uint32_t rseq, rfinless;
    uint32_t rrno; /* this receiver's RECEIVER_READYs to the sender, counted from 1 */
    uint32_t pad2;
    uint64_t len;  /* the receive's bytes */
    uint64_t rreq; /* the receive request, echoed in WRITTEN and as the write's note */
    uint64_t addr, key;
};

/* WRITTEN: message `m` (envelope, length, its sequence number) is in the buffer of rreq; with
 * `noted`, the write's note (put_notify) says when it is in place. */
struct aptus_f_written {
    struct aptus_f_msg m;
    uint64_t rreq;
    uint8_t noted;
    uint8_t pad[7];
};

/* RR_REVOKE (receiver to sender): drop every RECEIVER_READY on (ctx, tag), and any still on its
 * way numbered up to `rrno`; RR_REVOKED (back, in order): done. rreq: the receive to cancel. */
struct aptus_f_revoke {
    struct aptus_f_msg m; /* ctx, tag; seq: RR_REVOKED's own */
    uint64_t rreq;
    uint32_t rrno;
    uint32_t pad;
};

/* The answer to a CANCEL_REQ. */
enum aptus_cancel_outcome {
    APTUS_CANCEL_DONE = 1, /* the message was unexpected: dropped, it will never match */
    APTUS_CANCEL_MATCHED,  /* it has matched (or been taken by MPI_Mprobe): the send goes on */
    APTUS_CANCEL_NOT_YET,  /* not arrived in order yet: ask again */
};

struct aptus_f_cancel {
    uint8_t type;
    uint8_t outcome; /* CANCEL_ANS: enum aptus_cancel_outcome; CANCEL_REQ: 0 */
    uint8_t pad[2];
    uint32_t seq;  /* the message's sequence number (aptus_f_msg.seq) */
    uint64_t sreq; /* the request being cancelled, echoed in CANCEL_ANS */
    uint64_t msg;  /* CANCEL_ANS with DONE: the sreq the dropped EAGER_SYNC or RTS carried */
};

#endif
