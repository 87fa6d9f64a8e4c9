/* The fork launcher: every rank forked on this machine, wired to the PMI server through a
 * socketpair (PMI_FD). exec_rank is also how a proxy starts its host's ranks. */
#include "mpiexec.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

void child_fail(const char *what)
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
void exec_rank(int rank, pid_t parent, int pmi_fd, int in_fd, int out_fd, int err_fd)
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
    bind_apply(rank);

    execvp(J.argv[0], J.argv);
    {
        char what[PATH_MAX + 32];
        snprintf(what, sizeof what, "cannot execute '%s'", J.argv[0]);
        child_fail(what);
    }
}

int spawn_all(void)
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
