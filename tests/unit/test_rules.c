/* Unit tests of send rule chains: parsing (valid chains, every error class, boundaries,
 * suffixes) and specialisation per peer (ranks conditions, unreachable channels, merging,
 * gaps), plus a randomized comparison of the route against a direct first-match scan. */
#include "channel/rules.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit_check.h"

static const uint8_t ALL[APTUS_CH_COUNT] = { 1, 1, 1, 1, 1, 1, 1, 1 };

/* Parses a chain that must be valid. */
static struct aptus_rule_chain parse_ok(const char *text)
{
    struct aptus_rule_chain c;
    char err[512];
    memset(&c, 0, sizeof c);
    if (aptus_rules_parse(text, &c, err, sizeof err) != 0) {
        fprintf(stderr, "unexpected parse error for \"%s\": %s\n", text, err);
        failures++;
    }
    return c;
}

/* Parses a chain that must be invalid with exactly this message. */
static void parse_err(const char *text, const char *expected, int line)
{
    struct aptus_rule_chain c;
    char err[512] = "";
    if (aptus_rules_parse(text, &c, err, sizeof err) == 0) {
        fprintf(stderr, "line %d: \"%s\" parsed but should fail with: %s\n", line, text, expected);
        failures++;
    } else if (strcmp(err, expected) != 0) {
        fprintf(stderr, "line %d: \"%s\"\n  message:  %s\n  expected: %s\n", line, text, err, expected);
        failures++;
    }
}
#define PARSE_ERR(text, msg) parse_err(text, msg, __LINE__)

/* Routes a chain and compares with "lo-hi:channel ..." (hi may be "max"). */
static void route_is(const char *text, int nranks, const uint8_t reach[APTUS_CH_COUNT], int want_rc,
                     const char *expected, int line)
{
    struct aptus_rule_chain c = parse_ok(text);
    struct aptus_route r;
    int rc = aptus_rules_route(&c, nranks, reach, &r);
    char got[1024] = "";
    for (unsigned i = 0; i < r.n; i++) {
        char seg[96];
        if (r.size_max[i] == UINT64_MAX)
            snprintf(seg, sizeof seg, "%s%llu-max:%s", i ? " " : "", (unsigned long long)r.size_min[i],
                     aptus_channel_name(r.channel[i]));
        else
            snprintf(seg, sizeof seg, "%s%llu-%llu:%s", i ? " " : "", (unsigned long long)r.size_min[i],
                     (unsigned long long)r.size_max[i], aptus_channel_name(r.channel[i]));
        strncat(got, seg, sizeof got - strlen(got) - 1);
    }
    if (rc != want_rc || strcmp(got, expected) != 0) {
        fprintf(stderr, "line %d: route of \"%s\" (nranks %d)\n  got:      rc=%d %s\n  expected: rc=%d %s\n", line,
                text, nranks, rc, got, want_rc, expected);
        failures++;
    }
}
#define ROUTE_IS(text, nranks, reach, rc, expected) route_is(text, nranks, reach, rc, expected, __LINE__)

static void test_channel_names(void)
{
    static const char *const names[] = { "self", "smp", "ud-sr", "ud-zcopy", "ud-copy", "rc-sr", "rc-fp", "rc-rdma" };
    for (int i = 0; i < APTUS_CH_COUNT; i++)
        CHECK(strcmp(aptus_channel_name(i), names[i]) == 0);
    CHECK(strcmp(aptus_channel_name(-1), "unknown") == 0);
    CHECK(strcmp(aptus_channel_name(APTUS_CH_COUNT), "unknown") == 0);
}

