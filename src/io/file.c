/* MPI-IO file manipulation, views, file pointers and hints (MPI 4.1, 14.2-14.4, 14.6). */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/check.h"
#include "core/datatype.h"
#include "io/io.h"
#include "runtime/lock.h"

struct aptus_file *aptus_file_get(MPI_File h)
{
    return (struct aptus_file *)aptus_file_head_get(h);
}

int aptus_file_error(struct aptus_file *f, int errclass, const char *fn, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (!f)
        return aptus_error_on(aptus_file_default_errh, MPI_FILE_NULL, errclass, fn, "%s", msg);
    return aptus_error_on(f->head.errh, (void *)f, errclass, fn, "%s", msg);
}

int aptus_io_errno_class(int err)
{
    switch (err) {
    case ENOENT: return MPI_ERR_NO_SUCH_FILE;
    case EEXIST: return MPI_ERR_FILE_EXISTS;
    case EACCES:
    case EPERM: return MPI_ERR_ACCESS;
    case ENOSPC: return MPI_ERR_NO_SPACE;
    case EDQUOT: return MPI_ERR_QUOTA;
    case EROFS: return MPI_ERR_READ_ONLY;
    case EISDIR:
    case ENOTDIR:
    case ENAMETOOLONG:
    case ELOOP:
    case EINVAL: return MPI_ERR_BAD_FILE;
    case ENOMEM: return MPI_ERR_NO_MEM;
    default: return MPI_ERR_IO;
    }
}

#define GET_FILE(f, h, FN)                                                                                             \
    API_INIT(FN);                                                                                                      \
    struct aptus_file *f = aptus_file_get(h);                                                                          \
    if (!f)                                                                                                            \
    return aptus_file_error(NULL, MPI_ERR_FILE, FN,                                                                    \
                            (h) == MPI_FILE_NULL ? "MPI_FILE_NULL is not an open file" : "invalid file handle")

/* The largest error class of the ranks of comm (0: none failed); every rank learns it. */
static int agree(MPI_Comm comm, int cls)
{
    int all = cls;
    if (PMPI_Allreduce(&cls, &all, 1, MPI_INT, MPI_MAX, comm) != MPI_SUCCESS)
        return MPI_ERR_OTHER;
    return all;
}

/* Whether the ranks of comm gave different values of v (every rank learns it). */
static int differs(MPI_Comm comm, int v)
{
    int lo = v, hi = v;
    PMPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_INT, MPI_MIN, comm);
    PMPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_INT, MPI_MAX, comm);
    return lo != hi;
}

/* The view every file starts with: displacement 0, MPI_BYTE, MPI_BYTE, "native". */
static void view_default(struct aptus_file *f)
{
    f->disp = 0;
    f->etype = f->filetype = MPI_BYTE;
    f->ft = aptus_dtype_get(MPI_BYTE);
    f->esize = 1;
    f->datarep = "native";
    f->rep = NULL;
    f->fview = MPI_DATATYPE_NULL;
    f->fp = 0;
    f->coll_local = 1; /* every rank's view is this one: contiguous */
}

static void view_drop(struct aptus_file *f)
{
    if (f->etype != MPI_DATATYPE_NULL && !aptus_dtype_get(f->etype)->predefined)
        PMPI_Type_free(&f->etype);
    if (f->filetype != MPI_DATATYPE_NULL && !aptus_dtype_get(f->filetype)->predefined)
        PMPI_Type_free(&f->filetype);
    if (f->fview != MPI_DATATYPE_NULL)
        PMPI_Type_free(&f->fview);
    f->etype = f->filetype = MPI_DATATYPE_NULL;
}

/* The shared file pointer's window (one MPI_Offset at rank 0). */
static int shared_open(struct aptus_file *f)
{
    int rank;
    PMPI_Comm_rank(f->comm, &rank);
    MPI_Aint size = rank == 0 ? (MPI_Aint)sizeof(MPI_Offset) : 0;
    if (PMPI_Win_allocate(size, (int)sizeof(MPI_Offset), MPI_INFO_NULL, f->comm, &f->shared_mem, &f->shared_win) !=
        MPI_SUCCESS)
        return MPI_ERR_NO_MEM;
    PMPI_Win_set_errhandler(f->shared_win, MPI_ERRORS_RETURN);
    if (rank == 0) {
        PMPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, f->shared_win);
        *f->shared_mem = 0;
        PMPI_Win_unlock(0, f->shared_win);
    }
    return MPI_SUCCESS;
}

