/* SPDX-License-Identifier: MIT */
/*
 * ksmd over a series of snapshots, as Linux 6.18's mm/ksm.c runs it:
 * ksm_scan_thread() wakes every sleep_millisecs and ksm_do_scan() visits up to
 * pages_to_scan pages in address order, a batch ending early at the end of a
 * full scan; cmp_and_merge_page() per visit; should_skip_rmap_item() for
 * smart_scan; stable_tree_search/insert() with max_page_sharing chains;
 * unstable_tree_search_insert(), its tree emptied at each full scan. The
 * counters are the kernel's: ksm_pages_shared/sharing/unshared, ksm_rmap_items
 * (pages_volatile is what is left of them), ksm_pages_skipped, ksm_zero_pages.
 *
 * What the kernel learns from page faults, the replay learns from the
 * snapshots: an address whose content differs from the previous snapshot was
 * written, which breaks its KSM mapping (copy-on-write) or its zero-page
 * mapping. The trees are red-black trees ordered by memcmp of the contents
 * as they are at the time of the search, so a changed page misleads the
 * unstable tree as it misleads the kernel's. Simplifications, each with no
 * effect on memory that does not change: a freed KSM page leaves the stable
 * tree at once (the kernel notices at its next walk over it, within the
 * scan), nodes are never erased but marked dead (they still route searches),
 * and a chain's dup is chosen as chain_prune() does, the fullest that can
 * take one more page.
 *
 * This file is ksmd's core: the trees, what one visit does, a full scan
 * and the replay's run. Time, the pace and the policy are replay_clock.c's
 * (ksmd's wake-ups are replay_wake_period() apart, the memory at a
 * wake-up is the last snapshot taken by then, and write_rate's unseen
 * writes); the shortcut over full scans that repeat is replay_skip.c's;
 * the rows and what they come to, replay_figures.c's; what a write or a
 * new snapshot does to the trees, replay_memory.c's. The files call one
 * another downwards only: this one, then replay_skip.c, replay_figures.c,
 * replay_clock.c and replay_memory.c (tests/test_layers.py: no circle).
 */
#include <stdlib.h>
#include <string.h>

#include "../util/util.h"
#include "replay_impl.h"
#include "sample.h"

/* How many pages a page of KSM page @d's content stands for (a sample). */
static uint64_t dup_weight(const struct replay *r, const struct dup *d)
{
	return SERIES_WEIGHT(r->sr, SERIES_CLASS(r->sr, r->tree.c[d->chain].id));
}

/* remove_rmap_item_from_tree(): the address leaves whichever tree holds it. */
static void leave_trees(struct replay *r, struct rmap *s)
{
	if (s->dup != NO_ID) {
		struct dup *d = &r->tree.d[s->dup];

		/* the search's pick may change, unless another than the
		 * pick, that could take a page, takes one less */
		if (d->alive && (r->tree.c[d->chain].best == s->dup ||
				 d->len >= r->p->ksm.max_page_sharing))
			r->tree.c[d->chain].best = CHAIN_ASK;
		/* A freed KSM page took its rmap list's counts with it. */
		if (d->alive && --d->len)
			r->count.sharing -= dup_weight(r, d);
		else if (d->alive)
			r->count.shared -= dup_weight(r, d);
		s->dup = NO_ID;
	}
	if (s->unstable) {
		r->count.unshared -= SERIES_WEIGHT(r->sr, s->heavy);
		s->unstable = 0;
	}
}

/*
 * memcmp of contents @a and @b, whose first 8 bytes (series' heads) are @x
 * and @y: from those (no page read), else from their bytes. @counted: the
 * kernel compares them (not so to route past a dead node or a stale
 * chain), and the bytes it looks at are counted.
 */
static int content_cmp(struct replay *r, uint32_t a, uint64_t x, uint32_t b,
		       uint64_t y, int counted)
{
	const struct series *sr = r->sr;
	size_t common;
	int c;

	if (x != y) {
		if (counted)
			r->count.memcmp_bytes +=
				(uint64_t)__builtin_clzll(x ^ y) / 8 + 1;
		return x < y ? -1 : 1;
	}
	c = sr->compare(sr->ctx, a, b, &common);
	/* memcmp looks up to and including the first difference */
	if (counted)
		r->count.memcmp_bytes += common < PAGE_BYTES ? common + 1 :
				       PAGE_BYTES;
	return c;
}

