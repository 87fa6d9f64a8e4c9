/* The tool interface's events (MPI 4.1 section 15.3.8): channel endpoints opened and closed,
 * routes moved, peers failed. The layers below raise them through one pointer
 * (runtime/tool.h), set only while some registration has a callback; a raise calls the
 * callbacks at once, in the raising thread, under the library's lock, so instances are ordered
 * (one source, MPI_T_SOURCE_ORDERED) and live only during the callback.
 *
 * Safety: a raise happens inside the library with its lock held, so a callback must at least
 * keep to what MPI_T_CB_REQUIRE_MPI_RESTRICTED allows; where other threads may run MPI meanwhile
 * (the lock is on: MPI_THREAD_MULTIPLE or the progress thread) it must be thread safe too. Of a
 * registration's callbacks the one registered for the least safety that suffices is called;
 * with none that suffices the event is dropped for it and its dropped handler told. */
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "api/mpit.h"
#include "core/info.h"
#include "runtime/lock.h"
#include "runtime/tool.h"

static const struct {
    const char *name, *desc;
    const char *elem[2];
    struct MPI_ABI_T_enum *en;
} events[APTUS_TEV_COUNT] = {
    [APTUS_TEV_CHANNEL_OPENED] = { "channel_opened",
                                   "An endpoint of a channel to a peer was opened (for the connected channels, a "
                                   "connection asked for); elements: the peer's world rank, the channel (enumeration "
                                   "aptus_channel)",
                                   { "peer", "channel" },
                                   &aptus_mpit_channel_enum },
    [APTUS_TEV_CHANNEL_CLOSED] = { "channel_closed",
                                   "An endpoint of a channel to a peer was closed (idle, a per-process limit, or the "
                                   "peer's failure); elements: the peer's world rank, the channel",
                                   { "peer", "channel" },
                                   &aptus_mpit_channel_enum },
    [APTUS_TEV_ROUTE_MOVED] = { "route_moved",
                                "A peer's route changed how far it avoids the connected channels (a lossy path, a "
                                "stalling connection, or back); elements: the peer's world rank, the level "
                                "(enumeration aptus_route_move)",
                                { "peer", "level" },
                                &aptus_mpit_move_enum },
    [APTUS_TEV_PEER_FAILED] = { "peer_failed",
                                "A channel gave up on a peer; elements: the peer's world rank, the channel (-1: "
                                "unknown)",
                                { "peer", "channel" },
                                &aptus_mpit_channel_enum },
};

int aptus_mpit_event_num(void)
{
    return APTUS_TEV_COUNT;
}

int aptus_mpit_event_category(int i)
{
    (void)i;
    return MPIT_CAT_CHANNELS;
}

/* ---- registrations -------------------------------------------------------------------------- */

#define NSAFETY 4
static const MPI_T_cb_safety safeties[NSAFETY] = { MPI_T_CB_REQUIRE_NONE, MPI_T_CB_REQUIRE_MPI_RESTRICTED,
                                                   MPI_T_CB_REQUIRE_THREAD_SAFE, MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE };

struct MPI_ABI_T_event_registration {
    struct MPI_ABI_T_event_registration *next;
    int event;
    int dead; /* freed during a raise: unlinked when the raise is over */
    struct {
        MPI_T_event_cb_function *fn;
        void *data;
    } cb[NSAFETY];
    MPI_T_event_dropped_cb_function *dropped;
    MPI_Count ndropped;
};
static struct MPI_ABI_T_event_registration *regs;
static int raising; /* a raise is calling callbacks (under the lock: no other thread is here) */

struct MPI_ABI_T_event_instance {
    int event;
    int elem[2];
    MPI_Count stamp;
};

static int safety_slot(MPI_T_cb_safety s)
{
    for (int k = 0; k < NSAFETY; k++)
        if (safeties[k] == s)
            return k;
    return -1;
}

static void raise_event(int kind, int64_t a, int64_t b);

/* The hook is set while some registration has a callback. */
static void hook_update(void)
{
    int any = 0;
    for (struct MPI_ABI_T_event_registration *r = regs; r && !any; r = r->next)
        for (int k = 0; k < NSAFETY && !r->dead; k++)
            any |= r->cb[k].fn != NULL;
    __atomic_store_n(&aptus_tool_event_fn, any ? raise_event : NULL, __ATOMIC_RELEASE);
}

static void unlink_dead(void)
{
    for (struct MPI_ABI_T_event_registration **pp = &regs; *pp;) {
        struct MPI_ABI_T_event_registration *r = *pp;
        if (r->dead) {
            *pp = r->next;
            free(r);
        } else {
            pp = &r->next;
        }
    }
}

