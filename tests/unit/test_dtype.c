/* Datatype engine: flattened maps and the packing cursor against a naive reference that walks
 * the type's structure one basic value at a time. Random seek positions, random piece sizes,
 * pack, unpack and iovec forms; element counts; bounds of a few hand-computed types. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/datatype.h"

static int failures;
#define CHECK(c, ...)                                                                                                  \
    do {                                                                                                               \
        if (!(c)) {                                                                                                    \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                                       \
            fprintf(stderr, __VA_ARGS__);                                                                              \
            fprintf(stderr, "\n");                                                                                     \
            if (++failures > 20)                                                                                       \
                exit(1);                                                                                               \
        }                                                                                                              \
    } while (0)

static uint64_t rng = 88172645463325252ull;
static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* Reference: visit every run of a predefined type's map (from its segs, trusted for predefined
 * types: checked separately below), recursing through the structure of derived types. */
static void ref_walk(const struct aptus_dtype *dt, uintptr_t base, unsigned char **packed, int unpack)
{
    struct aptus_dt_parts p;
    switch (aptus_dt_parts(dt, &p)) {
    case 0:
        for (size_t i = 0; i < dt->nsegs; i++)
            for (size_t r = 0; r < dt->segs[i].count; r++) {
                void *u = (void *)(base + (uintptr_t)(dt->segs[i].disp + (MPI_Aint)r * dt->segs[i].stride));
                if (unpack)
                    memcpy(u, *packed, dt->segs[i].len);
                else
                    memcpy(*packed, u, dt->segs[i].len);
                *packed += dt->segs[i].len;
            }
        return;
    case 1: {
        size_t bl = p.bl ? *p.bl : 1;
        for (size_t i = 0; i < p.count; i++)
            for (size_t k = 0; k < bl; k++)
                ref_walk(p.old, base + (uintptr_t)((MPI_Aint)i * p.stride + (MPI_Aint)k * p.old->extent), packed,
                         unpack);
        return;
    }
    default:
        for (size_t j = 0; j < p.n; j++)
            for (size_t k = 0; k < p.bl[j]; k++)
                ref_walk(p.types[j], base + (uintptr_t)(p.disps[j] + (MPI_Aint)k * p.types[j]->extent), packed, unpack);
    }
}

#define ARENA (1 << 22)
static unsigned char *arena_a, *arena_b, *arena_c;

