/* SPDX-License-Identifier: MIT */
/*
 * The replay's rows and what they come to: the counters at the end of a
 * full scan (a timeline row), each owner's pages at the end, whether the
 * rows say the replay is over, ksmd's CPU over them and the figures of the
 * policies report.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../util/util.h"
#include "ksm.h"
#include "replay_impl.h"
#include "sample.h"

/* Of pages_sharing, the further mappings of zero-filled KSM pages. */
static uint64_t zero_sharing(const struct replay *r)
{
	const struct replay_trees *t = &r->tree;
	uint64_t n = 0;

	for (size_t k = 0; k < t->nd; k++)
		if (t->d[k].alive && t->d[k].len &&
		    t->c[t->d[k].chain].id == r->sr->zero_id)
			n += t->d[k].len - 1;
	return n;
}

struct timeline_row replay_counters(const struct replay *r, uint64_t scan,
				    uint64_t first_batch, double first_time)
{
	const struct replay_counts *k = &r->count;
	uint64_t merged = k->shared + k->sharing + k->unshared;
	struct timeline_row row = {
		.scan = scan, .snapshot = r->clock.snap,
		.seconds = r->clock.now,
		.pages_shared = k->shared, .pages_sharing = k->sharing,
		.pages_unshared = k->unshared,
		.pages_volatile = k->rmap_items > merged ? k->rmap_items - merged : 0,
		.pages_skipped = k->skipped, .ksm_zero_pages = k->zero,
		.general_profit = ksm_general_profit(k->sharing + k->zero,
						     k->rmap_items),
		.zero_sharing = zero_sharing(r),
		.visited = k->visited, .hashed = k->hashed,
		.memcmp_bytes = k->memcmp_bytes,
		.wakeups = r->clock.batch - first_batch + 1,
		.cow_ksm = k->cow, .skipped_scan = k->skipped_scan,
		.pages_to_scan = r->clock.pts, .sleep_ms = r->clock.sleep_ms,
		.cpu_seconds = r->cpu.scan, .ended = r->pol.halt,
		.stopped_seconds = r->pol.stop_time,
		.stopped_saving = r->pol.stop_saving,
		.thp_zero_freed = k->thp_zero, .thp_splits = k->thp_splits,
	};
	double cpu = ((double)row.hashed * r->p->ns_per_page +
		      (double)row.memcmp_bytes * r->p->ns_per_byte) * 1e-9 +
		     (double)row.wakeups * r->p->wake_seconds;
	/* from the scan's first wake-up to the end of its last batch's sleep */
	double wall = r->clock.now - first_time +
		      replay_period(r->p, r->clock.sleep_ms, r->cpu.batch);

	row.cpu_percent = wall > 0 ? 100.0 * cpu / wall : 0.0;
	return row;
}

void replay_owners_count(const struct replay *r, unsigned shift,
			 struct replay_owner *owners, size_t nowners)
{
	memset(owners, 0, nowners * sizeof(*owners));
	for (size_t i = 0; i < r->sr->naddr; i++) {
		uint64_t o = r->sr->addr[i] >> shift;
		const struct rmap *s = &r->tree.s[i];

		if (o >= nowners)
			continue;
		owners[o].rmap_items += s->rmap;
		/* STABLE_FLAG: in a KSM page's rmap list until ksmd next
		 * visits the address, even once a write broke the mapping */
		owners[o].merging += s->rmap && s->dup != NO_ID;
		owners[o].zero += s->zero == ZERO_KSM;
	}
}

/* Whether two scans ended with the same counters (apart from skips, which
 * only move pages between unshared and volatile). */
static int same(const struct timeline_row *a, const struct timeline_row *b)
{
	return a->pages_shared == b->pages_shared &&
	       a->pages_sharing == b->pages_sharing &&
	       a->ksm_zero_pages == b->ksm_zero_pages &&
	       a->thp_zero_freed == b->thp_zero_freed &&
	       a->pages_unshared + a->pages_volatile ==
	       b->pages_unshared + b->pages_volatile;
}

