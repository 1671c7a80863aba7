/* SPDX-License-Identifier: MIT */
/*
 * The rules between options (options_setup()), once the whole command
 * line is read: what -P and --all-processes take, the groups, a series
 * and its host, the trust domains, the default reports, the writer. What
 * they need of the live host comes in a struct host_facts, so that they
 * can be tried on any facts.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../report/report.h"
#include "../report/write/writer.h"
#include "../scan/record.h"
#include "../util/util.h"
#include "cli.h"
#include "options.h"
#include "usage.h"

/* A sixth of --page-cost per KSM page revisited by default: measured
 * 0.4 to 1.0 us a revisit (in full scans where smart_scan passed the
 * unmerged pages and ksmd only revisited 22954 KSM pages), about a sixth
 * of the default page cost. */
#define REVISIT_SHARE_DEFAULT (1.0 / 6)
/* HZ when the kernel's cannot be known: the most common distribution build. */
#define HZ_DEFAULT 250

/* The facts start_cmp() asks, for the time of one qsort(). */
static const struct host_facts *sort_facts;

/* The processes of one -P REGEX (@regex) or --all-processes (NULL), as
 * pid:PID inputs; a bad regular expression is a usage error. */
static size_t add_processes(struct prefs *p, const char *regex,
			    const struct host_facts *h)
{
	char why[256];
	size_t n;
	int *pids = h->processes(regex, &n, why, sizeof(why));

	if (!pids && regex && strncmp(why, "-P '", 4) == 0) {
		/* A pattern refused for its cost: one line naming it. */
		error("%s", why);
		exit(EXIT_USAGE);
	}
	if (!pids)
		usage_error("%s", why);
	for (size_t k = 0; k < n; k++)
		prefs_add_input(p, pid_input(pids[k], 1));
	free(pids);
	return n;
}

/* Replace each -P and --all-processes by the processes, in place. */
static void expand_processes(struct prefs *p, const struct host_facts *h)
{
	struct input *old = p->inputs;
	size_t n = p->ninputs;

	p->inputs = xcalloc(p->cap, sizeof(*p->inputs));
	p->ninputs = 0;
	for (size_t i = 0; i < n; i++) {
		size_t found;

		if (old[i].path || old[i].pid != PID_LIST) {
			prefs_add_input(p, old[i]);
			continue;
		}
		found = add_processes(p, old[i].name, h);
		if (!found && n > 1)
			warn("%s%s%s: no process to read", old[i].name ? "-P '" : "",
			     old[i].name ? old[i].name : "--all-processes",
			     old[i].name ? "'" : "");
		else if (!found)
			/* The only input: finding no process is the run's
			 * failure, not a usage mistake (main() exits 1). */
			error("%s%s%s: no process to read", old[i].name ? "-P '" : "",
			      old[i].name ? old[i].name : "--all-processes",
			      old[i].name ? "'" : "");
	}
	free(old);
}

/*
 * An output file (--svg) must never replace an input, nor a file that is not
 * an earlier picture: "--svg a.img b.img" takes a.img as the picture's name,
 * and must not turn that dump into a picture.
 */
static void check_outputs(const struct prefs *p)
{
	for (size_t i = 0; p->svg && i < p->ninputs; i++)
		if (p->inputs[i].path && same_file(p->svg, p->inputs[i].path))
			usage_error("--svg %s would replace an input: name another "
				    "file for the picture", p->svg);
	if (p->svg && !out_replaceable(p->svg, "<?xml"))
		usage_error("--svg %s: that file exists and is not a picture "
			    "ksmscan wrote: remove it or name another file", p->svg);
}

/* Whether a report that needs trust domains is selected. */
static int domains_report(const struct prefs *p)
{
	for (size_t i = 0; i < report_count(); i++)
		if ((p->reports & UINT64_C(1) << i) &&
		    (report_get(i)->needs & REPORT_DOMAINS))
			return 1;
	return 0;
}

