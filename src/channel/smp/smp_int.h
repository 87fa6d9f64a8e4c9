/* What the shared-memory channel's two files share: smp.c (the ranks of this job on the node,
 * in segments every local rank maps) and smp_jobs.c (processes of other jobs on the node:
 * dynamic processes, one block per direction in a memory file of the sender's). */
#ifndef APTUS_CHANNEL_SMP_INT_H
#define APTUS_CHANNEL_SMP_INT_H

#include <linux/futex.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include "channel/channel.h"
#include "channel/fastpath/veloblock.h"

/* The endpoint to one process of the node: the block we write and the block we read, and the
 * receiver's doorbell (its words `sleeping` and `bell`, wherever the receiver keeps them). */
struct smp_ep {
    struct aptus_ep ep;
    struct vb_sender tx;   /* our block to the peer (block NULL: none yet, smp_jobs.c) */
    struct vb_receiver rx; /* the peer's block to us (block NULL: none yet, smp_jobs.c) */
    _Atomic uint32_t *sleeping, *bell;
    pid_t pid;
    int cma_ok;
};

/* Head of each segment: the owner, then the doorbell (the owner says it is going to sleep;
 * senders then ring), then the list of local ranks that have opened an endpoint to the owner
 * (so the owner polls only their blocks). */
struct smp_seg_header {
    _Alignas(64) int32_t pid;
    uint32_t nlocal, block_size;
    _Alignas(64) _Atomic uint32_t sleeping;
    _Atomic uint32_t bell;
    _Alignas(64) _Atomic uint32_t nsenders;
    _Atomic uint32_t senders[]; /* local index + 1 of each sender, in the order they came */
};

extern struct aptus_channel aptus_channel_smp;

/* Hands up to 32 frames of e's block to the message layer: the frames handed. */
static inline int smp_poll_block(struct smp_ep *e)
{
    uint32_t len;
    uint16_t aux;
    const void *f;
    int budget = 32, seen = 0;
    while (budget-- && (f = vb_peek(&e->rx, &len, &aux)) != NULL) {
        aptus_am_dispatch(e->ep.peer, f, len);
        vb_release(&e->rx);
        seen++;
    }
    return seen;
}

/* smp.c, for smp_jobs.c: whether the channel started, the bytes of the blocks this process
 * writes, and whether senders ring receivers' doorbells (waiting ranks block). */
int smp_started(void);
uint32_t smp_block_bytes(void);
int smp_rings(void);
/* From now on every frame rings its receiver's doorbell if it sleeps (see smp.c). */
void smp_ring_always(void);
/* Rings a receiver's doorbell if it sleeps (the fences: see smp_wait_arm in smp.c). */
static inline void smp_ring_words(_Atomic uint32_t *sleeping, _Atomic uint32_t *bell)
{
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load_explicit(sleeping, memory_order_relaxed)) {
        atomic_fetch_add_explicit(bell, 1, memory_order_relaxed);
        (void)syscall(SYS_futex, bell, FUTEX_WAKE, 1, NULL, NULL, 0);
    }
}

/* smp_jobs.c, for smp.c: whether the process of index idx (another job's) is reached, its
 * endpoint opened, the memory held, and the end. */
int smp_jobs_reaches(int idx);
int smp_jobs_open(struct aptus_peer *p, struct aptus_ep **out);
size_t smp_jobs_memory(void);
void smp_jobs_quiesce(void);
/* Its counters: blocks posted to other jobs' processes, blocks of theirs taken, frames read. */
int smp_jobs_counter(const char *name, uint64_t *value);
void smp_jobs_finalize(void);

#endif
