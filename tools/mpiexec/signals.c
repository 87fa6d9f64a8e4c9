/* Signals: mpiexec and its proxies take them through a pipe (handled in the event loop),
 * forward the terminal ones to the ranks and then end the job; children start with the defaults. */
#include "mpiexec.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int sigpipe_fds[2] = { -1, -1 };

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

void handle_signal(int sig)
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
        if (!J.proxy && J.uplink < 0) /* (the first mpiexec says it; the jobs it started are told) */
            msg("mpiexec: caught signal %d (%s); forwarding it to the ranks", sig, strsignal(sig));
    }
    signal_ranks(sig);
    if (!J.terminating) {
        J.terminating = 1;
        now(&J.kill_at);
        add_ms(&J.kill_at, SIGNAL_GRACE_MS);
    }
}

void setup_signals(void)
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

void reset_child_signals(void)
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
