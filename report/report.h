/* SPDX-License-Identifier: MIT */
#ifndef KSMSCAN_REPORT_H
#define KSMSCAN_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include "../hash/hash.h"
#include "../scan/ksm.h"
#include "../scan/tree.h"

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
};

/* One value of a row. */
struct cell {
	enum cell_kind kind;
	const char *s;		/* CELL_STR, CELL_DIGEST */
	uint64_t u;		/* CELL_UINT, CELL_HEX */
	int64_t i;		/* CELL_INT */
	double r;		/* CELL_REAL */
	int prec;		/* CELL_REAL: decimals, or -1 for 6 significant digits */
};

/* A column: its name (fixed by SPEC section 5) and, for streamed reports, a width. */
struct column {
	const char *name;
	int width;		/* table width for streamed rows; 0: measure the rows */
	int table_only;		/* for people only (a bar chart): not in CSV or JSON */
};

/* An output format. Exactly one is chosen per run. */
struct writer {
	const char *name;	/* table, csv or json */
	/** begin() - a report starts; @stream: rows must not be held back. */
	void (*begin)(const char *report, const struct column *cols, size_t ncols,
		      int stream);
	/** row() - one row, one cell per column. */
	void (*row)(const struct cell *cells);
	/** note() - a line for people reading a table; other formats drop it. */
	void (*note)(const char *text);
	/** total() - a totals row under a table; other formats drop it. */
	void (*total)(const struct cell *cells);
	/** end() - the report is complete. */
	void (*end)(void);
	/** finish() - the output is complete. */
	void (*finish)(void);
};

/**
 * writer_lookup() - find an output format by name.
 * @name: "table", "csv" or "json"
 *
 * Return: the writer, or NULL.
 */
const struct writer *writer_lookup(const char *name);

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

/* The reports. */

/* One input's results, as the summary report needs them. */
struct summary_input {
	const char *input;		/* name as given, or "*" */
	const char *format;		/* reader name */
	const struct figures *f;	/* its figures */
};

/**
 * summary_report() - the summary report: one row per input and algorithm.
 * @w: the writer
 * @inputs: results per input, the "*" row last when present
 * @ninputs: how many
 * @algos: the selected algorithms
 * @nalgos: how many
 * @p: the KSM parameters used
 */
void summary_report(const struct writer *w, const struct summary_input *inputs,
		    size_t ninputs, const struct algo *const *algos, size_t nalgos,
		    const struct ksm_params *p);

/* The figures of one region of one input, for the regions report. */
struct region_row {
	const char *input;		/* input name */
	const char *name;		/* region name */
	uint64_t start, end;		/* the region's addresses */
	uint64_t pages;			/* pages read in it */
	uint64_t zero_pages;		/* of which all zero */
	uint64_t redundant_pages;	/* of which seen earlier in the input */
};

/**
 * regions_report() - the regions report: one row per region of each input.
 * @w: the writer
 * @rows: the regions in scan order
 * @nrows: how many
 */
void regions_report(const struct writer *w, const struct region_row *rows,
		    size_t nrows);

/* One algorithm's benchmark. */
struct bench_row {
	const struct algo *algo;
	double hot;		/* seconds per page, one cache-resident page */
	double stream;		/* seconds per page, streamed from memory */
	int is_auto;		/* -a auto would choose it */
};

/**
 * bench_report() - the bench report (SPEC section 6).
 * @w: the writer
 * @rows: one per algorithm
 * @nrows: how many
 * @autopick: the algorithm -a auto chooses on this machine
 * @stream_bytes: size of the streaming buffer
 */
void bench_report(const struct writer *w, const struct bench_row *rows,
		  size_t nrows, const struct algo *autopick, size_t stream_bytes);

/**
 * algos_report() - the algorithms of the table with their widths, the
 * implementation in use and their definitions (-a help); ends the output.
 * @w: the writer
 */
void algos_report(const struct writer *w);

/**
 * histogram_report() - the histogram report, like zdb -S: contents by how many
 * pages share them, in power-of-two buckets, per input.
 * @w: the writer
 * @inputs: results per input, the "*" row last when present
 * @ninputs: how many
 */
void histogram_report(const struct writer *w, const struct summary_input *inputs,
		      size_t ninputs);

/* One row of the top report. */
struct top_row {
	const char *input;
	size_t rank;
	uint64_t pages;
	char digest[33];		/* by the first selected algorithm */
	char description[80];
};

/**
 * top_report() - the most-shared contents of each input.
 * @w: the writer
 * @rows: the rows, per input in rank order
 * @nrows: how many
 */
void top_report(const struct writer *w, const struct top_row *rows, size_t nrows);

/* One row of the tree report: one strategy on one input. */
struct tree_row {
	const char *input;
	const char *strategy;		/* "memcmp" or "checksum-first" */
	const char *algo;		/* the checksum, "-" for memcmp */
	struct tree_stats st;
};

/**
 * tree_report() - KSM's memcmp tree against checksum-first trees.
 * @w: the writer
 * @rows: the rows
 * @nrows: how many
 */
void tree_report(const struct writer *w, const struct tree_row *rows, size_t nrows);

/**
 * pages_begin() - start the pages report (rows are streamed as pages are read).
 * @w: the writer
 * @algos: the selected algorithms, one column each
 * @nalgos: how many
 * @input_width: the longest input name, for aligned tables
 */
void pages_begin(const struct writer *w, const struct algo *const *algos,
		 size_t nalgos, int input_width);

/**
 * pages_row() - one page of the pages report.
 * @w: the writer
 * @input: input name
 * @address: the page's address
 * @zero: whether the page is all zero
 * @digests: one per selected algorithm
 * @algos: the algorithms given to pages_begin()
 */
void pages_row(const struct writer *w, const char *input, uint64_t address,
	       int zero, const struct digest *digests,
	       const struct algo *const *algos);

/**
 * pages_end() - end the pages report.
 * @w: the writer
 */
void pages_end(const struct writer *w);

#endif
