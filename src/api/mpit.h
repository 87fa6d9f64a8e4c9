/* The tool interface (MPI_T, MPI 4.1 chapter 15), shared by its files:
 *   mpit.c        initialization, control variables, enumerations, categories, sources
 *   mpit_pvar.c   performance variables, sessions and their handles
 *   mpit_event.c  events, their registrations and callbacks
 * Every function takes the library's lock (APTUS_API_LOCK) like the rest of the API, never calls
 * an error handler and prints nothing: a failure returns its MPI_T_ERR_* class, with the message
 * naming the call and the problem kept for MPI_Error_string (aptus_mpit_fail, core/errors.h). */
#ifndef APTUS_API_MPIT_H
#define APTUS_API_MPIT_H

#include <mpi.h>
#include <stdint.h>

#include "core/errors.h"

/* MPI_T_init_thread calls not yet matched by MPI_T_finalize (under the lock). */
extern int aptus_mpit_refs;

#define MPIT_ENTER(FN)                                                                                                 \
    APTUS_API_LOCK();                                                                                                  \
    if (!aptus_mpit_refs)                                                                                              \
    return aptus_mpit_fail(MPI_T_ERR_NOT_INITIALIZED, "%s: the tool interface is not initialized (MPI_T_init_thread)", \
                           FN)

/* An enumeration: MPI_T_enum handles point at these (all static). */
struct MPI_ABI_T_enum {
    const char *name;
    int n;
    const char *const *items; /* the items' names */
    const int *values;        /* NULL: 0 .. n-1 */
};

/* Categories, by layer. */
enum aptus_mpit_cat {
    MPIT_CAT_CHANNELS,
    MPIT_CAT_SMP,
    MPIT_CAT_PT2PT,
    MPIT_CAT_UD,
    MPIT_CAT_RC,
    MPIT_CAT_FABRIC,
    MPIT_CAT_COLL,
    MPIT_CAT_PROGRESS,
    MPIT_CAT_RMA,
    MPIT_CAT_COUNT
};

/* The enumeration of the channels (values: channel ids), and of how far a route moved. */
extern struct MPI_ABI_T_enum aptus_mpit_channel_enum, aptus_mpit_move_enum;
/* Whether e is one of the library's enumerations. */
int aptus_mpit_enum_valid(MPI_T_enum e);

/* The performance variables (mpit_pvar.c): how many, and each one's category. */
int aptus_mpit_pvar_num(void);
int aptus_mpit_pvar_category(int i);
/* Frees every session (MPI_T_finalize's last call). */
void aptus_mpit_pvar_finalize(void);

/* The events (mpit_event.c). */
int aptus_mpit_event_num(void);
int aptus_mpit_event_category(int i);
void aptus_mpit_event_finalize(void);
/* The timestamp of the events' one source: nanoseconds of CLOCK_MONOTONIC. */
MPI_Count aptus_mpit_ticks(void);

/* Copies s into a tool's buffer by the standard's rule for returned strings: with len NULL
 * nothing; with *len 0 or buf NULL only the length needed (with the terminating null) in *len;
 * else at most *len - 1 characters and a null, *len set to what was written with it. */
void aptus_mpit_string(const char *s, char *buf, int *len);
/* Looks a name up: index of the item of names[0..n) equal to name, or -1. */
int aptus_mpit_lookup(const char *name, const char *(*name_of)(int i), int n);

#endif
