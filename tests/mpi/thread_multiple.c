/* MPI_THREAD_MULTIPLE: several threads per rank calling MPI at once -- point-to-point with
 * specific and wildcard sources, probes and matched probes, nonblocking requests completed by
 * other calls, and collectives (blocking and nonblocking) on each thread's own communicator --
 * with every byte checked. Also MPI_Query_thread and MPI_Is_thread_main from the main thread and the others.
 * Arguments: [THREADS [ITERATIONS]] (default 4 and 200). */
#include <pthread.h>

#include "mtest.h"

static int rank, size, nthreads = 4, iters = 200;
static MPI_Comm *tcomm; /* one per thread, made before the threads start (collective calls) */
static MPI_Comm anyc;   /* wildcard receives: thread 0 of each rank takes what the others send */

struct targ {
    int id;
    int not_main;
};

static void p2p_ring(int id)
{
    int right = (rank + 1) % size, left = (rank - 1 + size) % size;
    int sbuf[64], rbuf[64];
    for (int it = 0; it < iters; it++) {
        for (int k = 0; k < 64; k++)
            sbuf[k] = rank * 1000000 + id * 10000 + it * 64 + k;
        MPI_Request rq;
        MPI_Irecv(rbuf, 64, MPI_INT, left, id, MPI_COMM_WORLD, &rq);
        MPI_Send(sbuf, 64, MPI_INT, right, id, MPI_COMM_WORLD);
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
        for (int k = 0; k < 64; k++)
            CHECK(rbuf[k] == left * 1000000 + id * 10000 + it * 64 + k, "thread %d ring it %d [%d] = %d", id, it, k,
                  rbuf[k]);
    }
}

/* Large messages (rendezvous) both ways with the right neighbour, on the thread's communicator. */
static void p2p_large(int id)
{
    int n = 1 << 16, right = (rank + 1) % size, left = (rank - 1 + size) % size;
    int *s = malloc(sizeof(int) * (size_t)n), *r = malloc(sizeof(int) * (size_t)n);
    for (int it = 0; it < 4; it++) {
        for (int k = 0; k < n; k++)
            s[k] = k ^ (rank * 31 + id * 7 + it);
        MPI_Sendrecv(s, n, MPI_INT, right, it, r, n, MPI_INT, left, it, tcomm[id], MPI_STATUS_IGNORE);
        for (int k = 0; k < n; k++)
            CHECK(r[k] == (k ^ (left * 31 + id * 7 + it)), "thread %d large it %d [%d]", id, it, k);
    }
    free(s);
    free(r);
}

/* Threads other than 0 send to thread 0 of every rank on anyc; thread 0 receives them all with
 * MPI_ANY_SOURCE / MPI_ANY_TAG, probing first half of the time. */
static void wildcard(int id)
{
    int per = iters / 4 + 1;
    if (id != 0) {
        for (int it = 0; it < per; it++)
            for (int dst = 0; dst < size; dst++) {
                int msg[2] = { rank, id * 100000 + it };
                MPI_Send(msg, 2, MPI_INT, dst, id, anyc);
            }
        return;
    }
    int expect = per * (nthreads - 1) * size;
    int *seen = calloc((size_t)size * (size_t)nthreads, sizeof(int));
    for (int k = 0; k < expect; k++) {
        int msg[2];
        MPI_Status st;
        if (k % 2) {
            MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, anyc, &st);
            MPI_Recv(msg, 2, MPI_INT, st.MPI_SOURCE, st.MPI_TAG, anyc, &st);
        } else {
            MPI_Recv(msg, 2, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, anyc, &st);
        }
        int from = st.MPI_SOURCE, t = st.MPI_TAG;
        CHECK(msg[0] == from && t > 0 && t < nthreads, "wildcard: source %d tag %d payload %d", from, t, msg[0]);
        /* messages of one sender thread arrive in order */
        CHECK(msg[1] == t * 100000 + seen[from * nthreads + t], "wildcard: from %d thread %d got %d, want %d", from, t,
              msg[1], t * 100000 + seen[from * nthreads + t]);
        seen[from * nthreads + t]++;
    }
    free(seen);
}

/* Matched probes: every thread blocks in MPI_Mprobe (or loops on MPI_Improbe) on its own
 * communicator while the others do the same -- a blocking probe lets the other threads in while
 * it waits -- then receives exactly the message it matched. */
