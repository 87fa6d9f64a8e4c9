/* Groups: ordered lists of world ranks (core/group.c), and a communicator's groups. */
#ifndef APTUS_CORE_GROUP_H
#define APTUS_CORE_GROUP_H

#include "core/objects.h"

/* ---- groups (core/group.c) ---- */
extern struct aptus_group aptus_group_empty_obj;
/* The group behind a handle, MPI_GROUP_EMPTY included; NULL if invalid (MPI_GROUP_NULL too). */
struct aptus_group *aptus_group_lookup(MPI_Group h);
/* A new group of n world ranks (copied); n == 0 gives the empty group. NULL: out of memory. */
struct aptus_group *aptus_group_new(const int *world, int n);
MPI_Group aptus_group_handle(struct aptus_group *g);
void aptus_group_release(struct aptus_group *g);
/* Index of world rank w in g, or MPI_UNDEFINED. */
int aptus_group_index(const struct aptus_group *g, int w);
/* The local (remote) group of a communicator. NULL: out of memory. */
struct aptus_group *aptus_comm_group(const struct aptus_comm *c, int remote);

#endif
