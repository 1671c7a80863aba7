/* SPDX-License-Identifier: MIT */
/*
 * Per-page records of live processes for the thp and numa reports: kept
 * for the whole run, so that "*" and the --by rows are counted from the
 * same pages as each process.
 */
#include <stdlib.h>
#include <string.h>

#include "../model/ksm.h"
#include "../util/util.h"
#include "group.h"
#include "pagerec.h"

void page_recs_add(struct page_recs *r, const struct page_event *pg)
{
	if (!r->v || r->input != pg->input_no) {
		r->first = r->n;
		r->input = pg->input_no;
	}
	if (r->n == r->cap) {
		r->cap = 2 * r->cap + 4096;
		r->v = xreallocarray(r->v, r->cap, sizeof(*r->v));
	}
	/* Addresses only of the current input, from r->addr[0]. */
	if (r->n - r->first == r->addr_cap) {
		r->addr_cap = 2 * r->addr_cap + 4096;
		r->addr = xreallocarray(r->addr, r->addr_cap, sizeof(*r->addr));
	}
	r->addr[r->n - r->first] = pg->address;
	r->v[r->n++] = (struct page_rec){ .input = (uint32_t)pg->input_no,
		.id = pg->id, .tag = -1, .zero = (uint32_t)pg->zero };
}

struct page_rec *page_recs_current(struct page_recs *r, size_t input, size_t *n)
{
	*n = r->v && r->input == input ? r->n - r->first : 0;
	return *n ? r->v + r->first : NULL;
}

struct page_rec *page_recs_scope(const struct page_recs *r, const struct scope *sc,
				 const struct scan_config *cfg, size_t *n)
{
	const struct group *g = scope_group(cfg, sc);
	struct page_rec *out;

	*n = 0;
	if (!r->n)
		return NULL;
	out = xcalloc(r->n, sizeof(*out));
	for (size_t i = 0; i < r->n; i++) {
		size_t k = r->v[i].input;

		if (sc->all ? (!sc->group || (g && group_has(g, k))) : k == sc->input_no)
			out[(*n)++] = r->v[i];
	}
	if (!*n) {
		free(out);
		return NULL;
	}
	return out;
}

/* Order by tag, then content (by_tag), or by content alone. */
static int cmp_tag_id(const void *a, const void *b)
{
	const struct page_rec *x = a, *y = b;

	if (x->tag != y->tag)
		return x->tag < y->tag ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static int cmp_id(const void *a, const void *b)
{
	const struct page_rec *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

uint64_t page_recs_saved(struct page_rec *v, size_t n, int by_tag,
			 const struct ksm_params *p)
{
	uint64_t saved = 0;

	qsort(v, n, sizeof(*v), by_tag ? cmp_tag_id : cmp_id);
	for (size_t i = 0, j; i < n; i = j) {
		for (j = i + 1; j < n && v[j].id == v[i].id &&
		     (!by_tag || v[j].tag == v[i].tag); j++)
			;
		saved += ksm_saved_pages(j - i, (int)v[i].zero, p);
	}
	return saved;
}

void page_recs_free(struct page_recs *r)
{
	free(r->v);
	free(r->addr);
	memset(r, 0, sizeof(*r));
}
