/* SPDX-License-Identifier: MIT */
/*
 * --group=NAME=INPUT,...: trust groups, inputs that may share memory only
 * with each other, named by the inputs' names as the reports show them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/util.h"
#include "cli.h"

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
	for (size_t i = 0; i < g->nparts; i++)
		free(g->parts[i]);
	free(g->parts);
	memset(g, 0, sizeof(*g));
}

int groups_domains(const struct group *g, size_t n, const struct input *inputs,
		   size_t ninputs, char *why, size_t len)
{
	if (n < 2) {
		snprintf(why, len, "%s", "trust domains are needed: name two or "
			 "more with --group=NAME=INPUT,... (each input in one), "
			 "or give --by for units, cgroups, containers, VMs or processes");
		return -1;
	}
	for (size_t k = 0; k < ninputs; k++) {
		size_t first = n, in = 0;

		for (size_t i = 0; i < n; i++)
			if (group_has(&g[i], k) && in++ == 0)
				first = i;
		if (in == 1)
			continue;
		if (in == 0)
			snprintf(why, len, "input '%.60s' is in no trust domain "
				 "(--group, or --by row): each input must be in one",
				 inputs[k].name);
		else
			snprintf(why, len, "input '%.60s' is in %.60s and "
				 "another: trust domains may not overlap",
				 inputs[k].name, g[first].name);
		return -1;
	}
	return 0;
}
