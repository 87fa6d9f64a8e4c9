/* The control connection between mpiexec and its per-host proxies (TCP): records of
 *   1 byte type | 4 bytes payload length (big-endian) | payload
 * See docs/DESIGN.md ("Launch across hosts") for the record types. */
#ifndef APTUS_MPIEXEC_CTL_H
#define APTUS_MPIEXEC_CTL_H

#include <stddef.h>

#define CTL_MAX_PAYLOAD (4u << 20)

struct ctlbuf {
    char *buf;
    size_t len, cap, off;
};

/* Sends one record; waits (poll) while the socket is full, at most wait_ms in all (-1: no
 * limit while the peer is there). Returns 0 or -1 (peer gone, timeout). */
int ctl_send(int fd, char type, const void *payload, size_t n, int wait_ms);
/* Reads what is available from a non-blocking socket into b. Returns 1 when the connection is
 * still open, 0 on EOF or error. */
int ctl_fill(int fd, struct ctlbuf *b);
/* Takes the next complete record out of b: 1 (type, payload, n set; payload valid until the
 * next ctl_fill), 0 when none is complete, -1 when the stream is malformed. */
int ctl_next(struct ctlbuf *b, char *type, char **payload, size_t *n);
void ctl_free(struct ctlbuf *b);

#endif
