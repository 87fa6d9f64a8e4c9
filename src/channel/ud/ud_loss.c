/* Paths that lose packets: every message to such a peer moved off the connected channels
 * (APTUS_UD_LOSS_MOVE).
 *
 * A connection over a sockets provider is tcp: under loss it recovers a packet lost at the end
 * of a burst on its retransmission timer (200 ms at least) and halves its window at every loss,
 * so over a path that loses a few per cent of its packets a connection's bandwidth collapses
 * (1 MiB messages at 5 % loss: 86 MB/s by rc-rdma where ud-zcopy keeps 920, docs/BENCHMARKS.md)
 * and a small message can take milliseconds. UD's own engine recovers in microseconds, and it
 * sees the path's loss: a datagram that arrives by a retransmission (flagged as such by its
 * sender) and is new here had its first transmission lost on the way. A retransmission that was
 * not needed -- the peer was slow to answer, an acknowledgement was lost -- arrives as a
 * duplicate and does not count, so a rank that sleeps or waits for its core does not look lossy.
 *
 * Every UDL_SAMPLE losses from a peer, their share of the datagrams received from it since the
 * last verdict is compared with APTUS_UD_LOSS_MOVE per cent -- unless datagrams were dropped on
 * arrival here meanwhile (a receive buffer that overflowed: the loss may be this host's, not the
 * path's; see local_drops). At or above it, every message to
 * that peer leaves the connected channels (rc-sr, rc-fp, rc-rdma) for the send chain's other
 * rules (UD) for APTUS_RC_MOVE_HOLD, doubled at each move of the peer (64 times at most), no
 * connection to it is asked for meanwhile, and the peer is told (UDL_F_LOSSY) and moves its
 * side for as long: loss is the path's. When the hold ends the peer comes back unless a verdict
 * during the hold (UD carries all of its traffic then) found the path as lossy still: then it
 * stays, for a doubled hold. A connection already up stays up (nothing goes over it; with
 * APTUS_CHANNEL_IDLE it closes as any idle one). The message layer's sequence numbers keep the
 * order across the move, as for any reroute; messages on their way keep their channel. */
#ifdef APTUS_HAVE_LIBFABRIC

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "channel/stats_json.h"
#include "channel/ud/ud_int.h"
#include "runtime/config.h"
#include "runtime/json.h"
#include "runtime/progress.h"

enum { UDL_F_LOSSY = APTUS_AM_CHANNEL + 8 };
#define UDL_SAMPLE    8 /* losses per verdict */
#define UDL_DOUBLINGS 6

static struct {
    int pct;         /* APTUS_UD_LOSS_MOVE (0: off) */
    double hold;     /* APTUS_RC_MOVE_HOLD, seconds */
    int nlossy;      /* peers moved now */
    uint32_t local0; /* local_drops() at start-up */
    struct aptus_timer back;
    struct {
        uint64_t moved_here, moved_by_peer, renewed, back;
        uint64_t overruns; /* verdicts not given: datagrams were dropped here meanwhile */
    } st;
    /* the last move, for the statistics */
    int last_rank, last_here;
    double last_at, last_hold, last_share;
} udl;

/* The UD endpoint to world_rank if one is open (none is opened). */
static struct ud_ep *ep_open_to(int world_rank)
{
    struct aptus_peer *p = aptus_rt.peers[world_rank];
    for (struct aptus_ep *e = p ? p->ep : NULL; e; e = e->next)
        if (e->chan == APTUS_CH_UD_SR)
            return (struct ud_ep *)e;
    return NULL;
}

static int is_lossy(int world_rank)
{
    struct ud_ep *e = ep_open_to(world_rank);
    return e && e->lossy_until > 0;
}

