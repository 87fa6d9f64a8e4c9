/* stencil3d: a 3-D 7-point Jacobi stencil on a 3-D process grid, its halos exchanged either by
 * two-sided MPI_Isend/MPI_Irecv or by one-sided MPI_Put into the neighbours' windows under
 * post-start-complete-wait (generalized active target synchronization), with the interior of the
 * block computed while the halos move in both cases.
 *
 * Global grid N x N x N of doubles, fixed boundary values on the six outer faces (the cells just
 * outside the grid), a pseudo-random initial state inside. One iteration:
 *     v[x][y][z] = (u[x-1][y][z] + u[x+1][y][z] + u[x][y-1][z] + u[x][y+1][z]
 *                   + u[x][y][z-1] + u[x][y][z+1]) / 6
 * then u and v swap. P ranks as P1 x P2 x P3 (MPI_Dims_create, MPI_Cart_create, non-periodic);
 * each rank holds a block of about N/P1 x N/P2 x N/P3 cells with a halo of one cell around it,
 * in two arrays (u and v). Halo faces are described by subarray datatypes (the same datatypes
 * in both modes: a face of my block is sent, a halo plane is the receive buffer / Put target).
 *   twosided  MPI_Irecv of the six halo planes, MPI_Isend of the six boundary faces, the
 *             interior (cells whose stencil needs no halo) computed, MPI_Waitall, then the
 *             boundary shell of the block computed.
 *   put       both arrays allocated by MPI_Win_allocate (the window is the halo'd array
 *             itself, one window per array); per iteration, on the window of u:
 *             MPI_Win_post + MPI_Win_start (group: the Cartesian neighbours), MPI_Put of the
 *             six boundary faces into the neighbours' halo planes, the interior computed,
 *             MPI_Win_complete + MPI_Win_wait, then the boundary shell computed.
 * Per mode: time per iteration (slowest rank) and the communication time not hidden behind
 * the interior: the time spent in the start calls (Irecv/Isend, or post/start/Put) plus the
 * completion calls (Waitall, or complete/wait), per iteration, on the slowest rank. The
 * result of an untimed first run is checked against the same stencil computed serially on
 * rank 0: for N <= 128 the whole grid is gathered and compared cell by cell (the arithmetic is
 * the same, so the difference should be 0); above, weighted checksums of the grid are compared.
 *
 * usage: stencil3d [-n N] [-i ITERS] [-r REPS] [-m twosided|put|both] [-C]
 *   -n N      grid points per dimension (default 64), at least the largest grid dimension
 *   -i ITERS  iterations per run (default 20)
 *   -r REPS   timed runs per mode (default 5; best and median printed)
 *   -m MODE   twosided, put or both (default both)
 *   -C        skip the check against the serial stencil
 * Exits 1 when a result is wrong. Plain MPI + C11. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* getopt, when built with a plain -std=c11 */
#endif

#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define GATHER_MAX_N 128 /* larger grids are checked by checksums */
#define POISON       1e6 /* halo cells that only an exchange fills */

static int N = 64, iters = 20, reps = 5, rank, nranks;
static int dims[3], coords[3];
static int nb[3][2];       /* neighbours: nb[d][0] on the low side of dimension d, nb[d][1] high */
static int ext[3], org[3]; /* my block: extents and global offset */
static MPI_Comm cart;

static void die(const char *msg)
{
    fprintf(stderr, "stencil3d: rank %d: %s\n", rank, msg);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static void *xalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        die("out of memory");
    return p;
}

/* Block c of dimension d: global offset and extent (N split as evenly as possible). */
static void block_of(int d, int c, int *o, int *n)
{
    *o = (int)((long)c * N / dims[d]);
    *n = (int)((long)(c + 1) * N / dims[d]) - *o;
}

/* Index of local cell (i, j, k), 0 and n+1 being halo, in an array of extents n (x slowest). */
static size_t at(const int n[3], int i, int j, int k)
{
    return ((size_t)i * (size_t)(n[1] + 2) + (size_t)j) * (size_t)(n[2] + 2) + (size_t)k;
}

static size_t cells(const int n[3])
{
    return (size_t)(n[0] + 2) * (size_t)(n[1] + 2) * (size_t)(n[2] + 2);
}

/* ---- the problem -------------------------------------------------------------------------- */

/* Initial state of grid cell (x, y, z): pseudo-random in [0, 1). */
static double initial(int x, int y, int z)
{
    unsigned h = (unsigned)x * 73856093u ^ (unsigned)y * 19349663u ^ (unsigned)z * 83492791u;
    h ^= h >> 13;
    h *= 0x5bd1e995u;
    h ^= h >> 15;
    return (double)(h & 0xffff) / 65536.0;
}

