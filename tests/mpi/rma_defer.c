/* Small puts and accumulates to MPI_Win_create (or dynamic) memory on the node, which wait for the
 * epoch's end (docs/DESIGN.md, "One-sided communication": deferred operations). Every rank is the
 * origin of operations to its right neighbour and the target of its left one, in epochs of the
 * kind the argument names; each epoch's results are checked against what they must be:
 *   pscw     post-start-complete-wait: the operations ride with MPI_Win_complete;
 *   fence    fences: handed to the target before the fence's barrier;
 *   flush    MPI_Win_lock_all and MPI_Win_flush: handed over while the target polls (it flushes
 *            too); also the order of accumulates: a fetch-and-op, and a large MPI_REPLACE that
 *            is not deferred, must come after the small ones before them;
 *   threads  flush, from 4 threads at once under MPI_THREAD_MULTIPLE;
 *   passive  (2 ranks) the target computes without calling MPI while the origin runs lock
 *            epochs: they must end long before the computation does (the origin takes a batch
 *            back when the target does not take it, then writes them itself); then the roles
 *            swap.
 * A second argument `dynamic` makes the window by MPI_Win_create_dynamic + MPI_Win_attach.
 * tests/mpi/rma.cmake checks with the statistics that each way ran. */
#include "mtest.h"

#include <pthread.h>

enum { SLOTS = 64, COUNTER = 64, REPL = 65, VEC = 66, ORD = 70, BIG = 256, NBIG = 256, N = BIG + NBIG, EPOCHS = 60 };

static int rank, size, right, left, dynamic;
static MPI_Win win;
static int64_t *mem;
static MPI_Aint rbase; /* the right neighbour's window base (dynamic windows: its address) */

static MPI_Aint at(int i)
{
    return dynamic ? MPI_Aint_add(rbase, (MPI_Aint)i * (MPI_Aint)sizeof(int64_t)) : i;
}

