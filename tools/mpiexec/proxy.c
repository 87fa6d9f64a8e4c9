/* Proxy mode (mpiexec --proxy, on each host of the ssh and netns launchers): connects back to
 * mpiexec, receives the job, forks its host's ranks, relays their output and exit statuses. */
#include "mpiexec.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

void proxy_lost(void)
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

void proxy_ctl_service(void)
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
int proxy_main(int argc, char **argv)
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
            } else if (type == 'B' && n < sizeof rec) {
                memcpy(rec, pl, n);
                rec[n] = '\0';
                if (sscanf(rec, "bind=%d overload=%d map=%d cpr=%d report=%d launcher=%d", &J.bind, &J.bind_overload,
                           &J.map, &J.cpus_per_rank, &J.report_bindings, &J.launcher) != 6) {
                    msg("mpiexec proxy on host %s: bad binding record", J.proxy_host);
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

    /* this host's ranks, bound in their order here (a binding that cannot be made fails them) */
    if (bind_plan(mine, nmine) != 0)
        return 1;
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
