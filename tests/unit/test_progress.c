/* Unit tests of the progress engine (src/runtime/progress.c): pollers enabled and disabled,
 * background tasks, timers (order, cancel, re-arm from the callback), clean-up hooks, and the
 * waiting policy (spin, then yield or block on the registered wait object; no sleep while
 * something holds the engine awake, a sleep never longer than the next timer). */
#include "runtime/progress.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/config.h"
#include "runtime/runtime.h"

#include "unit_check.h"

static int calls_a, calls_b, events_a;
static int poll_a(void)
{
    calls_a++;
    return events_a;
}
static int poll_b(void)
{
    calls_b++;
    return 0;
}

static void test_pollers(void)
{
    int a = aptus_poller_add("a", poll_a, 1);
    int b = aptus_poller_add("b", poll_b, 0);
    CHECK(a >= 0 && b >= 0 && a != b);
    events_a = 3;
    CHECK(aptus_progress() == 3);
    CHECK(calls_a == 1 && calls_b == 0); /* a disabled poller is not called */
    aptus_poller_enable(b, 1);
    aptus_poller_enable(a, 0);
    events_a = 0;
    CHECK(aptus_progress() == 0);
    CHECK(calls_a == 1 && calls_b == 1);
    aptus_poller_remove(b);
    aptus_progress();
    CHECK(calls_b == 1);
    aptus_poller_remove(a);
    /* the table fills up and says so */
    int ids[APTUS_POLLERS_MAX + 1], n = 0;
    for (int i = 0; i <= APTUS_POLLERS_MAX; i++)
        if ((ids[i] = aptus_poller_add("x", poll_b, 0)) >= 0)
            n++;
    CHECK(n == APTUS_POLLERS_MAX && ids[APTUS_POLLERS_MAX] == -1);
    for (int i = 0; i < APTUS_POLLERS_MAX; i++)
        aptus_poller_remove(ids[i]);
}

static int task_runs[3];
static int task(void *arg)
{
    int i = (int)(long)arg;
    return ++task_runs[i] >= i + 1; /* task i finishes on its (i+1)-th run */
}

static void test_tasks(void)
{
    for (long i = 0; i < 3; i++)
        CHECK(aptus_bg_add(task, (void *)i) == 0);
    CHECK(aptus_progress() == 1); /* task 0 done */
    CHECK(aptus_progress() == 1); /* task 1 done */
    CHECK(aptus_progress() == 1); /* task 2 done */
    CHECK(aptus_progress() == 0);
    CHECK(task_runs[0] == 1 && task_runs[1] == 2 && task_runs[2] == 3);
}

static int fired[4], fire_order[8], nfired, rearm_left;
static struct aptus_timer timers[4];
static void on_fire(struct aptus_timer *t)
{
    int i = (int)(t - timers);
    fired[i]++;
    fire_order[nfired++] = i;
    if (i == 3 && rearm_left-- > 0)
        aptus_timer_arm(t, aptus_wtime() - 1); /* due at once: runs again in the same pass */
}

static void test_timers(void)
{
    double now = aptus_wtime();
    for (int i = 0; i < 4; i++)
        timers[i].fire = on_fire;
    aptus_timer_arm(&timers[0], now - 0.5);
    aptus_timer_arm(&timers[1], now - 1.0);
    aptus_timer_arm(&timers[2], now + 3600); /* not due */
    aptus_timer_arm(&timers[3], now - 0.7);
    aptus_timer_cancel(&timers[0]);
    aptus_timer_cancel(&timers[0]); /* twice is harmless */
    rearm_left = 1;
    int n = aptus_progress();
    CHECK(n == 3); /* 1, 3, and 3 again */
    CHECK(fired[0] == 0 && fired[1] == 1 && fired[2] == 0 && fired[3] == 2);
    CHECK(nfired == 3 && fire_order[0] == 1 && fire_order[1] == 3 && fire_order[2] == 3);
    CHECK(timers[2].armed && !timers[1].armed && !timers[3].armed);
    /* re-arming an armed timer moves it */
    aptus_timer_arm(&timers[2], now - 2);
    CHECK(aptus_progress() == 1 && fired[2] == 1);
    CHECK(aptus_progress() == 0);
}

