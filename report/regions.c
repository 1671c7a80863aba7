/* SPDX-License-Identifier: MIT */
/* The regions report (SPEC section 5): pages per region of each input. */
#include "report.h"

static const struct column regions_cols[] = {
	{ "input", 0, 0 }, { "region", 0, 0 }, { "start", 0, 0 }, { "end", 0, 0 },
	{ "pages", 0, 0 }, { "zero_pages", 0, 0 }, { "redundant_pages", 0, 0 },
};

#define NCOLS (sizeof(regions_cols) / sizeof(regions_cols[0]))

void regions_report(const struct writer *w, const struct region_row *rows,
		    size_t nrows)
{
	w->begin("regions", regions_cols, NCOLS, 0);
	for (size_t i = 0; i < nrows; i++) {
		const struct region_row *r = &rows[i];
		struct cell row[NCOLS] = {
			cell_str(r->input), cell_str(r->name), cell_hex(r->start),
			cell_hex(r->end), cell_uint(r->pages),
			cell_uint(r->zero_pages), cell_uint(r->redundant_pages),
		};

		w->row(row);
	}
	w->end();
}
