/* SPDX-License-Identifier: MIT */
#ifndef KSMSCAN_BENCH_H
#define KSMSCAN_BENCH_H

#include <stddef.h>

#include "../hash/hash.h"
#include "../report/report.h"

/**
 * bench_run() - benchmark algorithms and print the bench report (--bench).
 * @algos: the algorithms to measure
 * @nalgos: how many
 * @out: the output format
 *
 * Each algorithm is timed on one cache-resident page (like the kernel's
 * boot-time test) and on pages streamed from a buffer larger than the
 * last-level cache, repeated until the three best runs agree within 3%.
 *
 * Return: the exit status.
 */
int bench_run(const struct algo *const *algos, size_t nalgos,
	      const struct writer *out);

/**
 * bench_auto() - the algorithm -a auto uses: the fastest KSM candidate here.
 * @seconds: if not NULL, set to the time the choice took
 *
 * Measures crc32c and xxhash (the two the kernel chose between) on a hot page
 * for about a millisecond each.
 *
 * Return: the chosen algorithm.
 */
const struct algo *bench_auto(double *seconds);

#endif
