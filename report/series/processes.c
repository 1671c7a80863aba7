/* SPDX-License-Identifier: MIT */
/*
 * The processes report (a live series, -p PID... --count=N): what the
 * replay forecasts for each process at its last full scan, as the kernel
 * would show it in /proc/PID/ksm_stat, with what tells the process apart
 * from a later one that takes its pid (its start time). ksmscan --check
 * reads it back from the JSON and compares it with the kernel's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../host/process.h"
#include "../../model/ksm.h"
#include "../../scan/series.h"
#include "../../util/util.h"
#include "../report_sink.h"
#include "../write/cell.h"
#include "../write/writer.h"

/* People read the figures under short names, the scan in a note. */
static const struct column processes_cols[] = {
	{ "input", 0, 0, { 0 } }, { "pid", 0, COL_NOT_PEOPLE, { 0 } },
	{ "start_time", 0, COL_NOT_PEOPLE, { 0 } }, { "command", 0, 0, { 0 } },
	{ "scan", 0, COL_NOT_PEOPLE, { 0 } },
	{ "seconds", 0, COL_NOT_PEOPLE, { 0 } },
	{ "ksm_rmap_items", 0, 0, { .name = "tracked" } },
	{ "ksm_merging_pages", 0, 0, { .name = "merged" } },
	{ "ksm_zero_pages", 0, 0, { .name = "zero" } },
	{ "ksm_process_profit", 0, 0, { .name = "profit" } },
	{ "frames", 0, COL_NOT_PEOPLE, { 0 } },
	{ "fork_shared_pages", 0, COL_NOT_PEOPLE, { 0 } },
};

#define NCOLS (sizeof(processes_cols) / sizeof(processes_cols[0]))

/* One process's row, kept past the series() call. */
struct process_row {
	const struct input *in;
	double start;			/* /proc/PID/stat starttime, clock ticks */
	char command[64];
	struct replay_owner o;
	uint64_t frames;		/* distinct frames of its pages */
	uint64_t fork_shared;		/* its pages another process maps too */
	int framed;			/* frames known (live pages) */
};

struct processes {
	struct report_sink r;		/* first: its sink and its setup */
	struct process_row *rows;
	size_t nrows;
	uint64_t scan;			/* the full scan the figures are at */
	double seconds;			/* ... its end, from the first snapshot */
	int files;			/* a series of files: no process */
};

static void processes_series(struct sink *sk, const struct series_result *r)
{
	struct processes *v = (struct processes *)sk;
	const struct input *in = v->r.rs->scan->inputs;

	v->files = !r->owners;
	v->rows = xcalloc(r->nowners + 1, sizeof(*v->rows));
	v->nrows = r->nowners;
	v->scan = r->rows[r->nrows - 1].scan;
	v->seconds = r->rows[r->nrows - 1].seconds;
	for (size_t i = 0; i < r->nowners; i++) {
		struct process_row *p = &v->rows[i];

		p->in = &in[i];
		p->start = r->owner_start[i];
		snprintf(p->command, sizeof(p->command), "%s", r->owner_command[i]);
		p->o = r->owners[i];
		p->framed = r->owner_frames != NULL;
		if (p->framed) {
			p->frames = r->owner_frames[i];
			p->fork_shared = r->owner_fork_shared[i];
		}
	}
}

/* What a person reads: when the figures hold, and what the names mean. */
static void sentence(const struct processes *v, const struct writer *w)
{
	char text[300];

	snprintf(text, sizeof(text), "Each process at full scan %llu (%.1f s): "
		 "pages ksmd tracks, merged (its pages in KSM pages), mapped to "
		 "the zero page, and its profit in bytes, as /proc/PID/ksm_stat "
		 "would read.", (unsigned long long)v->scan, v->seconds);
	w->note(w, text);
}

static void processes_print(struct sink *sk)
{
	struct processes *v = (struct processes *)sk;
	const struct writer *w = v->r.rs->out;
	int people = for_people(v->r.rs);

	w->begin(w, "processes", processes_cols, NCOLS, 0);
	for (size_t i = 0; i < v->nrows; i++) {
		const struct process_row *p = &v->rows[i];
		struct cell row[NCOLS] = {
			cell_str(p->in->name), cell_uint((uint64_t)p->in->pid),
			cell_real(p->start, 0), cell_str(p->command),
			cell_uint(v->scan), cell_real(v->seconds, 3),
			cell_uint(p->o.rmap_items), cell_uint(p->o.merging),
			cell_uint(p->o.zero),
			cell_int(ksm_general_profit(p->o.merging + p->o.zero,
						    p->o.rmap_items)),
			p->framed ? cell_uint(p->frames) : cell_str(""),
			p->framed ? cell_uint(p->fork_shared) : cell_str(""),
		};

		w->row(w, row);
	}
	if (people && v->nrows)
		sentence(v, w);
	if (v->files)
		w->note(w, "(a series of files: no process to forecast)");
	w->end(w);
}

static void processes_free(struct sink *sk)
{
	struct processes *v = (struct processes *)sk;

	free(v->rows);
	free(v);
}

static const struct sink_ops processes_ops = {
	.series = processes_series, .print = processes_print,
	.free = processes_free,
};

struct sink *processes_create(const struct report_setup *rs)
{
	return report_sink_new(sizeof(struct processes), &processes_ops, rs);
}