/* Sets the shared file pointer (collective: every rank calls it with the same value). */
static int shared_set(struct aptus_file *f, MPI_Offset v)
{
    int rank;
    PMPI_Comm_rank(f->comm, &rank);
    PMPI_Barrier(f->comm);
    if (rank == 0) {
        PMPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, f->shared_win);
        PMPI_Put(&v, 1, MPI_OFFSET, 0, 0, 1, MPI_OFFSET, f->shared_win);
        PMPI_Win_unlock(0, f->shared_win);
    }
    return PMPI_Barrier(f->comm) == MPI_SUCCESS ? MPI_SUCCESS : MPI_ERR_OTHER;
}

static void file_free(struct aptus_file *f)
{
    if (f->shared_win != MPI_WIN_NULL)
        PMPI_Win_free(&f->shared_win);
    view_drop(f);
    if (f->info != MPI_INFO_NULL)
        PMPI_Info_free(&f->info);
    if (f->comm != MPI_COMM_NULL)
        PMPI_Comm_free(&f->comm);
    if (f->fd >= 0)
        f->drv->close(f->fd);
    free(f->path);
    aptus_errh_release(f->head.errh);
    f->head.magic = 0;
    aptus_obj_free(APTUS_OBJ_FILE, f);
}

/* The reserved hint "file_perm" (octal) for a file MPI_File_open creates; 0666 (less the umask). */
static mode_t file_perm(MPI_Info info)
{
    char v[32];
    int len = (int)sizeof v - 1, flag = 0;
    if (info == MPI_INFO_NULL || PMPI_Info_get_string(info, "file_perm", &len, v, &flag) != MPI_SUCCESS || !flag)
        return 0666;
    char *end;
    long p = strtol(v, &end, 8);
    return end != v && p >= 0 ? (mode_t)(p & 07777) : 0666;
}

/* An amode the standard allows, or NULL with *why. */
static const char *amode_problem(int amode)
{
    int n = !!(amode & MPI_MODE_RDONLY) + !!(amode & MPI_MODE_RDWR) + !!(amode & MPI_MODE_WRONLY);
    int known = MPI_MODE_RDONLY | MPI_MODE_RDWR | MPI_MODE_WRONLY | MPI_MODE_CREATE | MPI_MODE_EXCL |
                MPI_MODE_DELETE_ON_CLOSE | MPI_MODE_UNIQUE_OPEN | MPI_MODE_SEQUENTIAL | MPI_MODE_APPEND;
    if (amode & ~known)
        return "unknown bits in amode";
    if (n != 1)
        return "amode must have exactly one of MPI_MODE_RDONLY, MPI_MODE_RDWR and MPI_MODE_WRONLY";
    if ((amode & MPI_MODE_RDONLY) && (amode & (MPI_MODE_CREATE | MPI_MODE_EXCL)))
        return "MPI_MODE_RDONLY with MPI_MODE_CREATE or MPI_MODE_EXCL";
    if ((amode & MPI_MODE_RDWR) && (amode & MPI_MODE_SEQUENTIAL))
        return "MPI_MODE_RDWR with MPI_MODE_SEQUENTIAL";
    return NULL;
}

