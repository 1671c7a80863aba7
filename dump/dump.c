/* SPDX-License-Identifier: MIT */
/*
 * Opening an input: format detection by magic bytes, the generic error
 * reporting, and the --range filter that applies to every format.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../util/text.h"
#include "../util/util.h"
#include "dump.h"

/* Every file format; auto-detection tries them in this order, raw last. */
static const struct reader *const readers[] = {
	&elf_reader,
	&kdump_reader,
	&kdump_flat_reader,
	&lime_reader,
	&qemu_reader,
	&raw_reader,
};

#define NREADERS (sizeof(readers) / sizeof(readers[0]))

/*
 * Print "ksmscan: NAME: what, at offset N" (offset UINT64_MAX: no place)
 * through the given printer; the input's first error is kept as its reason.
 * In a live process the place is an address, said as addresses are: in hex.
 */
static void vreport(void (*print)(const char *, ...), struct dump *d,
		    uint64_t offset, const char *fmt, va_list ap)
{
	char what[512], line[700];

	vsnprintf(what, sizeof(what), fmt, ap);
	if (offset == UINT64_MAX)
		snprintf(line, sizeof(line), "%s: %s", d->src.name, what);
	else if (d->pid)
		snprintf(line, sizeof(line), "%s: %s, at address %#llx",
			 d->src.name, what, (unsigned long long)offset);
	else
		snprintf(line, sizeof(line), "%s: %s, at offset %llu", d->src.name,
			 what, (unsigned long long)offset);
	print("%s", line);
	if (print == error && !d->why[0])
		text_clean(line, d->why, sizeof(d->why));
}

void dump_fail(struct dump *d, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(error, d, UINT64_MAX, fmt, ap);
	va_end(ap);
}

void dump_error(struct dump *d, uint64_t offset, const char *fmt, ...)
{
	va_list ap;

	/* One line per input: later problems are counted, said at the end. */
	d->failed = 1;
	if (d->errors++)
		return;
	va_start(ap, fmt);
	vreport(error, d, offset, fmt, ap);
	va_end(ap);
}

void dump_warn(struct dump *d, uint64_t offset, const char *fmt, ...)
{
	va_list ap;

	/* Like errors, one warning line per input; the rest are counted. */
	if (d->warnings++)
		return;
	va_start(ap, fmt);
	vreport(warn, d, offset, fmt, ap);
	va_end(ap);
}

void dump_read_error(struct dump *d)
{
	dump_error(d, d->src.pos, "%s", d->src.err[0] ? d->src.err : "read error");
}

int dump_map(struct dump *d, uint64_t limit)
{
	int rc = source_map(&d->src, limit);

	if (rc < 0) {
		dump_fail(d, "%s", d->src.err);
		d->failed = 1;
		return -1;
	}
	if (rc > 0)
		dump_error(d, d->src.err_at, "%s", d->src.err);
	return 0;
}

/* Pages a mapped input hands out at once, so that no count overflows size_t. */
#define MAPPED_PAGES (UINT64_C(1) << 20)

int dump_skip_to(struct dump *d, uint64_t off, unsigned char **buf)
{
	struct source *s = &d->src;

	if (s->map) {
		s->pos = off < s->size ? off : s->size;
		return off > s->size;
	}
	if (!*buf)
		*buf = xmalloc((size_t)BATCH_PAGES * PAGE_BYTES);
	while (s->pos < off) {
		uint64_t gap = off - s->pos;
		size_t n = gap < (uint64_t)BATCH_PAGES * PAGE_BYTES ?
			   (size_t)gap : (size_t)BATCH_PAGES * PAGE_BYTES;
		ssize_t got = source_read(s, *buf, n);

		if (got < 0) {
			dump_read_error(d);
			return -1;
		}
		if ((size_t)got < n)
			return 1;
	}
	return 0;
}

