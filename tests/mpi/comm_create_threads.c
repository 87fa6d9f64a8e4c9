/* MPI_THREAD_MULTIPLE: several threads of every rank create communicators at the same time, each
 * on its own parent -- dup, idup, split, split_type, create, create_group, intercomm_create, the
 * intercommunicator's dup/split/create and merge, create_from_group -- and every new
 * communicator must have a context of its own: each thread runs collectives and point-to-point
 * on what it made, with values that tell the threads apart, while the others do the same.
 * Two live communicators of one process on one context would mix the threads' messages (wrong
 * sums, or messages received by the wrong thread).
 * Arguments: [THREADS [ITERATIONS [KIND]]] (default 4, 12, all kinds; KIND picks one: dup, idup,
 * split, split_type, create, create_group, inter, merge, inter_dup, inter_split, from_group,
 * idup_overlap: idups of the parent still running while blocking constructors run on it). */
#include <pthread.h>

#include "mtest.h"

enum {
    K_DUP,
    K_IDUP,
    K_SPLIT,
    K_SPLIT_TYPE,
    K_CREATE,
    K_CREATE_GROUP,
    K_INTER,
    K_MERGE,
    K_INTER_DUP,
    K_INTER_SPLIT,
    K_FROM_GROUP,
    K_IDUP_OVERLAP,
    K_COUNT
};
static const char *const kind_names[K_COUNT] = { "dup",       "idup",         "split",      "split_type",
                                                 "create",    "create_group", "inter",      "merge",
                                                 "inter_dup", "inter_split",  "from_group", "idup_overlap" };

static int rank, size, nthreads = 4, iters = 12, only = -1;
static MPI_Comm *parent; /* one per thread, made before the threads start */
static MPI_Group world_group;

/* A value that names (thread, rank, iteration): the sums below tell whose messages arrived. */
static long value(int t, int r, int it)
{
    return 1000000L * (t + 1) + 1000L * r + it;
}

/* The world ranks of the n members of g (freed here); the caller frees the array. */
static int *world_ranks(MPI_Group g, int n)
{
    int *idx = malloc(sizeof(int) * (size_t)n), *wr = malloc(sizeof(int) * (size_t)n);
    for (int i = 0; i < n; i++)
        idx[i] = i;
    MPI_Group_translate_ranks(g, n, idx, world_group, wr);
    MPI_Group_free(&g);
    free(idx);
    return wr;
}

/* Every member contributes value(t, its world rank, it): the sum over the communicator's (remote)
 * group must be exactly that of its members, and a ring of point-to-point messages must come
 * from the right neighbour. */
static void check_intra(MPI_Comm c, int t, int it, const char *what)
{
    int n, me;
    MPI_Comm_size(c, &n);
    MPI_Comm_rank(c, &me);
    MPI_Group g;
    MPI_Comm_group(c, &g);
    int *wr = world_ranks(g, n);
    long mine = value(t, rank, it), sum = 0, expect = 0;
    for (int i = 0; i < n; i++)
        expect += value(t, wr[i], it);
    MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, c);
    CHECK(sum == expect, "thread %d it %d %s: allreduce %ld, expected %ld", t, it, what, sum, expect);
    long got = -1;
    int right = (me + 1) % n, left = (me - 1 + n) % n;
    MPI_Sendrecv(&mine, 1, MPI_LONG, right, t, &got, 1, MPI_LONG, left, t, c, MPI_STATUS_IGNORE);
    CHECK(got == value(t, wr[left], it), "thread %d it %d %s: ring got %ld from %d, expected %ld", t, it, what, got,
          left, value(t, wr[left], it));
    long b = me == 0 ? mine : -1;
    MPI_Bcast(&b, 1, MPI_LONG, 0, c);
    CHECK(b == value(t, wr[0], it), "thread %d it %d %s: bcast %ld", t, it, what, b);
    free(wr);
}

