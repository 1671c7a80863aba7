/* SPDX-License-Identifier: MIT */
/*
 * The shortcut over full scans that repeat. On memory that does not
 * change, once every page's smart_scan age is past 8, a replay comes back
 * to where it was a few scans before (every address's rmap_item and
 * mapping, the KSM pages, the counters) and from then on repeats those
 * scans for ever, but for their times and the running counts. The replay
 * takes a mark now and then (replay_mark()), notes when it is back at it,
 * and from there adds each period's rows without running them: the last
 * period's, timed from their visits (replay_time_scan()). It must give
 * the rows of the full replay exactly (KSMSCAN_SLOW_REPLAY turns it off;
 * tests/unit_replay.c and fuzz/fuzz_replay.c compare the two).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../util/util.h"
#include "replay_impl.h"

/* An address's rmap as the next scans see it: the unstable tree's node
 * of a past scan is never read again, and past 8 scans without a merge
 * smart_scan's age changes nothing (skip_age()). */
static int rmap_same(const struct rmap *a, const struct rmap *b)
{
	return a->id == b->id && a->oldsum == b->oldsum && a->dup == b->dup &&
	       a->map == b->map && a->rmap == b->rmap &&
	       a->unstable == b->unstable && a->zero == b->zero &&
	       a->skips == b->skips &&
	       (a->age > 9 ? 9 : a->age) == (b->age > 9 ? 9 : b->age);
}

static int dup_same(const struct dup *a, const struct dup *b)
{
	return a->chain == b->chain && a->next == b->next && a->len == b->len &&
	       a->mapped == b->mapped && a->alive == b->alive;
}

struct replay_mark *replay_mark(const struct replay *r)
{
	const struct replay_trees *t = &r->tree;
	struct replay_mark *m = xcalloc(1, sizeof(*m));
	size_t n = r->sr->naddr;

	m->s = xcalloc(n ? n : 1, sizeof(*m->s));
	memcpy(m->s, t->s, n * sizeof(*m->s));
	m->d = xcalloc(t->nd ? t->nd : 1, sizeof(*m->d));
	if (t->nd)	/* no KSM page yet: t->d is NULL */
		memcpy(m->d, t->d, t->nd * sizeof(*m->d));
	m->nd = t->nd;
	m->nstable = t->stable.len;
	m->shared = r->count.shared;
	m->sharing = r->count.sharing;
	m->unshared = r->count.unshared;
	m->rmap_items = r->count.rmap_items;
	m->zero = r->count.zero;
	m->thp_zero = r->count.thp_zero;
	m->thp_splits = r->count.thp_splits;	/* splits are for good */
	return m;
}

int replay_at_mark(const struct replay *r, const struct replay_mark *m)
{
	const struct replay_trees *t = &r->tree;
	const struct replay_counts *c = &r->count;

	if (m->nd != t->nd || m->nstable != t->stable.len ||
	    m->shared != c->shared || m->sharing != c->sharing ||
	    m->unshared != c->unshared || m->rmap_items != c->rmap_items ||
	    m->zero != c->zero || m->thp_zero != c->thp_zero ||
	    m->thp_splits != c->thp_splits)
		return 0;
	for (size_t k = 0; k < t->nd; k++)
		if (!dup_same(&m->d[k], &t->d[k]))
			return 0;
	for (size_t i = 0; i < r->sr->naddr; i++)
		if (!rmap_same(&m->s[i], &t->s[i]))
			return 0;
	return 1;
}

/* The scans since the mark repeat: their visits are kept in order at
 * r->skip.seen[0 ..]. */
void replay_note_scan(struct replay *r, size_t n)
{
	struct replay_skip *k = &r->skip;

	if (k->mark && replay_at_mark(r, k->mark)) {
		struct replay_visits keep[REPLAY_PERIOD_MAX];

		k->period = n - k->mark_at;
		for (size_t j = 0; j < REPLAY_PERIOD_MAX; j++)
			keep[j] = k->seen[(n - k->period + 1 + j) % REPLAY_PERIOD_MAX];
		memcpy(k->seen, keep, sizeof(keep));
		return;
	}
	if (n % REPLAY_PERIOD_MAX == REPLAY_PERIOD_MAX / 2) {
		replay_mark_free(k->mark);
		k->mark = replay_mark(r);
		k->mark_at = n;
	}
}

/* Undo a period's rows that cannot be: the memory changes within them. */
static int give_up(struct replay *r, size_t *n, size_t n0, size_t settling,
		   int cut)
{
	*n = n0;
	r->settling = settling;
	r->cut = cut;
	replay_forget_mark(r);
	return 0;
}

/*
 * On memory that does not change, a replay back where it was r->skip.period
 * scans before repeats those scans, but for their times; so each period's
 * rows are the last period's, timed from their visits, until the replay
 * ends or the next snapshot is due within a period (then that one is
 * replayed). The replay's state stays as it was (the same, but for the
 * running counts, set here).
 */
int replay_skip_ahead(struct replay *r, struct timeline_row **rows, size_t *n,
		      size_t *cap)
{
	size_t P = r->skip.period, n0 = *n, settling = r->settling;
	int cut = r->cut, reads_cpu = replay_policy_reads_cpu(r);
	uint64_t skips = (*rows)[n0 - 1].pages_skipped -
			 (*rows)[n0 - 1 - P].pages_skipped, wakes = 0;
	struct scan_time t = {
		.now = r->clock.now, .pages_to_scan = r->clock.pts, .ps = r->pol.ps,
		.cpu = r->cpu.all,
		.limit = r->clock.snap + 1 < r->sr->nsnaps ?
			 replay_snap_time(r, r->clock.snap + 1) : INFINITY,
	};

	for (size_t k = 0; k < P; k++) {
		const struct replay_visits *v = &r->skip.seen[k];

		if (!t.pages_to_scan)
			return give_up(r, n, n0, settling, cut);
		t.row = (*rows)[*n - P];
		t.row.scan = *n + 1;
		t.row.pages_skipped += skips;
		if (reads_cpu)	/* only a scan_end() reads ksmd's CPU so far */
			t.cpu = replay_cpu_after(r->p, v, t.cpu);
		if (!replay_time_scan(r->p, v, &t))
			return give_up(r, n, n0, settling, cut);
		wakes += t.wakeups;
		if (*n == *cap)
			*rows = xreallocarray(*rows, *cap *= 2, sizeof(**rows));
		(*rows)[(*n)++] = t.row;
		if (replay_done(r, *rows, *n))
			return 1;
		if (k + 1 < P) {	/* the sleep after the scan's last batch */
			t.now += t.rest;
			wakes++;
			if (t.limit <= t.now + 1e-9)
				return give_up(r, n, n0, settling, cut);
		}
	}
	r->clock.now = t.now;
	r->clock.batch += wakes;
	r->cpu.batch = t.rest_cost;	/* for the sleep after it: replay_wake() */
	r->clock.pts = t.pages_to_scan;
	r->pol.ps = t.ps;
	r->cpu.all = t.cpu;
	r->count.skipped = (*rows)[*n - 1].pages_skipped;
	return 0;
}
