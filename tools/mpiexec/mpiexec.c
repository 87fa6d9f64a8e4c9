/* mpiexec (and mpirun, a link to it): starts N processes and serves them PMI-2. The steps of a
 * run; mpiexec.h says which file does what. */
#include "mpiexec.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

struct mpx_job J;
const char *const launcher_names[3] = { "fork", "ssh", "netns" };

/* ---------- small helpers ---------- */

void msg(const char *fmt, ...)
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

void now(struct timespec *t)
{
    clock_gettime(CLOCK_MONOTONIC, t);
}

void add_ms(struct timespec *t, long ms)
{
    t->tv_sec += ms / 1000;
    t->tv_nsec += (ms % 1000) * 1000000L;
    if (t->tv_nsec >= 1000000000L) {
        t->tv_sec++;
        t->tv_nsec -= 1000000000L;
    }
}

long connect_ms(void)
{
    return J.connect_timeout > 0 ? (long)(J.connect_timeout * 1000) : CONNECT_MS;
}

long ms_until(const struct timespec *t)
{
    struct timespec n;
    now(&n);
    long ms = (long)(t->tv_sec - n.tv_sec) * 1000 + (t->tv_nsec - n.tv_nsec) / 1000000L;
    return ms < 0 ? 0 : ms;
}

void set_nonblock(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0)
        fcntl(fd, F_SETFL, fl | O_NONBLOCK);
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

/* The fork launcher runs every rank on this machine (simulated nodes too): bound in rank order. */
static int bind_here(void)
{
    int *order = malloc((size_t)J.n * sizeof *order);
    if (!order) {
        msg("mpiexec: out of memory");
        return 1;
    }
    for (int i = 0; i < J.n; i++)
        order[i] = i;
    int rc = bind_plan(order, J.n);
    free(order);
    return rc;
}

int main(int argc, char **argv)
{
    const char *iface = NULL;
    memset(&J, 0, sizeof J);
    J.stdin_fwd = -1;
    J.pmi_lfd = J.ctl_lfd = J.ctl_fd = J.uplink = -1;
    J.bind = BIND_DEFAULT;

    if (argc > 1 && strcmp(argv[1], "--proxy") == 0)
        return proxy_main(argc, argv);
    if (argc == 2 && strcmp(argv[1], "--app-exec") == 0)
        return app_exec_main();

    int rc = options_parse(argc, argv, &iface);
    if (rc >= 0)
        return rc;
    if (place_ranks() != 0)
        return 1;
    universe_export();
    if (J.launcher == LAUNCH_FORK && (rc = bind_here()) != 0)
        return rc;
    spawn_identity();
    if (!J.jobid[0])
        make_jobid();
    if (J.launcher != LAUNCH_FORK && (rc = remote_prepare(iface)) != 0)
        return rc;

    setup_signals();
    /* Orphaned descendants of the ranks are re-parented to us, so we can kill them. */
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    start_watchdog();

    if (J.remote) {
        spawn_init();
        now(&J.connect_until);
        add_ms(&J.connect_until, connect_ms());
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
        spawn_init();
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
    names_cleanup();

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
