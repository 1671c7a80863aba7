/* SPDX-License-Identifier: MIT */
#ifndef KSMSCAN_RBTREE_H
#define KSMSCAN_RBTREE_H

#include <stddef.h>
#include <stdint.h>

#include "../util/page.h"

/*
 * The shape of a red-black tree, nodes in one array addressed by 32-bit
 * indexes, insertion only (as mm/ksm.c's trees are used by the simulations:
 * the unstable tree is emptied, never pruned). What a node holds lives in
 * the caller's array, at the same index; the caller walks the tree itself
 * (root, child[0] smaller, child[1] larger) with its own comparison.
 */

/* One node's links. */
struct rb_link {
	uint32_t child[2];		/* child[0] left (smaller), child[1] right */
	uint32_t parent;
	uint8_t red;
};

/* A tree. */
struct rb_tree {
	struct rb_link *l;		/* the nodes, 0 .. len - 1 */
	size_t len, cap;
	uint32_t root;			/* NO_ID when empty */
};

/**
 * rb_init() - an empty tree.
 * @t: the tree
 */
void rb_init(struct rb_tree *t);

/**
 * rb_insert() - add a node where a search ended, and rebalance.
 * @t: the tree
 * @parent: the last node the search visited, or NO_ID for an empty tree
 * @dir: 1 if the new node is larger than @parent, 0 if smaller
 *
 * Return: the new node's index (the next free one: len before the call).
 */
uint32_t rb_insert(struct rb_tree *t, uint32_t parent, int dir);

/**
 * rb_clear() - empty the tree, keeping its memory.
 * @t: the tree
 */
void rb_clear(struct rb_tree *t);

/**
 * rb_free() - free the tree's memory.
 * @t: the tree
 */
void rb_free(struct rb_tree *t);

#endif
