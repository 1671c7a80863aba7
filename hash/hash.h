/* SPDX-License-Identifier: MIT */
#ifndef KSMSCAN_HASH_H
#define KSMSCAN_HASH_H

#include <stddef.h>
#include <stdint.h>

#include "../util/page.h"	/* PAGE_BYTES: every algorithm hashes one page */

/* Most algorithms one run can select (the table has fewer). */
#define ALGO_MAX 16

/* A digest of up to 128 bits: hi holds bits 127..64 (zero for narrower digests). */
struct digest {
	uint64_t hi;
	uint64_t lo;
};

/* Most implementations one algorithm has. */
#define IMPL_MAX 6

/* One way to compute an algorithm: every one gives the same digests. */
struct impl {
	const char *name;			/* e.g. "sse42x3", "avx2" */
	int (*available)(void);			/* whether this CPU runs it */
	void (*hash)(const void *page, struct digest *out);
};

/* One checksum algorithm: the single table in hash.c lists them all. */
struct algo {
	const char *name;	/* name on the command line and in reports */
	unsigned bits;		/* digest width: 32, 64 or 128 */
	const char *description;/* one-line definition (ksmscan -a help) */
	/* Implementations, fastest first; the last one runs on any CPU. */
	struct impl impls[IMPL_MAX];
	/* Hash one PAGE_BYTES-byte page with the implementation chosen. */
	void (*hash)(const void *page, struct digest *out);
	const char *impl;	/* name of the implementation in use */
};

/**
 * hash_init() - choose the fastest implementation of each algorithm for this CPU.
 *
 * Call once before any other function here. KSMSCAN_IMPL_<ALGO>=<impl> in the
 * environment (for example KSMSCAN_IMPL_CRC32C=sw) forces an implementation,
 * for tests; one this CPU lacks is refused with a warning.
 */
void hash_init(void);

/**
 * hash_count() - number of algorithms in the table.
 *
 * Return: the count; valid indexes for hash_get() are 0..count-1.
 */
size_t hash_count(void);

/**
 * hash_get() - an algorithm of the table by index.
 * @i: index, less than hash_count()
 *
 * Return: the entry, never NULL for a valid index.
 */
const struct algo *hash_get(size_t i);

/**
 * hash_lookup() - find an algorithm by name.
 * @name: algorithm name, exact match
 * @len: length of @name
 *
 * Return: the entry, or NULL if no algorithm has that name.
 */
const struct algo *hash_lookup(const char *name, size_t len);

/**
 * digest_format() - print a digest as lower-case hex, zero-padded to its width.
 * @a: the algorithm that made the digest
 * @d: the digest
 * @buf: at least 33 bytes
 *
 * Return: @buf.
 */
char *digest_format(const struct algo *a, const struct digest *d, char *buf);


/* Family entry points, each defined in its own file. */

/** jhash2_page() - the kernel's jhash2((u32 *)page, 1024, 17). */
uint32_t jhash2_page(const void *page);

/** crc32c_sw() - crc32c(crc, buf, len) in portable software (slicing-by-8). */
uint32_t crc32c_sw(uint32_t crc, const void *buf, size_t len);

/** crc32c_init() - compute the tables and folding constants once. */
void crc32c_init(void);

/** crc32c_have_sse42() - whether this CPU has the SSE4.2 crc32 instruction. */
int crc32c_have_sse42(void);

/** crc32c_have_pclmul() - whether it also has carry-less multiplication. */
int crc32c_have_pclmul(void);

/** crc32c_have_avx512() - whether it has AVX-512F and VPCLMULQDQ. */
int crc32c_have_avx512(void);

/** crc32c_page_avx512() - crc32c of a page folded with 512-bit VPCLMULQDQ. */
uint32_t crc32c_page_avx512(uint32_t crc, const void *page);

/** crc32c_have_vpclmul() - whether it has AVX2 and 256-bit VPCLMULQDQ. */
int crc32c_have_vpclmul(void);

/** crc32c_sse42() - crc32c(crc, buf, len), one chain of crc32 instructions. */
uint32_t crc32c_sse42(uint32_t crc, const void *buf, size_t len);

/** crc32c_page_x3() - crc32c of a page: three crc32 chains joined by clmul. */
uint32_t crc32c_page_x3(uint32_t crc, const void *page);

/** crc32c_page_vpclmul() - crc32c of a page folded with 256-bit VPCLMULQDQ. */
uint32_t crc32c_page_vpclmul(uint32_t crc, const void *page);

/** xxh32_page() - XXH32(page, PAGE_BYTES, 0). */
uint32_t xxh32_page(const void *page);

/** xxh64_page() - XXH64(page, PAGE_BYTES, 0). */
uint64_t xxh64_page(const void *page);

/** xxh3_page() - XXH3_64bits(page, PAGE_BYTES). */
uint64_t xxh3_page(const void *page);

/** xxh128_page() - XXH3_128bits(page, PAGE_BYTES) as a digest, high half in hi. */
void xxh128_page(const void *page, struct digest *out);

/** xxh_init() - choose the XXH3 build for xxh3_seeded_page(); called by hash_init(). */
void xxh_init(void);

/**
 * xxh3_seeded_page() - XXH3_64bits_withSeed(page, PAGE_BYTES, seed), by the
 * widest vector build this CPU runs (the index's keys: with a secret seed,
 * a dump cannot be made whose pages all fall on one key).
 */
uint64_t xxh3_seeded_page(const void *page, uint64_t seed);

/** xxh3_seeded_page_avx2() - the same, AVX2 build. */
uint64_t xxh3_seeded_page_avx2(const void *page, uint64_t seed);

/** xxh3_seeded_page_avx512() - the same, AVX-512 build. */
uint64_t xxh3_seeded_page_avx512(const void *page, uint64_t seed);

/** xxh_have_avx2() - whether this CPU runs the AVX2 build of XXH3. */
int xxh_have_avx2(void);

/** xxh_have_avx512() - whether this CPU runs the AVX-512 build of XXH3. */
int xxh_have_avx512(void);

/** xxh3_page_avx2() - XXH3_64bits of a page, AVX2 build. */
uint64_t xxh3_page_avx2(const void *page);

/** xxh128_page_avx2() - XXH3_128bits of a page, AVX2 build. */
void xxh128_page_avx2(const void *page, struct digest *out);

/** xxh3_page_avx512() - XXH3_64bits of a page, AVX-512 build. */
uint64_t xxh3_page_avx512(const void *page);

/** xxh128_page_avx512() - XXH3_128bits of a page, AVX-512 build. */
void xxh128_page_avx512(const void *page, struct digest *out);

#endif
