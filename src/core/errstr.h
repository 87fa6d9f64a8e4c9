/* English descriptions of the predefined MPI error classes. */
#ifndef APTUS_CORE_ERRSTR_H
#define APTUS_CORE_ERRSTR_H

/* Returns a short, static, human-readable description of the predefined
 * error class `errclass` (MPI_SUCCESS, MPI_ERR_* and MPI_T_ERR_* of mpi.h),
 * or NULL when `errclass` is not a predefined class (for example a class
 * added with MPI_Add_error_class, or MPI_ERR_LASTCODE itself). */
const char *aptus_error_class_string(int errclass);

#endif
