/* SPDX-License-Identifier: MIT */
/*
 * The timeline report (--series): /sys/kernel/mm/ksm's counters after each
 * full scan of the ksmd replay. People get a sample of the rows, a curve of
 * pages_sharing over time and when 90% of the saving had come.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../scan/series.h"
#include "../../util/util.h"
#include "../report_sink.h"
#include "../write/cell.h"
#include "../write/writer.h"

/* People read the counters under short names, the saving in units of 1024
 * and the time to the hundredth, within 80 columns (-l: every column). */
static const struct column timeline_cols[] = {
	{ "input", 0, COL_NOT_PEOPLE, { 0 } }, { "scan", 0, 0, { 0 } },
	{ "seconds", 0, 0, { .decimals = DECIMALS(2) } },
	{ "pages_shared", 0, 0, { .name = "shared" } },
	{ "pages_sharing", 0, 0, { .name = "sharing" } },
	{ "pages_unshared", 0, 0, { .name = "unshared" } },
	{ "pages_volatile", 0, 0, { .name = "volatile" } },
	{ "pages_skipped", 0, 0, { .name = "skipped" } },
	{ "ksm_zero_pages", 0, 0, { .name = "zero" } },
	/* for people: the pages saved (sharing, zero, and the zero-filled
	 * subpages splits freed) as a size */
	{ "saved", 0, COL_PEOPLE_ONLY, { .size = SIZE_PAGES } },
	{ "general_profit", 0, COL_NOT_PEOPLE, { 0 } },
	{ "ksmd_cpu_percent", 0, 0, { .name = "cpu%", .decimals = DECIMALS(2) } },
	/* per full scan, to hold against /proc/vmstat cow_ksm and the
	 * differences of pages_scanned and pages_skipped */
	{ "cow_ksm", 0, COL_NOT_PEOPLE, { 0 } },
	{ "pages_scanned", 0, COL_NOT_PEOPLE, { 0 } },
	{ "pages_skipped_scan", 0, COL_NOT_PEOPLE, { 0 } },
	/* ksmd's CPU from the start to the scan's end, as every report gives
	 * it (ksmd_cpu_mean(), ksmd_cpu_peak()): pages at --page-cost, KSM
	 * pages at --revisit-cost; ksmd_cpu_percent is the scan's own, from
	 * this machine's checksum and memcmp speeds */
	{ "ksmd_cpu_percent_mean", 0, COL_NOT_PEOPLE, { 0 } },
	{ "ksmd_cpu_percent_peak", 0, COL_NOT_PEOPLE, { 0 } },
	/* zero-filled subpages of huge pages KSM split, which the split
	 * mapped to the shared zero page: freed, in no KSM counter (in the
	 * saving people read) */
	{ "thp_zero_freed_pages", 0, COL_NOT_PEOPLE, { 0 } },
};

#define NCOLS (sizeof(timeline_cols) / sizeof(timeline_cols[0]))

struct timeline;

/* Rows a person is shown at most (see people_pick()). */
#define PEOPLE_ROWS 16
/* The curve: columns, and rows of eight levels each. */
#define CURVE_W 60
#define CURVE_H 4

struct timeline {
	struct report_sink r;		/* first: its sink and its setup */
	char *name;
	struct timeline_row *rows;
	size_t nrows;
	double to_90;
	struct replay_params params;	/* its pointers (late) are not kept */
	double wake_period;		/* seconds between ksmd's wake-ups at its
					 * settings, from the replay's pace */
	size_t nsnaps;
};

static void timeline_series(struct sink *sk, const struct series_result *r)
{
	struct timeline *t = (struct timeline *)sk;

	t->name = xstrdup(r->name);
	t->rows = xcalloc(r->nrows, sizeof(*t->rows));
	memcpy(t->rows, r->rows, r->nrows * sizeof(*t->rows));
	t->nrows = r->nrows;
	t->to_90 = r->seconds_to_90;
	t->params = *r->params;
	/* the pace's sample of lateness is the series' own, gone once the
	 * hook returns: the period is worked out now */
	t->wake_period = replay_wake_period(r->params,
		(double)r->params->ksm.pages_to_scan * r->params->page_seconds);
	t->params.late = NULL;
	t->nsnaps = r->nsnaps;
}

/*
 * Snapshots closer together than one full scan of ksmd: the replay's ksmd
 * reads each page from the snapshot of its time, so some snapshots are never
 * scanned whole, and there are fewer scans than snapshots; say so, or a
 * person counts the rows and wonders where the snapshots went.
 */
