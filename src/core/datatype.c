/* The datatype engine: predefined types, derived type construction, flattened type maps and
 * the packing cursor. See core/datatype.h and docs/DESIGN.md ("Datatype engine"). */
#include "core/datatype.h"

#include <complex.h>
#include <stdalign.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "core/op.h"

struct aptus_dtype *aptus_dtype_predef[APTUS_PREDEF_LIMIT];
static struct aptus_dtype predef[APTUS_PREDEF_LIMIT - 0x200];

/* ------------------------------------------------------------------------------------------ */
/* Flattened maps: a growable list of segs with merging of adjacent pieces. */

struct seglist {
    struct aptus_dt_seg *v;
    size_t n, cap;
    int oom;
};

static void seg_append_raw(struct seglist *l, struct aptus_dt_seg s)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 8;
        struct aptus_dt_seg *v = realloc(l->v, cap * sizeof *v);
        if (!v) {
            l->oom = 1;
            return;
        }
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = s;
}

/* Appends s (count >= 1, len > 0) at the end of the map, merging it with the last piece when
 * the two describe one contiguous run or one regular sequence of runs. */
static void seg_push(struct seglist *l, struct aptus_dt_seg s)
{
    if (s.len == 0 || s.count == 0)
        return;
    if (s.count == 1)
        s.stride = 0;
    else if (s.stride == (MPI_Aint)s.len) {
        s.len *= s.count;
        s.count = 1;
        s.stride = 0;
    }
    if (l->n == 0) {
        seg_append_raw(l, s);
        return;
    }
    struct aptus_dt_seg *t = &l->v[l->n - 1];
    if (t->count == 1 && s.count == 1) {
        if (s.disp == t->disp + (MPI_Aint)t->len) {
            t->len += s.len;
            return;
        }
        if (s.len == t->len) {
            t->count = 2;
            t->stride = s.disp - t->disp;
            return;
        }
    } else if (t->count > 1 && s.count == 1) {
        MPI_Aint last = t->disp + (MPI_Aint)(t->count - 1) * t->stride;
        if (s.len == t->len && s.disp == last + t->stride) {
            t->count++;
            return;
        }
        if (s.disp == last + (MPI_Aint)t->len) { /* continues the last run: split it off */
            t->count--;
            if (t->count == 1)
                t->stride = 0;
            struct aptus_dt_seg m = { last, 0, t->len + s.len, 1 };
            seg_append_raw(l, m);
            return;
        }
    } else if (t->count == 1 && s.count > 1) {
        if (s.len == t->len && t->disp + s.stride == s.disp) {
            t->stride = s.stride;
            t->count = s.count + 1;
            return;
        }
    } else if (s.len == t->len && s.stride == t->stride && s.disp == t->disp + (MPI_Aint)t->count * t->stride) {
        t->count += s.count;
        return;
    }
    seg_append_raw(l, s);
}

/* Appends n copies of the map src (nsrc pieces), copy k shifted by base + k * spacing. */
static void seg_copies(struct seglist *l, const struct aptus_dt_seg *src, size_t nsrc, MPI_Aint base, size_t n,
                       MPI_Aint spacing)
{
    if (nsrc == 0 || n == 0)
        return;
    if (nsrc == 1 && src[0].count == 1) {
        struct aptus_dt_seg s = { base + src[0].disp, spacing, src[0].len, n };
        seg_push(l, s);
        return;
    }
    if (nsrc == 1 && (MPI_Aint)src[0].count * src[0].stride == spacing) {
        struct aptus_dt_seg s = { base + src[0].disp, src[0].stride, src[0].len, src[0].count * n };
        seg_push(l, s);
        return;
    }
    for (size_t k = 0; k < n && !l->oom; k++)
        for (size_t i = 0; i < nsrc; i++) {
            struct aptus_dt_seg s = src[i];
            s.disp += base + (MPI_Aint)k * spacing;
            seg_push(l, s);
        }
}

/* ------------------------------------------------------------------------------------------ */
/* Private part of a datatype: how it was built (for the map and Get_elements) and its contents
 * (for MPI_Type_get_contents). */

enum { K_PREDEF, K_HVECTOR, K_STRUCT, K_RESIZED };

struct aptus_dt_priv {
    int kind;
    /* K_HVECTOR: count blocks of bl copies of old, block i at i * stride bytes.
     * K_RESIZED: old with new bounds. */
    size_t count, bl;
    MPI_Aint stride;
    struct aptus_dtype *old;
    /* K_STRUCT: n blocks of bls[i] copies of types[i] at disps[i]. */
    size_t n;
    size_t *bls;
    MPI_Aint *disps;
    struct aptus_dtype **types;

    size_t align;      /* strictest alignment of the basic types in the map */
    int markers;       /* bounds were set explicitly (resized) somewhere in the type */
    size_t ext32_size; /* bytes of one element in external32 (0 when a type has none) */
    int ext32_ok;      /* every basic type has an external32 form */
    size_t pair_first; /* pair types: bytes of the first member */
    int handles;       /* references held by the user: the constructor's, MPI_Type_get_contents' */

    struct aptus_dt_contents contents;
};

static struct aptus_dt_priv predef_priv[APTUS_PREDEF_LIMIT - 0x200];

/* ------------------------------------------------------------------------------------------ */
/* Predefined datatypes. */

