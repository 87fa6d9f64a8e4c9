/* fp_halo: an irregular halo exchange like AMG's (seed 003, Table 2): each rank talks to tens of
 * peers, its messages mostly under 8 KiB, several to a peer at a time -- and, from the library's
 * counters, the fast-path memory per process and the share of the messages to other nodes that
 * took the fast path (rc-fp).
 *
 * Pattern: the ranks on a px x py x pz grid (near-cubic factors of the job size), each talking to
 * its 26-point neighbours (not periodic: faces, edges, corners) and to "coarse level" peers
 * r +- 2^k (k >= 2, as AMG's coarser grids pair distant ranks). Each iteration has 3 exchanges
 * (AMG's levels); in each, a rank posts receives from every peer, then sends every peer 1 to 4
 * messages: faces 2 of 2-8 KiB, edges 2 of 512 B-2 KiB, corners 1 of 64-256 B, coarse peers 3 of
 * 64 B-1 KiB, and one message in twenty of 16-32 KiB (beyond the fast path's 8 KiB rule), then
 * waits for all. Sizes come from a hash of (sender, receiver, iteration, exchange, message);
 * every message's first words are checked.
 *
 * Counters (Aptus only; other libraries print "-"): rcfp.msgs (messages written into a fast-path
 * block), rcfp.memory (the blocks a process owns and, for the fixed design, its mirrors of its
 * peers' cells), memory.rc-fp (all of rc-fp's memory, staging included). The share counts the
 * messages of the timed iterations only (after -w warm-up iterations, in which the fast paths
 * open); "remote" = to a rank on another node (MPI_COMM_TYPE_SHARED). Under APTUS_STATS=1 the
 * share of the remote messages sent over RC (rc-sr, rc-fp, rc-rdma: msgs.CHANNEL) is reported too
 * ("-" otherwise): with APTUS_RC_MAX below the peers, whether the connections followed the traffic.
 *
 * With -P the job has two phases of warm-up and timed iterations, the second with every rank
 * moved to another place of the grid (a fixed shuffle: other neighbours), and the figures are
 * the second phase's: whether the fast paths followed the traffic (APTUS_CHANNEL_IDLE).
 *
 * usage: fp_halo [-i ITERS] [-w WARMUP] [-c CONFIG-LABEL] [-P]
 * Output: one comment line naming the pattern, one row:
 *   config ranks nodes peers remote_peers remote_msgs/iter fp_share_% rc_share_% fp_mem_avg_KB
 *   fp_mem_max_KB rcfp_mem_avg_KB us/iter */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__has_include)
#if __has_include(<mpix_aptus.h>)
#include <mpix_aptus.h>
#endif
#endif

#define EXCHANGES 3
#define MAXMSG    4
#define BIG       (32 * 1024)

enum { FACE, EDGE, CORNER, COARSE };
struct peer {
    int rank, kind, remote;
};

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    return x ^ (x >> 33);
}

static int nmsgs(int kind)
{
    return kind == FACE ? 2 : kind == EDGE ? 2 : kind == CORNER ? 1 : 3;
}

static size_t msg_size(int from, int to, int kind, int it, int ex, int m)
{
    uint64_t h = mix(((uint64_t)from << 40) ^ ((uint64_t)to << 20) ^ ((uint64_t)it << 4) ^ (uint64_t)(ex * 4 + m));
    if (h % 20 == 0)
        return 16384 + (size_t)(h >> 8) % 16385;
    size_t lo = kind == FACE   ? 2048
                : kind == EDGE ? 512
                               : 64,
           hi = kind == FACE     ? 8192
                : kind == EDGE   ? 2048
                : kind == CORNER ? 256
                                 : 1024;
    size_t n = lo + (size_t)(h >> 8) % (hi - lo + 1);
    return n < 16 ? 16 : n;
}

static void dims3(int n, int d[3])
{
    d[0] = d[1] = d[2] = 1;
    int f = 2, left = n;
    while (left > 1) { /* prime factors, largest first into the smallest dimension */
        while (left % f)
            f++;
        left /= f;
        int k = d[0] <= d[1] && d[0] <= d[2] ? 0 : d[1] <= d[2] ? 1 : 2;
        d[k] *= f;
    }
}

