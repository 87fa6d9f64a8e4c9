/* The RC RDMA channel (rc-rdma; seed 002 H.1 and H.2): one-sided reads and writes over the
 * connections rc.c opens on demand, with the registration cache.
 *
 * rc-rdma reaches a peer while its connection is up, like rc-sr, and sends its frames the same
 * way (the message layer's RTS, CTS and FIN, and eager messages below its rendezvous size). A
 * rendezvous message moves one-sidedly, by the mode APTUS_RC_RDMA_MODE names:
 *   write  the receiver registers its buffer and sends its address and key (CTS); the sender
 *          writes (put_notify); the receiver learns the data is in place from the last write's
 *          remote completion data (a note: the receive request), or -- providers without it,
 *          or APTUS_RC_RDMA_NOTE=frame -- from a NOTE frame sent once the writes are
 *          delivered (FI_DELIVERY_COMPLETE: a write's local completion only says the data left);
 *   read   the sender registers its buffer and offers it in the RTS; the receiver reads, then
 *          sends FIN.
 * Registrations go through the registration cache (fabric/rcache.h): found by address range,
 * kept while unused (least recently used evicted past APTUS_RCACHE_MAX_ENTRIES / _BYTES), and
 * dropped when the application frees the memory (runtime/memhooks.c reports it).
 *
 * Operations: each put or get is copied into an operation record and handed to the provider
 * in pieces (at most its iov limit and largest message each); what the provider has no room
 * for waits, in order, and goes from the progress engine. Every operation of an endpoint stays
 * in its list (in issue order) until it and all before it are complete -- the order a NOTE
 * frame must keep -- and a closing connection finds there what it still holds. */
#ifdef APTUS_HAVE_LIBFABRIC

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include "channel/channel.h"
#include "channel/rc/rc_int.h"
#include "channel/stats_json.h"
#include "core/errors.h"
#include "fabric/fabric.h"
#include "fabric/rcache.h"
#include "runtime/config.h"
#include "runtime/json.h"
#include "runtime/memhooks.h"
#include "runtime/progress.h"
#include "runtime/runtime.h"

#define RCR_IOV_MAX 64 /* local pieces per provider operation at most */

struct rcr_op {
    struct aptus_fab_ctx ctx; /* first: the completion's context */
    struct rcr_op *wnext;     /* in its endpoint's list of operations waiting for the provider */
    struct rcr_op *fnext;     /* in its endpoint's list of operations in issue order */
    struct rc_ep *e;          /* NULL once the endpoint has gone */
    struct aptus_completion *comp;
    uint8_t write, note_frame, done, failed, flush, waiting;
    int left; /* provider operations not yet complete */
    uint64_t note, raddr, rkey;
    size_t bytes; /* in all */
    /* what is still to be handed over: piece i from offset off; remote offset rdone */
    int n, i;
    size_t off, rdone;
    struct aptus_rreg *lreg; /* FI_MR_LOCAL: the registration of the local pieces (else NULL) */
    struct iovec iov[];
};

struct rcr_mr {
    struct fid_mr *mr;
    uint64_t key, raddr; /* raddr: what a peer names the registration's start by */
    void *desc;          /* the local descriptor where the provider asks for one (FI_MR_LOCAL) */
};

static struct {
    int active;
    struct aptus_fab_rc *r;
    int write;     /* rendezvous by write (else read) */
    int note_data; /* notes ride the last write's remote CQ data (else NOTE frames) */
    size_t max_op; /* bytes per provider operation */
    int iov_limit;
    struct aptus_rcache cache;
    int cache_on;
    int cache_blind; /* off: the program's frees do not reach the memory hooks */
    int nout;        /* operations not complete, every endpoint */
    int warned_reg;
    struct {
        uint64_t reads, writes, bytes_read, bytes_written, notes_data, notes_frame, waited;
    } st;
} rcr;

int aptus_rcr_waiting;

/* ---- registration ----------------------------------------------------------------------- */

