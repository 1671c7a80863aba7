/* SPDX-License-Identifier: MIT */
/*
 * --check=FORECAST.json: a forecast against the kernel afterwards. The
 * host's counters are compared with the forecast's after as many full scans
 * as ksmd has done since the forecast began (the kernel's full_scans less
 * the one the forecast noted), or its last if ksmd did more; each process's
 * /proc/PID/ksm_stat with the forecast's at its last full scan. A row is
 * within the tolerance when |error_percent| is at most it; a figure
 * forecast 0 and found otherwise is infinitely wrong, and a process gone has
 * no actual figure: both are outside.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../host/process.h"
#include "../util/util.h"
#include "report.h"

static const struct column check_cols[] = {
	{ "input", 0, 0 }, { "figure", 0, 0 }, { "forecast", 0, 0 },
	{ "actual", 0, 0 }, { "error_percent", 0, 0 },
	/* beyond the contract: the forecast's full scan compared with, and
	 * whether the row is within the tolerance */
	{ "scan", 0, 0 }, { "within_tolerance", 0, 0 },
};

#define NCOLS (sizeof(check_cols) / sizeof(check_cols[0]))

static const struct column people_cols[] = {
	{ "input", 0, 0 }, { "figure", 0, 0 }, { "forecast", 0, 0 },
	{ "actual", 0, 0 }, { "error %", 0, 0 }, { "within", 0, 0 },
};

#define NPEOPLE (sizeof(people_cols) / sizeof(people_cols[0]))

/* How the check is going: the writer, and what has been found. */
struct check {
	const struct writer *w;
	int people;
	double tolerance;		/* percent */
	size_t rows, outside;
};

/* The relative error of @actual against @forecast, in percent. */
static double error_percent(double forecast, double actual)
{
	if (isnan(actual))
		return NAN;
	if (forecast == 0)
		return actual == 0 ? 0 : copysign(INFINITY, actual);
	return 100 * (actual - forecast) / fabs(forecast);
}

/* One figure: its row, and whether it is within the tolerance. */
static void figure(struct check *c, const char *input, const char *name,
		   double forecast, double actual, uint64_t scan)
{
	double e = error_percent(forecast, actual);
	int within = fabs(e) <= c->tolerance;	/* false for NaN */
	struct cell row[NCOLS] = {
		cell_str(input), cell_str(name), cell_real(forecast, 0),
		cell_real(actual, 0), cell_real(e, c->people ? 1 : 3),
		cell_uint(scan), cell_uint((uint64_t)within),
	};

	c->rows++;
	c->outside += !within;
	if (c->people) {
		struct cell short_row[NPEOPLE] = {
			row[0], row[1], row[2],
			isnan(actual) ? cell_str("gone") : row[3],
			row[4], cell_str(within ? "yes" : "no"),
		};

		c->w->row(short_row);
	} else {
		c->w->row(row);
	}
}

/* The host's rows: /sys/kernel/mm/ksm against the forecast's full scan. */
static void host_rows(struct check *c, const struct forecast *f,
		      const struct forecast_actual *a, uint64_t k)
{
	const struct forecast_scan *s = &f->scans[k];

	figure(c, "*", "pages_shared", (double)s->pages_shared,
	       (double)a->now.pages_shared, k);
	figure(c, "*", "pages_sharing", (double)s->pages_sharing,
	       (double)a->now.pages_sharing, k);
	if (f->set.use_zero_pages)
		figure(c, "*", "ksm_zero_pages", (double)s->ksm_zero_pages,
		       (double)a->now.ksm_zero_pages, k);
	figure(c, "*", "general_profit", (double)s->general_profit,
	       (double)a->now.general_profit, k);
}

/* A process's rows: its ksm_stat against the forecast's. */
static void process_rows(struct check *c, const struct forecast *f,
			 const struct forecast_actual *a, size_t i)
{
	const struct forecast_proc *p = &f->procs[i];
	const struct proc_ksm_stat *x = &a->procs[i], *e = &p->ksm;
	int gone = a->gone[i] != 0;

	figure(c, p->input, "ksm_rmap_items", (double)e->rmap_items,
	       gone ? NAN : (double)x->rmap_items, p->scan);
	figure(c, p->input, "ksm_merging_pages", (double)e->merging_pages,
	       gone ? NAN : (double)x->merging_pages, p->scan);
	if (f->set.use_zero_pages)
		figure(c, p->input, "ksm_zero_pages", (double)e->zero_pages,
		       gone ? NAN : (double)x->zero_pages, p->scan);
	figure(c, p->input, "ksm_process_profit", (double)e->process_profit,
	       gone ? NAN : (double)x->process_profit, p->scan);
}

