/* Datatypes (MPI standard, chapter 5): constructors, commit and free, queries, names,
 * envelope and contents, Fortran 90 parameterised types, addresses. The engine behind them
 * (flattened maps, packing) is core/datatype.c; packing calls are in api/pack.c. */
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/check.h"
#include "core/attr.h"
#include "core/datatype.h"
#include "runtime/lock.h"

/* A datatype argument that may be uncommitted (constructors, queries). */
#define CHK_PTR(p, what, FN)                                                                                           \
    if (!(p))                                                                                                          \
    return aptus_error(NULL, MPI_ERR_ARG, FN, "null %s argument", what)

#define CHK_NCOUNT(n, what, FN)                                                                                        \
    if ((n) < 0)                                                                                                       \
    return aptus_error(NULL, MPI_ERR_COUNT, FN, "negative %s %lld", what, (long long)(n))

/* Counts that are too large for the memory or the address space of this process. */
#define CHK_HUGE(n, what, FN)                                                                                          \
    if ((unsigned long long)(n) > (unsigned long long)(SIZE_MAX / 64))                                                 \
    return aptus_error(NULL, MPI_ERR_COUNT, FN, "%s %lld is too large", what, (long long)(n))

/* count * bl elements of old must have a size that fits in memory. */
static int too_big(MPI_Count count, MPI_Count bl, const struct aptus_dtype *old)
{
    size_t n, bytes;
    return __builtin_mul_overflow((size_t)count, (size_t)bl, &n) || __builtin_mul_overflow(n, old->size, &bytes) ||
           bytes > (size_t)PTRDIFF_MAX;
}

#define CHK_TOO_BIG(count, bl, old, FN)                                                                                \
    if (too_big(count, bl, old))                                                                                       \
    return aptus_error(NULL, MPI_ERR_COUNT, FN, "the datatype would hold more than %td bytes", PTRDIFF_MAX)

static int no_mem(const char *fn)
{
    return aptus_error(NULL, MPI_ERR_NO_MEM, fn, "out of memory creating the datatype");
}

/* An attribute copy (MPI_Type_dup) or delete (MPI_Type_free) failed: out of memory, or the
 * code a user callback returned, which goes to the error handler as it is. */
/* Hands a new type to the user with its contents; on failure frees it. */
static int finish(struct aptus_dtype *d, MPI_Datatype *newtype, const char *fn, int combiner, int large, int ni,
                  const int *ints, int na, const MPI_Aint *addrs, int nc, const MPI_Count *counts, int nd,
                  const MPI_Datatype *types)
{
    if (!d)
        return no_mem(fn);
    if (aptus_dt_set_contents(d, combiner, large, ni, ints, na, addrs, nc, counts, nd, types)) {
        aptus_dtype_release(d);
        return no_mem(fn);
    }
    *newtype = (MPI_Datatype)d;
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------------------------------------ */
/* Block-structured constructors. All go through one of: */

/* count blocks of bl copies of old, block i at i * stride bytes. */
static struct aptus_dtype *make_hvector(MPI_Count count, MPI_Count bl, MPI_Aint stride, struct aptus_dtype *old)
{
    return aptus_dt_new_hvector((size_t)count, (size_t)bl, stride, old);
}

/* n blocks; bl(i) copies of type(i) at disp(i) bytes. Arrays given as MPI_Count (large) or int;
 * disps as MPI_Aint, MPI_Count or int times `unit`; type NULL = `old` for every block. */
struct blocks {
    MPI_Count n;
    const int *bl_i;
    const MPI_Count *bl_c;
    MPI_Count bl_all; /* when both arrays are NULL */
    const int *d_i;
    const MPI_Count *d_c;
    const MPI_Aint *d_a;
    MPI_Aint unit;
    const MPI_Datatype *types;
    struct aptus_dtype *old;
};

static MPI_Count blk_bl(const struct blocks *b, MPI_Count i)
{
    return b->bl_i ? b->bl_i[i] : b->bl_c ? b->bl_c[i] : b->bl_all;
}

static MPI_Aint blk_disp(const struct blocks *b, MPI_Count i)
{
    MPI_Aint d = b->d_i ? b->d_i[i] : b->d_c ? (MPI_Aint)b->d_c[i] : b->d_a[i];
    return d * b->unit;
}

/* Checks the arrays; 0 or the raised error. */
static int check_blocks(const struct blocks *b, const char *fn)
{
    size_t total = 0;
    if (b->n > 0 && !b->bl_i && !b->bl_c && b->bl_all < 0)
        return aptus_error(NULL, MPI_ERR_COUNT, fn, "negative blocklength %lld", (long long)b->bl_all);
    for (MPI_Count i = 0; i < b->n; i++) {
        MPI_Count l = blk_bl(b, i);
        if (l < 0)
            return aptus_error(NULL, MPI_ERR_COUNT, fn, "negative blocklength %lld in block %lld", (long long)l,
                               (long long)i);
        CHK_HUGE(l, "blocklength", fn);
        const struct aptus_dtype *t = b->old;
        if (b->types) {
            t = aptus_dtype_get(b->types[i]);
            if (!t)
                return aptus_error(NULL, MPI_ERR_TYPE, fn, "%s in array_of_types[%lld]",
                                   b->types[i] == MPI_DATATYPE_NULL ? "MPI_DATATYPE_NULL" : "invalid datatype handle",
                                   (long long)i);
        }
        size_t bytes;
        if (__builtin_mul_overflow((size_t)l, t->size, &bytes) || __builtin_add_overflow(total, bytes, &total) ||
            total > (size_t)PTRDIFF_MAX)
            return aptus_error(NULL, MPI_ERR_COUNT, fn, "the datatype would hold more than %td bytes", PTRDIFF_MAX);
    }
    return MPI_SUCCESS;
}

static struct aptus_dtype *make_blocks(const struct blocks *b)
{
    size_t n = (size_t)b->n;
    size_t *bls = malloc((n ? n : 1) * sizeof *bls);
    MPI_Aint *disps = malloc((n ? n : 1) * sizeof *disps);
    struct aptus_dtype **types = malloc((n ? n : 1) * sizeof *types);
    struct aptus_dtype *d = NULL;
    if (bls && disps && types) {
        for (size_t i = 0; i < n; i++) {
            bls[i] = (size_t)blk_bl(b, (MPI_Count)i);
            disps[i] = blk_disp(b, (MPI_Count)i);
            types[i] = b->types ? aptus_dtype_get(b->types[i]) : b->old;
        }
        d = aptus_dt_new_struct(n, bls, disps, types);
    }
    free(bls);
    free(disps);
    free(types);
    return d;
}

/* Common argument checks of the constructors with one old type. */
#define CTOR_START(FN, count, oldtype, newtype)                                                                        \
    API_INIT(FN);                                                                                                      \
    CHK_NCOUNT(count, "count", FN);                                                                                    \
    CHK_HUGE(count, "count", FN);                                                                                      \
    GET_ANY_DTYPE(old, oldtype, FN);                                                                                   \
    CHK_PTR(newtype, "newtype", FN)

int PMPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    APTUS_OUT_NULL(newtype, MPI_DATATYPE_NULL);
    APTUS_API_LOCK();
    CTOR_START("MPI_Type_contiguous", count, oldtype, newtype);
    CHK_TOO_BIG(count, 1, old, "MPI_Type_contiguous");
    return finish(make_hvector(1, count, 0, old), newtype, "MPI_Type_contiguous", MPI_COMBINER_CONTIGUOUS, 0, 1, &count,
                  0, NULL, 0, NULL, 1, &oldtype);
}
APTUS_ALIAS(Type_contiguous)

