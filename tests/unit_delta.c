/* SPDX-License-Identifier: MIT */
/*
 * Unit test of series held as deltas (series.delta, snapshot_delta()):
 * each snapshot as its pages against the one before. A hand-worked
 * delta; then the same memory replayed from full snapshots and from
 * deltas must give the same rows field by field (timeline_rows_equal()),
 * the same spread of a sample's last figures, the same most-sharing and
 * pace of each snapshot: on 300 random small series whose addresses
 * come, go and change (fixed policy and the advisor, unseen writes now
 * and then), and on generated series (tests/series_gen.h), whole and
 * sampled, with ksmtuned on a host whose memory the snapshot's pages
 * fill (its look counts them). Not timed: bench/sample_bench.py measures.
 * Prints the failures and last "N passed, N failed".
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../model/advisor.h"
#include "../model/replay.h"
#include "series_gen.h"
#include "unit.h"

/* Addresses 0..3: snapshot 0 {0: 5, 1: 6, 2: 7}, snapshot 1 {0: 5, 2: 8,
 * 3: 9}: the delta of 1 is {1: gone, 2: 8, 3: 9}; of 0, snapshot 0. */
static void test_hand(void)
{
	uint32_t last[4] = { NO_ID, NO_ID, NO_ID, NO_ID };
	struct snapshot a = { 3, xcalloc(3, 4), xcalloc(3, 4) };
	struct snapshot b = { 3, xcalloc(3, 4), xcalloc(3, 4) };
	static const uint32_t ano[3] = { 0, 1, 2 }, aid[3] = { 5, 6, 7 };
	static const uint32_t bno[3] = { 0, 2, 3 }, bid[3] = { 5, 8, 9 };

	memcpy(a.addr_no, ano, sizeof(ano));
	memcpy(a.id, aid, sizeof(aid));
	memcpy(b.addr_no, bno, sizeof(bno));
	memcpy(b.id, bid, sizeof(bid));
	snapshot_delta(&a, last, 4);
	snapshot_delta(&b, last, 4);
	check(a.n == 3 && !memcmp(a.addr_no, ano, sizeof(ano)) &&
	      !memcmp(a.id, aid, sizeof(aid)),
	      "the first snapshot's delta is the snapshot");
	check(b.n == 3 && b.addr_no[0] == 1 && b.id[0] == NO_ID &&
	      b.addr_no[1] == 2 && b.id[1] == 8 && b.addr_no[2] == 3 &&
	      b.id[2] == 9, "a delta: one address gone, one written, one new");
	check(last[0] == 5 && last[1] == NO_ID && last[2] == 8 && last[3] == 9,
	      "the contents after the delta");
	free(a.addr_no), free(a.id), free(b.addr_no), free(b.id);
}

/* @sr's snapshots as deltas, in @out (free them with free_snaps()). */
static struct series as_delta(const struct series *sr, struct snapshot *out)
{
	struct series d = *sr;
	uint32_t *last = xcalloc(sr->naddr + 1, sizeof(*last));

	for (size_t a = 0; a < sr->naddr; a++)
		last[a] = NO_ID;
	for (size_t k = 0; k < sr->nsnaps; k++) {
		const struct snapshot *sn = &sr->snaps[k];

		out[k] = (struct snapshot){ sn->n, xcalloc(sn->n + 1, 4),
					    xcalloc(sn->n + 1, 4) };
		memcpy(out[k].addr_no, sn->addr_no, sn->n * 4);
		memcpy(out[k].id, sn->id, sn->n * 4);
		snapshot_delta(&out[k], last, sr->naddr);
	}
	free(last);
	d.snaps = out;
	d.delta = 1;
	return d;
}

static void free_snaps(struct snapshot *s, size_t n)
{
	for (size_t k = 0; k < n; k++)
		free(s[k].addr_no), free(s[k].id);
}

/* Whether two replays of @a and @b (the same memory) agree: their rows,
 * cut, spread, and per snapshot the most-sharing and the pace. */
static int same_replay(const struct series *a, const struct series *b,
		       const struct replay_params *p)
{
	struct timeline_row *ra, *rb;
	struct replay_spread sa, sb;
	int cut_a, cut_b, same;
	size_t na = replay_run_sampled(a, p, &ra, &cut_a, &sa);
	size_t nb = replay_run_sampled(b, p, &rb, &cut_b, &sb);

	same = timeline_rows_equal(ra, na, rb, nb) && cut_a == cut_b &&
	       !memcmp(&sa, &sb, sizeof(sa));
	for (size_t k = 0; k < a->nsnaps; k++) {
		struct replay_static x = replay_static_sharing(a, k, &p->ksm);
		struct replay_static y = replay_static_sharing(b, k, &p->ksm);

		same &= x.sampled == y.sampled && x.zero == y.zero;
		if (a->sample > 1)
			same &= replay_pace_weight(a, k, 7) ==
				replay_pace_weight(b, k, 7);
	}
	free(ra);
	free(rb);
	return same;
}

