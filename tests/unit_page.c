/* SPDX-License-Identifier: MIT */
/*
 * Unit test of util/page.h against libc's memcmp: page_equal() and
 * page_is_zero() must agree with it for a difference at every byte position
 * and in every bit, at aligned and unaligned addresses. A check is one
 * function at one alignment over all its cases; prints the first wrong cases
 * and last "N passed, N failed", like the Python suites.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/page.h"

static unsigned long passed, failed, wrong;

/* One case: a wrong answer fails the check it belongs to. */
static void check(int got, int exp, const char *what, unsigned at, unsigned bit,
		  unsigned shift)
{
	if (got != exp && ++wrong <= 20)
		printf("FAIL %s: byte %u bit %u shift %u: got %d, memcmp says %d\n",
		       what, at, bit, shift, got, exp);
	if (got != exp)
		wrong |= 1ul << 63;
}

/* The end of a check's cases. */
static void check_end(void)
{
	if (wrong >> 63)
		failed++;
	else
		passed++;
	wrong &= ~(1ul << 63);
}

int main(void)
{
	/* Room for a page at any of 64 byte offsets, twice. */
	unsigned char *abuf = malloc(PAGE_BYTES + 64), *bbuf = malloc(PAGE_BYTES + 64);
	unsigned seed = 12345;

	if (!abuf || !bbuf)
		return 1;
	for (unsigned shift = 0; shift < 64; shift += 7) {
		unsigned char *a = abuf + shift, *b = bbuf + (63 - shift);

		for (unsigned i = 0; i < PAGE_BYTES; i++) {
			seed = seed * 1103515245u + 12345u;
			a[i] = (unsigned char)(seed >> 16);
		}
		memcpy(b, a, PAGE_BYTES);
		check(page_equal(a, b), memcmp(a, b, PAGE_BYTES) == 0, "equal copy",
		      0, 0, shift);
		check_end();
		for (unsigned at = 0; at < PAGE_BYTES; at++) {
			for (unsigned bit = 0; bit < 8; bit += (at % 97 == 0) ? 1 : 8) {
				b[at] ^= (unsigned char)(1u << bit);
				check(page_equal(a, b), memcmp(a, b, PAGE_BYTES) == 0,
				      "page_equal", at, bit, shift);
				check(page_equal(b, a), memcmp(b, a, PAGE_BYTES) == 0,
				      "page_equal swapped", at, bit, shift);
				b[at] ^= (unsigned char)(1u << bit);
			}
		}
		check_end();
		/* The zero test: all zero, then one non-zero byte anywhere. */
		memset(a, 0, PAGE_BYTES);
		check(page_is_zero(a), 1, "page_is_zero of zeros", 0, 0, shift);
		check_end();
		for (unsigned at = 0; at < PAGE_BYTES; at++) {
			for (unsigned bit = 0; bit < 8; bit += (at % 89 == 0) ? 1 : 8) {
				static const unsigned char zero[PAGE_BYTES];

				a[at] = (unsigned char)(1u << bit);
				check(page_is_zero(a), memcmp(a, zero, PAGE_BYTES) == 0,
				      "page_is_zero", at, bit, shift);
				a[at] = 0;
			}
		}
		check_end();
	}
	free(abuf);
	free(bbuf);
	printf("%lu passed, %lu failed\n", passed, failed);
	return failed != 0;
}