int PMPI_Type_contiguous_c(MPI_Count count, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    APTUS_OUT_NULL(newtype, MPI_DATATYPE_NULL);
    APTUS_API_LOCK();
    CTOR_START("MPI_Type_contiguous_c", count, oldtype, newtype);
    CHK_TOO_BIG(count, 1, old, "MPI_Type_contiguous_c");
    return finish(make_hvector(1, count, 0, old), newtype, "MPI_Type_contiguous_c", MPI_COMBINER_CONTIGUOUS, 1, 0, NULL,
                  0, NULL, 1, &count, 1, &oldtype);
}
APTUS_ALIAS(Type_contiguous_c)

#define CHK_BL(bl, FN)                                                                                                 \
    if ((bl) < 0)                                                                                                      \
        return aptus_error(NULL, MPI_ERR_COUNT, FN, "negative blocklength %lld", (long long)(bl));                     \
    CHK_HUGE(bl, "blocklength", FN)

int PMPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    APTUS_OUT_NULL(newtype, MPI_DATATYPE_NULL);
    APTUS_API_LOCK();
    CTOR_START("MPI_Type_vector", count, oldtype, newtype);
    CHK_BL(blocklength, "MPI_Type_vector");
    CHK_TOO_BIG(count, blocklength, old, "MPI_Type_vector");
    int ints[3] = { count, blocklength, stride };
    return finish(make_hvector(count, blocklength, (MPI_Aint)stride * old->extent, old), newtype, "MPI_Type_vector",
                  MPI_COMBINER_VECTOR, 0, 3, ints, 0, NULL, 0, NULL, 1, &oldtype);
}
APTUS_ALIAS(Type_vector)

int PMPI_Type_vector_c(MPI_Count count, MPI_Count blocklength, MPI_Count stride, MPI_Datatype oldtype,
                       MPI_Datatype *newtype)
{
    APTUS_OUT_NULL(newtype, MPI_DATATYPE_NULL);
    APTUS_API_LOCK();
    CTOR_START("MPI_Type_vector_c", count, oldtype, newtype);
    CHK_BL(blocklength, "MPI_Type_vector_c");
    CHK_TOO_BIG(count, blocklength, old, "MPI_Type_vector_c");
    MPI_Count c[3] = { count, blocklength, stride };
    return finish(make_hvector(count, blocklength, (MPI_Aint)stride * old->extent, old), newtype, "MPI_Type_vector_c",
                  MPI_COMBINER_VECTOR, 1, 0, NULL, 0, NULL, 3, c, 1, &oldtype);
}
APTUS_ALIAS(Type_vector_c)

/* MPI_Type_create_hvector and MPI-1's MPI_Type_hvector. */
static int hvector_int(const char *fn, int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                       MPI_Datatype *newtype)
{
    CTOR_START(fn, count, oldtype, newtype);
    CHK_BL(blocklength, fn);
    CHK_TOO_BIG(count, blocklength, old, fn);
    int ints[2] = { count, blocklength };
    return finish(make_hvector(count, blocklength, stride, old), newtype, fn, MPI_COMBINER_HVECTOR, 0, 2, ints, 1,
                  &stride, 0, NULL, 1, &oldtype);
}

int PMPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    APTUS_OUT_NULL(newtype, MPI_DATATYPE_NULL);
    APTUS_API_LOCKED(hvector_int("MPI_Type_create_hvector", count, blocklength, stride, oldtype, newtype));
}
APTUS_ALIAS(Type_create_hvector)

int PMPI_Type_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    APTUS_OUT_NULL(newtype, MPI_DATATYPE_NULL);
    APTUS_API_LOCKED(hvector_int("MPI_Type_hvector", count, blocklength, stride, oldtype, newtype));
}
APTUS_ALIAS(Type_hvector)

int PMPI_Type_create_hvector_c(MPI_Count count, MPI_Count blocklength, MPI_Count stride, MPI_Datatype oldtype,
                               MPI_Datatype *newtype)
{
    APTUS_OUT_NULL(newtype, MPI_DATATYPE_NULL);
    APTUS_API_LOCK();
    CTOR_START("MPI_Type_create_hvector_c", count, oldtype, newtype);
    CHK_BL(blocklength, "MPI_Type_create_hvector_c");
    CHK_TOO_BIG(count, blocklength, old, "MPI_Type_create_hvector_c");
    MPI_Count c[3] = { count, blocklength, stride };
    return finish(make_hvector(count, blocklength, (MPI_Aint)stride, old), newtype, "MPI_Type_create_hvector_c",
                  MPI_COMBINER_HVECTOR, 1, 0, NULL, 0, NULL, 3, c, 1, &oldtype);
}
APTUS_ALIAS(Type_create_hvector_c)

/* Builds the ints/counts contents arrays [count, a[0..n), b[0..n)] (b may be NULL). */
static int *ints3(int count, int n1, const int *a, int n2, const int *b, int *ni)
{
    int *v = malloc((size_t)(1 + n1 + n2) * sizeof *v);
    if (!v)
        return NULL;
    v[0] = count;
    int k = 1;
    for (int i = 0; i < n1; i++)
        v[k++] = a[i];
    for (int i = 0; i < n2; i++)
        v[k++] = b[i];
    *ni = k;
    return v;
}

static MPI_Count *counts3(MPI_Count count, MPI_Count n1, const MPI_Count *a, MPI_Count n2, const MPI_Count *b, int *nc)
{
    MPI_Count *v = malloc((size_t)(1 + n1 + n2) * sizeof *v);
    if (!v)
        return NULL;
    v[0] = count;
    MPI_Count k = 1;
    for (MPI_Count i = 0; i < n1; i++)
        v[k++] = a[i];
    for (MPI_Count i = 0; i < n2; i++)
        v[k++] = b[i];
    *nc = (int)k;
    return v;
}

#define CHK_ARRAY(p, count, what, FN)                                                                                  \
    if ((count) > 0 && !(p))                                                                                           \
    return aptus_error(NULL, MPI_ERR_ARG, FN, "null %s", what)

#define CHK_CONTENTS_FIT(n, FN)                                                                                        \
    if ((n) > (INT_MAX - 8) / 3)                                                                                       \
    return aptus_error(NULL, MPI_ERR_COUNT, FN, "count %lld is too large", (long long)(n))

/* The indexed family with int arguments. hdisp: displacements are MPI_Aint bytes. */
static int indexed_int(const char *fn, int combiner, int count, const int *bls, int bl_all, const int *idisps,
                       const MPI_Aint *adisps, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    CTOR_START(fn, count, oldtype, newtype);
    CHK_CONTENTS_FIT(count, fn);
    if (combiner == MPI_COMBINER_INDEXED || combiner == MPI_COMBINER_HINDEXED)
        CHK_ARRAY(bls, count, "array_of_blocklengths", fn);
    CHK_ARRAY(idisps ? (const void *)idisps : (const void *)adisps, count, "array_of_displacements", fn);
    struct blocks b = { .n = count, .bl_i = bls, .bl_all = bl_all, .d_i = idisps, .d_a = adisps, .old = old };
    b.unit = idisps ? old->extent : 1;
    int rc = check_blocks(&b, fn);
    if (rc)
        return rc;
    int ni = 0, *ints;
    switch (combiner) {
    case MPI_COMBINER_INDEXED: ints = ints3(count, count, bls, count, idisps, &ni); break;
    case MPI_COMBINER_HINDEXED: ints = ints3(count, count, bls, 0, NULL, &ni); break;
    case MPI_COMBINER_INDEXED_BLOCK: ints = ints3(count, 1, &bl_all, count, idisps, &ni); break;
    default: ints = ints3(count, 1, &bl_all, 0, NULL, &ni); break;
    }
    if (!ints)
        return no_mem(fn);
    int na = adisps ? count : 0;
    rc = finish(make_blocks(&b), newtype, fn, combiner, 0, ni, ints, na, adisps, 0, NULL, 1, &oldtype);
    free(ints);
    return rc;
}

