/* mpiexec: starts N local processes and serves them PMI-2 (see pmiserv.c).
 *
 *   mpiexec -n N [--ppn K] [--prefix|-l] [--timeout S] [--verbose] prog args...
 *
 * Every rank runs in its own process group with PR_SET_PDEATHSIG=SIGKILL; mpiexec is a child
 * subreaper, so descendants that lose their parent come back to it and are killed at the end.
 * Output of each rank goes through pipes and is written whole lines at a time. */
#include "pmiserv.h"

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

struct outstream {
    int fd;   /* read end, -1 when closed */
    int dest; /* 1 or 2 */
    char *buf;
    size_t len, cap;
    int midline; /* a piece of the current line was already written */
};

struct rankproc {
    pid_t pid;
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
               "Starts N processes of program on this machine, wired up through PMI-2.\n"
               "\n"
               "Options:\n"
               "  -n N, -np N        number of processes (required, N >= 1)\n"
               "  --ppn K            simulate nodes: ranks in blocks of K per node (0..K-1 on node 0,\n"
               "                     ...); default all ranks on node 0; env APTUS_PPN\n"
               "  -l, --prefix       prefix every output line with \"[rank] \"\n"
               "  --timeout S        kill the job after S seconds and exit 124;\n"
               "                     env MPIEXEC_TIMEOUT\n"
               "  -v, --verbose      trace PMI traffic and process events\n"
               "  -h, --help         this text\n"
               "\n"
               "Exit status: 0 when every rank exits 0; the code given to MPI_Abort; a failing rank's\n"
               "exit code, or 128+signal if it was killed by a signal; 124 on timeout.\n"
               "Each rank gets PMI_FD, PMI_RANK, PMI_SIZE, PMI_JOBID, APTUS_NODE_ID, APTUS_LOCAL_RANK\n"
               "and APTUS_LOCAL_SIZE. mpirun is the same program.\n");
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

