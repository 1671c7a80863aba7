/* SPDX-License-Identifier: MIT */
/*
 * Unit test of the ksmd replay (model/replay*.c), its timing at every pace
 * (model/pace.c) and the settings search (model/search.c). The expected
 * figures are worked by hand from mm/ksm.c's rules (a page's first visit
 * only records its checksum; the second, if unchanged, goes to the
 * unstable tree or merges; a KSM page takes at most max_page_sharing
 * mappings; smart_scan's skips by age), from the pace of ksmd's wake-ups
 * at HZ 0 (a batch every sleep_ms, each full scan its own batches), and
 * from KSM's arithmetic written apart (ksm_content()). And the shortcut
 * over full scans that repeat must give the full replay's rows exactly:
 * a few hundred random small series, each replayed with it and without
 * (KSMSCAN_SLOW_REPLAY), every row compared field by field.
 * Prints the failures and last "N passed, N failed", like the Python
 * suites.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../model/ksm.h"
#include "../model/pace.h"
#include "../model/replay.h"
#include "../model/search.h"

#include "unit.h"

/* Contents: content k is its byte k repeated (0: the zero page); 60 to 63
 * are content 5 but for their last byte (long comparisons), and 62 has
 * 61's checksum (the checksum is a gate, not equality). */
#define NCONT 64

static unsigned char pages[NCONT][4096];
static uint32_t sums[NCONT];
static uint64_t heads[NCONT];

static int content_compare(const void *ctx, uint32_t a, uint32_t b,
			   size_t *common)
{
	(void)ctx;
	return page_common(pages[a], pages[b], common);
}

static void contents_init(void)
{
	for (unsigned k = 0; k < NCONT; k++) {
		memset(pages[k], k < 60 ? (int)k : 5, 4096);
		if (k >= 60)
			pages[k][4095] = (unsigned char)k;
		sums[k] = (k + 1) * 2654435761u;
		heads[k] = 0;
		for (int i = 0; i < 8; i++)
			heads[k] = heads[k] << 8 | pages[k][i];
	}
	sums[62] = sums[61];
}

/* A series of at most MAXS snapshots of MAXA addresses. */
#define MAXA 128
#define MAXS 6

struct fix {
	uint64_t addr[MAXA];
	struct snapshot snaps[MAXS];
	uint32_t no[MAXS][MAXA], id[MAXS][MAXA];
	double at[MAXS];
	uint32_t thp[MAXA];
	struct series sr;
};

/* @cells: @nsnaps rows of @naddr content ids, -1 for no page there. */
static void fix_build(struct fix *f, size_t naddr, size_t nsnaps,
		      const int *cells)
{
	memset(f, 0, sizeof(*f));
	for (size_t i = 0; i < naddr; i++)
		f->addr[i] = 0x10000 + i * 4096;
	for (size_t s = 0; s < nsnaps; s++) {
		struct snapshot *sn = &f->snaps[s];

		sn->addr_no = f->no[s];
		sn->id = f->id[s];
		for (size_t i = 0; i < naddr; i++) {
			int c = cells[s * naddr + i];

			if (c < 0)
				continue;
			sn->addr_no[sn->n] = (uint32_t)i;
			sn->id[sn->n++] = (uint32_t)c;
		}
	}
	f->sr = (struct series){ .naddr = naddr, .addr = f->addr,
				 .nsnaps = nsnaps, .snaps = f->snaps,
				 .sum = sums, .head = heads, .zero_id = 0,
				 .zero_sum = sums[0], .compare = content_compare };
}

/* The fixed policy at HZ 0: a batch of @pts pages every @sleep_ms. */
static struct replay_params params(uint64_t pts, uint64_t sleep_ms,
				   uint64_t scans)
{
	struct replay_params p;

	memset(&p, 0, sizeof(p));
	p.ksm.pages_to_scan = pts;
	p.ksm.sleep_ms = sleep_ms;
	p.ksm.max_page_sharing = 256;
	p.scans = scans;
	p.interval = 1;
	p.policy = policy_at(0);	/* fixed */
	return p;
}

/* The advisor's knobs, in one place. */
static void set_advisor(struct replay_params *p, uint64_t target,
			uint64_t max_cpu, uint64_t min_pages, uint64_t max_pages)
{
	struct advisor_params k = { target, max_cpu, min_pages, max_pages };

	p->policy = &advisor_policy;
	advisor_set_knobs(&p->tuning, &k);
}

