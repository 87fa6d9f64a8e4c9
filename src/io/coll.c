/* Collective data access (MPI_File_read_all, MPI_File_write_at_all, ...): two-phase I/O.
 *
 * When the ranks' byte ranges in the file interleave (a subarray of a 3-D array over four ranks
 * gives each rank thousands of short runs between the others'), each rank writing its own runs
 * would make one system call per run. Instead the range all ranks touch is cut into one file
 * domain per aggregator (every rank of the file by default, "cb_nodes" of them spread over the
 * ranks when the program says so; aligned to 4 KiB or the "striping_unit" hint), each domain
 * into rounds of at most the collective buffer
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
#include <sys/uio.h>
#include <unistd.h>

#include "io/io.h"
#include "pt2pt/pt2pt.h"
#include "runtime/progress.h"

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

static int cmp_range(const void *x, const void *y)
{
    const MPI_Offset *a = x, *b = y;
    return a[0] < b[0] ? -1 : a[0] > b[0];
}

/* ---- the collective access as a state machine ----
 * Every collective step is a nonblocking collective on the file's communicator; a step of the
 * machine runs until it has to wait for one (aptus_io_coll_step). The blocking forms drive it to
 * its end at once, the nonblocking ones (MPI_File_iwrite_all, ...) from the progress engine. A
 * file runs its collective accesses one after the other, in the order they were started (the
 * same on every rank), so their collectives match. */
enum {
    PH_GATHER,  /* the ranks' ranges */
    PH_DECIDE,  /* two-phase or each rank its own */
    PH_SHORT,   /* each rank its own access (the shortcut) */
    PH_ALLOCED, /* every rank has its memory */
    PH_ROUND,   /* a round: this rank's pieces per aggregator */
    PH_COUNTS,  /* ... their counts exchanged */
    PH_ROOM,    /* ... every rank has room for what comes */
    PH_META,    /* ... the pieces (offset, length) exchanged */
    PH_SPAN,    /* ... the aggregator's span; the bytes exchanged */
    PH_WRITE,   /* ... the aggregator writes its span */
    PH_UNPACK,  /* ... a reader unpacks what its aggregators sent */
    PH_FINAL,   /* one failure fails the call on every rank */
    PH_END
};

struct aptus_io_coll {
    struct aptus_file *f;
    int write, nproc, phase, err, flag, any;
    MPI_Offset pos, bytes, valid;
    void *ubuf;
    size_t count, done;
    const struct aptus_dtype *dt;
    MPI_Request req; /* the collective step under way */
    MPI_Offset mine[3], *all, *range;
    int *cnt, *pair_r, *agg; /* agg[rank]: its aggregator number, or -1 */
    MPI_Offset base, dom, cb, rounds, r, slo, shi, covered;
    size_t npc;
    struct aptus_dt_cursor mc;
    struct buf meta, data, rmeta, rdata, span;
    struct aptus_io_xfer x;
};

struct aptus_io_coll *aptus_io_coll_start(struct aptus_file *f, int write, MPI_Offset pos, void *buf, size_t count,
                                          const struct aptus_dtype *dt)
{
    struct aptus_io_coll *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->f = f;
    c->write = write;
    c->pos = pos;
    c->ubuf = buf;
    c->count = count;
    c->dt = dt;
    c->req = MPI_REQUEST_NULL;
    PMPI_Comm_size(f->comm, &c->nproc);
    c->bytes = (MPI_Offset)(count * dt->size);
    c->mine[2] = c->bytes; /* lo, hi, bytes */
    if (c->bytes > 0)
        extent_of(f, pos, c->bytes, &c->mine[0], &c->mine[1]);
    size_t np = (size_t)c->nproc;
    c->all = malloc(sizeof(MPI_Offset) * 3 * np);
    c->cnt = calloc(np * 10, sizeof(int));
    c->range = calloc(np * 2, sizeof(MPI_Offset));
    c->pair_r = malloc(sizeof(int) * 2 * np);
    c->agg = malloc(sizeof(int) * np);
    c->flag = !c->all || !c->cnt || !c->range || !c->pair_r || !c->agg;
    c->phase = PH_GATHER;
    return c;
}

/* Ends a collective step started by the state machine: whether it has completed (its error in
 * *err). A background task must not drive progress itself: the request's own flag is read. */
