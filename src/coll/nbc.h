/* Schedules: how nonblocking and persistent collectives run (MPI standard, sections 6.12 and
 * 6.13). A schedule is a list of steps -- start a send, start a receive, wait for some of the
 * messages started so far, or a local step (copy, pack, unpack, reduce) -- executed by the
 * progress engine as a background task, so that a collective moves while the application
 * computes.
 *
 * Schedules are not written by hand: they are recorded by running the blocking algorithms of
 * src/coll (and the argument handling of api/coll.c) in recording mode. While aptus_nbc_rec is
 * set, the transport of coll_internal.h records its sends and receives instead of starting
 * them (returning placeholder requests), aptus_coll_waitall records a wait for exactly the
 * requests it is given, the local data steps (aptus_coll_copy, aptus_coll_pack,
 * aptus_coll_unpack, aptus_coll_red_apply) record themselves with their arguments by value,
 * and aptus_coll_buf_free defers the release of temporary buffers to the end of the
 * schedule's life. Every algorithm's control flow depends on sizes and ranks only, never on
 * data received, so the recording is the exact sequence the blocking call would run -- the
 * same algorithm choices by size and process count, intercommunicators included.
 *
 * Execution keeps the blocking semantics: local steps run in order as they are reached (as
 * the blocking code runs them between its waits), a wait step holds the schedule until its
 * messages have completed. Tags are taken when the schedule is recorded (at the nonblocking
 * call, or at the persistent collective's initialisation, both made by every member in the
 * same order), so outstanding collectives on one communicator never match each other's
 * messages. A persistent schedule is restarted from its first step by MPI_Start: the pack
 * steps read the user's buffers again. */
#ifndef APTUS_COLL_NBC_H
#define APTUS_COLL_NBC_H

#include <stddef.h>
#include <stdint.h>

#include "core/objects.h"

struct aptus_nbc;
struct aptus_request;
struct aptus_dtype;

/* The schedule being recorded by this thread, NULL when collectives execute. */
extern _Thread_local struct aptus_nbc *aptus_nbc_rec __attribute__((tls_model("initial-exec")));

static inline int aptus_nbc_recording(void)
{
    return __builtin_expect(aptus_nbc_rec != NULL, 0);
}

/* ---- recording (used by coll.c and dtview.c) ------------------------------------------------ */

/* A send or receive of `bytes` packed bytes on context ctx of c, or (dt non-NULL) of `count`
 * elements of dt at buf. *req gets a placeholder for aptus_nbc_wait. 0 or MPI_ERR_NO_MEM. */
int aptus_nbc_msg(int send, struct aptus_comm *c, uint16_t ctx, void *buf, size_t bytes, const struct aptus_dtype *dt,
                  size_t count, int peer, int tag, struct aptus_request **req);
/* Waits for the placeholders among reqs (NULL entries skipped; every entry set to NULL). */
int aptus_nbc_wait(struct aptus_request **reqs, int n);
/* A local step: fn(args) with a copy of len bytes of args. */
void aptus_nbc_local(void (*fn)(const void *args), const void *args, size_t len);
/* Runs release(p) when the schedule is freed (temporary buffers, held datatypes and ops). */
void aptus_nbc_defer(void (*release)(void *p), void *p);
/* Holds a datatype / an op (user-defined ones may be freed by the user meanwhile). */
void aptus_nbc_hold_type(const struct aptus_dtype *dt);
void aptus_nbc_hold_op(const struct aptus_op *op);

/* ---- the API layer ---------------------------------------------------------------------------- */

/* Starts recording on this thread (a call records one collective). 0 or MPI_ERR_NO_MEM. */
int aptus_nbc_begin(void);
/* Ends the recording of a collective on c whose recording code returned rc. rc != 0: the
 * schedule is dropped and rc returned (the error was reported by the code that recorded).
 * Otherwise *out gets a GENERIC request running the schedule (persistent: an inactive one
 * that MPI_Start starts); returns 0 or MPI_ERR_NO_MEM. A nonblocking call given a key (its
 * arguments, klen bytes) leaves the schedule in the cache for aptus_nbc_replay. */
int aptus_nbc_end(int rc, struct aptus_comm *c, int persistent, const void *key, size_t klen,
                  struct aptus_request **out);
/* The same call again: when the cache holds an idle schedule recorded with this key on c, runs
 * it with fresh tags and returns 1 (*out: its request); else 0 (record it). */
int aptus_nbc_replay(const void *key, size_t klen, struct aptus_comm *c, struct aptus_request **out);
/* Recording: the collective took tag base `base` of c (coll.c; a replay moves its tags). */
void aptus_nbc_tag_taken(struct aptus_comm *c, int base);
/* Frees the cached schedules (MPI_Finalize, before the communicators go). */
void aptus_nbc_cache_drain(void);

/* MPI_Start of a persistent collective's request (active, not complete). Returns 0. */
int aptus_nbc_start(struct aptus_request *r);
/* Frees the schedule of an inactive persistent request (MPI_Request_free). */
void aptus_nbc_free(struct aptus_nbc *s);

/* Frees the schedules kept for reuse (MPI_Finalize). */
void aptus_nbc_pool_drain(void);

/* Schedules started, steps run, schedules replayed from the cache and schedules left whole to the
 * progress thread, for the statistics. */
void aptus_nbc_counts(uint64_t *started, uint64_t *steps, uint64_t *replayed, uint64_t *handed);

#endif
