/* SPDX-License-Identifier: MIT */
/*
 * A series restricted to the processes ksmd scans (marked.h): the same
 * contents, fewer pages, the addresses of the processes left out dropped
 * from the union the replay walks (an address no snapshot has would still
 * be a step of its walk). A series of deltas (series.delta) gives one:
 * each snapshot is made whole, restricted, and made a delta again (which
 * processes are kept may change from one snapshot to the next); of a
 * series on disk (the delta spool), kept on disk too.
 */
#include <stdlib.h>
#include <string.h>

#include "../util/util.h"
#include "deltaspool.h"
#include "marked.h"

/* Snapshot @s of @sr into @cur (per address its content, NO_ID: none):
 * a delta applied to the one before it, a full snapshot in its place. */
static void snap_in(const struct series *sr, size_t s, uint32_t *cur)
{
	const struct snapshot *sn = series_snap(sr, s);

	if (!sr->delta)
		memset(cur, 0xff, sr->naddr * sizeof(*cur));
	for (size_t i = 0; i < sn->n; i++)
		cur[sn->addr_no[i]] = sn->id[i];
	series_snap_done(sr, sn);
}

/* Whether snapshot @s keeps the page at address @a (its process's bit). */
static int kept(const struct series *sr, const uint64_t *keep, unsigned shift,
		size_t s, size_t a)
{
	return keep[s] >> (sr->addr[a] >> shift) & 1;
}

/* The kept pages of @cur (snapshot @s), at their new address numbers
 * (@renum: 1 + new, 0 for an address dropped). */
static struct snapshot kept_snap(const struct series *sr, const uint64_t *keep,
				 unsigned shift, size_t s, const uint32_t *cur,
				 const uint32_t *renum)
{
	struct snapshot o = { 0, NULL, NULL };
	size_t m = 0;

	for (size_t a = 0; a < sr->naddr; a++)
		m += cur[a] != NO_ID && kept(sr, keep, shift, s, a);
	o.addr_no = xcalloc(m + 1, sizeof(*o.addr_no));
	o.id = xcalloc(m + 1, sizeof(*o.id));
	for (size_t a = 0; a < sr->naddr; a++)
		if (cur[a] != NO_ID && kept(sr, keep, shift, s, a)) {
			o.addr_no[o.n] = renum[a] - 1;
			o.id[o.n++] = cur[a];
		}
	return o;
}

void series_marked(const struct series *sr, const uint64_t *keep,
		   unsigned shift, struct series *out, struct snapshot *snaps)
{
	size_t bytes = (sr->naddr + 1) * sizeof(uint32_t), n = 0;
	uint32_t *renum = xcalloc(sr->naddr + 1, sizeof(*renum));
	uint32_t *cur = xmalloc(bytes), *last;
	uint64_t *addr = xcalloc(sr->naddr + 1, sizeof(*addr));
	struct deltaspool *ds;

	/* first mark the addresses some kept page has (renum: 1 + new) */
	memset(cur, 0xff, bytes);
	for (size_t s = 0; s < sr->nsnaps; s++) {
		snap_in(sr, s, cur);
		for (size_t a = 0; a < sr->naddr; a++)
			if (cur[a] != NO_ID && kept(sr, keep, shift, s, a))
				renum[a] = 1;
	}
	for (size_t a = 0; a < sr->naddr; a++)
		if (renum[a]) {
			addr[n] = sr->addr[a];
			renum[a] = (uint32_t)++n;
		}
	last = xmalloc((n + 1) * sizeof(*last));
	memset(last, 0xff, (n + 1) * sizeof(*last));
	memset(cur, 0xff, bytes);
	/* a series on disk: its restriction too */
	ds = !sr->snaps && sr->delta ? xcalloc(1, sizeof(*ds)) : NULL;
	for (size_t s = 0; s < sr->nsnaps; s++) {
		snap_in(sr, s, cur);
		snaps[s] = kept_snap(sr, keep, shift, s, cur, renum);
		if (sr->delta)
			snapshot_delta(&snaps[s], last, n);
		if (ds && !ds->failed)
			deltaspool_keep(ds, snaps, s);
	}
	*out = *sr;
	out->naddr = n;
	out->addr = addr;
	out->snaps = snaps;
	if (ds && !ds->failed) {
		out->snaps = NULL;
		out->snap = deltaspool_snap;
		out->snap_done = deltaspool_snap_done;
		out->src = ds;
	} else {
		free(ds);
	}
	free(renum);
	free(cur);
	free(last);
}

void series_marked_free(struct series *out, struct snapshot *snaps)
{
	for (size_t s = 0; s < out->nsnaps; s++) {
		free(snaps[s].addr_no);
		free(snaps[s].id);
	}
	if (!out->snaps) {	/* series_marked()'s spool */
		deltaspool_free((struct deltaspool *)out->src);
		free((void *)out->src);
	}
	free((void *)out->addr);
	out->addr = NULL;
}
