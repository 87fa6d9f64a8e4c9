/* Communicator contexts: the context-id rules and the tags of the management context (the
 * collective constructors that agree on context ids are in comm/create.h).
 *
 * Contexts: a communicator owns one context-id slot s and the four message contexts 4s .. 4s+3:
 *   ctx + 0  point-to-point (the user's messages)
 *   ctx + 1  collectives (coll/)
 *   ctx + 2  communicator management (context agreement, leader exchanges) and neighborhood
 *            collectives (coll/neighbor.c); tag ranges below
 *   ctx + 3  partitioned communication (api/part.c)
 * An intercommunicator's contexts are shared by both groups; its local_comm has its own slot. */
#ifndef APTUS_CORE_CONTEXT_H
#define APTUS_CORE_CONTEXT_H

#include "core/objects.h"

#define APTUS_CTX_PER_SLOT 4
#define APTUS_CTX_COLL     1
#define APTUS_CTX_MGMT     2
#define APTUS_CTX_PART     3 /* partitioned communication (api/part.c): the spare context */
/* Slot 2 is the runtime's own (spanning every process, never a user's communicator): its first
 * context carries the agreements of MPI_Comm_create_from_group and
 * MPI_Intercomm_create_from_groups, which have no parent communicator. */
#define APTUS_SLOT_RUNTIME   2
#define APTUS_CTX_FROM_GROUP (APTUS_CTX_PER_SLOT * APTUS_SLOT_RUNTIME)

/* Tags on the management context (ctx + 2), all >= 0 (neighborhood collectives use < 0):
 *   (phase << 28) | (seq & 0x0fffffff)   step `phase` (0..3) of the seq-th creation call over
 *                                        the whole communicator (mgmt_seq)
 *   0x40000000 | tag                     MPI_Comm_create_group's agreement (user tag)
 *   0x60000000 | tag                     MPI_Intercomm_create's leader exchange (user tag) */
#define APTUS_TAG_SEQ(seq, phase) ((int)(((unsigned)(phase) << 28) | ((seq)&0x0fffffffu)))
#define APTUS_TAG_CGROUP(t)       ((int)(0x40000000u | ((unsigned)(t)&0x1fffffffu)))
#define APTUS_TAG_ICREATE(t)      ((int)(0x60000000u | ((unsigned)(t)&0x1fffffffu)))

/* Drops a reference to a communicator taken by an operation of a lower layer (a nonblocking
 * collective): the last one frees it through the release function that the communicator layer
 * (comm/create.c) registers, which is how layers below it reach it. */
void aptus_comm_unref(struct aptus_comm *c);
void aptus_comm_release_set(void (*release)(struct aptus_comm *c));

#endif
