/* Test-only: runs the blocking collectives of a test program through their nonblocking or
 * persistent forms (MPI standard, sections 6.12 and 6.13), chosen at run time by the
 * environment variable MTEST_NBC:
 *   unset or ""  the blocking call itself
 *   i            MPI_I<coll> + MPI_Wait
 *   t            MPI_I<coll> + MPI_Test until done
 *   p            MPI_<Coll>_init + MPI_Start + MPI_Wait + MPI_Request_free
 *   s            MPI_<Coll>_init + MPI_Startall of the one request + MPI_Waitall + free
 * so that every check of the blocking tests (results, datatypes, in place, intercommunicators,
 * errors) also holds for the other forms. Include after mtest.h; plain standard MPI. */
#ifndef APTUS_TESTS_NBC_WRAP_H
#define APTUS_TESTS_NBC_WRAP_H

#include <mpi.h>
#include <stdlib.h>

MTEST_UNUSED static int nbw_mode(void)
{
    static int mode = -1;
    if (mode < 0) {
        const char *v = getenv("MTEST_NBC");
        mode = v && *v ? v[0] : 0;
    }
    return mode;
}

/* Completes a started request the way the mode says; persistent requests are freed. */
MTEST_UNUSED static int nbw_finish(MPI_Request *r, int persistent)
{
    int rc;
    if (nbw_mode() == 't') {
        int done = 0;
        do
            rc = MPI_Test(r, &done, MPI_STATUS_IGNORE);
        while (rc == MPI_SUCCESS && !done);
    } else if (nbw_mode() == 's') {
        rc = MPI_Waitall(1, r, MPI_STATUSES_IGNORE);
    } else {
        rc = MPI_Wait(r, MPI_STATUS_IGNORE);
    }
    if (persistent && *r != MPI_REQUEST_NULL) {
        int frc = MPI_Request_free(r);
        if (rc == MPI_SUCCESS)
            rc = frc;
    }
    return rc;
}

MTEST_UNUSED static int nbw_start(MPI_Request *r)
{
    return nbw_mode() == 's' ? MPI_Startall(1, r) : MPI_Start(r);
}

MTEST_UNUSED static int nbw_Barrier(MPI_Comm comm)
{
    MPI_Request r;
    int rc;
    switch (nbw_mode()) {
    case 0: return MPI_Barrier(comm);
    case 'p':
    case 's':
        rc = MPI_Barrier_init(comm, MPI_INFO_NULL, &r);
        if (rc == MPI_SUCCESS && (rc = nbw_start(&r)) != MPI_SUCCESS)
            MPI_Request_free(&r);
        return rc == MPI_SUCCESS ? nbw_finish(&r, 1) : rc;
    default: rc = MPI_Ibarrier(comm, &r); return rc == MPI_SUCCESS ? nbw_finish(&r, 0) : rc;
    }
}
#define MPI_Barrier nbw_Barrier

MTEST_UNUSED static int nbw_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    MPI_Request r;
    int rc;
    switch (nbw_mode()) {
    case 0: return MPI_Bcast(buffer, count, datatype, root, comm);
    case 'p':
    case 's':
        rc = MPI_Bcast_init(buffer, count, datatype, root, comm, MPI_INFO_NULL, &r);
        if (rc == MPI_SUCCESS && (rc = nbw_start(&r)) != MPI_SUCCESS)
            MPI_Request_free(&r);
        return rc == MPI_SUCCESS ? nbw_finish(&r, 1) : rc;
    default:
        rc = MPI_Ibcast(buffer, count, datatype, root, comm, &r);
        return rc == MPI_SUCCESS ? nbw_finish(&r, 0) : rc;
    }
}
#define MPI_Bcast nbw_Bcast

MTEST_UNUSED static int nbw_Bcast_c(void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    MPI_Request r;
    int rc;
    switch (nbw_mode()) {
    case 0: return MPI_Bcast_c(buffer, count, datatype, root, comm);
    case 'p':
    case 's':
        rc = MPI_Bcast_init_c(buffer, count, datatype, root, comm, MPI_INFO_NULL, &r);
        if (rc == MPI_SUCCESS && (rc = nbw_start(&r)) != MPI_SUCCESS)
            MPI_Request_free(&r);
        return rc == MPI_SUCCESS ? nbw_finish(&r, 1) : rc;
    default:
        rc = MPI_Ibcast_c(buffer, count, datatype, root, comm, &r);
        return rc == MPI_SUCCESS ? nbw_finish(&r, 0) : rc;
    }
}
#define MPI_Bcast_c nbw_Bcast_c

MTEST_UNUSED static int nbw_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                   int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    MPI_Request r;
    int rc;
    switch (nbw_mode()) {
    case 0: return MPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
    case 'p':
    case 's':
        rc = MPI_Gather_init(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, MPI_INFO_NULL, &r);
        if (rc == MPI_SUCCESS && (rc = nbw_start(&r)) != MPI_SUCCESS)
            MPI_Request_free(&r);
        return rc == MPI_SUCCESS ? nbw_finish(&r, 1) : rc;
    default:
        rc = MPI_Igather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, &r);
        return rc == MPI_SUCCESS ? nbw_finish(&r, 0) : rc;
    }
}
#define MPI_Gather nbw_Gather

