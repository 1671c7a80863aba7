/* SPDX-License-Identifier: MIT */
#ifndef KSMSCAN_DUMP_H
#define KSMSCAN_DUMP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../host/process.h"
#include "../util/page.h"
#include "source.h"

/*
 * A dump is read as a sequence of page ranges. A reader knows one format; the
 * source below it (source.h) knows how bytes arrive: a mapped file, or a
 * stream (a pipe, or a zstd-compressed file decompressed as it is read).
 * Readers take their pages through dump_pages(), which alone tells the two
 * apart, so that a file and a stream of the same bytes give the same pages.
 * Readers never interpret page contents. Several readers may share a format
 * name (kdump's assembled and flattened layouts); -f picks among them by
 * their magic.
 */

/* A named part of an input: an ELF segment, a maps line, a LiME range. */
struct region {
	const char *name;	/* path, "[heap]", "segment 3", "kdump RAM", ... */
	uint64_t start;		/* first address the region covers */
	uint64_t end;		/* first address after it */
};

/* Some pages in a row: npages * PAGE_BYTES bytes of data at consecutive addresses. */
struct page_range {
	uint64_t address;		/* address of the first page (README, "Input
					 * formats": the page address per format) */
	size_t npages;			/* pages in the range, at least one */
	const unsigned char *data;	/* the pages' bytes, or NULL when coded */
	int stable;			/* data stays valid until dump_close() */
	const struct region *region;	/* the region the pages belong to; it
					 * must stay where it is until dump_close() */
	/*
	 * Compressed pages are handed out coded (data NULL): page i is made by
	 * the reader's decode(d, coded + i, ...), which the engine's worker
	 * threads call, so that decompression runs on every core.
	 */
	uint64_t coded;
	/*
	 * A stream reader may say where it keeps its buffer (data is its
	 * start, a malloc'd BATCH_PAGES pages): the engine may then take
	 * that buffer and put one of the same size in its place, rather than
	 * copy the pages. NULL: the pages are copied.
	 */
	unsigned char **buffer;
	/*
	 * A live process's pages: each page's frame word (host/memory.h:
	 * the physical frame as root sees it, whether the process alone
	 * maps it, whether it is a KSM page). NULL for files, which have
	 * no frames: each page is a frame of its own.
	 */
	const uint64_t *frames;
};

struct dump;

/* An input as the command line names it. */
struct input {
	const char *name;	/* name in reports: the path, or "pid:N" */
	const char *path;	/* the file, "-" for standard input; NULL for a pid */
	int pid;		/* a live process, when path is NULL */
	int listed;		/* found by -P or --all-processes: gone by
				 * its turn, it is skipped with a warning */
	double at;		/* a live snapshot of a series: read it this
				 * many seconds after the run began */
};

/* How inputs are read; the same for every input of a run. */
struct dump_options {
	const char *format;	/* "auto" or a reader name */
	int all_mappings;	/* live processes: also file-backed and shared memory */
	int ksmd_pages;		/* live processes with mergeable areas: the
				 * pages ksmd scans, no other (proc.c) */
	uint64_t range_start;	/* only pages with address in [start, end) */
	uint64_t range_end;
	int stream_only;	/* read files as streams, never mapped (the
				 * fuzzer takes the path a pipe takes) */
	int no_decompress;	/* --no-decompress: the bytes as they are */
};

/* One input format: probe its magic, then hand out page ranges. */
struct reader {
	const char *name;	/* format name for -f and the reports */
	/**
	 * probe() - whether the first bytes of a source look like this format.
	 * @head: the first bytes of the (decompressed) source
	 * @len: how many (may be fewer than the format's header)
	 */
	int (*probe)(const unsigned char *head, size_t len);
	/** open() - read the headers; on error report it and return -1. */
	int (*open)(struct dump *d);
	/** next() - the next page range: 1 one was filled, 0 end, -1 error (reported). */
	int (*next)(struct dump *d, struct page_range *r);
	/** close() - free what open() allocated; called even after a failed open(). */
	void (*close)(struct dump *d);
	/**
	 * decode() - make one coded page (readers that hand out coded ranges).
	 * @d: the dump
	 * @coded: the page's code: a range's coded + the page's index in it
	 * @address: the page's address
	 * @out: PAGE_BYTES for the page
	 * @why: on failure, what is wrong (at most @len bytes)
	 * @len: size of @why
	 * @offset: on failure, where in the input
	 *
	 * May run in several threads at once; reads only the mapped input.
	 * Return: 0, or -1 when the page cannot be made (it is then skipped).
	 */
	int (*decode)(const struct dump *d, uint64_t coded, uint64_t address,
		      unsigned char *out, char *why, size_t len, uint64_t *offset);
};

/* An open input. */
struct dump {
	struct source src;
	const struct dump_options *opt;
	int pid;		/* the live process, or 0 */
	int listed;		/* ... taken by -P or --all-processes: its exit
				 * is no error, the scan counts it */
	int exited;		/* ... it exited while it was read: figures
				 * cover what was read (said by the scan) */
	const struct reader *reader;
	void *priv;		/* the reader's own state */
	int failed;		/* a problem was reported: exit status 1 */
	uint64_t errors;	/* problems found; only the first is printed at once */
	uint64_t warnings;	/* warnings; likewise */
	int drained;		/* the rest of the stream was read to its end */
	struct proc_stats proc;	/* a live process's KSM state (host/process.h) */
	uint64_t zero_page_mappings;	/* its pages that map the kernel's zero
					 * page: left unread (dump/proc.c) */
	char why[256];		/* the first error said of it, as printed
				 * (without "ksmscan: "), or "" */
	int bomb_said;		/* it was said to decompress to much more */
};

