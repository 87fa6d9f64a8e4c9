/* Collective data access (MPI_File_read_all, MPI_File_write_at_all, ...): two-phase I/O.
 *
 * When the ranks' byte ranges in the file interleave (a subarray of a 3-D array over four ranks
 * gives each rank thousands of short runs between the others'), each rank writing its own runs
 * would make one system call per run. Instead the range all ranks touch is cut into one file
 * domain per rank (every rank of the file is an aggregator, aligned to 4 KiB or the
 * "striping_unit" hint), each domain into rounds of at most the collective buffer
 * ("cb_buffer_size", 16 MiB split over the aggregators by default); in each round every rank
 * sends each aggregator the runs of its data that fall in that aggregator's window (offsets and
 * lengths, then the bytes, by MPI_Alltoallv), and the aggregator writes the window's span with one
 * pwrite -- reading it first where the pieces leave holes (data sieving), so that no byte it does
 * not own changes. Reading is the same the other way: the aggregators read the spans the ranks ask
 * for and send each rank its pieces. Which runs fall in a window comes from the view cursor: the
 * stream bytes below a file offset (aptus_io_view_bytes_below) bound them, lazily, never a list of
 * all runs. When no ranges interleave, every rank does its own access (the shortcut). Every rank
 * takes part in every round, those with nothing to move (count 0) included. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "io/io.h"

#define IO_ALIGN_DEFAULT 4096
#define IO_CB_DEFAULT    ((MPI_Offset)16 << 20)
#define IO_CB_MIN        ((MPI_Offset)4096)

/* The hint "collective_buffering" (true unless the program said false). */
static int buffering(const struct aptus_file *f)
{
    char v[16];
    int len = (int)sizeof v - 1, flag = 0;
    if (f->info == MPI_INFO_NULL ||
        PMPI_Info_get_string(f->info, "collective_buffering", &len, v, &flag) != MPI_SUCCESS || !flag)
        return 1;
    return strcmp(v, "false") != 0;
}

/* A growing array of bytes. */
struct buf {
    unsigned char *p;
    size_t len, cap;
};

static int buf_room(struct buf *b, size_t more)
{
    if (b->len + more <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + more)
        cap *= 2;
    unsigned char *p = realloc(b->p, cap);
    if (!p)
        return ENOMEM;
    b->p = p;
    b->cap = cap;
    return 0;
}

/* This rank's part of the file window [a, b): the stream range [*s0, *s1) of its access (stream
 * bytes pos .. pos + bytes) that lies there, its runs appended to meta as (offset, length) pairs,
 * and, writing, its bytes appended to data from the memory cursor. */
static int collect(const struct aptus_file *f, MPI_Offset pos, MPI_Offset bytes, struct aptus_dt_cursor *mc,
                   MPI_Offset a, MPI_Offset b, int write, struct buf *meta, struct buf *data, MPI_Offset *s0,
                   MPI_Offset *s1)
{
    MPI_Offset lo = aptus_io_view_bytes_below(f, a), hi = aptus_io_view_bytes_below(f, b);
    *s0 = lo > pos ? lo : pos;
    *s1 = hi < pos + bytes ? hi : pos + bytes;
    if (*s0 >= *s1) {
        *s0 = *s1 = 0; /* nothing there */
        return 0;
    }
    struct aptus_dt_cursor vc;
    aptus_io_view_start(&vc, f, *s0, *s1 - *s0);
    MPI_Offset left = *s1 - *s0;
    while (left > 0) {
        struct iovec run[64];
        size_t got = 0;
        int n = aptus_dt_iov_some(&vc, run, 64, (size_t)left, &got);
        if (n <= 0)
            break;
        if (buf_room(meta, (size_t)n * 2 * sizeof(MPI_Offset)))
            return ENOMEM;
        for (int i = 0; i < n; i++) {
            MPI_Offset pair[2] = { (MPI_Offset)((uintptr_t)run[i].iov_base - APTUS_IO_BIAS),
                                   (MPI_Offset)run[i].iov_len };
            memcpy(meta->p + meta->len, pair, sizeof pair);
            meta->len += sizeof pair;
        }
        left -= (MPI_Offset)got;
    }
    if (write) {
        size_t n = (size_t)(*s1 - *s0);
        if (buf_room(data, n))
            return ENOMEM;
        aptus_dt_cursor_seek(mc, (size_t)(*s0 - pos));
        aptus_dt_pack_some(mc, data->p + data->len, n);
        data->len += n;
    }
    return 0;
}

