/* SPDX-License-Identifier: MIT */
#ifndef KSMSCAN_PAGE_H
#define KSMSCAN_PAGE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The size of a page: KSM merges, and every checksum hashes, this many bytes. */
#define PAGE_BYTES 4096u

/*
 * Pages the engine hashes as one batch (1 MiB), and so the size of a buffer
 * a stream reader offers the engine: the one batch size.
 */
#define BATCH_PAGES 256

/* "None": no content id, no tree node (content ids and node numbers are
 * 32-bit indexes, so this one value is never a real one). */
#define NO_ID UINT32_MAX

/*
 * Whole-page tests on the scan's hot path, in SSE2 (every x86-64 CPU has it;
 * elsewhere 64-bit words). They are written by hand because musl's memcmp
 * compares byte by byte: it took a fifth of a scan's cycles when every
 * duplicate page was compared.
 */
#if defined(__SSE2__)
#include <emmintrin.h>

/**
 * page_equal() - whether two pages of PAGE_BYTES bytes are byte-for-byte equal.
 * @a: one page
 * @b: the other
 *
 * Unequal pages usually differ in their first bytes: the first 64 are looked
 * at before the rest.
 */
static inline int page_equal(const unsigned char *a, const unsigned char *b)
{
	for (unsigned i = 0; i < PAGE_BYTES; i += 64) {
		__m128i d0 = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(a + i)),
					   _mm_loadu_si128((const __m128i *)(b + i)));
		__m128i d1 = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(a + i + 16)),
					   _mm_loadu_si128((const __m128i *)(b + i + 16)));
		__m128i d2 = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(a + i + 32)),
					   _mm_loadu_si128((const __m128i *)(b + i + 32)));
		__m128i d3 = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(a + i + 48)),
					   _mm_loadu_si128((const __m128i *)(b + i + 48)));
		__m128i d = _mm_or_si128(_mm_or_si128(d0, d1), _mm_or_si128(d2, d3));

		if (_mm_movemask_epi8(_mm_cmpeq_epi8(d, _mm_setzero_si128())) != 0xffff)
			return 0;
	}
	return 1;
}

/**
 * page_is_zero() - whether all PAGE_BYTES bytes of a page are zero.
 * @p: the page
 *
 * Most pages that are not zero show a non-zero byte in their first 64 bytes.
 */
static inline int page_is_zero(const unsigned char *p)
{
	for (unsigned i = 0; i < PAGE_BYTES; i += 64) {
		__m128i d = _mm_or_si128(
			_mm_or_si128(_mm_loadu_si128((const __m128i *)(p + i)),
				     _mm_loadu_si128((const __m128i *)(p + i + 16))),
			_mm_or_si128(_mm_loadu_si128((const __m128i *)(p + i + 32)),
				     _mm_loadu_si128((const __m128i *)(p + i + 48))));

		if (_mm_movemask_epi8(_mm_cmpeq_epi8(d, _mm_setzero_si128())) != 0xffff)
			return 0;
	}
	return 1;
}

#else

/* Whether the 64 bytes at @a and @b differ (@b NULL: whether @a has a 1 bit). */
static inline uint64_t page_diff64(const unsigned char *a, const unsigned char *b)
{
	uint64_t acc = 0;

	for (unsigned k = 0; k < 64; k += 8) {
		uint64_t x, y = 0;

		memcpy(&x, a + k, 8);
		if (b)
			memcpy(&y, b + k, 8);
		acc |= x ^ y;
	}
	return acc;
}

static inline int page_equal(const unsigned char *a, const unsigned char *b)
{
	for (unsigned i = 0; i < PAGE_BYTES; i += 64)
		if (page_diff64(a + i, b + i))
			return 0;
	return 1;
}

static inline int page_is_zero(const unsigned char *p)
{
	for (unsigned i = 0; i < PAGE_BYTES; i += 64)
		if (page_diff64(p + i, NULL))
			return 0;
	return 1;
}

#endif
/**
 * page_compare() - memcmp of two pages from byte @from on (a multiple of 8,
 * the bytes before it equal) that also counts the bytes it looked at: up to
 * and including the first difference, or all of them for equal pages.
 * @a: a page
 * @b: another page
 * @from: where to start
 * @bytes: incremented by the bytes looked at
 *
 * KSM orders its trees with memcmp(); the count is what the CPU model charges.
 *
 * Return: <0, 0 or >0 as memcmp().
 */
static inline int page_compare(const unsigned char *a, const unsigned char *b,
			       size_t from, uint64_t *bytes)
{
	for (size_t i = from; i < PAGE_BYTES; i += 8) {
		uint64_t x, y;

		memcpy(&x, a + i, 8);
		memcpy(&y, b + i, 8);
		if (x != y) {
			size_t k = i;

			while (a[k] == b[k])
				k++;
			*bytes += k + 1;
			return a[k] < b[k] ? -1 : 1;
		}
	}
	*bytes += PAGE_BYTES;
	return 0;
}

#endif