int PMPI_Type_indexed(int count, const int array_of_blocklengths[], const int array_of_displacements[],
                      MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    APTUS_OUT_NULL(newtype, MPI_DATATYPE_NULL);
    APTUS_API_LOCKED(indexed_int("MPI_Type_indexed", MPI_COMBINER_INDEXED, count, array_of_blocklengths, 0,
                                 array_of_displacements, NULL, oldtype, newtype));
}
APTUS_ALIAS(Type_indexed)

int PMPI_Type_create_hindexed(int count, const int array_of_blocklengths[], const MPI_Aint array_of_displacements[],
                              MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    APTUS_OUT_NULL(newtype, MPI_DATATYPE_NULL);
    APTUS_API_LOCKED(indexed_int("MPI_Type_create_hindexed", MPI_COMBINER_HINDEXED, count, array_of_blocklengths, 0,
                                 NULL, array_of_displacements, oldtype, newtype));
}
APTUS_ALIAS(Type_create_hindexed)

int PMPI_Type_hindexed(int count, int *array_of_blocklengths, MPI_Aint *array_of_displacements, MPI_Datatype oldtype,
                       MPI_Datatype *newtype)
{
    APTUS_OUT_NULL(newtype, MPI_DATATYPE_NULL);
    APTUS_API_LOCKED(indexed_int("MPI_Type_hindexed", MPI_COMBINER_HINDEXED, count, array_of_blocklengths, 0, NULL,
                                 array_of_displacements, oldtype, newtype));
}
APTUS_ALIAS(Type_hindexed)

int PMPI_Type_create_indexed_block(int count, int blocklength, const int array_of_displacements[], MPI_Datatype oldtype,
                                   MPI_Datatype *newtype)
{
    APTUS_OUT_NULL(newtype, MPI_DATATYPE_NULL);
    APTUS_API_LOCKED(indexed_int("MPI_Type_create_indexed_block", MPI_COMBINER_INDEXED_BLOCK, count, NULL, blocklength,
                                 array_of_displacements, NULL, oldtype, newtype));
}
APTUS_ALIAS(Type_create_indexed_block)

int PMPI_Type_create_hindexed_block(int count, int blocklength, const MPI_Aint array_of_displacements[],
                                    MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    APTUS_OUT_NULL(newtype, MPI_DATATYPE_NULL);
    APTUS_API_LOCKED(indexed_int("MPI_Type_create_hindexed_block", MPI_COMBINER_HINDEXED_BLOCK, count, NULL,
                                 blocklength, NULL, array_of_displacements, oldtype, newtype));
}
APTUS_ALIAS(Type_create_hindexed_block)

/* The indexed family with large counts: displacements in elements (indexed) or bytes. */
static int indexed_large(const char *fn, int combiner, MPI_Count count, const MPI_Count *bls, MPI_Count bl_all,
                         const MPI_Count *disps, int in_bytes, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    CTOR_START(fn, count, oldtype, newtype);
    CHK_CONTENTS_FIT(count, fn);
    if (combiner == MPI_COMBINER_INDEXED || combiner == MPI_COMBINER_HINDEXED)
        CHK_ARRAY(bls, count, "array_of_blocklengths", fn);
    CHK_ARRAY(disps, count, "array_of_displacements", fn);
    struct blocks b = { .n = count, .bl_c = bls, .bl_all = bl_all, .d_c = disps, .old = old };
    b.unit = in_bytes ? 1 : old->extent;
    int rc = check_blocks(&b, fn);
    if (rc)
        return rc;
    int nc = 0; /* [count, blocklengths or the blocklength, displacements] */
    MPI_Count *c = bls ? counts3(count, count, bls, count, disps, &nc) : counts3(count, 1, &bl_all, count, disps, &nc);
    if (!c)
        return no_mem(fn);
    rc = finish(make_blocks(&b), newtype, fn, combiner, 1, 0, NULL, 0, NULL, nc, c, 1, &oldtype);
    free(c);
    return rc;
}

int PMPI_Type_indexed_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
                        const MPI_Count array_of_displacements[], MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    APTUS_OUT_NULL(newtype, MPI_DATATYPE_NULL);
    APTUS_API_LOCKED(indexed_large("MPI_Type_indexed_c", MPI_COMBINER_INDEXED, count, array_of_blocklengths, 0,
                                   array_of_displacements, 0, oldtype, newtype));
}
APTUS_ALIAS(Type_indexed_c)

int PMPI_Type_create_hindexed_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
                                const MPI_Count array_of_displacements[], MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    APTUS_OUT_NULL(newtype, MPI_DATATYPE_NULL);
    APTUS_API_LOCKED(indexed_large("MPI_Type_create_hindexed_c", MPI_COMBINER_HINDEXED, count, array_of_blocklengths, 0,
                                   array_of_displacements, 1, oldtype, newtype));
}
APTUS_ALIAS(Type_create_hindexed_c)

int PMPI_Type_create_indexed_block_c(MPI_Count count, MPI_Count blocklength, const MPI_Count array_of_displacements[],
                                     MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    APTUS_OUT_NULL(newtype, MPI_DATATYPE_NULL);
    APTUS_API_LOCKED(indexed_large("MPI_Type_create_indexed_block_c", MPI_COMBINER_INDEXED_BLOCK, count, NULL,
                                   blocklength, array_of_displacements, 0, oldtype, newtype));
}
APTUS_ALIAS(Type_create_indexed_block_c)

int PMPI_Type_create_hindexed_block_c(MPI_Count count, MPI_Count blocklength, const MPI_Count array_of_displacements[],
                                      MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    APTUS_OUT_NULL(newtype, MPI_DATATYPE_NULL);
    APTUS_API_LOCKED(indexed_large("MPI_Type_create_hindexed_block_c", MPI_COMBINER_HINDEXED_BLOCK, count, NULL,
                                   blocklength, array_of_displacements, 1, oldtype, newtype));
}
APTUS_ALIAS(Type_create_hindexed_block_c)

/* MPI_Type_create_struct with int (bl_i, d_a) or, when `large`, MPI_Count (bl_c, d_c) arrays. */
static int create_struct(const char *fn, int large, MPI_Count count, const int *bl_i, const MPI_Aint *d_a,
                         const MPI_Count *bl_c, const MPI_Count *d_c, const MPI_Datatype *types, MPI_Datatype *newtype)
{
    API_INIT(fn);
    CHK_NCOUNT(count, "count", fn);
    CHK_CONTENTS_FIT(count, fn);
    CHK_ARRAY(large ? (const void *)bl_c : (const void *)bl_i, count, "array_of_blocklengths", fn);
    CHK_ARRAY(large ? (const void *)d_c : (const void *)d_a, count, "array_of_displacements", fn);
    CHK_ARRAY(types, count, "array_of_types", fn);
    CHK_PTR(newtype, "newtype", fn);
    struct blocks b = { .n = count, .bl_i = bl_i, .bl_c = bl_c, .d_a = d_a, .d_c = d_c, .unit = 1, .types = types };
    int rc = check_blocks(&b, fn);
    if (rc)
        return rc;
    int n = 0, nt = (int)count;
    if (large) {
        MPI_Count *c = counts3(count, count, bl_c, count, d_c, &n);
        if (!c)
            return no_mem(fn);
        rc = finish(make_blocks(&b), newtype, fn, MPI_COMBINER_STRUCT, 1, 0, NULL, 0, NULL, n, c, nt, types);
        free(c);
    } else {
        int *ints = ints3(nt, nt, bl_i, 0, NULL, &n);
        if (!ints)
            return no_mem(fn);
        rc = finish(make_blocks(&b), newtype, fn, MPI_COMBINER_STRUCT, 0, n, ints, nt, d_a, 0, NULL, nt, types);
        free(ints);
    }
    return rc;
}

