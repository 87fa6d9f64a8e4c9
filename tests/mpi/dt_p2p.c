/* Point-to-point with derived datatypes between 2 ranks: vector, indexed, struct with holes,
 * resized, subarray, at eager (< 16 KiB) and rendezvous (> 1 MiB) sizes, and receives with a
 * different datatype of the same type signature (contiguous doubles into a vector and back).
 * The received buffer is checked byte by byte against a serial reference built from hand-written
 * layouts: data at the receive type's runs, untouched sentinel bytes everywhere else. */
#include "mtest.h"

struct S {
    int a;
    double b;
    char c;
};

enum { K_DOUBLES, K_VEC, K_IDX, K_STRUCT, K_RESIZED, K_SUBARRAY, K_NKINDS };

struct layout {
    MPI_Datatype type;
    size_t extent;
    size_t nruns; /* runs per element */
    size_t off[8], len[8];
};

/* Subarray shapes: small and large, doubles, C order, block at (1, 2). */
static int sub_R, sub_C, sub_r, sub_c;

static void make_layout(int kind, int vec_blocks, struct layout *L)
{
    memset(L, 0, sizeof *L);
    switch (kind) {
    case K_DOUBLES:
        L->type = MPI_DOUBLE;
        L->extent = 8;
        L->nruns = 1;
        L->len[0] = 8;
        break;
    case K_VEC: /* vector(vec_blocks, 2, 3, double): runs of 16 bytes every 24 */
        MPI_CHECK(MPI_Type_vector(vec_blocks, 2, 3, MPI_DOUBLE, &L->type));
        L->extent = (size_t)((vec_blocks - 1) * 3 + 2) * 8;
        L->nruns = 0; /* generated */
        break;
    case K_IDX: /* indexed {3 at 5, 1 at 0, 2 at 9} ints: extent 44 */
        MPI_CHECK(MPI_Type_indexed(3, (int[]){ 3, 1, 2 }, (int[]){ 5, 0, 9 }, MPI_INT, &L->type));
        L->extent = 44;
        L->nruns = 3;
        L->off[0] = 20, L->len[0] = 12;
        L->off[1] = 0, L->len[1] = 4;
        L->off[2] = 36, L->len[2] = 8;
        break;
    case K_STRUCT: {
        MPI_Datatype t;
        MPI_CHECK(MPI_Type_create_struct(
            3, (int[]){ 1, 1, 1 }, (MPI_Aint[]){ offsetof(struct S, a), offsetof(struct S, b), offsetof(struct S, c) },
            (MPI_Datatype[]){ MPI_INT, MPI_DOUBLE, MPI_CHAR }, &t));
        MPI_CHECK(MPI_Type_create_resized(t, 0, sizeof(struct S), &L->type));
        MPI_CHECK(MPI_Type_free(&t));
        L->extent = sizeof(struct S);
        L->nruns = 3;
        L->off[0] = offsetof(struct S, a), L->len[0] = 4;
        L->off[1] = offsetof(struct S, b), L->len[1] = 8;
        L->off[2] = offsetof(struct S, c), L->len[2] = 1;
        break;
    }
    case K_RESIZED: /* every third int */
        MPI_CHECK(MPI_Type_create_resized(MPI_INT, 0, 12, &L->type));
        L->extent = 12;
        L->nruns = 1;
        L->len[0] = 4;
        break;
    case K_SUBARRAY:
        MPI_CHECK(MPI_Type_create_subarray(2, (int[]){ sub_R, sub_C }, (int[]){ sub_r, sub_c }, (int[]){ 1, 2 },
                                           MPI_ORDER_C, MPI_DOUBLE, &L->type));
        L->extent = (size_t)sub_R * sub_C * 8;
        L->nruns = 0; /* generated */
        break;
    }
    if (L->type != MPI_DOUBLE)
        MPI_CHECK(MPI_Type_commit(&L->type));
}

/* Run k of an element of layout L: offset within the element and length; returns the number
 * of runs per element when k < 0. */
