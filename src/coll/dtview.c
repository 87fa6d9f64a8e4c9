/* User buffers seen by the collective algorithms: packed bytes for data movement, the layout of
 * a struct coll_red for reductions. Contiguous datatypes are used in place; the others go
 * through the datatype engine (pack into / unpack from temporary buffers). */
#include <stdlib.h>
#include <string.h>

#include "coll/coll_internal.h"
#include "core/datatype.h"

/* ---- packed bytes ------------------------------------------------------------------------------ */

int aptus_coll_pack_in(const void *buf, size_t count, const struct aptus_dtype *dt, const char **p, void **tmp)
{
    *tmp = NULL;
    if (dt->contig || count == 0) {
        *p = (const char *)buf + dt->true_lb;
        return 0;
    }
    size_t bytes = count * dt->size;
    *tmp = aptus_coll_buf(bytes);
    if (!*tmp)
        return MPI_ERR_NO_MEM;
    aptus_coll_pack(buf, count, dt, *tmp);
    *p = *tmp;
    return 0;
}

int aptus_coll_unpack_prep(void *buf, size_t count, const struct aptus_dtype *dt, char **p, void **tmp)
{
    *tmp = NULL;
    if (dt->contig || count == 0) {
        *p = (char *)buf + dt->true_lb;
        return 0;
    }
    size_t bytes = count * dt->size;
    *tmp = aptus_coll_buf(bytes);
    if (!*tmp)
        return MPI_ERR_NO_MEM;
    *p = *tmp;
    return 0;
}

void aptus_coll_unpack_done(void *buf, size_t count, const struct aptus_dtype *dt, void *tmp, int rc)
{
    if (!tmp)
        return;
    if (rc == 0)
        aptus_coll_unpack(tmp, count, dt, buf);
    aptus_coll_buf_free(tmp);
}

/* ---- blocks at displacements --------------------------------------------------------------------- */

int aptus_coll_blocks_init(struct coll_blocks *B, int n, const void *buf, const MPI_Aint *disp, const size_t *counts,
                           const struct aptus_dtype *one, const struct aptus_dtype *const *types, int pack)
{
    memset(B, 0, sizeof *B);
    B->n = n;
    B->ptr = aptus_coll_arr(sizeof(char *) * (size_t)(n > 0 ? n : 1), 0);
    B->bytes = aptus_coll_arr(sizeof(size_t) * (size_t)(n > 0 ? n : 1), 0);
    if (!B->ptr || !B->bytes)
        goto nomem;
    size_t packed = 0;
    for (int i = 0; i < n; i++) {
        const struct aptus_dtype *t = types ? types[i] : one;
        B->bytes[i] = counts[i] * t->size;
        if ((!t->contig || pack == 2) && counts[i])
            packed += B->bytes[i];
    }
    if (packed) {
        B->tmp = aptus_coll_buf(packed);
        if (!B->tmp)
            goto nomem;
    }
    packed = 0;
    for (int i = 0; i < n; i++) {
        const struct aptus_dtype *t = types ? types[i] : one;
        char *base = (char *)buf + disp[i];
        if ((t->contig && pack != 2) || counts[i] == 0) {
            B->ptr[i] = base + t->true_lb;
            continue;
        }
        B->ptr[i] = B->tmp + packed;
        if (pack)
            aptus_coll_pack(base, counts[i], t, B->ptr[i]);
        packed += B->bytes[i];
    }
    return 0;
nomem:
    aptus_coll_blocks_free(B);
    return MPI_ERR_NO_MEM;
}

void aptus_coll_blocks_pack_one(struct coll_blocks *B, int i, const void *buf, const MPI_Aint *disp,
                                const size_t *counts, const struct aptus_dtype *one,
                                const struct aptus_dtype *const *types)
{
    const struct aptus_dtype *t = types ? types[i] : one;
    if (t->contig || counts[i] == 0)
        return;
    aptus_coll_pack((const char *)buf + disp[i], counts[i], t, B->ptr[i]);
}

void aptus_coll_blocks_unpack(struct coll_blocks *B, void *buf, const MPI_Aint *disp, const size_t *counts,
                              const struct aptus_dtype *one, const struct aptus_dtype *const *types, int skip)
{
    for (int i = 0; i < B->n; i++) {
        const struct aptus_dtype *t = types ? types[i] : one;
        if (i == skip || t->contig || counts[i] == 0)
            continue;
        aptus_coll_unpack(B->ptr[i], counts[i], t, (char *)buf + disp[i]);
    }
}