int PMPI_File_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh)
{
    static const char fn[] = "MPI_File_open";
    APTUS_OUT_NULL(fh, MPI_FILE_NULL);
    APTUS_API_LOCK();
    GET_COMM(c, comm, fn);
    if (c->is_inter)
        return aptus_file_error(NULL, MPI_ERR_COMM, fn, "an intercommunicator cannot open a file");
    if (!filename || !fh)
        return aptus_file_error(NULL, MPI_ERR_ARG, fn, "null %s argument", filename ? "fh" : "filename");
    const char *why = amode_problem(amode);
    /* every rank must give the same amode: a mistake on one is an error on all */
    if (differs(comm, amode) && !why)
        why = "the ranks gave different amodes";
    if (why)
        return aptus_file_error(NULL, MPI_ERR_AMODE, fn, "%s (amode %#x)", why, (unsigned)amode);
    /* the file system's driver (a prefix may name the file system: "ufs:/scratch/out") */
    const struct aptus_io_driver *drv = aptus_io_driver_for(filename, &filename);
    if (!drv)
        return aptus_file_error(NULL, MPI_ERR_BAD_FILE, fn, "no driver for the file name \"%s\"", filename);

    struct aptus_file *f = aptus_obj_alloc(APTUS_OBJ_FILE, sizeof *f);
    if (!f)
        return aptus_file_error(NULL, MPI_ERR_NO_MEM, fn, "out of memory");
    memset(f, 0, sizeof *f);
    f->head.magic = APTUS_MAGIC_FILE;
    f->head.errh = aptus_file_default_errh;
    f->head.errh->refcount++;
    f->drv = drv;
    f->fd = -1;
    f->amode = amode;
    f->comm = MPI_COMM_NULL;
    f->info = MPI_INFO_NULL;
    f->shared_win = MPI_WIN_NULL;
    f->split_req = MPI_REQUEST_NULL;
    f->etype = f->filetype = f->fview = MPI_DATATYPE_NULL;
    int cls = MPI_SUCCESS, err = 0;
    if (PMPI_Comm_dup(comm, &f->comm) != MPI_SUCCESS) {
        f->comm = MPI_COMM_NULL;
        file_free(f);
        return aptus_file_error(NULL, MPI_ERR_OTHER, fn, "could not duplicate the communicator");
    }
    PMPI_Comm_set_errhandler(f->comm, MPI_ERRORS_RETURN);
    f->path = strdup(filename);
    if (!f->path)
        cls = MPI_ERR_NO_MEM;
    if (info != MPI_INFO_NULL && PMPI_Info_dup(info, &f->info) != MPI_SUCCESS)
        cls = MPI_ERR_INFO;
    /* rank 0 creates the file (exclusively when asked), then everyone opens it */
    int rank;
    PMPI_Comm_rank(f->comm, &rank);
    if (!cls && rank == 0 && (amode & MPI_MODE_CREATE)) {
        int fd = -1;
        err = drv->open(filename, amode, 1, (amode & MPI_MODE_EXCL) != 0, file_perm(info), &fd);
        if (err)
            cls = aptus_io_errno_class(err);
        else
            f->fd = fd;
    }
    int all = agree(f->comm, cls);
    if (!all && f->fd < 0) {
        err = drv->open(filename, amode, 0, 0, 0, &f->fd);
        if (err)
            cls = aptus_io_errno_class(err);
    }
    if (!all)
        all = agree(f->comm, cls);
    if (!all)
        view_default(f);
    if (!all && (shared_open(f) != MPI_SUCCESS))
        all = agree(f->comm, MPI_ERR_NO_MEM);
    if (all) {
        file_free(f);
        if (!cls)
            return aptus_file_error(NULL, all, fn, "%s: the file could not be opened on another rank", filename);
        return aptus_file_error(NULL, cls, fn, "%s: %s", filename, err ? strerror(err) : "out of memory");
    }
    if (amode & MPI_MODE_APPEND) { /* both pointers start at the end */
        MPI_Offset end = 0;
        f->drv->size(f->fd, &end);
        f->fp = end;
        PMPI_Bcast(&end, 1, MPI_OFFSET, 0, f->comm);
        if (rank == 0) {
            PMPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, f->shared_win);
            *f->shared_mem = end;
            PMPI_Win_unlock(0, f->shared_win);
        }
        PMPI_Barrier(f->comm);
    }
    *fh = (MPI_File)f;
    return MPI_SUCCESS;
}
APTUS_ALIAS(File_open)

int PMPI_File_close(MPI_File *fh)
{
    static const char fn[] = "MPI_File_close";
    APTUS_API_LOCK();
    if (!fh)
        return aptus_file_error(NULL, MPI_ERR_ARG, fn, "null fh argument");
    GET_FILE(f, *fh, fn);
    aptus_io_drain(f); /* its nonblocking accesses first */
    int rank, err = 0;
    if (f->split)
        return aptus_file_error(f, MPI_ERR_OTHER, fn, "a split collective operation is still in progress");
    PMPI_Comm_rank(f->comm, &rank);
    err = f->drv->close(f->fd);
    f->fd = -1;
    PMPI_Barrier(f->comm);
    if ((f->amode & MPI_MODE_DELETE_ON_CLOSE) && rank == 0) {
        int e = f->drv->remove(f->path);
        err = err ? err : e;
    }
    PMPI_Barrier(f->comm);
    file_free(f);
    *fh = MPI_FILE_NULL;
    if (err)
        return aptus_file_error(NULL, aptus_io_errno_class(err), fn, "%s", strerror(err));
    return MPI_SUCCESS;
}
APTUS_ALIAS(File_close)

int PMPI_File_delete(const char *filename, MPI_Info info)
{
    static const char fn[] = "MPI_File_delete";
    APTUS_API_LOCK();
    API_INIT(fn);
    (void)info;
    if (!filename)
        return aptus_file_error(NULL, MPI_ERR_ARG, fn, "null filename argument");
    const struct aptus_io_driver *drv = aptus_io_driver_for(filename, &filename);
    int err = drv ? drv->remove(filename) : ENOENT;
    if (err)
        return aptus_file_error(NULL, aptus_io_errno_class(err), fn, "%s: %s", filename, strerror(err));
    return MPI_SUCCESS;
}
APTUS_ALIAS(File_delete)

