/* SPDX-License-Identifier: MIT */
#ifndef KSMSCAN_REPLAY_H
#define KSMSCAN_REPLAY_H

#include <stddef.h>
#include <stdint.h>

#include "../util/page.h"
#include "ksm.h"
#include "policy.h"

/*
 * The ksmd replay (docs/over-time.md): Linux 6.18's mm/ksm.c scanner run over a
 * series of snapshots of one memory. It knows pages only as content ids (the
 * index's, byte-exact within the run) and asks how two contents compare
 * (memcmp's sign and their common prefix) only to order its trees as KSM
 * does: from their bytes in a live run, from a record's order of contents
 * when it replays a record (scan/record.h).
 *
 * This header is what the rest of ksmscan calls. model/replay_impl.h holds
 * what the replay's own files share (replay.c: ksmd's trees and a page's
 * visit; replay_clock.c: time, the pace and the tuner; replay_skip.c: the
 * shortcut over full scans that repeat; replay_figures.c: the rows and
 * what they come to) with model/pace.c, which times one replay at every
 * pace.
 */

/* One snapshot: the addresses it has a page at, and their contents. */
struct snapshot {
	size_t n;			/* its pages */
	uint32_t *addr_no;		/* each page's address, as an index of
					 * series.addr, ascending */
	uint32_t *id;			/* each page's content id */
};

/* The memory over time: what each address held in each snapshot. Memory is
 * linear in the pages of all snapshots, or with delta in the pages that
 * changed. */
struct series {
	size_t naddr;			/* addresses present in any snapshot */
	const uint64_t *addr;		/* naddr addresses, ascending */
	size_t nsnaps;			/* snapshots, oldest first */
	const struct snapshot *snaps;	/* them in memory, or NULL: read
					 * through snap() (series_snap()) */
	/** snap() - snapshot @k of @src, held until snap_done() (a spool
	 * on disk: safe in several threads). */
	const struct snapshot *(*snap)(const void *src, size_t k);
	/** snap_done() - a snapshot snap() gave is no longer read. */
	void (*snap_done)(const void *src, const struct snapshot *sn);
	const void *src;		/* for snap() and snap_done() */
	const uint32_t *sum;		/* per content id: KSM's checksum of it */
	const uint64_t *head;		/* per content id: its first 8 bytes, big
					 * endian (most comparisons end there) */
	uint32_t zero_id;		/* the all-zero content, or NO_ID */
	uint32_t zero_sum;		/* KSM's checksum of the zero page */
	/** compare() - memcmp() of contents @a and @b, whose heads are
	 * equal: its sign, and in @common the bytes of their common prefix
	 * (PAGE_BYTES for the same content). */
	int (*compare)(const void *ctx, uint32_t a, uint32_t b, size_t *common);
	const void *ctx;		/* for compare() */
	const double *at;		/* per snapshot: when it was taken, seconds
					 * after the first; NULL: k x interval */
	const uint32_t *thp;		/* per address: the transparent huge page
					 * it is part of as the replay begins
					 * (below nthp; the addresses of one are
					 * consecutive), or NO_ID; NULL: none */
	size_t nthp;			/* how many huge pages */
	uint32_t sample;		/* --sample=1/N: N, the pages of the
					 * contents other than zero_id are a
					 * sample, each standing for N pages
					 * (in ksmd's pace and in every count);
					 * 0 or 1: every page is here */
	const uint32_t *pace;		/* a sample, per snapshot: the pages one
					 * sampled page's visit stands for in
					 * ksmd's pace, in REPLAY_PACE_UNITs (the
					 * snapshot's pages but its zero pages
					 * over those kept: the full scans last
					 * as long as the whole memory's); NULL:
					 * sample pages each */
	uint32_t out_id;		/* a sample: the content id of a page
					 * whose content is outside the sample,
					 * at an address that holds a sampled
					 * content in another snapshot: ksmd
					 * keeps its rmap_item and ages it as the
					 * kernel would (smart_scan), merges it
					 * never and counts it for nothing */
	int delta;			/* each snapshot holds only its pages
					 * against the one before (the first:
					 * against none), as a record stores
					 * them: the addresses whose content
					 * changed, came or went (id NO_ID);
					 * snapshot_delta() makes one */
};

