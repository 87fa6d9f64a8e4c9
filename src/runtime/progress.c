/* The progress engine (see progress.h). */
#include "runtime/progress.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "runtime/config.h"
#include "runtime/lock.h"
#include "runtime/runtime.h"

struct poller {
    const char *name;
    int (*poll)(void);
    int enabled, used;
};

struct bg_task {
    int (*poll)(void *);
    void *arg;
    int passive; /* waits for messages only: the rank may sleep meanwhile */
    int wakes;   /* work the progress thread takes up when the application leaves MPI */
};

static struct {
    struct poller pollers[APTUS_POLLERS_MAX];
    int (*active[APTUS_POLLERS_MAX])(void); /* the enabled pollers, in registration order */
    int nactive;
    struct bg_task *bg;
    int nbg, bg_cap;
    int nbg_poll;               /* tasks that need polling (not passive): the rank does not sleep */
    int in_bg;                  /* running the background tasks (no re-entry) */
    struct aptus_timer *timers; /* sorted by deadline */
    int in_timers;
    const struct aptus_waiter *waiters[APTUS_WAITERS_MAX];
    int nwaiters;
    int awake_holds;
} pe;

int aptus_wait_blocks;
int aptus_wait_spin_cap = -1;

#define APTUS_CLEANUP_MAX 8
static void (*cleanups[APTUS_CLEANUP_MAX])(void);
static int ncleanups;

static void rebuild_active(void)
{
    pe.nactive = 0;
    for (int i = 0; i < APTUS_POLLERS_MAX; i++)
        if (pe.pollers[i].used && pe.pollers[i].enabled)
            pe.active[pe.nactive++] = pe.pollers[i].poll;
}

int aptus_poller_add(const char *name, int (*poll)(void), int enabled)
{
    for (int i = 0; i < APTUS_POLLERS_MAX; i++) {
        if (pe.pollers[i].used)
            continue;
        pe.pollers[i] = (struct poller){ name, poll, enabled != 0, 1 };
        rebuild_active();
        return i;
    }
    return -1;
}

void aptus_poller_enable(int id, int on)
{
    if (id < 0 || id >= APTUS_POLLERS_MAX || pe.pollers[id].enabled == (on != 0))
        return;
    pe.pollers[id].enabled = on != 0;
    rebuild_active();
}

void aptus_poller_remove(int id)
{
    if (id < 0 || id >= APTUS_POLLERS_MAX)
        return;
    memset(&pe.pollers[id], 0, sizeof pe.pollers[id]);
    rebuild_active();
}

static int bg_add(int (*poll)(void *arg), void *arg, int passive, int wakes)
{
    if (pe.nbg == pe.bg_cap) {
        int cap = pe.bg_cap ? 2 * pe.bg_cap : 8;
        struct bg_task *t = realloc(pe.bg, (size_t)cap * sizeof *t);
        if (!t)
            return -1;
        pe.bg = t;
        pe.bg_cap = cap;
    }
    pe.bg[pe.nbg++] = (struct bg_task){ poll, arg, passive, wakes };
    if (!passive)
        pe.nbg_poll++;
    if (wakes)
        aptus_lock_work++;
    return 0;
}

int aptus_bg_add(int (*poll)(void *arg), void *arg)
{
    return bg_add(poll, arg, 0, 1);
}

int aptus_bg_add_passive(int (*poll)(void *arg), void *arg)
{
    return bg_add(poll, arg, 1, 1);
}

int aptus_bg_add_quiet(int (*poll)(void *arg), void *arg)
{
    return bg_add(poll, arg, 1, 0);
}

int aptus_bg_count(void)
{
    return pe.nbg;
}

static int bg_run(void)
{
    int done = 0;
    pe.in_bg = 1;
    for (int i = 0; i < pe.nbg;) {
        if (pe.bg[i].poll(pe.bg[i].arg)) {
            if (!pe.bg[i].passive)
                pe.nbg_poll--;
            if (pe.bg[i].wakes)
                aptus_lock_work--;
            pe.bg[i] = pe.bg[--pe.nbg];
            done++;
        } else {
            i++;
        }
    }
    pe.in_bg = 0;
    return done;
}

