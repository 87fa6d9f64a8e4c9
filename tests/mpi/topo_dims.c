/* MPI_Dims_create against a table: balanced factorisations in non-increasing order, fixed
 * (non-zero) entries kept, impossible inputs rejected with MPI_ERR_DIMS. Every result is also
 * checked for the properties the standard asks (product, fixed entries, order), and the table
 * against an exhaustive serial search for the most balanced split. One rank is enough. */
#include "mtest.h"

/* The standard names no class for this error: either of two is right. */
#define CHECK_ERRCLASS2(rc, c1, c2, what)                                                                              \
    do {                                                                                                               \
        int cls_ = -1, rc_ = (rc);                                                                                     \
        MPI_Error_class(rc_, &cls_);                                                                                   \
        CHECK(rc_ != MPI_SUCCESS && (cls_ == (c1) || cls_ == (c2)), "%s: expected class %s or %s, got %d", (what),     \
              #c1, #c2, rc_ == MPI_SUCCESS ? 0 : cls_);                                                                \
    } while (0)

struct row {
    int nnodes, ndims;
    int in[6];
    int out[6]; /* out[0] == -1: MPI_ERR_DIMS */
};

static const struct row table[] = {
    { 6, 2, { 0, 0 }, { 3, 2 } },
    { 7, 2, { 0, 0 }, { 7, 1 } },
    { 6, 3, { 0, 3, 0 }, { 2, 3, 1 } },
    { 7, 3, { 0, 3, 0 }, { -1 } },
    { 1, 3, { 0, 0, 0 }, { 1, 1, 1 } },
    { 16, 2, { 0, 0 }, { 4, 4 } },
    { 16, 3, { 0, 0, 0 }, { 4, 2, 2 } },
    { 12, 2, { 0, 0 }, { 4, 3 } },
    { 12, 3, { 0, 0, 0 }, { 3, 2, 2 } },
    { 24, 3, { 0, 0, 0 }, { 4, 3, 2 } },
    { 30, 3, { 0, 0, 0 }, { 5, 3, 2 } },
    { 64, 3, { 0, 0, 0 }, { 4, 4, 4 } },
    { 100, 2, { 0, 0 }, { 10, 10 } },
    { 36, 4, { 0, 0, 0, 0 }, { 3, 3, 2, 2 } },
    { 2, 4, { 0, 0, 0, 0 }, { 2, 1, 1, 1 } },
    { 210, 4, { 0, 0, 0, 0 }, { 7, 5, 3, 2 } },
    { 1024, 3, { 0, 0, 0 }, { 16, 8, 8 } },
    { 96, 3, { 0, 0, 0 }, { 6, 4, 4 } },
    { 60, 3, { 0, 0, 0 }, { 5, 4, 3 } },
    { 10, 2, { 0, 5 }, { 2, 5 } },
    { 10, 2, { 5, 2 }, { 5, 2 } },
    { 10, 2, { 5, 3 }, { -1 } },
    { 12, 3, { 2, 0, 2 }, { 2, 3, 2 } },
    { 13, 1, { 0 }, { 13 } },
    { 1000000, 3, { 0, 0, 0 }, { 100, 100, 100 } },
    { 97 * 89, 2, { 0, 0 }, { 97, 89 } },
    { 120, 5, { 0, 0, 0, 0, 0 }, { 5, 3, 2, 2, 2 } },
    { 8, 6, { 0, 0, 2, 0, 0, 0 }, { 2, 2, 2, 1, 1, 1 } },
    /* equal spreads: the larger smallest factor wins (as in MPICH's table) */
    { 5040, 3, { 0, 0, 0 }, { 21, 16, 15 } },
    { 5616, 4, { 0, 0, 0, 0 }, { 13, 9, 8, 6 } },
};

static int spread_of(const int *d, const int *in, int nd)
{
    int mx = 0, mn = 1 << 30, any = 0;
    for (int i = 0; i < nd; i++)
        if (in[i] == 0) {
            any = 1;
            if (d[i] > mx)
                mx = d[i];
            if (d[i] < mn)
                mn = d[i];
        }
    return any ? mx - mn : 0;
}

/* the smallest spread over all non-increasing factorisations of n into k factors <= limit */
static int min_spread(int n, int k, int limit, int top)
{
    if (k == 1)
        return n > limit ? 1 << 30 : top < 0 ? 0 : top - n;
    int best = 1 << 30;
    for (int f = limit < n ? limit : n; f >= 1; f--) {
        if (n % f)
            continue;
        int s = min_spread(n / f, k - 1, f, top < 0 ? f : top);
        if (s < best)
            best = s;
    }
    return best;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    for (size_t t = 0; t < sizeof table / sizeof table[0]; t++) {
        const struct row *r = &table[t];
        int d[6];
        memcpy(d, r->in, sizeof d);
        int rc = MPI_Dims_create(r->nnodes, r->ndims, d);
        if (r->out[0] == -1) {
            CHECK_ERRCLASS(rc, MPI_ERR_DIMS, "impossible Dims_create");
            continue;
        }
        CHECK(rc == MPI_SUCCESS, "Dims_create(%d, %d) failed: %s", r->nnodes, r->ndims, mtest_errstr(rc));
        long long prod = 1;
        int fixed_prod = 1, nfree = 0;
        for (int i = 0; i < r->ndims; i++) {
            CHECK(d[i] == r->out[i], "Dims_create(%d, %d) row %zu: dims[%d] = %d, want %d", r->nnodes, r->ndims, t, i,
                  d[i], r->out[i]);
            prod *= d[i];
            if (r->in[i])
                fixed_prod *= r->in[i];
            else
                nfree++;
        }
        CHECK(prod == r->nnodes, "row %zu: product %lld", t, prod);
        /* the table itself: the free entries are a most balanced split */
        if (nfree > 0) {
            int best = min_spread(r->nnodes / fixed_prod, nfree, r->nnodes / fixed_prod, -1);
            CHECK(spread_of(d, r->in, r->ndims) == best, "row %zu: spread %d, the best is %d", t,
                  spread_of(d, r->in, r->ndims), best);
        }
        int last = 1 << 30;
        for (int i = 0; i < r->ndims; i++)
            if (r->in[i] == 0) {
                CHECK(d[i] <= last, "row %zu: free entries not in non-increasing order", t);
                last = d[i];
            }
    }
    /* argument errors */
    int d[3] = { 0, -1, 0 };
    CHECK_ERRCLASS(MPI_Dims_create(6, 3, d), MPI_ERR_DIMS, "negative entry");
    CHECK_ERRCLASS2(MPI_Dims_create(6, -1, d), MPI_ERR_DIMS, MPI_ERR_ARG, "negative ndims");
    d[1] = 0;
    if (!mtest_known_bug("dims_create_zero_nodes_hangs")) /* MPICH 4.0 loops forever */
        CHECK_ERRCLASS(MPI_Dims_create(0, 3, d), MPI_ERR_ARG, "nnodes 0");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
    return mtest_finalize();
}