/* MPI_File_set_size (grow 0: any size) and MPI_File_preallocate (grow 1: never shrinks):
 * collective, rank 0 changes the file, every rank returns its result. */
static int resize(MPI_File fh, MPI_Offset size, int grow, const char *fn)
{
    GET_FILE(f, fh, fn);
    aptus_io_drain(f); /* its nonblocking accesses first */
    if (size < 0)
        return aptus_file_error(f, MPI_ERR_ARG, fn, "negative size %lld", (long long)size);
    if (f->amode & MPI_MODE_SEQUENTIAL)
        return aptus_file_error(f, MPI_ERR_UNSUPPORTED_OPERATION, fn, "the file was opened MPI_MODE_SEQUENTIAL");
    if (f->amode & MPI_MODE_RDONLY)
        return aptus_file_error(f, MPI_ERR_READ_ONLY, fn, "the file was opened MPI_MODE_RDONLY");
    int rank, err = 0;
    PMPI_Comm_rank(f->comm, &rank);
    PMPI_Barrier(f->comm); /* no rank sees the new size before every rank has called */
    if (rank == 0) {
        err = grow ? f->drv->allocate(f->fd, size) : f->drv->resize(f->fd, size);
    }
    int cls = agree(f->comm, err ? aptus_io_errno_class(err) : 0);
    if (cls)
        return aptus_file_error(f, cls, fn, "%s", err ? strerror(err) : "failed on rank 0");
    return MPI_SUCCESS;
}

int PMPI_File_set_size(MPI_File fh, MPI_Offset size)
{
    APTUS_API_LOCK();
    return resize(fh, size, 0, "MPI_File_set_size");
}
APTUS_ALIAS(File_set_size)

int PMPI_File_preallocate(MPI_File fh, MPI_Offset size)
{
    APTUS_API_LOCK();
    return resize(fh, size, 1, "MPI_File_preallocate");
}
APTUS_ALIAS(File_preallocate)

int PMPI_File_get_size(MPI_File fh, MPI_Offset *size)
{
    static const char fn[] = "MPI_File_get_size";
    APTUS_API_LOCK();
    GET_FILE(f, fh, fn);
    if (!size)
        return aptus_file_error(f, MPI_ERR_ARG, fn, "null size argument");
    int err = f->drv->size(f->fd, size);
    if (err)
        return aptus_file_error(f, aptus_io_errno_class(err), fn, "%s", strerror(err));
    return MPI_SUCCESS;
}
APTUS_ALIAS(File_get_size)

int PMPI_File_sync(MPI_File fh)
{
    static const char fn[] = "MPI_File_sync";
    APTUS_API_LOCK();
    GET_FILE(f, fh, fn);
    aptus_io_drain(f); /* its nonblocking accesses first */
    int err = 0;
    if (!(f->amode & MPI_MODE_RDONLY))
        err = f->drv->sync(f->fd);
    int cls = agree(f->comm, err ? aptus_io_errno_class(err) : 0);
    if (cls)
        return aptus_file_error(f, cls, fn, "%s", err ? strerror(err) : "failed on another rank");
    return MPI_SUCCESS;
}
APTUS_ALIAS(File_sync)

int PMPI_File_get_amode(MPI_File fh, int *amode)
{
    APTUS_API_LOCK();
    GET_FILE(f, fh, "MPI_File_get_amode");
    if (!amode)
        return aptus_file_error(f, MPI_ERR_ARG, "MPI_File_get_amode", "null amode argument");
    *amode = f->amode;
    return MPI_SUCCESS;
}
APTUS_ALIAS(File_get_amode)

int PMPI_File_get_group(MPI_File fh, MPI_Group *group)
{
    APTUS_API_LOCK();
    GET_FILE(f, fh, "MPI_File_get_group");
    if (!group)
        return aptus_file_error(f, MPI_ERR_ARG, "MPI_File_get_group", "null group argument");
    return PMPI_Comm_group(f->comm, group);
}
APTUS_ALIAS(File_get_group)

int PMPI_File_set_atomicity(MPI_File fh, int flag)
{
    APTUS_API_LOCK();
    GET_FILE(f, fh, "MPI_File_set_atomicity");
    aptus_io_drain(f); /* its nonblocking accesses first */
    if (differs(f->comm, !!flag))
        return aptus_file_error(f, MPI_ERR_ARG, "MPI_File_set_atomicity", "the ranks gave different flags");
    f->atomic = !!flag;
    return MPI_SUCCESS;
}
APTUS_ALIAS(File_set_atomicity)

