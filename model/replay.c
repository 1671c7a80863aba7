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
 * Time: ksmd's wake-ups are replay_wake_period() apart (the timer wheel's
 * jiffies and the batch's cost), and the memory at a wake-up is the last
 * snapshot taken by then (series.at). Writes that leave the bytes as they
 * were cannot be seen in snapshots; write_rate stands for them: that share
 * of the pages per second, picked at random (a fixed seed), is written with
 * its own bytes, which breaks a KSM mapping as any write does.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../util/util.h"
#include "ksm.h"
#include "rbtree.h"
#include "policy.h"
#include "replay.h"


/* What ksmd knows of one address (its rmap_item, its mapping). */
struct rmap {
	uint32_t id;		/* the content there now, or NO_ID (no page) */
	uint32_t oldsum;	/* rmap_item->oldchecksum */
	uint32_t dup;		/* the KSM page whose rmap list holds it, or NO_ID */
	uint32_t map;		/* the KSM page mapped here, or NO_ID */
	uint32_t unode;		/* its unstable tree node, if inserted this scan */
	uint8_t rmap;		/* it has an rmap_item */
	uint8_t unstable;	/* UNSTABLE_FLAG: counted in pages_unshared */
	uint8_t zero;		/* the zero page is mapped here by KSM */
	uint8_t age;		/* rmap_item->age (smart_scan) */
	uint8_t skips;		/* rmap_item->remaining_skips */
};

/* A KSM page (a stable node, or a dup of a chain). */
struct dup {
	uint32_t chain;		/* its content's node in the stable tree */
	uint32_t next;		/* the chain's next dup, or NO_ID */
	uint32_t len;		/* rmap_hlist_len */
	uint32_t mapped;	/* addresses mapping it; at 0 the page is freed */
	uint8_t alive;
};

/* A content in the stable tree: its KSM pages. */
struct chain {
	uint32_t id;		/* the content */
	uint32_t first;		/* its first dup, or NO_ID */
	uint32_t live;		/* its dups not freed */
};

/* The longest repeat of full scans looked for; and a mark is taken every
 * this many scans (at half of it): smart_scan's skips repeat every 9
 * scans at most once every page's age is past 8. */
#define REPLAY_PERIOD_MAX 16

struct replay {
	const struct series *sr;
	const struct replay_params *p;
	struct rmap *s;
	struct dup *d;
	size_t nd, dcap;
	struct chain *c;	/* at the stable tree's node indexes */
	size_t ccap;
	struct rb_tree stable, unstable;
	uint32_t *uaddr;	/* the unstable tree's nodes: the address they stand for */
	uint8_t *udead;		/* ... merged since (erased by the kernel) */
	size_t ucap;
	size_t snap;		/* the snapshot in force */
	uint64_t batch, budget;	/* ksmd's wake-ups so far, pages left in this one */
	uint64_t pts;		/* pages_to_scan now */
	uint64_t sleep_ms;	/* sleep_millisecs now */
	int run;		/* ksmd runs (ksmtuned may stop it) */
	int halt;		/* stopped past the series' end: the replay ends */
	double next_tick;	/* ksmtuned's next look */
	double stop_time;	/* when ksmtuned last stopped KSM */
	uint64_t stop_saving;	/* pages_sharing + ksm_zero_pages then */
	const struct policy_ops *ops;	/* who sets pages_to_scan and the sleep */
	struct policy_state ps;	/* its state */
	double cpu_all;		/* ksmd's CPU since the start */
	double cpu_scan;	/* ... in this full scan */
	double now;		/* the time of this wake-up */
	double batch_cost;	/* ksmd's CPU in this wake-up */
	double writes;		/* write_rate's writes due, not yet made */
	uint64_t rng;		/* their random state */
	/* the kernel's counters */
	uint64_t shared, sharing, unshared, rmap_items, skipped, zero;
	uint64_t visited, hashed, memcmp_bytes;	/* in the current scan */
	uint64_t cow, skipped_scan;		/* in the current scan */
	size_t settling;	/* scans after the series' time */
	int cut;		/* stopped at a limit */
	struct replay_visits *log;	/* the scan's visits, or NULL */
	/* the shortcut over scans that repeat (skip_ahead()) */
	int ahead;		/* it may be taken in this replay */
	struct replay_visits seen[REPLAY_PERIOD_MAX];	/* the last scans'
				 * visits, scan n at n % REPLAY_PERIOD_MAX */
	struct replay_mark *mark;	/* the replay after scan mark_at, or NULL */
	size_t mark_at;
	size_t period;		/* 0, or: the scans since the mark repeat */
};

/* remove_rmap_item_from_tree(): the address leaves whichever tree holds it. */
static void leave_trees(struct replay *r, struct rmap *s)
{
	if (s->dup != NO_ID) {
		struct dup *d = &r->d[s->dup];

		/* A freed KSM page took its rmap list's counts with it. */
		if (d->alive && --d->len)
			r->sharing--;
		else if (d->alive)
			r->shared--;
		s->dup = NO_ID;
	}
	if (s->unstable) {
		r->unshared--;
		s->unstable = 0;
	}
}

