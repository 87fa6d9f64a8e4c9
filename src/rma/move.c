/* Moving bytes between a packed buffer and a target's ranges on the node: load/store in this
 * process, Cross Memory Attach (process_vm_writev/readv) into another. */
#include "rma/rma_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "runtime/runtime.h"

/* ---- moving bytes to and from a target's ranges -------------------------------------------- */

/* Drops the first `bytes` bytes of an iovec list (and the empty entries in front). */
static void iov_skip(struct iovec **v, size_t *n, size_t bytes)
{
    while (*n && bytes >= (*v)->iov_len) {
        bytes -= (*v)->iov_len;
        (*v)++;
        (*n)--;
    }
    if (*n && bytes) {
        (*v)->iov_base = (char *)(*v)->iov_base + bytes;
        (*v)->iov_len -= bytes;
    }
}

/* Cross Memory Attach between a local and a remote iovec list of the same length (at most IOV_MAX
 * entries each): one system call unless it stops short. The lists serve as scratch. */
int rma_cma_iov(int pid, struct iovec *l, size_t nl, struct iovec *r, size_t nr, int write)
{
    for (;;) {
        iov_skip(&l, &nl, 0);
        iov_skip(&r, &nr, 0);
        if (!nl || !nr)
            return 0;
        ssize_t got = write ? process_vm_writev(pid, l, nl, r, nr, 0) : process_vm_readv(pid, l, nl, r, nr, 0);
        if (got <= 0) {
            if (got < 0 && errno == EINTR)
                continue;
            return -1;
        }
        iov_skip(&l, &nl, (size_t)got);
        iov_skip(&r, &nr, (size_t)got);
    }
}

/* Cross Memory Attach between a contiguous local buffer and the target's ranges. */
int rma_cma_move(int pid, char *local, const struct rma_seg *s, size_t n, int write)
{
    struct iovec liov, riov[64];
    for (size_t i = 0; i < n;) {
        size_t k = 0, bytes = 0;
        for (; i + k < n && k < 64; k++) {
            riov[k] = (struct iovec){ (void *)(uintptr_t)s[i + k].off, s[i + k].len };
            bytes += s[i + k].len;
        }
        liov = (struct iovec){ local, bytes };
        if (rma_cma_iov(pid, &liov, 1, riov, k, write))
            return -1;
        local += bytes;
        i += k;
    }
    return 0;
}

/* Where a target's ranges are in this process (shared segment, or our own memory): the
 * pointer for offset off. */
char *rma_tgt_ptr(const struct aptus_win *w, const struct rma_target *t, uint64_t off)
{
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC)
        return (char *)(uintptr_t)off;
    return (char *)(uintptr_t)((t->local ? (uint64_t)(uintptr_t)t->local : t->base) + off);
}

/* Data between a packed buffer and the target's ranges: write (put) or read (get). */
int rma_move_direct(const struct aptus_win *w, const struct rma_target *t, char *packed, const struct rma_seg *s,
                    size_t n, int write)
{
    if (t->path == RMA_PATH_CMA && t->pid != (int)aptus_rt.pid) {
        if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC) {
            struct rma_seg local_s[16] = { { 0, 0 } }, *abs = n <= 16 ? local_s : malloc(sizeof *abs * n);
            if (!abs)
                return MPI_ERR_NO_MEM;
            for (size_t i = 0; i < n; i++)
                abs[i] = (struct rma_seg){ t->base + s[i].off, s[i].len };
            int r = rma_cma_move(t->pid, packed, abs, n, write);
            if (abs != local_s)
                free(abs);
            return r ? MPI_ERR_RMA_RANGE : 0;
        }
        return rma_cma_move(t->pid, packed, s, n, write) ? MPI_ERR_RMA_RANGE : 0;
    }
    for (size_t i = 0; i < n; i++) {
        char *p = rma_tgt_ptr(w, t, s[i].off);
        if (write)
            memcpy(p, packed, s[i].len);
        else
            memcpy(packed, p, s[i].len);
        packed += s[i].len;
    }
    return 0;
}
