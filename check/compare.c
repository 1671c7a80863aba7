/* SPDX-License-Identifier: MIT */
/*
 * A forecast against the kernel afterwards (check_compare()). The host's
 * counters are compared with the forecast's after as many full scans as
 * ksmd has done since the forecast began (the kernel's full_scans less the
 * one the forecast noted), or its last if ksmd did more; each process's
 * /proc/PID/ksm_stat with the forecast's at its last full scan. A row is
 * within the tolerance when |error_percent| is at most its percent, or when
 * forecast and actual differ by at most its pages: a live process writes a
 * few pages between the forecast and the merge, which is no error of the
 * forecast but is many percent of a small process's figures. A figure
 * forecast 0 and found otherwise is infinitely wrong (unless within the
 * pages), and a process gone has no actual figure: both are outside.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../util/util.h"
#include "compare.h"

/* Rows per process and for the host, at most. */
#define FIGURES 4

/* The relative error of @actual against @forecast, in percent. */
static double error_percent(double forecast, double actual)
{
	if (isnan(actual))
		return NAN;
	if (forecast == 0)
		return actual == 0 ? 0 : copysign(INFINITY, actual);
	return 100 * (actual - forecast) / fabs(forecast);
}

/*
 * Whether |@forecast - @actual| is at most @t's pages; a figure in bytes
 * counts its difference in pages, rounded to the nearest (a page merged
 * more or less moves a profit by a page less its rmap_item).
 */
static int within_pages(const struct check_tolerance *t, int bytes,
			double forecast, double actual)
{
	double d = fabs(actual - forecast);	/* NaN when gone: false below */

	if (bytes)
		d = round(d / (double)sysconf(_SC_PAGESIZE));
	return d <= (double)t->pages;
}

/* One figure: its row, and whether it is within the tolerance. */
static void figure(struct check_result *c, const struct check_tolerance *t,
		   const char *input, const char *name, double forecast,
		   double actual, uint64_t scan)
{
	struct check_row *r = &c->rows[c->nrows++];

	snprintf(r->input, sizeof(r->input), "%s", input);
	r->figure = name;
	r->forecast = forecast;
	r->actual = actual;
	r->error = error_percent(forecast, actual);
	r->scan = scan;
	/* both false for NaN */
	r->within = fabs(r->error) <= t->percent ||
		    within_pages(t, strstr(name, "profit") != NULL, forecast, actual);
	c->outside += !r->within;
}

/* The host's rows: /sys/kernel/mm/ksm against the forecast's full scan. */
static void host_rows(struct check_result *c, const struct check_tolerance *tol,
		      const struct forecast *f, const struct forecast_actual *a)
{
	const struct forecast_scan *s = &f->scans[c->scan];

	figure(c, tol, "*", "pages_shared", (double)s->pages_shared,
	       (double)a->now.pages_shared, c->scan);
	figure(c, tol, "*", "pages_sharing", (double)s->pages_sharing,
	       (double)a->now.pages_sharing, c->scan);
	if (f->set.use_zero_pages)
		figure(c, tol, "*", "ksm_zero_pages", (double)s->ksm_zero_pages,
		       (double)a->now.ksm_zero_pages, c->scan);
	figure(c, tol, "*", "general_profit", (double)s->general_profit,
	       (double)a->now.general_profit, c->scan);
}

/* A process's rows: its ksm_stat against the forecast's. */
static void process_rows(struct check_result *c,
			 const struct check_tolerance *tol,
			 const struct forecast *f,
			 const struct forecast_actual *a, size_t i)
{
	const struct forecast_proc *p = &f->procs[i];
	const struct proc_ksm_stat *x = &a->procs[i], *e = &p->ksm;
	int gone = a->gone[i] != 0;

	figure(c, tol, p->input, "ksm_rmap_items", (double)e->rmap_items,
	       gone ? NAN : (double)x->rmap_items, p->scan);
	figure(c, tol, p->input, "ksm_merging_pages", (double)e->merging_pages,
	       gone ? NAN : (double)x->merging_pages, p->scan);
	if (f->set.use_zero_pages)
		figure(c, tol, p->input, "ksm_zero_pages", (double)e->zero_pages,
		       gone ? NAN : (double)x->zero_pages, p->scan);
	figure(c, tol, p->input, "ksm_process_profit", (double)e->process_profit,
	       gone ? NAN : (double)x->process_profit, p->scan);
	c->gone += gone && a->gone[i] != PROC_UNREADABLE;
	c->unreadable += a->gone[i] == PROC_UNREADABLE;
}

/* Say on standard error what makes the comparison unfair. */
static void warnings(const char *path, const struct forecast *f,
		     const struct forecast_actual *a, uint64_t done)
{
	const struct forecast_settings *x = &f->set, *y = &a->set;
	int tuner = strcmp(x->policy, "ksmtuned") == 0 ||
		    strcmp(x->policy, "kubevirt") == 0;

	if (done > f->nscans - 1)
		warn("%s: ksmd has done %llu full scans since the forecast began, "
		     "the forecast covers %llu: the host's figures are compared "
		     "with its last", path, (unsigned long long)done,
		     (unsigned long long)(f->nscans - 1));
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
		if (a->gone[i] == PROC_UNREADABLE)
			warn("%s: %s runs, but its ksm_stat cannot be read by this "
			     "user (run as root)", path, f->procs[i].input);
		else if (a->gone[i])
			warn("%s: %s %s since the forecast", path, f->procs[i].input,
			     a->gone[i] == PROC_EXITED ? "has exited" :
			     "is another process (it started later)");
}

enum check_status check_compare(const char *path, const struct forecast *f,
				const struct forecast_actual *a,
				const struct check_tolerance *t,
				struct check_result *c)
{
	memset(c, 0, sizeof(*c));
	c->tolerance = *t;
	if (a->full_scans < f->full_scans) {
		/* Not a wrong forecast: nothing to compare it with. */
		error("%s: the kernel's full_scans is %llu, below the %llu it was "
		      "when the forecast began: KSM was unmerged (run=2) or the "
		      "host restarted since; the kernel cannot be compared", path,
		      (unsigned long long)a->full_scans,
		      (unsigned long long)f->full_scans);
		return c->status = CHECK_UNCOMPARABLE;
	}
	c->done = a->full_scans - f->full_scans;
	c->scan = c->done < f->nscans - 1 ? c->done : f->nscans - 1;
	c->last = f->nscans - 1;
	warnings(path, f, a, c->done);
	c->rows = xcalloc(FIGURES * (f->nprocs + 1), sizeof(*c->rows));
	host_rows(c, t, f, a);
	for (size_t i = 0; i < f->nprocs; i++)
		process_rows(c, t, f, a, i);
	return c->status = c->outside ? CHECK_OUTSIDE : CHECK_WITHIN;
}

void check_result_free(struct check_result *c)
{
	free(c->rows);
	memset(c, 0, sizeof(*c));
}