/**
 * series_snap() - snapshot @k of @sr, from memory or through its snap():
 * what every reader of a series' snapshots calls, then series_snap_done().
 * @sr: the series
 * @k: the snapshot, below sr->nsnaps
 *
 * Return: it, valid until series_snap_done() (in any thread).
 */
const struct snapshot *series_snap(const struct series *sr, size_t k);

/**
 * series_snap_done() - a snapshot series_snap() gave is no longer read.
 * @sr: the series
 * @sn: the snapshot
 */
void series_snap_done(const struct series *sr, const struct snapshot *sn);

/**
 * snapshot_delta() - a snapshot as its pages against the one before
 * (series.delta): only the addresses whose content changed, came or went.
 * @sn: the snapshot in full, replaced by its delta (arrays reallocated)
 * @last: per address of the series, its content in the snapshot before
 *	(NO_ID: none; all NO_ID before the first), set to this one's
 * @naddr: addresses of the series
 *
 * Most pages do not change between snapshots: a delta holds 8 bytes a
 * page that changed, where the snapshot held 8 a page.
 */
void snapshot_delta(struct snapshot *sn, uint32_t *last, size_t naddr);

/* A sample's budget of ksmd's batch is counted in pages / this. */
#define REPLAY_PACE_UNIT 65536

/**
 * replay_pace_weight() - series.pace of snapshot @k.
 * @sr: a sampled series (sample > 1)
 * @k: the snapshot
 * @dropped: its pages left out of the sample
 *
 * Return: (its kept pages other than zero pages, plus @dropped) over the
 * kept ones, in REPLAY_PACE_UNITs; sample of them if none is kept.
 */
uint32_t replay_pace_weight(const struct series *sr, size_t k, uint64_t dropped);
/**
 * page_common() - memcmp() of two pages whose first 8 bytes are equal, and
 * the length of their common prefix: what a series' compare() gives from
 * contents' bytes.
 * @a: a page
 * @b: another
 * @common: set to the bytes they share from the start (PAGE_BYTES if equal)
 *
 * Return: <0, 0 or >0 as memcmp().
 */
int page_common(const unsigned char *a, const unsigned char *b, size_t *common);

/* ksmd's settings and the series' timing. */
struct replay_params {
	struct ksm_params ksm;		/* KSM's settings (sleep_ms at least 1) */
	uint64_t scans;			/* full scans to run; 0: until the time
					 * of the last snapshot plus one
					 * interval, and until the counters stop
					 * changing (at most REPLAY_SETTLE_MAX more;
					 * not with write_rate: they never do) */
	double interval;		/* seconds between snapshots, > 0 */
	double ns_per_page;		/* the checksum's cost here */
	double ns_per_byte;		/* memcmp's cost here */
	unsigned hz;			/* the kernel's HZ: ksmd sleeps on the timer
					 * wheel (replay_wake_period()); 0: every
					 * sleep_ms exactly, with no batch cost */
	double page_seconds;		/* ksmd's time per page it visits and
					 * checksums: a batch's cost, before it
					 * sleeps */
	double revisit_seconds;		/* ... per page it visits that is a KSM
					 * page already (it only finds the page
					 * still in its KSM page's list) */
	double merge_seconds;		/* ... more per page it merges into a
					 * KSM page (replace_page() and the
					 * stable tree's insert or append) */
	double wake_seconds;		/* ksmd's CPU per wake-up besides its
					 * pages' (the timer, the switch to it,
					 * finding its place in the mm list,
					 * lru_add_drain_all() a full scan):
					 * counted in its CPU figures, not in
					 * the batch's length (far below a
					 * jiffy) */
	const double *late;		/* measured on a live host: how late ksmd
					 * runs (seconds past its tick, and its
					 * batch stretched by other tasks), a
					 * sample of wake-ups; NULL: never late */
	size_t nlate;			/* ... how many */
	double ksmd_cpu_seconds;	/* ksmd's CPU time before the replay (the
					 * advisor's first scan counts it) */
	const struct policy_ops *policy;	/* who sets pages_to_scan: fixed
					 * (ksm's), or a tuner (policy.h) */
	struct policy_params tuning;	/* its settings, which it alone reads */
	struct policy_host host;	/* the host's memory, for a tuner that
					 * looks at it */
	double until;			/* with scans 0: end at the first full scan
					 * at or past this time too (0: no such
					 * end; the advice's search) */
	int until_horizon;		/* with until: end at the full scan after
					 * that one instead (the advice's horizon:
					 * one whole scan past the target time),
					 * as a replay to just past that scan's
					 * end would; until_saving then ends it
					 * only before until */
	double write_rate;		/* fraction of the pages written per second
					 * with the bytes they hold (writes the
					 * snapshots cannot see), 0 for none */
	uint64_t until_saving;		/* with scans 0: end too at the first full
					 * scan whose saving (pages_sharing +
					 * ksm_zero_pages) is at least this (0:
					 * no such end; the advice's search,
					 * which only asks whether a target is
					 * reached) */
};

