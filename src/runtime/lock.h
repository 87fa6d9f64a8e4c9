/* The library's lock: what makes MPI_THREAD_MULTIPLE and the progress thread safe.
 *
 * One recursive lock guards all of the library's state; every MPI function takes it for its
 * whole call (APTUS_API_LOCK at the top of each PMPI_ function: the lock is released by the
 * compiler-generated clean-up on every return path). It is on only when some thread may call
 * MPI concurrently with another -- MPI_THREAD_MULTIPLE was provided, or the progress thread
 * runs (APTUS_ASYNC_PROGRESS) --; otherwise taking it costs one load and one untaken branch.
 *
 * A thread that waits (aptus_wait_step) hands the lock over for a moment whenever another
 * thread asks for it (aptus_lock_pause), so that a thread blocked in MPI_Recv never keeps the
 * thread that would send the message out; a thread that sleeps on the channels' wait objects
 * drops it for the sleep (aptus_lock_drop / aptus_lock_take).
 *
 * The lock is a mutex with an owner and a depth (a thread may take it again: an MPI function
 * called from an error handler or a reduction callback), and a count of threads asking for it,
 * which is how the holder knows that pausing is worth a system call.
 *
 * MPI_THREAD_MULTIPLE provided does not turn it on at once: the lock is *lazy* (aptus_lock_on ==
 * APTUS_LOCK_LAZY) until a second application thread really enters MPI. Meanwhile the thread
 * that asked for the level (the owner) only counts its calls in progress (no mutex, no atomic
 * read-modify-write); the first other thread to enter asks it to stop (a flag, made visible to
 * the owner by a process-wide memory barrier, membarrier(2)), waits until the owner is outside
 * MPI or has taken the mutex at a point where no operation is half done (its next entry, or a
 * step of a blocking wait), and turns locking on for good. docs/DESIGN.md, "Threads". */
#ifndef APTUS_RUNTIME_LOCK_H
#define APTUS_RUNTIME_LOCK_H

#include <pthread.h>
#include <stdint.h>

struct aptus_lock {
    pthread_mutex_t m;
    uintptr_t owner; /* the holder's aptus_lock_self(), 0 when free (atomic loads/stores) */
    int depth;       /* the holder's */
    int askers;      /* threads blocked taking it (atomic) */
};

extern struct aptus_lock aptus_big_lock;
/* APTUS_LOCK_OFF, APTUS_LOCK_ON once locking is on (it never goes off again), APTUS_LOCK_LAZY while
 * MPI_THREAD_MULTIPLE was provided but only its owner has entered MPI. Nonzero: the MPI functions
 * go through aptus_lock_take_slow / aptus_lock_release_slow. */
#define APTUS_LOCK_OFF  0
#define APTUS_LOCK_ON   1
#define APTUS_LOCK_LAZY 2
extern int aptus_lock_on;
/* Application threads inside an MPI call (taken through aptus_lock_take_slow, released at depth
 * 0; a thread waiting in MPI counts while it hands the lock over): the progress thread stays out
 * while there is one, since that thread makes progress itself. */
extern int aptus_lock_app_inside;
/* Whether the last application thread to leave MPI left background work in flight (a hint for
 * the progress thread, written atomically on the way out; the thread clears it once it finds
 * nothing left to do). */
extern int aptus_lock_left_work;

/* A number unique to the calling thread. */
uintptr_t aptus_lock_self(void);

/* Turns locking on (before a second thread may call MPI: the progress thread's start). */
void aptus_lock_enable(void);
/* Makes the lock lazy, the calling thread its owner (MPI_THREAD_MULTIPLE provided to it), when
 * it is off; turns it on where the process-wide barrier is not available. */
void aptus_lock_enable_lazy(void);

void aptus_lock_take_slow(void);
void aptus_lock_release_slow(void);

/* The lazy lock: its owner thread, its calls in progress, another thread's request, and whether
 * the owner has taken the mutex (lock.c). */
