/* Generalized requests (MPI 4.1, 13.2): operations the user completes with
 * MPI_Grequest_complete; the library calls the user's query function when a test, wait or
 * MPI_Request_get_status* finds the request complete, the free function when the request goes
 * (after the query, or when both MPI_Request_free and MPI_Grequest_complete have been called),
 * and the cancel function from MPI_Cancel. */
#include <stdlib.h>

#include "api/check.h"
#include "api/grequest.h"
#include "runtime/lock.h"

struct aptus_greq {
    MPI_Grequest_query_function *query_fn;
    MPI_Grequest_free_function *free_fn;
    MPI_Grequest_cancel_function *cancel_fn;
    void *extra_state;
};

void aptus_greq_query(struct aptus_request *r)
{
    MPI_Status st;
    aptus_status_empty(&st);
    int rc = r->greq->query_fn ? r->greq->query_fn(r->greq->extra_state, &st) : MPI_SUCCESS;
    r->st_source = st.MPI_SOURCE;
    r->st_tag = st.MPI_TAG;
    r->st_bytes = aptus_status_bytes(&st);
    r->cancelled = st.MPI_internal[2];
    r->st_error = rc;
}

int aptus_greq_free(struct aptus_request *r)
{
    struct aptus_greq *g = r->greq;
    r->greq = NULL;
    int rc = g && g->free_fn ? g->free_fn(g->extra_state) : MPI_SUCCESS;
    free(g);
    return rc;
}

int aptus_greq_cancel(struct aptus_request *r)
{
    return r->greq->cancel_fn ? r->greq->cancel_fn(r->greq->extra_state, r->complete != 0) : MPI_SUCCESS;
}

int PMPI_Grequest_start(MPI_Grequest_query_function *query_fn, MPI_Grequest_free_function *free_fn,
                        MPI_Grequest_cancel_function *cancel_fn, void *extra_state, MPI_Request *request)
{
    APTUS_OUT_NULL(request, MPI_REQUEST_NULL);
    APTUS_API_LOCK();
    API_INIT("MPI_Grequest_start");
    if (!request)
        return aptus_error(NULL, MPI_ERR_ARG, "MPI_Grequest_start", "null request pointer");
    struct aptus_greq *g = malloc(sizeof *g);
    struct aptus_request *r = aptus_req_new_nomsg(APTUS_REQ_GREQ);
    if (!g || !r) {
        free(g);
        if (r)
            aptus_req_free(r);
        return aptus_error(NULL, MPI_ERR_NO_MEM, "MPI_Grequest_start", "out of memory");
    }
    *g = (struct aptus_greq){ query_fn, free_fn, cancel_fn, extra_state };
    r->greq = g;
    *request = (MPI_Request)r;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Grequest_start)

int PMPI_Grequest_complete(MPI_Request request)
{
    APTUS_API_LOCK();
    API_INIT("MPI_Grequest_complete");
    struct aptus_request *r = aptus_req_get(request);
    if (!r || r->kind != APTUS_REQ_GREQ)
        return aptus_error(NULL, MPI_ERR_REQUEST, "MPI_Grequest_complete",
                           request == MPI_REQUEST_NULL ? "MPI_REQUEST_NULL is not a generalized request"
                                                       : "not a generalized request (MPI_Grequest_start makes them)");
    if (r->complete)
        return aptus_error(NULL, MPI_ERR_REQUEST, "MPI_Grequest_complete",
                           "the generalized request was already completed");
    r->complete = 1;
    if (!r->free_on_complete)
        return MPI_SUCCESS;
    /* MPI_Request_free came first: the request goes now */
    int rc = aptus_greq_free(r);
    aptus_req_free(r);
    return rc ? aptus_error_callback(NULL, rc, "MPI_Grequest_complete", "the generalized request's free function")
              : MPI_SUCCESS;
}
APTUS_ALIAS(Grequest_complete)