static void test_parse_valid(void)
{
    struct aptus_rule_chain c = parse_ok("self;smp");
    CHECK(c.n == 2);
    CHECK(c.rule[0].channel == APTUS_CH_SELF && c.rule[0].unconditional);
    CHECK(c.rule[1].channel == APTUS_CH_SMP && c.rule[1].unconditional);
    CHECK(c.rule[1].size_min == 0 && c.rule[1].size_max == UINT64_MAX);

    c = parse_ok("self;smp;size<=8K&ranks<=64:rc-fp;size<2048:ud-sr;*:rc-rdma");
    CHECK(c.n == 5);
    CHECK(c.rule[2].channel == APTUS_CH_RC_FP && !c.rule[2].unconditional);
    CHECK(c.rule[2].size_min == 0 && c.rule[2].size_max == 8192);
    CHECK(c.rule[2].ranks_min == 1 && c.rule[2].ranks_max == 64);
    CHECK(c.rule[3].size_max == 2047 && c.rule[3].channel == APTUS_CH_UD_SR);
    CHECK(c.rule[4].unconditional && c.rule[4].channel == APTUS_CH_RC_RDMA);

    /* Whitespace anywhere between tokens, upper-case channel names, a trailing ';'. */
    c = parse_ok("  size <= 8K & ranks >= 2 : RC-FP ;\t* :  ud-zcopy ; ");
    CHECK(c.n == 2);
    CHECK(c.rule[0].channel == APTUS_CH_RC_FP && c.rule[0].size_max == 8192 && c.rule[0].ranks_min == 2);
    CHECK(c.rule[1].channel == APTUS_CH_UD_ZCOPY && c.rule[1].unconditional);

    /* Unconditional rules may appear before the last one (fallbacks, as in the paper). */
    c = parse_ok("*:rc-rdma;*:ud-zcopy");
    CHECK(c.n == 2 && c.rule[0].unconditional && c.rule[1].unconditional);

    /* Every channel name. */
    c = parse_ok("self;smp;ud-sr;ud-zcopy;ud-copy;rc-sr;rc-fp;rc-rdma");
    CHECK(c.n == 8);
    for (int i = 0; i < 8; i++)
        CHECK(c.rule[i].channel == i);

    /* Exactly APTUS_RULES_MAX rules are fine. */
    c = parse_ok("size<1:smp;size<2:smp;size<3:smp;size<4:smp;size<5:smp;size<6:smp;size<7:smp;"
                 "size<8:smp;size<9:smp;size<10:smp;size<11:smp;size<12:smp;size<13:smp;size<14:smp;"
                 "size<15:smp;smp");
    CHECK(c.n == APTUS_RULES_MAX);
}

static void test_boundaries_and_suffixes(void)
{
    struct aptus_rule_chain c;
    c = parse_ok("size<2048:smp;smp");
    CHECK(c.rule[0].size_min == 0 && c.rule[0].size_max == 2047);
    c = parse_ok("size<=2048:smp;smp");
    CHECK(c.rule[0].size_min == 0 && c.rule[0].size_max == 2048);
    c = parse_ok("size>1K:smp;smp");
    CHECK(c.rule[0].size_min == 1025 && c.rule[0].size_max == UINT64_MAX);
    c = parse_ok("size>=1K:smp;smp");
    CHECK(c.rule[0].size_min == 1024);
    c = parse_ok("size==100:smp;smp");
    CHECK(c.rule[0].size_min == 100 && c.rule[0].size_max == 100);
    c = parse_ok("size>=1k&size<=4m:smp;smp");
    CHECK(c.rule[0].size_min == 1024 && c.rule[0].size_max == 4u << 20);
    c = parse_ok("size<=1G:smp;smp");
    CHECK(c.rule[0].size_max == 1ull << 30);
    c = parse_ok("size<=2M:smp;smp");
    CHECK(c.rule[0].size_max == 2ull << 20);
    c = parse_ok("size<=0:smp;smp");
    CHECK(c.rule[0].size_max == 0);
    c = parse_ok("size<=18446744073709551615:smp;smp");
    CHECK(c.rule[0].size_max == UINT64_MAX);
    /* Two terms on the same variable intersect. */
    c = parse_ok("size<=8K&size<=2K&size>10:smp;smp");
    CHECK(c.rule[0].size_min == 11 && c.rule[0].size_max == 2048);
    c = parse_ok("ranks>4&ranks<=1K:smp;smp");
    CHECK(c.rule[0].ranks_min == 5 && c.rule[0].ranks_max == 1024);
    c = parse_ok("ranks==8:smp;smp");
    CHECK(c.rule[0].ranks_min == 8 && c.rule[0].ranks_max == 8);

    /* size<N versus size<=N at the boundary, through the route. */
    struct aptus_route r;
    c = parse_ok("size<2048:rc-fp;*:ud-sr");
    CHECK(aptus_rules_route(&c, 2, ALL, &r) == 0);
    CHECK(aptus_route_pick(&r, 2047) == APTUS_CH_RC_FP);
    CHECK(aptus_route_pick(&r, 2048) == APTUS_CH_UD_SR);
    c = parse_ok("size<=2048:rc-fp;*:ud-sr");
    CHECK(aptus_rules_route(&c, 2, ALL, &r) == 0);
    CHECK(aptus_route_pick(&r, 2048) == APTUS_CH_RC_FP);
    CHECK(aptus_route_pick(&r, 2049) == APTUS_CH_UD_SR);
    CHECK(aptus_route_pick(&r, 0) == APTUS_CH_RC_FP);
    CHECK(aptus_route_pick(&r, UINT64_MAX) == APTUS_CH_UD_SR);
}

