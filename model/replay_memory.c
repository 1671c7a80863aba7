/* SPDX-License-Identifier: MIT */
/*
 * The replay's memory as it changes: a write (seen in the next snapshot, or
 * one of write_rate's unseen writes) breaks the address's KSM or zero-page
 * mapping, as the kernel's copy-on-write does, and a new snapshot is the
 * writes, unmaps and new addresses since the one before. A change of
 * memory also ends the skip-ahead's mark (what repeated before need not
 * repeat now). Below the rest of the replay: it calls nothing of it.
 */
#include <stdlib.h>

#include "../util/util.h"
#include "replay_impl.h"
#include "sample.h"

/* The last mapping of KSM page @k went: the page is freed, its node stale. */
static void dup_free(struct replay *r, uint32_t k)
{
	struct dup *d = &r->tree.d[k];
	uint64_t w = SERIES_WEIGHT(r->sr, SERIES_CLASS(r->sr,
						       r->tree.c[d->chain].id));

	if (d->len) {
		r->count.shared -= w;
		r->count.sharing -= (d->len - 1) * w;
	}
	d->alive = 0;
	d->len = 0;
	r->tree.c[d->chain].live--;
	if (r->tree.c[d->chain].best == k)	/* (another may go freely) */
		r->tree.c[d->chain].best = CHAIN_ASK;
}

/* A sampled series: the address's rmap_item and unstable node count at
 * the weight of content @id from now on (a page that went keeps its own). */
static void reweigh(struct replay *r, struct rmap *s, uint32_t id)
{
	int heavy = id != NO_ID ? SERIES_CLASS(r->sr, id) : s->heavy;
	uint64_t was = SERIES_WEIGHT(r->sr, s->heavy), now = SERIES_WEIGHT(r->sr, heavy);

	if (s->rmap)
		r->count.rmap_items = r->count.rmap_items - was + now;
	if (s->unstable)
		r->count.unshared = r->count.unshared - was + now;
	s->heavy = (uint8_t)heavy;
}

void replay_written(struct replay *r, struct rmap *s, uint32_t id)
{
	uint64_t w = SERIES_WEIGHT(r->sr, s->heavy);

	if (s->map != NO_ID) {
		r->count.cow += id != NO_ID ? w : 0;	/* a write, not an unmap */
		if (--r->tree.d[s->map].mapped == 0)
			dup_free(r, s->map);
		s->map = NO_ID;
	}
	if (s->zero == ZERO_KSM)
		r->count.zero -= w;
	else if (s->zero == ZERO_SPLIT)
		r->count.thp_zero -= w;
	s->zero = 0;
	reweigh(r, s, id);
	s->id = id;
	replay_unstable_seen(r, (uint32_t)(s - r->tree.s));
}

void replay_unstable_seen(struct replay *r, uint32_t i)
{
	const struct rmap *s = &r->tree.s[i];
	struct unstable_node *u;

	if (s->unode >= r->tree.unstable.len)
		return;
	u = (struct unstable_node *)(void *)rb_at(&r->tree.unstable, s->unode);
	if (u->addr != i)
		return;	/* a node of a past scan's tree: gone */
	u->id = s->id == NO_ID || s->zero ? NO_ID : s->id;
	u->head = u->id != NO_ID ? r->sr->head[u->id] : 0;
}

/* The change at one address: @id from now on (NO_ID: gone). */
static void snap_set(struct replay *r, struct rmap *s, uint32_t id)
{
	if (s->id == id)
		return;
	r->clock.present += (id != NO_ID) - (s->id != NO_ID);
	replay_written(r, s, id);
}

void replay_snap_apply(struct replay *r, size_t k)
{
	static const struct snapshot none = { 0, NULL, NULL };
	const struct snapshot *a = k && !r->sr->delta ?
				   series_snap(r->sr, k - 1) : &none;
	const struct snapshot *b = series_snap(r->sr, k);
	struct rmap *s = r->tree.s;
	size_t i = 0, j = 0;

	/* a delta's pages are its changes, gone ones too: none before it */
	while (i < a->n || j < b->n) {
		if (j == b->n || (i < a->n && a->addr_no[i] < b->addr_no[j])) {
			snap_set(r, &s[a->addr_no[i++]], NO_ID);	/* gone */
			continue;
		}
		if (i < a->n && a->addr_no[i] == b->addr_no[j])
			i++;
		snap_set(r, &s[b->addr_no[j]], b->id[j]);
		j++;
	}
	if (a != &none)
		series_snap_done(r->sr, a);
	series_snap_done(r->sr, b);
	r->clock.snap = k;
	replay_forget_mark(r);	/* what repeated before need not now */
}

/* Address @a's content in snapshot @sn, whose pages before @j are below
 * @a (NO_ID: no page there), moving @j past it. */
static uint32_t snap_at(const struct snapshot *sn, size_t *j, uint32_t a)
{
	if (*j < sn->n && sn->addr_no[*j] == a)
		return sn->id[(*j)++];
	return NO_ID;
}

const struct snapshot *series_snap(const struct series *sr, size_t k)
{
	return sr->snaps ? &sr->snaps[k] : sr->snap(sr->src, k);
}

void series_snap_done(const struct series *sr, const struct snapshot *sn)
{
	if (!sr->snaps)
		sr->snap_done(sr->src, sn);
}

void snapshot_delta(struct snapshot *sn, uint32_t *last, size_t naddr)
{
	size_t n = 0, j = 0;
	uint32_t *no, *id;

	for (uint32_t a = 0; a < naddr; a++)	/* count, then fill */
		n += snap_at(sn, &j, a) != last[a];
	no = xcalloc(n + 1, sizeof(*no));
	id = xcalloc(n + 1, sizeof(*id));
	n = 0, j = 0;
	for (uint32_t a = 0; a < naddr; a++) {
		uint32_t now = snap_at(sn, &j, a);

		if (now == last[a])
			continue;
		no[n] = a;
		id[n++] = last[a] = now;
	}
	free(sn->addr_no);
	free(sn->id);
	*sn = (struct snapshot){ n, no, id };
}

void replay_mark_free(struct replay_mark *m)
{
	if (!m)
		return;
	free(m->s);
	free(m->d);
	free(m);
}

void replay_forget_mark(struct replay *r)
{
	replay_mark_free(r->skip.mark);
	r->skip.mark = NULL;
	r->skip.period = 0;
}
