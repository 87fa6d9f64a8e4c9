/* The channel layer's part of the statistics document (APTUS_STATS_FILE; the schema is in
 * docs/STATS.md): what the `[aptus stats]` lines of the channels print, as JSON members of the
 * caller's open object. Each writer writes nothing for a channel that is not active. */
#ifndef APTUS_CHANNEL_STATS_JSON_H
#define APTUS_CHANNEL_STATS_JSON_H

struct aptus_json;
struct aptus_peer;

/* "channels_in_build", "memory", "totals", "peers" (one object per peer this rank has a record
 * of: its messages and bytes per channel, its route, its RC connection and UD link, then what
 * peer_extra adds -- the message layer's protocol counts --), "channels" (each active channel's
 * own statistics), "reliability" (the UD reliability engine), "routes_moved" (peers moved off
 * their connections) and "faults" (APTUS_CHANNEL_FAULTS). peer_extra may be NULL. */
void aptus_channel_stats_json(struct aptus_json *j,
                              void (*peer_extra)(struct aptus_json *j, const struct aptus_peer *p));

/* The channels' own writers, called by aptus_channel_stats_json. */
void aptus_fault_stats_json(struct aptus_json *j); /* "faults" */
#ifdef APTUS_HAVE_LIBFABRIC
void aptus_ud_stats_json(struct aptus_json *j);          /* "ud-sr" (ud/ud_json.c) */
void aptus_ud_reliability_json(struct aptus_json *j);    /* "reliability" (ud/ud_json.c) */
void aptus_ud_peer_json(struct aptus_json *j, int rank); /* "ud" of a peer (ud/ud_json.c) */
void aptus_udz_stats_json(struct aptus_json *j);         /* "ud-zcopy" (ud/ud_zcopy.c) */
void aptus_udl_stats_json(struct aptus_json *j);         /* "ud_loss" (ud/ud_loss.c) */
void aptus_rc_stats_json(struct aptus_json *j);          /* "rc-sr" (rc/rc.c) */
void aptus_rc_peer_json(struct aptus_json *j, int rank); /* "rc" of a peer (rc/rc.c) */
void aptus_rcs_stats_json(struct aptus_json *j);         /* "rc_stall" (rc/rc_stall.c) */
void aptus_rcr_stats_json(struct aptus_json *j);         /* "rc-rdma" (rc/rc_rdma.c) */
void aptus_rcfp_stats_json(struct aptus_json *j);        /* "rc-fp" (rc/rc_fp.c) */
#endif

#endif
