/* Collective data access (MPI_File_read_all, MPI_File_write_at_all, ...): two-phase I/O.
 *
 * When the ranks' byte ranges in the file interleave (a subarray of a 3-D array over four ranks
 * gives each rank thousands of short runs between the others'), each rank writing its own runs
 * would make one system call per run. Instead the range all ranks touch is cut into one file
 * domain per aggregator (every rank of the file by default, "cb_nodes" of them spread over the
 * ranks when the program says so; aligned to 4 KiB or the "striping_unit" hint), each domain
 * into rounds of at most an aggregator's collective buffer ("cb_buffer_size", 1 MiB by
 * default; two of them, see double buffering below); in each round every rank sends each
 * aggregator the runs of its data that fall in that aggregator's window (offsets and lengths by
 * MPI_Alltoallv, then the bytes), and the aggregator writes the window's span with one pwrite --
 * reading it first where the pieces leave holes (data sieving), so that no byte it does not own
 * changes. Reading is the same the other way: the aggregators read the spans the ranks ask
 * for and send each rank its pieces. Which runs fall in a window comes from the view cursor: the
 * stream bytes below a file offset (aptus_io_view_bytes_below) bound them, lazily, never a list of
 * all runs. When no ranges interleave, every rank does its own access (the shortcut). Every rank
 * takes part in every round, those with nothing to move (count 0) included. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "io/io.h"
#include "pt2pt/pt2pt.h"
#include "runtime/progress.h"

#define IO_ALIGN_DEFAULT 4096
#define IO_CB_DEFAULT    ((MPI_Offset)1 << 20) /* measured: docs/BENCHMARKS.md, "MPI-IO, third part" */
#define IO_CB_MIN        ((MPI_Offset)4096)
#define IO_CB_MAX        ((MPI_Offset)1 << 30) /* (a message's count is an int) */

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

/* The span buffers of the last collective access are kept for the next (their pages are in
 * memory by then: a fresh buffer costs a page fault per 4 KiB), two per process of at most
 * cb_buffer_size each. */
static struct buf span_kept[2];
static pthread_mutex_t span_lock = PTHREAD_MUTEX_INITIALIZER;

static void span_take(struct buf *b)
{
    pthread_mutex_lock(&span_lock);
    for (int i = 0; i < 2 && !b->p; i++) {
        *b = span_kept[i];
        span_kept[i] = (struct buf){ 0 };
    }
    pthread_mutex_unlock(&span_lock);
}

static void span_give(struct buf *b)
{
    if (!b->p)
        return;
    pthread_mutex_lock(&span_lock);
    for (int i = 0; i < 2; i++)
        if (span_kept[i].cap < b->cap) {
            struct buf old = span_kept[i];
            span_kept[i] = *b;
            *b = old;
        }
    pthread_mutex_unlock(&span_lock);
    free(b->p);
}

/* This rank's part of the file window [a, b): the stream range [*s0, *s1) of its access (stream
 * bytes pos .. pos + bytes) that lies there, its runs appended to meta as (offset, length) pairs,
 * and, when pack is set, its bytes appended to data from the memory cursor. */
