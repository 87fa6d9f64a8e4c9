/* Data representations (MPI 4.1, 14.5): "native" (the bytes of memory), "internal" (here the
 * same), "external32" (core/dtype_ext32.c: big-endian, the standard's sizes) and those a program
 * registers (MPI_Register_datarep). A registered one whose conversion functions are both
 * MPI_CONVERSION_FN_NULL moves the bytes unchanged, as the standard says.
 *
 * A converting representation changes two things. The data: an access converts the user's
 * elements into a buffer of the file form (or back), and that buffer goes through the view as
 * bytes. The layout: the etype and the filetype are read in the file's sizes -- every predefined
 * type takes its size in the representation, and a type is rebuilt from its constructor calls
 * (its contents) over the rebuilt old types, so that displacements given in elements scale with
 * them and displacements given in bytes stay as they are (14.5.1). */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "api/check.h"
#include "io/io.h"
#include "runtime/lock.h"

struct aptus_io_rep {
    char name[MPI_MAX_DATAREP_STRING];
    int ext32;
    MPI_Datarep_conversion_function *rd, *wr;
    MPI_Datarep_conversion_function_c *rd_c, *wr_c;
    MPI_Datarep_extent_function *extent_fn;
    void *extra_state;
};

static struct aptus_io_rep external32 = { .name = "external32", .ext32 = 1 };
static struct aptus_io_rep **reps; /* registered, never freed (they live as long as the process) */
static int nreps;

const char *aptus_io_rep_find(const char *name, const struct aptus_io_rep **rep)
{
    *rep = NULL;
    if (strcmp(name, "native") == 0)
        return "native";
    if (strcmp(name, "internal") == 0)
        return "internal";
    if (strcmp(name, external32.name) == 0)
        *rep = &external32;
    for (int i = 0; i < nreps && !*rep; i++)
        if (strcmp(reps[i]->name, name) == 0)
            *rep = reps[i];
    return *rep ? (*rep)->name : NULL;
}

int aptus_io_rep_converts(const struct aptus_io_rep *r)
{
    return r && (r->ext32 || r->rd || r->wr || r->rd_c || r->wr_c);
}

/* ---- sizes and layouts in the file ---- */

/* Bytes in the file of one value of predefined type d. */
static int basic_size(const struct aptus_io_rep *r, const struct aptus_dtype *d, MPI_Aint *size)
{
    *size = 0;
    if (r->ext32) { /* a predefined type's reduce type is itself (f90 types: their base) */
        *size = (MPI_Aint)aptus_dt_ext32_basic_size(d->reduce_type);
        return *size > 0 || d->size == 0 ? 0 : MPI_ERR_UNSUPPORTED_DATAREP;
    }
    return r->extent_fn(d->reduce_type, size, r->extra_state) == MPI_SUCCESS && *size >= 0 ? 0 : MPI_ERR_CONVERSION;
}

int aptus_io_rep_size(const struct aptus_io_rep *r, const struct aptus_dtype *d, size_t *size)
{
    struct aptus_dt_parts p;
    MPI_Aint s;
    size_t o, sum = 0;
    int rc;
    switch (aptus_dt_parts(d, &p)) {
    case 0:
        rc = basic_size(r, d, &s);
        *size = (size_t)s;
        return rc;
    case 1:
        if ((rc = aptus_io_rep_size(r, p.old, &o)) != 0)
            return rc;
        *size = p.count * (p.bl ? *p.bl : 1) * o;
        return 0;
    default:
        for (size_t j = 0; j < p.n; j++) {
            if ((rc = aptus_io_rep_size(r, p.types[j], &o)) != 0)
                return rc;
            sum += p.bl[j] * o;
        }
        *size = sum;
        return 0;
    }
}

