/* Every constructor -- every MPI function that returns a new object (or a new reference to one)
 * through an output handle: communicators, groups, datatypes, ops, error handlers, info objects,
 * keyvals, windows, sessions, requests, messages -- sets that handle to the null handle when it
 * fails (MPI_Cart_create left it untouched). A table: each row calls one constructor with a bad
 * argument under MPI_ERRORS_RETURN, its output preset to a sentinel, and checks the error class
 * and that the output came back as the null handle. Where a call can fail after it made its object
 * (MPI_Ibsend without a buffer, a send to a bad rank), a row provokes that too. Constructors that
 * take no argument that can be wrong (MPI_Info_create, MPI_Comm_create_keyval, ...) can fail only
 * for lack of memory and have no row. The bad arguments are the same at every rank, so the
 * collective constructors fail everywhere before they communicate. */
#include "mtest.h"

#include <stdint.h>

static int rank, size, rows, errs;
/* a foreign handle: memory that is no object of the library */
static long junk[16];
#define JUNK(T) ((T)(void *)junk)

#define SENTINEL 0x5eed

/* One row: OUT is a variable of type T preset to the sentinel; CALL uses &OUT. */
#define ROW(T, NULLH, CLS, CALL)                                                                                       \
    do {                                                                                                               \
        T out = (T)(uintptr_t)SENTINEL;                                                                                \
        int rc_ = (CALL);                                                                                              \
        check(#CALL, rc_, CLS, out == (NULLH));                                                                        \
    } while (0)
#define R_COMM(CLS, CALL)  ROW(MPI_Comm, MPI_COMM_NULL, CLS, CALL)
#define R_GROUP(CLS, CALL) ROW(MPI_Group, MPI_GROUP_NULL, CLS, CALL)
#define R_TYPE(CLS, CALL)  ROW(MPI_Datatype, MPI_DATATYPE_NULL, CLS, CALL)
#define R_REQ(CLS, CALL)   ROW(MPI_Request, MPI_REQUEST_NULL, CLS, CALL)
#define R_INFO(CLS, CALL)  ROW(MPI_Info, MPI_INFO_NULL, CLS, CALL)
#define R_ERRH(CLS, CALL)  ROW(MPI_Errhandler, MPI_ERRHANDLER_NULL, CLS, CALL)
#define R_WIN(CLS, CALL)   ROW(MPI_Win, MPI_WIN_NULL, CLS, CALL)
#define R_OP(CLS, CALL)    ROW(MPI_Op, MPI_OP_NULL, CLS, CALL)
#define R_MSG(CLS, CALL)   ROW(MPI_Message, MPI_MESSAGE_NULL, CLS, CALL)
#define R_SESS(CLS, CALL)  ROW(MPI_Session, MPI_SESSION_NULL, CLS, CALL)
#define R_FILE(CLS, CALL)  ROW(MPI_File, MPI_FILE_NULL, CLS, CALL)

static void check(const char *call, int rc, int cls, int is_null)
{
    rows++;
    int got = -1;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &got);
    if (got != cls) {
        printf("FAIL %s: error class %d, expected %d (%s)\n", call, got, cls, rc ? mtest_errstr(rc) : "success");
        errs++;
    }
    if (!is_null) {
        printf("FAIL %s: the output handle is not the null handle after the error\n", call);
        errs++;
    }
}

static int fn_dummy(void *in, void *inout, int *len, MPI_Datatype *t)
{
    (void)in, (void)inout, (void)len, (void)t;
    return 0;
}