MTEST_UNUSED static int nbw_Gather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                                     MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    MPI_Request r;
    int rc;
    switch (nbw_mode()) {
    case 0: return MPI_Gather_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
    case 'p':
    case 's':
        rc = MPI_Gather_init_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, MPI_INFO_NULL,
                               &r);
        if (rc == MPI_SUCCESS && (rc = nbw_start(&r)) != MPI_SUCCESS)
            MPI_Request_free(&r);
        return rc == MPI_SUCCESS ? nbw_finish(&r, 1) : rc;
    default:
        rc = MPI_Igather_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, &r);
        return rc == MPI_SUCCESS ? nbw_finish(&r, 0) : rc;
    }
}
#define MPI_Gather_c nbw_Gather_c

MTEST_UNUSED static int nbw_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                    const int *recvcounts, const int *displs, MPI_Datatype recvtype, int root,
                                    MPI_Comm comm)
{
    MPI_Request r;
    int rc;
    switch (nbw_mode()) {
    case 0: return MPI_Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm);
    case 'p':
    case 's':
        rc = MPI_Gatherv_init(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm,
                              MPI_INFO_NULL, &r);
        if (rc == MPI_SUCCESS && (rc = nbw_start(&r)) != MPI_SUCCESS)
            MPI_Request_free(&r);
        return rc == MPI_SUCCESS ? nbw_finish(&r, 1) : rc;
    default:
        rc = MPI_Igatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm, &r);
        return rc == MPI_SUCCESS ? nbw_finish(&r, 0) : rc;
    }
}
#define MPI_Gatherv nbw_Gatherv

MTEST_UNUSED static int nbw_Gatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                                      const MPI_Count *recvcounts, const MPI_Aint *displs, MPI_Datatype recvtype,
                                      int root, MPI_Comm comm)
{
    MPI_Request r;
    int rc;
    switch (nbw_mode()) {
    case 0: return MPI_Gatherv_c(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm);
    case 'p':
    case 's':
        rc = MPI_Gatherv_init_c(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm,
                                MPI_INFO_NULL, &r);
        if (rc == MPI_SUCCESS && (rc = nbw_start(&r)) != MPI_SUCCESS)
            MPI_Request_free(&r);
        return rc == MPI_SUCCESS ? nbw_finish(&r, 1) : rc;
    default:
        rc = MPI_Igatherv_c(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm, &r);
        return rc == MPI_SUCCESS ? nbw_finish(&r, 0) : rc;
    }
}
#define MPI_Gatherv_c nbw_Gatherv_c

MTEST_UNUSED static int nbw_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                    int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    MPI_Request r;
    int rc;
    switch (nbw_mode()) {
    case 0: return MPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
    case 'p':
    case 's':
        rc =
            MPI_Scatter_init(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, MPI_INFO_NULL, &r);
        if (rc == MPI_SUCCESS && (rc = nbw_start(&r)) != MPI_SUCCESS)
            MPI_Request_free(&r);
        return rc == MPI_SUCCESS ? nbw_finish(&r, 1) : rc;
    default:
        rc = MPI_Iscatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, &r);
        return rc == MPI_SUCCESS ? nbw_finish(&r, 0) : rc;
    }
}
#define MPI_Scatter nbw_Scatter

MTEST_UNUSED static int nbw_Scatter_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                                      MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    MPI_Request r;
    int rc;
    switch (nbw_mode()) {
    case 0: return MPI_Scatter_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
    case 'p':
    case 's':
        rc = MPI_Scatter_init_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, MPI_INFO_NULL,
                                &r);
        if (rc == MPI_SUCCESS && (rc = nbw_start(&r)) != MPI_SUCCESS)
            MPI_Request_free(&r);
        return rc == MPI_SUCCESS ? nbw_finish(&r, 1) : rc;
    default:
        rc = MPI_Iscatter_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, &r);
        return rc == MPI_SUCCESS ? nbw_finish(&r, 0) : rc;
    }
}
#define MPI_Scatter_c nbw_Scatter_c

MTEST_UNUSED static int nbw_Scatterv(const void *sendbuf, const int *sendcounts, const int *displs,
                                     MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                     int root, MPI_Comm comm)
{
    MPI_Request r;
    int rc;
    switch (nbw_mode()) {
    case 0: return MPI_Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm);
    case 'p':
    case 's':
        rc = MPI_Scatterv_init(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm,
                               MPI_INFO_NULL, &r);
        if (rc == MPI_SUCCESS && (rc = nbw_start(&r)) != MPI_SUCCESS)
            MPI_Request_free(&r);
        return rc == MPI_SUCCESS ? nbw_finish(&r, 1) : rc;
    default:
        rc = MPI_Iscatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm, &r);
        return rc == MPI_SUCCESS ? nbw_finish(&r, 0) : rc;
    }
}
#define MPI_Scatterv nbw_Scatterv

