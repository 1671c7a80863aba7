/* SPDX-License-Identifier: MIT */
/*
 * Trust domains (domains.h): each content's pages per domain, byte-exact
 * as the index counts them, and the kind of each content that crosses
 * domains.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../dump/source.h"
#include "../model/zram.h"
#include "../util/util.h"
#include "domains.h"

/* Pages of a known file read at once. */
#define KNOWN_BATCH 64

void domains_init(struct domains *d, const struct scan_config *cfg)
{
	size_t n = cfg->ninputs;

	d->cfg = cfg;
	d->lists = xcalloc(n ? n : 1, sizeof(*d->lists));
	d->nlist = xcalloc(n ? n : 1, sizeof(*d->nlist));
}

const char *domain_name(const struct domains *d, size_t k)
{
	const char *name = d->groups[k].name;

	return strncmp(name, "group:", 6) == 0 ? name + 6 : name;
}

/* An input is counted: keep its contents as (id, pages). */
static void domains_input(struct domains *d, const struct scope *sc)
{
	size_t size = index_size(sc->ix), n = 0;
	struct domain_pages *l = xcalloc(size ? size : 1, sizeof(*l));

	for (size_t id = 0; id < size; id++) {
		uint32_t c = index_count(sc->ix, id, 1);

		if (c)
			l[n++] = (struct domain_pages){ (uint32_t)id, c };
	}
	d->lists[sc->input_no] = xreallocarray(l, n ? n : 1, sizeof(*l));
	d->nlist[sc->input_no] = n;
}

/*
 * Regroup the inputs' lists by content, domain by domain, so that each
 * content's domains come in ascending order and the inputs of one domain
 * add up in one entry.
 */
static void domains_regroup(struct domains *d)
{
	const struct scan_config *cfg = d->cfg;
	size_t *next = xcalloc(d->size + 1, sizeof(*next)), total;

	d->start = xcalloc(d->size + 1, sizeof(*d->start));
	/* At most one entry per (content, input): room for that, then packed. */
	for (size_t k = 0; k < cfg->ninputs; k++)
		for (size_t i = 0; i < d->nlist[k]; i++)
			next[d->lists[k][i].who + 1]++;
	for (size_t id = 0; id < d->size; id++)
		next[id + 1] += next[id];
	total = next[d->size];
	d->by = xcalloc(total ? total : 1, sizeof(*d->by));
	memcpy(d->start, next, (d->size + 1) * sizeof(*next));
	for (size_t g = 0; g < d->n; g++)
		for (size_t j = 0; j < d->groups[g].ninputs; j++) {
			size_t k = d->groups[g].inputs[j];

			for (size_t i = 0; i < d->nlist[k]; i++) {
				const struct domain_pages *h = &d->lists[k][i];
				size_t *at = &next[h->who];

				if (*at > d->start[h->who] && d->by[*at - 1].who == g)
					d->by[*at - 1].pages += h->pages;
				else
					d->by[(*at)++] = (struct domain_pages){
						(uint32_t)g, h->pages };
			}
			free(d->lists[k]);
			d->lists[k] = NULL;
		}
	/* Pack: content id's entries begin at start[id] and end at next[id]. */
	for (size_t id = 0, to = 0; id < d->size; id++) {
		size_t from = d->start[id], len = next[id] - from;

		memmove(&d->by[to], &d->by[from], len * sizeof(*d->by));
		d->start[id] = to;
		to += len;
		next[id] = to;
	}
	/* Content id's entries now end where id + 1's begin. */
	if (d->size)
		memmove(d->start + 1, next, d->size * sizeof(*next));
	free(next);
}

/* Mark in @known the contents equal to a page of @path (zero pages aside). */
static int known_file(const struct index *ix, const char *path,
		      unsigned char *known)
{
	struct source s = { 0 };
	unsigned char *buf = xmalloc((size_t)KNOWN_BATCH * PAGE_BYTES);
	uint32_t key[KNOWN_BATCH], ids[KNOWN_BATCH];
	unsigned char skip[KNOWN_BATCH];
	ssize_t got = 0;

	if (source_open(&s, path, path, SOURCE_NO_STDIN) < 0)
		goto fail;
	do {
		size_t n;

		/* Holes of a sparse file hold no page to know: skip them. */
		source_skip_hole(&s);
		got = source_read(&s, buf, (size_t)KNOWN_BATCH * PAGE_BYTES);
		if (got < 0)
			goto fail;
		n = ((size_t)got + PAGE_BYTES - 1) / PAGE_BYTES;
		/* A last partial page is compared as memory holds it: zero-filled. */
		memset(buf + got, 0, n * PAGE_BYTES - (size_t)got);
		for (size_t i = 0; i < n; i++) {
			skip[i] = (unsigned char)page_is_zero(buf + i * PAGE_BYTES);
			key[i] = skip[i] ? 0 : index_key(ix, buf + i * PAGE_BYTES);
		}
		index_find_many(ix, buf, key, skip, n, ids);
		for (size_t i = 0; i < n; i++)
			if (ids[i] != NO_ID)
				known[ids[i]] = 1;
	} while ((size_t)got == (size_t)KNOWN_BATCH * PAGE_BYTES);
	source_close(&s);
	free(buf);
	return 0;
fail:
	if (s.err_at)
		error("%s: %s, at offset %llu", path, s.err,
		      (unsigned long long)s.err_at);
	else
		error("%s: %s", path, s.err);
	source_close(&s);
	free(buf);
	return -1;
}

/* The contents equal to a page of a --known file: a flag per content. */
static unsigned char *known_contents(struct domains *d, const struct index *ix)
{
	unsigned char *known = xcalloc(d->size ? d->size : 1, 1);

	for (size_t i = 0; i < d->nknown; i++)
		if (known_file(ix, d->known[i], known) < 0)
			*d->failed = 1;
	return known;
}

/* Class each content: read the bytes of those that cross domains; with
 * @want, every kind, else only zero and same-filled. */
static void domains_class(struct domains *d, const struct index *ix, int want)
{
	unsigned char *known = want && d->nknown ? known_contents(d, ix) : NULL;

	d->kind = xcalloc(d->size ? d->size : 1, 1);
	d->band = xcalloc(d->size ? d->size : 1, 1);
	for (size_t id = 0; id < d->size; id++) {
		const unsigned char *bytes;
		double bits;

		if (index_is_zero(ix, id)) {
			d->kind[id] = KIND_ZERO;
			continue;
		}
		d->kind[id] = KIND_LOW;
		if (d->start[id + 1] - d->start[id] < 2)
			continue;
		/* The index keeps every content readable to the end of the scan. */
		bytes = index_entry(ix, id)->bytes;
		if (!want) {	/* the rules tell only same-filled pages apart */
			d->kind[id] = zram_same_filled(bytes) ? KIND_SAME : KIND_LOW;
			continue;
		}
		d->kind[id] = (unsigned char)page_kind_of(bytes,
			known && known[id], &bits);
		d->band[id] = (unsigned char)entropy_band(bits);
	}
	free(known);
}

void domains_scope(struct domains *d, const struct scope *sc, int full)
{
	if (sc->group)
		return;
	if (!sc->all) {
		domains_input(d, sc);
		return;
	}
	d->size = index_size(sc->ix);
	domains_regroup(d);
	domains_class(d, sc->ix, full);
	d->built = 1;
}

void domains_free(struct domains *d)
{
	for (size_t k = 0; d->lists && k < d->cfg->ninputs; k++)
		free(d->lists[k]);
	free(d->lists);
	free(d->nlist);
	free(d->start);
	free(d->by);
	free(d->kind);
	free(d->band);
}