static void signal_ranks(int sig)
{
    for (int i = 0; i < J.n; i++)
        if (J.r[i].pid > 0 && J.r[i].running)
            kill(-J.r[i].pid, sig);
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
static void emit(int rank, struct outstream *o, const char *data, size_t n, int complete)
{
    static char *tmp;
    static size_t tmpcap;
    char pfx[24] = "";
    size_t pl = 0;
    if (J.prefix && !o->midline)
        pl = (size_t)snprintf(pfx, sizeof pfx, "[%d] ", rank);
    size_t need = pl + n + 1;
    if (need > tmpcap) {
        char *t = realloc(tmp, need);
        if (!t) {
            write_out(o->dest, pfx, pl);
            write_out(o->dest, data, n);
            o->midline = !complete;
            return;
        }
        tmp = t;
        tmpcap = need;
    }
    memcpy(tmp, pfx, pl);
    memcpy(tmp + pl, data, n);
    write_out(o->dest, tmp, pl + n);
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
    /* A non-close-on-exec copy of the PMI socket for the program. */
    int fd = fcntl(pmi_fd, F_DUPFD, 3);
    if (fd < 0)
        child_fail("dup(PMI socket)");

    int ppn = J.ppn > 0 ? J.ppn : J.n;
    int node = J.node_of[rank];
    int local_size = ppn;
    if ((node + 1) * ppn > J.n)
        local_size = J.n - node * ppn;
    setenv_int("PMI_FD", fd);
    setenv_int("PMI_RANK", rank);
    setenv_int("PMI_SIZE", J.n);
    setenv("PMI_JOBID", J.jobid, 1);
    unsetenv("PMI_ID");
    unsetenv("PMI_PORT");
    setenv_int("APTUS_NODE_ID", node);
    setenv_int("APTUS_LOCAL_RANK", rank - node * ppn);
    setenv_int("APTUS_LOCAL_SIZE", local_size);
    setenv_int("APTUS_NUM_NODES", J.node_of[J.n - 1] + 1);

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
static void rank_ended(int i, int status)
{
    struct rankproc *rp = &J.r[i];
    rp->running = 0;
    rp->status = status;
    J.nrunning--;
    /* Whatever it sent before dying (an abort, a finalize) counts first. */
    pmisrv_service(&J.srv, i);
    if (J.srv.abort_rank >= 0 && !J.cause_set) {
        job_fail(J.srv.abort_code, "rank %d called abort with exit code %d%s%s", J.srv.abort_rank, J.srv.abort_code,
                 J.srv.abort_msg[0] ? ": " : "", J.srv.abort_msg);
    }
    pmisrv_close(&J.srv, i);
    /* Leftovers in its process group (background children) go with it. */
    kill(-rp->pid, SIGKILL);

    int finalized = J.srv.conn[i].finalized;
    int initialized = J.srv.conn[i].initialized;
    if (J.verbose)
        msg("mpiexec: rank %d (pid %ld) ended, status 0x%x", i, (long)rp->pid, status);
    if (J.terminating)
        return;
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        if (!finalized)
            job_fail(128 + sig, "rank %d (pid %ld) was killed by signal %d (%s); terminating the job", i, (long)rp->pid,
                     sig, strsignal(sig));
        else
            msg("mpiexec: rank %d (pid %ld) was killed by signal %d (%s) after finalize", i, (long)rp->pid, sig,
                strsignal(sig));
    } else if (WIFEXITED(status)) {
        int code = WEXITSTATUS(status);
        if (code != 0 && !finalized)
            job_fail(code, "rank %d (pid %ld) exited with code %d before finalize; terminating the job", i,
                     (long)rp->pid, code);
        else if (code != 0)
            msg("mpiexec: rank %d (pid %ld) exited with code %d after finalize", i, (long)rp->pid, code);
        else if (initialized && !finalized)
            job_fail(1, "rank %d (pid %ld) exited without calling finalize; terminating the job", i, (long)rp->pid);
    }
}

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

static char *make_mapping(void)
{
    /* (vector,(first_node,node_count,ranks_per_node),...) */
    char *m = malloc(128);
    if (!m)
        return NULL;
    int ppn = J.ppn > 0 ? J.ppn : J.n;
    int full = J.n / ppn, rest = J.n % ppn;
    if (rest == 0)
        snprintf(m, 128, "(vector,(0,%d,%d))", full, ppn);
    else if (full == 0)
        snprintf(m, 128, "(vector,(0,1,%d))", rest);
    else
        snprintf(m, 128, "(vector,(0,%d,%d),(%d,1,%d))", full, ppn, full, rest);
    return m;
}

/* ---------- main loop ---------- */

static int any_stream_open(void)
{
    for (int i = 0; i < J.n; i++)
        if (J.r[i].out[0].fd >= 0 || J.r[i].out[1].fd >= 0)
            return 1;
    return 0;
}

static void event_loop(void)
{
    size_t cap = (size_t)J.n * 3 + 4;
    struct pollfd *pfd = malloc(cap * sizeof *pfd);
    int *who = malloc(cap * sizeof *who);   /* rank, or -1 signal pipe, -2 stdin, -3 stdin fwd */
    int *what = malloc(cap * sizeof *what); /* 0 pmi, 1 stdout, 2 stderr */
    struct timespec deadline, drain_until;
    int have_deadline = J.timeout > 0, draining = 0;
    if (!pfd || !who || !what) {
        msg("mpiexec: out of memory");
        exit(1);
    }
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
        size_t n = 0;
        pfd[n] = (struct pollfd){ .fd = sigpipe_fds[0], .events = POLLIN };
        who[n++] = -1;
        if (J.stdin_fwd >= 0 && J.stdin_open) {
            if (J.inlen == 0) {
                pfd[n] = (struct pollfd){ .fd = 0, .events = POLLIN };
                who[n++] = -2;
            } else {
                pfd[n] = (struct pollfd){ .fd = J.stdin_fwd, .events = POLLOUT };
                who[n++] = -3;
            }
        }
        for (int i = 0; i < J.n; i++) {
            if (J.srv.conn[i].fd >= 0) {
                pfd[n] = (struct pollfd){ .fd = J.srv.conn[i].fd, .events = POLLIN };
                who[n] = i;
                what[n++] = 0;
            }
            for (int k = 0; k < 2; k++)
                if (J.r[i].out[k].fd >= 0) {
                    pfd[n] = (struct pollfd){ .fd = J.r[i].out[k].fd, .events = POLLIN };
                    who[n] = i;
                    what[n++] = k + 1;
                }
        }
        long timeout = -1;
        if (have_deadline && !J.cause_set)
            timeout = ms_until(&deadline);
        if (J.terminating && !J.kill_sent) {
            long k = ms_until(&J.kill_at);
            if (timeout < 0 || k < timeout)
                timeout = k;
        }
        if (draining) {
            long d = ms_until(&drain_until);
            if (timeout < 0 || d < timeout)
                timeout = d;
        }
        int r = poll(pfd, n, timeout > INT_MAX ? INT_MAX : (int)timeout);
        if (r < 0 && errno != EINTR) {
            msg("mpiexec: poll: %s", strerror(errno));
            job_fail(1, "internal error");
        }
        for (size_t k = 0; r > 0 && k < n; k++) {
            if (!pfd[k].revents)
                continue;
            if (who[k] == -1) {
                unsigned char sigs[64];
                ssize_t got = read(sigpipe_fds[0], sigs, sizeof sigs);
                for (ssize_t s = 0; s < got; s++)
                    handle_signal(sigs[s]);
            } else if (who[k] == -2) {
                stdin_read();
            } else if (who[k] == -3) {
                stdin_write();
            } else if (what[k] == 0) {
                int i = who[k];
                if (J.srv.conn[i].fd == pfd[k].fd) {
                    pmisrv_service(&J.srv, i);
                    if (J.srv.abort_rank >= 0 && !J.cause_set)
                        job_fail(J.srv.abort_code, "rank %d called abort with exit code %d%s%s", J.srv.abort_rank,
                                 J.srv.abort_code, J.srv.abort_msg[0] ? ": " : "", J.srv.abort_msg);
                }
            } else {
                struct outstream *o = &J.r[who[k]].out[what[k] - 1];
                if (o->fd == pfd[k].fd)
                    read_stream(who[k], o);
            }
        }
        reap();
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
    }
    free(pfd);
    free(who);
    free(what);
}

