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
