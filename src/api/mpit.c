/* The tool interface (MPI 4.1 chapter 15): initialization, control variables (the one
 * configuration table, runtime/config_vars.def), enumerations, categories and the events' source.
 * Performance variables: mpit_pvar.c; events: mpit_event.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/api.h"
#include "api/mpit.h"
#include "channel/rules.h"
#include "coll/nbc.h"
#include "core/errors.h"
#include "runtime/config.h"
#include "runtime/lock.h"
#include "runtime/runtime.h"

int aptus_mpit_refs;

/* ---- strings and names ------------------------------------------------------------------ */

void aptus_mpit_string(const char *s, char *buf, int *len)
{
    if (!len)
        return;
    size_t n = strlen(s);
    if (*len <= 0 || !buf) {
        *len = (int)n + 1;
        return;
    }
    if (n > (size_t)*len - 1)
        n = (size_t)*len - 1;
    memcpy(buf, s, n);
    buf[n] = '\0';
    *len = (int)n + 1;
}

int aptus_mpit_lookup(const char *name, const char *(*name_of)(int i), int n)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(name, name_of(i)))
            return i;
    return -1;
}

/* ---- initialization ---------------------------------------------------------------------- */

int PMPI_T_init_thread(int required, int *provided)
{
    APTUS_API_LOCK();
    if (!provided)
        return aptus_mpit_fail(MPI_T_ERR_INVALID, "MPI_T_init_thread: null provided argument");
    if (required != MPI_THREAD_SINGLE && required != MPI_THREAD_FUNNELED && required != MPI_THREAD_SERIALIZED &&
        required != MPI_THREAD_MULTIPLE)
        return aptus_mpit_fail(MPI_T_ERR_INVALID, "MPI_T_init_thread: %d is not a thread level", required);
    /* Before MPI_Init the variables show what it will read (the tune file and the environment,
     * quietly: MPI_Init reports what is wrong with them). */
    if (!aptus_mpit_refs && !aptus_rt.initialized)
        (void)aptus_config_init_quiet();
    aptus_mpit_refs++;
    *provided = required; /* every level: the tool interface takes the library's lock */
    return MPI_SUCCESS;
}
APTUS_ALIAS(T_init_thread)

int PMPI_T_finalize(void)
{
    MPIT_ENTER("MPI_T_finalize");
    if (--aptus_mpit_refs == 0) {
        aptus_mpit_pvar_finalize();
        aptus_mpit_event_finalize();
    }
    return MPI_SUCCESS;
}
APTUS_ALIAS(T_finalize)

/* ---- categories --------------------------------------------------------------------------- */

static const struct {
    const char *name, *desc;
} cats[MPIT_CAT_COUNT] = {
    [MPIT_CAT_CHANNELS] = { "channels", "Channel choice (send and allocation rules), per-peer and per-channel "
                                        "traffic, channel memory, statistics, endpoints and routes (events)" },
    [MPIT_CAT_SMP] = { "smp", "The shared-memory channel (Veloblock fast path, Cross Memory Attach)" },
    [MPIT_CAT_PT2PT] = { "pt2pt", "The message layer: rendezvous protocols and the matching queues" },
    [MPIT_CAT_UD] = { "ud", "The UD channels and their reliability engine" },
    [MPIT_CAT_RC] = { "rc", "The RC channels (send/receive, fast path, RDMA) and the registration cache" },
    [MPIT_CAT_FABRIC] = { "fabric", "The network layer (libfabric providers and interfaces)" },
    [MPIT_CAT_COLL] = { "coll", "Collective algorithms and their thresholds" },
    [MPIT_CAT_PROGRESS] = { "progress", "Waiting, polling and the progress thread" },
    [MPIT_CAT_RMA] = { "rma", "One-sided communication" },
};

static const char *cat_name(int i)
{
    return cats[i].name;
}

/* ---- control variables -------------------------------------------------------------------- */

static const struct aptus_cvar_desc *cvars(int *n)
{
    return aptus_config_table(n);
}

static const char *cvar_name(int i)
{
    return cvars(NULL)[i].name;
}

