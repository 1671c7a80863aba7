/* SPDX-License-Identifier: MIT */
/*
 * The compression layers a dump may come in, one table row each: zstd
 * (libzstd), gzip (zlib), xz (liblzma), bzip2 (libbz2) and lz4 frames
 * (liblz4). Each row wraps its library in one decode() step; the stream
 * loop that feeds them is source.c's, the same for all.
 */
#include <bzlib.h>
#include <limits.h>
#include <lz4frame.h>
#include <lzma.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#include "layers.h"

/*
 * xz's decoder allocates what the stream's header asks for (xz -9 needs
 * 65 MiB): a forged header may ask for 4 GiB, so it is bounded.
 */
#define XZ_MEMLIMIT (UINT64_C(256) << 20)

/* The libraries count in unsigned int: feed them at most that much at once. */
static unsigned int clamp_uint(size_t n)
{
	return n > UINT_MAX ? UINT_MAX : (unsigned int)n;
}

/* Say why a decode step failed. */
static int layer_why(char *why, size_t wlen, const char *what)
{
	snprintf(why, wlen, "%s", what);
	return LAYER_ERROR;
}

/* zstd: a frame, or a skippable frame (0x184D2A50-5F, as pzstd writes). */
static int zstd_match(const unsigned char *m, size_t len)
{
	static const unsigned char magic[4] = { 0x28, 0xb5, 0x2f, 0xfd };

	return len >= 4 && (memcmp(m, magic, 4) == 0 ||
			    ((m[0] & 0xf0) == 0x50 && m[1] == 0x2a &&
			     m[2] == 0x4d && m[3] == 0x18));
}

static void *zstd_init(void)
{
	ZSTD_DStream *z = ZSTD_createDStream();

	if (z && ZSTD_isError(ZSTD_initDStream(z))) {
		ZSTD_freeDStream(z);
		return NULL;
	}
	return z;
}

static int zstd_decode(void *st, const unsigned char *in, size_t in_len,
		       size_t *in_used, int last, unsigned char *out,
		       size_t out_len, size_t *out_made, char *why, size_t wlen)
{
	ZSTD_inBuffer i = { in, in_len, 0 };
	ZSTD_outBuffer o = { out, out_len, 0 };
	size_t rc = ZSTD_decompressStream(st, &o, &i);

	(void)last;
	*in_used = i.pos;
	*out_made = o.pos;
	if (ZSTD_isError(rc))
		return layer_why(why, wlen, ZSTD_getErrorName(rc));
	/* 0: a frame ended; another may follow (zstd -c a b). */
	return rc == 0 ? LAYER_END : LAYER_MORE;
}

static void zstd_end(void *st)
{
	ZSTD_freeDStream(st);
}

/* gzip: ID1 ID2 and deflate, the only method gzip defines. */
static int gzip_match(const unsigned char *m, size_t len)
{
	return len >= 3 && m[0] == 0x1f && m[1] == 0x8b && m[2] == 8;
}

static void *gzip_init(void)
{
	z_stream *z = calloc(1, sizeof(*z));

	/* 16 + window bits: the gzip wrapper only, not zlib's. */
	if (z && inflateInit2(z, 16 + MAX_WBITS) != Z_OK) {
		free(z);
		return NULL;
	}
	return z;
}

static int gzip_decode(void *st, const unsigned char *in, size_t in_len,
		       size_t *in_used, int last, unsigned char *out,
		       size_t out_len, size_t *out_made, char *why, size_t wlen)
{
	z_stream *z = st;
	unsigned int ilen = clamp_uint(in_len), olen = clamp_uint(out_len);
	int rc;

	(void)last;
	z->next_in = (Bytef *)in;
	z->avail_in = ilen;
	z->next_out = out;
	z->avail_out = olen;
	rc = inflate(z, Z_NO_FLUSH);
	*in_used = ilen - z->avail_in;
	*out_made = olen - z->avail_out;
	switch (rc) {
	case Z_STREAM_END:
		/* Members may follow (gzip -c a b): the same wrapper again. */
		inflateReset(z);
		return LAYER_END;
	case Z_OK:
	case Z_BUF_ERROR:
		return LAYER_MORE;
	default:
		return layer_why(why, wlen, z->msg ? z->msg : "damaged data");
	}
}

static void gzip_end(void *st)
{
	if (st)
		inflateEnd(st);
	free(st);
}

/* xz: its six-byte stream header magic. */
static int xz_match(const unsigned char *m, size_t len)
{
	static const unsigned char magic[6] = { 0xfd, '7', 'z', 'X', 'Z', 0 };

	return len >= 6 && memcmp(m, magic, 6) == 0;
}

static void *xz_init(void)
{
	lzma_stream *x = malloc(sizeof(*x));
	const lzma_stream init = LZMA_STREAM_INIT;

	if (!x)
		return NULL;
	*x = init;
	/* Concatenated streams (xz -c a b) are one input, as for xz -dc. */
	if (lzma_stream_decoder(x, XZ_MEMLIMIT, LZMA_CONCATENATED) != LZMA_OK) {
		free(x);
		return NULL;
	}
	return x;
}

