/* The view cursor and the transfers: the file runs of a range of the view's data stream, walked
 * lazily by the datatype engine's cursor over the filetype's tiles, paired with the memory cursor
 * of the user's buffer into iovecs for preadv/pwritev (io/io.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
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

MPI_Offset aptus_io_hint(const struct aptus_file *f, const char *key, MPI_Offset def)
{
    char v[64];
    int len = (int)sizeof v - 1, flag = 0;
    if (f->info == MPI_INFO_NULL || PMPI_Info_get_string(f->info, key, &len, v, &flag) != MPI_SUCCESS || !flag)
        return def;
    char *end;
    long long x = strtoll(v, &end, 10);
    return end != v && x > 0 ? (MPI_Offset)x : def;
}

int aptus_io_pwrite_full(const struct aptus_file *f, const unsigned char *p, size_t n, MPI_Offset off)
{
    while (n) {
        struct iovec v = { (void *)p, n < IO_CHUNK ? n : IO_CHUNK };
        ssize_t w = f->drv->pwritev(f->fd, &v, 1, off);
        if (w <= 0)
            return w < 0 ? errno : EIO;
        p += w;
        n -= (size_t)w;
        off += w;
    }
    return 0;
}

int aptus_io_pread_full(const struct aptus_file *f, unsigned char *p, size_t n, MPI_Offset off)
{
    while (n) {
        struct iovec v = { p, n < IO_CHUNK ? n : IO_CHUNK };
        ssize_t r = f->drv->preadv(f->fd, &v, 1, off);
        if (r < 0)
            return errno;
        if (r == 0) {
            memset(p, 0, n);
            return 0;
        }
        p += r;
        n -= (size_t)r;
        off += r;
    }
    return 0;
}

/* One system call's worth at file offset off: the next memory iovecs of at most len bytes. */
static ssize_t move_some(const struct aptus_file *f, int write, struct aptus_dt_cursor *mc, MPI_Offset off, size_t len)
{
    struct iovec iov[IO_IOV];
    size_t bytes = 0, start = mc->pos;
    int n = aptus_dt_iov_some(mc, iov, IO_IOV, len < IO_CHUNK ? len : IO_CHUNK, &bytes);
    ssize_t r = write ? f->drv->pwritev(f->fd, iov, n, off) : f->drv->preadv(f->fd, iov, n, off);
    if (r < 0 || (size_t)r < bytes)
        aptus_dt_cursor_seek(mc, start + (r > 0 ? (size_t)r : 0));
    return r;
}

/* ---- data sieving ----
 * An access whose file runs are small moves a window of them with one read (and, writing, one
 * write back of the window under a lock of it: the holes keep what the file holds), instead of
 * a system call per run. Hints: romio_ds_read / romio_ds_write ("disable", "enable",
 * "automatic": when the filetype's runs average under SIEVE_RUN bytes), ind_rd_buffer_size /
 * ind_wr_buffer_size (the window). */
#define SIEVE_RUN    ((size_t)16 << 10)
#define SIEVE_RD_BUF ((MPI_Offset)4 << 20)
#define SIEVE_WR_BUF ((MPI_Offset)4 << 20)
#define SIEVE_RUNS   4096 /* runs looked at per step */
/* A window of runs averaging at least this many bytes is read straight into memory: one preadv
 * whose iovecs alternate between the runs' memory and a scratch buffer that takes the holes, so
 * that the bytes are copied once (by the kernel) instead of into the window and out again. */
#define GAP_RUN     ((size_t)512)
#define GAP_IOV     1024 /* IOV_MAX */
#define GAP_SCRATCH ((size_t)64 << 10)

/* Runs of one tile of the filetype's layout. */
static size_t view_runs(const struct aptus_dtype *t)
{
    size_t runs = 0;
    for (size_t i = 0; i < t->nsegs; i++)
        runs += t->segs[i].count;
    return runs;
}

int aptus_io_view_contiguous(const struct aptus_file *f)
{
    size_t runs = view_runs(f->ft);
    return runs == 0 || (runs == 1 && f->ft->size == (size_t)f->ft->extent);
}