int replay_over(const struct series *sr, const struct replay_params *p,
		const struct timeline_row *rows, size_t n, size_t *settling,
		int *cut)
{
	double end = (sr->at ? sr->at[sr->nsnaps - 1] :
		      (double)(sr->nsnaps - 1) * p->interval) + p->interval;
	int past = 0;

	if (p->scans)
		return n >= p->scans;
	if (p->until > 0 && p->until_horizon) {
		if (n >= 2 && rows[n - 2].seconds >= p->until)
			return 1;
		/* the scan at or past it ends as any, but not for its saving */
		past = rows[n - 1].seconds >= p->until;
	} else if (p->until > 0 && rows[n - 1].seconds >= p->until) {
		return 1;
	}
	if (p->until_saving && !past && rows[n - 1].pages_sharing +
	    rows[n - 1].ksm_zero_pages >= p->until_saving)
		return 1;
	if (n >= REPLAY_SCANS_MAX ||
	    (uint64_t)n * (sr->naddr + 1) >= REPLAY_WORK_MAX)
		return *cut = 1;
	if (rows[n - 1].seconds < end)
		return 0;
	if (p->write_rate > 0)
		return 1;	/* the writes go on: the counters never settle */
	return (n >= 2 && same(&rows[n - 1], &rows[n - 2])) ||
	       ++*settling > REPLAY_SETTLE_MAX;
}

/* A moment of the replay: its time and saving (pages). */
struct point {
	double seconds;
	uint64_t saving;
};

/*
 * The replay's savings over time: each full scan's end; a replay that
 * ksmtuned stopped for good ends with a row at the replay's end, and
 * before it the moment ksmtuned stopped KSM, with the saving then. Returns
 * how many points (at most @n + 1).
 */
static size_t points(const struct timeline_row *rows, size_t n,
		     struct point *pt)
{
	const struct timeline_row *last = &rows[n - 1];
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		if (i == n - 1 && last->ended && last->stopped_seconds > 0 &&
		    (!k || pt[k - 1].seconds <= last->stopped_seconds))
			pt[k++] = (struct point){ last->stopped_seconds,
						  last->stopped_saving };
		pt[k++] = (struct point){ rows[i].seconds,
					  rows[i].pages_sharing + rows[i].ksm_zero_pages };
	}
	return k;
}

/*
 * Whether the saving at @at is unknown: past the end of a replay that did
 * not settle; or between ksmtuned's stop and the replay's end when the
 * saving fell in between (while KSM is stopped nothing merges, so an equal
 * saving at both ends held all along, but a snapshot that broke merges
 * came at a time the rows do not say).
 */
static int unknown_at(const struct timeline_row *last, double at, int settled)
{
	if (at > last->seconds)
		return !settled;
	return last->ended && last->stopped_seconds > 0 &&
	       at >= last->stopped_seconds &&
	       last->stopped_saving != last->pages_sharing + last->ksm_zero_pages;
}

/* The first moment whose saving is at least @want (and more than 0), or
 * NaN. */
static double first_reaching(const struct point *pt, size_t n, double want)
{
	for (size_t i = 0; i < n; i++)
		if (pt[i].saving && (double)pt[i].saving >= want)
			return pt[i].seconds;
	return NAN;
}

void ksmd_cpu_add(struct ksmd_cpu *c, const struct timeline_row *row)
{
	double dt = row->seconds - c->before;
	/* the scan's pages, and its wake-ups, each a wake-up's own cost; a
	 * scan a tuner kept KSM stopped through, visiting nothing, had none */
	uint64_t wakeups = row->ended && !row->visited ? 0 : row->wakeups;
	double cpu = row->cpu_seconds + (double)wakeups * c->wake_seconds;

	c->sum += cpu;
	c->seconds = row->seconds;
	c->window += cpu;
	/* as top measures it: a row's time is its last batch's start, so a
	 * scan of one or two batches alone would count a batch's work twice */
	if (dt < REPLAY_PEAK_SECONDS)
		return;
	if (100 * c->window / dt > c->busy)
		c->busy = 100 * c->window / dt;
	c->window = 0;
	c->before = row->seconds;
}

