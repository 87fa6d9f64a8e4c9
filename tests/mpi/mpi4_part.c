/* MPI-4 partitioned communication: MPI_Psend_init / MPI_Precv_init started by MPI_Start(all),
 * partitions marked ready one by one, by range and by list, in any order, over several rounds;
 * MPI_Parrived; different partitionings on the two sides; partitioned messages never match
 * ordinary receives; MPI_PROC_NULL; bad partition numbers and inactive requests.
 * Ranks are paired (0-1, 2-3, ...); an odd last rank (and a single rank) sends to itself. */
#include <limits.h>

#include "mtest.h"

#define NPART 8
#define PER   100 /* ints per send partition */

static void round_trip(MPI_Comm comm, int peer, int round, int sender, int receiver)
{
    static int sbuf[NPART * PER], rbuf[NPART * PER];
    MPI_Request sreq = MPI_REQUEST_NULL, rreq = MPI_REQUEST_NULL;
    /* the receiver uses 4 partitions of twice the size: the same message */
    if (receiver)
        MPI_CHECK(MPI_Precv_init(rbuf, NPART / 2, 2 * PER, MPI_INT, peer, 5, comm, MPI_INFO_NULL, &rreq));
    if (sender)
        MPI_CHECK(MPI_Psend_init(sbuf, NPART, PER, MPI_INT, peer, 5, comm, MPI_INFO_NULL, &sreq));
    for (int it = 0; it < 3; it++) {
        int base = round * 1000000 + it * 10000;
        if (receiver) {
            for (int i = 0; i < NPART * PER; i++)
                rbuf[i] = -1;
            MPI_CHECK(MPI_Start(&rreq));
        }
        if (sender) {
            MPI_CHECK(MPI_Start(&sreq));
            /* fill and mark the partitions in reverse order, by different calls */
            for (int p = NPART - 1; p >= 0; p--) {
                for (int i = 0; i < PER; i++)
                    sbuf[p * PER + i] = base + p * PER + i;
                if (p >= NPART - 2)
                    MPI_CHECK(MPI_Pready(p, sreq));
                else if (p == 3) {
                    MPI_CHECK(MPI_Pready_range(3, 5, sreq));
                } else if (p == 0) {
                    int list[3] = { 2, 0, 1 };
                    MPI_CHECK(MPI_Pready_list(3, list, sreq));
                }
            }
        }
        if (receiver) {
            /* wait partition by partition with MPI_Parrived; each one's data must be in place */
            int arrived[NPART / 2] = { 0 }, left = NPART / 2;
            while (left > 0) {
                for (int p = 0; p < NPART / 2; p++) {
                    if (arrived[p])
                        continue;
                    int flag = 0;
                    MPI_CHECK(MPI_Parrived(rreq, p, &flag));
                    if (!flag)
                        continue;
                    for (int i = 0; i < 2 * PER; i++)
                        CHECK(rbuf[p * 2 * PER + i] == base + p * 2 * PER + i,
                              "round %d.%d: partition %d element %d is %d, expected %d", round, it, p, i,
                              rbuf[p * 2 * PER + i], base + p * 2 * PER + i);
                    arrived[p] = 1;
                    left--;
                }
                if (sender) /* sending to oneself: the send side must progress too */
                    MPI_CHECK(MPI_Test(&sreq, &(int){ 0 }, MPI_STATUS_IGNORE));
            }
            MPI_Status st;
            MPI_CHECK(MPI_Wait(&rreq, &st));
            int count = -1;
            MPI_CHECK(MPI_Get_count(&st, MPI_INT, &count));
            CHECK(count == NPART * PER, "receive status count %d", count);
#ifndef MPICH_VERSION /* MPI 4.1; MPICH 4.0.2 (MPI 4.0) refuses inactive and null requests */
            /* inactive again: MPI_Parrived says true, the request stays */
            int flag = 0;
            MPI_CHECK(MPI_Parrived(rreq, 0, &flag));
            CHECK(flag, "MPI_Parrived on the inactive request must say true");
            MPI_Request null = MPI_REQUEST_NULL;
            flag = 0;
            MPI_CHECK(MPI_Parrived(null, 0, &flag));
            CHECK(flag, "MPI_Parrived on MPI_REQUEST_NULL must say true");
#endif
        }
        if (sender)
            MPI_CHECK(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
    }
    if (sender)
        MPI_CHECK(MPI_Request_free(&sreq));
    if (receiver)
        MPI_CHECK(MPI_Request_free(&rreq));
}

/* Ordinary and partitioned messages with the same source and tag do not match each other. */
static void separate_matching(MPI_Comm comm, int peer, int sender, int receiver)
{
    int pdata[4] = { 11, 12, 13, 14 }, odata[4] = { 21, 22, 23, 24 }, pin[4] = { 0 }, oin[4] = { 0 };
    MPI_Request rq[4];
    int n = 0;
    if (receiver) {
        MPI_CHECK(MPI_Irecv(oin, 4, MPI_INT, peer, 9, comm, &rq[n++]));
        MPI_CHECK(MPI_Precv_init(pin, 1, 4, MPI_INT, peer, 9, comm, MPI_INFO_NULL, &rq[n]));
        MPI_CHECK(MPI_Start(&rq[n++]));
    }
    if (sender) {
        MPI_CHECK(MPI_Psend_init(pdata, 2, 2, MPI_INT, peer, 9, comm, MPI_INFO_NULL, &rq[n]));
        MPI_CHECK(MPI_Startall(1, &rq[n]));
        MPI_CHECK(MPI_Pready_range(0, 1, rq[n++]));
        MPI_CHECK(MPI_Isend(odata, 4, MPI_INT, peer, 9, comm, &rq[n++]));
    }
    MPI_CHECK(MPI_Waitall(n, rq, MPI_STATUSES_IGNORE));
    if (receiver)
        for (int i = 0; i < 4; i++)
            CHECK(pin[i] == pdata[i] && oin[i] == odata[i], "element %d: partitioned %d, ordinary %d", i, pin[i],
                  oin[i]);
    for (int i = 0; i < n; i++)
        if (rq[i] != MPI_REQUEST_NULL)
            MPI_CHECK(MPI_Request_free(&rq[i]));
}

/* rc must be an error of class cls. */
static void expect_class(int rc, int cls, const char *what)
{
    int got = MPI_SUCCESS;
    if (rc != MPI_SUCCESS)
        MPI_CHECK(MPI_Error_class(rc, &got));
#ifdef MPICH_VERSION /* MPICH 4.0.2 refuses these with another class (MPI_ERR_INTERN) */
    if (cls == MPI_ERR_REQUEST && got != MPI_SUCCESS)
        return;
#endif
    CHECK(got == cls, "%s: class %d, expected %d", what, got, cls);
}

/* Bad partition numbers and inactive requests, on a self-message over `self` (a one-process
 * communicator); then MPI_PROC_NULL. */
static void errors(MPI_Comm self)
{
    int sbuf[8] = { 1, 2, 3, 4, 5, 6, 7, 8 }, rbuf[8] = { 0 };
    MPI_Request s, r;
    MPI_CHECK(MPI_Comm_set_errhandler(self, MPI_ERRORS_RETURN));
    /* the errors belong to the request's communicator; MPICH 4.0.2 raises them elsewhere */
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_CHECK(MPI_Psend_init(sbuf, 4, 2, MPI_INT, 0, 0, self, MPI_INFO_NULL, &s));
    MPI_CHECK(MPI_Precv_init(rbuf, 4, 2, MPI_INT, 0, 0, self, MPI_INFO_NULL, &r));
    CHECK(MPI_Pready(0, s) != MPI_SUCCESS, "MPI_Pready before MPI_Start must fail");
    MPI_CHECK(MPI_Start(&s));
    MPI_CHECK(MPI_Start(&r));
    /* freeing or cancelling an active partitioned request is erroneous (MPI 4.1): refused with
     * MPI_ERR_REQUEST, and the requests stay as they were (they complete below) */
    MPI_Request s0 = s, r0 = r;
    expect_class(MPI_Cancel(&s), MPI_ERR_REQUEST, "MPI_Cancel of an active partitioned send");
    expect_class(MPI_Cancel(&r), MPI_ERR_REQUEST, "MPI_Cancel of an active partitioned receive");
#ifndef MPICH_VERSION /* MPICH 4.0.2 frees them (success, the handles become MPI_REQUEST_NULL) */
    expect_class(MPI_Request_free(&s), MPI_ERR_REQUEST, "MPI_Request_free of an active partitioned send");
    expect_class(MPI_Request_free(&r), MPI_ERR_REQUEST, "MPI_Request_free of an active partitioned receive");
#endif
    CHECK(s == s0 && r == r0, "a refused MPI_Request_free changed the handle");
    CHECK(MPI_Pready(4, s) != MPI_SUCCESS, "MPI_Pready of partition 4 of 4 must fail");
    CHECK(MPI_Pready(-1, s) != MPI_SUCCESS, "MPI_Pready of partition -1 must fail");
    CHECK(MPI_Pready_range(2, 9, s) != MPI_SUCCESS, "MPI_Pready_range beyond the partitions must fail");
    /* a range whose length does not fit an int is refused, not taken for an empty one */
    int rc = MPI_Pready_range(-1, INT_MAX, s), cls = MPI_SUCCESS;
    if (rc != MPI_SUCCESS)
        MPI_CHECK(MPI_Error_class(rc, &cls));
    CHECK(cls == MPI_ERR_ARG, "MPI_Pready_range(-1, INT_MAX): class %d, expected MPI_ERR_ARG", cls);
    int bad[2] = { 1, 7 };
    CHECK(MPI_Pready_list(2, bad, s) != MPI_SUCCESS, "MPI_Pready_list with partition 7 of 4 must fail");
    CHECK(MPI_Parrived(r, 4, &(int){ 0 }) != MPI_SUCCESS, "MPI_Parrived of partition 4 of 4 must fail");
    CHECK(MPI_Pready(0, r) != MPI_SUCCESS, "MPI_Pready on a receive request must fail");
    MPI_CHECK(MPI_Pready_range(0, 3, s));
    MPI_CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE));
