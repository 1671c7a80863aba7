/* SPDX-License-Identifier: MIT */
/*
 * Unit test of model/: KSM's arithmetic (ksm.c) against cases worked by
 * hand from mm/ksm.c's rules; the red-black tree (rbtree.c) against the
 * red-black invariants and an in-order walk that must come out sorted; the
 * tree simulation (treesim.c) against counts known from the pages given;
 * zram's same-filled test against its definition; the tuners (advisor.c,
 * ksmtuned.c, kubevirt.c) against cases worked by hand from the kernel's,
 * ksmtuned's and KubeVirt's rules (docs/policies.md), directly and through
 * their tables of operations (policy.h). Prints the failures and
 * last "N passed, N failed", like the Python suites.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../hash/hash.h"
#include "../model/advisor.h"
#include "../model/ksm.h"
#include "../model/ksmtuned.h"
#include "../model/kubevirt.h"
#include "../model/policy.h"
#include "../model/replay.h"
#include "../model/rbtree.h"
#include "../model/treesim.h"
#include "../model/zram.h"
#include "../util/page.h"

#include "unit.h"

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

/*
 * The scan-time advisor, scan_time_advisor()'s integer steps by hand, with
 * the kernel's knobs (target 200 s, max CPU 70%, pages 500 to 30000):
 *
 * Scan 1 (a fresh context, pages_to_scan 500, 100.5 s, 5 s of CPU):
 * scan_time 100 (whole seconds), cpu_percent 5000 ms * 100 / 100000 = 5,
 * factor 200 * 100 / 100 = 200, change ewma(0, 100) = 30 * 100 / 100 = 30,
 * pages 500 * 100 / 200 * 30 / 100 = 75; per_page_cost 500 / 5 = 100: at
 * least 10% CPU, 100 * 10 = 1000 (at most 100 * 70 = 7000): 1000.
 *
 * Scan 2 (pages_to_scan 1000, 50 s, CPU 15 s in all: 10 s in the scan):
 * cpu_percent 10000 * 100 / 50000 = 20, factor 200 * 100 / 50 = 400,
 * change ewma(30, 50 * 100 / 100 = 50) = (70 * 30 + 30 * 50) / 100 = 36,
 * pages 1000 * 100 / 400 * 36 / 100 = 90; per_page_cost 1000 / 20 = 50:
 * at least 500: 500.
 */
static void test_advisor(void)
{
	const struct advisor_params kernel = ADVISOR_DEFAULTS;
	struct advisor a = { 0 };
	uint64_t pages = advisor_scan_end(&a, &kernel, 100.5, 5.0, 500);

	check(pages == 1000, "advisor: scan 1 at 5% CPU rises to its 10% floor, 1000");
	check(a.change == 30 && a.scan_time == 100 && a.cpu_time == 5.0,
	      "advisor: scan 1 leaves change 30, scan_time 100, cpu_time 5");
	pages = advisor_scan_end(&a, &kernel, 50.0, 15.0, pages);
	check(pages == 500, "advisor: scan 2 at 20% CPU falls to its floor, 500");
	check(a.change == 36 && a.scan_time == 50,
	      "advisor: scan 2 smooths the change to 36");

	/* 800 s at 50% CPU (400 s), pages_to_scan 2000, max CPU 40%: factor
	 * 200 * 100 / 800 = 25, change 30, pages 2000 * 100 / 25 * 30 / 100 =
	 * 2400; per_page_cost 2000 / 50 = 40, at most 40 * 40 = 1600; with
	 * advisor_max_pages_to_scan 1000, 1000 */
	struct advisor_params slow = { 200, 40, 500, 30000 };
	struct advisor b = { 0 };

	check(advisor_scan_end(&b, &slow, 800.0, 400.0, 2000) == 1600,
	      "advisor: advisor_max_cpu 40% holds 2400 pages at 1600");
	slow.max_pages_to_scan = 1000;
	b = (struct advisor){ 0 };
	check(advisor_scan_end(&b, &slow, 800.0, 400.0, 2000) == 1000,
	      "advisor: advisor_max_pages_to_scan 1000 holds it at 1000");
	/* a scan under a second counts as 1 s: 0.1 s of CPU is 10%, factor
	 * 20000, pages 500 * 100 / 20000 * 30 / 100 = 0, floor 50 * 10 = 500 */
	b = (struct advisor){ 0 };
	check(advisor_scan_end(&b, &kernel, 0.4, 0.1, 500) == 500 && b.scan_time == 1,
	      "advisor: a scan of 0.4 s is 1 s, and the floor holds 500");
}

