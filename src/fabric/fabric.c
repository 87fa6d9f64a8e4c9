/* The fabric layer: opening a datagram endpoint, registration, address vector, cards. */
#ifdef APTUS_HAVE_LIBFABRIC

#include "fabric/fabric.h"

#include <dlfcn.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fi_errno.h>

#include "runtime/config.h"
#include "runtime/pmi.h"
#include "runtime/runtime.h"

#define FAB_API_VERSION FI_VERSION(1, 9)

/* ---- libfabric, loaded when the fabric layer first opens -----------------------------------
 * Not linked: loading it (and the provider libraries it needs, whose constructors may take the
 * process's fatal signals) is part of opening the fabric layer, inside the signal guard below
 * (docs/DESIGN.md, "Fatal signals and the fabric libraries"). Only the entry points that are not
 * inline are looked up; the rest goes through the objects' operation tables. Each is taken at
 * the symbol version the build's libfabric gives it (APTUS_FI_*_VERSION, from the build), the
 * one linking would have bound: a newer libfabric keeps serving the older structure layouts. */
#ifndef APTUS_LIBFABRIC_SONAME
#define APTUS_LIBFABRIC_SONAME "libfabric.so.1"
#endif
#ifndef APTUS_FI_GETINFO_VERSION
#define APTUS_FI_GETINFO_VERSION ""
#endif
#ifndef APTUS_FI_FREEINFO_VERSION
#define APTUS_FI_FREEINFO_VERSION ""
#endif
#ifndef APTUS_FI_DUPINFO_VERSION
#define APTUS_FI_DUPINFO_VERSION ""
#endif
#ifndef APTUS_FI_FABRIC_VERSION
#define APTUS_FI_FABRIC_VERSION ""
#endif
#ifndef APTUS_FI_STRERROR_VERSION
#define APTUS_FI_STRERROR_VERSION ""
#endif

static struct {
    int (*getinfo)(uint32_t, const char *, const char *, uint64_t, const struct fi_info *, struct fi_info **);
    void (*freeinfo)(struct fi_info *);
    struct fi_info *(*dupinfo)(const struct fi_info *);
    int (*fabric)(struct fi_fabric_attr *, struct fid_fabric **, void *);
    const char *(*strerror)(int);
} lib;
static char lib_err[600];
static pthread_once_t lib_once = PTHREAD_ONCE_INIT;

static void *lib_sym(void *h, const char *name, const char *version)
{
    void *p = *version ? dlvsym(h, name, version) : dlsym(h, name);
    if (!p && !lib_err[0])
        snprintf(lib_err, sizeof lib_err, "%s has no %s%s%s (older than the libfabric Aptus MPI was built with?)",
                 APTUS_LIBFABRIC_SONAME, name, *version ? "@" : "", version);
    return p;
}

static void lib_load(void)
{
    void *h = dlopen(APTUS_LIBFABRIC_SONAME, RTLD_NOW | RTLD_LOCAL);
#ifdef APTUS_LIBFABRIC_PATH
    if (!h) /* where the build found it, when that is not on the loader's path */
        h = dlopen(APTUS_LIBFABRIC_PATH, RTLD_NOW | RTLD_LOCAL);
#endif
    if (!h) {
        const char *why = dlerror();
        snprintf(lib_err, sizeof lib_err, "cannot load libfabric (%s): %s", APTUS_LIBFABRIC_SONAME,
                 why ? why : "not found");
        return;
    }
    lib.getinfo = (__typeof__(lib.getinfo))lib_sym(h, "fi_getinfo", APTUS_FI_GETINFO_VERSION);
    lib.freeinfo = (__typeof__(lib.freeinfo))lib_sym(h, "fi_freeinfo", APTUS_FI_FREEINFO_VERSION);
    lib.dupinfo = (__typeof__(lib.dupinfo))lib_sym(h, "fi_dupinfo", APTUS_FI_DUPINFO_VERSION);
    lib.fabric = (__typeof__(lib.fabric))lib_sym(h, "fi_fabric", APTUS_FI_FABRIC_VERSION);
    lib.strerror = (__typeof__(lib.strerror))lib_sym(h, "fi_strerror", APTUS_FI_STRERROR_VERSION);
    if (lib_err[0])
        memset(&lib, 0, sizeof lib); /* the handle stays: what it loaded may have run already */
}

/* libfabric's entry points, loaded once: 0, or -1 with a message. */
static int lib_get(char *err, size_t errlen)
{
    pthread_once(&lib_once, lib_load);
    if (lib.getinfo)
        return 0;
    snprintf(err, errlen, "%s", lib_err);
    return -1;
}