/* The peers of grid place `me` (ranks: inv[place], or the place itself without inv). */
static int make_peers(int me, const int d[3], int size, const int *inv, struct peer *peers)
{
    int c[3] = { me % d[0], (me / d[0]) % d[1], me / (d[0] * d[1]) }, np = 0;
    for (int dz = -1; dz <= 1; dz++)
        for (int dy = -1; dy <= 1; dy++)
            for (int dx = -1; dx <= 1; dx++) {
                int n[3] = { c[0] + dx, c[1] + dy, c[2] + dz }, nz = (dx != 0) + (dy != 0) + (dz != 0);
                if (!nz || n[0] < 0 || n[1] < 0 || n[2] < 0 || n[0] >= d[0] || n[1] >= d[1] || n[2] >= d[2])
                    continue;
                int r = n[0] + d[0] * (n[1] + d[1] * n[2]);
                peers[np++] = (struct peer){ inv ? inv[r] : r, nz == 1 ? FACE : nz == 2 ? EDGE : CORNER, 0 };
            }
    for (int k = 2; (1 << k) < size; k++)
        for (int s = -1; s <= 1; s += 2) {
            int q = ((me + s * (1 << k)) % size + size) % size, r = inv ? inv[q] : q, dup = q == me;
            for (int i = 0; i < np && !dup; i++)
                dup = peers[i].rank == r;
            if (!dup)
                peers[np++] = (struct peer){ r, COARSE, 0 };
        }
    return np;
}

static unsigned long long counter(const char *name)
{
#ifdef MPIX_APTUS_COUNTERS
    unsigned long long v = 0;
    if (MPIX_Aptus_counter(name, &v) == MPI_SUCCESS)
        return v;
#else
    (void)name;
#endif
    return 0;
}

/* Messages sent over RC so far (APTUS_STATS=1); -1 when not counted. */
static double rc_msgs(void)
{
#ifdef MPIX_APTUS_COUNTERS
    unsigned long long a, b, c;
    if (MPIX_Aptus_counter("msgs.rc-sr", &a) == MPI_SUCCESS && MPIX_Aptus_counter("msgs.rc-fp", &b) == MPI_SUCCESS &&
        MPIX_Aptus_counter("msgs.rc-rdma", &c) == MPI_SUCCESS)
        return (double)(a + b + c);
#endif
    return -1;
}