static void point_to_point(void)
{
    int b[4] = { 0 }, bad = size + 3;
    MPI_Comm W = MPI_COMM_WORLD, N = MPI_COMM_NULL;
    R_REQ(MPI_ERR_COMM, MPI_Isend(b, 1, MPI_INT, 0, 0, N, &out));
    R_REQ(MPI_ERR_RANK, MPI_Isend(b, 1, MPI_INT, bad, 0, W, &out));
    R_REQ(MPI_ERR_TAG, MPI_Isend_c(b, 1, MPI_INT, 0, -4, W, &out));
    R_REQ(MPI_ERR_COUNT, MPI_Issend(b, -1, MPI_INT, 0, 0, W, &out));
    R_REQ(MPI_ERR_TYPE, MPI_Issend_c(b, 1, MPI_DATATYPE_NULL, 0, 0, W, &out));
    R_REQ(MPI_ERR_COMM, MPI_Irsend(b, 1, MPI_INT, 0, 0, N, &out));
    R_REQ(MPI_ERR_COMM, MPI_Irsend_c(b, 1, MPI_INT, 0, 0, N, &out));
    R_REQ(MPI_ERR_COMM, MPI_Ibsend(b, 1, MPI_INT, 0, 0, N, &out));
    /* no buffer attached: the request was made, then the buffered copy failed */
    R_REQ(MPI_ERR_BUFFER, MPI_Ibsend(b, 1, MPI_INT, 0, 0, W, &out));
    R_REQ(MPI_ERR_BUFFER, MPI_Ibsend_c(b, 1, MPI_INT, 0, 0, W, &out));
    R_REQ(MPI_ERR_RANK, MPI_Send_init(b, 1, MPI_INT, bad, 0, W, &out));
    R_REQ(MPI_ERR_COMM, MPI_Send_init_c(b, 1, MPI_INT, 0, 0, N, &out));
    R_REQ(MPI_ERR_COMM, MPI_Ssend_init(b, 1, MPI_INT, 0, 0, N, &out));
    R_REQ(MPI_ERR_COMM, MPI_Ssend_init_c(b, 1, MPI_INT, 0, 0, N, &out));
    R_REQ(MPI_ERR_COMM, MPI_Rsend_init(b, 1, MPI_INT, 0, 0, N, &out));
    R_REQ(MPI_ERR_COMM, MPI_Rsend_init_c(b, 1, MPI_INT, 0, 0, N, &out));
    R_REQ(MPI_ERR_COMM, MPI_Bsend_init(b, 1, MPI_INT, 0, 0, N, &out));
    R_REQ(MPI_ERR_COMM, MPI_Bsend_init_c(b, 1, MPI_INT, 0, 0, N, &out));
    R_REQ(MPI_ERR_RANK, MPI_Irecv(b, 1, MPI_INT, bad, 0, W, &out));
    R_REQ(MPI_ERR_COMM, MPI_Irecv_c(b, 1, MPI_INT, 0, 0, N, &out));
    R_REQ(MPI_ERR_TAG, MPI_Recv_init(b, 1, MPI_INT, 0, -7, W, &out));
    R_REQ(MPI_ERR_COMM, MPI_Recv_init_c(b, 1, MPI_INT, 0, 0, N, &out));
    R_REQ(MPI_ERR_COMM, MPI_Isendrecv(b, 1, MPI_INT, 0, 0, b + 1, 1, MPI_INT, 0, 0, N, &out));
    R_REQ(MPI_ERR_RANK, MPI_Isendrecv_c(b, 1, MPI_INT, bad, 0, b + 1, 1, MPI_INT, 0, 0, W, &out));
    R_REQ(MPI_ERR_COMM, MPI_Isendrecv_replace(b, 1, MPI_INT, 0, 0, 0, 0, N, &out));
    R_REQ(MPI_ERR_TYPE, MPI_Isendrecv_replace_c(b, 1, MPI_DATATYPE_NULL, 0, 0, 0, 0, W, &out));
    {
        MPI_Message m = MPI_MESSAGE_NULL;
        R_REQ(MPI_ERR_REQUEST, MPI_Imrecv(b, 1, MPI_INT, &m, &out));
        R_REQ(MPI_ERR_REQUEST, MPI_Imrecv_c(b, 1, MPI_INT, &m, &out));
    }
    R_MSG(MPI_ERR_COMM, MPI_Mprobe(0, 0, N, &out, MPI_STATUS_IGNORE));
    {
        int flag;
        R_MSG(MPI_ERR_RANK, MPI_Improbe(bad, 0, W, &flag, &out, MPI_STATUS_IGNORE));
    }
    R_REQ(MPI_ERR_COMM, MPI_Comm_iflush_buffer(N, &out));
    R_REQ(MPI_ERR_SESSION, MPI_Session_iflush_buffer(MPI_SESSION_NULL, &out));
    R_REQ(MPI_ERR_COMM, MPI_Psend_init(b, 1, 1, MPI_INT, 0, 0, N, MPI_INFO_NULL, &out));
    R_REQ(MPI_ERR_RANK, MPI_Precv_init(b, 1, 1, MPI_INT, MPI_ANY_SOURCE, 0, W, MPI_INFO_NULL, &out));
}