const char *aptus_fab_strerror(int rc)
{
    return lib.strerror ? lib.strerror(rc < 0 ? -rc : rc) : "libfabric is not loaded";
}

/* ---- fatal signals: the fabric libraries leave them as they were ---------------------------
 * A provider library may install handlers for the signals that end a process, as it loads or
 * as it starts (libinfinipath, under libfabric's psm provider, catches SIGSEGV, SIGBUS, SIGILL,
 * SIGABRT, SIGINT and SIGTERM as it loads, writes a backtrace file into the working directory and
 * exits with code 1): the launcher would see an exit code instead of the signal, and the file
 * would stay. The handlers of these signals are saved before the fabric layer opens (loading
 * libfabric included) and those that changed meanwhile are put back; which providers exist does
 * not matter. Signals that libraries use for their own work (SIGPIPE, SIGUSR1/2, SIGALRM, ...)
 * are left to them. */
static const int guarded_sigs[] = { SIGSEGV, SIGBUS, SIGILL,  SIGFPE,  SIGABRT, SIGSYS,
                                    SIGTRAP, SIGINT, SIGTERM, SIGQUIT, SIGHUP };
#define N_GUARDED (sizeof guarded_sigs / sizeof guarded_sigs[0])

struct sig_saved {
    struct sigaction sa[N_GUARDED];
};

static void sigs_save(struct sig_saved *s)
{
    for (size_t k = 0; k < N_GUARDED; k++)
        sigaction(guarded_sigs[k], NULL, &s->sa[k]);
}

static void sigs_restore(const struct sig_saved *s)
{
    for (size_t k = 0; k < N_GUARDED; k++) {
        struct sigaction now;
        if (sigaction(guarded_sigs[k], NULL, &now) != 0)
            continue;
        /* sa_handler and sa_sigaction share their storage: one comparison covers both. */
        if (now.sa_handler != s->sa[k].sa_handler || now.sa_flags != s->sa[k].sa_flags)
            sigaction(guarded_sigs[k], &s->sa[k], NULL);
    }
}

/* The hints: a datagram endpoint for messages (FI_EP_DGRAM), or a connected one for messages
 * and RMA (FI_EP_MSG), and every mode and mr_mode bit we handle. */
static struct fi_info *ep_hints(int type, const char *prov)
{
    struct fi_info *h = lib.dupinfo(NULL); /* fi_allocinfo */
    if (!h)
        return NULL;
    h->ep_attr->type = type;
    h->caps = type == FI_EP_MSG ? FI_MSG | FI_RMA | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE : FI_MSG;
    h->mode = FI_CONTEXT | FI_CONTEXT2 | FI_MSG_PREFIX;
    h->domain_attr->mr_mode =
        FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_ENDPOINT | FI_MR_RAW;
    h->domain_attr->threading = FI_THREAD_DOMAIN;
    h->domain_attr->control_progress = FI_PROGRESS_MANUAL;
    h->domain_attr->data_progress = FI_PROGRESS_MANUAL;
    if (prov && *prov && !(h->fabric_attr->prov_name = strdup(prov))) {
        lib.freeinfo(h);
        return NULL;
    }
    return h;
}

/* Whether `name` is a network interface of this host, and if so whether it is up and not the
 * loopback (a name that is no interface -- an RDMA device -- counts as usable). */
static int iface_usable(const char *name)
{
    struct ifaddrs *ifs, *i;
    int known = 0, usable = 0;
    if (getifaddrs(&ifs) != 0)
        return 1;
    for (i = ifs; i; i = i->ifa_next) {
        if (!i->ifa_name || strcmp(i->ifa_name, name) != 0)
            continue;
        known = 1;
        if ((i->ifa_flags & IFF_UP) && !(i->ifa_flags & IFF_LOOPBACK))
            usable = 1;
    }
    freeifaddrs(ifs);
    return !known || usable;
}

/* A domain name matches an interface name exactly, or as "<iface>-<suffix>" (verbs names its
 * datagram domains "<device>-dgram"). */
static int domain_matches(const char *domain, const char *iface)
{
    size_t n = strlen(iface);
    return strncmp(domain, iface, n) == 0 && (domain[n] == 0 || domain[n] == '-');
}

static int link_local6(const struct fi_info *i)
{
    if (i->addr_format != FI_SOCKADDR_IN6 || !i->src_addr)
        return 0;
    const struct sockaddr_in6 *a = i->src_addr;
    return IN6_IS_ADDR_LINKLOCAL(&a->sin6_addr);
}

