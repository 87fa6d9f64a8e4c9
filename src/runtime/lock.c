/* The library's lock (see lock.h). */
#include "runtime/lock.h"

#include <errno.h>
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

struct aptus_lock aptus_big_lock = { PTHREAD_MUTEX_INITIALIZER, 0, 0, 0 };
int aptus_lock_on;
int aptus_lock_app_inside;
int aptus_lock_left_work;
int aptus_lock_work;
int aptus_lock_spin;
static int pt_parked;        /* the progress thread waits for the application to leave MPI */
static unsigned pt_exit_seq; /* its futex word: bumped when the last application thread leaves */

static _Thread_local char self_marker;

uintptr_t aptus_lock_self(void)
{
    return (uintptr_t)&self_marker;
}

void aptus_lock_enable(void)
{
    /* (also from lazy: the progress thread is started after MPI_Init_thread chose the level, by
     * the thread that asked for it, before any other thread may enter) */
    __atomic_store_n(&aptus_lock_on, APTUS_LOCK_ON, __ATOMIC_SEQ_CST);
}

static void take_depth(uintptr_t me, int depth);

/* ---- the lazy lock (lock.h) ----
 * The owner's side of the handshake is plain stores and loads (lazy_inside, then lazy_revoke,
 * with only the compiler kept from reordering them); the other thread's side is its store of
 * lazy_revoke, a membarrier(PRIVATE_EXPEDITED) -- which runs a full memory barrier on every
 * thread of the process --, then its loads of lazy_inside / lazy_converted. So either the owner
 * sees the request at its entry, or the other thread sees the owner inside. */
_Thread_local char aptus_lock_lazy_mine __attribute__((tls_model("initial-exec")));
int aptus_lock_lazy_inside, aptus_lock_lazy_revoke, aptus_lock_lazy_converted;
static pthread_mutex_t lazy_switch_m = PTHREAD_MUTEX_INITIALIZER;

void aptus_lock_enable_lazy(void)
{
    if (__atomic_load_n(&aptus_lock_on, __ATOMIC_SEQ_CST) != APTUS_LOCK_OFF)
        return;
    if (syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) != 0) {
        aptus_lock_enable();
        return;
    }
    aptus_lock_lazy_mine = 1;
    __atomic_store_n(&aptus_lock_on, APTUS_LOCK_LAZY, __ATOMIC_SEQ_CST);
}

void aptus_lock_lazy_convert(void)
{
    __atomic_add_fetch(&aptus_lock_app_inside, 1, __ATOMIC_RELAXED);
    take_depth(aptus_lock_self(), __atomic_load_n(&aptus_lock_lazy_inside, __ATOMIC_RELAXED));
    __atomic_store_n(&aptus_lock_lazy_converted, 1, __ATOMIC_RELEASE);
}

void aptus_lock_lazy_switch(void)
{
    pthread_mutex_lock(&lazy_switch_m);
    if (__atomic_load_n(&aptus_lock_on, __ATOMIC_SEQ_CST) == APTUS_LOCK_LAZY) {
        __atomic_store_n(&aptus_lock_lazy_revoke, 1, __ATOMIC_RELEASE);
        if (syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) != 0) {
            /* (it does not fail once registered; without it the switch would not be safe) */
            fprintf(stderr, "Aptus MPI: membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) failed: %s\n", strerror(errno));
            abort();
        }
        while (__atomic_load_n(&aptus_lock_lazy_inside, __ATOMIC_ACQUIRE) > 0 &&
               !__atomic_load_n(&aptus_lock_lazy_converted, __ATOMIC_ACQUIRE))
            sched_yield();
        __atomic_store_n(&aptus_lock_on, APTUS_LOCK_ON, __ATOMIC_SEQ_CST);
    }
    pthread_mutex_unlock(&lazy_switch_m);
}

static void take_depth(uintptr_t me, int depth)
{
    struct aptus_lock *l = &aptus_big_lock;
    if (pthread_mutex_trylock(&l->m) != 0) {
        __atomic_add_fetch(&l->askers, 1, __ATOMIC_RELAXED);
        /* the holder (the progress thread on a core of its own) lets go at the end of its pass:
         * waiting for that awake is much quicker than being woken from a sleep */
        int got = 0;
        for (int i = 0, n = __atomic_load_n(&aptus_lock_spin, __ATOMIC_RELAXED); i < n && !got; i++) {
            aptus_cpu_relax();
            got = !__atomic_load_n(&l->owner, __ATOMIC_RELAXED) && pthread_mutex_trylock(&l->m) == 0;
        }
        if (!got)
            pthread_mutex_lock(&l->m);
        __atomic_sub_fetch(&l->askers, 1, __ATOMIC_RELAXED);
    }
    __atomic_store_n(&l->owner, me, __ATOMIC_RELAXED);
    l->depth = depth;
}

