/* The handle arena (src/core/arena.h): the slot test accepts exactly the starts of slots of its
 * kind's region and refuses every other value without reading it; objects come zeroed, a freed
 * slot reads magic 0 and is handed out again; under AddressSanitizer a freed slot is poisoned
 * but for its magic, and an object's slot beyond its size too; threads allocating and freeing
 * at once never get the same slot (run under ThreadSanitizer by the threads label). */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/arena.h"

#if defined(__SANITIZE_ADDRESS__)
#define HAVE_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HAVE_ASAN 1
#endif
#endif
#ifdef HAVE_ASAN
#include <sanitizer/asan_interface.h>
#endif

static int failures;
#define CHECK(cond, ...)                                                                                               \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                                       \
            fprintf(stderr, __VA_ARGS__);                                                                              \
            fprintf(stderr, "\n");                                                                                     \
            failures++;                                                                                                \
        }                                                                                                              \
    } while (0)

/* The test of each kind, with the kind a constant as in the library. */
static int in_kind(int kind, const void *h)
{
    switch (kind) {
#define CASE_(K, ODD, INV, SHIFT)                                                                                      \
    case APTUS_OBJ_##K: return aptus_obj_in(h, APTUS_OBJ_##K);
        APTUS_OBJ_KINDS(CASE_)
#undef CASE_
    default: return -1;
    }
}

static const size_t slot_of[APTUS_OBJ_NKINDS] = {
#define SLOT_(K, ODD, INV, SHIFT) [APTUS_OBJ_##K] = APTUS_OBJ_SLOT_##K,
    APTUS_OBJ_KINDS(SLOT_)
#undef SLOT_
};

