/* SPDX-License-Identifier: MIT */
/*
 * The volatility report (--series): how each snapshot differs from the one
 * before it, address by address, and how many of the changed pages had a
 * duplicate (a merge KSM would have had to break).
 */
#include <stdlib.h>
#include <string.h>

#include "../../scan/series.h"
#include "../../util/util.h"
#include "../report_sink.h"
#include "../write/cell.h"
#include "../write/writer.h"

static const struct column volatility_cols[] = {
	COL("input"), COL("from"), COL("to"), COL("pages"),
	COL_F("unchanged_pages", COL_DROP), COL("changed_pages"),
	COL("new_pages"), COL_F("gone_pages", COL_DROP), COL("merges_broken"),
};

#define NCOLS (sizeof(volatility_cols) / sizeof(volatility_cols[0]))

struct volatility {
	struct report_sink r;		/* first: its sink and its setup */
	char *name;
	struct volatility_row *rows;
	size_t nrows;
};

static void volatility_series(struct sink *sk, const struct series_result *r)
{
	struct volatility *v = (struct volatility *)sk;

	v->name = xstrdup(r->name);
	v->rows = xcalloc(r->nvol + 1, sizeof(*v->rows));
	memcpy(v->rows, r->vol, r->nvol * sizeof(*v->rows));
	v->nrows = r->nvol;
}

static void volatility_print(struct sink *sk)
{
	struct volatility *v = (struct volatility *)sk;
	const struct writer *w = v->r.rs->out;

	w->begin(w, "volatility", volatility_cols, NCOLS, 0);
	for (size_t i = 0; i < v->nrows; i++) {
		const struct volatility_row *r = &v->rows[i];
		struct cell row[NCOLS] = {
			cell_str(v->name), cell_uint(r->from), cell_uint(r->to),
			cell_uint(r->pages), cell_uint(r->unchanged_pages),
			cell_uint(r->changed_pages), cell_uint(r->new_pages),
			cell_uint(r->gone_pages), cell_uint(r->merges_broken),
		};

		w->row(w, row);
	}
	if (!v->nrows)
		w->note(w, "(one snapshot: nothing to compare)");
	w->end(w);
}

static void volatility_free(struct sink *sk)
{
	struct volatility *v = (struct volatility *)sk;

	free(v->name);
	free(v->rows);
	free(v);
}

static const struct sink_ops volatility_ops = {
	.series = volatility_series, .print = volatility_print,
	.free = volatility_free,
};

struct sink *volatility_create(const struct report_setup *rs)
{
	return report_sink_new(sizeof(struct volatility), &volatility_ops, rs);
}
