/* The self channel: frames to oneself are handed straight to their handler, and one-sided
 * operations are plain copies. */
#include <string.h>

#include "channel/channel.h"
#include "core/datatype.h"
#include "runtime/runtime.h"

#define SELF_FRAME_MAX (256 + 16384)

static struct aptus_ep self_ep;

static int self_reaches(int world_rank)
{
    return world_rank == aptus_rt.rank;
}

static int self_ep_open(struct aptus_peer *p, struct aptus_ep **ep)
{
    memset(&self_ep, 0, sizeof self_ep);
    *ep = &self_ep;
    return APTUS_OK;
}

static void self_ep_close(struct aptus_ep *ep)
{
}

/* Frames are small (the rendezvous carries anything large), so assembling one on the stack
 * keeps the receive path identical to that of a real channel. The payload is bytes, a list of
 * pieces, or (cur != NULL) len bytes packed from a datatype cursor. */
static int self_deliver(struct aptus_ep *ep, const void *hdr, size_t hdrlen, const struct iovec *iov, int n,
                        struct aptus_dt_cursor *cur, size_t len)
{
    _Alignas(16) char frame[SELF_FRAME_MAX];
    if (hdrlen + len > sizeof frame)
        return APTUS_NORES;
    memcpy(frame, hdr, hdrlen);
    if (cur) {
        aptus_dt_pack_some(cur, frame + hdrlen, len);
    } else {
        size_t off = hdrlen;
        for (int i = 0; i < n; i++) {
            memcpy(frame + off, iov[i].iov_base, iov[i].iov_len);
            off += iov[i].iov_len;
        }
    }
    aptus_am_dispatch(ep->peer, frame, hdrlen + len);
    return APTUS_OK;
}

static int self_send_frame(struct aptus_ep *ep, const void *hdr, size_t hdrlen, const void *payload, size_t len)
{
    struct iovec v = { (void *)payload, len };
    return self_deliver(ep, hdr, hdrlen, &v, len ? 1 : 0, NULL, len);
}

static int self_send_frame_packed(struct aptus_ep *ep, const void *hdr, size_t hdrlen, struct aptus_dt_cursor *cur,
                                  size_t len)
{
    return self_deliver(ep, hdr, hdrlen, NULL, 0, cur, len);
}

static int self_send_zcopy(struct aptus_ep *ep, const void *hdr, size_t hdrlen, const struct iovec *iov, int n,
                           struct aptus_completion *comp)
{
    size_t len = 0;
    for (int i = 0; i < n; i++)
        len += iov[i].iov_len;
    return self_deliver(ep, hdr, hdrlen, iov, n, NULL, len);
}

static int self_put(struct aptus_ep *ep, struct iovec *local, int n, uint64_t raddr, uint64_t rkey,
                    struct aptus_completion *comp)
{
    char *dst = (char *)(uintptr_t)raddr;
    for (int i = 0; i < n; i++) {
        memmove(dst, local[i].iov_base, local[i].iov_len);
        dst += local[i].iov_len;
    }
    return APTUS_OK;
}

static int self_get(struct aptus_ep *ep, struct iovec *local, int n, uint64_t raddr, uint64_t rkey,
                    struct aptus_completion *comp)
{
    const char *src = (const char *)(uintptr_t)raddr;
    for (int i = 0; i < n; i++) {
        memmove(local[i].iov_base, src, local[i].iov_len);
        src += local[i].iov_len;
    }
    return APTUS_OK;
}

static int self_flush(struct aptus_ep *ep, struct aptus_completion *comp)
{
    return APTUS_OK; /* everything completes at once */
}

struct aptus_channel aptus_channel_self = {
    .name = "self",
    .caps = { .flags = APTUS_CAP_PUT | APTUS_CAP_GET | APTUS_CAP_ORDERED | APTUS_CAP_ZCOPY_SEND | APTUS_CAP_RELIABLE |
                       APTUS_CAP_REMOTE_FLUSH,
              .frame_max = SELF_FRAME_MAX,
              .eager_max = 16384,
              .put_max = SIZE_MAX,
              .get_max = SIZE_MAX,
              .iov_max = 1 << 20,
              .chunk = 16384,
              .get_min = 0,
              .get_busy_min = 0 },
    .reaches = self_reaches,
    .ep_open = self_ep_open,
    .ep_close = self_ep_close,
    .send_frame = self_send_frame,
    .send_frame_packed = self_send_frame_packed,
    .send_zcopy = self_send_zcopy,
    .put = self_put,
    .get = self_get,
    .flush = self_flush,
};
