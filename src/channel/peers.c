/* Peers: per-peer records, the routes they share, endpoints opened on demand, the failure path
 * and the per-peer, per-channel statistics. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "channel/channel.h"
#include "core/errors.h"
#include "runtime/config.h"
#include "runtime/memhooks.h"
#include "runtime/runtime.h"
#include "runtime/tool.h"

struct aptus_rule_chain aptus_rules;
static struct aptus_route *routes; /* one per set of reaching channels and level of move */
int (*aptus_peer_moved)(int world_rank);
int (*aptus_peer_lossy)(int world_rank);
/* aptus_rules with the connections' small sizes left out ([0], moved 1) or every rule naming a
 * connected channel ([1], moved 2) */
static struct aptus_rule_chain moved_rules[2];
static int moved_made; /* bit per entry of moved_rules */
static void (*route_refine)(struct aptus_route *route);
int (*aptus_frame_message)(const void *hdr, uint64_t *bytes);
int aptus_peers_failed;
static void (*fail_handler)(struct aptus_peer *p, const char *why);

void aptus_route_refine_set(void (*fn)(struct aptus_route *route))
{
    route_refine = fn;
}

void aptus_peer_fail_handler_set(void (*fn)(struct aptus_peer *p, const char *why))
{
    fail_handler = fn;
}

static int connected_channel(int ch)
{
    return ch >= 0 && ch < APTUS_CH_COUNT && aptus_channels[ch] &&
           (aptus_channels[ch]->caps.flags & APTUS_CAP_CONNECTED);
}

/* The send rules for moved peers. moved 1 (small messages off their connection): each rule naming
 * a connected channel takes only the sizes above every connected channel's eager limit (there the
 * connection carries the bulk of a rendezvous; its control frames take the small sizes' route).
 * moved 2 (a lossy path): the rules naming a connected channel are left out. */
static const struct aptus_rule_chain *moved_chain(int moved)
{
    struct aptus_rule_chain *c = &moved_rules[moved - 1];
    if (moved_made & moved)
        return c;
    uint64_t small = 0;
    for (int ch = 0; ch < APTUS_CH_COUNT; ch++)
        if (connected_channel(ch) && aptus_channels[ch]->caps.eager_max > small)
            small = aptus_channels[ch]->caps.eager_max;
    *c = aptus_rules;
    for (int i = 0; i < c->n; i++) {
        struct aptus_rule *r = &c->rule[i];
        if (!connected_channel(r->channel))
            continue;
        if (moved == 2) {
            r->size_min = UINT64_MAX; /* (an empty range: the rule never applies) */
            r->size_max = 0;
        } else if (r->size_min <= small) {
            r->size_min = small + 1;
        }
    }
    moved_made |= moved;
    return c;
}

/* The route of `chain` over the channels in `reach` (bit per channel id) into r: 0, or -1 when
 * the chain does not reach every size through them. */
static int route_make(const struct aptus_rule_chain *chain, uint8_t reach, struct aptus_route *r)
{
    uint8_t can[APTUS_CH_COUNT];
    for (int c = 0; c < APTUS_CH_COUNT; c++)
        can[c] = (reach >> c) & 1;
    return aptus_rules_route(chain, aptus_rt.size, can, r) != 0 ? -1 : 0;
}

/* The shared route for peers reached by the channels in `reach` (bit per channel id), moved or
 * not (0; 1: aptus_peer_moved; 2: aptus_peer_lossy). NULL for moved 2 when the chain without the
 * connected channels does not reach every size. */
static const struct aptus_route *route_for(uint8_t reach, int moved, int world_rank)
{
    for (struct aptus_route *r = routes; r; r = r->next)
        if (r->reach == reach && r->moved == moved)
            return r;
    struct aptus_route *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    if (route_make(moved ? moved_chain(moved) : &aptus_rules, reach, r) != 0) {
        if (moved == 2) { /* the chain reaches some sizes only by a connection: the peer stays */
            free(r);
            return NULL;
        }
        /* Channels are fixed at start-up: this peer can never be reached, and every message to
         * or from it would wait forever. End the job instead of hanging. */
        char msg[320];
        snprintf(msg, sizeof msg,
                 "no channel of the send rule chain (APTUS_SEND_RULES) reaches rank %d on node %d for every "
                 "message size (channels in this build: %s; a job spanning nodes needs a network channel)",
                 world_rank, aptus_rt.node_of[world_rank], aptus_channels_available());
        free(r);
        aptus_abort_job(MPI_ERR_OTHER, msg);
    }
    r->reach = reach;
    r->moved = (uint8_t)moved;
    if (route_refine)
        route_refine(r);
    r->next = routes;
    routes = r;
    return r;
}

