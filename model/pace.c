/* SPDX-License-Identifier: MIT */
/*
 * One replay at every pace (pace.h). The shared replay is replay.c's own,
 * run a full scan at a time in one batch (replay_scan_unpaced()); each
 * scan keeps its counters, ksmd's CPU by its end, and its visits as runs of
 * the two kinds. Scans that visit the same pages as a recent one share its
 * runs: smart_scan makes the scans of settled memory repeat every few.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../util/util.h"
#include "advisor.h"
#include "pace.h"

/* How many distinct recent scans a new one is compared with. */
#define PACE_RECENT 16

/* One full scan of the shared replay. */
struct pace_scan {
	struct timeline_row row;	/* its counters (no times) */
	size_t off, nruns;		/* its runs in the log's */
	uint64_t visits, revisits;
	double cpu;			/* ksmd's CPU seconds by its end */
};

struct pace_log {
	const struct series *sr;
	struct replay_params p;		/* the shared replay's: fixed */
	struct replay *r;
	struct pace_scan *scans;
	size_t n, cap;
	uint32_t *runs;			/* every distinct scan's runs */
	size_t nruns, rcap;
	struct replay_visits v;		/* the scan being run */
	size_t recent[PACE_RECENT];	/* scans with runs of their own */
	size_t nrecent;
	struct replay_mark *mark;	/* the replay after scan mark_at */
	size_t mark_at;
	size_t period;			/* 0, or: scans from then on repeat
					 * those this many before */
	uint64_t skips;			/* pages_skipped in each period */
};

/* Take a mark every this many scans, and look for the replay back at it
 * until the next: smart_scan's skips repeat every 9 scans at most, once
 * every page's age is past 8. */
#define PACE_MARK_EVERY 16

struct pace_log *pace_open(const struct series *sr,
			   const struct replay_params *base)
{
	struct pace_log *log;

	if (sr->nsnaps != 1 || base->write_rate > 0)
		return NULL;
	log = xcalloc(1, sizeof(*log));
	log->sr = sr;
	log->p = *base;
	log->p.policy = POLICY_FIXED;
	log->r = replay_open(sr, &log->p);
	return log;
}

void pace_close(struct pace_log *log)
{
	if (!log)
		return;
	replay_close(log->r);
	replay_mark_free(log->mark);
	free(log->scans);
	free(log->runs);
	free(log->v.runs);
	free(log);
}

/* Where the scan's runs go: those of a recent scan with the same visits,
 * or a copy of its own. */
static size_t keep_runs(struct pace_log *log, size_t *nruns)
{
	const struct replay_visits *v = &log->v;
	size_t bytes = v->n * sizeof(*v->runs);

	*nruns = v->n;
	for (size_t k = 0; k < log->nrecent; k++) {
		const struct pace_scan *o = &log->scans[log->recent[k]];

		if (o->nruns == v->n &&
		    !memcmp(log->runs + o->off, v->runs, bytes))
			return o->off;
	}
	if (log->nruns + v->n > log->rcap) {
		log->rcap = 2 * (log->nruns + v->n);
		log->runs = xreallocarray(log->runs, log->rcap, sizeof(*log->runs));
	}
	memcpy(log->runs + log->nruns, v->runs, bytes);
	log->recent[log->nrecent < PACE_RECENT ? log->nrecent++ :
		    log->n % PACE_RECENT] = log->n;
	log->nruns += v->n;
	return log->nruns - v->n;
}

/* The shared replay's next scan, run; and whether it is back where it was
 * at the mark, then from there on it repeats. */
static struct pace_scan run_scan(struct pace_log *log)
{
	struct pace_scan sc;

	sc.row = replay_scan_unpaced(log->r, log->n + 1, &log->v, &sc.cpu);
	sc.visits = log->v.visits;
	sc.revisits = log->v.revisits;
	sc.off = keep_runs(log, &sc.nruns);
	if (log->mark && replay_at_mark(log->r, log->mark)) {
		log->period = log->n + 1 - log->mark_at;
		log->skips = sc.row.pages_skipped -
			     log->scans[log->mark_at - 1].row.pages_skipped;
	} else if ((log->n + 1) % PACE_MARK_EVERY == PACE_MARK_EVERY / 2) {
		replay_mark_free(log->mark);
		log->mark = replay_mark(log->r);
		log->mark_at = log->n + 1;
	}
	return sc;
}

/* ksmd's CPU after @sc's visits, from @cpu before them, summed as step()
 * sums it: visit by visit. */
static double cpu_after(const struct pace_log *log, const struct pace_scan *sc,
			double cpu)
{
	const uint32_t *runs = log->runs + sc->off;

	for (size_t k = 0; k < sc->nruns; k++) {
		double each = k & 1 ? log->p.revisit_seconds : log->p.page_seconds;

		for (uint32_t i = 0; i < runs[k]; i++)
			cpu += each;
	}
	return cpu;
}

/* The scan a period after an earlier one: its visits and counters, but
 * for the running counts. */
static struct pace_scan repeat_scan(const struct pace_log *log)
{
	struct pace_scan sc = log->scans[log->n - log->period];

	sc.row.scan = log->n + 1;
	sc.row.pages_skipped += log->skips;
	sc.cpu = cpu_after(log, &sc, log->scans[log->n - 1].cpu);
	return sc;
}