int PMPI_File_get_atomicity(MPI_File fh, int *flag)
{
    APTUS_API_LOCK();
    GET_FILE(f, fh, "MPI_File_get_atomicity");
    if (!flag)
        return aptus_file_error(f, MPI_ERR_ARG, "MPI_File_get_atomicity", "null flag argument");
    *flag = f->atomic;
    return MPI_SUCCESS;
}
APTUS_ALIAS(File_get_atomicity)

/* ---- hints ---- */

static int merge_info(struct aptus_file *f, MPI_Info info)
{
    if (info == MPI_INFO_NULL)
        return MPI_SUCCESS;
    if (f->info == MPI_INFO_NULL)
        return PMPI_Info_dup(info, &f->info);
    int n = 0;
    PMPI_Info_get_nkeys(info, &n);
    for (int i = 0; i < n; i++) {
        char key[MPI_MAX_INFO_KEY + 1], val[MPI_MAX_INFO_VAL + 1];
        int len = MPI_MAX_INFO_VAL, flag = 0;
        PMPI_Info_get_nthkey(info, i, key);
        PMPI_Info_get_string(info, key, &len, val, &flag);
        if (flag)
            PMPI_Info_set(f->info, key, val);
    }
    return MPI_SUCCESS;
}

/* Whether this rank's view sieves, and whether some rank's may sieve its writes (in the
 * collective calls that change a view or the hints): then every independent write locks the
 * range it touches (io/view.c). */
static void sieve_agree(struct aptus_file *f)
{
    f->sieve_rd = aptus_io_sieves(f, 0);
    f->sieve_wr = aptus_io_sieves(f, 1);
    int s[2] = { f->sieve_wr, !aptus_io_view_contiguous(f) }, n = 1;
    PMPI_Allreduce(MPI_IN_PLACE, s, 2, MPI_INT, MPI_MAX, f->comm);
    PMPI_Comm_size(f->comm, &n);
    f->sieve_any = s[0] && n > 1;
    f->coll_local = !s[1];
}

int PMPI_File_set_info(MPI_File fh, MPI_Info info)
{
    APTUS_API_LOCK();
    GET_FILE(f, fh, "MPI_File_set_info");
    int rc = merge_info(f, info);
    sieve_agree(f);
    if (rc != MPI_SUCCESS)
        return aptus_file_error(f, MPI_ERR_INFO, "MPI_File_set_info", "invalid info");
    return MPI_SUCCESS;
}
APTUS_ALIAS(File_set_info)

int PMPI_File_get_info(MPI_File fh, MPI_Info *info_used)
{
    static const char fn[] = "MPI_File_get_info";
    APTUS_OUT_NULL(info_used, MPI_INFO_NULL);
    APTUS_API_LOCK();
    GET_FILE(f, fh, fn);
    if (!info_used)
        return aptus_file_error(f, MPI_ERR_ARG, fn, "null info_used argument");
    MPI_Info r;
    if ((f->info != MPI_INFO_NULL ? PMPI_Info_dup(f->info, &r) : PMPI_Info_create(&r)) != MPI_SUCCESS)
        return aptus_file_error(f, MPI_ERR_NO_MEM, fn, "out of memory");
    /* the reserved hints, as they are in effect: the program's where it gave one (two-phase I/O
     * uses cb_buffer_size, cb_nodes and striping_unit, io/coll.c), else the defaults; cb_nodes
     * as used (at most the ranks) */
    char v[64];
    snprintf(v, sizeof v, "%d", aptus_io_aggregators(f));
    const char *defaults[][2] = { { "collective_buffering", "true" },
                                  { "cb_buffer_size", "1048576" },
                                  { "cb_nodes", v },
                                  { "striping_unit", "4096" },
                                  { "file_perm", "0666" } };
    for (size_t i = 0; i < sizeof defaults / sizeof defaults[0]; i++) {
        int has = 0, vlen = 0;
        PMPI_Info_get_valuelen(r, defaults[i][0], &vlen, &has);
        if (!has || strcmp(defaults[i][0], "cb_nodes") == 0)
            PMPI_Info_set(r, defaults[i][0], defaults[i][1]);
    }
    *info_used = r;
    return MPI_SUCCESS;
}
APTUS_ALIAS(File_get_info)

/* ---- views ---- */

