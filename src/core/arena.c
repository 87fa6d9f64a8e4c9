/* The handle arena (see core/arena.h). */
#include "core/arena.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define APTUS_ARENA_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define APTUS_ARENA_ASAN 1
#endif
#endif
#ifdef APTUS_ARENA_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/lsan_interface.h>
#define POISON(p, n)   ASAN_POISON_MEMORY_REGION((p), (n))
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define POISON(p, n)   ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

/* Address space reserved per kind: 4 GiB (millions of objects of any kind), or, under a limit
 * on the address space (ulimit -v), a power of two no larger than 1/32 of the limit over all
 * kinds, at least 16 MiB; halved while the reservation fails, down to that least. */
#define REGION_MAX ((size_t)1 << 32)
#define REGION_MIN ((size_t)1 << 24)
/* Made writable at a time: a quarter of what the kind has (at least 64 KiB, at most 16 MiB). */
#define CHUNK_MIN ((size_t)64 << 10)
#define CHUNK_MAX ((size_t)16 << 20)

struct aptus_obj_region aptus_obj_regions[APTUS_OBJ_NKINDS];

static const size_t slot_size[APTUS_OBJ_NKINDS] = {
#define SLOT_(K, ODD, INV, SHIFT) [APTUS_OBJ_##K] = APTUS_OBJ_SLOT_##K,
    APTUS_OBJ_KINDS(SLOT_)
#undef SLOT_
};

static const char *const kind_name[APTUS_OBJ_NKINDS] = {
#define NAME_(K, ODD, INV, SHIFT) [APTUS_OBJ_##K] = #K,
    APTUS_OBJ_KINDS(NAME_)
#undef NAME_
};

/* What only the allocator sees, under `lock`. */
static struct {
    char *free;      /* freed slots, linked through bytes 8..15 */
    size_t writable; /* bytes from the region's start made writable */
    size_t carved;   /* slots handed out so far (live or freed) */
    size_t live;
} kinds[APTUS_OBJ_NKINDS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char *arena; /* the reservation: APTUS_OBJ_NKINDS regions of region_size bytes */
static size_t region_size;

/* At load, before any thread may call MPI: the regions never move, so the checks read their
 * bounds without synchronization. Read-only and not accounted (MAP_NORESERVE, and a private
 * mapping that is not writable is not charged): a check of a slot never written reads the zero
 * page. */
__attribute__((constructor)) static void arena_reserve(void)
{
    size_t r = REGION_MAX;
    struct rlimit lim;
    if (getrlimit(RLIMIT_AS, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY)
        while (r > REGION_MIN && r * APTUS_OBJ_NKINDS > lim.rlim_cur / 32)
            r /= 2;
    for (; r >= REGION_MIN; r /= 2) {
        void *p = mmap(NULL, r * APTUS_OBJ_NKINDS, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED)
            continue;
        arena = p;
        region_size = r;
        for (int k = 0; k < APTUS_OBJ_NKINDS; k++) {
            aptus_obj_regions[k].base = (uintptr_t)(arena + (size_t)k * r);
            aptus_obj_regions[k].nslots = r / slot_size[k];
        }
        return;
    }
    /* every check fails, every allocation says why */
}

/* Makes more of kind k's region writable, for at least one more slot. */
static int grow(int k)
{
    size_t have = kinds[k].writable, add = have / 4;
    size_t pagesz = (size_t)sysconf(_SC_PAGESIZE);
    add = add < CHUNK_MIN ? CHUNK_MIN : add > CHUNK_MAX ? CHUNK_MAX : add;
    add = (add + pagesz - 1) / pagesz * pagesz;
    if (add > region_size - have)
        add = region_size - have;
    if ((kinds[k].carved + 1) * slot_size[k] > have + add) {
        fprintf(stderr, "Aptus MPI: the %zu MiB of address space for %s objects are used up\n", region_size >> 20,
                kind_name[k]);
        return -1;
    }
    char *p = arena + (size_t)k * region_size + have;
    if (mprotect(p, add, PROT_READ | PROT_WRITE) != 0)
        return -1;
#ifdef APTUS_ARENA_ASAN
    /* objects point to memory of the heap: LeakSanitizer scans them for pointers */
    __lsan_register_root_region(p, add);
#endif
    kinds[k].writable = have + add;
    return 0;
}

void *aptus_obj_alloc(enum aptus_obj_kind kind, size_t size)
{
    size_t slot = slot_size[kind];
    if (size > slot) {
        fprintf(stderr, "Aptus MPI: internal error: an object of %zu bytes does not fit a %s slot of %zu\n", size,
                kind_name[kind], slot);
        abort();
    }
    char *p = NULL;
    pthread_mutex_lock(&lock);
    if (!arena)
        arena_reserve(); /* called before the library's constructors ran (another one's constructor) */
    if (!arena) {
        fprintf(stderr, "Aptus MPI: no address space could be reserved for MPI objects (ulimit -v?)\n");
    } else if (kinds[kind].free) {
        p = kinds[kind].free;
        UNPOISON(p, slot);
        memcpy(&kinds[kind].free, p + 8, sizeof(char *));
        memset(p + 8, 0, sizeof(void *));
    } else if ((kinds[kind].carved + 1) * slot <= kinds[kind].writable || grow(kind) == 0) {
        p = arena + (size_t)kind * region_size + kinds[kind].carved * slot;
        kinds[kind].carved++;
    }
    if (p) {
        kinds[kind].live++;
        POISON(p, slot); /* what lies beyond the object */
        UNPOISON(p, size);
    }
    pthread_mutex_unlock(&lock);
    return p;
}

void aptus_obj_free(enum aptus_obj_kind kind, void *obj)
{
    if (!obj)
        return;
    size_t slot = slot_size[kind];
    char *p = obj;
    uintptr_t off = (uintptr_t)p - aptus_obj_regions[kind].base;
    pthread_mutex_lock(&lock);
    if (!arena || off % slot != 0 || off / slot >= kinds[kind].carved) {
        fprintf(stderr, "Aptus MPI: internal error: %p is no %s object of the handle arena\n", obj, kind_name[kind]);
        abort();
    }
    UNPOISON(p, slot);
    memset(p, 0, slot); /* magic 0: the handle is invalid from now on */
    memcpy(p + 8, &kinds[kind].free, sizeof(char *));
    kinds[kind].free = p;
    kinds[kind].live--;
    POISON(p + 4, slot - 4); /* a stale handle's check reads the magic, nothing else may */
    pthread_mutex_unlock(&lock);
}

size_t aptus_obj_live(enum aptus_obj_kind kind)
{
    pthread_mutex_lock(&lock);
    size_t n = kinds[kind].live;
    pthread_mutex_unlock(&lock);
    return n;
}
