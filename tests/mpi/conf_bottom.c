/* MPI_BOTTOM with datatypes whose displacements are absolute addresses (MPI_Get_address): every
 * point-to-point call and every neighbourhood collective must accept it (in the standard ABI
 * MPI_BOTTOM is the null pointer, so a null-buffer check must not refuse it).
 *  - send/recv, ssend/irecv, isend/recv, issend, rsend, bsend/ibsend, persistent send/receive,
 *    sendrecv, sendrecv_replace, probe+mrecv, improbe+imrecv, with a small struct (eager) and a
 *    large array (rendezvous);
 *  - neighbour allgather(v) and alltoall(v,w) on a periodic ring, sending and receiving at
 *    MPI_BOTTOM.
 * Point-to-point between ranks 0 and 1; the neighbourhood part on every rank. */
#include "mtest.h"

#define BIG 100000

static int rank, size;

/* The data of one message lives in separate objects, so that only absolute addresses name it. */
static int s_i[3];
static double s_d[2];
static char s_c;
static double big[BIG];

/* A struct type of absolute addresses covering s_i, s_d and s_c. */
static MPI_Datatype small_type(void)
{
    int bl[3] = { 3, 2, 1 };
    MPI_Aint disp[3];
    MPI_Datatype types[3] = { MPI_INT, MPI_DOUBLE, MPI_CHAR }, t;
    MPI_CHECK(MPI_Get_address(s_i, &disp[0]));
    MPI_CHECK(MPI_Get_address(s_d, &disp[1]));
    MPI_CHECK(MPI_Get_address(&s_c, &disp[2]));
    MPI_CHECK(MPI_Type_create_struct(3, bl, disp, types, &t));
    MPI_CHECK(MPI_Type_commit(&t));
    return t;
}

/* The whole of big[] as one absolute block (contiguous, but away from 0). */
static MPI_Datatype big_type(void)
{
    int bl = BIG;
    MPI_Aint disp;
    MPI_Datatype t;
    MPI_CHECK(MPI_Get_address(big, &disp));
    MPI_CHECK(MPI_Type_create_hindexed(1, &bl, &disp, MPI_DOUBLE, &t));
    MPI_CHECK(MPI_Type_commit(&t));
    return t;
}

static void fill_small(int seed)
{
    for (int i = 0; i < 3; i++)
        s_i[i] = seed * 10 + i;
    s_d[0] = seed + 0.5;
    s_d[1] = seed + 0.25;
    s_c = (char)('a' + seed % 26);
}

static void clear_small(void)
{
    memset(s_i, 0, sizeof s_i);
    memset(s_d, 0, sizeof s_d);
    s_c = 0;
}

static void check_small(int seed, const char *what)
{
    for (int i = 0; i < 3; i++)
        CHECK(s_i[i] == seed * 10 + i, "%s: int %d is %d, want %d", what, i, s_i[i], seed * 10 + i);
    CHECK(s_d[0] == seed + 0.5 && s_d[1] == seed + 0.25, "%s: doubles %g %g", what, s_d[0], s_d[1]);
    CHECK(s_c == (char)('a' + seed % 26), "%s: char %d", what, s_c);
}

static void fill_big(int seed)
{
    for (int i = 0; i < BIG; i++)
        big[i] = seed * 1000.0 + i;
}

static void check_big(int seed, const char *what)
{
    for (int i = 0; i < BIG; i++)
        if (big[i] != seed * 1000.0 + i)
            FAILF("%s: element %d is %g, want %g", what, i, big[i], seed * 1000.0 + i);
}

/* One message from rank 0 to rank 1 in the given way; rank 1 checks it. */
enum way { W_SEND, W_SSEND, W_ISEND, W_ISSEND, W_RSEND, W_BSEND, W_IBSEND, W_PERSIST, W_PROBE, W_IMPROBE, W_COUNT };
static const char *way_name[W_COUNT] = { "send/recv",   "ssend/irecv",   "isend/recv",  "issend/recv",
                                         "rsend/irecv", "bsend/recv",    "ibsend/recv", "send_init/recv_init",
                                         "probe+mrecv", "improbe+imrecv" };

