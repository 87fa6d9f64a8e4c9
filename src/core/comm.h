/* Communicators: creation, context ids, comparison. */
#ifndef APTUS_CORE_COMM_H
#define APTUS_CORE_COMM_H

#include "core/objects.h"

void aptus_comm_init(void);
void aptus_comm_finalize(void);
/* New communicator over the given world ranks (copied) with a fresh context; rank = index of
 * this process. Collective over `parent`: every parent member calls it (members not in the
 * new group pass n == 0 and get NULL). Returns an MPI error class. */
int aptus_comm_create_from(struct aptus_comm *parent, const int *world, int n, struct aptus_comm **out);
int aptus_comm_dup(struct aptus_comm *c, struct aptus_comm **out);
int aptus_comm_split(struct aptus_comm *c, int color, int key, struct aptus_comm **out);
void aptus_comm_release(struct aptus_comm *c);
int aptus_comm_compare(const struct aptus_comm *a, const struct aptus_comm *b);

#endif
