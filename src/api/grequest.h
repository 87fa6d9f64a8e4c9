/* Generalized requests (MPI_Grequest_start, MPI 4.1 section 13.2): the hooks the completion
 * calls of api/pt2pt.c use on requests of kind APTUS_REQ_GREQ. */
#ifndef APTUS_API_GREQUEST_H
#define APTUS_API_GREQUEST_H

#include "pt2pt/pt2pt.h"

/* Runs the query callback of a completed generalized request: its status goes into r's status
 * fields and its return value into r->st_error. */
void aptus_greq_query(struct aptus_request *r);
/* Runs the free callback and drops the callbacks' state (the caller then frees r). Returns the
 * callback's return value. */
int aptus_greq_free(struct aptus_request *r);
/* MPI_Cancel: runs the cancel callback with complete = whether MPI_Grequest_complete was
 * called. Returns its return value. */
int aptus_greq_cancel(struct aptus_request *r);

#endif
