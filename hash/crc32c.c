/* SPDX-License-Identifier: MIT */
/*
 * crc32c in the kernel's convention: crc32c(seed, buf, len) with the reflected
 * Castagnoli polynomial 0x82F63B78 and no pre- or post-inversion, so that
 * crc32c(0, zero page) == 0 and crc32c(0, "123456789") == 0x58e3fa20.
 *
 * Written here because zlib has only the IEEE polynomial and no Debian static
 * library offers crc32c (ISA-L ships a shared library only).
 */
#include <string.h>

#include "hash.h"

#define CRC32C_POLY 0x82F63B78u

static uint32_t table[8][256];
static int table_ready;

/* Build the slicing-by-8 tables once. */
static void crc32c_table_init(void)
{
	for (unsigned i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (CRC32C_POLY & (0u - (c & 1)));
		table[0][i] = c;
	}
	for (unsigned i = 0; i < 256; i++)
		for (int t = 1; t < 8; t++)
			table[t][i] = (table[t - 1][i] >> 8) ^
				      table[0][table[t - 1][i] & 0xff];
	table_ready = 1;
}

uint32_t crc32c_sw(uint32_t crc, const void *buf, size_t len)
{
	const unsigned char *p = buf;

	if (!table_ready)
		crc32c_table_init();

	/* Eight bytes a step: the little-endian word folds into eight lookups. */
	while (len >= 8) {
		uint64_t w;

		memcpy(&w, p, 8);
		w ^= crc;
		crc = table[7][w & 0xff] ^ table[6][(w >> 8) & 0xff] ^
		      table[5][(w >> 16) & 0xff] ^ table[4][(w >> 24) & 0xff] ^
		      table[3][(w >> 32) & 0xff] ^ table[2][(w >> 40) & 0xff] ^
		      table[1][(w >> 48) & 0xff] ^ table[0][w >> 56];
		p += 8;
		len -= 8;
	}
	while (len--)
		crc = (crc >> 8) ^ table[0][(crc ^ *p++) & 0xff];
	return crc;
}

/*
 * x^k mod P in the reflected representation (bit 31 is x^0), for the
 * constants that shift a CRC over k bits with a carry-less multiplication.
 */
static uint32_t xpow_mod(unsigned long k)
{
	uint32_t r = 0x80000000u;

	while (k--)
		r = (r >> 1) ^ (CRC32C_POLY & (0u - (r & 1)));
	return r;
}

#if defined(__x86_64__)

#include <immintrin.h>

/* Bytes per stream of the three-way crc32 path: 3 * 1344 + 64 = 4096. */
#define X3_BLOCK 1344

/* Constants, computed once by crc32c_init(). */
static uint32_t k_x3_1, k_x3_2;		/* shift by X3_BLOCK, 2 * X3_BLOCK bytes */
static uint64_t k_fold128[2];		/* fold a 16-byte lane forward 128 bytes */
static uint64_t k_fold96[2], k_fold64[2], k_fold32[2], k_fold16[2];
static uint64_t k_fold256[2], k_fold192[2], k_fold48[2];	/* the 512-bit path */

/*
 * A 16-byte lane at distance D bytes before another folds onto it as
 * lo * x^(8D+31) + hi * x^(8D-33) (found for this representation and checked
 * by the tests against the portable path).
 */
static void fold_consts(uint64_t k[2], unsigned long dist)
{
	k[0] = xpow_mod(8 * dist + 31);
	k[1] = xpow_mod(8 * dist - 33);
}

void crc32c_init(void)
{
	if (!table_ready)
		crc32c_table_init();
	/* crc * x^(8n) mod P is crc32(0, clmul(crc, x^(8n-33))). */
	k_x3_1 = xpow_mod(8 * X3_BLOCK - 33);
	k_x3_2 = xpow_mod(8 * 2 * X3_BLOCK - 33);
	fold_consts(k_fold128, 128);
	fold_consts(k_fold96, 96);
	fold_consts(k_fold64, 64);
	fold_consts(k_fold32, 32);
	fold_consts(k_fold16, 16);
	fold_consts(k_fold256, 256);
	fold_consts(k_fold192, 192);
	fold_consts(k_fold48, 48);
}

int crc32c_have_sse42(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("sse4.2");
}

int crc32c_have_pclmul(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("sse4.2") && __builtin_cpu_supports("pclmul");
}

int crc32c_have_avx512(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx512f") &&
	       __builtin_cpu_supports("vpclmulqdq") &&
	       __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.2");
}

int crc32c_have_vpclmul(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx2") &&
	       __builtin_cpu_supports("vpclmulqdq") &&
	       __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.2");
}

