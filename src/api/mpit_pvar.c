/* The tool interface's performance variables (MPI 4.1 section 15.3.7): read from the counters the
 * layers keep anyway (the named counters of MPIX_Aptus_counter, the matching queues, the progress
 * engine) and from the per-peer, per-channel statistics, which a handle of such a variable turns
 * on (aptus_peer_stats_enable: from then on each message sent counts, as with APTUS_STATS=1).
 * Nothing is added to the message path for the interface: a read looks at the counters when
 * the tool asks.
 *
 * Classes: the counters (COUNTER) are started and stopped by the tool, counted per handle from
 * its start (a base taken then), and may be reset or written; levels, sizes and high-water
 * marks are read as they are (continuous, read-only; a high-water mark since start-up). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "api/mpit.h"
#include "channel/channel.h"
#include "channel/rules.h"
#include "coll/coll.h"
#include "core/objects.h"
#include "pt2pt/pt2pt.h"
#include "runtime/lock.h"
#include "runtime/progress.h"
#include "runtime/runtime.h"

enum src {
    SRC_COUNTER,    /* a named counter (pt2pt.*, then the channels': ud.*, rc.*, memory.*, ...) */
    SRC_PEER_MSGS,  /* per peer: messages sent by one channel (an array, a peer per element) */
    SRC_PEER_BYTES, /* per peer: bytes of them */
    SRC_CHAN_MSGS,  /* summed over the peers */
    SRC_CHAN_BYTES, /* the same, bytes */
    SRC_PASSES,     /* progress engine passes */
    SRC_PT_WAKEUPS, /* the progress thread's wake-ups */
    SRC_COLL,       /* runs of a collective algorithm (aptus_coll_alg_counter; chan: its index) */
};

struct pvar {
    char name[48];
    char desc[256];
    int cls, bind, cat, src, chan;
    const char *counter; /* SRC_COUNTER: its name */
};

