/* Passive target synchronization: the lock words of the control slots, MPI_Win_lock/unlock,
 * lock_all/unlock_all, and the flushes. */
#include "rma/rma_internal.h"

#include <sched.h>
#include <stdlib.h>

#include "runtime/lock.h"
#include "runtime/progress.h"

/* ---- lock words ---------------------------------------------------------------------------- */

int rma_lock_try(uint32_t *word, int type)
{
    uint32_t v = __atomic_load_n(word, __ATOMIC_ACQUIRE);
    if (type == RL_EXCL)
        return v == 0 && __atomic_compare_exchange_n(word, &v, RMA_LOCK_EXCL, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
    while (!(v & RMA_LOCK_EXCL))
        if (__atomic_compare_exchange_n(word, &v, v + 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            return 1;
    return 0;
}

void rma_lock_release(uint32_t *word, int type)
{
    if (type == RL_EXCL)
        __atomic_store_n(word, 0, __ATOMIC_RELEASE);
    else
        __atomic_sub_fetch(word, 1, __ATOMIC_RELEASE);
}

int aptus_win_flush(struct aptus_win *w, int target, int local, const char **why)
{
    return rma_flush(w, target, local, RMA_SETTLE_FLUSH, why);
}

int rma_flush(struct aptus_win *w, int target, int local, int mode, const char **why)
{
    if (w->spans)
        aptus_progress();
    /* operations deferred to targets of the node first (defer.c): locally complete already */
    int drc = local ? 0 : rma_defer_settle(w, target, mode);
    /* The flush requests go out first, behind the operations on each target's stream, so that
     * their round trips overlap the completion of the operations' own sends (and RDMA's). */
    struct flush_wait {
        struct aptus_request *rr;
        int answer;
    } one, *fw = &one;
    int nfw = 0, rc = 0;
    if (!local && w->ndirty) {
        if (target < 0 && w->ndirty > 1 && !(fw = malloc(sizeof *fw * (size_t)w->ndirty)))
            return MPI_ERR_NO_MEM;
        for (int r = 0; r < w->size && !rc; r++) {
            if ((target >= 0 && r != target) || !w->t[r].am_dirty)
                continue;
            rma_am_dirty_set(w, &w->t[r], 0);
            rc = rma_am_control_start(w, r, AM_FLUSH, 0, &fw[nfw].rr, &fw[nfw].answer);
            if (!rc)
                nfw++;
        }
        if (rc)
            *why = "a flush request could not be sent";
    }
    int e = rma_pend_wait_all(w);
    if (e && !rc) {
        rc = e;
        *why = "a transfer of the window failed";
    }
    for (int i = 0; i < nfw; i++) {
        e = rma_am_control_finish(fw[i].rr, &fw[i].answer);
        if (e && !rc) {
            rc = e;
            *why = e == MPI_ERR_RMA_RANGE ? "an operation reached outside the target's window (or attached memory)"
                                          : "an operation failed at the target";
        }
    }
    if (fw != &one)
        free(fw);
    if (drc && !rc) {
        rc = drc;
        *why = "the operations deferred to a target could not be written";
    }
    return rc;
}

static int lock_one(struct aptus_win *w, int type, int target)
{
    struct rma_target *t = &w->t[target];
    if (t->path == RMA_PATH_AM)
        return rma_am_control(w, target, AM_LOCK, type, 1);
    /* A release is a store in the segment: nothing rings a sleeping waiter's doorbell, so the
     * wait never sleeps (aptus_wait_step could); it progresses, and yields the core to the holder
     * after a while (it may share it). */
    unsigned spins = 0;
    while (!rma_lock_try(&t->ctrl->lock, type)) {
        aptus_lock_pause();
        aptus_progress();
        if (++spins > 64)
            sched_yield();
        else
            aptus_cpu_relax();
    }
    return 0;
}

static int unlock_one(struct aptus_win *w, int type, int target)
{
    struct rma_target *t = &w->t[target];
    if (t->path == RMA_PATH_AM) {
        rma_am_dirty_set(w, t, 0);
        return rma_am_control(w, target, AM_UNLOCK, type, 1);
    }
    aptus_rma_fence();
    rma_lock_release(&t->ctrl->lock, type);
    /* lock requests of other nodes wait in the target's agent: when this rank is the target, let
     * it grant one now, before this rank can take the lock again (else a rank that locks its own
     * window in a loop starves them) */
    if (w->spans && target == w->rank)
        aptus_progress();
    return 0;
}

int aptus_win_lock(struct aptus_win *w, int type, int target, int assert, const char **why)
{
    struct rma_target *t = &w->t[target];
    if (t->lock || w->lock_all) {
        *why = "this process already holds a lock on the target (MPI_Win_lock twice without MPI_Win_unlock)";
        return MPI_ERR_RMA_SYNC;
    }
    if (w->start) {
        *why = "an access epoch (MPI_Win_start) is open on this window";
        return MPI_ERR_RMA_SYNC;
    }
    int lt = type == MPI_LOCK_EXCLUSIVE ? RL_EXCL : RL_SHARED;
    int rc = assert &MPI_MODE_NOCHECK ? 0 : lock_one(w, lt, target);
    if (rc) {
        *why = "the target could not grant the lock";
        return rc;
    }
    t->lock = (uint8_t)(lt | (assert &MPI_MODE_NOCHECK ? 4 : 0));
    w->nlocks++;
    w->fence = 0;
    return 0;
}

int aptus_win_unlock(struct aptus_win *w, int target, const char **why)
{
    struct rma_target *t = &w->t[target];
    if (!t->lock) {
        *why = w->lock_all ? "the target was locked by MPI_Win_lock_all (use MPI_Win_unlock_all)"
                           : "the target is not locked by this process (MPI_Win_unlock without MPI_Win_lock)";
        return MPI_ERR_RMA_SYNC;
    }
    int rc = rma_settle_direct(w), e = rma_defer_settle(w, target, RMA_SETTLE_FLUSH);
    rc = rc ? rc : e;
    int nocheck = t->lock & 4;
    if (nocheck) {
        if (t->am_dirty && !rc)
            rc = aptus_win_flush(w, target, 0, why);
    } else {
        e = unlock_one(w, t->lock & 3, target);
        if (!rc)
            rc = e;
    }
    e = rma_pend_wait_all(w);
    if (!rc)
        rc = e;
    t->lock = 0;
    w->nlocks--;
    if (rc && !*why)
        *why = "an operation of the epoch failed";
    return rc;
}

int aptus_win_lock_all(struct aptus_win *w, int assert, const char **why)
{
    if (w->lock_all || w->nlocks) {
        *why = "a passive-target epoch is already open on this window";
        return MPI_ERR_RMA_SYNC;
    }
    if (w->start) {
        *why = "an access epoch (MPI_Win_start) is open on this window";
        return MPI_ERR_RMA_SYNC;
    }
    if (!(assert &MPI_MODE_NOCHECK))
        for (int r = 0; r < w->size; r++) {
            int rc = lock_one(w, RL_SHARED, r);
            if (rc) {
                for (int q = 0; q < r; q++)
                    unlock_one(w, RL_SHARED, q);
                *why = "a target could not grant the lock";
                return rc;
            }
        }
    w->lock_all = assert &MPI_MODE_NOCHECK ? 2 : 1;
    w->fence = 0;
    return 0;
}

int aptus_win_unlock_all(struct aptus_win *w, const char **why)
{
    if (!w->lock_all) {
        *why = "no MPI_Win_lock_all epoch is open";
        return MPI_ERR_RMA_SYNC;
    }
    int rc = rma_settle_direct(w), d = rma_defer_settle(w, -1, RMA_SETTLE_FLUSH);
    rc = rc ? rc : d;
    for (int r = 0; r < w->size; r++) {
        int e = 0;
        if (w->lock_all == 1)
            e = unlock_one(w, RL_SHARED, r);
        else if (w->t[r].am_dirty)
            e = aptus_win_flush(w, r, 0, why);
        if (!rc)
            rc = e;
    }
    int e = rma_pend_wait_all(w);
    if (!rc)
        rc = e;
    w->lock_all = 0;
    if (rc)
        *why = "an operation of the epoch failed";
    return rc;
}

/* Nothing to wait for: no active message in flight, none unflushed, none deferred. */
int aptus_rma_flush_idle(const struct aptus_win *w)
{
    return !w->spans && !w->npend && !w->ndirty && !w->ndeferred && !w->rdma_dirty_any &&
           !__atomic_load_n(&w->lb_pending, __ATOMIC_ACQUIRE);
}
