/* Two jobs started separately meet (tests/mpi/dpm_jobs.sh starts them): the server job's rank 0
 * opens a port and writes its name to DIR/port; the server job accepts on it, the client job
 * (whose rank 0 reads the file) connects. Usage: dpm_connect server|client DIR [join|threads]
 * Over the intercommunicator: every rank sends a small and a 1 MiB message to every remote rank
 * and receives theirs (contents checked, also by MPI_ANY_SOURCE); an intercommunicator
 * broadcast from each side's rank 0 and an allreduce; then the merged communicator (the client
 * job high): its ranks, an allreduce, a 1 MiB broadcast, and one-sided puts into every rank's
 * window (fence); then MPI_Comm_disconnect. Afterwards the errors: connecting to the port again
 * once the server has closed it (MPI_ERR_PORT), accepting on a port not opened here and
 * connecting to a name that is not a port (MPI_ERR_PORT). The client finds the port by its name
 * too (MPI_Publish_name at the server, MPI_Lookup_name, which must give what the file says; the
 * name service's errors: a name not published, published twice, unpublished by another process
 * or with another port); the server leaves a second name published, which its MPI_Finalize
 * removes (dpm_jobs.sh checks that the name service's directory is empty afterwards). With
 * `join`, rank 0 of each job also meets the other over a TCP connection of their own
 * (MPI_Comm_join) and they swap a message. With `threads` (MPI_THREAD_MULTIPLE), rank 0 of each
 * job then runs THREADS threads that at the same time each open a port of their own (server),
 * publish and look it up by name, accept / connect on MPI_COMM_SELF and swap messages, while
 * the other ranks of the job wait in a barrier. With DPM_JOBS_SMP=1 in the environment, every rank
 * checks that its traffic with the other job went through shared memory (one block each way
 * with every process of the other job, frames read from them); with 0, that none did. With
 * DPM_JOBS_RC=1 (jobs on two hosts), that it has an RC connection with every process of the
 * other job, frames going both ways. */
#include <arpa/inet.h>
#include <mpi.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define TEST_NAME "dpm_connect"
#include "counters.h"
#include "mtest.h"

#define BIG (1 << 20)

static int server, size;
static char dir[512];