MTEST_UNUSED static int nbw_Scatterv_c(const void *sendbuf, const MPI_Count *sendcounts, const MPI_Aint *displs,
                                       MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                                       int root, MPI_Comm comm)
{
    MPI_Request r;
    int rc;
    switch (nbw_mode()) {
    case 0: return MPI_Scatterv_c(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm);
    case 'p':
    case 's':
        rc = MPI_Scatterv_init_c(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm,
                                 MPI_INFO_NULL, &r);
        if (rc == MPI_SUCCESS && (rc = nbw_start(&r)) != MPI_SUCCESS)
            MPI_Request_free(&r);
        return rc == MPI_SUCCESS ? nbw_finish(&r, 1) : rc;
    default:
        rc = MPI_Iscatterv_c(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm, &r);
        return rc == MPI_SUCCESS ? nbw_finish(&r, 0) : rc;
    }
}
#define MPI_Scatterv_c nbw_Scatterv_c

MTEST_UNUSED static int nbw_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                      int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    MPI_Request r;
    int rc;
    switch (nbw_mode()) {
    case 0: return MPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    case 'p':
    case 's':
        rc = MPI_Allgather_init(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, MPI_INFO_NULL, &r);
        if (rc == MPI_SUCCESS && (rc = nbw_start(&r)) != MPI_SUCCESS)
            MPI_Request_free(&r);
        return rc == MPI_SUCCESS ? nbw_finish(&r, 1) : rc;
    default:
        rc = MPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, &r);
        return rc == MPI_SUCCESS ? nbw_finish(&r, 0) : rc;
    }
}
#define MPI_Allgather nbw_Allgather

MTEST_UNUSED static int nbw_Allgather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                                        MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    MPI_Request r;
    int rc;
    switch (nbw_mode()) {
    case 0: return MPI_Allgather_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    case 'p':
    case 's':
        rc = MPI_Allgather_init_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, MPI_INFO_NULL, &r);
        if (rc == MPI_SUCCESS && (rc = nbw_start(&r)) != MPI_SUCCESS)
            MPI_Request_free(&r);
        return rc == MPI_SUCCESS ? nbw_finish(&r, 1) : rc;
    default:
        rc = MPI_Iallgather_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, &r);
        return rc == MPI_SUCCESS ? nbw_finish(&r, 0) : rc;
    }
}
#define MPI_Allgather_c nbw_Allgather_c

MTEST_UNUSED static int nbw_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                       const int *recvcounts, const int *displs, MPI_Datatype recvtype, MPI_Comm comm)
{
    MPI_Request r;
    int rc;
    switch (nbw_mode()) {
    case 0: return MPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
    case 'p':
    case 's':
        rc = MPI_Allgatherv_init(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm,
                                 MPI_INFO_NULL, &r);
        if (rc == MPI_SUCCESS && (rc = nbw_start(&r)) != MPI_SUCCESS)
            MPI_Request_free(&r);
        return rc == MPI_SUCCESS ? nbw_finish(&r, 1) : rc;
    default:
        rc = MPI_Iallgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, &r);
        return rc == MPI_SUCCESS ? nbw_finish(&r, 0) : rc;
    }
}
#define MPI_Allgatherv nbw_Allgatherv

MTEST_UNUSED static int nbw_Allgatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                                         const MPI_Count *recvcounts, const MPI_Aint *displs, MPI_Datatype recvtype,
                                         MPI_Comm comm)
{
    MPI_Request r;
    int rc;
    switch (nbw_mode()) {
    case 0: return MPI_Allgatherv_c(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
    case 'p':
    case 's':
        rc = MPI_Allgatherv_init_c(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm,
                                   MPI_INFO_NULL, &r);
        if (rc == MPI_SUCCESS && (rc = nbw_start(&r)) != MPI_SUCCESS)
            MPI_Request_free(&r);
        return rc == MPI_SUCCESS ? nbw_finish(&r, 1) : rc;
    default:
        rc = MPI_Iallgatherv_c(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, &r);
        return rc == MPI_SUCCESS ? nbw_finish(&r, 0) : rc;
    }
}
#define MPI_Allgatherv_c nbw_Allgatherv_c

MTEST_UNUSED static int nbw_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                     int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    MPI_Request r;
    int rc;
    switch (nbw_mode()) {
    case 0: return MPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    case 'p':
    case 's':
        rc = MPI_Alltoall_init(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, MPI_INFO_NULL, &r);
        if (rc == MPI_SUCCESS && (rc = nbw_start(&r)) != MPI_SUCCESS)
            MPI_Request_free(&r);
        return rc == MPI_SUCCESS ? nbw_finish(&r, 1) : rc;
    default:
        rc = MPI_Ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, &r);
        return rc == MPI_SUCCESS ? nbw_finish(&r, 0) : rc;
    }
}
#define MPI_Alltoall nbw_Alltoall

MTEST_UNUSED static int nbw_Alltoall_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                                       MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    MPI_Request r;
    int rc;
    switch (nbw_mode()) {
    case 0: return MPI_Alltoall_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    case 'p':
    case 's':
        rc = MPI_Alltoall_init_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, MPI_INFO_NULL, &r);
        if (rc == MPI_SUCCESS && (rc = nbw_start(&r)) != MPI_SUCCESS)
            MPI_Request_free(&r);
        return rc == MPI_SUCCESS ? nbw_finish(&r, 1) : rc;
    default:
        rc = MPI_Ialltoall_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, &r);
        return rc == MPI_SUCCESS ? nbw_finish(&r, 0) : rc;
    }
}
#define MPI_Alltoall_c nbw_Alltoall_c

