/* Partitioned point-to-point communication (MPI 4.1, chapter 4).
 *
 * A partitioned send or receive is a persistent request whose message travels on the
 * communicator's partitioned context (ctx + APTUS_CTX_PART), so it matches only partitioned
 * operations. The whole buffer is one message: MPI_Start of a receive posts it; MPI_Start of a
 * send only clears the partitions' ready flags, and the send starts when the last partition is
 * marked ready (MPI_Pready*). So MPI_Parrived says true for a partition once the whole message
 * is in place: never before that partition's data is there.
 *
 * Matching follows the order of the *_init calls (MPI 4.1, "Order"), not that of the starts:
 * MPI_Psend_init sends a handshake -- a 4-byte message with the user's destination and tag,
 * carrying a tag of the sender's own choosing for this pair (negative, so never a user's) -- and
 * MPI_Precv_init posts the receive for it. Handshakes are matched like any messages between two
 * processes, in the order they were sent and posted, i.e. in init order; every round's message
 * then travels with the pair's tag, and a receive started before its handshake arrived is posted
 * by a background task when it does. docs/DESIGN.md, "Partitioned communication". */
#include <stdlib.h>
#include <string.h>

#include "api/check.h"
#include "comm/create.h"
#include "core/info.h"
#include "pt2pt/pt2pt.h"
#include "runtime/lock.h"
#include "runtime/progress.h"

struct aptus_part {
    int send;                 /* a partitioned send (else a receive) */
    int n;                    /* partitions */
    int nready;               /* send: partitions marked ready since MPI_Start */
    int tag;                  /* the user's tag (the message travels with the pair's, r->tag) */
    struct aptus_request *hs; /* receive: the handshake's receive, until it is read */
    uint8_t ready[];          /* send: one flag per partition */
};

/* The pair tags a process gives out, INT_MIN .. -2 (-1 is MPI_ANY_TAG), one per partitioned
 * send it initializes; after 2^31 - 1 of them they come round again (a pair still in use then
 * would share its tag with a new one). */
static uint32_t next_pair;

static int pair_tag(void)
{
    uint32_t k = next_pair++ % 0x7fffffffu;
    return (int)((int64_t)INT_MIN + k);
}

/* The handshake of a partitioned send: the pair's tag, to the user's destination and tag. Sent
 * at once when it fits, else by a request that frees itself (the payload travels inside it). */
static int send_handshake(struct aptus_comm *c, int dest, int tag, int ptag)
{
    int32_t v = ptag;
    uint16_t ctx = (uint16_t)(c->ctx + APTUS_CTX_PART);
    if (aptus_send_eager_try(&v, sizeof v, dest, tag, c, ctx))
        return MPI_SUCCESS;
    struct aptus_request *h = aptus_req_new(APTUS_REQ_SEND);
    if (!h)
        return MPI_ERR_NO_MEM;
    memcpy(&h->small, &v, sizeof v);
    h->buf = &h->small;
    h->bytes = sizeof v;
    h->peer = dest;
    h->tag = tag;
    h->comm = c;
    h->ctx = ctx;
    h->mode = APTUS_MODE_STANDARD;
    int rc = aptus_send_start(h);
    if (rc || h->complete)
        aptus_req_free(h);
    else
        h->free_on_complete = 1;
    return rc;
}

/* The receive of a partitioned receive's handshake, posted by MPI_Precv_init. */
static struct aptus_request *post_handshake(struct aptus_comm *c, int source, int tag)
{
    struct aptus_request *h = aptus_req_new(APTUS_REQ_RECV);
    if (!h)
        return NULL;
    h->buf = &h->small;
    h->bytes = sizeof(int32_t);
    h->peer = source;
    h->tag = tag;
    h->comm = c;
    h->ctx = (uint16_t)(c->ctx + APTUS_CTX_PART);
    aptus_recv_start(h);
    return h;
}

