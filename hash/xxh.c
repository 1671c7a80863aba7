/* SPDX-License-Identifier: MIT */
/*
 * The xxHash family from Debian's libxxhash-dev, compiled in (XXH_INLINE_ALL):
 * the static binary then needs no shared library and the compiler can inline
 * the fixed 4096-byte length.
 */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "hash.h"

uint32_t xxh32_page(const void *page)
{
	return XXH32(page, PAGE_BYTES, 0);
}

uint64_t xxh64_page(const void *page)
{
	return XXH64(page, PAGE_BYTES, 0);
}

uint64_t xxh3_page(const void *page)
{
	return XXH3_64bits(page, PAGE_BYTES);
}

static uint64_t xxh3_seeded_page_sse2(const void *page, uint64_t seed);

/* The widest build this CPU runs, chosen by xxh_init() before any thread. */
static uint64_t (*seeded)(const void *, uint64_t) = xxh3_seeded_page_sse2;

void xxh_init(void)
{
#if defined(__x86_64__)	/* the vector builds are x86-64's only */
	seeded = xxh_have_avx512() ? xxh3_seeded_page_avx512 :
		 xxh_have_avx2() ? xxh3_seeded_page_avx2 : xxh3_seeded_page_sse2;
#endif
}

uint64_t xxh3_seeded_page(const void *page, uint64_t seed)
{
	return seeded(page, seed);
}

static uint64_t xxh3_seeded_page_sse2(const void *page, uint64_t seed)
{
	return XXH3_64bits_withSeed(page, PAGE_BYTES, seed);
}

void xxh128_page(const void *page, struct digest *out)
{
	XXH128_hash_t h = XXH3_128bits(page, PAGE_BYTES);

	out->hi = h.high64;
	out->lo = h.low64;
}


int xxh_have_avx2(void)
{
#if defined(__x86_64__)
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx2");
#else
	return 0;
#endif
}

int xxh_have_avx512(void)
{
#if defined(__x86_64__)
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx512f");
#else
	return 0;
#endif
}