__attribute__((target("sse4.2")))
uint32_t crc32c_sse42(uint32_t crc, const void *buf, size_t len)
{
	const unsigned char *p = buf;
	uint64_t c = crc;

	while (len >= 8) {
		uint64_t w;

		memcpy(&w, p, 8);
		c = _mm_crc32_u64(c, w);
		p += 8;
		len -= 8;
	}
	while (len--)
		c = _mm_crc32_u8((uint32_t)c, *p++);
	return (uint32_t)c;
}

/* crc * x^(8n) mod P for the constant K = x^(8n-33) mod P. */
__attribute__((target("sse4.2,pclmul")))
static inline uint32_t crc_shift(uint32_t crc, uint32_t k)
{
	__m128i t = _mm_clmulepi64_si128(_mm_cvtsi32_si128((int)crc),
					 _mm_cvtsi32_si128((int)k), 0x00);

	return (uint32_t)_mm_crc32_u64(0, (uint64_t)_mm_cvtsi128_si64(t));
}

__attribute__((target("sse4.2,pclmul")))
uint32_t crc32c_page_x3(uint32_t crc, const void *page)
{
	const unsigned char *a = page, *b = a + X3_BLOCK, *c = b + X3_BLOCK;
	uint64_t ca = crc, cb = 0, cc = 0;

	/* Three independent chains keep the crc32 unit busy every cycle. */
	for (size_t i = 0; i < X3_BLOCK; i += 8) {
		uint64_t wa, wb, wc;

		memcpy(&wa, a + i, 8);
		memcpy(&wb, b + i, 8);
		memcpy(&wc, c + i, 8);
		ca = _mm_crc32_u64(ca, wa);
		cb = _mm_crc32_u64(cb, wb);
		cc = _mm_crc32_u64(cc, wc);
	}
	/* The CRC is linear: shift each chain to the end and add them. */
	uint32_t r = crc_shift((uint32_t)ca, k_x3_2) ^
		     crc_shift((uint32_t)cb, k_x3_1) ^ (uint32_t)cc;

	return crc32c_sse42(r, c + X3_BLOCK, PAGE_BYTES - 3 * X3_BLOCK);
}

/* Fold a 256-bit accumulator (two lanes) forward and add the next data. */
__attribute__((target("avx2,vpclmulqdq")))
static inline __m256i fold256(__m256i acc, __m256i k, __m256i data)
{
	__m256i lo = _mm256_clmulepi64_epi128(acc, k, 0x00);
	__m256i hi = _mm256_clmulepi64_epi128(acc, k, 0x11);

	return _mm256_xor_si256(_mm256_xor_si256(lo, hi), data);
}

/* The same constant pair in both lanes. */
__attribute__((target("avx2")))
static inline __m256i lanes2(const uint64_t k[2])
{
	return _mm256_broadcastsi128_si256(_mm_set_epi64x((long long)k[1], (long long)k[0]));
}

/* Fold one 16-byte lane forward onto another. */
__attribute__((target("sse4.2,pclmul")))
static inline __m128i fold128(__m128i acc, __m128i k, __m128i data)
{
	__m128i lo = _mm_clmulepi64_si128(acc, k, 0x00);
	__m128i hi = _mm_clmulepi64_si128(acc, k, 0x11);

	return _mm_xor_si128(_mm_xor_si128(lo, hi), data);
}

__attribute__((target("avx2,vpclmulqdq,pclmul,sse4.2")))
uint32_t crc32c_page_vpclmul(uint32_t crc, const void *page)
{
	const unsigned char *p = page;
	__m256i k128 = lanes2(k_fold128);
	__m256i a0 = _mm256_loadu_si256((const __m256i *)p);
	__m256i a1 = _mm256_loadu_si256((const __m256i *)(p + 32));
	__m256i a2 = _mm256_loadu_si256((const __m256i *)(p + 64));
	__m256i a3 = _mm256_loadu_si256((const __m256i *)(p + 96));

	/* A seed is the same as XOR-ing it into the first four bytes. */
	a0 = _mm256_xor_si256(a0, _mm256_zextsi128_si256(_mm_cvtsi32_si128((int)crc)));

	/* Four accumulators of two lanes: 128 bytes folded per step. */
	for (size_t off = 128; off < PAGE_BYTES; off += 128) {
		a0 = fold256(a0, k128, _mm256_loadu_si256((const __m256i *)(p + off)));
		a1 = fold256(a1, k128, _mm256_loadu_si256((const __m256i *)(p + off + 32)));
		a2 = fold256(a2, k128, _mm256_loadu_si256((const __m256i *)(p + off + 64)));
		a3 = fold256(a3, k128, _mm256_loadu_si256((const __m256i *)(p + off + 96)));
	}
	/* Fold the four accumulators onto the last one. */
	__m256i acc = fold256(a0, lanes2(k_fold96),
			      fold256(a1, lanes2(k_fold64),
				      fold256(a2, lanes2(k_fold32), a3)));

	/* Then its low lane onto its high lane: 16 bytes remain. */
	__m128i k16 = _mm_set_epi64x((long long)k_fold16[1], (long long)k_fold16[0]);
	__m128i last = fold128(_mm256_castsi256_si128(acc), k16,
			       _mm256_extracti128_si256(acc, 1));
	uint64_t c = _mm_crc32_u64(0, (uint64_t)_mm_cvtsi128_si64(last));

	return (uint32_t)_mm_crc32_u64(c, (uint64_t)_mm_extract_epi64(last, 1));
}

