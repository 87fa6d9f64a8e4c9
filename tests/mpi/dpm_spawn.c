/* MPI_Comm_spawn / MPI_Comm_spawn_multiple. Usage: dpm_spawn MODE [NCHILD]; the processes it
 * starts run it again with "child" first (or the second program, dpm_spawn_two).
 *   basic N     the parents spawn N copies (arguments with a space in them), root the last
 *               parent: errcodes all MPI_SUCCESS; parents and children swap messages over the
 *               intercommunicator (192 KiB ones too), broadcast and reduce over it, merge it (the children high)
 *               and put into a window over the merged communicator; then disconnect -- the
 *               children then see no parent. Children check their arguments, MPI_APPNUM,
 *               MPI_UNIVERSE_SIZE and the parent's name. With DPM_JOBS_SMP=1 (or 0) in the
 *               environment every process checks that the exchange went (or did not go)
 *               through shared memory (tests/mpi/counters.h).
 *   multiple    MPI_Comm_spawn_multiple of two programs (this one and dpm_spawn_two), 2 and 1
 *               processes with different arguments: one MPI_COMM_WORLD of 3, MPI_APPNUM 0, 0, 1
 *   nested      the child spawns a grandchild in turn; the grandchild and the child talk
 *   errors      a program that does not exist (MPI_ERR_SPAWN, every errcode MPI_ERR_SPAWN, no
 *               intercommunicator, the parents go on), a working directory that does not exist
 *               (MPI_ERR_SPAWN), a program that ends without connecting (/bin/true: the new job
 *               ends -- or, under another launcher, APTUS_SPAWN_TIMEOUT passes -- before its
 *               processes connect: MPI_ERR_SPAWN), more processes than the universe
 *               has room for (MPI_ERR_SPAWN), the same with soft=1,2 (2 started, the errcodes say
 *               which), then a spawn that works
 *   icreate     only the parents' rank 0 spawns 2 children (MPI_COMM_SELF); then
 *               MPI_Intercomm_create(MPI_COMM_WORLD, 0, that intercommunicator, 0) joins all the
 *               parents and all the children, who never met the other parents: the children
 *               send to every parent over it; then the merged communicator (parents and children
 *               of the first spawn) is split by parity and the halves joined by
 *               MPI_Intercomm_create over it, and swap messages
 *   onhost H N  (across network namespaces, tests/netns) the root -- the last parent -- spawns N
 *               children with info host=H (-: the first of $NETNS_TEST_HOSTS), the host of the parents' rank 0: the
 *               children run in rank 0's network namespace, not the root's, and the whole
 *               exchange of basic goes across hosts
 *   shared      (MPI_UNIVERSE_SIZE 4, 2 parents) every parent spawns a child of its own (MPI_COMM_SELF);
 *               while both children run, a third spawn of one process fails with MPI_ERR_SPAWN:
 *               the universe is counted over all the jobs of the run, not per parent
 *   outlive     the child goes on after its parent has disconnected and ended: mpiexec waits for
 *               it (its last line, "child outlived its parent", is printed)
 *   bound       (1 parent, on a machine of 2 CPUs or more, mpiexec binding its ranks) the child is
 *               bound to a core of its own: none of its CPUs is one of the parent's
 *   slow        (APTUS_SPAWN_TIMEOUT=2) the child sleeps 60 s before MPI_Init: the spawn fails with
 *               MPI_ERR_SPAWN after 2 s, the parents go on -- the job given up is ended by mpiexec,
 *               no failure of the run --, and a spawn after it works (the first spawn's answer,
 *               which came late, is not taken for the second's)
 *   names       the parents' rank 0 publishes a name, the child looks it up through mpiexec (the
 *               run's name service: APTUS_NAME_SERVICE names a directory that cannot be written,
 *               so only the launcher holds it), cannot unpublish it (not its own), and after the
 *               parent unpublished it finds it no more
 *   universe N  MPI_UNIVERSE_SIZE must be N (tests/launcher/slurm_spawn.sh: the allocation's CPUs)
 *   busy        (under Slurm, tests/launcher/slurm_spawn.sh: no CPU left in the allocation for the
 *               new job's step) the spawn fails with MPI_ERR_SPAWN after APTUS_SPAWN_TIMEOUT
 *   nolauncher  (a singleton: started without a launcher) a spawn fails with MPI_ERR_SPAWN and a
 *               message saying that a launcher is needed
 *   wait TOKEN  the parents spawn 2 children; then parents and children wait in receives that
 *               never complete, until tests/mpi/dpm_kill.sh kills the parents' mpiexec (every
 *               process carries TOKEN in its arguments)
 *   die [TOKEN] the child exits with status 3 while the parents wait in a receive: the parents'
 *               job must end (mpiexec's status nonzero), leaving nothing behind
 *               (tests/mpi/dpm_die.sh checks; TOKEN is passed to the child's arguments) */
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef PROGRAM
#define PROGRAM 1
#endif
#define TEST_NAME "dpm_spawn"
#include "counters.h"
#include "mtest.h"