/* The advisor through its table: its knobs in its own settings, its state
 * in the replay's room, the same two scans as test_advisor()'s. */
static void test_advisor_ops(void)
{
	const struct policy_ops *ops = policy_lookup("advisor", 7);
	const struct advisor_params kernel = ADVISOR_DEFAULTS;
	struct replay_params p = { .ksm = { .pages_to_scan = 100 } };
	struct policy_state st = { { 0 } };
	uint64_t pages;

	check(ops && ops->scan_end && !ops->look &&
	      (ops->flags & TUNER_READS_KSMD_CPU),
	      "advisor: its table sets pages at a scan's end, counts ksmd's CPU");
	if (!ops)
		return;
	p.policy = ops;
	ops->defaults(&p.tuning);
	check(advisor_knobs(&p.tuning).max_cpu == kernel.max_cpu &&
	      advisor_knobs(&p.tuning).min_pages_to_scan == 500,
	      "advisor: its defaults are the kernel's");
	check(ops->start_pages(&p) == 500,
	      "advisor: it starts at advisor_min_pages_to_scan, not --pages-to-scan");
	pages = ops->scan_end(&st, &p, 100.5, 5.0, 500);
	pages = ops->scan_end(&st, &p, 50.0, 15.0, pages);
	check(pages == 500, "advisor: through its table, 1000 then 500 as by hand");
}

/*
 * ksmtuned's adjust() by hand, /etc/ksmtuned.conf's defaults, a host of
 * 16 GiB (16777216 kB): thres = 16777216 * 20 / 100 = 3355443 kB (more
 * than 2048), sleep = 10 * 16777216 / 16777216 = 10 ms.
 */
static void test_ksmtuned(void)
{
	const struct ksmtuned_params d = KSMTUNED_DEFAULTS;
	const uint64_t total = 16777216, gib = 1048576;
	struct ksmtuned t = { 0 };
	uint64_t pages = 0, sleep = 0;
	static const uint64_t boosted[] = { 300, 600, 900, 1200, 1250, 1250 };
	char what[120];

	/* 1 GiB free is below the threshold: boost by 300, at most 1250 */
	for (size_t i = 0; i < sizeof(boosted) / sizeof(boosted[0]); i++) {
		int run = ksmtuned_adjust(&t, &d, total, gib, 8 * gib, &pages, &sleep);

		snprintf(what, sizeof(what), "ksmtuned: look %zu with 1 GiB free "
			 "starts KSM at %" PRIu64 " pages, 10 ms", i + 1, boosted[i]);
		check(run == 1 && pages == boosted[i] && sleep == 10, what);
	}
	/* 4 GiB free but 14 GiB committed (14 + 3.2 GiB > 16): decay by 50 */
	check(ksmtuned_adjust(&t, &d, total, 4 * gib, 14 * gib, &pages, &sleep) == 1 &&
	      pages == 1200, "ksmtuned: above the threshold, overcommitted: 1250 - 50");
	/* 4 GiB free, 8 GiB committed: both fit, KSM stops, nothing written */
	pages = sleep = 7;
	check(ksmtuned_adjust(&t, &d, total, 4 * gib, 8 * gib, &pages, &sleep) == 0 &&
	      pages == 7 && sleep == 7 && t.npages == 1200,
	      "ksmtuned: free above the threshold and room for the guests: stop");
	/* a decay from its start, 0 - 50, is held at npages_min 64 */
	t = (struct ksmtuned){ 0 };
	check(ksmtuned_adjust(&t, &d, total, 4 * gib, 14 * gib, &pages, &sleep) == 1 &&
	      pages == 64, "ksmtuned: a first decay is held at 64");
	/* 4 GiB: sleep 10 * 16777216 / 4194304 = 40 ms; threshold 838860 kB */
	t = (struct ksmtuned){ 0 };
	check(ksmtuned_adjust(&t, &d, 4 * gib, 838859, 4 * gib, &pages, &sleep) == 1 &&
	      pages == 300 && sleep == 40,
	      "ksmtuned: 4 GiB host, 1 kB under 20% free: boost, 40 ms");
	/* 8 MiB: 20% is 1638 kB, under KSM_THRES_CONST 2048; sleep 20480 ms */
	t = (struct ksmtuned){ 0 };
	check(ksmtuned_adjust(&t, &d, 8192, 2047, 8192, &pages, &sleep) == 1 &&
	      pages == 300 && sleep == 20480,
	      "ksmtuned: 8 MiB host: the threshold is 2048 kB, sleep 20480 ms");
}

/*
 * KubeVirt's handler by hand, ksm.go's defaults, 16 GiB: it boosts below
 * 20% available (3355443.2 kB, float32), sleep = 100 * 16777216 / used.
 */
