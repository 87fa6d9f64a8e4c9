/* MPI-4 partitioned communication: with one communicator, peer and tag, partitioned operations
 * match in the order of their MPI_Psend_init / MPI_Precv_init calls, whatever the order in
 * which they are started and made ready (MPI 4.1, 4.2, "Order"), in every round:
 *  1. three sends initialized 0,1,2, started and made ready 2,0,1; three receives initialized
 *     0,1,2, started 1,2,0 (Open MPI's test_order0, MPICH's part/multipart);
 *  2. the same requests restarted over many rounds in orders drawn at random (different on the
 *     two sides), by MPI_Start and MPI_Startall, completed by MPI_Wait, MPI_Waitall, MPI_Test;
 *  3. under MPI_THREAD_MULTIPLE, one thread per pair starting, marking and waiting for its own
 *     requests at the same time as the others, every round.
 * Every receive must hold its own send's data, and its status the user's tag.
 * Ranks are paired (0-1, 2-3, ...); an odd last rank (and a single rank) sends to itself.
 * Arguments: [ROUNDS [PARTS]]: 40 rounds by default; PARTS says which of the three to run
 * ("frt", the default: fixed, random, threads). */
#include <pthread.h>

#include "mtest.h"

#define NREQ  4
#define NPART 4
#define PER   64 /* ints per partition */
#define TAG   7

static int rank, peer, sender, receiver, rounds = 40;
static const char *parts = "frt";
static int sbuf[NREQ][NPART * PER], rbuf[NREQ][NPART * PER];
static MPI_Request sreq[NREQ], rreq[NREQ];

static int value(int req, int round, int i)
{
    return req * 10000000 + round * 10000 + i;
}

static void fill(int k, int round)
{
    for (int i = 0; i < NPART * PER; i++)
        sbuf[k][i] = value(k, round, i);
}

static void check(int k, int round, const MPI_Status *st, const char *what)
{
    for (int i = 0; i < NPART * PER; i++)
        if (rbuf[k][i] != value(k, round, i)) {
            int from = rbuf[k][i] / 10000000;
            FAILF("%s, round %d: receive %d (initialized %d-th) holds element %d = %d, from send %d's round %d "
                  "(expected send %d's)",
                  what, round, k, k, i, rbuf[k][i], from, (rbuf[k][i] % 10000000) / 10000, k);
        }
    if (st) {
        CHECK(st->MPI_TAG == TAG, "%s, round %d: receive %d's status tag %d, expected %d", what, round, k, st->MPI_TAG,
              TAG);
        CHECK(st->MPI_SOURCE == peer, "%s, round %d: receive %d's status source %d, expected %d", what, round, k,
              st->MPI_SOURCE, peer);
    }
}

static unsigned rnd(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return (*s >> 16) & 0x7fff;
}

static void shuffle(int *a, int n, unsigned *s)
{
    for (int i = 0; i < n; i++)
        a[i] = i;
    for (int i = n - 1; i > 0; i--) {
        int j = (int)(rnd(s) % (unsigned)(i + 1)), t = a[i];
        a[i] = a[j];
        a[j] = t;
    }
}

static void init_all(MPI_Comm comm)
{
    /* receives and sends both in order 0..NREQ-1; a rank sending to itself initializes its
     * receives first */
    for (int k = 0; k < NREQ; k++)
        if (receiver)
            MPI_CHECK(MPI_Precv_init(rbuf[k], NPART, PER, MPI_INT, peer, TAG, comm, MPI_INFO_NULL, &rreq[k]));
    for (int k = 0; k < NREQ; k++)
        if (sender)
            MPI_CHECK(MPI_Psend_init(sbuf[k], NPART, PER, MPI_INT, peer, TAG, comm, MPI_INFO_NULL, &sreq[k]));
}

static void free_all(void)
{
    for (int k = 0; k < NREQ; k++) {
        if (sender)
            MPI_CHECK(MPI_Request_free(&sreq[k]));
        if (receiver)
            MPI_CHECK(MPI_Request_free(&rreq[k]));
    }
}

static void clear(int k)
{
    for (int i = 0; i < NPART * PER; i++)
        rbuf[k][i] = -1;
}

/* 1: the fixed orders of Open MPI's test_order0 (three requests). */
static void fixed_orders(MPI_Comm comm)
{
    init_all(comm);
    static const int sorder[3] = { 2, 0, 1 }, rorder[3] = { 1, 2, 0 };
    if (receiver)
        for (int j = 0; j < 3; j++) {
            clear(rorder[j]);
            MPI_CHECK(MPI_Start(&rreq[rorder[j]]));
        }
    if (sender)
        for (int j = 0; j < 3; j++) {
            int k = sorder[j];
            fill(k, 0);
            MPI_CHECK(MPI_Start(&sreq[k]));
            MPI_CHECK(MPI_Pready_range(0, NPART - 1, sreq[k]));
        }
    MPI_Status st[3];
    if (receiver)
        MPI_CHECK(MPI_Waitall(3, rreq, st));
    if (sender)
        MPI_CHECK(MPI_Waitall(3, sreq, MPI_STATUSES_IGNORE));
    for (int k = 0; receiver && k < 3; k++)
        check(k, 0, &st[k], "start orders 2,0,1 / 1,2,0");
    free_all();
}

