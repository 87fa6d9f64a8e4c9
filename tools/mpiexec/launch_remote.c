/* The ssh and netns launchers, mpiexec's side: one proxy per host (proxy.c) started through ssh
 * (or --launcher-exec) or `ip netns exec`, which connects back over the control connection (ctl.h)
 * and gets the job; the ranks connect to the PMI port over TCP and say who they are. */
#include "mpiexec.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char self_exe[PATH_MAX];

int host_is_local(const char *name)
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

const char *launcher_desc(int h)
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
int launch_host(int h)
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
void host_abandon(int h)
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

void host_send_signal(int h, int sig)
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
    n = snprintf(rec, sizeof rec, "bind=%d overload=%d map=%d cpr=%d report=%d launcher=%d", J.bind, J.bind_overload,
                 J.map, J.cpus_per_rank, J.report_bindings, J.launcher);
    ok = ok && ctl_send(hs->fd, 'B', rec, (size_t)n, 10000) == 0;
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

void accept_conns(int lfd, int pmi)
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

void pending_drop(int k, int close_fd)
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

void pending_service(int fd)
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

void host_service(int h)
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
void launcher_ended(int h, int status)
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
void drain_pmi(int i)
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

int hosts_busy(void)
{
    if (!J.remote)
        return 0;
    for (int h = 0; h < J.hosts.n; h++)
        if (J.hs[h].fd >= 0 || J.hs[h].lpid > 0)
            return 1;
    return 0;
}

int all_hosts_local(void)
{
    for (int h = 0; h < J.hosts.n; h++)
        if (!host_is_local(J.hosts.h[h].name))
            return 0;
    return 1;
}

int remote_prepare(const char *iface)
{
    char err[PATH_MAX + 256];
    J.remote = 1;
    if (J.launcher == LAUNCH_NETNS)
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
    if (setup_listeners(iface, J.launcher == LAUNCH_SSH && all_hosts_local(), err, sizeof err) != 0) {
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
    return 0;
}
