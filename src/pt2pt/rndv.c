/* Rendezvous: the sender offers the message with an RTS carrying its buffer's address, the
 * channel it chose and the key a one-sided read needs; when the RTS matches, the receiver
 * reads the data one-sidedly (rndv_read.c, answered by FIN), asks the sender to write it
 * (CTS with its buffer's address and key; the write's note completes the receive) or asks for
 * a streamed copy (rndv_copy.c, CTS then DATA frames). */
#include <stdlib.h>

#include "pt2pt/mlayer.h"
#include "runtime/config.h"
#include "runtime/lock.h"
#include "runtime/progress.h"

/* A contiguous buffer registered for a one-sided read by the peer (channels that need it):
 * its address and key for the RTS, the registration held by r until FIN. 0, or -1 when it
 * cannot be registered (the message is then streamed). */
static int offer_read(struct aptus_request *r, int chan, struct aptus_f_rts *h)
{
    const struct aptus_channel *ch = aptus_channels[chan];
    if (!(ch->caps.flags & APTUS_CAP_NEEDS_REG) || !r->bytes)
        return 0;
    uint64_t raddr, rkey;
    if (ch->mem_reg(r->buf, r->bytes, &r->memh, &raddr, &rkey) != APTUS_OK) {
        r->memh = NULL;
        return -1;
    }
    r->memch = (uint8_t)chan;
    h->addr = raddr;
    h->key = rkey;
    return 0;
}

int aptus_rndv_send(struct aptus_request *r, struct aptus_peer *p, int chan, int proto)
{
    /* A non-contiguous sender offers no address: the receiver then asks for a streamed copy,
     * which packs straight into the frames. */
    struct aptus_f_rts h = { .m = { APTUS_F_RTS, 0, r->ctx, r->comm->rank, r->tag, p->send_seq, r->bytes },
                             .sreq = (uint64_t)(uintptr_t)r,
                             .addr = r->nc ? 0 : (uint64_t)(uintptr_t)r->buf,
                             .key = 0,
                             .chan = (uint8_t)chan,
                             .proto = (uint8_t)proto,
                             .readable = !r->nc };
    if (h.readable && (proto == APTUS_PROTO_RNDV_READ || proto == APTUS_PROTO_RNDV_READ_BUSY) &&
        offer_read(r, chan, &h) != 0)
        h.readable = 0;
    r->rndv_out = 1;
    aptus_ml.rndv_out++;
    int rc = aptus_frame_out(p, chan, &h, sizeof h, NULL, NULL, 0, NULL);
    if (rc == APTUS_ERR) {
        aptus_rndv_release(r);
        r->rndv_out = 0;
        aptus_ml.rndv_out--;
        return p->failed ? MPI_ERR_PROC_ABORTED : MPI_ERR_NO_MEM;
    }
    p->send_seq++;
    aptus_req_wait_remote(r, p->world_rank);
    return 0;
}

_Thread_local int aptus_rndv_defer __attribute__((tls_model("initial-exec")));

/* Reads put off by a nonblocking start (aptus_rndv_defer), done by the next progress pass that
 * is not one (the progress thread's while the application computes, or a wait's). */
static struct deferred {
    struct aptus_request *r;
    struct aptus_peer *from;
    uint64_t sreq, addr, key;
    uint8_t chan, proto, wakes;
} * dq;
static int ndq, capdq, dq_poller = -1;

static void read_or_copy(struct aptus_request *r, struct aptus_peer *from, const struct aptus_unexp *rts, size_t n)
{
    if (aptus_rndv_read(r, from, rts, n) != 0)
        aptus_rndv_copy_request(r, from, rts, n);
}

static int defer_read(struct aptus_request *r, struct aptus_peer *from, const struct aptus_unexp *rts)
{
    if (ndq == capdq) {
        int cap = capdq ? 2 * capdq : 8;
        struct deferred *q = realloc(dq, sizeof *q * (size_t)cap);
        if (!q)
            return -1;
        dq = q;
        capdq = cap;
    }
    aptus_ml.rndv_deferred++;
    int wakes = r->st_bytes >= aptus_config.async_progress_wake_min;
    dq[ndq++] = (struct deferred){ r, from, rts->sreq, rts->addr, rts->key, rts->chan, rts->proto, (uint8_t)wakes };
    aptus_lock_work += wakes; /* the progress thread goes on as soon as the application leaves MPI */
    aptus_poller_enable(dq_poller, 1);
    return 0;
}

static int deferred_poll(void)
{
    if (aptus_rndv_defer || !ndq)
        return 0;
    int n = ndq;
    for (int i = 0; i < n; i++) {
        struct aptus_unexp u = { 0 };
        u.sreq = dq[i].sreq;
        u.addr = dq[i].addr;
        u.key = dq[i].key;
        u.chan = dq[i].chan;
        u.proto = dq[i].proto;
        u.readable = 1;
        aptus_lock_work -= dq[i].wakes;
        read_or_copy(dq[i].r, dq[i].from, &u, dq[i].r->st_bytes);
    }
    /* (a read cannot defer again: only starts defer, and this is not one) */
    ndq = 0;
    aptus_poller_enable(dq_poller, 0);
    return n;
}

/* The one-sided read costs this core one copy and the sender none; the streamed copy costs
 * each side one. So the read is taken where the sender's route says so (very large messages),
 * and where it says "when busy" while this rank is itself sending a rendezvous message (both
 * directions at once: half the copies per core) -- and always with a progress thread: the
 * streamed copy moves only while both sides progress (each chunk waits for the other), where
 * the read needs this side alone, so that one rank's thread moves the message while the other
 * rank computes. */
void aptus_rndv_matched(struct aptus_request *r, struct aptus_peer *from, const struct aptus_unexp *rts)
{
    size_t n = r->st_bytes;
    if (rts->proto == APTUS_PROTO_RNDV_WRITE && aptus_rndv_write_request(r, from, rts, n) == 0)
        return;
    int read = rts->readable &&
               (rts->proto == APTUS_PROTO_RNDV_READ ||
                (rts->proto == APTUS_PROTO_RNDV_READ_BUSY && (aptus_ml.rndv_out > 0 || aptus_config.async_progress)));
    if (!read) {
        aptus_rndv_copy_request(r, from, rts, n);
        return;
    }
    /* A nonblocking start with the progress thread on leaves the copy to the thread: the call
     * returns at once and the data moves while the application computes. */
    if (aptus_rndv_defer && defer_read(r, from, rts) == 0)
        return;
    read_or_copy(r, from, rts, n);
}

static void on_fin(struct aptus_peer *from, const void *frame, size_t len)
{
    struct aptus_request *s = (struct aptus_request *)(uintptr_t)((const struct aptus_f_ctrl *)frame)->sreq;
    aptus_rndv_release(s);
    aptus_req_done(s);
}

void aptus_rndv_init(void)
{
    aptus_am_register(APTUS_F_FIN, on_fin);
    dq_poller = aptus_poller_add("rndv-deferred", deferred_poll, 0);
}
