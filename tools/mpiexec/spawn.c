/* MPI_Comm_spawn through the launcher: mpiexec serves the PMI-2 spawn command.
 *
 * The first mpiexec (the one the user started) starts every job a spawn asks for, whichever
 * job's rank asked: each new job is run by a copy of mpiexec, its child --
 *   mpiexec -n TOTAL [--bind-to none] [--hosts H | -f F] -- mpiexec --app-exec
 * (tools/mpiexec/app_exec.c picks each rank's command) --, which is the new job's launcher and
 * PMI server and talks to the first mpiexec over a socket pair, its *uplink* (records of ctl.h):
 *   'Q' "RANK\nBODY"  a request of its rank RANK that only the first mpiexec can answer (spawn,
 *                     aptus-universe): BODY is the PMI-2 message as the rank sent it
 *   'A' "RANK\nBODY"  the answer, sent on to the rank as it is
 *   'R'               every rank of the new job has made fullinit: the spawn is answered
 * (The name service's requests, name-publish, name-lookup, name-unpublish, go the same way:
 * the first mpiexec holds the run's names, names.c.)
 * So the universe is counted in one place (every job's processes, while the job runs), every job
 * has its id from the first one's (ID.K for the K-th spawn), and every job is a child of the
 * first mpiexec: its output goes where the first job's goes, the signals mpiexec forwards reach
 * it (its mpiexec forwards them to its ranks), it is killed with the job (and by the watchdog
 * should the first mpiexec be killed), and mpiexec ends once every job has ended.
 *
 * The spawn's answer waits until the new job's processes have all started (made fullinit) or its
 * mpiexec has ended: in the second case the spawn fails (MPI_ERR_SPAWN, the parents go on) with
 * the reason. A job that ends badly after it started takes every job down with it. */
#include "mpiexec.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define REC_SEP   "\x1e"
#define FIELD_SEP "\x1f"

struct subjob {
    pid_t pid; /* its mpiexec; 0 once reaped */
    int fd;    /* uplink, -1 once closed */
    struct ctlbuf in;
    int n;     /* its processes: universe room taken while it runs */
    int ready; /* its processes all started; the spawn was answered */
    char jobid[48];
    int req_sub, req_rank; /* who asked: a rank of job req_sub's (-1: of this mpiexec's own job) */
    int bound;             /* it was given cores of its own (cpus) */
    int cancelled;         /* its spawn was given up (aptus-spawn-cancel): its end is no failure */
    cpu_set_t cpus;
};

static struct subjob *subs;
static int nsubs, capsubs, nlive;

/* ---------- answers ---------- */

/* Sends an answer to the rank that asked (one of this job's, or of a job started here). */
static void answer(int req_sub, int rank, const char *body, size_t len)
{
    if (req_sub < 0) {
        pmisrv_reply(&J.srv, rank, body, len);
        return;
    }
    struct subjob *s = &subs[req_sub];
    if (s->fd < 0)
        return;
    size_t n = (size_t)snprintf(NULL, 0, "%d\n", rank);
    char *rec = malloc(n + len + 1);
    if (!rec)
        return;
    snprintf(rec, n + 1, "%d\n", rank);
    memcpy(rec + n, body, len);
    (void)ctl_send(s->fd, 'A', rec, n + len, 10000); /* (gone: its end is seen where it is read) */
    free(rec);
}

/* Appends a pair to a message body, its value escaped. */
static void body_pair(char *b, size_t cap, const char *key, const char *val)
{
    size_t len = strlen(b);
    int k = snprintf(b + len, cap > len ? cap - len : 0, "%s=", key);
    if (k < 0 || (len += (size_t)k) >= cap)
        return;
    for (const char *v = val; *v && len + 3 < cap; v++) {
        b[len++] = *v;
        if (*v == ';')
            b[len++] = ';';
    }
    if (len + 2 < cap) {
        b[len++] = ';';
        b[len] = '\0';
    }
}

