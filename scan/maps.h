/* SPDX-License-Identifier: MIT */
#ifndef KSMSCAN_MAPS_H
#define KSMSCAN_MAPS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The registry of mapped files whose pages the index compares by reading
 * the file (pread) rather than through the mapping, so that comparing with
 * an early page does not fault it (and its neighbours) back into the
 * process: the inputs, and the pieces of the spool. One thread adds; any
 * thread may look up. Pages read back are kept in a small cache per thread.
 */

/* Most registered mappings: inputs and 64 MiB pieces of the spool (1 TiB). */
#define MAPS_MAX 16384

/* A file mapping whose pages are compared by pread. */
struct mapping {
	const unsigned char *base;
	size_t size;
	int fd;
	uint64_t offset;	/* file offset of base */
	int spool;		/* a piece of the spool file */
};

/* The registry: a fixed array filled in order, so that lookups may read the
 * first n while one more is added. */
struct maps {
	struct mapping v[MAPS_MAX];
	_Atomic size_t n;
};

/**
 * maps_init() - an empty registry.
 * @m: the registry
 */
void maps_init(struct maps *m);

/**
 * maps_add() - register a mapping (the adder's thread only).
 * @m: the registry
 * @base: the mapping
 * @size: its length
 * @fd: the file, open for reading as long as the registry is used
 * @offset: the file offset of @base
 * @spool: whether it is a piece of the spool
 *
 * Return: 0, or -1 when the registry is full (its pages are then compared
 * through the mapping).
 */
int maps_add(struct maps *m, const unsigned char *base, size_t size, int fd,
	     uint64_t offset, int spool);

/**
 * maps_of() - the registered mapping that holds @p.
 * @m: the registry
 * @p: an address
 *
 * Return: the mapping, or NULL.
 */
const struct mapping *maps_of(const struct maps *m, const unsigned char *p);

/**
 * maps_recent() - the page at @p if this thread read it back lately.
 * @m: the registry
 * @p: a page's address in a mapping
 *
 * Return: this thread's copy, or NULL.
 */
const unsigned char *maps_recent(const struct maps *m, const unsigned char *p);

/**
 * maps_read() - read the page at @p of mapping @mp back from its file into
 * this thread's cache.
 * @m: the registry
 * @mp: maps_of(@m, @p)
 * @p: the page's address
 *
 * Return: the copy, or @p itself if the read fails (compared through the map).
 */
const unsigned char *maps_read(const struct maps *m, const struct mapping *mp,
			       const unsigned char *p);

/**
 * maps_release() - drop the registered mappings' pages from the process (they
 * stay in the page cache and come back on the next touch), so that a report
 * reading contents through their mappings keeps a small resident set.
 * @m: the registry
 * @spool: whether to drop the spool's pieces too
 */
void maps_release(const struct maps *m, int spool);

#endif
