/* SPDX-License-Identifier: MIT */
#ifndef KSMSCAN_COMPRESS_H
#define KSMSCAN_COMPRESS_H

#include <stddef.h>
#include <stdint.h>

#include "../util/page.h"

/*
 * The compressors zram can use, in one table: each gives the length of one
 * page compressed as the Linux kernel compresses it for zram. Each thread
 * that compresses has its own context (the compressors' work memory).
 */

/* Most compressors one run can select. */
#define COMPRESS_MAX 8

struct compress_ctx;

/* One compressor. */
struct compressor {
	const char *name;	/* zram's name for it: lz4, lzo, lzo-rle, zstd */
	const char *impl;	/* what computes it here */
	/** page_len() - the compressed length of one page. */
	size_t (*page_len)(struct compress_ctx *ctx, const unsigned char *page);
};

/**
 * compress_lookup() - a compressor by name.
 * @name: the name, not necessarily NUL-terminated
 * @len: its length
 *
 * Return: the compressor, or NULL.
 */
const struct compressor *compress_lookup(const char *name, size_t len);

/**
 * compress_count() - how many compressors the table has.
 */
size_t compress_count(void);

/**
 * compress_get() - compressor number @i of the table.
 * @i: 0 .. compress_count() - 1
 */
const struct compressor *compress_get(size_t i);

/**
 * compress_ctx_new() - work memory for one thread, for every compressor.
 *
 * Return: the context; ends the program if memory is out.
 */
struct compress_ctx *compress_ctx_new(void);

/**
 * compress_ctx_free() - free a context.
 * @ctx: the context, or NULL
 */
void compress_ctx_free(struct compress_ctx *ctx);

/**
 * lzo_page_len() - the length of a page compressed by the kernel's LZO1X-1.
 * @in: PAGE_BYTES bytes
 * @rle: 1 for lzo-rle (zero runs coded, a version byte first), 0 for lzo
 * @dict: work memory of 8192 entries
 */
size_t lzo_page_len(const unsigned char *in, int rle, uint16_t *dict);

#endif