#define PAIR_T(VT, IT)                                                                                                 \
    struct {                                                                                                           \
        VT v;                                                                                                          \
        IT k;                                                                                                          \
    }

static int int_basic(size_t size, int is_signed)
{
    switch (size) {
    case 1: return is_signed ? APTUS_B_INT8 : APTUS_B_UINT8;
    case 2: return is_signed ? APTUS_B_INT16 : APTUS_B_UINT16;
    case 4: return is_signed ? APTUS_B_INT32 : APTUS_B_UINT32;
    default: return is_signed ? APTUS_B_INT64 : APTUS_B_UINT64;
    }
}

static void set_map_from(struct aptus_dtype *d, struct aptus_dt_seg *segs, size_t n, size_t *pos)
{
    d->segs = segs;
    d->seg_pos = pos;
    d->nsegs = n;
    size_t p = 0;
    for (size_t i = 0; i < n; i++) {
        pos[i] = p;
        p += segs[i].len * segs[i].count;
    }
    pos[n] = p;
    d->contig =
        d->size == 0 || (n == 1 && segs[0].count == 1 && segs[0].len == d->size && d->extent == (MPI_Aint)d->size);
}

/* One predefined type: a value of `size1` bytes at 0 and, for the pair types, a second one of
 * `size2` bytes at off2; elements `extent` bytes apart. */
static struct aptus_dtype *def_full(MPI_Datatype h, const char *name, size_t size1, size_t off2, size_t size2,
                                    size_t extent, size_t align, int basic)
{
    uintptr_t v = (uintptr_t)h;
    struct aptus_dtype *d = &predef[v - 0x200];
    struct aptus_dt_priv *p = &predef_priv[v - 0x200];
    memset(d, 0, sizeof *d);
    memset(p, 0, sizeof *p);
    d->magic = APTUS_MAGIC_DTYPE;
    d->refcount = 1;
    d->size = size1 + size2;
    d->lb = d->true_lb = 0;
    d->extent = (MPI_Aint)extent;
    d->true_extent = (MPI_Aint)(size2 ? off2 + size2 : size1);
    d->basic = basic;
    d->predefined = 1;
    d->committed = 1;
    d->combiner = MPI_COMBINER_NAMED;
    d->reduce_type = h;
    d->reduce_n = 1;
    d->nelem = size2 ? 2 : 1;
    d->priv = p;
    p->kind = K_PREDEF;
    p->pair_first = size2 ? size1 : 0;
    p->align = align;
    p->ext32_size = aptus_dt_ext32_basic_size(h);
    p->ext32_ok = p->ext32_size > 0;
    struct seglist l = { d->seg_inl, 0, 2, 0 };
    seg_push(&l, (struct aptus_dt_seg){ 0, 0, size1, 1 });
    if (size2)
        seg_push(&l, (struct aptus_dt_seg){ (MPI_Aint)off2, 0, size2, 1 });
    set_map_from(d, d->seg_inl, l.n, d->pos_inl);
    strncpy(d->name, name, sizeof d->name - 1);
    aptus_dtype_predef[v] = d;
    return d;
}

static void def(MPI_Datatype h, const char *name, size_t size, size_t align, int basic)
{
    def_full(h, name, size, 0, 0, size, align, basic);
}

/* The name is stringified here, before H expands (a macro passing H on would name the value). */
#define C_T(H, T, B)     def(H, #H, sizeof(T), alignof(T), B)
#define INT_T(H, T, S)   def(H, #H, sizeof(T), alignof(T), int_basic(sizeof(T), S))
#define FORT(H, S, A, B) def(H, #H, S, A, B)
#define PAIR(H, VT, IT, B)                                                                                             \
    def_full(H, #H, sizeof(VT), offsetof(PAIR_T(VT, IT), k), sizeof(IT), sizeof(PAIR_T(VT, IT)),                       \
             alignof(PAIR_T(VT, IT)), B)