static int cleanup_seq[4], ncleanup;
static void cleanup_a(void)
{
    cleanup_seq[ncleanup++] = 1;
}
static void cleanup_b(void)
{
    cleanup_seq[ncleanup++] = 2;
}

static void test_cleanup(void)
{
    CHECK(aptus_cleanup_add(cleanup_a) == 0);
    CHECK(aptus_cleanup_add(cleanup_b) == 0);
    CHECK(aptus_cleanup_add(cleanup_a) == 0); /* once only */
    aptus_cleanup_run();
    CHECK(ncleanup == 2 && cleanup_seq[0] == 2 && cleanup_seq[1] == 1); /* most recent first */
    aptus_cleanup_run();
    CHECK(ncleanup == 4);
}

/* A fake wait object that records what the engine asks of it. */
static int arms, sleeps, disarms, arm_says_work;
static double last_timeout;
static int w_arm(void)
{
    arms++;
    return arm_says_work;
}
static void w_sleep(double t)
{
    sleeps++;
    last_timeout = t;
}
static void w_disarm(void)
{
    disarms++;
}
static const struct aptus_waiter waiter = { w_arm, w_sleep, w_disarm, NULL, NULL };

static void on_fire_plain(struct aptus_timer *t)
{
}

static void test_waiting(void)
{
    aptus_config.spin_count = 5;
    aptus_config.yield_count = 0;
    unsigned idle = 0;
    /* yield mode: never touches the wait object */
    aptus_waiter_set(&waiter);
    aptus_wait_blocks = 0;
    for (int i = 0; i < 20; i++)
        aptus_wait_step(&idle);
    CHECK(arms == 0 && sleeps == 0);
    /* block mode: spins spin_count steps, yields yield_count steps, then arms, sleeps, disarms
     * on every further step */
    aptus_wait_blocks = 1;
    aptus_config.yield_count = 3;
    idle = 0;
    for (int i = 0; i < 5 + 3; i++)
        aptus_wait_step(&idle);
    CHECK(arms == 0);
    aptus_wait_step(&idle);
    CHECK(arms == 1 && sleeps == 1 && disarms == 1);
    CHECK(last_timeout > 0 && last_timeout <= 0.05 + 1e-9);
    /* work already there when arming: no sleep */
    arm_says_work = 1;
    aptus_wait_step(&idle);
    CHECK(arms == 2 && sleeps == 1 && disarms == 2);
    arm_says_work = 0;
    /* something holds the engine awake: yield instead */
    aptus_progress_hold_awake(1);
    aptus_wait_step(&idle);
    CHECK(arms == 2);
    aptus_progress_hold_awake(-1);
    /* the next timer bounds the sleep */
    struct aptus_timer t = { .fire = on_fire_plain };
    aptus_timer_arm(&t, aptus_wtime() + 10);
    aptus_wait_step(&idle);
    CHECK(sleeps == 2 && last_timeout <= 0.05 + 1e-9);
    aptus_timer_arm(&t, aptus_wtime() + 0.01);
    aptus_wait_step(&idle);
    CHECK(sleeps == 3 && last_timeout <= 0.01 + 1e-9);
    aptus_timer_cancel(&t);
    /* the spin cap of an oversubscribed node */
    aptus_wait_spin_cap = 1;
    aptus_config.yield_count = 0;
    idle = 0;
    int before = arms;
    aptus_wait_step(&idle);
    CHECK(arms == before);
    aptus_wait_step(&idle);
    CHECK(arms == before + 1);
    aptus_wait_spin_cap = -1;
    /* progress resets the idle count */
    int p = aptus_poller_add("a", poll_a, 1);
    events_a = 1;
    aptus_wait_step(&idle);
    CHECK(idle == 0);
    aptus_poller_remove(p);
    aptus_waiter_set(NULL);
}

int main(void)
{
    test_pollers();
    test_tasks();
    test_timers();
    test_cleanup();
    test_waiting();
    aptus_progress_reset();
    if (failures) {
        fprintf(stderr, "test_progress: %d check(s) failed\n", failures);
        return 1;
    }
    printf("test_progress: all checks passed\n");
    return 0;
}