ssize_t dump_pages(struct dump *d, uint64_t off, uint64_t want,
		   unsigned char **buf, struct page_range *r, int *ended)
{
	struct source *s = &d->src;
	uint64_t n = want;
	ssize_t got;

	*ended = 0;
	if (s->map) {
		/* Mapped: point into the file, as far as it goes. */
		uint64_t have = off < s->size ? (s->size - off) / PAGE_BYTES : 0;

		if (n > MAPPED_PAGES)
			n = MAPPED_PAGES;
		if (have < n) {
			n = have;
			*ended = 1;
		}
		s->pos = *ended ? s->size : off + n * PAGE_BYTES;
		r->data = n ? s->map + off : NULL;
		r->stable = 1;
		r->npages = (size_t)n;
		return (ssize_t)n;
	}
	/* A stream: read on to @off, then the pages into the reader's buffer. */
	if (off < s->pos) {
		dump_error(d, off, "data at offset %llu is behind what a stream "
			   "has read already", (unsigned long long)off);
		return -1;
	}
	if (n > BATCH_PAGES)
		n = BATCH_PAGES;
	switch (dump_skip_to(d, off, buf)) {
	case -1:
		return -1;
	case 1:
		*ended = 1;
		r->npages = 0;
		return 0;
	default:
		got = source_read(s, *buf, (size_t)n * PAGE_BYTES);
		if (got < 0) {
			dump_read_error(d);
			return -1;
		}
	}
	if ((uint64_t)got < n * PAGE_BYTES) {
		unsigned char c;

		/* A stream cut by an error gives its last bytes first: ask. */
		*ended = 1;
		if (!s->eof && source_read(s, &c, 1) < 0) {
			dump_read_error(d);
			*ended = 2;
		}
		n = (uint64_t)got / PAGE_BYTES;
	}
	r->data = n ? *buf : NULL;
	r->buffer = n ? buf : NULL;
	r->stable = 0;
	r->npages = (size_t)n;
	return (ssize_t)n;
}

int dump_format_known(const char *format)
{
	if (strcmp(format, "auto") == 0)
		return 1;
	for (size_t i = 0; i < NREADERS; i++)
		if (strcmp(readers[i]->name, format) == 0)
			return 1;
	return 0;
}

const char *dump_format_name(size_t i)
{
	if (i == 0)
		return "auto";
	/* Count each name once: kdump's two layouts share theirs. */
	for (size_t r = 0, seen = 1; r < NREADERS; r++) {
		if (r && strcmp(readers[r]->name, readers[r - 1]->name) == 0)
			continue;
		if (seen++ == i)
			return readers[r]->name;
	}
	return NULL;
}

/*
 * The reader for -f FORMAT, or by magic bytes for auto. Several readers may
 * share a format name (kdump's assembled and flattened layouts): -f then
 * takes the first of them whose magic matches, else the first of them, which
 * reports what is wrong.
 */
static const struct reader *dump_choose(const char *format,
					const unsigned char *head, size_t len)
{
	int is_auto = strcmp(format, "auto") == 0;
	const struct reader *named = NULL;

	for (size_t i = 0; i < NREADERS; i++) {
		if (!is_auto && strcmp(format, readers[i]->name) != 0)
			continue;
		if (readers[i]->probe(head, len))
			return readers[i];
		if (!named)
			named = readers[i];
	}
	return is_auto ? NULL : named;
}

/*
 * Detection refuses files that are not memory (disk images, programs,
 * archives) rather than scan them as raw: 1 when it did (reported). An
 * explicit -f reads them as that format all the same.
 */
static int dump_refused(struct dump *d)
{
	const unsigned char *head;
	const char *what;
	size_t len = 0;
	uint64_t at = 0;

	if (strcmp(d->opt->format, "auto") != 0)
		return 0;
	head = source_peek_n(&d->src, REFUSE_PEEK, &len);
	if (!head)
		return 0;
	what = refuse_kind(head, len, d->src.map, d->src.size, &at);
	if (!what)
		return 0;
	dump_error(d, at, "%s, not a memory dump (-f raw reads it as raw memory)",
		   what);
	return 1;
}

struct dump *dump_open(const struct input *in, const struct dump_options *opt,
		       char *why, size_t whylen)
{
	struct dump *d = xcalloc(1, sizeof(*d));
	const unsigned char *head;
	size_t len = 0;

	d->opt = opt;
	d->src.fd = -1;
	d->src.name = in->name;
	if (!in->path) {
		/* A live process has no byte stream to probe. */
		d->pid = in->pid;
		d->listed = in->listed;
		d->reader = &proc_reader;
	} else {
		unsigned flags = (opt->stream_only ? SOURCE_STREAM : 0) |
				 (opt->no_decompress ? SOURCE_RAW : 0);

		if (source_open(&d->src, in->path, in->name, flags) < 0) {
			/* A compression layer's fault has a place; opening's has not. */
			if (d->src.nlayers)
				dump_error(d, 0, "%s", d->src.err);
			else
				dump_fail(d, "%s", d->src.err);
			goto fail;
		}
		/* First, as its longer look may move the bytes peeked. */
		if (dump_refused(d))
			goto fail;
		head = source_peek(&d->src, &len);
		if (!head) {
			/* A layer's data broke before the first page: it has a place. */
			dump_error(d, d->src.pos + d->src.head_len, "%s", d->src.err);
			goto fail;
		}
		d->reader = dump_choose(opt->format, head, len);
	}
	if (d->reader->open(d) < 0)
		goto fail;
	return d;
fail:
	snprintf(why, whylen, "%s", d->why);
	dump_close(d);
	return NULL;
}