/* Whether the runs of one element of t start at nondecreasing offsets. */
static int monotone(const struct aptus_dtype *t)
{
    for (size_t i = 0; i < t->nsegs; i++) {
        const struct aptus_dt_seg *g = &t->segs[i];
        if ((g->count > 1 && g->stride < 0) ||
            (i > 0 && g->disp < t->segs[i - 1].disp + (MPI_Aint)(t->segs[i - 1].count - 1) * t->segs[i - 1].stride))
            return 0;
    }
    return 1;
}

/* What is wrong with a view of displacement disp, etype e and filetype t (their layouts in the
 * file), or NULL. */
static const char *layout_problem(const struct aptus_file *f, MPI_Offset disp, const struct aptus_dtype *e,
                                  const struct aptus_dtype *t)
{
    if (disp < 0 && disp != MPI_DISPLACEMENT_CURRENT)
        return "negative displacement";
    if (disp == MPI_DISPLACEMENT_CURRENT && !(f->amode & MPI_MODE_SEQUENTIAL))
        return "MPI_DISPLACEMENT_CURRENT is only for files opened MPI_MODE_SEQUENTIAL";
    if (e->size == 0 || t->size % e->size != 0)
        return "the etype's size does not divide the filetype's";
    if (t->size > 0 && (t->extent <= 0 || t->true_lb < 0))
        return "the filetype must have a positive extent and no data before its displacement 0";
    if (t->size > 0 && t->true_extent > t->extent)
        return "the filetype's data spans more than its extent (the tiles would overlap)";
    if (!monotone(e) || !monotone(t))
        return "the displacements of the etype and the filetype must be nondecreasing (MPI 4.1, 14.3)";
    return NULL;
}

int PMPI_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype, const char *datarep,
                       MPI_Info info)
{
    static const char fn[] = "MPI_File_set_view";
    APTUS_API_LOCK();
    GET_FILE(f, fh, fn);
    aptus_io_drain(f); /* its nonblocking accesses first */
    struct aptus_dtype *e = aptus_dtype_get(etype), *t = aptus_dtype_get(filetype);
    const char *why = NULL, *name = NULL;
    const struct aptus_io_rep *rep = NULL;
    MPI_Datatype fe = etype, ft = filetype; /* their layouts in the file */
    int cls = MPI_ERR_ARG;
    if (!e || !t || !e->committed || !t->committed) {
        cls = MPI_ERR_TYPE;
        why = !e || !t ? "invalid etype or filetype" : "the etype and the filetype must be committed";
    } else if (!datarep) {
        why = "null datarep argument";
    } else if (!(name = aptus_io_rep_find(datarep, &rep))) {
        cls = MPI_ERR_UNSUPPORTED_DATAREP;
        why = "unknown data representation";
    } else if (aptus_io_rep_converts(rep) &&
               ((cls = aptus_io_rep_type(rep, etype, &fe)) != 0 || (cls = aptus_io_rep_type(rep, filetype, &ft)) != 0 ||
                (ft != filetype && (cls = PMPI_Type_commit(&ft)) != 0))) {
        why = cls == MPI_ERR_CONVERSION ? "the representation's extent function failed on a type of the view"
                                        : "a type of the view has no form in this data representation";
    }
    if (!why) { /* the layout, in the file's sizes */
        cls = MPI_ERR_ARG;
        why = layout_problem(f, disp, aptus_dtype_get(fe), aptus_dtype_get(ft));
    }
    size_t esize = why ? 0 : aptus_dtype_get(fe)->size;
    if (fe != etype)
        PMPI_Type_free(&fe);
    if (f->split && !why) {
        cls = MPI_ERR_OTHER;
        why = "a split collective operation is in progress";
    }
    if (agree(f->comm, why ? cls : 0) && !why) {
        why = "the view was refused on another rank";
        cls = MPI_ERR_ARG;
    }
    if (why) {
        if (ft != filetype)
            PMPI_Type_free(&ft);
        return aptus_file_error(f, cls, fn, "%s", why);
    }
    if (disp == MPI_DISPLACEMENT_CURRENT) { /* where the shared pointer is, in bytes */
        MPI_Offset cur = 0;
        int rank;
        PMPI_Comm_rank(f->comm, &rank);
        PMPI_Barrier(f->comm);
        if (rank == 0 && aptus_io_shared_fetch_add(f, 0, &cur) == MPI_SUCCESS)
            disp = f->ft->size ? aptus_io_byte_offset(f, cur * (MPI_Offset)f->esize) : f->disp;
        PMPI_Bcast(&disp, 1, MPI_OFFSET, 0, f->comm);
    }
    MPI_Datatype ne = etype, nt = filetype;
    if (!e->predefined)
        PMPI_Type_dup(etype, &ne);
    if (!t->predefined)
        PMPI_Type_dup(filetype, &nt);
    view_drop(f);
    f->etype = ne;
    f->filetype = nt;
    f->fview = ft != filetype ? ft : MPI_DATATYPE_NULL;
    f->ft = aptus_dtype_get(ft != filetype ? ft : nt);
    f->esize = esize;
    f->disp = disp;
    f->datarep = name;
    f->rep = aptus_io_rep_converts(rep) ? rep : NULL;
    f->fp = 0;
    merge_info(f, info);
    sieve_agree(f);
    return shared_set(f, 0) == MPI_SUCCESS
               ? MPI_SUCCESS
               : aptus_file_error(f, MPI_ERR_OTHER, fn, "could not reset the shared pointer");
}
APTUS_ALIAS(File_set_view)