static size_t run_of(int kind, int vec_blocks, const struct layout *L, long k, size_t *off, size_t *len)
{
    size_t n = kind == K_VEC ? (size_t)vec_blocks : kind == K_SUBARRAY ? (size_t)sub_r : L->nruns;
    if (k < 0)
        return n;
    if (kind == K_VEC)
        *off = (size_t)k * 24, *len = 16;
    else if (kind == K_SUBARRAY)
        *off = (((size_t)1 + (size_t)k) * (size_t)sub_C + 2) * 8, *len = (size_t)sub_c * 8;
    else
        *off = L->off[k], *len = L->len[k];
    return n;
}

/* Copies between a buffer laid out as count elements of L and the packed form (type-map order):
 * gather (to_packed) or scatter at most `limit` packed bytes. Returns the packed bytes. */
static size_t walk(int kind, int vec_blocks, const struct layout *L, int count, unsigned char *mem,
                   unsigned char *packed, size_t limit, int to_packed)
{
    size_t done = 0, n = run_of(kind, vec_blocks, L, -1, NULL, NULL);
    for (int e = 0; e < count && done < limit; e++)
        for (size_t k = 0; k < n && done < limit; k++) {
            size_t off = 0, len = 0;
            run_of(kind, vec_blocks, L, (long)k, &off, &len);
            off += (size_t)e * L->extent;
            if (len > limit - done)
                len = limit - done;
            if (to_packed)
                memcpy(packed + done, mem + off, len);
            else
                memcpy(mem + off, packed + done, len);
            done += len;
        }
    return done;
}

static void one(const char *what, int rank, int skind, int scount, int rkind, int rcount, int vec_blocks, int partial)
{
    struct layout SL, RL;
    make_layout(skind, vec_blocks, &SL);
    make_layout(rkind, vec_blocks, &RL);
    size_t sspan = SL.extent * (size_t)scount, rspan = RL.extent * (size_t)rcount;
    unsigned seed = (unsigned)(skind * 131 + scount);
    if (rank == 0) {
        unsigned char *sbuf = mtest_malloc(sspan);
        mtest_fill(sbuf, sspan, seed);
        MPI_CHECK(MPI_Send(sbuf, scount, SL.type, 1, skind, MPI_COMM_WORLD));
        free(sbuf);
    } else if (rank == 1) {
        /* serial reference: the sender's data in type-map order, scattered into the receive
         * type's runs; every other byte keeps the sentinel */
        unsigned char *sbuf = mtest_malloc(sspan);
        mtest_fill(sbuf, sspan, seed);
        unsigned char *packed = mtest_malloc(sspan + 1);
        size_t nbytes = walk(skind, vec_blocks, &SL, scount, sbuf, packed, (size_t)-1, 1);
        unsigned char *rbuf = mtest_malloc(rspan), *expect = mtest_malloc(rspan);
        memset(rbuf, 0xee, rspan);
        memset(expect, 0xee, rspan);
        size_t put = walk(rkind, vec_blocks, &RL, rcount, expect, packed, nbytes, 0);
        CHECK(put == nbytes, "%s: test set-up: %zu bytes sent into room for %zu", what, nbytes, put);
        MPI_Status st;
        MPI_CHECK(MPI_Recv(rbuf, rcount, RL.type, 0, skind, MPI_COMM_WORLD, &st));
        int n;
        MPI_CHECK(MPI_Get_count(&st, MPI_BYTE, &n));
        CHECK((size_t)n == nbytes, "%s: received %d bytes, sent %zu", what, n, nbytes);
        MPI_CHECK(MPI_Get_count(&st, RL.type, &n));
        if (!partial)
            CHECK(n == rcount, "%s: Get_count %d, expected %d", what, n, rcount);
        else
            CHECK(n == MPI_UNDEFINED, "%s: Get_count %d on a partial element", what, n);
        for (size_t i = 0; i < rspan; i++)
            if (rbuf[i] != expect[i])
                FAILF("%s: receive buffer byte %zu of %zu is %#x, expected %#x (%s)", what, i, rspan, rbuf[i],
                      expect[i], expect[i] == 0xee ? "outside the data: must be untouched" : "data");
        free(sbuf);
        free(packed);
        free(rbuf);
        free(expect);
    }
    if (SL.type != MPI_DOUBLE)
        MPI_CHECK(MPI_Type_free(&SL.type));
    if (RL.type != MPI_DOUBLE)
        MPI_CHECK(MPI_Type_free(&RL.type));
}

/* A derived type freed while a nonblocking operation still uses it stays alive until the
 * operation completes (MPI_Type_free only marks it for deallocation). */
