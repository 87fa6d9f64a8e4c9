/* PMI-2 server side of mpiexec: one connection per rank (a socketpair end, or a TCP
 * connection adopted once the rank said who it is), one key-value space for the job,
 * fence = barrier over all ranks. */
#ifndef APTUS_MPIEXEC_PMISERV_H
#define APTUS_MPIEXEC_PMISERV_H

#include <stddef.h>

struct pmisrv_conn {
    int fd;      /* our end, non-blocking; -1 before adoption and once closed */
    int adopted; /* a connection was given (at init or by pmisrv_adopt) */
    char *buf;   /* bytes received, not yet consumed */
    size_t len, cap;
    int handshaken;  /* PMI-1 style "cmd=init" line answered */
    int initialized; /* fullinit done */
    int finalized;   /* finalize received */
    int aborted;     /* abort received */
    int in_fence;
};

/* A key=value pair of a message, parsed in place (pmisrv_parse). */
struct pmisrv_pair {
    char *key;
    char *val;
};

/* An abort request: rank < 0 when there was none. */
struct pmisrv_abort {
    int rank;
    int code;
    int lost; /* the rank whose loss the aborting rank gave as its cause (key peerlost), or -1 */
    char msg[1024];
};

struct pmisrv_kv;
struct pmisrv_nattr;

struct pmisrv {
    int size;
    const char *jobid;
    const char *mapping; /* PMI_process_mapping value */
    const int *node_of;
    struct pmisrv_conn *conn;
    struct pmisrv_kv **buckets;
    size_t nbuckets;
    long fences_done;
    int fence_waiting;
    struct pmisrv_nattr *nattrs;
    int verbose;
    /* The first abort request of each kind: one a rank made of its own accord, and one that
     * names a lost peer as its cause (a consequence of another rank's end, which the launcher
     * ranks below that rank's own failure). */
    struct pmisrv_abort abort, lost_abort;
    int ninit;           /* ranks that made fullinit */
    const char *spawner; /* the job id of the job whose spawn started this one, or NULL */
    /* Commands the server leaves to mpiexec (spawn, aptus-universe, aptus-spawn-cancel,
     * name-publish, name-lookup, name-unpublish: tools/mpiexec/spawn.c, names.c), given the message as it came
     * (body[0..len), as on the wire: ';' in a value still doubled): 0 when taken (answered now or later with
     * pmisrv_reply), -1 to close the connection. NULL: refused as unsupported. */
    int (*extra)(struct pmisrv *s, int rank, const char *cmd, const char *body, size_t len);
};

/* fds[i] is our end of rank i's socket. Returns 0 or -1 (out of memory). */
int pmisrv_init(struct pmisrv *s, int size, const int *fds, const char *jobid, const char *mapping, const int *node_of);
/* Reads whatever is available on rank's connection and answers complete requests.
 * Returns 1 while the connection is open, 0 once it is closed (EOF, error, protocol error). */
int pmisrv_service(struct pmisrv *s, int rank);
/* Gives rank (whose slot has no connection yet: fds[rank] was -1) the connection fd, with
 * the bytes already read from it (data[0..n)), and answers what they hold. Returns 1 while
 * the connection is open, 0 once closed, -1 when the slot is taken or memory is short. */
int pmisrv_adopt(struct pmisrv *s, int rank, int fd, const char *data, size_t n);
/* Closes rank's connection (after the process is gone). */
void pmisrv_close(struct pmisrv *s, int rank);
void pmisrv_destroy(struct pmisrv *s);
/* Key=value pairs the job finds in its key space from the start (a spawn's pre-put keys). */
int pmisrv_preput(struct pmisrv *s, const char *key, const char *val);
/* Sends rank the message body (its "key=value;" pairs, escaped); nothing when its connection is
 * closed. 0, or -1 (the connection was closed for it). */
int pmisrv_reply(struct pmisrv *s, int rank, const char *body, size_t len);
/* Parses a message body in place into at most max pairs (';;' in a value is one ';'). 0, or -1
 * when it is malformed or has more pairs. */
int pmisrv_parse(char *body, size_t len, struct pmisrv_pair *pairs, int max, int *npairs);
/* The first value of key among the pairs, or NULL. */
const char *pmisrv_get(const struct pmisrv_pair *p, int n, const char *key);

#endif
