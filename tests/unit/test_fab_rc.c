/* The fabric layer's connected endpoints (src/fabric/fabric.c, aptus_fab_rc_*) against a real
 * provider: one process, listening on the loopback interface and connecting to itself, so
 * that both ends of every connection are here. Checks what the RC channels build on, and the
 * provider behaviour their design depends on:
 *   - connection request / accept with parameters both ways, reject, shutdown;
 *   - send/receive through the shared receive context (receives shared by all connections);
 *   - RMA write with remote CQ data, RMA read, a write with FI_DELIVERY_COMPLETE;
 *   - a message longer than the receive it lands in is never delivered as if whole.
 * usage: test_fab_rc [PROVIDER [IFACE]]  (default tcp on lo); exit 77 when the provider or the
 * interface is not there. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fabric/fabric.h"

#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

static int failures;

#define CHECK(cond, ...)                                                                                               \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            fprintf(stderr, "test_fab_rc:%d: ", __LINE__);                                                             \
            fprintf(stderr, __VA_ARGS__);                                                                              \
            fputc('\n', stderr);                                                                                       \
            failures++;                                                                                                \
        }                                                                                                              \
    } while (0)

#define REQUIRE(cond, ...)                                                                                             \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            fprintf(stderr, "test_fab_rc:%d: ", __LINE__);                                                             \
            fprintf(stderr, __VA_ARGS__);                                                                              \
            fputc('\n', stderr);                                                                                       \
            exit(1);                                                                                                   \
        }                                                                                                              \
    } while (0)

static struct aptus_fab_rc R;

/* What progress has produced: completions and connection events, kept until looked at. */
#define NCOMP 64
static struct fi_cq_data_entry comp[NCOMP];
static int ncomp;
static struct fi_cq_err_entry cerr[8];
static int ncerr;
static struct aptus_fab_cm_event evs[16];
static int nev;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void pump(void)
{
    if (ncomp < NCOMP) {
        ssize_t n = fi_cq_read(R.cq, &comp[ncomp], (size_t)(NCOMP - ncomp));
        if (n > 0)
            ncomp += (int)n;
        else if (n == -FI_EAVAIL && ncerr < 8) {
            memset(&cerr[ncerr], 0, sizeof cerr[ncerr]);
            if (fi_cq_readerr(R.cq, &cerr[ncerr], 0) == 1)
                ncerr++;
        }
    }
    if (nev < 16 && aptus_fab_rc_event(&R, &evs[nev]) == 1)
        nev++;
}

/* Progress until a completion with this context (and these flags) is there; takes it out. */
static int wait_comp(void *ctx, uint64_t flags, struct fi_cq_data_entry *out)
{
    double end = now_s() + 5;
    while (now_s() < end) {
        for (int i = 0; i < ncomp; i++)
            if (comp[i].op_context == ctx && (comp[i].flags & flags) == flags) {
                if (out)
                    *out = comp[i];
                comp[i] = comp[--ncomp];
                return 1;
            }
        pump();
    }
    return 0;
}

/* Progress until an event of this kind (and context, unless NULL) is there; takes it out. */
static int wait_event(int kind, void *ctx, struct aptus_fab_cm_event *out)
{
    double end = now_s() + 5;
    while (now_s() < end) {
        for (int i = 0; i < nev; i++)
            if (evs[i].kind == kind && (!ctx || evs[i].ctx == ctx)) {
                if (out)
                    *out = evs[i];
                evs[i] = evs[--nev];
                return 1;
            }
        pump();
    }
    return 0;
}

static int ctx_a, ctx_b, ctx_c, ctx_d, ctx_send, ctx_write, ctx_read, ctx_dc;
static int ctx_rx[8];
static char rxbuf[8][64];

static int post_rx(int i)
{
    struct fid_ep *on = R.srx;
    return (int)fi_recv(on, rxbuf[i], sizeof rxbuf[i], NULL, FI_ADDR_UNSPEC, &ctx_rx[i]);
}

/* Connects to ourselves: the active endpoint's context is ca, the accepted one's cb. */
static void connect_pair(void *ca, void *cb, struct fid_ep **a, struct fid_ep **b)
{
    struct aptus_fab_cm_event ev;
    int rc = aptus_fab_rc_connect(&R, R.addr, R.addrlen, "from-a", 7, ca, a);
    REQUIRE(rc == 0, "aptus_fab_rc_connect: %s", aptus_fab_strerror(rc));
    REQUIRE(wait_event(APTUS_FAB_CM_CONNREQ, NULL, &ev), "no connection request arrived");
    CHECK(ev.plen >= 7 && !memcmp(ev.param, "from-a", 7), "the request's param is wrong (%zu bytes)", ev.plen);
    rc = aptus_fab_rc_accept(&R, ev.req, "from-b", 7, cb, b);
    REQUIRE(rc == 0, "aptus_fab_rc_accept: %s", aptus_fab_strerror(rc));
    REQUIRE(wait_event(APTUS_FAB_CM_CONNECTED, cb, &ev), "the accepting side never connected");
    REQUIRE(wait_event(APTUS_FAB_CM_CONNECTED, ca, &ev), "the connecting side never connected");
    CHECK(ev.plen >= 7 && !memcmp(ev.param, "from-b", 7), "the accept's param did not reach the connecting side");
}

