/* The window object: creation in the four flavours (the node segment with its control slots,
 * the memory of the allocating flavours, how each target is reached), freeing, shared queries;
 * the layer's set-up, clean-up and statistics. The rest of the layer: rma_internal.h. */
#include "rma/rma_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include "channel/channel.h"
#include "coll/coll.h"
#include "comm/create.h"
#include "core/attr.h"
#include "core/errors.h"
#include "core/info.h"
#include "runtime/json.h"
#include "runtime/progress.h"
#include "runtime/runtime.h"

struct rma_stats rma_stats;

void aptus_rma_stats_print(int rank)
{
    if (!rma_stats.windows)
        return;
    printf("[aptus stats] rank %d: one-sided: %llu windows; operations by load/store %llu, by cross-memory copy %llu, "
           "by active message %llu, by RDMA %llu; copies run by the copy agent %llu; operations applied for other "
           "ranks by the agent %llu; dynamic-window region checks by RDMA %llu; small operations deferred to the "
           "epoch's end %llu, their batches sent with MPI_Win_complete %llu, handed to the target %llu, taken back "
           "%llu, written by the origin %llu\n",
           rank, (unsigned long long)rma_stats.windows, (unsigned long long)rma_stats.ops[RMA_PATH_SHARED],
           (unsigned long long)rma_stats.ops[RMA_PATH_CMA], (unsigned long long)rma_stats.ops[RMA_PATH_AM],
           (unsigned long long)rma_stats.ops[RMA_PATH_RDMA], (unsigned long long)rma_stats.lb_jobs,
           (unsigned long long)rma_stats.agent, (unsigned long long)rma_stats.dyn_reads,
           (unsigned long long)rma_stats.deferred, (unsigned long long)rma_stats.with_complete,
           (unsigned long long)rma_stats.handed, (unsigned long long)rma_stats.taken_back,
           (unsigned long long)rma_stats.by_origin);
}

void aptus_rma_stats_json(struct aptus_json *j)
{
    if (!rma_stats.windows)
        return;
    aptus_json_object(j, "one_sided");
    aptus_json_u64(j, "windows", rma_stats.windows);
    aptus_json_u64(j, "by_load_store", rma_stats.ops[RMA_PATH_SHARED]);
    aptus_json_u64(j, "by_cross_memory", rma_stats.ops[RMA_PATH_CMA]);
    aptus_json_u64(j, "by_active_message", rma_stats.ops[RMA_PATH_AM]);
    aptus_json_u64(j, "by_rdma", rma_stats.ops[RMA_PATH_RDMA]);
    aptus_json_u64(j, "copy_agent_jobs", rma_stats.lb_jobs);
    aptus_json_u64(j, "applied_for_others", rma_stats.agent);
    aptus_json_u64(j, "dynamic_region_reads", rma_stats.dyn_reads);
    aptus_json_u64(j, "deferred", rma_stats.deferred);
    aptus_json_u64(j, "batches_with_complete", rma_stats.with_complete);
    aptus_json_u64(j, "batches_handed", rma_stats.handed);
    aptus_json_u64(j, "batches_taken_back", rma_stats.taken_back);
    aptus_json_u64(j, "batches_by_origin", rma_stats.by_origin);
    aptus_json_close(j);
}

/* ---- names of segments being created (removed by the emergency clean-up) ------------------- */

#define RMA_PENDING_NAMES 4
static char pending_names[RMA_PENDING_NAMES][96];

static void names_cleanup(void)
{
    for (int i = 0; i < RMA_PENDING_NAMES; i++)
        if (pending_names[i][0]) {
            (void)shm_unlink(pending_names[i]);
            pending_names[i][0] = 0;
        }
}

static int name_hold(const char *name)
{
    for (int i = 0; i < RMA_PENDING_NAMES; i++)
        if (!pending_names[i][0]) {
            snprintf(pending_names[i], sizeof pending_names[i], "%s", name);
            return i;
        }
    return -1;
}

void aptus_rma_finalize(void)
{
    rma_lb_stop();
    rma_agents_stop_all();
}

void aptus_rma_init(void)
{
    static int done;
    if (!done && aptus_cleanup_add(names_cleanup) == 0)
        done = 1;
}

/* ---- small helpers ------------------------------------------------------------------------- */

struct aptus_win *aptus_win_get(MPI_Win h)
{
    struct aptus_win *w = (struct aptus_win *)h;
    return aptus_obj_in(h, APTUS_OBJ_WIN) && w->magic == APTUS_MAGIC_WIN ? w : NULL;
}

int aptus_win_error(struct aptus_win *w, int errclass, const char *fn, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (!w)
        return aptus_error(NULL, errclass, fn, "%s", msg);
    return aptus_error_on(w->errh, (void *)w->handle, errclass, fn, "%s", msg);
}

