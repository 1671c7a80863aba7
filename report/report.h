/* SPDX-License-Identifier: MIT */
#ifndef KSMSCAN_REPORT_H
#define KSMSCAN_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../host/process.h"
#include "../compress/compress.h"
#include "../hash/hash.h"
#include "../hash/measure.h"
#include "../scan/pagerec.h"
#include "../scan/scan.h"
#include "../check/compare.h"
#include "../scan/series.h"

/*
 * Reports build rows of typed cells; a writer (table, CSV or JSON), chosen once,
 * prints them. Only this module writes standard output.
 */

/* What a cell holds. */
enum cell_kind {
	CELL_STR,	/* text, left-aligned in tables, quoted in JSON */
	CELL_UINT,	/* unsigned integer */
	CELL_INT,	/* signed integer */
	CELL_REAL,	/* real number printed with prec decimals (prec < 0: %g) */
	CELL_HEX,	/* unsigned integer printed as 0x-prefixed hex, a string in JSON */
	CELL_DIGEST,	/* hex digest text, a string in JSON, right-aligned in tables */
	CELL_BYTES,	/* a size: the number of bytes, in tables K/M/G/T of 1024 */
};

/* One value of a row. */
struct cell {
	enum cell_kind kind;
	const char *s;		/* CELL_STR, CELL_DIGEST */
	uint64_t u;		/* CELL_UINT, CELL_HEX, CELL_BYTES */
	int64_t i;		/* CELL_INT */
	double r;		/* CELL_REAL */
	int prec;		/* CELL_REAL: decimals, or -1 for 6 significant digits */
};

/*
 * What a table for people makes of a column (-l, CSV, JSON and OpenMetrics
 * show the column as the rows give it). The report gives each row once, with
 * every figure; the table writer derives what people read from this.
 */
struct people_view {
	const char *name;	/* a short name; NULL: the column's */
	int decimals;		/* a real's decimals, as DECIMALS(n); 0: the row's */
	const char *nan;	/* a NaN (never reached, gone, unknown) as this word */
	const char *no, *yes;	/* 0 and 1 as these words; NULL: the number */
	int size;		/* shown as a size in units of 1024: SIZE_PAGES, a
				 * count of pages, or SIZE_BYTES; 0: as it is */
	int cut;		/* a name cut in the middle to this many columns */
};

/* struct people_view's decimals: @n decimals (0 would mean the row's). */
#define DECIMALS(n) ((n) + 1)
/* struct people_view's size. */
#define SIZE_PAGES 1
#define SIZE_BYTES 2

/* A column: its name (fixed: see the README's reports), for streamed reports
 * a width, and what people see of it. */
struct column {
	const char *name;
	int width;		/* table width for streamed rows; 0: measure the rows */
	int flags;		/* COL_TABLE_ONLY, COL_DROP, COL_PEOPLE_ONLY,
				 * COL_NOT_PEOPLE */
	struct people_view people;
};

/* A column of its name alone, or with flags. */
#define COL(n) { n, 0, 0, { 0 } }
#define COL_F(n, f) { n, 0, f, { 0 } }

/* For tables only (a bar chart): not in CSV or JSON. */
#define COL_TABLE_ONLY 1
/* A table for people may leave it out to fit 80 columns (a note names it;
 * -l shows it). */
#define COL_DROP 2
/* Only in the table for people (a figure said another way, such as a size
 * from two counters): not in -l, CSV or JSON. */
#define COL_PEOPLE_ONLY 4
/* Never in the table for people (-l shows it). */
#define COL_NOT_PEOPLE 8

/* What begins a note that is a shell command (struct writer's note()). */
#define NOTE_SHELL "$ "

/*
 * An output format, and one output of it: writer_open() makes an instance
 * (its state, such as a table's held rows, is its own, so one run could
 * write two outputs); every operation takes the instance.
 */
struct writer {
	const char *name;	/* table, csv, json, openmetrics, sh, tmpfiles */
	int settings;		/* takes only settings to apply (sh, tmpfiles):
				 * rows of a name under /sys/kernel/mm/ksm and
				 * its value, as text, in the order to write
				 * them; only -r advise gives them */
	/** begin() - a report starts; @stream: rows must not be held back. */
	void (*begin)(const struct writer *w, const char *report,
		      const struct column *cols, size_t ncols, int stream);
	/** row() - one row, one cell per column. */
	void (*row)(const struct writer *w, const struct cell *cells);
	/**
	 * note() - a line for people reading a table; other formats drop it.
	 * A note that begins with NOTE_SHELL is a command to paste, whose
	 * words shell_quote() made: it is printed indented, neither wrapped
	 * nor changed.
	 */
	void (*note)(const struct writer *w, const char *text);
	/** total() - a totals row under a table; other formats drop it. */
	void (*total)(const struct writer *w, const struct cell *cells);
	/** end() - the report is complete. */
	void (*end)(const struct writer *w);
	/** finish() - the output is complete. */
	void (*finish)(const struct writer *w);
	/**
	 * params() - the run's parameters, one cell per column, before any
	 * report; JSON keeps them (key "parameters"), other formats drop them.
	 */
	void (*params)(const struct writer *w, const struct column *cols,
		       const struct cell *cells, size_t ncols);
	/** size - the bytes of an instance's state (0: none), zeroed at open. */
	size_t size;
	/** close() - free what the state holds (NULL: nothing). */
	void (*close)(void *state);
	void *state;		/* an instance's own (writer_open()) */
	int fit;		/* an instance's: tables fit this many columns,
				 * 0 for no limit (-l) */
};
/**
 * writer_lookup() - find an output format by name.
 * @name: "table", "csv" or "json"
 *
 * Return: the writer, or NULL.
 */