/* t's constructor call again, over old types news[] (the rebuilt ones of its contents). */
static int remake(const struct aptus_dtype *d, const struct aptus_dt_contents *c, MPI_Datatype *news, MPI_Datatype *out)
{
    const int *i = c->ints;
    const MPI_Count *n = c->counts;
    const MPI_Aint *a = c->addrs;
    int L = c->large;
    switch (d->combiner) {
    case MPI_COMBINER_DUP: return PMPI_Type_dup(news[0], out);
    case MPI_COMBINER_CONTIGUOUS:
        return L ? PMPI_Type_contiguous_c(n[0], news[0], out) : PMPI_Type_contiguous(i[0], news[0], out);
    case MPI_COMBINER_VECTOR:
        return L ? PMPI_Type_vector_c(n[0], n[1], n[2], news[0], out)
                 : PMPI_Type_vector(i[0], i[1], i[2], news[0], out);
    case MPI_COMBINER_HVECTOR:
        return L ? PMPI_Type_create_hvector_c(n[0], n[1], n[2], news[0], out)
                 : PMPI_Type_create_hvector(i[0], i[1], a[0], news[0], out);
    case MPI_COMBINER_INDEXED:
        return L ? PMPI_Type_indexed_c(n[0], n + 1, n + 1 + n[0], news[0], out)
                 : PMPI_Type_indexed(i[0], i + 1, i + 1 + i[0], news[0], out);
    case MPI_COMBINER_HINDEXED:
        return L ? PMPI_Type_create_hindexed_c(n[0], n + 1, n + 1 + n[0], news[0], out)
                 : PMPI_Type_create_hindexed(i[0], i + 1, a, news[0], out);
    case MPI_COMBINER_INDEXED_BLOCK:
        return L ? PMPI_Type_create_indexed_block_c(n[0], n[1], n + 2, news[0], out)
                 : PMPI_Type_create_indexed_block(i[0], i[1], i + 2, news[0], out);
    case MPI_COMBINER_HINDEXED_BLOCK:
        return L ? PMPI_Type_create_hindexed_block_c(n[0], n[1], n + 2, news[0], out)
                 : PMPI_Type_create_hindexed_block(i[0], i[1], a, news[0], out);
    case MPI_COMBINER_STRUCT:
        return L ? PMPI_Type_create_struct_c(n[0], n + 1, n + 1 + n[0], news, out)
                 : PMPI_Type_create_struct(i[0], i + 1, a, news, out);
    case MPI_COMBINER_SUBARRAY: {
        int nd = i[0];
        return L ? PMPI_Type_create_subarray_c(nd, n, n + nd, n + 2 * nd, i[1], news[0], out)
                 : PMPI_Type_create_subarray(nd, i + 1, i + 1 + nd, i + 1 + 2 * nd, i[1 + 3 * nd], news[0], out);
    }
    case MPI_COMBINER_DARRAY: {
        int nd = i[2];
        return L ? PMPI_Type_create_darray_c(i[0], i[1], nd, n, i + 3, i + 3 + nd, i + 3 + 2 * nd, i[3 + 3 * nd],
                                             news[0], out)
                 : PMPI_Type_create_darray(i[0], i[1], nd, i + 3, i + 3 + nd, i + 3 + 2 * nd, i + 3 + 3 * nd,
                                           i[3 + 4 * nd], news[0], out);
    }
    case MPI_COMBINER_RESIZED:
        return L ? PMPI_Type_create_resized_c(news[0], n[0], n[1], out)
                 : PMPI_Type_create_resized(news[0], a[0], a[1], out);
    default: return MPI_ERR_UNSUPPORTED_DATAREP;
    }
}

int aptus_io_rep_type(const struct aptus_io_rep *r, MPI_Datatype t, MPI_Datatype *out)
{
    struct aptus_dtype *d = aptus_dtype_get(t);
    *out = t;
    if (d->predefined) {
        MPI_Aint s;
        int rc = basic_size(r, d, &s);
        if (rc != 0 || ((size_t)s == d->size && s == d->extent))
            return rc;
        return PMPI_Type_contiguous_c(s, MPI_BYTE, out); /* opaque: its bytes are the conversion's */
    }
    struct aptus_dt_contents *c = aptus_dt_contents(d);
    if (!c)
        return MPI_ERR_UNSUPPORTED_DATAREP;
    MPI_Datatype *news = malloc((size_t)(c->nd > 0 ? c->nd : 1) * sizeof *news);
    if (!news)
        return MPI_ERR_NO_MEM;
    int rc = 0, k = 0, changed = 0;
    for (; k < c->nd && rc == 0; k++) {
        rc = aptus_io_rep_type(r, c->types[k], &news[k]);
        changed |= news[k] != c->types[k];
    }
    if (rc == 0 && changed)
        rc = remake(d, c, news, out);
    while (k-- > 0)
        if (news[k] != c->types[k])
            PMPI_Type_free(&news[k]);
    free(news);
    return rc;
}

/* ---- conversion ---- */

/* The user's conversion function over count elements (their data items are nelem each, the
 * file form esz bytes each); in chunks when the int form cannot count them at once. */
