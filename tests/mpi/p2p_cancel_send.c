/* MPI_Cancel of sends (MPI 4.1, 3.8.4): a send whose message has not matched is cancelled --
 * MPI_Wait returns, MPI_Test_cancelled is true and the receiver never sees the message -- and a
 * send whose message has matched completes as a send (Test_cancelled false, the data arrives).
 * Every mode (standard, synchronous, ready, buffered, persistent) and size (empty, eager,
 * rendezvous), to the other rank and to oneself:
 *   unmatched  the receiver posts nothing: the cancel must succeed; a marker sent after it
 *              arrives with no message of the tag before it (Iprobe), and a new message on the
 *              tag is received whole;
 *   matched    the receive was posted before the send began: the cancel must fail;
 *   completed  the send has completed (MPI_Request_get_status) before the cancel: it must fail;
 *   mprobe     the receiver took the message with MPI_Mprobe, then the sender cancels: it fails;
 *   race       the receiver posts its receive at a random moment around the cancel: either
 *              outcome, but exactly one -- cancelled and never received, or received whole;
 *   threads    (argument "threads T") the race in T threads of each rank at once, each on its
 *              own tags (MPI_THREAD_MULTIPLE).
 * Ranks 0 (sender) and 1 (receiver); other ranks only take part in the barriers.
 * Arguments: [iterations of the race (default 200)] [threads T] */
#include <pthread.h>

#include "mtest.h"

enum { MODE_STD, MODE_SYNC, MODE_BUF, MODE_PSTD, MODE_PSYNC, MODE_READY, NMODES };
static const char *mode_name[] = { "Isend", "Issend", "Ibsend", "Send_init", "Ssend_init", "Irsend" };
static const int sizes[] = { 0, 16, 3000, 40000, 1 << 20 };
#define NSIZES      (int)(sizeof sizes / sizeof sizes[0])
#define TAG_MARK    1
#define TAG_READY   3
#define TAG_BASE    100
#define BUFSPACE    (8 * (1 << 20) + 64 * MPI_BSEND_OVERHEAD)
#define TAG_THREADS 10000

static int rank, size;

static void start_send(int mode, const void *buf, int n, int dest, int tag, MPI_Comm comm, MPI_Request *r)
{
    switch (mode) {
    case MODE_STD: MPI_CHECK(MPI_Isend(buf, n, MPI_BYTE, dest, tag, comm, r)); break;
    case MODE_SYNC: MPI_CHECK(MPI_Issend(buf, n, MPI_BYTE, dest, tag, comm, r)); break;
    case MODE_BUF: MPI_CHECK(MPI_Ibsend(buf, n, MPI_BYTE, dest, tag, comm, r)); break;
    case MODE_READY: MPI_CHECK(MPI_Irsend(buf, n, MPI_BYTE, dest, tag, comm, r)); break;
    case MODE_PSTD:
    case MODE_PSYNC:
        if (mode == MODE_PSTD)
            MPI_CHECK(MPI_Send_init(buf, n, MPI_BYTE, dest, tag, comm, r));
        else
            MPI_CHECK(MPI_Ssend_init(buf, n, MPI_BYTE, dest, tag, comm, r));
        MPI_CHECK(MPI_Start(r));
        break;
    }
}

static int persistent(int mode)
{
    return mode == MODE_PSTD || mode == MODE_PSYNC;
}

/* Waits for a send that was asked to cancel; returns Test_cancelled. A persistent request
 * stays (inactive), the others are gone. */
static int finish_send(int mode, MPI_Request *r, const char *what)
{
    MPI_Status st;
    int c = -1;
    MPI_CHECK(MPI_Wait(r, &st));
    MPI_CHECK(MPI_Test_cancelled(&st, &c));
    CHECK(c == 0 || c == 1, "%s: Test_cancelled gave %d", what, c);
    CHECK(persistent(mode) == (*r != MPI_REQUEST_NULL), "%s: Wait left request %s", what,
          *r == MPI_REQUEST_NULL ? "null" : "live");
    return c;
}

static void free_send(int mode, MPI_Request *r)
{
    if (persistent(mode))
        MPI_CHECK(MPI_Request_free(r));
}

/* The receiver's side of a message that must not be there any more: a marker sent after the
 * cancel arrives, with nothing on the tag before it (non-overtaking); then (recv_fresh) the
 * next message on the tag, sent once the probe is done, is received whole. */
