/* SPDX-License-Identifier: MIT */
/*
 * Unit test of model/: KSM's arithmetic (ksm.c) against cases worked by
 * hand from mm/ksm.c's rules; the red-black tree (rbtree.c) against the
 * red-black invariants and an in-order walk that must come out sorted; the
 * tree simulation (treesim.c) against counts known from the pages given;
 * zram's same-filled test against its definition. Prints the failures and
 * last "N passed, N failed", like the Python suites.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../hash/hash.h"
#include "../model/ksm.h"
#include "../model/rbtree.h"
#include "../model/treesim.h"
#include "../model/zram.h"
#include "../util/page.h"

static unsigned long passed, failed;

static void check(int ok, const char *what)
{
	if (ok) {
		passed++;
		return;
	}
	failed++;
	printf("FAIL %s\n", what);
}

/*
 * c pages of one content, max_page_sharing M: k = c / M full KSM pages of
 * M mappings each; r = c % M left over make one more KSM page when r >= 2,
 * and a single one stays unmerged (it has no partner in the unstable tree).
 * Worked by hand: { c, M, pages_shared, pages_sharing }.
 */
static const uint64_t content_cases[][4] = {
	{ 2, 256, 1, 1 },	/* two copies: one KSM page, one sharer */
	{ 3, 256, 1, 2 },
	{ 256, 256, 1, 255 },	/* one full chain */
	{ 257, 256, 1, 255 },	/* the 257th page finds the KSM page full */
	{ 258, 256, 2, 256 },	/* two leftovers merge with each other */
	{ 512, 256, 2, 510 },
	{ 513, 256, 2, 510 },
	{ 2, 2, 1, 1 },
	{ 3, 2, 1, 1 },		/* 2 + a lone one */
	{ 4, 2, 2, 2 },
	{ 5, 2, 2, 2 },
	{ 1000, 10, 100, 900 },
	{ 1001, 10, 100, 900 },
	{ 1002, 10, 101, 901 },
};

static void test_ksm_content(void)
{
	char what[160];

	for (size_t i = 0; i < sizeof(content_cases) / sizeof(content_cases[0]); i++) {
		const uint64_t *c = content_cases[i];
		uint64_t shared = 0, sharing = 0;

		ksm_content(c[0], c[1], &shared, &sharing);
		snprintf(what, sizeof(what), "ksm_content(%" PRIu64 ", M=%" PRIu64
			 ") = %" PRIu64 "/%" PRIu64 ", by hand %" PRIu64 "/%" PRIu64,
			 c[0], c[1], shared, sharing, c[2], c[3]);
		check(shared == c[2] && sharing == c[3], what);
	}
}

static void test_saved_and_profit(void)
{
	struct ksm_params p = { .max_page_sharing = 256 };

	check(ksm_saved_pages(0, 0, &p) == 0 && ksm_saved_pages(1, 0, &p) == 0,
	      "one page or none saves nothing");
	check(ksm_saved_pages(300, 0, &p) == 298,
	      "300 copies save 298 (255 + 43 sharers)");
	check(ksm_saved_pages(300, 1, &p) == 298,
	      "zero pages without use_zero_pages merge like any content");
	p.use_zero_pages = 1;
	check(ksm_saved_pages(300, 1, &p) == 300 && ksm_saved_pages(1, 1, &p) == 1,
	      "with use_zero_pages every zero page is saved, a lone one too");
	check(ksm_saved_pages(300, 0, &p) == 298,
	      "use_zero_pages leaves other contents as they were");
	check(ksm_general_profit(10, 100) == 10 * 4096 - 100 * 64,
	      "general_profit = saved x 4096 - rmap_items x 64");
	check(ksm_general_profit(0, 100) == -6400, "general_profit may be negative");
	check(ksm_saved_percent(0, 0) == 0 && fabs(ksm_saved_percent(1, 4) - 25) < 1e-12,
	      "saved_percent: 1 of 4 pages is 25%, of none 0");
}

/* Black height of the subtree at @n, or -1 if it breaks an invariant. */
static int black_height(const struct rb_tree *t, uint32_t n, uint32_t parent)
{
	int l, r;

	if (n == NO_ID)
		return 1;
	if (t->l[n].parent != parent)
		return -1;
	if (t->l[n].red && parent != NO_ID && t->l[parent].red)
		return -1;	/* a red node's parent is black */
	l = black_height(t, t->l[n].child[0], n);
	r = black_height(t, t->l[n].child[1], n);
	if (l < 0 || l != r)
		return -1;
	return l + !t->l[n].red;
}

/* Visit @n in order, checking that the keys ascend. */
static int in_order(const struct rb_tree *t, uint32_t n, const uint64_t *key,
		    uint64_t *last, size_t *seen)
{
	if (n == NO_ID)
		return 1;
	if (!in_order(t, t->l[n].child[0], key, last, seen) ||
	    (*seen && key[n] <= *last))
		return 0;
	*last = key[n];
	(*seen)++;
	return in_order(t, t->l[n].child[1], key, last, seen);
}