double ksmd_cpu_mean(const struct ksmd_cpu *c)
{
	return c->seconds > 0 ? 100 * c->sum / c->seconds : 0;
}

double ksmd_cpu_peak(const struct ksmd_cpu *c)
{
	double dt = c->seconds - c->before;

	/* the scans after the last closed stretch: what is left */
	if (dt > 0 && 100 * c->window / dt > c->busy)
		return 100 * c->window / dt;
	return c->busy;
}

struct replay_figures replay_figures(const struct timeline_row *rows, size_t n,
				     int settled, double wake_seconds)
{
	static const double hours[] = REPLAY_FIGURE_HOURS;
	const struct timeline_row *last = &rows[n - 1];
	struct point *pt = xcalloc(n + 1, sizeof(*pt));
	size_t np = points(rows, n, pt);
	double final = (double)pt[np - 1].saving;
	struct ksmd_cpu cpu = { .wake_seconds = wake_seconds };
	struct replay_figures f = {
		.seconds_to_start = first_reaching(pt, np, 1),
		.seconds_to_50 = first_reaching(pt, np, 0.5 * final),
		.seconds_to_90 = first_reaching(pt, np, 0.9 * final),
		.pages_to_scan = last->pages_to_scan, .sleep_ms = last->sleep_ms,
	};

	for (size_t h = 0; h < sizeof(hours) / sizeof(hours[0]); h++) {
		double at = hours[h] * 3600, v = 0;

		for (size_t i = 0; i < np && pt[i].seconds <= at; i++)
			v = (double)pt[i].saving;
		f.saved_bytes[h] = unknown_at(last, at, settled) ? NAN :
				   v * PAGE_BYTES;
	}
	for (size_t i = 0; i < n; i++)
		ksmd_cpu_add(&cpu, &rows[i]);
	f.cpu_mean = ksmd_cpu_mean(&cpu);
	f.cpu_peak = ksmd_cpu_peak(&cpu);
	free(pt);
	return f;
}

int replay_done(struct replay *r, const struct timeline_row *rows, size_t n)
{
	if (r->pol.halt)	/* one last row, at the time the replay ends */
		return rows[n - 1].ended;
	return replay_over(r->sr, r->p, rows, n, &r->settling, &r->cut);
}

int timeline_rows_equal(const struct timeline_row *a, size_t na,
			const struct timeline_row *b, size_t nb)
{
	if (na != nb)
		return 0;
	for (size_t i = 0; i < na; i++)
		if (a[i].scan != b[i].scan || a[i].snapshot != b[i].snapshot ||
		    a[i].seconds != b[i].seconds ||
		    a[i].pages_shared != b[i].pages_shared ||
		    a[i].pages_sharing != b[i].pages_sharing ||
		    a[i].pages_unshared != b[i].pages_unshared ||
		    a[i].pages_volatile != b[i].pages_volatile ||
		    a[i].pages_skipped != b[i].pages_skipped ||
		    a[i].ksm_zero_pages != b[i].ksm_zero_pages ||
		    a[i].general_profit != b[i].general_profit ||
		    a[i].zero_sharing != b[i].zero_sharing ||
		    a[i].visited != b[i].visited || a[i].hashed != b[i].hashed ||
		    a[i].memcmp_bytes != b[i].memcmp_bytes ||
		    a[i].wakeups != b[i].wakeups ||
		    a[i].cpu_percent != b[i].cpu_percent ||
		    a[i].cpu_seconds != b[i].cpu_seconds ||
		    a[i].cow_ksm != b[i].cow_ksm ||
		    a[i].skipped_scan != b[i].skipped_scan ||
		    a[i].pages_to_scan != b[i].pages_to_scan ||
		    a[i].sleep_ms != b[i].sleep_ms || a[i].ended != b[i].ended ||
		    a[i].stopped_seconds != b[i].stopped_seconds ||
		    a[i].stopped_saving != b[i].stopped_saving ||
		    a[i].thp_zero_freed != b[i].thp_zero_freed ||
		    a[i].thp_splits != b[i].thp_splits)
			return 0;
	return 1;
}

