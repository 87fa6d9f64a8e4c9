/* The statistics file (api/stats_file.h): the document's frame -- who wrote it, where, when --
 * around the layers' parts (channel/stats_json.h, pt2pt, coll, rma), and the counters that
 * MPIX_Aptus_counter reads. The schema is in docs/STATS.md. */
#include "api/stats_file.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "channel/channel.h"
#include "channel/stats_json.h"
#include "coll/coll.h"
#include "pt2pt/pt2pt.h"
#include "rma/rma.h"
#include "runtime/config.h"
#include "runtime/json.h"
#include "runtime/lock.h"
#include "runtime/progress.h"
#include "runtime/runtime.h"

#define STATS_PATTERNS "%r the rank, %h the host name, %p the process id, %j the job id, %% a percent sign"

int aptus_stats_file_check(const char *pattern, char *err, size_t errlen)
{
    for (const char *s = pattern; *s; s++) {
        if (*s != '%')
            continue;
        s++;
        if (*s != 'r' && *s != 'h' && *s != 'p' && *s != 'j' && *s != '%') {
            snprintf(err, errlen, "APTUS_STATS_FILE=%s: '%%%.1s' is not a pattern of the name (%s)", pattern,
                     *s ? s : "", STATS_PATTERNS);
            return -1;
        }
    }
    return 0;
}

int aptus_stats_file_name(const char *pattern, char *out, size_t outlen)
{
    char host[256] = "";
    if (gethostname(host, sizeof host - 1) != 0)
        snprintf(host, sizeof host, "unknown");
    size_t n = 0;
    int has_rank = 0;
    for (const char *s = pattern; *s; s++) {
        char piece[320];
        const char *add = piece;
        if (*s != '%' || !s[1]) {
            piece[0] = *s;
            piece[1] = '\0';
        } else {
            switch (*++s) {
            case 'r':
                snprintf(piece, sizeof piece, "%d", aptus_rt.rank);
                has_rank = 1;
                break;
            case 'h': add = host; break;
            case 'p': snprintf(piece, sizeof piece, "%ld", (long)aptus_rt.pid); break;
            case 'j': add = aptus_rt.pmi.jobid; break;
            default: snprintf(piece, sizeof piece, "%c", *s); break; /* %% (checked at start-up) */
            }
        }
        size_t len = strlen(add);
        if (n + len >= outlen)
            return -1;
        memcpy(out + n, add, len + 1);
        n += len;
    }
    if (!has_rank) {
        int len = snprintf(out + n, outlen - n, ".%d.json", aptus_rt.rank);
        if (len < 0 || (size_t)len >= outlen - n)
            return -1;
    }
    return 0;
}

/* Every counter MPIX_Aptus_counter names (its lists, as its error message gives them: "a, b,
 * c.CHANNEL (x, y), ..."), with the value it reads now; the templates (upper case) left out. */
static void counters_json(struct aptus_json *j)
{
    const char *lists[2] = { aptus_pt2pt_counter_names, aptus_channel_counter_names() };
    aptus_json_object(j, "counters");
    for (int l = 0; l < 2; l++) {
        const char *s = lists[l];
        while (*s) {
            while (*s == ' ' || *s == ',')
                s++;
            const char *name = s;
            while (*s && *s != ',' && *s != ' ')
                s++;
            size_t len = (size_t)(s - name);
            int depth = 0; /* (a note in parentheses after the name, commas and all) */
            while (*s && (depth > 0 || *s != ',')) {
                depth += *s == '(' ? 1 : *s == ')' ? -1 : 0;
                s++;
            }
            char buf[64];
            if (!len || len >= sizeof buf)
                continue;
            memcpy(buf, name, len);
            buf[len] = '\0';
            int templ = 0;
            for (size_t i = 0; i < len; i++)
                templ |= buf[i] >= 'A' && buf[i] <= 'Z';
            uint64_t v;
            if (!templ && (aptus_pt2pt_counter(buf, &v) == 0 || aptus_channel_counter(buf, &v) == 0))
                aptus_json_u64(j, buf, v);
        }
    }
    aptus_json_close(j);
}

