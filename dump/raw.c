/* SPDX-License-Identifier: MIT */
/*
 * Raw memory images: the file offset is the address. Holes of a sparse file
 * (SEEK_DATA / SEEK_HOLE) are memory never written, so their pages are skipped.
 * A trailing partial page is ignored with a warning; an input without one
 * whole page (empty, or a text file) is no memory, and an error.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../util/util.h"
#include "dump.h"

struct raw {
	struct region region;	/* the whole file is one region */
	uint64_t off;		/* next file offset to hand out (page aligned) */
	uint64_t end;		/* end of whole pages in a mapped file */
	unsigned char *buf;	/* stream buffer (dump_pages() allocates it) */
	int warned;		/* the trailing partial page was reported */
	int ended;		/* a stream has ended */
};

static int raw_probe(const unsigned char *head, size_t len)
{
	/* Anything is a raw image: raw is tried last. */
	(void)head;
	(void)len;
	return 1;
}

/*
 * Report the bytes after the last whole page at @off, once; with no whole
 * page before them (@off 0), the input is no memory at all: an error (a
 * sparse file of whole pages never written is memory, and has pages here).
 */
static void raw_partial(struct dump *d, struct raw *r, uint64_t off, uint64_t n)
{
	if (!off && !r->warned) {
		if (n)
			dump_error(d, 0, "%llu bytes: no whole page of memory "
				   "(%u bytes)", (unsigned long long)n, PAGE_BYTES);
		else
			dump_error(d, 0, "empty: no whole page of memory");
	} else if (n && !r->warned)
		dump_warn(d, off, "trailing partial page of %llu bytes ignored",
			  (unsigned long long)n);
	r->warned = 1;
}

static int raw_open(struct dump *d)
{
	struct raw *r = xcalloc(1, sizeof(*r));

	d->priv = r;
	r->region.name = "raw";
	if (d->src.map) {
		r->end = d->src.size / PAGE_BYTES * PAGE_BYTES;
		r->region.end = r->end;
	}
	return 0;
}

/*
 * Hand out up to @n pages from offset @off; a short read is the end of a
 * stream, and its partial page is reported.
 */
static int raw_hand_out(struct dump *d, struct raw *r, struct page_range *pr,
			uint64_t off, uint64_t n)
{
	ssize_t got;

	if (r->ended)
		return 0;
	got = dump_pages(d, off, n, &r->buf, pr, &r->ended);
	if (got < 0)
		return -1;
	r->off = off + (uint64_t)got * PAGE_BYTES;
	/* Bytes after the last page of a stream cut by an error are no page. */
	if (r->ended == 1)
		raw_partial(d, r, r->off, d->src.pos - r->off);
	if (!got)
		return 0;
	pr->address = off;
	pr->region = &r->region;
	if (!d->src.map)
		r->region.end = r->off;
	return 1;
}

/*
 * The next run of pages of a mapped file that holds data. A page is skipped
 * only when all of it lies in a hole.
 */
static int raw_next_mapped(struct dump *d, struct raw *r, struct page_range *pr)
{
	uint64_t start = r->off, stop = r->end;

	if (start >= r->end) {
		raw_partial(d, r, r->end, d->src.size - r->end);
		return 0;
	}
	off_t data = lseek(d->src.fd, (off_t)start, SEEK_DATA);
	if (data < 0) {
		if (errno != ENXIO) {
			/* No hole support: the rest of the file is data. */
			data = (off_t)start;
		} else {
			/* Only a hole remains. */
			r->off = r->end;
			return raw_next_mapped(d, r, pr);
		}
	}
	start = (uint64_t)data / PAGE_BYTES * PAGE_BYTES;
	if (start >= r->end) {
		r->off = r->end;
		return raw_next_mapped(d, r, pr);
	}
	off_t hole = lseek(d->src.fd, (off_t)start, SEEK_HOLE);
	if (hole >= 0 && (uint64_t)hole < stop)
		stop = ((uint64_t)hole + PAGE_BYTES - 1) / PAGE_BYTES * PAGE_BYTES;
	if (stop > r->end)
		stop = r->end;
	if (stop <= start)
		stop = start + PAGE_BYTES;

	return raw_hand_out(d, r, pr, start, (stop - start) / PAGE_BYTES);
}

/* The next pages of a stream (pipe, terminal, character device). */
static int raw_next_stream(struct dump *d, struct raw *r, struct page_range *pr)
{
	return raw_hand_out(d, r, pr, r->off, BATCH_PAGES);
}

static int raw_next(struct dump *d, struct page_range *pr)
{
	struct raw *r = d->priv;

	return d->src.map ? raw_next_mapped(d, r, pr) : raw_next_stream(d, r, pr);
}

static void raw_close(struct dump *d)
{
	struct raw *r = d->priv;

	if (r)
		free(r->buf);
	free(r);
}

const struct reader raw_reader = {
	.name = "raw",
	.probe = raw_probe,
	.open = raw_open,
	.next = raw_next,
	.close = raw_close,
};