/* Contents 0..15: byte k repeated (0 the zero page). */
static unsigned char pages[16][PAGE_BYTES];
static uint32_t sums[16];
static uint64_t heads[16];

static int content_compare(const void *ctx, uint32_t a, uint32_t b,
			   size_t *common)
{
	(void)ctx;
	return page_common(pages[a], pages[b], common);
}

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint64_t rnd(uint64_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng % n;
}

#define MAXA 64
#define MAXS 6

/* 300 random small series: addresses come, go and change. */
static void test_random(void)
{
	static uint32_t no[MAXS][MAXA], id[MAXS][MAXA];
	static int cell[MAXS][MAXA];
	struct snapshot full[MAXS], delta[MAXS];
	uint64_t addr[MAXA];
	unsigned differ = 0, cases = 300;
	char what[100];

	for (unsigned k = 0; k < 16; k++) {
		memset(pages[k], (int)k, PAGE_BYTES);
		sums[k] = (k + 1) * 2654435761u;
		heads[k] = k * UINT64_C(0x0101010101010101);
	}
	for (unsigned c = 0; c < cases; c++) {
		size_t naddr = 1 + rnd(MAXA), nsnaps = 1 + rnd(MAXS);
		struct replay_params p = gen_params();
		struct series sr, d;

		for (size_t a = 0; a < naddr; a++)
			addr[a] = 0x10000 + a * PAGE_BYTES;
		for (size_t s = 0; s < nsnaps; s++) {
			full[s] = (struct snapshot){ 0, no[s], id[s] };
			for (size_t a = 0; a < naddr; a++) {
				cell[s][a] = s && rnd(4) ? cell[s - 1][a] :
					     rnd(6) ? (int)rnd(1 + rnd(15)) : -1;
				if (cell[s][a] < 0)
					continue;
				no[s][full[s].n] = (uint32_t)a;
				id[s][full[s].n++] = (uint32_t)cell[s][a];
			}
		}
		sr = (struct series){ .naddr = naddr, .addr = addr,
				      .nsnaps = nsnaps, .snaps = full,
				      .sum = sums, .head = heads, .zero_id = 0,
				      .zero_sum = sums[0],
				      .compare = content_compare };
		p.ksm.pages_to_scan = 1 + rnd(40);
		p.ksm.use_zero_pages = (int)rnd(2);
		p.ksm.max_page_sharing = 2 + rnd(4);
		p.interval = 0.01 * (double)(1 + rnd(40));
		p.write_rate = rnd(4) ? 0 : 0.05;
		p.scans = p.write_rate > 0 || rnd(2) ? 1 + rnd(40) : 0;
		if (rnd(3) == 0) {
			struct advisor_params k = { 1 + rnd(3), 10 + rnd(80),
						    1 + rnd(30), 40 + rnd(200) };

			p.policy = &advisor_policy;
			advisor_set_knobs(&p.tuning, &k);
		}
		d = as_delta(&sr, delta);
		differ += !same_replay(&sr, &d, &p);
		free_snaps(delta, nsnaps);
	}
	snprintf(what, sizeof(what), "random series: deltas replay as full "
		 "snapshots do, %u of %u differ", differ, cases);
	check(!differ, what);
}

/* Generated series, whole and at 1/4, fixed and ksmtuned on a host of
 * 15 MiB (a snapshot's pages are 16: ksmtuned runs for them). */
static void test_generated(void)
{
	for (uint32_t n = 0; n <= 4; n += 4)
		for (int tuned = 0; tuned < 2; tuned++) {
			struct replay_params p = gen_params();
			struct gen full, delta;
			char what[100];

			if (tuned) {
				p.policy = policy_at(2);
				p.policy->defaults(&p.tuning);
				p.host = (struct policy_host){ 15360, 1024 };
			}
			gen_series_delta(&full, 4096, 5, 3, n, 11, 0);
			gen_series_delta(&delta, 4096, 5, 3, n, 11, 1);
			snprintf(what, sizeof(what), "generated, %s, %s: deltas "
				 "replay as full snapshots do", n ? "sample 1/4" :
				 "whole", p.policy->name);
			check(same_replay(&full.sr, &delta.sr, &p), what);
			gen_free(&full);
			gen_free(&delta);
		}
}

int main(void)
{
	test_hand();
	test_random();
	test_generated();
	return unit_done();
}