/* The first and last+1 file byte of stream bytes [pos, pos + bytes) (bytes > 0). */
static void extent_of(const struct aptus_file *f, MPI_Offset pos, MPI_Offset bytes, MPI_Offset *lo, MPI_Offset *hi)
{
    *lo = aptus_io_byte_offset(f, pos);
    *hi = aptus_io_byte_offset(f, pos + bytes - 1) + 1;
}

/* Whether any rank's `failed` is set (every rank learns it). */
static int agree_failed(const struct aptus_file *f, int failed)
{
    int any = failed;
    PMPI_Allreduce(MPI_IN_PLACE, &any, 1, MPI_INT, MPI_MAX, f->comm);
    return any;
}

static int cmp_range(const void *x, const void *y)
{
    const MPI_Offset *a = x, *b = y;
    return a[0] < b[0] ? -1 : a[0] > b[0];
}

int aptus_io_coll(struct aptus_file *f, int write, MPI_Offset pos, void *ubuf, size_t count,
                  const struct aptus_dtype *dt, size_t *done)
{
    int nproc, err = 0;
    PMPI_Comm_size(f->comm, &nproc);
    MPI_Offset bytes = (MPI_Offset)(count * dt->size);
    MPI_Offset mine[3] = { 0, 0, bytes }; /* lo, hi, bytes */
    if (bytes > 0)
        extent_of(f, pos, bytes, &mine[0], &mine[1]);
    MPI_Offset *all = malloc(sizeof(MPI_Offset) * 3 * (size_t)nproc);
    int *cnt = calloc((size_t)nproc * 10, sizeof(int));
    MPI_Offset *range = calloc((size_t)nproc * 2, sizeof(MPI_Offset));
    if (agree_failed(f, !all || !cnt || !range)) {
        free(all);
        free(cnt);
        free(range);
        return ENOMEM;
    }
    PMPI_Allgather(mine, 3, MPI_OFFSET, all, 3, MPI_OFFSET, f->comm);
    /* the ranges with data, sorted: two-phase only when one starts before the previous ends */
    MPI_Offset L = -1, H = -1;
    int n = 0, interleave = 0, dense = 1;
    for (int r = 0; r < nproc; r++) {
        if (all[3 * r + 2] <= 0)
            continue;
        dense &= all[3 * r + 2] * 2 >= all[3 * r + 1] - all[3 * r];
        all[2 * n] = all[3 * r];
        all[2 * n + 1] = all[3 * r + 1];
        n++;
    }
    qsort(all, (size_t)n, 2 * sizeof(MPI_Offset), cmp_range);
    for (int i = 0; i < n; i++) {
        if (i > 0 && all[2 * i] < all[2 * i - 1])
            interleave = 1;
        if (i > 0 && all[2 * i + 1] < all[2 * i - 1])
            all[2 * i + 1] = all[2 * i - 1]; /* keep the running end */
        L = L < 0 || all[2 * i] < L ? all[2 * i] : L;
        H = all[2 * i + 1] > H ? all[2 * i + 1] : H;
    }
    free(all);
    /* reading, when every rank's data is at least half of its range: each rank reads its own
     * (sieved: at most twice its bytes, from the file system's cache on one node) rather than
     * have them exchanged */
    if (!interleave || nproc == 1 || f->atomic || !buffering(f) || (!write && dense)) {
        free(cnt);
        free(range);
        *done = 0;
        return bytes > 0 ? aptus_io_access(f, write, pos, ubuf, count, dt, done) : 0;
    }

    /* file domains and rounds: the same numbers on every rank */
    MPI_Offset align = aptus_io_hint(f, "striping_unit", IO_ALIGN_DEFAULT);
    MPI_Offset cb = aptus_io_hint(f, "cb_buffer_size", IO_CB_DEFAULT) / nproc;
    if (cb < IO_CB_MIN)
        cb = IO_CB_MIN;
    MPI_Offset base = L / align * align;
    MPI_Offset dom = ((H - base + nproc - 1) / nproc + align - 1) / align * align;
    MPI_Offset rounds = (dom + cb - 1) / cb;

    /* the valid bytes of a read: what lies below the end of the file */
    MPI_Offset valid = bytes;
    if (!write && bytes > 0) {
        struct stat sb;
        MPI_Offset below = aptus_io_view_bytes_below(f, fstat(f->fd, &sb) == 0 ? (MPI_Offset)sb.st_size : 0);
        valid = below - pos < bytes ? (below - pos > 0 ? below - pos : 0) : bytes;
    }

    struct aptus_dt_cursor mc;
    aptus_dt_cursor_init(&mc, ubuf, count, dt);
    struct buf meta = { 0 }, data = { 0 }, rmeta = { 0 }, rdata = { 0 }, span = { 0 };
    int *pair_s = cnt + 8 * nproc; /* (pieces, bytes) per aggregator; pair_r: the same received */
    int *pair_r = malloc(sizeof(int) * 2 * (size_t)nproc);
    if (agree_failed(f, !pair_r))
        rounds = 0, err = ENOMEM;
    int *scm = cnt, *sdm = cnt + nproc, *scd = cnt + 2 * nproc, *sdd = cnt + 3 * nproc;
    int *rcm = cnt + 4 * nproc, *rdm = cnt + 5 * nproc, *rcd = cnt + 6 * nproc, *rdd = cnt + 7 * nproc;
    for (MPI_Offset r = 0; r < rounds; r++) {
        /* what this rank has in each aggregator's window this round */
        meta.len = data.len = 0;
        for (int d = 0; d < nproc; d++) {
            MPI_Offset a = base + d * dom + r * cb, b = a + cb;
            if (b > base + (d + 1) * dom)
                b = base + (d + 1) * dom;
            size_t m0 = meta.len, d0 = data.len;
            range[2 * d] = range[2 * d + 1] = 0;
            if (!err && bytes > 0 && a < b)
                err = collect(f, pos, bytes, &mc, a, b, write, &meta, &data, &range[2 * d], &range[2 * d + 1]);
            scm[d] = (int)((meta.len - m0) / sizeof(MPI_Offset));
            sdm[d] = (int)(m0 / sizeof(MPI_Offset));
            scd[d] = (int)(data.len - d0);
            sdd[d] = (int)d0;
            if (!write) /* a reader is sent the bytes of its pieces back */
                scd[d] = (int)(range[2 * d + 1] - range[2 * d]);
        }
        if (agree_failed(f, err != 0))
            break;
        /* counts: pieces (as MPI_Offsets) and bytes, per aggregator */
        for (int d = 0; d < nproc; d++) {
            pair_s[2 * d] = scm[d];
            pair_s[2 * d + 1] = scd[d];
        }
        PMPI_Alltoall(pair_s, 2, MPI_INT, pair_r, 2, MPI_INT, f->comm);
        size_t rm = 0, rd = 0, want = 0;
        for (int d = 0; d < nproc; d++) {
            rcm[d] = pair_r[2 * d];
            rcd[d] = pair_r[2 * d + 1];
            rdm[d] = (int)rm;
            rdd[d] = (int)rd;
            rm += (size_t)rcm[d];
            rd += (size_t)rcd[d];
            want += (size_t)scd[d];
        }
        rmeta.len = 0;
        if (buf_room(&rmeta, rm * sizeof(MPI_Offset)) || buf_room(&rdata, rd) || (!write && buf_room(&data, want)))
            err = ENOMEM;
        if (agree_failed(f, err != 0))
            break;
        rmeta.len = 0;
        if (buf_room(&rmeta, rm * sizeof(MPI_Offset)) || buf_room(&rdata, rd))
            err = ENOMEM; /* (the exchange still runs, with what fits: counts were agreed) */
        PMPI_Alltoallv(meta.p, scm, sdm, MPI_OFFSET, rmeta.p, rcm, rdm, MPI_OFFSET, f->comm);
        const MPI_Offset *pc = (const MPI_Offset *)rmeta.p;
        size_t npc = rm / 2;
        /* the span of this aggregator's window the pieces touch */
        MPI_Offset slo = -1, shi = -1, covered = 0;
        for (size_t i = 0; i < npc; i++) {
            slo = slo < 0 || pc[2 * i] < slo ? pc[2 * i] : slo;
            shi = pc[2 * i] + pc[2 * i + 1] > shi ? pc[2 * i] + pc[2 * i + 1] : shi;
            covered += pc[2 * i + 1];
        }
        if (npc && buf_room(&span, (size_t)(shi - slo)))
            err = ENOMEM; /* (the exchange still runs: it needs no more memory) */
        if (write) {
            PMPI_Alltoallv(data.p, scd, sdd, MPI_BYTE, rdata.p, rcd, rdd, MPI_BYTE, f->comm);
            if (npc && !err) {
                int sieve = covered == shi - slo ? 0 : aptus_io_pread_full(f->fd, span.p, (size_t)(shi - slo), slo);
                size_t at = 0;
                if (sieve == EBADF) { /* holes in a file that cannot be read: piece by piece */
                    for (size_t i = 0; i < npc && !err; i++) {
                        err = aptus_io_pwrite_full(f->fd, rdata.p + at, (size_t)pc[2 * i + 1], pc[2 * i]);
                        at += (size_t)pc[2 * i + 1];
                    }
                } else {
                    err = sieve; /* holes: what the file holds there is kept */
                    for (size_t i = 0; i < npc && !err; i++) {
                        memcpy(span.p + (pc[2 * i] - slo), rdata.p + at, (size_t)pc[2 * i + 1]);
                        at += (size_t)pc[2 * i + 1];
                    }
                    if (!err)
                        err = aptus_io_pwrite_full(f->fd, span.p, (size_t)(shi - slo), slo);
                }
            }
        } else {
            /* the aggregator reads its span and sends each rank its pieces, in their order */
            if (npc && !err)
                err = aptus_io_pread_full(f->fd, span.p, (size_t)(shi - slo), slo);
            size_t at = 0;
            for (size_t i = 0; i < npc && !err; i++) {
                memcpy(rdata.p + at, span.p + (pc[2 * i] - slo), (size_t)pc[2 * i + 1]);
                at += (size_t)pc[2 * i + 1];
            }
            /* rcd/rdd (what this aggregator sends) and scd/sdd (what this rank receives) */
            size_t off = 0;
            for (int d = 0; d < nproc; d++) {
                sdd[d] = (int)off;
                off += (size_t)scd[d];
            }
            PMPI_Alltoallv(rdata.p, rcd, rdd, MPI_BYTE, data.p, scd, sdd, MPI_BYTE, f->comm);
            for (int d = 0; d < nproc && !err; d++) {
                MPI_Offset s0 = range[2 * d], s1 = range[2 * d + 1];
                if (s1 > pos + valid)
                    s1 = pos + valid;
                if (s0 >= s1)
                    continue;
                aptus_dt_cursor_seek(&mc, (size_t)(s0 - pos));
                aptus_dt_unpack_some(&mc, data.p + sdd[d], (size_t)(s1 - s0));
            }
        }
    }
    free(meta.p);
    free(data.p);
    free(rmeta.p);
    free(rdata.p);
    free(span.p);
    free(cnt);
    free(range);
    free(pair_r);
    /* one failure fails the call on every rank */
    int any = err;
    PMPI_Allreduce(MPI_IN_PLACE, &any, 1, MPI_INT, MPI_MAX, f->comm);
    *done = any ? 0 : (size_t)valid;
    return err ? err : any ? EIO : 0;
}
