/* Non-contiguous point-to-point: derived datatypes on the send side, the receive side or both,
 * at eager and rendezvous sizes, received early and late (unexpected), to oneself, with
 * Sendrecv_replace, Bsend, truncation and the padded predefined pair types. Every received
 * layout is checked element by element against a serial reference, holes included (they must
 * keep their sentinel).
 *
 * argv[1] == "recvside": only contiguous sends into non-contiguous receives (with
 * APTUS_SMP_CMA_MIN=0 every rendezvous must then be a one-sided read into an iovec list).
 * Uses ranks 0 and 1; other ranks only take part in the barriers. */
#include "mtest.h"

static int rank, size;
static const double SENTINEL = -12345.0;

static double val(unsigned seed, size_t i)
{
    return (double)(seed * 1000003u + i * 7u) + 0.25;
}

/* A vector of n doubles, one every `stride`. */
static MPI_Datatype vec(int n, int stride)
{
    MPI_Datatype t;
    MPI_CHECK(MPI_Type_vector(n, 1, stride, MPI_DOUBLE, &t));
    MPI_CHECK(MPI_Type_commit(&t));
    return t;
}

/* Contiguous send of n doubles, received into every stride-th slot. */
static void contig_to_vector(int n, int stride, int late, unsigned seed)
{
    MPI_Datatype v = vec(n, stride);
    if (rank == 0) {
        double *s = mtest_malloc((size_t)n * sizeof(double));
        for (int i = 0; i < n; i++)
            s[i] = val(seed, (size_t)i);
        if (late)
            MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
        MPI_CHECK(MPI_Send(s, n, MPI_DOUBLE, 1, 1, MPI_COMM_WORLD));
        free(s);
    } else if (rank == 1) {
        size_t len = (size_t)n * (size_t)stride;
        double *r = mtest_malloc(len * sizeof(double));
        for (size_t i = 0; i < len; i++)
            r[i] = SENTINEL;
        MPI_Request rq = MPI_REQUEST_NULL;
        if (!late)
            MPI_CHECK(MPI_Irecv(r, 1, v, 0, 1, MPI_COMM_WORLD, &rq));
        else
            MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
        MPI_Status st;
        if (late) {
            /* Let the message arrive first (unexpected), then receive it. */
            MPI_CHECK(MPI_Probe(0, 1, MPI_COMM_WORLD, &st));
            MPI_CHECK(MPI_Recv(r, 1, v, 0, 1, MPI_COMM_WORLD, &st));
        } else {
            MPI_CHECK(MPI_Wait(&rq, &st));
        }
        int cnt = -1;
        MPI_CHECK(MPI_Get_count(&st, v, &cnt));
        CHECK(cnt == 1, "contig->vector n=%d: MPI_Get_count gave %d, want 1", n, cnt);
        for (size_t i = 0; i < len; i++) {
            double want = i % (size_t)stride == 0 ? val(seed, i / (size_t)stride) : SENTINEL;
            CHECK(r[i] == want, "contig->vector n=%d stride=%d late=%d: slot %zu is %g, want %g", n, stride, late, i,
                  r[i], want);
        }
        free(r);
    } else if (late) {
        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    }
    MPI_CHECK(MPI_Type_free(&v));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
}

