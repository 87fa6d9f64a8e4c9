/* CRC32C (Castagnoli, reflected polynomial 0x82F63B78), the checksum of iSCSI, SCTP and ext4.
 *
 * aptus_crc32c(crc, buf, len) continues a running checksum: start with crc = 0, and
 * aptus_crc32c(aptus_crc32c(0, a, na), b, nb) == aptus_crc32c(0, a || b, na + nb). The
 * pre- and post-inversion are done inside, so aptus_crc32c(0, "123456789", 9) == 0xE3069283
 * (the standard check value).
 *
 * Two implementations, same results: a portable table-driven one (slicing-by-8, 8 KiB of
 * tables built once) and, on x86-64 CPUs with SSE4.2, the `crc32` instruction (8 bytes per
 * instruction). aptus_crc32c picks one on its first call (__builtin_cpu_supports) and keeps it;
 * both are exported so that the unit test can compare them. */
#ifndef APTUS_RUNTIME_CRC32C_H
#define APTUS_RUNTIME_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* The fastest implementation this CPU has. */
uint32_t aptus_crc32c(uint32_t crc, const void *buf, size_t len);

/* Table-driven, slicing-by-8 (any CPU). */
uint32_t aptus_crc32c_sw(uint32_t crc, const void *buf, size_t len);

/* SSE4.2 instruction; only call it when aptus_crc32c_hw_available() is nonzero. */
uint32_t aptus_crc32c_hw(uint32_t crc, const void *buf, size_t len);
int aptus_crc32c_hw_available(void);

/* Which implementation aptus_crc32c uses: "sse4.2" or "slicing-by-8". */
const char *aptus_crc32c_impl(void);

#endif