/* What a person reads under the table. */
static void sentences(const struct check *c, const struct forecast *f,
		      uint64_t done, uint64_t k)
{
	uint64_t last = f->nscans - 1;
	char text[400];

	snprintf(text, sizeof(text), "ksmd did %llu full scans since the forecast "
		 "began: the host's figures are compared with the forecast's after "
		 "%llu, each process's with its last (%llu).",
		 (unsigned long long)done, (unsigned long long)k,
		 (unsigned long long)last);
	c->w->note(text);
	if (done < last) {
		snprintf(text, sizeof(text), "The forecast settles after %llu full "
			 "scans: check again once ksmd has done them.",
			 (unsigned long long)last);
		c->w->note(text);
	}
	if (c->outside)
		snprintf(text, sizeof(text), "%zu of %zu figures are outside "
			 "+-%g%%.", c->outside, c->rows, c->tolerance);
	else
		snprintf(text, sizeof(text), "All %zu figures are within +-%g%%.",
			 c->rows, c->tolerance);
	c->w->note(text);
}

/* Say on standard error what makes the comparison unfair. */
static void warnings(const char *path, const struct forecast *f,
		     const struct forecast_actual *a)
{
	const struct forecast_settings *x = &f->set, *y = &a->set;
	int tuner = strcmp(x->policy, "ksmtuned") == 0 ||
		    strcmp(x->policy, "kubevirt") == 0;

	if (strcmp(x->policy, y->policy) && !tuner)
		warn("%s: the forecast replayed --policy=%s, the kernel runs %s",
		     path, x->policy, y->policy);
	if (!tuner && strcmp(x->policy, "advisor") &&
	    (x->pages_to_scan != y->pages_to_scan || x->sleep_ms != y->sleep_ms))
		warn("%s: the kernel runs pages_to_scan %llu, sleep_millisecs %llu; "
		     "the forecast replayed %llu, %llu: its figures follow another pace",
		     path, (unsigned long long)y->pages_to_scan,
		     (unsigned long long)y->sleep_ms,
		     (unsigned long long)x->pages_to_scan,
		     (unsigned long long)x->sleep_ms);
	if (x->use_zero_pages != y->use_zero_pages ||
	    x->max_page_sharing != y->max_page_sharing ||
	    x->smart_scan != y->smart_scan)
		warn("%s: the kernel's use_zero_pages, max_page_sharing or smart_scan "
		     "differ from the forecast's (%llu, %llu, %llu)", path,
		     (unsigned long long)x->use_zero_pages,
		     (unsigned long long)x->max_page_sharing,
		     (unsigned long long)x->smart_scan);
	if (a->elsewhere)
		warn("%s: %zu other processes have %llu pages merged: the host's "
		     "figures count them, the forecast does not", path,
		     a->elsewhere_procs, (unsigned long long)a->elsewhere);
	for (size_t i = 0; i < f->nprocs; i++)
		if (a->gone[i])
			warn("%s: %s %s since the forecast", path, f->procs[i].input,
			     a->gone[i] == 1 ? "has exited" :
			     "is another process (it started later)");
}

int check_report(const struct writer *w, const char *path,
		 const struct forecast *f, const struct forecast_actual *a,
		 double tolerance, int people)
{
	struct check c = { w, people, tolerance, 0, 0 };
	uint64_t done, k;

	if (a->full_scans < f->full_scans) {
		error("%s: the kernel's full_scans is %llu, below the %llu it was "
		      "when the forecast began: KSM was unmerged (run=2) or the "
		      "host restarted since", path,
		      (unsigned long long)a->full_scans,
		      (unsigned long long)f->full_scans);
		return 1;
	}
	done = a->full_scans - f->full_scans;
	k = done < f->nscans - 1 ? done : f->nscans - 1;
	warnings(path, f, a);
	report_begin(w, "check", people, check_cols, NCOLS, people_cols,
		     NPEOPLE);
	host_rows(&c, f, a, k);
	for (size_t i = 0; i < f->nprocs; i++)
		process_rows(&c, f, a, i);
	if (people)
		sentences(&c, f, done, k);
	w->end();
	return c.outside ? 1 : 0;
}
