/* The tool interface's performance variables (MPI 4.1 section 15.3.7), on 3 ranks of a node:
 * - per-peer, per-channel messages and bytes (peer.msgs.smp, an element per world rank; comm.*
 *   bound to a communicator whose ranks are in the reverse order; channel.*): exactly the messages
 *   this test sends between a start and a stop;
 * - a counter's session semantics: stopped it does not count, started again it adds, reset is 0,
 *   readreset reads and zeroes, write sets; two sessions count apart;
 * - the matching queues: pt2pt.unexpected and pt2pt.posted are the queues' lengths at the moment,
 *   their high-water marks at least that and never reset;
 * - every variable listed, found by name and class, and read;
 * - bad input: continuous variables cannot be started (MPI_T_ERR_PVAR_NO_STARTSTOP), read-only
 *   ones written or reset (MPI_T_ERR_PVAR_NO_WRITE) or read-and-reset (MPI_T_ERR_PVAR_NO_ATOMIC),
 *   a handle of another session or a freed session is refused, a comm-bound variable without a
 *   communicator is refused. */
#include <string.h>

#include "mtest.h"

static int rank, size;

static int pvar(const char *name, int cls)
{
    int i = -1;
    TCHECK(MPI_T_pvar_get_index(name, cls, &i), MPI_SUCCESS);
    return i;
}

static MPI_T_pvar_handle alloc(MPI_T_pvar_session s, const char *name, int cls, void *obj, int want_count)
{
    MPI_T_pvar_handle h;
    int count = -1;
    TCHECK(MPI_T_pvar_handle_alloc(s, pvar(name, cls), obj, &h, &count), MPI_SUCCESS);
    CHECK(count == want_count, "%s: count %d, expected %d", name, count, want_count);
    return h;
}

static unsigned long long read1(MPI_T_pvar_session s, MPI_T_pvar_handle h)
{
    unsigned long long v = ~0ull;
    TCHECK(MPI_T_pvar_read(s, h, &v), MPI_SUCCESS);
    return v;
}