/* The interface of the IPv4 default route ("" when there is none), from /proc/net/route. */
static void default_route_iface(char *out, size_t len)
{
    out[0] = 0;
    FILE *f = fopen("/proc/net/route", "r");
    if (!f)
        return;
    char line[256], name[64];
    unsigned long dest, gw, flags;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "%63s %lx %lx %lx", name, &dest, &gw, &flags) == 4 && dest == 0 && (flags & 1)) {
            snprintf(out, len, "%s", name);
            break;
        }
    fclose(f);
}

/* The entry for the interface: asked for by name, or (auto) the usable one that carries the
 * default route, else the usable one with the lowest interface index -- the oldest, so that a
 * bridge or veth made later (containers, virtual machines, our own namespace tests) is never
 * taken over the node's network: providers list the newest interfaces first, and an interface
 * that goes away under a running job takes its traffic with it. IPv4 addresses before IPv6
 * ones, link-local IPv6 never. */
static struct fi_info *pick(struct fi_info *list, const char *iface)
{
    int any = !iface || !*iface || !strcmp(iface, "auto");
    char route[64] = "";
    if (any)
        default_route_iface(route, sizeof route);
    for (int pass = 0; pass < 2; pass++) {
        struct fi_info *best = NULL;
        unsigned best_idx = 0;
        for (struct fi_info *i = list; i; i = i->next) {
            const char *dom = i->domain_attr && i->domain_attr->name ? i->domain_attr->name : "";
            if (link_local6(i) || (pass == 0 && i->addr_format == FI_SOCKADDR_IN6))
                continue;
            if (!any) {
                if (domain_matches(dom, iface))
                    return i;
                continue;
            }
            if (!iface_usable(dom))
                continue;
            if (route[0] && domain_matches(dom, route))
                return i;
            unsigned idx = if_nametoindex(dom); /* 0: not a network interface (an RDMA device) */
            if (!best || (idx && (!best_idx || idx < best_idx))) {
                best = i;
                best_idx = idx;
            }
        }
        if (best)
            return best;
    }
    return NULL;
}

/* "a, b, c": the distinct domain names of a list (for messages). */
static void domain_names(const struct fi_info *list, char *out, size_t len)
{
    out[0] = 0;
    for (const struct fi_info *i = list; i; i = i->next) {
        const char *dom = i->domain_attr && i->domain_attr->name ? i->domain_attr->name : "?";
        int seen = 0;
        for (const struct fi_info *j = list; j != i; j = j->next)
            seen |= j->domain_attr && j->domain_attr->name && !strcmp(j->domain_attr->name, dom);
        if (seen)
            continue;
        size_t used = strlen(out);
        snprintf(out + used, len - used, "%s%s", used ? ", " : "", dom);
    }
}

/* The providers offering endpoints of this type here (for messages). */
static void provider_names(int type, char *out, size_t len)
{
    struct fi_info *h = ep_hints(type, NULL), *list = NULL;
    out[0] = 0;
    if (h && lib.getinfo(FAB_API_VERSION, NULL, NULL, 0, h, &list) == 0) {
        for (const struct fi_info *i = list; i; i = i->next) {
            const char *p = i->fabric_attr->prov_name;
            if (!p || strstr(out, p))
                continue;
            size_t used = strlen(out);
            snprintf(out + used, len - used, "%s%s", used ? ", " : "", p);
        }
        lib.freeinfo(list);
    }
    if (h)
        lib.freeinfo(h);
    if (!out[0])
        snprintf(out, len, "none");
}

static int getinfo(int type, const char *prov, struct fi_info **list)
{
    struct fi_info *h = ep_hints(type, prov);
    if (!h)
        return -FI_ENOMEM;
    int rc = lib.getinfo(FAB_API_VERSION, NULL, NULL, 0, h, list);
    lib.freeinfo(h);
    return rc;
}

/* The fi_info of provider `prov` ("" or "auto": verbs when present, else `fallback`) for
 * endpoints of `type` on interface `iface` (see pick), duplicated; NULL with a message. */
