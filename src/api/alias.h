/* Aliased send and receive buffers of a collective (the standard forbids them; MPI_IN_PLACE is
 * the way to share one buffer): the bytes each buffer argument's data occupies, and whether two
 * sets of such buffers certainly share a byte. Computed from the counts, displacements and the
 * datatypes' true extents, so a send buffer inside the receive buffer (Allgather's own block
 * passed as the send buffer) is caught as well as the very same pointer; datatypes with holes
 * are judged by the bytes known to be data (the first and last of a buffer), so interleaved
 * buffers that never touch the same byte are not refused. */
#ifndef APTUS_API_ALIAS_H
#define APTUS_API_ALIAS_H

#include <stddef.h>
#include <stdint.h>

#include "core/objects.h"

/* The data of one buffer argument: from its first data byte lo to just past its last, hi
 * (lo == hi: no data); dense when every byte in between is data. */
struct aptus_span {
    uintptr_t lo, hi;
    int dense;
};

/* count elements of d at buf + off bytes (buf may be MPI_BOTTOM, with absolute addresses in
 * the datatype or the displacement). No span (no check) when the bytes do not fit the address
 * space. */
static inline struct aptus_span aptus_span_of(const void *buf, MPI_Aint off, size_t count, const struct aptus_dtype *d)
{
    struct aptus_span s = { 0, 0, 0 };
    intptr_t step, first, last;
    if (count == 0 || d->size == 0 || __builtin_mul_overflow((intptr_t)(count - 1), (intptr_t)d->extent, &step) ||
        __builtin_add_overflow((intptr_t)(uintptr_t)buf, (intptr_t)off + (intptr_t)d->true_lb, &first) ||
        __builtin_add_overflow(first, step, &last))
        return s;
    if (last < first) { /* negative extent */
        intptr_t t = first;
        first = last;
        last = t;
    }
    intptr_t end;
    if (__builtin_add_overflow(last, (intptr_t)d->true_extent, &end))
        return s;
    s.lo = (uintptr_t)first;
    s.hi = (uintptr_t)end;
    /* one run of data per element, the elements side by side */
    s.dense = d->nsegs == 1 && d->segs && d->segs[0].count == 1 && d->segs[0].len == d->size &&
              (count == 1 || d->extent == (MPI_Aint)d->size);
    return s;
}

/* Whether a and b certainly share a byte of data: both dense and overlapping, a dense one
 * holding the other's first or last byte, or the two having a first or last byte in common. */
static inline int aptus_span_alias(struct aptus_span a, struct aptus_span b)
{
    if (a.lo >= b.hi || b.lo >= a.hi) /* disjoint (or one empty) */
        return 0;
    if (a.dense && b.dense)
        return 1;
    if (a.dense)
        return b.lo >= a.lo || b.hi <= a.hi; /* b's first or last byte is inside a */
    if (b.dense)
        return a.lo >= b.lo || a.hi <= b.hi;
    return a.lo == b.lo || a.hi == b.hi || a.lo == b.hi - 1 || b.lo == a.hi - 1;
}

/* Whether some span of a[0..na) and some span of b[0..nb) certainly share a byte. Costs a pass
 * over both when their hulls are apart (the usual case), a sort when they are not. */
int aptus_spans_alias(const struct aptus_span *a, size_t na, const struct aptus_span *b, size_t nb);

#endif