void aptus_timer_arm(struct aptus_timer *t, double deadline)
{
    if (t->armed)
        aptus_timer_cancel(t);
    t->deadline = deadline;
    t->armed = 1;
    struct aptus_timer **pp = &pe.timers;
    while (*pp && (*pp)->deadline <= deadline)
        pp = &(*pp)->next;
    t->next = *pp;
    *pp = t;
}

void aptus_timer_cancel(struct aptus_timer *t)
{
    if (!t->armed)
        return;
    for (struct aptus_timer **pp = &pe.timers; *pp; pp = &(*pp)->next) {
        if (*pp == t) {
            *pp = t->next;
            break;
        }
    }
    t->armed = 0;
    t->next = NULL;
}

static int timers_run(void)
{
    int fired = 0;
    double now = aptus_wtime();
    pe.in_timers = 1;
    while (pe.timers && pe.timers->deadline <= now) {
        struct aptus_timer *t = pe.timers;
        pe.timers = t->next;
        t->armed = 0;
        t->next = NULL;
        t->fire(t); /* may re-arm t */
        fired++;
    }
    pe.in_timers = 0;
    return fired;
}

void aptus_waiter_set(const struct aptus_waiter *w)
{
    if (!w) {
        pe.nwaiters = 0;
        return;
    }
    for (int i = 0; i < pe.nwaiters; i++)
        if (pe.waiters[i] == w)
            return;
    if (pe.nwaiters < APTUS_WAITERS_MAX)
        pe.waiters[pe.nwaiters++] = w;
}

void aptus_progress_hold_awake(int delta)
{
    pe.awake_holds += delta;
}

int aptus_cleanup_add(void (*fn)(void))
{
    for (int i = 0; i < ncleanups; i++)
        if (cleanups[i] == fn)
            return 0;
    if (ncleanups == APTUS_CLEANUP_MAX)
        return -1;
    cleanups[ncleanups++] = fn;
    return 0;
}

void aptus_cleanup_run(void)
{
    for (int i = ncleanups - 1; i >= 0; i--)
        cleanups[i]();
}

int aptus_progress_depth;
uint64_t aptus_progress_pass, aptus_progress_woke;
uint64_t aptus_progress_thread_wakeups;

int aptus_progress(void)
{
    int n = 0;
    aptus_progress_depth++;
    aptus_progress_pass++;
    for (int i = 0; i < pe.nactive; i++)
        n += pe.active[i]();
    if (pe.timers && !pe.in_timers)
        n += timers_run();
    if (pe.nbg && !pe.in_bg)
        n += bg_run();
    aptus_progress_depth--;
    return n;
}

/* The longest a rank sleeps without being woken: a guard, so that a wake-up lost to a bug
 * costs time instead of hanging the job. */
#define APTUS_SLEEP_MAX 0.05

/* With several wait objects the rank sleeps on the last one registered, and at most this long,
 * since the others cannot wake it (the smp doorbell is a futex, the UD channel's a file
 * descriptor): a bound on how late a frame on another one is seen by a sleeping rank. */
#define APTUS_SLEEP_SHARED 0.001

/* Descriptors one sleep waits on at most (UD: 1, RC: 2). */
#define APTUS_WAIT_FDS_MAX 8

/* Set in the progress thread: it takes the library lock back only while no application thread
 * is inside MPI (pt_take). */
static _Thread_local int pt_self;
static void pt_take(void);

/* The progress thread sleeps on the wait objects (block_once): an application thread leaving MPI
 * with work in flight wakes it (pt_exit_kick) through the last waiter's kick or, when it sleeps
 * on descriptors, through pt_kick_fd (an eventfd among them). Set while it holds the lock, so
 * that a thread that starts work after it (it takes the lock then) sees it. */