void aptus_datatype_init(void)
{
    aptus_op_init();
    INT_T(MPI_AINT, MPI_Aint, 1);
    INT_T(MPI_COUNT, MPI_Count, 1);
    INT_T(MPI_OFFSET, MPI_Offset, 1);
    def(MPI_PACKED, "MPI_PACKED", 1, 1, APTUS_B_BYTE);
    INT_T(MPI_SHORT, short, 1);
    INT_T(MPI_INT, int, 1);
    INT_T(MPI_LONG, long, 1);
    INT_T(MPI_LONG_LONG, long long, 1);
    INT_T(MPI_UNSIGNED_SHORT, unsigned short, 0);
    INT_T(MPI_UNSIGNED, unsigned, 0);
    INT_T(MPI_UNSIGNED_LONG, unsigned long, 0);
    INT_T(MPI_UNSIGNED_LONG_LONG, unsigned long long, 0);
    C_T(MPI_FLOAT, float, APTUS_B_FLOAT);
    /* MPI_C_COMPLEX and MPI_C_FLOAT_COMPLEX are one handle in the ABI: it carries the older,
     * shorter name (as MPICH names it), which programs that test either name accept. */
    def(MPI_C_FLOAT_COMPLEX, "MPI_C_COMPLEX", sizeof(float _Complex), alignof(float _Complex), APTUS_B_C_FLOAT_COMPLEX);
    C_T(MPI_CXX_FLOAT_COMPLEX, float _Complex, APTUS_B_C_FLOAT_COMPLEX);
    C_T(MPI_DOUBLE, double, APTUS_B_DOUBLE);
    C_T(MPI_C_DOUBLE_COMPLEX, double _Complex, APTUS_B_C_DOUBLE_COMPLEX);
    C_T(MPI_CXX_DOUBLE_COMPLEX, double _Complex, APTUS_B_C_DOUBLE_COMPLEX);
    C_T(MPI_LONG_DOUBLE, long double, APTUS_B_LONG_DOUBLE);
    C_T(MPI_C_LONG_DOUBLE_COMPLEX, long double _Complex, APTUS_B_C_LONG_DOUBLE_COMPLEX);
    C_T(MPI_CXX_LONG_DOUBLE_COMPLEX, long double _Complex, APTUS_B_C_LONG_DOUBLE_COMPLEX);
    /* Fortran types with the usual sizes (INTEGER/REAL 4 bytes, DOUBLE PRECISION 8). */
    FORT(MPI_LOGICAL, 4, 4, APTUS_B_INT32);
    FORT(MPI_INTEGER, 4, 4, APTUS_B_INT32);
    FORT(MPI_REAL, 4, 4, APTUS_B_FLOAT);
    FORT(MPI_COMPLEX, 8, 4, APTUS_B_C_FLOAT_COMPLEX);
    FORT(MPI_DOUBLE_PRECISION, 8, 8, APTUS_B_DOUBLE);
    FORT(MPI_DOUBLE_COMPLEX, 16, 8, APTUS_B_C_DOUBLE_COMPLEX);
    FORT(MPI_CHARACTER, 1, 1, APTUS_B_CHAR);
    PAIR(MPI_FLOAT_INT, float, int, APTUS_B_FLOAT_INT);
    PAIR(MPI_DOUBLE_INT, double, int, APTUS_B_DOUBLE_INT);
    PAIR(MPI_LONG_INT, long, int, APTUS_B_LONG_INT);
    PAIR(MPI_2INT, int, int, APTUS_B_2INT);
    PAIR(MPI_SHORT_INT, short, int, APTUS_B_SHORT_INT);
    PAIR(MPI_LONG_DOUBLE_INT, long double, int, APTUS_B_LONG_DOUBLE_INT);
    PAIR(MPI_2REAL, float, float, APTUS_B_2FLOAT);
    PAIR(MPI_2DOUBLE_PRECISION, double, double, APTUS_B_2DOUBLE);
    PAIR(MPI_2INTEGER, int, int, APTUS_B_2INT);
    C_T(MPI_C_BOOL, bool, APTUS_B_BOOL);
    C_T(MPI_CXX_BOOL, bool, APTUS_B_BOOL);
    C_T(MPI_WCHAR, wchar_t, APTUS_B_NONE);
    INT_T(MPI_INT8_T, int8_t, 1);
    INT_T(MPI_UINT8_T, uint8_t, 0);
    C_T(MPI_CHAR, char, APTUS_B_CHAR);
    INT_T(MPI_SIGNED_CHAR, signed char, 1);
    INT_T(MPI_UNSIGNED_CHAR, unsigned char, 0);
    FORT(MPI_BYTE, 1, 1, APTUS_B_BYTE);
    INT_T(MPI_INT16_T, int16_t, 1);
    INT_T(MPI_UINT16_T, uint16_t, 0);
    INT_T(MPI_INT32_T, int32_t, 1);
    INT_T(MPI_UINT32_T, uint32_t, 0);
    INT_T(MPI_INT64_T, int64_t, 1);
    INT_T(MPI_UINT64_T, uint64_t, 0);
    FORT(MPI_LOGICAL1, 1, 1, APTUS_B_INT8);
    FORT(MPI_INTEGER1, 1, 1, APTUS_B_INT8);
    FORT(MPI_LOGICAL2, 2, 2, APTUS_B_INT16);
    FORT(MPI_INTEGER2, 2, 2, APTUS_B_INT16);
    FORT(MPI_REAL2, 2, 2, APTUS_B_NONE);
    FORT(MPI_LOGICAL4, 4, 4, APTUS_B_INT32);
    FORT(MPI_INTEGER4, 4, 4, APTUS_B_INT32);
    FORT(MPI_REAL4, 4, 4, APTUS_B_FLOAT);
    FORT(MPI_COMPLEX4, 4, 2, APTUS_B_NONE);
    FORT(MPI_LOGICAL8, 8, 8, APTUS_B_INT64);
    FORT(MPI_INTEGER8, 8, 8, APTUS_B_INT64);
    FORT(MPI_REAL8, 8, 8, APTUS_B_DOUBLE);
    FORT(MPI_COMPLEX8, 8, 4, APTUS_B_C_FLOAT_COMPLEX);
    FORT(MPI_LOGICAL16, 16, 8, APTUS_B_NONE);
    FORT(MPI_INTEGER16, 16, 8, APTUS_B_NONE);
    FORT(MPI_REAL16, 16, 16, APTUS_B_LONG_DOUBLE);
    FORT(MPI_COMPLEX16, 16, 8, APTUS_B_C_DOUBLE_COMPLEX);
    FORT(MPI_COMPLEX32, 32, 16, APTUS_B_C_LONG_DOUBLE_COMPLEX);
}

