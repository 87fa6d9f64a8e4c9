/* The copy agent (APTUS_RMA_LOOPBACK): a thread of the rank that runs the copies of node-local
 * MPI_Put/MPI_Get handed to it, so that they proceed while the application computes. */
#include "rma/rma_internal.h"

#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/datatype.h"
#include "runtime/config.h"
#include "runtime/lock.h"
#include "runtime/runtime.h"

/* ---- the copy agent (APTUS_RMA_LOOPBACK) ---------------------------------------------------- */

/* A thread of the rank that runs the copies of intra-node MPI_Put/MPI_Get handed to it: the
 * application thread only queues them; they complete (each window counts its own) before the
 * window's next flush or synchronization returns. The queue is a ring under a mutex; the
 * thread spins a while after the last job, then sleeps on a condition variable. */
struct lb_job {
    char *local;                  /* origin side: contiguous bytes, or count elements of dt */
    const struct aptus_dtype *dt; /* NULL: contiguous */
    size_t count, len;            /* len: bytes moved */
    struct rma_seg *segs, one;    /* target ranges (addresses; segs owned by the job, or &one) */
    size_t nsegs;
    int pid, write; /* pid: the target's process for Cross Memory Attach, 0: here */
    int *pending;   /* the window's count */
};

#define LB_RING 1024
static struct {
    pthread_t tid;
    pthread_mutex_t m;
    pthread_cond_t c;
    struct lb_job ring[LB_RING];
    unsigned head, tail; /* tail: next to take */
    int running, stop, sleeping;
} lb = { .m = PTHREAD_MUTEX_INITIALIZER, .c = PTHREAD_COND_INITIALIZER };

static void lb_run(struct lb_job *j)
{
    char *tmp = NULL, *data = j->local;
    const struct rma_seg *sg = j->segs ? j->segs : &j->one;
    if (j->dt) {
        tmp = malloc(j->len ? j->len : 1);
        if (tmp && j->write)
            aptus_dt_pack(j->local, j->count, j->dt, tmp);
        data = tmp;
    }
    if (data && j->pid) {
        (void)rma_cma_move(j->pid, data, sg, j->nsegs, j->write);
    } else if (data) {
        char *p = data;
        for (size_t i = 0; i < j->nsegs; i++) {
            void *addr = (void *)(uintptr_t)sg[i].off;
            if (j->write)
                memcpy(addr, p, sg[i].len);
            else
                memcpy(p, addr, sg[i].len);
            p += sg[i].len;
        }
    }
    if (tmp && !j->write)
        aptus_dt_unpack(tmp, j->count, j->dt, j->local);
    free(tmp);
    free(j->segs);
    __atomic_sub_fetch(j->pending, 1, __ATOMIC_RELEASE);
}

static void *lb_main(void *arg)
{
    (void)arg;
    unsigned idle = 0;
    pthread_mutex_lock(&lb.m);
    while (!lb.stop) {
        if (lb.tail == lb.head) {
            if (++idle < 2000) {
                pthread_mutex_unlock(&lb.m);
                aptus_cpu_relax();
                pthread_mutex_lock(&lb.m);
                continue;
            }
            lb.sleeping = 1;
            pthread_cond_wait(&lb.c, &lb.m);
            lb.sleeping = 0;
            idle = 0;
            continue;
        }
        struct lb_job j = lb.ring[lb.tail % LB_RING];
        lb.tail++;
        pthread_mutex_unlock(&lb.m);
        lb_run(&j);
        idle = 0;
        pthread_mutex_lock(&lb.m);
    }
    pthread_mutex_unlock(&lb.m);
    return NULL;
}

static int lb_start(void)
{
    if (lb.running)
        return 0;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    if (aptus_config.rma_loopback_cpu >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(aptus_config.rma_loopback_cpu, &set);
        pthread_attr_setaffinity_np(&attr, sizeof set, &set);
    }
    lb.stop = 0;
    int rc = pthread_create(&lb.tid, &attr, lb_main, NULL);
    pthread_attr_destroy(&attr);
    if (rc)
        return -1;
    lb.running = 1;
    return 0;
}

/* Hands a transfer to the agent: 1 if it took it (then it owns segs, and the window holds dt
 * until the copy has run), 0: do it yourself. */
