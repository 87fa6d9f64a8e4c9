/* Shared memory with processes of other jobs on this node (dynamic processes: MPI_Comm_spawn,
 * MPI_Comm_accept/connect, MPI_Comm_join; docs/DESIGN.md "Dynamic processes").
 *
 * The segments of smp.c are made by the ranks of one job together, at start-up; a process of
 * another job comes later and alone. So each direction gets a block of its own, made by its
 * sender when it first sends: a memory file (memfd: no name, so nothing is left behind
 * whatever happens) holding [vb_ctrl][block]. The receiver finds it through its door, a memory
 * file every process that takes part in a dynamic-process step opens once:
 *   [magic, pid, room][sleeping, bell][entries claimed][entry 0][entry 1]...
 * The door's descriptor and the pid go in the process's card (channel/procs.c); a process that
 * learns of a card of this node (same boot, same network and pid namespaces) maps the door by
 * /proc/PID/fd/DOOR. To send, it makes its block, claims the next entry of the receiver's door
 * and fills it in (job hash, world rank, pid, the block's descriptor, the block's bytes), the
 * entry's state written last. The receiver sees the count grow, maps the block by
 * /proc/PID/fd/FD, marks the entry taken and polls the block from then on; the sender closes
 * the block's descriptor once it is taken. Frames, credits and the doorbell are smp.c's. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>

#include "channel/smp/smp_int.h"
#include "runtime/config.h"
#include "runtime/progress.h"
#include "runtime/runtime.h"

#define DOOR_MAGIC 0x726f6f44737041ull /* "ApsDoor" */

enum { ENTRY_EMPTY = 0, ENTRY_POSTED = 1, ENTRY_TAKEN = 2, ENTRY_REFUSED = 3 };

struct door_entry {
    _Atomic uint32_t state; /* ENTRY_*: written last by the sender, then by the receiver */
    uint32_t job;           /* the sender's job hash and world rank there */
    int32_t rank;
    int32_t pid;
    int32_t fd;          /* the sender's descriptor of its block's memory file */
    uint32_t block_size; /* the block's bytes (the sender's APTUS_SMP_BLOCK_SIZE) */
    uint64_t spare;
};

struct door {
    _Alignas(64) uint64_t magic;
    int32_t pid;
    uint32_t room; /* entries */
    _Alignas(64) _Atomic uint32_t sleeping;
    _Atomic uint32_t bell;
    _Alignas(64) _Atomic uint32_t claimed;
    _Alignas(64) struct door_entry entry[];
};

/* A process of another job on this node. */
struct fproc {
    struct door *door; /* its door, mapped here (NULL: we cannot reach it) */
    size_t door_len;
    int door_fd;       /* its descriptor of the door */
    struct smp_ep *ep; /* made by our first send or by its first block found */
    void *tx_map, *rx_map;
    size_t tx_len, rx_len;
    int tx_fd; /* open until it took our block */
    uint32_t tx_entry;
};

static struct {
    int tried;     /* the door was made or could not be */
    uint64_t node; /* this node's key (0: none) */
    int fd;
    struct door *door;
    size_t door_len;
    uint32_t known;     /* entries of our door dealt with */
    uint32_t bell_seen; /* doorbell value when we announced a sleep */
    struct fproc **f;   /* by index - size (APTUS_DPM_PROCS entries) */
    int room;
    struct smp_ep **rx; /* endpoints whose blocks we poll */
    int nrx;
    int *pending; /* indexes whose block's descriptor is still open */
    int npending;
    int poller;
    int waiting; /* the door is a wait object */
    size_t bytes;
    uint64_t blocks_out, blocks_in, frames_in; /* counters: smp.jobs_* */
} sj = { .fd = -1, .poller = -1 };

static struct fproc *fproc_new(void)
{
    struct fproc *f = calloc(1, sizeof *f);
    if (f)
        f->tx_fd = -1;
    return f;
}

/* FNV-1a, 64 bits. */
static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

/* The node's key: processes with equal keys share the machine's memory files and name each
 * other's pids alike (same boot, same pid namespace), are on the same node in the launchers'
 * sense (same network namespace: the tests' simulated nodes are namespaces), and may open each
 * other's descriptors through /proc (same effective user; a process that is not dumpable -- a
 * program with file capabilities, PR_SET_DUMPABLE 0 -- offers no door at all). 0: none. */
