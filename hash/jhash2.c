/* SPDX-License-Identifier: MIT */
/*
 * jhash2 as in the Linux kernel's include/linux/jhash.h (Bob Jenkins' lookup3),
 * the page checksum KSM used until Linux 4.19:
 *	checksum = jhash2((u32 *)page, PAGE_BYTES / 4, 17);
 * Written here because no Debian library ships this exact variant.
 */
#include <string.h>

#include "hash.h"

#define JHASH_INITVAL 0xdeadbeefu

static inline uint32_t rol32(uint32_t w, unsigned s)
{
	return (w << s) | (w >> (32 - s));
}

#define jhash_mix(a, b, c)						\
	do {								\
		a -= c; a ^= rol32(c, 4);  c += b;			\
		b -= a; b ^= rol32(a, 6);  a += c;			\
		c -= b; c ^= rol32(b, 8);  b += a;			\
		a -= c; a ^= rol32(c, 16); c += b;			\
		b -= a; b ^= rol32(a, 19); a += c;			\
		c -= b; c ^= rol32(b, 4);  b += a;			\
	} while (0)

#define jhash_final(a, b, c)						\
	do {								\
		c ^= b; c -= rol32(b, 14);				\
		a ^= c; a -= rol32(c, 11);				\
		b ^= a; b -= rol32(a, 25);				\
		c ^= b; c -= rol32(b, 16);				\
		a ^= c; a -= rol32(c, 4);				\
		b ^= a; b -= rol32(a, 14);				\
		c ^= b; c -= rol32(b, 24);				\
	} while (0)

/* Read a 32-bit word as the kernel does on x86: host (little-endian) order. */
static inline uint32_t word(const unsigned char *p)
{
	uint32_t w;

	memcpy(&w, p, sizeof(w));
	return w;
}

uint32_t jhash2_page(const void *page)
{
	const unsigned char *k = page;
	uint32_t length = PAGE_BYTES / 4;
	uint32_t a, b, c;

	a = b = c = JHASH_INITVAL + (length << 2) + 17;

	/* All but the last 1 to 3 words go through the mix in blocks of three. */
	while (length > 3) {
		a += word(k);
		b += word(k + 4);
		c += word(k + 8);
		jhash_mix(a, b, c);
		length -= 3;
		k += 12;
	}

	/* 1024 = 3 * 341 + 1: one word remains, then the final mix. */
	switch (length) {
	case 3:
		c += word(k + 8);
		/* fall through */
	case 2:
		b += word(k + 4);
		/* fall through */
	case 1:
		a += word(k);
		jhash_final(a, b, c);
		break;
	default:
		break;
	}
	return c;
}
