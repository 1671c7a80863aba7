/* SPDX-License-Identifier: MIT */
/*
 * The policies report (--series, --policy=a,b,...): each policy's replay of
 * the same snapshots side by side: when merging starts, how soon half and
 * nine tenths of the saving come, the saving at 1 h, 6 h and 24 h, what
 * ksmd costs, and the settings the policy ends at.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../scan/series.h"
#include "../../util/util.h"
#include "../report_sink.h"
#include "../write/cell.h"
#include "../write/writer.h"

/* People read short names, whole seconds, sizes in units of 1024. */
#define SECONDS(n) { .name = n, .decimals = DECIMALS(0), .nan = "never" }
#define SAVED(n) { .name = n, .nan = "?" }
static const struct column policies_cols[] = {
	{ "input", 0, COL_NOT_PEOPLE, { 0 } }, { "policy", 0, 0, { 0 } },
	{ "seconds_to_start", 0, 0, SECONDS("start") },
	{ "seconds_to_50_percent", 0, 0, SECONDS("50%") },
	{ "seconds_to_90_percent", 0, 0, SECONDS("90%") },
	{ "saved_bytes_1h", 0, 0, SAVED("1h") },
	{ "saved_bytes_6h", 0, 0, SAVED("6h") },
	{ "saved_bytes_24h", 0, 0, SAVED("24h") },
	{ "ksmd_cpu_percent_mean", 0, 0, { .name = "cpu%", .decimals = DECIMALS(2) } },
	{ "ksmd_cpu_percent_peak", 0, 0, { .name = "peak%", .decimals = DECIMALS(2) } },
	{ "final_pages_to_scan", 0, 0, { .name = "pages" } },
	{ "final_sleep_ms", 0, 0, { .name = "sleep" } },
};

#define NCOLS (sizeof(policies_cols) / sizeof(policies_cols[0]))

struct policy_line {
	const struct policy_ops *policy;
	struct replay_figures f;
	size_t nrows;
	double seconds;			/* the replay's length */
	int settled;
};

struct policies {
	struct report_sink r;		/* first: its sink and its setup */
	char *name;
	struct policy_line *lines;
	size_t nlines;
	double page_seconds, revisit_seconds;
};

static void policies_series(struct sink *sk, const struct series_result *r)
{
	struct policies *p = (struct policies *)sk;

	p->name = xstrdup(r->name);
	p->lines = xcalloc(r->nruns + 1, sizeof(*p->lines));
	p->page_seconds = r->params->page_seconds;
	p->revisit_seconds = r->params->revisit_seconds;
	for (size_t k = 0; k < r->nruns; k++) {
		const struct policy_run *u = &r->runs[k];

		p->lines[k] = (struct policy_line){
			u->policy, replay_figures(u->rows, u->nrows, u->settled,
						   r->params->wake_seconds),
			u->nrows, u->rows[u->nrows - 1].seconds, u->settled,
		};
	}
	p->nlines = r->nruns;
}

/* A size that may be unknown (NaN). */
static struct cell maybe_bytes(double b)
{
	return isnan(b) ? cell_real(NAN, 0) : cell_bytes((uint64_t)b);
}

static void line_row(const struct policies *p, const struct writer *w,
		     const struct policy_line *l)
{
	const struct replay_figures *f = &l->f;
	struct cell row[NCOLS] = {
		cell_str(p->name), cell_str(l->policy->name),
		cell_real(f->seconds_to_start, 3), cell_real(f->seconds_to_50, 3),
		cell_real(f->seconds_to_90, 3), maybe_bytes(f->saved_bytes[0]),
		maybe_bytes(f->saved_bytes[1]), maybe_bytes(f->saved_bytes[2]),
		cell_real(f->cpu_mean, 4), cell_real(f->cpu_peak, 4),
		cell_uint(f->pages_to_scan), cell_uint(f->sleep_ms),
	};

	w->row(w, row);
}

/* What a person reads under the table. */
static void sentences(const struct policies *p, const struct writer *w)
{
	char text[600];

	snprintf(text, sizeof(text), "%s: each policy's replay of the same "
		 "snapshots. start, 50%%, 90%%: seconds until the end of "
		 "the first full scan that saved a page, half and nine tenths "
		 "of its last saving; 1h, 6h, 24h: the saving then; cpu%%: ksmd at "
		 "%.3g us a page visited (--page-cost), %.3g us a KSM page "
		 "revisited (--revisit-cost), over the replay and its busiest "
		 "full scan; pages, sleep: pages_to_scan and sleep_millisecs at "
		 "the end.", p->name, p->page_seconds * 1e6,
		 p->revisit_seconds * 1e6);
	w->note(w, text);
	for (size_t k = 0; k < p->nlines; k++) {
		const struct policy_line *l = &p->lines[k];

		snprintf(text, sizeof(text), "%s: %zu full scans, %.0f s%s",
			 l->policy->name, l->nrows, l->seconds,
			 l->settled ? ", then settled: the saving stays" :
			 ": not settled, the saving after is unknown (?)");
		w->note(w, text);
	}
}

static void policies_print(struct sink *sk)
{
	struct policies *p = (struct policies *)sk;
	const struct writer *w = p->r.rs->out;
	int people = for_people(p->r.rs);

	w->begin(w, "policies", policies_cols, NCOLS, 0);
	for (size_t k = 0; k < p->nlines; k++)
		line_row(p, w, &p->lines[k]);
	if (people && p->nlines)
		sentences(p, w);
	hz_note(p->r.rs);
	w->end(w);
}

static void policies_free(struct sink *sk)
{
	struct policies *p = (struct policies *)sk;

	free(p->name);
	free(p->lines);
	free(p);
}

static const struct sink_ops policies_ops = {
	.series = policies_series, .print = policies_print,
	.free = policies_free,
};

struct sink *policies_create(const struct report_setup *rs)
{
	return report_sink_new(sizeof(struct policies), &policies_ops, rs);
}
