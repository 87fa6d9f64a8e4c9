/* MPI-IO data access (MPI 4.1, 14.4): explicit offsets, the individual and the shared file
 * pointer, blocking, nonblocking, collective, split collective and ordered, each with its _c form.
 * Every form comes down to access(): where the data starts in the view's stream, then the
 * transfer of io/view.c. The collective forms are correct as independent accesses (every rank
 * moves its own data; the ordered ones agree on their offsets first); nonblocking ones complete
 * before they return, as a generalized request already complete. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/check.h"
#include "core/datatype.h"
#include "io/io.h"
#include "pt2pt/pt2pt.h"
#include "runtime/lock.h"

enum { AT_OFFSET, AT_INDIVIDUAL, AT_SHARED, AT_ORDERED };

/* The arguments' first problem: its class (0: none) and, in why, what it is. */
#define PROBLEM(CLS, ...)                                                                                              \
    do {                                                                                                               \
        snprintf(why, len, __VA_ARGS__);                                                                               \
        return CLS;                                                                                                    \
    } while (0)

static int check(const struct aptus_file *f, const struct aptus_dtype *d, int write, int where, MPI_Offset offset,
                 MPI_Count count, char *why, size_t len)
{
    if (!d || !d->committed)
        PROBLEM(MPI_ERR_TYPE, d ? "datatype is not committed" : "invalid datatype");
    if (count < 0)
        PROBLEM(MPI_ERR_COUNT, "negative count %lld", (long long)count);
    if (write && (f->amode & MPI_MODE_RDONLY))
        PROBLEM(MPI_ERR_READ_ONLY, "the file was opened MPI_MODE_RDONLY");
    if (!write && (f->amode & MPI_MODE_WRONLY))
        PROBLEM(MPI_ERR_ACCESS, "the file was opened MPI_MODE_WRONLY");
    if ((f->amode & MPI_MODE_SEQUENTIAL) && (where == AT_OFFSET || where == AT_INDIVIDUAL))
        PROBLEM(MPI_ERR_UNSUPPORTED_OPERATION,
                "the file was opened MPI_MODE_SEQUENTIAL: only the shared pointer moves");
    if (where == AT_OFFSET && offset < 0)
        PROBLEM(MPI_ERR_ARG, "negative offset %lld", (long long)offset);
    size_t bytes = (size_t)count * d->size;
    if (bytes % f->esize != 0)
        PROBLEM(MPI_ERR_TYPE, "the data (%zu bytes) is not a whole number of etypes of the view (%zu bytes)", bytes,
                f->esize);
    if (bytes && f->ft->size == 0)
        PROBLEM(MPI_ERR_ARG, "the view's filetype holds no data");
    return 0;
}
#undef PROBLEM

/* Every form: where the data starts in the view's stream, then the transfer. A collective form
 * (coll) takes part in the collective steps even when its own arguments are wrong -- with nothing
 * to move -- so that the other ranks never wait for it; it then reports its error. */