/* A row's counters against the hand-worked ones. */
static void check_counts(const struct timeline_row *r, const char *name,
			 uint64_t shared, uint64_t sharing, uint64_t unshared,
			 uint64_t volatil)
{
	char what[200];

	snprintf(what, sizeof(what), "%s scan %" PRIu64 ": shared/sharing/"
		 "unshared/volatile %" PRIu64 "/%" PRIu64 "/%" PRIu64 "/%"
		 PRIu64 ", by hand %" PRIu64 "/%" PRIu64 "/%" PRIu64 "/%" PRIu64,
		 name, r->scan, r->pages_shared, r->pages_sharing,
		 r->pages_unshared, r->pages_volatile, shared, sharing,
		 unshared, volatil);
	check(r->pages_shared == shared && r->pages_sharing == sharing &&
	      r->pages_unshared == unshared && r->pages_volatile == volatil,
	      what);
}

static size_t run(const struct series *sr, const struct replay_params *p,
		  struct timeline_row **rows)
{
	int cut;
	size_t n = replay_run(sr, p, rows, &cut);

	check(!cut, "the replay is not cut");
	return n;
}

/*
 * Six addresses, contents 1 1 1 2 2 3, one snapshot. Scan 1 only records
 * each page's checksum: nothing in a tree, all six volatile. Scan 2: 0 to
 * the unstable tree, 1 merges with it (a KSM page, one sharer), 2 joins
 * that KSM page; 3 to the unstable tree, 4 merges with it; 5 stays alone.
 * Scan 3 only revisits the KSM pages and puts 5 back in the unstable tree.
 */
static void test_merge(void)
{
	static const int cells[] = { 1, 1, 1, 2, 2, 3 };
	struct fix f;
	struct replay_params p = params(100, 20, 3);
	struct timeline_row *rows;
	size_t n;

	fix_build(&f, 6, 1, cells);
	p.ns_per_page = 1000;
	n = run(&f.sr, &p, &rows);
	check(n == 3, "three scans");
	if (n != 3)
		return;
	check_counts(&rows[0], "merge", 0, 0, 0, 6);
	check_counts(&rows[1], "merge", 2, 3, 1, 0);
	check_counts(&rows[2], "merge", 2, 3, 1, 0);
	check(rows[0].hashed == 6 && rows[1].hashed == 6 && rows[2].hashed == 1,
	      "checksummed: 6, 6, then only the page not merged");
	check(rows[2].visited == 6, "scan 3 visits every page");
	/* 6 rmap_items of 64 bytes against 3 pages saved */
	check(rows[1].general_profit == 3 * 4096 - 6 * 64,
	      "general_profit: 3 pages saved less 6 rmap_items");
	/*
	 * memcmp's bytes in scan 2: 1 meets 0 in the unstable tree (4096, the
	 * pages equal); 2 finds content 1's node (4096); 3 passes it (1 byte:
	 * they differ at the first) and the unstable tree's dead node (not
	 * counted); 4 passes 1 (1), meets 3 (4096), passes 1 again to insert
	 * content 2 (1); 5 passes 1 and 2 (1 each). Scan 3: 5 passes 1 and 2.
	 */
	check(rows[0].memcmp_bytes == 0 && rows[1].memcmp_bytes == 12293 &&
	      rows[2].memcmp_bytes == 2, "memcmp bytes 0, 12293, 2");
	/* one batch per scan, each scan's end a wake-up after the last */
	check(fabs(rows[0].seconds) < 1e-12 && fabs(rows[1].seconds - 0.02) < 1e-12 &&
	      fabs(rows[2].seconds - 0.04) < 1e-12 && rows[1].wakeups == 1,
	      "a scan a wake-up: at 0, 0.02, 0.04 s");
	/* 6 checksums of 1 us over the 20 ms to the next wake-up */
	check(fabs(rows[0].cpu_percent - 0.03) < 1e-9, "scan 1's cpu 0.03%");
	free(rows);
}

/* Four pages a batch over the same six: each scan is 2 wake-ups (4 pages,
 * then 2), so scans end at 0.02, 0.06 and 0.10 s. */
static void test_batches(void)
{
	static const int cells[] = { 1, 1, 1, 2, 2, 3 };
	struct fix f;
	struct replay_params p = params(4, 20, 3);
	struct timeline_row *rows;
	size_t n;

	fix_build(&f, 6, 1, cells);
	n = run(&f.sr, &p, &rows);
	check(n == 3 && fabs(rows[0].seconds - 0.02) < 1e-12 &&
	      fabs(rows[1].seconds - 0.06) < 1e-12 &&
	      fabs(rows[2].seconds - 0.10) < 1e-12 && rows[0].wakeups == 2 &&
	      rows[2].wakeups == 2, "4 pages a batch: scans end at 0.02, 0.06, 0.10 s");
	if (n == 3)
		check_counts(&rows[1], "batches", 2, 3, 1, 0);
	free(rows);
}

