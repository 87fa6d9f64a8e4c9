/* Output forwarding: each rank's stdout and stderr come through pipes and are written whole
 * lines at a time (by a proxy: sent to mpiexec as 'O' records); stdin goes to rank 0 when it is a
 * terminal. */
#include "mpiexec.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void write_out(int dest, const char *p, size_t n)
{
    while (n > 0 && !J.out_dead[dest]) {
        ssize_t w = write(dest, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN) {
                struct pollfd pfd = { .fd = dest, .events = POLLOUT };
                poll(&pfd, 1, 100);
                continue;
            }
            J.out_dead[dest] = 1; /* EPIPE etc.: drop further output to this stream */
            return;
        }
        p += w;
        n -= (size_t)w;
    }
}

/* Writes data[0..n) of rank's stream (a complete line when complete != 0). */
void emit(int rank, struct outstream *o, const char *data, size_t n, int complete)
{
    static char *tmp;
    static size_t tmpcap;
    char pfx[24] = "";
    size_t pl = 0;
    if (J.proxy) {
        /* To mpiexec: 'O' record = rank (4 bytes, big-endian), stream (1|2), complete, data. */
        pl = 6;
        pfx[0] = (char)((unsigned)rank >> 24);
        pfx[1] = (char)((unsigned)rank >> 16);
        pfx[2] = (char)((unsigned)rank >> 8);
        pfx[3] = (char)rank;
        pfx[4] = (char)o->dest;
        pfx[5] = (char)(complete != 0);
    } else if (J.prefix && !o->midline) {
        pl = (size_t)snprintf(pfx, sizeof pfx, "[%d] ", rank);
    }
    size_t need = pl + n + 1;
    if (need > tmpcap) {
        char *t = realloc(tmp, need);
        if (!t) {
            if (!J.proxy) {
                write_out(o->dest, pfx, pl);
                write_out(o->dest, data, n);
            }
            o->midline = !complete;
            return;
        }
        tmp = t;
        tmpcap = need;
    }
    memcpy(tmp, pfx, pl);
    memcpy(tmp + pl, data, n);
    if (J.proxy) {
        if (J.ctl_fd >= 0 && ctl_send(J.ctl_fd, 'O', tmp, pl + n, -1) != 0)
            proxy_lost();
    } else {
        write_out(o->dest, tmp, pl + n);
    }
    o->midline = !complete;
}

/* Emits every complete line in the buffer; with final != 0 also the unterminated rest. */
static void flush_lines(int rank, struct outstream *o, int final)
{
    size_t start = 0;
    for (;;) {
        char *nl = memchr(o->buf + start, '\n', o->len - start);
        if (!nl)
            break;
        size_t end = (size_t)(nl - o->buf) + 1;
        emit(rank, o, o->buf + start, end - start, 1);
        start = end;
    }
    if (o->len - start >= OUT_MAX_LINE) {
        emit(rank, o, o->buf + start, o->len - start, 0);
        start = o->len;
    }
    if (final && start < o->len) {
        o->buf[o->len] = '\n'; /* room reserved in read_stream */
        emit(rank, o, o->buf + start, o->len - start + 1, 1);
        start = o->len;
    }
    if (start > 0) {
        memmove(o->buf, o->buf + start, o->len - start);
        o->len -= start;
    }
}

void close_stream(int rank, struct outstream *o)
{
    flush_lines(rank, o, 1);
    close(o->fd);
    o->fd = -1;
    free(o->buf);
    o->buf = NULL;
    o->len = o->cap = 0;
}

void read_stream(int rank, struct outstream *o)
{
    for (int rounds = 0; rounds < 16 && o->fd >= 0; rounds++) {
        if (o->cap - o->len < 4096 + 1) {
            size_t nc = o->cap ? o->cap * 2 : 16384;
            char *nb = realloc(o->buf, nc);
            if (!nb) {
                flush_lines(rank, o, 1);
                continue;
            }
            o->buf = nb;
            o->cap = nc;
        }
        ssize_t r = read(o->fd, o->buf + o->len, o->cap - o->len - 1);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return;
            close_stream(rank, o);
            return;
        }
        if (r == 0) {
            close_stream(rank, o);
            return;
        }
        o->len += (size_t)r;
        flush_lines(rank, o, 0);
    }
}

/* ---------- stdin forwarding ---------- */

void stdin_read(void)
{
    ssize_t r = read(0, J.inbuf, sizeof J.inbuf);
    if (r < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (r <= 0) {
        J.stdin_open = 0;
        if (J.stdin_fwd >= 0)
            close(J.stdin_fwd);
        J.stdin_fwd = -1;
        return;
    }
    J.inlen = (size_t)r;
}

void stdin_write(void)
{
    ssize_t w = write(J.stdin_fwd, J.inbuf, J.inlen);
    if (w < 0) {
        if (errno == EINTR || errno == EAGAIN)
            return;
        close(J.stdin_fwd);
        J.stdin_fwd = -1;
        J.stdin_open = 0;
        J.inlen = 0;
        return;
    }
    memmove(J.inbuf, J.inbuf + w, J.inlen - (size_t)w);
    J.inlen -= (size_t)w;
}
