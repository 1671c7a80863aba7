/* SPDX-License-Identifier: MIT */
#ifndef KSMSCAN_MODEL_EXPOSURE_H
#define KSMSCAN_MODEL_EXPOSURE_H

#include <stddef.h>
#include <stdint.h>

#include "ksm.h"

/*
 * Sharing across trust domains (docs/exposure.md): what kind of content a
 * page that would be merged across domains holds, and what KSM would save
 * under each mitigation that limits merging across domains. Pure arithmetic
 * on contents and their pages per domain; the exposure and mitigations
 * reports feed it.
 */

/* What a content is, in the order a page is classed: the first that fits. */
enum page_kind {
	KIND_ZERO,		/* every byte zero */
	KIND_SAME,		/* one 8-byte word repeated (zram's "same") */
	KIND_KNOWN,		/* equal to a page of a --known file */
	KIND_LOW,		/* entropy below ENTROPY_HIGH */
	KIND_HIGH,		/* entropy of ENTROPY_HIGH bits per byte or more */
	KINDS
};

/*
 * A page whose bytes have this Shannon entropy or more (bits per byte, of 8)
 * is "high entropy": random-looking, as keys, compressed or encrypted data
 * are. Uniformly random bytes give 7.95 on a 4 KiB page; machine code gives
 * 5 to 6.5, text 4 to 5, pointers and small integers less.
 */
#define ENTROPY_HIGH 7.0

/* Entropy is shown in this many bands of one bit per byte. */
#define ENTROPY_BANDS 8

/**
 * page_entropy() - the Shannon entropy of a page's bytes, in bits per byte:
 * -sum p(b) log2 p(b) over the 256 byte values b, p(b) being the fraction of
 * the page's bytes equal to b. 0 for a page of one byte value, 8 at most.
 * @page: PAGE_BYTES bytes
 */
double page_entropy(const unsigned char *page);

/**
 * entropy_band() - the band of an entropy: 0 for [0, 1), ..., 7 for [7, 8].
 * @bits: bits per byte, 0 to 8
 */
unsigned entropy_band(double bits);

/**
 * page_kind_of() - the kind of a content that is not zero.
 * @page: its PAGE_BYTES bytes
 * @known: whether it equals a page of a known file
 * @bits: set to its entropy (0 when same-filled or known: not measured)
 */
enum page_kind page_kind_of(const unsigned char *page, int known, double *bits);

/* The mitigations, in the order reports print them. */
enum mitigation {
	MIT_NONE,		/* today's KSM: every content merges */
	MIT_PARTITIONED,	/* merging only within a domain */
	MIT_ZERO_ONLY,		/* only zero pages merge */
	MIT_SAME_FILLED_ACROSS,	/* everything within a domain; across
				 * domains only same-filled (and zero) pages */
	MITIGATIONS
};

/**
 * mitigation_name() - the mitigation's fixed name (none, partitioned,
 * zero_only, same_filled_across).
 * @m: the mitigation
 */
const char *mitigation_name(enum mitigation m);

/* What one rule makes of the pages it is given. */
struct mitigation_sum {
	uint64_t saved_pages;	/* pages KSM frees under the rule */
	uint64_t exposed_pages;	/* pages the rule merges with pages of
				 * another domain */
};

/**
 * mitigation_add() - add one content to a rule's sums.
 * @m: the rule
 * @pages: the content's pages in each domain that holds it (none 0)
 * @n: how many domains hold it
 * @kind: its kind (only KIND_ZERO and KIND_SAME change the rules)
 * @p: KSM's settings (max_page_sharing, use_zero_pages)
 * @sum: added to
 */
void mitigation_add(enum mitigation m, const uint32_t *pages, size_t n,
		    enum page_kind kind, const struct ksm_params *p,
		    struct mitigation_sum *sum);

#endif
