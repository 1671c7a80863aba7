/* SPDX-License-Identifier: MIT */
/* The bench report (--bench): speed of each algorithm on this machine. */
#include <stdio.h>

#include "../../hash/hash.h"
#include "../../hash/measure.h"
#include "../report.h"
#include "../write/cell.h"
#include "../write/writer.h"

static const struct column bench_cols[] = {
	COL("algo"), COL_F("bits", COL_DROP), COL("hot_mib_s"), COL_F("hot_ns_per_page", COL_DROP),
	COL("stream_mib_s"), COL_F("stream_ns_per_page", COL_DROP), COL("impl"),
	COL_F("auto", COL_DROP), COL("hot_spread_pct"),
	COL("stream_spread_pct"),
};

#define NCOLS (sizeof(bench_cols) / sizeof(bench_cols[0]))

/* MiB per second for a time per page. */
static double mib_s(double seconds_per_page)
{
	return seconds_per_page > 0 ?
		PAGE_BYTES / seconds_per_page / (1024.0 * 1024.0) : 0.0;
}

void bench_report(const struct writer *w, const struct hash_speed *rows,
		  size_t nrows, const struct algo *autopick, size_t stream_bytes)
{
	char text[512];

	w->begin(w, "bench", bench_cols, NCOLS, 0);
	for (size_t i = 0; i < nrows; i++) {
		const struct hash_speed *r = &rows[i];
		struct cell row[NCOLS] = {
			cell_str(r->algo->name), cell_uint(r->algo->bits),
			cell_real(mib_s(r->hot), 1), cell_real(r->hot * 1e9, 1),
			cell_real(mib_s(r->stream), 1), cell_real(r->stream * 1e9, 1),
			cell_str(r->algo->impl), cell_uint(r->is_auto),
			cell_real(r->hot_spread * 100, 1),
			cell_real(r->stream_spread * 100, 1),
		};

		w->row(w, row);
	}
	snprintf(text, sizeof(text),
		 "-a auto chooses %s here (the faster of crc32c and xxhash on a "
		 "hot page). Streaming buffer: %zu MiB. MiB = 2^20 bytes. The "
		 "figures are the best of repeated runs; spread: how much slower "
		 "the third best run was, in percent (a busy machine varies more: "
		 "compare figures whose spreads are small).",
		 autopick->name, stream_bytes >> 20);
	w->note(w, text);
	w->end(w);
}