void first_answer(int req_sub, int rank, const char *cmd, int rc, const char *errmsg, const char *key, const char *val)
{
    char b[2400] = "";
    char num[16];
    body_pair(b, sizeof b, "cmd", cmd);
    snprintf(num, sizeof num, "%d", rc);
    body_pair(b, sizeof b, "rc", num);
    if (errmsg)
        body_pair(b, sizeof b, "errmsg", errmsg);
    if (key && val)
        body_pair(b, sizeof b, key, val);
    answer(req_sub, rank, b, strlen(b));
}

static void answer_rc(int req_sub, int rank, const char *cmd, int rc, const char *errmsg, const char *jobid)
{
    first_answer(req_sub, rank, cmd, rc, errmsg, "jobid", jobid);
}

/* ---------- the universe ---------- */

static long universe_size(void)
{
    const char *env = getenv("MPI_UNIVERSE_SIZE"); /* (universe_export set it) */
    long u = J.universe ? J.universe : env ? strtol(env, NULL, 10) : 0;
    return u > 0 ? u : J.n;
}

static long universe_free(void)
{
    long used = J.nrunning; /* (the first job's ranks that have ended leave their room) */
    for (int k = 0; k < nsubs; k++)
        if (subs[k].pid > 0)
            used += subs[k].n;
    return universe_size() - used;
}

/* Whether job k is the asking job (req_sub: -1 for the first job) or one it descends from: their
 * ends cannot come while the asker waits. */
static int in_chain(int k, int req_sub)
{
    for (int j = req_sub; j >= 0; j = subs[j].req_sub)
        if (j == k)
            return 1;
    return 0;
}

/* Room the running spawned jobs hold that may come free for a spawn of req_sub's (*njobs: how many
 * such jobs). */
static long freeable(int req_sub, int *njobs)
{
    long n = 0;
    *njobs = 0;
    for (int k = 0; k < nsubs; k++)
        if (subs[k].pid > 0 && !in_chain(k, req_sub)) {
            n += subs[k].n;
            ++*njobs;
        }
    return n;
}

/* ---------- starting a job ---------- */

struct buf {
    char *p;
    size_t len, cap;
    int bad;
};

static void buf_add(struct buf *b, const char *s)
{
    size_t n = strlen(s);
    if (b->bad)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t c = b->cap ? b->cap * 2 : 1024;
        while (c < b->len + n + 1)
            c *= 2;
        char *np = realloc(b->p, c);
        if (!np) {
            b->bad = 1;
            return;
        }
        b->p = np;
        b->cap = c;
    }
    memcpy(b->p + b->len, s, n + 1);
    b->len += n;
}

/* The spawn request: its commands (APTUS_SPAWN_APPS), pre-put keys, hosts. 0, or -1 with the
 * reason in err. */