/* On an intercommunicator: the allreduce gives the sum over the remote group. */
static void check_inter(MPI_Comm c, int t, int it, const char *what)
{
    int flag = 0, n;
    MPI_Comm_test_inter(c, &flag);
    CHECK(flag, "thread %d %s: not an intercommunicator", t, what);
    MPI_Comm_remote_size(c, &n);
    MPI_Group g;
    MPI_Comm_remote_group(c, &g);
    int *wr = world_ranks(g, n);
    long mine = value(t, rank, it), sum = 0, expect = 0;
    for (int i = 0; i < n; i++)
        expect += value(t, wr[i], it);
    MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, c);
    CHECK(sum == expect, "thread %d it %d %s: inter allreduce %ld, expected %ld", t, it, what, sum, expect);
    /* rank 0 of each side swaps with rank 0 of the other */
    int me;
    MPI_Comm_rank(c, &me);
    if (me == 0) {
        long got = -1;
        MPI_Sendrecv(&mine, 1, MPI_LONG, 0, t, &got, 1, MPI_LONG, 0, t, c, MPI_STATUS_IGNORE);
        CHECK(got == value(t, wr[0], it), "thread %d it %d %s: inter swap got %ld", t, it, what, got);
    }
    free(wr);
}

/* An intercommunicator between the lower and upper half of p (size >= 2), tag per thread. */
static MPI_Comm make_inter(MPI_Comm p, int t, MPI_Comm *half)
{
    int pr, ps;
    MPI_Comm_rank(p, &pr);
    MPI_Comm_size(p, &ps);
    int low = pr < ps / 2;
    MPI_Comm_split(p, low, pr, half);
    MPI_Comm inter;
    int rc = MPI_Intercomm_create(*half, 0, p, low ? ps / 2 : 0, 100 + t, &inter);
    CHECK(rc == MPI_SUCCESS, "thread %d: MPI_Intercomm_create failed (%d)", t, rc);
    return inter;
}

