/* Windows of nonblocking messages in both directions at once, the pattern of a bandwidth
 * benchmark: rank i and rank i + n/2 (n: the even number of ranks) each post W receives and
 * W sends of one size, wait for all, and repeat (with ranks placed in blocks, the pairs span
 * nodes); every byte of every message is checked, and each round has new contents.
 * Sizes 64 KiB, 1 MiB and 1 MiB + 7 (rendezvous on every channel), W = 16.
 * Arguments (optional): W, then ROUNDS (default 4).
 * A rank without a partner (odd size) only takes part in the barriers. */
#include "mtest.h"

static int rank, size;

static void rounds(size_t n, int w, int nrounds, unsigned seed)
{
    int n2 = size / 2, peer = rank < n2 ? rank + n2 : rank - n2;
    if (rank >= 2 * n2) {
        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
        return;
    }
    char **sb = mtest_malloc((size_t)w * sizeof *sb), **rb = mtest_malloc((size_t)w * sizeof *rb);
    MPI_Request *rq = mtest_malloc(2 * (size_t)w * sizeof *rq);
    for (int i = 0; i < w; i++) {
        sb[i] = mtest_malloc(n);
        rb[i] = mtest_malloc(n);
    }
    for (int r = 0; r < nrounds; r++) {
        /* Contents differ per sender, round and message. */
        for (int i = 0; i < w; i++) {
            unsigned s = seed + 1000u * (unsigned)rank + 100u * (unsigned)r + (unsigned)i;
            for (size_t k = 0; k < n; k++)
                sb[i][k] = (char)mtest_pat(s, k);
            memset(rb[i], 0x5a, n);
        }
        for (int i = 0; i < w; i++)
            MPI_CHECK(MPI_Irecv(rb[i], (int)n, MPI_BYTE, peer, i, MPI_COMM_WORLD, &rq[i]));
        for (int i = 0; i < w; i++)
            MPI_CHECK(MPI_Isend(sb[i], (int)n, MPI_BYTE, peer, i, MPI_COMM_WORLD, &rq[w + i]));
        MPI_CHECK(MPI_Waitall(2 * w, rq, MPI_STATUSES_IGNORE));
        for (int i = 0; i < w; i++) {
            unsigned s = seed + 1000u * (unsigned)peer + 100u * (unsigned)r + (unsigned)i;
            for (size_t k = 0; k < n; k++)
                if ((unsigned char)rb[i][k] != mtest_pat(s, k))
                    FAILF("%zu bytes, round %d, message %d from rank %d: byte %zu is 0x%02x, want 0x%02x", n, r, i,
                          peer, k, (unsigned char)rb[i][k], mtest_pat(s, k));
        }
    }
    for (int i = 0; i < w; i++) {
        free(sb[i]);
        free(rb[i]);
    }
    free(sb);
    free(rb);
    free(rq);
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size >= 2, "needs at least 2 ranks, got %d", size);
    int w = argc > 1 ? atoi(argv[1]) : 16, nr = argc > 2 ? atoi(argv[2]) : 4;
    CHECK(w >= 1 && w <= 256 && nr >= 1, "bad arguments: window %d, rounds %d", w, nr);
    rounds((size_t)64 << 10, w, nr, 1);
    rounds((size_t)1 << 20, w, nr, 2);
    rounds(((size_t)1 << 20) + 7, w, nr, 3);
    return mtest_finalize();
}
