/* SPDX-License-Identifier: MIT */
#ifndef KSMSCAN_DUMP_H
#define KSMSCAN_DUMP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../hash/hash.h"

/*
 * A dump is read as a sequence of page ranges. A reader knows one format; the
 * source below it knows how bytes arrive (an mmap'd file or a stream). Readers
 * never interpret page contents.
 */

/* Some pages in a row: npages * PAGE_BYTES bytes of data at consecutive addresses. */
struct page_range {
	uint64_t address;		/* address of the first page (SPEC section 2) */
	size_t npages;			/* pages in the range, at least one */
	const unsigned char *data;	/* the pages' bytes */
	int stable;			/* data stays valid until dump_close() */
	const char *region;		/* name of the region the pages belong to */
};

/* Where the bytes of a dump come from. */
struct source {
	const char *name;		/* the file name as the user gave it */
	int fd;				/* open read-only */
	const unsigned char *map;	/* the whole file, when it could be mapped */
	uint64_t size;			/* file size when known (mapped files) */
	uint64_t pos;			/* stream position: bytes consumed so far */
	unsigned char *head;		/* bytes read ahead for format probing */
	size_t head_len;		/* bytes in head not yet consumed */
	size_t head_off;		/* first unconsumed byte in head */
	int eof;			/* the stream has ended */
};

struct dump;

/* An input as the command line names it. */
struct input {
	const char *name;	/* name in reports: the path, or "pid:N" */
	const char *path;	/* the file, "-" for standard input; NULL for a pid */
	int pid;		/* a live process, when path is NULL */
};

/* How inputs are read; the same for every input of a run. */
struct dump_options {
	const char *format;	/* "auto" or a reader name */
	int all_mappings;	/* live processes: also file-backed and shared memory */
	uint64_t range_start;	/* only pages with address in [start, end) */
	uint64_t range_end;
};

/* One input format: probe its magic, then hand out page ranges. */
struct reader {
	const char *name;	/* format name for -f and the reports */
	/**
	 * probe() - whether the first bytes of a source look like this format.
	 * @head: the first bytes of the source
	 * @len: how many (may be fewer than the format's header)
	 */
	int (*probe)(const unsigned char *head, size_t len);
	/** open() - read the headers; on error report it and return -1. */
	int (*open)(struct dump *d);
	/** next() - the next page range: 1 one was filled, 0 end, -1 error (reported). */
	int (*next)(struct dump *d, struct page_range *r);
	/** close() - free what open() allocated. */
	void (*close)(struct dump *d);
};

/* An open input. */
struct dump {
	struct source src;
	const struct dump_options *opt;
	int pid;		/* the live process, or 0 */
	const struct reader *reader;
	void *priv;		/* the reader's own state */
	int failed;		/* a problem was reported: exit status 1 */
};

/**
 * dump_open() - open an input and choose its reader.
 * @in: the input
 * @opt: how to read it; must outlive the dump
 *
 * Problems are reported on standard error ("ksmscan: NAME: ...").
 *
 * Return: the dump, or NULL if it could not be opened at all.
 */
struct dump *dump_open(const struct input *in, const struct dump_options *opt);

/**
 * dump_next() - the next range of pages of an input.
 * @d: the dump
 * @r: filled with the range
 *
 * Return: 1 when @r was filled, 0 at the end, -1 after an error was reported
 * (what was read before still counts).
 */
int dump_next(struct dump *d, struct page_range *r);

/**
 * dump_close() - close an input; stable page data becomes invalid.
 * @d: the dump, or NULL
 */
void dump_close(struct dump *d);

/**
 * dump_format_known() - whether a -f argument names a format.
 * @format: "auto" or a reader name
 */
int dump_format_known(const char *format);

/**
 * dump_error() - report a problem with an input and mark it failed.
 * @d: the dump
 * @offset: byte offset in the input where the problem is
 * @fmt: what is wrong, printf style
 *
 * Prints "ksmscan: NAME: what, at offset N".
 */
void dump_error(struct dump *d, uint64_t offset, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/**
 * dump_warn() - like dump_error() but only a warning (silenced by -q) that
 * does not change the exit status.
 */
void dump_warn(struct dump *d, uint64_t offset, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/**
 * source_read() - read up to @len bytes from a stream source.
 * @s: the source
 * @buf: destination
 * @len: bytes wanted
 *
 * Reads until @len bytes or the end of the stream; a short count means the end.
 *
 * Return: bytes read, or -1 on a read error (errno set).
 */
ssize_t source_read(struct source *s, void *buf, size_t len);

/* The readers, one file each. */
extern const struct reader raw_reader;
extern const struct reader proc_reader;

#endif