/* The shared replay's scan @k (from 0), run if it has not been yet. */
static const struct pace_scan *scan_at(struct pace_log *log, size_t k)
{
	while (log->n <= k) {
		struct pace_scan sc = log->period ? repeat_scan(log) :
				      run_scan(log);

		if (log->n == log->cap) {
			log->cap = log->cap ? 2 * log->cap : 64;
			log->scans = xreallocarray(log->scans, log->cap,
						   sizeof(*log->scans));
		}
		log->scans[log->n++] = sc;
	}
	return &log->scans[k];
}

/* Where a scan's batches have got to in its runs. */
struct cursor {
	const uint32_t *runs;
	size_t nruns, k;		/* the run it is in */
	uint64_t used;			/* visits of that run taken */
};

/* The next @m visits: how many are revisits; the cursor moves past them. */
static uint64_t take(struct cursor *c, uint64_t m, uint64_t *revisits)
{
	uint64_t got = 0;

	*revisits = 0;
	while (got < m && c->k < c->nruns) {
		uint64_t left = c->runs[c->k] - c->used;
		uint64_t t = left < m - got ? left : m - got;

		got += t;
		*revisits += c->k & 1 ? t : 0;
		c->used += t;
		if (c->used == c->runs[c->k]) {
			c->k++;
			c->used = 0;
		}
	}
	return got;
}

/* A batch's cost as step() sums it: visit by visit, in order. */
static double exact_cost(const struct replay_params *p, struct cursor c,
			 uint64_t m)
{
	double cost = 0;

	while (m && c.k < c.nruns) {
		uint64_t t = c.runs[c.k] - c.used;
		double each = c.k & 1 ? p->revisit_seconds : p->page_seconds;

		t = t < m ? t : m;
		for (uint64_t i = 0; i < t; i++)
			cost += each;
		m -= t;
		c.k++;
		c.used = 0;
	}
	return cost;
}

/* The sleep after a batch of the next @m visits (0: an empty batch). */
static double batch_period(const struct replay_params *p, struct cursor *c,
			   uint64_t m)
{
	struct cursor at = *c;
	uint64_t rv, n = take(c, m, &rv);
	double cost = (double)(n - rv) * p->page_seconds +
		      (double)rv * p->revisit_seconds;
	/* a sum of n terms in order is within n roundings of the exact one */
	double err = cost * (double)(n + 2) * 2.3e-16, dt;

	if (!replay_wake_period_near(p, p->ksm.sleep_ms, cost, err, &dt))
		replay_wake_period_near(p, p->ksm.sleep_ms,
					exact_cost(p, at, m), 0, &dt);
	return dt;
}

/*
 * One full scan at the pace: its batches of @pts visits, the row at the
 * end of the last full one, and (in *@now) the sleep after its last batch,
 * which ends with the scan. The advisor sets the next pages_to_scan.
 */
static struct timeline_row paced_scan(const struct pace_scan *sc,
				      const uint32_t *runs,
				      const struct replay_params *p,
				      struct advisor *adv, uint64_t *pts,
				      double *now)
{
	struct cursor c = { runs + sc->off, sc->nruns, 0, 0 };
	struct timeline_row row = sc->row;
	uint64_t full = sc->visits / *pts;
	double first = *now, rest, cpu, wall;

	for (uint64_t b = 0; b < full; b++)
		*now += batch_period(p, &c, *pts);
	rest = batch_period(p, &c, sc->visits % *pts);
	if (p->policy == POLICY_ADVISOR)	/* advisor_stop_scan() */
		*pts = advisor_scan_end(adv, &p->advisor, *now - first,
					p->ksmd_cpu_seconds + sc->cpu, *pts);
	row.seconds = *now;
	row.wakeups = full + 1;
	row.pages_to_scan = *pts;
	row.sleep_ms = p->ksm.sleep_ms;
	cpu = ((double)row.hashed * p->ns_per_page +
	       (double)row.memcmp_bytes * p->ns_per_byte) * 1e-9;
	wall = *now - first + rest;
	row.cpu_percent = wall > 0 ? 100.0 * cpu / wall : 0.0;
	*now += rest;
	return row;
}

size_t pace_replay(struct pace_log *log, const struct replay_params *p,
		   struct timeline_row **rows, int *cut)
{
	uint64_t pts = p->policy == POLICY_ADVISOR ?
		       p->advisor.min_pages_to_scan : p->ksm.pages_to_scan;
	struct advisor adv = { 0 };
	size_t n = 0, cap = 16, settling = 0;
	double now = 0;

	if (p->policy != POLICY_FIXED && p->policy != POLICY_ADVISOR)
		return 0;
	*cut = 0;
	*rows = xcalloc(cap, sizeof(**rows));
	do {
		const struct pace_scan *sc = scan_at(log, n);

		if (!pts) {	/* a wake-up at every address: replay_run() */
			free(*rows);
			return 0;
		}
		if (n == cap)
			*rows = xreallocarray(*rows, cap *= 2, sizeof(**rows));
		(*rows)[n++] = paced_scan(sc, log->runs, p, &adv, &pts, &now);
	} while (!replay_over(log->sr, p, *rows, n, &settling, cut));
	return n;
}
