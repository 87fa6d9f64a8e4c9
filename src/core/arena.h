/* The handle arena: where every object behind a handle that is not predefined lives.
 *
 * A handle is the address of its object, so a handle the program made up (a small integer, a
 * stale pointer, the address of an unmapped page) would be followed to read the object's magic
 * number -- and crash. Instead, each kind of object (communicators, datatypes, requests, ...)
 * has a region of its own in one reservation of address space made when the library is loaded,
 * cut into slots of a fixed size; a handle is accepted only if it is the start of a slot of its
 * kind's region (aptus_obj_in: a subtraction, a rotation and a comparison with constants of the
 * arena -- and a multiplication for a slot size that is no power of two), and only then is its
 * magic read. The whole reservation is readable for the life of the process: a slot holds a
 * live object of the right kind (right magic), a freed one (zeros: magic 0), or was never used
 * (the zero page). So no handle conversion reads memory that may be unmapped, whatever the value.
 *
 * Slots are handed out from per-kind free lists, then carved from the region's start; pages are
 * made writable (mprotect) in chunks as a kind grows; freed slots are zeroed and never given back
 * to the system. Allocation and freeing take a lock of their own (objects are also made before
 * MPI_Init, outside the library's lock). Requests, which the message layer allocates on every
 * nonblocking call, keep their own free list (pt2pt/request.c) and come here only to grow it.
 *
 * Under AddressSanitizer a freed slot is poisoned but for its first 4 bytes (the magic that a
 * stale handle's check reads), and the end of each slot beyond its object's size too, so
 * use-after-free and overflows of objects are still reported; the writable chunks are root
 * regions of LeakSanitizer (what live objects point to is no leak). docs/DESIGN.md, "Handles". */
#ifndef APTUS_CORE_ARENA_H
#define APTUS_CORE_ARENA_H

#include <stddef.h>
#include <stdint.h>

/* Kinds and their slot sizes, ODD << SHIFT bytes (INV: the inverse of ODD modulo 2^64): each
 * kind's struct must fit (APTUS_OBJ_FITS next to each struct). */
#define APTUS_OBJ_KINDS(X)                                                                                             \
    X(COMM, 1, 1, 9)                      /* struct aptus_comm: 512 */                                                 \
    X(DTYPE, 1, 1, 9)                     /* struct aptus_dtype: 512 */                                                \
    X(OP, 1, 1, 6)                        /* struct aptus_op: 64 */                                                    \
    X(ERRH, 1, 1, 7)                      /* struct aptus_errhandler: 128 */                                           \
    X(GROUP, 1, 1, 6)                     /* struct aptus_group: 64 */                                                 \
    X(REQUEST, 3, 0xaaaaaaaaaaaaaaabu, 7) /* struct aptus_request: 384 */                                              \
    X(WIN, 1, 1, 10)                      /* struct aptus_win: 1024 */                                                 \
    X(INFO, 1, 1, 6)                      /* struct aptus_info: 64 */                                                  \
    X(SESSION, 1, 1, 7)                   /* struct aptus_session: 128 */                                              \
    X(MESSAGE, 1, 1, 6)                   /* a matched message (api/pt2pt.c): 64 */                                    \
    X(FILE, 1, 1, 9)                      /* struct aptus_file (io/io.h): 512 */

enum aptus_obj_kind {
#define APTUS_OBJ_ENUM_(K, ODD, INV, SHIFT) APTUS_OBJ_##K,
    APTUS_OBJ_KINDS(APTUS_OBJ_ENUM_)
#undef APTUS_OBJ_ENUM_
        APTUS_OBJ_NKINDS
};