static int reg_cb(void *ctx, void *addr, size_t len, void **handle)
{
    (void)ctx;
    struct rcr_mr *m = malloc(sizeof *m);
    void *desc;
    if (!m)
        return -1;
    int rc = aptus_fab_rc_mr_reg(rcr.r, addr, len, FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE, &m->mr, &desc,
                                 &m->key, &m->raddr);
    m->desc = desc;
    if (rc != 0) {
        if (!rcr.warned_reg++)
            fprintf(stderr,
                    "Aptus MPI: rank %d: rc-rdma: cannot register %zu bytes of memory (%s; ulimit -l, "
                    "APTUS_FABRIC_REG_LIMIT?): such "
                    "messages are copied instead\n",
                    aptus_rt.rank, len, aptus_fab_strerror(rc));
        free(m);
        return -1;
    }
    *handle = m;
    aptus_memhooks_watch(addr, len);
    return 0;
}

static void dereg_cb(void *ctx, void *handle)
{
    (void)ctx;
    struct rcr_mr *m = handle;
    aptus_fab_mr_close(m->mr);
    free(m);
}

static const struct aptus_rcache_ops rcr_cache_ops = { reg_cb, dereg_cb };

/* The application gives memory back (runtime/memhooks.c, under its lock): registrations over
 * it go. */
static void rcr_unmapped(const void *addr, size_t len)
{
    if (rcr.active)
        aptus_rcache_invalidate(&rcr.cache, addr, len);
}

static int rcr_mem_reg(void *addr, size_t len, struct aptus_memh **mh, uint64_t *raddr, uint64_t *rkey)
{
    if (!rcr.active)
        return APTUS_ERR;
    aptus_memhooks_lock();
    struct aptus_rreg *g = aptus_rcache_get(&rcr.cache, addr, len ? len : 1);
    aptus_memhooks_unlock();
    if (!g)
        return APTUS_ERR;
    const struct rcr_mr *m = g->handle;
    *raddr = m->raddr + ((uintptr_t)addr - g->base);
    *rkey = m->key;
    *mh = (struct aptus_memh *)g;
    return APTUS_OK;
}

static void rcr_mem_dereg(struct aptus_memh *mh)
{
    if (!rcr.active)
        return;
    aptus_memhooks_lock();
    aptus_rcache_put(&rcr.cache, (struct aptus_rreg *)mh);
    aptus_memhooks_unlock();
}

/* ---- operations ------------------------------------------------------------------------- */

static void op_free(struct rcr_op *op)
{
    if (op->lreg)
        rcr_mem_dereg((struct aptus_memh *)op->lreg);
    free(op);
}

/* FI_MR_LOCAL: the local side of an operation registered too (through the cache: one
 * registration over the hull of its pieces). 0, or -1 when it cannot be registered. */
static int local_reg(struct rcr_op *op)
{
    if (!rcr.r->mr_local || op->n == 0)
        return 0;
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    for (int i = 0; i < op->n; i++) {
        uintptr_t b = (uintptr_t)op->iov[i].iov_base, e = b + op->iov[i].iov_len;
        if (op->iov[i].iov_len && b < lo)
            lo = b;
        if (op->iov[i].iov_len && e > hi)
            hi = e;
    }
    if (hi <= lo)
        return 0; /* only empty pieces */
    aptus_memhooks_lock();
    op->lreg = aptus_rcache_get(&rcr.cache, (void *)lo, hi - lo);
    aptus_memhooks_unlock();
    return op->lreg ? 0 : -1;
}

static void wait_count(int delta)
{
    int was = aptus_rcr_waiting;
    aptus_rcr_waiting += delta;
    if (!was && aptus_rcr_waiting)
        aptus_progress_hold_awake(1); /* no wake-up comes for the provider's room */
    else if (was && !aptus_rcr_waiting)
        aptus_progress_hold_awake(-1);
}

/* Hands op's remaining pieces to the provider: 1 (all handed over), 0 (no room: the rest
 * waits) or a negative libfabric error code. */
