/* SPDX-License-Identifier: MIT */
#ifndef KSMSCAN_GROUP_H
#define KSMSCAN_GROUP_H

#include <stddef.h>
#include <stdint.h>

#include "../dump/dump.h"
#include "index.h"

/*
 * Trust groups (--group=NAME=INPUT,...): inputs that may share memory with
 * each other only, as one KSM host per tenant would. The engine counts each
 * group's pages per content while the inputs are read (4 bytes per distinct
 * content and group) and hands the sinks one scope per group after "*".
 */

/* One group: its name and its inputs (the front end makes them: cli/). */
struct group {
	char *name;		/* as reported: "group:NAME" */
	size_t *inputs;		/* its inputs' numbers, ascending, each once */
	size_t ninputs;
	char **parts;		/* --enable's: each name it was given, "KIND:NAME",
				 * kept apart, since a name may hold any
				 * separator; NULL for other groups */
	size_t nparts;
};

/**
 * group_has() - whether input @k is in @g.
 * @g: the group
 * @k: an input's number
 */
int group_has(const struct group *g, size_t k);

/* The pages per content of every group, as the inputs are counted. */
struct group_counts;

/**
 * group_counts_new() - counters for @n groups.
 * @groups: the groups; must outlive the counters
 * @n: how many (0 is allowed: nothing is counted)
 */
struct group_counts *group_counts_new(const struct group *groups, size_t n);

/**
 * group_counts_input() - add the current input's counts to the groups that
 * hold it; call when an input is counted, before index_end_input().
 * @gc: the counters
 * @ix: the index
 * @input_no: the input's number
 */
void group_counts_input(struct group_counts *gc, const struct index *ix,
			size_t input_no);

/**
 * group_counts_get() - the pages per content id of group number @k.
 * @gc: the counters
 * @k: the group
 * @size: index_size() now: the array is made at least this long
 *
 * Return: @size counts, valid until the next call or group_counts_free().
 */
const uint32_t *group_counts_get(struct group_counts *gc, size_t k, size_t size);

/**
 * group_counts_free() - free the counters.
 * @gc: the counters, or NULL
 */
void group_counts_free(struct group_counts *gc);

#endif