static void garbage(void)
{
    long page = sysconf(_SC_PAGESIZE);
    void *unmapped = mmap(NULL, (size_t)page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    munmap(unmapped, (size_t)page);
    void *heap = malloc(4096);
    int local = 0;
    const uintptr_t bad[] = { 0,
                              1,
                              0x3ff,
                              0x400,
                              12345,
                              (uintptr_t)-1,
                              (uintptr_t)unmapped,
                              (uintptr_t)heap,
                              (uintptr_t)&local,
                              (uintptr_t)&garbage,
                              (uintptr_t)&aptus_obj_regions };
    for (int k = 0; k < APTUS_OBJ_NKINDS; k++)
        for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
            CHECK(!in_kind(k, (const void *)bad[i]), "kind %d accepts %#lx", k, (unsigned long)bad[i]);
    free(heap);
}

/* Every byte offset of the first slots: only the starts pass, of this kind only, and the first
 * bytes of any slot that passes can be read. */
static void offsets(void)
{
    for (int k = 0; k < APTUS_OBJ_NKINDS; k++) {
        size_t slot = slot_of[k];
        void *objs[3];
        for (int i = 0; i < 3; i++) {
            objs[i] = aptus_obj_alloc(k, slot);
            CHECK(objs[i] != NULL, "kind %d: allocation %d failed", k, i);
        }
        const char *base = (const char *)aptus_obj_regions[k].base;
        for (size_t off = 0; off < 4 * slot; off++) {
            int want = off % slot == 0;
            CHECK(in_kind(k, base + off) == want, "kind %d: offset %zu %s", k, off, want ? "refused" : "accepted");
            if (in_kind(k, base + off)) {
                uint32_t m;
                memcpy(&m, base + off, sizeof m);
                (void)m;
            }
            for (int o = 0; o < APTUS_OBJ_NKINDS; o++)
                if (o != k)
                    CHECK(!in_kind(o, base + off), "kind %d accepts offset %zu of kind %d", o, off, k);
        }
        /* the region's end and beyond */
        size_t n = aptus_obj_regions[k].nslots;
        CHECK(n > 1000, "kind %d: only %zu slots", k, n);
        CHECK(in_kind(k, base + (n - 1) * slot), "kind %d: last slot refused", k);
        CHECK(!in_kind(k, base + n * slot), "kind %d: slot past the end accepted", k);
        CHECK(!in_kind(k, base - slot), "kind %d: slot before the start accepted", k);
        /* a slot never handed out reads zero */
        uint32_t far;
        memcpy(&far, base + (n - 1) * slot, sizeof far);
        CHECK(far == 0, "kind %d: last slot reads %#x", k, far);
        for (int i = 0; i < 3; i++)
            aptus_obj_free(k, objs[i]);
    }
}

static void lifecycle(void)
{
    size_t live0 = aptus_obj_live(APTUS_OBJ_COMM);
    uint32_t *a = aptus_obj_alloc(APTUS_OBJ_COMM, 200);
    CHECK(a && in_kind(APTUS_OBJ_COMM, a), "allocation refused by its own test");
    for (int i = 0; i < 50; i++)
        CHECK(a[i] == 0, "fresh object not zero at word %d", i);
    CHECK(aptus_obj_live(APTUS_OBJ_COMM) == live0 + 1, "live count %zu", aptus_obj_live(APTUS_OBJ_COMM));
    for (int i = 0; i < 50; i++)
        a[i] = 0xdeadbeef;
#ifdef HAVE_ASAN
    CHECK(__asan_address_is_poisoned((char *)a + 200), "the slot beyond the object is not poisoned");
    CHECK(!__asan_address_is_poisoned((char *)a + 199), "the object's last byte is poisoned");
#endif
    aptus_obj_free(APTUS_OBJ_COMM, a);
    CHECK(aptus_obj_live(APTUS_OBJ_COMM) == live0, "live count after free %zu", aptus_obj_live(APTUS_OBJ_COMM));
    CHECK(in_kind(APTUS_OBJ_COMM, a), "a freed slot is still a slot");
    CHECK(a[0] == 0, "freed object's magic reads %#x", a[0]); /* what a stale handle's check reads */
#ifdef HAVE_ASAN
    CHECK(!__asan_address_is_poisoned((char *)a + 3), "the magic of a freed slot is poisoned");
    CHECK(__asan_address_is_poisoned((char *)a + 4), "a freed slot is not poisoned");
    CHECK(__asan_address_is_poisoned((char *)a + 511), "the end of a freed slot is not poisoned");
#endif
    uint32_t *b = aptus_obj_alloc(APTUS_OBJ_COMM, 512);
    CHECK(b == a, "the freed slot is not handed out again");
    for (int i = 0; i < 128; i++)
        CHECK(b[i] == 0, "reused object not zero at word %d: %#x", i, b[i]);
    aptus_obj_free(APTUS_OBJ_COMM, b);
    aptus_obj_free(APTUS_OBJ_COMM, NULL);
}

/* Many objects: the region grows past its first writable chunks. */
static void growth(void)
{
    enum { N = 20000 };
    void **v = malloc(N * sizeof *v);
    for (int i = 0; i < N; i++) {
        v[i] = aptus_obj_alloc(APTUS_OBJ_REQUEST, 300);
        CHECK(v[i] && in_kind(APTUS_OBJ_REQUEST, v[i]), "request %d", i);
        if (!v[i])
            break;
        memset(v[i], 0x5a, 300);
    }
    for (int i = 0; i < N && v[i]; i++)
        aptus_obj_free(APTUS_OBJ_REQUEST, v[i]);
    free(v);
}

struct thr {
    int id;
    int bad;
};

static void *churn(void *arg)
{
    struct thr *t = arg;
    enum { LIVE = 64, ROUNDS = 4000 };
    uint32_t *mine[LIVE] = { 0 };
    for (int r = 0; r < ROUNDS; r++) {
        int i = r % LIVE;
        if (mine[i]) {
            for (int w = 1; w < 16; w++)
                if (mine[i][w] != (uint32_t)(t->id * 100000 + r - LIVE))
                    t->bad++;
            aptus_obj_free(APTUS_OBJ_GROUP, mine[i]);
        }
        mine[i] = aptus_obj_alloc(APTUS_OBJ_GROUP, 64);
        if (!mine[i]) {
            t->bad++;
            continue;
        }
        for (int w = 0; w < 16; w++)
            if (mine[i][w] != 0)
                t->bad++;
        for (int w = 1; w < 16; w++)
            mine[i][w] = (uint32_t)(t->id * 100000 + r);
    }
    for (int i = 0; i < LIVE; i++)
        aptus_obj_free(APTUS_OBJ_GROUP, mine[i]);
    return NULL;
}

static void threads(void)
{
    enum { T = 4 };
    pthread_t th[T];
    struct thr t[T];
    for (int i = 0; i < T; i++) {
        t[i] = (struct thr){ i + 1, 0 };
        pthread_create(&th[i], NULL, churn, &t[i]);
    }
    for (int i = 0; i < T; i++) {
        pthread_join(th[i], NULL);
        CHECK(t[i].bad == 0, "thread %d saw %d objects changed by another thread or not zeroed", i, t[i].bad);
    }
}

int main(void)
{
    garbage();
    offsets();
    lifecycle();
    growth();
    threads();
    if (failures) {
        fprintf(stderr, "%d failures\n", failures);
        return 1;
    }
    printf("arena: ok\n");
    return 0;
}