/* ---- creation ------------------------------------------------------------------------------- */

struct rank_info {
    uint64_t base, size;
    int64_t disp_unit;
    int32_t pid, node; /* node: its index in its job's list of nodes */
    uint32_t job;      /* its job's hash: processes of other jobs (dynamic processes) share no node
                          with this one, whatever their index says */
    uint32_t rdma;     /* it has an RDMA channel (a job on one node has none) */
};
#define SAME_NODE(a, b) ((a).node == (b).node && (a).job == (b).job)

static size_t page_size(void)
{
    long p = sysconf(_SC_PAGESIZE);
    return p > 0 ? (size_t)p : 4096;
}

static size_t round_up(size_t v, size_t a)
{
    return (v + a - 1) / a * a;
}

/* Maps the node segment of size bytes: created by the node's first rank (leader), opened by the
 * others. Collective over w->comm (two agreements). */
static int seg_setup(struct aptus_win *w, int leader_world, size_t bytes, int leader, const char **why)
{
    char name[96];
    snprintf(name, sizeof name, "/aptus-%s-w%d-%u", aptus_rt.pmi.jobid, leader_world, (unsigned)w->comm->ctx);
    uint32_t bad = 0;
    int slot = -1;
    void *p = MAP_FAILED;
    if (leader) {
        slot = name_hold(name);
        int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
        if (fd >= 0 && ftruncate(fd, (off_t)bytes) == 0)
            p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (fd >= 0)
            close(fd);
        bad = p == MAP_FAILED;
    }
    int rc = aptus_allreduce_u32(w->comm, &bad, 1, APTUS_OP_MAX);
    if (!rc && !bad && !leader) {
        int fd = shm_open(name, O_RDWR, 0);
        if (fd >= 0) {
            p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
            close(fd);
        }
        bad = p == MAP_FAILED;
    }
    if (!rc && !bad)
        rc = aptus_allreduce_u32(w->comm, &bad, 1, APTUS_OP_MAX);
    if (leader) {
        (void)shm_unlink(name);
        if (slot >= 0)
            pending_names[slot][0] = 0;
    }
    if (rc || bad) {
        if (p != MAP_FAILED)
            munmap(p, bytes);
        *why = "cannot create the window's shared memory segment (/dev/shm full, or too little memory)";
        return rc ? rc : MPI_ERR_NO_MEM;
    }
    w->seg = p;
    w->seg_size = bytes;
    return 0;
}

/* Whether this process may copy from and into other processes of the node with Cross Memory
 * Attach: tried on the first other local rank's control slot (its address there). */
static int cma_probe(struct aptus_win *w, const uint64_t *ctrl_addr)
{
    for (int r = 0; r < w->size; r++) {
        if (r == w->rank || !w->t[r].ctrl)
            continue;
        uint32_t v;
        struct iovec l = { &v, sizeof v }, rm = { (void *)(uintptr_t)ctrl_addr[r], sizeof v };
        return process_vm_readv(w->t[r].pid, &l, 1, &rm, 1, 0) == (ssize_t)sizeof v;
    }
    return 1;
}

static void win_destroy(struct aptus_win *w)
{
    rma_rdma_teardown(w);
    rma_agent_stop(w);
    if (w->seg)
        munmap(w->seg, w->seg_size);
    if (w->alloc_owned)
        free(w->base);
    if (w->comm)
        aptus_comm_release(w->comm);
    if (w->info != MPI_INFO_NULL)
        aptus_info_destroy(aptus_info_get(w->info));
    free(w->pend);
    while (w->nspare > 0)
        free(w->spare[--w->nspare]);
    free(w->lb_types);
    for (int i = 0; i < w->nregions; i++)
        if (w->regions[i].mh)
            rma_rdma_channel()->mem_dereg(w->regions[i].mh);
    free(w->regions);
    for (int r = 0; w->t && r < w->size; r++)
        free(w->t[r].dyn);
    free(w->start);
    free(w->post);
    for (int r = 0; w->t && r < w->size; r++)
        free(w->t[r].batch);
    free(w->t);
    aptus_errh_release(w->errh);
    w->magic = 0;
    aptus_obj_free(APTUS_OBJ_WIN, w);
}

