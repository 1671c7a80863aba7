/* SPDX-License-Identifier: MIT */
/*
 * A series restricted to the processes ksmd scans (marked.h): the same
 * contents, fewer pages, the addresses of the processes left out dropped
 * from the union the replay walks (an address no snapshot has would still
 * be a step of its walk).
 */
#include <stdlib.h>

#include "../util/util.h"
#include "marked.h"

void series_marked(const struct series *sr, const uint64_t *keep,
		   unsigned shift, struct series *out, struct snapshot *snaps)
{
	uint32_t *renum = xcalloc(sr->naddr + 1, sizeof(*renum));
	uint64_t *addr = xcalloc(sr->naddr + 1, sizeof(*addr));
	size_t n = 0;

	/* first mark the addresses some kept page has (renum: 1 + new) */
	for (size_t s = 0; s < sr->nsnaps; s++)
		for (size_t i = 0; i < sr->snaps[s].n; i++) {
			uint32_t a = sr->snaps[s].addr_no[i];

			if (keep[s] >> (sr->addr[a] >> shift) & 1)
				renum[a] = 1;
		}
	for (size_t a = 0; a < sr->naddr; a++)
		if (renum[a]) {
			addr[n] = sr->addr[a];
			renum[a] = (uint32_t)++n;
		}
	for (size_t s = 0; s < sr->nsnaps; s++) {
		const struct snapshot *in = &sr->snaps[s];
		struct snapshot *o = &snaps[s];

		o->n = 0;
		o->addr_no = xcalloc(in->n + 1, sizeof(*o->addr_no));
		o->id = xcalloc(in->n + 1, sizeof(*o->id));
		for (size_t i = 0; i < in->n; i++) {
			uint32_t a = in->addr_no[i];

			if (!(keep[s] >> (sr->addr[a] >> shift) & 1))
				continue;
			o->addr_no[o->n] = renum[a] - 1;
			o->id[o->n++] = in->id[i];
		}
	}
	*out = *sr;
	out->naddr = n;
	out->addr = addr;
	out->snaps = snaps;
	free(renum);
}

void series_marked_free(struct series *out, struct snapshot *snaps)
{
	for (size_t s = 0; s < out->nsnaps; s++) {
		free(snaps[s].addr_no);
		free(snaps[s].id);
	}
	free((void *)out->addr);
	out->addr = NULL;
}
