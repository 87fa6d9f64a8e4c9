/* Host lists, placement and PMI_process_mapping for mpiexec (see hosts.h). */
#include "hosts.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int valid_name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-' ||
           c == '_';
}

int hosts_add(struct mpx_hostlist *l, const char *spec, const char *where, char *err, size_t errlen)
{
    const char *colon = strchr(spec, ':');
    size_t nl = colon ? (size_t)(colon - spec) : strlen(spec);
    long slots = 1;
    if (nl == 0) {
        snprintf(err, errlen, "%s: empty host name in '%s'", where, spec);
        return -1;
    }
    for (size_t i = 0; i < nl; i++)
        if (!valid_name_char(spec[i])) {
            snprintf(err, errlen, "%s: host name '%.*s' has a character other than letters, digits, '.', '-', '_'",
                     where, (int)nl, spec);
            return -1;
        }
    if (colon) {
        char *e;
        errno = 0;
        slots = strtol(colon + 1, &e, 10);
        if (!colon[1] || *e || errno || slots < 1 || slots > (1 << 20)) {
            snprintf(err, errlen, "%s: bad slot count '%s' for host '%.*s' (expected host:N, N >= 1)", where, colon + 1,
                     (int)nl, spec);
            return -1;
        }
    }
    for (int i = 0; i < l->n; i++)
        if (strlen(l->h[i].name) == nl && memcmp(l->h[i].name, spec, nl) == 0) {
            if (l->h[i].slots + slots <= (1 << 20))
                l->h[i].slots += (int)slots;
            return 0;
        }
    struct mpx_host *nh = realloc(l->h, ((size_t)l->n + 1) * sizeof *nh);
    if (!nh) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    l->h = nh;
    memset(&l->h[l->n], 0, sizeof l->h[l->n]);
    l->h[l->n].name = strndup(spec, nl);
    if (!l->h[l->n].name) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    l->h[l->n].slots = (int)slots;
    l->h[l->n].node = -1;
    l->n++;
    return 0;
}

int hosts_add_list(struct mpx_hostlist *l, const char *list, char *err, size_t errlen)
{
    char *copy = strdup(list);
    if (!copy) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int rc = 0;
    if (!*copy) {
        snprintf(err, errlen, "--hosts: empty host list");
        rc = -1;
    }
    char *p = copy;
    while (rc == 0 && p) {
        char *comma = strchr(p, ',');
        if (comma)
            *comma = '\0';
        rc = hosts_add(l, p, "--hosts", err, errlen);
        p = comma ? comma + 1 : NULL;
    }
    free(copy);
    return rc;
}

int hosts_read_file(struct mpx_hostlist *l, const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "cannot read hostfile '%s': %s", path, strerror(errno));
        return -1;
    }
    char line[1024];
    int lineno = 0, before = l->n, rc = 0;
    while (rc == 0 && fgets(line, sizeof line, f)) {
        lineno++;
        size_t len = strlen(line);
        if (len == sizeof line - 1 && line[len - 1] != '\n') {
            snprintf(err, errlen, "hostfile '%s' line %d: line too long", path, lineno);
            rc = -1;
            break;
        }
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        char *s = line;
        while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n')
            s++;
        char *e = s + strlen(s);
        while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r' || e[-1] == '\n'))
            *--e = '\0';
        if (!*s)
            continue;
        if (strpbrk(s, " \t")) {
            snprintf(err, errlen, "hostfile '%s' line %d: expected 'host' or 'host:slots', got '%s'", path, lineno, s);
            rc = -1;
            break;
        }
        char where[PATH_MAX + 64];
        snprintf(where, sizeof where, "hostfile '%s' line %d", path, lineno);
        rc = hosts_add(l, s, where, err, errlen);
    }
    if (rc == 0 && ferror(f)) {
        snprintf(err, errlen, "cannot read hostfile '%s': %s", path, strerror(errno));
        rc = -1;
    }
    fclose(f);
    if (rc == 0 && l->n == before) {
        snprintf(err, errlen, "hostfile '%s' names no host", path);
        rc = -1;
    }
    return rc;
}

int hosts_place(struct mpx_hostlist *l, int n, int ppn, int *host_of, int *node_of)
{
    int h = 0, used = 0;
    for (int i = 0; i < l->n; i++) {
        l->h[i].nranks = 0;
        l->h[i].node = -1;
    }
    for (int r = 0; r < n;) {
        int block = ppn > 0 ? ppn : l->h[h].slots;
        for (int k = 0; k < block && r < n; k++)
            host_of[r++] = h;
        h = (h + 1) % l->n;
    }
    for (int r = 0; r < n; r++)
        l->h[host_of[r]].nranks++;
    for (int i = 0; i < l->n; i++)
        if (l->h[i].nranks > 0)
            l->h[i].node = used++;
    for (int r = 0; r < n; r++)
        node_of[r] = l->h[host_of[r]].node;
    return used;
}

struct triple {
    int start, count, ppn;
};

/* Triples for node_of[0..n), or -1 when more than max are needed. */
static int encode_runs(const int *node_of, int n, struct triple *t, int max)
{
    int nt = 0;
    for (int r = 0; r < n;) {
        int node = node_of[r], len = 0;
        while (r + len < n && node_of[r + len] == node)
            len++;
        r += len;
        if (nt > 0 && t[nt - 1].ppn == len && t[nt - 1].start + t[nt - 1].count == node) {
            t[nt - 1].count++;
            continue;
        }
        if (nt == max)
            return -1;
        t[nt++] = (struct triple){ node, 1, len };
    }
    return nt;
}

char *mapping_encode(const int *node_of, int n)
{
    /* The client parser takes at most 256 triples and repeats the list until every rank has a
     * node: use the shortest prefix whose repetition gives node_of. */
    enum { MAXT = 256 };
    struct triple t[MAXT];
    int nt = -1;
    for (int p = 1; p <= n; p++) {
        if (p < n && node_of[p] == node_of[p - 1])
            continue; /* a period ends where a run ends */
        int ok = 1;
        for (int r = p; r < n && ok; r++)
            ok = node_of[r] == node_of[r % p];
        if (!ok)
            continue;
        /* The last block of a partial repetition must still match: checked above. The
         * repetition of a prefix that ends inside a run of the next period is also fine. */
        nt = encode_runs(node_of, p, t, MAXT);
        if (nt > 0)
            break;
    }
    if (nt <= 0)
        return NULL;
    size_t cap = 16 + (size_t)nt * 40;
    char *m = malloc(cap);
    if (!m)
        return NULL;
    size_t len = (size_t)snprintf(m, cap, "(vector");
    for (int i = 0; i < nt; i++)
        len += (size_t)snprintf(m + len, cap - len, ",(%d,%d,%d)", t[i].start, t[i].count, t[i].ppn);
    snprintf(m + len, cap - len, ")");
    return m;
}

void hosts_free(struct mpx_hostlist *l)
{
    for (int i = 0; i < l->n; i++)
        free(l->h[i].name);
    free(l->h);
    l->h = NULL;
    l->n = 0;
}
