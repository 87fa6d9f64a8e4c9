/* The start-up check of the configuration (docs/TUNING.md, "Value syntax"): a tiny program that
 * starts MPI, passes a message around a ring of all ranks and a barrier, and finishes. Under a
 * value out of its range the start-up must refuse it (the test expects the message and a non-zero
 * exit); with values at the ends of their ranges it must run.
 *
 *   config_ranges [session] [R:VAR=VALUE]...
 *
 * session: start with MPI_Session_init (MPI_ERRORS_RETURN) and a communicator from the
 * session's world group, instead of MPI_Init; a refused start-up then exits with 3.
 * R:VAR=VALUE: rank R (PMI_RANK, which the launcher sets) puts VAR=VALUE in its environment
 * before starting MPI -- a setting only some ranks are given. */
#include "mtest.h"

int main(int argc, char **argv)
{
    int use_session = 0;
    const char *pmi_rank = getenv("PMI_RANK");
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "session") == 0) {
            use_session = 1;
            continue;
        }
        char *colon = strchr(argv[i], ':');
        CHECK(colon && strchr(colon, '='), "argument '%s' is not R:VAR=VALUE", argv[i]);
        if (pmi_rank && (size_t)(colon - argv[i]) == strlen(pmi_rank) && !strncmp(argv[i], pmi_rank, strlen(pmi_rank)))
            CHECK(putenv(colon + 1) == 0, "putenv %s", colon + 1);
    }

    MPI_Session session = MPI_SESSION_NULL;
    MPI_Comm comm = MPI_COMM_WORLD;
    if (use_session) {
        if (MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &session) != MPI_SUCCESS) {
            fprintf(stderr, "config_ranges: MPI_Session_init refused to start\n");
            return 3;
        }
        MPI_Group group;
        MPI_CHECK(MPI_Group_from_session_pset(session, "mpi://WORLD", &group));
        MPI_CHECK(
            MPI_Comm_create_from_group(group, "org.aptus.config_ranges", MPI_INFO_NULL, MPI_ERRORS_RETURN, &comm));
        MPI_CHECK(MPI_Group_free(&group));
    } else {
        MPI_Init(&argc, &argv);
    }

    int rank, size, token = -1;
    MPI_CHECK(MPI_Comm_rank(comm, &rank));
    MPI_CHECK(MPI_Comm_size(comm, &size));
    MPI_CHECK(MPI_Sendrecv(&rank, 1, MPI_INT, (rank + 1) % size, 0, &token, 1, MPI_INT, (rank + size - 1) % size, 0,
                           comm, MPI_STATUS_IGNORE));
    CHECK(token == (rank + size - 1) % size, "token %d from the left neighbour", token);
    MPI_CHECK(MPI_Barrier(comm));
    if (rank == 0)
        printf("config_ranges: %d ranks started and passed the ring\n", size);

    if (use_session) {
        MPI_CHECK(MPI_Comm_free(&comm));
        MPI_CHECK(MPI_Session_finalize(&session));
    } else {
        MPI_Finalize();
    }
    return 0;
}
