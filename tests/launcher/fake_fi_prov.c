/* A stand-in for a libfabric provider library that catches fatal signals, for the launcher
 * tests: libfabric loads every lib*-fi.so in FI_PROVIDER_PATH when it starts, and this one
 * installs, as it loads, handlers for the fatal and terminal signals that write a backtrace
 * file into the working directory and exit(1) -- what libinfinipath (under libfabric's psm
 * provider) does. It offers no provider (fi_prov_ini returns NULL) and is linked with
 * -z nodelete, so that its handlers stay valid after libfabric lets go of it. The library must
 * undo these handlers (docs/DESIGN.md, "Fatal signals and the fabric libraries"). */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void catch_fatal(int sig)
{
    char name[64];
    int n = snprintf(name, sizeof name, "fake-fi-%ld.btr", (long)getpid());
    int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0 && n > 0) {
        static const char text[] = "caught a signal\n";
        ssize_t w = write(fd, text, sizeof text - 1);
        (void)w;
        close(fd);
    }
    (void)sig;
    _exit(1);
}

__attribute__((constructor)) static void install(void)
{
    static const int sigs[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGINT, SIGTERM, SIGQUIT };
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = catch_fatal;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        sigaction(sigs[i], &sa, NULL);
}

void *fi_prov_ini(void);
void *fi_prov_ini(void)
{
    return NULL;
}
