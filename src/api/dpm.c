/* Dynamic processes, the part that joins jobs started separately (MPI 4.1, 11.8 - 11.10):
 * MPI_Open_port / MPI_Close_port, MPI_Comm_accept / MPI_Comm_connect and MPI_Comm_join.
 * docs/DESIGN.md, "Dynamic processes".
 *
 * A port is a listening TCP socket of the process that opened it; its name says where to reach
 * it (the port number and this host's IPv4 addresses) and carries a random id. Accept and
 * connect are collective over their communicators, and go in four steps:
 *  1. every member starts its UD channel if it had none (a job on one node) and the root
 *     gathers the members' cards (channel/procs.c: job hash, rank, UD address);
 *  2. the roots meet over a TCP connection -- the connecting root's to the port, or the socket
 *     MPI_Comm_join is given -- and swap their groups' cards; the accepting side also sends the
 *     tag of the agreement below; then each says whether it can take the other group (room in
 *     every member's table of other jobs' processes, APTUS_DPM_PROCS), and both go on only if
 *     both can;
 *  3. each root broadcasts the outcome and the other group's cards to its members, which give
 *     each process of the other group an index (from then on a peer, reached over UD);
 *  4. all members of both groups agree on the intercommunicator's context ids, as
 *     MPI_Intercomm_create_from_groups does (comm/create.c).
 * The roots wait for their socket while driving the progress engine, giving their core away. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/check.h"
#include "channel/channel.h"
#include "coll/coll.h"
#include "comm/create.h"
#include "runtime/config.h"
#include "runtime/lock.h"
#include "runtime/names.h"
#include "runtime/pmi.h"
#include "runtime/progress.h"

#define PORT_PREFIX  "aptus-port:1:"
#define DPM_MAGIC    0x32505444u /* "DTP2": the handshake's version (2: cards with node, pid and door) */
#define DPM_ADDRS    8           /* addresses named in a port at most */
#define DPM_MAX_SIDE (1 << 20)   /* processes on one side at most (a bad header is refused) */

/* ---- ports ---- */

struct port {
    char name[MPI_MAX_PORT_NAME];
    int fd;
    int busy; /* MPI_Comm_accept calls waiting on it (another thread may call MPI_Close_port) */
    struct port *next;
};
static struct port *ports;

/* A spawn that needs the room of jobs still ending waits this long for it (MPI_Comm_spawn, below). */
#define SPAWN_ROOM_WAIT_S 5.0

static struct port *port_find(const char *name)
{
    for (struct port *p = ports; p; p = p->next)
        if (!strcmp(p->name, name))
            return p;
    return NULL;
}

/* This host's IPv4 addresses, those of interfaces that are up, the loopback one last. */
static int host_addrs(struct in_addr *out, int max)
{
    struct ifaddrs *ifa = NULL;
    int n = 0;
    struct in_addr loop = { htonl(INADDR_LOOPBACK) };
    if (getifaddrs(&ifa) == 0) {
        for (struct ifaddrs *i = ifa; i && n < max - 1; i = i->ifa_next) {
            if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !(i->ifa_flags & IFF_UP))
                continue;
            struct in_addr a = ((struct sockaddr_in *)i->ifa_addr)->sin_addr;
            if (i->ifa_flags & IFF_LOOPBACK) {
                loop = a;
                continue;
            }
            out[n++] = a;
        }
        freeifaddrs(ifa);
    }
    out[n++] = loop;
    return n;
}

/* 64 random bits: ports' ids, the agreements' tags (the clock and the pid without getrandom). */
static uint64_t random64(void)
{
    uint64_t v = 0;
    if (getrandom(&v, sizeof v, 0) != (ssize_t)sizeof v)
        v = (uint64_t)aptus_rt.pid << 32 ^ (uint64_t)(aptus_wtime() * 1e9);
    return v;
}

static uint32_t new_tag(void)
{
    return (uint32_t)random64();
}

/* A new port (not in the list): NULL with errno on failure. */
static struct port *port_new(void)
{
    struct port *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY) };
    socklen_t sl = sizeof sa;
    if (p->fd < 0 || bind(p->fd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(p->fd, 64) != 0 ||
        getsockname(p->fd, (struct sockaddr *)&sa, &sl) != 0) {
        int e = errno;
        if (p->fd >= 0)
            close(p->fd);
        free(p);
        errno = e;
        return NULL;
    }
    struct in_addr a[DPM_ADDRS];
    int na = host_addrs(a, DPM_ADDRS);
    uint64_t id = random64();
    int len = snprintf(p->name, sizeof p->name, PORT_PREFIX "%u:", (unsigned)ntohs(sa.sin_port));
    for (int i = 0; i < na; i++) {
        char ip[INET_ADDRSTRLEN];
        inet_ntop(AF_INET, &a[i], ip, sizeof ip);
        len += snprintf(p->name + len, sizeof p->name - (size_t)len, "%s%s", i ? "," : "", ip);
    }
    snprintf(p->name + len, sizeof p->name - (size_t)len, ":%016llx", (unsigned long long)id);
    return p;
}

static void port_free(struct port *p)
{
    if (p) {
        close(p->fd);
        free(p);
    }
}

int PMPI_Open_port(MPI_Info info, char *port_name)
{
    APTUS_API_LOCK();
    const char *fn = "MPI_Open_port";
    API_INIT(fn);
    (void)info; /* (no info keys of ours: others are ignored, as the standard allows) */
    if (!port_name)
        return aptus_error(NULL, MPI_ERR_ARG, fn, "null port_name argument");
    struct port *p = port_new();
    if (!p)
        return aptus_error(NULL, errno == ENOMEM ? MPI_ERR_NO_MEM : MPI_ERR_PORT, fn,
                           "cannot open a listening TCP socket: %s", strerror(errno));
    p->next = ports;
    ports = p;
    strcpy(port_name, p->name);
    return MPI_SUCCESS;
}
APTUS_ALIAS(Open_port)

int PMPI_Close_port(const char *port_name)
{
    APTUS_API_LOCK();
    const char *fn = "MPI_Close_port";
    API_INIT(fn);
    if (!port_name)
        return aptus_error(NULL, MPI_ERR_ARG, fn, "null port_name argument");
    for (struct port **pp = &ports; *pp; pp = &(*pp)->next) {
        struct port *p = *pp;
        if (strcmp(p->name, port_name))
            continue;
        if (p->busy)
            return aptus_error(NULL, MPI_ERR_PORT, fn, "port \"%.200s\" is in use: MPI_Comm_accept waits on it",
                               port_name);
        *pp = p->next;
        close(p->fd);
        free(p);
        return MPI_SUCCESS;
    }
    return aptus_error(NULL, MPI_ERR_PORT, fn, "port \"%.200s\" is not open in this process", port_name);
}
APTUS_ALIAS(Close_port)

/* ---- the roots' meeting ---- */

/* Waits until fd is ready for ev, progressing meanwhile. 0, or -1 (errno) on a poll failure, or
 * -3 at the deadline (a time of aptus_wtime; 0: none). Idle, it sleeps on the socket itself, 1 ms at a
 * time (the progress engine's timers and the peers' traffic wait no longer), the library's lock
 * let go for the sleep: a connection is seen at once, not at the end of a sleep on the channels'
 * wait objects. */
