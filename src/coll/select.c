/* Algorithm names and the APTUS_COLL_<KIND>_ALG variables that force one (docs/TUNING.md).
 * The automatic choice by message size and communicator size is made by each collective. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "coll/coll.h"
#include "coll/coll_internal.h"
#include "coll/nbc.h"
#include "core/errors.h"
#include "runtime/config.h"
#include "runtime/json.h"
#include "runtime/text.h"

static const char *const alg_names[] = {
    [ALG_AUTO] = "auto",
    [ALG_BINOMIAL] = "binomial",
    [ALG_SCATTER_ALLGATHER] = "scatter_allgather",
    [ALG_RABENSEIFNER] = "rabenseifner",
    [ALG_RECURSIVE_DOUBLING] = "recursive_doubling",
    [ALG_REDUCE_BCAST] = "reduce_bcast",
    [ALG_BRUCK] = "bruck",
    [ALG_RING] = "ring",
    [ALG_LINEAR] = "linear",
    [ALG_PAIRWISE] = "pairwise",
    [ALG_RECURSIVE_HALVING] = "recursive_halving",
    [ALG_REDUCE_SCATTERV] = "reduce_scatterv",
    [ALG_BATCHED] = "batched",
    [ALG_PIPELINED] = "pipelined",
};

const char *aptus_coll_alg_name(int alg)
{
    return alg >= 0 && alg < (int)(sizeof alg_names / sizeof alg_names[0]) ? alg_names[alg] : "?";
}

#define ALG_COUNT ((int)(sizeof alg_names / sizeof alg_names[0]))

struct kind_desc {
    const char *var;
    const char *name; /* in the statistics */
    int algs[5];      /* the algorithms that may be forced, 0-terminated */
};

static const struct kind_desc kinds[COLL_KIND_COUNT] = {
    [COLL_BCAST] = { "APTUS_COLL_BCAST_ALG",
                     "bcast",
                     { ALG_BINOMIAL, ALG_SCATTER_ALLGATHER, ALG_PIPELINED, ALG_LINEAR } },
    [COLL_REDUCE] = { "APTUS_COLL_REDUCE_ALG", "reduce", { ALG_BINOMIAL, ALG_RABENSEIFNER } },
    [COLL_ALLREDUCE] = { "APTUS_COLL_ALLREDUCE_ALG",
                         "allreduce",
                         { ALG_RECURSIVE_DOUBLING, ALG_RABENSEIFNER, ALG_REDUCE_BCAST } },
    [COLL_ALLGATHER] = { "APTUS_COLL_ALLGATHER_ALG", "allgather", { ALG_RECURSIVE_DOUBLING, ALG_BRUCK, ALG_RING } },
    [COLL_ALLTOALL] = { "APTUS_COLL_ALLTOALL_ALG", "alltoall", { ALG_BRUCK, ALG_LINEAR, ALG_PAIRWISE, ALG_BATCHED } },
    [COLL_GATHER] = { "APTUS_COLL_GATHER_ALG", "gather", { ALG_BINOMIAL, ALG_LINEAR } },
    [COLL_SCATTER] = { "APTUS_COLL_SCATTER_ALG", "scatter", { ALG_BINOMIAL, ALG_LINEAR } },
    [COLL_REDUCE_SCATTER] = { "APTUS_COLL_REDUCE_SCATTER_ALG",
                              "reduce_scatter",
                              { ALG_RECURSIVE_HALVING, ALG_REDUCE_SCATTERV } },
};

/* How often each algorithm of each kind ran on this rank (APTUS_STATS=1 prints them): one
 * relaxed atomic add per collective call, never on the point-to-point path. */
static uint64_t alg_runs[COLL_KIND_COUNT][ALG_COUNT];

void aptus_coll_ran(int kind, int alg)
{
    if (kind >= 0 && kind < COLL_KIND_COUNT && alg >= 0 && alg < ALG_COUNT)
        __atomic_fetch_add(&alg_runs[kind][alg], 1, __ATOMIC_RELAXED);
}

void aptus_coll_stats_print(int rank)
{
    uint64_t started, steps, replayed, handed;
    aptus_nbc_counts(&started, &steps, &replayed, &handed);
    if (started)
        printf("[aptus stats] rank %d: schedules (nonblocking and persistent collectives): %llu started, %llu steps "
               "run, %llu replayed from the cache\n",
               rank, (unsigned long long)started, (unsigned long long)steps, (unsigned long long)replayed);
    if (handed)
        printf("[aptus stats] rank %d: schedules left whole to the progress thread (own core): %llu\n", rank,
               (unsigned long long)handed);
    for (int k = 0; k < COLL_KIND_COUNT; k++)
        for (int a = 0; a < ALG_COUNT; a++) {
            uint64_t n = __atomic_load_n(&alg_runs[k][a], __ATOMIC_RELAXED);
            if (n)
                printf("[aptus stats] rank %d: collective %s %s: %llu\n", rank, kinds[k].name, alg_names[a],
                       (unsigned long long)n);
        }
}