static void raise_event(int kind, int64_t a, int64_t b)
{
    APTUS_API_LOCK();
    if (raising || kind < 0 || kind >= APTUS_TEV_COUNT)
        return; /* (a callback's own MPI call raising again: not delivered within itself) */
    MPI_T_cb_safety need = __atomic_load_n(&aptus_lock_on, __ATOMIC_RELAXED) ? MPI_T_CB_REQUIRE_THREAD_SAFE
                                                                             : MPI_T_CB_REQUIRE_MPI_RESTRICTED;
    struct MPI_ABI_T_event_instance ev = { kind, { (int)a, (int)b }, aptus_mpit_ticks() };
    raising = 1;
    for (struct MPI_ABI_T_event_registration *r = regs; r; r = r->next) {
        if (r->dead || r->event != kind)
            continue;
        int k = safety_slot(need);
        while (k < NSAFETY && !r->cb[k].fn)
            k++;
        if (k < NSAFETY) {
            r->cb[k].fn(&ev, r, need, r->cb[k].data);
            continue;
        }
        r->ndropped++;
        if (r->dropped) {
            MPI_Count n = r->ndropped;
            void *data = NULL;
            for (int j = 0; j < NSAFETY && !data; j++)
                data = r->cb[j].data;
            r->ndropped = 0;
            r->dropped(n, r, 0, need, data);
        }
    }
    raising = 0;
    unlink_dead(); /* (the hook was updated where a callback freed or changed a registration) */
}

void aptus_mpit_event_finalize(void)
{
    __atomic_store_n(&aptus_tool_event_fn, NULL, __ATOMIC_RELEASE);
    while (regs) {
        struct MPI_ABI_T_event_registration *r = regs;
        regs = r->next;
        free(r);
    }
}

static int reg_check(const char *fn, MPI_T_event_registration reg)
{
    for (struct MPI_ABI_T_event_registration *r = regs; r; r = r->next)
        if (r == reg && !r->dead)
            return MPI_SUCCESS;
    return aptus_mpit_fail(MPI_T_ERR_INVALID_HANDLE, "%s: %p is not an event registration (freed, or another kind)", fn,
                           (void *)reg);
}

static int event_check(const char *fn, int i)
{
    if (i < 0 || i >= APTUS_TEV_COUNT)
        return aptus_mpit_fail(MPI_T_ERR_INVALID_INDEX, "%s: event index %d is not in 0..%d", fn, i,
                               APTUS_TEV_COUNT - 1);
    return MPI_SUCCESS;
}

/* ---- information ---------------------------------------------------------------------------- */

int PMPI_T_event_get_num(int *num_events)
{
    MPIT_ENTER("MPI_T_event_get_num");
    if (!num_events)
        return aptus_mpit_fail(MPI_T_ERR_INVALID, "MPI_T_event_get_num: null num_events argument");
    *num_events = APTUS_TEV_COUNT;
    return MPI_SUCCESS;
}
APTUS_ALIAS(T_event_get_num)

int PMPI_T_event_get_info(int event_index, char *name, int *name_len, int *verbosity, MPI_Datatype *array_of_datatypes,
                          MPI_Aint *array_of_displacements, int *num_elements, MPI_T_enum *enumtype, MPI_Info *info,
                          char *desc, int *desc_len, int *bind)
{
    APTUS_OUT_NULL(info, MPI_INFO_NULL);
    MPIT_ENTER("MPI_T_event_get_info");
    int rc = event_check("MPI_T_event_get_info", event_index);
    if (rc)
        return rc;
    aptus_mpit_string(events[event_index].name, name, name_len);
    aptus_mpit_string(events[event_index].desc, desc, desc_len);
    if (verbosity)
        *verbosity = MPI_T_VERBOSITY_USER_DETAIL;
    if (num_elements) {
        /* in: the arrays' length; out: the elements */
        for (int k = 0; k < 2 && k < *num_elements; k++) {
            if (array_of_datatypes)
                array_of_datatypes[k] = MPI_INT;
            if (array_of_displacements)
                array_of_displacements[k] = (MPI_Aint)(k * (int)sizeof(int));
        }
        *num_elements = 2;
    }
    if (enumtype)
        *enumtype = events[event_index].en;
    if (bind)
        *bind = MPI_T_BIND_NO_OBJECT;
    return MPI_SUCCESS;
}
APTUS_ALIAS(T_event_get_info)

static const char *event_name(int i)
{
    return events[i].name;
}

