/* SPDX-License-Identifier: MIT */
/* The summary report: the KSM figures per input and algorithm. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/util.h"
#include "report.h"


static const struct column summary_cols[] = {
	{ "input", 0, 0 }, { "format", 0, 0 }, { "algo", 0, 0 }, { "pages", 0, 0 },
	{ "zero_pages", 0, 0 }, { "distinct_pages", 0, 0 }, { "duplicate_ratio", 0, 0 },
	{ "pages_shared", 0, 0 }, { "pages_sharing", 0, 0 }, { "ksm_zero_pages", 0, 0 },
	{ "saved_bytes", 0, 0 }, { "saved_percent", 0, 0 }, { "general_profit", 0, 0 },
	{ "collisions", 0, 0 }, { "expected_collisions", 0, 0 }, { "hash_mib_s", 0, 0 },
	{ "ns_per_page", 0, 0 },
};

#define NCOLS (sizeof(summary_cols) / sizeof(summary_cols[0]))

/* After them, when any input is a live process: the kernel's figures. */
static const struct column proc_cols[] = {
	{ "mergeable_pages", 0, 0 }, { "thp_pages", 0, 0 },
	{ "ksm_merging_pages", 0, 0 }, { "ksm_rmap_items", 0, 0 },
	{ "command", 0, 0 },
};

#define NPROC (sizeof(proc_cols) / sizeof(proc_cols[0]))

/* Whether any input is a live process (then proc_cols are printed). */
static int any_pid(const struct scan_config *cfg)
{
	for (size_t k = 0; k < cfg->ninputs; k++)
		if (!cfg->inputs[k].path)
			return 1;
	return 0;
}

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
			const struct algo *algo, size_t a, int procs)
{
	const struct figures *f = &in->f;
	double secs = f->seconds[a];
	/* Speed of the pages really hashed: zero pages' digests are known. */
	double mib = (double)f->hashed_pages * PAGE_BYTES / (1024.0 * 1024.0);
	struct cell row[NCOLS + NPROC] = {
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
	};

	if (procs)
		proc_cells(&in->proc, row + NCOLS);
	w->row(row);
}

/* Bytes as MiB for sentences. */
static double mib(uint64_t bytes)
{
	return (double)bytes / 1048576.0;
}

/* Sentences for people: what KSM would save on this input, and with -z/-m. */
static void summary_note(const struct writer *w, const struct scope_copy *in,
			 const struct ksm_params *p)
{
	const struct figures *f = &in->f;
	char text[512];

	snprintf(text, sizeof(text),
		 "%s: %llu pages (%.1f MiB) scanned; KSM would save %.1f MiB "
		 "(%.2f%%), %.1f MiB net of its rmap_items (max_page_sharing %llu, "
		 "use_zero_pages %d).",
		 in->name, (unsigned long long)f->pages,
		 mib(f->pages * PAGE_BYTES), mib(f->saved_bytes), f->saved_percent,
		 (double)f->general_profit / 1048576.0,
		 (unsigned long long)p->max_page_sharing, p->use_zero_pages);
	w->note(text);
	snprintf(text, sizeof(text),
		 "%*s  %s would save %.1f MiB; with no max_page_sharing limit "
		 "%.1f MiB.", (int)strlen(in->name), "",
		 p->use_zero_pages ? "without -z" : "with -z (use_zero_pages)",
		 mib(f->saved_bytes_other_z), mib(f->saved_bytes_unlimited));
	w->note(text);
}

/*
 * How much of the saving of all inputs together exists only across inputs:
 * what one KSM host running them all gains over each one alone.
 */
static void summary_cross(const struct writer *w, const struct scope_copy *in,
			  size_t ninputs)
{
	const struct scope_copy *all = &in[ninputs];
	uint64_t alone = 0, together = all->f.saved_bytes;
	char text[512];

	for (size_t i = 0; i < ninputs; i++)
		alone += in[i].f.saved_bytes;
	snprintf(text, sizeof(text),
		 "Across inputs: on one host KSM would save %.1f MiB; each input "
		 "alone saves %.1f MiB in all, so %.1f MiB (%.1f%% of the saving) "
		 "exists only across inputs.", mib(together), mib(alone),
		 mib(together > alone ? together - alone : 0),
		 together ? 100.0 * (double)(together - alone) / (double)together : 0.0);
	w->note(text);
}

/*
 * For live processes: what the kernel's KSM has merged of them now, beside
 * the estimate for the same memory (every page of a merged group counts in
 * ksm_merging_pages: pages_shared + pages_sharing).
 */
static void summary_host(const struct writer *w, const struct scope_sink *s,
			 size_t ninputs)
{
	const struct scope_copy *host = &s->rows[ninputs > 1 ? ninputs : 0];
	uint64_t merging = 0, mergeable = 0;
	char text[512];

	for (size_t i = 0; i < ninputs; i++) {
		merging += s->rows[i].proc.ksm_merging_pages;
		mergeable += s->rows[i].proc.mergeable_pages;
	}
	snprintf(text, sizeof(text),
		 "Host: KSM has merged %llu pages of these processes now "
		 "(ksm_merging_pages; %llu of their pages are in mergeable "
		 "areas); the estimate for this memory is %llu pages "
		 "(pages_shared + pages_sharing, were all of it mergeable).",
		 (unsigned long long)merging, (unsigned long long)mergeable,
		 (unsigned long long)(host->f.pages_shared + host->f.pages_sharing));
	w->note(text);
}

static void summary_print(struct sink *sk)
{
	struct scope_sink *s = (struct scope_sink *)sk;
	const struct writer *w = s->rs->out;
	const struct scan_config *cfg = s->rs->scan;
	int procs = any_pid(cfg);
	struct column cols[NCOLS + NPROC];

	memcpy(cols, summary_cols, sizeof(summary_cols));
	memcpy(cols + NCOLS, proc_cols, sizeof(proc_cols));
	w->begin("summary", cols, NCOLS + (procs ? NPROC : 0), 0);
	for (size_t i = 0; i < s->nrows; i++)
		for (size_t a = 0; a < cfg->nalgos; a++)
			summary_row(w, &s->rows[i], cfg->algos[a], a, procs);
	for (size_t i = 0; i < s->nrows; i++)
		summary_note(w, &s->rows[i], &cfg->ksm);
	/* The rows: the inputs, "*" if several, then the groups. */
	if (cfg->ninputs > 1 && s->nrows > cfg->ninputs)
		summary_cross(w, s->rows, cfg->ninputs);
	if (procs && s->nrows >= cfg->ninputs)
		summary_host(w, s, cfg->ninputs);
	w->end();
}

static const struct sink_ops summary_ops = {
	.needs = SINK_GROUPS,
	.scope = scope_sink_scope, .print = summary_print, .free = scope_sink_free,
};

struct sink *summary_create(const struct report_setup *rs)
{
	return scope_sink_new(rs, &summary_ops);
}
