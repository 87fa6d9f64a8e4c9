/* The name service of a run (MPI_Publish_name, MPI_Lookup_name, MPI_Unpublish_name; PMI-2
 * name-publish, name-lookup, name-unpublish). The first mpiexec holds the names of every job of
 * the run (spawned jobs pass the requests up their uplinks, spawn.c), so a name published on one
 * host is found on any other. Each name is also written to the shared directory of the name
 * service (the one the publishing process's configuration names -- APTUS_NAME_SERVICE, sent with
 * the request --, src/runtime/names.c; by default every job of the user on this host): that is how
 * runs started separately find each other's names, and a name another live run holds there
 * cannot be published. The run's names leave the directory when they are unpublished and when
 * mpiexec ends (a file is removed only while it is still this run's). */
#include "runtime/names.h"
#include "mpiexec.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct name {
    struct name *next;
    char *service, *port;
    char file[1200]; /* its file in the directory ("" if it could not be written there) */
};
static struct name *names;

static struct name *name_find(const char *service)
{
    for (struct name *n = names; n; n = n->next)
        if (!strcmp(n->service, service))
            return n;
    return NULL;
}

/* The file of a service name in the directory the asking process names (dir: its configuration's,
 * which may come from a tune file; else this environment's), the directory made. 0 or -1 (said
 * once). */
static int name_path(const char *dir_given, const char *service, char *file, size_t len)
{
    static int said;
    char dir[900];
    int e = aptus_names_dir(dir_given && *dir_given ? dir_given : getenv("APTUS_NAME_SERVICE"), dir, sizeof dir, 1);
    if (e && !said++)
        msg("mpiexec: the name service's directory %s: %s (runs started separately will not see this run's names)", dir,
            strerror(e));
    return !e && aptus_names_file(dir, service, file, len) == 0 ? 0 : -1;
}

static void publish(int req_sub, int rank, const char *service, const char *port, const char *dir)
{
    const char *resp = "name-publish-response";
    char err[400];
    if (name_find(service)) {
        snprintf(err, sizeof err, "service name \"%.200s\" is already published", service);
        first_answer(req_sub, rank, resp, -1, err, NULL, NULL);
        return;
    }
    struct name *n = calloc(1, sizeof *n);
    if (!n || !(n->service = strdup(service)) || !(n->port = strdup(port))) {
        if (n)
            free(n->service);
        free(n);
        first_answer(req_sub, rank, resp, -1, "mpiexec is out of memory", NULL, NULL);
        return;
    }
    static int said;
    if (name_path(dir, service, n->file, sizeof n->file) != 0) {
        n->file[0] = '\0';
    } else if (aptus_names_write(n->file, port, (long)getpid()) != 0) {
        int e = errno;
        if (e == EEXIST) {
            snprintf(err, sizeof err, "service name \"%.200s\" is already published (by another run)", service);
            free(n->service);
            free(n->port);
            free(n);
            first_answer(req_sub, rank, resp, -1, err, NULL, NULL);
            return;
        }
        /* (the run's own jobs still find it; runs started separately do not) */
        if (!said++)
            msg("mpiexec: the name service's file %s: %s (runs started separately will not see this run's names)",
                n->file, strerror(e));
        n->file[0] = '\0';
    }
    n->next = names;
    names = n;
    first_answer(req_sub, rank, resp, 0, NULL, NULL, NULL);
}

static void lookup(int req_sub, int rank, const char *service, const char *dir)
{
    const char *resp = "name-lookup-response";
    struct name *n = name_find(service);
    char file[1200], port[1100], err[300];
    int stale = 0;
    if (n) {
        first_answer(req_sub, rank, resp, 0, NULL, "value", n->port);
    } else if (name_path(dir, service, file, sizeof file) == 0 &&
               aptus_names_read(file, port, sizeof port, &stale) == 0 && !stale) {
        first_answer(req_sub, rank, resp, 0, NULL, "value", port);
    } else {
        snprintf(err, sizeof err, "service name \"%.200s\" is not published", service);
        first_answer(req_sub, rank, resp, -1, err, NULL, NULL);
    }
}

static void unpublish(int req_sub, int rank, const char *service, const char *port)
{
    const char *resp = "name-unpublish-response";
    char err[300];
    for (struct name **pp = &names; *pp; pp = &(*pp)->next) {
        struct name *n = *pp;
        if (strcmp(n->service, service))
            continue;
        if (port && strcmp(n->port, port)) {
            snprintf(err, sizeof err, "service name \"%.200s\" is not published with that port", service);
            first_answer(req_sub, rank, resp, -1, err, NULL, NULL);
            return;
        }
        if (n->file[0])
            aptus_names_remove(n->file, n->port, (long)getpid());
        *pp = n->next;
        free(n->service);
        free(n->port);
        free(n);
        first_answer(req_sub, rank, resp, 0, NULL, NULL, NULL);
        return;
    }
    snprintf(err, sizeof err, "service name \"%.200s\" is not published by this run", service);
    first_answer(req_sub, rank, resp, -1, err, NULL, NULL);
}

void names_request(int req_sub, int rank, const char *cmd, const char *service, const char *port, const char *dir)
{
    char resp[64];
    snprintf(resp, sizeof resp, "%.40s-response", cmd);
    if (!service || !*service) {
        first_answer(req_sub, rank, resp, -1, "no service name", NULL, NULL);
    } else if (!strcmp(cmd, "name-publish")) {
        if (port)
            publish(req_sub, rank, service, port, dir);
        else
            first_answer(req_sub, rank, resp, -1, "no port", NULL, NULL);
    } else if (!strcmp(cmd, "name-lookup")) {
        lookup(req_sub, rank, service, dir);
    } else if (!strcmp(cmd, "name-unpublish")) {
        unpublish(req_sub, rank, service, port);
    } else {
        first_answer(req_sub, rank, resp, -1, "unknown request", NULL, NULL);
    }
}

void names_cleanup(void)
{
    while (names) {
        struct name *n = names;
        names = n->next;
        if (n->file[0])
            aptus_names_remove(n->file, n->port, (long)getpid());
        free(n->service);
        free(n->port);
        free(n);
    }
}