static struct fi_info *choose(int type, const char *prov, const char *fallback, const char *iface, char *err,
                              size_t errlen)
{
    struct fi_info *list = NULL;
    int rc;
    int autoprov = !prov || !*prov || !strcmp(prov, "auto");
    const char *kind = type == FI_EP_MSG ? "connected" : "datagram";
    if (lib_get(err, errlen) != 0)
        return NULL;
    if (autoprov) {
        /* verbs when present (an InfiniBand cluster), else the sockets provider. */
        rc = getinfo(type, "verbs", &list);
        if (rc != 0 || !pick(list, iface)) {
            if (list)
                lib.freeinfo(list);
            list = NULL;
            rc = getinfo(type, fallback, &list);
        }
    } else {
        rc = getinfo(type, prov, &list);
    }
    if (rc != 0) {
        char avail[256];
        provider_names(type, avail, sizeof avail);
        snprintf(err, errlen,
                 "APTUS_FABRIC_PROVIDER=%s: no such libfabric provider offers %s endpoints here (%s; available: %s)",
                 autoprov ? "auto" : prov, kind, aptus_fab_strerror(rc), avail);
        return NULL;
    }
    struct fi_info *i = pick(list, iface);
    if (!i) {
        char names[512];
        domain_names(list, names, sizeof names);
        snprintf(err, errlen, "APTUS_FABRIC_IFACE=%s: provider %s has no %s here (its interfaces: %s)",
                 iface && *iface ? iface : "auto", list->fabric_attr->prov_name,
                 iface && *iface && strcmp(iface, "auto") ? "interface of that name"
                                                          : "usable (up, non-loopback) interface",
                 names);
        lib.freeinfo(list);
        return NULL;
    }
    i = lib.dupinfo(i);
    lib.freeinfo(list);
    if (!i)
        snprintf(err, errlen, "out of memory");
    return i;
}

static int rc_hardware(const char *iface)
{
    char err[640];
    struct fi_info *list = NULL;
    if (lib_get(err, sizeof err) != 0 || getinfo(FI_EP_MSG, "verbs", &list) != 0) {
        if (list)
            lib.freeinfo(list);
        return 0;
    }
    int found = pick(list, iface) != NULL;
    lib.freeinfo(list);
    return found;
}

int aptus_fab_rc_hardware(const char *prov, const char *iface)
{
    if (prov && *prov && strcmp(prov, "auto") != 0) /* named: a sockets provider or not */
        return strcmp(prov, "tcp") && strcmp(prov, "sockets") && strcmp(prov, "udp") && strncmp(prov, "tcp;", 4);
    /* (loads the fabric library and its providers: inside the signal guard, as the opens) */
    struct sig_saved saved;
    sigs_save(&saved);
    int found = rc_hardware(iface);
    sigs_restore(&saved);
    return found;
}

static int dgram_open(struct aptus_fab_dgram *d, const char *prov, const char *iface, int wait, char *err,
                      size_t errlen)
{
    memset(d, 0, sizeof *d);
    d->wait_fd = -1;
    int rc;
    if (!(d->info = choose(FI_EP_DGRAM, prov, "udp", iface, err, errlen)))
        return -1;
    struct fi_info *i = d->info;
    snprintf(d->prov, sizeof d->prov, "%s", i->fabric_attr->prov_name);
    snprintf(d->iface, sizeof d->iface, "%s", i->domain_attr->name ? i->domain_attr->name : "?");
    d->prefix = (i->mode & FI_MSG_PREFIX) ? i->ep_attr->msg_prefix_size : 0;
    d->mtu = i->ep_attr->max_msg_size;
    d->inject_max = i->tx_attr->inject_size;
    d->tx_depth = i->tx_attr->size;
    d->rx_depth = i->rx_attr->size;
    d->mr_mode = i->domain_attr->mr_mode;
    d->mr_local = (d->mr_mode & FI_MR_LOCAL) != 0 || (i->mode & FI_LOCAL_MR) != 0 || aptus_config.fabric_mr_local;

    const char *step = "fi_fabric";
    rc = lib.fabric(i->fabric_attr, &d->fabric, NULL);
    if (rc == 0) {
        step = "fi_domain";
        rc = fi_domain(d->fabric, i, &d->domain, NULL);
    }
    if (rc == 0) {
        d->cq_size = d->tx_depth + d->rx_depth;
        struct fi_cq_attr cq = { .size = d->cq_size,
                                 .format = FI_CQ_FORMAT_MSG,
                                 .wait_obj = wait ? FI_WAIT_FD : FI_WAIT_NONE };
        step = "fi_cq_open";
        rc = fi_cq_open(d->domain, &cq, &d->cq, NULL);
        if (rc != 0) { /* no file descriptor to block on: poll only */
            cq.wait_obj = FI_WAIT_NONE;
            rc = fi_cq_open(d->domain, &cq, &d->cq, NULL);
        } else if (wait && fi_control(&d->cq->fid, FI_GETWAIT, &d->wait_fd) != 0) {
            d->wait_fd = -1;
        }
    }
    if (rc == 0) {
        struct fi_av_attr av = { .type =
                                     i->domain_attr->av_type != FI_AV_UNSPEC ? i->domain_attr->av_type : FI_AV_TABLE };
        step = "fi_av_open";
        rc = fi_av_open(d->domain, &av, &d->av, NULL);
    }
    if (rc == 0) {
        step = "fi_endpoint";
        rc = fi_endpoint(d->domain, i, &d->ep, NULL);
    }
    if (rc == 0) {
        step = "fi_ep_bind";
        rc = fi_ep_bind(d->ep, &d->av->fid, 0);
        if (rc == 0)
            rc = fi_ep_bind(d->ep, &d->cq->fid, FI_TRANSMIT | FI_RECV);
    }
    if (rc == 0) {
        step = "fi_enable";
        rc = fi_enable(d->ep);
    }
    if (rc == 0) {
        step = "fi_getname";
        d->addrlen = sizeof d->addr;
        rc = fi_getname(&d->ep->fid, d->addr, &d->addrlen);
    }
    if (rc != 0) {
        snprintf(err, errlen, "provider %s, interface %s: %s failed: %s", d->prov, d->iface, step,
                 aptus_fab_strerror(rc));
        aptus_fab_dgram_close(d);
        return -1;
    }
    return 0;
}

