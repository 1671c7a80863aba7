/* SPDX-License-Identifier: MIT */
#ifndef KSMSCAN_LAYERS_H
#define KSMSCAN_LAYERS_H

#include <stddef.h>

/*
 * Compression layers (layers.c): the codecs a stream may be wrapped in,
 * recognised by their magic bytes. Each hides its library behind one
 * decode() step, so that the source layer (source.c) runs one stream loop
 * for all of them.
 */

/* The most magic bytes a codec needs to be recognised (xz has six). */
#define LAYER_MAGIC_MAX 6

/* What a decode() step ended with. */
enum layer_rc {
	LAYER_ERROR = -1,	/* the data is damaged; why says how */
	LAYER_MORE = 0,		/* inside a frame: more input or output room needed */
	LAYER_END = 1,		/* a frame (gzip member, xz stream...) ended here */
};

/* One codec: how to recognise it and how to run its library. */
struct layer_codec {
	const char *name;	/* "gzip", "xz", "bzip2", "lz4", "zstd" */
	/**
	 * match() - whether the first bytes of a stream start this codec.
	 * @head: the bytes
	 * @len: how many (up to LAYER_MAGIC_MAX)
	 */
	int (*match)(const unsigned char *head, size_t len);
	/** init() - a new decoder; NULL when out of memory. */
	void *(*init)(void);
	/**
	 * decode() - decode some bytes.
	 * @st: the decoder
	 * @in: compressed bytes
	 * @in_len: how many
	 * @in_used: set to how many were consumed
	 * @last: no compressed bytes follow @in (the stream has ended)
	 * @out: room for decoded bytes
	 * @out_len: how much
	 * @out_made: set to how many were written
	 * @why: on LAYER_ERROR, what is wrong (at most @wlen bytes)
	 * @wlen: size of @why
	 *
	 * A codec that reaches the end of a frame gets ready for another one
	 * (a concatenation such as `gzip -c a b` is one stream).
	 *
	 * Return: an enum layer_rc.
	 */
	int (*decode)(void *st, const unsigned char *in, size_t in_len,
		      size_t *in_used, int last, unsigned char *out,
		      size_t out_len, size_t *out_made, char *why, size_t wlen);
	/** end() - free a decoder (NULL is ignored). */
	void (*end)(void *st);
	size_t in_size;		/* a good size for the compressed buffer */
};

/**
 * layer_find() - the codec whose magic starts @head.
 * @head: the first bytes of a stream
 * @len: how many (fewer than LAYER_MAGIC_MAX for a short stream)
 *
 * Return: the codec, or NULL when the bytes start none.
 */
const struct layer_codec *layer_find(const unsigned char *head, size_t len);

#endif
