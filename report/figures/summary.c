/* SPDX-License-Identifier: MIT */
/*
 * The summary report: the KSM figures per input and algorithm (CSV, JSON, a
 * table with -l); people read its columns' people view, one line per input,
 * with summary_people.c's sentences and checksums under it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../host/process.h"
#include "../../util/text.h"
#include "../../util/util.h"
#include "../write/cell.h"
#include "../write/writer.h"
#include "summary.h"


/*
 * People read one line per input (the first checksum's: the checksums apart
 * in a table of their own when there are several), its name cut to fit, the
 * sizes in units of 1024, the status with its reason; a live process's
 * command after its name.
 */
#define NP COL_NOT_PEOPLE
static const struct column summary_cols[] = {
	{ "input", 0, 0, { .cut = NAME_COLS } }, COL_F("format", NP),
	COL_F("algo", NP), { "pages", 0, 0, { .name = "memory", .size = SIZE_PAGES } },
	{ "zero_pages", 0, 0, { .name = "zero", .size = SIZE_PAGES } },
	COL_F("distinct_pages", NP), COL_F("duplicate_ratio", NP),
	COL_F("pages_shared", NP), COL_F("pages_sharing", NP),
	COL_F("ksm_zero_pages", NP),
	{ "saved_bytes", 0, 0, { .name = "saved", .size = SIZE_BYTES } },
	{ "saved_percent", 0, 0, { .name = "saved%", .decimals = DECIMALS(1) } },
	COL_F("general_profit", NP), COL_F("collisions", NP),
	COL_F("expected_collisions", NP), COL_F("hash_mib_s", NP),
	COL_F("ns_per_page", NP), COL_F("status", NP),
	/* for people: the status with its reason */
	COL_F("status", COL_PEOPLE_ONLY),
};

#define NCOLS (sizeof(summary_cols) / sizeof(summary_cols[0]))

/* For people, after the input's name: a live process's command. */
static const struct column command_col = COL_F("command", COL_PEOPLE_ONLY);

/* After them, when any input is a live process: the kernel's figures. */
static const struct column proc_cols[] = {
	COL_F("mergeable_pages", NP), COL_F("thp_pages", NP),
	COL_F("ksm_merging_pages", NP), COL_F("ksm_rmap_items", NP),
	COL_F("command", NP),
};

#define NPROC (sizeof(proc_cols) / sizeof(proc_cols[0]))

/* Last, for a series (--series): when the saving came, and ksmd's CPU over
 * the replay as every report gives it (ksmd_cpu_mean(), ksmd_cpu_peak()). */
static const struct column series_cols[] = {
	COL_F("seconds_to_90_percent", NP), COL_F("ksmd_cpu_percent_mean", NP),
	COL_F("ksmd_cpu_percent_peak", NP),
};

#define NSERIES (sizeof(series_cols) / sizeof(series_cols[0]))

/* Last: the memory KSM would free, counted by frame; the live pages that
 * map the kernel's zero page (memory only read: not in pages); the frames
 * of the pages (a page processes share since fork is one frame; files:
 * the pages), what a contents export of live processes counts. */
static const struct column last_cols[] = {
	COL_F("freed_bytes", NP), COL_F("zero_page_mappings", NP),
	COL_F("frames", NP),
};

#define NLAST (sizeof(last_cols) / sizeof(last_cols[0]))

/* And for a series, after them: the zero-filled subpages of huge pages that
 * KSM's splits map to the shared zero page (freed, in no KSM counter). */
static const struct column thp_zero_col = COL_F("thp_zero_freed_pages", NP);

/* Room for a row: the columns, the command, the kernel's, a series', last,
 * the split's. */
#define ROW_MAX (NCOLS + 1 + NPROC + NSERIES + NLAST + 1)

/* Which of the optional columns a run's summary has. */
struct summary_shape {
	int procs;		/* the kernel's figures of live processes */
	int command;		/* for people: a process's command after its name */
	int series;		/* a series' timing and CPU */
};

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

/* The columns of a run's summary, in @cols: how many. */
static size_t summary_columns(const struct summary_shape *sh, struct column *cols)
{
	size_t n = 0;

	cols[n++] = summary_cols[0];
	if (sh->command)
		cols[n++] = command_col;
	for (size_t i = 1; i < NCOLS; i++)
		cols[n++] = summary_cols[i];
	for (size_t i = 0; sh->procs && i < NPROC; i++)
		cols[n++] = proc_cols[i];
	for (size_t i = 0; sh->series && i < NSERIES; i++)
		cols[n++] = series_cols[i];
	for (size_t i = 0; i < NLAST; i++)
		cols[n++] = last_cols[i];
	if (sh->series)
		cols[n++] = thp_zero_col;
	return n;
}

/* The figures as one row for algorithm number @a, in summary_columns()'s
 * order. */