static int post(struct rcr_op *op)
{
    struct rc_ep *e = op->e;
    while (op->i < op->n) {
        struct iovec v[RCR_IOV_MAX];
        void *descs[RCR_IOV_MAX];
        int k = 0, i = op->i;
        size_t bytes = 0, off = op->off;
        while (i < op->n && k < rcr.iov_limit && bytes < rcr.max_op) {
            size_t take = op->iov[i].iov_len - off;
            if (take > rcr.max_op - bytes)
                take = rcr.max_op - bytes;
            if (take) {
                v[k].iov_base = (char *)op->iov[i].iov_base + off;
                v[k].iov_len = take;
                descs[k] = op->lreg ? ((const struct rcr_mr *)op->lreg->handle)->desc : NULL;
                k++;
                bytes += take;
                off += take;
            }
            if (off == op->iov[i].iov_len) {
                i++;
                off = 0;
            }
        }
        if (!k) { /* only empty pieces were left */
            op->i = op->n;
            break;
        }
        int last = i == op->n;
        struct fi_rma_iov rv = { op->raddr + op->rdone, bytes, op->rkey };
        struct fi_msg_rma m = { .msg_iov = v,
                                .desc = op->lreg ? descs : NULL,
                                .iov_count = (size_t)k,
                                .addr = 0,
                                .rma_iov = &rv,
                                .rma_iov_count = 1,
                                .context = &op->ctx,
                                .data = op->note };
        uint64_t flags = FI_COMPLETION;
        if (op->write && op->note_frame)
            flags |= FI_DELIVERY_COMPLETE;
        else if (op->write && last && !op->note_frame && op->note)
            flags |= FI_REMOTE_CQ_DATA;
        ssize_t rc = op->write ? fi_writemsg(e->ep, &m, flags) : fi_readmsg(e->ep, &m, flags);
        if (rc == -FI_EAGAIN)
            return 0;
        if (rc != 0)
            return (int)rc;
        if (flags & FI_REMOTE_CQ_DATA)
            rcr.st.notes_data++;
        op->left++;
        e->rma_out++;
        if (!op->write || (flags & FI_DELIVERY_COMPLETE)) /* answered by the peer's side */
            aptus_rc_out(e);
        op->i = i;
        op->off = off;
        op->rdone += bytes;
    }
    return 1;
}

static void wait_push(struct rc_ep *e, struct rcr_op *op)
{
    op->wnext = NULL;
    if (e->wait_tail)
        e->wait_tail->wnext = op;
    else
        e->wait_head = op;
    e->wait_tail = op;
    op->waiting = 1;
    wait_count(1);
    rcr.st.waited++;
}

static void wait_pop(struct rc_ep *e)
{
    struct rcr_op *op = e->wait_head;
    e->wait_head = op->wnext;
    if (!e->wait_head)
        e->wait_tail = NULL;
    op->wnext = NULL;
    op->waiting = 0;
    wait_count(-1);
}

/* Takes finished operations off the head of e's list (freeing them), sending the NOTE frames
 * they carry; stops at the first one not finished, or whose note finds no room (returns 1:
 * that one waits, retried from progress). */
static int drain(struct rc_ep *e)
{
    struct rcr_op *op;
    while ((op = e->fifo_head) && op->done) {
        if (op->flush && op->comp) {
            aptus_completion_done(op->comp, APTUS_OK);
            op->comp = NULL;
        }
        if (op->note_frame && !op->failed) {
            uint8_t f[16] = { RC_F_NOTE };
            memcpy(f + 8, &op->note, sizeof op->note);
            int r = aptus_rc_frame(e, f, sizeof f, NULL, 0);
            if (r == APTUS_NORES) {
                if (!op->waiting) /* retried from progress */
                    wait_push(e, op);
                return 1;
            }
            if (r != APTUS_OK)
                aptus_rc_lost(e->rank, "a write's note could not be sent over its connection");
            rcr.st.notes_frame++;
            op->note_frame = 0;
        }
        e->fifo_head = op->fnext;
        if (!e->fifo_head)
            e->fifo_tail = NULL;
        op_free(op);
    }
    return 0;
}

