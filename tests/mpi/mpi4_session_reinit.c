/* Sessions one after another (MPI 4.1, the Sessions Model: "MPI resources can be allocated and
 * freed multiple times in an MPI process"): three rounds of MPI_Session_init -> a communicator
 * from mpi://WORLD -> traffic -> MPI_Session_finalize, each started after the previous one ended,
 * with no MPI_Init (MPICH's session_re_init / session_mult_init, Open MPI's sessions_test1/6).
 * A datatype made in the first round serves the later ones (MPI 4.1 allows it); a communicator
 * of the first round is left alive across the later sessions (its context id stays taken), does
 * not disturb them, and is freed in the last one.
 *
 *   mpi4_session_reinit          the three rounds, then the process ends without MPI_Finalize
 *                                (it must still exit 0, leaving nothing behind)
 *   mpi4_session_reinit world    the three rounds, then MPI_Init, traffic, MPI_Finalize
 *   mpi4_session_reinit final    MPI_Init, MPI_Finalize, then MPI_Session_init: refused clearly
 *                                (MPI_ERR_UNSUPPORTED_OPERATION, a message naming the call and
 *                                the reason), the one case Aptus cannot restart
 *   mpi4_session_reinit fail     after the first round, world rank 0 fails (exit 3) while the
 *                                others open the next session and wait for it: the job must end
 *                                with 3 at once, not hang in a shut-down at rank 0's exit */
#include <string.h>

#include "mtest.h"

#define ROUNDS 3

static void check_flags(int init, int fin, const char *when)
{
    int i = -1, f = -1;
    MPI_CHECK(MPI_Initialized(&i));
    MPI_CHECK(MPI_Finalized(&f));
    CHECK(i == init && f == fin, "%s: MPI_Initialized %d, MPI_Finalized %d (expected %d, %d)", when, i, f, init, fin);
}

/* Traffic over c: a ring exchange of `pair`s (the first round's datatype), an allreduce, a
 * message from every member to every other, a broadcast; tagged with the round. */
static void traffic(MPI_Comm c, MPI_Datatype pair, int round)
{
    int size, rank;
    MPI_CHECK(MPI_Comm_size(c, &size));
    MPI_CHECK(MPI_Comm_rank(c, &rank));
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int out[2] = { rank, round }, in[2] = { -1, -1 };
    MPI_CHECK(MPI_Sendrecv(out, 1, pair, right, round, in, 1, pair, left, round, c, MPI_STATUS_IGNORE));
    CHECK(in[0] == left && in[1] == round, "round %d: ring got (%d, %d), expected (%d, %d)", round, in[0], in[1], left,
          round);
    int sum = -1;
    MPI_CHECK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, c));
    CHECK(sum == size * (size - 1) / 2, "round %d: allreduce %d", round, sum);
    for (int k = 1; k < size; k++) { /* a message to every other member */
        int to = (rank + k) % size, from = (rank + size - k) % size, got = -1, v = 1000 * rank + round;
        MPI_CHECK(MPI_Sendrecv(&v, 1, MPI_INT, to, 100 + k, &got, 1, MPI_INT, from, 100 + k, c, MPI_STATUS_IGNORE));
        CHECK(got == 1000 * from + round, "round %d: got %d from %d", round, got, from);
    }
    int b[2] = { rank == 0 ? 1000 + round : -1, rank == 0 ? size : -1 };
    MPI_CHECK(MPI_Bcast(b, 1, pair, 0, c));
    CHECK(b[0] == 1000 + round && b[1] == size, "round %d: bcast (%d, %d)", round, b[0], b[1]);
}

static int wrank = -1; /* this process's rank in mpi://WORLD */