static int spawn_parse(struct pmisrv_pair *p, int np, struct buf *apps, struct buf *pre, long *total, char *hosts,
                       size_t hlen, char *hostfile, size_t flen, char *err, size_t elen)
{
    const char *wdir = "", *path = "", *sub = NULL, *n = NULL;
    int argc = 0;
    *total = 0;
    /* the pairs in order: a command starts at subcmd; its maxprocs, argc, argvK, info keys
     * follow; its record is written when the next one starts (or at the end) */
    for (int i = 0; i <= np; i++) {
        const char *k = i < np ? p[i].key : "subcmd", *v = i < np ? p[i].val : NULL;
        if (!strcmp(k, "subcmd")) {
            if (sub) {
                long cnt = n ? strtol(n, NULL, 10) : -1;
                if (cnt < 0 || cnt > (1 << 20)) {
                    snprintf(err, elen, "command '%.100s': maxprocs is missing or not a count", sub);
                    return -1;
                }
                char num[24];
                snprintf(num, sizeof num, "%ld", cnt);
                if (apps->len)
                    buf_add(apps, REC_SEP);
                buf_add(apps, num);
                buf_add(apps, FIELD_SEP);
                buf_add(apps, wdir);
                buf_add(apps, FIELD_SEP);
                buf_add(apps, path);
                buf_add(apps, FIELD_SEP);
                buf_add(apps, sub);
                for (int a = 0; a < argc; a++) {
                    char key[32];
                    snprintf(key, sizeof key, "argv%d", a);
                    const char *arg = NULL;
                    for (int j = i - 1; j >= 0 && !arg && strcmp(p[j].key, "subcmd"); j--)
                        if (!strcmp(p[j].key, key))
                            arg = p[j].val;
                    buf_add(apps, FIELD_SEP);
                    buf_add(apps, arg ? arg : "");
                }
                *total += cnt;
            }
            sub = v;
            n = NULL;
            argc = 0;
            wdir = path = "";
        } else if (!strcmp(k, "maxprocs")) {
            n = v;
        } else if (!strcmp(k, "argc")) {
            argc = atoi(v);
        } else if (!strncmp(k, "infokey", 7) && strcmp(k, "infokeycount")) {
            const char *val = i + 1 < np && !strncmp(p[i + 1].key, "infoval", 7) ? p[i + 1].val : "";
            if (!strcmp(v, "wdir"))
                wdir = val;
            else if (!strcmp(v, "path"))
                path = val;
            else if (!strcmp(v, "host") || !strcmp(v, "hosts"))
                snprintf(hosts, hlen, "%s", val);
            else if (!strcmp(v, "hostfile"))
                snprintf(hostfile, flen, "%s", val);
        } else if (!strncmp(k, "ppkey", 5)) {
            const char *val = i + 1 < np && !strncmp(p[i + 1].key, "ppval", 5) ? p[i + 1].val : "";
            if (pre->len)
                buf_add(pre, REC_SEP);
            buf_add(pre, v);
            buf_add(pre, FIELD_SEP);
            buf_add(pre, val);
        }
    }
    if (apps->bad || pre->bad) {
        snprintf(err, elen, "out of memory");
        return -1;
    }
    if (*total < 1) {
        snprintf(err, elen, "no process to start");
        return -1;
    }
    return 0;
}

/* In the child: the new job's mpiexec. Never returns. */
static _Noreturn void exec_sub(int up, const char *self, const char *apps, const char *pre, const char *jobid,
                               const char *spawner, long total, const char *hosts, const char *hostfile,
                               const cpu_set_t *cores)
{
    setpgid(0, 0); /* (signals reach it from mpiexec, once: not also from the terminal) */
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    reset_child_signals();
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0 && devnull != 0) {
        dup2(devnull, 0);
        close(devnull);
    }
    int moved = fcntl(up, F_DUPFD_CLOEXEC, 10); /* (up may be 3 itself, or below) */
    if (moved < 0 || dup2(moved, 3) < 0)
        child_fail("dup2(uplink)");
    syscall(SYS_close_range, 4u, ~0u, 0u);
    setenv("APTUS_SPAWN_APPS", apps, 1);
    setenv("APTUS_MPIEXEC_PREPUT", pre, 1);
    setenv("APTUS_MPIEXEC_JOBID", jobid, 1);
    setenv("APTUS_MPIEXEC_SPAWNER", spawner, 1);
    setenv("APTUS_MPIEXEC_UPLINK", "3", 1);
    char num[24];
    snprintf(num, sizeof num, "%ld", total);
    const char *argv[20];
    int na = 0;
    argv[na++] = self;
    argv[na++] = "-n";
    argv[na++] = num;
    if (J.verbose)
        argv[na++] = "-v";
    if (J.prefix)
        argv[na++] = "-l";
    /* cores of its own: it binds its ranks there as any mpiexec binds (its CPUs are those);
     * else bound from the first core on, its ranks would sit on the parents' cores while others
     * idle: unbound, the kernel spreads them (a binding the user asked for, MPIEXEC_BIND_TO, wins) */
    const char *bind = getenv("MPIEXEC_BIND_TO");
    if (cores && sched_setaffinity(0, sizeof *cores, cores) != 0)
        cores = NULL;
    if (!cores && (!bind || !*bind)) {
        argv[na++] = "--bind-to";
        argv[na++] = "none";
    }
    if (hosts[0]) {
        argv[na++] = "--hosts";
        argv[na++] = hosts;
    } else if (hostfile[0]) {
        argv[na++] = "-f";
        argv[na++] = hostfile;
    }
    argv[na++] = "--";
    argv[na++] = self;
    argv[na++] = "--app-exec";
    argv[na] = NULL;
    execv(self, (char *const *)argv);
    child_fail("cannot execute mpiexec for the new job");
}

