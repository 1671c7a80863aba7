/* SPDX-License-Identifier: MIT */
#ifndef KSMSCAN_SPOOL_H
#define KSMSCAN_SPOOL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "../dump/dump.h"
#include "maps.h"

/*
 * The spool: copies of contents whose bytes will not stay valid (streams,
 * decompressed pages, processes), in an unlinked file in $TMPDIR, mapped in
 * pieces for the reports that read contents. Pages are written (pwritev),
 * not stored through the map, so that they stay out of the resident set:
 * the caller's pages wait, up to BATCH_PAGES of them, until spool_flush().
 * Lookups in other threads compare only with what is written.
 */

/* The spool is mapped in pieces of this size. */
#define SPOOL_PIECE (64u << 20)

struct spool {
	int fd;				/* the file, or -1 before the first page */
	unsigned char **pieces;		/* its mapped pieces */
	size_t npieces;
	size_t piece_used;		/* bytes used in the last piece */
	const unsigned char *pend[BATCH_PAGES];	/* pages not written yet, all
					 * in the last piece, valid until
					 * spool_flush() */
	size_t npend;
	uint64_t pend_at;		/* the file offset of the first */
	_Atomic uint64_t written;	/* bytes of the file written */
	int failed;			/* nothing more is spooled */
	int unmapped;			/* the last piece is not in the registry */
	char why[160];			/* why it failed */
};

/**
 * spool_init() - an empty spool (no file yet).
 * @s: the spool
 */
void spool_init(struct spool *s);

/**
 * spool_keep() - copy a page into the spool.
 * @s: the spool
 * @m: the registry its pieces are added to
 * @page: PAGE_BYTES bytes, valid until spool_flush()
 *
 * Return: where the copy is mapped, or NULL when the spool failed (s->why).
 */
const unsigned char *spool_keep(struct spool *s, struct maps *m,
				const unsigned char *page);

/**
 * spool_flush() - write the waiting pages.
 * @s: the spool
 *
 * Return: 0, or -1 when the spool failed (s->why says why; it stays failed).
 */
int spool_flush(struct spool *s);

/**
 * spool_bytes() - the bytes of a spooled page for a comparison, where they
 * are readable by the calling thread.
 * @s: the spool
 * @off: the page's offset in the spool file
 * @main_thread: whether the caller is the thread that spools (it alone may
 *	read the waiting pages)
 * @written: set to whether the page is written (then read it from the file)
 *
 * Return: the waiting page (main thread, not written), or NULL.
 */
const unsigned char *spool_bytes(const struct spool *s, uint64_t off,
				 int main_thread, int *written);

/**
 * spool_free() - unmap and close the spool (the file is already unlinked).
 * @s: the spool
 */
void spool_free(struct spool *s);

#endif
