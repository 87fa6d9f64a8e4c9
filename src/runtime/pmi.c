/* PMI-2 client (see pmi.h).
 *
 * Wire protocol, as spoken by our mpiexec, Slurm (srun --mpi=pmi2) and Hydra:
 *   1. handshake in the PMI-1 line format:
 *        client: "cmd=init pmi_version=2 pmi_subversion=0\n"
 *        server: "cmd=response_to_init pmi_version=2 pmi_subversion=0 rc=0\n"
 *   2. then every message is a 6-character decimal length (space padded) followed by that
 *      many bytes of "key=value;" pairs, the first being cmd=...; a ';' inside a value is
 *      doubled (";;").
 *        fullinit        -> fullinit-response (rank, size, appnum, rc)
 *        job-getid       -> job-getid-response (jobid)
 *        info-getjobattr -> info-getjobattr-response (found, value)
 *        kvs-put / kvs-fence / kvs-get -> *-response
 *        spawn (ncmds, preputcount, ppkeyI/ppvalI, then per command subcmd, maxprocs, argc,
 *              argvI, infokeycount, infokeyI/infovalI, in that order: Slurm's parser wants it)
 *                        -> spawn-response (rc, jobid, errmsg); the new job finds the preput
 *                           keys in its own key space, and learns it was spawned from
 *                           fullinit-response's spawner-jobid (Slurm) or PMI_SPAWNED=1 (Hydra)
 *        aptus-universe  -> aptus-universe-response (free, live): our mpiexec only
 *        name-publish (name, port), name-lookup (name) -> value, name-unpublish (name, port):
 *                        our mpiexec's name service (port on unpublish, and dir -- the directory
 *                        runs share names in -- on publish and lookup, are ours)
 *        aptus-spawn-cancel (jobid, or none: the spawns not yet answered) -> *-response: our
 *                        mpiexec only; it ends the job (an unanswered spawn is answered first)
 *        abort (isworld, msg; plus our extensions exitcode and peerlost: the rank whose loss
 *              caused the abort) -> no response
 *        finalize        -> finalize-response
 *
 * Compatibility notes: Slurm's PMI-2 server does not unescape ";;", so values meant to work
 * under srun must not contain ';' (our mpiexec handles it). Slurm's key space is global (the
 * srcid of kvs-get is ignored), so keys should be unique per rank, e.g. carry the rank.
 *
 * MPICH's Hydra (read in its public source; 4.0.x is Debian 12's mpiexec.mpich):
 *  - kvs-fence is lazy, as the PMI-2 definition allows: the server answers at once and only
 *    counts the rank's fences; a kvs-get of a key it does not have is held until every rank
 *    has made at least as many fences, then answered (found or not). So a fence orders the
 *    key space and nothing else: aptus_pmi_barrier makes a barrier out of put, fence, get.
 *  - Hydra 4.0.x has no PMI-2 abort: the command is refused ("Unrecognized PMI command") and
 *    the job ends with 255. Hydra reads the framing of every message afresh (a message that
 *    starts with "cmd=" is a PMI-1 line, whatever the handshake said), and its PMI-1 abort
 *    ("cmd=abort exitcode=N\n") kills the job and makes mpiexec exit with N, in every Hydra
 *    version. So under Hydra the abort goes in that form. Hydra is recognised by what its
 *    proxy puts in the environment (MPI_LOCALNRANKS, and no PMI_JOBID, which our mpiexec and
 *    Slurm set).
 *
 * Transport: the socket named by PMI_FD (our mpiexec on one host, Slurm, Hydra), or, without
 * PMI_FD, a TCP connection to PMI_PORT=host:port (our mpiexec's ranks on other hosts, and
 * Hydra's -pmi-port mode, which names the same variable). The protocol on it is the same.
 *
 * Singleton (neither PMI_FD nor PMI_PORT): rank 0 of 1 with a local key table.
 *
 * Only C11 + POSIX. All entry points are serialised by one mutex. */
#include "runtime/pmi.h"

#include <errno.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define PMI_MSG_MAX   (64 * 1024)
#define PMI_MAX_PAIRS 64

struct pmi_pair {
    char *key;
    char *val;
};

struct pmi_msg {
    char buf[PMI_MSG_MAX + 1];
    struct pmi_pair pairs[PMI_MAX_PAIRS];
    int npairs;
};

struct local_kv {
    char key[APTUS_PMI_MAX_KEY];
    char *val;
};

static struct {
    int initialized;
    int singleton;
    int hydra;             /* the server is MPICH's Hydra: abort in the PMI-1 form */
    int spawned;           /* the server started this job for another's spawn command */
    int owed;              /* spawn responses given up on: dropped when they come */
    char late_job[8][128]; /* ... the job ids of those that said their job started, not yet cancelled */
    int nlate;
    int quiet; /* a refusal is the caller's to report (recv_msg prints none) */
    int fd;
    int rank;
    int size;
    char jobid[64];
    /* singleton key table */
    struct local_kv *tab;
    int ntab, captab;
    /* scratch message (static: 64 KiB is too much for some thread stacks) */
    struct pmi_msg msg;
    char out[PMI_MSG_MAX + 8];
} pmi = { .fd = -1 };