/* Every piece of op is complete. */
static void finish(struct rcr_op *op)
{
    op->done = 1;
    rcr.nout--;
    if (op->comp && !op->flush) {
        aptus_completion_done(op->comp, op->failed ? APTUS_ERR : APTUS_OK);
        op->comp = NULL;
    }
    if (op->e)
        (void)drain(op->e);
    else
        op_free(op);
}

void aptus_rcr_completion(struct aptus_fab_ctx *ctx, int ok)
{
    struct rcr_op *op = (struct rcr_op *)ctx;
    op->left--;
    if (op->e) {
        op->e->rma_out--;
        if (!op->write || op->note_frame)
            op->e->in_n++; /* (an answer; not a frame: rc_stall.c) */
    }
    if (!ok && !op->failed) {
        op->failed = 1;
        if (op->e)
            aptus_rc_lost(op->e->rank, "a one-sided operation over its connection failed");
    }
    if (op->left == 0 && op->i == op->n)
        finish(op);
}

/* Starts an operation on e: APTUS_INPROGRESS (comp counts it), or APTUS_ERR. */
static int submit(struct rc_ep *e, int write, const struct iovec *local, int n, uint64_t raddr, uint64_t rkey,
                  int with_note, uint64_t note, struct aptus_completion *comp, int flush)
{
    if (!e->ep || e->base.failed || e->rdma.failed)
        return APTUS_ERR;
    struct rcr_op *op = calloc(1, sizeof *op + (size_t)n * sizeof(struct iovec));
    if (!op)
        return APTUS_ERR;
    op->ctx.kind = RC_CTX_RMA;
    op->e = e;
    op->comp = comp;
    op->write = (uint8_t)write;
    op->flush = (uint8_t)flush;
    op->note_frame = (uint8_t)(with_note && !rcr.note_data);
    op->note = with_note ? note : 0;
    op->raddr = raddr;
    op->rkey = rkey;
    op->n = n;
    for (int i = 0; i < n; i++) {
        op->iov[i] = local[i];
        op->bytes += local[i].iov_len;
    }
    if (with_note && !op->note_frame && !note) {
        op_free(op);
        return APTUS_ERR; /* a note of 0 cannot be told from none */
    }
    if (local_reg(op) != 0) {
        op_free(op);
        return APTUS_ERR;
    }
    e->act++;
    int r = e->wait_head ? 0 : post(op);
    if (r < 0 && op->left == 0) {
        op_free(op);
        return APTUS_ERR;
    }
    if (r < 0)
        aptus_rc_lost(e->rank, "a one-sided operation could not be handed over in full");
    if (write) {
        rcr.st.writes++;
        rcr.st.bytes_written += op->bytes;
    } else if (!flush) {
        rcr.st.reads++;
        rcr.st.bytes_read += op->bytes;
    }
    op->fnext = NULL;
    if (e->fifo_tail)
        e->fifo_tail->fnext = op;
    else
        e->fifo_head = op;
    e->fifo_tail = op;
    rcr.nout++;
    if (r == 0)
        wait_push(e, op);
    else if (op->left == 0)
        finish(op); /* nothing to hand over (a flush, or empty pieces) */
    return APTUS_INPROGRESS;
}

/* Hands over what waits on e; 1 when nothing is left waiting. */
static int kick(struct rc_ep *e)
{
    struct rcr_op *op;
    while ((op = e->wait_head)) {
        if (op->done) { /* a note that found no room (drain may free op) */
            wait_pop(e);
            if (drain(e))
                return 0; /* still none */
            continue;
        }
        int r = post(op);
        if (r == 0)
            return 0;
        wait_pop(e);
        if (r < 0) {
            op->failed = 1;
            aptus_rc_lost(e->rank, "a one-sided operation could not be handed over");
            op->i = op->n;
        }
        if (op->left == 0)
            finish(op);
    }
    return 1;
}

