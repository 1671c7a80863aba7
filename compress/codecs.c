/* SPDX-License-Identifier: MIT */
/*
 * The table of compressors, with small adapters: lz4 and zstd through their
 * libraries as zram's backends call them (LZ4_compress_fast with
 * acceleration 1; zstd at level 3 with parameters for a 4 KiB input), lzo
 * and lzo-rle through lzo.c, the kernel's LZO1X-1 (no library has it).
 */
#include <lz4.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "../util/util.h"
#include "compress.h"

/* zram's zstd level when none is set (ZSTD_CLEVEL_DEFAULT). */
#define ZSTD_LEVEL 3

struct compress_ctx {
	void *lz4_state;			/* LZ4_sizeofState() bytes */
	ZSTD_CCtx *zstd;
	uint16_t lzo_dict[8192];
	char out[LZ4_COMPRESSBOUND(PAGE_BYTES) + 512];	/* room for any of them */
};

static size_t lz4_len(struct compress_ctx *c, const unsigned char *page)
{
	int n = LZ4_compress_fast_extState(c->lz4_state, (const char *)page, c->out,
					   PAGE_BYTES, (int)sizeof(c->out), 1);

	return n > 0 ? (size_t)n : PAGE_BYTES;
}

static size_t lzo_len(struct compress_ctx *c, const unsigned char *page)
{
	return lzo_page_len(page, 0, c->lzo_dict);
}

static size_t lzo_rle_len(struct compress_ctx *c, const unsigned char *page)
{
	return lzo_page_len(page, 1, c->lzo_dict);
}

static size_t zstd_len(struct compress_ctx *c, const unsigned char *page)
{
	size_t n = ZSTD_compressCCtx(c->zstd, c->out, sizeof(c->out), page,
				     PAGE_BYTES, ZSTD_LEVEL);

	return ZSTD_isError(n) ? PAGE_BYTES : n;
}

static const struct compressor compressors[] = {
	{ "lz4", "liblz4 " LZ4_VERSION_STRING ", acceleration 1", lz4_len },
	{ "lzo", "the kernel's LZO1X-1 (compress/lzo.c)", lzo_len },
	{ "lzo-rle", "the kernel's LZO1X-1 with zero runs (compress/lzo.c)",
	  lzo_rle_len },
	{ "zstd", "libzstd " ZSTD_VERSION_STRING ", level 3", zstd_len },
};

#define NCOMPRESSORS (sizeof(compressors) / sizeof(compressors[0]))

const struct compressor *compress_lookup(const char *name, size_t len)
{
	for (size_t i = 0; i < NCOMPRESSORS; i++)
		if (strlen(compressors[i].name) == len &&
		    strncmp(compressors[i].name, name, len) == 0)
			return &compressors[i];
	return NULL;
}

size_t compress_count(void)
{
	return NCOMPRESSORS;
}

const struct compressor *compress_get(size_t i)
{
	return &compressors[i];
}

struct compress_ctx *compress_ctx_new(void)
{
	struct compress_ctx *c = xcalloc(1, sizeof(*c));

	c->lz4_state = xmalloc((size_t)LZ4_sizeofState());
	c->zstd = ZSTD_createCCtx();
	if (!c->zstd) {
		error("out of memory (a zstd context)");
		exit(1);
	}
	return c;
}

void compress_ctx_free(struct compress_ctx *c)
{
	if (!c)
		return;
	free(c->lz4_state);
	ZSTD_freeCCtx(c->zstd);
	free(c);
}
