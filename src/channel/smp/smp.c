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

#include "channel/channel.h"
#include "channel/fastpath/veloblock.h"
#include "core/datatype.h"
#include "runtime/config.h"
#include "runtime/pmi.h"
#include "runtime/runtime.h"

struct aptus_smp_peer {
    struct vb_sender tx;   /* our block inside the peer's segment */
    struct vb_receiver rx; /* the peer's block inside our segment */
    pid_t pid;
    int cma_ok;
};

struct smp_seg_header {
    _Alignas(64) int32_t pid;
    uint32_t nlocal, block_size;
};

static struct {
    int active;
    uint32_t block_size;
    size_t stride, seg_size;
    void *mine;
    void **mapped;          /* by local index */
    int *local_world;       /* world rank by local index */
    struct aptus_peer **rx; /* peers polled, excluding self */
    int nrx;
    int starting; /* in the start-up: any local rank's name may exist (only then do names exist) */
} smp;

static void seg_name(char *buf, size_t len, int world_rank)
{
    snprintf(buf, len, "/aptus-%s-%d", aptus_rt.pmi.jobid, world_rank);
}

static struct vb_ctrl *seg_ctrl(void *seg, int idx)
{
    return (struct vb_ctrl *)((char *)seg + sizeof(struct smp_seg_header) + (size_t)idx * smp.stride);
}

static void *seg_block(void *seg, int idx)
{
    return (char *)seg_ctrl(seg, idx) + sizeof(struct vb_ctrl);
}

int aptus_smp_reaches(int world_rank)
{
    return smp.active && aptus_rt.node_of[world_rank] == aptus_rt.node;
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
int aptus_smp_init(void)
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
    smp.seg_size = sizeof(struct smp_seg_header) + (size_t)n * smp.stride;
    smp.local_world = calloc((size_t)n, sizeof(int));
    smp.mapped = calloc((size_t)n, sizeof(void *));
    smp.rx = calloc((size_t)n, sizeof(*smp.rx));
    int *peers = calloc((size_t)n, sizeof(int));
    int npeers = 0;
    if (!smp.local_world || !smp.mapped || !smp.rx || !peers) {
        fprintf(stderr, "Aptus MPI: rank %d: out of memory in the shared-memory start-up\n", aptus_rt.rank);
        free(peers);
        return -1;
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
        return -1;
    }
    smp.starting = 1; /* from here until step 3, names may exist */
    if (n > 1)
        ok = seg_create(n) == 0;
    r = aptus_pmi_barrier("aptus-smp-made", ok, peers, npeers, &bad);
    if (vote_result(ok, r, bad, "creating segments") != 0) {
        aptus_smp_cleanup_files();
        free(peers);
        return -1;
    }
    if (n > 1)
        ok = seg_map_peers(n) == 0;
    r = aptus_pmi_barrier("aptus-smp-mapped", ok, peers, npeers, &bad);
    aptus_smp_cleanup_files();
    free(peers);
    if (vote_result(ok, r, bad, "mapping segments") != 0)
        return -1;

    smp.active = 1;
    for (int j = 0; j < n && n > 1; j++) {
        int w = smp.local_world[j];
        if (w == aptus_rt.rank)
            continue;
        struct aptus_peer *p = aptus_peer_get(w);
        struct aptus_smp_peer *sp = calloc(1, sizeof *sp);
        if (!p || !sp)
            return -1;
        /* We write block [our local index] of the peer's segment; we read block [j] of ours. */
        vb_sender_init(&sp->tx, seg_block(smp.mapped[j], aptus_rt.local_rank), smp.block_size,
                       seg_ctrl(smp.mapped[j], aptus_rt.local_rank));
        vb_receiver_init(&sp->rx, seg_block(smp.mine, j), smp.block_size, seg_ctrl(smp.mine, j));
        sp->pid = ((struct smp_seg_header *)smp.mapped[j])->pid;
        sp->cma_ok = aptus_config.smp_cma;
        p->smp = sp;
        smp.rx[smp.nrx++] = p;
    }
    return 0;
}

/* Removes the segment names. During the start-up every local rank's name is removed, not only
 * this rank's: this runs once all segments are mapped, or when the start-up (or the job)
 * fails, and the names are unique to the job. Also called by the emergency clean-up. */
void aptus_smp_cleanup_files(void)
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

