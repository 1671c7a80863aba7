/* SPDX-License-Identifier: MIT */
#ifndef KSMSCAN_BYTES_H
#define KSMSCAN_BYTES_H

#include <stdint.h>

/*
 * Integers stored in a dump, read byte by byte whatever the host's order or
 * the field's alignment, and the overflow-safe bounds check every reader uses.
 */

/**
 * get_le() - an unsigned little-endian integer of 1 to 8 bytes.
 * @p: its first byte
 * @bytes: its width
 */
static inline uint64_t get_le(const unsigned char *p, int bytes)
{
	uint64_t v = 0;

	for (int i = bytes - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/**
 * get_be() - an unsigned big-endian integer of 1 to 8 bytes.
 * @p: its first byte
 * @bytes: its width
 */
static inline uint64_t get_be(const unsigned char *p, int bytes)
{
	uint64_t v = 0;

	for (int i = 0; i < bytes; i++)
		v = v << 8 | p[i];
	return v;
}

/**
 * span_ok() - whether [@off, @off + @len) lies within @size bytes, computed
 * without overflow whatever the values read from a file.
 */
static inline int span_ok(uint64_t off, uint64_t len, uint64_t size)
{
	return off <= size && len <= size - off;
}

#endif
