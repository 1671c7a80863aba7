/* SPDX-License-Identifier: MIT */
/*
 * The one table of checksum algorithms. Each entry is a small adapter from a
 * family's native result to a struct digest; the driver never knows which
 * algorithm it runs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"

static void jhash2_adapter(const void *page, struct digest *out)
{
	out->hi = 0;
	out->lo = jhash2_page(page);
}

static void crc32c_sw_adapter(const void *page, struct digest *out)
{
	out->hi = 0;
	out->lo = crc32c_sw(0, page, PAGE_BYTES);
}

static void crc32c_hw_adapter(const void *page, struct digest *out)
{
	out->hi = 0;
	out->lo = crc32c_hw(0, page, PAGE_BYTES);
}

static void xxhash_adapter(const void *page, struct digest *out)
{
	out->hi = 0;
	out->lo = xxh64_page(page) & 0xffffffffu;
}

static void xxh32_adapter(const void *page, struct digest *out)
{
	out->hi = 0;
	out->lo = xxh32_page(page);
}

static void xxh64_adapter(const void *page, struct digest *out)
{
	out->hi = 0;
	out->lo = xxh64_page(page);
}

static void xxh3_adapter(const void *page, struct digest *out)
{
	out->hi = 0;
	out->lo = xxh3_page(page);
}

static struct algo algos[] = {
	{ "jhash2", 32,
	  "KSM's checksum until Linux 4.19: jhash2((u32 *)page, 1024, 17)",
	  jhash2_adapter, "portable" },
	{ "crc32c", 32,
	  "the kernel's crc32c(0, page, 4096), fastest path of this CPU",
	  crc32c_sw_adapter, "portable" },
	{ "crc32c-sw", 32,
	  "the same crc32c value, portable software (slicing-by-8)",
	  crc32c_sw_adapter, "portable" },
	{ "xxhash", 32,
	  "KSM's checksum since Linux 4.20: low 32 bits of XXH64(page, 4096, 0)",
	  xxhash_adapter, "libxxhash" },
	{ "xxh32", 32, "XXH32(page, 4096, 0)", xxh32_adapter, "libxxhash" },
	{ "xxh64", 64, "XXH64(page, 4096, 0)", xxh64_adapter, "libxxhash" },
	{ "xxh3", 64, "XXH3_64bits(page, 4096)", xxh3_adapter, "libxxhash" },
	{ "xxh128", 128, "XXH3_128bits(page, 4096), high 64 bits printed first",
	  xxh128_page, "libxxhash" },
};

#define NALGOS (sizeof(algos) / sizeof(algos[0]))

void hash_init(void)
{
	const char *force = getenv("KSMSCAN_CRC32C");
	struct algo *crc = &algos[1];
	int hw = crc32c_hw_available();

	/* A forced path the CPU lacks falls back to software, as a test expects. */
	if (force && strcmp(force, "sw") == 0)
		hw = 0;
	if (hw) {
		crc->hash = crc32c_hw_adapter;
		crc->impl = "sse4.2";
	}
}

size_t hash_count(void)
{
	return NALGOS;
}

const struct algo *hash_get(size_t i)
{
	return i < NALGOS ? &algos[i] : NULL;
}

const struct algo *hash_lookup(const char *name, size_t len)
{
	for (size_t i = 0; i < NALGOS; i++)
		if (strlen(algos[i].name) == len &&
		    memcmp(algos[i].name, name, len) == 0)
			return &algos[i];
	return NULL;
}

char *digest_format(const struct algo *a, const struct digest *d, char *buf)
{
	switch (a->bits) {
	case 128:
		snprintf(buf, 33, "%016llx%016llx", (unsigned long long)d->hi,
			 (unsigned long long)d->lo);
		break;
	case 64:
		snprintf(buf, 33, "%016llx", (unsigned long long)d->lo);
		break;
	default:
		snprintf(buf, 33, "%08llx", (unsigned long long)d->lo);
		break;
	}
	return buf;
}
