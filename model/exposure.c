/* SPDX-License-Identifier: MIT */
/*
 * Sharing across trust domains: the kinds of contents and the mitigations'
 * arithmetic, on top of KSM's own (ksm.c).
 */
#include <math.h>
#include <pthread.h>

#include "../util/page.h"
#include "exposure.h"
#include "zram.h"

/* c log2 c for c = 0 .. PAGE_BYTES: a byte value's part of the entropy. */
static double clogc[PAGE_BYTES + 1];
static pthread_once_t clogc_once = PTHREAD_ONCE_INIT;

static void clogc_init(void)
{
	for (size_t c = 1; c <= PAGE_BYTES; c++)
		clogc[c] = (double)c * log2((double)c);
}

double page_entropy(const unsigned char *page)
{
	/* Four histograms, so that runs of one byte value do not wait on
	 * their own increments. */
	uint16_t count[4][256] = { { 0 } };
	double sum = 0;

	pthread_once(&clogc_once, clogc_init);
	for (size_t i = 0; i < PAGE_BYTES; i += 4) {
		count[0][page[i]]++;
		count[1][page[i + 1]]++;
		count[2][page[i + 2]]++;
		count[3][page[i + 3]]++;
	}
	/*
	 * -sum p log2 p with p = c / N is log2 N - (sum c log2 c) / N: one
	 * table look-up per byte value.
	 */
	for (unsigned b = 0; b < 256; b++)
		sum += clogc[count[0][b] + count[1][b] + count[2][b] + count[3][b]];
	return log2((double)PAGE_BYTES) - sum / PAGE_BYTES;
}

unsigned entropy_band(double bits)
{
	/* 8 bits per byte (every byte value 16 times) belongs to the last band. */
	if (bits >= ENTROPY_BANDS - 1)
		return ENTROPY_BANDS - 1;
	return bits <= 0 ? 0 : (unsigned)bits;
}

enum page_kind page_kind_of(const unsigned char *page, int known, double *bits)
{
	*bits = 0;
	if (page_is_zero(page))
		return KIND_ZERO;
	if (zram_same_filled(page))
		return KIND_SAME;
	if (known)
		return KIND_KNOWN;
	*bits = page_entropy(page);
	return *bits >= ENTROPY_HIGH ? KIND_HIGH : KIND_LOW;
}

const char *mitigation_name(enum mitigation m)
{
	static const char *const names[MITIGATIONS] = {
		"none", "partitioned", "zero_only", "same_filled_across",
	};

	return names[m];
}

/* Whether rule @m lets a content of @kind merge across domains. */
static int merges_across(enum mitigation m, enum page_kind kind)
{
	switch (m) {
	case MIT_NONE:
		return 1;
	case MIT_ZERO_ONLY:
		return kind == KIND_ZERO;
	case MIT_SAME_FILLED_ACROSS:
		return kind == KIND_ZERO || kind == KIND_SAME;
	default:
		return 0;
	}
}

void mitigation_add(enum mitigation m, const uint32_t *pages, size_t n,
		    enum page_kind kind, const struct ksm_params *p,
		    struct mitigation_sum *sum)
{
	int zero = kind == KIND_ZERO;
	uint64_t total = 0;

	for (size_t d = 0; d < n; d++)
		total += pages[d];
	if (merges_across(m, kind)) {
		/* One KSM host for every domain: the content's pages together. */
		sum->saved_pages += ksm_saved_pages(total, zero, p);
		if (n >= 2)
			sum->exposed_pages += total;
		return;
	}
	/* zero_only merges nothing else, even within a domain. */
	if (m == MIT_ZERO_ONLY)
		return;
	/* Merging within each domain alone: one KSM host per domain. */
	for (size_t d = 0; d < n; d++)
		sum->saved_pages += ksm_saved_pages(pages[d], zero, p);
}
