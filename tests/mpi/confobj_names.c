/* MPI 4.1: MPI_Comm_get_name and MPI_Type_get_name accept the null handles and return
 * "MPI_COMM_NULL" and "MPI_DATATYPE_NULL"; the predefined objects keep their names. */
#include "mtest.h"

int main(int argc, char **argv)
{
    char name[MPI_MAX_OBJECT_NAME];
    int len = -1;
    MPI_Init(&argc, &argv);
#if MPI_VERSION > 4 || (MPI_VERSION == 4 && MPI_SUBVERSION >= 1)
    MPI_CHECK(MPI_Comm_get_name(MPI_COMM_NULL, name, &len));
    CHECK(strcmp(name, "MPI_COMM_NULL") == 0 && len == 13, "name of MPI_COMM_NULL: \"%s\" (%d)", name, len);
    len = -1;
    MPI_CHECK(MPI_Type_get_name(MPI_DATATYPE_NULL, name, &len));
    CHECK(strcmp(name, "MPI_DATATYPE_NULL") == 0 && len == 17, "name of MPI_DATATYPE_NULL: \"%s\" (%d)", name, len);
#endif
    MPI_CHECK(MPI_Comm_get_name(MPI_COMM_WORLD, name, &len));
    CHECK(strcmp(name, "MPI_COMM_WORLD") == 0, "name of MPI_COMM_WORLD: \"%s\"", name);
    MPI_CHECK(MPI_Type_get_name(MPI_INT, name, &len));
    CHECK(strcmp(name, "MPI_INT") == 0, "name of MPI_INT: \"%s\"", name);
    MPI_Finalize();
    return 0;
}
