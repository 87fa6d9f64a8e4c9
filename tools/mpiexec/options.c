/* The command line: options (and the environment variables standing for them), --help, the
 * program's check, and the placement of the ranks on nodes. */
#include "mpiexec.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void usage(FILE *f)
{
    fprintf(f, "Usage: mpiexec -n N [options] program [args...]\n"
               "Starts N processes of program, on this machine or on the given hosts, wired up through\n"
               "PMI-2.\n"
               "\n"
               "Options:\n"
               "  -n N, -np N        number of processes (required, N >= 1)\n"
               "  --hosts H[:S],...  hosts to run on, each with S slots (default 1); a host named twice\n"
               "                     is one host. The node of a rank is its host.\n"
               "  -f FILE            hostfile: one host[:slots] per line, '#' starts a comment\n"
               "  -usize N, --universe-size N\n"
               "                     MPI_UNIVERSE_SIZE (the processes of every job of the run, the\n"
               "                     first and those MPI_Comm_spawn starts, at once; default: the hosts'\n"
               "                     slots, or this machine's CPUs, at least -n)\n"
               "  --ppn K, -ppn K    K consecutive ranks per host (per node), host after host; without\n"
               "                     it each host takes as many consecutive ranks as it has slots.\n"
               "                     Both wrap around the host list when N exceeds the places.\n"
               "                     Without hosts: simulate nodes on this machine, ranks in blocks\n"
               "                     of K per node; default all ranks on node 0; env APTUS_PPN\n"
               "  --launcher L       how ranks are started on the hosts: fork (all on this machine; a\n"
               "                     host list then only says which ranks share a node), ssh (a proxy\n"
               "                     per host through ssh; hosts that are this machine are forked),\n"
               "                     netns (a proxy per host through 'ip netns exec HOST': hosts are\n"
               "                     network namespaces). Default: fork when every host is this\n"
               "                     machine (or no hosts are given), ssh otherwise; with hosts, env\n"
               "                     MPIEXEC_LAUNCHER (mpiexec gives its ranks its own when it is not\n"
               "                     fork: a job MPI_Comm_spawn starts on other hosts goes the same way)\n"
               "  --launcher-exec C  command used instead of ssh, called as 'C host command...'\n"
               "                     (C may have arguments: \"ssh -p 2222\"); implies --launcher ssh;\n"
               "                     env MPIEXEC_LAUNCHER_EXEC (with MPIEXEC_LAUNCHER=ssh)\n"
               "  --iface NAME       the proxies and ranks reach mpiexec at this interface's IPv4\n"
               "                     address; default: every up interface, non-loopback first (each\n"
               "                     proxy takes the first it can reach), loopback only when all hosts\n"
               "                     are this machine; env MPIEXEC_IFACE\n"
               "  --bind-to W        bind each rank to the CPUs of W: none, hwthread, core, numa or\n"
               "                     socket (package); W:overload-allowed lets ranks share cores when a\n"
               "                     host has fewer than its ranks need. Default: core when a host's\n"
               "                     ranks fit on its cores, none when they do not, under Slurm (its\n"
               "                     binding wins) and with the netns launcher; env MPIEXEC_BIND_TO\n"
               "  --map-by W         lay a host's ranks out by core (default), hwthread, socket or numa\n"
               "                     (round-robin over them), or ranks over the hosts by node (round-\n"
               "                     robin: rank r on host r mod hosts); env MPIEXEC_MAP_BY\n"
               "  --cpus-per-rank C  C cores for each rank (a progress thread then has a core of its\n"
               "                     own: APTUS_ASYNC_PROGRESS); env MPIEXEC_CPUS_PER_RANK\n"
               "  --report-bindings  print each rank's CPUs on stderr as it starts\n"
               "  -l, --prefix       prefix every output line with \"[rank] \"\n"
               "  --timeout S        kill the job after S seconds and exit 124;\n"
               "                     env MPIEXEC_TIMEOUT\n"
               "  --connect-timeout S  the proxy of each host must connect back within S seconds\n"
               "                     (default 60); env MPIEXEC_CONNECT_TIMEOUT\n"
               "  -v, --verbose      trace PMI traffic and process events\n"
               "  -h, --help         this text\n"
               "\n"
               "Exit status: 0 when every rank exits 0; the code given to MPI_Abort; a failing rank's\n"
               "exit code, or 128+signal if it was killed by a signal; 124 on timeout; 1 when a host\n"
               "cannot be reached or its proxy is lost; 2 for bad options.\n"
               "Each rank gets PMI_FD (on other hosts' proxies: PMI_PORT=addr:port), PMI_RANK, PMI_SIZE,\n"
               "PMI_JOBID, APTUS_NODE_ID, APTUS_LOCAL_RANK, APTUS_LOCAL_SIZE and APTUS_NUM_NODES, and\n"
               "MPI_UNIVERSE_SIZE and APTUS_MPIEXEC (the job runs under this mpiexec).\n"
               "MPI_Comm_spawn: mpiexec starts each job a spawn asks for (a copy of itself, its child,\n"
               "with mpiexec's environment; output, signals and the end go the first job's way),\n"
               "counts the universe over all of them, and ends once every job has ended. A spawned job\n"
               "that fails after it started ends every job: the exit status is then its status.\n"
               "Ranks started by a proxy get mpiexec's environment and working directory, and\n"
               "/dev/null as stdin. mpirun is the same program.\n");
}

