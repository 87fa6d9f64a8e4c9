/* The view cursor and the transfers: the file runs of a range of the view's data stream, walked
 * lazily by the datatype engine's cursor over the filetype's tiles, paired with the memory cursor
 * of the user's buffer into iovecs for preadv/pwritev (io/io.h). */
#include <errno.h>
#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include "core/datatype.h"
#include "io/io.h"

#define IO_BIAS APTUS_IO_BIAS
/* iovecs per system call, and bytes per system call (Linux moves at most 2 GiB - 4 KiB in one). */
#define IO_IOV   64
#define IO_CHUNK ((size_t)1 << 30)

void aptus_io_view_start(struct aptus_dt_cursor *vc, const struct aptus_file *f, MPI_Offset pos, MPI_Offset bytes)
{
    MPI_Offset tsize = (MPI_Offset)f->ft->size;
    MPI_Offset t0 = pos / tsize, t1 = (pos + bytes + tsize - 1) / tsize;
    if (t1 <= t0)
        t1 = t0 + 1;
    uintptr_t base = IO_BIAS + (uintptr_t)(f->disp + t0 * (MPI_Offset)f->ft->extent);
    aptus_dt_cursor_init(vc, (const void *)base, (size_t)(t1 - t0), f->ft);
    aptus_dt_cursor_seek(vc, (size_t)(pos - t0 * tsize));
}

MPI_Offset aptus_io_byte_offset(const struct aptus_file *f, MPI_Offset pos)
{
    struct aptus_dt_cursor vc;
    struct iovec run;
    size_t got = 0;
    aptus_io_view_start(&vc, f, pos, 1);
    if (aptus_dt_iov_some(&vc, &run, 1, 1, &got) != 1)
        return f->disp;
    return (MPI_Offset)((uintptr_t)run.iov_base - IO_BIAS);
}

MPI_Offset aptus_io_view_bytes_below(const struct aptus_file *f, MPI_Offset size)
{
    MPI_Offset tsize = (MPI_Offset)f->ft->size, ext = (MPI_Offset)f->ft->extent;
    if (size <= f->disp || tsize == 0)
        return 0;
    /* the tiles whose data all lies below size, then the runs of the next ones (the tiles follow
     * each other: a filetype's extent is positive and its data within its true extent) */
    MPI_Offset end0 = f->disp + (MPI_Offset)f->ft->true_lb + (MPI_Offset)f->ft->true_extent;
    MPI_Offset k = size < end0 ? 0 : (size - end0) / ext + 1;
    MPI_Offset bytes = k * tsize;
    for (;;) {
        struct aptus_dt_cursor vc;
        struct iovec run[IO_IOV];
        size_t got = 0;
        aptus_io_view_start(&vc, f, bytes, tsize);
        int n = aptus_dt_iov_some(&vc, run, IO_IOV, (size_t)tsize, &got);
        if (n <= 0)
            return bytes;
        for (int i = 0; i < n; i++) {
            MPI_Offset off = (MPI_Offset)((uintptr_t)run[i].iov_base - IO_BIAS);
            if (off >= size)
                return bytes;
            if (off + (MPI_Offset)run[i].iov_len > size)
                return bytes + (size - off);
            bytes += (MPI_Offset)run[i].iov_len;
        }
    }
}

/* One system call's worth at file offset off: the next memory iovecs of at most len bytes. */
static ssize_t move_some(int fd, int write, struct aptus_dt_cursor *mc, MPI_Offset off, size_t len)
{
    struct iovec iov[IO_IOV];
    size_t bytes = 0, start = mc->pos;
    int n = aptus_dt_iov_some(mc, iov, IO_IOV, len < IO_CHUNK ? len : IO_CHUNK, &bytes);
    ssize_t r;
    do
        r = write ? pwritev(fd, iov, n, (off_t)off) : preadv(fd, iov, n, (off_t)off);
    while (r < 0 && errno == EINTR);
    if (r < 0 || (size_t)r < bytes)
        aptus_dt_cursor_seek(mc, start + (r > 0 ? (size_t)r : 0));
    return r;
}

int aptus_io_access(struct aptus_file *f, int write, MPI_Offset pos, void *buf, size_t count,
                    const struct aptus_dtype *dt, size_t *done)
{
    size_t total = count * dt->size;
    *done = 0;
    if (total == 0)
        return 0;
    struct aptus_dt_cursor mc, vc;
    aptus_dt_cursor_init(&mc, buf, count, dt);
    aptus_io_view_start(&vc, f, pos, (MPI_Offset)total);
    /* atomic mode: the whole access under one lock of the file (open file description locks: per
     * open, not per process, released with the descriptor) */
    struct flock lk = { .l_type = (short)(write ? F_WRLCK : F_RDLCK), .l_whence = SEEK_SET };
    if (f->atomic) {
        int r;
        do
            r = fcntl(f->fd, F_OFD_SETLKW, &lk);
        while (r < 0 && errno == EINTR);
        if (r < 0)
            return errno ? errno : EIO;
    }
    int err = 0;
    while (*done < total && !err) {
        struct iovec run[IO_IOV];
        size_t got = 0;
        int n = aptus_dt_iov_some(&vc, run, IO_IOV, total - *done, &got);
        if (n <= 0)
            break;
        for (int i = 0; i < n && !err; i++) {
            MPI_Offset off = (MPI_Offset)((uintptr_t)run[i].iov_base - IO_BIAS);
            size_t left = run[i].iov_len;
            while (left) {
                ssize_t r = move_some(f->fd, write, &mc, off, left);
                if (r < 0) {
                    err = errno ? errno : EIO;
                    break;
                }
                if (r == 0) { /* reading at the end of the file */
                    if (write)
                        err = EIO;
                    goto out;
                }
                off += r;
                left -= (size_t)r;
                *done += (size_t)r;
            }
        }
    }
out:
    if (f->atomic) {
        lk.l_type = F_UNLCK;
        fcntl(f->fd, F_OFD_SETLK, &lk);
    }
    return err;
}