int PMPI_Type_create_struct(int count, const int array_of_blocklengths[], const MPI_Aint array_of_displacements[],
                            const MPI_Datatype array_of_types[], MPI_Datatype *newtype)
{
    APTUS_OUT_NULL(newtype, MPI_DATATYPE_NULL);
    APTUS_API_LOCKED(create_struct("MPI_Type_create_struct", 0, count, array_of_blocklengths, array_of_displacements,
                                   NULL, NULL, array_of_types, newtype));
}
APTUS_ALIAS(Type_create_struct)

int PMPI_Type_struct(int count, int *array_of_blocklengths, MPI_Aint *array_of_displacements,
                     MPI_Datatype *array_of_types, MPI_Datatype *newtype)
{
    APTUS_OUT_NULL(newtype, MPI_DATATYPE_NULL);
    APTUS_API_LOCKED(create_struct("MPI_Type_struct", 0, count, array_of_blocklengths, array_of_displacements, NULL,
                                   NULL, array_of_types, newtype));
}
APTUS_ALIAS(Type_struct)

int PMPI_Type_create_struct_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
                              const MPI_Count array_of_displacements[], const MPI_Datatype array_of_types[],
                              MPI_Datatype *newtype)
{
    APTUS_OUT_NULL(newtype, MPI_DATATYPE_NULL);
    APTUS_API_LOCKED(create_struct("MPI_Type_create_struct_c", 1, count, NULL, NULL, array_of_blocklengths,
                                   array_of_displacements, array_of_types, newtype));
}
APTUS_ALIAS(Type_create_struct_c)

static int resized(const char *fn, MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent, MPI_Datatype *newtype, int large)
{
    API_INIT(fn);
    GET_ANY_DTYPE(old, oldtype, fn);
    CHK_PTR(newtype, "newtype", fn);
    MPI_Aint a[2] = { lb, extent };
    MPI_Count c[2] = { lb, extent };
    struct aptus_dtype *d = aptus_dt_new_resized(old, lb, extent);
    return large ? finish(d, newtype, fn, MPI_COMBINER_RESIZED, 1, 0, NULL, 0, NULL, 2, c, 1, &oldtype)
                 : finish(d, newtype, fn, MPI_COMBINER_RESIZED, 0, 0, NULL, 2, a, 0, NULL, 1, &oldtype);
}

int PMPI_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent, MPI_Datatype *newtype)
{
    APTUS_OUT_NULL(newtype, MPI_DATATYPE_NULL);
    APTUS_API_LOCKED(resized("MPI_Type_create_resized", oldtype, lb, extent, newtype, 0));
}
APTUS_ALIAS(Type_create_resized)

int PMPI_Type_create_resized_c(MPI_Datatype oldtype, MPI_Count lb, MPI_Count extent, MPI_Datatype *newtype)
{
    APTUS_OUT_NULL(newtype, MPI_DATATYPE_NULL);
    APTUS_API_LOCKED(resized("MPI_Type_create_resized_c", oldtype, (MPI_Aint)lb, (MPI_Aint)extent, newtype, 1));
}
APTUS_ALIAS(Type_create_resized_c)

/* ------------------------------------------------------------------------------------------ */
/* Subarray and darray: built per dimension, fastest first. Each dimension keeps some runs of
 * indices (start, length) of the type of the next faster dimension, and is resized to the
 * whole dimension, so the result has lb 0 and the extent of the whole array. */

struct run {
    MPI_Count start, len;
};

/* Builds the type of one more (slower) dimension over `inner` (extent = one index step): a
 * block of runs[i].len copies of inner at each runs[i].start, resized to the whole dimension. */
static struct aptus_dtype *dim_type(struct aptus_dtype *inner, const struct run *runs, size_t nruns, MPI_Count gsize)
{
    MPI_Aint step = inner->extent;
    size_t *bls = malloc(nruns * sizeof *bls);
    MPI_Aint *disps = malloc(nruns * sizeof *disps);
    struct aptus_dtype **types = malloc(nruns * sizeof *types);
    struct aptus_dtype *t = NULL;
    if (bls && disps && types) {
        for (size_t i = 0; i < nruns; i++) {
            bls[i] = (size_t)runs[i].len;
            disps[i] = (MPI_Aint)runs[i].start * step;
            types[i] = inner;
        }
        t = aptus_dt_new_struct(nruns, bls, disps, types);
    }
    free(bls);
    free(disps);
    free(types);
    if (!t)
        return NULL;
    struct aptus_dtype *r = aptus_dt_new_resized(t, 0, (MPI_Aint)gsize * step);
    aptus_dtype_release(t);
    return r;
}

/* Chains the dimensions: runs[d] / nruns[d] for each dimension d of ndims, order C or
 * Fortran. Returns the final type (holding the chain) or NULL when out of memory. */
static struct aptus_dtype *build_dims(int ndims, const MPI_Count *gsizes, struct run **runs, const size_t *nruns,
                                      int order, struct aptus_dtype *old)
{
    struct aptus_dtype *t = old;
    aptus_dtype_retain(t);
    for (int k = 0; k < ndims; k++) {
        int d = order == MPI_ORDER_C ? ndims - 1 - k : k;
        struct aptus_dtype *n = dim_type(t, runs[d], nruns[d], gsizes[d]);
        aptus_dtype_release(t);
        if (!n)
            return NULL;
        t = n;
    }
    if (t == old) { /* ndims == 0 cannot happen (checked), but keep a new object */
        struct aptus_dtype *n = aptus_dt_new_dup(old);
        aptus_dtype_release(t);
        t = n;
    }
    return t;
}

static int subarray(const char *fn, int ndims, const int *si, const int *ssi, const int *sti, const MPI_Count *sc,
                    const MPI_Count *ssc, const MPI_Count *stc, int order, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    API_INIT(fn);
    if (ndims <= 0)
        return aptus_error(NULL, MPI_ERR_ARG, fn, "ndims must be positive, got %d", ndims);
    if (ndims > (INT_MAX - 8) / 4)
        return aptus_error(NULL, MPI_ERR_ARG, fn, "ndims %d is too large", ndims);
    int large = sc != NULL;
    if (large ? !sc || !ssc || !stc : !si || !ssi || !sti)
        return aptus_error(NULL, MPI_ERR_ARG, fn, "null array_of_sizes, array_of_subsizes or array_of_starts");
    if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN)
        return aptus_error(NULL, MPI_ERR_ARG, fn, "order must be MPI_ORDER_C or MPI_ORDER_FORTRAN, got %d", order);
    GET_ANY_DTYPE(old, oldtype, fn);
    CHK_PTR(newtype, "newtype", fn);
    MPI_Count *g = malloc((size_t)ndims * sizeof *g);
    struct run *rv = malloc((size_t)ndims * sizeof *rv);
    struct run **runs = malloc((size_t)ndims * sizeof *runs);
    size_t *nruns = malloc((size_t)ndims * sizeof *nruns);
    int rc = MPI_SUCCESS;
    if (!g || !rv || !runs || !nruns) {
        rc = no_mem(fn);
        goto out;
    }
    for (int d = 0; d < ndims; d++) {
        MPI_Count size = large ? sc[d] : si[d], sub = large ? ssc[d] : ssi[d], st = large ? stc[d] : sti[d];
        if (size <= 0) {
            rc = aptus_error(NULL, MPI_ERR_ARG, fn, "array_of_sizes[%d] = %lld must be positive", d, (long long)size);
            goto out;
        }
        if (sub <= 0 || sub > size) {
            rc = aptus_error(NULL, MPI_ERR_ARG, fn, "array_of_subsizes[%d] = %lld must be between 1 and %lld", d,
                             (long long)sub, (long long)size);
            goto out;
        }
        if (st < 0 || st > size - sub) {
            rc = aptus_error(NULL, MPI_ERR_ARG, fn,
                             "array_of_starts[%d] = %lld out of range (size %lld, subsize %lld: 0 to %lld)", d,
                             (long long)st, (long long)size, (long long)sub, (long long)(size - sub));
            goto out;
        }
        g[d] = size;
        rv[d] = (struct run){ st, sub };
        runs[d] = &rv[d];
        nruns[d] = 1;
    }
    struct aptus_dtype *t = build_dims(ndims, g, runs, nruns, order, old);
    if (large) {
        int ints[2] = { ndims, order };
        MPI_Count *c = malloc((size_t)ndims * 3 * sizeof *c);
        if (!c) {
            aptus_dtype_release(t);
            rc = no_mem(fn);
            goto out;
        }
        for (int d = 0; d < ndims; d++) {
            c[d] = sc[d];
            c[ndims + d] = ssc[d];
            c[2 * ndims + d] = stc[d];
        }
        rc = finish(t, newtype, fn, MPI_COMBINER_SUBARRAY, 1, 2, ints, 0, NULL, 3 * ndims, c, 1, &oldtype);
        free(c);
    } else {
        int *ints = malloc((size_t)(3 * ndims + 2) * sizeof *ints);
        if (!ints) {
            aptus_dtype_release(t);
            rc = no_mem(fn);
            goto out;
        }
        ints[0] = ndims;
        for (int d = 0; d < ndims; d++) {
            ints[1 + d] = si[d];
            ints[1 + ndims + d] = ssi[d];
            ints[1 + 2 * ndims + d] = sti[d];
        }
        ints[1 + 3 * ndims] = order;
        rc = finish(t, newtype, fn, MPI_COMBINER_SUBARRAY, 0, 3 * ndims + 2, ints, 0, NULL, 0, NULL, 1, &oldtype);
        free(ints);
    }