int PMPI_File_get_view(MPI_File fh, MPI_Offset *disp, MPI_Datatype *etype, MPI_Datatype *filetype, char *datarep)
{
    static const char fn[] = "MPI_File_get_view";
    APTUS_API_LOCK();
    GET_FILE(f, fh, fn);
    if (!disp || !etype || !filetype || !datarep)
        return aptus_file_error(f, MPI_ERR_ARG, fn, "null argument");
    *disp = f->disp;
    /* derived types come back as new handles the caller frees */
    *etype = f->etype;
    *filetype = f->filetype;
    if (!aptus_dtype_get(f->etype)->predefined)
        PMPI_Type_dup(f->etype, etype);
    if (!aptus_dtype_get(f->filetype)->predefined)
        PMPI_Type_dup(f->filetype, filetype);
    snprintf(datarep, MPI_MAX_DATAREP_STRING, "%s", f->datarep);
    return MPI_SUCCESS;
}
APTUS_ALIAS(File_get_view)

int PMPI_File_get_type_extent(MPI_File fh, MPI_Datatype datatype, MPI_Aint *extent)
{
    static const char fn[] = "MPI_File_get_type_extent";
    APTUS_API_LOCK();
    GET_FILE(f, fh, fn);
    struct aptus_dtype *d = aptus_dtype_get(datatype);
    if (!d)
        return aptus_file_error(f, MPI_ERR_TYPE, fn, "invalid datatype");
    if (!extent)
        return aptus_file_error(f, MPI_ERR_ARG, fn, "null extent argument");
    const struct aptus_io_rep *rep;
    MPI_Datatype t = datatype;
    aptus_io_rep_find(f->datarep, &rep);
    int rc = rep ? aptus_io_rep_type(rep, datatype, &t) : 0; /* native and internal: as in memory */
    if (rc != 0)
        return aptus_file_error(f, rc, fn, "the datatype has no extent in the data representation \"%s\"%s", f->datarep,
                                rc == MPI_ERR_CONVERSION ? " (its extent function failed)" : "");
    *extent = aptus_dtype_get(t)->extent;
    if (t != datatype)
        PMPI_Type_free(&t);
    return MPI_SUCCESS;
}
APTUS_ALIAS(File_get_type_extent)

int PMPI_File_get_type_extent_c(MPI_File fh, MPI_Datatype datatype, MPI_Count *extent)
{
    MPI_Aint e = 0;
    int rc = PMPI_File_get_type_extent(fh, datatype, &e);
    if (rc == MPI_SUCCESS && extent)
        *extent = e;
    return rc;
}
APTUS_ALIAS(File_get_type_extent_c)

/* ---- the individual file pointer ---- */

int PMPI_File_seek(MPI_File fh, MPI_Offset offset, int whence)
{
    static const char fn[] = "MPI_File_seek";
    APTUS_API_LOCK();
    GET_FILE(f, fh, fn);
    if (f->amode & MPI_MODE_SEQUENTIAL)
        return aptus_file_error(f, MPI_ERR_UNSUPPORTED_OPERATION, fn, "the file was opened MPI_MODE_SEQUENTIAL");
    MPI_Offset base;
    if (whence == MPI_SEEK_SET) {
        base = 0;
    } else if (whence == MPI_SEEK_CUR) {
        base = f->fp;
    } else if (whence == MPI_SEEK_END) {
        MPI_Offset end = 0;
        int err = f->drv->size(f->fd, &end);
        if (err)
            return aptus_file_error(f, MPI_ERR_IO, fn, "%s", strerror(err));
        base = aptus_io_view_bytes_below(f, end) / (MPI_Offset)f->esize;
    } else {
        return aptus_file_error(f, MPI_ERR_ARG, fn, "whence must be MPI_SEEK_SET, MPI_SEEK_CUR or MPI_SEEK_END");
    }
    if (base + offset < 0)
        return aptus_file_error(f, MPI_ERR_ARG, fn, "the position would be negative (%lld)",
                                (long long)(base + offset));
    f->fp = base + offset;
    return MPI_SUCCESS;
}
APTUS_ALIAS(File_seek)