MTEST_UNUSED static int nbw_Alltoallv(const void *sendbuf, const int *sendcounts, const int *sdispls,
                                      MPI_Datatype sendtype, void *recvbuf, const int *recvcounts, const int *rdispls,
                                      MPI_Datatype recvtype, MPI_Comm comm)
{
    MPI_Request r;
    int rc;
    switch (nbw_mode()) {
    case 0: return MPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
    case 'p':
    case 's':
        rc = MPI_Alltoallv_init(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm,
                                MPI_INFO_NULL, &r);
        if (rc == MPI_SUCCESS && (rc = nbw_start(&r)) != MPI_SUCCESS)
            MPI_Request_free(&r);
        return rc == MPI_SUCCESS ? nbw_finish(&r, 1) : rc;
    default:
        rc = MPI_Ialltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, &r);
        return rc == MPI_SUCCESS ? nbw_finish(&r, 0) : rc;
    }
}
#define MPI_Alltoallv nbw_Alltoallv

MTEST_UNUSED static int nbw_Alltoallv_c(const void *sendbuf, const MPI_Count *sendcounts, const MPI_Aint *sdispls,
                                        MPI_Datatype sendtype, void *recvbuf, const MPI_Count *recvcounts,
                                        const MPI_Aint *rdispls, MPI_Datatype recvtype, MPI_Comm comm)
{
    MPI_Request r;
    int rc;
    switch (nbw_mode()) {
    case 0:
        return MPI_Alltoallv_c(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
    case 'p':
    case 's':
        rc = MPI_Alltoallv_init_c(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm,
                                  MPI_INFO_NULL, &r);
        if (rc == MPI_SUCCESS && (rc = nbw_start(&r)) != MPI_SUCCESS)
            MPI_Request_free(&r);
        return rc == MPI_SUCCESS ? nbw_finish(&r, 1) : rc;
    default:
        rc = MPI_Ialltoallv_c(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, &r);
        return rc == MPI_SUCCESS ? nbw_finish(&r, 0) : rc;
    }
}
#define MPI_Alltoallv_c nbw_Alltoallv_c

MTEST_UNUSED static int nbw_Alltoallw(const void *sendbuf, const int *sendcounts, const int *sdispls,
                                      const MPI_Datatype *sendtypes, void *recvbuf, const int *recvcounts,
                                      const int *rdispls, const MPI_Datatype *recvtypes, MPI_Comm comm)
{
    MPI_Request r;
    int rc;
    switch (nbw_mode()) {
    case 0:
        return MPI_Alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm);
    case 'p':
    case 's':
        rc = MPI_Alltoallw_init(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm,
                                MPI_INFO_NULL, &r);
        if (rc == MPI_SUCCESS && (rc = nbw_start(&r)) != MPI_SUCCESS)
            MPI_Request_free(&r);
        return rc == MPI_SUCCESS ? nbw_finish(&r, 1) : rc;
    default:
        rc = MPI_Ialltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm, &r);
        return rc == MPI_SUCCESS ? nbw_finish(&r, 0) : rc;
    }
}
#define MPI_Alltoallw nbw_Alltoallw

MTEST_UNUSED static int nbw_Alltoallw_c(const void *sendbuf, const MPI_Count *sendcounts, const MPI_Aint *sdispls,
                                        const MPI_Datatype *sendtypes, void *recvbuf, const MPI_Count *recvcounts,
                                        const MPI_Aint *rdispls, const MPI_Datatype *recvtypes, MPI_Comm comm)
{
    MPI_Request r;
    int rc;
    switch (nbw_mode()) {
    case 0:
        return MPI_Alltoallw_c(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm);
    case 'p':
    case 's':
        rc = MPI_Alltoallw_init_c(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes,
                                  comm, MPI_INFO_NULL, &r);
        if (rc == MPI_SUCCESS && (rc = nbw_start(&r)) != MPI_SUCCESS)
            MPI_Request_free(&r);
        return rc == MPI_SUCCESS ? nbw_finish(&r, 1) : rc;
    default:
        rc = MPI_Ialltoallw_c(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm,
                              &r);
        return rc == MPI_SUCCESS ? nbw_finish(&r, 0) : rc;
    }
}
#define MPI_Alltoallw_c nbw_Alltoallw_c

MTEST_UNUSED static int nbw_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                                   int root, MPI_Comm comm)
{
    MPI_Request r;
    int rc;
    switch (nbw_mode()) {
    case 0: return MPI_Reduce(sendbuf, recvbuf, count, datatype, op, root, comm);
    case 'p':
    case 's':
        rc = MPI_Reduce_init(sendbuf, recvbuf, count, datatype, op, root, comm, MPI_INFO_NULL, &r);
        if (rc == MPI_SUCCESS && (rc = nbw_start(&r)) != MPI_SUCCESS)
            MPI_Request_free(&r);
        return rc == MPI_SUCCESS ? nbw_finish(&r, 1) : rc;
    default:
        rc = MPI_Ireduce(sendbuf, recvbuf, count, datatype, op, root, comm, &r);
        return rc == MPI_SUCCESS ? nbw_finish(&r, 0) : rc;
    }
}
#define MPI_Reduce nbw_Reduce

