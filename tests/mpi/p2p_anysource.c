/* MPI_ANY_SOURCE / MPI_ANY_TAG races with several senders.
 * Ranks 1..P-1 each send K messages carrying (source, sequence number);
 * rank 0 receives them all with wildcards and checks that every source's
 * messages arrive in order, exactly once, with the right size and payload.
 * Phases: blocking receives of small messages; receives pre-posted before the
 * sends start (expected queue) followed by receives posted after
 * (unexpected queue); wildcard receives interleaved with source-specific
 * ones; mixed small and large messages. Needs >= 2 ranks (meant for 4). */
#include "mtest.h"

static int rank, size;

struct hdr {
    int src;
    int seq;
    int phase;
    int len;
};

static int phase_size(int phase, int src, int seq)
{
    if (phase == 3) {
        static const int s[] = { 16, 1048576, 40, 262144, 1000, 70000, 16, 4096 + 16 };
        return s[(seq + src) % 8];
    }
    return (int)sizeof(struct hdr) + ((seq * 7 + src) % 5) * 8;
}

static void make_msg(char *buf, int phase, int src, int seq)
{
    struct hdr h = { src, seq, phase, phase_size(phase, src, seq) };
    mtest_fill(buf, (size_t)h.len, (unsigned)(phase * 100000 + src * 10000 + seq));
    memcpy(buf, &h, sizeof h);
}

/* Per-source expected next sequence number (rank 0 only). */
static int *next_seq;

static void check_msg(const char *buf, const MPI_Status *st, int phase, int K)
{
    struct hdr h;
    int n;
    CHECK(st->MPI_SOURCE >= 1 && st->MPI_SOURCE < size, "phase %d: bad source %d", phase, st->MPI_SOURCE);
    MPI_CHECK(MPI_Get_count(st, MPI_BYTE, &n));
    CHECK(n >= (int)sizeof h, "phase %d: message from %d too short (%d)", phase, st->MPI_SOURCE, n);
    memcpy(&h, buf, sizeof h);
    CHECK(h.src == st->MPI_SOURCE, "phase %d: status source %d but payload says %d", phase, st->MPI_SOURCE, h.src);
    CHECK(h.phase == phase, "phase %d: message from phase %d", phase, h.phase);
    CHECK(h.seq == next_seq[h.src], "phase %d: from source %d got seq %d, expected %d (out of order or lost)", phase,
          h.src, h.seq, next_seq[h.src]);
    CHECK(h.seq < K, "phase %d: seq %d beyond K=%d", phase, h.seq, K);
    CHECK(st->MPI_TAG == h.seq % 17, "phase %d: tag %d, want %d", phase, st->MPI_TAG, h.seq % 17);
    CHECK(n == h.len && n == phase_size(phase, h.src, h.seq), "phase %d: size %d, want %d", phase, n,
          phase_size(phase, h.src, h.seq));
    unsigned seed = (unsigned)(phase * 100000 + h.src * 10000 + h.seq);
    for (int i = (int)sizeof h; i < n; i++)
        CHECK((unsigned char)buf[i] == mtest_pat(seed, (size_t)i), "phase %d: src %d seq %d byte %d wrong", phase,
              h.src, h.seq, i);
    next_seq[h.src]++;
}

static void reset_seq(void)
{
    for (int i = 0; i < size; i++)
        next_seq[i] = 0;
}

static void check_complete(int phase, int K)
{
    for (int s = 1; s < size; s++)
        CHECK(next_seq[s] == K, "phase %d: got %d of %d messages from %d", phase, next_seq[s], K, s);
}

/* Senders: send K messages of this phase with blocking or nonblocking sends. */
static void send_phase(int phase, int K, int nonblocking)
{
    int maxlen = 0;
    for (int i = 0; i < K; i++)
        if (phase_size(phase, rank, i) > maxlen)
            maxlen = phase_size(phase, rank, i);
    if (!nonblocking) {
        char *buf = mtest_malloc((size_t)maxlen);
        for (int i = 0; i < K; i++) {
            make_msg(buf, phase, rank, i);
            MPI_CHECK(MPI_Send(buf, phase_size(phase, rank, i), MPI_BYTE, 0, i % 17, MPI_COMM_WORLD));
        }
        free(buf);
    } else {
        char **bufs = mtest_malloc(sizeof(char *) * (size_t)K);
        MPI_Request *rq = mtest_malloc(sizeof(MPI_Request) * (size_t)K);
        for (int i = 0; i < K; i++) {
            bufs[i] = mtest_malloc((size_t)phase_size(phase, rank, i));
            make_msg(bufs[i], phase, rank, i);
            MPI_CHECK(MPI_Isend(bufs[i], phase_size(phase, rank, i), MPI_BYTE, 0, i % 17, MPI_COMM_WORLD, &rq[i]));
        }
        MPI_CHECK(MPI_Waitall(K, rq, MPI_STATUSES_IGNORE));
        for (int i = 0; i < K; i++)
            free(bufs[i]);
        free(bufs);
        free(rq);
    }
}

