/* What the C library keeps for the Fortran bindings (MPI 5.0, the ABI chapter), seen from a C
 * program that loads no Fortran bindings: the Fortran ABI details and LOGICAL values (unset, then
 * set once), the status conversions between the three layouts, and handles as integers (O(1),
 * a freed object's number given to the next object of its slot, a made-up number refused). */
#include <string.h>

#include "mtest.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    int cls;

    /* no Fortran bindings here: nothing set yet */
    MPI_Info info = MPI_INFO_ENV;
    CHECK(MPI_Abi_get_fortran_info(&info) == MPI_SUCCESS && info == MPI_INFO_NULL, "fortran info not null at first");
    int t = 7, f = 7, is_set = 1;
    CHECK(MPI_Abi_get_fortran_booleans(4, &t, &f, &is_set) == MPI_SUCCESS && !is_set, "booleans set at first");
    int rc = MPI_Abi_set_fortran_booleans(3, &t, &f);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_ARG, "logical size 3 accepted (class %d)", cls);

    /* set once, read back */
    t = -1;
    f = 0;
    CHECK(MPI_Abi_set_fortran_booleans(4, &t, &f) == MPI_SUCCESS, "set booleans");
    t = f = 5;
    CHECK(MPI_Abi_get_fortran_booleans(4, &t, &f, &is_set) == MPI_SUCCESS && is_set && t == -1 && f == 0,
          "booleans read back %d %d %d", t, f, is_set);
    MPI_Info mine;
    MPI_Info_create(&mine);
    MPI_Info_set(mine, "mpi_integer_size", "4");
    CHECK(MPI_Abi_set_fortran_info(mine) == MPI_SUCCESS, "set fortran info");
    rc = MPI_Abi_set_fortran_info(mine);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_ABI, "a second MPI_Abi_set_fortran_info gave class %d, not MPI_ERR_ABI", cls);
    MPI_Info_free(&mine);
    CHECK(MPI_Abi_get_fortran_info(&info) == MPI_SUCCESS && info != MPI_INFO_NULL, "fortran info after set");
    char v[16];
    int flag = 0;
    MPI_Info_get(info, "mpi_integer_size", sizeof v - 1, v, &flag);
    CHECK(flag && strcmp(v, "4") == 0, "the info's copy lost its key");
    MPI_Info_free(&info);

    /* status conversions */
    MPI_Status s = { .MPI_SOURCE = 3, .MPI_TAG = 9, .MPI_ERROR = MPI_ERR_TRUNCATE }, back;
    MPI_Fint fs[MPI_F_STATUS_SIZE];
    MPI_F08_status f08;
    CHECK(MPI_Status_c2f(&s, fs) == MPI_SUCCESS && fs[MPI_F_SOURCE] == 3 && fs[MPI_F_TAG] == 9, "c2f");
    CHECK(MPI_Status_f2f08(fs, &f08) == MPI_SUCCESS && f08.MPI_TAG == 9, "f2f08");
    memset(fs, 0, sizeof fs);
    CHECK(MPI_Status_f082f(&f08, fs) == MPI_SUCCESS && fs[MPI_F_ERROR] == MPI_ERR_TRUNCATE, "f082f");
    CHECK(MPI_Status_f2c(fs, &back) == MPI_SUCCESS && back.MPI_SOURCE == 3 && back.MPI_TAG == 9, "f2c");
    CHECK(MPI_Status_c2f08(&back, &f08) == MPI_SUCCESS && MPI_Status_f082c(&f08, &back) == MPI_SUCCESS &&
              back.MPI_ERROR == MPI_ERR_TRUNCATE,
          "c2f08 / f082c");
    rc = MPI_Status_f2c(MPI_F_STATUS_IGNORE, &back);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_ARG, "MPI_Status_f2c of MPI_F_STATUS_IGNORE gave class %d", cls);

    /* handles as integers */
    CHECK(MPI_Comm_toint(MPI_COMM_WORLD) == (int)(intptr_t)MPI_COMM_WORLD, "predefined handle's number");
    MPI_Comm a, b;
    MPI_Comm_dup(MPI_COMM_WORLD, &a);
    int na = MPI_Comm_c2f(a);
    CHECK(na >= 0x400 && MPI_Comm_fromint(na) == a && MPI_Comm_f2c(na) == a, "dup'ed communicator round trip");
    MPI_Comm_free(&a);
    MPI_Comm_dup(MPI_COMM_WORLD, &b);
    CHECK(MPI_Comm_toint(b) == na, "the slot's number not given again (%d, was %d)", MPI_Comm_toint(b), na);
    MPI_Comm_free(&b);
    int size = -1;
    rc = MPI_Comm_size(MPI_Comm_f2c(0x7fff0000), &size);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_COMM, "a made-up Fortran communicator gave class %d", cls);
    MPI_Request r;
    MPI_Irecv(NULL, 0, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &r);
    CHECK(MPI_Request_fromint(MPI_Request_toint(r)) == r, "request round trip");
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    return mtest_finalize();
}
