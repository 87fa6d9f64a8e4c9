/* The RC channels (src/channel/rc/): what other channels call. */
#ifndef APTUS_CHANNEL_RC_RC_H
#define APTUS_CHANNEL_RC_RC_H

struct aptus_peer;

#ifdef APTUS_HAVE_LIBFABRIC
/* Nonzero while RC connections are up: the UD channel then reads its completion queue only
 * when its descriptor says something is there (one poll instead of a receive attempt on
 * every endpoint), since most traffic has moved to the connections. */
extern int aptus_rc_connected;

/* A frame went to or came from this peer over UD: it counts toward asking for a connection
 * (APTUS_RC_THRESHOLD). Cheap when rc-sr is not in use. */
void aptus_rc_note(struct aptus_peer *p);
#else
static inline void aptus_rc_note(struct aptus_peer *p)
{
    (void)p;
}
#endif

#endif