static void collectives(void)
{
    int s[64] = { 0 }, r[64] = { 0 }, c[64], d[64];
    MPI_Count cc[64];
    MPI_Aint dd[64];
    MPI_Datatype t[64];
    for (int i = 0; i < 64; i++) {
        c[i] = 1;
        d[i] = i;
        cc[i] = 1;
        dd[i] = i;
        t[i] = MPI_INT;
    }
    MPI_Comm N = MPI_COMM_NULL;
    MPI_Info I = MPI_INFO_NULL;
    const int E = MPI_ERR_COMM;
    R_REQ(E, MPI_Ibarrier(N, &out));
    R_REQ(E, MPI_Barrier_init(N, I, &out));
    R_REQ(E, MPI_Ibcast(s, 1, MPI_INT, 0, N, &out));
    R_REQ(E, MPI_Ibcast_c(s, 1, MPI_INT, 0, N, &out));
    R_REQ(E, MPI_Bcast_init(s, 1, MPI_INT, 0, N, I, &out));
    R_REQ(E, MPI_Bcast_init_c(s, 1, MPI_INT, 0, N, I, &out));
    R_REQ(E, MPI_Igather(s, 1, MPI_INT, r, 1, MPI_INT, 0, N, &out));
    R_REQ(E, MPI_Igather_c(s, 1, MPI_INT, r, 1, MPI_INT, 0, N, &out));
    R_REQ(E, MPI_Gather_init(s, 1, MPI_INT, r, 1, MPI_INT, 0, N, I, &out));
    R_REQ(E, MPI_Gather_init_c(s, 1, MPI_INT, r, 1, MPI_INT, 0, N, I, &out));
    R_REQ(E, MPI_Igatherv(s, 1, MPI_INT, r, c, d, MPI_INT, 0, N, &out));
    R_REQ(E, MPI_Igatherv_c(s, 1, MPI_INT, r, cc, dd, MPI_INT, 0, N, &out));
    R_REQ(E, MPI_Gatherv_init(s, 1, MPI_INT, r, c, d, MPI_INT, 0, N, I, &out));
    R_REQ(E, MPI_Gatherv_init_c(s, 1, MPI_INT, r, cc, dd, MPI_INT, 0, N, I, &out));
    R_REQ(E, MPI_Iscatter(s, 1, MPI_INT, r, 1, MPI_INT, 0, N, &out));
    R_REQ(E, MPI_Iscatter_c(s, 1, MPI_INT, r, 1, MPI_INT, 0, N, &out));
    R_REQ(E, MPI_Scatter_init(s, 1, MPI_INT, r, 1, MPI_INT, 0, N, I, &out));
    R_REQ(E, MPI_Scatter_init_c(s, 1, MPI_INT, r, 1, MPI_INT, 0, N, I, &out));
    R_REQ(E, MPI_Iscatterv(s, c, d, MPI_INT, r, 1, MPI_INT, 0, N, &out));
    R_REQ(E, MPI_Iscatterv_c(s, cc, dd, MPI_INT, r, 1, MPI_INT, 0, N, &out));
    R_REQ(E, MPI_Scatterv_init(s, c, d, MPI_INT, r, 1, MPI_INT, 0, N, I, &out));
    R_REQ(E, MPI_Scatterv_init_c(s, cc, dd, MPI_INT, r, 1, MPI_INT, 0, N, I, &out));
    R_REQ(E, MPI_Iallgather(s, 1, MPI_INT, r, 1, MPI_INT, N, &out));
    R_REQ(E, MPI_Iallgather_c(s, 1, MPI_INT, r, 1, MPI_INT, N, &out));
    R_REQ(E, MPI_Allgather_init(s, 1, MPI_INT, r, 1, MPI_INT, N, I, &out));
    R_REQ(E, MPI_Allgather_init_c(s, 1, MPI_INT, r, 1, MPI_INT, N, I, &out));
    R_REQ(E, MPI_Iallgatherv(s, 1, MPI_INT, r, c, d, MPI_INT, N, &out));
    R_REQ(E, MPI_Iallgatherv_c(s, 1, MPI_INT, r, cc, dd, MPI_INT, N, &out));
    R_REQ(E, MPI_Allgatherv_init(s, 1, MPI_INT, r, c, d, MPI_INT, N, I, &out));
    R_REQ(E, MPI_Allgatherv_init_c(s, 1, MPI_INT, r, cc, dd, MPI_INT, N, I, &out));
    R_REQ(E, MPI_Ialltoall(s, 1, MPI_INT, r, 1, MPI_INT, N, &out));
    R_REQ(E, MPI_Ialltoall_c(s, 1, MPI_INT, r, 1, MPI_INT, N, &out));
    R_REQ(E, MPI_Alltoall_init(s, 1, MPI_INT, r, 1, MPI_INT, N, I, &out));
    R_REQ(E, MPI_Alltoall_init_c(s, 1, MPI_INT, r, 1, MPI_INT, N, I, &out));
    R_REQ(E, MPI_Ialltoallv(s, c, d, MPI_INT, r, c, d, MPI_INT, N, &out));
    R_REQ(E, MPI_Ialltoallv_c(s, cc, dd, MPI_INT, r, cc, dd, MPI_INT, N, &out));
    R_REQ(E, MPI_Alltoallv_init(s, c, d, MPI_INT, r, c, d, MPI_INT, N, I, &out));
    R_REQ(E, MPI_Alltoallv_init_c(s, cc, dd, MPI_INT, r, cc, dd, MPI_INT, N, I, &out));
    R_REQ(E, MPI_Ialltoallw(s, c, d, t, r, c, d, t, N, &out));
    R_REQ(E, MPI_Ialltoallw_c(s, cc, dd, t, r, cc, dd, t, N, &out));
    R_REQ(E, MPI_Alltoallw_init(s, c, d, t, r, c, d, t, N, I, &out));
    R_REQ(E, MPI_Alltoallw_init_c(s, cc, dd, t, r, cc, dd, t, N, I, &out));
    R_REQ(E, MPI_Ireduce(s, r, 1, MPI_INT, MPI_SUM, 0, N, &out));
    R_REQ(E, MPI_Ireduce_c(s, r, 1, MPI_INT, MPI_SUM, 0, N, &out));
    R_REQ(E, MPI_Reduce_init(s, r, 1, MPI_INT, MPI_SUM, 0, N, I, &out));
    R_REQ(E, MPI_Reduce_init_c(s, r, 1, MPI_INT, MPI_SUM, 0, N, I, &out));
    R_REQ(E, MPI_Iallreduce(s, r, 1, MPI_INT, MPI_SUM, N, &out));
    R_REQ(E, MPI_Iallreduce_c(s, r, 1, MPI_INT, MPI_SUM, N, &out));
    R_REQ(E, MPI_Allreduce_init(s, r, 1, MPI_INT, MPI_SUM, N, I, &out));
    R_REQ(E, MPI_Allreduce_init_c(s, r, 1, MPI_INT, MPI_SUM, N, I, &out));
    R_REQ(E, MPI_Ireduce_scatter(s, r, c, MPI_INT, MPI_SUM, N, &out));
    R_REQ(E, MPI_Ireduce_scatter_c(s, r, cc, MPI_INT, MPI_SUM, N, &out));
    R_REQ(E, MPI_Reduce_scatter_init(s, r, c, MPI_INT, MPI_SUM, N, I, &out));
    R_REQ(E, MPI_Reduce_scatter_init_c(s, r, cc, MPI_INT, MPI_SUM, N, I, &out));
    R_REQ(E, MPI_Ireduce_scatter_block(s, r, 1, MPI_INT, MPI_SUM, N, &out));
    R_REQ(E, MPI_Ireduce_scatter_block_c(s, r, 1, MPI_INT, MPI_SUM, N, &out));
    R_REQ(E, MPI_Reduce_scatter_block_init(s, r, 1, MPI_INT, MPI_SUM, N, I, &out));
    R_REQ(E, MPI_Reduce_scatter_block_init_c(s, r, 1, MPI_INT, MPI_SUM, N, I, &out));
    R_REQ(E, MPI_Iscan(s, r, 1, MPI_INT, MPI_SUM, N, &out));
    R_REQ(E, MPI_Iscan_c(s, r, 1, MPI_INT, MPI_SUM, N, &out));
    R_REQ(E, MPI_Scan_init(s, r, 1, MPI_INT, MPI_SUM, N, I, &out));
    R_REQ(E, MPI_Scan_init_c(s, r, 1, MPI_INT, MPI_SUM, N, I, &out));
    R_REQ(E, MPI_Iexscan(s, r, 1, MPI_INT, MPI_SUM, N, &out));
    R_REQ(E, MPI_Iexscan_c(s, r, 1, MPI_INT, MPI_SUM, N, &out));
    R_REQ(E, MPI_Exscan_init(s, r, 1, MPI_INT, MPI_SUM, N, I, &out));
    R_REQ(E, MPI_Exscan_init_c(s, r, 1, MPI_INT, MPI_SUM, N, I, &out));
    /* an argument error of the collective itself, past the request checks */
    R_REQ(MPI_ERR_ROOT, MPI_Ibcast(s, 1, MPI_INT, size + 1, MPI_COMM_WORLD, &out));
    R_REQ(MPI_ERR_BUFFER, MPI_Allreduce_init(s, s, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD, I, &out));
    /* neighbourhood collectives on a communicator without a topology */
    MPI_Comm W = MPI_COMM_WORLD;
    const int T = MPI_ERR_TOPOLOGY;
    R_REQ(T, MPI_Ineighbor_allgather(s, 1, MPI_INT, r, 1, MPI_INT, W, &out));
    R_REQ(T, MPI_Ineighbor_allgather_c(s, 1, MPI_INT, r, 1, MPI_INT, W, &out));
    R_REQ(T, MPI_Neighbor_allgather_init(s, 1, MPI_INT, r, 1, MPI_INT, W, I, &out));
    R_REQ(T, MPI_Neighbor_allgather_init_c(s, 1, MPI_INT, r, 1, MPI_INT, W, I, &out));
    R_REQ(T, MPI_Ineighbor_allgatherv(s, 1, MPI_INT, r, c, d, MPI_INT, W, &out));
    R_REQ(T, MPI_Ineighbor_allgatherv_c(s, 1, MPI_INT, r, cc, dd, MPI_INT, W, &out));
    R_REQ(T, MPI_Neighbor_allgatherv_init(s, 1, MPI_INT, r, c, d, MPI_INT, W, I, &out));
    R_REQ(T, MPI_Neighbor_allgatherv_init_c(s, 1, MPI_INT, r, cc, dd, MPI_INT, W, I, &out));
    R_REQ(T, MPI_Ineighbor_alltoall(s, 1, MPI_INT, r, 1, MPI_INT, W, &out));
    R_REQ(T, MPI_Ineighbor_alltoall_c(s, 1, MPI_INT, r, 1, MPI_INT, W, &out));
    R_REQ(T, MPI_Neighbor_alltoall_init(s, 1, MPI_INT, r, 1, MPI_INT, W, I, &out));
    R_REQ(T, MPI_Neighbor_alltoall_init_c(s, 1, MPI_INT, r, 1, MPI_INT, W, I, &out));
    R_REQ(T, MPI_Ineighbor_alltoallv(s, c, d, MPI_INT, r, c, d, MPI_INT, W, &out));
    R_REQ(T, MPI_Ineighbor_alltoallv_c(s, cc, dd, MPI_INT, r, cc, dd, MPI_INT, W, &out));
    R_REQ(T, MPI_Neighbor_alltoallv_init(s, c, d, MPI_INT, r, c, d, MPI_INT, W, I, &out));
    R_REQ(T, MPI_Neighbor_alltoallv_init_c(s, cc, dd, MPI_INT, r, cc, dd, MPI_INT, W, I, &out));
    R_REQ(T, MPI_Ineighbor_alltoallw(s, c, dd, t, r, c, dd, t, W, &out));
    R_REQ(T, MPI_Ineighbor_alltoallw_c(s, cc, dd, t, r, cc, dd, t, W, &out));
    R_REQ(T, MPI_Neighbor_alltoallw_init(s, c, dd, t, r, c, dd, t, W, I, &out));
    R_REQ(T, MPI_Neighbor_alltoallw_init_c(s, cc, dd, t, r, cc, dd, t, W, I, &out));
    /* the ops */
    R_OP(MPI_ERR_ARG, MPI_Op_create(NULL, 1, &out));
    R_OP(MPI_ERR_ARG, MPI_Op_create_c(NULL, 1, &out));
    (void)fn_dummy;
}