/* Phase 1: blocking ANY_SOURCE/ANY_TAG receives of small messages. */
static void phase1(void)
{
    const int K = 3000;
    if (rank == 0) {
        char buf[256];
        MPI_Status st;
        reset_seq();
        for (int i = 0; i < K * (size - 1); i++) {
            MPI_CHECK(MPI_Recv(buf, sizeof buf, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
            check_msg(buf, &st, 1, K);
        }
        check_complete(1, K);
    } else {
        send_phase(1, K, rank % 2);
    }
}

/* Phase 2: half of the receives pre-posted (ANY_SOURCE) before the senders
 * start, the rest received after with blocking receives. */
static void phase2(void)
{
    const int K = 400;
    if (rank == 0) {
        int total = K * (size - 1), pre = total / 2;
        char(*bufs)[256] = mtest_malloc(sizeof(*bufs) * (size_t)total);
        MPI_Request *rq = mtest_malloc(sizeof(MPI_Request) * (size_t)pre);
        MPI_Status *st = mtest_malloc(sizeof(MPI_Status) * (size_t)pre);
        reset_seq();
        for (int i = 0; i < pre; i++)
            MPI_CHECK(MPI_Irecv(bufs[i], 256, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &rq[i]));
        MPI_Barrier(MPI_COMM_WORLD); /* senders start now */
        MPI_CHECK(MPI_Waitall(pre, rq, st));
        /* matching happens in posting order: per source, seqs increase */
        for (int i = 0; i < pre; i++)
            check_msg(bufs[i], &st[i], 2, K);
        for (int i = pre; i < total; i++) {
            MPI_Status s1;
            MPI_CHECK(MPI_Recv(bufs[i], 256, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &s1));
            check_msg(bufs[i], &s1, 2, K);
        }
        check_complete(2, K);
        free(bufs);
        free(rq);
        free(st);
    } else {
        MPI_Barrier(MPI_COMM_WORLD);
        send_phase(2, K, rank % 2 == 0);
    }
}

/* Phase 3: wildcard receives interleaved with source-specific receives,
 * posted while the messages arrive; mixed small and large messages. */
static void phase3(void)
{
    const int K = 24;
    if (rank == 0) {
        int total = K * (size - 1);
        char **bufs = mtest_malloc(sizeof(char *) * (size_t)total);
        MPI_Request *rq = mtest_malloc(sizeof(MPI_Request) * (size_t)total);
        MPI_Status *st = mtest_malloc(sizeof(MPI_Status) * (size_t)total);
        int *specific = mtest_malloc(sizeof(int) * (size_t)size);
        reset_seq();
        /* The first receives alternate: one wildcard, then one for each
         * source explicitly, c = K/3 rounds; the rest are wildcards.  At most
         * c wildcards precede the last source-specific receive of any source
         * and c + c <= K, so every receive can be matched whatever the
         * arrival order. */
        const int c = K / 3;
        for (int i = 0; i < size; i++)
            specific[i] = 0;
        for (int i = 0; i < total; i++) {
            int src = MPI_ANY_SOURCE;
            if (i < c * size && i % size != 0) {
                src = i % size;
                specific[src]++;
            }
            bufs[i] = mtest_malloc(1048576);
            MPI_CHECK(MPI_Irecv(bufs[i], 1048576, MPI_BYTE, src, MPI_ANY_TAG, MPI_COMM_WORLD, &rq[i]));
            if (i == total / 3)
                MPI_Barrier(MPI_COMM_WORLD); /* senders start while we post */
        }
        MPI_CHECK(MPI_Waitall(total, rq, st));
        for (int i = 0; i < total; i++)
            check_msg(bufs[i], &st[i], 3, K);
        check_complete(3, K);
        for (int i = 0; i < total; i++)
            free(bufs[i]);
        free(bufs);
        free(rq);
        free(st);
        free(specific);
    } else {
        MPI_Barrier(MPI_COMM_WORLD);
        send_phase(3, K, rank % 2);
    }
}

/* Phase 4: ANY_SOURCE with a specific tag only: messages with other tags
 * must stay queued and be received afterwards. */
static void phase4(void)
{
    if (rank == 0) {
        int v[2];
        MPI_Status st;
        int *seen = mtest_malloc(sizeof(int) * (size_t)size);
        for (int i = 0; i < size; i++)
            seen[i] = 0;
        MPI_Barrier(MPI_COMM_WORLD);
        /* tag 2 messages first although tag 1 messages were sent first */
        for (int i = 1; i < size; i++) {
            MPI_CHECK(MPI_Recv(v, 2, MPI_INT, MPI_ANY_SOURCE, 2, MPI_COMM_WORLD, &st));
            CHECK(st.MPI_TAG == 2 && v[1] == 2 && v[0] == st.MPI_SOURCE,
                  "phase 4: tag-2 receive got tag %d payload %d/%d", st.MPI_TAG, v[0], v[1]);
            seen[st.MPI_SOURCE] |= 2;
        }
        for (int i = 1; i < size; i++) {
            MPI_CHECK(MPI_Recv(v, 2, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
            CHECK(st.MPI_TAG == 1 && v[1] == 1 && v[0] == st.MPI_SOURCE,
                  "phase 4: leftover receive got tag %d payload %d/%d", st.MPI_TAG, v[0], v[1]);
            seen[st.MPI_SOURCE] |= 1;
        }
        for (int i = 1; i < size; i++)
            CHECK(seen[i] == 3, "phase 4: source %d seen mask %d", i, seen[i]);
        free(seen);
    } else {
        int a[2] = { rank, 1 }, b[2] = { rank, 2 };
        MPI_Request rq[2];
        MPI_CHECK(MPI_Isend(a, 2, MPI_INT, 0, 1, MPI_COMM_WORLD, &rq[0]));
        MPI_CHECK(MPI_Isend(b, 2, MPI_INT, 0, 2, MPI_COMM_WORLD, &rq[1]));
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_CHECK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size >= 2, "needs at least 2 ranks, got %d", size);
    next_seq = mtest_malloc(sizeof(int) * (size_t)size);

    phase1();
    MPI_Barrier(MPI_COMM_WORLD);
    phase2();
    MPI_Barrier(MPI_COMM_WORLD);
    phase3();
    MPI_Barrier(MPI_COMM_WORLD);
    phase4();

    free(next_seq);
    return mtest_finalize();
}