/* The fixed value of a cell just outside the grid (one coordinate is -1 or N). */
static double boundary(int x, int y, int z)
{
    return 1.0 + 0.5 * sin(0.2 * x) * cos(0.3 * y) + (double)z / (double)N;
}

/* Fills a halo'd array of extents n at global offset o: interior cells their initial value,
 * halo cells outside the grid their boundary value, halo cells that a neighbour owns POISON
 * (so that an exchange that does not happen shows in the result). */
static void fill(double *u, const int n[3], const int o[3])
{
    for (int i = 0; i <= n[0] + 1; i++)
        for (int j = 0; j <= n[1] + 1; j++)
            for (int k = 0; k <= n[2] + 1; k++) {
                int x = o[0] + i - 1, y = o[1] + j - 1, z = o[2] + k - 1;
                int outside = x < 0 || x >= N || y < 0 || y >= N || z < 0 || z >= N;
                int halo = i == 0 || i == n[0] + 1 || j == 0 || j == n[1] + 1 || k == 0 || k == n[2] + 1;
                u[at(n, i, j, k)] = outside ? boundary(x, y, z) : halo ? POISON : initial(x, y, z);
            }
}

/* v = stencil(u) on the cells (i, j, k0..k1) of a line. */
static void line(const double *restrict u, double *restrict v, const int n[3], int i, int j, int k0, int k1)
{
    size_t sx = (size_t)(n[1] + 2) * (size_t)(n[2] + 2), sy = (size_t)(n[2] + 2);
    size_t c = at(n, i, j, 0);
    for (int k = k0; k <= k1; k++)
        v[c + k] =
            (u[c + k - sx] + u[c + k + sx] + u[c + k - sy] + u[c + k + sy] + u[c + k - 1] + u[c + k + 1]) * (1.0 / 6.0);
}

/* The cells whose stencil reads no halo cell: 2..n-1 in every dimension. */
static void interior(const double *u, double *v, const int n[3])
{
    for (int i = 2; i < n[0]; i++)
        for (int j = 2; j < n[1]; j++)
            line(u, v, n, i, j, 2, n[2] - 1);
}

/* The others: the shell of the block, one cell thick. */
static void shell(const double *u, double *v, const int n[3])
{
    for (int i = 1; i <= n[0]; i++)
        for (int j = 1; j <= n[1]; j++) {
            if (i == 1 || i == n[0] || j == 1 || j == n[1]) {
                line(u, v, n, i, j, 1, n[2]);
            } else {
                line(u, v, n, i, j, 1, 1);
                if (n[2] > 1)
                    line(u, v, n, i, j, n[2], n[2]);
            }
        }
}

/* ---- the halo exchange -------------------------------------------------------------------- */

/* A plane of an array of extents n: index p in dimension d, the block's cells in the others. */
static MPI_Datatype plane(const int n[3], int d, int p)
{
    int sizes[3], sub[3], start[3];
    for (int e = 0; e < 3; e++) {
        sizes[e] = n[e] + 2;
        sub[e] = e == d ? 1 : n[e];
        start[e] = e == d ? p : 1;
    }
    MPI_Datatype t;
    MPI_Type_create_subarray(3, sizes, sub, start, MPI_ORDER_C, MPI_DOUBLE, &t);
    MPI_Type_commit(&t);
    return t;
}

static MPI_Datatype face_send[3][2]; /* my boundary face towards side s of dimension d */
static MPI_Datatype face_recv[3][2]; /* my halo plane on side s of dimension d */
static MPI_Datatype face_put[3][2];  /* the halo plane of neighbour nb[d][s] that my face goes to */

static void make_types(void)
{
    for (int d = 0; d < 3; d++)
        for (int s = 0; s < 2; s++) {
            face_send[d][s] = plane(ext, d, s ? ext[d] : 1);
            face_recv[d][s] = plane(ext, d, s ? ext[d] + 1 : 0);
            face_put[d][s] = MPI_DATATYPE_NULL;
            if (nb[d][s] == MPI_PROC_NULL)
                continue;
            /* the neighbour's block differs from mine in dimension d only */
            int n[3] = { ext[0], ext[1], ext[2] }, o;
            block_of(d, coords[d] + (s ? 1 : -1), &o, &n[d]);
            face_put[d][s] = plane(n, d, s ? 0 : n[d] + 1); /* its halo on the side facing me */
        }
}