static void one_way(enum way w, MPI_Datatype t, int big_msg, int seed)
{
    const int tag = 100 + (int)w;
    char what[96];
    snprintf(what, sizeof what, "%s (%s)", way_name[w], big_msg ? "large" : "small");
    if (rank == 0) {
        big_msg ? fill_big(seed) : fill_small(seed);
        MPI_Request r;
        switch (w) {
        case W_SEND:
        case W_PROBE:
        case W_IMPROBE: MPI_CHECK(MPI_Send(MPI_BOTTOM, 1, t, 1, tag, MPI_COMM_WORLD)); break;
        case W_SSEND: MPI_CHECK(MPI_Ssend(MPI_BOTTOM, 1, t, 1, tag, MPI_COMM_WORLD)); break;
        case W_ISEND:
            MPI_CHECK(MPI_Isend(MPI_BOTTOM, 1, t, 1, tag, MPI_COMM_WORLD, &r));
            MPI_CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE));
            break;
        case W_ISSEND:
            MPI_CHECK(MPI_Issend(MPI_BOTTOM, 1, t, 1, tag, MPI_COMM_WORLD, &r));
            MPI_CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE));
            break;
        case W_RSEND:
            /* the receive is posted before the go-ahead */
            MPI_CHECK(MPI_Recv(NULL, 0, MPI_INT, 1, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            MPI_CHECK(MPI_Rsend(MPI_BOTTOM, 1, t, 1, tag, MPI_COMM_WORLD));
            break;
        case W_BSEND:
        case W_IBSEND: {
            int need = 0;
            MPI_CHECK(MPI_Pack_size(1, t, MPI_COMM_WORLD, &need));
            need += MPI_BSEND_OVERHEAD;
            void *att = mtest_malloc((size_t)need);
            MPI_CHECK(MPI_Buffer_attach(att, need));
            if (w == W_BSEND) {
                MPI_CHECK(MPI_Bsend(MPI_BOTTOM, 1, t, 1, tag, MPI_COMM_WORLD));
            } else {
                MPI_CHECK(MPI_Ibsend(MPI_BOTTOM, 1, t, 1, tag, MPI_COMM_WORLD, &r));
                MPI_CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE));
            }
            int sz;
            MPI_CHECK(MPI_Buffer_detach(&att, &sz));
            free(att);
            break;
        }
        case W_PERSIST:
            MPI_CHECK(MPI_Send_init(MPI_BOTTOM, 1, t, 1, tag, MPI_COMM_WORLD, &r));
            for (int k = 0; k < 2; k++) {
                big_msg ? fill_big(seed + k) : fill_small(seed + k);
                MPI_CHECK(MPI_Start(&r));
                MPI_CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE));
            }
            MPI_CHECK(MPI_Request_free(&r));
            break;
        default: break;
        }
    } else if (rank == 1) {
        big_msg ? memset(big, 0, sizeof big) : clear_small();
        MPI_Request r;
        MPI_Status st;
        MPI_Message m;
        int flag = 0;
        switch (w) {
        case W_SEND:
        case W_ISEND:
        case W_ISSEND:
        case W_BSEND:
        case W_IBSEND: MPI_CHECK(MPI_Recv(MPI_BOTTOM, 1, t, 0, tag, MPI_COMM_WORLD, &st)); break;
        case W_SSEND:
            MPI_CHECK(MPI_Irecv(MPI_BOTTOM, 1, t, 0, tag, MPI_COMM_WORLD, &r));
            MPI_CHECK(MPI_Wait(&r, &st));
            break;
        case W_RSEND:
            MPI_CHECK(MPI_Irecv(MPI_BOTTOM, 1, t, 0, tag, MPI_COMM_WORLD, &r));
            MPI_CHECK(MPI_Send(NULL, 0, MPI_INT, 0, tag, MPI_COMM_WORLD));
            MPI_CHECK(MPI_Wait(&r, &st));
            break;
        case W_PERSIST:
            MPI_CHECK(MPI_Recv_init(MPI_BOTTOM, 1, t, 0, tag, MPI_COMM_WORLD, &r));
            for (int k = 0; k < 2; k++) {
                big_msg ? memset(big, 0, sizeof big) : clear_small();
                MPI_CHECK(MPI_Start(&r));
                MPI_CHECK(MPI_Wait(&r, &st));
                big_msg ? check_big(seed + k, what) : check_small(seed + k, what);
            }
            MPI_CHECK(MPI_Request_free(&r));
            return;
        case W_PROBE:
            MPI_CHECK(MPI_Mprobe(0, tag, MPI_COMM_WORLD, &m, &st));
            MPI_CHECK(MPI_Mrecv(MPI_BOTTOM, 1, t, &m, &st));
            break;
        case W_IMPROBE:
            while (!flag)
                MPI_CHECK(MPI_Improbe(0, tag, MPI_COMM_WORLD, &flag, &m, &st));
            MPI_CHECK(MPI_Imrecv(MPI_BOTTOM, 1, t, &m, &r));
            MPI_CHECK(MPI_Wait(&r, &st));
            break;
        default: break;
        }
        CHECK(st.MPI_SOURCE == 0 && st.MPI_TAG == tag, "%s: status %d/%d", what, st.MPI_SOURCE, st.MPI_TAG);
        int n = -1;
        MPI_CHECK(MPI_Get_count(&st, t, &n));
        CHECK(n == 1, "%s: Get_count %d, want 1", what, n);
        big_msg ? check_big(seed, what) : check_small(seed, what);
    }
}

