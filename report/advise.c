/* SPDX-License-Identifier: MIT */
/*
 * The advise report (--series -r advise --target=F@D [--max-cpu=P]): the
 * fixed settings of ksmd the search found (model/advise.c), one per sleep
 * it tried, cheapest first: those that reach the target within the CPU
 * asked, then those that reach it at more CPU, then those that do not; the
 * first row is the advice, with the lines that apply it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/util.h"
#include "report.h"

static const struct column advise_cols[] = {
	{ "input", 0, 0 }, { "policy", 0, 0 }, { "pages_to_scan", 0, 0 },
	{ "sleep_ms", 0, 0 }, { "seconds_to_target", 0, 0 },
	{ "ksmd_cpu_percent_mean", 0, 0 }, { "reaches_target", 0, 0 },
	{ "apply", 0, 0 },
	/* beyond the contract: whether it is within --max-cpu, and how much
	 * of the target saving it had by the target time */
	{ "within_max_cpu", 0, 0 }, { "reached_percent", 0, 0 },
};

#define NCOLS (sizeof(advise_cols) / sizeof(advise_cols[0]))

static const struct column people_cols[] = {
	{ "pages", 0, 0 }, { "sleep ms", 0, 0 }, { "to target s", 0, 0 },
	{ "cpu%", 0, 0 }, { "reaches", 0, 0 }, { "within cpu", 0, 0 },
	{ "reached%", 0, 0 },
};

#define NPEOPLE (sizeof(people_cols) / sizeof(people_cols[0]))

struct advise {
	struct report_sink r;		/* first: its sink and its setup */
	char *name;
	struct advice rows[ADVISE_NSLEEPS];
	struct advise_params target;
	uint64_t reference;
	int have;
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

	if (!r->advice)
		return;
	v->name = xstrdup(r->name);
	memcpy(v->rows, r->advice, sizeof(v->rows));
	v->target = *r->target;
	v->reference = r->reference;
	v->have = 1;
	for (size_t i = 1; i < ADVISE_NSLEEPS; i++)	/* insertion sort */
		for (size_t j = i; j > 0 && better(v, &v->rows[j], &v->rows[j - 1]); j--) {
			struct advice t = v->rows[j];

			v->rows[j] = v->rows[j - 1];
			v->rows[j - 1] = t;
		}
}

/* The lines that apply a setting: sysfs writes, ';'-separated. */
static void apply_lines(const struct advice *a, char *buf, size_t len)
{
	snprintf(buf, len, "echo %llu > /sys/kernel/mm/ksm/pages_to_scan;"
		 "echo %llu > /sys/kernel/mm/ksm/sleep_millisecs;"
		 "echo 1 > /sys/kernel/mm/ksm/run",
		 (unsigned long long)a->pages_to_scan,
		 (unsigned long long)a->sleep_ms);
}

static void advice_row(const struct advise *v, const struct writer *w,
		       const struct advice *a, int people)
{
	char apply[200];
	int within = a->reaches && a->cpu_mean <= v->target.max_cpu;

	apply_lines(a, apply, sizeof(apply));
	struct cell row[NCOLS] = {
		cell_str(v->name), cell_str("fixed"), cell_uint(a->pages_to_scan),
		cell_uint(a->sleep_ms), cell_real(a->seconds_to_target, people ? 0 : 3),
		cell_real(a->cpu_mean, people ? 2 : 4), cell_uint((uint64_t)a->reaches),
		cell_str(apply), cell_uint((uint64_t)within),
		cell_real(100 * a->reached, people ? 1 : 3),
	};

	if (people) {
		struct cell short_row[NPEOPLE] = {
			row[2], row[3],
			a->reaches ? row[4] : cell_str("never"), row[5],
			cell_str(a->reaches ? "yes" : "no"),
			cell_str(within ? "yes" : "no"), row[9],
		};

		w->row(short_row);
	} else {
		w->row(row);
	}
}

/* What a person reads: the advice and its lines, or that none reaches. */
static void sentences(const struct advise *v, const struct writer *w)
{
	const struct advice *a = &v->rows[0];
	char text[600], apply[200];

	snprintf(text, sizeof(text), "%s: the target is %g%% of the saving the "
		 "replay of the run's own settings ends at (%llu pages) within "
		 "%g s, at most %g%% of a CPU for ksmd on average (its pages "
		 "visited at --page-cost).", v->name, 100 * v->target.fraction,
		 (unsigned long long)v->reference, v->target.seconds,
		 v->target.max_cpu);
	w->note(text);
	apply_lines(a, apply, sizeof(apply));
	if (rank(v, a) == 0) {
		snprintf(text, sizeof(text), "Apply: %s (%llu pages every %llu ms "
			 "reach it in %.0f s at %.2f%% CPU; %llu pages did not).",
			 apply, (unsigned long long)a->pages_to_scan,
			 (unsigned long long)a->sleep_ms, a->seconds_to_target,
			 a->cpu_mean, (unsigned long long)a->cheaper_pages);
	} else if (rank(v, a) == 1) {
		snprintf(text, sizeof(text), "No setting reaches the target within "
			 "%g%% CPU: the cheapest that reaches it, %llu pages every "
			 "%llu ms, takes %.2f%%.", v->target.max_cpu,
			 (unsigned long long)a->pages_to_scan,
			 (unsigned long long)a->sleep_ms, a->cpu_mean);
	} else {
		snprintf(text, sizeof(text), "No setting reaches the target: the "
			 "best, the whole memory every %llu ms, has %.1f%% of the "
			 "saving by then; a later target would be reached.",
			 (unsigned long long)a->sleep_ms, 100 * a->reached);
	}
	w->note(text);
}

static void advise_print(struct sink *sk)
{
	struct advise *v = (struct advise *)sk;
	const struct writer *w = v->r.rs->out;
	int people = for_people(v->r.rs);

	if (people)
		w->begin("advise", people_cols, NPEOPLE, 0);
	else
		w->begin("advise", advise_cols, NCOLS, 0);
	for (size_t i = 0; v->have && i < ADVISE_NSLEEPS; i++)
		advice_row(v, w, &v->rows[i], people);
	if (people && v->have)
		sentences(v, w);
	w->end();
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
