/* Errors raised outside any communicator (here: MPI_Type_commit of MPI_DATATYPE_NULL and
 * MPI_Type_contiguous with a negative count) go to MPI_COMM_SELF's error handler (MPI 4.0), and
 * to MPI_COMM_WORLD's when the program set a handler only there, as programs written before
 * MPI 4.0 expect (MPICH's choice; documented in docs/DESIGN.md). */
#include "mtest.h"

static int calls;
static MPI_Comm seen;

static void handler(MPI_Comm *comm, int *code, ...)
{
    (void)code;
    calls++;
    seen = *comm;
}

static void raise_errors(void)
{
    MPI_Datatype t = MPI_DATATYPE_NULL;
    int rc = MPI_Type_commit(&t);
    CHECK(rc != MPI_SUCCESS, "MPI_Type_commit of MPI_DATATYPE_NULL succeeded");
    rc = MPI_Type_contiguous(-1, MPI_INT, &t);
    CHECK(rc != MPI_SUCCESS, "MPI_Type_contiguous with count -1 succeeded");
}

int main(int argc, char **argv)
{
    MPI_Errhandler eh;
    MPI_Init(&argc, &argv);
    MPI_CHECK(MPI_Comm_create_errhandler(handler, &eh));

    /* A handler only on MPI_COMM_WORLD (MPI_COMM_SELF keeps its default): WORLD's is called. */
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh));
    raise_errors();
    CHECK(calls == 2, "handler on MPI_COMM_WORLD only: called %d times, want 2", calls);
    CHECK(seen == MPI_COMM_WORLD, "handler on MPI_COMM_WORLD only: called for another communicator");

    /* MPICH 4.0.x still sends every error without a communicator to MPI_COMM_WORLD's handler
     * (the MPI-3 rule; MPI 4.0 names MPI_COMM_SELF's). */
    if (mtest_known_bug("errors_no_object_world")) {
        MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
        MPI_CHECK(MPI_Errhandler_free(&eh));
        MPI_Finalize();
        return 0;
    }
    /* Once MPI_COMM_SELF has a handler of its own, it is the one called. */
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_SELF, eh));
    calls = 0;
    seen = MPI_COMM_NULL;
    raise_errors();
    CHECK(calls == 2, "handler on MPI_COMM_SELF: called %d times, want 2", calls);
    CHECK(seen == MPI_COMM_SELF, "handler on MPI_COMM_SELF: called for another communicator");

    /* Both set: MPI_COMM_SELF's. */
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    calls = 0;
    seen = MPI_COMM_NULL;
    raise_errors();
    CHECK(calls == 2 && seen == MPI_COMM_SELF, "handlers on both: SELF's called %d times", calls);

    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL));
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    MPI_CHECK(MPI_Errhandler_free(&eh));
    MPI_Finalize();
    return 0;
}
