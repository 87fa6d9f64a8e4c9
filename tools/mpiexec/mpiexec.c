/* mpiexec: starts N processes and serves them PMI-2 (see pmiserv.c).
 *
 *   mpiexec -n N [--ppn K] [--hosts H,...|-f FILE] [--launcher fork|ssh|netns] ... prog args...
 *
 * Every rank runs in its own process group with PR_SET_PDEATHSIG=SIGKILL; its starter (mpiexec
 * itself, or the proxy of its host) is a child subreaper, so descendants that lose their parent
 * come back to it and are killed at the end. Output of each rank goes through pipes and is
 * written whole lines at a time.
 *
 * Launch across hosts (docs/DESIGN.md, "Launch across hosts"): with the ssh or netns launcher,
 * mpiexec starts one proxy per host (this program with --proxy, through ssh or `ip netns exec`),
 * which connects back over TCP (the control connection, ctl.h), receives the job, forks that
 * host's ranks as above, relays their output in whole lines and reports their exit statuses.
 * The ranks connect to mpiexec's PMI server themselves, over TCP (PMI_PORT). */
#include "ctl.h"
#include "hosts.h"
#include "pmiserv.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define OUT_MAX_LINE    (1024 * 1024) /* a longer "line" is written in pieces */
#define KILL_GRACE_MS   1000          /* SIGTERM -> SIGKILL after a failure */
#define SIGNAL_GRACE_MS 2000          /* forwarded signal -> SIGKILL */
#define DRAIN_MS        2000          /* after the last rank: wait this long for pipes to close */
#define CONNECT_MS      60000         /* a proxy must connect back within this time */
#define PENDING_MS      10000         /* an accepted connection must say who it is within this */
#define FORCE_MS        5000          /* after SIGKILL was sent: give up on silent proxies */
#define PMI_DRAIN_MS    1000          /* a remote rank ended: wait this long for its PMI EOF */

enum { LAUNCH_FORK, LAUNCH_SSH, LAUNCH_NETNS };
static const char *const launcher_names[] = { "fork", "ssh", "netns" };

/* mpiexec's view of one host's proxy (ssh/netns launchers). */
struct hoststate {
    pid_t lpid; /* launcher child (ssh, or the proxy itself under ip netns exec); 0 once reaped */
    int fd;     /* control connection; -1 before the proxy connected and once closed */
    struct ctlbuf in;
    int connected; /* said hello */
    int done;      /* sent 'D': its ranks are gone and its host is clean */
    int nrunning;  /* its ranks not yet reported ended */
};

/* An accepted connection that has not said who it is yet. */
struct pending {
    int fd;
    int pmi; /* 1: on the PMI port (a rank), 0: on the control port (a proxy) */
    char *buf;
    size_t len, cap;
    int answered; /* PMI: the init line was answered */
    struct timespec until;
};

struct outstream {
    int fd;   /* read end, -1 when closed */
    int dest; /* 1 or 2 */
    char *buf;
    size_t len, cap;
    int midline; /* a piece of the current line was already written */
};

struct rankproc {
    pid_t pid; /* local process (0 for a rank on another host's proxy) */
    long rpid; /* its pid on the proxy's host, as reported */
    int node;
    int running; /* not yet reaped */
    int status;
    struct outstream out[2];
};

static struct {
    int n;
    int ppn;
    int prefix;
    int verbose;
    double timeout;
    char **argv;
    char jobid[32];
    char *mapping; /* PMI_process_mapping */
    int *node_of;
    struct rankproc *r;
    struct pmisrv srv;
    int nrunning;
    /* termination */
    int terminating;
    int cause_set;
    int exit_code;
    int kill_sent;
    struct timespec kill_at;
    int signals_seen;
    /* stdin forwarding to rank 0 when stdin is a terminal */
    int stdin_fwd; /* pipe write end to rank 0, -1 if none */
    char inbuf[4096];
    size_t inlen;
    int stdin_open;
    int out_dead[3]; /* our stdout/stderr gave EPIPE */
    pid_t watchdog;
    int watchdog_fd; /* write end: rank pids go to the watchdog */
    /* placement */
    struct mpx_hostlist hosts;
    int *host_of; /* index in hosts of every rank (NULL without a host list) */
    int *lrank;   /* local rank of every rank (its index among its node's ranks) */
    int *lsize;   /* number of ranks on every rank's node */
    int nnodes;
    /* launch across hosts (mpiexec side) */
    int remote; /* ranks are started by per-host proxies */
    int launcher;
    char **lexec; /* --launcher-exec split in words (NULL: ssh -x -o BatchMode=yes) */
    struct hoststate *hs;
    int pmi_lfd, ctl_lfd;
    int pmi_port, ctl_port;
    char addrs[1024]; /* addresses the proxies try, comma-separated */
    char cookie[40];
    struct pending *pend;
    int npend, cappend;
    struct timespec connect_until, force_at;
    char cwd[PATH_MAX];
    /* proxy mode */
    int proxy;
    int ctl_fd;
    struct ctlbuf ctl_in;
    char proxy_host[256];
    char pmi_addr[300]; /* PMI_PORT for the ranks */
} J;

static int sigpipe_fds[2] = { -1, -1 };

/* ---------- small helpers ---------- */

static void msg(const char *fmt, ...)
{
    char line[1400];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line - 1, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if (n > (int)sizeof line - 2)
        n = (int)sizeof line - 2;
    line[n++] = '\n';
    /* One write: never interleaved with forwarded output. */
    ssize_t w = write(2, line, (size_t)n);
    (void)w;
}

static void now(struct timespec *t)
{
    clock_gettime(CLOCK_MONOTONIC, t);
}

static void add_ms(struct timespec *t, long ms)
{
    t->tv_sec += ms / 1000;
    t->tv_nsec += (ms % 1000) * 1000000L;
    if (t->tv_nsec >= 1000000000L) {
        t->tv_sec++;
        t->tv_nsec -= 1000000000L;
    }
}

static long ms_until(const struct timespec *t)
{
    struct timespec n;
    now(&n);
    long ms = (long)(t->tv_sec - n.tv_sec) * 1000 + (t->tv_nsec - n.tv_nsec) / 1000000L;
    return ms < 0 ? 0 : ms;
}

static void set_nonblock(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0)
        fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

static void on_signal(int sig)
{
    int e = errno;
    unsigned char c = (unsigned char)sig;
    ssize_t w = write(sigpipe_fds[1], &c, 1);
    (void)w;
    errno = e;
}

static const int fwd_term_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
static const int fwd_plain_signals[] = { SIGUSR1, SIGUSR2 };

static void usage(FILE *f)
{
    fprintf(f, "Usage: mpiexec -n N [options] program [args...]\n"
               "Starts N processes of program, on this machine or on the given hosts, wired up through\n"
               "PMI-2.\n"
               "\n"
               "Options:\n"
               "  -n N, -np N        number of processes (required, N >= 1)\n"
               "  --hosts H[:S],...  hosts to run on, each with S slots (default 1); a host named twice\n"
               "                     is one host. The node of a rank is its host.\n"
               "  -f FILE            hostfile: one host[:slots] per line, '#' starts a comment\n"
               "  --ppn K, -ppn K    K consecutive ranks per host (per node), host after host; without\n"
               "                     it each host takes as many consecutive ranks as it has slots.\n"
               "                     Both wrap around the host list when N exceeds the places.\n"
               "                     Without hosts: simulate nodes on this machine, ranks in blocks\n"
               "                     of K per node; default all ranks on node 0; env APTUS_PPN\n"
               "  --launcher L       how ranks are started on the hosts: fork (all on this machine; a\n"
               "                     host list then only says which ranks share a node), ssh (a proxy\n"
               "                     per host through ssh; hosts that are this machine are forked),\n"
               "                     netns (a proxy per host through 'ip netns exec HOST': hosts are\n"
               "                     network namespaces). Default: fork when every host is this\n"
               "                     machine (or no hosts are given), ssh otherwise\n"
               "  --launcher-exec C  command used instead of ssh, called as 'C host command...'\n"
               "                     (C may have arguments: \"ssh -p 2222\"); implies --launcher ssh\n"
               "  --iface NAME       the proxies and ranks reach mpiexec at this interface's IPv4\n"
               "                     address; default: every up interface, non-loopback first (each\n"
               "                     proxy takes the first it can reach), loopback only when all hosts\n"
               "                     are this machine; env MPIEXEC_IFACE\n"
               "  -l, --prefix       prefix every output line with \"[rank] \"\n"
               "  --timeout S        kill the job after S seconds and exit 124;\n"
               "                     env MPIEXEC_TIMEOUT\n"
               "  -v, --verbose      trace PMI traffic and process events\n"
               "  -h, --help         this text\n"
               "\n"
               "Exit status: 0 when every rank exits 0; the code given to MPI_Abort; a failing rank's\n"
               "exit code, or 128+signal if it was killed by a signal; 124 on timeout; 1 when a host\n"
               "cannot be reached or its proxy is lost; 2 for bad options.\n"
               "Each rank gets PMI_FD (on other hosts' proxies: PMI_PORT=addr:port), PMI_RANK, PMI_SIZE,\n"
               "PMI_JOBID, APTUS_NODE_ID, APTUS_LOCAL_RANK, APTUS_LOCAL_SIZE and APTUS_NUM_NODES; ranks\n"
               "started by a proxy get mpiexec's environment and working directory, and /dev/null as\n"
               "stdin. mpirun is the same program.\n");
}