/*
 * ksmd's CPU per wake-up (wake_seconds), by hand: the six pages above at 4
 * a batch, every 20 ms (HZ 0), 3 scans of 2 wake-ups each ending at 0.02,
 * 0.06 and 0.10 s. Every visit costs 1 us (18 in all, the merges free),
 * each wake-up 50 us (6): 18 + 300 = 318 us over 0.10 s is 0.318%. The
 * scan's own figure (cpu_percent): scan 1's 6 checksums of 1 us and its 2
 * wake-ups, 106 us over 0.04 s (to the end of the sleep after its last
 * batch), 0.265%. Without the wake-ups, 0.018% and 0.015%.
 */
static void test_wake_cost(void)
{
	static const int cells[] = { 1, 1, 1, 2, 2, 3 };
	struct fix f;
	struct replay_params p = params(4, 20, 3);
	struct timeline_row *rows;
	struct replay_figures fig;
	size_t n;

	fix_build(&f, 6, 1, cells);
	p.page_seconds = p.revisit_seconds = 1e-6;
	p.ns_per_page = 1000;
	p.wake_seconds = 50e-6;
	n = run(&f.sr, &p, &rows);
	check(n == 3 && rows[0].wakeups == 2 && rows[1].wakeups == 2 &&
	      rows[2].wakeups == 2 && fabs(rows[2].seconds - 0.10) < 1e-12,
	      "wake cost: 3 scans of 2 wake-ups, the last ending at 0.10 s");
	if (n != 3) {
		free(rows);
		return;
	}
	fig = replay_figures(rows, n, 1, p.wake_seconds);
	check(fabs(fig.cpu_mean - 0.318) < 1e-9,
	      "wake cost: 18 visits of 1 us and 6 wake-ups of 50 us over 0.10 s: 0.318%");
	check(fabs(rows[0].cpu_percent - 0.265) < 1e-9,
	      "wake cost: scan 1's 6 checksums and 2 wake-ups over 0.04 s: 0.265%");
	fig = replay_figures(rows, n, 1, 0);
	check(fabs(fig.cpu_mean - 0.018) < 1e-9, "no wake cost: 18 us over 0.10 s");
	free(rows);
	p.wake_seconds = 0;
	n = run(&f.sr, &p, &rows);
	check(n == 3 && fabs(rows[0].cpu_percent - 0.015) < 1e-9,
	      "no wake cost: scan 1's 6 us over 0.04 s, 0.015%");
	free(rows);
}

/*
 * A page written between scans. Addresses 0 and 1 hold content 1
 * throughout; address 2 holds 5, 6, 7 in three snapshots (taken at 0,
 * 0.01 and 0.03 s; ksmd scans at 0, 0.02, 0.04): its checksum never
 * matches the last visit's, so it stays volatile; address 3 holds 5 and
 * only ever finds itself in the unstable tree. The same series with
 * address 2 left at 5 merges it with 3 at scan 2.
 */
static void test_volatile(void)
{
	static const int changing[] = { 1, 1, 5, 5,  1, 1, 6, 5,  1, 1, 7, 5 };
	static const int still[] = { 1, 1, 5, 5,  1, 1, 5, 5,  1, 1, 5, 5 };
	struct fix f;
	struct replay_params p = params(100, 20, 3);
	struct timeline_row *rows;
	size_t n;

	fix_build(&f, 4, 3, changing);
	f.at[0] = 0, f.at[1] = 0.01, f.at[2] = 0.03;
	f.sr.at = f.at;
	n = run(&f.sr, &p, &rows);
	check(n == 3, "volatile: three scans");
	if (n == 3) {
		check_counts(&rows[1], "volatile", 1, 1, 1, 1);
		check_counts(&rows[2], "volatile", 1, 1, 1, 1);
		check(rows[1].snapshot == 1 && rows[2].snapshot == 2,
		      "volatile: the snapshot in force at each scan");
	}
	free(rows);
	fix_build(&f, 4, 3, still);
	f.at[0] = 0, f.at[1] = 0.01, f.at[2] = 0.03;
	f.sr.at = f.at;
	n = run(&f.sr, &p, &rows);
	if (n == 3)
		check_counts(&rows[1], "unchanged", 2, 2, 0, 0);
	free(rows);
}

/* A KSM page written: copy-on-write. 0 and 1 merge at scan 2; 1 is
 * written (content 7) before scan 3: one cow_ksm, and at scan 3 it leaves
 * the KSM page's list (one mapping left: shared 1, sharing 0) and, its
 * checksum changed, is volatile. */
