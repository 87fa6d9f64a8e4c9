/* aptus-tune: measures every network channel between two ranks -- latency per size for the
 * small-message channels (ud-sr, rc-sr, rc-fp), bandwidth per size for the large-message ones
 * (ud-zcopy, ud-copy, rc-rdma), and how long an RC connection takes to open -- and writes the
 * send rule chain (with the size limits between the channels) and the allocation rules that fit
 * what it measured into a tune file, which the library reads at start-up (APTUS_TUNE_FILE; an
 * APTUS_* variable set in the environment still wins).
 *
 *   aptus-tune [-o FILE] [--quick] [--mpiexec PATH] [-- MPIEXEC-OPTIONS...]
 *       one job of 2 ranks per channel (mpiexec MPIEXEC-OPTIONS -n 2 aptus-tune --probe ...);
 *       the options place the two ranks, e.g. `--hosts node1,node2 --ppn 1` (two hosts) or
 *       `--ppn 1` (one machine, simulated as two nodes); default FILE: the one the library
 *       reads, <sysconfdir>/aptus/tune.conf of the installation
 *   aptus-tune --show [FILE]    what a tune file holds, in words
 *   aptus-tune --probe NAME     (run by the first form, under mpiexec)
 *
 * docs/TUNING.md, "Tune file", says how the choice is made. */
#include "channel/rules.h"
#include "runtime/config.h"

#include <mpi.h>
#include <mpix_aptus.h>

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define KIB 1024u
#define MIB (1024u * 1024u)

/* ---- the candidates ------------------------------------------------------------------ */

/* Each candidate is one job: the chain makes the channel under test carry the sizes it is
 * measured at (no smp rule: on one machine the two ranks are two simulated nodes), and its
 * allocation rules ask for a connection at the first message. */
struct cand {
    const char *name;         /* the channel measured */
    int large;                /* 0: latency at the small sizes; 1: bandwidth at the large sizes */
    const char *send, *alloc; /* alloc: NULL for a channel that opens no connection */
};
static const struct cand cands[] = {
    { "ud-sr", 0, "self;ud-sr", NULL },
    { "rc-sr", 0, "self;size<=8K:rc-sr;rc-rdma;ud-sr", "*:rc-sr@1" },
    { "rc-fp", 0, "self;size<=8K:rc-fp;size<=8K:rc-sr;rc-rdma;ud-sr", "size<=8K:rc-fp@1;*:rc-sr@1" },
    { "ud-zcopy", 1, "self;ud-zcopy", NULL },
    { "ud-copy", 1, "self;ud-copy", NULL },
    { "rc-rdma", 1, "self;size<=8K:ud-sr;rc-rdma;ud-zcopy", "*:rc-rdma@1" },
};
#define NCANDS (int)(sizeof cands / sizeof cands[0])

static const size_t small_sizes[] = { 8, 64, 512, 1 * KIB, 2 * KIB, 4 * KIB, 8 * KIB };
static const size_t large_sizes[] = { 16 * KIB, 64 * KIB, 256 * KIB, 1 * MIB, 4 * MIB };
#define NSMALL (int)(sizeof small_sizes / sizeof small_sizes[0])
#define NLARGE (int)(sizeof large_sizes / sizeof large_sizes[0])
#define NSIZES (NSMALL > NLARGE ? NSMALL : NLARGE)

/* A channel within this share of the best counts as as good: the connection-less one (UD) is
 * then kept, since it costs no connection and no memory per peer. */
#define TIE 0.03

static void size_text(size_t v, char *buf, size_t len)
{
    if (v >= MIB && v % MIB == 0)
        snprintf(buf, len, "%zuM", v / MIB);
    else if (v >= KIB && v % KIB == 0)
        snprintf(buf, len, "%zuK", v / KIB);
    else
        snprintf(buf, len, "%zu", v);
}

/* ---- the probe (under mpiexec, 2 ranks) ---------------------------------------------- */