/* The named counters, by class. */
static const struct {
    const char *name;
    int cls, cat;
    const char *desc;
} named[] = {
    { "pt2pt.hybrid", MPI_T_PVAR_CLASS_COUNTER, MPIT_CAT_PT2PT,
      "Messages sent by HYBRID (copied to a buffer of the sender's, read by the receiver)" },
    { "pt2pt.send_rndv", MPI_T_PVAR_CLASS_COUNTER, MPIT_CAT_PT2PT,
      "Messages sent by SEND_RNDV (the sender came first and waits for the receiver)" },
    { "pt2pt.recv_rndv", MPI_T_PVAR_CLASS_COUNTER, MPIT_CAT_PT2PT,
      "Messages sent by RECV_RNDV (the receiver came first: RECEIVER_READY)" },
    { "pt2pt.fin_eliminated", MPI_T_PVAR_CLASS_COUNTER, MPIT_CAT_PT2PT, "RECV_RNDV messages that needed no FIN" },
    { "pt2pt.rr_sent", MPI_T_PVAR_CLASS_COUNTER, MPIT_CAT_PT2PT, "RECEIVER_READY messages sent" },
    { "pt2pt.rr_stale", MPI_T_PVAR_CLASS_COUNTER, MPIT_CAT_PT2PT,
      "RECEIVER_READY messages that arrived after their message had been sent another way" },
    { "pt2pt.rr_unused", MPI_T_PVAR_CLASS_COUNTER, MPIT_CAT_PT2PT, "RECEIVER_READY messages never used" },
    { "pt2pt.posted", MPI_T_PVAR_CLASS_LEVEL, MPIT_CAT_PT2PT, "Receives posted and not yet matched (now)" },
    { "pt2pt.posted_hwm", MPI_T_PVAR_CLASS_HIGHWATERMARK, MPIT_CAT_PT2PT,
      "The most receives posted and unmatched at once since start-up" },
    { "pt2pt.unexpected", MPI_T_PVAR_CLASS_LEVEL, MPIT_CAT_PT2PT,
      "Messages arrived before their receive (the unexpected queue, now)" },
    { "pt2pt.unexpected_hwm", MPI_T_PVAR_CLASS_HIGHWATERMARK, MPIT_CAT_PT2PT,
      "The most unexpected messages queued at once since start-up" },
    { "ud.datagrams", MPI_T_PVAR_CLASS_COUNTER, MPIT_CAT_UD, "Data datagrams sent by the reliability engine" },
    { "ud.retx_timeout", MPI_T_PVAR_CLASS_COUNTER, MPIT_CAT_UD, "Datagrams retransmitted after a timeout" },
    { "ud.retx_fast", MPI_T_PVAR_CLASS_COUNTER, MPIT_CAT_UD,
      "Datagrams retransmitted on selective acknowledgements showing a hole" },
    { "ud.probes", MPI_T_PVAR_CLASS_COUNTER, MPIT_CAT_UD, "Tail-loss probes sent" },
    { "ud.acks_sent", MPI_T_PVAR_CLASS_COUNTER, MPIT_CAT_UD, "Acknowledgement datagrams sent" },
    { "ud.delivered", MPI_T_PVAR_CLASS_COUNTER, MPIT_CAT_UD, "Payloads delivered in order" },
    { "ud.duplicates", MPI_T_PVAR_CLASS_COUNTER, MPIT_CAT_UD, "Duplicate datagrams dropped" },
    { "ud.out_of_order", MPI_T_PVAR_CLASS_COUNTER, MPIT_CAT_UD, "Datagrams that arrived ahead of a hole (held)" },
    { "ud.out_of_window", MPI_T_PVAR_CLASS_COUNTER, MPIT_CAT_UD, "Datagrams beyond the reorder window (dropped)" },
    { "ud.crc_failures", MPI_T_PVAR_CLASS_COUNTER, MPIT_CAT_UD, "Datagrams dropped for a bad CRC32C (APTUS_CRC=1)" },
    { "ud.timeouts", MPI_T_PVAR_CLASS_COUNTER, MPIT_CAT_UD, "Retransmission timer expiries" },
    { "ud.recovered", MPI_T_PVAR_CLASS_COUNTER, MPIT_CAT_UD,
      "Datagrams received by a retransmission, the first copy lost (path loss)" },
    { "ud.loss_moves", MPI_T_PVAR_CLASS_COUNTER, MPIT_CAT_UD,
      "Peers moved off the connected channels for a lossy path (here or by the peer)" },
    { "ud.loss_back", MPI_T_PVAR_CLASS_COUNTER, MPIT_CAT_UD, "Peers moved back after a lossy path's hold" },
    { "ud.lossy", MPI_T_PVAR_CLASS_LEVEL, MPIT_CAT_UD, "Peers on a lossy path now" },
    { "rc.connections", MPI_T_PVAR_CLASS_LEVEL, MPIT_CAT_RC, "RC connections open now" },
    { "rc.opened", MPI_T_PVAR_CLASS_COUNTER, MPIT_CAT_RC, "RC connections opened (by either side)" },
    { "rc.refused_limit", MPI_T_PVAR_CLASS_COUNTER, MPIT_CAT_RC,
      "RC connections not opened for the per-process limit (APTUS_RC_MAX)" },
    { "rc.idle_closed", MPI_T_PVAR_CLASS_COUNTER, MPIT_CAT_RC, "RC connections closed for being idle" },
    { "rc.frames_out", MPI_T_PVAR_CLASS_COUNTER, MPIT_CAT_RC, "Frames sent over RC connections" },
    { "rc.frames_in", MPI_T_PVAR_CLASS_COUNTER, MPIT_CAT_RC, "Frames received over RC connections" },
    { "rc.stalls", MPI_T_PVAR_CLASS_COUNTER, MPIT_CAT_RC, "RC connections seen stalled" },
    { "rc.moved", MPI_T_PVAR_CLASS_COUNTER, MPIT_CAT_RC, "Small messages of a peer moved off a stalling connection" },
    { "rcfp.paths", MPI_T_PVAR_CLASS_LEVEL, MPIT_CAT_RC, "RC fast paths (RDMA-written blocks) this rank sends by" },
    { "rcfp.msgs", MPI_T_PVAR_CLASS_COUNTER, MPIT_CAT_RC, "Messages sent by the RC fast path" },
    { "rcfp.no_room", MPI_T_PVAR_CLASS_COUNTER, MPIT_CAT_RC, "Fast-path frames that found no room in the block" },
    { "rcfp.memory", MPI_T_PVAR_CLASS_SIZE, MPIT_CAT_RC, "Bytes of the RC fast paths' blocks" },
    { "rcache.hits", MPI_T_PVAR_CLASS_COUNTER, MPIT_CAT_RC, "Registration cache hits" },
    { "rcache.misses", MPI_T_PVAR_CLASS_COUNTER, MPIT_CAT_RC, "Registration cache misses (a registration made)" },
    { "rcache.evictions", MPI_T_PVAR_CLASS_COUNTER, MPIT_CAT_RC, "Registrations evicted for the cache's limits" },
    { "rcache.invalidations", MPI_T_PVAR_CLASS_COUNTER, MPIT_CAT_RC,
      "Registrations dropped because their memory was freed or unmapped" },
    { "rcache.entries", MPI_T_PVAR_CLASS_LEVEL, MPIT_CAT_RC, "Registrations in the cache now" },
    { "rcache.bytes", MPI_T_PVAR_CLASS_SIZE, MPIT_CAT_RC, "Bytes registered in the cache now" },
    { "rdma.writes", MPI_T_PVAR_CLASS_COUNTER, MPIT_CAT_RC, "RDMA writes issued" },
    { "rdma.reads", MPI_T_PVAR_CLASS_COUNTER, MPIT_CAT_RC, "RDMA reads issued" },
    { "memory", MPI_T_PVAR_CLASS_SIZE, MPIT_CAT_CHANNELS, "Bytes of memory the channels hold, all together" },
};
enum { NNAMED = (int)(sizeof named / sizeof named[0]) };

