/* Collectives: the transport on the collective context, barrier, broadcast, and the entry
 * points the rest of the library uses. The other algorithms are in reduce.c, gather.c,
 * allgather.c, alltoall.c and inter.c; the choice between them in select.c. */
#include <stdlib.h>
#include <string.h>

#include "coll/coll_internal.h"
#include "coll/nbc.h"
#include "core/datatype.h"
#include "runtime/config.h"
#include "runtime/progress.h"
#include "runtime/runtime.h"

/* ---- transport -------------------------------------------------------------------------------- */

int aptus_coll_nbc_tag(struct aptus_comm *c)
{
    unsigned seq = (unsigned)c->nbc_seq & 0x1ffffffu;
    c->nbc_seq = (int)((seq + 1) & 0x1ffffffu);
    return (int)(0x40000000u + seq * APTUS_COLL_PHASES);
}

int aptus_coll_tag(struct aptus_comm *c)
{
    /* Blocking collectives: 26 bits of sequence, tags positive and below 2^30; a tag comes back
     * after 2^26 collectives on the same communicator, long after its messages are gone.
     * Nonblocking and persistent ones (recorded schedules) count apart, with tags from 2^30 up
     * (25 bits of sequence): the two kinds never match each other's messages, so programs that
     * start a nonblocking collective and call a blocking one in different orders on different
     * ranks (which the standard forbids but other libraries tolerate) still work. */
    if (aptus_nbc_recording()) {
        int base = aptus_coll_nbc_tag(c);
        aptus_nbc_tag_taken(c, base);
        return base;
    }
    unsigned seq = (unsigned)c->coll_seq & 0x3ffffffu;
    c->coll_seq = (int)((seq + 1) & 0x3ffffffu);
    return (int)(seq * APTUS_COLL_PHASES);
}

/* rr: flags for a send's request (APTUS_RR_NO_HYBRID) */
static int start_msg(int kind, uint8_t rr, struct aptus_comm *c, uint16_t ctx, void *buf, size_t bytes,
                     const struct aptus_dtype *dt, size_t count, int peer, int tag, struct aptus_request **req)
{
    struct aptus_request *r = aptus_req_new(kind);
    *req = NULL;
    if (!r)
        return MPI_ERR_NO_MEM;
    if (dt) {
        aptus_req_set_data(r, buf, count, dt);
        aptus_req_hold_type(r);
    } else {
        r->buf = buf;
        r->bytes = bytes;
    }
    r->peer = peer;
    r->tag = tag;
    r->comm = c;
    r->ctx = ctx;
    int rc;
    if (peer == MPI_PROC_NULL) {
        aptus_req_done_proc_null(r);
        rc = 0;
    } else if (kind == APTUS_REQ_SEND) {
        r->mode = APTUS_MODE_STANDARD;
        r->rr = rr;
        rc = aptus_send_start(r);
    } else {
        rc = aptus_recv_start(r);
    }
    if (rc) {
        aptus_req_free(r);
        return rc;
    }
    *req = r;
    return 0;
}

int aptus_coll_start_msg(int kind, struct aptus_comm *c, uint16_t ctx, void *buf, size_t bytes,
                         const struct aptus_dtype *dt, size_t count, int peer, int tag, struct aptus_request **req)
{
    return start_msg(kind, 0, c, ctx, buf, bytes, dt, count, peer, tag, req);
}

static int start_on(int kind, struct aptus_comm *c, uint16_t ctx, void *buf, size_t bytes, int peer, int tag,
                    struct aptus_request **req)
{
    if (aptus_nbc_recording())
        return aptus_nbc_msg(kind == APTUS_REQ_SEND, c, ctx, buf, bytes, NULL, 0, peer, tag, req);
    return aptus_coll_start_msg(kind, c, ctx, buf, bytes, NULL, 0, peer, tag, req);
}

int aptus_coll_isend_on(struct aptus_comm *c, uint16_t ctx, const void *buf, size_t bytes, int dst, int tag,
                        struct aptus_request **req)
{
    return start_on(APTUS_REQ_SEND, c, ctx, (void *)buf, bytes, dst, tag, req);
}