/* Every stride-th double sent, received contiguous. */
static void vector_to_contig(int n, int stride, int late, unsigned seed)
{
    MPI_Datatype v = vec(n, stride);
    if (rank == 0) {
        size_t len = (size_t)n * (size_t)stride;
        double *s = mtest_malloc(len * sizeof(double));
        for (size_t i = 0; i < len; i++)
            s[i] = i % (size_t)stride == 0 ? val(seed, i / (size_t)stride) : SENTINEL;
        if (late)
            MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
        MPI_CHECK(MPI_Send(s, 1, v, 1, 2, MPI_COMM_WORLD));
        free(s);
    } else if (rank == 1) {
        double *r = mtest_malloc(((size_t)n + 1) * sizeof(double));
        r[n] = SENTINEL;
        MPI_Status st;
        if (late) {
            MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
            MPI_CHECK(MPI_Probe(0, 2, MPI_COMM_WORLD, &st));
        }
        MPI_CHECK(MPI_Recv(r, n + 1, MPI_DOUBLE, 0, 2, MPI_COMM_WORLD, &st));
        int cnt = -1;
        MPI_CHECK(MPI_Get_count(&st, MPI_DOUBLE, &cnt));
        CHECK(cnt == n, "vector->contig: MPI_Get_count gave %d, want %d", cnt, n);
        for (int i = 0; i < n; i++)
            CHECK(r[i] == val(seed, (size_t)i), "vector->contig n=%d late=%d: element %d is %g, want %g", n, late, i,
                  r[i], val(seed, (size_t)i));
        CHECK(r[n] == SENTINEL, "vector->contig: element past the message was written");
        free(r);
    } else if (late) {
        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    }
    MPI_CHECK(MPI_Type_free(&v));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
}

/* Both sides non-contiguous and different: blocks of 3 doubles every 5 on the send side; the
 * receive side a struct {double; hole; double; double} resized to 5 doubles, count n. */