static int size;
static char self_path[4096];

static void child_program_path(char *out, size_t len, int program)
{
    /* the two programs lie side by side */
    snprintf(out, len, "%s", self_path);
    char *slash = strrchr(out, '/');
    snprintf(slash ? slash + 1 : out, len - (size_t)(slash ? slash + 1 - out : 0), "%s",
             program == 2 ? "dpm_spawn_two" : "dpm_spawn");
}

static void traffic(MPI_Comm inter, int parent_side)
{
    int rsize, lsize;
    MPI_Comm_remote_size(inter, &rsize);
    MPI_Comm_size(inter, &lsize);
    /* every process sends its rank to every remote one and gets theirs */
    MPI_Request *q = malloc((size_t)rsize * sizeof *q);
    int me = rank + (parent_side ? 0 : 1000);
    for (int r = 0; r < rsize; r++)
        MPI_Isend(&me, 1, MPI_INT, r, 7, inter, &q[r]);
    for (int r = 0; r < rsize; r++) {
        int got = -1;
        MPI_Recv(&got, 1, MPI_INT, r, 7, inter, MPI_STATUS_IGNORE);
        EXPECT(got == r + (parent_side ? 1000 : 0), "from remote rank %d got %d", r, got);
    }
    MPI_Waitall(rsize, q, MPI_STATUSES_IGNORE);
    free(q);
    /* large messages both ways with every remote process, a few rounds (across hosts they take
     * the rendezvous channels: rc-rdma once a connection is up), each checked */
    enum { BIG = 48 * 1024, ROUNDS = 3 };
    int *out = malloc(BIG * sizeof(int)), *in = malloc(BIG * sizeof(int));
    for (int round = 0; round < ROUNDS; round++)
        for (int r = 0; r < rsize; r++) {
            pattern_fill(out, BIG, round, me);
            MPI_Sendrecv(out, BIG, MPI_INT, r, 8, in, BIG, MPI_INT, r, 8, inter, MPI_STATUS_IGNORE);
            EXPECT(pattern_intact(in, BIG, round, r + (parent_side ? 1000 : 0)),
                   "round %d: the large message from remote rank %d is wrong", round, r);
        }
    free(out);
    free(in);
    /* an intercommunicator broadcast from the parents' rank 0, an allreduce */
    int v = parent_side ? 77 : -1;
    MPI_Bcast(&v, 1, MPI_INT, parent_side ? (rank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0, inter);
    if (!parent_side)
        EXPECT(v == 77, "broadcast from the parents gave %d", v);
    int one = parent_side ? 1 : 10, sum = 0;
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, inter);
    EXPECT(sum == rsize * (parent_side ? 10 : 1), "allreduce over the intercommunicator gave %d", sum);
    /* merged, the children high: sums and one-sided puts */
    MPI_Comm m;
    MPI_Intercomm_merge(inter, !parent_side, &m);
    int mr, ms;
    MPI_Comm_rank(m, &mr);
    MPI_Comm_size(m, &ms);
    EXPECT(ms == lsize + rsize && mr == (parent_side ? rank : rsize + rank), "merged rank %d of %d", mr, ms);
    int *slots = calloc((size_t)ms, sizeof(int));
    MPI_Win w;
    MPI_Win_create(slots, (MPI_Aint)(ms * sizeof(int)), sizeof(int), MPI_INFO_NULL, m, &w);
    MPI_Win_fence(0, w);
    int val = mr * 3 + 1;
    for (int t = 0; t < ms; t++)
        MPI_Put(&val, 1, MPI_INT, t, mr, 1, MPI_INT, w);
    MPI_Win_fence(0, w);
    for (int s = 0; s < ms; s++)
        EXPECT(slots[s] == s * 3 + 1, "window slot %d holds %d", s, slots[s]);
    MPI_Win_free(&w);
    free(slots);
    MPI_Comm_free(&m);
    jobs_smp_check(rsize);
}