int main(int argc, char **argv)
{
    int iters = 100, warm = 20, two = 0;
    const char *label = "-";
    MPI_Init(&argc, &argv);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-i") && i + 1 < argc)
            iters = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-w") && i + 1 < argc)
            warm = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-c") && i + 1 < argc)
            label = argv[++i];
        else if (!strcmp(argv[i], "-P"))
            two = 1;
    }
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN); /* (counters of channels not in use) */
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    int *node_of = malloc(sizeof(int) * (size_t)size), me_leader = 0, nodes = 0;
    {
        int lr, first;
        MPI_Comm_rank(node, &lr);
        first = rank; /* the node's lowest world rank names it */
        MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, node);
        MPI_Allgather(&first, 1, MPI_INT, node_of, 1, MPI_INT, MPI_COMM_WORLD);
        me_leader = lr == 0;
        MPI_Allreduce(&me_leader, &nodes, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    }
    /* peers: of the rank's place in the grid (phase 2 with -P: the places shuffled) */
    int d[3];
    dims3(size, d);
    int *perm = malloc(sizeof(int) * (size_t)size), *inv = malloc(sizeof(int) * (size_t)size);
    for (int i = 0; i < size; i++)
        perm[i] = i;
    for (int i = size - 1; i > 0; i--) { /* (the same on every rank) */
        int j = (int)(mix((uint64_t)i * 7919u + 17u) % (uint64_t)(i + 1)), t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    for (int i = 0; i < size; i++)
        inv[perm[i]] = i;
    struct peer *sets[2];
    int nps[2], nremotes[2];
    for (int ph = 0; ph < 2; ph++) {
        sets[ph] = malloc(sizeof(struct peer) * (size_t)(26 + 64));
        nps[ph] = make_peers(ph ? perm[rank] : rank, d, size, ph ? inv : NULL, sets[ph]);
        nremotes[ph] = 0;
        for (int i = 0; i < nps[ph]; i++)
            nremotes[ph] += sets[ph][i].remote = node_of[sets[ph][i].rank] != node_of[rank];
    }
    int phases = two ? 2 : 1;
    struct peer *peers = sets[0];
    int np = nps[0], nremote = nremotes[0];
    /* buffers: one receive buffer per peer and message, one send buffer per message */
    int nreq = 0;
    for (int ph = 0; ph < 2; ph++) {
        int n = 0;
        for (int i = 0; i < nps[ph]; i++)
            n += nmsgs(sets[ph][i].kind);
        nreq = n > nreq ? n : nreq;
    }
    char *rbuf = malloc((size_t)nreq * BIG), *sbuf = malloc((size_t)nreq * BIG);
    MPI_Request *req = malloc(sizeof(MPI_Request) * (size_t)nreq * 2);
    if (!rbuf || !sbuf || !req)
        MPI_Abort(MPI_COMM_WORLD, 2);
    long bad = 0, remote_msgs = 0;
    unsigned long long fp0 = 0;
    double t0 = 0, rc0 = 0;
    for (int it = 0; it < phases * (warm + iters); it++) {
        if (it == warm + iters) { /* phase 2: other neighbours; what is counted is this phase's */
            peers = sets[1];
            np = nps[1];
            nremote = nremotes[1];
            remote_msgs = 0;
        }
        if (it % (warm + iters) == warm) {
            MPI_Barrier(MPI_COMM_WORLD);
            fp0 = counter("rcfp.msgs");
            rc0 = rc_msgs();
            t0 = MPI_Wtime();
        }
        for (int ex = 0; ex < EXCHANGES; ex++) {
            int k = 0, slot = 0;
            for (int i = 0; i < np; i++)
                for (int m = 0; m < nmsgs(peers[i].kind); m++, slot++)
                    MPI_Irecv(rbuf + (size_t)slot * BIG, BIG, MPI_BYTE, peers[i].rank, ex * MAXMSG + m, MPI_COMM_WORLD,
                              &req[k++]);
            slot = 0;
            for (int i = 0; i < np; i++)
                for (int m = 0; m < nmsgs(peers[i].kind); m++, slot++) {
                    size_t n = msg_size(rank, peers[i].rank, peers[i].kind, it, ex, m);
                    int *w = (int *)(sbuf + (size_t)slot * BIG);
                    w[0] = rank;
                    w[1] = it;
                    w[2] = ex * MAXMSG + m;
                    w[3] = (int)n;
                    MPI_Isend(w, (int)n, MPI_BYTE, peers[i].rank, ex * MAXMSG + m, MPI_COMM_WORLD, &req[k++]);
                    if (it % (warm + iters) >= warm && peers[i].remote)
                        remote_msgs++;
                }
            MPI_Waitall(k, req, MPI_STATUSES_IGNORE);
            slot = 0;
            for (int i = 0; i < np; i++)
                for (int m = 0; m < nmsgs(peers[i].kind); m++, slot++) {
                    const int *w = (const int *)(rbuf + (size_t)slot * BIG);
                    size_t n = msg_size(peers[i].rank, rank, peers[i].kind, it, ex, m);
                    bad += w[0] != peers[i].rank || w[1] != it || w[2] != ex * MAXMSG + m || w[3] != (int)n;
                }
        }
    }
    double t = MPI_Wtime() - t0;
    unsigned long long fp = counter("rcfp.msgs") - fp0;
    double rc1 = rc_msgs(), rcn = rc0 < 0 || rc1 < 0 ? -1 : rc1 - rc0, rcmin;
    MPI_Reduce(&rcn, &rcmin, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
    double rcsum = 0;
    MPI_Reduce(&rcn, &rcsum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    double mine[6] = { (double)np,
                       (double)nremote,
                       (double)remote_msgs,
                       (double)fp,
                       (double)counter("rcfp.memory") / 1024.0,
                       (double)counter("memory.rc-fp") / 1024.0 };
    double sum[6], max[6], tmax;
    long allbad;
    MPI_Reduce(mine, sum, 6, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(mine, max, 6, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&bad, &allbad, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("# fp_halo: %d ranks (grid %dx%dx%d) on %d nodes, %d exchanges per iteration, %d timed iterations "
               "after %d%s%s\n",
               size, d[0], d[1], d[2], nodes, EXCHANGES, iters, warm,
               two ? "; two phases, the second with the grid places shuffled (its figures)" : "",
               allbad ? "; DATA WRONG" : "");
        char rcs[16] = "-";
        if (rcmin >= 0)
            snprintf(rcs, sizeof rcs, "%.2f", sum[2] > 0 ? 100.0 * rcsum / sum[2] : 0.0);
        printf("# %-22s %5s %5s %6s %6s %9s %7s %7s %10s %10s %10s %9s\n", "config", "ranks", "nodes", "peers",
               "remote", "rmsg/iter", "fp_%", "rc_%", "fpmem_KB", "fpmem_max", "rcfp_KB", "us/iter");
        printf("%-24s %5d %5d %6.1f %6.1f %9.1f %7.2f %7s %10.1f %10.1f %10.1f %9.1f\n", label, size, nodes,
               sum[0] / size, sum[1] / size, sum[2] / size / (iters ? iters : 1),
               sum[2] > 0 ? 100.0 * sum[3] / sum[2] : 0.0, rcs, sum[4] / size, max[4], sum[5] / size,
               1e6 * tmax / (iters ? iters : 1));
    }
    free(node_of);
    free(sets[0]);
    free(sets[1]);
    free(perm);
    free(inv);
    free(rbuf);
    free(sbuf);
    free(req);
    MPI_Comm_free(&node);
    MPI_Finalize();
    return allbad != 0;
}
