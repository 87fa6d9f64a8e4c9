/* The name service's directory (MPI_Publish_name, MPI_Lookup_name): one file per published name,
 * shared by every job that names the directory. Used by the library (under a launcher other than
 * our mpiexec) and by mpiexec (tools/mpiexec/names.c), which holds a run's names.
 *
 * A name's file is DIR/HEX (the service name's bytes in hexadecimal) and holds the port on its
 * first line, then "HOST PID" of the process that published it; it appears whole (written aside,
 * then linked into place), and only if no live publisher holds the name. */
#ifndef APTUS_RUNTIME_NAMES_H
#define APTUS_RUNTIME_NAMES_H

#include <stddef.h>

/* The directory: setting is APTUS_NAME_SERVICE's value ("auto", empty or NULL: aptus-names-UID
 * under TMPDIR or /tmp, made when make is set). 0, or an errno value. */
int aptus_names_dir(const char *setting, char *dir, size_t len, int make);
/* The file of a service name in dir. 0, or -1 (the name is empty, or too long for out). */
int aptus_names_file(const char *dir, const char *service, char *out, size_t len);
/* The port a name's file holds, and whether its publisher is a process of this host that is gone
 * (*stale). 0, or -1 (no such file, or unreadable). */
int aptus_names_read(const char *file, char *port, size_t plen, int *stale);
/* Writes a name's file for port, published by process pid of this host. 0; -1 with errno (EEXIST:
 * a live publisher holds the name). */
int aptus_names_write(const char *file, const char *port, long pid);
/* Removes a name's file if it is still this publisher's (pid of this host, port): a file another
 * run took over, or wrote after it was removed, stays. */
void aptus_names_remove(const char *file, const char *port, long pid);

#endif