/* Both sides of mode icreate: `inter` is the parents' rank 0's intercommunicator with the children
 * (MPI_COMM_NULL at the other parents), or the children's parent. */
static void icreate(MPI_Comm inter, int parent_side)
{
    MPI_Comm all, merged = MPI_COMM_NULL, half, halves;
    MPI_CHECK(MPI_Intercomm_create(MPI_COMM_WORLD, 0, inter, 0, 77, &all));
    int rsize = 0;
    MPI_Comm_remote_size(all, &rsize);
    if (parent_side) {
        for (int r = 0; r < rsize; r++) {
            int v = -1;
            MPI_Recv(&v, 1, MPI_INT, r, 5, all, MPI_STATUS_IGNORE);
            EXPECT(v == 500 + r, "over the new intercommunicator child %d said %d", r, v);
        }
    } else {
        int v = 500 + rank;
        for (int r = 0; r < rsize; r++)
            MPI_Send(&v, 1, MPI_INT, r, 5, all);
    }
    /* the merged communicator of all of them, halves by parity, joined again */
    MPI_Intercomm_merge(all, !parent_side, &merged);
    int mr, ms;
    MPI_Comm_rank(merged, &mr);
    MPI_Comm_size(merged, &ms);
    MPI_Comm_split(merged, mr % 2, mr, &half);
    MPI_CHECK(MPI_Intercomm_create(half, 0, merged, (mr + 1) % 2, 78, &halves));
    int hr, hrs, got = -1;
    MPI_Comm_rank(halves, &hr);
    MPI_Comm_remote_size(halves, &hrs);
    int partner = hr < hrs ? hr : MPI_PROC_NULL;
    MPI_Sendrecv(&mr, 1, MPI_INT, partner, 6, &got, 1, MPI_INT, partner, 6, halves, MPI_STATUS_IGNORE);
    EXPECT(partner == MPI_PROC_NULL || got == (mr % 2 ? mr - 1 : mr + 1), "halves: merged rank %d got %d", mr, got);
    MPI_Comm_free(&halves);
    MPI_Comm_free(&half);
    MPI_Comm_free(&merged);
    MPI_Comm_disconnect(&all);
}

/* This process's CPUs, as a list (count returned; at most max). */
static int my_cpus(int *list, int max)
{
    cpu_set_t set;
    int n = 0;
    if (sched_getaffinity(0, sizeof set, &set) != 0)
        return 0;
    for (int c = 0; c < CPU_SETSIZE && n < max; c++)
        if (CPU_ISSET(c, &set))
            list[n++] = c;
    return n;
}