static int parse_count(const char *s, long lo, long hi, long *out)
{
    char *e;
    long v;
    if (!s || !*s)
        return -1;
    errno = 0;
    v = strtol(s, &e, 10);
    if (errno || *e || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

static int parse_seconds(const char *s, double *out)
{
    char *e;
    double v;
    if (!s || !*s)
        return -1;
    errno = 0;
    v = strtod(s, &e);
    if (errno || *e || !(v > 0) || v > 1e7)
        return -1;
    *out = v;
    return 0;
}

/* Resolves prog like execvp would; fills a message on failure. Returns 0 or an exit code. */
static int check_program(const char *prog, char *err, size_t errlen)
{
    struct stat st;
    if (strchr(prog, '/')) {
        if (stat(prog, &st) != 0) {
            snprintf(err, errlen, "cannot run '%s': %s", prog, strerror(errno));
            return 127;
        }
        if (S_ISDIR(st.st_mode)) {
            snprintf(err, errlen, "cannot run '%s': is a directory", prog);
            return 126;
        }
        if (access(prog, X_OK) != 0) {
            snprintf(err, errlen, "cannot run '%s': %s", prog, strerror(errno));
            return 126;
        }
        return 0;
    }
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = "/usr/local/bin:/usr/bin:/bin";
    int found_noexec = 0;
    const char *p = path;
    while (1) {
        const char *colon = strchr(p, ':');
        size_t dl = colon ? (size_t)(colon - p) : strlen(p);
        char full[PATH_MAX];
        if (dl == 0)
            snprintf(full, sizeof full, "./%s", prog);
        else
            snprintf(full, sizeof full, "%.*s/%s", (int)dl, p, prog);
        if (stat(full, &st) == 0 && !S_ISDIR(st.st_mode)) {
            if (access(full, X_OK) == 0)
                return 0;
            found_noexec = 1;
        }
        if (!colon)
            break;
        p = colon + 1;
    }
    if (found_noexec) {
        snprintf(err, errlen, "cannot run '%s': Permission denied", prog);
        return 126;
    }
    snprintf(err, errlen, "cannot run '%s': command not found (not in PATH)", prog);
    return 127;
}

static void make_jobid(void)
{
    unsigned int rnd = 0;
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        if (read(fd, &rnd, sizeof rnd) != (ssize_t)sizeof rnd)
            rnd = 0;
        close(fd);
    }
    if (!rnd) {
        struct timespec t;
        clock_gettime(CLOCK_REALTIME, &t);
        rnd = (unsigned int)(t.tv_nsec ^ (t.tv_sec << 20));
    }
    snprintf(J.jobid, sizeof J.jobid, "%ldx%06x", (long)getpid(), rnd & 0xffffffu);
}

/* ---------- termination ---------- */

static void host_send_signal(int h, int sig);

static void signal_ranks(int sig)
{
    for (int i = 0; i < J.n; i++)
        if (J.r[i].pid > 0 && J.r[i].running)
            kill(-J.r[i].pid, sig);
    if (J.remote)
        for (int h = 0; h < J.hosts.n; h++)
            host_send_signal(h, sig);
}

static void start_terminating(long grace_ms)
{
    if (J.terminating)
        return;
    J.terminating = 1;
    signal_ranks(SIGTERM);
    now(&J.kill_at);
    add_ms(&J.kill_at, grace_ms);
}

/* Records the job's outcome (the first one wins) and stops the job. */
static void job_fail(int code, const char *fmt, ...)
{
    if (!J.cause_set) {
        char line[1300];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(line, sizeof line, fmt, ap);
        va_end(ap);
        J.cause_set = 1;
        J.exit_code = code;
        msg("mpiexec: %s", line);
    }
    start_terminating(KILL_GRACE_MS);
}

static void handle_signal(int sig)
{
    if (sig == SIGCHLD)
        return;
    for (size_t i = 0; i < sizeof fwd_plain_signals / sizeof fwd_plain_signals[0]; i++)
        if (sig == fwd_plain_signals[i]) {
            signal_ranks(sig);
            return;
        }
    J.signals_seen++;
    if (J.signals_seen > 1) {
        msg("mpiexec: caught %s again; killing all ranks", strsignal(sig));
        signal_ranks(SIGKILL);
        J.kill_sent = 1;
        return;
    }
    if (!J.cause_set) {
        J.cause_set = 1;
        J.exit_code = 128 + sig;
        if (!J.proxy)
            msg("mpiexec: caught signal %d (%s); forwarding it to the ranks", sig, strsignal(sig));
    }
    signal_ranks(sig);
    if (!J.terminating) {
        J.terminating = 1;
        now(&J.kill_at);
        add_ms(&J.kill_at, SIGNAL_GRACE_MS);
    }
}

/* ---------- output forwarding ---------- */

static void write_out(int dest, const char *p, size_t n)
{
    while (n > 0 && !J.out_dead[dest]) {
        ssize_t w = write(dest, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN) {
                struct pollfd pfd = { .fd = dest, .events = POLLOUT };
                poll(&pfd, 1, 100);
                continue;
            }
            J.out_dead[dest] = 1; /* EPIPE etc.: drop further output to this stream */
            return;
        }
        p += w;
        n -= (size_t)w;
    }
}

/* Writes data[0..n) of rank's stream (a complete line when complete != 0). */
static void proxy_lost(void);

static void emit(int rank, struct outstream *o, const char *data, size_t n, int complete)
{
    static char *tmp;
    static size_t tmpcap;
    char pfx[24] = "";
    size_t pl = 0;
    if (J.proxy) {
        /* To mpiexec: 'O' record = rank (4 bytes, big-endian), stream (1|2), complete, data. */
        pl = 6;
        pfx[0] = (char)((unsigned)rank >> 24);
        pfx[1] = (char)((unsigned)rank >> 16);
        pfx[2] = (char)((unsigned)rank >> 8);
        pfx[3] = (char)rank;
        pfx[4] = (char)o->dest;
        pfx[5] = (char)(complete != 0);
    } else if (J.prefix && !o->midline) {
        pl = (size_t)snprintf(pfx, sizeof pfx, "[%d] ", rank);
    }
    size_t need = pl + n + 1;
    if (need > tmpcap) {
        char *t = realloc(tmp, need);
        if (!t) {
            if (!J.proxy) {
                write_out(o->dest, pfx, pl);
                write_out(o->dest, data, n);
            }
            o->midline = !complete;
            return;
        }
        tmp = t;
        tmpcap = need;
    }
    memcpy(tmp, pfx, pl);
    memcpy(tmp + pl, data, n);
    if (J.proxy) {
        if (J.ctl_fd >= 0 && ctl_send(J.ctl_fd, 'O', tmp, pl + n, -1) != 0)
            proxy_lost();
    } else {
        write_out(o->dest, tmp, pl + n);
    }
    o->midline = !complete;
}

/* Emits every complete line in the buffer; with final != 0 also the unterminated rest. */
static void flush_lines(int rank, struct outstream *o, int final)
{
    size_t start = 0;
    for (;;) {
        char *nl = memchr(o->buf + start, '\n', o->len - start);
        if (!nl)
            break;
        size_t end = (size_t)(nl - o->buf) + 1;
        emit(rank, o, o->buf + start, end - start, 1);
        start = end;
    }
    if (o->len - start >= OUT_MAX_LINE) {
        emit(rank, o, o->buf + start, o->len - start, 0);
        start = o->len;
    }
    if (final && start < o->len) {
        o->buf[o->len] = '\n'; /* room reserved in read_stream */
        emit(rank, o, o->buf + start, o->len - start + 1, 1);
        start = o->len;
    }
    if (start > 0) {
        memmove(o->buf, o->buf + start, o->len - start);
        o->len -= start;
    }
}

static void close_stream(int rank, struct outstream *o)
{
    flush_lines(rank, o, 1);
    close(o->fd);
    o->fd = -1;
    free(o->buf);
    o->buf = NULL;
    o->len = o->cap = 0;
}

static void read_stream(int rank, struct outstream *o)
{
    for (int rounds = 0; rounds < 16 && o->fd >= 0; rounds++) {
        if (o->cap - o->len < 4096 + 1) {
            size_t nc = o->cap ? o->cap * 2 : 16384;
            char *nb = realloc(o->buf, nc);
            if (!nb) {
                flush_lines(rank, o, 1);
                continue;
            }
            o->buf = nb;
            o->cap = nc;
        }
        ssize_t r = read(o->fd, o->buf + o->len, o->cap - o->len - 1);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return;
            close_stream(rank, o);
            return;
        }
        if (r == 0) {
            close_stream(rank, o);
            return;
        }
        o->len += (size_t)r;
        flush_lines(rank, o, 0);
    }
}

/* ---------- stdin forwarding ---------- */

static void stdin_read(void)
{
    ssize_t r = read(0, J.inbuf, sizeof J.inbuf);
    if (r < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (r <= 0) {
        J.stdin_open = 0;
        if (J.stdin_fwd >= 0)
            close(J.stdin_fwd);
        J.stdin_fwd = -1;
        return;
    }
    J.inlen = (size_t)r;
}

static void stdin_write(void)
{
    ssize_t w = write(J.stdin_fwd, J.inbuf, J.inlen);
    if (w < 0) {
        if (errno == EINTR || errno == EAGAIN)
            return;
        close(J.stdin_fwd);
        J.stdin_fwd = -1;
        J.stdin_open = 0;
        J.inlen = 0;
        return;
    }
    memmove(J.inbuf, J.inbuf + w, J.inlen - (size_t)w);
    J.inlen -= (size_t)w;
}

/* ---------- children ---------- */

static void reset_child_signals(void)
{
    struct sigaction sa;
    sigset_t none;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_DFL;
    sigemptyset(&sa.sa_mask);
    for (int s = 1; s < NSIG; s++)
        if (s != SIGKILL && s != SIGSTOP)
            sigaction(s, &sa, NULL);
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
}

static void child_fail(const char *what)
{
    char line[512];
    int n = snprintf(line, sizeof line, "mpiexec: %s: %s\n", what, strerror(errno));
    if (n > 0) {
        ssize_t w = write(2, line, (size_t)n);
        (void)w;
    }
    _exit(127);
}

static void setenv_int(const char *name, long v)
{
    char num[32];
    snprintf(num, sizeof num, "%ld", v);
    setenv(name, num, 1);
}

/* In the child: never returns. */
static void exec_rank(int rank, pid_t parent, int pmi_fd, int in_fd, int out_fd, int err_fd)
{
    setpgid(0, 0);
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0)
        child_fail("prctl(PR_SET_PDEATHSIG)");
    if (getppid() != parent)
        _exit(127); /* mpiexec is already gone */
    reset_child_signals();

    if (in_fd >= 0 && in_fd != 0) {
        if (dup2(in_fd, 0) < 0)
            child_fail("dup2(stdin)");
    }
    if (dup2(out_fd, 1) < 0 || dup2(err_fd, 2) < 0)
        child_fail("dup2(stdout/stderr)");
    if (pmi_fd >= 0) {
        /* A non-close-on-exec copy of the PMI socket for the program. */
        int fd = fcntl(pmi_fd, F_DUPFD, 3);
        if (fd < 0)
            child_fail("dup(PMI socket)");
        setenv_int("PMI_FD", fd);
        unsetenv("PMI_PORT");
    } else {
        /* Started by a proxy: the rank connects to mpiexec's PMI port itself. */
        unsetenv("PMI_FD");
        setenv("PMI_PORT", J.pmi_addr, 1);
    }
    setenv_int("PMI_RANK", rank);
    setenv_int("PMI_SIZE", J.n);
    setenv("PMI_JOBID", J.jobid, 1);
    unsetenv("PMI_ID");
    setenv_int("APTUS_NODE_ID", J.node_of[rank]);
    setenv_int("APTUS_LOCAL_RANK", J.lrank[rank]);
    setenv_int("APTUS_LOCAL_SIZE", J.lsize[rank]);
    setenv_int("APTUS_NUM_NODES", J.nnodes);

    execvp(J.argv[0], J.argv);
    {
        char what[PATH_MAX + 32];
        snprintf(what, sizeof what, "cannot execute '%s'", J.argv[0]);
        child_fail(what);
    }
}

