/* PMI-2 server for mpiexec (see pmiserv.h and src/runtime/pmi.c for the wire format). */
#include "pmiserv.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define MSG_MAX   (64 * 1024)
#define MAX_PAIRS 4096 /* (a spawn's commands, arguments and info keys) */

struct pmisrv_kv {
    struct pmisrv_kv *next;
    int rank;   /* who put it */
    long epoch; /* fences completed when it was put; visible once fences_done > epoch */
    char *key;
    char *val;
};

struct pmisrv_nattr {
    struct pmisrv_nattr *next;
    int node;
    char *key;
    char *val;
};

#define pair pmisrv_pair

static void srv_log(const char *fmt, ...)
{
    char line[1200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(stderr, "mpiexec: %s\n", line);
}

static size_t hash_str(const char *s)
{
    size_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

int pmisrv_init(struct pmisrv *s, int size, const int *fds, const char *jobid, const char *mapping, const int *node_of)
{
    memset(s, 0, sizeof *s);
    s->size = size;
    s->jobid = jobid;
    s->mapping = mapping;
    s->node_of = node_of;
    s->abort.rank = s->lost_abort.rank = -1;
    s->conn = calloc((size_t)size, sizeof *s->conn);
    s->nbuckets = 1024;
    while (s->nbuckets < (size_t)size * 8 && s->nbuckets < (1u << 20))
        s->nbuckets *= 2;
    s->buckets = calloc(s->nbuckets, sizeof *s->buckets);
    if (!s->conn || !s->buckets)
        return -1;
    for (int i = 0; i < size; i++) {
        s->conn[i].fd = fds[i];
        s->conn[i].adopted = fds[i] >= 0;
    }
    return 0;
}

static int process_buffer(struct pmisrv *s, int rank);

int pmisrv_adopt(struct pmisrv *s, int rank, int fd, const char *data, size_t n)
{
    struct pmisrv_conn *c = &s->conn[rank];
    if (c->adopted)
        return -1;
    size_t cap = 8192;
    while (cap < n + 4096)
        cap *= 2;
    c->buf = malloc(cap);
    if (!c->buf)
        return -1;
    c->cap = cap;
    memcpy(c->buf, data, n);
    c->len = n;
    c->fd = fd;
    c->adopted = 1;
    if (process_buffer(s, rank) != 0) {
        pmisrv_close(s, rank);
        return 0;
    }
    return pmisrv_service(s, rank);
}

void pmisrv_close(struct pmisrv *s, int rank)
{
    struct pmisrv_conn *c = &s->conn[rank];
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
    free(c->buf);
    c->buf = NULL;
    c->len = c->cap = 0;
    if (c->in_fence) {
        c->in_fence = 0;
        s->fence_waiting--;
    }
}

void pmisrv_destroy(struct pmisrv *s)
{
    for (int i = 0; i < s->size; i++)
        pmisrv_close(s, i);
    for (size_t b = 0; b < s->nbuckets; b++) {
        struct pmisrv_kv *e = s->buckets[b], *n;
        for (; e; e = n) {
            n = e->next;
            free(e->key);
            free(e->val);
            free(e);
        }
    }
    for (struct pmisrv_nattr *a = s->nattrs, *n; a; a = n) {
        n = a->next;
        free(a->key);
        free(a->val);
        free(a);
    }
    free(s->buckets);
    free(s->conn);
    memset(s, 0, sizeof *s);
}

/* ---------- sending ---------- */

static int send_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                /* The rank is not reading; give it a while, then drop it. */
                struct pollfd pfd = { .fd = fd, .events = POLLOUT };
                int r = poll(&pfd, 1, 10000);
                if (r > 0)
                    continue;
                if (r < 0 && errno == EINTR)
                    continue;
                return -1;
            }
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

struct reply {
    char buf[MSG_MAX + 8];
    size_t len;
    int overflow;
};

static void r_raw(struct reply *r, const char *s, int escape)
{
    for (; *s; s++) {
        size_t need = (escape && *s == ';') ? 2 : 1;
        if (r->len + need > MSG_MAX) {
            r->overflow = 1;
            return;
        }
        r->buf[6 + r->len++] = *s;
        if (need == 2)
            r->buf[6 + r->len++] = ';';
    }
}

static void r_pair(struct reply *r, const char *key, const char *val)
{
    r_raw(r, key, 0);
    r_raw(r, "=", 0);
    r_raw(r, val, 1);
    r_raw(r, ";", 0);
}

static void r_pair_int(struct reply *r, const char *key, long v)
{
    char num[32];
    snprintf(num, sizeof num, "%ld", v);
    r_pair(r, key, num);
}

static void r_start(struct reply *r, const char *cmd)
{
    r->len = 0;
    r->overflow = 0;
    r_pair(r, "cmd", cmd);
}

static int r_send(struct pmisrv *s, int rank, struct reply *r)
{
    char hdr[8];
    if (r->overflow)
        return -1;
    snprintf(hdr, sizeof hdr, "%-6u", (unsigned)r->len);
    memcpy(r->buf, hdr, 6);
    return send_all(s->conn[rank].fd, r->buf, r->len + 6);
}

int pmisrv_reply(struct pmisrv *s, int rank, const char *body, size_t len)
{
    char hdr[8];
    if (s->conn[rank].fd < 0)
        return 0;
    if (len > MSG_MAX)
        return -1;
    snprintf(hdr, sizeof hdr, "%-6u", (unsigned)len);
    if (send_all(s->conn[rank].fd, hdr, 6) != 0 || send_all(s->conn[rank].fd, body, len) != 0) {
        pmisrv_close(s, rank);
        return -1;
    }
    return 0;
}

/* Shared scratch reply: the server is single-threaded. */
static struct reply R;

static int reply_rc(struct pmisrv *s, int rank, const char *cmd, int rc, const char *errmsg)
{
    r_start(&R, cmd);
    r_pair_int(&R, "rc", rc);
    if (errmsg)
        r_pair(&R, "errmsg", errmsg);
    return r_send(s, rank, &R);
}

/* ---------- parsing ---------- */

int pmisrv_parse(char *s, size_t len, struct pair *pairs, int max, int *npairs)
{
    char *end = s + len;
    int n = 0;
    while (s < end) {
        while (s < end && (*s == ' ' || *s == '\n'))
            s++;
        if (s >= end)
            break;
        char *key = s;
        while (s < end && *s != '=' && *s != ';')
            s++;
        if (s >= end || *s != '=')
            return -1;
        *s++ = '\0';
        char *val = s, *w = s;
        while (s < end) {
            if (*s == ';') {
                if (s + 1 < end && s[1] == ';') {
                    *w++ = ';';
                    s += 2;
                    continue;
                }
                break;
            }
            *w++ = *s++;
        }
        if (s < end)
            s++;
        *w = '\0';
        if (n == max)
            return -1;
        pairs[n].key = key;
        pairs[n].val = val;
        n++;
    }
    *npairs = n;
    return 0;
}

const char *pmisrv_get(const struct pair *p, int n, const char *key)
{
    for (int i = 0; i < n; i++)
        if (strcmp(p[i].key, key) == 0)
            return p[i].val;
    return NULL;
}

/* ---------- key-value space ---------- */

static int kv_put(struct pmisrv *s, int rank, const char *key, const char *val, long epoch)
{
    size_t b = hash_str(key) & (s->nbuckets - 1);
    for (struct pmisrv_kv *e = s->buckets[b]; e; e = e->next) {
        if (e->rank == rank && strcmp(e->key, key) == 0) {
            char *v = strdup(val);
            if (!v)
                return -1;
            free(e->val);
            e->val = v;
            e->epoch = epoch;
            return 0;
        }
    }
    struct pmisrv_kv *e = calloc(1, sizeof *e);
    if (!e)
        return -1;
    e->rank = rank;
    e->epoch = epoch;
    e->key = strdup(key);
    e->val = strdup(val);
    if (!e->key || !e->val) {
        free(e->key);
        free(e->val);
        free(e);
        return -1;
    }
    e->next = s->buckets[b];
    s->buckets[b] = e;
    return 0;
}

/* Visible value for key, preferring the one put by srcid when srcid >= 0. */
static const char *kv_get(struct pmisrv *s, int srcid, const char *key)
{
    size_t b = hash_str(key) & (s->nbuckets - 1);
    const char *any = NULL;
    for (struct pmisrv_kv *e = s->buckets[b]; e; e = e->next) {
        if (e->epoch >= s->fences_done || strcmp(e->key, key) != 0)
            continue;
        if (srcid >= 0 && e->rank == srcid)
            return e->val;
        if (!any)
            any = e->val;
    }
    return any;
}

int pmisrv_preput(struct pmisrv *s, const char *key, const char *val)
{
    return kv_put(s, -1, key, val, -1); /* (epoch -1: visible before any fence) */
}

/* ---------- commands ---------- */

static void fence_check(struct pmisrv *s)
{
    if (s->fence_waiting < s->size)
        return;
    s->fences_done++;
    s->fence_waiting = 0;
    for (int i = 0; i < s->size; i++) {
        if (!s->conn[i].in_fence)
            continue;
        s->conn[i].in_fence = 0;
        if (s->conn[i].fd >= 0 && reply_rc(s, i, "kvs-fence-response", 0, NULL) != 0)
            pmisrv_close(s, i);
    }
}

/* Returns 0, or -1 when the connection must be closed. */
static int handle(struct pmisrv *s, int rank, struct pair *p, int np, const char *raw, size_t rawlen)
{
    struct pmisrv_conn *c = &s->conn[rank];
    const char *cmd = pmisrv_get(p, np, "cmd");
    if (!cmd) {
        srv_log("rank %d sent a PMI message without cmd", rank);
        return -1;
    }
    if (s->verbose)
        srv_log("rank %d: PMI %s", rank, cmd);

    if (strcmp(cmd, "fullinit") == 0) {
        const char *pr = pmisrv_get(p, np, "pmirank");
        if (pr && atoi(pr) != rank) {
            srv_log("rank %d claims pmirank=%s", rank, pr);
            reply_rc(s, rank, "fullinit-response", -1, "rank mismatch");
            return -1;
        }
        if (!c->initialized)
            s->ninit++;
        c->initialized = 1;
        r_start(&R, "fullinit-response");
        r_pair(&R, "pmi-version", "2");
        r_pair(&R, "pmi-subversion", "0");
        r_pair_int(&R, "rank", rank);
        r_pair_int(&R, "size", s->size);
        r_pair(&R, "appnum", "0");
        r_pair(&R, "debugged", "FALSE");
        r_pair(&R, "pmiverbose", s->verbose ? "TRUE" : "FALSE");
        if (s->spawner)
            r_pair(&R, "spawner-jobid", s->spawner);
        r_pair(&R, "rc", "0");
        return r_send(s, rank, &R);
    }
    if (strcmp(cmd, "job-getid") == 0) {
        r_start(&R, "job-getid-response");
        r_pair(&R, "jobid", s->jobid);
        r_pair(&R, "rc", "0");
        return r_send(s, rank, &R);
    }
    if (strcmp(cmd, "info-getjobattr") == 0) {
        const char *key = pmisrv_get(p, np, "key");
        char num[32];
        const char *val = NULL;
        if (key && strcmp(key, "PMI_process_mapping") == 0) {
            val = s->mapping;
        } else if (key && strcmp(key, "universeSize") == 0) {
            snprintf(num, sizeof num, "%d", s->size);
            val = num;
        }
        r_start(&R, "info-getjobattr-response");
        r_pair(&R, "found", val ? "TRUE" : "FALSE");
        if (val)
            r_pair(&R, "value", val);
        r_pair(&R, "rc", "0");
        return r_send(s, rank, &R);
    }
    if (strcmp(cmd, "info-putnodeattr") == 0) {
        const char *key = pmisrv_get(p, np, "key"), *val = pmisrv_get(p, np, "value");
        if (!key || !val)
            return reply_rc(s, rank, "info-putnodeattr-response", -1, "key and value required");
        int node = s->node_of[rank];
        struct pmisrv_nattr *a;
        for (a = s->nattrs; a; a = a->next)
            if (a->node == node && strcmp(a->key, key) == 0)
                break;
        if (!a) {
            a = calloc(1, sizeof *a);
            if (!a || !(a->key = strdup(key))) {
                free(a);
                return reply_rc(s, rank, "info-putnodeattr-response", -1, "out of memory");
            }
            a->node = node;
            a->next = s->nattrs;
            s->nattrs = a;
        }
        free(a->val);
        a->val = strdup(val);
        return reply_rc(s, rank, "info-putnodeattr-response", a->val ? 0 : -1, NULL);
    }
    if (strcmp(cmd, "info-getnodeattr") == 0) {
        const char *key = pmisrv_get(p, np, "key");
        const char *val = NULL;
        for (struct pmisrv_nattr *a = s->nattrs; key && a; a = a->next)
            if (a->node == s->node_of[rank] && strcmp(a->key, key) == 0 && a->val)
                val = a->val;
        r_start(&R, "info-getnodeattr-response");
        r_pair(&R, "found", val ? "TRUE" : "FALSE");
        if (val)
            r_pair(&R, "value", val);
        r_pair(&R, "rc", "0");
        return r_send(s, rank, &R);
    }
    if (strcmp(cmd, "kvs-put") == 0) {
        const char *key = pmisrv_get(p, np, "key"), *val = pmisrv_get(p, np, "value");
        if (!key || !*key || !val)
            return reply_rc(s, rank, "kvs-put-response", -1, "key and value required");
        if (kv_put(s, rank, key, val, s->fences_done) != 0)
            return reply_rc(s, rank, "kvs-put-response", -1, "out of memory");
        return reply_rc(s, rank, "kvs-put-response", 0, NULL);
    }
    if (strcmp(cmd, "kvs-get") == 0) {
        const char *key = pmisrv_get(p, np, "key"), *src = pmisrv_get(p, np, "srcid");
        const char *val = key ? kv_get(s, src ? atoi(src) : -1, key) : NULL;
        r_start(&R, "kvs-get-response");
        r_pair(&R, "found", val ? "TRUE" : "FALSE");
        if (val)
            r_pair(&R, "value", val);
        r_pair(&R, "rc", "0");
        return r_send(s, rank, &R);
    }
    if (strcmp(cmd, "kvs-fence") == 0) {
        if (c->in_fence)
            return reply_rc(s, rank, "kvs-fence-response", -1, "already in fence");
        c->in_fence = 1;
        s->fence_waiting++;
        fence_check(s);
        return 0;
    }
    if (strcmp(cmd, "finalize") == 0) {
        c->finalized = 1;
        return reply_rc(s, rank, "finalize-response", 0, NULL);
    }
    if (strcmp(cmd, "abort") == 0) {
        const char *lost = pmisrv_get(p, np, "peerlost");
        long l = lost ? strtol(lost, NULL, 10) : -1;
        struct pmisrv_abort *a = l >= 0 && l < s->size && l != rank ? &s->lost_abort : &s->abort;
        c->aborted = 1;
        if (a->rank < 0) {
            const char *code = pmisrv_get(p, np, "exitcode");
            const char *msg = pmisrv_get(p, np, "msg");
            a->rank = rank;
            a->code = code ? atoi(code) : 1;
            a->lost = a == &s->lost_abort ? (int)l : -1;
            snprintf(a->msg, sizeof a->msg, "%s", msg ? msg : "");
        }
        return 0; /* no reply: the caller exits */
    }
    if (s->extra && (!strcmp(cmd, "spawn") || !strcmp(cmd, "aptus-universe") || !strcmp(cmd, "aptus-spawn-cancel") ||
                     !strcmp(cmd, "name-publish") || !strcmp(cmd, "name-lookup") || !strcmp(cmd, "name-unpublish")))
        return s->extra(s, rank, cmd, raw, rawlen);
    /* Unknown or unsupported (name service, job-connect...). */
    {
        char resp[96];
        snprintf(resp, sizeof resp, "%.80s-response", cmd);
        return reply_rc(s, rank, resp, -1, "not supported by this mpiexec");
    }
}

/* Consumes complete requests in the buffer. Returns 0, or -1 to close. */
static int process_buffer(struct pmisrv *s, int rank)
{
    struct pmisrv_conn *c = &s->conn[rank];
    size_t off = 0;
    int rc = 0;
    static struct pair pairs[MAX_PAIRS]; /* (the server is single-threaded) */
    int np;
    while (c->fd >= 0 && off < c->len) {
        char *m = c->buf + off;
        size_t avail = c->len - off;
        if (!c->handshaken && avail >= 4 && memcmp(m, "cmd=", 4) == 0) {
            /* PMI-1 line format, used only for the version handshake. */
            char *nl = memchr(m, '\n', avail);
            if (!nl) {
                if (avail > 1024) {
                    srv_log("rank %d: overlong PMI init line", rank);
                    rc = -1;
                }
                break;
            }
            *nl = '\0';
            int ver = -1, sub = 0;
            const char *v = strstr(m, "pmi_version=");
            const char *sv = strstr(m, "pmi_subversion=");
            if (v)
                ver = atoi(v + 12);
            if (sv)
                sub = atoi(sv + 15);
            off += (size_t)(nl - m) + 1;
            if (strncmp(m, "cmd=init", 8) != 0 || (m[8] != ' ' && m[8] != '\0')) {
                srv_log("rank %d: expected PMI init, got '%.60s'", rank, m);
                rc = -1;
                break;
            }
            (void)sub;
            if (ver != 2) {
                static const char no[] = "cmd=response_to_init pmi_version=2 pmi_subversion=0 rc=-1\n";
                srv_log("rank %d asked for PMI version %d; this mpiexec serves PMI-2 only", rank, ver);
                send_all(c->fd, no, sizeof no - 1);
                rc = -1;
                break;
            }
            static const char ok[] = "cmd=response_to_init pmi_version=2 pmi_subversion=0 rc=0\n";
            if (send_all(c->fd, ok, sizeof ok - 1) != 0) {
                rc = -1;
                break;
            }
            c->handshaken = 1;
            continue;
        }
        if (avail < 6)
            break;
        char hdr[7], *e, *h = hdr;
        memcpy(hdr, m, 6);
        hdr[6] = '\0';
        while (*h == ' ')
            h++;
        long len = strtol(h, &e, 10);
        while (*e == ' ')
            e++;
        if (e == h || *e != '\0' || len <= 0 || len > MSG_MAX) {
            srv_log("rank %d sent a malformed PMI-2 header '%s'", rank, hdr);
            rc = -1;
            break;
        }
        if (avail < 6 + (size_t)len)
            break;
        c->handshaken = 1;
        /* Parse in place: the message body is followed by the next one, so copy it. */
        static char body[MSG_MAX + 1], raw[MSG_MAX + 1];
        memcpy(body, m + 6, (size_t)len);
        memcpy(raw, m + 6, (size_t)len);
        body[len] = raw[len] = '\0';
        off += 6 + (size_t)len;
        if (pmisrv_parse(body, (size_t)len, pairs, MAX_PAIRS, &np) != 0) {
            srv_log("rank %d sent a malformed PMI-2 message", rank);
            rc = -1;
            break;
        }
        if (handle(s, rank, pairs, np, raw, (size_t)len) != 0) {
            rc = -1;
            break;
        }
    }
    if (c->buf && off > 0) {
        memmove(c->buf, c->buf + off, c->len - off);
        c->len -= off;
    }
    return rc;
}

int pmisrv_service(struct pmisrv *s, int rank)
{
    struct pmisrv_conn *c = &s->conn[rank];
    if (c->fd < 0)
        return 0;
    for (;;) {
        if (c->cap - c->len < 4096) {
            size_t nc = c->cap ? c->cap * 2 : 8192;
            if (nc > 4 * MSG_MAX + 8192) {
                srv_log("rank %d: PMI input too large", rank);
                pmisrv_close(s, rank);
                return 0;
            }
            char *nb = realloc(c->buf, nc);
            if (!nb) {
                pmisrv_close(s, rank);
                return 0;
            }
            c->buf = nb;
            c->cap = nc;
        }
        ssize_t r = read(c->fd, c->buf + c->len, c->cap - c->len);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                break;
            pmisrv_close(s, rank);
            return 0;
        }
        if (r == 0) {
            /* Answer what came before the EOF (e.g. an abort), then close. */
            process_buffer(s, rank);
            pmisrv_close(s, rank);
            return 0;
        }
        c->len += (size_t)r;
        if (process_buffer(s, rank) != 0) {
            pmisrv_close(s, rank);
            return 0;
        }
    }
    return c->fd >= 0;
}