/* The last mapping of KSM page @k went: the page is freed, its node stale. */
static void dup_free(struct replay *r, uint32_t k)
{
	struct dup *d = &r->d[k];

	if (d->len) {
		r->shared--;
		r->sharing -= d->len - 1;
	}
	d->alive = 0;
	d->len = 0;
	r->c[d->chain].live--;
}

/* The address was written (or unmapped): copy-on-write of what KSM mapped. */
static void rmap_written(struct replay *r, struct rmap *s, uint32_t id)
{
	if (s->map != NO_ID) {
		r->cow += id != NO_ID;	/* a write, not an unmap */
		if (--r->d[s->map].mapped == 0)
			dup_free(r, s->map);
		s->map = NO_ID;
	}
	if (s->zero) {
		s->zero = 0;
		r->zero--;
	}
	s->id = id;
}

static void forget_mark(struct replay *r);

/* Make snapshot @k the memory's content: what differs from snapshot @k - 1
 * (for k = 0, from no memory) was written. */
static void snap_apply(struct replay *r, size_t k)
{
	static const struct snapshot none = { 0, NULL, NULL };
	const struct snapshot *a = k ? &r->sr->snaps[k - 1] : &none;
	const struct snapshot *b = &r->sr->snaps[k];
	size_t i = 0, j = 0;

	while (i < a->n || j < b->n) {
		if (j == b->n || (i < a->n && a->addr_no[i] < b->addr_no[j])) {
			rmap_written(r, &r->s[a->addr_no[i++]], NO_ID);	/* gone */
			continue;
		}
		if (i < a->n && a->addr_no[i] == b->addr_no[j])
			i++;
		if (r->s[b->addr_no[j]].id != b->id[j])
			rmap_written(r, &r->s[b->addr_no[j]], b->id[j]);
		j++;
	}
	r->snap = k;
	forget_mark(r);	/* what repeated before need not now */
}

/* Seconds from a wake-up at a tick to the timer's next, for a batch that
 * ended @ended whole jiffies after that tick. */
static uint64_t wheel_fires(uint64_t n, uint64_t ended)
{
	unsigned shift = 0;

	/* calc_wheel_index(): the level whose range holds the timeout */
	while (shift < 24 && n >= (UINT64_C(63) << shift))
		shift += 3;
	/* calc_index() fires the timer at the level's first bucket past its
	 * expiry; the wake-up came at one of them */
	return (((ended + n) >> shift) + 1) << shift;
}

/* replay_wake_period() with ksmd's sleep_millisecs @sleep_ms. */
static double period(const struct replay_params *p, uint64_t sleep_ms,
		     double cost)
{
	double jiffy, sum = 0;
	uint64_t n;

	if (!p->hz)
		return (double)sleep_ms / 1000.0;
	jiffy = 1.0 / p->hz;
	n = (sleep_ms * p->hz + 999) / 1000;	/* msecs_to_jiffies() */
	if (!p->nlate)
		return (double)wheel_fires(n, (uint64_t)(cost / jiffy)) * jiffy;
	for (size_t i = 0; i < p->nlate; i++)
		sum += (double)wheel_fires(n, (uint64_t)((p->late[i] + cost) / jiffy));
	return sum / (double)p->nlate * jiffy;
}

double replay_wake_period(const struct replay_params *p, double cost)
{
	return period(p, p->ksm.sleep_ms, cost);
}

int replay_wake_period_near(const struct replay_params *p, uint64_t sleep_ms,
			    double cost, double err, double *out)
{
	double jiffy;

	if (p->hz) {
		jiffy = 1.0 / p->hz;
		for (size_t i = 0; i < (p->nlate ? p->nlate : 1); i++) {
			double late = p->nlate ? p->late[i] : 0;
			/* and the rounding of late + cost */
			double e = err + (late + cost) * 4e-16;

			if (floor((late + cost - e) / jiffy) !=
			    floor((late + cost + e) / jiffy))
				return 0;
		}
	}
	/* every whole jiffy the same across the range: as at the cost itself */
	*out = period(p, sleep_ms, cost);
	return 1;
}

/* The time snapshot @k was taken. */
static double snap_time(const struct replay *r, size_t k)
{
	return r->sr->at ? r->sr->at[k] : (double)k * r->p->interval;
}

/* write_rate: the writes due in @dt seconds, each to a random address with
 * the bytes it holds (xorshift64: the same replay every run). */
static void unseen_writes(struct replay *r, double dt)
{
	r->writes += r->p->write_rate * dt * (double)r->sr->naddr;
	for (; r->writes >= 1.0; r->writes -= 1.0) {
		struct rmap *s;

		r->rng ^= r->rng << 13;
		r->rng ^= r->rng >> 7;
		r->rng ^= r->rng << 17;
		s = &r->s[r->rng % r->sr->naddr];
		if (s->id != NO_ID)
			rmap_written(r, s, s->id);
	}
}