static void datatypes(void)
{
    int bl[2] = { 1, 1 }, ds[2] = { 0, 1 }, sz[1] = { 4 }, sub[1] = { 5 }, st[1] = { 0 }, g[1] = { 4 };
    int distr[1] = { MPI_DISTRIBUTE_BLOCK }, darg[1] = { MPI_DISTRIBUTE_DFLT_DARG }, ps[1] = { 1 };
    MPI_Count cbl[2] = { 1, 1 }, cds[2] = { 0, 1 }, csz[1] = { 4 }, csub[1] = { 5 }, cst[1] = { 0 }, cg[1] = { 4 };
    MPI_Aint ad[2] = { 0, 8 };
    MPI_Datatype ty[2] = { MPI_INT, MPI_DATATYPE_NULL }, D = MPI_DATATYPE_NULL;
    R_TYPE(MPI_ERR_COUNT, MPI_Type_contiguous(-1, MPI_INT, &out));
    R_TYPE(MPI_ERR_TYPE, MPI_Type_contiguous_c(1, D, &out));
    R_TYPE(MPI_ERR_COUNT, MPI_Type_vector(-2, 1, 1, MPI_INT, &out));
    R_TYPE(MPI_ERR_COUNT, MPI_Type_vector_c(2, -1, 1, MPI_INT, &out));
    R_TYPE(MPI_ERR_TYPE, MPI_Type_create_hvector(2, 1, 8, D, &out));
    R_TYPE(MPI_ERR_COUNT, MPI_Type_create_hvector_c(-2, 1, 8, MPI_INT, &out));
    R_TYPE(MPI_ERR_COUNT, MPI_Type_hvector(-2, 1, 8, MPI_INT, &out));
    R_TYPE(MPI_ERR_COUNT, MPI_Type_indexed(-1, bl, ds, MPI_INT, &out));
    R_TYPE(MPI_ERR_TYPE, MPI_Type_indexed_c(2, cbl, cds, D, &out));
    R_TYPE(MPI_ERR_TYPE, MPI_Type_create_hindexed(2, bl, ad, D, &out));
    R_TYPE(MPI_ERR_COUNT, MPI_Type_create_hindexed_c(-1, cbl, ad, MPI_INT, &out));
    R_TYPE(MPI_ERR_TYPE, MPI_Type_hindexed(2, bl, ad, D, &out));
    R_TYPE(MPI_ERR_COUNT, MPI_Type_create_indexed_block(2, -1, ds, MPI_INT, &out));
    R_TYPE(MPI_ERR_TYPE, MPI_Type_create_indexed_block_c(2, 1, cds, D, &out));
    R_TYPE(MPI_ERR_TYPE, MPI_Type_create_hindexed_block(2, 1, ad, D, &out));
    R_TYPE(MPI_ERR_COUNT, MPI_Type_create_hindexed_block_c(2, -1, ad, MPI_INT, &out));
    R_TYPE(MPI_ERR_TYPE, MPI_Type_create_struct(2, bl, ad, ty, &out));
    R_TYPE(MPI_ERR_TYPE, MPI_Type_create_struct_c(2, cbl, ad, ty, &out));
    R_TYPE(MPI_ERR_TYPE, MPI_Type_struct(2, bl, ad, ty, &out));
    /* a subarray larger than its array */
    R_TYPE(MPI_ERR_ARG, MPI_Type_create_subarray(1, sz, sub, st, MPI_ORDER_C, MPI_INT, &out));
    R_TYPE(MPI_ERR_ARG, MPI_Type_create_subarray_c(1, csz, csub, cst, MPI_ORDER_C, MPI_INT, &out));
    (void)cg;
    /* rank outside the process grid */
    R_TYPE(MPI_ERR_RANK, MPI_Type_create_darray(1, 3, 1, g, distr, darg, ps, MPI_ORDER_C, MPI_INT, &out));
    R_TYPE(MPI_ERR_RANK, MPI_Type_create_darray_c(1, 3, 1, cg, distr, darg, ps, MPI_ORDER_C, MPI_INT, &out));
    R_TYPE(MPI_ERR_TYPE, MPI_Type_create_resized(D, 0, 8, &out));
    R_TYPE(MPI_ERR_TYPE, MPI_Type_create_resized_c(D, 0, 8, &out));
    R_TYPE(MPI_ERR_TYPE, MPI_Type_dup(D, &out));
    R_TYPE(MPI_ERR_ARG, MPI_Type_create_f90_integer(1000, &out));
    R_TYPE(MPI_ERR_ARG, MPI_Type_create_f90_real(1000, MPI_UNDEFINED, &out));
    R_TYPE(MPI_ERR_ARG, MPI_Type_create_f90_complex(1000, MPI_UNDEFINED, &out));
    R_TYPE(MPI_ERR_ARG, MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 3, &out));
    R_TYPE(MPI_ERR_TYPE, MPI_Type_get_value_index(D, MPI_INT, &out));
}