int PMPI_T_event_get_index(const char *name, int *event_index)
{
    MPIT_ENTER("MPI_T_event_get_index");
    if (!name || !event_index)
        return aptus_mpit_fail(MPI_T_ERR_INVALID, "MPI_T_event_get_index: null %s argument",
                               name ? "event_index" : "name");
    int i = aptus_mpit_lookup(name, event_name, APTUS_TEV_COUNT);
    if (i < 0)
        return aptus_mpit_fail(MPI_T_ERR_INVALID_NAME, "MPI_T_event_get_index: no event is named '%s'", name);
    *event_index = i;
    return MPI_SUCCESS;
}
APTUS_ALIAS(T_event_get_index)

/* ---- registrations and callbacks ---------------------------------------------------------- */

int PMPI_T_event_handle_alloc(int event_index, void *obj_handle, MPI_Info info,
                              MPI_T_event_registration *event_registration)
{
    APTUS_OUT_NULL(event_registration, NULL);
    MPIT_ENTER("MPI_T_event_handle_alloc");
    (void)obj_handle, (void)info; /* no event is bound to an object; no hints are used */
    int rc = event_check("MPI_T_event_handle_alloc", event_index);
    if (rc)
        return rc;
    if (!event_registration)
        return aptus_mpit_fail(MPI_T_ERR_INVALID, "MPI_T_event_handle_alloc: null event_registration argument");
    struct MPI_ABI_T_event_registration *r = calloc(1, sizeof *r);
    if (!r)
        return aptus_mpit_fail(MPI_T_ERR_MEMORY, "MPI_T_event_handle_alloc: out of memory");
    r->event = event_index;
    r->next = regs;
    regs = r;
    *event_registration = r;
    return MPI_SUCCESS;
}
APTUS_ALIAS(T_event_handle_alloc)

/* An info object of the hints in use: none, so an empty one the caller frees. */
static int empty_info(const char *fn, MPI_Info *info_used)
{
    if (!info_used)
        return aptus_mpit_fail(MPI_T_ERR_INVALID, "%s: null info_used argument", fn);
    struct aptus_info *i = aptus_info_new();
    if (!i)
        return aptus_mpit_fail(MPI_T_ERR_MEMORY, "%s: out of memory", fn);
    *info_used = (MPI_Info)i;
    return MPI_SUCCESS;
}

int PMPI_T_event_handle_set_info(MPI_T_event_registration event_registration, MPI_Info info)
{
    MPIT_ENTER("MPI_T_event_handle_set_info");
    (void)info; /* no hint is known: ignored, as the standard allows */
    return reg_check("MPI_T_event_handle_set_info", event_registration);
}
APTUS_ALIAS(T_event_handle_set_info)

int PMPI_T_event_handle_get_info(MPI_T_event_registration event_registration, MPI_Info *info_used)
{
    APTUS_OUT_NULL(info_used, MPI_INFO_NULL);
    MPIT_ENTER("MPI_T_event_handle_get_info");
    int rc = reg_check("MPI_T_event_handle_get_info", event_registration);
    return rc ? rc : empty_info("MPI_T_event_handle_get_info", info_used);
}
APTUS_ALIAS(T_event_handle_get_info)

static int safety_check(const char *fn, MPI_T_cb_safety s)
{
    if (safety_slot(s) < 0)
        return aptus_mpit_fail(MPI_T_ERR_INVALID, "%s: %d is not an MPI_T_cb_safety level", fn, (int)s);
    return MPI_SUCCESS;
}

int PMPI_T_event_register_callback(MPI_T_event_registration event_registration, MPI_T_cb_safety cb_safety,
                                   MPI_Info info, void *user_data, MPI_T_event_cb_function event_cb_function)
{
    static const char fn[] = "MPI_T_event_register_callback";
    MPIT_ENTER(fn);
    (void)info;
    int rc = reg_check(fn, event_registration);
    if (!rc)
        rc = safety_check(fn, cb_safety);
    if (rc)
        return rc;
    int k = safety_slot(cb_safety);
    event_registration->cb[k].fn = event_cb_function; /* NULL takes it off */
    event_registration->cb[k].data = user_data;
    hook_update();
    return MPI_SUCCESS;
}
APTUS_ALIAS(T_event_register_callback)

int PMPI_T_event_callback_set_info(MPI_T_event_registration event_registration, MPI_T_cb_safety cb_safety,
                                   MPI_Info info)
{
    static const char fn[] = "MPI_T_event_callback_set_info";
    MPIT_ENTER(fn);
    (void)info;
    int rc = reg_check(fn, event_registration);
    return rc ? rc : safety_check(fn, cb_safety);
}
APTUS_ALIAS(T_event_callback_set_info)