#define DPM_SPIN 64
static int sock_wait_until(int fd, short ev, double deadline)
{
    unsigned idle = 0;
    for (;;) {
        if (deadline > 0 && aptus_wtime() > deadline)
            return -3;
        struct pollfd p = { fd, ev, 0 };
        int r = poll(&p, 1, 0);
        if (r > 0)
            return 0;
        if (r < 0 && errno != EINTR)
            return -1;
        if (__atomic_load_n(&aptus_lock_on, __ATOMIC_RELAXED))
            aptus_lock_pause(); /* (another thread may be the one that connects) */
        if (aptus_progress() > 0) {
            idle = 0;
            continue;
        }
        if (++idle < DPM_SPIN)
            continue;
        int depth = aptus_lock_drop();
        (void)poll(&p, 1, 1);
        aptus_lock_take(depth);
    }
}

static int sock_wait(int fd, short ev)
{
    return sock_wait_until(fd, ev, 0);
}

/* Sends out[0..olen) while receiving in[0..ilen), both at once: two roots that each sent all
 * their cards first would both block once the cards outgrow the socket's buffers (some
 * thousands of processes a side). 0, or -1 with errno (ECONNRESET: closed). */
static int sock_swap(int fd, const void *out, size_t olen, void *in, size_t ilen)
{
    const char *o = out;
    char *i = in;
    while (olen || ilen) {
        int moved = 0;
        if (olen) {
            ssize_t r = send(fd, o, olen, MSG_NOSIGNAL);
            if (r > 0) {
                o += r;
                olen -= (size_t)r;
                moved = 1;
            } else if (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
                return -1;
            }
        }
        if (ilen) {
            ssize_t r = recv(fd, i, ilen, 0);
            if (r > 0) {
                i += r;
                ilen -= (size_t)r;
                moved = 1;
            } else if (r == 0) {
                errno = ECONNRESET;
                return -1;
            } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
                return -1;
            }
        }
        if (!moved && (olen || ilen) && sock_wait(fd, (short)((olen ? POLLOUT : 0) | (ilen ? POLLIN : 0))) != 0)
            return -1;
    }
    return 0;
}

struct dpm_hdr {
    uint32_t magic;
    uint32_t n;    /* cards that follow */
    uint32_t tag;  /* the accepting side's: the agreement's tag */
    uint32_t room; /* the fewest free entries among this group's tables of other jobs' processes */
};

/* One side's state through the steps. */
struct dpm {
    const char *fn;
    struct aptus_comm *c;
    int root, accepting;                   /* accepting: the side whose tag counts (join: the one first in order) */
    struct aptus_proc_card *mine, *theirs; /* the root's: its group's cards, the other group's */
    uint32_t nmine, ntheirs, tag, room;
    double deadline; /* spawn: when to give up waiting for the new job (0: never) */
    int sock1;       /* the roots' socket + 1, kept from step 2 for its second round (0: none) */
    int sock_owned;  /* it is ours to close (not MPI_Comm_join's) */
    int rc;          /* MPI error class */
    char why[320];
};

static int dpm_fail(struct dpm *d, int rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int dpm_fail(struct dpm *d, int rc, const char *fmt, ...)
{
    if (d->rc)
        return d->rc;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->why, sizeof d->why, fmt, ap);
    va_end(ap);
    return d->rc = rc;
}

/* Step 2 at the root, over a connected socket: the headers, the cards both ways, then the
 * verdicts (each both ways at once, sock_swap). */
static void roots_meet(struct dpm *d, int fd)
{
    struct dpm_hdr h = { DPM_MAGIC, d->nmine, d->tag, d->room }, t;
    uint8_t ok = d->rc == 0, tok = 0;
    if (sock_swap(fd, &h, sizeof h, &t, sizeof t)) {
        dpm_fail(d, MPI_ERR_PORT, "the other side's root went away during the handshake (%s)", strerror(errno));
        return;
    }
    if (t.magic != DPM_MAGIC || t.n == 0 || t.n > DPM_MAX_SIDE) {
        dpm_fail(d, MPI_ERR_PORT, "the other side did not speak Aptus MPI's handshake");
        return;
    }
    d->ntheirs = t.n;
    if (!d->accepting)
        d->tag = t.tag;
    if (!(d->theirs = malloc(t.n * sizeof *d->theirs))) {
        dpm_fail(d, MPI_ERR_NO_MEM, "out of memory for %u cards", t.n);
        return;
    }
    if (sock_swap(fd, d->mine, d->nmine * sizeof *d->mine, d->theirs, t.n * sizeof *d->theirs)) {
        dpm_fail(d, MPI_ERR_PORT, "the other side's root went away during the handshake (%s)", strerror(errno));
        return;
    }
    if (ok && d->room < t.n) {
        dpm_fail(d, MPI_ERR_NO_MEM,
                 "a process of this group has room for %u more processes of other jobs, the other group has %u "
                 "(APTUS_DPM_PROCS=%d)",
                 d->room, t.n, aptus_config.dpm_procs);
        ok = 0;
    }
    if (sock_swap(fd, &ok, 1, &tok, 1)) {
        dpm_fail(d, MPI_ERR_PORT, "the other side's root went away during the handshake (%s)", strerror(errno));
        return;
    }
    if (!tok)
        dpm_fail(d, MPI_ERR_PORT, "the other side gave up (its processes say why)");
}

/* The connecting root: to the first address of the port that answers. -1: none does. */
static int port_dial(struct dpm *d, const char *port)
{
    if (strncmp(port, PORT_PREFIX, strlen(PORT_PREFIX))) {
        dpm_fail(d, MPI_ERR_PORT, "\"%.200s\" is not a port name of Aptus MPI (MPI_Open_port gives one)", port);
        return -1;
    }
    char buf[MPI_MAX_PORT_NAME];
    snprintf(buf, sizeof buf, "%s", port + strlen(PORT_PREFIX));
    char *save = NULL, *num = strtok_r(buf, ":", &save), *list = strtok_r(NULL, ":", &save);
    char *end = NULL;
    long pn = num ? strtol(num, &end, 10) : -1;
    if (!list || !end || *end || pn <= 0 || pn > 65535) {
        dpm_fail(d, MPI_ERR_PORT, "port name \"%.200s\" is damaged", port);
        return -1;
    }
    int last = 0;
    char *s2 = NULL;
    for (char *ip = strtok_r(list, ",", &s2); ip; ip = strtok_r(NULL, ",", &s2)) {
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)pn) };
        if (inet_pton(AF_INET, ip, &sa.sin_addr) != 1)
            continue;
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0) {
            last = errno;
            continue;
        }
        int r = connect(fd, (struct sockaddr *)&sa, sizeof sa);
        if (r != 0 && errno == EINPROGRESS) {
            socklen_t el = sizeof r;
            if (sock_wait(fd, POLLOUT) != 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &r, &el) != 0)
                r = errno;
            errno = r;
        }
        if (r == 0) {
            int one = 1;
            setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            return fd;
        }
        last = errno;
        close(fd);
    }
    dpm_fail(d, MPI_ERR_PORT, "no process accepts on port \"%.200s\" (%s)", port,
             last ? strerror(last) : "no address in it");
    return -1;
}