static void denser_than_scans(const struct timeline *t, const struct writer *w)
{
	const struct timeline_row *last = &t->rows[t->nrows - 1];
	double scan = last->scan ? last->seconds / (double)last->scan : 0;
	char text[400];

	if (t->nsnaps < 2 || !(t->params.interval < scan))
		return;
	snprintf(text, sizeof(text), "The %zu snapshots came every %g s, more often "
		 "than ksmd's full scan (%.1f s at %llu pages every %llu ms): "
		 "ksmd reads each page from the snapshot of its time, so some "
		 "snapshots were never scanned whole.", t->nsnaps,
		 t->params.interval, scan,
		 (unsigned long long)t->params.ksm.pages_to_scan,
		 (unsigned long long)t->params.ksm.sleep_ms);
	w->note(w, text);
}

/* The column after ksmd_cpu_percent, where a tuner's own columns go (the
 * pages_to_scan it set). */
#define TUNER_AT 12

/* The columns: the tuner's after ksmd_cpu_percent. */
static size_t columns(const struct timeline *t, struct column *cols)
{
	const struct policy_ops *ops = t->params.policy;
	size_t n = 0;

	for (size_t i = 0; i < NCOLS; i++) {
		for (size_t k = 0; i == TUNER_AT && k < ops->ncolumns; k++)
			cols[n++] = (struct column){ ops->columns[k].name, 0,
						     COL_NOT_PEOPLE, { 0 } };
		cols[n++] = timeline_cols[i];
	}
	return n;
}

static void timeline_row(const struct timeline *t, const struct writer *w,
			 const struct timeline_row *r, const struct ksmd_cpu *c)
{
	const struct policy_ops *ops = t->params.policy;
	struct cell row[NCOLS + TUNER_COLUMNS_MAX] = {
		cell_str(t->name), cell_uint(r->scan), cell_real(r->seconds, 3),
		cell_uint(r->pages_shared), cell_uint(r->pages_sharing),
		cell_uint(r->pages_unshared), cell_uint(r->pages_volatile),
		cell_uint(r->pages_skipped), cell_uint(r->ksm_zero_pages),
		cell_uint(r->pages_sharing + r->ksm_zero_pages + r->thp_zero_freed),
		cell_int(r->general_profit), cell_real(r->cpu_percent, 3),
		cell_uint(r->cow_ksm), cell_uint(r->visited),
		cell_uint(r->skipped_scan), cell_real(ksmd_cpu_mean(c), 4),
		cell_real(ksmd_cpu_peak(c), 4), cell_uint(r->thp_zero_freed),
	};

	memmove(row + TUNER_AT + ops->ncolumns, row + TUNER_AT,
		(NCOLS - TUNER_AT) * sizeof(*row));
	for (size_t k = 0; k < ops->ncolumns; k++) {
		uint64_t v;

		memcpy(&v, (const char *)r + ops->columns[k].offset, sizeof(v));
		row[TUNER_AT + k] = cell_uint(v);
	}
	w->row(w, row);
}

/* Whether the saving changed in scan @i (from the one before). */
static int saving_changed(const struct timeline *t, size_t i)
{
	return i == 0 || t->rows[i].pages_sharing != t->rows[i - 1].pages_sharing ||
	       t->rows[i].ksm_zero_pages != t->rows[i - 1].ksm_zero_pages;
}

/*
 * The scans a person sees, at most PEOPLE_ROWS: the first, the last, those
 * in which the saving changed (evenly thinned if there are too many), then
 * evenly spaced others up to the limit. Returns how many are picked.
 */
static size_t people_pick(const struct timeline *t, unsigned char *pick)
{
	size_t n = t->nrows, changes = 0, picked = 0;

	for (size_t i = 0; i < n; i++)
		changes += saving_changed(t, i);
	for (size_t i = 0, k = 0; i < n; i++) {
		pick[i] = i == n - 1;
		if (saving_changed(t, i))
			pick[i] |= k++ % ((changes + PEOPLE_ROWS - 3) / (PEOPLE_ROWS - 2)) == 0;
		picked += pick[i];
	}
	for (size_t step = n / PEOPLE_ROWS + 1, i = 0; i < n && picked < PEOPLE_ROWS;
	     i += step)
		if (!pick[i]) {
			pick[i] = 1;
			picked++;
		}
	return picked;
}

/* pages_sharing at time @t: that of the last scan ended by then. */
static uint64_t sharing_at(const struct timeline *t, double when)
{
	uint64_t v = 0;

	for (size_t i = 0; i < t->nrows && t->rows[i].seconds <= when; i++)
		v = t->rows[i].pages_sharing;
	return v;
}