int main(int argc, char **argv)
{
    long n = -1, ppn = 0;
    int i;
    memset(&J, 0, sizeof J);
    J.stdin_fwd = -1;

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
    J.n = (int)n;
    J.ppn = (int)ppn;
    J.argv = argv + i;
    {
        char err[PATH_MAX + 128];
        int rc = check_program(J.argv[0], err, sizeof err);
        if (rc) {
            msg("mpiexec: %s", err);
            return rc;
        }
    }

    make_jobid();
    J.node_of = malloc((size_t)J.n * sizeof *J.node_of);
    J.r = calloc((size_t)J.n, sizeof *J.r);
    J.mapping = make_mapping();
    if (!J.node_of || !J.r || !J.mapping) {
        msg("mpiexec: out of memory");
        return 1;
    }
    for (int k = 0; k < J.n; k++) {
        J.node_of[k] = J.ppn > 0 ? k / J.ppn : 0;
        J.r[k].out[0].fd = J.r[k].out[1].fd = -1;
    }

    /* Signals arrive through a pipe, handled in the loop. */
    if (pipe2(sigpipe_fds, O_CLOEXEC | O_NONBLOCK) != 0) {
        msg("mpiexec: pipe: %s", strerror(errno));
        return 1;
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
    /* Orphaned descendants of the ranks are re-parented to us, so we can kill them. */
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    start_watchdog();

    if (spawn_all() != 0) {
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
    return code;
}