static void test_kubevirt(void)
{
	const struct kubevirt_params d = KUBEVIRT_DEFAULTS;
	const uint64_t total = 16777216, gib = 1048576;
	uint64_t pages = 0, sleep = 0;

	/* 2 GiB available, KSM off: start at 100 pages; used 14 GiB, sleep
	 * 1677721600 / 14680064 = 114 ms */
	check(kubevirt_adjust(&d, total, 2 * gib, 0, &pages, &sleep) == 1 &&
	      pages == 100 && sleep == 114, "kubevirt: starts KSM at 100, 114 ms");
	check(kubevirt_adjust(&d, total, 2 * gib, 1, &pages, &sleep) == 1 &&
	      pages == 400, "kubevirt: running and short: boost 100 + 300");
	pages = 1100;
	check(kubevirt_adjust(&d, total, 2 * gib, 1, &pages, &sleep) == 1 &&
	      pages == 1250, "kubevirt: a boost is held at 1250");
	/* 8 GiB available: decay 1000 - 50; used 8 GiB, sleep 200 ms */
	pages = 1000;
	check(kubevirt_adjust(&d, total, 8 * gib, 1, &pages, &sleep) == 1 &&
	      pages == 950 && sleep == 200, "kubevirt: plenty available: decay, 200 ms");
	/* a decay below 64 stops KSM and writes nothing else */
	pages = 100, sleep = 7;
	check(kubevirt_adjust(&d, total, 8 * gib, 1, &pages, &sleep) == 0 &&
	      pages == 100 && sleep == 7, "kubevirt: 100 - 50 under 64: stop");
	check(kubevirt_adjust(&d, total, 8 * gib, 0, &pages, &sleep) == 0,
	      "kubevirt: plenty available and KSM off: it stays off");
	/* more available than memory: Go's unsigned used wraps, the sleep
	 * comes to its floor, 100 / 10 = 10 ms */
	pages = 1000;
	check(kubevirt_adjust(&d, 1000, 1500, 1, &pages, &sleep) == 1 &&
	      pages == 950 && sleep == 10, "kubevirt: used wraps: the sleep's floor");
}

/* The table: names for --policy and its errors, flags, start pages. */
static void test_policy_table(void)
{
	struct replay_params p = { .ksm = { .pages_to_scan = 123 } };
	const char *names[] = { "fixed", "advisor", "ksmtuned", "kubevirt" };
	char list[200];

	for (size_t i = 0; i < 4; i++)
		check(policy_at(i) && strcmp(policy_at(i)->name, names[i]) == 0 &&
		      policy_index(policy_at(i)) == i &&
		      policy_lookup(names[i], strlen(names[i])) == policy_at(i),
		      "policy table: in order, found by name and by place");
	check(!policy_at(4) && !policy_lookup("ksmtune", 7) &&
	      policy_lookup("kubevirt,fixed", 8) == policy_at(3),
	      "policy table: four, a name is whole, a comma list's word");
	policy_names(0, "or", list, sizeof(list));
	check(strcmp(list, "fixed, advisor, ksmtuned or kubevirt") == 0,
	      "policy table: --policy's list of names");
	policy_names(TUNER_LOOKS_AT_HOST, "and", list, sizeof(list));
	check(strcmp(list, "ksmtuned and kubevirt") == 0,
	      "policy table: the tuners that look at the host");
	check(policy_at(0)->start_pages(&p) == 123 && !policy_at(0)->who &&
	      !policy_at(0)->ncolumns && policy_at(2)->start_pages(&p) == 123,
	      "policy table: fixed and ksmtuned start at --pages-to-scan");
	/* ksmtuned through its table: its look every 60 s, the first too; on
	 * the host of test_ksmtuned(), 1 GiB free: start at 300 pages */
	const struct policy_ops *kt = policy_at(2);
	struct policy_state st = { { 0 } };
	uint64_t pages = 0, sleep = 0;

	p.policy = kt;
	kt->defaults(&p.tuning);
	p.host = (struct policy_host){ 16777216, 0 };
	check(kt->look_every(&p) == 60 && kt->first_look(&p) == 60 &&
	      kt->look(&st, &p, 1048576, 8388608, 0, &pages, &sleep) == 1 &&
	      pages == 300 && kt->look(&st, &p, 1048576, 8388608, 1, &pages,
					&sleep) == 1 && pages == 600,
	      "ksmtuned: through its table, every 60 s, 300 then 600 pages");
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
	test_advisor();
	test_advisor_ops();
	test_ksmtuned();
	test_kubevirt();
	test_policy_table();
	return unit_done();
}