/* What a spawn that timed out under Slurm should add. */
static const char *slurm_hint(void)
{
    return getenv("SLURM_JOB_ID") ? "; under Slurm the new job is a step of this allocation, which waits for free "
                                    "CPUs: srun --overlap (SLURM_OVERLAP=1) or a larger allocation gives it room"
                                  : "";
}

/* The accepting root: the next connection to port p that speaks the handshake's first word is
 * taken in roots_meet (one that does not is closed and the wait goes on). */
static int port_answer(struct dpm *d, struct port *p)
{
    for (;;) {
        int w = sock_wait_until(p->fd, POLLIN, d->deadline);
        if (w == -3) {
            dpm_fail(d, MPI_ERR_SPAWN,
                     "the new job's processes did not connect within APTUS_SPAWN_TIMEOUT=%d seconds (their "
                     "messages, or the launcher's, say why)%s",
                     aptus_config.spawn_timeout, slurm_hint());
            return -1;
        }
        if (w != 0) {
            dpm_fail(d, MPI_ERR_PORT, "waiting on the port failed: %s", strerror(errno));
            return -1;
        }
        int fd = accept4(p->fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR || errno == ECONNABORTED)
                continue;
            dpm_fail(d, MPI_ERR_PORT, "accepting a connection on the port failed: %s", strerror(errno));
            return -1;
        }
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        return fd;
    }
}

/* Step 1 (with `net`, again: the cards then carry their UD addresses): every member's card, with
 * its room, at the root (d->mine, d->nmine, d->room). A member's failure travels as an empty card:
 * the root fails the link naming it (*bad = its rank + 1). */
static int link_cards(struct dpm *d, int net, char *err, size_t errlen, uint32_t *bad)
{
    struct aptus_comm *c = d->c;
    int me_root = c->rank == d->root;
    struct {
        struct aptus_proc_card card;
        uint32_t room;
        int32_t err;
    } mine, *all = NULL;
    memset(&mine, 0, sizeof mine);
    if (aptus_proc_card_self(&mine.card, net, err, errlen) != 0)
        mine.err = 1;
    mine.room = (uint32_t)(aptus_rt.procs_cap - aptus_rt.nprocs);
    if (me_root && !(all = malloc((size_t)c->size * sizeof *all)))
        /* (the other members would wait in the broadcast below for a root that left) */
        aptus_abort_job(MPI_ERR_NO_MEM, "MPI_Comm_accept/connect/join/spawn: out of memory for the members' cards");
    int rc = PMPI_Gather(&mine, (int)sizeof mine, MPI_BYTE, all, (int)sizeof mine, MPI_BYTE, d->root, c->handle);
    if (rc) {
        free(all);
        return dpm_fail(d, rc, "gathering the members' addresses failed");
    }
    if (me_root) {
        d->nmine = (uint32_t)c->size;
        d->room = UINT32_MAX;
        if (!d->mine && !(d->mine = malloc((size_t)c->size * sizeof *d->mine)))
            aptus_abort_job(MPI_ERR_NO_MEM, "MPI_Comm_accept/connect/join/spawn: out of memory for the members' cards");
        for (int i = 0; i < c->size; i++) {
            d->mine[i] = all[i].card;
            if (all[i].room < d->room)
                d->room = all[i].room;
            if (all[i].err && !d->rc) {
                dpm_fail(d, MPI_ERR_OTHER, "rank %d of the communicator cannot take part (%s)", i,
                         i == c->rank ? err : "its UD channel could not start: its own error says why");
                *bad = (uint32_t)i + 1;
            }
        }
    }
    free(all);
    return MPI_SUCCESS;
}

/* Whether the link needs the network (some process of one side and some of the other are on
 * different nodes, or share no memory) while a card lacks its UD address: both roots see the
 * same cards, so both decide alike. */
static int link_needs_net(const struct dpm *d)
{
    const struct aptus_proc_card *side[2] = { d->mine, d->theirs };
    uint32_t n[2] = { d->nmine, d->ntheirs };
    int missing = 0, apart = 0;
    for (int s = 0; s < 2; s++)
        for (uint32_t i = 0; i < n[s]; i++) {
            const struct aptus_proc_card *k = &side[s][i];
            missing |= k->alen == 0;
            apart |= k->node == 0 || k->door < 0 || k->node != d->mine[0].node;
        }
    return missing && apart;
}

/* Step 2 again, when both roots found that the link needs the network: the cards, now with their
 * UD addresses, both ways over the same socket, then the verdicts. */
static void roots_meet_again(struct dpm *d, int fd)
{
    uint8_t ok = d->rc == 0, tok = 0;
    if (sock_swap(fd, d->mine, d->nmine * sizeof *d->mine, d->theirs, d->ntheirs * sizeof *d->theirs) ||
        sock_swap(fd, &ok, 1, &tok, 1)) {
        dpm_fail(d, MPI_ERR_PORT, "the other side's root went away during the handshake (%s)", strerror(errno));
        return;
    }
    if (!tok)
        dpm_fail(d, MPI_ERR_PORT, "the other side gave up (its processes say why)");
}

/* Steps 1 - 4; `meet` runs step 2 at the root (NULL elsewhere), leaving the roots' socket in
 * d->sock1. The cards go without UD addresses where UD is not running here (a job on one node),
 * and again with them only if the link needs the network (link_needs_net). */
static int dpm_link(struct dpm *d, void (*meet)(struct dpm *d, void *arg), void *arg, struct aptus_comm **out)
{
    struct aptus_comm *c = d->c;
    int me_root = c->rank == d->root;
    *out = NULL;
    /* 1. the cards, with each member's room; a member's failure travels as an empty card */
    uint32_t word[5] = { 0 }; /* outcome (MPI error class), cards, tag, the failing member + 1, again */
    char err[320] = "";
    int rc = link_cards(d, 0, err, sizeof err, &word[3]);
    if (rc)
        return rc;
    /* 2. the roots */
    if (me_root) {
        meet(d, arg); /* (also after a failure here: the other root then hears it, and gives up too) */
        word[4] = !d->rc && link_needs_net(d);
        word[0] = (uint32_t)d->rc;
        word[1] = d->ntheirs;
        word[2] = d->tag;
    }
    rc = aptus_bcast(word, sizeof word, d->root, c);
    if (!rc && word[4]) { /* 1 and 2 again, every card with its UD address */
        rc = link_cards(d, 1, err, sizeof err, &word[3]);
        if (!rc && me_root) {
            roots_meet_again(d, d->sock1 - 1);
            word[0] = (uint32_t)d->rc;
        }
        if (!rc)
            rc = aptus_bcast(word, sizeof word, d->root, c);
    }
    if (d->sock1 > 0 && d->sock_owned)
        close(d->sock1 - 1);
    d->sock1 = 0;
    if (!rc && !word[0] && !me_root && !(d->theirs = malloc(word[1] * sizeof *d->theirs)))
        /* (both groups are committed: a member that cannot go on would leave the others waiting) */
        aptus_abort_job(MPI_ERR_NO_MEM, "MPI_Comm_accept/connect/join: out of memory for the other group's cards");
    if (!rc && !word[0])
        rc = aptus_bcast(d->theirs, word[1] * sizeof *d->theirs, d->root, c);
    if (rc)
        return dpm_fail(d, rc, "the communicator's broadcast failed");
    if (word[0]) {
        if (!me_root && word[3] && (int)word[3] - 1 == c->rank)
            dpm_fail(d, (int)word[0], "this process cannot take part: %s", err);
        else if (!me_root)
            dpm_fail(d, (int)word[0], "the root (rank %d) failed: its own error says why", d->root);
        return d->rc;
    }
    /* 3. the other group's processes get their indexes */
    int m = (int)word[1];
    int *remote = malloc((size_t)m * sizeof(int));
    if (!remote)
        aptus_abort_job(MPI_ERR_NO_MEM, "MPI_Comm_accept/connect: out of memory after both groups agreed to link");
    for (int i = 0; i < m; i++) {
        char why[320];
        if ((remote[i] = aptus_proc_index(&d->theirs[i], why, sizeof why)) < 0) {
            /* (both groups are committed: a member that cannot go on would leave the others waiting) */
            char msg[480];
            snprintf(msg, sizeof msg, "%s: process %d of the other group cannot be reached: %s", d->fn, i, why);
            aptus_abort_job(MPI_ERR_OTHER, msg);
        }
    }
    /* 4. the context ids, over both groups */
    rc = aptus_intercomm_from_parent(c, remote, m, (int)(word[2] & 0x3fffffffu), out);
    free(remote);
    if (rc)
        return dpm_fail(d, rc, "the groups could not agree on a context id");
    return MPI_SUCCESS;
}

