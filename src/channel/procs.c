/* Processes of other jobs (dynamic processes, docs/DESIGN.md "Dynamic processes"): each one this
 * process learns of (MPI_Comm_connect, MPI_Comm_accept, MPI_Comm_join) gets the next process index
 * after the world ranks, and from then on is a peer like any other, reached through shared memory
 * when it is on this node (channel/smp/smp_jobs.c), over UD, and over RC connections opened on
 * demand as with this job's ranks (channel/rc/rc.c): its card (its job's hash, its rank there, its
 * UD and RC addresses, its node, pid and shared-memory door) says how. Its datagrams and blocks
 * name it by (job hash, rank), which the table below turns back into the index. The table is made on the
 * first such process, its size fixed then (APTUS_DPM_PROCS), so the lookup needs no lock beyond
 * the library's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "channel/channel.h"
#include "channel/rules.h"
#include "channel/ud/ud_int.h"
#include "runtime/config.h"
#include "runtime/runtime.h"

int aptus_procs_net;

static struct {
    struct aptus_proc_card *card; /* index - size -> card */
    int *hash;                    /* open addressing: index + 1, 0 empty */
    unsigned mask;
} procs;

static unsigned slot_of(uint32_t job, int rank)
{
    uint64_t k = ((uint64_t)job << 32 | (uint32_t)rank) * 0x9e3779b97f4a7c15ull;
    return (unsigned)(k >> 32) & procs.mask;
}

int aptus_proc_find(uint32_t job, int rank)
{
    if (!procs.hash)
        return -1;
    for (unsigned s = slot_of(job, rank);; s = (s + 1) & procs.mask) {
        int v = procs.hash[s];
        if (!v)
            return -1;
        const struct aptus_proc_card *c = &procs.card[v - 1 - aptus_rt.size];
        if (c->job == job && c->rank == rank)
            return v - 1;
    }
}

int aptus_proc_has_addr(int idx)
{
    return procs.card && idx >= aptus_rt.size && idx < aptus_rt.procs_cap && procs.card[idx - aptus_rt.size].alen > 0;
}

const struct aptus_proc_card *aptus_proc_foreign(int idx)
{
    return idx >= aptus_rt.size && idx < aptus_rt.nprocs ? &procs.card[idx - aptus_rt.size] : NULL;
}

#ifdef APTUS_HAVE_LIBFABRIC
/* A job on one node kept the built-in chains for RDMA hardware (APTUS_SEND_RULES and
 * APTUS_ALLOC_RULES at auto) without looking at the fabric (api/startup.c); when its network
 * channels start for other jobs' processes over a sockets provider, it takes the sockets chains,
 * as a job spanning nodes does -- the ones those processes' jobs took. Before any route to them. */
static int chains_looked;
static void chains_for_network(void)
{
    if (chains_looked || aptus_ud.active)
        return;
    chains_looked = 1;
    aptus_rules_fit_fabric();
}
#endif

int aptus_proc_card_self(struct aptus_proc_card *c, int net, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    c->job = aptus_job_hash();
    c->rank = aptus_rt.rank;
    aptus_smp_card(c);
#ifdef APTUS_HAVE_LIBFABRIC
    if (!net && !aptus_ud.active && c->door >= 0)
        return 0;
    chains_for_network();
    if (aptus_ud_dyn_start(err, errlen) != 0)
        return -1;
    if (aptus_ud.d.addrlen == 0 || aptus_ud.d.addrlen > sizeof c->addr) {
        snprintf(err, errlen, "the UD channel has no address to give");
        return -1;
    }
    memcpy(c->addr, aptus_ud.d.addr, aptus_ud.d.addrlen);
    c->alen = (uint32_t)aptus_ud.d.addrlen;
    aptus_rc_card(c);
#else
    if (net) {
        snprintf(err, errlen,
                 "this build has no network channel (no libfabric), and the other group has processes that share no "
                 "memory with this one (on other nodes, or not reachable by shared memory)");
        return -1;
    }
#endif
    if (c->alen == 0 && c->door < 0) {
        snprintf(err, errlen,
                 "this build has no network channel (no libfabric) and shared memory with other jobs is off "
                 "(APTUS_SMP_JOBS=0, or it could not start here): no process of another job could reach this one");
        return -1;
    }
    return 0;
}