static int child(int argc, char **argv, MPI_Comm parent)
{
    int appnum = -1, *u = NULL, flag = 0, *an = NULL, len = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &an, &flag);
    if (flag)
        appnum = *an;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &u, &flag);
    char name[MPI_MAX_OBJECT_NAME];
    MPI_Comm_get_name(parent, name, &len);
    EXPECT(!strcmp(name, "MPI_COMM_PARENT"), "the parent's name is \"%s\"", name);
    EXPECT(flag && *u >= size, "MPI_UNIVERSE_SIZE %d (flag %d)", flag ? *u : -1, flag);
    const char *mode = argc > 2 ? argv[2] : "";
    if (!strcmp(mode, "basic")) {
        EXPECT(argc == 4 && !strcmp(argv[3], "two words"), "arguments: %d, last \"%s\"", argc, argv[argc - 1]);
        EXPECT(appnum == 0, "MPI_APPNUM %d", appnum);
        traffic(parent, 0);
    } else if (!strcmp(mode, "multiple")) {
        /* program 1 ("A") has ranks 0, 1 and MPI_APPNUM 0; program 2 ("B") rank 2, MPI_APPNUM 1 */
        int want = rank < 2 ? 0 : 1;
        EXPECT(size == 3 && appnum == want && PROGRAM == want + 1 && argc == 4 && argv[3][0] == "AB"[want],
               "world %d, MPI_APPNUM %d, program %d, argument \"%s\"", size, appnum, PROGRAM, argc > 3 ? argv[3] : "");
        int sum = 0;
        MPI_Allreduce(&appnum, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        EXPECT(sum == 1, "the children's MPI_APPNUMs sum to %d", sum);
        traffic(parent, 0);
    } else if (!strcmp(mode, "nested")) {
        /* spawn a grandchild, talk to it, then to the parents */
        MPI_Comm g;
        int err = -1;
        MPI_CHECK(MPI_Comm_spawn(self_path, (char *[]){ "child", "grandchild", NULL }, 1, MPI_INFO_NULL, 0,
                                 MPI_COMM_WORLD, &g, &err));
        int v = 0;
        MPI_Recv(&v, 1, MPI_INT, 0, 9, g, MPI_STATUS_IGNORE);
        EXPECT(err == MPI_SUCCESS && v == 4242, "grandchild said %d (errcode %d)", v, err);
        MPI_Comm_disconnect(&g);
        traffic(parent, 0);
    } else if (!strcmp(mode, "icreate")) {
        icreate(parent, 0);
    } else if (!strcmp(mode, "grandchild")) {
        int v = 4242;
        MPI_Send(&v, 1, MPI_INT, 0, 9, parent);
    } else if (!strcmp(mode, "onhost")) {
        char ns[64] = "";
        ssize_t k = readlink("/proc/self/ns/net", ns, sizeof ns - 1);
        ns[k > 0 ? k : 0] = 0;
        int np = 0;
        MPI_Comm_remote_size(parent, &np);
        if (rank == 0) /* (to the root, the last parent) */
            MPI_Send(ns, (int)sizeof ns, MPI_CHAR, np - 1, 11, parent);
        traffic(parent, 0);
    } else if (!strcmp(mode, "wait")) {
        int v;
        MPI_Recv(&v, 1, MPI_INT, 0, 0, parent, MPI_STATUS_IGNORE); /* (never comes) */
    } else if (!strcmp(mode, "die")) {
        fflush(stdout);
        exit(3); /* (without MPI_Finalize: the parents wait for a message that never comes) */
    } else if (!strcmp(mode, "soft")) {
        /* nothing: the parents count how many came */
    } else if (!strcmp(mode, "shared")) {
        int v = 0;
        MPI_Recv(&v, 1, MPI_INT, 0, 12, parent, MPI_STATUS_IGNORE); /* (once the third spawn failed) */
        EXPECT(v == 7, "shared: the parent said %d", v);
    } else if (!strcmp(mode, "bound")) {
        int theirs[256], mine[256], nt = 0, nm = my_cpus(mine, 256), shared = 0;
        MPI_Status st;
        MPI_Recv(theirs, 256, MPI_INT, 0, 13, parent, &st);
        MPI_Get_count(&st, MPI_INT, &nt);
        for (int i = 0; i < nm; i++)
            for (int j = 0; j < nt; j++)
                shared += mine[i] == theirs[j];
        EXPECT(nm > 0 && nm < sysconf(_SC_NPROCESSORS_ONLN) && !shared,
               "the child may use %d CPU(s) (first %d), %d of them the parent's (%d CPUs, first %d)", nm,
               nm ? mine[0] : -1, shared, nt, nt ? theirs[0] : -1);
        printf("%s: child on %d CPU(s) from %d, the parent on %d from %d\n", TEST_NAME, nm, nm ? mine[0] : -1, nt,
               nt ? theirs[0] : -1);
    } else if (!strcmp(mode, "names")) {
        char port[MPI_MAX_PORT_NAME] = "";
        int cls, v = 0;
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        MPI_CHECK(MPI_Lookup_name("dpm-spawn-names", MPI_INFO_NULL, port));
        EXPECT(!strcmp(port, "dpm-spawn-port-0"), "the child found \"%s\"", port);
        MPI_Error_class(MPI_Unpublish_name("dpm-spawn-names", MPI_INFO_NULL, port), &cls);
        EXPECT(cls == MPI_ERR_SERVICE, "the child unpublished the parent's name: class %d", cls);
        MPI_Send(&v, 1, MPI_INT, 0, 14, parent);
        MPI_Recv(&v, 1, MPI_INT, 0, 15, parent, MPI_STATUS_IGNORE); /* (unpublished now) */
        MPI_Error_class(MPI_Lookup_name("dpm-spawn-names", MPI_INFO_NULL, port), &cls);
        EXPECT(cls == MPI_ERR_NAME, "a name unpublished was found: class %d", cls);
        printf("%s: the child found the parent's name through mpiexec\n", TEST_NAME);
    } else if (!strcmp(mode, "outlive")) {
        MPI_CHECK(MPI_Comm_disconnect(&parent));
        sleep(1); /* (the parent has ended meanwhile) */
        printf("%s: child outlived its parent\n", TEST_NAME);
        return finish_test();
    }
    MPI_CHECK(MPI_Comm_disconnect(&parent));
    MPI_Comm p2;
    MPI_Comm_get_parent(&p2);
    EXPECT(p2 == MPI_COMM_NULL, "MPI_Comm_get_parent after the disconnect");
    return finish_test();
}