int aptus_fab_dgram_open(struct aptus_fab_dgram *d, const char *prov, const char *iface, int wait, char *err,
                         size_t errlen)
{
    struct sig_saved saved;
    sigs_save(&saved);
    int rc = dgram_open(d, prov, iface, wait, err, errlen);
    sigs_restore(&saved);
    return rc;
}

int aptus_fab_dgram_ep_open(struct aptus_fab_dgram *d, struct fid_ep **ep, void *addr, size_t *addrlen)
{
    int rc = fi_endpoint(d->domain, d->info, ep, NULL);
    if (rc != 0)
        return rc;
    rc = fi_ep_bind(*ep, &d->av->fid, 0);
    if (rc == 0)
        rc = fi_ep_bind(*ep, &d->cq->fid, FI_TRANSMIT | FI_RECV);
    if (rc == 0)
        rc = fi_enable(*ep);
    if (rc == 0)
        rc = fi_getname(&(*ep)->fid, addr, addrlen);
    if (rc != 0) {
        fi_close(&(*ep)->fid);
        *ep = NULL;
    }
    return rc;
}

void aptus_fab_dgram_close(struct aptus_fab_dgram *d)
{
    if (d->ep)
        fi_close(&d->ep->fid);
    if (d->av)
        fi_close(&d->av->fid);
    if (d->cq)
        fi_close(&d->cq->fid);
    if (d->domain)
        fi_close(&d->domain->fid);
    if (d->fabric)
        fi_close(&d->fabric->fid);
    if (d->info)
        lib.freeinfo(d->info);
    memset(d, 0, sizeof *d);
    d->wait_fd = -1;
}

/* ---- registrations: counted against APTUS_FABRIC_REG_LIMIT ---------------------------- */

static size_t reg_bytes;

/* fi_mr_reg, refused with -FI_ENOMEM past the limit; the length rides in the region's context
 * so that aptus_fab_mr_close can give it back. */
static int reg(struct fid_domain *dom, void *buf, size_t len, uint64_t access, uint64_t key, struct fid_mr **mr)
{
    size_t limit = aptus_config.fabric_reg_limit;
    if (limit && (len > limit || reg_bytes > limit - len))
        return -FI_ENOMEM;
    int rc = fi_mr_reg(dom, buf, len, access, 0, key, 0, mr, (void *)(uintptr_t)len);
    if (rc == 0)
        reg_bytes += len;
    return rc;
}

void aptus_fab_mr_close(struct fid_mr *mr)
{
    if (!mr)
        return;
    size_t len = (size_t)(uintptr_t)mr->fid.context;
    reg_bytes -= len <= reg_bytes ? len : reg_bytes;
    fi_close(&mr->fid);
}

