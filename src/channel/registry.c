/* The registry of channels (channels.def) and of frame handlers. */
#include <stdio.h>
#include <string.h>

#include "channel/channel.h"
#include "channel/fault/fault.h"
#include "core/errors.h"
#include "runtime/progress.h"

#define APTUS_CHANNEL(table) extern struct aptus_channel table;
#include "channel/channels.def"
#undef APTUS_CHANNEL

static struct aptus_channel *const registry[] = {
#define APTUS_CHANNEL(table) &table,
#include "channel/channels.def"
#undef APTUS_CHANNEL
};
#define NREGISTERED ((int)(sizeof registry / sizeof registry[0]))

struct aptus_channel *aptus_channels[APTUS_CH_COUNT];
static int poller_of[APTUS_CH_COUNT];

const char *aptus_channels_available(void)
{
    static char names[128];
    names[0] = 0;
    for (int i = 0; i < NREGISTERED; i++) {
        size_t used = strlen(names);
        snprintf(names + used, sizeof names - used, "%s%s", i ? ", " : "", registry[i]->name);
    }
    return names;
}

int aptus_channels_check(char *err, size_t errlen)
{
    if (aptus_fault_check(err, errlen) != 0)
        return -1;
    for (int i = 0; i < NREGISTERED; i++)
        if (registry[i]->check && registry[i]->check(err, errlen) != 0)
            return -1;
    return 0;
}

int aptus_channels_init(void)
{
    for (int i = 0; i < NREGISTERED; i++) {
        struct aptus_channel *ch = registry[i];
        ch->id = aptus_channel_id_of(ch->name);
        if (ch->id < 0) {
            fprintf(stderr, "Aptus MPI: channel '%s' has no name in the send rule grammar\n", ch->name);
            return -1;
        }
        if (ch->cleanup && aptus_cleanup_add(ch->cleanup) != 0)
            return -1;
        poller_of[ch->id] = ch->progress ? aptus_poller_add(ch->name, ch->progress, 0) : -1;
        aptus_channels[ch->id] = ch;
        if (ch->init && ch->init() != APTUS_OK)
            return -1;
        if (aptus_fault_wrap(ch) != 0) /* APTUS_CHANNEL_FAULTS (testing); nothing when unset */
            return -1;
    }
    return 0;
}

void aptus_channels_finalize(void)
{
    for (int i = NREGISTERED - 1; i >= 0; i--) {
        struct aptus_channel *ch = registry[i];
        if (ch->finalize)
            ch->finalize();
        aptus_channels[ch->id] = NULL;
    }
}

void aptus_channels_quiesce(void)
{
    for (int i = 0; i < NREGISTERED; i++)
        if (registry[i]->quiesce)
            registry[i]->quiesce();
}

void aptus_channel_poll_enable(const struct aptus_channel *ch, int on)
{
    aptus_poller_enable(poller_of[ch->id], on);
}

void (*aptus_alloc_hook)(struct aptus_peer *p, uint64_t bytes);
uint64_t aptus_alloc_min;

/* ---- notes of put_notify ---- */

static void note_unexpected(uint64_t note)
{
    char msg[128];
    snprintf(msg, sizeof msg, "a one-sided write's note (0x%llx) arrived with no handler for it",
             (unsigned long long)note);
    aptus_abort_job(MPI_ERR_INTERN, msg);
}

static void (*note_handler)(uint64_t note) = note_unexpected;

void aptus_rdma_note_handler_set(void (*fn)(uint64_t note))
{
    note_handler = fn ? fn : note_unexpected;
}

void aptus_rdma_noted(uint64_t note)
{
    note_handler(note);
}

/* ---- frame handlers ---- */

static void am_unknown(struct aptus_peer *from, const void *frame, size_t len)
{
    char msg[128];
    snprintf(msg, sizeof msg, "corrupt frame of type %u (%zu bytes) from rank %d", *(const uint8_t *)frame, len,
             from->world_rank);
    aptus_abort_job(MPI_ERR_INTERN, msg);
}

#define AM_DEFAULT8 am_unknown, am_unknown, am_unknown, am_unknown, am_unknown, am_unknown, am_unknown, am_unknown
#define AM_DEFAULT64                                                                                                   \
    AM_DEFAULT8, AM_DEFAULT8, AM_DEFAULT8, AM_DEFAULT8, AM_DEFAULT8, AM_DEFAULT8, AM_DEFAULT8, AM_DEFAULT8
aptus_am_handler aptus_am_table[256] = { AM_DEFAULT64, AM_DEFAULT64, AM_DEFAULT64, AM_DEFAULT64 };

void aptus_am_register(uint8_t type, aptus_am_handler fn)
{
    aptus_am_table[type] = fn ? fn : am_unknown;
}
