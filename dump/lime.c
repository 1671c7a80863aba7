/* SPDX-License-Identifier: MIT */
/*
 * LiME (Linux Memory Extractor) dumps: a sequence of ranges, each a 32-byte
 * header (magic 0x4C694D45, version 1, start and inclusive end address,
 * 8 reserved bytes) followed by end - start + 1 bytes of memory. Read in one
 * pass, so a LiME dump can come through a pipe or zstd.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/bytes.h"
#include "../util/util.h"
#include "dump.h"

#define LIME_MAGIC 0x4C694D45u
#define LIME_HEADER 32

struct lime {
	/* One per range header, each allocated on its own: the engine keeps
	 * pointers to regions until the dump is closed, so they never move. */
	struct region **regions;
	size_t nregions, cap;
	uint64_t left;			/* bytes of the current range not read yet */
	uint64_t addr;			/* address of the next byte of the range */
	unsigned char *buf;		/* stream buffer (dump_pages() allocates it) */
};

/* LiME's fields are little-endian. */
#define le(p, bytes) get_le(p, bytes)

static int lime_probe(const unsigned char *head, size_t len)
{
	return len >= 4 && le(head, 4) == LIME_MAGIC;
}

static int lime_open(struct dump *d)
{
	struct lime *l = xcalloc(1, sizeof(*l));

	d->priv = l;
	return 0;
}

/* Read the next range header; 1 read, 0 clean end, -1 error (reported). */
static int lime_header(struct dump *d, struct lime *l)
{
	unsigned char h[LIME_HEADER];
	uint64_t at = d->src.pos, start, end;
	ssize_t n = source_read(&d->src, h, sizeof(h));
	struct region *r;

	if (n < 0) {
		dump_read_error(d);
		return -1;
	}
	if (n == 0)
		return 0;
	if (n < LIME_HEADER) {
		dump_error(d, at, "LiME range header truncated");
		return -1;
	}
	if (le(h, 4) != LIME_MAGIC) {
		dump_error(d, at, "no LiME range header (bad magic)");
		return -1;
	}
	start = le(h + 8, 8);
	end = le(h + 16, 8);
	if (end < start || end - start == UINT64_MAX) {
		dump_error(d, at + 16, "LiME range ends (0x%llx) before it starts "
			   "(0x%llx)", (unsigned long long)end,
			   (unsigned long long)start);
		return -1;
	}
	if (d->src.map && end - start + 1 > d->src.size - d->src.pos) {
		dump_error(d, at, "LiME range 0x%llx-0x%llx runs past the end of "
			   "the file", (unsigned long long)start,
			   (unsigned long long)end);
		/* The pages that are there still count. */
	}
	if (l->nregions == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 16;
		l->regions = xreallocarray(l->regions, l->cap, sizeof(*l->regions));
	}
	r = l->regions[l->nregions++] = xcalloc(1, sizeof(*r));
	r->name = "lime range";
	r->start = start;
	r->end = end + 1 ? end + 1 : UINT64_MAX;
	l->addr = start;
	l->left = end - start + 1;
	return 1;
}

static int lime_next(struct dump *d, struct page_range *pr)
{
	struct lime *l = d->priv;

	for (;;) {
		uint64_t pages;
		ssize_t got;
		int ended;

		if (l->left < PAGE_BYTES) {
			/* Skip a partial page at the end of a range. */
			if (l->left) {
				dump_warn(d, d->src.pos, "LiME range ends with a "
					  "partial page of %llu bytes, ignored",
					  (unsigned long long)l->left);
				unsigned char tmp[PAGE_BYTES];

				if (source_read(&d->src, tmp, (size_t)l->left) !=
				    (ssize_t)l->left) {
					dump_error(d, d->src.pos, "LiME range data "
						   "truncated");
					return -1;
				}
				l->left = 0;
			}
			int rc = lime_header(d, l);

			if (rc <= 0)
				return rc;
			continue;
		}
		got = dump_pages(d, d->src.pos, l->left / PAGE_BYTES, &l->buf,
				 pr, &ended);
		if (got < 0)
			return -1;
		if (ended) {
			/* A mapped file's was reported with the header. */
			if (d->src.map)
				d->failed = 1;
			else if (ended == 1)
				dump_error(d, d->src.pos, "LiME range data truncated");
			l->left = 0;
			if (!got)
				return d->src.map ? 0 : -1;
		}
		pages = (uint64_t)got;
		pr->address = l->addr;
		pr->npages = (size_t)pages;
		pr->region = l->regions[l->nregions - 1];
		l->addr += pages * PAGE_BYTES;
		if (l->left)
			l->left -= pages * PAGE_BYTES;
		return 1;
	}
}

static void lime_close(struct dump *d)
{
	struct lime *l = d->priv;

	if (!l)
		return;
	for (size_t i = 0; i < l->nregions; i++)
		free(l->regions[i]);
	free(l->regions);
	free(l->buf);
	free(l);
}

const struct reader lime_reader = {
	.name = "lime",
	.probe = lime_probe,
	.open = lime_open,
	.next = lime_next,
	.close = lime_close,
};
