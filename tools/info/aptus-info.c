/* aptus-info: prints every configuration variable (type, default, range, current value, meaning) and
 * shows how a send rule chain is specialised for the peers of a rank.
 *
 *   aptus-info                      list the variables, with the values from the environment
 *   aptus-info --rules CHAIN        parse CHAIN and print its routes (exit 2 if it is invalid)
 *   aptus-info --ranks N            routes of the configured chain (APTUS_SEND_RULES) for N ranks
 *   aptus-info --mpit               the same variables, and the performance variables and events,
 *                                   through the MPI tool interface (mpit_list.c)
 */
#include "channel/rules.h"
#include "mpit_list.h"
#include "runtime/config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *type_name(enum aptus_cvar_type t)
{
    switch (t) {
    case APTUS_CVAR_BOOL: return "bool";
    case APTUS_CVAR_INT: return "int";
    case APTUS_CVAR_SIZE: return "size";
    case APTUS_CVAR_ENUM: return "enum";
    case APTUS_CVAR_STRING: return "string";
    }
    return "?";
}

/* 65536 -> "64K" when exact, else the plain number. */
static void format_size(uint64_t v, char *buf, size_t len)
{
    if (v == UINT64_MAX)
        snprintf(buf, len, "max");
    else if (v >= (1u << 30) && v % (1u << 30) == 0)
        snprintf(buf, len, "%" PRIu64 "G", v >> 30);
    else if (v >= (1u << 20) && v % (1u << 20) == 0)
        snprintf(buf, len, "%" PRIu64 "M", v >> 20);
    else if (v >= (1u << 10) && v % (1u << 10) == 0)
        snprintf(buf, len, "%" PRIu64 "K", v >> 10);
    else
        snprintf(buf, len, "%" PRIu64, v);
}

static void print_value(const char *name, enum aptus_cvar_type type, const void *field)
{
    switch (type) {
    case APTUS_CVAR_BOOL: printf("%d", *(const int *)field); break;
    case APTUS_CVAR_INT: printf("%d", *(const int *)field); break;
    case APTUS_CVAR_SIZE: {
        char h[32];
        size_t v = *(const size_t *)field;
        format_size(v, h, sizeof h);
        printf("%zu", v);
        if (strcmp(h, "max") != 0 && strspn(h, "0123456789") != strlen(h))
            printf(" (%s)", h);
        break;
    }
    case APTUS_CVAR_ENUM:
    case APTUS_CVAR_STRING: {
        const char *s = *(const char *const *)field;
        printf("\"%s\"", s ? s : "");
        break;
    }
    }
    if (getenv(name))
        printf("   [set in the environment]");
}

static void list_variables(void)
{
    int count;
    const struct aptus_cvar_desc *table = aptus_config_table(&count);
    printf("Aptus MPI configuration variables (%d), read from the environment at MPI_Init", count);
    if (aptus_config_tune_file()[0])
        printf(" (and, where it does not set them, from the tune file %s)", aptus_config_tune_file());
    else
        printf(" (no tune file: %s is not there)", aptus_config_tune_default());
    printf(":\n\n");
    int i = 0;
#define APTUS_CVAR(NAME_, field_, type_, ctype_, dflt_, range_, desc_)                                                 \
    printf("%s (%s)\n    default: %s\n    range:   %s\n    current: ", table[i].name, type_name(table[i].type),        \
           table[i].default_text, table[i].range);                                                                     \
    print_value(table[i].name, table[i].type, &aptus_config.field_);                                                   \
    if (aptus_config_given(table[i].name) == 2)                                                                        \
        printf(" (tune file)");                                                                                        \
    printf("\n    %s\n\n", table[i].description);                                                                      \
    i++;
#include "runtime/config_vars.def"
#undef APTUS_CVAR
}

/* ---- routes ------------------------------------------------------------------------- */

static int parse_channel_list(const char *text, uint8_t reach[APTUS_CH_COUNT])
{
    memset(reach, 0, APTUS_CH_COUNT);
    const char *p = text;
    while (*p) {
        size_t n = strcspn(p, ",");
        int found = 0;
        for (int c = 0; c < APTUS_CH_COUNT; c++)
            if (strlen(aptus_channel_name(c)) == n && strncmp(p, aptus_channel_name(c), n) == 0) {
                reach[c] = 1;
                found = 1;
            }
        if (!found && n > 0) {
            fprintf(stderr, "aptus-info: unknown channel '%.*s' in '%s'\n", (int)n, p, text);
            return -1;
        }
        p += n;
        if (*p == ',')
            p++;
    }
    return 0;
}

static void print_reach(const uint8_t reach[APTUS_CH_COUNT])
{
    int first = 1;
    for (int c = 0; c < APTUS_CH_COUNT; c++)
        if (reach[c]) {
            printf("%s%s", first ? "" : ",", aptus_channel_name(c));
            first = 0;
        }
    if (first)
        printf("nothing");
}