static void back_arm(void)
{
    double next = 0;
    for (struct ud_ep *e = aptus_ud.eps; e && udl.nlossy; e = e->next_ep)
        if (e->lossy_until > 0 && (next == 0 || e->lossy_until < next))
            next = e->lossy_until;
    if (next > 0)
        aptus_timer_arm(&udl.back, next);
    else if (udl.back.armed)
        aptus_timer_cancel(&udl.back);
}

static double hold_of(const struct ud_ep *e)
{
    int d = e->loss_moves < UDL_DOUBLINGS ? e->loss_moves : UDL_DOUBLINGS;
    return udl.hold * (double)(1 << d);
}

/* Tells the peer that its path to this rank loses packets: it moves its side until the end of
 * this side's hold. A frame that finds no room is not queued: every lossy verdict during the hold
 * tells again (the loss may be one way only: the peer then sees none itself). */
static void tell(struct ud_ep *e, double now)
{
    uint8_t f[8] = { UDL_F_LOSSY };
    double left = (e->lossy_until - now) * 1000 + 0.5;
    uint32_t ms = left >= (double)UINT32_MAX ? UINT32_MAX : left < 1 ? 1 : (uint32_t)left;
    memcpy(f + 4, &ms, sizeof ms);
    (void)aptus_ud_send_frame(e, f, sizeof f, NULL, 0);
}

/* A hold starts (a move, or a renewal): until now + hold, judged by its own sample. */
static void hold_start(struct ud_ep *e, double now, double hold)
{
    e->lossy_until = now + hold;
    if (e->loss_moves < 255)
        e->loss_moves++;
    e->loss_seen = 0;
    e->loss_mark = e->link.rcv_nxt;
    e->loss_n = 0;
}

/* Every message to e's peer leaves the connections until now + hold; here: this rank saw the loss
 * (share: its part of the datagrams, per cent). */
static void move(struct ud_ep *e, double now, double hold, int here, double share)
{
    hold_start(e, now, hold);
    udl.nlossy++;
    if (here)
        udl.st.moved_here++;
    else
        udl.st.moved_by_peer++;
    udl.last_rank = e->base.peer->world_rank;
    udl.last_here = here;
    udl.last_at = now - aptus_rt.t0;
    udl.last_hold = hold;
    udl.last_share = share;
    if (here)
        tell(e, now);
    aptus_peer_reroute(e->base.peer);
    back_arm();
}

/* Datagrams dropped on arrival here rather than on the path: a UDP receive buffer of this host
 * (its network namespace) that overflowed -- a rank that does not drain its socket while a
 * peer streams to it; the kernel's RcvbufErrors, every socket's -- and those the engine dropped
 * beyond its window. A loss then proves nothing about the path (tcp would not have lost them:
 * its flow control holds the sender back). */
static uint64_t local_drops(void)
{
    uint64_t n = aptus_rel_stats(&aptus_ud.eng)->out_of_window;
    FILE *f = fopen("/proc/net/snmp", "r");
    if (!f)
        return n;
    char line[512];
    int header = 0;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "Udp: ", 5) != 0)
            continue;
        if (!header++)
            continue; /* the names; the values follow */
        unsigned long long in, noports, inerr, out, rcvbuf;
        if (sscanf(line + 5, "%llu %llu %llu %llu %llu", &in, &noports, &inerr, &out, &rcvbuf) == 5)
            n += rcvbuf;
        break;
    }
    fclose(f);
    return n;
}

/* Whether e's sample (at least `min` losses) finds the path lossy: their share of the datagrams
 * received since it started at or above the threshold, and no drop here since it started nor
 * within a window's datagrams before (*overrun: such a drop withheld the verdict). A sample of
 * more than 2^30 datagrams says nothing of now. */
static int path_lossy(const struct ud_ep *e, uint32_t local, uint32_t min, int *overrun)
{
    uint32_t got = e->link.rcv_nxt - e->loss_mark;
    *overrun = local != e->loss_local || (int32_t)(e->link.rcv_nxt - e->loss_quiet) < 0;
    return !*overrun && e->loss_n >= min && got <= (1u << 30) && (uint64_t)e->loss_n * 100u >= (uint64_t)udl.pct * got;
}

