/* SPDX-License-Identifier: MIT */
#ifndef KSMSCAN_REPLAY_IMPL_H
#define KSMSCAN_REPLAY_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "policy.h"
#include "rbtree.h"
#include "replay.h"

/*
 * Inside model/ only: what the replay's files share (replay.c,
 * replay_clock.c, replay_skip.c, replay_figures.c), and what model/pace.c
 * takes from the replay to time it at every pace (the unpaced scan, the
 * visits, the marks).
 */

/**
 * replay_wake_period_near() - replay_wake_period() at @sleep_ms for a batch
 * whose cost is known only within @err of @cost.
 * @p: the settings (hz, late)
 * @sleep_ms: ksmd's sleep_millisecs
 * @cost: the batch's CPU seconds, near enough
 * @err: how far the exact cost may be from @cost
 * @out: set to the period, when it is known
 *
 * The period depends on the cost only through the whole jiffies it spans:
 * when they are the same across the range, the period is exactly the
 * exact cost's.
 *
 * Return: 1 if @out is set, 0 if the range spans a jiffy's edge.
 */
int replay_wake_period_near(const struct replay_params *p, uint64_t sleep_ms,
			    double cost, double err, double *out);

/**
 * replay_over() - whether a replay ends after its @n full scans.
 * @sr: the series
 * @p: the settings (scans, until, until_saving, interval, write_rate)
 * @rows: its full scans so far
 * @n: how many, at least 1
 * @settling: the scans past the series' time that changed a counter; 0 at
 *	the start, counted here
 * @cut: set to 1 when it ends at REPLAY_SCANS_MAX or REPLAY_WORK_MAX
 *
 * Return: 1 if it ends.
 */
int replay_over(const struct series *sr, const struct replay_params *p,
		const struct timeline_row *rows, size_t n, size_t *settling,
		int *cut);

/* What a full scan did, in order, as runs of one kind each: pages it
 * checksummed (page_seconds a visit), KSM pages it only revisited
 * (revisit_seconds), and the merges a visit made, logged after it
 * (merge_seconds each, no visit). A run is its length << RUN_SHIFT | its
 * kind. */
enum { RUN_VISITS, RUN_REVISITS, RUN_MERGES, RUN_SHIFT = 2 };

struct replay_visits {
	uint32_t *runs;			/* the runs */
	size_t n, cap;			/* how many, and room */
	uint64_t visits, revisits;	/* visits in all, and revisits */
};

/* A full scan timed from its visits (replay_time_scan()). */
struct scan_time {
	struct timeline_row row;	/* in: its counters; out: its times too */
	double now;			/* in: its start; out: the end of its
					 * last full batch, the row's time */
	double limit;			/* in: no wake-up may come at or after
					 * it (when the memory changes) */
	double cpu;			/* in: ksmd's CPU seconds by its end
					 * (for the advisor) */
	uint64_t pages_to_scan;		/* in: in force; out: the next (the
					 * advisor's) */
	struct policy_state ps;		/* the policy's state, updated */
	uint64_t wakeups;		/* out: the wake-ups within it */
	double rest, rest_cost;		/* out: the sleep after its last batch,
					 * which ends with it, and its cost */
};

/**
 * replay_time_scan() - the times of a full scan whose visits are known, as
 * the replay times them.
 * @p: the settings: the pace, the costs, the policy (one without looks:
 *	the fixed policy or the advisor)
 * @v: the scan's visits, in order
 * @t: the scan (see struct scan_time); pages_to_scan at least 1
 *
 * A batch's cost is summed visit by visit, as the replay does, whenever
 * the jiffies its sleep spans could depend on the rounding.
 *
 * Return: 1, or 0 if a wake-up within the scan comes at @t->limit or later
 * (then @t means nothing).
 */
int replay_time_scan(const struct replay_params *p,
		     const struct replay_visits *v, struct scan_time *t);

