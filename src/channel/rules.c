/* Send rule chains (seed 000, section 5.3): parsing the text form, and specialising a chain
 * for one peer into disjoint size ranges so that choosing a channel per message is a short
 * scan (see rules.h for the grammar). */
#include "channel/rules.h"
#include "channel/channel.h"
#include "fabric/fabric.h"
#include "runtime/config.h"
#include "runtime/text.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static const char *const channel_names[APTUS_CH_COUNT] = {
    [APTUS_CH_SELF] = "self",         [APTUS_CH_SMP] = "smp",         [APTUS_CH_UD_SR] = "ud-sr",
    [APTUS_CH_UD_ZCOPY] = "ud-zcopy", [APTUS_CH_UD_COPY] = "ud-copy", [APTUS_CH_RC_SR] = "rc-sr",
    [APTUS_CH_RC_FP] = "rc-fp",       [APTUS_CH_RC_RDMA] = "rc-rdma",
};

const char *aptus_channel_name(int id)
{
    if (id < 0 || id >= APTUS_CH_COUNT)
        return "unknown";
    return channel_names[id];
}

int aptus_channel_id_of(const char *name)
{
    for (int id = 0; id < APTUS_CH_COUNT; id++)
        if (aptus_text_eq_nocase(name, strlen(name), channel_names[id]))
            return id;
    return -1;
}

/* ---- parsing ------------------------------------------------------------------------ */

/* A piece of the input: [s, s+n). */
struct span {
    const char *s;
    size_t n;
};

static int is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static struct span trim(struct span t)
{
    while (t.n > 0 && is_blank(t.s[0])) {
        t.s++;
        t.n--;
    }
    while (t.n > 0 && is_blank(t.s[t.n - 1]))
        t.n--;
    return t;
}

/* Case-insensitive: channel names may be written as in the paper (RC-FP, UD-ZCOPY). */
static int span_eq(struct span t, const char *word)
{
    return aptus_text_eq_nocase(t.s, t.n, word);
}

/* Longest piece of user text quoted in a message. */
#define QUOTE_MAX 80

/* The variable being parsed, for messages. */
static const char *rules_var = "APTUS_SEND_RULES";

/* Writes "VARIABLE: rule N 'TEXT': " + the formatted problem. */
#define RULE_ERROR(...)                                                                                                \
    do {                                                                                                               \
        int used_ = snprintf(err, errlen, "%s: rule %d '%.*s': ", rules_var, index + 1,                                \
                             (int)(rule.n > QUOTE_MAX ? QUOTE_MAX : rule.n), rule.s);                                  \
        if (used_ >= 0 && (size_t)used_ < errlen)                                                                      \
            snprintf(err + used_, errlen - (size_t)used_, __VA_ARGS__);                                                \
    } while (0)

/* NUMBER[K|M|G] (powers of 1024). Returns 0, 1 if not a number, 2 if too large. */
static int parse_number(struct span t, uint64_t *out)
{
    return aptus_text_bytes(t.s, t.n, out);
}

enum cmp { CMP_LT, CMP_LE, CMP_GT, CMP_GE, CMP_EQ };

/* Narrows [*lo, *hi] by "x CMP v"; the result may be empty (lo > hi). */
static void narrow(uint64_t *lo, uint64_t *hi, enum cmp op, uint64_t v)
{
    uint64_t a = *lo, b = *hi;
    switch (op) {
    case CMP_LT:
        if (v == 0) {
            a = 1;
            b = 0;
        } else if (v - 1 < b)
            b = v - 1;
        break;
    case CMP_LE:
        if (v < b)
            b = v;
        break;
    case CMP_GT:
        if (v == UINT64_MAX) {
            a = 1;
            b = 0;
        } else if (v + 1 > a)
            a = v + 1;
        break;
    case CMP_GE:
        if (v > a)
            a = v;
        break;
    case CMP_EQ:
        if (v > a)
            a = v;
        if (v < b)
            b = v;
        break;
    }
    *lo = a;
    *hi = b;
}

