/* fft3d: a 3-D FFT of several variables on a 2-D process grid (pencil decomposition), with the
 * Y-Z transpose of one variable in flight as MPI_Ialltoall while the next variable's X and Y
 * transforms compute -- the pipeline of the 001 paper's Figure 2 -- against the same transform
 * with blocking transposes.
 *
 * Grid N x N x N of complex doubles per variable; P = P1 x P2 ranks (MPI_Cart_create, row and
 * column communicators by MPI_Cart_sub). Each variable goes through
 *   X pencils  (x whole, y in N/P1, z in N/P2): FFT along x
 *   transpose X->Y over the row communicator (P1 ranks): MPI_Alltoall
 *   Y pencils  (x in N/P1, y whole, z in N/P2): FFT along y
 *   transpose Y->Z over the column communicator (P2 ranks): MPI_Alltoall / MPI_Ialltoall
 *   Z pencils  (x in N/P1, y in N/P2, z whole): FFT along z
 * Pipelined mode starts variable j's Y->Z transpose with MPI_Ialltoall and computes variable
 * j+1's X and Y stages before waiting for it. Every result is checked against a serial 3-D FFT
 * of the same input (each rank transforms the whole grid itself, for N <= 64 or with -c).
 *
 * usage: fft3d [-n N] [-v VARS] [-r REPS] [-g P1xP2] [-m blocking|pipelined|both] [-c] [-C]
 *   -n N     grid points per dimension, a power of two divisible by P1 and P2 (default 32)
 *   -v VARS  variables transformed per step (default 4)
 *   -r REPS  timed steps per mode (default 5; best and median printed)
 *   -g       process grid (default: MPI_Dims_create, the larger factor as P2, so that the
 *            overlapped transpose is the one that crosses most ranks)
 *   -c / -C  check against the serial transform always / never (default: when N <= 64)
 * Exits 1 when a result is wrong. Plain MPI + C11 complex arithmetic. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* getopt, when built with a plain -std=c11 */
#endif
#include <complex.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef double complex cplx;

#define FFT_PI 3.14159265358979323846 /* M_PI is POSIX, not C11 */

static int N = 32, NV = 4, reps = 5, rank, nranks;
static int P1, P2, c1, c2;  /* grid and my coordinates */
static int nx, ny, nz, ny2; /* local extents: x block N/P1, y block N/P1, z block N/P2, y block N/P2 */
static MPI_Comm rowc, colc; /* X<->Y over P1 ranks, Y<->Z over P2 ranks */
static cplx *tw;            /* twiddles exp(-2 pi i k / N), k < N/2 */
static int *rev;            /* bit reversal of 0..N-1 */

static void die(const char *msg)
{
    fprintf(stderr, "fft3d: rank %d: %s\n", rank, msg);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static void *xalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        die("out of memory");
    return p;
}

/* ---- 1-D FFT: iterative radix-2 Cooley-Tukey, in place on a contiguous line of N points ---- */

static void fft_setup(void)
{
    int bits = 0;
    while ((1 << bits) < N)
        bits++;
    tw = xalloc(sizeof(cplx) * (size_t)(N / 2 > 0 ? N / 2 : 1));
    rev = xalloc(sizeof(int) * (size_t)N);
    for (int k = 0; k < N / 2; k++)
        tw[k] = cexp(-2.0 * FFT_PI * I * (double)k / (double)N);
    for (int i = 0; i < N; i++) {
        int r = 0;
        for (int b = 0; b < bits; b++)
            r |= ((i >> b) & 1) << (bits - 1 - b);
        rev[i] = r;
    }
}

static void fft_line(cplx *a)
{
    for (int i = 0; i < N; i++)
        if (i < rev[i]) {
            cplx t = a[i];
            a[i] = a[rev[i]];
            a[rev[i]] = t;
        }
    for (int len = 2; len <= N; len <<= 1) {
        int half = len / 2, step = N / len;
        for (int s = 0; s < N; s += len)
            for (int k = 0; k < half; k++) {
                cplx w = tw[k * step] * a[s + k + half];
                a[s + k + half] = a[s + k] - w;
                a[s + k] += w;
            }
    }
}