static void make_window(void)
{
    mem = calloc(N, sizeof *mem);
    CHECK(mem != NULL, "out of memory");
    if (dynamic) {
        MPI_CHECK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
        MPI_CHECK(MPI_Win_attach(win, mem, N * sizeof *mem));
        MPI_Aint mine;
        MPI_CHECK(MPI_Get_address(mem, &mine));
        MPI_CHECK(MPI_Sendrecv(&mine, 1, MPI_AINT, left, 0, &rbase, 1, MPI_AINT, right, 0, MPI_COMM_WORLD,
                               MPI_STATUS_IGNORE));
    } else {
        MPI_CHECK(MPI_Win_create(mem, N * sizeof *mem, sizeof *mem, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    }
}

static void free_window(void)
{
    if (dynamic)
        MPI_CHECK(MPI_Win_detach(win, mem));
    MPI_CHECK(MPI_Win_free(&win));
    free(mem);
}

/* The operations of epoch e to the right neighbour: a put, two accumulates, a strided put. */
static MPI_Datatype strided;
static int64_t pval[EPOCHS], one = 1, repl[EPOCHS], vec[EPOCHS][2];
static void epoch_ops(int e)
{
    pval[e] = (int64_t)rank * 1000 + e;
    repl[e] = 7 * e + 1;
    vec[e][0] = e;
    vec[e][1] = -e;
    MPI_CHECK(MPI_Put(&pval[e], 1, MPI_INT64_T, right, at(e % SLOTS), 1, MPI_INT64_T, win));
    MPI_CHECK(MPI_Accumulate(&one, 1, MPI_INT64_T, right, at(COUNTER), 1, MPI_INT64_T, MPI_SUM, win));
    MPI_CHECK(MPI_Accumulate(&repl[e], 1, MPI_INT64_T, right, at(REPL), 1, MPI_INT64_T, MPI_REPLACE, win));
    MPI_CHECK(MPI_Put(vec[e], 2, MPI_INT64_T, right, at(VEC), 1, strided, win));
}

/* What the left neighbour's epoch e left in this rank's window. */
static void epoch_check(int e, const char *how)
{
    CHECK(mem[e % SLOTS] == (int64_t)left * 1000 + e, "%s epoch %d: put slot holds %lld", how, e,
          (long long)mem[e % SLOTS]);
    CHECK(mem[COUNTER] == e + 1, "%s epoch %d: counter %lld, want %d", how, e, (long long)mem[COUNTER], e + 1);
    CHECK(mem[REPL] == 7 * e + 1, "%s epoch %d: replaced value %lld", how, e, (long long)mem[REPL]);
    CHECK(mem[VEC] == e && mem[VEC + 2] == -e && mem[VEC + 1] == 0, "%s epoch %d: strided put %lld %lld %lld", how, e,
          (long long)mem[VEC], (long long)mem[VEC + 1], (long long)mem[VEC + 2]);
}

static void run_pscw(void)
{
    MPI_Group world, lg, rg;
    MPI_CHECK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    MPI_CHECK(MPI_Group_incl(world, 1, &left, &lg));
    MPI_CHECK(MPI_Group_incl(world, 1, &right, &rg));
    for (int e = 0; e < EPOCHS; e++) {
        MPI_CHECK(MPI_Win_post(lg, 0, win));
        MPI_CHECK(MPI_Win_start(rg, 0, win));
        epoch_ops(e);
        MPI_CHECK(MPI_Win_complete(win));
        MPI_CHECK(MPI_Win_wait(win));
        epoch_check(e, "pscw");
    }
    MPI_Group_free(&lg);
    MPI_Group_free(&rg);
    MPI_Group_free(&world);
}

static void run_fence(void)
{
    MPI_CHECK(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
    for (int e = 0; e < EPOCHS; e++) {
        epoch_ops(e);
        MPI_CHECK(MPI_Win_fence(0, win));
        epoch_check(e, "fence");
        MPI_CHECK(MPI_Win_fence(0, win)); /* (the check reads before the next epoch writes) */
    }
    MPI_CHECK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
}

static void run_flush(void)
{
    int64_t big[NBIG], got, old;
    MPI_CHECK(MPI_Win_lock_all(0, win));
    for (int e = 0; e < EPOCHS; e++) {
        /* the epoch's operations, completed by a flush (handed over: the target polls) */
        epoch_ops(e);
        MPI_CHECK(MPI_Win_flush(right, win));
        MPI_CHECK(MPI_Get(&got, 1, MPI_INT64_T, right, at(e % SLOTS), 1, MPI_INT64_T, win));
        MPI_CHECK(MPI_Win_flush(right, win));
        CHECK(got == pval[e], "flush epoch %d: get after put and flush read %lld, want %lld", e, (long long)got,
              (long long)pval[e]);
        /* accumulates are ordered: a fetch sees the accumulate before it (no flush in between) */
        MPI_CHECK(MPI_Accumulate(&one, 1, MPI_INT64_T, right, at(ORD), 1, MPI_INT64_T, MPI_SUM, win));
        MPI_CHECK(MPI_Fetch_and_op(&one, &old, MPI_INT64_T, right, at(ORD), MPI_NO_OP, win));
        CHECK(old == e + 1, "flush epoch %d: fetch-and-op after the accumulate read %lld", e, (long long)old);
        /* a small MPI_REPLACE (deferred), then a large one over it (not deferred): the large wins */
        int64_t small = -5 - e;
        MPI_CHECK(MPI_Accumulate(&small, 1, MPI_INT64_T, right, at(BIG + 3), 1, MPI_INT64_T, MPI_REPLACE, win));
        for (int i = 0; i < NBIG; i++)
            big[i] = 100000 * e + i;
        MPI_CHECK(MPI_Accumulate(big, NBIG, MPI_INT64_T, right, at(BIG), NBIG, MPI_INT64_T, MPI_REPLACE, win));
        MPI_CHECK(MPI_Win_flush(right, win));
        MPI_CHECK(MPI_Get(&got, 1, MPI_INT64_T, right, at(BIG + 3), 1, MPI_INT64_T, win));
        MPI_CHECK(MPI_Win_flush(right, win));
        CHECK(got == 100000 * e + 3, "flush epoch %d: the small MPI_REPLACE came after the large one (%lld)", e,
              (long long)got);
    }
    MPI_CHECK(MPI_Win_unlock_all(win));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    epoch_check(EPOCHS - 1, "flush");
}

/* ---- threads --------------------------------------------------------------------------------- */

enum { NT = 4, TITERS = 150 };

static void *thread_main(void *arg)
{
    int th = (int)(intptr_t)arg;
    for (int i = 0; i < TITERS; i++) {
        int64_t v = (int64_t)rank << 32 | (int64_t)th << 16 | i, got = -1;
        int slot = th * (SLOTS / NT) + i % (SLOTS / NT);
        MPI_CHECK(MPI_Put(&v, 1, MPI_INT64_T, right, at(slot), 1, MPI_INT64_T, win));
        MPI_CHECK(MPI_Accumulate(&one, 1, MPI_INT64_T, right, at(BIG + th), 1, MPI_INT64_T, MPI_SUM, win));
        MPI_CHECK(MPI_Win_flush(right, win));
        MPI_CHECK(MPI_Get(&got, 1, MPI_INT64_T, right, at(slot), 1, MPI_INT64_T, win));
        MPI_CHECK(MPI_Win_flush(right, win));
        CHECK(got == v, "thread %d, iteration %d: read back %llx after put and flush, want %llx", th, i,
              (unsigned long long)got, (unsigned long long)v);
    }
    return NULL;
}

static void run_threads(void)
{
    MPI_CHECK(MPI_Win_lock_all(0, win));
    pthread_t tid[NT];
    for (int t = 0; t < NT; t++)
        CHECK(pthread_create(&tid[t], NULL, thread_main, (void *)(intptr_t)t) == 0, "pthread_create");
    for (int t = 0; t < NT; t++)
        pthread_join(tid[t], NULL);
    MPI_CHECK(MPI_Win_unlock_all(win));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    for (int t = 0; t < NT; t++)
        CHECK(mem[BIG + t] == TITERS, "thread %d's counter is %lld, want %d", t, (long long)mem[BIG + t], TITERS);
}

/* ---- a target that does not call MPI ----------------------------------------------------------- */

static void run_passive(void)
{
    const char *env = getenv("MTEST_COMPUTE");
    double compute = env ? atof(env) : 1.0;
    enum { K = 40 };
    for (int phase = 0; phase < 2; phase++) {
        int origin = phase, target = 1 - phase;
        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
        if (rank == target) {
            volatile double x = 1; /* computes without calling MPI (MPI_Wtime is a clock) */
            double t0 = MPI_Wtime();
            while (MPI_Wtime() - t0 < compute)
                for (int k = 0; k < 1000; k++)
                    x = x * 1.0000001 + 1e-9;
        } else if (rank == origin) {
            double t0 = MPI_Wtime();
            for (int e = 0; e < K; e++) {
                int64_t v = 31 * e + phase, got = -1;
                MPI_CHECK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win));
                MPI_CHECK(MPI_Put(&v, 1, MPI_INT64_T, target, at(e % SLOTS), 1, MPI_INT64_T, win));
                MPI_CHECK(MPI_Accumulate(&one, 1, MPI_INT64_T, target, at(COUNTER), 1, MPI_INT64_T, MPI_SUM, win));
                MPI_CHECK(MPI_Win_flush(target, win));
                MPI_CHECK(MPI_Get(&got, 1, MPI_INT64_T, target, at(e % SLOTS), 1, MPI_INT64_T, win));
                MPI_CHECK(MPI_Win_unlock(target, win));
                CHECK(got == v, "passive epoch %d: read back %lld, want %lld", e, (long long)got, (long long)v);
            }
            double t = MPI_Wtime() - t0;
            printf("rma_defer passive: %d epochs took %.4f s while the target computed for %.1f s\n", K, t, compute);
            CHECK(t < compute / 2, "the lock epochs took %.3f s: they waited for the target's computation", t);
        }
        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
        if (rank == target)
            CHECK(mem[COUNTER] == K, "phase %d: the target's counter is %lld, want %d", phase, (long long)mem[COUNTER],
                  K);
        mem[COUNTER] = 0;
        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    }
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "pscw";
    dynamic = argc > 2 && !strcmp(argv[2], "dynamic");
    int provided = MPI_THREAD_SINGLE;
    if (!strcmp(mode, "threads"))
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    else
        MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;
    if (size < 2 || (!strcmp(mode, "passive") && size != 2) ||
        (!strcmp(mode, "threads") && provided < MPI_THREAD_MULTIPLE)) {
        if (rank == 0)
            printf("rma_defer %s: needs 2 ranks (passive: exactly 2; threads: MPI_THREAD_MULTIPLE)\n", mode);
        return mtest_finalize();
    }
    MPI_CHECK(MPI_Type_vector(2, 1, 2, MPI_INT64_T, &strided));
    MPI_CHECK(MPI_Type_commit(&strided));
    make_window();
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (!strcmp(mode, "pscw"))
        run_pscw();
    else if (!strcmp(mode, "fence"))
        run_fence();
    else if (!strcmp(mode, "flush"))
        run_flush();
    else if (!strcmp(mode, "threads"))
        run_threads();
    else if (!strcmp(mode, "passive"))
        run_passive();
    else
        FAILF("unknown mode %s", mode);
    free_window();
    MPI_Type_free(&strided);
    return mtest_finalize();
}