void aptus_coll_blocks_free(struct coll_blocks *B)
{
    aptus_coll_arr_free(B->ptr);
    aptus_coll_arr_free(B->bytes);
    aptus_coll_buf_free(B->tmp);
    memset(B, 0, sizeof *B);
}

/* ---- reductions -------------------------------------------------------------------------------- */

int aptus_coll_rsetup(struct coll_rsetup *S, const struct aptus_op *op, MPI_Datatype h, const struct aptus_dtype *dt,
                      size_t count)
{
    memset(S, 0, sizeof *S);
    S->dt = dt;
    S->count = count;
    if (op->predefined) {
        size_t nb = 0;
        MPI_Datatype b = aptus_dt_reduce_type(dt, &nb);
        const struct aptus_dtype *bdt = b == MPI_DATATYPE_NULL ? NULL : aptus_dtype_get(b);
        if (!bdt || !aptus_op_allowed(op->predefined, b, 0))
            return MPI_ERR_OP;
        int rc = aptus_coll_red_init(&S->R, op, b, bdt);
        if (rc)
            return rc;
        S->n = count * nb;
        S->per = nb;
        S->natural = bdt->size == (size_t)bdt->extent; /* packed data is the natural layout */
        S->direct = dt->predefined || (dt->contig && S->natural);
    } else {
        /* work buffers in the user's layout need increasing element addresses */
        if (count > 1 && dt->extent <= 0)
            return MPI_ERR_TYPE;
        int rc = aptus_coll_red_init(&S->R, op, h, dt);
        if (rc)
            return rc;
        /* interleaved elements: a range of elements is not a range of bytes */
        S->R.whole = dt->true_extent > dt->extent;
        S->n = count;
        S->direct = dt->predefined || dt->contig;
    }
    S->per = count ? S->n / count : 1;
    S->off = S->direct ? (size_t)dt->true_lb : 0;
    return 0;
}

/* Converts between the user's buffer and a work buffer in the layout of S->R. */
static int copy_in(const struct coll_rsetup *S, const void *ubuf, char *work)
{
    if (S->count == 0)
        return 0;
    const struct coll_red *R = &S->R;
    if (R->op->predefined && S->natural) {
        aptus_coll_pack(ubuf, S->count, S->dt, work);
        return 0;
    }
    void *tmp = aptus_coll_buf(S->count * S->dt->size);
    if (!tmp)
        return MPI_ERR_NO_MEM;
    aptus_coll_pack(ubuf, S->count, S->dt, tmp);
    if (R->op->predefined)
        aptus_coll_unpack(tmp, S->n, R->dt, work);
    else
        aptus_coll_unpack(tmp, S->count, S->dt, work - R->lb);
    aptus_coll_buf_free(tmp);
    return 0;
}

static int copy_out(const struct coll_rsetup *S, const char *work, void *ubuf)
{
    if (S->count == 0)
        return 0;
    const struct coll_red *R = &S->R;
    if (R->op->predefined && S->natural) {
        aptus_coll_unpack(work, S->count, S->dt, ubuf);
        return 0;
    }
    void *tmp = aptus_coll_buf(S->count * S->dt->size);
    if (!tmp)
        return MPI_ERR_NO_MEM;
    if (R->op->predefined)
        aptus_coll_pack(work, S->n, R->dt, tmp);
    else
        aptus_coll_pack(work - R->lb, S->count, S->dt, tmp);
    aptus_coll_unpack(tmp, S->count, S->dt, ubuf);
    aptus_coll_buf_free(tmp);
    return 0;
}

char *aptus_coll_rwork(const struct coll_rsetup *S, const void *ubuf, int fill, int *rc)
{
    *rc = 0;
    if (S->direct)
        return (char *)ubuf + S->off;
    char *w = aptus_coll_red_alloc(&S->R, S->n);
    if (!w) {
        *rc = MPI_ERR_NO_MEM;
        return NULL;
    }
    if (fill && (*rc = copy_in(S, ubuf, w)) != 0) {
        aptus_coll_buf_free(w);
        return NULL;
    }
    return w;
}

int aptus_coll_rdone(const struct coll_rsetup *S, char *work, void *ubuf, int out)
{
    int rc = 0;
    if (S->direct || !work)
        return 0;
    if (out)
        rc = copy_out(S, work, ubuf);
    aptus_coll_buf_free(work);
    return rc;
}
