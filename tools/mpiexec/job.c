/* The job: the event loop of mpiexec and of its proxies, what a rank's end means for the job,
 * and the job's termination (the first cause wins). */
#include "mpiexec.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---------- termination ---------- */

void signal_ranks(int sig)
{
    for (int i = 0; i < J.n; i++)
        if (J.r[i].pid > 0 && J.r[i].running)
            kill(-J.r[i].pid, sig);
    if (J.remote)
        for (int h = 0; h < J.hosts.n; h++)
            host_send_signal(h, sig);
    spawn_signal(sig);
}

void start_terminating(long grace_ms)
{
    if (J.terminating)
        return;
    J.terminating = 1;
    signal_ranks(SIGTERM);
    now(&J.kill_at);
    add_ms(&J.kill_at, grace_ms);
}

void job_fail(int code, const char *fmt, ...)
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

/* The job's cause from the aborts the ranks sent (docs/DESIGN.md, "Launch across hosts"). An
 * abort a rank made of its own accord ends the job at once. One that names a lost peer as its
 * cause (the rank's channel gave up on that peer: its process died, or its connection broke) is
 * a consequence: the peer's own end, if it died, happened first but may be reported later -- its
 * host's proxy reaps it and reports over the control connection while the other rank's abort
 * comes straight to the PMI port, and it is often the faster. So the abort is held for
 * LOST_GRACE_MS (the ranks keep running, nothing is sent to them), and any failure that is not
 * itself such a consequence, reported meanwhile, is the job's cause instead: the rank killed by a
 * signal, not the aborts its death set off. No news: the held abort is the cause. */
static void fail_lost_abort(void)
{
    const struct pmisrv_abort *a = &J.srv.lost_abort;
    job_fail(a->code, "rank %d called abort with exit code %d%s%s", a->rank, a->code, a->msg[0] ? ": " : "", a->msg);
}

static void check_aborts(void)
{
    const struct pmisrv_abort *a = &J.srv.abort;
    if (J.cause_set)
        return;
    if (a->rank >= 0) {
        job_fail(a->code, "rank %d called abort with exit code %d%s%s", a->rank, a->code, a->msg[0] ? ": " : "",
                 a->msg);
        return;
    }
    a = &J.srv.lost_abort;
    if (a->rank < 0 || J.lost_held)
        return;
    if (!J.r[a->lost].running) {
        fail_lost_abort(); /* the peer's end is known already, and was no failure of its own */
        return;
    }
    J.lost_held = 1;
    now(&J.lost_until);
    add_ms(&J.lost_until, LOST_GRACE_MS);
    if (J.verbose)
        msg("mpiexec: rank %d aborts because it lost rank %d; waiting up to %d ms for news of rank %d", a->rank,
            a->lost, LOST_GRACE_MS, a->lost);
}

static const char *rank_where(int i)
{
    static char where[300];
    where[0] = '\0';
    if (J.remote)
        snprintf(where, sizeof where, " on host %s", J.hosts.h[J.host_of[i]].name);
    return where;
}

/* A rank's process has ended: decide what it means for the job. */
void rank_ended(int i, int status)
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
    check_aborts();
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
    if (J.srv.conn[i].aborted) {
        /* Its exit is its abort's, which counted above (or is held). */
        if (J.lost_held && !J.cause_set && i == J.srv.lost_abort.lost)
            fail_lost_abort(); /* the lost peer itself aborted: no failure of its own to wait for */
        return;
    }
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
    if (J.lost_held && !J.cause_set && i == J.srv.lost_abort.lost)
        fail_lost_abort(); /* the lost peer ended well: the abort stands */
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
        if (spawn_reaped(pid, status))
            continue;
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

/* ---------- main loop ---------- */

static int any_stream_open(void)
{
    for (int i = 0; i < J.n; i++)
        if (J.r[i].out[0].fd >= 0 || J.r[i].out[1].fd >= 0)
            return 1;
    return hosts_busy();
}

enum { P_SIG, P_STDIN, P_STDINFWD, P_PMI, P_OUT, P_LISTEN, P_PENDING, P_HOST, P_CTL, P_SPAWN };

