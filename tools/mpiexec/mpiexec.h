/* mpiexec's internal header: the job's state and the functions its files share.
 *
 *   mpiexec -n N [--ppn K] [--hosts H,...|-f FILE] [--launcher fork|ssh|netns] ... prog args...
 *
 * Every rank runs in its own process group with PR_SET_PDEATHSIG=SIGKILL; its starter (mpiexec
 * itself, or the proxy of its host) is a child subreaper, so descendants that lose their parent
 * come back to it and are killed at the end. Output of each rank goes through pipes and is
 * written whole lines at a time.
 *
 * Launch across hosts (docs/DESIGN.md, "Launch across hosts"): with the ssh or netns launcher,
 * mpiexec starts one proxy per host (this program with --proxy, through ssh or `ip netns exec`),
 * which connects back over TCP (the control connection, ctl.h), receives the job, forks that
 * host's ranks as above, relays their output in whole lines and reports their exit statuses.
 * The ranks connect to mpiexec's PMI server themselves, over TCP (PMI_PORT).
 *
 * The files, by job:
 *   mpiexec.c        main: the steps of a run, the job's state, small helpers
 *   options.c        the command line (options, environment, --help) and rank placement
 *   launch_local.c   the fork launcher: ranks forked here, each wired to the PMI server
 *   launch_remote.c  the ssh and netns launchers, mpiexec's side: a proxy per host, the control
 *                    connections, ranks connecting to the PMI port
 *   proxy.c          the proxy (mpiexec --proxy on each host): starts and reports its ranks
 *   job.c            the event loop, what a rank's end means for the job, its termination
 *   output.c         forwarding of the ranks' output (whole lines) and of stdin to rank 0
 *   signals.c        signals: caught through a pipe, forwarded to the ranks
 *   cleanup.c        no orphans, no files: the watchdog, leftover descendants, shared memory
 *   bind.c           binding ranks to CPUs from the host's topology (hwloc)
 *   pmiserv.c        the PMI-2 server;  hosts.c  host lists, placement;  ctl.c  control records
 *   spawn.c          MPI_Comm_spawn: the PMI-2 spawn command, the jobs it starts
 *   names.c          the name service (MPI_Publish_name, MPI_Lookup_name) of the run
 *   app_exec.c       mpiexec --app-exec: a rank of a spawned job runs its command
 */
#ifndef APTUS_MPIEXEC_H
#define APTUS_MPIEXEC_H

#include "ctl.h"
#include "hosts.h"
#include "pmiserv.h"

#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <sys/types.h>
#include <time.h>

#define OUT_MAX_LINE    (1024 * 1024) /* a longer "line" is written in pieces */
#define KILL_GRACE_MS   1000          /* SIGTERM -> SIGKILL after a failure */
#define SIGNAL_GRACE_MS 2000          /* forwarded signal -> SIGKILL */
#define DRAIN_MS        2000          /* after the last rank: wait this long for pipes to close */
#define CONNECT_MS      60000         /* a proxy must connect back within this time */
#define PENDING_MS      10000         /* an accepted connection must say who it is within this */
#define FORCE_MS        5000          /* after SIGKILL was sent: give up on silent proxies */
#define PMI_DRAIN_MS    1000          /* a remote rank ended: wait this long for its PMI EOF */
#define LOST_GRACE_MS   500           /* an abort caused by a lost peer waits this long for news of it */

enum { LAUNCH_FORK, LAUNCH_SSH, LAUNCH_NETNS };
/* --bind-to and --map-by (bind.c) */
enum { BIND_DEFAULT = -1, BIND_NONE, BIND_HWTHREAD, BIND_CORE, BIND_NUMA, BIND_SOCKET };
enum { MAP_CORE, MAP_HWTHREAD, MAP_NUMA, MAP_SOCKET, MAP_NODE };
extern const char *const launcher_names[3];

/* mpiexec's view of one host's proxy (ssh/netns launchers). */
struct hoststate {
    pid_t lpid; /* launcher child (ssh, or the proxy itself under ip netns exec); 0 once reaped */
    int fd;     /* control connection; -1 before the proxy connected and once closed */
    struct ctlbuf in;
    int connected; /* said hello */
    int done;      /* sent 'D': its ranks are gone and its host is clean */
    int nrunning;  /* its ranks not yet reported ended */
};