static void objects(void)
{
    MPI_Comm W = MPI_COMM_WORLD, N = MPI_COMM_NULL;
    MPI_Group G = MPI_GROUP_NULL, wg;
    MPI_CHECK(MPI_Comm_group(W, &wg));
    int ranks[1] = { size + 5 }, range[1][3] = { { 0, size + 5, 1 } };
    /* groups */
    R_GROUP(MPI_ERR_COMM, MPI_Comm_group(N, &out));
    R_GROUP(MPI_ERR_COMM, MPI_Comm_remote_group(W, &out));
    R_GROUP(MPI_ERR_GROUP, MPI_Group_union(G, wg, &out));
    R_GROUP(MPI_ERR_GROUP, MPI_Group_intersection(wg, G, &out));
    R_GROUP(MPI_ERR_GROUP, MPI_Group_difference(G, G, &out));
    R_GROUP(MPI_ERR_RANK, MPI_Group_incl(wg, 1, ranks, &out));
    R_GROUP(MPI_ERR_RANK, MPI_Group_excl(wg, 1, ranks, &out));
    R_GROUP(MPI_ERR_ARG, MPI_Group_range_incl(wg, 1, range, &out));
    R_GROUP(MPI_ERR_ARG, MPI_Group_range_excl(wg, 1, range, &out));
    R_GROUP(MPI_ERR_SESSION, MPI_Group_from_session_pset(MPI_SESSION_NULL, "mpi://WORLD", &out));
    R_GROUP(MPI_ERR_WIN, MPI_Win_get_group(MPI_WIN_NULL, &out));
    /* communicators */
    int dims[2] = { size + 1, 1 }, periods[2] = { 0, 0 }, remain[1] = { 1 }, idx[1] = { 0 }, edges[1] = { 0 };
    int srcs[1] = { 0 }, degs[1] = { 1 }, dsts[1] = { 0 };
    R_COMM(MPI_ERR_COMM, MPI_Comm_dup(N, &out));
    R_COMM(MPI_ERR_INFO, MPI_Comm_dup_with_info(W, JUNK(MPI_Info), &out));
    R_COMM(MPI_ERR_COMM, MPI_Comm_create(N, wg, &out));
    R_COMM(MPI_ERR_GROUP, MPI_Comm_create_group(W, G, 0, &out));
    R_COMM(MPI_ERR_GROUP, MPI_Comm_create_from_group(G, "ctor_null", MPI_INFO_NULL, MPI_ERRORS_RETURN, &out));
    R_COMM(MPI_ERR_ARG, MPI_Comm_split(W, -5, 0, &out));
    R_COMM(MPI_ERR_ARG, MPI_Comm_split_type(W, 12345, 0, MPI_INFO_NULL, &out));
    R_COMM(MPI_ERR_RANK, MPI_Intercomm_create(W, -1, W, 0, 0, &out));
    R_COMM(MPI_ERR_GROUP,
           MPI_Intercomm_create_from_groups(G, 0, wg, 0, "ctor_null", MPI_INFO_NULL, MPI_ERRORS_RETURN, &out));
    R_COMM(MPI_ERR_COMM, MPI_Intercomm_merge(W, 0, &out));
    R_COMM(MPI_ERR_DIMS, MPI_Cart_create(W, -1, dims, periods, 0, &out));
    R_COMM(MPI_ERR_DIMS, MPI_Cart_create(W, 2, dims, periods, 0, &out)); /* more processes than there are */
    R_COMM(MPI_ERR_TOPOLOGY, MPI_Cart_sub(W, remain, &out));
    R_COMM(MPI_ERR_ARG, MPI_Graph_create(W, -1, idx, edges, 0, &out));
    R_COMM(MPI_ERR_ARG, MPI_Dist_graph_create(W, -1, srcs, degs, dsts, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &out));
    R_COMM(MPI_ERR_ARG, MPI_Dist_graph_create_adjacent(W, -1, srcs, MPI_UNWEIGHTED, 1, dsts, MPI_UNWEIGHTED,
                                                       MPI_INFO_NULL, 0, &out));
    {
        MPI_Request req = (MPI_Request)(uintptr_t)SENTINEL;
        R_COMM(MPI_ERR_COMM, MPI_Comm_idup(N, &out, &req));
        check("MPI_Comm_idup's request", MPI_ERR_COMM, MPI_ERR_COMM, req == MPI_REQUEST_NULL);
        req = (MPI_Request)(uintptr_t)SENTINEL;
        R_COMM(MPI_ERR_COMM, MPI_Comm_idup_with_info(N, MPI_INFO_NULL, &out, &req));
        check("MPI_Comm_idup_with_info's request", MPI_ERR_COMM, MPI_ERR_COMM, req == MPI_REQUEST_NULL);
    }
    /* error handlers */
    R_ERRH(MPI_ERR_ARG, MPI_Comm_create_errhandler(NULL, &out));
    R_ERRH(MPI_ERR_ARG, MPI_Win_create_errhandler(NULL, &out));
    R_ERRH(MPI_ERR_ARG, MPI_Session_create_errhandler(NULL, &out));
    R_ERRH(MPI_ERR_ARG, MPI_File_create_errhandler(NULL, &out));
    R_ERRH(MPI_ERR_COMM, MPI_Comm_get_errhandler(N, &out));
    R_ERRH(MPI_ERR_WIN, MPI_Win_get_errhandler(MPI_WIN_NULL, &out));
    R_ERRH(MPI_ERR_SESSION, MPI_Session_get_errhandler(MPI_SESSION_NULL, &out));
    R_ERRH(MPI_ERR_FILE, MPI_File_get_errhandler(JUNK(MPI_File), &out));
#ifndef APTUS_NO_REMOVED_MPI1
    R_ERRH(MPI_ERR_ARG, MPI_Errhandler_create(NULL, &out));
    R_ERRH(MPI_ERR_COMM, MPI_Errhandler_get(N, &out));
#endif
    /* info objects */
    R_INFO(MPI_ERR_INFO, MPI_Info_dup(MPI_INFO_NULL, &out));
    R_INFO(MPI_ERR_COMM, MPI_Comm_get_info(N, &out));
    R_INFO(MPI_ERR_WIN, MPI_Win_get_info(MPI_WIN_NULL, &out));
    R_INFO(MPI_ERR_SESSION, MPI_Session_get_info(MPI_SESSION_NULL, &out));
    R_INFO(MPI_ERR_SESSION, MPI_Session_get_pset_info(MPI_SESSION_NULL, "mpi://WORLD", &out));
    /* sessions (with a handler that returns: an unusable handler is fatal), and a session's own
     * errors */
    R_SESS(MPI_ERR_INFO, MPI_Session_init(JUNK(MPI_Info), MPI_ERRORS_RETURN, &out));
    {
        MPI_Session s;
        MPI_CHECK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s));
        R_INFO(MPI_ERR_ARG, MPI_Session_get_pset_info(s, "mpi://NOWHERE", &out));
        R_GROUP(MPI_ERR_ARG, MPI_Group_from_session_pset(s, "mpi://NOWHERE", &out));
        MPI_CHECK(MPI_Session_finalize(&s));
    }
    /* windows */
    int *base;
    R_WIN(MPI_ERR_SIZE, MPI_Win_create(&ranks, -1, 1, MPI_INFO_NULL, W, &out));
    R_WIN(MPI_ERR_COMM, MPI_Win_create_c(&ranks, 4, 1, MPI_INFO_NULL, N, &out));
    R_WIN(MPI_ERR_DISP, MPI_Win_allocate(8, 0, MPI_INFO_NULL, W, &base, &out));
    R_WIN(MPI_ERR_SIZE, MPI_Win_allocate_c(-8, 1, MPI_INFO_NULL, W, &base, &out));
    R_WIN(MPI_ERR_COMM, MPI_Win_allocate_shared(8, 1, MPI_INFO_NULL, N, &base, &out));
    R_WIN(MPI_ERR_DISP, MPI_Win_allocate_shared_c(8, -1, MPI_INFO_NULL, W, &base, &out));
    R_WIN(MPI_ERR_INFO, MPI_Win_create_dynamic(JUNK(MPI_Info), W, &out));
    {
        int v = 1, res;
        MPI_Win wn = MPI_WIN_NULL;
        R_REQ(MPI_ERR_WIN, MPI_Rput(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, wn, &out));
        R_REQ(MPI_ERR_WIN, MPI_Rput_c(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, wn, &out));
        R_REQ(MPI_ERR_WIN, MPI_Rget(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, wn, &out));
        R_REQ(MPI_ERR_WIN, MPI_Rget_c(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, wn, &out));
        R_REQ(MPI_ERR_WIN, MPI_Raccumulate(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_SUM, wn, &out));
        R_REQ(MPI_ERR_WIN, MPI_Raccumulate_c(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_SUM, wn, &out));
        R_REQ(MPI_ERR_WIN, MPI_Rget_accumulate(&v, 1, MPI_INT, &res, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_SUM, wn, &out));
        R_REQ(MPI_ERR_WIN,
              MPI_Rget_accumulate_c(&v, 1, MPI_INT, &res, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_SUM, wn, &out));
    }
    MPI_CHECK(MPI_Group_free(&wg));
}