/* At most this many scans beyond the series' time, waiting for the counters
 * to settle; and at most REPLAY_SCANS_MAX scans in all (without --scans). */
#define REPLAY_SETTLE_MAX 1000
#define REPLAY_SCANS_MAX 1000000
/* And without --scans, at most this many addresses visited or passed over
 * (full scans times addresses): about a minute of replay. */
#define REPLAY_WORK_MAX (UINT64_C(1) << 31)

/* /sys/kernel/mm/ksm at the end of one full scan. */
struct timeline_row {
	uint64_t scan;			/* 1 for the first full scan */
	size_t snapshot;		/* the snapshot in force when it ended,
					 * from 0 */
	double seconds;			/* when it ended, from the first snapshot */
	uint64_t pages_shared;
	uint64_t pages_sharing;
	uint64_t pages_unshared;
	uint64_t pages_volatile;
	uint64_t pages_skipped;		/* since the start of the replay */
	uint64_t ksm_zero_pages;
	int64_t general_profit;
	uint64_t zero_sharing;		/* of pages_sharing, mappings of KSM
					 * pages of the zero page's content */
	uint64_t visited;		/* pages compared and merged in the scan */
	uint64_t hashed;		/* of which checksummed (not KSM pages) */
	uint64_t memcmp_bytes;		/* bytes its tree searches compared */
	uint64_t wakeups;		/* ksmd's batches it took */
	double cpu_percent;		/* ksmd's CPU over the scan's wall time */
	double cpu_seconds;		/* ksmd's CPU in the scan: its visits at
					 * page_seconds, revisits of KSM pages at
					 * revisit_seconds */
	uint64_t cow_ksm;		/* KSM pages written in the scan (copy on
					 * write: /proc/vmstat cow_ksm) */
	uint64_t skipped_scan;		/* pages smart_scan passed over in it */
	uint64_t pages_to_scan;		/* ksmd's, after the scan (the advisor
					 * may have changed it) */
	uint64_t sleep_ms;		/* ksmd's sleep_millisecs then (ksmtuned
					 * may have changed it) */
	int ended;			/* ksmtuned kept KSM stopped until past the
					 * series' end: the row is when the replay
					 * ended, its scan not complete */
	double stopped_seconds;		/* ...: when ksmtuned last stopped KSM */
	uint64_t stopped_saving;	/* ...: pages_sharing + ksm_zero_pages then */
	uint64_t thp_zero_freed;	/* zero-filled subpages of huge pages that
					 * KSM split, mapped to the shared zero
					 * page by the split: freed, in none of
					 * KSM's counters */
	uint64_t thp_splits;		/* huge pages KSM split so far */
};

/* What a policy's replay comes to (the policies report): NaN for a time
 * never reached, and for a saving at a time past a replay that ended
 * before it without settling. */
