/* Garbage handles under MPI_ERRORS_RETURN: every kind of handle (datatype, communicator, op,
 * request, window, group, info, error handler, session, message) given a value that names no
 * live object of that kind -- a small integer that is no predefined handle (12345), the address
 * of an unmapped page, of a page no one may read, of an unrelated malloc'd block, a pointer into
 * the middle of a live object, a live object of another kind, and the handle of a freed object
 * -- makes each call return the class of that kind (MPI_ERR_TYPE, MPI_ERR_COMM, MPI_ERR_OP,
 * MPI_ERR_REQUEST, MPI_ERR_WIN, MPI_ERR_GROUP, MPI_ERR_INFO, MPI_ERR_ERRHANDLER (MPI_ERR_ARG
 * before MPI 4.1), MPI_ERR_SESSION; an invalid message is MPI_ERR_REQUEST) instead of crashing,
 * and leaves the library working: exchanges on MPI_COMM_WORLD and on a duplicate with a derived
 * datatype, a reduction with a user op and a one-sided fence still give the right data
 * afterwards, and nothing stray was sent. The same on both ranks (every call fails locally,
 * before any communication). */
#include "mtest.h"

#include <sys/mman.h>
#include <unistd.h>

static int rank, size, peer;

#if MPI_VERSION > 4 || (MPI_VERSION == 4 && MPI_SUBVERSION >= 1)
#define ERRH_CLASS MPI_ERR_ERRHANDLER
#else
#define ERRH_CLASS MPI_ERR_ARG
#endif

/* The handle types are pointers in the standard ABI and integers in some implementations: go
 * through uintptr_t either way. */
#define AS(T, v) ((T)(uintptr_t)(v))
#define RAW(h)   ((uintptr_t)(h))

enum kind { K_TYPE, K_COMM, K_OP, K_REQ, K_WIN, K_GROUP, K_INFO, K_ERRH, K_SESSION, K_MSG, NKINDS };
static const char *const kind_name[NKINDS] = { "datatype", "communicator", "op",         "request", "window",
                                               "group",    "info",         "errhandler", "session", "message" };

enum garbage { G_INT, G_UNMAPPED, G_NOACCESS, G_MALLOC, G_INTERIOR, G_FOREIGN, G_FREED, NGARBAGE };
static const char *const garbage_name[NGARBAGE] = { "12345",
                                                    "an unmapped page",
                                                    "a PROT_NONE page",
                                                    "a malloc'd block",
                                                    "the middle of a live object",
                                                    "a live object of another kind",
                                                    "a freed object" };

static void *noaccess_page, *malloc_block;
static long page;

/* Live objects of each kind (non-predefined), for the interior and foreign cases. */
static MPI_Datatype live_type;
static MPI_Comm live_comm;
static MPI_Op live_op;
static MPI_Win live_win;
static MPI_Group live_group;
static MPI_Info live_info;
static MPI_Errhandler live_errh;
static MPI_Session live_session;
static MPI_Request live_req;
static int live_win_mem[4];

static void comm_errfn(MPI_Comm *c, int *code, ...)
{
    (void)c;
    (void)code;
}

static void user_sum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    for (int i = 0; i < *len; i++)
        ((int *)inout)[i] += ((int *)in)[i];
}

/* The address of a page that was mapped a moment ago and is not any more. */
static uintptr_t unmapped_page(void)
{
    void *p = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(p != MAP_FAILED, "mmap of a page failed");
    CHECK(munmap(p, (size_t)page) == 0, "munmap failed");
    return (uintptr_t)p;
}

static uintptr_t live_handle(enum kind k)
{
    switch (k) {
    case K_TYPE: return RAW(live_type);
    case K_COMM: return RAW(live_comm);
    case K_OP: return RAW(live_op);
    case K_REQ: return RAW(live_req);
    case K_WIN: return RAW(live_win);
    case K_GROUP: return RAW(live_group);
    case K_INFO: return RAW(live_info);
    case K_ERRH: return RAW(live_errh);
    case K_SESSION: return RAW(live_session);
    default: return RAW(live_info); /* no live message is kept */
    }
}

