/* SPDX-License-Identifier: MIT */
/*
 * The advise report (--series -r advise --target=F@D [--max-cpu=P]): the
 * settings of ksmd the search found (model/search.c), fixed ones (one per
 * sleep it tried) and the scan-time advisor's (one per advisor_max_cpu it
 * tried), cheapest first: those that reach the target within the CPU
 * asked, then those that reach it at more CPU, then those that do not. The
 * sentences under the table give the best of each kind with the lines that
 * apply it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../host/ksm.h"
#include "../../host/units.h"
#include "../../scan/series.h"
#include "../../util/shell.h"
#include "../../util/util.h"
#include "../report_sink.h"
#include "../write/cell.h"
#include "../write/writer.h"

#define YES_NO(n) { .name = n, .no = "no", .yes = "yes" }
static const struct column advise_cols[] = {
	{ "input", 0, COL_NOT_PEOPLE, { 0 } },
	{ "policy", 0, COL_NOT_PEOPLE, { 0 } },
	/* for people: the policy with the advisor's knobs */
	{ "policy_settings", 0, COL_PEOPLE_ONLY, { .name = "policy" } },
	{ "pages_to_scan", 0, 0, { .name = "pages" } },
	{ "sleep_ms", 0, 0, { .name = "sleep ms" } },
	{ "seconds_to_target", 0, 0,
	  { .name = "to target s", .decimals = DECIMALS(0), .nan = "never" } },
	{ "ksmd_cpu_percent_mean", 0, 0, { .name = "cpu%", .decimals = DECIMALS(2) } },
	{ "reaches_target", 0, 0, YES_NO("reaches") },
	{ "apply", 0, COL_NOT_PEOPLE, { 0 } },
	/* beyond the contract: whether it is within --max-cpu, how much of
	 * the target saving it had by the target time, the advisor's knobs
	 * (NaN on fixed rows), the next cheaper setting the search tried,
	 * which does not reach the target (pages_to_scan on fixed rows,
	 * advisor_target_scan_time on the advisor's; NaN if none), and the
	 * replays the search ran for the row */
	{ "within_max_cpu", 0, 0, YES_NO("in cpu") },
	{ "reached_percent", 0, 0, { .name = "reached%", .decimals = DECIMALS(1) } },
	{ "advisor_target_scan_time", 0, COL_NOT_PEOPLE, { 0 } },
	{ "advisor_max_cpu", 0, COL_NOT_PEOPLE, { 0 } },
	{ "next_cheaper_tried", 0, COL_NOT_PEOPLE, { 0 } },
	{ "replays", 0, COL_NOT_PEOPLE, { 0 } },
	/* ksmd's CPU at its busiest to the target time, as the other reports
	 * give it (ksmd_cpu_peak()) */
	{ "ksmd_cpu_percent_peak", 0, COL_NOT_PEOPLE, { 0 } },
	/* the memory the advice is of, of the row's snapshot: the pages ksmd
	 * scans (files: all; live: the processes marked mergeable and those
	 * --enable names), those it does not (processes none of whose memory
	 * is marked), and what these would save more were they marked (pages,
	 * at the run's own settings) */
	{ "mergeable_pages", 0, COL_NOT_PEOPLE, { 0 } },
	{ "not_mergeable_pages", 0, COL_NOT_PEOPLE, { 0 } },
	{ "not_mergeable_saved_pages", 0, COL_NOT_PEOPLE, { 0 } },
};

#define NCOLS (sizeof(advise_cols) / sizeof(advise_cols[0]))

/* The kernel's sleep_millisecs when nothing set it. */
#define DEFAULT_SLEEP_MS 20

struct advise {
	struct report_sink r;		/* first: its sink and its setup */
	char *name;
	struct advice rows[ADVISE_ROWS_MAX];
	size_t n;
	struct advise_params target;
	uint64_t reference;
	int seen;			/* the series was replayed */
	int partial;			/* some input was not read whole */
	char input_why[300];		/* ... the first error */
	int nothing_mergeable;		/* live: no page marked mergeable */
	uint64_t mergeable, not_mergeable, not_mergeable_saved;	/* pages, as
					 * struct series_result has them */
	uint64_t not_mergeable_procs;	/* ... the processes left out */
};

/* How good a setting is, for the order: lower is better. */
static int rank(const struct advise *v, const struct advice *a)
{
	return a->reaches ? (a->cpu_mean <= v->target.max_cpu ? 0 : 1) : 2;
}