int aptus_rcr_progress(void)
{
    int events = 0;
    for (int r = 0; r < aptus_rt.nprocs && aptus_rcr_waiting; r++) {
        struct rc_ep *e = aptus_rc_up(r);
        if (e && e->wait_head) {
            events++;
            kick(e);
        }
    }
    return events;
}

int aptus_rcr_ep_drop(struct rc_ep *e)
{
    int lost = 0;
    while (e->wait_head)
        wait_pop(e);
    struct rcr_op *op = e->fifo_head;
    e->fifo_head = e->fifo_tail = NULL;
    while (op) {
        struct rcr_op *next = op->fnext;
        if (!op->done || op->note_frame)
            lost++;
        if (op->done) {
            op_free(op);
        } else {
            op->e = NULL;
            op->failed = 1;
            op->i = op->n; /* nothing more of it is handed over */
            if (op->left == 0)
                finish(op); /* nothing of it with the provider: it ends here, failed */
            /* else its completions end it */
        }
        op = next;
    }
    e->rma_out = 0;
    return lost;
}

int aptus_rcr_active(void)
{
    return rcr.active;
}

int aptus_rcr_busy(void)
{
    return rcr.nout > 0 || aptus_rcr_waiting > 0;
}

/* ---- the channel's operations ----------------------------------------------------------- */

static int rcr_reaches(int world_rank)
{
    return rcr.active && aptus_rc_up(world_rank) != NULL;
}

static int rcr_ep_open(struct aptus_peer *p, struct aptus_ep **out)
{
    struct rc_ep *e = rcr.active ? aptus_rc_up(p->world_rank) : NULL;
    if (!e)
        return APTUS_NORES;
    e->handed |= RC_HANDED_RDMA;
    *out = &e->rdma;
    return APTUS_OK;
}

static void rcr_ep_close(struct aptus_ep *ep)
{
    aptus_rc_ep_release(rc_ep_of_rdma(ep), RC_HANDED_RDMA);
}

static int rcr_send_frame(struct aptus_ep *ep, const void *hdr, size_t hdrlen, const void *payload, size_t len)
{
    return aptus_rc_frame(rc_ep_of_rdma(ep), hdr, hdrlen, payload, len);
}

static int rcr_send_frame_packed(struct aptus_ep *ep, const void *hdr, size_t hdrlen, struct aptus_dt_cursor *cur,
                                 size_t len)
{
    return aptus_rc_frame_packed(rc_ep_of_rdma(ep), hdr, hdrlen, cur, len);
}

static int rcr_put(struct aptus_ep *ep, struct iovec *local, int n, uint64_t raddr, uint64_t rkey,
                   struct aptus_completion *comp)
{
    return submit(rc_ep_of_rdma(ep), 1, local, n, raddr, rkey, 0, 0, comp, 0);
}

static int rcr_put_notify(struct aptus_ep *ep, struct iovec *local, int n, uint64_t raddr, uint64_t rkey, uint64_t note,
                          struct aptus_completion *comp)
{
    return submit(rc_ep_of_rdma(ep), 1, local, n, raddr, rkey, 1, note, comp, 0);
}

static int rcr_get(struct aptus_ep *ep, struct iovec *local, int n, uint64_t raddr, uint64_t rkey,
                   struct aptus_completion *comp)
{
    return submit(rc_ep_of_rdma(ep), 0, local, n, raddr, rkey, 0, 0, comp, 0);
}

static int rcr_flush(struct aptus_ep *ep, struct aptus_completion *comp)
{
    int pending = 0;
    for (int r = 0; r < aptus_rt.nprocs; r++) {
        struct rc_ep *e = ep ? rc_ep_of_rdma(ep) : aptus_rc_up(r);
        if (e && e->fifo_head) {
            if (submit(e, 0, NULL, 0, 0, 0, 0, 0, comp, 1) != APTUS_INPROGRESS)
                return APTUS_ERR;
            pending++;
        }
        if (ep)
            break;
    }
    if (pending > 1)
        comp->count += pending - 1; /* the caller counts one */
    return pending ? APTUS_INPROGRESS : APTUS_OK;
}