static int cvar_category(int i)
{
    static const struct {
        const char *prefix;
        int cat;
    } by_prefix[] = {
        { "APTUS_SMP_", MPIT_CAT_SMP },        { "APTUS_RNDV_", MPIT_CAT_PT2PT },
        { "APTUS_UD_", MPIT_CAT_UD },          { "APTUS_CRC", MPIT_CAT_UD },
        { "APTUS_PEER_TIMEOUT", MPIT_CAT_UD }, { "APTUS_RC", MPIT_CAT_RC },
        { "APTUS_FABRIC_", MPIT_CAT_FABRIC },  { "APTUS_COLL_", MPIT_CAT_COLL },
        { "APTUS_ASYNC_", MPIT_CAT_PROGRESS }, { "APTUS_SPIN_", MPIT_CAT_PROGRESS },
        { "APTUS_WAIT_", MPIT_CAT_PROGRESS },  { "APTUS_YIELD_", MPIT_CAT_PROGRESS },
        { "APTUS_RMA_", MPIT_CAT_RMA },
    };
    const char *name = cvar_name(i);
    for (size_t k = 0; k < sizeof by_prefix / sizeof by_prefix[0]; k++)
        if (!strncmp(name, by_prefix[k].prefix, strlen(by_prefix[k].prefix)))
            return by_prefix[k].cat;
    return MPIT_CAT_CHANNELS;
}

/* Which variables the library honours when they change while it runs (read at each use): the
 * collectives' choices, equal at every rank of a communicator by the collectives' own rule
 * (ALL_EQ), and the wait's spin. Every other one is read once at start-up: READONLY. */
static int cvar_scope(int i)
{
    const char *name = cvar_name(i);
    if (!strncmp(name, "APTUS_COLL_", 11))
        return MPI_T_SCOPE_ALL_EQ;
    if (!strcmp(name, "APTUS_SPIN_COUNT"))
        return MPI_T_SCOPE_LOCAL;
    return MPI_T_SCOPE_READONLY;
}

static int cvar_verbosity(int i)
{
    const char *name = cvar_name(i);
    static const char *const basic[] = { "APTUS_STATS", "APTUS_STATS_FILE", "APTUS_SEND_RULES", "APTUS_TUNE_FILE",
                                         "APTUS_ASYNC_PROGRESS" };
    for (size_t k = 0; k < sizeof basic / sizeof basic[0]; k++)
        if (!strcmp(name, basic[k]))
            return MPI_T_VERBOSITY_USER_BASIC;
    if (!strncmp(name, "APTUS_COLL_", 11) || strstr(name, "_EAGER_MAX"))
        return MPI_T_VERBOSITY_TUNER_BASIC;
    return MPI_T_VERBOSITY_TUNER_DETAIL;
}

static MPI_Datatype cvar_datatype(int i)
{
    switch (cvars(NULL)[i].type) {
    case APTUS_CVAR_SIZE: return MPI_UNSIGNED_LONG_LONG;
    case APTUS_CVAR_STRING: return MPI_CHAR;
    default: return MPI_INT; /* bool, int, and an enum's item */
    }
}

/* The enumerations of the enum variables, made from their ranges' words at the first look. */
static struct {
    struct MPI_ABI_T_enum e;
    char *words; /* the items' text, each null-terminated */
    const char **items;
} * cvar_enums;
static int ncvar_enums_made;

static struct MPI_ABI_T_enum *cvar_enum(int i)
{
    int n;
    const struct aptus_cvar_desc *t = cvars(&n);
    if (t[i].type != APTUS_CVAR_ENUM)
        return NULL;
    if (!cvar_enums) {
        cvar_enums = calloc((size_t)n, sizeof *cvar_enums);
        if (!cvar_enums)
            return NULL;
        ncvar_enums_made = n;
    }
    if (cvar_enums[i].items)
        return &cvar_enums[i].e;
    struct aptus_cvar_range r;
    char err[256];
    if (aptus_config_range(i, &r, err, sizeof err) != 0 || r.n <= 0)
        return NULL;
    size_t bytes = 0;
    for (int k = 0; k < r.n; k++)
        bytes += r.word[k].len + 1;
    char *w = malloc(bytes);
    const char **items = malloc((size_t)r.n * sizeof *items);
    if (!w || !items) {
        free(w);
        free(items);
        return NULL;
    }
    char *p = w;
    for (int k = 0; k < r.n; k++) {
        memcpy(p, t[i].range + r.word[k].off, r.word[k].len);
        p[r.word[k].len] = '\0';
        items[k] = p;
        p += r.word[k].len + 1;
    }
    cvar_enums[i].words = w;
    cvar_enums[i].items = items;
    cvar_enums[i].e = (struct MPI_ABI_T_enum){ t[i].name, r.n, (const char *const *)items, NULL };
    return &cvar_enums[i].e;
}

