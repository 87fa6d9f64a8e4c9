/* Veloblock latency floor: two processes pinned to two cores ping-pong small frames through two
 * blocks in shared memory (MAP_SHARED|MAP_ANONYMOUS). Prints the one-way latency (half the
 * round trip), best of several runs. With --stream, measures one-way streaming rate instead.
 * Built with the unit tests, not registered as a test.
 *
 * Usage: vb_pingpong [-i ITERS] [-r RUNS] [-s BLOCK_BYTES] [-l PAYLOAD] [-c CPU0,CPU1] [--stream]
 */
#include "channel/fastpath/veloblock.h"

#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void pin(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0)
        perror("sched_setaffinity (continuing unpinned)");
}

static inline void send_spin(struct vb_sender *s, const void *buf, uint32_t len)
{
    while (vb_send(s, buf, len, 0) != 0)
        ;
}

static inline const void *recv_spin(struct vb_receiver *r, uint32_t *len)
{
    uint16_t aux;
    const void *p;
    while (!(p = vb_peek(r, len, &aux)))
        ;
    return p;
}

int main(int argc, char **argv)
{
    long iters = 1000000, runs = 7;
    uint32_t size = 65536, len = 8;
    int cpu0 = 0, cpu1 = 1, stream = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-i") && i + 1 < argc)
            iters = atol(argv[++i]);
        else if (!strcmp(argv[i], "-r") && i + 1 < argc)
            runs = atol(argv[++i]);
        else if (!strcmp(argv[i], "-s") && i + 1 < argc)
            size = (uint32_t)strtoul(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "-l") && i + 1 < argc)
            len = (uint32_t)strtoul(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "-c") && i + 1 < argc) {
            if (sscanf(argv[++i], "%d,%d", &cpu0, &cpu1) != 2)
                return 2;
        } else if (!strcmp(argv[i], "--stream"))
            stream = 1;
        else {
            fprintf(stderr, "usage: %s [-i ITERS] [-r RUNS] [-s BLOCK] [-l LEN] [-c CPU0,CPU1] [--stream]\n", argv[0]);
            return 2;
        }
    }
    if (size % 8 || size < 64 || len > vb_max_payload(size) || len > 4096 || iters < 1 || runs < 1) {
        fprintf(stderr, "bad parameters\n");
        return 2;
    }

    size_t blk = ((size_t)size + 4095) & ~(size_t)4095;
    size_t total = 4096 + 2 * blk;
    uint8_t *mem = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED)
        return perror("mmap"), 1;
    struct vb_ctrl *ctrl = (struct vb_ctrl *)(void *)mem;
    uint8_t *b[2] = { mem + 4096, mem + 4096 + blk }; /* b[0]: parent -> child, b[1]: back */
    vb_block_init(b[0], size, &ctrl[0]);
    vb_block_init(b[1], size, &ctrl[1]);

    long warm = iters / 10 + 1000;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return perror("fork"), 1;
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        pin(cpu1);
        struct vb_receiver r;
        struct vb_sender s;
        vb_receiver_init(&r, b[0], size, &ctrl[0]);
        vb_sender_init(&s, b[1], size, &ctrl[1]);
        uint8_t buf[4096];
        uint32_t l;
        if (stream) {
            for (long k = 0; k < runs; k++) {
                for (long i = 0; i < iters; i++) {
                    const void *p = recv_spin(&r, &l);
                    memcpy(buf, p, l);
                    vb_release(&r);
                }
                send_spin(&s, buf, 8); /* end-of-run ack */
            }
        } else {
            for (long i = 0; i < runs * (iters + warm); i++) {
                const void *p = recv_spin(&r, &l);
                memcpy(buf, p, l);
                vb_release(&r);
                send_spin(&s, buf, l);
            }
        }
        _exit(0);
    }

    pin(cpu0);
    struct vb_sender s;
    struct vb_receiver r;
    vb_sender_init(&s, b[0], size, &ctrl[0]);
    vb_receiver_init(&r, b[1], size, &ctrl[1]);
    uint8_t buf[4096];
    memset(buf, 0x5a, sizeof buf);
    double best = 1e300, sum = 0;
    uint32_t l;
    for (long k = 0; k < runs; k++) {
        double t;
        if (stream) {
            double t0 = now_ns();
            for (long i = 0; i < iters; i++) {
                memcpy(buf, &i, sizeof i);
                send_spin(&s, buf, len);
            }
            recv_spin(&r, &l);
            vb_release(&r);
            t = (now_ns() - t0) / (double)iters;
        } else {
            for (long i = 0; i < warm; i++) {
                send_spin(&s, buf, len);
                recv_spin(&r, &l);
                vb_release(&r);
            }
            double t0 = now_ns();
            for (long i = 0; i < iters; i++) {
                memcpy(buf, &i, sizeof i);
                send_spin(&s, buf, len);
                const void *p = recv_spin(&r, &l);
                if (l != len || (len >= sizeof i && memcmp(p, &i, sizeof i) != 0)) {
                    fprintf(stderr, "ping-pong: corrupt reply at %ld\n", i);
                    kill(pid, SIGKILL);
                    return 1;
                }
                vb_release(&r);
            }
            t = (now_ns() - t0) / (double)iters / 2.0;
        }
        sum += t;
        if (t < best)
            best = t;
    }
    int st;
    waitpid(pid, &st, 0);
    if (stream)
        printf("veloblock stream: %u-byte frames, block %u B, cpus %d->%d: best %.1f ns/frame "
               "(%.1f Mframes/s), mean %.1f ns/frame over %ld runs of %ld\n",
               len, size, cpu0, cpu1, best, 1e3 / best, sum / (double)runs, runs, iters);
    else
        printf("veloblock ping-pong: %u-byte frames, block %u B, cpus %d<->%d: one-way latency best "
               "%.1f ns, mean %.1f ns over %ld runs of %ld round trips\n",
               len, size, cpu0, cpu1, best, sum / (double)runs, runs, iters);
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
}