int aptus_coll_irecv_on(struct aptus_comm *c, uint16_t ctx, void *buf, size_t bytes, int src, int tag,
                        struct aptus_request **req)
{
    return start_on(APTUS_REQ_RECV, c, ctx, buf, bytes, src, tag, req);
}

int aptus_coll_isend(struct aptus_comm *c, const void *buf, size_t bytes, int dst, int tag, struct aptus_request **req)
{
    return aptus_coll_isend_on(c, (uint16_t)(c->ctx + 1), buf, bytes, dst, tag, req);
}

int aptus_coll_isend_wait(struct aptus_comm *c, const void *buf, size_t bytes, int dst, int tag,
                          struct aptus_request **req)
{
    if (aptus_nbc_recording())
        return aptus_coll_isend(c, buf, bytes, dst, tag, req);
    return start_msg(APTUS_REQ_SEND, APTUS_RR_NO_HYBRID, c, (uint16_t)(c->ctx + 1), (void *)buf, bytes, NULL, 0, dst,
                     tag, req);
}

int aptus_coll_irecv(struct aptus_comm *c, void *buf, size_t bytes, int src, int tag, struct aptus_request **req)
{
    return aptus_coll_irecv_on(c, (uint16_t)(c->ctx + 1), buf, bytes, src, tag, req);
}

int aptus_coll_waitall(struct aptus_request **reqs, int n)
{
    if (aptus_nbc_recording())
        return aptus_nbc_wait(reqs, n);
    int rc = 0;
    for (int i = 0; i < n; i++) {
        struct aptus_request *r = reqs[i];
        if (!r)
            continue;
        aptus_wait(r);
        if (rc == 0 && r->kind == APTUS_REQ_RECV && r->st_error)
            rc = r->st_error;
        aptus_req_free(r);
        reqs[i] = NULL;
    }
    return rc;
}

int aptus_coll_send(struct aptus_comm *c, const void *buf, size_t bytes, int dst, int tag)
{
    if (aptus_nbc_recording()) {
        struct aptus_request *r;
        int rc = aptus_coll_isend(c, buf, bytes, dst, tag, &r);
        return rc ? rc : aptus_nbc_wait(&r, 1);
    }
    return aptus_send_now(buf, bytes, dst, tag, c, (uint16_t)(c->ctx + 1), APTUS_MODE_STANDARD);
}

int aptus_coll_recv(struct aptus_comm *c, void *buf, size_t bytes, int src, int tag)
{
    struct aptus_request *r;
    int rc = aptus_coll_irecv(c, buf, bytes, src, tag, &r);
    return rc ? rc : aptus_coll_waitall(&r, 1);
}

int aptus_coll_sendrecv(struct aptus_comm *c, const void *sbuf, size_t sbytes, int dst, void *rbuf, size_t rbytes,
                        int src, int tag)
{
    /* The receive is posted first, so a blocking send cannot deadlock: the peer's matching
     * receive is posted before its own send starts. The blocking send takes the eager
     * shortcut (no request) for small messages. */
    struct aptus_request *r = NULL;
    int rc = aptus_coll_irecv(c, rbuf, rbytes, src, tag, &r);
    if (rc == 0)
        rc = aptus_coll_send(c, sbuf, sbytes, dst, tag);
    int rc2 = aptus_coll_waitall(&r, 1);
    return rc ? rc : rc2;
}

/* ---- reduction data ---------------------------------------------------------------------------- */

struct red_args {
    struct coll_red R;
    const void *in;
    void *inout;
    size_t a, b;
};

static void red_step(const void *args)
{
    const struct red_args *x = args;
    aptus_coll_red_apply(&x->R, x->in, x->inout, x->a, x->b);
}

void aptus_coll_red_apply(const struct coll_red *R, const void *in, void *inout, size_t a, size_t b)
{
    if (b <= a)
        return;
    if (aptus_nbc_recording()) {
        struct red_args x = { *R, in, inout, a, b };
        aptus_nbc_hold_op(R->op);
        aptus_nbc_hold_type(R->dt);
        aptus_nbc_local(red_step, &x, sizeof x);
        return;
    }
    const char *i = (const char *)in + a * R->ext;
    char *io = (char *)inout + a * R->ext;
    if (R->op->predefined) {
        aptus_op_apply_kernel(R->op->predefined, i, io, b - a, R->kernel);
        return;
    }
    aptus_op_reduce(R->op, i - R->lb, io - R->lb, b - a, R->dt, R->h);
}