/* The poll set of one pass (spawn_poll_add adds to it through add_spawn_fd). */
static struct pollfd *pfd;
static int *kind, *who, *what;
static size_t npfd;

static void add_fd(int fd, short ev, int k, int w, int t)
{
    pfd[npfd] = (struct pollfd){ .fd = fd, .events = ev };
    kind[npfd] = k;
    who[npfd] = w;
    what[npfd++] = t;
}

static void add_spawn_fd(int fd, int w)
{
    add_fd(fd, POLLIN, P_SPAWN, w, 0);
}

/* Hosts with ranks whose proxy has not connected yet. */
static int hosts_unconnected(void)
{
    int n = 0;
    for (int h = 0; h < J.hosts.n; h++)
        n += J.hosts.h[h].nranks > 0 && !J.hs[h].connected;
    return n;
}

static void min_timeout(long *timeout, long ms)
{
    if (*timeout < 0 || ms < *timeout)
        *timeout = ms;
}

void event_loop(void)
{
    size_t cap = 0;
    struct timespec deadline, drain_until;
    int have_deadline = J.timeout > 0, draining = 0, force_set = 0;
    if (have_deadline) {
        now(&deadline);
        add_ms(&deadline, (long)(J.timeout * 1000.0));
    }
    for (;;) {
        if (J.nrunning == 0 && J.lost_held && !J.cause_set)
            fail_lost_abort(); /* every rank has ended: no more news */
        if (J.nrunning == 0 && !spawn_live()) {
            if (!draining) {
                draining = 1;
                now(&drain_until);
                add_ms(&drain_until, DRAIN_MS);
            }
            if (!any_stream_open() || ms_until(&drain_until) == 0)
                break;
        }
        size_t need =
            (size_t)J.n * 3 + 8 + (size_t)J.npend + (J.remote ? (size_t)J.hosts.n : 0) + (size_t)spawn_poll_count();
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
        npfd = 0;
#define ADD add_fd
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
        spawn_poll_add(add_spawn_fd);
#undef ADD
        size_t n = npfd;
        long timeout = -1;
        if (have_deadline && !J.cause_set)
            timeout = ms_until(&deadline);
        if (J.terminating && !J.kill_sent)
            min_timeout(&timeout, ms_until(&J.kill_at));
        if (draining)
            min_timeout(&timeout, ms_until(&drain_until));
        if (J.lost_held && !J.cause_set)
            min_timeout(&timeout, ms_until(&J.lost_until));
        if (spawn_wait_ms() >= 0)
            min_timeout(&timeout, spawn_wait_ms());
        if (J.remote) {
            /* (only while a proxy is still to connect: once the deadline has passed, a wait on it
             * would be a wait of 0 -- mpiexec spinning for the rest of the job) */
            if (!J.terminating && hosts_unconnected())
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
                    check_aborts();
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
            case P_SPAWN: spawn_service(who[k]); break;
            }
        }
        spawn_progress();
        reap();
        if (J.remote) {
            for (int k = 0; k < J.npend;)
                if (ms_until(&J.pend[k].until) == 0)
                    pending_drop(k, 1);
                else
                    k++;
            if (!J.terminating && hosts_unconnected() && ms_until(&J.connect_until) == 0)
                for (int h = 0; h < J.hosts.n; h++)
                    if (J.hosts.h[h].nranks > 0 && !J.hs[h].connected && !J.terminating)
                        job_fail(
                            1, "host %s: its proxy did not connect within %.3g s (started by %s); terminating the job",
                            J.hosts.h[h].name, connect_ms() / 1000.0, launcher_desc(h));
        }
        if (J.lost_held && !J.cause_set && ms_until(&J.lost_until) == 0)
            fail_lost_abort();
        if (have_deadline && !J.cause_set && ms_until(&deadline) == 0)
            job_fail(124, "timeout: job did not finish within %g s; terminating it", J.timeout);
        if (J.terminating && !J.kill_sent && ms_until(&J.kill_at) == 0) {
            if (J.nrunning > 0 || spawn_live()) {
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
    pfd = NULL;
    kind = who = what = NULL;
}
