/* MPI-IO data access (MPI 4.1, 14.4): explicit offsets, the individual and the shared file
 * pointer, blocking, nonblocking, collective, split collective and ordered, each with its _c form.
 * Every form comes down to begin (where the data starts in the view's stream), the transfer of
 * io/view.c (io/coll.c for the collective forms) and finish (the status). A nonblocking access is
 * a request that the progress engine moves a step at a time (the progress thread too, where it
 * runs); a split collective is a nonblocking collective access begun, then waited for. */
#include <errno.h>
#include <stddef.h>
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
                 MPI_Count count, size_t *fsize, char *why, size_t len)
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
    *fsize = d->size;
    int cls = f->rep ? aptus_io_rep_size(f->rep, d, fsize) : 0;
    if (cls)
        PROBLEM(cls, "the datatype has no form in the view's data representation \"%s\"%s", f->datarep,
                cls == MPI_ERR_CONVERSION ? " (its extent function failed)" : "");
    size_t bytes = (size_t)count * *fsize;
    if (bytes % f->esize != 0)
        PROBLEM(MPI_ERR_TYPE,
                "the data (%zu bytes in the file) is not a whole number of etypes of the view (%zu bytes)", bytes,
                f->esize);
    if (bytes && f->ft->size == 0)
        PROBLEM(MPI_ERR_ARG, "the view's filetype holds no data");
    return 0;
}
#undef PROBLEM

/* One access from its arguments to its status. */
struct access {
    struct aptus_file *f;
    int write, cls;
    char why[200];
    const void *buf;
    MPI_Count count;
    MPI_Datatype datatype;
    struct aptus_dtype *d;
    size_t fsize, bytes; /* bytes of one element in the file, of the access in the file */
    void *conv;          /* a converting representation: the file form, in a buffer of its own */
    void *data;          /* what moves: (data, n, dd) */
    size_t n;
    const struct aptus_dtype *dd;
    MPI_Offset start; /* etypes */
};

/* Every form: where the data starts in the view's stream (begin), the transfer, then the status
 * (finish). A collective form (coll) takes part in the collective steps even when its own
 * arguments are wrong -- with nothing to move -- so that the other ranks never wait for it; it
 * then reports its error. begin returns MPI_SUCCESS to go on, else the code to return. */
static int begin(struct access *a, const char *fn, MPI_File fh, int write, int where, MPI_Offset offset,
                 const void *buf, MPI_Count count, MPI_Datatype datatype, int coll)
{
    *a = (struct access){ .write = write, .buf = buf, .count = count, .datatype = datatype };
    struct aptus_file *f = a->f = aptus_file_get(fh);
    if (!f)
        return aptus_file_error(NULL, MPI_ERR_FILE, fn,
                                fh == MPI_FILE_NULL ? "MPI_FILE_NULL is not an open file" : "invalid file handle");
    a->d = aptus_dtype_get(datatype);
    a->cls = check(f, a->d, write, where, offset, count, &a->fsize, a->why, sizeof a->why);
    a->bytes = a->cls ? 0 : (size_t)count * a->fsize;
    if (!a->cls && f->rep && a->bytes) {
        a->conv = malloc(a->bytes);
        a->cls = !a->conv ? MPI_ERR_NO_MEM
                 : write  ? aptus_io_rep_write(f->rep, buf, (size_t)count, datatype, a->conv, a->fsize)
                          : 0;
        if (a->cls)
            snprintf(a->why, sizeof a->why, "%s",
                     a->cls == MPI_ERR_NO_MEM ? "out of memory" : "the conversion to the file failed");
    }
    if (a->cls && !coll && where != AT_ORDERED) {
        free(a->conv);
        return aptus_file_error(f, a->cls, fn, "%s", a->why);
    }
    a->data = a->conv ? a->conv : (void *)buf;
    a->n = a->conv ? a->bytes : (size_t)count;
    a->dd = a->conv ? aptus_dtype_get(MPI_BYTE) : a->d;
    if (a->cls) { /* nothing to move, but every collective step taken */
        a->dd = aptus_dtype_get(MPI_BYTE);
        a->n = a->bytes = 0;
        offset = 0;
    }
    MPI_Offset etypes = (MPI_Offset)(a->bytes / f->esize);
    a->start = offset;
    int rc = MPI_SUCCESS;
    if (where == AT_INDIVIDUAL) {
        a->start = f->fp;
    } else if (where == AT_SHARED) {
        rc = aptus_io_shared_fetch_add(f, etypes, &a->start);
    } else if (where == AT_ORDERED) {
        /* rank order: the ranks before this one go first; rank 0 moves the pointer by the sum */
        MPI_Offset before = 0, total = 0, base = 0;
        int rank;
        rc = PMPI_Exscan(&etypes, &before, 1, MPI_OFFSET, MPI_SUM, f->comm);
        PMPI_Comm_rank(f->comm, &rank);
        if (rank == 0)
            before = 0;
        if (rc == MPI_SUCCESS)
            rc = PMPI_Allreduce(&etypes, &total, 1, MPI_OFFSET, MPI_SUM, f->comm);
        if (rc == MPI_SUCCESS && rank == 0)
            rc = aptus_io_shared_fetch_add(f, total, &base);
        if (rc == MPI_SUCCESS)
            rc = PMPI_Bcast(&base, 1, MPI_OFFSET, 0, f->comm);
        a->start = base + before;
    }
    if (rc != MPI_SUCCESS) {
        free(a->conv);
        return aptus_file_error(f, MPI_ERR_OTHER, fn, "%s",
                                where == AT_SHARED ? "could not move the shared file pointer"
                                                   : "could not agree on the ordered offsets");
    }
    return MPI_SUCCESS;
}