static void cleanup_shm(void);

/* The watchdog: a separate process (own session, deaf to terminal signals) that learns each
 * rank's pid through a pipe. If mpiexec dies without stopping it (SIGKILL, crash), the pipe
 * hits EOF and the watchdog SIGKILLs every rank's process group, which also catches the
 * ranks' own children (PR_SET_PDEATHSIG covers only the ranks themselves), and removes the
 * job's shared memory. On a normal end mpiexec kills the watchdog first. */
static void start_watchdog(void)
{
    int p[2];
    J.watchdog = -1;
    J.watchdog_fd = -1;
    if (pipe2(p, O_CLOEXEC) != 0)
        return;
    pid_t pid = fork();
    if (pid < 0) {
        close(p[0]);
        close(p[1]);
        return;
    }
    if (pid > 0) {
        close(p[0]);
        J.watchdog = pid;
        J.watchdog_fd = p[1];
        return;
    }
    /* watchdog */
    close(p[1]);
    setsid();
    int devnull = open("/dev/null", O_RDWR);
    if (devnull >= 0) {
        dup2(devnull, 0);
        dup2(devnull, 1);
        dup2(devnull, 2);
        if (devnull > 2)
            close(devnull);
    }
    signal(SIGINT, SIG_IGN);
    signal(SIGTERM, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
    signal(SIGQUIT, SIG_IGN);
    signal(SIGPIPE, SIG_IGN);
    signal(SIGCHLD, SIG_DFL);
    pid_t *pids = NULL;
    size_t np = 0, cap = 0;
    for (;;) {
        pid_t v;
        ssize_t r = read(p[0], &v, sizeof v);
        if (r < 0 && errno == EINTR)
            continue;
        if (r != (ssize_t)sizeof v)
            break;
        if (np == cap) {
            size_t nc = cap ? cap * 2 : 64;
            pid_t *np2 = realloc(pids, nc * sizeof *pids);
            if (!np2)
                break;
            pids = np2;
            cap = nc;
        }
        pids[np++] = v;
    }
    for (size_t k = 0; k < np; k++)
        kill(-pids[k], SIGKILL);
    cleanup_shm();
    _exit(0);
}

static void watchdog_add(pid_t pid)
{
    if (J.watchdog_fd < 0)
        return;
    ssize_t w;
    do
        w = write(J.watchdog_fd, &pid, sizeof pid);
    while (w < 0 && errno == EINTR);
}

static void stop_watchdog(void)
{
    if (J.watchdog > 0) {
        kill(J.watchdog, SIGKILL);
        waitpid(J.watchdog, NULL, 0);
        J.watchdog = -1;
    }
    if (J.watchdog_fd >= 0)
        close(J.watchdog_fd);
    J.watchdog_fd = -1;
}

static int spawn_all(void)
{
    int *srv_fds = calloc((size_t)J.n, sizeof *srv_fds);
    int *cli_fds = calloc((size_t)J.n, sizeof *cli_fds);
    int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
    int stdin_rd = -1;
    pid_t me = getpid();
    if (!srv_fds || !cli_fds || devnull < 0) {
        msg("mpiexec: out of resources: %s", strerror(errno));
        return -1;
    }
    J.stdin_fwd = -1;
    if (isatty(0)) {
        int p[2];
        if (pipe2(p, O_CLOEXEC) == 0) {
            stdin_rd = p[0];
            J.stdin_fwd = p[1];
            set_nonblock(J.stdin_fwd);
            J.stdin_open = 1;
        }
    }
    for (int i = 0; i < J.n; i++) {
        int sv[2];
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
            msg("mpiexec: socketpair: %s", strerror(errno));
            return -1;
        }
        srv_fds[i] = sv[0];
        cli_fds[i] = sv[1];
        set_nonblock(sv[0]);
    }
    if (pmisrv_init(&J.srv, J.n, srv_fds, J.jobid, J.mapping, J.node_of) != 0) {
        msg("mpiexec: out of memory");
        return -1;
    }
    J.srv.verbose = J.verbose;
    free(srv_fds);

    for (int i = 0; i < J.n; i++) {
        int po[2], pe[2];
        if (pipe2(po, O_CLOEXEC) != 0 || pipe2(pe, O_CLOEXEC) != 0) {
            msg("mpiexec: pipe: %s", strerror(errno));
            return -1;
        }
        int in_fd = (i == 0) ? (stdin_rd >= 0 ? stdin_rd : 0) : devnull;
        pid_t pid = fork();
        if (pid < 0) {
            msg("mpiexec: fork: %s", strerror(errno));
            close(po[0]);
            close(po[1]);
            close(pe[0]);
            close(pe[1]);
            return -1;
        }
        if (pid == 0)
            exec_rank(i, me, cli_fds[i], in_fd, po[1], pe[1]);
        setpgid(pid, pid); /* also done in the child; whichever runs first */
        watchdog_add(pid);
        J.r[i].pid = pid;
        J.r[i].running = 1;
        J.nrunning++;
        close(po[1]);
        close(pe[1]);
        close(cli_fds[i]);
        cli_fds[i] = -1;
        J.r[i].out[0].fd = po[0];
        J.r[i].out[0].dest = 1;
        J.r[i].out[1].fd = pe[0];
        J.r[i].out[1].dest = 2;
        set_nonblock(po[0]);
        set_nonblock(pe[0]);
        if (J.verbose)
            msg("mpiexec: rank %d is pid %ld on node %d", i, (long)pid, J.node_of[i]);
    }
    if (stdin_rd >= 0)
        close(stdin_rd);
    close(devnull);
    free(cli_fds);
    return 0;
}

/* A rank's process has ended: decide what it means for the job. */
static void drain_pmi(int i);

static const char *rank_where(int i)
{
    static char where[300];
    where[0] = '\0';
    if (J.remote)
        snprintf(where, sizeof where, " on host %s", J.hosts.h[J.host_of[i]].name);
    return where;
}

static void rank_ended(int i, int status)
{
    struct rankproc *rp = &J.r[i];
    rp->running = 0;
    rp->status = status;
    J.nrunning--;
    if (J.proxy) {
        /* mpiexec decides what it means; the rank's group goes with it. */
        char rec[64];
        int n = snprintf(rec, sizeof rec, "%d %d %ld", i, status, (long)rp->pid);
        kill(-rp->pid, SIGKILL);
        if (J.ctl_fd >= 0 && ctl_send(J.ctl_fd, 'X', rec, (size_t)n, -1) != 0)
            proxy_lost();
        return;
    }
    if (J.remote)
        drain_pmi(i);
    /* Whatever it sent before dying (an abort, a finalize) counts first. */
    pmisrv_service(&J.srv, i);
    if (J.srv.abort_rank >= 0 && !J.cause_set) {
        job_fail(J.srv.abort_code, "rank %d called abort with exit code %d%s%s", J.srv.abort_rank, J.srv.abort_code,
                 J.srv.abort_msg[0] ? ": " : "", J.srv.abort_msg);
    }
    pmisrv_close(&J.srv, i);
    /* Leftovers in its process group (background children) go with it. */
    if (rp->pid > 0)
        kill(-rp->pid, SIGKILL);
    long pid = rp->pid > 0 ? (long)rp->pid : rp->rpid;
    const char *where = rank_where(i);

    int finalized = J.srv.conn[i].finalized;
    int initialized = J.srv.conn[i].initialized;
    if (J.verbose)
        msg("mpiexec: rank %d (pid %ld%s) ended, status 0x%x", i, pid, where, status);
    if (J.terminating)
        return;
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        if (!finalized)
            job_fail(128 + sig, "rank %d (pid %ld%s) was killed by signal %d (%s); terminating the job", i, pid, where,
                     sig, strsignal(sig));
        else
            msg("mpiexec: rank %d (pid %ld%s) was killed by signal %d (%s) after finalize", i, pid, where, sig,
                strsignal(sig));
    } else if (WIFEXITED(status)) {
        int code = WEXITSTATUS(status);
        if (code != 0 && !finalized)
            job_fail(code, "rank %d (pid %ld%s) exited with code %d before finalize; terminating the job", i, pid,
                     where, code);
        else if (code != 0)
            msg("mpiexec: rank %d (pid %ld%s) exited with code %d after finalize", i, pid, where, code);
        else if (initialized && !finalized)
            job_fail(1, "rank %d (pid %ld%s) exited without calling finalize; terminating the job", i, pid, where);
    }
}

static void launcher_ended(int h, int status);

static void reap(void)
{
    for (;;) {
        int status;
        pid_t pid = waitpid(-1, &status, WNOHANG);
        if (pid <= 0)
            return;
        if (pid == J.watchdog) {
            J.watchdog = -1; /* should not happen; the job goes on without it */
            continue;
        }
        if (J.remote) {
            int h;
            for (h = 0; h < J.hosts.n && J.hs[h].lpid != pid; h++)
                ;
            if (h < J.hosts.n) {
                launcher_ended(h, status);
                continue;
            }
        }
        for (int i = 0; i < J.n; i++)
            if (J.r[i].pid == pid && J.r[i].running) {
                rank_ended(i, status);
                break;
            }
        /* Otherwise an orphaned descendant adopted by us (subreaper): just reaped. */
    }
}

/* Kills whatever descendants are still around (adopted orphans that left their group). */
static void kill_descendants(void)
{
    pid_t me = getpid();
    for (int pass = 0; pass < 50; pass++) {
        int found = 0;
        DIR *d = opendir("/proc");
        if (!d)
            return;
        struct dirent *de;
        while ((de = readdir(d))) {
            char path[300], buf[512];
            if (de->d_name[0] < '0' || de->d_name[0] > '9')
                continue;
            snprintf(path, sizeof path, "/proc/%s/stat", de->d_name);
            int fd = open(path, O_RDONLY | O_CLOEXEC);
            if (fd < 0)
                continue;
            ssize_t n = read(fd, buf, sizeof buf - 1);
            close(fd);
            if (n <= 0)
                continue;
            buf[n] = '\0';
            char *rp = strrchr(buf, ')');
            char state;
            long ppid;
            if (!rp || sscanf(rp + 1, " %c %ld", &state, &ppid) != 2)
                continue;
            if (ppid == (long)me) {
                found = 1;
                kill((pid_t)atol(de->d_name), SIGKILL);
            }
        }
        closedir(d);
        if (!found)
            return;
        struct timespec ts = { 0, 20 * 1000000L };
        nanosleep(&ts, NULL);
        while (waitpid(-1, NULL, WNOHANG) > 0)
            ;
    }
}