/* The per-channel families. */
static const struct {
    const char *fmt;
    int src, cls, bind;
    const char *desc;
} families[] = {
    { "peer.msgs.%s", SRC_PEER_MSGS, MPI_T_PVAR_CLASS_COUNTER, MPI_T_BIND_NO_OBJECT,
      "Messages sent to each rank of MPI_COMM_WORLD (an element per world rank) by channel %s" },
    { "peer.bytes.%s", SRC_PEER_BYTES, MPI_T_PVAR_CLASS_COUNTER, MPI_T_BIND_NO_OBJECT,
      "Bytes of the messages sent to each rank of MPI_COMM_WORLD by channel %s" },
    { "comm.msgs.%s", SRC_PEER_MSGS, MPI_T_PVAR_CLASS_COUNTER, MPI_T_BIND_MPI_COMM,
      "Messages sent to each rank of the communicator (its remote group's for an intercommunicator), by any "
      "communicator, by channel %s" },
    { "comm.bytes.%s", SRC_PEER_BYTES, MPI_T_PVAR_CLASS_COUNTER, MPI_T_BIND_MPI_COMM,
      "Bytes of the messages sent to each rank of the communicator, by any communicator, by channel %s" },
    { "channel.msgs.%s", SRC_CHAN_MSGS, MPI_T_PVAR_CLASS_COUNTER, MPI_T_BIND_NO_OBJECT,
      "Messages sent by channel %s to every peer" },
    { "channel.bytes.%s", SRC_CHAN_BYTES, MPI_T_PVAR_CLASS_COUNTER, MPI_T_BIND_NO_OBJECT,
      "Bytes of the messages sent by channel %s to every peer" },
    { "memory.%s", SRC_COUNTER, MPI_T_PVAR_CLASS_SIZE, MPI_T_BIND_NO_OBJECT, "Bytes of memory channel %s holds" },
};
enum { NFAMILIES = (int)(sizeof families / sizeof families[0]) };

enum { NCOLL_MAX = 40, NPVARS = NNAMED + NFAMILIES * APTUS_CH_COUNT + 2 + NCOLL_MAX };
static struct pvar pvars[NPVARS];
static int npvars;