MTEST_UNUSED static int nbw_Reduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                                     MPI_Op op, int root, MPI_Comm comm)
{
    MPI_Request r;
    int rc;
    switch (nbw_mode()) {
    case 0: return MPI_Reduce_c(sendbuf, recvbuf, count, datatype, op, root, comm);
    case 'p':
    case 's':
        rc = MPI_Reduce_init_c(sendbuf, recvbuf, count, datatype, op, root, comm, MPI_INFO_NULL, &r);
        if (rc == MPI_SUCCESS && (rc = nbw_start(&r)) != MPI_SUCCESS)
            MPI_Request_free(&r);
        return rc == MPI_SUCCESS ? nbw_finish(&r, 1) : rc;
    default:
        rc = MPI_Ireduce_c(sendbuf, recvbuf, count, datatype, op, root, comm, &r);
        return rc == MPI_SUCCESS ? nbw_finish(&r, 0) : rc;
    }
}
#define MPI_Reduce_c nbw_Reduce_c

MTEST_UNUSED static int nbw_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                                      MPI_Comm comm)
{
    MPI_Request r;
    int rc;
    switch (nbw_mode()) {
    case 0: return MPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
    case 'p':
    case 's':
        rc = MPI_Allreduce_init(sendbuf, recvbuf, count, datatype, op, comm, MPI_INFO_NULL, &r);
        if (rc == MPI_SUCCESS && (rc = nbw_start(&r)) != MPI_SUCCESS)
            MPI_Request_free(&r);
        return rc == MPI_SUCCESS ? nbw_finish(&r, 1) : rc;
    default:
        rc = MPI_Iallreduce(sendbuf, recvbuf, count, datatype, op, comm, &r);
        return rc == MPI_SUCCESS ? nbw_finish(&r, 0) : rc;
    }
}
#define MPI_Allreduce nbw_Allreduce

MTEST_UNUSED static int nbw_Allreduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                                        MPI_Op op, MPI_Comm comm)
{
    MPI_Request r;
    int rc;
    switch (nbw_mode()) {
    case 0: return MPI_Allreduce_c(sendbuf, recvbuf, count, datatype, op, comm);
    case 'p':
    case 's':
        rc = MPI_Allreduce_init_c(sendbuf, recvbuf, count, datatype, op, comm, MPI_INFO_NULL, &r);
        if (rc == MPI_SUCCESS && (rc = nbw_start(&r)) != MPI_SUCCESS)
            MPI_Request_free(&r);
        return rc == MPI_SUCCESS ? nbw_finish(&r, 1) : rc;
    default:
        rc = MPI_Iallreduce_c(sendbuf, recvbuf, count, datatype, op, comm, &r);
        return rc == MPI_SUCCESS ? nbw_finish(&r, 0) : rc;
    }
}
#define MPI_Allreduce_c nbw_Allreduce_c

MTEST_UNUSED static int nbw_Reduce_scatter(const void *sendbuf, void *recvbuf, const int *recvcounts,
                                           MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    MPI_Request r;
    int rc;
    switch (nbw_mode()) {
    case 0: return MPI_Reduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm);
    case 'p':
    case 's':
        rc = MPI_Reduce_scatter_init(sendbuf, recvbuf, recvcounts, datatype, op, comm, MPI_INFO_NULL, &r);
        if (rc == MPI_SUCCESS && (rc = nbw_start(&r)) != MPI_SUCCESS)
            MPI_Request_free(&r);
        return rc == MPI_SUCCESS ? nbw_finish(&r, 1) : rc;
    default:
        rc = MPI_Ireduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm, &r);
        return rc == MPI_SUCCESS ? nbw_finish(&r, 0) : rc;
    }
}
#define MPI_Reduce_scatter nbw_Reduce_scatter

MTEST_UNUSED static int nbw_Reduce_scatter_c(const void *sendbuf, void *recvbuf, const MPI_Count *recvcounts,
                                             MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    MPI_Request r;
    int rc;
    switch (nbw_mode()) {
    case 0: return MPI_Reduce_scatter_c(sendbuf, recvbuf, recvcounts, datatype, op, comm);
    case 'p':
    case 's':
        rc = MPI_Reduce_scatter_init_c(sendbuf, recvbuf, recvcounts, datatype, op, comm, MPI_INFO_NULL, &r);
        if (rc == MPI_SUCCESS && (rc = nbw_start(&r)) != MPI_SUCCESS)
            MPI_Request_free(&r);
        return rc == MPI_SUCCESS ? nbw_finish(&r, 1) : rc;
    default:
        rc = MPI_Ireduce_scatter_c(sendbuf, recvbuf, recvcounts, datatype, op, comm, &r);
        return rc == MPI_SUCCESS ? nbw_finish(&r, 0) : rc;
    }
}
#define MPI_Reduce_scatter_c nbw_Reduce_scatter_c