/* The channels that reach a process now. */
static uint8_t reach_of(int world_rank)
{
    uint8_t reach = 0;
    for (int c = 0; c < APTUS_CH_COUNT; c++)
        if (aptus_channels[c] && aptus_channels[c]->reaches(world_rank))
            reach |= (uint8_t)(1u << c);
    return reach;
}

int aptus_peer_routable(int world_rank)
{
    uint8_t reach = reach_of(world_rank);
    for (struct aptus_route *r = routes; r; r = r->next)
        if (r->reach == reach && r->moved == 0)
            return 1;
    struct aptus_route r;
    memset(&r, 0, sizeof r);
    return route_make(&aptus_rules, reach, &r) == 0;
}

struct aptus_peer *aptus_peer_create(int world_rank)
{
    struct aptus_peer *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->world_rank = world_rank;
    p->route = route_for(reach_of(world_rank), 0, world_rank);
    int stats = aptus_config.stats || __atomic_load_n(&aptus_peer_stats_on, __ATOMIC_RELAXED);
    if (stats)
        p->stats = calloc(1, sizeof *p->stats);
    if (!p->route || (stats && !p->stats)) {
        free(p->stats);
        free(p);
        return NULL;
    }
    aptus_rt.peers[world_rank] = p;
    return p;
}

void aptus_peer_reroute(struct aptus_peer *p)
{
    uint8_t reach = reach_of(p->world_rank);
    /* (another job's process is reached over UD only: never moved off connections) */
    int moved = p->world_rank >= aptus_rt.size                        ? 0
                : aptus_peer_lossy && aptus_peer_lossy(p->world_rank) ? 2
                : aptus_peer_moved && aptus_peer_moved(p->world_rank) ? 1
                                                                      : 0;
    if (p->route && p->route->reach == reach && p->route->moved == moved)
        return;
    const struct aptus_route *r = route_for(reach, moved, p->world_rank);
    if (!r && moved == 2) /* (the chain reaches some sizes only by a connection) */
        r = route_for(reach, aptus_peer_moved && aptus_peer_moved(p->world_rank) ? 1 : 0, p->world_rank);
    if (r && r != p->route) {
        int was = p->route ? p->route->moved : 0;
        p->route = r;
        if (r->moved != was)
            aptus_tool_event(APTUS_TEV_ROUTE_MOVED, p->world_rank, r->moved);
    }
}

struct aptus_ep *aptus_peer_ep_slow(struct aptus_peer *p, int chan)
{
    /* An open endpoint further down the list moves to the front: the next lookup is one test. */
    for (struct aptus_ep **pp = &p->ep; *pp; pp = &(*pp)->next) {
        struct aptus_ep *e = *pp;
        if (e->chan != chan)
            continue;
        *pp = e->next;
        e->next = p->ep;
        p->ep = e;
        return e;
    }
    struct aptus_channel *ch = aptus_channels[chan];
    struct aptus_ep *e = NULL;
    if (p->failed || !ch)
        return NULL;
    int rc = ch->ep_open(p, &e);
    if (rc == APTUS_ERR)
        aptus_peer_fail(p, ch, "cannot open an endpoint to it");
    if (rc != APTUS_OK)
        return NULL;
    e->ch = ch;
    e->peer = p;
    e->chan = (uint8_t)chan;
    e->next = p->ep;
    p->ep = e;
    p->nopen++;
    aptus_tool_event(APTUS_TEV_CHANNEL_OPENED, p->world_rank, chan);
    return e;
}

void aptus_peer_ep_close(struct aptus_ep *ep)
{
    struct aptus_peer *p = ep->peer;
    for (struct aptus_ep **pp = &p->ep; *pp; pp = &(*pp)->next) {
        if (*pp == ep) {
            *pp = ep->next;
            p->nopen--;
            int chan = ep->chan;
            ep->ch->ep_close(ep);
            aptus_tool_event(APTUS_TEV_CHANNEL_CLOSED, p->world_rank, chan);
            return;
        }
    }
}