struct replay_figures {
	double seconds_to_start;	/* the end of the first full scan that
					 * saved a page */
	double seconds_to_50, seconds_to_90;	/* ... that saved 50%, 90% of
					 * the last scan's saving */
	double saved_bytes[3];		/* at 1 h, 6 h and 24 h of the replay */
	double cpu_mean, cpu_peak;	/* ksmd's CPU, percent, at page_seconds a
					 * page visited: over the whole replay,
					 * and at its busiest: over consecutive
					 * full scans of REPLAY_PEAK_SECONDS or
					 * more, from a scan's end (the last
					 * ones: what is left) */
	uint64_t pages_to_scan, sleep_ms;	/* at the end */
};

/* The shortest time replay_figures() measures ksmd's peak CPU over. */
#define REPLAY_PEAK_SECONDS 1.0
/* The times replay_figures() gives the saving at, in hours. */
#define REPLAY_FIGURE_HOURS { 1, 6, 24 }

/*
 * ksmd's CPU over a replay, the one model every report gives it by
 * (ksmd_cpu_percent_mean, ksmd_cpu_percent_peak): each full scan's
 * cpu_seconds (its visits at page_seconds, its revisits at
 * revisit_seconds) plus its wake-ups at wake_seconds, taken in order
 * (start it as { .wake_seconds = p->wake_seconds }). The mean is their sum over the time of
 * the last scan taken; the peak, the busiest stretch from one scan's end
 * to another's at least REPLAY_PEAK_SECONDS later, the last stretch what
 * is left.
 */
struct ksmd_cpu {
	double sum;			/* CPU seconds of the scans taken */
	double seconds;			/* the last one's end */
	double busy;			/* the peak of the closed stretches */
	double window, before;		/* the open stretch: its CPU, its start */
	double wake_seconds;		/* replay_params' wake_seconds */
};

/**
 * ksmd_cpu_add() - one more full scan.
 * @c: the sum so far (zeroed at the start)
 * @row: the scan, after those added before
 */
void ksmd_cpu_add(struct ksmd_cpu *c, const struct timeline_row *row);

/**
 * ksmd_cpu_mean() - ksmd_cpu_percent_mean of the scans added.
 * @c: the sum
 *
 * Return: percent of a CPU, 0 before any time.
 */
double ksmd_cpu_mean(const struct ksmd_cpu *c);

/**
 * ksmd_cpu_peak() - ksmd_cpu_percent_peak of the scans added.
 * @c: the sum
 *
 * Return: percent of a CPU.
 */
double ksmd_cpu_peak(const struct ksmd_cpu *c);

/**
 * timeline_rows_equal() - whether two replays gave the same rows, field by
 * field (the skip-ahead shortcut against the full replay, in the unit tests
 * and the fuzz harness).
 * @a: one replay's rows
 * @na: how many
 * @b: the other's
 * @nb: how many
 *
 * Return: 1 if they are the same, else 0.
 */
int timeline_rows_equal(const struct timeline_row *a, size_t na,
			const struct timeline_row *b, size_t nb);

/**
 * replay_figures() - the figures of a replay, from its rows.
 * @rows: its full scans, at least one
 * @n: how many
 * @settled: whether the replay ran until its counters settled after the
 *	series' end (not cut at a bound, no unseen writes, no --scans):
 *	then the memory and the saving stay as the last row has them, at
 *	any later time
 * @wake_seconds: ksmd's CPU per wake-up besides its pages' (ksmd_cpu)
 *
 * The saving is pages_sharing plus ksm_zero_pages, in bytes. At a time
 * before the first row ended it is 0; past the last row it is the last
 * row's if @settled, else unknown (NaN). A replay that ksmtuned ended
 * reached its saving when ksmtuned stopped KSM (the row says when); from
 * then to the end the saving is that, if the last row has it too, else
 * unknown (snapshots broke merges, at times the rows do not say).
 *
 * Return: the figures.
 */
struct replay_figures replay_figures(const struct timeline_row *rows, size_t n,
				     int settled, double wake_seconds);