static void test_cow(void)
{
	static const int cells[] = { 1, 1,  1, 1,  1, 7 };
	struct fix f;
	struct replay_params p = params(100, 20, 3);
	struct timeline_row *rows;
	size_t n;

	fix_build(&f, 2, 3, cells);
	f.at[0] = 0, f.at[1] = 0.01, f.at[2] = 0.03;
	f.sr.at = f.at;
	n = run(&f.sr, &p, &rows);
	check(n == 3, "cow: three scans");
	if (n == 3) {
		check_counts(&rows[1], "cow", 1, 1, 0, 0);
		check_counts(&rows[2], "cow", 1, 0, 0, 1);
		check(rows[1].cow_ksm == 0 && rows[2].cow_ksm == 1,
		      "cow_ksm: the write of a KSM page counted in scan 3");
	}
	free(rows);
}

/*
 * max_page_sharing 3, seven pages of content 1: scan 2 makes a KSM page
 * of 0, 1, 2 (full), then 3 finds it full and waits in the unstable tree
 * for 4: a second KSM page in the chain, which 5 fills; 6 finds both full.
 * And for c copies under M, after two scans: ksm_content()'s arithmetic.
 */
static void test_chains(void)
{
	int cells[MAXA];
	struct fix f;
	struct replay_params p = params(1000, 20, 2);
	struct timeline_row *rows;
	char what[120];
	size_t n;

	for (int i = 0; i < 7; i++)
		cells[i] = 1;
	fix_build(&f, 7, 1, cells);
	p.ksm.max_page_sharing = 3;
	n = run(&f.sr, &p, &rows);
	if (n == 2)
		check_counts(&rows[1], "chain", 2, 4, 1, 0);
	check(n == 2 && rows[1].zero_sharing == 0, "content 1 is not zero");
	free(rows);
	for (uint64_t M = 2; M <= 5; M++)
		for (size_t c = 2; c <= 23; c++) {
			uint64_t shared, sharing;

			for (size_t i = 0; i < c; i++)
				cells[i] = 1;
			fix_build(&f, c, 1, cells);
			p.ksm.max_page_sharing = M;
			n = run(&f.sr, &p, &rows);
			ksm_content(c, M, &shared, &sharing);
			snprintf(what, sizeof(what), "%zu copies, M=%" PRIu64
				 ": %" PRIu64 "/%" PRIu64 ", ksm_content %"
				 PRIu64 "/%" PRIu64, c, M, rows[n - 1].pages_shared,
				 rows[n - 1].pages_sharing, shared, sharing);
			check(rows[n - 1].pages_shared == shared &&
			      rows[n - 1].pages_sharing == sharing, what);
			free(rows);
		}
}

/* Zero pages: with use_zero_pages they go to ksm_zero_pages at scan 2
 * (no KSM page), and at scan 3 their rmap_items are freed (no anonymous
 * page there); without, they merge as any content, zero_sharing too. */
static void test_zero(void)
{
	static const int cells[] = { 0, 0, 0, 1 };
	struct fix f;
	struct replay_params p = params(100, 20, 3);
	struct timeline_row *rows;
	size_t n;

	fix_build(&f, 4, 1, cells);
	p.ksm.use_zero_pages = 1;
	n = run(&f.sr, &p, &rows);
	check(n == 3 && rows[1].ksm_zero_pages == 3 && rows[1].pages_shared == 0 &&
	      rows[1].general_profit == 3 * 4096 - 4 * 64 &&
	      rows[2].general_profit == 3 * 4096 - 1 * 64,
	      "use_zero_pages: 3 zero pages, their rmap_items freed at scan 3");
	free(rows);
	p.ksm.use_zero_pages = 0;
	n = run(&f.sr, &p, &rows);
	check(n == 3 && rows[1].ksm_zero_pages == 0 && rows[1].pages_shared == 1 &&
	      rows[1].pages_sharing == 2 && rows[1].zero_sharing == 2,
	      "without use_zero_pages: one KSM page of zeros, 2 sharers");
	free(rows);
}

/*
 * smart_scan on one page that never merges: should_skip_rmap_item() with
 * its age before the visit, and skip_age(): ages 0-2 visited; age 3 sets
 * 1 skip (scan 5 skipped); age 5 sets 2 (scans 7, 8); age 8 sets 4 (scans
 * 10 to 13); age 13 sets 8 (scans 15 to 22); scan 23 visits it again.
 */
static void test_smart_scan(void)
{
	static const int cells[] = { 9 };
	static const char skipped[] = "000010110111101111111101";
	struct fix f;
	struct replay_params p = params(100, 20, 24);
	struct timeline_row *rows;
	uint64_t total = 0;
	int ok = 1;
	size_t n;

	fix_build(&f, 1, 1, cells);
	p.ksm.smart_scan = 1;
	n = run(&f.sr, &p, &rows);
	check(n == 24, "smart_scan: 24 scans");
	for (size_t i = 0; i < n && i < 24; i++) {
		uint64_t s = (uint64_t)(skipped[i] - '0');

		total += s;
		ok &= rows[i].skipped_scan == s && rows[i].visited == 1 - s &&
		      rows[i].pages_skipped == total;
		/* a skipped page leaves the unstable tree: volatile */
		ok &= i < 1 || rows[i].pages_unshared == 1 - s;
	}
	check(ok, "smart_scan skips scans 5, 7-8, 10-13, 15-22");
	free(rows);
}