static int pt_blocked;
static int pt_kicked; /* the last wake-up from that sleep was the application's */
static int pt_kick_fd = -1;
static void pt_letout(void);

static void block_once(double max)
{
    int n = pe.nwaiters, armed = 0, ready = 0;
    if (!n || pe.awake_holds > 0 || pe.nbg_poll) {
        sched_yield();
        return;
    }
    while (armed < n && !ready)
        ready = pe.waiters[armed++]->arm();
    /* Anything that arrived before the announcements is seen by this pass. */
    if (!ready && aptus_progress() == 0) {
        /* The last waiter has descriptors: sleep on every waiter's descriptors at once. */
        struct pollfd pfd[APTUS_WAIT_FDS_MAX];
        int nfd = 0, others = 0;
        if (pe.waiters[n - 1]->fds) {
            for (int i = 0; i < n; i++) {
                if (pe.waiters[i]->fds)
                    nfd += pe.waiters[i]->fds(pfd + nfd, APTUS_WAIT_FDS_MAX - nfd);
                else
                    others++;
            }
        }
        double timeout = (nfd ? others : n > 1) ? APTUS_SLEEP_SHARED : max;
        if (pe.timers) {
            double left = pe.timers->deadline - aptus_wtime();
            timeout = left < timeout ? (left > 0 ? left : 0) : timeout;
        }
        if (pt_self) {
            if (nfd && pt_kick_fd >= 0 && nfd < APTUS_WAIT_FDS_MAX)
                pfd[nfd++] = (struct pollfd){ pt_kick_fd, POLLIN, 0 };
            __atomic_store_n(&pt_blocked, 1, __ATOMIC_SEQ_CST);
        }
        /* other threads may use the library while this one sleeps (the waiters stay armed:
         * what they bring wakes us) */
        int depth = aptus_lock_drop(), woke = 0;
        if (timeout > 0 && nfd) {
            struct timespec ts = { (time_t)timeout, (long)((timeout - (double)(time_t)timeout) * 1e9) };
            woke = ppoll(pfd, (nfds_t)nfd, &ts, NULL) > 0;
        } else if (timeout > 0 && pe.waiters[n - 1]->sleep) {
            pe.waiters[n - 1]->sleep(timeout);
        }
        if (pt_self) {
            __atomic_store_n(&pt_blocked, 0, __ATOMIC_SEQ_CST);
            uint64_t v;
            if (pt_kick_fd >= 0)
                (void)!read(pt_kick_fd, &v, sizeof v); /* (non-blocking: drains a kick) */
            if (__atomic_exchange_n(&pt_kicked, 0, __ATOMIC_SEQ_CST))
                pt_letout();
            pt_take();
        } else {
            aptus_lock_take(depth);
        }
        /* (under the lock again: the pass counter is the lock holder's) */
        if (woke)
            aptus_progress_woke = aptus_progress_pass + 1;
    }
    while (armed > 0)
        pe.waiters[--armed]->disarm();
}

/* Idle polls of a waiting (or polling) rank before it yields: APTUS_SPIN_COUNT, capped on an
 * oversubscribed node. */
static unsigned spin_limit(void)
{
    unsigned spin = (unsigned)aptus_config.spin_count;
    if (aptus_wait_spin_cap >= 0 && spin > (unsigned)aptus_wait_spin_cap)
        spin = (unsigned)aptus_wait_spin_cap;
    return spin;
}

/* The n-th idle poll after the spin: yield the CPU (another rank on this core may be the one
 * that would send what we wait for), or after APTUS_YIELD_COUNT yields, when blocking is on,
 * sleep on the wait objects for at most max_sleep. With several threads in the library, only the
 * progress thread sleeps: a thread asleep would not hear of what another thread's progress
 * completes for it. */
static void give_core_away(unsigned n, double max_sleep)
{
    if (aptus_wait_blocks && __atomic_load_n(&aptus_lock_on, __ATOMIC_RELAXED) != APTUS_LOCK_ON &&
        n > (unsigned)aptus_config.yield_count)
        block_once(max_sleep);
    else
        sched_yield();
}