static void errors(void)
{
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int errs[4] = { -1, -1, -1, -1 }, cls;
    MPI_Comm c = MPI_COMM_WORLD;
    /* no such program */
    int rc = MPI_Comm_spawn("/nonexistent/dpm_spawn_no_such_program", MPI_ARGV_NULL, 2, MPI_INFO_NULL, 0,
                            MPI_COMM_WORLD, &c, errs);
    MPI_Error_class(rc, &cls);
    EXPECT(cls == MPI_ERR_SPAWN && c == MPI_COMM_NULL, "a program that does not exist: class %d", cls);
    if (rank == 0)
        EXPECT(errs[0] == MPI_ERR_SPAWN && errs[1] == MPI_ERR_SPAWN, "errcodes %d %d", errs[0], errs[1]);
    /* the new job cannot start (its working directory does not exist) */
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "wdir", "/nonexistent/dpm_spawn_dir");
    rc = MPI_Comm_spawn(self_path, (char *[]){ "child", "soft", NULL }, 1, info, 0, MPI_COMM_WORLD, &c, errs);
    MPI_Error_class(rc, &cls);
    EXPECT(cls == MPI_ERR_SPAWN && c == MPI_COMM_NULL, "a working directory that does not exist: class %d", cls);
    MPI_Info_free(&info);
    /* a program that ends without connecting */
    rc = MPI_Comm_spawn("/bin/true", MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &c, errs);
    MPI_Error_class(rc, &cls);
    EXPECT(cls == MPI_ERR_SPAWN && c == MPI_COMM_NULL, "a program that never connects: class %d", cls);
    if (rank == 0) {
        char msg[MPI_MAX_ERROR_STRING];
        int len;
        MPI_Error_string(rc, msg, &len);
        printf("%s: a program that never connects: %s\n", TEST_NAME, msg);
    }
    /* beyond the universe (MPI_UNIVERSE_SIZE = the parents + 3 in this test) */
    rc = MPI_Comm_spawn(self_path, (char *[]){ "child", "soft", NULL }, 4, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &c, errs);
    MPI_Error_class(rc, &cls);
    EXPECT(cls == MPI_ERR_SPAWN && c == MPI_COMM_NULL, "4 processes in a universe with room for 3: class %d", cls);
    /* the same with soft 1 or 2: 2 start (and the universe has room for the spawn after this one
     * even while these are still ending) */
    MPI_Info_create(&info);
    MPI_Info_set(info, "soft", "1,2");
    rc = MPI_Comm_spawn(self_path, (char *[]){ "child", "soft", NULL }, 4, info, 0, MPI_COMM_WORLD, &c, errs);
    MPI_Info_free(&info);
    int rs = 0;
    if (rc == MPI_SUCCESS)
        MPI_Comm_remote_size(c, &rs);
    EXPECT(rc == MPI_SUCCESS && rs == 2, "soft=1,2 in a universe with room for 3: rc %d, %d started", rc, rs);
    if (rank == 0)
        EXPECT(errs[0] == MPI_SUCCESS && errs[1] == MPI_SUCCESS && errs[2] == MPI_ERR_SPAWN && errs[3] == MPI_ERR_SPAWN,
               "soft errcodes %d %d %d %d", errs[0], errs[1], errs[2], errs[3]);
    if (rc == MPI_SUCCESS)
        MPI_Comm_disconnect(&c);
}