/**
 * replay_cpu_after() - ksmd's CPU seconds after some visits.
 * @p: the settings (the costs)
 * @v: the visits, in order
 * @cpu: the CPU seconds before them
 *
 * Return: @cpu plus each visit's cost, added one by one as the replay
 * adds them.
 */
double replay_cpu_after(const struct replay_params *p,
			const struct replay_visits *v, double cpu);

struct replay;

/**
 * replay_open() - a replay at its start: the first snapshot in memory,
 * nothing scanned yet.
 * @sr: the series, as long as the replay is open
 * @p: the settings, as long as the replay is open
 *
 * Return: the replay (replay_close() it).
 */
struct replay *replay_open(const struct series *sr,
			   const struct replay_params *p);

/**
 * replay_scan_unpaced() - the next full scan in one batch, without time.
 * @r: a replay of a fixed policy, open on a series of one snapshot and no
 *	write_rate: then what merges depends only on the order of the
 *	visits, never on when they come, and one replay serves every pace
 * @scan: its number, from 1
 * @v: set to its visits (its runs reused)
 * @cpu: set to ksmd's CPU seconds of the replay by its end
 *
 * Return: the counters at its end (its times and CPU percent mean nothing).
 */
struct timeline_row replay_scan_unpaced(struct replay *r, uint64_t scan,
					struct replay_visits *v, double *cpu);

struct replay_mark;

/**
 * replay_mark() - what the replay's next full scans depend on, now,
 * between two full scans: each address's rmap_item and mapping, the KSM
 * pages, the stable tree and the counters (not the scan counts, the time
 * or ksmd's CPU so far).
 * @r: the replay
 *
 * Return: the mark (replay_mark_free() it).
 */
struct replay_mark *replay_mark(const struct replay *r);

/**
 * replay_at_mark() - whether the replay is where it was at a mark.
 * @r: the replay, between two full scans
 * @m: a mark of it
 *
 * On memory that does not change, a replay back at a mark P scans later
 * repeats those P scans for ever (but for the running counts:
 * pages_skipped and ksmd's CPU).
 *
 * Return: 1 if every address, KSM page and counter is as at the mark.
 */
int replay_at_mark(const struct replay *r, const struct replay_mark *m);

/* What a scan's end leaves for the next scans (replay_mark). */
struct replay_mark {
	struct rmap *s;
	struct dup *d;
	size_t nd, nstable;
	uint64_t shared, sharing, unshared, rmap_items, zero;
	uint64_t thp_zero, thp_splits;
};

/**
 * replay_mark_free() - free a mark.
 * @m: the mark, or NULL
 */
void replay_mark_free(struct replay_mark *m);

/**
 * replay_close() - free a replay.
 * @r: the replay, or NULL
 */
void replay_close(struct replay *r);

/* What ksmd knows of one address (its rmap_item, its mapping). */
struct rmap {
	uint32_t id;		/* the content there now, or NO_ID (no page) */
	uint32_t oldsum;	/* rmap_item->oldchecksum */
	uint32_t dup;		/* the KSM page whose rmap list holds it, or NO_ID */
	uint32_t map;		/* the KSM page mapped here, or NO_ID */
	uint32_t unode;		/* its unstable tree node, if inserted this
				 * scan (else a node of another address, or
				 * past the tree's end) */
	uint8_t rmap;		/* it has an rmap_item */
	uint8_t unstable;	/* UNSTABLE_FLAG: counted in pages_unshared */
	uint8_t zero;		/* the zero page is mapped here: ZERO_KSM by
				 * KSM (ksm_zero_pages), ZERO_SPLIT by the
				 * split of a huge page (in no counter) */
	uint8_t age;		/* rmap_item->age (smart_scan) */
	uint8_t skips;		/* rmap_item->remaining_skips */
	uint8_t heavy;		/* a sampled series: the class of its
				 * content (SERIES_CLASS()), which its
				 * rmap_item and unstable node count at (an
				 * address whose page went keeps the one it
				 * had) */
};