static void put_file(const char *name, const char *text)
{
    char tmp[600], path[600];
    snprintf(tmp, sizeof tmp, "%s/%s.tmp", dir, name);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(tmp, "w");
    if (!f || fprintf(f, "%s\n", text) < 0 || fclose(f) != 0 || rename(tmp, path) != 0) {
        printf("%s: FAIL: cannot write %s\n", TEST_NAME, path);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
}

static void get_file(const char *name, char *text, size_t len)
{
    char path[600];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f;
    for (int i = 0; !(f = fopen(path, "r")); i++) {
        if (i > 6000) {
            printf("%s: FAIL: %s never appeared\n", TEST_NAME, path);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        usleep(10000);
    }
    if (!fgets(text, (int)len, f))
        text[0] = 0;
    fclose(f);
    text[strcspn(text, "\n")] = 0;
}

static unsigned char pattern(int from_server, int from, int to, size_t i)
{
    return (unsigned char)(from_server * 101 + from * 13 + to * 7 + i * 31);
}

static void intercomm_traffic(MPI_Comm inter)
{
    int rsize, lsize, flag;
    MPI_Comm_remote_size(inter, &rsize);
    MPI_Comm_size(inter, &lsize);
    MPI_Comm_test_inter(inter, &flag);
    EXPECT(flag && lsize == size, "intercommunicator: inter %d, local size %d", flag, lsize);
    /* to every remote rank a small and a 1 MiB message; the small ones taken by MPI_ANY_SOURCE */
    unsigned char *out = malloc((size_t)rsize * BIG), *in = malloc(BIG);
    int *small = malloc((size_t)rsize * sizeof(int)), *seen = calloc((size_t)rsize, sizeof(int));
    MPI_Request *q = malloc((size_t)rsize * 2 * sizeof(MPI_Request));
    for (int r = 0; r < rsize; r++) {
        for (size_t i = 0; i < BIG; i++)
            out[(size_t)r * BIG + i] = pattern(server, rank, r, i);
        small[r] = rank * 1000 + r;
        MPI_Isend(&small[r], 1, MPI_INT, r, 1, inter, &q[2 * r]);
        MPI_Isend(out + (size_t)r * BIG, BIG, MPI_BYTE, r, 2, inter, &q[2 * r + 1]);
    }
    for (int k = 0; k < rsize; k++) {
        int got = -1;
        MPI_Status st;
        MPI_Recv(&got, 1, MPI_INT, MPI_ANY_SOURCE, 1, inter, &st);
        int from = st.MPI_SOURCE;
        EXPECT(from >= 0 && from < rsize && !seen[from]++ && got == from * 1000 + rank,
               "small message %d from remote %d: %d", k, from, got);
    }
    for (int from = 0; from < rsize; from++) {
        MPI_Recv(in, BIG, MPI_BYTE, from, 2, inter, MPI_STATUS_IGNORE);
        size_t bad = 0;
        for (size_t i = 0; i < BIG; i++)
            bad += in[i] != pattern(!server, from, rank, i);
        EXPECT(bad == 0, "1 MiB message from remote rank %d: %zu bytes wrong", from, bad);
    }
    MPI_Waitall(2 * rsize, q, MPI_STATUSES_IGNORE);
    free(q);
    free(small);
    free(seen);
    /* intercommunicator collectives: the server's rank 0 broadcasts, then the client's */
    for (int side = 0; side < 2; side++) {
        int v = server == side ? 4242 + side : -1, root;
        int sending = (side == 1) == (server == 1);
        root = sending ? (rank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
        MPI_Bcast(&v, 1, MPI_INT, root, inter);
        if (!sending)
            EXPECT(v == 4242 + side, "intercommunicator broadcast from side %d gave %d", side, v);
    }
    int mine = server ? 1 : 1000, sum = 0;
    MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, inter); /* (the remote group's sum) */
    EXPECT(sum == rsize * (server ? 1000 : 1), "intercommunicator allreduce gave %d", sum);
    free(out);
    free(in);
}

static void merged_traffic(MPI_Comm inter)
{
    int rsize;
    MPI_Comm_remote_size(inter, &rsize);
    MPI_Comm m;
    MPI_Intercomm_merge(inter, !server, &m); /* the server's ranks first */
    int mr, ms;
    MPI_Comm_rank(m, &mr);
    MPI_Comm_size(m, &ms);
    int nserver = server ? size : rsize;
    EXPECT(ms == size + rsize && mr == (server ? rank : nserver + rank), "merged: rank %d of %d", mr, ms);
    int v = mr + 1, sum = 0;
    MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, m);
    EXPECT(sum == ms * (ms + 1) / 2, "merged allreduce gave %d", sum);
    unsigned char *b = malloc(BIG);
    int root = ms - 1; /* (a client rank) */
    for (size_t i = 0; i < BIG; i++)
        b[i] = mr == root ? (unsigned char)(i * 7 + 3) : 0;
    MPI_Bcast(b, BIG, MPI_BYTE, root, m);
    size_t bad = 0;
    for (size_t i = 0; i < BIG; i++)
        bad += b[i] != (unsigned char)(i * 7 + 3);
    EXPECT(bad == 0, "merged 1 MiB broadcast: %zu bytes wrong", bad);
    free(b);
    /* one-sided: every rank puts its merged rank into slot mr of every rank's window */
    int *slots = calloc((size_t)ms, sizeof(int));
    MPI_Win w;
    MPI_Win_create(slots, (MPI_Aint)(ms * sizeof(int)), sizeof(int), MPI_INFO_NULL, m, &w);
    MPI_Win_fence(0, w);
    int me = mr + 100;
    for (int t = 0; t < ms; t++)
        MPI_Put(&me, 1, MPI_INT, t, mr, 1, MPI_INT, w);
    MPI_Win_fence(0, w);
    for (int s = 0; s < ms; s++)
        EXPECT(slots[s] == s + 100, "window slot %d holds %d after the puts", s, slots[s]);
    MPI_Win_free(&w);
    free(slots);
    MPI_Comm_free(&m);
}

static void names(char *port)
{
    char service[600], found[MPI_MAX_PORT_NAME] = "";
    const char *base = strrchr(dir, '/');
    snprintf(service, sizeof service, "dpm-test %s", base ? base + 1 : dir);
    int cls;
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN); /* (the name calls' errors go there) */
    if (server) {
        MPI_CHECK(MPI_Publish_name(service, MPI_INFO_NULL, port));
        MPI_Error_class(MPI_Publish_name(service, MPI_INFO_NULL, port), &cls);
        EXPECT(cls == MPI_ERR_SERVICE, "publishing a name twice: class %d", cls);
        char left[640];
        snprintf(left, sizeof left, "%s left", service);
        MPI_CHECK(MPI_Publish_name(left, MPI_INFO_NULL, port)); /* (MPI_Finalize removes it) */
        return;
    }
    int rc = MPI_ERR_NAME;
    for (int i = 0; i < 6000 && rc != MPI_SUCCESS; i++) { /* (until the server has published it) */
        rc = MPI_Lookup_name(service, MPI_INFO_NULL, found);
        MPI_Error_class(rc, &cls);
        EXPECT(rc == MPI_SUCCESS || cls == MPI_ERR_NAME, "looking up a name not published yet: class %d", cls);
        if (rc != MPI_SUCCESS)
            usleep(10000);
    }
    EXPECT(rc == MPI_SUCCESS && !strcmp(found, port), "MPI_Lookup_name gave \"%s\", the port is \"%s\"", found, port);
    MPI_Error_class(MPI_Lookup_name("dpm-test no such name", MPI_INFO_NULL, found), &cls);
    EXPECT(cls == MPI_ERR_NAME, "looking up a name never published: class %d", cls);
    MPI_Error_class(MPI_Unpublish_name(service, MPI_INFO_NULL, port), &cls);
    EXPECT(cls == MPI_ERR_SERVICE, "unpublishing another process's name: class %d", cls);
}