/*
 * At the end of a stream the format did not need (after a flattened dump's
 * end marker), read on to the end so that a damaged or truncated zstd
 * stream is still noticed.
 */
void dump_drain(struct dump *d)
{
	unsigned char buf[65536];
	ssize_t n;

	/* A stream that failed was reported by the reader that found it. */
	if (d->src.map || d->src.fd < 0 || d->drained || d->src.failed)
		return;
	d->drained = 1;
	while ((n = source_read(&d->src, buf, sizeof(buf))) == (ssize_t)sizeof(buf))
		;
	if (n < 0)
		dump_read_error(d);
}

void dump_release(struct dump *d, const unsigned char *data, size_t len)
{
	uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t start = ((uintptr_t)data + pg - 1) & ~(pg - 1);
	uintptr_t end = ((uintptr_t)data + len) & ~(pg - 1);

	if (!d->src.map || data < d->src.map ||
	    data + len > d->src.map + d->src.size || end <= start)
		return;
	madvise((void *)start, end - start, MADV_DONTNEED);
}

/* Past this much, a compressed input that grew more than BOMB_RATIO times
 * its compressed size is said to, once: it is read on (a VM image that is
 * mostly zero compresses as well), but nobody is left wondering why. */
#define BOMB_BYTES (UINT64_C(1) << 30)
#define BOMB_RATIO 1000

static void dump_bomb_warn(struct dump *d)
{
	uint64_t in = d->src.nlayers ? d->src.layer[0].consumed : 0;

	if (d->bomb_said || !in || d->src.pos < BOMB_BYTES ||
	    d->src.pos / in < BOMB_RATIO)
		return;
	d->bomb_said = 1;
	dump_warn(d, d->src.pos, "decompresses to more than %d times its size "
		  "(%llu MiB from %llu KiB so far): reading on; interrupt it or "
		  "give --range if that is not what you expect", BOMB_RATIO,
		  (unsigned long long)(d->src.pos >> 20),
		  (unsigned long long)(in >> 10));
}

int dump_next(struct dump *d, struct page_range *r)
{
	uint64_t lo = d->opt->range_start, hi = d->opt->range_end;
	int rc;

	dump_bomb_warn(d);
	/* --range: clip every range the reader gives; skip those outside. */
	for (;;) {
		/* Fields a reader does not set are 0 (no buffer to take). */
		*r = (struct page_range){ 0 };
		if ((rc = d->reader->next(d, r)) <= 0)
			break;
		uint64_t room = (UINT64_MAX - r->address) / PAGE_BYTES + 1;
		uint64_t last;

		/* No range may run past the top of the address space. */
		if (r->npages > room)
			r->npages = (size_t)room;
		last = r->address + ((uint64_t)r->npages - 1) * PAGE_BYTES;
		uint64_t skip = 0;

		if (last < lo || r->address >= hi)
			continue;
		if (r->address < lo)
			skip = (lo - r->address + PAGE_BYTES - 1) / PAGE_BYTES;
		r->npages -= (size_t)skip;
		if (r->data)
			r->data += skip * PAGE_BYTES;
		r->coded += skip;
		if (r->frames)
			r->frames += skip;
		r->address += skip * PAGE_BYTES;
		if (!r->npages || r->address >= hi)
			continue;
		/* Pages that start below hi: ceil((hi - address) / PAGE_BYTES). */
		uint64_t below = (hi - r->address - 1) / PAGE_BYTES + 1;

		if (below < r->npages)
			r->npages = (size_t)below;
		return 1;
	}
	if (rc == 0)
		dump_drain(d);
	return rc;
}

void dump_close(struct dump *d)
{
	if (!d)
		return;
	if (d->errors > 1)
		error("%s: %llu more problems like the one above", d->src.name,
		      (unsigned long long)(d->errors - 1));
	if (d->warnings > 1)
		warn("%s: %llu more warnings like the one above", d->src.name,
		     (unsigned long long)(d->warnings - 1));
	if (d->reader && d->reader->close)
		d->reader->close(d);
	source_close(&d->src);
	free(d);
}
