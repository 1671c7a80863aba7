/* SPDX-License-Identifier: MIT */
/* A red-black tree's shape (CLRS insertion), for the tree report and the replay. */
#include <stdlib.h>

#include "../util/util.h"
#include "rbtree.h"

void rb_init(struct rb_tree *t)
{
	rb_init_nodes(t, sizeof(struct rb_link));
}

void rb_init_nodes(struct rb_tree *t, size_t size)
{
	*t = (struct rb_tree){ .size = size, .root = NO_ID };
}

/*
 * Rotate around x: d = 0 turns x's right child into its parent (a left
 * rotation), d = 1 the mirror image.
 */
static void rotate(struct rb_tree *t, uint32_t x, int d)
{
	struct rb_link *nx = rb_at(t, x), *ny = rb_at(t, nx->child[!d]);
	uint32_t y = nx->child[!d];

	nx->child[!d] = ny->child[d];
	if (ny->child[d] != NO_ID)
		rb_at(t, ny->child[d])->parent = x;
	ny->parent = nx->parent;
	if (nx->parent == NO_ID) {
		t->root = y;
	} else {
		struct rb_link *np = rb_at(t, nx->parent);

		np->child[np->child[1] == x] = y;
	}
	ny->child[d] = x;
	nx->parent = y;
}

/* Restore the red-black properties after inserting red node z. */
static void insert_fixup(struct rb_tree *t, uint32_t z)
{
	while (rb_at(t, z)->parent != NO_ID &&
	       rb_at(t, rb_at(t, z)->parent)->red) {
		uint32_t p = rb_at(t, z)->parent, g = rb_at(t, p)->parent;
		int d = p == rb_at(t, g)->child[1];	/* which side of g the parent is */
		uint32_t u = rb_at(t, g)->child[!d];	/* the uncle */

		if (u != NO_ID && rb_at(t, u)->red) {
			rb_at(t, p)->red = rb_at(t, u)->red = 0;
			rb_at(t, g)->red = 1;
			z = g;
			continue;
		}
		if (z == rb_at(t, p)->child[!d]) {
			z = p;
			rotate(t, z, d);
			p = rb_at(t, z)->parent;
		}
		rb_at(t, p)->red = 0;
		rb_at(t, g)->red = 1;
		rotate(t, g, !d);
	}
	rb_at(t, t->root)->red = 0;
}

uint32_t rb_insert(struct rb_tree *t, uint32_t parent, int dir)
{
	uint32_t z;

	if (t->len == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 1024;
		t->mem = xreallocarray(t->mem, t->cap, t->size);
	}
	z = (uint32_t)t->len++;
	*rb_at(t, z) = (struct rb_link){ { NO_ID, NO_ID }, parent, 1, 0 };
	if (parent == NO_ID)
		t->root = z;
	else
		rb_at(t, parent)->child[dir] = z;
	insert_fixup(t, z);
	return z;
}

void rb_clear(struct rb_tree *t)
{
	t->len = 0;
	t->root = NO_ID;
}

void rb_free(struct rb_tree *t)
{
	free(t->mem);
	rb_init_nodes(t, t->size);
}