static int part_init(const char *fn, int send, void *buf, int partitions, MPI_Count count, MPI_Datatype datatype,
                     int peer, int tag, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    GET_COMM(c, comm, fn);
    if (partitions < 1)
        return aptus_error(c, MPI_ERR_ARG, fn, "invalid number of partitions %d (must be at least 1)", partitions);
    CHK_COUNT(c, count, fn);
    GET_DTYPE(d, datatype, c, fn);
    if (send) {
        CHK_DEST(c, peer, fn);
        CHK_SEND_TAG(c, tag, fn);
    } else {
        if (peer == MPI_ANY_SOURCE)
            return aptus_error(c, MPI_ERR_RANK, fn, "MPI_ANY_SOURCE is not allowed in a partitioned receive");
        CHK_SRC(c, peer, fn);
        if (tag == MPI_ANY_TAG)
            return aptus_error(c, MPI_ERR_TAG, fn, "MPI_ANY_TAG is not allowed in a partitioned receive");
        CHK_SEND_TAG(c, tag, fn);
    }
    if (info != MPI_INFO_NULL && !aptus_info_get(info))
        return aptus_error(c, MPI_ERR_INFO, fn, "invalid info handle");
    if (!request)
        return aptus_error(c, MPI_ERR_ARG, fn, "null request argument");
    if (count > 0 && (MPI_Count)partitions > (MPI_Count)(SIZE_MAX / 2) / count / (MPI_Count)(d->size ? d->size : 1))
        return aptus_error(c, MPI_ERR_COUNT, fn, "%d partitions of %lld elements are too large a message", partitions,
                           (long long)count);
    size_t total = (size_t)partitions * (size_t)count;
    CHK_DATA_BUF(c, buf, d, aptus_dt_bytes(d, (MPI_Count)total), fn);
    struct aptus_request *r = aptus_req_new(send ? APTUS_REQ_SEND : APTUS_REQ_RECV);
    struct aptus_part *p = calloc(1, sizeof *p + (send ? (size_t)partitions : 0));
    int ptag = 0;
    if (r && p && peer != MPI_PROC_NULL) {
        if (send) {
            ptag = pair_tag();
            int rc = send_handshake(c, peer, tag, ptag);
            if (rc) {
                aptus_req_free(r);
                free(p);
                return aptus_error(c, rc, fn, "the handshake to rank %d failed", peer);
            }
        } else if (!(p->hs = post_handshake(c, peer, tag))) {
            free(p);
            p = NULL;
        }
    }
    if (!r || !p) {
        if (r)
            aptus_req_free(r);
        free(p);
        return aptus_error(c, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    p->send = send;
    p->n = partitions;
    p->tag = tag;
    aptus_req_set_data(r, buf, total, d);
    aptus_req_hold_type(r);
    r->part = p;
    r->peer = peer;
    r->tag = send ? ptag : tag; /* a receive learns the pair's tag from the handshake */
    r->comm = c;
    r->ctx = (uint16_t)(c->ctx + APTUS_CTX_PART);
    r->mode = APTUS_MODE_STANDARD;
    r->persistent = 1;
    r->complete = 1; /* inactive */
    *request = (MPI_Request)r;
    return MPI_SUCCESS;
}

int PMPI_Psend_init(const void *buf, int partitions, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                    MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    APTUS_OUT_NULL(request, MPI_REQUEST_NULL);
    APTUS_API_LOCKED(
        part_init("MPI_Psend_init", 1, (void *)buf, partitions, count, datatype, dest, tag, comm, info, request));
}
APTUS_ALIAS(Psend_init)

int PMPI_Precv_init(void *buf, int partitions, MPI_Count count, MPI_Datatype datatype, int source, int tag,
                    MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    APTUS_OUT_NULL(request, MPI_REQUEST_NULL);
    APTUS_API_LOCKED(
        part_init("MPI_Precv_init", 0, buf, partitions, count, datatype, source, tag, comm, info, request));
}
APTUS_ALIAS(Precv_init)

/* The send of a partitioned request, once every partition is ready. */
static int part_send(struct aptus_request *r, const char *fn)
{
    if (r->peer == MPI_PROC_NULL) {
        aptus_req_done_proc_null(r);
        return MPI_SUCCESS;
    }
    int rc = aptus_send_start(r);
    return rc ? aptus_error(r->comm, rc, fn, "partitioned send to rank %d failed", r->peer) : MPI_SUCCESS;
}

/* Posts a started receive once its handshake has been read (the pair's tag in r->tag). */
static void post_data(struct aptus_request *r)
{
    struct aptus_request *h = r->part->hs;
    if (h) {
        r->part->hs = NULL;
        if (h->st_error) { /* the handshake failed (its sender's process did): so does the receive */
            r->st_source = r->peer;
            r->st_tag = r->part->tag;
            r->st_bytes = 0;
            r->st_error = h->st_error;
            aptus_req_free(h);
            aptus_req_complete(r);
            return;
        }
        int32_t v;
        memcpy(&v, &h->small, sizeof v);
        r->tag = v;
        aptus_req_free(h);
    }
    aptus_recv_start(r);
}

/* A background task: the receive r was started before its handshake had arrived. */
static int post_when_matched(void *arg)
{
    struct aptus_request *r = arg;
    if (!r->part->hs->complete)
        return 0;
    post_data(r);
    return 1;
}

int aptus_part_start(struct aptus_request *r, const char *fn)
{
    struct aptus_part *p = r->part;
    if (p->send) {
        memset(p->ready, 0, (size_t)p->n);
        p->nready = 0;
        return MPI_SUCCESS; /* complete stays 0 until the last partition is ready and sent */
    }
    if (r->peer == MPI_PROC_NULL)
        aptus_req_done_proc_null(r);
    else if (!p->hs || p->hs->complete)
        post_data(r);
    else if (aptus_bg_add_quiet(post_when_matched, r) != 0) {
        r->active = 0;
        r->complete = 1;
        return aptus_error(r->comm, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    return MPI_SUCCESS;
}

void aptus_part_status(struct aptus_request *r)
{
    if (!r->part->send && r->st_tag == r->tag)
        r->st_tag = r->part->tag;
}

void aptus_part_free(struct aptus_request *r)
{
    struct aptus_part *p = r->part;
    r->part = NULL;
    if (p && p->hs) {
        /* not matched yet: withdrawn; matched but not yet read in (a rendezvous): it frees
         * itself when it completes */
        if (p->hs->complete || aptus_recv_cancel(p->hs))
            aptus_req_free(p->hs);
        else
            p->hs->free_on_complete = 1;
    }
    free(p);
}

/* The partitioned request behind a handle, of the kind asked for (send: a partitioned send);
 * raises the error and returns NULL otherwise. */
static struct aptus_request *part_req(MPI_Request h, int send, const char *fn, int *rc)
{
    struct aptus_request *r = aptus_req_get(h);
    if (!r) {
        *rc = aptus_error(NULL, MPI_ERR_REQUEST, fn,
                          h == MPI_REQUEST_NULL ? "MPI_REQUEST_NULL is not a valid request here"
                                                : "invalid request handle");
        return NULL;
    }
    if (!r->part || r->part->send != send) {
        *rc = aptus_error(r->comm, MPI_ERR_REQUEST, fn, "the request is not a partitioned %s request",
                          send ? "send (MPI_Psend_init)" : "receive (MPI_Precv_init)");
        return NULL;
    }
    return r;
}

static int chk_partition(struct aptus_request *r, int partition, const char *fn)
{
    if (partition < 0 || partition >= r->part->n)
        return aptus_error(r->comm, MPI_ERR_ARG, fn, "invalid partition %d (the request has %d partitions)", partition,
                           r->part->n);
    return MPI_SUCCESS;
}

/* Marks the partitions list[0..n) (or low..high when list is NULL) ready, after checking them
 * all: nothing is marked when one is bad. */
static int pready(MPI_Request request, const int *list, int low, int high, const char *fn)
{
    API_INIT(fn);
    int rc = MPI_SUCCESS;
    struct aptus_request *r = part_req(request, 1, fn, &rc);
    if (!r)
        return rc;
    if (!r->active)
        return aptus_error(r->comm, MPI_ERR_REQUEST, fn,
                           "the partitioned send is not active (MPI_Start it first; it is inactive again after it "
                           "completes)");
    struct aptus_part *p = r->part;
    if (!list) { /* a range: both ends in range before counting it (no overflow) */
        if ((rc = chk_partition(r, low, fn)) || (rc = chk_partition(r, high, fn)))
            return rc;
        if (high < low)
            return aptus_error(r->comm, MPI_ERR_ARG, fn, "partition_low %d is above partition_high %d", low, high);
    }
    int n = list ? high : high - low + 1;
    for (int i = 0; i < n; i++) {
        int k = list ? list[i] : low + i;
        if ((rc = chk_partition(r, k, fn)))
            return rc;
        if (p->ready[k])
            return aptus_error(r->comm, MPI_ERR_ARG, fn, "partition %d is already marked ready in this round", k);
        for (int j = 0; list && j < i; j++)
            if (list[j] == k)
                return aptus_error(r->comm, MPI_ERR_ARG, fn, "partition %d appears twice in the list", k);
    }
    for (int i = 0; i < n; i++) {
        p->ready[list ? list[i] : low + i] = 1;
        p->nready++;
    }
    return p->nready == p->n && n > 0 ? part_send(r, fn) : MPI_SUCCESS;
}

int PMPI_Pready(int partition, MPI_Request request)
{
    APTUS_API_LOCKED(pready(request, NULL, partition, partition, "MPI_Pready"));
}
APTUS_ALIAS(Pready)

int PMPI_Pready_range(int partition_low, int partition_high, MPI_Request request)
{
    APTUS_API_LOCKED(pready(request, NULL, partition_low, partition_high, "MPI_Pready_range"));
}
APTUS_ALIAS(Pready_range)

int PMPI_Pready_list(int length, const int array_of_partitions[], MPI_Request request)
{
    APTUS_API_LOCK();
    const char *fn = "MPI_Pready_list";
    API_INIT(fn);
    if (length < 0)
        return aptus_error(NULL, MPI_ERR_ARG, fn, "negative length %d", length);
    if (length > 0 && !array_of_partitions)
        return aptus_error(NULL, MPI_ERR_ARG, fn, "null array_of_partitions argument");
    static const int none[1] = { 0 };
    return pready(request, length ? array_of_partitions : none, 0, length, fn);
}
APTUS_ALIAS(Pready_list)

int PMPI_Parrived(MPI_Request request, int partition, int *flag)
{
    APTUS_API_LOCK();
    const char *fn = "MPI_Parrived";
    API_INIT(fn);
    int rc = MPI_SUCCESS;
    /* MPI 4.1: a null or inactive request has nothing pending: flag = true */
    if (request == MPI_REQUEST_NULL) {
        if (!flag)
            return aptus_error(NULL, MPI_ERR_ARG, fn, "null flag argument");
        if (partition < 0)
            return aptus_error(NULL, MPI_ERR_ARG, fn, "invalid partition %d", partition);
        *flag = 1;
        return MPI_SUCCESS;
    }
    struct aptus_request *r = part_req(request, 0, fn, &rc);
    if (!r)
        return rc;
    if ((rc = chk_partition(r, partition, fn)))
        return rc;
    if (!flag)
        return aptus_error(r->comm, MPI_ERR_ARG, fn, "null flag argument");
    /* an inactive request: what its last round received is in place */
    if (r->active && !r->complete)
        aptus_progress_poll();
    *flag = !r->active || r->complete;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Parrived)