/* xorshift64: the same cases every run. */
static uint64_t rng = 0x2545f4914f6cdd1dULL;

static uint64_t rnd(uint64_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng % n;
}

/* A random small series: few contents, so pages meet; a page now and then
 * gone or changed between snapshots. */
static void random_series(struct fix *f)
{
	static int cells[MAXS * MAXA];
	size_t naddr = 1 + rnd(60), nsnaps = 1 + (rnd(3) ? 0 : rnd(MAXS));
	size_t ncont = 2 + rnd(8), change = rnd(4);

	for (size_t i = 0; i < naddr; i++)
		cells[i] = rnd(12) ? (int)(rnd(ncont) * 7 % NCONT) : -1;
	for (size_t s = 1; s < nsnaps; s++)
		for (size_t i = 0; i < naddr; i++)
			cells[s * naddr + i] = rnd(8) < change ?
					       (rnd(10) ? (int)(56 + rnd(8)) : -1) :
					       cells[(s - 1) * naddr + i];
	fix_build(f, naddr, nsnaps, cells);
	for (size_t s = 1; s < nsnaps; s++)	/* now and then uneven */
		f->at[s] = f->at[s - 1] + 0.01 * (double)(1 + rnd(30));
	f->sr.at = rnd(2) ? f->at : NULL;
}

/* Random settings: the fixed policy or the advisor (a policy that looks
 * at the host's memory never takes the shortcut). */
static struct replay_params random_params(void)
{
	static const double late[2] = { 0.0013, 0.0071 };
	struct replay_params p = params(1 + rnd(70), 1 + rnd(60),
					rnd(3) ? 0 : 1 + rnd(80));

	p.ksm.smart_scan = (int)rnd(4) != 0;
	p.ksm.use_zero_pages = (int)rnd(2);
	p.ksm.max_page_sharing = 2 + rnd(5);
	p.interval = 0.01 * (double)(1 + rnd(40));
	p.ns_per_page = 1 + (double)rnd(500);
	p.ns_per_byte = 0.1;
	p.hz = rnd(2) ? (rnd(2) ? 250 : 1000) : 0;
	p.page_seconds = rnd(2) ? 1e-5 * (double)(1 + rnd(20)) : 0;
	p.revisit_seconds = p.page_seconds / 4;
	p.merge_seconds = rnd(2) ? 3e-6 : 0;
	if (rnd(3) == 0) {
		p.late = late;
		p.nlate = 2;
	}
	if (rnd(3) == 0)
		set_advisor(&p, 1 + rnd(3), 10 + rnd(80), 1 + rnd(30),
			    40 + rnd(200));
	return p;
}

/* The shortcut over repeating scans against the full replay. */
static void test_shortcut(void)
{
	unsigned cases = 400, differ = 0, cut_differ = 0;
	char what[120];
	struct fix f;

	for (unsigned k = 0; k < cases; k++) {
		struct replay_params p;
		struct timeline_row *fast, *slow;
		int cut_fast, cut_slow;
		size_t nf, ns;

		random_series(&f);
		p = random_params();
		nf = replay_run(&f.sr, &p, &fast, &cut_fast);
		setenv("KSMSCAN_SLOW_REPLAY", "1", 1);
		ns = replay_run(&f.sr, &p, &slow, &cut_slow);
		unsetenv("KSMSCAN_SLOW_REPLAY");
		if (!timeline_rows_equal(fast, nf, slow, ns)) {
			if (!differ)
				printf("case %u: %zu rows with the shortcut, %zu "
				       "without, or a row differs\n", k, nf, ns);
			differ++;
		}
		cut_differ += cut_fast != cut_slow;
		free(fast);
		free(slow);
	}
	snprintf(what, sizeof(what), "the shortcut gives the full replay's "
		 "rows: %u of %u cases differ", differ, cases);
	check(!differ, what);
	check(!cut_differ, "the shortcut ends where the full replay does");
}

/*
 * 64 addresses, 32 pairs of one content each: the whole saving, 32 pages,
 * comes at the end of scan 2. With P pages a batch at HZ 0 a full scan is
 * W = floor(64 / P) + 1 wake-ups (its last batch ends it early, or, when
 * P divides 64, an empty one finds its end), each scan starting a batch;
 * so scan 2 ends at (2W - 1) * sleep.
 */
static void pairs(struct fix *f)
{
	int cells[64];

	for (int i = 0; i < 64; i++)
		cells[i] = 1 + i / 2;
	fix_build(f, 64, 1, cells);
}

