/* Argument checks shared by the API layer. Each macro returns from the calling MPI function
 * with a clear error (naming the call and the problem) when the check fails. */
#ifndef APTUS_API_CHECK_H
#define APTUS_API_CHECK_H

#include <limits.h>

#include "api/api.h"
#include "core/errors.h"
#include "core/objects.h"
#include "runtime/runtime.h"

#define APTUS_TAG_UB INT_MAX

int aptus_api_not_initialized(const char *fn);

#define API_INIT(FN)                                                                                                   \
    do {                                                                                                               \
        if (__builtin_expect(!aptus_rt.initialized || aptus_rt.finalized, 0))                                          \
            return aptus_api_not_initialized(FN);                                                                      \
    } while (0)

#define GET_COMM(c, h, FN)                                                                                             \
    API_INIT(FN);                                                                                                      \
    struct aptus_comm *c = aptus_comm_get(h);                                                                          \
    if (__builtin_expect(!c, 0))                                                                                       \
    return aptus_error(NULL, MPI_ERR_COMM, FN,                                                                         \
                       (h) == MPI_COMM_NULL ? "MPI_COMM_NULL is not a valid communicator here"                         \
                                            : "invalid communicator handle")

/* A window argument (needs rma/rma.h): errors on no window go to MPI_COMM_SELF's handler. */
#define GET_WIN(w, h, FN)                                                                                              \
    API_INIT(FN);                                                                                                      \
    struct aptus_win *w = aptus_win_get(h);                                                                            \
    if (__builtin_expect(!w, 0))                                                                                       \
    return aptus_error(NULL, MPI_ERR_WIN, FN,                                                                          \
                       (h) == MPI_WIN_NULL ? "MPI_WIN_NULL is not a valid window" : "invalid window handle")

/* Needs core/group.h (aptus_group_lookup). */
#define GET_GROUP(g, h, c, FN)                                                                                         \
    struct aptus_group *g = aptus_group_lookup(h);                                                                     \
    if (!g)                                                                                                            \
    return aptus_error(c, MPI_ERR_GROUP, FN,                                                                           \
                       (h) == MPI_GROUP_NULL ? "MPI_GROUP_NULL is not a valid group" : "invalid group handle")

#define CHK_COUNT(c, n, FN)                                                                                            \
    if (__builtin_expect((n) < 0, 0))                                                                                  \
    return aptus_error(c, MPI_ERR_COUNT, FN, "negative count %lld", (long long)(n))

/* Any datatype handle, committed or not (queries, constructors, attributes). */
#define GET_ANY_DTYPE_ON(d, h, c, FN)                                                                                  \
    struct aptus_dtype *d = aptus_dtype_get(h);                                                                        \
    if (__builtin_expect(!d, 0))                                                                                       \
    return aptus_error(c, MPI_ERR_TYPE, FN,                                                                            \
                       (h) == MPI_DATATYPE_NULL ? "MPI_DATATYPE_NULL is not a valid datatype"                          \
                                                : "invalid datatype handle")
#define GET_ANY_DTYPE(d, h, FN) GET_ANY_DTYPE_ON(d, h, NULL, FN)

/* A datatype that may carry data: committed. */
#define GET_DTYPE(d, h, c, FN)                                                                                         \
    GET_ANY_DTYPE_ON(d, h, c, FN);                                                                                     \
    if (__builtin_expect(!d->committed, 0))                                                                            \
    return aptus_error(c, MPI_ERR_TYPE, FN, "datatype is not committed (call MPI_Type_commit first)")

#define CHK_DEST(c, r, FN)                                                                                             \
    if (__builtin_expect((r) != MPI_PROC_NULL && ((r) < 0 || (r) >= (c)->npeers), 0))                                  \
    return aptus_error(c, MPI_ERR_RANK, FN, "invalid rank %d (communicator %s has %d ranks)", (int)(r), (c)->name,     \
                       (c)->npeers)

#define CHK_SRC(c, r, FN)                                                                                              \
    if (__builtin_expect((r) != MPI_PROC_NULL && (r) != MPI_ANY_SOURCE && ((r) < 0 || (r) >= (c)->npeers), 0))         \
    return aptus_error(c, MPI_ERR_RANK, FN, "invalid source rank %d (communicator %s has %d ranks)", (int)(r),         \
                       (c)->name, (c)->npeers)

