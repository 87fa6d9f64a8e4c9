/* Alltoall (Bruck, all messages at once, pairwise exchange) and Alltoallv/w (all at once or
 * pairwise), in packed bytes. On an intercommunicator every rank exchanges with every rank of
 * the remote group, all messages at once. */
#include <stdlib.h>
#include <string.h>

#include "coll/coll_internal.h"
#include "runtime/config.h"

/* Bruck: rotate so that block j goes to rank r + j; in step k send (to r + 2^k) every block
 * whose index has bit k set; rotate back. log2(n) messages of about n/2 blocks. */
static int alltoall_bruck(const char *sbuf, char *rbuf, size_t blk, struct aptus_comm *c, int tag)
{
    int n = c->size, r = c->rank, rc = 0;
    char *tmp = aptus_coll_buf((size_t)n * blk);
    char *pack = aptus_coll_buf((size_t)(n / 2 + 1) * blk * 2);
    if (!tmp || !pack) {
        aptus_coll_buf_free(tmp);
        aptus_coll_buf_free(pack);
        return MPI_ERR_NO_MEM;
    }
    char *unpack = pack + (size_t)(n / 2 + 1) * blk;
    size_t head = (size_t)(n - r) * blk;
    aptus_coll_copy(tmp, sbuf + (size_t)r * blk, head);
    aptus_coll_copy(tmp + head, sbuf, (size_t)r * blk);
    for (int d = 1; d < n && rc == 0; d <<= 1) {
        size_t k = 0;
        for (int j = 1; j < n; j++)
            if (j & d)
                aptus_coll_copy(pack + (k++) * blk, tmp + (size_t)j * blk, blk);
        rc = aptus_coll_sendrecv(c, pack, k * blk, (r + d) % n, unpack, k * blk, (r - d + n) % n, tag);
        k = 0;
        for (int j = 1; j < n && rc == 0; j++)
            if (j & d)
                aptus_coll_copy(tmp + (size_t)j * blk, unpack + (k++) * blk, blk);
    }
    /* tmp[j] came from rank r - j */
    for (int i = 0; i < n && rc == 0; i++)
        aptus_coll_copy(rbuf + (size_t)i * blk, tmp + (size_t)((r - i + n) % n) * blk, blk);
    aptus_coll_buf_free(tmp);
    aptus_coll_buf_free(pack);
    return rc;
}

/* Every receive and every send at once (sends in the order r + 1, r + 2, ... to spread the
 * load); intracommunicators copy their own block. */
static int alltoallv_linear(const char *const *sptr, const size_t *sbytes, char *const *rptr, const size_t *rbytes,
                            struct aptus_comm *c, int tag)
{
    int n = c->npeers, self = c->is_inter ? -1 : c->rank, rc = 0;
    struct aptus_request *local[64], **q = local;
    if (2 * n > 64 && !(q = malloc(2 * (size_t)n * sizeof *q)))
        return MPI_ERR_NO_MEM;
    memset(q, 0, 2 * (size_t)n * sizeof *q);
    int base = self < 0 ? 0 : self;
    for (int i = 1; i <= n && rc == 0; i++) {
        int p = (base + i) % n;
        if (p != self)
            rc = aptus_coll_irecv(c, rptr[p], rbytes[p], p, tag, &q[p]);
    }
    for (int i = 1; i <= n && rc == 0; i++) {
        int p = (base + i) % n;
        if (p != self)
            rc = aptus_coll_isend(c, sptr[p], sbytes[p], p, tag, &q[n + p]);
    }
    if (rc == 0 && self >= 0) {
        if (sbytes[self] > rbytes[self])
            rc = MPI_ERR_TRUNCATE;
        else if (sbytes[self])
            aptus_coll_copy(rptr[self], sptr[self], sbytes[self]);
    }
    int rc2 = aptus_coll_waitall(q, 2 * n);
    if (q != local)
        free(q);
    return rc ? rc : rc2;
}