extern _Thread_local char aptus_lock_lazy_mine __attribute__((tls_model("initial-exec")));
extern int aptus_lock_lazy_inside __attribute__((visibility("hidden")));
extern int aptus_lock_lazy_revoke __attribute__((visibility("hidden")));
extern int aptus_lock_lazy_converted __attribute__((visibility("hidden")));
/* The owner takes the mutex at the depth of its calls in progress. */
void aptus_lock_lazy_convert(void);
/* Another thread enters while the lock is lazy: turns locking on, once the owner is outside MPI
 * or holds the mutex. */
void aptus_lock_lazy_switch(void);

/* An entry while locking is not off: for the owner of a lazy lock, counts the call and returns 1
 * (having taken the mutex if another thread asked for it); else returns 0, and the caller takes
 * the lock (aptus_lock_take_slow). */
static inline int aptus_lock_lazy_enter(void)
{
    if (__builtin_expect(__atomic_load_n(&aptus_lock_on, __ATOMIC_RELAXED) != APTUS_LOCK_LAZY, 1))
        return 0;
    if (!aptus_lock_lazy_mine) { /* a second thread: locking goes on */
        aptus_lock_lazy_switch();
        return 0;
    }
    if (__atomic_load_n(&aptus_lock_lazy_converted, __ATOMIC_RELAXED))
        return 0;
    __atomic_store_n(&aptus_lock_lazy_inside, __atomic_load_n(&aptus_lock_lazy_inside, __ATOMIC_RELAXED) + 1,
                     __ATOMIC_RELAXED);
    __asm__ __volatile__("" ::: "memory"); /* the count before the look at the request (lock.c) */
    if (__builtin_expect(__atomic_load_n(&aptus_lock_lazy_revoke, __ATOMIC_ACQUIRE), 0))
        aptus_lock_lazy_convert();
    return 1;
}

/* The end of a call aptus_lock_lazy_enter counted: uncounts it, or releases the mutex the owner
 * took meanwhile (release order: what the call did is seen by the thread that finds it out). */
static inline void aptus_lock_lazy_leave(void)
{
    if (__builtin_expect(__atomic_load_n(&aptus_lock_lazy_converted, __ATOMIC_RELAXED), 0))
        aptus_lock_release_slow();
    else
        __atomic_store_n(&aptus_lock_lazy_inside, __atomic_load_n(&aptus_lock_lazy_inside, __ATOMIC_RELAXED) - 1,
                         __ATOMIC_RELEASE);
}

/* Locking not off: enters as the lazy lock's owner (2) or takes the lock (1). */
static inline int aptus_lock_enter_slow(void)
{
    if (aptus_lock_lazy_enter())
        return 2;
    aptus_lock_take_slow();
    return 1;
}

static inline void aptus_lock_leave_slow(int how)
{
    if (how == 2)
        aptus_lock_lazy_leave();
    else
        aptus_lock_release_slow();
}

/* Takes the lock if locking is on; returns how (the value to give to the guard: 0, not at all). */
static inline int aptus_lock_acquire(void)
{
    if (__builtin_expect(!__atomic_load_n(&aptus_lock_on, __ATOMIC_RELAXED), 1))
        return 0;
    return aptus_lock_enter_slow();
}

static inline void aptus_lock_guard_end(int *taken)
{
    if (*taken)
        aptus_lock_leave_slow(*taken);
}

/* At the top of every MPI function: the lock for the rest of the call. */
#define APTUS_API_LOCK()                                                                                               \
    __attribute__((cleanup(aptus_lock_guard_end))) int aptus_lock_guard_ = aptus_lock_acquire();                       \
    (void)aptus_lock_guard_

/* The form for a function whose body is `return EXPR;`: without locking, EXPR is returned
 * straight (a tail call where the compiler can: nothing is left to do after it); with it,
 * EXPR is evaluated under the lock. The hottest calls (MPI_Send, MPI_Recv, MPI_Isend, ...) use
 * it, so that the unlocked path costs one load and one branch. */