/* 2: restarts in random orders; the two sides draw different orders. */
static void random_orders(MPI_Comm comm)
{
    init_all(comm);
    unsigned seed = 12345u + 7919u * (unsigned)rank;
    for (int round = 1; round <= rounds; round++) {
        int ro[NREQ], so[NREQ], po[NPART], wo[NREQ];
        shuffle(ro, NREQ, &seed);
        shuffle(so, NREQ, &seed);
        shuffle(wo, NREQ, &seed);
        if (receiver) {
            for (int k = 0; k < NREQ; k++)
                clear(k);
            if (round % 3 == 0) { /* MPI_Startall of a permuted array */
                MPI_Request perm[NREQ];
                for (int j = 0; j < NREQ; j++)
                    perm[j] = rreq[ro[j]];
                MPI_CHECK(MPI_Startall(NREQ, perm));
            } else {
                for (int j = 0; j < NREQ; j++)
                    MPI_CHECK(MPI_Start(&rreq[ro[j]]));
            }
        }
        if (sender) {
            /* start all, then mark the partitions of the requests in another order */
            for (int j = 0; j < NREQ; j++) {
                fill(so[j], round);
                MPI_CHECK(MPI_Start(&sreq[so[j]]));
            }
            shuffle(so, NREQ, &seed);
            for (int j = 0; j < NREQ; j++) {
                shuffle(po, NPART, &seed);
                for (int q = 0; q < NPART; q++)
                    MPI_CHECK(MPI_Pready(po[q], sreq[so[j]]));
            }
        }
        if (receiver) {
            for (int j = 0; j < NREQ; j++) {
                int k = wo[j];
                MPI_Status st;
                if (round % 2) {
                    MPI_CHECK(MPI_Wait(&rreq[k], &st));
                } else {
                    int flag = 0;
                    while (!flag) {
                        MPI_CHECK(MPI_Test(&rreq[k], &flag, &st));
                        if (sender && !flag) /* to oneself: the sends progress too */
                            MPI_CHECK(MPI_Testall(NREQ, sreq, &(int){ 0 }, MPI_STATUSES_IGNORE));
                    }
                }
                check(k, round, &st, "random orders");
            }
        }
        if (sender)
            MPI_CHECK(MPI_Waitall(NREQ, sreq, MPI_STATUSES_IGNORE));
    }
    free_all();
}

/* 3: one thread per pair, all at once. */
static void *pair_thread(void *arg)
{
    int k = (int)(intptr_t)arg;
    unsigned seed = 777u + 31u * (unsigned)k + 1009u * (unsigned)rank;
    for (int round = 1; round <= rounds; round++) {
        if (receiver) {
            clear(k);
            MPI_CHECK(MPI_Start(&rreq[k]));
        }
        if (sender) {
            int po[NPART];
            fill(k, round);
            MPI_CHECK(MPI_Start(&sreq[k]));
            shuffle(po, NPART, &seed);
            for (int q = 0; q < NPART; q++)
                MPI_CHECK(MPI_Pready(po[q], sreq[k]));
        }
        if (receiver) {
            MPI_Status st;
            if (sender) {
                MPI_Request both[2] = { sreq[k], rreq[k] };
                MPI_Status sts[2];
                MPI_CHECK(MPI_Waitall(2, both, sts));
                st = sts[1];
            } else {
                MPI_CHECK(MPI_Wait(&rreq[k], &st));
            }
            check(k, round, &st, "threads");
        } else {
            MPI_CHECK(MPI_Wait(&sreq[k], MPI_STATUS_IGNORE));
        }
        if (rnd(&seed) % 4 == 0)
            sched_yield();
    }
    return NULL;
}

static void threaded(MPI_Comm comm)
{
    init_all(comm);
    pthread_t t[NREQ];
    for (int k = 0; k < NREQ; k++)
        CHECK(pthread_create(&t[k], NULL, pair_thread, (void *)(intptr_t)k) == 0, "pthread_create");
    for (int k = 0; k < NREQ; k++)
        pthread_join(t[k], NULL);
    free_all();
}

int main(int argc, char **argv)
{
    int provided, size;
    MPI_CHECK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    if (argc > 1)
        rounds = atoi(argv[1]);
    if (argc > 2)
        parts = argv[2];
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    peer = rank ^ 1;
    if (peer >= size)
        peer = rank;
    sender = peer == rank || rank < peer;
    receiver = peer == rank || rank > peer;
    MPI_Comm comm;
    MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    if (strchr(parts, 'f'))
        fixed_orders(comm);
    if (strchr(parts, 'r'))
        random_orders(comm);
    if (strchr(parts, 't') && provided == MPI_THREAD_MULTIPLE)
        threaded(comm);
    /* the other direction, on MPI_COMM_WORLD */
    int t = sender;
    sender = receiver;
    receiver = t;
    if (peer == rank)
        sender = receiver = 1;
    if (strchr(parts, 'f'))
        fixed_orders(MPI_COMM_WORLD);
    if (strchr(parts, 'r'))
        random_orders(MPI_COMM_WORLD);
    MPI_CHECK(MPI_Comm_free(&comm));
    MPI_CHECK(MPI_Finalize());
    if (rank == 0)
        printf("mpi4_part_order: OK (%d processes, %d rounds%s)\n", size, rounds,
               provided == MPI_THREAD_MULTIPLE ? ", threads" : "");
    return 0;
}