/* The item of an enum variable's current value. */
static int cvar_enum_item(int i, const char *value)
{
    struct MPI_ABI_T_enum *e = cvar_enum(i);
    for (int k = 0; e && value && k < e->n; k++)
        if (!strcasecmp(e->items[k], value))
            return k;
    return -1;
}

int PMPI_T_cvar_get_num(int *num_cvar)
{
    MPIT_ENTER("MPI_T_cvar_get_num");
    if (!num_cvar)
        return aptus_mpit_fail(MPI_T_ERR_INVALID, "MPI_T_cvar_get_num: null num_cvar argument");
    cvars(num_cvar);
    return MPI_SUCCESS;
}
APTUS_ALIAS(T_cvar_get_num)

static int cvar_index_check(const char *fn, int i)
{
    int n;
    cvars(&n);
    if (i < 0 || i >= n)
        return aptus_mpit_fail(MPI_T_ERR_INVALID_INDEX, "%s: control variable index %d is not in 0..%d", fn, i, n - 1);
    return MPI_SUCCESS;
}

int PMPI_T_cvar_get_info(int cvar_index, char *name, int *name_len, int *verbosity, MPI_Datatype *datatype,
                         MPI_T_enum *enumtype, char *desc, int *desc_len, int *bind, int *scope)
{
    MPIT_ENTER("MPI_T_cvar_get_info");
    int rc = cvar_index_check("MPI_T_cvar_get_info", cvar_index);
    if (rc)
        return rc;
    const struct aptus_cvar_desc *d = &cvars(NULL)[cvar_index];
    aptus_mpit_string(d->name, name, name_len);
    if (verbosity)
        *verbosity = cvar_verbosity(cvar_index);
    if (datatype)
        *datatype = cvar_datatype(cvar_index);
    if (enumtype) {
        struct MPI_ABI_T_enum *e = cvar_enum(cvar_index);
        *enumtype = e ? e : MPI_T_ENUM_NULL;
    }
    if (desc_len) {
        char text[2048];
        snprintf(text, sizeof text, "%s (values: %s; default: %s)", d->description, d->range ? d->range : "any",
                 d->default_text);
        aptus_mpit_string(text, desc, desc_len);
    }
    if (bind)
        *bind = MPI_T_BIND_NO_OBJECT;
    if (scope)
        *scope = cvar_scope(cvar_index);
    return MPI_SUCCESS;
}
APTUS_ALIAS(T_cvar_get_info)

int PMPI_T_cvar_get_index(const char *name, int *cvar_index)
{
    MPIT_ENTER("MPI_T_cvar_get_index");
    if (!name || !cvar_index)
        return aptus_mpit_fail(MPI_T_ERR_INVALID, "MPI_T_cvar_get_index: null %s argument",
                               name ? "cvar_index" : "name");
    int n;
    cvars(&n);
    int i = aptus_mpit_lookup(name, cvar_name, n);
    if (i < 0)
        return aptus_mpit_fail(MPI_T_ERR_INVALID_NAME, "MPI_T_cvar_get_index: no control variable is named '%s'", name);
    *cvar_index = i;
    return MPI_SUCCESS;
}
APTUS_ALIAS(T_cvar_get_index)

/* Handles: kept in a list, so that a handle that is not one (freed, of another kind, garbage)
 * is found without reading what it points at. */
struct MPI_ABI_T_cvar_handle {
    struct MPI_ABI_T_cvar_handle *next;
    int index, count;
};
static struct MPI_ABI_T_cvar_handle *cvar_handles;

static int cvar_handle_check(const char *fn, MPI_T_cvar_handle h)
{
    for (struct MPI_ABI_T_cvar_handle *x = cvar_handles; x; x = x->next)
        if (x == h)
            return MPI_SUCCESS;
    return aptus_mpit_fail(MPI_T_ERR_INVALID_HANDLE, "%s: %p is not a control variable handle (freed, or another kind)",
                           fn, (void *)h);
}