out:
    free(g);
    free(rv);
    free(runs);
    free(nruns);
    return rc;
}

int PMPI_Type_create_subarray(int ndims, const int array_of_sizes[], const int array_of_subsizes[],
                              const int array_of_starts[], int order, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    APTUS_OUT_NULL(newtype, MPI_DATATYPE_NULL);
    APTUS_API_LOCKED(subarray("MPI_Type_create_subarray", ndims, array_of_sizes, array_of_subsizes, array_of_starts,
                              NULL, NULL, NULL, order, oldtype, newtype));
}
APTUS_ALIAS(Type_create_subarray)

int PMPI_Type_create_subarray_c(int ndims, const MPI_Count array_of_sizes[], const MPI_Count array_of_subsizes[],
                                const MPI_Count array_of_starts[], int order, MPI_Datatype oldtype,
                                MPI_Datatype *newtype)
{
    APTUS_OUT_NULL(newtype, MPI_DATATYPE_NULL);
    APTUS_API_LOCK();
    if (!array_of_sizes) /* keep `large` detection in subarray() meaningful */
        return aptus_error(NULL, MPI_ERR_ARG, "MPI_Type_create_subarray_c", "null array_of_sizes");
    return subarray("MPI_Type_create_subarray_c", ndims, NULL, NULL, NULL, array_of_sizes, array_of_subsizes,
                    array_of_starts, order, oldtype, newtype);
}
APTUS_ALIAS(Type_create_subarray_c)

/* The indices that process coordinate `coord` of `psize` owns along a dimension of gsize
 * elements: runs into *out (allocated). 0 or an error message. */
static const char *darray_runs(MPI_Count gsize, int distrib, int darg, int psize, int coord, struct run **out,
                               size_t *n)
{
    *out = NULL;
    *n = 0;
    if (distrib == MPI_DISTRIBUTE_NONE) {
        if (psize != 1)
            return "MPI_DISTRIBUTE_NONE needs a process grid size of 1 in that dimension";
        *out = malloc(sizeof **out);
        if (!*out)
            return "out of memory";
        (*out)[0] = (struct run){ 0, gsize };
        *n = 1;
        return NULL;
    }
    MPI_Count b;
    if (distrib == MPI_DISTRIBUTE_BLOCK) {
        if (darg == MPI_DISTRIBUTE_DFLT_DARG)
            b = (gsize + psize - 1) / psize;
        else if (darg <= 0)
            return "the distribution argument must be positive or MPI_DISTRIBUTE_DFLT_DARG";
        else
            b = darg;
        if (b * psize < gsize)
            return "block size times the number of processes is smaller than the dimension";
        MPI_Count st = b * coord, len = gsize - st < b ? gsize - st : b;
        *out = malloc(sizeof **out);
        if (!*out)
            return "out of memory";
        (*out)[0] = (struct run){ st < gsize ? st : 0, len > 0 ? len : 0 };
        *n = 1;
        return NULL;
    }
    if (distrib != MPI_DISTRIBUTE_CYCLIC)
        return "the distribution must be MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC or MPI_DISTRIBUTE_NONE";
    if (darg == MPI_DISTRIBUTE_DFLT_DARG)
        b = 1;
    else if (darg <= 0)
        return "the distribution argument must be positive or MPI_DISTRIBUTE_DFLT_DARG";
    else
        b = darg;
    MPI_Count period = b * psize, first = b * coord;
    size_t cnt = first < gsize ? (size_t)((gsize - first + period - 1) / period) : 0;
    *out = malloc((cnt ? cnt : 1) * sizeof **out);
    if (!*out)
        return "out of memory";
    for (size_t i = 0; i < cnt; i++) {
        MPI_Count st = first + (MPI_Count)i * period;
        (*out)[i] = (struct run){ st, gsize - st < b ? gsize - st : b };
    }
    if (cnt == 0)
        (*out)[cnt++] = (struct run){ 0, 0 };
    *n = cnt;
    return NULL;
}

static int darray(const char *fn, int size, int rank, int ndims, const int *gi, const MPI_Count *gc,
                  const int *distribs, const int *dargs, const int *psizes, int order, MPI_Datatype oldtype,
                  MPI_Datatype *newtype)
{
    API_INIT(fn);
    if (size <= 0)
        return aptus_error(NULL, MPI_ERR_ARG, fn, "size must be positive, got %d", size);
    if (rank < 0 || rank >= size)
        return aptus_error(NULL, MPI_ERR_RANK, fn, "rank %d out of range (size %d)", rank, size);
    if (ndims <= 0 || ndims > (INT_MAX - 8) / 5)
        return aptus_error(NULL, MPI_ERR_ARG, fn, "ndims must be positive, got %d", ndims);
    if ((!gi && !gc) || !distribs || !dargs || !psizes)
        return aptus_error(NULL, MPI_ERR_ARG, fn, "null array argument");
    if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN)
        return aptus_error(NULL, MPI_ERR_ARG, fn, "order must be MPI_ORDER_C or MPI_ORDER_FORTRAN, got %d", order);
    GET_ANY_DTYPE(old, oldtype, fn);
    CHK_PTR(newtype, "newtype", fn);
    long long prod = 1;
    for (int d = 0; d < ndims; d++) {
        if (psizes[d] <= 0)
            return aptus_error(NULL, MPI_ERR_ARG, fn, "array_of_psizes[%d] = %d must be positive", d, psizes[d]);
        prod *= psizes[d];
        if (prod > size)
            break;
        MPI_Count g = gi ? gi[d] : gc[d];
        if (g <= 0)
            return aptus_error(NULL, MPI_ERR_ARG, fn, "array_of_gsizes[%d] = %lld must be positive", d, (long long)g);
    }
    if (prod != size)
        return aptus_error(NULL, MPI_ERR_ARG, fn, "the product of array_of_psizes must equal size %d", size);
    MPI_Count *g = malloc((size_t)ndims * sizeof *g);
    struct run **runs = calloc((size_t)ndims, sizeof *runs);
    size_t *nruns = malloc((size_t)ndims * sizeof *nruns);
    int rc = MPI_SUCCESS;
    if (!g || !runs || !nruns) {
        rc = no_mem(fn);
        goto out;
    }
    /* process coordinates: the process grid is row-major whatever the array order */
    int r = rank;
    for (int d = ndims - 1; d >= 0; d--) {
        int coord = r % psizes[d];
        r /= psizes[d];
        g[d] = gi ? gi[d] : gc[d];
        const char *why = darray_runs(g[d], distribs[d], dargs[d], psizes[d], coord, &runs[d], &nruns[d]);
        if (why) {
            rc = aptus_error(NULL, strcmp(why, "out of memory") ? MPI_ERR_ARG : MPI_ERR_NO_MEM, fn, "dimension %d: %s",
                             d, why);
            goto out;
        }
    }
    struct aptus_dtype *t = build_dims(ndims, g, runs, nruns, order, old);
    int nint = gi ? 4 * ndims + 4 : 3 * ndims + 4;
    int *ints = malloc((size_t)nint * sizeof *ints);
    if (!ints) {
        aptus_dtype_release(t);
        rc = no_mem(fn);
        goto out;
    }
    int k = 0;
    ints[k++] = size;
    ints[k++] = rank;
    ints[k++] = ndims;
    if (gi)
        for (int d = 0; d < ndims; d++)
            ints[k++] = gi[d];
    for (int d = 0; d < ndims; d++)
        ints[k++] = distribs[d];
    for (int d = 0; d < ndims; d++)
        ints[k++] = dargs[d];
    for (int d = 0; d < ndims; d++)
        ints[k++] = psizes[d];
    ints[k++] = order;
    rc = finish(t, newtype, fn, MPI_COMBINER_DARRAY, gi == NULL, k, ints, 0, NULL, gi ? 0 : ndims, gc, 1, &oldtype);
    free(ints);
