// C++ program built with mpicxx: the header must work from C++.
#include <mpi.h>

#include <cstdio>
#include <vector>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    std::vector<int> all(size);
    MPI_Allreduce(&rank, all.data(), 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (all[0] != size - 1) {
        std::printf("wrong allreduce result %d\n", all[0]);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    std::printf("c++ rank %d of %d ok\n", rank, size);
    MPI_Finalize();
    return 0;
}