int PMPI_T_cvar_handle_alloc(int cvar_index, void *obj_handle, MPI_T_cvar_handle *handle, int *count)
{
    APTUS_OUT_NULL(handle, MPI_T_CVAR_HANDLE_NULL);
    MPIT_ENTER("MPI_T_cvar_handle_alloc");
    (void)obj_handle; /* every control variable is bound to no object */
    int rc = cvar_index_check("MPI_T_cvar_handle_alloc", cvar_index);
    if (rc)
        return rc;
    if (!handle || !count)
        return aptus_mpit_fail(MPI_T_ERR_INVALID, "MPI_T_cvar_handle_alloc: null %s argument",
                               handle ? "count" : "handle");
    struct MPI_ABI_T_cvar_handle *h = calloc(1, sizeof *h);
    if (!h)
        return aptus_mpit_fail(MPI_T_ERR_MEMORY, "MPI_T_cvar_handle_alloc: out of memory");
    h->index = cvar_index;
    h->count = 1;
    if (cvars(NULL)[cvar_index].type == APTUS_CVAR_STRING) {
        int64_t v;
        const char *s;
        aptus_config_read(cvar_index, &v, &s);
        h->count = (int)strlen(s ? s : "") + 1;
    }
    h->next = cvar_handles;
    cvar_handles = h;
    *handle = h;
    *count = h->count;
    return MPI_SUCCESS;
}
APTUS_ALIAS(T_cvar_handle_alloc)

int PMPI_T_cvar_handle_free(MPI_T_cvar_handle *handle)
{
    MPIT_ENTER("MPI_T_cvar_handle_free");
    if (!handle)
        return aptus_mpit_fail(MPI_T_ERR_INVALID, "MPI_T_cvar_handle_free: null handle argument");
    int rc = cvar_handle_check("MPI_T_cvar_handle_free", *handle);
    if (rc)
        return rc;
    for (struct MPI_ABI_T_cvar_handle **pp = &cvar_handles; *pp; pp = &(*pp)->next)
        if (*pp == *handle) {
            *pp = (*handle)->next;
            break;
        }
    free(*handle);
    *handle = MPI_T_CVAR_HANDLE_NULL;
    return MPI_SUCCESS;
}
APTUS_ALIAS(T_cvar_handle_free)

int PMPI_T_cvar_read(MPI_T_cvar_handle handle, void *buf)
{
    MPIT_ENTER("MPI_T_cvar_read");
    int rc = cvar_handle_check("MPI_T_cvar_read", handle);
    if (rc)
        return rc;
    if (!buf)
        return aptus_mpit_fail(MPI_T_ERR_INVALID, "MPI_T_cvar_read: null buf argument");
    int i = handle->index;
    int64_t v;
    const char *s;
    aptus_config_read(i, &v, &s);
    switch (cvars(NULL)[i].type) {
    case APTUS_CVAR_SIZE: {
        unsigned long long u = (unsigned long long)v;
        memcpy(buf, &u, sizeof u);
        break;
    }
    case APTUS_CVAR_STRING: {
        int len = handle->count;
        aptus_mpit_string(s ? s : "", buf, &len);
        break;
    }
    case APTUS_CVAR_ENUM: {
        int k = cvar_enum_item(i, s);
        memcpy(buf, &k, sizeof k);
        break;
    }
    default: {
        int x = (int)v;
        memcpy(buf, &x, sizeof x);
        break;
    }
    }
    return MPI_SUCCESS;
}
APTUS_ALIAS(T_cvar_read)