/* Stable tree node @n. */
static struct stable_node *snode(const struct replay_trees *t, uint32_t n)
{
	return (struct stable_node *)(void *)rb_at(&t->stable, n);
}

/* Unstable tree node @n. */
static struct unstable_node *unode(const struct replay_trees *t, uint32_t n)
{
	return (struct unstable_node *)(void *)rb_at(&t->unstable, n);
}

int page_common(const unsigned char *a, const unsigned char *b, size_t *common)
{
	uint64_t looked = 0;
	int c = page_compare(a, b, 8, &looked);

	*common = c ? (size_t)looked - 1 : PAGE_BYTES;
	return c;
}

/*
 * Walk the stable tree for content @id: its node, or NO_ID with @parent and
 * @dir where it would go.
 */
static uint32_t stable_walk(struct replay *r, uint32_t id, uint32_t *parent,
			    int *dir)
{
	const struct chain *ch = r->tree.c;
	uint32_t cur = r->tree.stable.root;
	uint64_t x = r->sr->head[id];

	*parent = NO_ID;
	*dir = 0;
	while (cur != NO_ID) {
		const struct stable_node *n = snode(&r->tree, cur);
		uint32_t b = r->plain ? ch[cur].id : n->id;
		/* A chain with no KSM page left is stale: the kernel prunes it. */
		int c = content_cmp(r, id, x, b, r->plain ? r->sr->head[b] :
				    n->head, ch[cur].live != 0);

		if (c == 0)
			return cur;
		*parent = cur;
		*dir = c > 0;
		cur = n->l.child[c > 0];
	}
	return NO_ID;
}

/* stable_tree_search(): a KSM page of content @id that can take one more
 * mapping (the fullest such, as chain_prune() picks), or NO_ID. */
static uint32_t stable_search(struct replay *r, uint32_t id)
{
	const struct dup *dups = r->tree.d;
	uint32_t parent, best = NO_ID;
	int dir;
	uint32_t n = stable_walk(r, id, &parent, &dir);

	if (n == NO_ID)
		return NO_ID;
	if (r->tree.c[n].best != CHAIN_ASK && !r->plain)
		return r->tree.c[n].best;
	for (uint32_t k = r->tree.c[n].first; k != NO_ID; k = dups[k].next) {
		const struct dup *d = &dups[k];

		if (d->alive && d->len && d->len < r->p->ksm.max_page_sharing &&
		    (best == NO_ID || d->len > dups[best].len))
			best = k;
	}
	return r->tree.c[n].best = best;
}

/* stable_tree_insert(): a new KSM page of content @id, in a chain with the
 * content's other KSM pages if it has any. */
static uint32_t stable_insert(struct replay *r, uint32_t id)
{
	struct replay_trees *t = &r->tree;
	uint32_t parent, k = (uint32_t)t->nd;
	int dir;
	uint32_t n = stable_walk(r, id, &parent, &dir);

	if (n == NO_ID) {
		n = rb_insert(&t->stable, parent, dir);
		snode(t, n)->id = id;
		snode(t, n)->head = r->sr->head[id];
		if (t->ccap < t->stable.cap) {
			t->ccap = t->stable.cap;
			t->c = xreallocarray(t->c, t->ccap, sizeof(*t->c));
		}
		t->c[n] = (struct chain){ id, NO_ID, 0, CHAIN_ASK };
	}
	if (t->nd == t->dcap) {
		t->dcap = t->dcap ? 2 * t->dcap : 1024;
		t->d = xreallocarray(t->d, t->dcap, sizeof(*t->d));
	}
	t->d[t->nd++] = (struct dup){ n, t->c[n].first, 0, 0, 1 };
	t->c[n].first = k;
	t->c[n].live++;
	t->c[n].best = CHAIN_ASK;	/* (it may take pages: dup_append()) */
	return k;
}

/* One more event in the scan's log: a visit of a page checksummed, a
 * revisit of a KSM page, or a merge (after the visit that made it). */
