/* The channel interface: every way of moving bytes to a peer (self, smp, and later the
 * UD/RC channels over libfabric) is a table of operations, so that the send rule chain, the
 * statistics and the protocols treat all channels alike. */
#ifndef APTUS_CHANNEL_CHANNEL_H
#define APTUS_CHANNEL_CHANNEL_H

#include <stddef.h>
#include <stdint.h>

#include <sys/uio.h>

#include "channel/rules.h"
#include "runtime/runtime.h"

struct aptus_peer;
struct aptus_pending;
struct aptus_dt_cursor;

/* Room reserved in a frame for the message layer's largest eager header. */
#define APTUS_EAGER_HEADER_MAX 48

struct aptus_channel {
    const char *name;
    int id; /* enum aptus_channel_id */
    /* Sends one frame made of hdr followed by payload. Returns 0 when the frame has been
     * handed over (buffers may be reused), 1 when there is no room now (retry later). */
    int (*send_frame)(struct aptus_peer *p, const void *hdr, size_t hdrlen, const void *payload, size_t len);
    /* The same with a non-contiguous payload: len bytes packed from the cursor straight into
     * the frame (the cursor advances only when the frame is sent). */
    int (*send_frame_packed)(struct aptus_peer *p, const void *hdr, size_t hdrlen, struct aptus_dt_cursor *cur,
                             size_t len);
    /* Largest hdr + payload one frame may carry to this peer. */
    size_t (*max_frame)(struct aptus_peer *p);
    /* One-sided copy from the peer's memory into ours (rendezvous). 0 on success, -1 when not
     * possible (the caller falls back to a copy through frames). NULL if unsupported. */
    int (*rdma_read)(struct aptus_peer *p, void *local, uint64_t remote_addr, size_t len);
    /* The same into a list of local pieces (scratch: the channel may modify it), len bytes in
     * all, from one contiguous remote range. NULL if unsupported. */
    int (*rdma_readv)(struct aptus_peer *p, struct iovec *local, int n, uint64_t remote_addr, size_t len);
    /* Polls for incoming frames, handing each to aptus_frame_arrived. Returns frames seen. */
    int (*progress)(void);
    /* Bytes of memory this channel holds, for the statistics. */
    size_t (*memory_in_use)(void);
};

/* Per-peer state: small, created on first contact. */
struct aptus_peer {
    int world_rank;
    int node;
    struct aptus_route route;
    struct aptus_smp_peer *smp;                  /* shared-memory channel state, if on our node */
    struct aptus_pending *pend_head, *pend_tail; /* frames waiting for room, in order */
    struct aptus_peer *pend_next;                /* link in the list of peers with pending frames */
    int in_pend_list;
    uint32_t eager_max[APTUS_CH_COUNT]; /* largest eager payload per channel */
    uint64_t msgs[APTUS_CH_COUNT];
    uint64_t bytes[APTUS_CH_COUNT];
};

extern const struct aptus_channel *aptus_channels[APTUS_CH_COUNT];

/* The peer structure for a world rank, created on first use (NULL only when out of memory).
 * A peer that no channel reaches ends the job with a message: it could never be talked to. */
struct aptus_peer *aptus_peer_create(int world_rank);
static inline struct aptus_peer *aptus_peer_get(int world_rank)
{
    struct aptus_peer *p = aptus_rt.peers[world_rank];
    return __builtin_expect(p != NULL, 1) ? p : aptus_peer_create(world_rank);
}

/* Called by channels for every frame that arrives. */
void aptus_frame_arrived(struct aptus_peer *from, const void *frame, size_t len);

/* Channel set-up and tear-down (runtime). */
int aptus_self_init(void);
int aptus_smp_init(void);
void aptus_smp_finalize(void);
void aptus_smp_cleanup_files(void);
int aptus_smp_reaches(int world_rank);
extern const struct aptus_channel aptus_channel_self, aptus_channel_smp;

/* Prints the per-peer, per-channel counters (APTUS_STATS=1). */
void aptus_stats_print(void);

#endif
