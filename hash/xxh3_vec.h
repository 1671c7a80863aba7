/* SPDX-License-Identifier: MIT */
/*
 * One vector build of XXH3, included by xxh3_avx2.c and xxh3_avx512.c, each
 * compiled with its own -m flag. Debian's libxxhash.a has no run-time
 * dispatcher, so each vector width is its own translation unit of the
 * header-only library, and hash.c picks one at run time.
 *
 * The including file defines XXH_VECTOR and XXH3_SUFFIX (avx2 or avx512).
 */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "hash.h"

#define XXH3_PASTE(a, b) a##b
#define XXH3_NAME(base, suffix) XXH3_PASTE(base, suffix)

uint64_t XXH3_NAME(xxh3_page_, XXH3_SUFFIX)(const void *page)
{
	return XXH3_64bits(page, PAGE_BYTES);
}

void XXH3_NAME(xxh128_page_, XXH3_SUFFIX)(const void *page, struct digest *out)
{
	XXH128_hash_t h = XXH3_128bits(page, PAGE_BYTES);

	out->hi = h.high64;
	out->lo = h.low64;
}

uint64_t XXH3_NAME(xxh3_seeded_page_, XXH3_SUFFIX)(const void *page, uint64_t seed)
{
	return XXH3_64bits_withSeed(page, PAGE_BYTES, seed);
}