/* n - 1 steps; in step i send to r + i and receive from r - i (partner r ^ i for powers of
 * two), one exchange at a time. */
static int alltoallv_pairwise(const char *const *sptr, const size_t *sbytes, char *const *rptr, const size_t *rbytes,
                              struct aptus_comm *c, int tag)
{
    int n = c->size, r = c->rank, rc = 0;
    int pow2 = (n & (n - 1)) == 0;
    if (sbytes[r] > rbytes[r])
        return MPI_ERR_TRUNCATE;
    for (int i = 1; i < n && rc == 0; i++) {
        int dst = pow2 ? r ^ i : (r + i) % n, src = pow2 ? r ^ i : (r - i + n) % n;
        rc = aptus_coll_sendrecv(c, sptr[dst], sbytes[dst], dst, rptr[src], rbytes[src], src, tag);
    }
    /* the own block last: the peers' data is on its way meanwhile (and a nonblocking form's
     * starting call only posts the first exchange) */
    if (rc == 0 && sbytes[r])
        aptus_coll_copy(rptr[r], sptr[r], sbytes[r]);
    return rc;
}

/* Equal blocks, without the per-peer pointer arrays: every message at once, or pairwise. */
static int alltoall_linear(const char *sbuf, char *rbuf, size_t blk, struct aptus_comm *c, int tag)
{
    int n = c->size, r = c->rank, rc = 0;
    struct aptus_request *local[64], **q = local;
    if (2 * n > 64 && !(q = calloc(2 * (size_t)n, sizeof *q)))
        return MPI_ERR_NO_MEM;
    int k = 0;
    for (int i = 1; i < n && rc == 0; i++) {
        int p = (r + i) % n;
        rc = aptus_coll_irecv(c, rbuf + (size_t)p * blk, blk, p, tag, &q[k++]);
    }
    for (int i = 1; i < n && rc == 0; i++) {
        int p = (r + i) % n;
        rc = aptus_coll_isend(c, sbuf + (size_t)p * blk, blk, p, tag, &q[k++]);
    }
    if (rc == 0)
        aptus_coll_copy(rbuf + (size_t)r * blk, sbuf + (size_t)r * blk, blk);
    int rc2 = aptus_coll_waitall(q, k);
    if (q != local)
        free(q);
    return rc ? rc : rc2;
}

static int alltoall_pairwise(const char *sbuf, char *rbuf, size_t blk, struct aptus_comm *c, int tag)
{
    int n = c->size, r = c->rank, rc = 0;
    int pow2 = (n & (n - 1)) == 0;
    for (int i = 1; i < n && rc == 0; i++) {
        int dst = pow2 ? r ^ i : (r + i) % n, src = pow2 ? r ^ i : (r - i + n) % n;
        rc = aptus_coll_sendrecv(c, sbuf + (size_t)dst * blk, blk, dst, rbuf + (size_t)src * blk, blk, src, tag);
    }
    if (rc == 0) /* the own block last, as above */
        aptus_coll_copy(rbuf + (size_t)r * blk, sbuf + (size_t)r * blk, blk);
    return rc;
}

/* Long blocks: the sends to the next `batch` ranks and the receives from the previous `batch`
 * at once, batch after batch -- every transfer of a batch moves in parallel (a receiver reads
 * each of its senders' blocks itself where the channel can), where the pairwise exchange has
 * one in flight per rank; the batch bounds what is in flight at large scale. The sends go first:
 * a rank with a rendezvous send of its own in flight reads what it receives by one-sided copy
 * where the channel offers that (proto.c, "when busy"). */
