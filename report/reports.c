/* SPDX-License-Identifier: MIT */
/*
 * The table of reports -r can name, in the order they are printed. Adding a
 * report: write report/NAME.c with a sink and NAME_create(), declare that in
 * report.h, and add its row here.
 */
#include <stdlib.h>
#include <string.h>

#include "../host/kernel.h"
#include "../scan/domains.h"
#include "../util/text.h"
#include "../util/util.h"
#include "report.h"

static const struct report reports[] = {
	/* pages first: its rows stream during the scan, before any other report */
	{ "pages", pages_create, 0 },
	{ "summary", summary_create, 0 },
	{ "histogram", histogram_create, 0 },
	{ "regions", regions_create, 0 },
	{ "top", top_create, 0 },
	{ "tree", tree_create, 0 },
	{ "compress", compress_create, 0 },
	{ "matrix", matrix_create, 0 },
	{ "contents", contents_create, 0 },
	{ "sketch", sketch_create, 0 },
	{ "exposure", exposure_create, REPORT_DOMAINS },
	{ "mitigations", mitigations_create, REPORT_DOMAINS },
	{ "doctor", doctor_create, 0 },
	{ "thp", thp_create, 0 },
	{ "numa", numa_create, 0 },
	{ "timeline", timeline_create, REPORT_SERIES },
	{ "processes", processes_create, REPORT_SERIES },
	{ "volatility", volatility_create, REPORT_SERIES },
	{ "policies", policies_create, REPORT_SERIES },
	{ "advise", advise_create, REPORT_SERIES },
};
_Static_assert(sizeof(reports) / sizeof(reports[0]) <= REPORTS_MAX,
	       "more reports than REPORTS_MAX: widen the selection's bit mask");

const struct report *report_lookup(const char *name, size_t len)
{
	for (size_t i = 0; i < sizeof(reports) / sizeof(reports[0]); i++)
		if (strlen(reports[i].name) == len &&
		    strncmp(reports[i].name, name, len) == 0)
			return &reports[i];
	return NULL;
}

size_t report_count(void)
{
	return sizeof(reports) / sizeof(reports[0]);
}

const struct report *report_get(size_t i)
{
	return &reports[i];
}

void *report_sink_new(size_t size, const struct sink_ops *ops,
		      const struct report_setup *rs)
{
	struct report_sink *r = xcalloc(1, size);

	r->sink.ops = ops;
	r->rs = rs;
	return r;
}

struct sink *scope_sink_new(const struct report_setup *rs,
			    const struct sink_ops *ops)
{
	return report_sink_new(sizeof(struct scope_sink), ops, rs);
}

void scope_sink_scope(struct sink *sk, const struct scope *sc)
{
	struct scope_sink *s = (struct scope_sink *)sk;

	s->rows = xreallocarray(s->rows, s->nrows + 1, sizeof(*s->rows));
	s->rows[s->nrows++] = (struct scope_copy){
		.name = sc->name, .format = sc->format, .all = sc->all,
		.status = sc->status, .why = sc->why ? xstrdup(sc->why) : NULL,
		.f = *sc->f, .group = sc->group, .shared_bytes = sc->shared_bytes,
	};
	if (sc->proc)
		s->rows[s->nrows - 1].proc = *sc->proc;
}

void scope_sink_series(struct sink *sk, const struct series_result *r)
{
	struct scope_sink *s = (struct scope_sink *)sk;
	struct scope_copy *row;
	struct ksmd_cpu cpu = { 0 };

	scope_sink_scope(sk, r->last);
	row = &s->rows[s->nrows - 1];
	row->seconds_to_90 = r->seconds_to_90;
	row->nsnaps = r->nsnaps;
	row->scans = r->nrows;
	row->seconds = r->rows[r->nrows - 1].seconds;
	for (size_t i = 0; i < r->nrows; i++)
		ksmd_cpu_add(&cpu, &r->rows[i]);
	row->cpu_mean = ksmd_cpu_mean(&cpu);
	row->cpu_peak = ksmd_cpu_peak(&cpu);
}

const char *scope_status_name(enum scope_status st)
{
	return st == SCOPE_OK ? "ok" : st == SCOPE_PARTIAL ? "partial" : "failed";
}

const char *scope_status_label(enum scope_status st, const struct figures *f)
{
	return st == SCOPE_OK && f->estimate ? "estimate" : scope_status_name(st);
}

void recs_sink_page(struct sink *sk, const struct page_event *pg)
{
	struct recs_sink *s = (struct recs_sink *)sk;

	if (!s->r.rs->scan->inputs[pg->input_no].path)
		page_recs_add(&s->recs, pg);
}

void report_domains(struct domains *d, const struct report_setup *rs)
{
	d->groups = rs->domains;
	d->n = rs->ndomains;
	d->known = rs->known;
	d->nknown = rs->nknown;
	d->failed = rs->failed;
	domains_init(d, rs->scan);
}

int for_people(const struct report_setup *rs)
{
	return !rs->long_table && strcmp(rs->out->name, "table") == 0;
}

void hz_note(const struct report_setup *rs)
{
	char text[200];
	unsigned hz, kernel;

	if (!rs->series || strcmp(rs->out->name, "table") != 0)
		return;
	hz = rs->series->hz;
	kernel = kernel_hz();
	if (!hz)
		snprintf(text, sizeof(text), "ksmd's wake-ups every sleep_millisecs "
			 "exactly (--hz=0, no jiffies).");
	else if (hz == kernel)
		snprintf(text, sizeof(text), "ksmd's wake-ups at HZ=%u (this "
			 "kernel's; --hz to change).", hz);
	else if (kernel)
		snprintf(text, sizeof(text), "ksmd's wake-ups at HZ=%u (--hz; this "
			 "kernel's is %u).", hz, kernel);
	else
		snprintf(text, sizeof(text), "ksmd's wake-ups at HZ=%u (this "
			 "kernel's HZ could not be read; --hz to set it).", hz);
	rs->out->note(rs->out, text);
}

void scope_sink_free(struct sink *sk)
{
	struct scope_sink *s = (struct scope_sink *)sk;

	for (size_t i = 0; i < s->nrows; i++)
		free(s->rows[i].why);
	free(s->rows);
	free(s);
}

int any_process(const struct scan_config *cfg)
{
	for (size_t i = 0; i < cfg->ninputs; i++)
		if (!cfg->inputs[i].path)
			return 1;
	return 0;
}

