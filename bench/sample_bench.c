/* SPDX-License-Identifier: MIT */
/*
 * make bench: one replay of a generated series (tests/series_gen.h), whole
 * or sampled, in a process of its own so that its maximum RSS is its own.
 *   sample_bench PAGES SNAPSHOTS N SEED [DELTA]
 * N 0 or 1: the whole memory; else a sample of 1/N with the sample's SEED;
 * DELTA 1: each snapshot held as its pages against the one before.
 * Prints one line of key=value: the series' pages, the pages it holds
 * and its bytes a page of the memory (snapshots, contents, ksmd's rmap
 * state), the seconds to make it and to replay it, the maximum RSS, and
 * the last full scan's pages_shared and pages_sharing with their bounds
 * (bench/sample_bench.py compares them with the whole replay's), and
 * the most the last snapshot's contents would share (ksm_content() of
 * every content of the whole memory: what a replay that merged them all
 * would count).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "../model/replay_impl.h"
#include "../tests/series_gen.h"

int main(int argc, char **argv)
{
	size_t m, s;
	uint32_t n;
	uint64_t seed, full[64], most_shared[64], held = 0;
	struct replay_params p;
	struct replay_spread sp;
	struct timeline_row *rows, *t;
	struct rusage ru;
	struct gen g;
	double t0, t1, t2, bytes;
	int cut, delta;
	size_t nrows;

	if (argc != 5 && argc != 6)
		return 2;
	delta = argc == 6 && atoi(argv[5]);
	m = strtoull(argv[1], NULL, 0);
	s = strtoull(argv[2], NULL, 0);
	n = (uint32_t)strtoul(argv[3], NULL, 0);
	seed = strtoull(argv[4], NULL, 0);
	if (!m || !s || s > 64)
		return 2;
	p = gen_params();
	t0 = now_seconds();
	gen_full_static(m, s, 7, &p.ksm, full, most_shared);
	gen_series_delta(&g, m, s, 7, n, seed, delta);
	t1 = now_seconds();
	nrows = replay_run_sampled(&g.sr, &p, &rows, &cut, &sp);
	replay_sample_rows(&g.sr, &p.ksm, full, rows, nrows);
	t2 = now_seconds();
	t = &rows[nrows - 1];
	for (size_t k = 0; k < s; k++)
		held += g.snaps[k].n;
	/* what the replay holds: 8 bytes a page held (a delta's: a page that
	 * changed), 12 a content, the address and its rmap (8 + 28) an
	 * address of the series */
	bytes = (double)held * 8 + (double)g.ncontents * 12 +
		(double)g.naddr * (8 + sizeof(struct rmap));
	getrusage(RUSAGE_SELF, &ru);
	printf("pages=%zu snapshots=%zu sample=%u delta=%d held=%" PRIu64
	       " bytes_per_page=%.2f make_s=%.2f replay_s=%.2f maxrss_kb=%ld"
	       " scans=%zu cut=%d shared=%" PRIu64 " shared_bound=%.0f sharing=%"
	       PRIu64 " sharing_bound=%.0f most_shared=%" PRIu64 " most_sharing=%"
	       PRIu64 "\n", m, s, n, delta, held,
	       bytes / (double)m, t1 - t0, t2 - t1, ru.ru_maxrss, nrows, cut,
	       t->pages_shared, replay_shared_bound(n, &sp, rows, nrows), t->pages_sharing,
	       n > 1 ? replay_ratio_bound(n, &sp) + replay_swing(rows, nrows) : 0,
	       most_shared[s - 1], full[s - 1]);
	free(rows);
	gen_free(&g);
	return 0;
}
