/* SPDX-License-Identifier: MIT */
#ifndef KSMSCAN_HASH_H
#define KSMSCAN_HASH_H

#include <stddef.h>
#include <stdint.h>

/* The size of a page: every algorithm hashes exactly this many bytes. */
#define PAGE_BYTES 4096u

/* Most algorithms one run can select (the table has fewer). */
#define ALGO_MAX 16

/* A digest of up to 128 bits: hi holds bits 127..64 (zero for narrower digests). */
struct digest {
	uint64_t hi;
	uint64_t lo;
};

/* One checksum algorithm: the single table in hash.c lists them all. */
struct algo {
	const char *name;	/* name on the command line and in reports */
	unsigned bits;		/* digest width: 32, 64 or 128 */
	const char *description;/* one-line definition, as in SPEC section 3 */
	/* Hash one PAGE_BYTES-byte page; may be replaced at run time (CPU dispatch). */
	void (*hash)(const void *page, struct digest *out);
	const char *impl;	/* implementation in use, e.g. "sse4.2" */
};

/**
 * hash_init() - choose the fastest implementation of each algorithm for this CPU.
 *
 * Call once before any other function here. Honours KSMSCAN_CRC32C=sw|sse42 to
 * force a crc32c path (for tests).
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

/**
 * fingerprint() - the 64-bit key under which the index files a page's content.
 * @page: PAGE_BYTES bytes
 *
 * A fingerprint only finds candidates; equality is always decided by memcmp.
 *
 * Return: XXH3_64bits of the page.
 */
uint64_t fingerprint(const void *page);

/* Family entry points, each defined in its own file. */

/** jhash2_page() - the kernel's jhash2((u32 *)page, 1024, 17). */
uint32_t jhash2_page(const void *page);

/** crc32c_sw() - crc32c(crc, buf, len) in portable software (slicing-by-8). */
uint32_t crc32c_sw(uint32_t crc, const void *buf, size_t len);

/** crc32c_hw_available() - whether this CPU has the SSE4.2 crc32 instruction. */
int crc32c_hw_available(void);

/** crc32c_hw() - crc32c(crc, buf, len) with SSE4.2; only if crc32c_hw_available(). */
uint32_t crc32c_hw(uint32_t crc, const void *buf, size_t len);

/** xxh32_page() - XXH32(page, PAGE_BYTES, 0). */
uint32_t xxh32_page(const void *page);

/** xxh64_page() - XXH64(page, PAGE_BYTES, 0). */
uint64_t xxh64_page(const void *page);

/** xxh3_page() - XXH3_64bits(page, PAGE_BYTES). */
uint64_t xxh3_page(const void *page);

/** xxh128_page() - XXH3_128bits(page, PAGE_BYTES) as a digest, high half in hi. */
void xxh128_page(const void *page, struct digest *out);

#endif