/* A NOTE frame: the writes before it on this connection are in place. */
static void on_note(struct aptus_peer *from, const void *frame, size_t len)
{
    (void)from;
    uint64_t note;
    if (len < 16)
        return;
    memcpy(&note, (const char *)frame + 8, sizeof note);
    aptus_rdma_noted(note);
}

/* ---- life cycle ------------------------------------------------------------------------- */

static int rcr_setup(struct aptus_fab_rc *r, char *err, size_t errlen)
{
    const char *mode = aptus_config.rc_rdma_mode, *note = aptus_config.rc_rdma_note;
    if (!strcmp(mode, "write")) {
        rcr.write = 1;
    } else if (strcmp(mode, "read") != 0) {
        snprintf(err, errlen, "APTUS_RC_RDMA_MODE=%s: must be write or read", mode);
        return -1;
    }
    /* A provider whose remote CQ data takes a posted receive would take one the rc-sr credits do
     * not count: frames then. */
    int data_ok = r->cq_data >= 8 && (r->msg_order & FI_ORDER_WAW) && !r->rx_cq_data;
    if (!strcmp(note, "auto")) {
        rcr.note_data = data_ok;
    } else if (!strcmp(note, "data")) {
        if (!data_ok) {
            snprintf(err, errlen,
                     "APTUS_RC_RDMA_NOTE=data: provider %s carries %zu bytes of remote CQ data%s%s (8, ordered "
                     "writes and no receive taken needed); use frame or auto",
                     r->prov, r->cq_data, (r->msg_order & FI_ORDER_WAW) ? "" : ", does not keep writes in order",
                     r->rx_cq_data ? ", takes a posted receive for it" : "");
            return -1;
        }
        rcr.note_data = 1;
    } else if (strcmp(note, "frame") != 0) {
        snprintf(err, errlen, "APTUS_RC_RDMA_NOTE=%s: must be auto, data or frame", note);
        return -1;
    }
    rcr.r = r;
    rcr.max_op = r->max_msg ? r->max_msg : ((size_t)1 << 30);
    if (rcr.max_op > ((size_t)1 << 30))
        rcr.max_op = (size_t)1 << 30;
    rcr.iov_limit = r->iov_limit < 1 ? 1 : r->iov_limit > RCR_IOV_MAX ? RCR_IOV_MAX : (int)r->iov_limit;
    /* A cache that cannot hear of the program's frees would send from stale registrations
     * (under verbs: pages pinned before, no longer the buffer's): off then. */
    rcr.cache_blind = aptus_config.rcache && aptus_memhooks_bypassed();
    struct aptus_rcache_cfg cfg = { (size_t)aptus_config.rcache_max_entries, aptus_config.rcache_max_bytes, 0,
                                    !aptus_config.rcache || rcr.cache_blind };
    if (aptus_rcache_init(&rcr.cache, &rcr_cache_ops, NULL, &cfg) != 0) {
        snprintf(err, errlen, "cannot set up the registration cache");
        return -1;
    }
    rcr.cache_on = 1;
    return 0;
}

/* Providers that move RMA over sockets: the target's process serves every write and read. */
static int soft_rma(const char *prov)
{
    static const char *const soft[] = { "tcp", "sockets", "udp", "net" };
    for (size_t i = 0; i < sizeof soft / sizeof soft[0]; i++)
        if (!strncmp(prov, soft[i], strlen(soft[i])))
            return 1;
    return 0;
}