/* pace.c: one replay timed at every pace gives replay_run()'s rows. */
static void test_pace(void)
{
	struct fix f, two;
	struct replay_params p = params(7, 50, 3), base;
	struct timeline_row *rows, *plain;
	struct pace_log *log;
	int cut, same = 1;
	size_t n, m;

	pairs(&f);
	log = pace_open(&f.sr, &p);
	check(log != NULL, "pace_open on one snapshot");
	if (!log)
		return;
	/* P = 7: W = 10; scan 1 ends at 9 sleeps, scan 2 at 19 */
	n = pace_replay(log, &p, &rows, &cut);
	check(n == 3 && fabs(rows[0].seconds - 0.45) < 1e-9 &&
	      fabs(rows[1].seconds - 0.95) < 1e-9 && rows[0].wakeups == 10 &&
	      rows[1].pages_sharing == 32 && rows[0].pages_sharing == 0,
	      "pace 7 pages / 50 ms: scans end at 0.45 and 0.95 s, 32 saved");
	if (n)
		free(rows);
	p.ksm.pages_to_scan = 0;
	check(pace_replay(log, &p, &rows, &cut) == 0,
	      "pages_to_scan 0: not from the log");
	pace_close(log);
	/* on jiffies, with the batches' costs: the search's paces */
	base = params(1, 1, 0);
	base.hz = 250;
	base.page_seconds = 2e-5;
	base.revisit_seconds = 5e-6;
	base.merge_seconds = 1e-6;
	base.wake_seconds = 3e-5;
	base.ksm.smart_scan = 1;
	log = pace_open(&f.sr, &base);
	for (uint64_t pts = 1; pts <= 70; pts += 3)
		for (uint64_t ms = 1; ms <= 201; ms += 40) {
			struct replay_params q = base;

			q.ksm.pages_to_scan = pts;
			q.ksm.sleep_ms = ms;
			q.scans = pts % 2 ? 0 : 40;
			if (ms > 100)
				set_advisor(&q, 1 + pts % 3, 70, 1 + pts, 200);
			n = pace_replay(log, &q, &rows, &cut);
			m = replay_run(&f.sr, &q, &plain, &cut);
			same &= n && timeline_rows_equal(rows, n, plain, m);
			if (n)
				free(rows);
			free(plain);
		}
	check(same, "pace_replay() gives replay_run()'s rows at 144 paces");
	pace_close(log);
	pairs(&two);
	two.sr.nsnaps = 2;
	two.snaps[1] = two.snaps[0];
	check(pace_open(&two.sr, &p) == NULL, "two snapshots: no shared replay");
	p.write_rate = 0.01;
	check(pace_open(&f.sr, &p) == NULL, "write_rate: no shared replay");
}

/*
 * search.c: the whole saving (32 pages) by 1.03 s. At sleep s, the fewest
 * P with (2W - 1) * s <= 1.03, W = floor(64 / P) + 1: 10 ms, W <= 52: P 2
 * (P 1: W 65); 20 ms, W <= 26: P 3 (P 2: W 33); 50 ms, W <= 10: P 7 (P 6:
 * W 11); 100 ms, W <= 5: P 13 (P 12: W 6); 200 ms, W <= 3: P 22 (P 21:
 * W 4). Each reaches it at (2W - 1) * s.
 */
static void test_search(void)
{
	static const uint64_t want[ADVISE_NSLEEPS] = { 2, 3, 7, 13, 22 };
	static const double at[ADVISE_NSLEEPS] = { 0.65, 0.86, 0.95, 0.9, 1.0 };
	struct advise_params a = { 1.0, 1.03, 100 };
	struct advice out[ADVISE_ROWS_MAX];
	struct replay_params p = params(1, 10, 0), ap;
	struct policy_params tunings[TUNERS_MAX] = { 0 };
	char what[160];
	struct fix f;

	pairs(&f);
	ap = p;
	set_advisor(&ap, 200, 70, 1, 100);
	tunings[policy_index(&advisor_policy)] = ap.tuning;
	for (int slow = 0; slow < 2; slow++) {
		size_t n;

		if (slow)
			setenv("KSMSCAN_SLOW_REPLAY", "1", 1);
		n = search_settings(&f.sr, &p, tunings, &a, 32, 0, out);
		unsetenv("KSMSCAN_SLOW_REPLAY");
		check(n == ADVISE_NSLEEPS + 2, "5 sleeps and 2 advisor rows");
		for (size_t k = 0; k < ADVISE_NSLEEPS; k++) {
			snprintf(what, sizeof(what), "%s search, sleep %" PRIu64
				 " ms: %" PRIu64 " pages (cheaper %" PRIu64
				 ") at %.3f s, by hand %" PRIu64 " at %.3f s",
				 slow ? "slow" : "shared", out[k].sleep_ms,
				 out[k].pages_to_scan, out[k].cheaper,
				 out[k].seconds_to_target, want[k], at[k]);
			check(!advice_is_advisor(&out[k]) && out[k].reaches &&
			      out[k].pages_to_scan == want[k] &&
			      out[k].cheaper == want[k] - 1 &&
			      fabs(out[k].seconds_to_target - at[k]) < 1e-9 &&
			      out[k].reached == 1.0, what);
		}
	}
}

