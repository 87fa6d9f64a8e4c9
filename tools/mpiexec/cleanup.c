/* Clean-up: no process and no file of the job is left behind -- the watchdog (when mpiexec
 * itself is killed), descendants that left their rank's process group, the job's shared memory. */
#include "mpiexec.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* The watchdog: a separate process (own session, deaf to terminal signals) that learns each
 * rank's pid through a pipe. If mpiexec dies without stopping it (SIGKILL, crash), the pipe
 * hits EOF and the watchdog SIGKILLs every rank's process group, which also catches the
 * ranks' own children (PR_SET_PDEATHSIG covers only the ranks themselves), and removes the
 * job's shared memory. On a normal end mpiexec kills the watchdog first. */
void start_watchdog(void)
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

void watchdog_add(pid_t pid)
{
    if (J.watchdog_fd < 0)
        return;
    ssize_t w;
    do
        w = write(J.watchdog_fd, &pid, sizeof pid);
    while (w < 0 && errno == EINTR);
}

void stop_watchdog(void)
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

/* Kills whatever descendants are still around (adopted orphans that left their group). */
void kill_descendants(void)
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

void cleanup_shm(void)
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