int aptus_io_sieves(const struct aptus_file *f, int write)
{
    char v[16];
    int len = (int)sizeof v - 1, flag = 0;
    if (f->info != MPI_INFO_NULL &&
        PMPI_Info_get_string(f->info, write ? "romio_ds_write" : "romio_ds_read", &len, v, &flag) == MPI_SUCCESS &&
        flag && strcmp(v, "disable") == 0)
        return 0;
    const struct aptus_dtype *t = f->ft;
    size_t runs = view_runs(t);
    if (aptus_io_view_contiguous(f))
        return 0;
    return flag && strcmp(v, "enable") == 0 ? 1 : t->size / runs < SIEVE_RUN;
}

/* Advances (*i, *in) -- run i, bytes of it done -- by d bytes of data. */
static void runs_advance(const struct iovec *runs, size_t *i, size_t *in, size_t d)
{
    while (d) {
        size_t take = runs[*i].iov_len - *in < d ? runs[*i].iov_len - *in : d;
        *in += take;
        d -= take;
        if (*in == runs[*i].iov_len) {
            ++*i;
            *in = 0;
        }
    }
}

/* Reads the n runs of a window (file offsets in iov_base, biased) straight into memory at the
 * cursor: each preadv covers runs and the holes between them, the holes read into scratch.
 * Returns 0 or an errno value; *eof when the file ended before the last run. */
static int gap_read(const struct aptus_file *f, const struct iovec *runs, size_t n, struct aptus_dt_cursor *mc,
                    size_t *done, int *eof, unsigned char *scratch)
{
    size_t i = 0, in = 0; /* the next byte: run i, in bytes into it */
    while (i < n) {
        struct iovec iov[GAP_IOV];
        int k = 0;
        size_t j = i, jin = in, want = 0, mstart = mc->pos;
        MPI_Offset start = (MPI_Offset)((uintptr_t)runs[i].iov_base - IO_BIAS) + (MPI_Offset)in, cur = start;
        while (j < n && k < GAP_IOV) {
            MPI_Offset o = (MPI_Offset)((uintptr_t)runs[j].iov_base - IO_BIAS) + (MPI_Offset)jin;
            if (o < cur)
                break; /* a run over the one before it (a read's filetype may overlap): next call */
            size_t holes = (size_t)(o - cur + (MPI_Offset)GAP_SCRATCH - 1) / GAP_SCRATCH;
            if (k + (int)holes >= GAP_IOV) /* (room for a run after the hole's iovecs) */
                break;
            while (cur < o) {
                size_t g = (size_t)(o - cur) < GAP_SCRATCH ? (size_t)(o - cur) : GAP_SCRATCH;
                iov[k++] = (struct iovec){ scratch, g };
                cur += (MPI_Offset)g;
                want += g;
            }
            size_t b = 0;
            int m = aptus_dt_iov_some(mc, iov + k, GAP_IOV - k, runs[j].iov_len - jin, &b);
            if (m <= 0)
                break;
            k += m;
            cur += (MPI_Offset)b;
            want += b;
            jin += b;
            if (jin < runs[j].iov_len)
                break; /* out of iovecs inside the run */
            j++;
            jin = 0;
        }
        ssize_t r = f->drv->preadv(f->fd, iov, k, start);
        if (r < 0) {
            aptus_dt_cursor_seek(mc, mstart);
            return errno ? errno : EIO;
        }
        if ((size_t)r == want) {
            *done += mc->pos - mstart;
            i = j;
            in = jin;
            continue;
        }
        /* short: the data bytes among the r read count; the end of the file when none came */
        size_t data = 0, left = (size_t)r;
        for (int v = 0; v < k && left; v++) {
            size_t t = iov[v].iov_len < left ? iov[v].iov_len : left;
            if (iov[v].iov_base != scratch)
                data += t;
            left -= t;
        }
        aptus_dt_cursor_seek(mc, mstart + data);
        *done += data;
        if (r == 0) {
            *eof = 1;
            return 0;
        }
        runs_advance(runs, &i, &in, data);
    }
    return 0;
}

/* Moves the rest of the access (*done of total bytes already) by windows. Returns 0 or an errno
 * value; EBADF: the file cannot be read (write-only), nothing of the window moved. */
