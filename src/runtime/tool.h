/* Events for the tool interface (MPI_T_event_*, api/mpit_event.c), raised by the layers below
 * it: one pointer, NULL until a tool registers a callback for some event, so a raise where no
 * tool listens costs a load and a branch not taken, on paths that are not the message path
 * (endpoints opened and closed, routes moved, peers failed). */
#ifndef APTUS_RUNTIME_TOOL_H
#define APTUS_RUNTIME_TOOL_H

#include <stdint.h>

/* The events, in the order the tool interface numbers them. Each carries two numbers. */
enum aptus_tool_event {
    APTUS_TEV_CHANNEL_OPENED, /* a: peer's world rank, b: channel id (channel/rules.h) */
    APTUS_TEV_CHANNEL_CLOSED, /* a: peer's world rank, b: channel id */
    APTUS_TEV_ROUTE_MOVED,    /* a: peer's world rank, b: how far moved (0 back on its chain, 1 small
                                 messages off its connection, 2 every message off the connections) */
    APTUS_TEV_PEER_FAILED,    /* a: peer's world rank, b: the channel that gave up (-1: unknown) */
    APTUS_TEV_COUNT
};

extern void (*aptus_tool_event_fn)(int kind, int64_t a, int64_t b);

static inline void aptus_tool_event(int kind, int64_t a, int64_t b)
{
    void (*fn)(int, int64_t, int64_t) = __atomic_load_n(&aptus_tool_event_fn, __ATOMIC_ACQUIRE);
    if (__builtin_expect(fn != 0, 0))
        fn(kind, a, b);
}

#endif
