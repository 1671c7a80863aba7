/* SPDX-License-Identifier: MIT */
/* -a help: the algorithms of the one table, as a report in any output format. */
#include "../../hash/hash.h"
#include "../report.h"
#include "../write/cell.h"
#include "../write/writer.h"

static const struct column algos_cols[] = {
	COL("algo"), COL("bits"), COL("impl"),
	COL("description"),
};

#define NCOLS (sizeof(algos_cols) / sizeof(algos_cols[0]))

void algos_report(const struct writer *w)
{
	w->begin(w, "algos", algos_cols, NCOLS, 0);
	for (size_t i = 0; i < hash_count(); i++) {
		const struct algo *a = hash_get(i);
		struct cell row[NCOLS] = {
			cell_str(a->name), cell_uint(a->bits), cell_str(a->impl),
			cell_str(a->description),
		};

		w->row(w, row);
	}
	w->note(w, "impl: the implementation this CPU runs; KSMSCAN_IMPL_<ALGO> "
		"forces another (see ksmscan(1)).");
	w->end(w);
	w->finish(w);
}
