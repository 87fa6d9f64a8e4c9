/* Probing MPI_PROC_NULL (MPI_Probe, MPI_Iprobe, MPI_Mprobe, MPI_Improbe) returns source
 * MPI_PROC_NULL, tag MPI_ANY_TAG and count 0, and, like every call that takes a single status,
 * leaves the status's MPI_ERROR field alone (it is set only by the calls that return
 * MPI_ERR_IN_STATUS). The same for MPI_Mrecv of MPI_MESSAGE_NO_PROC and, as a reference, for
 * MPI_Recv from MPI_PROC_NULL. */
#include "mtest.h"

#define SENTINEL 4242

static void check_null_status(const MPI_Status *st, const char *what)
{
    mtest_check_null_status(st, what);
    CHECK(st->MPI_ERROR == SENTINEL, "%s: MPI_ERROR overwritten with %d", what, st->MPI_ERROR);
}

static void fresh(MPI_Status *st)
{
    memset(st, 0x5a, sizeof *st);
    st->MPI_ERROR = SENTINEL;
}

int main(int argc, char **argv)
{
    MPI_Status st;
    MPI_Message m;
    int flag, buf = 0;
    MPI_Init(&argc, &argv);

    fresh(&st);
    MPI_CHECK(MPI_Recv(&buf, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st));
    check_null_status(&st, "MPI_Recv from MPI_PROC_NULL");

    fresh(&st);
    MPI_CHECK(MPI_Probe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st));
    check_null_status(&st, "MPI_Probe(MPI_PROC_NULL)");

    fresh(&st);
    flag = 0;
    MPI_CHECK(MPI_Iprobe(MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
    CHECK(flag, "MPI_Iprobe(MPI_PROC_NULL): flag false");
    check_null_status(&st, "MPI_Iprobe(MPI_PROC_NULL)");

    fresh(&st);
    MPI_CHECK(MPI_Mprobe(MPI_PROC_NULL, 1, MPI_COMM_WORLD, &m, &st));
    CHECK(m == MPI_MESSAGE_NO_PROC, "MPI_Mprobe(MPI_PROC_NULL): message is not MPI_MESSAGE_NO_PROC");
    check_null_status(&st, "MPI_Mprobe(MPI_PROC_NULL)");
    fresh(&st);
    MPI_CHECK(MPI_Mrecv(&buf, 1, MPI_INT, &m, &st));
    CHECK(m == MPI_MESSAGE_NULL, "MPI_Mrecv: message not set to MPI_MESSAGE_NULL");
    check_null_status(&st, "MPI_Mrecv(MPI_MESSAGE_NO_PROC)");

    fresh(&st);
    flag = 0;
    MPI_CHECK(MPI_Improbe(MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &m, &st));
    CHECK(flag && m == MPI_MESSAGE_NO_PROC, "MPI_Improbe(MPI_PROC_NULL): flag %d", flag);
    check_null_status(&st, "MPI_Improbe(MPI_PROC_NULL)");
    MPI_Request r;
    MPI_CHECK(MPI_Imrecv(&buf, 1, MPI_INT, &m, &r));
    fresh(&st);
    MPI_CHECK(MPI_Wait(&r, &st));
    check_null_status(&st, "MPI_Wait on MPI_Imrecv(MPI_MESSAGE_NO_PROC)");

    return mtest_finalize();
}