static void dpm_free(struct dpm *d)
{
    free(d->mine);
    free(d->theirs);
}

static void meet_accept(struct dpm *d, void *arg)
{
    struct port *p = arg;
    if (!p) /* (no such port here: nobody to tell) */
        return;
    p->busy++;
    int fd = port_answer(d, p);
    p->busy--;
    if (fd >= 0) {
        roots_meet(d, fd);
        d->sock1 = fd + 1;
        d->sock_owned = 1;
    }
}

static void meet_connect(struct dpm *d, void *arg)
{
    if (!arg)
        return;
    int fd = port_dial(d, arg);
    if (fd >= 0) {
        roots_meet(d, fd);
        d->sock1 = fd + 1;
        d->sock_owned = 1;
    }
}

/* The arguments every collective call here checks alike: an intracommunicator, its root, the
 * output handle. MPI_SUCCESS or the error raised. */
static int dpm_args(struct aptus_comm *c, int root, const MPI_Comm *out, const char *out_name, const char *fn)
{
    if (c->is_inter)
        return aptus_error(c, MPI_ERR_COMM, fn, "comm must be an intracommunicator");
    if (root < 0 || root >= c->size)
        return aptus_error(c, MPI_ERR_ROOT, fn, "invalid root %d (comm has %d ranks)", root, c->size);
    if (!out)
        return aptus_error(c, MPI_ERR_ARG, fn, "null %s argument", out_name);
    return MPI_SUCCESS;
}

static int accept_or_connect(const char *fn, int accepting, const char *port_name, int root, MPI_Comm comm,
                             MPI_Comm *newcomm)
{
    APTUS_OUT_NULL(newcomm, MPI_COMM_NULL);
    GET_COMM(c, comm, fn);
    int arc = dpm_args(c, root, newcomm, "newcomm", fn);
    if (arc)
        return arc;
    struct dpm d = { .fn = fn, .c = c, .root = root, .accepting = accepting };
    struct port *p = NULL;
    if (c->rank == root) { /* (port_name matters at the root only) */
        if (!port_name)
            dpm_fail(&d, MPI_ERR_ARG, "null port_name at the root");
        else if (accepting && !(p = port_find(port_name)))
            dpm_fail(&d, MPI_ERR_PORT, "port \"%.200s\" is not open in this process (MPI_Open_port)", port_name);
        d.tag = new_tag();
    }
    struct aptus_comm *n = NULL;
    int rc = accepting ? dpm_link(&d, meet_accept, p, &n) : dpm_link(&d, meet_connect, (void *)port_name, &n);
    dpm_free(&d);
    if (rc)
        return aptus_error(c, rc, fn, "%s", d.why);
    *newcomm = n->handle;
    return MPI_SUCCESS;
}

int PMPI_Comm_accept(const char *port_name, MPI_Info info, int root, MPI_Comm comm, MPI_Comm *newcomm)
{
    APTUS_API_LOCK();
    (void)info;
    return accept_or_connect("MPI_Comm_accept", 1, port_name, root, comm, newcomm);
}
APTUS_ALIAS(Comm_accept)

int PMPI_Comm_connect(const char *port_name, MPI_Info info, int root, MPI_Comm comm, MPI_Comm *newcomm)
{
    APTUS_API_LOCK();
    (void)info;
    return accept_or_connect("MPI_Comm_connect", 0, port_name, root, comm, newcomm);
}
APTUS_ALIAS(Comm_connect)

/* MPI_Comm_join: both sides are one process, and symmetric; which of them is the accepting side
 * (whose tag counts) is settled by a first exchange of their cards' (job, rank). */
static void meet_join(struct dpm *d, void *arg)
{
    int fd = *(int *)arg;
    uint64_t mine = (uint64_t)d->mine[0].job << 32 | (uint32_t)d->mine[0].rank, theirs = 0;
    if (sock_swap(fd, &mine, sizeof mine, &theirs, sizeof theirs)) {
        dpm_fail(d, MPI_ERR_ARG, "the socket failed before the other side answered (%s)", strerror(errno));
        return;
    }
    if (theirs == mine) {
        dpm_fail(d, MPI_ERR_ARG, "the socket's other end is this process: MPI_Comm_join needs two");
        return;
    }
    d->accepting = mine < theirs;
    roots_meet(d, fd);
    d->sock1 = fd + 1;
}

int PMPI_Comm_join(int fd, MPI_Comm *intercomm)
{
    APTUS_API_LOCK();
    const char *fn = "MPI_Comm_join";
    APTUS_OUT_NULL(intercomm, MPI_COMM_NULL);
    API_INIT(fn);
    if (!intercomm)
        return aptus_error(NULL, MPI_ERR_ARG, fn, "null intercomm argument");
    int fl = fcntl(fd, F_GETFL);
    int type = 0;
    socklen_t tl = sizeof type;
    if (fl < 0 || getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tl) != 0 || type != SOCK_STREAM)
        return aptus_error(NULL, MPI_ERR_ARG, fn, "fd %d is not a connected stream socket", fd);
    struct aptus_comm *self = aptus_comm_get(MPI_COMM_SELF);
    struct dpm d = { .fn = fn, .c = self, .root = 0, .tag = new_tag() };
    /* (the socket is used non-blocking here and given back as it came) */
    if (!(fl & O_NONBLOCK))
        fcntl(fd, F_SETFL, fl | O_NONBLOCK);
    struct aptus_comm *n = NULL;
    int rc = dpm_link(&d, meet_join, &fd, &n);
    if (!(fl & O_NONBLOCK))
        fcntl(fd, F_SETFL, fl);
    dpm_free(&d);
    if (rc)
        return aptus_error(NULL, rc, fn, "%s", d.why);
    *intercomm = n->handle;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Comm_join)