/**
 * replay_wake_period() - the seconds from one wake-up of ksmd to the next.
 * @p: the settings (hz, sleep_ms)
 * @cost: the batch's CPU seconds (its pages at page_seconds or
 *	revisit_seconds)
 *
 * ksmd sleeps msecs_to_jiffies(sleep_ms) jiffies from the jiffy its batch
 * ended in, on the timer wheel, which rounds a timer up past its expiry to
 * its level's granularity (1 jiffy below 63 jiffies, then 8, 64, ...): at
 * HZ=250, 20 ms is 5 jiffies and ksmd wakes every 6 (24 ms). A batch
 * that ends a jiffy or more after its tick (its cost, and with late, how
 * late ksmd ran: the mean over the sample) delays the timer as much.
 *
 * Return: the period; with @p->hz 0, sleep_ms exactly.
 */
double replay_wake_period(const struct replay_params *p, double cost);

/**
 * replay_run() - run ksmd over a series.
 * @sr: the series
 * @p: the settings
 * @rows: set to the full scans' rows (free() them)
 * @cut: set to 1 if the replay stopped at REPLAY_SCANS_MAX or
 *	REPLAY_WORK_MAX before its end, else 0
 *
 * Return: the number of rows.
 */
size_t replay_run(const struct series *sr, const struct replay_params *p,
		  struct timeline_row **rows, int *cut);

/*
 * What a sampled replay's last figures may be off by. Each content but the
 * zero page's is in the sample with probability 1/N, and a figure is N
 * times the sum over the sampled contents of what each content gives it
 * (x_c): the estimate of the sum over all contents is unbiased, with a
 * variance estimated by (N^2 - N) times the sum of the sampled x_c^2.
 *
 * A few contents of many pages make most of the saving, and a sample that
 * misses them says nothing of them: so pages_sharing is estimated by its
 * ratio to what the snapshot's contents would share at most (a_c, from
 * ksm_content(); the scan knows its total over every content exactly),
 * with the variance (N^2 - N) sum (x_c - R a_c)^2, R = sum x_c / sum a_c.
 * These are the sums, in pages and pages^2, at the replay's end.
 */
struct replay_spread {
	double shared;			/* sum x_c^2, x_c: its KSM pages */
	double shared_sum;		/* sum x_c of the same */
	double sharing;			/* ... x_c: their further mappings */
	double unshared;		/* ... x_c: its pages in the unstable tree */
	double sx, sa;			/* sum x_c, sum a_c of pages_sharing */
	double xa, aa;			/* sum x_c a_c, sum a_c^2 */
	uint64_t contents;		/* sampled contents with a page at the end */
};

/* What a snapshot's contents would share at most (ksm_content()): the
 * sampled contents' (in their own pages, not standing for more), and the
 * zero page's. */
struct replay_static {
	double sampled;			/* pages_sharing of the sampled contents */
	double zero;			/* ... of the zero page's (none with
					 * use_zero_pages: ksm_zero_pages) */
};

/**
 * replay_static_sharing() - the most snapshot @k's contents would share.
 * @sr: the series
 * @k: the snapshot
 * @ksm: max_page_sharing, use_zero_pages
 *
 * Return: the sampled contents' pages_sharing and the zero page's.
 */
struct replay_static replay_static_sharing(const struct series *sr, size_t k,
					   const struct ksm_params *ksm);

/**
 * replay_sample_rows() - a sampled replay's rows as estimates of the whole
 * memory's: pages_sharing (and general_profit with it) by its ratio to
 * what the snapshot's contents would share at most, per snapshot.
 * @sr: the series (nothing changes unless sr->sample > 1)
 * @ksm: max_page_sharing, use_zero_pages
 * @full: per snapshot: pages_sharing at most of every content of it (the
 *	scan's figure), exact
 * @rows: the replay's rows, changed
 * @n: how many
 */
void replay_sample_rows(const struct series *sr, const struct ksm_params *ksm,
			const uint64_t *full, struct timeline_row *rows, size_t n);