void *aptus_coll_red_alloc(const struct coll_red *R, size_t n)
{
    return aptus_coll_buf(coll_red_span(R, 0, n));
}

/* ---- temporary buffers ------------------------------------------------------------------------ */

/* Large temporaries come from a small cache of freed buffers. Allocating and freeing a few MiB
 * per call made glibc give the top of the heap back and take it again on every call, with a
 * page fault per 4 KiB (a 1 MiB MPI_Reduce of 2 ranks went from about 0.25 to 1.2 ms). */
enum { BUF_HDR = 64, BUF_SLOTS = 8 };
#define BUF_POOL_MIN ((size_t)64 << 10)
#if defined(__SANITIZE_ADDRESS__)
#define BUF_POOL_BYTES 0 /* AddressSanitizer builds: no cache, so that a use after release is caught */
#else
#define BUF_POOL_BYTES ((size_t)256 << 20)
#endif

static struct {
    char *raw;
    size_t cap;
} buf_pool[BUF_SLOTS];
static size_t buf_pooled;

/* Small temporaries (up to BUF_SMALL bytes) come from a free list of fixed-size blocks: the
 * latency of a small reduction is a few hundred ns, and two aligned allocations were a good
 * part of it. */
enum { BUF_SMALL = 4096, BUF_SMALL_KEEP = 8 };
static char *buf_small[BUF_SMALL_KEEP];
static int buf_nsmall;

/* Per-call arrays (aptus_coll_arr): classes of 128 << k bytes (k < ARR_CLASSES), each with a
 * free list of up to ARR_KEEP blocks; a 16-byte header keeps the class (ARR_CLASSES: malloc). */
enum { ARR_HDR = 16, ARR_CLASSES = 6, ARR_KEEP = 16 };
static void *arr_free_list[ARR_CLASSES][ARR_KEEP];
static int arr_nfree[ARR_CLASSES];

void *aptus_coll_arr(size_t bytes, int zero)
{
    int k = 0;
    while (k < ARR_CLASSES && ((size_t)128 << k) < bytes)
        k++;
    char *raw;
    if (k < ARR_CLASSES && arr_nfree[k] > 0 && BUF_POOL_BYTES > 0) {
        raw = arr_free_list[k][--arr_nfree[k]];
    } else {
        size_t cap = k < ARR_CLASSES ? (size_t)128 << k : bytes;
        if (cap > SIZE_MAX - ARR_HDR || !(raw = malloc(cap + ARR_HDR)))
            return NULL;
        *(int *)raw = k;
    }
    if (zero)
        memset(raw + ARR_HDR, 0, bytes);
    return raw + ARR_HDR;
}

void aptus_coll_arr_free(void *p)
{
    if (!p)
        return;
    char *raw = (char *)p - ARR_HDR;
    int k = *(int *)raw;
    if (k < ARR_CLASSES && arr_nfree[k] < ARR_KEEP && BUF_POOL_BYTES > 0)
        arr_free_list[k][arr_nfree[k]++] = raw;
    else
        free(raw);
}

void *aptus_coll_buf(size_t bytes)
{
    if (bytes <= BUF_SMALL) {
        if (buf_nsmall > 0)
            return buf_small[--buf_nsmall] + BUF_HDR;
        bytes = BUF_SMALL;
    } else if (bytes >= BUF_POOL_MIN) {
        int best = -1;
        for (int i = 0; i < BUF_SLOTS; i++)
            if (buf_pool[i].raw && buf_pool[i].cap >= bytes && (best < 0 || buf_pool[i].cap < buf_pool[best].cap))
                best = i;
        if (best >= 0) {
            char *raw = buf_pool[best].raw;
            buf_pooled -= buf_pool[best].cap;
            buf_pool[best].raw = NULL;
            return raw + BUF_HDR;
        }
    }
    void *raw = NULL;
    if (bytes > SIZE_MAX - BUF_HDR || posix_memalign(&raw, BUF_HDR, bytes + BUF_HDR) != 0)
        return NULL;
    *(size_t *)raw = bytes;
    return (char *)raw + BUF_HDR;
}

