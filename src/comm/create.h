/* Communicator construction: the collective constructors (dup, idup, split, create,
 * create_group, from_group, intercommunicators), context-id agreement over the collectives,
 * release and comparison. This layer sits above the collectives it uses. */
#ifndef APTUS_COMM_CREATE_H
#define APTUS_COMM_CREATE_H

#include "core/context.h"
#include "core/group.h"

struct aptus_request;

void aptus_comm_init(void);
void aptus_comm_finalize(void);

/* ---- communicators (comm/create.c) ---- */
/* New intracommunicator over the given world ranks (copied) with a fresh context; rank = index
 * of this process. Collective over `parent` (an intracommunicator): every parent member calls
 * it (members not in the new group pass n == 0 and get NULL). Returns an MPI error class. */
int aptus_comm_create_from(struct aptus_comm *parent, const int *world, int n, struct aptus_comm **out);
/* MPI_Comm_create_group: collective over the n members only (this process among them). */
int aptus_comm_create_group(struct aptus_comm *parent, const int *world, int n, int tag, struct aptus_comm **out);
/* MPI_Comm_dup (intra and inter): same groups, topology and attributes, new context. */
int aptus_comm_dup(struct aptus_comm *c, struct aptus_comm **out);
/* MPI_Comm_idup: returns the new communicator at once (usable when *req completes) and a
 * GENERIC request that a background task completes once the context is agreed. When the copy
 * fails here (an attribute copy callback's error, out of memory) the error is returned at once,
 * but this process still takes part in the agreement so that the other members' idup completes. */
int aptus_comm_idup(struct aptus_comm *c, struct aptus_comm **out, struct aptus_request **req);
/* MPI_Comm_split (intra and inter). color MPI_UNDEFINED gives NULL. */
int aptus_comm_split(struct aptus_comm *c, int color, int key, struct aptus_comm **out);
/* MPI_Comm_split of an intracommunicator within each node (MPI_Comm_split_type): the new
 * communicators hold the members of this node with the same color; only the members on each
 * node talk to each other. color MPI_UNDEFINED: this process takes part but gets NULL. On an
 * intercommunicator, an MPI_Comm_split by (node, color): each side's members on a node with the
 * other side's members on the same node (NULL when the other side has none there); there the
 * colors must be below max(ncolors, size + remote size + 2), ncolors the same on every member
 * that gives a color. */
int aptus_comm_split_node(struct aptus_comm *c, int color, int key, int ncolors, struct aptus_comm **out);
/* MPI_Comm_create on an intercommunicator: `world` is this side's subgroup (n may be 0). */
int aptus_comm_create_inter(struct aptus_comm *c, const int *world, int n, struct aptus_comm **out);
/* MPI_Intercomm_create. peer and remote_leader matter at the local leader only, where a nonzero
 * leader_err (a bad argument found there) is handed to the whole local group as the result.
 * *why names the problem when the result is not MPI_SUCCESS. */
int aptus_intercomm_create(struct aptus_comm *local, int local_leader, struct aptus_comm *peer, int remote_leader,
                           int tag, int leader_err, struct aptus_comm **out, const char **why);
/* MPI_Comm_create_from_group / MPI_Intercomm_create_from_groups: collective over the members
 * only (this process in `world` / `local`), agreeing on the runtime's context with `tag` (>= 0,
 * derived from the string tag and the groups). MPI_ERR_GROUP: this process is not a member. */
int aptus_comm_from_group(const int *world, int n, int tag, struct aptus_errhandler *errh, struct aptus_comm **out);
int aptus_intercomm_from_groups(const int *local, int n, const int *remote, int m, int tag,
                                struct aptus_errhandler *errh, struct aptus_comm **out);
/* Records that c (and its local_comm) derives from session s (a reference each; NULL: none). */
void aptus_comm_set_session(struct aptus_comm *c, struct aptus_session *s);
int aptus_intercomm_merge(struct aptus_comm *c, int high, struct aptus_comm **out);
/* Drops a reference; the last one frees the communicator, its topology and its local_comm.
 * (Attributes are deleted by MPI_Comm_free before this.) */
void aptus_comm_release(struct aptus_comm *c);
int aptus_comm_compare(const struct aptus_comm *a, const struct aptus_comm *b);

/* Dynamic processes (MPI_Comm_accept / connect / join): an intercommunicator between parent's
 * group and the m processes of `remote` (process indexes, another job's as a rule), agreed over
 * the union of both (both sides pass the same tag). Collective over parent's members and the
 * remote ones. */
int aptus_intercomm_from_parent(struct aptus_comm *parent, const int *remote, int m, int tag, struct aptus_comm **out);

#endif