/* Dynamic processes that fail: their outputs are null too. */
static void dynamic_failures(void)
{
    int errcodes[1];
    char *argv[1] = { NULL };
    R_COMM(MPI_ERR_SPAWN,
           MPI_Comm_spawn("/nonexistent/ctor_null_program", argv, 1, MPI_INFO_NULL, 0, MPI_COMM_SELF, &out, errcodes));
    /* (implemented: a port not opened here, a name that is no port, a descriptor that is no socket) */
    R_COMM(MPI_ERR_PORT, MPI_Comm_accept("port", MPI_INFO_NULL, 0, MPI_COMM_SELF, &out));
    R_COMM(MPI_ERR_PORT, MPI_Comm_connect("port", MPI_INFO_NULL, 0, MPI_COMM_SELF, &out));
    R_COMM(MPI_ERR_ARG, MPI_Comm_join(-1, &out));
}

/* MPI-IO: a file that does not exist, a request on no file. */
static void files(void)
{
    int b;
    R_FILE(MPI_ERR_NO_SUCH_FILE,
           MPI_File_open(MPI_COMM_SELF, "ctor_null.no-such-dir/x", MPI_MODE_RDONLY, MPI_INFO_NULL, &out));
    R_REQ(MPI_ERR_FILE, MPI_File_iread(MPI_FILE_NULL, &b, 1, MPI_INT, &out));
    R_REQ(MPI_ERR_FILE, MPI_File_iwrite_at(JUNK(MPI_File), 0, &b, 1, MPI_INT, &out));
}

int main(int argc, char **argv)
{
    mtest_init_errors_return(&argc, &argv, &rank, &size);
    point_to_point();
    collectives();
    datatypes();
    objects();
    files();
    if (!mtest_known_bug("no_unimplemented"))
        dynamic_failures();
    if (errs)
        FAILF("%d of %d constructors left their output handle alone after an error, or failed otherwise", errs, rows);
    if (rank == 0)
        printf("ctor_null: %d constructor calls checked\n", rows);
    return mtest_finalize();
}