/* A new sample starts after a verdict (`local`: local_drops() now). */
static void sample_restart(struct ud_ep *e, uint32_t local)
{
    uint32_t now = e->link.rcv_nxt;
    if ((int32_t)(now - e->loss_quiet) >= 0)
        e->loss_quiet = now; /* (kept near: a mark 2^31 behind would read as ahead) */
    if (local != e->loss_local)
        e->loss_quiet = now + aptus_ud.eng.cfg.window_pkts; /* (their retransmissions come later) */
    e->loss_mark = now;
    e->loss_local = local;
    e->loss_n = 0;
}

/* The engine: a datagram from e's peer came by a retransmission, its first transmission lost. */
void aptus_udl_recovered(struct aptus_rel_link *l)
{
    struct ud_ep *e = aptus_rel_link_user(l);
    if (!udl.pct || ++e->loss_n < UDL_SAMPLE)
        return;
    uint32_t got = l->rcv_nxt - e->loss_mark, local = (uint32_t)local_drops();
    double share = got ? 100.0 * e->loss_n / got : 100.0;
    int overrun, lossy = path_lossy(e, local, UDL_SAMPLE, &overrun);
    if (overrun)
        udl.st.overruns++;
    sample_restart(e, local);
    if (!lossy)
        return;
    if (e->lossy_until > 0) {
        e->loss_seen = 1;
        tell(e, aptus_wtime()); /* (the peer may not have heard: tell again) */
    } else {
        move(e, aptus_wtime(), hold_of(e), 1, share);
    }
}

/* A hold ended: the peer comes back, or stays for a doubled hold if the path still loses as much
 * (a verdict during the hold, or the losses since the last one). */
static void back(struct aptus_timer *t)
{
    (void)t;
    double now = aptus_wtime();
    for (struct ud_ep *e = aptus_ud.eps; e; e = e->next_ep) {
        if (e->lossy_until <= 0 || e->lossy_until > now)
            continue;
        int overrun;
        if (e->loss_seen || path_lossy(e, (uint32_t)local_drops(), 2, &overrun)) {
            hold_start(e, now, hold_of(e));
            udl.st.renewed++;
            tell(e, now);
            continue;
        }
        e->lossy_until = 0;
        udl.nlossy--;
        udl.st.back++;
        aptus_peer_reroute(e->base.peer);
    }
    back_arm();
}

/* The peer saw loss on its path from this rank: this side moves too, for as long. */
static void on_lossy(struct aptus_peer *from, const void *frame, size_t len)
{
    uint32_t ms;
    if (len < 8 || !udl.pct)
        return;
    memcpy(&ms, (const char *)frame + 4, sizeof ms);
    struct ud_ep *e = ep_open_to(from->world_rank);
    if (!e)
        return;
    double now = aptus_wtime(), until = now + ms / 1000.0;
    if (e->lossy_until <= 0) {
        move(e, now, ms / 1000.0, 0, 0);
    } else if (until > e->lossy_until) {
        e->lossy_until = until;
        back_arm();
    }
}

void aptus_udl_ep_init(struct ud_ep *e)
{
    e->loss_mark = e->loss_quiet = e->link.rcv_nxt;
    e->loss_local = udl.local0; /* (a peer streaming to this rank before its record existed: the
                                   drops then count against the first sample) */
}

void aptus_udl_ep_closing(struct ud_ep *e)
{
    if (e->lossy_until > 0) {
        e->lossy_until = 0;
        udl.nlossy--;
    }
}

void aptus_udl_setup(void)
{
    memset(&udl, 0, sizeof udl);
    udl.pct = aptus_config.ud_loss_move;
    udl.hold = aptus_config.rc_move_hold / 1000.0;
    udl.back.fire = back;
    aptus_am_register(UDL_F_LOSSY, on_lossy);
    aptus_peer_lossy = udl.pct ? is_lossy : NULL;
    udl.local0 = udl.pct ? (uint32_t)local_drops() : 0;
}