static unsigned long long carried(const char *chan)
{
    char name[64];
    unsigned long long v = 0;
    snprintf(name, sizeof name, "msgs.%s", chan);
    return MPIX_Aptus_counter(name, &v) == MPI_SUCCESS ? v : 0;
}

/* One-way latency (µs) of `iters` round trips of `size` bytes. */
static double pingpong(int rank, char *buf, size_t size, int iters)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++) {
        if (rank == 0) {
            MPI_Send(buf, (int)size, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
            MPI_Recv(buf, (int)size, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(buf, (int)size, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, (int)size, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
        }
    }
    return (MPI_Wtime() - t0) * 1e6 / (2.0 * iters);
}

/* MB/s of `windows` windows of `window` messages of `size` bytes, rank 0 to rank 1, each window
 * acknowledged. */
static double stream(int rank, char *buf, size_t size, int window, int windows)
{
    MPI_Request req[64];
    char ack = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int w = 0; w < windows; w++) {
        for (int i = 0; i < window; i++) {
            if (rank == 0)
                MPI_Isend(buf, (int)size, MPI_BYTE, 1, 2, MPI_COMM_WORLD, &req[i]);
            else
                MPI_Irecv(buf, (int)size, MPI_BYTE, 0, 2, MPI_COMM_WORLD, &req[i]);
        }
        MPI_Waitall(window, req, MPI_STATUSES_IGNORE);
        if (rank == 0)
            MPI_Recv(&ack, 1, MPI_BYTE, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        else
            MPI_Send(&ack, 1, MPI_BYTE, 0, 3, MPI_COMM_WORLD);
    }
    double t = MPI_Wtime() - t0;
    return (double)size * window * windows / t / 1e6;
}

/* Round trips of `size` bytes until the channel carries one (its connection is up): the
 * milliseconds that took, or -1 when it did not within 10 s. The first byte says whether the
 * partner goes on. */
static double open_time(int rank, const char *chan, char *buf, size_t size)
{
    double t0 = MPI_Wtime(), ms = -1;
    for (;;) {
        if (rank == 0) {
            int up = carried(chan) > 0, late = MPI_Wtime() - t0 > 10;
            if (up)
                ms = (MPI_Wtime() - t0) * 1e3;
            buf[0] = (char)!(up || late);
            MPI_Send(buf, (int)size, MPI_BYTE, 1, 4, MPI_COMM_WORLD);
            MPI_Recv(buf, (int)size, MPI_BYTE, 1, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (up || late)
                return ms;
        } else {
            MPI_Recv(buf, (int)size, MPI_BYTE, 0, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            int more = buf[0];
            MPI_Send(buf, (int)size, MPI_BYTE, 0, 4, MPI_COMM_WORLD);
            if (!more)
                return 0;
        }
    }
}

static int probe(const char *name, int quick)
{
    const struct cand *c = NULL;
    for (int i = 0; i < NCANDS; i++)
        if (!strcmp(cands[i].name, name))
            c = &cands[i];
    MPI_Init(NULL, NULL);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (!c || size != 2) {
        if (rank == 0)
            fprintf(stderr, "aptus-tune: --probe %s: %s\n", name, !c ? "no such channel" : "needs exactly 2 ranks");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    char *buf = calloc(1, 4 * MIB);
    if (!buf)
        MPI_Abort(MPI_COMM_WORLD, 2);
    int connected = !strncmp(c->name, "rc-", 3);
    if (connected) {
        double ms = open_time(rank, c->name, buf, c->large ? 16 * KIB : 8);
        if (rank == 0 && ms >= 0)
            printf("aptus-tune: open %.3f\n", ms);
        if (ms < 0) {
            if (rank == 0)
                printf("aptus-tune: none no message went by %s within 10 s\n", c->name);
            free(buf);
            MPI_Finalize();
            return 0;
        }
    }
    int n = c->large ? NLARGE : NSMALL;
    for (int k = 0; k < n; k++) {
        size_t sz = c->large ? large_sizes[k] : small_sizes[k];
        double best = 0;
        long want = 0;
        unsigned long long before = carried(c->name);
        for (int rep = 0; rep < 3; rep++) {
            if (c->large) {
                int window = 16, windows = (int)((quick ? 8 : 64) * MIB / (sz * (size_t)window));
                windows = windows < 2 ? 2 : windows;
                double bw = stream(rank, buf, sz, window, windows);
                best = bw > best ? bw : best;
                want += (long)window * windows;
            } else {
                int iters = quick ? 100 : sz <= KIB ? 2000 : 500;
                double us = pingpong(rank, buf, sz, iters);
                best = rep == 0 || us < best ? us : best;
                want += iters;
            }
        }
        /* the channel must have carried (nearly) every message of rank 0 */
        unsigned long long got = carried(c->name) - before;
        if (rank == 0) {
            if ((double)got < 0.9 * (double)want)
                printf("aptus-tune: skip %zu %s carried %llu of %ld messages\n", sz, c->name, got, want);
            else
                printf("aptus-tune: %s %zu %.3f\n", c->large ? "bw" : "lat", sz, best);
        }
    }
    fflush(stdout);
    free(buf);
    MPI_Finalize();
    return 0;
}

/* ---- the driver ------------------------------------------------------------------------ */

struct result {
    int ran;          /* the job ended well */
    double v[NSIZES]; /* latency µs or bandwidth MB/s; 0: not measured */
    double open_ms;   /* connection opening, -1: not measured */
    char why[160];    /* why a job gave nothing */
};

static char self_path[PATH_MAX];

/* The launcher: --mpiexec, else the mpiexec next to this program (installed: both in bin),
 * else the one of the build tree this program was built in. */
static const char *find_mpiexec(const char *given)
{
    static char path[PATH_MAX + 16];
    if (given)
        return given;
    const char *slash = strrchr(self_path, '/');
    if (slash) {
        snprintf(path, sizeof path, "%.*s/mpiexec", (int)(slash - self_path), self_path);
        if (access(path, X_OK) == 0)
            return path;
    }
#ifdef APTUS_TUNE_BUILD_MPIEXEC
    if (access(APTUS_TUNE_BUILD_MPIEXEC, X_OK) == 0)
        return APTUS_TUNE_BUILD_MPIEXEC;
#endif
    return "mpiexec";
}

/* Runs one candidate's job and reads what rank 0 printed. */
static void run_cand(const struct cand *c, const char *mpiexec, char **margs, int nmargs, int quick, struct result *res)
{
    memset(res, 0, sizeof *res);
    res->open_ms = -1;
    int fd[2];
    if (pipe(fd) != 0) {
        snprintf(res->why, sizeof res->why, "pipe: %s", strerror(errno));
        return;
    }
    pid_t pid = fork();
    if (pid == 0) {
        close(fd[0]);
        dup2(fd[1], 1);
        close(fd[1]);
        setenv("APTUS_SEND_RULES", c->send, 1);
        if (c->alloc)
            setenv("APTUS_ALLOC_RULES", c->alloc, 1);
        setenv("APTUS_STATS", "1", 1);        /* (the msgs.CHANNEL counters) */
        setenv("APTUS_TUNE_FILE", "none", 1); /* measure the channels, not an earlier file */
        char *argv[64];
        int a = 0;
        argv[a++] = (char *)mpiexec;
        for (int i = 0; i < nmargs && a < 50; i++)
            argv[a++] = margs[i];
        argv[a++] = "-n";
        argv[a++] = "2";
        argv[a++] = self_path;
        argv[a++] = "--probe";
        argv[a++] = (char *)c->name;
        if (quick)
            argv[a++] = "--quick";
        argv[a] = NULL;
        execvp(mpiexec, argv);
        fprintf(stderr, "aptus-tune: cannot run %s: %s\n", mpiexec, strerror(errno));
        _exit(127);
    }
    close(fd[1]);
    if (pid < 0) {
        close(fd[0]);
        snprintf(res->why, sizeof res->why, "fork: %s", strerror(errno));
        return;
    }
    FILE *in = fdopen(fd[0], "r");
    char line[512];
    while (in && fgets(line, sizeof line, in)) {
        size_t sz;
        double v;
        if (strncmp(line, "aptus-tune: ", 12) != 0)
            continue;
        const char *p = line + 12;
        int k = -1;
        if ((sscanf(p, "lat %zu %lf", &sz, &v) == 2 && !c->large) ||
            (sscanf(p, "bw %zu %lf", &sz, &v) == 2 && c->large)) {
            for (int i = 0; i < (c->large ? NLARGE : NSMALL); i++)
                if ((c->large ? large_sizes[i] : small_sizes[i]) == sz)
                    k = i;
            if (k >= 0)
                res->v[k] = v;
        } else if (sscanf(p, "open %lf", &v) == 1) {
            res->open_ms = v;
        } else if (!strncmp(p, "none ", 5) || !strncmp(p, "skip ", 5)) {
            snprintf(res->why, sizeof res->why, "%.150s", p + 5);
            res->why[strcspn(res->why, "\n")] = 0;
        }
    }
    if (in)
        fclose(in);
    int st = 0;
    waitpid(pid, &st, 0);
    res->ran = WIFEXITED(st) && WEXITSTATUS(st) == 0;
    if (!res->ran && !res->why[0])
        snprintf(res->why, sizeof res->why, "the job failed (%s %d)", WIFEXITED(st) ? "exit status" : "signal",
                 WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
}

/* The winner at size index k among the candidates of a class: the best value, a
 * connection-less channel kept when within TIE of it. -1: none measured. */
static int winner(const struct result *res, int large, int k)
{
    int best = -1;
    for (int i = 0; i < NCANDS; i++) {
        if (cands[i].large != large || !res[i].v[k])
            continue;
        if (best < 0 || (large ? res[i].v[k] > res[best].v[k] : res[i].v[k] < res[best].v[k]))
            best = i;
    }
    if (best >= 0 && !strncmp(cands[best].name, "rc-", 3)) {
        for (int i = 0; i < NCANDS; i++) {
            if (cands[i].large != large || !res[i].v[k] || !strncmp(cands[i].name, "rc-", 3))
                continue;
            double r = large ? res[i].v[k] / res[best].v[k] : res[best].v[k] / res[i].v[k];
            if (r >= 1 - TIE)
                return i;
        }
    }
    return best;
}

__attribute__((format(printf, 3, 4))) static void append(char *out, size_t len, const char *fmt, ...)
{
    size_t used = strlen(out);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out + used, len - used, fmt, ap);
    va_end(ap);
}

/* The winner of the next measured size after index k of a class's winners (-1: none). */
static int next_winner(const int *win, int n, int k)
{
    for (int j = k + 1; j < n; j++)
        if (win[j] >= 0)
            return win[j];
    return -1;
}

/* The chain and allocation rules from the winners: the small sizes' winners by size, the large
 * sizes' the same, the last one for every larger size; a chain that ends on a connected channel
 * gets UD after it for the peers without a connection. 0, or -1 when nothing was measured. */
static int choose(const struct result *res, char *send, size_t slen, char *alloc, size_t alen)
{
    int win_small[NSMALL], win_large[NLARGE], any_small = 0, any_large = 0;
    for (int k = 0; k < NSMALL; k++)
        any_small |= (win_small[k] = winner(res, 0, k)) >= 0;
    for (int k = 0; k < NLARGE; k++)
        any_large |= (win_large[k] = winner(res, 1, k)) >= 0;
    if (!any_small || !any_large)
        return -1;
    snprintf(send, slen, "self;smp");
    alloc[0] = 0;
    int fp = 0, conn_small = 0, rdma = 0, ud_sr_all = 1;
    size_t fp_max = 0;
    char sz[32];
    for (int k = 0; k < NSMALL; k++) {
        int w = win_small[k];
        if (w < 0)
            continue;
        int next = next_winner(win_small, NSMALL, k);
        if (next == w)
            continue; /* (the same channel goes on) */
        size_text(small_sizes[k], sz, sizeof sz);
        append(send, slen, ";size<=%s:%s", sz, cands[w].name);
        ud_sr_all &= !strcmp(cands[w].name, "ud-sr");
        if (!strcmp(cands[w].name, "rc-fp")) {
            fp = 1;
            fp_max = small_sizes[k];
        }
        conn_small |= !strncmp(cands[w].name, "rc-", 3);
    }
    int last = -1;
    for (int k = 0; k < NLARGE; k++) {
        int w = win_large[k];
        if (w < 0)
            continue;
        int next = next_winner(win_large, NLARGE, k);
        if (next == w || next < 0) {
            last = w;
            continue;
        }
        size_text(large_sizes[k], sz, sizeof sz);
        append(send, slen, ";size<=%s:%s", sz, cands[w].name);
        rdma |= !strcmp(cands[w].name, "rc-rdma");
    }
    append(send, slen, ";%s", cands[last].name);
    rdma |= !strcmp(cands[last].name, "rc-rdma");
    if (!strncmp(cands[last].name, "rc-", 3) || conn_small) {
        /* peers before their connection: UD */
        if (!ud_sr_all || !strncmp(cands[last].name, "rc-", 3))
            append(send, slen, ";size<=8K:ud-sr");
        if (!strncmp(cands[last].name, "rc-", 3))
            append(send, slen, ";ud-zcopy");
    }
    if (fp) {
        size_text(fp_max, sz, sizeof sz);
        append(alloc, alen, "size<=%s:rc-fp;", sz);
    }
    if (conn_small)
        append(alloc, alen, "*:rc-sr");
    else if (rdma)
        append(alloc, alen, "size>8K:rc-rdma");
    return 0;
}

static int write_file(const char *path, const struct result *res, char **margs, int nmargs, const char *send,
                      const char *alloc)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "aptus-tune: cannot write %s: %s\n", path, strerror(errno));
        return -1;
    }
    time_t now = time(NULL);
    char when[64];
    strftime(when, sizeof when, "%Y-%m-%d %H:%M UTC", gmtime(&now));
    fprintf(f, "# Aptus MPI tune file, written by aptus-tune on %s for the fabric between the ranks of\n#   mpiexec",
            when);
    for (int i = 0; i < nmargs; i++)
        fprintf(f, " %s", margs[i]);
    fprintf(f,
            " -n 2\n# Read at start-up (APTUS_TUNE_FILE); a variable set in the environment wins.\n"
            "# `aptus-tune --show %s` explains it.\n#\n",
            path);
    for (int large = 0; large < 2; large++) {
        fprintf(f,
                large ? "#| bandwidth MB/s (windows of 16 messages; best of 3)\n#| %-8s"
                      : "#| one-way latency us (ping-pong; best of 3)\n#| %-8s",
                "size");
        for (int i = 0; i < NCANDS; i++)
            if (cands[i].large == large)
                fprintf(f, " %10s", cands[i].name);
        fprintf(f, "\n");
        for (int k = 0; k < (large ? NLARGE : NSMALL); k++) {
            char sz[32];
            size_text(large ? large_sizes[k] : small_sizes[k], sz, sizeof sz);
            fprintf(f, "#| %-8s", sz);
            int w = winner(res, large, k);
            for (int i = 0; i < NCANDS; i++) {
                if (cands[i].large != large)
                    continue;
                char cell[32] = "-";
                if (res[i].v[k])
                    snprintf(cell, sizeof cell, large ? "%.0f%s" : "%.2f%s", res[i].v[k], i == w ? "*" : "");
                fprintf(f, " %10s", cell);
            }
            fprintf(f, "\n");
        }
    }
    for (int i = 0; i < NCANDS; i++) {
        if (res[i].open_ms >= 0)
            fprintf(f, "#| %s: the connection carried its first message %.1f ms after the first try\n", cands[i].name,
                    res[i].open_ms);
        if (res[i].why[0])
            fprintf(f, "#| %s: %s\n", cands[i].name, res[i].why);
    }
    fprintf(f, "#| (* chosen: the fastest; a connection-less channel within %.0f %% of it is kept)\n", TIE * 100);
    fprintf(f, "APTUS_SEND_RULES=%s\n", send);
    if (alloc[0])
        fprintf(f, "APTUS_ALLOC_RULES=%s\n", alloc);
    return fclose(f) == 0 ? 0 : -1;
}

static int show(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "aptus-tune: cannot read %s: %s\n", path, strerror(errno));
        return 2;
    }
    printf("tune file %s:\n", path);
    char line[1024];
    int settings = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        if (!strncmp(line, "#|", 2)) {
            printf("  %s\n", line + 2 + (line[2] == ' '));
            continue;
        }
        if (line[0] == '#' && !settings && line[1] == ' ' && !strstr(line, "--show")) {
            printf("%s\n", line + 2); /* (the header: when, where) */
            continue;
        }
        if (line[0] == '#' || !line[0])
            continue;
        char *eq = strchr(line, '=');
        if (!settings++)
            printf("settings:\n");
        printf("  %s\n", line);
        if (!eq)
            continue;
        *eq = 0;
        struct aptus_rule_chain chain;
        char err[512];
        int alloc = !strcmp(line, "APTUS_ALLOC_RULES");
        if (!alloc && strcmp(line, "APTUS_SEND_RULES"))
            continue;
        int rc = alloc ? aptus_alloc_rules_parse(eq + 1, 16, &chain, err, sizeof err)
                       : aptus_rules_parse(eq + 1, &chain, err, sizeof err);
        if (rc != 0) {
            printf("    (does not parse: %s)\n", err);
            continue;
        }
        for (int i = 0; i < chain.n; i++) {
            const struct aptus_rule *r = &chain.rule[i];
            char what[96], lo[32], hi[32];
            size_text(r->size_min, lo, sizeof lo);
            size_text(r->size_max, hi, sizeof hi);
            if (r->size_max == UINT64_MAX && r->size_min == 0)
                snprintf(what, sizeof what, "messages of any size");
            else if (r->size_max == UINT64_MAX)
                snprintf(what, sizeof what, "messages of %s bytes and more", lo);
            else if (r->size_min == 0)
                snprintf(what, sizeof what, "messages up to %s bytes", hi);
            else
                snprintf(what, sizeof what, "messages of %s..%s bytes", lo, hi);
            int conn = r->channel == APTUS_CH_RC_SR || r->channel == APTUS_CH_RC_FP || r->channel == APTUS_CH_RC_RDMA;
            if (alloc)
                printf("    %s count toward %s\n", what,
                       r->channel == APTUS_CH_RC_FP ? "a fast path (rc-fp)" : "a connection");
            else
                printf("    %s: %s%s\n", what, aptus_channel_name(r->channel),
                       conn     ? " (once the peer's connection is up; else the next rule)"
                       : i == 0 ? ""
                                : " (those no rule above took)");
        }
    }
    fclose(f);
    if (!settings)
        printf("settings: none\n");
    return 0;
}

