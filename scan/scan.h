/* SPDX-License-Identifier: MIT */
#ifndef KSMSCAN_SCAN_H
#define KSMSCAN_SCAN_H

#include <stddef.h>

#include "../dump/dump.h"
#include "../hash/hash.h"
#include "group.h"
#include "sink.h"
#include "tally.h"

/* Everything the command line decided; the engine reads nothing else. */
struct scan_config {
	const struct algo *algos[ALGO_MAX];	/* selected algorithms, in order */
	size_t nalgos;
	struct dump_options dump;		/* how inputs are read */
	struct ksm_params ksm;			/* KSM's settings */
	const struct input *inputs;		/* files and processes, in order */
	size_t ninputs;
	const struct group *groups;		/* --group, in order */
	size_t ngroups;
	struct sink **sinks;			/* the reports, in printing order */
	size_t nsinks;
	unsigned threads;			/* hashing threads, at least 1 */
	int progress;				/* progress on standard error */
	int frame_keys_only;			/* live pages' frame keys go to the
						 * sinks, and no scope counts by
						 * frame (a live series does) */
	int thp_always;				/* --thp=always: a file's memory sat
						 * in 2 MiB huge pages on its host */
	/** before_input() - if set, called before input @k is opened (a
	 * live series waits there for the snapshot's time). */
	void (*before_input)(void *arg, size_t k);
	void *arg;				/* for before_input() */
};

/**
 * scan_run() - read every input, count, and hand the results to the sinks:
 * their page() hooks during the scan, their scope() hooks after each input
 * and after all of them. Printing is left to the caller.
 * @cfg: the settings
 *
 * Return: the exit status: 0, or 1 if an input had a problem.
 */
int scan_run(const struct scan_config *cfg);

/**
 * scope_group() - the group (--group, --by, --enable) a scope counts.
 * @cfg: the run
 * @sc: the scope
 *
 * Return: the group, or NULL for an input's scope or "*".
 */
const struct group *scope_group(const struct scan_config *cfg,
				const struct scope *sc);

#endif