static void pvars_make(void)
{
    if (npvars)
        return;
    int n = 0;
    for (int i = 0; i < NNAMED; i++) {
        struct pvar *v = &pvars[n++];
        snprintf(v->name, sizeof v->name, "%s", named[i].name);
        snprintf(v->desc, sizeof v->desc, "%s", named[i].desc);
        v->cls = named[i].cls;
        v->bind = MPI_T_BIND_NO_OBJECT;
        v->cat = named[i].cat;
        v->src = SRC_COUNTER;
        v->counter = named[i].name;
    }
    for (int f = 0; f < NFAMILIES; f++)
        for (int c = 0; c < APTUS_CH_COUNT; c++) {
            struct pvar *v = &pvars[n++];
            const char *ch = aptus_channel_name(c);
            snprintf(v->name, sizeof v->name, families[f].fmt, ch);
            snprintf(v->desc, sizeof v->desc, families[f].desc, ch);
            v->cls = families[f].cls;
            v->bind = families[f].bind;
            v->cat = MPIT_CAT_CHANNELS;
            v->src = families[f].src;
            v->chan = c;
            v->counter = families[f].src == SRC_COUNTER ? v->name : NULL;
        }
    pvars[n++] = (struct pvar){ "progress.passes",
                                "Passes of the progress engine (every poll of every channel)",
                                MPI_T_PVAR_CLASS_COUNTER,
                                MPI_T_BIND_NO_OBJECT,
                                MPIT_CAT_PROGRESS,
                                SRC_PASSES,
                                0,
                                NULL };
    pvars[n++] = (struct pvar){ "progress.thread_wakeups",
                                "Sleeps of the progress thread that ended (APTUS_ASYNC_PROGRESS=1): a frame, a timer, "
                                "a kick or the guard's timeout",
                                MPI_T_PVAR_CLASS_COUNTER,
                                MPI_T_BIND_NO_OBJECT,
                                MPIT_CAT_PROGRESS,
                                SRC_PT_WAKEUPS,
                                0,
                                NULL };
    for (int i = 0; i < NCOLL_MAX; i++) {
        struct pvar *v = &pvars[n];
        if (aptus_coll_alg_counter(i, v->name, sizeof v->name, NULL) != 0)
            break;
        char name[sizeof v->name];
        memcpy(name, v->name, sizeof name);
        snprintf(v->desc, sizeof v->desc, "Runs of the algorithm on this rank, chosen or forced (%s)", name);
        v->cls = MPI_T_PVAR_CLASS_COUNTER;
        v->bind = MPI_T_BIND_NO_OBJECT;
        v->cat = MPIT_CAT_COLL;
        v->src = SRC_COLL;
        v->chan = i;
        n++;
    }
    npvars = n;
}

int aptus_mpit_pvar_num(void)
{
    pvars_make();
    return npvars;
}

int aptus_mpit_pvar_category(int i)
{
    pvars_make();
    return pvars[i].cat;
}

static int counter_class(int cls)
{
    return cls == MPI_T_PVAR_CLASS_COUNTER;
}

/* ---- reading ------------------------------------------------------------------------------ */

struct MPI_ABI_T_pvar_session;

struct MPI_ABI_T_pvar_handle {
    struct MPI_ABI_T_pvar_handle *next;
    struct MPI_ABI_T_pvar_session *session;
    int index, count, started;
    int *world;           /* element -> world rank (bound to a communicator), else NULL */
    uint64_t *base, *acc; /* counters: the raw values at the start / the sum of earlier runs */
    uint64_t *now;        /* scratch for a read */
};

struct MPI_ABI_T_pvar_session {
    struct MPI_ABI_T_pvar_session *next;
    struct MPI_ABI_T_pvar_handle *handles;
};
static struct MPI_ABI_T_pvar_session *sessions;

static struct aptus_peer *peer_at(int world)
{
    if (!aptus_rt.initialized || !aptus_rt.peers || world < 0 || world >= aptus_rt.size)
        return NULL;
    return aptus_rt.peers[world];
}

/* The raw values of h's variable into out[0..count). */
static void raw(const struct MPI_ABI_T_pvar_handle *h, uint64_t *out)
{
    const struct pvar *v = &pvars[h->index];
    switch (v->src) {
    case SRC_COUNTER:
        if (aptus_pt2pt_counter(v->counter, &out[0]) != 0 && aptus_channel_counter(v->counter, &out[0]) != 0)
            out[0] = 0; /* its channel is not in use in this job (or not yet) */
        return;
    case SRC_PEER_MSGS:
    case SRC_PEER_BYTES:
        for (int k = 0; k < h->count; k++) {
            struct aptus_peer *p = peer_at(h->world ? h->world[k] : k);
            struct aptus_peer_stats *s = p ? __atomic_load_n(&p->stats, __ATOMIC_ACQUIRE) : NULL;
            out[k] = !s ? 0 : v->src == SRC_PEER_MSGS ? s->msgs[v->chan] : s->bytes[v->chan];
        }
        return;
    case SRC_CHAN_MSGS:
    case SRC_CHAN_BYTES:
        out[0] = 0;
        for (int r = 0; r < aptus_rt.size; r++) {
            struct aptus_peer *p = peer_at(r);
            struct aptus_peer_stats *s = p ? __atomic_load_n(&p->stats, __ATOMIC_ACQUIRE) : NULL;
            if (s)
                out[0] += v->src == SRC_CHAN_MSGS ? s->msgs[v->chan] : s->bytes[v->chan];
        }
        return;
    case SRC_PASSES: out[0] = aptus_progress_pass; return;
    case SRC_PT_WAKEUPS: out[0] = __atomic_load_n(&aptus_progress_thread_wakeups, __ATOMIC_RELAXED); return;
    case SRC_COLL:
        if (aptus_coll_alg_counter(v->chan, NULL, 0, &out[0]) != 0)
            out[0] = 0;
        return;
    }
}

