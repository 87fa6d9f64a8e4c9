/* Partitioned point-to-point communication (MPI 4.1, 4.2).
 *
 * A partitioned send or receive is a persistent request whose message travels on the
 * communicator's partitioned context (ctx + APTUS_CTX_PART), so it matches only partitioned
 * operations, with the user's source and tag. The whole buffer is one message: MPI_Start of a
 * receive posts it; MPI_Start of a send only clears the partitions' ready flags, and the send
 * starts when the last partition is marked ready (MPI_Pready*). So MPI_Parrived says true for a
 * partition once the whole message is in place: never before that partition's data is there.
 * docs/DESIGN.md, "Partitioned communication", says why. */
#include <stdlib.h>
#include <string.h>

#include "api/check.h"
#include "comm/create.h"
#include "core/info.h"
#include "pt2pt/pt2pt.h"
#include "runtime/lock.h"

struct aptus_part {
    int send;        /* a partitioned send (else a receive) */
    int n;           /* partitions */
    int nready;      /* send: partitions marked ready since MPI_Start */
    uint8_t ready[]; /* send: one flag per partition */
};

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
    if (!r || !p) {
        if (r)
            aptus_req_free(r);
        free(p);
        return aptus_error(c, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    p->send = send;
    p->n = partitions;
    aptus_req_set_data(r, buf, total, d);
    aptus_req_hold_type(r);
    r->part = p;
    r->peer = peer;
    r->tag = tag;
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
    APTUS_API_LOCKED(
        part_init("MPI_Psend_init", 1, (void *)buf, partitions, count, datatype, dest, tag, comm, info, request));
}
APTUS_ALIAS(Psend_init)

int PMPI_Precv_init(void *buf, int partitions, MPI_Count count, MPI_Datatype datatype, int source, int tag,
                    MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
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
    else
        aptus_recv_start(r);
    return MPI_SUCCESS;
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
        aptus_progress();
    *flag = !r->active || r->complete;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Parrived)
