/* The progress engine: what makes operations move. It knows nothing of channels or messages;
 * the layers above register what it runs:
 *   - pollers (a channel's receive poll, the message layer's queue of waiting frames), each
 *     enabled only while it has something to look at;
 *   - background tasks (operations made of several steps, e.g. MPI_Comm_idup);
 *   - timers (retransmissions of the reliability engine);
 *   - wait objects: how a rank with nothing to do blocks instead of spinning (the smp
 *     doorbell), used after a bounded spin;
 *   - clean-up hooks, run when the job ends abnormally (files in /dev/shm, ...).
 * Nothing here includes from a layer above: everything above reaches it through these
 * registrations. */
#ifndef APTUS_RUNTIME_PROGRESS_H
#define APTUS_RUNTIME_PROGRESS_H

#include <stddef.h>
#include <stdint.h>

#define APTUS_POLLERS_MAX 16

/* Registers a poller (returns its id, or -1 when the table is full). poll returns the number
 * of events it handled (anything that may let a waiting operation complete). */
int aptus_poller_add(const char *name, int (*poll)(void), int enabled);
void aptus_poller_enable(int id, int on);
void aptus_poller_remove(int id);

/* Background work: poll(arg) runs on every progress call until it returns nonzero, then is
 * dropped. It must not block or wait (it may start and test operations). Returns 0, or -1
 * when out of memory. */
int aptus_bg_add(int (*poll)(void *arg), void *arg);

/* Timers: the callback runs from the progress engine once aptus_wtime() >= deadline. A timer
 * is owned by its caller (no allocation); it may be re-armed from its own callback. */
struct aptus_timer {
    double deadline;
    void (*fire)(struct aptus_timer *t);
    struct aptus_timer *next;
    int armed;
};
void aptus_timer_arm(struct aptus_timer *t, double deadline);
void aptus_timer_cancel(struct aptus_timer *t);

/* A wait object: how a layer lets a waiting rank sleep. arm() announces the sleep (from then on
 * the peers that bring work wake us) and returns nonzero when work is already there; sleep()
 * blocks for at most timeout seconds or until woken; disarm() ends it. A waiter that is file
 * descriptors has fds instead of sleep: it fills at most max entries with the descriptors
 * whose readability is its wake-up, returning how many, and all such waiters sleep together
 * in one ppoll by the engine. The smp doorbell, a futex, has sleep and no fds. */
struct pollfd;
struct aptus_waiter {
    int (*arm)(void);
    void (*sleep)(double timeout);
    void (*disarm)(void);
    int (*fds)(struct pollfd *out, int max);
    /* Ends a sleep() of another thread of this process at once (or makes the next one return):
     * the application wakes the progress thread so (optional; descriptor waiters need none). */
    void (*kick)(void);
};
/* Registers a wait object (the smp doorbell, the UD channel's completion queue); NULL drops
 * them all. A sleeping rank sleeps on every descriptor waiter at once when the last one
 * registered has descriptors, else on the last one; while another waiter cannot wake that
 * sleep (the doorbell and a descriptor), for at most 1 ms at a time. */
#define APTUS_WAITERS_MAX 4
void aptus_waiter_set(const struct aptus_waiter *w);
/* Whether waiting ranks block after their spin (set by the runtime from APTUS_WAIT_BLOCK); a
 * layer whose wake-ups cost something on its hot path (the smp sender's doorbell check) reads
 * it. */
extern int aptus_wait_blocks;
/* At most this many idle polls before yielding (-1: APTUS_SPIN_COUNT as it is); the runtime
 * caps the spin on an oversubscribed node, where spinning takes the core from a rank that has
 * work. */
extern int aptus_wait_spin_cap;
/* One progress pass: every enabled poller, due timers, background tasks. Returns events seen. */
int aptus_progress(void);
/* Progress passes under way (a caller that may run inside one -- a frame handler, a background
 * task -- must not start another: a channel would see the frame it is handing up again). */
