/* SPDX-License-Identifier: MIT */
#ifndef KSMSCAN_TREESIM_H
#define KSMSCAN_TREESIM_H

#include <stddef.h>
#include <stdint.h>

#include "../hash/hash.h"

/*
 * The tree report's simulation. Every page is searched in scan order; a match
 * is counted and not inserted, otherwise the page is inserted into a
 * red-black tree, ordered either as KSM's unstable tree (memcmp of whole
 * pages, mm/ksm.c) or checksum first (memcmp only between equal checksums,
 * as proposed for KSM in 2017 and used by UKSM).
 */

/* What one strategy cost. */
struct tree_stats {
	uint64_t inserts;		/* pages inserted (no match found) */
	uint64_t matches;		/* pages that found an equal page */
	uint64_t node_visits;		/* nodes visited by all searches */
	uint64_t max_depth;		/* longest search path, in nodes */
	uint64_t memcmp_calls;		/* page comparisons */
	uint64_t memcmp_bytes;		/* bytes compared, up to the first difference */
	uint64_t checksum_compares;	/* checksum comparisons */
	double seconds;			/* time spent searching and inserting */
};

struct tree;

/**
 * tree_new() - an empty tree.
 * @by_checksum: 0 for KSM's memcmp order, 1 for checksum first
 */
struct tree *tree_new(int by_checksum);

/**
 * tree_add() - search for a page; insert it if no equal page is in the tree.
 * @t: the tree
 * @page: the page's bytes for the search
 * @stable: the same content's bytes that stay valid (kept if inserted)
 * @sum: the page's checksum (checksum-first trees)
 *
 * Return: 1 if an equal page was found, 0 if the page was inserted.
 */
int tree_add(struct tree *t, const unsigned char *page,
	     const unsigned char *stable, const struct digest *sum);

/**
 * tree_stats() - the counts so far.
 * @t: the tree
 */
const struct tree_stats *tree_stats(const struct tree *t);

/**
 * tree_free() - free a tree.
 * @t: the tree, or NULL
 */
void tree_free(struct tree *t);

#endif
