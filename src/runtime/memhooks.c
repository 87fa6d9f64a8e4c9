/* Interception of the application's memory releases (see memhooks.h). free, realloc, munmap,
 * mremap and madvise are defined here and exported by the library (src/libmpi.map), so the
 * application's calls -- and the library's own -- come here first; each reports the range, then
 * calls the next definition (the C library's, or an allocator the application linked after
 * this library). */
#include "runtime/memhooks.h"

#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MH_FNS 4

static aptus_unmap_fn fns[MH_FNS];
static int nfns;
static uintptr_t watch_lo = UINTPTR_MAX, watch_hi; /* hull of the watched ranges */
static unsigned long reports;
static atomic_flag lock = ATOMIC_FLAG_INIT;
static _Thread_local int held; /* this thread holds the lock */

void aptus_memhooks_lock(void)
{
    while (atomic_flag_test_and_set_explicit(&lock, memory_order_acquire))
        ;
    held = 1;
}

void aptus_memhooks_unlock(void)
{
    held = 0;
    atomic_flag_clear_explicit(&lock, memory_order_release);
}

int aptus_memhooks_add(aptus_unmap_fn fn)
{
    aptus_memhooks_lock();
    int ok = nfns < MH_FNS;
    if (ok)
        fns[nfns++] = fn;
    aptus_memhooks_unlock();
    return ok ? 0 : -1;
}

void aptus_memhooks_remove(aptus_unmap_fn fn)
{
    aptus_memhooks_lock();
    for (int i = 0; i < nfns; i++)
        if (fns[i] == fn) {
            fns[i] = fns[--nfns];
            break;
        }
    if (!nfns) {
        watch_lo = UINTPTR_MAX;
        watch_hi = 0;
    }
    aptus_memhooks_unlock();
}

void aptus_memhooks_watch(const void *addr, size_t len)
{
    uintptr_t a = (uintptr_t)addr;
    if (a < watch_lo)
        watch_lo = a;
    if (a + len > watch_hi)
        watch_hi = a + len;
}

unsigned long aptus_memhooks_reports(void)
{
    return reports;
}

/* Reports [a, a + len) when it meets the watched hull. */
static inline void report(const void *addr, size_t len)
{
    uintptr_t a = (uintptr_t)addr;
    if (__builtin_expect(a >= watch_hi || a + len <= watch_lo || !len, 1) || held)
        return;
    aptus_memhooks_lock();
    reports++;
    for (int i = 0; i < nfns; i++)
        fns[i](addr, len);
    aptus_memhooks_unlock();
}

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__) || defined(__SANITIZE_MEMORY__)
#define APTUS_MEMHOOKS_OFF 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define APTUS_MEMHOOKS_OFF 1
#endif
#endif

#ifdef APTUS_MEMHOOKS_OFF

int aptus_memhooks_active(void)
{
    return 0;
}

int aptus_memhooks_bypassed(void)
{
    return 0;
}

#else

static void mh_free(void *p);
static int mh_munmap(void *addr, size_t len);

/* The program's calls reach these definitions only when the program resolves free and munmap
 * to this library: it was linked against it (mpicc), not loaded later with dlopen (Python,
 * mpi4py: the C library's definitions come first in the global scope then, and the library
 * sees only its own releases), and no other allocator was preloaded before it. */
int aptus_memhooks_bypassed(void)
{
    static int known = -1;
    if (known < 0) {
        void *f = dlsym(RTLD_DEFAULT, "free"), *u = dlsym(RTLD_DEFAULT, "munmap");
        known = f != (void *)mh_free || u != (void *)mh_munmap;
    }
    return known;
}

int aptus_memhooks_active(void)
{
    return !aptus_memhooks_bypassed();
}

/* The next definitions, found on first use. While dlsym itself runs (it may free), the C
 * library's own are used. */
extern void __libc_free(void *p);
extern void *__libc_realloc(void *p, size_t n);
static void (*next_free)(void *);
static void *(*next_realloc)(void *, size_t);
static size_t (*next_usable)(void *);
static int resolving;

static void resolve(void);

__attribute__((constructor)) static void memhooks_init(void)
{
    resolve();
}

static void resolve(void)
{
    if (resolving)
        return;
    resolving = 1;
    void *f = dlsym(RTLD_NEXT, "free"), *r = dlsym(RTLD_NEXT, "realloc"), *u = dlsym(RTLD_NEXT, "malloc_usable_size");
    next_usable = u ? (size_t(*)(void *))u : malloc_usable_size;
    next_realloc = r ? (void *(*)(void *, size_t))r : __libc_realloc;
    next_free = f ? (void (*)(void *))f : __libc_free;
    resolving = 0;
}

static inline int watched(const void *p)
{
    uintptr_t a = (uintptr_t)p;
    return a >= watch_lo && a < watch_hi;
}

void free(void *p) __attribute__((alias("mh_free")));

static void mh_free(void *p)
{
    if (__builtin_expect(!next_free, 0)) {
        resolve();
        if (!next_free) {
            __libc_free(p);
            return;
        }
    }
    if (p && watched(p))
        report(p, next_usable(p));
    next_free(p);
}

void *realloc(void *p, size_t n)
{
    if (__builtin_expect(!next_realloc, 0)) {
        resolve();
        if (!next_realloc)
            return __libc_realloc(p, n);
    }
    if (p && watched(p))
        report(p, next_usable(p)); /* it may move, or shrink */
    return next_realloc(p, n);
}

int munmap(void *addr, size_t len) __attribute__((alias("mh_munmap")));

static int mh_munmap(void *addr, size_t len)
{
    report(addr, len);
    return (int)syscall(SYS_munmap, addr, len);
}

void *mremap(void *old, size_t old_len, size_t new_len, int flags, ...)
{
    void *new_addr = NULL;
    if (flags & MREMAP_FIXED) {
        va_list ap;
        va_start(ap, flags);
        new_addr = va_arg(ap, void *);
        va_end(ap);
    }
    report(old, old_len);
    long r = syscall(SYS_mremap, old, old_len, new_len, flags, new_addr);
    return r == -1 ? MAP_FAILED : (void *)r;
}

int madvise(void *addr, size_t len, int advice)
{
    if (advice == MADV_DONTNEED || advice == MADV_FREE || advice == MADV_REMOVE)
        report(addr, len);
    return (int)syscall(SYS_madvise, addr, len, advice);
}

#endif