/* A rule; with_threshold: CHANNEL may be followed by '@' N (allocation rules), default_threshold
 * when it is not. */
static int parse_rule(struct span rule, int index, struct aptus_rule *r, int with_threshold, int default_threshold,
                      char *err, size_t errlen)
{
    struct span cond = { rule.s, 0 }, chan = rule;
    const char *colon = memchr(rule.s, ':', rule.n);
    int has_cond = colon != NULL;
    if (has_cond) {
        cond.n = (size_t)(colon - rule.s);
        chan.s = colon + 1;
        chan.n = rule.n - cond.n - 1;
    }
    cond = trim(cond);
    chan = trim(chan);
    r->threshold = 0;
    if (with_threshold) {
        const char *at = memchr(chan.s, '@', chan.n);
        r->threshold = default_threshold;
        if (at) {
            struct span num = trim((struct span){ at + 1, (size_t)(chan.s + chan.n - at - 1) });
            uint64_t v = 0;
            if (parse_number(num, &v) != 0 || v < 1 || v > 65534) {
                RULE_ERROR("threshold '%.*s' after '@' must be a number 1..65534",
                           (int)(num.n > QUOTE_MAX ? QUOTE_MAX : num.n), num.s);
                return -1;
            }
            r->threshold = (int)v;
            chan.n = (size_t)(at - chan.s);
            chan = trim(chan);
        }
    }

    /* The channel. */
    if (chan.n == 0) {
        RULE_ERROR("no channel after ':'");
        return -1;
    }
    r->channel = -1;
    for (int c = 0; c < APTUS_CH_COUNT; c++)
        if (span_eq(chan, channel_names[c]))
            r->channel = c;
    if (r->channel < 0) {
        char known[128] = "";
        for (int c = 0; c < APTUS_CH_COUNT; c++) {
            strcat(known, c ? ", " : "");
            strcat(known, channel_names[c]);
        }
        RULE_ERROR("unknown channel '%.*s' (known: %s)", (int)(chan.n > QUOTE_MAX ? QUOTE_MAX : chan.n), chan.s, known);
        return -1;
    }

    /* The condition. */
    uint64_t size_lo = 0, size_hi = UINT64_MAX;
    uint64_t ranks_lo = 1, ranks_hi = INT_MAX;
    r->unconditional = 0;
    if (!has_cond) {
        r->unconditional = 1;
    } else if (cond.n == 0) {
        RULE_ERROR("empty condition before ':' (write '*' for a rule that always applies)");
        return -1;
    } else if (cond.n == 1 && cond.s[0] == '*') {
        r->unconditional = 1;
    } else {
        const char *p = cond.s, *end = cond.s + cond.n;
        while (p <= end) {
            const char *amp = memchr(p, '&', (size_t)(end - p));
            struct span term = { p, (size_t)((amp ? amp : end) - p) };
            term = trim(term);
            if (term.n == 0) {
                RULE_ERROR("empty term in the condition (terms are joined by '&')");
                return -1;
            }
            if (term.n == 1 && term.s[0] == '*') {
                RULE_ERROR("'*' cannot be combined with other terms");
                return -1;
            }
            /* VARIABLE */
            size_t i = 0;
            while (i < term.n && ((term.s[i] >= 'a' && term.s[i] <= 'z') || (term.s[i] >= 'A' && term.s[i] <= 'Z') ||
                                  term.s[i] == '_'))
                i++;
            struct span var = { term.s, i };
            int is_size = span_eq(var, "size"), is_ranks = span_eq(var, "ranks");
            if (!is_size && !is_ranks) {
                if (var.n == 0)
                    RULE_ERROR("'%.*s' does not start with a variable (size or ranks)",
                               (int)(term.n > QUOTE_MAX ? QUOTE_MAX : term.n), term.s);
                else
                    RULE_ERROR("unknown variable '%.*s' (known: size, ranks)",
                               (int)(var.n > QUOTE_MAX ? QUOTE_MAX : var.n), var.s);
                return -1;
            }
            while (i < term.n && is_blank(term.s[i]))
                i++;
            /* OPERATOR */
            enum cmp op;
            size_t oplen = 1;
            char c0 = i < term.n ? term.s[i] : '\0', c1 = i + 1 < term.n ? term.s[i + 1] : '\0';
            if (c0 == '<' && c1 == '=') {
                op = CMP_LE;
                oplen = 2;
            } else if (c0 == '>' && c1 == '=') {
                op = CMP_GE;
                oplen = 2;
            } else if (c0 == '=' && c1 == '=') {
                op = CMP_EQ;
                oplen = 2;
            } else if (c0 == '<')
                op = CMP_LT;
            else if (c0 == '>')
                op = CMP_GT;
            else {
                RULE_ERROR("'%.*s' has no comparison (use <, <=, >, >= or == and a number)",
                           (int)(term.n > QUOTE_MAX ? QUOTE_MAX : term.n), term.s);
                return -1;
            }
            i += oplen;
            /* NUMBER */
            struct span num = trim((struct span){ term.s + i, term.n - i });
            uint64_t v = 0;
            int bad = parse_number(num, &v);
            if (bad == 0 && is_ranks && v > INT_MAX)
                bad = 2;
            if (bad) {
                if (num.n == 0)
                    RULE_ERROR("'%.*s' has no number after the comparison",
                               (int)(term.n > QUOTE_MAX ? QUOTE_MAX : term.n), term.s);
                else
                    RULE_ERROR("'%.*s' is %s", (int)(num.n > QUOTE_MAX ? QUOTE_MAX : num.n), num.s,
                               bad == 1 ? "not a number" : "too large");
                return -1;
            }
            if (is_size)
                narrow(&size_lo, &size_hi, op, v);
            else
                narrow(&ranks_lo, &ranks_hi, op, v);
            if (!amp)
                break;
            p = amp + 1;
        }
        if (size_lo > size_hi || ranks_lo > ranks_hi) {
            RULE_ERROR("the condition is never true");
            return -1;
        }
    }
    r->size_min = size_lo;
    r->size_max = size_hi;
    r->ranks_min = (int)ranks_lo;
    r->ranks_max = (int)ranks_hi;
    return 0;
}

