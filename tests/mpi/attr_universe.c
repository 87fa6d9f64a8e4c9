/* MPI_UNIVERSE_SIZE follows what the launcher environment announces (MPI_UNIVERSE_SIZE; mpiexec
 * keeps one it finds in its own environment). Expected value in MTEST_EXPECT_UNIVERSE. */
#include "mtest.h"

int main(int argc, char **argv)
{
    int size, flag, *p;
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *want = getenv("MTEST_EXPECT_UNIVERSE");
    int expect = want ? atoi(want) : size;
    MPI_CHECK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &p, &flag));
    CHECK(flag, "MPI_UNIVERSE_SIZE not set");
    CHECK(*p == expect, "MPI_UNIVERSE_SIZE = %d, want %d", *p, expect);
    MPI_Finalize();
    return 0;
}