static void log_add(struct replay_visits *v, uint32_t kind)
{
	if (!v->n || RUN_KIND(v->runs[v->n - 1]) != kind ||
	    RUN_LEN(v->runs[v->n - 1]) == UINT32_MAX >> RUN_SHIFT) {
		if (v->n == v->cap) {
			v->cap = v->cap ? 2 * v->cap : 64;
			v->runs = xreallocarray(v->runs, v->cap, sizeof(*v->runs));
		}
		v->runs[v->n++] = kind;
	}
	v->runs[v->n - 1] += 1u << RUN_SHIFT;
	if (kind != RUN_MERGES)
		v->visits++;
	v->revisits += kind == RUN_REVISITS;
}

/* stable_tree_append(): address @s now maps KSM page @k. */
static void dup_append(struct replay *r, struct rmap *s, uint32_t k)
{
	struct dup *d = &r->tree.d[k];
	uint64_t w = dup_weight(r, d);
	double cost = r->p->merge_seconds * (double)w;

	/* ksmd's time to merge the page, on top of its visit */
	if (r->log)
		log_add(r->log, RUN_MERGES);
	r->cpu.all += cost;
	r->cpu.scan += cost;
	r->cpu.batch += cost;
	if (d->len++)
		r->count.sharing += w;
	else
		r->count.shared += w;
	d->mapped++;
	/* the search's pick, fuller, stays the pick while it can take more */
	if (r->tree.c[d->chain].best != k ||
	    d->len >= r->p->ksm.max_page_sharing)
		r->tree.c[d->chain].best = CHAIN_ASK;
	s->dup = s->map = k;
}

/* What unstable node @u compares: its content now (NO_ID: a search
 * stops there) and in @head its first 8 bytes; read from the page with
 * KSMSCAN_SLOW_REPLAY, else from the node. */
static uint32_t unode_page(const struct replay *r,
			   const struct unstable_node *u, uint64_t *head)
{
	const struct rmap *s;
	uint32_t id;

	if (!r->plain) {
		*head = u->head;
		return u->id;
	}
	s = &r->tree.s[u->addr];
	id = s->id == NO_ID || s->zero ? NO_ID : s->id;
	*head = id != NO_ID ? r->sr->head[id] : 0;
	return id;
}

/*
 * unstable_tree_search_insert(): the address of an equal page in this scan's
 * unstable tree, or NO_ID after inserting address @i (or, as the kernel does when
 * a page on the way has gone, inserting nothing).
 */
static uint32_t unstable_search_insert(struct replay *r, uint32_t i)
{
	struct replay_trees *t = &r->tree;
	uint32_t cur = t->unstable.root, parent = NO_ID, id = t->s[i].id;
	uint64_t x = r->sr->head[id];
	struct unstable_node *u;
	int c = 0;

	while (cur != NO_ID) {
		uint64_t y;
		uint32_t b;

		u = unode(t, cur);
		if ((b = unode_page(r, u, &y)) == NO_ID)
			return NO_ID;	/* get_mergeable_page() found none */
		/* a dead node only routes: the kernel compares no page there */
		c = content_cmp(r, id, x, b, y, !u->l.mark);
		if (c == 0 && !u->l.mark)
			return u->addr;
		parent = cur;
		cur = u->l.child[c >= 0];
	}
	cur = rb_insert(&t->unstable, parent, c >= 0);
	u = unode(t, cur);
	u->addr = i;
	t->s[i].unstable = 1;
	t->s[i].unode = cur;
	r->count.unshared += SERIES_WEIGHT(r->sr, t->s[i].heavy);
	/* (a split may have just mapped the zero page there) */
	replay_unstable_seen(r, i);
	return NO_ID;
}

/* The huge page address @i is part of, while it is whole; else NO_ID. */
static uint32_t whole_thp(const struct replay *r, uint32_t i)
{
	uint32_t t = r->sr->thp ? r->sr->thp[i] : NO_ID;

	return t != NO_ID && r->tree.whole[t] ? t : NO_ID;
}

/*
 * split_folio() of huge page @t, address @i one of its subpages: each
 * subpage becomes a page of its own, and the split's remap_page() with
 * RMP_USE_SHARED_ZEROPAGE (Linux 6.12 on) maps every zero-filled one to
 * the shared zero page (try_to_map_unused_to_zeropage()), which frees it.
 * Its rmap_item stays where it was until ksmd next passes the address.
 */