/* A handle of kind k that was valid and is freed now (nothing of that kind is made until it is
 * used). */
static uintptr_t freed_handle(enum kind k)
{
    uintptr_t v = 0;
    switch (k) {
    case K_TYPE: {
        MPI_Datatype t;
        MPI_CHECK(MPI_Type_contiguous(3, MPI_INT, &t));
        MPI_CHECK(MPI_Type_commit(&t));
        v = RAW(t);
        MPI_CHECK(MPI_Type_free(&t));
        break;
    }
    case K_COMM: {
        MPI_Comm c;
        MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
        v = RAW(c);
        MPI_CHECK(MPI_Comm_free(&c));
        break;
    }
    case K_OP: {
        MPI_Op o;
        MPI_CHECK(MPI_Op_create(user_sum, 1, &o));
        v = RAW(o);
        MPI_CHECK(MPI_Op_free(&o));
        break;
    }
    case K_REQ: {
        int x = rank, y = -1;
        MPI_Request q[2];
        MPI_CHECK(MPI_Irecv(&y, 1, MPI_INT, rank, 77, MPI_COMM_WORLD, &q[0]));
        MPI_CHECK(MPI_Isend(&x, 1, MPI_INT, rank, 77, MPI_COMM_WORLD, &q[1]));
        v = RAW(q[0]);
        MPI_CHECK(MPI_Waitall(2, q, MPI_STATUSES_IGNORE));
        CHECK(y == rank, "message to self: %d", y);
        break;
    }
    case K_WIN: {
        static int mem[2];
        MPI_Win w;
        MPI_CHECK(MPI_Win_create(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &w));
        v = RAW(w);
        MPI_CHECK(MPI_Win_free(&w));
        break;
    }
    case K_GROUP: {
        MPI_Group wg, g;
        int r0 = 0;
        MPI_CHECK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
        MPI_CHECK(MPI_Group_incl(wg, 1, &r0, &g));
        MPI_CHECK(MPI_Group_free(&wg));
        v = RAW(g);
        MPI_CHECK(MPI_Group_free(&g));
        break;
    }
    case K_INFO: {
        MPI_Info i;
        MPI_CHECK(MPI_Info_create(&i));
        v = RAW(i);
        MPI_CHECK(MPI_Info_free(&i));
        break;
    }
    case K_ERRH: {
        MPI_Errhandler e;
        MPI_CHECK(MPI_Comm_create_errhandler(comm_errfn, &e));
        v = RAW(e);
        MPI_CHECK(MPI_Errhandler_free(&e));
        break;
    }
    case K_SESSION: {
        MPI_Session s;
        MPI_CHECK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s));
        v = RAW(s);
        MPI_CHECK(MPI_Session_finalize(&s));
        break;
    }
    case K_MSG: {
        int x = rank + 100, y = -1;
        MPI_Message m;
        MPI_Request q;
        MPI_CHECK(MPI_Isend(&x, 1, MPI_INT, rank, 78, MPI_COMM_WORLD, &q));
        MPI_CHECK(MPI_Mprobe(rank, 78, MPI_COMM_WORLD, &m, MPI_STATUS_IGNORE));
        v = RAW(m);
        MPI_CHECK(MPI_Mrecv(&y, 1, MPI_INT, &m, MPI_STATUS_IGNORE));
        MPI_CHECK(MPI_Wait(&q, MPI_STATUS_IGNORE));
        CHECK(y == rank + 100, "matched message to self: %d", y);
        break;
    }
    default: break;
    }
    return v;
}