/* The next rule separator in [p, end), or NULL. */
static const char *rule_sep(const char *p, const char *end)
{
    for (; p < end; p++)
        if (*p == ';' || *p == ',')
            return p;
    return NULL;
}

static int parse_chain(const char *text, struct aptus_rule_chain *out, int alloc, int default_threshold, char *err,
                       size_t errlen)
{
    char scratch[256];
    if (!err || errlen == 0) {
        err = scratch;
        errlen = sizeof scratch;
    }
    err[0] = '\0';
    out->n = 0;
    if (!text) {
        snprintf(err, errlen, "%s: no rule chain given", rules_var);
        return -1;
    }

    /* Split on ';' (or ',', for places where ';' is special: CMake lists, some shells). One
     * trailing separator is tolerated; other empty rules are errors. */
    struct span rules[APTUS_RULES_MAX];
    int n = 0;
    const char *p = text, *end = text + strlen(text);
    if (trim((struct span){ text, (size_t)(end - text) }).n == 0) {
        snprintf(err, errlen, "%s: the rule chain is empty", rules_var);
        return -1;
    }
    int total = 0;
    for (const char *q = text;;) {
        const char *semi = rule_sep(q, end);
        if (trim((struct span){ q, (size_t)((semi ? semi : end) - q) }).n > 0)
            total++;
        if (!semi)
            break;
        q = semi + 1;
    }
    if (total > APTUS_RULES_MAX) {
        snprintf(err, errlen, "%s: more than %d rules (%d given)", rules_var, APTUS_RULES_MAX, total);
        return -1;
    }
    for (;;) {
        const char *semi = rule_sep(p, end);
        struct span rule = trim((struct span){ p, (size_t)((semi ? semi : end) - p) });
        int index = n;
        if (rule.n == 0) {
            /* Empty after the last ';' (a trailing separator): fine. */
            if (!semi && n > 0)
                break;
            RULE_ERROR("empty rule (rules are separated by ';' or ',')");
            return -1;
        }
        if (n == APTUS_RULES_MAX) /* cannot happen: counted above */
            break;
        rules[n++] = rule;
        if (!semi)
            break;
        p = semi + 1;
    }

    struct aptus_rule_chain chain;
    chain.n = 0;
    for (int index = 0; index < n; index++) {
        if (parse_rule(rules[index], index, &chain.rule[index], alloc, default_threshold, err, errlen))
            return -1;
        int c = chain.rule[index].channel;
        if (alloc && c != APTUS_CH_RC_SR && c != APTUS_CH_RC_RDMA && c != APTUS_CH_RC_FP) {
            struct span rule = rules[index];
            RULE_ERROR("'%s' is not opened on demand (allocation rules name rc-sr, rc-rdma or rc-fp)",
                       channel_names[c]);
            return -1;
        }
        chain.n++;
    }
    if (!alloc && !chain.rule[n - 1].unconditional) {
        int index = n - 1;
        struct span rule = rules[index];
        RULE_ERROR("the last rule must be unconditional (write '*:CHANNEL' or just CHANNEL)");
        return -1;
    }
    *out = chain;
    return 0;
}

