/* SPDX-License-Identifier: MIT */
#ifndef KSMSCAN_SOURCE_H
#define KSMSCAN_SOURCE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * The source layer (source.c): the bytes of an input, from a mapped file or
 * from a stream (a pipe, or a compressed file decompressed as it is read:
 * zstd, gzip, xz, bzip2, lz4, recognised by their magic, layers.c). It
 * knows nothing of formats or of how problems are reported: a
 * function that fails says why in s->err (and where, in s->err_at), and the
 * dump layer (dump.c) prints it.
 */

/* Where the bytes of a dump come from. */
struct source {
	const char *name;		/* the input's name, for messages */
	int fd;				/* open read-only */
	const unsigned char *map;	/* the whole (decompressed) file, if mapped */
	uint64_t size;			/* bytes in map */
	uint64_t pos;			/* bytes consumed by source_read() so far */
	unsigned char *head;		/* stream bytes read ahead for probing */
	size_t head_cap;		/* its size */
	size_t head_len;		/* bytes in head not yet consumed */
	size_t head_off;		/* first unconsumed byte in head */
	int eof;			/* the stream has ended */
	/*
	 * Compression layers, outermost first: layer[0] decodes the file's
	 * bytes, layer[1] (one nested layer, such as gzip inside zstd) decodes
	 * layer[0]'s output.
	 */
	struct source_layer {
		const struct layer_codec *codec;
		void *state;		/* the codec's decoder */
		unsigned char *in;	/* compressed bytes read but not yet used */
		size_t in_len, in_off, in_cap;
		uint64_t consumed;	/* compressed bytes read from below */
		int in_eof;		/* no more compressed bytes below */
		int boundary;		/* a frame ended and no other has begun */
		int error;		/* an error follows the bytes returned */
		int ended;		/* the layer's data ended cleanly */
	} layer[2];
	int nlayers;
	char err[160];			/* what went wrong in the last call */
	uint64_t err_at;		/* where in the input, when it has a place */
	int spooled;			/* map is a temporary copy of a stream */
	int failed;			/* a read failed: every later read fails */
};

/* How source_open() reads a file, as bits of its flags. */
enum {
	SOURCE_STREAM = 1 << 0,	/* as a stream, never mapped (as a pipe is) */
	SOURCE_RAW = 1 << 1,	/* the bytes as they are: no decompression */
	SOURCE_NO_STDIN = 1 << 2, /* standard input is no way round a refusal
				   * (--known): messages suggest none */
};

/**
 * source_open() - open a file (or "-") read-only; decompress its compression
 * layers (at most two: one inside another) on the fly. A named file must be
 * a regular file or a block device: FIFOs, sockets and character devices
 * are refused before anything is read (standard input may be a pipe).
 * @s: the source, zeroed
 * @path: the file
 * @name: the name for messages
 * @flags: SOURCE_* bits
 *
 * A regular file that is not compressed is mapped whole.
 *
 * Return: 0, or -1 when the file cannot be read (s->err says why).
 */
int source_open(struct source *s, const char *path, const char *name,
		unsigned flags);

/**
 * source_peek() - the first bytes of the (decompressed) source, not consumed.
 * @s: the source
 * @len: how many are returned (up to 4096; fewer if the input is shorter)
 *
 * Return: the bytes, or NULL after a read error (s->err says why).
 */
const unsigned char *source_peek(struct source *s, size_t *len);

/**
 * source_peek_n() - like source_peek(), for up to @want bytes (a stream keeps
 * that many in memory; readers bound @want).
 * @s: the source, nothing consumed yet
 * @want: bytes wanted
 * @len: how many are returned
 *
 * Return: the bytes, or NULL after a read error (s->err says why).
 */
const unsigned char *source_peek_n(struct source *s, size_t want, size_t *len);

/**
 * source_read() - read the next bytes of the source in order.
 * @s: the source
 * @buf: destination
 * @len: bytes wanted
 *
 * Works on mapped and streamed sources alike. A count below @len means the
 * end of the input.
 *
 * Return: bytes read, or -1 on an error (s->err says why).
 */
ssize_t source_read(struct source *s, void *buf, size_t len);

/**
 * source_skip_hole() - in a mapped file, move past the whole pages of a hole
 * at the read position (memory never written, as the raw reader skips it);
 * nothing for a stream, a temporary copy or a file without holes.
 * @s: the source
 */
void source_skip_hole(struct source *s);

/**
 * source_map() - make a streamed source mapped, by copying the rest of the
 * stream to an unlinked temporary file in $TMPDIR (for formats that need
 * random access: ELF and kdump). Before each write the copy checks that its
 * file system keeps its reserve (tmp_room_for()), and it stops at @limit.
 * @s: the source
 * @limit: the most bytes to copy: what the format's headers declare, or
 *	UINT64_MAX when they cannot say before the copy
 *
 * Return: 0 if the source is mapped; 1 if it is mapped but a read error,
 * @limit or the reserve stopped the copy part-way (what was copied stays
 * usable; s->err says what and s->err_at where); -1 if nothing could be
 * mapped (s->err says why).
 */
int source_map(struct source *s, uint64_t limit);

/**
 * source_write_sparse() - write @len bytes at offset @off of a temporary
 * file, leaving blocks of 4096 zero bytes as holes (the caller makes the
 * file long enough at the end, with ftruncate()).
 * @fd: the file
 * @buf: the bytes
 * @len: how many
 * @off: where
 *
 * Return: 0, or -1 with errno set (ENOSPC for a write that made no progress).
 */
int source_write_sparse(int fd, const unsigned char *buf, size_t len, uint64_t off);

/**
 * source_adopt() - replace the mapped bytes of a source by a file's.
 * @s: the source
 * @fd: an open file, which the source now owns
 *
 * Return: 0, or -1 if the file cannot be mapped (errno set; @fd is closed).
 */
int source_adopt(struct source *s, int fd);

/**
 * source_close() - release what a source holds.
 * @s: the source
 */
void source_close(struct source *s);

#endif