static int better(const struct advise *v, const struct advice *a,
		  const struct advice *b)
{
	if (rank(v, a) != rank(v, b))
		return rank(v, a) < rank(v, b);
	if (!a->reaches)
		return a->reached > b->reached;
	return a->cpu_mean < b->cpu_mean;
}

static void advise_series(struct sink *sk, const struct series_result *r)
{
	struct advise *v = (struct advise *)sk;

	if (!r->advice && !r->nothing_mergeable)
		return;
	v->seen = 1;
	v->mergeable = r->mergeable_pages;
	v->not_mergeable = r->not_mergeable_pages;
	v->not_mergeable_saved = r->not_mergeable_saved;
	v->not_mergeable_procs = r->not_mergeable_procs;
	v->partial = r->last && r->last->status != SCOPE_OK;
	snprintf(v->input_why, sizeof(v->input_why), "%s",
		 r->last && r->last->why ? r->last->why : "");
	v->nothing_mergeable = r->nothing_mergeable;
	v->name = xstrdup(r->name);
	v->n = r->nadvice < ADVISE_ROWS_MAX ? r->nadvice : ADVISE_ROWS_MAX;
	if (v->n)	/* no advice: r->advice may be NULL */
		memcpy(v->rows, r->advice, v->n * sizeof(v->rows[0]));
	v->target = *r->target;
	v->reference = r->reference;
	for (size_t i = 1; i < v->n; i++)	/* insertion sort */
		for (size_t j = i; j > 0 && better(v, &v->rows[j], &v->rows[j - 1]); j--) {
			struct advice t = v->rows[j];

			v->rows[j] = v->rows[j - 1];
			v->rows[j - 1] = t;
		}
}

#define KSM_SYSFS KSM_SYSFS_DIR "/"

/* One write to /sys/kernel/mm/ksm: the file and its value. */
struct setting {
	const char *name;
	char value[24];
};

/* At most this many writes apply a setting. */
#define SETTINGS_MAX 8

static void put(struct setting *out, size_t *n, const char *name,
		const char *value)
{
	out[*n].name = name;
	snprintf(out[(*n)++].value, sizeof(out->value), "%s", value);
}

static void put_uint(struct setting *out, size_t *n, const char *name,
		     uint64_t v)
{
	char text[24];

	snprintf(text, sizeof(text), "%llu", (unsigned long long)v);
	put(out, n, name, text);
}

/*
 * The writes that apply a setting, in order, run last. The advisor's page
 * bounds first when they are not the kernel's (switching the mode on
 * starts pages_to_scan at the minimum), the mode, its target and CPU, the
 * sleep if not the kernel's. Return: how many.
 */
static size_t advice_settings(const struct advice *a, struct setting *out)
{
	size_t n = 0;

	if (advice_is_advisor(a)) {
		if (a->advisor.min_pages_to_scan != ADVISOR_MIN_PAGES)
			put_uint(out, &n, "advisor_min_pages_to_scan",
				 a->advisor.min_pages_to_scan);
		if (a->advisor.max_pages_to_scan != ADVISOR_MAX_PAGES)
			put_uint(out, &n, "advisor_max_pages_to_scan",
				 a->advisor.max_pages_to_scan);
		put(out, &n, "advisor_mode", "scan-time");
		put_uint(out, &n, "advisor_target_scan_time",
			 a->advisor.target_scan_time);
		put_uint(out, &n, "advisor_max_cpu", a->advisor.max_cpu);
		if (a->sleep_ms != DEFAULT_SLEEP_MS)
			put_uint(out, &n, "sleep_millisecs", a->sleep_ms);
	} else {
		put_uint(out, &n, "pages_to_scan", a->pages_to_scan);
		put_uint(out, &n, "sleep_millisecs", a->sleep_ms);
	}
	put(out, &n, "run", "1");
	return n;
}

/* One write as a command: echo VALUE > PATH, each word quoted for sh. */
static void echo_line(const struct setting *s, char *buf, size_t len)
{
	char path[128], qv[64], qp[160];

	snprintf(path, sizeof(path), KSM_SYSFS "%s", s->name);
	shell_quote(s->value, qv, sizeof(qv));
	shell_quote(path, qp, sizeof(qp));
	snprintf(buf, len, "echo %s > %s", qv, qp);
}

