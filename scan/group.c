/* SPDX-License-Identifier: MIT */
/*
 * Trust groups: which inputs share a KSM host, and each group's pages per
 * content, so that its scope uses the same KSM arithmetic as "*".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/util.h"
#include "group.h"

int group_has(const struct group *g, size_t k)
{
	for (size_t i = 0; i < g->ninputs; i++)
		if (g->inputs[i] == k)
			return 1;
	return 0;
}

/* Per group, its pages per content id so far. */
struct group_counts {
	const struct group *groups;
	size_t n;
	uint32_t **counts;	/* [group][content id] */
	size_t *size;		/* entries of each counts[k] */
};

struct group_counts *group_counts_new(const struct group *groups, size_t n)
{
	struct group_counts *gc = xcalloc(1, sizeof(*gc));

	gc->groups = groups;
	gc->n = n;
	gc->counts = xcalloc(n ? n : 1, sizeof(*gc->counts));
	gc->size = xcalloc(n ? n : 1, sizeof(*gc->size));
	return gc;
}

/* Make group @k's array @size entries long, new ones 0. */
static void group_grow(struct group_counts *gc, size_t k, size_t size)
{
	if (gc->size[k] >= size)
		return;
	gc->counts[k] = xreallocarray(gc->counts[k], size, sizeof(uint32_t));
	memset(gc->counts[k] + gc->size[k], 0,
	       (size - gc->size[k]) * sizeof(uint32_t));
	gc->size[k] = size;
}

void group_counts_input(struct group_counts *gc, const struct index *ix,
			size_t input_no)
{
	size_t size = index_size(ix);

	for (size_t k = 0; k < gc->n; k++) {
		if (!group_has(&gc->groups[k], input_no))
			continue;
		group_grow(gc, k, size);
		/* A content's pages in one group stay below 2^32 as the
		 * index's own count does (at most 2^28 ids, 2^32 pages). */
		for (size_t id = 0; id < size; id++)
			gc->counts[k][id] += index_count(ix, id, 1);
	}
}

const uint32_t *group_counts_get(struct group_counts *gc, size_t k, size_t size)
{
	group_grow(gc, k, size ? size : 1);
	return gc->counts[k];
}

void group_counts_free(struct group_counts *gc)
{
	if (!gc)
		return;
	for (size_t k = 0; k < gc->n; k++)
		free(gc->counts[k]);
	free(gc->counts);
	free(gc->size);
	free(gc);
}