int PMPI_T_cvar_write(MPI_T_cvar_handle handle, const void *buf)
{
    static const char fn[] = "MPI_T_cvar_write";
    MPIT_ENTER(fn);
    int rc = cvar_handle_check(fn, handle);
    if (rc)
        return rc;
    if (!buf)
        return aptus_mpit_fail(MPI_T_ERR_INVALID, "%s: null buf argument", fn);
    int i = handle->index;
    const struct aptus_cvar_desc *d = &cvars(NULL)[i];
    if (cvar_scope(i) == MPI_T_SCOPE_READONLY)
        return aptus_mpit_fail(MPI_T_ERR_CVAR_SET_NEVER,
                               "%s: %s is read once at start-up (scope MPI_T_SCOPE_READONLY): set it in the "
                               "environment or the tune file",
                               fn, d->name);
    char text[64];
    switch (d->type) {
    case APTUS_CVAR_SIZE: {
        unsigned long long u;
        memcpy(&u, buf, sizeof u);
        snprintf(text, sizeof text, "%llu", u);
        break;
    }
    case APTUS_CVAR_ENUM: {
        int k;
        memcpy(&k, buf, sizeof k);
        struct MPI_ABI_T_enum *e = cvar_enum(i);
        if (!e || k < 0 || k >= e->n)
            return aptus_mpit_fail(MPI_T_ERR_INVALID, "%s: %d is not an item of %s's enumeration (0..%d)", fn, k,
                                   d->name, e ? e->n - 1 : -1);
        snprintf(text, sizeof text, "%s", e->items[k]);
        break;
    }
    case APTUS_CVAR_STRING: return aptus_mpit_fail(MPI_T_ERR_CVAR_SET_NEVER, "%s: %s cannot be written", fn, d->name);
    default: {
        int x;
        memcpy(&x, buf, sizeof x);
        snprintf(text, sizeof text, "%d", x);
        break;
    }
    }
    char err[512];
    if (aptus_config_write(i, text, err, sizeof err) != 0)
        return aptus_mpit_fail(MPI_T_ERR_INVALID, "%s: %s", fn, err);
    /* the nonblocking collectives' schedules cached so far were recorded under the old choice:
     * dropped, the next call records anew (a running one finishes as it is) */
    if (!strncmp(d->name, "APTUS_COLL_", 11))
        aptus_nbc_cache_drain();
    return MPI_SUCCESS;
}
APTUS_ALIAS(T_cvar_write)

/* ---- enumerations -------------------------------------------------------------------------- */

static const char *const channel_names[APTUS_CH_COUNT] = {
    [APTUS_CH_SELF] = "self",         [APTUS_CH_SMP] = "smp",         [APTUS_CH_UD_SR] = "ud-sr",
    [APTUS_CH_UD_ZCOPY] = "ud-zcopy", [APTUS_CH_UD_COPY] = "ud-copy", [APTUS_CH_RC_SR] = "rc-sr",
    [APTUS_CH_RC_FP] = "rc-fp",       [APTUS_CH_RC_RDMA] = "rc-rdma",
};
struct MPI_ABI_T_enum aptus_mpit_channel_enum = { "aptus_channel", APTUS_CH_COUNT, channel_names, NULL };
static const char *const move_levels[] = { "on_chain", "small_off_connection", "off_connections" };
struct MPI_ABI_T_enum aptus_mpit_move_enum = { "aptus_route_move", 3, move_levels, NULL };

int aptus_mpit_enum_valid(MPI_T_enum e)
{
    if (e == &aptus_mpit_channel_enum || e == &aptus_mpit_move_enum)
        return 1;
    for (int i = 0; cvar_enums && i < ncvar_enums_made; i++)
        if (cvar_enums[i].items && e == &cvar_enums[i].e)
            return 1;
    return 0;
}

static int enum_check(const char *fn, MPI_T_enum e)
{
    if (e == MPI_T_ENUM_NULL || !aptus_mpit_enum_valid(e))
        return aptus_mpit_fail(MPI_T_ERR_INVALID_HANDLE, "%s: %p is not an enumeration of this library", fn, (void *)e);
    return MPI_SUCCESS;
}

int PMPI_T_enum_get_info(MPI_T_enum enumtype, int *num, char *name, int *name_len)
{
    MPIT_ENTER("MPI_T_enum_get_info");
    int rc = enum_check("MPI_T_enum_get_info", enumtype);
    if (rc)
        return rc;
    if (num)
        *num = enumtype->n;
    aptus_mpit_string(enumtype->name, name, name_len);
    return MPI_SUCCESS;
}
APTUS_ALIAS(T_enum_get_info)

int PMPI_T_enum_get_item(MPI_T_enum enumtype, int index, int *value, char *name, int *name_len)
{
    MPIT_ENTER("MPI_T_enum_get_item");
    int rc = enum_check("MPI_T_enum_get_item", enumtype);
    if (rc)
        return rc;
    if (index < 0 || index >= enumtype->n)
        return aptus_mpit_fail(MPI_T_ERR_INVALID_ITEM, "MPI_T_enum_get_item: item %d of %s is not in 0..%d", index,
                               enumtype->name, enumtype->n - 1);
    if (value)
        *value = enumtype->values ? enumtype->values[index] : index;
    aptus_mpit_string(enumtype->items[index], name, name_len);
    return MPI_SUCCESS;
}
APTUS_ALIAS(T_enum_get_item)