/* One line per size range: exact bounds, the same in K/M/G, and the channel. */
static void print_range(uint64_t lo, uint64_t hi, const char *what)
{
    char lo_h[32], hi_h[32], hi_n[32], human[72];
    format_size(lo, lo_h, sizeof lo_h);
    format_size(hi, hi_h, sizeof hi_h);
    if (hi == UINT64_MAX)
        snprintf(hi_n, sizeof hi_n, "max");
    else
        snprintf(hi_n, sizeof hi_n, "%" PRIu64, hi);
    snprintf(human, sizeof human, "%s..%s", lo_h, hi_h);
    printf("    %20" PRIu64 " .. %-20s  %-16s  %s\n", lo, hi_n, human, what);
}

/* Prints the route for one kind of peer; returns 1 if some sizes have no channel. */
static int print_route(const char *peer, const struct aptus_rule_chain *chain, int nranks,
                       const uint8_t reach[APTUS_CH_COUNT])
{
    struct aptus_route route;
    int rc = aptus_rules_route(chain, nranks, reach, &route);
    printf("  %s (reachable: ", peer);
    print_reach(reach);
    printf("):\n");
    if (rc != 0 && route.n == 0) {
        int live = 0;
        for (int i = 0; i < chain->n; i++)
            live += reach[chain->rule[i].channel] && nranks >= chain->rule[i].ranks_min &&
                    nranks <= chain->rule[i].ranks_max;
        if (live)
            printf("    no route: the chain needs more than %d size ranges for this peer\n", APTUS_ROUTE_MAX);
        else
            printf("    no route: no rule of the chain applies with a channel that reaches this peer\n");
        return 1;
    }
    uint64_t next = 0;
    int gap = 0;
    for (unsigned i = 0; i < route.n; i++) {
        if (route.size_min[i] > next) {
            print_range(next, route.size_min[i] - 1, "NO CHANNEL");
            gap = 1;
        }
        print_range(route.size_min[i], route.size_max[i], aptus_channel_name(route.channel[i]));
        next = route.size_max[i] == UINT64_MAX ? UINT64_MAX : route.size_max[i] + 1;
        if (route.size_max[i] == UINT64_MAX)
            break;
    }
    if (route.n == 0 || route.size_max[route.n - 1] != UINT64_MAX) {
        print_range(next, UINT64_MAX, "NO CHANNEL");
        gap = 1;
    }
    return gap || rc != 0;
}

static void print_rules(const struct aptus_rule_chain *chain)
{
    for (int i = 0; i < chain->n; i++) {
        const struct aptus_rule *r = &chain->rule[i];
        printf("  rule %2d: ", i + 1);
        if (r->unconditional) {
            printf("always");
        } else {
            char a[32], b[32];
            format_size(r->size_min, a, sizeof a);
            format_size(r->size_max, b, sizeof b);
            printf("size %s..%s", a, b);
            if (r->ranks_min > 1 || r->ranks_max < INT32_MAX)
                printf(", ranks %d..%d", r->ranks_min, r->ranks_max);
        }
        printf(" -> %s", aptus_channel_name(r->channel));
        if (r->threshold)
            printf(" after %d messages", r->threshold);
        printf("\n");
    }
}

static void usage(FILE *f)
{
    fprintf(f, "usage: aptus-info [--mpit] [--rules CHAIN] [--ranks N] [--self CHANNELS] [--local CHANNELS]\n"
               "                  [--remote CHANNELS]\n"
               "  with no option: list every configuration variable (type, default, range, current value)\n"
               "  --rules CHAIN   parse a send rule chain and print its routes (exit 2 if invalid)\n"
               "  --ranks N       job size for the ranks conditions (default 2); without --rules the\n"
               "                  chain is APTUS_SEND_RULES (or its default)\n"
               "  --fabric KIND   rdma or sockets: the fabric whose built-in chains APTUS_SEND_RULES=auto\n"
               "                  and APTUS_ALLOC_RULES=auto stand for (default rdma; MPI_Init finds it)\n"
               "  --self/--local/--remote CHANNELS   comma-separated channels assumed to reach\n"
               "                  oneself / a peer on the same node / a peer on another node\n"
               "                  (defaults: self / smp,ud-sr,ud-zcopy,rc-sr,rc-fp,rc-rdma /\n"
               "                  ud-sr,ud-zcopy,rc-sr,rc-fp,rc-rdma)\n"
               "  --mpit          list the categories, control variables (with their values), performance\n"
               "                  variables and events through the MPI tool interface (MPI_T), as a\n"
               "                  performance tool sees them\n"
               "Exit status: 0; 1 if some message sizes have no channel for a peer; 2 on bad input.\n");
}

