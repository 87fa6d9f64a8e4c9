/* MPI sessions (MPI 4.1, 11.3): session objects and the runtime's users.
 *
 * The runtime (PMI, channels, the world's communicators) is started by the first of MPI_Init
 * and MPI_Session_init; when its last user ends it is torn down if the world model has ended,
 * else left up for the next session (or MPI_Init) until the process exits.
 * MPI_Initialized / MPI_Finalized keep their world-model meaning (aptus_rt.world_*). */
#ifndef APTUS_CORE_SESSION_H
#define APTUS_CORE_SESSION_H

#include <mpi.h>
#include <stdint.h>

#include "core/objects.h"

#define APTUS_MAGIC_SESSION 0x53657373u

struct aptus_session {
    uint32_t magic;                /* 0 once finalized (the object lives on while communicators refer to it) */
    int refcount;                  /* the open session + every communicator deriving from it */
    int thread_level;              /* the level provided to this session */
    struct aptus_errhandler *errh; /* one reference held */
    MPI_Info info;                 /* hints given at MPI_Session_init (a copy), or MPI_INFO_NULL */
    /* Buffered sends: the buffer attached by MPI_Session_attach_buffer (pt2pt/bsend.c owns
     * what it points to; NULL when none). Communicators derived from the session use it when
     * they have no buffer of their own. */
    void *bsend_pool;
};
APTUS_OBJ_FITS(struct aptus_session, SESSION);

/* The session behind a handle; NULL for MPI_SESSION_NULL or an invalid handle. */
struct aptus_session *aptus_session_get(MPI_Session h);
/* The session a communicator derives from (MPI_Comm_create_from_group, then dup, split, ...);
 * NULL for communicators of the world model and once the session is finalized. */
struct aptus_session *aptus_comm_session(const struct aptus_comm *c);

/* References held by communicators (comm/create.c); NULL is ignored. */
void aptus_session_retain(struct aptus_session *s);
void aptus_session_release(struct aptus_session *s);

/* Errors on a session go to its handler: aptus_error_on(s->errh, s, ...) (core/errors.h). */

/* Called by MPI_Session_finalize, before the session is freed (pt2pt/bsend.c): completes the
 * buffered sends of the session's buffer (MPI 4.1: finalizing a session flushes its buffer). */
void aptus_bsend_session_finalize(struct aptus_session *s);

#endif