/* --group values, once every input is known; two groups may not share a name. */
static void parse_groups(struct prefs *p, const struct host_facts *h)
{
	struct group *g = xcalloc(p->ngroups ? p->ngroups : 1, sizeof(*g));
	char why[256];

	for (size_t i = 0; i < p->ngroups; i++) {
		if (group_parse(p->groups[i], p->inputs, p->ninputs, &g[i], why,
				sizeof(why)) < 0)
			usage_error("%s", why);
		for (size_t j = 0; j < i; j++)
			if (strcmp(g[j].name, g[i].name) == 0)
				usage_error("--group %s given twice", g[i].name + 6);
	}
	p->cfg.ngroups = p->ngroups;
	/* --by and --enable need the processes alive: read them now. */
	if (!p->series_on && !p->count &&
	    units_groups(p->by & (domains_report(p) ? ~0u : ~BY_PROCESS), p->enable, h->unit, p->inputs, p->ninputs, &g,
			 &p->cfg.ngroups, why, sizeof(why)) < 0)
		usage_error("%s", why);
	p->cfg.groups = g;
}

/* Whether a report that needs --series is selected: its name, or NULL. */
static const char *series_report(const struct prefs *p)
{
	for (size_t i = 0; i < report_count(); i++)
		if ((p->reports & UINT64_C(1) << i) &&
		    (report_get(i)->needs & REPORT_SERIES))
			return report_get(i)->name;
	return NULL;
}

/* Writes that leave a page's bytes as they were cannot be seen in snapshots;
 * soft-dirty bits would show them, where the kernel has them. Said once,
 * unless --write-rate stands for them, and only by a run that goes on: the
 * series says it once its processes opened (series_run()), so that a run
 * ending at once on a usage error or a process it cannot read says only
 * why. */
static void note_soft_dirty(struct prefs *p, const struct host_facts *h)
{
	int sd = h->soft_dirty();

	p->series.live_note[0] = '\0';
	if (p->series.write_rate > 0)
		return;
	snprintf(p->series.live_note, sizeof(p->series.live_note),
		 "%s: writes of the bytes a page already holds are not seen: this "
		 "kernel %s; give --write-rate to stand for them (ksmscan(1))",
		 p->inputs[0].name,
		 sd == 1 ? "has soft-dirty bits, which ksmscan does not read yet" :
		 sd == 0 ? "has no soft-dirty bits (CONFIG_MEM_SOFT_DIRTY is not set)" :
		 "may lack soft-dirty bits (its configuration cannot be read)");
}

/* -r advise and --target go together. */
static void advise_needs(const struct prefs *p)
{
	const struct report *r = report_lookup("advise", 6);
	int asked = 0;

	for (size_t i = 0; i < report_count(); i++)
		if ((p->reports & UINT64_C(1) << i) && report_get(i) == r)
			asked = 1;
	if (asked && !(p->series.advise.seconds > 0))
		usage_error("-r advise needs --target, such as --target=90%%@1h");
	if (!asked && p->series.advise.seconds > 0)
		usage_error("--target and --max-cpu are for -r advise");
}

/* --sample replays files: a live series keeps its processes' frames by
 * page (what the processes report counts), -r advise times one replay
 * at every pace, a page a visit, a huge page splits when any of its
 * subpages merges, which a sample of contents cannot tell, and a record
 * holds every content but no page's bytes to sample them by. */
static void sample_rules(const struct prefs *p)
{
	if (p->series.sample <= 1)
		return;
	if (p->count)
		usage_error("--sample is for snapshot files, not -p PID --count=N");
	if (p->series.advise.seconds > 0)
		usage_error("--sample does not apply to -r advise");
	if (p->cfg.thp_always)
		usage_error("--sample does not apply to --thp=always");
	if (p->series.record || p->series.from_record)
		usage_error("--sample does not apply to a record (it keeps "
			    "every content, and no page's bytes)");
}

/* Whether --policy names a tuner with @flags. */
static int uses_policy(const struct series_params *sp, unsigned flags)
{
	for (size_t k = 0; k < sp->nothers; k++)
		if (sp->others[k]->flags & flags)
			return 1;
	return (sp->policy->flags & flags) != 0;
}

/* The host of the tuners that look at its memory: --host-memory and
 * --host-used, or for live processes this host's /proc/meminfo. */
static void tuners_host(struct prefs *p, const struct host_facts *h)
{
	struct policy_host *t = &p->series.host;
	uint64_t total = 0, free = 0;
	char names[200];

	policy_names(TUNER_LOOKS_AT_HOST, "and", names, sizeof(names));
	if ((!p->host_memory_given || !p->host_used_given) &&
	    (p->inputs[0].path || h->meminfo(&total, &free) < 0))
		usage_error("--policy=%s need --host-memory and --host-used (with "
			    "files)", names);
	t->total_kb = p->host_memory_given ? p->host_memory / 1024 : total;
	t->used_kb = p->host_used_given ? p->host_used / 1024 : total - free;
	if (!t->total_kb)
		usage_error("--host-memory must be at least 1K");
	if (t->used_kb > t->total_kb)
		usage_error("--host-used must not exceed --host-memory");
}

