/* With APTUS_NO_REMOVED_MPI1, mpi.h declares none of the MPI-1 functions removed in MPI 3.0:
 * a program may use their names for its own things (this would not compile otherwise). */
#define APTUS_NO_REMOVED_MPI1
#include <mpi.h>

static double MPI_Address = 1.0, MPI_Type_extent = 2.0, MPI_Type_struct = 3.0, MPI_Errhandler_set = 4.0;
static double MPI_Type_hvector = 5.0, MPI_Type_hindexed = 6.0, MPI_Type_lb = 7.0, MPI_Type_ub = 8.0;
static double MPI_Errhandler_create = 9.0, MPI_Errhandler_get = 10.0, MPI_Handler_function = 11.0;

double sum(void);
double sum(void)
{
    return MPI_Address + MPI_Type_extent + MPI_Type_struct + MPI_Errhandler_set + MPI_Type_hvector + MPI_Type_hindexed +
           MPI_Type_lb + MPI_Type_ub + MPI_Errhandler_create + MPI_Errhandler_get + MPI_Handler_function;
}
