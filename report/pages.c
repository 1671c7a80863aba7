/* SPDX-License-Identifier: MIT */
/* The pages report (SPEC section 5): one row per page, streamed as it is read. */
#include "report.h"

static struct column pages_cols[3 + ALGO_MAX];
static size_t pages_ncols;

void pages_begin(const struct writer *w, const struct algo *const *algos,
		 size_t nalgos, int input_width)
{
	pages_cols[0] = (struct column){ "input", input_width > 5 ? input_width : 5, 0 };
	pages_cols[1] = (struct column){ "address", 18, 0 };
	pages_cols[2] = (struct column){ "zero", 4, 0 };
	for (size_t a = 0; a < nalgos; a++)
		pages_cols[3 + a] = (struct column){ algos[a]->name,
						     (int)algos[a]->bits / 4, 0 };
	pages_ncols = 3 + nalgos;
	w->begin("pages", pages_cols, pages_ncols, 1);
}

void pages_row(const struct writer *w, const char *input, uint64_t address,
	       int zero, const struct digest *digests,
	       const struct algo *const *algos)
{
	struct cell row[3 + ALGO_MAX];
	char hex[ALGO_MAX][33];

	row[0] = cell_str(input);
	row[1] = cell_hex(address);
	row[2] = cell_uint(zero != 0);
	for (size_t c = 3; c < pages_ncols; c++)
		row[c] = cell_digest(digest_format(algos[c - 3], &digests[c - 3],
						   hex[c - 3]));
	w->row(row);
}

void pages_end(const struct writer *w)
{
	w->end();
}