static int sieve(struct aptus_file *f, int write, struct aptus_dt_cursor *vc, struct aptus_dt_cursor *mc, size_t total,
                 size_t *done, int locks, size_t until, int *eof)
{
    size_t win = (size_t)aptus_io_hint(f, write ? "ind_wr_buffer_size" : "ind_rd_buffer_size",
                                       write ? SIEVE_WR_BUF : SIEVE_RD_BUF);
    unsigned char *sb = NULL, *scratch = NULL; /* the window, the holes of a gap_read */
    struct iovec *runs = malloc(SIEVE_RUNS * sizeof *runs);
    int err = runs ? 0 : ENOMEM;
    while (*done < until && !err) {
        /* the window: the runs from the cursor that end within win bytes of the first */
        size_t n = 0, data = 0, vstart = vc->pos, got;
        MPI_Offset lo = 0, hi = 0;
        while (n < SIEVE_RUNS) {
            int k = aptus_dt_iov_some(vc, runs + n, SIEVE_RUNS - (int)n < IO_IOV ? SIEVE_RUNS - (int)n : IO_IOV,
                                      total - *done - data, &got);
            if (k <= 0)
                break;
            int stop = 0;
            for (int i = 0; i < k && !stop; i++) {
                MPI_Offset off = (MPI_Offset)((uintptr_t)runs[n].iov_base - IO_BIAS),
                           end = off + (MPI_Offset)runs[n].iov_len;
                if (n == 0)
                    lo = off;
                if (n > 0 && (end - lo > (MPI_Offset)win || off < lo)) {
                    stop = 1;
                    break;
                }
                hi = end;
                data += runs[n].iov_len;
                n++;
                if (end - lo > (MPI_Offset)win) /* one run longer than the window: alone */
                    stop = 1;
            }
            if (stop || got == 0)
                break;
        }
        aptus_dt_cursor_seek(vc, vstart + data); /* back to the first run not taken */
        if (n == 0)
            break;
        if (hi - lo > (MPI_Offset)win) { /* the lone long run: straight */
            MPI_Offset off = lo;
            size_t left = data;
            if (write && locks)
                err = f->drv->lock(f->fd, F_WRLCK, lo, hi);
            while (left && !err) {
                ssize_t r = move_some(f, write, mc, off, left);
                if (r <= 0) {
                    err = r < 0 ? (errno ? errno : EIO) : write ? EIO : 0;
                    break;
                }
                off += r;
                left -= (size_t)r;
                *done += (size_t)r;
            }
            if (write && locks)
                f->drv->lock(f->fd, F_UNLCK, lo, hi);
            if (left && !err) {
                *eof = 1; /* the end of the file */
                break;
            }
            continue;
        }
        size_t span = (size_t)(hi - lo), avail = span;
        if (!write && data / n >= GAP_RUN) {
            if (!scratch && !(scratch = malloc(GAP_SCRATCH))) {
                err = ENOMEM;
                break;
            }
            err = gap_read(f, runs, n, mc, done, eof, scratch);
            if (*eof)
                break;
            continue;
        }
        if (!sb && !(sb = malloc(win))) {
            err = ENOMEM;
            break;
        }
        if (write) {
            if (locks && (err = f->drv->lock(f->fd, F_WRLCK, lo, hi)) != 0)
                break;
            if (data != span) /* holes: what the file holds there is kept */
                err = aptus_io_pread_full(f, sb, span, lo);
            if (err == EBADF)
                aptus_dt_cursor_seek(vc, vstart);
            for (size_t i = 0; i < n && !err; i++)
                aptus_dt_pack_some(mc, sb + ((uintptr_t)runs[i].iov_base - IO_BIAS - (uintptr_t)lo), runs[i].iov_len);
            if (!err)
                err = aptus_io_pwrite_full(f, sb, span, lo);
            if (locks)
                f->drv->lock(f->fd, F_UNLCK, lo, hi);
            if (!err)
                *done += data;
            continue;
        }
        /* reading: what the file holds of the span (short at its end) */
        ssize_t r;
        size_t at = 0;
        while (at < span) {
            struct iovec v = { sb + at, span - at };
            if ((r = f->drv->preadv(f->fd, &v, 1, lo + (MPI_Offset)at)) <= 0)
                break;
            at += (size_t)r;
        }
        if (r < 0 && at < span) {
            err = errno ? errno : EIO;
            break;
        }
        avail = at;
        for (size_t i = 0; i < n; i++) {
            size_t o = (size_t)((uintptr_t)runs[i].iov_base - IO_BIAS - (uintptr_t)lo), len = runs[i].iov_len;
            if (o + len > avail)
                len = o < avail ? avail - o : 0;
            aptus_dt_unpack_some(mc, sb + o, len);
            *done += len;
            if (len < runs[i].iov_len) {
                *eof = 1; /* the end of the file */
                break;
            }
        }
        if (*eof)
            break;
    }
    free(sb);
    free(scratch);
    free(runs);
    return err;
}