static void check_type(const char *what, struct aptus_dtype *dt, size_t count)
{
    CHECK(aptus_dt_flatten(dt) == MPI_SUCCESS, "%s: flatten", what);
    size_t total = count * dt->size;
    /* buffer origin in the middle of the arena so negative displacements stay inside */
    uintptr_t base = (uintptr_t)arena_a + ARENA / 2;
    for (size_t i = 0; i < ARENA; i++)
        arena_a[i] = (unsigned char)rnd();
    unsigned char *ref = malloc(total + 1), *got = malloc(total + 1);
    unsigned char *o = ref;
    for (size_t e = 0; e < count; e++)
        ref_walk(dt, base + (uintptr_t)((MPI_Aint)e * dt->extent), &o, 0);
    CHECK((size_t)(o - ref) == total, "%s: reference packed %zu bytes, size*count %zu", what, (size_t)(o - ref), total);

    /* whole pack */
    memset(got, 0xee, total);
    aptus_dt_pack((void *)base, count, dt, got);
    CHECK(memcmp(got, ref, total) == 0, "%s: aptus_dt_pack differs", what);

    /* random pieces from random positions */
    struct aptus_dt_cursor c;
    aptus_dt_cursor_init(&c, (void *)base, count, dt);
    CHECK(c.total == total, "%s: cursor total", what);
    for (int t = 0; t < 200 && total; t++) {
        size_t pos = rnd() % (total + 1), len = rnd() % (rnd() % 4 == 0 ? total + 1 : 64);
        aptus_dt_cursor_seek(&c, pos);
        size_t want = len < total - pos ? len : total - pos;
        size_t n = aptus_dt_pack_some(&c, got, len);
        CHECK(n == want, "%s: pack_some(%zu at %zu) = %zu", what, len, pos, n);
        CHECK(memcmp(got, ref + pos, n) == 0, "%s: pack_some(%zu at %zu) differs", what, len, pos);
        /* continue from there without seeking */
        size_t len2 = rnd() % 100, want2 = len2 < total - pos - n ? len2 : total - pos - n;
        size_t n2 = aptus_dt_pack_some(&c, got, len2);
        CHECK(n2 == want2 && memcmp(got, ref + pos + n, n2) == 0, "%s: pack_some continued", what);
        CHECK(c.pos == pos + n + n2, "%s: cursor pos", what);
    }
    /* sequential pieces cover everything */
    aptus_dt_cursor_init(&c, (void *)base, count, dt);
    size_t done = 0;
    while (done < total) {
        size_t n = aptus_dt_pack_some(&c, got + done, 1 + rnd() % 37);
        CHECK(n > 0, "%s: pack_some stalled", what);
        if (!n)
            break;
        done += n;
    }
    CHECK(memcmp(got, ref, total) == 0, "%s: sequential pieces differ", what);
    CHECK(aptus_dt_pack_some(&c, got, 10) == 0, "%s: pack past the end", what);

    /* unpack: reference unpack into arena_b vs engine unpack into arena_c */
    memset(arena_b, 0, ARENA);
    memset(arena_c, 0, ARENA);
    uintptr_t bb = (uintptr_t)arena_b + ARENA / 2, cb = (uintptr_t)arena_c + ARENA / 2;
    const unsigned char *in = ref;
    for (size_t e = 0; e < count; e++)
        ref_walk(dt, bb + (uintptr_t)((MPI_Aint)e * dt->extent), (unsigned char **)&in, 1);
    aptus_dt_cursor_init(&c, (void *)cb, count, dt);
    done = 0;
    while (done < total) {
        size_t pos = done;
        if (rnd() % 3 == 0)
            aptus_dt_cursor_seek(&c, pos);
        size_t n = aptus_dt_unpack_some(&c, ref + done, 1 + rnd() % 61);
        if (!n)
            break;
        done += n;
    }
    CHECK(done == total, "%s: unpack_some total", what);
    CHECK(memcmp(arena_b, arena_c, ARENA) == 0, "%s: unpack_some differs", what);
    memset(arena_c, 0, ARENA);
    aptus_dt_unpack(ref, count, dt, (void *)cb);
    CHECK(memcmp(arena_b, arena_c, ARENA) == 0, "%s: aptus_dt_unpack differs", what);

    /* iovecs */
    for (int t = 0; t < 20 && total; t++) {
        size_t pos = rnd() % (total + 1);
        aptus_dt_cursor_seek(&c, pos);
        struct iovec iov[7];
        size_t got_bytes = 0;
        while (pos < total) {
            size_t bytes;
            int k = aptus_dt_iov_some(&c, iov, 1 + (int)(rnd() % 7), 1 + rnd() % 200, &bytes);
            CHECK(k > 0 && bytes > 0, "%s: iov_some stalled", what);
            if (k <= 0)
                break;
            size_t sum = 0;
            for (int i = 0; i < k; i++) {
                uintptr_t u = (uintptr_t)iov[i].iov_base;
                CHECK(u >= (uintptr_t)arena_c && u + iov[i].iov_len <= (uintptr_t)arena_c + ARENA,
                      "%s: iovec outside the buffer", what);
                /* the iovec points at cb-relative memory: compare the same place in arena_b */
                CHECK(memcmp(arena_b + (u - (uintptr_t)arena_c), ref + pos + sum, iov[i].iov_len) == 0,
                      "%s: iovec content", what);
                sum += iov[i].iov_len;
            }
            CHECK(sum == bytes, "%s: iov bytes", what);
            pos += bytes;
            got_bytes += bytes;
        }
        (void)got_bytes;
    }
    free(ref);
    free(got);
}

static struct aptus_dtype *P(MPI_Datatype h)
{
    return aptus_dtype_get(h);
}

static struct aptus_dtype *vec(size_t n, size_t bl, MPI_Aint stride_elems, struct aptus_dtype *old)
{
    return aptus_dt_new_hvector(n, bl, stride_elems * old->extent, old);
}

