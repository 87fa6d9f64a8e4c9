/* Communicators (MPI standard, chapter 7): the part needed by ordinary programs so far. */
#include <stdlib.h>
#include <string.h>

#include "api/check.h"
#include "core/comm.h"

int PMPI_Comm_rank(MPI_Comm comm, int *rank)
{
    GET_COMM(c, comm, "MPI_Comm_rank");
    *rank = c->rank;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Comm_rank)

int PMPI_Comm_size(MPI_Comm comm, int *size)
{
    GET_COMM(c, comm, "MPI_Comm_size");
    *size = c->size;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Comm_size)

int PMPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    GET_COMM(c, comm, "MPI_Comm_dup");
    struct aptus_comm *n;
    int rc = aptus_comm_dup(c, &n);
    if (rc)
        return aptus_error(c, rc, "MPI_Comm_dup", "could not create the communicator");
    *newcomm = n->handle;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Comm_dup)

int PMPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    GET_COMM(c, comm, "MPI_Comm_split");
    if (color < 0 && color != MPI_UNDEFINED)
        return aptus_error(c, MPI_ERR_ARG, "MPI_Comm_split", "invalid color %d (must be >= 0 or MPI_UNDEFINED)", color);
    struct aptus_comm *n;
    int rc = aptus_comm_split(c, color, key, &n);
    if (rc)
        return aptus_error(c, rc, "MPI_Comm_split", "could not create the communicator");
    *newcomm = n ? n->handle : MPI_COMM_NULL;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Comm_split)

int PMPI_Comm_free(MPI_Comm *comm)
{
    API_INIT("MPI_Comm_free");
    if (!comm)
        return aptus_error(NULL, MPI_ERR_ARG, "MPI_Comm_free", "null argument");
    if (*comm == MPI_COMM_WORLD || *comm == MPI_COMM_SELF)
        return aptus_error(NULL, MPI_ERR_COMM, "MPI_Comm_free", "predefined communicators cannot be freed");
    struct aptus_comm *c = aptus_comm_get(*comm);
    if (!c)
        return aptus_error(NULL, MPI_ERR_COMM, "MPI_Comm_free", "invalid communicator handle");
    aptus_comm_release(c);
    *comm = MPI_COMM_NULL;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Comm_free)

int PMPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int *result)
{
    GET_COMM(a, comm1, "MPI_Comm_compare");
    struct aptus_comm *b = aptus_comm_get(comm2);
    if (!b)
        return aptus_error(a, MPI_ERR_COMM, "MPI_Comm_compare", "invalid second communicator");
    *result = aptus_comm_compare(a, b);
    return MPI_SUCCESS;
}
APTUS_ALIAS(Comm_compare)

int PMPI_Comm_set_name(MPI_Comm comm, const char *name)
{
    GET_COMM(c, comm, "MPI_Comm_set_name");
    strncpy(c->name, name, MPI_MAX_OBJECT_NAME - 1);
    c->name[MPI_MAX_OBJECT_NAME - 1] = 0;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Comm_set_name)

int PMPI_Comm_get_name(MPI_Comm comm, char *name, int *resultlen)
{
    GET_COMM(c, comm, "MPI_Comm_get_name");
    strcpy(name, c->name);
    *resultlen = (int)strlen(name);
    return MPI_SUCCESS;
}
APTUS_ALIAS(Comm_get_name)

int PMPI_Comm_test_inter(MPI_Comm comm, int *flag)
{
    GET_COMM(c, comm, "MPI_Comm_test_inter");
    *flag = 0;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Comm_test_inter)