int aptus_proc_index(const struct aptus_proc_card *c, char *err, size_t errlen)
{
    if (c->job == aptus_job_hash()) {
        if (c->rank < 0 || c->rank >= aptus_rt.size) {
            snprintf(err, errlen, "a card names rank %d of this job, which has %d", c->rank, aptus_rt.size);
            return -1;
        }
        return c->rank;
    }
    int idx = aptus_proc_find(c->job, c->rank);
    if (idx >= 0)
        return idx;
    if (c->alen > sizeof c->addr || c->rclen > sizeof c->rcaddr) {
        snprintf(err, errlen, "a card of another job holds no usable address (%u bytes, RC %u)", c->alen, c->rclen);
        return -1;
    }
    int cap = aptus_rt.procs_cap - aptus_rt.size;
    if (aptus_rt.nprocs >= aptus_rt.procs_cap) {
        snprintf(err, errlen,
                 "this process already knows %d processes of other jobs, the most APTUS_DPM_PROCS=%d allows", cap,
                 aptus_config.dpm_procs);
        return -1;
    }
    if (!procs.hash) {
        unsigned n = 16;
        while (n < 2u * (unsigned)cap)
            n <<= 1;
        procs.card = calloc((size_t)cap, sizeof *procs.card);
        procs.hash = calloc(n, sizeof *procs.hash);
        if (!procs.card || !procs.hash) {
            free(procs.card);
            free(procs.hash);
            procs.card = NULL;
            procs.hash = NULL;
            snprintf(err, errlen, "out of memory for the table of other jobs' processes");
            return -1;
        }
        procs.mask = n - 1;
    }
    idx = aptus_rt.nprocs;
    procs.card[idx - aptus_rt.size] = *c;
    /* (a node of its own for the layers above: no segment of this job's is shared with it; the
     * smp channel may still reach it, by blocks of its own) */
    aptus_rt.node_of[idx] = -1 - idx;
    int smp = aptus_smp_proc_met(idx, c);
    if (!aptus_peer_routable(idx)) {
        if (c->alen == 0)
            snprintf(err, errlen,
                     "it has no network address (its build has no network channel) and is not on this node, or "
                     "shares no memory with this process (APTUS_SMP_JOBS)");
        else
            snprintf(err, errlen,
                     "no channel of the send rule chain (APTUS_SEND_RULES) reaches a process of another job for "
                     "every message size: those go over shared memory on one node (smp) and UD (ud-sr, "
                     "ud-zcopy)");
        return -1;
    }
    unsigned s = slot_of(c->job, c->rank);
    while (procs.hash[s])
        s = (s + 1) & procs.mask;
    procs.hash[s] = idx + 1;
    if (!smp)
        aptus_procs_net++;
    __atomic_store_n(&aptus_rt.nprocs, idx + 1, __ATOMIC_RELEASE);
    return idx;
}

static uint64_t order_key(int idx)
{
    const struct aptus_proc_card *c = aptus_proc_foreign(idx);
    return c ? (uint64_t)c->job << 32 | (uint32_t)c->rank : (uint64_t)aptus_job_hash() << 32 | (uint32_t)idx;
}

uint32_t aptus_proc_job(void)
{
    return aptus_job_hash();
}

int aptus_proc_before(int a, int b)
{
    return order_key(a) < order_key(b);
}

void aptus_procs_finalize(void)
{
    free(procs.card);
    free(procs.hash);
    memset(&procs, 0, sizeof procs);
    aptus_procs_net = 0;
#ifdef APTUS_HAVE_LIBFABRIC
    chains_looked = 0;
#endif
    if (aptus_rt.nprocs > aptus_rt.size)
        aptus_rt.nprocs = aptus_rt.size;
}