static int u64_cmp(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return *x < *y ? -1 : *x > *y;
}

/* Of the sampled contents: each one's KSM pages and their further
 * mappings, per node of the stable tree (one node a content), squared and
 * summed into @out. */
static void spread_stable(const struct replay *r, struct replay_spread *out)
{
	const struct replay_trees *t = &r->tree;
	size_t nc = t->ccap;
	double *shared = xcalloc(nc + 1, sizeof(*shared));
	double *sharing = xcalloc(nc + 1, sizeof(*sharing));

	for (size_t k = 0; k < t->nd; k++)
		if (t->d[k].alive && t->d[k].len &&
		    SERIES_CLASS(r->sr, t->c[t->d[k].chain].id) == SAMPLE_IN) {
			shared[t->d[k].chain] += 1;
			sharing[t->d[k].chain] += t->d[k].len - 1;
		}
	for (size_t n = 0; n < nc; n++) {
		out->shared += shared[n] * shared[n];
		out->shared_sum += shared[n];
		out->sharing += sharing[n] * sharing[n];
	}
	free(shared);
	free(sharing);
}

/* A snapshot's contents, each with its pages: @ids sorted, into (id, pages)
 * runs in place. Return: how many. */
static size_t runs_of(uint64_t *ids, size_t n)
{
	size_t m = 0;

	qsort(ids, n, sizeof(*ids), u64_cmp);
	for (size_t i = 0, j; i < n; i = j) {
		for (j = i; j < n && ids[j] == ids[i]; j++)
			;
		ids[m++] = ids[i] << 32 | (j - i);
	}
	return m;
}

/* The most a content of @c pages shares (ksm_content()). */
static double most_sharing(uint64_t c, uint64_t mps)
{
	uint64_t shared, sharing;

	if (c < 2)
		return 0;
	ksm_content(c, mps, &shared, &sharing);
	return (double)sharing;
}

/* Snapshot @k's content ids, one a page (@n of them; free() them): a
 * delta's made from the ones before it. */
static uint64_t *snap_ids(const struct series *sr, size_t k, size_t *n)
{
	const struct snapshot *sn = series_snap(sr, k);
	uint64_t *ids;
	uint32_t *cur;

	*n = 0;
	if (!sr->delta) {
		ids = xcalloc(sn->n + 1, sizeof(*ids));
		for (size_t i = 0; i < sn->n; i++)
			ids[(*n)++] = sn->id[i];
		series_snap_done(sr, sn);
		return ids;
	}
	series_snap_done(sr, sn);
	cur = xcalloc(sr->naddr + 1, sizeof(*cur));
	for (size_t a = 0; a < sr->naddr; a++)
		cur[a] = NO_ID;
	for (size_t j = 0; j <= k; j++) {
		sn = series_snap(sr, j);
		for (size_t i = 0; i < sn->n; i++)
			cur[sn->addr_no[i]] = sn->id[i];
		series_snap_done(sr, sn);
	}
	ids = xcalloc(sr->naddr + 1, sizeof(*ids));
	for (size_t a = 0; a < sr->naddr; a++)
		if (cur[a] != NO_ID)
			ids[(*n)++] = cur[a];
	free(cur);
	return ids;
}

