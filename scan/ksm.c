/* SPDX-License-Identifier: MIT */
/*
 * The KSM model of SPEC section 4: what KSM's counters would read in steady
 * state if every page were mergeable and unchanging, and the collision counts.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../util/util.h"
#include "ksm.h"

/*
 * Sort 128-bit keys with an LSD radix sort of 16-bit digits, using only the
 * digits the width has (32-bit digests: 2 passes). Stable, O(n).
 */
static void radix_sort(struct digest *v, struct digest *tmp, size_t n,
		       unsigned bits)
{
	size_t *count = xcalloc(65536, sizeof(*count));

	for (unsigned shift = 0; shift < bits; shift += 16) {
		struct digest *src = v, *dst = tmp;

		memset(count, 0, 65536 * sizeof(*count));
		for (size_t i = 0; i < n; i++) {
			uint64_t w = shift < 64 ? src[i].lo : src[i].hi;

			count[(w >> (shift % 64)) & 0xffff]++;
		}
		size_t sum = 0;
		for (size_t k = 0; k < 65536; k++) {
			size_t c = count[k];

			count[k] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++) {
			uint64_t w = shift < 64 ? src[i].lo : src[i].hi;

			dst[count[(w >> (shift % 64)) & 0xffff]++] = src[i];
		}
		memcpy(v, dst, n * sizeof(*v));
	}
	free(count);
}

/* Distinct contents less distinct digest values among them, for one algorithm. */
static uint64_t count_collisions(const struct index *ix, int current_input,
				 size_t a, unsigned bits)
{
	size_t n = index_size(ix), m = 0;
	struct digest *v = xcalloc(n, sizeof(*v));
	struct digest *tmp = xcalloc(n, sizeof(*tmp));
	uint64_t distinct = 0;

	for (size_t id = 0; id < n; id++) {
		const struct index_entry *e = index_entry(ix, id);

		if (current_input ? e->count_input : e->count)
			index_digest(ix, a, id, &v[m++]);
	}
	radix_sort(v, tmp, m, bits);
	for (size_t i = 0; i < m; i++)
		if (i == 0 || v[i].lo != v[i - 1].lo || v[i].hi != v[i - 1].hi)
			distinct++;
	free(v);
	free(tmp);
	return m - distinct;
}

void ksm_tally(struct figures *f, const struct index *ix, int current_input,
	       const struct algo *const *algos, size_t nalgos,
	       const struct ksm_params *p)
{
	size_t n = index_size(ix);
	uint64_t M = p->max_page_sharing;

	f->zero_pages = f->distinct_pages = 0;
	f->pages_shared = f->pages_sharing = f->ksm_zero_pages = 0;
	for (size_t id = 0; id < n; id++) {
		const struct index_entry *e = index_entry(ix, id);
		uint64_t c = current_input ? e->count_input : e->count;

		if (!c)
			continue;
		f->distinct_pages++;
		if (index_is_zero(ix, id)) {
			f->zero_pages = c;
			/* use_zero_pages: each zero page maps the kernel's zero page. */
			if (p->use_zero_pages) {
				f->ksm_zero_pages = c;
				continue;
			}
		}
		if (c >= 2) {
			/* One KSM page per max_page_sharing mappings (stable_node chains). */
			uint64_t shared = c / M + (c % M != 0);

			f->pages_shared += shared;
			f->pages_sharing += c - shared;
		}
	}
	f->saved_bytes = (f->pages_sharing + f->ksm_zero_pages) * PAGE_BYTES;
	f->general_profit = (int64_t)f->saved_bytes - (int64_t)(f->pages * 64);
	f->duplicate_ratio = f->pages ?
		(double)(f->pages - f->distinct_pages) / (double)f->pages : 0.0;
	f->saved_percent = f->pages ?
		100.0 * (double)f->saved_bytes / ((double)f->pages * PAGE_BYTES) : 0.0;

	for (size_t a = 0; a < nalgos; a++) {
		double d = (double)f->distinct_pages;

		f->collisions[a] = count_collisions(ix, current_input, a,
						    algos[a]->bits);
		/* n(n-1)/2^(b+1): the birthday estimate for b-bit digests. */
		f->expected_collisions[a] = d < 2 ? 0.0 : d * (d - 1.0) /
			ldexp(1.0, (int)algos[a]->bits + 1);
	}
}
