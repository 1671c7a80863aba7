/* SPDX-License-Identifier: MIT */
/*
 * Raw memory images: the file offset is the address. Holes of a sparse file
 * (SEEK_DATA / SEEK_HOLE) are memory never written, so their pages are skipped.
 * A trailing partial page is ignored with a warning.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../util/util.h"
#include "dump.h"

/* Pages handed out per range when the input is a stream. */

struct raw {
	struct region region;	/* the whole file is one region */
	uint64_t off;		/* next file offset to hand out (page aligned) */
	uint64_t end;		/* end of whole pages in a mapped file */
	unsigned char *buf;	/* stream buffer */
	int warned;		/* the trailing partial page was reported */
};

static int raw_probe(const unsigned char *head, size_t len)
{
	/* Anything is a raw image: raw is tried last. */
	(void)head;
	(void)len;
	return 1;
}

/* Report the bytes after the last whole page, once. */
static void raw_partial(struct dump *d, struct raw *r, uint64_t off, uint64_t n)
{
	if (n && !r->warned)
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
	} else {
		r->buf = xmalloc((size_t)BATCH_PAGES * PAGE_BYTES);
	}
	return 0;
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

	pr->address = start;
	pr->npages = (size_t)((stop - start) / PAGE_BYTES);
	pr->data = d->src.map + start;
	pr->stable = 1;
	pr->region = &r->region;
	r->off = stop;
	return 1;
}

/* The next pages of a stream (pipe, terminal, character device). */
static int raw_next_stream(struct dump *d, struct raw *r, struct page_range *pr)
{
	size_t want = (size_t)BATCH_PAGES * PAGE_BYTES;
	ssize_t n = source_read(&d->src, r->buf, want);

	if (n < 0) {
		dump_read_error(d);
		return -1;
	}
	if ((size_t)n < PAGE_BYTES) {
		raw_partial(d, r, d->src.pos - (uint64_t)n, (uint64_t)n);
		return 0;
	}
	pr->address = r->off;
	pr->npages = (size_t)n / PAGE_BYTES;
	pr->data = r->buf;
	pr->buffer = &r->buf;
	pr->stable = 0;
	pr->region = &r->region;
	r->off += (uint64_t)pr->npages * PAGE_BYTES;
	r->region.end = r->off;
	/* A short read is the end of the stream; keep its partial page for later. */
	if ((size_t)n % PAGE_BYTES)
		raw_partial(d, r, r->off, (uint64_t)n % PAGE_BYTES);
	return 1;
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
