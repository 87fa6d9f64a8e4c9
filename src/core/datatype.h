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
    size_t block; /* current run within the element's flattened map */
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

#endif