int PMPI_File_get_position(MPI_File fh, MPI_Offset *offset)
{
    APTUS_API_LOCK();
    GET_FILE(f, fh, "MPI_File_get_position");
    if (!offset)
        return aptus_file_error(f, MPI_ERR_ARG, "MPI_File_get_position", "null offset argument");
    *offset = f->fp;
    return MPI_SUCCESS;
}
APTUS_ALIAS(File_get_position)

int PMPI_File_get_byte_offset(MPI_File fh, MPI_Offset offset, MPI_Offset *disp)
{
    static const char fn[] = "MPI_File_get_byte_offset";
    APTUS_API_LOCK();
    GET_FILE(f, fh, fn);
    if (!disp)
        return aptus_file_error(f, MPI_ERR_ARG, fn, "null disp argument");
    if (offset < 0)
        return aptus_file_error(f, MPI_ERR_ARG, fn, "negative offset %lld", (long long)offset);
    *disp = f->ft->size ? aptus_io_byte_offset(f, offset * (MPI_Offset)f->esize) : f->disp;
    return MPI_SUCCESS;
}
APTUS_ALIAS(File_get_byte_offset)

/* ---- the shared file pointer ---- */

int aptus_io_shared_fetch_add(struct aptus_file *f, MPI_Offset add, MPI_Offset *old)
{
    int rc = PMPI_Win_lock(MPI_LOCK_SHARED, 0, 0, f->shared_win);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Fetch_and_op(&add, old, MPI_OFFSET, 0, 0, add ? MPI_SUM : MPI_NO_OP, f->shared_win);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Win_unlock(0, f->shared_win);
    return rc;
}

int PMPI_File_get_position_shared(MPI_File fh, MPI_Offset *offset)
{
    APTUS_API_LOCK();
    GET_FILE(f, fh, "MPI_File_get_position_shared");
    if (!offset)
        return aptus_file_error(f, MPI_ERR_ARG, "MPI_File_get_position_shared", "null offset argument");
    if (aptus_io_shared_fetch_add(f, 0, offset) != MPI_SUCCESS)
        return aptus_file_error(f, MPI_ERR_OTHER, "MPI_File_get_position_shared", "could not read the shared pointer");
    return MPI_SUCCESS;
}
APTUS_ALIAS(File_get_position_shared)

int PMPI_File_seek_shared(MPI_File fh, MPI_Offset offset, int whence)
{
    static const char fn[] = "MPI_File_seek_shared";
    APTUS_API_LOCK();
    GET_FILE(f, fh, fn);
    int rank;
    PMPI_Comm_rank(f->comm, &rank);
    MPI_Offset pos = 0, cur = 0;
    int cls = 0;
    if (rank == 0) {
        if (whence == MPI_SEEK_SET) {
            pos = offset;
        } else if (whence == MPI_SEEK_CUR) {
            cls = aptus_io_shared_fetch_add(f, 0, &cur) == MPI_SUCCESS ? 0 : MPI_ERR_OTHER;
            pos = cur + offset;
        } else if (whence == MPI_SEEK_END) {
            MPI_Offset end = 0;
            cls = f->drv->size(f->fd, &end) == 0 ? 0 : MPI_ERR_IO;
            pos = aptus_io_view_bytes_below(f, end) / (MPI_Offset)f->esize + offset;
        } else {
            cls = MPI_ERR_ARG;
        }
        if (!cls && pos < 0)
            cls = MPI_ERR_ARG;
    }
    /* collective: every rank must give the same offset and whence (checked against rank 0's) */
    MPI_Offset mine[2] = { offset, whence }, root[2] = { offset, whence };
    PMPI_Bcast(root, 2, MPI_OFFSET, 0, f->comm);
    if (!cls && (root[0] != mine[0] || root[1] != mine[1]))
        cls = MPI_ERR_ARG;
    cls = agree(f->comm, cls);
    if (cls)
        return aptus_file_error(f, cls, fn,
                                "invalid whence, a negative position, or ranks that gave different arguments");
    PMPI_Bcast(&pos, 1, MPI_OFFSET, 0, f->comm);
    if (shared_set(f, pos) != MPI_SUCCESS)
        return aptus_file_error(f, MPI_ERR_OTHER, fn, "could not set the shared pointer");
    return MPI_SUCCESS;
}
APTUS_ALIAS(File_seek_shared)