/* Addresses [from, to) make huge page @t of @f's series. */
static void fix_thp(struct fix *f, size_t from, size_t to, uint32_t t)
{
	if (!f->sr.thp)
		for (size_t i = 0; i < MAXA; i++)
			f->thp[i] = NO_ID;
	for (size_t i = from; i < to; i++)
		f->thp[i] = t;
	f->sr.thp = f->thp;
	if (f->sr.nthp <= t)
		f->sr.nthp = t + 1;
}

/* The huge-page figures of a row against the hand-worked ones. */
static void check_thp(const struct timeline_row *r, const char *name,
		      uint64_t freed, uint64_t splits, uint64_t items)
{
	char what[200];

	snprintf(what, sizeof(what), "%s scan %" PRIu64 ": thp_zero_freed/"
		 "splits/rmap_items %" PRIu64 "/%" PRIu64 "/%" PRIu64 ", by hand %"
		 PRIu64 "/%" PRIu64 "/%" PRIu64, name, r->scan, r->thp_zero_freed,
		 r->thp_splits, r->pages_shared + r->pages_sharing +
		 r->pages_unshared + r->pages_volatile, freed, splits, items);
	check(r->thp_zero_freed == freed && r->thp_splits == splits &&
	      r->pages_shared + r->pages_sharing + r->pages_unshared +
	      r->pages_volatile == items, what);
}

/*
 * Two huge pages of four subpages: A = contents 1 0 2 0 (addresses 0-3),
 * B = 1 0 0 5 (4-7). Scan 2: 0, 1, 2 go to the unstable tree; 3 meets 1,
 * a subpage of the same huge page, so the merge fails and A is split:
 * its zero-filled 1 and 3 map the zero page (1's rmap_item stays in the
 * tree, unshared). 4 meets 0: B is split (5 and 6 map the zero page, and
 * are not visited: their items are freed), 4 and 0 merge; 7 to the tree.
 * So 1 shared, 1 sharing, 3 unshared (1, 2, 7), 1 volatile (3), 4 zero
 * pages freed, 2 splits. Scan 3 frees the items of 1 and 3: 4 items left.
 * The same pages in no huge page merge the zeros into one KSM page: 2
 * shared, 4 sharing.
 */
static void test_thp_split(void)
{
	static const int cells[] = { 1, 0, 2, 0, 1, 0, 0, 5 };
	struct fix f;
	struct replay_params p = params(100, 20, 3);
	struct timeline_row *rows;
	size_t n;

	fix_build(&f, 8, 1, cells);
	n = run(&f.sr, &p, &rows);
	check(n == 3 && rows[1].pages_shared == 2 && rows[1].pages_sharing == 4 &&
	      rows[1].thp_zero_freed == 0 && rows[1].thp_splits == 0,
	      "no huge page: 2 shared, 4 sharing, nothing split");
	free(rows);
	fix_thp(&f, 0, 4, 0);
	fix_thp(&f, 4, 8, 1);
	n = run(&f.sr, &p, &rows);
	check(n == 3, "three scans");
	if (n != 3)
		return;
	check_counts(&rows[0], "thp", 0, 0, 0, 8);
	check_thp(&rows[0], "thp", 0, 0, 8);
	check_counts(&rows[1], "thp", 1, 1, 3, 1);
	check_thp(&rows[1], "thp", 4, 2, 6);
	check(rows[1].general_profit == 4096 - 6 * 64 &&
	      rows[1].ksm_zero_pages == 0,
	      "the freed zero pages are in no KSM counter");
	check_counts(&rows[2], "thp", 1, 1, 2, 0);
	check_thp(&rows[2], "thp", 4, 2, 4);
	free(rows);
}

/*
 * One huge page 7 7 8 9 and, apart, a page 3 and a huge page 3 4 6 6 0:
 * in scan 2 the two 7s are subpages of one huge page, so ksmd splits it
 * and they merge only in scan 3. 3 meets 3 in scan 2 (the second huge
 * page is split: its lone zero page is freed); its 6s were in one huge
 * page, split now, so they merge in scan 2 as well. A huge page with no
 * match stays whole: 10 11 12 13 never split.
 */
