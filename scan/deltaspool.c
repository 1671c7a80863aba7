/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "../util/util.h"
#include "deltaspool.h"

/* zstd's fastest level: a delta's address numbers ascend and its ids are
 * mostly new ones in order, which compress well even so, and the spool is
 * written as fast as snapshots settle. */
#define DELTASPOOL_LEVEL 1

void deltaspool_init(struct deltaspool *d)
{
	memset(d, 0, sizeof(*d));	/* (all zero: a spool too) */
}

/* The spool takes nothing more: say why once. */
static long deltaspool_fail(struct deltaspool *d, const char *what, int err)
{
	if (!d->failed)
		snprintf(d->why, sizeof(d->why), "the series' snapshots on disk in "
			 "$TMPDIR: %s%s%s", what, err ? ": " : "",
			 err ? strerror(err) : "");
	d->failed = 1;
	return -1;
}

/* @len bytes of @p at @off of the file, all of them. */
static int write_all(int fd, const void *p, size_t len, uint64_t off)
{
	while (len) {
		ssize_t w = pwrite(fd, p, len, (off_t)off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (!w)
				errno = ENOSPC;
			return -1;
		}
		p = (const char *)p + w, len -= (size_t)w, off += (uint64_t)w;
	}
	return 0;
}

/* The record's pieces, compressed into d->zbuf, a frame each (zstd reads
 * frames one after the other as one): no stream's buffers, which would
 * hold as much as the record. Return: its bytes. */
static size_t deltaspool_pack(struct deltaspool *d, const void *const *parts,
			      const size_t *lens, size_t nparts)
{
	size_t bound = 64, at = 0;

	for (size_t i = 0; i < nparts; i++)
		bound += ZSTD_compressBound(lens[i]);
	if (bound > d->zcap) {
		free(d->zbuf);
		d->zbuf = xmalloc(bound);
		d->zcap = bound;
	}
	for (size_t i = 0; i < nparts; i++) {
		size_t z;

		if (!lens[i])
			continue;
		z = ZSTD_compressCCtx(d->cctx, (char *)d->zbuf + at, d->zcap - at,
				      parts[i], lens[i], DELTASPOOL_LEVEL);
		if (ZSTD_isError(z)) {
			error("zstd: %s", ZSTD_getErrorName(z));
			exit(1);
		}
		at += z;
	}
	return at;
}

long deltaspool_put(struct deltaspool *d, const void *const *parts,
		    const size_t *lens, size_t nparts)
{
	size_t total = 0, z;
	uint64_t at = d->n ? d->off[d->n] : 0;

	if (d->failed)
		return -1;
	if (!d->opened) {
		if ((d->fd = tmpfile_fd()) < 0)
			return deltaspool_fail(d, "cannot create", errno);
		d->opened = 1;
		d->lock_made = !pthread_mutex_init(&d->lock, NULL);
		d->cctx = ZSTD_createCCtx();
		d->dctx = ZSTD_createDCtx();
		if (!d->cctx || !d->dctx)
			return deltaspool_fail(d, "zstd", ENOMEM);
	}
	for (size_t i = 0; i < nparts; i++)
		total += lens[i];
	z = deltaspool_pack(d, parts, lens, nparts);
	if (!tmp_room_for(d->fd, z))
		return deltaspool_fail(d, "would leave its file system less than "
				       "5% or 1 GiB free", 0);
	if (write_all(d->fd, d->zbuf, z, at) < 0)
		return deltaspool_fail(d, "cannot write", errno);
	if (d->n + 1 >= d->cap) {
		d->cap = d->cap ? 2 * d->cap : 16;
		d->off = xreallocarray(d->off, d->cap, sizeof(*d->off));
		d->len = xreallocarray(d->len, d->cap, sizeof(*d->len));
	}
	d->off[d->n] = at;
	d->len[d->n] = total;
	d->off[++d->n] = at + z;
	return (long)(d->n - 1);
}

/* Record @k read into @sl (d->lock held). */
static void deltaspool_load(struct deltaspool *d, size_t k,
			    struct deltaspool_slot *sl)
{
	size_t z = d->off[k + 1] - d->off[k], got;
	ssize_t r = 0;

	if (z > d->rcap) {
		free(d->rbuf);
		d->rbuf = xmalloc(z);
		d->rcap = z;
	}
	for (size_t done = 0; done < z; done += (size_t)r) {
		r = pread(d->fd, (char *)d->rbuf + done, z - done,
			  (off_t)(d->off[k] + done));
		if (r < 0 && errno == EINTR)
			r = 0;
		else if (r <= 0) {
			error("the series' snapshots on disk in $TMPDIR: cannot "
			      "read back: %s", r ? strerror(errno) : "short file");
			exit(1);
		}
	}
	if (d->len[k] + 8 > sl->cap) {
		free(sl->buf);
		sl->cap = d->len[k] + 8;
		sl->buf = xmalloc(sl->cap);
	}
	got = z ? ZSTD_decompressDCtx(d->dctx, sl->buf, sl->cap, d->rbuf, z) : 0;
	if (ZSTD_isError(got) || got != d->len[k]) {
		error("the series' snapshots on disk in $TMPDIR: cannot read "
		      "back: %s", ZSTD_isError(got) ? ZSTD_getErrorName(got) :
		      "short record");
		exit(1);
	}
	sl->k = k + 1;
}

