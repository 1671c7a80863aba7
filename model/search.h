/* SPDX-License-Identifier: MIT */
#ifndef KSMSCAN_SEARCH_H
#define KSMSCAN_SEARCH_H

#include <stddef.h>
#include <stdint.h>

#include "advisor.h"
#include "replay.h"

/*
 * The settings search (-r advise): the settings of ksmd that reach a share
 * of the saving by a time, found by replaying the series (not by a
 * formula). Not to be confused with the kernel's advisor
 * (advisor_mode=scan-time, model/advisor.c), whose knobs it searches too.
 * Fixed settings: for each sleep_millisecs of a small set, a bisection over
 * pages_to_scan for the fewest that reach the target. The kernel's
 * scan-time advisor: for each advisor_max_cpu of a small set, a bisection
 * over advisor_target_scan_time for the longest that reaches it.
 */

/* What the user asks for: --target=FRACTION@DURATION, --max-cpu. */
struct advise_params {
	double fraction;		/* of the reference saving, (0, 1] */
	double seconds;			/* by this time of the replay */
	double max_cpu;			/* percent of a CPU, ksmd's mean; 100
					 * unless given */
};

/* The sleeps the fixed search tries, in ms. */
#define ADVISE_SLEEPS { 10, 20, 50, 100, 200 }
#define ADVISE_NSLEEPS 5

/* The advisor search: at most this many advisor_max_cpu values (10, the
 * advisor's own floor, and --max-cpu, or the kernel's 70 without it). */
#define ADVISE_ADVISOR_NCPUS 2
/* Every row of the advice: fixed ones, then the advisor's. */
#define ADVISE_ROWS_MAX (ADVISE_NSLEEPS + ADVISE_ADVISOR_NCPUS)

/* One setting the search settled on. Fixed: the fewest pages_to_scan that
 * reach the target at its sleep_ms, or, if none does, the most it tried.
 * The advisor: the longest advisor_target_scan_time that reaches it at its
 * advisor_max_cpu, or, if none does, 1 s. */
struct advice {
	const struct policy_ops *policy;	/* fixed or the advisor
					 * (advice_is_advisor()) */
	uint64_t pages_to_scan, sleep_ms;	/* fixed: the setting; the
					 * advisor: in force at the target time
					 * (after the last full scan by then) */
	struct advisor_params advisor;	/* the advisor's knobs (its rows; 0 in
					 * the fixed rows) */
	double seconds_to_target;	/* NaN if not reached by the target time */
	double cpu_mean, cpu_peak;	/* ksmd's CPU over the horizon, percent:
					 * from the start to the end of the
					 * first full scan that begins at or
					 * after the target time (or the
					 * replay's end, once its counters
					 * settled), its mean and its peak
					 * (ksmd_cpu_mean(), ksmd_cpu_peak()) */
	double reached;			/* the share of the reference saving by
					 * the target time */
	int reaches;			/* reached the target in time */
	uint64_t cheaper;		/* the next cheaper setting the search
					 * tried, which does not reach the
					 * target: fixed, pages_to_scan at the
					 * same sleep (0: none tried); the
					 * advisor, advisor_target_scan_time at
					 * the same max CPU (0: none tried) */
	unsigned replays;		/* replays the search ran for this row */
};

/**
 * search_settings() - search the fixed settings and the scan-time advisor's
 * knobs for the target.
 * @sr: the series
 * @base: the replay's settings for the fixed settings (pace, costs; its
 *	pages_to_scan, sleep_ms, policy and scans are the search's)
 *	(and ksmd's CPU time before the replay, which the advisor counts)
 * @tunings: every tuner's settings, by policy_index(): the advisor's
 *	min and max pages_to_scan (its target scan time and max CPU are
 *	the search's)
 * @a: the target
 * @reference: the saving the fraction is of, in pages
 * @progress: show a progress line once the search has taken a second:
 *	1 always, 0 never, -1 when standard error is a terminal
 * @out: ADVISE_ROWS_MAX rooms: ADVISE_NSLEEPS fixed settings, one per
 *	sleep in the order of ADVISE_SLEEPS, then the advisor's, one per
 *	advisor_max_cpu tried, ascending
 *
 * Fixed: for each sleep, a bisection over pages_to_scan, each setting
 * replayed until the first full scan at or past the target time (or until
 * its counters settle, if sooner); the first sleep's bracket counted up
 * from one page, each next one's found next to the pages a second of the
 * sleep before.
 *
 * The advisor, for each advisor_max_cpu: a replay at a target scan time of
 * the target's duration (whole seconds, at least 1); if that reaches the
 * target, it is the setting. Else, if 1 s reaches it, a bisection between
 * the two for the longest that does, with replays that stop once they
 * reach it, and a replay of that one to the target time; its neighbour,
 * 1 s longer, is a replay that did not. A longer target scan time makes
 * the advisor slower and cheaper (up to its floor of 10% CPU); where the
 * replay does not follow that, the bisection still ends at a setting that
 * reaches the target next to one that does not, both replayed.
 * The second advisor_max_cpu's row is the first's when no full scan of
 * the first's replays would end with other pages_to_scan at the second.
 *
 * On memory that does not change, every replay is the timing of one shared
 * replay (model/pace.h); else the two searches (the sleeps', the
 * advisor's) run on two CPUs. The rows are
 * the same either way. With
 * KSMSCAN_SLOW_REPLAY set in the environment each setting is replayed on
 * its own, every full scan of it (the test suites compare the two).
 *
 * Return: the number of settings in @out.
 */
size_t search_settings(const struct series *sr,
		       const struct replay_params *base,
		       const struct policy_params *tunings,
		       const struct advise_params *a, uint64_t reference,
		       int progress, struct advice *out);

/**
 * advice_is_advisor() - whether a row of the advice is the advisor's.
 * @a: the row
 *
 * Return: 1 for the advisor's rows (its knobs set), 0 for a fixed setting.
 */
int advice_is_advisor(const struct advice *a);

#endif
