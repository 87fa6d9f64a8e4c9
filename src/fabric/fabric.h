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
 * on interface/domain `iface` ("" or "auto": the first non-loopback interface that is up);
 * its completion queue gets a file descriptor to wait on when `wait` is nonzero (a provider
 * then signals it on every completion written: a system call each, which a rank that never
 * sleeps need not pay). Returns 0, or -1 with a message naming the problem (and what is
 * available) in err. */
int aptus_fab_dgram_open(struct aptus_fab_dgram *d, const char *prov, const char *iface, int wait, char *err,
                         size_t errlen);
void aptus_fab_dgram_close(struct aptus_fab_dgram *d);

/* Another datagram endpoint on d's domain, address vector and completion queue (a receive
 * queue of its own, e.g. for zero-copy receives). *addrlen: room in addr, then its length.
 * Returns 0 or a negative libfabric error code. */
int aptus_fab_dgram_ep_open(struct aptus_fab_dgram *d, struct fid_ep **ep, void *addr, size_t *addrlen);

/* Registers buf for local use (FI_MR_LOCAL). *desc is what send/receive take (NULL when the
 * provider needs none: then *mr is NULL too). Returns 0 or -1. */
/* Closes a region registered here (giving its bytes back to APTUS_FABRIC_REG_LIMIT). */
void aptus_fab_mr_close(struct fid_mr *mr);
int aptus_fab_mr_reg(struct aptus_fab_dgram *d, void *buf, size_t len, struct fid_mr **mr, void **desc);

/* Inserts a peer's address (from its card) into the address vector. Returns 0 or -1. */
int aptus_fab_av_insert(struct aptus_fab_dgram *d, const void *addr, size_t len, fi_addr_t *out);

/* Business cards through PMI: `chan` names the channel (key "aptus-<chan>-<rank>"). put before
 * the start-up fence; get on first contact with a peer. Return 0 or -1. */
int aptus_fab_card_put(const char *chan, const void *addr, size_t len);
int aptus_fab_card_get(const char *chan, int rank, void *addr, size_t *len);

/* ---- connected endpoints (FI_EP_MSG: verbs RC queue pairs, tcp sockets here) ---------- */

/* The connected side of the fabric layer, one per process: a passive endpoint listening for
 * connection requests (its address is the process's RC card), an event queue for the
 * connection events of every endpoint, one completion queue for all of their operations and,
 * where the provider has them, one shared receive context (receive buffers shared by every
 * connection). Endpoints are made on demand: aptus_fab_rc_connect on one side, the
 * connection request seen by aptus_fab_rc_event and answered by aptus_fab_rc_accept (or
 * _reject) on the other; both then see APTUS_FAB_CM_CONNECTED. */
struct aptus_fab_rc {
    struct fi_info *info;
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_eq *eq;
    struct fid_cq *cq;
    struct fid_pep *pep;
    struct fid_ep *srx; /* shared receive context (NULL: receives are posted per endpoint) */
    size_t inject_max;  /* largest fi_inject (0: none) */
    size_t tx_depth, rx_depth;
    size_t cq_data;     /* bytes of remote CQ data fi_writedata carries (0: none) */
    size_t max_msg;     /* largest message (and RMA operation) */
    size_t iov_limit;   /* local pieces in one operation */
    uint64_t msg_order; /* FI_ORDER_* the provider keeps between operations of an endpoint */
    int rx_cq_data;     /* FI_RX_CQ_DATA: remote CQ data consumes a posted receive */
    uint64_t mr_mode;
    int mr_local;                  /* local buffers need registration and a descriptor */
    int eq_fd, cq_fd;              /* descriptors to block on (-1: none) */
    char addr[APTUS_FAB_ADDR_MAX]; /* the listening address */
    size_t addrlen;
    char prov[32];
    char iface[64];
};

/* Opens the connected side: provider `prov` ("" or "auto": verbs when present, else tcp) on
 * interface `iface` (as for datagrams); a shared receive context when `srx` is nonzero and
 * the provider has one; a completion queue with a file descriptor when `wait` is nonzero (as
 * for datagrams). Returns 0, or -1 with a message in err. */
/* Whether the RC provider named (APTUS_FABRIC_RC_PROVIDER; "auto": verbs when it has the
 * interface, as aptus_fab_rc_open picks) is RDMA hardware rather than a sockets provider (tcp),
 * for the built-in send chain (channel/rules.h). */
int aptus_fab_rc_hardware(const char *prov, const char *iface);
int aptus_fab_rc_open(struct aptus_fab_rc *r, const char *prov, const char *iface, int srx, int wait, char *err,
                      size_t errlen);
void aptus_fab_rc_close(struct aptus_fab_rc *r);

/* Starts a connection to the passive endpoint at addr, with `param` (at most
 * APTUS_FAB_CM_PARAM bytes) for the other side's connection request; the endpoint's
 * context (fid.context, in events) is ctx. Returns 0 or a negative libfabric error code. */
#define APTUS_FAB_CM_PARAM 56
int aptus_fab_rc_connect(struct aptus_fab_rc *r, const void *addr, size_t addrlen, const void *param, size_t plen,
                         void *ctx, struct fid_ep **ep);

enum { APTUS_FAB_CM_CONNREQ = 1, APTUS_FAB_CM_CONNECTED, APTUS_FAB_CM_SHUTDOWN, APTUS_FAB_CM_ERROR };
struct aptus_fab_cm_event {
    int kind;
    void *ctx;                      /* the endpoint's context (CONNECTED, SHUTDOWN, ERROR) */
    struct fi_info *req;            /* CONNREQ: answer with aptus_fab_rc_accept or _reject (they free it) */
    char param[APTUS_FAB_CM_PARAM]; /* CONNREQ, CONNECTED: the other side's param */
    size_t plen;
    int err; /* ERROR: a negative libfabric error code */
};
/* The next connection event, without blocking: 1 (filled in), 0 (none) or a negative error. */
int aptus_fab_rc_event(struct aptus_fab_rc *r, struct aptus_fab_cm_event *ev);
/* Accepts a request (its endpoint bound to the shared receive context, if any). Returns 0 or
 * a negative libfabric error code; req is freed either way. */
int aptus_fab_rc_accept(struct aptus_fab_rc *r, struct fi_info *req, const void *param, size_t plen, void *ctx,
                        struct fid_ep **ep);
void aptus_fab_rc_reject(struct aptus_fab_rc *r, struct fi_info *req);

/* Registers buf with `access` (FI_SEND | FI_RECV | FI_READ | FI_WRITE | FI_REMOTE_READ |
 * FI_REMOTE_WRITE). *desc is for local operations (NULL when the provider needs none), *rkey
 * what a peer names it by in RMA (the provider's key with FI_MR_PROV_KEY, otherwise a key
 * unique in this process), *raddr the address a peer uses (the buffer's with FI_MR_VIRT_ADDR,
 * else 0 = its start). Returns 0 or a negative libfabric error code. */
int aptus_fab_rc_mr_reg(struct aptus_fab_rc *r, void *buf, size_t len, uint64_t access, struct fid_mr **mr, void **desc,
                        uint64_t *rkey, uint64_t *raddr);

/* A libfabric error code as text, for messages. */
const char *aptus_fab_strerror(int rc);

#endif
#endif