struct replay_static replay_static_sharing(const struct series *sr, size_t k,
					   const struct ksm_params *ksm)
{
	size_t n;
	uint64_t *ids = snap_ids(sr, k, &n);
	struct replay_static st = { 0, 0 };
	size_t m = runs_of(ids, n);

	for (size_t i = 0; i < m; i++) {
		uint32_t id = (uint32_t)(ids[i] >> 32);
		double a = most_sharing(ids[i] & UINT32_MAX, ksm->max_page_sharing);

		if (id == sr->zero_id) {
			if (!ksm->use_zero_pages)
				st.zero += a;
		} else if (SERIES_CLASS(sr, id) != SAMPLE_OUT) {
			st.sampled += a;
		}
	}
	free(ids);
	return st;
}

/* The sums of the ratio estimate: each sampled content's pages_sharing now
 * (x_c, from the stable tree) against the most its pages in the snapshot in
 * force would share (a_c). */
static void spread_ratio(const struct replay *r, struct replay_spread *out)
{
	const struct replay_trees *t = &r->tree;
	size_t n;
	uint64_t *ids = snap_ids(r->sr, r->clock.snap, &n);
	double *x = xcalloc(t->ccap + 1, sizeof(*x));
	uint64_t *xs = xcalloc(t->ccap + 1, sizeof(*xs));
	size_t m, nx = 0, j = 0;

	for (size_t k = 0; k < t->nd; k++)
		if (t->d[k].alive && t->d[k].len)
			x[t->d[k].chain] += t->d[k].len - 1;
	for (size_t n = 0; n < t->stable.len; n++)	/* (id, x_c), by id */
		if (x[n] > 0 && SERIES_CLASS(r->sr, t->c[n].id) == SAMPLE_IN)
			xs[nx++] = (uint64_t)t->c[n].id << 32 | (uint64_t)x[n];
	qsort(xs, nx, sizeof(*xs), u64_cmp);
	m = runs_of(ids, n);
	for (size_t i = 0; i < m || j < nx;) {
		uint64_t ia = i < m ? ids[i] >> 32 : UINT64_MAX;
		uint64_t ix = j < nx ? xs[j] >> 32 : UINT64_MAX;
		double a = 0, xc = 0;

		if (ia <= ix) {
			if (SERIES_CLASS(r->sr, (uint32_t)ia) == SAMPLE_IN)
				a = most_sharing(ids[i] & UINT32_MAX,
						 r->p->ksm.max_page_sharing);
			i++;
		}
		if (ix <= ia)
			xc = (double)(xs[j++] & UINT32_MAX);
		out->sx += xc;
		out->sa += a;
		out->xa += xc * a;
		out->aa += a * a;
	}
	free(ids);
	free(x);
	free(xs);
}

void replay_spread_count(const struct replay *r, struct replay_spread *out)
{
	const struct series *sr = r->sr;
	uint64_t *key = xcalloc(sr->naddr + 1, sizeof(*key));
	size_t n = 0;

	memset(out, 0, sizeof(*out));
	if (sr->sample <= 1) {
		free(key);
		return;
	}
	spread_stable(r, out);
	spread_ratio(r, out);
	/* the pages in the unstable tree, per content: sorted by content */
	for (size_t i = 0; i < sr->naddr; i++) {
		const struct rmap *s = &r->tree.s[i];

		if (s->id != NO_ID && SERIES_CLASS(sr, s->id) == SAMPLE_IN)
			key[n++] = (uint64_t)s->id << 1 | s->unstable;
	}
	qsort(key, n, sizeof(*key), u64_cmp);
	for (size_t i = 0, j; i < n; i = j) {
		double unstable = 0;

		for (j = i; j < n && key[j] >> 1 == key[i] >> 1; j++)
			unstable += (double)(key[j] & 1);
		out->unshared += unstable * unstable;
		out->contents++;
	}
	free(key);
}

