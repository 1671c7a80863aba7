/* SPDX-License-Identifier: MIT */
/*
 * The settings search behind -r advise (search.h): the settings of ksmd
 * that reach a target, found by replaying the series. (Not the kernel's
 * advisor, advisor_mode=scan-time: that is one of the policies the search
 * tries, model/advisor.c.) More pages a wake-up never makes ksmd slower,
 * so for one sleep the fixed settings that reach a target by a time are those from
 * some pages_to_scan up: a search up from one page (the first sleep) or
 * out from the rate found at the sleep before (the others) and a bisection
 * find it, and the setting just below it is one the search tried and saw fail. The scan-time advisor the same
 * way, over advisor_target_scan_time at one advisor_max_cpu: a longer
 * target makes it slower, so the settings that reach the target are those
 * up to some target scan time.
 */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../util/progress.h"
#include "../util/util.h"
#include "search.h"
#include "pace.h"
#include "advisor.h"
#include "policy.h"

/* A search over one second long shows its progress (on a terminal). */
#define SEARCH_QUIET_SECONDS 1.0

/* One search: the series, the target, and the shared replay if it applies. */
struct search {
	const struct series *sr;
	const struct advise_params *a;
	uint64_t reference;
	struct pace_log *log;		/* NULL: every setting replayed */
	const struct replay_params *base;
	struct replay_params advisor_base;	/* base with the advisor's settings */
	struct advice *out;
	size_t ntasks;			/* the rows: one per sleep, then
					 * one per advisor_max_cpu */
	size_t njobs;			/* two: the sleeps' searches (each
					 * from the one before), the advisor's */
	uint64_t cpus[ADVISE_ADVISOR_NCPUS];
	atomic_size_t next;		/* the next search to run */
	atomic_uint tried;		/* settings replayed so far */
	struct progress *pr;		/* drawn by the thread that started */
	pthread_t drawer;
	double start;
};

/* The advisor's ops but for paired_end() (below); set by search_settings(). */
static struct policy_ops paired_policy;

/* One more setting replayed: the progress, once the search is long. */
static void tick(struct search *se)
{
	unsigned tried = atomic_fetch_add(&se->tried, 1) + 1;
	char text[80];

	if (!se->pr || !pthread_equal(pthread_self(), se->drawer) ||
	    now_seconds() - se->start < SEARCH_QUIET_SECONDS)
		return;
	snprintf(text, sizeof(text), "advise: %zu of %zu searches begun, "
		 "%u settings replayed", atomic_load(&se->next) < se->njobs ?
		 atomic_load(&se->next) : se->njobs, se->njobs, tried);
	progress_note(se->pr, text);
}

/* replay_run(), from the shared replay when it can be. */
static size_t run(struct search *s, const struct replay_params *rp,
		  struct timeline_row **rows, int *cut)
{
	size_t n = s->log ? pace_replay(s->log, rp, rows, cut) : 0;

	return n ? n : replay_run(s->sr, rp, rows, cut);
}

/* ksmd's CPU over the horizon: every full scan of @rows, the replay to the
 * end of the first full scan that starts at or after the target time. */
static struct ksmd_cpu horizon_cpu(const struct replay_params *rp,
				   const struct timeline_row *rows, size_t n)
{
	struct ksmd_cpu cpu = { .wake_seconds = rp->wake_seconds };

	for (size_t i = 0; i < n; i++)
		ksmd_cpu_add(&cpu, &rows[i]);
	return cpu;
}

/*
 * A replay of @rp (its policy and knobs set) to the target time, or, with
 * @early, only until it reaches the target (then only .reaches holds).
 * Its CPU is over the horizon: the target window and, after it, one whole
 * full scan at that setting (steady state), so that a short target does
 * not hide what ksmd goes on spending: the setting stays in force. A
 * replay that stops early but misses the target ran to the target time,
 * and is a row: its horizon too.
 */
