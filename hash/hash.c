/* SPDX-License-Identifier: MIT */
/*
 * The one table of checksum algorithms. Each entry is a small adapter from a
 * family's native result to a struct digest; the driver never knows which
 * algorithm it runs.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/util.h"
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

static void crc32c_sse42_adapter(const void *page, struct digest *out)
{
	out->hi = 0;
	out->lo = crc32c_sse42(0, page, PAGE_BYTES);
}

static void crc32c_x3_adapter(const void *page, struct digest *out)
{
	out->hi = 0;
	out->lo = crc32c_page_x3(0, page);
}

static void crc32c_avx512_adapter(const void *page, struct digest *out)
{
	out->hi = 0;
	out->lo = crc32c_page_avx512(0, page);
}

static void crc32c_vpclmul_adapter(const void *page, struct digest *out)
{
	out->hi = 0;
	out->lo = crc32c_page_vpclmul(0, page);
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

/* The vector builds of XXH3 are x86-64's only (the Makefile's VEC_SRCS). */
#if defined(__x86_64__)
static void xxh3_avx2_adapter(const void *page, struct digest *out)
{
	out->hi = 0;
	out->lo = xxh3_page_avx2(page);
}

static void xxh3_avx512_adapter(const void *page, struct digest *out)
{
	out->hi = 0;
	out->lo = xxh3_page_avx512(page);
}

#define XXH3_VECTORS \
	{ "avx512", xxh_have_avx512, xxh3_avx512_adapter }, \
	{ "avx2", xxh_have_avx2, xxh3_avx2_adapter },
#define XXH128_VECTORS \
	{ "avx512", xxh_have_avx512, xxh128_page_avx512 }, \
	{ "avx2", xxh_have_avx2, xxh128_page_avx2 },
#else
#define XXH3_VECTORS
#define XXH128_VECTORS
#endif

/* The implementation that runs everywhere. */
static int always(void)
{
	return 1;
}

#if defined(__x86_64__)
#define BASE_VECTOR "sse2"
#else
#define BASE_VECTOR "scalar"
#endif

static struct algo algos[] = {
	{ "jhash2", 32,
	  "KSM's checksum until Linux 4.19: jhash2((u32 *)page, 1024, 17)",
	  { { "portable", always, jhash2_adapter } }, NULL, NULL },
	{ "crc32c", 32,
	  "the kernel's crc32c(0, page, 4096), fastest path of this CPU",
	  { { "avx512", crc32c_have_avx512, crc32c_avx512_adapter },
	    { "vpclmul", crc32c_have_vpclmul, crc32c_vpclmul_adapter },
	    { "sse42x3", crc32c_have_pclmul, crc32c_x3_adapter },
	    { "sse42", crc32c_have_sse42, crc32c_sse42_adapter },
	    { "sw", always, crc32c_sw_adapter } }, NULL, NULL },
	{ "crc32c-sw", 32,
	  "the same crc32c value, portable software (slicing-by-8)",
	  { { "sw", always, crc32c_sw_adapter } }, NULL, NULL },
	{ "xxhash", 32,
	  "KSM's checksum since Linux 4.20: low 32 bits of XXH64(page, 4096, 0)",
	  { { "scalar", always, xxhash_adapter } }, NULL, NULL },
	{ "xxh32", 32, "XXH32(page, 4096, 0)",
	  { { "scalar", always, xxh32_adapter } }, NULL, NULL },
	{ "xxh64", 64, "XXH64(page, 4096, 0)",
	  { { "scalar", always, xxh64_adapter } }, NULL, NULL },
	{ "xxh3", 64, "XXH3_64bits(page, 4096)",
	  { XXH3_VECTORS
	    { BASE_VECTOR, always, xxh3_adapter } }, NULL, NULL },
	{ "xxh128", 128, "XXH3_128bits(page, 4096), high 64 bits printed first",
	  { XXH128_VECTORS
	    { BASE_VECTOR, always, xxh128_page } }, NULL, NULL },
};

#define NALGOS (sizeof(algos) / sizeof(algos[0]))

/* Make @a use its implementation @name: 0, or -1 if there is none such or
 * this CPU lacks it. */
static int hash_set_impl(const struct algo *a, const char *name)
{
	struct algo *w = &algos[a - algos];

	for (size_t i = 0; i < IMPL_MAX && w->impls[i].name; i++) {
		if (strcmp(w->impls[i].name, name) != 0)
			continue;
		if (!w->impls[i].available())
			return -1;
		w->hash = w->impls[i].hash;
		w->impl = w->impls[i].name;
		return 0;
	}
	return -1;
}

void hash_init(void)
{
	crc32c_init();
	xxh_init();
	for (size_t i = 0; i < NALGOS; i++) {
		struct algo *a = &algos[i];
		char var[64];
		const char *force;

		/* The first implementation this CPU runs is the fastest. */
		for (size_t k = 0; k < IMPL_MAX && a->impls[k].name; k++) {
			if (a->impls[k].available()) {
				a->hash = a->impls[k].hash;
				a->impl = a->impls[k].name;
				break;
			}
		}
		/* KSMSCAN_IMPL_CRC32C_SW for crc32c-sw: upper case, '-' as '_'. */
		snprintf(var, sizeof(var), "KSMSCAN_IMPL_%s", a->name);
		for (char *c = var; *c; c++)
			*c = *c == '-' ? '_' : (char)toupper((unsigned char)*c);
		force = getenv(var);
		if (force && hash_set_impl(a, force) < 0)
			warn("%s=%s: no such implementation on this CPU; using %s",
			     var, force, a->impl);
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
