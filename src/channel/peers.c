/* Peer table, channel registry and per-peer, per-channel statistics. */
#include <stdio.h>
#include <stdlib.h>

#include "channel/channel.h"
#include "coll/coll.h"
#include "core/errors.h"
#include "pt2pt/pt2pt.h"
#include "runtime/config.h"
#include "runtime/runtime.h"

const struct aptus_channel *aptus_channels[APTUS_CH_COUNT];

static void aptus_peer_limits(struct aptus_peer *p);

struct aptus_peer *aptus_peer_create(int world_rank)
{
    struct aptus_peer *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->world_rank = world_rank;
    p->node = aptus_rt.node_of[world_rank];
    uint8_t reach[APTUS_CH_COUNT] = { 0 };
    reach[APTUS_CH_SELF] = world_rank == aptus_rt.rank;
    reach[APTUS_CH_SMP] = world_rank != aptus_rt.rank && aptus_smp_reaches(world_rank);
    if (aptus_rules_route(&aptus_rt.rules, aptus_rt.size, reach, &p->route) != 0) {
        /* Channels are fixed at start-up: this peer can never be reached, and every message to
         * or from it would wait forever. End the job instead of hanging. */
        char msg[256];
        snprintf(msg, sizeof msg,
                 "no channel of the send rule chain (APTUS_SEND_RULES) reaches rank %d on node %d for every "
                 "message size (only self and smp exist: a job spanning nodes needs a network channel)",
                 world_rank, p->node);
        free(p);
        aptus_abort_job(MPI_ERR_OTHER, msg);
    }
    aptus_peer_limits(p);
    aptus_rt.peers[world_rank] = p;
    return p;
}

/* The largest eager message each channel takes to this peer. */
static void aptus_peer_limits(struct aptus_peer *p)
{
    for (int c = 0; c < APTUS_CH_COUNT; c++) {
        if (!aptus_channels[c])
            continue;
        size_t room = aptus_channels[c]->max_frame(p) - APTUS_EAGER_HEADER_MAX;
        p->eager_max[c] = (uint32_t)(aptus_config.smp_eager_max < room ? aptus_config.smp_eager_max : room);
    }
}

void aptus_stats_print(void)
{
    size_t mem = 0;
    for (int c = 0; c < APTUS_CH_COUNT; c++)
        if (aptus_channels[c] && aptus_channels[c]->memory_in_use)
            mem += aptus_channels[c]->memory_in_use();
    printf("[aptus stats] rank %d: channel memory %zu bytes\n", aptus_rt.rank, mem);
    printf("[aptus stats] rank %d: %-6s %-8s %12s %16s\n", aptus_rt.rank, "peer", "channel", "messages", "bytes");
    for (int r = 0; r < aptus_rt.size; r++) {
        struct aptus_peer *p = aptus_rt.peers[r];
        if (!p)
            continue;
        for (int c = 0; c < APTUS_CH_COUNT; c++)
            if (p->msgs[c])
                printf("[aptus stats] rank %d: %-6d %-8s %12llu %16llu\n", aptus_rt.rank, r, aptus_channel_name(c),
                       (unsigned long long)p->msgs[c], (unsigned long long)p->bytes[c]);
    }
    uint64_t cma, copy;
    aptus_pt2pt_rndv_counts(&cma, &copy);
    printf("[aptus stats] rank %d: rendezvous receives: one-sided %llu, copy %llu (%s)\n", aptus_rt.rank,
           (unsigned long long)cma, (unsigned long long)copy,
           cma && copy ? "mixed"
           : cma       ? "one-sided only"
           : copy      ? "copy only"
                       : "none");
    aptus_coll_stats_print(aptus_rt.rank);
    fflush(stdout);
}