static void test_thp_later(void)
{
	static const int cells[] = { 7, 7, 8, 9, 3, 3, 4, 6, 6, 0,
				     10, 11, 12, 13 };
	struct fix f;
	struct replay_params p = params(100, 20, 3);
	struct timeline_row *rows;
	size_t n;

	fix_build(&f, 14, 1, cells);
	fix_thp(&f, 0, 4, 0);
	fix_thp(&f, 5, 10, 1);
	fix_thp(&f, 10, 14, 2);
	n = run(&f.sr, &p, &rows);
	check(n == 3, "three scans");
	if (n != 3)
		return;
	/* scan 2, by address: 0, 2, 3 and 4 to the tree; 1 fails (volatile);
	 * 5 merges with 4 (9 freed, and its item when ksmd passes it); 6 and
	 * 7 to the tree; 8 merges with 7; 10 to 13 to the tree */
	check_counts(&rows[1], "thp later", 2, 2, 8, 1);
	check_thp(&rows[1], "thp later", 1, 2, 13);
	/* scan 3: 1 meets 0 */
	check_counts(&rows[2], "thp later", 3, 3, 7, 0);
	check_thp(&rows[2], "thp later", 1, 2, 13);
	free(rows);
}

/*
 * Five all-zero huge pages of two subpages, A-E (addresses 0-9), smart_scan
 * on: what left whole huge pages in QEMU guests for scans after the
 * counters looked settled. Scan 2: 0 goes to the unstable tree, 1 meets
 * it in the same huge page, A is split and both map the zero page; 0's
 * node now leads to no page (get_mergeable_page() finds none), so every
 * later search of the scan stops there: B-E stay whole. One split per
 * scan: B at 3, C at 4. From scan 4 smart_scan skips the rest on
 * skip_age()'s schedule (ages 3, 5, 8: 1, 2, 4 scans): D and E are skipped
 * at 5, visited at 6 (D is split, E stopped at D's node), skipped at 7
 * and 8, visited at 9 (E is split). A split's items go when ksmd next
 * passes them. rmap_items by scan: 10 10 8 6 4 4 2 2 2 0; scans 7 and 8
 * end alike, yet 9 splits E.
 */
static void test_thp_skipped(void)
{
	static const int cells[10] = { 0 };
	static const uint64_t items[10] = { 10, 10, 8, 6, 4, 4, 2, 2, 2, 0 };
	static const uint64_t splits[10] = { 0, 1, 2, 3, 3, 4, 4, 4, 5, 5 };
	struct fix f;
	struct replay_params p = params(100, 20, 10);
	struct timeline_row *rows;
	size_t n;

	p.ksm.smart_scan = 1;
	fix_build(&f, 10, 1, cells);
	for (uint32_t t = 0; t < 5; t++)
		fix_thp(&f, 2 * t, 2 * t + 2, t);
	n = run(&f.sr, &p, &rows);
	check(n == 10, "ten scans");
	for (size_t i = 0; i < n && i < 10; i++) {
		check(rows[i].pages_shared + rows[i].pages_sharing == 0,
		      "all-zero huge pages: nothing merges");
		check_thp(&rows[i], "thp skipped", 2 * splits[i], splits[i],
			  items[i]);
	}
	free(rows);
}

/* The shortcut over repeating scans with huge pages: random runs of the
 * addresses make huge pages. */
static void test_thp_shortcut(void)
{
	unsigned cases = 300, differ = 0;
	struct fix f;

	for (unsigned k = 0; k < cases; k++) {
		struct replay_params p;
		struct timeline_row *fast, *slow;
		int cut_fast, cut_slow;
		size_t nf, ns, t = 0;

		random_series(&f);
		for (size_t i = 0; i < f.sr.naddr; t++) {
			size_t len = 1 + rnd(8);

			if (rnd(3))
				fix_thp(&f, i, i + len < f.sr.naddr ? i + len :
					f.sr.naddr, (uint32_t)t);
			i += len;
		}
		p = random_params();
		nf = replay_run(&f.sr, &p, &fast, &cut_fast);
		setenv("KSMSCAN_SLOW_REPLAY", "1", 1);
		ns = replay_run(&f.sr, &p, &slow, &cut_slow);
		unsetenv("KSMSCAN_SLOW_REPLAY");
		differ += !timeline_rows_equal(fast, nf, slow, ns) ||
			  cut_fast != cut_slow;
		free(fast);
		free(slow);
	}
	check(!differ, "with huge pages the shortcut gives the full replay's rows");
}

int main(void)
{
	contents_init();
	unsetenv("KSMSCAN_SLOW_REPLAY");
	test_merge();
	test_batches();
	test_wake_cost();
	test_volatile();
	test_cow();
	test_chains();
	test_zero();
	test_smart_scan();
	test_shortcut();
	test_pace();
	test_search();
	test_thp_split();
	test_thp_later();
	test_thp_skipped();
	test_thp_shortcut();
	return unit_done();
}
