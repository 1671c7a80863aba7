/* SPDX-License-Identifier: MIT */
/*
 * What people read with the summary's table: the status with its reason,
 * the checksums' own figures apart when there are several, and sentences
 * that say what the saving is made of and that it is an upper bound.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../host/ksm.h"
#include "../../host/units.h"
#include "../../scan/series.h"
#include "../../util/shell.h"
#include "../../util/text.h"
#include "../../util/util.h"
#include "../write/cell.h"
#include "../write/writer.h"
#include "summary.h"


static const struct column algo_cols[] = {
	COL("input"), COL("algo"), COL("collisions"),
	COL("expected"), COL("MiB/s"), COL("ns/page"),
};

/* More inputs than this: sentences for "*" and the groups only, so that a
 * whole host reads as one paragraph under its table. */
#define SENTENCES_MAX 3

#define NALGO (sizeof(algo_cols) / sizeof(algo_cols[0]))

/* @name in at most NAME_COLS columns. */
static const char *shorten(const char *name, char *buf, size_t len)
{
	return text_shorten(name, NAME_COLS, buf, len);
}

/* "1 page", "2 pages". */
static const char *plural(uint64_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

/* A signed size in units, never "-0". */
static char *signed_bytes(int64_t v, char *buf, size_t len)
{
	char h[24];

	human_bytes(v < 0 ? (uint64_t)-v : (uint64_t)v, h, sizeof(h));
	snprintf(buf, len, "%s%s", v < 0 && strcmp(h, "0") ? "-" : "", h);
	return buf;
}

/* The speed of algorithm @a over the pages it hashed, MiB/s. */
static double speed(const struct figures *f, size_t a)
{
	return f->seconds[a] > 0 ? (double)f->hashed_pages * PAGE_BYTES /
				   1048576.0 / f->seconds[a] : 0.0;
}

/* What the saving of one scope is made of, and what it costs. */
static void headline(const struct writer *w, const struct scope_copy *in)
{
	const struct figures *f = &in->f;
	char t[640], a[32], b[32], c[32], d[32], e[32], m[32], name[128];
	uint64_t dup = f->saved_bytes - f->saved_zero_bytes;

	snprintf(t, sizeof(t), "%s: up to %s of %s saved (%.1f%%): %s by %llu zero "
		 "%s, %s by duplicates of other contents; %s net of KSM's %s of "
		 "metadata.", shorten(in->name, name, sizeof(name)),
		 human_bytes(f->saved_bytes, a, sizeof(a)),
		 human_bytes(f->pages * PAGE_BYTES, b, sizeof(b)), f->saved_percent,
		 human_bytes(f->saved_zero_bytes, c, sizeof(c)),
		 (unsigned long long)f->zero_pages, plural(f->zero_pages, "page", "pages"),
		 human_bytes(dup, d, sizeof(d)),
		 signed_bytes(f->general_profit, e, sizeof(e)),
		 human_bytes((uint64_t)((int64_t)f->saved_bytes - f->general_profit),
			     m, sizeof(m)));
	w->note(w, t);
	if (f->freed_bytes == f->saved_bytes)
		return;
	/* Processes that forked: mappings saved are more than frames freed. */
	snprintf(t, sizeof(t), "%s: that frees %s of physical memory: the rest "
		 "are mappings of frames its processes share since fork "
		 "(general_profit counts mappings).",
		 shorten(in->name, name, sizeof(name)),
		 human_bytes(f->freed_bytes, a, sizeof(a)));
	w->note(w, t);
}

/* Other KSM settings, when they would change the saving. */
static void other_settings(const struct writer *w, const struct scope_copy *in,
			   const struct ksm_params *p)
{
	const struct figures *f = &in->f;
	char t[400], a[32], b[32], name[128];

	if (f->saved_bytes_other_z == f->saved_bytes &&
	    f->saved_bytes_unlimited == f->saved_bytes)
		return;
	snprintf(t, sizeof(t), "%s: %s: %s; with no max_page_sharing limit (now "
		 "%llu): %s.", shorten(in->name, name, sizeof(name)),
		 p->use_zero_pages ? "without -z" : "with -z (use_zero_pages)",
		 human_bytes(f->saved_bytes_other_z, a, sizeof(a)),
		 (unsigned long long)p->max_page_sharing,
		 human_bytes(f->saved_bytes_unlimited, b, sizeof(b)));
	w->note(w, t);
}

/* One checksum: its collisions against chance, and its speed here. */
static void checksum_line(const struct writer *w, const struct scope_copy *in,
			  const struct algo *algo)
{
	char t[300], name[128];

	snprintf(t, sizeof(t), "%s: %s: %llu %s among %llu distinct %s (%.3g "
		 "expected by chance); hashed at %.0f MiB/s here.",
		 shorten(in->name, name, sizeof(name)),
		 algo->name, (unsigned long long)in->f.collisions[0],
		 plural(in->f.collisions[0], "collision", "collisions"),
		 (unsigned long long)in->f.distinct_pages,
		 plural(in->f.distinct_pages, "page", "pages"),
		 in->f.expected_collisions[0], speed(&in->f, 0));
	w->note(w, t);
}

/*
 * How much of the saving of all inputs together exists only across inputs:
 * what one KSM host running them all gains over each one alone. The @n
 * inputs' rows come first, then "*".
 */
static void across(const struct writer *w, const struct scope_copy *rows,
		   size_t n)
{
	uint64_t alone = 0, together = rows[n].f.saved_bytes;
	char t[400], a[32], b[32], c[32];

	for (size_t i = 0; i < n; i++)
		alone += rows[i].f.saved_bytes;
	snprintf(t, sizeof(t), "Across inputs: on one host KSM would save up to "
		 "%s; each input alone %s in all, so %s (%.1f%% of the saving) "
		 "exists only across inputs.", human_bytes(together, a, sizeof(a)),
		 human_bytes(alone, b, sizeof(b)),
		 human_bytes(together > alone ? together - alone : 0, c, sizeof(c)),
		 together ? 100.0 * (double)(together - alone) / (double)together : 0.0);
	w->note(w, t);
}

/*
 * For live processes: what the kernel's KSM has merged of them now, beside
 * the estimate for the same memory (every page of a merged group counts in
 * ksm_merging_pages: pages_shared + pages_sharing).
 */
static void host(const struct writer *w, const struct scope_copy *rows,
		 size_t ninputs, const struct scope_copy *all)
{
	uint64_t merging = 0, mergeable = 0;
	char t[512];

	for (size_t i = 0; i < ninputs; i++) {
		merging += rows[i].proc.ksm_merging_pages;
		mergeable += rows[i].proc.mergeable_pages;
	}
	snprintf(t, sizeof(t), "Host: KSM has merged %llu %s of these processes "
		 "now (ksm_merging_pages; %llu of their pages are in mergeable "
		 "areas); the estimate for this memory is %llu pages "
		 "(pages_shared + pages_sharing, were all of it mergeable).",
		 (unsigned long long)merging, plural(merging, "page", "pages"),
		 (unsigned long long)mergeable,
		 (unsigned long long)(all->f.pages_shared + all->f.pages_sharing));
	w->note(w, t);
}

/* How to turn KSM on for one --enable name (report_sink.c's
 * enable_marking()): its command to paste, then what else does it. */
static void enable_how(const struct writer *w, const char *part)
{
	char t[640];
	char *cmd = enable_marking(part, t, sizeof(t));

	if (cmd) {
		char *note = xmalloc(strlen(NOTE_SHELL) + strlen(cmd) + 1);

		strcpy(note, NOTE_SHELL);
		strcat(note, cmd);
		w->note(w, note);
		free(note);
		free(cmd);
	}
	w->note(w, t);
}

/* --enable's group in the run's groups (its names kept apart), or NULL. */
static const struct group *enable_group_of(const struct scan_config *cfg,
					   const char *name)
{
	for (size_t g = 0; g < cfg->ngroups; g++)
		if (cfg->groups[g].parts && strcmp(cfg->groups[g].name, name) == 0)
			return &cfg->groups[g];
	return NULL;
}

/*
 * Each group's sharing with the other inputs: what its processes save only
 * on one host with the rest, beside what they save on their own.
 */
static void group_sharing(const struct writer *w, const struct scope_copy *rows,
			  size_t n)
{
	char t[400], a[32], b[32], name[128];

	for (size_t i = 0; i < n; i++) {
		if (!rows[i].group || strncmp(rows[i].name, "enable:", 7) == 0)
			continue;
		snprintf(t, sizeof(t), "%s: saves %s on its own and %s more together "
			 "with the other inputs (what it shares with them).",
			 shorten(rows[i].name, name, sizeof(name)),
			 human_bytes(rows[i].f.saved_bytes, a, sizeof(a)),
			 human_bytes(rows[i].shared_bytes, b, sizeof(b)));
		w->note(w, t);
	}
}

/*
 * --enable's row: its saving against every process mergeable ("*") and
 * against what the kernel merges now, and how to apply it.
 */
static void enable_notes(const struct writer *w, const struct scan_config *cfg,
			 const struct scope_copy *rows, size_t n, size_t ninputs)
{
	const struct scope_copy *all = &rows[ninputs > 1 ? ninputs : 0];
	uint64_t merging = 0;
	char t[640], a[32], b[32], c[32];

	for (size_t i = 0; i < ninputs; i++)
		merging += rows[i].proc.ksm_merging_pages;
	for (size_t i = 0; i < n; i++) {
		const char *name = rows[i].name;
		const struct group *g;

		if (!rows[i].group || strncmp(name, "enable:", 7) != 0)
			continue;
		snprintf(t, sizeof(t), "%s: up to %s saved, %.1f%% of the %s with "
			 "every process mergeable; the kernel merges %s of these "
			 "processes now (ksm_merging_pages). Needs Linux >= 6.4 "
			 "(PR_SET_MEMORY_MERGE), KSM running (echo 1 > "
			 KSM_SYSFS_DIR "/run), and:", name,
			 human_bytes(rows[i].f.saved_bytes, a, sizeof(a)),
			 all->f.saved_bytes ? 100.0 * (double)rows[i].f.saved_bytes /
			 (double)all->f.saved_bytes : 0.0,
			 human_bytes(all->f.saved_bytes, b, sizeof(b)),
			 human_bytes(merging * PAGE_BYTES, c, sizeof(c)));
		w->note(w, t);
		if ((g = enable_group_of(cfg, name)))
			for (size_t k = 0; k < g->nparts; k++)
				enable_how(w, g->parts[k]);
	}
}

/* A series' row: what its figures are, and when the saving came. */
static void over_time(const struct writer *w, const struct scope_copy *in,
		      const struct ksm_params *k, double interval)
{
	char t[512];

	char when[96] = "; nothing was shared by then", series[64];

	if (in->f.pages_sharing)
		snprintf(when, sizeof(when), "; 90%% of its pages_sharing had come "
			 "after %.0f s", in->seconds_to_90);
	if (in->nsnaps > 1)
		snprintf(series, sizeof(series), "a series of %zu snapshots %gs "
			 "apart", in->nsnaps, interval);
	else
		snprintf(series, sizeof(series), "one snapshot");
	snprintf(t, sizeof(t), "%s: %s, replayed through ksmd (%llu pages every "
		 "%llu ms, smart_scan %d): the figures are those after its full "
		 "scan %zu, at %.0f s%s; ksmd took %.2f%% of a CPU on average, "
		 "%.2f%% at its busiest.", in->name, series,
		 (unsigned long long)k->pages_to_scan,
		 (unsigned long long)k->sleep_ms, k->smart_scan, in->scans,
		 in->seconds, when, in->cpu_mean, in->cpu_peak);
	w->note(w, t);
}

/*
 * A series: the huge pages the replay took the memory to be in. A dump
 * cannot show its host's (--thp says), a live process's are read; and the
 * zero-filled subpages KSM's splits freed, which no KSM counter shows.
 */
static void thp_note(const struct report_setup *rs, const struct scope_copy *in)
{
	const struct scan_config *cfg = rs->scan;
	uint64_t freed = in->f.thp_zero_freed_pages;
	char t[400], a[32], name[128];

	if (cfg->ninputs && cfg->inputs[0].path)
		rs->out->note(rs->out, cfg->thp_always ?
			"Huge pages: this memory was taken to sit in 2 MiB "
			"transparent huge pages on its host (--thp=always)." :
			"Huge pages: none were taken (--thp=never); give "
			"--thp=always for a QEMU guest whose host has transparent "
			"huge pages on (enabled=madvise or always).");
	if (!freed)
		return;
	snprintf(t, sizeof(t), "%s: KSM's merges split huge pages, and the splits "
		 "map %llu zero-filled %s (%s) to the kernel's zero page: freed "
		 "too, in no KSM counter.", shorten(in->name, name, sizeof(name)),
		 (unsigned long long)freed, plural(freed, "subpage", "subpages"),
		 human_bytes(freed * PAGE_BYTES, a, sizeof(a)));
	rs->out->note(rs->out, t);
}

const char *scope_status_label(enum scope_status st, const struct figures *f)
{
	if (st == SCOPE_OK)
		return f->estimate ? "estimate" : "ok";
	return st == SCOPE_PARTIAL ? "partial" : "failed";
}

/* One input's line of the table; a failed input says why instead. With
 * @procs, the command column follows the input's name. */
const char *status_why(const struct scope_copy *in, char *buf, size_t len)
{
	const char *why = in->status == SCOPE_FAILED ? in->why : NULL;
	size_t n = strlen(in->name);

	/* The message names the input, which the row does already. */
	if (why && strncmp(why, in->name, n) == 0 && strncmp(why + n, ": ", 2) == 0)
		why += n + 2;
	snprintf(buf, len, "%s%s%s", scope_status_label(in->status, &in->f),
		 why ? ": " : "", why ? why : "");
	return buf;
}

/* The checksums apart: one line per input and algorithm. */
void summary_checksums(const struct report_setup *rs,
		       const struct scope_copy *rows, size_t n)
{
	const struct writer *w = rs->out;
	const struct scan_config *cfg = rs->scan;

	w->begin(w, "checksums", algo_cols, NALGO, 0);
	for (size_t i = 0; i < n; i++)
		for (size_t a = 0; a < cfg->nalgos; a++) {
			const struct figures *f = &rows[i].f;
			char name[128];
			struct cell row[NALGO] = {
				cell_str(shorten(rows[i].name, name, sizeof(name))),
				cell_str(cfg->algos[a]->name), cell_uint(f->collisions[a]),
				cell_real(f->expected_collisions[a], -1),
				cell_real(speed(f, a), 0),
				cell_real(f->hashed_pages ? f->seconds[a] * 1e9 /
					  (double)f->hashed_pages : 0.0, 0),
			};

			w->row(w, row);
		}
	w->end(w);
}

void summary_sentences(const struct report_setup *rs,
		       const struct scope_copy *rows, size_t n)
{
	const struct writer *w = rs->out;
	const struct scan_config *cfg = rs->scan;
	size_t nin = 0;		/* the inputs' rows (a process that exited
				 * before its turn has none), then "*" */

	while (nin < n && !rows[nin].all)
		nin++;
	for (size_t i = 0; i < n; i++) {
		if (rows[i].status == SCOPE_FAILED)
			continue;
		if (cfg->ninputs > SENTENCES_MAX && !rows[i].all && !rows[i].group)
			continue;
		headline(w, &rows[i]);
		other_settings(w, &rows[i], &cfg->ksm);
		if (cfg->nalgos == 1)
			checksum_line(w, &rows[i], cfg->algos[KSM_CHECKSUM]);
	}
	/* The rows: the inputs, "*" if there are several, then the groups;
	 * or a series' one row. */
	if (n && rows[0].nsnaps) {
		over_time(w, &rows[0], &cfg->ksm, rs->series->interval);
		hz_note(rs);
		thp_note(rs, &rows[0]);
	} else if (nin < n && rows[nin].all && !rows[nin].group)
		across(w, rows, nin);
	if (any_process(cfg) && !(n && rows[0].nsnaps) && nin)
		host(w, rows, nin, nin < n && rows[nin].all ? &rows[nin] : &rows[0]);
	if (nin < n)
		group_sharing(w, rows, n);
	if (any_process(cfg) && !(n && rows[0].nsnaps))
		enable_notes(w, cfg, rows, n, nin);
	w->note(w, "KSM merges only memory that is marked MADV_MERGEABLE, or all of "
		"a process after prctl(PR_SET_MEMORY_MERGE): these savings are "
		"upper bounds. -l shows every figure.");
}
