/* SPDX-License-Identifier: MIT */
/*
 * ksmscan: how much memory would Linux KSM save on these memory dumps?
 *
 * main() reads the command line into preferences (cli/: one table of
 * options, then the rules between them on the host's facts) and runs what
 * they ask for: -a help, --bench, --check, a scan (scan/scan.c) or a series
 * (scan/series.c), whose reports it creates, prints and frees. Everything
 * else lives in util/, host/, hash/, dump/, compress/, model/, scan/,
 * report/ and cli/ (see docs/architecture.md).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/options.h"
#include "hash/hash.h"
#include "hash/measure.h"
#include "host/kernel.h"
#include "host/ksm.h"
#include "host/memory.h"
#include "host/process.h"
#include "host/units.h"
#include "report/report.h"
#include "report/svg.h"
#include "report/write/writer.h"
#include "check/compare.h"
#include "check/forecast.h"
#include "scan/scan.h"
#include "scan/series.h"
#include "util/util.h"

/* Limit of -j's default. */
#define THREADS_MAX 256

/* The default number of hashing threads: the online CPUs. */
static unsigned online_cpus(void)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	return cpus < 1 ? 1 : cpus > THREADS_MAX ? THREADS_MAX : (unsigned)cpus;
}

/* Scan the inputs and print the selected reports through @w. */
static int run_scan(struct prefs *p, const struct writer *w)
{
	int status, failed = 0;
	struct svg_bars bars = { 0 };
	struct report_setup rs = {
		.scan = &p->cfg, .out = w, .top = p->top,
		.compressors = p->compressors,
		.ncompressors = p->compress ? p->ncompressors : 0,
		.long_table = p->long_table, .svg = p->svg, .bars = &bars,
		.failed = &failed, .sketch_size = p->sketch_size, .host = p->host,
		.series = p->series_on || p->count ? &p->series : NULL,
		.version = KSMSCAN_VERSION,
		.known = p->known, .nknown = p->nknown,
		.domains = p->cfg.groups, .ndomains = p->ndomains,
		.listed_max = p->by_process ? LISTED_ROWS_MAX : 0,
	};
	struct sink *sinks[REPORTS_MAX + 1];	/* and the picture's */

	if (p->series.from_record && series_record_load(&p->cfg, &p->series) < 0)
		return EXIT_INPUT;
	if (rs.series && !p->series.from_record &&
	    series_fits(&p->cfg, &p->series) < 0)
		return EXIT_INPUT;
	params_report(&rs);
	for (size_t i = 0; i < report_count(); i++)
		if (p->reports & UINT64_C(1) << i)
			sinks[p->cfg.nsinks++] = report_get(i)->create(&rs);
	if (p->svg)
		sinks[p->cfg.nsinks++] = svg_create(&rs);
	p->cfg.sinks = sinks;
	status = rs.series ? series_run(&p->cfg, rs.series) : scan_run(&p->cfg);
	for (size_t i = 0; i < p->cfg.nsinks; i++)
		sinks[i]->ops->print(sinks[i]);
	w->finish(w);
	for (size_t i = 0; i < p->cfg.nsinks; i++)
		sinks[i]->ops->free(sinks[i]);
	free(bars.v);
	free(bars.drawings);
	return status | failed;
}

/* --bench: time the algorithms and print the bench report through @w. */
static int run_bench(const struct prefs *p, const struct writer *w)
{
	struct hash_speed *rows = xcalloc(p->cfg.nalgos, sizeof(*rows));
	const struct algo *autopick;
	size_t stream = hash_measure(p->cfg.algos, p->cfg.nalgos, rows, &autopick,
				     p->cfg.progress);

	bench_report(w, rows, p->cfg.nalgos, autopick, stream);
	w->finish(w);
	free(rows);
	return EXIT_OK;
}

/*
 * --check: the forecast read back and compared with the kernel's figures;
 * the exit status says how it ended (enum check_status).
 */
static int run_check(const struct prefs *p, const struct writer *w)
{
	struct forecast f;
	struct forecast_actual a;
	struct check_result c = { 0 };
	struct check_tolerance t = {
		.percent = p->tolerance < 0 ? 10 : p->tolerance,
		.pages = p->tolerance_pages == UINT64_MAX ? 0 : p->tolerance_pages,
	};
	char why[300];
	int status;

	if (p->ninputs)
		usage_error("--check reads no input: its processes are the "
			    "forecast's");
	if (forecast_read(p->check, &f, why, sizeof(why)) < 0) {
		error("%s: %s", p->check, why);
		return CHECK_NOT_FORECAST;
	}
	if (forecast_actual(&f, &a) < 0) {
		error("%s: this kernel has no KSM (no /sys/kernel/mm/ksm/full_scans): "
		      "the kernel cannot be compared", p->check);
		status = CHECK_UNCOMPARABLE;
	} else if ((status = check_compare(p->check, &f, &a, &t, &c)) !=
		   CHECK_UNCOMPARABLE) {
		check_report(w, &c, !p->long_table && (w->flags & WRITER_PEOPLE));
		w->finish(w);
	}
	check_result_free(&c);
	forecast_free(&f);
	forecast_actual_free(&a);
	return status;
}

/* Run what the command line asked for through @w: the exit status. */
static int dispatch(struct prefs *p, const struct writer *w, int listed)
{
	if (p->algos_help) {
		algos_report(w);
		return EXIT_OK;
	}
	if (p->check)
		return run_check(p, w);
	if (p->bench) {
		if (p->ninputs)
			usage_error("--bench reads no input");
		/* Without -a, every algorithm is measured. */
		if (!p->algos_given)
			prefs_algos(p, "all");
		return run_bench(p, w);
	}
	if (p->ninputs == 0 && listed)
		return EXIT_INPUT;	/* expand_processes() said why */
	if (p->ninputs == 0)
		usage_error("no input file or process");
	if (!p->cfg.threads)
		p->cfg.threads = online_cpus();
	return run_scan(p, w);
}

/* KSM's full_scans now, for the host's facts. */
static int full_scans(int64_t *value)
{
	return ksm_sysfs_signed("full_scans", value);
}

/* What the rules between options may ask of this host. */
static const struct host_facts live_host = {
	.hz = kernel_hz, .meminfo = host_meminfo, .full_scans = full_scans,
	.start_time = proc_start_time, .soft_dirty = kernel_soft_dirty,
	.processes = procs_list, .unit = unit_read,
};

int main(int argc, char **argv)
{
	struct writer *w;
	struct prefs p;
	int status;

	/*
	 * Past a file size limit (ulimit -f), a write fails with EFBIG and is
	 * reported like any other, rather than the signal ending the run with
	 * nothing printed.
	 */
	signal(SIGXFSZ, SIG_IGN);
	hash_init();
	prefs_init(&p, argc);
	options_parse(&p, argc, argv);
	options_setup(&p, &live_host);
	/* Tables for people fit 80 columns; -l shows every column. */
	w = writer_open(p.output, p.long_table ? 0 : 80);
	status = dispatch(&p, w, p.listed);
	if (output_close() < 0)
		status = EXIT_INPUT;
	writer_close(w);
	prefs_free(&p);
	return status;
}
