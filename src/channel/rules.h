/* Send rule chains (seed 000, section 5.3): an ordered list of {condition, channel}; for each
 * message the first rule whose condition holds and whose channel can reach the peer wins. */
#ifndef APTUS_CHANNEL_RULES_H
#define APTUS_CHANNEL_RULES_H

#include <stddef.h>
#include <stdint.h>

enum aptus_channel_id {
    APTUS_CH_SELF = 0,
    APTUS_CH_SMP,
    APTUS_CH_UD_SR,
    APTUS_CH_UD_ZCOPY,
    APTUS_CH_UD_COPY,
    APTUS_CH_RC_SR,
    APTUS_CH_RC_FP,
    APTUS_CH_RC_RDMA,
    APTUS_CH_COUNT
};

#define APTUS_RULES_MAX 16

struct aptus_rule {
    uint64_t size_min, size_max; /* message bytes, inclusive */
    int ranks_min, ranks_max;    /* job size, inclusive */
    int channel;                 /* enum aptus_channel_id */
    int unconditional;           /* written as "*" or a bare channel name */
    int threshold;               /* allocation rules: messages before the channel is asked for */
};

struct aptus_rule_chain {
    int n;
    struct aptus_rule rule[APTUS_RULES_MAX];
};

/* A chain specialised for the peers reached the same way: the rules that can reach them,
 * reduced to size ranges, each with its channel and (filled by the message layer's protocol
 * selector) its protocol. Lookup is a short scan. Routes are shared between peers. */
#define APTUS_ROUTE_MAX (2 * APTUS_RULES_MAX)
struct aptus_route {
    uint8_t n;
    uint8_t reach; /* bit mask of the channels that reach these peers */
    uint8_t moved; /* for peers whose small messages are off their connection (1: aptus_peer_moved) or all
                      of them (2: aptus_peer_lossy) */
    uint8_t channel[APTUS_ROUTE_MAX];
    uint8_t proto[APTUS_ROUTE_MAX]; /* message layer's protocol for the range */
    uint64_t size_min[APTUS_ROUTE_MAX];
    uint64_t size_max[APTUS_ROUTE_MAX];
    struct aptus_route *next; /* in the cache of routes */
};

/* The built-in chains that APTUS_SEND_RULES=auto and APTUS_ALLOC_RULES=auto stand for
 * (docs/TUNING.md, "The default chain"): over RDMA hardware (the RC provider is verbs) small
 * messages take the fast path, then rc-sr; over a sockets provider (tcp) ud-sr, whose datagrams
 * beat a tcp connection for small messages, and a connection is asked for only by large ones
 * (rc-rdma). */
#define APTUS_RULES_AUTO_RDMA    "self;smp;size<=8K:rc-fp;size<=8K:rc-sr;rc-rdma;size<=8K:ud-sr;ud-zcopy"
#define APTUS_ALLOC_AUTO_RDMA    "size<=8K:rc-fp;*:rc-sr"
#define APTUS_RULES_AUTO_SOCKETS "self;smp;size<=8K:ud-sr;rc-rdma;ud-zcopy"
#define APTUS_ALLOC_AUTO_SOCKETS "size>8K:rc-rdma"
/* The send chain APTUS_SEND_RULES's value stands for: `text` itself, or the built-in chain of
 * `auto` for hardware RDMA (rdma != 0) or a sockets provider. */
const char *aptus_rules_text(const char *text, int rdma);
/* The allocation rules APTUS_ALLOC_RULES's value stands for with the send chain `send`: `text`
 * itself, or for `auto` the rules that suit the chain: a connection (and a fast path) asked for
 * by the small messages when the chain sends them by rc-sr or rc-fp, else by the large ones. */
const char *aptus_alloc_rules_text(const char *text, const struct aptus_rule_chain *send);
/* Whether a rule variable's value is `auto` (blanks and letter case aside). */
int aptus_rules_is_auto(const char *text);
/* Which rule variables were auto as read (1: APTUS_SEND_RULES, 2: APTUS_ALLOC_RULES): set at
 * start-up (api/startup.c), where the built-in chains are chosen. */
extern int aptus_rules_auto;
/* The built-in chains for the fabric, once it is looked at: with the send rules at auto, the
 * sockets chains (APTUS_RULES_AUTO_SOCKETS, and its allocation rules when those are at auto too)
 * where the RC provider is not RDMA hardware; else nothing changes. */
void aptus_rules_fit_fabric(void);

const char *aptus_channel_name(int id);
/* The id of a channel name (case-insensitive), or -1. */
int aptus_channel_id_of(const char *name);
/* Parses e.g. "self;smp;size<=8K&ranks<=64:rc-fp;size<2048:ud-sr;*:rc-rdma".
 * Grammar: RULE ((';' | ',') RULE)*, RULE = [COND ':'] CHANNEL, COND = '*' | TERM ('&' TERM)*,
 * TERM = ('size'|'ranks') ('<'|'<='|'>'|'>='|'==') NUMBER[K|M|G]. A bare CHANNEL is unconditional.
 * The last rule must be unconditional. Returns 0, or -1 with a message naming the rule and
 * the problem in err. */
int aptus_rules_parse(const char *text, struct aptus_rule_chain *out, char *err, size_t errlen);
/* The send chain can start a job: its last rule names a channel that reaches every peer from
 * the start (not one opened on demand). 0, or -1 with a message naming the variable. */
int aptus_rules_check_start(const struct aptus_rule_chain *c, const char *text, char *err, size_t errlen);

/* Allocation rules (APTUS_ALLOC_RULES; seed 000 section 5.4): which messages exchanged with a
 * peer count toward opening which connected channel to it, and after how many. Same grammar
 * as the send rules, with CHANNEL an RC channel optionally followed by '@' N (the threshold,
 * 1..65534; default_threshold when left out); the last rule need not be unconditional (a
 * message no rule takes does not count). 0, or -1 with a message naming the rule. */
int aptus_alloc_rules_parse(const char *text, int default_threshold, struct aptus_rule_chain *out, char *err,
                            size_t errlen);
/* The index of the first allocation rule that takes a message of `bytes` in a job of nranks, or -1. */
int aptus_alloc_rules_find(const struct aptus_rule_chain *c, uint64_t bytes, int nranks);
/* The same among the rules not naming `channel` (rc.c: the connection rules, rc-fp's apart). */
int aptus_alloc_rules_find_except(const struct aptus_rule_chain *c, uint64_t bytes, int nranks, int channel);

/* Specialises the chain for a peer. reachable[ch] says whether channel ch can reach this peer
 * (self only for oneself, smp only on the same node, ...). Returns 0, or -1 if no rule reaches
 * the peer for some size. */
int aptus_rules_route(const struct aptus_rule_chain *c, int nranks, const uint8_t reachable[APTUS_CH_COUNT],
                      struct aptus_route *route);
/* The range of a message of `bytes` bytes (-1 if none). Ranges are in size order, so the
 * first whose top is not below the size is the one. */
static inline int aptus_route_find(const struct aptus_route *r, uint64_t bytes)
{
    for (unsigned i = 0; i < r->n; i++)
        if (bytes <= r->size_max[i])
            return bytes >= r->size_min[i] ? (int)i : -1;
    return -1;
}
/* The channel for a message of `bytes` bytes (-1 if none). */
static inline int aptus_route_pick(const struct aptus_route *r, uint64_t bytes)
{
    int i = aptus_route_find(r, bytes);
    return i < 0 ? -1 : r->channel[i];
}

#endif