int aptus_rules_auto;

void aptus_rules_fit_fabric(void)
{
#ifdef APTUS_HAVE_LIBFABRIC
    if (!(aptus_rules_auto & 1) || strcmp(aptus_config.send_rules, APTUS_RULES_AUTO_RDMA) != 0 ||
        aptus_fab_rc_hardware(aptus_config.fabric_rc_provider, aptus_config.fabric_iface))
        return;
    char err[256];
    aptus_config.send_rules = APTUS_RULES_AUTO_SOCKETS;
    (void)aptus_rules_parse(aptus_config.send_rules, &aptus_rules, err, sizeof err); /* (a constant) */
    if (aptus_rules_auto & 2)
        aptus_config.alloc_rules = aptus_alloc_rules_text("auto", &aptus_rules);
#endif
}

int aptus_rules_is_auto(const char *text)
{
    size_t n = text ? strlen(text) : 0;
    while (n && (text[n - 1] == ' ' || text[n - 1] == '\t'))
        n--;
    while (n && (*text == ' ' || *text == '\t')) {
        text++;
        n--;
    }
    return n == 4 && strncasecmp(text, "auto", 4) == 0;
}

const char *aptus_rules_text(const char *text, int rdma)
{
    if (!aptus_rules_is_auto(text))
        return text;
    return rdma ? APTUS_RULES_AUTO_RDMA : APTUS_RULES_AUTO_SOCKETS;
}

const char *aptus_alloc_rules_text(const char *text, const struct aptus_rule_chain *send)
{
    if (!aptus_rules_is_auto(text))
        return text;
    for (int i = 0; i < send->n; i++)
        if (send->rule[i].channel == APTUS_CH_RC_SR || send->rule[i].channel == APTUS_CH_RC_FP)
            return APTUS_ALLOC_AUTO_RDMA;
    return APTUS_ALLOC_AUTO_SOCKETS;
}

int aptus_rules_parse(const char *text, struct aptus_rule_chain *out, char *err, size_t errlen)
{
    rules_var = "APTUS_SEND_RULES";
    return parse_chain(text, out, 0, 0, err, errlen);
}

int aptus_alloc_rules_parse(const char *text, int default_threshold, struct aptus_rule_chain *out, char *err,
                            size_t errlen)
{
    rules_var = "APTUS_ALLOC_RULES";
    int rc = parse_chain(text, out, 1, default_threshold, err, errlen);
    rules_var = "APTUS_SEND_RULES";
    return rc;
}

int aptus_rules_check_start(const struct aptus_rule_chain *c, const char *text, char *err, size_t errlen)
{
    int last = c->rule[c->n - 1].channel;
    if (last == APTUS_CH_RC_SR || last == APTUS_CH_RC_RDMA || last == APTUS_CH_RC_FP) {
        snprintf(err, errlen,
                 "APTUS_SEND_RULES=%s: the last rule names %s, a channel opened on demand that reaches no peer before "
                 "its connection is up; end the chain with a channel that reaches every peer from the start (ud-sr, "
                 "ud-zcopy or ud-copy)",
                 text, channel_names[last]);
        return -1;
    }
    return 0;
}

