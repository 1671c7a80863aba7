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
#include <string.h>

#include "../util/util.h"
#include "advisor.h"
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

struct advisor_params advisor_knobs(const struct policy_params *pp)
{
	struct advisor_params a;

	memcpy(&a, pp->bytes, sizeof(a));
	return a;
}

void advisor_set_knobs(struct policy_params *pp, const struct advisor_params *a)
{
	memcpy(pp->bytes, a, sizeof(*a));
}

_Static_assert(sizeof(struct advisor_params) <= TUNER_PARAMS_BYTES &&
	       sizeof(struct advisor) <= TUNER_STATE_BYTES,
	       "the advisor's settings and state fit a tuner's room");

static void advisor_defaults(struct policy_params *pp)
{
	const struct advisor_params a = ADVISOR_DEFAULTS;

	advisor_set_knobs(pp, &a);
}

static uint64_t advisor_start(const struct replay_params *p)
{
	/* set_advisor_defaults() */
	return advisor_knobs(&p->tuning).min_pages_to_scan;
}

static uint64_t advisor_end(struct policy_state *st,
			    const struct replay_params *p, double scan_seconds,
			    double cpu_seconds, uint64_t pages_to_scan)
{
	struct advisor_params knobs = advisor_knobs(&p->tuning);
	struct advisor a;
	uint64_t pages;

	memcpy(&a, st->bytes, sizeof(a));
	pages = advisor_scan_end(&a, &knobs, scan_seconds, cpu_seconds,
				 pages_to_scan);
	memcpy(st->bytes, &a, sizeof(a));
	return pages;
}

#define KNOB(field) offsetof(struct advisor_params, field)

/* /sys/kernel/mm/ksm's advisor_ knobs, as options of the same names. */
static const struct policy_knob knobs[] = {
	{ "advisor-target-scan-time", "D", 1, KNOB(target_scan_time), 1,
	  DURATION_MAX, "whole seconds from 1s to 1000h, such as 200s", "(default 200s)" },
	{ "advisor-max-cpu", "P", 0, KNOB(max_cpu), 1, 100, NULL,
	  "percent (default 70)" },
	{ "advisor-min-pages-to-scan", "N", 0, KNOB(min_pages_to_scan), 1,
	  KSMD_SETTING_MAX, NULL, "(default 500)" },
	{ "advisor-max-pages-to-scan", "N", 0, KNOB(max_pages_to_scan), 1,
	  KSMD_SETTING_MAX, NULL, "(default 30000)" },
};

_Static_assert(sizeof(knobs) / sizeof(knobs[0]) <= TUNER_KNOBS_MAX,
	       "the advisor's knobs fit the option table's room");

const struct policy_ops advisor_policy = {
	.name = "advisor", .who = "the advisor", .flags = TUNER_READS_KSMD_CPU,
	.knobs = knobs, .nknobs = sizeof(knobs) / sizeof(knobs[0]),
	.columns = &policy_pages_column, .ncolumns = 1,
	.defaults = advisor_defaults, .start_pages = advisor_start,
	.scan_end = advisor_end,
};
