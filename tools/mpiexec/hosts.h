/* Host lists for mpiexec: --hosts h1,h2:4 and hostfiles, rank placement, and the
 * PMI_process_mapping string that tells the ranks which node each rank is on. */
#ifndef APTUS_MPIEXEC_HOSTS_H
#define APTUS_MPIEXEC_HOSTS_H

#include <stddef.h>

struct mpx_host {
    char *name;
    int slots;  /* ranks per turn when placing without -ppn (1 unless given) */
    int nranks; /* ranks placed on it */
    int node;   /* node index of its ranks, -1 when it got none */
};

struct mpx_hostlist {
    struct mpx_host *h;
    int n;
};

/* Adds "name[:slots]"; a name seen before gets the slots added (one host, one node). Returns 0,
 * or -1 with a message naming the problem (prefixed by where, e.g. "hostfile F line 3"). */
int hosts_add(struct mpx_hostlist *l, const char *spec, const char *where, char *err, size_t errlen);
/* "h1,h2:4,...". */
int hosts_add_list(struct mpx_hostlist *l, const char *list, char *err, size_t errlen);
/* One "host[:slots]" per line; '#' starts a comment; blank lines are skipped. */
int hosts_read_file(struct mpx_hostlist *l, const char *path, char *err, size_t errlen);
/* Places n ranks: with ppn > 0, blocks of ppn consecutive ranks per host, host after host;
 * otherwise blocks of each host's slots. Both wrap around the list when there are more ranks
 * than places. Fills host_of[r] and node_of[r] (nodes: the hosts that got ranks, numbered in
 * list order) and each host's nranks/node. Returns the number of nodes. */
int hosts_place(struct mpx_hostlist *l, int n, int ppn, int *host_of, int *node_of);
/* PMI_process_mapping for node_of[0..n): "(vector,(first_node,node_count,ranks_per_node),...)",
 * the shortest repeating pattern the format allows. malloc'ed; NULL when out of memory. */
char *mapping_encode(const int *node_of, int n);
void hosts_free(struct mpx_hostlist *l);

#endif