static void thp_split(struct replay *r, uint32_t t, uint32_t i)
{
	const uint32_t *thp = r->sr->thp;
	uint32_t lo = i, hi = i;

	while (lo > 0 && thp[lo - 1] == t)
		lo--;
	while (hi + 1 < r->sr->naddr && thp[hi + 1] == t)
		hi++;
	r->tree.whole[t] = 0;
	r->count.thp_splits++;
	for (uint32_t j = lo; j <= hi; j++) {
		struct rmap *s = &r->tree.s[j];

		if (s->id != NO_ID && s->id == r->sr->zero_id && !s->zero &&
		    s->map == NO_ID) {
			s->zero = ZERO_SPLIT;
			r->count.thp_zero++;
			replay_unstable_seen(r, j);	/* a search stops there */
		}
	}
}

/*
 * try_to_merge_one_page() on address @i: a subpage of a huge page splits
 * it first (split_folio()). Return: 0 if the page is there to merge, -1
 * if the split mapped it to the zero page (write_protect_page() then
 * finds no page, and the merge fails).
 */
static int thp_unwhole(struct replay *r, uint32_t i)
{
	uint32_t t = whole_thp(r, i);

	if (t != NO_ID)
		thp_split(r, t, i);
	return r->tree.s[i].zero ? -1 : 0;
}

/*
 * try_to_merge_two_pages() of address @i with @j, found in the unstable
 * tree, then stable_tree_insert(). Two subpages of one huge page do not
 * merge: ksmd holds a reference to it for each, so split_folio() fails;
 * cmp_and_merge_page() then splits it alone, and they merge at a later
 * scan (@i was not inserted in the unstable tree).
 */
static void merge_two(struct replay *r, uint32_t i, uint32_t j)
{
	struct replay_trees *t = &r->tree;
	uint32_t h = whole_thp(r, i), k;

	if (h != NO_ID && h == whole_thp(r, j)) {
		thp_split(r, h, i);
		return;
	}
	if (thp_unwhole(r, i) < 0 || thp_unwhole(r, j) < 0)
		return;		/* break_cow() of @i if it was @j that failed */
	unode(t, t->s[j].unode)->l.mark = 1;	/* erased from the unstable tree */
	leave_trees(r, &t->s[j]);
	k = stable_insert(r, t->s[i].id);
	dup_append(r, &t->s[j], k);
	dup_append(r, &t->s[i], k);
}

/* cmp_and_merge_page() for the page at address @i. */
static void cmp_and_merge(struct replay *r, uint32_t i)
{
	struct rmap *s = &r->tree.s[i];
	uint32_t sum = r->sr->sum[s->id], k, j;

	if (s->map != NO_ID)
		return;		/* a KSM page already, in its rmap list */
	r->count.hashed += SERIES_WEIGHT(r->sr, s->heavy);	/* calc_checksum() */
	leave_trees(r, s);
	if (s->heavy == SAMPLE_OUT) {	/* a content outside the sample */
		s->oldsum = sum;
		return;
	}
	if (s->oldsum != sum) {
		s->oldsum = sum;	/* changed since the last visit */
		return;
	}
	if (r->p->ksm.use_zero_pages && sum == r->sr->zero_sum &&
	    s->id == r->sr->zero_id && thp_unwhole(r, i) == 0) {
		s->zero = ZERO_KSM;	/* try_to_merge_with_zero_page() */
		r->count.zero += SERIES_WEIGHT(r->sr, s->heavy);
		return;
	}
	/* (a page a split has just unmapped is still ksmd's to compare) */
	if ((k = stable_search(r, s->id)) != NO_ID) {
		if (thp_unwhole(r, i) == 0)
			dup_append(r, s, k);
		return;
	}
	if ((j = unstable_search_insert(r, i)) != NO_ID)
		merge_two(r, i, j);
}

/* skip_age(): how many scans to skip a page that has not merged @age times. */
static unsigned skip_age(unsigned age)
{
	return age <= 3 ? 1 : age <= 5 ? 2 : age <= 8 ? 4 : 8;
}

/* should_skip_rmap_item(): smart_scan passes over pages that do not merge. */
static int should_skip(struct replay *r, struct rmap *s)
{
	unsigned age = s->age;

	if (!r->p->ksm.smart_scan || s->map != NO_ID)
		return 0;
	if (s->age != UINT8_MAX)
		s->age++;
	if (age < 3)
		return 0;
	if (!s->skips) {
		s->skips = (uint8_t)skip_age(age);
		return 0;
	}
	r->count.skipped += SERIES_WEIGHT(r->sr, s->heavy);
	r->count.skipped_scan += SERIES_WEIGHT(r->sr, s->heavy);
	s->skips--;
	leave_trees(r, s);
	return 1;
}

