/* SPDX-License-Identifier: MIT */
/*
 * The static figures (docs/model.md): what KSM's counters would read in steady
 * state if every page were mergeable and unchanging, counted from the index
 * with KSM's arithmetic (model/ksm.c), and the collision counts.
 */
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "../util/util.h"
#include "tally.h"

/*
 * Sort keys of @width bytes (4, 8 or 16; little-endian numbers, low half
 * first) with an LSD radix sort of 16-bit digits: width / 2 stable passes.
 * Sorting only for equality, the order of the halves does not matter.
 */
static void radix_sort(unsigned char *v, unsigned char *tmp, size_t n,
		       size_t width)
{
	size_t *count = xcalloc(65536, sizeof(*count));

	for (size_t d = 0; d < width; d += 2) {
		memset(count, 0, 65536 * sizeof(*count));
		for (size_t i = 0; i < n; i++)
			count[v[i * width + d] | v[i * width + d + 1] << 8]++;
		size_t sum = 0;
		for (size_t k = 0; k < 65536; k++) {
			size_t c = count[k];

			count[k] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++) {
			const unsigned char *e = v + i * width;

			memcpy(tmp + count[e[d] | e[d + 1] << 8]++ * width, e, width);
		}
		memcpy(v, tmp, n * width);
	}
	free(count);
}

/* Pages with content @id: from @counts when given, else from the index. */
static inline uint32_t content_count(const struct index *ix, int current_input,
				     const uint32_t *counts, size_t id)
{
	return counts ? counts[id] : index_count(ix, id, current_input);
}

/*
 * Distinct contents less distinct digest values among them, for one
 * algorithm: sort the digests (2 x width bytes per distinct content while it
 * runs) and count the runs.
 */
static uint64_t count_collisions(const struct index *ix, int current_input,
				 const uint32_t *counts, size_t a, unsigned bits)
{
	size_t n = index_size(ix), m = 0, w = bits / 8;
	unsigned char *v = xcalloc(n ? n : 1, w);
	unsigned char *tmp = xcalloc(n ? n : 1, w);
	uint64_t distinct = 0;

	for (size_t id = 0; id < n; id++) {
		struct digest d;
		uint32_t lo32;

		if (!content_count(ix, current_input, counts, id))
			continue;
		index_digest(ix, a, id, &d);
		lo32 = (uint32_t)d.lo;
		if (w == 4) {
			memcpy(v + m * w, &lo32, 4);
		} else {
			memcpy(v + m * w, &d.lo, 8);
			if (w == 16)
				memcpy(v + m * w + 8, &d.hi, 8);
		}
		m++;
	}
	radix_sort(v, tmp, m, w);
	for (size_t i = 0; i < m; i++)
		if (i == 0 || memcmp(v + i * w, v + (i - 1) * w, w) != 0)
			distinct++;
	free(v);
	free(tmp);
	return m - distinct;
}

/* Each algorithm's collisions among the distinct contents, and chance's. */
static void tally_collisions(struct figures *f, const struct index *ix,
			     int current_input, const uint32_t *counts,
			     const struct algo *const *algos, size_t nalgos)
{
	for (size_t a = 0; a < nalgos; a++) {
		double d = (double)f->distinct_pages;

		f->collisions[a] = count_collisions(ix, current_input, counts,
						    a, algos[a]->bits);
		/* n(n-1)/2^(b+1): the birthday estimate for b-bit digests. */
		f->expected_collisions[a] = d < 2 ? 0.0 : d * (d - 1.0) /
			ldexp(1.0, (int)algos[a]->bits + 1);
	}
}

void ksm_tally(struct figures *f, const struct index *ix, int current_input,
	       const struct frame_counts *fc,
	       const struct algo *const *algos, size_t nalgos,
	       const struct ksm_params *p)
{
	ksm_tally_counts(f, ix, current_input, NULL, fc, algos, nalgos, p);
}

void frame_counts_free(struct frame_counts *fc)
{
	free(fc->frames);
	free(fc->ksm);
	memset(fc, 0, sizeof(*fc));
}

/* The frames of content @id with @c pages: from @fc, else one per page. */
static inline uint64_t content_frames(const struct frame_counts *fc, size_t id,
				      uint64_t c)
{
	return fc ? (id < fc->n ? fc->frames[id] : 0) : c;
}

/*
 * Whether KSM merges a content with @c pages: on two frames or more, or on
 * one that is a KSM page already (mm/ksm.c never merges a page with itself:
 * mappings of one frame since fork stay as they are).
 */
static inline int content_merges(const struct frame_counts *fc, size_t id,
				 uint64_t c)
{
	return c >= 2 && (!fc || content_frames(fc, id, c) >= 2 ||
			  (id < fc->n && fc->ksm[id]));
}