static void cleanup_shm(void)
{
    char pfx[64];
    int pl = snprintf(pfx, sizeof pfx, "aptus-%s-", J.jobid);
    DIR *d = opendir("/dev/shm");
    if (!d)
        return;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (strncmp(de->d_name, pfx, (size_t)pl) != 0)
            continue;
        char path[PATH_MAX];
        snprintf(path, sizeof path, "/dev/shm/%s", de->d_name);
        if (unlink(path) == 0 && J.verbose)
            msg("mpiexec: removed leftover shared memory %s", path);
    }
    closedir(d);
}

/* ---------- launch across hosts: mpiexec side ---------- */

static char self_exe[PATH_MAX];

static int host_is_local(const char *name)
{
    char me[256];
    if (!strcmp(name, "localhost") || !strcmp(name, "localhost.localdomain") || !strcmp(name, "127.0.0.1"))
        return 1;
    if (gethostname(me, sizeof me) != 0)
        return 0;
    me[sizeof me - 1] = '\0';
    if (!strcmp(name, me))
        return 1;
    /* "node1" names "node1.example.org" and the other way round. */
    size_t ml = strcspn(me, "."), nl = strcspn(name, ".");
    return ml == nl && strncmp(me, name, ml) == 0 && (me[ml] == '\0' || name[nl] == '\0');
}

static int listen_on(struct in_addr addr, int *port)
{
    struct sockaddr_in sa;
    socklen_t sl = sizeof sa;
    int one = 1;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return -1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_addr = addr;
    if (bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(fd, 1024) != 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &sl) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    *port = ntohs(sa.sin_port);
    return fd;
}

static void add_addr(const char *a)
{
    size_t l = strlen(J.addrs);
    if (strstr(J.addrs, a) || l + strlen(a) + 2 >= sizeof J.addrs)
        return;
    snprintf(J.addrs + l, sizeof J.addrs - l, "%s%s", l ? "," : "", a);
}

/* The addresses proxies try, and the listening sockets (PMI and control). */
static int setup_listeners(const char *iface, int all_local, char *err, size_t errlen)
{
    struct in_addr bind_addr;
    struct ifaddrs *ifs = NULL;
    char buf[INET_ADDRSTRLEN];
    bind_addr.s_addr = htonl(INADDR_ANY);
    J.addrs[0] = '\0';
    if (iface) {
        if (getifaddrs(&ifs) != 0) {
            snprintf(err, errlen, "getifaddrs: %s", strerror(errno));
            return -1;
        }
        for (struct ifaddrs *a = ifs; a; a = a->ifa_next)
            if (a->ifa_addr && a->ifa_addr->sa_family == AF_INET && !strcmp(a->ifa_name, iface)) {
                bind_addr = ((struct sockaddr_in *)a->ifa_addr)->sin_addr;
                inet_ntop(AF_INET, &bind_addr, buf, sizeof buf);
                add_addr(buf);
                break;
            }
        freeifaddrs(ifs);
        if (!J.addrs[0]) {
            if (if_nametoindex(iface) == 0)
                snprintf(err, errlen, "--iface: no interface '%s' in mpiexec's network namespace", iface);
            else
                snprintf(err, errlen, "--iface: interface '%s' has no IPv4 address", iface);
            return -1;
        }
    } else if (all_local) {
        inet_pton(AF_INET, "127.0.0.1", &bind_addr);
        add_addr("127.0.0.1");
    } else {
        if (getifaddrs(&ifs) == 0) {
            for (struct ifaddrs *a = ifs; a; a = a->ifa_next)
                if (a->ifa_addr && a->ifa_addr->sa_family == AF_INET && (a->ifa_flags & IFF_UP) &&
                    !(a->ifa_flags & IFF_LOOPBACK)) {
                    inet_ntop(AF_INET, &((struct sockaddr_in *)a->ifa_addr)->sin_addr, buf, sizeof buf);
                    add_addr(buf);
                }
            freeifaddrs(ifs);
        }
        add_addr("127.0.0.1");
    }
    J.pmi_lfd = listen_on(bind_addr, &J.pmi_port);
    if (J.pmi_lfd >= 0)
        J.ctl_lfd = listen_on(bind_addr, &J.ctl_port);
    if (J.pmi_lfd < 0 || J.ctl_lfd < 0) {
        snprintf(err, errlen, "cannot listen on %s: %s", J.addrs, strerror(errno));
        return -1;
    }
    if (J.verbose)
        msg("mpiexec: listening on ports %d (PMI) and %d (proxies); proxies try %s", J.pmi_port, J.ctl_port, J.addrs);
    return 0;
}

static void make_cookie(void)
{
    unsigned char b[12];
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd < 0 || read(fd, b, sizeof b) != (ssize_t)sizeof b) {
        struct timespec t;
        clock_gettime(CLOCK_REALTIME, &t);
        for (size_t i = 0; i < sizeof b; i++)
            b[i] = (unsigned char)((t.tv_nsec >> (i % 4 * 8)) ^ (getpid() >> (i % 2 * 8)) ^ (int)i);
    }
    if (fd >= 0)
        close(fd);
    for (size_t i = 0; i < sizeof b; i++)
        snprintf(J.cookie + 2 * i, 3, "%02x", b[i]);
}

static const char *launcher_desc(int h)
{
    static char d[400];
    if (J.launcher == LAUNCH_NETNS)
        snprintf(d, sizeof d, "'ip netns exec %s'", J.hosts.h[h].name);
    else if (host_is_local(J.hosts.h[h].name))
        snprintf(d, sizeof d, "its proxy (started locally)");
    else
        snprintf(d, sizeof d, "'%s %s'", J.lexec ? J.lexec[0] : "ssh", J.hosts.h[h].name);
    return d;
}

/* s as one word for a POSIX shell: itself when it has nothing the shell treats specially,
 * else in single quotes (each ' written as '\''). ssh hands its command to the remote user's
 * shell as one string, so every word of it goes through this. Returns s or a new string. */
static char *shell_word(const char *s)
{
    size_t n = 0, q = 0;
    for (const char *c = s; *c; c++, n++)
        q += *c == '\'';
    if (n && strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./-=,:@+%") == n)
        return (char *)s;
    char *w = malloc(n + 3 * q + 3), *o = w;
    if (!w)
        return (char *)s;
    *o++ = '\'';
    for (const char *c = s; *c; c++) {
        if (*c == '\'') {
            memcpy(o, "'\\''", 4);
            o += 4;
        } else {
            *o++ = *c;
        }
    }
    *o++ = '\'';
    *o = 0;
    return w;
}

/* Starts host h's proxy through the launcher. Returns 0 or -1. */
static int launch_host(int h)
{
    char *name = J.hosts.h[h].name;
    char port[16], idx[16];
    char *av[48];
    int ac = 0;
    snprintf(port, sizeof port, "%d", J.ctl_port);
    snprintf(idx, sizeof idx, "%d", h);
    if (J.launcher == LAUNCH_NETNS) {
        av[ac++] = "ip";
        av[ac++] = "netns";
        av[ac++] = "exec";
        av[ac++] = name;
    } else if (!host_is_local(name)) {
        if (J.lexec) {
            for (char **w = J.lexec; *w; w++)
                av[ac++] = *w;
        } else {
            av[ac++] = "ssh";
            av[ac++] = "-x";
            av[ac++] = "-o";
            av[ac++] = "BatchMode=yes";
        }
        av[ac++] = name;
    }
    int first = ac;
    av[ac++] = self_exe;
    av[ac++] = "--proxy";
    av[ac++] = J.addrs;
    av[ac++] = port;
    av[ac++] = idx;
    av[ac++] = J.cookie;
    av[ac++] = name;
    av[ac] = NULL;
    int quote = J.launcher != LAUNCH_NETNS && !host_is_local(name) && !J.lexec;
    pid_t me = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        msg("mpiexec: fork: %s", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        setpgid(0, 0); /* terminal signals reach mpiexec only; it forwards them */
        /* If mpiexec dies, the proxy (or ssh) is told at once; the proxy also sees the
         * control connection close. */
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() != me)
            _exit(127);
        reset_child_signals();
        int dn = open("/dev/null", O_RDONLY);
        if (dn >= 0 && dn != 0) {
            dup2(dn, 0);
            close(dn);
        }
        /* Plain ssh runs the command through the remote shell: quote what it must not split. */
        for (int k = first; quote && k < ac; k++)
            av[k] = shell_word(av[k]);
        execvp(av[0], av);
        {
            char what[PATH_MAX + 32];
            snprintf(what, sizeof what, "cannot execute launcher '%s'", av[0]);
            child_fail(what);
        }
    }
    setpgid(pid, pid);
    J.hs[h].lpid = pid;
    if (J.verbose)
        msg("mpiexec: host %s: started %s (pid %ld)", name, launcher_desc(h), (long)pid);
    return 0;
}

/* Host h's ranks are given up for ended (its launcher failed, its proxy was lost). */
static void host_abandon(int h)
{
    struct hoststate *hs = &J.hs[h];
    if (hs->fd >= 0)
        close(hs->fd);
    hs->fd = -1;
    ctl_free(&hs->in);
    for (int r = 0; r < J.n; r++)
        if (J.host_of[r] == h && J.r[r].running) {
            J.r[r].running = 0;
            J.r[r].status = SIGKILL; /* as if killed */
            J.nrunning--;
            pmisrv_close(&J.srv, r);
        }
    hs->nrunning = 0;
}

static void host_send_signal(int h, int sig)
{
    struct hoststate *hs = &J.hs[h];
    if (hs->fd >= 0 && hs->connected) {
        if (hs->nrunning == 0)
            return;
        char b[16];
        int n = snprintf(b, sizeof b, "%d", sig);
        if (ctl_send(hs->fd, 'S', b, (size_t)n, 2000) != 0) {
            host_abandon(h);
            job_fail(1, "host %s: lost the connection to its proxy; terminating the job", J.hosts.h[h].name);
        }
    } else if (!hs->connected && hs->lpid > 0) {
        kill(-hs->lpid, sig == SIGKILL ? SIGKILL : SIGTERM);
    }
}

static int send_job(int h)
{
    struct hoststate *hs = &J.hs[h];
    char rec[512];
    int n, ok = 1;
    extern char **environ;
    n = snprintf(rec, sizeof rec, "jobid=%s size=%d nodes=%d pmiport=%d verbose=%d", J.jobid, J.n, J.nnodes, J.pmi_port,
                 J.verbose);
    ok = ok && ctl_send(hs->fd, 'J', rec, (size_t)n, 10000) == 0;
    for (int r = 0; r < J.n && ok; r++)
        if (J.host_of[r] == h) {
            n = snprintf(rec, sizeof rec, "%d %d %d %d", r, J.node_of[r], J.lrank[r], J.lsize[r]);
            ok = ctl_send(hs->fd, 'R', rec, (size_t)n, 10000) == 0;
        }
    for (char **a = J.argv; *a && ok; a++)
        ok = ctl_send(hs->fd, 'A', *a, strlen(*a), 10000) == 0;
    for (char **e = environ; e && *e && ok; e++)
        ok = ctl_send(hs->fd, 'E', *e, strlen(*e), 10000) == 0;
    ok = ok && ctl_send(hs->fd, 'C', J.cwd, strlen(J.cwd), 10000) == 0;
    ok = ok && ctl_send(hs->fd, 'G', "", 0, 10000) == 0;
    return ok ? 0 : -1;
}