const struct writer *writer_lookup(const char *name);

/**
 * writer_open() - an output of format @name, on standard output.
 * @name: as writer_lookup()
 * @fit: the width tables for people fit (80), or 0 for no limit (-l): the
 *	table writer then shortens long names, wraps the last column's text,
 *	scales bars and leaves out the columns marked drop, saying which
 *
 * Return: the instance (writer_close() it), or NULL for no such format.
 */
struct writer *writer_open(const char *name, int fit);

/**
 * writer_close() - free an output's state.
 * @w: from writer_open(), or NULL
 */
void writer_close(struct writer *w);

/**
 * writer_name() - the name of output format @i, for --help and messages.
 * @i: from 0
 *
 * Return: the name, or NULL past the last.
 */
const char *writer_name(size_t i);

/**
 * output_close() - flush standard output and check that every write succeeded.
 *
 * Return: 0, or -1 after reporting the error (e.g. a full disk or closed pipe).
 */
int output_close(void);

/* Cell constructors, so that reports read as lists of values. */

/** cell_str() - a text cell. */
struct cell cell_str(const char *s);
/** cell_uint() - an unsigned integer cell. */
struct cell cell_uint(uint64_t u);
/** cell_int() - a signed integer cell. */
struct cell cell_int(int64_t i);
/** cell_real() - a real cell with @prec decimals (-1: 6 significant digits). */
struct cell cell_real(double r, int prec);
/** cell_hex() - an address cell, printed 0x-prefixed. */
struct cell cell_hex(uint64_t u);
/** cell_digest() - a digest cell holding hex text. */
struct cell cell_digest(const char *s);
/** cell_bytes() - a size in bytes, which tables show in units of 1024. */
struct cell cell_bytes(uint64_t u);


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

/* The reports of -r: each is a sink (scan/sink.h) that prints through a writer. */

/* A bar another report adds to the --svg picture: a size for one input. */
struct svg_bar {
	const char *input;		/* the input's name, as its scope had it */
	char label[40];			/* what the size is */
	uint64_t bytes;
};

/*
 * A drawing another report adds to the --svg picture, below the inputs'
 * pictures: the report writes it (its own SVG elements) when svg.c asks.
 */
struct svg_drawing {
	int height;			/* the height it takes */
	/**
	 * draw() - write the drawing's SVG elements from @y down, within
	 * @width; @arg is the report's.
	 */
	void (*draw)(FILE *f, int y, int width, const void *arg);
	const void *arg;		/* valid until the reports are freed */
};

/* The bars other reports added, drawn after the input's own pictures, and
 * their drawings, after every input. */
struct svg_bars {
	struct svg_bar *v;
	size_t n;
	struct svg_drawing *drawings;
	size_t ndrawings;
};

/**
 * svg_text() - write text for an SVG element or attribute value: & < > " '
 * escaped, controls and what would drive a terminal as '?' (text_clean()).
 * @f: the picture
 * @s: the text
 */
void svg_text(FILE *f, const char *s);

/**
 * svg_drawing_add() - add a drawing to the --svg picture (from a report's
 * scope(), before the picture is printed).
 * @bars: the list
 * @d: the drawing
 */
void svg_drawing_add(struct svg_bars *bars, const struct svg_drawing *d);

/**
 * svg_bar_add() - add a bar to the --svg picture (reports printed before it).
 * @bars: the list
 * @input: the input's name ("*" is not drawn)
 * @label: what the size is
 * @bytes: the size
 */
void svg_bar_add(struct svg_bars *bars, const char *input, const char *label,
		 uint64_t bytes);

/* What a report is made with. */
struct report_setup {
	const struct scan_config *scan;	/* algorithms, inputs, KSM parameters */
	const struct writer *out;	/* the output format */
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
};

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

/* A scope's figures, kept for reports printed after the scan. */
struct scope_copy {
	const char *name;		/* the input's name, or "*" */
	const char *format;		/* as in struct scope */
	int all;			/* the scope of all inputs */
	enum scope_status status;	/* how completely it was read */
	char *why;			/* its first error, or NULL */
	struct figures f;
	int group;			/* a --group's scope */
	uint64_t shared_bytes;		/* a group's: saved only together with
					 * the other inputs (struct scope) */
	struct proc_stats proc;		/* a live process's KSM state (valid 0
					 * for files, "*" and groups) */
	double seconds_to_90;		/* a series' row: when pages_sharing
					 * first reached 90% of its last value */
	size_t nsnaps, scans;		/* a series' row: snapshots (0 for other
					 * rows), full scans */
	double seconds;			/* a series' row: its replay's length */
	double cpu_mean, cpu_peak;	/* a series' row: ksmd's CPU over the
					 * replay (ksmd_cpu_mean(), _peak()) */
};

