/* SPDX-License-Identifier: MIT */
#ifndef KSMSCAN_WRITER_H
#define KSMSCAN_WRITER_H

#include <stddef.h>

#include "cell.h"

/*
 * The output formats (table, CSV, JSON, OpenMetrics, and sh and tmpfiles
 * for settings): a report hands its columns and rows to one, chosen once
 * when the options are read. Only report/ writes standard output.
 */

/* What a format can do, as bits of struct writer's flags: the command line
 * and the reports ask these, never the format's name. */
enum {
	WRITER_STREAMS = 1 << 0,	/* rows printed as they come (the table
					 * holds them, but for a report whose
					 * begin() asks it to stream) */
	WRITER_ONE_REPORT = 1 << 1,	/* holds one report alone (CSV has one
					 * header line, sh and tmpfiles one
					 * list of settings) */
	WRITER_PEOPLE = 1 << 2,		/* a table for people: notes, totals and
					 * bars (for_people() adds: without -l) */
	WRITER_SETTINGS = 1 << 3,	/* takes only settings to apply (sh,
					 * tmpfiles): rows of a name under
					 * /sys/kernel/mm/ksm and its value, as
					 * text, in the order to write them;
					 * only -r advise gives them */
	WRITER_METRICS = 1 << 4,	/* series kept over time (OpenMetrics):
					 * rows of processes found by -P or
					 * --all-processes bounded (report_setup's
					 * listed_max) */
};

/* What begins a note that is a shell command (struct writer's note()). */
#define NOTE_SHELL "$ "

/* A row of a settings format (WRITER_SETTINGS) whose setting is this is
 * no setting: its value says why nothing is to be written, and the
 * format writes nothing (-o sh prints it on standard error and exits 1). */
#define SETTING_REFUSED "-"

/* A row of a settings format whose setting is this is a command to run
 * once (marking a unit's processes mergeable, --enable), its value every
 * word quoted by shell_quote(): -o sh runs it as it is, -o tmpfiles, which
 * runs nothing, gives it as a comment. */
#define SETTING_COMMAND "$"

/*
 * An output format, and one output of it: writer_open() makes an instance
 * (its state, such as a table's held rows, is its own, so one run could
 * write two outputs); every operation takes the instance.
 */
struct writer {
	const char *name;	/* for -o, --help and messages alone */
	unsigned flags;		/* WRITER_* bits: what it can do */
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
 * writer_lookup() - an output format by name, as -o names it: the only
 * place a format's name is compared.
 * @name: "table", "csv", ... (writer_name())
 *
 * Return: the format (a row of the writers' table), or NULL.
 */
const struct writer *writer_lookup(const char *name);

/**
 * writer_default() - the output format without -o: the table for people.
 *
 * Return: the writers' table's first row.
 */
const struct writer *writer_default(void);

/**
 * writer_name() - the name of output format @i, for --help and messages.
 * @i: from 0
 *
 * Return: the name, or NULL past the last.
 */
const char *writer_name(size_t i);

/**
 * writer_open() - an output of a format, on standard output.
 * @format: from writer_lookup() or writer_default()
 * @fit: the width tables for people fit (80), or 0 for no limit (-l): the
 *	table writer then shortens long names, wraps the last column's text,
 *	scales bars and leaves out the columns marked drop, saying which
 *
 * Return: the instance (writer_close() it).
 */
struct writer *writer_open(const struct writer *format, int fit);

/**
 * writer_close() - free an output's state.
 * @w: from writer_open(), or NULL
 */
void writer_close(struct writer *w);

/**
 * output_close() - flush standard output and check that every write succeeded.
 *
 * Return: 0, or -1 after reporting the error (e.g. a full disk or closed pipe).
 */
int output_close(void);

#endif
