/* SPDX-License-Identifier: MIT */
#ifndef KSMSCAN_SERIES_H
#define KSMSCAN_SERIES_H

#include <stddef.h>
#include <stdint.h>

#include "replay.h"
#include "sink.h"

struct scan_config;

/* What --series asks for: ksmd's settings (max_page_sharing and
 * use_zero_pages come from the KSM model's parameters). */
struct series_params {
	double interval;		/* seconds between snapshots */
	uint64_t pages_to_scan;		/* --pages-to-scan */
	uint64_t sleep_ms;		/* --sleep-ms, at least 1 */
	int smart_scan;			/* --smart-scan */
	uint64_t scans;			/* --scans, 0 for the default rule */
};

/* How one snapshot differs from the one before it. */
struct volatility_row {
	size_t from, to;		/* snapshot numbers, from 1 */
	uint64_t pages;			/* pages of @to */
	uint64_t unchanged_pages;	/* same address, same content */
	uint64_t changed_pages;		/* same address, other content */
	uint64_t new_pages;		/* in @to only */
	uint64_t gone_pages;		/* in @from only */
	uint64_t merges_broken;		/* changed, and had a duplicate in @from */
};

/* A replayed series, for the sinks' series() hooks. */
struct series_result {
	const char *name;		/* the series' name: its first snapshot's */
	const struct scope *last;	/* the last snapshot, its KSM figures those
					 * at the last full scan of the replay */
	const struct timeline_row *rows;	/* one per full scan */
	size_t nrows;
	const struct volatility_row *vol;	/* one per pair of snapshots */
	size_t nvol;
	size_t nsnaps;			/* snapshots */
	double seconds_to_90;		/* until pages_sharing first reached 90% of
					 * its last value; 0 if that is 0 */
	const struct replay_params *params;	/* what the replay ran with */
};

/**
 * series_run() - scan the inputs as snapshots of one memory, replay ksmd
 * over them, and hand the result to the sinks that have a series() hook
 * (the others see the snapshots as ordinary inputs).
 * @cfg: the run's settings; cfg->series is set
 *
 * Return: the exit status, as scan_run().
 */
int series_run(const struct scan_config *cfg);

/**
 * series_seconds_to_90() - when pages_sharing first reached 90% of its value
 * at the last scan.
 * @rows: the timeline
 * @n: its rows, at least 1
 *
 * Return: the seconds of the first such row; 0 if the last value is 0.
 */
double series_seconds_to_90(const struct timeline_row *rows, size_t n);

#endif