/* Cores for a new job of n processes on this host, none of them used by a bound rank of this job
 * or given to another job: 1 (in out), or 0 when the new job is not to be bound -- this job's
 * ranks are not bound (--bind-to none, an oversubscribed host, no hwloc), the user named a binding
 * (MPIEXEC_BIND_TO, which the new job's mpiexec reads), or too few cores are free. */
static int free_cores(long n, cpu_set_t *out)
{
    const char *ub = getenv("MPIEXEC_BIND_TO");
    int bound = 0;
    cpu_set_t busy;
    CPU_ZERO(&busy);
    for (int r = 0; J.bound && r < J.n; r++)
        if (J.bound[r] && J.r[r].running) {
            CPU_OR(&busy, &busy, &J.cpus[r]);
            bound = 1;
        }
    if (!bound || (ub && *ub) || J.launcher != LAUNCH_FORK || n > CPU_SETSIZE)
        return 0;
    for (int k = 0; k < nsubs; k++)
        if (subs[k].pid > 0 && subs[k].bound)
            CPU_OR(&busy, &busy, &subs[k].cpus);
    return bind_free_cores(&busy, (int)n, out) == 0;
}

/* A spawn request (this mpiexec is the first one). 1 when it must wait for room (may_wait, and
 * spawned jobs run that may end and leave it), else 0 (answered, or to be answered when the new
 * job has started). */
static int spawn_request(int req_sub, int rank, struct pmisrv_pair *p, int np, int may_wait)
{
    char err[600], hosts[PATH_MAX] = "", hostfile[PATH_MAX] = "", self[PATH_MAX];
    struct buf apps = { 0 }, pre = { 0 };
    long total = 0;
    int sv[2] = { -1, -1 };
    if (spawn_parse(p, np, &apps, &pre, &total, hosts, sizeof hosts, hostfile, sizeof hostfile, err, sizeof err))
        goto fail;
    if (J.terminating) {
        snprintf(err, sizeof err, "the job is ending");
        goto fail;
    }
    long room = universe_free();
    int others;
    if (total > room && may_wait && total <= room + freeable(req_sub, &others)) {
        free(apps.p);
        free(pre.p);
        return 1;
    }
    if (total > room) {
        snprintf(err, sizeof err,
                 "%ld processes asked for, the universe has room for %ld more (MPI_UNIVERSE_SIZE %ld: mpiexec "
                 "--universe-size sets it)",
                 total, room < 0 ? 0 : room, universe_size());
        goto fail;
    }
    /* (no host named: the asking rank's host, when that is another one) */
    const char *roothost = pmisrv_get(p, np, "aptus-roothost");
    if (!hosts[0] && !hostfile[0] && roothost && *roothost)
        snprintf(hosts, sizeof hosts, "%s", roothost);
    ssize_t k = readlink("/proc/self/exe", self, sizeof self - 1);
    if (k <= 0) {
        snprintf(err, sizeof err, "mpiexec cannot find its own program: %s", strerror(errno));
        goto fail;
    }
    self[k] = '\0';
    if (nsubs == capsubs) {
        int nc = capsubs ? capsubs * 2 : 8;
        struct subjob *ns = realloc(subs, (size_t)nc * sizeof *ns);
        if (!ns) {
            snprintf(err, sizeof err, "out of memory");
            goto fail;
        }
        subs = ns;
        capsubs = nc;
    }
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
        snprintf(err, sizeof err, "socketpair: %s", strerror(errno));
        goto fail;
    }
    struct subjob *s = &subs[nsubs];
    memset(s, 0, sizeof *s);
    snprintf(s->jobid, sizeof s->jobid, "%.30s.%d", J.jobid, nsubs + 1);
    const char *spawner = req_sub < 0 ? J.jobid : subs[req_sub].jobid;
    s->bound = !hosts[0] && !hostfile[0] && free_cores(total, &s->cpus);
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0)
        exec_sub(sv[1], self, apps.p, pre.p ? pre.p : "", s->jobid, spawner, total, hosts, hostfile,
                 s->bound ? &s->cpus : NULL);
    close(sv[1]);
    if (pid < 0) {
        snprintf(err, sizeof err, "fork: %s", strerror(errno));
        close(sv[0]);
        goto fail;
    }
    setpgid(pid, pid);
    watchdog_add(pid);
    set_nonblock(sv[0]);
    s->pid = pid;
    s->fd = sv[0];
    s->n = (int)total;
    s->req_sub = req_sub;
    s->req_rank = rank;
    nsubs++;
    nlive++;
    if (J.verbose)
        msg("mpiexec: job %s (%ld processes, pid %ld) started for rank %d of job %s", s->jobid, total, (long)pid, rank,
            spawner);
    free(apps.p);
    free(pre.p);
    return 0;
