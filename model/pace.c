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
#include "pace.h"
#include "policy.h"
#include "replay_impl.h"

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
	log->p.policy = policy_at(0);	/* fixed */
	log->r = replay_open(sr, &log->p);
	log->rcap = 64;		/* never NULL, even for scans with no visit */
	log->runs = xcalloc(log->rcap, sizeof(*log->runs));
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
		    (!v->n || !memcmp(log->runs + o->off, v->runs, bytes)))
			return o->off;
	}
	if (log->nruns + v->n > log->rcap) {
		log->rcap = 2 * (log->nruns + v->n);
		log->runs = xreallocarray(log->runs, log->rcap, sizeof(*log->runs));
	}
	if (v->n)	/* a scan with no visit has no runs (NULL) */
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

/* The scan a period after an earlier one: its visits and counters, but
 * for the running counts. */
static struct pace_scan repeat_scan(const struct pace_log *log)
{
	struct pace_scan sc = log->scans[log->n - log->period];

	sc.row.scan = log->n + 1;
	sc.row.pages_skipped += log->skips;
	struct replay_visits v = { log->runs + sc.off, sc.nruns, sc.nruns,
				   sc.visits, sc.revisits };

	sc.cpu = replay_cpu_after(&log->p, &v, log->scans[log->n - 1].cpu);
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

size_t pace_replay(struct pace_log *log, const struct replay_params *p,
		   struct timeline_row **rows, int *cut)
{
	const struct policy_ops *ops = p->policy;
	struct scan_time t = {
		.limit = INFINITY, .pages_to_scan = ops->start_pages(p),
	};
	size_t n = 0, cap = 16, settling = 0;

	if (ops->look)	/* a tuner that may stop ksmd: time matters */
		return 0;
	*cut = 0;
	*rows = xcalloc(cap, sizeof(**rows));
	do {
		const struct pace_scan *sc = scan_at(log, n);
		struct replay_visits v = { log->runs + sc->off, sc->nruns,
					   sc->nruns, sc->visits, sc->revisits };

		if (!t.pages_to_scan) {	/* a wake-up at every address */
			free(*rows);
			return 0;
		}
		t.row = sc->row;
		t.cpu = sc->cpu;
		replay_time_scan(p, &v, &t);
		t.now += t.rest;	/* the sleep after the scan's last batch */
		if (n == cap)
			*rows = xreallocarray(*rows, cap *= 2, sizeof(**rows));
		(*rows)[n++] = t.row;
	} while (!replay_over(log->sr, p, *rows, n, &settling, cut));
	return n;
}