/* Fold a 512-bit accumulator (four lanes) forward and add the next data. */
__attribute__((target("avx512f,vpclmulqdq")))
static inline __m512i fold512(__m512i acc, __m512i k, __m512i data)
{
	__m512i lo = _mm512_clmulepi64_epi128(acc, k, 0x00);
	__m512i hi = _mm512_clmulepi64_epi128(acc, k, 0x11);

	return _mm512_xor_si512(_mm512_xor_si512(lo, hi), data);
}

/* The same constant pair in each of the four lanes. */
__attribute__((target("avx512f")))
static inline __m512i lanes4(const uint64_t k[2])
{
	return _mm512_broadcast_i32x4(_mm_set_epi64x((long long)k[1], (long long)k[0]));
}

/*
 * The 256-bit path's folding, on four 512-bit accumulators: 256 bytes per
 * step. Its structure and constants were checked against the portable path
 * with a software carry-less multiply; the tests run it on CPUs that have
 * AVX-512 and VPCLMULQDQ (the development machines here do not).
 */
__attribute__((target("avx512f,vpclmulqdq,pclmul,sse4.2")))
uint32_t crc32c_page_avx512(uint32_t crc, const void *page)
{
	const unsigned char *p = page;
	__m512i k256 = lanes4(k_fold256);
	__m512i a0 = _mm512_loadu_si512((const void *)p);
	__m512i a1 = _mm512_loadu_si512((const void *)(p + 64));
	__m512i a2 = _mm512_loadu_si512((const void *)(p + 128));
	__m512i a3 = _mm512_loadu_si512((const void *)(p + 192));

	/* A seed is the same as XOR-ing it into the first four bytes. */
	a0 = _mm512_xor_si512(a0, _mm512_inserti32x4(_mm512_setzero_si512(),
				_mm_cvtsi32_si128((int)crc), 0));
	for (size_t off = 256; off < PAGE_BYTES; off += 256) {
		a0 = fold512(a0, k256, _mm512_loadu_si512((const void *)(p + off)));
		a1 = fold512(a1, k256, _mm512_loadu_si512((const void *)(p + off + 64)));
		a2 = fold512(a2, k256, _mm512_loadu_si512((const void *)(p + off + 128)));
		a3 = fold512(a3, k256, _mm512_loadu_si512((const void *)(p + off + 192)));
	}
	/* Fold the accumulators onto the last, then its lanes onto its last lane. */
	__m512i acc = fold512(a0, lanes4(k_fold192),
			      fold512(a1, lanes4(k_fold128),
				      fold512(a2, lanes4(k_fold64), a3)));
	__m128i l0 = _mm512_extracti32x4_epi32(acc, 0);
	__m128i l1 = _mm512_extracti32x4_epi32(acc, 1);
	__m128i l2 = _mm512_extracti32x4_epi32(acc, 2);
	__m128i t = _mm512_extracti32x4_epi32(acc, 3);

	t = fold128(l0, _mm_set_epi64x((long long)k_fold48[1], (long long)k_fold48[0]), t);
	t = fold128(l1, _mm_set_epi64x((long long)k_fold32[1], (long long)k_fold32[0]), t);
	t = fold128(l2, _mm_set_epi64x((long long)k_fold16[1], (long long)k_fold16[0]), t);
	uint64_t c = _mm_crc32_u64(0, (uint64_t)_mm_cvtsi128_si64(t));

	return (uint32_t)_mm_crc32_u64(c, (uint64_t)_mm_extract_epi64(t, 1));
}

#else

void crc32c_init(void)
{
	if (!table_ready)
		crc32c_table_init();
	(void)xpow_mod;
}

int crc32c_have_sse42(void)
{
	return 0;
}

int crc32c_have_pclmul(void)
{
	return 0;
}

int crc32c_have_vpclmul(void)
{
	return 0;
}

int crc32c_have_avx512(void)
{
	return 0;
}

uint32_t crc32c_page_avx512(uint32_t crc, const void *page)
{
	return crc32c_sw(crc, page, PAGE_BYTES);
}

uint32_t crc32c_sse42(uint32_t crc, const void *buf, size_t len)
{
	return crc32c_sw(crc, buf, len);
}

uint32_t crc32c_page_x3(uint32_t crc, const void *page)
{
	return crc32c_sw(crc, page, PAGE_BYTES);
}

uint32_t crc32c_page_vpclmul(uint32_t crc, const void *page)
{
	return crc32c_sw(crc, page, PAGE_BYTES);
}

#endif
