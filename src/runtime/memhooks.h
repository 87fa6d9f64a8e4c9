/* Memory the application gives back: free, realloc, munmap, mremap and madvise (DONTNEED, FREE,
 * REMOVE) are intercepted by the library, and the ranges they release are reported to the
 * registered callbacks before the memory goes -- the registration cache drops registrations
 * over them, so a later buffer at the same addresses is never sent from a stale registration
 * (seed 002 H.2; glibc 2.36 has no malloc hooks).
 *
 * Only ranges that may overlap a registration are reported: users say which ranges they hold
 * (aptus_memhooks_watch), and a free outside their hull costs a compare. Frees inside glibc
 * (its own munmap of a large chunk, heap trimming) follow a free or realloc of the chunk, which
 * is reported. Not in sanitizer builds (the sanitizer owns free there): then nothing is
 * reported, and aptus_memhooks_active() says so. */
#ifndef APTUS_RUNTIME_MEMHOOKS_H
#define APTUS_RUNTIME_MEMHOOKS_H

#include <stddef.h>

typedef void (*aptus_unmap_fn)(const void *addr, size_t len);

/* Adds / removes a callback (at most a few); 0, or -1 when the table is full. */
int aptus_memhooks_add(aptus_unmap_fn fn);
void aptus_memhooks_remove(aptus_unmap_fn fn);
/* [addr, addr + len) may be registered: releases overlapping it are reported from now on. */
void aptus_memhooks_watch(const void *addr, size_t len);
/* Callbacks run under a lock, on the thread that releases the memory (the application's
 * threads free too). Code that changes what the callbacks read (the registration cache) holds
 * the same lock; releases on a thread holding it are not reported (they are the library's
 * own, inside the cache). */
void aptus_memhooks_lock(void);
void aptus_memhooks_unlock(void);
/* 1 when the program's releases are intercepted: hooks built (not a sanitizer build) and not
 * bypassed. */
int aptus_memhooks_active(void);
/* 1 when the hooks are built but the program's free/munmap resolve elsewhere (the library was
 * loaded with dlopen, or another allocator preloaded): a registration cache cannot be told of
 * the program's releases then. */
int aptus_memhooks_bypassed(void);
/* Ranges reported so far (statistics and tests). */
unsigned long aptus_memhooks_reports(void);

#endif
