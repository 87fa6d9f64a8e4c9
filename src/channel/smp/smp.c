/* The shared-memory channel: one Veloblock fast-path block per ordered pair of ranks on a
 * node, and Cross Memory Attach as the one-sided copy for the rendezvous.
 *
 * Each rank owns one segment holding the blocks it receives into, one per local sender:
 *   [segment header: owner pid][ctrl 0][block 0][ctrl 1][block 1]...
 * Block j is written only by the local rank with index j. Segments are created 0600 with
 * names unique to the job, mapped by every local rank, and unlinked as soon as all are mapped
 * (see aptus_smp_init for the order, which holds under any PMI-2 server). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <linux/futex.h>
#include <stdatomic.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <time.h>

#include "channel/channel.h"
#include "channel/fastpath/veloblock.h"
#include "channel/smp/smp_int.h"
#include "core/datatype.h"
#include "runtime/config.h"
#include "runtime/pmi.h"
#include "runtime/progress.h"
#include "runtime/runtime.h"

static struct {
    int active;
    int doorbell; /* waiting ranks block: senders check the receiver's doorbell */
    uint32_t block_size;
    size_t hdr_size, stride, seg_size;
    void *mine;
    void **mapped;       /* by local index */
    int *local_world;    /* world rank by local index */
    struct smp_ep **rx;  /* open endpoints: the blocks polled */
    struct smp_ep **eps; /* by local index, kept until finalize */
    int nrx;
    uint32_t known;     /* senders of our segment's list already opened */
    uint32_t bell_seen; /* doorbell value when we announced a sleep */
    int starting;       /* in the start-up: any local rank's name may exist (only then do names exist) */
} smp;

static struct smp_seg_header *seg_hdr(void *seg)
{
    return seg;
}

static void seg_name(char *buf, size_t len, int world_rank)
{
    snprintf(buf, len, "/aptus-%s-%d", aptus_rt.pmi.jobid, world_rank);
}

static struct vb_ctrl *seg_ctrl(void *seg, int idx)
{
    return (struct vb_ctrl *)((char *)seg + smp.hdr_size + (size_t)idx * smp.stride);
}

static void *seg_block(void *seg, int idx)
{
    return (char *)seg_ctrl(seg, idx) + sizeof(struct vb_ctrl);
}

static int smp_reaches(int world_rank)
{
    if (world_rank >= aptus_rt.size) /* another job's process (smp_jobs.c) */
        return smp.active && smp_jobs_reaches(world_rank);
    return smp.active && world_rank != aptus_rt.rank && aptus_rt.node_of[world_rank] == aptus_rt.node;
}

int smp_started(void)
{
    return smp.active;
}

uint32_t smp_block_bytes(void)
{
    return smp.block_size;
}

int smp_rings(void)
{
    return smp.doorbell;
}

/* Creates, sizes and maps this rank's segment and initialises its blocks. */
static int seg_create(int n)
{
    char name[128];
    seg_name(name, sizeof name, aptus_rt.rank);
    int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd < 0) {
        fprintf(stderr, "Aptus MPI: rank %d: cannot create shared memory %s: %s\n", aptus_rt.rank, name,
                strerror(errno));
        return -1;
    }
    if (ftruncate(fd, (off_t)smp.seg_size) != 0) {
        fprintf(stderr, "Aptus MPI: rank %d: cannot size shared memory %s to %zu bytes: %s\n", aptus_rt.rank, name,
                smp.seg_size, strerror(errno));
        close(fd);
        return -1;
    }
    void *p = mmap(NULL, smp.seg_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED) {
        fprintf(stderr, "Aptus MPI: rank %d: cannot map shared memory %s (%zu bytes): %s\n", aptus_rt.rank, name,
                smp.seg_size, strerror(errno));
        return -1;
    }
    smp.mine = p;
    struct smp_seg_header *h = smp.mine;
    h->pid = (int32_t)aptus_rt.pid;
    h->nlocal = (uint32_t)n;
    h->block_size = smp.block_size;
    for (int j = 0; j < n; j++)
        vb_block_init(seg_block(smp.mine, j), smp.block_size, seg_ctrl(smp.mine, j));
    return 0;
}

