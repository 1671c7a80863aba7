/* SPDX-License-Identifier: MIT */
/* The top report (SPEC section 5): the most-shared contents of each input. */
#include "report.h"

static const struct column top_cols[] = {
	{ "input", 0, 0 }, { "rank", 0, 0 }, { "pages", 0, 0 },
	{ "digest", 0, 0 }, { "description", 0, 0 },
};

#define NCOLS (sizeof(top_cols) / sizeof(top_cols[0]))

void top_report(const struct writer *w, const struct top_row *rows, size_t nrows)
{
	w->begin("top", top_cols, NCOLS, 0);
	for (size_t i = 0; i < nrows; i++) {
		struct cell row[NCOLS] = {
			cell_str(rows[i].input), cell_uint(rows[i].rank),
			cell_uint(rows[i].pages), cell_digest(rows[i].digest),
			cell_str(rows[i].description),
		};

		w->row(row);
	}
	w->end();
}