static void freed_while_pending(int rank, int large)
{
    int blocks = large ? 40000 : 200; /* 16 bytes per block: 640 KB or 3.2 KB */
    size_t span = (size_t)((blocks - 1) * 3 + 2) * 8;
    unsigned char *buf = mtest_malloc(span);
    MPI_Datatype v;
    MPI_CHECK(MPI_Type_vector(blocks, 2, 3, MPI_DOUBLE, &v));
    MPI_CHECK(MPI_Type_commit(&v));
    MPI_Request rq = MPI_REQUEST_NULL;
    if (rank == 0) {
        mtest_fill(buf, span, 77u + (unsigned)large);
        MPI_CHECK(MPI_Isend(buf, 1, v, 1, 99, MPI_COMM_WORLD, &rq));
    } else if (rank == 1) {
        memset(buf, 0xee, span);
        MPI_CHECK(MPI_Irecv(buf, 1, v, 0, 99, MPI_COMM_WORLD, &rq));
    }
    MPI_CHECK(MPI_Type_free(&v));
    /* more derived types come and go while the operation is pending */
    for (int i = 0; i < 8; i++) {
        MPI_Datatype t;
        MPI_CHECK(MPI_Type_vector(blocks, 1, 2, MPI_INT, &t));
        MPI_CHECK(MPI_Type_commit(&t));
        MPI_CHECK(MPI_Type_free(&t));
    }
    MPI_CHECK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    if (rank == 1) {
        unsigned char *want = mtest_malloc(span);
        mtest_fill(want, span, 77u + (unsigned)large);
        for (size_t i = 0; i < span; i++) {
            int in = (i % 24) < 16;
            CHECK(buf[i] == (in ? want[i] : 0xee), "type freed while pending (%s): byte %zu is %#x",
                  large ? "large" : "small", i, buf[i]);
        }
        free(want);
    }
    free(buf);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size >= 2, "needs 2 ranks");
    if (argc > 1 && strcmp(argv[1], "freed") == 0) { /* types freed while operations are pending */
        freed_while_pending(rank, 0);
        freed_while_pending(rank, 1);
        return mtest_finalize();
    }
    static const char *names[K_NKINDS] = { "doubles", "vector", "indexed", "struct", "resized", "subarray" };
    char what[128];
    for (int large = 0; large <= 1; large++) {
        /* counts such that the packed data is ~4-12 KiB (eager) or 1.5-3 MiB (rendezvous) */
        int vb = large ? 64 : 16;
        sub_R = large ? 520 : 12, sub_C = large ? 520 : 14, sub_r = large ? 500 : 9, sub_c = large ? 500 : 10;
        struct {
            int kind, count;
        } same[] = {
            { K_VEC, large ? 1600 : 31 },
            { K_IDX, large ? 65536 + 3 : 301 },
            { K_STRUCT, large ? 120001 : 501 },
            { K_RESIZED, large ? 400003 : 1001 },
            { K_SUBARRAY, 1 },
        };
        for (size_t i = 0; i < sizeof same / sizeof same[0]; i++) {
            snprintf(what, sizeof what, "%s %s", large ? "large" : "small", names[same[i].kind]);
            one(what, rank, same[i].kind, same[i].count, same[i].kind, same[i].count, vb, 0);
        }
        /* same signature, different layouts: doubles <-> vector of doubles */
        int velems = large ? 1600 : 31, nd = velems * vb * 2;
        snprintf(what, sizeof what, "%s doubles into vector", large ? "large" : "small");
        one(what, rank, K_DOUBLES, nd, K_VEC, velems, vb, 0);
        snprintf(what, sizeof what, "%s vector into doubles", large ? "large" : "small");
        one(what, rank, K_VEC, velems, K_DOUBLES, nd, vb, 0);
        /* fewer doubles than the receive holds, ending inside a vector element */
        snprintf(what, sizeof what, "%s partial vector", large ? "large" : "small");
        one(what, rank, K_DOUBLES, nd - 2 * vb - 3, K_VEC, velems, vb, 1);
        /* subarray received as doubles */
        snprintf(what, sizeof what, "%s subarray into doubles", large ? "large" : "small");
        one(what, rank, K_SUBARRAY, 1, K_DOUBLES, sub_r * sub_c, vb, 0);
    }
    return mtest_finalize();
}