void aptus_peer_fail(struct aptus_peer *p, const struct aptus_channel *ch, const char *why)
{
    if (p->failed)
        return;
    p->failed = 1;
    aptus_peers_failed++;
    aptus_tool_event(APTUS_TEV_PEER_FAILED, p->world_rank, ch ? aptus_channel_id_of(ch->name) : -1);
    /* Its endpoints go: every later send to it takes the slow path, which refuses a failed
     * peer, so the fast path needs no test of its own. */
    while (p->ep) {
        struct aptus_ep *e = p->ep;
        p->ep = e->next;
        e->failed = 1;
        e->ch->ep_close(e);
        p->nopen--;
    }
    char msg[384];
    snprintf(msg, sizeof msg, "channel %s gave up on rank %d: %s", ch ? ch->name : "?", p->world_rank, why);
    if (!aptus_config.peer_failure_errors)
        aptus_abort_job_lost(MPI_ERR_OTHER, p->world_rank, msg);
    if (fail_handler)
        fail_handler(p, msg);
}

void aptus_peers_finalize(void)
{
    for (int r = 0; r < aptus_rt.nprocs && aptus_rt.peers; r++) {
        struct aptus_peer *p = aptus_rt.peers[r];
        if (!p)
            continue;
        while (p->ep) {
            struct aptus_ep *e = p->ep;
            p->ep = e->next;
            e->ch->ep_close(e);
        }
        free(p->stats);
        free(p);
        aptus_rt.peers[r] = NULL;
    }
    while (routes) {
        struct aptus_route *r = routes;
        routes = r->next;
        free(r);
    }
    moved_made = 0;
}

int aptus_peer_stats_on;

int aptus_peer_stats_enable(void)
{
    __atomic_store_n(&aptus_peer_stats_on, 1, __ATOMIC_RELAXED);
    for (int r = 0; aptus_rt.peers && r < aptus_rt.nprocs; r++) {
        struct aptus_peer *p = aptus_rt.peers[r];
        if (!p || p->stats)
            continue;
        struct aptus_peer_stats *s = calloc(1, sizeof *s);
        if (!s)
            return -1;
        __atomic_store_n(&p->stats, s, __ATOMIC_RELEASE);
    }
    return 0;
}

static size_t channel_memory(int c)
{
    return aptus_channels[c] && aptus_channels[c]->memory_in_use ? aptus_channels[c]->memory_in_use() : 0;
}

void aptus_channel_stats_print(void)
{
    size_t mem = 0;
    char parts[256] = "";
    for (int c = 0; c < APTUS_CH_COUNT; c++) {
        size_t m = channel_memory(c);
        mem += m;
        size_t used = strlen(parts);
        if (m && used < sizeof parts)
            snprintf(parts + used, sizeof parts - used, "%s%s %zu", used ? ", " : "", aptus_channel_name(c), m);
    }
    printf("[aptus stats] rank %d: channel memory %zu bytes (%s)\n", aptus_rt.rank, mem, mem ? parts : "none");
    for (int c = 0; c < APTUS_CH_COUNT; c++)
        if (aptus_channels[c] && aptus_channels[c]->stats_print)
            aptus_channels[c]->stats_print();
    printf("[aptus stats] rank %d: %-6s %-8s %12s %16s\n", aptus_rt.rank, "peer", "channel", "messages", "bytes");
    for (int r = 0; r < aptus_rt.nprocs; r++) {
        struct aptus_peer *p = aptus_rt.peers[r];
        if (!p || !p->stats)
            continue;
        for (int c = 0; c < APTUS_CH_COUNT; c++)
            if (p->stats->msgs[c])
                printf("[aptus stats] rank %d: %-6d %-8s %12llu %16llu\n", aptus_rt.rank, r, aptus_channel_name(c),
                       (unsigned long long)p->stats->msgs[c], (unsigned long long)p->stats->bytes[c]);
    }
    /* The shares of each channel in what this rank sent (seed 000, Table 2 / Figure 7). */
    uint64_t msgs[APTUS_CH_COUNT] = { 0 }, bytes[APTUS_CH_COUNT] = { 0 }, tm = 0, tb = 0;
    for (int r = 0; r < aptus_rt.nprocs; r++) {
        struct aptus_peer *p = aptus_rt.peers[r];
        for (int c = 0; p && p->stats && c < APTUS_CH_COUNT; c++) {
            msgs[c] += p->stats->msgs[c];
            bytes[c] += p->stats->bytes[c];
            tm += p->stats->msgs[c];
            tb += p->stats->bytes[c];
        }
    }
    char line[512] = "";
    for (int c = 0; c < APTUS_CH_COUNT; c++) {
        size_t used = strlen(line);
        if (msgs[c] && used < sizeof line)
            snprintf(line + used, sizeof line - used, "%s%s %.1f%% of messages, %.1f%% of bytes", used ? "; " : "",
                     aptus_channel_name(c), 100.0 * (double)msgs[c] / (double)tm,
                     tb ? 100.0 * (double)bytes[c] / (double)tb : 0.0);
    }
    if (tm)
        printf("[aptus stats] rank %d: channel shares of %llu messages sent: %s\n", aptus_rt.rank,
               (unsigned long long)tm, line);
}