int main(int argc, char **argv)
{
    const char *rules = NULL;
    int nranks = 2, want_routes = 0, rdma = 1;
    uint8_t reach_self[APTUS_CH_COUNT] = { 0 }, reach_local[APTUS_CH_COUNT] = { 0 },
            reach_remote[APTUS_CH_COUNT] = { 0 };
    reach_self[APTUS_CH_SELF] = 1;
    for (int c = APTUS_CH_UD_SR; c < APTUS_CH_COUNT; c++)
        reach_local[c] = reach_remote[c] = 1;
    reach_local[APTUS_CH_SMP] = 1;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *val = NULL;
        const char *opts[] = { "--rules", "--ranks", "--self", "--local", "--remote", "--fabric" };
        int which = -1;
        for (int k = 0; k < 6; k++) {
            size_t n = strlen(opts[k]);
            if (strcmp(a, opts[k]) == 0) {
                if (i + 1 >= argc) {
                    fprintf(stderr, "aptus-info: %s needs a value\n", a);
                    return 2;
                }
                which = k;
                val = argv[++i];
            } else if (strncmp(a, opts[k], n) == 0 && a[n] == '=') {
                which = k;
                val = a + n + 1;
            }
        }
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return 0;
        }
        if (strcmp(a, "--mpit") == 0)
            return aptus_info_mpit();
        switch (which) {
        case 0:
            rules = val;
            want_routes = 1;
            break;
        case 1: {
            char *end;
            long v = strtol(val, &end, 10);
            if (*val == '\0' || *end != '\0' || v < 1 || v > INT32_MAX) {
                fprintf(stderr, "aptus-info: --ranks: '%s' is not a job size (a positive integer)\n", val);
                return 2;
            }
            nranks = (int)v;
            want_routes = 1;
            break;
        }
        case 2:
            if (parse_channel_list(val, reach_self))
                return 2;
            want_routes = 1;
            break;
        case 3:
            if (parse_channel_list(val, reach_local))
                return 2;
            want_routes = 1;
            break;
        case 4:
            if (parse_channel_list(val, reach_remote))
                return 2;
            want_routes = 1;
            break;
        case 5:
            if (strcmp(val, "rdma") != 0 && strcmp(val, "sockets") != 0) {
                fprintf(stderr, "aptus-info: --fabric takes rdma or sockets, not '%s'\n", val);
                return 2;
            }
            rdma = !strcmp(val, "rdma");
            want_routes = 1;
            break;
        default:
            fprintf(stderr, "aptus-info: unknown argument '%s'\n", a);
            usage(stderr);
            return 2;
        }
    }

    /* The configuration as MPI_Init checks it: every variable against its range, and the rule
     * chains (not the fault-injection and impairment settings, whose parsers live in the
     * library's channels). */
    char err[512];
    struct aptus_rule_chain check;
    if (aptus_config_init(err, sizeof err) != 0) {
        fprintf(stderr, "aptus-info: %s\n", err);
        return 2;
    }
    /* auto: the built-in chains of the fabric asked for (the library finds it at start-up) */
    const char *send_text = aptus_rules_text(aptus_config.send_rules, rdma);
    if (aptus_rules_parse(send_text, &check, err, sizeof err) != 0 ||
        aptus_alloc_rules_parse(aptus_alloc_rules_text(aptus_config.alloc_rules, &check), aptus_config.rc_threshold,
                                &check, err, sizeof err) != 0) {
        fprintf(stderr, "aptus-info: %s\n", err);
        return 2;
    }
    if (!want_routes) {
        list_variables();
        return 0;
    }

    if (!rules)
        rules = send_text;
    struct aptus_rule_chain chain;
    if (aptus_rules_parse(rules, &chain, err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        return 2;
    }
    const char *alloc_text =
        aptus_alloc_rules_text(aptus_config.alloc_rules, &chain); /* (auto follows the chain shown) */
    printf("send rule chain: %s\n", rules);
    if (aptus_config_tune_file()[0])
        printf("tune file: %s\n", aptus_config_tune_file());
    print_rules(&chain);
    struct aptus_rule_chain alloc;
    if (aptus_alloc_rules_parse(alloc_text, aptus_config.rc_threshold, &alloc, err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        return 2;
    }
    printf("allocation rules (APTUS_ALLOC_RULES: which messages over UD count toward an RC connection to a peer): "
           "%s\n",
           alloc_text);
    print_rules(&alloc);
    printf("  connections per process at most: %d (APTUS_RC_MAX)\n", aptus_config.rc_max);
    printf("routes for a job of %d rank%s (first matching rule whose channel reaches the peer):\n", nranks,
           nranks == 1 ? "" : "s");
    /* A remote peer before its connection is up: the channels opened on demand do not reach it. */
    uint8_t reach_unconnected[APTUS_CH_COUNT];
    memcpy(reach_unconnected, reach_remote, sizeof reach_unconnected);
    reach_unconnected[APTUS_CH_RC_SR] = reach_unconnected[APTUS_CH_RC_FP] = reach_unconnected[APTUS_CH_RC_RDMA] = 0;
    int missing = 0;
    missing |= print_route("self", &chain, nranks, reach_self);
    missing |= print_route("local peer", &chain, nranks, reach_local);
    missing |= print_route("remote peer, connected", &chain, nranks, reach_remote);
    missing |= print_route("remote peer, before its connection", &chain, nranks, reach_unconnected);
    return missing ? 1 : 0;
}