/* After the transfer (done bytes in the file, err an errno value): the conversion of what was
 * read, the status (bytes of the user's elements) and the error. *moved: those bytes. */
static int finish(struct access *a, size_t done, int err, size_t *moved)
{
    size_t whole = a->fsize ? done / a->fsize : 0; /* elements moved */
    if (a->conv && !a->write && !err && !a->cls && whole &&
        aptus_io_rep_read(a->f->rep, a->conv, whole, a->datatype, (void *)a->buf, a->fsize) != 0) {
        a->cls = MPI_ERR_CONVERSION;
        snprintf(a->why, sizeof a->why, "the conversion from the file failed");
    }
    free(a->conv);
    a->conv = NULL;
    *moved = a->f->rep ? whole * a->d->size : done;
    if (a->cls)
        return a->cls;
    return err ? aptus_io_errno_class(err) : 0;
}

static int io_access(const char *fn, MPI_File fh, int write, int where, MPI_Offset offset, const void *buf,
                     MPI_Count count, MPI_Datatype datatype, MPI_Status *status, int coll)
{
    API_INIT(fn);
    struct access a;
    int rc = begin(&a, fn, fh, write, where, offset, buf, count, datatype, coll);
    if (rc != MPI_SUCCESS)
        return rc;
    struct aptus_file *f = a.f;
    size_t done = 0, moved;
    int err = 0;
    if (coll && where != AT_ORDERED)
        err = aptus_io_coll(f, write, a.start * (MPI_Offset)f->esize, a.data, a.n, a.dd, &done);
    else if (a.bytes)
        err = aptus_io_access(f, write, a.start * (MPI_Offset)f->esize, a.data, a.n, a.dd, &done);
    int cls = finish(&a, done, err, &moved);
    if (a.cls)
        return aptus_file_error(f, a.cls, fn, "%s", a.why);
    if (where == AT_INDIVIDUAL)
        f->fp = a.start + (MPI_Offset)(done / f->esize);
    if (status != MPI_STATUS_IGNORE) {
        aptus_status_empty(status);
        aptus_status_set_bytes(status, moved);
    }
    if (cls)
        return aptus_file_error(f, cls, fn, "%s", strerror(err));
    return MPI_SUCCESS;
}

/* ---- nonblocking accesses: a request the progress engine moves a step at a time ----
 * An independent one moves IO_STEP bytes a pass; a collective one (MPI_File_iwrite_all, ...) is
 * the state machine of io/coll.c, whose collective steps are nonblocking collectives. A file's
 * collective accesses run one after the other in the order they were started (the same on every
 * rank, so their collectives match): the queue coll_first .. coll_last. */

#define IO_STEP ((size_t)4 << 20) /* bytes per progress pass */

struct io_req {
    struct access a;
    struct aptus_io_xfer x;  /* independent */
    struct aptus_io_coll *c; /* collective (NULL: independent) */
    struct io_req *next;     /* the file's queue of collective ones */
    struct aptus_request *r;
};

static int io_req_poll(void *arg)
{
    struct io_req *q = arg;
    struct aptus_file *f = q->a.f;
    size_t done;
    int err;
    if (q->c) {
        if (f->coll_first != q)
            return 0; /* an earlier collective access of the file is still running */
        if (!aptus_io_coll_step(q->c, IO_STEP))
            return 0;
        err = aptus_io_coll_end(q->c, &done);
        f->coll_first = q->next;
        if (!q->next)
            f->coll_last = NULL;
    } else {
        if (!aptus_io_xfer_step(&q->x, IO_STEP))
            return 0;
        done = q->x.done;
        err = q->x.err;
    }
    size_t moved;
    int cls = finish(&q->a, done, err, &moved);
    q->r->st_bytes = moved;
    q->r->st_error = cls;
    f->pending--;
    aptus_dtype_release(q->a.d);
    aptus_req_complete(q->r);
    free(q);
    return 1;
}