int aptus_win_make(int flavor, void *base, MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, struct aptus_comm *comm,
                   void *baseptr, struct aptus_win **out, const char **why)
{
    *out = NULL;
    *why = "out of memory";
    struct aptus_win *w = aptus_obj_alloc(APTUS_OBJ_WIN, sizeof *w);
    if (!w)
        return MPI_ERR_NO_MEM;
    w->magic = APTUS_MAGIC_WIN;
    w->handle = (MPI_Win)w;
    w->flavor = flavor;
    w->model = MPI_WIN_UNIFIED;
    w->info = MPI_INFO_NULL;
    w->wsize = flavor == MPI_WIN_FLAVOR_DYNAMIC ? 0 : size;
    w->disp_unit = disp_unit;
    w->errh = &aptus_errh_fatal; /* a window's default handler (MPI 4.1, 9.3) */
    w->errh->refcount++;
    int n = comm->size;
    int *world = malloc(sizeof *world * (size_t)n);
    if (!world) {
        aptus_obj_free(APTUS_OBJ_WIN, w);
        return MPI_ERR_NO_MEM;
    }
    for (int i = 0; i < n; i++)
        world[i] = aptus_comm_world_rank(comm, i);
    int rc = aptus_comm_create_from(comm, world, n, &w->comm);
    free(world);
    if (rc) {
        aptus_obj_free(APTUS_OBJ_WIN, w);
        *why = "cannot make the window's communicator";
        return rc;
    }
    w->rank = w->comm->rank;
    w->size = w->comm->size;
    snprintf(w->comm->name, sizeof w->comm->name, "window of %.100s", comm->name);
    w->t = calloc((size_t)n, sizeof *w->t);
    struct rank_info *ri = calloc((size_t)n, sizeof *ri);
    uint64_t *ctrl_addr = calloc((size_t)n, sizeof *ctrl_addr);
    if (!w->t || !ri || !ctrl_addr) {
        free(ri);
        free(ctrl_addr);
        win_destroy(w);
        return MPI_ERR_NO_MEM;
    }
    struct rank_info mine = { (uint64_t)(uintptr_t)base, (uint64_t)size,         (int64_t)disp_unit,
                              (int32_t)aptus_rt.pid,     (int32_t)aptus_rt.node, aptus_proc_job(),
                              rma_rdma_channel() != NULL };
    rc = aptus_allgather_internal(w->comm, &mine, ri, sizeof mine);
    /* the node's ranks, in rank order: the layout of the segment */
    int nlocal = 0, li = 0, leader = -1;
    for (int r = 0; r < n && !rc; r++) {
        w->t[r].size = ri[r].size;
        w->t[r].disp_unit = ri[r].disp_unit;
        w->t[r].world = aptus_comm_world_rank(w->comm, r);
        w->t[r].pid = ri[r].pid;
        w->t[r].base = ri[r].base;
        if (SAME_NODE(ri[r], mine)) {
            if (leader < 0)
                leader = r;
            if (r == w->rank)
                li = nlocal;
            nlocal++;
        }
    }
    w->nlocal = nlocal;
    if (flavor == MPI_WIN_FLAVOR_SHARED && !rc && nlocal != n) {
        free(ri);
        free(ctrl_addr);
        win_destroy(w);
        *why = "the processes of the communicator are not all on one node (shared memory cannot span nodes)";
        return MPI_ERR_RMA_SHARED;
    }
    /* segment: control slots, then the memory of the allocating flavors */
    size_t pg = page_size(), ctrl_bytes = round_up((size_t)nlocal * RMA_CTRL_STRIDE, pg), total = ctrl_bytes;
    size_t *off = calloc((size_t)n, sizeof *off);
    int noncontig = 0;
    const char *nc = info != MPI_INFO_NULL ? aptus_info_lookup(aptus_info_get(info), "alloc_shared_noncontig") : NULL;
    if (nc && !strcmp(nc, "true"))
        noncontig = 1;
    if (!off && !rc)
        rc = MPI_ERR_NO_MEM;
    for (int r = 0; r < n && !rc; r++) {
        if (!SAME_NODE(ri[r], mine))
            continue;
        if (flavor == MPI_WIN_FLAVOR_ALLOCATE || (flavor == MPI_WIN_FLAVOR_SHARED && noncontig))
            total = round_up(total, pg);
        off[r] = total;
        if (flavor == MPI_WIN_FLAVOR_ALLOCATE || flavor == MPI_WIN_FLAVOR_SHARED)
            total += (size_t)ri[r].size;
    }
    if (!rc)
        rc = seg_setup(w, leader >= 0 ? w->t[leader].world : aptus_rt.rank, total ? total : pg, w->rank == leader, why);
    if (rc) {
        free(ri);
        free(ctrl_addr);
        free(off);
        win_destroy(w);
        return rc;
    }
    int k = 0;
    for (int r = 0; r < n; r++) {
        struct rma_target *t = &w->t[r];
        if (!SAME_NODE(ri[r], mine)) {
            t->path = RMA_PATH_AM;
            continue;
        }
        t->ctrl = (struct rma_ctrl *)(void *)(w->seg + (size_t)k * RMA_CTRL_STRIDE);
        k++;
        if (flavor == MPI_WIN_FLAVOR_ALLOCATE || flavor == MPI_WIN_FLAVOR_SHARED) {
            t->path = RMA_PATH_SHARED;
            t->local = w->seg + off[r];
        } else {
            t->path = RMA_PATH_CMA;
        }
    }
    (void)li;
    free(off);
    if (flavor == MPI_WIN_FLAVOR_ALLOCATE || flavor == MPI_WIN_FLAVOR_SHARED) {
        w->base = w->t[w->rank].local;
        if (size == 0)
            w->base = NULL;
        *(void **)baseptr = w->base;
        /* the address of the memory in each process differs: targets on the node are reached by
         * `local`, the others by offsets */
    } else {
        w->base = base;
    }
    /* Cross Memory Attach, for create and dynamic windows: tried once */
    if (flavor == MPI_WIN_FLAVOR_CREATE || flavor == MPI_WIN_FLAVOR_DYNAMIC) {
        uint64_t a = (uint64_t)(uintptr_t)w->t[w->rank].ctrl;
        rc = aptus_allgather_internal(w->comm, &a, ctrl_addr, sizeof a);
        if (!rc && !cma_probe(w, ctrl_addr))
            for (int r = 0; r < n; r++)
                if (w->t[r].path == RMA_PATH_CMA && r != w->rank)
                    w->t[r].path = RMA_PATH_AM;
    }
    /* RDMA: windows spanning nodes register their memory with the RC channel, if there is one (a
     * dynamic window its control slot, whose table of regions origins read to find their keys) */
    int nodes_many = 0, all_rdma = 1;
    for (int r = 0; r < n; r++) {
        nodes_many |= !SAME_NODE(ri[r], ri[0]);
        all_rdma &= ri[r].rdma != 0;
    }
    w->spans = nodes_many;
    free(ri);
    free(ctrl_addr);
    if (!rc)
        rc = rma_rdma_setup(w, nodes_many && all_rdma, size); /* (collective: alike on every member) */
    if (!rc)
        rc = rma_agent_start(w);
    /* MPI 4.1's mpi_accumulate_granularity: up to 8 bytes asks for atomicity per element (CPU
     * atomics in the node segment); 0 (the default) or more leaves the choice to us: the target's
     * accumulate lock around whole operations (docs/DESIGN.md) */
    const char *gran =
        info != MPI_INFO_NULL ? aptus_info_lookup(aptus_info_get(info), "mpi_accumulate_granularity") : NULL;
    if (gran) {
        long g = strtol(gran, NULL, 10);
        w->acc_fine = g >= 1 && g <= 8;
    }
    if (!rc && info != MPI_INFO_NULL) {
        struct aptus_info *d = aptus_info_dup(aptus_info_get(info));
        if (d)
            w->info = (MPI_Info)d;
    }
    if (rc) {
        win_destroy(w);
        return rc;
    }
    rma_stats.windows++;
    *out = w;
    return 0;
}