static int alltoall_batched(const char *sbuf, char *rbuf, size_t blk, struct aptus_comm *c, int tag)
{
    int n = c->size, r = c->rank, rc = 0;
    int batch = aptus_config.coll_alltoall_batch > 0 ? aptus_config.coll_alltoall_batch : 1;
    if (batch > n - 1)
        batch = n - 1;
    struct aptus_request *local[32], **q = local;
    if (2 * batch > 32 && !(q = calloc(2 * (size_t)batch, sizeof *q)))
        return MPI_ERR_NO_MEM;
    for (int lo = 1; lo < n && rc == 0; lo += batch) {
        int hi = lo + batch < n ? lo + batch : n, k = 0;
        for (int i = lo; i < hi && rc == 0; i++) {
            int dst = (r + i) % n;
            rc = aptus_coll_isend(c, sbuf + (size_t)dst * blk, blk, dst, tag, &q[k++]);
        }
        for (int i = lo; i < hi && rc == 0; i++) {
            int src = (r - i + n) % n;
            rc = aptus_coll_irecv(c, rbuf + (size_t)src * blk, blk, src, tag, &q[k++]);
        }
        int rc2 = aptus_coll_waitall(q, k);
        rc = rc ? rc : rc2;
    }
    if (rc == 0) /* the own block last, as above */
        aptus_coll_copy(rbuf + (size_t)r * blk, sbuf + (size_t)r * blk, blk);
    if (q != local)
        free(q);
    return rc;
}

int aptus_coll_alltoall(const void *sbuf, void *rbuf, size_t blk, struct aptus_comm *c)
{
    int tag = aptus_coll_tag(c), rc = 0;
    int n = c->size;
    if (blk == 0)
        return 0;
    if (n == 1) {
        aptus_coll_copy(rbuf, sbuf, blk);
        return 0;
    }
    int alg = aptus_coll_forced(COLL_ALLTOALL, c, "MPI_Alltoall", &rc);
    if (alg < 0)
        return rc;
    if (alg == ALG_AUTO) /* on 2 ranks every algorithm is one exchange: the pairwise one is the cheapest */
        alg = (blk <= aptus_config.coll_alltoall_short && n >= 4) ? ALG_BRUCK
              : n == 2                                            ? ALG_PAIRWISE
              : blk >= aptus_config.coll_alltoall_long            ? ALG_BATCHED
                                                                  : ALG_LINEAR;
    aptus_coll_ran(COLL_ALLTOALL, alg);
    switch (alg) {
    case ALG_BRUCK: return alltoall_bruck(sbuf, rbuf, blk, c, tag);
    case ALG_PAIRWISE: return alltoall_pairwise(sbuf, rbuf, blk, c, tag);
    case ALG_BATCHED: return alltoall_batched(sbuf, rbuf, blk, c, tag);
    default: return alltoall_linear(sbuf, rbuf, blk, c, tag);
    }
}

int aptus_coll_alltoallv(const char *const *sptr, const size_t *sbytes, char *const *rptr, const size_t *rbytes,
                         struct aptus_comm *c)
{
    int tag = aptus_coll_tag(c), rc = 0;
    if (c->is_inter)
        return alltoallv_linear(sptr, sbytes, rptr, rbytes, c, tag);
    int alg = aptus_coll_forced(COLL_ALLTOALL, c, "MPI_Alltoallv", &rc);
    if (alg < 0)
        return rc;
    if (alg == ALG_AUTO || alg == ALG_BRUCK) {
        size_t most = 0;
        for (int i = 0; i < c->size; i++)
            most = sbytes[i] > most ? sbytes[i] : most;
        alg = most >= aptus_config.coll_alltoall_long ? ALG_PAIRWISE : ALG_LINEAR;
    }
    aptus_coll_ran(COLL_ALLTOALL, alg == ALG_PAIRWISE ? ALG_PAIRWISE : ALG_LINEAR);
    return alg == ALG_PAIRWISE ? alltoallv_pairwise(sptr, sbytes, rptr, rbytes, c, tag)
                               : alltoallv_linear(sptr, sbytes, rptr, rbytes, c, tag);
}