enum {
#define APTUS_OBJ_SLOT_(K, ODD, INV, SHIFT) APTUS_OBJ_SLOT_##K = (ODD) << (SHIFT),
    APTUS_OBJ_KINDS(APTUS_OBJ_SLOT_)
#undef APTUS_OBJ_SLOT_
};
#define APTUS_OBJ_INV_OK_(K, ODD, INV, SHIFT)                                                                          \
    _Static_assert((uint64_t)(ODD) * (uint64_t)(INV) == 1 && ((ODD)&1), #K ": INV is the inverse of ODD");
APTUS_OBJ_KINDS(APTUS_OBJ_INV_OK_)
#undef APTUS_OBJ_INV_OK_

/* One kind's region: set once, when the library is loaded (base 0 and nslots 0 if the
 * reservation failed: every check fails then). */
struct aptus_obj_region {
    uintptr_t base;   /* the region's first slot */
    uintptr_t nslots; /* slots in the region */
};
/* (hidden: read straight by the checks, not through the global offset table) */
extern struct aptus_obj_region aptus_obj_regions[APTUS_OBJ_NKINDS] __attribute__((visibility("hidden")));

/* Whether h is the start of a slot of the region of kind `kind` (slot size ODD << SHIFT; inv and
 * shift are the kind's INV and SHIFT): then reading its first bytes is safe. Any other value --
 * predefined constants, null, addresses outside the region or inside a slot -- is refused
 * without a read. The offset from the region's start times INV, rotated right by SHIFT, is
 * offset / slot size when the offset is a multiple of the slot size, and at least 2^64 / slot
 * size otherwise (the map is one-to-one, and the multiples already take every value below that
 * bound), so one comparison with the number of slots decides. */
static inline __attribute__((always_inline)) int aptus_obj_in_(const void *h, int kind, uint64_t inv, unsigned shift)
{
    uint64_t off = (uint64_t)((uintptr_t)h - aptus_obj_regions[kind].base) * inv;
    off = (off >> shift) | (off << ((64 - shift) & 63));
    return off < aptus_obj_regions[kind].nslots;
}

/* The constants of a kind (folded where kind is a constant). */
#define APTUS_OBJ_INV_(K, ODD, INV, SHIFT)   : kind == APTUS_OBJ_##K ? (uint64_t)(INV)
#define APTUS_OBJ_SHIFT_(K, ODD, INV, SHIFT) : kind == APTUS_OBJ_##K ? (SHIFT)
static inline __attribute__((always_inline)) uint64_t aptus_obj_inv_(int kind)
{
    return 0 ? 0 APTUS_OBJ_KINDS(APTUS_OBJ_INV_) : 1;
}
static inline __attribute__((always_inline)) unsigned aptus_obj_shift_(int kind)
{
    return 0 ? 0 APTUS_OBJ_KINDS(APTUS_OBJ_SHIFT_) : 0;
}
#undef APTUS_OBJ_INV_
#undef APTUS_OBJ_SHIFT_

/* aptus_obj_in(h, APTUS_OBJ_COMM): see aptus_obj_in_ (kind a constant). */
#define aptus_obj_in(h, kind) aptus_obj_in_((const void *)(h), (kind), aptus_obj_inv_(kind), aptus_obj_shift_(kind))

/* The slot size of a kind (folded where kind is a constant). */
#define APTUS_OBJ_SLOTSZ_(K, ODD, INV, SHIFT) : kind == APTUS_OBJ_##K ? (uintptr_t)APTUS_OBJ_SLOT_##K
static inline __attribute__((always_inline)) uintptr_t aptus_obj_slot_size(int kind)
{
    return 0 ? 0 APTUS_OBJ_KINDS(APTUS_OBJ_SLOTSZ_) : 1;
}
#undef APTUS_OBJ_SLOTSZ_

/* The number of the slot h starts (aptus_obj_in(h, kind) true): handles as integers. */
static inline uintptr_t aptus_obj_index(const void *h, int kind)
{
    return ((uintptr_t)h - aptus_obj_regions[kind].base) / aptus_obj_slot_size(kind);
}
/* The start of slot i of kind `kind`, or NULL when the region has no such slot. */
static inline void *aptus_obj_at(int kind, uintptr_t i)
{
    return i < aptus_obj_regions[kind].nslots ? (void *)(aptus_obj_regions[kind].base + i * aptus_obj_slot_size(kind))
                                              : NULL;
}

/* Next to each struct behind a handle: it fits its kind's slot and starts with its magic. */
#define APTUS_OBJ_FITS(type, K)                                                                                        \
    _Static_assert(sizeof(type) <= APTUS_OBJ_SLOT_##K && offsetof(type, magic) == 0,                                   \
                   #type " fits a slot of the handle arena and starts with its magic")

/* A zeroed object of `kind` (size bytes, at most the kind's slot size), or NULL when out of
 * memory (or address space). */
void *aptus_obj_alloc(enum aptus_obj_kind kind, size_t size);
/* Gives a slot back (NULL is ignored); its magic reads 0 from now on. p must come from
 * aptus_obj_alloc of the same kind. */
void aptus_obj_free(enum aptus_obj_kind kind, void *p);

/* Objects of a kind handed out and not freed (tests, statistics). */
size_t aptus_obj_live(enum aptus_obj_kind kind);

#endif