/* Rank 0 sends n messages of len bytes to rank 2 (smp), rank 2 receives them. */
static void traffic(int n, int len)
{
    char buf[4096];
    memset(buf, rank, sizeof buf);
    for (int k = 0; k < n; k++) {
        if (rank == 0)
            MPI_Send(buf, len, MPI_BYTE, 2, 7, MPI_COMM_WORLD);
        else if (rank == 2)
            MPI_Recv(buf, len, MPI_BYTE, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size == 3, "run on 3 ranks");
    TCHECK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided), MPI_SUCCESS);

    /* every variable: listed, found by name and class, read */
    int n = 0;
    TCHECK(MPI_T_pvar_get_num(&n), MPI_SUCCESS);
    CHECK(n > 50, "only %d performance variables", n);
    MPI_T_pvar_session all;
    TCHECK(MPI_T_pvar_session_create(&all), MPI_SUCCESS);
    for (int i = 0; i < n; i++) {
        char name[64], desc[512];
        int nlen = sizeof name, dlen = sizeof desc, verb, cls, bind, ro, cont, atomic;
        MPI_Datatype dt;
        MPI_T_enum en;
        TCHECK(MPI_T_pvar_get_info(i, name, &nlen, &verb, &cls, &dt, &en, desc, &dlen, &bind, &ro, &cont, &atomic),
               MPI_SUCCESS);
        CHECK(dt == MPI_UNSIGNED_LONG_LONG && dlen > 10, "pvar %s: datatype or description", name);
        CHECK(pvar(name, cls) == i, "pvar %s: lookup", name);
        int other = cls == MPI_T_PVAR_CLASS_COUNTER ? MPI_T_PVAR_CLASS_LEVEL : MPI_T_PVAR_CLASS_COUNTER, j;
        TCHECK(MPI_T_pvar_get_index(name, other, &j), MPI_T_ERR_INVALID_NAME);
        CHECK(cls != MPI_T_PVAR_CLASS_COUNTER || (!ro && !cont && atomic), "counter %s: flags %d %d %d", name, ro, cont,
              atomic);
        CHECK(cls == MPI_T_PVAR_CLASS_COUNTER || (ro && cont), "%s: flags %d %d", name, ro, cont);
        MPI_Comm world = MPI_COMM_WORLD;
        MPI_T_pvar_handle h;
        int count;
        TCHECK(MPI_T_pvar_handle_alloc(all, i, bind == MPI_T_BIND_MPI_COMM ? (void *)&world : NULL, &h, &count),
               MPI_SUCCESS);
        unsigned long long v[8];
        CHECK(count >= 1 && count <= 8, "pvar %s count %d", name, count);
        TCHECK(MPI_T_pvar_read(all, h, v), MPI_SUCCESS);
        if (cls == MPI_T_PVAR_CLASS_COUNTER) {
            for (int k = 0; k < count; k++)
                CHECK(v[k] == 0, "counter %s element %d is %llu before its start", name, k, v[k]);
            TCHECK(MPI_T_pvar_readreset(all, h, v), MPI_SUCCESS);
        } else {
            TCHECK(MPI_T_pvar_start(all, h), MPI_T_ERR_PVAR_NO_STARTSTOP);
            TCHECK(MPI_T_pvar_stop(all, h), MPI_T_ERR_PVAR_NO_STARTSTOP);
            TCHECK(MPI_T_pvar_write(all, h, v), MPI_T_ERR_PVAR_NO_WRITE);
            TCHECK(MPI_T_pvar_reset(all, h), MPI_T_ERR_PVAR_NO_WRITE);
            TCHECK(MPI_T_pvar_readreset(all, h, v), MPI_T_ERR_PVAR_NO_ATOMIC);
        }
        TCHECK(MPI_T_pvar_handle_free(all, &h), MPI_SUCCESS);
    }
    /* MPI_T_PVAR_ALL_HANDLES starts the counters and skips the rest */
    MPI_T_pvar_handle hl = alloc(all, "pt2pt.unexpected", MPI_T_PVAR_CLASS_LEVEL, NULL, 1);
    MPI_T_pvar_handle hc = alloc(all, "channel.msgs.smp", MPI_T_PVAR_CLASS_COUNTER, NULL, 1);
    TCHECK(MPI_T_pvar_start(all, MPI_T_PVAR_ALL_HANDLES), MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);

    /* per-peer counts, exact */
    MPI_T_pvar_session s1, s2;
    TCHECK(MPI_T_pvar_session_create(&s1), MPI_SUCCESS);
    TCHECK(MPI_T_pvar_session_create(&s2), MPI_SUCCESS);
    MPI_Comm rev;
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &rev); /* comm rank = 2 - world rank */
    MPI_T_pvar_handle pm = alloc(s1, "peer.msgs.smp", MPI_T_PVAR_CLASS_COUNTER, NULL, size);
    MPI_T_pvar_handle pb = alloc(s1, "peer.bytes.smp", MPI_T_PVAR_CLASS_COUNTER, NULL, size);
    MPI_T_pvar_handle cm = alloc(s1, "comm.msgs.smp", MPI_T_PVAR_CLASS_COUNTER, &rev, size);
    MPI_T_pvar_handle other = alloc(s2, "peer.msgs.smp", MPI_T_PVAR_CLASS_COUNTER, NULL, size);
    MPI_Barrier(MPI_COMM_WORLD);
    TCHECK(MPI_T_pvar_start(s1, MPI_T_PVAR_ALL_HANDLES), MPI_SUCCESS);
    traffic(10, 100);
    TCHECK(MPI_T_pvar_stop(s1, pm), MPI_SUCCESS);
    TCHECK(MPI_T_pvar_stop(s1, pb), MPI_SUCCESS);
    TCHECK(MPI_T_pvar_stop(s1, cm), MPI_SUCCESS);
    unsigned long long m[3], b[3], c[3];
    TCHECK(MPI_T_pvar_read(s1, pm, m), MPI_SUCCESS);
    TCHECK(MPI_T_pvar_read(s1, pb, b), MPI_SUCCESS);
    TCHECK(MPI_T_pvar_read(s1, cm, c), MPI_SUCCESS);
    for (int r = 0; r < 3; r++) {
        unsigned long long want = rank == 0 && r == 2 ? 10 : 0;
        CHECK(m[r] == want, "peer.msgs.smp[%d] = %llu, expected %llu", r, m[r], want);
        CHECK(b[r] == want * 100, "peer.bytes.smp[%d] = %llu, expected %llu", r, b[r], want * 100);
        CHECK(c[2 - r] == want, "comm.msgs.smp[%d] (world rank %d) = %llu, expected %llu", 2 - r, r, c[2 - r], want);
    }
    /* stopped: no count */
    traffic(5, 10);
    TCHECK(MPI_T_pvar_read(s1, pm, m), MPI_SUCCESS);
    CHECK(m[2] == (rank == 0 ? 10u : 0u), "a stopped handle counted: %llu", m[2]);
    /* started again: adds */
    TCHECK(MPI_T_pvar_start(s1, pm), MPI_SUCCESS);
    traffic(3, 10);
    TCHECK(MPI_T_pvar_read(s1, pm, m), MPI_SUCCESS);
    CHECK(m[2] == (rank == 0 ? 13u : 0u), "restarted: %llu, expected 13", m[2]);
    /* the other session never started its handle: 0 */
    TCHECK(MPI_T_pvar_read(s2, other, m), MPI_SUCCESS);
    CHECK(m[2] == 0, "another session's handle counted %llu", m[2]);
    /* readreset, reset, write */
    TCHECK(MPI_T_pvar_readreset(s1, pm, m), MPI_SUCCESS);
    CHECK(m[2] == (rank == 0 ? 13u : 0u), "readreset read %llu", m[2]);
    TCHECK(MPI_T_pvar_read(s1, pm, m), MPI_SUCCESS);
    CHECK(m[2] == 0, "after readreset: %llu", m[2]);
    traffic(2, 10);
    unsigned long long w[3] = { 100, 200, 300 };
    TCHECK(MPI_T_pvar_write(s1, pm, w), MPI_SUCCESS);
    traffic(1, 10);
    TCHECK(MPI_T_pvar_read(s1, pm, m), MPI_SUCCESS);
    CHECK(m[0] == 100 && m[1] == 200 && m[2] == 300u + (rank == 0), "after a write: %llu %llu %llu", m[0], m[1], m[2]);
    TCHECK(MPI_T_pvar_reset(s1, pm), MPI_SUCCESS);
    TCHECK(MPI_T_pvar_read(s1, pm, m), MPI_SUCCESS);
    CHECK(m[0] == 0 && m[1] == 0 && m[2] == 0, "after a reset");
    /* a handle of another kind, and of another session */
    TCHECK(MPI_T_cvar_read((MPI_T_cvar_handle)(void *)pm, m), MPI_T_ERR_INVALID_HANDLE);
    TCHECK(MPI_T_pvar_read(s1, (MPI_T_pvar_handle)(void *)s2, m), MPI_T_ERR_INVALID_HANDLE);
    TCHECK(MPI_T_pvar_read(s2, pm, m), MPI_T_ERR_INVALID_HANDLE);
    TCHECK(MPI_T_pvar_handle_free(s2, &pm), MPI_T_ERR_INVALID_HANDLE);

    /* the queues: rank 1 leaves 6 messages of rank 0 unexpected, then posts 4 receives */
    MPI_T_pvar_handle uq = alloc(s1, "pt2pt.unexpected", MPI_T_PVAR_CLASS_LEVEL, NULL, 1);
    MPI_T_pvar_handle uh = alloc(s1, "pt2pt.unexpected_hwm", MPI_T_PVAR_CLASS_HIGHWATERMARK, NULL, 1);
    MPI_T_pvar_handle pq = alloc(s1, "pt2pt.posted", MPI_T_PVAR_CLASS_LEVEL, NULL, 1);
    MPI_T_pvar_handle ph = alloc(s1, "pt2pt.posted_hwm", MPI_T_PVAR_CLASS_HIGHWATERMARK, NULL, 1);
    int v[6] = { 0 }, go = 1;
    if (rank == 0) {
        for (int k = 0; k < 6; k++)
            MPI_Send(&k, 1, MPI_INT, 1, 20 + k, MPI_COMM_WORLD);
        MPI_Recv(&go, 1, MPI_INT, 1, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (rank == 1) {
        /* (the six are in once the last is: one sender's messages arrive in order; nothing else is
         * sent to this rank until it says go) */
        int flag = 0;
        while (!flag)
            MPI_Iprobe(0, 25, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        CHECK(read1(s1, uq) == 6, "pt2pt.unexpected = %llu, expected 6", read1(s1, uq));
        CHECK(read1(s1, uh) >= 6, "pt2pt.unexpected_hwm = %llu", read1(s1, uh));
        for (int k = 0; k < 6; k++)
            MPI_Recv(&v[k], 1, MPI_INT, 0, 20 + k, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK(read1(s1, uq) == 0, "pt2pt.unexpected = %llu after the receives", read1(s1, uq));
        CHECK(read1(s1, uh) >= 6, "the high-water mark fell: %llu", read1(s1, uh));
        MPI_Request rq[4];
        for (int k = 0; k < 4; k++)
            MPI_Irecv(&v[k], 1, MPI_INT, 2, 40 + k, MPI_COMM_WORLD, &rq[k]);
        CHECK(read1(s1, pq) == 4, "pt2pt.posted = %llu, expected 4", read1(s1, pq));
        CHECK(read1(s1, ph) >= 4, "pt2pt.posted_hwm = %llu", read1(s1, ph));
        MPI_Send(&go, 1, MPI_INT, 0, 99, MPI_COMM_WORLD);
        MPI_Send(&go, 1, MPI_INT, 2, 99, MPI_COMM_WORLD);
        MPI_Waitall(4, rq, MPI_STATUSES_IGNORE);
        CHECK(read1(s1, pq) == 0, "pt2pt.posted = %llu after the waits", read1(s1, pq));
        CHECK(read1(s1, ph) >= 4, "posted high-water mark fell: %llu", read1(s1, ph));
        for (int k = 0; k < 4; k++)
            CHECK(v[k] == 40 + k, "v[%d] = %d", k, v[k]);
    } else {
        MPI_Recv(&go, 1, MPI_INT, 1, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int k = 0; k < 4; k++) {
            int x = 40 + k;
            MPI_Send(&x, 1, MPI_INT, 1, 40 + k, MPI_COMM_WORLD);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* the ALL_HANDLES session: the counter counted this rank's smp messages */
    /* (the level itself is not checked here: a rank ahead may already have sent its part of the
     * next collective, which is then unexpected here) */
    CHECK(read1(all, hl) < 100, "pt2pt.unexpected = %llu", read1(all, hl));
    CHECK(read1(all, hc) >= 27 || rank != 0, "channel.msgs.smp counted %llu on rank 0 (at least 27 sent)",
          read1(all, hc));

    /* bad input */
    MPI_T_pvar_handle h;
    int count;
    TCHECK(MPI_T_pvar_handle_alloc(s1, pvar("comm.msgs.smp", MPI_T_PVAR_CLASS_COUNTER), NULL, &h, &count),
           MPI_T_ERR_INVALID_HANDLE);
    TCHECK(MPI_T_pvar_handle_alloc(s1, n, NULL, &h, &count), MPI_T_ERR_INVALID_INDEX);
    TCHECK(MPI_T_pvar_get_info(-1, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
           MPI_T_ERR_INVALID_INDEX);
    int j;
    TCHECK(MPI_T_pvar_get_index("no.such.variable", MPI_T_PVAR_CLASS_COUNTER, &j), MPI_T_ERR_INVALID_NAME);
    TCHECK(MPI_T_pvar_read(s1, MPI_T_PVAR_ALL_HANDLES, m), MPI_T_ERR_INVALID_HANDLE);
    MPI_T_pvar_session gone = s2;
    TCHECK(MPI_T_pvar_session_free(&s2), MPI_SUCCESS);
    CHECK(s2 == MPI_T_PVAR_SESSION_NULL, "session not nulled");
    TCHECK(MPI_T_pvar_read(gone, other, m), MPI_T_ERR_INVALID_SESSION);
    TCHECK(MPI_T_pvar_session_free(&gone), MPI_T_ERR_INVALID_SESSION);
    TCHECK(MPI_T_pvar_handle_free(s1, &cm), MPI_SUCCESS);
    CHECK(cm == MPI_T_PVAR_HANDLE_NULL, "handle not nulled");
    TCHECK(MPI_T_pvar_session_free(&s1), MPI_SUCCESS);
    TCHECK(MPI_T_pvar_session_free(&all), MPI_SUCCESS);

    MPI_Comm_free(&rev);
    TCHECK(MPI_T_finalize(), MPI_SUCCESS);
    MPI_Finalize();
    if (rank == 0)
        printf("mpit_pvar: OK (%d performance variables)\n", n);
    return 0;
}