#define APTUS_API_LOCKED(EXPR)                                                                                         \
    do {                                                                                                               \
        if (__builtin_expect(!__atomic_load_n(&aptus_lock_on, __ATOMIC_RELAXED), 1))                                   \
            return (EXPR);                                                                                             \
        int aptus_locked_how_ = aptus_lock_enter_slow();                                                               \
        __typeof__(EXPR) aptus_locked_rc_ = (EXPR);                                                                    \
        aptus_lock_leave_slow(aptus_locked_how_);                                                                      \
        return aptus_locked_rc_;                                                                                       \
    } while (0)

/* Defines `RET NAME PARAMS` returning EXPR, for the hottest calls (MPI_Send, MPI_Recv,
 * MPI_Isend, MPI_Wait, ...): the locked form lives in a separate function that the unlocked path
 * reaches by a tail call, so the compiler lays the unlocked path out exactly as without locking,
 * plus one load and one branch (callgrind: 8-byte MPI_Send, docs/BENCHMARKS.md). The separate
 * function is not marked cold: it is the hot path of a program whose lock is lazy (optimised for
 * size it cost the lazy owner's MPI_Send 14 instructions more). ARGS is PARAMS' names in
 * parentheses. */
#define APTUS_API_FN_HOT(RET, NAME, PARAMS, ARGS, EXPR)                                                                \
    static __attribute__((noinline)) RET NAME##_locked_ PARAMS                                                         \
    {                                                                                                                  \
        if (aptus_lock_lazy_enter()) {                                                                                 \
            RET aptus_lazy_rc_ = (EXPR);                                                                               \
            aptus_lock_lazy_leave();                                                                                   \
            return aptus_lazy_rc_;                                                                                     \
        }                                                                                                              \
        aptus_lock_take_slow();                                                                                        \
        RET aptus_locked_rc_ = (EXPR);                                                                                 \
        aptus_lock_release_slow();                                                                                     \
        return aptus_locked_rc_;                                                                                       \
    }                                                                                                                  \
    RET NAME PARAMS                                                                                                    \
    {                                                                                                                  \
        if (__builtin_expect(__atomic_load_n(&aptus_lock_on, __ATOMIC_RELAXED), 0))                                    \
            return NAME##_locked_ ARGS;                                                                                \
        return (EXPR);                                                                                                 \
    }

/* Whether the calling thread holds the lock. */
int aptus_lock_held(void);
/* If other threads ask for the lock and the caller holds it: lets them have it once, then
 * takes it back (at the same depth). */
void aptus_lock_pause(void);
/* Releases the lock entirely if the caller holds it (returns the depth to restore), and takes it
 * back at that depth. */
int aptus_lock_drop(void);
void aptus_lock_take(int depth);
/* Takes the lock at depth 1 if it is free and no application thread is inside MPI; returns
 * whether it did. The progress thread takes it only so: it never counts among the askers,
 * so an application thread inside MPI never hands the lock over to it (and never waits while
 * it moves data that the application thread would move itself). */
int aptus_lock_try_idle(void);
/* The progress thread, when aptus_lock_try_idle failed: waits until the last application thread
 * leaves MPI -- woken by it at once when aptus_lock_work is nonzero then -- or at most max
 * seconds. Returns whether that thread woke it. */
int aptus_lock_wait_exit(double max);
/* A spinning thread's pause between two looks at a shared word. */
static inline void aptus_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield" ::: "memory");
#else
    __asm__ __volatile__("" ::: "memory");
#endif
}

/* Trylocks an application thread makes, spinning, before it sleeps on the lock (nonzero while
 * the progress thread has a core of its own: it lets go within a pass). */
extern int aptus_lock_spin;

/* Background work in flight that the progress thread should take up as soon as the application
 * leaves MPI (the progress engine's transient tasks; written under the lock). */
extern int aptus_lock_work;
/* Wakes the progress thread if it waits in aptus_lock_wait_exit; returns whether it did. */
int aptus_lock_wake_parked(void);
/* Called when the last application thread leaves MPI with work in flight and the progress thread
 * was not parked (the progress engine wakes it from a sleep on the wait objects); returns whether
 * it woke it. */
extern int (*aptus_lock_exit_hook)(void);
/* Times an application thread woke the progress thread so (statistics). */
extern uint64_t aptus_lock_wakeups;

#endif
