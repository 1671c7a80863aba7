/* SPDX-License-Identifier: MIT */
#ifndef KSMSCAN_KSM_H
#define KSMSCAN_KSM_H

#include <stddef.h>
#include <stdint.h>

#include "../hash/hash.h"
#include "index.h"

/* The figures of SPEC section 4 for one input, or for all inputs together. */
struct figures {
	uint64_t pages;			/* pages read */
	uint64_t zero_pages;		/* pages whose bytes are all zero */
	uint64_t distinct_pages;	/* distinct contents, byte-exact */
	uint64_t pages_shared;		/* KSM stable-tree pages */
	uint64_t pages_sharing;		/* pages mapped to them, less one each */
	uint64_t ksm_zero_pages;	/* with use_zero_pages: zero pages merged */
	uint64_t saved_bytes;		/* (pages_sharing + ksm_zero_pages) * 4096 */
	int64_t general_profit;		/* saved_bytes - pages * 64 */
	double duplicate_ratio;		/* (pages - distinct) / pages */
	double saved_percent;		/* 100 * saved_bytes / (pages * 4096) */
	uint64_t collisions[ALGO_MAX];	/* distinct contents less distinct digests */
	double expected_collisions[ALGO_MAX]; /* n(n-1) / 2^(bits+1) */
	double seconds[ALGO_MAX];	/* time spent hashing with each algorithm */
};

/* How KSM is configured for the model. */
struct ksm_params {
	uint64_t max_page_sharing;	/* M, at least 2 */
	int use_zero_pages;		/* zero pages go to ksm_zero_pages */
};

/**
 * ksm_tally() - compute the figures from the index.
 * @f: filled in; pages and seconds must already be set by the caller
 * @ix: the index
 * @current_input: count only the current input (count_input), else all inputs
 * @algos: the selected algorithms, in the index's order
 * @nalgos: how many
 * @p: the KSM parameters
 */
void ksm_tally(struct figures *f, const struct index *ix, int current_input,
	       const struct algo *const *algos, size_t nalgos,
	       const struct ksm_params *p);

#endif