const char *aptus_dtype_name(const struct aptus_dtype *dt)
{
    return dt->name[0] ? dt->name : "(derived datatype)";
}

/* ------------------------------------------------------------------------------------------ */
/* Reference counts and freeing. */

static void contents_clear(struct aptus_dt_contents *c)
{
    for (int i = 0; i < c->nd; i++)
        aptus_dtype_release(aptus_dtype_get(c->types[i]));
    free(c->ints);
    free(c->addrs);
    free(c->counts);
    free(c->types);
    memset(c, 0, sizeof *c);
}

void aptus_dtype_retain(struct aptus_dtype *dt)
{
    if (dt && !dt->predefined)
        dt->refcount++;
}

void aptus_dtype_release(struct aptus_dtype *dt)
{
    if (!dt || dt->predefined || --dt->refcount > 0)
        return;
    struct aptus_dt_priv *p = dt->priv;
    contents_clear(&p->contents);
    aptus_dtype_release(p->old);
    for (size_t i = 0; i < p->n; i++)
        aptus_dtype_release(p->types[i]);
    free(p->bls);
    free(p->disps);
    free(p->types);
    if (dt->segs != dt->seg_inl)
        free(dt->segs);
    if (dt->seg_pos != dt->pos_inl)
        free(dt->seg_pos);
    free(p);
    dt->magic = 0;
    aptus_obj_free(APTUS_OBJ_DTYPE, dt);
}

/* ------------------------------------------------------------------------------------------ */
/* Construction. */

static struct aptus_dtype *dt_alloc(int kind)
{
    struct aptus_dtype *d = aptus_obj_alloc(APTUS_OBJ_DTYPE, sizeof *d);
    struct aptus_dt_priv *p = calloc(1, sizeof *p);
    if (!d || !p) {
        aptus_obj_free(APTUS_OBJ_DTYPE, d);
        free(p);
        return NULL;
    }
    d->magic = APTUS_MAGIC_DTYPE;
    d->refcount = 1;
    d->priv = p;
    p->kind = kind;
    p->handles = 1;
    return d;
}

static MPI_Aint amin(MPI_Aint a, MPI_Aint b)
{
    return a < b ? a : b;
}

static MPI_Aint amax(MPI_Aint a, MPI_Aint b)
{
    return a > b ? a : b;
}

struct aptus_dtype *aptus_dt_new_hvector(size_t count, size_t bl, MPI_Aint stride, struct aptus_dtype *old)
{
    struct aptus_dtype *d = dt_alloc(K_HVECTOR);
    if (!d)
        return NULL;
    struct aptus_dt_priv *p = d->priv, *op = old->priv;
    p->count = count;
    p->bl = bl;
    p->stride = stride;
    p->old = old;
    aptus_dtype_retain(old);
    size_t n = count * bl;
    d->size = n * old->size;
    d->nelem = n * old->nelem;
    d->reduce_type = old->reduce_type;
    d->reduce_n = n * old->reduce_n;
    p->align = op->align;
    p->markers = op->markers;
    p->ext32_size = n * op->ext32_size;
    p->ext32_ok = op->ext32_ok;
    if (n) {
        MPI_Aint E = old->extent;
        MPI_Aint omin = amin(0, (MPI_Aint)(count - 1) * stride) + amin(0, (MPI_Aint)(bl - 1) * E);
        MPI_Aint omax = amax(0, (MPI_Aint)(count - 1) * stride) + amax(0, (MPI_Aint)(bl - 1) * E);
        d->lb = omin + old->lb;
        d->extent = omax + old->lb + E - d->lb;
        d->true_lb = omin + old->true_lb;
        d->true_extent = omax + old->true_lb + old->true_extent - d->true_lb;
    }
    return d;
}