/* The handle's value now into h->now. */
static void value(struct MPI_ABI_T_pvar_handle *h)
{
    raw(h, h->now);
    if (!counter_class(pvars[h->index].cls))
        return;
    for (int k = 0; k < h->count; k++) {
        uint64_t run = h->started && h->now[k] >= h->base[k] ? h->now[k] - h->base[k] : 0;
        h->now[k] = h->acc[k] + run;
    }
}

/* ---- information ---------------------------------------------------------------------------- */

int PMPI_T_pvar_get_num(int *num_pvar)
{
    MPIT_ENTER("MPI_T_pvar_get_num");
    if (!num_pvar)
        return aptus_mpit_fail(MPI_T_ERR_INVALID, "MPI_T_pvar_get_num: null num_pvar argument");
    *num_pvar = aptus_mpit_pvar_num();
    return MPI_SUCCESS;
}
APTUS_ALIAS(T_pvar_get_num)

static int pvar_index_check(const char *fn, int i)
{
    int n = aptus_mpit_pvar_num();
    if (i < 0 || i >= n)
        return aptus_mpit_fail(MPI_T_ERR_INVALID_INDEX, "%s: performance variable index %d is not in 0..%d", fn, i,
                               n - 1);
    return MPI_SUCCESS;
}

int PMPI_T_pvar_get_info(int pvar_index, char *name, int *name_len, int *verbosity, int *var_class,
                         MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc, int *desc_len, int *bind,
                         int *readonly, int *continuous, int *atomic)
{
    MPIT_ENTER("MPI_T_pvar_get_info");
    int rc = pvar_index_check("MPI_T_pvar_get_info", pvar_index);
    if (rc)
        return rc;
    const struct pvar *v = &pvars[pvar_index];
    int counter = counter_class(v->cls);
    aptus_mpit_string(v->name, name, name_len);
    aptus_mpit_string(v->desc, desc, desc_len);
    if (verbosity)
        *verbosity = v->src == SRC_PEER_MSGS || v->src == SRC_PEER_BYTES || v->cat == MPIT_CAT_CHANNELS
                         ? MPI_T_VERBOSITY_USER_BASIC
                         : MPI_T_VERBOSITY_TUNER_DETAIL;
    if (var_class)
        *var_class = v->cls;
    if (datatype)
        *datatype = MPI_UNSIGNED_LONG_LONG;
    if (enumtype)
        *enumtype = MPI_T_ENUM_NULL;
    if (bind)
        *bind = v->bind;
    if (readonly)
        *readonly = !counter;
    if (continuous)
        *continuous = !counter;
    if (atomic)
        *atomic = counter; /* a read and reset from one look at the counters */
    return MPI_SUCCESS;
}
APTUS_ALIAS(T_pvar_get_info)

static const char *pvar_name(int i)
{
    return pvars[i].name;
}

int PMPI_T_pvar_get_index(const char *name, int var_class, int *pvar_index)
{
    MPIT_ENTER("MPI_T_pvar_get_index");
    if (!name || !pvar_index)
        return aptus_mpit_fail(MPI_T_ERR_INVALID, "MPI_T_pvar_get_index: null %s argument",
                               name ? "pvar_index" : "name");
    int i = aptus_mpit_lookup(name, pvar_name, aptus_mpit_pvar_num());
    if (i < 0 || pvars[i].cls != var_class)
        return aptus_mpit_fail(MPI_T_ERR_INVALID_NAME,
                               "MPI_T_pvar_get_index: no performance variable of class %d is named '%s'", var_class,
                               name);
    *pvar_index = i;
    return MPI_SUCCESS;
}
APTUS_ALIAS(T_pvar_get_index)

/* ---- sessions ----------------------------------------------------------------------------- */

