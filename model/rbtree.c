/* SPDX-License-Identifier: MIT */
/* A red-black tree's shape (CLRS insertion), for the tree report and the replay. */
#include <stdlib.h>

#include "../util/util.h"
#include "rbtree.h"

void rb_init(struct rb_tree *t)
{
	*t = (struct rb_tree){ .root = NO_ID };
}

/*
 * Rotate around x: d = 0 turns x's right child into its parent (a left
 * rotation), d = 1 the mirror image.
 */
static void rotate(struct rb_tree *t, uint32_t x, int d)
{
	struct rb_link *n = t->l;
	uint32_t y = n[x].child[!d];

	n[x].child[!d] = n[y].child[d];
	if (n[y].child[d] != NO_ID)
		n[n[y].child[d]].parent = x;
	n[y].parent = n[x].parent;
	if (n[x].parent == NO_ID)
		t->root = y;
	else
		n[n[x].parent].child[n[n[x].parent].child[1] == x] = y;
	n[y].child[d] = x;
	n[x].parent = y;
}

/* Restore the red-black properties after inserting red node z. */
static void insert_fixup(struct rb_tree *t, uint32_t z)
{
	struct rb_link *n = t->l;

	while (n[z].parent != NO_ID && n[n[z].parent].red) {
		uint32_t p = n[z].parent, g = n[p].parent;
		int d = p == n[g].child[1];	/* which side of g the parent is */
		uint32_t u = n[g].child[!d];	/* the uncle */

		if (u != NO_ID && n[u].red) {
			n[p].red = n[u].red = 0;
			n[g].red = 1;
			z = g;
			continue;
		}
		if (z == n[p].child[!d]) {
			z = p;
			rotate(t, z, d);
			p = n[z].parent;
		}
		n[p].red = 0;
		n[g].red = 1;
		rotate(t, g, !d);
	}
	n[t->root].red = 0;
}

uint32_t rb_insert(struct rb_tree *t, uint32_t parent, int dir)
{
	uint32_t z;

	if (t->len == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 1024;
		t->l = xreallocarray(t->l, t->cap, sizeof(*t->l));
	}
	z = (uint32_t)t->len++;
	t->l[z] = (struct rb_link){ { NO_ID, NO_ID }, parent, 1 };
	if (parent == NO_ID)
		t->root = z;
	else
		t->l[parent].child[dir] = z;
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
	free(t->l);
	rb_init(t);
}