/* A visit of a page that stands for @w pages takes @w of the batch's
 * budget; what it takes past the budget is owed by the next batches. */
static void take_budget(struct replay_clock *k, uint64_t w)
{
	if (w <= k->budget) {
		k->budget -= w;
		return;
	}
	k->owed += w - k->budget;
	k->budget = 0;
}

/* What a visit of @s takes of the batch's budget: a page, or in a sample
 * the pages it stands for in ksmd's pace (series.pace). */
static uint64_t pace_of(const struct replay *r, const struct rmap *s)
{
	const struct series *sr = r->sr;

	if (sr->sample <= 1)
		return 1;
	if (s->heavy == SAMPLE_OUT)
		return 0;	/* its time is in the sampled pages' */
	if (s->heavy == SAMPLE_FULL)
		return REPLAY_PACE_UNIT;
	return sr->pace ? sr->pace[r->clock.snap] :
	       (uint64_t)sr->sample * REPLAY_PACE_UNIT;
}

/* scan_get_next_rmap_item() at address @i, then the visit if it is one. */
static void step(struct replay *r, uint32_t i)
{
	struct rmap *s = &r->tree.s[i];
	uint64_t w = SERIES_WEIGHT(r->sr, s->heavy), compared, pace;
	double cost;

	if (s->id == NO_ID || s->zero) {
		/* No anonymous page here: get_next_rmap_item() frees the item. */
		if (s->rmap) {
			leave_trees(r, s);
			*s = (struct rmap){ .id = s->id, .dup = NO_ID, .map = s->map,
					    .zero = s->zero, .heavy = s->heavy,
					    .unode = s->unode };	/* (its node's) */
			r->count.rmap_items -= w;
		}
		return;
	}
	if (!s->rmap) {
		s->rmap = 1;	/* a zeroed rmap_item: oldchecksum 0, age 0 */
		s->oldsum = 0;
		s->age = s->skips = 0;
		r->count.rmap_items += w;
	}
	if (should_skip(r, s))
		return;
	pace = pace_of(r, s);
	take_budget(&r->clock, pace);
	r->count.visited += w;
	if (r->log)
		log_add(r->log, s->map != NO_ID ? RUN_REVISITS : RUN_VISITS);
	/* a KSM page already costs ksmd a look at its rmap_item, no checksum */
	cost = s->map != NO_ID ? r->p->revisit_seconds : r->p->page_seconds;
	if (r->sr->sample > 1)	/* the time of the pages it stands for */
		cost *= (double)pace / REPLAY_PACE_UNIT;
	r->cpu.all += cost;
	r->cpu.scan += cost;
	r->cpu.batch += cost;
	compared = r->count.memcmp_bytes;
	cmp_and_merge(r, i);
	/* its searches stand for the searches of the pages it stands for */
	r->count.memcmp_bytes = compared + (r->count.memcmp_bytes - compared) * w;
}

/* One full scan: every address once, in order, then the end of the scan. */
static struct timeline_row full_scan(struct replay *r, uint64_t scan)
{
	uint64_t first = r->clock.batch;
	double first_time = r->clock.now;
	struct timeline_row row;

	rb_clear(&r->tree.unstable);	/* root_unstable_tree = RB_ROOT */
	r->count.visited = r->count.hashed = r->count.memcmp_bytes = 0;
	r->cpu.scan = 0;
	for (size_t i = 0; i < r->sr->naddr && !r->pol.halt; i++) {
		/* (a sample's visit may owe more than a batch's budget) */
		while (!r->clock.budget && !r->pol.halt)
			replay_wake(r);
		if (!r->pol.halt)
			step(r, (uint32_t)i);
	}
	if (!r->clock.budget && !r->pol.halt)
		replay_wake(r);	/* the end is found by the next call */
	replay_policy_scan_end(r, first_time);
	row = replay_counters(r, scan, first, first_time);
	/* counted until the next scan ends */
	r->count.cow = r->count.skipped_scan = 0;
	return row;
}