static void test_errors(void)
{
    /* The examples from the brief, word for word. */
    PARSE_ERR("self;smp;size<=abc:smp;smp", "APTUS_SEND_RULES: rule 3 'size<=abc:smp': 'abc' is not a number");
    PARSE_ERR("self;foo", "APTUS_SEND_RULES: rule 2 'foo': unknown channel 'foo' "
                          "(known: self, smp, ud-sr, ud-zcopy, ud-copy, rc-sr, rc-fp, rc-rdma)");
    PARSE_ERR("size<=1K:rc-fp;ranks<4:smp;size<8K:smp",
              "APTUS_SEND_RULES: rule 3 'size<8K:smp': the last rule must be unconditional "
              "(write '*:CHANNEL' or just CHANNEL)");
    PARSE_ERR("smp;smp;smp;smp;smp;smp;smp;smp;smp;smp;smp;smp;smp;smp;smp;smp;smp",
              "APTUS_SEND_RULES: more than 16 rules (17 given)");

    /* Numbers. */
    PARSE_ERR("size<=8X:smp;smp", "APTUS_SEND_RULES: rule 1 'size<=8X:smp': '8X' is not a number");
    PARSE_ERR("size<=8KB:smp;smp", "APTUS_SEND_RULES: rule 1 'size<=8KB:smp': '8KB' is not a number");
    PARSE_ERR("size<=-1:smp;smp", "APTUS_SEND_RULES: rule 1 'size<=-1:smp': '-1' is not a number");
    PARSE_ERR("size<=8 K:smp;smp", "APTUS_SEND_RULES: rule 1 'size<=8 K:smp': '8 K' is not a number");
    PARSE_ERR("size<=18446744073709551616:smp;smp", "APTUS_SEND_RULES: rule 1 'size<=18446744073709551616:smp': "
                                                    "'18446744073709551616' is too large");
    PARSE_ERR("size<=17179869184G:smp;smp",
              "APTUS_SEND_RULES: rule 1 'size<=17179869184G:smp': '17179869184G' is too large");
    PARSE_ERR("ranks<=4G:smp;smp", "APTUS_SEND_RULES: rule 1 'ranks<=4G:smp': '4G' is too large");
    PARSE_ERR("size<=:smp;smp", "APTUS_SEND_RULES: rule 1 'size<=:smp': 'size<=' has no number after the comparison");

    /* Variables and comparisons. */
    PARSE_ERR("bytes<=8K:smp;smp",
              "APTUS_SEND_RULES: rule 1 'bytes<=8K:smp': unknown variable 'bytes' (known: size, ranks)");
    PARSE_ERR("<=8K:smp;smp",
              "APTUS_SEND_RULES: rule 1 '<=8K:smp': '<=8K' does not start with a variable (size or ranks)");
    PARSE_ERR("size=8K:smp;smp", "APTUS_SEND_RULES: rule 1 'size=8K:smp': 'size=8K' has no comparison "
                                 "(use <, <=, >, >= or == and a number)");
    PARSE_ERR("size:smp;smp", "APTUS_SEND_RULES: rule 1 'size:smp': 'size' has no comparison "
                              "(use <, <=, >, >= or == and a number)");

    /* Structure. */
    PARSE_ERR("", "APTUS_SEND_RULES: the rule chain is empty");
    PARSE_ERR("   ", "APTUS_SEND_RULES: the rule chain is empty");
    PARSE_ERR(NULL, "APTUS_SEND_RULES: no rule chain given");
    /* ',' separates rules as ';' does. */
    {
        struct aptus_rule_chain a, b;
        char e[256];
        CHECK(aptus_rules_parse("self,size<=1K:smp,ud-sr", &a, e, sizeof e) == 0);
        CHECK(aptus_rules_parse("self;size<=1K:smp;ud-sr", &b, e, sizeof e) == 0);
        CHECK(a.n == 3 && b.n == 3);
        for (int i = 0; i < 3; i++)
            CHECK(a.rule[i].channel == b.rule[i].channel && a.rule[i].size_min == b.rule[i].size_min &&
                  a.rule[i].size_max == b.rule[i].size_max && a.rule[i].unconditional == b.rule[i].unconditional);
    }
    PARSE_ERR("self;;smp", "APTUS_SEND_RULES: rule 2 '': empty rule (rules are separated by ';' or ',')");
    PARSE_ERR(";smp", "APTUS_SEND_RULES: rule 1 '': empty rule (rules are separated by ';' or ',')");
    PARSE_ERR(":smp", "APTUS_SEND_RULES: rule 1 ':smp': empty condition before ':' "
                      "(write '*' for a rule that always applies)");
    PARSE_ERR("size<1K:;smp", "APTUS_SEND_RULES: rule 1 'size<1K:': no channel after ':'");
    PARSE_ERR("size<1K&:smp;smp",
              "APTUS_SEND_RULES: rule 1 'size<1K&:smp': empty term in the condition (terms are joined by '&')");
    PARSE_ERR("*&size<1K:smp;smp", "APTUS_SEND_RULES: rule 1 '*&size<1K:smp': '*' cannot be combined with other terms");
    PARSE_ERR("size<0:smp;smp", "APTUS_SEND_RULES: rule 1 'size<0:smp': the condition is never true");
    PARSE_ERR("size>4K&size<1K:smp;smp", "APTUS_SEND_RULES: rule 1 'size>4K&size<1K:smp': the condition is never true");
    PARSE_ERR("ranks<1:smp;smp", "APTUS_SEND_RULES: rule 1 'ranks<1:smp': the condition is never true");
    PARSE_ERR("size>18446744073709551615:smp;smp",
              "APTUS_SEND_RULES: rule 1 'size>18446744073709551615:smp': the condition is never true");
    PARSE_ERR("size<1K:smp:rc-fp;smp", "APTUS_SEND_RULES: rule 1 'size<1K:smp:rc-fp': unknown channel 'smp:rc-fp' "
                                       "(known: self, smp, ud-sr, ud-zcopy, ud-copy, rc-sr, rc-fp, rc-rdma)");
    PARSE_ERR("  size <= 1K : rc-fp  ",
              "APTUS_SEND_RULES: rule 1 'size <= 1K : rc-fp': the last rule must be unconditional "
              "(write '*:CHANNEL' or just CHANNEL)");

    /* A failed parse leaves n at 0; a tiny error buffer is truncated, never overrun. */
    struct aptus_rule_chain c;
    c.n = 7;
    char tiny[8];
    memset(tiny, 'x', sizeof tiny);
    CHECK(aptus_rules_parse("foo", &c, tiny, sizeof tiny) == -1);
    CHECK(c.n == 0);
    CHECK(tiny[sizeof tiny - 1] == '\0' && strlen(tiny) == sizeof tiny - 1);
    CHECK(aptus_rules_parse("foo", &c, NULL, 0) == -1);
}