static int session_check(const char *fn, MPI_T_pvar_session s)
{
    for (struct MPI_ABI_T_pvar_session *x = sessions; x; x = x->next)
        if (x == s)
            return MPI_SUCCESS;
    return aptus_mpit_fail(MPI_T_ERR_INVALID_SESSION, "%s: %p is not a performance variable session", fn, (void *)s);
}

int PMPI_T_pvar_session_create(MPI_T_pvar_session *session)
{
    APTUS_OUT_NULL(session, MPI_T_PVAR_SESSION_NULL);
    MPIT_ENTER("MPI_T_pvar_session_create");
    if (!session)
        return aptus_mpit_fail(MPI_T_ERR_INVALID, "MPI_T_pvar_session_create: null session argument");
    struct MPI_ABI_T_pvar_session *s = calloc(1, sizeof *s);
    if (!s)
        return aptus_mpit_fail(MPI_T_ERR_MEMORY, "MPI_T_pvar_session_create: out of memory");
    s->next = sessions;
    sessions = s;
    *session = s;
    return MPI_SUCCESS;
}
APTUS_ALIAS(T_pvar_session_create)

static void handle_destroy(struct MPI_ABI_T_pvar_handle *h)
{
    free(h->world);
    free(h->base);
    free(h->acc);
    free(h->now);
    free(h);
}

static void session_destroy(struct MPI_ABI_T_pvar_session *s)
{
    while (s->handles) {
        struct MPI_ABI_T_pvar_handle *h = s->handles;
        s->handles = h->next;
        handle_destroy(h);
    }
    free(s);
}

int PMPI_T_pvar_session_free(MPI_T_pvar_session *session)
{
    MPIT_ENTER("MPI_T_pvar_session_free");
    if (!session)
        return aptus_mpit_fail(MPI_T_ERR_INVALID, "MPI_T_pvar_session_free: null session argument");
    int rc = session_check("MPI_T_pvar_session_free", *session);
    if (rc)
        return rc;
    for (struct MPI_ABI_T_pvar_session **pp = &sessions; *pp; pp = &(*pp)->next)
        if (*pp == *session) {
            *pp = (*session)->next;
            break;
        }
    session_destroy(*session);
    *session = MPI_T_PVAR_SESSION_NULL;
    return MPI_SUCCESS;
}
APTUS_ALIAS(T_pvar_session_free)

void aptus_mpit_pvar_finalize(void)
{
    while (sessions) {
        struct MPI_ABI_T_pvar_session *s = sessions;
        sessions = s->next;
        session_destroy(s);
    }
}

/* ---- handles -------------------------------------------------------------------------------- */

int PMPI_T_pvar_handle_alloc(MPI_T_pvar_session session, int pvar_index, void *obj_handle, MPI_T_pvar_handle *handle,
                             int *count)
{
    static const char fn[] = "MPI_T_pvar_handle_alloc";
    APTUS_OUT_NULL(handle, MPI_T_PVAR_HANDLE_NULL);
    MPIT_ENTER(fn);
    int rc = session_check(fn, session);
    if (!rc)
        rc = pvar_index_check(fn, pvar_index);
    if (rc)
        return rc;
    if (!handle || !count)
        return aptus_mpit_fail(MPI_T_ERR_INVALID, "%s: null %s argument", fn, handle ? "count" : "handle");
    const struct pvar *v = &pvars[pvar_index];
    int n = 1, *world = NULL;
    if (v->src == SRC_PEER_MSGS || v->src == SRC_PEER_BYTES) {
        n = aptus_rt.initialized ? aptus_rt.size : 0;
        if (v->bind == MPI_T_BIND_MPI_COMM) {
            struct aptus_comm *c = obj_handle ? aptus_comm_get(*(MPI_Comm *)obj_handle) : NULL;
            if (!c)
                return aptus_mpit_fail(MPI_T_ERR_INVALID_HANDLE,
                                       "%s: %s is bound to a communicator: obj_handle must "
                                       "point at a valid MPI_Comm",
                                       fn, v->name);
            n = c->npeers;
            world = malloc((size_t)(n > 0 ? n : 1) * sizeof *world);
            if (!world)
                return aptus_mpit_fail(MPI_T_ERR_MEMORY, "%s: out of memory", fn);
            for (int k = 0; k < n; k++)
                world[k] = aptus_comm_peer_world(c, k);
        }
    }
    if ((v->src == SRC_PEER_MSGS || v->src == SRC_PEER_BYTES || v->src == SRC_CHAN_MSGS || v->src == SRC_CHAN_BYTES) &&
        aptus_peer_stats_enable() != 0) {
        free(world);
        return aptus_mpit_fail(MPI_T_ERR_MEMORY, "%s: out of memory for the per-peer statistics", fn);
    }
    struct MPI_ABI_T_pvar_handle *h = calloc(1, sizeof *h);
    size_t slots = (size_t)(n > 0 ? n : 1);
    if (h) {
        h->base = calloc(slots, sizeof *h->base);
        h->acc = calloc(slots, sizeof *h->acc);
        h->now = calloc(slots, sizeof *h->now);
    }
    if (!h || !h->base || !h->acc || !h->now) {
        free(world);
        if (h)
            handle_destroy(h); /* (its world not set yet) */
        return aptus_mpit_fail(MPI_T_ERR_MEMORY, "%s: out of memory", fn);
    }
    h->session = session;
    h->index = pvar_index;
    h->count = n;
    h->world = world;
    h->started = !counter_class(v->cls); /* continuous ones run from the start */
    h->next = session->handles;
    session->handles = h;
    *handle = h;
    *count = n;
    return MPI_SUCCESS;
}
APTUS_ALIAS(T_pvar_handle_alloc)

