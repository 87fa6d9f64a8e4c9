/* Test rank program for the launcher tests: links only src/runtime/pmi.c.
 *
 * Runs its arguments as a script of actions, in order. An action prefixed "rN:" runs only on
 * rank N. Arguments of the form tag=... (tests use them to find their processes) and childmark=...
 * (see spawn=) are not actions.
 *
 *   init            aptus_pmi_init; prints "rank R size S singleton X jobid J"
 *   plain           from now on put/getall use "v=<R>=x" (no ';': Slurm does not unescape)
 *   put             puts k<R> = "v;<R>;=x" (';' and '=' exercise the escaping)
 *   fence           aptus_pmi_fence
 *   getall          gets k<r> of every rank r and checks it; prints "rank R getall ok"
 *   getmissing      checks that an unknown key is not found
 *   barrier         aptus_pmi_barrier over all ranks (a new name each time), every rank voting
 *                   ok; prints "rank R barrier N ok" (N counts the barriers)
 *   barrier=F       the same with rank F voting failed: the others print "rank R barrier N
 *                   failed F", rank F "rank F barrier N ok" (its own vote is not counted)
 *   mark=P          creates the file P.R (R: this rank)
 *   unmark=P        removes the file P.R if it exists
 *   checkmarks=P    checks that P.r exists for every rank r; prints "rank R marks ok"
 *   awaitmarks=P:N  waits (20 s at most) until P.0 .. P.N-1 exist; prints "rank R awaited N marks"
 *   map             prints "rank R map n0,n1,... env_node N"
 *   where           prints "rank R netns I local L/S nodes N via V": I the inode of its network
 *                   namespace (/proc/self/ns/net), L/S/N from APTUS_LOCAL_RANK, APTUS_LOCAL_SIZE
 *                   and APTUS_NUM_NODES, V "fd" (PMI_FD) or "port" (PMI_PORT)
 *   shm             creates /aptus-<jobid>-probe<R> with shm_open and never unlinks it
 *   abort=C         aptus_pmi_abort(C, ...)
 *   abortlost=C:P   aptus_pmi_abort(C, ...) naming rank P as the lost peer that caused it
 *   exit=C          exit(C)
 *   kill=S          raise(S)
 *   hang            waits forever
 *   forkchild       forks a child that waits forever (same command line)
 *   trapterm        SIGTERM handler: prints "rank R got SIGTERM" and exits 0
 *   ignoreterm      ignores SIGTERM (mpiexec must escalate to SIGKILL)
 *   ready           prints "rank R ready"
 *   print=T         prints "T from R"
 *   eprint=T        prints "T from R" on stderr
 *   partial         prints "part1-R" and, after a pause, "-part2\n"
 *   spam=N          prints N long numbered lines to stdout and N to stderr
 *   sleep=MS        sleeps
 *   finalize        aptus_pmi_finalize
 *   universe        (our mpiexec) prints "rank R universe free F live L" (aptus_pmi_universe)
 *   spawn=N:MS      asks the launcher for a job of N probes (pre-put key APTUS_PARENT_PORT=probe)
 *                   that run "init parent universe [mark] print=child sleep=MS finalize" and this probe's tag=
 *                   argument; prints "rank R spawn N ok" or "rank R spawn N refused: WHY". With a
 *                   childmark=P argument the K-th spawn's probes also run mark=P.sK after universe
 *   spawnlate=N:MS  asks for a job of N probes that run "init sleep=MS print=late finalize", gives up
 *                   waiting for the answer at once, and a second later -- the answer has come --
 *                   cancels the spawns not answered (aptus_pmi_spawn_cancel(NULL)); prints
 *                   "rank R spawn N given up"
 *   parent          prints "rank R parent P" (P: the pre-put key APTUS_PARENT_PORT, or "none")
 */
#include "runtime/pmi.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int my_rank = 0;
static int my_size = 1;
static int inited = 0;
static struct aptus_pmi_info info;

static void die(const char *what)
{
    fprintf(stderr, "probe rank %d: FAILED: %s\n", my_rank, what);
    fflush(NULL);
    exit(3);
}

static void sleep_ms(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    while (nanosleep(&ts, &ts) != 0)
        ;
}