static uint64_t node_key(void)
{
    if (prctl(PR_GET_DUMPABLE) != 1)
        return 0;
    char boot[64] = "";
    int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, boot, sizeof boot - 1) : -1;
    if (fd >= 0)
        close(fd);
    struct stat net, pid;
    if (n <= 0 || stat("/proc/self/ns/net", &net) != 0 || stat("/proc/self/ns/pid", &pid) != 0)
        return 0;
    uint64_t h = fnv(0xcbf29ce484222325ull, boot, (size_t)n);
    uint64_t ids[5] = { (uint64_t)net.st_dev, (uint64_t)net.st_ino, (uint64_t)pid.st_dev, (uint64_t)pid.st_ino,
                        (uint64_t)geteuid() };
    h = fnv(h, ids, sizeof ids);
    return h ? h : 1;
}

/* A memory file of len bytes, mapped: its descriptor, or -1 (the reason in err). */
static int memfile(const char *name, size_t len, void **map, char *err, size_t errlen)
{
    int fd = memfd_create(name, MFD_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "memfd_create: %s", strerror(errno));
        return -1;
    }
    if (ftruncate(fd, (off_t)len) != 0) {
        snprintf(err, errlen, "sizing a memory file to %zu bytes: %s", len, strerror(errno));
        close(fd);
        return -1;
    }
    *map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (*map == MAP_FAILED) {
        snprintf(err, errlen, "mapping %zu bytes: %s", len, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

/* Maps another process's memory file (its descriptor fd) if it has exactly len bytes (0: any,
 * *len set): the mapping, or NULL (the reason in err). */
static void *map_theirs(int pid, int fd, size_t *len, char *err, size_t errlen)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/fd/%d", pid, fd);
    int d = open(path, O_RDWR | O_CLOEXEC);
    if (d < 0) {
        snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
        return NULL;
    }
    struct stat st;
    void *p = NULL;
    if (fstat(d, &st) != 0 || !S_ISREG(st.st_mode) || (*len && (size_t)st.st_size != *len) || st.st_size <= 0) {
        snprintf(err, errlen, "%s is not the memory file expected (%lld bytes, %zu expected)", path,
                 (long long)st.st_size, *len);
    } else {
        *len = (size_t)st.st_size;
        p = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_SHARED, d, 0);
        if (p == MAP_FAILED) {
            snprintf(err, errlen, "cannot map %s: %s", path, strerror(errno));
            p = NULL;
        }
    }
    close(d);
    return p;
}

/* ---- the door as a wait object (waiting ranks block): senders of other jobs ring it ---- */

static int door_arm(void)
{
    sj.bell_seen = atomic_load_explicit(&sj.door->bell, memory_order_relaxed);
    atomic_store_explicit(&sj.door->sleeping, 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_seq_cst);
    return 0;
}

static void door_sleep(double timeout)
{
    struct timespec ts = { (time_t)timeout, (long)((timeout - (double)(time_t)timeout) * 1e9) };
    (void)syscall(SYS_futex, &sj.door->bell, FUTEX_WAIT, sj.bell_seen, &ts, NULL, 0);
}

static void door_disarm(void)
{
    atomic_store_explicit(&sj.door->sleeping, 0, memory_order_relaxed);
}

static void door_kick(void)
{
    atomic_fetch_add_explicit(&sj.door->bell, 1, memory_order_seq_cst);
    (void)syscall(SYS_futex, &sj.door->bell, FUTEX_WAKE, 1, NULL, NULL, 0);
}

static const struct aptus_waiter door_waiter = { door_arm, door_sleep, door_disarm, NULL, door_kick };

static int jobs_progress(void);