static void unpublish(const char *port)
{
    char service[600];
    const char *base = strrchr(dir, '/');
    snprintf(service, sizeof service, "dpm-test %s", base ? base + 1 : dir);
    int cls;
    MPI_Error_class(MPI_Unpublish_name(service, MPI_INFO_NULL, "not the port"), &cls);
    EXPECT(cls == MPI_ERR_SERVICE, "unpublishing a name with another port: class %d", cls);
    MPI_CHECK(MPI_Unpublish_name(service, MPI_INFO_NULL, port));
    char found[MPI_MAX_PORT_NAME];
    MPI_Error_class(MPI_Lookup_name(service, MPI_INFO_NULL, found), &cls);
    EXPECT(cls == MPI_ERR_NAME, "looking up a name unpublished: class %d", cls);
}

static void errors(const char *port)
{
    char name[MPI_MAX_PORT_NAME], msg[MPI_MAX_ERROR_STRING];
    int cls, len;
    MPI_Comm c = MPI_COMM_WORLD;
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    if (!server && rank == 0) { /* the port is closed now: nobody accepts */
        int rc = MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &c);
        MPI_Error_class(rc, &cls);
        MPI_Error_string(rc, msg, &len);
        EXPECT(cls == MPI_ERR_PORT && c == MPI_COMM_NULL, "connect to a closed port: class %d (%s)", cls, msg);
        printf("%s: connect to a closed port: %s\n", TEST_NAME, msg);
    }
    snprintf(name, sizeof name, "aptus-port:1:1:127.0.0.1:0000");
    int rc = MPI_Comm_accept(name, MPI_INFO_NULL, 0, MPI_COMM_SELF, &c);
    MPI_Error_class(rc, &cls);
    EXPECT(cls == MPI_ERR_PORT && c == MPI_COMM_NULL, "accept on a port not opened here: class %d", cls);
    rc = MPI_Comm_connect("no port at all", MPI_INFO_NULL, 0, MPI_COMM_SELF, &c);
    MPI_Error_class(rc, &cls);
    EXPECT(cls == MPI_ERR_PORT && c == MPI_COMM_NULL, "connect to a name that is no port: class %d", cls);
    rc = MPI_Close_port(name);
    MPI_Error_class(rc, &cls);
    EXPECT(cls == MPI_ERR_PORT, "closing a port not opened here: class %d", cls);
}