static void accept_conns(int lfd, int pmi)
{
    for (;;) {
        int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            return;
        if (J.npend == J.cappend) {
            int nc = J.cappend ? J.cappend * 2 : 16;
            struct pending *np = realloc(J.pend, (size_t)nc * sizeof *np);
            if (!np) {
                close(fd);
                return;
            }
            J.pend = np;
            J.cappend = nc;
        }
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        struct pending *p = &J.pend[J.npend++];
        memset(p, 0, sizeof *p);
        p->fd = fd;
        p->pmi = pmi;
        now(&p->until);
        add_ms(&p->until, PENDING_MS);
    }
}

static void pending_drop(int k, int close_fd)
{
    if (close_fd)
        close(J.pend[k].fd);
    free(J.pend[k].buf);
    J.pend[k] = J.pend[--J.npend];
}

/* A PMI connection says who it is in its first PMI-2 message (fullinit: pmirank, and
 * pmijobid, which must be this job's). Returns 1 (rank set), 0 (need more), -1 (refused). */
static int identify_pmi(struct pending *p, int *rank, size_t *consumed)
{
    const char *b = p->buf;
    size_t n = p->len;
    if (n < 8)
        return 0;
    if (memcmp(b, "cmd=init", 8) != 0)
        return -1;
    const char *nl = memchr(b, '\n', n);
    if (!nl)
        return n > 1024 ? -1 : 0;
    size_t off = (size_t)(nl - b) + 1;
    if (!p->answered) {
        /* The client waits for the answer to its init line before it says who it is. */
        static const char ok[] = "cmd=response_to_init pmi_version=2 pmi_subversion=0 rc=0\n";
        const char *v = strstr(b, "pmi_version=2");
        if (!v || v > nl)
            return -1; /* this mpiexec serves PMI-2 only */
        if (send(p->fd, ok, sizeof ok - 1, MSG_NOSIGNAL) != (ssize_t)(sizeof ok - 1))
            return -1;
        p->answered = 1;
    }
    if (n - off < 6)
        return 0;
    char hdr[7];
    memcpy(hdr, b + off, 6);
    hdr[6] = '\0';
    char *e;
    long len = strtol(hdr, &e, 10);
    if (len <= 0 || len > 4096)
        return -1;
    if (n - off - 6 < (size_t)len)
        return 0;
    char body[4097];
    memcpy(body, b + off + 6, (size_t)len);
    body[len] = '\0';
    if (strncmp(body, "cmd=fullinit;", 13) != 0)
        return -1;
    long r = -1;
    int jobok = 0;
    char *save = NULL;
    for (char *t = strtok_r(body, ";", &save); t; t = strtok_r(NULL, ";", &save)) {
        if (!strncmp(t, "pmirank=", 8)) {
            r = strtol(t + 8, &e, 10);
            if (*e || e == t + 8)
                r = -1;
        } else if (!strncmp(t, "pmijobid=", 9)) {
            jobok = strcmp(t + 9, J.jobid) == 0;
        }
    }
    if (!jobok || r < 0 || r >= J.n)
        return -1;
    *rank = (int)r;
    *consumed = off;
    return 1;
}

static void pending_service(int fd)
{
    int k;
    for (k = 0; k < J.npend && J.pend[k].fd != fd; k++)
        ;
    if (k == J.npend)
        return;
    struct pending *p = &J.pend[k];
    for (;;) {
        if (p->cap - p->len < 1024) {
            size_t nc = p->cap ? p->cap * 2 : 8192;
            char *nb = nc > 65536 ? NULL : realloc(p->buf, nc);
            if (!nb) {
                pending_drop(k, 1);
                return;
            }
            p->buf = nb;
            p->cap = nc;
        }
        ssize_t r = recv(fd, p->buf + p->len, p->cap - p->len, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        if (r <= 0) {
            pending_drop(k, 1);
            return;
        }
        p->len += (size_t)r;
    }
    if (p->pmi) {
        int rank;
        size_t off = 0;
        int id = identify_pmi(p, &rank, &off);
        if (id == 0)
            return;
        if (id < 0 || pmisrv_adopt(&J.srv, rank, fd, p->buf + off, p->len - off) < 0) {
            if (J.verbose)
                msg("mpiexec: refused a PMI connection that is not a rank of this job");
            pending_drop(k, 1);
            return;
        }
        if (J.verbose)
            msg("mpiexec: rank %d connected to the PMI port", rank);
        pending_drop(k, 0);
        return;
    }
    /* A proxy: 'H' record "cookie host-index". */
    if (p->len < 5)
        return;
    size_t len = ((size_t)(unsigned char)p->buf[1] << 24) | ((size_t)(unsigned char)p->buf[2] << 16) |
                 ((size_t)(unsigned char)p->buf[3] << 8) | (unsigned char)p->buf[4];
    if (p->buf[0] != 'H' || len > 200) {
        pending_drop(k, 1);
        return;
    }
    if (p->len < 5 + len)
        return;
    char hello[201], ck[64];
    int h = -1;
    memcpy(hello, p->buf + 5, len);
    hello[len] = '\0';
    if (sscanf(hello, "%63s %d", ck, &h) != 2 || strcmp(ck, J.cookie) != 0 || h < 0 || h >= J.hosts.n ||
        J.hs[h].connected || J.hosts.h[h].nranks == 0) {
        if (J.verbose)
            msg("mpiexec: refused a control connection that is not a proxy of this job");
        pending_drop(k, 1);
        return;
    }
    pending_drop(k, 0);
    J.hs[h].fd = fd;
    J.hs[h].connected = 1;
    if (J.verbose)
        msg("mpiexec: host %s: proxy connected", J.hosts.h[h].name);
    if (J.terminating) {
        /* Too late: the proxy starts nothing and ends when the connection closes. */
        host_abandon(h);
        return;
    }
    if (send_job(h) != 0) {
        host_abandon(h);
        job_fail(1, "host %s: cannot send the job to its proxy; terminating the job", J.hosts.h[h].name);
    }
}

static void host_service(int h)
{
    struct hoststate *hs = &J.hs[h];
    int open = ctl_fill(hs->fd, &hs->in);
    char type, *pl;
    size_t n;
    int r;
    while (hs->fd >= 0 && (r = ctl_next(&hs->in, &type, &pl, &n)) == 1) {
        if (type == 'O' && n >= 6) {
            int rank = (int)(((unsigned)(unsigned char)pl[0] << 24) | ((unsigned)(unsigned char)pl[1] << 16) |
                             ((unsigned)(unsigned char)pl[2] << 8) | (unsigned char)pl[3]);
            int stream = pl[4];
            if (rank >= 0 && rank < J.n && J.host_of[rank] == h && (stream == 1 || stream == 2))
                emit(rank, &J.r[rank].out[stream - 1], pl + 6, n - 6, pl[5] != 0);
        } else if (type == 'X' && n < 64) {
            char rec[64];
            int rank, status;
            long pid;
            memcpy(rec, pl, n);
            rec[n] = '\0';
            if (sscanf(rec, "%d %d %ld", &rank, &status, &pid) == 3 && rank >= 0 && rank < J.n &&
                J.host_of[rank] == h && J.r[rank].running) {
                J.r[rank].rpid = pid;
                hs->nrunning--;
                rank_ended(rank, status);
            }
        } else if (type == 'D') {
            hs->done = 1;
            close(hs->fd);
            hs->fd = -1;
            ctl_free(&hs->in);
            return;
        }
    }
    if (hs->fd >= 0 && (!open || r < 0)) {
        int lost = hs->nrunning > 0;
        host_abandon(h);
        if (lost)
            job_fail(1, "host %s: lost the connection to its proxy; terminating the job", J.hosts.h[h].name);
    }
}

/* Host h's launcher child has ended. */
static void launcher_ended(int h, int status)
{
    struct hoststate *hs = &J.hs[h];
    hs->lpid = 0;
    if (hs->connected)
        return; /* the control connection tells the rest */
    char how[64];
    if (WIFSIGNALED(status))
        snprintf(how, sizeof how, "was killed by signal %d", WTERMSIG(status));
    else
        snprintf(how, sizeof how, "exited with code %d", WEXITSTATUS(status));
    host_abandon(h);
    if (!J.terminating)
        job_fail(1, "host %s: %s %s before its proxy connected (%s); terminating the job", J.hosts.h[h].name,
                 launcher_desc(h), how,
                 J.launcher == LAUNCH_NETNS ? "does the network namespace exist? see 'ip netns list'"
                                            : "can the host be reached, and is mpiexec at the same path there?");
}

/* A remote rank has ended: what it sent before (an abort) must be read first. Its
 * connection closes when the process is gone; wait a little for that. */
static void drain_pmi(int i)
{
    struct timespec until;
    now(&until);
    add_ms(&until, PMI_DRAIN_MS);
    while (J.srv.conn[i].fd >= 0) {
        struct pollfd pfd = { .fd = J.srv.conn[i].fd, .events = POLLIN };
        long left = ms_until(&until);
        if (left <= 0 || poll(&pfd, 1, (int)left) <= 0)
            break;
        if (pmisrv_service(&J.srv, i) == 0)
            break;
    }
}

static int hosts_busy(void)
{
    if (!J.remote)
        return 0;
    for (int h = 0; h < J.hosts.n; h++)
        if (J.hs[h].fd >= 0 || J.hs[h].lpid > 0)
            return 1;
    return 0;
}

/* ---------- proxy mode (mpiexec --proxy, on each host) ---------- */

static void proxy_lost(void)
{
    if (J.ctl_fd < 0)
        return;
    close(J.ctl_fd);
    J.ctl_fd = -1;
    if (J.nrunning > 0) {
        msg("mpiexec proxy on host %s: lost the connection to mpiexec; killing its ranks", J.proxy_host);
        signal_ranks(SIGKILL);
        J.terminating = 1;
        J.kill_sent = 1;
    }
}

static void proxy_ctl_service(void)
{
    int open = ctl_fill(J.ctl_fd, &J.ctl_in);
    char type, *pl;
    size_t n;
    int r;
    while ((r = ctl_next(&J.ctl_in, &type, &pl, &n)) == 1) {
        if (type == 'S' && n > 0 && n < 16) {
            char b[16];
            memcpy(b, pl, n);
            b[n] = '\0';
            int sig = atoi(b);
            if (sig > 0 && sig < NSIG) {
                signal_ranks(sig);
                if (sig == SIGKILL)
                    J.kill_sent = 1;
            }
        }
    }
    if (!open || r < 0)
        proxy_lost();
}

/* Connects to the first address of the list that answers. */
static int proxy_connect(const char *addrs, int port, char *peer, size_t peerlen, char *err, size_t errlen)
{
    char list[1024];
    snprintf(list, sizeof list, "%s", addrs);
    snprintf(err, errlen, "no address given");
    char *save = NULL;
    for (char *a = strtok_r(list, ",", &save); a; a = strtok_r(NULL, ",", &save)) {
        struct sockaddr_in sa;
        memset(&sa, 0, sizeof sa);
        sa.sin_family = AF_INET;
        sa.sin_port = htons((unsigned short)port);
        if (inet_pton(AF_INET, a, &sa.sin_addr) != 1)
            continue;
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
            continue;
        int rc = connect(fd, (struct sockaddr *)&sa, sizeof sa);
        if (rc != 0 && errno == EINPROGRESS) {
            struct pollfd pfd = { .fd = fd, .events = POLLOUT };
            int e = 0;
            socklen_t el = sizeof e;
            if (poll(&pfd, 1, 3000) == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el) == 0 && e == 0)
                rc = 0;
            else
                errno = e ? e : ETIMEDOUT;
        }
        if (rc == 0) {
            int one = 1;
            setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            snprintf(peer, peerlen, "%s", a);
            return fd;
        }
        snprintf(err, errlen, "%s: %s", a, strerror(errno));
        close(fd);
    }
    return -1;
}