int main(int argc, char **argv)
{
    int provided;
    if (argc > 2 && !strcmp(argv[1], "child") && !strcmp(argv[2], "slow"))
        sleep(60); /* (mode slow: the parents give up first; mpiexec ends this job) */
    MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    ssize_t k = readlink("/proc/self/exe", self_path, sizeof self_path - 1);
    self_path[k > 0 ? k : 0] = 0;
    MPI_Comm parent;
    MPI_Comm_get_parent(&parent);
    if (parent != MPI_COMM_NULL)
        return child(argc, argv, parent);
    EXPECT(argc > 1 && strcmp(argv[1], "child"), "started as a child but without a parent");
    const char *mode = argc > 1 ? argv[1] : "basic";
    int n = argc > 2 ? atoi(argv[2]) : 1;
    MPI_Comm inter = MPI_COMM_NULL;
    int errs[8];
    if (!strcmp(mode, "basic")) {
        MPI_CHECK(MPI_Comm_spawn(self_path, (char *[]){ "child", "basic", "two words", NULL }, n, MPI_INFO_NULL,
                                 size - 1, MPI_COMM_WORLD, &inter, errs));
        for (int i = 0; rank == size - 1 && i < n; i++)
            EXPECT(errs[i] == MPI_SUCCESS, "errcode %d: %d", i, errs[i]);
        traffic(inter, 1);
    } else if (!strcmp(mode, "multiple")) {
        char p1[4096], p2[4096];
        child_program_path(p1, sizeof p1, 1);
        child_program_path(p2, sizeof p2, 2);
        char *cmds[2] = { p1, p2 };
        char **args[2] = { (char *[]){ "child", "multiple", "A", NULL }, (char *[]){ "child", "multiple", "B", NULL } };
        int np[2] = { 2, 1 };
        MPI_Info infos[2] = { MPI_INFO_NULL, MPI_INFO_NULL };
        MPI_CHECK(MPI_Comm_spawn_multiple(2, cmds, args, np, infos, 0, MPI_COMM_WORLD, &inter, MPI_ERRCODES_IGNORE));
        traffic(inter, 1);
    } else if (!strcmp(mode, "nested")) {
        MPI_CHECK(MPI_Comm_spawn(self_path, (char *[]){ "child", "nested", NULL }, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD,
                                 &inter, MPI_ERRCODES_IGNORE));
        traffic(inter, 1);
    } else if (!strcmp(mode, "icreate")) {
        if (rank == 0)
            MPI_CHECK(MPI_Comm_spawn(self_path, (char *[]){ "child", "icreate", NULL }, 2, MPI_INFO_NULL, 0,
                                     MPI_COMM_SELF, &inter, MPI_ERRCODES_IGNORE));
        icreate(inter, 1);
    } else if (!strcmp(mode, "errors")) {
        errors();
        MPI_CHECK(MPI_Comm_spawn(self_path, (char *[]){ "child", "basic", "two words", NULL }, 1, MPI_INFO_NULL, 0,
                                 MPI_COMM_WORLD, &inter, MPI_ERRCODES_IGNORE));
        traffic(inter, 1);
    } else if (!strcmp(mode, "onhost")) {
        /* rank 0 tells the root its namespace; the children must be in it */
        char ns0[64] = "", mine[64] = "", child_ns[64] = "";
        ssize_t k = readlink("/proc/self/ns/net", mine, sizeof mine - 1);
        mine[k > 0 ? k : 0] = 0;
        memcpy(ns0, mine, sizeof ns0);
        MPI_Bcast(ns0, (int)sizeof ns0, MPI_CHAR, 0, MPI_COMM_WORLD);
        MPI_Info info;
        MPI_Info_create(&info);
        char host[256] = "localhost"; /* (-: the first of tests/netns/run_netns.sh's hosts) */
        const char *hosts = getenv("NETNS_TEST_HOSTS");
        if (argc > 2 && strcmp(argv[2], "-"))
            snprintf(host, sizeof host, "%s", argv[2]);
        else if (hosts)
            snprintf(host, sizeof host, "%.*s", (int)strcspn(hosts, ","), hosts);
        MPI_Info_set(info, "host", host);
        MPI_CHECK(MPI_Comm_spawn(self_path, (char *[]){ "child", "onhost", NULL }, argc > 3 ? atoi(argv[3]) : 1, info,
                                 size - 1, MPI_COMM_WORLD, &inter, MPI_ERRCODES_IGNORE));
        MPI_Info_free(&info);
        if (rank == size - 1) {
            MPI_Recv(child_ns, (int)sizeof child_ns, MPI_CHAR, 0, 11, inter, MPI_STATUS_IGNORE);
            EXPECT(!strcmp(child_ns, ns0) && strcmp(child_ns, mine), "children in %s, rank 0 in %s, the root in %s",
                   child_ns, ns0, mine);
        }
        traffic(inter, 1);
    } else if (!strcmp(mode, "shared")) {
        MPI_CHECK(MPI_Comm_spawn(self_path, (char *[]){ "child", "shared", NULL }, 1, MPI_INFO_NULL, 0, MPI_COMM_SELF,
                                 &inter, errs));
        MPI_Barrier(MPI_COMM_WORLD); /* (both children run: the universe of 4 is full) */
        if (rank == 0) {
            MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
            MPI_Comm third = MPI_COMM_NULL;
            char msg[MPI_MAX_ERROR_STRING];
            int cls, len,
                rc = MPI_Comm_spawn(self_path, (char *[]){ "child", "shared", NULL }, 1, MPI_INFO_NULL, 0,
                                    MPI_COMM_SELF, &third, errs);
            MPI_Error_class(rc, &cls);
            MPI_Error_string(rc, msg, &len);
            EXPECT(cls == MPI_ERR_SPAWN && third == MPI_COMM_NULL && errs[0] == MPI_ERR_SPAWN,
                   "a fifth process in a universe of 4: class %d, errcode %d (%s)", cls, errs[0], msg);
            printf("%s: a spawn beyond the run's universe: %s\n", TEST_NAME, msg);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        int v = 7;
        MPI_Send(&v, 1, MPI_INT, 0, 12, inter);
    } else if (!strcmp(mode, "outlive")) {
        MPI_CHECK(MPI_Comm_spawn(self_path, (char *[]){ "child", "outlive", NULL }, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD,
                                 &inter, errs));
    } else if (!strcmp(mode, "slow")) {
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        double t0 = MPI_Wtime();
        int cls, rc = MPI_Comm_spawn(self_path, (char *[]){ "child", "slow", NULL }, 1, MPI_INFO_NULL, 0,
                                     MPI_COMM_WORLD, &inter, errs);
        MPI_Error_class(rc, &cls);
        EXPECT(cls == MPI_ERR_SPAWN && inter == MPI_COMM_NULL && MPI_Wtime() - t0 < 30,
               "a child that does not start within APTUS_SPAWN_TIMEOUT: class %d after %.1f s", cls, MPI_Wtime() - t0);
        MPI_CHECK(MPI_Comm_spawn(self_path, (char *[]){ "child", "basic", "two words", NULL }, 1, MPI_INFO_NULL, 0,
                                 MPI_COMM_WORLD, &inter, errs));
        traffic(inter, 1);
    } else if (!strcmp(mode, "names")) {
        if (rank == 0)
            MPI_CHECK(MPI_Publish_name("dpm-spawn-names", MPI_INFO_NULL, "dpm-spawn-port-0"));
        MPI_CHECK(MPI_Comm_spawn(self_path, (char *[]){ "child", "names", NULL }, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD,
                                 &inter, errs));
        int v = 0;
        if (rank == 0) {
            MPI_Recv(&v, 1, MPI_INT, 0, 14, inter, MPI_STATUS_IGNORE);
            MPI_CHECK(MPI_Unpublish_name("dpm-spawn-names", MPI_INFO_NULL, "dpm-spawn-port-0"));
            MPI_Send(&v, 1, MPI_INT, 0, 15, inter);
        }
    } else if (!strcmp(mode, "bound")) {
        int mine[256], nm = my_cpus(mine, 256);
        EXPECT(sysconf(_SC_NPROCESSORS_ONLN) >= 2 && nm == 1,
               "the parent may use %d CPU(s): mpiexec did not bind it (this test needs 2 CPUs and hwloc)", nm);
        MPI_CHECK(MPI_Comm_spawn(self_path, (char *[]){ "child", "bound", NULL }, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD,
                                 &inter, errs));
        MPI_Send(mine, nm, MPI_INT, 0, 13, inter);
    } else if (!strcmp(mode, "universe")) {
        int *u = NULL, flag = 0;
        MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &u, &flag);
        EXPECT(flag && *u == n, "MPI_UNIVERSE_SIZE %d (flag %d), expected %d", flag ? *u : -1, flag, n);
    } else if (!strcmp(mode, "busy")) {
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        char msg[MPI_MAX_ERROR_STRING];
        int cls, len,
            rc = MPI_Comm_spawn(self_path, (char *[]){ "child", "soft", NULL }, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD,
                                &inter, MPI_ERRCODES_IGNORE);
        MPI_Error_class(rc, &cls);
        MPI_Error_string(rc, msg, &len);
        EXPECT(cls == MPI_ERR_SPAWN && inter == MPI_COMM_NULL, "spawn into a full allocation: class %d (%s)", cls, msg);
        if (rank == 0)
            printf("%s: spawn into a full allocation: %s\n", TEST_NAME, msg);
    } else if (!strcmp(mode, "nolauncher")) {
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        char msg[MPI_MAX_ERROR_STRING];
        int cls, len,
            rc = MPI_Comm_spawn(self_path, MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter,
                                MPI_ERRCODES_IGNORE);
        MPI_Error_class(rc, &cls);
        MPI_Error_string(rc, msg, &len);
        EXPECT(cls == MPI_ERR_SPAWN && inter == MPI_COMM_NULL && strstr(msg, "without a launcher"),
               "spawn without a launcher: class %d (%s)", cls, msg);
        if (rank == 0)
            printf("%s: spawn without a launcher: %s\n", TEST_NAME, msg);
    } else if (!strcmp(mode, "wait")) {
        MPI_CHECK(MPI_Comm_spawn(self_path, (char *[]){ "child", "wait", argc > 2 ? argv[2] : "-", NULL }, 2,
                                 MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, MPI_ERRCODES_IGNORE));
        int v;
        MPI_Recv(&v, 1, MPI_INT, 0, 0, inter, MPI_STATUS_IGNORE); /* (never comes) */
        EXPECT(0, "a receive from a child that never sends completed");
    } else if (!strcmp(mode, "die")) {
        /* (the token, if any, marks the child's processes too: tests/mpi/dpm_die.sh) */
        MPI_CHECK(MPI_Comm_spawn(self_path, (char *[]){ "child", "die", argc > 2 ? argv[2] : "-", NULL }, 1,
                                 MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, MPI_ERRCODES_IGNORE));
        int v;
        MPI_Recv(&v, 1, MPI_INT, 0, 0, inter, MPI_STATUS_IGNORE); /* (never comes) */
        EXPECT(0, "a receive from a child that died completed");
    }
    if (inter != MPI_COMM_NULL)
        MPI_CHECK(MPI_Comm_disconnect(&inter));
    return finish_test();
}
