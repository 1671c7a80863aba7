/* SPDX-License-Identifier: MIT */
#ifndef KSMSCAN_MEASURE_H
#define KSMSCAN_MEASURE_H

#include <stddef.h>

#include "hash.h"

/* One algorithm's speed on this machine. */
struct hash_speed {
	const struct algo *algo;
	double hot;		/* seconds per page, one cache-resident page */
	double stream;		/* seconds per page, streamed from memory */
	double hot_spread;	/* the third best run's time over the best's,
				 * less 1: how much the best runs differ */
	double stream_spread;
	int is_auto;		/* -a auto would choose it */
};

/**
 * hash_measure() - time algorithms on this machine (--bench).
 * @algos: the algorithms to measure
 * @nalgos: how many
 * @rows: filled in, one per algorithm, in order
 * @autopick: set to the algorithm -a auto chooses here
 * @progress: as progress_start()'s mode: a line saying which is measured
 *
 * Each algorithm is timed on one cache-resident page (like the kernel's
 * boot-time test) and on pages streamed from a buffer larger than the
 * last-level cache, repeated until the three best runs agree within 3% (or
 * 20 runs); the spread of the three best is kept with the best.
 *
 * Return: the size of the streaming buffer, in bytes.
 */
size_t hash_measure(const struct algo *const *algos, size_t nalgos,
		    struct hash_speed *rows, const struct algo **autopick,
		    int progress);

/**
 * hash_auto() - the algorithm -a auto uses: the fastest KSM candidate here.
 * @seconds: if not NULL, set to the time the choice took
 *
 * Measures crc32c and xxhash (the two the kernel chose between) on a hot page
 * for about a millisecond each.
 *
 * Return: the chosen algorithm.
 */
const struct algo *hash_auto(double *seconds);

/**
 * page_compare_ns_per_byte() - what page_compare() costs here per byte, on
 * equal pages (as in a match): the memcmp() cost the ksmd replay charges for
 * its tree searches.
 */
double page_compare_ns_per_byte(void);

#endif