static int lb_take(struct aptus_win *w, struct lb_job *j)
{
    if (!aptus_config.rma_loopback || j->len < aptus_config.rma_loopback_min || (!lb.running && lb_start()))
        return 0;
    if (j->dt) {
        if (w->nlb_types == w->caplb_types) {
            int cap = w->caplb_types ? 2 * w->caplb_types : 8;
            const struct aptus_dtype **t = realloc(w->lb_types, sizeof *t * (size_t)cap);
            if (!t)
                return 0;
            w->lb_types = t;
            w->caplb_types = cap;
        }
        aptus_dtype_retain((struct aptus_dtype *)j->dt);
        w->lb_types[w->nlb_types++] = j->dt;
    }
    pthread_mutex_lock(&lb.m);
    if (lb.head - lb.tail >= LB_RING) {
        pthread_mutex_unlock(&lb.m);
        if (j->dt)
            aptus_dtype_release((struct aptus_dtype *)w->lb_types[--w->nlb_types]);
        return 0;
    }
    __atomic_add_fetch(&w->lb_pending, 1, __ATOMIC_RELAXED);
    j->pending = &w->lb_pending;
    lb.ring[lb.head % LB_RING] = *j;
    lb.head++;
    if (lb.sleeping)
        pthread_cond_signal(&lb.c);
    pthread_mutex_unlock(&lb.m);
    rma_stats.lb_jobs++;
    return 1;
}

/* One contiguous copy (the fast path's). */
int rma_lb_take_bytes(struct aptus_win *w, char *local, uint64_t remote, size_t len, int pid, int write)
{
    struct lb_job j = { local, NULL, 0, len, NULL, { remote, len }, 1, pid, write, NULL };
    return lb_take(w, &j);
}

/* Waits until the agent has run every copy of the window. */
void rma_lb_drain(struct aptus_win *w)
{
    unsigned spins = 0;
    while (__atomic_load_n(&w->lb_pending, __ATOMIC_ACQUIRE))
        if (++spins < 1000)
            aptus_cpu_relax();
        else
            sched_yield();
    while (w->nlb_types > 0)
        aptus_dtype_release((struct aptus_dtype *)w->lb_types[--w->nlb_types]);
}

void rma_lb_stop(void)
{
    if (!lb.running)
        return;
    pthread_mutex_lock(&lb.m);
    lb.stop = 1;
    pthread_cond_signal(&lb.c);
    pthread_mutex_unlock(&lb.m);
    pthread_join(lb.tid, NULL);
    lb.running = 0;
    lb.head = lb.tail = 0;
}

/* A put or get to a target of the node, handed to the copy agent if it takes it: the ranges
 * become addresses (in this process, or in the target's for Cross Memory Attach) and the job
 * owns them (*s is then NULL). */
int rma_lb_handover(struct aptus_win *w, const struct rma_target *t, char *buf, size_t count,
                    const struct aptus_dtype *dt, struct rma_seg **s, size_t ns, size_t len, int write)
{
    if (!aptus_config.rma_loopback || len < aptus_config.rma_loopback_min)
        return 0;
    int other = t->path == RMA_PATH_CMA && t->pid != (int)aptus_rt.pid;
    for (size_t i = 0; i < ns; i++)
        (*s)[i].off = other ? (w->flavor == MPI_WIN_FLAVOR_DYNAMIC ? 0 : t->base) + (*s)[i].off
                            : (uint64_t)(uintptr_t)rma_tgt_ptr(w, t, (*s)[i].off);
    /* (one range travels in the job; a list of them is the job's from now on) */
    struct lb_job j = { dt->contig ? buf + dt->true_lb : buf,
                        dt->contig ? NULL : dt,
                        count,
                        len,
                        ns == 1 ? NULL : *s,
                        ns == 1 ? (*s)[0] : (struct rma_seg){ 0, 0 },
                        ns,
                        other ? t->pid : 0,
                        write,
                        NULL };
    if (lb_take(w, &j)) {
        if (ns != 1)
            *s = NULL;
        return 1;
    }
    /* not taken: the ranges back to offsets */
    for (size_t i = 0; i < ns; i++)
        (*s)[i].off = other ? (*s)[i].off - (w->flavor == MPI_WIN_FLAVOR_DYNAMIC ? 0 : t->base)
                            : (*s)[i].off - (uint64_t)(uintptr_t)rma_tgt_ptr(w, t, 0);
    return 0;
}