#ifndef MPICH_VERSION /* MPICH 4.0.2 refuses to cancel a partitioned request */
    /* the send's operation is over (its receive completed): a cancel is allowed and does
     * nothing -- the send completes as it was */
    MPI_Status sst;
    int cancelled = 1;
    MPI_CHECK(MPI_Cancel(&s));
    MPI_CHECK(MPI_Wait(&s, &sst));
    MPI_CHECK(MPI_Test_cancelled(&sst, &cancelled));
    CHECK(!cancelled, "a finished partitioned send said cancelled");
#else
    MPI_CHECK(MPI_Wait(&s, MPI_STATUS_IGNORE));
#endif
    for (int i = 0; i < 8; i++)
        CHECK(rbuf[i] == sbuf[i], "element %d: %d", i, rbuf[i]);
    CHECK(MPI_Pready(0, s) != MPI_SUCCESS, "MPI_Pready after the request completed must fail");
    MPI_CHECK(MPI_Request_free(&s));
    MPI_CHECK(MPI_Request_free(&r));
#ifndef MPICH_VERSION /* MPICH 4.0.2 crashes in MPI_Psend_init to MPI_PROC_NULL */
    MPI_CHECK(MPI_Psend_init(sbuf, 4, 2, MPI_INT, MPI_PROC_NULL, 0, self, MPI_INFO_NULL, &s));
    MPI_CHECK(MPI_Precv_init(rbuf, 4, 2, MPI_INT, MPI_PROC_NULL, 0, self, MPI_INFO_NULL, &r));
    MPI_Request both[2] = { s, r };
    MPI_CHECK(MPI_Startall(2, both));
    MPI_CHECK(MPI_Pready_range(0, 3, s));
    MPI_Status st[2];
    MPI_CHECK(MPI_Waitall(2, both, st));
    CHECK(st[1].MPI_SOURCE == MPI_PROC_NULL, "receive from MPI_PROC_NULL: source %d", st[1].MPI_SOURCE);
    MPI_CHECK(MPI_Request_free(&s));
    MPI_CHECK(MPI_Request_free(&r));
