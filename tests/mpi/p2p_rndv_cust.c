/* Customized rendezvous (pt2pt/rndv_cust.c): every arrival order, the paper's R1/R2 example,
 * many receives outstanding on one tag, mixed tags and sizes, wildcard receives, probes, cancel,
 * truncation, synchronous sends, non-contiguous buffers on either side -- every byte checked,
 * every message where MPI's order puts it.
 *
 * Usage: p2p_rndv_cust [expect] [rounds] [threads N]
 *   expect  what the counters (MPIX_Aptus_counter "pt2pt.*") must show on every rank:
 *           customized  RECV_RNDV when the receiver is first, HYBRID / SEND_RNDV when the sender
 *                       is (by size), writes without FIN for messages that fill their buffer
 *           nofin       the same, never without FIN (APTUS_RNDV_FIN_ELIM=0)
 *           traditional no RECEIVER_READY, no HYBRID (APTUS_RNDV_MODE=traditional, or no
 *                       one-sided copy: APTUS_SMP_CMA=0)
 *           any         data only (frames delayed and reordered: an RECEIVER_READY may come
 *                       too late to be taken)
 *   rounds  of the randomised exchange (default 200)
 *   threads N: then N threads per rank at once (MPI_THREAD_MULTIPLE) exchange with the peer rank
 *           on a tag each, every size, cancelling a receive now and then (ranks 0 and 1)
 * The sizes assume the defaults of a node: eager up to 16 KiB, RECEIVER_READY above it, HYBRID
 * up to 256 KiB. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpix_aptus.h"
#include "mtest.h"

enum { CUSTOMIZED, NOFIN, TRADITIONAL, ANY };
static int expect = CUSTOMIZED, rank, size;

#define MID   (64 * 1024)   /* RECV_RNDV when the receiver is first, else HYBRID */
#define BIG   (1024 * 1024) /* RECV_RNDV when the receiver is first, else SEND_RNDV */
#define SMALL 1000          /* eager */

static unsigned long long counter(const char *name)
{
    unsigned long long v = 0;
    MPI_CHECK(MPIX_Aptus_counter(name, &v));
    return v;
}

struct snap {
    unsigned long long hybrid, send, recv, finless, rr_sent, stale, unused;
};

static struct snap snap(void)
{
    struct snap s = { counter("pt2pt.hybrid"),         counter("pt2pt.send_rndv"), counter("pt2pt.recv_rndv"),
                      counter("pt2pt.fin_eliminated"), counter("pt2pt.rr_sent"),   counter("pt2pt.rr_stale"),
                      counter("pt2pt.rr_unused") };
    return s;
}

/* Deterministic content of message `id` of n bytes; its last byte is never 0 (a receive buffer
 * cleared to 0 sees it change). */
static void fill(unsigned char *b, size_t n, unsigned id)
{
    for (size_t i = 0; i < n; i++)
        b[i] = (unsigned char)(id * 131u + i * 7u + (i >> 8));
    if (n)
        b[n - 1] = (unsigned char)(1 + id % 250);
}

static void check(const unsigned char *b, size_t n, unsigned id, const char *what)
{
    for (size_t i = 0; i + 1 < n; i++)
        if (b[i] != (unsigned char)(id * 131u + i * 7u + (i >> 8)))
            CHECK(0, "%s: message %u, byte %zu of %zu is %u, expected %u", what, id, i, n, b[i],
                  (unsigned char)(id * 131u + i * 7u + (i >> 8)));
    if (n)
        CHECK(b[n - 1] == (unsigned char)(1 + id % 250), "%s: message %u, last byte of %zu wrong", what, id, n);
}

static unsigned char *xmalloc(size_t n)
{
    unsigned char *p = malloc(n);
    CHECK(p != NULL, "out of memory");
    return p;
}