/* Bring the memory to the time r->now: the snapshots taken by then. */
static void advance(struct replay *r)
{
	while (r->snap + 1 < r->sr->nsnaps &&
	       snap_time(r, r->snap + 1) <= r->now + 1e-9)
		snap_apply(r, r->snap + 1);
}

/* One look of the tuner (ksmtuned's adjust(), KubeVirt's handler...), on
 * the free memory KSM's savings give back. */
static void look(struct replay *r)
{
	const struct policy_host *h = &r->p->host;
	uint64_t saved_kb = (r->sharing + r->zero) * (PAGE_BYTES / 1024);
	uint64_t committed = r->sr->snaps[r->snap].n * (PAGE_BYTES / 1024);
	int was = r->run;

	r->run = r->ops->look(&r->ps, r->p, h->total_kb - h->used_kb + saved_kb,
			      committed, r->run, &r->pts, &r->sleep_ms);
	if (was && !r->run) {
		r->stop_time = r->now;
		r->stop_saving = r->sharing + r->zero;
	}
}

/* The tuner's looks due by now (ksmtuned's or KubeVirt's); while it keeps
 * KSM stopped, time goes on to its next look, and past the series' end the
 * replay ends. */
static void tuner(struct replay *r)
{
	double end = snap_time(r, r->sr->nsnaps - 1) + r->p->interval, every;

	if (!r->ops->look)
		return;		/* a policy that never looks */
	every = r->ops->look_every(r->p);	/* at least a second */
	for (;;) {
		while (r->now + 1e-9 >= r->next_tick) {
			look(r);
			r->next_tick += every;
		}
		if (r->run)
			return;
		if (r->next_tick > end + every) {
			r->halt = 1;	/* it never starts KSM again */
			return;
		}
		r->now = r->next_tick;	/* run=1 wakes ksmd at once */
		advance(r);
	}
}

/* ksmd sleeps, and wakes with a new batch; the memory is as it is then. */
static void wake(struct replay *r)
{
	double dt = period(r->p, r->sleep_ms, r->batch_cost);

	r->batch++;
	r->batch_cost = 0;
	r->now += dt;
	advance(r);
	if (r->p->write_rate > 0)
		unseen_writes(r, dt);
	tuner(r);
	r->budget = r->pts;	/* ksm_do_scan(ksm_thread_pages_to_scan) */
}

/* Where a scan's batches have got to in its visits. */
struct cursor {
	const uint32_t *runs;
	size_t nruns, k;		/* the run it is in */
	uint64_t used;			/* visits of that run taken */
};

/* A run of the visit log: its length and kind. */
#define RUN_LEN(x) ((x) >> RUN_SHIFT)
#define RUN_KIND(x) ((x) & ((1u << RUN_SHIFT) - 1))

/* The next @m visits: how many are revisits, and the merges they made (a
 * merge is logged after its visit, so the merges right after the m-th
 * visit are the batch's too); the cursor moves past them. */
static uint64_t take(struct cursor *c, uint64_t m, uint64_t *revisits,
		     uint64_t *merges)
{
	uint64_t got = 0;

	*revisits = *merges = 0;
	while (c->k < c->nruns) {
		uint32_t len = RUN_LEN(c->runs[c->k]), kind = RUN_KIND(c->runs[c->k]);
		uint64_t t;

		if (kind == RUN_MERGES) {
			*merges += len;
			c->k++;
			continue;
		}
		if (got == m)
			break;
		t = len - c->used < m - got ? len - c->used : m - got;
		got += t;
		*revisits += kind == RUN_REVISITS ? t : 0;
		c->used += t;
		if (c->used == len) {
			c->k++;
			c->used = 0;
		}
	}
	return got;
}

/* @cost plus the next @m visits' costs and their merges', as step() and
 * dup_append() sum them: one by one, in order. */
static double add_costs(const struct replay_params *p, struct cursor c,
			uint64_t m, double cost)
{
	while (c.k < c.nruns) {
		uint32_t len = RUN_LEN(c.runs[c.k]), kind = RUN_KIND(c.runs[c.k]);
		uint64_t t = len - c.used;
		double each = kind == RUN_MERGES ? p->merge_seconds :
			      kind == RUN_REVISITS ? p->revisit_seconds :
			      p->page_seconds;

		if (kind != RUN_MERGES) {
			if (!m)
				break;
			t = t < m ? t : m;
			m -= t;
		}
		for (uint64_t i = 0; i < t; i++)
			cost += each;
		c.k++;
		c.used = 0;
	}
	return cost;
}

/* The sleep after a batch of the next @m visits (0: an empty batch); with
 * @exact, the batch's cost too, as step() sums it. */