int aptus_alloc_rules_find(const struct aptus_rule_chain *c, uint64_t bytes, int nranks)
{
    return aptus_alloc_rules_find_except(c, bytes, nranks, -1);
}

int aptus_alloc_rules_find_except(const struct aptus_rule_chain *c, uint64_t bytes, int nranks, int channel)
{
    for (int i = 0; i < c->n; i++) {
        const struct aptus_rule *r = &c->rule[i];
        if (r->channel != channel && bytes >= r->size_min && bytes <= r->size_max && nranks >= r->ranks_min &&
            nranks <= r->ranks_max)
            return i;
    }
    return -1;
}

/* ---- specialising for a peer -------------------------------------------------------- */

static int cmp_u64(uint64_t a, uint64_t b)
{
    return a < b ? -1 : a > b;
}

int aptus_rules_route(const struct aptus_rule_chain *c, int nranks, const uint8_t reachable[APTUS_CH_COUNT],
                      struct aptus_route *route)
{
    /* The rules that apply to this peer in this job, in chain order. */
    const struct aptus_rule *live[APTUS_RULES_MAX];
    int nlive = 0;
    for (int i = 0; i < c->n && i < APTUS_RULES_MAX; i++) {
        const struct aptus_rule *r = &c->rule[i];
        if (r->channel < 0 || r->channel >= APTUS_CH_COUNT || !reachable[r->channel])
            continue;
        if (nranks < r->ranks_min || nranks > r->ranks_max || r->size_min > r->size_max)
            continue;
        live[nlive++] = r;
    }

    /* Every size range boundary; between two consecutive ones the first matching rule is the
     * same for every size. */
    uint64_t cut[2 * APTUS_RULES_MAX + 1];
    int ncut = 0;
    cut[ncut++] = 0;
    for (int i = 0; i < nlive; i++) {
        cut[ncut++] = live[i]->size_min;
        if (live[i]->size_max != UINT64_MAX)
            cut[ncut++] = live[i]->size_max + 1;
    }
    for (int i = 1; i < ncut; i++) /* insertion sort: at most 33 entries */
        for (int j = i; j > 0 && cmp_u64(cut[j - 1], cut[j]) > 0; j--) {
            uint64_t t = cut[j];
            cut[j] = cut[j - 1];
            cut[j - 1] = t;
        }

    /* Walk the pieces in size order, merging neighbours that use the same channel. The route
     * keeps the covered pieces even when some sizes have no channel (then -1 is returned);
     * if more than APTUS_ROUTE_MAX pieces are needed the route is left empty. */
    int complete = 1, overflow = 0;
    int last_channel = -1;
    route->n = 0;
    for (int i = 0; i < ncut; i++) {
        if (i > 0 && cut[i] == cut[i - 1])
            continue;
        uint64_t lo = cut[i], hi = UINT64_MAX;
        for (int j = i + 1; j < ncut; j++)
            if (cut[j] != lo) {
                hi = cut[j] - 1;
                break;
            }
        int channel = -1;
        for (int k = 0; k < nlive; k++)
            if (lo >= live[k]->size_min && lo <= live[k]->size_max) {
                channel = live[k]->channel;
                break;
            }
        if (channel < 0) {
            complete = 0;
            last_channel = -1;
            continue;
        }
        if (channel == last_channel) {
            route->size_max[route->n - 1] = hi;
            continue;
        }
        if (route->n == APTUS_RULES_MAX) {
            overflow = 1;
            break;
        }
        route->channel[route->n] = (uint8_t)channel;
        route->size_min[route->n] = lo;
        route->size_max[route->n] = hi;
        route->n++;
        last_channel = channel;
    }
    if (overflow) {
        route->n = 0;
        return -1;
    }
    return complete ? 0 : -1;
}