struct replay *replay_open(const struct series *sr,
			   const struct replay_params *p)
{
	struct replay *r = xcalloc(1, sizeof(*r));

	r->sr = sr;
	r->p = p;
	r->plain = getenv("KSMSCAN_SLOW_REPLAY") != NULL;
	replay_policy_open(r);
	r->tree.s = xcalloc(sr->naddr ? sr->naddr : 1, sizeof(*r->tree.s));
	for (size_t i = 0; i < sr->naddr; i++)
		r->tree.s[i] = (struct rmap){ .id = NO_ID, .dup = NO_ID, .map = NO_ID };
	rb_init_nodes(&r->tree.stable, sizeof(struct stable_node));
	rb_init_nodes(&r->tree.unstable, sizeof(struct unstable_node));
	r->tree.whole = xcalloc(sr->nthp ? sr->nthp : 1, 1);
	memset(r->tree.whole, 1, sr->nthp);
	replay_snap_apply(r, 0);
	return r;
}

void replay_close(struct replay *r)
{
	if (!r)
		return;
	for (size_t k = 0; k < REPLAY_PERIOD_MAX; k++)
		free(r->skip.seen[k].runs);
	replay_mark_free(r->skip.mark);
	free(r->tree.s);
	free(r->tree.d);
	free(r->tree.c);
	free(r->tree.whole);
	rb_free(&r->tree.stable);
	rb_free(&r->tree.unstable);
	free(r);
}

struct timeline_row replay_scan_unpaced(struct replay *r, uint64_t scan,
					struct replay_visits *v, double *cpu)
{
	struct timeline_row row;

	v->n = 0;
	v->visits = v->revisits = 0;
	r->log = v;
	r->clock.budget = UINT64_MAX;	/* one batch: no wake-up, no time */
	row = full_scan(r, scan);
	r->log = NULL;
	*cpu = r->cpu.all;
	return row;
}

size_t replay_run(const struct series *sr, const struct replay_params *p,
		  struct timeline_row **rows, int *cut)
{
	return replay_run_owners(sr, p, rows, cut, 0, NULL, 0);
}

/* replay_run_owners(), and with @spread, its sums of squares at the end. */
static size_t run(const struct series *sr, const struct replay_params *p,
		  struct timeline_row **rows, int *cut, unsigned shift,
		  struct replay_owner *owners, size_t nowners,
		  struct replay_spread *spread)
{
	struct replay *r = replay_open(sr, p);
	size_t n = 0, cap = 16;

	*rows = xcalloc(cap, sizeof(**rows));
	/* the shortcut leaves the state a period behind: not for owners */
	/* and a tuner that looks at the host's memory may stop ksmd at any
	 * time: what it merges depends on the time */
	/* and a sample's visits are not one page each (a repeat would be
	 * timed as if they were) */
	r->skip.ahead = !replay_policy_looks(r) && !(p->write_rate > 0) &&
			!nowners && sr->sample <= 1 &&
			!getenv("KSMSCAN_SLOW_REPLAY");
	replay_policy_start(r);
	for (;;) {
		if (r->skip.period) {
			if (replay_skip_ahead(r, rows, &n, &cap))
				break;
			if (r->skip.period) {	/* a period added */
				replay_wake(r);	/* after its last batch */
				continue;
			}
		}
		if (n == cap)
			*rows = xreallocarray(*rows, cap *= 2, sizeof(**rows));
		if (r->skip.ahead) {
			r->log = &r->skip.seen[(n + 1) % REPLAY_PERIOD_MAX];
			r->log->n = r->log->visits = r->log->revisits = 0;
		}
		(*rows)[n] = full_scan(r, n + 1);
		n++;
		if (r->skip.ahead && !r->skip.period)
			replay_note_scan(r, n);
		replay_wake(r);	/* a batch ends with its full scan */
		if (replay_done(r, *rows, n))
			break;
	}
	if (nowners)
		replay_owners_count(r, shift, owners, nowners);
	if (spread)
		replay_spread_count(r, spread);
	*cut = r->cut;
	replay_close(r);
	return n;
}

size_t replay_run_owners(const struct series *sr, const struct replay_params *p,
			 struct timeline_row **rows, int *cut, unsigned shift,
			 struct replay_owner *owners, size_t nowners)
{
	return run(sr, p, rows, cut, shift, owners, nowners, NULL);
}

size_t replay_run_sampled(const struct series *sr, const struct replay_params *p,
			  struct timeline_row **rows, int *cut,
			  struct replay_spread *spread)
{
	return run(sr, p, rows, cut, 0, NULL, 0, spread);
}