/* A waiting loop that must not sleep (nothing rings a doorbell for what it waits for): progress,
 * spin, then yield. */
void aptus_spin_step(unsigned *idle)
{
    if (aptus_progress() > 0)
        *idle = 0;
    else if (++*idle <= spin_limit())
        aptus_cpu_relax();
    else
        sched_yield();
}

void aptus_wait_step(unsigned *idle)
{
    if (__builtin_expect(__atomic_load_n(&aptus_lock_on, __ATOMIC_RELAXED), 0))
        aptus_lock_pause(); /* another thread may be the one that sends what we wait for */
    if (aptus_progress() > 0) {
        *idle = 0;
        return;
    }
    /* spin, then give the core away */
    unsigned spin = spin_limit();
    if (++*idle > spin)
        give_core_away(*idle - spin, APTUS_SLEEP_MAX);
}

/* Empty polls back to back (aptus_progress_poll): a poll that comes more than this long after
 * the last one ends the streak -- the application did something else in between. */
#define APTUS_POLL_GAP 20e-6
/* The longest a poller sleeps when nothing wakes it: a poll returns soon whatever happens. */
#define APTUS_POLL_SLEEP_MAX 0.001

static struct {
    double last;     /* when the last empty poll of the streak returned */
    unsigned streak; /* empty polls in a row */
    uint64_t given;  /* polls that gave the core away (statistics) */
} poll_idle;

uint64_t aptus_poll_idle_given(void)
{
    return poll_idle.given;
}

void aptus_poll_idle(void)
{
    double now = aptus_wtime();
    if (now - poll_idle.last > APTUS_POLL_GAP)
        poll_idle.streak = 0;
    unsigned spin = spin_limit();
    if (++poll_idle.streak > spin) {
        give_core_away(poll_idle.streak - spin, APTUS_POLL_SLEEP_MAX);
        poll_idle.given++;
        now = aptus_wtime(); /* the time given away is not the application's */
    }
    poll_idle.last = now;
}

/* ---- the progress thread (APTUS_ASYNC_PROGRESS) --------------------------------------------- */

static struct {
    pthread_t tid;
    int running, stop;
} pt;
static int pt_own; /* the thread has a core of its own (pt_own_core) */

/* With a core of its own, the smallest nonblocking operation (bytes sent and received by this
 * rank) the thread takes up as soon as the application leaves MPI: below, the lock's hand-over
 * back to the application at its next call costs more than the thread gains. */
#define APTUS_PT_OWN_WAKE_MIN 16384

/* CPUs in a list such as "0-3,6" (Linux's cpuset format); -1 if it does not parse. */
static int cpu_list_count(const char *s)
{
    int n = 0;
    while (*s && *s != '\n') {
        char *e;
        long a = strtol(s, &e, 10), b = a;
        if (e == s)
            return -1;
        if (*e == '-') {
            s = e + 1;
            b = strtol(s, &e, 10);
            if (e == s || b < a)
                return -1;
        }
        n += (int)(b - a + 1);
        s = *e == ',' ? e + 1 : e;
    }
    return n;
}

/* CPUs of this process's cpuset cgroup (v2: cpuset.cpus.effective of its cgroup or the nearest
 * ancestor that has one; v1: the cpuset hierarchy's), or -1 when it cannot be read. A
 * container's or a batch job's limit is there, where the machine's count is not. */
