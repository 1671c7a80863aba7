/* SPDX-License-Identifier: MIT */
/*
 * The mitigations report: what KSM would save over all the inputs under
 * each rule that limits merging across trust domains (--group), beside
 * today's KSM, and how many pages each rule still merges across domains
 * (docs/exposure.md). The rules' arithmetic is model/exposure.c's, on
 * KSM's own (model/ksm.c), content by content.
 *
 * Memory: the domains' (domains.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../scan/domains.h"
#include "../../util/util.h"
#include "../report_sink.h"
#include "../write/cell.h"
#include "../write/writer.h"

static const struct column mitigations_cols[] = {
	COL("mitigation"), COL("saved_pages"), COL("saved_bytes"),
	COL("saved_percent"), COL("exposed_pages"),
};

#define NCOLS (sizeof(mitigations_cols) / sizeof(mitigations_cols[0]))

struct mitigations {
	struct report_sink r;		/* first: its sink and its setup */
	struct domains d;
	struct mitigation_sum sum[MITIGATIONS];
};

/* Every content under every rule. */
static void mitigations_sum(struct mitigations *m)
{
	const struct domains *d = &m->d;
	uint32_t *pages = xcalloc(d->n ? d->n : 1, sizeof(*pages));

	for (size_t id = 0; id < d->size; id++) {
		size_t n = d->start[id + 1] - d->start[id];

		for (size_t i = 0; i < n; i++)
			pages[i] = d->by[d->start[id] + i].pages;
		for (int r = 0; r < MITIGATIONS; r++)
			mitigation_add((enum mitigation)r, pages, n,
				       (enum page_kind)d->kind[id],
				       &m->r.rs->scan->ksm, &m->sum[r]);
	}
	free(pages);
}

static void mitigations_scope(struct sink *sk, const struct scope *sc)
{
	struct mitigations *m = (struct mitigations *)sk;

	domains_scope(&m->d, sc, 0);
	if (sc->all && !sc->group)
		mitigations_sum(m);
}

/* For people: what partitioning keeps, in one sentence. */
static void mitigations_note(const struct mitigations *m)
{
	const struct mitigation_sum *none = &m->sum[MIT_NONE];
	const struct mitigation_sum *part = &m->sum[MIT_PARTITIONED];
	char text[300];

	snprintf(text, sizeof(text), "saved_percent: of the saving without "
		 "mitigation. Partitioning by domain keeps %.1f%% of the saving "
		 "and merges nothing across domains; without mitigation %llu "
		 "pages would be merged across domains.",
		 ksm_saved_percent(part->saved_pages, none->saved_pages),
		 (unsigned long long)none->exposed_pages);
	m->r.rs->out->note(m->r.rs->out, text);
	if (m->r.rs->scan->ksm.use_zero_pages)
		m->r.rs->out->note(m->r.rs->out, "With -z (use_zero_pages) every zero page is "
				   "saved under every rule; the zero pages count "
				   "as exposed where the rule lets them merge "
				   "across domains.");
}

static void mitigations_print(struct sink *sk)
{
	struct mitigations *m = (struct mitigations *)sk;
	const struct writer *w = m->r.rs->out;
	uint64_t none = m->sum[MIT_NONE].saved_pages;

	w->begin(w, "mitigations", mitigations_cols, NCOLS, 0);
	for (int r = 0; m->d.built && r < MITIGATIONS; r++) {
		const struct mitigation_sum *s = &m->sum[r];
		struct cell row[NCOLS] = {
			cell_str(mitigation_name((enum mitigation)r)),
			cell_uint(s->saved_pages),
			cell_bytes(s->saved_pages * PAGE_BYTES),
			cell_real(ksm_saved_percent(s->saved_pages, none), 1),
			cell_uint(s->exposed_pages),
		};

		w->row(w, row);
	}
	if (m->d.built)
		mitigations_note(m);
	w->end(w);
}

static void mitigations_free(struct sink *sk)
{
	struct mitigations *m = (struct mitigations *)sk;

	domains_free(&m->d);
	free(m);
}

static const struct sink_ops mitigations_ops = {
	.scope = mitigations_scope, .print = mitigations_print,
	.free = mitigations_free,
};

struct sink *mitigations_create(const struct report_setup *rs)
{
	struct mitigations *m = report_sink_new(sizeof(*m), &mitigations_ops, rs);

	report_domains(&m->d, rs);
	return &m->r.sink;
}