/* The file can be written (its folder made when missing): found before the measurements. */
static int writable(const char *path)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == dir)
        dir[1] = 0;
    else
        *slash = 0;
    if (access(dir, F_OK) != 0 && mkdir(dir, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "aptus-tune: cannot make the folder %s for %s: %s (-o FILE writes elsewhere)\n", dir, path,
                strerror(errno));
        return -1;
    }
    if (access(dir, W_OK) != 0 || (access(path, F_OK) == 0 && access(path, W_OK) != 0)) {
        fprintf(stderr, "aptus-tune: cannot write %s: %s (-o FILE writes elsewhere)\n", path, strerror(EACCES));
        return -1;
    }
    return 0;
}

static int usage(FILE *to, int rc)
{
    fprintf(to,
            "usage: aptus-tune [-o FILE] [--quick] [--mpiexec PATH] [-- MPIEXEC-OPTIONS...]\n"
            "       aptus-tune --show [FILE]\n"
            "Measures every network channel between two ranks placed by MPIEXEC-OPTIONS (e.g.\n"
            "--hosts node1,node2 --ppn 1; on one machine --ppn 1 simulates two nodes) and writes\n"
            "the send rule chain that fits them into FILE (default %s, which the library reads at\n"
            "start-up: APTUS_TUNE_FILE).\n",
            aptus_config_tune_default());
    return rc;
}