struct aptus_dtype *aptus_dt_new_struct(size_t n, const size_t *bls, const MPI_Aint *disps,
                                        struct aptus_dtype *const *types)
{
    struct aptus_dtype *d = dt_alloc(K_STRUCT);
    if (!d)
        return NULL;
    struct aptus_dt_priv *p = d->priv;
    p->n = n;
    p->bls = malloc((n ? n : 1) * sizeof *p->bls);
    p->disps = malloc((n ? n : 1) * sizeof *p->disps);
    p->types = malloc((n ? n : 1) * sizeof *p->types);
    if (!p->bls || !p->disps || !p->types) {
        p->n = 0;
        aptus_dtype_release(d);
        return NULL;
    }
    memcpy(p->bls, bls, n * sizeof *bls);
    memcpy(p->disps, disps, n * sizeof *disps);
    memcpy(p->types, types, n * sizeof *types);
    int any = 0, anytrue = 0;
    MPI_Aint lb = 0, ub = 0, tlb = 0, tub = 0;
    size_t align = 1;
    p->ext32_ok = 1;
    d->reduce_type = n ? types[0]->reduce_type : MPI_DATATYPE_NULL;
    int rt_set = 0;
    for (size_t i = 0; i < n; i++) {
        struct aptus_dtype *t = types[i];
        struct aptus_dt_priv *tp = t->priv;
        aptus_dtype_retain(t);
        size_t b = bls[i];
        d->size += b * t->size;
        d->nelem += b * t->nelem;
        p->ext32_size += b * tp->ext32_size;
        if (b && !tp->ext32_ok)
            p->ext32_ok = 0;
        if (b == 0)
            continue;
        if (!rt_set || (d->reduce_type != MPI_DATATYPE_NULL && t->reduce_type == d->reduce_type)) {
            if (!rt_set)
                d->reduce_type = t->reduce_type;
            d->reduce_n += b * t->reduce_n;
            rt_set = 1;
        } else
            d->reduce_type = MPI_DATATYPE_NULL;
        if (tp->markers)
            p->markers = 1;
        if (tp->align > align)
            align = tp->align;
        MPI_Aint E = t->extent;
        MPI_Aint omin = disps[i] + amin(0, (MPI_Aint)(b - 1) * E);
        MPI_Aint omax = disps[i] + amax(0, (MPI_Aint)(b - 1) * E);
        MPI_Aint l = omin + t->lb, u = omax + t->lb + E;
        lb = any ? amin(lb, l) : l;
        ub = any ? amax(ub, u) : u;
        any = 1;
        if (t->size) {
            MPI_Aint tl = omin + t->true_lb, tu = omax + t->true_lb + t->true_extent;
            tlb = anytrue ? amin(tlb, tl) : tl;
            tub = anytrue ? amax(tub, tu) : tu;
            anytrue = 1;
        }
    }
    if (d->reduce_type == MPI_DATATYPE_NULL)
        d->reduce_n = 0;
    p->align = align;
    MPI_Aint ext = ub - lb;
    if (!p->markers && ext > 0 && ext % (MPI_Aint)align) /* the standard's epsilon */
        ext += (MPI_Aint)align - ext % (MPI_Aint)align;
    d->lb = lb;
    d->extent = ext;
    d->true_lb = tlb;
    d->true_extent = tub - tlb;
    return d;
}

struct aptus_dtype *aptus_dt_new_resized(struct aptus_dtype *old, MPI_Aint lb, MPI_Aint extent)
{
    struct aptus_dtype *d = dt_alloc(K_RESIZED);
    if (!d)
        return NULL;
    struct aptus_dt_priv *p = d->priv, *op = old->priv;
    p->old = old;
    aptus_dtype_retain(old);
    d->size = old->size;
    d->nelem = old->nelem;
    d->reduce_type = old->reduce_type;
    d->reduce_n = old->reduce_n;
    d->lb = lb;
    d->extent = extent;
    d->true_lb = old->true_lb;
    d->true_extent = old->true_extent;
    p->align = op->align;
    p->markers = 1;
    p->ext32_size = op->ext32_size;
    p->ext32_ok = op->ext32_ok;
    return d;
}

struct aptus_dtype *aptus_dt_new_dup(struct aptus_dtype *old)
{
    struct aptus_dtype *d = aptus_dt_new_resized(old, old->lb, old->extent);
    if (d) {
        d->priv->markers = old->priv->markers;
        d->basic = old->basic;
    }
    return d;
}