static void summary_row(const struct writer *w, const struct scope_copy *in,
			const struct algo *algo, size_t a,
			const struct summary_shape *sh)
{
	const struct figures *f = &in->f;
	double secs = f->seconds[a];
	/* Speed of the pages really hashed: zero pages' digests are known. */
	double mib = (double)f->hashed_pages * PAGE_BYTES / (1024.0 * 1024.0);
	char status[300];
	struct cell row[ROW_MAX];
	size_t n = 0;

	row[n++] = cell_str(in->name);
	if (sh->command)
		row[n++] = cell_str(in->proc.command);
	row[n++] = cell_str(in->format);
	row[n++] = cell_str(algo->name);
	row[n++] = cell_uint(f->pages);
	row[n++] = cell_uint(f->zero_pages);
	row[n++] = cell_uint(f->distinct_pages);
	row[n++] = cell_real(f->duplicate_ratio, 6);
	row[n++] = cell_uint(f->pages_shared);
	row[n++] = cell_uint(f->pages_sharing);
	row[n++] = cell_uint(f->ksm_zero_pages);
	row[n++] = cell_uint(f->saved_bytes);
	row[n++] = cell_real(f->saved_percent, 4);
	row[n++] = cell_int(f->general_profit);
	row[n++] = cell_uint(f->collisions[a]);
	row[n++] = cell_real(f->expected_collisions[a], -1);
	row[n++] = cell_real(secs > 0 ? mib / secs : 0.0, 1);
	row[n++] = cell_real(f->hashed_pages ? secs * 1e9 / (double)f->hashed_pages : 0.0, 1);
	row[n++] = cell_str(scope_status_label(in->status, f));
	row[n++] = cell_str(status_why(in, status, sizeof(status)));
	if (sh->procs) {
		proc_cells(&in->proc, row + n);
		n += NPROC;
	}
	if (sh->series) {
		row[n++] = cell_real(in->seconds_to_90, 3);
		row[n++] = cell_real(in->cpu_mean, 4);
		row[n++] = cell_real(in->cpu_peak, 4);
	}
	row[n++] = cell_uint(f->freed_bytes);
	row[n++] = cell_uint(f->zero_page_mappings);
	row[n++] = cell_uint(f->frames);
	if (sh->series)
		row[n++] = cell_uint(f->thp_zero_freed_pages);
	w->row(w, row);
}

/*
 * Whether row @in is left out of a metrics output: a process found by -P or
 * --all-processes is a series of its own whose pid changes from run to run,
 * so a metrics output has the host's row and the --by rows, and the
 * processes' only with --by=process, the first listed_max of them. A
 * process named with -p keeps its row. *@left counts those left out.
 */
static int summary_left_out(const struct report_setup *rs,
			    const struct scope_copy *in, size_t *kept,
			    size_t *left)
{
	const struct scan_config *cfg = rs->scan;

	if (!(rs->out->flags & WRITER_METRICS) || in->all || in->group ||
	    in->input_no >= cfg->ninputs || !cfg->inputs[in->input_no].listed)
		return 0;
	if (*kept < rs->listed_max) {
		++*kept;
		return 0;
	}
	++*left;
	return 1;
}

/* The metrics output's own count of processes left out: a gauge that stays
 * (0 when none was), so that an alert may watch it. */
static const struct column left_out_cols[] = {
	COL_F("input", 0), COL_F("processes_left_out", 0),
};

/*
 * Name what summary_left_out() left out: the gauge
 * ksmscan_processes_left_out{input="*"} in a metrics output with listed
 * processes, and one warning (strict OpenMetrics has no comment line).
 */
static void summary_say_left_out(const struct report_setup *rs, size_t kept,
				 size_t left)
{
	const struct writer *w = rs->out;

	if (!(w->flags & WRITER_METRICS) || !(kept + left))
		return;
	w->begin(w, "summary", left_out_cols, 2, 0);
	w->row(w, (struct cell[]){ cell_str("*"), cell_uint(left) });
	w->end(w);
	if (!left)
		return;
	if (rs->listed_max)
		warn("openmetrics: %zu processes' series left out: --by=process "
		     "gives at most %zu; the host's (input=\"*\") and the --by "
		     "rows' hold them all", left, rs->listed_max);
	else
		warn("openmetrics: %zu processes' series left out (one series "
		     "per process and pid, new at every run): the host's "
		     "(input=\"*\") and the --by rows' hold them all; "
		     "--by=process gives each process's, at most %d",
		     left, LISTED_ROWS_MAX);
}

static void summary_print(struct sink *sk)
{
	struct scope_sink *s = (struct scope_sink *)sk;
	const struct report_setup *rs = s->r.rs;
	const struct writer *w = rs->out;
	const struct scan_config *cfg = rs->scan;
	int people = for_people(rs), series = s->nrows && s->rows[0].nsnaps;
	struct summary_shape sh = { any_process(cfg), 0, series };
	struct column cols[ROW_MAX];
	size_t failed = 0, kept = 0, left = 0;

	sh.command = people && sh.procs && !series;
	w->begin(w, "summary", cols, summary_columns(&sh, cols), 0);
	for (size_t i = 0; i < s->nrows; i++) {
		failed += s->rows[i].status == SCOPE_FAILED;
		if (summary_left_out(rs, &s->rows[i], &kept, &left))
			continue;
		for (size_t a = 0; a < (people ? 1 : cfg->nalgos); a++)
			summary_row(w, &s->rows[i], cfg->algos[a], a, &sh);
	}
	/* For people, when nothing was read: each row keeps its status, and
	 * sentences about KSM's figures of nothing would say nothing. */
	if (!people || !s->nrows || failed < s->nrows)
		summary_sentences(rs, s->rows, s->nrows);
	w->end(w);
	summary_say_left_out(rs, kept, left);
	if (people && cfg->nalgos > 1)
		summary_checksums(rs, s->rows, s->nrows);
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