/* MPI_Comm_join between the two jobs' ranks 0, over a TCP connection they make themselves. */
static void join(void)
{
    int fd = -1;
    if (server) {
        int l = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY) };
        socklen_t sl = sizeof sa;
        if (l < 0 || bind(l, (struct sockaddr *)&sa, sizeof sa) || listen(l, 1) ||
            getsockname(l, (struct sockaddr *)&sa, &sl)) {
            printf("%s: FAIL: no listening socket\n", TEST_NAME);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        char text[32];
        snprintf(text, sizeof text, "%u", (unsigned)ntohs(sa.sin_port));
        put_file("join", text);
        fd = accept(l, NULL, NULL);
        close(l);
    } else {
        char text[32], host[256];
        get_file("join", text, sizeof text);
        get_file("host", host, sizeof host);
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(text)) };
        inet_pton(AF_INET, host, &sa.sin_addr);
        fd = socket(AF_INET, SOCK_STREAM, 0);
        if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0)
            fd = -1;
    }
    EXPECT(fd >= 0, "no TCP connection between the jobs for MPI_Comm_join");
    if (fd < 0)
        return;
    MPI_Comm j;
    MPI_CHECK(MPI_Comm_join(fd, &j));
    int rs = 0, v = server ? 11 : 22, got = 0;
    MPI_Comm_remote_size(j, &rs);
    MPI_Sendrecv(&v, 1, MPI_INT, 0, 5, &got, 1, MPI_INT, 0, 5, j, MPI_STATUS_IGNORE);
    EXPECT(rs == 1 && got == (server ? 22 : 11), "joined: remote size %d, got %d", rs, got);
    /* the socket is the caller's again, still connected */
    char c = 'x', d = 0;
    EXPECT(write(fd, &c, 1) == 1 && read(fd, &d, 1) == 1 && d == 'x', "the socket after MPI_Comm_join");
    MPI_Comm_disconnect(&j);
    close(fd);
    printf("%s: joined\n", TEST_NAME);
}

#define THREADS 3

