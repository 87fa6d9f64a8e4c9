/* CRC32C: the standard check value and the iSCSI vectors (RFC 3720, B.4), running checksums,
 * and the two implementations (slicing-by-8, SSE4.2) against a bit-at-a-time reference on
 * random buffers of every length 0..1024 at every start offset 0..7. Prints which
 * implementation aptus_crc32c uses and the throughput of each (not asserted). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "runtime/crc32c.h"

#include "unit_check.h"

/* Bit at a time, straight from the definition. */
static uint32_t crc_ref(uint32_t crc, const void *buf, size_t len)
{
    const unsigned char *p = buf;
    uint32_t c = ~crc;
    while (len--) {
        c ^= *p++;
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    }
    return ~c;
}

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t next_rand(void)
{
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return rng * 0x2545F4914F6CDD1Dull;
}

typedef uint32_t (*crc_fn)(uint32_t, const void *, size_t);

static void check_vectors(const char *name, crc_fn f)
{
    unsigned char b[32];
    uint32_t got = f(0, "123456789", 9);
    if (got != 0xE3069283u)
        fprintf(stderr, "%s: \"123456789\" gives 0x%08X\n", name, got);
    CHECK(got == 0xE3069283u);
    CHECK(f(0, "", 0) == 0);
    memset(b, 0, sizeof b);
    CHECK(f(0, b, 32) == 0x8A9136AAu);
    memset(b, 0xff, sizeof b);
    CHECK(f(0, b, 32) == 0x62A8AB43u);
    for (int i = 0; i < 32; i++)
        b[i] = (unsigned char)i;
    CHECK(f(0, b, 32) == 0x46DD794Eu);
    for (int i = 0; i < 32; i++)
        b[i] = (unsigned char)(31 - i);
    CHECK(f(0, b, 32) == 0x113FDB5Cu);
    /* Running checksum: split anywhere. */
    CHECK(f(f(0, "1234", 4), "56789", 5) == 0xE3069283u);
    CHECK(f(f(0, "", 0), "123456789", 9) == 0xE3069283u);
}

static double mbps(crc_fn f, const unsigned char *buf, size_t len, int reps)
{
    struct timespec a, b;
    volatile uint32_t sink = 0;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (int r = 0; r < reps; r++)
        sink ^= f(0, buf, len);
    clock_gettime(CLOCK_MONOTONIC, &b);
    (void)sink;
    double s = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) * 1e-9;
    return (double)len * reps / s / 1e6;
}

int main(void)
{
    int hw = aptus_crc32c_hw_available();
    printf("aptus_crc32c uses %s (sse4.2 %savailable)\n", aptus_crc32c_impl(), hw ? "" : "not ");
    CHECK(crc_ref(0, "123456789", 9) == 0xE3069283u); /* the reference itself */
    check_vectors("slicing-by-8", aptus_crc32c_sw);
    check_vectors("dispatch", aptus_crc32c);
    if (hw)
        check_vectors("sse4.2", aptus_crc32c_hw);

    static unsigned char buf[1024 + 8 + 8];
    for (size_t i = 0; i < sizeof buf; i++)
        buf[i] = (unsigned char)next_rand();
    long compared = 0;
    for (size_t off = 0; off < 8; off++)
        for (size_t len = 0; len <= 1024; len++) {
            uint32_t seed = (len & 3) == 0 ? 0 : (uint32_t)next_rand(); /* running sums too */
            uint32_t want = crc_ref(seed, buf + off, len);
            uint32_t sw = aptus_crc32c_sw(seed, buf + off, len);
            uint32_t any = aptus_crc32c(seed, buf + off, len);
            if (sw != want || any != want)
                fprintf(stderr, "off %zu len %zu: ref %08X sw %08X dispatch %08X\n", off, len, want, sw, any);
            CHECK(sw == want);
            CHECK(any == want);
            if (hw) {
                uint32_t h = aptus_crc32c_hw(seed, buf + off, len);
                if (h != want)
                    fprintf(stderr, "off %zu len %zu: ref %08X sse4.2 %08X\n", off, len, want, h);
                CHECK(h == want);
            }
            compared++;
            if ((len & 15) == 0) /* new random contents now and then */
                for (size_t i = 0; i < sizeof buf; i += 8) {
                    uint64_t r = next_rand();
                    memcpy(buf + i, &r, 8);
                }
        }
    printf("compared %ld buffers (lengths 0..1024, offsets 0..7)\n", compared);

    static unsigned char big[1 << 16];
    printf("throughput, 64 KiB buffers: slicing-by-8 %.0f MB/s", mbps(aptus_crc32c_sw, big, sizeof big, 2000));
    if (hw)
        printf(", sse4.2 %.0f MB/s", mbps(aptus_crc32c_hw, big, sizeof big, 2000));
    printf("\n");
    if (failures) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    printf("crc32c: all checks passed\n");
    return 0;
}
