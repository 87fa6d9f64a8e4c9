/* MPI_Type_match_size finds a type for every size that a named type of the class has: each
 * named integer, real and complex type of mpi.h (those the implementation provides) gives a size
 * that MPI_Type_match_size must match with a predefined type of that size. Sizes no type has are
 * MPI_ERR_ARG, and so is an unknown class. */
#include "mtest.h"

/* MPI 4.1 names that older headers (MPICH 4.0) lack */
#ifndef MPI_REAL2
#define MPI_REAL2 MPI_DATATYPE_NULL
#endif
#ifndef MPI_COMPLEX4
#define MPI_COMPLEX4 MPI_DATATYPE_NULL
#endif

static void check_class(int typeclass, const char *cname, const MPI_Datatype *types, const char *const *names, int n)
{
    for (int i = 0; i < n; i++) {
        if (types[i] == MPI_DATATYPE_NULL)
            continue; /* not provided by this implementation */
        int size = -1, got = -1;
        MPI_CHECK(MPI_Type_size(types[i], &size));
        MPI_Datatype t = MPI_DATATYPE_NULL;
        int rc = MPI_Type_match_size(typeclass, size, &t);
        CHECK(rc == MPI_SUCCESS, "MPI_Type_match_size(%s, %d) (the size of %s) failed: %s", cname, size, names[i],
              mtest_errstr(rc));
        CHECK(t != MPI_DATATYPE_NULL, "MPI_Type_match_size(%s, %d) gave MPI_DATATYPE_NULL", cname, size);
        MPI_CHECK(MPI_Type_size(t, &got));
        CHECK(got == size, "MPI_Type_match_size(%s, %d) gave a type of size %d", cname, size, got);
        int ni, na, nd, comb;
        MPI_CHECK(MPI_Type_get_envelope(t, &ni, &na, &nd, &comb));
        CHECK(comb == MPI_COMBINER_NAMED, "MPI_Type_match_size(%s, %d): not a named type (combiner %d)", cname, size,
              comb);
    }
    MPI_Datatype t;
    int rc = MPI_Type_match_size(typeclass, 3, &t);
    CHECK_ERRCLASS(rc, MPI_ERR_ARG, "MPI_Type_match_size of size 3");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    const MPI_Datatype ints[] = { MPI_INTEGER, MPI_INTEGER1, MPI_INTEGER2, MPI_INTEGER4, MPI_INTEGER8, MPI_INTEGER16 };
    const char *const int_names[] = { "MPI_INTEGER",  "MPI_INTEGER1", "MPI_INTEGER2",
                                      "MPI_INTEGER4", "MPI_INTEGER8", "MPI_INTEGER16" };
    const MPI_Datatype reals[] = { MPI_REAL, MPI_DOUBLE_PRECISION, MPI_REAL2, MPI_REAL4, MPI_REAL8, MPI_REAL16 };
    const char *const real_names[] = { "MPI_REAL",  "MPI_DOUBLE_PRECISION", "MPI_REAL2", "MPI_REAL4", "MPI_REAL8",
                                       "MPI_REAL16" };
    const MPI_Datatype cplx[] = { MPI_COMPLEX,  MPI_DOUBLE_COMPLEX, MPI_COMPLEX4,
                                  MPI_COMPLEX8, MPI_COMPLEX16,      MPI_COMPLEX32 };
    const char *const cplx_names[] = { "MPI_COMPLEX",  "MPI_DOUBLE_COMPLEX", "MPI_COMPLEX4",
                                       "MPI_COMPLEX8", "MPI_COMPLEX16",      "MPI_COMPLEX32" };
    check_class(MPI_TYPECLASS_INTEGER, "MPI_TYPECLASS_INTEGER", ints, int_names, 6);
    check_class(MPI_TYPECLASS_REAL, "MPI_TYPECLASS_REAL", reals, real_names, 6);
    check_class(MPI_TYPECLASS_COMPLEX, "MPI_TYPECLASS_COMPLEX", cplx, cplx_names, 6);
    MPI_Datatype t;
    int rc = MPI_Type_match_size(12345, 4, &t);
    CHECK_ERRCLASS(rc, MPI_ERR_ARG, "MPI_Type_match_size of an unknown class");
    return mtest_finalize();
}