static int io_access(const char *fn, MPI_File fh, int write, int where, MPI_Offset offset, const void *buf,
                     MPI_Count count, MPI_Datatype datatype, MPI_Status *status, int coll)
{
    API_INIT(fn);
    struct aptus_file *f = aptus_file_get(fh);
    if (!f)
        return aptus_file_error(NULL, MPI_ERR_FILE, fn,
                                fh == MPI_FILE_NULL ? "MPI_FILE_NULL is not an open file" : "invalid file handle");
    struct aptus_dtype *d = aptus_dtype_get(datatype);
    char why[200];
    int cls = check(f, d, write, where, offset, count, why, sizeof why);
    if (cls && !coll && where != AT_ORDERED)
        return aptus_file_error(f, cls, fn, "%s", why);
    if (cls) { /* nothing to move, but every collective step taken */
        d = aptus_dtype_get(MPI_BYTE);
        count = 0;
        offset = 0;
    }
    size_t bytes = (size_t)count * d->size;
    MPI_Offset etypes = (MPI_Offset)(bytes / f->esize), start = offset;
    if (where == AT_INDIVIDUAL) {
        start = f->fp;
    } else if (where == AT_SHARED) {
        if (aptus_io_shared_fetch_add(f, etypes, &start) != MPI_SUCCESS)
            return aptus_file_error(f, MPI_ERR_OTHER, fn, "could not move the shared file pointer");
    } else if (where == AT_ORDERED) {
        /* rank order: the ranks before this one go first; rank 0 moves the pointer by the sum */
        MPI_Offset before = 0, total = 0, base = 0;
        int rank, rc = PMPI_Exscan(&etypes, &before, 1, MPI_OFFSET, MPI_SUM, f->comm);
        PMPI_Comm_rank(f->comm, &rank);
        if (rank == 0)
            before = 0;
        if (rc == MPI_SUCCESS)
            rc = PMPI_Allreduce(&etypes, &total, 1, MPI_OFFSET, MPI_SUM, f->comm);
        if (rc == MPI_SUCCESS && rank == 0)
            rc = aptus_io_shared_fetch_add(f, total, &base);
        if (rc == MPI_SUCCESS)
            rc = PMPI_Bcast(&base, 1, MPI_OFFSET, 0, f->comm);
        if (rc != MPI_SUCCESS)
            return aptus_file_error(f, MPI_ERR_OTHER, fn, "could not agree on the ordered offsets");
        start = base + before;
    }
    size_t done = 0;
    int err = 0;
    if (coll && where != AT_ORDERED)
        err = aptus_io_coll(f, write, start * (MPI_Offset)f->esize, (void *)buf, (size_t)count, d, &done);
    else if (bytes)
        err = aptus_io_access(f, write, start * (MPI_Offset)f->esize, (void *)buf, (size_t)count, d, &done);
    if (cls)
        return aptus_file_error(f, cls, fn, "%s", why);
    if (where == AT_INDIVIDUAL)
        f->fp = start + (MPI_Offset)(done / f->esize);
    if (status != MPI_STATUS_IGNORE) {
        aptus_status_empty(status);
        aptus_status_set_bytes(status, done);
    }
    if (err)
        return aptus_file_error(f, aptus_io_errno_class(err), fn, "%s", strerror(err));
    return MPI_SUCCESS;
}

/* ---- nonblocking: already complete when the call returns ---- */

static int done_query(void *extra, MPI_Status *status)
{
    *status = *(MPI_Status *)extra;
    return MPI_SUCCESS;
}

static int done_free(void *extra)
{
    free(extra);
    return MPI_SUCCESS;
}

static int done_cancel(void *extra, int complete)
{
    (void)extra;
    (void)complete;
    return MPI_SUCCESS;
}

static int access_nb(const char *fn, MPI_File fh, int write, int where, MPI_Offset offset, const void *buf,
                     MPI_Count count, MPI_Datatype datatype, MPI_Request *request, int coll)
{
    APTUS_OUT_NULL(request, MPI_REQUEST_NULL);
    if (!request)
        return aptus_file_error(aptus_file_get(fh), MPI_ERR_ARG, fn, "null request argument");
    MPI_Status *st = malloc(sizeof *st);
    if (!st)
        return aptus_file_error(aptus_file_get(fh), MPI_ERR_NO_MEM, fn, "out of memory");
    int rc = io_access(fn, fh, write, where, offset, buf, count, datatype, st, coll);
    if (rc != MPI_SUCCESS) {
        free(st);
        return rc;
    }
    if (PMPI_Grequest_start(done_query, done_free, done_cancel, st, request) != MPI_SUCCESS) {
        free(st);
        return aptus_file_error(aptus_file_get(fh), MPI_ERR_NO_MEM, fn, "out of memory");
    }
    PMPI_Grequest_complete(*request);
    return MPI_SUCCESS;
}

/* ---- split collectives: the access at the begin, its status at the end ---- */