/* The curve of pages_sharing over time, in eighth blocks, as notes. */
static void curve(const struct timeline *t, const struct writer *w)
{
	static const char *const level[9] = {
		" ", "\u2581", "\u2582", "\u2583", "\u2584", "\u2585", "\u2586",
		"\u2587", "\u2588",
	};
	double end = t->rows[t->nrows - 1].seconds;
	uint64_t top = 1, v[CURVE_W];
	char line[CURVE_W * 3 + 64], most[24];

	for (size_t c = 0; c < CURVE_W; c++) {
		v[c] = sharing_at(t, end * (double)(c + 1) / CURVE_W);
		top = v[c] > top ? v[c] : top;
	}
	snprintf(most, sizeof(most), "%llu", (unsigned long long)top);
	w->note(w, "pages_sharing over time:");
	for (int row = CURVE_H - 1; row >= 0; row--) {
		int n = snprintf(line, sizeof(line), "%12s |",
				 row == CURVE_H - 1 ? most :
				 row == 0 ? "0" : "");

		for (size_t c = 0; c < CURVE_W; c++) {
			/* eighths of this row the value fills, 0 to 8 */
			uint64_t e = v[c] * CURVE_H * 8 / top;
			uint64_t fill = e <= (uint64_t)row * 8 ? 0 :
					e - (uint64_t)row * 8 > 8 ? 8 :
					e - (uint64_t)row * 8;

			n += snprintf(line + n, sizeof(line) - (size_t)n, "%s",
				      level[fill]);
		}
		w->note(w, line);
	}
	snprintf(line, sizeof(line), "%12s  0 s%*s%.0f s", "", CURVE_W - 8, "", end);
	w->note(w, line);
}

/* What a person reads under the table: the curve, and when the saving came. */
static void timeline_sentences(const struct timeline *t, const struct writer *w)
{
	const struct timeline_row *last = &t->rows[t->nrows - 1];
	char text[400];

	curve(t, w);
	char when[64] = "";

	if (last->pages_sharing)
		snprintf(when, sizeof(when), "; 90%% of that came in %.0f s",
			 t->to_90);
	char how[160];

	if (!t->params.policy->who)
		snprintf(how, sizeof(how), "at %llu pages every %llu ms, waking every "
			 "%.1f ms at HZ=%u%s",
			 (unsigned long long)t->params.ksm.pages_to_scan,
			 (unsigned long long)t->params.ksm.sleep_ms,
			 1000.0 * t->wake_period,
			 t->params.hz, t->params.nlate ? " and this host's load" : "");
	else
		snprintf(how, sizeof(how), "its pages_to_scan set by %s, %llu at the "
			 "end", t->params.policy->who,
			 (unsigned long long)last->pages_to_scan);
	snprintf(text, sizeof(text), "%s: after %llu full scans (%.0f s of ksmd %s), "
		 "pages_sharing is %llu%s.", t->name, (unsigned long long)last->scan,
		 last->seconds, how, (unsigned long long)last->pages_sharing, when);
	w->note(w, text);
	if (last->ended) {
		snprintf(text, sizeof(text), "%s stopped KSM and did not start it "
			 "again: the last row is when the replay ended, its scan "
			 "not complete.", t->params.policy->who_stops);
		w->note(w, text);
	}
}

static void timeline_print(struct sink *sk)
{
	struct timeline *t = (struct timeline *)sk;
	const struct writer *w = t->r.rs->out;
	int people = for_people(t->r.rs);
	unsigned char *pick = xcalloc(t->nrows + 1, 1);
	size_t picked = people ? people_pick(t, pick) : t->nrows;

	struct column cols[NCOLS + TUNER_COLUMNS_MAX];
	struct ksmd_cpu cpu = { .wake_seconds = t->params.wake_seconds };

	w->begin(w, "timeline", cols, columns(t, cols), 0);
	for (size_t i = 0; i < t->nrows; i++) {
		ksmd_cpu_add(&cpu, &t->rows[i]);
		if (!people || pick[i])
			timeline_row(t, w, &t->rows[i], &cpu);
	}
	if (people && t->nrows) {
		if (picked < t->nrows)
			w->note(w, "(some of the scans: -l or --csv shows every one)");
		w->note(w, "cpu%: ksmd's checksums and tree comparisons at this "
			"machine's speed, a lower bound: ksmd also walks page "
			"tables and remaps pages (ksmscan(1), OVER TIME).");
		timeline_sentences(t, w);
		denser_than_scans(t, w);
		hz_note(t->r.rs);
	}
	w->end(w);
	free(pick);
}

static void timeline_free(struct sink *sk)
{
	struct timeline *t = (struct timeline *)sk;

	free(t->name);
	free(t->rows);
	free(t);
}

static const struct sink_ops timeline_ops = {
	.series = timeline_series, .print = timeline_print, .free = timeline_free,
};

struct sink *timeline_create(const struct report_setup *rs)
{
	return report_sink_new(sizeof(struct timeline), &timeline_ops, rs);
}