/* The lines that apply a setting: its writes as commands, ';'-separated. */
static void apply_lines(const struct advice *a, char *buf, size_t len)
{
	struct setting set[SETTINGS_MAX];
	size_t n = advice_settings(a, set), at = 0;
	char line[240];

	buf[0] = '\0';
	for (size_t i = 0; i < n && at < len; i++) {
		echo_line(&set[i], line, sizeof(line));
		at += (size_t)snprintf(buf + at, len - at, "%s%s", i ? ";" : "",
				       line);
	}
}

/* The commands that apply a setting, whole, one note each (a table never
 * breaks them). */
static void apply_notes(const struct writer *w, const struct advice *a)
{
	struct setting set[SETTINGS_MAX];
	size_t n = advice_settings(a, set);
	char line[240];

	for (size_t i = 0; i < n; i++) {
		echo_line(&set[i], line, sizeof(line));
		w->note(w, line);
	}
}

/* A whole number, or NaN (NaN in CSV, null in JSON) for 0: none. */
static struct cell maybe(uint64_t u)
{
	return u ? cell_uint(u) : cell_real(NAN, 0);
}

static void advice_row(const struct advise *v, const struct writer *w,
		       const struct advice *a)
{
	char apply[600], policy[40];
	int within = a->reaches && a->cpu_mean <= v->target.max_cpu;
	int adv = advice_is_advisor(a);

	apply_lines(a, apply, sizeof(apply));
	if (adv)
		snprintf(policy, sizeof(policy), "advisor %llus %llu%%",
			 (unsigned long long)a->advisor.target_scan_time,
			 (unsigned long long)a->advisor.max_cpu);
	else
		snprintf(policy, sizeof(policy), "fixed");
	struct cell row[NCOLS] = {
		cell_str(v->name), cell_str(a->policy->name),
		cell_str(policy), cell_uint(a->pages_to_scan),
		cell_uint(a->sleep_ms), cell_real(a->seconds_to_target, 3),
		cell_real(a->cpu_mean, 4), cell_uint((uint64_t)a->reaches),
		cell_str(apply), cell_uint((uint64_t)within),
		cell_real(100 * a->reached, 3),
		maybe(adv ? a->advisor.target_scan_time : 0),
		maybe(adv ? a->advisor.max_cpu : 0), maybe(a->cheaper),
		cell_uint(a->replays), cell_real(a->cpu_peak, 4),
		cell_uint(v->mergeable), cell_uint(v->not_mergeable),
		cell_uint(v->not_mergeable_saved),
	};

	w->row(w, row);
}

/* The best row of the advisor's (@advisor) or of the fixed settings (the
 * rows are in order), or NULL. */
static const struct advice *best_of(const struct advise *v, int advisor)
{
	for (size_t i = 0; i < v->n; i++)
		if (advice_is_advisor(&v->rows[i]) == advisor)
			return &v->rows[i];
	return NULL;
}

/* The fixed settings' sentence. */
static void fixed_sentence(const struct advise *v, const struct advice *a,
			   char *text, size_t len)
{
	if (rank(v, a) == 0)
		snprintf(text, len, "Fixed: %llu pages every %llu ms reach it in "
			 "%.0f s at %.2f%% CPU; %llu pages did not. To apply it, "
			 "as root (-o sh writes it as a script):",
			 (unsigned long long)a->pages_to_scan,
			 (unsigned long long)a->sleep_ms, a->seconds_to_target,
			 a->cpu_mean, (unsigned long long)a->cheaper);
	else if (rank(v, a) == 1)
		snprintf(text, len, "No fixed setting reaches the target within "
			 "%g%% CPU: the cheapest that reaches it, %llu pages every "
			 "%llu ms, takes %.3g%%.", v->target.max_cpu,
			 (unsigned long long)a->pages_to_scan,
			 (unsigned long long)a->sleep_ms, a->cpu_mean);
	else
		snprintf(text, len, "No fixed setting reaches the target: the "
			 "best, the whole memory every %llu ms, has %.1f%% of the "
			 "saving by then.", (unsigned long long)a->sleep_ms,
			 100 * a->reached);
}

/* What the next cheaper target scan time did, for the advisor's sentence. */
static void advisor_neighbour(const struct advice *a, char *text, size_t len)
{
	if (a->cheaper)
		snprintf(text, len, "%llu s did not",
			 (unsigned long long)a->cheaper);
	else
		snprintf(text, len, "no longer target scan time was tried");
}