/* Opens this process's door (once). */
static void door_open(void)
{
    char err[192];
    sj.tried = 1;
    if (!aptus_config.smp_jobs || !smp_started() || aptus_config.dpm_procs < 1 || !(sj.node = node_key()))
        return;
    int room = aptus_config.dpm_procs;
    size_t len = offsetof(struct door, entry) + (size_t)room * sizeof(struct door_entry);
    len = (len + 4095) & ~(size_t)4095;
    void *map;
    sj.f = calloc((size_t)room, sizeof *sj.f);
    sj.rx = calloc((size_t)room, sizeof *sj.rx);
    sj.pending = calloc((size_t)room, sizeof *sj.pending);
    int fd = sj.f && sj.rx && sj.pending ? memfile("aptus-smp-door", len, &map, err, sizeof err) : -1;
    if (fd >= 0)
        sj.poller = aptus_poller_add("smp-jobs", jobs_progress, 1);
    if (fd < 0 || sj.poller < 0) {
        /* (other jobs' processes then reach this one over UD, as they would without this file) */
        if (fd >= 0) {
            munmap(map, len);
            close(fd);
        }
        free(sj.f);
        free(sj.rx);
        free(sj.pending);
        sj.f = NULL;
        sj.rx = NULL;
        sj.pending = NULL;
        sj.node = 0;
        return;
    }
    sj.fd = fd;
    sj.door = map;
    sj.door_len = len;
    sj.room = room;
    sj.door->pid = (int32_t)aptus_rt.pid;
    sj.door->room = (uint32_t)room;
    atomic_store_explicit((_Atomic uint64_t *)&sj.door->magic, DOOR_MAGIC, memory_order_release);
    sj.bytes += len;
    if (smp_rings()) {
        aptus_waiter_set(&door_waiter);
        sj.waiting = 1;
    }
}

void aptus_smp_card(struct aptus_proc_card *c)
{
    if (!sj.tried)
        door_open();
    c->node = sj.door ? sj.node : 0;
    c->pid = (int32_t)aptus_rt.pid;
    c->door = sj.door ? sj.fd : -1;
}

int aptus_smp_proc_met(int idx, const struct aptus_proc_card *c)
{
    int k = idx - aptus_rt.size;
    if (k < 0 || k >= sj.room || !sj.f)
        return 0;
    if (sj.f[k]) { /* (left by a card whose index was refused: this index is new) */
        if (sj.f[k]->door)
            munmap(sj.f[k]->door, sj.f[k]->door_len);
        free(sj.f[k]);
        sj.f[k] = NULL;
    }
    if (!sj.door || c->node != sj.node || c->door < 0 || c->pid <= 0)
        return 0;
    char err[192];
    size_t len = 0;
    struct door *d = map_theirs(c->pid, c->door, &len, err, sizeof err);
    if (d &&
        (len < sizeof *d || atomic_load_explicit((_Atomic uint64_t *)&d->magic, memory_order_acquire) != DOOR_MAGIC ||
         d->pid != c->pid)) {
        munmap(d, len);
        d = NULL;
    }
    struct fproc *f = d ? fproc_new() : NULL;
    if (!f) {
        /* (it is then reached over UD; its own blocks to us are refused when they come) */
        if (d)
            munmap(d, len);
        return 0;
    }
    f->door = d;
    f->door_len = len;
    f->door_fd = c->door;
    sj.f[k] = f;
    return 1;
}

int smp_jobs_reaches(int idx)
{
    int k = idx - aptus_rt.size;
    return sj.f && k >= 0 && k < sj.room && sj.f[k] && sj.f[k]->door;
}

/* The endpoint record of a process of another job (made on first need). */
static struct smp_ep *ep_of(struct fproc *f, struct aptus_peer *p)
{
    if (!f->ep && (f->ep = calloc(1, sizeof *f->ep)) != NULL) {
        f->ep->ep.ch = &aptus_channel_smp;
        f->ep->ep.peer = p;
        f->ep->ep.chan = (uint8_t)aptus_channel_smp.id;
        f->ep->cma_ok = aptus_config.smp_cma;
    }
    return f->ep;
}