/* Builds the flattened map of d (and of the types it is made of). */
int aptus_dt_flatten(struct aptus_dtype *d)
{
    if (d->segs || d->predefined)
        return MPI_SUCCESS;
    struct aptus_dt_priv *p = d->priv;
    struct seglist l = { 0 };
    if (p->kind == K_HVECTOR || p->kind == K_RESIZED) {
        struct aptus_dtype *o = p->old;
        if (aptus_dt_flatten(o))
            return MPI_ERR_NO_MEM;
        if (p->kind == K_RESIZED)
            seg_copies(&l, o->segs, o->nsegs, 0, 1, 0);
        else { /* one level of repetition at a time keeps the pieces few */
            struct seglist b = { 0 };
            seg_copies(&b, o->segs, o->nsegs, 0, p->bl, o->extent);
            seg_copies(&l, b.v, b.n, 0, p->count, p->stride);
            l.oom |= b.oom;
            free(b.v);
        }
    } else {
        for (size_t i = 0; i < p->n && !l.oom; i++) {
            struct aptus_dtype *t = p->types[i];
            if (p->bls[i] == 0 || t->size == 0)
                continue;
            if (aptus_dt_flatten(t)) {
                l.oom = 1;
                break;
            }
            seg_copies(&l, t->segs, t->nsegs, p->disps[i], p->bls[i], t->extent);
        }
    }
    size_t *pos = l.oom ? NULL : malloc((l.n + 1) * sizeof *pos);
    if (!pos) {
        free(l.v);
        return MPI_ERR_NO_MEM;
    }
    if (l.n == 0) {
        free(l.v);
        l.v = d->seg_inl; /* non-NULL: the (empty) map exists */
    } else if (l.n < l.cap) {
        struct aptus_dt_seg *v = realloc(l.v, l.n * sizeof *v);
        if (v)
            l.v = v;
    }
    set_map_from(d, l.v, l.n, pos);
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------------------------------------ */
/* Contents (MPI_Type_get_envelope / MPI_Type_get_contents). */

struct aptus_dt_contents *aptus_dt_contents(struct aptus_dtype *dt)
{
    return &dt->priv->contents;
}

int aptus_dt_set_contents(struct aptus_dtype *dt, int combiner, int large, int ni, const int *ints, int na,
                          const MPI_Aint *addrs, int nc, const MPI_Count *counts, int nd, const MPI_Datatype *types)
{
    struct aptus_dt_contents *c = &dt->priv->contents;
    dt->combiner = combiner;
    c->large = large;
    c->ints = malloc((size_t)(ni ? ni : 1) * sizeof *c->ints);
    c->addrs = malloc((size_t)(na ? na : 1) * sizeof *c->addrs);
    c->counts = malloc((size_t)(nc ? nc : 1) * sizeof *c->counts);
    c->types = malloc((size_t)(nd ? nd : 1) * sizeof *c->types);
    if (!c->ints || !c->addrs || !c->counts || !c->types) {
        contents_clear(c);
        return MPI_ERR_NO_MEM;
    }
    c->ni = ni;
    c->na = na;
    c->nc = nc;
    c->nd = nd;
    if (ni)
        memcpy(c->ints, ints, (size_t)ni * sizeof *ints);
    if (na)
        memcpy(c->addrs, addrs, (size_t)na * sizeof *addrs);
    if (nc)
        memcpy(c->counts, counts, (size_t)nc * sizeof *counts);
    for (int i = 0; i < nd; i++) {
        c->types[i] = types[i];
        aptus_dtype_retain(aptus_dtype_get(types[i]));
    }
    return MPI_SUCCESS;
}

size_t aptus_dt_ext32_size(const struct aptus_dtype *dt, int *ok)
{
    if (ok)
        *ok = dt->priv->ext32_ok;
    return dt->priv->ext32_size;
}

void aptus_dt_handle_out(struct aptus_dtype *dt)
{
    if (!dt->predefined) {
        dt->priv->handles++;
        aptus_dtype_retain(dt);
    }
}

int aptus_dt_handles(const struct aptus_dtype *dt)
{
    return dt->priv->handles;
}

int aptus_dt_handle_free(struct aptus_dtype *dt)
{
    if (dt->priv->handles <= 0)
        return 1;
    dt->priv->handles--;
    aptus_dtype_release(dt);
    return 0;
}

/* The parts of a derived type for walks over its structure (external32). */
int aptus_dt_parts(const struct aptus_dtype *dt, struct aptus_dt_parts *out)
{
    const struct aptus_dt_priv *p = dt->priv;
    memset(out, 0, sizeof *out);
    switch (p->kind) {
    case K_PREDEF: return 0;
    case K_HVECTOR:
        out->n = 1;
        out->count = p->count;
        out->bl = &p->bl;
        out->stride = p->stride;
        out->old = p->old;
        return 1;
    case K_RESIZED:
        out->n = 1;
        out->count = 1;
        out->bl = NULL;
        out->old = p->old;
        return 1;
    default:
        out->n = p->n;
        out->count = 1;
        out->bl = p->bls;
        out->disps = p->disps;
        out->types = p->types;
        return 2;
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Cursor. */

void aptus_dt_cursor_init(struct aptus_dt_cursor *c, const void *buf, size_t count, const struct aptus_dtype *dt)
{
    if (!dt->segs)
        aptus_dt_flatten((struct aptus_dtype *)dt);
    c->buf = (char *)buf;
    c->dt = dt;
    c->count = count;
    c->elem = c->block = c->rep = c->off = c->pos = 0;
    c->total = count * dt->size;
}

void aptus_dt_cursor_seek(struct aptus_dt_cursor *c, size_t pos)
{
    const struct aptus_dtype *dt = c->dt;
    if (pos > c->total)
        pos = c->total;
    c->pos = pos;
    if (dt->contig || dt->size == 0) {
        c->elem = c->block = c->rep = c->off = 0;
        return;
    }
    size_t r = pos % dt->size;
    c->elem = pos / dt->size;
    const size_t *sp = dt->seg_pos;
    size_t lo = 0, hi = dt->nsegs; /* sp[lo] <= r < sp[hi] */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (sp[mid] <= r)
            lo = mid;
        else
            hi = mid;
    }
    size_t within = r - sp[lo], len = dt->segs[lo].len;
    c->block = lo;
    c->rep = within / len;
    c->off = within % len;
}

/* Copies k runs of len bytes between packed memory and user memory at stride. */
static inline __attribute__((always_inline)) void runs_copy(char *packed, uintptr_t user, size_t len, MPI_Aint stride,
                                                            size_t k, int unpack)
{
#define RUNS_CASE(L)                                                                                                   \
    case L:                                                                                                            \
        for (size_t i = 0; i < k; i++, packed += L, user += (uintptr_t)stride) {                                       \
            if (unpack)                                                                                                \
                memcpy((void *)user, packed, L);                                                                       \
            else                                                                                                       \
                memcpy(packed, (const void *)user, L);                                                                 \
        }                                                                                                              \
        return;
    switch (len) {
        RUNS_CASE(1)
        RUNS_CASE(2)
        RUNS_CASE(4)
        RUNS_CASE(8)
        RUNS_CASE(12)
        RUNS_CASE(16)
        RUNS_CASE(32)
    default:
        for (size_t i = 0; i < k; i++, packed += len, user += (uintptr_t)stride) {
            if (unpack)
                memcpy((void *)user, packed, len);
            else
                memcpy(packed, (const void *)user, len);
        }
    }
#undef RUNS_CASE
}

static inline __attribute__((always_inline)) size_t walk(struct aptus_dt_cursor *c, char *packed, size_t len,
                                                         int unpack)
{
    const struct aptus_dtype *dt = c->dt;
    size_t left = c->total - c->pos;
    if (len > left)
        len = left;
    if (len == 0)
        return 0;
    if (dt->contig) {
        char *user = c->buf + dt->true_lb + c->pos;
        if (unpack)
            memcpy(user, packed, len);
        else
            memcpy(packed, user, len);
        c->pos += len;
        return len;
    }
    /* the cursor in locals: stores through `packed` may alias it otherwise */
    size_t todo = len, elem = c->elem, block = c->block, rep = c->rep, off = c->off;
    const size_t nsegs = dt->nsegs;
    const MPI_Aint extent = dt->extent;
    const struct aptus_dt_seg *segs = dt->segs, *s = &segs[block];
    uintptr_t ebase = (uintptr_t)c->buf + (uintptr_t)((MPI_Aint)elem * extent);
    for (;;) {
        if (nsegs == 1 && s->count == 1 && off == 0 && todo >= s->len) {
            /* one run per element: whole elements in one loop */
            size_t k = todo / s->len, lim = c->count - elem;
            if (k > lim)
                k = lim;
            runs_copy(packed, ebase + (uintptr_t)s->disp, s->len, extent, k, unpack);
            packed += k * s->len;
            todo -= k * s->len;
            elem += k;
            ebase += (uintptr_t)((MPI_Aint)k * extent);
            if (todo == 0)
                break;
            continue;
        }
        if (block == 0 && rep == 0 && off == 0 && todo >= dt->size) {
            /* whole elements: no per-run bookkeeping */
            size_t k = todo / dt->size, lim = c->count - elem;
            if (k > lim)
                k = lim;
            for (size_t e = 0; e < k; e++, ebase += (uintptr_t)extent)
                for (size_t i = 0; i < nsegs; i++) {
                    const struct aptus_dt_seg *p = &segs[i];
                    runs_copy(packed, ebase + (uintptr_t)p->disp, p->len, p->stride, p->count, unpack);
                    packed += p->len * p->count;
                }
            todo -= k * dt->size;
            elem += k;
            if (todo == 0)
                break;
            continue;
        }
        uintptr_t u = ebase + (uintptr_t)(s->disp + (MPI_Aint)rep * s->stride) + off;
        size_t n = s->len - off;
        if (n > todo) {
            runs_copy(packed, u, todo, 0, 1, unpack);
            off += todo;
            break;
        }
        if (off == 0 && s->count - rep > 1) { /* whole runs of this piece in one loop */
            size_t k = s->count - rep, fit = todo / s->len;
            if (k > fit)
                k = fit;
            runs_copy(packed, u, s->len, s->stride, k, unpack);
            packed += k * s->len;
            todo -= k * s->len;
            rep += k;
        } else {
            runs_copy(packed, u, n, 0, 1, unpack);
            packed += n;
            todo -= n;
            off = 0;
            rep++;
        }
        if (rep == s->count) {
            rep = 0;
            if (++block == nsegs) {
                block = 0;
                elem++;
                ebase += (uintptr_t)extent;
            }
            s = &segs[block];
        }
        if (todo == 0)
            break;
    }
    c->elem = elem;
    c->block = block;
    c->rep = rep;
    c->off = off;
    c->pos += len;
    return len;
}

size_t aptus_dt_pack_some(struct aptus_dt_cursor *c, void *dst, size_t len)
{
    return walk(c, dst, len, 0);
}

size_t aptus_dt_unpack_some(struct aptus_dt_cursor *c, const void *src, size_t len)
{
    return walk(c, (char *)src, len, 1);
}

int aptus_dt_iov_some(struct aptus_dt_cursor *c, struct iovec *iov, int max, size_t len, size_t *bytes)
{
    const struct aptus_dtype *dt = c->dt;
    size_t left = c->total - c->pos;
    if (len > left)
        len = left;
    *bytes = 0;
    if (len == 0 || max <= 0)
        return 0;
    if (dt->contig) {
        iov[0].iov_base = c->buf + dt->true_lb + c->pos;
        iov[0].iov_len = len;
        c->pos += len;
        *bytes = len;
        return 1;
    }
    int k = 0;
    size_t todo = len;
    const struct aptus_dt_seg *segs = dt->segs, *s = &segs[c->block];
    uintptr_t ebase = (uintptr_t)c->buf + (uintptr_t)((MPI_Aint)c->elem * dt->extent);
    while (todo) {
        uintptr_t u = ebase + (uintptr_t)(s->disp + (MPI_Aint)c->rep * s->stride) + c->off;
        size_t n = s->len - c->off;
        if (n > todo)
            n = todo;
        if (k > 0 && (uintptr_t)iov[k - 1].iov_base + iov[k - 1].iov_len == u)
            iov[k - 1].iov_len += n;
        else {
            if (k == max)
                break;
            iov[k].iov_base = (void *)u;
            iov[k].iov_len = n;
            k++;
        }
        todo -= n;
        c->off += n;
        c->pos += n;
        if (c->off < s->len)
            break;
        c->off = 0;
        if (++c->rep == s->count) {
            c->rep = 0;
            if (++c->block == dt->nsegs) {
                c->block = 0;
                c->elem++;
                ebase += (uintptr_t)dt->extent;
            }
            s = &segs[c->block];
        }
    }
    *bytes = len - todo;
    return k;
}

void aptus_dt_pack(const void *buf, size_t count, const struct aptus_dtype *dt, void *out)
{
    struct aptus_dt_cursor c;
    aptus_dt_cursor_init(&c, buf, count, dt);
    aptus_dt_pack_some(&c, out, c.total);
}

void aptus_dt_unpack(const void *in, size_t count, const struct aptus_dtype *dt, void *buf)
{
    struct aptus_dt_cursor c;
    aptus_dt_cursor_init(&c, buf, count, dt);
    aptus_dt_unpack_some(&c, in, c.total);
}

/* ------------------------------------------------------------------------------------------ */
/* Reductions and element counts. */

MPI_Datatype aptus_dt_reduce_type(const struct aptus_dtype *dt, size_t *n)
{
    *n = dt->reduce_n;
    return dt->reduce_type;
}

/* Basic elements in the first `bytes` (< size) packed bytes of one element of dt. */
static MPI_Count partial_elements(const struct aptus_dtype *dt, size_t bytes)
{
    if (bytes == 0)
        return 0;
    const struct aptus_dt_priv *p = dt->priv;
    switch (p->kind) {
    case K_PREDEF:
        /* pair type: a complete first member counts as one */
        return dt->nelem == 2 && bytes == p->pair_first ? 1 : -1;
    case K_HVECTOR:
    case K_RESIZED: return aptus_dt_elements(p->old, bytes);
    default: {
        MPI_Count n = 0;
        for (size_t i = 0; i < p->n; i++) {
            const struct aptus_dtype *t = p->types[i];
            size_t b = p->bls[i] * t->size;
            if (bytes >= b) {
                n += (MPI_Count)(p->bls[i] * t->nelem);
                bytes -= b;
                if (bytes == 0)
                    return n;
                continue;
            }
            MPI_Count r = aptus_dt_elements(t, bytes);
            return r < 0 ? -1 : n + r;
        }
        return -1;
    }
    }
}

MPI_Count aptus_dt_elements(const struct aptus_dtype *dt, size_t bytes)
{
    if (dt->size == 0)
        return bytes ? -1 : 0;
    size_t full = bytes / dt->size, rem = bytes % dt->size;
    MPI_Count r = partial_elements(dt, rem);
    return r < 0 ? -1 : (MPI_Count)(full * dt->nelem) + r;
}

/* Packed bytes of the first k (< nelem) basic elements of one element of dt. */
static size_t partial_bytes(const struct aptus_dtype *dt, size_t k)
{
    if (k == 0)
        return 0;
    const struct aptus_dt_priv *p = dt->priv;
    switch (p->kind) {
    case K_PREDEF: return p->pair_first; /* k == 1 of a pair */
    case K_HVECTOR:
    case K_RESIZED: return aptus_dt_elements_bytes(p->old, k);
    default: {
        size_t b = 0;
        for (size_t i = 0; i < p->n; i++) {
            const struct aptus_dtype *t = p->types[i];
            size_t e = p->bls[i] * t->nelem;
            if (k >= e) {
                b += p->bls[i] * t->size;
                k -= e;
                if (k == 0)
                    break;
                continue;
            }
            return b + aptus_dt_elements_bytes(t, k);
        }
        return b;
    }
    }
}

size_t aptus_dt_elements_bytes(const struct aptus_dtype *dt, size_t k)
{
    if (dt->nelem == 0)
        return 0;
    return k / dt->nelem * dt->size + partial_bytes(dt, k % dt->nelem);
}

/* ------------------------------------------------------------------------------------------ */
/* The types returned by MPI_Type_create_f90_*: one per (combiner, p, r), kept until
 * MPI_Finalize and never freed by the user (they count as predefined). */

#define F90_MAX 64
static struct {
    int combiner, p, r;
    struct aptus_dtype *t;
} f90_cache[F90_MAX];
static int f90_n;

struct aptus_dtype *aptus_dt_f90(int combiner, int p, int r, MPI_Datatype base)
{
    for (int i = 0; i < f90_n; i++)
        if (f90_cache[i].combiner == combiner && f90_cache[i].p == p && f90_cache[i].r == r)
            return f90_cache[i].t;
    if (f90_n == F90_MAX)
        return NULL;
    struct aptus_dtype *b = aptus_dtype_get(base), *t = aptus_dt_new_dup(b);
    if (!t)
        return NULL;
    int ints[2] = { p, r };
    int ni = combiner == MPI_COMBINER_F90_INTEGER ? 1 : 2;
    if (aptus_dt_set_contents(t, combiner, 0, ni, ni == 1 ? &r : ints, 0, NULL, 0, NULL, 0, NULL) ||
        aptus_dt_flatten(t)) {
        aptus_dtype_release(t);
        return NULL;
    }
    t->committed = 1;
    t->predefined = 1; /* not freeable; reductions see the base type */
    t->basic = b->basic;
    memcpy(t->name, b->name, sizeof t->name);
    f90_cache[f90_n].combiner = combiner;
    f90_cache[f90_n].p = p;
    f90_cache[f90_n].r = r;
    f90_cache[f90_n].t = t;
    f90_n++;
    return t;
}

void aptus_datatype_finalize(void)
{
    for (int i = 0; i < f90_n; i++) {
        f90_cache[i].t->predefined = 0;
        aptus_dtype_release(f90_cache[i].t);
    }
    f90_n = 0;
}
