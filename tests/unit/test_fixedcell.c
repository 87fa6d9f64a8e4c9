/* The fixed top-fill fast-path cells (src/channel/fastpath/fixedcell.h), rc-fp's baseline
 * design: a sender that writes through its mirror, a receiver's cell that gets the mirror's bytes
 * the way an RDMA write lands them -- in address order, in pieces of any size -- and a receiver
 * that must see no frame until the last byte is there, then the frame exactly, for every payload
 * size of the cell and over many laps (the tail slots keep old frames' words, the case the
 * mirror is there for). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "channel/fastpath/fixedcell.h"

#define CELL 8192u

static int failures;
#define CHECK(cond, ...)                                                                                               \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            fprintf(stderr, "test_fixedcell: FAIL %s:%d: ", __FILE__, __LINE__);                                       \
            fprintf(stderr, __VA_ARGS__);                                                                              \
            fputc('\n', stderr);                                                                                       \
            if (++failures > 10)                                                                                       \
                exit(1);                                                                                               \
        }                                                                                                              \
    } while (0)

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static void fill(uint8_t *p, uint32_t len, uint64_t seq)
{
    for (uint32_t i = 0; i < len; i++)
        p[i] = (uint8_t)(seq * 131 + i * 7 + (i >> 8));
}

/* One frame of len through mirror -> cell, landing in pieces; the receiver looks after each. */
static void one_frame(uint8_t *mirror, uint8_t *cell, uint32_t len, uint64_t seq, uint8_t *stamp, int pieces)
{
    uint16_t aux = (uint16_t)(seq & 0xffff);
    fill(mirror + FC_WORD, len, seq);
    uint32_t img = fc_seal(mirror, len, aux, stamp);
    CHECK(img == FC_WORD + fc_round8(len) + FC_WORD, "image of %u bytes for payload %u", img, len);
    uint32_t l;
    uint16_t a;
    CHECK(fc_peek(cell, CELL, &l, &a) == NULL, "a frame before any byte of payload %u landed", len);
    /* land [0, img) in address order, in `pieces` random cuts (byte-granular) */
    uint32_t at = 0;
    for (int p = 0; at < img; p++) {
        uint32_t n = p == pieces - 1 ? img - at : 1 + (uint32_t)(next_rand() % (img - at));
        memcpy(cell + at, mirror + at, n);
        at += n;
        const void *f = fc_peek(cell, CELL, &l, &a);
        if (at < img) {
            CHECK(f == NULL, "payload %u seq %llu: a frame seen with %u of %u bytes landed", len,
                  (unsigned long long)seq, at, img);
        } else {
            CHECK(f == cell + FC_WORD, "payload %u: no frame once all landed", len);
            if (f) {
                CHECK(l == len && a == aux, "payload %u: len %u aux %u", len, l, a);
                CHECK(memcmp(f, mirror + FC_WORD, len) == 0, "payload %u: bytes differ", len);
            }
        }
    }
    fc_release(cell);
    CHECK(fc_peek(cell, CELL, &l, &a) == NULL, "a frame after release");
}

/* The case the mirror is for: the receiver's tail slot holds an old head whose stamp is the one
 * the next frame would take. */
static void test_stamp_avoids_old_tail(void)
{
    uint8_t mirror[CELL] = { 0 }, cell[CELL] = { 0 };
    uint8_t stamp = 0;
    /* a long frame leaves its tail at offset 8 + 256 */
    one_frame(mirror, cell, 256, 1, &stamp, 3);
    /* make the next stamp collide: the old tail word at 264 has stamp 1; set the sender's stamp so
     * that +1 would be the old one's, with a frame of that same length and aux */
    uint64_t old;
    memcpy(&old, cell + 8 + 256, 8);
    uint8_t s_old = (uint8_t)(old >> 56);
    stamp = (uint8_t)(s_old - 1);
    one_frame(mirror, cell, 256, 1, &stamp, 5);
    CHECK(stamp != s_old, "the stamp repeated the word the receiver's tail slot held");
}

int main(int argc, char **argv)
{
    int quick = argc > 1 && !strcmp(argv[1], "--quick");
    uint8_t *mirror = calloc(1, CELL), *cell = calloc(1, CELL);
    if (!mirror || !cell)
        return 1;
    uint8_t stamp = 0;
    uint64_t seq = 0;
    /* every payload size of the cell, with a random number of pieces */
    for (uint32_t len = 0; len <= fc_max_payload(CELL); len += quick ? 13 : 1)
        one_frame(mirror, cell, len, ++seq, &stamp, 1 + (int)(next_rand() % 6));
    /* laps with random sizes: the tail slots hold old words of every kind */
    for (int i = 0; i < (quick ? 20000 : 200000); i++) {
        uint32_t len = (uint32_t)(next_rand() % (next_rand() % 4 ? 200 : fc_max_payload(CELL) + 1));
        one_frame(mirror, cell, len, ++seq, &stamp, 1 + (int)(next_rand() % 4));
    }
    test_stamp_avoids_old_tail();
    free(mirror);
    free(cell);
    if (failures)
        return 1;
    printf("test_fixedcell: ok (%llu frames)\n", (unsigned long long)seq);
    return 0;
}
