/* Stalls of RC connections, and small messages moved off a connection that stalls.
 *
 * A reliable connection recovers a lost packet in one of two ways: from the acknowledgements of
 * the packets sent after it (tcp's duplicate acknowledgements and SACK, RC's sequence-error NAK),
 * at once; or, when nothing follows it, on its retransmission timer -- tcp waits at least 200 ms
 * (more with one packet out). The traffic of an MPI job is mostly the second kind: a request, then
 * nothing until its answer. So under 1 % loss a ping-pong of 15 us over such a connection
 * averages a millisecond and more (measured: 2054 us for 8 bytes, where UD's own engine gives 14).
 *
 * Kicks: a connection on which this rank sent something that is answered (a data frame, a read,
 * a write completing on delivery), from which nothing came back, and on which nothing more went
 * for APTUS_RC_KICK_US/2 .. APTUS_RC_KICK_US, gets a header-only frame: if the last packet was
 * lost, the kick's arrival makes the peer's side acknowledge out of order and the lost packet is
 * sent again within a round trip. More follow while nothing comes, 1, 2, 4 ... half periods apart,
 * 8 in all (the resent packet, or the kick, may be lost too). A peer that is only slow (computing,
 * or waiting for its core on a full node) costs at most 8 frames of 16 bytes per quiet spell, one
 * per short one. No clock is read per frame: a timer every APTUS_RC_KICK_US/2, armed while some
 * connection is watched, looks at the counters.
 *
 * Stalls are seen by the kick's receiver: frames held up arrive together with the kick that freed
 * them (see aptus_rcs_pass). A connection with APTUS_RC_MOVE_STALLS of them within a second is
 * lossy, and its small messages -- rc-sr's
 * and rc-fp's frames -- go by the next rule of the send chain (UD, whose own engine retransmits
 * in microseconds) for APTUS_RC_MOVE_HOLD, doubled at each move of the connection (64 times at
 * most). The peer is told (RC_F_MOVE over UD) and moves its side for the same time: loss is the
 * path's. Large messages stay on the connection (rc-rdma: a stream of many packets recovers from
 * its own acknowledgements). The message layer's sequence numbers keep the order across the
 * change, as for any reroute. */
#ifdef APTUS_HAVE_LIBFABRIC

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "channel/rc/rc_int.h"
#include "channel/stats_json.h"
#include "runtime/config.h"
#include "runtime/json.h"
#include "runtime/progress.h"

/* A watched connection's phase (rc_ep.w_phase): not watched; watched; kicked once, ...
 * RCS_KICKED + RCS_KICKS - 1 times (a kick whose packet, or the resent one, was lost too: the next
 * one shows that loss); not watched ever (kicks off). */
enum { RCS_IDLE = 0, RCS_WATCH = 1, RCS_KICKED = 2, RCS_OFF = -1 };
#define RCS_KICKS 8

#define RCS_MOVE_DOUBLINGS 6

static struct {
    int on;
    double half;     /* APTUS_RC_KICK_US / 2, in seconds */
    int move_stalls; /* APTUS_RC_MOVE_STALLS (0: never) */
    double hold;     /* APTUS_RC_MOVE_HOLD, in seconds */
    struct rc_ep *watch;
    struct aptus_timer look, back;
    int nmoved;
    int responsive;   /* this rank was polling (or woken by arrivals) in this pass */
    double last_pass; /* time of the last rc-sr pass */
    struct {
        uint64_t kicks, kick_nobuf, kicks_in, stalls, moved_here, moved_by_peer, back;
    } st;
    /* the last move, for the statistics */
    int last_rank, last_here;
    double last_at, last_hold;
} rcs;

static void unlink_watch(struct rc_ep *e)
{
    for (struct rc_ep **pp = &rcs.watch; *pp; pp = &(*pp)->next_watch)
        if (*pp == e) {
            *pp = e->next_watch;
            break;
        }
    e->next_watch = NULL;
}

static void back_arm(void);

/* Small messages to e's peer (not moved now: the callers check) leave the connection until
 * now + hold; here: this rank saw the stalls (the peer is told). */