static int user_convert(const struct aptus_io_rep *r, int write, void *buf, MPI_Datatype dt, size_t count, char *file,
                        size_t esz)
{
    struct aptus_dtype *d = aptus_dtype_get(dt);
    MPI_Datarep_conversion_function *fn = write ? r->wr : r->rd;
    MPI_Datarep_conversion_function_c *fn_c = write ? r->wr_c : r->rd_c;
    if (!fn && !fn_c) { /* MPI_CONVERSION_FN_NULL: the native bytes */
        if (esz != d->size)
            return MPI_ERR_CONVERSION;
        if (write)
            aptus_dt_pack(buf, count, d, file);
        else
            aptus_dt_unpack(file, count, d, buf);
        return 0;
    }
    size_t items = d->nelem;
    if (!count || !items)
        return 0;
    if (fn_c)
        return fn_c(buf, dt, (MPI_Count)(count * items), file, 0, r->extra_state) == MPI_SUCCESS ? 0
                                                                                                 : MPI_ERR_CONVERSION;
    size_t per = (size_t)INT_MAX / items;
    if (per == 0)
        return MPI_ERR_CONVERSION;
    for (size_t e = 0; e < count; e += per) {
        size_t k = count - e < per ? count - e : per;
        if (fn(buf, dt, (int)(k * items), file + e * esz, (MPI_Offset)(e * items), r->extra_state) != MPI_SUCCESS)
            return MPI_ERR_CONVERSION;
    }
    return 0;
}

int aptus_io_rep_write(const struct aptus_io_rep *r, const void *buf, size_t count, MPI_Datatype dt, void *out,
                       size_t esz)
{
    if (r->ext32) {
        aptus_dt_ext32_pack(buf, count, aptus_dtype_get(dt), out);
        return 0;
    }
    return user_convert(r, 1, (void *)buf, dt, count, out, esz);
}

int aptus_io_rep_read(const struct aptus_io_rep *r, const void *in, size_t count, MPI_Datatype dt, void *buf,
                      size_t esz)
{
    if (r->ext32) {
        aptus_dt_ext32_unpack(in, count, aptus_dtype_get(dt), buf);
        return 0;
    }
    return user_convert(r, 0, buf, dt, count, (char *)in, esz);
}

/* ---- MPI_Register_datarep ---- */

static int do_register(const char *datarep, const struct aptus_io_rep *fns, const char *fn)
{
    API_INIT(fn);
    if (!datarep || !*datarep)
        return aptus_error(NULL, MPI_ERR_ARG, fn, "null or empty datarep name");
    if (strlen(datarep) >= MPI_MAX_DATAREP_STRING)
        return aptus_error(NULL, MPI_ERR_ARG, fn, "datarep name longer than MPI_MAX_DATAREP_STRING - 1");
    if (!fns->extent_fn)
        return aptus_error(NULL, MPI_ERR_ARG, fn, "null dtype_file_extent_fn");
    const struct aptus_io_rep *old;
    if (aptus_io_rep_find(datarep, &old))
        return aptus_error(NULL, MPI_ERR_DUP_DATAREP, fn, "the data representation \"%s\" is already defined", datarep);
    struct aptus_io_rep **t = realloc(reps, (size_t)(nreps + 1) * sizeof *t);
    if (!t)
        return aptus_error(NULL, MPI_ERR_NO_MEM, fn, "out of memory");
    reps = t;
    struct aptus_io_rep *r = malloc(sizeof *r);
    if (!r)
        return aptus_error(NULL, MPI_ERR_NO_MEM, fn, "out of memory");
    *r = *fns;
    strcpy(r->name, datarep);
    reps[nreps++] = r;
    return MPI_SUCCESS;
}

int PMPI_Register_datarep(const char *datarep, MPI_Datarep_conversion_function *read_conversion_fn,
                          MPI_Datarep_conversion_function *write_conversion_fn,
                          MPI_Datarep_extent_function *dtype_file_extent_fn, void *extra_state)
{
    APTUS_API_LOCK();
    struct aptus_io_rep r = { .rd = read_conversion_fn,
                              .wr = write_conversion_fn,
                              .extent_fn = dtype_file_extent_fn,
                              .extra_state = extra_state };
    return do_register(datarep, &r, "MPI_Register_datarep");
}
APTUS_ALIAS(Register_datarep)

int PMPI_Register_datarep_c(const char *datarep, MPI_Datarep_conversion_function_c *read_conversion_fn,
                            MPI_Datarep_conversion_function_c *write_conversion_fn,
                            MPI_Datarep_extent_function *dtype_file_extent_fn, void *extra_state)
{
    APTUS_API_LOCK();
    struct aptus_io_rep r = { .rd_c = read_conversion_fn,
                              .wr_c = write_conversion_fn,
                              .extent_fn = dtype_file_extent_fn,
                              .extra_state = extra_state };
    return do_register(datarep, &r, "MPI_Register_datarep_c");
}
APTUS_ALIAS(Register_datarep_c)