static void both_sides(int n, unsigned seed)
{
    MPI_Datatype s3, r3, r3s;
    MPI_CHECK(MPI_Type_vector(n, 3, 5, MPI_DOUBLE, &s3));
    MPI_CHECK(MPI_Type_commit(&s3));
    int bl[2] = { 1, 2 };
    MPI_Aint disp[2] = { 0, 2 * (MPI_Aint)sizeof(double) };
    MPI_Datatype types[2] = { MPI_DOUBLE, MPI_DOUBLE };
    MPI_CHECK(MPI_Type_create_struct(2, bl, disp, types, &r3));
    MPI_CHECK(MPI_Type_create_resized(r3, 0, 5 * (MPI_Aint)sizeof(double), &r3s));
    MPI_CHECK(MPI_Type_commit(&r3s));
    size_t len = (size_t)n * 5;
    if (rank == 0) {
        double *s = mtest_malloc(len * sizeof(double));
        for (size_t i = 0; i < len; i++)
            s[i] = i % 5 < 3 ? val(seed, (i / 5) * 3 + i % 5) : SENTINEL;
        MPI_CHECK(MPI_Send(s, 1, s3, 1, 3, MPI_COMM_WORLD));
        free(s);
    } else if (rank == 1) {
        double *r = mtest_malloc(len * sizeof(double));
        for (size_t i = 0; i < len; i++)
            r[i] = SENTINEL;
        MPI_CHECK(MPI_Recv(r, n, r3s, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (size_t i = 0; i < len; i++) {
            size_t e = i / 5, k = i % 5;
            double want = k == 0   ? val(seed, e * 3)
                          : k == 2 ? val(seed, e * 3 + 1)
                          : k == 3 ? val(seed, e * 3 + 2)
                                   : SENTINEL;
            CHECK(r[i] == want, "both sides n=%d: slot %zu is %g, want %g", n, i, r[i], want);
        }
        free(r);
    }
    MPI_CHECK(MPI_Type_free(&s3));
    MPI_CHECK(MPI_Type_free(&r3));
    MPI_CHECK(MPI_Type_free(&r3s));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
}

/* To oneself: nonblocking send from a vector, receive into another vector. */
static void to_self(int n, unsigned seed)
{
    MPI_Datatype v2 = vec(n, 2), v3 = vec(n, 3);
    double *s = mtest_malloc((size_t)n * 2 * sizeof(double));
    double *r = mtest_malloc((size_t)n * 3 * sizeof(double));
    for (int i = 0; i < 2 * n; i++)
        s[i] = i % 2 ? SENTINEL : val(seed, (size_t)i / 2);
    for (int i = 0; i < 3 * n; i++)
        r[i] = SENTINEL;
    MPI_Request rq;
    MPI_CHECK(MPI_Isend(s, 1, v2, rank, 4, MPI_COMM_WORLD, &rq));
    MPI_CHECK(MPI_Recv(r, 1, v3, rank, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MPI_CHECK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    for (int i = 0; i < 3 * n; i++) {
        double want = i % 3 ? SENTINEL : val(seed, (size_t)i / 3);
        CHECK(r[i] == want, "to self n=%d: slot %d is %g, want %g", n, i, r[i], want);
    }
    free(s);
    free(r);
    MPI_CHECK(MPI_Type_free(&v2));
    MPI_CHECK(MPI_Type_free(&v3));
}

/* Sendrecv_replace and Bsend with a vector type between ranks 0 and 1. */
static void replace_and_bsend(int n, unsigned seed)
{
    if (rank > 1)
        return;
    int other = 1 - rank;
    MPI_Datatype v = vec(n, 2);
    double *b = mtest_malloc((size_t)n * 2 * sizeof(double));
    for (int i = 0; i < 2 * n; i++)
        b[i] = i % 2 ? SENTINEL : val(seed + (unsigned)rank, (size_t)i / 2);
    MPI_CHECK(MPI_Sendrecv_replace(b, 1, v, other, 5, other, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    for (int i = 0; i < 2 * n; i++) {
        double want = i % 2 ? SENTINEL : val(seed + (unsigned)other, (size_t)i / 2);
        CHECK(b[i] == want, "Sendrecv_replace n=%d: slot %d is %g, want %g", n, i, b[i], want);
    }
    int psize;
    MPI_CHECK(MPI_Pack_size(1, v, MPI_COMM_WORLD, &psize));
    int bsize = psize + MPI_BSEND_OVERHEAD;
    void *att = mtest_malloc((size_t)bsize);
    MPI_CHECK(MPI_Buffer_attach(att, bsize));
    for (int i = 0; i < 2 * n; i++)
        b[i] = i % 2 ? SENTINEL : val(seed + 7u + (unsigned)rank, (size_t)i / 2);
    MPI_CHECK(MPI_Bsend(b, 1, v, other, 6, MPI_COMM_WORLD));
    /* The data was copied: changing the buffer now must not change the message. */
    for (int i = 0; i < 2 * n; i++)
        b[i] = 0;
    double *r = mtest_malloc((size_t)n * sizeof(double));
    MPI_CHECK(MPI_Recv(r, n, MPI_DOUBLE, other, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    for (int i = 0; i < n; i++)
        CHECK(r[i] == val(seed + 7u + (unsigned)other, (size_t)i), "Bsend n=%d: element %d is %g", n, i, r[i]);
    void *det;
    MPI_CHECK(MPI_Buffer_detach(&det, &bsize));
    free(att);
    free(r);
    free(b);
    MPI_CHECK(MPI_Type_free(&v));
}

/* A message longer than the non-contiguous receive: MPI_ERR_TRUNCATE, and nothing outside the
 * receive's layout is written (what lands inside it is not defined by the standard; if
 * anything, it must be the right data). */
static void truncation(int n, unsigned seed)
{
    MPI_Datatype v = vec(n / 2, 2);
    if (rank == 0) {
        double *s = mtest_malloc((size_t)n * sizeof(double));
        for (int i = 0; i < n; i++)
            s[i] = val(seed, (size_t)i);
        MPI_CHECK(MPI_Send(s, n, MPI_DOUBLE, 1, 7, MPI_COMM_WORLD));
        free(s);
    } else if (rank == 1) {
        double *r = mtest_malloc((size_t)n * 2 * sizeof(double));
        for (int i = 0; i < 2 * n; i++)
            r[i] = SENTINEL;
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        int rc = MPI_Recv(r, 1, v, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
        CHECK_ERRCLASS(rc, MPI_ERR_TRUNCATE, "truncated non-contiguous receive");
        for (int i = 0; i < 2 * n; i++) {
            int inside = i % 2 == 0 && i / 2 < n / 2;
            CHECK(r[i] == SENTINEL || (inside && r[i] == val(seed, (size_t)i / 2)),
                  "truncation n=%d: slot %d is %g (inside the layout: %d)", n, i, r[i], inside);
        }
        free(r);
    }
    MPI_CHECK(MPI_Type_free(&v));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
}

/* Predefined pair types carry padding (MPI_DOUBLE_INT) or a hole (MPI_SHORT_INT): only the
 * members travel, and the padding of the receive buffer is left alone. */
struct di {
    double v;
    int k;
};
struct si {
    short v;
    int k;
};

static void pairs(int n, unsigned seed)
{
    if (rank > 1)
        return;
    struct di *d = mtest_malloc((size_t)n * sizeof *d);
    struct si *s = mtest_malloc((size_t)n * sizeof *s);
    if (rank == 0) {
        for (int i = 0; i < n; i++) {
            d[i].v = val(seed, (size_t)i);
            d[i].k = i;
            s[i].v = (short)(i * 3);
            s[i].k = -i;
        }
        MPI_CHECK(MPI_Send(d, n, MPI_DOUBLE_INT, 1, 8, MPI_COMM_WORLD));
        MPI_CHECK(MPI_Send(s, n, MPI_SHORT_INT, 1, 9, MPI_COMM_WORLD));
    } else {
        memset(d, 0x5a, (size_t)n * sizeof *d);
        memset(s, 0x5a, (size_t)n * sizeof *s);
        MPI_Status st;
        MPI_CHECK(MPI_Recv(d, n, MPI_DOUBLE_INT, 0, 8, MPI_COMM_WORLD, &st));
        int cnt = -1;
        MPI_CHECK(MPI_Get_count(&st, MPI_DOUBLE_INT, &cnt));
        CHECK(cnt == n, "MPI_DOUBLE_INT: count %d, want %d", cnt, n);
        MPI_CHECK(MPI_Get_elements(&st, MPI_DOUBLE_INT, &cnt));
        CHECK(cnt == 2 * n, "MPI_DOUBLE_INT: %d basic elements, want %d", cnt, 2 * n);
        MPI_CHECK(MPI_Recv(s, n, MPI_SHORT_INT, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (int i = 0; i < n; i++) {
            CHECK(d[i].v == val(seed, (size_t)i) && d[i].k == i, "MPI_DOUBLE_INT element %d wrong", i);
            CHECK(s[i].v == (short)(i * 3) && s[i].k == -i, "MPI_SHORT_INT element %d wrong", i);
            const unsigned char *hole = (const unsigned char *)&s[i] + sizeof(short);
            for (size_t b = 0; b < offsetof(struct si, k) - sizeof(short); b++)
                CHECK(hole[b] == 0x5a, "MPI_SHORT_INT element %d: the hole was written", i);
        }
    }
    free(d);
    free(s);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int recvside = argc > 1 && strcmp(argv[1], "recvside") == 0;
    /* Eager (1 KiB, 8 KiB of data), rendezvous (800 KiB, 4 MiB of data). */
    const int sizes[] = { 1, 128, 1000, 100000, 524288 };
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        int n = sizes[k];
        unsigned seed = (unsigned)k + 1;
        if (size >= 2) {
            contig_to_vector(n, 2, 0, seed);
            contig_to_vector(n, 3, 1, seed + 10);
            if (!recvside) {
                vector_to_contig(n, 2, 0, seed + 20);
                vector_to_contig(n, 3, 1, seed + 30);
                both_sides(n, seed + 40);
                replace_and_bsend(n, seed + 50);
                pairs(n, seed + 60);
                if (n > 1)
                    truncation(n, seed + 70);
            }
        }
        if (!recvside)
            to_self(n, seed + 80);
    }
    MPI_Finalize();
    return 0;
}
