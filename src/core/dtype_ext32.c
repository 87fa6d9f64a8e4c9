/* The "external32" data representation (MPI standard, section "External Data Representation:
 * external32"): every basic value big-endian, integers in two's complement, floating point in
 * IEEE binary32/binary64/binary128, with the standard's fixed sizes (MPI_LONG is 4 bytes, as in
 * the standard's table: values that do not fit are truncated); no padding anywhere.
 * Used by MPI_Pack_external / MPI_Unpack_external. */
#include <float.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/datatype.h"

enum { C_NONE, C_INT, C_UINT, C_FLOAT, C_LDOUBLE, C_BYTES };

/* One basic value inside a predefined type: kind, bytes in memory, bytes in external32. */
struct comp {
    int kind;
    size_t mem, ext;
    size_t off; /* offset in memory */
};

#define ONE(K, M, E)                                                                                                   \
    do {                                                                                                               \
        c[0] = (struct comp){ K, M, E, 0 };                                                                            \
        return 1;                                                                                                      \
    } while (0)
#define TWO(K1, M1, E1, K2, M2, E2, OFF2)                                                                              \
    do {                                                                                                               \
        c[0] = (struct comp){ K1, M1, E1, 0 };                                                                         \
        c[1] = (struct comp){ K2, M2, E2, OFF2 };                                                                      \
        return 2;                                                                                                      \
    } while (0)
struct pf {
    float v;
    int k;
};
struct pd {
    double v;
    int k;
};
struct pl {
    long v;
    int k;
};
struct ps {
    short v;
    int k;
};
struct pld {
    long double v;
    int k;
};
#define PAIR_OFF(S) offsetof(struct S, k)