static int step_done(struct aptus_io_coll *c)
{
    if (c->req == MPI_REQUEST_NULL)
        return 1;
    struct aptus_request *r = (struct aptus_request *)c->req;
    if (!__atomic_load_n(&r->complete, __ATOMIC_ACQUIRE))
        return 0;
    if (r->st_error && !c->err)
        c->err = EIO;
    PMPI_Request_free(&c->req);
    return 1;
}

/* Whether any rank's flag is set, as a step (every rank learns it in c->flag). */
static void agree(struct aptus_io_coll *c, int flag)
{
    c->flag = flag;
    PMPI_Iallreduce(MPI_IN_PLACE, &c->flag, 1, MPI_INT, MPI_MAX, c->f->comm, &c->req);
}

/* This rank's pieces in each aggregator's window of round c->r, and the exchange of their counts. */
static void round_collect(struct aptus_io_coll *c)
{
    struct aptus_file *f = c->f;
    int nproc = c->nproc;
    int *scm = c->cnt, *sdm = c->cnt + nproc, *scd = c->cnt + 2 * nproc, *sdd = c->cnt + 3 * nproc;
    c->meta.len = c->data.len = 0;
    for (int d = 0; d < nproc; d++) {
        int j = c->agg[d]; /* aggregator j, or none */
        MPI_Offset a = 0, b = 0;
        if (j >= 0) {
            a = c->base + j * c->dom + c->r * c->cb;
            b = a + c->cb < c->base + (j + 1) * c->dom ? a + c->cb : c->base + (j + 1) * c->dom;
        }
        size_t m0 = c->meta.len, d0 = c->data.len;
        c->range[2 * d] = c->range[2 * d + 1] = 0;
        if (!c->err && c->bytes > 0 && a < b)
            c->err = collect(f, c->pos, c->bytes, &c->mc, a, b, c->write, &c->meta, &c->data, &c->range[2 * d],
                             &c->range[2 * d + 1]);
        scm[d] = (int)((c->meta.len - m0) / sizeof(MPI_Offset));
        sdm[d] = (int)(m0 / sizeof(MPI_Offset));
        scd[d] = (int)(c->data.len - d0);
        sdd[d] = (int)d0;
        if (!c->write) /* a reader is sent the bytes of its pieces back */
            scd[d] = (int)(c->range[2 * d + 1] - c->range[2 * d]);
    }
}