fail:
    free(apps.p);
    free(pre.p);
    answer_rc(req_sub, rank, "spawn-response", -1, err, NULL);
    return 0;
}

/* Spawns waiting for room: in the order they came, each until ROOM_WAIT_MS after it came (then it
 * is refused, naming the room). Two roots that each saw room for their spawn may together need
 * more; a job that was disconnected is still ending. */
#define ROOM_WAIT_MS 5000

struct waiting {
    struct waiting *next;
    int req_sub, rank;
    struct timespec until;
    size_t len;
    char body[];
};
static struct waiting *waits;

static int request(int req_sub, int rank, const char *body, size_t len, int may_wait);

static void wait_add(int req_sub, int rank, const char *body, size_t len)
{
    struct waiting *w = malloc(sizeof *w + len + 1), **pp = &waits;
    if (!w) {
        answer_rc(req_sub, rank, "spawn-response", -1, "out of memory", NULL);
        return;
    }
    w->next = NULL;
    w->req_sub = req_sub;
    w->rank = rank;
    w->len = len;
    memcpy(w->body, body, len);
    w->body[len] = '\0';
    now(&w->until);
    add_ms(&w->until, ROOM_WAIT_MS);
    while (*pp)
        pp = &(*pp)->next;
    *pp = w;
}

/* Tries the waiting spawns again, in order: the first that still waits holds those behind it
 * (unless their own wait is over: then they start if they fit, or are refused). One whose asker is
 * gone is dropped. */
static void wait_retry(void)
{
    int blocked = 0;
    for (struct waiting **pp = &waits; *pp;) {
        struct waiting *w = *pp;
        int gone = w->req_sub >= 0 ? subs[w->req_sub].fd < 0 : !J.srv.conn || J.srv.conn[w->rank].fd < 0;
        int expired = ms_until(&w->until) == 0;
        if (!gone && blocked && !expired) {
            pp = &w->next;
            continue;
        }
        if (!gone && request(w->req_sub, w->rank, w->body, w->len, !expired)) {
            blocked = 1;
            pp = &w->next;
            continue;
        }
        *pp = w->next;
        free(w);
    }
}

/* aptus-spawn-cancel: the root gave up on a spawn -- the job named (jobid=), whose processes did
 * not meet their parents, or without a name the jobs it asked for that have not been answered
 * (its wait ran out). They are ended, and their end is no failure; an unanswered spawn is
 * answered first (the asking process drops that answer). */