static size_t depth(const struct rb_tree *t, uint32_t n)
{
	size_t l, r;

	if (n == NO_ID)
		return 0;
	l = depth(t, t->l[n].child[0]);
	r = depth(t, t->l[n].child[1]);
	return 1 + (l > r ? l : r);
}

/* Insert @n keys of @order (0 ascending, 1 descending, 2 scattered). */
static void test_rbtree(size_t n, int order)
{
	struct rb_tree t;
	uint64_t *key = calloc(n, sizeof(*key)), last = 0;
	size_t seen = 0;
	char what[120];

	rb_init(&t);
	for (size_t i = 0; i < n; i++) {
		uint64_t k = order == 0 ? i : order == 1 ? n - i :
			     (i * 2654435761u) % 1000003;
		uint32_t at = t.root, parent = NO_ID;
		int dir = 0;

		while (at != NO_ID) {	/* the caller's own search */
			parent = at;
			dir = k > key[at];
			at = t.l[at].child[dir];
		}
		key[rb_insert(&t, parent, dir)] = k;
	}
	snprintf(what, sizeof(what), "rbtree of %zu keys (order %d): root black, "
		 "no red-red, equal black heights, parents right", n, order);
	check(t.root == NO_ID || (!t.l[t.root].red &&
				  black_height(&t, t.root, NO_ID) > 0), what);
	snprintf(what, sizeof(what), "rbtree of %zu keys (order %d): in order, "
		 "all %zu, depth <= 2 log2(n + 1)", n, order, n);
	check(in_order(&t, t.root, key, &last, &seen) && seen == n &&
	      depth(&t, t.root) <= 2 * log2((double)n + 1) + 1e-9, what);
	rb_clear(&t);
	check(t.root == NO_ID && t.len == 0, "rb_clear empties the tree");
	rb_free(&t);
	free(key);
}

/* Page @i of a set where page i holds content i % @distinct. */
static void fill(unsigned char *page, size_t i, size_t distinct)
{
	uint64_t v = i % distinct + 1;

	memset(page, 0, PAGE_BYTES);
	memcpy(page + (v * 8) % (PAGE_BYTES - 8), &v, sizeof(v));
}

static void test_treesim(int by_checksum)
{
	enum { PAGES = 3000, DISTINCT = 700 };
	unsigned char *pages = malloc((size_t)PAGES * PAGE_BYTES);
	struct tree *t = tree_new(by_checksum);
	const struct algo *a = hash_lookup("xxhash", 6);
	const struct tree_stats *st;
	char what[160];

	for (size_t i = 0; i < PAGES; i++) {
		struct digest d;

		fill(pages + i * PAGE_BYTES, i, DISTINCT);
		a->hash(pages + i * PAGE_BYTES, &d);
		tree_add(t, pages + i * PAGE_BYTES, pages + i * PAGE_BYTES, &d);
	}
	st = tree_stats(t);
	snprintf(what, sizeof(what), "%s tree: %u distinct contents inserted, the "
		 "other %u pages matched (got %" PRIu64 ", %" PRIu64 ")",
		 by_checksum ? "checksum-first" : "memcmp", DISTINCT,
		 PAGES - DISTINCT, st->inserts, st->matches);
	check(st->inserts == DISTINCT && st->matches == PAGES - DISTINCT, what);
	check(by_checksum ? st->checksum_compares > 0 && st->memcmp_calls >= st->matches
			  : st->checksum_compares == 0 &&
			    st->memcmp_calls == st->node_visits,
	      by_checksum ? "checksum-first: memcmp only at equal checksums, at "
			    "least once per match" :
			    "memcmp tree: one memcmp per node visited, no checksum");
	check(st->memcmp_bytes >= (uint64_t)st->matches * PAGE_BYTES,
	      "a match compares all 4096 bytes");
	tree_free(t);
	free(pages);
}

static void test_zram_same(void)
{
	static unsigned char page[PAGE_BYTES];

	memset(page, 0, sizeof(page));
	check(zram_same_filled(page), "zram: a zero page is same-filled");
	memset(page, 0xab, sizeof(page));
	check(zram_same_filled(page), "zram: 0xab repeated is same-filled");
	for (size_t i = 0; i < PAGE_BYTES; i += 8)
		memcpy(page + i, "\x01\x02\x03\x04\x05\x06\x07\x08", 8);
	check(zram_same_filled(page), "zram: one 8-byte word repeated is same-filled");
	page[PAGE_BYTES - 1] ^= 1;
	check(!zram_same_filled(page), "zram: a last word that differs is not");
}

int main(void)
{
	hash_init();
	test_ksm_content();
	test_saved_and_profit();
	for (int order = 0; order < 3; order++) {
		test_rbtree(1, order);
		test_rbtree(7, order);
		test_rbtree(5000, order);
	}
	test_treesim(0);
	test_treesim(1);
	test_zram_same();
	printf("%lu passed, %lu failed\n", passed, failed);
	return failed != 0;
}