/* What an xz error code means, in words. */
static const char *xz_error(lzma_ret rc)
{
	switch (rc) {
	case LZMA_MEMLIMIT_ERROR:
		return "the stream needs more than 256 MiB of memory to decode";
	case LZMA_FORMAT_ERROR:
		return "not an xz stream";
	case LZMA_OPTIONS_ERROR:
		return "unsupported options";
	case LZMA_DATA_ERROR:
		return "damaged data";
	case LZMA_MEM_ERROR:
		return "out of memory";
	default:
		return "decoder error";
	}
}

static int xz_decode(void *st, const unsigned char *in, size_t in_len,
		     size_t *in_used, int last, unsigned char *out,
		     size_t out_len, size_t *out_made, char *why, size_t wlen)
{
	lzma_stream *x = st;
	lzma_ret rc;

	x->next_in = in;
	x->avail_in = in_len;
	x->next_out = out;
	x->avail_out = out_len;
	/* With concatenated streams, only LZMA_FINISH tells the last one ended. */
	rc = lzma_code(x, last ? LZMA_FINISH : LZMA_RUN);
	*in_used = in_len - x->avail_in;
	*out_made = out_len - x->avail_out;
	if (rc == LZMA_STREAM_END)
		return LAYER_END;
	if (rc == LZMA_OK || rc == LZMA_BUF_ERROR)
		return LAYER_MORE;
	return layer_why(why, wlen, xz_error(rc));
}

static void xz_end(void *st)
{
	if (st)
		lzma_end(st);
	free(st);
}

/* bzip2: "BZh" and the block size digit. */
static int bzip2_match(const unsigned char *m, size_t len)
{
	return len >= 4 && m[0] == 'B' && m[1] == 'Z' && m[2] == 'h' &&
	       m[3] >= '1' && m[3] <= '9';
}

static void *bzip2_init(void)
{
	bz_stream *b = calloc(1, sizeof(*b));

	if (b && BZ2_bzDecompressInit(b, 0, 0) != BZ_OK) {
		free(b);
		return NULL;
	}
	return b;
}

static int bzip2_decode(void *st, const unsigned char *in, size_t in_len,
			size_t *in_used, int last, unsigned char *out,
			size_t out_len, size_t *out_made, char *why, size_t wlen)
{
	bz_stream *b = st;
	unsigned int ilen = clamp_uint(in_len), olen = clamp_uint(out_len);
	int rc;

	(void)last;
	b->next_in = (char *)in;
	b->avail_in = ilen;
	b->next_out = (char *)out;
	b->avail_out = olen;
	rc = BZ2_bzDecompress(b);
	*in_used = ilen - b->avail_in;
	*out_made = olen - b->avail_out;
	switch (rc) {
	case BZ_STREAM_END:
		/* libbz2 has no reset: a new decoder for a stream that may follow. */
		BZ2_bzDecompressEnd(b);
		memset(b, 0, sizeof(*b));
		if (BZ2_bzDecompressInit(b, 0, 0) != BZ_OK)
			return layer_why(why, wlen, "out of memory");
		return LAYER_END;
	case BZ_OK:
		return LAYER_MORE;
	case BZ_DATA_ERROR_MAGIC:
		return layer_why(why, wlen, "bad stream magic");
	case BZ_MEM_ERROR:
		return layer_why(why, wlen, "out of memory");
	default:
		return layer_why(why, wlen, "damaged data");
	}
}

static void bzip2_end(void *st)
{
	if (st)
		BZ2_bzDecompressEnd(st);
	free(st);
}

/* lz4: the frame format's magic (the legacy format is not read). */
static int lz4_match(const unsigned char *m, size_t len)
{
	static const unsigned char magic[4] = { 0x04, 0x22, 0x4d, 0x18 };

	return len >= 4 && memcmp(m, magic, 4) == 0;
}

static void *lz4_init(void)
{
	LZ4F_dctx *c = NULL;

	if (LZ4F_isError(LZ4F_createDecompressionContext(&c, LZ4F_VERSION)))
		return NULL;
	return c;
}

static int lz4_decode(void *st, const unsigned char *in, size_t in_len,
		      size_t *in_used, int last, unsigned char *out,
		      size_t out_len, size_t *out_made, char *why, size_t wlen)
{
	size_t src = in_len, dst = out_len;
	size_t rc = LZ4F_decompress(st, out, &dst, in, &src, NULL);

	(void)last;
	*in_used = src;
	*out_made = dst;
	if (LZ4F_isError(rc))
		return layer_why(why, wlen, LZ4F_getErrorName(rc));
	/* 0: the frame is complete; the next call starts a new one. */
	return rc == 0 ? LAYER_END : LAYER_MORE;
}

static void lz4_end(void *st)
{
	if (st)
		LZ4F_freeDecompressionContext(st);
}

static const struct layer_codec codecs[] = {
	{ "zstd", zstd_match, zstd_init, zstd_decode, zstd_end, 1 << 17 },
	{ "gzip", gzip_match, gzip_init, gzip_decode, gzip_end, 1 << 17 },
	{ "xz", xz_match, xz_init, xz_decode, xz_end, 1 << 17 },
	{ "bzip2", bzip2_match, bzip2_init, bzip2_decode, bzip2_end, 1 << 17 },
	{ "lz4", lz4_match, lz4_init, lz4_decode, lz4_end, 1 << 17 },
};

const struct layer_codec *layer_find(const unsigned char *head, size_t len)
{
	for (size_t i = 0; i < sizeof(codecs) / sizeof(codecs[0]); i++)
		if (codecs[i].match(head, len))
			return &codecs[i];
	return NULL;
}