static void rounds(int first, int last)
{
    MPI_Datatype pair = MPI_DATATYPE_NULL;
    MPI_Comm leaked = MPI_COMM_NULL;
    for (int round = first; round <= last; round++) {
        MPI_Session s = MPI_SESSION_NULL;
        MPI_Info info = MPI_INFO_NULL;
        if (round == 2) { /* ask for a level once, take the default the other times */
            MPI_CHECK(MPI_Info_create(&info));
            MPI_CHECK(MPI_Info_set(info, "thread_level", "MPI_THREAD_MULTIPLE"));
        }
        int rc = MPI_Session_init(info, MPI_ERRORS_RETURN, &s);
        if (rc != MPI_SUCCESS)
            FAILF("round %d: MPI_Session_init failed: %s", round, mtest_errstr(rc));
        if (info != MPI_INFO_NULL)
            MPI_CHECK(MPI_Info_free(&info));
        check_flags(0, 0, "sessions only");
        if (round == first) {
            MPI_CHECK(MPI_Type_contiguous(2, MPI_INT, &pair));
            MPI_CHECK(MPI_Type_commit(&pair));
        }
        MPI_Group g;
        MPI_Comm c;
        MPI_CHECK(MPI_Group_from_session_pset(s, "mpi://WORLD", &g));
        MPI_CHECK(MPI_Group_rank(g, &wrank));
        MPI_CHECK(MPI_Comm_create_from_group(g, "org.aptus.test.reinit", MPI_INFO_NULL, MPI_ERRORS_RETURN, &c));
        traffic(c, pair, round);
        if (round == first && last > first) { /* a second communicator, alive when its session ends */
            MPI_CHECK(
                MPI_Comm_create_from_group(g, "org.aptus.test.leaked", MPI_INFO_NULL, MPI_ERRORS_RETURN, &leaked));
            traffic(leaked, pair, round);
        }
        if (round == last && round > first) /* freed two sessions later (finalizing frees no object) */
            MPI_CHECK(MPI_Comm_free(&leaked));
        MPI_CHECK(MPI_Group_free(&g));
        MPI_CHECK(MPI_Comm_free(&c));
        MPI_CHECK(MPI_Session_finalize(&s));
        CHECK(s == MPI_SESSION_NULL, "round %d: the session handle was not set to MPI_SESSION_NULL", round);
        check_flags(0, 0, "after a session");
    }
    MPI_CHECK(MPI_Type_free(&pair));
}

static void refused_after_finalize(void)
{
    MPI_CHECK(MPI_Init(NULL, NULL));
    MPI_CHECK(MPI_Finalize());
    MPI_Session s = MPI_SESSION_NULL;
    int rc = MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s);
    if (rc == MPI_SUCCESS) { /* what MPI allows: accepted too */
        CHECK(s != MPI_SESSION_NULL, "MPI_Session_init succeeded without a session");
        MPI_CHECK(MPI_Session_finalize(&s));
        return;
    }
    int cls = -1, len = 0;
    char msg[MPI_MAX_ERROR_STRING];
    MPI_CHECK(MPI_Error_class(rc, &cls));
    MPI_CHECK(MPI_Error_string(rc, msg, &len));
    CHECK(cls == MPI_ERR_UNSUPPORTED_OPERATION, "class %d, expected MPI_ERR_UNSUPPORTED_OPERATION (%s)", cls, msg);
    CHECK(strncmp(msg, "MPI_Session_init", 16) == 0 && strstr(msg, "MPI_Finalize"),
          "the message does not name the call and the reason: %s", msg);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    if (strcmp(mode, "final") == 0) {
        refused_after_finalize();
        return 0;
    }
    if (strcmp(mode, "fail") == 0) {
        rounds(1, 1);
        if (wrank == 0) {
            fprintf(stderr, "mpi4_session_reinit: rank 0 fails on purpose between two sessions\n");
            exit(3);
        }
        rounds(2, 2);
        FAILF("the second round completed without rank 0");
    }
    rounds(1, ROUNDS);
    if (strcmp(mode, "world") == 0) {
        MPI_CHECK(MPI_Init(&argc, &argv));
        check_flags(1, 0, "MPI_Init after the sessions");
        MPI_Datatype pair;
        MPI_CHECK(MPI_Type_contiguous(2, MPI_INT, &pair));
        MPI_CHECK(MPI_Type_commit(&pair));
        traffic(MPI_COMM_WORLD, pair, ROUNDS + 1);
        MPI_CHECK(MPI_Type_free(&pair));
        MPI_CHECK(MPI_Finalize());
        check_flags(1, 1, "MPI_Finalize");
    }
    printf("mpi4_session_reinit%s%s: OK\n", *mode ? " " : "", mode);
    return 0;
}
