/* The RC channels (src/channel/rc/): what other channels call. */
#ifndef APTUS_CHANNEL_RC_RC_H
#define APTUS_CHANNEL_RC_RC_H

#ifdef APTUS_HAVE_LIBFABRIC
/* Nonzero while RC connections are up: the UD channel then reads its completion queue only
 * when its descriptor says something is there (one poll instead of a receive attempt on
 * every endpoint), since most traffic has moved to the connections. */
extern int aptus_rc_connected;

/* Whether a send rule names an RC channel that some peer may take (the same answer on every
 * rank; known once the rules are parsed). */
int aptus_rc_wanted(void);
#endif

#endif