static struct advice replay_to_target(struct search *se,
				      struct replay_params rp, int early)
{
	const struct advise_params *a = se->a;
	uint64_t reference = se->reference;
	struct timeline_row *rows;
	struct advice ad = {
		.policy = rp.policy == &paired_policy ? &advisor_policy :
			  rp.policy, .pages_to_scan = rp.ksm.pages_to_scan,
		.sleep_ms = rp.ksm.sleep_ms,
		.seconds_to_target = NAN, .replays = 1,
	};
	double want = a->fraction * (double)reference;
	struct ksmd_cpu cpu = { .wake_seconds = rp.wake_seconds };
	uint64_t by_then = 0;
	size_t n;
	int cut;

	if (advice_is_advisor(&ad))
		ad.advisor = advisor_knobs(&rp.tuning);
	/* the advisor starts at its minimum */
	ad.pages_to_scan = rp.policy->start_pages(&rp);
	rp.scans = 0;
	rp.until = a->seconds;
	/* one replay for the target and the horizon: its rows to the target
	 * are those of a replay to the target alone */
	rp.until_horizon = 1;
	rp.until_saving = early ? (want > 1 ? (uint64_t)ceil(want) : 1) : 0;
	n = run(se, &rp, &rows, &cut);
	tick(se);
	for (size_t i = 0; i < n && rows[i].seconds <= a->seconds; i++) {
		uint64_t s = rows[i].pages_sharing + rows[i].ksm_zero_pages;

		by_then = s;
		ksmd_cpu_add(&cpu, &rows[i]);
		ad.pages_to_scan = rows[i].pages_to_scan;	/* in force */
		ad.sleep_ms = rows[i].sleep_ms;
		if (isnan(ad.seconds_to_target) && s && (double)s >= want)
			ad.seconds_to_target = rows[i].seconds;
	}
	ad.reaches = !isnan(ad.seconds_to_target);
	ad.reached = reference ? (double)by_then / (double)reference : 0;
	if ((!early || !ad.reaches) && n && rows[n - 1].seconds >= a->seconds)
		cpu = horizon_cpu(&rp, rows, n);	/* with the scan past the target */
	ad.cpu_mean = ksmd_cpu_mean(&cpu);
	ad.cpu_peak = ksmd_cpu_peak(&cpu);
	free(rows);
	return ad;
}

/* One fixed setting, replayed to the target time (or, with @early, until
 * it reaches the target). */
static struct advice try_setting(struct search *se,
				 const struct replay_params *base,
				 uint64_t pages, uint64_t sleep_ms, int early)
{
	struct replay_params rp = *base;

	rp.policy = policy_at(0);	/* fixed */
	rp.ksm.pages_to_scan = pages;
	rp.ksm.sleep_ms = sleep_ms;
	return replay_to_target(se, rp, early);
}

/* A setting of one knob (pages_to_scan, or advisor_target_scan_time) at
 * @value with the other (the sleep, or advisor_max_cpu) at @other. */
typedef struct advice (*try_fn)(struct search *se,
				const struct replay_params *base, uint64_t value,
				uint64_t other, int early);

/*
 * Between @good, which reaches the target, and @bad, which does not, the
 * two settings next to each other where reaching turns into missing, by
 * bisection: returns the one that reaches, *@bad the one that misses.
 * Each replay stops once it reaches the target; *@replays counts them.
 */
static uint64_t bisect(struct search *se, const struct replay_params *base,
		       try_fn try, uint64_t other, uint64_t good,
		       uint64_t *bad, unsigned *replays)
{
	for (;;) {
		uint64_t lo = good < *bad ? good : *bad;
		uint64_t hi = good < *bad ? *bad : good, mid = lo + (hi - lo) / 2;

		if (hi - lo <= 1)
			return good;
		(*replays)++;
		if (try(se, base, mid, other, 1).reaches)
			good = mid;
		else
			*bad = mid;
	}
}

/*
 * The row of @sleep_ms once @good pages reach the target and @bad fail
 * (0: nothing): the bisection between them, then the setting it ends at
 * replayed for its figures, after @replays replays so far.
 */
