/* The UD send/receive channel's and the reliability engine's part of the statistics document
 * (channel/stats_json.h): what ud.c's stats line prints, the engine's counters in all and per
 * link (per peer), read from the channel's state (ud_int.h). */
#ifdef APTUS_HAVE_LIBFABRIC
#include <stdint.h>

#include "channel/stats_json.h"
#include "channel/ud/ud_int.h"
#include "runtime/config.h"
#include "runtime/json.h"

static void rel_counters(struct aptus_json *j, const struct aptus_rel_stats *t)
{
    aptus_json_u64(j, "datagrams", t->sent);
    aptus_json_u64(j, "retransmitted_timeout", t->retx_timeout);
    aptus_json_u64(j, "retransmitted_fast", t->retx_fast);
    aptus_json_u64(j, "tail_loss_probes", t->probes);
    aptus_json_u64(j, "timer_expiries", t->timeouts);
    aptus_json_u64(j, "acks_sent", t->acks_sent);
    aptus_json_u64(j, "delivered", t->delivered);
    aptus_json_u64(j, "duplicates_dropped", t->dups);
    aptus_json_u64(j, "out_of_order", t->out_of_order);
    aptus_json_u64(j, "out_of_window", t->out_of_window);
    aptus_json_u64(j, "crc_failures", t->crc_fail);
    aptus_json_u64(j, "malformed", t->malformed);
    aptus_json_u64(j, "recovered", t->recovered);
    aptus_json_u64(j, "bytes_sent", t->bytes_sent);
    aptus_json_u64(j, "bytes_delivered", t->bytes_delivered);
}

void aptus_ud_stats_json(struct aptus_json *j)
{
    const struct ud_state *u = &aptus_ud;
    if (!u->active)
        return;
    size_t held, pooled;
    aptus_rel_mem(&u->eng, &held, &pooled);
    aptus_json_object(j, "ud-sr");
    aptus_json_string(j, "provider", u->d.prov);
    aptus_json_string(j, "interface", u->d.iface);
    aptus_json_u64(j, "sends_refused_for_room", u->refused);
    aptus_json_object(j, "memory");
    aptus_json_u64(j, "receive_pool", (uint64_t)u->nrx * u->rx_stride);
    /* (as ud.c counts them: the registered pool whole, else the buffers made so far) */
    aptus_json_u64(j, "send_buffers", (uint64_t)(u->tx_pool ? u->tx_cap : u->ntx) * u->tx_stride);
    aptus_json_u64(j, "engine_held", held);
    aptus_json_u64(j, "engine_pooled", pooled);
    aptus_json_int(j, "peers", u->neps);
    aptus_json_u64(j, "per_peer", sizeof(struct ud_ep));
    aptus_json_close(j);
    aptus_json_bool(j, "registered_buffers", u->d.mr_local);
    if (u->d.mr_local) {
        aptus_json_bool(j, "registered_forced", aptus_config.fabric_mr_local);
        aptus_json_u64(j, "send_buffers_max", u->tx_cap);
    }
    if (aptus_ud_imp.on) {
        aptus_json_object(j, "impairment");
        aptus_json_u64(j, "lost", aptus_ud_imp.lost);
        aptus_json_u64(j, "duplicated", aptus_ud_imp.duplicated);
        aptus_json_u64(j, "reordered", aptus_ud_imp.reordered);
        aptus_json_close(j);
    }
    aptus_json_close(j);
}

void aptus_ud_reliability_json(struct aptus_json *j)
{
    if (!aptus_ud.active)
        return;
    aptus_json_object(j, "reliability");
    aptus_json_string(j, "engine", "ud-sr");
    aptus_json_bool(j, "crc", aptus_config.crc);
    rel_counters(j, aptus_rel_stats(&aptus_ud.eng));
    aptus_json_close(j);
}

void aptus_ud_peer_json(struct aptus_json *j, int rank)
{
    if (!aptus_ud.active || !aptus_rt.peers[rank])
        return;
    for (const struct aptus_ep *e = aptus_rt.peers[rank]->ep; e; e = e->next) {
        if (e->chan != APTUS_CH_UD_SR)
            continue;
        const struct ud_ep *u = (const struct ud_ep *)e;
        aptus_json_object(j, "ud");
        aptus_json_int(j, "loss_moves", u->loss_moves);
        const struct aptus_rel_stats *t = aptus_rel_link_stats(&u->link);
        if (t) { /* (per link with the statistics on, once the link had traffic) */
            aptus_json_object(j, "link");
            rel_counters(j, t);
            aptus_json_close(j);
        }
        aptus_json_close(j);
        return;
    }
}

#else
typedef int aptus_ud_json_unused;
#endif
