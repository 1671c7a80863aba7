/* SPDX-License-Identifier: MIT */
#ifndef KSMSCAN_SCAN_PAGEREC_H
#define KSMSCAN_SCAN_PAGEREC_H

#include <stddef.h>
#include <stdint.h>

#include "scan.h"
#include "sink.h"

/*
 * The pages of live processes as the thp and numa reports keep them: each
 * page's content and a tag the report gives it (a NUMA node, a huge page),
 * so that every scope (a process, all of them, a --by row) is counted from
 * the same records with KSM's arithmetic (model/ksm.h). 16 bytes a page,
 * and 8 more per page of the largest process for its addresses.
 */

/* One page. */
struct page_rec {
	uint32_t input;		/* its input's number */
	uint32_t id;		/* its content's id in the index */
	int32_t tag;		/* the report's: a node, a huge page, or -1 */
	uint32_t zero;		/* the content is the zero page */
};

/* The pages recorded so far, and the addresses of the current input's. */
struct page_recs {
	struct page_rec *v;
	size_t n, cap;
	uint64_t *addr;		/* addresses of the current input's pages */
	size_t addr_cap;
	size_t first;		/* its first record */
	size_t input;		/* its number */
};

/**
 * page_recs_add() - record a page of a live process; a page of a new input
 * starts that input's addresses afresh.
 * @r: the records
 * @pg: the page
 */
void page_recs_add(struct page_recs *r, const struct page_event *pg);

/**
 * page_recs_current() - the current input's records and their addresses.
 * @r: the records
 * @input: the input whose scope is being counted
 * @n: set to how many (0 if @input recorded no page)
 *
 * Return: its first record; addresses are r->addr[0 .. *n - 1].
 */
struct page_rec *page_recs_current(struct page_recs *r, size_t input, size_t *n);

/**
 * page_recs_scope() - a copy of the records of a scope: one input's, all
 * inputs' ("*"), or a group's (--by, --enable, --group).
 * @r: the records
 * @sc: the scope
 * @cfg: the run (its groups)
 * @n: set to how many
 *
 * Return: the copy (free() it), NULL if @n is 0.
 */
struct page_rec *page_recs_scope(const struct page_recs *r, const struct scope *sc,
				 const struct scan_config *cfg, size_t *n);

/**
 * page_recs_saved() - the pages KSM would save of @n records: the
 * contents' pages counted together, or apart per tag when @by_tag (KSM
 * with merge_across_nodes=0 merges only within a node). Sorts @v.
 * @v: the records
 * @n: how many
 * @by_tag: count each tag's pages apart
 * @p: KSM's settings
 */
uint64_t page_recs_saved(struct page_rec *v, size_t n, int by_tag,
			 const struct ksm_params *p);

/**
 * page_recs_free() - free the records.
 * @r: the records
 */
void page_recs_free(struct page_recs *r);

#endif