static void *pair_body(void *arg)
{
    int t = (int)(intptr_t)arg, cls;
    char name[16], service[600], port[MPI_MAX_PORT_NAME];
    const char *base = strrchr(dir, '/');
    snprintf(name, sizeof name, "port%d", t);
    snprintf(service, sizeof service, "dpm-test %s thread %d", base ? base + 1 : dir, t);
    MPI_Comm self, inter;
    MPI_Comm_dup(MPI_COMM_SELF, &self);
    if (server) {
        MPI_CHECK(MPI_Open_port(MPI_INFO_NULL, port));
        MPI_CHECK(MPI_Publish_name(service, MPI_INFO_NULL, port));
        put_file(name, port);
        MPI_CHECK(MPI_Comm_accept(port, MPI_INFO_NULL, 0, self, &inter));
    } else {
        char p2[MPI_MAX_PORT_NAME] = "";
        get_file(name, port, sizeof port);
        int rc = MPI_Lookup_name(service, MPI_INFO_NULL, p2);
        MPI_Error_class(rc, &cls);
        EXPECT(rc == MPI_SUCCESS && !strcmp(p2, port), "thread %d: lookup gave class %d, \"%s\"", t, cls, p2);
        MPI_CHECK(MPI_Comm_connect(port, MPI_INFO_NULL, 0, self, &inter));
    }
    for (int i = 0; i < 50; i++) {
        int v = server * 100000 + t * 1000 + i, got = -1;
        MPI_Sendrecv(&v, 1, MPI_INT, 0, i, &got, 1, MPI_INT, 0, i, inter, MPI_STATUS_IGNORE);
        EXPECT(got == !server * 100000 + t * 1000 + i, "thread %d: message %d was %d", t, i, got);
    }
    MPI_CHECK(MPI_Comm_disconnect(&inter));
    if (server) {
        MPI_CHECK(MPI_Unpublish_name(service, MPI_INFO_NULL, port));
        MPI_CHECK(MPI_Close_port(port));
    }
    MPI_Comm_free(&self);
    return NULL;
}

static void threads(void)
{
    pthread_t th[THREADS];
    for (int t = 0; t < THREADS; t++)
        pthread_create(&th[t], NULL, pair_body, (void *)(intptr_t)t);
    for (int t = 0; t < THREADS; t++)
        pthread_join(th[t], NULL);
    printf("%s: %d pairs of threads met\n", TEST_NAME, THREADS);
}

int main(int argc, char **argv)
{
    int with_threads = argc > 3 && !strcmp(argv[3], "threads"), provided;
    MPI_Init_thread(&argc, &argv, with_threads ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 3 || (strcmp(argv[1], "server") && strcmp(argv[1], "client"))) {
        if (rank == 0)
            printf("usage: dpm_connect server|client DIR [join|threads]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    server = !strcmp(argv[1], "server");
    snprintf(dir, sizeof dir, "%s", argv[2]);
    int with_join = argc > 3 && !strcmp(argv[3], "join");
    char port[MPI_MAX_PORT_NAME] = "";
    MPI_Comm inter;
    if (server) {
        if (rank == 0) {
            MPI_CHECK(MPI_Open_port(MPI_INFO_NULL, port));
            put_file("port", port);
            /* (for the join: the port's first address, this host's) */
            char host[MPI_MAX_PORT_NAME], *a = strchr(port + strlen("aptus-port:1:"), ':');
            snprintf(host, sizeof host, "%s", a ? a + 1 : "127.0.0.1");
            host[strcspn(host, ",:")] = 0;
            put_file("host", host);
            names(port);
        }
        MPI_CHECK(MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter));
        if (rank == 0)
            MPI_CHECK(MPI_Close_port(port));
    } else {
        if (rank == 0) {
            get_file("port", port, sizeof port);
            names(port);
        }
        MPI_CHECK(MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter));
    }
    intercomm_traffic(inter);
    merged_traffic(inter);
    int remote;
    MPI_Comm_remote_size(inter, &remote);
    jobs_smp_check(remote);
    jobs_rc_check(remote);
    MPI_CHECK(MPI_Comm_disconnect(&inter));
    EXPECT(inter == MPI_COMM_NULL, "MPI_Comm_disconnect left the handle set");
    if (rank == 0 && server)
        unpublish(port);
    if (rank == 0)
        errors(port);
    if (with_join && rank == 0)
        join();
    if (with_threads) {
        EXPECT(provided == MPI_THREAD_MULTIPLE, "MPI_THREAD_MULTIPLE not provided (%d)", provided);
        if (rank == 0 && provided == MPI_THREAD_MULTIPLE)
            threads();
        MPI_Barrier(MPI_COMM_WORLD);
    }
    return finish_test();
}