static void spawn_cancel(int req_sub, int rank, const char *jobid)
{
    for (struct waiting **pp = &waits; *pp && !jobid;) {
        struct waiting *w = *pp;
        if (w->req_sub != req_sub || w->rank != rank) {
            pp = &w->next;
            continue;
        }
        *pp = w->next;
        free(w);
        answer_rc(req_sub, rank, "spawn-response", -1, "given up by the asking process", NULL);
    }
    for (int k = 0; k < nsubs; k++) {
        struct subjob *s = &subs[k];
        if (s->pid <= 0 || s->req_sub != req_sub || s->req_rank != rank || (jobid ? strcmp(s->jobid, jobid) : s->ready))
            continue;
        if (!s->ready) {
            s->ready = 1;
            answer_rc(req_sub, rank, "spawn-response", -1, "given up by the asking process", NULL);
        }
        s->cancelled = 1;
        kill(-s->pid, SIGTERM);
        if (J.verbose)
            msg("mpiexec: job %s: its spawn was given up; ending it", s->jobid);
    }
    answer_rc(req_sub, rank, "aptus-spawn-cancel-response", 0, NULL, NULL);
}

/* A request only the first mpiexec answers, from rank of this job (req_sub -1) or of a job
 * started here. body[0..len) is copied (the parser writes into it, a terminator included). 1 when
 * it is a spawn that must wait for room (may_wait), else 0. */
static int request(int req_sub, int rank, const char *body, size_t len, int may_wait)
{
    static struct pmisrv_pair p[4096];
    int np = 0, wait = 0;
    char *b = malloc(len + 1);
    if (b) {
        memcpy(b, body, len);
        b[len] = '\0';
    }
    if (!b || pmisrv_parse(b, len, p, 4096, &np) != 0) {
        char resp[96] = "spawn-response";
        if (len > 4 && !memcmp(body, "cmd=", 4)) /* (its first pair names it) */
            snprintf(resp, sizeof resp, "%.*s-response", (int)strcspn(body + 4, ";"), body + 4);
        answer_rc(req_sub, rank, resp, -1, b ? "malformed request" : "out of memory", NULL);
        free(b);
        return 0;
    }
    const char *cmd = pmisrv_get(p, np, "cmd");
    if (cmd && !strcmp(cmd, "spawn")) {
        wait = spawn_request(req_sub, rank, p, np, may_wait);
    } else if (cmd && !strcmp(cmd, "aptus-universe")) {
        char r[200] = "", num[24];
        body_pair(r, sizeof r, "cmd", "aptus-universe-response");
        body_pair(r, sizeof r, "rc", "0");
        snprintf(num, sizeof num, "%ld", universe_free());
        body_pair(r, sizeof r, "free", num);
        int others;
        (void)freeable(req_sub, &others);
        snprintf(num, sizeof num, "%d", others); /* (the jobs whose end may leave room for this asker) */
        body_pair(r, sizeof r, "live", num);
        answer(req_sub, rank, r, strlen(r));
    } else if (cmd && !strcmp(cmd, "aptus-spawn-cancel")) {
        spawn_cancel(req_sub, rank, pmisrv_get(p, np, "jobid"));
    } else if (cmd && !strncmp(cmd, "name-", 5)) {
        names_request(req_sub, rank, cmd, pmisrv_get(p, np, "name"), pmisrv_get(p, np, "port"),
                      pmisrv_get(p, np, "dir"));
    } else {
        char resp[96];
        snprintf(resp, sizeof resp, "%.80s-response", cmd ? cmd : "unknown");
        answer_rc(req_sub, rank, resp, -1, "unknown request", NULL);
    }
    free(b);
    return wait;
}

/* A request of a rank (of this job, or of a job started here): answered, or put to wait. */
static void request_new(int req_sub, int rank, const char *body, size_t len)
{
    if (waits && len > 10 && !memcmp(body, "cmd=spawn;", 10)) { /* (behind the spawns that wait) */
        wait_add(req_sub, rank, body, len);
        wait_retry();
    } else if (request(req_sub, rank, body, len, 1)) {
        wait_add(req_sub, rank, body, len);
    }
}