void aptus_io_xfer_start(struct aptus_io_xfer *x, struct aptus_file *f, int write, MPI_Offset pos, void *buf,
                         size_t count, const struct aptus_dtype *dt)
{
    memset(x, 0, sizeof *x);
    x->f = f;
    x->write = write;
    x->total = count * dt->size;
    if (x->total == 0) {
        x->finished = 1;
        return;
    }
    aptus_dt_cursor_init(&x->mc, buf, count, dt);
    aptus_io_view_start(&x->vc, f, pos, (MPI_Offset)x->total);
    x->pos = pos;
    x->sieve = write ? f->sieve_wr : f->sieve_rd;
    /* atomic mode: the whole access under one lock of the file */
    x->atomic = f->atomic;
    if (x->atomic && (x->err = f->drv->lock(f->fd, write ? F_WRLCK : F_RDLCK, 0, 0)) != 0) {
        x->atomic = 0;
        x->finished = 1;
    }
}

static void xfer_end(struct aptus_io_xfer *x)
{
    if (x->range)
        x->f->drv->lock(x->f->fd, F_UNLCK, x->lo, x->hi);
    if (x->atomic)
        x->f->drv->lock(x->f->fd, F_UNLCK, 0, 0);
    x->range = x->atomic = 0;
    x->finished = 1;
}

int aptus_io_xfer_step(struct aptus_io_xfer *x, size_t budget)
{
    if (x->finished)
        return 1;
    struct aptus_file *f = x->f;
    size_t until = budget && x->total - x->done > budget ? x->done + budget : x->total;
    int eof = 0;
    if (x->sieve) {
        x->err = sieve(f, x->write, &x->vc, &x->mc, x->total, &x->done, !f->atomic && f->sieve_any, until, &eof);
        if (x->err == EBADF && x->write) { /* a write-only file: run by run from here */
            x->err = 0;
            x->sieve = 0;
        } else {
            if (x->err || eof || x->done >= x->total)
                xfer_end(x);
            return x->finished;
        }
    }
    /* when some rank's view sieves, a write locks the range it touches (a sieved window must not
     * write stale bytes back over it) */
    if (!x->range && x->write && !f->atomic && f->sieve_any) {
        x->lo = aptus_io_byte_offset(f, x->pos + (MPI_Offset)x->done);
        x->hi = aptus_io_byte_offset(f, x->pos + (MPI_Offset)x->total - 1) + 1;
        if ((x->err = f->drv->lock(f->fd, F_WRLCK, x->lo, x->hi)) != 0) {
            xfer_end(x);
            return 1;
        }
        x->range = 1;
    }
    while (x->done < until && !x->err && !eof) {
        struct iovec run[IO_IOV];
        size_t got = 0;
        int n = aptus_dt_iov_some(&x->vc, run, IO_IOV, until - x->done, &got);
        if (n <= 0)
            break;
        for (int i = 0; i < n && !x->err && !eof; i++) {
            MPI_Offset off = (MPI_Offset)((uintptr_t)run[i].iov_base - IO_BIAS);
            size_t left = run[i].iov_len;
            while (left) {
                ssize_t r = move_some(f, x->write, &x->mc, off, left);
                if (r < 0) {
                    x->err = errno ? errno : EIO;
                    break;
                }
                if (r == 0) { /* reading at the end of the file */
                    if (x->write)
                        x->err = EIO;
                    eof = 1;
                    break;
                }
                off += r;
                left -= (size_t)r;
                x->done += (size_t)r;
            }
        }
    }
    if (x->err || eof || x->done >= x->total)
        xfer_end(x);
    return x->finished;
}

int aptus_io_access(struct aptus_file *f, int write, MPI_Offset pos, void *buf, size_t count,
                    const struct aptus_dtype *dt, size_t *done)
{
    struct aptus_io_xfer x;
    aptus_io_xfer_start(&x, f, write, pos, buf, count, dt);
    aptus_io_xfer_step(&x, 0);
    *done = x.done;
    return x.err;
}
