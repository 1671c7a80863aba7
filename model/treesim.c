/* SPDX-License-Identifier: MIT */
/*
 * The tree report's trees: rbtree.c's shape, nodes that keep a content's
 * first bytes. The comparison counts are what the tree report prints.
 */
#include <stdlib.h>
#include <string.h>

#include "../util/util.h"
#include "rbtree.h"
#include "treesim.h"

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
};

struct tree {
	int by_checksum;
	struct node *n;			/* at the indexes of shape's nodes */
	size_t ncap;			/* n's room */
	struct rb_tree shape;
	struct tree_stats st;
};

struct tree *tree_new(int by_checksum)
{
	struct tree *t = xcalloc(1, sizeof(*t));

	t->by_checksum = by_checksum;
	rb_init(&t->shape);
	return t;
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

int tree_add(struct tree *t, const unsigned char *page,
	     const unsigned char *stable, const struct digest *sum)
{
	double t0 = now_seconds();
	uint32_t parent = NO_ID, cur = t->shape.root;
	uint64_t depth = 0;
	int c = 0, found = 0;

	while (cur != NO_ID) {
		depth++;
		c = node_compare(t, page, sum, &t->n[cur]);
		if (c == 0) {
			found = 1;
			break;
		}
		parent = cur;
		cur = t->shape.l[cur].child[c > 0];
	}
	t->st.node_visits += depth;
	if (depth > t->st.max_depth)
		t->st.max_depth = depth;
	if (found) {
		t->st.matches++;
	} else {
		uint32_t z = rb_insert(&t->shape, parent, c > 0);

		if (t->ncap < t->shape.cap) {	/* grow with the shape */
			t->ncap = t->shape.cap;
			t->n = xreallocarray(t->n, t->ncap, sizeof(*t->n));
		}
		t->n[z] = (struct node){ .page = stable, .hi = sum->hi,
					 .lo = sum->lo };
		memcpy(t->n[z].head, page, HEAD);
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
	rb_free(&t->shape);
	free(t);
}