/* Maps the segment of every other local rank (all created: the "made" vote is behind us). */
static int seg_map_peers(int n)
{
    for (int j = 0; j < n; j++) {
        int w = smp.local_world[j];
        if (w == aptus_rt.rank) {
            smp.mapped[j] = smp.mine;
            continue;
        }
        char name[128];
        struct stat st;
        seg_name(name, sizeof name, w);
        int fd = shm_open(name, O_RDWR, 0);
        if (fd < 0) {
            fprintf(stderr, "Aptus MPI: rank %d: cannot open the shared memory of rank %d (%s): %s\n", aptus_rt.rank, w,
                    name, strerror(errno));
            return -1;
        }
        if (fstat(fd, &st) != 0 || (size_t)st.st_size != smp.seg_size) {
            fprintf(stderr,
                    "Aptus MPI: rank %d: the shared memory of rank %d has %lld bytes, expected %zu (do all ranks "
                    "have the same APTUS_SMP_BLOCK_SIZE?)\n",
                    aptus_rt.rank, w, (long long)st.st_size, smp.seg_size);
            close(fd);
            return -1;
        }
        void *p = mmap(NULL, smp.seg_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        close(fd);
        if (p == MAP_FAILED) {
            fprintf(stderr, "Aptus MPI: rank %d: cannot map the shared memory of rank %d (%s): %s\n", aptus_rt.rank, w,
                    name, strerror(errno));
            return -1;
        }
        smp.mapped[j] = p;
    }
    return 0;
}

/* After a vote: 0 to go on, -1 when this rank or a peer failed (the peer is named). */
static int vote_result(int ok, int r, int bad, const char *step)
{
    if (r == 1)
        fprintf(stderr, "Aptus MPI: rank %d: shared-memory start-up failed on rank %d (%s; see its message)\n",
                aptus_rt.rank, bad, step);
    else if (r < 0)
        fprintf(stderr, "Aptus MPI: rank %d: shared-memory start-up: the launcher's key-value space failed (%s)\n",
                aptus_rt.rank, step);
    return ok && r == 0 ? 0 : -1;
}

/* Start-up in three votes among the ranks of the node. A PMI fence alone orders nothing (it
 * may be lazy: Hydra's returns at once), so each step ends with aptus_pmi_barrier, which
 * returns only when every local peer has finished the step, and says whether all succeeded:
 *   1. "ready": every local rank got here. Nothing exists yet, so a rank that failed earlier
 *      (its peers wait here until the launcher ends the job) leaves nothing behind.
 *   2. "made":  every local rank created its segment.
 *   3. "mapped": every local rank mapped every segment; then every rank removes every local
 *      name at once (so a peer killed right after the vote leaves nothing either).
 * A failure anywhere makes every local rank fail, after removing every name. The names exist
 * only between steps 2 and 3. Every rank of the job votes three times (the votes are
 * collective over the job), even one alone on its node. */
static const struct aptus_waiter smp_waiter;
static void smp_set_caps(void);
static void smp_cleanup_files(void);
static int smp_send_frame(struct aptus_ep *ep, const void *hdr, size_t hdrlen, const void *payload, size_t len);
static int smp_send_frame_bell(struct aptus_ep *ep, const void *hdr, size_t hdrlen, const void *payload, size_t len);

static int smp_init(void)
{
    int n = aptus_rt.local_size;
    int ok = 1, bad = -1, r;
    size_t bs = aptus_config.smp_block_size;
    if (bs < 1024 || bs > (1u << 30) || bs % 64) {
        fprintf(stderr, "Aptus MPI: rank %d: APTUS_SMP_BLOCK_SIZE=%zu must be a multiple of 64 between 1K and 1G\n",
                aptus_rt.rank, bs);
        ok = 0;
        bs = 1024;
    }
    smp.block_size = (uint32_t)bs;
    smp.stride = sizeof(struct vb_ctrl) + bs;
    smp.hdr_size = (offsetof(struct smp_seg_header, senders) + (size_t)n * sizeof(uint32_t) + 63) & ~(size_t)63;
    smp.seg_size = smp.hdr_size + (size_t)n * smp.stride;
    smp.local_world = calloc((size_t)n, sizeof(int));
    smp.mapped = calloc((size_t)n, sizeof(void *));
    smp.rx = calloc((size_t)n, sizeof(*smp.rx));
    smp.eps = calloc((size_t)n, sizeof(*smp.eps));
    int *peers = calloc((size_t)n, sizeof(int));
    int npeers = 0;
    if (!smp.local_world || !smp.mapped || !smp.rx || !smp.eps || !peers) {
        fprintf(stderr, "Aptus MPI: rank %d: out of memory in the shared-memory start-up\n", aptus_rt.rank);
        free(peers);
        return APTUS_ERR;
    }
    for (int w = 0, k = 0; w < aptus_rt.size; w++) {
        if (aptus_rt.node_of[w] != aptus_rt.node)
            continue;
        smp.local_world[k++] = w;
        if (w != aptus_rt.rank)
            peers[npeers++] = w;
    }

    r = aptus_pmi_barrier("aptus-smp-ready", ok, peers, npeers, &bad);
    if (vote_result(ok, r, bad, "before creating segments") != 0) {
        free(peers);
        return APTUS_ERR;
    }
    smp.starting = 1; /* from here until step 3, names may exist */
    if (n > 1)
        ok = seg_create(n) == 0;
    r = aptus_pmi_barrier("aptus-smp-made", ok, peers, npeers, &bad);
    if (vote_result(ok, r, bad, "creating segments") != 0) {
        smp_cleanup_files();
        free(peers);
        return APTUS_ERR;
    }
    if (n > 1)
        ok = seg_map_peers(n) == 0;
    r = aptus_pmi_barrier("aptus-smp-mapped", ok, peers, npeers, &bad);
    smp_cleanup_files();
    free(peers);
    if (vote_result(ok, r, bad, "mapping segments") != 0)
        return APTUS_ERR;

    smp.active = 1;
    smp_set_caps();
    /* (also alone on the node: processes of other jobs may come, smp_jobs.c) */
    smp.doorbell = aptus_wait_blocks;
    aptus_channel_smp.send_frame = smp.doorbell ? smp_send_frame_bell : smp_send_frame;
    if (n > 1) {
        /* Frames can come from any local rank before we talk to it: poll our segment's list of
         * senders (and the blocks of those with an endpoint). */
        aptus_channel_poll_enable(&aptus_channel_smp, 1);
        if (smp.doorbell)
            aptus_waiter_set(&smp_waiter);
    }
    return APTUS_OK;
}

/* Removes the segment names. During the start-up every local rank's name is removed, not only
 * this rank's: this runs once all segments are mapped, or when the start-up (or the job)
 * fails, and the names are unique to the job. Also called by the emergency clean-up. */
static void smp_cleanup_files(void)
{
    if (smp.starting && smp.local_world) {
        char name[128];
        for (int j = 0; j < aptus_rt.local_size; j++) {
            seg_name(name, sizeof name, smp.local_world[j]);
            (void)shm_unlink(name);
        }
    }
    smp.starting = 0;
}

/* After every endpoint has been closed (aptus_peers_finalize). */
static void smp_finalize(void)
{
    smp_jobs_finalize();
    for (int j = 0; j < aptus_rt.local_size && smp.mapped; j++)
        if (smp.mapped[j] && smp.mapped[j] != smp.mine)
            munmap(smp.mapped[j], smp.seg_size);
    if (smp.mine)
        munmap(smp.mine, smp.seg_size);
    if (smp.doorbell)
        aptus_waiter_set(NULL);
    aptus_channel_poll_enable(&aptus_channel_smp, 0);
    for (int j = 0; j < aptus_rt.local_size && smp.eps; j++)
        free(smp.eps[j]);
    free(smp.eps);
    free(smp.mapped);
    free(smp.local_world);
    free(smp.rx);
    memset(&smp, 0, sizeof smp);
}

/* The local index of a world rank on our node (local_world is in rank order). */
static int local_index(int world_rank)
{
    int lo = 0, hi = aptus_rt.local_size - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (smp.local_world[mid] == world_rank)
            return mid;
        if (smp.local_world[mid] < world_rank)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -1;
}

/* Opens the endpoint to a local peer: we write block [our local index] of its segment and read
 * block [its index] of ours, and we add ourselves to its list of senders so that it polls us. */
static int smp_ep_open(struct aptus_peer *p, struct aptus_ep **out)
{
    if (p->world_rank >= aptus_rt.size && smp.active)
        return smp_jobs_open(p, out);
    int j = local_index(p->world_rank);
    if (!smp.active || j < 0 || p->world_rank == aptus_rt.rank)
        return APTUS_ERR;
    struct smp_ep *e = smp.eps[j];
    if (e) { /* reopened after a close: the block state lives on */
        *out = &e->ep;
        return APTUS_OK;
    }
    e = calloc(1, sizeof *e);
    if (!e)
        return APTUS_ERR;
    smp.eps[j] = e;
    vb_sender_init(&e->tx, seg_block(smp.mapped[j], aptus_rt.local_rank), smp.block_size,
                   seg_ctrl(smp.mapped[j], aptus_rt.local_rank));
    vb_receiver_init(&e->rx, seg_block(smp.mine, j), smp.block_size, seg_ctrl(smp.mine, j));
    struct smp_seg_header *ph = seg_hdr(smp.mapped[j]);
    e->sleeping = &ph->sleeping;
    e->bell = &ph->bell;
    e->pid = ph->pid;
    e->cma_ok = aptus_config.smp_cma;
    uint32_t slot = atomic_fetch_add_explicit(&ph->nsenders, 1, memory_order_relaxed);
    atomic_store_explicit(&ph->senders[slot], (uint32_t)aptus_rt.local_rank + 1, memory_order_release);
    smp.rx[smp.nrx++] = e;
    *out = &e->ep;
    return APTUS_OK;
}

/* An smp endpoint costs no resource worth freeing early, and its block's state (positions,
 * credits) must survive: closing keeps it (and keeps polling its block, where the peer may
 * still write) until finalize. */
static void smp_ep_close(struct aptus_ep *ep)
{
}

/* The doorbell. A receiver about to sleep sets `sleeping` (then polls once more: the progress
 * engine does); a sender that finds it set after publishing a frame rings. The fences on both
 * sides make sure that either the receiver's last poll sees the frame or the sender sees the
 * flag. Only used when waiting ranks block (smp.doorbell): otherwise senders never look. */
static int smp_wait_arm(void)
{
    struct smp_seg_header *h = seg_hdr(smp.mine);
    smp.bell_seen = atomic_load_explicit(&h->bell, memory_order_relaxed);
    atomic_store_explicit(&h->sleeping, 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_seq_cst);
    return 0;
}

static void smp_wait_sleep(double timeout)
{
    struct smp_seg_header *h = seg_hdr(smp.mine);
    struct timespec ts = { (time_t)timeout, (long)((timeout - (double)(time_t)timeout) * 1e9) };
    (void)syscall(SYS_futex, &h->bell, FUTEX_WAIT, smp.bell_seen, &ts, NULL, 0);
}

static void smp_wait_disarm(void)
{
    atomic_store_explicit(&seg_hdr(smp.mine)->sleeping, 0, memory_order_relaxed);
}

/* Another thread of this rank (the application waking the progress thread): ring our own bell. */
static void smp_wait_kick(void)
{
    struct smp_seg_header *h = seg_hdr(smp.mine);
    atomic_fetch_add_explicit(&h->bell, 1, memory_order_seq_cst);
    (void)syscall(SYS_futex, &h->bell, FUTEX_WAKE, 1, NULL, NULL, 0);
}

static const struct aptus_waiter smp_waiter = { smp_wait_arm, smp_wait_sleep, smp_wait_disarm, NULL, smp_wait_kick };

static inline void smp_ring(struct smp_ep *e)
{
    if (smp.doorbell)
        smp_ring_words(e->sleeping, e->bell);
}

/* No room: the reservation may have published a WRAP marker (vb_reserve_slow wraps before it
 * checks the frame's credits), and only the receiver consuming it frees the skipped bytes. A
 * receiver asleep would not be woken for it (only a committed frame rings): ring now, or every
 * wrap of a full block costs a sleep timeout (APTUS_SLEEP_MAX). */
static int smp_no_room(struct smp_ep *sp)
{
    smp_ring(sp);
    return APTUS_NORES;
}

/* 4K aliasing: a copy whose destination lies a little above its source modulo 4096 stalls,
 * because loads seem to depend on the stores just issued. The payload of a frame sits right
 * after its header, so its address is fixed by the ring position; padding added after the
 * payload moves the whole frame down. Aim for destination = source + 2048 (mod 4096): then
 * the sender's copy in and, with a receive buffer aligned like the send buffer, the receiver's
 * copy out are both far from the bad band. Small copies are not worth the ring space. */
#define APTUS_SMP_ALIAS_MIN       1024
#define APTUS_SMP_ALIAS_BLOCK_MIN (32u * 1024u) /* smaller blocks cannot spare up to 4 KiB a frame */
static uint32_t smp_alias_pad(const struct vb_sender *tx, size_t hdrlen, size_t len, const void *src)
{
    uint64_t frame = vb_frame_bytes((uint32_t)(hdrlen + len));
    if (frame + VB_ALIGN > tx->pos)
        return 0; /* this frame wraps: its place is not known yet */
    uintptr_t payload = (uintptr_t)tx->block + tx->pos - frame + hdrlen;
    uint32_t off = (uint32_t)((payload - (uintptr_t)src) & 4095u);
    if (off >= 512 && off <= 3584)
        return 0;
    return (uint32_t)((off - 2048u) & 4095u) & ~(VB_ALIGN - 1);
}

/* The frame send, in two copies: without the doorbell check (waiting ranks do not block: the
 * default unless oversubscribed) and with it; init puts the right one in the table, so the
 * common case pays nothing for the doorbell. */
static inline __attribute__((always_inline)) int
smp_send_frame_body(struct aptus_ep *ep, const void *hdr, size_t hdrlen, const void *payload, size_t len, int bell)
{
    struct smp_ep *sp = (struct smp_ep *)ep;
    uint32_t total = (uint32_t)(hdrlen + len);
    if (len >= APTUS_SMP_ALIAS_MIN && smp.block_size >= APTUS_SMP_ALIAS_BLOCK_MIN) {
        uint32_t pad = smp_alias_pad(&sp->tx, hdrlen, len, payload);
        if (total + pad <= vb_max_payload(smp.block_size))
            total += pad;
    }
    char *dst = vb_reserve(&sp->tx, total);
    if (!dst)
        return smp_no_room(sp);
    /* The common header size and small payloads are copied inline, without a call. */
    if (hdrlen == 24)
        memcpy(dst, hdr, 24);
    else
        memcpy(dst, hdr, hdrlen);
    char *d = dst + hdrlen;
    const char *src = payload;
    if (len >= 8 && len <= 16) {
        /* Two overlapping 8-byte words cover 8..16 bytes. */
        uint64_t a, b;
        memcpy(&a, src, 8);
        memcpy(&b, src + len - 8, 8);
        memcpy(d, &a, 8);
        memcpy(d + len - 8, &b, 8);
    } else if (len < 8) {
        for (size_t i = 0; i < len; i++)
            d[i] = src[i];
    } else {
        memcpy(d, src, len);
    }
    vb_commit(&sp->tx, total, 0);
    if (bell)
        smp_ring(sp);
    return APTUS_OK;
}

static int smp_send_frame(struct aptus_ep *ep, const void *hdr, size_t hdrlen, const void *payload, size_t len)
{
    return smp_send_frame_body(ep, hdr, hdrlen, payload, len, 0);
}

static int smp_send_frame_bell(struct aptus_ep *ep, const void *hdr, size_t hdrlen, const void *payload, size_t len)
{
    return smp_send_frame_body(ep, hdr, hdrlen, payload, len, 1);
}

/* A non-contiguous payload is packed by the cursor straight into the reserved frame. */
static int smp_send_frame_packed(struct aptus_ep *ep, const void *hdr, size_t hdrlen, struct aptus_dt_cursor *cur,
                                 size_t len)
{
    struct smp_ep *sp = (struct smp_ep *)ep;
    uint32_t total = (uint32_t)(hdrlen + len);
    char *dst = vb_reserve(&sp->tx, total);
    if (!dst)
        return smp_no_room(sp);
    memcpy(dst, hdr, hdrlen);
    aptus_dt_pack_some(cur, dst + hdrlen, len);
    vb_commit(&sp->tx, total, 0);
    smp_ring(sp);
    return APTUS_OK;
}

/* One-sided copy between a list of local pieces and one remote range with Cross Memory
 * Attach: process_vm_readv/writev take at most IOV_MAX pieces per call and may stop early, so
 * the list is consumed as the bytes move. */
static int smp_cma(struct smp_ep *sp, struct iovec *local, int n, uint64_t raddr, int write)
{
    size_t len = 0, done = 0;
    for (int i = 0; i < n; i++)
        len += local[i].iov_len;
    if (!sp->cma_ok)
        return APTUS_ERR;
    int first = 0;
    while (done < len) {
        int k = n - first < IOV_MAX ? n - first : IOV_MAX;
        size_t want = 0;
        for (int i = 0; i < k; i++)
            want += local[first + i].iov_len;
        struct iovec r = { (void *)(uintptr_t)(raddr + done), want };
        ssize_t got = write ? process_vm_writev(sp->pid, local + first, (unsigned long)k, &r, 1, 0)
                            : process_vm_readv(sp->pid, local + first, (unsigned long)k, &r, 1, 0);
        if (got <= 0) {
            if (got < 0 && errno == EINTR)
                continue;
            if (done == 0) {
                /* Not permitted here (or not supported): use the copy path from now on. */
                sp->cma_ok = 0;
                return APTUS_ERR;
            }
            /* A partial copy followed by a failure means the peer's buffer went away. */
            fprintf(stderr, "Aptus MPI: rank %d: cross-memory %s of pid %d failed after %zu of %zu bytes: %s\n",
                    aptus_rt.rank, write ? "write" : "read", (int)sp->pid, done, len, strerror(errno));
            return APTUS_ERR;
        }
        done += (size_t)got;
        /* Skip the pieces done; trim the one done in part. */
        size_t g = (size_t)got;
        while (first < n && g >= local[first].iov_len) {
            g -= local[first].iov_len;
            first++;
        }
        if (g) {
            local[first].iov_base = (char *)local[first].iov_base + g;
            local[first].iov_len -= g;
        }
    }
    return APTUS_OK;
}

static int smp_get(struct aptus_ep *ep, struct iovec *local, int n, uint64_t raddr, uint64_t rkey,
                   struct aptus_completion *comp)
{
    return smp_cma((struct smp_ep *)ep, local, n, raddr, 0);
}

static int smp_put(struct aptus_ep *ep, struct iovec *local, int n, uint64_t raddr, uint64_t rkey,
                   struct aptus_completion *comp)
{
    return smp_cma((struct smp_ep *)ep, local, n, raddr, 1);
}

static int smp_flush(struct aptus_ep *ep, struct aptus_completion *comp)
{
    return APTUS_OK; /* frames and copies are complete when handed over */
}

/* Opens an endpoint to every local rank that has opened one to us since the last look. */
static int smp_discover(struct smp_seg_header *h)
{
    uint32_t n = atomic_load_explicit(&h->nsenders, memory_order_acquire);
    int found = 0;
    while (smp.known < n) {
        uint32_t v = atomic_load_explicit(&h->senders[smp.known], memory_order_acquire);
        if (v == 0)
            break; /* its slot is taken but not written yet */
        struct aptus_peer *p = aptus_peer_get(smp.local_world[v - 1]);
        if (!p || !aptus_peer_ep(p, aptus_channel_smp.id))
            break;
        smp.known++;
        found++;
    }
    return found;
}

static int smp_progress(void)
{
    int seen = 0;
    struct smp_seg_header *h = seg_hdr(smp.mine);
    if (atomic_load_explicit(&h->nsenders, memory_order_relaxed) != smp.known)
        seen += smp_discover(h);
    for (int i = 0; i < smp.nrx; i++)
        seen += smp_poll_block(smp.rx[i]);
    return seen;
}

static size_t smp_memory(void)
{
    return (smp.mine ? smp.seg_size : 0) + smp_jobs_memory();
}

#define SMP_CMA_MIN_OVERSUB ((size_t)64 << 10)

static void smp_set_caps(void)
{
    struct aptus_chan_caps *c = &aptus_channel_smp.caps;
    c->flags = APTUS_CAP_ORDERED | APTUS_CAP_RELIABLE;
    if (aptus_config.smp_cma)
        c->flags |= APTUS_CAP_PUT | APTUS_CAP_GET | APTUS_CAP_REMOTE_FLUSH;
    c->key_size = 0;
    c->frame_max = vb_max_payload(smp.block_size);
    c->eager_max = aptus_config.smp_eager_max;
    c->put_max = c->get_max = aptus_config.smp_cma ? SIZE_MAX : 0;
    c->iov_max = 1 << 20;
    c->chunk = aptus_config.smp_chunk;
    c->get_min = aptus_config.smp_cma_min;
    c->get_busy_min = aptus_config.smp_cma_busy_min;
    c->rr_min = aptus_config.smp_cma ? aptus_config.smp_recv_rndv_min : 0;
    c->hybrid_max = aptus_config.smp_cma ? aptus_config.smp_hybrid_max : 0;
    /* APTUS_SMP_CMA_MIN set: no Cross Memory Attach below it, whoever arrives first */
    if (aptus_config_given("APTUS_SMP_CMA_MIN")) {
        if (c->rr_min && c->rr_min < aptus_config.smp_cma_min)
            c->rr_min = aptus_config.smp_cma_min;
        if (c->hybrid_max < aptus_config.smp_cma_min)
            c->hybrid_max = 0;
    }
    /* On a node with more ranks than cores the streamed copy moves a chunk per turn of both
     * ranks (each waits for the other to get a core), where the read needs the receiver alone:
     * unless APTUS_SMP_CMA_MIN is set, rendezvous messages from 64 KiB are read there
     * (docs/BENCHMARKS.md, "Collectives with ranks sharing cores"). */
    if (aptus_wait_spin_cap >= 0 && !aptus_config_given("APTUS_SMP_CMA_MIN") && c->get_min > SMP_CMA_MIN_OVERSUB)
        c->get_min = SMP_CMA_MIN_OVERSUB;
}

/* A process that writes to other jobs' processes rings doorbells whatever its own job does:
 * whether a receiver sleeps is its own job's choice (smp_jobs.c). From then on every sender of
 * this process checks (a fence and a load per frame). */
void smp_ring_always(void)
{
    if (smp.doorbell)
        return;
    smp.doorbell = 1;
    if (aptus_channel_smp.send_frame == smp_send_frame) /* (not when the fault injection wraps it) */
        aptus_channel_smp.send_frame = smp_send_frame_bell;
}

struct aptus_channel aptus_channel_smp = {
    .name = "smp",
    .init = smp_init,
    .finalize = smp_finalize,
    .cleanup = smp_cleanup_files,
    .quiesce = smp_jobs_quiesce,
    .counter = smp_jobs_counter,
    .reaches = smp_reaches,
    .ep_open = smp_ep_open,
    .ep_close = smp_ep_close,
    .send_frame = smp_send_frame,
    .send_frame_packed = smp_send_frame_packed,
    .put = smp_put,
    .get = smp_get,
    .flush = smp_flush,
    .progress = smp_progress,
    .memory_in_use = smp_memory,
};
