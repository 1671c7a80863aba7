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

/* Whether input @k is in @g already (its inputs are kept ascending). */
static int group_has(const struct group *g, size_t k)
{
	for (size_t i = 0; i < g->ninputs; i++)
		if (g->inputs[i] == k)
			return 1;
	return 0;
}

/* Add every input named @name (@len bytes); the count added, 0 if none. */
static size_t group_add(struct group *g, const char *name, size_t len,
			const struct input *inputs, size_t ninputs)
{
	size_t found = 0;

	for (size_t k = 0; k < ninputs; k++) {
		if (strlen(inputs[k].name) != len ||
		    strncmp(inputs[k].name, name, len) != 0)
			continue;
		found++;
		if (!group_has(g, k))
			g->inputs[g->ninputs++] = k;
	}
	return found;
}

static int cmp_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return x < y ? -1 : x > y;
}

int group_parse(const char *spec, const struct input *inputs, size_t ninputs,
		struct group *g, char *why, size_t len)
{
	const char *eq = strchr(spec, '='), *p;

	memset(g, 0, sizeof(*g));
	if (!eq || eq == spec) {
		snprintf(why, len, "--group wants NAME=INPUT[,INPUT...], not '%.60s'",
			 spec);
		return -1;
	}
	g->inputs = xcalloc(ninputs ? ninputs : 1, sizeof(*g->inputs));
	for (p = eq + 1; *p; ) {
		size_t n = strcspn(p, ",");

		if (n && !group_add(g, p, n, inputs, ninputs)) {
			snprintf(why, len, "--group %.*s: no input named '%.*s'",
				 (int)(eq - spec > 60 ? 60 : eq - spec), spec,
				 (int)(n > 60 ? 60 : n), p);
			group_free(g);
			return -1;
		}
		p += n + (p[n] == ',');
	}
	if (!g->ninputs) {
		snprintf(why, len, "--group %.*s: no input given",
			 (int)(eq - spec > 60 ? 60 : eq - spec), spec);
		group_free(g);
		return -1;
	}
	qsort(g->inputs, g->ninputs, sizeof(*g->inputs), cmp_size);
	g->name = xmalloc((size_t)(eq - spec) + 7);
	snprintf(g->name, (size_t)(eq - spec) + 7, "group:%.*s", (int)(eq - spec),
		 spec);
	return 0;
}

void group_free(struct group *g)
{
	free(g->name);
	free(g->inputs);
	memset(g, 0, sizeof(*g));
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