/* The basic values of a predefined type; 0 when it has no external32 form. */
static int comps(MPI_Datatype h, struct comp c[2])
{
    switch ((uintptr_t)h) {
    case (uintptr_t)MPI_PACKED:
    case (uintptr_t)MPI_BYTE:
    case (uintptr_t)MPI_CHAR:
    case (uintptr_t)MPI_CHARACTER: ONE(C_BYTES, 1, 1);
    case (uintptr_t)MPI_SIGNED_CHAR:
    case (uintptr_t)MPI_INT8_T:
    case (uintptr_t)MPI_INTEGER1: ONE(C_INT, 1, 1);
    case (uintptr_t)MPI_UNSIGNED_CHAR:
    case (uintptr_t)MPI_UINT8_T:
    case (uintptr_t)MPI_C_BOOL:
    case (uintptr_t)MPI_CXX_BOOL:
    case (uintptr_t)MPI_LOGICAL1: ONE(C_UINT, sizeof(_Bool), 1);
    case (uintptr_t)MPI_WCHAR: ONE(C_UINT, sizeof(wchar_t), 2);
    case (uintptr_t)MPI_SHORT:
    case (uintptr_t)MPI_INT16_T:
    case (uintptr_t)MPI_INTEGER2: ONE(C_INT, 2, 2);
    case (uintptr_t)MPI_UNSIGNED_SHORT:
    case (uintptr_t)MPI_UINT16_T:
    case (uintptr_t)MPI_LOGICAL2: ONE(C_UINT, 2, 2);
    case (uintptr_t)MPI_INT:
    case (uintptr_t)MPI_INT32_T:
    case (uintptr_t)MPI_INTEGER:
    case (uintptr_t)MPI_INTEGER4: ONE(C_INT, 4, 4);
    case (uintptr_t)MPI_UNSIGNED:
    case (uintptr_t)MPI_UINT32_T:
    case (uintptr_t)MPI_LOGICAL:
    case (uintptr_t)MPI_LOGICAL4: ONE(C_UINT, 4, 4);
    case (uintptr_t)MPI_LONG: ONE(C_INT, sizeof(long), 4); /* external32 long is 4 bytes */
    case (uintptr_t)MPI_UNSIGNED_LONG: ONE(C_UINT, sizeof(long), 4);
    case (uintptr_t)MPI_LONG_LONG:
    case (uintptr_t)MPI_INT64_T:
    case (uintptr_t)MPI_INTEGER8:
    case (uintptr_t)MPI_AINT:
    case (uintptr_t)MPI_COUNT:
    case (uintptr_t)MPI_OFFSET: ONE(C_INT, 8, 8);
    case (uintptr_t)MPI_UNSIGNED_LONG_LONG:
    case (uintptr_t)MPI_UINT64_T:
    case (uintptr_t)MPI_LOGICAL8: ONE(C_UINT, 8, 8);
    case (uintptr_t)MPI_FLOAT:
    case (uintptr_t)MPI_REAL:
    case (uintptr_t)MPI_REAL4: ONE(C_FLOAT, 4, 4);
    case (uintptr_t)MPI_DOUBLE:
    case (uintptr_t)MPI_DOUBLE_PRECISION:
    case (uintptr_t)MPI_REAL8: ONE(C_FLOAT, 8, 8);
    case (uintptr_t)MPI_LONG_DOUBLE: ONE(C_LDOUBLE, sizeof(long double), 16);
    case (uintptr_t)MPI_C_FLOAT_COMPLEX:
    case (uintptr_t)MPI_CXX_FLOAT_COMPLEX:
    case (uintptr_t)MPI_COMPLEX:
    case (uintptr_t)MPI_COMPLEX8:
    case (uintptr_t)MPI_2REAL: TWO(C_FLOAT, 4, 4, C_FLOAT, 4, 4, 4);
    case (uintptr_t)MPI_C_DOUBLE_COMPLEX:
    case (uintptr_t)MPI_CXX_DOUBLE_COMPLEX:
    case (uintptr_t)MPI_DOUBLE_COMPLEX:
    case (uintptr_t)MPI_COMPLEX16:
    case (uintptr_t)MPI_2DOUBLE_PRECISION: TWO(C_FLOAT, 8, 8, C_FLOAT, 8, 8, 8);
    case (uintptr_t)MPI_C_LONG_DOUBLE_COMPLEX:
    case (uintptr_t)MPI_CXX_LONG_DOUBLE_COMPLEX:
        TWO(C_LDOUBLE, sizeof(long double), 16, C_LDOUBLE, sizeof(long double), 16, sizeof(long double));
    case (uintptr_t)MPI_2INT:
    case (uintptr_t)MPI_2INTEGER: TWO(C_INT, 4, 4, C_INT, 4, 4, 4);
    case (uintptr_t)MPI_FLOAT_INT: TWO(C_FLOAT, 4, 4, C_INT, 4, 4, PAIR_OFF(pf));
    case (uintptr_t)MPI_DOUBLE_INT: TWO(C_FLOAT, 8, 8, C_INT, 4, 4, PAIR_OFF(pd));
    case (uintptr_t)MPI_LONG_INT: TWO(C_INT, sizeof(long), 4, C_INT, 4, 4, PAIR_OFF(pl));
    case (uintptr_t)MPI_SHORT_INT: TWO(C_INT, 2, 2, C_INT, 4, 4, PAIR_OFF(ps));
    case (uintptr_t)MPI_LONG_DOUBLE_INT: TWO(C_LDOUBLE, sizeof(long double), 16, C_INT, 4, 4, PAIR_OFF(pld));
    default: return 0;
    }
}

size_t aptus_dt_ext32_basic_size(MPI_Datatype h)
{
    struct comp c[2];
    int n = comps(h, c);
    size_t s = 0;
    for (int i = 0; i < n; i++)
        s += c[i].ext;
    return s;
}

/* ---- one value ---- */

static void store_be(unsigned char *out, uint64_t v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        out[n - 1 - i] = (unsigned char)(v >> (8 * i));
}

static uint64_t load_be(const unsigned char *in, size_t n)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v = v << 8 | in[i];
    return v;
}

