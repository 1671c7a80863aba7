/* SPDX-License-Identifier: MIT */
#ifndef KSMSCAN_SERIES_GEN_H
#define KSMSCAN_SERIES_GEN_H

/*
 * A series of page digests made without writing the pages (the sampled
 * replay's test, tests/unit_sample.c, and its bench, bench/sample_bench.c):
 * M addresses over S snapshots, each address holding at first the zero page
 * (25%), one of M/16 duplicated contents by a Zipf-like law (35%: content
 * of rank k with weight 1/k), or a content of its own (40%); between two
 * snapshots 5% of the addresses are written with a new content from the
 * same mix. A content is a number; its checksum and its first 8 bytes
 * are mixes of it (the 8 bytes a bijection, so two contents never compare
 * equal, and the zero page's are zero), and its bytes are the zero page's
 * (read only when two first 8 bytes are equal: the same content).
 *
 * With a sample of 1/N, a content is kept when a mix of it with the seed
 * is 0 mod N (the zero page always), and only the kept pages are held,
 * with a page of series.out_id at the addresses that hold a kept content
 * in another snapshot (as ksmscan's series driver gives them): memory
 * falls by N. Contents are renumbered densely in the order they are kept.
 * All of it in static functions: a header for two programs.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../model/replay.h"
#include "../model/sample.h"
#include "../util/util.h"

/* splitmix64's finalizer: a bijection of 64-bit numbers, 0 to 0. */
static uint64_t gen_mix(uint64_t z)
{
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/* The generator's random numbers (xorshift64*). */
static uint64_t gen_rand(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * UINT64_C(2685821657736338717);
}

/* Generated contents have no bytes: two whose heads are equal are ordered
 * by id, as if they differed right after the head. */
static int gen_compare(const void *ctx, uint32_t a, uint32_t b, size_t *common)
{
	(void)ctx;
	*common = a == b ? PAGE_BYTES : 8;
	return (a > b) - (a < b);
}

/* A generated series and what holds it. */
struct gen {
	struct series sr;
	struct snapshot *snaps;
	uint64_t *addr;
	uint32_t *sum;
	uint64_t *head;
	size_t ncontents;		/* dense ids given */
	size_t naddr;			/* addresses of the series */
	uint64_t pages, kept;		/* pages of all snapshots; kept of them */
	uint32_t *pace;			/* series.pace */
	/* original content -> dense id, for the kept ones (open addressing) */
	uint64_t *key;
	uint32_t *val;
	size_t cap;
};

/* The dense id of original content @c (0: the zero page), given at its
 * first sight; its checksum and head set then. */
static uint32_t gen_dense(struct gen *g, uint64_t c)
{
	size_t i = gen_mix(c + 1) & (g->cap - 1);

	while (g->key[i] && g->key[i] != c + 1)
		i = (i + 1) & (g->cap - 1);
	if (!g->key[i]) {
		if (g->ncontents * 2 >= g->cap)
			abort();	/* gen_series() sized it at twice the most */
		g->key[i] = c + 1;
		g->val[i] = (uint32_t)g->ncontents;
		g->sum[g->ncontents] = c ? (uint32_t)gen_mix(c ^ 0x5555) : 0x1234;
		g->head[g->ncontents] = gen_mix(c);
		g->ncontents++;
	}
	return g->val[i];
}

/* A content from the mix: 0 the zero page, 1..D the duplicated ones (by
 * @cum, the Zipf law's cumulative weights), past D a new one of its own. */
static uint64_t gen_content(uint64_t *rng, const double *cum, size_t d,
			    uint64_t *fresh)
{
	double x = (double)(gen_rand(rng) >> 11) / 9007199254740992.0, y;
	size_t lo = 0, hi = d - 1;

	if (x < 0.25)
		return 0;
	if (x >= 0.6)
		return (*fresh)++;
	y = (x - 0.25) / 0.35 * cum[d - 1];
	while (lo < hi) {	/* the first rank whose cumulative weight passes y */
		size_t mid = (lo + hi) / 2;

		if (cum[mid] < y)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo + 1;
}

/* Whether content @c is in the sample of 1/@n drawn with @seed. */
static int gen_kept(uint64_t c, uint32_t n, uint64_t seed)
{
	return !c || n <= 1 || gen_mix(c * 0x9e3779b97f4a7c15u ^ seed) % n == 0;
}

/* The memory's contents over the snapshots: @cur at snapshot @k (from 0),
 * as the same random numbers make them for the same seed. */
struct gen_walk {
	uint64_t rng, fresh, *cur;
	double *cum;
	size_t d, m;
};

static void gen_walk_start(struct gen_walk *w, size_t m, uint64_t seed)
{
	double sum = 0;

	w->m = m;
	w->d = m / 16 ? m / 16 : 1;
	w->cum = xcalloc(w->d, sizeof(*w->cum));
	w->cur = xcalloc(m ? m : 1, sizeof(*w->cur));
	w->rng = gen_mix(seed + 1) | 1;
	w->fresh = w->d + 1;
	for (size_t k = 0; k < w->d; k++)
		w->cum[k] = sum += 1.0 / (double)(k + 1);
	for (size_t i = 0; i < m; i++)
		w->cur[i] = gen_content(&w->rng, w->cum, w->d, &w->fresh);
}

/* The next snapshot: 5% of the addresses rewritten. */
static void gen_walk_next(struct gen_walk *w)
{
	for (size_t j = 0; j < w->m / 20; j++)
		w->cur[gen_rand(&w->rng) % w->m] =
			gen_content(&w->rng, w->cum, w->d, &w->fresh);
}

static void gen_walk_end(struct gen_walk *w)
{
	free(w->cum);
	free(w->cur);
}

/* The addresses that hold a kept content in some snapshot, as a bitmap. */
static uint64_t *gen_tracked(size_t m, size_t s, uint64_t seed, uint32_t n,
			     uint64_t sample_seed)
{
	uint64_t *bits = xcalloc(m / 64 + 1, sizeof(*bits));
	struct gen_walk w;

	gen_walk_start(&w, m, seed);
	for (size_t k = 0; k < s; k++) {
		if (k)
			gen_walk_next(&w);
		for (size_t i = 0; i < m; i++)
			if (gen_kept(w.cur[i], n, sample_seed))
				bits[i / 64] |= UINT64_C(1) << (i % 64);
	}
	gen_walk_end(&w);
	return bits;
}

/**
 * gen_series_delta() - make a series, whose snapshots are held in full or
 * as deltas (series.delta: each one's pages against the one before).
 * @g: set (gen_free() it)
 * @m: addresses (pages a snapshot)
 * @s: snapshots
 * @seed: the memory's seed (the same memory for the same seed)
 * @n: the sample, 1/@n (0 or 1: every page)
 * @sample_seed: the sample's seed
 * @delta: 1 for deltas (one snapshot in full at a time while made)
 */
static void gen_series_delta(struct gen *g, size_t m, size_t s, uint64_t seed,
			     uint32_t n, uint64_t sample_seed, int delta)
{
	uint64_t *tracked = n > 1 ? gen_tracked(m, s, seed, n, sample_seed) : NULL;
	uint32_t *last = NULL;
	struct gen_walk w;
	size_t est = (m / 16 + m + m / 20 * s) / (n > 1 ? n : 1) * 2 + 1024;
	uint32_t out = NO_ID;

	memset(g, 0, sizeof(*g));
	for (g->cap = 1024; g->cap < 2 * est; g->cap *= 2)
		;
	g->key = xcalloc(g->cap, sizeof(*g->key));
	g->val = xcalloc(g->cap, sizeof(*g->val));
	g->sum = xcalloc(g->cap / 2, sizeof(*g->sum));
	g->head = xcalloc(g->cap / 2, sizeof(*g->head));
	g->addr = xcalloc(m ? m : 1, sizeof(*g->addr));
	g->snaps = xcalloc(s, sizeof(*g->snaps));
	g->pace = xcalloc(s, sizeof(*g->pace));
	for (size_t i = 0; i < m; i++)	/* the addresses of the series */
		if (!tracked || tracked[i / 64] >> (i % 64) & 1)
			g->addr[g->naddr++] = 0x100000000ull + (uint64_t)i * PAGE_BYTES;
	gen_dense(g, 0);	/* the zero page is content 0 */
	if (n > 1) {		/* and 1 those outside the sample */
		out = (uint32_t)g->ncontents++;
		g->sum[out] = 0x5a5a5a5a;
		g->head[out] = UINT64_MAX;
	}
	if (delta) {
		last = xcalloc(g->naddr + 1, sizeof(*last));
		memset(last, 0xff, (g->naddr + 1) * sizeof(*last));	/* NO_ID */
	}
	gen_walk_start(&w, m, seed);
	for (size_t k = 0; k < s; k++) {
		struct snapshot *sn = &g->snaps[k];
		size_t cap = (m / (n > 1 ? n : 1)) * 2 + 1024;
		uint64_t dropped = 0;

		if (k)
			gen_walk_next(&w);
		sn->addr_no = xcalloc(cap, sizeof(uint32_t));
		sn->id = xcalloc(cap, sizeof(uint32_t));
		for (size_t i = 0, a = 0; i < m; i++) {
			int kept = gen_kept(w.cur[i], n, sample_seed);
			int in = !tracked || tracked[i / 64] >> (i % 64) & 1;
			uint32_t no = (uint32_t)a;

			a += in;	/* its index among the series' addresses */
			dropped += !kept;
			if (!in)
				continue;
			if (sn->n == cap) {
				cap *= 2;
				sn->addr_no = xreallocarray(sn->addr_no, cap, 4);
				sn->id = xreallocarray(sn->id, cap, 4);
			}
			sn->addr_no[sn->n] = no;
			sn->id[sn->n++] = kept ? gen_dense(g, w.cur[i]) : out;
		}
		g->pages += m;
		g->kept += sn->n;
		g->pace[k] = (uint32_t)dropped;	/* worked out below */
		if (delta)
			snapshot_delta(sn, last, g->naddr);
	}
	gen_walk_end(&w);
	free(last);
	free(tracked);
	free(g->key);
	free(g->val);
	g->key = NULL;
	g->val = NULL;
	g->sr = (struct series){ .naddr = g->naddr, .addr = g->addr, .nsnaps = s,
				 .snaps = g->snaps, .sum = g->sum, .head = g->head,
				 .delta = delta, .zero_id = 0, .zero_sum = 0x1234,
				 .compare = gen_compare, .sample = n > 1 ? n : 0,
				 .out_id = out };
	for (size_t k = 0; k < s && n > 1; k++)
		g->pace[k] = replay_pace_weight(&g->sr, k, g->pace[k]);
	g->sr.pace = n > 1 ? g->pace : NULL;
}

/* gen_series_delta() with each snapshot in full. */
static inline void gen_series(struct gen *g, size_t m, size_t s, uint64_t seed,
		       uint32_t n, uint64_t sample_seed)
{
	gen_series_delta(g, m, s, seed, n, sample_seed, 0);
}

/**
 * gen_full_static() - per snapshot, the most every content of the whole
 * memory would share (pages_sharing by ksm_content(); the zero page's not
 * with use_zero_pages): what the scan gives a sampled series. Only the
 * duplicated contents and the zero page count: a new content is at one
 * address.
 * @m: addresses
 * @s: snapshots
 * @seed: the memory's seed
 * @ksm: max_page_sharing, use_zero_pages
 * @full: set, @s entries
 * @shared: NULL, or set to pages_shared likewise (its KSM pages), @s entries
 */
static inline void gen_full_static(size_t m, size_t s, uint64_t seed,
			    const struct ksm_params *ksm, uint64_t *full,
			    uint64_t *shared)
{
	struct gen_walk w;
	uint32_t *count;

	gen_walk_start(&w, m, seed);
	count = xcalloc(w.d + 1, sizeof(*count));
	for (size_t k = 0; k < s; k++) {
		if (k)
			gen_walk_next(&w);
		memset(count, 0, (w.d + 1) * sizeof(*count));
		for (size_t i = 0; i < m; i++)
			if (w.cur[i] <= w.d)
				count[w.cur[i]]++;
		full[k] = 0;
		if (shared)
			shared[k] = 0;
		for (size_t c = 0; c <= w.d; c++) {
			uint64_t ksm_pages, sharing;

			if (count[c] < 2 || (!c && ksm->use_zero_pages))
				continue;
			ksm_content(count[c], ksm->max_page_sharing, &ksm_pages,
				    &sharing);
			full[k] += sharing;
			if (shared)
				shared[k] += ksm_pages;
		}
	}
	free(count);
	gen_walk_end(&w);
}

/* ksmd's defaults at HZ 250 and the command line's default costs: the
 * settings a generated series is replayed with (unit_sample, the bench). */
static struct replay_params gen_params(void)
{
	struct replay_params p = { 0 };

	p.ksm = (struct ksm_params){ .max_page_sharing = 256, .pages_to_scan = 100,
				     .sleep_ms = 20, .smart_scan = 1 };
	p.interval = 60;
	p.hz = 250;
	p.page_seconds = 3e-6;
	p.revisit_seconds = 0.5e-6;
	p.merge_seconds = 3e-6;
	p.policy = policy_at(0);	/* fixed */
	return p;
}

/* Free a generated series. */
static void gen_free(struct gen *g)
{
	for (size_t k = 0; k < g->sr.nsnaps; k++) {
		free(g->snaps[k].addr_no);
		free(g->snaps[k].id);
	}
	free(g->snaps);
	free(g->pace);
	free(g->addr);
	free(g->sum);
	free(g->head);
}

#endif
