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
 * the caller's array, at the same index, or in the node itself
 * (rb_init_nodes(): a node the caller's struct that begins with its
 * links, so that a search step reads one cache line, not one per array);
 * the caller walks the tree itself (root, child[0] smaller, child[1]
 * larger) with its own comparison.
 */

/* One node's links. */
struct rb_link {
	uint32_t child[2];		/* child[0] left (smaller), child[1] right */
	uint32_t parent;
	uint8_t red;
	uint8_t mark;			/* the caller's, 0 at the insertion (a
					 * flag in what would be padding) */
};

/* A tree. */
struct rb_tree {
	union {
		struct rb_link *l;	/* the nodes, 0 .. len - 1 (rb_init()) */
		unsigned char *mem;	/* ... of size bytes each */
	};
	size_t size;			/* a node's bytes */
	size_t len, cap;
	uint32_t root;			/* NO_ID when empty */
};

/**
 * rb_init() - an empty tree whose nodes are their links alone (l[]).
 * @t: the tree
 */
void rb_init(struct rb_tree *t);

/**
 * rb_init_nodes() - an empty tree whose nodes are the caller's structs of
 * @size bytes, each beginning with its struct rb_link (rb_at() reaches one).
 * @t: the tree
 * @size: a node's bytes, at least sizeof(struct rb_link)
 */
void rb_init_nodes(struct rb_tree *t, size_t size);

/**
 * rb_at() - node @i: its links, at the start of the caller's struct.
 * @t: the tree
 * @i: an index below t->len
 *
 * Return: the node.
 */
static inline struct rb_link *rb_at(const struct rb_tree *t, uint32_t i)
{
	return (struct rb_link *)(void *)(t->mem + (size_t)i * t->size);
}

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
