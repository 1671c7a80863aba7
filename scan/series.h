/* SPDX-License-Identifier: MIT */
#ifndef KSMSCAN_SERIES_H
#define KSMSCAN_SERIES_H

#include <stddef.h>
#include <stdint.h>

#include "../model/search.h"
#include "../model/replay.h"
#include "scan.h"

/*
 * A series: the inputs are snapshots of one memory. The series driver sits
 * above the engine: it runs scan_run() with a sink of its own that collects
 * every snapshot's pages, replays ksmd over them (model/replay.c) and hands
 * the result to the reports' series() hooks. ksmd's settings are the run's
 * KSM settings (scan_config.ksm).
 */

/* What --series asks for besides ksmd's settings. */
struct series_params {
	double interval;		/* seconds between snapshots */
	uint64_t scans;			/* --scans, 0 for the default rule */
	size_t nprocs;			/* inputs per snapshot (several processes,
					 * in the order ksmd scans them), 0 or 1
					 * for one */
	unsigned hz;			/* the kernel's HZ, 0: wake every sleep_ms */
	double page_seconds;		/* ksmd's time per page visited */
	double revisit_seconds;		/* ... per KSM page revisited */
	double merge_seconds;		/* ... more per page merged */
	double wake_seconds;		/* ... per wake-up, besides its pages */
	double write_rate;		/* unseen writes: share of pages per second */
	uint32_t sample;		/* --sample=1/N: N (0 or 1: every page) */
	const struct policy_ops *policy;	/* who sets pages_to_scan */
	const struct policy_ops *others[POLICIES_MAX];	/* --policy=a,b,...:
					 * the policies after the first
					 * (policy), each replayed over the
					 * same snapshots */
	size_t nothers;
	struct policy_params tuning[TUNERS_MAX];	/* each tuner's
					 * settings, by policy_index() */
	struct policy_host host;	/* the host's memory, for a tuner that
					 * looks at it */
	struct advise_params advise;	/* -r advise's target; seconds 0: no
					 * search */
	const char *record;		/* --record=FILE: write the series there
					 * (scan/record.h), or NULL */
	int from_record;		/* the input is a record: replay it */
	int64_t ksm_full_scans;		/* a live series: the kernel's
					 * full_scans as it began (what a check
					 * of the forecast counts from); -1:
					 * none */
	char live_note[320];		/* a live series: a warning said once
					 * its processes opened (not before a
					 * run that ends on one it cannot
					 * read); "": none */
	const struct group *enable;	/* a live series' --enable: the
					 * processes (their numbers in a
					 * snapshot) -r advise counts as marked
					 * mergeable; NULL: none */
};

/* Several processes make one memory: process k's addresses are offset by k
 * << SERIES_PROC_SHIFT (user addresses are below 2^57), at most
 * SERIES_PROCS_MAX of them. */
#define SERIES_PROC_SHIFT 57
#define SERIES_PROCS_MAX 64

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

/* One policy's replay of the series. */
struct policy_run {
	const struct policy_ops *policy;
	const struct timeline_row *rows;	/* one per full scan */
	size_t nrows;
	int settled;			/* ran until its counters settled (see
					 * replay_figures()) */
	const struct replay_params *params;	/* what it ran with */
};

/* A replayed series, for the sinks' series() hooks. */
struct series_result {
	const char *name;		/* the series' name: that of the snapshot
					 * whose figures its row carries */
	const struct scope *last;	/* the row's snapshot, its KSM figures those
					 * at the last full scan of the replay */
	const struct timeline_row *rows;	/* one per full scan */
	size_t nrows;
	const struct volatility_row *vol;	/* one per pair of snapshots */
	size_t nvol;
	size_t nsnaps;			/* snapshots */
	double seconds_to_90;		/* until pages_sharing first reached 90% of
					 * its last value; 0 if that is 0 */
	const struct replay_params *params;	/* what the replay ran with */
	const struct policy_run *runs;	/* every policy's replay, the first
					 * that of rows */
	size_t nruns;
	const struct advice *advice;	/* -r advise: ADVISE_NSLEEPS fixed
					 * settings, then the advisor's, or NULL */
	size_t nadvice;			/* ... how many in all */
	uint64_t reference;		/* the saving the target is a share of:
					 * the first policy's last, in pages */
	const struct advise_params *target;
	const struct replay_owner *owners;	/* a live series: per process
					 * (the first snapshot's inputs, in
					 * order) at the first policy's last
					 * full scan; NULL for files */
	size_t nowners;
	const double *owner_start;	/* per owner: its start time
					 * (/proc/PID/stat, clock ticks; NaN
					 * when gone), read as the series
					 * ended or kept in its record */
	const char (*owner_command)[64];	/* ... its command */
	const uint64_t *owner_frames;	/* per owner: the distinct frames of
					 * its pages in the row's snapshot, or
					 * NULL */
	const uint64_t *owner_fork_shared;	/* ... its pages whose frame
					 * another process maps too */
	int nothing_mergeable;		/* a live series none of whose pages
					 * is in an area marked mergeable
					 * (smaps' VmFlags mg): ksmd scans none
					 * of it; 0 for files (all of a file
					 * counts, as QEMU marks guest RAM) */
	uint64_t mergeable_pages;	/* -r advise: the row's snapshot's pages
					 * ksmd scans, which the advice replays
					 * (files: all; live: those of the
					 * processes marked mergeable and of
					 * those --enable names) */
	uint64_t not_mergeable_pages;	/* ... its other pages: processes none
					 * of whose memory is marked */
	uint64_t not_mergeable_saved;	/* ... what those would save more, in
					 * pages, were they marked: the run's
					 * replay of all the pages read against
					 * that of the marked ones (reference) */
	uint64_t not_mergeable_procs;	/* ... a bit per process left out (its
					 * number in a snapshot) */
};

/**
 * series_run() - scan the inputs as snapshots of one memory, replay ksmd
 * over them, and hand the result to the sinks that have a series() hook
 * (the others see the snapshots as ordinary inputs).
 * @cfg: the run's settings
 * @sp: the series' timing
 *
 * Return: the exit status, as scan_run().
 */
int series_run(const struct scan_config *cfg, const struct series_params *sp);

/**
 * series_record_load() - read the record that is the run's one input
 * (sp->from_record), before the reports are made: its inputs (names, pids)
 * replace @cfg's, as the reports name them; its host's facts and
 * costs (HZ, the interval, the page costs, the host's memory, KSM's
 * full_scans) replace those in @sp, as the run that wrote it had them;
 * series_run() then replays it. A bad record is said in one line.
 * @cfg: the run's settings
 * @sp: the series' settings, updated
 *
 * Return: 0, or -1 (said).
 */
int series_record_load(struct scan_config *cfg, struct series_params *sp);

/**
 * series_fits() - whether a series of these inputs fits in the memory the
 * machine has available, as far as their sizes say before they are read
 * (files: their size; processes: their resident pages): a series holds a
 * few bytes a page of its largest snapshot and a few a page that changes
 * between snapshots, and only the first is known now; if not, says so
 * with the estimate and what lowers it. A series that grows past it while
 * it is read (a small file that decompresses to much more, or changes)
 * stops then.
 * @cfg: the run's settings
 * @sp: the series' settings (nprocs: inputs a snapshot; sample:
 *	--sample=1/N's N, about 1/N of the pages kept)
 *
 * Return: 0, or -1 (said).
 */
int series_fits(const struct scan_config *cfg, const struct series_params *sp);

#endif