static double batch_period(const struct replay_params *p, struct cursor *c,
			   uint64_t m, double *exact)
{
	struct cursor at = *c;
	uint64_t rv, mg, n = take(c, m, &rv, &mg);
	double cost = (double)(n - rv) * p->page_seconds +
		      (double)rv * p->revisit_seconds +
		      (double)mg * p->merge_seconds;
	/* a sum of n terms in order is within n roundings of the exact one */
	double err = cost * (double)(n + mg + 2) * 2.3e-16, dt;

	if (exact) {
		*exact = cost = add_costs(p, at, m, 0);
		err = 0;
	}
	if (!replay_wake_period_near(p, p->ksm.sleep_ms, cost, err, &dt))
		replay_wake_period_near(p, p->ksm.sleep_ms,
					add_costs(p, at, m, 0), 0, &dt);
	return dt;
}

int replay_time_scan(const struct replay_params *p,
		     const struct replay_visits *v, struct scan_time *t)
{
	const struct policy_ops *ops = p->policy;
	struct cursor c = { v->runs, v->n, 0, 0 };
	uint64_t pts = t->pages_to_scan;
	double first = t->now, cpu;

	t->wakeups = v->visits / pts;
	for (uint64_t b = 0; b < t->wakeups; b++) {
		t->now += batch_period(p, &c, pts, NULL);
		if (t->limit <= t->now + 1e-9)
			return 0;	/* the memory changes at this wake-up */
	}
	t->rest = batch_period(p, &c, v->visits % pts, &t->rest_cost);
	if (ops->scan_end)	/* advisor_stop_scan() */
		t->pages_to_scan = ops->scan_end(&t->ps, p, t->now - first,
						 p->ksmd_cpu_seconds + t->cpu, pts);
	t->row.seconds = t->now;
	t->row.wakeups = t->wakeups + 1;
	t->row.pages_to_scan = t->pages_to_scan;
	t->row.sleep_ms = p->ksm.sleep_ms;
	cpu = ((double)t->row.hashed * p->ns_per_page +
	       (double)t->row.memcmp_bytes * p->ns_per_byte) * 1e-9;
	/* from the scan's first wake-up to the end of its last batch's sleep */
	first = t->now - first + t->rest;
	t->row.cpu_percent = first > 0 ? 100.0 * cpu / first : 0.0;
	return 1;
}

/* ksmd's CPU after the visits @v, from @cpu before them, summed as step()
 * sums it: visit by visit. */
double replay_cpu_after(const struct replay_params *p,
			const struct replay_visits *v, double cpu)
{
	struct cursor c = { v->runs, v->n, 0, 0 };

	return add_costs(p, c, v->visits, cpu);
}

/*
 * memcmp of two contents, counted: their first 8 bytes from the series'
 * heads (no page read), the rest from their bytes.
 */
static int content_cmp(struct replay *r, uint32_t a, uint32_t b)
{
	const struct series *sr = r->sr;
	uint64_t x = sr->head[a], y = sr->head[b];

	if (x != y) {
		r->memcmp_bytes += (uint64_t)__builtin_clzll(x ^ y) / 8 + 1;
		return x < y ? -1 : 1;
	}
	return page_compare(sr->bytes(sr->ctx, a), sr->bytes(sr->ctx, b), 8,
			    &r->memcmp_bytes);
}

/* memcmp of two contents to route past a dead node: the kernel would not
 * have compared, so it is not counted. */
static int route_cmp(struct replay *r, uint32_t a, uint32_t b)
{
	uint64_t counted = r->memcmp_bytes;
	int c = content_cmp(r, a, b);

	r->memcmp_bytes = counted;
	return c;
}

/*
 * Walk the stable tree for content @id: its node, or NO_ID with @parent and
 * @dir where it would go.
 */
static uint32_t stable_walk(struct replay *r, uint32_t id, uint32_t *parent,
			    int *dir)
{
	uint32_t cur = r->stable.root;

	*parent = NO_ID;
	*dir = 0;
	while (cur != NO_ID) {
		/* A chain with no KSM page left is stale: the kernel prunes it. */
		int c = r->c[cur].live ? content_cmp(r, id, r->c[cur].id) :
			route_cmp(r, id, r->c[cur].id);

		if (c == 0)
			return cur;
		*parent = cur;
		*dir = c > 0;
		cur = r->stable.l[cur].child[c > 0];
	}
	return NO_ID;
}

/* stable_tree_search(): a KSM page of content @id that can take one more
 * mapping (the fullest such, as chain_prune() picks), or NO_ID. */
static uint32_t stable_search(struct replay *r, uint32_t id)
{
	uint32_t parent, best = NO_ID;
	int dir;
	uint32_t n = stable_walk(r, id, &parent, &dir);

	if (n == NO_ID)
		return NO_ID;
	for (uint32_t k = r->c[n].first; k != NO_ID; k = r->d[k].next) {
		const struct dup *d = &r->d[k];

		if (d->alive && d->len && d->len < r->p->ksm.max_page_sharing &&
		    (best == NO_ID || d->len > r->d[best].len))
			best = k;
	}
	return best;
}

/* stable_tree_insert(): a new KSM page of content @id, in a chain with the
 * content's other KSM pages if it has any. */