static int collect(const struct aptus_file *f, MPI_Offset pos, MPI_Offset bytes, struct aptus_dt_cursor *mc,
                   MPI_Offset a, MPI_Offset b, int pack, struct buf *meta, struct buf *data, MPI_Offset *s0,
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
    if (pack) {
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
 * same on every rank), so their collectives match.
 *
 * The bytes themselves move by point-to-point messages on the file's communicator (its own
 * context: nothing else of the file uses point-to-point), one per rank and aggregator a round,
 * each described on the aggregator's side by a datatype of its pieces in the span buffer: the
 * message layer places them straight where the file wants them (on a node, one Cross Memory
 * Attach copy from the writer's memory into the aggregator's buffer, which pwrite then takes),
 * and a writer whose memory is contiguous sends from it without packing.
 *
 * Double buffering: the rounds alternate between two slots (pieces, messages, span buffer), and
 * round r + 1 is agreed on and its messages started before round r's span is written, so that
 * its bytes move while this and the other aggregators write (ext4 lets one writer of a file in
 * at a time: the others' cores are free to copy meanwhile). */
#define IO_TAG 1

enum {
    PH_GATHER, /* the ranks' ranges */
    PH_DECIDE, /* two-phase or each rank its own */
    PH_SHORT,  /* each rank its own access (the shortcut) */
    PH_ROUND,  /* round q: this rank's pieces per aggregator, their counts exchanged */
    PH_ROOM,   /* ... every rank has room for what comes */
    PH_META,   /* ... the pieces (offset, length) exchanged */
    PH_SPAN,   /* ... the aggregator's span; round q's bytes start moving */
    PH_WRITE,  /* round q - 1's bytes have moved: the aggregator writes its span, a reader unpacks */
    PH_FINAL,  /* every message over, */
    PH_AGREE,  /* ... one failure fails the call on every rank */
    PH_END
};

/* What one round needs until its bytes are written (or unpacked). */
struct slot {
    int *cnt;          /* scm, sdm, scd, sdd, rcm, rdm, pair_s (3 per rank), pair_r (3 per rank) */
    MPI_Offset *range; /* the stream range of this rank's bytes per aggregator */
    MPI_Aint *src;     /* writing: where this rank's bytes for each aggregator start */
    MPI_Request *xr;   /* the round's messages (2 per rank at most) */
    int nx, piecewise;
    size_t npc;
    MPI_Offset slo, shi, covered;
    struct buf meta, data, rmeta, span;
};

struct aptus_io_coll {
    struct aptus_file *f;
    int write, nproc, phase, err, flag, any, me, wait; /* wait: the slots whose messages must be over */
    MPI_Offset pos, bytes, valid;
    void *ubuf;
    size_t count, done;
    const struct aptus_dtype *dt;
    MPI_Request req; /* the collective step under way */
    MPI_Offset mine[3], *all;
    int *agg; /* agg[rank]: its aggregator number, or -1 */
    MPI_Offset base, dom, cb, rounds, q;
    struct aptus_dt_cursor mc;
    struct slot s[2];
    struct buf lens, disps;
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
    /* every rank's view contiguous (agreed when the views were set): each rank's access is one
     * range, written or read best by the rank itself -- no exchange, not even of the ranges */
    if (f->coll_local) {
        aptus_io_xfer_start(&c->x, f, write, pos, buf, count, dt);
        c->phase = PH_SHORT;
        return c;
    }
    PMPI_Comm_size(f->comm, &c->nproc);
    PMPI_Comm_rank(f->comm, &c->me);
    c->bytes = (MPI_Offset)(count * dt->size);
    c->mine[2] = c->bytes; /* lo, hi, bytes */
    if (c->bytes > 0)
        extent_of(f, pos, c->bytes, &c->mine[0], &c->mine[1]);
    size_t np = (size_t)c->nproc;
    c->all = malloc(sizeof(MPI_Offset) * 3 * np);
    c->agg = malloc(sizeof(int) * np);
    c->flag = !c->all || !c->agg;
    for (int i = 0; i < 2; i++) {
        struct slot *s = &c->s[i];
        s->cnt = calloc(np * 12, sizeof(int));
        s->range = calloc(np * 2, sizeof(MPI_Offset));
        s->src = malloc(sizeof(MPI_Aint) * np);
        s->xr = malloc(sizeof(MPI_Request) * 2 * np);
        c->flag |= !s->cnt || !s->range || !s->src || !s->xr;
    }
    c->phase = PH_GATHER;
    return c;
}

/* Whether a request has completed (its error in *err), freeing it then. A background task must
 * not drive progress itself: the request's own flag is read. */
static int req_done(MPI_Request *q, int *err)
{
    if (*q == MPI_REQUEST_NULL)
        return 1;
    struct aptus_request *r = (struct aptus_request *)*q;
    if (!__atomic_load_n(&r->complete, __ATOMIC_ACQUIRE))
        return 0;
    if (r->st_error && !*err)
        *err = EIO;
    PMPI_Request_free(q);
    return 1;
}

/* Ends a step started by the state machine: whether its collective and the messages of the
 * slots it waits for have completed. */
static int step_done(struct aptus_io_coll *c)
{
    if (!req_done(&c->req, &c->err))
        return 0;
    for (int i = 0; i < 2; i++) {
        struct slot *s = &c->s[i];
        if (!(c->wait & (1 << i)))
            continue;
        while (s->nx > 0 && req_done(&s->xr[s->nx - 1], &c->err))
            s->nx--;
        if (s->nx)
            return 0;
    }
    c->wait = 0;
    return 1;
}

/* Whether any rank's flag is set, as a step (every rank learns it in c->flag). */
static void agree(struct aptus_io_coll *c, int flag)
{
    c->flag = flag;
    PMPI_Iallreduce(MPI_IN_PLACE, &c->flag, 1, MPI_INT, MPI_MAX, c->f->comm, &c->req);
}

/* This rank's pieces in each aggregator's window of round c->q (writing: where their bytes
 * are, packed into the slot's data only when the memory is not contiguous), and the exchange of
 * their counts with this rank's failure flag. */
static void round_collect(struct aptus_io_coll *c, struct slot *s)
{
    struct aptus_file *f = c->f;
    int nproc = c->nproc, pack = c->write && !c->dt->contig;
    int *scm = s->cnt, *sdm = s->cnt + nproc, *scd = s->cnt + 2 * nproc, *pair_s = s->cnt + 6 * nproc;
    s->meta.len = s->data.len = 0;
    for (int d = 0; d < nproc; d++) {
        int j = c->agg[d]; /* aggregator j, or none */
        MPI_Offset a = 0, b = 0;
        if (j >= 0) {
            a = c->base + j * c->dom + c->q * c->cb;
            b = a + c->cb < c->base + (j + 1) * c->dom ? a + c->cb : c->base + (j + 1) * c->dom;
        }
        size_t m0 = s->meta.len, d0 = s->data.len;
        s->range[2 * d] = s->range[2 * d + 1] = 0;
        if (!c->err && c->bytes > 0 && a < b)
            c->err = collect(f, c->pos, c->bytes, &c->mc, a, b, pack, &s->meta, &s->data, &s->range[2 * d],
                             &s->range[2 * d + 1]);
        scm[d] = (int)((s->meta.len - m0) / sizeof(MPI_Offset));
        sdm[d] = (int)(m0 / sizeof(MPI_Offset));
        scd[d] = (int)(s->range[2 * d + 1] - s->range[2 * d]);
        s->src[d] =
            pack ? (MPI_Aint)d0
                 : (MPI_Aint)((uintptr_t)c->ubuf + (uintptr_t)c->dt->true_lb + (uintptr_t)(s->range[2 * d] - c->pos));
        pair_s[3 * d] = scm[d];
        pair_s[3 * d + 1] = scd[d];
        pair_s[3 * d + 2] = c->err != 0;
    }
    if (pack)
        for (int d = 0; d < nproc; d++)
            s->src[d] = (MPI_Aint)(uintptr_t)(s->data.p + s->src[d]);
    PMPI_Ialltoall(pair_s, 3, MPI_INT, s->cnt + 9 * nproc, 3, MPI_INT, f->comm, &c->req);
}

/* The aggregator's side of a round's bytes: one message per rank with pieces here, its layout a
 * datatype of those pieces in the span buffer (they arrive, or leave, in place). */
static int span_messages(struct aptus_io_coll *c, struct slot *s)
{
    const MPI_Offset *pc = (const MPI_Offset *)s->rmeta.p;
    int nproc = c->nproc, *rcm = s->cnt + 4 * nproc;
    size_t first = 0;
    for (int d = 0; d < nproc; d++) {
        size_t n = (size_t)rcm[d] / 2;
        if (!n)
            continue;
        int *len = (int *)c->lens.p;
        MPI_Aint *disp = (MPI_Aint *)c->disps.p;
        for (size_t i = 0; i < n; i++) {
            len[i] = (int)pc[2 * (first + i) + 1];
            disp[i] = (MPI_Aint)(pc[2 * (first + i)] - s->slo);
        }
        first += n;
        MPI_Datatype t;
        int rc = PMPI_Type_create_hindexed((int)n, len, disp, MPI_BYTE, &t);
        if (rc == MPI_SUCCESS && (rc = PMPI_Type_commit(&t)) == MPI_SUCCESS) {
            rc = c->write ? PMPI_Irecv(s->span.p, 1, t, d, IO_TAG, c->f->comm, &s->xr[s->nx])
                          : PMPI_Isend(s->span.p, 1, t, d, IO_TAG, c->f->comm, &s->xr[s->nx]);
            PMPI_Type_free(&t); /* (the message holds it) */
        }
        if (rc != MPI_SUCCESS)
            return ENOMEM;
        s->nx++;
    }
    return 0;
}

/* This rank's side: its bytes for each aggregator (writing), or from each (reading, into the
 * slot's data at sdd). */
static int rank_messages(struct aptus_io_coll *c, struct slot *s)
{
    int nproc = c->nproc, *scd = s->cnt + 2 * nproc, *sdd = s->cnt + 3 * nproc;
    for (int d = 0; d < nproc; d++) {
        if (!scd[d])
            continue;
        int rc = c->write
                     ? PMPI_Isend((void *)(uintptr_t)s->src[d], scd[d], MPI_BYTE, d, IO_TAG, c->f->comm, &s->xr[s->nx])
                     : PMPI_Irecv(s->data.p + sdd[d], scd[d], MPI_BYTE, d, IO_TAG, c->f->comm, &s->xr[s->nx]);
        if (rc != MPI_SUCCESS)
            return ENOMEM;
        s->nx++;
    }
    return 0;
}

/* Round q's span: the part of this aggregator's window its pieces touch; reading, or writing
 * with holes between the pieces, it is read first (what the file holds in the holes is kept; a
 * file that cannot be read is written piece by piece instead). Then the round's messages start
 * -- even after a failure here: the others wait for them. */
static void round_start(struct aptus_io_coll *c, struct slot *s)
{
    const MPI_Offset *pc = (const MPI_Offset *)s->rmeta.p;
    int nproc = c->nproc, *scd = s->cnt + 2 * nproc, *sdd = s->cnt + 3 * nproc;
    s->slo = s->shi = -1;
    s->covered = 0;
    for (size_t i = 0; i < s->npc; i++) {
        s->slo = s->slo < 0 || pc[2 * i] < s->slo ? pc[2 * i] : s->slo;
        s->shi = pc[2 * i] + pc[2 * i + 1] > s->shi ? pc[2 * i] + pc[2 * i + 1] : s->shi;
        s->covered += pc[2 * i + 1];
    }
    s->piecewise = 0;
    if (s->npc && !c->err && (!c->write || s->covered != s->shi - s->slo)) {
        int rc = aptus_io_pread_full(c->f, s->span.p, (size_t)(s->shi - s->slo), s->slo);
        s->piecewise = c->write && rc == EBADF;
        c->err = s->piecewise ? 0 : rc;
    }
    size_t off = 0; /* reading: where this rank receives each aggregator's bytes */
    for (int d = 0; d < nproc && !c->write; d++) {
        sdd[d] = (int)off;
        off += (size_t)scd[d];
    }
    int rc = span_messages(c, s);
    if (!rc)
        rc = rank_messages(c, s);
    if (rc && !c->err)
        c->err = rc;
}

/* Round q - 1's bytes have moved: the aggregator writes its span, a reader unpacks its pieces. */
static void round_finish(struct aptus_io_coll *c, struct slot *s)
{
    const MPI_Offset *pc = (const MPI_Offset *)s->rmeta.p;
    if (c->write && s->npc && !c->err) {
        if (s->piecewise)
            for (size_t i = 0; i < s->npc && !c->err; i++)
                c->err = aptus_io_pwrite_full(c->f, s->span.p + (pc[2 * i] - s->slo), (size_t)pc[2 * i + 1], pc[2 * i]);
        else
            c->err = aptus_io_pwrite_full(c->f, s->span.p, (size_t)(s->shi - s->slo), s->slo);
    }
    int nproc = c->nproc, *sdd = s->cnt + 3 * nproc;
    for (int d = 0; d < nproc && !c->write && !c->err; d++) {
        MPI_Offset s0 = s->range[2 * d], s1 = s->range[2 * d + 1];
        if (s1 > c->pos + c->valid)
            s1 = c->pos + c->valid;
        if (s0 >= s1)
            continue;
        aptus_dt_cursor_seek(&c->mc, (size_t)(s0 - c->pos));
        aptus_dt_unpack_some(&c->mc, s->data.p + sdd[d], (size_t)(s1 - s0));
    }
}

int aptus_io_coll_step(struct aptus_io_coll *c, size_t budget)
{
    struct aptus_file *f = c->f;
    int nproc = c->nproc;
    for (;;) {
        if (!step_done(c))
            return 0;
        if (c->phase == PH_SHORT) { /* (the arrays below may not exist then) */
            if (!aptus_io_xfer_step(&c->x, budget))
                return 0;
            c->done = c->x.done;
            c->err = c->x.err;
            c->phase = PH_END;
            return 1;
        }
        struct slot *s = &c->s[c->q & 1];
        int *scm = s->cnt, *sdm = s->cnt + nproc, *scd = s->cnt + 2 * nproc, *rcm = s->cnt + 4 * nproc,
            *rdm = s->cnt + 5 * nproc, *pair_r = s->cnt + 9 * nproc;
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
            c->cb = aptus_io_hint(f, "cb_buffer_size", IO_CB_DEFAULT);
            if (c->cb < IO_CB_MIN)
                c->cb = IO_CB_MIN;
            if (c->cb > IO_CB_MAX)
                c->cb = IO_CB_MAX;
            c->base = L / align * align;
            c->dom = ((H - c->base + naggr - 1) / naggr + align - 1) / align * align;
            c->rounds = (c->dom + c->cb - 1) / c->cb;
            /* an aggregator's span buffers hold its window (a failure is told in the first round) */
            for (int i = 0; i < 2 && c->agg[c->me] >= 0 && i < c->rounds; i++) {
                span_take(&c->s[i].span);
                if (buf_room(&c->s[i].span, (size_t)(c->dom < c->cb ? c->dom : c->cb)))
                    c->err = ENOMEM;
            }
            /* the valid bytes of a read: what lies below the end of the file */
            c->valid = c->bytes;
            if (!c->write && c->bytes > 0) {
                MPI_Offset end = 0;
                f->drv->size(f->fd, &end);
                MPI_Offset below = aptus_io_view_bytes_below(f, end);
                c->valid = below - c->pos < c->bytes ? (below - c->pos > 0 ? below - c->pos : 0) : c->bytes;
            }
            aptus_dt_cursor_init(&c->mc, c->ubuf, c->count, c->dt);
            c->q = 0;
            c->phase = PH_ROUND;
            break;
        }
        case PH_ROUND:
            if (c->q == c->rounds) { /* the last round's bytes still to write */
                c->wait = 1 << ((c->q - 1) & 1);
                c->phase = PH_WRITE;
                break;
            }
            round_collect(c, s);
            c->phase = PH_ROOM;
            break;
        case PH_ROOM: {
            size_t rm = 0, want = 0, npc = 0;
            int failed = 0;
            for (int d = 0; d < nproc; d++) {
                rcm[d] = pair_r[3 * d];
                rdm[d] = (int)rm;
                rm += (size_t)rcm[d];
                want += (size_t)scd[d];
                npc = (size_t)rcm[d] / 2 > npc ? (size_t)rcm[d] / 2 : npc;
                failed |= pair_r[3 * d + 2];
            }
            if (failed) { /* every rank has seen every rank's flag */
                c->phase = PH_FINAL;
                break;
            }
            s->rmeta.len = 0;
            s->npc = rm / 2;
            if (buf_room(&s->rmeta, rm * sizeof(MPI_Offset)) || buf_room(&c->lens, npc * sizeof(int)) ||
                buf_room(&c->disps, npc * sizeof(MPI_Aint)) || (!c->write && buf_room(&s->data, want)))
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
            PMPI_Ialltoallv(s->meta.p, scm, sdm, MPI_OFFSET, s->rmeta.p, rcm, rdm, MPI_OFFSET, f->comm, &c->req);
            c->phase = PH_SPAN;
            break;
        case PH_SPAN:
            round_start(c, s);
            /* round q's bytes are moving: round q - 1's are written (or unpacked) once moved */
            c->phase = c->q > 0 ? PH_WRITE : PH_ROUND;
            c->wait = c->q > 0 ? 1 << ((c->q - 1) & 1) : 0;
            if (!c->q)
                c->q++;
            break;
        case PH_WRITE:
            round_finish(c, &c->s[(c->q - 1) & 1]);
            if (c->q++ == c->rounds)
                c->phase = PH_FINAL;
            else
                c->phase = PH_ROUND;
            break;
        case PH_FINAL:
            c->wait = 3;
            c->phase = PH_AGREE;
            break;
        case PH_AGREE:
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
    for (int i = 0; i < 2; i++) {
        struct slot *s = &c->s[i];
        free(s->meta.p);
        free(s->data.p);
        free(s->rmeta.p);
        span_give(&s->span);
        free(s->cnt);
        free(s->range);
        free(s->src);
        free(s->xr);
    }
    free(c->lens.p);
    free(c->disps.p);
    free(c->all);
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
