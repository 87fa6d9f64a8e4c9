/* CRC32C: table-driven slicing-by-8 and the SSE4.2 instruction, chosen once at run time
 * (see crc32c.h). */
#include "runtime/crc32c.h"

#include <pthread.h>
#include <string.h>

#define CRC32C_POLY 0x82F63B78u /* reflected Castagnoli polynomial */

/* tab[0] is the classic byte table; tab[k][b] is the CRC of byte b followed by k zero bytes,
 * so eight bytes are folded with eight lookups and no dependency between them. */
static uint32_t crc_tab[8][256];
static pthread_once_t crc_tab_once = PTHREAD_ONCE_INIT;

static void crc_tab_build(void)
{
    for (uint32_t b = 0; b < 256; b++) {
        uint32_t c = b;
        for (int k = 0; k < 8; k++)
            c = (c >> 1) ^ (CRC32C_POLY & (0u - (c & 1u)));
        crc_tab[0][b] = c;
    }
    for (uint32_t b = 0; b < 256; b++)
        for (int k = 1; k < 8; k++)
            crc_tab[k][b] = (crc_tab[k - 1][b] >> 8) ^ crc_tab[0][crc_tab[k - 1][b] & 0xffu];
}

static inline uint64_t load_le64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof v);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    return v;
}

uint32_t aptus_crc32c_sw(uint32_t crc, const void *buf, size_t len)
{
    pthread_once(&crc_tab_once, crc_tab_build);
    const unsigned char *p = buf;
    uint32_t c = ~crc;
    while (len && ((uintptr_t)p & 7u)) {
        c = (c >> 8) ^ crc_tab[0][(c ^ *p++) & 0xffu];
        len--;
    }
    for (; len >= 8; len -= 8, p += 8) {
        uint64_t v = load_le64(p) ^ c;
        c = crc_tab[7][v & 0xff] ^ crc_tab[6][(v >> 8) & 0xff] ^ crc_tab[5][(v >> 16) & 0xff] ^
            crc_tab[4][(v >> 24) & 0xff] ^ crc_tab[3][(v >> 32) & 0xff] ^ crc_tab[2][(v >> 40) & 0xff] ^
            crc_tab[1][(v >> 48) & 0xff] ^ crc_tab[0][v >> 56];
    }
    while (len--)
        c = (c >> 8) ^ crc_tab[0][(c ^ *p++) & 0xffu];
    return ~c;
}

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("sse4.2"))) uint32_t aptus_crc32c_hw(uint32_t crc, const void *buf, size_t len)
{
    const unsigned char *p = buf;
    uint64_t c = ~crc;
    while (len && ((uintptr_t)p & 7u)) {
        c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
        len--;
    }
    for (; len >= 8; len -= 8, p += 8) {
        uint64_t v;
        memcpy(&v, p, sizeof v);
        c = __builtin_ia32_crc32di(c, v);
    }
    while (len--)
        c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
    return ~(uint32_t)c;
}

int aptus_crc32c_hw_available(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("sse4.2");
}
#else
uint32_t aptus_crc32c_hw(uint32_t crc, const void *buf, size_t len)
{
    return aptus_crc32c_sw(crc, buf, len);
}

int aptus_crc32c_hw_available(void)
{
    return 0;
}
#endif

/* The choice, made on the first call. Both candidates compute the same function, so two
 * threads racing through the first call store the same kind of value; the pointer is atomic so
 * the race is well defined. */
typedef uint32_t (*crc_fn)(uint32_t, const void *, size_t);
static uint32_t crc_first(uint32_t crc, const void *buf, size_t len);
static _Atomic(crc_fn) crc_impl = crc_first;

static crc_fn crc_choose(void)
{
    crc_fn f = aptus_crc32c_hw_available() ? aptus_crc32c_hw : aptus_crc32c_sw;
    crc_impl = f;
    return f;
}

static uint32_t crc_first(uint32_t crc, const void *buf, size_t len)
{
    return crc_choose()(crc, buf, len);
}

uint32_t aptus_crc32c(uint32_t crc, const void *buf, size_t len)
{
    return crc_impl(crc, buf, len);
}

const char *aptus_crc32c_impl(void)
{
    crc_fn f = crc_impl;
    if (f == crc_first)
        f = crc_choose();
    return f == aptus_crc32c_hw ? "sse4.2" : "slicing-by-8";
}