int aptus_io_coll_step(struct aptus_io_coll *c, size_t budget)
{
    struct aptus_file *f = c->f;
    int nproc = c->nproc;
    int *scm = c->cnt, *sdm = c->cnt + nproc, *scd = c->cnt + 2 * nproc, *sdd = c->cnt + 3 * nproc;
    int *rcm = c->cnt + 4 * nproc, *rdm = c->cnt + 5 * nproc, *rcd = c->cnt + 6 * nproc, *rdd = c->cnt + 7 * nproc;
    int *pair_s = c->cnt + 8 * nproc; /* (pieces, bytes) per aggregator; pair_r: the same received */
    for (;;) {
        if (!step_done(c))
            return 0;
        switch (c->phase) {
        case PH_GATHER:
            if (c->flag) { /* no memory: this rank cannot take part (nor tell the others) */
                c->err = ENOMEM;
                c->phase = PH_END;
                break;
            }
            PMPI_Iallgather(c->mine, 3, MPI_OFFSET, c->all, 3, MPI_OFFSET, f->comm, &c->req);
            c->phase = PH_DECIDE;
            break;
        case PH_DECIDE: {
            /* the ranges with data, sorted: two-phase only when one starts before the previous ends */
            MPI_Offset *all = c->all, L = -1, H = -1;
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
            /* reading, when every rank's data is at least half of its range: each rank reads its
             * own (sieved: at most twice its bytes, from the file system's cache on one node)
             * rather than have them exchanged */
            if (c->err || !interleave || nproc == 1 || f->atomic || !buffering(f) || (!c->write && dense)) {
                aptus_io_xfer_start(&c->x, f, c->write, c->pos, c->ubuf, c->err ? 0 : c->count, c->dt);
                c->phase = PH_SHORT;
                break;
            }
            /* file domains and rounds: the same numbers on every rank */
            MPI_Offset align = aptus_io_hint(f, "striping_unit", IO_ALIGN_DEFAULT);
            int naggr = aptus_io_aggregators(f);
            for (int d = 0; d < nproc; d++)
                c->agg[d] = -1;
            for (int j = 0; j < naggr; j++) /* spread over the ranks */
                c->agg[(int)((long)j * nproc / naggr)] = j;
            c->cb = aptus_io_hint(f, "cb_buffer_size", IO_CB_DEFAULT) / naggr;
            if (c->cb < IO_CB_MIN)
                c->cb = IO_CB_MIN;
            c->base = L / align * align;
            c->dom = ((H - c->base + naggr - 1) / naggr + align - 1) / align * align;
            c->rounds = (c->dom + c->cb - 1) / c->cb;
            /* the valid bytes of a read: what lies below the end of the file */
            c->valid = c->bytes;
            if (!c->write && c->bytes > 0) {
                MPI_Offset end = 0;
                f->drv->size(f->fd, &end);
                MPI_Offset below = aptus_io_view_bytes_below(f, end);
                c->valid = below - c->pos < c->bytes ? (below - c->pos > 0 ? below - c->pos : 0) : c->bytes;
            }
            aptus_dt_cursor_init(&c->mc, c->ubuf, c->count, c->dt);
            c->r = 0;
            c->phase = PH_ROUND;
            break;
        }
        case PH_SHORT:
            if (!aptus_io_xfer_step(&c->x, budget))
                return 0;
            c->done = c->x.done;
            c->err = c->x.err;
            c->phase = PH_END;
            return 1;
        case PH_ROUND:
            if (c->r == c->rounds) {
                c->phase = PH_FINAL;
                break;
            }
            round_collect(c);
            agree(c, c->err != 0);
            c->phase = PH_COUNTS;
            break;
        case PH_COUNTS:
            if (c->flag) {
                c->phase = PH_FINAL;
                break;
            }
            for (int d = 0; d < nproc; d++) {
                pair_s[2 * d] = scm[d];
                pair_s[2 * d + 1] = scd[d];
            }
            PMPI_Ialltoall(pair_s, 2, MPI_INT, c->pair_r, 2, MPI_INT, f->comm, &c->req);
            c->phase = PH_ROOM;
            break;
        case PH_ROOM: {
            size_t rm = 0, rd = 0, want = 0;
            for (int d = 0; d < nproc; d++) {
                rcm[d] = c->pair_r[2 * d];
                rcd[d] = c->pair_r[2 * d + 1];
                rdm[d] = (int)rm;
                rdd[d] = (int)rd;
                rm += (size_t)rcm[d];
                rd += (size_t)rcd[d];
                want += (size_t)scd[d];
            }
            c->rmeta.len = 0;
            c->npc = rm / 2;
            if (buf_room(&c->rmeta, rm * sizeof(MPI_Offset)) || buf_room(&c->rdata, rd) ||
                (!c->write && buf_room(&c->data, want)))
                c->err = ENOMEM;
            agree(c, c->err != 0);
            c->phase = PH_META;
            break;
        }
        case PH_META:
            if (c->flag) {
                c->phase = PH_FINAL;
                break;
            }
            PMPI_Ialltoallv(c->meta.p, scm, sdm, MPI_OFFSET, c->rmeta.p, rcm, rdm, MPI_OFFSET, f->comm, &c->req);
            c->phase = PH_SPAN;
            break;
        case PH_SPAN: {
            const MPI_Offset *pc = (const MPI_Offset *)c->rmeta.p;
            /* the span of this aggregator's window the pieces touch */
            c->slo = c->shi = -1;
            c->covered = 0;
            for (size_t i = 0; i < c->npc; i++) {
                c->slo = c->slo < 0 || pc[2 * i] < c->slo ? pc[2 * i] : c->slo;
                c->shi = pc[2 * i] + pc[2 * i + 1] > c->shi ? pc[2 * i] + pc[2 * i + 1] : c->shi;
                c->covered += pc[2 * i + 1];
            }
            c->span.len = 0;
            if (c->npc && buf_room(&c->span, (size_t)(c->shi - c->slo)))
                c->err = ENOMEM; /* (the exchange still runs: it needs no more memory) */
            if (c->write) {
                PMPI_Ialltoallv(c->data.p, scd, sdd, MPI_BYTE, c->rdata.p, rcd, rdd, MPI_BYTE, f->comm, &c->req);
                c->phase = PH_WRITE;
                break;
            }
            /* the aggregator reads its span and sends each rank its pieces, in their order */
            if (c->npc && !c->err)
                c->err = aptus_io_pread_full(f, c->span.p, (size_t)(c->shi - c->slo), c->slo);
            size_t at = 0;
            for (size_t i = 0; i < c->npc && !c->err; i++) {
                memcpy(c->rdata.p + at, c->span.p + (pc[2 * i] - c->slo), (size_t)pc[2 * i + 1]);
                at += (size_t)pc[2 * i + 1];
            }
            /* rcd/rdd (what this aggregator sends) and scd/sdd (what this rank receives) */
            size_t off = 0;
            for (int d = 0; d < nproc; d++) {
                sdd[d] = (int)off;
                off += (size_t)scd[d];
            }
            PMPI_Ialltoallv(c->rdata.p, rcd, rdd, MPI_BYTE, c->data.p, scd, sdd, MPI_BYTE, f->comm, &c->req);
            c->phase = PH_UNPACK;
            break;
        }
        case PH_WRITE: {
            const MPI_Offset *pc = (const MPI_Offset *)c->rmeta.p;
            if (c->npc && !c->err) {
                int sieve = c->covered == c->shi - c->slo
                                ? 0
                                : aptus_io_pread_full(f, c->span.p, (size_t)(c->shi - c->slo), c->slo);
                size_t at = 0;
                if (sieve == EBADF) { /* holes in a file that cannot be read: piece by piece */
                    for (size_t i = 0; i < c->npc && !c->err; i++) {
                        c->err = aptus_io_pwrite_full(f, c->rdata.p + at, (size_t)pc[2 * i + 1], pc[2 * i]);
                        at += (size_t)pc[2 * i + 1];
                    }
                } else {
                    c->err = sieve; /* holes: what the file holds there is kept */
                    for (size_t i = 0; i < c->npc && !c->err; i++) {
                        memcpy(c->span.p + (pc[2 * i] - c->slo), c->rdata.p + at, (size_t)pc[2 * i + 1]);
                        at += (size_t)pc[2 * i + 1];
                    }
                    if (!c->err)
                        c->err = aptus_io_pwrite_full(f, c->span.p, (size_t)(c->shi - c->slo), c->slo);
                }
            }
            c->r++;
            c->phase = PH_ROUND;
            break;
        }
        case PH_UNPACK:
            for (int d = 0; d < nproc && !c->err; d++) {
                MPI_Offset s0 = c->range[2 * d], s1 = c->range[2 * d + 1];
                if (s1 > c->pos + c->valid)
                    s1 = c->pos + c->valid;
                if (s0 >= s1)
                    continue;
                aptus_dt_cursor_seek(&c->mc, (size_t)(s0 - c->pos));
                aptus_dt_unpack_some(&c->mc, c->data.p + sdd[d], (size_t)(s1 - s0));
            }
            c->r++;
            c->phase = PH_ROUND;
            break;
        case PH_FINAL:
            c->any = c->err;
            PMPI_Iallreduce(MPI_IN_PLACE, &c->any, 1, MPI_INT, MPI_MAX, f->comm, &c->req);
            c->phase = PH_END;
            break;
        default: /* PH_END after the two-phase rounds */
            c->done = c->any ? 0 : (size_t)c->valid;
            if (!c->err && c->any)
                c->err = EIO;
            return 1;
        }
    }
}

