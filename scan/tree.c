/* SPDX-License-Identifier: MIT */
/*
 * A red-black tree (insertion only, as the simulation never erases), nodes in
 * one array addressed by 32-bit indexes. The comparison counts are what the
 * tree report prints.
 */
#include <stdlib.h>
#include <string.h>

#include "../util/util.h"
#include "tree.h"

#define NIL UINT32_MAX

/*
 * Bytes of a content a node keeps itself: most comparisons end within them,
 * so the content's page (in an input or the spool) is read only for pages
 * that begin alike, and the report keeps a small resident set.
 */
#define HEAD 16

struct node {
	const unsigned char *page;	/* the inserted content (stable bytes) */
	unsigned char head[HEAD];	/* its first bytes */
	uint64_t hi, lo;		/* its checksum */
	uint32_t child[2], parent;	/* child[0] left (smaller), child[1] right */
	uint8_t red;
};

struct tree {
	int by_checksum;
	struct node *n;
	size_t len, cap;
	uint32_t root;
	struct tree_stats st;
};

struct tree *tree_new(int by_checksum)
{
	struct tree *t = xcalloc(1, sizeof(*t));

	t->by_checksum = by_checksum;
	t->root = NIL;
	return t;
}

/*
 * memcmp of two pages from byte @from on (a multiple of 8, the bytes before it
 * equal) that also says how many bytes it looked at: up to and including the
 * first difference, or all of them for equal pages.
 */
static int page_compare(const unsigned char *a, const unsigned char *b,
			size_t from, uint64_t *bytes)
{
	for (size_t i = from; i < PAGE_BYTES; i += 8) {
		uint64_t x, y;

		memcpy(&x, a + i, 8);
		memcpy(&y, b + i, 8);
		if (x != y) {
			size_t k = i;

			while (a[k] == b[k])
				k++;
			*bytes += k + 1;
			return a[k] < b[k] ? -1 : 1;
		}
	}
	*bytes += PAGE_BYTES;
	return 0;
}

/* Compare the searched page with a node, counting what is compared. */
static int node_compare(struct tree *t, const unsigned char *page,
			const struct digest *sum, const struct node *n)
{
	if (t->by_checksum) {
		t->st.checksum_compares++;
		if (sum->hi != n->hi)
			return sum->hi < n->hi ? -1 : 1;
		if (sum->lo != n->lo)
			return sum->lo < n->lo ? -1 : 1;
	}
	t->st.memcmp_calls++;
	for (size_t i = 0; i < HEAD; i++)
		if (page[i] != n->head[i]) {
			t->st.memcmp_bytes += i + 1;
			return page[i] < n->head[i] ? -1 : 1;
		}
	return page_compare(page, n->page, HEAD, &t->st.memcmp_bytes);
}

/*
 * Rotate around x: d = 0 turns x's right child into its parent (a left
 * rotation), d = 1 the mirror image.
 */
static void rotate(struct tree *t, uint32_t x, int d)
{
	struct node *n = t->n;
	uint32_t y = n[x].child[!d];

	n[x].child[!d] = n[y].child[d];
	if (n[y].child[d] != NIL)
		n[n[y].child[d]].parent = x;
	n[y].parent = n[x].parent;
	if (n[x].parent == NIL)
		t->root = y;
	else
		n[n[x].parent].child[n[n[x].parent].child[1] == x] = y;
	n[y].child[d] = x;
	n[x].parent = y;
}

/* Restore the red-black properties after inserting red node z (CLRS). */
static void insert_fixup(struct tree *t, uint32_t z)
{
	struct node *n = t->n;

	while (n[z].parent != NIL && n[n[z].parent].red) {
		uint32_t p = n[z].parent, g = n[p].parent;
		int d = p == n[g].child[1];	/* which side of g the parent is */
		uint32_t u = n[g].child[!d];	/* the uncle */

		if (u != NIL && n[u].red) {
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

int tree_add(struct tree *t, const unsigned char *page,
	     const unsigned char *stable, const struct digest *sum)
{
	double t0 = now_seconds();
	uint32_t parent = NIL, cur = t->root;
	uint64_t depth = 0;
	int c = 0, found = 0;

	while (cur != NIL) {
		depth++;
		c = node_compare(t, page, sum, &t->n[cur]);
		if (c == 0) {
			found = 1;
			break;
		}
		parent = cur;
		cur = t->n[cur].child[c > 0];
	}
	t->st.node_visits += depth;
	if (depth > t->st.max_depth)
		t->st.max_depth = depth;
	if (found) {
		t->st.matches++;
	} else {
		if (t->len == t->cap) {
			t->cap = t->cap ? t->cap * 2 : 1024;
			t->n = xreallocarray(t->n, t->cap, sizeof(*t->n));
		}
		uint32_t z = (uint32_t)t->len++;

		t->n[z] = (struct node){ .page = stable, .hi = sum->hi,
					 .lo = sum->lo, .child = { NIL, NIL },
					 .parent = parent, .red = 1 };
		memcpy(t->n[z].head, page, HEAD);
		if (parent == NIL)
			t->root = z;
		else
			t->n[parent].child[c > 0] = z;
		insert_fixup(t, z);
		t->st.inserts++;
	}
	t->st.seconds += now_seconds() - t0;
	return found;
}

const struct tree_stats *tree_stats(const struct tree *t)
{
	return &t->st;
}

void tree_free(struct tree *t)
{
	if (!t)
		return;
	free(t->n);
	free(t);
}