static void move(struct rc_ep *e, double now, double hold, int here)
{
    e->moved_until = now + hold;
    rcs.nmoved++;
    e->moves++;
    if (here)
        rcs.st.moved_here++;
    else
        rcs.st.moved_by_peer++;
    rcs.last_rank = e->rank;
    rcs.last_here = here;
    rcs.last_at = now - aptus_rt.t0;
    rcs.last_hold = hold;
    if (here) {
        uint8_t f[8] = { RC_F_MOVE };
        uint32_t ms = (uint32_t)(hold * 1000 + 0.5);
        memcpy(f + 4, &ms, sizeof ms);
        (void)aptus_rc_ctl(e->rank, f, sizeof f); /* not told: its side finds the stalls itself */
    }
    struct aptus_peer *p = aptus_peer_get(e->rank);
    if (p)
        aptus_peer_reroute(p);
    back_arm();
}

static void stall(struct rc_ep *e, double now)
{
    rcs.st.stalls++;
    if (now - e->stall_t0 > 1.0) {
        e->stall_t0 = now;
        e->stalls = 0;
    }
    if (++e->stalls < rcs.move_stalls || rcs.move_stalls <= 0 || e->moved_until > 0)
        return;
    int d = e->moves < RCS_MOVE_DOUBLINGS ? e->moves : RCS_MOVE_DOUBLINGS;
    move(e, now, rcs.hold * (double)(1 << d), 1);
    e->stalls = 0;
}

/* Every half period while connections are watched: kicks, and stalls seen. */
static void look(struct aptus_timer *t)
{
    if (aptus_rc_finishing()) { /* (MPI_Finalize: no kicks after its barrier) */
        while (rcs.watch) {
            struct rc_ep *e = rcs.watch;
            rcs.watch = e->next_watch;
            e->next_watch = NULL;
            e->w_phase = RCS_IDLE;
        }
        return;
    }
    double now = aptus_wtime();
    for (struct rc_ep **pp = &rcs.watch; *pp;) {
        struct rc_ep *e = *pp;
        int drop = 0;
        if (aptus_rc_up(e->rank) != e) {
            drop = 1;
        } else if (e->in_n != e->w_in) { /* answered */
            drop = e->out_n == e->w_out;
            e->w_in = e->in_n;
            e->w_out = e->out_n;
            e->w_phase = RCS_WATCH;
        } else if (e->out_n != e->w_out) { /* still sending */
            e->w_out = e->out_n;
            e->w_phase = RCS_WATCH;
        } else if (aptus_rc_queued(e->rank)) { /* frames wait for room: flow control holds them */
            e->w_phase = RCS_WATCH;
            e->w_skip = 0;
        } else if (e->w_phase < RCS_KICKED + RCS_KICKS) { /* a whole half period quiet both ways */
            /* the first kick at once, the next ones 2, 4, 8 ... looks apart */
            int k = e->w_phase - RCS_WATCH;
            if (k > 0 && ++e->w_skip < (1 << (k - 1))) {
                pp = &e->next_watch;
                continue;
            }
            if (aptus_rc_kick(e) == 0) {
                rcs.st.kicks++;
                e->w_phase++;
                e->w_skip = 0;
            } else {
                rcs.st.kick_nobuf++; /* next time */
            }
        } else { /* kicked, and still nothing: the peer is busy */
            drop = 1;
        }
        if (drop) {
            *pp = e->next_watch;
            e->next_watch = NULL;
            e->w_phase = RCS_IDLE;
        } else {
            pp = &e->next_watch;
        }
    }
    if (rcs.watch)
        aptus_timer_arm(t, now + rcs.half);
}

/* The peer's side. A kick arrives right after the frames it follows: when they were held up (a
 * packet lost, resent once the kick's acknowledgement showed the hole), they come together, in
 * one progress pass (or two: rc-fp's frames are taken by a poller of their own). Together, while
 * this rank was polling or had just been woken by them, means they were late: a stall. (A rank
 * that was away -- computing, waiting for its core -- finds everything together and proves
 * nothing.) */
void aptus_rcs_pass(double now)
{
    /* (on a node with more ranks than cores a rank waits for its core at any moment: nothing
     * there tells a held-up frame from a rank that ran late, and no stall is counted) */
    rcs.responsive =
        (now - rcs.last_pass < rcs.half || aptus_progress_woke == aptus_progress_pass) && aptus_wait_spin_cap < 0;
    rcs.last_pass = now;
}