/* ---- categories ----------------------------------------------------------------------------- */

int PMPI_T_category_get_num(int *num_cat)
{
    MPIT_ENTER("MPI_T_category_get_num");
    if (!num_cat)
        return aptus_mpit_fail(MPI_T_ERR_INVALID, "MPI_T_category_get_num: null num_cat argument");
    *num_cat = MPIT_CAT_COUNT;
    return MPI_SUCCESS;
}
APTUS_ALIAS(T_category_get_num)

static int cat_check(const char *fn, int i)
{
    if (i < 0 || i >= MPIT_CAT_COUNT)
        return aptus_mpit_fail(MPI_T_ERR_INVALID_INDEX, "%s: category index %d is not in 0..%d", fn, i,
                               MPIT_CAT_COUNT - 1);
    return MPI_SUCCESS;
}

/* The members of category cat among n items whose category is cat_of(i): how many, and the
 * first len of their indices into out (out may be NULL). */
static int cat_members(int cat, int n, int (*cat_of)(int i), int len, int *out)
{
    int k = 0;
    for (int i = 0; i < n; i++)
        if (cat_of(i) == cat) {
            if (out && k < len)
                out[k] = i;
            k++;
        }
    return k;
}

static int ncvars(void)
{
    int n;
    cvars(&n);
    return n;
}

int PMPI_T_category_get_info(int cat_index, char *name, int *name_len, char *desc, int *desc_len, int *num_cvars,
                             int *num_pvars, int *num_categories)
{
    MPIT_ENTER("MPI_T_category_get_info");
    int rc = cat_check("MPI_T_category_get_info", cat_index);
    if (rc)
        return rc;
    aptus_mpit_string(cats[cat_index].name, name, name_len);
    aptus_mpit_string(cats[cat_index].desc, desc, desc_len);
    if (num_cvars)
        *num_cvars = cat_members(cat_index, ncvars(), cvar_category, 0, NULL);
    if (num_pvars)
        *num_pvars = cat_members(cat_index, aptus_mpit_pvar_num(), aptus_mpit_pvar_category, 0, NULL);
    if (num_categories)
        *num_categories = 0;
    return MPI_SUCCESS;
}
APTUS_ALIAS(T_category_get_info)

int PMPI_T_category_get_num_events(int cat_index, int *num_events)
{
    MPIT_ENTER("MPI_T_category_get_num_events");
    int rc = cat_check("MPI_T_category_get_num_events", cat_index);
    if (rc)
        return rc;
    if (!num_events)
        return aptus_mpit_fail(MPI_T_ERR_INVALID, "MPI_T_category_get_num_events: null num_events argument");
    *num_events = cat_members(cat_index, aptus_mpit_event_num(), aptus_mpit_event_category, 0, NULL);
    return MPI_SUCCESS;
}
APTUS_ALIAS(T_category_get_num_events)

int PMPI_T_category_get_index(const char *name, int *cat_index)
{
    MPIT_ENTER("MPI_T_category_get_index");
    if (!name || !cat_index)
        return aptus_mpit_fail(MPI_T_ERR_INVALID, "MPI_T_category_get_index: null %s argument",
                               name ? "cat_index" : "name");
    int i = aptus_mpit_lookup(name, cat_name, MPIT_CAT_COUNT);
    if (i < 0)
        return aptus_mpit_fail(MPI_T_ERR_INVALID_NAME, "MPI_T_category_get_index: no category is named '%s'", name);
    *cat_index = i;
    return MPI_SUCCESS;
}
APTUS_ALIAS(T_category_get_index)

/* The four member lists: a negative len or a null array with a positive len is refused. */
static int cat_list(const char *fn, int cat_index, int len, int *indices, int n, int (*cat_of)(int))
{
    int rc = cat_check(fn, cat_index);
    if (rc)
        return rc;
    if (len < 0 || (len > 0 && !indices))
        return aptus_mpit_fail(MPI_T_ERR_INVALID, "%s: len %d with %s indices array", fn, len,
                               indices ? "an" : "a null");
    if (n > 0)
        cat_members(cat_index, n, cat_of, len, indices);
    return MPI_SUCCESS;
}