/* An accepted connection that has not said who it is yet. */
struct pending {
    int fd;
    int pmi; /* 1: on the PMI port (a rank), 0: on the control port (a proxy) */
    char *buf;
    size_t len, cap;
    int answered; /* PMI: the init line was answered */
    struct timespec until;
};

struct outstream {
    int fd;   /* read end, -1 when closed */
    int dest; /* 1 or 2 */
    char *buf;
    size_t len, cap;
    int midline; /* a piece of the current line was already written */
};

struct rankproc {
    pid_t pid; /* local process (0 for a rank on another host's proxy) */
    long rpid; /* its pid on the proxy's host, as reported */
    int node;
    int running; /* not yet reaped */
    int status;
    struct outstream out[2];
};

/* The job, as this process sees it (mpiexec, or a proxy: J.proxy). One per process; defined in
 * mpiexec.c. */
struct mpx_job {
    int n;
    long universe; /* --universe-size (0: the hosts' slots, or this machine's CPUs, at least n) */
    int ppn;
    int prefix;
    int verbose;
    double timeout;
    double connect_timeout; /* seconds a proxy has to connect back (0: CONNECT_MS) */
    char **argv;
    char jobid[32];
    char *mapping; /* PMI_process_mapping */
    int *node_of;
    struct rankproc *r;
    struct pmisrv srv;
    int nrunning;
    /* termination */
    int terminating;
    int cause_set;
    int exit_code;
    int kill_sent;
    struct timespec kill_at;
    int signals_seen;
    int lost_held; /* an abort that names a lost peer waits for news of that peer (job.c) */
    struct timespec lost_until;
    /* stdin forwarding to rank 0 when stdin is a terminal */
    int stdin_fwd; /* pipe write end to rank 0, -1 if none */
    char inbuf[4096];
    size_t inlen;
    int stdin_open;
    int out_dead[3]; /* our stdout/stderr gave EPIPE */
    pid_t watchdog;
    int watchdog_fd; /* write end: rank pids go to the watchdog */
    /* binding (bind.c): the options, and for the ranks this process forks their CPUs */
    int bind, bind_overload, map, cpus_per_rank, report_bindings;
    cpu_set_t *cpus;
    int *bound; /* the kind of binding of each rank (0: none) */
    /* placement */
    struct mpx_hostlist hosts;
    int *host_of; /* index in hosts of every rank (NULL without a host list) */
    int *lrank;   /* local rank of every rank (its index among its node's ranks) */
    int *lsize;   /* number of ranks on every rank's node */
    int nnodes;
    /* launch across hosts (mpiexec side) */
    int remote; /* ranks are started by per-host proxies */
    int launcher;
    char **lexec; /* --launcher-exec split in words (NULL: ssh -x -o BatchMode=yes) */
    struct hoststate *hs;
    int pmi_lfd, ctl_lfd;
    int pmi_port, ctl_port;
    char addrs[1024]; /* addresses the proxies try, comma-separated */
    char cookie[40];
    struct pending *pend;
    int npend, cappend;
    struct timespec connect_until, force_at;
    char cwd[PATH_MAX];
    /* proxy mode */
    int proxy;
    int ctl_fd;
    struct ctlbuf ctl_in;
    char proxy_host[256];
    char pmi_addr[300]; /* PMI_PORT for the ranks */
    /* a job started by MPI_Comm_spawn (spawn.c): the first mpiexec's socket, -1 for that one */
    int uplink;
    struct ctlbuf up_in;
    int ready_sent;
    char spawner[48];
};
extern struct mpx_job J;

/* mpiexec.c: small helpers */
void msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void now(struct timespec *t);
void add_ms(struct timespec *t, long ms);
long ms_until(const struct timespec *t);
/* Milliseconds a proxy has to connect back (--connect-timeout, else CONNECT_MS). */
long connect_ms(void);
void set_nonblock(int fd);

/* options.c: parses the command line into J. Returns -1 to go on, else the exit status. */
int options_parse(int argc, char **argv, const char **iface);
int parse_count(const char *s, long lo, long hi, long *out);
/* Places the ranks on nodes (J.node_of, host_of, lrank, lsize, nnodes, mapping). 0 or -1. */
int place_ranks(void);

