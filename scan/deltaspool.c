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

/* Record @k read into cache slot @i. */
static void deltaspool_load(struct deltaspool *d, size_t k, int i)
{
	size_t z = d->off[k + 1] - d->off[k], got;
	ssize_t r = 0;

	if (z > d->zcap) {
		free(d->zbuf);
		d->zbuf = xmalloc(z);
		d->zcap = z;
	}
	for (size_t done = 0; done < z; done += (size_t)r) {
		r = pread(d->fd, (char *)d->zbuf + done, z - done,
			  (off_t)(d->off[k] + done));
		if (r < 0 && errno == EINTR)
			r = 0;
		else if (r <= 0) {
			error("the series' snapshots on disk in $TMPDIR: cannot "
			      "read back: %s", r ? strerror(errno) : "short file");
			exit(1);
		}
	}
	if (d->len[k] + 8 > d->bufcap[i]) {
		free(d->buf[i]);
		d->bufcap[i] = d->len[k] + 8;
		d->buf[i] = xmalloc(d->bufcap[i]);
	}
	got = z ? ZSTD_decompressDCtx(d->dctx, d->buf[i], d->bufcap[i], d->zbuf, z)
		: 0;
	if (ZSTD_isError(got) || got != d->len[k]) {
		error("the series' snapshots on disk in $TMPDIR: cannot read "
		      "back: %s", ZSTD_isError(got) ? ZSTD_getErrorName(got) :
		      "short record");
		exit(1);
	}
	d->bufk[i] = k + 1;
}

const void *deltaspool_get(struct deltaspool *d, size_t k, size_t *len)
{
	int i = d->bufk[0] == k + 1 ? 0 : d->bufk[1] == k + 1 ? 1 : -1;

	if (i < 0) {	/* into the slot not read last */
		i = !d->last;
		deltaspool_load(d, k, i);
	}
	d->last = i;
	*len = d->len[k];
	return d->buf[i];
}

long deltaspool_put_snap(struct deltaspool *d, const struct snapshot *sn)
{
	uint64_t n = sn->n;
	const void *parts[3] = { &n, sn->addr_no, sn->id };
	size_t lens[3] = { sizeof(n), sn->n * sizeof(uint32_t),
			   sn->n * sizeof(uint32_t) };

	return deltaspool_put(d, parts, lens, 3);
}

const struct snapshot *deltaspool_snap(const void *src, size_t k)
{
	struct deltaspool *d = (struct deltaspool *)src;	/* its cache */
	size_t len;
	const uint64_t *p = deltaspool_get(d, k, &len);
	int i = d->last;
	uint64_t n = *p;

	d->sn[i] = (struct snapshot){ n, (uint32_t *)(p + 1),
				      (uint32_t *)(p + 1) + n };
	return &d->sn[i];
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
	free(d->off), free(d->len), free(d->zbuf);
	free(d->buf[0]), free(d->buf[1]);
	deltaspool_init(d);
}
