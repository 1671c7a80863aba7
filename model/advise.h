/* SPDX-License-Identifier: MIT */
#ifndef KSMSCAN_ADVISE_H
#define KSMSCAN_ADVISE_H

#include <stdint.h>

#include "replay.h"

/*
 * The advice (-r advise): the cheapest fixed setting of ksmd that reaches a
 * share of the saving by a time, found by replaying the series (not by a
 * formula): for each sleep_millisecs of a small set, a bisection over
 * pages_to_scan for the fewest that reach the target.
 */

/* What the user asks for: --target=FRACTION@DURATION, --max-cpu. */
struct advise_params {
	double fraction;		/* of the reference saving, (0, 1] */
	double seconds;			/* by this time of the replay */
	double max_cpu;			/* percent of a CPU, ksmd's mean */
};

/* The sleeps the search tries, in ms. */
#define ADVISE_SLEEPS { 10, 20, 50, 100, 200 }
#define ADVISE_NSLEEPS 5

/* One setting the search settled on: the fewest pages_to_scan that reach
 * the target at its sleep_ms, or, if none does, the most it tried. */
struct advice {
	uint64_t pages_to_scan, sleep_ms;
	double seconds_to_target;	/* NaN if not reached by the target time */
	double cpu_mean;		/* ksmd's CPU to the target time, percent */
	double reached;			/* the share of the reference saving by
					 * the target time */
	int reaches;			/* reached the target in time */
	uint64_t cheaper_pages;		/* the next cheaper setting the search
					 * tried at this sleep (it does not reach
					 * the target), 0 if none */
	unsigned replays;		/* replays the search ran at this sleep */
};

/**
 * advise_search() - search the fixed settings for the target.
 * @sr: the series
 * @base: the replay's settings (pace, costs; its pages_to_scan, sleep_ms,
 *	policy and scans are the search's)
 * @a: the target
 * @reference: the saving the fraction is of, in pages
 * @out: ADVISE_NSLEEPS settings, one per sleep, in the order of ADVISE_SLEEPS
 *
 * Each replay runs until the first full scan at or past the target time
 * (or until its counters settle, if sooner).
 */
void advise_search(const struct series *sr, const struct replay_params *base,
		   const struct advise_params *a, uint64_t reference,
		   struct advice *out);

#endif
