/* Matching order under stress (meant to run over a channel that delays and reorders frames,
 * APTUS_CHANNEL_FAULTS, but valid anywhere): MPI's non-overtaking rule.
 *
 * Each rank in turn is the root; every rank (the root too: messages to oneself) sends it many
 * messages of mixed sizes (eager and rendezvous, some synchronous) and tags, all at once.
 *  Phase 1: the root receives them one at a time with a random mix of specific and wildcard
 *           receives (source and tag), probes, matched probes and polling probes. Whatever
 *           source a receive returns, the message must be the earliest not yet received from
 *           that source that matches the receive's tag (ANY_TAG: the earliest of all); a probe
 *           and the receive that follows it see the same message.
 *  Phase 2: the root posts batches of nonblocking receives for one source (specific tags and
 *           ANY_TAG mixed) and waits for them all: receives posted in succession that match the
 *           same message are satisfied in posting order, messages in sending order, so each
 *           receive gets the message that the greedy rule gives it.
 * Every payload carries its index and a pattern that depends on sender, index and round.
 * Any number of ranks >= 1. */
#include "mtest.h"

#define M1     90 /* messages per sender and round, phase 1 */
#define M2     60 /* phase 2 */
#define NTAGS  3
#define BATCH  6
#define MAXMSG 200000

static int rank, size;

static const int sizes[] = { 0, 4, 8, 33, 512, 4000, 4100, 16384, 16385, 65536, 12, 100, 200000, 7, 1024 };
#define NSIZES ((int)(sizeof sizes / sizeof sizes[0]))

static int msg_size(int s, int i, int phase)
{
    return sizes[(i * 5 + s * 3 + phase) % NSIZES];
}

static int msg_tag(int s, int i, int phase)
{
    /* runs of one tag, then changes: (i / 2 + s + phase) spread over NTAGS */
    return ((i / 2) * 7 + s + phase) % NTAGS;
}

static unsigned msg_seed(int root, int s, int i, int phase)
{
    return (unsigned)(root * 1000003 + s * 10007 + i * 31 + phase * 7 + 1);
}

static void fill(char *b, int n, unsigned seed, int i)
{
    mtest_fill(b, (size_t)n, seed);
    if (n >= (int)sizeof(int))
        memcpy(b, &i, sizeof i);
}

static void verify(const char *b, int n, unsigned seed, int i, const char *what, int s)
{
    if (n >= (int)sizeof(int)) {
        int got;
        memcpy(&got, b, sizeof got);
        CHECK(got == i, "%s: from rank %d got message %d where %d was expected (overtaking)", what, s, got, i);
        for (int k = (int)sizeof(int); k < n; k++)
            CHECK((unsigned char)b[k] == mtest_pat(seed, (size_t)k), "%s: message %d from %d: byte %d of %d wrong",
                  what, i, s, k, n);
    }
}

/* A small deterministic generator (the root's choices). */
static uint64_t rng_state = 88172645463325252ULL;
static unsigned rnd(unsigned n)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (unsigned)(rng_state % n);
}

/* Sends every message of this rank to root (phase 1 or 2); returns the requests and buffers. */
static void send_all(int root, int phase, int m, MPI_Comm comm, MPI_Request *req, char **buf)
{
    for (int i = 0; i < m; i++) {
        int n = msg_size(rank, i, phase);
        buf[i] = mtest_malloc((size_t)n);
        fill(buf[i], n, msg_seed(root, rank, i, phase), i);
        if (i % 9 == 4)
            MPI_CHECK(MPI_Issend(buf[i], n, MPI_BYTE, root, msg_tag(rank, i, phase), comm, &req[i]));
        else
            MPI_CHECK(MPI_Isend(buf[i], n, MPI_BYTE, root, msg_tag(rank, i, phase), comm, &req[i]));
    }
}

static void send_finish(int m, MPI_Request *req, char **buf)
{
    MPI_CHECK(MPI_Waitall(m, req, MPI_STATUSES_IGNORE));
    for (int i = 0; i < m; i++)
        free(buf[i]);
}

/* The earliest message from s not yet received that matches tag (-1: none). */
static int earliest(const char *got, int s, int tag, int phase, int m)
{
    for (int i = 0; i < m; i++)
        if (!got[s * m + i] && (tag == MPI_ANY_TAG || msg_tag(s, i, phase) == tag))
            return i;
    return -1;
}