static int append_str(char ***v, int *n, const char *s, size_t len)
{
    char **nv = realloc(*v, ((size_t)*n + 2) * sizeof *nv);
    if (!nv)
        return -1;
    *v = nv;
    nv[*n] = strndup(s, len);
    if (!nv[*n])
        return -1;
    nv[++*n] = NULL;
    return 0;
}

static void setup_signals(void);
static void event_loop(void);

static int proxy_spawn(const int *mine, int nmine)
{
    int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
    pid_t me = getpid();
    if (devnull < 0)
        return -1;
    for (int k = 0; k < nmine; k++) {
        int i = mine[k];
        int po[2], pe[2];
        if (pipe2(po, O_CLOEXEC) != 0 || pipe2(pe, O_CLOEXEC) != 0) {
            msg("mpiexec proxy on host %s: pipe: %s", J.proxy_host, strerror(errno));
            return -1;
        }
        pid_t pid = fork();
        if (pid < 0) {
            msg("mpiexec proxy on host %s: fork: %s", J.proxy_host, strerror(errno));
            return -1;
        }
        if (pid == 0)
            exec_rank(i, me, -1, devnull, po[1], pe[1]);
        setpgid(pid, pid);
        J.r[i].pid = pid;
        J.r[i].running = 1;
        J.nrunning++;
        close(po[1]);
        close(pe[1]);
        J.r[i].out[0].fd = po[0];
        J.r[i].out[1].fd = pe[0];
        set_nonblock(po[0]);
        set_nonblock(pe[0]);
        if (J.verbose)
            msg("mpiexec proxy on host %s: rank %d is pid %ld", J.proxy_host, i, (long)pid);
    }
    close(devnull);
    return 0;
}

/* mpiexec --proxy ADDRS PORT INDEX COOKIE HOST */
static int proxy_main(int argc, char **argv)
{
    long port, idx;
    char peer[64], err[300];
    if (argc != 7 || parse_count(argv[3], 1, 65535, &port) != 0 || parse_count(argv[4], 0, INT_MAX, &idx) != 0) {
        msg("mpiexec: --proxy is internal: mpiexec --proxy ADDRS PORT INDEX COOKIE HOST");
        return 2;
    }
    J.proxy = 1;
    J.ctl_fd = -1;
    J.stdin_fwd = -1;
    J.pmi_lfd = J.ctl_lfd = -1;
    snprintf(J.proxy_host, sizeof J.proxy_host, "%s", argv[6]);
    signal(SIGPIPE, SIG_IGN);
    int fd = proxy_connect(argv[2], (int)port, peer, sizeof peer, err, sizeof err);
    if (fd < 0) {
        msg("mpiexec proxy on host %s: cannot connect back to mpiexec (port %ld; tried %s): %s", J.proxy_host, port,
            argv[2], err);
        return 1;
    }
    J.ctl_fd = fd;
    char hello[128];
    int hl = snprintf(hello, sizeof hello, "%s %ld", argv[5], idx);
    if (ctl_send(fd, 'H', hello, (size_t)hl, 10000) != 0) {
        msg("mpiexec proxy on host %s: lost the connection to mpiexec", J.proxy_host);
        return 1;
    }

    /* The job: 'J' parameters, 'R' its ranks, 'A' argv, 'E' environment, 'C' cwd, 'G' go. */
    char **args = NULL, **envs = NULL, *cwd = NULL;
    int nargs = 0, nenv = 0, nmine = 0, go = 0, size = 0, pmiport = 0;
    int *mine = NULL, (*rinfo)[3] = NULL;
    while (!go) {
        struct pollfd pfd = { .fd = fd, .events = POLLIN };
        if (poll(&pfd, 1, 30000) <= 0) {
            msg("mpiexec proxy on host %s: mpiexec sent no job", J.proxy_host);
            return 1;
        }
        int open = ctl_fill(fd, &J.ctl_in);
        char type, *pl;
        size_t n;
        int r;
        while (!go && (r = ctl_next(&J.ctl_in, &type, &pl, &n)) == 1) {
            char rec[512];
            if ((type == 'J' || type == 'R') && n < sizeof rec) {
                memcpy(rec, pl, n);
                rec[n] = '\0';
            }
            if (type == 'J' && n < sizeof rec) {
                if (sscanf(rec, "jobid=%31s size=%d nodes=%d pmiport=%d verbose=%d", J.jobid, &size, &J.nnodes,
                           &pmiport, &J.verbose) != 5 ||
                    size < 1) {
                    msg("mpiexec proxy on host %s: bad job record", J.proxy_host);
                    return 1;
                }
            } else if (type == 'R' && n < sizeof rec) {
                int v[4];
                if (sscanf(rec, "%d %d %d %d", &v[0], &v[1], &v[2], &v[3]) != 4 || v[0] < 0 || v[0] >= size)
                    continue;
                int *nm = realloc(mine, ((size_t)nmine + 1) * sizeof *nm);
                int(*ni)[3] = realloc(rinfo, ((size_t)nmine + 1) * sizeof *ni);
                if (nm)
                    mine = nm;
                if (ni)
                    rinfo = ni;
                if (!nm || !ni)
                    return 1;
                mine[nmine] = v[0];
                rinfo[nmine][0] = v[1];
                rinfo[nmine][1] = v[2];
                rinfo[nmine][2] = v[3];
                nmine++;
            } else if (type == 'A') {
                if (append_str(&args, &nargs, pl, n) != 0)
                    return 1;
            } else if (type == 'E') {
                if (append_str(&envs, &nenv, pl, n) != 0)
                    return 1;
            } else if (type == 'C') {
                free(cwd);
                cwd = strndup(pl, n);
            } else if (type == 'G') {
                go = 1;
            }
        }
        if (!go && (!open || r < 0)) {
            msg("mpiexec proxy on host %s: lost the connection to mpiexec before the job started", J.proxy_host);
            return 1;
        }
    }
    if (size < 1 || nargs < 1) {
        msg("mpiexec proxy on host %s: incomplete job", J.proxy_host);
        return 1;
    }
    J.n = size;
    J.argv = args;
    J.node_of = calloc((size_t)size, sizeof *J.node_of);
    J.lrank = calloc((size_t)size, sizeof *J.lrank);
    J.lsize = calloc((size_t)size, sizeof *J.lsize);
    J.r = calloc((size_t)size, sizeof *J.r);
    if (!J.node_of || !J.lrank || !J.lsize || !J.r)
        return 1;
    for (int k = 0; k < size; k++) {
        J.r[k].out[0].fd = J.r[k].out[1].fd = -1;
        J.r[k].out[0].dest = 1;
        J.r[k].out[1].dest = 2;
    }
    for (int k = 0; k < nmine; k++) {
        J.node_of[mine[k]] = rinfo[k][0];
        J.lrank[mine[k]] = rinfo[k][1];
        J.lsize[mine[k]] = rinfo[k][2];
    }
    snprintf(J.pmi_addr, sizeof J.pmi_addr, "%s:%d", peer, pmiport);
    /* The ranks get mpiexec's environment and working directory. */
    clearenv();
    for (int k = 0; k < nenv; k++)
        putenv(envs[k]); /* the strings now belong to the environment; the array does not */
    free(envs);
    if (cwd && *cwd && chdir(cwd) != 0)
        msg("mpiexec proxy on host %s: cannot change to directory %s: %s", J.proxy_host, cwd, strerror(errno));

    setup_signals();
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    if (proxy_spawn(mine, nmine) != 0) {
        signal_ranks(SIGKILL);
        J.kill_sent = 1;
    }
    event_loop();
    for (int k = 0; k < nmine; k++)
        if (J.r[mine[k]].pid > 0)
            kill(-J.r[mine[k]].pid, SIGKILL);
    kill_descendants();
    for (int k = 0; k < nmine; k++)
        for (int s = 0; s < 2; s++)
            if (J.r[mine[k]].out[s].fd >= 0)
                close_stream(mine[k], &J.r[mine[k]].out[s]);
    cleanup_shm();
    if (J.ctl_fd >= 0 && ctl_send(J.ctl_fd, 'D', "", 0, 5000) == 0) {
        /* Wait (a little) for mpiexec to close first, so that nothing is lost in flight. */
        shutdown(J.ctl_fd, SHUT_WR);
        struct timespec until;
        now(&until);
        add_ms(&until, 2000);
        for (;;) {
            struct pollfd pfd = { .fd = J.ctl_fd, .events = POLLIN };
            long left = ms_until(&until);
            char sink[4096];
            if (left <= 0 || poll(&pfd, 1, (int)left) <= 0)
                break;
            ssize_t r = recv(J.ctl_fd, sink, sizeof sink, 0);
            if (r == 0 || (r < 0 && errno != EINTR && errno != EAGAIN))
                break;
        }
    }
    if (J.ctl_fd >= 0)
        close(J.ctl_fd);
    free(mine);
    free(rinfo);
    free(cwd);
    return 0;
}

/* ---------- main loop ---------- */

static int any_stream_open(void)
{
    for (int i = 0; i < J.n; i++)
        if (J.r[i].out[0].fd >= 0 || J.r[i].out[1].fd >= 0)
            return 1;
    return hosts_busy();
}

enum { P_SIG, P_STDIN, P_STDINFWD, P_PMI, P_OUT, P_LISTEN, P_PENDING, P_HOST, P_CTL };

static void min_timeout(long *timeout, long ms)
{
    if (*timeout < 0 || ms < *timeout)
        *timeout = ms;
}