static void test_p2p(void)
{
    MPI_Datatype ts = small_type(), tb = big_type();
    for (int w = 0; w < W_COUNT; w++) {
        one_way((enum way)w, ts, 0, 3 + w);
        one_way((enum way)w, tb, 1, 7 + w);
    }
    /* sendrecv: both ends at MPI_BOTTOM, the data exchanged through the same objects is not
     * possible, so rank 0 sends the struct and receives the array, rank 1 the reverse */
    if (rank < 2) {
        int other = 1 - rank;
        MPI_Status st;
        if (rank == 0) {
            fill_small(40);
            memset(big, 0, sizeof big);
            MPI_CHECK(MPI_Sendrecv(MPI_BOTTOM, 1, ts, other, 5, MPI_BOTTOM, 1, tb, other, 6, MPI_COMM_WORLD, &st));
            check_big(41, "sendrecv (array at rank 0)");
        } else {
            fill_big(41);
            clear_small();
            MPI_CHECK(MPI_Sendrecv(MPI_BOTTOM, 1, tb, other, 6, MPI_BOTTOM, 1, ts, other, 5, MPI_COMM_WORLD, &st));
            check_small(40, "sendrecv (struct at rank 1)");
        }
        /* sendrecv_replace: rank 0's struct goes to rank 1 and back the other way */
        fill_small(50 + rank);
        MPI_CHECK(MPI_Sendrecv_replace(MPI_BOTTOM, 1, ts, other, 7, other, 7, MPI_COMM_WORLD, &st));
        check_small(50 + other, "sendrecv_replace");
        /* to and from MPI_PROC_NULL, count 1 of an absolute type */
        MPI_CHECK(MPI_Send(MPI_BOTTOM, 1, ts, MPI_PROC_NULL, 8, MPI_COMM_WORLD));
        MPI_CHECK(MPI_Recv(MPI_BOTTOM, 1, ts, MPI_PROC_NULL, 8, MPI_COMM_WORLD, &st));
    }
    MPI_CHECK(MPI_Type_free(&ts));
    MPI_CHECK(MPI_Type_free(&tb));
}

/* ---- neighbourhood collectives on a periodic ring: neighbours left, right ---- */

static int nb_send[2], nb_recv[2];

/* One int at an absolute address. */
static MPI_Datatype abs_int(const int *p)
{
    MPI_Aint a;
    int one = 1;
    MPI_Datatype t;
    MPI_CHECK(MPI_Get_address(p, &a));
    MPI_CHECK(MPI_Type_create_hindexed(1, &one, &a, MPI_INT, &t));
    MPI_CHECK(MPI_Type_commit(&t));
    return t;
}

/* The int at p, with the extent of an int, so that block j of count 1 is p[j]. */
static MPI_Datatype abs_int_ext(const int *p)
{
    MPI_Datatype t = abs_int(p), r;
    MPI_Aint a;
    MPI_CHECK(MPI_Get_address(p, &a));
    MPI_CHECK(MPI_Type_create_resized(t, a, (MPI_Aint)sizeof(int), &r));
    MPI_CHECK(MPI_Type_commit(&r));
    MPI_CHECK(MPI_Type_free(&t));
    return r;
}

static void check_ring(MPI_Comm ring, const int *got, int base, const char *what)
{
    int left, right;
    MPI_CHECK(MPI_Cart_shift(ring, 0, 1, &left, &right));
    /* in-neighbour 0 is the left one (displacement -1), 1 the right one */
    CHECK(got[0] == base + left, "%s: from the left %d, want %d", what, got[0], base + left);
    CHECK(got[1] == base + right, "%s: from the right %d, want %d", what, got[1], base + right);
}