#endif
    /* once its operation has finished, an active request can be freed before the wait that would
     * complete it (Open MPI's test_order0 does so) */
    MPI_CHECK(MPI_Psend_init(sbuf, 4, 2, MPI_INT, 0, 1, self, MPI_INFO_NULL, &s));
    MPI_CHECK(MPI_Precv_init(rbuf, 4, 2, MPI_INT, 0, 1, self, MPI_INFO_NULL, &r));
    MPI_CHECK(MPI_Start(&r));
    MPI_CHECK(MPI_Start(&s));
    MPI_CHECK(MPI_Pready_range(0, 3, s));
    for (int p = 0; p < 4; p++) {
        int flag = 0;
        while (!flag)
            MPI_CHECK(MPI_Parrived(r, p, &flag));
    }
    for (int i = 0; i < 8; i++)
        CHECK(rbuf[i] == sbuf[i], "element %d: %d", i, rbuf[i]);
    MPI_CHECK(MPI_Request_free(&r));
    MPI_CHECK(MPI_Request_free(&s));
    CHECK(r == MPI_REQUEST_NULL && s == MPI_REQUEST_NULL, "MPI_Request_free did not set the handles to null");
    MPI_CHECK(MPI_Comm_set_errhandler(self, MPI_ERRORS_ARE_FATAL));
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL));
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    int rank, size;
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    int peer = rank ^ 1;
    if (peer >= size)
        peer = rank;
    MPI_Comm dup;
    MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    for (int round = 0; round < 2; round++) {
        /* round 0: the lower rank sends; round 1: the other way */
        int sender = peer == rank || (round == 0 ? rank < peer : rank > peer);
        int receiver = peer == rank || !sender;
        round_trip(round ? dup : MPI_COMM_WORLD, peer, round, sender, receiver);
        separate_matching(MPI_COMM_WORLD, peer, sender, receiver);
    }
    MPI_Comm self;
    MPI_CHECK(MPI_Comm_dup(MPI_COMM_SELF, &self));
    errors(self);
    MPI_CHECK(MPI_Comm_free(&self));
    MPI_CHECK(MPI_Comm_free(&dup));
    MPI_CHECK(MPI_Finalize());
    if (rank == 0)
        printf("mpi4_part: OK (%d processes)\n", size);
    return 0;
}