/* The slot for record @k (d->lock held): the one holding it, else the
 * one read longest ago that nobody holds, else a new one. */
static struct deltaspool_slot *deltaspool_slot(struct deltaspool *d, size_t k)
{
	struct deltaspool_slot *free_sl = NULL;

	for (size_t i = 0; i < d->nslots; i++) {
		struct deltaspool_slot *sl = d->slots[i];

		if (sl->k == k + 1)
			return sl;
		if (!sl->refs && (!free_sl || sl->used < free_sl->used))
			free_sl = sl;
	}
	if (!free_sl) {
		d->slots = xreallocarray(d->slots, d->nslots + 1, sizeof(*d->slots));
		free_sl = d->slots[d->nslots++] = xcalloc(1, sizeof(*free_sl));
	}
	deltaspool_load(d, k, free_sl);
	if (d->snaps) {
		const uint64_t *p = free_sl->buf;

		free_sl->sn = (struct snapshot){ p[0], (uint32_t *)(p + 1),
						 (uint32_t *)(p + 1) + p[0] };
	}
	return free_sl;
}

/* Slot of @k, held (d->lock taken and given back). */
static struct deltaspool_slot *deltaspool_hold(struct deltaspool *d, size_t k)
{
	struct deltaspool_slot *sl;

	pthread_mutex_lock(&d->lock);
	sl = deltaspool_slot(d, k);
	sl->refs++;
	sl->used = ++d->reads;
	pthread_mutex_unlock(&d->lock);
	return sl;
}

const void *deltaspool_get(struct deltaspool *d, size_t k, size_t *len)
{
	*len = d->len[k];
	return deltaspool_hold(d, k)->buf;
}

/* Let go of the slot whose record is at @p or whose snapshot is @sn. Of
 * those nobody holds, two stay decoded (the next read may be theirs: a
 * replay begins again at the first snapshot); the others' memory goes. */
static void deltaspool_release(struct deltaspool *d, const void *p,
			       const struct snapshot *sn)
{
	size_t idle = 0;

	pthread_mutex_lock(&d->lock);
	for (size_t i = 0; i < d->nslots; i++) {
		struct deltaspool_slot *sl = d->slots[i];

		if (sl->refs && ((p && sl->buf == p) || (sn && &sl->sn == sn))) {
			sl->refs--;
			p = NULL, sn = NULL;
		}
	}
	for (size_t i = d->nslots; i-- > 0;) {
		struct deltaspool_slot *sl = d->slots[i];

		if (!sl->refs && ++idle > 2 && sl->buf) {
			free(sl->buf);
			*sl = (struct deltaspool_slot){ 0 };
		}
	}
	pthread_mutex_unlock(&d->lock);
}

void deltaspool_done(struct deltaspool *d, const void *p)
{
	deltaspool_release(d, p, NULL);
}

long deltaspool_put_snap(struct deltaspool *d, const struct snapshot *sn)
{
	uint64_t n = sn->n;
	const void *parts[3] = { &n, sn->addr_no, sn->id };
	size_t lens[3] = { sizeof(n), sn->n * sizeof(uint32_t),
			   sn->n * sizeof(uint32_t) };

	d->snaps = 1;
	return deltaspool_put(d, parts, lens, 3);
}

const struct snapshot *deltaspool_snap(const void *src, size_t k)
{
	struct deltaspool *d = (struct deltaspool *)src;	/* its slots */

	return &deltaspool_hold(d, k)->sn;
}

void deltaspool_snap_done(const void *src, const struct snapshot *sn)
{
	deltaspool_release((struct deltaspool *)src, NULL, sn);
}

int deltaspool_keep(struct deltaspool *d, struct snapshot *snaps, size_t s)
{
	char why[sizeof(d->why)];

	if (deltaspool_put_snap(d, &snaps[s]) >= 0) {
		free(snaps[s].addr_no), free(snaps[s].id);
		snaps[s] = (struct snapshot){ 0, NULL, NULL };
		return 0;
	}
	for (size_t k = 0; k < d->n; k++) {
		const struct snapshot *sn = deltaspool_snap(d, k);

		snaps[k] = (struct snapshot){ sn->n,
			xcalloc(sn->n + 1, sizeof(uint32_t)),
			xcalloc(sn->n + 1, sizeof(uint32_t)) };
		memcpy(snaps[k].addr_no, sn->addr_no, sn->n * sizeof(uint32_t));
		memcpy(snaps[k].id, sn->id, sn->n * sizeof(uint32_t));
		deltaspool_snap_done(d, sn);
	}
	memcpy(why, d->why, sizeof(why));
	deltaspool_free(d);
	memcpy(d->why, why, sizeof(why));
	d->failed = 1;
	return -1;
}

uint64_t deltaspool_bytes(const struct deltaspool *d)
{
	return d->n ? d->off[d->n] : 0;
}

void deltaspool_free(struct deltaspool *d)
{
	if (d->opened)
		close(d->fd);
	ZSTD_freeCCtx(d->cctx);
	ZSTD_freeDCtx(d->dctx);
	for (size_t i = 0; i < d->nslots; i++) {
		free(d->slots[i]->buf);
		free(d->slots[i]);
	}
	if (d->lock_made)
		pthread_mutex_destroy(&d->lock);
	free(d->slots), free(d->off), free(d->len), free(d->zbuf), free(d->rbuf);
	deltaspool_init(d);
}