static int cgroup_cpus(void)
{
    FILE *f = fopen("/proc/self/cgroup", "r");
    if (!f)
        return -1;
    char line[512], path[768] = "";
    while (fgets(line, sizeof line, f)) {
        char *p = strchr(line, '\n');
        if (p)
            *p = 0;
        if (!strncmp(line, "0::", 3) && !path[0])
            snprintf(path, sizeof path, "/sys/fs/cgroup%s|cpuset.cpus.effective", line + 3);
        else if ((p = strstr(line, ":cpuset:")))
            snprintf(path, sizeof path, "/sys/fs/cgroup/cpuset%s|cpuset.effective_cpus", p + 8);
    }
    fclose(f);
    char *bar = strchr(path, '|');
    if (!bar)
        return -1;
    *bar = 0;
    const char *leaf = bar + 1;
    for (;;) { /* the cgroup, then its ancestors */
        char file[1024], buf[1024];
        snprintf(file, sizeof file, "%s/%s", path, leaf);
        if ((f = fopen(file, "r"))) {
            int n = fgets(buf, sizeof buf, f) ? cpu_list_count(buf) : -1;
            fclose(f);
            if (n > 0)
                return n;
        }
        char *slash = strrchr(path, '/');
        if (!slash || slash == path || !strcmp(path, "/sys/fs/cgroup"))
            return -1;
        *slash = 0;
    }
}

/* Whether the progress thread has a core the computation does not use (APTUS_ASYNC_PROGRESS_OWN_CORE):
 * asked, or judged from the rank's CPU set -- two or more CPUs for each rank that shares it (a
 * set as large as all the CPUs the process may be given -- its cpuset cgroup's, else the
 * machine's -- is taken to be shared by every rank of the node), or a CPU for the thread outside
 * it. */
static int pt_own_core(int cpu)
{
    if (aptus_config.async_progress_own_core >= 0)
        return aptus_config.async_progress_own_core != 0;
    cpu_set_t m;
    if (sched_getaffinity(0, sizeof m, &m) != 0)
        return 0;
    if (cpu >= 0 && cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &m))
        return 1;
    int n = CPU_COUNT(&m);
    long all = cgroup_cpus();
    if (all <= 0)
        all = sysconf(_SC_NPROCESSORS_ONLN);
    int sharing = n >= all && aptus_rt.local_size > 1 ? aptus_rt.local_size : 1;
    return n >= 2 * sharing;
}

int aptus_progress_thread_own_core(void)
{
    return pt_own;
}

int aptus_progress_thread_own_core_now(void)
{
    return pt.running && pt_own;
}

/* The progress thread's longest sleep: how long MPI_Finalize may wait for it to see that it
 * must stop (nothing wakes it for that). */
#define APTUS_PT_SLEEP_MAX 2e-3

/* How often the progress thread looks whether the application has left MPI (when it leaves with
 * a background task in flight, it wakes the thread at once). */
#define APTUS_PT_NAP 100e-6

/* Sets the calling thread's scheduler slice (EEVDF's custom slice: sched_attr.sched_runtime of a
 * SCHED_OTHER thread, Linux >= 6.12; older kernels ignore it). With a short slice a woken
 * thread gets an early deadline and preempts the running one at once. */
static void set_slice(int usec)
{
#ifdef SYS_sched_setattr
    struct {
        uint32_t size, policy;
        uint64_t flags;
        int32_t nice;
        uint32_t priority;
        uint64_t runtime, deadline, period;
    } attr = { 0 };
    attr.size = (uint32_t)sizeof attr;
    attr.policy = SCHED_OTHER;
    attr.runtime = (uint64_t)usec * 1000u;
    if (syscall(SYS_sched_setattr, 0, &attr, 0) != 0)
        fprintf(stderr, "Aptus MPI: APTUS_ASYNC_PROGRESS_SLICE: the kernel refused a slice of %d us\n", usec);
#else
    (void)usec;
#endif
}

/* The progress thread (re)takes the lock: only while no application thread is in MPI (that
 * thread progresses itself; were the thread to wait for the lock, the application thread would
 * hand it over in its next pause and then wait while the thread moved data in its stead),
 * looking again every APTUS_PT_NAP seconds; once told to stop, as any thread (MPI_Finalize
 * has dropped it). */
/* Woken by the application on its way out of MPI (from the park or from a sleep on the wait
 * objects): let it get out first -- its computation starts --, then preempt it from a short
 * sleep, instead of running at once inside the call it is leaving. */