static void test_routes(void)
{
    uint8_t remote[APTUS_CH_COUNT] = { 0 }, local[APTUS_CH_COUNT] = { 0 }, self[APTUS_CH_COUNT] = { 0 },
            ud_only[APTUS_CH_COUNT] = { 0 };
    for (int c = APTUS_CH_UD_SR; c < APTUS_CH_COUNT; c++)
        local[c] = remote[c] = 1;
    local[APTUS_CH_SMP] = 1;
    self[APTUS_CH_SELF] = 1;
    ud_only[APTUS_CH_UD_SR] = ud_only[APTUS_CH_UD_ZCOPY] = 1;

    /* The example of the brief. */
    ROUTE_IS("size<=1K:rc-fp;size<=64K:ud-sr;*:rc-rdma", 4, ALL, 0, "0-1024:rc-fp 1025-65536:ud-sr 65537-max:rc-rdma");
    /* The default chain. */
    ROUTE_IS("self;smp", 4, self, 0, "0-max:self");
    ROUTE_IS("self;smp", 4, local, 0, "0-max:smp");
    ROUTE_IS("self;smp", 4, remote, -1, "");

    /* The chain of seed 000 (section 5.3): all channels, then only the UD ones. */
    const char *paper = "size<=2048:rc-fp;size<=2008:ud-sr;size<=8192:rc-sr;size<=8192:ud-sr;"
                        "*:rc-rdma;*:ud-zcopy";
    ROUTE_IS(paper, 16, remote, 0, "0-2048:rc-fp 2049-8192:rc-sr 8193-max:rc-rdma");
    ROUTE_IS(paper, 16, ud_only, 0, "0-8192:ud-sr 8193-max:ud-zcopy");

    /* Unreachable channels are dropped. */
    ROUTE_IS("self;smp;size<=1K:rc-fp;*:ud-sr", 4, remote, 0, "0-1024:rc-fp 1025-max:ud-sr");
    ROUTE_IS("self;smp;size<=1K:rc-fp;*:ud-sr", 4, local, 0, "0-max:smp");
    ROUTE_IS("size<=1K:rc-fp;*:ud-sr", 4, ud_only, 0, "0-max:ud-sr");

    /* ranks conditions: true or false for the job size; boundaries. */
    ROUTE_IS("ranks<=64:rc-fp;*:ud-sr", 64, remote, 0, "0-max:rc-fp");
    ROUTE_IS("ranks<=64:rc-fp;*:ud-sr", 65, remote, 0, "0-max:ud-sr");
    ROUTE_IS("ranks<64:rc-fp;*:ud-sr", 64, remote, 0, "0-max:ud-sr");
    ROUTE_IS("size<=8K&ranks<=64:rc-fp;*:ud-sr", 32, remote, 0, "0-8192:rc-fp 8193-max:ud-sr");
    ROUTE_IS("size<=8K&ranks<=64:rc-fp;*:ud-sr", 128, remote, 0, "0-max:ud-sr");
    ROUTE_IS("ranks>=1K:ud-sr;*:rc-sr", 1024, remote, 0, "0-max:ud-sr");
    ROUTE_IS("ranks>=1K:ud-sr;*:rc-sr", 1023, remote, 0, "0-max:rc-sr");

    /* Adjacent ranges with the same channel merge; later rules fill the holes of earlier ones. */
    ROUTE_IS("size<=1K:ud-sr;size<=2K:ud-sr;*:rc-rdma", 2, remote, 0, "0-2048:ud-sr 2049-max:rc-rdma");
    ROUTE_IS("size>=1K&size<=2K:rc-fp;*:ud-sr", 2, remote, 0, "0-1023:ud-sr 1024-2048:rc-fp 2049-max:ud-sr");
    ROUTE_IS("size==0:rc-sr;*:ud-sr", 2, remote, 0, "0-0:rc-sr 1-max:ud-sr");
    ROUTE_IS("size>=16G:rc-rdma;*:ud-sr", 2, remote, 0, "0-17179869183:ud-sr 17179869184-max:rc-rdma");
    /* A rule shadowed completely by an earlier one leaves no trace. */
    ROUTE_IS("size<=8K:rc-fp;size<=1K:ud-sr;*:rc-rdma", 2, remote, 0, "0-8192:rc-fp 8193-max:rc-rdma");

    /* Gaps: -1, and the route keeps the sizes that do have a channel. */
    ROUTE_IS("size<=1K:rc-fp;*:smp", 2, remote, -1, "0-1024:rc-fp");
    ROUTE_IS("size>1K:rc-fp;*:smp", 2, remote, -1, "1025-max:rc-fp");
    ROUTE_IS("smp", 2, remote, -1, "");
    struct aptus_rule_chain c = parse_ok("size<=1K:rc-fp;*:smp");
    struct aptus_route r;
    CHECK(aptus_rules_route(&c, 2, remote, &r) == -1);
    CHECK(aptus_route_pick(&r, 1024) == APTUS_CH_RC_FP);
    CHECK(aptus_route_pick(&r, 1025) == -1);

    /* More size ranges than a route holds: nested ranges, each splitting the next. */
    char nested[1024] = "";
    for (int i = 0; i < 15; i++) {
        char rule[64];
        snprintf(rule, sizeof rule, "size>=%d&size<=%d:%s;", 100 - i, 200 + i, i % 2 ? "ud-sr" : "rc-sr");
        strcat(nested, rule);
    }
    strcat(nested, "rc-rdma");
    c = parse_ok(nested);
    CHECK(c.n == 16);
    CHECK(aptus_rules_route(&c, 2, remote, &r) == -1);
    CHECK(r.n == 0);
}