/* What the walk over the contents adds up besides the figures themselves. */
struct tally_sums {
	uint64_t zero_sharing;		/* the zero pages' saving under max_page_sharing */
	uint64_t unlimited_sharing;	/* the saving without max_page_sharing */
	uint64_t zero_unlimited;	/* ... of it, zero pages' */
	uint64_t freed;			/* frames freed */
};

/* One content of @c pages: its histogram bucket and what KSM makes of it. */
static void tally_content(struct figures *f, struct tally_sums *t,
			  const struct index *ix, size_t id, uint64_t c,
			  const struct frame_counts *fc,
			  const struct ksm_params *p)
{
	uint64_t M = p->max_page_sharing;

	f->distinct_pages++;
	int b = 63 - __builtin_clzll(c);

	f->hist_contents[b]++;
	f->hist_pages[b] += c;
	int merges = content_merges(fc, id, c);

	if (index_is_zero(ix, id)) {
		f->zero_pages = c;
		f->ksm_zero_if_z = c;
		t->zero_sharing = merges ? ksm_saved_pages(c, 0, p) : 0;
		t->zero_unlimited = merges ? c - 1 : 0;
	}
	if (merges)
		t->unlimited_sharing += c - 1;
	/*
	 * use_zero_pages: each zero page ksmd visits maps the kernel's
	 * zero page, one mapping at a time, forked or not.
	 */
	if (index_is_zero(ix, id) && p->use_zero_pages) {
		f->ksm_zero_pages = c;
		t->freed += content_frames(fc, id, c);
	} else if (merges) {
		uint64_t shared, sharing;

		ksm_content(c, M, &shared, &sharing);
		f->pages_shared += shared;
		f->pages_sharing += sharing;
		t->freed += ksm_freed_frames(content_frames(fc, id, c), c, M);
	}
}

/* The savings, from the counts of the contents: with and without each of
 * use_zero_pages and max_page_sharing, and KSM's own ratios. */
static void tally_savings(struct figures *f, struct tally_sums *t,
			  const struct frame_counts *fc,
			  const struct ksm_params *p)
{
	f->freed_bytes = t->freed * PAGE_BYTES;
	f->frames = fc ? fc->total : f->pages;
	f->estimate = fc && fc->estimate;
	f->saved_bytes = (f->pages_sharing + f->ksm_zero_pages) * PAGE_BYTES;
	f->saved_zero_bytes = (p->use_zero_pages ? f->ksm_zero_pages : t->zero_sharing) *
			      PAGE_BYTES;
	/* The other use_zero_pages: zero pages leave or join the KSM groups. */
	if (p->use_zero_pages)
		f->saved_bytes_other_z = (f->pages_sharing + t->zero_sharing) * PAGE_BYTES;
	else
		f->saved_bytes_other_z = (f->pages_sharing - t->zero_sharing +
					  f->ksm_zero_if_z) * PAGE_BYTES;
	/* No max_page_sharing: every group saves all but one page. */
	if (p->use_zero_pages)
		t->unlimited_sharing -= t->zero_unlimited;
	f->saved_bytes_unlimited = (t->unlimited_sharing + f->ksm_zero_pages) * PAGE_BYTES;
	/* A page merged with the zero page (use_zero_pages) is no longer tracked. */
	f->general_profit = ksm_general_profit(f->pages_sharing + f->ksm_zero_pages,
					       f->pages - f->ksm_zero_pages);
	f->duplicate_ratio = f->pages ?
		(double)(f->pages - f->distinct_pages) / (double)f->pages : 0.0;
	f->saved_percent = ksm_saved_percent(f->pages_sharing + f->ksm_zero_pages,
					     f->pages);
}

void ksm_tally_counts(struct figures *f, const struct index *ix,
		      int current_input, const uint32_t *counts,
		      const struct frame_counts *fc,
		      const struct algo *const *algos, size_t nalgos,
		      const struct ksm_params *p)
{
	size_t n = index_size(ix);
	struct tally_sums t = { 0 };

	f->ksm_zero_if_z = 0;
	f->zero_pages = f->distinct_pages = 0;
	f->pages_shared = f->pages_sharing = f->ksm_zero_pages = 0;
	memset(f->hist_contents, 0, sizeof(f->hist_contents));
	memset(f->hist_pages, 0, sizeof(f->hist_pages));
	for (size_t id = 0; id < n; id++) {
		uint64_t c = content_count(ix, current_input, counts, id);

		if (c)
			tally_content(f, &t, ix, id, c, fc, p);
	}
	tally_savings(f, &t, fc, p);
	tally_collisions(f, ix, current_input, counts, algos, nalgos);
}