/* h must be a handle of session s (MPI_T_PVAR_ALL_HANDLES allowed where all_ok). */
static int handle_check(const char *fn, MPI_T_pvar_session s, MPI_T_pvar_handle h, int all_ok)
{
    int rc = session_check(fn, s);
    if (rc)
        return rc;
    if (h == MPI_T_PVAR_ALL_HANDLES) {
        if (all_ok)
            return MPI_SUCCESS;
        return aptus_mpit_fail(MPI_T_ERR_INVALID_HANDLE, "%s: MPI_T_PVAR_ALL_HANDLES is not allowed here", fn);
    }
    for (struct MPI_ABI_T_pvar_handle *x = s->handles; x; x = x->next)
        if (x == h)
            return MPI_SUCCESS;
    return aptus_mpit_fail(MPI_T_ERR_INVALID_HANDLE, "%s: %p is not a performance variable handle of this session", fn,
                           (void *)h);
}

int PMPI_T_pvar_handle_free(MPI_T_pvar_session session, MPI_T_pvar_handle *handle)
{
    MPIT_ENTER("MPI_T_pvar_handle_free");
    if (!handle)
        return aptus_mpit_fail(MPI_T_ERR_INVALID, "MPI_T_pvar_handle_free: null handle argument");
    int rc = handle_check("MPI_T_pvar_handle_free", session, *handle, 0);
    if (rc)
        return rc;
    for (struct MPI_ABI_T_pvar_handle **pp = &session->handles; *pp; pp = &(*pp)->next)
        if (*pp == *handle) {
            *pp = (*handle)->next;
            break;
        }
    handle_destroy(*handle);
    *handle = MPI_T_PVAR_HANDLE_NULL;
    return MPI_SUCCESS;
}
APTUS_ALIAS(T_pvar_handle_free)

/* ---- start, stop, read, write, reset -------------------------------------------------------- */

static void start_one(struct MPI_ABI_T_pvar_handle *h)
{
    if (h->started)
        return;
    raw(h, h->base);
    h->started = 1;
}

static void stop_one(struct MPI_ABI_T_pvar_handle *h)
{
    if (!h->started)
        return;
    value(h);
    memcpy(h->acc, h->now, (size_t)h->count * sizeof *h->acc);
    h->started = 0;
}

static void reset_one(struct MPI_ABI_T_pvar_handle *h)
{
    memset(h->acc, 0, (size_t)h->count * sizeof *h->acc);
    if (h->started)
        raw(h, h->base);
}

/* Applies op to h, or to every handle of s that takes it (MPI_T_PVAR_ALL_HANDLES: the others are
 * left alone); a single handle that does not take it gets err. */
static int apply(const char *fn, MPI_T_pvar_session s, MPI_T_pvar_handle h, void (*op)(struct MPI_ABI_T_pvar_handle *),
                 int err, const char *what)
{
    int rc = handle_check(fn, s, h, 1);
    if (rc)
        return rc;
    if (h == MPI_T_PVAR_ALL_HANDLES) {
        for (struct MPI_ABI_T_pvar_handle *x = s->handles; x; x = x->next)
            if (counter_class(pvars[x->index].cls))
                op(x);
        return MPI_SUCCESS;
    }
    if (!counter_class(pvars[h->index].cls))
        return aptus_mpit_fail(err, "%s: %s %s", fn, pvars[h->index].name, what);
    op(h);
    return MPI_SUCCESS;
}

