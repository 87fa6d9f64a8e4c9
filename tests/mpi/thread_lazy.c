/* MPI_THREAD_MULTIPLE provided and, for a while, one thread calling MPI: the library's lock is
 * lazy until a second thread really enters (docs/DESIGN.md, "Threads"). This test makes the
 * second thread enter in each of the ways the switch must handle, every byte checked:
 *  1. while the first thread waits inside MPI_Recv for the message that the second thread is
 *     about to send (the first thread must take the lock between two steps of its wait and
 *     hand it over, or both wait forever);
 *  2. while the first thread is outside MPI (it waits in pthread_join for the second);
 *  3. several threads and the first one calling MPI at once, with point-to-point traffic between
 *     the ranks on their own tags and collectives on the first thread.
 * Mode "session" (default): a session opened with MPI_INFO_NULL, which must provide
 * MPI_THREAD_MULTIPLE (the highest level; MPI's advice to implementors, what MPICH gives);
 * mode "world": MPI_Init_thread(MPI_THREAD_MULTIPLE). */
#include <pthread.h>
#include <unistd.h>

#include "mtest.h"

#define NTHREADS 4
#define ITERS    200

static MPI_Comm comm;
static int rank, size;

static void *send_to_self(void *arg)
{
    (void)arg;
    usleep(50000); /* the first thread is in MPI_Recv by now */
    int v = 4242 + rank;
    MPI_CHECK(MPI_Send(&v, 1, MPI_INT, rank, 1, comm));
    return NULL;
}

static void *ring_thread(void *arg)
{
    int id = (int)(intptr_t)arg, right = (rank + 1) % size, left = (rank + size - 1) % size;
    for (int it = 0; it < ITERS; it++) {
        int out[4] = { rank, id, it, 7 * it + id }, in[4] = { -1, -1, -1, -1 };
        MPI_Request r;
        MPI_CHECK(MPI_Irecv(in, 4, MPI_INT, left, 100 + id, comm, &r));
        MPI_CHECK(MPI_Send(out, 4, MPI_INT, right, 100 + id, comm));
        MPI_CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        CHECK(in[0] == left && in[1] == id && in[2] == it && in[3] == 7 * it + id,
              "thread %d iteration %d: got (%d, %d, %d, %d) from rank %d", id, it, in[0], in[1], in[2], in[3], left);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int world = argc > 1 && strcmp(argv[1], "world") == 0;
    MPI_Session s = MPI_SESSION_NULL;
    if (world) {
        int provided = -1;
        MPI_CHECK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
        CHECK(provided == MPI_THREAD_MULTIPLE, "MPI_Init_thread provided %d", provided);
        MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    } else {
        MPI_CHECK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s));
        MPI_Info info;
        char v[64] = "";
        int vlen = sizeof v, flag = 0;
        MPI_CHECK(MPI_Session_get_info(s, &info));
        MPI_CHECK(MPI_Info_get_string(info, "thread_level", &vlen, v, &flag));
        MPI_CHECK(MPI_Info_free(&info));
        CHECK(flag && strcmp(v, "MPI_THREAD_MULTIPLE") == 0,
              "a session opened with MPI_INFO_NULL provides %s, expected MPI_THREAD_MULTIPLE", flag ? v : "no level");
        MPI_Group g;
        MPI_CHECK(MPI_Group_from_session_pset(s, "mpi://WORLD", &g));
        MPI_CHECK(MPI_Comm_create_from_group(g, "org.aptus.test.lazy", MPI_INFO_NULL, MPI_ERRORS_RETURN, &comm));
        MPI_CHECK(MPI_Group_free(&g));
    }
    MPI_CHECK(MPI_Comm_rank(comm, &rank));
    MPI_CHECK(MPI_Comm_size(comm, &size));

    /* one thread for a while */
    int sum = 0;
    for (int i = 0; i < 10; i++)
        MPI_CHECK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, comm));
    CHECK(sum == size * (size - 1) / 2, "allreduce %d", sum);

    /* 1: the second thread enters while the first waits inside MPI for it */
    pthread_t t;
    CHECK(pthread_create(&t, NULL, send_to_self, NULL) == 0, "pthread_create");
    int v = -1;
    MPI_CHECK(MPI_Recv(&v, 1, MPI_INT, rank, 1, comm, MPI_STATUS_IGNORE));
    CHECK(v == 4242 + rank, "message from the second thread: %d", v);
    pthread_join(t, NULL);

    /* 2: a thread enters while the first is outside MPI */
    CHECK(pthread_create(&t, NULL, ring_thread, (void *)(intptr_t)0) == 0, "pthread_create");
    pthread_join(t, NULL);

    /* 3: everyone at once */
    pthread_t ts[NTHREADS];
    for (int i = 0; i < NTHREADS; i++)
        CHECK(pthread_create(&ts[i], NULL, ring_thread, (void *)(intptr_t)(i + 1)) == 0, "pthread_create");
    for (int i = 0; i < ITERS / 4; i++) {
        int mx = -1;
        MPI_CHECK(MPI_Allreduce(&i, &mx, 1, MPI_INT, MPI_MAX, comm));
        CHECK(mx == i, "allreduce beside the threads: %d, expected %d", mx, i);
    }
    for (int i = 0; i < NTHREADS; i++)
        pthread_join(ts[i], NULL);

    MPI_CHECK(MPI_Comm_free(&comm));
    if (world)
        MPI_CHECK(MPI_Finalize());
    else
        MPI_CHECK(MPI_Session_finalize(&s));
    if (rank == 0)
        printf("thread_lazy %s: OK (%d processes)\n", world ? "world" : "session", size);
    return 0;
}