int main(int argc, char **argv)
{
    const char *out = NULL, *mpiexec = NULL;
    int quick = 0, nmargs = 0;
    char **margs = NULL;
    ssize_t n = readlink("/proc/self/exe", self_path, sizeof self_path - 1);
    if (n > 0)
        self_path[n] = 0;
    else
        snprintf(self_path, sizeof self_path, "%s", argv[0]);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--probe") && i + 1 < argc) {
            int q = i + 2 < argc && !strcmp(argv[i + 2], "--quick");
            return probe(argv[i + 1], q);
        } else if (!strcmp(a, "--show")) {
            return show(i + 1 < argc ? argv[i + 1] : aptus_config_tune_default());
        } else if (!strcmp(a, "-o") && i + 1 < argc) {
            out = argv[++i];
        } else if (!strcmp(a, "--mpiexec") && i + 1 < argc) {
            mpiexec = argv[++i];
        } else if (!strcmp(a, "--quick")) {
            quick = 1;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            return usage(stdout, 0);
        } else if (!strcmp(a, "--")) {
            margs = argv + i + 1;
            nmargs = argc - i - 1;
            break;
        } else {
            fprintf(stderr, "aptus-tune: unknown argument '%s'\n", a);
            return usage(stderr, 2);
        }
    }
    if (!out)
        out = aptus_config_tune_default();
    if (writable(out) != 0)
        return 1;
    mpiexec = find_mpiexec(mpiexec);
    struct result res[NCANDS];
    for (int i = 0; i < NCANDS; i++) {
        fprintf(stderr, "aptus-tune: measuring %s ...\n", cands[i].name);
        run_cand(&cands[i], mpiexec, margs, nmargs, quick, &res[i]);
        if (res[i].why[0])
            fprintf(stderr, "aptus-tune: %s: %s\n", cands[i].name, res[i].why);
    }
    char send[512], alloc[256];
    if (choose(res, send, sizeof send, alloc, sizeof alloc) != 0) {
        fprintf(stderr, "aptus-tune: no channel could be measured for %s messages; nothing written\n",
                winner(res, 0, 0) < 0 ? "small" : "large");
        return 1;
    }
    struct aptus_rule_chain chain;
    char err[512];
    if (aptus_rules_parse(send, &chain, err, sizeof err) != 0 ||
        aptus_rules_check_start(&chain, send, err, sizeof err) != 0 ||
        (alloc[0] && aptus_alloc_rules_parse(alloc, 16, &chain, err, sizeof err) != 0)) {
        fprintf(stderr, "aptus-tune: the chain chosen does not parse (a fault of aptus-tune): %s\n", err);
        return 1;
    }
    if (write_file(out, res, margs, nmargs, send, alloc) != 0)
        return 1;
    fprintf(stderr, "aptus-tune: wrote %s\n", out);
    return show(out);
}
