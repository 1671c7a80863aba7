/* SPDX-License-Identifier: MIT */
#ifndef KSMSCAN_ADVISOR_H
#define KSMSCAN_ADVISOR_H

#include <stdint.h>

/*
 * The kernel's scan-time advisor (advisor_mode=scan-time, Linux 6.9+,
 * advisor.c): mm/ksm.c's scan_time_advisor() of Linux 6.18, in its own
 * integer arithmetic, at the end of each full scan. The replay knows it
 * only by its operations (policy.h); the settings search (search.c) sets
 * its knobs.
 */

struct policy_ops;
struct policy_params;

/* The advisor's knobs, as /sys/kernel/mm/ksm has them. */
struct advisor_params {
	uint64_t target_scan_time;	/* advisor_target_scan_time, seconds */
	uint64_t max_cpu;		/* advisor_max_cpu, percent */
	uint64_t min_pages_to_scan;	/* advisor_min_pages_to_scan */
	uint64_t max_pages_to_scan;	/* advisor_max_pages_to_scan */
};

/* The kernel's defaults, and its fixed lower bound on CPU. */
#define ADVISOR_TARGET_SCAN_TIME 200
#define ADVISOR_MAX_CPU 70
#define ADVISOR_MIN_PAGES 500
#define ADVISOR_MAX_PAGES 30000
#define ADVISOR_MIN_CPU 10		/* KSM_ADVISOR_MIN_CPU */
#define ADVISOR_EWMA_WEIGHT 30		/* EWMA_WEIGHT */
/* The kernel's knobs as it boots: a struct advisor_params. */
#define ADVISOR_DEFAULTS { ADVISOR_TARGET_SCAN_TIME, ADVISOR_MAX_CPU, \
			   ADVISOR_MIN_PAGES, ADVISOR_MAX_PAGES }

/* struct advisor_ctx: what the advisor keeps from one scan to the next. */
struct advisor {
	uint64_t change;		/* the smoothed change, percent */
	uint64_t scan_time;		/* the last scan's, whole seconds */
	double cpu_time;		/* ksmd's CPU seconds at the last scan's end */
};

/**
 * advisor_scan_end() - scan_time_advisor(): a full scan ended; the next
 * pages_to_scan.
 * @a: the advisor's state (zeroed at the start, as set_advisor_defaults())
 * @p: its knobs
 * @scan_seconds: the scan's time, from its start to its end
 * @cpu_seconds: ksmd's CPU time so far
 * @pages_to_scan: the current value
 *
 * Return: the new pages_to_scan.
 */
uint64_t advisor_scan_end(struct advisor *a, const struct advisor_params *p,
			  double scan_seconds, double cpu_seconds,
			  uint64_t pages_to_scan);

/**
 * advisor_knobs() - the advisor's knobs in a tuner's settings.
 * @pp: settings of the advisor's
 *
 * Return: its knobs.
 */
struct advisor_params advisor_knobs(const struct policy_params *pp);

/**
 * advisor_set_knobs() - the advisor's settings from its knobs.
 * @pp: set to the advisor's settings
 * @a: the knobs
 */
void advisor_set_knobs(struct policy_params *pp, const struct advisor_params *a);

/* Its operations (the settings search replays it by name). */
extern const struct policy_ops advisor_policy;

#endif