/* Frames at most that come with a kick for a stall: a lost packet holds up the last few frames of
 * an exchange; a stream held by flow control (the receiver slow to read) brings many. */
#define RCS_LATE_FRAMES 4

static void late(struct rc_ep *e)
{
    e->kick_pending = 0;
    if (!rcs.responsive || aptus_rc_up(e->rank) != e || e->rx_in_pass > RCS_LATE_FRAMES)
        return;
    /* ... and the pass was not held up itself (the rank losing its core in it, while more came) */
    double now = aptus_wtime();
    if (now - rcs.last_pass < rcs.half / 2)
        stall(e, now);
}

void aptus_rcs_kick_in(struct rc_ep *e)
{
    rcs.st.kicks_in++;
    if (!rcs.on)
        return;
    if (e->rx_pass && e->rx_pass + 1 >= aptus_progress_pass) {
        late(e);
        return;
    }
    e->kick_pass = aptus_progress_pass;
    e->kick_pending = 1;
}

void aptus_rcs_late(struct rc_ep *e)
{
    if (e->kick_pass + 1 >= aptus_progress_pass)
        late(e);
    else
        e->kick_pending = 0; /* the frame is the kick's answer, or later: not held up */
}

void aptus_rcs_watch(struct rc_ep *e)
{
    if (!rcs.on) {
        e->w_phase = RCS_OFF;
        return;
    }
    e->w_phase = RCS_WATCH;
    e->w_out = e->out_n;
    e->w_in = e->in_n;
    e->w_skip = 0;
    e->next_watch = rcs.watch;
    rcs.watch = e;
    if (!rcs.look.armed)
        aptus_timer_arm(&rcs.look, aptus_wtime() + rcs.half);
}

void aptus_rcs_forget(struct rc_ep *e)
{
    if (e->w_phase > 0)
        unlink_watch(e);
    if (e->w_phase != RCS_OFF)
        e->w_phase = RCS_IDLE;
    if (e->moved_until > 0) {
        e->moved_until = 0;
        rcs.nmoved--;
    }
}

int aptus_rc_moved(int rank)
{
    if (!rcs.nmoved)
        return 0;
    struct rc_ep *e = aptus_rc_up(rank);
    return e && e->moved_until > 0;
}

/* Moved connections whose time is up take their small messages again. */
static void back(struct aptus_timer *t)
{
    (void)t;
    double now = aptus_wtime();
    for (int r = 0; r < aptus_rt.nprocs && rcs.nmoved; r++) {
        struct rc_ep *e = aptus_rc_up(r);
        if (!e || !(e->moved_until > 0) || e->moved_until > now)
            continue;
        e->moved_until = 0;
        e->stalls = 0;
        rcs.nmoved--;
        rcs.st.back++;
        struct aptus_peer *p = aptus_peer_get(r);
        if (p)
            aptus_peer_reroute(p);
    }
    back_arm();
}

static void back_arm(void)
{
    double next = 0;
    for (int r = 0; r < aptus_rt.nprocs && rcs.nmoved; r++) {
        struct rc_ep *e = aptus_rc_up(r);
        if (e && e->moved_until > 0 && (next == 0 || e->moved_until < next))
            next = e->moved_until;
    }
    if (next > 0)
        aptus_timer_arm(&rcs.back, next);
    else if (rcs.back.armed)
        aptus_timer_cancel(&rcs.back);
}

/* The peer moved its side: this side follows, for as long. */
static void on_move(struct aptus_peer *from, const void *frame, size_t len)
{
    uint32_t ms;
    if (len < 8 || !rcs.on)
        return;
    memcpy(&ms, (const char *)frame + 4, sizeof ms);
    struct rc_ep *e = aptus_rc_up(from->world_rank);
    if (!e || e->moved_until > 0)
        return;
    move(e, aptus_wtime(), ms / 1000.0, 0);
}

void aptus_rcs_setup(void)
{
    memset(&rcs, 0, sizeof rcs);
    aptus_am_register(RC_F_MOVE, on_move);
    rcs.on = aptus_config.rc_kick_us > 0;
    rcs.half = aptus_config.rc_kick_us / 2e6;
    rcs.move_stalls = aptus_config.rc_move_stalls;
    rcs.hold = aptus_config.rc_move_hold / 1000.0;
    rcs.look.fire = look;
    rcs.back.fire = back;
    if (rcs.on && rcs.move_stalls > 0)
        aptus_peer_moved = aptus_rc_moved;
}