static uint32_t stable_insert(struct replay *r, uint32_t id)
{
	uint32_t parent, k = (uint32_t)r->nd;
	int dir;
	uint32_t n = stable_walk(r, id, &parent, &dir);

	if (n == NO_ID) {
		n = rb_insert(&r->stable, parent, dir);
		if (r->ccap < r->stable.cap) {
			r->ccap = r->stable.cap;
			r->c = xreallocarray(r->c, r->ccap, sizeof(*r->c));
		}
		r->c[n] = (struct chain){ id, NO_ID, 0 };
	}
	if (r->nd == r->dcap) {
		r->dcap = r->dcap ? 2 * r->dcap : 1024;
		r->d = xreallocarray(r->d, r->dcap, sizeof(*r->d));
	}
	r->d[r->nd++] = (struct dup){ n, r->c[n].first, 0, 0, 1 };
	r->c[n].first = k;
	r->c[n].live++;
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
	struct dup *d = &r->d[k];

	/* ksmd's time to merge the page, on top of its visit */
	if (r->log)
		log_add(r->log, RUN_MERGES);
	r->cpu_all += r->p->merge_seconds;
	r->cpu_scan += r->p->merge_seconds;
	r->batch_cost += r->p->merge_seconds;
	if (d->len++)
		r->sharing++;
	else
		r->shared++;
	d->mapped++;
	s->dup = s->map = k;
}

/*
 * unstable_tree_search_insert(): the address of an equal page in this scan's
 * unstable tree, or NO_ID after inserting address @i (or, as the kernel does when
 * a page on the way has gone, inserting nothing).
 */
static uint32_t unstable_search_insert(struct replay *r, uint32_t i)
{
	uint32_t cur = r->unstable.root, parent = NO_ID, id = r->s[i].id;
	int c = 0;

	while (cur != NO_ID) {
		const struct rmap *t = &r->s[r->uaddr[cur]];

		if (t->id == NO_ID || t->zero)
			return NO_ID;	/* get_mergeable_page() found none */
		c = r->udead[cur] ? route_cmp(r, id, t->id) :
		    content_cmp(r, id, t->id);
		if (c == 0 && !r->udead[cur])
			return r->uaddr[cur];
		parent = cur;
		cur = r->unstable.l[cur].child[c >= 0];
	}
	cur = rb_insert(&r->unstable, parent, c >= 0);
	if (r->ucap < r->unstable.cap) {
		r->ucap = r->unstable.cap;
		r->uaddr = xreallocarray(r->uaddr, r->ucap, sizeof(*r->uaddr));
		r->udead = xreallocarray(r->udead, r->ucap, sizeof(*r->udead));
	}
	r->uaddr[cur] = i;
	r->udead[cur] = 0;
	r->s[i].unstable = 1;
	r->s[i].unode = cur;
	r->unshared++;
	return NO_ID;
}

/* cmp_and_merge_page() for the page at address @i. */
static void cmp_and_merge(struct replay *r, uint32_t i)
{
	struct rmap *s = &r->s[i];
	uint32_t sum = r->sr->sum[s->id], k, j;

	if (s->map != NO_ID)
		return;		/* a KSM page already, in its rmap list */
	r->hashed++;		/* calc_checksum() */
	leave_trees(r, s);
	if (s->oldsum != sum) {
		s->oldsum = sum;	/* changed since the last visit */
		return;
	}
	if (r->p->ksm.use_zero_pages && sum == r->sr->zero_sum &&
	    s->id == r->sr->zero_id) {
		s->zero = 1;	/* try_to_merge_with_zero_page() */
		r->zero++;
		return;
	}
	if ((k = stable_search(r, s->id)) != NO_ID) {
		dup_append(r, s, k);
		return;
	}
	if ((j = unstable_search_insert(r, i)) == NO_ID)
		return;
	/* try_to_merge_two_pages(), then stable_tree_insert() */
	r->udead[r->s[j].unode] = 1;	/* erased from the unstable tree */
	leave_trees(r, &r->s[j]);
	k = stable_insert(r, s->id);
	dup_append(r, &r->s[j], k);
	dup_append(r, s, k);
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
	r->skipped++;
	r->skipped_scan++;
	s->skips--;
	leave_trees(r, s);
	return 1;
}

/* scan_get_next_rmap_item() at address @i, then the visit if it is one. */
static void step(struct replay *r, uint32_t i)
{
	struct rmap *s = &r->s[i];
	double cost;

	if (s->id == NO_ID || s->zero) {
		/* No anonymous page here: get_next_rmap_item() frees the item. */
		if (s->rmap) {
			leave_trees(r, s);
			*s = (struct rmap){ .id = s->id, .dup = NO_ID, .map = s->map,
					    .zero = s->zero };
			r->rmap_items--;
		}
		return;
	}
	if (!s->rmap) {
		s->rmap = 1;	/* a zeroed rmap_item: oldchecksum 0, age 0 */
		s->oldsum = 0;
		s->age = s->skips = 0;
		r->rmap_items++;
	}
	if (should_skip(r, s))
		return;
	r->budget--;
	r->visited++;
	if (r->log)
		log_add(r->log, s->map != NO_ID ? RUN_REVISITS : RUN_VISITS);
	/* a KSM page already costs ksmd a look at its rmap_item, no checksum */
	cost = s->map != NO_ID ? r->p->revisit_seconds : r->p->page_seconds;
	r->cpu_all += cost;
	r->cpu_scan += cost;
	r->batch_cost += cost;
	cmp_and_merge(r, i);
}

