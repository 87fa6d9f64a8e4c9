/* MPI-IO (MPI 4.1, chapter 14): files, views and data access, a layer over the C API (it calls
 * PMPI_ functions for its communication, as a program would) that walks the datatype engine's
 * maps itself. docs/DESIGN.md, "MPI-IO".
 *
 * A file is one POSIX descriptor per process on a duplicate of the opening communicator (errors
 * returned, never raised there). The view -- displacement, etype, filetype -- maps the view's
 * data, a stream of bytes counted in etypes, onto the file: tile k of the filetype starts at
 * disp + k * extent, and a cursor over the filetype yields the (offset, length) runs of any range
 * of that stream lazily (never count x blocks). Each access pairs those runs with the memory
 * cursor of (buf, count, datatype) into iovecs for preadv/pwritev. */
#ifndef APTUS_IO_IO_H
#define APTUS_IO_IO_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "core/datatype.h"
#include "core/objects.h"

/* A file system driver: how a file's bytes are reached. io/posix.c is the one so far (every file
 * system the kernel mounts); a driver for a parallel file system's own client would sit beside
 * it. Each returns 0 or an errno value, the transfers the bytes moved or -1 with errno. */
struct aptus_io_driver {
    const char *name;
    /* whether it serves filename; *path: the name without a prefix naming the file system */
    int (*claims)(const char *filename, const char **path);
    int (*open)(const char *path, int amode, int create, int excl, unsigned perm, int *fd);
    int (*close)(int fd);
    int (*remove)(const char *path);
    ssize_t (*preadv)(int fd, const struct iovec *iov, int n, MPI_Offset off);
    ssize_t (*pwritev)(int fd, const struct iovec *iov, int n, MPI_Offset off);
    int (*size)(int fd, MPI_Offset *size);
    int (*resize)(int fd, MPI_Offset size);   /* MPI_File_set_size */
    int (*allocate)(int fd, MPI_Offset size); /* MPI_File_preallocate: never shrinks */
    int (*sync)(int fd);
    /* a lock of [lo, hi) (hi 0: to the end and beyond) between the opens of the file: F_WRLCK,
     * F_RDLCK (waiting for it) or F_UNLCK */
    int (*lock)(int fd, int type, MPI_Offset lo, MPI_Offset hi);
};
extern const struct aptus_io_driver aptus_io_posix;
/* The driver of filename (*path: the name it opens), or NULL. */
const struct aptus_io_driver *aptus_io_driver_for(const char *filename, const char **path);

struct aptus_file {
    struct aptus_file_head head; /* magic, error handler */
    const struct aptus_io_driver *drv;
    int fd;
    int amode;
    int atomic;    /* MPI_File_set_atomicity */
    MPI_Comm comm; /* a duplicate of the opening communicator, errors returned */
    char *path;    /* as opened (MPI_MODE_DELETE_ON_CLOSE) */
    MPI_Info info; /* the hints given (MPI_File_open, MPI_File_set_view, MPI_File_set_info) */
    /* the view */
    MPI_Offset disp;
    MPI_Datatype etype, filetype;   /* this file's own (derived ones duplicated) */
    struct aptus_dtype *ft;         /* the layout of the filetype in the file (fview or filetype) */
    size_t esize;                   /* bytes of one etype in the file */
    const char *datarep;            /* the view's representation (a string that outlives the file) */
    const struct aptus_io_rep *rep; /* a converting representation, else NULL */
    MPI_Datatype fview;             /* the filetype's layout in the file when it differs, else MPI_DATATYPE_NULL */
    MPI_Offset fp;                  /* the individual file pointer, in etypes */
    int sieve_rd, sieve_wr;         /* this rank's view sieves reads / writes (aptus_io_sieves) */
    int sieve_any;                  /* some rank's view may sieve writes: independent writes lock their range */
    int coll_local;                 /* every rank's view is contiguous: a collective access is each rank's own */
    int pending;                    /* nonblocking accesses not complete yet (io/access.c) */
    void *coll_first, *coll_last;   /* its nonblocking collective accesses, in the order started */
    /* the shared file pointer: one MPI_Offset (etypes) in a window at rank 0 */
    MPI_Win shared_win;
    MPI_Offset *shared_mem;
    /* a split collective begun and not ended */
    int split;
    const void *split_buf;
    MPI_Status split_status;
    MPI_Request split_req; /* the nonblocking access a split collective began (ordered: none) */
    int split_rc;
};
_Static_assert(sizeof(struct aptus_file) <= APTUS_OBJ_SLOT_FILE && offsetof(struct aptus_file, head) == 0,
               "struct aptus_file fits a slot of the handle arena and starts with its magic");

/* Waits until f's nonblocking accesses are complete (MPI_File_close, set_view, set_size, sync). */
void aptus_io_drain(struct aptus_file *f);
/* The file behind h, or NULL. */
struct aptus_file *aptus_file_get(MPI_File h);