/* The low bytes of a value in memory (n = 1, 2, 4 or 8); external32 sizes are never larger
 * than the memory ones, so no sign extension is needed here. */
static uint64_t load_native(const unsigned char *p, size_t n)
{
    switch (n) {
    case 1: return *p;
    case 2: {
        uint16_t v;
        memcpy(&v, p, 2);
        return v;
    }
    case 4: {
        uint32_t v;
        memcpy(&v, p, 4);
        return v;
    }
    default: {
        uint64_t v;
        memcpy(&v, p, 8);
        return v;
    }
    }
}

static void store_native(unsigned char *p, size_t n, uint64_t v)
{
    switch (n) {
    case 1: *p = (unsigned char)v; return;
    case 2: {
        uint16_t w = (uint16_t)v;
        memcpy(p, &w, 2);
        return;
    }
    case 4: {
        uint32_t w = (uint32_t)v;
        memcpy(p, &w, 4);
        return;
    }
    default: memcpy(p, &v, 8); return;
    }
}

/* long double <-> IEEE binary128, big-endian (16 bytes). */
static void ld_to_ext(const unsigned char *mem, unsigned char *out)
{
#if LDBL_MANT_DIG == 64 /* x87 80-bit extended: 64-bit significand with explicit integer bit */
    uint64_t mant;
    uint16_t se;
    memcpy(&mant, mem, 8);
    memcpy(&se, mem + 8, 2);
    /* binary128: sign+exponent (16 bits, same bias 16383), then 112 fraction bits, of which the
     * top 63 are the x87 fraction (integer bit dropped). */
    uint64_t frac = mant & 0x7fffffffffffffffull;
    uint64_t hi = (uint64_t)se << 48 | frac >> 15;
    uint64_t lo = frac << 49;
    if ((se & 0x7fff) == 0 && (mant >> 63)) { /* pseudo-denormal: treat as the smallest normal */
        hi = (uint64_t)(se | 1) << 48 | frac >> 15;
    }
    store_be(out, hi, 8);
    store_be(out + 8, lo, 8);
#elif LDBL_MANT_DIG == 113 /* already binary128 */
    uint64_t w[2];
    memcpy(w, mem, 16);
    store_be(out, w[1], 8); /* little-endian host: high word second */
    store_be(out + 8, w[0], 8);
#else                      /* long double is double */
    double d;
    memcpy(&d, mem, sizeof d);
    uint64_t b;
    memcpy(&b, &d, 8);
    uint64_t sign = b >> 63, exp = (b >> 52) & 0x7ff, frac = b & 0xfffffffffffffull;
    uint64_t e2 = exp == 0 ? 0 : exp == 0x7ff ? 0x7fff : exp - 1023 + 16383;
    store_be(out, sign << 63 | e2 << 48 | frac >> 4, 8);
    store_be(out + 8, frac << 60, 8);
#endif
}

static void ld_from_ext(const unsigned char *in, unsigned char *mem)
{
    uint64_t hi = load_be(in, 8), lo = load_be(in + 8, 8);
#if LDBL_MANT_DIG == 64
    uint16_t se = (uint16_t)(hi >> 48);
    uint64_t frac = (hi & 0xffffffffffffull) << 15 | lo >> 49;
    uint64_t intbit = (se & 0x7fff) ? 1ull << 63 : 0;
    uint64_t mant = intbit | frac;
    memset(mem, 0, sizeof(long double));
    memcpy(mem, &mant, 8);
    memcpy(mem + 8, &se, 2);
#elif LDBL_MANT_DIG == 113
    uint64_t w[2] = { lo, hi };
    memcpy(mem, w, 16);
#else
    uint64_t sign = hi >> 63, e = (hi >> 48) & 0x7fff, frac = (hi & 0xffffffffffffull) << 4 | lo >> 60;
    uint64_t e2;
    if (e == 0)
        e2 = 0, frac = 0;
    else if (e == 0x7fff)
        e2 = 0x7ff;
    else if ((int64_t)e - 16383 + 1023 >= 0x7ff)
        e2 = 0x7ff, frac = 0;
    else if ((int64_t)e - 16383 + 1023 <= 0)
        e2 = 0, frac = 0;
    else
        e2 = e - 16383 + 1023;
    uint64_t b = sign << 63 | e2 << 52 | frac;
    memcpy(mem, &b, 8);
#endif
}

