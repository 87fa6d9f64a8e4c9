/* The name service's directory (see names.h). */
#include "runtime/names.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

int aptus_names_dir(const char *setting, char *dir, size_t len, int make)
{
    if (setting && *setting && strcmp(setting, "auto")) {
        snprintf(dir, len, "%s", setting);
        return 0;
    }
    const char *t = getenv("TMPDIR");
    snprintf(dir, len, "%s/aptus-names-%u", t && *t ? t : "/tmp", (unsigned)getuid());
    if (make && mkdir(dir, 0700) != 0 && errno != EEXIST)
        return errno;
    return 0;
}

int aptus_names_file(const char *dir, const char *service, char *out, size_t len)
{
    size_t sl = strlen(service), n = (size_t)snprintf(out, len, "%s/", dir);
    if (sl == 0 || n + 2 * sl + 1 > len)
        return -1;
    for (size_t i = 0; i < sl; i++)
        n += (size_t)snprintf(out + n, len - n, "%02x", (unsigned char)service[i]);
    return 0;
}

int aptus_names_read(const char *file, char *port, size_t plen, int *stale)
{
    FILE *f = fopen(file, "r");
    if (!f)
        return -1;
    char host[256] = "", me[256] = "";
    long pid = 0;
    int ok = fgets(port, (int)plen, f) != NULL;
    if (ok && fscanf(f, "%255s %ld", host, &pid) != 2)
        pid = 0;
    fclose(f);
    if (!ok)
        return -1;
    port[strcspn(port, "\n")] = 0;
    gethostname(me, sizeof me - 1);
    *stale = pid > 0 && !strcmp(host, me) && kill((pid_t)pid, 0) != 0 && errno == ESRCH;
    return 0;
}

/* Whether the file is held by the publisher pid of this host with port. */
static int names_held_by(const char *file, const char *port, long pid)
{
    FILE *f = fopen(file, "r");
    if (!f)
        return 0;
    char p[1100] = "", host[256] = "", me[256] = "";
    long who = 0;
    int ok = fgets(p, (int)sizeof p, f) != NULL && fscanf(f, "%255s %ld", host, &who) == 2;
    fclose(f);
    p[strcspn(p, "\n")] = 0;
    gethostname(me, sizeof me - 1);
    return ok && who == pid && !strcmp(host, me) && !strcmp(p, port);
}

int aptus_names_write(const char *file, const char *port, long pid)
{
    char tmp[1200], aside[1200], host[256] = "";
    gethostname(host, sizeof host - 1);
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", file, pid);
    FILE *f = fopen(tmp, "w");
    int ok = f && fprintf(f, "%s\n%s %ld\n", port, host, pid) > 0;
    if (f && fclose(f) != 0)
        ok = 0;
    /* (link: the name appears whole, and only if nobody holds it) */
    int taken = ok && link(tmp, file) != 0 && errno == EEXIST;
    if (taken) {
        /* a stale holder's file is moved aside (one process wins the rename), checked there, and
         * the name linked again: two takers cannot both succeed */
        char old[1100];
        int stale = 0;
        snprintf(aside, sizeof aside, "%s.%ld.stale", file, pid);
        if (aptus_names_read(file, old, sizeof old, &stale) == 0 && stale && rename(file, aside) == 0) {
            if (aptus_names_read(aside, old, sizeof old, &stale) == 0 && stale) {
                taken = link(tmp, file) != 0 && errno == EEXIST;
                ok = taken || access(file, F_OK) == 0;
            } else {
                (void)link(aside, file); /* (not stale after all: put back) */
            }
            unlink(aside);
        }
    } else if (ok && access(file, F_OK) != 0) {
        ok = 0;
    }
    int e = errno;
    unlink(tmp);
    if (taken) {
        errno = EEXIST;
        return -1;
    }
    if (!ok) {
        errno = e;
        return -1;
    }
    return 0;
}

void aptus_names_remove(const char *file, const char *port, long pid)
{
    if (names_held_by(file, port, pid))
        unlink(file);
}