/* The PMI server's hook (pmisrv.extra). */
static int extra(struct pmisrv *s, int rank, const char *cmd, const char *body, size_t len)
{
    (void)s;
    /* the rank's host, when it is not this one: a new job without hosts goes there */
    char host[300] = "";
    if (J.remote && J.hosts.n > 0 && !host_is_local(J.hosts.h[J.host_of[rank]].name))
        snprintf(host, sizeof host, "%saptus-roothost=%s;", len && body[len - 1] != ';' ? ";" : "",
                 J.hosts.h[J.host_of[rank]].name);
    size_t hl = strlen(host);
    char *b = malloc(24 + len + hl + 1), resp[96];
    if (!b)
        return -1;
    snprintf(resp, sizeof resp, "%.80s-response", cmd);
    int n = J.uplink >= 0 ? snprintf(b, 24, "%d\n", rank) : 0;
    memcpy(b + n, body, len);
    memcpy(b + n + len, host, hl + 1);
    if (J.uplink >= 0) { /* a job started by a spawn: the first mpiexec answers */
        if (ctl_send(J.uplink, 'Q', b, (size_t)n + len + hl, 10000) != 0)
            answer_rc(-1, rank, resp, -1, "the first mpiexec of this run is gone", NULL);
    } else {
        request_new(-1, rank, b, len + hl);
    }
    free(b);
    return 0;
}

/* ---------- mpiexec's side ---------- */

static char *preput; /* a spawned job's pre-put keys (APTUS_MPIEXEC_PREPUT) */

/* Early in main: the uplink, job id, spawner and pre-put keys of a job a spawn started, taken out
 * of the environment before the ranks start. */
void spawn_identity(void)
{
    J.uplink = -1;
    const char *up = getenv("APTUS_MPIEXEC_UPLINK"), *id = getenv("APTUS_MPIEXEC_JOBID");
    const char *pre = getenv("APTUS_MPIEXEC_PREPUT"), *spawner = getenv("APTUS_MPIEXEC_SPAWNER");
    if (up && id) {
        J.uplink = atoi(up);
        fcntl(J.uplink, F_SETFD, FD_CLOEXEC);
        set_nonblock(J.uplink);
        snprintf(J.jobid, sizeof J.jobid, "%s", id);
        snprintf(J.spawner, sizeof J.spawner, "%s", spawner ? spawner : "");
        preput = strdup(pre ? pre : "");
    }
    unsetenv("APTUS_MPIEXEC_UPLINK");
    unsetenv("APTUS_MPIEXEC_JOBID");
    unsetenv("APTUS_MPIEXEC_PREPUT");
    unsetenv("APTUS_MPIEXEC_SPAWNER");
}

void spawn_init(void)
{
    J.srv.extra = extra;
    if (J.uplink < 0)
        return;
    J.srv.spawner = J.spawner;
    for (char *save = NULL, *r = preput ? strtok_r(preput, REC_SEP, &save) : NULL; r;
         r = strtok_r(NULL, REC_SEP, &save)) {
        char *sep = strchr(r, FIELD_SEP[0]);
        if (sep)
            *sep++ = '\0';
        if (pmisrv_preput(&J.srv, r, sep ? sep : "") != 0)
            job_fail(1, "out of memory");
    }
    free(preput);
    preput = NULL;
}

int spawn_live(void)
{
    return nlive;
}

void spawn_signal(int sig)
{
    for (int k = 0; k < nsubs; k++)
        if (subs[k].pid > 0)
            kill(-subs[k].pid, sig);
}

int spawn_poll_count(void)
{
    return nsubs + 1;
}

void spawn_poll_add(void (*add)(int fd, int who))
{
    if (J.uplink >= 0)
        add(J.uplink, -1);
    for (int k = 0; k < nsubs; k++)
        if (subs[k].fd >= 0)
            add(subs[k].fd, k);
}