/* ---- names (MPI_Publish_name, MPI_Lookup_name, MPI_Unpublish_name) ----
 * Under our mpiexec the launcher is the name service (PMI-2 name-publish, name-lookup,
 * name-unpublish: tools/mpiexec/names.c): the first mpiexec of the run holds the run's names --
 * every job of it, on every host, sees them -- and writes each to the directory below as well,
 * which is how jobs started separately share them. Under another launcher (or none) the process
 * uses the directory itself (APTUS_NAME_SERVICE; runtime/names.c): one file per name, shared by
 * every job that names the directory. Either way a process unpublishes the names it published
 * at MPI_Finalize and at its exit; a name whose publisher on this host has died is taken over. */

struct pubname {
    char service[256];
    char port[MPI_MAX_PORT_NAME];
    char file[1024]; /* (the directory's: not under our mpiexec) */
    struct pubname *next;
};
static struct pubname *published;

/* The directory runs share names in, as this process's configuration names it (mpiexec writes and
 * reads the names there: the setting may come from a tune file mpiexec does not read). */
static const char *names_dir_setting(void)
{
    static char dir[900];
    if (aptus_names_dir(aptus_config.name_service, dir, sizeof dir, 0) != 0)
        return NULL;
    return dir;
}

static int names_ours(void)
{
    const char *m = getenv("APTUS_MPIEXEC");
    return m && *m && !aptus_rt.pmi.singleton;
}

/* The file of a name in the directory (made, with make). MPI_SUCCESS or the error. */
static int name_file(char *out, size_t len, const char *service, const char *fn, int make)
{
    char dir[900];
    int e = aptus_names_dir(aptus_config.name_service, dir, sizeof dir, make);
    if (e)
        return aptus_error(NULL, MPI_ERR_SERVICE, fn, "cannot make the name service's directory %s: %s", dir,
                           strerror(e));
    if (aptus_names_file(dir, service, out, len) != 0)
        return aptus_error(NULL, MPI_ERR_ARG, fn, "service name \"%.100s\" is %s", service,
                           *service ? "too long" : "empty");
    return MPI_SUCCESS;
}

/* A name of this process's, unpublished (the launcher's, or its file): 0, or -1 with the
 * launcher's reason in err. */
static int name_drop(const struct pubname *p, char *err, size_t errlen)
{
    if (p->file[0]) {
        aptus_names_remove(p->file, p->port, (long)aptus_rt.pid);
        return 0;
    }
    return aptus_pmi_name("name-unpublish", p->service, p->port, NULL, NULL, 0, err, errlen);
}

int PMPI_Publish_name(const char *service_name, MPI_Info info, const char *port_name)
{
    APTUS_API_LOCK();
    const char *fn = "MPI_Publish_name";
    API_INIT(fn);
    (void)info;
    if (!service_name || !port_name)
        return aptus_error(NULL, MPI_ERR_ARG, fn, "null %s argument", service_name ? "port_name" : "service_name");
    if (strlen(port_name) >= MPI_MAX_PORT_NAME || strchr(port_name, '\n'))
        return aptus_error(NULL, MPI_ERR_ARG, fn, "port_name is not a port name (too long, or holds a newline)");
    if (!*service_name || strlen(service_name) >= sizeof published->service)
        return aptus_error(NULL, MPI_ERR_ARG, fn, "service name \"%.100s\" is %s", service_name,
                           *service_name ? "too long" : "empty");
    struct pubname *p = calloc(1, sizeof *p);
    if (!p)
        return aptus_error(NULL, MPI_ERR_NO_MEM, fn, "out of memory");
    snprintf(p->service, sizeof p->service, "%s", service_name);
    snprintf(p->port, sizeof p->port, "%s", port_name);
    if (names_ours()) {
        char err[300];
        int r = aptus_pmi_name("name-publish", service_name, port_name, names_dir_setting(), NULL, 0, err, sizeof err);
        if (r) {
            free(p);
            return aptus_error(NULL, MPI_ERR_SERVICE, fn, "%s", err);
        }
    } else {
        int rc = name_file(p->file, sizeof p->file, service_name, fn, 1);
        if (rc) {
            free(p);
            return rc;
        }
        if (aptus_names_write(p->file, port_name, (long)aptus_rt.pid) != 0) {
            int e = errno;
            char file[sizeof p->file];
            memcpy(file, p->file, sizeof file);
            free(p);
            if (e == EEXIST)
                return aptus_error(NULL, MPI_ERR_SERVICE, fn, "service name \"%.200s\" is already published",
                                   service_name);
            return aptus_error(NULL, MPI_ERR_SERVICE, fn, "cannot write the name service's file %s: %s", file,
                               strerror(e));
        }
    }
    p->next = published;
    published = p;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Publish_name)

int PMPI_Lookup_name(const char *service_name, MPI_Info info, char *port_name)
{
    APTUS_API_LOCK();
    const char *fn = "MPI_Lookup_name";
    API_INIT(fn);
    (void)info;
    if (!service_name || !port_name)
        return aptus_error(NULL, MPI_ERR_ARG, fn, "null %s argument", service_name ? "port_name" : "service_name");
    char port[MPI_MAX_PORT_NAME];
    if (!*service_name || strlen(service_name) >= sizeof published->service)
        return aptus_error(NULL, MPI_ERR_ARG, fn, "service name \"%.100s\" is %s", service_name,
                           *service_name ? "too long" : "empty");
    if (names_ours()) {
        char err[300];
        if (aptus_pmi_name("name-lookup", service_name, NULL, names_dir_setting(), port, sizeof port, err,
                           sizeof err) != 0)
            return aptus_error(NULL, MPI_ERR_NAME, fn, "%s", err);
    } else {
        char file[1024];
        int rc = name_file(file, sizeof file, service_name, fn, 0), stale = 0;
        if (rc)
            return rc;
        if (aptus_names_read(file, port, sizeof port, &stale) != 0 || stale)
            return aptus_error(NULL, MPI_ERR_NAME, fn, "service name \"%.200s\" is not published", service_name);
    }
    strcpy(port_name, port);
    return MPI_SUCCESS;
}
APTUS_ALIAS(Lookup_name)

int PMPI_Unpublish_name(const char *service_name, MPI_Info info, const char *port_name)
{
    APTUS_API_LOCK();
    const char *fn = "MPI_Unpublish_name";
    API_INIT(fn);
    (void)info;
    if (!service_name || !port_name)
        return aptus_error(NULL, MPI_ERR_ARG, fn, "null %s argument", service_name ? "port_name" : "service_name");
    for (struct pubname **pp = &published; *pp; pp = &(*pp)->next) {
        struct pubname *p = *pp;
        if (strcmp(p->service, service_name))
            continue;
        if (strcmp(p->port, port_name))
            return aptus_error(NULL, MPI_ERR_SERVICE, fn, "service name \"%.200s\" is not published with that port",
                               service_name);
        char err[300];
        int r = name_drop(p, err, sizeof err);
        *pp = p->next;
        free(p);
        if (r)
            return aptus_error(NULL, MPI_ERR_SERVICE, fn, "the launcher did not unpublish \"%.200s\": %s", service_name,
                               err);
        return MPI_SUCCESS;
    }
    return aptus_error(NULL, MPI_ERR_SERVICE, fn, "service name \"%.200s\" was not published by this process",
                       service_name);
}
APTUS_ALIAS(Unpublish_name)