static void rcr_set_caps(const struct aptus_fab_rc *r)
{
    struct aptus_chan_caps *c = &aptus_channel_rc_rdma.caps;
    *c = *aptus_rc_frame_caps(); /* frames as rc-sr's */
    c->flags |= APTUS_CAP_PUT | APTUS_CAP_GET | APTUS_CAP_NEEDS_REG | APTUS_CAP_REMOTE_DATA;
    if (soft_rma(r->prov))
        c->flags |= APTUS_CAP_SOFT_RMA;
    if (rcr.write)
        c->flags |= APTUS_CAP_RNDV_WRITE;
    c->key_size = 8;
    c->put_max = c->get_max = SIZE_MAX; /* pieces are split to the provider's size here */
    c->iov_max = 1024;
    c->get_min = c->get_busy_min = 0; /* every rendezvous message is read (in read mode) */
    /* RECV_RNDV registers the receiver's buffer: in read mode receivers register nothing */
    c->rr_min = rcr.write ? aptus_config.rc_recv_rndv_min : 0;
    c->hybrid_max = aptus_config.rc_hybrid_max;
}

/* Sets the channel up when rc-sr runs and a send rule names it: 0 (also when not wanted), or -1
 * with the reason in err. */
static int rcr_start(char *err, size_t errlen)
{
    struct aptus_fab_rc *r = aptus_rc_fabric();
    if (rcr.active || !r ||
        (!aptus_rc_rule_names(APTUS_CH_RC_RDMA) && !aptus_rc_rule_names(APTUS_CH_RC_FP))) /* rc-fp writes through it */
        return 0;
    if (rcr_setup(r, err, errlen) != 0)
        return -1;
    rcr.active = 1;
    rcr_set_caps(r);
    aptus_memhooks_add(rcr_unmapped);
    return 0;
}

static int rcr_init(void)
{
    aptus_am_register(RC_F_NOTE, on_note);
    char err[512];
    if (rcr_start(err, sizeof err) != 0) {
        aptus_startup_error("rank %d: rc-rdma channel: %s", aptus_rt.rank, err); /* as a rule every rank's */
        return APTUS_ERR;
    }
    return APTUS_OK;
}

void aptus_rcr_dyn_start(void)
{
    char err[512];
    if (rcr_start(err, sizeof err) != 0)
        fprintf(stderr, "Aptus MPI: rank %d: rc-rdma channel for other jobs' processes: %s: not used\n", aptus_rt.rank,
                err);
}

static void rcr_finalize(void)
{
    if (!rcr.active)
        return;
    aptus_memhooks_remove(rcr_unmapped);
    rcr.active = 0;
    if (rcr.cache_on) {
        aptus_memhooks_lock();
        aptus_rcache_fini(&rcr.cache);
        aptus_memhooks_unlock();
    }
    if (aptus_rcr_waiting)
        aptus_progress_hold_awake(-1);
    aptus_rcr_waiting = 0;
    memset(&rcr, 0, sizeof rcr);
}

static size_t rcr_memory(void)
{
    if (!rcr.active)
        return 0;
    const struct aptus_rcache_stats *s = aptus_rcache_stats(&rcr.cache);
    return s->entries * (sizeof(struct aptus_rreg) + sizeof(struct rcr_mr)) +
           rcr.cache.cap * sizeof(struct aptus_rreg *);
}

static void rcr_stats_print(void)
{
    if (!rcr.active)
        return;
    const struct aptus_rcache_stats *s = aptus_rcache_stats(&rcr.cache);
    printf("[aptus stats] rank %d: rc-rdma: mode %s (notes %s); writes %" PRIu64 " (%" PRIu64 " bytes), reads %" PRIu64
           " (%" PRIu64 " bytes); notes as remote CQ data %" PRIu64 ", as frames %" PRIu64
           "; operations that waited for the provider %" PRIu64 "\n",
           aptus_rt.rank, rcr.write ? "write" : "read", rcr.note_data ? "as remote CQ data" : "as frames",
           rcr.st.writes, rcr.st.bytes_written, rcr.st.reads, rcr.st.bytes_read, rcr.st.notes_data, rcr.st.notes_frame,
           rcr.st.waited);
    printf("[aptus stats] rank %d: registration cache%s: hits %" PRIu64 ", misses %" PRIu64 ", evictions %" PRIu64
           ", invalidations %" PRIu64 ", failures %" PRIu64 "; registered now %zu (%zu bytes), in use %zu\n",
           aptus_rt.rank,
           rcr.cache_blind ? " (off: the program's free and munmap do not reach this library -- loaded with dlopen, or "
                             "another allocator preloaded -- so every message registers its own)"
           : rcr.cache.cfg.off ? " (off: APTUS_RCACHE=0)"
                               : "",
           s->hits, s->misses, s->evictions, s->invalidations, s->reg_failures, s->entries, s->bytes, s->in_use);
}