static void buf_release(void *p);

void aptus_coll_buf_free(void *p)
{
    if (!p)
        return;
    if (aptus_nbc_recording()) { /* recorded steps may use it: released with the schedule */
        aptus_nbc_defer(buf_release, p);
        return;
    }
    buf_release(p);
}

static void buf_release(void *p)
{
    char *raw = (char *)p - BUF_HDR;
    size_t cap = *(size_t *)raw;
    if (cap == BUF_SMALL && BUF_POOL_BYTES > 0 && buf_nsmall < BUF_SMALL_KEEP) {
        buf_small[buf_nsmall++] = raw;
        return;
    }
    if (cap >= BUF_POOL_MIN && cap <= BUF_POOL_BYTES) {
        int slot = -1;
        for (int i = 0; i < BUF_SLOTS && slot < 0; i++)
            if (!buf_pool[i].raw)
                slot = i;
        if (slot < 0) { /* replace the smallest cached buffer if this one is larger */
            for (int i = 0; i < BUF_SLOTS; i++)
                if (buf_pool[i].cap < cap && (slot < 0 || buf_pool[i].cap < buf_pool[slot].cap))
                    slot = i;
            if (slot >= 0) {
                buf_pooled -= buf_pool[slot].cap;
                free(buf_pool[slot].raw);
                buf_pool[slot].raw = NULL;
            }
        }
        while (slot >= 0 && buf_pooled + cap > BUF_POOL_BYTES) { /* make room: drop the largest */
            int big = -1;
            for (int i = 0; i < BUF_SLOTS; i++)
                if (buf_pool[i].raw && (big < 0 || buf_pool[i].cap > buf_pool[big].cap))
                    big = i;
            if (big < 0)
                break;
            buf_pooled -= buf_pool[big].cap;
            free(buf_pool[big].raw);
            buf_pool[big].raw = NULL;
        }
        if (slot >= 0) {
            buf_pool[slot].raw = raw;
            buf_pool[slot].cap = cap;
            buf_pooled += cap;
            return;
        }
    }
    free(raw);
}

/* ---- local data steps ---------------------------------------------------------------------------- */

struct copy_args {
    void *dst;
    const void *src;
    size_t n;
};

static void copy_step(const void *args)
{
    const struct copy_args *x = args;
    memmove(x->dst, x->src, x->n);
}

void aptus_coll_copy(void *dst, const void *src, size_t n)
{
    if (n == 0 || dst == src)
        return;
    if (aptus_nbc_recording()) {
        struct copy_args x = { dst, src, n };
        aptus_nbc_local(copy_step, &x, sizeof x);
        return;
    }
    memmove(dst, src, n);
}

struct pack_args {
    const void *from;
    void *to;
    size_t count;
    const struct aptus_dtype *dt;
};

static void pack_step(const void *args)
{
    const struct pack_args *x = args;
    aptus_dt_pack(x->from, x->count, x->dt, x->to);
}

static void unpack_step(const void *args)
{
    const struct pack_args *x = args;
    aptus_dt_unpack(x->from, x->count, x->dt, x->to);
}

static void pack_record(void (*fn)(const void *), const void *from, size_t count, const struct aptus_dtype *dt,
                        void *to)
{
    struct pack_args x = { from, to, count, dt };
    aptus_nbc_hold_type(dt);
    aptus_nbc_local(fn, &x, sizeof x);
}

void aptus_coll_pack(const void *buf, size_t count, const struct aptus_dtype *dt, void *packed)
{
    if (aptus_nbc_recording())
        pack_record(pack_step, buf, count, dt, packed);
    else
        aptus_dt_pack(buf, count, dt, packed);
}

void aptus_coll_unpack(const void *packed, size_t count, const struct aptus_dtype *dt, void *buf)
{
    if (aptus_nbc_recording())
        pack_record(unpack_step, packed, count, dt, buf);
    else
        aptus_dt_unpack(packed, count, dt, buf);
}