int aptus_counter_lookup(const struct aptus_counter *t, size_t n, const char *name, uint64_t *value)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(name, t[i].name)) {
            *value = t[i].value;
            return 0;
        }
    return -1;
}

int aptus_channel_counter(const char *name, uint64_t *value)
{
    if (!strcmp(name, "memory")) {
        size_t mem = 0;
        for (int c = 0; c < APTUS_CH_COUNT; c++)
            mem += channel_memory(c);
        *value = mem;
        return 0;
    }
    if (!strncmp(name, "memory.", 7)) {
        int c = aptus_channel_id_of(name + 7);
        if (c < 0)
            return -1;
        *value = channel_memory(c);
        return 0;
    }
    if (!strcmp(name, "memhooks.active")) {
        *value = (uint64_t)aptus_memhooks_active();
        return 0;
    }
    if (!strcmp(name, "memhooks.reports")) {
        *value = aptus_memhooks_reports();
        return 0;
    }
    if (!strncmp(name, "msgs.", 5)) { /* (the peers' statistics: APTUS_STATS only) */
        int c = aptus_channel_id_of(name + 5);
        if (c < 0 || !aptus_config.stats)
            return -1;
        uint64_t n = 0;
        for (int r = 0; r < aptus_rt.nprocs; r++)
            if (aptus_rt.peers[r] && aptus_rt.peers[r]->stats)
                n += aptus_rt.peers[r]->stats->msgs[c];
        *value = n;
        return 0;
    }
    for (int c = 0; c < APTUS_CH_COUNT; c++)
        if (aptus_channels[c] && aptus_channels[c]->counter && aptus_channels[c]->counter(name, value) == 0)
            return 0;
    return -1;
}

const char *aptus_channel_counter_names(void)
{
    return "memory, memory.CHANNEL (self, smp, ud-sr, ud-zcopy, ud-copy, rc-sr, rc-fp, rc-rdma), msgs.CHANNEL "
           "(APTUS_STATS=1), smp.jobs_blocks_out, smp.jobs_blocks_in, smp.jobs_frames_in, memhooks.active, "
           "memhooks.reports, rc.connections, rc.opened, rc.refused_limit, rc.frames_out, rc.frames_injected, "
           "rc.frames_in, "
           "rc.idle_closed, rc.idle_closed_here, rc.closing, rcache.hits, "
           "rcache.misses, rcache.evictions, rcache.invalidations, rcache.failures, rcache.entries, rcache.bytes, "
           "rcache.in_use, rdma.writes, rdma.reads, rcfp.paths, rcfp.blocks, rcfp.asked, rcfp.refused, rcfp.frames, "
           "rcfp.msgs, rcfp.via, rcfp.msgs_via, rcfp.received, rcfp.no_room, rcfp.credits, rcfp.credit_asks, "
           "rcfp.wraps, rcfp.memory, rcfp.released, rcfp.returned, rcfp.resized, ud.datagrams, ud.retx_timeout, "
           "ud.retx_fast, ud.probes, ud.acks_sent, ud.delivered, ud.duplicates, ud.out_of_order, ud.out_of_window, "
           "ud.crc_failures, ud.timeouts, ud.recovered, ud.loss_moves, "
           "ud.loss_moves_here, ud.loss_renewed, ud.loss_back, ud.loss_overruns, ud.lossy";
}
