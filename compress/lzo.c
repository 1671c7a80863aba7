/* SPDX-License-Identifier: MIT */
/*
 * The length of a page compressed by the Linux kernel's LZO1X-1, as zram's
 * "lzo" and "lzo-rle" make it (lib/lzo; the format is described in the
 * kernel's Documentation/staging/lzo.rst). Only the length matters to zram's
 * figures, so this walks the same matches and literal runs and adds up
 * instruction sizes, writing nothing.
 *
 * Written here because no library offers it: liblzo2's lzo1x_1 hashes into
 * a table of 2^14 entries where the kernel's has 2^13, so it finds other
 * matches (on the fixture guest 0.1% other bytes and 12 more pages over
 * zram's huge size), and lzo-rle, the kernel's run-length coding of zero
 * runs, exists only in the kernel. tests/test_compress.py checks both
 * against a live zram device, byte for byte of compr_data_size.
 */
#include <stdint.h>
#include <string.h>

#include "compress.h"

#define DICT_BITS 13		/* the kernel's D_BITS */
#define DICT_SIZE (1u << DICT_BITS)
#define TAIL 20			/* bytes at the end never searched */
#define ZERO_RUN_MIN 4		/* a zero run shorter than this is not coded */
#define ZERO_RUN_MAX (2047 + ZERO_RUN_MIN)
#define M2_LEN 8		/* longest match with a 2-byte instruction */
#define M2_DIST 0x0800		/* its farthest distance */
#define M3_LEN 33		/* longest with a 1-byte length, near */
#define M3_DIST 0x4000		/* farthest "near" distance */
#define M4_LEN 9		/* longest with a 1-byte length, far */

static uint32_t le32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static uint64_t le64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

/* Bytes that code a length past @max in steps of 255: one per step, one more. */
static size_t long_len(size_t len, size_t max)
{
	size_t n = 1;

	for (len -= max; len > 255; len -= 255)
		n++;
	return n;
}

/* Bytes of a run of @t literals after an instruction. */
static size_t literals(size_t t)
{
	if (t == 0)
		return 0;
	if (t <= 3)
		return t;	/* the count rides in the previous instruction */
	if (t <= 18)
		return 1 + t;
	return 1 + long_len(t, 18) + t;
}

/* Where the first non-zero byte at or after @p is, at most @limit. */
static const unsigned char *zeros_end(const unsigned char *p,
				      const unsigned char *limit)
{
	while (p < limit && !*p)
		p++;
	return p;
}

/* How many bytes at @a equal those at @b, from 4 on, as the kernel's 64-bit
 * compare counts them (it may look past @end by up to a word). */
static size_t match_len(const unsigned char *a, const unsigned char *b,
			const unsigned char *end)
{
	size_t len = 4;
	uint64_t v = le64(a + len) ^ le64(b + len);

	while (!v) {
		len += 8;
		v = le64(a + len) ^ le64(b + len);
		if (a + len >= end)
			return len;
	}
	return len + (size_t)__builtin_ctzll(v) / 8;
}

/* Bytes of the instruction for a match of @len at distance @dist; @len
 * may be shortened (lzo-rle avoids one ambiguous far match). */
static size_t match_bytes(size_t *len, size_t dist, int rle)
{
	if (*len <= M2_LEN && dist <= M2_DIST)
		return 2;
	/* A marker, the length past it if long, and a 2-byte distance. */
	if (dist <= M3_DIST)
		return 3 + (*len <= M3_LEN ? 0 : long_len(*len, M3_LEN));
	if (*len <= M4_LEN)
		return 3;
	if (rle && ((dist - 0x4000) & 0x403f) == 0x403f && *len >= 261 &&
	    *len <= 264)
		*len = 260;
	return 3 + long_len(*len, M4_LEN);
}

size_t lzo_page_len(const unsigned char *in, int rle, uint16_t *dict)
{
	const unsigned char *ip = in + 4, *ii = in;
	const unsigned char *end = in + PAGE_BYTES - TAIL;
	size_t out = rle ? 2 : 0;	/* lzo-rle starts with its version */
	int skip = 1;

	memset(dict, 0, DICT_SIZE * sizeof(*dict));
	for (;;) {
		const unsigned char *m = NULL;
		size_t run = 0;

		/* Among literals the search moves faster the longer they run;
		 * after an instruction it goes on right there. */
		if (skip)
			ip += 1 + ((size_t)(ip - ii) >> 5);
		skip = 1;
		if (ip >= end)
			break;
		uint32_t dv = le32(ip);

		if (!dv && rle) {
			const unsigned char *limit = end < ip + ZERO_RUN_MAX + 1 ?
						     end : ip + ZERO_RUN_MAX + 1;

			run = (size_t)(zeros_end(ip + 4, limit) - ip);
			if (run > ZERO_RUN_MAX)
				run = ZERO_RUN_MAX;
		} else {
			uint32_t h = (dv * 0x1824429du) >> (32 - DICT_BITS);

			m = in + dict[h];
			dict[h] = (uint16_t)(ip - in);
			if (dv != le32(m))
				continue;
		}
		out += literals((size_t)(ip - ii));
		if (run) {
			ip += run;
			out += 4;
		} else {
			size_t len = match_len(ip, m, end);

			out += match_bytes(&len, (size_t)(ip - m), rle);
			ip += len;
		}
		ii = ip;
		skip = 0;
	}
	/* The rest are literals, then the end-of-stream instruction. */
	size_t t = (size_t)(in + PAGE_BYTES - ii);

	if (out == (rle ? 2u : 0u) && t <= 238)
		out += 1 + t;
	else
		out += literals(t);
	return out + 3;
}