/* Of pages_sharing, the further mappings of zero-filled KSM pages. */
static uint64_t zero_sharing(const struct replay *r)
{
	uint64_t n = 0;

	for (size_t k = 0; k < r->nd; k++)
		if (r->d[k].alive && r->d[k].len &&
		    r->c[r->d[k].chain].id == r->sr->zero_id)
			n += r->d[k].len - 1;
	return n;
}

/* The counters as /sys/kernel/mm/ksm shows them now. */
static struct timeline_row counters(const struct replay *r, uint64_t scan,
				    uint64_t first_batch, double first_time)
{
	uint64_t merged = r->shared + r->sharing + r->unshared;
	struct timeline_row row = {
		.scan = scan, .snapshot = r->snap,
		.seconds = r->now,
		.pages_shared = r->shared, .pages_sharing = r->sharing,
		.pages_unshared = r->unshared,
		.pages_volatile = r->rmap_items > merged ? r->rmap_items - merged : 0,
		.pages_skipped = r->skipped, .ksm_zero_pages = r->zero,
		.general_profit = ksm_general_profit(r->sharing + r->zero,
						     r->rmap_items),
		.zero_sharing = zero_sharing(r),
		.visited = r->visited, .hashed = r->hashed,
		.memcmp_bytes = r->memcmp_bytes,
		.wakeups = r->batch - first_batch + 1,
		.cow_ksm = r->cow, .skipped_scan = r->skipped_scan,
		.pages_to_scan = r->pts, .sleep_ms = r->sleep_ms,
		.cpu_seconds = r->cpu_scan, .ended = r->halt, .stopped_seconds = r->stop_time,
		.stopped_saving = r->stop_saving,
	};
	double cpu = ((double)row.hashed * r->p->ns_per_page +
		      (double)row.memcmp_bytes * r->p->ns_per_byte) * 1e-9;
	/* from the scan's first wake-up to the end of its last batch's sleep */
	double wall = r->now - first_time +
		      period(r->p, r->sleep_ms, r->batch_cost);

	row.cpu_percent = wall > 0 ? 100.0 * cpu / wall : 0.0;
	return row;
}

/* One full scan: every address once, in order, then the end of the scan. */
static struct timeline_row full_scan(struct replay *r, uint64_t scan)
{
	uint64_t first = r->batch;
	double first_time = r->now;
	struct timeline_row row;

	rb_clear(&r->unstable);	/* root_unstable_tree = RB_ROOT */
	r->visited = r->hashed = r->memcmp_bytes = 0;
	r->cpu_scan = 0;
	for (size_t i = 0; i < r->sr->naddr && !r->halt; i++) {
		if (!r->budget)
			wake(r);
		if (!r->halt)
			step(r, (uint32_t)i);
	}
	if (!r->budget && !r->halt)
		wake(r);	/* the end is found by the next call */
	if (r->ops->scan_end)	/* advisor_stop_scan() */
		r->pts = r->ops->scan_end(&r->ps, r->p, r->now - first_time,
					  r->p->ksmd_cpu_seconds + r->cpu_all,
					  r->pts);
	row = counters(r, scan, first, first_time);
	r->cow = r->skipped_scan = 0;	/* counted until the next scan ends */
	return row;
}

/* Whether two scans ended with the same counters (apart from skips, which
 * only move pages between unshared and volatile). */
static int same(const struct timeline_row *a, const struct timeline_row *b)
{
	return a->pages_shared == b->pages_shared &&
	       a->pages_sharing == b->pages_sharing &&
	       a->ksm_zero_pages == b->ksm_zero_pages &&
	       a->pages_unshared + a->pages_volatile ==
	       b->pages_unshared + b->pages_volatile;
}