int PMPI_T_category_get_cvars(int cat_index, int len, int indices[])
{
    MPIT_ENTER("MPI_T_category_get_cvars");
    return cat_list("MPI_T_category_get_cvars", cat_index, len, indices, ncvars(), cvar_category);
}
APTUS_ALIAS(T_category_get_cvars)

int PMPI_T_category_get_pvars(int cat_index, int len, int indices[])
{
    MPIT_ENTER("MPI_T_category_get_pvars");
    return cat_list("MPI_T_category_get_pvars", cat_index, len, indices, aptus_mpit_pvar_num(),
                    aptus_mpit_pvar_category);
}
APTUS_ALIAS(T_category_get_pvars)

int PMPI_T_category_get_events(int cat_index, int len, int indices[])
{
    MPIT_ENTER("MPI_T_category_get_events");
    return cat_list("MPI_T_category_get_events", cat_index, len, indices, aptus_mpit_event_num(),
                    aptus_mpit_event_category);
}
APTUS_ALIAS(T_category_get_events)

int PMPI_T_category_get_categories(int cat_index, int len, int indices[])
{
    MPIT_ENTER("MPI_T_category_get_categories");
    return cat_list("MPI_T_category_get_categories", cat_index, len, indices, 0, NULL); /* none has any */
}
APTUS_ALIAS(T_category_get_categories)

int PMPI_T_category_changed(int *update_number)
{
    MPIT_ENTER("MPI_T_category_changed");
    if (!update_number)
        return aptus_mpit_fail(MPI_T_ERR_INVALID, "MPI_T_category_changed: null update_number argument");
    *update_number = 0; /* the variables, events and categories are fixed for the process's life */
    return MPI_SUCCESS;
}
APTUS_ALIAS(T_category_changed)

/* ---- the events' source ------------------------------------------------------------------- */

MPI_Count aptus_mpit_ticks(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (MPI_Count)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int PMPI_T_source_get_num(int *num_sources)
{
    MPIT_ENTER("MPI_T_source_get_num");
    if (!num_sources)
        return aptus_mpit_fail(MPI_T_ERR_INVALID, "MPI_T_source_get_num: null num_sources argument");
    *num_sources = 1;
    return MPI_SUCCESS;
}
APTUS_ALIAS(T_source_get_num)

int PMPI_T_source_get_info(int source_index, char *name, int *name_len, char *desc, int *desc_len,
                           MPI_T_source_order *ordering, MPI_Count *ticks_per_second, MPI_Count *max_ticks,
                           MPI_Info *info)
{
    APTUS_OUT_NULL(info, MPI_INFO_NULL);
    MPIT_ENTER("MPI_T_source_get_info");
    if (source_index != 0)
        return aptus_mpit_fail(MPI_T_ERR_INVALID_INDEX, "MPI_T_source_get_info: source index %d is not 0",
                               source_index);
    aptus_mpit_string("aptus", name, name_len);
    aptus_mpit_string("The library itself: events are raised, in order, by the thread that holds the library's lock "
                      "(timestamps: nanoseconds of CLOCK_MONOTONIC)",
                      desc, desc_len);
    if (ordering)
        *ordering = MPI_T_SOURCE_ORDERED;
    if (ticks_per_second)
        *ticks_per_second = 1000000000;
    if (max_ticks)
        *max_ticks = (MPI_Count)INT64_MAX;
    return MPI_SUCCESS;
}
APTUS_ALIAS(T_source_get_info)

int PMPI_T_source_get_timestamp(int source_index, MPI_Count *timestamp)
{
    MPIT_ENTER("MPI_T_source_get_timestamp");
    if (source_index != 0)
        return aptus_mpit_fail(MPI_T_ERR_INVALID_INDEX, "MPI_T_source_get_timestamp: source index %d is not 0",
                               source_index);
    if (!timestamp)
        return aptus_mpit_fail(MPI_T_ERR_INVALID, "MPI_T_source_get_timestamp: null timestamp argument");
    *timestamp = aptus_mpit_ticks();
    return MPI_SUCCESS;
}
APTUS_ALIAS(T_source_get_timestamp)