static int split_begin(const char *fn, MPI_File fh, int write, int where, MPI_Offset offset, const void *buf,
                       MPI_Count count, MPI_Datatype datatype)
{
    struct aptus_file *f = aptus_file_get(fh);
    if (f && f->split)
        return aptus_file_error(f, MPI_ERR_OTHER, fn, "a split collective operation is already in progress");
    int rc = io_access(fn, fh, write, where, offset, buf, count, datatype, f ? &f->split_status : MPI_STATUS_IGNORE, 1);
    if (rc == MPI_SUCCESS) {
        f->split = 1;
        f->split_buf = buf;
    }
    return rc;
}

static int split_end(const char *fn, MPI_File fh, const void *buf, MPI_Status *status)
{
    API_INIT(fn);
    struct aptus_file *f = aptus_file_get(fh);
    if (!f)
        return aptus_file_error(NULL, MPI_ERR_FILE, fn, "invalid file handle");
    if (!f->split)
        return aptus_file_error(f, MPI_ERR_OTHER, fn, "no split collective operation was begun on this file");
    if (buf != f->split_buf)
        return aptus_file_error(f, MPI_ERR_BUFFER, fn, "not the buffer of the matching begin");
    f->split = 0;
    if (status != MPI_STATUS_IGNORE)
        *status = f->split_status;
    return MPI_SUCCESS;
}

/* ---- the entry points ---- */

