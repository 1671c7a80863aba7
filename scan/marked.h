/* SPDX-License-Identifier: MIT */
#ifndef KSMSCAN_MARKED_H
#define KSMSCAN_MARKED_H

#include <stddef.h>
#include <stdint.h>

#include "../model/replay.h"

/*
 * The part of a live series ksmd scans (marked.c): a process none of whose
 * memory is marked mergeable is read by the usual rule (every private
 * anonymous page), which ksmd never visits; -r advise replays the series
 * without those processes, unless --enable names them.
 */

/**
 * series_marked() - a series restricted to some processes: in snapshot s,
 * the pages of process k (its address >> @shift) when bit k of @keep[s] is
 * set; the addresses left are numbered again, so that the replay walks
 * only them.
 * @sr: the whole series
 * @keep: per snapshot of @sr, a bit per process kept
 * @shift: where a page's address holds its process's number
 * @out: set to the restricted series, sharing @sr's contents
 * @snaps: @sr->nsnaps snapshots, filled; of a series read through its
 *	snap() (on disk), left empty: @out reads its own spool (free with
 *	series_marked_free())
 */
void series_marked(const struct series *sr, const uint64_t *keep,
		   unsigned shift, struct series *out, struct snapshot *snaps);

/**
 * series_marked_free() - free what series_marked() allocated.
 * @out: the restricted series
 * @snaps: its snapshots
 */
void series_marked_free(struct series *out, struct snapshot *snaps);

#endif
