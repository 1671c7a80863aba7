/* SPDX-License-Identifier: MIT */
#ifndef KSMSCAN_TALLY_H
#define KSMSCAN_TALLY_H

#include <stddef.h>
#include <stdint.h>

#include "../hash/hash.h"
#include "../model/ksm.h"
#include "index.h"

/* The KSM figures (see the README and ksmscan(1)) for one input, or for all
 * inputs together. */
struct figures {
	uint64_t pages;			/* pages read */
	uint64_t zero_page_mappings;	/* live pages that map the kernel's zero
					 * page: not read, not in pages */
	uint64_t zero_pages;		/* pages whose bytes are all zero */
	uint64_t distinct_pages;	/* distinct contents, byte-exact */
	uint64_t pages_shared;		/* KSM stable-tree pages */
	uint64_t pages_sharing;		/* pages mapped to them, less one each */
	uint64_t ksm_zero_pages;	/* with use_zero_pages: zero pages merged */
	uint64_t saved_bytes;		/* (pages_sharing + ksm_zero_pages) * 4096 */
	uint64_t saved_zero_bytes;	/* of which by zero pages */
	int64_t general_profit;		/* saved_bytes - pages * 64 */
	double duplicate_ratio;		/* (pages - distinct) / pages */
	double saved_percent;		/* 100 * saved_bytes / (pages * 4096) */
	uint64_t collisions[ALGO_MAX];	/* distinct contents less distinct digests */
	double expected_collisions[ALGO_MAX]; /* n(n-1) / 2^(bits+1) */
	double seconds[ALGO_MAX];	/* time spent hashing with each algorithm */
	uint64_t hashed_pages;		/* pages hashed: contents new to the input */

	/* Histogram like zdb -S: contents seen c times fall in bucket floor(log2 c). */
	uint64_t hist_contents[64];	/* contents per bucket */
	uint64_t hist_pages[64];	/* their pages */

	/* What the other KSM settings would give, for the table's advice. */
	uint64_t saved_bytes_other_z;	/* with use_zero_pages the other way */
	uint64_t saved_bytes_unlimited;	/* with no max_page_sharing limit */
	uint64_t ksm_zero_if_z;		/* ksm_zero_pages with -z */

	/* Frames (live processes; for files each page is a frame). */
	uint64_t frames;		/* distinct frames of the pages read */
	uint64_t freed_bytes;		/* the frames KSM would free, in bytes */
	uint64_t thp_zero_freed_pages;	/* a series: zero-filled subpages of huge
					 * pages KSM split, freed (in freed_bytes)
					 * and in no KSM counter */
	int estimate;			/* frames estimated (no root) */
};

/* A scope's frames per content (scan/frames.h). */
struct frame_counts {
	size_t n;			/* content ids counted */
	uint32_t *frames;		/* per content id: its distinct frames */
	unsigned char *ksm;		/* ... 1 if one of them is a KSM page */
	uint64_t total;			/* frames of the scope */
	int estimate;			/* some frames were estimated */
};

/**
 * frame_counts_free() - free what frames_count() filled.
 * @fc: the counts (left empty)
 */
void frame_counts_free(struct frame_counts *fc);

/**
 * ksm_tally() - compute the figures from the index.
 * @f: filled in; pages and seconds must already be set by the caller
 * @ix: the index
 * @current_input: count only the current input (index_count()), else all inputs
 * @fc: the frames of each content, or NULL (as for ksm_tally_counts())
 * @algos: the selected algorithms, in the index's order
 * @nalgos: how many
 * @p: the KSM settings
 */
void ksm_tally(struct figures *f, const struct index *ix, int current_input,
	       const struct frame_counts *fc,
	       const struct algo *const *algos, size_t nalgos,
	       const struct ksm_params *p);

/**
 * ksm_tally_counts() - ksm_tally() with the pages of each content given.
 * @f: as for ksm_tally()
 * @ix: the index (zero page, digests)
 * @current_input: as for ksm_tally(), when @counts is NULL
 * @counts: pages per content id, 0 .. index_size(ix) - 1; NULL: the index's
 *	counts. Lets a scope the index does not count itself (a --group of
 *	inputs) use the one KSM arithmetic.
 * @fc: the frames of each content (live processes), or NULL: every page
 *	is a frame of its own (files). A content on one frame is not merged
 *	unless that frame is a KSM page; on two or more, all its pages are.
 * @algos: the selected algorithms, in the index's order
 * @nalgos: how many
 * @p: the KSM settings
 */
void ksm_tally_counts(struct figures *f, const struct index *ix,
		      int current_input, const uint32_t *counts,
		      const struct frame_counts *fc,
		      const struct algo *const *algos, size_t nalgos,
		      const struct ksm_params *p);

#endif