/* job.c: the event loop and the job's outcome */
void event_loop(void);
/* Records the job's outcome (the first one wins) and stops the job. */
void job_fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void start_terminating(long grace_ms);
void signal_ranks(int sig);
/* A rank's process has ended (reaped here, or reported by its host's proxy). */
void rank_ended(int i, int status);

/* signals.c */
extern int sigpipe_fds[2];
void setup_signals(void);
void handle_signal(int sig);
void reset_child_signals(void);

/* output.c */
void emit(int rank, struct outstream *o, const char *data, size_t n, int complete);
void read_stream(int rank, struct outstream *o);
void close_stream(int rank, struct outstream *o);
void stdin_read(void);
void stdin_write(void);

/* bind.c: the options' values (0, or -1 after a message); the CPUs of the ranks this process
 * forks, ranks[0..nlocal) in their order on this host (0, or the exit status after a message);
 * in the child, the binding of one. */
int bind_option(const char *val);
int map_option(const char *val);
int bind_plan(const int *ranks, int nlocal);
void bind_apply(int rank);
/* Whole cores of this host, want of them, none of whose CPUs is in busy: their CPUs in out. 0, or
 * -1 when there are not so many (or no hwloc). */
int bind_free_cores(const cpu_set_t *busy, int want, cpu_set_t *out);

/* launch_local.c */
_Noreturn void child_fail(const char *what);
_Noreturn void exec_rank(int rank, pid_t parent, int pmi_fd, int in_fd, int out_fd, int err_fd);
int spawn_all(void);

/* launch_remote.c */
int host_is_local(const char *name);
int all_hosts_local(void);
/* Listening sockets, the server's slots and the hosts' state for a launch through proxies.
 * Returns 0 or the exit status. */
int remote_prepare(const char *iface);
const char *launcher_desc(int h);
int launch_host(int h);
void host_abandon(int h);
void host_send_signal(int h, int sig);
void accept_conns(int lfd, int pmi);
void pending_drop(int k, int close_fd);
void pending_service(int fd);
void host_service(int h);
void launcher_ended(int h, int status);
void drain_pmi(int i);
int hosts_busy(void);

/* proxy.c */
int proxy_main(int argc, char **argv);
/* mpiexec --app-exec (app_exec.c): a rank of a job MPI_Comm_spawn started runs its command. */
int app_exec_main(void);
/* MPI_UNIVERSE_SIZE, APTUS_MPIEXEC (and the launcher, when not fork) in mpiexec's environment,
 * which the ranks and the jobs MPI_Comm_spawn starts inherit (options.c). */
void universe_export(void);
void proxy_lost(void);
void proxy_ctl_service(void);

/* spawn.c: the PMI-2 spawn command and the jobs it starts */
void spawn_identity(void);  /* early: the uplink and job id of a spawned job's mpiexec */
void spawn_init(void);      /* once the PMI server is set up */
int spawn_live(void);       /* jobs started here still running */
void spawn_signal(int sig); /* to the started jobs' mpiexecs */
int spawn_poll_count(void); /* descriptors spawn_poll_add may add, at most */
void spawn_poll_add(void (*add)(int fd, int who));
void spawn_service(int who); /* who: the started job, or -1 for the uplink */
void spawn_progress(void);   /* after the PMI server's work */
long spawn_wait_ms(void);    /* until a spawn's wait for room is over (-1: none waits) */
int spawn_reaped(pid_t pid, int status);
/* Answers a request the first mpiexec took (of a rank of its job, req_sub -1, or of a job it
 * started): cmd (the response's name), rc, errmsg and a key=val pair when not NULL. */
void first_answer(int req_sub, int rank, const char *cmd, int rc, const char *errmsg, const char *key, const char *val);

/* names.c: the run's name service (MPI_Publish_name ...), in the first mpiexec */
void names_request(int req_sub, int rank, const char *cmd, const char *service, const char *port, const char *dir);
void names_cleanup(void); /* at the end: the run's names leave the shared directory */

/* cleanup.c */
void start_watchdog(void);
void watchdog_add(pid_t pid);
void stop_watchdog(void);
void kill_descendants(void);
void cleanup_shm(void);

#endif