static void document(struct aptus_json *j)
{
    aptus_json_int(j, "schema", APTUS_STATS_SCHEMA);
    aptus_json_string(j, "format", "aptus-stats");
    aptus_json_int(j, "rank", aptus_rt.rank);
    aptus_json_int(j, "size", aptus_rt.size);
    int nodes = 0;
    for (int r = 0; r < aptus_rt.size; r++)
        if (aptus_rt.node_of[r] + 1 > nodes)
            nodes = aptus_rt.node_of[r] + 1;
    aptus_json_int(j, "node", aptus_rt.node);
    aptus_json_int(j, "nodes", nodes);
    aptus_json_int(j, "local_rank", aptus_rt.local_rank);
    aptus_json_int(j, "local_size", aptus_rt.local_size);
    char host[256] = "";
    if (gethostname(host, sizeof host - 1) != 0)
        host[0] = '\0';
    aptus_json_string(j, "host", host);
    /* (ranks of several "hosts" on one machine -- network namespaces -- share the host name) */
    char ns[64];
    ssize_t nl = readlink("/proc/self/ns/net", ns, sizeof ns - 1);
    ns[nl > 0 ? nl : 0] = '\0';
    aptus_json_string(j, "net_namespace", ns);
    aptus_json_int(j, "pid", (long long)aptus_rt.pid);
    aptus_json_string(j, "job", aptus_rt.pmi.jobid);
    aptus_json_double(j, "elapsed_s", aptus_wtime() - aptus_rt.t0);
    aptus_json_int(j, "written_unix", (long long)time(NULL));
    aptus_json_object(j, "settings");
    aptus_json_string(j, "send_rules", aptus_config.send_rules);
    aptus_json_string(j, "alloc_rules", aptus_config.alloc_rules);
    aptus_json_close(j);

    aptus_channel_stats_json(j, aptus_pt2pt_peer_json);
    aptus_pt2pt_stats_json(j);
    aptus_json_object(j, "progress");
    if (aptus_config.async_progress) {
        aptus_json_object(j, "thread");
        aptus_json_bool(j, "own_core", aptus_progress_thread_own_core());
        aptus_json_u64(j, "woken_by_application", __atomic_load_n(&aptus_lock_wakeups, __ATOMIC_RELAXED));
        aptus_json_close(j);
    }
    aptus_json_bool(j, "oversubscribed", aptus_wait_spin_cap >= 0);
    if (aptus_wait_spin_cap >= 0)
        aptus_json_u64(j, "polls_that_gave_the_core_away", aptus_poll_idle_given());
    aptus_json_close(j);
    aptus_coll_stats_json(j);
    aptus_rma_stats_json(j);
    counters_json(j);
}

static void report(const char *path, const char *what, int err)
{
    fprintf(stderr,
            "Aptus MPI: rank %d: APTUS_STATS_FILE: cannot write the statistics file %s: %s%s%s (this rank's "
            "statistics are lost; the job goes on)\n",
            aptus_rt.rank, path, what, err ? ": " : "", err ? strerror(err) : "");
}

int aptus_stats_file_write(void)
{
    char path[4096], tmp[4200];
    if (aptus_stats_file_name(aptus_config.stats_file, path, sizeof path) != 0) {
        report(aptus_config.stats_file, "the name is too long", 0);
        return -1;
    }
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)aptus_rt.pid);
    FILE *f = fopen(tmp, "w");
    if (!f) {
        report(path, "cannot create it", errno);
        return -1;
    }
    struct aptus_json j;
    aptus_json_begin(&j, f);
    document(&j);
    aptus_json_end(&j);
    int werr = ferror(f) ? (errno ? errno : EIO) : 0;
    if (fclose(f) != 0 && !werr)
        werr = errno ? errno : EIO;
    if (werr || j.fault) {
        unlink(tmp);
        report(path, j.fault ? "the document was malformed (a fault of the library)" : "writing failed", werr);
        return -1;
    }
    if (rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        report(path, "cannot move it into place", e);
        return -1;
    }
    return 0;
}