int aptus_fab_mr_reg(struct aptus_fab_dgram *d, void *buf, size_t len, struct fid_mr **mr, void **desc)
{
    *mr = NULL;
    *desc = NULL;
    if (!d->mr_local)
        return 0;
    static uint64_t next_key = 1;
    uint64_t key = (d->mr_mode & FI_MR_PROV_KEY) ? 0 : next_key++;
    if (reg(d->domain, buf, len, FI_SEND | FI_RECV, key, mr) != 0)
        return -1;
    if (d->mr_mode & FI_MR_ENDPOINT) {
        if (fi_mr_bind(*mr, &d->ep->fid, 0) != 0 || fi_mr_enable(*mr) != 0) {
            aptus_fab_mr_close(*mr);
            *mr = NULL;
            return -1;
        }
    }
    *desc = fi_mr_desc(*mr);
    return 0;
}

/* ---- connected endpoints -------------------------------------------------------------- */

static void rc_wait_fd(fid_t fid, int *fd)
{
    if (fi_control(fid, FI_GETWAIT, fd) != 0)
        *fd = -1;
}

static int rc_open(struct aptus_fab_rc *r, const char *prov, const char *iface, int srx, int wait, char *err,
                   size_t errlen)
{
    memset(r, 0, sizeof *r);
    r->eq_fd = r->cq_fd = -1;
    if (!(r->info = choose(FI_EP_MSG, prov, "tcp", iface, err, errlen)))
        return -1;
    struct fi_info *i = r->info;
    snprintf(r->prov, sizeof r->prov, "%s", i->fabric_attr->prov_name);
    snprintf(r->iface, sizeof r->iface, "%s", i->domain_attr->name ? i->domain_attr->name : "?");
    r->inject_max = i->tx_attr->inject_size;
    r->tx_depth = i->tx_attr->size;
    r->rx_depth = i->rx_attr->size;
    r->cq_data = i->domain_attr->cq_data_size;
    r->max_msg = i->ep_attr->max_msg_size;
    r->iov_limit = i->tx_attr->iov_limit;
    r->msg_order = i->tx_attr->msg_order;
    r->rx_cq_data = (i->mode & FI_RX_CQ_DATA) != 0;
    r->mr_mode = i->domain_attr->mr_mode;
    r->mr_local = (r->mr_mode & FI_MR_LOCAL) != 0 || (i->mode & FI_LOCAL_MR) != 0 || aptus_config.fabric_mr_local;
    if (r->mr_mode & FI_MR_ENDPOINT) {
        /* Regions bound to one endpoint each: the RC channels register once for all. */
        snprintf(err, errlen, "provider %s, interface %s: connected endpoints with FI_MR_ENDPOINT are not supported",
                 r->prov, r->iface);
        aptus_fab_rc_close(r);
        return -1;
    }
    const char *step = "fi_fabric";
    int rc = lib.fabric(i->fabric_attr, &r->fabric, NULL);
    if (rc == 0) {
        step = "fi_eq_open";
        struct fi_eq_attr eq = { .size = 64, .wait_obj = FI_WAIT_FD };
        rc = fi_eq_open(r->fabric, &eq, &r->eq, NULL);
        if (rc != 0) {
            eq.wait_obj = FI_WAIT_NONE;
            rc = fi_eq_open(r->fabric, &eq, &r->eq, NULL);
        } else {
            rc_wait_fd(&r->eq->fid, &r->eq_fd);
        }
    }
    if (rc == 0) {
        step = "fi_domain";
        rc = fi_domain(r->fabric, i, &r->domain, NULL);
    }
    if (rc == 0) {
        step = "fi_cq_open";
        struct fi_cq_attr cq = { .size = 4 * (r->tx_depth + r->rx_depth),
                                 .format = FI_CQ_FORMAT_DATA,
                                 .wait_obj = wait ? FI_WAIT_FD : FI_WAIT_NONE };
        rc = fi_cq_open(r->domain, &cq, &r->cq, NULL);
        if (rc != 0) {
            cq.wait_obj = FI_WAIT_NONE;
            rc = fi_cq_open(r->domain, &cq, &r->cq, NULL);
        } else if (wait) {
            rc_wait_fd(&r->cq->fid, &r->cq_fd);
        }
    }
    if (rc == 0 && srx && i->domain_attr->max_ep_srx_ctx > 0) {
        step = "fi_srx_context";
        rc = fi_srx_context(r->domain, i->rx_attr, &r->srx, NULL);
        if (rc == 0)
            i->ep_attr->rx_ctx_cnt = FI_SHARED_CONTEXT; /* every endpoint made from info shares it */
    }
    if (rc == 0) {
        step = "fi_passive_ep";
        rc = fi_passive_ep(r->fabric, i, &r->pep, NULL);
    }
    if (rc == 0) {
        step = "fi_pep_bind";
        rc = fi_pep_bind(r->pep, &r->eq->fid, 0);
    }
    if (rc == 0) {
        step = "fi_listen";
        rc = fi_listen(r->pep);
    }
    if (rc == 0) {
        step = "fi_getname";
        r->addrlen = sizeof r->addr;
        rc = fi_getname(&r->pep->fid, r->addr, &r->addrlen);
    }
    if (rc != 0) {
        snprintf(err, errlen, "provider %s, interface %s: %s failed: %s", r->prov, r->iface, step,
                 aptus_fab_strerror(rc));
        aptus_fab_rc_close(r);
        return -1;
    }
    return 0;
}