static void pt_letout(void)
{
    if (aptus_config.async_progress_letout <= 0)
        return;
    struct timespec ts = { 0, (long)aptus_config.async_progress_letout * 1000 };
    nanosleep(&ts, NULL);
}

/* Looks a progress thread with a core of its own makes, awake, for the application to leave
 * MPI before it parks (some milliseconds): leaving with a nonblocking operation just started,
 * the application finds it running, where waking it from the park costs a good part of a
 * medium-sized operation (tens of microseconds in a virtual machine). */
#define APTUS_PT_OWN_LOOKS 100000

/* Looks such a thread lets pass after the application left MPI with nothing in flight before it
 * takes the lock (a microsecond or so): a program that calls MPI back to back would otherwise
 * find the thread on the lock at each call and wait for it to hand it over. */
#define APTUS_PT_OWN_QUIET 200

static void pt_take(void)
{
    unsigned looks = 0, quiet = 0;
    for (;;) {
        if (pt_own && looks < APTUS_PT_OWN_LOOKS) {
            if (__atomic_load_n(&aptus_lock_app_inside, __ATOMIC_SEQ_CST) > 0) {
                quiet = 0;
                looks++;
                aptus_cpu_relax();
                continue;
            }
            if (!__atomic_load_n(&aptus_lock_left_work, __ATOMIC_RELAXED) && quiet < APTUS_PT_OWN_QUIET) {
                quiet++;
                aptus_cpu_relax();
                continue;
            }
        }
        if (aptus_lock_try_idle())
            return;
        if (__atomic_load_n(&pt.stop, __ATOMIC_ACQUIRE)) {
            aptus_lock_take(1);
            return;
        }
        if (pt_own && looks < APTUS_PT_OWN_LOOKS) {
            looks++;
            aptus_cpu_relax();
            continue;
        }
        if (aptus_lock_wait_exit(APTUS_PT_NAP))
            pt_letout();
    }
}

static void *progress_main(void *arg)
{
    (void)arg;
    pt_self = 1;
    if (aptus_config.async_progress_slice > 0)
        set_slice(aptus_config.async_progress_slice);
    /* a higher priority than the application's: a woken thread with work runs at once, where at
     * an equal one the scheduler often keeps it waiting for its fair share of the core, behind
     * the computation it is meant to overlap (docs/DESIGN.md, Threads) */
    if (aptus_config.async_progress_nice != 0 &&
        setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), aptus_config.async_progress_nice) != 0 &&
        getenv("APTUS_ASYNC_PROGRESS_NICE"))
        fprintf(stderr,
                "Aptus MPI: APTUS_ASYNC_PROGRESS_NICE: the kernel refused nice %d for the progress thread: %s\n",
                aptus_config.async_progress_nice, strerror(errno));
    unsigned idle = 0, spin = (unsigned)(aptus_config.async_progress_spin > 0 ? aptus_config.async_progress_spin : 0);
    pt_take();
    while (!__atomic_load_n(&pt.stop, __ATOMIC_ACQUIRE)) {
        if (__atomic_load_n(&aptus_lock_app_inside, __ATOMIC_RELAXED) > 0) {
            /* An application thread is in MPI and progresses itself: stay off the lock and the
             * core (no wait object armed, so peers do not ring for us) until it leaves. */
            aptus_lock_drop();
            pt_take();
            idle = 0;
            continue;
        }
        if (aptus_progress() > 0) {
            idle = 0;
        } else if (pt_own && aptus_lock_work > 0) {
            /* on a core of its own, it keeps polling while a nonblocking operation is in flight:
             * a sleep would add a wake-up to each of its steps */
            idle = 0;
        } else if (++idle > spin) {
            /* sleeps on the wait objects (without the lock) until a frame, a timer or at most
             * APTUS_SLEEP_MAX; where there is nothing to sleep on, yields */
            block_once(APTUS_PT_SLEEP_MAX);
            __atomic_fetch_add(&aptus_progress_thread_wakeups, 1, __ATOMIC_RELAXED);
            idle = 0;
        } else if (pt_own) {
            /* nothing in flight: off the lock between its looks, so that the application
             * entering MPI finds it free */
            __atomic_store_n(&aptus_lock_left_work, 0, __ATOMIC_RELAXED);
            aptus_lock_drop();
            pt_take();
        }
        /* an application thread asks for the lock: it is entering MPI; leave it the lock (and
         * the core) until no application thread is inside any more */
        if (__atomic_load_n(&aptus_big_lock.askers, __ATOMIC_RELAXED)) {
            aptus_lock_drop();
            pt_take();
            idle = 0;
        }
    }
    aptus_lock_drop();
    return NULL;
}