#define IO_AT(NAME, W, WHERE, C, CT, BUFQ)                                                                             \
    int PMPI_File_##NAME(MPI_File fh, MPI_Offset offset, BUFQ void *buf, CT count, MPI_Datatype datatype,              \
                         MPI_Status *status)                                                                           \
    {                                                                                                                  \
        APTUS_API_LOCK();                                                                                              \
        return io_access("MPI_File_" #NAME, fh, W, WHERE, offset, buf, count, datatype, status, C);                    \
    }                                                                                                                  \
    APTUS_ALIAS(File_##NAME)
#define IO_PTR(NAME, W, WHERE, C, CT, BUFQ)                                                                            \
    int PMPI_File_##NAME(MPI_File fh, BUFQ void *buf, CT count, MPI_Datatype datatype, MPI_Status *status)             \
    {                                                                                                                  \
        APTUS_API_LOCK();                                                                                              \
        return io_access("MPI_File_" #NAME, fh, W, WHERE, 0, buf, count, datatype, status, C);                         \
    }                                                                                                                  \
    APTUS_ALIAS(File_##NAME)
#define IO_IAT(NAME, W, WHERE, C, CT, BUFQ)                                                                            \
    int PMPI_File_##NAME(MPI_File fh, MPI_Offset offset, BUFQ void *buf, CT count, MPI_Datatype datatype,              \
                         MPI_Request *request)                                                                         \
    {                                                                                                                  \
        APTUS_API_LOCK();                                                                                              \
        return access_nb("MPI_File_" #NAME, fh, W, WHERE, offset, buf, count, datatype, request, C);                   \
    }                                                                                                                  \
    APTUS_ALIAS(File_##NAME)
#define IO_IPTR(NAME, W, WHERE, C, CT, BUFQ)                                                                           \
    int PMPI_File_##NAME(MPI_File fh, BUFQ void *buf, CT count, MPI_Datatype datatype, MPI_Request *request)           \
    {                                                                                                                  \
        APTUS_API_LOCK();                                                                                              \
        return access_nb("MPI_File_" #NAME, fh, W, WHERE, 0, buf, count, datatype, request, C);                        \
    }                                                                                                                  \
    APTUS_ALIAS(File_##NAME)
#define IO_BEGIN_AT(NAME, W, CT, BUFQ)                                                                                 \
    int PMPI_File_##NAME(MPI_File fh, MPI_Offset offset, BUFQ void *buf, CT count, MPI_Datatype datatype)              \
    {                                                                                                                  \
        APTUS_API_LOCK();                                                                                              \
        return split_begin("MPI_File_" #NAME, fh, W, AT_OFFSET, offset, buf, count, datatype);                         \
    }                                                                                                                  \
    APTUS_ALIAS(File_##NAME)
#define IO_BEGIN(NAME, W, WHERE, CT, BUFQ)                                                                             \
    int PMPI_File_##NAME(MPI_File fh, BUFQ void *buf, CT count, MPI_Datatype datatype)                                 \
    {                                                                                                                  \
        APTUS_API_LOCK();                                                                                              \
        return split_begin("MPI_File_" #NAME, fh, W, WHERE, 0, buf, count, datatype);                                  \
    }                                                                                                                  \
    APTUS_ALIAS(File_##NAME)
#define IO_END(NAME, BUFQ)                                                                                             \
    int PMPI_File_##NAME(MPI_File fh, BUFQ void *buf, MPI_Status *status)                                              \
    {                                                                                                                  \
        APTUS_API_LOCK();                                                                                              \
        return split_end("MPI_File_" #NAME, fh, buf, status);                                                          \
    }                                                                                                                  \
    APTUS_ALIAS(File_##NAME)

/* Each form and its _c form (MPI_Count count). */
#define IO_BOTH(M, NAME, ...)   M(NAME, __VA_ARGS__, int, ) M(NAME##_c, __VA_ARGS__, MPI_Count, )
#define IO_BOTH_W(M, NAME, ...) M(NAME, __VA_ARGS__, int, const) M(NAME##_c, __VA_ARGS__, MPI_Count, const)

IO_BOTH(IO_AT, read_at, 0, AT_OFFSET, 0)
IO_BOTH_W(IO_AT, write_at, 1, AT_OFFSET, 0)
IO_BOTH(IO_AT, read_at_all, 0, AT_OFFSET, 1)
IO_BOTH_W(IO_AT, write_at_all, 1, AT_OFFSET, 1)
IO_BOTH(IO_IAT, iread_at, 0, AT_OFFSET, 0)
IO_BOTH_W(IO_IAT, iwrite_at, 1, AT_OFFSET, 0)
IO_BOTH(IO_IAT, iread_at_all, 0, AT_OFFSET, 1)
IO_BOTH_W(IO_IAT, iwrite_at_all, 1, AT_OFFSET, 1)
IO_BOTH(IO_PTR, read, 0, AT_INDIVIDUAL, 0)
IO_BOTH_W(IO_PTR, write, 1, AT_INDIVIDUAL, 0)
IO_BOTH(IO_PTR, read_all, 0, AT_INDIVIDUAL, 1)
IO_BOTH_W(IO_PTR, write_all, 1, AT_INDIVIDUAL, 1)
IO_BOTH(IO_IPTR, iread, 0, AT_INDIVIDUAL, 0)
IO_BOTH_W(IO_IPTR, iwrite, 1, AT_INDIVIDUAL, 0)
IO_BOTH(IO_IPTR, iread_all, 0, AT_INDIVIDUAL, 1)
IO_BOTH_W(IO_IPTR, iwrite_all, 1, AT_INDIVIDUAL, 1)
IO_BOTH(IO_PTR, read_shared, 0, AT_SHARED, 0)
IO_BOTH_W(IO_PTR, write_shared, 1, AT_SHARED, 0)
IO_BOTH(IO_IPTR, iread_shared, 0, AT_SHARED, 0)
IO_BOTH_W(IO_IPTR, iwrite_shared, 1, AT_SHARED, 0)
IO_BOTH(IO_PTR, read_ordered, 0, AT_ORDERED, 1)
IO_BOTH_W(IO_PTR, write_ordered, 1, AT_ORDERED, 1)
IO_BOTH(IO_BEGIN_AT, read_at_all_begin, 0)
IO_BOTH_W(IO_BEGIN_AT, write_at_all_begin, 1)
IO_BOTH(IO_BEGIN, read_all_begin, 0, AT_INDIVIDUAL)
IO_BOTH_W(IO_BEGIN, write_all_begin, 1, AT_INDIVIDUAL)
IO_BOTH(IO_BEGIN, read_ordered_begin, 0, AT_ORDERED)
IO_BOTH_W(IO_BEGIN, write_ordered_begin, 1, AT_ORDERED)
IO_END(read_at_all_end, )
IO_END(write_at_all_end, const)
IO_END(read_all_end, )
IO_END(write_all_end, const)
IO_END(read_ordered_end, )
IO_END(write_ordered_end, const)