static void free_types(void)
{
    for (int d = 0; d < 3; d++)
        for (int s = 0; s < 2; s++) {
            MPI_Type_free(&face_send[d][s]);
            MPI_Type_free(&face_recv[d][s]);
            if (face_put[d][s] != MPI_DATATYPE_NULL)
                MPI_Type_free(&face_put[d][s]);
        }
}

enum { TWOSIDED, PUT, NMODES };
static const char *const mode_name[NMODES] = { "twosided", "put" };

/* One run of `iters` iterations from the initial state; the result ends in a[0]. Returns the
 * time spent in the exchange's start and completion calls, and the whole run's time in *total. */
static double run(int mode, double *a[2], MPI_Win win[2], MPI_Group nbgroup, double *total)
{
    fill(a[0], ext, org);
    fill(a[1], ext, org);
    double comm = 0;
    MPI_Barrier(cart);
    double t_begin = MPI_Wtime();
    for (int it = 0; it < iters; it++) {
        int cur = it & 1;
        double *u = a[cur], *v = a[cur ^ 1];
        double t0 = MPI_Wtime();
        MPI_Request rq[12];
        MPI_Status st[12]; /* not MPI_STATUSES_IGNORE: GCC >= 11 misreads MPICH's as an empty array */
        int nrq = 0;
        if (mode == TWOSIDED) {
            /* the face a neighbour sends towards its side s' is tagged 2 d + s' */
            for (int d = 0; d < 3; d++)
                for (int s = 0; s < 2; s++)
                    if (nb[d][s] != MPI_PROC_NULL)
                        MPI_Irecv(u, 1, face_recv[d][s], nb[d][s], 2 * d + (1 - s), cart, &rq[nrq++]);
            for (int d = 0; d < 3; d++)
                for (int s = 0; s < 2; s++)
                    if (nb[d][s] != MPI_PROC_NULL)
                        MPI_Isend(u, 1, face_send[d][s], nb[d][s], 2 * d + s, cart, &rq[nrq++]);
        } else {
            MPI_Win_post(nbgroup, 0, win[cur]);
            MPI_Win_start(nbgroup, 0, win[cur]);
            for (int d = 0; d < 3; d++)
                for (int s = 0; s < 2; s++)
                    if (nb[d][s] != MPI_PROC_NULL)
                        MPI_Put(u, 1, face_send[d][s], nb[d][s], 0, 1, face_put[d][s], win[cur]);
        }
        double t1 = MPI_Wtime();
        interior(u, v, ext);
        double t2 = MPI_Wtime();
        if (mode == TWOSIDED) {
            MPI_Waitall(nrq, rq, st);
        } else {
            MPI_Win_complete(win[cur]);
            MPI_Win_wait(win[cur]);
        }
        double t3 = MPI_Wtime();
        shell(u, v, ext);
        comm += (t1 - t0) + (t3 - t2);
    }
    *total = MPI_Wtime() - t_begin;
    if (iters & 1) /* the result is in a[1]: bring it to a[0] (halos included, they are alike) */
        memcpy(a[0], a[1], sizeof(double) * cells(ext));
    return comm;
}

/* ---- the serial reference ----------------------------------------------------------------- */

static double *serial; /* rank 0: the whole grid after `iters` iterations, halo'd; NULL until needed */

static void serial_run(void)
{
    int n[3] = { N, N, N }, o[3] = { 0, 0, 0 };
    size_t sz = cells(n);
    double *a = xalloc(sizeof(double) * sz), *b = xalloc(sizeof(double) * sz);
    fill(a, n, o);
    fill(b, n, o);
    for (int it = 0; it < iters; it++) {
        double *u = it & 1 ? b : a, *v = it & 1 ? a : b;
        interior(u, v, n);
        shell(u, v, n);
    }
    serial = iters & 1 ? b : a;
    free(iters & 1 ? a : b);
}

/* A weight per cell for the checksums. */
static double weight(int x, int y, int z)
{
    return 1.0 + (double)((x * 7 + y * 13 + z * 29) % 17) / 17.0;
}

/* Two checksums (plain and weighted sums) of the cells of an array of extents n, offset o. */
static void checksums(const double *u, const int n[3], const int o[3], double sum[2])
{
    sum[0] = sum[1] = 0;
    for (int i = 1; i <= n[0]; i++)
        for (int j = 1; j <= n[1]; j++)
            for (int k = 1; k <= n[2]; k++) {
                double c = u[at(n, i, j, k)];
                sum[0] += c;
                sum[1] += c * weight(o[0] + i - 1, o[1] + j - 1, o[2] + k - 1);
            }
}

/* Compares the distributed result (in u) with the serial one; returns the largest difference
 * on every rank, and the tolerance it is held to in *tol. */