static pthread_mutex_t pmi_lock = PTHREAD_MUTEX_INITIALIZER;

static void pmi_err(const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(stderr, "Aptus PMI: %s\n", line);
}

/* ---------- raw I/O ---------- */

static int write_all(int fd, const char *p, size_t n)
{
    int sock = 1;
    while (n > 0) {
        /* (a launcher that went away is an error here, not a SIGPIPE that ends the process) */
        ssize_t w = sock ? send(fd, p, n, MSG_NOSIGNAL) : write(fd, p, n);
        if (w < 0 && sock && errno == ENOTSOCK) {
            sock = 0;
            continue;
        }
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static int read_all(int fd, char *p, size_t n)
{
    while (n > 0) {
        ssize_t r = read(fd, p, n);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (r == 0) {
            errno = ECONNRESET;
            return -1;
        }
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

/* ---------- message building ---------- */

struct builder {
    char *p;
    size_t len, cap;
    int overflow;
};

static void b_raw(struct builder *b, const char *s)
{
    size_t n = strlen(s);
    if (b->len + n > b->cap) {
        b->overflow = 1;
        return;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
}

/* Appends key=value; escaping ';' in the value by doubling it. */
static void b_pair(struct builder *b, const char *key, const char *val)
{
    b_raw(b, key);
    b_raw(b, "=");
    for (const char *s = val; *s; s++) {
        size_t need = (*s == ';') ? 2 : 1;
        if (b->len + need > b->cap) {
            b->overflow = 1;
            return;
        }
        b->p[b->len++] = *s;
        if (*s == ';')
            b->p[b->len++] = ';';
    }
    b_raw(b, ";");
}

static void b_pair_int(struct builder *b, const char *key, long v)
{
    char num[32];
    snprintf(num, sizeof num, "%ld", v);
    b_pair(b, key, num);
}

static void b_start(struct builder *b, const char *cmd)
{
    b->p = pmi.out + 6;
    b->len = 0;
    b->cap = PMI_MSG_MAX;
    b->overflow = 0;
    b_pair(b, "cmd", cmd);
}

static int b_send(struct builder *b)
{
    char hdr[8];
    if (b->overflow) {
        pmi_err("message too long");
        return -1;
    }
    snprintf(hdr, sizeof hdr, "%-6u", (unsigned)b->len);
    memcpy(pmi.out, hdr, 6);
    if (write_all(pmi.fd, pmi.out, b->len + 6) != 0) {
        pmi_err("write to PMI server failed: %s", strerror(errno));
        return -1;
    }
    return 0;
}

/* ---------- message parsing ---------- */

/* Parses "k=v;k=v;..." in place (unescaping ";;"). */
static int parse_pairs(struct pmi_msg *m, size_t len)
{
    char *s = m->buf, *end = m->buf + len;
    m->npairs = 0;
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
        *w = '\0';
        if (s < end)
            s++; /* the terminating ';' */
        if (m->npairs == PMI_MAX_PAIRS)
            return -1;
        m->pairs[m->npairs].key = key;
        m->pairs[m->npairs].val = val;
        m->npairs++;
    }
    return 0;
}

static const char *msg_get(const struct pmi_msg *m, const char *key)
{
    for (int i = 0; i < m->npairs; i++)
        if (strcmp(m->pairs[i].key, key) == 0)
            return m->pairs[i].val;
    return NULL;
}

static int parse_int(const char *s, int *out)
{
    char *e;
    long v;
    if (!s || !*s)
        return -1;
    errno = 0;
    v = strtol(s, &e, 10);
    if (errno || *e != '\0' || v < INT_MIN || v > INT_MAX)
        return -1;
    *out = (int)v;
    return 0;
}

/* Reads one length-prefixed message and checks that it is cmd=expect with rc=0. */
static int recv_msg(const char *expect)
{
    char hdr[7];
    int len;
    struct pmi_msg *m = &pmi.msg;
    if (read_all(pmi.fd, hdr, 6) != 0) {
        pmi_err("read from PMI server failed (waiting for %s): %s", expect,
                errno == ECONNRESET ? "connection closed" : strerror(errno));
        return -1;
    }
    hdr[6] = '\0';
    {
        char *p = hdr, *e;
        long v;
        while (*p == ' ')
            p++;
        v = strtol(p, &e, 10);
        while (*e == ' ')
            e++;
        if (e == p || *e != '\0' || v < 0 || v > PMI_MSG_MAX) {
            pmi_err("bad message header from PMI server: '%s'", hdr);
            return -1;
        }
        len = (int)v;
    }
    if (read_all(pmi.fd, m->buf, (size_t)len) != 0) {
        pmi_err("read from PMI server failed: %s", strerror(errno));
        return -1;
    }
    m->buf[len] = '\0';
    if (parse_pairs(m, (size_t)len) != 0) {
        pmi_err("malformed message from PMI server");
        return -1;
    }
    const char *cmd = msg_get(m, "cmd");
    if (cmd && pmi.owed > 0 && strcmp(cmd, "spawn-response") == 0 && strcmp(expect, "spawn-response") != 0) {
        pmi.owed--; /* (late: its spawn gave up waiting) */
        const char *j = msg_get(m, "jobid"), *jrc = msg_get(m, "rc");
        if (j && *j && (!jrc || strcmp(jrc, "0") == 0))
            snprintf(pmi.late_job[pmi.nlate < 8 ? pmi.nlate++ : 7], sizeof pmi.late_job[0], "%s", j);
        return recv_msg(expect);
    }
    if (!cmd || strcmp(cmd, expect) != 0) {
        pmi_err("unexpected reply from PMI server: cmd=%s (expected %s)", cmd ? cmd : "(none)", expect);
        return -1;
    }
    const char *rc = msg_get(m, "rc");
    if (rc && strcmp(rc, "0") != 0) {
        const char *em = msg_get(m, "errmsg");
        if (!em)
            em = msg_get(m, "msg");
        if (!pmi.quiet)
            pmi_err("%s failed: rc=%s%s%s", expect, rc, em ? ": " : "", em ? em : "");
        return -1;
    }
    return 0;
}

/* ---------- init ---------- */

static int handshake(void)
{
    static const char hello[] = "cmd=init pmi_version=2 pmi_subversion=0\n";
    char line[256];
    size_t n = 0;
    if (write_all(pmi.fd, hello, sizeof hello - 1) != 0) {
        pmi_err("cannot talk to PMI server on fd %d: %s", pmi.fd, strerror(errno));
        return -1;
    }
    /* One newline-terminated line; read byte by byte so nothing after it is consumed. */
    for (;;) {
        char c;
        if (read_all(pmi.fd, &c, 1) != 0) {
            pmi_err("no reply to PMI init on fd %d", pmi.fd);
            return -1;
        }
        if (c == '\n')
            break;
        if (n + 1 < sizeof line)
            line[n++] = c;
    }
    line[n] = '\0';
    if (strncmp(line, "cmd=response_to_init", 20) != 0) {
        pmi_err("unexpected reply to PMI init: '%s'", line);
        return -1;
    }
    /* Check rc and the version granted (space-separated PMI-1 format). */
    int rc = 0, ver = 2;
    char *save = NULL;
    for (char *tok = strtok_r(line, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
        if (strncmp(tok, "rc=", 3) == 0)
            rc = atoi(tok + 3);
        else if (strncmp(tok, "pmi_version=", 12) == 0)
            ver = atoi(tok + 12);
    }
    if (rc != 0 || ver != 2) {
        pmi_err("PMI server refused PMI-2 (rc=%d, version=%d)", rc, ver);
        return -1;
    }
    return 0;
}

/* Connects to PMI_PORT: "host:port" or "[v6addr]:port". Returns the socket or -1. */
static int connect_port(const char *spec)
{
    char host[256];
    const char *port;
    if (spec[0] == '[') {
        const char *rb = strchr(spec, ']');
        if (!rb || rb[1] != ':' || (size_t)(rb - spec - 1) >= sizeof host)
            goto bad;
        memcpy(host, spec + 1, (size_t)(rb - spec - 1));
        host[rb - spec - 1] = '\0';
        port = rb + 2;
    } else {
        const char *colon = strrchr(spec, ':');
        if (!colon || colon == spec || (size_t)(colon - spec) >= sizeof host)
            goto bad;
        memcpy(host, spec, (size_t)(colon - spec));
        host[colon - spec] = '\0';
        port = colon + 1;
    }
    if (!*port)
        goto bad;
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    int gai = getaddrinfo(host, port, &hints, &res);
    if (gai != 0) {
        pmi_err("PMI_PORT='%s': cannot resolve '%s': %s", spec, host, gai_strerror(gai));
        return -1;
    }
    int fd = -1, err = 0;
    for (struct addrinfo *a = res; a; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) {
            err = errno;
            continue;
        }
        int rc;
        do
            rc = connect(fd, a->ai_addr, a->ai_addrlen);
        while (rc != 0 && errno == EINTR);
        if (rc == 0)
            break;
        err = errno;
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd < 0) {
        pmi_err("PMI_PORT='%s': cannot connect: %s", spec, strerror(err));
        return -1;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
bad:
    pmi_err("PMI_PORT='%s' is not of the form host:port", spec);
    return -1;
}

static int init_server(struct aptus_pmi_info *info, const char *fdstr, const char *portstr)
{
    struct builder b;
    int fd;
    if (fdstr) {
        if (parse_int(fdstr, &fd) != 0 || fd < 0) {
            pmi_err("PMI_FD='%s' is not a file descriptor", fdstr);
            return -1;
        }
    } else if ((fd = connect_port(portstr)) < 0) {
        return -1;
    }
    pmi.fd = fd;
    pmi.hydra = getenv("MPI_LOCALNRANKS") != NULL && getenv("PMI_JOBID") == NULL;
    if (handshake() != 0)
        return -1;

    b_start(&b, "fullinit");
    const char *env_rank = getenv("PMI_RANK");
    const char *env_id = getenv("PMI_ID");
    const char *env_job = getenv("PMI_JOBID");
    if (env_rank) {
        /* Slurm insists on both pmijobid and pmirank (and threaded). */
        b_pair(&b, "pmijobid", env_job && *env_job ? env_job : "0");
        b_pair(&b, "pmirank", env_rank);
    } else if (env_id) {
        b_pair(&b, "pmiid", env_id);
    }
    b_pair(&b, "threaded", "FALSE");
    if (b_send(&b) != 0 || recv_msg("fullinit-response") != 0)
        return -1;
    if (parse_int(msg_get(&pmi.msg, "rank"), &pmi.rank) != 0 || parse_int(msg_get(&pmi.msg, "size"), &pmi.size) != 0 ||
        pmi.size < 1 || pmi.rank < 0 || pmi.rank >= pmi.size) {
        pmi_err("PMI server gave no valid rank/size");
        return -1;
    }
    /* Slurm answers appnum=-1 (unknown): one application, so 0. */
    int appnum = 0;
    if (parse_int(msg_get(&pmi.msg, "appnum"), &appnum) != 0 || appnum < 0)
        appnum = 0;
    info->appnum = appnum;
    /* Started by a spawn command: Slurm says so in fullinit, Hydra in the environment. */
    const char *sp = getenv("PMI_SPAWNED");
    pmi.spawned = msg_get(&pmi.msg, "spawner-jobid") != NULL || (sp && strcmp(sp, "1") == 0);

    /* The job id: asked of the server; PMI_JOBID as a fallback. */
    pmi.jobid[0] = '\0';
    b_start(&b, "job-getid");
    if (b_send(&b) != 0)
        return -1;
    if (recv_msg("job-getid-response") == 0) {
        const char *j = msg_get(&pmi.msg, "jobid");
        if (j && *j)
            snprintf(pmi.jobid, sizeof pmi.jobid, "%s", j);
    }
    if (!pmi.jobid[0] && env_job && *env_job)
        snprintf(pmi.jobid, sizeof pmi.jobid, "%s", env_job);
    if (!pmi.jobid[0]) {
        pmi_err("PMI server gave no job id");
        return -1;
    }
    return 0;
}

int aptus_pmi_init(struct aptus_pmi_info *info)
{
    int rc = 0;
    pthread_mutex_lock(&pmi_lock);
    if (pmi.initialized) {
        pmi_err("aptus_pmi_init called twice");
        rc = -1;
        goto out;
    }
    memset(info, 0, sizeof *info);
    const char *fdstr = getenv("PMI_FD");
    const char *portstr = getenv("PMI_PORT");
    if (fdstr && !*fdstr)
        fdstr = NULL;
    if ((fdstr) || (portstr && *portstr)) {
        pmi.singleton = 0;
        if (init_server(info, fdstr, portstr) != 0) {
            if (pmi.fd >= 0)
                close(pmi.fd);
            pmi.fd = -1;
            rc = -1;
            goto out;
        }
    } else {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        pmi.singleton = 1;
        pmi.rank = 0;
        pmi.size = 1;
        pmi.fd = -1;
        snprintf(pmi.jobid, sizeof pmi.jobid, "s%ld-%lx%lx", (long)getpid(), (long)ts.tv_sec,
                 (long)(ts.tv_nsec & 0xfffff));
    }
    pmi.initialized = 1;
    info->rank = pmi.rank;
    info->size = pmi.size;
    info->singleton = pmi.singleton;
    snprintf(info->jobid, sizeof info->jobid, "%s", pmi.jobid);
out:
    pthread_mutex_unlock(&pmi_lock);
    return rc;
}

/* ---------- key-value space ---------- */

static int check_key(const char *key)
{
    size_t n = key ? strlen(key) : 0;
    if (n == 0 || n >= APTUS_PMI_MAX_KEY || strpbrk(key, "=; \n")) {
        pmi_err("invalid key '%s'", key ? key : "(null)");
        return -1;
    }
    return 0;
}

static int local_put(const char *key, const char *value)
{
    for (int i = 0; i < pmi.ntab; i++) {
        if (strcmp(pmi.tab[i].key, key) == 0) {
            char *v = strdup(value);
            if (!v)
                return -1;
            free(pmi.tab[i].val);
            pmi.tab[i].val = v;
            return 0;
        }
    }
    if (pmi.ntab == pmi.captab) {
        int nc = pmi.captab ? 2 * pmi.captab : 16;
        struct local_kv *t = realloc(pmi.tab, (size_t)nc * sizeof *t);
        if (!t)
            return -1;
        pmi.tab = t;
        pmi.captab = nc;
    }
    char *v = strdup(value);
    if (!v)
        return -1;
    snprintf(pmi.tab[pmi.ntab].key, sizeof pmi.tab[pmi.ntab].key, "%s", key);
    pmi.tab[pmi.ntab].val = v;
    pmi.ntab++;
    return 0;
}

int aptus_pmi_put(const char *key, const char *value)
{
    int rc = -1;
    struct builder b;
    if (check_key(key) != 0)
        return -1;
    if (!value || strlen(value) >= APTUS_PMI_MAX_VAL) {
        pmi_err("value for key '%s' missing or longer than %d bytes", key, APTUS_PMI_MAX_VAL - 1);
        return -1;
    }
    pthread_mutex_lock(&pmi_lock);
    if (!pmi.initialized) {
        pmi_err("put before init");
    } else if (pmi.singleton) {
        rc = local_put(key, value);
    } else {
        b_start(&b, "kvs-put");
        b_pair(&b, "key", key);
        b_pair(&b, "value", value);
        if (b_send(&b) == 0 && recv_msg("kvs-put-response") == 0)
            rc = 0;
    }
    pthread_mutex_unlock(&pmi_lock);
    return rc;
}

int aptus_pmi_fence(void)
{
    int rc = -1;
    struct builder b;
    pthread_mutex_lock(&pmi_lock);
    if (!pmi.initialized) {
        pmi_err("fence before init");
    } else if (pmi.singleton) {
        rc = 0;
    } else {
        b_start(&b, "kvs-fence");
        if (b_send(&b) == 0 && recv_msg("kvs-fence-response") == 0)
            rc = 0;
    }
    pthread_mutex_unlock(&pmi_lock);
    return rc;
}

static int copy_out(const char *key, const char *v, char *value, size_t maxlen)
{
    size_t n = strlen(v);
    if (n >= maxlen) {
        pmi_err("value of key '%s' (%zu bytes) does not fit the buffer (%zu)", key, n, maxlen);
        return -1;
    }
    memcpy(value, v, n + 1);
    return 0;
}

int aptus_pmi_get(int src_rank, const char *key, char *value, size_t maxlen)
{
    int rc = -1;
    struct builder b;
    if (check_key(key) != 0 || !value || maxlen == 0)
        return -1;
    pthread_mutex_lock(&pmi_lock);
    if (!pmi.initialized) {
        pmi_err("get before init");
    } else if (pmi.singleton) {
        if (src_rank <= 0) {
            for (int i = 0; i < pmi.ntab; i++)
                if (strcmp(pmi.tab[i].key, key) == 0) {
                    rc = copy_out(key, pmi.tab[i].val, value, maxlen);
                    break;
                }
        }
    } else {
        b_start(&b, "kvs-get");
        b_pair_int(&b, "srcid", src_rank < 0 ? -1 : src_rank);
        b_pair(&b, "key", key);
        if (b_send(&b) == 0 && recv_msg("kvs-get-response") == 0) {
            const char *found = msg_get(&pmi.msg, "found");
            const char *v = msg_get(&pmi.msg, "value");
            if (found && strcmp(found, "TRUE") == 0 && v)
                rc = copy_out(key, v, value, maxlen);
        }
    }
    pthread_mutex_unlock(&pmi_lock);
    return rc;
}

int aptus_pmi_spawned(void)
{
    return pmi.spawned;
}

/* Takes the PMI lock for a request to the launcher: 0, or -1 (no launcher; the reason in err). err
 * holds what a failure of the connection itself means, meanwhile. */
static int launcher_lock(char *err, size_t errlen)
{
    snprintf(err, errlen, "the launcher's PMI connection failed (see the message above)");
    pthread_mutex_lock(&pmi_lock);
    if (pmi.initialized && !pmi.singleton)
        return 0;
    snprintf(err, errlen, "no launcher to ask (the process was started without one)");
    return -1;
}

int aptus_pmi_spawn(int ncmds, const struct aptus_pmi_cmd *cmds, const char *ppkey, const char *ppval, int timeout_s,
                    char *jobid, size_t jlen, char *err, size_t errlen)
{
    struct builder b;
    int rc = -1;
    if (launcher_lock(err, errlen) != 0)
        goto out;
    b_start(&b, "spawn");
    b_pair_int(&b, "ncmds", ncmds);
    b_pair_int(&b, "preputcount", 1);
    b_pair(&b, "ppkey0", ppkey);
    b_pair(&b, "ppval0", ppval);
    for (int i = 0; i < ncmds; i++) {
        const struct aptus_pmi_cmd *c = &cmds[i];
        int argc = 0;
        while (c->argv && c->argv[argc])
            argc++;
        b_pair(&b, "subcmd", c->cmd);
        b_pair_int(&b, "maxprocs", c->n);
        b_pair_int(&b, "argc", argc);
        for (int k = 0; k < argc; k++) {
            char key[32];
            snprintf(key, sizeof key, "argv%d", k);
            b_pair(&b, key, c->argv[k]);
        }
        b_pair_int(&b, "infokeycount", c->ninfo);
        for (int k = 0; k < c->ninfo; k++) {
            char key[32];
            snprintf(key, sizeof key, "infokey%d", k);
            b_pair(&b, key, c->info_keys[k]);
            snprintf(key, sizeof key, "infoval%d", k);
            b_pair(&b, key, c->info_vals[k]);
        }
    }
    if (b.overflow) {
        snprintf(err, errlen, "the commands and arguments pass the PMI message limit (%d bytes)", PMI_MSG_MAX);
        goto out;
    }
    if (b_send(&b) != 0)
        goto out;
    /* Slurm's srun answers once the new job's tasks have started, and never when they end first;
     * our mpiexec once they have all started, or with why not (a spawn given up on is cancelled,
     * which settles its answer: aptus_pmi_spawn_cancel) */
    struct pollfd p = { pmi.fd, POLLIN, 0 };
    int r;
    while ((r = poll(&p, 1, timeout_s > INT_MAX / 1000 ? -1 : timeout_s * 1000)) < 0 && errno == EINTR)
        ;
    if (r == 0) {
        pmi.owed++;
        snprintf(err, errlen,
                 "it did not answer within APTUS_SPAWN_TIMEOUT=%d seconds (the new job may have ended "
                 "at once)",
                 timeout_s);
        goto out;
    }
    pmi.quiet = 1; /* (a refusal's reason goes to the caller) */
    int got = recv_msg("spawn-response");
    pmi.quiet = 0;
    if (got != 0) {
        const char *em = msg_get(&pmi.msg, "errmsg"), *cmd = msg_get(&pmi.msg, "cmd"), *r2 = msg_get(&pmi.msg, "rc");
        if (cmd && strcmp(cmd, "spawn-response") == 0)
            snprintf(err, errlen, "the launcher refused it (rc=%s%s%.200s)", r2 ? r2 : "?", em ? ": " : "",
                     em ? em : "");
        goto out;
    }
    const char *j = msg_get(&pmi.msg, "jobid");
    snprintf(jobid, jlen, "%s", j ? j : "");
    rc = 0;
out:
    pthread_mutex_unlock(&pmi_lock);
    return rc;
}

int aptus_pmi_name(const char *cmd, const char *service, const char *port, const char *dir, char *value, size_t vlen,
                   char *err, size_t errlen)
{
    struct builder b;
    char resp[64];
    int rc = -1;
    if (launcher_lock(err, errlen) != 0)
        goto out;
    b_start(&b, cmd);
    b_pair(&b, "name", service);
    if (port)
        b_pair(&b, "port", port);
    if (dir)
        b_pair(&b, "dir", dir);
    if (b.overflow) {
        snprintf(err, errlen, "the service name passes the PMI message limit");
        goto out;
    }
    snprintf(resp, sizeof resp, "%.40s-response", cmd);
    pmi.quiet = 1; /* (a refusal's reason goes to the caller) */
    int got = b_send(&b) == 0 ? recv_msg(resp) : -1;
    pmi.quiet = 0;
    const char *em = msg_get(&pmi.msg, "errmsg"), *v = msg_get(&pmi.msg, "value");
    if (got != 0) {
        if (em)
            snprintf(err, errlen, "%s", em);
        goto out;
    }
    if (value) {
        if (!v) {
            snprintf(err, errlen, "the launcher's answer has no value");
            goto out;
        }
        snprintf(value, vlen, "%s", v);
    }
    rc = 0;
out:
    pthread_mutex_unlock(&pmi_lock);
    return rc;
}

int aptus_pmi_spawn_cancel(const char *jobid)
{
    struct builder b;
    char err[200];
    int rc = -1;
    if (launcher_lock(err, sizeof err) != 0)
        goto out;
    b_start(&b, "aptus-spawn-cancel");
    if (jobid && *jobid)
        b_pair(&b, "jobid", jobid);
    if (b_send(&b) != 0)
        goto out;
    rc = recv_msg("aptus-spawn-cancel-response"); /* (an answer owed to the spawn comes first: dropped) */
    /* Late answers (dropped here, or by another thread's request meanwhile) that said their job
     * started: mpiexec answered them as the cancel went, and had no spawn left unanswered to
     * cancel. Those jobs are cancelled by name. */
    while (rc == 0 && !(jobid && *jobid) && pmi.nlate > 0) {
        char j[128];
        snprintf(j, sizeof j, "%s", pmi.late_job[--pmi.nlate]);
        b_start(&b, "aptus-spawn-cancel");
        b_pair(&b, "jobid", j);
        rc = b_send(&b) == 0 ? recv_msg("aptus-spawn-cancel-response") : -1;
    }
out:
    pthread_mutex_unlock(&pmi_lock);
    return rc;
}

int aptus_pmi_universe(long *free_procs, long *live_jobs, char *err, size_t errlen)
{
    struct builder b;
    int rc = -1;
    if (launcher_lock(err, errlen) != 0)
        goto out;
    b_start(&b, "aptus-universe");
    if (b_send(&b) != 0 || recv_msg("aptus-universe-response") != 0)
        goto out;
    const char *f = msg_get(&pmi.msg, "free"), *l = msg_get(&pmi.msg, "live");
    char *e1 = NULL, *e2 = NULL;
    *free_procs = f ? strtol(f, &e1, 10) : 0;
    *live_jobs = l ? strtol(l, &e2, 10) : 0;
    if (!f || !l || *e1 || *e2) {
        snprintf(err, errlen, "its answer has no free and live counts");
        goto out;
    }
    rc = 0;
out:
    pthread_mutex_unlock(&pmi_lock);
    return rc;
}

int aptus_pmi_barrier(const char *name, int ok, const int *peers, int npeers, int *failed_peer)
{
    char key[APTUS_PMI_MAX_KEY], val[16];
    if (!name || strlen(name) > 40 || npeers < 0 || (npeers > 0 && !peers)) {
        pmi_err("barrier: bad arguments");
        return -1;
    }
    /* Nobody reads the vote of a rank that reads none (votes are read by node-local peers). */
    if (npeers > 0) {
        snprintf(key, sizeof key, "%s-%d", name, pmi.rank);
        if (aptus_pmi_put(key, ok ? "ok" : "failed") != 0)
            return -1;
    }
    if (aptus_pmi_fence() != 0)
        return -1;
    for (int i = 0; i < npeers; i++) {
        /* With a lazy fence this get is what waits for the peer. */
        snprintf(key, sizeof key, "%s-%d", name, peers[i]);
        if (aptus_pmi_get(peers[i], key, val, sizeof val) != 0) {
            pmi_err("barrier %s: rank %d published no vote after the fence", name, peers[i]);
            return -1;
        }
        if (strcmp(val, "ok") != 0) {
            if (failed_peer)
                *failed_peer = peers[i];
            return 1;
        }
    }
    return 0;
}

/* ---------- process mapping ---------- */

static const char *skip_ws(const char *s)
{
    while (*s == ' ' || *s == '\t' || *s == '\n')
        s++;
    return s;
}

static const char *parse_long(const char *s, long *v)
{
    char *e;
    s = skip_ws(s);
    errno = 0;
    *v = strtol(s, &e, 10);
    if (e == s || errno)
        return NULL;
    return skip_ws(e);
}

/* "(vector,(start_node,node_count,ranks_per_node),...)": each triple assigns
 * ranks_per_node consecutive ranks to each of node_count nodes from start_node on; the
 * list repeats until every rank has a node. */
static int parse_mapping(const char *s, int *node_of, int size)
{
    struct {
        long start, count, ppn;
    } blk[256];
    int nblk = 0;
    s = skip_ws(s);
    if (*s++ != '(')
        return -1;
    s = skip_ws(s);
    if (strncmp(s, "vector", 6) != 0)
        return -1;
    s = skip_ws(s + 6);
    while (*s == ',') {
        s = skip_ws(s + 1);
        if (*s++ != '(')
            return -1;
        long a, c, p;
        if (!(s = parse_long(s, &a)) || *s++ != ',')
            return -1;
        if (!(s = parse_long(s, &c)) || *s++ != ',')
            return -1;
        if (!(s = parse_long(s, &p)) || *s++ != ')')
            return -1;
        if (a < 0 || c < 0 || p < 0 || a > INT_MAX || c > INT_MAX || p > INT_MAX)
            return -1;
        if (nblk == (int)(sizeof blk / sizeof blk[0]))
            return -1;
        blk[nblk].start = a;
        blk[nblk].count = c;
        blk[nblk].ppn = p;
        nblk++;
        s = skip_ws(s);
    }
    if (*s != ')' || nblk == 0)
        return -1;
    int r = 0;
    while (r < size) {
        int before = r;
        for (int i = 0; i < nblk && r < size; i++)
            for (long n = 0; n < blk[i].count && r < size; n++)
                for (long k = 0; k < blk[i].ppn && r < size; k++)
                    node_of[r++] = (int)(blk[i].start + n);
        if (r == before)
            return -1;
    }
    return 0;
}

int aptus_pmi_get_node_map(int *node_of, int size)
{
    int rc = -1;
    struct builder b;
    if (!node_of || size < 1)
        return -1;
    pthread_mutex_lock(&pmi_lock);
    if (!pmi.initialized) {
        pmi_err("get_node_map before init");
    } else if (size != pmi.size) {
        pmi_err("get_node_map: size %d differs from the job size %d", size, pmi.size);
    } else if (pmi.singleton) {
        node_of[0] = 0;
        rc = 0;
    } else {
        b_start(&b, "info-getjobattr");
        b_pair(&b, "key", "PMI_process_mapping");
        if (b_send(&b) == 0 && recv_msg("info-getjobattr-response") == 0) {
            const char *found = msg_get(&pmi.msg, "found");
            const char *v = msg_get(&pmi.msg, "value");
            if (found && strcmp(found, "TRUE") == 0 && v) {
                if (parse_mapping(v, node_of, size) == 0)
                    rc = 0;
                else
                    pmi_err("cannot parse PMI_process_mapping '%s'", v);
            }
        }
    }
    pthread_mutex_unlock(&pmi_lock);
    return rc;
}

/* ---------- abort / finalize ---------- */

/* Waits (2 s at most) until the launcher has read what this rank wrote to stdout and stderr,
 * when they are pipes. Hydra's proxy forwards output and PMI commands over one connection in
 * the order it reads them, and mpiexec exits as soon as it handles an abort: an abort read in
 * the same round as the last output overtakes it, and the output (typically the message
 * saying why the job aborts) is lost. A pipe with nothing left in it has been forwarded. */
static void wait_output_taken(void)
{
    for (int fd = 1; fd <= 2; fd++) {
        struct stat st;
        if (fstat(fd, &st) != 0 || !S_ISFIFO(st.st_mode))
            continue;
        for (int ms = 0; ms < 2000; ms++) {
            int unread = 0;
            if (ioctl(fd, FIONREAD, &unread) != 0 || unread <= 0)
                break;
            struct timespec ts = { 0, 1000000L };
            nanosleep(&ts, NULL);
        }
    }
}

void aptus_pmi_abort(int code, const char *msg, int lost_peer)
{
    struct builder b;
    /* No lock wait: abort may come from a thread while another holds the lock (e.g. blocked
     * in a fence). A trylock keeps the message well-formed when possible. */
    int locked = pthread_mutex_trylock(&pmi_lock) == 0;
    if (pmi.initialized && !pmi.singleton && pmi.fd >= 0 && pmi.hydra) {
        /* Hydra: the PMI-1 abort line (see the top of this file). The message was printed by
         * the caller; Hydra's abort carries none. Written whole, from its own buffer, so it
         * is well-formed even when another thread holds the lock. */
        char line[64];
        int n = snprintf(line, sizeof line, "cmd=abort exitcode=%d\n", code);
        fflush(stdout);
        fflush(stderr);
        wait_output_taken();
        if (n > 0 && n < (int)sizeof line && write_all(pmi.fd, line, (size_t)n) == 0) {
            /* Hydra answers by killing the job: wait for it (as MPICH's own client does, for
             * an answer that never comes), a bounded time, then exit anyway. */
            struct pollfd pfd = { .fd = pmi.fd, .events = POLLIN };
            (void)poll(&pfd, 1, 10000);
        }
    } else if (pmi.initialized && !pmi.singleton && pmi.fd >= 0) {
        if (!locked) {
            /* Another thread owns the scratch buffers (it may be blocked in a fence): send a
             * minimal message from a separate buffer. */
            static char emergency[2048];
            int n = lost_peer >= 0
                        ? snprintf(emergency + 6, sizeof emergency - 6,
                                   "cmd=abort;isworld=TRUE;exitcode=%d;peerlost=%d;", code, lost_peer)
                        : snprintf(emergency + 6, sizeof emergency - 6, "cmd=abort;isworld=TRUE;exitcode=%d;", code);
            if (n > 0 && n < (int)sizeof emergency - 6) {
                char hdr[8];
                snprintf(hdr, sizeof hdr, "%-6d", n);
                memcpy(emergency, hdr, 6);
                (void)write_all(pmi.fd, emergency, (size_t)n + 6);
            }
        } else {
            char clipped[APTUS_PMI_MAX_VAL];
            snprintf(clipped, sizeof clipped, "%s", msg ? msg : "");
            b_start(&b, "abort");
            b_pair(&b, "isworld", "TRUE");
            b_pair(&b, "msg", clipped);
            b_pair_int(&b, "exitcode", code);
            if (lost_peer >= 0)
                b_pair_int(&b, "peerlost", lost_peer);
            (void)b_send(&b);
        }
    } else if (msg && *msg) {
        fprintf(stderr, "Aptus: abort (exit code %d): %s\n", code, msg);
    }
    fflush(stdout);
    fflush(stderr);
    _exit(code);
}

int aptus_pmi_finalize(void)
{
    int rc = 0;
    struct builder b;
    pthread_mutex_lock(&pmi_lock);
    if (!pmi.initialized) {
        pthread_mutex_unlock(&pmi_lock);
        return 0;
    }
    if (!pmi.singleton) {
        b_start(&b, "finalize");
        if (b_send(&b) != 0 || recv_msg("finalize-response") != 0)
            rc = -1;
        close(pmi.fd);
        pmi.fd = -1;
    }
    for (int i = 0; i < pmi.ntab; i++)
        free(pmi.tab[i].val);
    free(pmi.tab);
    pmi.tab = NULL;
    pmi.ntab = pmi.captab = 0;
    pmi.initialized = 0;
    pthread_mutex_unlock(&pmi_lock);
    return rc;
}