/* FFT of `lines` contiguous lines of N points. */
static void fft_lines(cplx *a, size_t lines)
{
    for (size_t l = 0; l < lines; l++)
        fft_line(a + l * (size_t)N);
}

/* ---- the distributed transform -------------------------------------------------------------- */

/* The input: a smooth part and a pseudo-random part, different per variable. */
static cplx input(int v, int x, int y, int z)
{
    unsigned h =
        (unsigned)v * 73856093u ^ (unsigned)x * 19349663u ^ (unsigned)y * 83492791u ^ (unsigned)z * 2654435761u;
    h ^= h >> 13;
    h *= 0x5bd1e995u;
    h ^= h >> 15;
    double noise = (double)(h & 0xffff) / 65536.0 - 0.5;
    return sin(0.3 * x + v) * cos(0.2 * y) + 0.5 * sin(0.1 * z * (v + 1)) + noise * I;
}

/* X pencil of variable v: A[z][y][x], x whole, y in c1's block, z in c2's block. */
static void fill_x_pencil(int v, cplx *A)
{
    for (int z = 0; z < nz; z++)
        for (int y = 0; y < ny; y++)
            for (int x = 0; x < N; x++)
                A[((size_t)z * ny + y) * N + x] = input(v, x, c1 * ny + y, c2 * nz + z);
}

/* X->Y: pack A[z][y][x] by destination x block, exchange over the row, unpack B[z][x][y]. */
static void pack_xy(const cplx *A, cplx *S)
{
    for (int k = 0; k < P1; k++)
        for (int z = 0; z < nz; z++)
            for (int y = 0; y < ny; y++)
                memcpy(&S[(((size_t)k * nz + z) * ny + y) * nx], &A[((size_t)z * ny + y) * N + (size_t)k * nx],
                       sizeof(cplx) * (size_t)nx);
}

static void unpack_xy(const cplx *R, cplx *B)
{
    for (int k = 0; k < P1; k++)
        for (int z = 0; z < nz; z++)
            for (int y = 0; y < ny; y++)
                for (int x = 0; x < nx; x++)
                    B[((size_t)z * nx + x) * N + (size_t)k * ny + y] = R[(((size_t)k * nz + z) * ny + y) * nx + x];
}

/* Y->Z: pack B[z][x][y] by destination y block (N/P2 wide), unpack C[x][y][z]. */
static void pack_yz(const cplx *B, cplx *S)
{
    for (int k = 0; k < P2; k++)
        for (int z = 0; z < nz; z++)
            for (int x = 0; x < nx; x++)
                memcpy(&S[(((size_t)k * nz + z) * nx + x) * ny2], &B[((size_t)z * nx + x) * N + (size_t)k * ny2],
                       sizeof(cplx) * (size_t)ny2);
}

static void unpack_yz(const cplx *R, cplx *C)
{
    for (int k = 0; k < P2; k++)
        for (int z = 0; z < nz; z++)
            for (int x = 0; x < nx; x++)
                for (int y = 0; y < ny2; y++)
                    C[((size_t)x * ny2 + y) * N + (size_t)k * nz + z] = R[(((size_t)k * nz + z) * nx + x) * ny2 + y];
}

struct var {
    cplx *A, *B, *C, *S, *R; /* pencils, send and receive buffers of the transposes */
    MPI_Request rq;
};

static size_t local_points(void)
{
    return (size_t)N * (size_t)ny * (size_t)nz;
}

/* X and Y stages of variable v, and the Y->Z pack: what the pipeline overlaps. */
static void stages_xy(int v, struct var *w)
{
    fill_x_pencil(v, w->A);
    fft_lines(w->A, (size_t)nz * ny);
    pack_xy(w->A, w->S);
    int blk = (int)(2 * (size_t)nz * ny * nx); /* doubles per destination */
    MPI_Alltoall(w->S, blk, MPI_DOUBLE, w->R, blk, MPI_DOUBLE, rowc);
    unpack_xy(w->R, w->B);
    fft_lines(w->B, (size_t)nz * nx);
    pack_yz(w->B, w->S);
}