/* The scan-time advisor's sentence. */
static void advisor_sentence(const struct advise *v, const struct advice *a,
			     char *text, size_t len)
{
	char next[80], floor[240] = "";
	unsigned long long t = a->advisor.target_scan_time,
			   m = a->advisor.max_cpu;

	advisor_neighbour(a, next, sizeof(next));
	if (a->cpu_mean > (double)m)	/* say why, not just the two figures */
		snprintf(floor, sizeof(floor), " (more than advisor_max_cpu: "
			 "the advisor measures its CPU over a full scan's time "
			 "in whole seconds, at least 1, and keeps it at %d%% or "
			 "more as it measures it, so a scan shorter than a second "
			 "costs more than it sees)", ADVISOR_MIN_CPU);
	if (rank(v, a) == 0)
		snprintf(text, len, "Advisor: advisor_target_scan_time %llu s with "
			 "advisor_max_cpu %llu%% reaches it in %.0f s at %.2f%% "
			 "CPU%s, pages_to_scan %llu by then; %s. To apply it, as "
			 "root (-o sh writes it as a script):", t, m,
			 a->seconds_to_target, a->cpu_mean, floor,
			 (unsigned long long)a->pages_to_scan, next);
	else if (rank(v, a) == 1)
		snprintf(text, len, "No advisor setting reaches the target within "
			 "%g%% CPU: the cheapest that reaches it, "
			 "advisor_target_scan_time %llu s with advisor_max_cpu "
			 "%llu%%, takes %.3g%%%s.", v->target.max_cpu, t, m,
			 a->cpu_mean, floor);
	else
		snprintf(text, len, "No advisor setting reaches the target: the "
			 "best, advisor_target_scan_time %llu s with "
			 "advisor_max_cpu %llu%%, has %.1f%% of the saving by "
			 "then.", t, m, 100 * a->reached);
}

/* What a person reads: the advice of each kind and its lines, or that
 * none reaches the target. */
static void sentences(const struct advise *v, const struct writer *w)
{
	const struct advice *f = best_of(v, 0);
	const struct advice *d = best_of(v, 1);
	char text[1400];

	snprintf(text, sizeof(text), "%s: the target is %g%% of the saving the "
		 "replay of the run's own settings ends at (%llu pages) within "
		 "%g s, at most %g%% of a CPU for ksmd on average over that time "
		 "and one full scan after it (its pages visited at --page-cost, "
		 "KSM pages revisited at --revisit-cost, each wake-up at "
		 "--wake-cost).",
		 v->name, 100 * v->target.fraction,
		 (unsigned long long)v->reference, v->target.seconds,
		 v->target.max_cpu);
	w->note(w, text);
	if (f) {
		fixed_sentence(v, f, text, sizeof(text));
		w->note(w, text);
		if (rank(v, f) == 0)
			apply_notes(w, f);
	}
	if (d) {
		advisor_sentence(v, d, text, sizeof(text));
		w->note(w, text);
		if (rank(v, d) == 0)
			apply_notes(w, d);
	}
	if (rank(v, &v->rows[0]) == 2)
		w->note(w, "No setting reaches the target, fixed or the advisor's: "
			"a later target would be reached.");
	else if (f && d && rank(v, f) == 0 && rank(v, d) == 0)
		w->note(w, f->cpu_mean <= d->cpu_mean ?
			"The fixed setting is the cheaper." :
			"The advisor is the cheaper.");
}


/* The kinds a left-out process is named by in --enable, the most specific
 * first (a unit's MemoryKSM= marks it; a cgroup is every process's). */
static const enum unit_kind name_kinds[] = {
	UNIT_UNIT, UNIT_USER_UNIT, UNIT_VM, UNIT_USER_VM, UNIT_CONTAINER,
	UNIT_CGROUP,
};

/* Append "KIND:NAME" of input @k's process to @list (comma separated),
 * unless it is there or holds a comma (--enable splits at commas). */
static void add_name(const struct advise *v, size_t k, char *list, size_t len)
{
	const struct input *in = &v->r.rs->scan->inputs[k];
	struct proc_unit u;
	char part[300];

	if (in->path || unit_read(in->pid, &u) < 0)
		return;
	for (size_t i = 0; i < sizeof(name_kinds) / sizeof(name_kinds[0]); i++) {
		const char *name = u.name[name_kinds[i]];
		size_t at = strlen(list);

		if (!name[0])
			continue;
		snprintf(part, sizeof(part), "%s:%s",
			 unit_kind_name(name_kinds[i]), name);
		if (strchr(part, ',') || strlen(part) + at + 2 > len)
			return;
		for (const char *p = list; (p = strstr(p, part)); p++)
			if ((p == list || p[-1] == ',') &&
			    (p[strlen(part)] == ',' || !p[strlen(part)]))
				return;		/* there already */
		snprintf(list + at, len - at, "%s%s", at ? "," : "", part);
		return;
	}
}