/* Who mapped the zero page at an address (struct rmap's zero). */
enum { ZERO_KSM = 1, ZERO_SPLIT = 2 };

/* A KSM page (a stable node, or a dup of a chain). */
struct dup {
	uint32_t chain;		/* its content's node in the stable tree */
	uint32_t next;		/* the chain's next dup, or NO_ID */
	uint32_t len;		/* rmap_hlist_len */
	uint32_t mapped;	/* addresses mapping it; at 0 the page is freed */
	uint8_t alive;
};

/* A content in the stable tree: its KSM pages. */
struct chain {
	uint32_t id;		/* the content */
	uint32_t first;		/* its first dup, or NO_ID */
	uint32_t live;		/* its dups not freed */
	uint32_t best;		/* while it holds, the dup a stable tree
				 * search picks (NO_ID: none can take one
				 * more page), else CHAIN_ASK: a chain of a
				 * content with many pages holds many dups,
				 * and a search would walk them all */
};

/* struct chain's best is not known: the next search walks the dups. */
#define CHAIN_ASK (NO_ID - 1)

/* A run of the visit log: its length and kind. */
#define RUN_LEN(x) ((x) >> RUN_SHIFT)
#define RUN_KIND(x) ((x) & ((1u << RUN_SHIFT) - 1))

/* The longest repeat of full scans looked for; and a mark is taken every
 * this many scans (at half of it): smart_scan's skips repeat every 9
 * scans at most once every page's age is past 8. */
#define REPLAY_PERIOD_MAX 16

/* A node of the stable tree: what a search step compares kept in the
 * node (a content's id and first 8 bytes never change), so that a step
 * reads one cache line; the rest of the content's node is its chain. */
struct stable_node {
	struct rb_link l;
	uint32_t id;		/* the content */
	uint64_t head;		/* series.head[id] */
};

/* A node of this scan's unstable tree: an address, and what is there now
 * as a search compares it (kept up to date by replay_unstable_seen(); the
 * kernel reads the page as it is at the time of the search). Its l.mark:
 * merged since, erased by the kernel (it still routes the searches). */
struct unstable_node {
	struct rb_link l;
	uint32_t addr;		/* the address it stands for */
	uint32_t id;		/* its content now, or NO_ID: no page, or
				 * the zero page mapped (a search stops) */
	uint64_t head;		/* series.head[id] */
};

/* ksmd's trees (replay.c): what it knows of each address, its KSM pages,
 * the stable tree of their contents and this scan's unstable tree. */
struct replay_trees {
	struct rmap *s;		/* per address */
	struct dup *d;		/* the KSM pages, and room */
	size_t nd, dcap;
	struct chain *c;	/* at the stable tree's node indexes */
	size_t ccap;
	struct rb_tree stable;	/* of struct stable_node */
	struct rb_tree unstable;	/* of struct unstable_node */
	uint8_t *whole;		/* per huge page (series' thp): not split yet */
};

/* The kernel's counters, and what the current full scan did. */
struct replay_counts {
	uint64_t shared, sharing, unshared, rmap_items, skipped, zero;
	uint64_t thp_zero, thp_splits;	/* ZERO_SPLIT addresses; splits */
	uint64_t visited, hashed, memcmp_bytes;	/* in the current scan */
	uint64_t cow, skipped_scan;		/* in the current scan */
};

/* Time (replay_clock.c): ksmd's wake-ups, its pace, and the memory in
 * force at each wake-up. */
struct replay_clock {
	double now;		/* the time of this wake-up */
	size_t snap;		/* the snapshot in force */
	uint64_t present;	/* its pages (a delta does not count them) */
	uint64_t batch, budget;	/* ksmd's wake-ups so far, pages left in this one */
	uint64_t owed;		/* a sampled series: pages a visit stood for
				 * past its batch's budget, taken from the
				 * next batches' (ksmd's pace kept) */
	uint64_t pts;		/* pages_to_scan now */
	uint64_t sleep_ms;	/* sleep_millisecs now */
	double writes;		/* write_rate's writes due, not yet made */
	uint64_t rng;		/* their random state */
};

