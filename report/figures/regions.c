/* SPDX-License-Identifier: MIT */
/* The regions report: pages, zero and redundant pages per region of each input. */
#include <stdlib.h>

#include "../../util/util.h"
#include "../report_sink.h"
#include "../write/cell.h"
#include "../write/writer.h"

static const struct column regions_cols[] = {
	COL("input"), COL("region"), COL("start"), COL("end"),
	COL("pages"), COL_F("zero_pages", COL_DROP), COL("redundant_pages"),
};

#define NCOLS (sizeof(regions_cols) / sizeof(regions_cols[0]))

/* The figures of one region of one input. */
struct region_row {
	const char *input;		/* input name */
	const struct region *of;	/* the reader's region, until its input ends */
	char *name;			/* region name, copied when its input ends */
	uint64_t start, end;		/* the region's addresses, likewise */
	uint64_t pages;			/* pages read in it */
	uint64_t zero_pages;		/* of which all zero */
	uint64_t redundant_pages;	/* of which seen earlier in the input */
};

/* The sink: the rows in scan order; those from done copied of the reader. */
struct regions {
	struct report_sink r;		/* first: its sink and its setup */
	struct region_row *rows;
	size_t nrows, cap, done;
};

/* The row a page counts in: the last one, or a new one. */
static struct region_row *regions_row(struct regions *r, const struct page_event *pg)
{
	struct region_row *last = r->nrows > r->done ? &r->rows[r->nrows - 1] : NULL;

	if (last && last->of == pg->region)
		return last;
	if (r->nrows == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 64;
		r->rows = xreallocarray(r->rows, r->cap, sizeof(*r->rows));
	}
	r->rows[r->nrows] = (struct region_row){ .input = pg->input, .of = pg->region };
	return &r->rows[r->nrows++];
}

static void regions_page(struct sink *sk, const struct page_event *pg)
{
	struct region_row *row = regions_row((struct regions *)sk, pg);

	row->pages++;
	row->zero_pages += pg->zero != 0;
	row->redundant_pages += pg->seen != 0;
}

/* Readers may learn where a region ends only at its end: copy it now. */
static void regions_scope(struct sink *sk, const struct scope *sc)
{
	struct regions *r = (struct regions *)sk;

	if (sc->all)
		return;
	for (; r->done < r->nrows; r->done++) {
		struct region_row *row = &r->rows[r->done];

		row->name = xstrdup(row->of->name);
		row->start = row->of->start;
		row->end = row->of->end;
		row->of = NULL;
	}
}

static void regions_print(struct sink *sk)
{
	struct regions *r = (struct regions *)sk;
	const struct writer *w = r->r.rs->out;

	w->begin(w, "regions", regions_cols, NCOLS, 0);
	for (size_t i = 0; i < r->nrows; i++) {
		const struct region_row *g = &r->rows[i];
		struct cell row[NCOLS] = {
			cell_str(g->input), cell_str(g->name), cell_hex(g->start),
			cell_hex(g->end), cell_uint(g->pages),
			cell_uint(g->zero_pages), cell_uint(g->redundant_pages),
		};

		w->row(w, row);
	}
	w->end(w);
}

static void regions_free(struct sink *sk)
{
	struct regions *r = (struct regions *)sk;

	for (size_t i = 0; i < r->nrows; i++)
		free(r->rows[i].name);
	free(r->rows);
	free(r);
}

static const struct sink_ops regions_ops = {
	.needs = SINK_PAGES,
	.page = regions_page, .scope = regions_scope, .print = regions_print,
	.free = regions_free,
};

struct sink *regions_create(const struct report_setup *rs)
{
	return report_sink_new(sizeof(struct regions), &regions_ops, rs);
}