void aptus_io_drain(struct aptus_file *f)
{
    unsigned idle = 0;
    while (f->pending > 0)
        aptus_wait_step(&idle);
}

static int access_async(const char *fn, MPI_File fh, int write, int where, MPI_Offset offset, const void *buf,
                        MPI_Count count, MPI_Datatype datatype, MPI_Request *request, int coll)
{
    API_INIT(fn);
    struct io_req *q = calloc(1, sizeof *q);
    if (!q)
        return aptus_file_error(aptus_file_get(fh), MPI_ERR_NO_MEM, fn, "out of memory");
    int rc = begin(&q->a, fn, fh, write, where, offset, buf, count, datatype, coll);
    if (rc != MPI_SUCCESS) {
        free(q);
        return rc;
    }
    struct aptus_file *f = q->a.f;
    MPI_Offset pos = q->a.start * (MPI_Offset)f->esize;
    q->r = aptus_req_new_nomsg(APTUS_REQ_GENERIC);
    if (coll && q->r)
        q->c = aptus_io_coll_start(f, write, pos, q->a.data, q->a.n, q->a.dd);
    if (!q->r || (coll && !q->c)) {
        if (q->r)
            aptus_req_free(q->r);
        free(q->a.conv);
        free(q);
        return aptus_file_error(f, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    /* a failure found later is returned by the completing call (the file's communicator
     * returns its errors) */
    q->r->comm = aptus_comm_get(f->comm);
    if (coll) {
        if (f->coll_last)
            ((struct io_req *)f->coll_last)->next = q;
        else
            f->coll_first = q;
        f->coll_last = q;
    } else {
        aptus_io_xfer_start(&q->x, f, write, pos, q->a.data, q->a.n, q->a.dd);
    }
    if (where == AT_INDIVIDUAL) /* moved at once by what was asked (MPI 4.1, 14.4.3) */
        f->fp = q->a.start + (MPI_Offset)(q->a.bytes / f->esize);
    aptus_dtype_retain(q->a.d); /* the program may free its datatype meanwhile */
    f->pending++;
    *request = (MPI_Request)q->r;
    if (aptus_bg_add(io_req_poll, q) != 0) {
        unsigned idle = 0; /* no room for a background task: finish here */
        while (!io_req_poll(q))
            aptus_wait_step(&idle);
    }
    return MPI_SUCCESS;
}

static int access_nb(const char *fn, MPI_File fh, int write, int where, MPI_Offset offset, const void *buf,
                     MPI_Count count, MPI_Datatype datatype, MPI_Request *request, int coll)
{
    APTUS_OUT_NULL(request, MPI_REQUEST_NULL);
    if (!request)
        return aptus_file_error(aptus_file_get(fh), MPI_ERR_ARG, fn, "null request argument");
    return access_async(fn, fh, write, where, offset, buf, count, datatype, request, coll);
}

/* ---- split collectives: a nonblocking collective access begun, then waited for (the ordered
 * forms: the access at the begin, its status at the end) ---- */

static int split_begin(const char *fn, MPI_File fh, int write, int where, MPI_Offset offset, const void *buf,
                       MPI_Count count, MPI_Datatype datatype)
{
    API_INIT(fn);
    struct aptus_file *f = aptus_file_get(fh);
    if (!f)
        return aptus_file_error(NULL, MPI_ERR_FILE, fn,
                                fh == MPI_FILE_NULL ? "MPI_FILE_NULL is not an open file" : "invalid file handle");
    if (f->split)
        return aptus_file_error(f, MPI_ERR_OTHER, fn, "a split collective operation is already in progress");
    int rc = where == AT_ORDERED ? io_access(fn, fh, write, where, offset, buf, count, datatype, &f->split_status, 1)
                                 : access_async(fn, fh, write, where, offset, buf, count, datatype, &f->split_req, 1);
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
    if (f->split_req != MPI_REQUEST_NULL) {
        int rc = PMPI_Wait(&f->split_req, &f->split_status);
        f->split_req = MPI_REQUEST_NULL;
        if (rc != MPI_SUCCESS) {
            int cls = MPI_ERR_OTHER;
            PMPI_Error_class(rc, &cls);
            return aptus_file_error(f, cls, fn, "the access begun failed");
        }
    }
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