static void event_loop(void)
{
    size_t cap = 0;
    struct pollfd *pfd = NULL;
    int *kind = NULL, *who = NULL, *what = NULL;
    struct timespec deadline, drain_until;
    int have_deadline = J.timeout > 0, draining = 0, force_set = 0;
    if (have_deadline) {
        now(&deadline);
        add_ms(&deadline, (long)(J.timeout * 1000.0));
    }
    for (;;) {
        if (J.nrunning == 0) {
            if (!draining) {
                draining = 1;
                now(&drain_until);
                add_ms(&drain_until, DRAIN_MS);
            }
            if (!any_stream_open() || ms_until(&drain_until) == 0)
                break;
        }
        size_t need = (size_t)J.n * 3 + 8 + (size_t)J.npend + (J.remote ? (size_t)J.hosts.n : 0);
        if (need > cap) {
            struct pollfd *np = realloc(pfd, need * sizeof *pfd);
            int *nk = realloc(kind, need * sizeof *kind);
            int *nw = realloc(who, need * sizeof *who);
            int *nt = realloc(what, need * sizeof *what);
            if (np)
                pfd = np;
            if (nk)
                kind = nk;
            if (nw)
                who = nw;
            if (nt)
                what = nt;
            if (!np || !nk || !nw || !nt) {
                msg("mpiexec: out of memory");
                exit(1);
            }
            cap = need;
        }
        size_t n = 0;
#define ADD(FD, EV, K, W, T)                                                                                           \
    do {                                                                                                               \
        pfd[n] = (struct pollfd){ .fd = (FD), .events = (EV) };                                                        \
        kind[n] = (K);                                                                                                 \
        who[n] = (W);                                                                                                  \
        what[n++] = (T);                                                                                               \
    } while (0)
        ADD(sigpipe_fds[0], POLLIN, P_SIG, 0, 0);
        if (J.stdin_fwd >= 0 && J.stdin_open) {
            if (J.inlen == 0)
                ADD(0, POLLIN, P_STDIN, 0, 0);
            else
                ADD(J.stdin_fwd, POLLOUT, P_STDINFWD, 0, 0);
        }
        for (int i = 0; i < J.n; i++) {
            if (J.srv.conn && J.srv.conn[i].fd >= 0)
                ADD(J.srv.conn[i].fd, POLLIN, P_PMI, i, 0);
            for (int k = 0; k < 2; k++)
                if (J.r[i].out[k].fd >= 0)
                    ADD(J.r[i].out[k].fd, POLLIN, P_OUT, i, k);
        }
        if (J.remote) {
            ADD(J.pmi_lfd, POLLIN, P_LISTEN, 1, 0);
            ADD(J.ctl_lfd, POLLIN, P_LISTEN, 0, 0);
            for (int k = 0; k < J.npend; k++)
                ADD(J.pend[k].fd, POLLIN, P_PENDING, J.pend[k].fd, 0);
            for (int h = 0; h < J.hosts.n; h++)
                if (J.hs[h].fd >= 0)
                    ADD(J.hs[h].fd, POLLIN, P_HOST, h, 0);
        }
        if (J.proxy && J.ctl_fd >= 0)
            ADD(J.ctl_fd, POLLIN, P_CTL, 0, 0);
#undef ADD
        long timeout = -1;
        if (have_deadline && !J.cause_set)
            timeout = ms_until(&deadline);
        if (J.terminating && !J.kill_sent)
            min_timeout(&timeout, ms_until(&J.kill_at));
        if (draining)
            min_timeout(&timeout, ms_until(&drain_until));
        if (J.remote) {
            if (!J.terminating)
                min_timeout(&timeout, ms_until(&J.connect_until));
            for (int k = 0; k < J.npend; k++)
                min_timeout(&timeout, ms_until(&J.pend[k].until));
            if (force_set)
                min_timeout(&timeout, ms_until(&J.force_at));
            /* Launcher children are reaped on SIGCHLD; a short cap covers a lost wake-up. */
            min_timeout(&timeout, 1000);
        }
        int r = poll(pfd, n, timeout > INT_MAX ? INT_MAX : (int)timeout);
        if (r < 0 && errno != EINTR) {
            msg("mpiexec: poll: %s", strerror(errno));
            job_fail(1, "internal error");
        }
        for (size_t k = 0; r > 0 && k < n; k++) {
            if (!pfd[k].revents)
                continue;
            switch (kind[k]) {
            case P_SIG: {
                unsigned char sigs[64];
                ssize_t got = read(sigpipe_fds[0], sigs, sizeof sigs);
                for (ssize_t s = 0; s < got; s++)
                    handle_signal(sigs[s]);
                break;
            }
            case P_STDIN: stdin_read(); break;
            case P_STDINFWD: stdin_write(); break;
            case P_PMI: {
                int i = who[k];
                if (J.srv.conn[i].fd == pfd[k].fd) {
                    pmisrv_service(&J.srv, i);
                    if (J.srv.abort_rank >= 0 && !J.cause_set)
                        job_fail(J.srv.abort_code, "rank %d called abort with exit code %d%s%s", J.srv.abort_rank,
                                 J.srv.abort_code, J.srv.abort_msg[0] ? ": " : "", J.srv.abort_msg);
                }
                break;
            }
            case P_OUT: {
                struct outstream *o = &J.r[who[k]].out[what[k]];
                if (o->fd == pfd[k].fd)
                    read_stream(who[k], o);
                break;
            }
            case P_LISTEN: accept_conns(pfd[k].fd, who[k]); break;
            case P_PENDING: pending_service(who[k]); break;
            case P_HOST:
                if (J.hs[who[k]].fd == pfd[k].fd)
                    host_service(who[k]);
                break;
            case P_CTL:
                if (J.ctl_fd == pfd[k].fd)
                    proxy_ctl_service();
                break;
            }
        }
        reap();
        if (J.remote) {
            for (int k = 0; k < J.npend;)
                if (ms_until(&J.pend[k].until) == 0)
                    pending_drop(k, 1);
                else
                    k++;
            if (!J.terminating && ms_until(&J.connect_until) == 0)
                for (int h = 0; h < J.hosts.n; h++)
                    if (J.hosts.h[h].nranks > 0 && !J.hs[h].connected && !J.terminating)
                        job_fail(1,
                                 "host %s: its proxy did not connect within %d s (started by %s); terminating the job",
                                 J.hosts.h[h].name, CONNECT_MS / 1000, launcher_desc(h));
        }
        if (have_deadline && !J.cause_set && ms_until(&deadline) == 0)
            job_fail(124, "timeout: job did not finish within %g s; terminating it", J.timeout);
        if (J.terminating && !J.kill_sent && ms_until(&J.kill_at) == 0) {
            if (J.nrunning > 0) {
                for (int i = 0; i < J.n; i++)
                    if (J.r[i].running && J.verbose)
                        msg("mpiexec: rank %d did not stop; sending SIGKILL", i);
                signal_ranks(SIGKILL);
            }
            J.kill_sent = 1;
        }
        if (J.remote && J.kill_sent) {
            if (!force_set) {
                force_set = 1;
                now(&J.force_at);
                add_ms(&J.force_at, FORCE_MS);
            } else if (J.nrunning > 0 && ms_until(&J.force_at) == 0) {
                for (int h = 0; h < J.hosts.n; h++)
                    if (J.hs[h].nrunning > 0) {
                        msg("mpiexec: host %s: its proxy did not report its ranks' end; giving up on them",
                            J.hosts.h[h].name);
                        host_abandon(h);
                        if (J.hs[h].lpid > 0)
                            kill(-J.hs[h].lpid, SIGKILL);
                    }
            }
        }
    }
    free(pfd);
    free(kind);
    free(who);
    free(what);
}