/**
 * replay_swing() - how far a sampled replay's saving moved over the full
 * scans of the last snapshot: its pace and smart_scan's skips depend on
 * the sample's mix of pages that merge and pages that do not, so its last
 * full scan stands for one anywhere in that stretch of the whole memory's.
 * @rows: the rows, estimates (replay_sample_rows())
 * @n: how many, at least 1
 *
 * Return: the largest less the smallest pages_sharing + ksm_zero_pages of
 * the full scans that ran in the last row's snapshot alone (the one
 * before ended in it), and the last, in pages.
 */
double replay_swing(const struct timeline_row *rows, size_t n);

/**
 * replay_ratio_bound() - two standard errors of pages_sharing estimated
 * by its ratio (struct replay_spread).
 * @sample: N of --sample=1/N
 * @sp: the sums at the end
 *
 * Return: 2 x sqrt((N^2 - N) x sum (x_c - R a_c)^2), in pages.
 */
double replay_ratio_bound(uint32_t sample, const struct replay_spread *sp);

/**
 * replay_shared_bound() - the bound of a sampled pages_shared: two
 * standard errors at the largest count the sample leaves within them, and
 * how far pages_shared moved over the last snapshot's full scans.
 * @sample: N of --sample=1/N (0 or 1: 0 returned)
 * @sp: the sums at the end
 * @rows: the rows (replay_sample_rows())
 * @n: how many, at least 1
 *
 * pages_shared counts contents of two pages or more, mostly one KSM page
 * each: a sample's count of them is binomial, its variance proportional
 * to the count, so a sample that drew few of them would state too narrow
 * a bound from its own count (replay_bound()). With V = (N^2 - N) sum
 * x_c^2 and m = (N - 1) sum x_c^2 / sum x_c, the total T that lies two
 * standard errors, 2 sqrt(m T), from the estimate E is E + b, b = 2 m +
 * sqrt(4 m^2 + 4 V).
 *
 * Return: b plus the swing, in pages.
 */
double replay_shared_bound(uint32_t sample, const struct replay_spread *sp,
			   const struct timeline_row *rows, size_t n);

/**
 * replay_run_sampled() - replay_run(), and the spread of the last figures
 * over the sampled contents (the error bound of a sampled series).
 * @sr: the series (sr->sample > 1 for a sample; else @spread is zero)
 * @p: the settings
 * @rows: set as replay_run() sets it
 * @cut: set as replay_run() sets it
 * @spread: set to the sums of squares at the end
 *
 * Return: the number of rows.
 */
size_t replay_run_sampled(const struct series *sr, const struct replay_params *p,
			  struct timeline_row **rows, int *cut,
			  struct replay_spread *spread);

/**
 * replay_bound() - two standard errors of a sampled figure.
 * @sample: N of --sample=1/N (0 or 1: no sample, 0 returned)
 * @squares: the sum of the sampled contents' x_c^2 (struct replay_spread)
 *
 * Return: 2 x sqrt((N^2 - N) x @squares), in pages.
 */
double replay_bound(uint32_t sample, double squares);

/* One owner's pages at the end of a replay: a live process, as its
 * /proc/PID/ksm_stat would read. */
struct replay_owner {
	uint64_t rmap_items;		/* ksm_rmap_items: pages ksmd tracks */
	uint64_t merging;		/* ksm_merging_pages: its pages in the
					 * stable tree */
	uint64_t zero;			/* ksm_zero_pages: mapped to the zero
					 * page by KSM */
};

/**
 * replay_run_owners() - replay_run(), and each owner's pages at its end.
 * @sr: the series
 * @p: the settings
 * @rows: set as replay_run() sets it
 * @cut: set as replay_run() sets it
 * @shift: an address's owner is the address >> @shift
 * @owners: @nowners entries, zeroed and filled in (an owner at or past
 *	@nowners is not counted)
 * @nowners: how many
 *
 * Return: the number of rows.
 */
size_t replay_run_owners(const struct series *sr, const struct replay_params *p,
			 struct timeline_row **rows, int *cut, unsigned shift,
			 struct replay_owner *owners, size_t nowners);

#endif
