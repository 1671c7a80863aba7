/* SPDX-License-Identifier: MIT */
/*
 * The advice: a search over fixed settings of ksmd by replaying the series
 * (advise.h). More pages a wake-up never makes ksmd slower, so for one
 * sleep the settings that reach a target by a time are those from some
 * pages_to_scan up: a bisection finds it, and the setting just below it is
 * one the search tried and saw fail.
 */
#include <math.h>
#include <stdlib.h>

#include "../util/util.h"
#include "advise.h"

/* One fixed setting, replayed to the target time. */
static struct advice try_setting(const struct series *sr,
				 const struct replay_params *base,
				 const struct advise_params *a, uint64_t reference,
				 uint64_t pages, uint64_t sleep_ms)
{
	struct replay_params rp = *base;
	struct timeline_row *rows;
	struct advice ad = { pages, sleep_ms, NAN, 0, 0, 0, 0, 1 };
	double want = a->fraction * (double)reference, cpu = 0, end = 0;
	uint64_t by_then = 0;
	size_t n;
	int cut;

	rp.policy = POLICY_FIXED;
	rp.ksm.pages_to_scan = pages;
	rp.ksm.sleep_ms = sleep_ms;
	rp.scans = 0;
	rp.until = a->seconds;
	n = replay_run(sr, &rp, &rows, &cut);
	for (size_t i = 0; i < n && rows[i].seconds <= a->seconds; i++) {
		uint64_t s = rows[i].pages_sharing + rows[i].ksm_zero_pages;

		by_then = s;
		cpu += rows[i].cpu_seconds;
		end = rows[i].seconds;
		if (isnan(ad.seconds_to_target) && s && (double)s >= want)
			ad.seconds_to_target = rows[i].seconds;
	}
	ad.reaches = !isnan(ad.seconds_to_target);
	ad.reached = reference ? (double)by_then / (double)reference : 0;
	ad.cpu_mean = end > 0 ? 100 * cpu / end : 0;
	free(rows);
	return ad;
}

/* The fewest pages_to_scan at @sleep_ms that reach the target; the most
 * that helps is the whole memory in one wake-up. */
static struct advice search_sleep(const struct series *sr,
				  const struct replay_params *base,
				  const struct advise_params *a,
				  uint64_t reference, uint64_t sleep_ms)
{
	uint64_t lo = 0, hi = sr->naddr + 1;
	struct advice best = try_setting(sr, base, a, reference, hi, sleep_ms);
	unsigned replays = 1;

	if (!best.reaches)
		return best;
	while (hi - lo > 1) {	/* lo fails (0: nothing), hi reaches */
		uint64_t mid = lo + (hi - lo) / 2;
		struct advice t = try_setting(sr, base, a, reference, mid, sleep_ms);

		replays++;
		if (t.reaches) {
			hi = mid;
			best = t;
		} else {
			lo = mid;
		}
	}
	best.cheaper_pages = lo;
	best.replays = replays;
	return best;
}

void advise_search(const struct series *sr, const struct replay_params *base,
		   const struct advise_params *a, uint64_t reference,
		   struct advice *out)
{
	static const uint64_t sleeps[ADVISE_NSLEEPS] = ADVISE_SLEEPS;

	for (size_t k = 0; k < ADVISE_NSLEEPS; k++)
		out[k] = search_sleep(sr, base, a, reference, sleeps[k]);
}
