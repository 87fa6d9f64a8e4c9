/* MPI_BOTTOM with absolute addresses in the displacements (not in the datatype): MPI_Alltoallw
 * and MPI_Neighbor_alltoallw with a null buffer, MPI_INT blocks and byte displacements from
 * MPI_Get_address must move the data (mpi4py's testNeighborAlltoallwBottom does this). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "mtest.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int *sbuf = mtest_malloc((size_t)size * sizeof(int)), *rbuf = mtest_malloc((size_t)size * sizeof(int));
    int *cnt = mtest_malloc((size_t)size * sizeof(int));
    MPI_Aint *sd = mtest_malloc((size_t)size * sizeof(MPI_Aint)), *rd = mtest_malloc((size_t)size * sizeof(MPI_Aint));
    MPI_Datatype *ty = mtest_malloc((size_t)size * sizeof(MPI_Datatype));
    int *ird = mtest_malloc((size_t)size * sizeof(int));
    for (int i = 0; i < size; i++) {
        sbuf[i] = 100 * rank + i;
        rbuf[i] = -1;
        cnt[i] = 1;
        ty[i] = MPI_INT;
        MPI_Get_address(&sbuf[i], &sd[i]);
        MPI_Get_address(&rbuf[i], &rd[i]);
        ird[i] = (int)rd[i];
    }

    /* MPI_Alltoallw(_c): one side from MPI_BOTTOM with absolute displacements, the other a real
     * buffer with relative ones (MPICH refuses sendbuf == recvbuf even for MPI_BOTTOM). */
    MPI_Count *ccnt = mtest_malloc((size_t)size * sizeof(MPI_Count));
    MPI_Aint *rel = mtest_malloc((size_t)size * sizeof(MPI_Aint));
    int *irel = mtest_malloc((size_t)size * sizeof(int));
    for (int i = 0; i < size; i++) {
        ccnt[i] = 1;
        rel[i] = (MPI_Aint)(i * sizeof(int));
        irel[i] = (int)rel[i];
    }
    MPI_CHECK(MPI_Alltoallw_c(sbuf, ccnt, rel, ty, MPI_BOTTOM, ccnt, rd, ty, MPI_COMM_WORLD));
    for (int i = 0; i < size; i++)
        CHECK(rbuf[i] == 100 * i + rank, "MPI_Alltoallw_c: rbuf[%d] = %d, expected %d", i, rbuf[i], 100 * i + rank);
    for (int i = 0; i < size; i++)
        rbuf[i] = -1;
    MPI_CHECK(MPI_Alltoallw_c(MPI_BOTTOM, ccnt, sd, ty, rbuf, ccnt, rel, ty, MPI_COMM_WORLD));
    for (int i = 0; i < size; i++)
        CHECK(rbuf[i] == 100 * i + rank, "MPI_Alltoallw_c (send side): rbuf[%d] = %d", i, rbuf[i]);
    /* The int form, when the addresses fit in an int (seldom, on 64-bit Linux). */
    if ((MPI_Aint)ird[0] == rd[0] && (size < 2 || (MPI_Aint)ird[size - 1] == rd[size - 1])) {
        for (int i = 0; i < size; i++)
            rbuf[i] = -1;
        MPI_CHECK(MPI_Alltoallw(sbuf, cnt, irel, ty, MPI_BOTTOM, cnt, ird, ty, MPI_COMM_WORLD));
        for (int i = 0; i < size; i++)
            CHECK(rbuf[i] == 100 * i + rank, "MPI_Alltoallw: rbuf[%d] = %d", i, rbuf[i]);
    }

    /* A ring: one source (left), one destination (right). */
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    MPI_Comm ring;
    MPI_CHECK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &left, MPI_UNWEIGHTED, 1, &right, MPI_UNWEIGHTED,
                                             MPI_INFO_NULL, 0, &ring));
    rbuf[0] = -1;
    MPI_CHECK(MPI_Neighbor_alltoallw(MPI_BOTTOM, cnt, sd, ty, MPI_BOTTOM, cnt, rd, ty, ring));
    CHECK(rbuf[0] == 100 * left, "MPI_Neighbor_alltoallw: got %d, expected %d", rbuf[0], 100 * left);
    rbuf[0] = -1;
    MPI_CHECK(MPI_Neighbor_alltoallw_c(MPI_BOTTOM, ccnt, sd, ty, MPI_BOTTOM, ccnt, rd, ty, ring));
    CHECK(rbuf[0] == 100 * left, "MPI_Neighbor_alltoallw_c: got %d, expected %d", rbuf[0], 100 * left);
    MPI_CHECK(MPI_Comm_free(&ring));

    free(sbuf);
    free(rbuf);
    free(cnt);
    free(sd);
    free(rd);
    free(ty);
    free(ird);
    free(ccnt);
    free(rel);
    free(irel);
    return mtest_finalize();
}
