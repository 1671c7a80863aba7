/* SPDX-License-Identifier: MIT */
#ifndef KSMSCAN_SCAN_H
#define KSMSCAN_SCAN_H

#include <stddef.h>

#include "../dump/dump.h"
#include "../hash/hash.h"
#include "../report/report.h"
#include "ksm.h"

/* Reports that can be selected with -r, as bits. */
enum {
	REPORT_SUMMARY = 1 << 0,
	REPORT_PAGES = 1 << 1,
	REPORT_REGIONS = 1 << 2,
	REPORT_HISTOGRAM = 1 << 3,
	REPORT_TOP = 1 << 4,
	REPORT_TREE = 1 << 5,
};

/* Everything the command line decided; the engine reads nothing else. */
struct scan_config {
	const struct algo *algos[ALGO_MAX];	/* selected algorithms, in order */
	size_t nalgos;
	struct dump_options dump;		/* how inputs are read */
	unsigned reports;			/* REPORT_* bits */
	struct ksm_params ksm;			/* the KSM model's parameters */
	const struct writer *out;		/* the output format */
	const struct input *inputs;		/* files and processes, in order */
	size_t ninputs;
	size_t top;				/* rows of the top report */
	unsigned threads;			/* hashing threads, at least 1 */
	int progress;				/* progress on standard error */
};

/**
 * scan_run() - read every input, count, and print the selected reports.
 * @cfg: the settings
 *
 * Return: the exit status: 0, or 1 if an input or the output had a problem.
 */
int scan_run(const struct scan_config *cfg);

#endif
