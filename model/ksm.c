/* SPDX-License-Identifier: MIT */
/*
 * KSM's arithmetic (docs/model.md): what the kernel's counters read for the
 * pages of one content, and general_profit, as measured on Linux 6.18.
 */
#include "../util/page.h"
#include "ksm.h"

void ksm_content(uint64_t c, uint64_t M, uint64_t *shared, uint64_t *sharing)
{
	/*
	 * A KSM page takes at most M mappings (stable_node chains): c pages
	 * fill c / M of them. Pages left over merge only with each other, in
	 * the unstable tree, so r >= 2 leftovers make one more KSM page and a
	 * single one stays unmerged (measured on Linux 6.18, tests/test_ksm_live.py).
	 */
	uint64_t full = c / M, rest = c % M;

	*shared = full + (rest >= 2);
	*sharing = full * (M - 1) + (rest >= 2 ? rest - 1 : 0);
}

uint64_t ksm_freed_frames(uint64_t frames, uint64_t c, uint64_t M)
{
	uint64_t shared, sharing, kept;

	ksm_content(c, M, &shared, &sharing);
	kept = shared + (c % M == 1);
	return frames > kept ? frames - kept : 0;
}

uint64_t ksm_saved_pages(uint64_t c, int is_zero, const struct ksm_params *p)
{
	uint64_t shared, sharing;

	if (is_zero && p->use_zero_pages)
		return c;
	if (c < 2)
		return 0;
	ksm_content(c, p->max_page_sharing, &shared, &sharing);
	return sharing;
}

int64_t ksm_general_profit(uint64_t saved_pages, uint64_t rmap_items)
{
	return (int64_t)(saved_pages * PAGE_BYTES) -
	       (int64_t)(rmap_items * RMAP_ITEM_BYTES);
}

double ksm_saved_percent(uint64_t saved_pages, uint64_t pages)
{
	return pages ? 100.0 * (double)saved_pages / (double)pages : 0.0;
}
