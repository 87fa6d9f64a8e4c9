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
 * which is how the holder knows that pausing is worth a system call. */
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
/* Nonzero once locking is on (it never goes off again). */
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

/* Turns locking on (before a second thread may call MPI). */
void aptus_lock_enable(void);

void aptus_lock_take_slow(void);
void aptus_lock_release_slow(void);

/* Takes the lock if locking is on; returns whether it did (the value to give to the guard). */
static inline int aptus_lock_acquire(void)
{
    if (__builtin_expect(!__atomic_load_n(&aptus_lock_on, __ATOMIC_RELAXED), 1))
        return 0;
    aptus_lock_take_slow();
    return 1;
}

static inline void aptus_lock_guard_end(int *taken)
{
    if (*taken)
        aptus_lock_release_slow();
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
        aptus_lock_take_slow();                                                                                        \
        __typeof__(EXPR) aptus_locked_rc_ = (EXPR);                                                                    \
        aptus_lock_release_slow();                                                                                     \
        return aptus_locked_rc_;                                                                                       \
    } while (0)

/* Defines `RET NAME PARAMS` returning EXPR, for the hottest calls (MPI_Send, MPI_Recv,
 * MPI_Isend, MPI_Wait, ...): the locked form lives in a separate cold function that the
 * unlocked path reaches by a tail call, so the compiler lays the unlocked path out exactly as
 * without locking, plus one load and one branch (callgrind: 8-byte MPI_Send, docs/BENCHMARKS.md).
 * ARGS is PARAMS' names in parentheses. */
#define APTUS_API_FN_HOT(RET, NAME, PARAMS, ARGS, EXPR)                                                                \
    static __attribute__((noinline, cold)) RET NAME##_locked_ PARAMS                                                   \
    {                                                                                                                  \
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