/* Memory ksmd does not scan now, beside the advice: how much, and what
 * marking it would save more, with the --enable that would advise it. */
static void unscanned_note(const struct advise *v, const struct writer *w)
{
	char names[600] = "", word[700], text[1000];

	if (!v->not_mergeable)
		return;
	for (size_t k = 0; k < 64; k++)
		if (v->not_mergeable_procs >> k & 1)
			add_name(v, k, names, sizeof(names));
	snprintf(text, sizeof(text), "--enable=%s", names[0] ? names : "NAME");
	shell_quote(text, word, sizeof(word));
	snprintf(text, sizeof(text), "Not scanned by KSM now: %llu pages, of "
		 "processes none of whose memory is marked mergeable (-r doctor: "
		 "not_mergeable); the advice leaves them out. With %s they would "
		 "save %llu pages more (at the run's own settings).",
		 (unsigned long long)v->not_mergeable, word,
		 (unsigned long long)v->not_mergeable_saved);
	w->note(w, text);
}

/* --enable: the units the advice counts as marked, and how to mark them:
 * notes, or with @rows (a sound -o sh) the commands as rows to run. */
static void enable_lines(const struct advise *v, const struct writer *w,
			 int rows)
{
	const struct series_params *sp = v->r.rs->series;
	const struct group *g = sp ? sp->enable : NULL;
	char text[700], hint[640];

	if (!g || !g->nparts)
		return;
	snprintf(text, sizeof(text), "--enable: the advice counts the processes "
		 "of %s as marked mergeable (%llu pages scanned in all). Mark them, "
		 "as root%s:", g->name + strlen("enable:"),
		 (unsigned long long)v->mergeable,
		 rows ? " (this script runs its systemctl lines first)" : "");
	w->note(w, text);
	for (size_t i = 0; i < g->nparts; i++) {
		char *cmd = enable_marking(g->parts[i], hint, sizeof(hint));

		if (cmd && rows) {
			struct cell row[2] = { cell_str(SETTING_COMMAND), cell_str(cmd) };

			w->row(w, row);
		} else if (cmd) {
			snprintf(text, sizeof(text), NOTE_SHELL "%s", cmd);
			w->note(w, text);
		}
		free(cmd);
		w->note(w, hint);
	}
}

/*
 * Why the advice is not to be applied, in @buf, or NULL when it is sound:
 * every input read, some memory ksmd would scan, and the first row reaching
 * the target within --max-cpu. Nothing is written otherwise (-o sh exits
 * 1, -o tmpfiles has no line), whatever the row would have said.
 */
static const char *refusal(const struct advise *v, char *buf, size_t len)
{
	const struct advice *a = &v->rows[0];

	if (v->seen && v->nothing_mergeable && !v->partial)
		snprintf(buf, len, "none of the memory is marked mergeable "
			 "(madvise MADV_MERGEABLE, prctl PR_SET_MEMORY_MERGE, "
			 "QEMU's mem-merge=on, MemoryKSM=yes; -r doctor says "
			 "where): ksmd would scan none of it and save nothing; "
			 "--enable=NAME advises as if a unit's processes were "
			 "marked, with the lines that mark them");
	else if (!v->seen || !v->n)
		snprintf(buf, len, "nothing was read, so there is nothing to "
			 "advise");
	else if (v->partial)
		snprintf(buf, len, "not every input was read (%s): the advice "
			 "would be of part of the memory", v->input_why[0] ?
			 v->input_why : "read with errors");
	else if (!v->reference)
		snprintf(buf, len, "the replay merges nothing in this memory: "
			 "there is no saving to reach");
	else if (rank(v, a) == 2)
		snprintf(buf, len, "no setting reaches %g%% of the saving by "
			 "%g s (the best has %.1f%% by then): a later target would "
			 "be reached", 100 * v->target.fraction, v->target.seconds,
			 100 * a->reached);
	else if (rank(v, a) == 1)
		snprintf(buf, len, "no setting reaches the target within "
			 "--max-cpu=%g%%: the cheapest that reaches it, %s, takes "
			 "%.3g%% of a CPU", v->target.max_cpu,
			 advice_is_advisor(a) ? "the advisor's" : "a fixed one",
			 a->cpu_mean);
	else
		return NULL;
	return buf;
}