void aptus_lock_take_slow(void)
{
    struct aptus_lock *l = &aptus_big_lock;
    uintptr_t me = aptus_lock_self();
    /* only the holder can find its own number there */
    if (__atomic_load_n(&l->owner, __ATOMIC_RELAXED) == me) {
        l->depth++;
        return;
    }
    __atomic_add_fetch(&aptus_lock_app_inside, 1, __ATOMIC_RELAXED);
    take_depth(me, 1);
}

void aptus_lock_release_slow(void)
{
    struct aptus_lock *l = &aptus_big_lock;
    if (--l->depth > 0)
        return;
    int work = aptus_lock_work; /* (read under the lock) */
    __atomic_store_n(&aptus_lock_left_work, work != 0, __ATOMIC_RELAXED);
    int left = __atomic_sub_fetch(&aptus_lock_app_inside, 1, __ATOMIC_SEQ_CST);
    __atomic_store_n(&l->owner, 0, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&l->m);
    /* The last application thread leaves with background work in flight (a nonblocking
     * collective just started, say): the progress thread, parked until this moment (or asleep on
     * the wait objects: the hook), goes on at once rather than at its next look. (Sequentially
     * consistent on both sides: either it sees no application thread inside, or this sees it
     * parked.) */
    if (!left && work && (aptus_lock_wake_parked() || (aptus_lock_exit_hook && aptus_lock_exit_hook())))
        __atomic_add_fetch(&aptus_lock_wakeups, 1, __ATOMIC_RELAXED);
}

int (*aptus_lock_exit_hook)(void);
uint64_t aptus_lock_wakeups;

int aptus_lock_wake_parked(void)
{
    if (!__atomic_load_n(&pt_parked, __ATOMIC_SEQ_CST) || !__atomic_exchange_n(&pt_parked, 0, __ATOMIC_SEQ_CST))
        return 0;
    __atomic_add_fetch(&pt_exit_seq, 1, __ATOMIC_SEQ_CST);
    (void)syscall(SYS_futex, &pt_exit_seq, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    return 1;
}

int aptus_lock_wait_exit(double max)
{
    unsigned seq = __atomic_load_n(&pt_exit_seq, __ATOMIC_SEQ_CST);
    __atomic_store_n(&pt_parked, 1, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&aptus_lock_app_inside, __ATOMIC_SEQ_CST) > 0) {
        struct timespec ts = { (time_t)max, (long)((max - (double)(time_t)max) * 1e9) };
        (void)syscall(SYS_futex, &pt_exit_seq, FUTEX_WAIT_PRIVATE, seq, &ts, NULL, 0);
    } else {
        sched_yield(); /* no application thread inside: the lock is about to be free */
    }
    __atomic_store_n(&pt_parked, 0, __ATOMIC_SEQ_CST);
    return __atomic_load_n(&pt_exit_seq, __ATOMIC_SEQ_CST) != seq;
}

int aptus_lock_held(void)
{
    return __atomic_load_n(&aptus_lock_on, __ATOMIC_RELAXED) &&
           __atomic_load_n(&aptus_big_lock.owner, __ATOMIC_RELAXED) == aptus_lock_self();
}

int aptus_lock_drop(void)
{
    if (!aptus_lock_held())
        return 0;
    struct aptus_lock *l = &aptus_big_lock;
    int depth = l->depth;
    l->depth = 0;
    __atomic_store_n(&l->owner, 0, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&l->m);
    return depth;
}

void aptus_lock_take(int depth)
{
    if (depth > 0)
        take_depth(aptus_lock_self(), depth);
}

int aptus_lock_try_idle(void)
{
    struct aptus_lock *l = &aptus_big_lock;
    if (__atomic_load_n(&aptus_lock_app_inside, __ATOMIC_RELAXED) > 0 || pthread_mutex_trylock(&l->m) != 0)
        return 0;
    __atomic_store_n(&l->owner, aptus_lock_self(), __ATOMIC_RELAXED);
    l->depth = 1;
    return 1;
}

void aptus_lock_pause(void)
{
    if (__builtin_expect(__atomic_load_n(&aptus_lock_on, __ATOMIC_RELAXED) == APTUS_LOCK_LAZY, 0)) {
        /* the owner waiting inside MPI while another thread wants in: it takes the mutex here,
         * between two progress steps, and hands it over as any holder does */
        if (aptus_lock_lazy_mine && !__atomic_load_n(&aptus_lock_lazy_converted, __ATOMIC_RELAXED) &&
            __atomic_load_n(&aptus_lock_lazy_revoke, __ATOMIC_ACQUIRE) &&
            __atomic_load_n(&aptus_lock_lazy_inside, __ATOMIC_RELAXED) > 0)
            aptus_lock_lazy_convert();
        return;
    }
    if (!__atomic_load_n(&aptus_big_lock.askers, __ATOMIC_RELAXED))
        return;
    int depth = aptus_lock_drop();
    if (!depth)
        return;
    /* the mutex is not fair: without the yield this thread would most often take it straight
     * back while the woken one is still on its way */
    sched_yield();
    aptus_lock_take(depth);
}