static double check(const double *u, double *tol)
{
    int gn[3] = { N, N, N }, go[3] = { 0, 0, 0 };
    if (rank == 0 && !serial)
        serial_run();
    if (N > GATHER_MAX_N) {
        double mine[2], all[2], want[2] = { 0, 0 };
        checksums(u, ext, org, mine);
        MPI_Reduce(mine, all, 2, MPI_DOUBLE, MPI_SUM, 0, cart);
        if (rank == 0)
            checksums(serial, gn, go, want);
        double worst = fmax(fabs(all[0] - want[0]), fabs(all[1] - want[1]));
        MPI_Bcast(&worst, 1, MPI_DOUBLE, 0, cart);
        *tol = 1e-11 * fmax(1.0, fabs(want[1]));
        MPI_Bcast(tol, 1, MPI_DOUBLE, 0, cart);
        return worst;
    }
    /* gather every block's cells to rank 0 (in block order: x, y, z), compare cell by cell */
    int mycount = ext[0] * ext[1] * ext[2];
    double *mine = xalloc(sizeof(double) * (size_t)mycount);
    size_t m = 0;
    for (int i = 1; i <= ext[0]; i++)
        for (int j = 1; j <= ext[1]; j++)
            for (int k = 1; k <= ext[2]; k++)
                mine[m++] = u[at(ext, i, j, k)];
    int *counts = NULL, *displs = NULL;
    double *all = NULL;
    if (rank == 0) {
        counts = xalloc(sizeof(int) * (size_t)nranks);
        displs = xalloc(sizeof(int) * (size_t)nranks);
        all = xalloc(sizeof(double) * (size_t)N * N * N);
        for (int r = 0, total = 0; r < nranks; r++) {
            int c[3], n[3], o[3];
            MPI_Cart_coords(cart, r, 3, c);
            for (int d = 0; d < 3; d++)
                block_of(d, c[d], &o[d], &n[d]);
            counts[r] = n[0] * n[1] * n[2];
            displs[r] = total;
            total += counts[r];
        }
    }
    MPI_Gatherv(mine, mycount, MPI_DOUBLE, all, counts, displs, MPI_DOUBLE, 0, cart);
    double worst = 0;
    if (rank == 0) {
        for (int r = 0; r < nranks; r++) {
            int c[3], n[3], o[3];
            MPI_Cart_coords(cart, r, 3, c);
            for (int d = 0; d < 3; d++)
                block_of(d, c[d], &o[d], &n[d]);
            const double *p = all + displs[r];
            for (int i = 0; i < n[0]; i++)
                for (int j = 0; j < n[1]; j++)
                    for (int k = 0; k < n[2]; k++) {
                        double want = serial[at(gn, o[0] + i + 1, o[1] + j + 1, o[2] + k + 1)];
                        double diff = fabs(*p++ - want);
                        if (!(diff <= worst)) /* NaN counts as the worst */
                            worst = isnan(diff) ? INFINITY : diff;
                    }
        }
        free(counts);
        free(displs);
        free(all);
    }
    free(mine);
    MPI_Bcast(&worst, 1, MPI_DOUBLE, 0, cart);
    *tol = 1e-12;
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
    int opt, docheck = 1, want[NMODES] = { 1, 1 };
    while ((opt = getopt(argc, argv, "n:i:r:m:Ch")) != -1) {
        switch (opt) {
        case 'n': N = atoi(optarg); break;
        case 'i': iters = atoi(optarg); break;
        case 'r': reps = atoi(optarg); break;
        case 'm':
            want[TWOSIDED] = !strcmp(optarg, "twosided") || !strcmp(optarg, "both");
            want[PUT] = !strcmp(optarg, "put") || !strcmp(optarg, "both");
            if (!want[TWOSIDED] && !want[PUT])
                die("-m wants twosided, put or both");
            break;
        case 'C': docheck = 0; break;
        default:
            if (rank == 0)
                fprintf(stderr, "usage: stencil3d [-n N] [-i ITERS] [-r REPS] [-m twosided|put|both] [-C]\n");
            MPI_Finalize();
            return opt == 'h' ? 0 : 1;
        }
    }
    MPI_Dims_create(nranks, 3, dims);
    if (N < dims[0] || iters < 1 || reps < 1)
        die("N must be at least the largest process grid dimension, ITERS and REPS at least 1");
    int periods[3] = { 0, 0, 0 };
    MPI_Cart_create(MPI_COMM_WORLD, 3, dims, periods, 0, &cart);
    MPI_Comm_rank(cart, &rank);
    MPI_Cart_coords(cart, rank, 3, coords);
    for (int d = 0; d < 3; d++) {
        MPI_Cart_shift(cart, d, 1, &nb[d][0], &nb[d][1]);
        block_of(d, coords[d], &org[d], &ext[d]);
    }
    make_types();

    /* the group of my neighbours: the ranks that put into my window and that I put into */
    MPI_Group cartgroup, nbgroup;
    int nbranks[6], nnb = 0;
    for (int d = 0; d < 3; d++)
        for (int s = 0; s < 2; s++) {
            int dup = nb[d][s] == MPI_PROC_NULL;
            for (int q = 0; q < nnb && !dup; q++)
                dup = nbranks[q] == nb[d][s];
            if (!dup)
                nbranks[nnb++] = nb[d][s];
        }
    MPI_Comm_group(cart, &cartgroup);
    MPI_Group_incl(cartgroup, nnb, nbranks, &nbgroup);

    int big[3];
    for (int d = 0; d < 3; d++)
        big[d] = (N + dims[d] - 1) / dims[d];
    if (rank == 0)
        printf("stencil3d: N=%d, %d iterations, %d ranks as %d x %d x %d, blocks up to %d x %d x %d cells, 7-point "
               "Jacobi, fixed boundaries; check: %s\n",
               N, iters, nranks, dims[0], dims[1], dims[2], big[0], big[1], big[2],
               !docheck            ? "none"
               : N <= GATHER_MAX_N ? "every cell against a serial run on rank 0"
                                   : "checksums against a serial run on rank 0");

    size_t bytes = sizeof(double) * cells(ext);
    /* the window rounded up to 64 bytes: Debian's MPICH 4.0.2 misplaces Puts into a neighbour's
     * MPI_Win_allocate memory when a lower rank's size is not a multiple of 16 bytes */
    size_t winbytes = (bytes + 63) / 64 * 64;
    int bad = 0;
    for (int mode = 0; mode < NMODES; mode++) {
        if (!want[mode])
            continue;
        double *a[2];
        MPI_Win win[2] = { MPI_WIN_NULL, MPI_WIN_NULL };
        if (mode == PUT) {
            MPI_Info info;
            MPI_Info_create(&info);
            MPI_Info_set(info, "no_locks", "true"); /* active target only */
            for (int b = 0; b < 2; b++)
                MPI_Win_allocate((MPI_Aint)winbytes, (int)sizeof(double), info, cart, &a[b], &win[b]);
            MPI_Info_free(&info);
        } else {
            a[0] = xalloc(bytes);
            a[1] = xalloc(bytes);
        }
        double total, comm = run(mode, a, win, nbgroup, &total); /* warm-up; its result is checked */
        if (docheck) {
            double tol, diff = check(a[0], &tol);
            int ok = diff <= tol;
            if (rank == 0)
                printf("stencil3d: %s result: %s (largest %s from the serial stencil %.3g, tolerance %.3g)\n",
                       mode_name[mode], ok ? "correct" : "WRONG",
                       N <= GATHER_MAX_N ? "difference of a cell" : "difference of the checksums", diff, tol);
            bad |= !ok;
        }
        double *t = xalloc(sizeof(double) * (size_t)reps), *c = xalloc(sizeof(double) * (size_t)reps);
        for (int k = 0; k < reps; k++) {
            comm = run(mode, a, win, nbgroup, &total);
            double mine[2] = { total / iters, comm / iters }, slowest[2];
            MPI_Allreduce(mine, slowest, 2, MPI_DOUBLE, MPI_MAX, cart);
            t[k] = slowest[0];
            c[k] = slowest[1];
        }
        qsort(t, (size_t)reps, sizeof *t, cmp_double);
        qsort(c, (size_t)reps, sizeof *c, cmp_double);
        if (rank == 0)
            printf("stencil3d: %-8s time per iteration: best %.1f us, median %.1f us; communication not hidden "
                   "(start + completion calls): best %.1f us, median %.1f us (%.0f %% of the median iteration)\n",
                   mode_name[mode], t[0] * 1e6, t[reps / 2] * 1e6, c[0] * 1e6, c[reps / 2] * 1e6,
                   100.0 * c[reps / 2] / t[reps / 2]);
        free(t);
        free(c);
        if (mode == PUT) {
            MPI_Win_free(&win[0]);
            MPI_Win_free(&win[1]);
        } else {
            free(a[0]);
            free(a[1]);
        }
    }
    free(serial);
    free_types();
    MPI_Group_free(&nbgroup);
    MPI_Group_free(&cartgroup);
    MPI_Comm_free(&cart);
    MPI_Finalize();
    return bad;
}