/* ---- barrier ---------------------------------------------------------------------------------- */

/* Dissemination: in round k every rank signals rank + 2^k and waits for rank - 2^k. */
static int barrier_intra(struct aptus_comm *c)
{
    int n = c->size, r = c->rank, rc = 0;
    int tag = aptus_coll_tag(c);
    char dummy = 0;
    for (int k = 1; k < n && rc == 0; k <<= 1)
        rc = aptus_coll_sendrecv(c, &dummy, 0, (r + k) % n, &dummy, 0, (r - k + n) % n, tag);
    return rc;
}

int aptus_barrier(struct aptus_comm *c)
{
    return c->is_inter ? aptus_coll_inter_barrier(c) : barrier_intra(c);
}

/* ---- broadcast -------------------------------------------------------------------------------- */

/* Binomial tree on ranks relative to the root: a rank receives from the rank that differs in
 * its lowest set bit, then sends to the ranks below that bit. */
static int bcast_binomial(void *buf, size_t bytes, int root, struct aptus_comm *c, int tag)
{
    int n = c->size, vr = (c->rank - root + n) % n;
    int mask = 1, rc = 0;
    while (mask < n) {
        if (vr & mask) {
            rc = aptus_coll_recv(c, buf, bytes, (vr - mask + root) % n, tag);
            break;
        }
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0 && rc == 0; mask >>= 1)
        if (vr + mask < n)
            rc = aptus_coll_send(c, buf, bytes, (vr + mask + root) % n, tag);
    return rc;
}

/* Bytes [lo, hi) of relative blocks [b0, b1) when the data is cut into chunks of `chunk`. */
static void block_range(size_t bytes, size_t chunk, int b0, int b1, size_t *lo, size_t *hi)
{
    size_t l = (size_t)b0 * chunk, h = (size_t)b1 * chunk;
    *lo = l < bytes ? l : bytes;
    *hi = h < bytes ? h : bytes;
}

/* van de Geijn: binomial scatter of n chunks (relative rank v gets chunk v, with its whole
 * subtree's chunks passing through it), then a ring allgather of the chunks. */
static int bcast_scatter_allgather(void *buf, size_t bytes, int root, struct aptus_comm *c, int tag)
{
    int n = c->size, vr = (c->rank - root + n) % n, rc = 0;
    char *p = buf;
    size_t chunk = (bytes + (size_t)n - 1) / (size_t)n, lo, hi;
    int mask = 1;
    /* scatter: receive my subtree's chunks [vr, vr + mask) from the parent */
    while (mask < n) {
        if (vr & mask) {
            int end = vr + mask < n ? vr + mask : n;
            block_range(bytes, chunk, vr, end, &lo, &hi);
            if (hi > lo)
                rc = aptus_coll_recv(c, p + lo, hi - lo, (vr - mask + root) % n, tag);
            break;
        }
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0 && rc == 0; mask >>= 1) {
        if (vr + mask < n) {
            int end = vr + 2 * mask < n ? vr + 2 * mask : n;
            block_range(bytes, chunk, vr + mask, end, &lo, &hi);
            if (hi > lo)
                rc = aptus_coll_send(c, p + lo, hi - lo, (vr + mask + root) % n, tag);
        }
    }
    /* ring allgather of the chunks, in relative ranks */
    int right = (vr + 1) % n, left = (vr - 1 + n) % n;
    for (int s = 0; s < n - 1 && rc == 0; s++) {
        int sb = (vr - s + n) % n, rb = (vr - s - 1 + n) % n;
        size_t slo, shi, rlo, rhi;
        block_range(bytes, chunk, sb, sb + 1, &slo, &shi);
        block_range(bytes, chunk, rb, rb + 1, &rlo, &rhi);
        struct aptus_request *rq[2] = { NULL, NULL };
        if (rhi > rlo)
            rc = aptus_coll_irecv(c, p + rlo, rhi - rlo, (left + root) % n, tag + 1, &rq[0]);
        if (rc == 0 && shi > slo)
            rc = aptus_coll_isend(c, p + slo, shi - slo, (right + root) % n, tag + 1, &rq[1]);
        int rc2 = aptus_coll_waitall(rq, 2);
        if (rc == 0)
            rc = rc2;
    }
    return rc;
}

