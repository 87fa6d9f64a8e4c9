/* C half of f_pmpi.f90: a profiling wrapper of the Fortran MPI_Barrier. The program's own
 * mpi_barrier_ (gfortran: lowercase name + '_') takes the place of the library's; it counts the
 * calls and does the barrier through the library's pmpi_barrier_. */
#include <mpi.h>

extern void pmpi_barrier_(MPI_Fint *comm, MPI_Fint *ierr);

static MPI_Fint barrier_calls;

void mpi_barrier_(MPI_Fint *comm, MPI_Fint *ierr)
{
    barrier_calls++;
    pmpi_barrier_(comm, ierr);
}

void get_count_(MPI_Fint *n)
{
    *n = barrier_calls;
}