/* The statistics document (channel/stats_json.h): what rcr_stats_print prints. */
void aptus_rcr_stats_json(struct aptus_json *j)
{
    if (!rcr.active)
        return;
    const struct aptus_rcache_stats *s = aptus_rcache_stats(&rcr.cache);
    aptus_json_object(j, "rc-rdma");
    aptus_json_string(j, "mode", rcr.write ? "write" : "read");
    aptus_json_string(j, "notes", rcr.note_data ? "remote CQ data" : "frames");
    aptus_json_u64(j, "writes", rcr.st.writes);
    aptus_json_u64(j, "bytes_written", rcr.st.bytes_written);
    aptus_json_u64(j, "reads", rcr.st.reads);
    aptus_json_u64(j, "bytes_read", rcr.st.bytes_read);
    aptus_json_u64(j, "notes_as_data", rcr.st.notes_data);
    aptus_json_u64(j, "notes_as_frames", rcr.st.notes_frame);
    aptus_json_u64(j, "waited_for_provider", rcr.st.waited);
    aptus_json_object(j, "registration_cache");
    aptus_json_bool(j, "on", !rcr.cache_blind && !rcr.cache.cfg.off);
    if (rcr.cache_blind || rcr.cache.cfg.off)
        aptus_json_string(j, "off_because",
                          rcr.cache_blind ? "the program's free and munmap do not reach this library"
                                          : "APTUS_RCACHE=0");
    aptus_json_u64(j, "hits", s->hits);
    aptus_json_u64(j, "misses", s->misses);
    aptus_json_u64(j, "evictions", s->evictions);
    aptus_json_u64(j, "invalidations", s->invalidations);
    aptus_json_u64(j, "failures", s->reg_failures);
    aptus_json_u64(j, "entries", s->entries);
    aptus_json_u64(j, "bytes", s->bytes);
    aptus_json_u64(j, "in_use", s->in_use);
    aptus_json_close(j);
    aptus_json_close(j);
}

static int rcr_counter(const char *name, uint64_t *value)
{
    if (!rcr.active)
        return -1;
    const struct aptus_rcache_stats *s = aptus_rcache_stats(&rcr.cache);
    const struct aptus_counter t[] = { { "rcache.hits", s->hits },
                                       { "rcache.misses", s->misses },
                                       { "rcache.evictions", s->evictions },
                                       { "rcache.invalidations", s->invalidations },
                                       { "rcache.failures", s->reg_failures },
                                       { "rcache.entries", s->entries },
                                       { "rcache.bytes", s->bytes },
                                       { "rcache.in_use", s->in_use },
                                       { "rdma.writes", rcr.st.writes },
                                       { "rdma.reads", rcr.st.reads } };
    return aptus_counter_lookup(t, sizeof t / sizeof t[0], name, value);
}

struct aptus_channel aptus_channel_rc_rdma = {
    .name = "rc-rdma",
    .init = rcr_init,
    .finalize = rcr_finalize,
    .reaches = rcr_reaches,
    .ep_open = rcr_ep_open,
    .ep_close = rcr_ep_close,
    .send_frame = rcr_send_frame,
    .send_frame_packed = rcr_send_frame_packed,
    .put = rcr_put,
    .get = rcr_get,
    .put_notify = rcr_put_notify,
    .mem_reg = rcr_mem_reg,
    .mem_dereg = rcr_mem_dereg,
    .flush = rcr_flush,
    .settling = aptus_rc_closing,
    .memory_in_use = rcr_memory,
    .stats_print = rcr_stats_print,
    .counter = rcr_counter,
};

#else
typedef int aptus_rc_rdma_unused;
#endif
