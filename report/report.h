/* SPDX-License-Identifier: MIT */
#ifndef KSMSCAN_REPORT_H
#define KSMSCAN_REPORT_H

#include <stddef.h>

/*
 * The reports: what one is made with (struct report_setup), the table of
 * those -r can name (reports.c), each one's constructor, and the reports a
 * run prints without -r (bench, check, -a help, JSON's parameters). A
 * report builds rows of cells (write/cell.h) that the run's writer
 * (write/writer.h) prints; what reports share is in report_sink.h.
 */

struct writer;
struct scan_config;
struct compressor;
struct svg_bars;
struct series_params;
struct group;
struct sink;
struct hash_speed;
struct algo;
struct check_result;

/* What a report is made with. */
struct report_setup {
	const struct scan_config *scan;	/* algorithms, inputs, KSM parameters */
	const struct writer *out;	/* the output */
	size_t top;			/* rows per input of the top report */
	const struct compressor *const *compressors;	/* -c, in order */
	size_t ncompressors;
	int long_table;			/* -l: tables with every column */
	const char *svg;		/* --svg: the picture's file, or NULL */
	struct svg_bars *bars;		/* with --svg: bars other reports add */
	int *failed;			/* set when a report cannot be written */
	size_t sketch_size;		/* rows per input of the sketch report */
	const char *host;		/* --host: the host column of contents and
					 * sketch; NULL for gethostname() */
	const struct series_params *series;	/* --series: the snapshots'
						 * timing; NULL for other runs */
	const char *version;		/* ksmscan's, for JSON's parameters */
	const char *const *known;	/* --known: files whose pages the
					 * exposure report names */
	size_t nknown;
	const struct group *domains;	/* the trust domains: the --group
					 * groups, or without them the --by
					 * rows (never the --enable one) */
	size_t ndomains;
	size_t listed_max;		/* with a WRITER_METRICS output, the most
					 * rows of processes found by -P or
					 * --all-processes: 0, or LISTED_ROWS_MAX
					 * with --by=process */
};

/* The most rows of listed processes a metrics output has, with --by=process:
 * each is a series of its own, and pids change from run to run. */
#define LISTED_ROWS_MAX 500

/* The most reports the table may hold: -r's selection is a bit mask of this
 * many bits (reports.c checks the table against it when it is compiled). */
#define REPORTS_MAX 64

/* What a report needs of the command line, as bits of struct report's needs. */
enum {
	REPORT_SERIES = 1 << 0,		/* --series (or -p PID --count) */
	REPORT_DOMAINS = 1 << 1,	/* two --groups or more, each input in
					 * exactly one: trust domains */
};

/* A report -r can name: one row of the table in reports.c. */
struct report {
	const char *name;		/* its name for -r */
	/** create() - a new sink that will print this report. */
	struct sink *(*create)(const struct report_setup *rs);
	unsigned needs;			/* REPORT_* bits */
};

/**
 * report_lookup() - a report by name.
 * @name: the name, not necessarily NUL-terminated
 * @len: its length
 *
 * Return: the report, or NULL.
 */
const struct report *report_lookup(const char *name, size_t len);

/**
 * report_count() - how many reports the table has.
 */
size_t report_count(void);

/**
 * report_get() - report number @i of the table, in printing order.
 * @i: 0 .. report_count() - 1
 */
const struct report *report_get(size_t i);

/* The sinks of the reports, one file each (a row of reports.c's table). */

/** summary_create() - the KSM figures per input and algorithm. */
struct sink *summary_create(const struct report_setup *rs);
/** histogram_create() - contents by how many pages share them, like zdb -S. */
struct sink *histogram_create(const struct report_setup *rs);
/** regions_create() - pages, zero and redundant pages per region. */
struct sink *regions_create(const struct report_setup *rs);
/** top_create() - the most-shared contents of each input. */
struct sink *top_create(const struct report_setup *rs);
/** tree_create() - KSM's memcmp tree against checksum-first trees. */
struct sink *tree_create(const struct report_setup *rs);
/** pages_create() - one row per page, streamed as pages are counted. */
struct sink *pages_create(const struct report_setup *rs);
/** compress_create() - what zram would hold, alone and after KSM. */
struct sink *compress_create(const struct report_setup *rs);
/** advise_create() - the settings of ksmd (fixed, the advisor's) that reach a target. */
struct sink *advise_create(const struct report_setup *rs);
/** policies_create() - each policy's replay of a series, side by side. */
struct sink *policies_create(const struct report_setup *rs);
/** processes_create() - a live series' forecast for each process. */
struct sink *processes_create(const struct report_setup *rs);
/** timeline_create() - ksmd's counters after each full scan of a series. */
struct sink *timeline_create(const struct report_setup *rs);
/** volatility_create() - how each snapshot of a series differs from the last. */
struct sink *volatility_create(const struct report_setup *rs);
/** svg_create() - the picture of --svg: histograms and address maps. */
struct sink *svg_create(const struct report_setup *rs);
/** contents_create() - each input's distinct contents by XXH3-128 digest. */
struct sink *contents_create(const struct report_setup *rs);
/** sketch_create() - each input's contents with the smallest digests. */
struct sink *sketch_create(const struct report_setup *rs);
/** matrix_create() - what every pair of inputs shares, byte-exact. */
struct sink *matrix_create(const struct report_setup *rs);
/** exposure_create() - what KSM would merge across trust domains, by kind. */
struct sink *exposure_create(const struct report_setup *rs);
/** mitigations_create() - the saving under rules that limit that merging. */
struct sink *mitigations_create(const struct report_setup *rs);
/** doctor_create() - why live processes' memory will not merge, per reason. */
struct sink *doctor_create(const struct report_setup *rs);
/** numa_create() - the saving with merge_across_nodes 1 and 0. */
struct sink *numa_create(const struct report_setup *rs);
/** thp_create() - the huge pages a merge would split, and the saving without. */
struct sink *thp_create(const struct report_setup *rs);

/* The reports a run prints without -r. */

/**
 * params_report() - the run's parameters (what the figures depend on),
 * before any report: JSON keeps them as "parameters", other formats drop them.
 * @rs: the run's report setup
 */
void params_report(const struct report_setup *rs);

/**
 * bench_report() - the bench report (--bench).
 * @w: the writer
 * @rows: one per algorithm
 * @nrows: how many
 * @autopick: the algorithm -a auto chooses on this machine
 * @stream_bytes: size of the streaming buffer
 */
void bench_report(const struct writer *w, const struct hash_speed *rows,
		  size_t nrows, const struct algo *autopick, size_t stream_bytes);

/**
 * check_report() - the rows of a check (--check): the host's counters and
 * each process's ksm_stat, forecast against actual, with the relative error.
 * @w: the writer
 * @c: the check (check_compare())
 * @people: a table for people (short names, sentences under it)
 */
void check_report(const struct writer *w, const struct check_result *c,
		  int people);

/**
 * algos_report() - the algorithms of the table with their widths, the
 * implementation in use and their definitions (-a help); ends the output.
 * @w: the writer
 */
void algos_report(const struct writer *w);

#endif