out:
    if (runs)
        for (int d = 0; d < ndims; d++)
            free(runs[d]);
    free(g);
    free(runs);
    free(nruns);
    return rc;
}

int PMPI_Type_create_darray(int size, int rank, int ndims, const int array_of_gsizes[], const int array_of_distribs[],
                            const int array_of_dargs[], const int array_of_psizes[], int order, MPI_Datatype oldtype,
                            MPI_Datatype *newtype)
{
    APTUS_OUT_NULL(newtype, MPI_DATATYPE_NULL);
    APTUS_API_LOCK();
    if (!array_of_gsizes)
        return aptus_error(NULL, MPI_ERR_ARG, "MPI_Type_create_darray", "null array_of_gsizes");
    return darray("MPI_Type_create_darray", size, rank, ndims, array_of_gsizes, NULL, array_of_distribs, array_of_dargs,
                  array_of_psizes, order, oldtype, newtype);
}
APTUS_ALIAS(Type_create_darray)

int PMPI_Type_create_darray_c(int size, int rank, int ndims, const MPI_Count array_of_gsizes[],
                              const int array_of_distribs[], const int array_of_dargs[], const int array_of_psizes[],
                              int order, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    APTUS_OUT_NULL(newtype, MPI_DATATYPE_NULL);
    APTUS_API_LOCK();
    if (!array_of_gsizes)
        return aptus_error(NULL, MPI_ERR_ARG, "MPI_Type_create_darray_c", "null array_of_gsizes");
    return darray("MPI_Type_create_darray_c", size, rank, ndims, NULL, array_of_gsizes, array_of_distribs,
                  array_of_dargs, array_of_psizes, order, oldtype, newtype);
}
APTUS_ALIAS(Type_create_darray_c)

/* ------------------------------------------------------------------------------------------ */
/* Dup, commit, free. */

int PMPI_Type_dup(MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    APTUS_OUT_NULL(newtype, MPI_DATATYPE_NULL);
    APTUS_API_LOCK();
    const char *fn = "MPI_Type_dup";
    API_INIT(fn);
    GET_ANY_DTYPE(old, oldtype, fn);
    CHK_PTR(newtype, "newtype", fn);
    struct aptus_dtype *d = aptus_dt_new_dup(old);
    MPI_Datatype h = MPI_DATATYPE_NULL;
    int rc = finish(d, &h, fn, MPI_COMBINER_DUP, 0, 0, NULL, 0, NULL, 0, NULL, 1, &oldtype);
    if (rc)
        return rc;
    if (old->committed) {
        if (aptus_dt_flatten(d)) {
            aptus_dtype_release(d);
            return no_mem(fn);
        }
        d->committed = 1;
    }
    rc = aptus_attr_copy_all(APTUS_ATTR_TYPE, (void *)oldtype, old->attrs, (void *)h, &d->attrs);
    if (rc) {
        aptus_dtype_release(d);
        return aptus_error_callback(NULL, rc, fn, "an attribute copy callback");
    }
    *newtype = h;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Type_dup)

int PMPI_Type_commit(MPI_Datatype *datatype)
{
    APTUS_API_LOCK();
    const char *fn = "MPI_Type_commit";
    API_INIT(fn);
    CHK_PTR(datatype, "datatype", fn);
    GET_ANY_DTYPE(d, *datatype, fn);
    if (d->committed)
        return MPI_SUCCESS;
    if (aptus_dt_flatten(d))
        return no_mem(fn);
    d->committed = 1;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Type_commit)

int PMPI_Type_free(MPI_Datatype *datatype)
{
    APTUS_API_LOCK();
    const char *fn = "MPI_Type_free";
    API_INIT(fn);
    CHK_PTR(datatype, "datatype", fn);
    GET_ANY_DTYPE(d, *datatype, fn);
    if (d->predefined)
        return aptus_error(NULL, MPI_ERR_TYPE, fn, "predefined datatype %s cannot be freed", aptus_dtype_name(d));
    if (aptus_dt_handles(d) <= 0)
        return aptus_error(NULL, MPI_ERR_TYPE, fn, "the datatype was already freed");
    /* attributes go with the last handle the user holds */
    int rc = MPI_SUCCESS;
    if (aptus_dt_handles(d) == 1 && d->attrs)
        rc = aptus_attr_delete_all(APTUS_ATTR_TYPE, (void *)*datatype, &d->attrs);
    aptus_dt_handle_free(d);
    *datatype = MPI_DATATYPE_NULL;
    return rc ? aptus_error_callback(NULL, rc, fn, "an attribute delete callback") : MPI_SUCCESS;
}
APTUS_ALIAS(Type_free)

/* ------------------------------------------------------------------------------------------ */
/* Queries. */

int PMPI_Type_size(MPI_Datatype datatype, int *size)
{
    APTUS_API_LOCK();
    GET_ANY_DTYPE(d, datatype, "MPI_Type_size");
    CHK_PTR(size, "size", "MPI_Type_size");
    *size = d->size > INT_MAX ? MPI_UNDEFINED : (int)d->size;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Type_size)