static void test_neighbor(void)
{
    MPI_Comm ring;
    int dims[1] = { size }, periods[1] = { 1 };
    MPI_CHECK(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring));
    int r;
    MPI_CHECK(MPI_Comm_rank(ring, &r));
    MPI_Datatype s1 = abs_int(&nb_send[0]), sext = abs_int_ext(&nb_send[0]), rext = abs_int_ext(&nb_recv[0]);
    MPI_Datatype rt[2] = { abs_int(&nb_recv[0]), abs_int(&nb_recv[1]) };
    MPI_Datatype st[2] = { abs_int(&nb_send[0]), abs_int(&nb_send[1]) };
    int got[2];

    /* allgather: send from MPI_BOTTOM, receive normally; then the reverse */
    nb_send[0] = 100 + r;
    MPI_CHECK(MPI_Neighbor_allgather(MPI_BOTTOM, 1, s1, got, 1, MPI_INT, ring));
    check_ring(ring, got, 100, "neighbor_allgather from MPI_BOTTOM");
    memset(nb_recv, 0, sizeof nb_recv);
    int mine = 200 + r;
    MPI_CHECK(MPI_Neighbor_allgather(&mine, 1, MPI_INT, MPI_BOTTOM, 1, rext, ring));
    check_ring(ring, nb_recv, 200, "neighbor_allgather into MPI_BOTTOM");

    /* alltoall: what goes to the left is to[0] (the right neighbour receives it in block 0);
     * both sides at MPI_BOTTOM. Sending r to both gives the ring pattern again. */
    nb_send[0] = nb_send[1] = 300 + r;
    memset(nb_recv, 0, sizeof nb_recv);
    MPI_CHECK(MPI_Neighbor_alltoall(MPI_BOTTOM, 1, sext, MPI_BOTTOM, 1, rext, ring));
    check_ring(ring, nb_recv, 300, "neighbor_alltoall at MPI_BOTTOM");

    /* allgatherv / alltoallv: absolute types, displacements 0 and 1 (extent of an int) */
    int counts[2] = { 1, 1 }, displs[2] = { 0, 1 };
    nb_send[0] = 400 + r;
    memset(nb_recv, 0, sizeof nb_recv);
    MPI_CHECK(MPI_Neighbor_allgatherv(MPI_BOTTOM, 1, s1, MPI_BOTTOM, counts, displs, rext, ring));
    check_ring(ring, nb_recv, 400, "neighbor_allgatherv at MPI_BOTTOM");
    nb_send[0] = nb_send[1] = 500 + r;
    memset(nb_recv, 0, sizeof nb_recv);
    MPI_CHECK(MPI_Neighbor_alltoallv(MPI_BOTTOM, counts, displs, sext, MPI_BOTTOM, counts, displs, rext, ring));
    check_ring(ring, nb_recv, 500, "neighbor_alltoallv at MPI_BOTTOM");

    /* alltoallw: one absolute type per block, byte displacements 0 */
    MPI_Aint wd[2] = { 0, 0 };
    nb_send[0] = nb_send[1] = 600 + r;
    memset(nb_recv, 0, sizeof nb_recv);
    MPI_CHECK(MPI_Neighbor_alltoallw(MPI_BOTTOM, counts, wd, st, MPI_BOTTOM, counts, wd, rt, ring));
    check_ring(ring, nb_recv, 600, "neighbor_alltoallw at MPI_BOTTOM");

    /* and the nonblocking form of one of them */
    MPI_Request q;
    nb_send[0] = 700 + r;
    memset(nb_recv, 0, sizeof nb_recv);
    MPI_CHECK(MPI_Ineighbor_allgather(MPI_BOTTOM, 1, s1, MPI_BOTTOM, 1, rext, ring, &q));
    MPI_CHECK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    check_ring(ring, nb_recv, 700, "ineighbor_allgather at MPI_BOTTOM");

    MPI_Datatype all[] = { s1, sext, rext, rt[0], rt[1], st[0], st[1] };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        MPI_CHECK(MPI_Type_free(&all[i]));
    MPI_CHECK(MPI_Comm_free(&ring));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* errors come back as codes, so that a refusal is reported with its message */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (size >= 2)
        test_p2p();
    test_neighbor();
    return mtest_finalize();
}
