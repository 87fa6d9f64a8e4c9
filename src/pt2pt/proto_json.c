/* The message layer's part of the statistics document (APTUS_STATS_FILE, docs/STATS.md): what
 * aptus_pt2pt_proto_stats_print and the rendezvous and cancellation lines print. */
#include <stdint.h>

#include "channel/channel.h"
#include "pt2pt/mlayer.h"
#include "pt2pt/pt2pt.h"
#include "runtime/json.h"

void aptus_pt2pt_peer_json(struct aptus_json *j, const struct aptus_peer *p)
{
    if (!p->stats)
        return;
    const uint64_t *s = p->stats->proto;
    uint64_t all = 0;
    for (int c = 0; c < APTUS_CH_COUNT; c++)
        all += p->stats->msgs[c];
    uint64_t rndv = s[APTUS_PS_HYBRID] + s[APTUS_PS_SEND_RNDV] + s[APTUS_PS_RECV_RNDV];
    aptus_json_object(j, "protocols");
    /* (as the "protocols to N" line counts them: the messages sent, less the rendezvous ones) */
    aptus_json_u64(j, "eager", all > rndv ? all - rndv : 0);
    aptus_json_u64(j, "hybrid", s[APTUS_PS_HYBRID]);
    aptus_json_u64(j, "send_rndv", s[APTUS_PS_SEND_RNDV]);
    aptus_json_u64(j, "recv_rndv", s[APTUS_PS_RECV_RNDV]);
    aptus_json_u64(j, "fin_eliminated", s[APTUS_PS_FIN_ELIM]);
    aptus_json_u64(j, "rr_sent", s[APTUS_PS_RR_SENT]);
    aptus_json_u64(j, "rr_stale", s[APTUS_PS_RR_STALE]);
    aptus_json_u64(j, "rr_unused", s[APTUS_PS_RR_UNUSED]);
    aptus_json_close(j);
}

void aptus_pt2pt_stats_json(struct aptus_json *j)
{
    uint64_t one_sided, copied;
    aptus_pt2pt_rndv_counts(&one_sided, &copied);
    aptus_json_object(j, "pt2pt");
    aptus_json_object(j, "rendezvous_receives");
    aptus_json_u64(j, "one_sided", one_sided);
    aptus_json_u64(j, "copy", copied);
    aptus_json_close(j);
    aptus_json_u64(j, "rendezvous_reads_deferred", aptus_pt2pt_rndv_deferred());
    const struct aptus_cancel_stats *cs = aptus_pt2pt_cancel_stats();
    aptus_json_object(j, "send_cancellation");
    aptus_json_u64(j, "asked", cs->asked);
    aptus_json_u64(j, "cancelled", cs->cancelled);
    aptus_json_u64(j, "matched", cs->matched);
    aptus_json_u64(j, "asked_again", cs->again);
    aptus_json_u64(j, "dropped_for_senders", cs->dropped);
    aptus_json_close(j);
    aptus_json_close(j);
}
