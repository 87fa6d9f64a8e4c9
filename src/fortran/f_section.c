/* Non-contiguous array sections as the buffers of mpi_f08's nonblocking, persistent and
 * one-sided calls (MPI_SUBARRAYS_SUPPORTED is .TRUE. in mpi_f08).
 *
 * A specific whose buffer the call keeps hands a non-contiguous section here as the standard C
 * descriptor of the compiler (ISO_Fortran_binding.h). The call's count and datatype describe the
 * section's elements as if they were contiguous; this file turns that into a datatype over the
 * section's real layout, so that the library reads and writes the user's memory in place, with no
 * copy the call would outlive:
 *
 *  - SINGLE: the buffer is one message of COUNT copies of DATATYPE (point-to-point, broadcast,
 *    one-sided, file; the send buffer of a gather, the receive buffer of a scatter): a datatype of
 *    all of them, COUNT becomes 1. Each copy of DATATYPE must lie
 *    in one element of the array (its extent the element's length, or a divisor of it: MPI_REAL
 *    over COMPLEX).
 *  - ELEM: the call splits the buffer by counts and displacements (the collectives): DATATYPE
 *    itself is replaced by one of the same type map whose extent is the distance between two
 *    elements, which needs a section whose elements lie at one stride from each other (a
 *    strided 1-D section, a row of a matrix); every count stays as it is. Two buffers sharing the
 *    datatype argument (the reductions) must then have the same stride.
 *  - BLOCK: as ELEM, for a buffer the call splits into blocks of COUNT copies of a datatype of its
 *    own (gathers, scatters, all-to-all, partitions): when the elements are not at one stride, the
 *    blocks may still all have one layout, one distance apart (the columns of a 2-D block): then a
 *    datatype of one block, resized to that distance, and COUNT becomes 1.
 *  - ADDR: a call that touches one element only (MPI_Fetch_and_op, MPI_Compare_and_swap) or
 *    names the buffer of an earlier begin (split collective file ends): its first element.
 *
 * What cannot be described so is refused with MPI_ERR_BUFFER and a message saying why. The
 * datatypes made here are freed as soon as the call has started: the library keeps what a
 * pending operation uses. docs/DESIGN.md, "Fortran". */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include APTUS_CFI_HEADER

#include "f_runtime.h"

enum { SECTION_SINGLE = 1, SECTION_ELEM = 2, SECTION_ADDR = 3, SECTION_BLOCK = 4 };

/* The byte offset of element i (in array element order) from the first element. */
static MPI_Aint element_offset(const CFI_cdesc_t *d, MPI_Count i)
{
    MPI_Aint off = 0;
    for (int k = 0; k < d->rank; k++) {
        MPI_Count e = d->dim[k].extent;
        off += (MPI_Aint)(i % e) * (MPI_Aint)d->dim[k].sm;
        i /= e;
    }
    return off;
}

/* The number of elements of the section. */
static MPI_Count element_count(const CFI_cdesc_t *d)
{
    MPI_Count n = 1;
    for (int k = 0; k < d->rank; k++)
        n *= d->dim[k].extent > 0 ? d->dim[k].extent : 0;
    return n;
}

/* Whether the elements lie one element length apart. */
static int contiguous(const CFI_cdesc_t *d)
{
    MPI_Aint want = (MPI_Aint)d->elem_len;
    for (int k = 0; k < d->rank; k++) {
        if (d->dim[k].extent <= 1)
            continue;
        if ((MPI_Aint)d->dim[k].sm != want)
            return 0;
        want *= (MPI_Aint)d->dim[k].extent;
    }
    return 1;
}

/* The one distance between consecutive elements, or 0 when there is none (the elements do not lie
 * at one stride from each other). */
static MPI_Aint linear_stride(const CFI_cdesc_t *d)
{
    MPI_Aint stride = 0, want = 0;
    for (int k = 0; k < d->rank; k++) {
        if (d->dim[k].extent <= 1)
            continue;
        if (stride == 0) {
            stride = (MPI_Aint)d->dim[k].sm;
            want = stride * (MPI_Aint)d->dim[k].extent;
        } else if ((MPI_Aint)d->dim[k].sm == want) {
            want *= (MPI_Aint)d->dim[k].extent;
        } else {
            return 0;
        }
    }
    return stride;
}