void aptus_dpm_finalize(void)
{
    while (published) {
        struct pubname *p = published;
        char err[300];
        published = p->next;
        (void)name_drop(p, err, sizeof err); /* (what mpiexec still holds goes at its end) */
        free(p);
    }
    while (ports) {
        struct port *p = ports;
        ports = p->next;
        close(p->fd);
        free(p);
    }
}

/* ---- spawn (MPI_Comm_spawn, MPI_Comm_spawn_multiple, MPI_Comm_get_parent) ----
 * The root asks the launcher for the new job with the PMI-2 spawn command: our mpiexec
 * (tools/mpiexec/spawn.c: the first mpiexec of the run starts every job, counts the universe,
 * and answers once the new job's processes have all started, or with why they did not), Slurm
 * (srun --mpi=pmi2) or Hydra. The new job's key space holds one pre-put key, APTUS_PARENT_PORT,
 * the port the parents opened: its MPI_Init connects to it, while the parents accept on it (the
 * steps above), which gives both sides their intercommunicator. */

static MPI_Comm parent_comm = MPI_COMM_NULL;

/* One command of a spawn: what the root knows of it. */
struct app {
    const char *cmd;
    char **argv;
    int n;        /* processes asked for (maxprocs), then to start */
    int soft[64]; /* the counts `soft` allows, ascending (nsoft 0: only n) */
    int nsoft;
    char wdir[PATH_MAX], path[PATH_MAX];
};

static const char *info_get(MPI_Info info, const char *key, char *buf, int len)
{
    int flag = 0;
    if (info == MPI_INFO_NULL || PMPI_Info_get(info, key, len - 1, buf, &flag) != MPI_SUCCESS || !flag)
        return NULL;
    return buf;
}

/* The info value of `soft`: "a:b:c" (a, a+c, ..., up to b), "a:b" (a..b), "a" and lists of them,
 * separated by commas. 0, or -1 when it is not that. */
static int soft_parse(struct app *a, const char *v)
{
    char buf[PATH_MAX];
    snprintf(buf, sizeof buf, "%s", v);
    char *save = NULL;
    int mark[4097] = { 0 };
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        long x[3] = { 0, 0, 1 };
        int k = 0;
        for (char *p = t; k < 3; k++) {
            char *e;
            x[k] = strtol(p, &e, 10);
            if (e == p)
                return -1;
            if (*e != ':') {
                k++;
                if (*e)
                    return -1;
                break;
            }
            p = e + 1;
        }
        if (k == 1)
            x[1] = x[0];
        if (k < 3)
            x[2] = 1;
        if (x[0] < 0 || x[1] < x[0] || x[2] < 1 || x[1] > 4096)
            return -1;
        for (long i = x[0]; i <= x[1]; i += x[2])
            mark[i] = 1;
    }
    a->nsoft = 0;
    for (int i = 0; i <= 4096 && a->nsoft < 64; i++)
        if (mark[i])
            a->soft[a->nsoft++] = i;
    return 0;
}

/* Whether the command can be executed here (the root checks before starting anything). */
static int app_findable(const struct app *a)
{
    char full[2 * PATH_MAX + 2];
    if (strchr(a->cmd, '/')) {
        if (a->cmd[0] != '/' && a->wdir[0])
            snprintf(full, sizeof full, "%s/%s", a->wdir, a->cmd);
        else
            snprintf(full, sizeof full, "%s", a->cmd);
        return access(full, X_OK) == 0;
    }
    const char *env = getenv("PATH");
    char dirs[2 * PATH_MAX + 8];
    snprintf(dirs, sizeof dirs, "%s%s%s", a->path, a->path[0] ? ":" : "", env ? env : "/usr/bin:/bin");
    char *save = NULL;
    for (char *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
        snprintf(full, sizeof full, "%s/%s", *d ? d : ".", a->cmd);
        if (access(full, X_OK) == 0)
            return 1;
    }
    return 0;
}

struct spawn {
    struct app *apps;
    int napps, total;
    int ours;    /* the launcher is our mpiexec (else Slurm, Hydra) */
    int asked;   /* the launcher was asked (spawn_launch) */
    int started; /* ... and said it started the new job, jobid */
    char jobid[64];
    double t0;
    char hosts[PATH_MAX], hostfile[PATH_MAX];
    struct port *port;
};

/* Asks the launcher that started this job to start the new one: its key space holds the port
 * (APTUS_PARENT_PORT) that its processes' MPI_Init connects to. 0, or -1 with the reason in d. */
static int spawn_by_launcher(struct dpm *d, struct spawn *sp)
{
    struct aptus_pmi_cmd *cmds = calloc((size_t)sp->napps, sizeof *cmds);
    if (!cmds) {
        dpm_fail(d, MPI_ERR_NO_MEM, "out of memory");
        return -1;
    }
    /* Several commands under another launcher: each runs under env(1) with APTUS_APPNUM, its
     * MPI_APPNUM (Slurm gives none; Hydra's, the same number, yields to it), unless the command is
     * to be found in `path` (Hydra puts it before the command's name); our mpiexec sets it */
    char ***wrapped = calloc((size_t)sp->napps, sizeof *wrapped);
    char(*appnum)[24] = calloc((size_t)sp->napps, sizeof *appnum);
    int wrap = !sp->ours && sp->napps > 1 && access("/usr/bin/env", X_OK) == 0, n = 0;
    for (int i = 0; i < sp->napps && wrapped && appnum; i++) {
        const struct app *a = &sp->apps[i];
        if (a->n < 1 && !sp->ours) /* (ours takes them: MPI_APPNUM counts every command) */
            continue;
        struct aptus_pmi_cmd *c = &cmds[n++];
        c->cmd = a->cmd;
        c->argv = a->argv;
        c->n = a->n;
        int argc = 0;
        while (a->argv && a->argv[argc])
            argc++;
        if (wrap && !a->path[0] && (wrapped[i] = calloc((size_t)argc + 3, sizeof(char *)))) {
            snprintf(appnum[i], sizeof appnum[i], "APTUS_APPNUM=%d", i);
            wrapped[i][0] = appnum[i];
            wrapped[i][1] = (char *)a->cmd;
            for (int k = 0; k < argc; k++)
                wrapped[i][k + 2] = a->argv[k];
            c->cmd = "/usr/bin/env";
            c->argv = wrapped[i];
        }
        const char *keys[4] = { "wdir", "path", "host", "hostfile" };
        const char *vals[4] = { a->wdir, a->path, sp->hosts, sp->hostfile };
        for (int k = 0; k < 4; k++)
            if (vals[k][0]) {
                c->info_keys[c->ninfo] = keys[k];
                c->info_vals[c->ninfo++] = vals[k];
            }
    }
    char err[300];
    int rc = -1;
    if (!wrapped || !appnum)
        snprintf(err, sizeof err, "out of memory");
    else
        rc = aptus_pmi_spawn(n, cmds, "APTUS_PARENT_PORT", sp->port->name, aptus_config.spawn_timeout, sp->jobid,
                             sizeof sp->jobid, err, sizeof err);
    sp->asked = 1;
    for (int i = 0; wrapped && i < sp->napps; i++)
        free(wrapped[i]);
    free(wrapped);
    free(appnum);
    free(cmds);
    if (rc != 0)
        dpm_fail(d, MPI_ERR_SPAWN, "the launcher did not start the new job: %s%s", err, slurm_hint());
    return rc;
}

