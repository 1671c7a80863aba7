/* SPDX-License-Identifier: MIT */
/*
 * Opening an input: the source (mmap for regular files, a stream otherwise),
 * format detection by magic bytes, and the generic error reporting.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/util.h"
#include "dump.h"

/* Bytes read ahead from a stream so that every reader can probe them. */
#define PROBE_BYTES 4096

/* Every reader; auto-detection tries them in this order, raw last. */
static const struct reader *const readers[] = {
	&raw_reader,
};

#define NREADERS (sizeof(readers) / sizeof(readers[0]))

/* Print "ksmscan: NAME: what, at offset N" through the given printer. */
static void vreport(void (*print)(const char *, ...), struct dump *d,
		    uint64_t offset, const char *fmt, va_list ap)
{
	char what[512];

	vsnprintf(what, sizeof(what), fmt, ap);
	print("%s: %s, at offset %llu", d->src.name, what,
	      (unsigned long long)offset);
}

void dump_error(struct dump *d, uint64_t offset, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(error, d, offset, fmt, ap);
	va_end(ap);
	d->failed = 1;
}

void dump_warn(struct dump *d, uint64_t offset, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(warn, d, offset, fmt, ap);
	va_end(ap);
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

ssize_t source_read(struct source *s, void *buf, size_t len)
{
	unsigned char *p = buf;
	size_t done = 0;

	/* Bytes read ahead for probing come first. */
	if (s->head_len) {
		size_t n = len < s->head_len ? len : s->head_len;

		memcpy(p, s->head + s->head_off, n);
		s->head_off += n;
		s->head_len -= n;
		done = n;
	}
	while (done < len && !s->eof) {
		ssize_t n = read(s->fd, p + done, len - done);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (n == 0)
			s->eof = 1;
		done += (size_t)n;
	}
	s->pos += done;
	return (ssize_t)done;
}

/* Map a regular file whole, read-only; leave it a stream if that fails. */
static void source_try_map(struct source *s)
{
	struct stat st;
	void *m;

	if (fstat(s->fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size <= 0)
		return;
	m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, s->fd, 0);
	if (m == MAP_FAILED)
		return;
	madvise(m, (size_t)st.st_size, MADV_SEQUENTIAL);
	s->map = m;
	s->size = (uint64_t)st.st_size;
}

/* Open the file behind a dump; report and return -1 if it cannot be read. */
static int source_open(struct source *s, const char *name)
{
	struct stat st;

	s->name = name;
	s->fd = -1;
	if (strcmp(name, "-") == 0) {
		s->fd = STDIN_FILENO;
	} else {
		s->fd = open(name, O_RDONLY | O_CLOEXEC);
		if (s->fd < 0) {
			error("%s: %s", name, strerror(errno));
			return -1;
		}
	}
	if (fstat(s->fd, &st) < 0) {
		error("%s: %s", name, strerror(errno));
		return -1;
	}
	if (S_ISDIR(st.st_mode)) {
		error("%s: %s", name, strerror(EISDIR));
		return -1;
	}
	source_try_map(s);
	return 0;
}

/* The first bytes of the source, without consuming them. */
static const unsigned char *source_peek(struct source *s, size_t *len)
{
	ssize_t n;

	if (s->map) {
		*len = s->size < PROBE_BYTES ? (size_t)s->size : PROBE_BYTES;
		return s->map;
	}
	s->head = xmalloc(PROBE_BYTES);
	n = source_read(s, s->head, PROBE_BYTES);
	if (n < 0)
		return NULL;
	/* Reading ahead is not consuming: rewind the position. */
	s->head_len = (size_t)n;
	s->head_off = 0;
	s->pos = 0;
	*len = (size_t)n;
	return s->head;
}

struct dump *dump_open(const struct input *in, const struct dump_options *opt)
{
	struct dump *d = xcalloc(1, sizeof(*d));
	const char *name = in->name, *format = opt->format;
	const unsigned char *head;
	size_t len = 0;

	d->opt = opt;
	d->src.fd = -1;
	if (!in->path) {
		/* A live process has no byte stream to probe. */
		d->src.name = name;
		d->pid = in->pid;
		d->reader = &proc_reader;
		if (d->reader->open(d) < 0)
			goto fail;
		return d;
	}
	if (source_open(&d->src, in->path) < 0)
		goto fail;
	d->src.name = name;
	head = source_peek(&d->src, &len);
	if (!head) {
		error("%s: %s", name, strerror(errno));
		goto fail;
	}
	for (size_t i = 0; i < NREADERS && !d->reader; i++) {
		if (strcmp(format, "auto") == 0 ?
		    readers[i]->probe(head, len) :
		    strcmp(format, readers[i]->name) == 0)
			d->reader = readers[i];
	}
	if (!d->reader || d->reader->open(d) < 0)
		goto fail;
	return d;
fail:
	dump_close(d);
	return NULL;
}

int dump_next(struct dump *d, struct page_range *r)
{
	uint64_t lo = d->opt->range_start, hi = d->opt->range_end;
	int rc;

	/* --range: clip every range the reader gives; skip those outside. */
	while ((rc = d->reader->next(d, r)) > 0) {
		uint64_t end = r->address + (uint64_t)r->npages * PAGE_BYTES;
		uint64_t skip = 0;

		if (end <= lo || r->address >= hi)
			continue;
		if (r->address < lo)
			skip = (lo - r->address + PAGE_BYTES - 1) / PAGE_BYTES;
		r->npages -= (size_t)skip;
		r->data += skip * PAGE_BYTES;
		r->address += skip * PAGE_BYTES;
		if (!r->npages || r->address >= hi)
			continue;
		/* Pages that start below hi: ceil((hi - address) / PAGE_BYTES). */
		if ((hi - r->address + PAGE_BYTES - 1) / PAGE_BYTES < r->npages)
			r->npages = (size_t)((hi - r->address + PAGE_BYTES - 1) /
					     PAGE_BYTES);
		if (r->npages)
			return 1;
	}
	return rc;
}

void dump_close(struct dump *d)
{
	if (!d)
		return;
	if (d->reader && d->reader->close)
		d->reader->close(d);
	if (d->src.map)
		munmap((void *)d->src.map, (size_t)d->src.size);
	if (d->src.fd > STDIN_FILENO)
		close(d->src.fd);
	free(d->src.head);
	free(d);
}
