/* The channel layer's part of the statistics document (channel/stats_json.h; the schema is in
 * docs/STATS.md): the numbers aptus_channel_stats_print and the channels' stats_print print. */
#include "channel/stats_json.h"

#include <stdint.h>

#include "channel/channel.h"
#include "runtime/json.h"
#include "runtime/runtime.h"

static uint64_t channel_memory(int c)
{
    return aptus_channels[c] && aptus_channels[c]->memory_in_use ? aptus_channels[c]->memory_in_use() : 0;
}

/* {"CHANNEL": count, ...} for the channels with a nonzero count. */
static void per_channel(struct aptus_json *j, const char *key, const uint64_t v[APTUS_CH_COUNT])
{
    aptus_json_object(j, key);
    for (int c = 0; c < APTUS_CH_COUNT; c++)
        if (v[c])
            aptus_json_u64(j, aptus_channel_name(c), v[c]);
    aptus_json_close(j);
}

static void peer_json(struct aptus_json *j, const struct aptus_peer *p,
                      void (*peer_extra)(struct aptus_json *j, const struct aptus_peer *p))
{
    static const uint64_t none[APTUS_CH_COUNT];
    int r = p->world_rank;
    aptus_json_object(j, NULL);
    aptus_json_int(j, "peer", r);
    aptus_json_int(j, "node", aptus_rt.node_of[r]);
    per_channel(j, "messages", p->stats ? p->stats->msgs : none);
    per_channel(j, "bytes", p->stats ? p->stats->bytes : none);
    /* The route the peer's messages take now: 0 the send rules as they are, 1 its small
     * messages off its connection (a stalling connection), 2 every message off the connected
     * channels (a lossy path) -- see "routes_moved". */
    aptus_json_object(j, "route");
    aptus_json_int(j, "moved", p->route ? p->route->moved : 0);
    aptus_json_bool(j, "failed", p->failed);
    aptus_json_close(j);
#ifdef APTUS_HAVE_LIBFABRIC
    aptus_rc_peer_json(j, r);
    aptus_ud_peer_json(j, r);
#endif
    if (peer_extra)
        peer_extra(j, p);
    aptus_json_close(j);
}

void aptus_channel_stats_json(struct aptus_json *j,
                              void (*peer_extra)(struct aptus_json *j, const struct aptus_peer *p))
{
    aptus_json_array(j, "channels_in_build");
    for (int c = 0; c < APTUS_CH_COUNT; c++)
        if (aptus_channels[c])
            aptus_json_string(j, NULL, aptus_channel_name(c));
    aptus_json_close(j);

    /* The memory the channels hold (the "channel memory" line): every channel of the build. */
    uint64_t total = 0;
    for (int c = 0; c < APTUS_CH_COUNT; c++)
        total += channel_memory(c);
    aptus_json_object(j, "memory");
    aptus_json_u64(j, "total", total);
    aptus_json_object(j, "by_channel");
    for (int c = 0; c < APTUS_CH_COUNT; c++)
        if (aptus_channels[c])
            aptus_json_u64(j, aptus_channel_name(c), channel_memory(c));
    aptus_json_close(j);
    aptus_json_close(j);

    /* What this rank sent over each channel, to every peer (the "channel shares" line). */
    uint64_t msgs[APTUS_CH_COUNT] = { 0 }, bytes[APTUS_CH_COUNT] = { 0 }, tm = 0, tb = 0;
    for (int r = 0; r < aptus_rt.size; r++) {
        const struct aptus_peer *p = aptus_rt.peers[r];
        for (int c = 0; p && p->stats && c < APTUS_CH_COUNT; c++) {
            msgs[c] += p->stats->msgs[c];
            bytes[c] += p->stats->bytes[c];
            tm += p->stats->msgs[c];
            tb += p->stats->bytes[c];
        }
    }
    aptus_json_object(j, "totals");
    aptus_json_u64(j, "messages", tm);
    aptus_json_u64(j, "bytes", tb);
    per_channel(j, "messages_by_channel", msgs);
    per_channel(j, "bytes_by_channel", bytes);
    aptus_json_close(j);

    /* Every peer this rank has a record of (the per-peer lines, which leave out the channels,
     * and the peers, with no message). */
    aptus_json_array(j, "peers");
    for (int r = 0; r < aptus_rt.size; r++)
        if (aptus_rt.peers[r])
            peer_json(j, aptus_rt.peers[r], peer_extra);
    aptus_json_close(j);

    aptus_json_object(j, "channels");
#ifdef APTUS_HAVE_LIBFABRIC
    aptus_ud_stats_json(j);
    aptus_udz_stats_json(j);
    aptus_rc_stats_json(j);
    aptus_rcr_stats_json(j);
    aptus_rcfp_stats_json(j);
#endif
    aptus_json_close(j);
#ifdef APTUS_HAVE_LIBFABRIC
    aptus_ud_reliability_json(j);
#endif
    aptus_json_object(j, "routes_moved");
#ifdef APTUS_HAVE_LIBFABRIC
    aptus_udl_stats_json(j);
    aptus_rcs_stats_json(j);
#endif
    aptus_json_close(j);
    aptus_fault_stats_json(j);
}
