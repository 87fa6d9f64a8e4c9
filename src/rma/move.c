/* Moving bytes between a packed buffer and a target's ranges on the node: load/store in this
 * process, Cross Memory Attach (process_vm_writev/readv) into another. */
#include "rma/rma_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "runtime/runtime.h"

/* ---- moving bytes to and from a target's ranges -------------------------------------------- */

/* Cross Memory Attach between a contiguous local buffer and the target's ranges. */
int rma_cma_move(int pid, char *local, const struct rma_seg *s, size_t n, int write)
{
    struct iovec liov, riov[64];
    size_t i = 0;
    while (i < n) {
        size_t k = 0, bytes = 0;
        while (i + k < n && k < 64) {
            riov[k].iov_base = (void *)(uintptr_t)s[i + k].off;
            riov[k].iov_len = s[i + k].len;
            bytes += s[i + k].len;
            k++;
        }
        size_t done = 0;
        while (done < bytes) {
            liov.iov_base = local + done;
            liov.iov_len = bytes - done;
            /* skip the remote ranges already done */
            size_t skip = done, first = 0;
            while (skip >= riov[first].iov_len) {
                skip -= riov[first].iov_len;
                first++;
            }
            struct iovec save = riov[first];
            riov[first].iov_base = (char *)riov[first].iov_base + skip;
            riov[first].iov_len -= skip;
            ssize_t got = write ? process_vm_writev(pid, &liov, 1, riov + first, (unsigned long)(k - first), 0)
                                : process_vm_readv(pid, &liov, 1, riov + first, (unsigned long)(k - first), 0);
            riov[first] = save;
            if (got <= 0) {
                if (got < 0 && errno == EINTR)
                    continue;
                return -1;
            }
            done += (size_t)got;
        }
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