/* Our first send to it: our block, and an entry in its door. */
int smp_jobs_open(struct aptus_peer *p, struct aptus_ep **out)
{
    int k = p->world_rank - aptus_rt.size;
    struct fproc *f = sj.f && k >= 0 && k < sj.room ? sj.f[k] : NULL;
    struct smp_ep *e = f && f->door ? ep_of(f, p) : NULL;
    if (!e)
        return APTUS_ERR;
    if (e->tx.block) {
        *out = &e->ep;
        return APTUS_OK;
    }
    char err[192];
    uint32_t bs = smp_block_bytes();
    size_t len = sizeof(struct vb_ctrl) + bs;
    void *map;
    int fd = memfile("aptus-smp-block", len, &map, err, sizeof err);
    if (fd < 0) {
        fprintf(stderr, "Aptus MPI: rank %d: no shared-memory block for a process of another job: %s\n", aptus_rt.rank,
                err);
        return APTUS_ERR;
    }
    uint32_t at = atomic_fetch_add_explicit(&f->door->claimed, 1, memory_order_relaxed);
    if (at >= f->door->room) {
        fprintf(stderr,
                "Aptus MPI: rank %d: process %d of another job takes no more shared-memory blocks (its "
                "APTUS_DPM_PROCS=%u)\n",
                aptus_rt.rank, (int)f->door->pid, f->door->room);
        munmap(map, len);
        close(fd);
        return APTUS_ERR;
    }
    struct vb_ctrl *ctrl = map;
    vb_block_init((char *)map + sizeof *ctrl, bs, ctrl);
    vb_sender_init(&e->tx, (char *)map + sizeof *ctrl, bs, ctrl);
    struct door_entry *de = &f->door->entry[at];
    de->job = aptus_proc_job();
    de->rank = aptus_rt.rank;
    de->pid = (int32_t)aptus_rt.pid;
    de->fd = fd;
    de->block_size = bs;
    atomic_store_explicit(&de->state, ENTRY_POSTED, memory_order_release);
    e->sleeping = &f->door->sleeping;
    e->bell = &f->door->bell;
    e->pid = f->door->pid;
    f->tx_map = map;
    f->tx_len = len;
    f->tx_fd = fd;
    f->tx_entry = at;
    sj.pending[sj.npending++] = k;
    sj.bytes += len;
    sj.blocks_out++;
    smp_ring_always(); /* (its job may let waiting ranks sleep, whatever this one does) */
    smp_ring_words(&f->door->sleeping, &f->door->bell); /* (it may sleep: the entry is news) */
    *out = &e->ep;
    return APTUS_OK;
}

/* Whether process pid is gone, or going (its descriptor fd closed: it keeps it open while it
 * lives and needs it). */
static int gone(int pid, int fd)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/fd/%d", pid, fd);
    return (kill(pid, 0) != 0 && errno == ESRCH) || (access(path, F_OK) != 0 && errno == ENOENT);
}

/* A block posted in our door: map it and poll it. 1 when dealt with, 0 to try again later
 * (its sender is not known here yet: its card comes with the step that is under way). */
static int take(struct door_entry *de)
{
    int idx = aptus_proc_find(de->job, de->rank);
    if (idx < 0)
        return 0;
    int k = idx - aptus_rt.size;
    struct aptus_peer *p = aptus_peer_get(idx);
    char err[192] = "";
    if (!p)
        return 0;
    if (k >= sj.room || (!sj.f[k] && !(sj.f[k] = fproc_new()))) {
        snprintf(err, sizeof err, "out of memory");
    } else {
        struct fproc *f = sj.f[k];
        struct smp_ep *e = ep_of(f, p);
        size_t len = sizeof(struct vb_ctrl) + (size_t)de->block_size;
        if (!e)
            snprintf(err, sizeof err, "out of memory");
        else if (de->block_size < 1024 || de->block_size % 64 || de->block_size > (1u << 30))
            snprintf(err, sizeof err, "its block has %u bytes", de->block_size);
        else if (!f->rx_map && (f->rx_map = map_theirs(de->pid, de->fd, &len, err, sizeof err)) != NULL) {
            struct vb_ctrl *ctrl = f->rx_map;
            f->rx_len = len;
            vb_receiver_init(&e->rx, (char *)f->rx_map + sizeof *ctrl, de->block_size, ctrl);
            e->pid = de->pid;
            sj.rx[sj.nrx++] = e;
            sj.bytes += len;
            sj.blocks_in++;
            atomic_store_explicit(&de->state, ENTRY_TAKEN, memory_order_release);
            return 1;
        }
    }
    atomic_store_explicit(&de->state, ENTRY_REFUSED, memory_order_release);
    /* Its frames would be lost: end as the failure policy says, naming the cause. */
    char why[320];
    if (gone(de->pid, de->fd))
        snprintf(why, sizeof why,
                 "it ended (or was killed) before this process could read what it wrote to it through shared memory");
    else
        snprintf(why, sizeof why, "cannot read the shared-memory block it writes to this process (%s)", err);
    aptus_peer_fail(p, &aptus_channel_smp, why);
    return 1;
}