int main(int argc, char **argv)
{
    const char *prov = argc > 1 ? argv[1] : "tcp", *iface = argc > 2 ? argv[2] : "lo";
    char err[512];
    if (aptus_fab_rc_open(&R, prov, iface, 1, 1, err, sizeof err) != 0) {
        printf("test_fab_rc: skipped: %s\n", err);
        return 77;
    }
    printf("provider %s, interface %s: shared receive context %s, remote CQ data %zu bytes, mr_mode 0x%llx, "
           "inject %zu\n",
           R.prov, R.iface, R.srx ? "yes" : "no", R.cq_data, (unsigned long long)R.mr_mode, R.inject_max);
    REQUIRE(R.srx, "the provider offers no shared receive context (this test needs one)");
    CHECK(R.addrlen > 0, "no listening address");
    CHECK(R.cq_fd >= 0 && R.eq_fd >= 0, "asked for descriptors to wait on, the queues have none");

    struct fid_ep *a, *b;
    connect_pair(&ctx_a, &ctx_b, &a, &b);

    /* Send/receive: both directions consume the shared receives, in posting order. */
    for (int i = 0; i < 4; i++)
        REQUIRE(post_rx(i) == 0, "fi_recv on the shared receive context failed");
    REQUIRE(fi_send(a, "ping", 5, NULL, 0, &ctx_send) == 0, "fi_send a->b failed");
    struct fi_cq_data_entry c;
    CHECK(wait_comp(&ctx_send, FI_SEND, NULL), "no send completion");
    CHECK(wait_comp(&ctx_rx[0], FI_RECV, &c) && c.len == 5 && !strcmp(rxbuf[0], "ping"),
          "ping did not land in the first shared receive");
    REQUIRE(fi_send(b, "pong", 5, NULL, 0, &ctx_send) == 0, "fi_send b->a failed");
    CHECK(wait_comp(&ctx_send, FI_SEND, NULL), "no send completion");
    CHECK(wait_comp(&ctx_rx[1], FI_RECV, &c) && c.len == 5 && !strcmp(rxbuf[1], "pong"),
          "pong (the other connection) did not land in the next shared receive");

    /* RMA into a region of the accepting side. */
    static char target[4096], src[1000], back[1000];
    for (int i = 0; i < 1000; i++)
        src[i] = (char)(i * 7 + 3);
    struct fid_mr *tmr, *smr, *bmr;
    void *tdesc, *sdesc, *bdesc;
    uint64_t tkey, taddr, k2, a2;
    int rc =
        aptus_fab_rc_mr_reg(&R, target, sizeof target, FI_REMOTE_WRITE | FI_REMOTE_READ, &tmr, &tdesc, &tkey, &taddr);
    REQUIRE(rc == 0, "registering the target: %s", aptus_fab_strerror(rc));
    REQUIRE(aptus_fab_rc_mr_reg(&R, src, sizeof src, FI_WRITE | FI_SEND, &smr, &sdesc, &k2, &a2) == 0 &&
                aptus_fab_rc_mr_reg(&R, back, sizeof back, FI_READ | FI_RECV, &bmr, &bdesc, &k2, &a2) == 0,
            "registering local buffers failed");
    if (R.cq_data >= 4) {
        rc = (int)fi_writedata(a, src, sizeof src, sdesc, 0xabcd, 0, taddr + 100, tkey, &ctx_write);
        REQUIRE(rc == 0, "fi_writedata: %s", aptus_fab_strerror(rc));
        CHECK(wait_comp(&ctx_write, FI_WRITE, NULL), "no completion of the write");
        /* The target's notice: remote CQ data, in a shared receive's entry or one of its own. */
        double end = now_s() + 5;
        int got = 0;
        while (!got && now_s() < end) {
            for (int i = 0; i < ncomp && !got; i++)
                if (comp[i].flags & FI_REMOTE_CQ_DATA) {
                    CHECK(comp[i].data == 0xabcd, "remote CQ data 0x%llx, want 0xabcd",
                          (unsigned long long)comp[i].data);
                    printf("remote CQ data arrives %s a posted receive\n",
                           comp[i].op_context == &ctx_rx[2] ? "consuming" : "without consuming");
                    comp[i] = comp[--ncomp];
                    got = 1;
                }
            pump();
        }
        CHECK(got, "the target got no completion with the write's remote CQ data");
        CHECK(!memcmp(target + 100, src, sizeof src), "the written bytes are not in the target region");
    } else {
        printf("no remote CQ data: fi_writedata not tested\n");
    }
    memset(target + 2000, 0x5c, 1000);
    rc = (int)fi_read(a, back, sizeof back, bdesc, 0, taddr + 2000, tkey, &ctx_read);
    REQUIRE(rc == 0, "fi_read: %s", aptus_fab_strerror(rc));
    CHECK(wait_comp(&ctx_read, FI_READ, NULL), "no completion of the read");
    int same = 1;
    for (int i = 0; i < 1000; i++)
        same &= back[i] == 0x5c;
    CHECK(same, "the read did not bring the target's bytes");
    /* FI_DELIVERY_COMPLETE: completes once the data is at the target. */
    struct iovec iov = { src, 512 };
    struct fi_rma_iov riov = { taddr + 3000, 512, tkey };
    struct fi_msg_rma m = {
        .msg_iov = &iov, .desc = &sdesc, .iov_count = 1, .rma_iov = &riov, .rma_iov_count = 1, .context = &ctx_dc
    };
    rc = (int)fi_writemsg(a, &m, FI_DELIVERY_COMPLETE | FI_COMPLETION);
    if (rc == 0) {
        CHECK(wait_comp(&ctx_dc, FI_WRITE, NULL), "no completion of the FI_DELIVERY_COMPLETE write");
        CHECK(!memcmp(target + 3000, src, 512), "FI_DELIVERY_COMPLETE completed before the data was there");
    } else {
        printf("fi_writemsg with FI_DELIVERY_COMPLETE: %s\n", aptus_fab_strerror(rc));
    }

    /* A rejected request: the connecting side hears of it. */
    struct fid_ep *d;
    struct aptus_fab_cm_event ev;
    rc = aptus_fab_rc_connect(&R, R.addr, R.addrlen, "no", 3, &ctx_d, &d);
    REQUIRE(rc == 0, "aptus_fab_rc_connect: %s", aptus_fab_strerror(rc));
    REQUIRE(wait_event(APTUS_FAB_CM_CONNREQ, NULL, &ev), "no connection request arrived");
    aptus_fab_rc_reject(&R, ev.req);
    CHECK(wait_event(APTUS_FAB_CM_ERROR, &ctx_d, &ev) || wait_event(APTUS_FAB_CM_SHUTDOWN, &ctx_d, &ev),
          "the connecting side never heard of the rejection");
    fi_close(&d->fid);

    /* Too long for the receive it lands in: an error or the connection's end, never a
     * receive that looks whole. */
    struct fid_ep *c1, *c2;
    connect_pair(&ctx_c, &ctx_d, &c1, &c2);
    static char big[200];
    memset(big, 0x77, sizeof big);
    REQUIRE(fi_send(c1, big, sizeof big, NULL, 0, &ctx_send) == 0, "fi_send of 200 bytes failed");
    double end = now_s() + 3;
    int ended = 0, whole = 0;
    while (!ended && now_s() < end) {
        pump();
        for (int i = 0; i < ncomp; i++)
            if (comp[i].op_context == &ctx_rx[2] && comp[i].len >= sizeof big)
                whole = 1;
        ended =
            ncerr > 0 || wait_event(APTUS_FAB_CM_SHUTDOWN, NULL, NULL) || wait_event(APTUS_FAB_CM_ERROR, NULL, NULL);
    }
    CHECK(!whole, "a 200-byte message was reported whole in a 64-byte receive");
    CHECK(ended, "a truncated receive gave neither an error completion nor the connection's end");
    printf("a truncated receive: %d error completion(s)%s\n", ncerr,
           ncerr && cerr[0].err == FI_ETRUNC ? " (FI_ETRUNC)" : "");
    fi_close(&c1->fid);
    fi_close(&c2->fid);

    /* Shutdown: the other side hears of it. */
    fi_shutdown(a, 0);
    CHECK(wait_event(APTUS_FAB_CM_SHUTDOWN, &ctx_b, NULL), "closing one end was not seen at the other");
    fi_close(&a->fid);
    fi_close(&b->fid);
    fi_close(&tmr->fid);
    fi_close(&smr->fid);
    fi_close(&bmr->fid);
    aptus_fab_rc_close(&R);
    if (failures) {
        fprintf(stderr, "test_fab_rc: %d check(s) failed\n", failures);
        return 1;
    }
    printf("test_fab_rc: ok\n");
    return 0;
}