static struct advice bracketed(struct search *se, const struct replay_params *base,
			       uint64_t sleep_ms, uint64_t good, uint64_t bad,
			       unsigned replays)
{
	struct advice ad;

	good = bisect(se, base, try_setting, sleep_ms, good, &bad, &replays);
	ad = try_setting(se, base, good, sleep_ms, 0);
	ad.cheaper = bad;
	ad.replays = replays;
	return ad;
}

/*
 * The fewest pages_to_scan at @sleep_ms that reach the target; the most
 * that helps is the whole memory in one wake-up. A setting that reaches
 * the target stops there, one that does not runs to the target time: it
 * costs its pages times its wake-ups. So the search gallops up from one
 * page (1, 2, 4, ...: the settings that fail cost, all together, about
 * the last one) to the first that reaches, then bisects between it and the
 * one before; with more pages never slower, that is the fewest, as a
 * bisection of the whole range would find, for a fraction of its failing
 * replays. The one found is replayed to the target time for its figures.
 */
static struct advice search_sleep_cold(struct search *se,
				       const struct replay_params *base,
				       uint64_t sleep_ms)
{
	uint64_t lo = 0, hi = 1, top = se->sr->naddr + 1;
	struct advice best = try_setting(se, base, top, sleep_ms, 1);
	unsigned replays = 1;

	if (!best.reaches)
		return best;
	for (; hi < top; lo = hi, hi *= 2) {	/* lo fails (0: nothing) */
		replays++;
		if (try_setting(se, base, hi, sleep_ms, 1).reaches)
			break;
	}
	return bracketed(se, base, sleep_ms, hi < top ? hi : top, lo, replays);
}

/*
 * search_sleep_cold() from a guess: the pages a second that reach the
 * target at one sleep nearly do at the next (the same visits, spread over
 * other wake-ups), so @guess pages, that rate at @sleep_ms, is within a
 * few pages of the answer. A gallop from it (1, 2, 4 pages away: down
 * while it reaches, up while it misses, to the whole memory at most)
 * brackets the answer; the bisection then ends where the count up from
 * one page does, with more pages never slower, in a few replays near the
 * answer instead of a count up and a bisection over all its bits. When
 * even the whole memory misses, the row is that replay's, as cold.
 */
static struct advice search_sleep_from(struct search *se,
				       const struct replay_params *base,
				       uint64_t sleep_ms, uint64_t guess)
{
	uint64_t top = se->sr->naddr + 1, good, bad, step = 1;
	struct advice ad = try_setting(se, base, guess, sleep_ms, 1);
	unsigned replays = 1;

	if (ad.reaches) {
		for (good = guess, bad = 0; good > 1; step *= 2) {
			uint64_t p = good > step ? good - step : 0;

			if (!p)
				break;	/* 0 pages: nothing, a miss */
			replays++;
			if (!try_setting(se, base, p, sleep_ms, 1).reaches) {
				bad = p;
				break;
			}
			good = p;
		}
	} else if (guess >= top) {
		return ad;	/* the whole memory misses: nothing reaches */
	} else {
		for (bad = guess;; step *= 2) {
			good = top - bad > step ? bad + step : top;
			replays++;
			ad = try_setting(se, base, good, sleep_ms, 1);
			if (ad.reaches)
				break;
			if (good == top) {
				ad.replays = replays;
				return ad;	/* nothing reaches */
			}
			bad = good;
		}
	}
	return bracketed(se, base, sleep_ms, good, bad, replays);
}

/* The fewest pages_to_scan at @sleep_ms that reach the target: from the
 * rate found at the sleep before, @prev, if any, else counted up. */
static struct advice search_sleep(struct search *se,
				  const struct replay_params *base,
				  uint64_t sleep_ms, const struct advice *prev)
{
	double guess;

	if (!prev || !prev->reaches || !prev->sleep_ms)
		return search_sleep_cold(se, base, sleep_ms);
	/* the rate that reaches lies between one page fewer and the answer
	 * at the sleep before: its middle */
	guess = round(((double)prev->pages_to_scan - 0.5) * (double)sleep_ms /
		      (double)prev->sleep_ms);
	if (guess < 1)
		guess = 1;
	if (guess > (double)se->sr->naddr + 1)
		guess = (double)se->sr->naddr + 1;	/* the whole memory */
	return search_sleep_from(se, base, sleep_ms, (uint64_t)guess);
}