/* Direct first-match evaluation, the definition the route must agree with. */
static int first_match(const struct aptus_rule_chain *c, int nranks, const uint8_t *reach, uint64_t size)
{
    for (int i = 0; i < c->n; i++) {
        const struct aptus_rule *r = &c->rule[i];
        if (reach[r->channel] && nranks >= r->ranks_min && nranks <= r->ranks_max && size >= r->size_min &&
            size <= r->size_max)
            return r->channel;
    }
    return -1;
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static void test_random_chains(void)
{
    static const char *const ops[] = { "<", "<=", ">", ">=", "==" };
    static const char *const sfx[] = { "", "", "K", "M" };
    int tried = 0;
    for (int iter = 0; iter < 3000; iter++) {
        char text[2048] = "";
        int nrules = 1 + (int)(rng() % APTUS_RULES_MAX);
        for (int i = 0; i < nrules; i++) {
            char rule[128] = "";
            if (i < nrules - 1 && rng() % 5) {
                int terms = 1 + (int)(rng() % 3);
                for (int t = 0; t < terms; t++) {
                    char term[48];
                    int is_ranks = rng() % 4 == 0;
                    snprintf(term, sizeof term, "%s%s%s%u%s", t ? "&" : "", is_ranks ? "ranks" : "size", ops[rng() % 5],
                             (unsigned)(rng() % (is_ranks ? 9 : 70)), sfx[rng() % 4]);
                    strcat(rule, term);
                }
                strcat(rule, ":");
            }
            strcat(rule, aptus_channel_name((int)(rng() % APTUS_CH_COUNT)));
            strcat(text, i ? ";" : "");
            strcat(text, rule);
        }
        struct aptus_rule_chain c;
        char err[512];
        if (aptus_rules_parse(text, &c, err, sizeof err) != 0)
            continue; /* e.g. a condition that is never true */
        tried++;
        uint8_t reach[APTUS_CH_COUNT];
        for (int k = 0; k < APTUS_CH_COUNT; k++)
            reach[k] = rng() % 3 != 0;
        int nranks = 1 + (int)(rng() % 8);
        struct aptus_route r;
        int rc = aptus_rules_route(&c, nranks, reach, &r);
        if (rc == -1 && r.n == 0)
            continue; /* nothing reaches, or too many ranges */
        /* Check at every boundary (and its neighbours) of every rule. */
        int complete = 1;
        for (int i = 0; i < c.n; i++) {
            uint64_t pts[6] = { c.rule[i].size_min,     c.rule[i].size_max,     c.rule[i].size_min - 1,
                                c.rule[i].size_max + 1, c.rule[i].size_min + 1, c.rule[i].size_max - 1 };
            for (int k = 0; k < 6; k++) {
                int want = first_match(&c, nranks, reach, pts[k]);
                int got = aptus_route_pick(&r, pts[k]);
                if (want != got) {
                    fprintf(stderr, "random chain \"%s\" nranks %d size %llu: route %d, first match %d\n", text, nranks,
                            (unsigned long long)pts[k], got, want);
                    failures++;
                    return;
                }
                if (want < 0)
                    complete = 0;
            }
        }
        if (first_match(&c, nranks, reach, 0) < 0 || first_match(&c, nranks, reach, UINT64_MAX) < 0)
            complete = 0;
        if (complete && rc != 0) {
            fprintf(stderr, "random chain \"%s\": rc %d but every size has a channel\n", text, rc);
            failures++;
        }
        if (!complete && rc == 0) {
            fprintf(stderr, "random chain \"%s\": rc 0 but some size has no channel\n", text);
            failures++;
        }
        /* Segments are sorted, disjoint, and neighbours differ in channel or are not adjacent. */
        for (unsigned i = 1; i < r.n; i++) {
            CHECK(r.size_min[i] > r.size_max[i - 1]);
            if (r.size_min[i] == r.size_max[i - 1] + 1)
                CHECK(r.channel[i] != r.channel[i - 1]);
        }
    }
    CHECK(tried > 500);
}

/* Allocation rules: thresholds, defaults, which message a rule takes, errors word for word; and
 * the start check of send chains (an RC channel last). */
static void test_alloc_rules(void)
{
    struct aptus_rule_chain c;
    char err[512] = "";
    CHECK(aptus_alloc_rules_parse("size>=64K:rc-rdma@2;*:rc-sr", 16, &c, err, sizeof err) == 0);
    CHECK(c.n == 2 && c.rule[0].channel == APTUS_CH_RC_RDMA && c.rule[0].threshold == 2 &&
          c.rule[1].channel == APTUS_CH_RC_SR && c.rule[1].threshold == 16);
    CHECK(aptus_alloc_rules_find(&c, 65536, 4) == 0 && aptus_alloc_rules_find(&c, 65535, 4) == 1);
    /* The connection rules apart from rc-fp's (the default's shape): a small message is taken by
     * the rc-fp rule in all, by the unconditional rc-sr one among the others. */
    CHECK(aptus_alloc_rules_parse("size<=8K:rc-fp;*:rc-sr", 16, &c, err, sizeof err) == 0);
    CHECK(aptus_alloc_rules_find(&c, 100, 4) == 0 && aptus_alloc_rules_find_except(&c, 100, 4, APTUS_CH_RC_FP) == 1 &&
          aptus_alloc_rules_find_except(&c, 9000, 4, APTUS_CH_RC_FP) == 1);
    /* The last rule may be conditional: a message no rule takes does not count. */
    CHECK(aptus_alloc_rules_parse("size<=1K:rc-sr@8", 16, &c, err, sizeof err) == 0);
    CHECK(aptus_alloc_rules_find(&c, 1024, 2) == 0 && aptus_alloc_rules_find(&c, 1025, 2) == -1);
    CHECK(aptus_alloc_rules_parse("ranks>=64:rc-sr@1;rc-sr@65534", 16, &c, err, sizeof err) == 0);
    CHECK(aptus_alloc_rules_find(&c, 1, 64) == 0 && aptus_alloc_rules_find(&c, 1, 63) == 1 &&
          c.rule[1].threshold == 65534);
    static const struct {
        const char *text, *msg;
    } bad[] = {
        { "rc-sr@0", "APTUS_ALLOC_RULES: rule 1 'rc-sr@0': threshold '0' after '@' must be a number 1..65534" },
        { "*:rc-sr@70000", "APTUS_ALLOC_RULES: rule 1 '*:rc-sr@70000': threshold '70000' after '@' must be a number "
                           "1..65534" },
        { "rc-sr@x", "APTUS_ALLOC_RULES: rule 1 'rc-sr@x': threshold 'x' after '@' must be a number 1..65534" },
        { "size>1K:ud-sr@2", "APTUS_ALLOC_RULES: rule 1 'size>1K:ud-sr@2': 'ud-sr' is not opened on demand "
                             "(allocation rules name rc-sr, rc-rdma or rc-fp)" },
        { "rc-sr;size<=x:rc-rdma", "APTUS_ALLOC_RULES: rule 2 'size<=x:rc-rdma': 'x' is not a number" },
        { "", "APTUS_ALLOC_RULES: the rule chain is empty" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = 0;
        int rc = aptus_alloc_rules_parse(bad[i].text, 16, &c, err, sizeof err);
        if (rc == 0 || strcmp(err, bad[i].msg) != 0) {
            fprintf(stderr, "alloc rules \"%s\"\n  message:  %s\n  expected: %s\n", bad[i].text, rc ? err : "(parsed)",
                    bad[i].msg);
            failures++;
        }
    }
    /* The send rules' messages still name APTUS_SEND_RULES afterwards. */
    PARSE_ERR("size<=abc:smp;smp", "APTUS_SEND_RULES: rule 1 'size<=abc:smp': 'abc' is not a number");
    /* A send chain ending with an RC channel cannot start a job. */
    c = parse_ok("self;rc-sr");
    CHECK(aptus_rules_check_start(&c, "self;rc-sr", err, sizeof err) == -1);
    CHECK(!strcmp(err, "APTUS_SEND_RULES=self;rc-sr: the last rule names rc-sr, a channel opened on demand that "
                       "reaches no peer before its connection is up; end the chain with a channel that reaches every "
                       "peer from the start (ud-sr, ud-zcopy or ud-copy)"));
    c = parse_ok("self;smp;size<=8K:rc-fp;size<=8K:rc-sr;rc-rdma;size<=8K:ud-sr;ud-zcopy");
    CHECK(aptus_rules_check_start(&c, "x", err, sizeof err) == 0);
}

int main(void)
{
    test_alloc_rules();
    test_channel_names();
    test_parse_valid();
    test_boundaries_and_suffixes();
    test_errors();
    test_routes();
    test_random_chains();
    if (failures) {
        fprintf(stderr, "test_rules: %d failure(s)\n", failures);
        return 1;
    }
    printf("test_rules: all passed\n");
    return 0;
}