int PMPI_T_event_callback_get_info(MPI_T_event_registration event_registration, MPI_T_cb_safety cb_safety,
                                   MPI_Info *info_used)
{
    static const char fn[] = "MPI_T_event_callback_get_info";
    APTUS_OUT_NULL(info_used, MPI_INFO_NULL);
    MPIT_ENTER(fn);
    int rc = reg_check(fn, event_registration);
    if (!rc)
        rc = safety_check(fn, cb_safety);
    return rc ? rc : empty_info(fn, info_used);
}
APTUS_ALIAS(T_event_callback_get_info)

int PMPI_T_event_handle_free(MPI_T_event_registration event_registration, void *user_data,
                             MPI_T_event_free_cb_function free_cb_function)
{
    MPIT_ENTER("MPI_T_event_handle_free");
    int rc = reg_check("MPI_T_event_handle_free", event_registration);
    if (rc)
        return rc;
    /* no callback of it runs after this call: a raise under way skips it (its caller is the
     * raising thread itself, in a callback) and unlinks it at the end */
    event_registration->dead = 1;
    if (!raising)
        unlink_dead();
    hook_update();
    if (free_cb_function)
        free_cb_function(event_registration, MPI_T_CB_REQUIRE_NONE, user_data);
    return MPI_SUCCESS;
}
APTUS_ALIAS(T_event_handle_free)

int PMPI_T_event_set_dropped_handler(MPI_T_event_registration event_registration,
                                     MPI_T_event_dropped_cb_function dropped_cb_function)
{
    MPIT_ENTER("MPI_T_event_set_dropped_handler");
    int rc = reg_check("MPI_T_event_set_dropped_handler", event_registration);
    if (rc)
        return rc;
    event_registration->dropped = dropped_cb_function;
    return MPI_SUCCESS;
}
APTUS_ALIAS(T_event_set_dropped_handler)

/* ---- instances (valid inside their callback) --------------------------------------------- */

static int instance_check(const char *fn, MPI_T_event_instance ev)
{
    if (!ev || !raising)
        return aptus_mpit_fail(MPI_T_ERR_INVALID_HANDLE,
                               "%s: %p is not an event instance (an instance lives only during its callback)", fn,
                               (void *)ev);
    return MPI_SUCCESS;
}

int PMPI_T_event_read(MPI_T_event_instance event_instance, int element_index, void *buffer)
{
    MPIT_ENTER("MPI_T_event_read");
    int rc = instance_check("MPI_T_event_read", event_instance);
    if (rc)
        return rc;
    if (element_index < 0 || element_index > 1)
        return aptus_mpit_fail(MPI_T_ERR_INVALID_INDEX, "MPI_T_event_read: element %d of event %s is not in 0..1",
                               element_index, events[event_instance->event].name);
    if (!buffer)
        return aptus_mpit_fail(MPI_T_ERR_INVALID, "MPI_T_event_read: null buffer argument");
    memcpy(buffer, &event_instance->elem[element_index], sizeof(int));
    return MPI_SUCCESS;
}
APTUS_ALIAS(T_event_read)

int PMPI_T_event_copy(MPI_T_event_instance event_instance, void *buffer)
{
    MPIT_ENTER("MPI_T_event_copy");
    int rc = instance_check("MPI_T_event_copy", event_instance);
    if (rc)
        return rc;
    if (!buffer)
        return aptus_mpit_fail(MPI_T_ERR_INVALID, "MPI_T_event_copy: null buffer argument");
    memcpy(buffer, event_instance->elem, sizeof event_instance->elem);
    return MPI_SUCCESS;
}
APTUS_ALIAS(T_event_copy)

int PMPI_T_event_get_timestamp(MPI_T_event_instance event_instance, MPI_Count *event_timestamp)
{
    MPIT_ENTER("MPI_T_event_get_timestamp");
    int rc = instance_check("MPI_T_event_get_timestamp", event_instance);
    if (rc)
        return rc;
    if (!event_timestamp)
        return aptus_mpit_fail(MPI_T_ERR_INVALID, "MPI_T_event_get_timestamp: null event_timestamp argument");
    *event_timestamp = event_instance->stamp;
    return MPI_SUCCESS;
}
APTUS_ALIAS(T_event_get_timestamp)

int PMPI_T_event_get_source(MPI_T_event_instance event_instance, int *source_index)
{
    MPIT_ENTER("MPI_T_event_get_source");
    int rc = instance_check("MPI_T_event_get_source", event_instance);
    if (rc)
        return rc;
    if (!source_index)
        return aptus_mpit_fail(MPI_T_ERR_INVALID, "MPI_T_event_get_source: null source_index argument");
    *source_index = 0;
    return MPI_SUCCESS;
}
APTUS_ALIAS(T_event_get_source)
