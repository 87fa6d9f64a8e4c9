/* Nonblocking and persistent collectives beyond one-at-a-time use (the per-collective checks
 * run through nbc_wrap.h on the blocking tests): many outstanding at once on one communicator
 * and on several, completed in other orders and by Wait/Test/Waitall/Waitany/Testany/Waitsome
 * mixes, a blocking collective between them; persistent collectives restarted with new buffer
 * contents, started together with MPI_Startall; an op, a datatype and a communicator freed
 * while an operation that uses them is pending. Results are checked against serial formulas. */
#include "mtest.h"

#define NOPS 12
#define N    1000

static int rank, size;
static int fin[8], fout[8]; /* a persistent allreduce freed while active (persistent()) */

static void add_user(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    for (int i = 0; i < *len; i++)
        ((int *)inout)[i] += ((int *)in)[i];
}

/* Many different collectives outstanding on two communicators, one blocking collective among
 * them, completed in the order `how` says. */
static void many_outstanding(int how, int round)
{
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    int *bc = malloc(N * sizeof(int)), *ar_in = malloc(N * sizeof(int)), *ar = malloc(N * sizeof(int));
    int *a2a_s = malloc((size_t)size * 4 * sizeof(int)), *a2a_r = malloc((size_t)size * 4 * sizeof(int));
    int *ga = malloc((size_t)size * 3 * sizeof(int)), mine3[3], sc = 0, ex = -1, red = 0, bc2[5];
    int *ag = malloc((size_t)size * sizeof(int)), rs_in[64], rs = 0;
    double d_in = rank + 0.5, d_out = 0;
    for (int i = 0; i < N; i++) {
        bc[i] = rank == size - 1 ? i * 7 + round : -1;
        ar_in[i] = rank * 1000 + i;
    }
    for (int p = 0; p < size; p++)
        for (int k = 0; k < 4; k++)
            a2a_s[p * 4 + k] = rank * 100 + p * 10 + k;
    for (int k = 0; k < 3; k++)
        mine3[k] = rank * 3 + k + round;
    for (int i = 0; i < size; i++)
        rs_in[i] = rank + i;
    for (int k = 0; k < 5; k++)
        bc2[k] = rank == 0 ? 50 + k : 0;

    MPI_Request rq[NOPS];
    int n = 0;
    MPI_Ibcast(bc, N, MPI_INT, size - 1, MPI_COMM_WORLD, &rq[n++]);
    MPI_Iallreduce(ar_in, ar, N, MPI_INT, MPI_SUM, dup, &rq[n++]);
    MPI_Ialltoall(a2a_s, 4, MPI_INT, a2a_r, 4, MPI_INT, MPI_COMM_WORLD, &rq[n++]);
    MPI_Igather(mine3, 3, MPI_INT, ga, 3, MPI_INT, 0, dup, &rq[n++]);
    MPI_Iscan(&rank, &sc, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq[n++]);
    MPI_Iexscan(&rank, &ex, 1, MPI_INT, MPI_SUM, dup, &rq[n++]);
    MPI_Ibarrier(MPI_COMM_WORLD, &rq[n++]);
    MPI_Ireduce(&rank, &red, 1, MPI_INT, MPI_MAX, size / 2, MPI_COMM_WORLD, &rq[n++]);
    MPI_Iallgather(&rank, 1, MPI_INT, ag, 1, MPI_INT, dup, &rq[n++]);
    MPI_Ireduce_scatter_block(rs_in, &rs, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq[n++]);
    MPI_Ibcast(bc2, 5, MPI_INT, 0, dup, &rq[n++]);
    /* a blocking collective on the same communicator while the others are in flight */
    MPI_Allreduce(&d_in, &d_out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Iallreduce(MPI_IN_PLACE, &d_in, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD, &rq[n++]);
    CHECK(n == NOPS, "ops %d", n);

    if (how == 0) {
        CHECK(MPI_Waitall(n, rq, MPI_STATUSES_IGNORE) == MPI_SUCCESS, "waitall");
    } else if (how == 1) { /* in reverse order */
        for (int i = n - 1; i >= 0; i--)
            MPI_Wait(&rq[i], MPI_STATUS_IGNORE);
    } else if (how == 2) {
        for (int left = n; left > 0; left--) {
            int idx;
            MPI_Waitany(n, rq, &idx, MPI_STATUS_IGNORE);
            CHECK(idx != MPI_UNDEFINED && rq[idx] == MPI_REQUEST_NULL, "waitany %d", idx);
        }
    } else if (how == 3) {
        int left = n;
        while (left > 0) {
            int idx, flag;
            MPI_Testany(n, rq, &idx, &flag, MPI_STATUS_IGNORE);
            if (flag && idx != MPI_UNDEFINED)
                left--;
        }
    } else {
        int left = n, outc, idx[NOPS];
        while (left > 0) {
            MPI_Waitsome(n, rq, &outc, idx, MPI_STATUSES_IGNORE);
            CHECK(outc > 0 && outc != MPI_UNDEFINED, "waitsome %d", outc);
            left -= outc;
        }
    }
    for (int i = 0; i < n; i++)
        CHECK(rq[i] == MPI_REQUEST_NULL, "request %d not freed", i);

    for (int i = 0; i < N; i++) {
        CHECK(bc[i] == i * 7 + round, "bcast[%d] %d", i, bc[i]);
        CHECK(ar[i] == 1000 * size * (size - 1) / 2 + size * i, "allreduce[%d] %d", i, ar[i]);
    }
    for (int p = 0; p < size; p++)
        for (int k = 0; k < 4; k++)
            CHECK(a2a_r[p * 4 + k] == p * 100 + rank * 10 + k, "alltoall from %d[%d] %d", p, k, a2a_r[p * 4 + k]);
    if (rank == 0)
        for (int p = 0; p < size; p++)
            for (int k = 0; k < 3; k++)
                CHECK(ga[p * 3 + k] == p * 3 + k + round, "gather %d[%d]", p, k);
    CHECK(sc == rank * (rank + 1) / 2, "scan %d", sc);
    if (rank > 0)
        CHECK(ex == rank * (rank - 1) / 2, "exscan %d", ex);
    if (rank == size / 2)
        CHECK(red == size - 1, "reduce max %d", red);
    for (int p = 0; p < size; p++)
        CHECK(ag[p] == p, "allgather[%d] %d", p, ag[p]);
    CHECK(rs == size * (size - 1) / 2 + size * rank, "reduce_scatter_block %d", rs);
    for (int k = 0; k < 5; k++)
        CHECK(bc2[k] == 50 + k, "bcast on dup[%d] %d", k, bc2[k]);
    CHECK(d_out == size * (size - 1) / 2.0 + 0.5 * size, "blocking allreduce %g", d_out);
    CHECK(d_in == size - 1 + 0.5, "in-place iallreduce max %g", d_in);
    free(bc);
    free(ar_in);
    free(ar);
    free(a2a_s);
    free(a2a_r);
    free(ga);
    free(ag);
    MPI_Comm_free(&dup);
}

/* Persistent collectives: started several times with new contents, alone and together. */
static void persistent(void)
{
    int in[8] = { 0 }, out[8], bbuf[16], a2a_s[64], a2a_r[64];
    MPI_Request rq[4];
    MPI_Allreduce_init(in, out, 8, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &rq[0]);
    MPI_Bcast_init(bbuf, 16, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &rq[1]);
    MPI_Alltoall_init(a2a_s, 2, MPI_INT, a2a_r, 2, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL, &rq[2]);
    MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &rq[3]);
    /* an inactive persistent request completes at once */
    int flag = 0;
    MPI_Test(&rq[0], &flag, MPI_STATUS_IGNORE);
    CHECK(flag && rq[0] != MPI_REQUEST_NULL, "inactive persistent request: flag %d", flag);
    for (int it = 0; it < 6; it++) {
        for (int k = 0; k < 8; k++)
            in[k] = rank * it + k;
        for (int k = 0; k < 16; k++)
            bbuf[k] = rank == 0 ? it * 100 + k : -1;
        for (int p = 0; p < size && p < 32; p++) {
            a2a_s[2 * p] = rank + it;
            a2a_s[2 * p + 1] = p - it;
        }
        if (it % 2) {
            MPI_Startall(4, rq);
            MPI_Waitall(4, rq, MPI_STATUSES_IGNORE);
        } else {
            for (int i = 3; i >= 0; i--)
                MPI_Start(&rq[i]);
            for (int i = 0; i < 4; i++)
                MPI_Wait(&rq[i], MPI_STATUS_IGNORE);
        }
        for (int i = 0; i < 4; i++)
            CHECK(rq[i] != MPI_REQUEST_NULL, "persistent request %d freed by a wait", i);
        for (int k = 0; k < 8; k++)
            CHECK(out[k] == it * size * (size - 1) / 2 + size * k, "persistent allreduce it %d [%d] %d", it, k, out[k]);
        for (int k = 0; k < 16; k++)
            CHECK(bbuf[k] == it * 100 + k, "persistent bcast it %d [%d] %d", it, k, bbuf[k]);
        for (int p = 0; p < size && p < 32; p++)
            CHECK(a2a_r[2 * p] == p + it && a2a_r[2 * p + 1] == rank - it, "persistent alltoall it %d from %d", it, p);
    }
    for (int i = 0; i < 4; i++)
        MPI_Request_free(&rq[i]);
    /* freed while active: the operation still completes -- by MPI_Finalize at the latest; its
     * (static) output is checked after MPI_Finalize (main), when no thread of the library can
     * be writing it any more */
    for (int k = 0; k < 8; k++) {
        fin[k] = rank + k;
        fout[k] = -1;
    }
    MPI_Request r;
    MPI_Allreduce_init(fin, fout, 8, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
    MPI_Start(&r);
    MPI_Request_free(&r);
    CHECK(r == MPI_REQUEST_NULL, "freed request handle");
}

/* Handles freed while the operation using them is pending. */
static void freed_meanwhile(void)
{
    MPI_Op op;
    MPI_Op_create(add_user, 1, &op);
    int v[4] = { rank, rank + 1, rank + 2, rank + 3 }, s[4];
    MPI_Request r[3];
    MPI_Iallreduce(v, s, 4, MPI_INT, op, MPI_COMM_WORLD, &r[0]);
    MPI_Op_free(&op);
    CHECK(op == MPI_OP_NULL, "op handle");

    MPI_Datatype vec;
    MPI_Type_vector(5, 1, 3, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    int b[15];
    for (int i = 0; i < 15; i++)
        b[i] = rank == 0 ? 1000 + i : -i;
    MPI_Ibcast(b, 1, vec, 0, MPI_COMM_WORLD, &r[1]);
    MPI_Type_free(&vec);

    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Ibarrier(dup, &r[2]);
    MPI_Comm_free(&dup);

    MPI_Waitall(3, r, MPI_STATUSES_IGNORE);
    for (int k = 0; k < 4; k++)
        CHECK(s[k] == size * (size - 1) / 2 + size * k, "user-op allreduce [%d] %d", k, s[k]);
    for (int i = 0; i < 15; i++)
        CHECK(b[i] == (i % 3 == 0 ? 1000 + i : (rank == 0 ? 1000 + i : -i)), "vector bcast [%d] %d", i, b[i]);
}

/* Errors are reported by the starting call. */
static void errors(void)
{
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Request r = MPI_REQUEST_NULL;
    int x = 0, cls;
    int rc = MPI_Ibcast(&x, 1, MPI_INT, size, MPI_COMM_WORLD, &r);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_ROOT && r == MPI_REQUEST_NULL, "Ibcast bad root: class %d", cls);
    rc = MPI_Iallreduce(&x, &x, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, NULL);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_ARG || cls == MPI_ERR_BUFFER, "Iallreduce null request: class %d", cls);
    rc = MPI_Ibarrier(MPI_COMM_NULL, &r);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_COMM, "Ibarrier null comm: class %d", cls);
    rc = MPI_Allreduce_init(&x, &x + 1, 1, MPI_DATATYPE_NULL, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_TYPE, "Allreduce_init null type: class %d", cls);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int round = 0; round < 10; round++)
        many_outstanding(round % 5, round);
    persistent();
    freed_meanwhile();
    errors();
    MPI_Finalize();
    for (int k = 0; k < 8; k++)
        if (fout[k] != size * (size - 1) / 2 + size * k) {
            fprintf(stderr,
                    "FAIL: [rank %d] a persistent allreduce freed while active did not complete by "
                    "MPI_Finalize: [%d] = %d\n",
                    rank, k, fout[k]);
            return 1;
        }
    return 0;
}