static int yz_block(void)
{
    return (int)(2 * (size_t)nz * nx * ny2);
}

static void stage_z(struct var *w)
{
    unpack_yz(w->R, w->C);
    fft_lines(w->C, (size_t)nx * ny2);
}

/* One step: every variable transformed. */
static void step(struct var *w, int pipelined)
{
    if (!pipelined) {
        for (int v = 0; v < NV; v++) {
            stages_xy(v, &w[v]);
            MPI_Alltoall(w[v].S, yz_block(), MPI_DOUBLE, w[v].R, yz_block(), MPI_DOUBLE, colc);
            stage_z(&w[v]);
        }
        return;
    }
    for (int v = 0; v <= NV; v++) {
        if (v < NV) {
            stages_xy(v, &w[v]);
            MPI_Ialltoall(w[v].S, yz_block(), MPI_DOUBLE, w[v].R, yz_block(), MPI_DOUBLE, colc, &w[v].rq);
        }
        if (v > 0) {
            MPI_Wait(&w[v - 1].rq, MPI_STATUS_IGNORE);
            stage_z(&w[v - 1]);
        }
    }
}

/* ---- the serial reference ------------------------------------------------------------------- */

/* Largest |difference| between the distributed result of variable v and a serial transform. */
static double check(int v, const cplx *C)
{
    size_t n3 = (size_t)N * N * N;
    cplx *g = xalloc(sizeof(cplx) * n3), *line = xalloc(sizeof(cplx) * (size_t)N);
    for (int z = 0; z < N; z++)
        for (int y = 0; y < N; y++)
            for (int x = 0; x < N; x++)
                g[((size_t)z * N + y) * N + x] = input(v, x, y, z);
    fft_lines(g, (size_t)N * N); /* along x */
    for (int z = 0; z < N; z++)  /* along y */
        for (int x = 0; x < N; x++) {
            for (int y = 0; y < N; y++)
                line[y] = g[((size_t)z * N + y) * N + x];
            fft_line(line);
            for (int y = 0; y < N; y++)
                g[((size_t)z * N + y) * N + x] = line[y];
        }
    for (int y = 0; y < N; y++) /* along z */
        for (int x = 0; x < N; x++) {
            for (int z = 0; z < N; z++)
                line[z] = g[((size_t)z * N + y) * N + x];
            fft_line(line);
            for (int z = 0; z < N; z++)
                g[((size_t)z * N + y) * N + x] = line[z];
        }
    double worst = 0;
    for (int x = 0; x < nx; x++)
        for (int y = 0; y < ny2; y++)
            for (int z = 0; z < N; z++) {
                cplx want = g[((size_t)z * N + c2 * ny2 + y) * N + c1 * nx + x];
                double d = cabs(C[((size_t)x * ny2 + y) * N + z] - want);
                worst = d > worst ? d : worst;
            }
    free(g);
    free(line);
    return worst;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    int opt, docheck = -1, want_b = 1, want_p = 1;
    P1 = P2 = 0;
    while ((opt = getopt(argc, argv, "n:v:r:g:m:cCh")) != -1) {
        switch (opt) {
        case 'n': N = atoi(optarg); break;
        case 'v': NV = atoi(optarg); break;
        case 'r': reps = atoi(optarg); break;
        case 'g':
            if (sscanf(optarg, "%dx%d", &P1, &P2) != 2)
                die("-g wants P1xP2");
            break;
        case 'm':
            want_b = !strcmp(optarg, "blocking") || !strcmp(optarg, "both");
            want_p = !strcmp(optarg, "pipelined") || !strcmp(optarg, "both");
            if (!want_b && !want_p)
                die("-m wants blocking, pipelined or both");
            break;
        case 'c': docheck = 1; break;
        case 'C': docheck = 0; break;
        default:
            if (rank == 0)
                fprintf(stderr, "usage: fft3d [-n N] [-v VARS] [-r REPS] [-g P1xP2] [-m blocking|pipelined|both] "
                                "[-c|-C]\n");
            MPI_Finalize();
            return opt == 'h' ? 0 : 1;
        }
    }
    if (P1 <= 0 || P2 <= 0) {
        int dims[2] = { 0, 0 };
        MPI_Dims_create(nranks, 2, dims);
        P1 = dims[0] < dims[1] ? dims[0] : dims[1];
        P2 = nranks / P1;
    }
    if (N < 2 || (N & (N - 1)) || NV < 1 || reps < 1 || P1 * P2 != nranks || N % P1 || N % P2)
        die("N must be a power of two divisible by both grid dimensions, P1 x P2 the number of ranks");
    if (docheck < 0)
        docheck = N <= 64;
    int dims[2] = { P1, P2 }, periods[2] = { 0, 0 }, coords[2], keep_row[2] = { 1, 0 }, keep_col[2] = { 0, 1 };
    MPI_Comm cart;
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    MPI_Cart_coords(cart, rank, 2, coords);
    c1 = coords[0];
    c2 = coords[1];
    MPI_Cart_sub(cart, keep_row, &rowc);
    MPI_Cart_sub(cart, keep_col, &colc);
    nx = ny = N / P1;
    nz = ny2 = N / P2;
    fft_setup();

    struct var *w = xalloc(sizeof(struct var) * (size_t)NV);
    size_t pts = local_points();
    for (int v = 0; v < NV; v++) {
        w[v].A = xalloc(sizeof(cplx) * pts);
        w[v].B = xalloc(sizeof(cplx) * pts);
        w[v].C = xalloc(sizeof(cplx) * pts);
        w[v].S = xalloc(sizeof(cplx) * pts);
        w[v].R = xalloc(sizeof(cplx) * pts);
    }
    if (rank == 0)
        printf("fft3d: N=%d, %d variables, %d ranks as %d x %d, %zu points per rank per variable\n", N, NV, nranks, P1,
               P2, pts);
    int bad = 0;
    for (int mode = 0; mode < 2; mode++) {
        if ((mode == 0 && !want_b) || (mode == 1 && !want_p))
            continue;
        double *t = xalloc(sizeof(double) * (size_t)reps);
        step(w, mode); /* warm-up, and the result that is checked */
        if (docheck) {
            double worst = 0;
            for (int v = 0; v < NV; v++) {
                double e = check(v, w[v].C);
                worst = e > worst ? e : worst;
            }
            double all;
            MPI_Allreduce(&worst, &all, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            double tol = 1e-9 * (double)N * N * N;
            if (rank == 0)
                printf("fft3d: %s: largest difference from the serial transform %.3g (tolerance %.3g): %s\n",
                       mode ? "pipelined" : "blocking", all, tol, all <= tol ? "correct" : "WRONG");
            bad |= !(all <= tol);
        }
        for (int k = 0; k < reps; k++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            step(w, mode);
            double mine = MPI_Wtime() - t0;
            MPI_Allreduce(&mine, &t[k], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        }
        qsort(t, (size_t)reps, sizeof *t, cmp_double);
        if (rank == 0)
            printf("fft3d: %-9s time per step (%d variables): best %.3f ms, median %.3f ms\n",
                   mode ? "pipelined" : "blocking", NV, t[0] * 1e3, t[reps / 2] * 1e3);
        free(t);
    }
    for (int v = 0; v < NV; v++) {
        free(w[v].A);
        free(w[v].B);
        free(w[v].C);
        free(w[v].S);
        free(w[v].R);
    }
    free(w);
    free(tw);
    free(rev);
    MPI_Comm_free(&rowc);
    MPI_Comm_free(&colc);
    MPI_Comm_free(&cart);
    MPI_Finalize();
    return bad;
}
