/* sock_stream: how fast the kernel moves bytes between two network namespaces by plain
 * sockets, with no MPI and no libfabric -- the ceiling under any library's bandwidth over
 * that link (bench/link_ceiling.sh runs it).
 *
 *   sock_stream recv PORT udp|tcp [RCVBUF]   receive until the sender ends; prints
 *                                            "received BYTES in SECONDS s: MB/s"
 *   sock_stream send ADDR PORT udp|udp-gso|tcp SIZE SECONDS
 *                                            send SIZE-byte datagrams (udp), SIZE-byte
 *                                            buffers cut into 1472-byte datagrams by the
 *                                            kernel (udp-gso: UDP_SEGMENT) or SIZE-byte
 *                                            writes (tcp) for SECONDS, as fast as they go
 * UDP has no flow control: the receiver counts what arrived (what the sender pushed beyond
 * that was dropped); a few 1-byte datagrams end the stream. MB/s = 10^6 bytes/s. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int usage(void)
{
    fprintf(stderr, "usage: sock_stream recv PORT udp|tcp [RCVBUF]\n"
                    "       sock_stream send ADDR PORT udp|udp-gso|tcp SIZE SECONDS\n");
    return 2;
}

static char buf[1 << 20];

static int do_recv(int port, int tcp, int rcvbuf)
{
    int s = socket(AF_INET, tcp ? SOCK_STREAM : SOCK_DGRAM, 0), one = 1;
    if (s < 0)
        return perror("socket"), 1;
    setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (rcvbuf > 0 && setsockopt(s, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf) != 0)
        return perror("SO_RCVBUF"), 1;
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
    a.sin_addr.s_addr = htonl(INADDR_ANY);
    if (bind(s, (struct sockaddr *)&a, sizeof a) != 0)
        return perror("bind"), 1;
    if (tcp) {
        int l = s;
        if (listen(l, 1) != 0 || (s = accept(l, NULL, NULL)) < 0)
            return perror("accept"), 1;
        close(l);
    }
    long long total = 0;
    double t0 = 0, t1 = 0;
    for (;;) {
        ssize_t r = recv(s, buf, sizeof buf, 0);
        if (r <= 0 || (!tcp && r == 1))
            break;
        t1 = now_s();
        if (!t0)
            t0 = t1;
        total += r;
    }
    close(s);
    if (t1 <= t0)
        return fprintf(stderr, "sock_stream: nothing received\n"), 1;
    printf("received %lld bytes in %.3f s: %.1f MB/s\n", total, t1 - t0, (double)total / (t1 - t0) / 1e6);
    return 0;
}

static int do_send(const char *addr, int port, const char *mode, size_t size, double secs)
{
    int tcp = !strcmp(mode, "tcp"), gso = !strcmp(mode, "udp-gso");
    if (!tcp && !gso && strcmp(mode, "udp"))
        return usage();
    if (size < 2 || size > sizeof buf)
        return fprintf(stderr, "sock_stream: SIZE must be 2..%zu\n", sizeof buf), 2;
    int s = socket(AF_INET, tcp ? SOCK_STREAM : SOCK_DGRAM, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
    if (s < 0 || inet_pton(AF_INET, addr, &a.sin_addr) != 1)
        return fprintf(stderr, "sock_stream: bad address %s\n", addr), 1;
    if (connect(s, (struct sockaddr *)&a, sizeof a) != 0)
        return perror("connect"), 1;
    int seg = 1472;
    if (gso && setsockopt(s, IPPROTO_UDP, UDP_SEGMENT, &seg, sizeof seg) != 0)
        return perror("UDP_SEGMENT"), 1;
    memset(buf, 0x5a, sizeof buf);
    double t0 = now_s();
    while (now_s() - t0 < secs)
        if (send(s, buf, size, 0) < 0 && tcp)
            return perror("send"), 1;
    if (!tcp) {
        seg = 0;
        if (gso)
            setsockopt(s, IPPROTO_UDP, UDP_SEGMENT, &seg, sizeof seg);
        for (int i = 0; i < 20; i++) { /* the end marks (some may be lost) */
            usleep(20000);
            send(s, buf, 1, 0);
        }
    }
    close(s);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 4 && !strcmp(argv[1], "recv"))
        return do_recv(atoi(argv[2]), !strcmp(argv[3], "tcp"), argc > 4 ? atoi(argv[4]) : 0);
    if (argc == 7 && !strcmp(argv[1], "send"))
        return do_send(argv[2], atoi(argv[3]), argv[4], (size_t)atol(argv[5]), atof(argv[6]));
    return usage();
}