#define CHK_SEND_TAG(c, t, FN)                                                                                         \
    if (__builtin_expect((t) < 0, 0))                                                                                  \
    return aptus_error(c, MPI_ERR_TAG, FN, "invalid tag %d (must be between 0 and MPI_TAG_UB)", (int)(t))

#define CHK_RECV_TAG(c, t, FN)                                                                                         \
    if (__builtin_expect((t) < 0 && (t) != MPI_ANY_TAG, 0))                                                            \
    return aptus_error(c, MPI_ERR_TAG, FN, "invalid tag %d (must be MPI_ANY_TAG or between 0 and MPI_TAG_UB)", (int)(t))

#define CHK_BUF(c, b, bytes, FN)                                                                                       \
    if (__builtin_expect(!(b) && (bytes) > 0, 0))                                                                      \
    return aptus_error(c, MPI_ERR_BUFFER, FN, "null buffer for %zu bytes of data", (size_t)(bytes))

/* A null buffer holding `bytes` bytes of data of datatype d. In the standard ABI MPI_BOTTOM is
 * the null pointer, and a datatype whose displacements are absolute addresses (MPI_Get_address)
 * is used with it: its data then starts away from 0 (true_lb != 0), and the null buffer is
 * fine. */
static inline int aptus_buf_missing(const void *b, size_t bytes, const struct aptus_dtype *d)
{
    return !b && bytes > 0 && d->true_lb == 0;
}

#define CHK_DATA_BUF(c, b, d, bytes, FN)                                                                               \
    if (__builtin_expect(aptus_buf_missing(b, bytes, d), 0))                                                           \
    return aptus_error(c, MPI_ERR_BUFFER, FN, "null buffer for %zu bytes of data", (size_t)(bytes))

/* GET_DTYPE for a message buffer: count 0 of MPI_DATATYPE_NULL is an empty message (the reading
 * MPICH and Open MPI take, docs/DESIGN.md) and stands for 0 bytes. The null handle is looked at
 * only once the lookup has failed, so the point-to-point fast path pays nothing for it. */
#define GET_MSG_DTYPE(d, h, n, c, FN)                                                                                  \
    struct aptus_dtype *d = aptus_dtype_get(h);                                                                        \
    if (__builtin_expect(!d, 0) && (h) == MPI_DATATYPE_NULL && (n) == 0)                                               \
        d = aptus_dtype_get(MPI_BYTE);                                                                                 \
    if (__builtin_expect(!d, 0))                                                                                       \
        return aptus_error(c, MPI_ERR_TYPE, FN,                                                                        \
                           (h) == MPI_DATATYPE_NULL ? "MPI_DATATYPE_NULL is not a valid datatype"                      \
                                                    : "invalid datatype handle");                                      \
    if (__builtin_expect(!d->committed, 0))                                                                            \
    return aptus_error(c, MPI_ERR_TYPE, FN, "datatype is not committed (call MPI_Type_commit first)")

#define CHK_ROOT(c, r, FN)                                                                                             \
    if ((r) < 0 || (r) >= (c)->size)                                                                                   \
    return aptus_error(c, MPI_ERR_ROOT, FN, "invalid root %d (communicator %s has %d ranks)", (int)(r), (c)->name,     \
                       (c)->size)

/* Bytes of `count` elements of a datatype as they travel: the packed size (no holes, no
 * padding). */
static inline size_t aptus_dt_bytes(const struct aptus_dtype *d, MPI_Count count)
{
    return (size_t)count * d->size;
}

/* Whether n elements of d (n >= 0) from a large-count (_c) call take more bytes than a size_t
 * holds. The int forms (n <= INT_MAX, known where this is inlined) pay nothing. */
static inline int aptus_dt_bytes_overflow(const struct aptus_dtype *d, MPI_Count n)
{
    size_t b;
    return __builtin_expect(n > INT_MAX, 0) && __builtin_mul_overflow((size_t)n, d->size, &b);
}

/* size_t bytes = aptus_dt_bytes(d, n), refused with MPI_ERR_COUNT when it does not fit a size_t:
 * a wrapped size would send or copy the wrong amount. */
#define GET_BYTES(bytes, c, d, n, FN)                                                                                  \
    if (__builtin_expect(aptus_dt_bytes_overflow(d, n), 0))                                                            \
        return aptus_error(c, MPI_ERR_COUNT, FN, "%lld elements of %zu bytes each are too large a message",            \
                           (long long)(n), (size_t)(d)->size);                                                         \
    size_t bytes = aptus_dt_bytes(d, n)

#endif