/* The first member of every report's state (container_of style): the sink
 * the engine calls, and the setup the report prints with. */
struct report_sink {
	struct sink sink;
	const struct report_setup *rs;
};

/**
 * report_sink_new() - a report's zeroed state, its struct report_sink set.
 * @size: the state's size; its first member is a struct report_sink
 * @ops: the report's hooks
 * @rs: the report's setup
 *
 * Return: the state (free() it); ends the program if memory is out. It
 * points to its first member's sink too, so a create() may return it as
 * the struct sink *.
 */
void *report_sink_new(size_t size, const struct sink_ops *ops,
		      const struct report_setup *rs);

/* A sink that keeps every scope's figures and prints them after the scan. */
struct scope_sink {
	struct report_sink r;		/* first: its sink and its setup */
	struct scope_copy *rows;	/* the scopes in order, "*" last */
	size_t nrows;
};

/**
 * scope_sink_new() - a sink that keeps the scopes' figures.
 * @rs: the report's setup
 * @ops: its hooks: scope_sink_scope(), scope_sink_free() and its print()
 */
struct sink *scope_sink_new(const struct report_setup *rs,
			    const struct sink_ops *ops);

/** scope_sink_scope() - the scope() hook of a scope sink: keep a copy. */
void scope_sink_scope(struct sink *s, const struct scope *sc);

/**
 * scope_sink_series() - the series() hook of a scope sink: keep the last
 * snapshot's scope, with the replay's figures, as the series' row.
 */
void scope_sink_series(struct sink *s, const struct series_result *r);

/** scope_sink_free() - the free() hook of a scope sink. */
void scope_sink_free(struct sink *s);

/** any_process() - whether any input of the run is a live process. */
int any_process(const struct scan_config *cfg);

/** scope_status_name() - "ok", "partial" or "failed". */
const char *scope_status_name(enum scope_status st);

/**
 * scope_status_label() - the summary's status: scope_status_name(), but
 * "estimate" for a scope read in full whose frames were estimated (live
 * processes read without root).
 * @st: the scope's status
 * @f: its figures
 */
const char *scope_status_label(enum scope_status st, const struct figures *f);

/* The first members of the thp and numa reports' states. */
struct recs_sink {
	struct report_sink r;
	struct page_recs recs;
};

/**
 * recs_sink_page() - their page() hook: record each page of a live process.
 * @s: the sink, whose state begins with a struct recs_sink
 * @pg: the page
 */
void recs_sink_page(struct sink *s, const struct page_event *pg);

struct domains;

/**
 * report_domains() - the trust domains of the exposure and mitigations
 * reports, from the run's --groups and --known files (scan/domains.h).
 * @d: zeroed
 * @rs: the report's setup; an unreadable --known file sets *rs->failed
 */
void report_domains(struct domains *d, const struct report_setup *rs);

/**
 * for_people() - whether a report is printed for people: a table without
 * -l. Its columns need not ask (the writer applies their people view);
 * what a report says besides them does: sentences, fewer rows.
 * @rs: the report's setup
 */
int for_people(const struct report_setup *rs);

/**
 * hz_note() - under a table for people whose times follow ksmd's wake-ups
 * (a series' replay), a note naming the HZ they assume and where it comes
 * from: this kernel's, --hz, or neither when this kernel's cannot be read.
 * Nothing for other outputs or without a series.
 * @rs: the report's setup (its series' hz)
 */
void hz_note(const struct report_setup *rs);

/**
 * status_why() - a summary row's status as people read it: with the reason
 * a scope failed, without the input's name it repeats.
 * @in: the row
 * @buf: room for it
 * @len: size of @buf
 *
 * Return: @buf.
 */
const char *status_why(const struct scope_copy *in, char *buf, size_t len);

/**
 * summary_checksums() - for people, the checksums' own figures apart (a
 * table of one line per input and algorithm) when there are several.
 * @rs: the report's setup
 * @rows: the summary's rows
 * @n: how many
 */
void summary_checksums(const struct report_setup *rs,
		       const struct scope_copy *rows, size_t n);

/**
 * summary_sentences() - the summary's notes for people (tables only): what
 * each input's saving is made of, other KSM settings, the checksum, what
 * exists only across inputs, and that KSM merges only mergeable memory.
 * @rs: the report's setup
 * @rows: the scopes, "*" last if there are several inputs
 * @n: how many
 */
void summary_sentences(const struct report_setup *rs,
		       const struct scope_copy *rows, size_t n);

/**
 * params_report() - the run's parameters (what the figures depend on),
 * before any report: JSON keeps them as "parameters", other formats drop them.
 * @rs: the run's report setup
 */
void params_report(const struct report_setup *rs);

/* The sinks of the reports, one file each. */

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

#endif