MTEST_UNUSED static int nbw_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                                                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    MPI_Request r;
    int rc;
    switch (nbw_mode()) {
    case 0: return MPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm);
    case 'p':
    case 's':
        rc = MPI_Reduce_scatter_block_init(sendbuf, recvbuf, recvcount, datatype, op, comm, MPI_INFO_NULL, &r);
        if (rc == MPI_SUCCESS && (rc = nbw_start(&r)) != MPI_SUCCESS)
            MPI_Request_free(&r);
        return rc == MPI_SUCCESS ? nbw_finish(&r, 1) : rc;
    default:
        rc = MPI_Ireduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm, &r);
        return rc == MPI_SUCCESS ? nbw_finish(&r, 0) : rc;
    }
}
#define MPI_Reduce_scatter_block nbw_Reduce_scatter_block

MTEST_UNUSED static int nbw_Reduce_scatter_block_c(const void *sendbuf, void *recvbuf, MPI_Count recvcount,
                                                   MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    MPI_Request r;
    int rc;
    switch (nbw_mode()) {
    case 0: return MPI_Reduce_scatter_block_c(sendbuf, recvbuf, recvcount, datatype, op, comm);
    case 'p':
    case 's':
        rc = MPI_Reduce_scatter_block_init_c(sendbuf, recvbuf, recvcount, datatype, op, comm, MPI_INFO_NULL, &r);
        if (rc == MPI_SUCCESS && (rc = nbw_start(&r)) != MPI_SUCCESS)
            MPI_Request_free(&r);
        return rc == MPI_SUCCESS ? nbw_finish(&r, 1) : rc;
    default:
        rc = MPI_Ireduce_scatter_block_c(sendbuf, recvbuf, recvcount, datatype, op, comm, &r);
        return rc == MPI_SUCCESS ? nbw_finish(&r, 0) : rc;
    }
}
#define MPI_Reduce_scatter_block_c nbw_Reduce_scatter_block_c

MTEST_UNUSED static int nbw_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                                 MPI_Comm comm)
{
    MPI_Request r;
    int rc;
    switch (nbw_mode()) {
    case 0: return MPI_Scan(sendbuf, recvbuf, count, datatype, op, comm);
    case 'p':
    case 's':
        rc = MPI_Scan_init(sendbuf, recvbuf, count, datatype, op, comm, MPI_INFO_NULL, &r);
        if (rc == MPI_SUCCESS && (rc = nbw_start(&r)) != MPI_SUCCESS)
            MPI_Request_free(&r);
        return rc == MPI_SUCCESS ? nbw_finish(&r, 1) : rc;
    default:
        rc = MPI_Iscan(sendbuf, recvbuf, count, datatype, op, comm, &r);
        return rc == MPI_SUCCESS ? nbw_finish(&r, 0) : rc;
    }
}
#define MPI_Scan nbw_Scan

MTEST_UNUSED static int nbw_Scan_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                                   MPI_Op op, MPI_Comm comm)
{
    MPI_Request r;
    int rc;
    switch (nbw_mode()) {
    case 0: return MPI_Scan_c(sendbuf, recvbuf, count, datatype, op, comm);
    case 'p':
    case 's':
        rc = MPI_Scan_init_c(sendbuf, recvbuf, count, datatype, op, comm, MPI_INFO_NULL, &r);
        if (rc == MPI_SUCCESS && (rc = nbw_start(&r)) != MPI_SUCCESS)
            MPI_Request_free(&r);
        return rc == MPI_SUCCESS ? nbw_finish(&r, 1) : rc;
    default:
        rc = MPI_Iscan_c(sendbuf, recvbuf, count, datatype, op, comm, &r);
        return rc == MPI_SUCCESS ? nbw_finish(&r, 0) : rc;
    }
}
#define MPI_Scan_c nbw_Scan_c

MTEST_UNUSED static int nbw_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                                   MPI_Comm comm)
{
    MPI_Request r;
    int rc;
    switch (nbw_mode()) {
    case 0: return MPI_Exscan(sendbuf, recvbuf, count, datatype, op, comm);
    case 'p':
    case 's':
        rc = MPI_Exscan_init(sendbuf, recvbuf, count, datatype, op, comm, MPI_INFO_NULL, &r);
        if (rc == MPI_SUCCESS && (rc = nbw_start(&r)) != MPI_SUCCESS)
            MPI_Request_free(&r);
        return rc == MPI_SUCCESS ? nbw_finish(&r, 1) : rc;
    default:
        rc = MPI_Iexscan(sendbuf, recvbuf, count, datatype, op, comm, &r);
        return rc == MPI_SUCCESS ? nbw_finish(&r, 0) : rc;
    }
}
#define MPI_Exscan nbw_Exscan

MTEST_UNUSED static int nbw_Exscan_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                                     MPI_Op op, MPI_Comm comm)
{
    MPI_Request r;
    int rc;
    switch (nbw_mode()) {
    case 0: return MPI_Exscan_c(sendbuf, recvbuf, count, datatype, op, comm);
    case 'p':
    case 's':
        rc = MPI_Exscan_init_c(sendbuf, recvbuf, count, datatype, op, comm, MPI_INFO_NULL, &r);
        if (rc == MPI_SUCCESS && (rc = nbw_start(&r)) != MPI_SUCCESS)
            MPI_Request_free(&r);
        return rc == MPI_SUCCESS ? nbw_finish(&r, 1) : rc;
    default:
        rc = MPI_Iexscan_c(sendbuf, recvbuf, count, datatype, op, comm, &r);
        return rc == MPI_SUCCESS ? nbw_finish(&r, 0) : rc;
    }
}
#define MPI_Exscan_c nbw_Exscan_c