/*
 * The advisor's searches at two advisor_max_cpu are the same replays
 * wherever the maximum never decides: advisor_max_cpu enters the advisor
 * only as a bound on the next pages_to_scan, its state moves the same
 * whatever the bound, so two replays whose every full scan ends with the
 * same pages_to_scan at either maximum are one (the same visits, times and
 * rows). The first maximum's search is replayed by this policy, the
 * advisor itself with, at each scan's end, the other maximum's answer
 * worked out beside it; where no scan of any of its replays tells them
 * apart, the other's search would try the same settings, see the same
 * and end at the same row, so it is not run.
 */
struct paired_params {
	struct advisor_params knobs;	/* first: advisor_knobs() reads it */
	uint64_t other_max_cpu;
	atomic_int *apart;		/* set when the other would differ */
};

_Static_assert(sizeof(struct paired_params) <= TUNER_PARAMS_BYTES,
	       "the paired advisor's settings fit a tuner's room");

/* advisor_end() at the run's advisor_max_cpu, and at the other one. */
static uint64_t paired_end(struct policy_state *st,
			   const struct replay_params *p, double scan_seconds,
			   double cpu_seconds, uint64_t pages_to_scan)
{
	struct paired_params pp;
	struct advisor a, b;
	uint64_t pages;

	memcpy(&pp, p->tuning.bytes, sizeof(pp));
	memcpy(&a, st->bytes, sizeof(a));
	b = a;
	pages = advisor_scan_end(&a, &pp.knobs, scan_seconds, cpu_seconds,
				 pages_to_scan);
	pp.knobs.max_cpu = pp.other_max_cpu;
	if (advisor_scan_end(&b, &pp.knobs, scan_seconds, cpu_seconds,
			     pages_to_scan) != pages)
		atomic_store(pp.apart, 1);
	memcpy(st->bytes, &a, sizeof(a));
	return pages;
}

/* The advisor at @target s and @max_cpu %, replayed to the target time (or,
 * with @early, until it reaches the target). */
static struct advice try_advisor(struct search *se,
				 const struct replay_params *base,
				 uint64_t target, uint64_t max_cpu, int early)
{
	struct replay_params rp = *base;
	struct advisor_params knobs = advisor_knobs(&base->tuning);

	knobs.target_scan_time = target;
	knobs.max_cpu = max_cpu;
	advisor_set_knobs(&rp.tuning, &knobs);
	return replay_to_target(se, rp, early);
}

/* The longest advisor_target_scan_time from 1 s to the target's duration
 * that reaches the target at @max_cpu; if none, 1 s (the fastest). */
static struct advice search_max_cpu(struct search *se,
				    const struct replay_params *base,
				    uint64_t max_cpu)
{
	const struct advise_params *a = se->a;
	uint64_t lo = 1, hi = a->seconds > 1 ? (uint64_t)ceil(a->seconds) : 1;
	struct advice top = try_advisor(se, base, hi, max_cpu, 0);
	struct advice best;
	unsigned replays = 1;

	if (top.reaches || hi == 1)
		return top;	/* nothing longer was tried */
	best = try_advisor(se, base, lo, max_cpu, 1);
	replays++;
	if (!best.reaches) {	/* failed: it ran to the target time */
		best.replays = replays;
		return best;
	}
	lo = bisect(se, base, try_advisor, max_cpu, lo, &hi, &replays);
	best = try_advisor(se, base, lo, max_cpu, 0);
	best.cheaper = hi;
	best.replays = replays + 1;
	return best;
}

/* The advisor_max_cpu values to try, ascending: the advisor's floor of
 * 10% (below it the floor wins), and --max-cpu in whole percent if given,
 * else the kernel's default. */