/* Pipelined binomial tree: the message cut into segments small enough to go eagerly on every
 * channel; a rank forwards each segment to its children as soon as it has it. The root sends
 * everything without waiting for its children to arrive (the segments wait in their blocks), and
 * no rendezvous needs the receiver scheduled at the same moment as the sender -- on a node with
 * more ranks than cores each hop of a rendezvous waits for a receiver that has no core. */
#define BCAST_SEGMENT  8192
#define BCAST_FLAT_MAX ((size_t)256 << 10)
static int bcast_pipelined(void *buf, size_t bytes, int root, struct aptus_comm *c, int tag)
{
    int n = c->size, vr = (c->rank - root + n) % n, rc = 0;
    int parent = -1, mask = 1, nchild = 0, child[32];
    while (mask < n) {
        if (vr & mask) {
            parent = (vr - mask + root) % n;
            break;
        }
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (vr + mask < n)
            child[nchild++] = (vr + mask + root) % n;
    size_t nseg = (bytes + BCAST_SEGMENT - 1) / BCAST_SEGMENT;
    struct aptus_request **rq = nchild ? aptus_coll_arr(sizeof *rq * nseg * (size_t)nchild, 1) : NULL;
    if (nchild && !rq)
        return MPI_ERR_NO_MEM;
    char *p = buf;
    for (size_t s = 0; s < nseg && rc == 0; s++) {
        size_t off = s * BCAST_SEGMENT, len = bytes - off < BCAST_SEGMENT ? bytes - off : BCAST_SEGMENT;
        if (parent >= 0)
            rc = aptus_coll_recv(c, p + off, len, parent, tag);
        for (int k = 0; k < nchild && rc == 0; k++)
            rc = aptus_coll_isend(c, p + off, len, child[k], tag, &rq[s * (size_t)nchild + (size_t)k]);
    }
    if (nchild) {
        int rc2 = aptus_coll_waitall(rq, (int)(nseg * (size_t)nchild));
        if (rc == 0)
            rc = rc2;
        aptus_coll_arr_free(rq);
    }
    return rc;
}

/* Flat: the root offers the whole message to every rank at once and waits; each rank takes it
 * by itself -- on a node, a one-sided read of the root's buffer (or the root's write where the
 * receiver was first), with no HYBRID copy: the root waits for its sends anyway. Where ranks
 * share cores the reads run on whichever cores are free, none waits for a parent that has no
 * core, and every byte is copied once (the trees copy twice, or wait a hop per level). */
static int bcast_flat(void *buf, size_t bytes, int root, struct aptus_comm *c, int tag)
{
    int n = c->size, rc = 0;
    if (c->rank != root)
        return aptus_coll_recv(c, buf, bytes, root, tag);
    struct aptus_request **rq = aptus_coll_arr(sizeof *rq * (size_t)(n - 1), 1);
    if (!rq)
        return MPI_ERR_NO_MEM;
    for (int d = 1; d < n && rc == 0; d++)
        rc = aptus_coll_isend_wait(c, buf, bytes, (root + d) % n, tag, &rq[d - 1]);
    int rc2 = aptus_coll_waitall(rq, n - 1);
    aptus_coll_arr_free(rq);
    return rc ? rc : rc2;
}

/* Every rank of c on this node. */
static int coll_on_node(const struct aptus_comm *c)
{
    for (int r = 0; r < c->size; r++)
        if (aptus_rt.node_of[c->world ? c->world[r] : r] != aptus_rt.node)
            return 0;
    return 1;
}

int aptus_coll_bcast(void *buf, size_t bytes, int root, struct aptus_comm *c, const char *fn)
{
    if (c->is_inter)
        return aptus_coll_inter_bcast(buf, bytes, root, c);
    int n = c->size, rc = 0;
    int tag = aptus_coll_tag(c);
    if (n == 1 || bytes == 0)
        return 0;
    int alg = aptus_coll_forced(COLL_BCAST, c, fn, &rc);
    if (alg < 0)
        return rc;
    if (alg == ALG_AUTO) {
        /* Above two segments the pipeline, up to the long limit. On a node with more ranks than
         * cores, unless APTUS_COLL_BCAST_LONG is set, every rank of the communicator there: the
         * flat broadcast above two segments up to 256 KiB, each rank reading for itself, then
         * the binomial tree (docs/BENCHMARKS.md, "Collectives with ranks sharing cores"). */
        size_t lng = aptus_config.coll_bcast_long;
        int shared = bytes > 2 * BCAST_SEGMENT && aptus_wait_spin_cap >= 0 &&
                     !aptus_config_given("APTUS_COLL_BCAST_LONG") && coll_on_node(c);
        if (shared)
            alg = bytes <= BCAST_FLAT_MAX ? ALG_LINEAR : ALG_BINOMIAL;
        else if (bytes > 2 * BCAST_SEGMENT && bytes < lng)
            alg = ALG_PIPELINED;
        else
            alg = bytes >= lng && n > 2 ? ALG_SCATTER_ALLGATHER : ALG_BINOMIAL;
    }
    aptus_coll_ran(COLL_BCAST, alg);
    if (alg == ALG_SCATTER_ALLGATHER)
        return bcast_scatter_allgather(buf, bytes, root, c, tag);
    if (alg == ALG_PIPELINED)
        return bcast_pipelined(buf, bytes, root, c, tag);
    if (alg == ALG_LINEAR)
        return bcast_flat(buf, bytes, root, c, tag);
    return bcast_binomial(buf, bytes, root, c, tag);
}

int aptus_bcast(void *buf, size_t bytes, int root, struct aptus_comm *c)
{
    return aptus_coll_bcast(buf, bytes, root, c, "MPI_Bcast");
}

/* ---- for the library itself -------------------------------------------------------------------- */

int aptus_coll_red_init(struct coll_red *R, const struct aptus_op *op, MPI_Datatype h, const struct aptus_dtype *dt)
{
    memset(R, 0, sizeof *R);
    R->op = op;
    R->h = h;
    R->dt = dt;
    R->commute = op->predefined ? 1 : op->commute;
    R->kernel = op->predefined ? aptus_op_kernel(h) : 0;
    if (op->predefined && R->kernel == 0)
        return MPI_ERR_OP;
    R->ext = (size_t)dt->extent;
    R->lb = op->predefined ? 0 : (size_t)dt->true_lb;
    R->tex = op->predefined ? (size_t)dt->extent : (size_t)dt->true_extent;
    if (R->tex == 0 || R->ext == 0)
        R->tex = R->ext = dt->size ? dt->size : 1;
    return 0;
}

int aptus_allreduce_u32(struct aptus_comm *c, uint32_t *words, size_t count, int op_id)
{
    struct aptus_op op = { APTUS_MAGIC_OP, 1, 1, op_id, NULL, NULL };
    struct coll_red R;
    int rc = aptus_coll_red_init(&R, &op, MPI_UINT32_T, aptus_dtype_get(MPI_UINT32_T));
    if (rc)
        return rc;
    if (c->is_inter)
        return aptus_coll_inter_allreduce(NULL, words, count, &R, c);
    return aptus_coll_allreduce(NULL, words, count, &R, c);
}

int aptus_allgather_internal(struct aptus_comm *c, const void *sbuf, void *rbuf, size_t bytes)
{
    if (!c->is_inter)
        return aptus_coll_allgather(sbuf, rbuf, bytes, c);
    int n = c->npeers;
    size_t *len = malloc(sizeof(size_t) * (size_t)n);
    char **ptr = malloc(sizeof(char *) * (size_t)n);
    int rc = MPI_ERR_NO_MEM;
    if (len && ptr) {
        for (int i = 0; i < n; i++) {
            len[i] = bytes;
            ptr[i] = (char *)rbuf + (size_t)i * bytes;
        }
        rc = aptus_coll_inter_allgatherv(sbuf, bytes, ptr, len, c);
    }
    free(len);
    free(ptr);
    return rc;
}