static int jobs_progress(void)
{
    int seen = 0;
    uint32_t n = atomic_load_explicit(&sj.door->claimed, memory_order_acquire);
    if (n > (uint32_t)sj.room)
        n = (uint32_t)sj.room;
    /* Entries in any order: one written in part (or whose sender died while writing it), or whose
     * sender is not known here yet, waits for a later pass without holding up those after it;
     * `known` passes the ones dealt with at its front. */
    for (uint32_t i = sj.known; i < n; i++) {
        struct door_entry *de = &sj.door->entry[i];
        uint32_t st = atomic_load_explicit(&de->state, memory_order_acquire);
        if (st == ENTRY_POSTED && take(de)) {
            st = ENTRY_TAKEN;
            seen++;
        }
        if (i == sj.known && st >= ENTRY_TAKEN)
            sj.known++;
    }
    for (int i = 0; i < sj.npending; i++) {
        struct fproc *f = sj.f[sj.pending[i]];
        if (atomic_load_explicit(&f->door->entry[f->tx_entry].state, memory_order_acquire) >= ENTRY_TAKEN) {
            close(f->tx_fd);
            f->tx_fd = -1;
            sj.pending[i--] = sj.pending[--sj.npending];
        }
    }
    for (int i = 0; i < sj.nrx; i++) {
        int got = smp_poll_block(sj.rx[i]);
        seen += got;
        sj.frames_in += (uint64_t)got;
    }
    return seen;
}

/* A block not taken yet lives only in this process, so its frames (an eager message the receiver
 * has not asked for yet) would go with it: waits until every receiver took ours, or is gone, or
 * `limit` seconds passed (< 0: no limit). */
static void settle(double limit)
{
    unsigned idle = 0;
    double look = 0, end = aptus_wtime() + limit;
    while (sj.npending > 0 && (limit < 0 || aptus_wtime() < end)) {
        aptus_wait_step(&idle);
        double now = aptus_wtime();
        if (now < look)
            continue;
        look = now + 0.1;
        for (int i = 0; i < sj.npending; i++) {
            struct fproc *f = sj.f[sj.pending[i]];
            if (gone(f->door->pid, f->door_fd)) {
                close(f->tx_fd);
                f->tx_fd = -1;
                sj.pending[i--] = sj.pending[--sj.npending];
            }
        }
    }
}

/* MPI_Finalize, after its barrier: as long as it takes (a correct program's receivers read what
 * they were sent). */
void smp_jobs_quiesce(void)
{
    settle(-1);
}

/* A process that leaves without MPI_Finalize (it fails, or calls exit): what it wrote is read if
 * its receivers read it within a second, as a datagram already sent would be. */
void aptus_smp_jobs_exit(void)
{
    /* (not from inside a progress pass -- exit called by a callback: a frame being handled would
     * be handled again) */
    if (sj.npending > 0 && aptus_progress_depth == 0)
        settle(1.0);
}

int smp_jobs_counter(const char *name, uint64_t *value)
{
    const struct aptus_counter t[] = {
        { "smp.jobs_blocks_out", sj.blocks_out },
        { "smp.jobs_blocks_in", sj.blocks_in },
        { "smp.jobs_frames_in", sj.frames_in },
    };
    return aptus_counter_lookup(t, sizeof t / sizeof t[0], name, value);
}

size_t smp_jobs_memory(void)
{
    return sj.bytes;
}

void smp_jobs_finalize(void)
{
    for (int k = 0; k < sj.room && sj.f; k++) {
        struct fproc *f = sj.f[k];
        if (!f)
            continue;
        if (f->door)
            munmap(f->door, f->door_len);
        if (f->tx_map)
            munmap(f->tx_map, f->tx_len);
        if (f->rx_map)
            munmap(f->rx_map, f->rx_len);
        if (f->tx_fd >= 0)
            close(f->tx_fd);
        free(f->ep);
        free(f);
    }
    if (sj.poller >= 0)
        aptus_poller_remove(sj.poller);
    if (sj.waiting)
        aptus_waiter_set(NULL);
    if (sj.door)
        munmap(sj.door, sj.door_len);
    if (sj.fd >= 0)
        close(sj.fd);
    free(sj.f);
    free(sj.rx);
    free(sj.pending);
    memset(&sj, 0, sizeof sj);
    sj.fd = -1;
    sj.poller = -1;
}