/* Checks a received message (status st, bytes in buf) against the one the rule says. */
static void check_recv(int root, const MPI_Status *st, const char *buf, char *got, int tag, const char *what)
{
    int s = st->MPI_SOURCE, n = -1;
    CHECK(s >= 0 && s < size, "%s: source %d", what, s);
    int i = earliest(got, s, tag, 1, M1);
    CHECK(i >= 0, "%s: a message from %d that was not expected", what, s);
    MPI_CHECK(MPI_Get_count(st, MPI_BYTE, &n));
    CHECK(st->MPI_TAG == msg_tag(s, i, 1), "%s: from %d tag %d, want %d (message %d)", what, s, st->MPI_TAG,
          msg_tag(s, i, 1), i);
    CHECK(n == msg_size(s, i, 1), "%s: from %d message %d: %d bytes, want %d", what, s, i, n, msg_size(s, i, 1));
    verify(buf, n, msg_seed(root, s, i, 1), i, what, s);
    got[s * M1 + i] = 1;
}

/* A random message still to receive (its source and tag). */
static void pick(const char *got, int left, int *s, int *tag)
{
    int k = (int)rnd((unsigned)left);
    for (int j = 0; j < size * M1; j++) {
        if (got[j])
            continue;
        if (k-- == 0) {
            *s = j / M1;
            *tag = msg_tag(*s, j % M1, 1);
            return;
        }
    }
    FAILF("no message left to pick");
}

static void phase1(int root, MPI_Comm comm)
{
    MPI_Request *req = mtest_malloc(M1 * sizeof *req);
    char **sbuf = mtest_malloc(M1 * sizeof *sbuf);
    send_all(root, 1, M1, comm, req, sbuf);
    if (rank == root) {
        char *got = calloc((size_t)(size * M1), 1);
        char *buf = mtest_malloc(MAXMSG);
        CHECK(got, "out of memory");
        for (int left = size * M1; left > 0; left--) {
            int s, tag;
            pick(got, left, &s, &tag);
            MPI_Status st;
            switch (rnd(8)) {
            case 0:
                MPI_CHECK(MPI_Recv(buf, MAXMSG, MPI_BYTE, s, tag, comm, &st));
                CHECK(st.MPI_SOURCE == s, "Recv(%d, %d): source %d", s, tag, st.MPI_SOURCE);
                check_recv(root, &st, buf, got, tag, "Recv(src, tag)");
                break;
            case 1:
                MPI_CHECK(MPI_Recv(buf, MAXMSG, MPI_BYTE, s, MPI_ANY_TAG, comm, &st));
                CHECK(st.MPI_SOURCE == s, "Recv(%d, ANY_TAG): source %d", s, st.MPI_SOURCE);
                check_recv(root, &st, buf, got, MPI_ANY_TAG, "Recv(src, ANY_TAG)");
                break;
            case 2:
                MPI_CHECK(MPI_Recv(buf, MAXMSG, MPI_BYTE, MPI_ANY_SOURCE, tag, comm, &st));
                check_recv(root, &st, buf, got, tag, "Recv(ANY_SOURCE, tag)");
                break;
            case 3:
                MPI_CHECK(MPI_Recv(buf, MAXMSG, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &st));
                check_recv(root, &st, buf, got, MPI_ANY_TAG, "Recv(ANY_SOURCE, ANY_TAG)");
                break;
            case 4: {
                /* The probed message is the earliest from its source; the receive by (source,
                 * tag) that follows gets that same message. */
                MPI_Status pst;
                int n;
                MPI_CHECK(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &pst));
                int i = earliest(got, pst.MPI_SOURCE, MPI_ANY_TAG, 1, M1);
                CHECK(i >= 0 && pst.MPI_TAG == msg_tag(pst.MPI_SOURCE, i, 1),
                      "Probe(ANY, ANY): from %d tag %d is not the earliest message (%d)", pst.MPI_SOURCE, pst.MPI_TAG,
                      i);
                MPI_CHECK(MPI_Get_count(&pst, MPI_BYTE, &n));
                CHECK(n == msg_size(pst.MPI_SOURCE, i, 1), "Probe: %d bytes, want %d", n,
                      msg_size(pst.MPI_SOURCE, i, 1));
                MPI_CHECK(MPI_Recv(buf, MAXMSG, MPI_BYTE, pst.MPI_SOURCE, pst.MPI_TAG, comm, &st));
                check_recv(root, &st, buf, got, MPI_ANY_TAG, "Recv after Probe");
                break;
            }
            case 5: {
                MPI_Message msg;
                int t = rnd(2) ? tag : MPI_ANY_TAG;
                MPI_CHECK(MPI_Mprobe(s, t, comm, &msg, &st));
                CHECK(st.MPI_SOURCE == s, "Mprobe(%d): source %d", s, st.MPI_SOURCE);
                MPI_CHECK(MPI_Mrecv(buf, MAXMSG, MPI_BYTE, &msg, &st));
                check_recv(root, &st, buf, got, t, "Mprobe + Mrecv");
                break;
            }
            case 6: {
                int flag = 0;
                MPI_Status pst;
                while (!flag)
                    MPI_CHECK(MPI_Iprobe(MPI_ANY_SOURCE, tag, comm, &flag, &pst));
                MPI_CHECK(MPI_Recv(buf, MAXMSG, MPI_BYTE, pst.MPI_SOURCE, tag, comm, &st));
                check_recv(root, &st, buf, got, tag, "Recv after Iprobe(ANY_SOURCE, tag)");
                break;
            }
            default: {
                MPI_Request r;
                MPI_CHECK(MPI_Irecv(buf, MAXMSG, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &r));
                MPI_CHECK(MPI_Wait(&r, &st));
                check_recv(root, &st, buf, got, MPI_ANY_TAG, "Irecv(ANY_SOURCE, ANY_TAG)");
                break;
            }
            }
        }
        free(got);
        free(buf);
    }
    send_finish(M1, req, sbuf);
    free(req);
    free(sbuf);
}

