/* The statistics file (APTUS_STATS_FILE): every rank writes its statistics as one JSON document
 * at MPI_Finalize. The schema is in docs/STATS.md; tools/report/aptus-report reads the files. */
#ifndef APTUS_API_STATS_FILE_H
#define APTUS_API_STATS_FILE_H

#include <stddef.h>

/* The version of the document's layout ("schema"): raised when a member changes meaning or goes
 * away (members may be added without it). */
#define APTUS_STATS_SCHEMA 1

/* Checks a name pattern (the variable's value) at start-up: 0, or -1 with a message naming the
 * variable in err (an unknown %-pattern). */
int aptus_stats_file_check(const char *pattern, char *err, size_t errlen);
/* Expands the pattern for this rank into out: 0, or -1 when it does not fit. */
int aptus_stats_file_name(const char *pattern, char *out, size_t outlen);
/* Writes this rank's document (to a temporary name in the same directory, renamed into place
 * once complete: a reader never sees half a document). A failure is reported on stderr, naming
 * the variable, the file and the reason; returns 0 or -1. */
int aptus_stats_file_write(void);

#endif