int PMPI_T_pvar_start(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    MPIT_ENTER("MPI_T_pvar_start");
    return apply("MPI_T_pvar_start", session, handle, start_one, MPI_T_ERR_PVAR_NO_STARTSTOP,
                 "is continuous: it cannot be started or stopped");
}
APTUS_ALIAS(T_pvar_start)

int PMPI_T_pvar_stop(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    MPIT_ENTER("MPI_T_pvar_stop");
    return apply("MPI_T_pvar_stop", session, handle, stop_one, MPI_T_ERR_PVAR_NO_STARTSTOP,
                 "is continuous: it cannot be started or stopped");
}
APTUS_ALIAS(T_pvar_stop)

int PMPI_T_pvar_reset(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    MPIT_ENTER("MPI_T_pvar_reset");
    return apply("MPI_T_pvar_reset", session, handle, reset_one, MPI_T_ERR_PVAR_NO_WRITE,
                 "is read-only: it cannot be reset");
}
APTUS_ALIAS(T_pvar_reset)

static void copy_out(const struct MPI_ABI_T_pvar_handle *h, void *buf)
{
    for (int k = 0; k < h->count; k++) {
        unsigned long long u = h->now[k];
        memcpy((char *)buf + (size_t)k * sizeof u, &u, sizeof u);
    }
}

int PMPI_T_pvar_read(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf)
{
    MPIT_ENTER("MPI_T_pvar_read");
    int rc = handle_check("MPI_T_pvar_read", session, handle, 0);
    if (rc)
        return rc;
    if (!buf && handle->count > 0)
        return aptus_mpit_fail(MPI_T_ERR_INVALID, "MPI_T_pvar_read: null buf argument");
    value(handle);
    copy_out(handle, buf);
    return MPI_SUCCESS;
}
APTUS_ALIAS(T_pvar_read)

int PMPI_T_pvar_readreset(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf)
{
    static const char fn[] = "MPI_T_pvar_readreset";
    MPIT_ENTER(fn);
    int rc = handle_check(fn, session, handle, 0);
    if (rc)
        return rc;
    if (!counter_class(pvars[handle->index].cls))
        return aptus_mpit_fail(MPI_T_ERR_PVAR_NO_ATOMIC, "%s: %s is read-only: it cannot be read and reset", fn,
                               pvars[handle->index].name);
    if (!buf && handle->count > 0)
        return aptus_mpit_fail(MPI_T_ERR_INVALID, "%s: null buf argument", fn);
    /* one look at the counters: the value read and the new base both come from it */
    raw(handle, handle->now);
    for (int k = 0; k < handle->count; k++) {
        uint64_t r = handle->now[k];
        uint64_t run = handle->started && r >= handle->base[k] ? r - handle->base[k] : 0;
        handle->now[k] = handle->acc[k] + run;
        handle->acc[k] = 0;
        if (handle->started)
            handle->base[k] = r;
    }
    copy_out(handle, buf);
    return MPI_SUCCESS;
}
APTUS_ALIAS(T_pvar_readreset)

int PMPI_T_pvar_write(MPI_T_pvar_session session, MPI_T_pvar_handle handle, const void *buf)
{
    static const char fn[] = "MPI_T_pvar_write";
    MPIT_ENTER(fn);
    int rc = handle_check(fn, session, handle, 0);
    if (rc)
        return rc;
    if (!counter_class(pvars[handle->index].cls))
        return aptus_mpit_fail(MPI_T_ERR_PVAR_NO_WRITE, "%s: %s is read-only", fn, pvars[handle->index].name);
    if (!buf && handle->count > 0)
        return aptus_mpit_fail(MPI_T_ERR_INVALID, "%s: null buf argument", fn);
    for (int k = 0; k < handle->count; k++) {
        unsigned long long u;
        memcpy(&u, (const char *)buf + (size_t)k * sizeof u, sizeof u);
        handle->acc[k] = u;
    }
    if (handle->started)
        raw(handle, handle->base);
    return MPI_SUCCESS;
}
APTUS_ALIAS(T_pvar_write)
