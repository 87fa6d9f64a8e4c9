/* C half of f_handles.f90: handles and statuses passed between Fortran and C.
 * Called from Fortran as external subroutines (gfortran: lowercase name + '_', every argument
 * by reference). */
#include <mpi.h>

/* A Fortran communicator, datatype and status seen from C: what C finds in them goes back to
 * Fortran, which compares it with what it knows. res[0..11]: size and rank in comm, size of
 * type, status source, tag and count (of type), c2f(f2c(comm)) == comm, c2f(f2c(type)) == type,
 * the status converted back equal to the original, MPI_F_STATUS_SIZE, MPI_F_SOURCE,
 * MPI_F_TAG (the latter two 0-based in C). */
void c_check_(MPI_Fint *comm, MPI_Fint *type, MPI_Fint *status, MPI_Fint *res)
{
    MPI_Comm c = MPI_Comm_f2c(*comm);
    MPI_Datatype t = MPI_Type_f2c(*type);
    MPI_Status s;
    MPI_Fint back[MPI_F_STATUS_SIZE];
    int v, i, same = 1;

    for (i = 0; i < 12; i++)
        res[i] = -1;
    if (MPI_Comm_size(c, &v) == MPI_SUCCESS)
        res[0] = v;
    if (MPI_Comm_rank(c, &v) == MPI_SUCCESS)
        res[1] = v;
    if (MPI_Type_size(t, &v) == MPI_SUCCESS)
        res[2] = v;
    if (MPI_Status_f2c(status, &s) == MPI_SUCCESS) {
        res[3] = s.MPI_SOURCE;
        res[4] = s.MPI_TAG;
        if (MPI_Get_count(&s, t, &v) == MPI_SUCCESS)
            res[5] = v;
        if (MPI_Status_c2f(&s, back) == MPI_SUCCESS) {
            for (i = 0; i < MPI_F_STATUS_SIZE; i++)
                if (back[i] != status[i])
                    same = 0;
            res[8] = same;
        }
    }
    res[6] = MPI_Comm_c2f(c) == *comm;
    res[7] = MPI_Type_c2f(t) == *type;
    res[9] = MPI_F_STATUS_SIZE;
    res[10] = MPI_F_SOURCE;
    res[11] = MPI_F_TAG;
}

/* The other direction: C handles as Fortran ones. A communicator created in C (a dup of
 * MPI_COMM_WORLD) is handed to Fortran, which uses and frees it. */
void c_handles_(MPI_Fint *world, MPI_Fint *null, MPI_Fint *integer, MPI_Fint *sum, MPI_Fint *dup)
{
    MPI_Comm d = MPI_COMM_NULL;

    *world = MPI_Comm_c2f(MPI_COMM_WORLD);
    *null = MPI_Comm_c2f(MPI_COMM_NULL);
    *integer = MPI_Type_c2f(MPI_INTEGER);
    *sum = MPI_Op_c2f(MPI_SUM);
    MPI_Comm_dup(MPI_COMM_WORLD, &d);
    *dup = MPI_Comm_c2f(d);
}