void aptus_coll_stats_json(struct aptus_json *j)
{
    uint64_t started, steps, replayed, handed;
    aptus_nbc_counts(&started, &steps, &replayed, &handed);
    aptus_json_object(j, "collectives");
    aptus_json_object(j, "schedules");
    aptus_json_u64(j, "started", started);
    aptus_json_u64(j, "steps", steps);
    aptus_json_u64(j, "replayed", replayed);
    aptus_json_u64(j, "left_to_progress_thread", handed);
    aptus_json_close(j);
    /* {"KIND": {"ALGORITHM": runs}} for the algorithms that ran */
    aptus_json_object(j, "algorithms");
    for (int k = 0; k < COLL_KIND_COUNT; k++) {
        int any = 0;
        for (int a = 0; a < ALG_COUNT; a++) {
            uint64_t n = __atomic_load_n(&alg_runs[k][a], __ATOMIC_RELAXED);
            if (!n)
                continue;
            if (!any++)
                aptus_json_object(j, kinds[k].name);
            aptus_json_u64(j, alg_names[a], n);
        }
        if (any)
            aptus_json_close(j);
    }
    aptus_json_close(j);
    aptus_json_close(j);
}

static const char *kind_value(int kind)
{
    switch (kind) {
    case COLL_BCAST: return aptus_config.coll_bcast_alg;
    case COLL_REDUCE: return aptus_config.coll_reduce_alg;
    case COLL_ALLREDUCE: return aptus_config.coll_allreduce_alg;
    case COLL_ALLGATHER: return aptus_config.coll_allgather_alg;
    case COLL_ALLTOALL: return aptus_config.coll_alltoall_alg;
    case COLL_GATHER: return aptus_config.coll_gather_alg;
    case COLL_SCATTER: return aptus_config.coll_scatter_alg;
    case COLL_REDUCE_SCATTER: return aptus_config.coll_reduce_scatter_alg;
    default: return NULL;
    }
}

/* The value last parsed for each kind (its address: the configuration is read once at
 * MPI_Init, so an unchanged pointer means an unchanged value) and the result. */
static struct {
    const char *seen;
    int alg;
} cache[COLL_KIND_COUNT];

static int parse(int kind, const char *v)
{
    size_t len = strlen(v);
    /* blanks around the name are ignored, like for the other variables */
    while (len && (*v == ' ' || *v == '\t')) {
        v++;
        len--;
    }
    while (len && (v[len - 1] == ' ' || v[len - 1] == '\t' || v[len - 1] == '\n'))
        len--;
    if (len == 0 || aptus_text_eq_nocase(v, len, "auto"))
        return ALG_AUTO;
    for (int i = 0; i < 4 && kinds[kind].algs[i]; i++)
        if (aptus_text_eq_nocase(v, len, alg_names[kinds[kind].algs[i]]))
            return kinds[kind].algs[i];
    return -1;
}

int aptus_coll_forced(int kind, struct aptus_comm *c, const char *fn, int *rc)
{
    const char *v = kind_value(kind);
    if (!v)
        return ALG_AUTO;
    if (cache[kind].seen != v) {
        cache[kind].alg = parse(kind, v);
        cache[kind].seen = v;
    }
    if (cache[kind].alg >= 0)
        return cache[kind].alg;
    char list[160];
    size_t o = (size_t)snprintf(list, sizeof list, "auto");
    for (int i = 0; i < 4 && kinds[kind].algs[i] && o < sizeof list; i++)
        o += (size_t)snprintf(list + o, sizeof list - o, "%s%s", (i + 1 < 4 && kinds[kind].algs[i + 1]) ? ", " : " or ",
                              alg_names[kinds[kind].algs[i]]);
    *rc = aptus_error(c, MPI_ERR_ARG, fn, "%s: '%.64s' is not an algorithm of this collective (use %s)",
                      kinds[kind].var, v, list);
    return -1;
}

int aptus_coll_alg_counter(int i, char *name, size_t len, uint64_t *runs)
{
    int n = 0;
    for (int k = 0; k < COLL_KIND_COUNT; k++)
        for (int a = 0; a < 5 && kinds[k].algs[a]; a++)
            if (n++ == i) {
                if (name)
                    snprintf(name, len, "coll.%s.%s", kinds[k].name, alg_names[kinds[k].algs[a]]);
                if (runs)
                    *runs = __atomic_load_n(&alg_runs[k][kinds[k].algs[a]], __ATOMIC_RELAXED);
                return 0;
            }
    return -1;
}