static struct aptus_dtype *indexed(size_t n, const size_t *bl, const MPI_Aint *disp_elems, struct aptus_dtype *old)
{
    MPI_Aint *d = malloc(n * sizeof *d);
    struct aptus_dtype **t = malloc(n * sizeof *t);
    for (size_t i = 0; i < n; i++) {
        d[i] = disp_elems[i] * old->extent;
        t[i] = old;
    }
    struct aptus_dtype *r = aptus_dt_new_struct(n, bl, d, t);
    free(d);
    free(t);
    return r;
}

int main(void)
{
    aptus_datatype_init();
    arena_a = malloc(ARENA);
    arena_b = malloc(ARENA);
    arena_c = malloc(ARENA);

    /* predefined: maps, sizes, contig */
    struct aptus_dtype *si = P(MPI_SHORT_INT), *di = P(MPI_DOUBLE_INT), *dbl = P(MPI_DOUBLE), *in = P(MPI_INT);
    CHECK(si->size == 6 && si->extent == 8 && si->nsegs == 2 && si->segs[1].disp == 4 && !si->contig,
          "MPI_SHORT_INT map");
    CHECK(di->size == 12 && di->extent == 16 && di->nsegs == 1 && !di->contig && di->true_extent == 12,
          "MPI_DOUBLE_INT map");
    CHECK(P(MPI_2INT)->contig && dbl->contig && P(MPI_LONG_DOUBLE_INT)->size == sizeof(long double) + 4,
          "contig flags");
    size_t rn;
    CHECK(aptus_dt_reduce_type(dbl, &rn) == MPI_DOUBLE && rn == 1, "reduce type of MPI_DOUBLE");

    for (size_t count = 1; count <= 5; count += 2) {
        check_type("MPI_SHORT_INT", si, count * 7);
        check_type("MPI_DOUBLE_INT", di, count * 3);
        check_type("MPI_INT", in, count * 11);
    }

    /* vector of doubles: 5 blocks of 3, stride 7 */
    struct aptus_dtype *v = vec(5, 3, 7, dbl);
    aptus_dt_flatten(v);
    CHECK(v->size == 120 && v->extent == (4 * 7 + 3) * 8 && v->nsegs == 1 && v->segs[0].count == 5, "vector map");
    CHECK(aptus_dt_reduce_type(v, &rn) == MPI_DOUBLE && rn == 15, "vector reduce type");
    check_type("vector", v, 1);
    check_type("vector x3", v, 3);

    /* negative stride */
    struct aptus_dtype *vn = vec(4, 2, -3, in);
    CHECK(vn->lb == -9 * 4 && vn->extent == 11 * 4, "negative stride bounds lb %ld extent %ld", (long)vn->lb,
          (long)vn->extent);
    check_type("negative-stride vector", vn, 3);

    /* struct with holes: {int at 0, double at 8, char at 20} -> extent 24 */
    size_t bls[3] = { 1, 1, 1 };
    MPI_Aint disps[3] = { 0, 8, 20 };
    struct aptus_dtype *types[3] = { in, dbl, P(MPI_CHAR) };
    struct aptus_dtype *st = aptus_dt_new_struct(3, bls, disps, types);
    CHECK(st->size == 13 && st->extent == 24 && st->true_extent == 21 && st->nelem == 3, "struct bounds");
    CHECK(aptus_dt_reduce_type(st, &rn) == MPI_DATATYPE_NULL, "struct reduce type");
    check_type("struct", st, 5);
    CHECK(aptus_dt_elements(st, 13 * 2 + 4) == 7, "elements in 2 structs + int");
    CHECK(aptus_dt_elements(st, 13 * 2 + 12) == 8, "elements in 2 structs + int + double");
    CHECK(aptus_dt_elements(st, 13 * 2 + 5) == -1, "elements mid-double");
    CHECK(aptus_dt_elements(si, 6 * 3 + 2) == 7, "elements of MPI_SHORT_INT partial");

    /* vector of struct, vector of vector, resized struct */
    struct aptus_dtype *vs = vec(3, 2, 3, st);
    check_type("vector of struct", vs, 2);
    struct aptus_dtype *vv = aptus_dt_new_hvector(4, 1, 1000, v);
    check_type("vector of vector", vv, 2);
    struct aptus_dtype *rs = aptus_dt_new_resized(st, -8, 40);
    check_type("resized struct", rs, 4);
    struct aptus_dtype *vrs = vec(3, 2, 2, rs);
    check_type("vector of resized", vrs, 2);

    /* indexed with many irregular blocks (binary search in seek) */
    enum { NB = 300 };
    size_t ibl[NB];
    MPI_Aint idisp[NB];
    MPI_Aint at = 0;
    for (int i = 0; i < NB; i++) {
        ibl[i] = 1 + rnd() % 4;
        idisp[i] = at + (MPI_Aint)(rnd() % 3);
        at = idisp[i] + (MPI_Aint)ibl[i] + 1;
    }
    struct aptus_dtype *ix = indexed(NB, ibl, idisp, in);
    check_type("indexed", ix, 3);
    struct aptus_dtype *ixs = indexed(NB, ibl, idisp, st);
    check_type("indexed of struct", ixs, 2);
    /* indexed out of order and overlapping-free */
    size_t obl[3] = { 2, 1, 3 };
    MPI_Aint odisp[3] = { 10, 0, 4 };
    struct aptus_dtype *ox = indexed(3, obl, odisp, si);
    check_type("indexed out of order", ox, 3);

    /* contiguous that merges into one run, and one with gaps from padding */
    struct aptus_dtype *cg = aptus_dt_new_hvector(1, 10, 0, in);
    aptus_dt_flatten(cg);
    CHECK(cg->contig && cg->nsegs == 1, "contiguous int is contig");
    struct aptus_dtype *cdi = aptus_dt_new_hvector(1, 10, 0, di);
    aptus_dt_flatten(cdi);
    CHECK(!cdi->contig, "contiguous double_int is not contig");
    check_type("contiguous double_int", cdi, 2);

    /* merges: a run continuing the last run of a strided piece; a run before a strided piece */
    struct aptus_dtype *v3 = vec(3, 1, 2, in);
    struct aptus_dtype *mt[2] = { v3, in };
    size_t mbl[2] = { 1, 1 };
    MPI_Aint md1[2] = { 0, 20 };
    struct aptus_dtype *m1 = aptus_dt_new_struct(2, mbl, md1, mt);
    aptus_dt_flatten(m1);
    CHECK(m1->nsegs == 2 && m1->segs[0].count == 2 && m1->segs[1].len == 8, "split merge: %zu pieces", m1->nsegs);
    check_type("split merge", m1, 3);
    struct aptus_dtype *mt2[2] = { in, v3 };
    MPI_Aint md2[2] = { -8, 0 };
    struct aptus_dtype *m2 = aptus_dt_new_struct(2, mbl, md2, mt2);
    aptus_dt_flatten(m2);
    CHECK(m2->nsegs == 1 && m2->segs[0].count == 4, "prepend merge: %zu pieces", m2->nsegs);
    check_type("prepend merge", m2, 3);
    aptus_dtype_release(m1);
    aptus_dtype_release(m2);
    aptus_dtype_release(v3);

    /* zero-size types */
    struct aptus_dtype *z = aptus_dt_new_hvector(0, 3, 8, dbl);
    aptus_dt_flatten(z);
    CHECK(z->size == 0 && z->extent == 0 && z->contig, "empty vector");
    CHECK(aptus_dt_elements(z, 0) == 0, "elements of empty type");

    aptus_dtype_release(ox);
    aptus_dtype_release(ixs);
    aptus_dtype_release(ix);
    aptus_dtype_release(vrs);
    aptus_dtype_release(rs);
    aptus_dtype_release(vv);
    aptus_dtype_release(vs);
    aptus_dtype_release(st);
    aptus_dtype_release(vn);
    aptus_dtype_release(v);
    aptus_dtype_release(cg);
    aptus_dtype_release(cdi);
    aptus_dtype_release(z);
    free(arena_a);
    free(arena_b);
    free(arena_c);
    if (failures)
        return 1;
    printf("dtype: all checks passed\n");
    return 0;
}