static void matched(int id)
{
    int right = (rank + 1) % size, left = (rank - 1 + size) % size;
    MPI_Comm c = tcomm[id];
    for (int it = 0; it < iters / 4 + 1; it++) {
        int s[2] = { rank, id * 100000 + it }, r[2] = { -1, -1 };
        MPI_Request rq;
        MPI_Message m = MPI_MESSAGE_NULL;
        MPI_Status st;
        MPI_Isend(s, 2, MPI_INT, right, it, c, &rq);
        if (it % 2) {
            MPI_Mprobe(left, it, c, &m, &st);
        } else {
            int flag = 0;
            while (!flag)
                MPI_Improbe(left, it, c, &flag, &m, &st);
        }
        CHECK(m != MPI_MESSAGE_NULL && st.MPI_SOURCE == left && st.MPI_TAG == it, "thread %d matched probe it %d", id,
              it);
        MPI_Mrecv(r, 2, MPI_INT, &m, &st);
        CHECK(m == MPI_MESSAGE_NULL, "thread %d: the message handle is not MPI_MESSAGE_NULL after MPI_Mrecv", id);
        CHECK(r[0] == left && r[1] == id * 100000 + it, "thread %d matched receive it %d: %d %d", id, it, r[0], r[1]);
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
    }
}

static void collectives(int id)
{
    MPI_Comm c = tcomm[id];
    for (int it = 0; it < iters / 10 + 1; it++) {
        long v = rank + id + it, sum = 0;
        MPI_Allreduce(&v, &sum, 1, MPI_LONG, MPI_SUM, c);
        CHECK(sum == (long)size * (size - 1) / 2 + (long)size * (id + it), "thread %d allreduce %ld", id, sum);
        int b[8];
        for (int k = 0; k < 8; k++)
            b[k] = rank == it % size ? id * 100 + it + k : -1;
        MPI_Bcast(b, 8, MPI_INT, it % size, c);
        for (int k = 0; k < 8; k++)
            CHECK(b[k] == id * 100 + it + k, "thread %d bcast [%d] %d", id, k, b[k]);
        /* above the eager limit: the flat broadcast where ranks share cores, a rendezvous per rank */
        enum { NB = 10000 };
        int *big = malloc(sizeof(int) * NB);
        for (int k = 0; k < NB; k++)
            big[k] = rank == (it + 1) % size ? id * 1000000 + it * 10000 + k : -1;
        MPI_Bcast(big, NB, MPI_INT, (it + 1) % size, c);
        for (int k = 0; k < NB; k++)
            if (big[k] != id * 1000000 + it * 10000 + k) {
                CHECK(0, "thread %d bcast of %d ints [%d] %d", id, (int)NB, k, big[k]);
                break;
            }
        free(big);
        int *s = malloc(sizeof(int) * (size_t)size * 4), *r = malloc(sizeof(int) * (size_t)size * 4);
        for (int p = 0; p < size; p++)
            for (int k = 0; k < 4; k++)
                s[p * 4 + k] = rank * 1000 + p * 10 + k + id;
        MPI_Request rq;
        MPI_Ialltoall(s, 4, MPI_INT, r, 4, MPI_INT, c, &rq);
        int flag = 0;
        while (!flag)
            MPI_Test(&rq, &flag, MPI_STATUS_IGNORE);
        for (int p = 0; p < size; p++)
            for (int k = 0; k < 4; k++)
                CHECK(r[p * 4 + k] == p * 1000 + rank * 10 + k + id, "thread %d ialltoall", id);
        free(s);
        free(r);
    }
    MPI_Barrier(c);
}

static void *body(void *arg)
{
    struct targ *a = arg;
    int flag = -1, level = -1;
    MPI_Is_thread_main(&flag);
    CHECK(flag == !a->not_main, "thread %d: MPI_Is_thread_main says %d", a->id, flag);
    MPI_Query_thread(&level);
    CHECK(level == MPI_THREAD_MULTIPLE, "MPI_Query_thread says %d", level);
    p2p_ring(a->id);
    wildcard(a->id);
    matched(a->id);
    p2p_large(a->id);
    collectives(a->id);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided = -1;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc > 1)
        nthreads = atoi(argv[1]);
    if (argc > 2)
        iters = atoi(argv[2]);
    CHECK(nthreads >= 1 && nthreads <= 64 && iters >= 1, "arguments");
    tcomm = malloc(sizeof(MPI_Comm) * (size_t)nthreads);
    for (int i = 0; i < nthreads; i++)
        MPI_Comm_dup(MPI_COMM_WORLD, &tcomm[i]);
    MPI_Comm_dup(MPI_COMM_WORLD, &anyc);
    pthread_t *th = malloc(sizeof(pthread_t) * (size_t)nthreads);
    struct targ *a = malloc(sizeof(struct targ) * (size_t)nthreads);
    for (int i = 1; i < nthreads; i++) {
        a[i] = (struct targ){ i, 1 };
        CHECK(pthread_create(&th[i], NULL, body, &a[i]) == 0, "pthread_create");
    }
    a[0] = (struct targ){ 0, 0 };
    body(&a[0]);
    for (int i = 1; i < nthreads; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < nthreads; i++)
        MPI_Comm_free(&tcomm[i]);
    MPI_Comm_free(&anyc);
    free(tcomm);
    free(th);
    free(a);
    MPI_Finalize();
    return 0;
}
