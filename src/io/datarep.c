/* Data representations (MPI 4.1, 14.5): "native" (the bytes of memory), "internal" (here the
 * same), and those a program registers (MPI_Register_datarep). A registered one whose
 * conversion functions are MPI_CONVERSION_FN_NULL moves the bytes unchanged, as the standard
 * says, and is usable in a view; one with conversion functions is refused by MPI_File_set_view
 * (not implemented yet), as is external32. */
#include <stdlib.h>
#include <string.h>

#include "api/check.h"
#include "io/io.h"
#include "runtime/lock.h"

struct datarep {
    char name[MPI_MAX_DATAREP_STRING];
    int converts; /* has conversion functions */
    MPI_Datarep_extent_function *extent_fn;
    void *extra_state;
};
static struct datarep *reps;
static int nreps;

static struct datarep *find(const char *name)
{
    for (int i = 0; i < nreps; i++)
        if (strcmp(reps[i].name, name) == 0)
            return &reps[i];
    return NULL;
}

int aptus_io_datarep(const char *name, int *converts)
{
    *converts = 0;
    if (strcmp(name, "native") == 0 || strcmp(name, "internal") == 0)
        return 1;
    struct datarep *r = find(name);
    if (r)
        *converts = r->converts;
    return r != NULL;
}

int aptus_io_datarep_extent(const char *name, MPI_Datatype datatype, MPI_Aint *extent)
{
    struct datarep *r = find(name);
    if (!r || !r->extent_fn)
        return -1;
    return r->extent_fn(datatype, extent, r->extra_state);
}

static int do_register(const char *datarep, int converts, MPI_Datarep_extent_function *extent_fn, void *extra,
                       const char *fn)
{
    API_INIT(fn);
    if (!datarep || !*datarep)
        return aptus_error(NULL, MPI_ERR_ARG, fn, "null or empty datarep name");
    if (strlen(datarep) >= MPI_MAX_DATAREP_STRING)
        return aptus_error(NULL, MPI_ERR_ARG, fn, "datarep name longer than MPI_MAX_DATAREP_STRING - 1");
    if (!extent_fn)
        return aptus_error(NULL, MPI_ERR_ARG, fn, "null dtype_file_extent_fn");
    int dummy;
    if (aptus_io_datarep(datarep, &dummy) || strcmp(datarep, "external32") == 0)
        return aptus_error(NULL, MPI_ERR_DUP_DATAREP, fn, "the data representation \"%s\" is already defined", datarep);
    struct datarep *t = realloc(reps, (size_t)(nreps + 1) * sizeof *t);
    if (!t)
        return aptus_error(NULL, MPI_ERR_NO_MEM, fn, "out of memory");
    reps = t;
    memset(&reps[nreps], 0, sizeof reps[nreps]);
    strcpy(reps[nreps].name, datarep);
    reps[nreps].converts = converts;
    reps[nreps].extent_fn = extent_fn;
    reps[nreps].extra_state = extra;
    nreps++;
    return MPI_SUCCESS;
}

int PMPI_Register_datarep(const char *datarep, MPI_Datarep_conversion_function *read_conversion_fn,
                          MPI_Datarep_conversion_function *write_conversion_fn,
                          MPI_Datarep_extent_function *dtype_file_extent_fn, void *extra_state)
{
    APTUS_API_LOCK();
    return do_register(datarep,
                       read_conversion_fn != MPI_CONVERSION_FN_NULL || write_conversion_fn != MPI_CONVERSION_FN_NULL,
                       dtype_file_extent_fn, extra_state, "MPI_Register_datarep");
}
APTUS_ALIAS(Register_datarep)

int PMPI_Register_datarep_c(const char *datarep, MPI_Datarep_conversion_function_c *read_conversion_fn,
                            MPI_Datarep_conversion_function_c *write_conversion_fn,
                            MPI_Datarep_extent_function *dtype_file_extent_fn, void *extra_state)
{
    APTUS_API_LOCK();
    return do_register(
        datarep, read_conversion_fn != MPI_CONVERSION_FN_NULL_C || write_conversion_fn != MPI_CONVERSION_FN_NULL_C,
        dtype_file_extent_fn, extra_state, "MPI_Register_datarep_c");
}
APTUS_ALIAS(Register_datarep_c)