int aptus_io_coll_end(struct aptus_io_coll *c, size_t *done)
{
    int err = c->err;
    *done = c->done;
    free(c->meta.p);
    free(c->data.p);
    free(c->rmeta.p);
    free(c->rdata.p);
    free(c->span.p);
    free(c->all);
    free(c->cnt);
    free(c->range);
    free(c->pair_r);
    free(c->agg);
    free(c);
    return err;
}

int aptus_io_aggregators(const struct aptus_file *f)
{
    int nproc = 1;
    PMPI_Comm_size(f->comm, &nproc);
    MPI_Offset n = aptus_io_hint(f, "cb_nodes", nproc);
    return n < nproc ? (int)n : nproc;
}

int aptus_io_coll(struct aptus_file *f, int write, MPI_Offset pos, void *ubuf, size_t count,
                  const struct aptus_dtype *dt, size_t *done)
{
    *done = 0;
    aptus_io_drain(f); /* the file's nonblocking accesses first: collectives in the order started */
    struct aptus_io_coll *c = aptus_io_coll_start(f, write, pos, ubuf, count, dt);
    if (!c)
        return ENOMEM;
    unsigned idle = 0;
    while (!aptus_io_coll_step(c, 0))
        aptus_wait_step(&idle);
    return aptus_io_coll_end(c, done);
}