int replay_over(const struct series *sr, const struct replay_params *p,
		const struct timeline_row *rows, size_t n, size_t *settling,
		int *cut)
{
	double end = (sr->at ? sr->at[sr->nsnaps - 1] :
		      (double)(sr->nsnaps - 1) * p->interval) + p->interval;

	if (p->scans)
		return n >= p->scans;
	if (p->until > 0 && rows[n - 1].seconds >= p->until)
		return 1;
	if (p->until_saving && rows[n - 1].pages_sharing +
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

/* Whether the replay is over after @n scans (the last one in @rows). */
static int done(struct replay *r, const struct timeline_row *rows, size_t n)
{
	if (r->halt)	/* one last row, at the time the replay ends */
		return rows[n - 1].ended;
	return replay_over(r->sr, r->p, rows, n, &r->settling, &r->cut);
}

/* Each owner's pages now: the rmap_item counters of its mm. */
static void owners_count(const struct replay *r, unsigned shift,
			 struct replay_owner *owners, size_t nowners)
{
	memset(owners, 0, nowners * sizeof(*owners));
	for (size_t i = 0; i < r->sr->naddr; i++) {
		uint64_t o = r->sr->addr[i] >> shift;
		const struct rmap *s = &r->s[i];

		if (o >= nowners)
			continue;
		owners[o].rmap_items += s->rmap;
		/* STABLE_FLAG: in a KSM page's rmap list until ksmd next
		 * visits the address, even once a write broke the mapping */
		owners[o].merging += s->rmap && s->dup != NO_ID;
		owners[o].zero += s->zero;
	}
}

size_t replay_run(const struct series *sr, const struct replay_params *p,
		  struct timeline_row **rows, int *cut)
{
	return replay_run_owners(sr, p, rows, cut, 0, NULL, 0);
}

struct replay *replay_open(const struct series *sr,
			   const struct replay_params *p)
{
	const struct policy_ops *ops = p->policy;
	uint64_t pts = ops->start_pages(p);
	struct replay *r = xcalloc(1, sizeof(*r));

	*r = (struct replay){ .sr = sr, .p = p, .ops = ops, .budget = pts, .pts = pts,
			      .sleep_ms = p->ksm.sleep_ms, .run = 1,
			      .rng = UINT64_C(0x9e3779b97f4a7c15) };
	r->s = xcalloc(sr->naddr ? sr->naddr : 1, sizeof(*r->s));
	for (size_t i = 0; i < sr->naddr; i++)
		r->s[i] = (struct rmap){ .id = NO_ID, .dup = NO_ID, .map = NO_ID };
	rb_init(&r->stable);
	rb_init(&r->unstable);
	snap_apply(r, 0);
	return r;
}

void replay_close(struct replay *r)
{
	if (!r)
		return;
	for (size_t k = 0; k < REPLAY_PERIOD_MAX; k++)
		free(r->seen[k].runs);
	replay_mark_free(r->mark);
	free(r->s);
	free(r->d);
	free(r->c);
	free(r->uaddr);
	free(r->udead);
	rb_free(&r->stable);
	rb_free(&r->unstable);
	free(r);
}

/* What a scan's end leaves for the next scans (replay_mark). */
struct replay_mark {
	struct rmap *s;
	struct dup *d;
	size_t nd, nstable;
	uint64_t shared, sharing, unshared, rmap_items, zero;
};

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
	struct replay_mark *m = xcalloc(1, sizeof(*m));
	size_t n = r->sr->naddr;

	m->s = xcalloc(n ? n : 1, sizeof(*m->s));
	memcpy(m->s, r->s, n * sizeof(*m->s));
	m->d = xcalloc(r->nd ? r->nd : 1, sizeof(*m->d));
	if (r->nd)	/* no KSM page yet: r->d is NULL */
		memcpy(m->d, r->d, r->nd * sizeof(*m->d));
	m->nd = r->nd;
	m->nstable = r->stable.len;
	m->shared = r->shared;
	m->sharing = r->sharing;
	m->unshared = r->unshared;
	m->rmap_items = r->rmap_items;
	m->zero = r->zero;
	return m;
}

int replay_at_mark(const struct replay *r, const struct replay_mark *m)
{
	if (m->nd != r->nd || m->nstable != r->stable.len ||
	    m->shared != r->shared || m->sharing != r->sharing ||
	    m->unshared != r->unshared || m->rmap_items != r->rmap_items ||
	    m->zero != r->zero)
		return 0;
	for (size_t k = 0; k < r->nd; k++)
		if (!dup_same(&m->d[k], &r->d[k]))
			return 0;
	for (size_t i = 0; i < r->sr->naddr; i++)
		if (!rmap_same(&m->s[i], &r->s[i]))
			return 0;
	return 1;
}

void replay_mark_free(struct replay_mark *m)
{
	if (!m)
		return;
	free(m->s);
	free(m->d);
	free(m);
}

static void forget_mark(struct replay *r)
{
	replay_mark_free(r->mark);
	r->mark = NULL;
	r->period = 0;
}

/* Scan @n ended: the replay back where it was at the mark (the scans
 * since then repeat: their visits kept in order at r->seen[0 ..]), or a
 * new mark now and then. */
static void note_scan(struct replay *r, size_t n)
{
	if (r->mark && replay_at_mark(r, r->mark)) {
		struct replay_visits keep[REPLAY_PERIOD_MAX];

		r->period = n - r->mark_at;
		for (size_t k = 0; k < REPLAY_PERIOD_MAX; k++)
			keep[k] = r->seen[(n - r->period + 1 + k) % REPLAY_PERIOD_MAX];
		memcpy(r->seen, keep, sizeof(keep));
		return;
	}
	if (n % REPLAY_PERIOD_MAX == REPLAY_PERIOD_MAX / 2) {
		replay_mark_free(r->mark);
		r->mark = replay_mark(r);
		r->mark_at = n;
	}
}

/* Undo a period's rows that cannot be: the memory changes within them. */
static int give_up(struct replay *r, size_t *n, size_t n0, size_t settling,
		   int cut)
{
	*n = n0;
	r->settling = settling;
	r->cut = cut;
	forget_mark(r);
	return 0;
}

/*
 * The shortcut: on memory that does not change, a replay back where it
 * was r->period scans before repeats those scans, but for their times;
 * so each period's rows are the last period's, timed from their visits
 * (replay_time_scan()), until the replay ends or the next snapshot is
 * due within a period (then that one is replayed). The replay's state
 * stays as it was (the same, but for the running counts, set here).
 * Returns 1 if the replay ended within the rows added.
 */
static int skip_ahead(struct replay *r, struct timeline_row **rows, size_t *n,
		      size_t *cap)
{
	size_t P = r->period, n0 = *n, settling = r->settling;
	int cut = r->cut, reads_cpu = r->ops->scan_end != NULL;
	uint64_t skips = (*rows)[n0 - 1].pages_skipped -
			 (*rows)[n0 - 1 - P].pages_skipped, wakes = 0;
	struct scan_time t = {
		.now = r->now, .pages_to_scan = r->pts, .ps = r->ps,
		.cpu = r->cpu_all,
		.limit = r->snap + 1 < r->sr->nsnaps ? snap_time(r, r->snap + 1) :
			 INFINITY,
	};

	for (size_t k = 0; k < P; k++) {
		const struct replay_visits *v = &r->seen[k];

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
		if (done(r, *rows, *n))
			return 1;
		if (k + 1 < P) {	/* the sleep after the scan's last batch */
			t.now += t.rest;
			wakes++;
			if (t.limit <= t.now + 1e-9)
				return give_up(r, n, n0, settling, cut);
		}
	}
	r->now = t.now;
	r->batch += wakes;
	r->batch_cost = t.rest_cost;	/* for the sleep after it: wake() */
	r->pts = t.pages_to_scan;
	r->ps = t.ps;
	r->cpu_all = t.cpu;
	r->skipped = (*rows)[*n - 1].pages_skipped;
	return 0;
}

struct timeline_row replay_scan_unpaced(struct replay *r, uint64_t scan,
					struct replay_visits *v, double *cpu)
{
	struct timeline_row row;

	v->n = 0;
	v->visits = v->revisits = 0;
	r->log = v;
	r->budget = UINT64_MAX;	/* one batch: no wake-up, no time */
	row = full_scan(r, scan);
	r->log = NULL;
	*cpu = r->cpu_all;
	return row;
}

size_t replay_run_owners(const struct series *sr, const struct replay_params *p,
			 struct timeline_row **rows, int *cut, unsigned shift,
			 struct replay_owner *owners, size_t nowners)
{
	struct replay *r = replay_open(sr, p);
	size_t n = 0, cap = 16;

	*rows = xcalloc(cap, sizeof(**rows));
	/* the shortcut leaves the state a period behind: not for owners */
	/* and a tuner that looks at the host's memory may stop ksmd at any
	 * time: what it merges depends on the time */
	r->ahead = !r->ops->look && !(p->write_rate > 0) && !nowners &&
		   !getenv("KSMSCAN_SLOW_REPLAY");
	if (r->ops->look) {
		/* KSM is stopped until the tuner first looks */
		r->run = 0;
		r->next_tick = r->ops->first_look(p);
		tuner(r);
		r->budget = r->pts;
	}
	for (;;) {
		if (r->period) {
			if (skip_ahead(r, rows, &n, &cap))
				break;
			if (r->period) {	/* a period added */
				wake(r);	/* after its last batch */
				continue;
			}
		}
		if (n == cap)
			*rows = xreallocarray(*rows, cap *= 2, sizeof(**rows));
		if (r->ahead) {
			r->log = &r->seen[(n + 1) % REPLAY_PERIOD_MAX];
			r->log->n = r->log->visits = r->log->revisits = 0;
		}
		(*rows)[n] = full_scan(r, n + 1);
		n++;
		if (r->ahead && !r->period)
			note_scan(r, n);
		wake(r);	/* a batch ends with its full scan */
		if (done(r, *rows, n))
			break;
	}
	if (nowners)
		owners_count(r, shift, owners, nowners);
	*cut = r->cut;
	replay_close(r);
	return n;
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

	c->sum += row->cpu_seconds;
	c->seconds = row->seconds;
	c->window += row->cpu_seconds;
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
				     int settled)
{
	static const double hours[] = REPLAY_FIGURE_HOURS;
	const struct timeline_row *last = &rows[n - 1];
	struct point *pt = xcalloc(n + 1, sizeof(*pt));
	size_t np = points(rows, n, pt);
	double final = (double)pt[np - 1].saving;
	struct ksmd_cpu cpu = { 0 };
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
