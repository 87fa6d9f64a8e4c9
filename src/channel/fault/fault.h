/* Fault injection for testing the layers above the channels (APTUS_CHANNEL_FAULTS, e.g.
 * "noroom=0.3,delay=0.3,seed=7"). When set, the registry hands every channel to
 * aptus_fault_wrap after its init: its frame sends are replaced by wrappers that refuse room
 * (APTUS_NORES) with probability `noroom`, and with probability `delay` keep a copy of the frame
 * and report it sent, to send it later, in a random order, from a poller of the progress engine
 * and from later sends (so frames overtake each other; the channel then no longer advertises
 * APTUS_CAP_ORDERED). When unset, nothing is wrapped: the channel tables are used as they are. */
#ifndef APTUS_CHANNEL_FAULT_FAULT_H
#define APTUS_CHANNEL_FAULT_FAULT_H

#include <stddef.h>

struct aptus_channel;

/* Checks the setting (APTUS_CHANNEL_FAULTS) without applying it, at start-up: 0, or -1 with a
 * message in err. */
int aptus_fault_check(char *err, size_t errlen);
/* Wraps ch's frame sends when faults are configured (parsing the setting on first use).
 * Returns 0, or -1 after printing why (a malformed setting: the job cannot start). */
int aptus_fault_wrap(struct aptus_channel *ch);
/* Stops injecting and sends every frame still held, progressing until all are out (MPI_Finalize,
 * before the endpoints close: a held frame has been reported sent, and a peer may wait for it). */
void aptus_fault_drain(void);
/* With APTUS_STATS: "[aptus stats] rank R: faults: refused N, delayed M, overtaken K (LABEL)",
 * LABEL `injected` when every configured kind of fault happened on this rank (refusals for
 * noroom, delays and overtaking for delay), else `not all injected`. Nothing when faults are off. */
void aptus_fault_stats_print(void);

#endif
