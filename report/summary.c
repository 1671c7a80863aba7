/* SPDX-License-Identifier: MIT */
/*
 * The summary report: the KSM figures per input and algorithm, as machines
 * read them (CSV, JSON, a table with -l); people get headline.c's view.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/util.h"
#include "report.h"


static const struct column summary_cols[] = {
	{ "input", 0, 0 }, { "format", 0, 0 }, { "algo", 0, 0 }, { "pages", 0, 0 },
	{ "zero_pages", 0, 0 }, { "distinct_pages", 0, 0 }, { "duplicate_ratio", 0, 0 },
	{ "pages_shared", 0, 0 }, { "pages_sharing", 0, 0 }, { "ksm_zero_pages", 0, 0 },
	{ "saved_bytes", 0, 0 }, { "saved_percent", 0, 0 }, { "general_profit", 0, 0 },
	{ "collisions", 0, 0 }, { "expected_collisions", 0, 0 }, { "hash_mib_s", 0, 0 },
	{ "ns_per_page", 0, 0 }, { "status", 0, 0 },
};

#define NCOLS (sizeof(summary_cols) / sizeof(summary_cols[0]))

/* The figures as one row for algorithm number @a. */
static void summary_row(const struct writer *w, const struct scope_copy *in,
			const struct algo *algo, size_t a)
{
	const struct figures *f = &in->f;
	double secs = f->seconds[a];
	/* Speed of the pages really hashed: zero pages' digests are known. */
	double mib = (double)f->hashed_pages * PAGE_BYTES / (1024.0 * 1024.0);
	struct cell row[NCOLS] = {
		cell_str(in->name),
		cell_str(in->format),
		cell_str(algo->name),
		cell_uint(f->pages),
		cell_uint(f->zero_pages),
		cell_uint(f->distinct_pages),
		cell_real(f->duplicate_ratio, 6),
		cell_uint(f->pages_shared),
		cell_uint(f->pages_sharing),
		cell_uint(f->ksm_zero_pages),
		cell_uint(f->saved_bytes),
		cell_real(f->saved_percent, 4),
		cell_int(f->general_profit),
		cell_uint(f->collisions[a]),
		cell_real(f->expected_collisions[a], -1),
		cell_real(secs > 0 ? mib / secs : 0.0, 1),
		cell_real(f->hashed_pages ? secs * 1e9 / (double)f->hashed_pages : 0.0, 1),
		cell_str(scope_status_name(in->status)),
	};

	w->row(row);
}

static void summary_print(struct sink *sk)
{
	struct scope_sink *s = (struct scope_sink *)sk;
	const struct writer *w = s->rs->out;
	const struct scan_config *cfg = s->rs->scan;

	if (for_people(s->rs)) {
		summary_people(s->rs, s->rows, s->nrows);
		return;
	}
	w->begin("summary", summary_cols, NCOLS, 0);
	for (size_t i = 0; i < s->nrows; i++)
		for (size_t a = 0; a < cfg->nalgos; a++)
			summary_row(w, &s->rows[i], cfg->algos[a], a);
	summary_sentences(s->rs, s->rows, s->nrows);
	w->end();
}

static const struct sink_ops summary_ops = {
	.scope = scope_sink_scope, .print = summary_print, .free = scope_sink_free,
};

struct sink *summary_create(const struct report_setup *rs)
{
	return scope_sink_new(rs, &summary_ops);
}