/* The table as a person reads it, one comment line a row, for the
 * settings' formats: the file a person reads is the file that runs. */
static void comment_table(const struct advise *v, const struct writer *w)
{
	char line[200], policy[40], to[16];

	snprintf(line, sizeof(line), "%-16s %6s %8s %11s %8s %-7s %-6s %8s",
		 "policy", "pages", "sleep ms", "to target s", "cpu%",
		 "reaches", "in cpu", "reached%");
	w->note(w, line);
	for (size_t i = 0; i < v->n; i++) {
		const struct advice *a = &v->rows[i];

		if (advice_is_advisor(a))
			snprintf(policy, sizeof(policy), "advisor %llus %llu%%",
				 (unsigned long long)a->advisor.target_scan_time,
				 (unsigned long long)a->advisor.max_cpu);
		else
			snprintf(policy, sizeof(policy), "fixed");
		if (isnan(a->seconds_to_target))
			snprintf(to, sizeof(to), "never");
		else
			snprintf(to, sizeof(to), "%.0f", a->seconds_to_target);
		snprintf(line, sizeof(line), "%-16s %6llu %8llu %11s %8.2f %-7s "
			 "%-6s %8.1f", policy, (unsigned long long)a->pages_to_scan,
			 (unsigned long long)a->sleep_ms, to, a->cpu_mean,
			 a->reaches ? "yes" : "no", rank(v, a) == 0 ? "yes" : "no",
			 100 * a->reached);
		w->note(w, line);
	}
}

/* -o sh, -o tmpfiles: the first row's writes, what it is said first. */
static void settings_print(const struct advise *v, const struct writer *w)
{
	static const struct column cols[] = {
		COL("setting"), COL("value"),
	};
	struct setting set[SETTINGS_MAX];
	const struct advice *a = &v->rows[0];
	char text[400], why[600];
	size_t n;

	w->begin(w, "advise", cols, 2, 0);
	if (v->n) {
		comment_table(v, w);
		sentences(v, w);
	}
	unscanned_note(v, w);
	if (refusal(v, why, sizeof(why))) {
		enable_lines(v, w, 0);
		struct cell row[2] = { cell_str(SETTING_REFUSED), cell_str(why) };

		*v->r.rs->failed = 1;
		w->row(w, row);
		w->end(w);
		return;
	}
	snprintf(text, sizeof(text), "ksmscan -r advise, %s: %s, %s %g%% of "
		 "the saving by %g s at %.2f%% CPU.", v->name,
		 a->policy->name, a->reaches ? "reaches" : "does not reach",
		 100 * v->target.fraction, v->target.seconds, a->cpu_mean);
	w->note(w, text);
	enable_lines(v, w, 1);
	n = advice_settings(a, set);
	for (size_t i = 0; i < n; i++) {
		struct cell row[2] = { cell_str(set[i].name), cell_str(set[i].value) };

		w->row(w, row);
	}
	w->end(w);
}

static void advise_print(struct sink *sk)
{
	struct advise *v = (struct advise *)sk;
	const struct writer *w = v->r.rs->out;
	int people = for_people(v->r.rs);
	char why[600], text[700];

	if (w->flags & WRITER_SETTINGS) {
		settings_print(v, w);
		return;
	}
	w->begin(w, "advise", advise_cols, NCOLS, 0);
	for (size_t i = 0; i < v->n; i++)
		advice_row(v, w, &v->rows[i]);
	if (people && v->n)
		sentences(v, w);
	if (people) {
		unscanned_note(v, w);
		enable_lines(v, w, 0);
	}
	if (refusal(v, why, sizeof(why))) {
		*v->r.rs->failed = 1;
		if (people) {
			snprintf(text, sizeof(text), "Nothing to apply: %s.", why);
			w->note(w, text);
		} else {
			/* CSV and JSON carry no sentences: exit 1 says why here */
			warn_kept("%s: no setting written: %s", v->name, why);
		}
	}
	hz_note(v->r.rs);
	w->end(w);
}

static void advise_free(struct sink *sk)
{
	struct advise *v = (struct advise *)sk;

	free(v->name);
	free(v);
}

static const struct sink_ops advise_ops = {
	.series = advise_series, .print = advise_print, .free = advise_free,
};

struct sink *advise_create(const struct report_setup *rs)
{
	return report_sink_new(sizeof(struct advise), &advise_ops, rs);
}