/* The policy (replay_clock.c alone calls its operations): who sets the
 * pace, and, with looks at the host's memory, may stop ksmd. */
struct replay_policy {
	const struct policy_ops *ops;	/* who sets pages_to_scan and the sleep */
	struct policy_state ps;	/* its state */
	int run;		/* ksmd runs (ksmtuned may stop it) */
	int halt;		/* stopped past the series' end: the replay ends */
	double next_tick;	/* ksmtuned's next look */
	double stop_time;	/* when ksmtuned last stopped KSM */
	uint64_t stop_saving;	/* pages_sharing + ksm_zero_pages then */
};

/* ksmd's CPU seconds: its visits at page_seconds, revisits at
 * revisit_seconds, merges at merge_seconds. */
struct replay_cpu {
	double all;		/* since the start */
	double scan;		/* in this full scan */
	double batch;		/* in this wake-up */
};

/* The shortcut over full scans that repeat (replay_skip.c). */
struct replay_skip {
	int ahead;		/* it may be taken in this replay */
	struct replay_visits seen[REPLAY_PERIOD_MAX];	/* the last scans'
				 * visits, scan n at n % REPLAY_PERIOD_MAX */
	struct replay_mark *mark;	/* the replay after scan mark_at, or NULL */
	size_t mark_at;
	size_t period;		/* 0, or: the scans since the mark repeat */
};

/* A replay, its parts grouped by who owns them. */
struct replay {
	const struct series *sr;
	const struct replay_params *p;
	struct replay_trees tree;
	struct replay_counts count;
	struct replay_clock clock;
	struct replay_policy pol;
	struct replay_cpu cpu;
	struct replay_skip skip;
	struct replay_visits *log;	/* the scan's visits, or NULL */
	size_t settling;	/* scans after the series' time */
	int cut;		/* stopped at a limit */
	int plain;		/* KSMSCAN_SLOW_REPLAY (the tests' oracle):
				 * the searches read the pages and walk the
				 * chains, not what the nodes and chains
				 * keep of them */
};

/* replay.c: ksmd's core. */

/**
 * replay_written() - the address was written (or unmapped): copy-on-write
 * of what KSM mapped there.
 * @r: the replay
 * @s: the address's rmap
 * @id: the content there now, or NO_ID (no page)
 */
void replay_written(struct replay *r, struct rmap *s, uint32_t id);

/**
 * replay_unstable_seen() - address @i's page changed (its content, or the
 * zero page mapped there): its node in this scan's unstable tree, if it
 * has one, now compares with what is there.
 * @r: the replay
 * @i: the address
 */
void replay_unstable_seen(struct replay *r, uint32_t i);

/**
 * replay_snap_apply() - make snapshot @k the memory's content: what
 * differs from snapshot @k - 1 (for k = 0, from no memory) was written.
 * @r: the replay
 * @k: the snapshot
 */
void replay_snap_apply(struct replay *r, size_t k);

/**
 * replay_done() - whether the replay is over after @n scans.
 * @r: the replay
 * @rows: its rows, the last one just ended
 * @n: how many
 *
 * Return: 1 if it is over (replay_over(), or the policy halted it).
 */
int replay_done(struct replay *r, const struct timeline_row *rows, size_t n);

/* replay_clock.c: time, the pace and the policy. */

/**
 * replay_period() - replay_wake_period() at ksmd's sleep_millisecs
 * @sleep_ms.
 * @p: the settings (hz, late)
 * @sleep_ms: the sleep in force
 * @cost: the batch's CPU seconds
 *
 * Return: the period.
 */
