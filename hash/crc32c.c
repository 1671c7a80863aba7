/* SPDX-License-Identifier: MIT */
/*
 * crc32c in the kernel's convention: crc32c(seed, buf, len) with the reflected
 * Castagnoli polynomial 0x82F63B78 and no pre- or post-inversion, so that
 * crc32c(0, zero page) == 0 and crc32c(0, "123456789") == 0x58e3fa20.
 *
 * Written here because zlib has only the IEEE polynomial and no Debian static
 * library offers crc32c (ISA-L ships a shared library only).
 */
#include <string.h>

#include "hash.h"

#define CRC32C_POLY 0x82F63B78u

static uint32_t table[8][256];
static int table_ready;

/* Build the slicing-by-8 tables once. */
static void crc32c_table_init(void)
{
	for (unsigned i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (CRC32C_POLY & (0u - (c & 1)));
		table[0][i] = c;
	}
	for (unsigned i = 0; i < 256; i++)
		for (int t = 1; t < 8; t++)
			table[t][i] = (table[t - 1][i] >> 8) ^
				      table[0][table[t - 1][i] & 0xff];
	table_ready = 1;
}

uint32_t crc32c_sw(uint32_t crc, const void *buf, size_t len)
{
	const unsigned char *p = buf;

	if (!table_ready)
		crc32c_table_init();

	/* Eight bytes a step: the little-endian word folds into eight lookups. */
	while (len >= 8) {
		uint64_t w;

		memcpy(&w, p, 8);
		w ^= crc;
		crc = table[7][w & 0xff] ^ table[6][(w >> 8) & 0xff] ^
		      table[5][(w >> 16) & 0xff] ^ table[4][(w >> 24) & 0xff] ^
		      table[3][(w >> 32) & 0xff] ^ table[2][(w >> 40) & 0xff] ^
		      table[1][(w >> 48) & 0xff] ^ table[0][w >> 56];
		p += 8;
		len -= 8;
	}
	while (len--)
		crc = (crc >> 8) ^ table[0][(crc ^ *p++) & 0xff];
	return crc;
}

#if defined(__x86_64__)

int crc32c_hw_available(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("sse4.2");
}

__attribute__((target("sse4.2")))
uint32_t crc32c_hw(uint32_t crc, const void *buf, size_t len)
{
	const unsigned char *p = buf;
	uint64_t c = crc;

	while (len >= 8) {
		uint64_t w;

		memcpy(&w, p, 8);
		c = __builtin_ia32_crc32di(c, w);
		p += 8;
		len -= 8;
	}
	while (len--)
		c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
	return (uint32_t)c;
}

#else

int crc32c_hw_available(void)
{
	return 0;
}

uint32_t crc32c_hw(uint32_t crc, const void *buf, size_t len)
{
	return crc32c_sw(crc, buf, len);
}

#endif
