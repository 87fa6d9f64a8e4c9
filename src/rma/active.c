/* Active target synchronization: MPI_Win_fence and post-start-complete-wait. */
#include "rma/rma_internal.h"

#include <stdlib.h>
#include <string.h>

#include "coll/coll.h"
#include "coll/coll_internal.h"
#include "pt2pt/pt2pt.h"
#include "runtime/progress.h"

int aptus_win_fence(struct aptus_win *w, int assert, const char **why)
{
    if (w->start || w->post || w->nlocks || w->lock_all) {
        *why = "a PSCW or passive-target epoch is open on this window";
        return MPI_ERR_RMA_SYNC;
    }
    int rc = rma_flush(w, -1, 0, RMA_SETTLE_FENCE, why);
    aptus_rma_fence();
    int rc2 = aptus_barrier(w->comm);
    aptus_rma_fence();
    if (!rc && rc2) {
        rc = rc2;
        *why = "the fence's barrier failed";
    }
    if (!rc2) /* operations deferred to targets of the node and handed over (defer.c) */
        rma_defer_fence_end(w);
    w->fence = !(assert &MPI_MODE_NOSUCCEED);
    return rc;
}

int aptus_win_post(struct aptus_win *w, const int *ranks, int n, int assert, const char **why)
{
    if (w->post) {
        *why = "an exposure epoch is already open (MPI_Win_post without MPI_Win_wait)";
        return MPI_ERR_RMA_SYNC;
    }
    int *l = malloc(sizeof *l * (size_t)(n ? n : 1));
    if (!l)
        return MPI_ERR_NO_MEM;
    memcpy(l, ranks, sizeof *l * (size_t)n);
    w->post = l;
    w->npost = n;
    w->fence = 0;
    aptus_rma_fence();
    if (assert & MPI_MODE_NOCHECK)
        return 0;
    static const int token = 1;
    for (int i = 0; i < n; i++) {
        struct aptus_request *r;
        int rc = aptus_coll_isend_on(w->comm, w->comm->ctx, &token, sizeof token, ranks[i], TAG_POST, &r);
        if (!rc)
            rc = rma_pend_add(w, r, NULL);
        if (rc) {
            *why = "cannot send the post notices";
            return rc;
        }
    }
    return 0;
}

int aptus_win_start(struct aptus_win *w, const int *ranks, int n, int assert, const char **why)
{
    if (w->start) {
        *why = "an access epoch is already open (MPI_Win_start without MPI_Win_complete)";
        return MPI_ERR_RMA_SYNC;
    }
    if (w->nlocks || w->lock_all) {
        *why = "a passive-target epoch is open on this window";
        return MPI_ERR_RMA_SYNC;
    }
    int *l = malloc(sizeof *l * (size_t)(n ? n : 1));
    if (!l)
        return MPI_ERR_NO_MEM;
    memcpy(l, ranks, sizeof *l * (size_t)n);
    if (!(assert &MPI_MODE_NOCHECK)) {
        /* wait for each target's post */
        int token[64], *tk = n <= 64 ? token : malloc(sizeof *tk * (size_t)n);
        struct aptus_request *rr[64], **rq = n <= 64 ? rr : malloc(sizeof *rq * (size_t)n);
        int rc = tk && rq ? 0 : MPI_ERR_NO_MEM;
        int k = 0;
        for (; k < n && !rc; k++)
            rc = aptus_coll_irecv_on(w->comm, w->comm->ctx, &tk[k], sizeof tk[k], ranks[k], TAG_POST, &rq[k]);
        for (int i = 0; i < k - (rc ? 1 : 0); i++) {
            aptus_wait(rq[i]);
            aptus_req_free(rq[i]);
        }
        if (tk != token)
            free(tk);
        if (rq != rr)
            free(rq);
        if (rc) {
            free(l);
            *why = "cannot receive the post notices";
            return rc;
        }
    }
    aptus_rma_fence();
    w->start = l;
    w->nstart = n;
    w->fence = 0;
    return 0;
}

int aptus_win_complete(struct aptus_win *w, const char **why)
{
    if (!w->start) {
        *why = "no access epoch is open (MPI_Win_complete without MPI_Win_start)";
        return MPI_ERR_RMA_SYNC;
    }
    int rc = rma_settle_direct(w);
    aptus_rma_fence();
    /* (operations deferred to a target ride in the same message: defer.c) */
    for (int i = 0; i < w->nstart && !rc; i++) {
        rma_am_dirty_set(w, &w->t[w->start[i]], 0);
        rma_stats.with_complete += w->t[w->start[i]].deferred;
        rc = rma_am_control(w, w->start[i], AM_COMPLETE, 0, 0);
    }
    int rc2 = rma_pend_wait_all(w);
    if (!rc)
        rc = rc2;
    free(w->start);
    w->start = NULL;
    w->nstart = 0;
    if (rc)
        *why = "cannot tell the targets that the epoch is complete";
    return rc;
}

int aptus_win_wait(struct aptus_win *w, int test, int *flag, const char **why)
{
    if (!w->post) {
        *why = test ? "no exposure epoch is open (MPI_Win_test without MPI_Win_post)"
                    : "no exposure epoch is open (MPI_Win_wait without MPI_Win_post)";
        return MPI_ERR_RMA_SYNC;
    }
    unsigned idle = 0;
    while (w->completes < w->npost) {
        if (test) {
            aptus_progress_poll();
            if (w->completes < w->npost) {
                *flag = 0;
                return 0;
            }
            break;
        }
        aptus_wait_step(&idle);
    }
    w->completes -= w->npost;
    free(w->post);
    w->post = NULL;
    w->npost = 0;
    int rc = rma_pend_wait_all(w); /* the post notices */
    aptus_rma_fence();
    if (flag)
        *flag = 1;
    if (rc)
        *why = "a post notice failed";
    return rc;
}