void aptus_smp_finalize(void)
{
    for (int j = 0; j < aptus_rt.local_size && smp.mapped; j++)
        if (smp.mapped[j] && smp.mapped[j] != smp.mine)
            munmap(smp.mapped[j], smp.seg_size);
    if (smp.mine)
        munmap(smp.mine, smp.seg_size);
    for (int i = 0; i < smp.nrx; i++) {
        free(smp.rx[i]->smp);
        smp.rx[i]->smp = NULL;
    }
    free(smp.mapped);
    free(smp.local_world);
    free(smp.rx);
    memset(&smp, 0, sizeof smp);
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

static int smp_send_frame(struct aptus_peer *p, const void *hdr, size_t hdrlen, const void *payload, size_t len)
{
    struct aptus_smp_peer *sp = p->smp;
    uint32_t total = (uint32_t)(hdrlen + len);
    if (len >= APTUS_SMP_ALIAS_MIN && smp.block_size >= APTUS_SMP_ALIAS_BLOCK_MIN) {
        uint32_t pad = smp_alias_pad(&sp->tx, hdrlen, len, payload);
        if (total + pad <= vb_max_payload(smp.block_size))
            total += pad;
    }
    char *dst = vb_reserve(&sp->tx, total);
    if (!dst)
        return 1;
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
    return 0;
}

/* A non-contiguous payload is packed by the cursor straight into the reserved frame. */
static int smp_send_frame_packed(struct aptus_peer *p, const void *hdr, size_t hdrlen, struct aptus_dt_cursor *cur,
                                 size_t len)
{
    struct aptus_smp_peer *sp = p->smp;
    uint32_t total = (uint32_t)(hdrlen + len);
    char *dst = vb_reserve(&sp->tx, total);
    if (!dst)
        return 1;
    memcpy(dst, hdr, hdrlen);
    aptus_dt_pack_some(cur, dst + hdrlen, len);
    vb_commit(&sp->tx, total, 0);
    return 0;
}

static size_t smp_max_frame(struct aptus_peer *p)
{
    return vb_max_payload(smp.block_size);
}

/* One-sided copy into a list of local pieces: process_vm_readv takes at most IOV_MAX of them
 * per call and may stop early, so the list is consumed as the bytes arrive. */
static int smp_rdma_readv(struct aptus_peer *p, struct iovec *local, int n, uint64_t remote_addr, size_t len)
{
    struct aptus_smp_peer *sp = p->smp;
    if (!sp->cma_ok)
        return -1;
    size_t done = 0;
    int first = 0;
    while (done < len) {
        int k = n - first < IOV_MAX ? n - first : IOV_MAX;
        size_t want = 0;
        for (int i = 0; i < k; i++)
            want += local[first + i].iov_len;
        struct iovec r = { (void *)(uintptr_t)(remote_addr + done), want };
        ssize_t got = process_vm_readv(sp->pid, local + first, (unsigned long)k, &r, 1, 0);
        if (got <= 0) {
            if (got < 0 && errno == EINTR)
                continue;
            if (done == 0) {
                /* Not permitted here (or not supported): use the copy path from now on. */
                sp->cma_ok = 0;
                return -1;
            }
            /* A partial read followed by a failure means the peer's buffer went away. */
            fprintf(stderr, "Aptus MPI: rank %d: cross-memory read from pid %d failed after %zu of %zu bytes: %s\n",
                    aptus_rt.rank, (int)sp->pid, done, len, strerror(errno));
            return -1;
        }
        done += (size_t)got;
        /* Skip the pieces filled; trim the one filled in part. */
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
    return 0;
}

static int smp_rdma_read(struct aptus_peer *p, void *local, uint64_t remote_addr, size_t len)
{
    struct iovec l = { local, len };
    return smp_rdma_readv(p, &l, 1, remote_addr, len);
}

static int smp_progress(void)
{
    int seen = 0;
    for (int i = 0; i < smp.nrx; i++) {
        struct aptus_peer *p = smp.rx[i];
        struct vb_receiver *rx = &p->smp->rx;
        uint32_t len;
        uint16_t aux;
        const void *f;
        int budget = 32;
        while (budget-- && (f = vb_peek(rx, &len, &aux)) != NULL) {
            aptus_frame_arrived(p, f, len);
            vb_release(rx);
            seen++;
        }
    }
    return seen;
}

static size_t smp_memory(void)
{
    return smp.mine ? smp.seg_size : 0;
}

const struct aptus_channel aptus_channel_smp = {
    .name = "smp",
    .id = APTUS_CH_SMP,
    .send_frame = smp_send_frame,
    .send_frame_packed = smp_send_frame_packed,
    .max_frame = smp_max_frame,
    .rdma_read = smp_rdma_read,
    .rdma_readv = smp_rdma_readv,
    .progress = smp_progress,
    .memory_in_use = smp_memory,
};
