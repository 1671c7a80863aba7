/* SPDX-License-Identifier: MIT */
/*
 * XXH3 built for AVX2 (this file is compiled with -mavx2). Debian's
 * libxxhash.a has no run-time dispatcher, so each vector width is its own
 * translation unit of the header-only library and hash.c picks one.
 */
#define XXH_INLINE_ALL
#define XXH_VECTOR XXH_AVX2
#include <xxhash.h>

#include "hash.h"

uint64_t xxh3_page_avx2(const void *page)
{
	return XXH3_64bits(page, PAGE_BYTES);
}

void xxh128_page_avx2(const void *page, struct digest *out)
{
	XXH128_hash_t h = XXH3_128bits(page, PAGE_BYTES);

	out->hi = h.high64;
	out->lo = h.low64;
}
