/* SPDX-License-Identifier: MIT */
#ifndef KSMSCAN_PACE_H
#define KSMSCAN_PACE_H

#include <stddef.h>

#include "replay.h"

/*
 * One replay at every pace: the settings search's fast path. On memory
 * that does not change (a series of one snapshot, no write_rate), what
 * ksmd merges depends only on the order it visits the pages in, never on
 * how many it visits a wake-up or how long it sleeps: a fixed policy and
 * the scan-time advisor visit them in the same order whatever their pace.
 * So one replay, without time, runs the full scans once and keeps each
 * scan's counters and its visits' kinds (checksummed, or a KSM page only
 * revisited: their costs); the replay at a pace is then the timing alone:
 * its batches over those visits, each sleep replay_wake_period()'s. Its
 * rows are those replay_run() gives at that pace (the same arithmetic in
 * the same order; a batch's cost is summed visit by visit whenever the
 * jiffies it spans could depend on the rounding).
 */

struct pace_log;

/**
 * pace_open() - the shared replay for settings of @base, if it applies.
 * @sr: the series, as long as the log is open
 * @base: the settings; what the search varies (the policy, fixed or the
 *	advisor; pages_to_scan, sleep_ms, the advisor's knobs, scans, until,
 *	until_saving) may differ in each pace_replay()
 *
 * Return: the log (pace_close() it), or NULL when the memory changes
 * (several snapshots, or write_rate): then only replay_run() will do.
 */
struct pace_log *pace_open(const struct series *sr,
			   const struct replay_params *base);

/**
 * pace_replay() - replay_run() at the pace of @p, from the shared replay.
 * @log: the log, from pace_open()
 * @p: the settings: those of pace_open()'s @base but for what the search
 *	varies; the policy fixed or the advisor
 * @rows: set to the full scans' rows (free() them)
 * @cut: set as replay_run() sets it
 *
 * Scans the shared replay has not run yet are run as they are needed.
 *
 * Return: the number of rows; 0 (and nothing to free) when this pace
 * cannot come from the log (a pages_to_scan of 0, or another policy):
 * replay_run() then.
 */
size_t pace_replay(struct pace_log *log, const struct replay_params *p,
		   struct timeline_row **rows, int *cut);

/**
 * pace_close() - free the log.
 * @log: the log, or NULL
 */
void pace_close(struct pace_log *log);

#endif
