/* C side of f_attrlang.f90: reads and sets attributes on communicators the Fortran side made. */
#include <stddef.h>
#include <stdint.h>

#include <mpi.h>

/* The attribute `keyval` of the Fortran communicator `fcomm` as C sees it: *found, and the
 * MPI_Aint it points to (an attribute set from Fortran is a pointer to the integer). */
void c_read_attr_(MPI_Fint *fcomm, MPI_Fint *keyval, MPI_Aint *value, MPI_Fint *found)
{
    void *p = NULL;
    int flag = 0;
    MPI_Comm_get_attr(MPI_Comm_f2c(*fcomm), *keyval, &p, &flag);
    *found = flag;
    *value = flag ? *(MPI_Aint *)p : 0;
}

/* Sets the attribute from C to the pointer value `pointer`. */
void c_set_attr_(MPI_Fint *fcomm, MPI_Fint *keyval, MPI_Aint *pointer)
{
    MPI_Comm_set_attr(MPI_Comm_f2c(*fcomm), *keyval, (void *)(intptr_t)*pointer);
}