/* A whole number in [lo, hi]: 0, or -1 for anything else. */
int parse_count(const char *s, long lo, long hi, long *out)
{
    char *e;
    long v;
    if (!s || !*s)
        return -1;
    errno = 0;
    v = strtol(s, &e, 10);
    if (errno || *e || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

static int parse_seconds(const char *s, double *out)
{
    char *e;
    double v;
    if (!s || !*s)
        return -1;
    errno = 0;
    v = strtod(s, &e);
    if (errno || *e || !(v > 0) || v > 1e7)
        return -1;
    *out = v;
    return 0;
}

/* Resolves prog like execvp would; fills a message on failure. Returns 0 or an exit code. */
static int check_program(const char *prog, char *err, size_t errlen)
{
    struct stat st;
    if (strchr(prog, '/')) {
        if (stat(prog, &st) != 0) {
            snprintf(err, errlen, "cannot run '%s': %s", prog, strerror(errno));
            return 127;
        }
        if (S_ISDIR(st.st_mode)) {
            snprintf(err, errlen, "cannot run '%s': is a directory", prog);
            return 126;
        }
        if (access(prog, X_OK) != 0) {
            snprintf(err, errlen, "cannot run '%s': %s", prog, strerror(errno));
            return 126;
        }
        return 0;
    }
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = "/usr/local/bin:/usr/bin:/bin";
    int found_noexec = 0;
    const char *p = path;
    while (1) {
        const char *colon = strchr(p, ':');
        size_t dl = colon ? (size_t)(colon - p) : strlen(p);
        char full[PATH_MAX];
        if (dl == 0)
            snprintf(full, sizeof full, "./%s", prog);
        else
            snprintf(full, sizeof full, "%.*s/%s", (int)dl, p, prog);
        if (stat(full, &st) == 0 && !S_ISDIR(st.st_mode)) {
            if (access(full, X_OK) == 0)
                return 0;
            found_noexec = 1;
        }
        if (!colon)
            break;
        p = colon + 1;
    }
    if (found_noexec) {
        snprintf(err, errlen, "cannot run '%s': Permission denied", prog);
        return 126;
    }
    snprintf(err, errlen, "cannot run '%s': command not found (not in PATH)", prog);
    return 127;
}

/* The launcher of that name, or -1. */
static int launcher_named(const char *name)
{
    for (int k = 0; k < 3; k++)
        if (!strcmp(name, launcher_names[k]))
            return k;
    return -1;
}

/* --launcher-exec as given (exported to the ranks by universe_export) */
static const char *lexec_text;

/* Splits --launcher-exec in words (spaces and tabs; no quoting). */
static char **split_words(const char *s)
{
    char *copy = strdup(s);
    char **v = calloc(33, sizeof *v);
    int n = 0;
    if (!copy || !v)
        return NULL;
    char *save = NULL;
    for (char *w = strtok_r(copy, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
        if (n == 32)
            return NULL;
        v[n++] = w;
    }
    if (n == 0)
        return NULL;
    return v;
}

/* Parses the command line into J (J.launcher, n, ppn, argv, hosts, ...) and *iface. Returns -1 to
 * go on, else the exit status (0 after --help, 2 for bad options, 126/127 for a program that
 * cannot run). */
int options_parse(int argc, char **argv, const char **iface_out)
{
    long n = -1, ppn = 0;
    int i;
    int launcher = -1;
    const char *iface = getenv("MPIEXEC_IFACE");
    lexec_text = NULL;
    char err[PATH_MAX + 256];

    const char *env_ppn = getenv("APTUS_PPN");
    if (env_ppn && *env_ppn && parse_count(env_ppn, 1, INT_MAX, &ppn) != 0) {
        msg("mpiexec: APTUS_PPN='%s' is not a positive number", env_ppn);
        return 2;
    }
    const char *env_to = getenv("MPIEXEC_TIMEOUT");
    if (env_to && *env_to && parse_seconds(env_to, &J.timeout) != 0) {
        msg("mpiexec: MPIEXEC_TIMEOUT='%s' is not a positive number of seconds", env_to);
        return 2;
    }
    const char *env_cto = getenv("MPIEXEC_CONNECT_TIMEOUT");
    if (env_cto && *env_cto && parse_seconds(env_cto, &J.connect_timeout) != 0) {
        msg("mpiexec: MPIEXEC_CONNECT_TIMEOUT='%s' is not a positive number of seconds", env_cto);
        return 2;
    }
    if (iface && !*iface)
        iface = NULL;
    long cpr = 1;
    const char *env_bind = getenv("MPIEXEC_BIND_TO"), *env_map = getenv("MPIEXEC_MAP_BY"),
               *env_cpr = getenv("MPIEXEC_CPUS_PER_RANK");
    if ((env_bind && *env_bind && bind_option(env_bind) != 0) || (env_map && *env_map && map_option(env_map) != 0))
        return 2;
    if (env_cpr && *env_cpr && parse_count(env_cpr, 1, 4096, &cpr) != 0) {
        msg("mpiexec: MPIEXEC_CPUS_PER_RANK='%s' is not a number of cores (1..4096)", env_cpr);
        return 2;
    }

    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (a[0] != '-')
            break;
        if (strcmp(a, "--") == 0) {
            i++;
            break;
        }
        /* Accept --opt and -opt alike, and --opt=value. */
        char name[64];
        const char *val = NULL;
        const char *s = a + 1;
        if (*s == '-')
            s++;
        const char *eq = strchr(s, '=');
        size_t nl = eq ? (size_t)(eq - s) : strlen(s);
        if (nl >= sizeof name) {
            msg("mpiexec: unknown option '%s' (see mpiexec --help)", a);
            return 2;
        }
        memcpy(name, s, nl);
        name[nl] = '\0';
        if (eq)
            val = eq + 1;
#define NEEDVAL()                                                                                                      \
    do {                                                                                                               \
        if (!val) {                                                                                                    \
            if (i + 1 >= argc) {                                                                                       \
                msg("mpiexec: option '%s' needs a value", a);                                                          \
                return 2;                                                                                              \
            }                                                                                                          \
            val = argv[++i];                                                                                           \
        }                                                                                                              \
    } while (0)
        if (!strcmp(name, "h") || !strcmp(name, "help")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(name, "n") || !strcmp(name, "np")) {
            NEEDVAL();
            if (parse_count(val, 1, 1 << 20, &n) != 0) {
                msg("mpiexec: -n needs a number of processes >= 1, got '%s'", val);
                return 2;
            }
        } else if (!strcmp(name, "ppn")) {
            NEEDVAL();
            if (parse_count(val, 1, INT_MAX, &ppn) != 0) {
                msg("mpiexec: --ppn needs a number >= 1, got '%s'", val);
                return 2;
            }
        } else if (!strcmp(name, "hosts") || !strcmp(name, "host")) {
            NEEDVAL();
            if (hosts_add_list(&J.hosts, val, err, sizeof err) != 0) {
                msg("mpiexec: %s", err);
                return 2;
            }
        } else if (!strcmp(name, "f") || !strcmp(name, "hostfile")) {
            NEEDVAL();
            if (hosts_read_file(&J.hosts, val, err, sizeof err) != 0) {
                msg("mpiexec: %s", err);
                return 2;
            }
        } else if (!strcmp(name, "launcher")) {
            NEEDVAL();
            if ((launcher = launcher_named(val)) < 0) {
                msg("mpiexec: unknown launcher '%s' (expected fork, ssh or netns)", val);
                return 2;
            }
        } else if (!strcmp(name, "launcher-exec")) {
            NEEDVAL();
            lexec_text = val;
            J.lexec = split_words(val);
            if (!J.lexec) {
                msg("mpiexec: --launcher-exec needs a command (at most 32 words), got '%s'", val);
                return 2;
            }
        } else if (!strcmp(name, "iface")) {
            NEEDVAL();
            iface = val;
        } else if (!strcmp(name, "bind-to")) {
            NEEDVAL();
            if (bind_option(val) != 0)
                return 2;
        } else if (!strcmp(name, "map-by")) {
            NEEDVAL();
            if (map_option(val) != 0)
                return 2;
        } else if (!strcmp(name, "cpus-per-rank") || !strcmp(name, "cpus-per-proc")) {
            NEEDVAL();
            if (parse_count(val, 1, 4096, &cpr) != 0) {
                msg("mpiexec: --cpus-per-rank needs a number of cores (1..4096), got '%s'", val);
                return 2;
            }
        } else if (!strcmp(name, "report-bindings")) {
            J.report_bindings = 1;
        } else if (!strcmp(name, "l") || !strcmp(name, "prefix")) {
            J.prefix = 1;
        } else if (!strcmp(name, "timeout")) {
            NEEDVAL();
            if (parse_seconds(val, &J.timeout) != 0) {
                msg("mpiexec: --timeout needs a positive number of seconds, got '%s'", val);
                return 2;
            }
        } else if (!strcmp(name, "connect-timeout")) {
            NEEDVAL();
            if (parse_seconds(val, &J.connect_timeout) != 0) {
                msg("mpiexec: --connect-timeout needs a positive number of seconds, got '%s'", val);
                return 2;
            }
        } else if (!strcmp(name, "usize") || !strcmp(name, "universe-size")) {
            NEEDVAL();
            if (parse_count(val, 1, 1 << 20, &J.universe) != 0) {
                msg("mpiexec: --universe-size needs a number of processes >= 1, got '%s'", val);
                return 2;
            }
        } else if (!strcmp(name, "v") || !strcmp(name, "verbose")) {
            J.verbose = 1;
        } else {
            msg("mpiexec: unknown option '%s' (see mpiexec --help)", a);
            return 2;
        }
#undef NEEDVAL
    }
    if (n < 0) {
        msg("mpiexec: missing -n N (number of processes); see mpiexec --help");
        return 2;
    }
    if (i >= argc) {
        msg("mpiexec: no program given; see mpiexec --help");
        return 2;
    }
    /* Hosts named without a launcher: the environment's (MPIEXEC_LAUNCHER, MPIEXEC_LAUNCHER_EXEC),
     * which mpiexec sets in its own environment when it is not fork (universe_export): the job
     * MPI_Comm_spawn starts on other hosts (spawn.c: a copy of mpiexec) goes the first job's way */
    const char *env_l = getenv("MPIEXEC_LAUNCHER"), *env_lx = getenv("MPIEXEC_LAUNCHER_EXEC");
    if (launcher < 0 && !J.lexec && J.hosts.n > 0 && env_l && *env_l) {
        if ((launcher = launcher_named(env_l)) < 0) {
            msg("mpiexec: MPIEXEC_LAUNCHER='%s' is not a launcher (expected fork, ssh or netns)", env_l);
            return 2;
        }
        if (launcher == LAUNCH_SSH && env_lx && *env_lx && !(J.lexec = split_words(lexec_text = env_lx))) {
            msg("mpiexec: MPIEXEC_LAUNCHER_EXEC needs a command (at most 32 words), got '%s'", env_lx);
            return 2;
        }
    }
    if (J.lexec && launcher >= 0 && launcher != LAUNCH_SSH) {
        msg("mpiexec: --launcher-exec goes with the ssh launcher, not '%s'", launcher_names[launcher]);
        return 2;
    }
    if (J.hosts.n == 0 && (launcher == LAUNCH_SSH || launcher == LAUNCH_NETNS || J.lexec)) {
        msg("mpiexec: the %s launcher needs hosts (--hosts or -f)", J.lexec ? "ssh" : launcher_names[launcher]);
        return 2;
    }
    if (launcher < 0)
        launcher = J.lexec ? LAUNCH_SSH : (J.hosts.n > 0 && !all_hosts_local()) ? LAUNCH_SSH : LAUNCH_FORK;
    J.launcher = launcher;
    J.n = (int)n;
    J.ppn = (int)ppn;
    J.cpus_per_rank = (int)cpr;
    J.argv = argv + i;
    if (launcher != LAUNCH_SSH) {
        int rc = check_program(J.argv[0], err, sizeof err);
        if (rc) {
            msg("mpiexec: %s", err);
            return rc;
        }
    }

    *iface_out = iface;
    return -1;
}

void universe_export(void)
{
    /* MPI_UNIVERSE_SIZE: --universe-size; else one set by whoever started mpiexec (a job that
     * MPI_Comm_spawn started inherits its parents'); else the slots the hosts name, or this
     * machine's CPUs, and at least the job. */
    const char *env = getenv("MPI_UNIVERSE_SIZE");
    long u = J.universe;
    if (!u && !(env && *env)) {
        if (J.hosts.n > 0)
            for (int h = 0; h < J.hosts.n; h++)
                u += J.hosts.h[h].slots;
        else
            u = sysconf(_SC_NPROCESSORS_ONLN);
        if (u < J.n)
            u = J.n;
    }
    if (u) {
        char v[24];
        snprintf(v, sizeof v, "%ld", u);
        setenv("MPI_UNIVERSE_SIZE", v, 1);
    }
    if (J.launcher != LAUNCH_FORK) {
        setenv("MPIEXEC_LAUNCHER", launcher_names[J.launcher], 1);
        if (lexec_text)
            setenv("MPIEXEC_LAUNCHER_EXEC", lexec_text, 1);
    }
    /* (the ranks know they run under this mpiexec: MPI_Comm_spawn asks it, tools/mpiexec/spawn.c) */
    char self[PATH_MAX];
    ssize_t k = readlink("/proc/self/exe", self, sizeof self - 1);
    if (k > 0) {
        self[k] = '\0';
        setenv("APTUS_MPIEXEC", self, 1);
    }
}

/* Placement: node_of, local ranks and sizes, PMI_process_mapping. Returns 0 or -1 (out of
 * memory, said). */
int place_ranks(void)
{
    J.node_of = malloc((size_t)J.n * sizeof *J.node_of);
    J.lrank = malloc((size_t)J.n * sizeof *J.lrank);
    J.lsize = malloc((size_t)J.n * sizeof *J.lsize);
    J.host_of = malloc((size_t)J.n * sizeof *J.host_of);
    J.r = calloc((size_t)J.n, sizeof *J.r);
    if (!J.node_of || !J.lrank || !J.lsize || !J.host_of || !J.r) {
        msg("mpiexec: out of memory");
        return 1;
    }
    if (J.hosts.n > 0) {
        J.nnodes = hosts_place(&J.hosts, J.n, J.ppn, J.host_of, J.node_of);
        if (J.map == MAP_NODE) { /* round-robin over the hosts (a node per host) */
            J.nnodes = J.hosts.n < J.n ? J.hosts.n : J.n;
            for (int k = 0; k < J.n; k++)
                J.host_of[k] = J.node_of[k] = k % J.nnodes;
        }
    } else {
        J.nnodes = J.ppn > 0 ? (J.n + J.ppn - 1) / J.ppn : 1;
        for (int k = 0; k < J.n; k++) /* blocks of ppn, or round-robin (--map-by node) */
            J.node_of[k] = J.map == MAP_NODE ? k % J.nnodes : J.ppn > 0 ? k / J.ppn : 0;
    }
    {
        int *count = calloc((size_t)J.nnodes, sizeof *count);
        if (!count) {
            msg("mpiexec: out of memory");
            return 1;
        }
        for (int k = 0; k < J.n; k++)
            J.lrank[k] = count[J.node_of[k]]++;
        for (int k = 0; k < J.n; k++)
            J.lsize[k] = count[J.node_of[k]];
        free(count);
    }
    J.mapping = mapping_encode(J.node_of, J.n);
    if (!J.mapping) {
        msg("mpiexec: out of memory");
        return 1;
    }
    for (int k = 0; k < J.n; k++) {
        J.r[k].out[0].fd = J.r[k].out[1].fd = -1;
        J.r[k].out[0].dest = 1;
        J.r[k].out[1].dest = 2;
    }
    if (J.verbose) {
        msg("mpiexec: launcher %s, %d node(s), PMI_process_mapping %s", launcher_names[J.launcher], J.nnodes,
            J.mapping);
        for (int k = 0; k < J.n && J.hosts.n > 0; k++)
            msg("mpiexec: rank %d on host %s (node %d)", k, J.hosts.h[J.host_of[k]].name, J.node_of[k]);
    }
    return 0;
}