void replay_sample_rows(const struct series *sr, const struct ksm_params *ksm,
			const uint64_t *full, struct timeline_row *rows, size_t n)
{
	double *f;

	if (sr->sample <= 1)
		return;
	f = xcalloc(sr->nsnaps, sizeof(*f));
	for (size_t k = 0; k < sr->nsnaps; k++)
		f[k] = -1;	/* not yet worked out */
	for (size_t i = 0; i < n; i++) {
		struct timeline_row *t = &rows[i];
		size_t k = t->snapshot;
		double heavy = (double)(t->pages_sharing - t->zero_sharing);
		uint64_t was = t->pages_sharing;

		if (f[k] < 0) {
			struct replay_static st = replay_static_sharing(sr, k, ksm);
			double all = (double)full[k] - st.zero;

			f[k] = st.sampled > 0 && all >= 0 ?
			       all / (st.sampled * sr->sample) : 1;
		}
		t->pages_sharing = t->zero_sharing + (uint64_t)llround(heavy * f[k]);
		t->general_profit += ((int64_t)t->pages_sharing - (int64_t)was) *
				     PAGE_BYTES;
	}
	free(f);
}

double replay_ratio_bound(uint32_t sample, const struct replay_spread *sp)
{
	double rr, e, v, d, dd, m;

	if (sample <= 1)
		return 0;
	if (!(sp->sa > 0))
		return replay_bound(sample, sp->sharing);
	rr = sp->sx / sp->sa;
	e = sp->sharing - 2 * rr * sp->xa + rr * rr * sp->aa;
	v = (double)sample * (sample - 1.0) * (e > 0 ? e : 0);
	/* the pages of the sampled contents not merged (a_c - x_c): a
	 * count, of a page at least per content, that a sample which drew
	 * few of them would take for none (replay_shared_bound()) */
	d = sp->sa - sp->sx;
	dd = sp->sharing - 2 * sp->xa + sp->aa;
	m = (sample - 1.0) * (d > 1 && dd > d ? dd / d : 1);
	return 2 * m + sqrt(4 * m * m + 4 * v);
}

double replay_bound(uint32_t sample, double squares)
{
	double n = sample;

	if (sample <= 1)
		return 0;
	return 2.0 * sqrt((n * n - n) * squares);
}

uint32_t replay_pace_weight(const struct series *sr, size_t k, uint64_t dropped)
{
	size_t n;
	uint64_t *ids = snap_ids(sr, k, &n), kept = 0;
	double w;

	for (size_t i = 0; i < n; i++)
		kept += SERIES_CLASS(sr, (uint32_t)ids[i]) == SAMPLE_IN;
	free(ids);
	if (!kept)
		return sr->sample * REPLAY_PACE_UNIT;
	w = (double)(kept + dropped) / (double)kept * REPLAY_PACE_UNIT;
	return w < UINT32_MAX ? (uint32_t)llround(w) : UINT32_MAX;
}

/* The largest less the smallest of a figure over the full scans that ran
 * in the last row's snapshot alone (the one before ended in it), and the
 * last: @shared 1 for pages_shared, 0 for the saving. */
static double swing_of(const struct timeline_row *rows, size_t n, int shared)
{
	size_t k = rows[n - 1].snapshot;
	double lo = INFINITY, hi = -INFINITY;

	/* the full scans that ran under it alone (the one before ended in
	 * it), and the last */
	for (size_t i = n; i-- > 0;) {
		double v;

		if (i + 1 < n && (i ? rows[i - 1].snapshot != k : k != 0))
			break;
		v = shared ? (double)rows[i].pages_shared :
			     (double)(rows[i].pages_sharing + rows[i].ksm_zero_pages);
		lo = v < lo ? v : lo;
		hi = v > hi ? v : hi;
	}
	return hi - lo;
}

double replay_swing(const struct timeline_row *rows, size_t n)
{
	return swing_of(rows, n, 0);
}

double replay_shared_bound(uint32_t sample, const struct replay_spread *sp,
			   const struct timeline_row *rows, size_t n)
{
	double v = (double)sample * (sample - 1.0) * sp->shared, m;

	if (sample <= 1)
		return 0;
	m = sp->shared_sum > 0 ? (sample - 1.0) * sp->shared / sp->shared_sum : 0;
	return 2 * m + sqrt(4 * m * m + 4 * v) + swing_of(rows, n, 1);
}