#define SIZE_COUNT_FN(NAME)                                                                                            \
    int PMPI_##NAME(MPI_Datatype datatype, MPI_Count *size)                                                            \
    {                                                                                                                  \
        APTUS_API_LOCK();                                                                                              \
        GET_ANY_DTYPE(d, datatype, "MPI_" #NAME);                                                                      \
        CHK_PTR(size, "size", "MPI_" #NAME);                                                                           \
        *size = (MPI_Count)d->size;                                                                                    \
        return MPI_SUCCESS;                                                                                            \
    }                                                                                                                  \
    APTUS_ALIAS(NAME)

SIZE_COUNT_FN(Type_size_c)
SIZE_COUNT_FN(Type_size_x)

#define EXTENT_FN(NAME, T, LB, EXT)                                                                                    \
    int PMPI_##NAME(MPI_Datatype datatype, T *lb, T *extent)                                                           \
    {                                                                                                                  \
        APTUS_API_LOCK();                                                                                              \
        GET_ANY_DTYPE(d, datatype, "MPI_" #NAME);                                                                      \
        CHK_PTR(lb &&extent, "lb or extent", "MPI_" #NAME);                                                            \
        *lb = (T)d->LB;                                                                                                \
        *extent = (T)d->EXT;                                                                                           \
        return MPI_SUCCESS;                                                                                            \
    }                                                                                                                  \
    APTUS_ALIAS(NAME)

EXTENT_FN(Type_get_extent, MPI_Aint, lb, extent)
EXTENT_FN(Type_get_extent_c, MPI_Count, lb, extent)
EXTENT_FN(Type_get_extent_x, MPI_Count, lb, extent)
EXTENT_FN(Type_get_true_extent, MPI_Aint, true_lb, true_extent)
EXTENT_FN(Type_get_true_extent_c, MPI_Count, true_lb, true_extent)
EXTENT_FN(Type_get_true_extent_x, MPI_Count, true_lb, true_extent)

int PMPI_Type_set_name(MPI_Datatype datatype, const char *type_name)
{
    APTUS_API_LOCK();
    GET_ANY_DTYPE(d, datatype, "MPI_Type_set_name");
    CHK_PTR(type_name, "type_name", "MPI_Type_set_name");
    size_t n = strlen(type_name);
    if (n > MPI_MAX_OBJECT_NAME - 1)
        n = MPI_MAX_OBJECT_NAME - 1;
    memcpy(d->name, type_name, n);
    d->name[n] = 0;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Type_set_name)

int PMPI_Type_get_name(MPI_Datatype datatype, char *type_name, int *resultlen)
{
    APTUS_API_LOCK();
    if (datatype == MPI_DATATYPE_NULL) { /* MPI 4.1: the null handle has a name too */
        CHK_PTR(type_name && resultlen, "type_name or resultlen", "MPI_Type_get_name");
        strcpy(type_name, "MPI_DATATYPE_NULL");
        *resultlen = (int)strlen(type_name);
        return MPI_SUCCESS;
    }
    GET_ANY_DTYPE(d, datatype, "MPI_Type_get_name");
    CHK_PTR(type_name && resultlen, "type_name or resultlen", "MPI_Type_get_name");
    strcpy(type_name, d->name);
    *resultlen = (int)strlen(type_name);
    return MPI_SUCCESS;
}
APTUS_ALIAS(Type_get_name)

/* ------------------------------------------------------------------------------------------ */
/* Envelope and contents. */

static int envelope(MPI_Datatype datatype, MPI_Count *ni, MPI_Count *na, MPI_Count *nc, MPI_Count *nd, int *combiner,
                    int large, const char *fn)
{
    GET_ANY_DTYPE(d, datatype, fn);
    *combiner = d->combiner;
    if (d->combiner == MPI_COMBINER_NAMED) {
        *ni = *na = *nc = *nd = 0;
        return MPI_SUCCESS;
    }
    struct aptus_dt_contents *c = aptus_dt_contents(d);
    if (c->large && !large)
        return aptus_error(NULL, MPI_ERR_TYPE, fn,
                           "the datatype was created with large counts: use MPI_Type_get_envelope_c");
    *ni = c->ni;
    *na = c->na;
    *nc = c->nc;
    *nd = c->nd;
    return MPI_SUCCESS;
}

int PMPI_Type_get_envelope(MPI_Datatype datatype, int *num_integers, int *num_addresses, int *num_datatypes,
                           int *combiner)
{
    APTUS_API_LOCK();
    const char *fn = "MPI_Type_get_envelope";
    CHK_PTR(num_integers && num_addresses && num_datatypes && combiner, "output", fn);
    MPI_Count ni = 0, na = 0, nc = 0, nd = 0;
    int rc = envelope(datatype, &ni, &na, &nc, &nd, combiner, 0, fn);
    if (rc)
        return rc;
    *num_integers = (int)ni;
    *num_addresses = (int)na;
    *num_datatypes = (int)nd;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Type_get_envelope)

int PMPI_Type_get_envelope_c(MPI_Datatype datatype, MPI_Count *num_integers, MPI_Count *num_addresses,
                             MPI_Count *num_large_counts, MPI_Count *num_datatypes, int *combiner)
{
    APTUS_API_LOCK();
    const char *fn = "MPI_Type_get_envelope_c";
    CHK_PTR(num_integers && num_addresses && num_large_counts && num_datatypes && combiner, "output", fn);
    return envelope(datatype, num_integers, num_addresses, num_large_counts, num_datatypes, combiner, 1, fn);
}
APTUS_ALIAS(Type_get_envelope_c)

static int contents(MPI_Datatype datatype, MPI_Count max_i, MPI_Count max_a, MPI_Count max_c, MPI_Count max_d,
                    int *ints, MPI_Aint *addrs, MPI_Count *counts, MPI_Datatype *types, int large, const char *fn)
{
    GET_ANY_DTYPE(d, datatype, fn);
    if (d->combiner == MPI_COMBINER_NAMED)
        return aptus_error(NULL, MPI_ERR_TYPE, fn, "%s is a named predefined datatype: it has no contents",
                           aptus_dtype_name(d));
    struct aptus_dt_contents *c = aptus_dt_contents(d);
    if (c->large && !large)
        return aptus_error(NULL, MPI_ERR_TYPE, fn,
                           "the datatype was created with large counts: use MPI_Type_get_contents_c");
    if (max_i < c->ni || max_a < c->na || max_c < c->nc || max_d < c->nd)
        return aptus_error(NULL, MPI_ERR_ARG, fn,
                           "arrays too small: the datatype has %d integers, %d addresses, %d large counts and %d "
                           "datatypes (see MPI_Type_get_envelope)",
                           c->ni, c->na, c->nc, c->nd);
    if ((c->ni && !ints) || (c->na && !addrs) || (c->nc && !counts) || (c->nd && !types))
        return aptus_error(NULL, MPI_ERR_ARG, fn, "null output array");
    if (c->ni)
        memcpy(ints, c->ints, (size_t)c->ni * sizeof *ints);
    if (c->na)
        memcpy(addrs, c->addrs, (size_t)c->na * sizeof *addrs);
    if (c->nc && counts) /* (checked above; said again for the compiler) */
        memcpy(counts, c->counts, (size_t)c->nc * sizeof *counts);
    for (int i = 0; i < c->nd; i++) {
        /* derived types are handed out as new references that the user frees */
        types[i] = c->types[i];
        aptus_dt_handle_out(aptus_dtype_get(c->types[i]));
    }
    return MPI_SUCCESS;
}

int PMPI_Type_get_contents(MPI_Datatype datatype, int max_integers, int max_addresses, int max_datatypes,
                           int array_of_integers[], MPI_Aint array_of_addresses[], MPI_Datatype array_of_datatypes[])
{
    APTUS_API_LOCKED(contents(datatype, max_integers, max_addresses, 0, max_datatypes, array_of_integers,
                              array_of_addresses, NULL, array_of_datatypes, 0, "MPI_Type_get_contents"));
}
APTUS_ALIAS(Type_get_contents)

int PMPI_Type_get_contents_c(MPI_Datatype datatype, MPI_Count max_integers, MPI_Count max_addresses,
                             MPI_Count max_large_counts, MPI_Count max_datatypes, int array_of_integers[],
                             MPI_Aint array_of_addresses[], MPI_Count array_of_large_counts[],
                             MPI_Datatype array_of_datatypes[])
{
    APTUS_API_LOCKED(contents(datatype, max_integers, max_addresses, max_large_counts, max_datatypes, array_of_integers,
                              array_of_addresses, array_of_large_counts, array_of_datatypes, 1,
                              "MPI_Type_get_contents_c"));
}
APTUS_ALIAS(Type_get_contents_c)

/* ------------------------------------------------------------------------------------------ */
/* Size-matched and Fortran 90 parameterised types. */

int PMPI_Type_match_size(int typeclass, int size, MPI_Datatype *datatype)
{
    APTUS_OUT_NULL(datatype, MPI_DATATYPE_NULL);
    APTUS_API_LOCK();
    const char *fn = "MPI_Type_match_size";
    CHK_PTR(datatype, "datatype", fn);
    MPI_Datatype t = MPI_DATATYPE_NULL;
    switch (typeclass) {
    /* every size each class has among the named types of mpi.h (the Fortran sized ones) */
    case MPI_TYPECLASS_INTEGER:
        t = size == 1    ? MPI_INTEGER1
            : size == 2  ? MPI_INTEGER2
            : size == 4  ? MPI_INTEGER4
            : size == 8  ? MPI_INTEGER8
            : size == 16 ? MPI_INTEGER16
                         : MPI_DATATYPE_NULL;
        break;
    case MPI_TYPECLASS_REAL:
        t = size == 2    ? MPI_REAL2
            : size == 4  ? MPI_REAL4
            : size == 8  ? MPI_REAL8
            : size == 16 ? MPI_REAL16
                         : MPI_DATATYPE_NULL;
        break;
    case MPI_TYPECLASS_COMPLEX:
        t = size == 4    ? MPI_COMPLEX4
            : size == 8  ? MPI_COMPLEX8
            : size == 16 ? MPI_COMPLEX16
            : size == 32 ? MPI_COMPLEX32
                         : MPI_DATATYPE_NULL;
        break;
    default:
        return aptus_error(NULL, MPI_ERR_ARG, fn,
                           "typeclass %d is not MPI_TYPECLASS_INTEGER, MPI_TYPECLASS_REAL or MPI_TYPECLASS_COMPLEX",
                           typeclass);
    }
    if (t == MPI_DATATYPE_NULL)
        return aptus_error(NULL, MPI_ERR_ARG, fn, "no datatype of typeclass %d has size %d", typeclass, size);
    *datatype = t;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Type_match_size)

static int f90_type(int combiner, int p, int r, MPI_Datatype base, MPI_Datatype *newtype, const char *fn)
{
    API_INIT(fn);
    CHK_PTR(newtype, "newtype", fn);
    struct aptus_dtype *t = aptus_dt_f90(combiner, p, r, base);
    if (!t)
        return no_mem(fn);
    *newtype = (MPI_Datatype)t;
    return MPI_SUCCESS;
}

int PMPI_Type_create_f90_integer(int r, MPI_Datatype *newtype)
{
    APTUS_OUT_NULL(newtype, MPI_DATATYPE_NULL);
    APTUS_API_LOCK();
    const char *fn = "MPI_Type_create_f90_integer";
    /* decimal exponent range: INTEGER*1 holds 10^2, *2 10^4, *4 10^9, *8 10^18 */
    MPI_Datatype b = r == MPI_UNDEFINED ? MPI_INTEGER4
                     : r <= 2           ? MPI_INTEGER1
                     : r <= 4           ? MPI_INTEGER2
                     : r <= 9           ? MPI_INTEGER4
                     : r <= 18          ? MPI_INTEGER8
                                        : MPI_DATATYPE_NULL;
    if (b == MPI_DATATYPE_NULL)
        return aptus_error(NULL, MPI_ERR_ARG, fn, "no integer type has a decimal exponent range of %d", r);
    return f90_type(MPI_COMBINER_F90_INTEGER, 0, r, b, newtype, fn);
}
APTUS_ALIAS(Type_create_f90_integer)

/* Real kinds: (precision, range) of binary32, binary64 and long double. */
static MPI_Datatype real_kind(int p, int r, int cplx)
{
    int pu = p == MPI_UNDEFINED, ru = r == MPI_UNDEFINED;
    if ((pu || p <= 6) && (ru || r <= 37))
        return cplx ? MPI_COMPLEX8 : MPI_REAL4;
    if ((pu || p <= 15) && (ru || r <= 307))
        return cplx ? MPI_COMPLEX16 : MPI_REAL8;
    if ((pu || p <= 18) && (ru || r <= 4931))
        return cplx ? MPI_C_LONG_DOUBLE_COMPLEX : MPI_LONG_DOUBLE;
    return MPI_DATATYPE_NULL;
}

static int f90_real_kind(const char *fn, int cplx, int p, int r, MPI_Datatype *newtype)
{
    if (p == MPI_UNDEFINED && r == MPI_UNDEFINED)
        return aptus_error(NULL, MPI_ERR_ARG, fn, "p and r cannot both be MPI_UNDEFINED");
    MPI_Datatype b = real_kind(p, r, cplx);
    if (b == MPI_DATATYPE_NULL)
        return aptus_error(NULL, MPI_ERR_ARG, fn, "no %s type has precision %d and range %d", cplx ? "complex" : "real",
                           p, r);
    return f90_type(cplx ? MPI_COMBINER_F90_COMPLEX : MPI_COMBINER_F90_REAL, p, r, b, newtype, fn);
}

int PMPI_Type_create_f90_real(int p, int r, MPI_Datatype *newtype)
{
    APTUS_OUT_NULL(newtype, MPI_DATATYPE_NULL);
    APTUS_API_LOCKED(f90_real_kind("MPI_Type_create_f90_real", 0, p, r, newtype));
}
APTUS_ALIAS(Type_create_f90_real)

int PMPI_Type_create_f90_complex(int p, int r, MPI_Datatype *newtype)
{
    APTUS_OUT_NULL(newtype, MPI_DATATYPE_NULL);
    APTUS_API_LOCKED(f90_real_kind("MPI_Type_create_f90_complex", 1, p, r, newtype));
}
APTUS_ALIAS(Type_create_f90_complex)

int PMPI_Type_get_value_index(MPI_Datatype value_type, MPI_Datatype index_type, MPI_Datatype *pair_type)
{
    APTUS_OUT_NULL(pair_type, MPI_DATATYPE_NULL);
    APTUS_API_LOCK();
    const char *fn = "MPI_Type_get_value_index";
    GET_ANY_DTYPE(v, value_type, fn);
    GET_ANY_DTYPE(x, index_type, fn);
    CHK_PTR(pair_type, "pair_type", fn);
    (void)v;
    (void)x;
    MPI_Datatype t = MPI_DATATYPE_NULL;
    if (index_type == MPI_INT) {
        t = value_type == MPI_FLOAT         ? MPI_FLOAT_INT
            : value_type == MPI_DOUBLE      ? MPI_DOUBLE_INT
            : value_type == MPI_LONG        ? MPI_LONG_INT
            : value_type == MPI_INT         ? MPI_2INT
            : value_type == MPI_SHORT       ? MPI_SHORT_INT
            : value_type == MPI_LONG_DOUBLE ? MPI_LONG_DOUBLE_INT
                                            : MPI_DATATYPE_NULL;
    } else if (index_type == MPI_INTEGER && value_type == MPI_INTEGER)
        t = MPI_2INTEGER;
    else if (index_type == MPI_REAL && value_type == MPI_REAL)
        t = MPI_2REAL;
    else if (index_type == MPI_DOUBLE_PRECISION && value_type == MPI_DOUBLE_PRECISION)
        t = MPI_2DOUBLE_PRECISION;
    *pair_type = t;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Type_get_value_index)

/* ------------------------------------------------------------------------------------------ */
/* Addresses. */

int PMPI_Get_address(const void *location, MPI_Aint *address)
{
    APTUS_API_LOCK();
    CHK_PTR(address, "address", "MPI_Get_address");
    *address = (MPI_Aint)(uintptr_t)location;
    return MPI_SUCCESS;
}
APTUS_ALIAS(Get_address)

MPI_Aint PMPI_Aint_add(MPI_Aint base, MPI_Aint disp)
{
    APTUS_API_LOCKED((MPI_Aint)((uintptr_t)base + (uintptr_t)disp));
}
APTUS_ALIAS(Aint_add)

MPI_Aint PMPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2)
{
    APTUS_API_LOCKED((MPI_Aint)((uintptr_t)addr1 - (uintptr_t)addr2));
}
APTUS_ALIAS(Aint_diff)
