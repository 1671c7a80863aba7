/* SPDX-License-Identifier: MIT */
/*
 * The summary report: the KSM figures per input and algorithm, as machines
 * read them (CSV, JSON, a table with -l); people get summary_people.c's view.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../host/process.h"
#include "../../util/util.h"
#include "../report.h"


static const struct column summary_cols[] = {
	{ "input", 0, 0 }, { "format", 0, 0 }, { "algo", 0, 0 }, { "pages", 0, 0 },
	{ "zero_pages", 0, 0 }, { "distinct_pages", 0, 0 }, { "duplicate_ratio", 0, 0 },
	{ "pages_shared", 0, 0 }, { "pages_sharing", 0, 0 }, { "ksm_zero_pages", 0, 0 },
	{ "saved_bytes", 0, 0 }, { "saved_percent", 0, 0 }, { "general_profit", 0, 0 },
	{ "collisions", 0, 0 }, { "expected_collisions", 0, 0 }, { "hash_mib_s", 0, 0 },
	{ "ns_per_page", 0, 0 }, { "status", 0, 0 },
};

#define NCOLS (sizeof(summary_cols) / sizeof(summary_cols[0]))

/* After them, when any input is a live process: the kernel's figures. */
static const struct column proc_cols[] = {
	{ "mergeable_pages", 0, 0 }, { "thp_pages", 0, 0 },
	{ "ksm_merging_pages", 0, 0 }, { "ksm_rmap_items", 0, 0 },
	{ "command", 0, 0 },
};

#define NPROC (sizeof(proc_cols) / sizeof(proc_cols[0]))

/* Last, for a series (--series): when the saving came, and ksmd's CPU over
 * the replay as every report gives it (ksmd_cpu_mean(), ksmd_cpu_peak()). */
static const struct column series_cols[] = {
	{ "seconds_to_90_percent", 0, 0 }, { "ksmd_cpu_percent_mean", 0, 0 },
	{ "ksmd_cpu_percent_peak", 0, 0 },
};

#define NSERIES (sizeof(series_cols) / sizeof(series_cols[0]))

/* Last: the memory KSM would free, counted by frame. */
static const struct column freed_col = { "freed_bytes", 0, 0 };

/* The kernel's figures of a live process, or empty cells for the rest. */
static void proc_cells(const struct proc_stats *st, struct cell *out)
{
	if (!st->valid) {
		for (size_t i = 0; i < NPROC; i++)
			out[i] = cell_str("");
		return;
	}
	out[0] = cell_uint(st->mergeable_pages);
	out[1] = cell_uint(st->thp_pages);
	out[2] = cell_uint(st->ksm_merging_pages);
	out[3] = cell_uint(st->ksm_rmap_items);
	out[4] = cell_str(st->command);
}

/* The figures as one row for algorithm number @a. */
static void summary_row(const struct writer *w, const struct scope_copy *in,
			const struct algo *algo, size_t a, int procs, int series)
{
	const struct figures *f = &in->f;
	double secs = f->seconds[a];
	/* Speed of the pages really hashed: zero pages' digests are known. */
	double mib = (double)f->hashed_pages * PAGE_BYTES / (1024.0 * 1024.0);
	size_t last = NCOLS + (procs ? NPROC : 0) + (series ? NSERIES : 0);
	struct cell row[NCOLS + NPROC + NSERIES + 1] = {
		cell_str(in->name),
		cell_str(in->format),
		cell_str(algo->name),
		cell_uint(f->pages),
		cell_uint(f->zero_pages),
		cell_uint(f->distinct_pages),
		cell_real(f->duplicate_ratio, 6),
		cell_uint(f->pages_shared),
		cell_uint(f->pages_sharing),
		cell_uint(f->ksm_zero_pages),
		cell_uint(f->saved_bytes),
		cell_real(f->saved_percent, 4),
		cell_int(f->general_profit),
		cell_uint(f->collisions[a]),
		cell_real(f->expected_collisions[a], -1),
		cell_real(secs > 0 ? mib / secs : 0.0, 1),
		cell_real(f->hashed_pages ? secs * 1e9 / (double)f->hashed_pages : 0.0, 1),
		cell_str(scope_status_label(in->status, f)),
	};

	if (procs)
		proc_cells(&in->proc, row + NCOLS);
	if (series) {
		struct cell *at = row + NCOLS + (procs ? NPROC : 0);

		at[0] = cell_real(in->seconds_to_90, 3);
		at[1] = cell_real(in->cpu_mean, 4);
		at[2] = cell_real(in->cpu_peak, 4);
	}
	row[last] = cell_uint(f->freed_bytes);
	w->row(w, row);
}

static void summary_print(struct sink *sk)
{
	struct scope_sink *s = (struct scope_sink *)sk;
	const struct writer *w = s->r.rs->out;
	const struct scan_config *cfg = s->r.rs->scan;
	int procs = any_process(cfg), series = s->nrows && s->rows[0].nsnaps;
	size_t ncols = NCOLS + (procs ? NPROC : 0);
	struct column cols[NCOLS + NPROC + NSERIES + 1];

	if (for_people(s->r.rs)) {
		summary_people(s->r.rs, s->rows, s->nrows);
		return;
	}
	memcpy(cols, summary_cols, sizeof(summary_cols));
	memcpy(cols + NCOLS, proc_cols, sizeof(proc_cols));
	if (series)
		for (size_t k = 0; k < NSERIES; k++)
			cols[ncols++] = series_cols[k];
	cols[ncols++] = freed_col;
	w->begin(w, "summary", cols, ncols, 0);
	for (size_t i = 0; i < s->nrows; i++)
		for (size_t a = 0; a < cfg->nalgos; a++)
			summary_row(w, &s->rows[i], cfg->algos[a], a, procs, series);
	summary_sentences(s->r.rs, s->rows, s->nrows);
	w->end(w);
}

static const struct sink_ops summary_ops = {
	.needs = SINK_GROUPS,
	.scope = scope_sink_scope, .series = scope_sink_series,
	.print = summary_print, .free = scope_sink_free,
};

struct sink *summary_create(const struct report_setup *rs)
{
	return scope_sink_new(rs, &summary_ops);
}
