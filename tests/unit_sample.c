/* SPDX-License-Identifier: MIT */
/*
 * Unit test of the sampled replay (--sample=1/N) on generated series
 * (tests/series_gen.h): the same memory replayed in full and as a sample of
 * its contents, over 20 seeds of the sample. Each sampled last figure
 * with a stated bound (pages_shared: replay_shared_bound(), two standard
 * errors at the largest count the sample leaves within them;
 * pages_sharing and the saving: replay_ratio_bound() plus replay_swing())
 * must lie within it of the full replay's in at least 18 of the 20
 * (pages_unshared, which has none, is printed); a sample of 1/1 must give the full
 * replay's rows exactly; and a sample must hold N times fewer pages, near
 * enough. Not timed: the bench (bench/sample_bench.c) measures.
 * Prints the failures and last "N passed, N failed".
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "../model/replay.h"
#include "series_gen.h"
#include "unit.h"

static double swing;	/* the last replay's (replay_swing()) */
static double shared_bound;	/* ... pages_shared's (replay_shared_bound()) */

/* The last row of a replay of @g, and its spread; a sample's rows are
 * estimates by @full, the most each snapshot's contents share. */
static struct timeline_row last_row(const struct gen *g, const uint64_t *full,
				    struct replay_spread *spread)
{
	struct replay_params p = gen_params();
	struct timeline_row *rows, last;
	int cut;
	size_t n = replay_run_sampled(&g->sr, &p, &rows, &cut, spread);

	replay_sample_rows(&g->sr, &p.ksm, full, rows, n);
	last = rows[n - 1];
	swing = replay_swing(rows, n);
	shared_bound = replay_shared_bound(g->sr.sample, spread, rows, n);
	free(rows);
	return last;
}

/* The four figures of a row, and their sums of squares. */
static void figures(const struct timeline_row *t, const struct replay_spread *s,
		    uint32_t n, double fig[4], double sq[4])
{
	fig[0] = (double)t->pages_shared;
	fig[1] = (double)t->pages_sharing;
	fig[2] = (double)t->pages_unshared;
	fig[3] = (double)(t->pages_sharing + t->ksm_zero_pages);
	sq[0] = shared_bound;
	sq[1] = sq[3] = replay_ratio_bound(n, s) + swing;
	sq[2] = replay_bound(n, s->unshared);
}

/* The pages @g holds of sampled contents (but the zero page's, all
 * kept), and in @out those of contents outside the sample. */
static uint64_t held(const struct gen *g, uint64_t *out)
{
	uint64_t n = 0;

	*out = 0;
	for (size_t k = 0; k < g->sr.nsnaps; k++)
		for (size_t i = 0; i < g->snaps[k].n; i++) {
			uint32_t id = g->snaps[k].id[i];

			n += id != g->sr.zero_id && id != g->sr.out_id;
			*out += id == g->sr.out_id;
		}
	return n;
}

/* 20 samples of 1/@n of one memory of @m pages x @s snapshots. */
static void within_bounds(size_t m, size_t s, uint32_t n)
{
	static const char *name[4] = { "pages_shared", "pages_sharing",
				       "pages_unshared", "saved" };
	struct gen g;
	struct replay_spread sp;
	struct timeline_row exact;
	double fx[4], sqx[4];
	unsigned inside[4] = { 0 };
	double mean = 0, outside = 0;
	char what[200];

	uint64_t full[8];
	struct replay_params p = gen_params();

	gen_series(&g, m, s, 7, 0, 0);
	for (size_t k = 0; k < s && k < 8; k++) {
		struct replay_static st = replay_static_sharing(&g.sr, k, &p.ksm);

		full[k] = (uint64_t)(st.sampled + st.zero);
	}
	{	/* the generator's own count, against the replay's */
		uint64_t own[8];

		gen_full_static(m, s, 7, &p.ksm, own, NULL);
		check(own[0] == full[0] && own[s - 1] == full[s - 1],
		      "gen_full_static() gives the replay's static figures");
	}
	exact = last_row(&g, full, &sp);
	gen_free(&g);
	figures(&exact, &sp, 1, fx, sqx);
	for (uint64_t seed = 1; seed <= 20; seed++) {
		struct timeline_row t;
		double f[4], sq[4];

		uint64_t out, in;

		gen_series(&g, m, s, 7, n, seed);
		in = held(&g, &out);
		mean += (double)in / 20;
		outside += (double)out / 20;
		check(in > 0, "a sample holds pages");
		t = last_row(&g, full, &sp);
		gen_free(&g);
		figures(&t, &sp, n, f, sq);
		for (int k = 0; k < 4; k++) {
			double bound = sq[k];

			inside[k] += fabs(f[k] - fx[k]) <= bound;
			printf("  1/%u seed %2" PRIu64 " %-14s %9.0f exact %9.0f "
			       "+- %7.0f%s\n", n, seed, name[k], f[k], fx[k], bound,
			       fabs(f[k] - fx[k]) <= bound ? "" : "  outside");
		}
	}
	/* memory: the pages of sampled contents but the zero page's (all
	 * kept) about 1/n of the others on average (a sample that takes a
	 * content of many pages holds more); besides, a page "outside the
	 * sample" at each address that holds a sampled content or the zero
	 * page in another snapshot (printed: it does not fall with n) */
	snprintf(what, sizeof(what), "1/%u: %.0f of %zu other pages held on "
		 "average (%.1f / n), and %.0f outside the sample", n, mean,
		 m * s * 3 / 4, mean * n / (double)(m * s * 3 / 4), outside);
	check(mean < 4.0 / n * (double)(m * s * 3 / 4), what);
	printf("  %s\n", what);
	for (int k = 0; k < 4; k++) {
		if (k == 2)
			continue;	/* pages_unshared: no bound stated */
		snprintf(what, sizeof(what), "1/%u: %s within its bound in %u "
			 "of 20 samples (at least 18 wanted)", n, name[k], inside[k]);
		check(inside[k] >= 18, what);
	}
}

/* A sample of 1/1 is the full replay, row for row. */
static void one_in_one(void)
{
	struct gen g, h;
	struct replay_params p = gen_params();
	struct timeline_row *a, *b;
	struct replay_spread sp;
	int cut;
	size_t na, nb;

	gen_series(&g, 5000, 3, 3, 0, 0);
	gen_series(&h, 5000, 3, 3, 1, 9);
	h.sr.sample = 1;
	na = replay_run(&g.sr, &p, &a, &cut);
	nb = replay_run_sampled(&h.sr, &p, &b, &cut, &sp);
	check(timeline_rows_equal(a, na, b, nb), "--sample=1/1 gives the rows "
	      "of the replay without a sample");
	check(sp.shared == 0 && sp.sharing == 0 && replay_bound(1, 5) == 0,
	      "--sample=1/1 has no error");
	free(a);
	free(b);
	gen_free(&g);
	gen_free(&h);
}

int main(void)
{
	one_in_one();
	within_bounds(40000, 4, 16);
	within_bounds(40000, 4, 64);
	within_bounds(40000, 4, 256);
	return unit_done();
}