static int refuse(const char *call, const char *why)
{
    return aptus_f_error(MPI_ERR_BUFFER, call, why);
}

/* The distance between consecutive blocks of c elements when every block has the layout of the
 * first, or 0. */
static MPI_Aint block_stride(const CFI_cdesc_t *d, MPI_Count c)
{
    MPI_Count n = element_count(d);
    if (c <= 0 || n % c != 0 || n / c < 2)
        return 0;
    MPI_Aint step = element_offset(d, c);
    for (MPI_Count b = 1; b < n / c; b++) {
        MPI_Aint start = element_offset(d, b * c);
        if (start != (MPI_Aint)b * step)
            return 0;
        for (MPI_Count j = 1; j < c; j++)
            if (element_offset(d, b * c + j) - start != element_offset(d, j))
                return 0;
    }
    return step;
}

/* A datatype of `count` copies of t (extent ext, `per` copies in each element) over the section:
 * nested vectors when the copies fill the whole section, else one displacement per copy. */
static int section_type(const CFI_cdesc_t *d, MPI_Count count, MPI_Datatype t, MPI_Aint ext, MPI_Count per,
                        MPI_Datatype *out)
{
    int rc;
    if (count == element_count(d) * per) {
        MPI_Datatype cur = t, next;
        if (per > 1) {
            if ((rc = PMPI_Type_contiguous_c(per, t, &next)) != MPI_SUCCESS)
                return rc;
            cur = next;
        }
        for (int k = 0; k < d->rank; k++) {
            rc = PMPI_Type_create_hvector_c(d->dim[k].extent, 1, (MPI_Aint)d->dim[k].sm, cur, &next);
            if (cur != t)
                PMPI_Type_free(&cur);
            if (rc != MPI_SUCCESS)
                return rc;
            cur = next;
        }
        if (cur == t && (rc = PMPI_Type_dup(t, &cur)) != MPI_SUCCESS)
            return rc;
        *out = cur;
        return MPI_SUCCESS;
    }
    MPI_Aint *disp = malloc((size_t)count * sizeof *disp);
    if (!disp)
        return MPI_ERR_NO_MEM;
    for (MPI_Count i = 0; i < count; i++)
        disp[i] = element_offset(d, i / per) + (MPI_Aint)(i % per) * ext;
    rc = PMPI_Type_create_hindexed_block_c(count, 1, disp, t, out);
    free(disp);
    return rc;
}

/* APTUS_F08_SECTION(BUF, MODE, NAME, COUNT, DATATYPE, NEWTYPE, BASE, STRIDE, IERROR): the
 * buffer, count and datatype to give the C entry point for BUF. COUNT is updated (SINGLE), NEWTYPE
 * is DATATYPE or a datatype made here (free it with APTUS_F08_SECTION_FREE), BASE the address of
 * the first element, STRIDE the stride an ELEM buffer was described with (0: as the datatype's
 * extent, -1: a sentinel or an empty buffer, whose layout does not matter). */
APTUS_F_HIDDEN void aptus_f08_section(CFI_cdesc_t *d, int mode, const char *name, MPI_Count *count,
                                      const MPI_Fint *datatype, MPI_Fint *newtype, void **base, MPI_Aint *stride,
                                      MPI_Fint *ierror);
