/* Context-id rounds (comm/context_id.h) in one process: what two agreements that run at once
 * contribute when they meet in a window, which one gives way, that taken slots are never
 * contributed again, and the end of a lap (every id in use) against a lap that met held slots. */
#include <stdint.h>
#include <string.h>

#include "comm/context_id.h"
#include "unit_check.h"

#define WINDOWS 256

/* Two keys of the same kind whose first rounds use the same window (k1 < k2). */
static void same_window_keys(uint64_t *k1, uint64_t *k2)
{
    int first[WINDOWS];
    for (int i = 0; i < WINDOWS; i++)
        first[i] = -1;
    for (uint32_t seq = 0;; seq++) {
        struct aptus_ctxid d;
        aptus_ctxid_open(&d, APTUS_CTXID_KEY_SEQ(7, seq), 0);
        int w = aptus_ctxid_window(&d);
        aptus_ctxid_close(&d);
        if (w == 0) /* window 0 holds the reserved slots: keep the counts simple */
            continue;
        if (first[w] >= 0) {
            *k1 = APTUS_CTXID_KEY_SEQ(7, (uint32_t)first[w]);
            *k2 = APTUS_CTXID_KEY_SEQ(7, seq);
            return;
        }
        first[w] = (int)seq;
    }
}

static int popcount(uint32_t m)
{
    return __builtin_popcount(m);
}

int main(void)
{
    uint64_t k1, k2;
    uint32_t busy;
    int s[2];
    aptus_ctxid_init();
    same_window_keys(&k1, &k2);
    CHECK(k1 < k2);

    /* The lower key first: it holds the whole window; the higher key leaves the window to it. */
    struct aptus_ctxid lo, hi;
    aptus_ctxid_open(&lo, k1, 1);
    aptus_ctxid_open(&hi, k2, 1);
    CHECK(aptus_ctxid_window(&lo) == aptus_ctxid_window(&hi));
    uint32_t mlo = aptus_ctxid_hold(&lo, &busy);
    CHECK(mlo == 0xffffffffu && busy == 0);
    uint32_t mhi = aptus_ctxid_hold(&hi, &busy);
    CHECK(mhi == 0 && busy == 1);
    /* lo takes two slots; hi goes on to another window */
    CHECK(aptus_ctxid_settle(&lo, mlo & 0x0000ff00u, 0, 2, 1, s) == 1);
    CHECK(s[0] == 32 * aptus_ctxid_window(&lo) + 8 && s[1] == s[0] + 1);
    int w = aptus_ctxid_window(&hi);
    CHECK(aptus_ctxid_settle(&hi, mhi, busy, 1, 1, s) == 0);
    CHECK(aptus_ctxid_window(&hi) != w);
    aptus_ctxid_close(&hi);
    aptus_ctxid_close(&lo);

    /* The higher key first: it holds the window (the lower key was not there yet); the lower key
     * then finds every free slot held and contributes none of them. */
    aptus_ctxid_open(&hi, k2, 1);
    mhi = aptus_ctxid_hold(&hi, &busy);
    CHECK(popcount(mhi) == 30 && busy == 0); /* two slots of the window are taken above */
    aptus_ctxid_open(&lo, k1, 1);
    mlo = aptus_ctxid_hold(&lo, &busy);
    CHECK(mlo == 0 && busy == 1);
    /* hi's round ends without a result: the window is free to hold again */
    CHECK(aptus_ctxid_settle(&hi, 0, 0, 1, 1, s) == 0);
    CHECK(aptus_ctxid_settle(&lo, 0, 1, 1, 1, s) == 0);
    aptus_ctxid_close(&lo);
    aptus_ctxid_close(&hi);

    /* Slots taken are never contributed again until released; released ones are. */
    aptus_ctxid_open(&lo, k1, 1);
    mlo = aptus_ctxid_hold(&lo, &busy);
    CHECK(popcount(mlo) == 30 && !(mlo & 0x300u));
    CHECK(aptus_ctxid_settle(&lo, mlo, 0, 1, 1, s) == 1);
    int taken = s[0];
    aptus_ctxid_close(&lo);
    aptus_ctxid_open(&lo, k1, 1);
    mlo = aptus_ctxid_hold(&lo, &busy);
    CHECK(popcount(mlo) == 29 && !(mlo & (1u << (taken % 32))));
    aptus_ctxid_close(&lo); /* closing in a round gives its holds back */
    aptus_ctxid_release(taken);
    aptus_ctxid_release(32 * w + 8);
    aptus_ctxid_release(32 * w + 9);
    aptus_ctxid_open(&lo, k1, 1);
    CHECK(aptus_ctxid_hold(&lo, &busy) == 0xffffffffu);
    aptus_ctxid_close(&lo);

    /* A bystander contributes nothing of its own and makes nobody give way. */
    struct aptus_ctxid by;
    aptus_ctxid_open(&by, k1, 0);
    aptus_ctxid_open(&hi, k2, 1);
    CHECK(aptus_ctxid_hold(&hi, &busy) == 0xffffffffu && busy == 0);
    CHECK(aptus_ctxid_settle(&by, 1u << 5, 0, 1, 0, s) == 1); /* takes nothing here */
    aptus_ctxid_close(&by);
    aptus_ctxid_close(&hi);
    aptus_ctxid_open(&hi, k2, 1);
    CHECK(aptus_ctxid_hold(&hi, &busy) == 0xffffffffu);
    aptus_ctxid_close(&hi);

    /* A lap of empty results: out of ids when nothing was held anywhere ... */
    aptus_ctxid_open(&lo, k1, 1);
    int rc = 0, rounds = 0;
    while (rc == 0 && rounds < 3 * WINDOWS) {
        (void)aptus_ctxid_hold(&lo, &busy);
        rc = aptus_ctxid_settle(&lo, 0, 0, 1, 1, s);
        rounds++;
    }
    CHECK(rc < 0 && rounds == WINDOWS);
    aptus_ctxid_close(&lo);
    /* ... but a lap that met held slots goes on */
    aptus_ctxid_open(&lo, k1, 1);
    rc = 0;
    rounds = 0;
    while (rc == 0 && rounds < 3 * WINDOWS) {
        (void)aptus_ctxid_hold(&lo, &busy);
        rc = aptus_ctxid_settle(&lo, 0, rounds == 3, 1, 1, s);
        rounds++;
    }
    CHECK(rc < 0 && rounds == 2 * WINDOWS);
    aptus_ctxid_close(&lo);

    if (failures)
        fprintf(stderr, "test_ctxid: %d failures\n", failures);
    else
        printf("test_ctxid: OK\n");
    return failures != 0;
}
