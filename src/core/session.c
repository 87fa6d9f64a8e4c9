/* Session objects (core/session.h); the MPI calls are in api/session.c. */
#include "core/session.h"

#include <stdlib.h>

struct aptus_session *aptus_session_get(MPI_Session h)
{
    struct aptus_session *s = (struct aptus_session *)h;
    return aptus_obj_in(h, APTUS_OBJ_SESSION) && s->magic == APTUS_MAGIC_SESSION ? s : NULL;
}

struct aptus_session *aptus_comm_session(const struct aptus_comm *c)
{
    return c->session && c->session->magic == APTUS_MAGIC_SESSION ? c->session : NULL;
}

void aptus_session_retain(struct aptus_session *s)
{
    if (s)
        s->refcount++;
}

void aptus_session_release(struct aptus_session *s)
{
    if (s && --s->refcount == 0)
        aptus_obj_free(APTUS_OBJ_SESSION, s);
}