/* The application leaves MPI with work in flight while the progress thread sleeps on the wait
 * objects (runtime/lock.c calls this): end the sleep. */
static int pt_exit_kick(void)
{
    if (!__atomic_load_n(&pt_blocked, __ATOMIC_SEQ_CST))
        return 0;
    __atomic_store_n(&pt_kicked, 1, __ATOMIC_SEQ_CST);
    if (pt_kick_fd >= 0) {
        uint64_t one = 1;
        (void)!write(pt_kick_fd, &one, sizeof one);
    }
    for (int i = 0; i < pe.nwaiters; i++)
        if (pe.waiters[i]->kick)
            pe.waiters[i]->kick();
    return 1;
}

/* No more wake-ups from the application (the thread has stopped, or never started). */
static void pt_kick_close(void)
{
    aptus_lock_exit_hook = NULL;
    if (pt_kick_fd >= 0)
        close(pt_kick_fd);
    pt_kick_fd = -1;
}

int aptus_progress_thread_start(char *err, size_t errlen)
{
    if (pt.running)
        return 0;
    aptus_lock_enable();
    pt_kick_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); /* (-1: the waiters' kicks only) */
    aptus_lock_exit_hook = pt_exit_kick;
    pt.stop = 0;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    int cpu = aptus_config.async_progress_cpu;
    pt_own = pt_own_core(cpu);
    if (pt_own) {
        /* nothing to keep from the computation's core: the thread goes on as soon as the
         * application leaves MPI with anything in flight, and hands the lock straight back */
        if (!getenv("APTUS_ASYNC_PROGRESS_WAKE_MIN"))
            aptus_config.async_progress_wake_min = APTUS_PT_OWN_WAKE_MIN;
        if (!getenv("APTUS_ASYNC_PROGRESS_LETOUT"))
            aptus_config.async_progress_letout = 0;
        __atomic_store_n(&aptus_lock_spin, 20000, __ATOMIC_RELAXED);
    }
    if (cpu >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(cpu, &set);
        pthread_attr_setaffinity_np(&attr, sizeof set, &set);
    }
    int rc = pthread_create(&pt.tid, &attr, progress_main, NULL);
    pthread_attr_destroy(&attr);
    if (rc) {
        snprintf(err, errlen, "APTUS_ASYNC_PROGRESS: cannot start the progress thread%s: %s",
                 cpu >= 0 ? " on the CPU APTUS_ASYNC_PROGRESS_CPU names" : "", strerror(rc));
        pt_kick_close();
        return -1;
    }
    pt.running = 1;
    return 0;
}

void aptus_progress_thread_stop(void)
{
    if (!pt.running)
        return;
    __atomic_store_n(&pt.stop, 1, __ATOMIC_RELEASE);
    int depth = aptus_lock_drop(); /* it takes the lock for its passes */
    pthread_join(pt.tid, NULL);
    aptus_lock_take(depth);
    pt.running = 0;
    __atomic_store_n(&aptus_lock_spin, 0, __ATOMIC_RELAXED);
    pt_kick_close();
}

void aptus_progress_reset(void)
{
    free(pe.bg);
    memset(&pe, 0, sizeof pe);
    aptus_lock_work = 0;
}