MTEST_UNUSED static int nbw_Neighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                               int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    MPI_Request r;
    int rc;
    switch (nbw_mode()) {
    case 0: return MPI_Neighbor_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    case 'p':
    case 's':
        rc = MPI_Neighbor_allgather_init(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                                         MPI_INFO_NULL, &r);
        if (rc == MPI_SUCCESS && (rc = nbw_start(&r)) != MPI_SUCCESS)
            MPI_Request_free(&r);
        return rc == MPI_SUCCESS ? nbw_finish(&r, 1) : rc;
    default:
        rc = MPI_Ineighbor_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, &r);
        return rc == MPI_SUCCESS ? nbw_finish(&r, 0) : rc;
    }
}
#define MPI_Neighbor_allgather nbw_Neighbor_allgather

MTEST_UNUSED static int nbw_Neighbor_allgather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                                 void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                                                 MPI_Comm comm)
{
    MPI_Request r;
    int rc;
    switch (nbw_mode()) {
    case 0: return MPI_Neighbor_allgather_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    case 'p':
    case 's':
        rc = MPI_Neighbor_allgather_init_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                                           MPI_INFO_NULL, &r);
        if (rc == MPI_SUCCESS && (rc = nbw_start(&r)) != MPI_SUCCESS)
            MPI_Request_free(&r);
        return rc == MPI_SUCCESS ? nbw_finish(&r, 1) : rc;
    default:
        rc = MPI_Ineighbor_allgather_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, &r);
        return rc == MPI_SUCCESS ? nbw_finish(&r, 0) : rc;
    }
}
#define MPI_Neighbor_allgather_c nbw_Neighbor_allgather_c

MTEST_UNUSED static int nbw_Neighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                                void *recvbuf, const int *recvcounts, const int *displs,
                                                MPI_Datatype recvtype, MPI_Comm comm)
{
    MPI_Request r;
    int rc;
    switch (nbw_mode()) {
    case 0: return MPI_Neighbor_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
    case 'p':
    case 's':
        rc = MPI_Neighbor_allgatherv_init(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm,
                                          MPI_INFO_NULL, &r);
        if (rc == MPI_SUCCESS && (rc = nbw_start(&r)) != MPI_SUCCESS)
            MPI_Request_free(&r);
        return rc == MPI_SUCCESS ? nbw_finish(&r, 1) : rc;
    default:
        rc = MPI_Ineighbor_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, &r);
        return rc == MPI_SUCCESS ? nbw_finish(&r, 0) : rc;
    }
}
#define MPI_Neighbor_allgatherv nbw_Neighbor_allgatherv

MTEST_UNUSED static int nbw_Neighbor_allgatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                                  void *recvbuf, const MPI_Count *recvcounts, const MPI_Aint *displs,
                                                  MPI_Datatype recvtype, MPI_Comm comm)
{
    MPI_Request r;
    int rc;
    switch (nbw_mode()) {
    case 0: return MPI_Neighbor_allgatherv_c(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
    case 'p':
    case 's':
        rc = MPI_Neighbor_allgatherv_init_c(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm,
                                            MPI_INFO_NULL, &r);
        if (rc == MPI_SUCCESS && (rc = nbw_start(&r)) != MPI_SUCCESS)
            MPI_Request_free(&r);
        return rc == MPI_SUCCESS ? nbw_finish(&r, 1) : rc;
    default:
        rc = MPI_Ineighbor_allgatherv_c(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, &r);
        return rc == MPI_SUCCESS ? nbw_finish(&r, 0) : rc;
    }
}
#define MPI_Neighbor_allgatherv_c nbw_Neighbor_allgatherv_c

MTEST_UNUSED static int nbw_Neighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                              int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    MPI_Request r;
    int rc;
    switch (nbw_mode()) {
    case 0: return MPI_Neighbor_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    case 'p':
    case 's':
        rc = MPI_Neighbor_alltoall_init(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, MPI_INFO_NULL,
                                        &r);
        if (rc == MPI_SUCCESS && (rc = nbw_start(&r)) != MPI_SUCCESS)
            MPI_Request_free(&r);
        return rc == MPI_SUCCESS ? nbw_finish(&r, 1) : rc;
    default:
        rc = MPI_Ineighbor_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, &r);
        return rc == MPI_SUCCESS ? nbw_finish(&r, 0) : rc;
    }
}
#define MPI_Neighbor_alltoall nbw_Neighbor_alltoall

MTEST_UNUSED static int nbw_Neighbor_alltoall_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                                void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                                                MPI_Comm comm)
{
    MPI_Request r;
    int rc;
    switch (nbw_mode()) {
    case 0: return MPI_Neighbor_alltoall_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    case 'p':
    case 's':
        rc = MPI_Neighbor_alltoall_init_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                                          MPI_INFO_NULL, &r);
        if (rc == MPI_SUCCESS && (rc = nbw_start(&r)) != MPI_SUCCESS)
            MPI_Request_free(&r);
        return rc == MPI_SUCCESS ? nbw_finish(&r, 1) : rc;
    default:
        rc = MPI_Ineighbor_alltoall_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, &r);
        return rc == MPI_SUCCESS ? nbw_finish(&r, 0) : rc;
    }
}
#define MPI_Neighbor_alltoall_c nbw_Neighbor_alltoall_c