/* The root starts the new job as soon as the spawn is planned, before the groups' steps: its
 * processes start (the library's own, their UD channel's) while the parents do theirs. */
static void spawn_launch(struct dpm *d, struct spawn *sp)
{
    sp->t0 = aptus_wtime();
    sp->started = spawn_by_launcher(d, sp) == 0;
}

static void meet_spawn(struct dpm *d, void *arg)
{
    struct spawn *sp = arg;
    if (d->rc || !sp->started)
        return;
    d->deadline = sp->t0 + aptus_config.spawn_timeout;
    meet_accept(d, sp->port);
    d->deadline = 0;
}

/* Checks and plans the spawn at the root: the commands, info keys, universe. */
static void spawn_plan(struct dpm *d, struct spawn *sp, int count, char *cmds[], char **argvs[], const int maxprocs[],
                       const MPI_Info infos[])
{
    const char *mpiexec = getenv("APTUS_MPIEXEC");
    sp->ours = mpiexec && *mpiexec;
    if (aptus_rt.pmi.singleton) {
        dpm_fail(d, MPI_ERR_SPAWN,
                 "this process was started without a launcher, and a new job needs one: start the program with "
                 "mpiexec (or srun --mpi=pmi2)");
        return;
    }
    if (count < 1 || !cmds || !maxprocs) {
        dpm_fail(d, MPI_ERR_ARG, "%s at the root", count < 1 ? "count < 1" : "null array argument");
        return;
    }
    if (!(sp->apps = calloc((size_t)count, sizeof *sp->apps))) {
        dpm_fail(d, MPI_ERR_NO_MEM, "out of memory");
        return;
    }
    sp->napps = count;
    char v[PATH_MAX];
    for (int i = 0; i < count && !d->rc; i++) {
        struct app *a = &sp->apps[i];
        MPI_Info info = infos ? infos[i] : MPI_INFO_NULL;
        a->cmd = cmds[i];
        a->argv = argvs && argvs != MPI_ARGVS_NULL ? argvs[i] : NULL;
        a->n = maxprocs[i];
        if (!a->cmd || !*a->cmd || a->n < 0) {
            dpm_fail(d, a->n < 0 ? MPI_ERR_ARG : MPI_ERR_SPAWN, "command %d: %s", i,
                     a->n < 0 ? "maxprocs < 0" : "no program named");
            break;
        }
        if (info_get(info, "wdir", v, sizeof v))
            snprintf(a->wdir, sizeof a->wdir, "%s", v);
        if (info_get(info, "path", v, sizeof v))
            snprintf(a->path, sizeof a->path, "%s", v);
        if (info_get(info, "soft", v, sizeof v) && soft_parse(a, v) != 0)
            dpm_fail(d, MPI_ERR_INFO_VALUE, "command %d: soft=\"%.100s\" is not a list of a, a:b or a:b:c", i, v);
        const char *h = info_get(info, "host", v, sizeof v);
        if (!h)
            h = info_get(info, "hosts", v, sizeof v);
        if (h) {
            if (sp->hosts[0] && strcmp(sp->hosts, h))
                dpm_fail(d, MPI_ERR_SPAWN,
                         "commands name different hosts (\"%.100s\", \"%.100s\"): one host list "
                         "serves a spawn here",
                         sp->hosts, h);
            snprintf(sp->hosts, sizeof sp->hosts, "%s", h);
        }
        if (info_get(info, "hostfile", v, sizeof v))
            snprintf(sp->hostfile, sizeof sp->hostfile, "%s", v);
        /* (arch and file are accepted and have nothing to say here) */
    }
    /* under our mpiexec the new job starts in the first mpiexec's directory: this process's is
     * named (the one the commands were checked against, and that a job of its own would have) */
    char cwd[PATH_MAX];
    for (int i = 0; i < count && sp->ours && !d->rc; i++) {
        struct app *a = &sp->apps[i];
        if (a->wdir[0] == '/')
            continue;
        if (!getcwd(cwd, sizeof cwd)) {
            dpm_fail(d, MPI_ERR_SPAWN, "command %d: this process's working directory: %s", i, strerror(errno));
            break;
        }
        char rel[PATH_MAX];
        snprintf(rel, sizeof rel, "%s", a->wdir);
        if (snprintf(a->wdir, sizeof a->wdir, "%s%s%s", cwd, rel[0] ? "/" : "", rel) >= (int)sizeof a->wdir)
            dpm_fail(d, MPI_ERR_SPAWN, "command %d: the working directory's path is too long", i);
    }
    if (d->rc)
        return;
    /* the universe: under our mpiexec it is mpiexec's to weigh (it counts every job of the run,
     * waits for room that running jobs may leave, and refuses what does not fit); it is asked here
     * only for `soft` -- what is left, waiting a while (SPAWN_ROOM_WAIT_S) for jobs that are ending
     * to leave the room the full count needs. Under another launcher, MPI_UNIVERSE_SIZE less this
     * job, if named (else the launcher's own resources decide). Each command takes as many as its
     * `soft` allows, if fewer. */
    int *u = NULL, flag = 0;
    PMPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &u, &flag);
    int usize = flag && u ? *u : aptus_rt.size;
    long want = 0, left = getenv("MPI_UNIVERSE_SIZE") ? usize - aptus_rt.size : INT_MAX, live = 0;
    int soft = 0;
    for (int i = 0; i < count; i++) {
        want += sp->apps[i].n;
        soft |= sp->apps[i].nsoft > 0;
    }
    if (sp->ours && !soft)
        left = INT_MAX;
    char err[300];
    for (double t0 = aptus_wtime(); sp->ours && soft;) {
        if (aptus_pmi_universe(&left, &live, err, sizeof err) != 0) {
            dpm_fail(d, MPI_ERR_SPAWN, "mpiexec did not say how much of the universe is free: %s", err);
            return;
        }
        if (want <= left || !live || aptus_wtime() - t0 > SPAWN_ROOM_WAIT_S)
            break;
        unsigned idle = 0;
        for (double t = aptus_wtime(); aptus_wtime() - t < 0.01;)
            aptus_wait_step(&idle);
    }
    sp->total = 0;
    for (int i = 0; i < count; i++) {
        struct app *a = &sp->apps[i];
        long room = left - sp->total;
        if (a->nsoft) {
            int best = -1;
            for (int k = 0; k < a->nsoft; k++)
                if (a->soft[k] <= room && a->soft[k] <= a->n)
                    best = a->soft[k];
            if (best < 0) {
                dpm_fail(d, MPI_ERR_SPAWN,
                         "command %d: no count that soft allows fits the universe's room for %ld more "
                         "(MPI_UNIVERSE_SIZE %d)",
                         i, room < 0 ? 0 : room, usize);
                return;
            }
            a->n = best;
        } else if (a->n > room) {
            dpm_fail(d, MPI_ERR_SPAWN,
                     "command %d asks for %d processes, the universe has room for %ld more (MPI_UNIVERSE_SIZE %d: "
                     "mpiexec --universe-size sets it; info soft allows fewer)",
                     i, a->n, room < 0 ? 0 : room, usize);
            return;
        }
        sp->total += a->n;
    }
    if (sp->total < 1) {
        dpm_fail(d, MPI_ERR_SPAWN, "no process to start (maxprocs %s)", count > 1 ? "all 0" : "0");
        return;
    }
    for (int i = 0; i < count; i++) {
        const struct app *a = &sp->apps[i];
        struct stat st;
        if (a->n < 1 || sp->hosts[0] || sp->hostfile[0]) /* (other hosts: their launcher finds out) */
            continue;
        int e = !a->wdir[0] ? 0 : stat(a->wdir, &st) != 0 ? errno : S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
        if (e) {
            dpm_fail(d, MPI_ERR_SPAWN, "command %d: the working directory '%.200s' (info wdir): %s", i, a->wdir,
                     strerror(e));
            return;
        }
        if (!app_findable(a)) {
            dpm_fail(d, MPI_ERR_SPAWN, "command %d: cannot find the program '%.200s' (%s)", i, a->cmd,
                     strchr(a->cmd, '/') ? "no such executable" : "not in the path, nor in PATH");
            return;
        }
    }
    if (!(sp->port = port_new()))
        dpm_fail(d, MPI_ERR_SPAWN, "cannot open a port for the new job: %s", strerror(errno));
}