int aptus_fab_rc_open(struct aptus_fab_rc *r, const char *prov, const char *iface, int srx, int wait, char *err,
                      size_t errlen)
{
    struct sig_saved saved;
    sigs_save(&saved);
    int rc = rc_open(r, prov, iface, srx, wait, err, errlen);
    sigs_restore(&saved);
    return rc;
}

void aptus_fab_rc_close(struct aptus_fab_rc *r)
{
    if (r->pep)
        fi_close(&r->pep->fid);
    if (r->srx)
        fi_close(&r->srx->fid);
    if (r->cq)
        fi_close(&r->cq->fid);
    if (r->domain)
        fi_close(&r->domain->fid);
    if (r->eq)
        fi_close(&r->eq->fid);
    if (r->fabric)
        fi_close(&r->fabric->fid);
    if (r->info)
        lib.freeinfo(r->info);
    memset(r, 0, sizeof *r);
    r->eq_fd = r->cq_fd = -1;
}

/* An endpoint from `info`, bound to the event queue, the completion queue and the shared
 * receive context, enabled. */
static int rc_ep_make(struct aptus_fab_rc *r, struct fi_info *info, void *ctx, struct fid_ep **ep)
{
    int rc = fi_endpoint(r->domain, info, ep, ctx);
    if (rc != 0) {
        *ep = NULL;
        return rc;
    }
    rc = fi_ep_bind(*ep, &r->eq->fid, 0);
    if (rc == 0)
        rc = fi_ep_bind(*ep, &r->cq->fid, FI_TRANSMIT | FI_RECV);
    if (rc == 0 && r->srx)
        rc = fi_ep_bind(*ep, &r->srx->fid, 0);
    if (rc == 0)
        rc = fi_enable(*ep);
    if (rc != 0) {
        fi_close(&(*ep)->fid);
        *ep = NULL;
    }
    return rc;
}

int aptus_fab_rc_connect(struct aptus_fab_rc *r, const void *addr, size_t addrlen, const void *param, size_t plen,
                         void *ctx, struct fid_ep **ep)
{
    (void)addrlen;
    if (plen > APTUS_FAB_CM_PARAM)
        return -FI_EINVAL;
    int rc = rc_ep_make(r, r->info, ctx, ep);
    if (rc != 0)
        return rc;
    rc = fi_connect(*ep, addr, param, plen);
    if (rc != 0) {
        fi_close(&(*ep)->fid);
        *ep = NULL;
    }
    return rc;
}

int aptus_fab_rc_accept(struct aptus_fab_rc *r, struct fi_info *req, const void *param, size_t plen, void *ctx,
                        struct fid_ep **ep)
{
    int rc = plen > APTUS_FAB_CM_PARAM ? -FI_EINVAL : 0;
    if (rc == 0 && r->srx)
        req->ep_attr->rx_ctx_cnt = FI_SHARED_CONTEXT;
    if (rc == 0)
        rc = rc_ep_make(r, req, ctx, ep);
    if (rc == 0 && (rc = fi_accept(*ep, param, plen)) != 0) {
        fi_close(&(*ep)->fid);
        *ep = NULL;
    }
    if (rc != 0)
        fi_reject(r->pep, req->handle, NULL, 0);
    lib.freeinfo(req);
    return rc;
}

void aptus_fab_rc_reject(struct aptus_fab_rc *r, struct fi_info *req)
{
    fi_reject(r->pep, req->handle, NULL, 0);
    lib.freeinfo(req);
}

