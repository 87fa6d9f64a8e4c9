/* Context ids: the slots (core/context.h) and how the members of a new communicator agree on a
 * slot that is free on all of them -- also when several threads of a process, or several
 * nonblocking calls, create communicators at the same time. Internal to the communicator layer
 * (comm/create.c); docs/DESIGN.md, "Communicators, groups and topologies", explains it.
 *
 * The slots are 8192 bits in 256 windows of 32. An agreement goes in rounds, each over one
 * window: every participant contributes the slots of the window that are free here and that no
 * other agreement of this process holds, and holds them until the round ends; the AND over the
 * participants is the round's result. Enough common slots: taken. Too few: the next round tries
 * another window. */
#ifndef APTUS_COMM_CONTEXT_ID_H
#define APTUS_COMM_CONTEXT_ID_H

#include <stdint.h>

#include "core/objects.h"

void aptus_ctxid_init(void);
/* Marks a slot free again (a communicator's release). */
void aptus_ctxid_release(int slot);

/* ---- the agreement engine ----
 * An allreduce over a list of participants (world ranks; this process is number `me`) on one
 * context and tag, as a state machine that never blocks: a binomial tree gathers to participant
 * 0, which sends the result back down the tree. Words 0 .. nand-1 are ANDed, the others ORed.
 * It needs no communicator of its own: `tc` carries just the addressing the message layer
 * uses. */
struct aptus_agree {
    struct aptus_comm tc;
    uint16_t ctx;
    int tag;
    int nw, nand;   /* words, of which the first nand are ANDed and the others ORed */
    uint32_t *val;  /* nw words: the contribution, then the result */
    uint32_t *bufs; /* (nchild + 1) * nw words: children's contributions, the parent's result */
    int nchild, parent;
    int child[32];
    struct aptus_request *rq[32], *sq[33];
    int nrq, nsq;
    int state; /* 0 gathering, 1 waiting for the result, 2 sending it down, 3 waiting for the sends,
                  4 done */
    int err;
};

/* Sets up the tree (a->val: nw zero words for the caller to fill). Returns an MPI error class. */
int aptus_agree_init(struct aptus_agree *a, int *peers, int n, int me, uint16_t ctx, int tag, int nw, int nand);
/* Posts the receives from the children: the contribution must be in a->val. */
void aptus_agree_start(struct aptus_agree *a);
/* One step; 1 once the result is in a->val (a->err says whether it is valid). */
int aptus_agree_poll(struct aptus_agree *a);
/* Start, then wait for the result. */
void aptus_agree_run(struct aptus_agree *a);
void aptus_agree_done(struct aptus_agree *a);

/* ---- rounds over windows ----
 * One context-id agreement of this process, from open to close. `key` is the same on every
 * participant and different for agreements that may run at once in a process (see
 * APTUS_CTXID_KEY_*): it orders the windows the rounds visit and settles which of two
 * agreements that meet in a window gets it. */
struct aptus_ctxid {
    uint64_t key;
    unsigned wmul, wxor; /* the order of the windows */
    int round, misses, conflict_seen;
    int holding, listed;
    uint32_t held; /* the slots of the current window this process holds for the round */
    struct aptus_ctxid *next, **pprev;
};

#define APTUS_CTXID_KEY_SEQ(slot, seq)    ((uint64_t)1 << 60 | (uint64_t)(slot) << 32 | (uint32_t)(seq))
#define APTUS_CTXID_KEY_CGROUP(slot, tag) ((uint64_t)2 << 60 | (uint64_t)(slot) << 32 | (uint32_t)(tag))
#define APTUS_CTXID_KEY_FROM_GROUP(tag)   ((uint64_t)3 << 60 | (uint32_t)(tag))
/* The key of an agreement between two groups that each have their own key (MPI_Intercomm_create):
 * the same on both sides. */
uint64_t aptus_ctxid_key_pair(uint64_t a, uint64_t b);

/* Starts an agreement; `listed`: it may hold slots here (a bystander, which never does, is not
 * listed among the running ones, so that no other agreement leaves a window to it). */
void aptus_ctxid_open(struct aptus_ctxid *d, uint64_t key, int listed);
/* The window (0 .. 255) of the current round. */
int aptus_ctxid_window(const struct aptus_ctxid *d);
void aptus_ctxid_close(struct aptus_ctxid *d);
/* A round's contribution: the slots of its window that this process holds for it (nothing when
 * it leaves the window to another agreement); *busy says whether free slots of the window were
 * left out because another agreement holds (or will take) them. */
uint32_t aptus_ctxid_hold(struct aptus_ctxid *d, uint32_t *busy);
/* Ends a round with its result (the AND of the contributions) and whether any participant left
 * slots out (the OR of busy). Returns 1 when the result holds `want` slots: they are written to
 * slots[] and, when `take`, marked in use here; 0 when the next round must try another window;
 * MPI_ERR_INTERN (negated) after a lap of windows with no common slot and none held anywhere:
 * every context id is in use. Releases the round's holds in every case. */
int aptus_ctxid_settle(struct aptus_ctxid *d, uint32_t result, uint32_t busy, int want, int take, int *slots);

/* ---- a context-id agreement by allreduce over a list of participants ----
 * The common case: every round is one aptus_agree over the participants. A bystander takes part
 * without taking slots (it contributes every slot and holds none). `nx` words of `extra` ride in
 * every round, ORed (the result in a.val[2 ..]). */
struct aptus_ctxid_agree {
    struct aptus_ctxid id;
    struct aptus_agree a;
    int *list, n, me;
    uint16_t ctx;
    int tag;
    int want, bystander;
    int nx;
    const uint32_t *extra;
    int slots[2];
    int err;     /* MPI error class once done */
    int started; /* a round's agreement is set up */
};

/* Fills in a context-id agreement and starts its first round. On failure (out of memory) the
 * agreement is done with g->err set. */
void aptus_ctxid_agree_start(struct aptus_ctxid_agree *g, int *list, int n, int me, uint16_t ctx, int tag, uint64_t key,
                             int want, int bystander, int nx, const uint32_t *extra);
/* One step; 1 once done (g->err, g->slots, and the extra words' result in g->a.val + 2 until
 * aptus_ctxid_agree_end). */
int aptus_ctxid_agree_poll(struct aptus_ctxid_agree *g);
/* Start, wait, and return g->err. */
int aptus_ctxid_agree_run(struct aptus_ctxid_agree *g, int *list, int n, int me, uint16_t ctx, int tag, uint64_t key,
                          int want, int bystander, int nx, const uint32_t *extra);
/* Frees what the last round kept (the extra words' result). */
void aptus_ctxid_agree_end(struct aptus_ctxid_agree *g);

#endif