static size_t max_cpus(const struct advise_params *a, uint64_t *out)
{
	uint64_t want = ADVISOR_MAX_CPU;

	out[0] = ADVISOR_MIN_CPU;
	if (a->max_cpu < 100)
		want = (uint64_t)floor(a->max_cpu);
	if (want <= ADVISOR_MIN_CPU)
		return 1;
	out[1] = want;
	return 2;
}

/* The advisor's rows: the first advisor_max_cpu's search, paired with the
 * second's (paired_end()); the second's row is the first's unless some
 * replay told them apart, then its own search. */
static void search_advisor(struct search *se)
{
	struct advice *out = se->out + ADVISE_NSLEEPS;
	size_t n = se->ntasks - ADVISE_NSLEEPS;
	struct replay_params base = se->advisor_base;
	struct paired_params pp;
	atomic_int apart = 0;

	if (n > 1 && !getenv("KSMSCAN_SLOW_REPLAY")) {
		memcpy(&pp.knobs, base.tuning.bytes, sizeof(pp.knobs));
		pp.other_max_cpu = se->cpus[1];
		pp.apart = &apart;
		memcpy(base.tuning.bytes, &pp, sizeof(pp));
		base.policy = &paired_policy;
	} else {
		apart = 1;
	}
	out[0] = search_max_cpu(se, &base, se->cpus[0]);
	for (size_t i = 1; i < n; i++) {
		if (atomic_load(&apart) || i > 1) {
			out[i] = search_max_cpu(se, &se->advisor_base,
						se->cpus[i]);
			continue;
		}
		out[i] = out[0];	/* the same replays: the same row */
		out[i].advisor.max_cpu = se->cpus[i];
	}
}

/* One of the searches: the sleeps' (shortest first, each from the one
 * before), or the advisor's. */
static void search_one(struct search *se, size_t k)
{
	static const uint64_t sleeps[ADVISE_NSLEEPS] = ADVISE_SLEEPS;

	if (k)
		search_advisor(se);
	else
		for (size_t i = 0; i < ADVISE_NSLEEPS; i++)
			se->out[i] = search_sleep(se, se->base, sleeps[i],
						  i ? &se->out[i - 1] : NULL);
}

/* A thread's work: the searches not yet taken. */
static void *searcher(void *arg)
{
	struct search *se = arg;
	size_t k;

	while ((k = atomic_fetch_add(&se->next, 1)) < se->njobs)
		search_one(se, k);
	return NULL;
}

/* Threads for a search without the shared replay: each setting's replay
 * is its own, the searches independent (the shared replay is one). */
static size_t search_threads(const struct search *se)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	if (se->log || cpus < 2)
		return 1;
	return (size_t)cpus < se->njobs ? (size_t)cpus : se->njobs;
}

size_t search_settings(const struct series *sr,
		       const struct replay_params *base,
		       const struct policy_params *tunings,
		       const struct advise_params *a, uint64_t reference,
		       int progress, struct advice *out)
{
	struct search se = { .sr = sr, .a = a, .reference = reference,
			     .base = base, .advisor_base = *base,
			     .out = out, .start = now_seconds() };
	pthread_t th[ADVISE_ROWS_MAX];
	size_t nth, started = 0;

	se.advisor_base.policy = &advisor_policy;
	se.advisor_base.tuning = tunings[policy_index(&advisor_policy)];
	se.ntasks = ADVISE_NSLEEPS + max_cpus(a, se.cpus);
	se.njobs = 2;
	paired_policy = advisor_policy;
	paired_policy.scan_end = paired_end;
	/* the test suites' oracle: every setting replayed on its own */
	if (!getenv("KSMSCAN_SLOW_REPLAY"))
		se.log = pace_open(sr, base);
	se.pr = progress_start(progress, 0);
	se.drawer = pthread_self();
	nth = search_threads(&se);
	while (started + 1 < nth &&
	       !pthread_create(&th[started], NULL, searcher, &se))
		started++;
	searcher(&se);
	for (size_t t = 0; t < started; t++)
		pthread_join(th[t], NULL);
	progress_end(se.pr);
	pace_close(se.log);
	return se.ntasks;
}

int advice_is_advisor(const struct advice *a)
{
	return a->policy == &advisor_policy;
}