void aptus_rcs_finalize(void)
{
    if (rcs.look.armed)
        aptus_timer_cancel(&rcs.look);
    if (rcs.back.armed)
        aptus_timer_cancel(&rcs.back);
    rcs.watch = NULL;
    rcs.nmoved = 0;
    aptus_peer_moved = NULL;
}

void aptus_rcs_stats_print(void)
{
    if (!rcs.on)
        return;
    printf("[aptus stats] rank %d: rc-sr: stalls: kicks sent %" PRIu64 " (no buffer %" PRIu64 "), received %" PRIu64
           "; stalls seen %" PRIu64 " (the peer's frames came only with its kick); small messages moved off a "
           "connection %" PRIu64 " times (%" PRIu64 " told by the peer), back %" PRIu64 ", moved now %d\n",
           aptus_rt.rank, rcs.st.kicks, rcs.st.kick_nobuf, rcs.st.kicks_in, rcs.st.stalls,
           rcs.st.moved_here + rcs.st.moved_by_peer, rcs.st.moved_by_peer, rcs.st.back, rcs.nmoved);
    if (rcs.st.moved_here + rcs.st.moved_by_peer)
        printf("[aptus stats] rank %d: rc-sr: last move: peer %d at %.3f s, for %.3f s: %s\n", aptus_rt.rank,
               rcs.last_rank, rcs.last_at, rcs.last_hold,
               rcs.last_here ? "this rank saw the connection stall (APTUS_RC_MOVE_STALLS in a second)"
                             : "the peer saw the connection stall and said so");
}

/* The statistics document (channel/stats_json.h): what aptus_rcs_stats_print prints. */
void aptus_rcs_stats_json(struct aptus_json *j)
{
    if (!rcs.on)
        return;
    aptus_json_object(j, "rc_stall");
    aptus_json_u64(j, "kicks_sent", rcs.st.kicks);
    aptus_json_u64(j, "kicks_no_buffer", rcs.st.kick_nobuf);
    aptus_json_u64(j, "kicks_received", rcs.st.kicks_in);
    aptus_json_u64(j, "stalls_seen", rcs.st.stalls);
    aptus_json_u64(j, "moves", rcs.st.moved_here + rcs.st.moved_by_peer);
    aptus_json_u64(j, "moves_told_by_peer", rcs.st.moved_by_peer);
    aptus_json_u64(j, "back", rcs.st.back);
    aptus_json_int(j, "moved_now", rcs.nmoved);
    if (rcs.st.moved_here + rcs.st.moved_by_peer) {
        aptus_json_object(j, "last");
        aptus_json_int(j, "peer", rcs.last_rank);
        aptus_json_double(j, "at_s", rcs.last_at);
        aptus_json_double(j, "hold_s", rcs.last_hold);
        aptus_json_string(j, "seen", rcs.last_here ? "here" : "by the peer");
        aptus_json_close(j);
    }
    aptus_json_close(j);
}

int aptus_rcs_counter(const char *name, uint64_t *value)
{
    /* rc.moves.N: moves of the connection to rank N (0 without one) */
    if (!strncmp(name, "rc.moves.", 9) && name[9] >= '0' && name[9] <= '9') {
        char *end;
        long r = strtol(name + 9, &end, 10);
        if (*end || r >= aptus_rt.size)
            return -1;
        struct rc_ep *e = aptus_rc_up((int)r);
        *value = e ? (uint64_t)e->moves : 0;
        return 0;
    }
    const struct aptus_counter t[] = { { "rc.kicks", rcs.st.kicks },
                                       { "rc.kicks_in", rcs.st.kicks_in },
                                       { "rc.stalls", rcs.st.stalls },
                                       { "rc.moved", rcs.st.moved_here + rcs.st.moved_by_peer },
                                       { "rc.moved_here", rcs.st.moved_here },
                                       { "rc.moved_back", rcs.st.back },
                                       { "rc.moved_now", (uint64_t)rcs.nmoved } };
    return aptus_counter_lookup(t, sizeof t / sizeof t[0], name, value);
}

#else
typedef int aptus_rc_stall_unused;
#endif