double replay_period(const struct replay_params *p, uint64_t sleep_ms,
		     double cost);

/**
 * replay_snap_time() - when snapshot @k was taken.
 * @r: the replay
 * @k: the snapshot
 *
 * Return: seconds after the first.
 */
double replay_snap_time(const struct replay *r, size_t k);

/**
 * replay_wake() - ksmd sleeps, and wakes with a new batch; the memory is
 * as it is then (snapshots due, unseen writes, the policy's looks).
 * @r: the replay
 */
void replay_wake(struct replay *r);

/**
 * replay_policy_open() - the policy and the pace at the start: ksmd runs
 * at the policy's first pages_to_scan and the settings' sleep.
 * @r: the replay, zeroed but for its series and settings
 */
void replay_policy_open(struct replay *r);

/**
 * replay_policy_start() - a policy that looks at the host's memory keeps
 * KSM stopped until its first look.
 * @r: the replay, before its first scan
 */
void replay_policy_start(struct replay *r);

/**
 * replay_policy_scan_end() - a full scan ended: the policy may set the
 * next pages_to_scan (the advisor).
 * @r: the replay
 * @first_time: when the scan began
 */
void replay_policy_scan_end(struct replay *r, double first_time);

/**
 * replay_policy_looks() - whether the policy looks at the host's memory
 * (and may stop ksmd at any time: then what merges depends on the time).
 * @r: the replay
 *
 * Return: 1 if it does.
 */
int replay_policy_looks(const struct replay *r);

/**
 * replay_policy_reads_cpu() - whether the policy reads ksmd's CPU so far
 * (it acts after each full scan).
 * @r: the replay
 *
 * Return: 1 if it does.
 */
int replay_policy_reads_cpu(const struct replay *r);

/* replay_skip.c: the shortcut over full scans that repeat. */

/**
 * replay_forget_mark() - drop the mark: the memory changed, so what
 * repeated before need not now.
 * @r: the replay
 */
void replay_forget_mark(struct replay *r);

/**
 * replay_note_scan() - scan @n ended: note whether the replay is back
 * where it was at the mark (then the scans since repeat), or take a new
 * mark now and then.
 * @r: the replay, with the shortcut allowed
 * @n: the scans so far
 */
void replay_note_scan(struct replay *r, size_t n);

/**
 * replay_skip_ahead() - add the next repeating scans' rows without
 * running them, timed from their visits.
 * @r: the replay, with a period found (r->skip.period)
 * @rows: the rows so far, grown as needed
 * @n: how many, updated
 * @cap: their room, updated
 *
 * Stops where the replay ends, or where the memory changes within a
 * period: then the period's rows are undone and r->skip.period is 0.
 *
 * Return: 1 if the replay ended within the rows added.
 */
int replay_skip_ahead(struct replay *r, struct timeline_row **rows,
		      size_t *n, size_t *cap);

/* replay_figures.c: the rows. */

/**
 * replay_counters() - the counters as /sys/kernel/mm/ksm shows them now,
 * at the end of a full scan.
 * @r: the replay
 * @scan: the scan's number, from 1
 * @first_batch: the wake-up the scan began in
 * @first_time: when it began
 *
 * Return: the scan's row.
 */
struct timeline_row replay_counters(const struct replay *r, uint64_t scan,
				    uint64_t first_batch, double first_time);

/**
 * replay_spread_count() - the sampled contents' sums of squares now.
 * @r: the replay, at its end
 * @out: set
 */
void replay_spread_count(const struct replay *r, struct replay_spread *out);

/**
 * replay_owners_count() - each owner's pages now: the rmap_item counters
 * of its mm.
 * @r: the replay
 * @shift: an address's owner is the address >> @shift
 * @owners: @nowners entries, zeroed and filled in
 * @nowners: how many
 */
void replay_owners_count(const struct replay *r, unsigned shift,
			 struct replay_owner *owners, size_t nowners);

#endif