static void check_gone(int src, int tag, const char *what)
{
    int flag = 1;
    MPI_CHECK(MPI_Recv(NULL, 0, MPI_BYTE, src, TAG_MARK, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MPI_CHECK(MPI_Iprobe(src, tag, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
    CHECK(!flag, "%s: the cancelled message is still there to be received", what);
}

static void recv_fresh(int src, int tag, int n, unsigned seed, const char *what)
{
    char *buf = mtest_malloc((size_t)n + 1);
    MPI_Status st;
    MPI_CHECK(MPI_Recv(buf, n + 1, MPI_BYTE, src, tag, MPI_COMM_WORLD, &st));
    mtest_check_status(&st, src, tag, MPI_BYTE, n, what);
    CHECK_PATTERN(buf, (size_t)n, seed, what);
    free(buf);
}

/* Unmatched: the cancel must succeed, to rank 1 and to oneself. The new message on the tag is
 * a persistent request's next round (it must work again after a cancelled one), else a send. */
static void test_unmatched(void)
{
    int tag = TAG_BASE;
    for (int self = 0; self < 2; self++)
        for (int mode = 0; mode < NMODES; mode++) {
            if (mode == MODE_READY)
                continue; /* a ready send needs a posted receive */
            for (int i = 0; i < NSIZES; i++, tag++) {
                int n = sizes[i];
                unsigned seed = (unsigned)tag;
                char what[96];
                snprintf(what, sizeof what, "unmatched %s of %d bytes to %s", mode_name[mode], n,
                         self ? "oneself" : "rank 1");
                if (rank == 0) {
                    int dest = self ? 0 : 1;
                    char *buf = mtest_malloc((size_t)n + 1), *fresh = mtest_malloc((size_t)n + 1);
                    mtest_fill(buf, (size_t)n, seed + 7);
                    mtest_fill(fresh, (size_t)n, seed);
                    MPI_Request r, m = MPI_REQUEST_NULL, f;
                    start_send(mode, buf, n, dest, tag, MPI_COMM_WORLD, &r);
                    MPI_CHECK(MPI_Cancel(&r));
                    CHECK(finish_send(mode, &r, what) == 1, "%s: not cancelled", what);
                    if (self) {
                        MPI_CHECK(MPI_Isend(NULL, 0, MPI_BYTE, 0, TAG_MARK, MPI_COMM_WORLD, &m));
                        check_gone(0, tag, what);
                    } else {
                        MPI_CHECK(MPI_Send(NULL, 0, MPI_BYTE, 1, TAG_MARK, MPI_COMM_WORLD));
                        MPI_CHECK(MPI_Recv(NULL, 0, MPI_BYTE, 1, TAG_READY, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                    }
                    if (persistent(mode)) {
                        memcpy(buf, fresh, (size_t)n);
                        MPI_CHECK(MPI_Start(&r));
                        f = r;
                    } else {
                        MPI_CHECK(MPI_Isend(fresh, n, MPI_BYTE, dest, tag, MPI_COMM_WORLD, &f));
                    }
                    if (self)
                        recv_fresh(0, tag, n, seed, what);
                    MPI_CHECK(MPI_Wait(&m, MPI_STATUS_IGNORE));
                    MPI_Status st;
                    int c = 1;
                    MPI_CHECK(MPI_Wait(&f, &st));
                    MPI_CHECK(MPI_Test_cancelled(&st, &c));
                    CHECK(!c, "%s: the next send says cancelled", what);
                    if (persistent(mode))
                        MPI_CHECK(MPI_Request_free(&r));
                    free(buf);
                    free(fresh);
                } else if (rank == 1 && !self) {
                    check_gone(0, tag, what);
                    MPI_CHECK(MPI_Send(NULL, 0, MPI_BYTE, 0, TAG_READY, MPI_COMM_WORLD));
                    recv_fresh(0, tag, n, seed, what);
                }
            }
        }
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
}

/* Matched (the receive posted first), completed, and taken by MPI_Mprobe: the cancel fails. */
static void test_matched(void)
{
    int tag = TAG_BASE + 1000;
    for (int kind = 0; kind < 3; kind++)
        for (int mode = 0; mode < NMODES; mode++)
            for (int i = 0; i < NSIZES; i++, tag++) {
                int n = sizes[i];
                char what[96];
                snprintf(what, sizeof what, "%s %s of %d bytes",
                         kind == 0   ? "matched"
                         : kind == 1 ? "completed"
                                     : "mprobed",
                         mode_name[mode], n);
                if (kind == 2 && mode == MODE_READY)
                    continue; /* no receive posted for a ready send */
                if (rank == 1) {
                    char *buf = mtest_malloc((size_t)n + 1);
                    MPI_Status st;
                    if (kind < 2) {
                        MPI_Request r;
                        MPI_CHECK(MPI_Irecv(buf, n + 1, MPI_BYTE, 0, tag, MPI_COMM_WORLD, &r));
                        MPI_CHECK(MPI_Send(NULL, 0, MPI_BYTE, 0, TAG_READY, MPI_COMM_WORLD));
                        MPI_CHECK(MPI_Wait(&r, &st));
                    } else {
                        MPI_Message msg;
                        MPI_CHECK(MPI_Mprobe(0, tag, MPI_COMM_WORLD, &msg, &st));
                        MPI_CHECK(MPI_Send(NULL, 0, MPI_BYTE, 0, TAG_READY, MPI_COMM_WORLD));
                        MPI_CHECK(MPI_Mrecv(buf, n + 1, MPI_BYTE, &msg, &st));
                    }
                    int c = 1;
                    MPI_CHECK(MPI_Test_cancelled(&st, &c));
                    CHECK(!c, "%s: the receive says cancelled", what);
                    mtest_check_status(&st, 0, tag, MPI_BYTE, n, what);
                    CHECK_PATTERN(buf, (size_t)n, (unsigned)tag, what);
                    free(buf);
                } else if (rank == 0) {
                    char *buf = mtest_malloc((size_t)n + 1);
                    mtest_fill(buf, (size_t)n, (unsigned)tag);
                    MPI_Request r;
                    if (kind < 2)
                        MPI_CHECK(MPI_Recv(NULL, 0, MPI_BYTE, 1, TAG_READY, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                    start_send(mode, buf, n, 1, tag, MPI_COMM_WORLD, &r);
                    if (kind == 1) {
                        int flag = 0;
                        while (!flag)
                            MPI_CHECK(MPI_Request_get_status(r, &flag, MPI_STATUS_IGNORE));
                    } else if (kind == 2) {
                        MPI_CHECK(MPI_Recv(NULL, 0, MPI_BYTE, 1, TAG_READY, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                    }
                    MPI_CHECK(MPI_Cancel(&r));
                    CHECK(finish_send(mode, &r, what) == 0, "%s: cancelled after it matched", what);
                    free_send(mode, &r);
                    free(buf);
                }
            }
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
}

/* One round of the race on (comm, tag): the receiver posts its receive before the send, at a
 * random moment around the cancel, or only once told the outcome (the handshake on tag + 1,
 * the outcome on tag + 2, so that threads on one communicator keep apart). */
static int race_round(MPI_Comm comm, int tag, unsigned *rnd, int it)
{
    int outcome = -1;
    int mode = (int)(rand_r(rnd) % (NMODES - 1)); /* not ready mode: the receive may be late */
    int n = sizes[rand_r(rnd) % NSIZES];
    int when = (int)(rand_r(rnd) % 3);
    int spin = (int)(rand_r(rnd) % 2000);
    char what[96];
    snprintf(what, sizeof what, "race %d: %s of %d bytes, receive %s", it, mode_name[mode], n,
             when == 0   ? "early"
             : when == 1 ? "around the cancel"
                         : "after");
    char *buf = mtest_malloc((size_t)n + 1);
    if (rank == 1) {
        MPI_Request r = MPI_REQUEST_NULL;
        if (when == 0)
            MPI_CHECK(MPI_Irecv(buf, n + 1, MPI_BYTE, 0, tag, comm, &r));
        MPI_CHECK(MPI_Send(NULL, 0, MPI_BYTE, 0, tag + 1, comm));
        if (when == 1) {
            for (volatile int k = 0; k < spin; k++)
                ;
            MPI_CHECK(MPI_Irecv(buf, n + 1, MPI_BYTE, 0, tag, comm, &r));
        }
        int cancelled = -1;
        MPI_CHECK(MPI_Recv(&cancelled, 1, MPI_INT, 0, tag + 2, comm, MPI_STATUS_IGNORE));
        MPI_Status st;
        if (cancelled) {
            if (r != MPI_REQUEST_NULL) {
                int c = 0;
                MPI_CHECK(MPI_Cancel(&r));
                MPI_CHECK(MPI_Wait(&r, &st));
                MPI_CHECK(MPI_Test_cancelled(&st, &c));
                CHECK(c, "%s: the send was cancelled but the receive got a message", what);
            }
            int flag = 1;
            MPI_CHECK(MPI_Iprobe(0, tag, comm, &flag, MPI_STATUS_IGNORE));
            CHECK(!flag, "%s: the send was cancelled but its message is there", what);
        } else {
            if (r == MPI_REQUEST_NULL)
                MPI_CHECK(MPI_Irecv(buf, n + 1, MPI_BYTE, 0, tag, comm, &r));
            MPI_CHECK(MPI_Wait(&r, &st));
            mtest_check_status(&st, 0, tag, MPI_BYTE, n, what);
            CHECK_PATTERN(buf, (size_t)n, (unsigned)(tag + it), what);
        }
    } else if (rank == 0) {
        mtest_fill(buf, (size_t)n, (unsigned)(tag + it));
        MPI_CHECK(MPI_Recv(NULL, 0, MPI_BYTE, 1, tag + 1, comm, MPI_STATUS_IGNORE));
        MPI_Request r;
        start_send(mode, buf, n, 1, tag, comm, &r);
        for (volatile int k = 0; k < spin; k++)
            ;
        MPI_CHECK(MPI_Cancel(&r));
        int cancelled = finish_send(mode, &r, what);
        free_send(mode, &r);
        MPI_CHECK(MPI_Send(&cancelled, 1, MPI_INT, 1, tag + 2, comm));
        outcome = cancelled;
    }
    free(buf);
    return outcome;
}

struct thr {
    int id, iters;
    MPI_Comm comm;
};

static void *race_thread(void *arg)
{
    struct thr *t = arg;
    unsigned rnd = 77u + (unsigned)t->id;
    for (int it = 0; it < t->iters; it++)
        race_round(t->comm, TAG_THREADS + 10 * t->id, &rnd, it);
    return NULL;
}

int main(int argc, char **argv)
{
    int iters = argc > 1 ? atoi(argv[1]) : 200;
    int nthreads = argc > 3 && !strcmp(argv[2], "threads") ? atoi(argv[3]) : 0;
    int provided;
    MPI_CHECK(MPI_Init_thread(&argc, &argv, nthreads ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE, &provided));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    CHECK(size >= 2, "needs at least 2 ranks");
    void *bspace = mtest_malloc(BUFSPACE);
    MPI_CHECK(MPI_Buffer_attach(bspace, BUFSPACE));

    test_unmatched();
    test_matched();
    unsigned rnd = 12345u;
    int outcomes[2] = { 0, 0 };
    for (int it = 0; it < iters; it++) {
        int o = race_round(MPI_COMM_WORLD, TAG_BASE + 5000, &rnd, it);
        if (o >= 0)
            outcomes[o]++;
    }
    /* a receive posted early always matches, one posted after the outcome never does */
    CHECK(rank != 0 || iters < 30 || (outcomes[0] && outcomes[1]), "race: %d sends cancelled, %d not", outcomes[1],
          outcomes[0]);
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));

    if (nthreads) {
        CHECK(provided == MPI_THREAD_MULTIPLE, "MPI_THREAD_MULTIPLE not provided (%d)", provided);
        pthread_t tid[4];
        struct thr t[4];
        if (nthreads > 4)
            nthreads = 4; /* the attached buffer holds 4 buffered sends of the largest size at once */
        for (int i = 0; i < nthreads; i++) {
            t[i] = (struct thr){ i, iters / 2 + 1, MPI_COMM_WORLD };
            /* half the threads on their own communicator, half on the shared one */
            if (i % 2)
                MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &t[i].comm));
        }
        for (int i = 0; i < nthreads; i++)
            CHECK(pthread_create(&tid[i], NULL, race_thread, &t[i]) == 0, "pthread_create");
        for (int i = 0; i < nthreads; i++)
            pthread_join(tid[i], NULL);
        for (int i = 0; i < nthreads; i++)
            if (i % 2)
                MPI_CHECK(MPI_Comm_free(&t[i].comm));
        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    }

    /* Every piece of the attached buffer came back, cancelled sends' too: detach returns. */
    void *b;
    int bs;
    MPI_CHECK(MPI_Buffer_detach(&b, &bs));
    CHECK(b == bspace && bs == BUFSPACE, "Buffer_detach gave %p/%d", b, bs);
    free(bspace);
    return mtest_finalize();
}
