/* The self channel: messages to oneself are handed straight to the message layer. */
#include <string.h>

#include "channel/channel.h"
#include "core/datatype.h"

/* Frames are small (the rendezvous carries anything large), so assembling one on the stack
 * keeps the receive path identical to that of a real channel. The payload is bytes, or (cur
 * != NULL) len bytes packed from a datatype cursor. */
static int self_deliver(struct aptus_peer *p, const void *hdr, size_t hdrlen, const void *payload,
                        struct aptus_dt_cursor *cur, size_t len)
{
    _Alignas(16) char frame[256 + 16384];
    if (hdrlen + len > sizeof frame)
        return 1;
    memcpy(frame, hdr, hdrlen);
    if (cur)
        aptus_dt_pack_some(cur, frame + hdrlen, len);
    else if (len)
        memcpy(frame + hdrlen, payload, len);
    aptus_frame_arrived(p, frame, hdrlen + len);
    return 0;
}

static int self_send_frame(struct aptus_peer *p, const void *hdr, size_t hdrlen, const void *payload, size_t len)
{
    return self_deliver(p, hdr, hdrlen, payload, NULL, len);
}

static int self_send_frame_packed(struct aptus_peer *p, const void *hdr, size_t hdrlen, struct aptus_dt_cursor *cur,
                                  size_t len)
{
    return self_deliver(p, hdr, hdrlen, NULL, cur, len);
}

static size_t self_max_frame(struct aptus_peer *p)
{
    return 256 + 16384;
}

static int self_rdma_readv(struct aptus_peer *p, struct iovec *local, int n, uint64_t remote_addr, size_t len)
{
    const char *src = (const char *)(uintptr_t)remote_addr;
    for (int i = 0; i < n; i++) {
        memcpy(local[i].iov_base, src, local[i].iov_len);
        src += local[i].iov_len;
    }
    return 0;
}

static int self_rdma_read(struct aptus_peer *p, void *local, uint64_t remote_addr, size_t len)
{
    struct iovec l = { local, len };
    return self_rdma_readv(p, &l, 1, remote_addr, len);
}

const struct aptus_channel aptus_channel_self = {
    .name = "self",
    .id = APTUS_CH_SELF,
    .send_frame = self_send_frame,
    .send_frame_packed = self_send_frame_packed,
    .max_frame = self_max_frame,
    .rdma_read = self_rdma_read,
    .rdma_readv = self_rdma_readv,
    .progress = NULL,
    .memory_in_use = NULL,
};