/* The processes of a live series in the order they started: KSM's list of
 * memories grows as they register (usually as they start), and ksmd scans
 * in its order. Equal start times keep the command line's order. */
static int start_cmp(const void *a, const void *b)
{
	const struct input *x = a, *y = b;
	double s = sort_facts->start_time(x->pid), t = sort_facts->start_time(y->pid);

	if (s != t)
		return s < t ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* -p PID... --count=N: N snapshots of the processes, --interval apart, each
 * the processes read one after the other. */
static void live_snapshots(struct prefs *p, const struct host_facts *h)
{
	size_t np = p->ninputs;

	for (size_t i = 0; i < np; i++)
		if (p->inputs[i].path || p->inputs[i].pid == PID_LIST)
			usage_error("--count takes -p PID (or -P) and no file");
	if (np > SERIES_PROCS_MAX)
		usage_error("--count takes at most 64 processes");
	if (np > 1) {
		sort_facts = h;
		qsort(p->inputs, np, sizeof(*p->inputs), start_cmp);
	}
	for (size_t k = 1; k < p->count; k++)
		for (size_t i = 0; i < np; i++) {
			struct input in = p->inputs[i];

			in.at = (double)k * p->series.interval;
			in.name = xstrdup(in.name);	/* each input frees its own */
			prefs_add_input(p, in);
		}
	p->series.nprocs = np;
	/* what a later --check of this forecast counts the kernel's scans from */
	if (h->full_scans(&p->series.ksm_full_scans) < 0)
		p->series.ksm_full_scans = -1;
	p->cfg.dump.ksmd_pages = 1;
	note_soft_dirty(p, h);
}

/* -r advise --enable=NAME of a live series: the processes (of the first
 * snapshot; each snapshot holds them in the same order) the advice counts
 * as marked mergeable. */
static void series_enable(struct prefs *p, const struct host_facts *h)
{
	struct group *g = NULL;
	size_t n = 0;
	char why[256];

	if (units_groups(0, p->enable, h->unit, p->inputs, p->series.nprocs, &g,
			 &n, why, sizeof(why)) < 0)
		usage_error("%s", why);
	p->series.enable = g;	/* one group, freed by prefs_free() */
}

/* One input that is a record (--record): a series to replay, whose
 * snapshots it holds; from_record says whether they were live (1) or files
 * (2). */
static void from_record(struct prefs *p)
{
	int kind = 0;

	for (size_t i = 0; i < p->ninputs; i++)
		if (p->inputs[i].path && strcmp(p->inputs[i].path, "-") &&
		    record_is(p->inputs[i].path)) {
			if (p->ninputs > 1 || p->count)
				usage_error("%s: a record is a whole series: give it "
					    "alone", p->inputs[i].name);
			kind = record_is(p->inputs[i].path);
		}
	if (!kind)
		return;
	p->series.from_record = kind;
	p->series_on = 1;
}

/*
 * --series, or --count: the inputs are snapshots of one memory. ksmd's
 * options and the reports of a series need one; a series takes no group.
 */
static void setup_series(struct prefs *p, const struct host_facts *h)
{
	const char *needs = series_report(p);

	if (p->series.record && p->series.from_record)
		usage_error("--record takes a series read from files or processes, "
			    "not a record");
	if (!p->series_on && !p->count) {
		if (p->series.record)
			usage_error("--record needs --series (or -p PID --count=N)");
		if (p->series_opt || needs)
			usage_error("%s needs --series (or -p PID --count=N)",
				    p->series_opt ? p->series_opt : needs);
		return;
	}
	if (p->count) {
		live_snapshots(p, h);
		p->cfg.inputs = p->inputs;
		p->cfg.ninputs = p->ninputs;
	}
	for (size_t i = 0; i < p->ninputs; i++)
		if (!p->inputs[i].path && !p->count)
			usage_error("a live process is a series with "
				    "-p PID --count=N, not --series");
	if (p->ninputs == 0)
		usage_error("--series wants snapshot files");
	if (!p->hz_given && !(p->series.hz = h->hz()))
		p->series.hz = HZ_DEFAULT;
	if (p->series.revisit_seconds < 0)
		p->series.revisit_seconds = p->series.page_seconds * REVISIT_SHARE_DEFAULT;
	advise_needs(p);
	sample_rules(p);
	/* a live record holds its host's memory */
	if (uses_policy(&p->series, TUNER_LOOKS_AT_HOST) &&
	    p->series.from_record != 1)
		tuners_host(p, h);
	if (p->enable && p->count && p->series.advise.seconds > 0)
		series_enable(p, h);
	else if (p->enable)
		usage_error("--enable applies to a series only with -r advise of "
			    "live processes (-p PID --count=N)");
	if (p->ngroups || p->by)
		usage_error("%s", p->ngroups ? "--group does not apply to a series" :
			    "--by does not apply to a series");
}

/*
 * The reports of trust domains (exposure, mitigations) need the groups to
 * be domains; -r exposure brings the mitigations with it, except in CSV,
 * which holds one report. --known is for the exposure report.
 */
static void setup_domains(struct prefs *p)
{
	size_t exposure = 0, needs = 0;
	char why[256], msg[300];

	for (size_t i = 0; i < report_count(); i++) {
		if (!(p->reports & UINT64_C(1) << i))
			continue;
		if (strcmp(report_get(i)->name, "exposure") == 0)
			exposure = i + 1;
		if ((report_get(i)->needs & REPORT_DOMAINS) && !needs)
			needs = i + 1;
	}
	if (p->nknown && !exposure)
		usage_error("--known applies to -r exposure");
	/* The --group groups come first, then the --by rows, then --enable's
	 * one: the domains are the first, or without them the second. */
	p->ndomains = p->ngroups ? p->ngroups :
		      p->cfg.ngroups - (p->enable && p->cfg.ngroups ? 1 : 0);
	if (!needs)
		return;
	if (groups_domains(p->cfg.groups, p->ndomains, p->inputs,
			   p->ninputs, why, sizeof(why)) < 0) {
		snprintf(msg, sizeof(msg), "-r %s: %s", report_get(needs - 1)->name,
			 why);
		usage_error("%s", msg);
	}
	if (exposure && !(p->output->flags & WRITER_ONE_REPORT))
		prefs_report(p, "mitigations");
}

/* The reports without -r: the summary; a series adds its timeline (CSV,
 * which holds one report, has the timeline alone), and a live one the
 * forecast for each process (what --check reads back). */
static void default_reports(struct prefs *p)
{
	if (!p->series_on && !p->count)
		prefs_report(p, "summary");
	else if (p->output->flags & WRITER_ONE_REPORT)
		prefs_report(p, "timeline");
	else {
		prefs_report(p, "summary");
		prefs_report(p, "timeline");
		if (p->count || p->series.from_record == 1)
			prefs_report(p, "processes");
	}
}

/* What the writer can hold: settings alone (sh, tmpfiles), or one report
 * (CSV). */
static void check_writer(const struct prefs *p)
{
	const struct writer *w = p->output;
	int several = (p->reports & (p->reports - 1)) != 0;

	if ((w->flags & WRITER_SETTINGS) &&
	    (several || report_get((size_t)__builtin_ctzll(p->reports)) !=
			report_lookup("advise", 6)))
		usage_error("-o %s writes the settings of -r advise alone", w->name);
	if ((w->flags & WRITER_ONE_REPORT) && several)
		usage_error("--%s takes exactly one report", w->name);
}

void options_setup(struct prefs *p, const struct host_facts *h)
{
	if (p->tolerance >= 0 && !p->check)
		usage_error("--tolerance is for --check");
	if (p->tolerance_pages != UINT64_MAX && !p->check)
		usage_error("--tolerance-pages is for --check");
	expand_processes(p, h);
	/* No input, and something on standard input: read it, as xxhsum does. */
	if (!p->ninputs && !p->listed && !isatty(STDIN_FILENO) && !p->bench &&
	    !p->algos_help && !p->check)
		prefs_add_input(p, (struct input){ .name = "-", .path = "-" });
	for (size_t i = 0; p->label && i < p->ninputs; i++)
		if (p->inputs[i].path && strcmp(p->inputs[i].path, "-") == 0)
			p->inputs[i].name = p->label;
	p->cfg.inputs = p->inputs;
	p->cfg.ninputs = p->ninputs;
	check_outputs(p);
	from_record(p);
	parse_groups(p, h);
	if (!p->reports)
		default_reports(p);
	setup_series(p, h);
	setup_domains(p);
	if (p->compress)
		prefs_report(p, "compress");
	if (!p->ncompressors)
		prefs_compressors_all(p);
	check_writer(p);
}
