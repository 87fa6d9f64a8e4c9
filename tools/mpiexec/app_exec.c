/* mpiexec --app-exec: the program a job started by MPI_Comm_spawn / MPI_Comm_spawn_multiple runs
 * on every rank (tools/mpiexec/spawn.c starts that job with a copy of mpiexec). It picks this rank's
 * command from APTUS_SPAWN_APPS by PMI_RANK, tells the library which one it is (APTUS_APPNUM:
 * MPI_APPNUM), goes to the command's working directory, and executes it -- searching the
 * command's own path first, then PATH.
 *
 * APTUS_SPAWN_APPS: one record per command, separated by the byte 0x1e; the fields of a record,
 * separated by 0x1f: the number of ranks, the working directory (empty: this one), the path to
 * search (empty: PATH only), then the program and its arguments. */
#include "mpiexec.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define REC_SEP   '\x1e'
#define FIELD_SEP '\x1f'

static int fail(const char *fmt, const char *a, const char *b)
{
    fprintf(stderr, "mpiexec --app-exec: ");
    fprintf(stderr, fmt, a, b);
    fputc('\n', stderr);
    return 127;
}

int app_exec_main(void)
{
    const char *apps = getenv("APTUS_SPAWN_APPS"), *r = getenv("PMI_RANK");
    char *end = NULL;
    long rank = r ? strtol(r, &end, 10) : -1;
    if (!apps || !*apps || !end || *end || rank < 0)
        return fail("%s%s",
                    "needs APTUS_SPAWN_APPS and PMI_RANK (it runs the ranks of a job that MPI_Comm_spawn started)", "");
    char *copy = strdup(apps);
    if (!copy)
        return fail("%s%s", "out of memory", "");
    long first = 0;
    int appnum = 0;
    for (char *rec = copy; rec; appnum++) {
        char *next = strchr(rec, REC_SEP);
        if (next)
            *next++ = '\0';
        /* the fields, in place */
        char *f[4096];
        int nf = 0;
        for (char *p = rec; p && nf < 4095; nf++) {
            f[nf] = p;
            p = strchr(p, FIELD_SEP);
            if (p)
                *p++ = '\0';
        }
        long count = strtol(f[0], &end, 10);
        if (nf < 4 || *end || count < 0)
            return fail("%s%s", "APTUS_SPAWN_APPS is damaged", "");
        if (rank >= first + count) {
            first += count;
            rec = next;
            continue;
        }
        f[nf] = NULL;
        char num[16];
        snprintf(num, sizeof num, "%d", appnum);
        setenv("APTUS_APPNUM", num, 1);
        unsetenv("APTUS_SPAWN_APPS");
        if (*f[1] && chdir(f[1]) != 0)
            return fail("cannot go to the working directory '%s': %s", f[1], strerror(errno));
        char **argv = &f[3];
        if (*f[2] && !strchr(argv[0], '/')) { /* the command's own path first */
            char *save = NULL;
            for (char *d = strtok_r(f[2], ":", &save); d; d = strtok_r(NULL, ":", &save)) {
                char full[PATH_MAX];
                snprintf(full, sizeof full, "%s/%s", d, argv[0]);
                if (access(full, X_OK) == 0)
                    execv(full, argv);
            }
        }
        execvp(argv[0], argv);
        return fail("cannot execute '%s': %s", argv[0], strerror(errno));
    }
    return fail("%s%s", "PMI_RANK is beyond the ranks APTUS_SPAWN_APPS names", "");
}