static void on_term(int sig)
{
    char line[64];
    int n = snprintf(line, sizeof line, "rank %d got SIGTERM\n", my_rank);
    ssize_t w = write(1, line, (size_t)n);
    (void)w;
    (void)sig;
    _exit(0);
}

static int plain_values = 0;

static void expected_value(int r, char *buf, size_t len)
{
    if (plain_values)
        snprintf(buf, len, "v=%d=x", r);
    else
        snprintf(buf, len, "v;%d;=x", r);
}

/* For spawn= and spawnlate= (value N:MS): this probe's path in self, the sleep action of the new
 * job's probes in ms ("sleep=MS"); returns this probe's tag= argument, passed on to them. */
static const char *spawn_setup(const char *val, int argc, char **argv, char *self, size_t slen, char *ms, size_t mlen)
{
    const char *tag = "tag=none";
    for (int k = 1; k < argc; k++)
        if (!strncmp(argv[k], "tag=", 4))
            tag = argv[k];
    ssize_t k = readlink("/proc/self/exe", self, slen - 1);
    self[k > 0 ? k : 0] = 0;
    const char *colon = strchr(val, ':');
    snprintf(ms, mlen, "sleep=%s", colon ? colon + 1 : "0");
    return tag;
}

int main(int argc, char **argv)
{
    const char *er = getenv("PMI_RANK");
    if (er)
        my_rank = atoi(er);
    setvbuf(stdout, NULL, _IOLBF, 0);

    for (int a = 1; a < argc; a++) {
        const char *act = argv[a];
        if (strncmp(act, "tag=", 4) == 0 || strncmp(act, "childmark=", 10) == 0)
            continue;
        if (act[0] == 'r' && act[1] >= '0' && act[1] <= '9') {
            char *colon;
            long only = strtol(act + 1, &colon, 10);
            if (*colon != ':')
                die("bad rank prefix");
            if (only != my_rank)
                continue;
            act = colon + 1;
        }
        const char *eq = strchr(act, '=');
        const char *val = eq ? eq + 1 : "";

        if (!strcmp(act, "init")) {
            if (aptus_pmi_init(&info) != 0)
                die("init");
            inited = 1;
            my_rank = info.rank;
            my_size = info.size;
            printf("rank %d size %d singleton %d jobid %s\n", info.rank, info.size, info.singleton, info.jobid);
        } else if (!strcmp(act, "plain")) {
            plain_values = 1;
        } else if (!strcmp(act, "put")) {
            char key[32], v[64];
            snprintf(key, sizeof key, "k%d", my_rank);
            expected_value(my_rank, v, sizeof v);
            if (aptus_pmi_put(key, v) != 0)
                die("put");
        } else if (!strcmp(act, "fence")) {
            if (aptus_pmi_fence() != 0)
                die("fence");
        } else if (!strcmp(act, "getall")) {
            for (int r = 0; r < my_size; r++) {
                char key[32], want[64], got[APTUS_PMI_MAX_VAL];
                snprintf(key, sizeof key, "k%d", r);
                expected_value(r, want, sizeof want);
                if (aptus_pmi_get(r, key, got, sizeof got) != 0)
                    die("get");
                if (strcmp(got, want) != 0) {
                    fprintf(stderr, "probe rank %d: key %s: got '%s', want '%s'\n", my_rank, key, got, want);
                    die("getall value");
                }
                /* Also through "any rank". */
                if (aptus_pmi_get(-1, key, got, sizeof got) != 0 || strcmp(got, want) != 0)
                    die("get any");
            }
            printf("rank %d getall ok\n", my_rank);
        } else if (!strcmp(act, "getmissing")) {
            char got[64];
            if (aptus_pmi_get(-1, "no-such-key", got, sizeof got) == 0)
                die("unknown key was found");
            printf("rank %d getmissing ok\n", my_rank);
        } else if (!strcmp(act, "barrier") || !strncmp(act, "barrier=", 8)) {
            static int nbar = 0;
            int bad_rank = eq ? atoi(val) : -1, failed = -1, np = 0;
            int *peers = calloc((size_t)my_size, sizeof *peers);
            char name[32];
            if (!peers)
                die("calloc");
            for (int r = 0; r < my_size; r++)
                if (r != my_rank)
                    peers[np++] = r;
            snprintf(name, sizeof name, "probe-bar%d", ++nbar);
            int rc = aptus_pmi_barrier(name, my_rank != bad_rank, peers, np, &failed);
            free(peers);
            if (rc < 0)
                die("barrier");
            if (rc == 0)
                printf("rank %d barrier %d ok\n", my_rank, nbar);
            else
                printf("rank %d barrier %d failed %d\n", my_rank, nbar, failed);
        } else if (!strncmp(act, "mark=", 5)) {
            char path[4096];
            snprintf(path, sizeof path, "%s.%d", val, my_rank);
            FILE *f = fopen(path, "w");
            if (!f)
                die("mark");
            fclose(f);
        } else if (!strncmp(act, "unmark=", 7)) {
            char path[4096];
            snprintf(path, sizeof path, "%s.%d", val, my_rank);
            (void)remove(path);
        } else if (!strncmp(act, "checkmarks=", 11)) {
            for (int r = 0; r < my_size; r++) {
                char path[4096];
                snprintf(path, sizeof path, "%s.%d", val, r);
                if (access(path, F_OK) != 0) {
                    fprintf(stderr, "probe rank %d: %s does not exist yet\n", my_rank, path);
                    die("checkmarks");
                }
            }
            printf("rank %d marks ok\n", my_rank);
        } else if (!strncmp(act, "awaitmarks=", 11)) {
            char base[4096];
            snprintf(base, sizeof base, "%s", val);
            char *colon = strrchr(base, ':');
            if (!colon)
                die("awaitmarks needs P:N");
            *colon = 0;
            int want = atoi(colon + 1);
            for (int r = 0, tries = 0; r < want;) {
                char path[4200];
                snprintf(path, sizeof path, "%s.%d", base, r);
                if (access(path, F_OK) == 0) {
                    r++;
                    continue;
                }
                if (++tries > 2000) {
                    fprintf(stderr, "probe rank %d: %s did not appear in 20 s\n", my_rank, path);
                    die("awaitmarks");
                }
                usleep(10000);
            }
            printf("rank %d awaited %d marks\n", my_rank, want);
        } else if (!strcmp(act, "map")) {
            int *map = calloc((size_t)my_size, sizeof *map);
            if (!map || aptus_pmi_get_node_map(map, my_size) != 0)
                die("get_node_map");
            printf("rank %d map ", my_rank);
            for (int r = 0; r < my_size; r++)
                printf("%s%d", r ? "," : "", map[r]);
            const char *en = getenv("APTUS_NODE_ID");
            printf(" env_node %s\n", en ? en : "none");
            free(map);
        } else if (!strcmp(act, "where")) {
            struct stat st;
            const char *lr = getenv("APTUS_LOCAL_RANK"), *ls = getenv("APTUS_LOCAL_SIZE");
            const char *nn = getenv("APTUS_NUM_NODES");
            if (stat("/proc/self/ns/net", &st) != 0)
                die("stat /proc/self/ns/net");
            printf("rank %d netns %lu local %s/%s nodes %s via %s\n", my_rank, (unsigned long)st.st_ino,
                   lr ? lr : "none", ls ? ls : "none", nn ? nn : "none",
                   getenv("PMI_FD")     ? "fd"
                   : getenv("PMI_PORT") ? "port"
                                        : "none");
        } else if (!strcmp(act, "shm")) {
            char name[128];
            snprintf(name, sizeof name, "/aptus-%s-probe%d", info.jobid, my_rank);
            int fd = shm_open(name, O_CREAT | O_RDWR, 0600);
            if (fd < 0 || ftruncate(fd, 4096) != 0)
                die("shm_open");
            close(fd);
            printf("rank %d shm %s\n", my_rank, name);
        } else if (!strncmp(act, "abort=", 6)) {
            aptus_pmi_abort(atoi(val), "probe requested abort", -1);
        } else if (!strncmp(act, "abortlost=", 10)) {
            const char *colon = strchr(val, ':');
            if (!colon)
                die("abortlost=C:P");
            aptus_pmi_abort(atoi(val), "probe lost its peer", atoi(colon + 1));
        } else if (!strncmp(act, "exit=", 5)) {
            fflush(NULL);
            exit(atoi(val));
        } else if (!strncmp(act, "kill=", 5)) {
            fflush(NULL);
            raise(atoi(val));
        } else if (!strcmp(act, "hang")) {
            for (;;)
                pause();
        } else if (!strcmp(act, "forkchild")) {
            pid_t p = fork();
            if (p < 0)
                die("fork");
            if (p == 0) {
                for (;;)
                    pause();
            }
            printf("rank %d forked %ld\n", my_rank, (long)p);
        } else if (!strcmp(act, "trapterm")) {
            signal(SIGTERM, on_term);
        } else if (!strcmp(act, "ignoreterm")) {
            signal(SIGTERM, SIG_IGN);
        } else if (!strcmp(act, "ready")) {
            printf("rank %d ready\n", my_rank);
        } else if (!strncmp(act, "print=", 6)) {
            printf("%s from %d\n", val, my_rank);
        } else if (!strncmp(act, "eprint=", 7)) {
            fprintf(stderr, "%s from %d\n", val, my_rank);
        } else if (!strcmp(act, "partial")) {
            printf("part1-%d", my_rank);
            fflush(stdout);
            sleep_ms(200);
            printf("-part2\n");
        } else if (!strncmp(act, "spam=", 5)) {
            int n = atoi(val);
            static const char pad[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                                      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
            for (int i = 0; i < n; i++) {
                printf("spam rank %d line %d %s end\n", my_rank, i, pad);
                fprintf(stderr, "espam rank %d line %d %s end\n", my_rank, i, pad);
            }
        } else if (!strncmp(act, "sleep=", 6)) {
            sleep_ms(atol(val));
        } else if (!strcmp(act, "universe")) {
            long fr = -1, live = -1;
            char err[300];
            if (aptus_pmi_universe(&fr, &live, err, sizeof err) != 0)
                die("universe");
            printf("rank %d universe free %ld live %ld\n", my_rank, fr, live);
        } else if (!strncmp(act, "spawn=", 6)) {
            char self[4096], ms[40], job[64], err[400], mark[4200] = "tag=nomark";
            static int nspawn = 0;
            nspawn++;
            for (int k = 1; k < argc; k++)
                if (!strncmp(argv[k], "childmark=", 10))
                    snprintf(mark, sizeof mark, "mark=%s.s%d", argv[k] + 10, nspawn);
            const char *tag = spawn_setup(val, argc, argv, self, sizeof self, ms, sizeof ms);
            int n = atoi(val);
            char *args[] = { "init", "parent", "universe", mark, "print=child", ms, "finalize", (char *)tag, NULL };
            struct aptus_pmi_cmd c = { .cmd = self, .argv = args, .n = n };
            if (aptus_pmi_spawn(1, &c, "APTUS_PARENT_PORT", "probe", 60, job, sizeof job, err, sizeof err) == 0)
                printf("rank %d spawn %d ok\n", my_rank, n);
            else
                printf("rank %d spawn %d refused: %s\n", my_rank, n, err);
        } else if (!strncmp(act, "spawnlate=", 10)) {
            char self[4096], ms[40], job[64], err[400];
            const char *tag = spawn_setup(val, argc, argv, self, sizeof self, ms, sizeof ms);
            int n = atoi(val);
            char *args[] = { "init", ms, "print=late", "finalize", (char *)tag, NULL };
            struct aptus_pmi_cmd c = { .cmd = self, .argv = args, .n = n };
            if (aptus_pmi_spawn(1, &c, "APTUS_PARENT_PORT", "probe", 0, job, sizeof job, err, sizeof err) == 0)
                die("spawnlate: answered at once");
            sleep_ms(1000); /* (the job starts and is answered meanwhile) */
            if (aptus_pmi_spawn_cancel(NULL) != 0)
                die("spawnlate: cancel");
            printf("rank %d spawn %d given up\n", my_rank, n);
        } else if (!strcmp(act, "parent")) {
            char port[256] = "none";
            if (aptus_pmi_spawned() && aptus_pmi_get(-1, "APTUS_PARENT_PORT", port, sizeof port) != 0)
                die("parent port");
            printf("rank %d parent %s\n", my_rank, port);
        } else if (!strcmp(act, "finalize")) {
            if (aptus_pmi_finalize() != 0)
                die("finalize");
            inited = 0;
        } else {
            fprintf(stderr, "probe: unknown action '%s'\n", act);
            return 2;
        }
    }
    fflush(NULL);
    return 0;
}
