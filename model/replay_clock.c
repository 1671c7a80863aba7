/* SPDX-License-Identifier: MIT */
/*
 * The replay's time, its pace and its policy. ksmd's wake-ups are
 * replay_wake_period() apart (the timer wheel's jiffies and the batch's
 * cost), and the memory at a wake-up is the last snapshot taken by then
 * (series.at). Writes that leave the bytes as they were cannot be seen in
 * snapshots; write_rate stands for them: that share of the pages per
 * second, picked at random (a fixed seed), is written with its own bytes,
 * which breaks a KSM mapping as any write does.
 *
 * The policy (who sets pages_to_scan and the sleep, and may stop ksmd) is
 * called from this file alone: at the start, at each wake-up (the looks of
 * ksmtuned or KubeVirt's handler) and at the end of each full scan (the
 * advisor). And a full scan whose visits are known is timed here
 * (replay_time_scan()), for the shortcut and for model/pace.c.
 */
#include <math.h>

#include "../util/util.h"
#include "replay_impl.h"

/* A batch's budget: pages_to_scan @pts, in REPLAY_PACE_UNITs for a sample. */
static uint64_t replay_budget(const struct replay *r, uint64_t pts)
{
	return r->sr->sample > 1 ? pts * REPLAY_PACE_UNIT : pts;
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

double replay_period(const struct replay_params *p, uint64_t sleep_ms,
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
	return replay_period(p, p->ksm.sleep_ms, cost);
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
	*out = replay_period(p, sleep_ms, cost);
	return 1;
}

double replay_snap_time(const struct replay *r, size_t k)
{
	return r->sr->at ? r->sr->at[k] : (double)k * r->p->interval;
}

/* write_rate: the writes due in @dt seconds, each to a random address with
 * the bytes it holds (xorshift64: the same replay every run). */
static void unseen_writes(struct replay *r, double dt)
{
	struct replay_clock *k = &r->clock;

	k->writes += r->p->write_rate * dt * (double)r->sr->naddr;
	for (; k->writes >= 1.0; k->writes -= 1.0) {
		struct rmap *s;

		k->rng ^= k->rng << 13;
		k->rng ^= k->rng >> 7;
		k->rng ^= k->rng << 17;
		s = &r->tree.s[k->rng % r->sr->naddr];
		if (s->id != NO_ID)
			replay_written(r, s, s->id);
	}
}

/* Bring the memory to the time r->clock.now: the snapshots taken by then. */
static void advance(struct replay *r)
{
	while (r->clock.snap + 1 < r->sr->nsnaps &&
	       replay_snap_time(r, r->clock.snap + 1) <= r->clock.now + 1e-9)
		replay_snap_apply(r, r->clock.snap + 1);
}

/* One look of the tuner (ksmtuned's adjust(), KubeVirt's handler...), on
 * the free memory KSM's savings give back. */
static void look(struct replay *r)
{
	const struct policy_host *h = &r->p->host;
	uint64_t saved_kb = (r->count.sharing + r->count.zero) *
			    (PAGE_BYTES / 1024);
	uint64_t committed = r->clock.present * (PAGE_BYTES / 1024);
	int was = r->pol.run;

	r->pol.run = r->pol.ops->look(&r->pol.ps, r->p,
				      h->total_kb - h->used_kb + saved_kb,
				      committed, r->pol.run, &r->clock.pts,
				      &r->clock.sleep_ms);
	if (was && !r->pol.run) {
		r->pol.stop_time = r->clock.now;
		r->pol.stop_saving = r->count.sharing + r->count.zero;
	}
}

/* The tuner's looks due by now (ksmtuned's or KubeVirt's); while it keeps
 * KSM stopped, time goes on to its next look, and past the series' end the
 * replay ends. */
static void tuner(struct replay *r)
{
	double end = replay_snap_time(r, r->sr->nsnaps - 1) + r->p->interval, every;

	if (!r->pol.ops->look)
		return;		/* a policy that never looks */
	every = r->pol.ops->look_every(r->p);	/* at least a second */
	for (;;) {
		while (r->clock.now + 1e-9 >= r->pol.next_tick) {
			look(r);
			r->pol.next_tick += every;
		}
		if (r->pol.run)
			return;
		if (r->pol.next_tick > end + every) {
			r->pol.halt = 1;	/* it never starts KSM again */
			return;
		}
		r->clock.now = r->pol.next_tick;	/* run=1 wakes ksmd at once */
		advance(r);
	}
}

void replay_wake(struct replay *r)
{
	double dt = replay_period(r->p, r->clock.sleep_ms, r->cpu.batch);

	r->clock.batch++;
	r->cpu.batch = 0;
	r->clock.now += dt;
	advance(r);
	if (r->p->write_rate > 0)
		unseen_writes(r, dt);
	tuner(r);
	/* ksm_do_scan(ksm_thread_pages_to_scan) */
	r->clock.budget = replay_budget(r, r->clock.pts);
	if (r->clock.owed) {	/* a sample's visits that stood for more */
		uint64_t t = r->clock.owed < r->clock.budget ? r->clock.owed :
			     r->clock.budget;

		r->clock.budget -= t;
		r->clock.owed -= t;
	}
}

void replay_policy_open(struct replay *r)
{
	const struct policy_ops *ops = r->p->policy;
	uint64_t pts = ops->start_pages(r->p);

	r->pol.ops = ops;
	r->pol.run = 1;
	r->clock.pts = pts;
	r->clock.budget = replay_budget(r, pts);
	r->clock.sleep_ms = r->p->ksm.sleep_ms;
	r->clock.rng = UINT64_C(0x9e3779b97f4a7c15);
}

void replay_policy_start(struct replay *r)
{
	if (r->pol.ops->look) {
		/* KSM is stopped until the tuner first looks */
		r->pol.run = 0;
		r->pol.next_tick = r->pol.ops->first_look(r->p);
		tuner(r);
		r->clock.budget = replay_budget(r, r->clock.pts);
	}
}

void replay_policy_scan_end(struct replay *r, double first_time)
{
	if (r->pol.ops->scan_end)	/* advisor_stop_scan() */
		r->clock.pts = r->pol.ops->scan_end(&r->pol.ps, r->p,
						    r->clock.now - first_time,
						    r->p->ksmd_cpu_seconds + r->cpu.all,
						    r->clock.pts);
}

int replay_policy_looks(const struct replay *r)
{
	return r->pol.ops->look != NULL;
}

int replay_policy_reads_cpu(const struct replay *r)
{
	return r->pol.ops->scan_end != NULL;
}

/* Where a scan's batches have got to in its visits. */
struct cursor {
	const uint32_t *runs;
	size_t nruns, k;		/* the run it is in */
	uint64_t used;			/* visits of that run taken */
};

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

/* @cost plus the next @m visits' costs and their merges', as replay.c's
 * step() and dup_append() sum them: one by one, in order. */
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
	       (double)t->row.memcmp_bytes * p->ns_per_byte) * 1e-9 +
	      (double)t->row.wakeups * p->wake_seconds;
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