/* Counter change on this rank, checked against the expectation. */
#define EXPECT_DELTA(field, want_custom, want_trad, what)                                                              \
    do {                                                                                                               \
        struct snap s1_ = snap();                                                                                      \
        unsigned long long d_ = s1_.field - s0.field, w_ = expect == TRADITIONAL ? (want_trad) : (want_custom);        \
        if (expect != ANY)                                                                                             \
            CHECK(d_ == w_, "%s: counter %s moved by %llu, expected %llu", what, #field, d_, w_);                      \
    } while (0)

/* Over RC channels opened on demand: exchange until every rank has its connections to the
 * ranks of other nodes up, so that the messages below take the channel the counters speak of
 * (on one node with the RC chain every pair connects: see tests/mpi/rc.cmake). */
static void warmup(void)
{
    unsigned long long v = 0;
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int has = MPIX_Aptus_counter("rc.connections", &v) == MPI_SUCCESS, all = 0;
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    MPI_CHECK(MPI_Allreduce(&has, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
    MPI_Comm node;
    int local;
    MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    MPI_CHECK(MPI_Comm_size(node, &local));
    MPI_CHECK(MPI_Comm_free(&node));
    unsigned long long smp = 0;
    MPI_CHECK(MPIX_Aptus_counter("memory.smp", &smp));
    unsigned long long want = (unsigned long long)(smp ? size - local : size - 1); /* (smp: on the node) */
    double t0 = MPI_Wtime();
    /* above 8 KiB: the messages that ask for a connection under every chain (the sockets
     * fabric's built-in allocation rules count only those) */
    enum { WARM = 16 * 1024 };
    static char s[WARM], r[WARM];
    while (all) {
        for (int d = 1; d < size; d++)
            MPI_CHECK(MPI_Sendrecv(s, WARM, MPI_CHAR, (rank + d) % size, 99, r, WARM, MPI_CHAR,
                                   (rank - d + size) % size, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MPI_CHECK(MPIX_Aptus_counter("rc.connections", &v));
        int up = v >= want;
        MPI_CHECK(MPI_Allreduce(&up, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
        all = !all;
        CHECK(MPI_Wtime() - t0 < 60, "the RC connections did not come up in 60 s");
    }
}

/* The receiver has posted: it tells the sender by a message of its own, which follows its
 * RECEIVER_READY (frames to one peer stay in order) -- and the sender has sent the receiver
 * nothing since (a barrier would: a RECEIVER_READY that the sender's later frames overtook in
 * the receiver's view is dropped, safely). */
static void posted_go(int from, int to)
{
    char z = 0;
    if (rank == from)
        MPI_CHECK(MPI_Send(&z, 1, MPI_CHAR, to, 77, MPI_COMM_WORLD));
    else if (rank == to)
        MPI_CHECK(MPI_Recv(&z, 1, MPI_CHAR, from, 77, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
}

/* 1. Receiver first: rank 1 posts, says so (its RECEIVER_READY reaches rank 0 first), rank 0
 *    sends into the buffer. Twice: the message's last byte
 *    differs from the buffer's (no FIN) and equals it (WRITTEN). */
static void receiver_first(void)
{
    unsigned char *b = xmalloc(BIG);
    for (int same = 0; same < 2; same++)
        for (int big = 0; big < 2; big++) {
            size_t n = big ? BIG : MID;
            unsigned id = 10 + (unsigned)(2 * same + big);
            struct snap s0 = snap();
            if (rank == 1) {
                MPI_Request r;
                memset(b, 0, n);
                if (same)
                    b[n - 1] = (unsigned char)(1 + id % 250);
                MPI_CHECK(MPI_Irecv(b, (int)n, MPI_BYTE, 0, 1, MPI_COMM_WORLD, &r));
                posted_go(1, 0);
                MPI_Status st;
                MPI_CHECK(MPI_Wait(&r, &st));
                int cnt;
                MPI_Get_count(&st, MPI_BYTE, &cnt);
                CHECK(cnt == (int)n && st.MPI_SOURCE == 0 && st.MPI_TAG == 1, "receiver first: status %d %d %d", cnt,
                      st.MPI_SOURCE, st.MPI_TAG);
                check(b, n, id, "receiver first");
                EXPECT_DELTA(rr_sent, 1, 0, "receiver first (receiver)");
            } else if (rank == 0) {
                fill(b, n, id);
                posted_go(1, 0);
                MPI_CHECK(MPI_Send(b, (int)n, MPI_BYTE, 1, 1, MPI_COMM_WORLD));
                EXPECT_DELTA(recv, 1, 0, "receiver first (sender)");
                EXPECT_DELTA(finless, expect == CUSTOMIZED && !same, 0, "receiver first, FIN (sender)");
                EXPECT_DELTA(send, 0, 1, "receiver first (sender)");
            }
            MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
        }
    free(b);
}

/* 2. Sender first: a medium message completes at once (HYBRID) before its receive is posted; a
 *    large one waits for it (SEND_RNDV). */
static void sender_first(void)
{
    unsigned char *b = xmalloc(BIG);
    for (int big = 0; big < 2; big++) {
        size_t n = big ? BIG : MID;
        unsigned id = 20 + (unsigned)big;
        struct snap s0 = snap();
        if (rank == 0) {
            MPI_Request r;
            fill(b, n, id);
            MPI_CHECK(MPI_Isend(b, (int)n, MPI_BYTE, 1, 2, MPI_COMM_WORLD, &r));
            int flag = 0;
            MPI_CHECK(MPI_Test(&r, &flag, MPI_STATUS_IGNORE));
            if (expect != ANY)
                CHECK(flag == (expect != TRADITIONAL && !big),
                      "sender first, %zu bytes: MPI_Test says %d before the "
                      "receive is posted",
                      n, flag);
            if (flag)
                memset(b, 0x5a, n); /* the buffer is the application's again: the message must not change */
            MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
            MPI_CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE));
            EXPECT_DELTA(hybrid, !big, 0, "sender first (sender)");
            EXPECT_DELTA(send, big, 1, "sender first (sender)");
        } else if (rank == 1) {
            MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
            MPI_CHECK(MPI_Recv(b, (int)n, MPI_BYTE, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            check(b, n, id, "sender first");
        } else {
            MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
        }
        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    }
    free(b);
}

/* 3. The paper's R1/R2: two receives on one tag, R1 for a small message, R2 for a large one; a
 *    RECEIVER_READY of R2 must not be taken by the first send. And the same with R1 large enough
 *    to send its own (the small first message drops it). */
static void r1_r2(void)
{
    unsigned char *b1 = xmalloc(MID), *b2 = xmalloc(MID);
    for (int r1big = 0; r1big < 2; r1big++) {
        size_t n1 = r1big ? MID : SMALL;
        struct snap s0 = snap();
        if (rank == 1) {
            MPI_Request r[2];
            memset(b1, 0, MID);
            memset(b2, 0, MID);
            MPI_CHECK(MPI_Irecv(b1, (int)n1, MPI_BYTE, 0, 3, MPI_COMM_WORLD, &r[0]));
            MPI_CHECK(MPI_Irecv(b2, MID, MPI_BYTE, 0, 3, MPI_COMM_WORLD, &r[1]));
            posted_go(1, 0);
            MPI_Status st[2];
            MPI_CHECK(MPI_Waitall(2, r, st));
            int c1, c2;
            MPI_Get_count(&st[0], MPI_BYTE, &c1);
            MPI_Get_count(&st[1], MPI_BYTE, &c2);
            CHECK(c1 == SMALL && c2 == MID, "R1/R2: counts %d %d", c1, c2);
            check(b1, SMALL, 30, "R1");
            check(b2, MID, 31, "R2");
            EXPECT_DELTA(rr_sent, 1 + r1big, 0, "R1/R2 (receiver)");
        } else if (rank == 0) {
            posted_go(1, 0);
            fill(b1, SMALL, 30);
            fill(b2, MID, 31);
            MPI_CHECK(MPI_Send(b1, SMALL, MPI_BYTE, 1, 3, MPI_COMM_WORLD));
            MPI_CHECK(MPI_Send(b2, MID, MPI_BYTE, 1, 3, MPI_COMM_WORLD));
            EXPECT_DELTA(recv, 1, 0, "R1/R2 (sender)");
            EXPECT_DELTA(unused, r1big, 0, "R1/R2 (sender)");
        }
        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    }
    free(b1);
    free(b2);
}

/* 3b. A matched probe after a receive with a RECEIVER_READY out: the message written into that
 *     receive is never the one probed; the next one on the envelope is. */
static void probe_after_rr(void)
{
    unsigned char *b1 = xmalloc(MID), *b2 = xmalloc(MID);
    if (rank == 1) {
        MPI_Request r;
        MPI_Message msg;
        MPI_Status st;
        memset(b1, 0, MID);
        MPI_CHECK(MPI_Irecv(b1, MID, MPI_BYTE, 0, 11, MPI_COMM_WORLD, &r));
        posted_go(1, 0);
        MPI_CHECK(MPI_Mprobe(0, 11, MPI_COMM_WORLD, &msg, &st));
        int c;
        MPI_Get_count(&st, MPI_BYTE, &c);
        CHECK(c == SMALL, "matched probe after a receive with a RECEIVER_READY: %d bytes, expected %d", c, SMALL);
        MPI_CHECK(MPI_Mrecv(b2, SMALL, MPI_BYTE, &msg, MPI_STATUS_IGNORE));
        check(b2, SMALL, 41, "the probed message");
        MPI_CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        check(b1, MID, 40, "the message before the probed one");
    } else if (rank == 0) {
        posted_go(1, 0);
        fill(b1, MID, 40);
        fill(b2, SMALL, 41);
        MPI_CHECK(MPI_Send(b1, MID, MPI_BYTE, 1, 11, MPI_COMM_WORLD));
        MPI_CHECK(MPI_Send(b2, SMALL, MPI_BYTE, 1, 11, MPI_COMM_WORLD));
    }
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    free(b1);
    free(b2);
}

/* 4. Many receives outstanding on one tag and on mixed tags, messages of every kind of size
 *    (eager, medium, large, shorter than the buffer), sent in an order of their own: each
 *    receive gets exactly the message MPI's order gives it. Receives are posted first (many
 *    RECEIVER_READYs out) or after the sends (none). */
#define MANY 12
static void many(int rounds)
{
    static const size_t sizes[] = { SMALL, MID, BIG / 4, 40000, MID - 100, 8, BIG / 2, 33000 };
    unsigned char *b[MANY];
    for (int i = 0; i < MANY; i++)
        b[i] = xmalloc(BIG / 2);
    unsigned seed = 12345;
    for (int round = 0; round < rounds; round++) {
        int tags[MANY];
        size_t len[MANY];
        for (int i = 0; i < MANY; i++) {
            seed = seed * 1103515245u + 12345u;
            tags[i] = (int)((seed >> 16) % 3);
            len[i] = sizes[(seed >> 8) % (sizeof sizes / sizeof sizes[0])];
        }
        int recv_first = round % 3 != 2;
        if (rank == 1) {
            MPI_Request r[MANY];
            if (!recv_first)
                MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
            for (int i = 0; i < MANY; i++) {
                memset(b[i], 0, BIG / 2);
                /* the buffer of a message that comes shorter is larger than it */
                size_t cap = len[i] == 40000 ? 50000 : len[i];
                MPI_CHECK(MPI_Irecv(b[i], (int)cap, MPI_BYTE, 0, tags[i], MPI_COMM_WORLD, &r[i]));
            }
            if (recv_first)
                posted_go(1, 0);
            MPI_Status st[MANY];
            MPI_CHECK(MPI_Waitall(MANY, r, st));
            for (int i = 0; i < MANY; i++) {
                int c;
                MPI_Get_count(&st[i], MPI_BYTE, &c);
                CHECK(c == (int)len[i] && st[i].MPI_TAG == tags[i],
                      "round %d receive %d: %d bytes tag %d, expected %zu tag %d", round, i, c, st[i].MPI_TAG, len[i],
                      tags[i]);
                check(b[i], len[i], (unsigned)(100 + round * MANY + i), "many");
                if (len[i] == 40000)
                    for (size_t k = 40000; k < 50000; k++)
                        CHECK(b[i][k] == 0, "round %d receive %d: byte %zu past the message written", round, i, k);
            }
        } else if (rank == 0) {
            if (recv_first)
                posted_go(1, 0);
            /* send tag by tag in a rotating order: the order on each tag is kept */
            MPI_Request r[MANY];
            int k = 0;
            for (int t0 = 0; t0 < 3; t0++) {
                int t = (t0 + round) % 3;
                for (int i = 0; i < MANY; i++)
                    if (tags[i] == t) {
                        fill(b[i], len[i], (unsigned)(100 + round * MANY + i));
                        MPI_CHECK(MPI_Isend(b[i], (int)len[i], MPI_BYTE, 1, t, MPI_COMM_WORLD, &r[k++]));
                    }
            }
            if (!recv_first)
                MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
            MPI_CHECK(MPI_Waitall(k, r, MPI_STATUSES_IGNORE));
        } else if (!recv_first) {
            MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
        }
    }
    for (int i = 0; i < MANY; i++)
        free(b[i]);
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
}

/* 5. Both at once, both directions, random sizes, with MPI_Ssend and non-contiguous types. */
static void both(int rounds)
{
    if (rank > 1) {
        for (int i = 0; i < rounds; i++)
            MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
        return;
    }
    int peer = 1 - rank;
    MPI_Datatype vec; /* every other 8-byte block */
    MPI_CHECK(MPI_Type_vector(MID / 8, 8, 16, MPI_BYTE, &vec));
    MPI_CHECK(MPI_Type_commit(&vec));
    unsigned char *sb = xmalloc(2 * MID), *rb = xmalloc(2 * MID), *tmp = xmalloc(MID);
    unsigned seed = 777;
    for (int i = 0; i < rounds; i++) {
        seed = seed * 1103515245u + 12345u;
        int kind = (int)((seed >> 16) % 5);
        size_t n = kind == 0 ? SMALL : kind == 4 ? BIG / 8 : MID;
        unsigned sid = (unsigned)(1000 + 2 * i + rank), rid = (unsigned)(1000 + 2 * i + peer);
        MPI_Request r[2];
        memset(rb, 0, 2 * MID);
        if (kind == 2) { /* non-contiguous receive */
            MPI_CHECK(MPI_Irecv(rb, 1, vec, peer, 5, MPI_COMM_WORLD, &r[0]));
        } else {
            MPI_CHECK(MPI_Irecv(rb, (int)n, MPI_BYTE, peer, 5, MPI_COMM_WORLD, &r[0]));
        }
        if (kind == 3) { /* non-contiguous send */
            fill(tmp, MID, sid);
            for (size_t k = 0; k < MID / 8; k++)
                memcpy(sb + 16 * k, tmp + 8 * k, 8);
            MPI_CHECK(MPI_Isend(sb, 1, vec, peer, 5, MPI_COMM_WORLD, &r[1]));
        } else {
            fill(sb, n, sid);
            if (kind == 1)
                MPI_CHECK(MPI_Issend(sb, (int)n, MPI_BYTE, peer, 5, MPI_COMM_WORLD, &r[1]));
            else
                MPI_CHECK(MPI_Isend(sb, (int)n, MPI_BYTE, peer, 5, MPI_COMM_WORLD, &r[1]));
        }
        MPI_CHECK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
        if (kind == 2) {
            for (size_t k = 0; k < MID / 8; k++)
                memcpy(tmp + 8 * k, rb + 16 * k, 8);
            check(tmp, MID, rid, "both, non-contiguous receive");
            for (size_t k = 0; k < MID / 8; k++)
                for (int j = 8; j < 16; j++)
                    CHECK(rb[16 * k + j] == 0, "non-contiguous receive: a gap byte was written");
        } else {
            check(rb, n, rid, "both");
        }
        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    }
    MPI_Type_free(&vec);
    free(sb);
    free(rb);
    free(tmp);
}

/* 6. Truncation: the receive posted first is shorter than the message; MPI_ERR_TRUNCATE and
 *    nothing written past the buffer. */
static void truncation(void)
{
    unsigned char *b = xmalloc(BIG);
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    if (rank == 1) {
        MPI_Request r;
        memset(b, 0, BIG);
        MPI_CHECK(MPI_Irecv(b, MID, MPI_BYTE, 0, 6, MPI_COMM_WORLD, &r));
        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
        int rc = MPI_Wait(&r, MPI_STATUS_IGNORE), cls;
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_TRUNCATE, "truncated receive: error class %d, expected MPI_ERR_TRUNCATE", cls);
        for (size_t k = MID; k < BIG; k++)
            CHECK(b[k] == 0, "truncated receive: byte %zu past the buffer written", k);
    } else if (rank == 0) {
        fill(b, 2 * MID, 60);
        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
        MPI_CHECK(MPI_Send(b, 2 * MID, MPI_BYTE, 1, 6, MPI_COMM_WORLD));
    } else {
        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    }
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    free(b);
}

/* 7. Cancel: a receive whose RECEIVER_READY the sender holds is cancelled, its buffer untouched;
 *    a receive posted before one with a RECEIVER_READY out is cancelled; the messages sent
 *    afterwards go to the receives posted afterwards. */
static void cancel(void)
{
    unsigned char *a = xmalloc(MID), *c = xmalloc(MID), *d = xmalloc(MID);
    for (int variant = 0; variant < 2; variant++) {
        if (rank == 1) {
            MPI_Request r1, r2, r3;
            memset(a, 0, MID);
            memset(c, 0, MID);
            memset(d, 0, MID);
            /* variant 0: cancel the one with the RECEIVER_READY; 1: cancel the one before it */
            MPI_CHECK(MPI_Irecv(a, variant ? SMALL : MID, MPI_BYTE, 0, 7, MPI_COMM_WORLD, &r1));
            MPI_CHECK(MPI_Irecv(c, MID, MPI_BYTE, 0, 7, MPI_COMM_WORLD, &r2));
            posted_go(1, 0); /* the RECEIVER_READYs are with the sender */
            MPI_Request *victim = variant ? &r1 : &r2;
            MPI_CHECK(MPI_Cancel(victim));
            MPI_Status st;
            MPI_CHECK(MPI_Wait(victim, &st));
            int cancelled = 0;
            MPI_CHECK(MPI_Test_cancelled(&st, &cancelled));
            CHECK(cancelled, "variant %d: an unmatched receive was not cancelled", variant);
            MPI_CHECK(MPI_Irecv(d, MID, MPI_BYTE, 0, 7, MPI_COMM_WORLD, &r3));
            posted_go(1, 0); /* now the sender sends two messages */
            MPI_Request *first = variant ? &r2 : &r1;
            unsigned char *fb = variant ? c : a;
            MPI_CHECK(MPI_Wait(first, MPI_STATUS_IGNORE));
            MPI_CHECK(MPI_Wait(&r3, MPI_STATUS_IGNORE));
            check(fb, MID, 70, "cancel: the first message");
            check(d, MID, 71, "cancel: the second message");
            unsigned char *vb = variant ? a : c;
            for (size_t k = 0; k < (variant ? (size_t)SMALL : (size_t)MID); k++)
                CHECK(vb[k] == 0, "variant %d: the cancelled receive's buffer was written (byte %zu)", variant, k);
        } else if (rank == 0) {
            posted_go(1, 0);
            posted_go(1, 0);
            fill(a, MID, 70);
            fill(c, MID, 71);
            MPI_CHECK(MPI_Send(a, MID, MPI_BYTE, 1, 7, MPI_COMM_WORLD));
            MPI_CHECK(MPI_Send(c, MID, MPI_BYTE, 1, 7, MPI_COMM_WORLD));
        }
        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    }
    /* A race: the sender sends while the receiver cancels; either the receive gets the message
     * or it is cancelled and the next receive does -- never both, never neither. */
    int got = 0, lost = 0;
    for (int i = 0; i < 40; i++) {
        if (rank == 1) {
            MPI_Request r1, r2;
            memset(a, 0, MID);
            memset(c, 0, MID);
            MPI_CHECK(MPI_Irecv(a, MID, MPI_BYTE, 0, 8, MPI_COMM_WORLD, &r1));
            MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
            MPI_CHECK(MPI_Cancel(&r1));
            MPI_Status st;
            MPI_CHECK(MPI_Wait(&r1, &st));
            int cancelled = 0;
            MPI_CHECK(MPI_Test_cancelled(&st, &cancelled));
            if (cancelled) {
                lost++;
                MPI_CHECK(MPI_Irecv(c, MID, MPI_BYTE, 0, 8, MPI_COMM_WORLD, &r2));
                MPI_CHECK(MPI_Wait(&r2, MPI_STATUS_IGNORE));
                check(c, MID, (unsigned)(80 + i), "cancel race: the message after a cancel");
                for (size_t k = 0; k < MID; k++)
                    CHECK(a[k] == 0, "cancel race: the cancelled receive's buffer was written (byte %zu)", k);
            } else {
                got++;
                check(a, MID, (unsigned)(80 + i), "cancel race: the message of a receive not cancelled");
            }
        } else if (rank == 0) {
            fill(a, MID, (unsigned)(80 + i));
            MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
            MPI_CHECK(MPI_Send(a, MID, MPI_BYTE, 1, 8, MPI_COMM_WORLD));
        } else {
            MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
        }
        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    }
    if (rank == 1 && expect == CUSTOMIZED)
        printf("cancel race: received %d, cancelled %d\n", got, lost);
    free(a);
    free(c);
    free(d);
}

/* 8. Wildcards (3 ranks and more): receives behind an MPI_ANY_SOURCE or MPI_ANY_TAG one send no
 *    RECEIVER_READY, and ranks 0 and 1 race to rank 2 on one tag; then a receive with one out
 *    is followed by an MPI_ANY_SOURCE one that both senders race for. */
static void wildcards(int rounds)
{
    if (size < 3)
        return;
    unsigned char *b[4];
    for (int i = 0; i < 4; i++)
        b[i] = xmalloc(MID);
    for (int i = 0; i < rounds; i++) {
        if (rank == 2) {
            MPI_Request r[4];
            for (int k = 0; k < 4; k++)
                memset(b[k], 0, MID);
            struct snap s0 = snap();
            MPI_CHECK(MPI_Irecv(b[0], MID, MPI_BYTE, MPI_ANY_SOURCE, 9, MPI_COMM_WORLD, &r[0]));
            MPI_CHECK(MPI_Irecv(b[1], MID, MPI_BYTE, 0, 9, MPI_COMM_WORLD, &r[1]));
            MPI_CHECK(MPI_Irecv(b[2], MID, MPI_BYTE, 1, MPI_ANY_TAG, MPI_COMM_WORLD, &r[2]));
            MPI_CHECK(MPI_Irecv(b[3], MID, MPI_BYTE, MPI_ANY_SOURCE, 9, MPI_COMM_WORLD, &r[3]));
            EXPECT_DELTA(rr_sent, 0, 0, "receives behind wildcards");
            MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
            MPI_Status st[4];
            MPI_CHECK(MPI_Waitall(4, r, st));
            /* rank 0 sends ids 0, 1 and rank 1 ids 2, 3 (tag 9): in posting order per source */
            int from[2] = { 0, 0 };
            for (int k = 0; k < 4; k++) {
                int src = st[k].MPI_SOURCE;
                CHECK(src == 0 || src == 1, "wildcards: source %d", src);
                CHECK(k != 1 || src == 0, "wildcards: receive 1 from %d", src);
                CHECK(k != 2 || src == 1, "wildcards: receive 2 from %d", src);
                check(b[k], MID, (unsigned)(2000 + 4 * i + 2 * src + from[src]++), "wildcards");
            }
            /* a receive with a RECEIVER_READY, then an MPI_ANY_SOURCE one on its tag */
            s0 = snap();
            memset(b[0], 0, MID);
            memset(b[1], 0, MID);
            MPI_CHECK(MPI_Irecv(b[0], MID, MPI_BYTE, 0, 10, MPI_COMM_WORLD, &r[0]));
            MPI_CHECK(MPI_Irecv(b[1], MID, MPI_BYTE, MPI_ANY_SOURCE, 10, MPI_COMM_WORLD, &r[1]));
            EXPECT_DELTA(rr_sent, 1, 0, "a receive before a wildcard one");
            MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
            MPI_CHECK(MPI_Waitall(2, r, st));
            CHECK(st[0].MPI_SOURCE == 0 && st[1].MPI_SOURCE == 1, "wildcard race: sources %d %d", st[0].MPI_SOURCE,
                  st[1].MPI_SOURCE);
            check(b[0], MID, (unsigned)(3000 + i), "wildcard race, named source");
            check(b[1], MID, (unsigned)(3500 + i), "wildcard race, any source");
        } else if (rank < 2) {
            MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
            for (int k = 0; k < 2; k++) {
                fill(b[k], MID, (unsigned)(2000 + 4 * i + 2 * rank + k));
                MPI_CHECK(MPI_Send(b[k], MID, MPI_BYTE, 2, 9, MPI_COMM_WORLD));
            }
            MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
            fill(b[0], MID, (unsigned)(rank ? 3500 + i : 3000 + i));
            MPI_CHECK(MPI_Send(b[0], MID, MPI_BYTE, 2, 10, MPI_COMM_WORLD));
        } else {
            MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
            MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
        }
        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    }
    for (int i = 0; i < 4; i++)
        free(b[i]);
}

/* 9. Threads: N threads per rank exchange both ways with the other rank at once, on a tag each
 *    (one communicator, one peer: the RECEIVER_READYs of all threads in one list), and now and
 *    then post a receive more and cancel it (it must be cancelled: no message is sent for it). */
struct thr {
    int t, rounds;
};

static void *thread_main(void *arg)
{
    const struct thr *th = arg;
    static const size_t sizes[] = { SMALL, MID, BIG / 2, 40000, 8 };
    int peer = 1 - rank, tag = 300 + th->t;
    unsigned char *sb = xmalloc(BIG / 2), *rb = xmalloc(BIG / 2), *xb = xmalloc(MID);
    for (int i = 0; i < th->rounds; i++) {
        size_t n = sizes[(unsigned)(i + th->t) % (sizeof sizes / sizeof sizes[0])];
        unsigned sid = (unsigned)(5000 + 1000 * th->t + 2 * i + rank),
                 rid = (unsigned)(5000 + 1000 * th->t + 2 * i + peer);
        MPI_Request r[2], x;
        memset(rb, 0, n);
        MPI_CHECK(MPI_Irecv(rb, (int)n, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &r[0]));
        int extra = i % 7 == 3;
        if (extra) {
            memset(xb, 0, MID);
            MPI_CHECK(MPI_Irecv(xb, MID, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &x));
        }
        if (extra) { /* (before this round's send: the peer's next message cannot come yet) */
            MPI_Status st;
            int cancelled = 0;
            MPI_CHECK(MPI_Cancel(&x));
            MPI_CHECK(MPI_Wait(&x, &st));
            MPI_CHECK(MPI_Test_cancelled(&st, &cancelled));
            CHECK(cancelled, "thread %d round %d: a receive no message was sent for was not cancelled", th->t, i);
            for (size_t k = 0; k < MID; k++)
                CHECK(xb[k] == 0, "thread %d round %d: a cancelled receive's buffer was written", th->t, i);
        }
        fill(sb, n, sid);
        MPI_CHECK(MPI_Isend(sb, (int)n, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &r[1]));
        MPI_CHECK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
        check(rb, n, rid, "threads");
    }
    free(sb);
    free(rb);
    free(xb);
    return NULL;
}

static void threads(int nthreads, int rounds)
{
    if (rank > 1)
        return;
    pthread_t tid[16];
    struct thr th[16];
    for (int t = 0; t < nthreads; t++) {
        th[t] = (struct thr){ t, rounds };
        CHECK(pthread_create(&tid[t], NULL, thread_main, &th[t]) == 0, "pthread_create");
    }
    for (int t = 0; t < nthreads; t++)
        pthread_join(tid[t], NULL);
}

int main(int argc, char **argv)
{
    int nthreads = argc > 4 && !strcmp(argv[3], "threads") ? atoi(argv[4]) : 0;
    if (nthreads < 0 || nthreads > 16)
        nthreads = 16;
    if (nthreads) {
        int provided;
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
        CHECK(provided == MPI_THREAD_MULTIPLE, "MPI_THREAD_MULTIPLE not provided");
    } else {
        MPI_Init(&argc, &argv);
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size >= 2, "needs at least 2 ranks");
    if (argc > 1)
        expect = !strcmp(argv[1], "customized")    ? CUSTOMIZED
                 : !strcmp(argv[1], "nofin")       ? NOFIN
                 : !strcmp(argv[1], "traditional") ? TRADITIONAL
                                                   : ANY;
    int rounds = argc > 2 ? atoi(argv[2]) : 200;
    warmup();
    receiver_first();
    sender_first();
    r1_r2();
    probe_after_rr();
    many(rounds / 10 + 3);
    both(rounds);
    truncation();
    cancel();
    wildcards(rounds / 10 + 2);
    if (nthreads)
        threads(nthreads, rounds);
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_Finalize();
    if (rank == 0)
        printf("p2p_rndv_cust: all checks passed\n");
    return 0;
}