int aptus_fab_rc_event(struct aptus_fab_rc *r, struct aptus_fab_cm_event *ev)
{
    union {
        struct fi_eq_cm_entry cm;
        char bytes[sizeof(struct fi_eq_cm_entry) + APTUS_FAB_CM_PARAM + 64];
    } u;
    uint32_t event = 0;
    memset(ev, 0, sizeof *ev);
    ssize_t n = fi_eq_read(r->eq, &event, &u, sizeof u, 0);
    if (n == -FI_EAGAIN)
        return 0;
    if (n == -FI_EAVAIL) {
        struct fi_eq_err_entry e;
        memset(&e, 0, sizeof e);
        if (fi_eq_readerr(r->eq, &e, 0) < 0)
            return -FI_EOTHER;
        ev->kind = APTUS_FAB_CM_ERROR;
        ev->ctx = e.fid ? e.fid->context : NULL;
        ev->err = e.err ? -e.err : -FI_EOTHER;
        return 1;
    }
    if (n < 0)
        return (int)n;
    size_t plen = (size_t)n > sizeof u.cm ? (size_t)n - sizeof u.cm : 0;
    if (plen > APTUS_FAB_CM_PARAM)
        plen = APTUS_FAB_CM_PARAM;
    ev->plen = plen;
    memcpy(ev->param, u.cm.data, plen);
    switch (event) {
    case FI_CONNREQ:
        ev->kind = APTUS_FAB_CM_CONNREQ;
        ev->req = u.cm.info;
        break;
    case FI_CONNECTED:
        ev->kind = APTUS_FAB_CM_CONNECTED;
        ev->ctx = u.cm.fid->context;
        break;
    case FI_SHUTDOWN:
        ev->kind = APTUS_FAB_CM_SHUTDOWN;
        ev->ctx = u.cm.fid->context;
        break;
    default:
        ev->kind = APTUS_FAB_CM_ERROR;
        ev->ctx = u.cm.fid ? u.cm.fid->context : NULL;
        ev->err = -FI_EOTHER;
        break;
    }
    return 1;
}

int aptus_fab_rc_mr_reg(struct aptus_fab_rc *r, void *buf, size_t len, uint64_t access, struct fid_mr **mr, void **desc,
                        uint64_t *rkey, uint64_t *raddr)
{
    static uint64_t next_key = 1;
    uint64_t key = (r->mr_mode & FI_MR_PROV_KEY) ? 0 : next_key++;
    int rc = reg(r->domain, buf, len, access, key, mr);
    if (rc != 0) {
        *mr = NULL;
        return rc;
    }
    *desc = r->mr_local ? fi_mr_desc(*mr) : NULL;
    *rkey = fi_mr_key(*mr);
    *raddr = (r->mr_mode & FI_MR_VIRT_ADDR) ? (uint64_t)(uintptr_t)buf : 0;
    return 0;
}

int aptus_fab_av_insert(struct aptus_fab_dgram *d, const void *addr, size_t len, fi_addr_t *out)
{
    return fi_av_insert(d->av, addr, 1, out, 0, NULL) == 1 ? 0 : -1;
}

int aptus_fab_card_put(const char *chan, const void *addr, size_t len)
{
    char key[APTUS_PMI_MAX_KEY], val[2 * APTUS_FAB_ADDR_MAX + 1];
    static const char hex[] = "0123456789abcdef";
    if (len > APTUS_FAB_ADDR_MAX)
        return -1;
    for (size_t k = 0; k < len; k++) {
        val[2 * k] = hex[((const unsigned char *)addr)[k] >> 4];
        val[2 * k + 1] = hex[((const unsigned char *)addr)[k] & 15];
    }
    val[2 * len] = 0;
    snprintf(key, sizeof key, "aptus-%s-%d", chan, aptus_rt.rank);
    return aptus_pmi_put(key, val);
}

static int hexval(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

int aptus_fab_card_get(const char *chan, int rank, void *addr, size_t *len)
{
    char key[APTUS_PMI_MAX_KEY], val[APTUS_PMI_MAX_VAL];
    snprintf(key, sizeof key, "aptus-%s-%d", chan, rank);
    if (aptus_pmi_get(rank, key, val, sizeof val) != 0)
        return -1;
    size_t n = strlen(val);
    if (n % 2 || n / 2 > *len)
        return -1;
    for (size_t k = 0; k < n / 2; k++) {
        int hi = hexval(val[2 * k]), lo = hexval(val[2 * k + 1]);
        if (hi < 0 || lo < 0)
            return -1;
        ((unsigned char *)addr)[k] = (unsigned char)(hi << 4 | lo);
    }
    *len = n / 2;
    return 0;
}

#else
/* Built without libfabric: no network channel (an ISO C translation unit needs a declaration). */
typedef int aptus_fabric_unused;
#endif
