/* Collective operations (MPI standard, chapter 6): the blocking ones needed so far. */
#include <stdlib.h>

#include "api/check.h"
#include "coll/coll.h"
#include "core/op.h"

int PMPI_Barrier(MPI_Comm comm)
{
    GET_COMM(c, comm, "MPI_Barrier");
    int rc = aptus_barrier(c);
    return rc ? aptus_error(c, rc, "MPI_Barrier", "barrier failed") : MPI_SUCCESS;
}
APTUS_ALIAS(Barrier)

static int bcast_any(const char *fn, void *buf, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    GET_COMM(c, comm, fn);
    CHK_COUNT(c, count, fn);
    GET_DTYPE(d, datatype, c, fn);
    CHK_ROOT(c, root, fn);
    CHK_NONCONTIG(c, d, fn);
    size_t bytes = aptus_dt_bytes(d, count);
    CHK_BUF(c, buf, bytes, fn);
    int rc = aptus_bcast(buf, bytes, root, c);
    return rc ? aptus_error(c, rc, fn, "broadcast failed") : MPI_SUCCESS;
}

int PMPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    return bcast_any("MPI_Bcast", buffer, count, datatype, root, comm);
}
APTUS_ALIAS(Bcast)
int PMPI_Bcast_c(void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    return bcast_any("MPI_Bcast_c", buffer, count, datatype, root, comm);
}
APTUS_ALIAS(Bcast_c)

static int check_op(struct aptus_comm *c, MPI_Op oph, const struct aptus_dtype *d, const struct aptus_op **out,
                    const char *fn)
{
    const struct aptus_op *op = aptus_op_get(oph);
    if (!op)
        return aptus_error(c, MPI_ERR_OP, fn,
                           oph == MPI_OP_NULL ? "MPI_OP_NULL is not a valid operation" : "invalid operation handle");
    if (op->predefined && !aptus_op_valid(op->predefined, d->basic))
        return aptus_error(c, MPI_ERR_OP, fn, "the operation is not defined for datatype %s", d->name);
    *out = op;
    return 0;
}

static int reduce_any(const char *fn, const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                      MPI_Op oph, int root, MPI_Comm comm, int all)
{
    GET_COMM(c, comm, fn);
    CHK_COUNT(c, count, fn);
    GET_DTYPE(d, datatype, c, fn);
    if (!all)
        CHK_ROOT(c, root, fn);
    CHK_NONCONTIG(c, d, fn);
    const struct aptus_op *op = NULL;
    int rc = check_op(c, oph, d, &op, fn);
    if (rc)
        return rc;
    size_t bytes = aptus_dt_bytes(d, count);
    if (sendbuf != MPI_IN_PLACE)
        CHK_BUF(c, sendbuf, bytes, fn);
    if (all || c->rank == root)
        CHK_BUF(c, recvbuf, bytes, fn);
    if (sendbuf == MPI_IN_PLACE && !all && c->rank != root)
        return aptus_error(c, MPI_ERR_BUFFER, fn, "MPI_IN_PLACE is only valid at the root");
    rc = all ? aptus_allreduce(sendbuf, recvbuf, (size_t)count, d, datatype, op, c)
             : aptus_reduce(sendbuf, recvbuf, (size_t)count, d, datatype, op, root, c);
    return rc ? aptus_error(c, rc, fn, "reduction failed") : MPI_SUCCESS;
}

int PMPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                MPI_Comm comm)
{
    return reduce_any("MPI_Reduce", sendbuf, recvbuf, count, datatype, op, root, comm, 0);
}
APTUS_ALIAS(Reduce)
int PMPI_Reduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, int root,
                  MPI_Comm comm)
{
    return reduce_any("MPI_Reduce_c", sendbuf, recvbuf, count, datatype, op, root, comm, 0);
}
APTUS_ALIAS(Reduce_c)

int PMPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    return reduce_any("MPI_Allreduce", sendbuf, recvbuf, count, datatype, op, 0, comm, 1);
}
APTUS_ALIAS(Allreduce)
int PMPI_Allreduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                     MPI_Comm comm)
{
    return reduce_any("MPI_Allreduce_c", sendbuf, recvbuf, count, datatype, op, 0, comm, 1);
}
APTUS_ALIAS(Allreduce_c)

int PMPI_Op_create(MPI_User_function *user_fn, int commute, MPI_Op *op)
{
    API_INIT("MPI_Op_create");
    struct aptus_op *o = calloc(1, sizeof *o);
    if (!o)
        return aptus_error(NULL, MPI_ERR_NO_MEM, "MPI_Op_create", "out of memory");
    o->magic = APTUS_MAGIC_OP;
    o->refcount = 1;
    o->commute = commute;
    o->user_fn = user_fn;
    *op = (MPI_Op)o;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Op_create)

int PMPI_Op_free(MPI_Op *op)
{
    API_INIT("MPI_Op_free");
    struct aptus_op *o = op ? aptus_op_get(*op) : NULL;
    if (!o || o->predefined)
        return aptus_error(NULL, MPI_ERR_OP, "MPI_Op_free", "invalid or predefined operation");
    o->magic = 0;
    free(o);
    *op = MPI_OP_NULL;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Op_free)

int PMPI_Op_commutative(MPI_Op op, int *commute)
{
    struct aptus_op *o = aptus_op_get(op);
    if (!o)
        return aptus_error(NULL, MPI_ERR_OP, "MPI_Op_commutative", "invalid operation");
    *commute = o->commute;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Op_commutative)