int aptus_win_free(struct aptus_win *w, const char **why)
{
    if (w->nlocks || w->lock_all || w->start || w->post) {
        *why = w->post || w->start ? "an access or exposure epoch (MPI_Win_start / MPI_Win_post) is still open"
                                   : "a passive-target epoch (MPI_Win_lock / MPI_Win_lock_all) is still open";
        return MPI_ERR_RMA_SYNC;
    }
    int rc = aptus_win_flush(w, -1, 0, why), rc3 = rma_defer_drain(w);
    if (!rc && rc3) {
        rc = rc3;
        *why = "a target did not answer";
    }
    int rc2 = aptus_barrier(w->comm);
    if (!rc)
        rc = rc2;
    win_destroy(w);
    return rc;
}

int aptus_win_shared_query(struct aptus_win *w, int rank, MPI_Aint *size, MPI_Aint *disp_unit, void *baseptr,
                           const char **why)
{
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC) {
        *why = "a dynamic window has no memory segments to query";
        return MPI_ERR_RMA_FLAVOR;
    }
    if (rank == MPI_PROC_NULL) {
        rank = 0;
        for (int r = 0; r < w->size; r++)
            if (w->t[r].size > 0) {
                rank = r;
                break;
            }
    }
    const struct rma_target *t = &w->t[rank];
    if (t->path != RMA_PATH_SHARED) {
        /* not in memory this process can load and store (MPI 4.1: size 0, no pointer) */
        *size = 0;
        *disp_unit = t->disp_unit;
        *(void **)baseptr = NULL;
        return 0;
    }
    *size = (MPI_Aint)t->size;
    *disp_unit = (MPI_Aint)t->disp_unit;
    *(void **)baseptr = t->size ? t->local : NULL; /* (a segment of no bytes has no address) */
    return 0;
}