static uintptr_t garbage_value(enum kind k, enum garbage g)
{
    switch (g) {
    case G_INT: return 12345;
    case G_UNMAPPED: return unmapped_page();
    case G_NOACCESS: return (uintptr_t)noaccess_page;
    case G_MALLOC: return (uintptr_t)malloc_block;
    case G_INTERIOR: return live_handle(k) + 8;
    case G_FOREIGN: return live_handle(k == K_INFO ? K_TYPE : K_INFO);
    default: return freed_handle(k);
    }
}

static char what[256];
static int nchecked;

#define EXPECT(call, cls)                                                                                              \
    do {                                                                                                               \
        snprintf(what, sizeof what, "%s with %s as %s", #call, garbage_name[g], kind_name[k]);                         \
        CHECK_ERRCLASS((call), cls, what);                                                                             \
        nchecked++;                                                                                                    \
    } while (0)

static void try_type(uintptr_t v, enum kind k, enum garbage g)
{
    MPI_Datatype t = AS(MPI_Datatype, v), t2 = t;
    int s[4] = { 1, 2, 3, 4 }, r[4] = { 0 };
    int sz = -1;
    MPI_Count lb, ext;
    MPI_Request q = MPI_REQUEST_NULL;
    EXPECT(MPI_Type_commit(&t2), MPI_ERR_TYPE);
    EXPECT(MPI_Type_size(t, &sz), MPI_ERR_TYPE);
    EXPECT(MPI_Type_get_extent_x(t, &lb, &ext), MPI_ERR_TYPE);
    EXPECT(MPI_Sendrecv(s, 1, t, peer, 5, r, 1, t, peer, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_ERR_TYPE);
    EXPECT(MPI_Send(s, 1, t, peer, 5, MPI_COMM_WORLD), MPI_ERR_TYPE);
    EXPECT(MPI_Isend(s, 1, t, peer, 5, MPI_COMM_WORLD, &q), MPI_ERR_TYPE);
    EXPECT(MPI_Recv(r, 1, t, peer, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_ERR_TYPE);
    EXPECT(MPI_Allreduce(s, r, 1, t, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_TYPE);
    EXPECT(MPI_Type_contiguous(2, t, &t2), MPI_ERR_TYPE);
    t2 = t;
    EXPECT(MPI_Type_free(&t2), MPI_ERR_TYPE);
}

static void try_comm(uintptr_t v, enum kind k, enum garbage g)
{
    MPI_Comm c = AS(MPI_Comm, v), c2 = c, nc;
    int s = 1, r = 0, x = -1;
    MPI_Request q = MPI_REQUEST_NULL;
    EXPECT(MPI_Comm_rank(c, &x), MPI_ERR_COMM);
    EXPECT(MPI_Comm_size(c, &x), MPI_ERR_COMM);
    EXPECT(MPI_Send(&s, 1, MPI_INT, peer, 5, c), MPI_ERR_COMM);
    EXPECT(MPI_Isend(&s, 1, MPI_INT, peer, 5, c, &q), MPI_ERR_COMM);
    EXPECT(MPI_Recv(&r, 1, MPI_INT, peer, 5, c, MPI_STATUS_IGNORE), MPI_ERR_COMM);
    EXPECT(MPI_Irecv(&r, 1, MPI_INT, peer, 5, c, &q), MPI_ERR_COMM);
    EXPECT(MPI_Barrier(c), MPI_ERR_COMM);
    EXPECT(MPI_Allreduce(&s, &r, 1, MPI_INT, MPI_SUM, c), MPI_ERR_COMM);
    EXPECT(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN), MPI_ERR_COMM);
    EXPECT(MPI_Comm_dup(c, &nc), MPI_ERR_COMM);
    EXPECT(MPI_Comm_free(&c2), MPI_ERR_COMM);
}

static void try_op(uintptr_t v, enum kind k, enum garbage g)
{
    MPI_Op o = AS(MPI_Op, v), o2 = o;
    int s = 1, r = 0, f = -1;
    EXPECT(MPI_Allreduce(&s, &r, 1, MPI_INT, o, MPI_COMM_WORLD), MPI_ERR_OP);
    EXPECT(MPI_Reduce(&s, &r, 1, MPI_INT, o, 0, MPI_COMM_WORLD), MPI_ERR_OP);
    EXPECT(MPI_Op_commutative(o, &f), MPI_ERR_OP);
    EXPECT(MPI_Op_free(&o2), MPI_ERR_OP);
}

static void try_req(uintptr_t v, enum kind k, enum garbage g)
{
    MPI_Request q = AS(MPI_Request, v), qs[2] = { MPI_REQUEST_NULL, q };
    int flag = -1, idx = -1;
    MPI_Status st;
    EXPECT(MPI_Wait(&q, &st), MPI_ERR_REQUEST);
    q = AS(MPI_Request, v);
    EXPECT(MPI_Test(&q, &flag, &st), MPI_ERR_REQUEST);
    q = AS(MPI_Request, v);
    EXPECT(MPI_Request_free(&q), MPI_ERR_REQUEST);
    q = AS(MPI_Request, v);
    EXPECT(MPI_Request_get_status(q, &flag, &st), MPI_ERR_REQUEST);
    EXPECT(MPI_Cancel(&q), MPI_ERR_REQUEST);
    EXPECT(MPI_Waitall(2, qs, MPI_STATUSES_IGNORE), MPI_ERR_REQUEST);
    qs[1] = q;
    EXPECT(MPI_Testany(2, qs, &idx, &flag, &st), MPI_ERR_REQUEST);
    EXPECT(MPI_Start(&q), MPI_ERR_REQUEST);
    q = AS(MPI_Request, v);
    EXPECT(MPI_Startall(1, &q), MPI_ERR_REQUEST);
    q = AS(MPI_Request, v);
    EXPECT(MPI_Grequest_complete(q), MPI_ERR_REQUEST);
    EXPECT(MPI_Pready(0, q), MPI_ERR_REQUEST);
    EXPECT(MPI_Parrived(q, 0, &flag), MPI_ERR_REQUEST);
}

static void try_win(uintptr_t v, enum kind k, enum garbage g)
{
    MPI_Win w = AS(MPI_Win, v), w2 = w;
    MPI_Group wg;
    int s = 1;
    EXPECT(MPI_Win_fence(0, w), MPI_ERR_WIN);
    EXPECT(MPI_Put(&s, 1, MPI_INT, peer, 0, 1, MPI_INT, w), MPI_ERR_WIN);
    EXPECT(MPI_Win_get_group(w, &wg), MPI_ERR_WIN);
    EXPECT(MPI_Win_set_errhandler(w, MPI_ERRORS_RETURN), MPI_ERR_WIN);
    EXPECT(MPI_Win_free(&w2), MPI_ERR_WIN);
}

static void try_group(uintptr_t v, enum kind k, enum garbage g)
{
    MPI_Group gr = AS(MPI_Group, v), g2 = gr, ng;
    int x = -1, r0 = 0;
    MPI_Comm nc;
    EXPECT(MPI_Group_size(gr, &x), MPI_ERR_GROUP);
    EXPECT(MPI_Group_rank(gr, &x), MPI_ERR_GROUP);
    EXPECT(MPI_Group_incl(gr, 1, &r0, &ng), MPI_ERR_GROUP);
    EXPECT(MPI_Comm_create_group(MPI_COMM_WORLD, gr, 9, &nc), MPI_ERR_GROUP);
    EXPECT(MPI_Group_free(&g2), MPI_ERR_GROUP);
}

static void try_info(uintptr_t v, enum kind k, enum garbage g)
{
    MPI_Info i = AS(MPI_Info, v), i2 = i;
    int n = -1;
    EXPECT(MPI_Info_get_nkeys(i, &n), MPI_ERR_INFO);
    EXPECT(MPI_Info_set(i, "aptus_test_key", "1"), MPI_ERR_INFO);
    EXPECT(MPI_Comm_set_info(MPI_COMM_WORLD, i), MPI_ERR_INFO);
    EXPECT(MPI_Info_free(&i2), MPI_ERR_INFO);
}

static void try_errh(uintptr_t v, enum kind k, enum garbage g)
{
    MPI_Errhandler e = AS(MPI_Errhandler, v), e2 = e;
    EXPECT(MPI_Comm_set_errhandler(MPI_COMM_WORLD, e), ERRH_CLASS);
    EXPECT(MPI_Errhandler_free(&e2), ERRH_CLASS);
}

static void try_session(uintptr_t v, enum kind k, enum garbage g)
{
    MPI_Session s = AS(MPI_Session, v), s2 = s;
    MPI_Info i;
    int n = -1;
    EXPECT(MPI_Session_get_num_psets(s, MPI_INFO_NULL, &n), MPI_ERR_SESSION);
    EXPECT(MPI_Session_get_info(s, &i), MPI_ERR_SESSION);
    EXPECT(MPI_Session_finalize(&s2), MPI_ERR_SESSION);
}

static void try_msg(uintptr_t v, enum kind k, enum garbage g)
{
    MPI_Message m = AS(MPI_Message, v);
    MPI_Request q;
    int r = -1;
    EXPECT(MPI_Mrecv(&r, 1, MPI_INT, &m, MPI_STATUS_IGNORE), MPI_ERR_REQUEST);
    m = AS(MPI_Message, v);
    EXPECT(MPI_Imrecv(&r, 1, MPI_INT, &m, &q), MPI_ERR_REQUEST);
}

static void (*const try_kind[NKINDS])(uintptr_t, enum kind,
                                      enum garbage) = { try_type,  try_comm, try_op,   try_req,     try_win,
                                                        try_group, try_info, try_errh, try_session, try_msg };

static void make_live(void)
{
    MPI_Group wg;
    int r0 = 0;
    MPI_CHECK(MPI_Type_vector(2, 1, 2, MPI_INT, &live_type));
    MPI_CHECK(MPI_Type_commit(&live_type));
    MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &live_comm));
    MPI_CHECK(MPI_Comm_set_errhandler(live_comm, MPI_ERRORS_RETURN));
    MPI_CHECK(MPI_Op_create(user_sum, 1, &live_op));
    MPI_CHECK(MPI_Win_create(live_win_mem, sizeof live_win_mem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &live_win));
    MPI_CHECK(MPI_Win_set_errhandler(live_win, MPI_ERRORS_RETURN));
    MPI_CHECK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    MPI_CHECK(MPI_Group_incl(wg, 1, &r0, &live_group));
    MPI_CHECK(MPI_Group_free(&wg));
    MPI_CHECK(MPI_Info_create(&live_info));
    MPI_CHECK(MPI_Comm_create_errhandler(comm_errfn, &live_errh));
    MPI_CHECK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &live_session));
    /* a receive that stays pending until the end (tag 99, sent by the peer at the end) */
    static int pending_in = -1;
    MPI_CHECK(MPI_Irecv(&pending_in, 1, MPI_INT, peer, 99, MPI_COMM_WORLD, &live_req));
}