/* One basic value: memory -> external32. Integers and IEEE floating point are the same bits,
 * byte-swapped (and cut to the external32 size); C_FLOAT differs from C_UINT in name only. */
static void comp_pack(const struct comp *c, const unsigned char *mem, unsigned char *out)
{
    switch (c->kind) {
    case C_BYTES: memcpy(out, mem, c->mem); break;
    case C_INT:
    case C_UINT:
    case C_FLOAT: store_be(out, load_native(mem, c->mem), c->ext); break;
    case C_LDOUBLE: ld_to_ext(mem, out); break;
    }
}

/* One basic value: external32 -> memory (signed integers are sign-extended). */
static void comp_unpack(const struct comp *c, const unsigned char *in, unsigned char *mem)
{
    switch (c->kind) {
    case C_BYTES: memcpy(mem, in, c->mem); break;
    case C_INT: {
        uint64_t v = load_be(in, c->ext);
        if (c->ext < 8 && (v >> (8 * c->ext - 1)) & 1) /* sign-extend */
            v |= ~0ull << (8 * c->ext);
        store_native(mem, c->mem, v);
        break;
    }
    case C_UINT:
    case C_FLOAT: store_native(mem, c->mem, load_be(in, c->ext)); break;
    case C_LDOUBLE: ld_from_ext(in, mem); break;
    }
}

/* ---- walks over the structure of a type ---- */

/* Converts every basic value of one element of dt at base, in type-map order, between memory
 * and the external32 stream at *ext (to external32, or back when `unpack`). */
static void walk(const struct aptus_dtype *dt, uintptr_t base, unsigned char **ext, int unpack)
{
    struct aptus_dt_parts p;
    switch (aptus_dt_parts(dt, &p)) {
    case 0: {
        struct comp c[2];
        int n = comps(dt->reduce_type, c); /* a predefined type's reduce type is itself */
        for (int i = 0; i < n; i++) {
            unsigned char *mem = (unsigned char *)(base + c[i].off);
            if (unpack)
                comp_unpack(&c[i], *ext, mem);
            else
                comp_pack(&c[i], mem, *ext);
            *ext += c[i].ext;
        }
        return;
    }
    case 1: {
        size_t bl = p.bl ? *p.bl : 1;
        for (size_t i = 0; i < p.count; i++)
            for (size_t k = 0; k < bl; k++)
                walk(p.old, base + (uintptr_t)((MPI_Aint)i * p.stride + (MPI_Aint)k * p.old->extent), ext, unpack);
        return;
    }
    default:
        for (size_t j = 0; j < p.n; j++)
            for (size_t k = 0; k < p.bl[j]; k++)
                walk(p.types[j], base + (uintptr_t)(p.disps[j] + (MPI_Aint)k * p.types[j]->extent), ext, unpack);
    }
}

static void walk_all(const struct aptus_dtype *dt, size_t count, const void *buf, unsigned char *ext, int unpack)
{
    for (size_t e = 0; e < count; e++)
        walk(dt, (uintptr_t)buf + (uintptr_t)((MPI_Aint)e * dt->extent), &ext, unpack);
}

void aptus_dt_ext32_pack(const void *buf, size_t count, const struct aptus_dtype *dt, void *out)
{
    walk_all(dt, count, buf, out, 0);
}

void aptus_dt_ext32_unpack(const void *in, size_t count, const struct aptus_dtype *dt, void *buf)
{
    walk_all(dt, count, buf, (unsigned char *)in, 1);
}
