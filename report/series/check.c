/* SPDX-License-Identifier: MIT */
/*
 * --check=FORECAST.json: the rows of a check (check/compare.c compares),
 * and for people the sentences under them.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../../check/compare.h"
#include "../../util/util.h"
#include "../report.h"
#include "../write/cell.h"
#include "../write/writer.h"

static const struct column check_cols[] = {
	{ "input", 0, 0, { 0 } }, { "figure", 0, 0, { 0 } },
	{ "forecast", 0, 0, { 0 } },
	{ "actual", 0, 0, { .nan = "none" } },
	{ "error_percent", 0, 0, { .name = "error %", .decimals = DECIMALS(1) } },
	/* beyond the contract: the forecast's full scan compared with, and
	 * whether the row is within the tolerance */
	{ "scan", 0, COL_NOT_PEOPLE, { 0 } },
	{ "within_tolerance", 0, 0, { .name = "within", .no = "no", .yes = "yes" } },
};

#define NCOLS (sizeof(check_cols) / sizeof(check_cols[0]))

/* One row. */
static void row(const struct writer *w, const struct check_row *r)
{
	struct cell cells[NCOLS] = {
		cell_str(r->input), cell_str(r->figure), cell_real(r->forecast, 0),
		cell_real(r->actual, 0), cell_real(r->error, 3),
		cell_uint(r->scan), cell_uint((uint64_t)r->within),
	};

	w->row(w, cells);
}

/* What a person reads under the table. */
static void sentences(const struct writer *w, const struct check_result *c)
{
	char text[400], pages[64] = "";

	snprintf(text, sizeof(text), "ksmd did %llu full scans since the forecast "
		 "began: the host's figures are compared with the forecast's after "
		 "%llu, each process's with its last (%llu).",
		 (unsigned long long)c->done, (unsigned long long)c->scan,
		 (unsigned long long)c->last);
	w->note(w, text);
	if (c->done < c->last) {
		snprintf(text, sizeof(text), "The forecast settles after %llu full "
			 "scans: check again once ksmd has done them.",
			 (unsigned long long)c->last);
		w->note(w, text);
	}
	if (c->gone || c->unreadable) {
		snprintf(text, sizeof(text), "none: %zu processes have exited (or "
			 "their pid is another's) and %zu could not be read by this "
			 "user (run as root).", c->gone, c->unreadable);
		w->note(w, text);
	}
	if (c->tolerance.pages)
		snprintf(pages, sizeof(pages), " or %llu pages",
			 (unsigned long long)c->tolerance.pages);
	if (c->outside)
		snprintf(text, sizeof(text), "%zu of %zu figures are outside "
			 "+-%g%%%s.", c->outside, c->nrows, c->tolerance.percent,
			 pages);
	else
		snprintf(text, sizeof(text), "All %zu figures are within +-%g%%%s.",
			 c->nrows, c->tolerance.percent, pages);
	w->note(w, text);
}

void check_report(const struct writer *w, const struct check_result *c,
		  int people)
{
	w->begin(w, "check", check_cols, NCOLS, 0);
	for (size_t i = 0; i < c->nrows; i++)
		row(w, &c->rows[i]);
	if (people)
		sentences(w, c);
	w->end(w);
}