static int spawn_common(const char *fn, int count, char *cmds[], char **argvs[], const int maxprocs[],
                        const MPI_Info infos[], int root, MPI_Comm comm, MPI_Comm *intercomm, int errcodes[])
{
    APTUS_OUT_NULL(intercomm, MPI_COMM_NULL);
    GET_COMM(c, comm, fn);
    int arc = dpm_args(c, root, intercomm, "intercomm", fn);
    if (arc)
        return arc;
    struct dpm d = { .fn = fn, .c = c, .root = root, .accepting = 1 };
    struct spawn sp;
    memset(&sp, 0, sizeof sp);
    int me_root = c->rank == root;
    if (me_root) {
        spawn_plan(&d, &sp, count, cmds, argvs, maxprocs, infos);
        d.tag = new_tag();
        if (!d.rc)
            spawn_launch(&d, &sp);
    }
    struct aptus_comm *n = NULL;
    int rc = dpm_link(&d, meet_spawn, &sp, &n);
    if (me_root && rc && sp.ours && sp.asked) /* (started, or perhaps -- no answer -- starting) */
        aptus_pmi_spawn_cancel(sp.started ? sp.jobid : NULL);
    if (me_root)
        port_free(sp.port);
    /* the errcodes: the root's, broadcast (the array is significant everywhere, its length --
     * the processes asked for -- known at the root) */
    int nec = 0, *ec = NULL;
    if (me_root && maxprocs && count > 0)
        for (int i = 0; i < count; i++)
            nec += maxprocs[i] > 0 ? maxprocs[i] : 0;
    int brc = aptus_bcast(&nec, sizeof nec, root, c);
    if (!brc && nec > 0 && !(ec = malloc((size_t)nec * sizeof *ec)))
        aptus_abort_job(MPI_ERR_NO_MEM, "MPI_Comm_spawn: out of memory for the errcodes");
    if (me_root && ec)
        for (int i = 0, k = 0; i < count; i++)
            for (int j = 0; j < maxprocs[i]; j++)
                ec[k++] = !rc && sp.apps && j < sp.apps[i].n ? MPI_SUCCESS : MPI_ERR_SPAWN;
    if (!brc && ec)
        brc = aptus_bcast(ec, (size_t)nec * sizeof *ec, root, c);
    if (!brc && ec && errcodes != MPI_ERRCODES_IGNORE)
        memcpy(errcodes, ec, (size_t)nec * sizeof *ec);
    free(ec);
    if (me_root)
        free(sp.apps);
    if (!rc && brc) {
        rc = brc;
        snprintf(d.why, sizeof d.why, "broadcasting the errcodes failed");
    }
    dpm_free(&d);
    if (rc)
        return aptus_error(c, rc, fn, "%s", d.why);
    *intercomm = n->handle;
    return MPI_SUCCESS;
}

int PMPI_Comm_spawn(const char *command, char *argv[], int maxprocs, MPI_Info info, int root, MPI_Comm comm,
                    MPI_Comm *intercomm, int array_of_errcodes[])
{
    APTUS_API_LOCK();
    char *cmd = (char *)command;
    char **argvs[1] = { argv };
    return spawn_common("MPI_Comm_spawn", 1, &cmd, argvs, &maxprocs, &info, root, comm, intercomm, array_of_errcodes);
}
APTUS_ALIAS(Comm_spawn)

int PMPI_Comm_spawn_multiple(int count, char *array_of_commands[], char **array_of_argv[],
                             const int array_of_maxprocs[], const MPI_Info array_of_info[], int root, MPI_Comm comm,
                             MPI_Comm *intercomm, int array_of_errcodes[])
{
    APTUS_API_LOCK();
    return spawn_common("MPI_Comm_spawn_multiple", count, array_of_commands, array_of_argv, array_of_maxprocs,
                        array_of_info, root, comm, intercomm, array_of_errcodes);
}
APTUS_ALIAS(Comm_spawn_multiple)

int PMPI_Comm_get_parent(MPI_Comm *parent)
{
    APTUS_OUT_NULL(parent, MPI_COMM_NULL);
    APTUS_API_LOCK();
    API_INIT("MPI_Comm_get_parent");
    if (!parent)
        return aptus_error(NULL, MPI_ERR_ARG, "MPI_Comm_get_parent", "null parent argument");
    *parent = parent_comm;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Comm_get_parent)

void aptus_dpm_comm_freed(MPI_Comm h)
{
    if (h == parent_comm && h != MPI_COMM_NULL)
        parent_comm = MPI_COMM_NULL;
}

void aptus_dpm_init_child(void)
{
    /* a job the launcher started for a spawn command finds the parents' port in its key space */
    char port[MPI_MAX_PORT_NAME];
    if (!aptus_pmi_spawned() || aptus_pmi_get(-1, "APTUS_PARENT_PORT", port, sizeof port) != 0)
        return;
    struct aptus_comm *world = aptus_comm_get(MPI_COMM_WORLD), *n = NULL;
    struct dpm d = { .fn = "MPI_Init", .c = world, .root = 0 };
    int rc = dpm_link(&d, meet_connect, port, &n);
    dpm_free(&d);
    if (rc) {
        char msg[400];
        snprintf(msg, sizeof msg, "MPI_Init: a process started by MPI_Comm_spawn cannot reach its parents: %s", d.why);
        aptus_abort_job(MPI_ERR_SPAWN, msg);
    }
    snprintf(n->name, sizeof n->name, "MPI_COMM_PARENT");
    parent_comm = n->handle;
}
