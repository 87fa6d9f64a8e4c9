/* The datatype engine: predefined and derived datatypes, their flattened type maps, and
 * piecewise packing and unpacking through a cursor.
 *
 * Every committed datatype has a flattened type map: the list of contiguous byte runs
 * (displacement from the buffer, length) of one element, in type-map order, adjacent runs
 * merged. Element i of a buffer of `count` elements starts at buf + i * extent. The packed
 * form of `count` elements is the concatenation of all runs of all elements: count * size
 * bytes. That packed form is what travels on the wire.
 *
 * `contig` (in struct aptus_dtype) means that count elements are one run of count * size
 * bytes starting at buf + true_lb: the message layer then skips the engine altogether. */
#ifndef APTUS_CORE_DATATYPE_H
#define APTUS_CORE_DATATYPE_H

#include <stddef.h>
#include <sys/uio.h>

#include "core/objects.h"

void aptus_datatype_init(void);
void aptus_datatype_finalize(void);
const char *aptus_dtype_name(const struct aptus_dtype *dt);

/* A position inside the packed form of `count` elements of dt at buf. */
struct aptus_dt_cursor {
    char *buf;
    const struct aptus_dtype *dt;
    size_t count;
    size_t elem;  /* current element */
    size_t block; /* current piece (struct aptus_dt_seg) of the element's flattened map */
    size_t rep;   /* current run within that piece */
    size_t off;   /* bytes already consumed of that run */
    size_t pos;   /* packed bytes before the cursor */
    size_t total; /* count * dt->size */
};

void aptus_dt_cursor_init(struct aptus_dt_cursor *c, const void *buf, size_t count, const struct aptus_dtype *dt);
/* Moves the cursor to packed offset pos (0 <= pos <= total), forward or backward. */
void aptus_dt_cursor_seek(struct aptus_dt_cursor *c, size_t pos);
/* Copies up to len packed bytes from the user buffer at the cursor into dst and advances.
 * Returns the bytes copied (less than len only at the end of the data). */
size_t aptus_dt_pack_some(struct aptus_dt_cursor *c, void *dst, size_t len);
/* Copies up to len packed bytes from src into the user buffer at the cursor and advances. */
size_t aptus_dt_unpack_some(struct aptus_dt_cursor *c, const void *src, size_t len);
/* Describes the next pieces of user memory, at most max iovecs and at most len bytes, and
 * advances past them. Returns the number of iovecs filled; *bytes gets their total. */
int aptus_dt_iov_some(struct aptus_dt_cursor *c, struct iovec *iov, int max, size_t len, size_t *bytes);

/* Whole-buffer forms: pack count elements of dt at buf into out (count * size bytes), and
 * the reverse. */
void aptus_dt_pack(const void *buf, size_t count, const struct aptus_dtype *dt, void *out);
void aptus_dt_unpack(const void *in, size_t count, const struct aptus_dtype *dt, void *buf);

/* For reductions: when every basic element of dt is the same predefined type B, returns B and
 * sets *n to the number of B elements in one element of dt; else MPI_DATATYPE_NULL. For a
 * predefined type returns itself with *n = 1. */
MPI_Datatype aptus_dt_reduce_type(const struct aptus_dtype *dt, size_t *n);

/* Basic elements (MPI_Get_elements) in `bytes` packed bytes of dt; -1 when bytes ends inside
 * a basic element. */
MPI_Count aptus_dt_elements(const struct aptus_dtype *dt, size_t bytes);
/* The reverse: packed bytes of the first k basic elements of a buffer of dt
 * (MPI_Status_set_elements). */
size_t aptus_dt_elements_bytes(const struct aptus_dtype *dt, size_t k);

/* ---- reference counts ----
 * A derived type stays alive while its handle, a type built from it, or a pending operation
 * holds it. The message layer retains the type of a pending request and releases it when the
 * request completes. Both are no-ops on predefined types (and accept NULL). */
void aptus_dtype_retain(struct aptus_dtype *dt);
void aptus_dtype_release(struct aptus_dtype *dt);