MTEST_UNUSED static int nbw_Neighbor_alltoallv(const void *sendbuf, const int *sendcounts, const int *sdispls,
                                               MPI_Datatype sendtype, void *recvbuf, const int *recvcounts,
                                               const int *rdispls, MPI_Datatype recvtype, MPI_Comm comm)
{
    MPI_Request r;
    int rc;
    switch (nbw_mode()) {
    case 0:
        return MPI_Neighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                                      comm);
    case 'p':
    case 's':
        rc = MPI_Neighbor_alltoallv_init(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                                         comm, MPI_INFO_NULL, &r);
        if (rc == MPI_SUCCESS && (rc = nbw_start(&r)) != MPI_SUCCESS)
            MPI_Request_free(&r);
        return rc == MPI_SUCCESS ? nbw_finish(&r, 1) : rc;
    default:
        rc = MPI_Ineighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                                     comm, &r);
        return rc == MPI_SUCCESS ? nbw_finish(&r, 0) : rc;
    }
}
#define MPI_Neighbor_alltoallv nbw_Neighbor_alltoallv

MTEST_UNUSED static int nbw_Neighbor_alltoallv_c(const void *sendbuf, const MPI_Count *sendcounts,
                                                 const MPI_Aint *sdispls, MPI_Datatype sendtype, void *recvbuf,
                                                 const MPI_Count *recvcounts, const MPI_Aint *rdispls,
                                                 MPI_Datatype recvtype, MPI_Comm comm)
{
    MPI_Request r;
    int rc;
    switch (nbw_mode()) {
    case 0:
        return MPI_Neighbor_alltoallv_c(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                                        comm);
    case 'p':
    case 's':
        rc = MPI_Neighbor_alltoallv_init_c(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                                           recvtype, comm, MPI_INFO_NULL, &r);
        if (rc == MPI_SUCCESS && (rc = nbw_start(&r)) != MPI_SUCCESS)
            MPI_Request_free(&r);
        return rc == MPI_SUCCESS ? nbw_finish(&r, 1) : rc;
    default:
        rc = MPI_Ineighbor_alltoallv_c(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                                       comm, &r);
        return rc == MPI_SUCCESS ? nbw_finish(&r, 0) : rc;
    }
}
#define MPI_Neighbor_alltoallv_c nbw_Neighbor_alltoallv_c

MTEST_UNUSED static int nbw_Neighbor_alltoallw(const void *sendbuf, const int *sendcounts, const MPI_Aint *sdispls,
                                               const MPI_Datatype *sendtypes, void *recvbuf, const int *recvcounts,
                                               const MPI_Aint *rdispls, const MPI_Datatype *recvtypes, MPI_Comm comm)
{
    MPI_Request r;
    int rc;
    switch (nbw_mode()) {
    case 0:
        return MPI_Neighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes,
                                      comm);
    case 'p':
    case 's':
        rc = MPI_Neighbor_alltoallw_init(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                                         recvtypes, comm, MPI_INFO_NULL, &r);
        if (rc == MPI_SUCCESS && (rc = nbw_start(&r)) != MPI_SUCCESS)
            MPI_Request_free(&r);
        return rc == MPI_SUCCESS ? nbw_finish(&r, 1) : rc;
    default:
        rc = MPI_Ineighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes,
                                     comm, &r);
        return rc == MPI_SUCCESS ? nbw_finish(&r, 0) : rc;
    }
}
#define MPI_Neighbor_alltoallw nbw_Neighbor_alltoallw

MTEST_UNUSED static int nbw_Neighbor_alltoallw_c(const void *sendbuf, const MPI_Count *sendcounts,
                                                 const MPI_Aint *sdispls, const MPI_Datatype *sendtypes, void *recvbuf,
                                                 const MPI_Count *recvcounts, const MPI_Aint *rdispls,
                                                 const MPI_Datatype *recvtypes, MPI_Comm comm)
{
    MPI_Request r;
    int rc;
    switch (nbw_mode()) {
    case 0:
        return MPI_Neighbor_alltoallw_c(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                                        recvtypes, comm);
    case 'p':
    case 's':
        rc = MPI_Neighbor_alltoallw_init_c(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                                           recvtypes, comm, MPI_INFO_NULL, &r);
        if (rc == MPI_SUCCESS && (rc = nbw_start(&r)) != MPI_SUCCESS)
            MPI_Request_free(&r);
        return rc == MPI_SUCCESS ? nbw_finish(&r, 1) : rc;
    default:
        rc = MPI_Ineighbor_alltoallw_c(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes,
                                       comm, &r);
        return rc == MPI_SUCCESS ? nbw_finish(&r, 0) : rc;
    }
}
#define MPI_Neighbor_alltoallw_c nbw_Neighbor_alltoallw_c

#endif
