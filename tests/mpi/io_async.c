/* Nonblocking independent MPI-IO (MPI 4.1, 14.4) at 1-3 ranks: the request is moved by the
 * progress engine after the call returns (a 64 MiB MPI_File_iwrite_at is not complete at its
 * first test: it moves 4 MiB a progress pass), many requests in flight on one file at once,
 * writes and reads through a strided view whose datatype the program frees at once, the
 * individual pointer moved when the call starts, a short read at the end of the file, an
 * external32 read converted when it completes, MPI_Request_free of a write in flight followed by
 * MPI_File_close (which completes it first); ROMIO's MPIO_Request / MPIO_Wait; nonblocking
 * collectives (two-phase through an interleaved view) that do not wait for a late rank, several in
 * flight on one file, one under a blocking collective, a split collective. Every byte is checked. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "mtest.h"

#define BIG ((size_t)64 << 20)

/* A view of blocks of 2 ints, every rank its own in turn; the types freed at once. */
static void interleaved_view(MPI_File fh, int rank, int size)
{
    MPI_Datatype vec, ftype;
    MPI_Type_vector(1, 2, 2 * size, MPI_INT, &vec);
    MPI_Type_create_resized(vec, 0, (MPI_Aint)(2 * size * sizeof(int)), &ftype);
    MPI_Type_commit(&ftype);
    MPI_Type_free(&vec);
    MPI_CHECK(MPI_File_set_view(fh, (MPI_Offset)(rank * 2 * sizeof(int)), MPI_INT, ftype, "native", MPI_INFO_NULL));
    MPI_Type_free(&ftype);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char name[64] = "/tmp/aptus-ioasync-XXXXXX";
    if (rank == 0) {
        int fd = mkstemp(name);
        CHECK(fd >= 0, "mkstemp");
        close(fd);
    }
    MPI_Bcast(name, sizeof name, MPI_CHAR, 0, MPI_COMM_WORLD);
    MPI_File fh;
    MPI_Status st;
    MPI_Request req;
    MPI_Count n;
    int flag, k;
    MPI_CHECK(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDWR, MPI_INFO_NULL, &fh));

    /* one large write: still in flight after the call and after one test */
    unsigned char *big = malloc(BIG);
    CHECK(big != NULL, "malloc");
    for (size_t i = 0; i < BIG; i++)
        big[i] = (unsigned char)(i * 7 + (size_t)rank);
    MPI_CHECK(MPI_File_iwrite_at(fh, (MPI_Offset)(BIG * (size_t)rank), big, (int)BIG, MPI_BYTE, &req));
    MPI_CHECK(MPI_Request_get_status(req, &flag, MPI_STATUS_IGNORE));
    CHECK(!flag, "a 64 MiB iwrite_at was complete at its first test: it did not run in the background");
    MPI_CHECK(MPI_Wait(&req, &st));
    MPI_Get_count_c(&st, MPI_BYTE, &n);
    CHECK(n == (MPI_Count)BIG, "iwrite_at count %lld", (long long)n);
    memset(big, 0, BIG);
    MPI_CHECK(MPI_File_iread_at(fh, (MPI_Offset)(BIG * (size_t)rank), big, (int)BIG, MPI_BYTE, &req));
    MPI_CHECK(MPI_Wait(&req, &st));
    for (size_t i = 0; i < BIG; i++)
        if (big[i] != (unsigned char)(i * 7 + (size_t)rank))
            CHECK(0, "iread_at: byte %zu is %u", i, big[i]);
    free(big);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_CHECK(MPI_File_set_size(fh, 0));

    /* many requests at once: 16 writes of 1 MiB, then 16 reads of them, in flight together */
    enum { NR = 16, PIECE = 1 << 20 };
    unsigned char *w = malloc((size_t)NR * PIECE), *r = malloc((size_t)NR * PIECE);
    MPI_Request reqs[NR];
    for (size_t i = 0; i < (size_t)NR * PIECE; i++)
        w[i] = (unsigned char)(i / 4096 + (size_t)rank * 3);
    for (k = 0; k < NR; k++)
        MPI_CHECK(MPI_File_iwrite_at(fh, (MPI_Offset)((size_t)(k * size + rank) * PIECE), w + (size_t)k * PIECE, PIECE,
                                     MPI_BYTE, &reqs[k]));
    MPI_CHECK(MPI_Waitall(NR, reqs, MPI_STATUSES_IGNORE));
    for (k = 0; k < NR; k++)
        MPI_CHECK(MPI_File_iread_at(fh, (MPI_Offset)((size_t)(k * size + rank) * PIECE), r + (size_t)k * PIECE, PIECE,
                                    MPI_BYTE, &reqs[k]));
    MPI_CHECK(MPI_Waitall(NR, reqs, MPI_STATUSES_IGNORE));
    CHECK(memcmp(w, r, (size_t)NR * PIECE) == 0, "16 pieces in flight: read back differs");
    free(w);
    free(r);
    MPI_File_sync(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_sync(fh);
    MPI_CHECK(MPI_File_set_size(fh, 0));

    /* a strided view of blocks of 2 ints (every rank its own), the type freed at once; the
     * individual pointer moves when the call starts */
    interleaved_view(fh, rank, size);
    int iv[4000], ib[4000];
    for (int i = 0; i < 4000; i++)
        iv[i] = rank * 100000 + i;
    MPI_Datatype pairs;
    MPI_Type_contiguous(2, MPI_INT, &pairs);
    MPI_Type_commit(&pairs);
    MPI_CHECK(MPI_File_iwrite(fh, iv, 2000, pairs, &req));
    MPI_Type_free(&pairs);
    MPI_Offset pos;
    MPI_File_get_position(fh, &pos);
    CHECK(pos == 4000, "the individual pointer after starting an iwrite: %lld etypes", (long long)pos);
    MPI_CHECK(MPI_Wait(&req, &st));
    MPI_Get_count_c(&st, MPI_INT, &n);
    CHECK(n == 4000, "iwrite count %lld ints", (long long)n);
    MPI_File_sync(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_sync(fh);
    MPI_CHECK(MPI_File_iread_at(fh, 0, ib, 4000, MPI_INT, &req));
    MPI_CHECK(MPI_Wait(&req, &st));
    for (int i = 0; i < 4000; i++)
        CHECK(ib[i] == iv[i], "strided iread_at: [%d] = %d", i, ib[i]);
    /* past the end: 10 asked at the last 4 */
    MPI_CHECK(MPI_File_iread_at(fh, 3996, ib, 10, MPI_INT, &req));
    MPI_CHECK(MPI_Wait(&req, &st));
    MPI_Get_count_c(&st, MPI_INT, &n);
    CHECK(n == 4, "iread_at at the end: count %lld, expected 4", (long long)n);

    /* nonblocking collectives through an interleaved view (two-phase): the call does not wait
     * for a rank that has not called yet; three in flight on one file, waited for in reverse
     * order; one left in flight under a blocking collective; a split collective */
    enum { NI = 1 << 18 };
    int *cw = malloc(sizeof(int) * NI * 3), *cr = malloc(sizeof(int) * NI * 3);
    for (int i = 0; i < 3 * NI; i++)
        cw[i] = rank * 1000000 + i;
    MPI_CHECK(MPI_File_set_size(fh, 0));
    interleaved_view(fh, rank, size);
    if (rank == size - 1 && size > 1)
        usleep(1000000); /* the last rank comes late */
    double t0 = MPI_Wtime();
    MPI_Request creq[3];
    MPI_CHECK(MPI_File_iwrite_at_all(fh, 0, cw, NI, MPI_INT, &creq[0]));
    double t1 = MPI_Wtime();
    if (rank == 0 && size > 1)
        CHECK(t1 - t0 < 0.5, "MPI_File_iwrite_at_all waited %.2f s for a late rank: not nonblocking", t1 - t0);
    MPI_CHECK(MPI_File_iwrite_at_all(fh, NI, cw + NI, NI, MPI_INT, &creq[1]));
    MPI_CHECK(MPI_File_iwrite_all(fh, cw + 2 * NI, NI, MPI_INT, &creq[2])); /* the pointer: 0 */
    MPI_CHECK(MPI_Wait(&creq[2], &st));
    MPI_Get_count_c(&st, MPI_INT, &n);
    CHECK(n == NI, "iwrite_all count %lld", (long long)n);
    MPI_CHECK(MPI_Wait(&creq[1], MPI_STATUS_IGNORE));
    MPI_CHECK(MPI_Wait(&creq[0], MPI_STATUS_IGNORE));
    /* (the pointer-based one wrote over the first at offset 0: it started last) */
    MPI_CHECK(MPI_File_iread_at_all(fh, 0, cr, 2 * NI, MPI_INT, &creq[0]));
    MPI_CHECK(MPI_File_read_at_all(fh, 2 * NI, cr + 2 * NI, NI, MPI_INT, &st)); /* one in flight */
    MPI_Get_count_c(&st, MPI_INT, &n);
    CHECK(n == 0, "read_at_all past the end: count %lld", (long long)n);
    MPI_CHECK(MPI_Wait(&creq[0], &st));
    MPI_Get_count_c(&st, MPI_INT, &n);
    CHECK(n == 2 * NI, "iread_at_all count %lld", (long long)n);
    for (int i = 0; i < 2 * NI; i++) {
        int want = i < NI ? cw[2 * NI + i] : cw[i];
        if (cr[i] != want)
            CHECK(0, "nonblocking collectives: int %d is %d, expected %d", i, cr[i], want);
    }
    memset(cr, 0, sizeof(int) * NI);
    MPI_CHECK(MPI_File_read_at_all_begin(fh, NI, cr, NI, MPI_INT));
    MPI_CHECK(MPI_File_read_at_all_end(fh, cr, &st));
    MPI_Get_count_c(&st, MPI_INT, &n);
    CHECK(n == NI && memcmp(cr, cw + NI, sizeof(int) * NI) == 0, "split collective read: count %lld", (long long)n);
    free(cw);
    free(cr);

    /* external32: the read converted when it completes */
    MPI_CHECK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "external32", MPI_INFO_NULL));
    MPI_CHECK(MPI_File_set_size(fh, 0));
    int e[3] = { 0x01020304, -5, rank }, eb[3] = { 0 };
    MPI_CHECK(MPI_File_iwrite_at(fh, 3 * rank, e, 3, MPI_INT, &req));
    MPI_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    MPIO_Request mreq; /* ROMIO's old names still compile (macros for the standard ones) */
    MPI_CHECK(MPI_File_iread_at(fh, 3 * rank, eb, 3, MPI_INT, &mreq));
    MPI_CHECK(MPIO_Wait(&mreq, &st));
    CHECK(mreq == MPIO_REQUEST_NULL, "MPIO_Wait left the request");
    CHECK(eb[0] == e[0] && eb[1] == e[1] && eb[2] == e[2], "external32 iread_at: %x %d %d", eb[0], eb[1], eb[2]);
    unsigned char raw[4];
    MPI_CHECK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    MPI_CHECK(MPI_File_read_at(fh, 12 * rank, raw, 4, MPI_BYTE, MPI_STATUS_IGNORE));
    CHECK(raw[0] == 1 && raw[1] == 2 && raw[2] == 3 && raw[3] == 4, "external32 iwrite_at: not big-endian");
    MPI_Barrier(MPI_COMM_WORLD); /* (before the next writes cover these bytes) */

    /* a write in flight, its request freed, then the file closed: close completes it */
    unsigned char *last = malloc(BIG / 4);
    memset(last, 0x5a + rank, BIG / 4);
    MPI_CHECK(MPI_File_iwrite_at(fh, (MPI_Offset)(BIG / 4 * (size_t)rank), last, (int)(BIG / 4), MPI_BYTE, &req));
    MPI_CHECK(MPI_Request_free(&req));
    MPI_CHECK(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    FILE *fp = fopen(name, "rb");
    CHECK(fp != NULL, "reopen");
    fseek(fp, (long)(BIG / 4 * (size_t)rank), SEEK_SET);
    size_t got = fread(last, 1, BIG / 4, fp);
    fclose(fp);
    CHECK(got == BIG / 4, "the freed write left %zu bytes", got);
    for (size_t i = 0; i < BIG / 4; i++)
        if (last[i] != (unsigned char)(0x5a + rank))
            CHECK(0, "the freed write: byte %zu is %u", i, last[i]);
    free(last);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        unlink(name);
    MPI_Finalize();
    if (rank == 0)
        printf("No Errors\n");
    return 0;
}
