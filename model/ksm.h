/* SPDX-License-Identifier: MIT */
#ifndef KSMSCAN_MODEL_KSM_H
#define KSMSCAN_MODEL_KSM_H

#include <stdint.h>

/*
 * KSM's arithmetic, written once: what KSM makes of the pages of one content,
 * what it saves, and general_profit. The static model (scan/tally.c), the
 * --group scopes and the ksmd replay (replay.c) all count with these.
 */

/* The size of struct ksm_rmap_item on 64-bit: general_profit's unit. */
#define RMAP_ITEM_BYTES 64

/* KSM's settings, as /sys/kernel/mm/ksm has them: the model's and ksmd's. */
struct ksm_params {
	uint64_t max_page_sharing;	/* M, at least 2 */
	int use_zero_pages;		/* zero pages go to ksm_zero_pages */
	uint64_t pages_to_scan;		/* pages per wake-up of ksmd, at least 1 */
	uint64_t sleep_ms;		/* sleep_millisecs between wake-ups */
	int smart_scan;			/* skip pages that did not merge */
};

/* The most a setting of ksmd's (pages_to_scan, sleep_millisecs, the
 * advisor's page bounds) may be here. */
#define KSMD_SETTING_MAX 100000000

/**
 * ksm_content() - what KSM makes of c pages with one content, in steady state.
 * @c: the pages, at least 2
 * @M: max_page_sharing, at least 2
 * @shared: set to its KSM pages (pages_shared)
 * @sharing: set to the further mappings of them (pages_sharing)
 *
 * c = k * M + r: k full KSM pages; r >= 2 leftovers make one more; a single
 * leftover is not merged at all (it needs a partner in the unstable tree).
 */
void ksm_content(uint64_t c, uint64_t M, uint64_t *shared, uint64_t *sharing);

/**
 * ksm_freed_frames() - the physical pages KSM frees of one content it
 * merges: its frames but its KSM pages, and but the frame of a lone
 * leftover mapping that finds every KSM page full (ksm_content()).
 * @frames: the content's distinct frames (for a file: its pages)
 * @c: its mappings, at least 2
 * @M: max_page_sharing, at least 2
 *
 * For a file, where each page is a frame, this is ksm_content()'s sharing.
 */
uint64_t ksm_freed_frames(uint64_t frames, uint64_t c, uint64_t M);

/**
 * ksm_saved_pages() - the pages KSM frees of one content with @c pages:
 * its pages_sharing, or with use_zero_pages every zero page.
 * @c: the content's pages (0 and 1 save nothing)
 * @is_zero: whether it is the all-zero page
 * @p: the KSM settings
 */
uint64_t ksm_saved_pages(uint64_t c, int is_zero, const struct ksm_params *p);

/**
 * ksm_general_profit() - /sys/kernel/mm/ksm/general_profit: the bytes saved
 * less the rmap_items KSM keeps for the pages it tracks.
 * @saved_pages: pages_sharing plus ksm_zero_pages
 * @rmap_items: the pages KSM tracks (a page merged with the zero page is
 *	tracked no more, once ksmd has passed it again)
 */
int64_t ksm_general_profit(uint64_t saved_pages, uint64_t rmap_items);

/**
 * ksm_saved_percent() - the saving as a percentage of the memory.
 * @saved_pages: pages_sharing plus ksm_zero_pages
 * @pages: the pages of the memory (0 gives 0)
 */
double ksm_saved_percent(uint64_t saved_pages, uint64_t pages);

#endif
