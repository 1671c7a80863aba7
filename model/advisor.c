/* SPDX-License-Identifier: MIT */
/*
 * The kernel's scan-time advisor, as Linux 6.18's mm/ksm.c runs it at the
 * end of every full scan: pages_to_scan moves toward what would make a full
 * scan last advisor_target_scan_time, by the ratio of the target to the
 * scan's time in whole seconds, smoothed by a moving average of how much
 * the scan time changed, then held between the CPU that ksmd's cost per
 * page allows (from 10% to advisor_max_cpu) and advisor_max_pages_to_scan.
 * Every step is the kernel's unsigned integer arithmetic, truncations
 * included: the replay's pages_to_scan after a scan is the kernel's for the
 * same scan time and CPU.
 */
#include "policy.h"
#include "replay.h"

static uint64_t ewma(uint64_t prev, uint64_t curr)
{
	return ((100 - ADVISOR_EWMA_WEIGHT) * prev + ADVISOR_EWMA_WEIGHT * curr) /
	       100;
}

static uint64_t at_least_1(uint64_t v)
{
	return v ? v : 1;
}

uint64_t advisor_scan_end(struct advisor *a, const struct advisor_params *p,
			  double scan_seconds, double cpu_seconds,
			  uint64_t pages_to_scan)
{
	/* div_s64(ms, MSEC_PER_SEC): whole seconds, at least 1 */
	uint64_t scan_time = at_least_1((uint64_t)(scan_seconds * 1000) / 1000);
	uint64_t cpu_ms = (uint64_t)((cpu_seconds - a->cpu_time) * 1e9) / 1000 / 1000;
	uint64_t cpu_percent = at_least_1(cpu_ms * 100 / (scan_time * 1000));
	uint64_t last = a->scan_time ? a->scan_time : scan_time;
	uint64_t factor = at_least_1(p->target_scan_time * 100 / scan_time);
	uint64_t change = ewma(a->change, at_least_1(scan_time * 100 / last));
	uint64_t pages = pages_to_scan * 100 / factor * change / 100;
	uint64_t per_page_cost = at_least_1(pages_to_scan / cpu_percent);

	if (pages > per_page_cost * p->max_cpu)
		pages = per_page_cost * p->max_cpu;
	if (pages < per_page_cost * ADVISOR_MIN_CPU)
		pages = per_page_cost * ADVISOR_MIN_CPU;
	if (pages > p->max_pages_to_scan)
		pages = p->max_pages_to_scan;
	a->change = change;
	a->scan_time = scan_time;
	a->cpu_time = cpu_seconds;
	return pages;
}

static uint64_t advisor_start(const struct replay_params *p)
{
	return p->advisor.min_pages_to_scan;	/* set_advisor_defaults() */
}

static uint64_t advisor_end(struct policy_state *st,
			    const struct replay_params *p, double scan_seconds,
			    double cpu_seconds, uint64_t pages_to_scan)
{
	return advisor_scan_end(&st->adv, &p->advisor, scan_seconds,
				cpu_seconds, pages_to_scan);
}

const struct policy_ops advisor_policy = {
	.name = "advisor", .start_pages = advisor_start, .scan_end = advisor_end,
};