static void one(int t, int it, int kind)
{
    MPI_Comm p = parent[t], c = MPI_COMM_NULL, half = MPI_COMM_NULL, inter = MPI_COMM_NULL;
    int pr, ps, rc;
    MPI_Comm_rank(p, &pr);
    MPI_Comm_size(p, &ps);
    const char *what = kind_names[kind];
    switch (kind) {
    case K_DUP:
        rc = MPI_Comm_dup(p, &c);
        CHECK(rc == MPI_SUCCESS, "thread %d: MPI_Comm_dup failed", t);
        check_intra(c, t, it, what);
        break;
    case K_IDUP: {
        MPI_Comm c2;
        MPI_Request r[2];
        MPI_Comm_idup(p, &c, &r[0]);
        MPI_Comm_idup(p, &c2, &r[1]);
        MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
        check_intra(c2, t, it, what);
        check_intra(c, t, it, what);
        MPI_Comm_free(&c2);
        break;
    }
    case K_IDUP_OVERLAP: {
        MPI_Comm d[3], x = MPI_COMM_NULL;
        MPI_Request r[3];
        for (int i = 0; i < 3; i++)
            MPI_Comm_idup(p, &d[i], &r[i]);
        MPI_Comm_dup(p, &c);
        check_intra(c, t, it, what);
        MPI_Comm_split(p, pr % 2, pr, &x);
        check_intra(x, t, it, what);
        MPI_Comm_free(&x);
        if (ps >= 2) {
            inter = make_inter(p, t, &half);
            check_inter(inter, t, it, what);
        }
        MPI_Waitall(3, r, MPI_STATUSES_IGNORE);
        for (int i = 0; i < 3; i++) {
            check_intra(d[i], t, it, what);
            MPI_Comm_free(&d[i]);
        }
        break;
    }
    case K_SPLIT:
        MPI_Comm_split(p, pr % 2, ps - pr, &c);
        check_intra(c, t, it, what);
        break;
    case K_SPLIT_TYPE:
        MPI_Comm_split_type(p, MPI_COMM_TYPE_SHARED, pr, MPI_INFO_NULL, &c);
        check_intra(c, t, it, what);
        break;
    case K_CREATE:
    case K_CREATE_GROUP:
    case K_FROM_GROUP: {
        /* every member but the last of p (all of p at one rank) */
        MPI_Group g, sub;
        MPI_Comm_group(p, &g);
        int range[1][3] = { { 0, ps > 1 ? ps - 2 : 0, 1 } };
        MPI_Group_range_incl(g, 1, range, &sub);
        if (kind == K_CREATE)
            MPI_Comm_create(p, sub, &c);
        else if (pr <= range[0][1] && kind == K_CREATE_GROUP)
            MPI_Comm_create_group(p, sub, 7 + t, &c);
        else if (pr <= range[0][1]) {
            char tag[64];
            snprintf(tag, sizeof tag, "comm_create_threads.%d", t);
            rc = MPI_Comm_create_from_group(sub, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &c);
            CHECK(rc == MPI_SUCCESS, "thread %d: MPI_Comm_create_from_group failed (%d)", t, rc);
        }
        CHECK((c != MPI_COMM_NULL) == (pr <= range[0][1]), "thread %d %s: membership", t, what);
        if (c != MPI_COMM_NULL)
            check_intra(c, t, it, what);
        MPI_Group_free(&sub);
        MPI_Group_free(&g);
        break;
    }
    case K_INTER:
    case K_MERGE:
    case K_INTER_DUP:
    case K_INTER_SPLIT:
        if (ps < 2)
            return;
        inter = make_inter(p, t, &half);
        check_inter(inter, t, it, "intercomm_create");
        if (kind == K_MERGE) {
            MPI_Intercomm_merge(inter, pr < ps / 2, &c);
            check_intra(c, t, it, what);
        } else if (kind == K_INTER_DUP) {
            MPI_Comm_dup(inter, &c);
            check_inter(c, t, it, what);
        } else if (kind == K_INTER_SPLIT) {
            MPI_Comm_split(inter, 0, pr, &c);
            check_inter(c, t, it, what);
        }
        break;
    }
    if (c != MPI_COMM_NULL)
        MPI_Comm_free(&c);
    if (inter != MPI_COMM_NULL)
        MPI_Comm_free(&inter);
    if (half != MPI_COMM_NULL)
        MPI_Comm_free(&half);
}

static void *work(void *arg)
{
    int t = (int)(intptr_t)arg;
    for (int it = 0; it < iters; it++) {
        /* threads run different kinds at the same moment, and each kind meets every other */
        int kind = only >= 0 ? only : (t + it) % K_COUNT;
        one(t, it, kind);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_group(MPI_COMM_WORLD, &world_group);
    if (argc > 1)
        nthreads = atoi(argv[1]);
    if (argc > 2)
        iters = atoi(argv[2]);
    if (argc > 3) {
        for (int k = 0; k < K_COUNT; k++)
            if (strcmp(argv[3], kind_names[k]) == 0)
                only = k;
        CHECK(only >= 0, "unknown kind %s", argv[3]);
    }
    parent = malloc(sizeof(MPI_Comm) * (size_t)nthreads);
    pthread_t *th = malloc(sizeof(pthread_t) * (size_t)nthreads);
    for (int t = 0; t < nthreads; t++)
        MPI_Comm_dup(MPI_COMM_WORLD, &parent[t]);
    for (int t = 0; t < nthreads; t++)
        pthread_create(&th[t], NULL, work, (void *)(intptr_t)t);
    for (int t = 0; t < nthreads; t++)
        pthread_join(th[t], NULL);
    for (int t = 0; t < nthreads; t++)
        MPI_Comm_free(&parent[t]);
    MPI_Group_free(&world_group);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("comm_create_threads: %d threads x %d iterations: OK\n", nthreads, iters);
    free(parent);
    free(th);
    MPI_Finalize();
    return 0;
}
