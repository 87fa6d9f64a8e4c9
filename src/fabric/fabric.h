/* The fabric layer: libfabric endpoints for the network channels, written once against
 * libfabric and nothing provider-specific beyond what fi_getinfo reports.
 *
 * A datagram endpoint (FI_EP_DGRAM: an InfiniBand UD queue pair under verbs, real UDP sockets
 * under the udp provider) with its address vector and a completion queue that has a wait
 * object; address exchange by business card through PMI (one card per rank, published at
 * start-up and read on first contact: no all-to-all lookup); address-vector insertion on first
 * contact. What the provider asks of its user is handled generically:
 *   - FI_MSG_PREFIX (verbs UD): `prefix` bytes in front of every send and receive buffer;
 *   - FI_CONTEXT / FI_CONTEXT2: every operation's context is a struct aptus_fab_ctx that stays
 *     ours until its completion (we always pass one, so both modes are met);
 *   - FI_MR_LOCAL: buffers given to send/receive are registered (aptus_fab_mr_reg) and their
 *     descriptor passed; FI_MR_ENDPOINT: the region is bound to the endpoint and enabled;
 *     FI_MR_ALLOCATED / FI_MR_VIRT_ADDR / FI_MR_PROV_KEY matter for RMA (the RC channels) and
 *     are recorded here for them.
 * Built only with libfabric (APTUS_HAVE_LIBFABRIC); without it there is no network channel. */
#ifndef APTUS_FABRIC_FABRIC_H
#define APTUS_FABRIC_FABRIC_H

#ifdef APTUS_HAVE_LIBFABRIC

#include <stddef.h>
#include <stdint.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>

#define APTUS_FAB_ADDR_MAX 64

/* The context of one operation: libfabric's scratch space first (FI_CONTEXT2), then ours. */
struct aptus_fab_ctx {
    struct fi_context2 fi;
    int kind; /* the user's: what completed */
};

struct aptus_fab_dgram {
    struct fi_info *info;
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_av *av;
    struct fid_cq *cq;
    struct fid_ep *ep;
    size_t prefix;     /* FI_MSG_PREFIX bytes in front of every buffer (0: none) */
    size_t mtu;        /* largest datagram (payload after the prefix) */
    size_t inject_max; /* largest datagram fi_inject takes (0: none) */
    size_t tx_depth, rx_depth;
    /* Entries the completion queue holds. Every posted operation (on any endpoint bound to
     * it) can leave one entry there; a provider may not check for room when a receive
     * completes (udp writes past a full queue, losing the oldest entry), so the channels keep
     * sends in flight + receives posted, over all endpoints, within it. */
    size_t cq_size;
    uint64_t mr_mode;
    int mr_local; /* buffers need registration and a descriptor */
    int wait_fd;  /* the completion queue's file descriptor to block on (-1: none) */
    char addr[APTUS_FAB_ADDR_MAX];
    size_t addrlen;
    char prov[32];
    char iface[64];
};

/* Opens a datagram endpoint of provider `prov` ("" or "auto": verbs when present, else udp)
 * on interface/domain `iface` ("" or "auto": the first non-loopback interface that is up).
 * Returns 0, or -1 with a message naming the problem (and what is available) in err. */
int aptus_fab_dgram_open(struct aptus_fab_dgram *d, const char *prov, const char *iface, char *err, size_t errlen);
void aptus_fab_dgram_close(struct aptus_fab_dgram *d);

/* Another datagram endpoint on d's domain, address vector and completion queue (a receive
 * queue of its own, e.g. for zero-copy receives). *addrlen: room in addr, then its length.
 * Returns 0 or a negative libfabric error code. */
int aptus_fab_dgram_ep_open(struct aptus_fab_dgram *d, struct fid_ep **ep, void *addr, size_t *addrlen);

/* Registers buf for local use (FI_MR_LOCAL). *desc is what send/receive take (NULL when the
 * provider needs none: then *mr is NULL too). Returns 0 or -1. */
int aptus_fab_mr_reg(struct aptus_fab_dgram *d, void *buf, size_t len, struct fid_mr **mr, void **desc);

/* Inserts a peer's address (from its card) into the address vector. Returns 0 or -1. */
int aptus_fab_av_insert(struct aptus_fab_dgram *d, const void *addr, size_t len, fi_addr_t *out);

/* Business cards through PMI: `chan` names the channel (key "aptus-<chan>-<rank>"). put before
 * the start-up fence; get on first contact with a peer. Return 0 or -1. */
int aptus_fab_card_put(const char *chan, const void *addr, size_t len);
int aptus_fab_card_get(const char *chan, int rank, void *addr, size_t *len);

/* A libfabric error code as text, for messages. */
const char *aptus_fab_strerror(int rc);

#endif
#endif