extern int aptus_progress_depth;
/* Progress passes so far (the number of the one under way), and the number of the first pass after
 * a sleep on descriptors that something woke (not the timeout): what that pass finds arrived while
 * the rank slept, and woke it at once. A layer that times arrivals tells so a rank that was away
 * (computing, or waiting for its core) from one that was waiting for them. */
extern uint64_t aptus_progress_pass, aptus_progress_woke;
/* The progress thread's sleeps that ended (a frame, a timer, a kick or the guard's timeout). */
extern uint64_t aptus_progress_thread_wakeups;

/* A progress pass for a call that polls (MPI_Test*, MPI_Iprobe, MPI_Parrived, MPI_Win_test, ...):
 * returns what aptus_progress() returns. On an oversubscribed node (aptus_wait_spin_cap >= 0) a
 * pass that sees nothing counts towards a streak of empty polls made back to back (a tight
 * polling loop of the application); a streak then gives the core away the way a waiting loop
 * does (aptus_wait_step: yields after the spin, then sleeps on the wait objects), so that the
 * rank that would send what the poller looks for gets the core. Polls with other work between
 * them, or ranks with cores of their own, pay nothing but the test. */
void aptus_poll_idle(void);
/* Polls that gave the core away so far (statistics). */
uint64_t aptus_poll_idle_given(void);
static inline int aptus_progress_poll(void)
{
    int n = aptus_progress();
    if (__builtin_expect(aptus_wait_spin_cap >= 0, 0) && n == 0)
        aptus_poll_idle();
    return n;
}

/* Something that a sleeping rank could not be woken for (frames waiting for room) holds the
 * engine awake while the count is nonzero. */
void aptus_progress_hold_awake(int delta);

/* Clean-up hooks, run (most recent first) by aptus_cleanup_run when the job ends abnormally;
 * each must be safe to call at any time, more than once. Returns -1 when the table is full. */
int aptus_cleanup_add(void (*fn)(void));
void aptus_cleanup_run(void);

/* One step of a waiting loop: progress; after APTUS_SPIN_COUNT idle steps yields the CPU on
 * each step, and after APTUS_YIELD_COUNT more, when aptus_wait_blocks, blocks on the wait
 * object. */
void aptus_wait_step(unsigned *idle);
/* One step of a waiting loop that keeps the library's lock and never sleeps (it waits for a word
 * in shared memory, whose change rings no doorbell): progress; after the spin, yields the CPU. */
void aptus_spin_step(unsigned *idle);

/* A background task that only waits for messages (it advances when operations complete, which
 * happens on progress passes that see frames): unlike the others it lets a waiting rank sleep. */
int aptus_bg_add_passive(int (*poll)(void *arg), void *arg);
/* A passive task that does not wake the progress thread when the application leaves MPI (the
 * others do: runtime/lock.h, aptus_lock_work): one that lives as long as an object (a window's
 * agent), or one too small for the thread to gain anything (a small schedule). */
int aptus_bg_add_quiet(int (*poll)(void *arg), void *arg);
/* Background tasks still running. */
int aptus_bg_count(void);

/* The progress thread (APTUS_ASYNC_PROGRESS=1): runs progress passes while the application
 * computes, taking the library's lock (runtime/lock.h) for them, and sleeps on the wait objects
 * after APTUS_ASYNC_PROGRESS_SPIN idle passes. start turns locking on; returns -1 with a
 * message in err when the thread cannot start. stop joins it (the caller may hold the lock). */
int aptus_progress_thread_start(char *err, size_t errlen);
/* Whether the progress thread has (or, once stopped, had) a core of its own
 * (APTUS_ASYNC_PROGRESS_OWN_CORE); _now: it runs, and has one. */
int aptus_progress_thread_own_core(void);
int aptus_progress_thread_own_core_now(void);
void aptus_progress_thread_stop(void);

/* Drops every registration (MPI_Finalize). Clean-up hooks stay. */
void aptus_progress_reset(void);

#endif