/**
 * dump_open() - open an input and choose its reader.
 * @in: the input
 * @opt: how to read it; must outlive the dump
 *
 * @why: where to copy the first error said, if it could not be opened
 * @whylen: size of @why
 *
 * Problems are reported on standard error ("ksmscan: NAME: ...").
 *
 * Return: the dump, or NULL if it could not be opened at all.
 */
struct dump *dump_open(const struct input *in, const struct dump_options *opt,
		       char *why, size_t whylen);

/**
 * dump_next() - the next range of pages of an input, within --range.
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
 *
 * Return: 1 if it does, else 0.
 */
int dump_format_known(const char *format);

/**
 * dump_format_name() - the names -f takes, for --help and completion.
 * @i: 0 for "auto", then each reader's format once
 *
 * Return: the name, or NULL past the last.
 */
const char *dump_format_name(size_t i);

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
 * dump_fail() - report a problem with an input that has no place in it
 * ("ksmscan: NAME: what"); the caller decides whether the input failed.
 * @d: the dump
 * @fmt: printf format of what went wrong
 */
void dump_fail(struct dump *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/**
 * dump_warn() - like dump_error() but only a warning (silenced by -q) that
 * does not change the exit status.
 * @d: the dump
 * @offset: byte offset in the input the warning is about
 * @fmt: what is odd, printf style
 *
 * Only the first warning of an input is printed; dump_close() counts the
 * others in one line.
 */
void dump_warn(struct dump *d, uint64_t offset, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/**
 * dump_release() - the engine is done with some stable page data for now.
 * @d: the dump
 * @data: pages that dump_next() handed out with stable set
 * @len: their length in bytes
 *
 * Mapped file pages are dropped from the process (they stay in the page
 * cache and come back on the next touch), so that scanning a dump larger
 * than memory keeps a small resident set.
 */
void dump_release(struct dump *d, const unsigned char *data, size_t len);

/**
 * dump_drain() - read a stream to its end, so that damage after the part a
 * format needs (a flattened dump's end marker) is still reported.
 * @d: the dump
 */
void dump_drain(struct dump *d);

/**
 * dump_read_error() - report that source_read() failed, with its reason
 * (s->err), at the source's position.
 * @d: the dump
 */
void dump_read_error(struct dump *d);

/**
 * dump_pages() - up to @want whole pages of the input from file offset @off,
 * for a reader: the one place that knows mapped inputs from streams.
 * @d: the dump
 * @off: file offset of the first page; in a stream, not behind what was
 *	 read already (the bytes between are read and dropped)
 * @want: pages wanted, at least one
 * @buf: the reader's stream buffer of BATCH_PAGES pages, allocated here when
 *	 NULL (the engine may swap it for another of the same size)
 * @r: its npages, data, stable and buffer are set; the reader sets the rest
 * @ended: set to 1 when the input ends before this batch's pages do, to 2
 *	    when a read error ends it (then reported already)
 *
 * A mapped input hands out a pointer into the map (stable, at most 2^20
 * pages at once); a stream reads into *@buf (at most BATCH_PAGES) and offers
 * it in r->buffer. Either way the source's position is then after the pages,
 * or at the end of the input when it @ended, so the figures and messages of
 * a file and of a stream of the same bytes are the same.
 *
 * Return: the pages in @r (fewer than wanted for a batch limit, or when
 * @ended; 0 when no whole page is left), or -1 after a read error (reported).
 */
ssize_t dump_pages(struct dump *d, uint64_t off, uint64_t want,
		   unsigned char **buf, struct page_range *r, int *ended);

/**
 * dump_skip_to() - move on to file offset @off, to learn whether the input
 * reaches it (a stream reads and drops the bytes before it).
 * @d: the dump
 * @off: the offset; in a stream, not behind what was read already
 * @buf: the reader's stream buffer, as for dump_pages()
 *
 * Return: 0 when the input has bytes up to @off, 1 when it ends before
 * (its position is then its end), -1 after a read error (reported).
 */
int dump_skip_to(struct dump *d, uint64_t off, unsigned char **buf);

/**
 * dump_map() - make the input random-access (source_map()), reporting what
 * goes wrong.
 * @d: the dump
 * @limit: the most bytes its headers declare, or UINT64_MAX
 *
 * Return: 0 if the input is mapped (maybe only the part read before an
 * error, which is then reported), -1 if it could not be mapped (reported).
 */
int dump_map(struct dump *d, uint64_t limit);

/* Bytes from an input's start that refuse_kind() looks at (ISO 9660's magic). */
#define REFUSE_PEEK 32774

/**
 * refuse_kind() - whether an input is a known kind of file that is not
 * memory (a disk image, a program, an archive), which detection refuses
 * (refuse.c holds the table).
 * @head: the first bytes of the (decompressed) input
 * @len: how many (up to REFUSE_PEEK)
 * @map: the whole file when it is mapped, else NULL (a fixed VHD is known
 *	 by its footer)
 * @size: bytes in @map
 * @at: set to the offset of the magic that tells
 *
 * Return: what the file is ("a qcow2 disk image"), or NULL.
 */
const char *refuse_kind(const unsigned char *head, size_t len,
			const unsigned char *map, uint64_t size, uint64_t *at);

/* The readers, one file each. */
extern const struct reader elf_reader;
extern const struct reader kdump_reader;
extern const struct reader kdump_flat_reader;
extern const struct reader lime_reader;
extern const struct reader qemu_reader;
extern const struct reader raw_reader;
extern const struct reader proc_reader;

#endif