/* The uplink (who -1) or a started job's uplink has something to read. */
void spawn_service(int who)
{
    /* (a request may start a job, which moves subs: its entries are looked up afresh) */
#define IN (who < 0 ? &J.up_in : &subs[who].in)
    int fd = who < 0 ? J.uplink : subs[who].fd;
    if (fd < 0)
        return;
    int open = ctl_fill(fd, IN);
    char type, *pl;
    size_t n;
    int r;
    while ((r = ctl_next(IN, &type, &pl, &n)) == 1) {
        char *nl = memchr(pl, '\n', n);
        int rank = nl ? atoi(pl) : -1;
        if (who < 0 && type == 'A' && nl && rank >= 0 && rank < J.n) {
            pmisrv_reply(&J.srv, rank, nl + 1, n - (size_t)(nl + 1 - pl));
        } else if (who >= 0 && type == 'Q' && nl && rank >= 0) {
            request_new(who, rank, nl + 1, n - (size_t)(nl + 1 - pl));
        } else if (who >= 0 && type == 'R' && !subs[who].ready) {
            subs[who].ready = 1;
            answer_rc(subs[who].req_sub, subs[who].req_rank, "spawn-response", 0, NULL, subs[who].jobid);
        }
    }
    if (open && r == 0)
        return;
    close(fd);
    ctl_free(IN);
#undef IN
    if (who >= 0) {
        subs[who].fd = -1;
    } else {
        J.uplink = -1;
        if (!J.terminating)
            job_fail(1, "the mpiexec that started this job (MPI_Comm_spawn) is gone; terminating the job");
    }
}

long spawn_wait_ms(void)
{
    long ms = -1;
    for (struct waiting *w = waits; w; w = w->next)
        if (ms < 0 || ms_until(&w->until) < ms)
            ms = ms_until(&w->until);
    return ms;
}

/* After the PMI server's work: a job a spawn started says when its processes have all started;
 * the spawns that wait for room are tried again. */
void spawn_progress(void)
{
    if (waits) /* (room may have come free: a rank of the first job ended; or a wait is over) */
        wait_retry();
    if (J.uplink >= 0 && !J.ready_sent && J.srv.conn && J.srv.ninit == J.n) {
        J.ready_sent = 1;
        if (ctl_send(J.uplink, 'R', "", 0, 10000) != 0)
            job_fail(1, "the mpiexec that started this job (MPI_Comm_spawn) is gone; terminating the job");
    }
}

/* A child was reaped: 1 when it was a started job's mpiexec. */
int spawn_reaped(pid_t pid, int status)
{
    int k;
    for (k = 0; k < nsubs && subs[k].pid != pid; k++)
        ;
    if (k == nsubs)
        return 0;
    subs[k].pid = 0;
    nlive--;
    if (subs[k].fd >= 0)
        spawn_service(k); /* (what it said last: its ready above all; it may move subs) */
    struct subjob *s = &subs[k];
    if (s->fd >= 0) {
        close(s->fd);
        ctl_free(&s->in);
        s->fd = -1;
    }
    char how[64];
    snprintf(how, sizeof how, "%s %d", WIFEXITED(status) ? "exit status" : "signal",
             WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
    if (J.verbose)
        msg("mpiexec: job %s ended (%s)", s->jobid, how);
    if (!s->ready) {
        char err[200];
        snprintf(err, sizeof err, "the new job ended (%s) before all its processes started", how);
        s->ready = 1;
        answer_rc(s->req_sub, s->req_rank, "spawn-response", -1, err, NULL);
    } else if ((!WIFEXITED(status) || WEXITSTATUS(status) != 0) && !J.terminating && !s->cancelled) {
        job_fail(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status),
                 "job %s, which MPI_Comm_spawn started, ended with %s; terminating every job", s->jobid, how);
    }
    if (waits)
        wait_retry(); /* (its room is free; this may move subs: s is not used after it) */
    return 1;
}