static void setup_signals(void)
{
    /* Signals arrive through a pipe, handled in the loop. */
    if (pipe2(sigpipe_fds, O_CLOEXEC | O_NONBLOCK) != 0) {
        msg("mpiexec: pipe: %s", strerror(errno));
        exit(1);
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(SIGCHLD, &sa, NULL);
    for (size_t k = 0; k < sizeof fwd_term_signals / sizeof fwd_term_signals[0]; k++)
        sigaction(fwd_term_signals[k], &sa, NULL);
    for (size_t k = 0; k < sizeof fwd_plain_signals / sizeof fwd_plain_signals[0]; k++)
        sigaction(fwd_plain_signals[k], &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    signal(SIGTTIN, SIG_IGN);
    signal(SIGTTOU, SIG_IGN);
}

static int all_hosts_local(void)
{
    for (int h = 0; h < J.hosts.n; h++)
        if (!host_is_local(J.hosts.h[h].name))
            return 0;
    return 1;
}

/* Splits --launcher-exec in words (spaces and tabs; no quoting). */
static char **split_words(const char *s)
{
    char *copy = strdup(s);
    char **v = calloc(33, sizeof *v);
    int n = 0;
    if (!copy || !v)
        return NULL;
    char *save = NULL;
    for (char *w = strtok_r(copy, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
        if (n == 32)
            return NULL;
        v[n++] = w;
    }
    if (n == 0)
        return NULL;
    return v;
}

int main(int argc, char **argv)
{
    long n = -1, ppn = 0;
    int i;
    int launcher = -1;
    const char *iface = getenv("MPIEXEC_IFACE");
    char err[PATH_MAX + 256];
    memset(&J, 0, sizeof J);
    J.stdin_fwd = -1;
    J.pmi_lfd = J.ctl_lfd = J.ctl_fd = -1;

    if (argc > 1 && strcmp(argv[1], "--proxy") == 0)
        return proxy_main(argc, argv);

    const char *env_ppn = getenv("APTUS_PPN");
    if (env_ppn && *env_ppn && parse_count(env_ppn, 1, INT_MAX, &ppn) != 0) {
        msg("mpiexec: APTUS_PPN='%s' is not a positive number", env_ppn);
        return 2;
    }
    const char *env_to = getenv("MPIEXEC_TIMEOUT");
    if (env_to && *env_to && parse_seconds(env_to, &J.timeout) != 0) {
        msg("mpiexec: MPIEXEC_TIMEOUT='%s' is not a positive number of seconds", env_to);
        return 2;
    }
    if (iface && !*iface)
        iface = NULL;

    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (a[0] != '-')
            break;
        if (strcmp(a, "--") == 0) {
            i++;
            break;
        }
        /* Accept --opt and -opt alike, and --opt=value. */
        char name[64];
        const char *val = NULL;
        const char *s = a + 1;
        if (*s == '-')
            s++;
        const char *eq = strchr(s, '=');
        size_t nl = eq ? (size_t)(eq - s) : strlen(s);
        if (nl >= sizeof name) {
            msg("mpiexec: unknown option '%s' (see mpiexec --help)", a);
            return 2;
        }
        memcpy(name, s, nl);
        name[nl] = '\0';
        if (eq)
            val = eq + 1;
#define NEEDVAL()                                                                                                      \
    do {                                                                                                               \
        if (!val) {                                                                                                    \
            if (i + 1 >= argc) {                                                                                       \
                msg("mpiexec: option '%s' needs a value", a);                                                          \
                return 2;                                                                                              \
            }                                                                                                          \
            val = argv[++i];                                                                                           \
        }                                                                                                              \
    } while (0)
        if (!strcmp(name, "h") || !strcmp(name, "help")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(name, "n") || !strcmp(name, "np")) {
            NEEDVAL();
            if (parse_count(val, 1, 1 << 20, &n) != 0) {
                msg("mpiexec: -n needs a number of processes >= 1, got '%s'", val);
                return 2;
            }
        } else if (!strcmp(name, "ppn")) {
            NEEDVAL();
            if (parse_count(val, 1, INT_MAX, &ppn) != 0) {
                msg("mpiexec: --ppn needs a number >= 1, got '%s'", val);
                return 2;
            }
        } else if (!strcmp(name, "hosts") || !strcmp(name, "host")) {
            NEEDVAL();
            if (hosts_add_list(&J.hosts, val, err, sizeof err) != 0) {
                msg("mpiexec: %s", err);
                return 2;
            }
        } else if (!strcmp(name, "f") || !strcmp(name, "hostfile")) {
            NEEDVAL();
            if (hosts_read_file(&J.hosts, val, err, sizeof err) != 0) {
                msg("mpiexec: %s", err);
                return 2;
            }
        } else if (!strcmp(name, "launcher")) {
            NEEDVAL();
            launcher = -1;
            for (int k = 0; k < 3; k++)
                if (!strcmp(val, launcher_names[k]))
                    launcher = k;
            if (launcher < 0) {
                msg("mpiexec: unknown launcher '%s' (expected fork, ssh or netns)", val);
                return 2;
            }
        } else if (!strcmp(name, "launcher-exec")) {
            NEEDVAL();
            J.lexec = split_words(val);
            if (!J.lexec) {
                msg("mpiexec: --launcher-exec needs a command (at most 32 words), got '%s'", val);
                return 2;
            }
        } else if (!strcmp(name, "iface")) {
            NEEDVAL();
            iface = val;
        } else if (!strcmp(name, "l") || !strcmp(name, "prefix")) {
            J.prefix = 1;
        } else if (!strcmp(name, "timeout")) {
            NEEDVAL();
            if (parse_seconds(val, &J.timeout) != 0) {
                msg("mpiexec: --timeout needs a positive number of seconds, got '%s'", val);
                return 2;
            }
        } else if (!strcmp(name, "v") || !strcmp(name, "verbose")) {
            J.verbose = 1;
        } else {
            msg("mpiexec: unknown option '%s' (see mpiexec --help)", a);
            return 2;
        }
#undef NEEDVAL
    }
    if (n < 0) {
        msg("mpiexec: missing -n N (number of processes); see mpiexec --help");
        return 2;
    }
    if (i >= argc) {
        msg("mpiexec: no program given; see mpiexec --help");
        return 2;
    }
    if (J.lexec && launcher >= 0 && launcher != LAUNCH_SSH) {
        msg("mpiexec: --launcher-exec goes with the ssh launcher, not '%s'", launcher_names[launcher]);
        return 2;
    }
    if (J.hosts.n == 0 && (launcher == LAUNCH_SSH || launcher == LAUNCH_NETNS || J.lexec)) {
        msg("mpiexec: the %s launcher needs hosts (--hosts or -f)", J.lexec ? "ssh" : launcher_names[launcher]);
        return 2;
    }
    if (launcher < 0)
        launcher = J.lexec ? LAUNCH_SSH : (J.hosts.n > 0 && !all_hosts_local()) ? LAUNCH_SSH : LAUNCH_FORK;
    J.launcher = launcher;
    J.n = (int)n;
    J.ppn = (int)ppn;
    J.argv = argv + i;
    if (launcher != LAUNCH_SSH) {
        int rc = check_program(J.argv[0], err, sizeof err);
        if (rc) {
            msg("mpiexec: %s", err);
            return rc;
        }
    }

    /* Placement: node_of, local ranks and sizes, PMI_process_mapping. */
    J.node_of = malloc((size_t)J.n * sizeof *J.node_of);
    J.lrank = malloc((size_t)J.n * sizeof *J.lrank);
    J.lsize = malloc((size_t)J.n * sizeof *J.lsize);
    J.host_of = malloc((size_t)J.n * sizeof *J.host_of);
    J.r = calloc((size_t)J.n, sizeof *J.r);
    if (!J.node_of || !J.lrank || !J.lsize || !J.host_of || !J.r) {
        msg("mpiexec: out of memory");
        return 1;
    }
    if (J.hosts.n > 0) {
        J.nnodes = hosts_place(&J.hosts, J.n, J.ppn, J.host_of, J.node_of);
    } else {
        for (int k = 0; k < J.n; k++)
            J.node_of[k] = J.ppn > 0 ? k / J.ppn : 0;
        J.nnodes = J.node_of[J.n - 1] + 1;
    }
    {
        int *count = calloc((size_t)J.nnodes, sizeof *count);
        if (!count) {
            msg("mpiexec: out of memory");
            return 1;
        }
        for (int k = 0; k < J.n; k++)
            J.lrank[k] = count[J.node_of[k]]++;
        for (int k = 0; k < J.n; k++)
            J.lsize[k] = count[J.node_of[k]];
        free(count);
    }
    J.mapping = mapping_encode(J.node_of, J.n);
    if (!J.mapping) {
        msg("mpiexec: out of memory");
        return 1;
    }
    for (int k = 0; k < J.n; k++) {
        J.r[k].out[0].fd = J.r[k].out[1].fd = -1;
        J.r[k].out[0].dest = 1;
        J.r[k].out[1].dest = 2;
    }
    if (J.verbose) {
        msg("mpiexec: launcher %s, %d node(s), PMI_process_mapping %s", launcher_names[launcher], J.nnodes, J.mapping);
        for (int k = 0; k < J.n && J.hosts.n > 0; k++)
            msg("mpiexec: rank %d on host %s (node %d)", k, J.hosts.h[J.host_of[k]].name, J.node_of[k]);
    }
    make_jobid();

    if (launcher != LAUNCH_FORK) {
        J.remote = 1;
        if (launcher == LAUNCH_NETNS)
            for (int h = 0; h < J.hosts.n; h++) {
                char path[PATH_MAX];
                struct stat st;
                snprintf(path, sizeof path, "/run/netns/%s", J.hosts.h[h].name);
                if (J.hosts.h[h].nranks > 0 && stat(path, &st) != 0) {
                    msg("mpiexec: host %s: no network namespace named '%s' (see 'ip netns list')", J.hosts.h[h].name,
                        J.hosts.h[h].name);
                    return 1;
                }
            }
        ssize_t sl = readlink("/proc/self/exe", self_exe, sizeof self_exe - 1);
        if (sl <= 0) {
            msg("mpiexec: cannot find its own path (/proc/self/exe): %s", strerror(errno));
            return 1;
        }
        self_exe[sl] = '\0';
        if (!getcwd(J.cwd, sizeof J.cwd))
            snprintf(J.cwd, sizeof J.cwd, "/");
        make_cookie();
        if (setup_listeners(iface, launcher == LAUNCH_SSH && all_hosts_local(), err, sizeof err) != 0) {
            msg("mpiexec: %s", err);
            return iface ? 2 : 1;
        }
        int *fds = malloc((size_t)J.n * sizeof *fds);
        J.hs = calloc((size_t)J.hosts.n, sizeof *J.hs);
        if (!fds || !J.hs) {
            msg("mpiexec: out of memory");
            return 1;
        }
        for (int k = 0; k < J.n; k++)
            fds[k] = -1;
        if (pmisrv_init(&J.srv, J.n, fds, J.jobid, J.mapping, J.node_of) != 0) {
            msg("mpiexec: out of memory");
            return 1;
        }
        free(fds);
        J.srv.verbose = J.verbose;
        for (int h = 0; h < J.hosts.n; h++) {
            J.hs[h].fd = -1;
            J.hs[h].nrunning = J.hosts.h[h].nranks;
        }
        for (int k = 0; k < J.n; k++)
            J.r[k].running = 1;
        J.nrunning = J.n;
    }

    setup_signals();
    /* Orphaned descendants of the ranks are re-parented to us, so we can kill them. */
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    start_watchdog();

    if (J.remote) {
        now(&J.connect_until);
        add_ms(&J.connect_until, CONNECT_MS);
        for (int h = 0; h < J.hosts.n && !J.terminating; h++)
            if (J.hosts.h[h].nranks > 0 && launch_host(h) != 0) {
                host_abandon(h);
                job_fail(1, "host %s: cannot start %s; terminating the job", J.hosts.h[h].name, launcher_desc(h));
            }
        event_loop();
    } else if (spawn_all() != 0) {
        J.cause_set = 1;
        J.exit_code = 1;
        signal_ranks(SIGKILL);
        for (int k = 0; k < J.n; k++)
            if (J.r[k].pid > 0 && J.r[k].running) {
                waitpid(J.r[k].pid, &J.r[k].status, 0);
                J.r[k].running = 0;
            }
    } else {
        event_loop();
    }

    /* No orphans: kill anything left in the ranks' groups or adopted by us. */
    stop_watchdog();
    for (int k = 0; k < J.n; k++)
        if (J.r[k].pid > 0)
            kill(-J.r[k].pid, SIGKILL);
    if (J.remote) {
        /* Proxies still connected see the connection close and kill their ranks. */
        for (int h = 0; h < J.hosts.n; h++) {
            if (J.hs[h].fd >= 0)
                close(J.hs[h].fd);
            J.hs[h].fd = -1;
            if (J.hs[h].lpid > 0)
                kill(-J.hs[h].lpid, SIGKILL);
        }
        while (J.npend > 0)
            pending_drop(0, 1);
        close(J.pmi_lfd);
        close(J.ctl_lfd);
    }
    kill_descendants();
    for (int k = 0; k < J.n; k++)
        for (int s = 0; s < 2; s++)
            if (J.r[k].out[s].fd >= 0)
                close_stream(k, &J.r[k].out[s]);
    cleanup_shm();

    int code = 0;
    if (J.cause_set) {
        code = J.exit_code;
    } else {
        for (int k = 0; k < J.n && code == 0; k++) {
            int st = J.r[k].status;
            if (WIFSIGNALED(st))
                code = 128 + WTERMSIG(st);
            else if (WIFEXITED(st))
                code = WEXITSTATUS(st);
        }
    }
    pmisrv_destroy(&J.srv);
    free(J.mapping);
    hosts_free(&J.hosts);
    return code;
}