/* ---- construction (internal; the API layer checks the arguments) ----
 * Each returns a new, uncommitted type with refcount 1 that holds references to the types it
 * is made of, or NULL when out of memory. Sizes, bounds, reduce type and element counts are
 * set at once; the flattened map is built by aptus_dt_flatten() (at commit). */
struct aptus_dtype *aptus_dt_new_hvector(size_t count, size_t blocklen, MPI_Aint stride, struct aptus_dtype *old);
struct aptus_dtype *aptus_dt_new_struct(size_t n, const size_t *blocklens, const MPI_Aint *disps,
                                        struct aptus_dtype *const *types);
struct aptus_dtype *aptus_dt_new_resized(struct aptus_dtype *old, MPI_Aint lb, MPI_Aint extent);
struct aptus_dtype *aptus_dt_new_dup(struct aptus_dtype *old);
/* The cached type for MPI_Type_create_f90_* (combiner, p, r) over predefined `base`: committed,
 * not freeable (it counts as predefined), released by aptus_datatype_finalize. NULL: no memory. */
struct aptus_dtype *aptus_dt_f90(int combiner, int p, int r, MPI_Datatype base);
/* Builds the flattened map (no-op when present). MPI_SUCCESS or MPI_ERR_NO_MEM. */
int aptus_dt_flatten(struct aptus_dtype *dt);

/* What MPI_Type_get_envelope / MPI_Type_get_contents return. `large`: made by a _c
 * constructor (counts in `counts`). */
struct aptus_dt_contents {
    int large;
    int ni, na, nc, nd;
    int *ints;
    MPI_Aint *addrs;
    MPI_Count *counts;
    MPI_Datatype *types; /* each retained */
};
struct aptus_dt_contents *aptus_dt_contents(struct aptus_dtype *dt);
/* Sets the combiner and contents of dt (copies the arrays, retains the types). */
int aptus_dt_set_contents(struct aptus_dtype *dt, int combiner, int large, int ni, const int *ints, int na,
                          const MPI_Aint *addrs, int nc, const MPI_Count *counts, int nd, const MPI_Datatype *types);
/* User handles: a new type counts one; aptus_dt_handle_out adds one (a handle returned by
 * MPI_Type_get_contents, with a reference); aptus_dt_handle_free drops one and its reference
 * (MPI_Type_free), or returns 1 when the user holds none (the handle was already freed while
 * other references keep the object alive). */
void aptus_dt_handle_out(struct aptus_dtype *dt);
int aptus_dt_handle_free(struct aptus_dtype *dt);
int aptus_dt_handles(const struct aptus_dtype *dt);

/* The structure of a type, for walks over its basic elements: returns 0 for a predefined
 * type; 1 for `count` blocks of (*bl, or 1 when bl is NULL) copies of old, block i at
 * i * stride; 2 for n blocks of bl[i] copies of types[i] at disps[i]. Copies within a block
 * are the old type's extent apart. */
struct aptus_dt_parts {
    size_t n, count;
    const size_t *bl;
    MPI_Aint stride;
    struct aptus_dtype *old;
    const MPI_Aint *disps;
    struct aptus_dtype *const *types;
};
int aptus_dt_parts(const struct aptus_dtype *dt, struct aptus_dt_parts *out);

/* ---- external32 (core/dtype_ext32.c) ---- */
/* Bytes of a predefined type in external32, 0 when it has no external32 form. */
size_t aptus_dt_ext32_basic_size(MPI_Datatype predefined);
/* Bytes of one element of dt in external32; *ok (if not NULL) = every basic type has one. */
size_t aptus_dt_ext32_size(const struct aptus_dtype *dt, int *ok);
/* Converts count elements of dt at buf to external32 at out (aptus_dt_ext32_size * count
 * bytes), and back. */
void aptus_dt_ext32_pack(const void *buf, size_t count, const struct aptus_dtype *dt, void *out);
void aptus_dt_ext32_unpack(const void *in, size_t count, const struct aptus_dtype *dt, void *buf);

#endif