/* Raises an error on file f (its error handler; f NULL: MPI_FILE_NULL's) and returns the code. */
int aptus_file_error(struct aptus_file *f, int errclass, const char *fn, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* The MPI error class of an errno value of a file operation. */
int aptus_io_errno_class(int err);

/* The view's file runs come out of the datatype engine's cursor as addresses: this bias plus the
 * file offset (clear of NULL for any offset a file can have). */
#define APTUS_IO_BIAS ((uintptr_t)1 << 40)
/* Positions vc at byte pos of the view's data stream, covering `bytes` bytes from there:
 * aptus_dt_iov_some on it yields the file runs (iov_base - APTUS_IO_BIAS is the offset). */
void aptus_io_view_start(struct aptus_dt_cursor *vc, const struct aptus_file *f, MPI_Offset pos, MPI_Offset bytes);
/* The collective forms (every rank of the file calls it): two-phase I/O when the ranks' ranges
 * interleave, each rank's own access otherwise. Returns 0 or an errno value (the same class of
 * failure on every rank when one failed); *done as aptus_io_access. */
int aptus_io_coll(struct aptus_file *f, int write, MPI_Offset pos, void *buf, size_t count,
                  const struct aptus_dtype *dt, size_t *done);
/* The aggregators of two-phase I/O: the hint cb_nodes (at most the ranks), else every rank. */
int aptus_io_aggregators(const struct aptus_file *f);
/* The collective access in steps (io/coll.c): start (NULL: no memory), advance without blocking
 * (1 once it is over; budget as aptus_io_xfer_step for the shortcut's own access), end (frees it;
 * returns what aptus_io_coll returns). */
struct aptus_io_coll;
struct aptus_io_coll *aptus_io_coll_start(struct aptus_file *f, int write, MPI_Offset pos, void *buf, size_t count,
                                          const struct aptus_dtype *dt);
int aptus_io_coll_step(struct aptus_io_coll *c, size_t budget);
int aptus_io_coll_end(struct aptus_io_coll *c, size_t *done);
/* Moves `bytes` bytes of the view's data stream starting at byte `pos` (read: into, write: from
 * count elements of dt at buf). Returns 0 or an errno value; *done: bytes moved (short at the
 * end of the file when reading). */
int aptus_io_access(struct aptus_file *f, int write, MPI_Offset pos, void *buf, size_t count,
                    const struct aptus_dtype *dt, size_t *done);
/* Whether accesses through f's view are sieved (io/view.c, "data sieving"); worked out when the
 * view or the hints change (f->sieve_rd, f->sieve_wr). */
int aptus_io_sieves(const struct aptus_file *f, int write);
/* Whether this rank's view is contiguous: its data stream is one range of the file. */
int aptus_io_view_contiguous(const struct aptus_file *f);
/* A hint's value as a positive integer, or def. */
MPI_Offset aptus_io_hint(const struct aptus_file *f, const char *key, MPI_Offset def);
/* Writes all n bytes at off; reads all n bytes, what lies past the end of the file reading as
 * zeros. 0 or an errno value. */
int aptus_io_pwrite_full(const struct aptus_file *f, const unsigned char *p, size_t n, MPI_Offset off);
int aptus_io_pread_full(const struct aptus_file *f, unsigned char *p, size_t n, MPI_Offset off);
/* A transfer of aptus_io_access in steps (a nonblocking access moves a step per progress pass). */
struct aptus_io_xfer {
    struct aptus_file *f;
    int write, sieve, atomic, range, err, finished;
    MPI_Offset pos, lo, hi; /* stream start; the range a plain write locks */
    size_t total, done;
    struct aptus_dt_cursor mc, vc;
};
void aptus_io_xfer_start(struct aptus_io_xfer *x, struct aptus_file *f, int write, MPI_Offset pos, void *buf,
                         size_t count, const struct aptus_dtype *dt);
/* Moves at most about `budget` more bytes (0: the rest); returns 1 once the transfer is over:
 * every byte moved, the end of the file reached when reading, or x->err (an errno value) set.
 * x->done counts the bytes moved. Locks taken for it are released when it is over. */
int aptus_io_xfer_step(struct aptus_io_xfer *x, size_t budget);
/* The absolute byte offset of byte `pos` of the view's data stream. */
MPI_Offset aptus_io_byte_offset(const struct aptus_file *f, MPI_Offset pos);
/* The shared file pointer (etypes): *old its value, then add added (0: only read). */
int aptus_io_shared_fetch_add(struct aptus_file *f, MPI_Offset add, MPI_Offset *old);
/* ---- data representations (io/datarep.c) ---- */
struct aptus_io_rep;
/* Whether name is a data representation here; *rep: NULL for "native" and "internal". Returns
 * its name as a string that lives as long as the process, or NULL. */
const char *aptus_io_rep_find(const char *name, const struct aptus_io_rep **rep);
/* Whether accesses through r convert the data (external32; registered with a conversion function). */
int aptus_io_rep_converts(const struct aptus_io_rep *r);
/* Bytes in the file of one element of d. 0 or an MPI error class. */
int aptus_io_rep_size(const struct aptus_io_rep *r, const struct aptus_dtype *d, size_t *size);
/* The layout of t in the file: *out is t itself when every predefined type in it keeps its size,
 * else a new (uncommitted) type the caller frees. 0 or an MPI error class. */
int aptus_io_rep_type(const struct aptus_io_rep *r, MPI_Datatype t, MPI_Datatype *out);
/* Converts count elements of dt at buf into their file form at out (esz bytes each), and back.
 * 0 or an MPI error class (MPI_ERR_CONVERSION: a conversion function failed). */
int aptus_io_rep_write(const struct aptus_io_rep *r, const void *buf, size_t count, MPI_Datatype dt, void *out,
                       size_t esz);
int aptus_io_rep_read(const struct aptus_io_rep *r, const void *in, size_t count, MPI_Datatype dt, void *buf,
                      size_t esz);
/* Bytes of the view's data stream that lie before byte `size` of the file (its end: SEEK_END). */
MPI_Offset aptus_io_view_bytes_below(const struct aptus_file *f, MPI_Offset size);

#endif
