/* SPDX-License-Identifier: MIT */
#ifndef KSMSCAN_DELTASPOOL_H
#define KSMSCAN_DELTASPOOL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "../model/replay.h"

/*
 * The delta spool: a series' snapshots as they settle, each a zstd frame
 * appended to an unlinked file in $TMPDIR, read back one at a time (the
 * replay reads them in order, many times over). Not the content spool
 * (spool.h), which keeps contents' bytes. In memory: a file offset per
 * record, the records being read, decoded, and two more read last.
 */
/* A record read back, decoded: held while refs, then kept for a next read
 * until its place is needed. */
struct deltaspool_slot {
	void *buf;
	size_t cap;
	size_t k;			/* the record's number + 1 (0: none) */
	unsigned refs;			/* readers holding it */
	uint64_t used;			/* when last read (a count) */
	struct snapshot sn;		/* it as a snapshot (deltaspool_snap()) */
};

struct deltaspool {
	int fd;				/* the file, once opened */
	int opened;
	uint64_t *off;			/* per record: its offset; off[n]: the end */
	uint64_t *len;			/* ... its length decoded */
	size_t n, cap;
	void *zbuf;			/* a compressed record being written */
	size_t zcap;
	void *cctx;			/* zstd's, for writing */
	/* Reading: any thread (the advice's searches replay in several),
	 * under the lock. */
	pthread_mutex_t lock;
	int lock_made;
	struct deltaspool_slot **slots;	/* the records read back */
	size_t nslots;
	uint64_t reads;
	void *rbuf;			/* a compressed record being read */
	size_t rcap;
	void *dctx;			/* zstd's, for reading */
	int snaps;			/* its records are snapshots */
	int failed;
	char why[200];			/* why a record was refused */
};

/**
 * deltaspool_init() - an empty delta spool (no file yet): all zero.
 * @d: the spool
 */
void deltaspool_init(struct deltaspool *d);

/**
 * deltaspool_put() - append a record.
 * @d: the spool
 * @parts: the record's pieces, written one after the other
 * @lens: their bytes
 * @nparts: how many
 *
 * Refused when its file would leave $TMPDIR's file system less free than
 * the content spool leaves (5% of it or 1 GiB, whichever is less).
 *
 * Return: its number (from 0), or -1 with d->why said (and nothing more
 * taken from then on).
 */
long deltaspool_put(struct deltaspool *d, const void *const *parts,
		    const size_t *lens, size_t nparts);

/**
 * deltaspool_get() - record @k, decoded, held until deltaspool_done().
 * @d: the spool
 * @k: its number
 * @len: set to its bytes
 *
 * Safe in several threads at once. A file that cannot be read back is
 * fatal.
 *
 * Return: its bytes (8-byte aligned).
 */
const void *deltaspool_get(struct deltaspool *d, size_t k, size_t *len);

/**
 * deltaspool_done() - a record deltaspool_get() gave is no longer read.
 * @d: the spool
 * @p: what deltaspool_get() returned
 */
void deltaspool_done(struct deltaspool *d, const void *p);

/**
 * deltaspool_put_snap() - append a snapshot (series.snaps' element).
 * @d: the spool
 * @sn: the snapshot
 *
 * Return: as deltaspool_put().
 */
long deltaspool_put_snap(struct deltaspool *d, const struct snapshot *sn);

/**
 * deltaspool_snap() - snapshot @k of a spool of snapshots only (series.snap),
 * held until deltaspool_snap_done().
 * @src: the spool (struct deltaspool)
 * @k: the snapshot
 *
 * Return: it.
 */
const struct snapshot *deltaspool_snap(const void *src, size_t k);

/**
 * deltaspool_snap_done() - a snapshot deltaspool_snap() gave is no longer
 * read (series.snap_done).
 * @src: the spool
 * @sn: the snapshot
 */
void deltaspool_snap_done(const void *src, const struct snapshot *sn);

/**
 * deltaspool_keep() - append delta @s of @snaps and free its arrays; or,
 * should the spool refuse it, keep it and read back into @snaps those
 * spooled before it (the spool is then freed, and failed).
 * @d: a spool of snapshots (0 to s - 1 of @snaps in it)
 * @snaps: the snapshots
 * @s: the one to append
 *
 * Return: 0 when it is spooled, -1 when the snapshots are in @snaps.
 */
int deltaspool_keep(struct deltaspool *d, struct snapshot *snaps, size_t s);

/**
 * deltaspool_bytes() - the spool file's bytes.
 * @d: the spool
 *
 * Return: the bytes written.
 */
uint64_t deltaspool_bytes(const struct deltaspool *d);

/**
 * deltaspool_free() - close the spool (its file is unlinked) and free it.
 * @d: the spool
 */
void deltaspool_free(struct deltaspool *d);

#endif
