/* SPDX-License-Identifier: MIT */
/*
 * The tree report (SPEC section 5): what searching every page costs in KSM's
 * memcmp-ordered unstable tree and in checksum-first trees.
 */
#include "report.h"

static const struct column tree_cols[] = {
	{ "input", 0, 0 }, { "strategy", 0, 0 }, { "algo", 0, 0 },
	{ "inserts", 0, 0 }, { "matches", 0, 0 }, { "avg_depth", 0, 0 },
	{ "max_depth", 0, 0 }, { "node_visits", 0, 0 }, { "memcmp_calls", 0, 0 },
	{ "memcmp_bytes", 0, 0 }, { "checksum_compares", 0, 0 },
	{ "seconds", 0, 0 },
};

#define NCOLS (sizeof(tree_cols) / sizeof(tree_cols[0]))

void tree_report(const struct writer *w, const struct tree_row *rows, size_t nrows)
{
	w->begin("tree", tree_cols, NCOLS, 0);
	for (size_t i = 0; i < nrows; i++) {
		const struct tree_stats *st = &rows[i].st;
		uint64_t searches = st->inserts + st->matches;
		struct cell row[NCOLS] = {
			cell_str(rows[i].input), cell_str(rows[i].strategy),
			cell_str(rows[i].algo), cell_uint(st->inserts),
			cell_uint(st->matches),
			cell_real(searches ? (double)st->node_visits /
					     (double)searches : 0.0, 3),
			cell_uint(st->max_depth), cell_uint(st->node_visits),
			cell_uint(st->memcmp_calls), cell_uint(st->memcmp_bytes),
			cell_uint(st->checksum_compares), cell_real(st->seconds, 6),
		};

		w->row(row);
	}
	w->end();
}
