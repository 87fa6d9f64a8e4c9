/* Control-connection records (see ctl.h). */
#include "ctl.h"

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static long elapsed_ms(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long)(t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000L;
}

static int send_bytes(int fd, const char *p, size_t n, int wait_ms, const struct timespec *t0)
{
    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK)
                return -1;
            long left = wait_ms < 0 ? 1000 : wait_ms - elapsed_ms(t0);
            if (left <= 0)
                return -1;
            struct pollfd pfd = { .fd = fd, .events = POLLOUT };
            int r = poll(&pfd, 1, (int)(left > 1000 ? 1000 : left));
            if (r > 0 && (pfd.revents & (POLLERR | POLLHUP | POLLNVAL)))
                return -1;
            continue;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

int ctl_send(int fd, char type, const void *payload, size_t n, int wait_ms)
{
    unsigned char hdr[5];
    struct timespec t0;
    if (fd < 0 || n > CTL_MAX_PAYLOAD)
        return -1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    hdr[0] = (unsigned char)type;
    hdr[1] = (unsigned char)(n >> 24);
    hdr[2] = (unsigned char)(n >> 16);
    hdr[3] = (unsigned char)(n >> 8);
    hdr[4] = (unsigned char)n;
    if (send_bytes(fd, (const char *)hdr, sizeof hdr, wait_ms, &t0) != 0)
        return -1;
    return n ? send_bytes(fd, payload, n, wait_ms, &t0) : 0;
}

int ctl_fill(int fd, struct ctlbuf *b)
{
    if (b->off > 0) {
        memmove(b->buf, b->buf + b->off, b->len - b->off);
        b->len -= b->off;
        b->off = 0;
    }
    for (int rounds = 0; rounds < 64; rounds++) {
        if (b->cap - b->len < 65536) {
            size_t nc = b->cap ? b->cap * 2 : 131072;
            if (nc > 2 * (CTL_MAX_PAYLOAD + 5) + 131072)
                return 1; /* full: parse first */
            char *nb = realloc(b->buf, nc);
            if (!nb)
                return 0;
            b->buf = nb;
            b->cap = nc;
        }
        ssize_t r = recv(fd, b->buf + b->len, b->cap - b->len, 0);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return errno == EAGAIN || errno == EWOULDBLOCK;
        }
        if (r == 0)
            return 0;
        b->len += (size_t)r;
    }
    return 1;
}

int ctl_next(struct ctlbuf *b, char *type, char **payload, size_t *n)
{
    size_t avail = b->len - b->off;
    if (avail < 5)
        return 0;
    const unsigned char *h = (const unsigned char *)b->buf + b->off;
    size_t len = ((size_t)h[1] << 24) | ((size_t)h[2] << 16) | ((size_t)h[3] << 8) | h[4];
    if (len > CTL_MAX_PAYLOAD)
        return -1;
    if (avail < 5 + len)
        return 0;
    *type = (char)h[0];
    *payload = b->buf + b->off + 5;
    *n = len;
    b->off += 5 + len;
    return 1;
}

void ctl_free(struct ctlbuf *b)
{
    free(b->buf);
    memset(b, 0, sizeof *b);
}
