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

void pmpi_recv_(void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *source, MPI_Fint *tag, MPI_Fint *comm,
                MPI_Fint *status, MPI_Fint *ierror);

/* MPI_F_STATUS(ES)_IGNORE and the f08 ones (MPI 4.1, 19.3.5): the addresses Fortran passes for
 * its sentinels (s, ss from `mpi`; s08, ss08 from mpi_f08), usable as such by C calling a Fortran
 * entry point, and refused by the status conversions. res[0..6]: 1 when each holds. */
void c_ignore_(MPI_Fint *s, MPI_Fint *ss, void *s08, void *ss08, MPI_Fint *res)
{
    MPI_Fint before[MPI_F_STATUS_SIZE], v = 0, one = 1, me = 0, tag = 77, ierr = -1;
    MPI_Fint ftype = MPI_Type_c2f(MPI_INT), fcomm = MPI_Comm_c2f(MPI_COMM_SELF);
    MPI_Request req;
    MPI_Status st;
    int i, sent = 42;

    res[0] = s == MPI_F_STATUS_IGNORE;
    res[1] = ss == MPI_F_STATUSES_IGNORE;
    res[2] = s08 == (void *)MPI_F08_STATUS_IGNORE;
    res[3] = ss08 == (void *)MPI_F08_STATUSES_IGNORE;
    /* a receive through the Fortran entry point with C's MPI_F_STATUS_IGNORE: no status written */
    res[4] = 0;
    if (MPI_F_STATUS_IGNORE) {
        for (i = 0; i < MPI_F_STATUS_SIZE; i++)
            before[i] = MPI_F_STATUS_IGNORE[i];
        MPI_Isend(&sent, 1, MPI_INT, 0, 77, MPI_COMM_SELF, &req);
        pmpi_recv_(&v, &one, &ftype, &me, &tag, &fcomm, MPI_F_STATUS_IGNORE, &ierr);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        res[4] = ierr == MPI_SUCCESS && v == 42;
        for (i = 0; i < MPI_F_STATUS_SIZE; i++)
            if (before[i] != MPI_F_STATUS_IGNORE[i])
                res[4] = 0;
    }
    /* not statuses: the conversions refuse them */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    res[5] = MPI_Status_f2c(MPI_F_STATUS_IGNORE, &st) != MPI_SUCCESS;
    res[6] = MPI_Status_c2f08(&st, MPI_F08_STATUS_IGNORE) != MPI_SUCCESS;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}
