/* SPDX-License-Identifier: MIT */
/*
 * The histogram report, in the manner of zdb -S: a content seen c times
 * falls in bucket 2^floor(log2 c). Tables add a bar chart of the referenced
 * pages and a total row.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../util/util.h"
#include "../report_sink.h"
#include "../write/cell.h"
#include "../write/writer.h"

static const struct column hist_cols[] = {
	COL("input"), COL("bucket"), COL("groups"),
	COL("pages"), COL_F("allocated_bytes", COL_DROP),
	COL_F("referenced_bytes", COL_DROP), COL_F("pages_bar", COL_TABLE_ONLY),
};

#define NCOLS (sizeof(hist_cols) / sizeof(hist_cols[0]))
/* Width of the longest bar. */
#define BAR 40


/* One scope's buckets, then its total. */
static void histogram_rows(const struct writer *w, const struct scope_copy *in)
{
	const struct figures *f = &in->f;
	uint64_t most = 0, groups = 0, pages = 0;

	for (int b = 0; b < 64; b++)
		if (f->hist_pages[b] > most)
			most = f->hist_pages[b];
	for (int b = 0; b < 64; b++) {
		char bar[BAR + 1];
		size_t len;

		if (!f->hist_contents[b])
			continue;
		/* Any non-empty bucket gets at least one mark. */
		len = (size_t)((f->hist_pages[b] * BAR + most - 1) / most);
		memset(bar, '#', len);
		bar[len] = '\0';
		struct cell row[NCOLS] = {
			cell_str(in->name),
			cell_uint(UINT64_C(1) << b),
			cell_uint(f->hist_contents[b]),
			cell_uint(f->hist_pages[b]),
			cell_uint(f->hist_contents[b] * PAGE_BYTES),
			cell_uint(f->hist_pages[b] * PAGE_BYTES),
			cell_str(bar),
		};

		w->row(w, row);
		groups += f->hist_contents[b];
		pages += f->hist_pages[b];
	}
	struct cell total[NCOLS] = {
		cell_str(in->name), cell_str("total"),
		cell_uint(groups), cell_uint(pages),
		cell_uint(groups * PAGE_BYTES), cell_uint(pages * PAGE_BYTES),
		cell_str(""),
	};

	w->total(w, total);
}

static void histogram_print(struct sink *sk)
{
	struct scope_sink *h = (struct scope_sink *)sk;

	h->r.rs->out->begin(h->r.rs->out, "histogram", hist_cols, NCOLS, 0);
	for (size_t i = 0; i < h->nrows; i++)
		histogram_rows(h->r.rs->out, &h->rows[i]);
	h->r.rs->out->end(h->r.rs->out);
}

static const struct sink_ops histogram_ops = {
	.scope = scope_sink_scope, .print = histogram_print, .free = scope_sink_free,
};

struct sink *histogram_create(const struct report_setup *rs)
{
	return scope_sink_new(rs, &histogram_ops);
}