void aptus_udl_finalize(void)
{
    if (udl.back.armed)
        aptus_timer_cancel(&udl.back);
    aptus_peer_lossy = NULL;
}

int aptus_udl_counter(const char *name, uint64_t *value)
{
    const struct aptus_counter t[] = { { "ud.recovered", aptus_rel_stats(&aptus_ud.eng)->recovered },
                                       { "ud.loss_moves", udl.st.moved_here + udl.st.moved_by_peer },
                                       { "ud.loss_moves_here", udl.st.moved_here },
                                       { "ud.loss_renewed", udl.st.renewed },
                                       { "ud.loss_back", udl.st.back },
                                       { "ud.loss_overruns", udl.st.overruns },
                                       { "ud.lossy", (uint64_t)udl.nlossy } };
    return aptus_counter_lookup(t, sizeof t / sizeof t[0], name, value);
}

/* The statistics document (channel/stats_json.h): what aptus_udl_stats_print prints. */
void aptus_udl_stats_json(struct aptus_json *j)
{
    if (!aptus_ud.active || !udl.pct)
        return;
    aptus_json_object(j, "ud_loss");
    aptus_json_int(j, "threshold_pct", udl.pct);
    aptus_json_u64(j, "recovered", aptus_rel_stats(&aptus_ud.eng)->recovered);
    aptus_json_u64(j, "not_judged", udl.st.overruns);
    aptus_json_u64(j, "moves", udl.st.moved_here + udl.st.moved_by_peer);
    aptus_json_u64(j, "moves_seen_here", udl.st.moved_here);
    aptus_json_u64(j, "moves_told", udl.st.moved_by_peer);
    aptus_json_u64(j, "renewed", udl.st.renewed);
    aptus_json_u64(j, "back", udl.st.back);
    aptus_json_int(j, "moved_now", udl.nlossy);
    if (udl.st.moved_here + udl.st.moved_by_peer) {
        aptus_json_object(j, "last");
        aptus_json_int(j, "peer", udl.last_rank);
        aptus_json_double(j, "at_s", udl.last_at);
        aptus_json_double(j, "hold_s", udl.last_hold);
        aptus_json_string(j, "seen", udl.last_here ? "here" : "by the peer");
        if (udl.st.moved_here && udl.last_here)
            aptus_json_double(j, "lost_pct", udl.last_share);
        aptus_json_close(j);
    }
    aptus_json_close(j);
}

void aptus_udl_stats_print(void)
{
    if (!udl.pct)
        return;
    printf("[aptus stats] rank %d: ud-sr: lossy paths (APTUS_UD_LOSS_MOVE=%d %%): datagrams recovered by a "
           "retransmission %" PRIu64
           " (samples of them not judged: datagrams dropped on arrival here meanwhile %" PRIu64
           "); peers moved off the connections %" PRIu64 " (seen here) %" PRIu64 " (told), holds renewed %" PRIu64
           ", back %" PRIu64 ", moved now %d",
           aptus_rt.rank, udl.pct, aptus_rel_stats(&aptus_ud.eng)->recovered, udl.st.overruns, udl.st.moved_here,
           udl.st.moved_by_peer, udl.st.renewed, udl.st.back, udl.nlossy);
    if (udl.st.moved_here + udl.st.moved_by_peer)
        printf("; last: rank %d at %.3f s for %.0f ms (%s)", udl.last_rank, udl.last_at, udl.last_hold * 1000,
               udl.last_here ? "seen here" : "told by the peer");
    if (udl.st.moved_here && udl.last_here)
        printf(", %.1f %% of its datagrams lost", udl.last_share);
    printf("\n");
}

#else
typedef int aptus_ud_loss_unused;
#endif