/* After all the errors: the library still moves the right data. */
static void check_alive(void)
{
    int out = rank * 7 + 1, in = -1, flag = 1;
    int left = (rank + size - 1) % size;
    MPI_CHECK(MPI_Sendrecv(&out, 1, MPI_INT, peer, 1, &in, 1, MPI_INT, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(in == left * 7 + 1, "exchange on MPI_COMM_WORLD after the errors got %d", in);

    /* the duplicate, with the derived (vector) type: elements 0 and 2 travel */
    int sv[3] = { rank + 10, -5, rank + 20 }, rv[3] = { -1, -1, -1 };
    MPI_Request q[2];
    MPI_CHECK(MPI_Irecv(rv, 1, live_type, left, 2, live_comm, &q[0]));
    MPI_CHECK(MPI_Isend(sv, 1, live_type, peer, 2, live_comm, &q[1]));
    MPI_CHECK(MPI_Waitall(2, q, MPI_STATUSES_IGNORE));
    CHECK(rv[0] == left + 10 && rv[1] == -1 && rv[2] == left + 20, "derived type on the dup: %d %d %d", rv[0], rv[1],
          rv[2]);

    int sum = -1, one = rank + 1;
    MPI_CHECK(MPI_Allreduce(&one, &sum, 1, MPI_INT, live_op, live_comm));
    CHECK(sum == size * (size + 1) / 2, "allreduce with the user op: %d", sum);

    int val = rank + 1000;
    MPI_CHECK(MPI_Win_fence(0, live_win));
    MPI_CHECK(MPI_Put(&val, 1, MPI_INT, peer, 1, 1, MPI_INT, live_win));
    MPI_CHECK(MPI_Win_fence(0, live_win));
    CHECK(live_win_mem[1] == left + 1000, "put through the window: %d", live_win_mem[1]);

    int gs = -1, nk = -1, np = -1;
    MPI_CHECK(MPI_Group_size(live_group, &gs));
    CHECK(gs == 1, "group size %d", gs);
    MPI_CHECK(MPI_Info_get_nkeys(live_info, &nk));
    CHECK(nk == 0, "info keys %d", nk);
    MPI_CHECK(MPI_Session_get_num_psets(live_session, MPI_INFO_NULL, &np));
    CHECK(np >= 2, "session psets %d", np);

    /* the receive left pending all along completes with the right data */
    int tok = rank + 500;
    MPI_CHECK(MPI_Send(&tok, 1, MPI_INT, peer, 99, MPI_COMM_WORLD));
    MPI_Status st;
    MPI_CHECK(MPI_Wait(&live_req, &st));
    CHECK(st.MPI_SOURCE == peer && st.MPI_TAG == 99, "pending receive: source %d tag %d", st.MPI_SOURCE, st.MPI_TAG);

    /* nothing stray arrived from the failed calls */
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_CHECK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
    CHECK(!flag, "a message arrived from a failed call");
    MPI_CHECK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, live_comm, &flag, MPI_STATUS_IGNORE));
    CHECK(!flag, "a message arrived on the dup from a failed call");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    peer = (rank + 1) % size;
    page = sysconf(_SC_PAGESIZE);

    noaccess_page = mmap(NULL, (size_t)page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(noaccess_page != MAP_FAILED, "mmap of a PROT_NONE page failed");
    malloc_block = mtest_malloc(512);
    memset(malloc_block, 0x5a, 512);

    make_live();
    /* argv[1]: only that kind (a name of kind_name), for running one kind at a time */
    for (int k = 0; k < NKINDS; k++) {
        if (argc > 1 && strcmp(argv[1], kind_name[k]) != 0)
            continue;
        for (int g = 0; g < NGARBAGE; g++) {
            uintptr_t v = garbage_value((enum kind)k, (enum garbage)g);
            try_kind[k](v, (enum kind)k, (enum garbage)g);
        }
    }
    check_alive();
    if (rank == 0)
        printf("err_handles: %d calls with garbage handles returned the right class\n", nchecked);

    MPI_CHECK(MPI_Session_finalize(&live_session));
    MPI_CHECK(MPI_Errhandler_free(&live_errh));
    MPI_CHECK(MPI_Info_free(&live_info));
    MPI_CHECK(MPI_Group_free(&live_group));
    MPI_CHECK(MPI_Win_free(&live_win));
    MPI_CHECK(MPI_Op_free(&live_op));
    MPI_CHECK(MPI_Comm_free(&live_comm));
    MPI_CHECK(MPI_Type_free(&live_type));
    munmap(noaccess_page, (size_t)page);
    free(malloc_block);
    return mtest_finalize();
}