void aptus_f08_section(CFI_cdesc_t *d, int mode, const char *name, MPI_Count *count, const MPI_Fint *datatype,
                       MPI_Fint *newtype, void **base, MPI_Aint *stride, MPI_Fint *ierror)
{
    const char *call = aptus_f_intern(name, strlen(name));
    *newtype = *datatype;
    *base = d->base_addr;
    *stride = 0;
    *ierror = MPI_SUCCESS;
    if (aptus_f_buf(d->base_addr) != d->base_addr || element_count(d) == 0) {
        *stride = -1;
        return;
    }
    if (mode == SECTION_ADDR || contiguous(d))
        return;
    if ((mode == SECTION_SINGLE || mode == SECTION_BLOCK) && *count <= 0)
        return; /* nothing is sent or received (a negative count is the library's to refuse) */
    MPI_Datatype t = MPI_Type_fromint(*datatype);
    MPI_Count lb, ext, tlb, text;
    if (t == MPI_DATATYPE_NULL || PMPI_Type_get_extent_c(t, &lb, &ext) != MPI_SUCCESS ||
        PMPI_Type_get_true_extent_c(t, &tlb, &text) != MPI_SUCCESS)
        return; /* the library names the bad datatype */
    MPI_Count len = (MPI_Count)d->elem_len;
    if (ext <= 0 || len % ext != 0 || tlb < 0 || tlb + text > ext) {
        *ierror = refuse(call, "a non-contiguous array section needs a datatype whose extent is the length of an "
                               "array element or divides it, and whose data lies within that extent");
        return;
    }
    MPI_Datatype made = MPI_DATATYPE_NULL;
    MPI_Aint step = 0;
    int rc;
    if (mode == SECTION_SINGLE) {
        MPI_Count per = len / ext;
        if (*count > element_count(d) * per) {
            *ierror = refuse(call, "the count needs more elements than the non-contiguous array section has");
            return;
        }
        rc = section_type(d, *count, t, ext, per, &made);
        if (rc == MPI_SUCCESS)
            *count = 1;
    } else if (mode == SECTION_BLOCK && len == ext && linear_stride(d) <= 0 && (step = block_stride(d, *count)) > 0) {
        MPI_Datatype one;
        rc = section_type(d, *count, t, ext, 1, &one);
        if (rc == MPI_SUCCESS) {
            rc = PMPI_Type_create_resized_c(one, 0, step, &made);
            PMPI_Type_free(&one);
        }
        if (rc == MPI_SUCCESS)
            *count = 1;
    } else {
        MPI_Aint s = linear_stride(d);
        if (len != ext || s <= 0) {
            *ierror = refuse(call, "a collective can take a non-contiguous array section only when its elements lie "
                                   "at one positive stride (a strided 1-D section, a row of a matrix) or, for a "
                                   "buffer split into blocks of one count, when every block has one layout at one "
                                   "distance (columns of a 2-D block), and the datatype's extent is an element's "
                                   "length; copy it to a contiguous array");
            return;
        }
        rc = PMPI_Type_create_resized_c(t, lb, s, &made);
        if (rc == MPI_SUCCESS)
            *stride = s;
    }
    if (rc == MPI_SUCCESS && (rc = PMPI_Type_commit(&made)) != MPI_SUCCESS)
        PMPI_Type_free(&made);
    if (rc != MPI_SUCCESS) {
        *ierror = rc == MPI_ERR_NO_MEM ? aptus_f_nomem(call)
                                       : refuse(call, "the datatype describing the array section could not be made");
        return;
    }
    *newtype = MPI_Type_toint(made);
}

/* APTUS_F08_SECTION_PAIR(NAME, T1, S1, T2, S2, DATATYPE, IERROR): two ELEM buffers sharing one
 * datatype argument: T1 becomes the datatype for both (T2 is freed and set to DATATYPE), or an
 * error when their layouts differ. */
APTUS_F_HIDDEN void aptus_f08_section_pair(const char *name, MPI_Fint *t1, const MPI_Aint *s1, MPI_Fint *t2,
                                           const MPI_Aint *s2, const MPI_Fint *datatype, MPI_Fint *ierror);
void aptus_f08_section_pair(const char *name, MPI_Fint *t1, const MPI_Aint *s1, MPI_Fint *t2, const MPI_Aint *s2,
                            const MPI_Fint *datatype, MPI_Fint *ierror)
{
    *ierror = MPI_SUCCESS;
    if (*s1 == -1 || (*s1 == *s2 && *s2 != -1)) {
        if (*s1 == -1)
            *t1 = *t2;
        else if (*t2 != *datatype)
            aptus_f08_section_free(t2, datatype);
        *t2 = *datatype;
        return;
    }
    if (*s2 == -1)
        return;
    aptus_f08_section_free(t1, datatype);
    aptus_f08_section_free(t2, datatype);
    *ierror = refuse(aptus_f_intern(name, strlen(name)),
                     "the send and receive buffers share one datatype argument, so a non-contiguous array section "
                     "needs the other buffer to be a section of the same stride (or MPI_IN_PLACE)");
}

/* APTUS_F08_SECTION_FREE(NEWTYPE, DATATYPE): frees a datatype APTUS_F08_SECTION made. */
void aptus_f08_section_free(MPI_Fint *newtype, const MPI_Fint *datatype)
{
    if (*newtype == *datatype)
        return;
    MPI_Datatype t = MPI_Type_fromint(*newtype);
    PMPI_Type_free(&t);
    *newtype = *datatype;
}