static void phase2(int root, MPI_Comm comm)
{
    MPI_Request *req = mtest_malloc(M2 * sizeof *req);
    char **sbuf = mtest_malloc(M2 * sizeof *sbuf);
    send_all(root, 2, M2, comm, req, sbuf);
    if (rank == root) {
        char *taken = calloc((size_t)(size * M2), 1);
        int *left = mtest_malloc((size_t)size * sizeof *left);
        CHECK(taken, "out of memory");
        int all = size * M2;
        for (int s = 0; s < size; s++)
            left[s] = M2;
        for (int s = 0; all > 0; s = (s + 1) % size) {
            if (!left[s])
                continue;
            /* A batch for source s: each receive takes the earliest untaken message that matches
             * it, in posting order (the tags are chosen among untaken messages, so all match). */
            int tags[BATCH], want[BATCH], nb = 0;
            MPI_Request r[BATCH];
            char *rbuf[BATCH];
            int k = 1 + (int)rnd(BATCH);
            for (; nb < k && left[s] > 0; nb++) {
                int j, c = (int)rnd((unsigned)left[s]);
                for (j = 0; j < M2; j++)
                    if (!taken[s * M2 + j] && c-- == 0)
                        break;
                tags[nb] = rnd(5) < 2 ? MPI_ANY_TAG : msg_tag(s, j, 2);
                for (j = 0; j < M2; j++)
                    if (!taken[s * M2 + j] && (tags[nb] == MPI_ANY_TAG || msg_tag(s, j, 2) == tags[nb]))
                        break;
                want[nb] = j;
                taken[s * M2 + j] = 1;
                left[s]--;
                all--;
            }
            for (int b = 0; b < nb; b++) {
                rbuf[b] = mtest_malloc(MAXMSG);
                MPI_CHECK(MPI_Irecv(rbuf[b], MAXMSG, MPI_BYTE, s, tags[b], comm, &r[b]));
            }
            MPI_Status st[BATCH];
            MPI_CHECK(MPI_Waitall(nb, r, st));
            for (int b = 0; b < nb; b++) {
                int i = want[b], n = -1;
                MPI_CHECK(MPI_Get_count(&st[b], MPI_BYTE, &n));
                CHECK(st[b].MPI_SOURCE == s && st[b].MPI_TAG == msg_tag(s, i, 2) && n == msg_size(s, i, 2),
                      "batch receive %d of %d (tag %d) from %d: got source %d tag %d %d bytes, want message %d (tag "
                      "%d, %d bytes)",
                      b, nb, tags[b], s, st[b].MPI_SOURCE, st[b].MPI_TAG, n, i, msg_tag(s, i, 2), msg_size(s, i, 2));
                verify(rbuf[b], n, msg_seed(root, s, i, 2), i, "batch receive", s);
                free(rbuf[b]);
            }
        }
        free(taken);
        free(left);
    }
    send_finish(M2, req, sbuf);
    free(req);
    free(sbuf);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm c1, c2;
    MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &c1));
    MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &c2));
    for (int root = 0; root < size; root++) {
        phase1(root, c1);
        phase2(root, c2);
    }
    MPI_CHECK(MPI_Comm_free(&c1));
    MPI_CHECK(MPI_Comm_free(&c2));
    return mtest_finalize();
}
